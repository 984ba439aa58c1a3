/* expr.c - the expression language: parser, compiler to postfix code, evaluator.
 *
 * Grammar (C precedence, lowest first):
 *   cond  := or ('?' cond ':' cond)?
 *   or    := and ('||' and)*          and := eq ('&&' eq)*
 *   eq    := rel (('=='|'!=') rel)*   rel := add (('<'|'<='|'>'|'>=') add)*
 *   add   := mul (('+'|'-') mul)*     mul := unary (('*'|'/'|'%') unary)*
 *   unary := ('-'|'+'|'!') unary | primary
 *   primary := number | name | func '(' cond (',' cond)* ')' | '(' cond ')'
 * && || and ?: short-circuit, so "n > 0 ? m / n : 0" never divides by zero.
 */
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The leaves first, OP_CI to OP_ATTR: xmt_code_eval tells a one-leaf expression by that. */
enum {
    OP_CI,
    OP_CF,
    OP_PARAM,
    OP_FIELD,
    OP_SPACE,
    OP_ORIG,
    OP_ATTR,
    OP_NEG,
    OP_NOT,
    OP_BOOL,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_EQ,
    OP_NE,
    OP_ANDJ, /* pop; if false push 0 and jump */
    OP_ORJ,  /* pop; if true push 1 and jump */
    OP_JF,   /* pop; if false jump */
    OP_JMP,
    OP_CDIV,
    OP_MIN,
    OP_MAX,
    OP_NP2,
    OP_LOG2,
    OP_ABS,
    OP_INTLIKE,
};

const char *xmt_eval_strerror(int err)
{
    switch (err) {
    case XMT_E_OK: return "ok";
    case XMT_E_DIV0: return "division by zero";
    case XMT_E_OVERFLOW: return "overflow";
    case XMT_E_DOMAIN: return "log2 of a value <= 0";
    case XMT_E_ARG: return "argument missing from the launch";
    case XMT_E_TYPE: return "parameter of unknown or non-numeric type";
    case XMT_E_ATTR: return "device attributes not available";
    case XMT_E_TUNABLE: return "space value outside a candidate";
    }
    return "error";
}

/* ---- names of attributes and of the original launch -------------------------------- */

static const char *const attr_names[XMT_NATTRS] = {
    "sm_count",
    "max_threads_per_block",
    "max_shared_per_block",
    "cc_major",
    "cc_minor",
    "warp_size",
    "l2_bytes",
    "max_grid_x",
    "max_grid_y",
    "max_grid_z",
    "max_block_x",
    "max_block_y",
    "max_block_z",
    "kernel_max_threads",
    "kernel_static_shared",
};

int xmt_attr_index(const char *name)
{
    for (int i = 0; i < XMT_NATTRS; i++)
        if (strcmp(name, attr_names[i]) == 0) return i;
    return -1;
}
const char *xmt_attr_name(unsigned i)
{
    return i < XMT_NATTRS ? attr_names[i] : "?";
}

/* xmt_attrs is XMT_NATTRS int64_t fields in attr_names order; read by field, not by
 * pointer arithmetic over the struct. */
int64_t xmt_attr_get(const xmt_attrs *a, unsigned i)
{
    switch (i) {
    case 0: return a->sm_count;
    case 1: return a->max_threads_per_block;
    case 2: return a->max_shared_per_block;
    case 3: return a->cc_major;
    case 4: return a->cc_minor;
    case 5: return a->warp_size;
    case 6: return a->l2_bytes;
    case 7: return a->max_grid_x;
    case 8: return a->max_grid_y;
    case 9: return a->max_grid_z;
    case 10: return a->max_block_x;
    case 11: return a->max_block_y;
    case 12: return a->max_block_z;
    case 13: return a->kernel_max_threads;
    case 14: return a->kernel_static_shared;
    }
    return 0;
}

int xmt_attrs_set(xmt_attrs *a, const char *name, int64_t v)
{
    int64_t *f[XMT_NATTRS] = {
        &a->sm_count,
        &a->max_threads_per_block,
        &a->max_shared_per_block,
        &a->cc_major,
        &a->cc_minor,
        &a->warp_size,
        &a->l2_bytes,
        &a->max_grid_x,
        &a->max_grid_y,
        &a->max_grid_z,
        &a->max_block_x,
        &a->max_block_y,
        &a->max_block_z,
        &a->kernel_max_threads,
        &a->kernel_static_shared,
    };
    int i = xmt_attr_index(name);
    if (i < 0) return -1;
    *f[i] = v;
    return 0;
}

