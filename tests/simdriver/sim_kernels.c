/* sim_kernels.c: the simulated driver's built-in kernels and their cost models.
 *
 * Each kernel is a C function run once per block (run_block) that loops over the
 * block's threads itself, so it sees blockIdx, threadIdx, blockDim and gridDim as a
 * CUDA kernel does and gives the results a real one would -- including wrong ones for
 * configurations it was not written for. A module holds all of them unless its image
 * names its own (sim_launch.c). simcuda.h documents the table and the cost models; keep the
 * two in step. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* Threads the whole device keeps resident: below this a launch under-fills it. */
#define SAT ((double)SIM_SM_COUNT * SIM_THREADS_PER_SM)

#define FOR_THREADS(e, tx, ty, tz)                                                                 \
    for (unsigned tz = 0; tz < (e)->block[2]; tz++)                                                \
        for (unsigned ty = 0; ty < (e)->block[1]; ty++)                                            \
            for (unsigned tx = 0; tx < (e)->block[0]; tx++)

static double blocks_of(const sim_exec *e)
{
    return (double)e->grid[0] * e->grid[1] * e->grid[2];
}
static double threads_of(const sim_exec *e)
{
    return (double)e->block[0] * e->block[1] * e->block[2];
}
/* Smooth penalty, 1 at the preferred value, growing with the log distance to it. */
static double pen(double v, double opt, double k)
{
    double l = log2(v / opt);
    return 1.0 + k * l * l;
}

/* The common shape of every cost model:
 *   2000 ns launch + 0.25 ns per block
 *   + t_elem * elems * shape * max(1, SAT / active)
 * where active = min(threads launched, useful threads): a launch that keeps fewer
 * threads busy than the device holds pays in proportion. */
static double model_total(const sim_exec *e, double elems, double t_elem, double shape,
                          double useful, double total)
{
    double active = total < useful ? total : useful;
    if (active < 1) active = 1;
    double par = active >= SAT ? 1.0 : SAT / active;
    if (elems < 0) elems = 0;
    return 2000.0 + 0.25 * blocks_of(e) + t_elem * elems * shape * par;
}
static double model(const sim_exec *e, double elems, double t_elem, double shape, double useful)
{
    return model_total(e, elems, t_elem, shape, useful, blocks_of(e) * threads_of(e));
}

/* Kernels that give each block a fixed tile of elements (block_sum, tile_copy, the
 * Triton one) count a block as `tile` threads' worth of parallel work, whatever its
 * size: the block size then only moves the shape term, so their optimum does not
 * shift with n. */
static double tiled(const sim_exec *e, double n, double t_elem, double opt, double tile)
{
    return model_total(e, n, t_elem, pen(threads_of(e), opt, 0.15), n, blocks_of(e) * tile);
}

static double elementwise(const sim_exec *e, double n, double t_elem, double opt)
{
    return model(e, n, t_elem, pen(threads_of(e), opt, 0.15), n);
}

/* saxpy(int n, float a, const float *x, float *y): grid-stride, y = a*x + y in place. */
static void saxpy_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 0);
    float a = simk_f32(e, 1);
    int64_t stride = (int64_t)e->grid[0] * e->block[0];
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        for (int64_t i = (int64_t)e->bid[0] * e->block[0] + tx; i < n && !e->fault; i += stride) {
            float *y = simk_fp(e, 3, i);
            *y = a * *simk_fp(e, 2, i) + *y;
        }
    }
}
static double saxpy_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 0), 0.01, 256);
}

/* vecadd(const float *a, const float *b, float *out, int n): one element per thread. */
static void vecadd_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 3);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 2, i) = *simk_fp(e, 0, i) + *simk_fp(e, 1, i);
    }
}
static double vecadd_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 3), 0.012, 128);
}

/* block_sum(const float *in, float *out, int n): block b sums blockDim.x elements
 * starting at b*256 (a hard-coded 256), in thread order, into out[b]. Right only for
 * blockDim.x == 256 with grid cdiv(n, 256); its cost model prefers 512 (wrong). */
static void block_sum_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    int64_t start = (int64_t)e->bid[0] * 256;
    if (start >= n) return;
    float s = 0.0f;
    for (unsigned tx = 0; tx < e->block[0]; tx++)
        if (start + tx < n) s += *simk_fp(e, 0, start + tx);
    *simk_fp(e, 1, e->bid[0]) = s;
}
static double block_sum_cost(const sim_exec *e)
{
    return tiled(e, simk_i32(e, 2), 0.01, 512, 256);
}

