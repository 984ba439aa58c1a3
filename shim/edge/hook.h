/*
 * hook: how launches reach us.
 *
 * Programs get driver entry points three ways, and each is covered: dlsym on a libcuda
 * handle (CuPy, Triton, the CUDA runtime's first lookup), cuGetProcAddress/_v2 (the
 * runtime's ~440 other lookups, in every version and flag), and direct calls to exported
 * symbols (programs linked with -lcuda). Each of them hands out or is a wrapper that
 * calls exactly the pointer the real driver returned for that (name, version, flags).
 */
#ifndef XMT_HOOK_H
#define XMT_HOOK_H

#include <cuda.h>

/* Called by our dlsym (hook_dlsym.S): a wrapper for a CUDA entry point we interpose, or
 * NULL to forward the call to glibc untouched. */
void *xmt_dlsym_hook(void *handle, const char *name);

/* Wraps a real entry point by name as cuGetProcAddress reports it (base name, version,
 * flags), or returns it unchanged when it is not one we interpose. */
void *xmt_wrap_proc(const char *name, void *real, int version, cuuint64_t flags);

#endif
