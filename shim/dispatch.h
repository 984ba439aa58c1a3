/*
 * dispatch: where each launch goes, whatever entry point it came through.
 *
 * The fast path — a kernel no policy names — is inline in the wrappers (hook.c): look
 * the handle up, count, call the real pointer. Everything else builds an xmt_launch
 * and goes to xmt_dispatch_slow: first sight of a handle makes its record (kernels.c),
 * then discover mode records the shape (discover.c) and tune/replay go to the tuner.
 */
#ifndef XMT_DISPATCH_H
#define XMT_DISPATCH_H

#include "counters.h"
#include "kernels.h"
#include "launch.h"

/* Everything but the fast path. k may be NULL (not seen yet, or forgotten). */
CUresult xmt_dispatch_slow(xmt_kernel *k, xmt_launch *l);

/* The slow halves, out of line so that the inline fast paths stay small: with their
 * arguments untouched, a pass-through launch ends in a tail jump to the driver. */
CUresult xmt_dispatch_launch_slow(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                                  unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                  unsigned shared, CUstream s, void **params, void **extra)
    __attribute__((noinline, cold));
CUresult xmt_dispatch_ex_slow(void *real, int ptsz, const CUlaunchConfig *cfg, CUfunction f,
                              void **params, void **extra) __attribute__((noinline, cold));
CUresult xmt_dispatch_coop_slow(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy,
                                unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                CUstream s, void **params) __attribute__((noinline, cold));

/* Is this launch one to pass straight through: a known kernel with nothing to do? (The
 * shim's own launches never come through here — the tuner calls the driver's pointers
 * directly — and the slow halves check xmt_in_shim for anything else.) */
static inline __attribute__((always_inline)) int xmt_dispatch_is_plain(CUfunction f)
{
    xmt_kernel *k = xmt_kernels_find(f);
    return __builtin_expect(k != NULL && k->passthrough, 1);
}

static inline __attribute__((always_inline)) CUresult
xmt_dispatch_launch(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s,
                    void **params, void **extra)
{
    if (xmt_dispatch_is_plain(f)) {
        xmt_count_launch();
        return ((xmt_pfn_launch)real)(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
    }
    return xmt_dispatch_launch_slow(real, ptsz, f, gx, gy, gz, bx, by, bz, shared, s, params,
                                    extra);
}

static inline __attribute__((always_inline)) CUresult xmt_dispatch_ex(void *real, int ptsz,
                                                                      const CUlaunchConfig *cfg,
                                                                      CUfunction f, void **params,
                                                                      void **extra)
{
    if (xmt_dispatch_is_plain(f)) {
        xmt_count_launch();
        return ((xmt_pfn_launch_ex)real)(cfg, f, params, extra);
    }
    return xmt_dispatch_ex_slow(real, ptsz, cfg, f, params, extra);
}

static inline __attribute__((always_inline)) CUresult
xmt_dispatch_coop(void *real, int ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s, void **params)
{
    if (xmt_dispatch_is_plain(f)) {
        xmt_count_launch();
        return ((xmt_pfn_launch_coop)real)(f, gx, gy, gz, bx, by, bz, shared, s, params);
    }
    return xmt_dispatch_coop_slow(real, ptsz, f, gx, gy, gz, bx, by, bz, shared, s, params);
}

#endif
