/*
 * The shim's own verification kernels, compiled once by a developer to PTX
 * (tools/dev/gen_gpucheck_ptx.sh) and carried as text in libxmatune.so: the driver JIT-compiles
 * them for whatever GPU is there, so no nvcc is needed to build the shim.
 *
 * Each comparison kernel publishes one result: `*count` is increased by the number of
 * differing elements (or 16-byte words, for xmt_changed) and `*first` lowered to the first
 * differing index (byte offset, for xmt_changed). The caller zeroes the count and sets
 * first to ~0 beforehand. xmt_absmax publishes the largest magnitude it read instead;
 * xmt_not and xmt_seq write memory rather than reading it; xmt_spin holds the GPU for a
 * while.
 * Every kernel but xmt_spin is launched with blockDim.x a multiple of 32 (block_fold).
 * The C equivalents the simulated driver runs are in tests/simdriver/sim_xmtcheck.c; the
 * host fallback is shim/verify.c. All three must agree exactly (docs/tuning.md
 * "Verification" states the rules).
 */
#include <cuda_fp16.h>

typedef unsigned long long u64;

/* dtype codes shared with shim/gpucheck.h (XMT_GC_*) */
#define DT_F16 1
#define DT_BF16 2
#define DT_F32 3
#define DT_F64 4

/* v folded over the block with op (associative and commutative), for thread 0; the other
 * threads get their warp's fold. Every thread of the block must call it (no early return)
 * with blockDim.x a multiple of 32 (the shim launches 256), and call each instantiation at
 * most once: its shared memory is not reused. Reducing within the block is what makes the
 * comparisons cheap when they differ everywhere: a pair of atomics per thread, all on one
 * address, is what that cost before, since the L2 serializes them. On an H100, 128 MiB that
 * differ everywhere took 1.64 ms that way and 0.10 ms with one pair per block, the speed
 * of equal buffers (tools/bench/gpucheck_bench.c; docs/benchmarks.md). */
template <class Op> __device__ u64 block_fold(u64 v, Op op)
{
    __shared__ u64 s_warp[32];
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        for (unsigned w = 1; w < blockDim.x / 32; w++)
            v = op(v, s_warp[w]);
    return v;
}

struct add_op {
    __device__ u64 operator()(u64 a, u64 b) const { return a + b; }
};
struct min_op {
    __device__ u64 operator()(u64 a, u64 b) const { return min(a, b); }
};
struct max_op {
    __device__ u64 operator()(u64 a, u64 b) const { return max(a, b); }
};

/* The block's sum of count and least first, published with one atomicAdd and one
 * atomicMin per block (block_fold says why). */
__device__ static void publish(u64 *cnt, u64 *fst, u64 count, u64 first)
{
    count = block_fold(count, add_op());
    first = block_fold(first, min_op());
    if (threadIdx.x == 0 && count) {
        atomicAdd(cnt, count);
        atomicMin(fst, first);
    }
}

/* Element i (of size es) of a and b differ? */
__device__ static bool elem_differs(const unsigned char *a, const unsigned char *b, u64 i,
                                    unsigned es)
{
    switch (es) {
    case 2: return ((const unsigned short *)a)[i] != ((const unsigned short *)b)[i];
    case 4: return ((const unsigned *)a)[i] != ((const unsigned *)b)[i];
    case 8: return ((const u64 *)a)[i] != ((const u64 *)b)[i];
    default: return a[i] != b[i];
    }
}

/* How many of the es-byte elements of two differing 16-byte words differ, and in *first
 * the index within the word of the first that does: from masks, rather than a loop of
 * element loads over a word already loaded. (This was first written for the ~3.5 ms a
 * comparison that differs everywhere took on the H200; it did not change that, which was
 * the atomics publish now makes one pair per block.) */
