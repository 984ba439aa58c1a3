/* test_simcuda.c: Check unit tests of the simulated driver (libcuda.so.1 in
 * tests/simdriver). Every integration test trusts what these pin down: the
 * cuGetProcAddress mapping, each kernel's results against a CPU reference (and the
 * configs where they are wrong on purpose), the cost model's optima and the event
 * clock, fault injection, capture, handle kinds and reuse, packed arguments, launch
 * validation, and launches from many threads at once. Each test runs in its own
 * forked process (Check's default), so driver state starts fresh. */
#include <check.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_funcs.h"
#include "simcuda.h"
#include "simtest.h"

static CUcontext g_ctx;
static CUmodule g_mod;

static void setup(void)
{
    CHECK(cuInit(0));
    CUdevice d;
    CHECK(cuDeviceGet(&d, 0));
    CHECK(cuDevicePrimaryCtxRetain(&g_ctx, d));
    CHECK(cuCtxSetCurrent(g_ctx));
    CHECK(cuModuleLoad(&g_mod, "any.cubin"));
}
static void teardown(void) {}

static void *sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    ck_assert_msg(p != NULL, "%s not exported", name);
    return p;
}

static CUfunction fn(const char *name)
{
    CUfunction f;
    CHECK(cuModuleGetFunction(&f, g_mod, name));
    return f;
}

/* Device buffer of n floats holding h (or 0xA5 garbage when h is NULL). */
static CUdeviceptr dbuf(const float *h, size_t n)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, n * 4));
    if (h) CHECK(cuMemcpyHtoD(d, h, n * 4));
    return d;
}
static void fetch(float *h, CUdeviceptr d, size_t n)
{
    CHECK(cuMemcpyDtoH(h, d, n * 4));
}

static float *ramp(size_t n, float scale)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = (float)((i * 7) % 101) * scale + 0.25f;
    return h;
}

static CUresult launch1(CUfunction f, unsigned grid, unsigned block, unsigned shared, void **args)
{
    return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, NULL, args, NULL);
}

static unsigned cdiv(unsigned a, unsigned b)
{
    return (a + b - 1) / b;
}

/* ---------------------------------------------------------------- getproc */

static void *getproc(const char *name, int ver, cuuint64_t flags, CUresult *rc,
                     CUdriverProcAddressQueryResult *st)
{
    void *p = (void *)0x1;
    *rc = cuGetProcAddress_v2(name, &p, ver, flags, st);
    return p;
}

START_TEST(getproc_variants)
{
    CUresult rc;
    CUdriverProcAddressQueryResult st;
    ck_assert_ptr_eq(getproc("cuGetProcAddress", 12000, 0, &rc, &st), sym("cuGetProcAddress_v2"));
    ck_assert_ptr_eq(getproc("cuGetProcAddress", 13000, 0, &rc, &st), sym("cuGetProcAddress_v2"));
    ck_assert_ptr_eq(getproc("cuGetProcAddress", 11030, 0, &rc, &st), sym("cuGetProcAddress"));
    ck_assert_ptr_eq(getproc("cuGetProcAddress", 11999, 0, &rc, &st), sym("cuGetProcAddress"));
    ck_assert_ptr_null(getproc("cuGetProcAddress", 11020, 0, &rc, &st));
    ck_assert_int_eq(rc, CUDA_ERROR_NOT_FOUND);
    ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

    for (cuuint64_t fl = 0; fl <= 1; fl++) {
        ck_assert_ptr_eq(getproc("cuLaunchKernel", 12000, fl, &rc, &st), sym("cuLaunchKernel"));
        ck_assert_ptr_eq(getproc("cuLaunchKernelEx", 12000, fl, &rc, &st), sym("cuLaunchKernelEx"));
        ck_assert_ptr_eq(getproc("cuMemcpyAsync", 12000, fl, &rc, &st), sym("cuMemcpyAsync"));
    }
    ck_assert_ptr_eq(getproc("cuLaunchKernel", 12000, 2, &rc, &st), sym("cuLaunchKernel_ptsz"));
    ck_assert_ptr_eq(getproc("cuLaunchKernelEx", 12000, 2, &rc, &st), sym("cuLaunchKernelEx_ptsz"));
    ck_assert_ptr_eq(getproc("cuLaunchCooperativeKernel", 12000, 2, &rc, &st),
                     sym("cuLaunchCooperativeKernel_ptsz"));
    ck_assert_ptr_eq(getproc("cuMemcpyAsync", 12000, 2, &rc, &st), sym("cuMemcpyAsync_ptsz"));
    ck_assert_ptr_eq(getproc("cuMemcpyHtoD", 12000, 2, &rc, &st), sym("cuMemcpyHtoD_v2_ptds"));
    ck_assert_ptr_eq(getproc("cuGraphLaunch", 12000, 2, &rc, &st), sym("cuGraphLaunch_ptsz"));
    /* no per-thread variant: the plain one */
    ck_assert_ptr_eq(getproc("cuMemAlloc", 12000, 2, &rc, &st), sym("cuMemAlloc_v2"));
    ck_assert_ptr_null(getproc("cuLaunchKernelEx", 11050, 0, &rc, &st));
    ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    ck_assert_ptr_eq(getproc("cuMemAlloc", 3020, 0, &rc, &st), sym("cuMemAlloc_v2"));
    ck_assert_ptr_eq(getproc("cuEventElapsedTime", 12000, 0, &rc, &st), sym("cuEventElapsedTime"));
    ck_assert_ptr_eq(getproc("cuEventElapsedTime", 12080, 0, &rc, &st),
                     sym("cuEventElapsedTime_v2"));
    ck_assert_ptr_eq(getproc("cuStreamGetCaptureInfo", 12030, 0, &rc, &st),
                     sym("cuStreamGetCaptureInfo_v3"));
    ck_assert_ptr_eq(getproc("cuStreamGetCaptureInfo", 12030, 2, &rc, &st),
                     sym("cuStreamGetCaptureInfo_v3_ptsz"));
    ck_assert_ptr_eq(getproc("cuCtxCreate", 12000, 0, &rc, &st), sym("cuCtxCreate_v2"));
    ck_assert_ptr_eq(getproc("cuCtxCreate", 12050, 0, &rc, &st), sym("cuCtxCreate_v4"));
    ck_assert_ptr_eq(getproc("cuGraphInstantiate", 12000, 0, &rc, &st),
                     sym("cuGraphInstantiateWithFlags"));
    ck_assert_int_eq(rc, CUDA_SUCCESS);
    ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);

    ck_assert_ptr_null(getproc("cuNoSuchThing", 12000, 0, &rc, &st));
    ck_assert_int_eq(rc, CUDA_ERROR_NOT_FOUND);
    ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    getproc("cuLaunchKernel", 12000, 4, &rc, &st);
    ck_assert_int_eq(rc, CUDA_ERROR_INVALID_VALUE);

    /* The 4-argument one, as the runtime gets it at 11030. */
    PFN_cuGetProcAddress_v11030 gp4 =
        (PFN_cuGetProcAddress_v11030)getproc("cuGetProcAddress", 11030, 0, &rc, &st);
    void *p = NULL;
    ck_assert_int_eq(gp4("cuLaunchKernel", &p, 12000, 2), CUDA_SUCCESS);
    ck_assert_ptr_eq(p, sym("cuLaunchKernel_ptsz"));
    ck_assert_int_eq(gp4("cuNope", &p, 12000, 0), CUDA_ERROR_NOT_FOUND);
    ck_assert_ptr_null(p);
}
END_TEST

/* Every row of the table, asked for at its own version and kind, gives its symbol,
 * and that symbol is exported: the table and the exports agree. Works before cuInit. */
START_TEST(getproc_every_row)
{
#define ROW(base, ver, kind, s) {base, ver, #kind[0] == 'P', #s},
    static const struct {
        const char *base;
        int ver, pt;
        const char *sym;
    } rows[] = {SIM_FUNCS(ROW, ROW)};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        void *p = NULL;
        CUdriverProcAddressQueryResult st;
        CUresult rc = cuGetProcAddress_v2(
            rows[i].base, &p, rows[i].ver,
            rows[i].pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, &st);
        ck_assert_msg(rc == CUDA_SUCCESS && p == sym(rows[i].sym), "%s@%d -> %s", rows[i].base,
                      rows[i].ver, rows[i].sym);
    }
}
END_TEST

START_TEST(not_initialized)
{
    int n;
    ck_assert_int_eq(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    int v;
    ck_assert_int_eq(cuDriverGetVersion(&v), CUDA_SUCCESS);
    ck_assert_int_eq(v, 13000);
    setenv("SIMCUDA_DEVICES", "3", 1);
    CHECK(cuInit(0));
    CHECK(cuDeviceGetCount(&n));
    ck_assert_int_eq(n, 3);
    CUdevice d;
    ck_assert_int_eq(cuDeviceGet(&d, 3), CUDA_ERROR_INVALID_DEVICE);
}
END_TEST

START_TEST(device_and_ctx)
{
    char name[64];
    CHECK(cuDeviceGetName(name, sizeof name, 0));
    ck_assert_str_eq(name, "Simulated GPU");
    int v;
    CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    ck_assert_int_eq(v, 132);
    CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    ck_assert_int_eq(v, 9);
    CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0));
    ck_assert_int_eq(v, 232448);
    CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 0));
    ck_assert_int_eq(v, 65535);
    size_t mem;
    CHECK(cuDeviceTotalMem(&mem, 0));
    ck_assert(mem == SIMCUDA_TOTAL_MEM);
    CUcontext c, cur;
    CHECK(cuCtxCreate_v4(&c, NULL, 0, 0));
    CHECK(cuCtxGetCurrent(&cur));
    ck_assert_ptr_eq(c, cur);
    CHECK(cuCtxPopCurrent(&cur));
    ck_assert_ptr_eq(c, cur);
    CHECK(cuCtxGetCurrent(&cur));
    ck_assert_ptr_eq(cur, g_ctx);
    CHECK(cuCtxPushCurrent(c));
    CHECK(cuCtxDestroy(c));
    CHECK(cuCtxGetCurrent(&cur));
    ck_assert_ptr_eq(cur, g_ctx);
    ck_assert_int_eq(cuCtxPushCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
    const char *s;
    CHECK(cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &s));
    ck_assert_str_eq(s, "CUDA_ERROR_INVALID_HANDLE");
    CHECK(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
    ck_assert_str_eq(s, "invalid argument");
}
END_TEST

