/*
 * dispatch: where a launch goes (moved from launch.h).
 */
#ifndef XMT_DISPATCH_H
#define XMT_DISPATCH_H

#include "counters.h"
#include "kernels.h"
#include "launch.h"

/* Everything but the fast path. k may be NULL (not seen yet, or forgotten). */
CUresult xmt_launch_slow(xmt_kernel *k, xmt_launch *l);

/* The slow halves, out of line so that the inline fast paths stay small: with their
 * arguments untouched, a pass-through launch ends in a tail jump to the driver. */
CUresult xmt_launch_slow_args(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                              unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                              CUstream s, void **params, void **extra)
    __attribute__((noinline, cold));
CUresult xmt_launch_ex_slow_args(void *real, int ptsz, const CUlaunchConfig *cfg, CUfunction f,
                                 void **params, void **extra) __attribute__((noinline, cold));
CUresult xmt_launch_coop_slow_args(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                                   unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                   unsigned shared, CUstream s, void **params)
    __attribute__((noinline, cold));

/* Is this launch one to pass straight through: a known kernel with nothing to do? (The
 * shim's own launches never come through here — the tuner calls the driver's pointers
 * directly — and the slow halves check xmt_in_shim for anything else.) */
static inline __attribute__((always_inline)) int xmt_launch_is_plain(CUfunction f)
{
    xmt_kernel *k = xmt_kernels_find(f);
    return __builtin_expect(k != NULL && k->passthrough, 1);
}

static inline __attribute__((always_inline)) CUresult
xmt_launch_fast(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                void **extra)
{
    if (xmt_launch_is_plain(f)) {
        xmt_count_launch();
        return ((xmt_pfn_launch)real)(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
    }
    return xmt_launch_slow_args(real, ptsz, f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

static inline __attribute__((always_inline)) CUresult
xmt_launch_ex_fast(void *real, int ptsz, const CUlaunchConfig *cfg, CUfunction f, void **params,
                   void **extra)
{
    if (xmt_launch_is_plain(f)) {
        xmt_count_launch();
        return ((xmt_pfn_launch_ex)real)(cfg, f, params, extra);
    }
    return xmt_launch_ex_slow_args(real, ptsz, cfg, f, params, extra);
}

static inline __attribute__((always_inline)) CUresult
xmt_launch_coop_fast(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s,
                     void **params)
{
    if (xmt_launch_is_plain(f)) {
        xmt_count_launch();
        return ((xmt_pfn_launch_coop)real)(f, gx, gy, gz, bx, by, bz, shared, s, params);
    }
    return xmt_launch_coop_slow_args(real, ptsz, f, gx, gy, gz, bx, by, bz, shared, s, params);
}

#endif
