/*
 * launchview: what a launch's key and configs are computed from (xmt_launch_view, the
 * policy side's picture of one launch): its arguments wherever the program put them (the
 * params array, or packed in `extra`), its dims, and the launching thread's device with
 * its attributes and the kernel's own limits. The tuner (tuner.c) makes one at each launch
 * its memo does not answer; the trial helper (trial/tune.c) makes its launch's view with
 * it too, which is why tuner.h includes this header and the function keeps its name.
 *
 * The device is asked on the memo's hit path too, so xmt_current_device is inline here:
 * a process that sees one device makes no driver call for it.
 */
#ifndef XMT_LAUNCHVIEW_H
#define XMT_LAUNCHVIEW_H

#include <stdatomic.h>

#include "devinfo.h"
#include "kernels.h"
#include "launch.h"
#include "xmt_policy.h"

/* What a launch's key and configs are computed from: its arguments (argv: room for
 * arguments packed in `extra`), dims, the current device and its attributes. 0 when they
 * cannot be read. */
int xmt_tuner_view(xmt_kernel *k, const xmt_launch *l, void **argv, xmt_attrs *attrs,
                   xmt_launch_view *v, CUdevice *dev, const xmt_devinfo **di);

/* The launching thread's device. A process that sees one device needs no driver call.
 * Hidden, so that the hit path reads the count as directly as a static of its own file. */
extern _Atomic int xmt_device_count __attribute__((visibility("hidden")));
/* cold: the hit path keeps the call out of its way, as it did when this was its own file's */
__attribute__((cold)) int xmt_current_device_slow(CUdevice *dev, int n);

static inline int xmt_current_device(CUdevice *dev)
{
    int n = atomic_load_explicit(&xmt_device_count, memory_order_relaxed);
    if (__builtin_expect(n == 1, 1)) {
        *dev = 0;
        return 1;
    }
    return xmt_current_device_slow(dev, n);
}

#endif
