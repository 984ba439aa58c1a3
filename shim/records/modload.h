/*
 * modload: the module and library images the program loads.
 *
 * The load entry points (cuModuleLoad*, cuLibraryLoad*; signatures.h) are wrapped so that
 * the trial helper can be given the program's module images: each successful load is
 * counted by entry point (the `exit` event's module_loads), logged (`module_load`: the
 * image's format and size, common/cuimage.h) and, in tune and replay modes, kept with its
 * owner handle: a pointer to an image inside a loaded library or the program (it stays
 * mapped: PyTorch's are hundreds of MB), a copy of one the caller may free (CuPy's,
 * Triton's), the bytes of a file loaded by path; with the JIT options it was loaded with.
 * An unload forgets its owner's image. cuLinkComplete is counted only: its cubin reaches
 * a load call of its own.
 */
#ifndef XMT_MODLOAD_H
#define XMT_MODLOAD_H

#include <cuda.h>
#include <stddef.h>

#include "cuimage.h"

/* A kept image. */
typedef struct xmt_image {
    const void *owner; /* the CUmodule or CUlibrary it was loaded as */
    int library;       /* owner is a CUlibrary */
    xmt_image_format format;
    const void *bytes; /* the image (a fatbin wrapper's fatbin) */
    size_t size;
    const char *kept; /* "mapped", "copied", "file" */
    unsigned njit;    /* JIT options, with the values that are numbers (no log buffers) */
    CUjit_option jit_opts[16];
    void *jit_vals[16];
} xmt_image;

/* One call of the load entry point `entry` returned r. Thread-safe; rare (a load). */
void xmt_modload_seen(const char *entry, CUresult r);

/* A successful load of `image` (a path when from_file) as owner: logged, and kept in tune
 * and replay modes. jit: the options given with it (n of them; may be NULL). */
void xmt_modload_loaded(const char *entry, const void *owner, int library, const void *image,
                        int from_file, unsigned n, const CUjit_option *opts, void *const *vals);

/* The image kept for owner: copied into *out (its bytes stay valid until owner is
 * unloaded). 1 when there is one, else 0. */
int xmt_modload_image(const void *owner, xmt_image *out);

/* The images kept for libraries (loaded with cuLibraryLoad*), newest first, up to cap into
 * out (may be NULL with cap 0). Returns how many there are (more than cap: not all were
 * copied). For a CUfunction whose module is a library's (cuKernelGetFunction: the
 * runtime's cudaGetFuncBySymbol), whose image is kept under the library. */
size_t xmt_modload_libraries(xmt_image *out, size_t cap);

/* A module global the program asked for (cuModuleGetGlobal, cuLibraryGetGlobal): owner's
 * global `name` is at dptr, bytes long (0: not told). The program may have set it (a
 * __constant__ with cudaMemcpyToSymbol): the trial helper is given its value. Tune and
 * replay modes; at most XMT_MODLOAD_GLOBALS kept. */
#define XMT_MODLOAD_GLOBALS 4096
void xmt_modload_global(const void *owner, const char *name, CUdeviceptr dptr, size_t bytes);

typedef struct {
    char name[256];
    CUdeviceptr dptr;
    size_t bytes;
} xmt_global;

/* The globals of owner asked for so far, up to cap into out. Returns how many. */
size_t xmt_modload_globals(const void *owner, xmt_global *out, size_t cap);

/* A texture or surface object created (live 1) or destroyed (0): a launch that passes
 * one cannot run in the trial helper (the handle means nothing in another process). */
void xmt_modload_texobj(unsigned long long handle, int live);

/* 1 when handle is a live texture or surface object of the program. */
int xmt_modload_is_texobj(unsigned long long handle);

/* owner was unloaded: its image and globals are forgotten (a copy freed). */
void xmt_modload_forget(const void *owner);

/* Calls fn(ud, entry, succeeded, failed) for each load entry point called at least once,
 * in the order first seen. Lock-free (the exit report). */
void xmt_modload_each(void (*fn)(void *ud, const char *entry, unsigned long long ok,
                                 unsigned long long failed),
                      void *ud);

/* fork(2): the list's lock held across it. */
void xmt_modload_atfork(int phase);

#endif