/* atomic_sum(const float *in, float *out, int n): grid-stride, out[0] += in[i] for
 * every i, thread after thread: the float sum's order (so its rounding) follows the
 * configuration. Accumulates into out[0]: needs reset_to_zero when retuned. */
static void atomic_sum_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    int64_t stride = (int64_t)e->grid[0] * e->block[0];
    float *out = simk_fp(e, 1, 0);
    /* SIMCUDA_ATOMIC_REVERSED_IN_HELPER=1: in the trial helper the adds come in the other
     * order (every element once, as the grid-stride loop adds them), as float atomics
     * order differently from one run to the next on a GPU */
    static int reversed = -1;
    if (reversed < 0) {
        const char *v = getenv("SIMCUDA_ATOMIC_REVERSED_IN_HELPER");
        reversed = v && *v == '1' && !strcmp(program_invocation_short_name, "xmatune-trial");
    }
    if (reversed) {
        if (e->bid[0] || e->bid[1] || e->bid[2]) return; /* the first block adds them all */
        for (int64_t i = (int64_t)n - 1; i >= 0 && !e->fault; i--)
            *out += *simk_fp(e, 0, i);
        return;
    }
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        for (int64_t i = (int64_t)e->bid[0] * e->block[0] + tx; i < n && !e->fault; i += stride)
            *out += *simk_fp(e, 0, i);
    }
}
static double atomic_sum_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.02, 512);
}

/* scale2d(float *a, int w, int h, float s): a[y*w+x] *= s over a 2-D grid of 2-D
 * blocks, in place. 128 registers per thread: at most 512 threads per block. Its cost
 * prefers 256 threads shaped 32 x 8. */
static void scale2d_run(sim_exec *e)
{
    int32_t w = simk_i32(e, 1), h = simk_i32(e, 2);
    float s = simk_f32(e, 3);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)tz;
        int64_t x = (int64_t)e->bid[0] * e->block[0] + tx;
        int64_t y = (int64_t)e->bid[1] * e->block[1] + ty;
        if (x < w && y < h) *simk_fp(e, 0, y * w + x) *= s;
    }
}
static double scale2d_cost(const sim_exec *e)
{
    double w = simk_i32(e, 1), h = simk_i32(e, 2);
    double cx = (double)e->grid[0] * e->block[0], cy = (double)e->grid[1] * e->block[1];
    double useful = (cx < w ? cx : w) * (cy < h ? cy : h);
    double shape = pen(threads_of(e), 256, 0.15) + 0.1 * (pen(e->block[0], 32, 1.0) - 1.0);
    return model(e, w * h, 0.01, shape, useful);
}

/* tile_copy<128>(const float *in, float *out, int n): block b copies the 128
 * elements from b*128, its threads striding by blockDim.x. __launch_bounds__(128). */
static void tile_copy_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        for (int64_t j = tx; j < 128; j += e->block[0]) {
            int64_t i = (int64_t)e->bid[0] * 128 + j;
            if (i < n) *simk_fp(e, 1, i) = *simk_fp(e, 0, i);
        }
    }
}
static double tile_copy_cost(const sim_exec *e)
{
    return tiled(e, simk_i32(e, 2), 0.008, 64, 128);
}

/* struct_axpy(Params p, const float *x, float *y), Params {int n; float alpha; int
 * stride;} by value (12 bytes): y[i*stride] += alpha * x[i*stride], i < n, in place. */
static void struct_axpy_run(sim_exec *e)
{
    int32_t n, stride;
    float alpha;
    memcpy(&n, e->params + e->k->off[0], 4);
    memcpy(&alpha, e->params + e->k->off[0] + 4, 4);
    memcpy(&stride, e->params + e->k->off[0] + 8, 4);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 2, i * stride) += alpha * *simk_fp(e, 1, i * stride);
    }
}
static double struct_axpy_cost(const sim_exec *e)
{
    int32_t n;
    memcpy(&n, e->params + e->k->off[0], 4);
    return elementwise(e, n, 0.01, 128);
}

