/* types.h - the type names of the policy library, one table for every module that reads
 * or prints a type: the loader (params:, fields:, dtype:), the matcher (parameter types
 * of a demangled signature) and evaluation (type names in messages, element sizes).
 * xmt_dtype_name() and xmt_dtype_size() are public (xmt_policy.h) and defined here too.
 */
#ifndef XMT_TYPES_H
#define XMT_TYPES_H

#include "expr.h"
#include "xmt_policy.h"

#include <stdint.h>

/* Type name table shared by the loader and the matcher: "i32", "int", "float*", ...
 * Returns the XMT_DT_* / XMT_PT_PTR type, -1 unknown; *pointee = pointer's dtype or -1. */
int xmt_type_parse(const char *s, int *pointee, uint32_t *size);
const char *xmt_type_name(unsigned t);
/* A C scalar type as a signature spells it ("unsigned int", "float const", "c10::Half"):
 * its XMT_DT_*, -1 when it is none (the policy spellings "i32", "ptr" are not C). */
int xmt_ctype_parse(const char *s);
/* A tensor dtype: "f32", "float", ... or "bytes"; XMT_DT_*, -1 unknown (pointers too). */
int xmt_dtype_parse(const char *s);

#endif
