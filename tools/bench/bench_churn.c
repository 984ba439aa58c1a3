/*
 * bench_churn: module churn through the driver API, for tools/bench/bench_churn.sh.
 *
 *   bench_churn [-n CYCLES]
 *
 * Loads one module and keeps it; then CYCLES times: load a second module, get its
 * kernel, launch it once, synchronize, unload it. The kept module's kernel runs before
 * and after. Both modules are the same image: a vecadd kernel (extern "C", o = a + b over
 * n floats) written in PTX here, linked once to a cubin with the driver's own linker
 * (cuLinkCreate) so that each cycle loads a cubin, not PTX to JIT. A driver without a
 * linker (the simulated one) gets the PTX text itself, which it accepts as any image.
 *
 * It reaches the driver as a plain driver-API program does, dlopen("libcuda.so.1") and
 * dlsym, so it runs with a real libcuda and, for tests, with the simulated one
 * (LD_LIBRARY_PATH), with or without LD_PRELOAD=libxmatune.so.
 *
 * Prints one line: cycles=N ns_per_cycle=X rss_kb_warm=W rss_kb_end=E ok=1 (warm: after a
 * tenth of the cycles; ok: both kernels' results right). Exits 1 on any driver error.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

static const char ptx[] = ".version 7.0\n"
                          ".target sm_50\n"
                          ".address_size 64\n"
                          ".visible .entry vecadd(.param .u64 pa, .param .u64 pb,\n"
                          "    .param .u64 po, .param .u32 pn)\n"
                          "{\n"
                          "    .reg .pred %p;\n"
                          "    .reg .b32 %r<6>;\n"
                          "    .reg .b64 %rd<10>;\n"
                          "    .reg .f32 %f<4>;\n"
                          "    ld.param.u64 %rd1, [pa];\n"
                          "    ld.param.u64 %rd2, [pb];\n"
                          "    ld.param.u64 %rd3, [po];\n"
                          "    ld.param.u32 %r1, [pn];\n"
                          "    mov.u32 %r2, %ctaid.x;\n"
                          "    mov.u32 %r3, %ntid.x;\n"
                          "    mov.u32 %r4, %tid.x;\n"
                          "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
                          "    setp.ge.s32 %p, %r5, %r1;\n"
                          "    @%p bra DONE;\n"
                          "    cvta.to.global.u64 %rd4, %rd1;\n"
                          "    cvta.to.global.u64 %rd5, %rd2;\n"
                          "    cvta.to.global.u64 %rd6, %rd3;\n"
                          "    mul.wide.s32 %rd7, %r5, 4;\n"
                          "    add.s64 %rd8, %rd4, %rd7;\n"
                          "    ld.global.f32 %f1, [%rd8];\n"
                          "    add.s64 %rd9, %rd5, %rd7;\n"
                          "    ld.global.f32 %f2, [%rd9];\n"
                          "    add.f32 %f3, %f1, %f2;\n"
                          "    add.s64 %rd8, %rd6, %rd7;\n"
                          "    st.global.f32 [%rd8], %f3;\n"
                          "DONE:\n"
                          "    ret;\n"
                          "}\n";

#define API(X)                                                                                     \
    X(cuInit, CUresult (*)(unsigned))                                                              \
    X(cuGetErrorName, CUresult (*)(CUresult, const char **))                                       \
    X(cuDeviceGet, CUresult (*)(CUdevice *, int))                                                  \
    X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext *, CUdevice))                               \
    X(cuCtxSetCurrent, CUresult (*)(CUcontext))                                                    \
    X(cuCtxSynchronize, CUresult (*)(void))                                                        \
    X(cuMemAlloc_v2, CUresult (*)(CUdeviceptr *, size_t))                                          \
    X(cuMemcpyHtoD_v2, CUresult (*)(CUdeviceptr, const void *, size_t))                            \
    X(cuMemcpyDtoH_v2, CUresult (*)(void *, CUdeviceptr, size_t))                                  \
    X(cuModuleLoadData, CUresult (*)(CUmodule *, const void *))                                    \
    X(cuModuleGetFunction, CUresult (*)(CUfunction *, CUmodule, const char *))                     \
    X(cuModuleUnload, CUresult (*)(CUmodule))                                                      \
    X(cuLaunchKernel, CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,   \
                                   unsigned, unsigned, CUstream, void **, void **))
#define LINK_API(X)                                                                                \
    X(cuLinkCreate_v2, CUresult (*)(unsigned, CUjit_option *, void **, CUlinkState *))             \
    X(cuLinkAddData_v2, CUresult (*)(CUlinkState, CUjitInputType, void *, size_t, const char *,    \
                                     unsigned, CUjit_option *, void **))                           \
    X(cuLinkComplete, CUresult (*)(CUlinkState, void **, size_t *))                                \
    X(cuLinkDestroy, CUresult (*)(CUlinkState))

static struct {
#define FIELD(name, type) __typeof__(type) name; // NOLINT(bugprone-macro-parentheses)
    API(FIELD) LINK_API(FIELD)
#undef FIELD
} cu;

static void check(CUresult r, const char *what, int line)
{
    if (r == CUDA_SUCCESS) return;
    const char *s = "?";
    if (cu.cuGetErrorName) cu.cuGetErrorName(r, &s);
    fprintf(stderr, "bench_churn.c:%d: %s: %s\n", line, what, s);
    exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

static long rss_kb(void)
{
    char buf[128] = {0};
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    (void)fclose(f);
    buf[n] = 0;
    char *end;
    (void)strtol(buf, &end, 10); /* total pages, then resident pages */
    return strtol(end, NULL, 10) * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The cubin the driver's linker made, copied (its output lives until cuLinkDestroy);
 * NULL when there is no linker. Lives until exit. */
