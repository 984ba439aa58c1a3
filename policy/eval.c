/* eval.c - the expressions' evaluator (see eval.h): runs expr.c's postfix code over a
 * launch with a fixed-size value stack, allocating nothing. */
#include "eval.h"

#include <math.h>

#include "expr_ops.h"
#include "values.h"

/* ---- evaluator --------------------------------------------------------------------- */

/* An untyped 4-byte argument is read as an integer, and a float's bits read so are a new
 * number for every new float: as a key part they would make every call a new key. The
 * window of exponents (biased 107..147: |value| from about 9.5e-7 to 2.1e6) holds the
 * floats programs pass (scales, epsilons, learning rates); every pattern in it is at
 * least 107 << 23 (about 0.9e9), so small integers (sizes, strides, counts) are never in
 * it. */
int xmt_f32_like(uint32_t u)
{
    unsigned ex = (u >> 23) & 0xFFu;
    return ex >= 127 - XMT_F32_LIKE_EXP && ex <= 127 + XMT_F32_LIKE_EXP;
}

int64_t xmt_intlike(int isf, int64_t x)
{
    if (isf) return XMT_INTLIKE_FLOAT;
    /* only what 4 bytes read as a signed or an unsigned integer can hold a float's bits */
    if (x < INT32_MIN || x > (int64_t)UINT32_MAX) return x;
    return xmt_f32_like((uint32_t)x) ? XMT_INTLIKE_FLOAT : x;
}

static inline double fv(xmt_val v)
{
    return v.isf ? v.u.f : (double)v.u.i;
}
static inline int truthy(xmt_val v)
{
    return v.isf ? v.u.f != 0.0 : v.u.i != 0;
}

static int fres(xmt_val *r, double d)
{
    if (!isfinite(d)) return XMT_E_OVERFLOW;
    r->isf = 1;
    r->u.f = d;
    return 0;
}

static int binop(int op, xmt_val a, xmt_val b, xmt_val *r)
{
    if (a.isf || b.isf) {
        double x = fv(a), y = fv(b);
        r->isf = 0;
        switch (op) {
        case OP_ADD: return fres(r, x + y);
        case OP_SUB: return fres(r, x - y);
        case OP_MUL: return fres(r, x * y);
        case OP_DIV:
            if (y == 0) return XMT_E_DIV0;
            return fres(r, x / y);
        case OP_MOD:
            if (y == 0) return XMT_E_DIV0;
            return fres(r, fmod(x, y));
        case OP_CDIV:
            if (y == 0) return XMT_E_DIV0;
            return fres(r, ceil(x / y));
        case OP_MIN: return fres(r, x < y ? x : y);
        case OP_MAX: return fres(r, x > y ? x : y);
        case OP_LT: r->u.i = x < y; return 0;
        case OP_LE: r->u.i = x <= y; return 0;
        case OP_GT: r->u.i = x > y; return 0;
        case OP_GE: r->u.i = x >= y; return 0;
        case OP_EQ: r->u.i = x == y; return 0;
        case OP_NE: r->u.i = x != y; return 0;
        }
        return XMT_E_TYPE;
    }
    int64_t x = a.u.i, y = b.u.i, z;
    r->isf = 0;
    switch (op) {
    case OP_ADD:
        if (__builtin_add_overflow(x, y, &z)) return XMT_E_OVERFLOW;
        r->u.i = z;
        return 0;
    case OP_SUB:
        if (__builtin_sub_overflow(x, y, &z)) return XMT_E_OVERFLOW;
        r->u.i = z;
        return 0;
    case OP_MUL:
        if (__builtin_mul_overflow(x, y, &z)) return XMT_E_OVERFLOW;
        r->u.i = z;
        return 0;
    case OP_DIV:
        if (y == 0) return XMT_E_DIV0;
        if (x == INT64_MIN && y == -1) return XMT_E_OVERFLOW;
        r->u.i = x / y;
        return 0;
    case OP_MOD:
        if (y == 0) return XMT_E_DIV0;
        r->u.i = (y == -1) ? 0 : x % y;
        return 0;
    case OP_CDIV:
        if (y == 0) return XMT_E_DIV0;
        if (x == INT64_MIN && y == -1) return XMT_E_OVERFLOW;
        z = x / y;
        if ((x % y != 0) && ((x < 0) == (y < 0))) z++;
        r->u.i = z;
        return 0;
    case OP_MIN: r->u.i = x < y ? x : y; return 0;
    case OP_MAX: r->u.i = x > y ? x : y; return 0;
    case OP_LT: r->u.i = x < y; return 0;
    case OP_LE: r->u.i = x <= y; return 0;
    case OP_GT: r->u.i = x > y; return 0;
    case OP_GE: r->u.i = x >= y; return 0;
    case OP_EQ: r->u.i = x == y; return 0;
    case OP_NE: r->u.i = x != y; return 0;
    }
    return XMT_E_TYPE;
}

