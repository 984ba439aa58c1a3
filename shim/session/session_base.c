/*
 * session_base: see session_base.h.
 */
#include "session_base.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "driver.h"
#include "launch.h"
#include "log.h"
#include "verify.h"

/* What outputs are filled with before a verify run, so that a byte a candidate does not
 * write cannot pass for one it wrote: 0xFF first; a candidate whose first run matches runs
 * again from 0x00. A byte left unwritten equals the poison, and no reference byte equals
 * both, so a candidate that passes both writes every byte the program's own config writes
 * whole, whatever the data (an answer of all 0xFF bytes, a fill with -1, included). The
 * third, XMT_POISON_COMPLEMENT, is in session_base.h. */
#define POISON 0xFF
#define POISON2 0x00
void (*xmt_session_tick)(void);
void (*xmt_session_decided)(long index);

/* The watchdog: a wait for candidate runs that lasts longer than WATCHDOG_FACTOR times
 * the program's own config's first run (per run waited for), and at least
 * WATCHDOG_MIN_MS, is reported while it lasts; when it ends, tuning of the key stops. */
#define WATCHDOG_FACTOR 100
#define WATCHDOG_MIN_MS 1000.0
/* In the trial helper, a candidate's deadline (docs/tuning.md, "Where candidates run"):
 * HANG_FACTOR times the program's own config's first run per run waited for, at least
 * HANG_FLOOR_MS; past it the run is taken as hung and the helper ends with it. Until the
 * own config's first run is measured (that run itself), the watchdog's limit above. */
#define HANG_FACTOR 20
#define HANG_FLOOR_MS 250.0

double xmt_sess_stat(const double *t, int n, int mean)
{
    return xmt_race_stat(t, n, mean);
}

xmt_race_cand *xmt_sess_race_view(const xmt_session *S)
{
    xmt_race_cand *rc = malloc((S->cand.n + 1) * sizeof *rc);
    for (size_t i = 0; rc && i <= S->cand.n; i++) {
        const xmt_cand *c = &S->cand.cands[i];
        int ok = c->status == XMT_C_OK;
        rc[i] = (xmt_race_cand){c->times, ok ? c->ntimes : 0, ok && !c->elim_round};
    }
    return rc;
}

int xmt_sess_over_budget(xmt_session *S, const char *phase)
{
    if (S->req.verify_only) return 0;
    if (S->run.cut) return 1;
    if (S->set.budget_ms < 0 || xmt_now_ms() - S->run.t0 <= S->set.budget_ms) return 0;
    S->run.cut = phase;
    return 1;
}

void xmt_sess_error(xmt_session *S, CUresult r, const char *what)
{
    if (S->out.error != CUDA_SUCCESS) return;
    S->out.error = r;
    S->out.error_at = what;
}

/* In the trial helper: c (NULL: unknown) faulted or hung with r; the session ends. */
static void blame(xmt_session *S, const xmt_cand *c, CUresult r, const char *what)
{
    xmt_sess_error(S, r, what);
    if (!S->run.trial || S->out.has_culprit || !c) return;
    S->out.has_culprit = 1;
    S->out.culprit = c->index;
    S->out.culprit_unsorted = S->check.in_verify_run && S->set.automatic &&
                              !S->data.in_place_known && c->index != XMT_OWN_CONFIG;
}

/* Fills bytes at dst with a verify run's poison: 1 and 2 the byte patterns POISON and
 * POISON2, XMT_POISON_COMPLEMENT the complement of ref (the reference of the same bytes). */
static CUresult fill_poison(xmt_session *S, CUdeviceptr dst, CUdeviceptr ref, size_t bytes,
                            int poison)
{
    if (poison == XMT_POISON_COMPLEMENT) return xmt_gc_complement(&S->check.gc, dst, ref, bytes);
    return xmt_drv.cuMemsetD8Async(dst, poison == 2 ? POISON2 : POISON, bytes, S->run.s);
}

