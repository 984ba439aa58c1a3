/*
 * drvwrap: the trial helper's driver calls wrapped, counted and timed (see drvwrap.h).
 */
#include "drvwrap.h"

#include "clock.h"
#include "driver.h"
#include "drvtime.h"

/* The real entry points, typed as driver.h types xmt_drv's. */
static struct {
#define XMT_DRVTIME_REAL(name)                                                                     \
    __typeof__(xmt_drv.name) name; /* NOLINT(bugprone-macro-parentheses) */
    XMT_DRVTIME_FUNCS(XMT_DRVTIME_REAL)
#undef XMT_DRVTIME_REAL
} real;

/* One wrapper per entry point, with the driver's own parameter list (cudaTypedefs.h's
 * PFN_<name>_v<version>, as driver_syms.h asks for it): the assignment in
 * xmt_drvtime_install checks that each matches. (XMT_DT_##name is pasted here, before
 * cuda.h's #define of cuMemAlloc as cuMemAlloc_v2 could expand it.) */
#define WRAP(name, params, args)                                                                   \
    static CUresult CUDAAPI timed_##name params                                                    \
    {                                                                                              \
        double t0 = xmt_now_ms();                                                                  \
        CUresult r = real.name args;                                                               \
        xmt_drvtime_add(XMT_DT_##name, xmt_now_ms() - t0);                                         \
        return r;                                                                                  \
    }

WRAP(cuStreamSynchronize, (CUstream s), (s))
WRAP(cuCtxSynchronize, (void), ())
WRAP(cuEventSynchronize, (CUevent e), (e))
WRAP(cuMemAlloc, (CUdeviceptr * p, size_t n), (p, n))
WRAP(cuMemFree, (CUdeviceptr p), (p))
WRAP(cuMemcpyDtoDAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
WRAP(cuMemcpyDtoHAsync, (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
WRAP(cuMemcpyDtoH, (void *d, CUdeviceptr s, size_t n), (d, s, n))
WRAP(cuMemcpyHtoD, (CUdeviceptr d, const void *s, size_t n), (d, s, n))
WRAP(cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream st), (d, v, n, st))
WRAP(cuLaunchKernel,
     (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
      unsigned shared, CUstream st, void **params, void **extra),
     (f, gx, gy, gz, bx, by, bz, shared, st, params, extra))
WRAP(cuModuleLoadData, (CUmodule * m, const void *image), (m, image))
WRAP(cuModuleLoadDataEx,
     (CUmodule * m, const void *image, unsigned n, CUjit_option *opts, void **vals),
     (m, image, n, opts, vals))
WRAP(cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name), (f, m, name))
WRAP(cuFuncLoad, (CUfunction f), (f))
WRAP(cuStreamQuery, (CUstream s), (s))
WRAP(cuEventQuery, (CUevent e), (e))
WRAP(cuEventRecord, (CUevent e, CUstream s), (e, s))
WRAP(cuEventCreate, (CUevent * e, unsigned flags), (e, flags))
WRAP(cuEventDestroy, (CUevent e), (e))
WRAP(cuEventElapsedTime, (float *ms, CUevent a, CUevent b), (ms, a, b))
WRAP(cuPointerGetAttribute, (void *data, CUpointer_attribute a, CUdeviceptr p), (data, a, p))
WRAP(cuMemGetAddressRange, (CUdeviceptr * base, size_t *size, CUdeviceptr p), (base, size, p))
WRAP(cuMemGetInfo, (size_t * free_b, size_t *total), (free_b, total))
WRAP(cuFuncGetAttribute, (int *v, CUfunction_attribute a, CUfunction f), (v, a, f))

void xmt_drvtime_install(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    xmt_drvtime_start();
#define XMT_DRVTIME_SWAP(name)                                                                     \
    if (xmt_drv.name) {                                                                            \
        real.name = xmt_drv.name;                                                                  \
        xmt_drv.name = timed_##name;                                                               \
    }
    XMT_DRVTIME_FUNCS(XMT_DRVTIME_SWAP)
#undef XMT_DRVTIME_SWAP
}