__device__ static unsigned word_diff(uint4 x, uint4 y, unsigned es, unsigned *first)
{
    const unsigned xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
    unsigned count = 0, at = 16;
    if (es == 8) {
        for (unsigned l = 0; l < 4; l += 2)
            if (xs[l] != ys[l] || xs[l + 1] != ys[l + 1]) {
                count++;
                at = min(at, l / 2);
            }
        *first = at;
        return count;
    }
    for (unsigned l = 0; l < 4; l++) {
        /* 0xff.. in each lane (byte, half or word) that differs */
        unsigned m = es == 1 ? __vcmpne4(xs[l], ys[l])
                     : es == 2 ? __vcmpne2(xs[l], ys[l])
                               : (xs[l] != ys[l] ? 0xffffffffu : 0u);
        if (!m) continue;
        count += __popc(m) / (8 * es);
        at = min(at, (l * 4 + (unsigned)(__ffs(m) - 1) / 8) / es);
    }
    *first = at;
    return count;
}

/* Bitwise: how many of the bytes/es elements differ, and the first. */
extern "C" __global__ void xmt_cmp_bits(const unsigned char *a, const unsigned char *b, u64 bytes,
                                        unsigned es, u64 *cnt,
                                        u64 *fst)
{
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    u64 count = 0, first = ~0ull;
    u64 n = bytes / es;
    bool aligned = ((((u64)a) | ((u64)b)) & 15) == 0 && (es == 1 || es == 2 || es == 4 || es == 8);
    u64 words = aligned ? bytes / 16 : 0;
    for (u64 w = tid; w < words; w += stride) {
        uint4 x = ((const uint4 *)a)[w], y = ((const uint4 *)b)[w];
        if (x.x == y.x && x.y == y.y && x.z == y.z && x.w == y.w) continue;
        unsigned j;
        count += word_diff(x, y, es, &j);
        if (first == ~0ull) first = w * (16 / es) + j; /* w only grows: the thread's first */
    }
    /* the tail past the last whole word, or everything when not aligned */
    u64 start = words * 16 / es;
    bool natural = ((((u64)a) | ((u64)b)) & (es - 1)) == 0;
    for (u64 i = start + tid; i < n; i += stride) {
        bool d;
        if (natural) {
            d = elem_differs(a, b, i, es);
        } else {
            d = false;
            for (unsigned k = 0; k < es; k++)
                d |= a[i * es + k] != b[i * es + k];
        }
        if (d) {
            count++;
            if (i < first) first = i;
        }
    }
    publish(cnt, fst, count, first);
}