/* smem_rev(const float *in, float *out, int n): each block reverses its blockDim.x
 * elements through dynamic shared memory (blockDim.x * 4 bytes; less faults). The
 * result depends on blockDim.x by construction. Cost grows with shared bytes. */
static void smem_rev_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    unsigned bx = e->block[0];
    if ((size_t)e->dyn_shared < (size_t)bx * 4) {
        e->fault = 1;
        return;
    }
    int64_t base = (int64_t)e->bid[0] * bx;
    if (base >= n) return;
    int64_t valid = n - base < (int64_t)bx ? n - base : (int64_t)bx;
    float *s = (float *)(void *)(e->smem + e->k->static_shared);
    for (int64_t t = 0; t < valid; t++)
        s[t] = *simk_fp(e, 0, base + t);
    for (int64_t t = 0; t < valid; t++)
        *simk_fp(e, 1, base + t) = s[valid - 1 - t];
}
static double smem_rev_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.01, 256) * (1.0 + 0.5 * e->dyn_shared / 49152.0);
}

/* triton_poi_fused_add_0(in0, in1, out, i32 xnumel): Triton-style, XBLOCK = 1024
 * baked in: block b covers [b*1024, b*1024+1024), its threads (num_warps*32 of them)
 * striding by blockDim.x. Right for any block size with grid cdiv(xnumel, 1024). */
static void triton_add_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 3);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        for (int64_t j = tx; j < 1024; j += e->block[0]) {
            int64_t i = (int64_t)e->bid[0] * 1024 + j;
            if (i < n) *simk_fp(e, 2, i) = *simk_fp(e, 0, i) + *simk_fp(e, 1, i);
        }
    }
}
static double triton_add_cost(const sim_exec *e)
{
    return tiled(e, simk_i32(e, 3), 0.01, 128, 1024);
}

/* stamp(float *out, int n): grid-stride, out[i] = the number of stamp launches so far, so
 * no two runs agree: a kernel whose result is not a function of its inputs. */
static unsigned long stamp_runs;
static void stamp_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1);
    if (e->bid[0] == 0 && e->bid[1] == 0 && e->bid[2] == 0) stamp_runs++;
    int64_t stride = (int64_t)e->grid[0] * e->block[0];
    for (unsigned tx = 0; tx < e->block[0]; tx++)
        for (int64_t i = (int64_t)e->bid[0] * e->block[0] + tx; i < n && !e->fault; i += stride)
            *simk_fp(e, 0, i) = (float)stamp_runs;
}
static double stamp_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 1), 0.01, 256);
}

/* fill_m1(int* out, int n): out[i] = -1 (every byte 0xFF, the shim's first poison) for
 * i = blockIdx.x * blockDim.x + threadIdx.x < n: one thread per element, so a config with
 * fewer threads than n leaves the rest unwritten. */
static void fill_m1_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1), m1 = -1;
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) memcpy(simk_fp(e, 0, i), &m1, 4);
    }
}
static double fill_m1_cost(const sim_exec *e)
{
    return elementwise(e, (double)e->grid[0] * e->block[0], 0.01, 256);
}

/* ref_accum(float& y, int n) and cast_accum<(char)1>(float* y, int n, long cookie):
 * y[i] += 1 for i < n, IN PLACE; the cookie is not read. Names the shim must read through
 * its signature reader: a reference is a pointer, "(char)1" is no parameter list. */
static void accum_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 0, i) += 1.0f;
    }
}
static double accum_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 1), 0.01, 256);
}

/* pair_accum(Pair p, float* y), Pair {int n; float add;} (8 bytes by value): y[i] += p.add
 * for i < p.n, IN PLACE. A struct no bigger than a pointer, which discover must not take
 * for a scalar. */
static void pair_accum_run(sim_exec *e)
{
    int32_t n;
    float add;
    memcpy(&n, e->params + e->k->off[0], 4);
    memcpy(&add, e->params + e->k->off[0] + 4, 4);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 1, i) += add;
    }
}
static double pair_accum_cost(const sim_exec *e)
{
    int32_t n;
    memcpy(&n, e->params + e->k->off[0], 4);
    return elementwise(e, n, 0.01, 256);
}

