/*
 * launch: what happens to one kernel launch, whatever entry point it came through.
 *
 * The three launch shapes (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel,
 * each also _ptsz) meet here. The fast path — a kernel no policy names — is inline in
 * the wrappers: look the handle up, count, call the real pointer. Everything else builds
 * an xmt_launch and goes to xmt_launch_slow.
 */
#ifndef XMT_LAUNCH_H
#define XMT_LAUNCH_H

#include <cuda.h>

#include "kernels.h"
#include "shim.h"

typedef enum { XMT_K_LAUNCH = 0, XMT_K_EX, XMT_K_COOP } xmt_launch_kind;

typedef struct xmt_launch {
    int kind;   /* xmt_launch_kind */
    int ptsz;   /* came through a _ptsz entry point: stream 0 is the per-thread stream */
    void *real; /* the exact driver entry point the program would have called */
    CUfunction f;
    unsigned grid[3], block[3], shared;
    CUstream stream;
    void **params;
    void **extra;
    const CUlaunchConfig *cfg; /* XMT_K_EX only */
} xmt_launch;

typedef CUresult (*xmt_pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*xmt_pfn_launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*xmt_pfn_launch_coop)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void **);

/* Calls the real entry point with the launch exactly as the program made it. */
CUresult xmt_launch_call(const xmt_launch *l);

/* Everything but the fast path. k may be NULL (not seen yet, or forgotten). */
CUresult xmt_launch_slow(xmt_kernel *k, xmt_launch *l);

/* Does an Ex launch carry an attribute that the tuner must not touch (cooperative,
 * clusters, programmatic launch, ...)? Benign ones (priority, access policy) do not. */
int xmt_launch_has_blocking_attrs(const CUlaunchConfig *cfg);

/* The stream the shim's own work for this launch must use: the launch's stream, or the
 * per-thread default stream when stream 0 came through a _ptsz entry point. */
static inline CUstream xmt_launch_stream(const xmt_launch *l)
{
    CUstream s = l->kind == XMT_K_EX ? l->cfg->hStream : l->stream;
    return (!s && l->ptsz) ? CU_STREAM_PER_THREAD : s;
}

static inline CUresult xmt_launch_fast(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                                       unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                       unsigned shared, CUstream s, void **params, void **extra)
{
    extern __thread int xmt_in_shim __attribute__((tls_model("initial-exec")));
    xmt_kernel *k = xmt_kernels_find(f);
    if (__builtin_expect(k != NULL && k->passthrough && !xmt_in_shim, 1)) {
        xmt_count_launch();
        return ((xmt_pfn_launch)real)(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
    }
    if (xmt_in_shim)
        return ((xmt_pfn_launch)real)(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
    xmt_launch l = {XMT_K_LAUNCH, ptsz, real,   f,     {gx, gy, gz}, {bx, by, bz},
                    shared,       s,    params, extra, NULL};
    return xmt_launch_slow(k, &l);
}

static inline CUresult xmt_launch_ex_fast(void *real, int ptsz, const CUlaunchConfig *cfg,
                                          CUfunction f, void **params, void **extra)
{
    extern __thread int xmt_in_shim __attribute__((tls_model("initial-exec")));
    xmt_kernel *k = xmt_kernels_find(f);
    if (__builtin_expect(k != NULL && k->passthrough && !xmt_in_shim, 1)) {
        xmt_count_launch();
        return ((xmt_pfn_launch_ex)real)(cfg, f, params, extra);
    }
    if (xmt_in_shim || !cfg) return ((xmt_pfn_launch_ex)real)(cfg, f, params, extra);
    xmt_launch l = {XMT_K_EX,
                    ptsz,
                    real,
                    f,
                    {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                    {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ},
                    cfg->sharedMemBytes,
                    cfg->hStream,
                    params,
                    extra,
                    cfg};
    return xmt_launch_slow(k, &l);
}

static inline CUresult xmt_launch_coop_fast(void *real, int ptsz, CUfunction f, unsigned gx,
                                            unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                            unsigned bz, unsigned shared, CUstream s, void **params)
{
    extern __thread int xmt_in_shim __attribute__((tls_model("initial-exec")));
    xmt_kernel *k = xmt_kernels_find(f);
    if (__builtin_expect(k != NULL && k->passthrough && !xmt_in_shim, 1)) {
        xmt_count_launch();
        return ((xmt_pfn_launch_coop)real)(f, gx, gy, gz, bx, by, bz, shared, s, params);
    }
    if (xmt_in_shim)
        return ((xmt_pfn_launch_coop)real)(f, gx, gy, gz, bx, by, bz, shared, s, params);
    xmt_launch l = {XMT_K_COOP, ptsz, real,   f,    {gx, gy, gz}, {bx, by, bz},
                    shared,     s,    params, NULL, NULL};
    return xmt_launch_slow(k, &l);
}

#endif
