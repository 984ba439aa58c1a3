/*
 * launch: one kernel launch as a value, and the questions asked of its kind.
 *
 * The launch signatures (signatures.h: cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel, each also _ptsz) become one xmt_launch, which can be called
 * as the program made it, asked for its stream, or checked for attributes that bind its
 * shape. Everything that differs by kind is answered here, in switches over the kind
 * without `default`, so that a new launch signature that is not handled fails the build
 * (-Wswitch under -Werror) instead of being called with another kind's arguments.
 *
 * It is also the one home for making a launch with a candidate's configuration -- its
 * grid, block, shared memory and scalar arguments -- without ever writing the program's
 * argument memory (overrides go into copies), and for the rules of a refused launch. It
 * uses the kernel table (kernels.h) and the driver table (driver.h), nothing else of the
 * shim. Where a launch goes is dispatch's business (dispatch.h).
 */
#ifndef XMT_LAUNCH_H
#define XMT_LAUNCH_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "signatures.h"
#include "xmt_policy.h"

/* One per row of XMT_LAUNCH_SIGNATURES: XMT_K_LAUNCH, XMT_K_EX, XMT_K_COOP. */
typedef enum {
#define XMT_LAUNCH_KIND_(K) XMT_K_##K,
    XMT_LAUNCH_SIGNATURES(XMT_LAUNCH_KIND_)
#undef XMT_LAUNCH_KIND_
} xmt_launch_kind;

typedef struct xmt_launch {
    xmt_launch_kind kind;
    int ptsz;   /* came through a _ptsz entry point: stream 0 is the per-thread stream */
    void *real; /* the exact driver entry point the program would have called */
    CUfunction f;
    unsigned grid[3], block[3], shared;
    CUstream stream;
    void **params;
    void **extra;
    const CUlaunchConfig *cfg; /* XMT_K_EX only */
} xmt_launch;

/* Older names of the launch pointer types. */
typedef xmt_pfn_LAUNCH xmt_pfn_launch;
typedef xmt_pfn_EX xmt_pfn_launch_ex;
typedef xmt_pfn_COOP xmt_pfn_launch_coop;

/* ---- a launch made a value: xmt_launch_of_<KIND>(&l, real, ptsz, the row's parameters)
 * fills l and returns 1, or returns 0 when the call cannot be one (an Ex launch without a
 * config: the driver's to refuse). One per launch signature. */
#define XMT_LAUNCH_OF(K)                                                                           \
    static inline int xmt_launch_of_##K(xmt_launch *l, void *real, int ptsz, XMT_PARAMS(K))

XMT_LAUNCH_OF(LAUNCH)
{
    *l = (xmt_launch){XMT_K_LAUNCH, ptsz, real,   f,     {gx, gy, gz}, {bx, by, bz},
                      shared,       s,    params, extra, NULL};
    return 1;
}