__device__ static double load(const unsigned char *p, u64 i, unsigned dt)
{
    switch (dt) {
    case DT_F16: return (double)__half2float(__ushort_as_half(((const unsigned short *)p)[i]));
    case DT_BF16: return (double)__uint_as_float((unsigned)((const unsigned short *)p)[i] << 16);
    case DT_F32: return (double)((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

/* The one tolerance rule (shim/verify.c has its twin): NaN equals NaN only; an infinity
 * equals only itself; otherwise |got - ref| <= atol + rtol * |ref|, in double, with no
 * fused multiply-add, so that every path rounds alike. */
__device__ static bool within(double r, double g, double rtol, double atol)
{
    if (isnan(r) || isnan(g)) return isnan(r) && isnan(g);
    if (isinf(r) || isinf(g)) return r == g;
    if (r == g) return true;
    return fabs(__dsub_rn(g, r)) <= __dadd_rn(atol, __dmul_rn(rtol, fabs(r)));
}

/* Within rtol/atol, element by element, for n elements of dtype dt. */
extern "C" __global__ void xmt_cmp_tol(const unsigned char *ref, const unsigned char *got, u64 n,
                                       unsigned dt, double rtol, double atol, u64 *cnt,
                                       u64 *fst)
{
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    u64 count = 0, first = ~0ull;
    for (u64 i = tid; i < n; i += stride)
        if (!within(load(ref, i, dt), load(got, i, dt), rtol, atol)) {
            count++;
            if (i < first) first = i;
        }
    publish(cnt, fst, count, first);
}

/* Which chunks (of 1 << shift bytes) of a and b differ: flags[c] = 1 for each, and res
 * counts the differing 16-byte words (bytes, for unaligned input); first is a byte offset. */
extern "C" __global__ void xmt_changed(const unsigned char *a, const unsigned char *b, u64 bytes,
                                       unsigned shift, unsigned char *flags, u64 *cnt,
                                       u64 *fst)
{
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    u64 count = 0, first = ~0ull;
    bool aligned = ((((u64)a) | ((u64)b)) & 15) == 0;
    u64 words = aligned ? bytes / 16 : 0;
    for (u64 w = tid; w < words; w += stride) {
        uint4 x = ((const uint4 *)a)[w], y = ((const uint4 *)b)[w];
        if (x.x == y.x && x.y == y.y && x.z == y.z && x.w == y.w) continue;
        flags[(w * 16) >> shift] = 1;
        count++;
        if (w * 16 < first) first = w * 16;
    }
    for (u64 i = words * 16 + tid; i < bytes; i += stride)
        if (a[i] != b[i]) {
            flags[i >> shift] = 1;
            count++;
            if (i < first) first = i;
        }
    publish(cnt, fst, count, first);
}

/* The largest |value| among n elements of dtype dt, NaNs and infinities left out, as the
 * bits of a double raised into *maxbits (zeroed by the caller: 0.0): non-negative doubles
 * order as their bit patterns do, so an integer atomicMax publishes it. The scale that
 * float rounding is measured against (shim/rounding.c), read without copying an output
 * to the host. */
extern "C" __global__ void xmt_absmax(const unsigned char *p, u64 n, unsigned dt, u64 *maxbits)
{
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    double m = 0;
    for (u64 i = tid; i < n; i += stride) {
        double v = fabs(load(p, i, dt));
        if (isfinite(v) && v > m) m = v;
    }
    /* the block's largest, then one atomicMax per block (block_fold says why) */
    u64 bits = block_fold((u64)__double_as_longlong(m), max_op());
    if (threadIdx.x == 0 && bits) atomicMax(maxbits, bits);
}

/* dst = ~src, bytes long: a verify run's outputs filled with the complement of the
 * program's own result, so that every byte a candidate leaves unwritten differs from it
 * (one run tells, where a constant poison needs two: a reference byte may equal it). */
extern "C" __global__ void xmt_not(unsigned char *dst, const unsigned char *src, u64 bytes)
{
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    bool aligned = ((((u64)dst) | ((u64)src)) & 15) == 0;
    u64 words = aligned ? bytes / 16 : 0;
    for (u64 w = tid; w < words; w += stride) {
        uint4 x = ((const uint4 *)src)[w];
        ((uint4 *)dst)[w] = make_uint4(~x.x, ~x.y, ~x.z, ~x.w);
    }
    for (u64 i = words * 16 + tid; i < bytes; i += stride)
        dst[i] = (unsigned char)~src[i];
}

/* Word i of the guard bytes' sequence from seed: SplitMix64's output after i + 1 steps,
 * which needs no earlier word, so every thread makes its own (shim/verify.c has its twin,
 * xmt_verify_seq_word). */
__device__ static u64 seq_word(u64 seed, u64 i)
{
    u64 z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* dst[i] = word i of the sequence from seed, for i < words (dst 8-byte aligned): the
 * trial helper's guard pattern made where it is used, with no host work and no copy. */
extern "C" __global__ void xmt_seq(u64 *dst, u64 words, u64 seed)
{
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = tid; i < words; i += stride)
        dst[i] = seq_word(seed, i);
}

/* Holds the GPU for ns nanoseconds of %globaltimer, doing nothing: a timed round of short
 * candidates is queued behind it, so that its runs follow each other as in a program's
 * loop instead of each waiting for the host to launch it (docs/tuning.md, The benchmark). */
extern "C" __global__ void xmt_spin(u64 ns)
{
    u64 t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