int xmt_sess_program_data(const xmt_session *S)
{
    return S->set.automatic && !S->run.trial;
}

/* Auto protection's outputs before a verify run: those the program's own config writes
 * whole are poisoned (fill_poison), those it updates in place restored from the snapshot;
 * in the program's own process every one is restored (xmt_sess_program_data). With poison
 * 0, every output is restored (the put-back). */
static int prepare_outputs(xmt_session *S, int poison)
{
    int own_data = xmt_sess_program_data(S);
    for (size_t i = 0; i < S->data.nspans; i++) {
        const xmt_span *p = &S->data.spans[i];
        if (p->pure && poison && !own_data)
            XMT_TRY(S, fill_poison(S, p->at, p->ref, p->bytes, poison), "poison");
        else
            XMT_TRY(S, xmt_drv.cuMemcpyDtoDAsync(p->at, p->snap, p->bytes, S->run.s), "restore");
    }
    return 0;
fail:
    return -1;
}

int xmt_sess_prepare(xmt_session *S, int poison, int flush)
{
    if ((poison || xmt_sess_program_data(S)) && prepare_outputs(S, poison) != 0) return -1;
    for (size_t i = 0; i < S->data.nbufs; i++) {
        xmt_sbuf *b = &S->data.bufs[i];
        if (b->b.roles & XMT_BUF_RESTORE)
            XMT_TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ptr, b->snap, b->b.bytes, S->run.s), "restore");
        else if (b->b.roles & XMT_BUF_RESET)
            XMT_TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, 0, b->b.bytes, S->run.s), "reset_to_zero");
        else if (poison && !S->set.automatic && (b->b.roles & XMT_BUF_VERIFY))
            XMT_TRY(S, fill_poison(S, b->ptr, b->ref, b->b.bytes, poison), "poison");
    }
    if (flush && S->data.flush_buf)
        XMT_TRY(S, xmt_drv.cuMemsetD8Async(S->data.flush_buf, 0, S->data.flush_bytes, S->run.s),
                "l2 flush");
    return 0;
fail:
    return -1;
}

int xmt_sess_put_back(xmt_session *S)
{
    XMT_ASSERT(S->cand.cands && S->data.bufs, "put back before the candidates");
    if (!S->data.snapshots_taken) return 0;
    double t0 = xmt_now_ms();
    if (prepare_outputs(S, 0) != 0) return -1;
    /* a failure before the outputs were known: the whole regions (what ran may have
     * changed any byte of them) */
    for (size_t i = 0; !S->data.nspans && i < S->data.nregs; i++)
        if (S->data.regs[i].snap)
            XMT_TRY(S,
                    xmt_drv.cuMemcpyDtoDAsync(S->data.regs[i].base, S->data.regs[i].snap,
                                              S->data.regs[i].bytes, S->run.s),
                    "put back");
    /* in the program's own process, what any run changed outside the outputs too (a
     * candidate stopped before its comparison, a second run of the own config that wrote
     * elsewhere): the program's launch must find its data as it left it */
    if (S->data.nspans && xmt_sess_program_data(S)) {
        size_t put = 0;
        if (xmt_sess_changes(S, 0) < 0) goto fail;
        XMT_TRY(S, xmt_outputs_put_back_outside(S->data.regs, S->data.nregs, S->run.s, &put),
                "put back");
    }
    for (size_t i = 0; i < S->data.nbufs; i++)
        if (S->data.bufs[i].snap)
            XMT_TRY(S,
                    xmt_drv.cuMemcpyDtoDAsync(S->data.bufs[i].ptr, S->data.bufs[i].snap,
                                              S->data.bufs[i].b.bytes, S->run.s),
                    "put back");
    XMT_TRY(S, xmt_drv.cuStreamSynchronize(S->run.s), "synchronize");
    S->out.ph.put_back += xmt_now_ms() - t0;
    return 0;
fail:
    return -1;
}

