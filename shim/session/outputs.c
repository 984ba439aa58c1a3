/*
 * outputs: what a launch wrote, found by running it (see outputs.h).
 */
#include "outputs.h"

#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "verify.h"

CUresult xmt_outputs_changes(xmt_gc *gc, xmt_region *regs, size_t nregs, int against_ref,
                             uint64_t *words)
{
    uint64_t n;
    *words = 0;
    for (size_t i = 0; i < nregs; i++) {
        xmt_region *g = &regs[i];
        memset(g->seen, 0, g->nchunks);
        CUresult r = xmt_gc_changed(gc, g->base, against_ref ? g->ref : g->snap, g->bytes,
                                    XMT_CHUNK_SHIFT, g->seen, &n);
        if (r != CUDA_SUCCESS) return r;
        *words += n;
    }
    return CUDA_SUCCESS;
}

size_t xmt_outputs_mark(xmt_region *regs, size_t nregs)
{
    size_t nout = 0;
    for (size_t i = 0; i < nregs; i++)
        for (size_t c = 0; c < regs[i].nchunks; c++) {
            regs[i].out[c] = regs[i].seen[c];
            nout += regs[i].seen[c];
        }
    return nout;
}

int xmt_outputs_in_place(xmt_region *regs, size_t nregs)
{
    int in_place = 0;
    for (size_t i = 0; i < nregs; i++)
        for (size_t c = 0; c < regs[i].nchunks; c++)
            if (regs[i].seen[c]) {
                if (!regs[i].out[c]) return -1;
                regs[i].out[c] = 2;
                in_place = 1;
            }
    return in_place;
}

int xmt_outputs_spans(const xmt_region *regs, size_t nregs, xmt_span **spans, size_t *nspans)
{
    size_t n = 0, cs = (size_t)1 << XMT_CHUNK_SHIFT;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (size_t i = 0; i < nregs; i++) {
            const xmt_region *g = &regs[i];
            for (size_t c = 0; c < g->nchunks; c++) {
                if (!g->out[c] || (c > 0 && g->out[c - 1] == g->out[c])) continue;
                size_t e = c;
                while (e + 1 < g->nchunks && g->out[e + 1] == g->out[c])
                    e++;
                if (pass) {
                    size_t end = (e + 1) * cs < g->bytes ? (e + 1) * cs : g->bytes;
                    (*spans)[n] = (xmt_span){g->base + c * cs, g->snap + c * cs, end - c * cs,
                                             g->out[c] == 1, g->ref + c * cs};
                }
                n++;
            }
        }
        if (!pass) {
            free(*spans);
            *spans = calloc(n ? n : 1, sizeof **spans);
            if (!*spans) return -1;
        }
    }
    *nspans = n;
    return 0;
}

/* Whether buffer b is compared apart: a declared verify buffer with a tolerance, or a
 * float extent (rounding.c: bitwise or within the entry's tolerance). */
static int tolerant(const xmt_sbuf *b)
{
    return (b->b.roles & XMT_BUF_VERIFY) &&
           (b->b.rtol || b->b.atol || (b->b.roles & XMT_SBUF_EXTENT));
}

/* The pieces of a region to compare apart: runs of output chunks and runs of other
 * chunks (so that a difference outside the outputs is known without another pass), at
 * most XMT_MAX_PIECES, else the whole region as one mixed piece; likewise when a
 * tolerance buffer straddles two pieces. */
static size_t pieces(const xmt_region *g, const xmt_sbuf *bufs, size_t nbufs, CUdeviceptr *at,
                     CUdeviceptr *end, uint8_t *kind)
{
    size_t n = 0, cs = (size_t)1 << XMT_CHUNK_SHIFT;
    for (size_t c = 0; c < g->nchunks; c++) {
        if (c > 0 && !g->out[c] == !g->out[c - 1]) continue;
        if (n == XMT_MAX_PIECES) goto mixed;
        at[n] = g->base + c * cs;
        kind[n] = g->out[c] ? XMT_PIECE_OUT : XMT_PIECE_OUTSIDE;
        if (n) end[n - 1] = at[n];
        n++;
    }
    if (n) end[n - 1] = g->base + g->bytes;
    for (size_t j = 0; j < nbufs; j++) {
        const xmt_sbuf *b = &bufs[j];
        if (!tolerant(b)) continue;
        for (size_t i = 0; i < n; i++)
            if (b->ptr < end[i] && b->ptr + b->b.bytes > end[i] && end[i] < g->base + g->bytes)
                goto mixed;
    }
    return n;
mixed:
    at[0] = g->base;
    end[0] = g->base + g->bytes;
    kind[0] = XMT_PIECE_MIXED;
    return 1;
}