/* The value of a leaf instruction (a constant, a parameter or a field of one, a space
 * value, an original-launch value, a device attribute) into *dst: 0, or an XMT_E_* code.
 * The evaluator pushes leaves with it; an expression of one leaf is only that. */
static inline __attribute__((always_inline)) int leaf(const xmt_insn *i, const xmt_env *env,
                                                      xmt_val *dst)
{
    switch (i->op) {
    case OP_CI:
        dst->isf = 0;
        dst->u.i = i->k.i;
        return 0;
    case OP_CF:
        dst->isf = 1;
        dst->u.f = i->k.f;
        return 0;
    case OP_PARAM:
        if (!env->v || !env->v->params || i->a >= env->v->nparams || !env->v->params[i->a])
            return XMT_E_ARG;
        if (i->a >= env->nptypes) return XMT_E_TYPE;
        return xmt_load_scalar(env->v->params[i->a], env->ptypes[i->a], dst);
    case OP_FIELD:
        if (!env->v || !env->v->params || i->a >= env->v->nparams || !env->v->params[i->a])
            return XMT_E_ARG;
        return xmt_load_scalar((const char *)env->v->params[i->a] + i->b, i->type, dst);
    case OP_SPACE:
        if (!env->tun || i->a >= env->ntun) return XMT_E_TUNABLE;
        *dst = env->tun[i->a];
        return 0;
    case OP_ORIG: {
        if (!env->v) return XMT_E_ARG;
        const xmt_dims *d = &env->v->orig;
        uint32_t x = 0;
        switch (i->a) {
        case 0: x = d->grid.x; break;
        case 1: x = d->grid.y; break;
        case 2: x = d->grid.z; break;
        case 3: x = d->block.x; break;
        case 4: x = d->block.y; break;
        case 5: x = d->block.z; break;
        default: x = d->shared; break;
        }
        dst->isf = 0;
        dst->u.i = x;
        return 0;
    }
    default: /* OP_ATTR */
        if (!env->v || !env->v->attrs) return XMT_E_ATTR;
        dst->isf = 0;
        dst->u.i = xmt_attr_get(env->v->attrs, i->a);
        return 0;
    }
}

/* The stack machine, for any expression but a single leaf. Out of line, so that a
 * leaf's evaluation does not pay for its frame (the stack of XMT_EVAL_STACK values). */
