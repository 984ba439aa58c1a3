/*
 * dispatch: where each launch goes, whatever entry point it came through.
 *
 * The fast path — a kernel no policy names — is inline in the wrappers (hook.c): look
 * the handle up, count, call the real pointer. Everything else builds an xmt_launch
 * and goes to xmt_dispatch_slow: first sight of a handle makes its record (kernels.c),
 * then discover mode records the shape (discover.c) and tune/replay go to the tuner.
 * Both halves are generated for every launch signature from its row (signatures.h):
 * xmt_dispatch_<KIND> and xmt_dispatch_<KIND>_slow take (real, ptsz, the row's
 * parameters). Every launch row names its kernel handle `f`.
 */
#ifndef XMT_DISPATCH_H
#define XMT_DISPATCH_H

#include "counters.h"
#include "kernels.h"
#include "launch.h"
#include "signatures.h"

/* Everything but the fast path. k may be NULL (not seen yet, or forgotten). */
CUresult xmt_dispatch_slow(xmt_kernel *k, xmt_launch *l);

/* Is this launch one to pass straight through: a known kernel with nothing to do? (The
 * shim's own launches never come through here — the tuner calls the driver's pointers
 * directly — and the slow halves check xmt_in_shim for anything else.) */
static inline __attribute__((always_inline)) int xmt_dispatch_is_plain(CUfunction f)
{
    xmt_kernel *k = xmt_kernels_find(f);
    return __builtin_expect(k != NULL && __atomic_load_n(&k->passthrough, __ATOMIC_RELAXED), 1);
}

/* The slow halves, out of line so that the inline fast paths stay small: with their
 * arguments untouched, a pass-through launch ends in a tail jump to the driver. */
#define XMT_DISPATCH_SLOW_DECL_(K)                                                                 \
    CUresult xmt_dispatch_##K##_slow(void *real, int ptsz, XMT_PARAMS(K))                          \
        __attribute__((noinline, cold));
XMT_LAUNCH_SIGNATURES(XMT_DISPATCH_SLOW_DECL_)
#undef XMT_DISPATCH_SLOW_DECL_

/* The fast paths. */
#define XMT_DISPATCH_FAST_(K)                                                                      \
    static inline __attribute__((always_inline))                                                   \
    CUresult xmt_dispatch_##K(void *real, int ptsz, XMT_PARAMS(K))                                 \
    {                                                                                              \
        if (xmt_dispatch_is_plain(f)) {                                                            \
            xmt_count_launch();                                                                    \
            return ((xmt_pfn_##K)real)(XMT_ARGS(K));                                               \
        }                                                                                          \
        return xmt_dispatch_##K##_slow(real, ptsz, XMT_ARGS(K));                                   \
    }
XMT_LAUNCH_SIGNATURES(XMT_DISPATCH_FAST_)
#undef XMT_DISPATCH_FAST_

#endif