void xmt_attrs_default(xmt_attrs *a)
{
    /* An H100/H200-class device, a kernel without launch bounds or static shared. */
    a->sm_count = 132;
    a->max_threads_per_block = 1024;
    a->max_shared_per_block = 49152;
    a->cc_major = 9;
    a->cc_minor = 0;
    a->warp_size = 32;
    a->l2_bytes = 52428800;
    a->max_grid_x = 2147483647;
    a->max_grid_y = 65535;
    a->max_grid_z = 65535;
    a->max_block_x = 1024;
    a->max_block_y = 1024;
    a->max_block_z = 64;
    a->kernel_max_threads = 1024;
    a->kernel_static_shared = 0;
}

static const char *const orig_names[7] = {"grid0.x",  "grid0.y",  "grid0.z", "block0.x",
                                          "block0.y", "block0.z", "shared0"};
const char *xmt_orig_name(unsigned i)
{
    return i < 7 ? orig_names[i] : "?";
}

int xmt_orig_index(const char *base, const char *member)
{
    int off;
    if (strcmp(base, "shared0") == 0) return member ? -1 : 6;
    if (strcmp(base, "grid0") == 0)
        off = 0;
    else if (strcmp(base, "block0") == 0)
        off = 3;
    else
        return -1;
    if (!member || member[0] == 0 || member[1] != 0 || member[0] < 'x' || member[0] > 'z')
        return -2; /* grid0 without .x/.y/.z */
    return off + (member[0] - 'x');
}

/* ---- scalar conversions ------------------------------------------------------------ */

double xmt_half_to_double(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return s ? -v : v;
}

uint16_t xmt_double_to_half(double d)
{
    uint16_t s = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d)) return 0x7e00;
    if (a >= 65520.0) return s | 0x7c00; /* rounds to infinity */
    if (a < ldexp(1, -25)) return s;     /* rounds to zero */
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5,1) */
    int be = e - 1 + 15;
    if (be <= 0) { /* subnormal: units of 2^-24 */
        double m = nearbyint(ldexp(a, 24));
        return s | (uint16_t)m;
    }
    double m = nearbyint(ldexp(a, 10 - (e - 1))); /* 1024..2048 */
    if (m >= 2048) {
        m /= 2;
        be++;
    }
    if (be >= 31) return s | 0x7c00;
    return s | (uint16_t)(be << 10) | ((uint16_t)m & 1023);
}

double xmt_bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t xmt_double_to_bf16(double d)
{
    float f = fabs(d) > FLT_MAX ? (d > 0 ? INFINITY : -INFINITY) : (float)d; /* no UB */
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f)) return 0x7fc0;
    u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

