/*
 * gpucheck: comparing device buffers, finding the bytes a run changed, the largest
 * magnitude in a float output, filling outputs with the complement of a reference and
 * writing the guard bytes' pseudo-random sequence, on the GPU; and holding the GPU for a
 * while (a gate the tuner queues short runs behind).
 *
 * The kernels are the shim's own (gpucheck/kernels.cu, carried as PTX text): loaded with
 * cuModuleLoadData once per context, on first need, and forgotten with the context (a
 * context is known by cuCtxGetId, which is never reused). Only counts and first indices
 * come back to the host; for change detection, one flag byte per chunk; for the largest
 * magnitude, one double. When the module cannot load (or XMATUNE_VERIFY_ON=host), the
 * same rules run on the host (verify.c) over copies, and the log says so once. Either way
 * the answers are the same (the complement fill has no host path: its caller keeps the
 * two byte poisons there, and the sequence's caller makes it on the host and copies it).
 */
#ifndef XMT_GPUCHECK_H
#define XMT_GPUCHECK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* One comparison: bytes/es elements of got against ref, of kind XMT_CMP_* (verify.h). */
typedef struct {
    CUdeviceptr ref, got;
    size_t bytes;
    int kind;
    unsigned es;
    double rtol, atol;
} xmt_gc_cmp;

typedef struct {
    uint64_t count, first; /* first: UINT64_MAX when count is 0 */
} xmt_gc_result;

/* The module's kernels: xmt_cmp_bits, xmt_cmp_tol, xmt_changed, xmt_absmax, xmt_not,
 * xmt_spin, xmt_seq. */
#define XMT_GC_NFN 7

typedef struct {
    CUstream s;
    CUfunction fn[XMT_GC_NFN]; /* NULL: the host path */
    CUdeviceptr res, flags;
    size_t res_cap, flags_cap;
    uint8_t *h1, *h2;
    size_t hcap;
} xmt_gc;

/* Prepares comparisons on stream s in the current context, loading the module on first
 * need. Never fails: the host path is the fallback. */
void xmt_gc_open(xmt_gc *g, CUstream s);

/* 1 when comparisons run on the GPU. */
int xmt_gc_on_gpu(const xmt_gc *g);

/* Runs n comparisons and waits for them once. */
CUresult xmt_gc_compare(xmt_gc *g, const xmt_gc_cmp *c, size_t n, xmt_gc_result *out);

/* Sets flags[i] = 1 (host array of (bytes + chunk - 1) >> shift entries, zeroed by the
 * caller) for every chunk of 1 << shift bytes where a and b differ; *changed = how many
 * 16-byte words differ. Waits for it. */
CUresult xmt_gc_changed(xmt_gc *g, CUdeviceptr a, CUdeviceptr b, size_t bytes, unsigned shift,
                        uint8_t *flags, uint64_t *changed);

/* *max = the largest |value| among the bytes/es elements of float kind `kind` (XMT_CMP_F16
 * to XMT_CMP_F64) at p, NaNs and infinities left out (0 when none). Only the result comes
 * back to the host on the GPU path. Waits for it. */
CUresult xmt_gc_absmax(xmt_gc *g, CUdeviceptr p, size_t bytes, int kind, double *max);

/* Queues dst = ~src (bytes long) on the stream, without waiting. On the GPU path only:
 * CUDA_ERROR_NOT_SUPPORTED on the host path. */
CUresult xmt_gc_complement(xmt_gc *g, CUdeviceptr dst, CUdeviceptr src, size_t bytes);

/* Queues a kernel that holds the GPU for ns nanoseconds (of %globaltimer) on the stream,
 * without waiting: what is queued behind it then runs back to back. On the GPU path only:
 * CUDA_ERROR_NOT_SUPPORTED on the host path. */
CUresult xmt_gc_spin(xmt_gc *g, uint64_t ns);

/* Queues dst[i] = xmt_verify_seq_word(seed, i) for i < words (dst 8-byte aligned) on the
 * stream, without waiting. On the GPU path only: CUDA_ERROR_NOT_SUPPORTED on the host
 * path. */
CUresult xmt_gc_sequence(xmt_gc *g, CUdeviceptr dst, uint64_t words, uint64_t seed);

/* Frees what open and the calls allocated. */
void xmt_gc_close(xmt_gc *g);

#endif
