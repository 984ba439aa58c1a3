/*
 * verify: comparing a candidate's output with the program's own (see verify.h).
 */
#include "verify.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double element(const uint8_t *p, xmt_dtype t)
{
    float f;
    double d;
    uint16_t h;
    switch (t) {
    case XMT_DT_F32: memcpy(&f, p, 4); return f;
    case XMT_DT_F64: memcpy(&d, p, 8); return d;
    case XMT_DT_F16: memcpy(&h, p, 2); return xmt_half_to_double(h);
    case XMT_DT_BF16: memcpy(&h, p, 2); return xmt_bf16_to_double(h);
    default: return 0;
    }
}

size_t xmt_verify_compare(const xmt_buffer *b, const uint8_t *ref, const uint8_t *got, char *why,
                          size_t cap)
{
    int is_float = b->dtype == XMT_DT_F32 || b->dtype == XMT_DT_F64 || b->dtype == XMT_DT_F16 ||
                   b->dtype == XMT_DT_BF16;
    if (!is_float || (b->rtol == 0 && b->atol == 0)) {
        if (memcmp(ref, got, b->bytes) == 0) return 0;
        size_t es = xmt_dtype_size(b->dtype), n = 0, first = (size_t)-1;
        if (!es) es = 1;
        for (size_t i = 0; i + es <= b->bytes; i += es)
            if (memcmp(ref + i, got + i, es)) {
                if (first == (size_t)-1) first = i / es;
                n++;
            }
        snprintf(why, cap, "%s: %zu of %llu elements differ (bitwise), first at %zu", b->name, n,
                 (unsigned long long)(b->bytes / es), first);
        return n ? n : 1;
    }
    size_t es = xmt_dtype_size(b->dtype), n = 0, first = (size_t)-1;
    double fr = 0, fg = 0;
    for (size_t i = 0; i + es <= b->bytes; i += es) {
        double r = element(ref + i, b->dtype), g = element(got + i, b->dtype);
        int same = (isnan(r) && isnan(g)) || r == g || fabs(g - r) <= b->atol + b->rtol * fabs(r);
        if (!same) {
            if (first == (size_t)-1) {
                first = i / es;
                fr = r;
                fg = g;
            }
            n++;
        }
    }
    if (n)
        snprintf(why, cap,
                 "%s: %zu of %llu elements differ beyond rtol=%g atol=%g, first at %zu "
                 "(%.9g, expected %.9g)",
                 b->name, n, (unsigned long long)(b->bytes / es), b->rtol, b->atol, first, fg, fr);
    return n;
}