/* ---------------------------------------------------------------- kernels */

START_TEST(kernel_saxpy)
{
    const int n = 10000;
    const unsigned cfg[][2] = {{cdiv(n, 256), 256}, {cdiv(n, 64), 64}, {7, 1024}, {1, 32}};
    for (size_t c = 0; c < 4; c++) {
        float *x = ramp(n, 1.0f), *y = ramp(n, 0.5f), *out = malloc(n * 4);
        CUdeviceptr dx = dbuf(x, n), dy = dbuf(y, n);
        float a = 1.5f;
        int nn = n;
        void *args[] = {&nn, &a, &dx, &dy};
        CHECK(launch1(fn("_Z5saxpyifPKfPf"), cfg[c][0], cfg[c][1], 0, args));
        fetch(out, dy, n);
        for (int i = 0; i < n; i++)
            ck_assert_float_eq(out[i], a * x[i] + y[i]);
        CHECK(cuMemFree(dx));
        CHECK(cuMemFree(dy));
        free(x), free(y), free(out);
    }
}
END_TEST

START_TEST(kernel_vecadd_and_triton)
{
    const int n = 5000;
    float *a = ramp(n, 1), *b = ramp(n, 3), *out = malloc(n * 4);
    CUdeviceptr da = dbuf(a, n), db = dbuf(b, n), dout = dbuf(NULL, n);
    int nn = n;
    void *args[] = {&da, &db, &dout, &nn};
    CHECK(launch1(fn("vecadd"), cdiv(n, 128), 128, 0, args));
    fetch(out, dout, n);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(out[i], a[i] + b[i]);
    /* a grid too small leaves the tail unwritten (0xA5 garbage stays) */
    CHECK(cuMemsetD32(dout, 0, n));
    CHECK(launch1(fn("vecadd"), 2, 128, 0, args));
    fetch(out, dout, n);
    ck_assert_float_eq(out[255], a[255] + b[255]);
    ck_assert_float_eq(out[256], 0.0f);

    for (unsigned block = 32; block <= 1024; block *= 2) {
        CHECK(cuMemsetD32(dout, 0, n));
        CHECK(launch1(fn("triton_poi_fused_add_0"), cdiv(n, 1024), block, 0, args));
        fetch(out, dout, n);
        for (int i = 0; i < n; i++)
            ck_assert_float_eq(out[i], a[i] + b[i]);
    }
    free(a), free(b), free(out);
}
END_TEST

static void block_sum_ref(const float *in, float *out, int n, unsigned block)
{
    for (int b = 0; (long)b * 256 < n; b++) {
        float s = 0;
        for (unsigned t = 0; t < block; t++)
            if ((long)b * 256 + t < n) s += in[b * 256 + t];
        out[b] = s;
    }
}

START_TEST(kernel_block_sum)
{
    const int n = 4000, nb = (int)cdiv(n, 256);
    float *in = ramp(n, 1), out[64], ref[64];
    CUdeviceptr din = dbuf(in, n), dout = dbuf(NULL, nb);
    int nn = n;
    void *args[] = {&din, &dout, &nn};
    CHECK(launch1(fn("_Z9block_sumPKfPfi"), nb, 256, 0, args));
    fetch(out, dout, nb);
    block_sum_ref(in, ref, n, 256);
    ck_assert_mem_eq(out, ref, nb * 4);
    /* the true per-block sums: right only at 256 */
    float total = 0, got = 0;
    for (int i = 0; i < n; i++)
        total += in[i];
    for (int b = 0; b < nb; b++)
        got += out[b];
    ck_assert_float_eq_tol(got, total, total * 1e-5f);
    for (unsigned block = 128; block <= 512; block *= 4) {
        CHECK(launch1(fn("_Z9block_sumPKfPfi"), nb, block, 0, args));
        fetch(out, dout, nb);
        ck_assert(memcmp(out, ref, nb * 4) != 0);
    }
    free(in);
}
END_TEST

START_TEST(kernel_atomic_sum)
{
    const int n = 100000;
    float *in = ramp(n, 0.01f), out, first = 0;
    double ref = 0;
    for (int i = 0; i < n; i++)
        ref += in[i];
    CUdeviceptr din = dbuf(in, n), dout = dbuf(NULL, 1);
    int nn = n, differs = 0;
    void *args[] = {&din, &dout, &nn};
    const unsigned cfg[][2] = {{cdiv(n, 256), 256}, {64, 512}, {3, 1024}, {1000, 32}};
    for (int c = 0; c < 4; c++) {
        CHECK(cuMemsetD32(dout, 0, 1));
        CHECK(launch1(fn("_Z10atomic_sumPKfPfi"), cfg[c][0], cfg[c][1], 0, args));
        fetch(&out, dout, 1);
        ck_assert_float_eq_tol(out, ref, ref * 1e-3);
        if (c == 0) first = out;
        differs |= out != first;
    }
    ck_assert_msg(differs, "float sums should differ across configs by rounding");
    /* without a reset it accumulates */
    CHECK(launch1(fn("_Z10atomic_sumPKfPfi"), 64, 512, 0, args));
    fetch(&out, dout, 1);
    ck_assert_float_eq_tol(out, 2 * ref, ref * 2e-3);
    free(in);
}
END_TEST

START_TEST(kernel_scale2d)
{
    const int w = 100, h = 37;
    float *a = ramp(w * h, 1), *out = malloc(w * h * 4);
    CUdeviceptr d = dbuf(a, w * h);
    int ww = w, hh = h;
    float s = 3.0f;
    void *args[] = {&d, &ww, &hh, &s};
    CHECK(cuLaunchKernel(fn("_Z7scale2dPfiif"), cdiv(w, 32), cdiv(h, 8), 1, 32, 8, 1, 0, NULL, args,
                         NULL));
    fetch(out, d, w * h);
    for (int i = 0; i < w * h; i++)
        ck_assert_float_eq(out[i], a[i] * 3.0f);
    /* register limit: 128 regs -> 512 threads */
    int maxt;
    CHECK(
        cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn("_Z7scale2dPfiif")));
    ck_assert_int_eq(maxt, 512);
    ck_assert_int_eq(cuLaunchKernel(fn("_Z7scale2dPfiif"), 4, 2, 1, 32, 32, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    free(a), free(out);
}
END_TEST

START_TEST(kernel_tile_copy_struct_chunk)
{
    const int n = 1000;
    float *in = ramp(n, 1), *out = malloc(n * 4);
    CUdeviceptr din = dbuf(in, n), dout = dbuf(NULL, n);
    int nn = n;
    void *args[] = {&din, &dout, &nn};
    CUfunction tc = fn("_Z9tile_copyILi128EEvPKfPfi");
    for (unsigned block = 32; block <= 128; block *= 2) {
        CHECK(cuMemsetD32(dout, 0, n));
        CHECK(launch1(tc, cdiv(n, 128), block, 0, args));
        fetch(out, dout, n);
        ck_assert_mem_eq(out, in, n * 4);
    }
    ck_assert_int_eq(launch1(tc, cdiv(n, 128), 256, 0, args), CUDA_ERROR_INVALID_VALUE);
    int maxt;
    CHECK(cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, tc));
    ck_assert_int_eq(maxt, 128);

    struct {
        int n;
        float alpha;
        int stride;
    } p = {n / 2, 2.0f, 2};
    float *y = ramp(n, 0.5f);
    CUdeviceptr dy = dbuf(y, n);
    void *sargs[] = {&p, &din, &dy};
    CHECK(launch1(fn("_Z11struct_axpy6ParamsPKfPf"), cdiv(n / 2, 128), 128, 0, sargs));
    fetch(out, dy, n);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(out[i], i % 2 == 0 ? y[i] + 2.0f * in[i] : y[i]);

    for (int items = 1; items <= 8; items *= 2) {
        CHECK(cuMemcpyHtoD(dy, y, n * 4));
        float s = 0.5f;
        void *cargs[] = {&dy, &nn, &s, &items};
        CHECK(launch1(fn("_Z11chunk_scalePfifi"), cdiv(n, 64 * items), 64, 0, cargs));
        fetch(out, dy, n);
        for (int i = 0; i < n; i++)
            ck_assert_float_eq(out[i], y[i] * 0.5f);
    }
    free(in), free(out), free(y);
}
END_TEST

START_TEST(kernel_smem_rev)
{
    const int n = 1000;
    float *in = ramp(n, 1), *out = malloc(n * 4);
    CUdeviceptr din = dbuf(in, n), dout = dbuf(NULL, n);
    int nn = n;
    void *args[] = {&din, &dout, &nn};
    CUfunction f = fn("_Z8smem_revPKfPfi");
    CHECK(launch1(f, cdiv(n, 256), 256, 1024, args));
    fetch(out, dout, n);
    for (int i = 0; i < n; i++) {
        int b = i / 256, valid = n - b * 256 < 256 ? n - b * 256 : 256;
        ck_assert_float_eq(out[i], in[b * 256 + (valid - 1 - (i - b * 256))]);
    }
    /* more than 48 KiB needs the opt-in attribute */
    ck_assert_int_eq(launch1(f, cdiv(n, 256), 256, 65536, args), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
    CHECK(launch1(f, cdiv(n, 256), 256, 65536, args));
    ck_assert_int_eq(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 300000),
                     CUDA_ERROR_INVALID_VALUE);
    /* too little shared memory faults (last: the fault is sticky) */
    ck_assert_int_eq(launch1(f, cdiv(n, 256), 256, 512, args), CUDA_ERROR_ILLEGAL_ADDRESS);
    free(in), free(out);
}
END_TEST

/* Rows of varied magnitude (2^-12 to 2^11), so that sums in another order round
 * differently. */
static float *rows_data(int nrows, int ncols)
{
    float *h = malloc((size_t)nrows * ncols * sizeof *h);
    for (int i = 0; i < nrows * ncols; i++)
        h[i] = ldexpf((float)((i * 7919) % 2001 - 1000) / 997.0f, i * 37 % 24 - 12);
    return h;
}

/* row_max: one block per row, exact whatever the block; row_sum: the same launch, its
 * rounding set by the block (deterministic for one block); the grid must be the rows. */
