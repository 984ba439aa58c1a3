/*
 * dispatch: the slow path of a launch (see dispatch.h).
 */
#include "dispatch.h"

#include "discover.h"
#include "driver.h"
#include "options.h"
#include "tuner.h"

/* The slow half of each launch signature: the shim's own calls and launches that cannot
 * be made a value go straight to the driver; the others become an xmt_launch. */
#define XMT_DISPATCH_SLOW_DEF_(K)                                                                  \
    CUresult xmt_dispatch_##K##_slow(void *real, int ptsz, XMT_PARAMS(K))                          \
    {                                                                                              \
        xmt_launch l;                                                                              \
        if (xmt_in_shim || !xmt_launch_of_##K(&l, real, ptsz, XMT_ARGS(K)))                        \
            return ((xmt_pfn_##K)real)(XMT_ARGS(K));                                               \
        return xmt_dispatch_slow(xmt_kernels_find(f), &l);                                         \
    }
XMT_LAUNCH_SIGNATURES(XMT_DISPATCH_SLOW_DEF_)
#undef XMT_DISPATCH_SLOW_DEF_

CUresult xmt_dispatch_slow(xmt_kernel *k, xmt_launch *l)
{
    xmt_count_launch();
    if (!k || atomic_load_explicit(&k->stale, memory_order_relaxed)) k = xmt_kernels_get(l->f);
    if (!k || __atomic_load_n(&k->passthrough, __ATOMIC_RELAXED)) return xmt_launch_call(l);
    if (xmt_opt.mode == XMT_MODE_DISCOVER) {
        xmt_discover_record(k, l); /* counts k->launches (a memo hit: later, per thread) */
        return xmt_launch_call(l);
    }
    return xmt_tune_launch(k, l);
}
