/*
 * session: one tuning session, phase by phase (see session.h).
 */
#include "session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "candidate.h"
#include "driver.h"
#include "log.h"
#include "options.h"
#include "verify.h"

#define MAX_ITERATIONS 10000
#define POISON 0xA5 /* fills verify-only buffers before a verify run: unwritten bytes show */

double xmt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double statistic(const double *t, int n, int mean)
{
    if (n <= 0) return INFINITY;
    if (mean) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += t[i];
        return s / n;
    }
    double tmp[MAX_ITERATIONS];
    memcpy(tmp, t, (size_t)n * sizeof *t);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* Remembers the session's first failure: it is the one reported. */
static void session_error(xmt_session *S, CUresult r, const char *what)
{
    if (S->error != CUDA_SUCCESS) return;
    S->error = r;
    S->error_at = what;
}

/* A driver call of a phase: a failure is remembered and the phase ends (fail:). */
#define TRY(sess, call, what)                                                                      \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            session_error((sess), r_, (what));                                                     \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* Puts the declared buffers into the state every run starts from: restore buffers (and
 * reset ones, when snapshots exist for the final put-back only) from their snapshots,
 * reset buffers zeroed, verify-only buffers poisoned when asked; and flushes L2. */
static int prepare(xmt_session *S, int poison, int flush)
{
    for (size_t i = 0; i < S->nbufs; i++) {
        xmt_sbuf *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_RESTORE)
            TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ptr, b->snap, b->b.bytes, S->s), "restore");
        else if (b->b.roles & XMT_BUF_RESET)
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, 0, b->b.bytes, S->s), "reset_to_zero");
        else if (poison && (b->b.roles & XMT_BUF_VERIFY))
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, POISON, b->b.bytes, S->s), "poison");
    }
    if (flush && S->flush_buf)
        TRY(S, xmt_drv.cuMemsetD8Async(S->flush_buf, 0, S->flush_bytes, S->s), "l2 flush");
    return 0;
fail:
    return -1;
}

/* Puts every declared buffer back as the program left it. */
static int put_back(xmt_session *S)
{
    if (!S->snapshots_taken) return 0;
    for (size_t i = 0; i < S->nbufs; i++)
        if (S->bufs[i].snap)
            TRY(S,
                xmt_drv.cuMemcpyDtoDAsync(S->bufs[i].ptr, S->bufs[i].snap, S->bufs[i].b.bytes,
                                          S->s),
                "put back");
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

/* One launch of candidate c (the program's own when c->index is XMT_OWN_CONFIG). Returns
 * 0 when it ran; 1 when the driver refused it (c is then skipped, saying why, and the
 * session goes on without it); -1 when the session must end: the program's own config
 * failed, or a launch failed in a way that may have left the context broken. */
static int run_candidate(xmt_session *S, xmt_cand *c)
{
    CUresult r = xmt_launch_as(S->k, S->l, c->index == XMT_OWN_CONFIG ? NULL : &c->c);
    if (r == CUDA_SUCCESS) return 0;
    if (c->index != XMT_OWN_CONFIG) {
        char b[32];
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "launch failed: %s", xmt_cu_name(r, b, sizeof b));
        if (xmt_refused(r)) return 1;
    }
    session_error(S, r,
                  c->index == XMT_OWN_CONFIG ? "the program's own config" : "a candidate's launch");
    return -1;
}

/* One run of a candidate for verification; reads its verify buffers into host memory.
 * Returns as run_candidate, and -1 on a failed copy. */
static int verify_run(xmt_session *S, xmt_cand *c, int into_ref)
{
    if (prepare(S, 1, 0) != 0) return -1;
    int r = run_candidate(S, c);
    if (r != 0) return r;
    for (size_t i = 0; i < S->nbufs; i++) {
        xmt_sbuf *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_VERIFY)
            TRY(S,
                xmt_drv.cuMemcpyDtoHAsync(into_ref ? b->host_ref : b->host_got, b->ptr, b->b.bytes,
                                          S->s),
                "verify copy");
    }
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

static void own_label(const xmt_launch *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u", l->grid[0], l->grid[1],
             l->grid[2], l->block[0], l->block[1], l->block[2], l->shared);
}

static int same_as_own(const xmt_candidate *c, const xmt_launch *l)
{
    return c->nargs == 0 && c->dims.grid.x == l->grid[0] && c->dims.grid.y == l->grid[1] &&
           c->dims.grid.z == l->grid[2] && c->dims.block.x == l->block[0] &&
           c->dims.block.y == l->block[1] && c->dims.block.z == l->block[2] &&
           c->dims.shared == l->shared;
}