START_TEST(kernel_rows)
{
    const int nrows = 64, ncols = 1000;
    float *x = rows_data(nrows, ncols), ref[64], out[64], first[64];
    for (int r = 0; r < nrows; r++) {
        ref[r] = -INFINITY;
        for (int j = 0; j < ncols; j++)
            ref[r] = fmaxf(ref[r], x[r * ncols + j]);
    }
    CUdeviceptr dx = dbuf(x, (size_t)nrows * ncols), dout = dbuf(NULL, nrows);
    int nc = ncols;
    void *args[] = {&dx, &dout, &nc};
    for (unsigned block = 32; block <= 1024; block *= 2) {
        CHECK(launch1(fn("_Z7row_maxPKfPfi"), nrows, block, 0, args));
        fetch(out, dout, nrows);
        ck_assert_mem_eq(out, ref, sizeof out);
    }
    /* a block of 96 (not a power of two) too */
    CHECK(launch1(fn("_Z7row_maxPKfPfi"), nrows, 96, 0, args));
    fetch(out, dout, nrows);
    ck_assert_mem_eq(out, ref, sizeof out);
    /* too few blocks leave the last rows unwritten */
    CHECK(cuMemsetD32(dout, 0, nrows));
    CHECK(launch1(fn("_Z7row_maxPKfPfi"), nrows - 1, 256, 0, args));
    fetch(out, dout, nrows);
    ck_assert_float_eq(out[nrows - 2], ref[nrows - 2]);
    ck_assert_float_eq(out[nrows - 1], 0.0f);

    double total = 0;
    for (int i = 0; i < nrows * ncols; i++)
        total += fabs(x[i]);
    CHECK(launch1(fn("_Z7row_sumPKfPfi"), nrows, 32, 0, args));
    fetch(first, dout, nrows);
    int differ = 0;
    for (unsigned block = 32; block <= 1024; block *= 2) {
        for (int again = 0; again < 2; again++) {
            CHECK(launch1(fn("_Z7row_sumPKfPfi"), nrows, block, 0, args));
            fetch(out, dout, nrows);
            if (block == 32) ck_assert_mem_eq(out, first, sizeof out); /* bitwise stable */
        }
        for (int r = 0; r < nrows; r++) {
            double s = 0;
            for (int j = 0; j < ncols; j++)
                s += x[r * ncols + j];
            ck_assert_double_eq_tol(out[r], s, total * 1e-6);
        }
        /* every other block rounds some row differently, in the last bits only */
        if (block != 32) {
            ck_assert_msg(memcmp(out, first, sizeof out) != 0, "block %u sums as 32 does", block);
            differ++;
        }
    }
    ck_assert_int_eq(differ, 5);
    /* one block more than the rows reads and writes past the buffers */
    ck_assert_int_eq(launch1(fn("_Z7row_sumPKfPfi"), nrows + 1, 32, 0, args),
                     CUDA_ERROR_ILLEGAL_ADDRESS);
    free(x);
}
END_TEST

/* step_scale: y = x * 2 + step, one thread per element. */
START_TEST(kernel_step_scale)
{
    const int n = 1000;
    float *x = ramp(n, 1), *out = malloc(n * 4);
    CUdeviceptr dx = dbuf(x, n), dy = dbuf(NULL, n);
    int nn = n, step = 7;
    void *args[] = {&dy, &dx, &nn, &step};
    CHECK(launch1(fn("_Z10step_scalePfPKfii"), cdiv(n, 64), 64, 0, args));
    fetch(out, dy, n);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(out[i], x[i] * 2.0f + 7.0f);
    free(x), free(out);
}
END_TEST

START_TEST(illegal_address)
{
    const int n = 1000;
    CUdeviceptr x = dbuf(NULL, n), y = dbuf(NULL, n / 2);
    int nn = n;
    float a = 1;
    void *args[] = {&nn, &a, &x, &y};
    ck_assert_int_eq(launch1(fn("_Z5saxpyifPKfPf"), 4, 256, 0, args), CUDA_ERROR_ILLEGAL_ADDRESS);
}
END_TEST

/* ---------------------------------------------------------------- cost model, events */

static unsigned best_block(const char *name, void **args, int n, unsigned per_block_items)
{
    double best = 1e300;
    unsigned arg = 0;
    for (unsigned b = 32; b <= 1024; b *= 2) {
        unsigned g[3] = {cdiv(n, per_block_items ? per_block_items : b), 1, 1}, bl[3] = {b, 1, 1};
        double c = simcuda_cost_ns(name, g, bl, 0, args);
        ck_assert(c > 0);
        if (c < best) best = c, arg = b;
    }
    return arg;
}

/* The documented optimum of every kernel, at a small and a large n. */
START_TEST(cost_optima)
{
    int n = _i ? 1 << 20 : 10000;
    float a = 1;
    CUdeviceptr p = 0;
    void *saxpy[] = {&n, &a, &p, &p};
    ck_assert_uint_eq(best_block("_Z5saxpyifPKfPf", saxpy, n, 0), 256);
    void *vec[] = {&p, &p, &p, &n};
    ck_assert_uint_eq(best_block("vecadd", vec, n, 0), 128);
    void *three[] = {&p, &p, &n};
    ck_assert_uint_eq(best_block("_Z9block_sumPKfPfi", three, n, 256), 512);
    ck_assert_uint_eq(best_block("_Z10atomic_sumPKfPfi", three, n, 0), 512);
    ck_assert_uint_eq(best_block("_Z9tile_copyILi128EEvPKfPfi", three, n, 128), 64);
    ck_assert_uint_eq(best_block("triton_poi_fused_add_0", vec, n, 1024), 128);
    /* the rows kernels: their grid is the rows (n / 1000 of them), best block 256 */
    int nc = 1000;
    void *rows[] = {&p, &p, &nc};
    ck_assert_uint_eq(best_block("_Z7row_maxPKfPfi", rows, n / 1000, 1), 256);
    ck_assert_uint_eq(best_block("_Z7row_sumPKfPfi", rows, n / 1000, 1), 256);
    int step = 3;
    void *st[] = {&p, &p, &n, &step};
    ck_assert_uint_eq(best_block("_Z10step_scalePfPKfii", st, n, 0), 256);
    ck_assert_double_eq(
        simcuda_cost_ns("nope", (unsigned[]){1, 1, 1}, (unsigned[]){1, 1, 1}, 0, NULL), -1);
    /* smem_rev: the least shared that works is cheapest */
    unsigned g[3] = {4096, 1, 1}, b[3] = {256, 1, 1};
    ck_assert(simcuda_cost_ns("_Z8smem_revPKfPfi", g, b, 1024, three) <
              simcuda_cost_ns("_Z8smem_revPKfPfi", g, b, 4096, three));
    /* scale2d prefers 32 x 8 */
    int w = 2048, h = 2048;
    void *s2[] = {&p, &w, &h, &a};
    const unsigned shapes[][2] = {{32, 8}, {16, 16}, {64, 4}, {256, 1}, {32, 16}, {32, 4}, {8, 32}};
    double c0 = 0;
    for (int i = 0; i < 7; i++) {
        unsigned gg[3] = {cdiv(w, shapes[i][0]), cdiv(h, shapes[i][1]), 1};
        unsigned bb[3] = {shapes[i][0], shapes[i][1], 1};
        double c = simcuda_cost_ns("_Z7scale2dPfiif", gg, bb, 0, s2);
        if (i == 0)
            c0 = c;
        else
            ck_assert_msg(c > c0, "%ux%u should be slower than 32x8", shapes[i][0], shapes[i][1]);
    }
    /* chunk_scale prefers 4 items per thread at block 256 */
    double best = 1e300;
    int bi = 0;
    for (int items = 1; items <= 16; items *= 2) {
        float s = 1;
        void *ca[] = {&p, &n, &s, &items};
        unsigned gg[3] = {cdiv(n, 256 * items), 1, 1}, bb[3] = {256, 1, 1};
        double c = simcuda_cost_ns("_Z11chunk_scalePfifi", gg, bb, 0, ca);
        if (c < best) best = c, bi = items;
    }
    ck_assert_int_eq(bi, 4);
}
END_TEST

START_TEST(events_elapsed)
{
    const int n = 1 << 16;
    CUdeviceptr x = dbuf(NULL, n), y = dbuf(NULL, n);
    CUstream s;
    CUevent e0, e1, e2, nt;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&e0, 0));
    CHECK(cuEventCreate(&e1, 0));
    CHECK(cuEventCreate(&e2, 0));
    CHECK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
    float ms;
    ck_assert_int_eq(cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_INVALID_HANDLE);
    int nn = n;
    float a = 2;
    void *args[] = {&nn, &a, &x, &y};
    CUfunction f = fn("_Z5saxpyifPKfPf");
    CHECK(cuEventRecord(e0, s));
    for (int i = 0; i < 3; i++)
        CHECK(cuLaunchKernel(f, cdiv(n, 128), 1, 1, 128, 1, 1, 0, s, args, NULL));
    CHECK(cuEventRecord(e1, s));
    CHECK(cuEventSynchronize(e1));
    CHECK(cuEventElapsedTime(&ms, e0, e1));
    unsigned g[3] = {cdiv(n, 128), 1, 1}, b[3] = {128, 1, 1};
    double expect = 3 * simcuda_cost_ns("_Z5saxpyifPKfPf", g, b, 0, args) / 1e6;
    ck_assert_double_eq_tol(ms, expect, expect * 1e-5);
    PFN_cuEventElapsedTime_v12080 v2 = (PFN_cuEventElapsedTime_v12080)sym("cuEventElapsedTime_v2");
    float ms2;
    CHECK(v2(&ms2, e0, e1));
    ck_assert_float_eq(ms, ms2);
    /* other streams' work does not move this stream's clock */
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CHECK(cuEventRecord(e2, s));
    CHECK(cuEventElapsedTime(&ms2, e1, e2));
    ck_assert_float_eq(ms2, 0.0f);
    CHECK(cuEventRecord(nt, s));
    ck_assert_int_eq(cuEventElapsedTime(&ms, e0, nt), CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuEventQuery(e1));
    CHECK(cuEventDestroy(e0));
    ck_assert_int_eq(cuEventRecord(e0, s), CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamDestroy(s));
}
END_TEST

