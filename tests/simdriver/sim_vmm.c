/* sim_vmm.c: the simulated driver's virtual memory management, shareable across
 * processes.
 *
 * What a trial helper process needs to see the program's memory at the program's own
 * addresses: physical memory made by cuMemCreate (a memfd), exported as a file
 * descriptor (cuMemExportToShareableHandle) and imported in another process
 * (cuMemImportFromShareableHandle), a virtual range reserved with an address hint
 * (cuMemAddressReserve: mmap MAP_FIXED_NOREPLACE, else anywhere), and the memory mapped
 * there MAP_SHARED (cuMemMap), so that writes in one process are seen by the other.
 * Mapped ranges count as allocations for address-range queries, copies and the
 * kernels' bounds checks once cuMemSetAccess made them accessible. State is guarded by
 * sim_lock like the rest of the driver. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_internal.h"
#include "simcuda.h"

#define GRAN SIMCUDA_VMM_GRANULARITY

/* Physical memory: one memfd. refs counts the handle (until cuMemRelease) and each
 * mapping; the memory goes when both are gone, as on the real driver. */
typedef struct simmem {
    int fd;
    size_t size;
    int refs, handle_live;
    int exportable;
    struct simmem *next;
} simmem;

typedef struct simresv {
    uintptr_t base;
    size_t size;
    struct simresv *next;
} simresv;

typedef struct simmap {
    uintptr_t base;
    size_t size;
    simmem *mem;
    simresv *resv;
    int access; /* cuMemSetAccess gave read/write access */
    struct simmap *next;
} simmap;

static simmem *g_mems;
static simresv *g_resvs;
static simmap *g_maps;

/* Handles are the simmem's address, checked against the list before any use. */
static simmem *mem_locked(CUmemGenericAllocationHandle h)
{
    for (simmem *m = g_mems; m; m = m->next)
        if ((uintptr_t)m == (uintptr_t)h) return m;
    return NULL;
}

