/* gpucheck_edges: the shim's PTX verification kernels (shim/session/gpucheck/kernels.ptx) must
 * give exactly the host rules' answers (shim/session/verify.c) -- count and first index -- at
 * every edge: NaN payloads, -0.0, infinities, denormals, values at the tolerance limit,
 * f16/bf16/f32/f64, element sizes 1-8, unaligned starts; and the changed-chunk kernel
 * must flag exactly the host's chunks, the largest-magnitude kernel (xmt_absmax) find
 * exactly the host's largest finite |value|, xmt_not write exactly the complement, and
 * xmt_seq write exactly the host's sequence (xmt_verify_seq_word) and nothing past it. Run by
 * tests/gpu/all.sh on the GPU machine. Prints one line per group and "gpucheck_edges: OK" or the
 * first disagreement. */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#include "gpucheck_ptx.h" /* xxd -i of kernels.ptx + NUL: gpucheck_ptx[] */

#define CK(x)                                                                                      \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "gpucheck_edges: %s failed: %d\n", #x, (int)r_);                       \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

static CUfunction f_bits, f_tol, f_changed, f_absmax, f_not, f_seq;
static CUdeviceptr d_a, d_b, d_res, d_flags;
static long checked, bad;

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void gpu_cmp(const uint8_t *a, const uint8_t *b, size_t off, size_t bytes, int kind,
                    unsigned es, double rtol, double atol, uint64_t *count, uint64_t *first)
{
    uint64_t init[2] = {0, UINT64_MAX}, out[2];
    CK(cuMemcpyHtoD(d_a, a, bytes + off));
    CK(cuMemcpyHtoD(d_b, b, bytes + off));
    CK(cuMemcpyHtoD(d_res, init, 16));
    CUdeviceptr pa = d_a + off, pb = d_b + off, pc = d_res, pf = d_res + 8;
    uint64_t n = bytes, elems = bytes / es;
    unsigned k = (unsigned)kind;
    unsigned blocks = (unsigned)(bytes / 16 / 256 + 1);
    if (blocks > 4096) blocks = 4096;
    if (kind == XMT_CMP_BITS) {
        void *args[] = {&pa, &pb, &n, &es, &pc, &pf};
        CK(cuLaunchKernel(f_bits, blocks, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    } else {
        void *args[] = {&pa, &pb, &elems, &k, &rtol, &atol, &pc, &pf};
        CK(cuLaunchKernel(f_tol, blocks, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    }
    CK(cuMemcpyDtoH(out, d_res, 16));
    *count = out[0];
    *first = out[1];
}

static void check(const char *what, const uint8_t *a, const uint8_t *b, size_t off, size_t bytes,
                  int kind, unsigned es, double rtol, double atol)
{
    uint64_t gc, gf, hf, hc = xmt_verify_host(a + off, b + off, bytes, kind, es, rtol, atol, &hf);
    gpu_cmp(a, b, off, bytes, kind, es, rtol, atol, &gc, &gf);
    checked++;
    if (gc != hc || (hc && gf != hf)) {
        if (bad++ < 10)
            printf(
                "gpucheck_edges: DISAGREE %s kind=%d es=%u rtol=%g atol=%g off=%zu: gpu %llu/%llu "
                "host %llu/%llu\n",
                what, kind, es, rtol, atol, off, (unsigned long long)gc, (unsigned long long)gf,
                (unsigned long long)hc, (unsigned long long)hf);
    }
}

#define N 4096

/* Fills values of kind `kind` with edge cases and near neighbours. */
static void fill(uint8_t *a, uint8_t *b, int kind, double rtol, double atol)
{
    for (size_t i = 0; i < N; i++) {
        double r, g;
        switch (next() % 12) {
        case 0: r = NAN, g = NAN; break;
        case 1: r = NAN, g = 1; break;
        case 2: r = 0.0, g = -0.0; break;
        case 3: r = INFINITY, g = INFINITY; break;
        case 4: r = INFINITY, g = -INFINITY; break;
        case 5: r = -INFINITY, g = 1e30; break;
        case 6: r = 5e-324, g = 0; break;              /* smallest f64 denormal */
        case 7: r = 1.4e-45, g = 2.8e-45; break;       /* f32 denormals */
        case 8: r = 6e-8, g = 0; break;                /* f16 denormal */
        case 9: r = 1.0, g = 1.0 + atol + rtol; break; /* at the limit */
        case 10: r = (double)(next() % 1000) / 7, g = r * (1 + rtol * (double)(next() % 3)); break;
        default: r = g = (double)(next() % 100000) - 50000;
        }
        switch (kind) {
        case XMT_CMP_F64:
            memcpy(a + 8 * i, &r, 8);
            memcpy(b + 8 * i, &g, 8);
            break;
        case XMT_CMP_F32: {
            float fr = (float)r, fg = (float)g;
            memcpy(a + 4 * i, &fr, 4);
            memcpy(b + 4 * i, &fg, 4);
            break;
        }
        default: {
            uint16_t hr = kind == XMT_CMP_F16 ? xmt_double_to_half(r) : xmt_double_to_bf16(r);
            uint16_t hg = kind == XMT_CMP_F16 ? xmt_double_to_half(g) : xmt_double_to_bf16(g);
            if (next() % 16 == 0) hg = (uint16_t)(hr ^ (1u << (next() % 16))); /* bit flips */
            memcpy(a + 2 * i, &hr, 2);
            memcpy(b + 2 * i, &hg, 2);
        }
        }
    }
}

static void changed_check(uint8_t *a, uint8_t *b, size_t bytes, unsigned shift)
{
    size_t nf = (bytes + (1u << shift) - 1) >> shift;
    uint8_t *hf = calloc(nf, 1), *gf = malloc(nf);
    uint64_t first, hc = xmt_verify_changed_host(a, b, bytes, shift, hf, &first);
    uint64_t init[2] = {0, UINT64_MAX}, out[2];
    CK(cuMemcpyHtoD(d_a, a, bytes));
    CK(cuMemcpyHtoD(d_b, b, bytes));
    CK(cuMemcpyHtoD(d_res, init, 16));
    CK(cuMemsetD8(d_flags, 0, nf));
    CUdeviceptr pc = d_res, pf = d_res + 8;
    uint64_t n = bytes;
    void *args[] = {&d_a, &d_b, &n, &shift, &d_flags, &pc, &pf};
    CK(cuLaunchKernel(f_changed, 64, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CK(cuMemcpyDtoH(out, d_res, 16));
    CK(cuMemcpyDtoH(gf, d_flags, nf));
    checked++;
    if (out[0] != hc || memcmp(gf, hf, nf) != 0) {
        bad++;
        printf("gpucheck_edges: DISAGREE changed bytes=%zu shift=%u: gpu %llu host %llu\n", bytes,
               shift, (unsigned long long)out[0], (unsigned long long)hc);
    }
    free(hf);
    free(gf);
}

/* n elements of kind at a + off: the GPU's largest finite |value| against the host's. */
static void absmax_check(const uint8_t *a, size_t off, uint64_t n, int kind)
{
    unsigned es = kind <= XMT_CMP_BF16 ? 2 : kind == XMT_CMP_F32 ? 4 : 8;
    double host = xmt_verify_absmax_host(a + off, n, kind), gpu;
    uint64_t bits = 0;
    unsigned dt = (unsigned)kind;
    CK(cuMemcpyHtoD(d_a, a, off + n * es));
    CK(cuMemcpyHtoD(d_res, &bits, 8));
    CUdeviceptr p = d_a + off;
    void *args[] = {&p, &n, &dt, &d_res};
    CK(cuLaunchKernel(f_absmax, 64, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CK(cuMemcpyDtoH(&bits, d_res, 8));
    memcpy(&gpu, &bits, 8);
    checked++;
    if (gpu != host && bad++ < 10)
        printf("gpucheck_edges: DISAGREE absmax kind=%d n=%llu off=%zu: gpu %.17g host %.17g\n",
               kind, (unsigned long long)n, off, gpu, host);
}

/* xmt_not from a + soff into b + doff, bytes long: every byte the complement, nothing
 * around it touched. */
static void not_check(const uint8_t *a, size_t soff, size_t doff, size_t bytes, size_t cap)
{
    uint8_t *got = malloc(cap), *want = malloc(cap);
    for (size_t i = 0; i < cap; i++)
        want[i] = 0x5a;
    for (size_t i = 0; i < bytes; i++)
        want[doff + i] = (uint8_t)~a[soff + i];
    CK(cuMemcpyHtoD(d_a, a, cap));
    CK(cuMemsetD8(d_b, 0x5a, cap));
    CUdeviceptr dst = d_b + doff, src = d_a + soff;
    uint64_t n = bytes;
    void *args[] = {&dst, &src, &n};
    CK(cuLaunchKernel(f_not, 64, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CK(cuMemcpyDtoH(got, d_b, cap));
    checked++;
    if (memcmp(got, want, cap) != 0 && bad++ < 10)
        printf("gpucheck_edges: DISAGREE not bytes=%zu soff=%zu doff=%zu\n", bytes, soff, doff);
    free(got);
    free(want);
}

/* xmt_seq into b + doff (8-byte aligned), words long, from seed, on `blocks` blocks (one:
 * the grid-stride loop): every word the host's, nothing around it touched. */
static void seq_check(size_t doff, uint64_t words, uint64_t seed, unsigned blocks, size_t cap)
{
    uint8_t *got = malloc(cap), *want = malloc(cap);
    memset(want, 0x5a, cap);
    xmt_verify_seq_fill((uint64_t *)(void *)(want + doff), words, seed); /* malloc'd: aligned */
    CK(cuMemsetD8(d_b, 0x5a, cap));
    CUdeviceptr dst = d_b + doff;
    void *args[] = {&dst, &words, &seed};
    CK(cuLaunchKernel(f_seq, blocks, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CK(cuMemcpyDtoH(got, d_b, cap));
    checked++;
    if (memcmp(got, want, cap) != 0 && bad++ < 10)
        printf("gpucheck_edges: DISAGREE seq words=%llu doff=%zu seed=%llx\n",
               (unsigned long long)words, doff, (unsigned long long)seed);
    free(got);
    free(want);
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, gpucheck_ptx));
    CK(cuModuleGetFunction(&f_bits, mod, "xmt_cmp_bits"));
    CK(cuModuleGetFunction(&f_tol, mod, "xmt_cmp_tol"));
    CK(cuModuleGetFunction(&f_changed, mod, "xmt_changed"));
    CK(cuModuleGetFunction(&f_absmax, mod, "xmt_absmax"));
    CK(cuModuleGetFunction(&f_not, mod, "xmt_not"));
    CK(cuModuleGetFunction(&f_seq, mod, "xmt_seq"));
    size_t cap = 8 * N + 64;
    uint8_t *a = malloc(cap), *b = malloc(cap);
    CK(cuMemAlloc(&d_a, cap));
    CK(cuMemAlloc(&d_b, cap));
    CK(cuMemAlloc(&d_res, 16));
    CK(cuMemAlloc(&d_flags, cap));
    static const double tols[][2] = {{0, 1e-3}, {1e-4, 0}, {1e-2, 1e-5}, {0.5, 0.5}, {1e-7, 1e-30}};
    for (int kind = XMT_CMP_F16; kind <= XMT_CMP_F64; kind++) {
        unsigned es = kind <= XMT_CMP_BF16 ? 2 : kind == XMT_CMP_F32 ? 4 : 8;
        for (size_t t = 0; t < sizeof tols / sizeof tols[0]; t++)
            for (int rep = 0; rep < 8; rep++) {
                fill(a, b, kind, tols[t][0], tols[t][1]);
                check("tolerance", a, b, 0, (size_t)N * es, kind, es, tols[t][0], tols[t][1]);
                check("bits-of-floats", a, b, 0, (size_t)N * es, XMT_CMP_BITS, es, 0, 0);
            }
    }
    printf("gpucheck_edges: tolerance and float bits: %ld comparisons, %ld disagree\n", checked,
           bad);
    for (unsigned es = 1; es <= 8; es *= 2)
        for (size_t off = 0; off < 32; off += es)
            for (int rep = 0; rep < 4; rep++) {
                for (size_t i = 0; i < cap; i++)
                    a[i] = b[i] = (uint8_t)next();
                for (int k = 0; k < rep * 3; k++)
                    b[off + next() % (8 * N - 32)] ^= (uint8_t)(1 + next() % 255);
                size_t bytes = (size_t)(8 * N - 32) / es * es - (size_t)rep * es;
                check("bits", a, b, off, bytes, XMT_CMP_BITS, es, 0, 0);
            }
    /* dense differences, which the kernel counts with per-word masks: a rejected output
     * (every element differs, or one in four is equal), and the data check's comparison of
     * a run with itself 16 bytes on (b = a + 16; a repeating stretch is equal there) */
    for (unsigned es = 1; es <= 8; es *= 2)
        for (int rep = 0; rep < 6; rep++) {
            for (size_t i = 0; i < cap; i++)
                a[i] = (uint8_t)next();
            if (rep < 4)
                for (size_t i = 0; i < cap; i++)
                    b[i] = rep & 1 && next() % 4 == 0 ? a[i] : (uint8_t)(a[i] ^ (1 + next() % 255));
            else {
                memset(a + 1000 * es, 0x5a, 640); /* repeats itself: equal when shifted */
                memcpy(b, a + 16, cap - 16);
            }
            size_t off = (size_t)(rep % 2) * 16;
            check("bits, dense", a, b, off, (size_t)(8 * N - 64) / es * es - (size_t)rep * es,
                  XMT_CMP_BITS, es, 0, 0);
        }
    for (unsigned shift = 4; shift <= 12; shift += 4)
        for (int rep = 0; rep < 8; rep++) {
            for (size_t i = 0; i < cap; i++)
                a[i] = b[i] = (uint8_t)next();
            for (int k = 0; k < rep * 5; k++)
                b[next() % (8 * N)] ^= 0x5a;
            changed_check(a, b, 8 * N - (size_t)rep * 3, shift);
        }
    for (int kind = XMT_CMP_F16; kind <= XMT_CMP_F64; kind++) {
        unsigned es = kind <= XMT_CMP_BF16 ? 2 : kind == XMT_CMP_F32 ? 4 : 8;
        for (int rep = 0; rep < 8; rep++) {
            fill(a, b, kind, 1e-3, 1e-3); /* NaNs, infinities, denormals, -0.0 among them */
            absmax_check(a, 0, N - (uint64_t)rep, kind);
            absmax_check(b, es * (size_t)rep, N - (uint64_t)rep, kind);
        }
        memset(a, 0, (size_t)N * es);
        absmax_check(a, 0, N, kind); /* all zeros: 0 */
    }
    for (size_t off = 0; off < 32; off += 8)
        for (int rep = 0; rep < 4; rep++) {
            for (size_t i = 0; i < cap; i++)
                a[i] = (uint8_t)next();
            not_check(a, off, 32 - off, 8 * N - 64 - (size_t)rep * 5, cap);
        }
    static const uint64_t seeds[] = {0, 0x9E3779B97F4A7C15ull, ~0ull};
    for (size_t k = 0; k < 3; k++)
        for (size_t doff = 0; doff < 32; doff += 8)
            for (uint64_t words = 0; words < N; words = words * 3 + 1 + doff)
                for (unsigned one = 0; one < 2; one++)
                    seq_check(doff, words, seeds[k], one ? 1 : (unsigned)(words / 256 + 1), cap);
    printf("gpucheck_edges: %ld comparisons in all, %ld disagree\n", checked, bad);
    puts(bad ? "gpucheck_edges: FAIL" : "gpucheck_edges: OK");
    return bad ? 1 : 0;
}
