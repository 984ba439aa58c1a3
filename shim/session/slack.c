/*
 * slack: the trial helper's guard bytes (see slack.h).
 */
#include "slack.h"

#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "verify.h"

typedef struct {
    CUdeviceptr lo, hi;
    long index;
} piece;

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Appends a span to g (grown as needed). 0, or -1 when out of memory. */
static int add_span(xmt_slack *g, size_t *cap, CUdeviceptr lo, CUdeviceptr hi, long after,
                    long before)
{
    if (hi <= lo) return 0;
    if (g->n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        xmt_slack_span *s = realloc(g->spans, c * sizeof *s);
        if (!s) return -1;
        g->spans = s;
        *cap = c;
    }
    g->spans[g->n++] = (xmt_slack_span){lo, (size_t)(hi - lo), after, before};
    g->total += hi - lo;
    if (hi - lo > g->largest) g->largest = hi - lo;
    /* whole 8-byte words of the sequence */
    g->pattern_bytes = (g->largest + 7) / 8 * 8 + 16 * (size_t)XMT_SLACK_OFFSETS;
    return 0;
}

/* The slack of one window [lo, hi): the gaps between the regions' pieces inside it, p[0 ..
 * n) sorted by start (clipped to the window). */
static int window_slack(xmt_slack *g, size_t *cap, CUdeviceptr lo, CUdeviceptr hi, const piece *p,
                        size_t n)
{
    CUdeviceptr at = lo; /* everything below it is covered, or slack already taken */
    long after = -1;
    for (size_t i = 0; i < n; i++) {
        if (p[i].lo > at && add_span(g, cap, at, p[i].lo, after, p[i].index) != 0) return -1;
        if (p[i].hi > at) {
            at = p[i].hi;
            after = p[i].index;
        }
    }
    return add_span(g, cap, at, hi, after, -1);
}

int xmt_slack_find(const CUdeviceptr *win, const size_t *wbytes, size_t nwin,
                   const xmt_region *regs, size_t nregs, xmt_slack *g)
{
    memset(g, 0, sizeof *g);
    size_t cap = 0;
    piece *p = malloc((nregs ? nregs : 1) * sizeof *p);
    if (!p) return -1;
    int r = 0;
    for (size_t w = 0; r == 0 && w < nwin; w++) {
        CUdeviceptr lo = win[w], hi = win[w] + wbytes[w];
        size_t n = 0;
        for (size_t i = 0; i < nregs; i++) {
            CUdeviceptr a = regs[i].base, b = regs[i].base + regs[i].bytes;
            if (b <= lo || a >= hi || !regs[i].bytes) continue;
            p[n++] = (piece){a > lo ? a : lo, b < hi ? b : hi, (long)i};
        }
        qsort(p, n, sizeof *p, cmp_piece);
        r = window_slack(g, &cap, lo, hi, p, n);
    }
    free(p);
    if (r == 0 && g->n) {
        g->cmp = calloc(g->n, sizeof *g->cmp);
        g->res = calloc(g->n, sizeof *g->res);
        if (!g->cmp || !g->res) r = -1;
    }
    if (r != 0) xmt_slack_free(g);
    return r;
}

/* Where span i's bytes are in the sequence. */
static CUdeviceptr seq_at(const xmt_slack *g, size_t i)
{
    return g->pattern + 16 * (i % XMT_SLACK_OFFSETS);
}

/* The sequence made in g->pattern. On the GPU (gc's kernels loaded) by xmt_seq on gc's
 * stream, with no host work and no copy (made on the host, atomic_rowsum's 2 MiB of slack
 * cost its session on an H100 1.0 ms of host time and a 0.25-0.37 ms copy: docs/
 * benchmarks.md, tenth session). Else made on the host and copied, and the whole context
 * waited for (a copy from pageable memory may still be under way when cuMemcpyHtoD
 * returns, and the spans are filled from it on another stream). */
static CUresult set_pattern(xmt_slack *g, xmt_gc *gc, CUstream s)
{
    size_t words = g->pattern_bytes / 8;
    CUresult r;
    if (gc && xmt_gc_on_gpu(gc)) {
        r = xmt_gc_sequence(gc, g->pattern, words, XMT_SLACK_SEED);
        if (r == CUDA_SUCCESS && gc->s != s) r = xmt_drv.cuStreamSynchronize(gc->s);
    } else {
        uint64_t *h = malloc(words * 8);
        if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
        xmt_verify_seq_fill(h, words, XMT_SLACK_SEED);
        r = xmt_drv.cuMemcpyHtoD(g->pattern, h, words * 8);
        if (r == CUDA_SUCCESS) r = xmt_drv.cuCtxSynchronize();
        free(h);
    }
    g->pattern_set = r == CUDA_SUCCESS;
    return r;
}

CUresult xmt_slack_fill(xmt_slack *g, xmt_gc *gc, CUstream s)
{
    CUresult r = g->n && !g->pattern_set ? set_pattern(g, gc, s) : CUDA_SUCCESS;
    for (size_t i = 0; r == CUDA_SUCCESS && i < g->n; i++)
        r = xmt_drv.cuMemcpyDtoDAsync(g->spans[i].at, seq_at(g, i), g->spans[i].bytes, s);
    return r == CUDA_SUCCESS ? xmt_drv.cuStreamSynchronize(s) : r;
}

CUresult xmt_slack_check(xmt_slack *g, xmt_gc *gc, uint64_t *changed, size_t *span, uint64_t *first)
{
    *changed = 0;
    *span = 0;
    *first = 0;
    for (size_t i = 0; i < g->n; i++)
        g->cmp[i] =
            (xmt_gc_cmp){seq_at(g, i), g->spans[i].at, g->spans[i].bytes, XMT_CMP_BITS, 1, 0, 0};
    CUresult r = xmt_gc_compare(gc, g->cmp, g->n, g->res);
    for (size_t i = g->n; r == CUDA_SUCCESS && i-- > 0;)
        if (g->res[i].count) {
            *changed += g->res[i].count;
            *span = i;
            *first = g->res[i].first;
        }
    return r;
}

void xmt_slack_free(xmt_slack *g)
{
    free(g->spans);
    free(g->cmp);
    free(g->res);
    g->spans = NULL;
    g->cmp = NULL;
    g->res = NULL;
    g->n = 0;
}