/* pack_axpy(Pack p), Pack {const float *x; float *y; int n; float a;} (24 bytes by value,
 * its pointers inside): y[i] += p.a * p.x[i] for i < p.n, IN PLACE. The pointers are
 * resolved here as the driver resolves a launch's memory (in slots 6 and 7): one into
 * memory this process does not have faults (ILLEGAL_ADDRESS), as in a trial helper that
 * did not stage it. */
static void pack_axpy_run(sim_exec *e)
{
    uint64_t x, y;
    int32_t n;
    float a;
    memcpy(&x, e->params + e->k->off[0], 8);
    memcpy(&y, e->params + e->k->off[0] + 8, 8);
    memcpy(&n, e->params + e->k->off[0] + 16, 4);
    memcpy(&a, e->params + e->k->off[0] + 20, 4);
    e->base[6] = (unsigned char *)(uintptr_t)x;
    e->avail[6] = sim_alloc_avail_locked((uintptr_t)x);
    e->base[7] = (unsigned char *)(uintptr_t)y;
    e->avail[7] = sim_alloc_avail_locked((uintptr_t)y);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 7, i) += a * *simk_fp(e, 6, i);
    }
}
static double pack_axpy_cost(const sim_exec *e)
{
    int32_t n;
    memcpy(&n, e->params + e->k->off[0] + 16, 4);
    return elementwise(e, n, 0.01, 256);
}

/* chunk_scale(float *y, int n, float s, int items_per_thread): thread g scales the
 * items_per_thread elements from g*items_per_thread, in place. Right for any config
 * whose grid*block*items covers n. Cost prefers block 256 and 4 items per thread. */
static void chunk_scale_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1), items = simk_i32(e, 3);
    float s = simk_f32(e, 2);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t g = (int64_t)e->bid[0] * e->block[0] + tx;
        for (int64_t k = 0; k < items; k++) {
            int64_t i = g * items + k;
            if (i < n) *simk_fp(e, 0, i) *= s;
        }
    }
}
static double chunk_scale_cost(const sim_exec *e)
{
    double n = simk_i32(e, 1), items = simk_i32(e, 3);
    if (items < 1) items = 1;
    double shape = pen(threads_of(e), 256, 0.15) * pen(items, 4, 0.1);
    /* each thread counts as `items` threads' worth, so the best items_per_thread (4)
     * does not shift with n */
    return model_total(e, n, 0.01, shape, n, blocks_of(e) * threads_of(e) * items);
}

/* own_block(float *out, int n, int own): written for blockDim.x == own only: with it,
 * out[i] = i for every i < n (grid cdiv(n, own)); with any other block size each
 * thread writes before out's start, an illegal address (a sticky fault): the kernel
 * that faults in every configuration but the program's own. */
static void own_block_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1), own = simk_i32(e, 2);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if ((int64_t)e->block[0] != own)
            *simk_fp(e, 0, -1 - i) = (float)i;
        else if (i < n)
            *simk_fp(e, 0, i) = (float)i;
        if (e->fault) return;
    }
}
static double own_block_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 1), 0.01, 256);
}

/* spin(float *out, int n, int hang_block): grid-stride out[i] = 1; with blockDim.x ==
 * hang_block it does the same and then never finishes: the device stays busy until the
 * process is killed (queries say NOT_READY, synchronizing calls block forever). */
static void spin_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1);
    int64_t stride = (int64_t)e->grid[0] * e->block[0];
    for (unsigned tx = 0; tx < e->block[0]; tx++)
        for (int64_t i = (int64_t)e->bid[0] * e->block[0] + tx; i < n && !e->fault; i += stride)
            *simk_fp(e, 0, i) = 1.0f;
    if ((int64_t)e->block[0] == simk_i32(e, 2)) e->hang = 1;
}
static double spin_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 1), 0.01, 256);
}

/* scale_nocheck(float *y, int n): y[i] = 2 * y[i] + 1 for every thread i of the launch, in
 * place, with no bounds check (n is not read): right only when grid.x * block.x is n, as
 * the program launches it; more threads write past y's end (an illegal address once past
 * its allocation), fewer leave elements unwritten. A kernel without a bounds check. */
static void scale_nocheck_run(sim_exec *e)
{
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        float *y = simk_fp(e, 0, i);
        *y = 2.0f * *y + 1.0f;
        if (e->fault) return;
    }
}
static double scale_nocheck_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 1), 0.01, 256);
}

