/*
 * dispatch: the slow path of a launch (see dispatch.h).
 */
#include "dispatch.h"

#include "discover.h"
#include "driver.h"
#include "options.h"
#include "tuner.h"

CUresult xmt_dispatch_launch_slow(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                                  unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                  unsigned shared, CUstream s, void **params, void **extra)
{
    if (xmt_in_shim)
        return ((xmt_pfn_launch)real)(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
    xmt_launch l = {XMT_K_LAUNCH, ptsz, real,   f,     {gx, gy, gz}, {bx, by, bz},
                    shared,       s,    params, extra, NULL};
    return xmt_dispatch_slow(xmt_kernels_find(f), &l);
}

CUresult xmt_dispatch_ex_slow(void *real, int ptsz, const CUlaunchConfig *cfg, CUfunction f,
                              void **params, void **extra)
{
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
    return xmt_dispatch_slow(xmt_kernels_find(f), &l);
}

CUresult xmt_dispatch_coop_slow(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                                unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                CUstream s, void **params)
{
    if (xmt_in_shim)
        return ((xmt_pfn_launch_coop)real)(f, gx, gy, gz, bx, by, bz, shared, s, params);
    xmt_launch l = {XMT_K_COOP, ptsz, real,   f,    {gx, gy, gz}, {bx, by, bz},
                    shared,     s,    params, NULL, NULL};
    return xmt_dispatch_slow(xmt_kernels_find(f), &l);
}

CUresult xmt_dispatch_slow(xmt_kernel *k, xmt_launch *l)
{
    xmt_count_launch();
    if (!k || atomic_load_explicit(&k->stale, memory_order_relaxed)) k = xmt_kernels_get(l->f);
    if (!k || k->passthrough) return xmt_launch_call(l);
    if (xmt_opt.mode == XMT_MODE_DISCOVER) {
        xmt_discover_record(k, l); /* counts k->launches (a memo hit: later, per thread) */
        return xmt_launch_call(l);
    }
    return xmt_tune_launch(k, l);
}