int xmt_sess_run_candidate(xmt_session *S, xmt_cand *c)
{
    S->run.last_run = c;
    CUresult r = xmt_launch_as(S->req.k, S->req.l, c->index == XMT_OWN_CONFIG ? NULL : &c->c);
    if (r == CUDA_SUCCESS) return 0;
    if (S->run.queued && !xmt_refused(r)) {
        xmt_sess_error(S, r, "a launch in a timed round (a run queued before it failed)");
        return -1;
    }
    if (c->index != XMT_OWN_CONFIG) {
        char b[32];
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "launch failed: %s", xmt_cu_name(r, b, sizeof b));
        if (xmt_refused(r)) return 1;
    }
    blame(S, c, r,
          c->index == XMT_OWN_CONFIG ? "the program's own config" : "a candidate's launch");
    return -1;
}

/* The comparisons of a verify run: auto protection's segments, else each declared
 * verify buffer against its reference. Returns how many, in S->data.segs. */
static size_t comparisons(xmt_session *S)
{
    if (S->set.automatic) return S->data.nsegs;
    size_t n = 0;
    for (size_t i = 0; i < S->data.nbufs; i++) {
        xmt_sbuf *b = &S->data.bufs[i];
        if (!(b->b.roles & XMT_BUF_VERIFY)) continue;
        xmt_gc_cmp *c = &S->data.segs[n++];
        c->ref = b->ref;
        c->got = b->ptr;
        c->bytes = b->b.bytes;
        c->kind = xmt_verify_kind(b->b.dtype, b->b.rtol, b->b.atol, &c->es);
        c->rtol = b->b.rtol;
        c->atol = b->b.atol;
    }
    return n;
}

long xmt_sess_compare_all(xmt_session *S)
{
    size_t n = comparisons(S);
    CUresult r = xmt_gc_compare(&S->check.gc, S->data.segs, n, S->data.results);
    if (r != CUDA_SUCCESS) {
        xmt_sess_error(S, r, "verification");
        return -2;
    }
    for (size_t i = 0; i < n; i++)
        if (S->data.results[i].count) return (long)i;
    return -1;
}

int xmt_sess_take_reference(xmt_session *S)
{
    for (size_t i = 0; i < S->data.nbufs; i++) {
        xmt_sbuf *b = &S->data.bufs[i];
        if ((b->b.roles & XMT_BUF_VERIFY) && b->ref)
            XMT_TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ref, b->ptr, b->b.bytes, S->run.s),
                    "verify copy");
    }
    for (size_t i = 0; i < S->data.nregs; i++)
        XMT_TRY(S,
                xmt_drv.cuMemcpyDtoDAsync(S->data.regs[i].ref, S->data.regs[i].base,
                                          S->data.regs[i].bytes, S->run.s),
                "verify copy");
    XMT_TRY(S, xmt_drv.cuStreamSynchronize(S->run.s), "synchronize");
    return 0;
fail:
    return -1;
}

/* Keys whose tuning started in this process, for the progress lines. */
static atomic_uint sessions_started;

void xmt_sess_progress(xmt_session *S, const char *phase, size_t done, size_t total)
{
    double now = xmt_now_ms();
    if (xmt_session_tick) xmt_session_tick();
    if (!S->run.progress_key) S->run.progress_key = atomic_fetch_add(&sessions_started, 1) + 1;
    if (phase != S->run.progress_phase || done < S->run.progress_done)
        S->run.progress_phase_ms = now;
    S->run.progress_phase = phase;
    S->run.progress_done = done;
    S->run.progress_total = total;
    if (now - S->run.t0 < 1000 || now - S->run.progress_ms < 1000) return;
    S->run.progress_ms = now;
    char name[64], left[64] = "";
    xmt_sig_name(S->req.k->demangled, name, sizeof name);
    if (done > 0 && done < total)
        snprintf(left, sizeof left, ", about %.0f s left in this phase",
                 (now - S->run.progress_phase_ms) / (double)done * (double)(total - done) / 1000.0 +
                     0.5);
    xmt_progress("tuning %s [%s] (key %u in this process, %zu candidates): %s %zu/%zu%s", name,
                 S->req.key_text, S->run.progress_key, S->cand.n, phase, done, total, left);
}

