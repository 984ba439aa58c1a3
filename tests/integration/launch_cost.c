/*
 * launch_cost: a launch loop whose instructions per launch callgrind counts, for the
 * pass-through cost test (launch_cost.sh; issue 48, item 5).
 *
 * It reaches the driver as the CUDA runtime does (dlopen, one dlsym of
 * cuGetProcAddress_v2, everything else through cuGetProcAddress at 12000) and launches
 * the simulated vecadd(a, b, out, n) with grid 1 and block -b (default 1), whose n
 * cycles through -v values (1, 2, .., V, 1, ..: V = 1 keeps it fixed; a large V makes
 * every launch's scalar new), first WARMUP times (-w: where the shim decides, tunes,
 * reaches its caps), then COUNT times (-n) inside launch_loop_a and 2 x COUNT times inside
 * launch_loop_b, the functions callgrind counts (see warm_loop): instructions per launch
 * = (Ir(b) - Ir(a)) / COUNT, so that whatever a loop costs once cancels.
 *
 *   launch_cost [-n COUNT] [-w WARMUP] [-v VALUES] [-b BLOCK] [-e ENTRY] [-f]
 *
 * ENTRY: launch (cuLaunchKernel), ptsz (cuLaunchKernel with the per-thread-stream flag:
 * cuLaunchKernel_ptsz), ex (cuLaunchKernelEx), exptsz (its _ptsz). -f launches a
 * CUfunction from cuModuleGetFunction instead of the CUkernel cast to CUfunction that
 * the runtime launches. Exits 1 with a message on any failed driver call.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

typedef CUresult (*pfn_gp2)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*pfn_launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);

static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set)(CUcontext);
    CUresult (*ctx_sync)(void);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*memset8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*lib_load)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
                         CUlibraryOption *, void **, unsigned);
    CUresult (*lib_kernel)(CUkernel *, CUlibrary, const char *);
    CUresult (*mod_load)(CUmodule *, const void *);
    CUresult (*mod_function)(CUfunction *, CUmodule, const char *);
    pfn_launch launch;
    pfn_launch_ex launch_ex;
} cu;

static void check(CUresult r, const char *what, int line)
{
    if (r == CUDA_SUCCESS) return;
    fprintf(stderr, "launch_cost.c:%d: %s failed (%d)\n", line, what, (int)r);
    exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

static unsigned block = 1;
static int values = 1, use_ex;
static CUfunction fn;
static CUdeviceptr a, b, out;
static int n_arg;
static void *params[4] = {&a, &b, &out, &n_arg};

/* The launches: nothing else, n the next of its values at each. Inlined into the three
 * loops below, whose names callgrind's --toggle-collect takes. */
static inline __attribute__((always_inline)) void launches(long count)
{
    CUlaunchConfig c = {.gridDimX = 1,
                        .gridDimY = 1,
                        .gridDimZ = 1,
                        .blockDimX = block,
                        .blockDimY = 1,
                        .blockDimZ = 1};
    static int i;
    for (long j = 0; j < count; j++) {
        n_arg = 1 + i;
        if (++i == values) i = 0;
        if (use_ex)
            CHECK(cu.launch_ex(&c, fn, params, NULL));
        else
            CHECK(cu.launch(fn, 1, 1, 1, block, 1, 1, 0, NULL, params, NULL));
    }
}
/* The warm-up (not counted), then the two counted loops: run under
 * `--toggle-collect=launch_loop_a --toggle-collect=launch_loop_b --dump-before=launch_loop_b`
 * the first dump counts loop a alone, the second loop b. */
__attribute__((noinline)) void warm_loop(long count)
{
    launches(count);
}
__attribute__((noinline)) void launch_loop_a(long count)
{
    launches(count);
}
__attribute__((noinline)) void launch_loop_b(long count)
{
    launches(count);
}

