/*
 * driver_api -- a driver-API program (no CUDA runtime), linked with -lcuda.
 *
 * Loads the module dmod (embedded by build.sh) three ways: cuModuleLoadData on the
 * sm_90 cubin, cuModuleLoadData on the PTX (JIT-compiled by the driver), and
 * cuLibraryLoadData on the cubin (its CUkernel handles are launched cast to
 * CUfunction). Launches with cuLaunchKernel through kernelParams and through
 * `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER, packed by hand; the packing is checked
 * against cuFuncGetParamInfo first), and with cuLaunchKernelEx; on the NULL
 * stream and on a created stream.
 *
 * Checks: every driver call's return code; the hand-packed layouts; outputs to
 * argv[1]; prints LAUNCHES n.
 */
#define XMT_DRIVER_ONLY
#include "common.h"

#include <cstddef>
#include <cuda.h>

#include "dmod_cubin.h" /* dmod_cubin[], dmod_cubin_len (xxd -i) */
#include "dmod_ptx.h"   /* dmod_ptx[] (NUL-terminated), dmod_ptx_len */

#define CU(call)                                                                  \
    do {                                                                          \
        CUresult cu_e_ = (call);                                                  \
        if (cu_e_ != CUDA_SUCCESS) {                                              \
            const char *cu_s_ = nullptr;                                          \
            cuGetErrorString(cu_e_, &cu_s_);                                      \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,    \
                    #call, cu_s_ ? cu_s_ : "?", (int)cu_e_);                      \
            exit(2);                                                              \
        }                                                                         \
    } while (0)

#define CU_LAUNCH(call)                                                           \
    do {                                                                          \
        CU(call);                                                                 \
        g_launches.fetch_add(1, std::memory_order_relaxed);                       \
    } while (0)

/* The packed argument buffers, laid out as the kernels' parameters. */
struct SaxpyArgs {
    CUdeviceptr y, x;
    float a;
    int n;
};
struct AxpyDArgs {
    int n;
    double a;
    CUdeviceptr x, y;
};
struct GatherArgs {
    CUdeviceptr idx, src, dst;
    unsigned short scale;
    char bias;
    int n;
};

/* Compare a hand-packed layout with the driver's idea of the parameters. */
static void check_layout(CUfunction f, const char *name, const size_t *off, const size_t *sz, int np)
{
    for (int i = 0; i < np; ++i) {
        size_t o = 0, s = 0;
        CU(cuFuncGetParamInfo(f, i, &o, &s));
        if (o != off[i] || s != sz[i]) {
            fprintf(stderr, "%s: parameter %d at %zu size %zu, packed at %zu size %zu\n", name, i, o, s, off[i],
                    sz[i]);
            exit(2);
        }
    }
}

template <typename T> static CUdeviceptr upload(const std::vector<T> &h)
{
    CUdeviceptr d = 0;
    CU(cuMemAlloc(&d, h.size() * sizeof(T)));
    CU(cuMemcpyHtoD(d, h.data(), h.size() * sizeof(T)));
    return d;
}