/* One piece's comparisons, appended at segs[*n] (their kinds at kinds[*n]): bitwise,
 * except the declared verify buffers with a tolerance inside it, compared within it. */
static void piece_segments(const xmt_region *g, CUdeviceptr at, CUdeviceptr end, uint8_t kind,
                           const xmt_sbuf *bufs, size_t nbufs, xmt_gc_cmp *segs, uint8_t *kinds,
                           int32_t *bufidx, size_t *n)
{
    for (;;) {
        const xmt_sbuf *next = NULL;
        for (size_t j = 0; j < nbufs; j++) {
            const xmt_sbuf *b = &bufs[j];
            if (tolerant(b) && b->ptr >= at && b->ptr + b->b.bytes <= end &&
                (!next || b->ptr < next->ptr))
                next = b;
        }
        CUdeviceptr stop = next ? next->ptr : end;
        if (stop > at) {
            kinds[*n] = kind;
            if (bufidx) bufidx[*n] = -1;
            segs[(*n)++] =
                (xmt_gc_cmp){g->ref + (at - g->base), at, stop - at, XMT_CMP_BITS, 1, 0, 0};
        }
        if (!next) break;
        kinds[*n] = kind;
        if (bufidx) bufidx[*n] = (int32_t)(next - bufs);
        xmt_gc_cmp *c = &segs[(*n)++];
        *c = (xmt_gc_cmp){g->ref + (next->ptr - g->base),
                          next->ptr,
                          next->b.bytes,
                          0,
                          1,
                          next->b.rtol,
                          next->b.atol};
        c->kind = xmt_verify_kind(next->b.dtype, next->b.rtol, next->b.atol, &c->es);
        at = next->ptr + next->b.bytes;
    }
}

size_t xmt_outputs_segments(const xmt_region *regs, size_t nregs, const xmt_sbuf *bufs,
                            size_t nbufs, xmt_gc_cmp *segs, uint8_t *kinds, int32_t *bufidx)
{
    CUdeviceptr at[XMT_MAX_PIECES], end[XMT_MAX_PIECES];
    uint8_t kind[XMT_MAX_PIECES];
    size_t nsegs = 0;
    for (size_t i = 0; i < nregs; i++) {
        size_t n = pieces(&regs[i], bufs, nbufs, at, end, kind);
        for (size_t p = 0; p < n; p++)
            piece_segments(&regs[i], at[p], end[p], kind[p], bufs, nbufs, segs, kinds, bufidx,
                           &nsegs);
    }
    return nsegs;
}

int xmt_outputs_changed_outside(const xmt_gc_result *results, const uint8_t *kinds, size_t nsegs)
{
    for (size_t i = 0; i < nsegs; i++)
        if (results[i].count && kinds[i] != XMT_PIECE_OUT) return 1;
    return 0;
}

CUresult xmt_outputs_put_back_outside(const xmt_region *regs, size_t nregs, CUstream s, size_t *put)
{
    size_t cs = (size_t)1 << XMT_CHUNK_SHIFT;
    *put = 0;
    for (size_t i = 0; i < nregs; i++) {
        const xmt_region *g = &regs[i];
        for (size_t k = 0; k < g->nchunks; k++) {
            if (!g->seen[k] || g->out[k]) continue;
            size_t len = (k + 1) * cs < g->bytes ? cs : g->bytes - k * cs;
            CUresult r = xmt_drv.cuMemcpyDtoDAsync(g->base + k * cs, g->snap + k * cs, len, s);
            if (r != CUDA_SUCCESS) return r;
            *put += len;
        }
    }
    return CUDA_SUCCESS;
}
