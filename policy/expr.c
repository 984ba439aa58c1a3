/* expr.c - the expression language: parser and compiler to postfix code (see expr.h; the
 * values it computes with are values.c's, its evaluator is eval.c).
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
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_ops.h"
#include "values.h"

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
