/* sim_xmtcheck.c: C equivalents of the shim's own verification kernels
 * (shim/session/gpucheck/kernels.cu), so that a CPU test runs the shim's GPU path exactly as the
 * real driver would run the PTX: same names, same parameters, same results.
 *
 * Each runs its whole computation in block (0,0,0) and nothing in the other blocks: the
 * result does not depend on the grid, as it does not for the PTX (grid-stride loops and
 * atomic publication). Out-of-allocation pointers fault like any simulated kernel. */
#include <math.h>

#include "sim_internal.h"

static int first_block(const sim_exec *e)
{
    return e->bid[0] == 0 && e->bid[1] == 0 && e->bid[2] == 0;
}

static uint64_t u64_at(const sim_exec *e, int i)
{
    uint64_t v;
    memcpy(&v, e->params + e->k->off[i], 8);
    return v;
}
static double f64_at(const sim_exec *e, int i)
{
    double v;
    memcpy(&v, e->params + e->k->off[i], 8);
    return v;
}

/* Pointer param i, or NULL (and a fault) when its allocation has fewer than n bytes. */
static unsigned char *span(sim_exec *e, int i, uint64_t n)
{
    if (!e->base[i] || e->avail[i] < n) {
        e->fault = 1;
        return NULL;
    }
    return e->base[i];
}

/* Adds count to *param i and lowers *param i+1 to first. */
static void publish(sim_exec *e, int i, uint64_t count, uint64_t first)
{
    uint64_t *cnt = (uint64_t *)(void *)span(e, i, 8), *fst = (uint64_t *)(void *)span(e, i + 1, 8);
    if (!cnt || !fst || !count) return;
    *cnt += count;
    if (first < *fst) *fst = first;
}

/* xmt_cmp_bits(const u8 *a, const u8 *b, u64 bytes, u32 es, u64 *count, u64 *first) */
void simx_cmp_bits_run(sim_exec *e)
{
    if (!first_block(e)) return;
    uint64_t bytes = u64_at(e, 2);
    unsigned es = (unsigned)simk_i32(e, 3);
    const unsigned char *a = span(e, 0, bytes), *b = span(e, 1, bytes);
    if (!a || !b || es == 0) return;
    uint64_t count = 0, first = UINT64_MAX;
    for (uint64_t i = 0; i < bytes / es; i++)
        if (memcmp(a + i * es, b + i * es, es)) {
            if (!count) first = i;
            count++;
        }
    publish(e, 4, count, first);
}

static double half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v = exp == 0    ? ldexp(man, -24)
               : exp == 31 ? (man ? NAN : INFINITY)
                           : ldexp(man | 0x400, exp - 25);
    return (h & 0x8000) ? -v : v;
}

static double load(const unsigned char *p, uint64_t i, unsigned dt)
{
    uint16_t h;
    float f;
    double d;
    switch (dt) {
    case 1: memcpy(&h, p + 2 * i, 2); return half_to_double(h);
    case 2: {
        uint32_t w;
        memcpy(&h, p + 2 * i, 2);
        w = (uint32_t)h << 16;
        memcpy(&f, &w, 4);
        return f;
    }
    case 3: memcpy(&f, p + 4 * i, 4); return f;
    default: memcpy(&d, p + 8 * i, 8); return d;
    }
}

static int within(double r, double g, double rtol, double atol)
{
    if (isnan(r) || isnan(g)) return isnan(r) && isnan(g);
    if (isinf(r) || isinf(g)) return r == g;
    if (r == g) return 1;
    volatile double diff = g - r, scaled = rtol * fabs(r), bound = atol + scaled;
    return fabs(diff) <= bound;
}

/* xmt_cmp_tol(const u8 *ref, const u8 *got, u64 n, u32 dt, f64 rtol, f64 atol, u64 *count,
 *             u64 *first) */