/* coef_scale(float *y, const float *x, int n): y[i] = x[i] * sim_coef, its module's
 * global (1.0 at load; a program sets it like a __constant__ with cudaMemcpyToSymbol):
 * what a helper that did not stage the module's globals gets wrong. */
static void coef_scale_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    float c = e->coef ? *e->coef : 1.0f;
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 0, i) = *simk_fp(e, 1, i) * c;
        if (e->fault) return;
    }
}
static double coef_scale_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.01, 256);
}

/* tex_read(float *y, unsigned long long tex, int n): y[i] = i + (tex & 0xff), as if it
 * read a texture object: a launch whose argument is a texture or surface object. */
static void tex_read_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    uint64_t tex;
    memcpy(&tex, e->params + e->k->off[1], 8);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 0, i) = (float)i + (float)(tex & 0xff);
        if (e->fault) return;
    }
}
static double tex_read_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.01, 256);
}

/* scale_n64(float *y, unsigned long long n, float a), extern "C" (a CuPy-style name, no
 * types): y[i] *= a IN PLACE for i < n, one thread per element, the size 64 bits wide --
 * an untyped 8-byte argument that is not a pointer. */
static void scale_n64_run(sim_exec *e)
{
    uint64_t n;
    memcpy(&n, e->params + e->k->off[1], 8);
    float a = simk_f32(e, 2);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        uint64_t i = (uint64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 0, (int64_t)i) *= a;
        if (e->fault) return;
    }
}
static double scale_n64_cost(const sim_exec *e)
{
    uint64_t n;
    memcpy(&n, e->params + e->k->off[1], 8);
    return elementwise(e, (double)n, 0.01, 256);
}

/* row_max / row_sum(const float *x, float *out, int ncols): one block per row, reduced
 * the way a GPU block does it: thread t folds elements t, t+T, t+2T, ... of row
 * blockIdx.x (T = blockDim.x) in float, then the T partial results are folded pairwise,
 * halving (a tree in its 4 KiB of static shared memory), into out[blockIdx.x]. A max is
 * exact whatever T is; a sum's rounding follows T (bitwise the same for a fixed T, in the
 * last bits different for another). The grid must be the number of rows: a block past
 * them reads and writes past the buffers (ILLEGAL_ADDRESS), too few leave rows unwritten. */
static void row_reduce(sim_exec *e, int take_max)
{
    int32_t ncols = simk_i32(e, 2);
    unsigned nt = e->block[0];
    float *part = (float *)(void *)e->smem;
    int64_t row = (int64_t)e->bid[0] * ncols;
    for (unsigned t = 0; t < nt; t++) {
        float acc = take_max ? -INFINITY : 0.0f;
        for (int64_t j = t; j < ncols && !e->fault; j += nt) {
            float v = *simk_fp(e, 0, row + j);
            acc = take_max ? fmaxf(acc, v) : acc + v;
        }
        part[t] = acc;
    }
    unsigned width = 1;
    while (width < nt)
        width <<= 1;
    for (unsigned s = width / 2; s > 0; s >>= 1)
        for (unsigned t = 0; t < s && t + s < nt; t++)
            part[t] = take_max ? fmaxf(part[t], part[t + s]) : part[t] + part[t + s];
    *simk_fp(e, 1, e->bid[0]) = part[0];
}
static void row_max_run(sim_exec *e)
{
    row_reduce(e, 1);
}
static void row_sum_run(sim_exec *e)
{
    row_reduce(e, 0);
}
/* A block counts as 256 threads' worth of parallel work whatever its size (as the tiled
 * kernels do): with the grid fixed at the rows, the block only moves the shape term, best
 * at 256. */
static double row_cost(const sim_exec *e)
{
    return tiled(e, blocks_of(e) * simk_i32(e, 2), 0.01, 256, 256);
}

/* step_scale(float *y, const float *x, int n, int step): y[i] = x[i] * 2 + step for
 * i < n, one thread per element. A program passes its call counter as step, so under
 * XMATUNE_AUTO every launch is a new key. */
static void step_scale_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2), step = simk_i32(e, 3);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i < n) *simk_fp(e, 0, i) = *simk_fp(e, 1, i) * 2.0f + (float)step;
        if (e->fault) return;
    }
}
static double step_scale_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.01, 256);
}