/* The candidate that is running: who, when one candidate's runs are waited for; in a
 * timed round, the first in the round's launch order (in_round) whose end event has not
 * completed. Its runs share one stream, so the runs launched after it cannot start before
 * it ends: their events are unfinished too, and the array's order (rotated each round) says
 * nothing of which one hangs. NULL when none is unfinished. */
static const xmt_cand *running_cand(const xmt_session *S, const xmt_cand *who)
{
    if (who) return who;
    const xmt_cand *first = NULL;
    for (size_t i = 0; xmt_drv.cuEventQuery && i <= S->cand.n; i++) {
        const xmt_cand *c = &S->cand.cands[i];
        if (c->in_round && c->end && (!first || c->in_round < first->in_round) &&
            xmt_drv.cuEventQuery(c->end) == CUDA_ERROR_NOT_READY)
            first = c;
    }
    return first;
}

static const char *running(const xmt_session *S, const xmt_cand *who)
{
    const xmt_cand *c = running_cand(S, who);
    return c ? c->c.label : "?";
}

int xmt_sess_wait_runs(xmt_session *S, CUevent ev, int runs, const xmt_cand *who)
{
    if (!xmt_drv.cuStreamQuery || !xmt_drv.cuEventQuery) {
        CUresult r = ev ? xmt_drv.cuEventSynchronize(ev) : xmt_drv.cuStreamSynchronize(S->run.s);
        if (r != CUDA_SUCCESS) xmt_sess_error(S, r, "synchronize");
        return r == CUDA_SUCCESS ? 0 : -1;
    }
    double t0 = xmt_now_ms(), limit = WATCHDOG_FACTOR * S->run.own_ms * (runs > 0 ? runs : 1);
    if (limit < WATCHDOG_MIN_MS) limit = WATCHDOG_MIN_MS;
    double deadline = limit;
    if (S->run.trial && S->run.own_ms > 0) {
        deadline = HANG_FACTOR * S->run.own_ms * (runs > 0 ? runs : 1);
        if (deadline < HANG_FLOOR_MS) deadline = HANG_FLOOR_MS;
    }
    int fired = 0;
    for (;;) {
        CUresult r = ev ? xmt_drv.cuEventQuery(ev) : xmt_drv.cuStreamQuery(S->run.s);
        if (r == CUDA_SUCCESS) break;
        if (r != CUDA_ERROR_NOT_READY) {
            /* one run waited for: that candidate faulted (a timed round: not known) */
            blame(S, who, r, "synchronize");
            return -1;
        }
        double el = xmt_now_ms() - t0;
        if (S->run.trial && el > deadline) { /* the helper exits after this: the run ends with it */
            if (deadline == limit)
                snprintf(S->run.deadline_at, sizeof S->run.deadline_at,
                         "the watchdog (a config ran far too long: %.0f ms)", deadline);
            else
                snprintf(S->run.deadline_at, sizeof S->run.deadline_at,
                         "the watchdog's deadline (%.0f ms: %d times the program's own config's "
                         "%.3f ms%s, at least %.0f ms)",
                         deadline, HANG_FACTOR, S->run.own_ms, runs > 1 ? " per run" : "",
                         HANG_FLOOR_MS);
            blame(S, running_cand(S, who), CUDA_ERROR_TIMEOUT, S->run.deadline_at);
            return -1;
        }
        if (xmt_session_tick) xmt_session_tick();
        if (!fired && el > limit) {
            fired = 1;
            xmt_warn("%s: candidate %s for key %s has run for %.1f s, more than %d times the "
                     "program's own config (%.3f ms); tuning of this key stops when it ends",
                     S->req.k->demangled, running(S, who), S->req.key_text, el / 1e3,
                     WATCHDOG_FACTOR, S->run.own_ms);
        }
        if (S->run.progress_phase)
            xmt_sess_progress(S, S->run.progress_phase, S->run.progress_done,
                              S->run.progress_total);
        /* asked again soon after the runs end (clock.h): a late look is tuning time too */
        long pause_ns = xmt_poll_pause_ns(xmt_now_ms() - t0);
        struct timespec ts = {0, pause_ns};
        if (pause_ns > 0) nanosleep(&ts, NULL);
    }
    xmt_drvtime_polled_wait(xmt_now_ms() - t0);
    if (fired) xmt_sess_error(S, CUDA_ERROR_TIMEOUT, "the watchdog (a config ran far too long)");
    return fired ? -1 : 0;
}