/* The per-thread default stream (stream 0 through _ptsz) has its own clock. */
START_TEST(per_thread_stream)
{
    CUdeviceptr x = dbuf(NULL, 1024), y = dbuf(NULL, 1024);
    int n = 1024;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    PFN_cuLaunchKernel_v7000_ptsz lk = (PFN_cuLaunchKernel_v7000_ptsz)sym("cuLaunchKernel_ptsz");
    PFN_cuEventRecord_v7000_ptsz rec = (PFN_cuEventRecord_v7000_ptsz)sym("cuEventRecord_ptsz");
    CUevent p0, p1, l0, l1;
    CHECK(cuEventCreate(&p0, 0));
    CHECK(cuEventCreate(&p1, 0));
    CHECK(cuEventCreate(&l0, 0));
    CHECK(cuEventCreate(&l1, 0));
    CHECK(rec(p0, NULL));
    CHECK(cuEventRecord(l0, NULL));
    CHECK(lk(fn("_Z5saxpyifPKfPf"), 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CHECK(rec(p1, NULL));
    CHECK(cuEventRecord(l1, CU_STREAM_LEGACY));
    float pm, lm;
    CHECK(cuEventElapsedTime(&pm, p0, p1));
    CHECK(cuEventElapsedTime(&lm, l0, l1));
    ck_assert(pm > 0);
    ck_assert_float_eq(lm, 0);
    CHECK(cuEventRecord(l1, CU_STREAM_PER_THREAD));
    CHECK(cuEventElapsedTime(&lm, p0, l1));
    ck_assert_float_eq(lm, pm);
}
END_TEST

START_TEST(noise_and_outlier)
{
    CUdeviceptr x = dbuf(NULL, 1024), y = dbuf(NULL, 1024);
    int n = 1024;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    CUfunction f = fn("_Z5saxpyifPKfPf");
    struct simcuda_stats st;
    double costs[3][8];
    for (int run = 0; run < 3; run++) {
        simcuda_set_noise(0.1, 42);
        for (int i = 0; i < 8; i++) {
            /* run 2: another config before each: the draws are per config, so that what
             * else a session launches (how many verification or staging kernels) does not
             * change its candidates' timings */
            if (run == 2) CHECK(launch1(f, 8, 128, 0, args));
            CHECK(launch1(f, 4, 256, 0, args));
            simcuda_get_stats(&st);
            costs[run][i] = st.last.cost_ns;
        }
    }
    for (int i = 0; i < 8; i++) {
        ck_assert_double_eq(costs[1][i], costs[0][i]); /* the seed repeats its sequence */
        ck_assert_double_eq(costs[2][i], costs[0][i]);
    }
    unsigned g[3] = {4, 1, 1}, b[3] = {256, 1, 1};
    double base = simcuda_cost_ns("_Z5saxpyifPKfPf", g, b, 0, args);
    int varied = 0;
    for (int i = 0; i < 8; i++) {
        ck_assert(fabs(costs[0][i] - base) <= 0.1 * base + 1e-6);
        varied |= costs[0][i] != base;
    }
    ck_assert(varied);
    simcuda_set_noise(0, 0);
    simcuda_set_outlier(3);
    for (int i = 0; i < 6; i++) {
        CHECK(launch1(f, 4, 256, 0, args));
        simcuda_get_stats(&st);
        double expect = st.launches % 3 == 0 ? 100 * base : base;
        ck_assert_double_eq_tol(st.last.cost_ns, expect, 1e-6);
    }
}
END_TEST

/* ---------------------------------------------------------------- faults, counters */

START_TEST(fault_injection)
{
    CUdeviceptr p[4];
    ck_assert_int_eq(simcuda_set_fail("cuMemAlloc_v2", 2, CUDA_ERROR_OUT_OF_MEMORY), 0);
    CHECK(cuMemAlloc(&p[0], 16));
    ck_assert_int_eq(cuMemAlloc(&p[1], 16), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(cuMemAlloc(&p[1], 16));
    ck_assert_int_eq(simcuda_live_allocations(), 2);
    simcuda_reset_faults();
    /* a base name covers every variant; nth 0 = every call */
    simcuda_set_fail("cuLaunchKernel", 0, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    int n = 4;
    float a = 1;
    void *args[] = {&n, &a, &p[0], &p[1]};
    PFN_cuLaunchKernel_v7000_ptsz lk = (PFN_cuLaunchKernel_v7000_ptsz)sym("cuLaunchKernel_ptsz");
    ck_assert_int_eq(launch1(fn("_Z5saxpyifPKfPf"), 1, 32, 0, args),
                     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    ck_assert_int_eq(lk(fn("_Z5saxpyifPKfPf"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    ck_assert_uint_eq(simcuda_launch_count(), 0);
    ck_assert_uint_eq(simcuda_calls("cuLaunchKernel"), 2);
    ck_assert_uint_eq(simcuda_calls("cuLaunchKernel_ptsz"), 1);
    ck_assert_int_eq(simcuda_set_fail("cuNothing", 1, CUDA_ERROR_UNKNOWN), -1);
    simcuda_reset_faults();
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 1, 32, 0, args));
    ck_assert_uint_eq(simcuda_launch_count(), 1);
    CHECK(cuMemFree(p[0]));
    CHECK(cuMemFree(p[1]));
    ck_assert_int_eq(cuMemFree(p[1]), CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(simcuda_live_allocations(), 0);
    ck_assert_uint_eq(simcuda_calls("cuMemAlloc"), 3);
    ck_assert_uint_eq(simcuda_calls("cuMemFree_v2"), 3);
}
END_TEST

/* SIMCUDA_FAIL and the other switches are read at the first cuInit (no fixture here). */
START_TEST(fault_env)
{
    setenv("SIMCUDA_FAIL", "cuEventRecord:1:999,cuMemAlloc_v2:2:CUDA_ERROR_OUT_OF_MEMORY,bad", 1);
    setenv("SIMCUDA_CAPTURING", "1", 1);
    setenv("SIMCUDA_TRACE", "", 1);
    setup();
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    ck_assert_int_eq(cuEventRecord(e, NULL), CUDA_ERROR_UNKNOWN);
    CHECK(cuEventRecord(e, NULL));
    CUdeviceptr p;
    CHECK(cuMemAlloc(&p, 4));
    ck_assert_int_eq(cuMemAlloc(&p, 4), CUDA_ERROR_OUT_OF_MEMORY);
    CUstreamCaptureStatus st;
    CHECK(cuStreamIsCapturing(NULL, &st));
    ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    struct simcuda_stats s;
    simcuda_get_stats(&s);
    ck_assert_uint_eq(s.faults_injected, 2);
}
END_TEST

/* SIMCUDA_HANG with SIMCUDA_HANG_UNTIL: the hanging launch keeps the device busy until the
 * file exists, however long that takes; other launches do not hang. */
START_TEST(hang_until_file)
{
    char path[] = "/tmp/simcuda_hangXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    setenv("SIMCUDA_HANG", "_Z5saxpyifPKfPf:64:0", 1);
    setenv("SIMCUDA_HANG_UNTIL", path, 1);
    setup();
    CUdeviceptr x = dbuf(NULL, 64), y = dbuf(NULL, 64);
    int n = 64;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    CHECK(cuLaunchKernel(fn("_Z5saxpyifPKfPf"), 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CHECK(cuStreamQuery(NULL));
    CHECK(cuLaunchKernel(fn("_Z5saxpyifPKfPf"), 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    CHECK(cuStreamSynchronize(NULL));
    CHECK(cuStreamQuery(NULL));
    unlink(path);
}
END_TEST

START_TEST(trace_file)
{
    char path[] = "/tmp/simcuda_traceXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    simcuda_set_trace(path);
    CUdeviceptr x = dbuf(NULL, 64), y = dbuf(NULL, 64);
    int n = 64;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    CHECK(cuLaunchKernel(fn("_Z5saxpyifPKfPf"), 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    void *rargs[] = {&x, &y, &n};
    CHECK(cuLaunchKernel(fn("_Z8smem_revPKfPfi"), 1, 1, 1, 64, 1, 1, 256, NULL, rargs, NULL));
    simcuda_set_trace(NULL);
    FILE *f = fopen(path, "r");
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_msg(strstr(line, "_Z5saxpyifPKfPf grid=2,1,1 block=32,1,1 shared=0 cost_ns=") == line,
                  "%s", line);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert(strstr(line, "_Z8smem_revPKfPfi grid=1,1,1 block=64,1,1 shared=256") == line);
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    unlink(path);
}
END_TEST

/* ---------------------------------------------------------------- capture */

START_TEST(capture_and_replay)
{
    const int n = 256;
    float *x = ramp(n, 1), ones[256], out[256];
    for (int i = 0; i < n; i++)
        ones[i] = 1;
    CUdeviceptr dx = dbuf(x, n), dy = dbuf(ones, n);
    CUstream s;
    CHECK(cuStreamCreate(&s, 0));
    CUstreamCaptureStatus st;
    CHECK(cuStreamIsCapturing(s, &st));
    ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
    simcuda_set_capturing(1);
    CHECK(cuStreamIsCapturing(s, &st));
    ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    simcuda_set_capturing(0);

    ck_assert_int_eq(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
                     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    cuuint64_t id;
    CUgraph g0;
    CHECK(cuStreamGetCaptureInfo(s, &st, &id, &g0, NULL, NULL, NULL));
    ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ck_assert_uint_ne(id, 0);
    int nn = n;
    float a = 2;
    void *args[] = {&nn, &a, &dx, &dy};
    CHECK(cuLaunchKernel(fn("_Z5saxpyifPKfPf"), 1, 1, 1, 256, 1, 1, 0, s, args, NULL));
    ck_assert_uint_eq(simcuda_launch_count(), 0);
    CUgraph g;
    CHECK(cuStreamEndCapture(s, &g));
    ck_assert_ptr_eq(g, g0);
    fetch(out, dy, n);
    ck_assert_mem_eq(out, ones, sizeof ones);
    CUgraphExec ge;
    CHECK(cuGraphInstantiate(&ge, g, 0));
    CHECK(cuGraphLaunch(ge, s));
    CHECK(cuGraphLaunch(ge, s));
    ck_assert_uint_eq(simcuda_launch_count(), 2);
    fetch(out, dy, n);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(out[i], 2 * x[i] + (2 * x[i] + 1));
    CHECK(cuGraphExecDestroy(ge));
    CHECK(cuGraphDestroy(g));
    ck_assert_int_eq(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);
    free(x);
}
END_TEST

START_TEST(capture_mode_rules)
{
    CUstream s;
    CHECK(cuStreamCreate(&s, 0));
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    ck_assert_int_eq(m, CU_STREAM_CAPTURE_MODE_GLOBAL);
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    ck_assert_int_eq(m, CU_STREAM_CAPTURE_MODE_RELAXED);

    /* relaxed thread mode: allocation during a global capture is allowed */
    CUdeviceptr p;
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    CHECK(cuMemAlloc(&p, 64));
    CHECK(cuMemFree(p));
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    CUgraph g;
    CHECK(cuStreamEndCapture(s, &g));
    CHECK(cuGraphDestroy(g));

    /* global thread mode: the allocation fails and breaks the capture */
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ck_assert_int_eq(cuMemAlloc(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUstreamCaptureStatus st;
    CHECK(cuStreamIsCapturing(s, &st));
    ck_assert_int_eq(st, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    ck_assert_int_eq(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    ck_assert_ptr_null(g);
    /* a relaxed capture never forbids */
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CHECK(cuMemAlloc(&p, 64));
    ck_assert_int_eq(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    ck_assert_int_eq(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}
END_TEST

typedef struct {
    CUstream s;
    pthread_barrier_t *go, *done;
} cap_thread_arg;

static void *capture_thread(void *v)
{
    cap_thread_arg *a = v;
    CHECK(cuCtxSetCurrent(g_ctx));
    CHECK(cuStreamBeginCapture(a->s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    pthread_barrier_wait(a->go);
    pthread_barrier_wait(a->done);
    CUgraph g;
    CUresult rc = cuStreamEndCapture(a->s, &g);
    return (void *)(intptr_t)rc;
}

/* Another thread's global capture forbids this thread's unsafe calls unless this
 * thread switched to relaxed mode. */
START_TEST(capture_other_thread)
{
    pthread_barrier_t go, done;
    pthread_barrier_init(&go, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    cap_thread_arg a = {NULL, &go, &done};
    CHECK(cuStreamCreate(&a.s, 0));
    pthread_t t;
    pthread_create(&t, NULL, capture_thread, &a);
    pthread_barrier_wait(&go);
    CUdeviceptr p;
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    CHECK(cuMemAlloc(&p, 64));
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    CHECK(cuMemFree(p));
    CHECK(cuThreadExchangeStreamCaptureMode(&m));
    ck_assert_int_eq(cuMemAlloc(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    pthread_barrier_wait(&done);
    void *rc;
    pthread_join(t, &rc);
    ck_assert_int_eq((int)(intptr_t)rc, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}
END_TEST

/* ---------------------------------------------------------------- handles */

START_TEST(kernel_vs_function_handles)
{
    static const char image[] = "fatbin";
    CUlibrary lib;
    CHECK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CHECK(cuLibraryGetKernel(&k, lib, "_Z5saxpyifPKfPf"));
    ck_assert_int_eq(cuLibraryGetKernel(&k, lib, "_Z7missingv"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuLibraryGetKernel(&k, lib, "_Z5saxpyifPKfPf"));
    const char *name;
    CHECK(cuKernelGetName(&name, k));
    ck_assert_str_eq(name, "_Z5saxpyifPKfPf");
    ck_assert_int_eq(cuFuncGetName(&name, (CUfunction)k), CUDA_ERROR_INVALID_HANDLE);
    size_t off, size;
    ck_assert_int_eq(cuFuncGetParamInfo((CUfunction)k, 0, &off, &size), CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuKernelGetParamInfo(k, 3, &off, &size));
    ck_assert_uint_eq(off, 16);
    ck_assert_uint_eq(size, 8);
    ck_assert_int_eq(cuKernelGetParamInfo(k, 4, &off, &size), CUDA_ERROR_INVALID_VALUE);
    CUfunction f;
    CHECK(cuKernelGetFunction(&f, k));
    ck_assert_ptr_ne(f, (CUfunction)k);
    CHECK(cuFuncGetName(&name, f));
    ck_assert_str_eq(name, "_Z5saxpyifPKfPf");
    CHECK(cuFuncGetParamInfo(f, 1, &off, &size));
    ck_assert_uint_eq(off, 4);
    ck_assert_int_eq(cuKernelGetName(&name, (CUkernel)f), CUDA_ERROR_INVALID_HANDLE);
    int v;
    CHECK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0));
    ck_assert_int_eq(v, 32);
    /* the runtime launches a CUkernel cast to CUfunction */
    float xs[64], ys[64], out[64];
    for (int i = 0; i < 64; i++)
        xs[i] = (float)i, ys[i] = 1;
    CUdeviceptr x = dbuf(xs, 64), y = dbuf(ys, 64);
    int n = 64;
    float a = 3;
    void *args[] = {&n, &a, &x, &y};
    CHECK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    fetch(out, y, 64);
    ck_assert_float_eq(out[5], 16.0f);
    CUmodule m;
    CHECK(cuLibraryGetModule(&m, lib));
    CUfunction f2;
    CHECK(cuModuleGetFunction(&f2, m, "_Z5saxpyifPKfPf"));
    ck_assert_ptr_eq(f2, f);
    /* whose is whose: a CUkernel's library, a library function's module */
    CUlibrary owner;
    CHECK(cuKernelGetLibrary(&owner, k));
    ck_assert_ptr_eq(owner, lib);
    ck_assert_int_eq(cuKernelGetLibrary(&owner, (CUkernel)f), CUDA_ERROR_INVALID_HANDLE);
    CUmodule fm;
    CHECK(cuFuncGetModule(&fm, f));
    ck_assert_ptr_eq(fm, m);
    CHECK(cuLibraryUnload(lib));
    ck_assert_int_eq(cuKernelGetLibrary(&owner, k), CUDA_ERROR_INVALID_HANDLE);
    ck_assert_int_eq(cuKernelGetName(&name, k), CUDA_ERROR_INVALID_HANDLE);
    ck_assert_int_eq(cuLaunchKernel((CUfunction)k, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
    CUlibrary lib2;
    CHECK(cuLibraryLoadData(&lib2, image, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k2;
    CHECK(cuLibraryGetKernel(&k2, lib2, "_Z5saxpyifPKfPf"));
    ck_assert_ptr_eq(lib2, lib);
    ck_assert_ptr_eq(k2, k);
}
END_TEST

START_TEST(unload_and_reuse)
{
    CUfunction f = fn("_Z9block_sumPKfPfi"), g = fn("vecadd");
    ck_assert_ptr_ne(f, g);
    CUmodule got;
    CHECK(cuFuncGetModule(&got, f));
    ck_assert_ptr_eq(got, g_mod);
    ck_assert_int_eq(cuModuleGetFunction(&g, g_mod, "nope"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuModuleUnload(g_mod));
    const char *name;
    ck_assert_int_eq(cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
    ck_assert_int_eq(cuModuleUnload(g_mod), CUDA_ERROR_INVALID_HANDLE);
    int n = 0;
    CUdeviceptr p = 0;
    void *args[] = {&p, &p, &n};
    ck_assert_int_eq(launch1(f, 1, 256, 0, args), CUDA_ERROR_INVALID_HANDLE);
    CUmodule m2;
    static const char image[] = "ptx";
    CHECK(cuModuleLoadData(&m2, image));
    ck_assert_ptr_eq(m2, g_mod);
    CUfunction f2;
    CHECK(cuModuleGetFunction(&f2, m2, "_Z9block_sumPKfPfi"));
    ck_assert_ptr_eq(f2, f);
    CHECK(cuFuncGetName(&name, f2));
    ck_assert_str_eq(name, "_Z9block_sumPKfPfi");
}
END_TEST

/* ---------------------------------------------------------------- arguments, validation */

START_TEST(extra_packed_args)
{
    CUfunction f = fn("_Z11struct_axpy6ParamsPKfPf");
    size_t off[3], size[3];
    for (int i = 0; i < 3; i++)
        CHECK(cuFuncGetParamInfo(f, i, &off[i], &size[i]));
    ck_assert_uint_eq(off[0], 0);
    ck_assert_uint_eq(size[0], 12);
    ck_assert_uint_eq(off[1], 16);
    ck_assert_uint_eq(off[2], 24);
    ck_assert_int_eq(cuFuncGetParamInfo(f, 3, &off[0], &size[0]), CUDA_ERROR_INVALID_VALUE);
    float xs[100], ys[100], out[100];
    for (int i = 0; i < 100; i++)
        xs[i] = (float)i, ys[i] = 2;
    CUdeviceptr x = dbuf(xs, 100), y = dbuf(ys, 100);
    unsigned char buf[32] = {0};
    struct {
        int n;
        float alpha;
        int stride;
    } p = {100, 0.5f, 1};
    memcpy(buf, &p, 12);
    memcpy(buf + 16, &x, 8);
    memcpy(buf + 24, &y, 8);
    size_t bsize = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bsize,
                     CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, extra));
    fetch(out, y, 100);
    for (int i = 0; i < 100; i++)
        ck_assert_float_eq(out[i], 2 + 0.5f * i);
    /* through cuLaunchKernelEx too */
    CUlaunchConfig cfg = {1, 1, 1, 128, 1, 1, 0, NULL, NULL, 0};
    CHECK(cuLaunchKernelEx(&cfg, f, NULL, extra));
    fetch(out, y, 100);
    ck_assert_float_eq(out[10], 2 + 0.5f * 10 * 2);
    bsize = 24;
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, extra),
                     CUDA_ERROR_INVALID_VALUE);
    void *args[] = {&p, &x, &y};
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, args, extra),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL),
                     CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(launch_validation)
{
    CUfunction f = fn("_Z5saxpyifPKfPf");
    CUdeviceptr x = dbuf(NULL, 1024), y = dbuf(NULL, 1024);
    int n = 1024;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 1, 1, 65, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel(f, 1, 65536, 1, 32, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 49153, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuLaunchKernel((CUfunction)&n, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)&n, args, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
    /* block_sum has 1 KiB static shared: 48 KiB - 1 KiB dynamic is the most */
    CUfunction bs = fn("_Z9block_sumPKfPfi");
    void *bargs[] = {&x, &y, &n};
    int v;
    CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, bs));
    ck_assert_int_eq(v, 1024);
    CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bs));
    ck_assert_int_eq(v, 48 * 1024 - 1024);
    CHECK(cuLaunchKernel(bs, 4, 1, 1, 256, 1, 1, 47 * 1024, NULL, bargs, NULL));
    ck_assert_int_eq(cuLaunchKernel(bs, 4, 1, 1, 256, 1, 1, 47 * 1024 + 1, NULL, bargs, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    /* cooperative: at most every block resident at once (132 SMs x 2 blocks of 1024) */
    CHECK(cuLaunchCooperativeKernel(f, 264, 1, 1, 1024, 1, 1, 0, NULL, args));
    ck_assert_int_eq(cuLaunchCooperativeKernel(f, 265, 1, 1, 1024, 1, 1, 0, NULL, args),
                     CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    CUlaunchAttribute at[2];
    memset(at, 0, sizeof at);
    at[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    at[0].value.cooperative = 1;
    at[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[1].value.clusterDim.x = 2;
    at[1].value.clusterDim.y = 1;
    at[1].value.clusterDim.z = 1;
    CUlaunchConfig cfg = {4, 1, 1, 256, 1, 1, 0, NULL, at, 2};
    CHECK(cuLaunchKernelEx(&cfg, f, args, NULL));
    cfg.gridDimX = 3;
    ck_assert_int_eq(cuLaunchKernelEx(&cfg, f, args, NULL), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    cfg.gridDimX = 2000;
    ck_assert_int_eq(cuLaunchKernelEx(&cfg, f, args, NULL),
                     CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    int blocks;
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
    ck_assert_int_eq(blocks, 8);
    /* memory checks */
    ck_assert_int_eq(cuMemcpyHtoD(x + 4094, &n, 4), CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuMemsetD32(y, 0, 1025), CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuMemFree(x + 4), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr z;
    ck_assert_int_eq(cuMemAlloc(&z, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuCtxSetCurrent(NULL));
    ck_assert_int_eq(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_CONTEXT);
}
END_TEST

/* ---------------------------------------------------------------- threads */

#define NTHREADS 16
#define PER_THREAD 20

static void *worker(void *v)
{
    int id = (int)(intptr_t)v;
    CHECK(cuCtxSetCurrent(g_ctx));
    const int n = 3000 + id;
    float *x = ramp(n, 1), *y = ramp(n, 2), *out = malloc(n * 4);
    CUdeviceptr dx = dbuf(x, n), dy = dbuf(y, n);
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent e0, e1;
    CHECK(cuEventCreate(&e0, 0));
    CHECK(cuEventCreate(&e1, 0));
    float a = (float)id;
    int nn = n;
    void *args[] = {&nn, &a, &dx, &dy};
    CHECK(cuEventRecord(e0, s));
    for (int i = 0; i < PER_THREAD; i++)
        CHECK(
            cuLaunchKernel(fn("_Z5saxpyifPKfPf"), cdiv(n, 256), 1, 1, 256, 1, 1, 0, s, args, NULL));
    CHECK(cuEventRecord(e1, s));
    float ms;
    CHECK(cuEventElapsedTime(&ms, e0, e1));
    unsigned g[3] = {cdiv(n, 256), 1, 1}, b[3] = {256, 1, 1};
    double expect = PER_THREAD * simcuda_cost_ns("_Z5saxpyifPKfPf", g, b, 0, args) / 1e6;
    int ok = fabs(ms - expect) <= expect * 1e-5;
    CHECK(cuMemcpyDtoHAsync(out, dy, n * 4, s));
    CHECK(cuStreamSynchronize(s));
    for (int i = 0; i < n && ok; i++) {
        float r = y[i];
        for (int k = 0; k < PER_THREAD; k++)
            r = a * x[i] + r;
        ok = out[i] == r;
    }
    CHECK(cuMemFree(dx));
    CHECK(cuMemFree(dy));
    CHECK(cuStreamDestroy(s));
    free(x), free(y), free(out);
    return (void *)(intptr_t)ok;
}

START_TEST(many_threads)
{
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++) {
        void *ok;
        pthread_join(t[i], &ok);
        ck_assert_msg(ok, "thread %d got wrong results or times", i);
    }
    ck_assert_uint_eq(simcuda_launch_count(), NTHREADS * PER_THREAD);
    ck_assert_int_eq(simcuda_live_allocations(), 0);
    ck_assert_uint_eq(simcuda_calls("cuMemAlloc_v2"), simcuda_calls("cuMemFree"));
}
END_TEST

/* ---------------------------------------------------------------- sticky faults, hangs */

/* A kernel fault poisons the process: every later call that needs a context returns
 * it; device queries and error names still answer. */
START_TEST(sticky_fault)
{
    const int n = 1000;
    CUdeviceptr d = dbuf(NULL, n);
    float *h = malloc(n * 4);
    int nn = n, own = 256;
    void *args[] = {&d, &nn, &own};
    CUfunction f = fn("_Z9own_blockPfii");
    CHECK(launch1(f, cdiv(n, 256), 256, 0, args));
    fetch(h, d, n);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(h[i], (float)i);
    ck_assert_int_eq(simcuda_sticky_error(), CUDA_SUCCESS);
    /* injected non-sticky errors stay what they were: one call fails */
    simcuda_set_fail("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    ck_assert_int_eq(launch1(f, cdiv(n, 256), 256, 0, args), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    CHECK(launch1(f, cdiv(n, 256), 256, 0, args));
    ck_assert_int_eq(simcuda_sticky_error(), CUDA_SUCCESS);

    ck_assert_int_eq(launch1(f, cdiv(n, 128), 128, 0, args), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(simcuda_sticky_error(), CUDA_ERROR_ILLEGAL_ADDRESS);
    CUevent e;
    ck_assert_int_eq(cuEventCreate(&e, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(launch1(f, cdiv(n, 256), 256, 0, args), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(cuStreamQuery(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(cuMemcpyDtoH(h, d, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(cuMemFree(d), CUDA_ERROR_ILLEGAL_ADDRESS);
    CUdeviceptr p;
    ck_assert_int_eq(cuMemAlloc(&p, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
    int v;
    CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    const char *name;
    CHECK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &name));
    CUcontext c;
    CHECK(cuCtxGetCurrent(&c));
    free(h);
}
END_TEST

/* An injected error of a sticky kind is sticky too (any entry point). */
START_TEST(sticky_injected)
{
    simcuda_set_fail("cuMemcpyHtoD", 1, CUDA_ERROR_MISALIGNED_ADDRESS);
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, 16));
    float h[4] = {0};
    ck_assert_int_eq(cuMemcpyHtoD(d, h, 16), CUDA_ERROR_MISALIGNED_ADDRESS);
    ck_assert_int_eq(cuMemcpyHtoD(d, h, 16), CUDA_ERROR_MISALIGNED_ADDRESS);
    ck_assert_int_eq(cuCtxSynchronize(), CUDA_ERROR_MISALIGNED_ADDRESS);
    ck_assert_int_eq(simcuda_sticky_error(), CUDA_ERROR_MISALIGNED_ADDRESS);
}
END_TEST

/* SIMCUDA_STICKY=0: the old behaviour, a fault fails its own launch only. */
START_TEST(sticky_off_env)
{
    setenv("SIMCUDA_STICKY", "0", 1);
    setup();
    const int n = 512;
    CUdeviceptr d = dbuf(NULL, n);
    int nn = n, own = 256;
    void *args[] = {&d, &nn, &own};
    ck_assert_int_eq(launch1(fn("_Z9own_blockPfii"), 4, 128, 0, args), CUDA_ERROR_ILLEGAL_ADDRESS);
    ck_assert_int_eq(simcuda_sticky_error(), CUDA_SUCCESS);
    CHECK(cuCtxSynchronize());
    CHECK(launch1(fn("_Z9own_blockPfii"), 2, 256, 0, args));
}
END_TEST

/* Forks a child that calls fn (a synchronizing call) and exits 0 if it ever returns; the
 * parent waits for the child's "about to call" byte, then kills it: the child must die
 * of the signal, not exit. A wrong (returning) fn may race the kill and pass, a right
 * one never fails: no dependence on the machine's speed. */
static void expect_blocks_until_killed(CUresult (*fn)(void))
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(p[0]);
        ssize_t w = write(p[1], "x", 1);
        (void)w;
        fn();
        _exit(0);
    }
    close(p[1]);
    char c;
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    int st = 0;
    /* it has not returned yet if it is still there: then kill it */
    if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    }
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the synchronize returned");
}
static CUresult sync_ctx(void)
{
    return cuCtxSynchronize();
}
static CUresult sync_stream(void)
{
    return cuStreamSynchronize(NULL);
}

/* The spin kernel's hanging config: busy until the process is killed. */
START_TEST(hang_spin_forever)
{
    const int n = 300;
    CUdeviceptr d = dbuf(NULL, n);
    int nn = n, hang = 64;
    void *args[] = {&d, &nn, &hang};
    CUfunction f = fn("_Z4spinPfii");
    CHECK(launch1(f, cdiv(n, 128), 128, 0, args));
    CHECK(cuStreamQuery(NULL));
    CHECK(cuCtxSynchronize());
    CHECK(launch1(f, cdiv(n, 64), 64, 0, args));
    ck_assert_int_eq(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    CHECK(cuEventRecord(e, NULL));
    ck_assert_int_eq(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    expect_blocks_until_killed(sync_ctx);
    expect_blocks_until_killed(sync_stream);
    ck_assert_int_eq(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
}
END_TEST

/* SIMCUDA_HANG=kernel:block:forever does the same to any kernel. */
START_TEST(hang_env_forever)
{
    setenv("SIMCUDA_HANG", "_Z5saxpyifPKfPf:64:forever", 1);
    setup();
    CUdeviceptr x = dbuf(NULL, 256), y = dbuf(NULL, 256);
    int n = 256;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 2, 128, 0, args));
    CHECK(cuStreamQuery(NULL));
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 4, 64, 0, args));
    ck_assert_int_eq(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    expect_blocks_until_killed(sync_stream);
}
END_TEST

/* SIMCUDA_HANG's nth: the config's first launches run, its third hangs; an event recorded
 * before the hanging launch has completed, those recorded after it have not (the first
 * unfinished run of a stream is the one that hangs), whatever their streams. */
START_TEST(hang_env_nth_and_events)
{
    setenv("SIMCUDA_HANG", "_Z5saxpyifPKfPf:64:forever:3", 1);
    setup();
    CUdeviceptr x = dbuf(NULL, 256), y = dbuf(NULL, 256);
    int n = 256;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    CUevent ev[4];
    for (int i = 0; i < 4; i++)
        CHECK(cuEventCreate(&ev[i], 0));
    CUevent never;
    CHECK(cuEventCreate(&never, 0));
    for (int i = 0; i < 2; i++) {
        CHECK(launch1(fn("_Z5saxpyifPKfPf"), 4, 64, 0, args));
        CHECK(cuStreamQuery(NULL));
    }
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 2, 128, 0, args));
    CHECK(cuEventRecord(ev[0], NULL));
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 4, 64, 0, args)); /* its third: hangs */
    CHECK(cuEventRecord(ev[1], NULL));
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 2, 128, 0, args));
    CHECK(cuEventRecord(ev[2], NULL));
    CUstream other;
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventRecord(ev[3], other));
    ck_assert_int_eq(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    CHECK(cuEventQuery(ev[0]));
    CHECK(cuEventSynchronize(ev[0]));
    CHECK(cuEventQuery(never));
    for (int i = 1; i < 4; i++)
        ck_assert_int_eq(cuEventQuery(ev[i]), CUDA_ERROR_NOT_READY);
    /* re-recorded after the hang, the completed one waits too */
    CHECK(cuEventRecord(ev[0], NULL));
    ck_assert_int_eq(cuEventQuery(ev[0]), CUDA_ERROR_NOT_READY);
    expect_blocks_until_killed(sync_stream);
}
END_TEST

/* A malformed nth is refused as a whole (no hang), said on stderr. */
START_TEST(hang_env_bad_nth)
{
    setenv("SIMCUDA_HANG", "_Z5saxpyifPKfPf:64:forever:0", 1);
    setup();
    CUdeviceptr x = dbuf(NULL, 256), y = dbuf(NULL, 256);
    int n = 256;
    float a = 1;
    void *args[] = {&n, &a, &x, &y};
    CHECK(launch1(fn("_Z5saxpyifPKfPf"), 4, 64, 0, args));
    CHECK(cuStreamQuery(NULL));
    CHECK(cuStreamSynchronize(NULL));
}
END_TEST

/* ---------------------------------------------------------------- shareable memory */

static CUmemAllocationProp fd_prop(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

/* Reserves size bytes (at hint when free), maps h there and makes it accessible. */
static CUdeviceptr map_at(CUmemGenericAllocationHandle h, size_t size, CUdeviceptr hint)
{
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, size, 0, hint, 0));
    CHECK(cuMemMap(va, size, 0, h, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemSetAccess(va, size, &acc, 1));
    return va;
}

START_TEST(vmm_local)
{
    CUmemAllocationProp prop = fd_prop();
    size_t g;
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    ck_assert_uint_eq(g, 2u << 20);
    CUmemGenericAllocationHandle h;
    ck_assert_int_eq(cuMemCreate(&h, g + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemCreate(&h, 2 * g, &prop, 0));
    /* reserved but not yet accessible: not memory a copy may touch */
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    ck_assert_uint_eq(va % g, 0);
    CHECK(cuMemMap(va, g, 0, h, 0));
    ck_assert_int_eq(cuMemMap(va, g, 0, h, 0), CUDA_ERROR_ALREADY_MAPPED);
    CHECK(cuMemMap(va + g, g, g, h, 0));
    float one = 1;
    ck_assert_int_eq(cuMemcpyHtoD(va, &one, 4), CUDA_ERROR_INVALID_VALUE);
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemSetAccess(va, 2 * g, &acc, 1));
    ck_assert_int_eq(simcuda_live_mappings(), 2);
    /* the range is the mapped chunk; the pointer's range attributes the reservation */
    CUdeviceptr base, start;
    size_t size, rsize;
    CHECK(cuMemGetAddressRange(&base, &size, va + g + 100));
    ck_assert_uint_eq(base, va + g);
    ck_assert_uint_eq(size, g);
    CHECK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + g + 100));
    CHECK(cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + g + 100));
    ck_assert_uint_eq(start, va);
    ck_assert_uint_eq(rsize, 2 * g);
    /* a kernel across the two chunks: consecutive mappings are one span */
    int n = (int)(2 * g / 4), own = 256;
    void *args[] = {&va, &n, &own};
    CHECK(launch1(fn("_Z9own_blockPfii"), cdiv(n, 256), 256, 0, args));
    float last;
    CHECK(cuMemcpyDtoH(&last, va + 2 * g - 4, 4));
    ck_assert_float_eq(last, (float)(n - 1));
    /* the same memory mapped at a second address shows the same bytes */
    CHECK(cuMemRelease(h)); /* the mappings keep it alive */
    ck_assert_int_eq(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuMemUnmap(va, g / 2), CUDA_ERROR_INVALID_VALUE);
    ck_assert_int_eq(cuMemAddressFree(va, 2 * g), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemUnmap(va, 2 * g));
    ck_assert_int_eq(simcuda_live_mappings(), 0);
    ck_assert_int_eq(cuMemGetAddressRange(&base, &size, va), CUDA_ERROR_NOT_FOUND);
    CHECK(cuMemAddressFree(va, 2 * g));
    /* a hint that is free is honoured; a taken one is not */
    CUdeviceptr again, other;
    CHECK(cuMemAddressReserve(&again, g, 0, va, 0));
    ck_assert_uint_eq(again, va);
    CHECK(cuMemAddressReserve(&other, g, 0, va, 0));
    ck_assert_uint_ne(other, va);
    CHECK(cuMemAddressFree(again, g));
    CHECK(cuMemAddressFree(other, g));
}
END_TEST

/* The helper side of vmm_two_process, run as `test_simcuda vmm-child SOCKFD`: receives
 * the memory's descriptor, its address and size, maps it at that address, runs own_block
 * on it (the parent checks the result), then faults and checks that the fault is
 * sticky here. Exit status: 0 when all went as expected. */
static int vmm_child(int sock)
{
    uint64_t msg[2];
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec io = {msg, sizeof msg};
    struct msghdr m = {0};
    m.msg_iov = &io, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof ctl;
    if (recvmsg(sock, &m, 0) != (ssize_t)sizeof msg) return 2;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_type != SCM_RIGHTS) return 3;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    setup();
    if (!simcuda_is_helper()) return 4;
    /* SIMCUDA_FAIL is the program's; SIMCUDA_FAIL_HELPER is this process's */
    CUdeviceptr tmp;
    CHECK_ERR(cuMemAlloc(&tmp, 64), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(cuMemAlloc(&tmp, 64));
    CUmemGenericAllocationHandle h;
    CHECK(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr va = map_at(h, msg[1], msg[0]);
    if (va != msg[0]) return 5; /* the program's own address */
    int n = 1000, own = 256;
    void *args[] = {&va, &n, &own};
    CHECK(launch1(fn("_Z9own_blockPfii"), cdiv(n, 256), 256, 0, args));
    CHECK(cuCtxSynchronize());
    CHECK_ERR(launch1(fn("_Z9own_blockPfii"), cdiv(n, 128), 128, 0, args),
              CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_ERR(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    return 0;
}

/* Spawns this test binary as `vmm-child` with extra environment. */
static pid_t spawn_self(const char *arg, int fd, char *const *env_extra)
{
    extern char **environ;
    char *env[256];
    int k = 0;
    for (char **e = environ; *e && k < 200; e++)
        if (strncmp(*e, "SIMCUDA_", 8) != 0 && strncmp(*e, "XMATUNE_", 8) != 0) env[k++] = *e;
    for (int i = 0; env_extra[i]; i++)
        env[k++] = env_extra[i];
    env[k] = NULL;
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", fd);
    char *argv[] = {"test_simcuda", (char *)arg, fdarg, NULL};
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, env), 0);
    return pid;
}

static int wait_exit(pid_t pid)
{
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st), "child died of signal %d", WTERMSIG(st));
    return WEXITSTATUS(st);
}

/* Memory exported as a descriptor, handed over SCM_RIGHTS, mapped by a second process at
 * the same address: what it writes the first sees; its fault is its own; its trace and
 * fault rules are the helper's. */
START_TEST(vmm_two_process)
{
    CUmemAllocationProp prop = fd_prop();
    size_t size = SIMCUDA_VMM_GRANULARITY;
    CUmemGenericAllocationHandle h;
    CHECK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr va = map_at(h, size, 0);
    CHECK(cuMemsetD32(va, 0, size / 4));
    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    /* memory made without the descriptor handle type cannot be exported */
    CUmemAllocationProp plain = prop;
    plain.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    CUmemGenericAllocationHandle h2;
    CHECK(cuMemCreate(&h2, size, &plain, 0));
    int fd2;
    ck_assert_int_eq(
        cuMemExportToShareableHandle(&fd2, h2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        CUDA_ERROR_NOT_PERMITTED);
    CHECK(cuMemRelease(h2));

    char trace[] = "/tmp/simcuda_helperXXXXXX", mtrace[] = "/tmp/simcuda_mainXXXXXX";
    close(mkstemp(trace));
    close(mkstemp(mtrace));
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char e1[64], e2[64];
    snprintf(e1, sizeof e1, "SIMCUDA_TRACE_HELPER=%s", trace);
    snprintf(e2, sizeof e2, "SIMCUDA_TRACE=%s", mtrace);
    char *extra[] = {"SIMCUDA_ROLE=helper",
                     e1,
                     e2,
                     "SIMCUDA_FAIL=cuLaunchKernel:0:CUDA_ERROR_LAUNCH_FAILED",
                     "SIMCUDA_FAIL_HELPER=cuMemAlloc_v2:1:CUDA_ERROR_OUT_OF_MEMORY",
                     NULL};
    pid_t pid = spawn_self("vmm-child", sv[1], extra);
    close(sv[1]);
    uint64_t msg[2] = {va, size};
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec io = {msg, sizeof msg};
    struct msghdr m = {0};
    m.msg_iov = &io, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof ctl;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ck_assert_int_eq(sendmsg(sv[0], &m, 0), (ssize_t)sizeof msg);
    close(fd);
    ck_assert_int_eq(wait_exit(pid), 0);
    close(sv[0]);

    /* its writes are here; its fault is not */
    float out[1000];
    CHECK(cuMemcpyDtoH(out, va, sizeof out));
    for (int i = 0; i < 1000; i++)
        ck_assert_float_eq(out[i], (float)i);
    ck_assert_int_eq(simcuda_sticky_error(), CUDA_SUCCESS);
    CHECK(cuCtxSynchronize());

    /* its launches went to the helper trace, tagged with its pid; none to the program's */
    FILE *f = fopen(trace, "r");
    char line[256], want[32];
    snprintf(want, sizeof want, " helper=%ld", (long)pid);
    int lines = 0;
    while (f && fgets(line, sizeof line, f)) {
        ck_assert_msg(strstr(line, "_Z9own_blockPfii ") == line && strstr(line, want), "%s", line);
        lines++;
    }
    ck_assert_int_eq(lines, 2);
    if (f) fclose(f);
    struct stat st;
    ck_assert_int_eq(stat(mtrace, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    unlink(trace);
    unlink(mtrace);
    CHECK(cuMemUnmap(va, size));
    CHECK(cuMemRelease(h));
}
END_TEST

/* The shim marks its helper with XMATUNE_HELPER=1; SIMCUDA_ROLE=main overrides it. */
START_TEST(role_from_env)
{
    char *helper[] = {"XMATUNE_HELPER=1", NULL};
    char *main_[] = {"XMATUNE_HELPER=1", "SIMCUDA_ROLE=main", NULL};
    char *plain[] = {NULL};
    ck_assert_int_eq(wait_exit(spawn_self("role-child", -1, helper)), 1);
    ck_assert_int_eq(wait_exit(spawn_self("role-child", -1, main_)), 0);
    ck_assert_int_eq(wait_exit(spawn_self("role-child", -1, plain)), 0);
}
END_TEST

/* ---------------------------------------------------------------- module images */

static CUresult has_fn(CUmodule m, const char *name)
{
    CUfunction f;
    return cuModuleGetFunction(&f, m, name);
}

/* An image with a header holds only the kernels it names, however it is loaded. */
START_TEST(module_images)
{
    static const char img[] = "simcuda-image v1\n_Z5saxpyifPKfPf\nvecadd\n\nanything after";
    CUmodule m;
    CHECK(cuModuleLoadData(&m, img));
    CHECK(has_fn(m, "_Z5saxpyifPKfPf"));
    CHECK(has_fn(m, "vecadd"));
    ck_assert_int_eq(has_fn(m, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    ck_assert_int_eq(has_fn(m, "anything after"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuModuleLoadDataEx(&m, img, 0, NULL, NULL));
    ck_assert_int_eq(has_fn(m, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuModuleLoadFatBinary(&m, img));
    ck_assert_int_eq(has_fn(m, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    CHECK(has_fn(m, "vecadd"));
    CUlibrary lib;
    CUkernel k;
    CHECK(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&k, lib, "vecadd"));
    ck_assert_int_eq(cuLibraryGetKernel(&k, lib, "_Z8smem_revPKfPfi"), CUDA_ERROR_NOT_FOUND);
    /* a name the driver has no kernel for: an invalid image */
    ck_assert_int_eq(cuModuleLoadData(&m, "simcuda-image v1\nnope\n"), CUDA_ERROR_INVALID_IMAGE);
    /* no header: every kernel, as before */
    CHECK(cuModuleLoadData(&m, "\x7f"
                               "ELF whatever"));
    CHECK(has_fn(m, "_Z9block_sumPKfPfi"));
    /* from a file */
    char path[] = "/tmp/simcuda_imageXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_eq(write(fd, img, sizeof img), (ssize_t)sizeof img);
    close(fd);
    CHECK(cuModuleLoad(&m, path));
    CHECK(has_fn(m, "_Z5saxpyifPKfPf"));
    ck_assert_int_eq(has_fn(m, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0));
    ck_assert_int_eq(cuLibraryGetKernel(&k, lib, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    /* linked: the union of what was added; the image holds its header */
    CUlinkState ls;
    CHECK(cuLinkCreate(0, NULL, NULL, &ls));
    void *out;
    size_t size;
    ck_assert_int_eq(cuLinkComplete(ls, &out, &size), CUDA_ERROR_INVALID_VALUE);
    static const char img2[] = "simcuda-image v1\n_Z4spinPfii\n";
    CHECK(cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, (void *)img2, sizeof img2, "b", 0, NULL, NULL));
    CHECK(cuLinkAddFile(ls, CU_JIT_INPUT_CUBIN, path, 0, NULL, NULL));
    CHECK(cuLinkComplete(ls, &out, &size));
    ck_assert_str_eq((const char *)out,
                     "simcuda-image v1\n_Z5saxpyifPKfPf\nvecadd\n_Z4spinPfii\n\n");
    ck_assert_uint_eq(size, strlen(out) + 1);
    CHECK(cuModuleLoadData(&m, out));
    CHECK(has_fn(m, "_Z4spinPfii"));
    CHECK(has_fn(m, "vecadd"));
    ck_assert_int_eq(has_fn(m, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    CHECK(cuLinkDestroy(ls));
    ck_assert_int_eq(cuLinkDestroy(ls), CUDA_ERROR_INVALID_HANDLE);
    unlink(path);
    /* loaded by no entry point: the call counters never saw it */
    simcuda_reset_calls();
    CHECK(simcuda_module_load_unseen(&m, img));
    CHECK(has_fn(m, "vecadd"));
    ck_assert_int_eq(has_fn(m, "_Z9block_sumPKfPfi"), CUDA_ERROR_NOT_FOUND);
    ck_assert_uint_eq(simcuda_calls("cuModuleLoadData") + simcuda_calls("cuModuleLoadDataEx") +
                          simcuda_calls("cuModuleLoad") + simcuda_calls("cuLibraryLoadData"),
                      0);
}
END_TEST

/* ---------------------------------------------------------------- legacy IPC */

/* The helper side of ipc_two_process, `test_simcuda ipc-child HEX`: opens the handle
 * (hex), runs own_block on the buffer, closes it. Exit 0 when all went well, 7 when the
 * handle would not open (the parent expects that after freeing). */
static int ipc_child(const char *hex)
{
    CUipcMemHandle h;
    for (int i = 0; i < CU_IPC_HANDLE_SIZE; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 2;
        h.reserved[i] = (char)v;
    }
    setup();
    CUdeviceptr d;
    CUresult rc = cuIpcOpenMemHandle(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (rc == CUDA_ERROR_INVALID_VALUE) return 7;
    CHECK(rc);
    CUdeviceptr base;
    size_t size;
    CHECK(cuMemGetAddressRange(&base, &size, d + 8));
    if (base != d || size != 4000) return 3;
    CHECK_ERR(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    int n = 1000, own = 128;
    void *args[] = {&d, &n, &own};
    CHECK(launch1(fn("_Z9own_blockPfii"), cdiv(n, 128), 128, 0, args));
    CHECK(cuIpcCloseMemHandle(d));
    CHECK_ERR(cuIpcCloseMemHandle(d), CUDA_ERROR_INVALID_VALUE);
    return 0;
}

static pid_t spawn_ipc_child(const CUipcMemHandle *h)
{
    char hex[2 * CU_IPC_HANDLE_SIZE + 1];
    for (int i = 0; i < CU_IPC_HANDLE_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)h->reserved[i]);
    extern char **environ;
    char *argv[] = {"test_simcuda", "ipc-child", hex, NULL};
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
    return pid;
}

/* cuIpcGetMemHandle on cuMemAlloc memory opens in another process, sharing its bytes. */
START_TEST(ipc_two_process)
{
    const int n = 1000;
    float *h = ramp(n, 1);
    CUdeviceptr d = dbuf(h, n);
    CUipcMemHandle ih;
    ck_assert_int_eq(cuIpcGetMemHandle(&ih, d + 4), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuIpcGetMemHandle(&ih, d));
    /* made shareable in place: the bytes are still there */
    float back[1000];
    fetch(back, d, n);
    ck_assert_int_eq(memcmp(back, h, sizeof back), 0);
    CUdeviceptr self;
    ck_assert_int_eq(cuIpcOpenMemHandle(&self, ih, 0), CUDA_ERROR_INVALID_CONTEXT);
    ck_assert_int_eq(wait_exit(spawn_ipc_child(&ih)), 0);
    fetch(back, d, n);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(back[i], (float)i);
    CHECK(cuMemFree(d));
    ck_assert_int_eq(wait_exit(spawn_ipc_child(&ih)), 7);
    free(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("simdriver");
    TCase *bare = tcase_create("bare");
    tcase_add_test(bare, getproc_variants);
    tcase_add_test(bare, getproc_every_row);
    tcase_add_test(bare, not_initialized);
    tcase_add_test(bare, fault_env);
    tcase_add_test(bare, sticky_off_env);
    tcase_add_test(bare, hang_env_forever);
    tcase_add_test(bare, hang_env_nth_and_events);
    tcase_add_test(bare, hang_env_bad_nth);
    tcase_add_test(bare, role_from_env);
    tcase_add_test(bare, hang_until_file);
    suite_add_tcase(s, bare);
    TCase *tc = tcase_create("driver");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, device_and_ctx);
    tcase_add_test(tc, kernel_saxpy);
    tcase_add_test(tc, kernel_vecadd_and_triton);
    tcase_add_test(tc, kernel_block_sum);
    tcase_add_test(tc, kernel_atomic_sum);
    tcase_add_test(tc, kernel_scale2d);
    tcase_add_test(tc, kernel_tile_copy_struct_chunk);
    tcase_add_test(tc, kernel_smem_rev);
    tcase_add_test(tc, kernel_rows);
    tcase_add_test(tc, kernel_step_scale);
    tcase_add_test(tc, illegal_address);
    tcase_add_loop_test(tc, cost_optima, 0, 2);
    tcase_add_test(tc, events_elapsed);
    tcase_add_test(tc, per_thread_stream);
    tcase_add_test(tc, noise_and_outlier);
    tcase_add_test(tc, fault_injection);
    tcase_add_test(tc, trace_file);
    tcase_add_test(tc, capture_and_replay);
    tcase_add_test(tc, capture_mode_rules);
    tcase_add_test(tc, capture_other_thread);
    tcase_add_test(tc, kernel_vs_function_handles);
    tcase_add_test(tc, unload_and_reuse);
    tcase_add_test(tc, extra_packed_args);
    tcase_add_test(tc, launch_validation);
    tcase_add_test(tc, many_threads);
    tcase_add_test(tc, sticky_fault);
    tcase_add_test(tc, sticky_injected);
    tcase_add_test(tc, hang_spin_forever);
    tcase_add_test(tc, vmm_local);
    tcase_add_test(tc, vmm_two_process);
    tcase_add_test(tc, module_images);
    tcase_add_test(tc, ipc_two_process);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "vmm-child") == 0) return vmm_child(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "ipc-child") == 0) return ipc_child(argv[2]);
    if (argc == 3 && strcmp(argv[1], "role-child") == 0) {
        setup();
        return simcuda_is_helper();
    }
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
