/* expr.h - the expression language of policy files, compiled once, evaluated often: its
 * code and its compiler (expr.c). What it computes with is values.h; running the code is
 * eval.h.
 *
 * Expressions ("cdiv(n, BLOCK)", "x.shape[0] >= 4096 && BLOCK <= max_threads_per_block")
 * are compiled at load into a flat array of postfix instructions; evaluation walks it
 * with a fixed-size value stack, so that it allocates nothing and its cost is a handful
 * of nanoseconds per instruction. Names are resolved at compile time by the loader's
 * callback (which knows the entry's parameters, tensors and space), into a parameter
 * load, a space value, an original-launch or device attribute, a constant, or another
 * compiled expression to inline (tensor shapes, functional triggers).
 *
 * Values are 64-bit signed integers, or doubles once an operand is a float. Every fault
 * (division by zero, overflow, log2 of a non-positive value, a missing argument) stops
 * evaluation with an error code; it never traps.
 */
#ifndef XMT_EXPR_H
#define XMT_EXPR_H

#include "values.h"
#include "xmt_policy.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t op;
    uint8_t type; /* OP_FIELD: the field's scalar type */
    uint16_t a;   /* parameter / space / attribute index */
    uint32_t b;   /* OP_FIELD: byte offset; jumps: relative target */
    union {
        int64_t i;
        double f;
    } k;
} xmt_insn;

typedef struct {
    xmt_insn *ins;
    uint32_t n;
    uint32_t maxstack;
} xmt_code;

#define XMT_EVAL_STACK 64

/* A name as written: base, optional ".member", optional "[k]" or "(k)" or "()". */
typedef struct {
    char base[XMT_NAME_MAX];
    char member[XMT_NAME_MAX];
    int has_member;
    int suffix; /* XMT_SFX_* */
    int64_t k;
} xmt_path;
enum { XMT_SFX_NONE, XMT_SFX_INDEX, XMT_SFX_CALL0, XMT_SFX_CALL1 };

/* What a name resolves to. */
typedef struct {
    enum {
        XMT_REF_CONST_I,
        XMT_REF_CONST_F,
        XMT_REF_PARAM,
        XMT_REF_FIELD,
        XMT_REF_SPACE,
        XMT_REF_ORIG,
        XMT_REF_ATTR,
        XMT_REF_CODE
    } kind;
    unsigned index;       /* param, space, orig (0..6), attr */
    unsigned offset;      /* field offset */
    uint8_t type;         /* field type */
    int64_t i;            /* constant */
    double f;             /* constant */
    const xmt_code *code; /* inline */
} xmt_ref;

/* The loader's name resolver: 0 ok, -1 error with a message in err. */
typedef int (*xmt_resolve_fn)(void *ctx, const xmt_path *p, xmt_ref *out, char *err, size_t cap);

/* Parses a name at s (leading blanks skipped). Returns the characters consumed, 0 when s
 * does not start with a name, -1 on a malformed suffix (err set). */
int xmt_parse_path(const char *s, xmt_path *p, char *err, size_t cap);

/* Compiles text. 0 ok (out->ins malloc'd; free with xmt_code_free), -1 error: message in
 * err, *errpos = offset in text where it was detected. */
int xmt_compile(const char *text, xmt_resolve_fn resolve, void *ctx, xmt_code *out, char *err,
                size_t cap, size_t *errpos);
void xmt_code_free(xmt_code *c);
/* Builders used by the loader for generated code (default strides, products). */
int xmt_code_const(xmt_code *out, int64_t v);
int xmt_code_product(xmt_code *out, const xmt_code *const *factors, size_t n); /* n >= 1 */
int xmt_code_copy(xmt_code *out, const xmt_code *in);

#endif
