/*
 * rounding: float outputs under protect: auto (see rounding.h).
 */
#include "rounding.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autotune.h"
#include "driver.h"
#include "verify.h"

const char *xmt_rounding_hint(const xmt_entry *e)
{
    return xmt_auto_owns(e) ? "verification is bitwise unless a tolerance is allowed: "
                              "XMATUNE_AUTO_TOLERANCE=RTOL,ATOL"
                            : "verification is bitwise unless a tolerance is allowed: "
                              "tolerance: {rtol: R, atol: A} in the entry";
}

double xmt_rounding_bound(int cmp_kind)
{
    return cmp_kind == XMT_CMP_F16 || cmp_kind == XMT_CMP_BF16 ? 0x1p-6 : 0x1p-10;
}

static int is_float(int dt)
{
    return dt >= XMT_DT_F16 && dt <= XMT_DT_F64;
}

/* The element type each parameter points to: the entry's word, else the signature's;
 * -1 for what is not a pointer to one scalar. */
static void pointees(const xmt_kernel *k, size_t np, int *dt)
{
    xmt_sig s;
    xmt_sig_param p[XMT_KERNEL_MAX_PARAMS];
    int n = xmt_sig_read(k->demangled, &s, p, XMT_KERNEL_MAX_PARAMS);
    int typed = n >= 0 && (size_t)n == np;
    for (size_t i = 0; i < np; i++) {
        dt[i] = k->entry ? xmt_entry_pointee(k->entry, (unsigned)i) : -1;
        if (dt[i] < 0 && typed && p[i].cls == XMT_SIG_POINTER) dt[i] = p[i].dtype;
    }
}

static int overlaps(CUdeviceptr a, size_t an, CUdeviceptr b, size_t bn)
{
    return a < b + bn && b < a + an;
}

/* The end of the output extent starting at p in region g (p on an output chunk): the
 * end of that run of output chunks, or the next pointer argument above p. */
static CUdeviceptr extent_end(const xmt_kernel *k, const xmt_launch_view *v, size_t np,
                              const xmt_region *g, CUdeviceptr p)
{
    size_t c = (size_t)(p - g->base) >> XMT_CHUNK_SHIFT;
    while (c < g->nchunks && g->out[c])
        c++;
    size_t off = c << XMT_CHUNK_SHIFT;
    CUdeviceptr end = g->base + (off < g->bytes ? off : g->bytes);
    for (size_t j = 0; j < np; j++) {
        CUdeviceptr q;
        if (k->sizes[j] != 8 || !v->params[j]) continue;
        memcpy(&q, v->params[j], 8);
        if (q > p && q < end) end = q;
    }
    return end;
}

size_t xmt_rounding_extents(const xmt_kernel *k, const xmt_launch_view *v, const xmt_region *regs,
                            size_t nregs, const xmt_sbuf *declared, size_t ndeclared, double rtol,
                            double atol, xmt_sbuf *out, char (*names)[XMT_EXTENT_NAME], size_t cap)
{
    size_t np = k->nparams < v->nparams ? k->nparams : v->nparams, n = 0;
    if (np > XMT_KERNEL_MAX_PARAMS) np = XMT_KERNEL_MAX_PARAMS;
    int dt[XMT_KERNEL_MAX_PARAMS];
    pointees(k, np, dt);
    for (size_t i = 0; i < np && n < cap; i++) {
        CUdeviceptr p;
        if (!is_float(dt[i]) || k->sizes[i] != 8 || !v->params[i]) continue;
        memcpy(&p, v->params[i], 8);
        const xmt_region *g = NULL;
        for (size_t r = 0; r < nregs && !g; r++)
            if (p >= regs[r].base && p < regs[r].base + regs[r].bytes) g = &regs[r];
        size_t es = xmt_dtype_size((xmt_dtype)dt[i]);
        if (!g || !es || p % es || !g->out[(p - g->base) >> XMT_CHUNK_SHIFT]) continue;
        size_t bytes = (size_t)(extent_end(k, v, np, g, p) - p) / es * es;
        int clash = bytes == 0;
        for (size_t j = 0; j < ndeclared && !clash; j++)
            clash = (declared[j].b.roles & XMT_BUF_VERIFY) &&
                    overlaps(p, bytes, declared[j].ptr, declared[j].b.bytes);
        for (size_t j = 0; j < n && !clash; j++)
            clash = overlaps(p, bytes, out[j].ptr, out[j].b.bytes);
        if (clash) continue;
        const char *pn = NULL;
        if (k->entry && xmt_entry_param(k->entry, i, &pn, NULL, NULL) && pn)
            snprintf(names[n], XMT_EXTENT_NAME, "%s", pn);
        else
            snprintf(names[n], XMT_EXTENT_NAME, "parameter %zu", i);
        xmt_sbuf *b = &out[n];
        memset(b, 0, sizeof *b);
        b->b.param = (unsigned)i;
        b->b.name = names[n];
        b->b.roles = XMT_BUF_VERIFY | XMT_SBUF_EXTENT;
        b->b.dtype = (xmt_dtype)dt[i];
        b->b.bytes = bytes;
        b->b.rtol = rtol;
        b->b.atol = atol;
        b->ptr = p;
        n++;
    }
    return n;
}