static void mem_unref_locked(simmem *m)
{
    if (--m->refs > 0) return;
    for (simmem **pp = &g_mems; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    close(m->fd);
    free(m);
}

static CUresult mem_add_locked(int fd, size_t size, int exportable,
                               CUmemGenericAllocationHandle *out)
{
    simmem *m = calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    *m = (simmem){fd, size, 1, 1, exportable, g_mems};
    g_mems = m;
    *out = (CUmemGenericAllocationHandle)(uintptr_t)m;
    return CUDA_SUCCESS;
}

/* A new memfd of size bytes filled with 0xA5, as cuMemAlloc memory is; -1 on error. */
static int new_memfd(size_t size)
{
    int fd = memfd_create("simcuda-mem", MFD_CLOEXEC);
    if (fd < 0) return -1;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    memset(p, 0xA5, size);
    munmap(p, size);
    return fd;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    SIM_ENTER(cuMemCreate);
    if (!h || !prop || flags || size == 0 || size % GRAN ||
        prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id < 0 ||
        prop->location.id >= sim_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    if (prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    int fd = new_memfd(size);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim_lock);
    CUresult rc = mem_add_locked(
        fd, size, (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0, h);
    pthread_mutex_unlock(&sim_lock);
    if (rc != CUDA_SUCCESS) close(fd);
    return rc;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    SIM_ENTER(cuMemRelease);
    pthread_mutex_lock(&sim_lock);
    simmem *m = mem_locked(h);
    int ok = m && m->handle_live;
    if (ok) {
        m->handle_live = 0;
        mem_unref_locked(m);
    }
    pthread_mutex_unlock(&sim_lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                      CUmemAllocationHandleType type, unsigned long long flags)
{
    SIM_ENTER(cuMemExportToShareableHandle);
    if (!out || flags) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&sim_lock);
    simmem *m = mem_locked(h);
    CUresult rc = !m || !m->handle_live ? CUDA_ERROR_INVALID_VALUE
                  : !m->exportable      ? CUDA_ERROR_NOT_PERMITTED
                                        : CUDA_SUCCESS;
    /* the real driver's descriptor is close-on-exec too: hand it over with SCM_RIGHTS */
    int fd = rc == CUDA_SUCCESS ? fcntl(m->fd, F_DUPFD_CLOEXEC, 3) : -1;
    pthread_mutex_unlock(&sim_lock);
    if (rc == CUDA_SUCCESS && fd < 0) rc = CUDA_ERROR_OPERATING_SYSTEM;
    if (rc == CUDA_SUCCESS) *(int *)out = fd;
    return rc;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                        CUmemAllocationHandleType type)
{
    SIM_ENTER(cuMemImportFromShareableHandle);
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    struct stat st;
    int given = (int)(intptr_t)os;
    if (fstat(given, &st) != 0 || st.st_size <= 0 || (size_t)st.st_size % GRAN)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = fcntl(given, F_DUPFD_CLOEXEC, 3); /* the caller keeps its own descriptor */
    if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
    pthread_mutex_lock(&sim_lock);
    CUresult rc = mem_add_locked(fd, (size_t)st.st_size, 1, h);
    pthread_mutex_unlock(&sim_lock);
    if (rc != CUDA_SUCCESS) close(fd);
    return rc;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    SIM_ENTER(cuMemGetAllocationGranularity);
    if (!g || !prop ||
        (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
         option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    *g = GRAN;
    return CUDA_SUCCESS;
}

/* An inaccessible range of size bytes aligned to align, anywhere; 0 when none. */
static uintptr_t reserve_anywhere(size_t size, size_t align)
{
    size_t span = size + align;
    void *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    uintptr_t lo = (uintptr_t)p, base = (lo + align - 1) / align * align;
    if (base > lo) munmap(p, base - lo);
    if (lo + span > base + size) munmap((void *)(base + size), lo + span - (base + size));
    return base;
}

/* The hint when the whole range there is free (MAP_FIXED_NOREPLACE), else 0. */
static uintptr_t reserve_at(uintptr_t addr, size_t size)
{
    void *p = mmap((void *)addr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) return 0;
    if ((uintptr_t)p != addr) { /* a kernel before 4.17 took the flag as a mere hint */
        munmap(p, size);
        return 0;
    }
    return addr;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags)
{
    SIM_ENTER(cuMemAddressReserve);
    if (!ptr || size == 0 || size % GRAN || (align & (align - 1)) || flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    if (align < GRAN) align = GRAN;
    simresv *r = calloc(1, sizeof *r);
    if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t base = addr && addr % align == 0 ? reserve_at((uintptr_t)addr, size) : 0;
    if (!base) base = reserve_anywhere(size, align);
    if (!base) {
        free(r);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&sim_lock);
    *r = (simresv){base, size, g_resvs};
    g_resvs = r;
    pthread_mutex_unlock(&sim_lock);
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

static int overlaps(uintptr_t a, size_t an, uintptr_t b, size_t bn)
{
    return a < b + bn && b < a + an;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    SIM_ENTER(cuMemAddressFree);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    for (simresv **pp = &g_resvs; *pp; pp = &(*pp)->next) {
        simresv *r = *pp;
        if (r->base != (uintptr_t)ptr || r->size != size) continue;
        int mapped = 0;
        for (simmap *m = g_maps; m; m = m->next)
            mapped |= m->resv == r;
        if (!mapped) {
            *pp = r->next;
            munmap((void *)r->base, r->size);
            free(r);
            rc = CUDA_SUCCESS;
        }
        break;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

static simresv *resv_of_locked(uintptr_t p, size_t size)
{
    for (simresv *r = g_resvs; r; r = r->next)
        if (p >= r->base && p - r->base <= r->size && size <= r->size - (p - r->base)) return r;
    return NULL;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                  unsigned long long flags)
{
    SIM_ENTER(cuMemMap);
    if (flags || size == 0 || size % GRAN || offset % GRAN || ptr % GRAN)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    simmap *n = calloc(1, sizeof *n);
    if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim_lock);
    simmem *m = mem_locked(h);
    simresv *r = resv_of_locked((uintptr_t)ptr, size);
    if (!m || !m->handle_live)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!r || offset > m->size || size > m->size - offset)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (simmap *x = g_maps; x && rc == CUDA_SUCCESS; x = x->next)
        if (overlaps(x->base, x->size, (uintptr_t)ptr, size)) rc = CUDA_ERROR_ALREADY_MAPPED;
    if (rc == CUDA_SUCCESS && mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_FIXED, m->fd, (off_t)offset) == MAP_FAILED)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        *n = (simmap){(uintptr_t)ptr, size, m, r, 0, g_maps};
        g_maps = n;
        m->refs++;
        n = NULL;
    }
    pthread_mutex_unlock(&sim_lock);
    free(n);
    return rc;
}

/* Unmaps every mapping inside [ptr, ptr+size), which must cover them whole. */
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    SIM_ENTER(cuMemUnmap);
    uintptr_t p = (uintptr_t)ptr;
    CUresult rc = CUDA_SUCCESS;
    int any = 0;
    pthread_mutex_lock(&sim_lock);
    for (simmap *m = g_maps; m; m = m->next)
        if (overlaps(m->base, m->size, p, size)) {
            any = 1;
            if (m->base < p || m->base + m->size > p + size) rc = CUDA_ERROR_INVALID_VALUE;
        }
    if (!any) rc = CUDA_ERROR_INVALID_VALUE;
    for (simmap **pp = &g_maps; *pp && rc == CUDA_SUCCESS;) {
        simmap *m = *pp;
        if (!overlaps(m->base, m->size, p, size)) {
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        /* back to reserved, inaccessible address space */
        mmap((void *)m->base, m->size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        mem_unref_locked(m->mem);
        free(m);
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    SIM_ENTER(cuMemSetAccess);
    if (!desc || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    int access = 0;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc[i].location.id < 0 ||
            desc[i].location.id >= sim_device_count())
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE) access = 1;
    }
    uintptr_t p = (uintptr_t)ptr;
    CUresult rc = CUDA_SUCCESS;
    size_t covered = 0;
    pthread_mutex_lock(&sim_lock);
    for (simmap *m = g_maps; m; m = m->next)
        if (overlaps(m->base, m->size, p, size)) {
            if (m->base < p || m->base + m->size > p + size) rc = CUDA_ERROR_INVALID_VALUE;
            covered += m->size;
        }
    if (covered != size) rc = CUDA_ERROR_INVALID_VALUE; /* every byte must be mapped */
    for (simmap *m = g_maps; m && rc == CUDA_SUCCESS; m = m->next)
        if (overlaps(m->base, m->size, p, size)) m->access = access;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

static simmap *map_at_locked(uintptr_t p)
{
    for (simmap *m = g_maps; m; m = m->next)
        if (m->access && p >= m->base && p - m->base < m->size) return m;
    return NULL;
}

int sim_map_find_locked(uintptr_t p, sim_range *out)
{
    simmap *m = map_at_locked(p);
    if (!m) return 0;
    *out = (sim_range){m->base, m->size, m->resv->base, m->resv->size};
    return 1;
}

size_t sim_map_avail_locked(uintptr_t p)
{
    simmap *m = map_at_locked(p);
    if (!m) return 0;
    size_t n = m->base + m->size - p;
    /* consecutive accessible mappings are one span of memory to a kernel or a copy */
    while ((m = map_at_locked(m->base + m->size)) != NULL)
        n += m->size;
    return n;
}

SIM_API long simcuda_live_mappings(void)
{
    pthread_mutex_lock(&sim_lock);
    long n = 0;
    for (simmap *m = g_maps; m; m = m->next)
        n++;
    pthread_mutex_unlock(&sim_lock);
    return n;
}
