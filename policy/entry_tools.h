/* entry_tools.h - the command's side of an entry (entry_tools.c): xmt_entry_set_arg,
 * xmt_entry_describe and xmt_expr_eval_string, used by tools/check.c and the policy tests.
 * They are part of the policy library's API, so they are declared in its one public header,
 * xmt_policy.h, which this includes; nothing else is declared here.
 */
#ifndef XMT_ENTRY_TOOLS_H
#define XMT_ENTRY_TOOLS_H

#include "xmt_policy.h"

#endif