XMT_LAUNCH_OF(EX)
{
    if (!cfg) return 0;
    *l = (xmt_launch){XMT_K_EX,
                      ptsz,
                      real,
                      f,
                      {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                      {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ},
                      cfg->sharedMemBytes,
                      cfg->hStream,
                      params,
                      extra,
                      cfg};
    return 1;
}

XMT_LAUNCH_OF(COOP)
{
    *l = (xmt_launch){XMT_K_COOP, ptsz, real,   f,    {gx, gy, gz}, {bx, by, bz},
                      shared,     s,    params, NULL, NULL};
    return 1;
}

/* Calls the real entry point with the launch exactly as the program made it. */
CUresult xmt_launch_call(const xmt_launch *l);

/* Does an Ex launch carry an attribute that the tuner must not touch (cooperative,
 * clusters, programmatic launch, ...)? Benign ones (priority, access policy) do not. */
int xmt_launch_has_blocking_attrs(const CUlaunchConfig *cfg);

/* ---- the kind questions -------------------------------------------------------------- */

/* May the tuner give this launch another grid, block or shared memory? Not a cooperative
 * launch (its grid must fit the device at once), nor an Ex launch whose attributes bind
 * its shape. */
static inline int xmt_launch_rewritable(const xmt_launch *l)
{
    switch (l->kind) {
    case XMT_K_LAUNCH: return 1;
    case XMT_K_EX: return !xmt_launch_has_blocking_attrs(l->cfg);
    case XMT_K_COOP: return 0;
    }
    return 0;
}

/* Discover mode's record of how a kernel was launched: one bit per path, ORed over its
 * launches (discover.h prints them; the log's `paths`). */
enum {
    XMT_PATH_LAUNCH = 1,   /* cuLaunchKernel(_ptsz) */
    XMT_PATH_EX = 2,       /* cuLaunchKernelEx(_ptsz) without binding attributes */
    XMT_PATH_EX_ATTRS = 4, /* cuLaunchKernelEx with cooperative/cluster/... attributes */
    XMT_PATH_COOP = 8,     /* cuLaunchCooperativeKernel(_ptsz) */
    XMT_PATH_EXTRA = 16,   /* arguments packed in `extra` */
};

static inline unsigned xmt_launch_path(const xmt_launch *l)
{
    unsigned extra = l->extra ? XMT_PATH_EXTRA : 0;
    switch (l->kind) {
    case XMT_K_LAUNCH: return XMT_PATH_LAUNCH | extra;
    case XMT_K_EX:
        return (xmt_launch_has_blocking_attrs(l->cfg) ? XMT_PATH_EX_ATTRS : XMT_PATH_EX) | extra;
    case XMT_K_COOP: return XMT_PATH_COOP | extra;
    }
    return 0;
}

/* Does the kind take its dims as arguments (so a rewrite passes other numbers), rather
 * than in a config (an Ex launch: a copy of its config with other dims)? */
static inline int xmt_launch_takes_dims(xmt_launch_kind kind)
{
    switch (kind) {
    case XMT_K_LAUNCH:
    case XMT_K_COOP: return 1;
    case XMT_K_EX: return 0;
    }
    return 0;
}

/* Gives m (a copy of a launch) the dims grid/block/shared. For a kind that carries them
 * in a config, that config is copied into *cfg_buf, which must live as long as m. */
static inline void xmt_launch_set_dims(xmt_launch *m, const unsigned grid[3],
                                       const unsigned block[3], unsigned shared,
                                       CUlaunchConfig *cfg_buf)
{
    for (int i = 0; i < 3; i++) {
        m->grid[i] = grid[i];
        m->block[i] = block[i];
    }
    m->shared = shared;
    if (xmt_launch_takes_dims(m->kind)) return;
    *cfg_buf = *m->cfg;
    cfg_buf->gridDimX = grid[0];
    cfg_buf->gridDimY = grid[1];
    cfg_buf->gridDimZ = grid[2];
    cfg_buf->blockDimX = block[0];
    cfg_buf->blockDimY = block[1];
    cfg_buf->blockDimZ = block[2];
    cfg_buf->sharedMemBytes = shared;
    m->cfg = cfg_buf;
}

/* The stream the shim's own work for this launch must use: the launch's stream, or the
 * per-thread default stream when stream 0 came through a _ptsz entry point. */
static inline CUstream xmt_launch_stream(const xmt_launch *l)
{
    CUstream s = l->kind == XMT_K_EX ? l->cfg->hStream : l->stream;
    return (!s && l->ptsz) ? CU_STREAM_PER_THREAD : s;
}

/* ---- a launch with a candidate's configuration ------------------------------------ */

/* The packed argument buffer of an `extra` array and its size; -1 when it has none. */
int xmt_extra_buffer(void **extra, uint8_t **buf, size_t *size);

/* A candidate's scalar arguments applied to a launch's (or graph node's) arguments, in
 * copies: params_out/extra_out are what to pass instead (the originals when c has no
 * overrides). Lives on the caller's stack; free with xmt_cand_args_free. */
typedef struct {
    void **params_out, **extra_out;
    void *params[XMT_KERNEL_MAX_PARAMS];
    uint64_t values[XMT_MAX_ARG_OVERRIDES];
    uint8_t packed_stack[4096];
    uint8_t *packed;
    size_t packed_size;
    void *extra[5];
} xmt_cand_args;

/* 0 and *a filled; -1 when the arguments cannot be found (an `extra` without a buffer,
 * too many parameters). */
int xmt_candidate_args(const xmt_kernel *k, void **params, void **extra, const xmt_candidate *c,
                       xmt_cand_args *a);
void xmt_cand_args_free(xmt_cand_args *a);

/* Launches l with candidate c's dimensions and scalar arguments (c NULL: as made). */
CUresult xmt_launch_as(const xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c);

/* The launch as the program made it, counted as passed through. */
CUresult xmt_pass(xmt_kernel *k, const xmt_launch *l);

/* Errors after which the context is still usable: the launch was refused, nothing ran. */
int xmt_refused(CUresult r);

/* Whether c launches exactly as l does: the same grid, block and dynamic shared memory,
 * no argument overridden. */
int xmt_candidate_is_own(const xmt_candidate *c, const xmt_launch *l);

/* The launch for real with candidate c: if the driver refuses it, the program's own
 * config runs instead (warned) and its result is what the program sees. */
CUresult xmt_run_for_real(xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c);

#endif