void simx_cmp_tol_run(sim_exec *e)
{
    if (!first_block(e)) return;
    uint64_t n = u64_at(e, 2);
    unsigned dt = (unsigned)simk_i32(e, 3);
    unsigned es = dt <= 2 ? 2 : dt == 3 ? 4 : 8;
    double rtol = f64_at(e, 4), atol = f64_at(e, 5);
    const unsigned char *r = span(e, 0, n * es), *g = span(e, 1, n * es);
    if (!r || !g) return;
    uint64_t count = 0, first = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++)
        if (!within(load(r, i, dt), load(g, i, dt), rtol, atol)) {
            if (!count) first = i;
            count++;
        }
    publish(e, 6, count, first);
}

/* xmt_changed(const u8 *a, const u8 *b, u64 bytes, u32 shift, u8 *flags, u64 *count,
 *             u64 *first): counts differing 16-byte words, as the PTX does for 16-byte
 * aligned input. */
void simx_changed_run(sim_exec *e)
{
    if (!first_block(e)) return;
    uint64_t bytes = u64_at(e, 2);
    unsigned shift = (unsigned)simk_i32(e, 3);
    const unsigned char *a = span(e, 0, bytes), *b = span(e, 1, bytes);
    unsigned char *flags = span(e, 4, shift < 64 ? ((bytes + (1ull << shift) - 1) >> shift) : 1);
    if (!a || !b || !flags) return;
    uint64_t count = 0, first = UINT64_MAX;
    for (uint64_t w = 0; w < bytes; w += 16) {
        uint64_t len = bytes - w < 16 ? bytes - w : 16;
        if (!memcmp(a + w, b + w, len)) continue;
        flags[w >> shift] = 1;
        if (!count) first = w;
        count++;
    }
    publish(e, 5, count, first);
}

/* They read every byte twice: a memory-bound cost, as on a GPU. */
double simx_cost(const sim_exec *e)
{
    return 2000.0 + (double)u64_at(e, 2) * 0.0005;
}

/* xmt_absmax(const u8 *p, u64 n, u32 dt, u64 *maxbits): the largest finite |value|, as
 * double bits raised into *maxbits. */
void simx_absmax_run(sim_exec *e)
{
    if (!first_block(e)) return;
    uint64_t n = u64_at(e, 1);
    unsigned dt = (unsigned)simk_i32(e, 2);
    unsigned es = dt <= 2 ? 2 : dt == 3 ? 4 : 8;
    const unsigned char *p = span(e, 0, n * es);
    uint64_t *mb = (uint64_t *)(void *)span(e, 3, 8);
    if (!p || !mb) return;
    double m = 0;
    for (uint64_t i = 0; i < n; i++) {
        double v = fabs(load(p, i, dt));
        if (isfinite(v) && v > m) m = v;
    }
    uint64_t bits;
    memcpy(&bits, &m, 8);
    if (bits > *mb) *mb = bits;
}

/* It reads every element once. */
double simx_absmax_cost(const sim_exec *e)
{
    return 2000.0 + (double)u64_at(e, 1) * 0.00025;
}

/* xmt_not(u8 *dst, const u8 *src, u64 bytes): dst = ~src. */
void simx_not_run(sim_exec *e)
{
    if (!first_block(e)) return;
    uint64_t bytes = u64_at(e, 2);
    unsigned char *d = span(e, 0, bytes);
    const unsigned char *s = span(e, 1, bytes);
    if (!d || !s) return;
    for (uint64_t i = 0; i < bytes; i++)
        d[i] = (unsigned char)~s[i];
}

/* xmt_seq(u64 *dst, u64 words, u64 seed): dst[i] = SplitMix64's output after i + 1 steps
 * from seed. */
void simx_seq_run(sim_exec *e)
{
    if (!first_block(e)) return;
    uint64_t words = u64_at(e, 1), seed = u64_at(e, 2);
    unsigned char *d = span(e, 0, words * 8);
    if (!d) return;
    for (uint64_t i = 0; i < words; i++) {
        uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        memcpy(d + 8 * i, &z, 8);
    }
}

/* It writes every word once. */
double simx_seq_cost(const sim_exec *e)
{
    return 2000.0 + (double)u64_at(e, 1) * 8 * 0.0005;
}

/* xmt_spin(u64 ns): does nothing for ns of the stream's virtual clock. */
void simx_spin_run(sim_exec *e)
{
    (void)e;
}

double simx_spin_cost(const sim_exec *e)
{
    return (double)u64_at(e, 0);
}
