/*
 * protect: what a launch can reach, found from its pointer arguments (`protect: auto`).
 *
 * Pointer arguments come from the policy (ptr parameters, tensors, ptr fields of
 * bytes(N) parameters), from the kernel's demangled signature, and, for kernels whose
 * name carries no types (extern "C", Triton), from any 8-byte parameter the driver
 * reports as device memory; and from any 8-byte-aligned word of a struct passed by value
 * (a parameter the signature types as one, or of more than 8 bytes without types) that
 * the driver reports so. Each is resolved to the allocation it points into
 * (cuMemGetAddressRange); inside a virtual-memory reservation (PyTorch's expandable
 * segments) that is the run of consecutive mapped pieces around it, never unmapped
 * address space. Overlapping allocations are merged into regions. Memory that cannot
 * be protected exactly (host or managed memory, a declared pointer the driver does not
 * know) makes the key untunable under auto, with the reason.
 */
#ifndef XMT_PROTECT_H
#define XMT_PROTECT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "kernels.h"
#include "xmt_policy.h"

/* Output granularity: 512 bytes, the rounding of PyTorch's caching allocator, so that a
 * chunk never spans two of its tensors. */
#define XMT_CHUNK_SHIFT 9

typedef struct {
    CUdeviceptr base;
    size_t bytes;
    CUdeviceptr snap, ref; /* the program's data before tuning; the own config's result */
    uint8_t *out;          /* per chunk: 1 = changed by the program's own config */
    uint8_t *seen;         /* per chunk: scratch for what a run changed */
    size_t nchunks, nout;
} xmt_region;

/* Is p an address in memory the driver knows (device, pinned or registered host, or
 * managed memory: cuPointerGetAttribute's memory type answers)? 1, with its
 * CU_MEMORYTYPE_* in *type when type is not NULL; 0 when it does not (0 itself, a size,
 * an address nothing was allocated at) or the driver has no such call. The one question
 * both protect: auto (for an untyped 8-byte argument) and discover (which records such an
 * argument as "pointer" or as its value) ask, so that they agree. One driver call; no
 * lock of the shim's. */
int xmt_protect_driver_knows(CUdeviceptr p, unsigned *type);

/* The regions the launch's pointer arguments reach, up to `limit` bytes in all. Returns
 * 0 (*out malloc'd, *n regions, maybe 0; *reach their bytes), -2 when they reach more
 * than limit bytes (*reach: at least how many), or -1 with why: memory it cannot
 * protect, out of memory. */
int xmt_protect_find(const xmt_kernel *k, const xmt_launch_view *v, size_t limit, xmt_region **out,
                     size_t *n, size_t *reach, char *why, size_t cap);

/* Frees the regions' host arrays (their device scratch is the session's). */
void xmt_protect_free(xmt_region *r, size_t n);

#endif