template <typename T> static void download(Out &out, CUdeviceptr d, size_t count)
{
    std::vector<T> h(count);
    CU(cuMemcpyDtoH(h.data(), d, count * sizeof(T)));
    out.put(h);
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    CU(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));

    CUmodule mcubin, mptx;
    CUlibrary lib;
    CU(cuModuleLoadData(&mcubin, dmod_cubin));
    CU(cuModuleLoadData(&mptx, dmod_ptx));
    CU(cuLibraryLoadData(&lib, dmod_cubin, nullptr, nullptr, 0, nullptr, nullptr, 0));

    CUfunction saxpy_c, saxpy_p, axpy_c, axpy_p, gather_p, idx2d_c;
    CU(cuModuleGetFunction(&saxpy_c, mcubin, "saxpy_f"));
    CU(cuModuleGetFunction(&saxpy_p, mptx, "saxpy_f"));
    CU(cuModuleGetFunction(&axpy_c, mcubin, "axpy_d"));
    CU(cuModuleGetFunction(&axpy_p, mptx, "axpy_d"));
    CU(cuModuleGetFunction(&gather_p, mptx, "gather_scale"));
    CU(cuModuleGetFunction(&idx2d_c, mcubin, "add_index2d"));
    CUkernel k_saxpy, k_gather;
    CU(cuLibraryGetKernel(&k_saxpy, lib, "saxpy_f"));
    CU(cuLibraryGetKernel(&k_gather, lib, "gather_scale"));

    {
        const size_t o1[] = {offsetof(SaxpyArgs, y), offsetof(SaxpyArgs, x), offsetof(SaxpyArgs, a),
                             offsetof(SaxpyArgs, n)};
        const size_t s1[] = {8, 8, 4, 4};
        check_layout(saxpy_p, "saxpy_f", o1, s1, 4);
        const size_t o2[] = {offsetof(AxpyDArgs, n), offsetof(AxpyDArgs, a), offsetof(AxpyDArgs, x),
                             offsetof(AxpyDArgs, y)};
        const size_t s2[] = {4, 8, 8, 8};
        check_layout(axpy_p, "axpy_d", o2, s2, 4);
        const size_t o3[] = {offsetof(GatherArgs, idx), offsetof(GatherArgs, src), offsetof(GatherArgs, dst),
                             offsetof(GatherArgs, scale), offsetof(GatherArgs, bias), offsetof(GatherArgs, n)};
        const size_t s3[] = {8, 8, 8, 2, 1, 4};
        check_layout(gather_p, "gather_scale", o3, s3, 6);
    }

    const int n = 1 << 20;
    std::vector<float> hx(n), hy(n);
    std::vector<double> hdx(n), hdy(n);
    std::vector<int> hidx(n);
    fill_real(hx, 31);
    fill_real(hy, 32);
    fill_real(hdx, 33);
    fill_real(hdy, 34);
    fill_int(hidx, 35, n - 1); /* 1..n-1 */
    CUdeviceptr x = upload(hx), y = upload(hy), dx = upload(hdx), dy = upload(hdy), idx = upload(hidx);
    CUdeviceptr g;
    CU(cuMemAlloc(&g, (size_t)n * 4));
    const int rows = 1024, cols = 1024; /* reuses y as a rows x cols matrix */

    CUstream s;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    for (int rep = 0; rep < 4; ++rep) {
        /* kernelParams, cubin module, NULL stream. */
        float a = 0.5f;
        int nn = n;
        void *p1[] = {&y, &x, &a, &nn};
        CU_LAUNCH(cuLaunchKernel(saxpy_c, 264, 1, 1, 256, 1, 1, 0, nullptr, p1, nullptr));

        /* extra-packed, PTX module, NULL stream. */
        SaxpyArgs sa = {y, x, -0.25f, n};
        size_t sa_size = sizeof sa;
        void *e1[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &sa, CU_LAUNCH_PARAM_BUFFER_SIZE, &sa_size,
                      CU_LAUNCH_PARAM_END};
        CU_LAUNCH(cuLaunchKernel(saxpy_p, 128, 1, 1, 512, 1, 1, 0, nullptr, nullptr, e1));

        /* CUkernel from a library, cast to CUfunction, kernelParams. */
        float a3 = 1.5f;
        void *p3[] = {&y, &x, &a3, &nn};
        CU_LAUNCH(cuLaunchKernel((CUfunction)k_saxpy, 1000, 1, 1, 128, 1, 1, 0, nullptr, p3, nullptr));

        /* extra-packed with padding (int, double), created stream; then kernelParams. */
        AxpyDArgs da = {n, 0.75, dx, dy};
        size_t da_size = sizeof da;
        void *e2[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &da, CU_LAUNCH_PARAM_BUFFER_SIZE, &da_size,
                      CU_LAUNCH_PARAM_END};
        CU_LAUNCH(cuLaunchKernel(axpy_p, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, nullptr, e2));
        double a4 = -0.5;
        void *p4[] = {&nn, &a4, &dx, &dy};
        CU_LAUNCH(cuLaunchKernel(axpy_c, (n + 127) / 128, 1, 1, 128, 1, 1, 0, s, p4, nullptr));
        CU(cuStreamSynchronize(s));

        /* 2-byte and 1-byte arguments, extra-packed, then CUkernel with kernelParams. */
        GatherArgs ga = {idx, y, g, (unsigned short)3, (char)-2, n};
        size_t ga_size = sizeof ga;
        void *e3[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &ga, CU_LAUNCH_PARAM_BUFFER_SIZE, &ga_size,
                      CU_LAUNCH_PARAM_END};
        CU_LAUNCH(cuLaunchKernel(gather_p, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, e3));
        unsigned short sc = 2;
        char bias = 5;
        void *p5[] = {&idx, &g, &x, &sc, &bias, &nn};
        CU_LAUNCH(cuLaunchKernel((CUfunction)k_gather, (n + 511) / 512, 1, 1, 512, 1, 1, 0, nullptr, p5, nullptr));
        CU(cuCtxSynchronize());

        /* cuLaunchKernelEx without attributes, 2-D grid. */
        CUlaunchConfig cfg = {};
        cfg.gridDimX = cols / 32;
        cfg.gridDimY = rows / 8;
        cfg.gridDimZ = 1;
        cfg.blockDimX = 32;
        cfg.blockDimY = 8;
        cfg.blockDimZ = 1;
        cfg.sharedMemBytes = 0;
        cfg.hStream = s;
        cfg.attrs = nullptr;
        cfg.numAttrs = 0;
        int r = rows, c = cols;
        void *p6[] = {&y, &r, &c};
        CU_LAUNCH(cuLaunchKernelEx(&cfg, idx2d_c, p6, nullptr));
        CU(cuStreamSynchronize(s));
    }
    CU(cuCtxSynchronize());

    download<float>(out, x, n);
    download<float>(out, y, n);
    download<float>(out, g, n);
    download<double>(out, dy, n);

    for (CUdeviceptr p : {x, y, dx, dy, idx, g}) CU(cuMemFree(p));
    CU(cuStreamDestroy(s));
    CU(cuModuleUnload(mcubin));
    CU(cuModuleUnload(mptx));
    CU(cuLibraryUnload(lib));
    CU(cuDevicePrimaryCtxRelease(dev));
    out.close();
    finish();
    return 0;
}
