/*
 * verify: the comparison rules on host memory (see verify.h).
 */
#include "verify.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int xmt_verify_kind(xmt_dtype dt, double rtol, double atol, unsigned *es)
{
    size_t s = xmt_dtype_size(dt);
    *es = s ? (unsigned)s : 1;
    if (rtol == 0 && atol == 0) return XMT_CMP_BITS;
    switch (dt) {
    case XMT_DT_F16: return XMT_CMP_F16;
    case XMT_DT_BF16: return XMT_CMP_BF16;
    case XMT_DT_F32: return XMT_CMP_F32;
    case XMT_DT_F64: return XMT_CMP_F64;
    default: return XMT_CMP_BITS;
    }
}

int xmt_verify_within(double ref, double got, double rtol, double atol)
{
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got)) return ref == got;
    if (ref == got) return 1;
    /* volatile: each operation rounded on its own, as the PTX does (no contraction) */
    volatile double diff = got - ref, scaled = rtol * fabs(ref), bound = atol + scaled;
    return fabs(diff) <= bound;
}

double xmt_verify_value(const uint8_t *p, uint64_t i, int kind)
{
    uint16_t h;
    float f;
    double d;
    switch (kind) {
    case XMT_CMP_F16: memcpy(&h, p + 2 * i, 2); return xmt_half_to_double(h);
    case XMT_CMP_BF16: memcpy(&h, p + 2 * i, 2); return xmt_bf16_to_double(h);
    case XMT_CMP_F32: memcpy(&f, p + 4 * i, 4); return f;
    case XMT_CMP_F64: memcpy(&d, p + 8 * i, 8); return d;
    default: return p[i];
    }
}

double xmt_verify_absmax_host(const uint8_t *p, uint64_t n, int kind)
{
    double m = 0;
    for (uint64_t i = 0; i < n; i++) {
        double v = fabs(xmt_verify_value(p, i, kind));
        if (isfinite(v) && v > m) m = v;
    }
    return m;
}

uint64_t xmt_verify_seq_word(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void xmt_verify_seq_fill(uint64_t *dst, size_t words, uint64_t seed)
{
    for (size_t i = 0; i < words; i++)
        dst[i] = xmt_verify_seq_word(seed, i);
}

uint64_t xmt_verify_host(const uint8_t *ref, const uint8_t *got, size_t bytes, int kind,
                         unsigned es, double rtol, double atol, uint64_t *first)
{
    uint64_t n = 0, count = bytes / es;
    *first = UINT64_MAX;
    if (kind == XMT_CMP_BITS && memcmp(ref, got, count * es) == 0) return 0;
    for (uint64_t i = 0; i < count; i++) {
        int same = kind == XMT_CMP_BITS
                       ? !memcmp(ref + i * es, got + i * es, es)
                       : xmt_verify_within(xmt_verify_value(ref, i, kind),
                                           xmt_verify_value(got, i, kind), rtol, atol);
        if (!same && n++ == 0) *first = i;
    }
    return n;
}

uint64_t xmt_verify_changed_host(const uint8_t *a, const uint8_t *b, size_t bytes, unsigned shift,
                                 uint8_t *flags, uint64_t *first)
{
    uint64_t n = 0;
    *first = UINT64_MAX;
    for (size_t w = 0; w < bytes; w += 16) {
        size_t len = bytes - w < 16 ? bytes - w : 16;
        if (!memcmp(a + w, b + w, len)) continue;
        flags[w >> shift] = 1;
        if (n++ == 0) *first = w;
    }
    return n;
}

void xmt_verify_describe(const char *name, uint64_t n, uint64_t total, uint64_t first, int kind,
                         int es_bytes, double rtol, double atol, double got, double ref,
                         const char *where, char *why, size_t cap)
{
    char at[64];
    if (!where) {
        snprintf(at, sizeof at, "%s %llu", es_bytes ? "byte" : "element",
                 (unsigned long long)first);
        where = at;
    }
    if (kind == XMT_CMP_BITS)
        snprintf(why, cap, "%s: %llu of %llu %s %s bitwise%s%s", name, (unsigned long long)n,
                 (unsigned long long)total, es_bytes ? "bytes" : "elements",
                 n == 1 ? "differs" : "differ", n == 1 ? ", at " : ", the first at ", where);
    else
        snprintf(why, cap,
                 "%s: %llu of %llu elements %s beyond rtol=%g atol=%g%s%s: %.9g, expected %.9g",
                 name, (unsigned long long)n, (unsigned long long)total,
                 n == 1 ? "differs" : "differ", rtol, atol, n == 1 ? ", at " : ", the first at ",
                 where, got, ref);
}

size_t xmt_verify_compare(const xmt_buffer *b, const uint8_t *ref, const uint8_t *got, char *why,
                          size_t cap)
{
    unsigned es;
    int kind = xmt_verify_kind(b->dtype, b->rtol, b->atol, &es);
    uint64_t first, n = xmt_verify_host(ref, got, b->bytes, kind, es, b->rtol, b->atol, &first);
    if (n)
        xmt_verify_describe(b->name, n, b->bytes / es, first, kind, 0, b->rtol, b->atol,
                            kind ? xmt_verify_value(got, first, kind) : 0,
                            kind ? xmt_verify_value(ref, first, kind) : 0, NULL, why, cap);
    return (size_t)n;
}
