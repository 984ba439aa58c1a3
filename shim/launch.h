/*
 * launch: one kernel launch as a value, and the primitives on it.
 *
 * The three launch shapes (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel,
 * each also _ptsz) become one xmt_launch, which can be called as the program made it,
 * asked for its stream, or checked for attributes that bind its shape. A leaf: it uses
 * nothing of the shim. Where a launch goes is dispatch's business (dispatch.h).
 */
#ifndef XMT_LAUNCH_H
#define XMT_LAUNCH_H

#include <cuda.h>

typedef enum { XMT_K_LAUNCH = 0, XMT_K_EX, XMT_K_COOP } xmt_launch_kind;

typedef struct xmt_launch {
    int kind;   /* xmt_launch_kind */
    int ptsz;   /* came through a _ptsz entry point: stream 0 is the per-thread stream */
    void *real; /* the exact driver entry point the program would have called */
    CUfunction f;
    unsigned grid[3], block[3], shared;
    CUstream stream;
    void **params;
    void **extra;
    const CUlaunchConfig *cfg; /* XMT_K_EX only */
} xmt_launch;

typedef CUresult (*xmt_pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*xmt_pfn_launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*xmt_pfn_launch_coop)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void **);

/* Calls the real entry point with the launch exactly as the program made it. */
CUresult xmt_launch_call(const xmt_launch *l);

/* Does an Ex launch carry an attribute that the tuner must not touch (cooperative,
 * clusters, programmatic launch, ...)? Benign ones (priority, access policy) do not. */
int xmt_launch_has_blocking_attrs(const CUlaunchConfig *cfg);

/* The stream the shim's own work for this launch must use: the launch's stream, or the
 * per-thread default stream when stream 0 came through a _ptsz entry point. */
static inline CUstream xmt_launch_stream(const xmt_launch *l)
{
    CUstream s = l->kind == XMT_K_EX ? l->cfg->hStream : l->stream;
    return (!s && l->ptsz) ? CU_STREAM_PER_THREAD : s;
}

#endif
