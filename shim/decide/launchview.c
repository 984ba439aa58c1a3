/*
 * launchview: a launch as the policy side sees it, and the launching thread's device (see
 * launchview.h).
 */
#include "launchview.h"

#include <stdint.h>

#include "driver.h"
#include "guard.h"

/* The devices the process sees (-1: not asked yet; launchview.h). */
_Atomic int xmt_device_count = -1;

/* Out of line and cold: inlined, its driver calls would cost the hit path registers. */
__attribute__((noinline, cold)) int xmt_current_device_slow(CUdevice *dev, int n)
{
    if (n < 0) {
        int c = 0;
        XMT_IN_SHIM_SCOPE
        {
            if (!xmt_drv.cuDeviceGetCount || xmt_drv.cuDeviceGetCount(&c) != CUDA_SUCCESS) c = 0;
        }
        atomic_store(&xmt_device_count, c);
        n = c;
    }
    if (n == 1) {
        *dev = 0;
        return 1;
    }
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    XMT_IN_SHIM_SCOPE
    {
        if (xmt_drv.cuCtxGetDevice) r = xmt_drv.cuCtxGetDevice(dev);
    }
    return r == CUDA_SUCCESS;
}

/* The launch's arguments as pointers, wherever the program put them: params as given,
 * or pointers into the packed `extra` buffer (argv, XMT_KERNEL_MAX_PARAMS long). NULL
 * when they cannot be found. */
static void *const *launch_args(const xmt_kernel *k, const xmt_launch *l, void **argv)
{
    if (l->params) return (void *const *)l->params;
    uint8_t *buf;
    size_t size;
    if (!l->extra || xmt_extra_buffer(l->extra, &buf, &size) != 0 ||
        k->nparams > XMT_KERNEL_MAX_PARAMS)
        return NULL;
    for (size_t i = 0; i < k->nparams; i++) {
        if (k->offsets[i] + k->sizes[i] > size) return NULL;
        argv[i] = buf + k->offsets[i];
    }
    return argv;
}

int xmt_tuner_view(xmt_kernel *k, const xmt_launch *l, void **argv, xmt_attrs *attrs,
                   xmt_launch_view *v, CUdevice *dev, const xmt_devinfo **di)
{
    void *const *params = launch_args(k, l, argv);
    *dev = 0;
    if (!params || !xmt_current_device(dev) || !(*di = xmt_device_info(*dev))) return 0;
    *attrs = (*di)->attrs;
    attrs->kernel_max_threads = k->max_threads;
    attrs->kernel_static_shared = k->static_shared;
    /* The limit that applies to this kernel: the device's per-block limit, or more where
     * the program opted the kernel into more dynamic shared memory (read with its other
     * attributes when the kernel was first seen). */
    int64_t optin = (int64_t)k->max_dynamic_shared + k->static_shared;
    if (optin > attrs->max_shared_per_block) attrs->max_shared_per_block = optin;
    *v = (xmt_launch_view){
        params,
        k->nparams,
        {{l->grid[0], l->grid[1], l->grid[2]}, {l->block[0], l->block[1], l->block[2]}, l->shared},
        attrs};
    return 1;
}
