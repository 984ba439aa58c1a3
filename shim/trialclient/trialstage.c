/*
 * trialstage: a launch's memory staged for the trial helper (see trialstage.h).
 */
#include "trialstage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

static int cmp_region(const void *a, const void *b)
{
    const xmt_region *x = a, *y = b;
    return x->base < y->base ? -1 : x->base > y->base;
}

/* The windows: each region widened to the granularity, overlapping ones merged. */
static int windows(xmt_staging *st, size_t gran)
{
    qsort(st->regs, st->nregs, sizeof *st->regs, cmp_region);
    st->nwin = 0;
    st->bytes = 0;
    for (size_t i = 0; i < st->nregs; i++) {
        CUdeviceptr lo = st->regs[i].base / gran * gran;
        CUdeviceptr hi = (st->regs[i].base + st->regs[i].bytes + gran - 1) / gran * gran;
        size_t w = st->nwin;
        if (w && lo <= st->win_va[w - 1] + st->win_bytes[w - 1]) {
            CUdeviceptr end = st->win_va[w - 1] + st->win_bytes[w - 1];
            if (hi > end) {
                st->bytes += hi - end;
                st->win_bytes[w - 1] += hi - end;
            }
            continue;
        }
        if (w == XMT_TR_MAX_WINDOWS) return -1;
        st->win_va[w] = lo;
        st->win_bytes[w] = hi - lo;
        st->win_off[w] = st->bytes;
        st->bytes += hi - lo;
        st->nwin++;
    }
    return 0;
}

/* The staging allocation's offset of program address p (inside a window). */
size_t xmt_staged_at(const xmt_staging *st, CUdeviceptr p)
{
    for (size_t i = 0; i < st->nwin; i++)
        if (p >= st->win_va[i] && p < st->win_va[i] + st->win_bytes[i])
            return st->win_off[i] + (p - st->win_va[i]);
    return 0;
}

void xmt_unstage(xmt_staging *st)
{
    if (st->fd >= 0) close(st->fd);
    if (st->va) {
        xmt_drv.cuMemUnmap(st->va, st->bytes);
        xmt_drv.cuMemAddressFree(st->va, st->bytes);
    }
    if (st->h) xmt_drv.cuMemRelease(st->h);
    xmt_protect_free(st->regs, st->nregs);
    memset(st, 0, sizeof *st);
    st->fd = -1;
}

/* Copies the regions into exportable memory. 0, or -1 with why. */
int xmt_stage(const xmt_kernel *k, const xmt_launch_view *v, int device, xmt_staging *st, char *why,
              size_t cap)
{
    size_t reach = 0, free_b = 0, total = 0;
    if (xmt_drv.cuMemGetInfo) xmt_drv.cuMemGetInfo(&free_b, &total);
    double limit = xmt_opt.scratch_mb >= 0 ? xmt_opt.scratch_mb * 1048576.0 : (double)free_b / 2;
    int f = xmt_protect_find(k, v, (size_t)limit, &st->regs, &st->nregs, &reach, why, cap);
    if (f == -2) {
        snprintf(why, cap, "its memory (%.1f MiB) is more than the staging may take (%.1f MiB)",
                 (double)reach / 1048576.0, limit / 1048576.0);
        return -1;
    }
    if (f != 0) return -1;
    return xmt_stage_alloc(st, device, why, cap);
}

/* The staging memory for st's regions (set): windows, exportable memory mapped here and
 * exported. 0, or -1 with why. */
int xmt_stage_alloc(xmt_staging *st, int device, char *why, size_t cap)
{
    if (!xmt_drv.cuMemCreate || !xmt_drv.cuMemExportToShareableHandle || !xmt_drv.cuMemMap) {
        snprintf(why, cap, "the driver has no virtual memory management (cuMemCreate)");
        return -1;
    }
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                .location = {CU_MEM_LOCATION_TYPE_DEVICE, device}};
    size_t gran = 0;
    CUresult r =
        xmt_drv.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r == CUDA_SUCCESS && (gran == 0 || windows(st, gran) != 0)) r = CUDA_ERROR_INVALID_VALUE;
    st->gran = gran;
    if (r == CUDA_SUCCESS && !st->bytes) return 0; /* nothing to stage */
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, device},
                           CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemCreate(&st->h, st->bytes, &prop, 0);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemAddressReserve(&st->va, st->bytes, 0, 0, 0);
    if (r == CUDA_SUCCESS && (r = xmt_drv.cuMemMap(st->va, st->bytes, 0, st->h, 0)) != CUDA_SUCCESS)
        xmt_drv.cuMemAddressFree(st->va, st->bytes), st->va = 0;
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemSetAccess(st->va, st->bytes, &acc, 1);
    if (r == CUDA_SUCCESS)
        r = xmt_drv.cuMemExportToShareableHandle(&st->fd, st->h,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (r != CUDA_SUCCESS) {
        char b[32];
        snprintf(why, cap, "its memory cannot be staged for the helper (%s; %.1f MiB)",
                 xmt_cu_name(r, b, sizeof b), (double)st->bytes / 1048576.0);
        return -1;
    }
    return 0;
}

/* Copies the program's data into the staging memory: before every helper's session, so
 * that one after a fault starts from the program's data, not from what the faulting
 * helper's runs left (the program is held at this launch: its memory has not changed). */
CUresult xmt_stage_refill(const xmt_staging *st)
{
    if (!st->bytes) return CUDA_SUCCESS;
    /* the data every stream has finished with, as the program's next launch would see it */
    CUresult r = xmt_drv.cuCtxSynchronize();
    for (size_t i = 0; r == CUDA_SUCCESS && i < st->nregs; i++)
        r = xmt_drv.cuMemcpyDtoD(st->va + xmt_staged_at(st, st->regs[i].base), st->regs[i].base,
                                 st->regs[i].bytes);
    return r;
}