/* ---- the phases ------------------------------------------------------------------------- */

/* The entry's settings, else the options'. */
static void settings(xmt_session *S)
{
    const xmt_entry *e = S->k->entry;
    S->warmup = xmt_entry_warmup(e) >= 0 ? xmt_entry_warmup(e) : xmt_opt.warmup;
    S->iterations = xmt_entry_iterations(e) >= 0 ? xmt_entry_iterations(e) : xmt_opt.iterations;
    if (S->iterations < 1) S->iterations = 1;
    if (S->iterations > MAX_ITERATIONS) S->iterations = MAX_ITERATIONS;
    S->mean = xmt_entry_use_mean(e) || xmt_opt.statistic == XMT_STAT_MEAN;
    S->flush = xmt_entry_l2_flush(e) >= 0 ? xmt_entry_l2_flush(e) : xmt_opt.l2_flush;
    S->budget_ms = xmt_entry_budget_ms(e) >= 0 ? xmt_entry_budget_ms(e) : xmt_opt.budget_ms;
}

/* The dynamic shared memory a candidate may ask for: what the program opted the kernel
 * into (asked again: it may have raised it since the record was made), at least its own. */
static int allowed_dynamic_shared(const xmt_kernel *k, const xmt_launch *l)
{
    int allowed = k->max_dynamic_shared;
    if (xmt_drv.cuFuncGetAttribute && !k->is_cukernel) {
        int a = 0;
        if (xmt_drv.cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l->f) ==
            CUDA_SUCCESS)
            allowed = a;
    }
    return allowed < (int)l->shared ? (int)l->shared : allowed;
}

/* The candidates: the program's own first, then the policy's (or the one pinned), each
 * either valid or skipped with its reason. Returns -1 when out of memory. */
static int candidates(xmt_session *S)
{
    size_t n = S->only ? 1 : xmt_entry_ncandidates(S->k->entry);
    size_t nb = xmt_entry_nbuffers(S->k->entry);
    S->n = n;
    S->cands = calloc(n + 1, sizeof *S->cands);
    S->times = calloc((n + 1) * (size_t)S->iterations, sizeof *S->times);
    S->bufs = calloc(nb ? nb : 1, sizeof *S->bufs);
    if (!S->cands || !S->times || !S->bufs) return -1;
    S->cands[0].index = XMT_OWN_CONFIG;
    own_label(S->l, S->cands[0].c.label, sizeof S->cands[0].c.label);
    S->cands[0].times = S->times;
    int allowed_dyn = allowed_dynamic_shared(S->k, S->l);
    for (size_t i = 0; i < n; i++) {
        xmt_cand *c = &S->cands[i + 1];
        c->index = S->only ? XMT_PIN_CONFIG : (long)i;
        c->times = S->times + (i + 1) * (size_t)S->iterations;
        if (S->only) c->c = *S->only;
        if (!S->only && xmt_entry_candidate(S->k->entry, i, S->v, &c->c) != 1) {
            c->status = XMT_C_SKIPPED;
            snprintf(c->why, sizeof c->why, "%s", c->c.why);
        } else if (allowed_dyn > 0 && c->c.dims.shared > (unsigned)allowed_dyn) {
            c->status = XMT_C_SKIPPED;
            snprintf(c->why, sizeof c->why,
                     "shared %u > %d bytes the program opted the kernel into", c->c.dims.shared,
                     allowed_dyn);
        } else if (same_as_own(&c->c, S->l)) {
            c->status = XMT_C_SKIPPED;
            snprintf(c->why, sizeof c->why, "same as the program's own config");
        } else {
            S->valid++;
        }
    }
    return 0;
}

/* One declared buffer: host copies for verification, a device snapshot of its contents. */
static int snapshot(xmt_session *S, xmt_sbuf *b)
{
    memcpy(&b->ptr, S->v->params[b->b.param], sizeof b->ptr);
    if (b->b.roles & XMT_BUF_VERIFY) {
        S->any_verify = 1;
        S->tolerance |= b->b.rtol != 0 || b->b.atol != 0;
        b->host_ref = malloc(b->b.bytes);
        b->host_got = malloc(b->b.bytes);
        if (!b->host_ref || !b->host_got) {
            session_error(S, CUDA_ERROR_OUT_OF_MEMORY, "host verify buffer");
            S->nbufs++;
            return -1;
        }
    }
    S->nbufs++;
    TRY(S, xmt_drv.cuMemAlloc(&b->snap, b->b.bytes), "snapshot alloc");
    TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->snap, b->ptr, b->b.bytes, S->s), "snapshot");
    S->snapshots_taken = 1;
    return 0;