/* hop(int *p, const int *next, int n): p[i] = next[p[i]] for i < n, one thread per
 * element, IN PLACE: p holds indices into next, so from poisoned p (all bytes 0xFF, or the
 * complement of the result: negative) every thread reads before next: ILLEGAL_ADDRESS
 * (sticky). A kernel that faults unless its outputs updated in place are restored. */
static void hop_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i >= n) continue;
        int32_t at, to;
        memcpy(&at, simk_fp(e, 0, i), 4);
        memcpy(&to, simk_fp(e, 1, at), 4);
        if (e->fault) return;
        memcpy(simk_fp(e, 0, i), &to, 4);
    }
}
static double hop_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.01, 256);
}

/* drain(int *c, int n): c[i] = c[i] - 1 for i < n, one thread per element, IN PLACE: each
 * thread counts c[i] down to zero first, so a negative c[i] (poisoned: all bytes 0xFF, the
 * complement of a result, or a count run below zero by runs on what earlier runs left)
 * never reaches zero and the launch never finishes (the device stays busy until the
 * process is killed, as spin's hanging config). A kernel that hangs unless its outputs
 * updated in place hold the program's data. */
static void drain_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 1);
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i >= n) continue;
        int32_t v;
        memcpy(&v, simk_fp(e, 0, i), 4);
        if (e->fault) return;
        if (v < 0) {
            e->hang = 1;
            return;
        }
        v -= 1;
        memcpy(simk_fp(e, 0, i), &v, 4);
    }
}
static double drain_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 1), 0.01, 256);
}

/* mark(int *p, int *seen, int n): for i < n, one thread per element, seen[(unsigned)p[i] % n]
 * = 1 and p[i] = ((unsigned)p[i] + 1) % (n / 2), p IN PLACE: from p in [0, n/2) it writes
 * only seen's first half; from poisoned p (0xFF bytes: -1) it writes seen[n - 1] when n is
 * a power of two, a place its runs from the program's data never write. A kernel whose
 * written places follow what its outputs updated in place hold. */
static void mark_run(sim_exec *e)
{
    int32_t n = simk_i32(e, 2);
    if (n < 2) return;
    FOR_THREADS(e, tx, ty, tz)
    {
        (void)ty, (void)tz;
        int64_t i = (int64_t)e->bid[0] * e->block[0] + tx;
        if (i >= n) continue;
        uint32_t v;
        int32_t one = 1, next;
        memcpy(&v, simk_fp(e, 0, i), 4);
        if (e->fault) return;
        memcpy(simk_fp(e, 1, (int64_t)(v % (uint32_t)n)), &one, 4);
        next = (int32_t)((v + 1u) % (uint32_t)(n / 2));
        memcpy(simk_fp(e, 0, i), &next, 4);
        if (e->fault) return;
    }
}
static double mark_cost(const sim_exec *e)
{
    return elementwise(e, simk_i32(e, 2), 0.01, 256);
}

#define I32                                                                                        \
    {                                                                                              \
        SIMK_I32, 4, 4                                                                             \
    }
#define F32                                                                                        \
    {                                                                                              \
        SIMK_F32, 4, 4                                                                             \
    }
#define PTR                                                                                        \
    {                                                                                              \
        SIMK_PTR, 8, 8                                                                             \
    }
#define U64                                                                                        \
    {                                                                                              \
        SIMK_BYTES, 8, 8                                                                           \
    }

