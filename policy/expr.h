/* expr.h - the expression language of policy files, compiled once, evaluated often.
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

#include "xmt_policy.h"

#include <stddef.h>
#include <stdint.h>

/* Parameter types. Scalars share xmt_dtype's numbering so that a tensor's dtype and a
 * scalar's type convert with the same code. */
enum {
    XMT_PT_PTR = 20,     /* any pointer: its value is the address */
    XMT_PT_BLOB = 21,    /* bytes(N): only its named fields can be read */
    XMT_PT_UNKNOWN = 22, /* name only: the type comes from the demangled signature */
};

typedef struct {
    union {
        int64_t i;
        double f;
    } u;
    int isf;
} xmt_val;

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

/* What an evaluation reads: the launch, the parameter types of the (possibly
 * signature-specialised) entry, and the tunable values of the candidate being evaluated. */
typedef struct {
    const xmt_launch_view *v;
    const uint8_t *ptypes; /* XMT_DT_* or XMT_PT_* per declared parameter */
    size_t nptypes;
    const xmt_val *tun;
    size_t ntun;
} xmt_env;

enum {
    XMT_E_OK = 0,
    XMT_E_DIV0,     /* division or modulo by zero */
    XMT_E_OVERFLOW, /* integer overflow, or a float result that is not finite */
    XMT_E_DOMAIN,   /* log2 of a value <= 0 */
    XMT_E_ARG,      /* the launch lacks that argument */
    XMT_E_TYPE,     /* a parameter whose type is unknown or not a number */
    XMT_E_ATTR,     /* no attributes in the view */
    XMT_E_TUNABLE,  /* a space value with no candidate */
};
const char *xmt_eval_strerror(int err);

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

/* 0 and *out, or an XMT_E_* code. Allocates nothing. */
int xmt_code_eval(const xmt_code *c, const xmt_env *env, xmt_val *out);
/* 1 + i when c is only the original launch's value i (0..6: grid x, y, z, block x, y, z,
 * shared), which a key's slot then copies without evaluating; 0 otherwise. */
int xmt_code_orig_leaf(const xmt_code *c);
/* Marks in read[] (n long) every parameter c loads, whole or by a field: what its value
 * can depend on besides the launch's dims, the device and constants. */
void xmt_code_params_read(const xmt_code *c, uint8_t *read, size_t n);

/* Attribute and original-launch names: index by name, -1 if none; and back. */
int xmt_attr_index(const char *name);
const char *xmt_attr_name(unsigned i);
int64_t xmt_attr_get(const xmt_attrs *a, unsigned i);
#define XMT_NATTRS 15
int xmt_orig_index(const char *base, const char *member); /* grid0.x .. shared0 */
const char *xmt_orig_name(unsigned i);

/* Scalar conversions shared by loads and argument overrides: xmt_half_to_double and the
 * others are in xmt_policy.h (the shim's output comparison uses them too). */
/* Reads a scalar of type t from p into v. 0 or XMT_E_*. */
int xmt_load_scalar(const void *p, unsigned t, xmt_val *v);
/* Encodes v as type t (range-checked for integers). 0 ok, XMT_E_OVERFLOW / XMT_E_TYPE. */
int xmt_store_scalar(xmt_val v, unsigned t, uint64_t *bits, unsigned *size);

#endif