fail:
    return -1;
}

/* Buffers: evaluate each declared one, then snapshot it before anything runs; and the
 * L2 flush buffer when flushing is on. */
static int buffers(xmt_session *S)
{
    size_t nb = xmt_entry_nbuffers(S->k->entry);
    for (size_t i = 0; i < nb; i++) {
        xmt_sbuf *b = &S->bufs[S->nbufs];
        int r = xmt_entry_buffer(S->k->entry, i, S->v, &b->b);
        if (r == 0 || (r == 1 && b->b.bytes == 0)) continue;
        if (r < 0 || b->b.param >= S->k->nparams || !S->v->params[b->b.param]) {
            session_error(S, CUDA_ERROR_INVALID_VALUE, "buffer size");
            return -1;
        }
        if (snapshot(S, b) != 0) return -1;
    }
    if (S->flush && S->v->attrs && S->v->attrs->l2_bytes > 0) {
        S->flush_bytes = (size_t)S->v->attrs->l2_bytes * 2;
        TRY(S, xmt_drv.cuMemAlloc(&S->flush_buf, S->flush_bytes), "l2 flush alloc");
    }
    return 0;
fail:
    return -1;
}

/* Verify: every candidate once against the program's own config on the same inputs; a
 * candidate whose verify buffers differ is rejected. */
static int verify(xmt_session *S)
{
    if (!S->any_verify) return 0;
    if (verify_run(S, &S->cands[0], 1) != 0) return -1;
    for (size_t i = 1; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        if (c->status != XMT_C_OK) continue;
        int r = verify_run(S, c, 0);
        if (r < 0) return -1;
        if (r > 0) continue;
        for (size_t j = 0; j < S->nbufs; j++) {
            xmt_sbuf *bf = &S->bufs[j];
            if ((bf->b.roles & XMT_BUF_VERIFY) &&
                xmt_verify_compare(&bf->b, bf->host_ref, bf->host_got, c->why, sizeof c->why)) {
                c->status = XMT_C_REJECTED;
                break;
            }
        }
    }
    return 0;
}

/* Warm-up: the GPU by time with the program's own config, so that the clock is up before
 * the first candidate is timed; then untimed runs of each candidate. */
static int warm_up(xmt_session *S)
{
    if (xmt_opt.warmup_ms > 0) {
        double w0 = xmt_now_ms();
        for (int i = 0; i < 100000; i++) {
            if (prepare(S, 0, 0) != 0 || run_candidate(S, &S->cands[0]) != 0) return -1;
            if (i % 4 == 3) {
                TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
                if (xmt_now_ms() - w0 >= xmt_opt.warmup_ms) break;
            }
        }
    }
    for (size_t i = 0; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        for (int w = 0; w < S->warmup && c->status == XMT_C_OK; w++)
            if (prepare(S, 0, 0) != 0 || run_candidate(S, c) < 0) return -1;
    }
    return 0;
fail:
    return -1;
}

/* One round of timed runs: every valid candidate once, starting from candidate `it`. */
static int timed_round(xmt_session *S, int it)
{
    CUevent last = NULL;
    for (size_t j = 0; j <= S->n; j++) {
        xmt_cand *c = &S->cands[(j + (size_t)it) % (S->n + 1)];
        if (c->status != XMT_C_OK) continue;
        if (prepare(S, 0, S->flush) != 0) return -1;
        TRY(S, xmt_drv.cuEventRecord(c->start, S->s), "event record");
        int r = run_candidate(S, c);
        if (r < 0) return -1;
        if (r > 0) continue;
        TRY(S, xmt_drv.cuEventRecord(c->end, S->s), "event record");
        last = c->end;
    }
    if (last) TRY(S, xmt_drv.cuEventSynchronize(last), "event synchronize");
    for (size_t j = 0; j <= S->n; j++) {
        xmt_cand *c = &S->cands[j];
        if (c->status != XMT_C_OK || c->ntimes != it) continue;
        float ms = 0;
        TRY(S, xmt_drv.cuEventElapsedTime(&ms, c->start, c->end), "event elapsed");
        c->times[c->ntimes++] = ms;
    }
    return 0;
fail:
    return -1;
}

/* Timed runs, round-robin so that clock drift favours no candidate; the starting
 * candidate rotates each round. A budget ends it early with the best so far: every
 * candidate has had the same rounds. */