static simk_def g_kernels[] = {
    {"_Z5saxpyifPKfPf",
     "saxpy(int, float, const float*, float*)",
     4,
     {I32, F32, PTR, PTR},
     1024,
     32,
     0,
     saxpy_run,
     saxpy_cost,
     {0},
     0},
    {"vecadd",
     "vecadd(const float*, const float*, float*, int)",
     4,
     {PTR, PTR, PTR, I32},
     1024,
     24,
     0,
     vecadd_run,
     vecadd_cost,
     {0},
     0},
    {"_Z9block_sumPKfPfi",
     "block_sum(const float*, float*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     32,
     1024,
     block_sum_run,
     block_sum_cost,
     {0},
     0},
    {"_Z10atomic_sumPKfPfi",
     "atomic_sum(const float*, float*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     24,
     0,
     atomic_sum_run,
     atomic_sum_cost,
     {0},
     0},
    {"_Z7scale2dPfiif",
     "scale2d(float*, int, int, float)",
     4,
     {PTR, I32, I32, F32},
     1024,
     128,
     0,
     scale2d_run,
     scale2d_cost,
     {0},
     0},
    {"_Z9tile_copyILi128EEvPKfPfi",
     "void tile_copy<128>(const float*, float*, int)",
     3,
     {PTR, PTR, I32},
     128,
     32,
     0,
     tile_copy_run,
     tile_copy_cost,
     {0},
     0},
    {"_Z11struct_axpy6ParamsPKfPf",
     "struct_axpy(Params, const float*, float*)",
     3,
     {{SIMK_BYTES, 12, 4}, PTR, PTR},
     1024,
     32,
     0,
     struct_axpy_run,
     struct_axpy_cost,
     {0},
     0},
    {"_Z8smem_revPKfPfi",
     "smem_rev(const float*, float*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     32,
     0,
     smem_rev_run,
     smem_rev_cost,
     {0},
     0},
    {"triton_poi_fused_add_0",
     "triton_poi_fused_add_0(ptr, ptr, ptr, i32)",
     4,
     {PTR, PTR, PTR, I32},
     1024,
     40,
     0,
     triton_add_run,
     triton_add_cost,
     {0},
     0},
    {"_Z11chunk_scalePfifi",
     "chunk_scale(float*, int, float, int)",
     4,
     {PTR, I32, F32, I32},
     1024,
     32,
     0,
     chunk_scale_run,
     chunk_scale_cost,
     {0},
     0},
    {"_Z3hopPiPKii",
     "hop(int*, const int*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     32,
     0,
     hop_run,
     hop_cost,
     {0},
     0},
    {"_Z5drainPii", "drain(int*, int)", 2, {PTR, I32}, 1024, 16, 0, drain_run, drain_cost, {0}, 0},
    {"_Z4markPiS_i",
     "mark(int*, int*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     16,
     0,
     mark_run,
     mark_cost,
     {0},
     0},
    {"_Z5stampPfi",
     "stamp(float*, int)",
     2,
     {PTR, I32},
     1024,
     16,
     0,
     stamp_run,
     stamp_cost,
     {0},
     0},
    {"_Z7fill_m1Pii",
     "fill_m1(int*, int)",
     2,
     {PTR, I32},
     1024,
     16,
     0,
     fill_m1_run,
     fill_m1_cost,
     {0},
     0},
    {"_Z9own_blockPfii",
     "own_block(float*, int, int)",
     3,
     {PTR, I32, I32},
     1024,
     16,
     0,
     own_block_run,
     own_block_cost,
     {0},
     0},
    {"_Z13scale_nocheckPfi",
     "scale_nocheck(float*, int)",
     2,
     {PTR, I32},
     1024,
     16,
     0,
     scale_nocheck_run,
     scale_nocheck_cost,
     {0},
     0},
    {"_Z10coef_scalePfPKfi",
     "coef_scale(float*, float const*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     16,
     0,
     coef_scale_run,
     coef_scale_cost,
     {0},
     0},
    {"_Z8tex_readPfyi",
     "tex_read(float*, unsigned long long, int)",
     3,
     {PTR, U64, I32},
     1024,
     16,
     0,
     tex_read_run,
     tex_read_cost,
     {0},
     0},
    {"_Z4spinPfii",
     "spin(float*, int, int)",
     3,
     {PTR, I32, I32},
     1024,
     16,
     0,
     spin_run,
     spin_cost,
     {0},
     0},
    {"_Z9ref_accumRfi",
     "ref_accum(float&, int)",
     2,
     {PTR, I32},
     1024,
     16,
     0,
     accum_run,
     accum_cost,
     {0},
     0},
    {"_Z10cast_accumILc1EEvPfil",
     "void cast_accum<(char)1>(float*, int, long)",
     3,
     {PTR, I32, U64},
     1024,
     16,
     0,
     accum_run,
     accum_cost,
     {0},
     0},
    {"_Z10pair_accum4PairPf",
     "pair_accum(Pair, float*)",
     2,
     {{SIMK_BYTES, 8, 4}, PTR},
     1024,
     16,
     0,
     pair_accum_run,
     pair_accum_cost,
     {0},
     0},
    {"_Z9pack_axpy4Pack",
     "pack_axpy(Pack)",
     1,
     {{SIMK_BYTES, 24, 8}},
     1024,
     16,
     0,
     pack_axpy_run,
     pack_axpy_cost,
     {0},
     0},
    {"scale_n64",
     "scale_n64(float*, unsigned long long, float)",
     3,
     {PTR, U64, F32},
     1024,
     16,
     0,
     scale_n64_run,
     scale_n64_cost,
     {0},
     0},
    {"_Z7row_maxPKfPfi",
     "row_max(const float*, float*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     32,
     4096,
     row_max_run,
     row_cost,
     {0},
     0},
    {"_Z7row_sumPKfPfi",
     "row_sum(const float*, float*, int)",
     3,
     {PTR, PTR, I32},
     1024,
     32,
     4096,
     row_sum_run,
     row_cost,
     {0},
     0},
    {"_Z10step_scalePfPKfii",
     "step_scale(float*, const float*, int, int)",
     4,
     {PTR, PTR, I32, I32},
     1024,
     16,
     0,
     step_scale_run,
     step_scale_cost,
     {0},
     0},
    /* the shim's own verification kernels (sim_xmtcheck.c) */
    {"xmt_cmp_bits",
     "xmt_cmp_bits(ptr, ptr, u64, u32, ptr, ptr)",
     6,
     {PTR, PTR, U64, I32, PTR, PTR},
     1024,
     16,
     0,
     simx_cmp_bits_run,
     simx_cost,
     {0},
     0},
    {"xmt_cmp_tol",
     "xmt_cmp_tol(ptr, ptr, u64, u32, f64, f64, ptr, ptr)",
     8,
     {PTR, PTR, U64, I32, U64, U64, PTR, PTR},
     1024,
     16,
     0,
     simx_cmp_tol_run,
     simx_cost,
     {0},
     0},
    {"xmt_changed",
     "xmt_changed(ptr, ptr, u64, u32, ptr, ptr, ptr)",
     7,
     {PTR, PTR, U64, I32, PTR, PTR, PTR},
     1024,
     16,
     0,
     simx_changed_run,
     simx_cost,
     {0},
     0},
    {"xmt_absmax",
     "xmt_absmax(ptr, u64, u32, ptr)",
     4,
     {PTR, U64, I32, PTR},
     1024,
     16,
     0,
     simx_absmax_run,
     simx_absmax_cost,
     {0},
     0},
    {"xmt_not",
     "xmt_not(ptr, ptr, u64)",
     3,
     {PTR, PTR, U64},
     1024,
     16,
     0,
     simx_not_run,
     simx_cost,
     {0},
     0},
    {"xmt_spin", "xmt_spin(u64)", 1, {U64}, 1024, 16, 0, simx_spin_run, simx_spin_cost, {0}, 0},
    {"xmt_seq",
     "xmt_seq(ptr, u64, u64)",
     3,
     {PTR, U64, U64},
     1024,
     16,
     0,
     simx_seq_run,
     simx_seq_cost,
     {0},
     0},
};