static long arg_long(const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < lo || v > hi) {
        fprintf(stderr, "launch_cost: bad number %s (%ld..%ld)\n", s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long count = 1000, warmup = 100;
    const char *entry = "launch";
    int function = 0, wait_idle = 1, c;
    while ((c = getopt(argc, argv, "n:w:v:b:e:fW")) != -1) {
        switch (c) {
        case 'n': count = arg_long(optarg, 0, 1000000000); break;
        case 'w': warmup = arg_long(optarg, 0, 1000000000); break;
        case 'v': values = (int)arg_long(optarg, 1, 1000000); break;
        case 'b': block = (unsigned)arg_long(optarg, 1, 1024); break;
        case 'e': entry = optarg; break;
        case 'f': function = 1; break;
        case 'W': wait_idle = 0; break;
        default:
            fprintf(stderr, "usage: launch_cost [-n COUNT] [-w WARMUP] [-v VALUES] [-b BLOCK] "
                            "[-e launch|ptsz|ex|exptsz] [-f] [-W]\n");
            return 2;
        }
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    pfn_gp2 first = h ? (pfn_gp2)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!first) {
        fprintf(stderr, "launch_cost: no libcuda.so.1 with cuGetProcAddress_v2\n");
        return 1;
    }
    CUdriverProcAddressQueryResult st;
    pfn_gp2 gp = NULL;
    CHECK(first("cuGetProcAddress", (void **)&gp, 12000, 0, &st));
#define GET(field, name) CHECK(gp(name, (void **)&cu.field, 12000, 0, &st))
    GET(init, "cuInit");
    GET(device_get, "cuDeviceGet");
    GET(ctx_retain, "cuDevicePrimaryCtxRetain");
    GET(ctx_set, "cuCtxSetCurrent");
    GET(ctx_sync, "cuCtxSynchronize");
    GET(mem_alloc, "cuMemAlloc");
    GET(memset8, "cuMemsetD8");
    GET(lib_load, "cuLibraryLoadData");
    GET(lib_kernel, "cuLibraryGetKernel");
    GET(mod_load, "cuModuleLoadData");
    GET(mod_function, "cuModuleGetFunction");
#undef GET
    int ptsz = !strcmp(entry, "ptsz") || !strcmp(entry, "exptsz");
    use_ex = !strcmp(entry, "ex") || !strcmp(entry, "exptsz");
    if (!ptsz && !use_ex && strcmp(entry, "launch")) {
        fprintf(stderr, "launch_cost: unknown entry %s\n", entry);
        return 2;
    }
    cuuint64_t flags = ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
    if (use_ex)
        CHECK(gp("cuLaunchKernelEx", (void **)&cu.launch_ex, 12000, flags, &st));
    else
        CHECK(gp("cuLaunchKernel", (void **)&cu.launch, 12000, flags, &st));

    CHECK(cu.init(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK(cu.device_get(&dev, 0));
    CHECK(cu.ctx_retain(&ctx, dev));
    CHECK(cu.ctx_set(ctx));
    static const char image[] = "simulated image";
    if (function) {
        CUmodule m;
        CHECK(cu.mod_load(&m, image));
        CHECK(cu.mod_function(&fn, m, "vecadd"));
    } else {
        CUlibrary lib;
        CUkernel k;
        CHECK(cu.lib_load(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
        CHECK(cu.lib_kernel(&k, lib, "vecadd"));
        fn = (CUfunction)k; /* as the runtime launches */
    }
    /* room for every n and for any config a candidate covers it with */
    size_t bytes = ((size_t)values + 4096) * 4;
    CHECK(cu.mem_alloc(&a, bytes));
    CHECK(cu.mem_alloc(&b, bytes));
    CHECK(cu.mem_alloc(&out, bytes));
    CHECK(cu.memset8(a, 0, bytes));
    CHECK(cu.memset8(b, 0, bytes));
    warm_loop(warmup);
    /* the shim's own threads' one-time work (the memory pool made ready at the module load,
     * auto's entries derived ahead) done before the counted loops: callgrind's collection is
     * global, so a thread at work during a loop counted its instructions into the launch's
     * (CI: +11 instead of +6 a launch, once) */
    int (*idle)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "xmatune_background_wait");
    if (idle && wait_idle) idle(60000); /* -W: a case whose background is held on purpose */
    launch_loop_a(count);
    launch_loop_b(2 * count);
    CHECK(cu.ctx_sync());
    printf("launch_cost: %ld + %ld + %ld launches\n", warmup, count, 2 * count);
    return 0;
}
