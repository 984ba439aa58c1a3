/*
 * nulldrv: a stand-in libcuda.so.1 whose launches do nothing, for measuring what the shim
 * itself costs per launch in nanoseconds.
 *
 * The simulated driver (tests/simdriver) runs each kernel on the CPU behind a lock, which
 * costs ~200 ns and varies by more than the shim's whole budget; here cuLaunchKernel
 * returns at once, so the difference between a run with and without the shim is the
 * shim's own time. It implements exactly what bench_launch and the shim's launch path
 * ask for (every other entry point cuGetProcAddress hands out succeeds and does nothing):
 * one device, a library holding one kernel "vecadd" (a, b, out: pointers; n: int) as a
 * CUkernel, whose CUfunction calls fail with CUDA_ERROR_INVALID_HANDLE like the real
 * driver's. Not for tuning: it has no events worth the name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

static int ctx_token, lib_token, kernel_token, func_token, stream_token;
/* Per thread: a shared counter would be one cache line every launching thread writes, and
 * the threads' "direct" figure would measure that line's bouncing, not a launch. */
static __thread unsigned long long launches __attribute__((tls_model("initial-exec")));

static CUresult nop(void)
{
    return CUDA_SUCCESS;
}
static CUresult n_cuInit(unsigned f)
{
    (void)f;
    return CUDA_SUCCESS;
}
static CUresult n_cuGetErrorName(CUresult r, const char **s)
{
    (void)r;
    *s = "CUDA_ERROR (null driver)";
    return CUDA_SUCCESS;
}
static CUresult n_cuDeviceGet(CUdevice *d, int o)
{
    *d = o;
    return o == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
static CUresult n_cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}
static CUresult n_cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "Null GPU", (size_t)len);
    return CUDA_SUCCESS;
}
static CUresult n_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    default: *v = 1024;
    }
    return CUDA_SUCCESS;
}
static CUresult n_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)&ctx_token;
    return CUDA_SUCCESS;
}
static CUresult n_cuCtxGetDevice(CUdevice *d)
{
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult n_cuMemAlloc(CUdeviceptr *p, size_t n)
{
    void *m = calloc(1, n ? n : 1);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult n_cuMemFree(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}
static CUresult n_cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    memcpy(d, (void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
static CUresult n_cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)p, v, n);
    return CUDA_SUCCESS;
}
static CUresult n_cuStreamCreate(CUstream *s, unsigned f)
{
    (void)f;
    *s = (CUstream)&stream_token;
    return CUDA_SUCCESS;
}
static CUresult n_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s;
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}
static CUresult n_cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *o, void **ov,
                                    unsigned n, CUlibraryOption *lo, void **lv, unsigned ln)
{
    (void)code, (void)o, (void)ov, (void)n, (void)lo, (void)lv, (void)ln;
    *l = (CUlibrary)&lib_token;
    return CUDA_SUCCESS;
}
static CUresult n_cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
    (void)l;
    if (strcmp(name, "vecadd") != 0) return CUDA_ERROR_NOT_FOUND;
    *k = (CUkernel)&kernel_token;
    return CUDA_SUCCESS;
}
static CUresult n_cuKernelGetName(const char **name, CUkernel k)
{
    if (k != (CUkernel)&kernel_token) return CUDA_ERROR_INVALID_HANDLE;
    *name = "vecadd";
    return CUDA_SUCCESS;
}
static CUresult n_cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
    static const size_t offs[] = {0, 8, 16, 24}, sizes[] = {8, 8, 8, 4};
    if (k != (CUkernel)&kernel_token) return CUDA_ERROR_INVALID_HANDLE;
    if (i >= 4) return CUDA_ERROR_INVALID_VALUE;
    *off = offs[i];
    *size = sizes[i];
    return CUDA_SUCCESS;
}
static CUresult n_cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    (void)k;
    *f = (CUfunction)&func_token;
    return CUDA_SUCCESS;
}
static CUresult n_cuFuncGetName(const char **name, CUfunction f)
{
    (void)name, (void)f;
    return CUDA_ERROR_INVALID_HANDLE; /* a CUkernel is not a CUfunction, as on the real driver */
}
static CUresult n_cuFuncGetParamInfo(CUfunction f, size_t i, size_t *o, size_t *s)
{
    (void)f, (void)i, (void)o, (void)s;
    return CUDA_ERROR_INVALID_HANDLE;
}
static CUresult n_cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK           ? 1024
         : a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 49152
                                                                : 0;
    return CUDA_SUCCESS;
}
static CUresult n_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m)
{
    *m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    return CUDA_SUCCESS;
}
static CUresult n_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned sh, CUstream s, void **p,
                                 void **e)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)s;
    (void)p, (void)e;
    launches++;
    return CUDA_SUCCESS;
}

static const struct {
    const char *name;
    void *fn;
} table[] = {
#define E(n)                                                                                       \
    {                                                                                              \
#n, (void *)n_##n                                                                          \
    }
    E(cuInit),
    E(cuGetErrorName),
    E(cuDeviceGet),
    E(cuDeviceGetCount),
    E(cuDeviceGetName),
    E(cuDeviceGetAttribute),
    E(cuDevicePrimaryCtxRetain),
    E(cuCtxGetDevice),
    E(cuMemAlloc),
    E(cuMemFree),
    E(cuMemcpyDtoH),
    E(cuMemsetD8),
    E(cuStreamCreate),
    E(cuStreamIsCapturing),
    E(cuLibraryLoadData),
    E(cuLibraryGetKernel),
    E(cuKernelGetName),
    E(cuKernelGetParamInfo),
    E(cuKernelGetFunction),
    E(cuFuncGetName),
    E(cuFuncGetParamInfo),
    E(cuFuncGetAttribute),
    E(cuThreadExchangeStreamCaptureMode),
    E(cuLaunchKernel),
#undef E
};

static CUresult lookup(const char *sym, void **pfn, CUdriverProcAddressQueryResult *st)
{
    if (!strcmp(sym, "cuGetProcAddress")) {
        extern CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
                                            CUdriverProcAddressQueryResult *);
        *pfn = (void *)cuGetProcAddress_v2;
    } else {
        *pfn = (void *)nop; /* everything else: succeeds, does nothing */
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            if (!strcmp(sym, table[i].name)) *pfn = table[i].fn;
    }
    if (st) *st = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *st)
{
    (void)ver, (void)flags;
    return lookup(sym, pfn, st);
}

/* For tests and curiosity: launches that reached this driver from the calling thread. */
EXPORT unsigned long long nulldrv_launches(void)
{
    return launches;
}