static __attribute__((noinline)) int eval_code(const xmt_code *c, const xmt_env *env, xmt_val *out)
{
    xmt_val st[XMT_EVAL_STACK];
    int sp = 0, e;
    const xmt_insn *ins = c->ins;
    uint32_t n = c->n;
    if (c->maxstack > XMT_EVAL_STACK || n == 0) return XMT_E_TYPE;
    for (uint32_t pc = 0; pc < n; pc++) {
        const xmt_insn *i = &ins[pc];
        switch (i->op) {
        case OP_CI:
        case OP_CF:
        case OP_PARAM:
        case OP_FIELD:
        case OP_SPACE:
        case OP_ORIG:
        case OP_ATTR:
            if ((e = leaf(i, env, &st[sp]))) return e;
            sp++;
            break;
        case OP_NEG:
            if (st[sp - 1].isf)
                st[sp - 1].u.f = -st[sp - 1].u.f;
            else if (st[sp - 1].u.i == INT64_MIN)
                return XMT_E_OVERFLOW;
            else
                st[sp - 1].u.i = -st[sp - 1].u.i;
            break;
        case OP_NOT:
            st[sp - 1].u.i = !truthy(st[sp - 1]);
            st[sp - 1].isf = 0;
            break;
        case OP_BOOL:
            st[sp - 1].u.i = truthy(st[sp - 1]);
            st[sp - 1].isf = 0;
            break;
        case OP_ANDJ:
            if (!truthy(st[sp - 1])) {
                st[sp - 1].isf = 0;
                st[sp - 1].u.i = 0;
                pc += i->b - 1;
            } else {
                sp--;
            }
            break;
        case OP_ORJ:
            if (truthy(st[sp - 1])) {
                st[sp - 1].isf = 0;
                st[sp - 1].u.i = 1;
                pc += i->b - 1;
            } else {
                sp--;
            }
            break;
        case OP_JF:
            sp--;
            if (!truthy(st[sp])) pc += i->b - 1;
            break;
        case OP_JMP: pc += i->b - 1; break;
        case OP_NP2: {
            xmt_val *a = &st[sp - 1];
            int64_t x = a->isf ? (int64_t)0 : a->u.i;
            if (a->isf) {
                if (!(a->u.f < 4.6e18)) return XMT_E_OVERFLOW;
                x = a->u.f <= 1 ? 1 : (int64_t)ceil(a->u.f); /* no cast of a huge negative */
                a->isf = 0;
            }
            if (x <= 1) {
                a->u.i = 1;
                break;
            }
            if (x > (INT64_C(1) << 62)) return XMT_E_OVERFLOW;
            a->u.i = INT64_C(1) << (64 - __builtin_clzll((uint64_t)(x - 1)));
            break;
        }
        case OP_LOG2: {
            xmt_val *a = &st[sp - 1];
            if (a->isf) {
                if (!(a->u.f > 0)) return XMT_E_DOMAIN;
                a->u.f = log2(a->u.f);
            } else {
                if (a->u.i <= 0) return XMT_E_DOMAIN;
                a->u.i = 63 - __builtin_clzll((uint64_t)a->u.i);
            }
            break;
        }
        case OP_ABS: {
            xmt_val *a = &st[sp - 1];
            if (a->isf)
                a->u.f = fabs(a->u.f);
            else if (a->u.i == INT64_MIN)
                return XMT_E_OVERFLOW;
            else if (a->u.i < 0)
                a->u.i = -a->u.i;
            break;
        }
        case OP_INTLIKE: {
            xmt_val *a = &st[sp - 1];
            a->u.i = xmt_intlike(a->isf, a->isf ? 0 : a->u.i);
            a->isf = 0;
            break;
        }
        default:
            if ((e = binop(i->op, st[sp - 2], st[sp - 1], &st[sp - 2]))) return e;
            sp--;
            break;
        }
    }
    *out = st[0];
    return 0;
}

int xmt_code_orig_leaf(const xmt_code *c)
{
    return c->n == 1 && c->ins[0].op == OP_ORIG && c->ins[0].a < 7 ? 1 + c->ins[0].a : 0;
}

void xmt_code_params_read(const xmt_code *c, uint8_t *read, size_t n)
{
    for (uint32_t i = 0; i < c->n; i++)
        if ((c->ins[i].op == OP_PARAM || c->ins[i].op == OP_FIELD) && c->ins[i].a < n)
            read[c->ins[i].a] = 1;
}

/* A key's triggers and a config's dims are mostly one leaf each ("n", "grid0.x", "128"),
 * and auto's key of an untyped 4-byte scalar is intlike of one ("intlike(p2)", at every
 * launch whose arguments changed): those skip the stack machine. The result is the
 * machine's, error codes included. */
int xmt_code_eval(const xmt_code *c, const xmt_env *env, xmt_val *out)
{
    if ((c->n == 1 || c->n == 2) && c->maxstack <= XMT_EVAL_STACK && c->ins[0].op <= OP_ATTR &&
        (c->n == 1 || c->ins[1].op == OP_INTLIKE)) {
        xmt_val v; /* *out untouched on an error, as the machine leaves it */
        int e = leaf(&c->ins[0], env, &v);
        if (e) return e;
        if (c->n == 2) {
            v.u.i = xmt_intlike(v.isf, v.isf ? 0 : v.u.i);
            v.isf = 0;
        }
        *out = v;
        return 0;
    }
    return eval_code(c, env, out);
}
