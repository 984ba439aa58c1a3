/*
 * trialmod: a kernel's module for the trial helper (see trialmod.h).
 */
#include "trialmod.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver.h"

#define GLOBALS_MAX XMT_TR_MAX_GLOBALS  /* module globals given to the helper per kernel */
#define GLOBALS_BYTES ((size_t)1 << 20) /* and their bytes in all */

void xmt_tr_globals_free(xmt_tr_globals *gs)
{
    for (uint64_t i = 0; gs->g && i < gs->n; i++) {
        free((void *)(uintptr_t)gs->g[i].name);
        free((void *)(uintptr_t)gs->g[i].value.bytes);
    }
    free(gs->g);
    gs->g = NULL;
    gs->n = 0;
}

/* The module globals the program asked for, of the kernel's image's owner: its module, or
 * its library and the library's module in this context (img: admissible's), with their
 * current values, into *gs. 0, or -1 with why when they cannot be read or are too large. */
int xmt_tr_globals_of(const xmt_image *img, xmt_tr_globals *gs, char *why, size_t cap)
{
    xmt_global g[GLOBALS_MAX];
    const void *owner = img->owner;
    size_t n = xmt_modload_globals(owner, g, GLOBALS_MAX), total = 0, lib_n = n;
    CUmodule mod = NULL;
    if (img->library && xmt_drv.cuLibraryGetModule &&
        xmt_drv.cuLibraryGetModule(&mod, (CUlibrary)owner) == CUDA_SUCCESS && mod)
        n += xmt_modload_globals(mod, g + n, GLOBALS_MAX - n);
    /* the CUDA runtime asks without the size (NULL): asked here, in this context */
    for (size_t i = 0; i < n; i++) {
        CUdeviceptr d = 0;
        size_t sz = 0;
        CUresult q = CUDA_ERROR_NOT_FOUND;
        if (i < lib_n && img->library && xmt_drv.cuLibraryGetGlobal)
            q = xmt_drv.cuLibraryGetGlobal(&d, &sz, (CUlibrary)owner, g[i].name);
        else if (xmt_drv.cuModuleGetGlobal)
            q = xmt_drv.cuModuleGetGlobal(&d, &sz, i < lib_n ? (CUmodule)owner : mod, g[i].name);
        if (q == CUDA_SUCCESS) {
            g[i].dptr = d;
            g[i].bytes = sz;
        }
    }
    gs->n = 0;
    gs->g = calloc(n ? n : 1, sizeof *gs->g);
    CUresult r = !gs->g ? CUDA_ERROR_OUT_OF_MEMORY : n ? xmt_drv.cuCtxSynchronize() : CUDA_SUCCESS;
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++) {
        total += g[i].bytes;
        if (!g[i].bytes || total > GLOBALS_BYTES) {
            snprintf(why, cap, "its module's globals (%s) %s", g[i].name,
                     g[i].bytes ? "are more than 1 MiB" : "are of unknown size");
            xmt_tr_globals_free(gs);
            return -1;
        }
        uint8_t *b = malloc(g[i].bytes);
        char *name = strdup(g[i].name);
        if (b && name) r = xmt_drv.cuMemcpyDtoH(b, g[i].dptr, g[i].bytes);
        if (b && name && r == CUDA_SUCCESS) {
            gs->g[gs->n++] = (xmt_tr_global){name, {b, g[i].bytes}};
        } else { /* out of memory: left out, as before the request was typed */
            free(b);
            free(name);
        }
    }
    if (r != CUDA_SUCCESS) {
        char nb[32];
        snprintf(why, cap, "its module's globals cannot be read (%s)",
                 xmt_cu_name(r, nb, sizeof nb));
        xmt_tr_globals_free(gs);
        return -1;
    }
    return 0;
}

/* The image kept for k's owner; for a CUfunction whose module is a library's in this
 * context (cuKernelGetFunction, what the runtime's cudaGetFuncBySymbol gives: the shim
 * keeps the image under the CUlibrary, cuFuncGetModule names the library's CUmodule),
 * that library's. 1 and *img, else 0. */
int xmt_trial_image_of(const xmt_kernel *k, xmt_image *img)
{
    if (xmt_modload_image((const void *)k->owner, img)) return 1;
    if (k->is_cukernel || !k->owner || !xmt_drv.cuLibraryGetModule) return 0;
    /* the runtime loads a library per fatbin: a large program keeps hundreds (room for a
     * few loaded meanwhile; those past it are not asked about) */
    size_t cap = xmt_modload_libraries(NULL, 0) + 16;
    xmt_image *libs = malloc(cap * sizeof *libs);
    size_t n = libs ? xmt_modload_libraries(libs, cap) : 0;
    if (n > cap) n = cap;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        CUmodule m = NULL;
        found = xmt_drv.cuLibraryGetModule(&m, (CUlibrary)libs[i].owner) == CUDA_SUCCESS &&
                (uintptr_t)m == k->owner;
        if (found) *img = libs[i];
    }
    free(libs);
    return found;
}

/* A memfd holding len bytes of data. -1 on failure. */
int xmt_memfd_of(const char *name, const void *data, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    const char *p = data;
    size_t done = 0;
    while (fd >= 0 && done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    return fd;
}