/* verify_run_from's run, untimed. */
static int verify_run_at(xmt_session *S, xmt_cand *c, int pattern)
{
    if (xmt_sess_prepare(S, pattern, 0) != 0) return -1;
    double t0 = xmt_now_ms();
    S->check.in_verify_run = 1;
    int r = xmt_sess_run_candidate(S, c);
    if (r == 0 && xmt_sess_wait_runs(S, NULL, 1, c) != 0) r = -1;
    S->check.in_verify_run = 0;
    if (r != 0) return r;
    if (c == &S->cand.cands[0] && S->run.own_ms == 0) S->run.own_ms = xmt_now_ms() - t0;
    return 0;
}

int xmt_sess_verify_run_from(xmt_session *S, xmt_cand *c, int pattern)
{
    double t0 = xmt_now_ms();
    int r = verify_run_at(S, c, pattern);
    if (c->index != XMT_OWN_CONFIG) S->out.ph.verify_runs += xmt_now_ms() - t0;
    return r;
}

int xmt_sess_verify_run(xmt_session *S, xmt_cand *c)
{
    return xmt_sess_verify_run_from(S, c, 1);
}

int xmt_sess_untuned_as(xmt_session *S, const char *outcome, const char *fmt, const char *detail)
{
    if (!S->out.untuned[0]) {
        snprintf(S->out.untuned, sizeof S->out.untuned, fmt, detail);
        S->out.untuned_outcome = outcome;
    }
    return 1;
}

int xmt_sess_untuned(xmt_session *S, const char *fmt, const char *detail)
{
    return xmt_sess_untuned_as(S, XMT_OUTCOME_UNTUNED, fmt, detail);
}

int xmt_sess_scratch(xmt_session *S, CUdeviceptr *p, size_t bytes, const char *what)
{
    if ((double)(S->data.scratch_bytes + bytes) > S->data.scratch_limit) {
        char b[120];
        snprintf(b, sizeof b, "%.1f MiB, more than the %.1f MiB allowed (XMATUNE_SCRATCH_MB)",
                 (double)(S->data.scratch_bytes + bytes) / 1048576.0,
                 S->data.scratch_limit / 1048576.0);
        return xmt_sess_untuned(S, "tuning needs device scratch of %s", b);
    }
    XMT_TRY(S, xmt_drv.cuMemAlloc(p, bytes), what);
    S->data.scratch_bytes += bytes;
    return 0;
fail:
    return -1;
}

int xmt_sess_changes(xmt_session *S, int against_ref)
{
    uint64_t words;
    CUresult r =
        xmt_outputs_changes(&S->check.gc, S->data.regs, S->data.nregs, against_ref, &words);
    if (r == CUDA_SUCCESS) return 0;
    xmt_sess_error(S, r, "change detection");
    return -1;
}

size_t xmt_sess_passing(const xmt_session *S)
{
    size_t n = 0;
    for (size_t i = 1; i <= S->cand.n; i++)
        n += S->cand.cands[i].status == XMT_C_OK;
    return n;
}

void xmt_sess_gc_ready(xmt_session *S)
{
    if (S->check.gc_opened) return;
    double l0 = xmt_now_ms();
    xmt_gc_open(&S->check.gc, S->run.s);
    S->check.gc_opened = 1;
    S->out.ph.module_load += xmt_now_ms() - l0;
}
