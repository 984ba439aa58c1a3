/*
 * policies: the loaded policy set (XMATUNE_POLICY), the one home of xmt_policies. Loaded
 * once: at activation by shim.c in the program, at its start by trial/tune.c in the trial
 * helper; read, never changed after, by kernels.c (a kernel's entry at its record's making)
 * and by shim.c's exit report (the entries no kernel matched). NULL: none loaded. A leaf.
 */
#ifndef XMT_POLICIES_H
#define XMT_POLICIES_H

#include "xmt_policy.h"

extern xmt_policy_set *xmt_policies;

#endif