static int timed_runs(xmt_session *S)
{
    for (size_t i = 0; i <= S->n; i++)
        if (S->cands[i].status == XMT_C_OK) {
            TRY(S, xmt_drv.cuEventCreate(&S->cands[i].start, CU_EVENT_DEFAULT), "event create");
            TRY(S, xmt_drv.cuEventCreate(&S->cands[i].end, CU_EVENT_DEFAULT), "event create");
        }
    for (int it = 0; it < S->iterations; it++) {
        if (timed_round(S, it) != 0) return -1;
        if (S->budget_ms >= 0 && xmt_now_ms() - S->t0 > S->budget_ms) break;
    }
    return 0;
fail:
    return -1;
}

/* After a failure: say so, and put the buffers back all the same. */
static void failed(xmt_session *S)
{
    char b[32];
    xmt_warn("%s: tuning stopped at %s (%s); the program's own config is used for key %s",
             S->k->demangled, S->error_at ? S->error_at : "?", xmt_cu_name(S->error, b, sizeof b),
             S->key_text);
    CUresult saved = S->error;
    S->error = CUDA_SUCCESS;
    if (put_back(S) != 0)
        xmt_warn("%s: could not put the declared buffers back after a failure (%s)",
                 S->k->demangled, S->error_at);
    S->error = saved;
}

/* Decide: the fastest valid candidate by the statistic (a pin: the first valid one). */
static void decide(xmt_session *S)
{
    if (S->error != CUDA_SUCCESS || S->valid == 0) return;
    xmt_cand *best = NULL;
    for (size_t i = 0; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        if (c->status != XMT_C_OK) continue;
        c->stat = S->verify_only ? 0 : statistic(c->times, c->ntimes, S->mean);
        if (S->verify_only ? (!best && i > 0) : (c->ntimes > 0 && (!best || c->stat < best->stat)))
            best = c;
    }
    if (best) {
        S->choice.index = best->index;
        snprintf(S->choice.label, sizeof S->choice.label, "%s", best->c.label);
        S->choice.time_ms = best->stat;
    }
}

/* Scratch memory and events are freed whatever happened; the capture mode put back. */
static void release(xmt_session *S)
{
    for (size_t i = 0; i < S->nbufs; i++) {
        if (S->bufs[i].snap) xmt_drv.cuMemFree(S->bufs[i].snap);
        free(S->bufs[i].host_ref);
        free(S->bufs[i].host_got);
        S->bufs[i].host_ref = S->bufs[i].host_got = NULL;
    }
    if (S->flush_buf) xmt_drv.cuMemFree(S->flush_buf);
    for (size_t i = 0; i <= S->n; i++) {
        if (S->cands[i].start) xmt_drv.cuEventDestroy(S->cands[i].start);
        if (S->cands[i].end) xmt_drv.cuEventDestroy(S->cands[i].end);
        S->cands[i].start = S->cands[i].end = NULL;
    }
    if (S->capture_swapped) xmt_drv.cuThreadExchangeStreamCaptureMode(&S->capture_mode);
}

/* The phases that touch the GPU, in order; -1 at the first failure. */
static int benchmark(xmt_session *S)
{
    S->capture_mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (xmt_drv.cuThreadExchangeStreamCaptureMode &&
        xmt_drv.cuThreadExchangeStreamCaptureMode(&S->capture_mode) == CUDA_SUCCESS)
        S->capture_swapped = 1;
    if (buffers(S) != 0 || verify(S) != 0) return -1;
    if (!S->verify_only && (warm_up(S) != 0 || timed_runs(S) != 0)) return -1;
    return put_back(S);
}

int xmt_session_run(xmt_session *S, xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                    const char *key_text, int device, int verify_only, const xmt_candidate *only)
{
    memset(S, 0, sizeof *S);
    S->k = k;
    S->l = l;
    S->v = v;
    S->key_text = key_text;
    S->device = device;
    S->verify_only = verify_only;
    S->only = only;
    S->s = xmt_launch_stream(l);
    S->t0 = xmt_now_ms();
    S->choice.index = XMT_OWN_CONFIG;
    own_label(l, S->choice.label, sizeof S->choice.label);
    settings(S);
    if (candidates(S) != 0) {
        xmt_session_free(S);
        xmt_warn("%s: out of memory while tuning; the program's own config is used", k->demangled);
        return -1;
    }
    XMT_IN_SHIM_SCOPE
    {
        /* valid == 0: nothing else to try, the program's own config stays */
        if (S->valid > 0 && benchmark(S) != 0) failed(S);
        decide(S);
        release(S);
    }
    S->spent_ms = xmt_now_ms() - S->t0;
    return 0;
}

void xmt_session_free(xmt_session *S)
{
    free(S->cands);
    free(S->times);
    free(S->bufs);
    S->cands = NULL;
    S->times = NULL;
    S->bufs = NULL;
}
