/*
 * devinfo: each device's attributes and identity (see devinfo.h).
 */
#include "devinfo.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"

#define MAX_DEVICES 64
static xmt_devinfo devices[MAX_DEVICES];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t dev_attr(CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    if (!xmt_drv.cuDeviceGetAttribute || xmt_drv.cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS)
        return 0;
    return v;
}

const xmt_devinfo *xmt_device_info(CUdevice d)
{
    if (d < 0 || d >= MAX_DEVICES) return NULL;
    xmt_devinfo *di = &devices[d];
    if (atomic_load_explicit(&di->filled, memory_order_acquire)) return di;
    pthread_mutex_lock(&devices_lock);
    if (!atomic_load(&di->filled)) {
        xmt_attrs *a = &di->attrs;
        a->sm_count = dev_attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        a->max_threads_per_block = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        a->max_shared_per_block = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
        a->cc_major = dev_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        a->cc_minor = dev_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        a->warp_size = dev_attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
        a->l2_bytes = dev_attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
        a->max_grid_x = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
        a->max_grid_y = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
        a->max_grid_z = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
        a->max_block_x = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
        a->max_block_y = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
        a->max_block_z = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
        char name[128] = "unknown";
        if (!xmt_drv.cuDeviceGetName ||
            xmt_drv.cuDeviceGetName(name, sizeof name, d) != CUDA_SUCCESS)
            strcpy(name, "unknown");
        int drv = 0;
        if (!xmt_drv.cuDriverGetVersion || xmt_drv.cuDriverGetVersion(&drv) != CUDA_SUCCESS)
            drv = 0;
        snprintf(di->id, sizeof di->id, "%s|cc%lld.%lld|sm%lld|drv%d", name, (long long)a->cc_major,
                 (long long)a->cc_minor, (long long)a->sm_count, drv);
        atomic_store_explicit(&di->filled, 1, memory_order_release);
    }
    pthread_mutex_unlock(&devices_lock);
    return di;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

void xmt_code_fingerprint(const xmt_kernel *k, CUdevice d, char out[17])
{
    static const CUfunction_attribute attrs[] = {CU_FUNC_ATTRIBUTE_NUM_REGS,
                                                 CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                                 CU_FUNC_ATTRIBUTE_PTX_VERSION,
                                                 CU_FUNC_ATTRIBUTE_BINARY_VERSION,
                                                 CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, &k->nparams, sizeof k->nparams);
    for (size_t i = 0; k->params_known && i < k->nparams; i++) {
        h = fnv(h, &k->offsets[i], sizeof k->offsets[i]);
        h = fnv(h, &k->sizes[i], sizeof k->sizes[i]);
    }
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = -1;
        CUresult r = CUDA_ERROR_NOT_SUPPORTED;
        if (k->is_cukernel && xmt_drv.cuKernelGetAttribute)
            r = xmt_drv.cuKernelGetAttribute(&v, attrs[i], (CUkernel)k->handle, d);
        else if (!k->is_cukernel && xmt_drv.cuFuncGetAttribute)
            r = xmt_drv.cuFuncGetAttribute(&v, attrs[i], (CUfunction)k->handle);
        if (r != CUDA_SUCCESS) v = -1;
        h = fnv(h, &v, sizeof v);
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}