#define NKERNELS ((int)(sizeof g_kernels / sizeof g_kernels[0]))
_Static_assert(sizeof g_kernels / sizeof g_kernels[0] <= SIMK_MAX, "raise SIMK_MAX");

static pthread_once_t g_layout_once = PTHREAD_ONCE_INIT;

/* Packs each kernel's parameters the way a compiler lays out the parameter buffer:
 * each at the next multiple of its alignment. */
static void layout_once(void)
{
    for (int k = 0; k < NKERNELS; k++) {
        unsigned off = 0;
        for (int i = 0; i < g_kernels[k].nparams; i++) {
            unsigned a = g_kernels[k].p[i].align;
            off = (off + a - 1) / a * a;
            g_kernels[k].off[i] = off;
            off += g_kernels[k].p[i].size;
        }
        g_kernels[k].param_bytes = off;
    }
}

void simk_layout(void)
{
    pthread_once(&g_layout_once, layout_once);
}
int simk_count(void)
{
    return NKERNELS;
}
const simk_def *simk_get(int i)
{
    simk_layout();
    return i >= 0 && i < NKERNELS ? &g_kernels[i] : NULL;
}
const simk_def *simk_find(const char *name)
{
    simk_layout();
    for (int k = 0; name && k < NKERNELS; k++)
        if (strcmp(g_kernels[k].name, name) == 0) return &g_kernels[k];
    return NULL;
}