static void *cubin_copy;

/* The image each cycle loads: a cubin from the driver's linker, else the PTX text. */
static const void *make_image(void)
{
    CUlinkState ls;
    void *cubin = NULL;
    size_t size = 0;
    if (!cu.cuLinkCreate_v2 || !cu.cuLinkAddData_v2 || !cu.cuLinkComplete || !cu.cuLinkDestroy ||
        cu.cuLinkCreate_v2(0, NULL, NULL, &ls) != CUDA_SUCCESS)
        return ptx;
    if (cu.cuLinkAddData_v2(ls, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "vecadd.ptx", 0, NULL,
                            NULL) == CUDA_SUCCESS &&
        cu.cuLinkComplete(ls, &cubin, &size) == CUDA_SUCCESS && (cubin_copy = malloc(size)))
        memcpy(cubin_copy, cubin, size);
    cu.cuLinkDestroy(ls);
    return cubin_copy ? cubin_copy : (const void *)ptx;
}

static void launch(CUfunction f, CUdeviceptr a, CUdeviceptr b, CUdeviceptr o, int n)
{
    void *p[] = {&a, &b, &o, &n};
    CHECK(cu.cuLaunchKernel(f, (unsigned)(n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, p, NULL));
}

/* Does o hold a + b? */
static int right(CUdeviceptr o, const float *a, const float *b, int n)
{
    float *h = malloc((size_t)n * sizeof *h);
    CHECK(cu.cuMemcpyDtoH_v2(h, o, (size_t)n * sizeof *h));
    int ok = 1;
    for (int i = 0; i < n; i++)
        if (h[i] != a[i] + b[i]) ok = 0;
    free(h);
    return ok;
}

int main(int argc, char **argv)
{
    long cycles = 100000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            cycles = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [-n CYCLES]\n", argv[0]);
            return 2;
        }
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_churn: %s\n", dlerror());
        return 1;
    }
#define GET(name, type)                                                                            \
    if (!(cu.name = (type)dlsym(h, #name))) {                                                      \
        fprintf(stderr, "bench_churn: the driver has no %s\n", #name);                             \
        return 1;                                                                                  \
    }
    API(GET)
#undef GET
#define GET_OPT(name, type) cu.name = (type)dlsym(h, #name);
    LINK_API(GET_OPT)
#undef GET_OPT
    CHECK(cu.cuInit(0));
    CUdevice dev;
    CHECK(cu.cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CHECK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cu.cuCtxSetCurrent(ctx));

    enum { N = 1024 };
    static float ha[N], hb[N];
    for (int i = 0; i < N; i++)
        ha[i] = (float)i, hb[i] = (float)(2 * i + 1);
    CUdeviceptr a, b, o1, o2;
    CHECK(cu.cuMemAlloc_v2(&a, sizeof ha));
    CHECK(cu.cuMemAlloc_v2(&b, sizeof hb));
    CHECK(cu.cuMemAlloc_v2(&o1, sizeof ha));
    CHECK(cu.cuMemAlloc_v2(&o2, sizeof ha));
    CHECK(cu.cuMemcpyHtoD_v2(a, ha, sizeof ha));
    CHECK(cu.cuMemcpyHtoD_v2(b, hb, sizeof hb));

    const void *image = make_image();
    CUmodule kept;
    CUfunction fk;
    CHECK(cu.cuModuleLoadData(&kept, image));
    CHECK(cu.cuModuleGetFunction(&fk, kept, "vecadd"));
    launch(fk, a, b, o1, N);
    CHECK(cu.cuCtxSynchronize());

    long warm = rss_kb();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < cycles; i++) {
        CUmodule m;
        CUfunction f;
        CHECK(cu.cuModuleLoadData(&m, image));
        CHECK(cu.cuModuleGetFunction(&f, m, "vecadd"));
        launch(f, a, b, o2, N);
        CHECK(cu.cuCtxSynchronize());
        CHECK(cu.cuModuleUnload(m));
        if (i == cycles / 10) warm = rss_kb();
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(cu.cuMemcpyHtoD_v2(o1, hb, sizeof hb)); /* the kept kernel must write it again */
    launch(fk, a, b, o1, N);
    CHECK(cu.cuCtxSynchronize());
    int ok = right(o1, ha, hb, N) && (cycles == 0 || right(o2, ha, hb, N));
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                (double)(cycles > 0 ? cycles : 1);
    printf("cycles=%ld ns_per_cycle=%.0f rss_kb_warm=%ld rss_kb_end=%ld ok=%d image=%s\n", cycles,
           ns, warm, rss_kb(), ok, image == (const void *)ptx ? "ptx" : "cubin");
    CHECK(cu.cuModuleUnload(kept));
    return ok ? 0 : 1;
}
