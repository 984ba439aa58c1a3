/*
 * slack: the trial helper's guard bytes.
 *
 * The helper maps the program's staged memory in windows: each region protect.c found,
 * widened to the allocation granularity (2 MiB on an H200), overlapping ones merged
 * (trialtune.c). The bytes of a window that no region covers -- the slack -- belong to no
 * allocation of the program: a config whose last blocks write a little past a buffer's
 * end writes there in the helper without a fault, while in the program the same write
 * faults or lands in a neighbouring allocation. So the session fills the slack with
 * a fixed pseudo-random byte sequence before anything runs and checks it unchanged, on the
 * GPU, after each verification: a config that changed any byte of it is rejected
 * (docs/tuning.md, "What the helper sees, and the check"). Pseudo-random rather than one
 * repeated byte: a kernel that copies (or reduces with max, min) what it reads past one
 * buffer's end into the slack past another's would write a repeated byte back unchanged;
 * each span starts at its own offset in the sequence, so such a copy, or a shifted one,
 * shows. Reads of the slack leave no trace here; they read those bytes, which almost
 * always changes what the config writes to its outputs.
 */
#ifndef XMT_SLACK_H
#define XMT_SLACK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "gpucheck.h"
#include "protect.h"

/* The sequence: 8-byte words xmt_verify_seq_word(XMT_SLACK_SEED, i) (SplitMix64 from this
 * seed), the same in every process (a tuning does not depend on which process ran it);
 * span i compares with it from byte (i % XMT_SLACK_OFFSETS) * 16 on. */
#define XMT_SLACK_SEED 0x9E3779B97F4A7C15ull
#define XMT_SLACK_OFFSETS 4096

/* A run of slack: [at, at + bytes) in the helper's addresses. after: the region (an
 * index of those given) whose end it follows, -1 when it begins at its window's start;
 * before: the region whose start it precedes, -1 when it runs to its window's end. */
typedef struct {
    CUdeviceptr at;
    size_t bytes;
    long after, before;
} xmt_slack_span;

typedef struct {
    xmt_slack_span *spans;
    size_t n;
    size_t total, largest; /* bytes of all spans, of the largest */
    size_t pattern_bytes;  /* what the sequence needs: largest and room for the offsets (a
                            * multiple of 8) */
    CUdeviceptr pattern;   /* pattern_bytes of device memory (the caller allocates it) */
    int pattern_set;       /* the sequence is in it */
    xmt_gc_cmp *cmp;
    xmt_gc_result *res;
} xmt_slack;

/* The slack of nwin windows (at win[i], wbytes[i] bytes) around nregs regions (base and
 * bytes read; regions may overlap, and a region's bytes outside every window are
 * ignored), into *g (zeroed first; spans in window order, then by address). Returns 0,
 * or -1 when out of memory. No driver call. */
int xmt_slack_find(const CUdeviceptr *win, const size_t *wbytes, size_t nwin,
                   const xmt_region *regs, size_t nregs, xmt_slack *g);

/* Fills every span from the sequence on stream s (g->pattern first, once: on the GPU by
 * gc's xmt_seq when its kernels are loaded, else made on the host and copied; gc may be
 * NULL), and waits. */
CUresult xmt_slack_fill(xmt_slack *g, xmt_gc *gc, CUstream s);

/* Compares every span with the sequence (gc's comparison kernels, one wait). *changed: how
 * many bytes differ in all; when some do, *span is the first span that differs and *first
 * its first differing byte (from the span's start). */
CUresult xmt_slack_check(xmt_slack *g, xmt_gc *gc, uint64_t *changed, size_t *span,
                         uint64_t *first);

/* Frees g's host arrays (not g->pattern: device memory is the caller's). */
void xmt_slack_free(xmt_slack *g);

#endif
