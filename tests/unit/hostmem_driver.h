/*
 * hostmem_driver: stand-ins for the driver table's memory calls (xmt_drv, driver.h), for
 * unit tests whose "device" memory is host memory (a CUdeviceptr is a host address):
 * allocations, fills, copies each way, and waits that return at once, each counted in
 * hostmem_calls. A test calls hostmem_install() and sets what else it needs (launches,
 * modules) itself.
 */
#ifndef XMT_TEST_HOSTMEM_DRIVER_H
#define XMT_TEST_HOSTMEM_DRIVER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static struct {
    int htod, dtoh, stream_waits;
} hostmem_calls;

static inline CUresult hostmem_alloc(CUdeviceptr *p, size_t n)
{
    *p = (CUdeviceptr)(uintptr_t)malloc(n);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static inline CUresult hostmem_free(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}
static inline CUresult hostmem_memset8(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
static inline CUresult hostmem_dtod(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n);
    return CUDA_SUCCESS;
}
static inline CUresult hostmem_htod(CUdeviceptr d, const void *h, size_t n)
{
    hostmem_calls.htod++;
    memcpy((void *)(uintptr_t)d, h, n);
    return CUDA_SUCCESS;
}
static inline CUresult hostmem_dtoh(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    (void)s;
    hostmem_calls.dtoh++;
    memcpy(h, (const void *)(uintptr_t)d, n);
    return CUDA_SUCCESS;
}
static inline CUresult hostmem_sync_stream(CUstream s)
{
    (void)s;
    hostmem_calls.stream_waits++;
    return CUDA_SUCCESS;
}
static inline CUresult hostmem_sync_ctx(void)
{
    return CUDA_SUCCESS;
}

static inline void hostmem_install(void)
{
    xmt_drv.cuMemAlloc = hostmem_alloc;
    xmt_drv.cuMemFree = hostmem_free;
    xmt_drv.cuMemsetD8Async = hostmem_memset8;
    xmt_drv.cuMemcpyDtoDAsync = hostmem_dtod;
    xmt_drv.cuMemcpyHtoD = hostmem_htod;
    xmt_drv.cuMemcpyDtoHAsync = hostmem_dtoh;
    xmt_drv.cuStreamSynchronize = hostmem_sync_stream;
    xmt_drv.cuCtxSynchronize = hostmem_sync_ctx;
}

#endif
