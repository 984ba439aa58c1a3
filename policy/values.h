/* values.h - what the expressions compute with (values.c): the value type (a 64-bit
 * integer, or a double once an operand is a float), the parameter types beyond
 * xmt_dtype's, the evaluation errors, the names of the device attributes and of the
 * original launch's values, and the scalar conversions between a parameter's bytes and a
 * value. The lowest layer of the language: expr.h and eval.h build on it.
 */
#ifndef XMT_VALUES_H
#define XMT_VALUES_H

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
