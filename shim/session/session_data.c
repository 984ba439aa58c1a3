/*
 * session_data: see session_data.h.
 */
#include "session_data.h"

#include <stdlib.h>
#include <string.h>

#include "autotune.h"
#include "clock.h"
#include "driver.h"
#include "options.h"
#include "session_base.h"
#include "verify.h"

/* The device memory one tuning may take: XMATUNE_SCRATCH_MB, else half of what is free. */
static double scratch_limit(void)
{
    if (xmt_opt.scratch_mb >= 0) return xmt_opt.scratch_mb * 1048576.0;
    size_t free_b = 0, total = 0;
    if (!xmt_drv.cuMemGetInfo || xmt_drv.cuMemGetInfo(&free_b, &total) != CUDA_SUCCESS) return 0;
    return (double)free_b / 2;
}

/* One declared buffer: a device snapshot of its contents, and (declared protection) a
 * device reference for verification. */
static int snapshot(xmt_session *S, xmt_sbuf *b)
{
    int r;
    memcpy(&b->ptr, S->req.v->params[b->b.param], sizeof b->ptr);
    S->data.nbufs++;
    if (b->b.roles & XMT_BUF_VERIFY) {
        S->data.any_verify = 1;
        S->data.tolerance |= b->b.rtol != 0 || b->b.atol != 0;
        if (!S->set.automatic &&
            (r = xmt_sess_scratch(S, &b->ref, b->b.bytes, "verify alloc")) != 0)
            return r;
    }
    if ((r = xmt_sess_scratch(S, &b->snap, b->b.bytes, "snapshot alloc")) != 0) return r;
    XMT_TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->snap, b->ptr, b->b.bytes, S->run.s), "snapshot");
    S->data.snapshots_taken = 1;
    return 0;
fail:
    return -1;
}

/* In the trial helper: the regions staged for it, as protect.c found them in the program
 * (the helper's copies of the program's memory are all it can reach). */
