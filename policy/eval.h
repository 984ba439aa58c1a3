/* eval.h - the expressions' evaluator (eval.c): runs a compiled expression (expr.h) over a
 * launch, walking its postfix code with a fixed-size value stack (XMT_EVAL_STACK), so that
 * it allocates nothing and costs a handful of nanoseconds per instruction; every fault
 * stops it with an XMT_E_* code (values.h), never a trap.
 */
#ifndef XMT_EVAL_H
#define XMT_EVAL_H

#include "expr.h"
#include "values.h"
#include "xmt_policy.h"

#include <stddef.h>
#include <stdint.h>

/* What an evaluation reads: the launch, the parameter types of the (possibly
 * signature-specialised) entry, and the tunable values of the candidate being evaluated. */
typedef struct {
    const xmt_launch_view *v;
    const uint8_t *ptypes; /* XMT_DT_* or XMT_PT_* per declared parameter */
    size_t nptypes;
    const xmt_val *tun;
    size_t ntun;
} xmt_env;

/* 0 and *out, or an XMT_E_* code. Allocates nothing. */
int xmt_code_eval(const xmt_code *c, const xmt_env *env, xmt_val *out);
/* 1 + i when c is only the original launch's value i (0..6: grid x, y, z, block x, y, z,
 * shared), which a key's slot then copies without evaluating; 0 otherwise. */
int xmt_code_orig_leaf(const xmt_code *c);
/* Marks in read[] (n long) every parameter c loads, whole or by a field: what its value
 * can depend on besides the launch's dims, the device and constants. */
void xmt_code_params_read(const xmt_code *c, uint8_t *read, size_t n);

#endif