/* How many elements of c differ by more than atol (rtol 0). */
static CUresult count_beyond(xmt_gc *gc, const xmt_gc_cmp *c, int kind, double atol, uint64_t *n)
{
    xmt_gc_cmp t = *c;
    xmt_gc_result r;
    t.kind = kind;
    t.rtol = 0;
    t.atol = atol;
    CUresult e = xmt_gc_compare(gc, &t, 1, &r);
    *n = r.count;
    return e;
}

/* Whether element i of c differs by more than atol (the rule count_beyond counts by), read
 * from the two copies (c->es bytes each, as count_beyond's comparison reads them): 1, 0, or
 * -1 when it cannot be read. */
static int one_beyond(xmt_gc *gc, const xmt_gc_cmp *c, int kind, uint64_t i, double atol)
{
    size_t es = c->es;
    uint8_t a[8] = {0}, b[8] = {0};
    if (es == 0 || es > sizeof a || (i + 1) * es > c->bytes ||
        xmt_drv.cuMemcpyDtoHAsync(a, c->got + i * es, es, gc->s) != CUDA_SUCCESS ||
        xmt_drv.cuMemcpyDtoHAsync(b, c->ref + i * es, es, gc->s) != CUDA_SUCCESS ||
        xmt_drv.cuStreamSynchronize(gc->s) != CUDA_SUCCESS)
        return -1;
    return !xmt_verify_within(xmt_verify_value(b, 0, kind), xmt_verify_value(a, 0, kind), 0, atol);
}

CUresult xmt_rounding_measure(xmt_gc *gc, const xmt_gc_cmp *c, int cmp_kind, double scale,
                              uint64_t first, xmt_rounding *out)
{
    double bound = xmt_rounding_bound(cmp_kind);
    uint64_t n;
    CUresult e;
    memset(out, 0, sizeof *out);
    /* a wrong result most often shows in its first differing element: two values read
     * rather than two passes over the output (a rejected candidate paid them both) */
    if (first != UINT64_MAX && scale > 0 && one_beyond(gc, c, cmp_kind, first, bound * scale) == 1)
        return CUDA_SUCCESS;
    if ((e = count_beyond(gc, c, cmp_kind, bound * scale, &n)) != CUDA_SUCCESS) return e;
    if (n) return CUDA_SUCCESS; /* a wrong result */
    if ((e = count_beyond(gc, c, cmp_kind, 0, &out->elements)) != CUDA_SUCCESS) return e;
    if (out->elements && scale == 0) return CUDA_SUCCESS; /* a wrong result */
    out->rounding = 1;
    if (!out->elements) return CUDA_SUCCESS; /* the bits differ, the values do not */
    /* bisection of the log of the bound between bound * 2^-30 and bound: the first count
     * that is 0 stays the answer, so it holds for every element (8 steps: within
     * 2^(30/256)) */
    double lo = ldexp(bound, -30), hi = bound;
    if ((e = count_beyond(gc, c, cmp_kind, lo * scale, &n)) != CUDA_SUCCESS) return e;
    if (!n)
        hi = lo;
    else
        for (int i = 0; i < 8; i++) {
            double mid = sqrt(lo * hi);
            if ((e = count_beyond(gc, c, cmp_kind, mid * scale, &n)) != CUDA_SUCCESS) return e;
            *(n ? &lo : &hi) = mid;
        }
    out->max_rel = hi;
    return CUDA_SUCCESS;
}
