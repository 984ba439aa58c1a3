/*
 * outputs: what a launch wrote, found by running it — the half of `protect: auto` that
 * protect.c's regions cannot tell. The session runs the program's own config on the
 * regions' snapshot; the chunks (XMT_CHUNK_SHIFT) that changed are its outputs, a second
 * run from poisoned outputs tells those it writes whole from those it updates in place.
 * Here: finding the changed chunks on the GPU (gpucheck.c), marking them, the spans to
 * restore or poison, the pieces and comparisons a verify run makes (outputs apart from
 * the rest, tolerance buffers within their bounds), and putting back what a rejected
 * candidate changed outside the outputs. The session keeps the order of the runs and
 * what a failure means.
 */
#ifndef XMT_OUTPUTS_H
#define XMT_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "gpucheck.h"
#include "protect.h"
#include "xmt_policy.h"

#define XMT_MAX_PIECES 16 /* compared apart per region: see outputs.c, pieces() */
enum { XMT_PIECE_OUT = 0, XMT_PIECE_OUTSIDE = 1, XMT_PIECE_MIXED = 2 };

/* A declared buffer of a session (restore, reset_to_zero, verify), with its snapshot. */
typedef struct {
    xmt_buffer b;
    CUdeviceptr ptr, snap, ref; /* ref: the own config's result (declared verify) */
} xmt_sbuf;

/* A role bit (b.roles) of an xmt_sbuf that is no declared buffer but a float extent
 * under auto protection (rounding.h): compared apart, never snapshotted or prepared. */
#define XMT_SBUF_EXTENT 0x100u

/* A run of chunks of one region, to restore or poison with one call. */
typedef struct {
    CUdeviceptr at, snap;
    size_t bytes;
    int pure;        /* written whole by the program's own config: poisoned before a verify run */
    CUdeviceptr ref; /* the same bytes of the region's reference (its ref) */
} xmt_span;

/* Flags in each region's `seen` the chunks where the device data differs from its
 * snapshot (against_ref 0) or its reference (1); *words: the differing words. The first
 * failure's result, else CUDA_SUCCESS. */
CUresult xmt_outputs_changes(xmt_gc *gc, xmt_region *regs, size_t nregs, int against_ref,
                             uint64_t *words);

/* The chunks the last xmt_outputs_changes saw changed become the outputs (out[c] 1:
 * written whole, until xmt_outputs_in_place says otherwise). Returns their number. */
size_t xmt_outputs_mark(xmt_region *regs, size_t nregs);

/* After a run from poisoned outputs, compared with the reference: the outputs the last
 * xmt_outputs_changes saw differ are updated in place (out[c] 2), not written whole.
 * Returns 1 when there are such, 0 when none, -1 when a chunk that is not an output
 * changed (two runs wrote different places: not deterministic). */
int xmt_outputs_in_place(xmt_region *regs, size_t nregs);

/* The runs of output chunks (out[c] 1: written whole, 2: updated in place), as spans in
 * *spans (reallocated; *nspans of them). 0, or -1 when out of memory. */
int xmt_outputs_spans(const xmt_region *regs, size_t nregs, xmt_span **spans, size_t *nspans);

/* The comparisons of auto protection, piece by piece of every region, into segs and
 * their kinds (XMT_PIECE_*) into kinds: room for XMT_MAX_PIECES * (2 * nbufs + 1) per
 * region. bufs: the declared buffers and the float extents (rounding.h), each compared
 * apart when it has a tolerance or is an extent; bufidx (may be NULL): for each
 * comparison, the index in bufs of the buffer it compares, -1 for the rest. Returns how
 * many. */
size_t xmt_outputs_segments(const xmt_region *regs, size_t nregs, const xmt_sbuf *bufs,
                            size_t nbufs, xmt_gc_cmp *segs, uint8_t *kinds, int32_t *bufidx);

/* Whether a comparison that found a difference (results[i].count) may lie outside the
 * outputs: its kind is not XMT_PIECE_OUT. */
int xmt_outputs_changed_outside(const xmt_gc_result *results, const uint8_t *kinds, size_t nsegs);

/* Copies back from each region's snapshot the chunks the last xmt_outputs_changes saw
 * changed outside the outputs (on stream s); *put: the bytes. The first failure's result,
 * else CUDA_SUCCESS. */
CUresult xmt_outputs_put_back_outside(const xmt_region *regs, size_t nregs, CUstream s,
                                      size_t *put);

#endif
