/* values.c - what expressions compute with (see values.h): the evaluation errors' words,
 * the names of the device attributes and of the original launch's values, and the scalar
 * conversions (half, bfloat16, a parameter's bytes to a value and back). */
#include "values.h"

#include <float.h>
#include <math.h>
#include <string.h>

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