static int given_regions(xmt_session *S, size_t limit, size_t *reach, char *why, size_t cap)
{
    const xmt_trial_in *in = S->run.trial;
    *reach = 0;
    for (size_t i = 0; i < in->nregs; i++)
        *reach += in->regs[i].bytes;
    if (*reach > limit) return -2;
    S->data.regs = calloc(in->nregs ? in->nregs : 1, sizeof *S->data.regs);
    if (!S->data.regs) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < in->nregs; i++) {
        xmt_region *g = &S->data.regs[i];
        g->base = in->regs[i].base;
        g->bytes = in->regs[i].bytes;
        g->nchunks = (g->bytes + (1u << XMT_CHUNK_SHIFT) - 1) >> XMT_CHUNK_SHIFT;
        g->out = calloc(g->nchunks ? g->nchunks : 1, 1);
        g->seen = calloc(g->nchunks ? g->nchunks : 1, 1);
        S->data.nregs = i + 1;
        if (!g->out || !g->seen) {
            snprintf(why, cap, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* Auto protection: the regions the pointer arguments reach, their snapshot and
 * reference scratch. The context is synchronized first, so that the snapshot is the
 * data every stream has finished with. Returns 0, 1 untuned, -1 failure. */
static int regions(xmt_session *S)
{
    char why[240];
    XMT_TRY(S, xmt_drv.cuCtxSynchronize(), "synchronize");
    double room = (S->data.scratch_limit - (double)S->data.scratch_bytes) / 2;
    size_t reach = 0;
    int f = S->run.trial ? given_regions(S, room > 0 ? (size_t)room : 0, &reach, why, sizeof why)
                         : xmt_protect_find(S->req.k, S->req.v, room > 0 ? (size_t)room : 0,
                                            &S->data.regs, &S->data.nregs, &reach, why, sizeof why);
    if (f == -2) {
        snprintf(why, sizeof why,
                 "%.2f MiB (a snapshot and a reference of the %.2f MiB its pointer arguments "
                 "reach), more than the %.2f MiB allowed (XMATUNE_SCRATCH_MB)",
                 (double)(S->data.scratch_bytes + 2 * reach) / 1048576.0, (double)reach / 1048576.0,
                 S->data.scratch_limit / 1048576.0);
        return xmt_sess_untuned(S, "tuning needs device scratch of %s", why);
    }
    if (f != 0) return xmt_sess_untuned(S, "protect: auto cannot protect it: %s", why);
    /* the buffers compared apart: the declared ones and at most a float extent per
     * parameter (rounding.h) */
    size_t nsb =
        S->data.nbufs + (S->req.k->nparams < XMT_MAX_EXTENTS ? S->req.k->nparams : XMT_MAX_EXTENTS);
    size_t nseg = S->data.nbufs + S->data.nregs * XMT_MAX_PIECES * (2 * nsb + 1) + 1;
    xmt_gc_cmp *segs = realloc(S->data.segs, nseg * sizeof *segs);
    if (segs) S->data.segs = segs;
    xmt_gc_result *res = realloc(S->data.results, nseg * sizeof *res);
    if (res) S->data.results = res;
    uint8_t *kinds = realloc(S->data.seg_kind, nseg);
    if (kinds) S->data.seg_kind = kinds;
    S->data.seg_buf = calloc(nseg, sizeof *S->data.seg_buf);
    S->data.segbufs = calloc(nsb ? nsb : 1, sizeof *S->data.segbufs);
    S->data.ext_names = calloc(nsb ? nsb : 1, sizeof *S->data.ext_names);
    S->data.ext_scale = calloc(nsb ? nsb : 1, sizeof *S->data.ext_scale);
    if (!segs || !res || !kinds || !S->data.seg_buf || !S->data.segbufs || !S->data.ext_names ||
        !S->data.ext_scale) {
        xmt_sess_error(S, CUDA_ERROR_OUT_OF_MEMORY, "comparisons");
        return -1;
    }
    for (size_t i = 0; i < S->data.nregs; i++) {
        xmt_region *g = &S->data.regs[i];
        int r;
        if ((r = xmt_sess_scratch(S, &g->snap, g->bytes, "snapshot alloc")) != 0 ||
            (r = xmt_sess_scratch(S, &g->ref, g->bytes, "verify alloc")) != 0)
            return r;
        XMT_TRY(S, xmt_drv.cuMemcpyDtoDAsync(g->snap, g->base, g->bytes, S->run.s), "snapshot");
        S->data.snapshots_taken = 1;
    }
    S->data.any_verify = 1;
    return 0;
fail:
    return -1;
}

int xmt_sess_buffers(xmt_session *S)
{
    XMT_ASSERT(S->cand.cands && S->data.bufs && !S->data.nbufs, "data: snapshots twice");
    size_t nb = xmt_entry_nbuffers(S->req.k->entry);
    double t0 = xmt_now_ms();
    int r = 0;
    S->data.scratch_limit = scratch_limit();
    for (size_t i = 0; i < nb && r == 0; i++) {
        xmt_sbuf *b = &S->data.bufs[S->data.nbufs];
        int e = xmt_entry_buffer(S->req.k->entry, i, S->req.v, &b->b);
        if (e == 0 || (e == 1 && b->b.bytes == 0)) continue;
        if (e < 0 || b->b.param >= S->req.k->nparams || !S->req.v->params[b->b.param]) {
            xmt_sess_error(S, CUDA_ERROR_INVALID_VALUE, "buffer size");
            return -1;
        }
        r = snapshot(S, b);
    }
    if (r == 0 && S->set.automatic) r = regions(S);
    if (r == 0 && S->set.flush && S->req.v->attrs && S->req.v->attrs->l2_bytes > 0) {
        S->data.flush_bytes = (size_t)S->req.v->attrs->l2_bytes * 2;
        XMT_TRY(S, xmt_drv.cuMemAlloc(&S->data.flush_buf, S->data.flush_bytes), "l2 flush alloc");
    }
    if (r == 0) XMT_TRY(S, xmt_drv.cuStreamSynchronize(S->run.s), "synchronize");
    S->out.ph.snapshot += xmt_now_ms() - t0;
    return r;
fail:
    return -1;
}

/* The spans of S's outputs, as they are now marked; 0, or -1 (out of memory). */
static int build_spans(xmt_session *S)
{
    return xmt_outputs_spans(S->data.regs, S->data.nregs, &S->data.spans, &S->data.nspans);
}

/* The buffers compared apart under auto protection: the declared ones, then the float
 * outputs' extents (rounding.h), within the entry's tolerance: when it has one. */
static void float_extents(xmt_session *S)
{
    size_t cap = S->req.k->nparams < XMT_MAX_EXTENTS ? S->req.k->nparams : XMT_MAX_EXTENTS;
    memcpy(S->data.segbufs, S->data.bufs, S->data.nbufs * sizeof *S->data.bufs);
    S->data.nextents = xmt_rounding_extents(
        S->req.k, S->req.v, S->data.regs, S->data.nregs, S->data.bufs, S->data.nbufs,
        S->set.has_tol ? S->set.tol_rtol : 0, S->set.has_tol ? S->set.tol_atol : 0,
        S->data.segbufs + S->data.nbufs, S->data.ext_names, cap);
    S->data.nsegbufs = S->data.nbufs + S->data.nextents;
    for (size_t i = 0; i < S->data.nsegbufs; i++)
        S->data.ext_scale[i] = -1; /* read when first needed */
}

int xmt_sess_in_place_check(xmt_session *S)
{
    S->data.in_place_known = 1;
    if (xmt_sess_verify_run(S, &S->cand.cands[0]) != 0 || xmt_sess_changes(S, 1) < 0) return -1;
    int in_place = xmt_outputs_in_place(S->data.regs, S->data.nregs);
    if (in_place < 0)
        return xmt_sess_untuned_as(
            S, XMT_OUTCOME_UNSTABLE, "%s",
            "its own config is not deterministic: two runs wrote different places");
    if (!in_place) return 0;
    S->data.own_repeat_due = 1;
    return build_spans(S);
}

int xmt_sess_outputs(xmt_session *S)
{
    XMT_ASSERT(S->set.automatic && S->cand.cands[0].index == XMT_OWN_CONFIG, "outputs: not auto");
    xmt_cand *own = &S->cand.cands[0];
    if (xmt_sess_verify_run(S, own) != 0 || xmt_sess_changes(S, 0) < 0) return -1;
    size_t nout = xmt_outputs_mark(S->data.regs, S->data.nregs);
    /* no pointer arguments at all: nothing it writes can be compared (module globals are
     * not seen, as documented); with some, writing none of them means its outputs
     * cannot be told; the usual cause, a launch again on data the kernel wrote already
     * (it writes what is there). Auto's entries are no one's to edit: no advice there */
    if (nout == 0 && S->data.nregs > 0)
        return xmt_sess_untuned_as(
            S, XMT_OUTCOME_UNTOLD,
            "its own config changed no byte its pointer arguments reach, so its "
            "outputs cannot be told: it may have run on data it had written "
            "already%s",
            xmt_auto_owns(S->req.k->entry) ? "" : XMT_DECLARE_ADVICE);
    S->data.out_bytes = nout << XMT_CHUNK_SHIFT;
    if (xmt_sess_take_reference(S) != 0 || build_spans(S) != 0) return -1;
    /* in the program's own process every output is restored before each run, as the ones
     * updated in place are: when every candidate is rejected, the own config runs again
     * from the same data, to tell a kernel that does not repeat its result */
    S->data.own_repeat_due = xmt_sess_program_data(S);
    float_extents(S);
    S->data.nsegs =
        xmt_outputs_segments(S->data.regs, S->data.nregs, S->data.segbufs, S->data.nsegbufs,
                             S->data.segs, S->data.seg_kind, S->data.seg_buf);
    return S->run.trial && S->run.trial->in_place_first ? xmt_sess_in_place_check(S) : 0;
}

int xmt_sess_own_repeats(xmt_session *S)
{
    int rejected = 0;
    for (size_t i = 1; i <= S->cand.n; i++)
        rejected |= S->cand.cands[i].status == XMT_C_REJECTED;
    if (!S->data.own_repeat_due || xmt_sess_passing(S) > 0 || !rejected) return 0;
    S->data.own_repeat_due = 0;
    double t0 = xmt_now_ms();
    long d = xmt_sess_verify_run(S, &S->cand.cands[0]) != 0 ? -2 : xmt_sess_compare_all(S);
    S->out.ph.verify_own += xmt_now_ms() - t0;
    if (d == -2) return -1;
    if (d < 0) return 0;
    char b[80];
    snprintf(b, sizeof b, "%llu", (unsigned long long)S->data.results[d].count);
    return xmt_sess_untuned_as(
        S, XMT_OUTCOME_UNSTABLE,
        "its own config is not deterministic: two runs from the same data "
        "differ in %s elements (declare a tolerance in verify:, or use protect: "
        "declared)",
        b);
}

/* A run of bytes repeats one value when it equals itself shifted by DATA_PERIOD bytes: one
 * value of any element size dividing it (1, 2, 4, 8, 16 bytes) over and over, all zeros
 * among them. Runs of at most DATA_PERIOD bytes are not judged. */
#define DATA_PERIOD 16
/* The digest reads the first and last DIGEST_SAMPLE bytes of at most DIGEST_RUNS runs. */
#define DIGEST_SAMPLE 4096
#define DIGEST_RUNS 64

/* The next run of region g's chunks, from chunk *c on, whose out[] value v (0: not an
 * output, 1: written whole, 2: updated in place) has bit v set in want: 1 and the run
 * [*at, *at + *bytes) of the region; 0 when there is none. */
static int next_run(const xmt_region *g, unsigned want, size_t *c, size_t *at, size_t *bytes)
{
    size_t i = *c;
    while (i < g->nchunks && !(want >> g->out[i] & 1))
        i++;
    if (i >= g->nchunks) return 0;
    size_t j = i;
    while (j < g->nchunks && (want >> g->out[j] & 1))
        j++;
    *c = j;
    *at = i << XMT_CHUNK_SHIFT;
    size_t end = j << XMT_CHUNK_SHIFT;
    *bytes = (end < g->bytes ? end : g->bytes) - *at;
    return 1;
}

/* The comparisons that tell whether each judged run repeats one value, into *out (n of
 * them, malloc'd): what the launch reads (the snapshot of every chunk that is not an
 * output written whole; with outputs_read, of every chunk) and what it wrote (the
 * reference of its outputs). *reads: 1 when it reads any memory. -1 when out of memory. */
static long repeat_checks(const xmt_session *S, int outputs_read, xmt_gc_cmp **out, int *reads)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    *reads = 0;
    for (size_t i = 0; i < S->data.nregs; i++)
        for (int wrote = 0; wrote < 2; wrote++) {
            const xmt_region *g = &S->data.regs[i];
            size_t c = 0, at, bytes;
            while (next_run(g, wrote ? 6u : outputs_read ? 7u : 5u, &c, &at, &bytes)) {
                *reads |= !wrote;
                if (bytes <= DATA_PERIOD) continue;
                if (n == cap) {
                    cap = cap ? 2 * cap : 16;
                    xmt_gc_cmp *m = realloc(*out, cap * sizeof *m);
                    if (!m) return -1;
                    *out = m;
                }
                CUdeviceptr p = (wrote ? g->ref : g->snap) + at;
                (*out)[n++] =
                    (xmt_gc_cmp){p, p + DATA_PERIOD, bytes - DATA_PERIOD, XMT_CMP_BITS, 1, 0, 0};
            }
        }
    return (long)n;
}

/* Whether everything judged repeats one value (repeat_checks): 1 or 0 into *repeats, and
 * whether the launch reads memory into *reads. 0, or -1 on failure. */
static int judged_repeats(xmt_session *S, int outputs_read, int *repeats, int *reads)
{
    XMT_ASSERT(S->set.automatic && S->out.error == CUDA_SUCCESS, "data check: not auto");
    xmt_gc_cmp *c;
    long n = repeat_checks(S, outputs_read, &c, reads);
    xmt_gc_result *res = n > 0 ? calloc((size_t)n, sizeof *res) : NULL;
    if (n < 0 || (n > 0 && !res)) {
        free(c);
        xmt_sess_error(S, CUDA_ERROR_OUT_OF_MEMORY, "data check");
        return -1;
    }
    *repeats = n > 0;
    if (n > 0 && *reads) {
        CUresult r = xmt_gc_compare(&S->check.gc, c, (size_t)n, res);
        for (long i = 0; r == CUDA_SUCCESS && i < n; i++)
            *repeats &= res[i].count == 0;
        if (r != CUDA_SUCCESS) xmt_sess_error(S, r, "data check");
        if (r != CUDA_SUCCESS) *repeats = -1;
    }
    free(c);
    free(res);
    return *repeats < 0 ? -1 : 0;
}

int xmt_sess_data_check(xmt_session *S)
{
    int repeats, reads;
    if (judged_repeats(S, 0, &repeats, &reads) != 0) return -1;
    if (repeats && !S->data.in_place_known && xmt_sess_program_data(S)) {
        /* everything judged repeats one value with the outputs taken as written whole, and
         * which are updated in place cannot be asked here (that takes a run from poisoned
         * outputs): the data proves nothing if it would with the outputs written whole (it
         * reads other memory) or with them all updated in place (their old contents,
         * read then, repeat one value too) */
        int again = 1;
        if (!reads && judged_repeats(S, 1, &again, &reads) != 0) return -1;
        S->out.uninformative = again;
        return 0;
    }
    if (repeats && !S->data.in_place_known) {
        /* everything judged repeats one value with the outputs taken as written whole; an
         * output updated in place is read too, and its old contents may tell */
        double t0 = xmt_now_ms();
        int r = xmt_sess_in_place_check(S);
        S->out.ph.verify_own += xmt_now_ms() - t0;
        return r != 0 ? r : xmt_sess_data_check(S);
    }
    S->out.uninformative = reads && repeats;
    return 0;
}

/* FNV-1a, 64 bits, of n bytes, continuing from h. */
static uint64_t fnv1a(uint64_t h, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* FNV-1a of a number's 8 bytes, lowest first. */
static uint64_t fnv1a_u64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return h;
}

/* One run of the reference (device memory at p, bytes long, at offset `at` of its
 * region or buffer) hashed into *h: its place in it, its size, its first and last
 * DIGEST_SAMPLE bytes. tmp: 2 * DIGEST_SAMPLE bytes. 0, or -1 on failure. */
static int digest_run(xmt_session *S, uint64_t *h, size_t at, CUdeviceptr p, size_t bytes,
                      unsigned char *tmp)
{
    size_t head = bytes < DIGEST_SAMPLE ? bytes : DIGEST_SAMPLE;
    size_t tail = bytes - head < DIGEST_SAMPLE ? bytes - head : DIGEST_SAMPLE;
    *h = fnv1a_u64(fnv1a_u64(0xcbf29ce484222325ull, at), bytes);
    XMT_TRY(S, xmt_drv.cuMemcpyDtoHAsync(tmp, p, head, S->run.s), "data digest");
    if (tail)
        XMT_TRY(S, xmt_drv.cuMemcpyDtoHAsync(tmp + head, p + bytes - tail, tail, S->run.s),
                "data digest");
    XMT_TRY(S, xmt_drv.cuStreamSynchronize(S->run.s), "synchronize");
    *h = fnv1a(*h, tmp, head + tail);
    return 0;
fail:
    return -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int xmt_sess_data_digest(xmt_session *S)
{
    XMT_ASSERT(S->data.any_verify && S->out.error == CUDA_SUCCESS, "digest: nothing verified");
    unsigned char *tmp = calloc(2, DIGEST_SAMPLE); /* zeroed: the copies fill it */
    uint64_t hs[DIGEST_RUNS];
    size_t runs = 0;
    int r = tmp ? 0 : -1;
    for (size_t i = 0; r == 0 && i < S->data.nregs && runs < DIGEST_RUNS; i++) {
        size_t c = 0, at, bytes;
        while (r == 0 && runs < DIGEST_RUNS && next_run(&S->data.regs[i], 6u, &c, &at, &bytes))
            if ((r = digest_run(S, &hs[runs], at, S->data.regs[i].ref + at, bytes, tmp)) == 0)
                runs++;
    }
    for (size_t i = 0; r == 0 && !S->set.automatic && i < S->data.nbufs && runs < DIGEST_RUNS; i++)
        if ((S->data.bufs[i].b.roles & XMT_BUF_VERIFY) && S->data.bufs[i].ref &&
            (r = digest_run(S, &hs[runs], 0, S->data.bufs[i].ref, S->data.bufs[i].b.bytes, tmp)) ==
                0)
            runs++;
    free(tmp);
    qsort(hs, runs, sizeof hs[0], cmp_u64);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < runs; i++)
        h = fnv1a_u64(h, hs[i]);
    if (r == 0 && runs)
        snprintf(S->out.data_digest, sizeof S->out.data_digest, "%016llx", (unsigned long long)h);
    return r;
}