int xmt_load_scalar(const void *p, unsigned t, xmt_val *v)
{
    v->isf = 0;
    switch (t) {
    case XMT_DT_I8: {
        int8_t x;
        memcpy(&x, p, 1);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_I16: {
        int16_t x;
        memcpy(&x, p, 2);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_I32: {
        int32_t x;
        memcpy(&x, p, 4);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_I64: {
        int64_t x;
        memcpy(&x, p, 8);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_U8: {
        uint8_t x;
        memcpy(&x, p, 1);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_U16: {
        uint16_t x;
        memcpy(&x, p, 2);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_U32: {
        uint32_t x;
        memcpy(&x, p, 4);
        v->u.i = x;
        return 0;
    }
    case XMT_DT_U64:
    case XMT_PT_PTR: {
        uint64_t x;
        memcpy(&x, p, 8);
        if (x > INT64_MAX) return XMT_E_OVERFLOW;
        v->u.i = (int64_t)x;
        return 0;
    }
    case XMT_DT_F16: {
        uint16_t x;
        memcpy(&x, p, 2);
        v->isf = 1;
        v->u.f = xmt_half_to_double(x);
        return 0;
    }
    case XMT_DT_BF16: {
        uint16_t x;
        memcpy(&x, p, 2);
        v->isf = 1;
        v->u.f = xmt_bf16_to_double(x);
        return 0;
    }
    case XMT_DT_F32: {
        float x;
        memcpy(&x, p, 4);
        v->isf = 1;
        v->u.f = x;
        return 0;
    }
    case XMT_DT_F64: {
        double x;
        memcpy(&x, p, 8);
        v->isf = 1;
        v->u.f = x;
        return 0;
    }
    }
    return XMT_E_TYPE;
}

int xmt_store_scalar(xmt_val v, unsigned t, uint64_t *bits, unsigned *size)
{
    int64_t i = 0;
    int isint = t <= XMT_DT_U64;
    if (isint) {
        if (v.isf) {
            if (!isfinite(v.u.f) || v.u.f != trunc(v.u.f) || v.u.f < -9.2233720368547758e18 ||
                v.u.f >= 9.2233720368547758e18)
                return XMT_E_OVERFLOW;
            i = (int64_t)v.u.f;
        } else {
            i = v.u.i;
        }
    }
    double d = v.isf ? v.u.f : (double)v.u.i;
    switch (t) {
    case XMT_DT_I8:
        if (i < INT8_MIN || i > INT8_MAX) return XMT_E_OVERFLOW;
        *size = 1;
        *bits = (uint8_t)i;
        return 0;
    case XMT_DT_I16:
        if (i < INT16_MIN || i > INT16_MAX) return XMT_E_OVERFLOW;
        *size = 2;
        *bits = (uint16_t)i;
        return 0;
    case XMT_DT_I32:
        if (i < INT32_MIN || i > INT32_MAX) return XMT_E_OVERFLOW;
        *size = 4;
        *bits = (uint32_t)i;
        return 0;
    case XMT_DT_I64:
        *size = 8;
        *bits = (uint64_t)i;
        return 0;
    case XMT_DT_U8:
        if (i < 0 || i > UINT8_MAX) return XMT_E_OVERFLOW;
        *size = 1;
        *bits = (uint64_t)i;
        return 0;
    case XMT_DT_U16:
        if (i < 0 || i > UINT16_MAX) return XMT_E_OVERFLOW;
        *size = 2;
        *bits = (uint64_t)i;
        return 0;
    case XMT_DT_U32:
        if (i < 0 || i > (int64_t)UINT32_MAX) return XMT_E_OVERFLOW;
        *size = 4;
        *bits = (uint64_t)i;
        return 0;
    case XMT_DT_U64:
        if (i < 0) return XMT_E_OVERFLOW;
        *size = 8;
        *bits = (uint64_t)i;
        return 0;
    case XMT_DT_F16:
        *size = 2;
        *bits = xmt_double_to_half(d);
        return 0;
    case XMT_DT_BF16:
        *size = 2;
        *bits = xmt_double_to_bf16(d);
        return 0;
    case XMT_DT_F32: {
        float f = fabs(d) > FLT_MAX ? (d > 0 ? INFINITY : -INFINITY) : (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        *size = 4;
        *bits = u;
        return 0;
    }
    case XMT_DT_F64: {
        uint64_t u;
        memcpy(&u, &d, 8);
        *size = 8;
        *bits = u;
        return 0;
    }
    }
    return XMT_E_TYPE;
}

/* ---- names ------------------------------------------------------------------------- */

static int ident_start(int c)
{
    return isalpha(c) || c == '_';
}
static int ident_char(int c)
{
    return isalnum(c) || c == '_';
}

static int read_ident(const char *s, char *dst)
{
    int n = 0;
    if (!ident_start((unsigned char)s[0])) return 0;
    while (ident_char((unsigned char)s[n])) {
        if (n >= XMT_NAME_MAX - 1) return -1;
        dst[n] = s[n];
        n++;
    }
    dst[n] = 0;
    return n;
}

static int read_small_int(const char *s, int64_t *k)
{
    int n = 0;
    int64_t v = 0;
    while (isdigit((unsigned char)s[n])) {
        v = v * 10 + (s[n] - '0');
        if (v > 1000000) return -1;
        n++;
    }
    *k = v;
    return n;
}

int xmt_parse_path(const char *s, xmt_path *p, char *err, size_t cap)
{
    const char *s0 = s;
    memset(p, 0, sizeof *p);
    while (*s == ' ' || *s == '\t')
        s++;
    int n = read_ident(s, p->base);
    if (n < 0) {
        snprintf(err, cap, "name longer than %d characters", XMT_NAME_MAX - 1);
        return -1;
    }
    if (n == 0) return 0;
    s += n;
    if (*s == '.' && ident_start((unsigned char)s[1])) {
        n = read_ident(s + 1, p->member);
        if (n < 0) {
            snprintf(err, cap, "name longer than %d characters", XMT_NAME_MAX - 1);
            return -1;
        }
        p->has_member = 1;
        s += 1 + n;
        if (*s == '[') {
            const char *q = s + 1;
            while (*q == ' ')
                q++;
            int m = read_small_int(q, &p->k);
            if (m <= 0) {
                snprintf(err, cap, "expected a dimension number (0, 1, ...) after '['");
                return -1;
            }
            q += m;
            while (*q == ' ')
                q++;
            if (*q != ']') {
                snprintf(err, cap, "expected ']'");
                return -1;
            }
            p->suffix = XMT_SFX_INDEX;
            s = q + 1;
        } else if (*s == '(') {
            const char *q = s + 1;
            while (*q == ' ')
                q++;
            if (*q == ')') {
                p->suffix = XMT_SFX_CALL0;
                s = q + 1;
            } else {
                int m = read_small_int(q, &p->k);
                if (m <= 0) {
                    snprintf(err, cap, "expected a dimension number or ')' after '('");
                    return -1;
                }
                q += m;
                while (*q == ' ')
                    q++;
                if (*q != ')') {
                    snprintf(err, cap, "expected ')'");
                    return -1;
                }
                p->suffix = XMT_SFX_CALL1;
                s = q + 1;
            }
        }
    }
    return (int)(s - s0);
}

/* ---- compiler ---------------------------------------------------------------------- */

typedef struct {
    const char *text, *s;
    xmt_resolve_fn resolve;
    void *ctx;
    xmt_insn *ins;
    uint32_t n, cap;
    int sp, maxsp, depth;
    char *err;
    size_t errcap;
    size_t errpos;
    int failed;
} cc;

static void cfail(cc *c, const char *at, const char *fmt, ...)
{
    if (c->failed) return;
    c->failed = 1;
    c->errpos = (size_t)(at - c->text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errcap, fmt, ap);
    va_end(ap);
}

static void skipws(cc *c)
{
    while (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')
        c->s++;
}

/* Appends one instruction; delta is its effect on the stack depth. */
static xmt_insn *emit(cc *c, int op, int delta)
{
    if (c->failed) return NULL;
    if (c->n >= XMT_MAX_EXPR_INSNS) {
        cfail(c, c->s, "expression too large (over %d instructions)", XMT_MAX_EXPR_INSNS);
        return NULL;
    }
    if (c->n == c->cap) {
        uint32_t nc = c->cap ? c->cap * 2 : 16;
        xmt_insn *ni = realloc(c->ins, nc * sizeof *ni);
        if (!ni) {
            cfail(c, c->s, "out of memory");
            return NULL;
        }
        c->ins = ni;
        c->cap = nc;
    }
    xmt_insn *i = &c->ins[c->n++];
    memset(i, 0, sizeof *i);
    i->op = (uint8_t)op;
    c->sp += delta;
    if (c->sp > c->maxsp) c->maxsp = c->sp;
    if (c->maxsp > XMT_EVAL_STACK) cfail(c, c->s, "expression too deeply nested");
    return i;
}

static void cond(cc *c);

static int accept(cc *c, const char *tok)
{
    skipws(c);
    size_t n = strlen(tok);
    if (strncmp(c->s, tok, n) != 0) return 0;
    /* do not take '<' of "<=", '=' alone, '|' alone and so on */
    if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!') && c->s[1] == '=') return 0;
    c->s += n;
    return 1;
}

static void inline_code(cc *c, const xmt_code *code)
{
    int base = c->sp;
    for (uint32_t k = 0; k < code->n && !c->failed; k++) {
        xmt_insn *i = emit(c, OP_CI, 0);
        if (i) *i = code->ins[k];
    }
    c->sp = base + 1;
    if (base + (int)code->maxstack > c->maxsp) c->maxsp = base + (int)code->maxstack;
    if (c->maxsp > XMT_EVAL_STACK) cfail(c, c->s, "expression too deeply nested");
}

static const struct {
    const char *name;
    int op, nargs; /* nargs -1: two or more */
} funcs[] = {
    {"cdiv", OP_CDIV, 2}, {"min", OP_MIN, -1}, {"max", OP_MAX, -1},        {"next_pow2", OP_NP2, 1},
    {"log2", OP_LOG2, 1}, {"abs", OP_ABS, 1},  {"intlike", OP_INTLIKE, 1},
};

static void number(cc *c)
{
    const char *s = c->s;
    char *end;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        errno = 0;
        unsigned long long v = strtoull(s + 2, &end, 16);
        if (end == s + 2 || errno || v > INT64_MAX) {
            cfail(c, s, "bad hexadecimal number");
            return;
        }
        xmt_insn *i = emit(c, OP_CI, 1);
        if (i) i->k.i = (int64_t)v;
        c->s = end;
    } else {
        const char *q = s;
        while (isdigit((unsigned char)*q))
            q++;
        int isf = (*q == '.' || *q == 'e' || *q == 'E');
        errno = 0;
        if (isf) {
            double d = strtod(s, &end);
            if (errno || !isfinite(d)) {
                cfail(c, s, "number out of range");
                return;
            }
            xmt_insn *i = emit(c, OP_CF, 1);
            if (i) i->k.f = d;
        } else {
            long long v = strtoll(s, &end, 10);
            if (errno) {
                cfail(c, s, "integer out of range (64-bit)");
                return;
            }
            xmt_insn *i = emit(c, OP_CI, 1);
            if (i) i->k.i = v;
        }
        c->s = end;
    }
    if (ident_char((unsigned char)*c->s)) cfail(c, c->s, "unexpected character after a number");
}

/* A call of the function named id (text from `at`, q at its '('): its arguments onto the
 * stack, then the function's op. */
static void call(cc *c, const char *id, const char *q, const char *at)
{
    for (size_t f = 0; f < sizeof funcs / sizeof funcs[0]; f++) {
        if (strcmp(id, funcs[f].name) != 0) continue;
        c->s = q + 1;
        int args = 0, base = c->sp;
        skipws(c);
        if (*c->s != ')') {
            do {
                cond(c);
                args++;
            } while (!c->failed && accept(c, ","));
        }
        if (c->failed) return;
        if (!accept(c, ")")) {
            cfail(c, c->s, "expected ',' or ')' in the arguments of %s", id);
            return;
        }
        if (funcs[f].nargs >= 0 && args != funcs[f].nargs) {
            cfail(c, at, "%s takes %d argument%s, not %d", id, funcs[f].nargs,
                  funcs[f].nargs == 1 ? "" : "s", args);
            return;
        }
        if (funcs[f].nargs < 0 && args < 2) {
            cfail(c, at, "%s takes two or more arguments", id);
            return;
        }
        if (funcs[f].nargs == 1) {
            emit(c, funcs[f].op, 0);
        } else {
            /* variadic min/max fold pairwise */
            for (int k = 1; k < args; k++)
                emit(c, funcs[f].op, -1);
        }
        c->sp = base + 1;
        return;
    }
    cfail(c, at, "unknown function '%s' (expected cdiv, min, max, next_pow2, log2, abs, intlike)",
          id);
}

/* The instruction(s) for a resolved name. */
static void emit_ref(cc *c, const xmt_ref *r)
{
    xmt_insn *i;
    switch (r->kind) {
    case XMT_REF_CONST_I:
        if ((i = emit(c, OP_CI, 1))) i->k.i = r->i;
        break;
    case XMT_REF_CONST_F:
        if ((i = emit(c, OP_CF, 1))) i->k.f = r->f;
        break;
    case XMT_REF_PARAM:
        if ((i = emit(c, OP_PARAM, 1))) i->a = (uint16_t)r->index;
        break;
    case XMT_REF_FIELD:
        if ((i = emit(c, OP_FIELD, 1))) {
            i->a = (uint16_t)r->index;
            i->b = r->offset;
            i->type = r->type;
        }
        break;
    case XMT_REF_SPACE:
        if ((i = emit(c, OP_SPACE, 1))) i->a = (uint16_t)r->index;
        break;
    case XMT_REF_ORIG:
        if ((i = emit(c, OP_ORIG, 1))) i->a = (uint16_t)r->index;
        break;
    case XMT_REF_ATTR:
        if ((i = emit(c, OP_ATTR, 1))) i->a = (uint16_t)r->index;
        break;
    case XMT_REF_CODE: inline_code(c, r->code); break;
    }
}

static void name_or_call(cc *c)
{
    const char *at = c->s;
    /* a function call: identifier directly followed by '(' */
    char id[XMT_NAME_MAX];
    int n = read_ident(c->s, id);
    if (n > 0) {
        const char *q = c->s + n;
        while (*q == ' ')
            q++;
        if (*q == '(') {
            call(c, id, q, at);
            return;
        }
    }
    if (n > 0 && (strcmp(id, "true") == 0 || strcmp(id, "false") == 0) && c->s[n] != '.') {
        xmt_insn *i = emit(c, OP_CI, 1);
        if (i) i->k.i = id[0] == 't';
        c->s += n;
        return;
    }
    xmt_path p;
    char perr[160];
    int m = xmt_parse_path(c->s, &p, perr, sizeof perr);
    if (m < 0) {
        cfail(c, at, "%s", perr);
        return;
    }
    if (m == 0) {
        if (*c->s == 0)
            cfail(c, at, "expression ends early: expected a number, a name or '('");
        else
            cfail(c, at, "expected a number, a name or '(' at '%c'", *c->s);
        return;
    }
    xmt_ref r;
    memset(&r, 0, sizeof r);
    char rerr[256];
    rerr[0] = 0;
    if (!c->resolve) {
        cfail(c, at, "unknown name '%s'", p.base);
        return;
    }
    if (c->resolve(c->ctx, &p, &r, rerr, sizeof rerr) != 0) {
        cfail(c, at, "%s", rerr);
        return;
    }
    c->s += m;
    emit_ref(c, &r);
}

static void primary(cc *c)
{
    skipws(c);
    if (++c->depth > XMT_MAX_EXPR_DEPTH) {
        cfail(c, c->s, "expression nested deeper than %d", XMT_MAX_EXPR_DEPTH);
        return;
    }
    if (*c->s == '(') {
        c->s++;
        cond(c);
        if (!c->failed && !accept(c, ")")) cfail(c, c->s, "expected ')'");
    } else if (isdigit((unsigned char)*c->s) || (*c->s == '.' && isdigit((unsigned char)c->s[1]))) {
        number(c);
    } else {
        name_or_call(c);
    }
    c->depth--;
}

static void unary(cc *c)
{
    skipws(c);
    if (++c->depth > XMT_MAX_EXPR_DEPTH) {
        cfail(c, c->s, "expression nested deeper than %d", XMT_MAX_EXPR_DEPTH);
        return;
    }
    if (*c->s == '-') {
        c->s++;
        unary(c);
        emit(c, OP_NEG, 0);
    } else if (*c->s == '+') {
        c->s++;
        unary(c);
    } else if (*c->s == '!' && c->s[1] != '=') {
        c->s++;
        unary(c);
        emit(c, OP_NOT, 0);
    } else {
        primary(c);
    }
    c->depth--;
}

/* The left-associative binary operators, by precedence level from the loosest (below
 * && and ||, which need jumps and have functions of their own) to the tightest; within a
 * level a longer spelling comes before its prefix ("<=" before "<"). */
static const struct {
    const char *tok;
    int op;
} binops[][5] = {
    {{"==", OP_EQ}, {"!=", OP_NE}},
    {{"<=", OP_LE}, {">=", OP_GE}, {"<", OP_LT}, {">", OP_GT}},
    {{"+", OP_ADD}, {"-", OP_SUB}},
    {{"*", OP_MUL}, {"/", OP_DIV}, {"%", OP_MOD}},
};
#define NBINLEVELS ((int)(sizeof binops / sizeof binops[0]))

/* Compiles a chain of operators of this level and tighter ones: operand (op operand)*. */
static void binary(cc *c, int level)
{
    if (level == NBINLEVELS) {
        unary(c);
        return;
    }
    binary(c, level + 1);
    for (;;) {
        if (c->failed) return;
        int op = -1;
        for (int i = 0; i < 5 && binops[level][i].tok && op < 0; i++)
            if (accept(c, binops[level][i].tok)) op = binops[level][i].op;
        if (op < 0) return;
        binary(c, level + 1);
        emit(c, op, -1);
    }
}

static void eq(cc *c)
{
    binary(c, 0);
}

/* Patches the jump at index j to land at the current end. */
static void patch(cc *c, uint32_t j)
{
    if (!c->failed) c->ins[j].b = c->n - j;
}

static void and_(cc *c)
{
    eq(c);
    while (!c->failed && accept(c, "&&")) {
        uint32_t j = c->n;
        emit(c, OP_ANDJ, -1);
        eq(c);
        emit(c, OP_BOOL, 0);
        patch(c, j);
    }
}

static void or_(cc *c)
{
    and_(c);
    while (!c->failed && accept(c, "||")) {
        uint32_t j = c->n;
        emit(c, OP_ORJ, -1);
        and_(c);
        emit(c, OP_BOOL, 0);
        patch(c, j);
    }
}

static void cond(cc *c)
{
    if (++c->depth > XMT_MAX_EXPR_DEPTH) {
        cfail(c, c->s, "expression nested deeper than %d", XMT_MAX_EXPR_DEPTH);
        return;
    }
    or_(c);
    if (!c->failed && accept(c, "?")) {
        uint32_t jf = c->n;
        emit(c, OP_JF, -1);
        cond(c);
        uint32_t jm = c->n;
        emit(c, OP_JMP, 0);
        c->sp--; /* the other branch pushes the same slot */
        if (!c->failed && !accept(c, ":")) cfail(c, c->s, "expected ':' of '?:'");
        patch(c, jf);
        cond(c);
        patch(c, jm);
    }
    c->depth--;
}

int xmt_compile(const char *text, xmt_resolve_fn resolve, void *ctx, xmt_code *out, char *err,
                size_t cap, size_t *errpos)
{
    cc c;
    memset(&c, 0, sizeof c);
    c.text = c.s = text;
    c.resolve = resolve;
    c.ctx = ctx;
    c.err = err;
    c.errcap = cap;
    memset(out, 0, sizeof *out);
    if (strlen(text) > XMT_MAX_EXPR_CHARS) {
        cfail(&c, text, "expression longer than %d characters", XMT_MAX_EXPR_CHARS);
    } else {
        skipws(&c);
        if (*c.s == 0) cfail(&c, c.s, "empty expression");
        cond(&c);
        skipws(&c);
        if (!c.failed && *c.s) {
            if (*c.s == '=' && c.s[1] != '=')
                cfail(&c, c.s, "unexpected '=' (comparison is '==')");
            else if ((*c.s == '&' && c.s[1] != '&') || (*c.s == '|' && c.s[1] != '|'))
                cfail(&c, c.s, "unexpected '%c' (logical operators are && and ||)", *c.s);
            else
                cfail(&c, c.s, "unexpected '%c': expected an operator or the end", *c.s);
        }
    }
    if (c.failed) {
        free(c.ins);
        if (errpos) *errpos = c.errpos;
        return -1;
    }
    out->ins = c.ins;
    out->n = c.n;
    out->maxstack = (uint32_t)c.maxsp;
    return 0;
}

void xmt_code_free(xmt_code *c)
{
    free(c->ins);
    c->ins = NULL;
    c->n = 0;
}

int xmt_code_const(xmt_code *out, int64_t v)
{
    out->ins = calloc(1, sizeof *out->ins);
    if (!out->ins) return -1;
    out->ins[0].op = OP_CI;
    out->ins[0].k.i = v;
    out->n = 1;
    out->maxstack = 1;
    return 0;
}

int xmt_code_copy(xmt_code *out, const xmt_code *in)
{
    out->ins = malloc((in->n ? in->n : 1) * sizeof *out->ins);
    if (!out->ins) return -1;
    memcpy(out->ins, in->ins, in->n * sizeof *out->ins);
    out->n = in->n;
    out->maxstack = in->maxstack;
    return 0;
}

int xmt_code_product(xmt_code *out, const xmt_code *const *f, size_t n)
{
    size_t total = n - 1, ms = 0;
    for (size_t k = 0; k < n; k++) {
        total += f[k]->n;
        size_t need = f[k]->maxstack + (k ? 1 : 0);
        if (need > ms) ms = need;
    }
    if (total > XMT_MAX_EXPR_INSNS || ms > XMT_EVAL_STACK) return -1;
    out->ins = malloc(total * sizeof *out->ins);
    if (!out->ins) return -1;
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        memcpy(out->ins + at, f[k]->ins, f[k]->n * sizeof *out->ins);
        at += f[k]->n;
        if (k) {
            memset(&out->ins[at], 0, sizeof out->ins[at]);
            out->ins[at++].op = OP_MUL;
        }
    }
    out->n = (uint32_t)total;
    out->maxstack = (uint32_t)ms;
    return 0;
}

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
