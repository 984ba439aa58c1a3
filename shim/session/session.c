/*
 * session: one tuning session, phase by phase (see session.h).
 */
#include "session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autotune.h"
#include "candidate.h"
#include "clock.h"
#include "driver.h"
#include "family.h"
#include "log.h"
#include "options.h"
#include "outputs.h"
#include "race.h"
#include "verify.h"

/* Fills outputs before a verify run, so that bytes left unwritten show: all bits set is
 * NaN in every float type (it spreads through any arithmetic that reads it) and -1 in
 * every integer type. */
/* What outputs are filled with before a verify run, so that a byte a candidate does not
 * write cannot pass for one it wrote: 0xFF first; a candidate whose first run matches runs
 * again from 0x00. A byte left unwritten equals the poison, and no reference byte equals
 * both, so a candidate that passes both writes every byte the program's own config writes
 * whole, whatever the data (an answer of all 0xFF bytes, a fill with -1, included). */
#define POISON 0xFF
#define POISON2 0x00
/* prepare()'s third poison: the complement of the reference (gpucheck's xmt_not), where
 * the comparison kernels run on the GPU: a candidate's one verify run then tells every
 * byte it leaves unwritten, since no byte equals its complement. */
#define POISON_COMPLEMENT 3
static _Atomic uint64_t last_session_end_us; /* CLOCK_MONOTONIC, any thread's session */
void (*xmt_session_tick)(void);

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

static double statistic(const double *t, int n, int mean)
{
    return xmt_race_stat(t, n, mean);
}

/* The candidates' timings as race.c sees them: alive, those still raced (valid, not
 * eliminated); a candidate that is not valid counts as not timed. NULL: out of memory. */
static xmt_race_cand *race_view(const xmt_session *S)
{
    xmt_race_cand *rc = malloc((S->n + 1) * sizeof *rc);
    for (size_t i = 0; rc && i <= S->n; i++) {
        const xmt_cand *c = &S->cands[i];
        int ok = c->status == XMT_C_OK;
        rc[i] = (xmt_race_cand){c->times, ok ? c->ntimes : 0, ok && !c->elim_round};
    }
    return rc;
}

/* Whether the key's budget is spent; the first time, the phase it cut short is kept. A
 * tuning budget: the verification of a pin or a cached winner, or a re-check, is not cut
 * (a winner cut short would be dropped as if it had failed). */
static int over_budget(xmt_session *S, const char *phase)
{
    if (S->verify_only) return 0;
    if (S->cut) return 1;
    if (S->budget_ms < 0 || xmt_now_ms() - S->t0 <= S->budget_ms) return 0;
    S->cut = phase;
    return 1;
}

/* Remembers the session's first failure: it is the one reported. */
static void session_error(xmt_session *S, CUresult r, const char *what)
{
    if (S->error != CUDA_SUCCESS) return;
    S->error = r;
    S->error_at = what;
}

/* In the trial helper: c (NULL: unknown) faulted or hung with r; the session ends. */
static void blame(xmt_session *S, const xmt_cand *c, CUresult r, const char *what)
{
    session_error(S, r, what);
    if (!S->trial || S->has_culprit || !c) return;
    S->has_culprit = 1;
    S->culprit = c->index;
    S->culprit_unsorted =
        S->in_verify_run && S->automatic && !S->in_place_known && c->index != XMT_OWN_CONFIG;
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

/* Fills bytes at dst with a verify run's poison: 1 and 2 the byte patterns POISON and
 * POISON2, POISON_COMPLEMENT the complement of ref (the reference of the same bytes). */
static CUresult fill_poison(xmt_session *S, CUdeviceptr dst, CUdeviceptr ref, size_t bytes,
                            int poison)
{
    if (poison == POISON_COMPLEMENT) return xmt_gc_complement(&S->gc, dst, ref, bytes);
    return xmt_drv.cuMemsetD8Async(dst, poison == 2 ? POISON2 : POISON, bytes, S->s);
}

/* Auto protection's outputs before a verify run: those the program's own config writes
 * whole are poisoned (fill_poison), those it updates in place restored from the snapshot.
 * With poison 0, every output is restored (the put-back). */
static int prepare_outputs(xmt_session *S, int poison)
{
    for (size_t i = 0; i < S->nspans; i++) {
        const xmt_span *p = &S->spans[i];
        if (p->pure && poison)
            TRY(S, fill_poison(S, p->at, p->ref, p->bytes, poison), "poison");
        else
            TRY(S, xmt_drv.cuMemcpyDtoDAsync(p->at, p->snap, p->bytes, S->s), "restore");
    }
    return 0;
fail:
    return -1;
}

/* Puts the declared buffers into the state every run starts from: restore buffers (and
 * reset ones, when snapshots exist for the final put-back only) from their snapshots,
 * reset buffers zeroed, verify-only buffers poisoned when asked (under auto protection
 * its outputs instead: a declared verify buffer may be one the kernel accumulates into,
 * and auto finds out which); and flushes L2. */
static int prepare(xmt_session *S, int poison, int flush)
{
    if (poison && prepare_outputs(S, poison) != 0) return -1;
    for (size_t i = 0; i < S->nbufs; i++) {
        xmt_sbuf *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_RESTORE)
            TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ptr, b->snap, b->b.bytes, S->s), "restore");
        else if (b->b.roles & XMT_BUF_RESET)
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, 0, b->b.bytes, S->s), "reset_to_zero");
        else if (poison && !S->automatic && (b->b.roles & XMT_BUF_VERIFY))
            TRY(S, fill_poison(S, b->ptr, b->ref, b->b.bytes, poison), "poison");
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
    double t0 = xmt_now_ms();
    if (prepare_outputs(S, 0) != 0) return -1;
    /* a failure before the outputs were known: the whole regions (what ran may have
     * changed any byte of them) */
    for (size_t i = 0; !S->nspans && i < S->nregs; i++)
        if (S->regs[i].snap)
            TRY(S,
                xmt_drv.cuMemcpyDtoDAsync(S->regs[i].base, S->regs[i].snap, S->regs[i].bytes, S->s),
                "put back");
    for (size_t i = 0; i < S->nbufs; i++)
        if (S->bufs[i].snap)
            TRY(S,
                xmt_drv.cuMemcpyDtoDAsync(S->bufs[i].ptr, S->bufs[i].snap, S->bufs[i].b.bytes,
                                          S->s),
                "put back");
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    S->ph.put_back += xmt_now_ms() - t0;
    return 0;
fail:
    return -1;
}

/* One launch of candidate c (the program's own when c->index is XMT_OWN_CONFIG). Returns
 * 0 when it ran; 1 when the driver refused it (c is then skipped, saying why, and the
 * session goes on without it); -1 when the session must end: the program's own config
 * failed, or a launch failed in a way that may have left the context broken. Such a
 * failure with other candidates' runs queued before c (S->queued, a timed round) blames
 * nobody: a kernel's fault is reported by whatever call comes next, and the broken context
 * answers every query alike, so which queued run it was is not known (c may be innocent). */
static int run_candidate(xmt_session *S, xmt_cand *c)
{
    S->last_run = c;
    CUresult r = xmt_launch_as(S->k, S->l, c->index == XMT_OWN_CONFIG ? NULL : &c->c);
    if (r == CUDA_SUCCESS) return 0;
    if (S->queued && !xmt_refused(r)) {
        session_error(S, r, "a launch in a timed round (a run queued before it failed)");
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
 * verify buffer against its reference. Returns how many, in S->segs. */
static size_t comparisons(xmt_session *S)
{
    if (S->automatic) return S->nsegs;
    size_t n = 0;
    for (size_t i = 0; i < S->nbufs; i++) {
        xmt_sbuf *b = &S->bufs[i];
        if (!(b->b.roles & XMT_BUF_VERIFY)) continue;
        xmt_gc_cmp *c = &S->segs[n++];
        c->ref = b->ref;
        c->got = b->ptr;
        c->bytes = b->b.bytes;
        c->kind = xmt_verify_kind(b->b.dtype, b->b.rtol, b->b.atol, &c->es);
        c->rtol = b->b.rtol;
        c->atol = b->b.atol;
    }
    return n;
}

/* Compares what the last run left with the references. Returns the index of the first
 * comparison that differs (its result in S->results), -1 when all agree, -2 on failure. */
static long compare_all(xmt_session *S)
{
    size_t n = comparisons(S);
    CUresult r = xmt_gc_compare(&S->gc, S->segs, n, S->results);
    if (r != CUDA_SUCCESS) {
        session_error(S, r, "verification");
        return -2;
    }
    for (size_t i = 0; i < n; i++)
        if (S->results[i].count) return (long)i;
    return -1;
}

/* Makes what the last run left the reference: the declared verify buffers' (auto
 * protection keeps its own in the regions' ref copies). */
static int take_reference(xmt_session *S)
{
    for (size_t i = 0; i < S->nbufs; i++) {
        xmt_sbuf *b = &S->bufs[i];
        if ((b->b.roles & XMT_BUF_VERIFY) && b->ref)
            TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ref, b->ptr, b->b.bytes, S->s), "verify copy");
    }
    for (size_t i = 0; i < S->nregs; i++)
        TRY(S, xmt_drv.cuMemcpyDtoDAsync(S->regs[i].ref, S->regs[i].base, S->regs[i].bytes, S->s),
            "verify copy");
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

/* Keys whose tuning started in this process, for the progress lines. */
static atomic_uint sessions_started;

/* A progress line once a second while the session runs longer than a second: "xmatune:
 * tuning saxpy [n=16777216] (key 3 in this process, 30 candidates): verify 12/30, about
 * 4 s left in this phase". The estimate is the phase's pace so far: the phases after it
 * (timed rounds after verify) are not in it. */
static void progress(xmt_session *S, const char *phase, size_t done, size_t total)
{
    double now = xmt_now_ms();
    if (xmt_session_tick) xmt_session_tick();
    if (!S->progress_key) S->progress_key = atomic_fetch_add(&sessions_started, 1) + 1;
    if (phase != S->progress_phase || done < S->progress_done) S->progress_phase_ms = now;
    S->progress_phase = phase;
    S->progress_done = done;
    S->progress_total = total;
    if (now - S->t0 < 1000 || now - S->progress_ms < 1000) return;
    S->progress_ms = now;
    char name[64], left[64] = "";
    xmt_sig_name(S->k->demangled, name, sizeof name);
    if (done > 0 && done < total)
        snprintf(left, sizeof left, ", about %.0f s left in this phase",
                 (now - S->progress_phase_ms) / (double)done * (double)(total - done) / 1000.0 +
                     0.5);
    xmt_progress("tuning %s [%s] (key %u in this process, %zu candidates): %s %zu/%zu%s", name,
                 S->key_text, S->progress_key, S->n, phase, done, total, left);
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
    for (size_t i = 0; xmt_drv.cuEventQuery && i <= S->n; i++) {
        const xmt_cand *c = &S->cands[i];
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

/* Waits for the stream (ev NULL) or an event after `runs` candidate runs, by polling so
 * that the watchdog can speak. who: the candidate that ran, NULL for a timed round.
 * Returns 0, or -1 on a failure or when the watchdog fired (tuning stops). */
static int wait_runs(xmt_session *S, CUevent ev, int runs, const xmt_cand *who)
{
    if (!xmt_drv.cuStreamQuery || !xmt_drv.cuEventQuery) {
        CUresult r = ev ? xmt_drv.cuEventSynchronize(ev) : xmt_drv.cuStreamSynchronize(S->s);
        if (r != CUDA_SUCCESS) session_error(S, r, "synchronize");
        return r == CUDA_SUCCESS ? 0 : -1;
    }
    double t0 = xmt_now_ms(), limit = WATCHDOG_FACTOR * S->own_ms * (runs > 0 ? runs : 1);
    if (limit < WATCHDOG_MIN_MS) limit = WATCHDOG_MIN_MS;
    double deadline = limit;
    if (S->trial && S->own_ms > 0) {
        deadline = HANG_FACTOR * S->own_ms * (runs > 0 ? runs : 1);
        if (deadline < HANG_FLOOR_MS) deadline = HANG_FLOOR_MS;
    }
    int fired = 0;
    for (;;) {
        CUresult r = ev ? xmt_drv.cuEventQuery(ev) : xmt_drv.cuStreamQuery(S->s);
        if (r == CUDA_SUCCESS) break;
        if (r != CUDA_ERROR_NOT_READY) {
            /* one run waited for: that candidate faulted (a timed round: not known) */
            blame(S, who, r, "synchronize");
            return -1;
        }
        double el = xmt_now_ms() - t0;
        if (S->trial && el > deadline) { /* the helper exits after this: the run ends with it */
            if (deadline == limit)
                snprintf(S->deadline_at, sizeof S->deadline_at,
                         "the watchdog (a config ran far too long: %.0f ms)", deadline);
            else
                snprintf(S->deadline_at, sizeof S->deadline_at,
                         "the watchdog's deadline (%.0f ms: %d times the program's own config's "
                         "%.3f ms%s, at least %.0f ms)",
                         deadline, HANG_FACTOR, S->own_ms, runs > 1 ? " per run" : "",
                         HANG_FLOOR_MS);
            blame(S, running_cand(S, who), CUDA_ERROR_TIMEOUT, S->deadline_at);
            return -1;
        }
        if (xmt_session_tick) xmt_session_tick();
        if (!fired && el > limit) {
            fired = 1;
            xmt_warn("%s: candidate %s for key %s has run for %.1f s, more than %d times the "
                     "program's own config (%.3f ms); tuning of this key stops when it ends",
                     S->k->demangled, running(S, who), S->key_text, el / 1e3, WATCHDOG_FACTOR,
                     S->own_ms);
        }
        if (S->progress_phase) progress(S, S->progress_phase, S->progress_done, S->progress_total);
        /* asked again soon after the runs end (clock.h): a late look is tuning time too */
        long pause_ns = xmt_poll_pause_ns(xmt_now_ms() - t0);
        struct timespec ts = {0, pause_ns};
        if (pause_ns > 0) nanosleep(&ts, NULL);
    }
    xmt_drvtime_polled_wait(xmt_now_ms() - t0);
    if (fired) session_error(S, CUDA_ERROR_TIMEOUT, "the watchdog (a config ran far too long)");
    return fired ? -1 : 0;
}

/* verify_run_from's run, untimed. */
static int verify_run_at(xmt_session *S, xmt_cand *c, int pattern)
{
    if (prepare(S, pattern, 0) != 0) return -1;
    double t0 = xmt_now_ms();
    S->in_verify_run = 1;
    int r = run_candidate(S, c);
    if (r == 0 && wait_runs(S, NULL, 1, c) != 0) r = -1;
    S->in_verify_run = 0;
    if (r != 0) return r;
    if (c == &S->cands[0] && S->own_ms == 0) S->own_ms = xmt_now_ms() - t0;
    return 0;
}

/* One run of a candidate for verification, from outputs poisoned with the first pattern
 * (pattern 1), the second (2) or the complement of the reference (POISON_COMPLEMENT),
 * waited for. Returns as run_candidate. The program's own first run sets the watchdog's
 * measure; a candidate's run, poison included, counts as verification's candidate_runs. */
static int verify_run_from(xmt_session *S, xmt_cand *c, int pattern)
{
    double t0 = xmt_now_ms();
    int r = verify_run_at(S, c, pattern);
    if (c->index != XMT_OWN_CONFIG) S->ph.verify_runs += xmt_now_ms() - t0;
    return r;
}

static int verify_run(xmt_session *S, xmt_cand *c)
{
    return verify_run_from(S, c, 1);
}

/* Does a verify run poison anything (outputs the own config writes whole, or declared
 * verify-only buffers)? Only then can a byte left unwritten pass, and a second pattern
 * tell. */
static int poisons_any(const xmt_session *S)
{
    for (size_t i = 0; S->automatic && i < S->nspans; i++)
        if (S->spans[i].pure) return 1;
    for (size_t i = 0; !S->automatic && i < S->nbufs; i++) {
        const xmt_sbuf *b = &S->bufs[i];
        if ((b->b.roles & XMT_BUF_VERIFY) && !(b->b.roles & (XMT_BUF_RESTORE | XMT_BUF_RESET)))
            return 1;
    }
    return 0;
}

/* Whether verify runs poison with the complement of the reference: the comparison
 * kernels run on the GPU (xmt_not is among them) and every poisoned declared buffer has
 * its reference. Else a candidate that matches runs again from the second pattern. */
static int complement_poison(const xmt_session *S)
{
    if (!xmt_gc_on_gpu(&S->gc)) return 0;
    for (size_t i = 0; !S->automatic && i < S->nbufs; i++) {
        const xmt_sbuf *b = &S->bufs[i];
        if ((b->b.roles & XMT_BUF_VERIFY) && !(b->b.roles & (XMT_BUF_RESTORE | XMT_BUF_RESET)) &&
            !b->ref)
            return 0;
    }
    return 1;
}

/* After a verify run from the complement: whether comparison d's first difference is the
 * poison left as it was (every byte of the element the complement of the reference's). */
static int left_unwritten(xmt_session *S, long d)
{
    const xmt_gc_cmp *g = &S->segs[d];
    uint8_t a[8], b[8];
    size_t es = g->es < sizeof a ? g->es : sizeof a;
    CUdeviceptr at = S->results[d].first * g->es;
    if (xmt_drv.cuMemcpyDtoHAsync(a, g->got + at, es, S->s) != CUDA_SUCCESS ||
        xmt_drv.cuMemcpyDtoHAsync(b, g->ref + at, es, S->s) != CUDA_SUCCESS ||
        xmt_drv.cuStreamSynchronize(S->s) != CUDA_SUCCESS)
        return 0;
    for (size_t i = 0; i < es; i++)
        if ((a[i] ^ b[i]) != 0xFF) return 0;
    return 1;
}

static void own_label(const xmt_launch *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u", l->grid[0], l->grid[1],
             l->grid[2], l->block[0], l->block[1], l->block[2], l->shared);
}

/* ---- the phases ------------------------------------------------------------------------- */

/* The entry's settings, else the options'. */
static void settings(xmt_session *S)
{
    const xmt_entry *e = S->k->entry;
    S->warmup = xmt_entry_warmup(e) >= 0 ? xmt_entry_warmup(e) : xmt_opt.warmup;
    S->iterations = xmt_entry_iterations(e) >= 0 ? xmt_entry_iterations(e) : xmt_opt.iterations;
    if (S->iterations < 1) S->iterations = 1;
    if (S->iterations > XMT_MAX_ITERATIONS) S->iterations = XMT_MAX_ITERATIONS;
    /* an entry that asks for its count of runs gets exactly that (docs/policy.md) */
    S->racing = xmt_opt.race && xmt_entry_iterations(e) < 0 && !S->verify_only;
    /* room for the finalists' re-timing rounds and the edge's */
    S->cap = S->racing ? 2 * S->iterations + XMT_EDGE_ROUNDS : S->iterations;
    if (S->cap > XMT_MAX_ITERATIONS) S->cap = XMT_MAX_ITERATIONS;
    S->mean =
        xmt_entry_use_mean(e) >= 0 ? xmt_entry_use_mean(e) : xmt_opt.statistic == XMT_STAT_MEAN;
    S->flush = xmt_entry_l2_flush(e) >= 0 ? xmt_entry_l2_flush(e) : xmt_opt.l2_flush;
    S->budget_ms = xmt_entry_budget_ms(e) >= 0 ? xmt_entry_budget_ms(e) : xmt_opt.budget_ms;
    S->warmup_ms = xmt_entry_warmup_ms(e) >= 0 ? xmt_entry_warmup_ms(e) : xmt_opt.warmup_ms;
    /* an L2 flush before every timed run leaves nothing for a run of itself to set up */
    S->self_lead_ms = S->flush ? 0 : xmt_opt.self_lead_us / 1000.0;
    S->gate_ms = xmt_opt.gate_us / 1000.0;
    S->automatic = xmt_session_protects_auto(e);
    S->has_tol = xmt_session_tolerance(e, &S->tol_rtol, &S->tol_atol);
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

/* In the trial helper: c faulted in an earlier helper (its why copied into c). */
static int faulted_before(const xmt_session *S, xmt_cand *c)
{
    for (size_t i = 0; S->trial && i < S->trial->nfaulted; i++)
        if (S->trial->faulted[i] == c->index) {
            snprintf(c->why, sizeof c->why, "%s", S->trial->faulted_why[i]);
            return 1;
        }
    return 0;
}

/* In the trial helper: c reaches further along the idiom of a candidate that faulted in
 * an earlier helper (family.h): 1, with the one that condemns it and why in c. */
static int after_fault(const xmt_session *S, xmt_cand *c, size_t i)
{
    int derived = xmt_auto_owns(S->k->entry),
        g = xmt_family_group(derived, c->c.label, i, S->space_first);
    for (size_t j = 0; S->trial && !S->only && j < S->trial->nfaulted; j++) {
        xmt_candidate f;
        long fi = S->trial->faulted[j];
        char dims[160];
        if (fi < 0 || (size_t)fi >= S->n ||
            xmt_entry_candidate(S->k->entry, (size_t)fi, S->v, &f) != 1 ||
            xmt_family_group(derived, f.label, (size_t)fi, S->space_first) != g ||
            !xmt_family_reaches(&S->v->orig, &f.dims, &c->c.dims, dims, sizeof dims))
            continue;
        c->skipped_after_fault = 1;
        c->after_fault = fi;
        snprintf(c->after_fault_label, sizeof c->after_fault_label, "%s", f.label);
        snprintf(c->why, sizeof c->why,
                 "candidate %ld (%.80s) faulted in the trial helper, and this one reaches at "
                 "least as far along its idiom (%.60s): not run",
                 fi, f.label, dims);
        return 1;
    }
    return 0;
}

/* A candidate built (candidate i of the entry, or the pin) and either valid (S->valid
 * counts it) or skipped with its reason. */
static void admit(xmt_session *S, xmt_cand *c, size_t i)
{
    if (S->only) c->c = *S->only;
    if (!S->only && xmt_entry_candidate(S->k->entry, i, S->v, &c->c) != 1) {
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "%s", c->c.why);
    } else if (S->allowed_dyn > 0 && c->c.dims.shared > (unsigned)S->allowed_dyn) {
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "shared %u > %d bytes the program opted the kernel into",
                 c->c.dims.shared, S->allowed_dyn);
    } else if (xmt_candidate_is_own(&c->c, S->l)) {
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "same as the program's own config");
    } else if (faulted_before(S, c)) {
        c->status = XMT_C_FAULT;
    } else if (after_fault(S, c, i)) {
        c->status = XMT_C_SKIPPED;
    } else {
        c->status = XMT_C_OK;
        S->valid++;
    }
}

/* The candidates: the program's own first, then the policy's (or the one pinned), each
 * either valid or skipped with its reason; a searched space's points wait for the search
 * (XMT_C_UNVISITED). Returns -1 when out of memory. */
static int candidates(xmt_session *S)
{
    size_t n = S->only ? 1 : xmt_entry_ncandidates(S->k->entry);
    size_t nb = xmt_entry_nbuffers(S->k->entry);
    S->n = n;
    S->cands = calloc(n + 1, sizeof *S->cands);
    S->times = calloc((n + 1) * (size_t)S->cap, sizeof *S->times);
    S->bufs = calloc(nb ? nb : 1, sizeof *S->bufs);
    /* comparisons: a declared verify buffer each (auto: regions() makes room for its) */
    size_t nseg = nb + 1;
    S->segs = calloc(nseg, sizeof *S->segs);
    S->results = calloc(nseg, sizeof *S->results);
    if (!S->cands || !S->times || !S->bufs || !S->segs || !S->results) return -1;
    S->cands[0].index = XMT_OWN_CONFIG;
    own_label(S->l, S->cands[0].c.label, sizeof S->cands[0].c.label);
    S->cands[0].times = S->times;
    S->allowed_dyn = allowed_dynamic_shared(S->k, S->l);
    S->searched = !S->only && !S->verify_only && xmt_entry_searched(S->k->entry);
    S->space_first = S->searched ? xmt_entry_space_first(S->k->entry) : n;
    for (size_t i = 0; i < n; i++) {
        xmt_cand *c = &S->cands[i + 1];
        c->index = S->only ? S->only_index : (long)i;
        c->times = S->times + (i + 1) * (size_t)S->cap;
        if (i >= S->space_first)
            c->status = XMT_C_UNVISITED;
        else
            admit(S, c, i);
    }
    return 0;
}

/* The device memory one tuning may take: XMATUNE_SCRATCH_MB, else half of what is free. */
static double scratch_limit(void)
{
    if (xmt_opt.scratch_mb >= 0) return xmt_opt.scratch_mb * 1048576.0;
    size_t free_b = 0, total = 0;
    if (!xmt_drv.cuMemGetInfo || xmt_drv.cuMemGetInfo(&free_b, &total) != CUDA_SUCCESS) return 0;
    return (double)free_b / 2;
}

/* Records why the key stays untuned (the first reason wins), and the outcome the cache
 * keeps for it (XMT_OUTCOME_*: docs/cache.md, "Every outcome"). Returns 1. */
static int untuned_as(xmt_session *S, const char *outcome, const char *fmt, const char *detail)
{
    if (!S->untuned[0]) {
        snprintf(S->untuned, sizeof S->untuned, fmt, detail);
        S->untuned_outcome = outcome;
    }
    return 1;
}

static int untuned(xmt_session *S, const char *fmt, const char *detail)
{
    return untuned_as(S, XMT_OUTCOME_UNTUNED, fmt, detail);
}

/* One more scratch allocation, within the limit. Returns 0, 1 when over it (untuned). */
static int scratch(xmt_session *S, CUdeviceptr *p, size_t bytes, const char *what)
{
    if ((double)(S->scratch_bytes + bytes) > S->scratch_limit) {
        char b[120];
        snprintf(b, sizeof b, "%.1f MiB, more than the %.1f MiB allowed (XMATUNE_SCRATCH_MB)",
                 (double)(S->scratch_bytes + bytes) / 1048576.0, S->scratch_limit / 1048576.0);
        return untuned(S, "tuning needs device scratch of %s", b);
    }
    TRY(S, xmt_drv.cuMemAlloc(p, bytes), what);
    S->scratch_bytes += bytes;
    return 0;
fail:
    return -1;
}

/* One declared buffer: a device snapshot of its contents, and (declared protection) a
 * device reference for verification. */
static int snapshot(xmt_session *S, xmt_sbuf *b)
{
    int r;
    memcpy(&b->ptr, S->v->params[b->b.param], sizeof b->ptr);
    S->nbufs++;
    if (b->b.roles & XMT_BUF_VERIFY) {
        S->any_verify = 1;
        S->tolerance |= b->b.rtol != 0 || b->b.atol != 0;
        if (!S->automatic && (r = scratch(S, &b->ref, b->b.bytes, "verify alloc")) != 0) return r;
    }
    if ((r = scratch(S, &b->snap, b->b.bytes, "snapshot alloc")) != 0) return r;
    TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->snap, b->ptr, b->b.bytes, S->s), "snapshot");
    S->snapshots_taken = 1;
    return 0;
fail:
    return -1;
}

/* In the trial helper: the regions staged for it, as protect.c found them in the program
 * (the helper's copies of the program's memory are all it can reach). */
static int given_regions(xmt_session *S, size_t limit, size_t *reach, char *why, size_t cap)
{
    const xmt_trial_in *in = S->trial;
    *reach = 0;
    for (size_t i = 0; i < in->nregs; i++)
        *reach += in->regs[i].bytes;
    if (*reach > limit) return -2;
    S->regs = calloc(in->nregs ? in->nregs : 1, sizeof *S->regs);
    if (!S->regs) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < in->nregs; i++) {
        xmt_region *g = &S->regs[i];
        g->base = in->regs[i].base;
        g->bytes = in->regs[i].bytes;
        g->nchunks = (g->bytes + (1u << XMT_CHUNK_SHIFT) - 1) >> XMT_CHUNK_SHIFT;
        g->out = calloc(g->nchunks ? g->nchunks : 1, 1);
        g->seen = calloc(g->nchunks ? g->nchunks : 1, 1);
        S->nregs = i + 1;
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
    TRY(S, xmt_drv.cuCtxSynchronize(), "synchronize");
    double room = (S->scratch_limit - (double)S->scratch_bytes) / 2;
    size_t reach = 0;
    int f = S->trial ? given_regions(S, room > 0 ? (size_t)room : 0, &reach, why, sizeof why)
                     : xmt_protect_find(S->k, S->v, room > 0 ? (size_t)room : 0, &S->regs,
                                        &S->nregs, &reach, why, sizeof why);
    if (f == -2) {
        snprintf(why, sizeof why,
                 "%.2f MiB (a snapshot and a reference of the %.2f MiB its pointer arguments "
                 "reach), more than the %.2f MiB allowed (XMATUNE_SCRATCH_MB)",
                 (double)(S->scratch_bytes + 2 * reach) / 1048576.0, (double)reach / 1048576.0,
                 S->scratch_limit / 1048576.0);
        return untuned(S, "tuning needs device scratch of %s", why);
    }
    if (f != 0) return untuned(S, "protect: auto cannot protect it: %s", why);
    /* the buffers compared apart: the declared ones and at most a float extent per
     * parameter (rounding.h) */
    size_t nsb = S->nbufs + (S->k->nparams < XMT_MAX_EXTENTS ? S->k->nparams : XMT_MAX_EXTENTS);
    size_t nseg = S->nbufs + S->nregs * XMT_MAX_PIECES * (2 * nsb + 1) + 1;
    xmt_gc_cmp *segs = realloc(S->segs, nseg * sizeof *segs);
    if (segs) S->segs = segs;
    xmt_gc_result *res = realloc(S->results, nseg * sizeof *res);
    if (res) S->results = res;
    uint8_t *kinds = realloc(S->seg_kind, nseg);
    if (kinds) S->seg_kind = kinds;
    S->seg_buf = calloc(nseg, sizeof *S->seg_buf);
    S->segbufs = calloc(nsb ? nsb : 1, sizeof *S->segbufs);
    S->ext_names = calloc(nsb ? nsb : 1, sizeof *S->ext_names);
    S->ext_scale = calloc(nsb ? nsb : 1, sizeof *S->ext_scale);
    if (!segs || !res || !kinds || !S->seg_buf || !S->segbufs || !S->ext_names || !S->ext_scale) {
        session_error(S, CUDA_ERROR_OUT_OF_MEMORY, "comparisons");
        return -1;
    }
    for (size_t i = 0; i < S->nregs; i++) {
        xmt_region *g = &S->regs[i];
        int r;
        if ((r = scratch(S, &g->snap, g->bytes, "snapshot alloc")) != 0 ||
            (r = scratch(S, &g->ref, g->bytes, "verify alloc")) != 0)
            return r;
        TRY(S, xmt_drv.cuMemcpyDtoDAsync(g->snap, g->base, g->bytes, S->s), "snapshot");
        S->snapshots_taken = 1;
    }
    S->any_verify = 1;
    return 0;
fail:
    return -1;
}

/* Buffers: evaluate each declared one and snapshot it before anything runs; the regions
 * of auto protection; and the L2 flush buffer when flushing is on. Returns 0, 1
 * untuned, -1 failure. */
static int buffers(xmt_session *S)
{
    size_t nb = xmt_entry_nbuffers(S->k->entry);
    double t0 = xmt_now_ms();
    int r = 0;
    S->scratch_limit = scratch_limit();
    for (size_t i = 0; i < nb && r == 0; i++) {
        xmt_sbuf *b = &S->bufs[S->nbufs];
        int e = xmt_entry_buffer(S->k->entry, i, S->v, &b->b);
        if (e == 0 || (e == 1 && b->b.bytes == 0)) continue;
        if (e < 0 || b->b.param >= S->k->nparams || !S->v->params[b->b.param]) {
            session_error(S, CUDA_ERROR_INVALID_VALUE, "buffer size");
            return -1;
        }
        r = snapshot(S, b);
    }
    if (r == 0 && S->automatic) r = regions(S);
    if (r == 0 && S->flush && S->v->attrs && S->v->attrs->l2_bytes > 0) {
        S->flush_bytes = (size_t)S->v->attrs->l2_bytes * 2;
        TRY(S, xmt_drv.cuMemAlloc(&S->flush_buf, S->flush_bytes), "l2 flush alloc");
    }
    if (r == 0) TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    S->ph.snapshot += xmt_now_ms() - t0;
    return r;
fail:
    return -1;
}
/* ---- protect: auto, the program's own config's outputs ---------------------------------- */

/* The regions' changes against their snapshot (against_ref 0) or reference (1); 0, or -1
 * on failure (the session's error). */
static int changes(xmt_session *S, int against_ref)
{
    uint64_t words;
    CUresult r = xmt_outputs_changes(&S->gc, S->regs, S->nregs, against_ref, &words);
    if (r == CUDA_SUCCESS) return 0;
    session_error(S, r, "change detection");
    return -1;
}

/* The spans of S's outputs, as they are now marked; 0, or -1 (out of memory). */
static int build_spans(xmt_session *S)
{
    return xmt_outputs_spans(S->regs, S->nregs, &S->spans, &S->nspans);
}

/* The buffers compared apart under auto protection: the declared ones, then the float
 * outputs' extents (rounding.h), within the entry's tolerance: when it has one. */
static void float_extents(xmt_session *S)
{
    size_t cap = S->k->nparams < XMT_MAX_EXTENTS ? S->k->nparams : XMT_MAX_EXTENTS;
    memcpy(S->segbufs, S->bufs, S->nbufs * sizeof *S->bufs);
    S->nextents = xmt_rounding_extents(S->k, S->v, S->regs, S->nregs, S->bufs, S->nbufs,
                                       S->has_tol ? S->tol_rtol : 0, S->has_tol ? S->tol_atol : 0,
                                       S->segbufs + S->nbufs, S->ext_names, cap);
    S->nsegbufs = S->nbufs + S->nextents;
    for (size_t i = 0; i < S->nsegbufs; i++)
        S->ext_scale[i] = -1; /* read when first needed */
}

/* The program's own config again, from poisoned outputs: those it gives back it writes
 * whole; the others it updates in place, and they are restored instead of poisoned before
 * each verify run from then on (and own_repeats may ask, after the candidates, whether it
 * repeats its result). Asked only when something needs the answer: a candidate's run from
 * outputs all poisoned that differs from the reference (check_candidate; one that gives
 * the reference from there shows that nothing had to be restored, so a key whose
 * candidates all pass never runs it), data that repeats one value (data_check), or, in a
 * helper, a candidate that faulted from outputs all poisoned in an earlier helper (it may
 * have read the poison). Returns 0, 1 untuned, -1 failure. */
static int in_place_check(xmt_session *S)
{
    S->in_place_known = 1;
    if (verify_run(S, &S->cands[0]) != 0 || changes(S, 1) < 0) return -1;
    int in_place = xmt_outputs_in_place(S->regs, S->nregs);
    if (in_place < 0)
        return untuned_as(S, XMT_OUTCOME_UNSTABLE, "%s",
                          "its own config is not deterministic: two runs wrote different places");
    if (!in_place) return 0;
    S->own_repeat_due = 1;
    return build_spans(S);
}

/* Outputs: the program's own config run on the snapshot; the chunks it changed are its
 * outputs, and what it left is the reference. Until in_place_check says otherwise, every
 * output counts as written whole (poisoned before each verify run). Returns 0, 1
 * untuned, -1 failure. */
static int outputs(xmt_session *S)
{
    xmt_cand *own = &S->cands[0];
    if (verify_run(S, own) != 0 || changes(S, 0) < 0) return -1;
    size_t nout = xmt_outputs_mark(S->regs, S->nregs);
    /* no pointer arguments at all: nothing it writes can be compared (module globals are
     * not seen, as documented); with some, writing none of them means its outputs
     * cannot be told; the usual cause, a launch again on data the kernel wrote already
     * (it writes what is there). Auto's entries are no one's to edit: no advice there */
    if (nout == 0 && S->nregs > 0)
        return untuned_as(S, XMT_OUTCOME_UNTOLD,
                          "its own config changed no byte its pointer arguments reach, so its "
                          "outputs cannot be told: it may have run on data it had written "
                          "already%s",
                          xmt_auto_owns(S->k->entry) ? "" : XMT_DECLARE_ADVICE);
    S->out_bytes = nout << XMT_CHUNK_SHIFT;
    if (take_reference(S) != 0 || build_spans(S) != 0) return -1;
    float_extents(S);
    S->nsegs = xmt_outputs_segments(S->regs, S->nregs, S->segbufs, S->nsegbufs, S->segs,
                                    S->seg_kind, S->seg_buf);
    return S->trial && S->trial->in_place_first ? in_place_check(S) : 0;
}

/* Outputs updated in place (auto), once every candidate is verified: when one was
 * rejected and none gave the reference, does the program's own config give it again
 * from the same data? A config that does not repeat its own result cannot be verified
 * against: the key is untuned, and says why, rather than reporting every candidate
 * wrong. A candidate that gives the reference shows as much, so this run (one of the
 * own config, the slowest, in every in-place key) is saved there. 0, 1 untuned, -1. */
static size_t passing(const xmt_session *S);

static int own_repeats(xmt_session *S)
{
    int rejected = 0;
    for (size_t i = 1; i <= S->n; i++)
        rejected |= S->cands[i].status == XMT_C_REJECTED;
    if (!S->own_repeat_due || passing(S) > 0 || !rejected) return 0;
    S->own_repeat_due = 0;
    double t0 = xmt_now_ms();
    long d = verify_run(S, &S->cands[0]) != 0 ? -2 : compare_all(S);
    S->ph.verify_own += xmt_now_ms() - t0;
    if (d == -2) return -1;
    if (d < 0) return 0;
    char b[80];
    snprintf(b, sizeof b, "%llu", (unsigned long long)S->results[d].count);
    return untuned_as(S, XMT_OUTCOME_UNSTABLE,
                      "its own config is not deterministic: two runs from the same data "
                      "differ in %s elements (declare a tolerance in verify:, or use protect: "
                      "declared)",
                      b);
}

/* ---- the data a verification runs on (docs/tuning.md, "Data that proves nothing") --------- */

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
 * output written whole) and what it wrote (the reference of its outputs). *reads: 1 when
 * it reads any memory. -1 when out of memory. */
static long repeat_checks(const xmt_session *S, xmt_gc_cmp **out, int *reads)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    *reads = 0;
    for (size_t i = 0; i < S->nregs; i++)
        for (int wrote = 0; wrote < 2; wrote++) {
            const xmt_region *g = &S->regs[i];
            size_t c = 0, at, bytes;
            while (next_run(g, wrote ? 6u : 5u, &c, &at, &bytes)) {
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

/* Auto protection, once the outputs and the reference are known: the reference proves
 * nothing (S->uninformative) when the launch reads memory and every judged run of what
 * it reads and of what it wrote repeats one value (zeros in, zeros out): a wrong config
 * can give the same answer there. Compared on the GPU. 0, 1 untuned (in_place_check),
 * or -1 on failure. */
static int data_check(xmt_session *S)
{
    xmt_gc_cmp *c;
    int reads;
    long n = repeat_checks(S, &c, &reads);
    xmt_gc_result *res = n > 0 ? calloc((size_t)n, sizeof *res) : NULL;
    if (n < 0 || (n > 0 && !res)) {
        free(c);
        session_error(S, CUDA_ERROR_OUT_OF_MEMORY, "data check");
        return -1;
    }
    int repeats = n > 0;
    if (n > 0 && reads) {
        CUresult r = xmt_gc_compare(&S->gc, c, (size_t)n, res);
        for (long i = 0; r == CUDA_SUCCESS && i < n; i++)
            repeats &= res[i].count == 0;
        if (r != CUDA_SUCCESS) session_error(S, r, "data check");
        if (r != CUDA_SUCCESS) repeats = -1;
    }
    free(c);
    free(res);
    if (repeats < 0) return -1;
    if (repeats && !S->in_place_known) {
        /* everything judged repeats one value with the outputs taken as written whole; an
         * output updated in place is read too, and its old contents may tell */
        double t0 = xmt_now_ms();
        int r = in_place_check(S);
        S->ph.verify_own += xmt_now_ms() - t0;
        return r != 0 ? r : data_check(S);
    }
    S->uninformative = reads && repeats;
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
    TRY(S, xmt_drv.cuMemcpyDtoHAsync(tmp, p, head, S->s), "data digest");
    if (tail)
        TRY(S, xmt_drv.cuMemcpyDtoHAsync(tmp + head, p + bytes - tail, tail, S->s), "data digest");
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
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

/* S->data_digest: a digest of the reference the candidates were compared with, so that
 * a record on disk says which data its winner was verified on: each output run (auto) or
 * declared verify buffer, its place and size and its first and last DIGEST_SAMPLE bytes,
 * at most DIGEST_RUNS of them (a bounded cost whatever the size). The runs' hashes are
 * combined in sorted order: regions are ordered by address, and another process (or
 * another allocator's layout) may lay the same buffers out in another order. 0, or -1. */
static int data_digest(xmt_session *S)
{
    unsigned char *tmp = calloc(2, DIGEST_SAMPLE); /* zeroed: the copies fill it */
    uint64_t hs[DIGEST_RUNS];
    size_t runs = 0;
    int r = tmp ? 0 : -1;
    for (size_t i = 0; r == 0 && i < S->nregs && runs < DIGEST_RUNS; i++) {
        size_t c = 0, at, bytes;
        while (r == 0 && runs < DIGEST_RUNS && next_run(&S->regs[i], 6u, &c, &at, &bytes))
            if ((r = digest_run(S, &hs[runs], at, S->regs[i].ref + at, bytes, tmp)) == 0) runs++;
    }
    for (size_t i = 0; r == 0 && !S->automatic && i < S->nbufs && runs < DIGEST_RUNS; i++)
        if ((S->bufs[i].b.roles & XMT_BUF_VERIFY) && S->bufs[i].ref &&
            (r = digest_run(S, &hs[runs], 0, S->bufs[i].ref, S->bufs[i].b.bytes, tmp)) == 0)
            runs++;
    free(tmp);
    qsort(hs, runs, sizeof hs[0], cmp_u64);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < runs; i++)
        h = fnv1a_u64(h, hs[i]);
    if (r == 0 && runs)
        snprintf(S->data_digest, sizeof S->data_digest, "%016llx", (unsigned long long)h);
    return r;
}

/* ---- verification ------------------------------------------------------------------------- */

/* The pointer argument i, when it points into region rg: 1 and *p. */
static int points_into(const xmt_session *S, size_t i, const xmt_region *rg, CUdeviceptr *p)
{
    if (i >= S->v->nparams || i >= S->k->nparams || S->k->sizes[i] != 8 || !S->v->params[i])
        return 0;
    memcpy(p, S->v->params[i], 8);
    return *p >= rg->base && *p < rg->base + rg->bytes;
}

/* Parameter i's name in the policy ("p1", "y"), else "parameter i". */
static void param_name(const xmt_kernel *k, size_t i, char *out, size_t cap)
{
    const char *name = NULL;
    if (xmt_entry_param(k->entry, i, &name, NULL, NULL) && name)
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "parameter %zu", i);
}

/* The pointer arguments that point into region rg, in the policy's terms ("x, y"; "" when
 * none does). Returns how many. */
static size_t arguments_into(const xmt_session *S, const xmt_region *rg, char *out, size_t cap)
{
    size_t at = 0, count = 0;
    CUdeviceptr p;
    char pn[64];
    out[0] = 0;
    for (size_t i = 0; i < S->v->nparams; i++) {
        if (!points_into(S, i, rg, &p)) continue;
        param_name(S->k, i, pn, sizeof pn);
        if (at < cap) at += (size_t)snprintf(out + at, cap - at, "%s%s", count ? ", " : "", pn);
        count++;
    }
    return count;
}

/* Names, in the policy's terms, the pointer argument whose data holds addr (a byte of
 * region rg that differed): the one pointing into rg nearest below addr, into out, and
 * where addr is, the byte's offset from where it points, into where. One allocation can
 * serve several arguments: then where says so and names them. Writes "" when no argument
 * points into rg (a pointer inside a struct). */
static void name_argument(const xmt_session *S, const xmt_region *rg, CUdeviceptr addr, int is_out,
                          char *out, size_t cap, char *where, size_t wcap)
{
    size_t best = (size_t)-1;
    CUdeviceptr bp = 0, p;
    char all[192], pn[64];
    size_t count = arguments_into(S, rg, all, sizeof all);
    for (size_t i = 0; i < S->v->nparams; i++)
        if (points_into(S, i, rg, &p) && p <= addr && (best == (size_t)-1 || p > bp)) {
            best = i;
            bp = p;
        }
    out[0] = 0;
    if (best == (size_t)-1) return;
    param_name(S->k, best, pn, sizeof pn);
    snprintf(out, cap, "%s (%s)", pn, is_out ? "an output" : "outside the outputs");
    if (count > 1)
        snprintf(where, wcap,
                 "byte %llu from where %s points, of one allocation that %s point into: named is "
                 "the one that points nearest below that byte",
                 (unsigned long long)(addr - bp), pn, all);
    else
        snprintf(where, wcap, "byte %llu from where %s points", (unsigned long long)(addr - bp),
                 pn);
}

/* Describes comparison d, which differed, into c->why; reads the first differing
 * values when there is a tolerance. */
static void describe(xmt_session *S, xmt_cand *c, long d)
{
    const xmt_gc_cmp *g = &S->segs[d];
    const xmt_gc_result *r = &S->results[d];
    char name[384], where[512];
    double got = 0, ref = 0;
    int at_byte = 0;
    if (S->automatic) {
        const xmt_region *rg = NULL;
        for (size_t i = 0; i < S->nregs; i++)
            if (g->got >= S->regs[i].base && g->got < S->regs[i].base + S->regs[i].bytes)
                rg = &S->regs[i];
        uint64_t off = rg ? g->got - rg->base + r->first * g->es : 0;
        int is_out = rg && rg->out[off >> XMT_CHUNK_SHIFT];
        name[0] = 0;
        at_byte = 1;
        if (rg)
            name_argument(S, rg, rg->base + off, is_out, name, sizeof name, where, sizeof where);
        if (!name[0]) { /* no argument points into it: a pointer inside a struct */
            snprintf(name, sizeof name, "allocation 0x%llx (%s)",
                     (unsigned long long)(rg ? rg->base : 0),
                     is_out ? "an output" : "outside the outputs");
            snprintf(where, sizeof where, "byte %llu of it", (unsigned long long)off);
        }
    } else {
        for (size_t i = 0; i < S->nbufs; i++)
            if (S->bufs[i].ptr == g->got) snprintf(name, sizeof name, "%s", S->bufs[i].b.name);
    }
    if (g->kind != XMT_CMP_BITS) {
        uint8_t a[8] = {0}, b[8] = {0};
        if (xmt_drv.cuMemcpyDtoHAsync(a, g->got + r->first * g->es, g->es, S->s) == CUDA_SUCCESS &&
            xmt_drv.cuMemcpyDtoHAsync(b, g->ref + r->first * g->es, g->es, S->s) == CUDA_SUCCESS &&
            xmt_drv.cuStreamSynchronize(S->s) == CUDA_SUCCESS) {
            got = xmt_verify_value(a, 0, g->kind);
            ref = xmt_verify_value(b, 0, g->kind);
        }
    }
    xmt_verify_describe(name, r->count, g->bytes / g->es, r->first, g->kind,
                        S->automatic && g->es == 1, g->rtol, g->atol, got, ref,
                        at_byte ? where : NULL, c->why, sizeof c->why);
}

/* A rejected candidate under auto protection: what it changed outside the outputs is put
 * back from the snapshot (the outputs are prepared before every run anyway). */
static int undo(xmt_session *S, xmt_cand *c)
{
    size_t put = 0;
    if (!S->automatic || changes(S, 0) < 0) return S->automatic ? -1 : 0;
    TRY(S, xmt_outputs_put_back_outside(S->regs, S->nregs, S->s, &put), "put back");
    if (put) {
        size_t l = strlen(c->why);
        snprintf(c->why + l, sizeof c->why - l,
                 "; put back %zu bytes it changed outside the outputs", put);
        xmt_warn(
            "%s: candidate %s changed memory outside the outputs for key %s; put back (%zu bytes)",
            S->k->demangled, c->c.label, S->key_text, put);
    }
    return 0;
fail:
    return -1;
}

/* Whether the last compare found a difference that may lie outside the outputs. */
static int changed_outside(const xmt_session *S)
{
    return S->automatic && xmt_outputs_changed_outside(S->results, S->seg_kind, S->nsegs);
}

/* ---- rounding (rounding.h) ---------------------------------------------------------------- */

/* The float extent comparison i compares, or NULL. */
static const xmt_sbuf *extent_of(const xmt_session *S, size_t i)
{
    int32_t b = S->automatic && S->seg_buf ? S->seg_buf[i] : -1;
    return b >= 0 && (S->segbufs[b].b.roles & XMT_SBUF_EXTENT) ? &S->segbufs[b] : NULL;
}

/* Measures the float extents whose comparisons which[0 .. n) found a difference, first[i]
 * the first differing element of which[i]'s. 1 when each differs by rounding alone
 * (c->rounded and c->rel set; *elements the differing elements, *name the first extent's),
 * 0 when one does not, -1 on failure. */
static int measure_rounding(xmt_session *S, xmt_cand *c, const size_t *which, const uint64_t *first,
                            size_t n, uint64_t *elements, const char **name)
{
    double rel = 0;
    *elements = 0;
    *name = NULL;
    for (size_t i = 0; i < n; i++) {
        const xmt_sbuf *b = extent_of(S, which[i]);
        const xmt_gc_cmp *g = &S->segs[which[i]];
        double *scale = &S->ext_scale[S->seg_buf[which[i]]];
        unsigned es;
        int kind = xmt_verify_kind(b->b.dtype, 1, 0, &es);
        xmt_rounding r;
        CUresult e = CUDA_SUCCESS;
        if (*scale < 0) e = xmt_gc_absmax(&S->gc, g->ref, g->bytes, kind, scale);
        if (e == CUDA_SUCCESS) e = xmt_rounding_measure(&S->gc, g, kind, *scale, first[i], &r);
        if (e != CUDA_SUCCESS) {
            session_error(S, e, "verification");
            return -1;
        }
        if (!r.rounding) return 0;
        rel = fmax(rel, r.max_rel);
        *elements += r.elements;
        if (!*name) *name = b->b.name;
    }
    c->rounded = 1;
    c->rel = rel;
    return 1;
}

/* A candidate the last compare rejected: when every difference lies in float extents and
 * is rounding alone, says so in c->why and returns 1; 0 when not; -1 on failure. */
static int rounding_rejected(xmt_session *S, xmt_cand *c)
{
    size_t which[XMT_MAX_EXTENTS], n = 0;
    uint64_t first[XMT_MAX_EXTENTS];
    if (!S->nextents) return 0;
    for (size_t i = 0; i < S->nsegs; i++) {
        if (!S->results[i].count) continue;
        if (!extent_of(S, i) || n == XMT_MAX_EXTENTS) return 0;
        first[n] = S->results[i].first;
        which[n++] = i;
    }
    uint64_t elements;
    const char *name;
    int m = n ? measure_rounding(S, c, which, first, n, &elements, &name) : 0;
    if (m <= 0) return m;
    size_t l = (size_t)snprintf(c->why, sizeof c->why,
                                "%.40s%s: float rounding alone: %llu element%s from the "
                                "program's own config's, by at most %.2g times the largest "
                                "magnitude there; ",
                                name, n > 1 ? " and others" : "", (unsigned long long)elements,
                                elements == 1 ? " differs" : "s differ", c->rel);
    if (l >= sizeof c->why) return 1;
    if (S->has_tol)
        snprintf(c->why + l, sizeof c->why - l, "beyond the tolerance (rtol %g, atol %g)",
                 S->tol_rtol, S->tol_atol);
    else
        snprintf(c->why + l, sizeof c->why - l, "%s", xmt_rounding_hint(S->k->entry));
    return 1;
}

/* A candidate that passed within the entry's tolerance: whether its float extents equal
 * the own config's bitwise, and how far by rounding when not. 0, or -1 on failure. */
static int rounding_passed(xmt_session *S, xmt_cand *c)
{
    xmt_gc_cmp t[XMT_MAX_EXTENTS];
    size_t at[XMT_MAX_EXTENTS], which[XMT_MAX_EXTENTS], n = 0, nd = 0;
    uint64_t first[XMT_MAX_EXTENTS];
    for (size_t i = 0; i < S->nsegs && n < XMT_MAX_EXTENTS; i++)
        if (extent_of(S, i)) {
            t[n] = S->segs[i];
            t[n].kind = XMT_CMP_BITS;
            at[n++] = i;
        }
    CUresult e = n ? xmt_gc_compare(&S->gc, t, n, S->results) : CUDA_SUCCESS;
    if (e != CUDA_SUCCESS) {
        session_error(S, e, "verification");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (S->results[i].count) {
            first[nd] = S->results[i].first;
            which[nd++] = at[i];
        }
    uint64_t elements;
    const char *name;
    return nd && measure_rounding(S, c, which, first, nd, &elements, &name) < 0 ? -1 : 0;
}

/* verify_compare's second half: what the comparisons d (-1: none differs) say of c. */
static int verify_outcome(xmt_session *S, xmt_cand *c, long d, int comp, int second)
{
    if (d < 0) return S->has_tol && rounding_passed(S, c) < 0 ? -1 : 0;
    c->status = XMT_C_REJECTED;
    int rounding = rounding_rejected(S, c);
    if (rounding < 0) return -1;
    if (!rounding) describe(S, c, d);
    size_t l = strlen(c->why);
    if (second)
        snprintf(c->why + l, sizeof c->why - l,
                 " (from outputs filled with 0x00; from 0xFF it matched: it leaves output "
                 "bytes unwritten)");
    else if (comp && !rounding && left_unwritten(S, d))
        snprintf(c->why + l, sizeof c->why - l,
                 " (there it left the complement of the program's own result the outputs "
                 "were filled with: it leaves output bytes unwritten)");
    return changed_outside(S) && undo(S, c) != 0 ? -1 : 0;
}

static int check_candidate(xmt_session *S, xmt_cand *c);
static int guard_own(xmt_session *S);

/* A candidate's run from outputs all poisoned differed before the in-place check: the
 * outputs the program's own config updates in place were poisoned too, and c may have read
 * them. The own config is asked (in_place_check) and c verified again from what they
 * should hold; what c changed outside the outputs (when the comparison says it may have)
 * and in the guard bytes is put back first, so that the own config runs on the program's
 * data and a guard byte it changes is its own. 0, 1 untuned, -1 failure. */
static int sort_and_check_again(xmt_session *S, xmt_cand *c)
{
    size_t put = 0;
    if (changed_outside(S)) {
        if (changes(S, 0) < 0) return -1;
        TRY(S, xmt_outputs_put_back_outside(S->regs, S->nregs, S->s, &put), "put back");
    }
    if (S->slack.pattern) TRY(S, xmt_slack_fill(&S->slack, &S->gc, S->s), "guard bytes");
    double t0 = xmt_now_ms();
    int r = in_place_check(S);
    if (r == 0) r = guard_own(S);
    S->ph.verify_own += xmt_now_ms() - t0;
    return r != 0 ? r : check_candidate(S, c);
fail:
    return -1;
}

/* One candidate's verification run(s) against the program's own result: it stays ok, or
 * is rejected (or skipped: the budget was spent). 1 when the key is untuned (the in-place
 * check found the own config not deterministic), -1 on a driver failure. */
static int check_candidate(xmt_session *S, xmt_cand *c)
{
    if (c->status != XMT_C_OK || !S->any_verify) return 0;
    if (over_budget(S, "verify")) { /* never timed: it was not verified */
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "not verified: the key's budget (budget_ms) was spent");
        return 0;
    }
    int comp = complement_poison(S);
    int r = verify_run_from(S, c, comp ? POISON_COMPLEMENT : 1);
    if (r != 0) return r < 0 ? -1 : 0;
    long d = compare_all(S);
    if (d == -2) return -1;
    int second = 0;
    if (d < 0 && !comp && poisons_any(S)) { /* again from the other pattern: every byte written? */
        second = 1;
        if ((r = verify_run_from(S, c, 2)) != 0) return r < 0 ? -1 : 0;
        if ((d = compare_all(S)) == -2) return -1;
    }
    if (d >= 0 && S->automatic && !S->in_place_known) return sort_and_check_again(S, c);
    return verify_outcome(S, c, d, comp, second);
}

/* check_candidate, its time beyond the runs counted as verification's comparisons. */
static int verify_compare(xmt_session *S, xmt_cand *c)
{
    double t0 = xmt_now_ms(), runs0 = S->ph.verify_runs, own0 = S->ph.verify_own;
    int r = check_candidate(S, c);
    S->ph.verify_compares +=
        xmt_now_ms() - t0 - (S->ph.verify_runs - runs0) - (S->ph.verify_own - own0);
    return r;
}

/* ---- the trial helper's guard bytes (slack.h) ---------------------------------------------- */

/* In the trial helper, before anything runs: the slack of the staged windows (their bytes
 * outside every region), a buffer of the pattern to compare it with, and every byte of it
 * filled. Only where candidates are verified (the comparison kernels are open). Returns
 * 0, 1 untuned (scratch), -1 failure. */
static int guard_arm(xmt_session *S)
{
    const xmt_trial_in *in = S->trial;
    if (!in || !in->nwin || !S->any_verify) return 0;
    if (xmt_slack_find(in->win, in->win_bytes, in->nwin, in->regs, in->nregs, &S->slack) != 0) {
        session_error(S, CUDA_ERROR_OUT_OF_MEMORY, "guard bytes");
        return -1;
    }
    if (!S->slack.n) return 0;
    int r = scratch(S, &S->slack.pattern, S->slack.pattern_bytes, "guard alloc");
    if (r != 0) return r;
    TRY(S, xmt_slack_fill(&S->slack, &S->gc, S->s), "guard bytes");
    return 0;
fail:
    return -1;
}

/* The pointer arguments that point into given region i, in the policy's terms ("x, y"),
 * else the region's address. */
static void region_name(const xmt_session *S, long i, char *out, size_t cap)
{
    const xmt_region *rg = &S->trial->regs[i];
    if (!arguments_into(S, rg, out, cap))
        snprintf(out, cap, "0x%llx", (unsigned long long)rg->base);
}

/* Where in the guard bytes a run wrote: "after the allocation out points into, from byte 0
 * past its end". */
static void guard_where(const xmt_session *S, size_t span, uint64_t first, char *out, size_t cap)
{
    const xmt_slack_span *g = &S->slack.spans[span];
    char name[128];
    if (g->after >= 0) {
        region_name(S, g->after, name, sizeof name);
        snprintf(out, cap, "after the allocation %.64s points into, from byte %llu past its end",
                 name, (unsigned long long)first);
    } else if (g->before >= 0) {
        region_name(S, g->before, name, sizeof name);
        snprintf(out, cap,
                 "before the allocation %.64s points into, from byte %llu before its start", name,
                 (unsigned long long)(g->bytes - first));
    } else {
        snprintf(out, cap, "of a window without memory of its own");
    }
}

/* Checks the guard bytes: 0 unchanged, 1 changed (N bytes and where, in why), -1 failure. */
static int guard_changed(xmt_session *S, const char *who, char *why, size_t cap)
{
    uint64_t n, first;
    size_t span;
    CUresult r = xmt_slack_check(&S->slack, &S->gc, &n, &span, &first);
    if (r != CUDA_SUCCESS) {
        session_error(S, r, "guard bytes");
        return -1;
    }
    if (!n) return 0;
    char where[256];
    guard_where(S, span, first, where, sizeof where);
    snprintf(why, cap,
             "%schanged %llu bytes past the memory its pointer arguments reach (in the trial "
             "helper's guard bytes %.160s)",
             who, (unsigned long long)n, where);
    return 1;
}

/* In the trial helper, once the program's own config has run (its outputs found, or its
 * reference taken): when it changed a guard byte, the key is untuned -- it writes memory
 * that was not staged, and the helper cannot protect it. Returns 0, 1 untuned, -1. */
static int guard_own(xmt_session *S)
{
    char why[300];
    int r = S->slack.pattern ? guard_changed(S, "its own config ", why, sizeof why) : 0;
    if (r <= 0) return r;
    char b[300];
    snprintf(b, sizeof b, "%.240s; the helper cannot protect what it writes there", why);
    return untuned(S, "%s", b);
}

/* In the trial helper, after candidate c's verify runs (ran: it had some): a candidate
 * that changed any guard byte is rejected, whatever its outputs, and never timed (in the
 * program the same writes fault, or overwrite a neighbouring allocation); the guard bytes
 * are filled again for the next. 0, or -1 on failure. */
static int guard_check(xmt_session *S, xmt_cand *c, int ran)
{
    char why[300];
    if (!S->slack.pattern || !ran || (c->status != XMT_C_OK && c->status != XMT_C_REJECTED))
        return 0;
    int r = guard_changed(S, "", why, sizeof why);
    if (r <= 0) return r;
    snprintf(c->why, sizeof c->why, "%.220s: it would write past the program's allocations%s", why,
             c->status == XMT_C_REJECTED ? " (its outputs differ too)" : "");
    c->rounded = 0; /* rejected for something worse than rounding */
    c->status = XMT_C_REJECTED;
    TRY(S, xmt_slack_fill(&S->slack, &S->gc, S->s), "guard bytes");
    return 0;
fail:
    return -1;
}

/* The guard bytes' pattern freed (not after a failure in the helper, which exits: a free
 * could wait on a run that never ends); their count is kept for the tune event. */
static void guard_release(xmt_session *S)
{
    S->slack.pattern_set = 0;
    if (S->slack.pattern && !(S->trial && S->error != CUDA_SUCCESS))
        xmt_drv.cuMemFree(S->slack.pattern);
    S->slack.pattern = 0;
    xmt_slack_free(&S->slack);
}

/* A candidate's verification: its runs compared with the program's own result, and, in
 * the trial helper, its guard bytes checked. 1 untuned, -1 on a driver failure. */
static int verify_one(xmt_session *S, xmt_cand *c)
{
    int ran = c->status == XMT_C_OK && S->any_verify;
    int v = verify_compare(S, c);
    if (v != 0) return v;
    double t0 = xmt_now_ms();
    int r = guard_check(S, c, ran);
    S->ph.verify_guard += xmt_now_ms() - t0;
    return r;
}

static int clock_warm_up(xmt_session *S);

/* Verify: every candidate once against the program's own config on the same inputs; a
 * candidate that leaves anything different is rejected. The clock warm-up runs as soon as
 * one passes. Returns 0, 1 untuned (the own config wrote guard bytes), -1 failure. */
static int verify(xmt_session *S)
{
    if (!S->any_verify) return 0;
    double t0 = xmt_now_ms(), cw0 = S->ph.clock_warmup;
    if (!S->automatic && (verify_run(S, &S->cands[0]) != 0 || take_reference(S) != 0)) return -1;
    S->ph.verify_own += xmt_now_ms() - t0;
    int own = guard_own(S);
    if (own != 0) return own;
    for (size_t i = 1; i <= S->n && own == 0; i++) {
        progress(S, "verify", i - 1, S->n);
        own = verify_one(S, &S->cands[i]);
        /* once something passed, something will be timed: the clock goes up now, so that
         * the remaining verification runs at speed too (at the idle clock it was most of
         * what tuning cost beyond its timed runs: docs/benchmarks.md) */
        if (own == 0 && S->cands[i].status == XMT_C_OK && i < S->n && !S->verify_only &&
            S->warmup_fate == XMT_WARMUP_NOT_REACHED && clock_warm_up(S) != 0)
            return -1;
    }
    if (own < 0) return -1;
    if (own == 0) own = own_repeats(S);
    /* the clock warm-up is its own phase */
    S->ph.verification += xmt_now_ms() - t0 - (S->ph.clock_warmup - cw0);
    return own;
}

/* ---- timing ------------------------------------------------------------------------------- */

static size_t passing(const xmt_session *S)
{
    size_t n = 0;
    for (size_t i = 1; i <= S->n; i++)
        n += S->cands[i].status == XMT_C_OK;
    return n;
}

/* Whether the clock warm-up runs, in S->warmup_fate, with the time since another tuning
 * ended (S->since_last_ms, -1 when none has in this process): the tune event reports both,
 * so that the rule's choice can be read rather than assumed. 1 when it runs. */
static int clock_warm_up_needed(xmt_session *S, double w0)
{
    uint64_t last = atomic_load(&last_session_end_us);
    /* another thread's tuning may have ended after w0: the clock is up all the same */
    S->since_last_ms = last ? fmax(0.0, w0 - (double)last / 1000.0) : -1;
    if (S->warmup_ms <= 0)
        S->warmup_fate = XMT_WARMUP_OFF;
    else if (last && S->since_last_ms < XMT_CLOCK_STILL_UP_MS)
        S->warmup_fate = XMT_WARMUP_STILL_UP;
    else
        S->warmup_fate = XMT_WARMUP_RAN;
    return S->warmup_fate == XMT_WARMUP_RAN;
}

/* The GPU by time with the program's own config, so that the clock is up before the
 * first candidate is timed; not when a tuning just ended (the clock is still up). */
static int clock_warm_up(xmt_session *S)
{
    double w0 = xmt_now_ms();
    if (S->warmup_fate != XMT_WARMUP_NOT_REACHED) return 0; /* done during verification */
    if (!clock_warm_up_needed(S, w0)) return 0;
    if (over_budget(S, "clock_warmup")) {
        S->warmup_fate = XMT_WARMUP_BUDGET;
        return 0;
    }
    for (int i = 0; i < 100000; i++) {
        if (prepare(S, 0, 0) != 0 || run_candidate(S, &S->cands[0]) != 0) return -1;
        if (i % 4 == 3) {
            TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
            if (xmt_now_ms() - w0 >= S->warmup_ms || over_budget(S, "clock_warmup")) break;
        }
    }
    S->ph.clock_warmup += xmt_now_ms() - w0;
    return 0;
fail:
    return -1;
}

/* Warm-up runs of candidate c: with racing, once the clock is up, one (the verification
 * run has loaded its code already); none for the program's own config when the clock
 * warm-up ran, which ran that config over and over for warmup_ms (its warm-up run was one
 * more run of the slowest config, often: saxpy's own took 30 times the best's). */
static int warm_runs(const xmt_session *S, const xmt_cand *c)
{
    if (S->racing && c->index == XMT_OWN_CONFIG && S->warmup_fate == XMT_WARMUP_RAN) return 0;
    return S->racing && S->warmup_fate != XMT_WARMUP_OFF && S->warmup > 1 ? 1 : S->warmup;
}

/* c's untimed runs, waited for, so that the watchdog knows whom to stop. */
static int warm_one(xmt_session *S, xmt_cand *c, int runs)
{
    for (int w = 0; w < runs && c->status == XMT_C_OK; w++) {
        if (prepare(S, 0, 0) != 0 || run_candidate(S, c) < 0) return -1;
        c->warmed++;
    }
    return c->warmed ? wait_runs(S, NULL, c->warmed, c) : 0;
}

/* Untimed runs of each candidate (warm_runs). */
static int warm_up(xmt_session *S)
{
    double t0 = xmt_now_ms();
    for (size_t i = 0; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        int runs = warm_runs(S, c);
        if (runs && c->status == XMT_C_OK && over_budget(S, "warmup_runs")) break;
        if (warm_one(S, c, runs) != 0) return -1;
    }
    S->ph.warmup_runs += xmt_now_ms() - t0;
    return 0;
}

/* Restores and resets run before every timed run when the policy declares them. */
static int has_prep(const xmt_session *S)
{
    for (size_t i = 0; i < S->nbufs; i++)
        if (S->bufs[i].b.roles & (XMT_BUF_RESTORE | XMT_BUF_RESET)) return 1;
    return S->flush && S->flush_buf;
}

/* Whether c runs in a timed round: valid, not eliminated, with room for a run; with
 * `only`, a finalist. */
static int in_round(const xmt_session *S, const xmt_cand *c, const unsigned char *only)
{
    if (c->status != XMT_C_OK || c->ntimes >= S->cap) return 0;
    return only ? only[c - S->cands] : !c->elim_round;
}

/* Whether c's timed run follows an untimed run of c itself (its self lead-in): when its
 * runs so far took less than self_lead_ms. A short kernel's time depends on what ran just
 * before it (the L2 holds what that run left, in the order it left it): a program's loop
 * runs the same config again, a timed round another config; on the H200 that reversed the
 * order of an in-place update's configs of 9 us (docs/benchmarks.md). Not in a round
 * before c has a time: that round's first candidate has its lead-in all the same. */
static int self_lead(const xmt_session *S, const xmt_cand *c)
{
    return S->self_lead_ms > 0 && c->ntimes > 0 &&
           statistic(c->times, c->ntimes, S->mean) < S->self_lead_ms;
}

/* The shim's GPU kernels (gpucheck.h) opened for this session, once: the load counted as
 * module_load (on first need in a context). */
static void gc_ready(xmt_session *S)
{
    if (S->gc_opened) return;
    double l0 = xmt_now_ms();
    xmt_gc_open(&S->gc, S->s);
    S->gc_opened = 1;
    S->ph.module_load += xmt_now_ms() - l0;
}

/* The longest gate: a round that takes longer than this to queue is not short. */
#define GATE_MAX_MS 5.0

/* Whether a timed round is gated: one of its candidates has no timed run yet, or its runs
 * so far took less than gate_ms (median), and the gate kernel can run. */
static int gated(xmt_session *S, const unsigned char *only)
{
    int short_one = 0;
    if (S->gate_ms <= 0) return 0;
    for (size_t j = 0; j <= S->n && !short_one; j++) {
        const xmt_cand *c = &S->cands[j];
        short_one = in_round(S, c, only) &&
                    (c->ntimes == 0 || statistic(c->times, c->ntimes, S->mean) < S->gate_ms);
    }
    if (!short_one) return 0;
    gc_ready(S); /* a key without verification: the module is loaded for the gate */
    if (!S->gate_ev && xmt_drv.cuEventCreate(&S->gate_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        S->gate_ev = NULL;
    return S->gate_ev && xmt_drv.cuEventQuery && xmt_gc_on_gpu(&S->gc);
}

/* The gate of a round of `runs` runs (lead-ins included): a kernel that holds the GPU,
 * queued before them, long enough for the host to queue the whole round behind it, and
 * an event after it. Without it, a run shorter than its launch starts on an idle GPU when
 * the host gets to it, and its events time the launch too: on the H200 a 4 us kernel
 * read 4.7-5.7 us in rounds and 3.7-4.1 us in a loop (docs/benchmarks.md). The first
 * gate's length is a guess; each later one is 1.5 times what queueing the last round took,
 * and twice the last gate's when that ended before its round was queued. */
static int gate_begin(xmt_session *S, size_t runs)
{
    if (S->gate_next_ms <= 0) S->gate_next_ms = 0.02 + 0.01 * (double)runs;
    if (S->gate_next_ms > GATE_MAX_MS) S->gate_next_ms = GATE_MAX_MS;
    TRY(S, xmt_gc_spin(&S->gc, (uint64_t)(S->gate_next_ms * 1e6)), "gate");
    TRY(S, xmt_drv.cuEventRecord(S->gate_ev, S->s), "event record");
    return 0;
fail:
    return -1;
}

/* Once the round is queued (q_ms after its gate): whether the gate held it, and the next
 * gate's length. */
static void gate_end(xmt_session *S, double q_ms)
{
    int ended = xmt_drv.cuEventQuery(S->gate_ev) == CUDA_SUCCESS; /* faults: wait_runs says */
    double next = 1.5 * q_ms + 0.01;
    S->gated_rounds++;
    S->gates_short += ended;
    if (ended && next < 2 * S->gate_next_ms) next = 2 * S->gate_next_ms;
    S->gate_next_ms = next < GATE_MAX_MS ? next : GATE_MAX_MS;
}

/* run_candidate for a run of c queued behind `behind` other timed runs of the round. */
static int run_queued(xmt_session *S, xmt_cand *c, int behind)
{
    S->queued = behind;
    int r = run_candidate(S, c);
    S->queued = 0;
    return r;
}

/* One round of timed runs: every candidate in it (in_round) once, starting from the it-th
 * of them; the first after a lead-in run of itself, a short one (self_lead) too. */
static int timed_round(xmt_session *S, int it, int prep, const unsigned char *only)
{
    CUevent last = NULL;
    int runs = 0, lead_in = 0;
    size_t m = 0, *order = malloc(2 * (S->n + 1) * sizeof *order), *seq = order + S->n + 1;
    if (!order) return -1;
    /* who runs, starting at the it-th of them: each is first as often as another (rotated
     * over all candidates, two finalists of three put the same one first in 2 rounds of 3) */
    for (size_t j = 0; j <= S->n; j++) {
        S->cands[j].in_round = 0;
        if (in_round(S, &S->cands[j], only)) order[m++] = j;
    }
    for (size_t j = 0; j < m; j++)
        seq[j] = order[(j + (size_t)it) % m];
    /* the first runs twice (its lead-in): not the program's own config while another runs,
     * as it is often the slowest by far (saxpy's: 30 times the best) */
    if (m > 1 && S->cands[seq[0]].index == XMT_OWN_CONFIG) {
        size_t t = seq[0];
        seq[0] = seq[1];
        seq[1] = t;
    }
    int gate = m > 0 && gated(S, only);
    double q0 = xmt_now_ms();
    if (gate && gate_begin(S, 2 * m) != 0) goto fail;
    for (size_t j = 0; j < m; j++) {
        xmt_cand *c = &S->cands[seq[j]];
        /* a lead-in run, untimed, so that the first timed run does not start on a GPU that
         * sat idle while the last round was waited for: on the H200 the first run of a
         * round was ~3% slower, enough to split a tied pair between processes */
        int first = !lead_in;
        if (first || self_lead(S, c)) {
            if (prepare(S, 0, S->flush) != 0) goto fail;
            int r = run_queued(S, c, runs);
            if (r < 0) goto fail;
            if (r > 0) continue;
            lead_in++;
            S->self_leads += !first;
        }
        if (prep) TRY(S, xmt_drv.cuEventRecord(c->prep, S->s), "event record");
        if (prepare(S, 0, S->flush) != 0) goto fail;
        TRY(S, xmt_drv.cuEventRecord(c->start, S->s), "event record");
        int r = run_queued(S, c, runs); /* c's lead-in, when it has one, is its own */
        if (r < 0) goto fail;
        if (r > 0) continue;
        TRY(S, xmt_drv.cuEventRecord(c->end, S->s), "event record");
        last = c->end;
        c->in_round = ++runs; /* its place in the launch order: the watchdog's culprit */
    }
    free(order);
    order = NULL;
    if (gate) gate_end(S, xmt_now_ms() - q0);
    if (last && wait_runs(S, last, runs + lead_in, NULL) != 0) return -1;
    for (size_t j = 0; j <= S->n; j++) {
        xmt_cand *c = &S->cands[j];
        if (c->status != XMT_C_OK || !c->in_round) continue;
        float ms = 0, pm = 0;
        TRY(S, xmt_drv.cuEventElapsedTime(&ms, c->start, c->end), "event elapsed");
        if (prep) TRY(S, xmt_drv.cuEventElapsedTime(&pm, c->prep, c->start), "event elapsed");
        c->times[c->ntimes++] = ms;
        S->ph.restores += pm;
    }
    return 0;
fail:
    free(order);
    return -1;
}

/* Racing, after timed round `round`: the candidates race.c says are slower than the leader
 * by more than the noise explains are timed no more. Returns how many are still raced. */
static size_t eliminate(xmt_session *S, int round)
{
    xmt_race_cand *rc = race_view(S);
    unsigned char *out = malloc(S->n + 1);
    size_t alive = 0;
    if (rc && out && xmt_race_eliminate(rc, S->n + 1, out, &S->race_margin) > 0)
        for (size_t i = 0; i <= S->n; i++)
            if (out[i]) {
                S->cands[i].elim_round = round;
                S->eliminated++;
            }
    for (size_t i = 0; i <= S->n; i++)
        alive += S->cands[i].status == XMT_C_OK && !S->cands[i].elim_round;
    free(rc);
    free(out);
    return rc && out ? alive : S->n + 1;
}

/* Agreement (racing only): the finalists (race.c: within twice the tie limit of the best)
 * are timed again in interleaved rounds, A B A B ..., half as many as the timed rounds
 * (3 at least), before the decision, so that the tie rule reads medians of more runs
 * taken side by side. Half: a memory-bound kernel's plateau makes a dozen finalists, and
 * full rounds of them cost more than racing saved (the recorded H200 timings). Then the
 * edge, below. */
static int retime(xmt_session *S, int prep)
{
    xmt_race_cand *rc = race_view(S);
    unsigned char *fin = malloc(S->n + 1);
    int r = 0;
    if (rc && fin) {
        double lim = xmt_race_tie_limit(xmt_race_band_of(rc, S->n + 1, S->mean));
        S->finalists = xmt_race_finalists(rc, S->n + 1, S->mean, lim, fin);
    }
    int rounds = (S->iterations + 1) / 2 > 3 ? (S->iterations + 1) / 2 : 3;
    for (int it = 0; rc && fin && S->finalists > 1 && it < rounds && r == 0; it++) {
        if (over_budget(S, "retiming")) break;
        progress(S, "re-timing finalists", (size_t)it, (size_t)rounds);
        r = timed_round(S, it, prep, fin);
        S->retime_rounds += r == 0;
    }
    /* The edge: while a candidate whose side of the tie limit decides the winner measures
     * within 2 standard errors of it, it and the best are timed again, a round at a time
     * (race.h, xmt_race_edge), for at most a share of the full floor in their timed runs'
     * own time (the floor's measure; the rounds' waits are bounded by their count). The
     * spread between processes was that of each one's medians, so that more runs narrow it
     * where it matters and nowhere else. */
    int *had = malloc((S->n + 1) * sizeof *had);
    double spent = 0, allow = -1;
    for (int it = 0; rc && fin && had && S->finalists > 1 && r == 0; it++) {
        free(rc);
        if (!(rc = race_view(S))) break;
        if (allow < 0)
            allow = XMT_EDGE_SHARE * xmt_race_full_floor(rc, S->n + 1, S->warmup, S->iterations);
        double lim = xmt_race_tie_limit(xmt_race_band_of(rc, S->n + 1, S->mean));
        S->edge_left = xmt_race_edge(rc, S->n + 1, S->mean, lim, fin);
        if (!S->edge_left || it >= XMT_EDGE_ROUNDS || spent > allow || over_budget(S, "retiming"))
            break;
        progress(S, "re-timing the edge", (size_t)it, XMT_EDGE_ROUNDS);
        for (size_t i = 0; i <= S->n; i++)
            had[i] = S->cands[i].ntimes;
        r = timed_round(S, it, prep, fin);
        S->edge_rounds += r == 0;
        for (size_t i = 0; r == 0 && i <= S->n; i++)
            if (S->cands[i].ntimes > had[i]) spent += S->cands[i].times[S->cands[i].ntimes - 1];
    }
    free(had);
    free(rc);
    free(fin);
    return r;
}

/* The events c's timed runs are measured with, made when it first needs them. */
static int make_events(xmt_session *S, xmt_cand *c, int prep)
{
    if (!c->start) TRY(S, xmt_drv.cuEventCreate(&c->start, CU_EVENT_DEFAULT), "event create");
    if (!c->end) TRY(S, xmt_drv.cuEventCreate(&c->end, CU_EVENT_DEFAULT), "event create");
    if (prep && !c->prep) TRY(S, xmt_drv.cuEventCreate(&c->prep, CU_EVENT_DEFAULT), "event create");
    return 0;
fail:
    return -1;
}

/* Timed runs, round-robin so that clock drift favours no candidate; the starting
 * candidate rotates each round. Racing eliminates candidates between rounds and ends the
 * rounds when one is left; the finalists are then re-timed. A budget ends it early: the
 * decision is made from what was measured (at least one round, which decides). */
static int timed_runs(xmt_session *S)
{
    double t0 = xmt_now_ms();
    int prep = has_prep(S);
    for (size_t i = 0; i <= S->n; i++)
        if (S->cands[i].status == XMT_C_OK && make_events(S, &S->cands[i], prep) != 0) return -1;
    for (int it = 0; it < S->iterations; it++) {
        if (it > 0 && over_budget(S, "timed_runs")) break;
        progress(S, "timed round", (size_t)it, (size_t)S->iterations);
        if (timed_round(S, it, prep, NULL) != 0) return -1;
        if (S->racing && eliminate(S, it + 1) <= 1) break;
    }
    if (S->racing && retime(S, prep) != 0) return -1;
    S->ph.timed_runs += xmt_now_ms() - t0 - S->ph.restores;
    return 0;
}

/* ---- search: a space too large to try in full (policy/search.h) ----------------------- */

#define SEARCH_BATCH 16 /* points asked of the search at a time */

/* The candidates marked in `in`, in timed rounds as timed_runs times the whole list:
 * interleaved, raced against every candidate timed so far (earlier batches' included), until
 * none of them is left or the rounds are done. */
static int time_batch(xmt_session *S, const unsigned char *in, int prep)
{
    unsigned char *only = malloc(S->n + 1);
    if (!only) return -1;
    int r = 0;
    for (int it = 0; it < S->iterations && r == 0; it++) {
        size_t left = 0;
        for (size_t i = 0; i <= S->n; i++) {
            const xmt_cand *c = &S->cands[i];
            only[i] = in[i] && c->status == XMT_C_OK && !c->elim_round;
            left += only[i];
        }
        if (!left || (it > 0 && over_budget(S, "timed_runs"))) break;
        progress(S, "search: timed round", (size_t)it, (size_t)S->iterations);
        r = timed_round(S, it, prep, only);
        if (r == 0 && S->racing) eliminate(S, it + 1);
    }
    free(only);
    return r;
}

/* One batch of points the search chose (cands marked in `in`; the first batch also holds
 * the program's own config and the configs: items, verified already): verified, warmed up,
 * timed. 0, 1 untuned (verify_one), -1 failure. */
static int run_batch(xmt_session *S, const unsigned char *in, const size_t *pts, size_t npts,
                     int prep)
{
    double t0 = xmt_now_ms();
    int v = 0;
    for (size_t j = 0; j < npts && v == 0; j++) {
        progress(S, "search: verify", S->visited - npts + j, S->search_evals);
        v = verify_one(S, &S->cands[1 + S->space_first + pts[j]]);
    }
    S->ph.verification += xmt_now_ms() - t0;
    if (v != 0) return v;
    t0 = xmt_now_ms();
    for (size_t i = 0; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        if (!in[i] || c->status != XMT_C_OK) continue;
        if (make_events(S, c, prep) != 0) return -1;
        if (!c->warmed && !over_budget(S, "warmup_runs") && warm_one(S, c, warm_runs(S, c)) != 0)
            return -1;
    }
    S->ph.warmup_runs += xmt_now_ms() - t0;
    t0 = xmt_now_ms();
    int r = time_batch(S, in, prep);
    S->ph.timed_runs += xmt_now_ms() - t0;
    return r;
}

/* Instead of verifying and timing every point of the space: the search's batches, from the
 * point nearest the program's own config, with a fixed seed (processes that measure alike
 * visit alike), each reported back with its statistic (INFINITY: skipped, rejected,
 * faulted, not timed), until its budget of points is spent; then the finalists are
 * re-timed and the decision is the usual one, over the points visited. */
static int search_space(xmt_session *S)
{
    const xmt_entry *e = S->k->entry;
    unsigned dims[XMT_MAX_TUNABLES];
    unsigned nd = xmt_entry_space_dims(e, dims, XMT_MAX_TUNABLES);
    size_t start = xmt_entry_space_nearest(e, S->v), pts[SEARCH_BATCH];
    S->search_start = start == SIZE_MAX ? 0 : start;
    S->search_evals = xmt_entry_search_evals(e);
    xmt_search *q = xmt_search_new(dims, nd, XMT_SEARCH_SEED, S->search_start, S->search_evals);
    unsigned char *in = calloc(S->n + 1, 1);
    int prep = has_prep(S), r = q && in ? 0 : -1;
    for (size_t i = 0; r == 0 && i <= S->space_first && i <= S->n; i++)
        in[i] = 1; /* the first batch: the program's own and the configs: items too */
    while (r == 0 && !xmt_search_done(q) && !S->cut) {
        size_t np = xmt_search_next(q, pts, SEARCH_BATCH);
        if (np == 0) break;
        for (size_t j = 0; j < np; j++) {
            xmt_cand *c = &S->cands[1 + S->space_first + pts[j]];
            admit(S, c, S->space_first + pts[j]);
            in[c - S->cands] = 1;
            S->visited++;
        }
        if ((r = run_batch(S, in, pts, np, prep)) != 0) break;
        for (size_t j = 0; j < np; j++) {
            const xmt_cand *c = &S->cands[1 + S->space_first + pts[j]];
            int timed = c->status == XMT_C_OK && c->ntimes > 0;
            xmt_search_report(q, pts[j],
                              timed ? statistic(c->times, c->ntimes, S->mean) : INFINITY);
        }
        memset(in, 0, S->n + 1);
    }
    if (q) S->search_restarts = (int)xmt_search_restarts(q);
    xmt_search_free(q);
    free(in);
    if (r == 0 && S->racing) {
        double t1 = xmt_now_ms();
        r = retime(S, prep);
        S->ph.timed_runs += xmt_now_ms() - t1;
    }
    S->ph.timed_runs -= S->ph.restores;
    return r;
}

/* After a failure: say so, and put the buffers back all the same. */
static void failed(xmt_session *S)
{
    char b[32];
    if (S->has_culprit) return; /* the helper's context is broken; the program retries */
    xmt_warn("%s: tuning stopped at %s (%s); the program's own config is used for key %s",
             S->k->demangled, S->error_at ? S->error_at : "?", xmt_cu_name(S->error, b, sizeof b),
             S->key_text);
    CUresult saved = S->error;
    const char *saved_at = S->error_at; /* the failure reported is the first, not put_back's */
    S->error = CUDA_SUCCESS;
    if (put_back(S) != 0) /* auto protection's regions hold the declared buffers too */
        xmt_warn("%s: could not put back %s after a failure (%s)", S->k->demangled,
                 S->nregs ? "the memory its pointer arguments reach" : "the declared buffers",
                 S->error_at);
    S->error = saved;
    S->error_at = saved_at;
}

/* The floors: what the measurements cost on the GPU (timed runs, and warm-up runs at the
 * candidate's statistic), and what timing every candidate in full would have. */
static void floors(xmt_session *S, const xmt_race_cand *rc)
{
    for (size_t i = 0; i <= S->n; i++) {
        const xmt_cand *c = &S->cands[i];
        if (c->status != XMT_C_OK || c->ntimes == 0) continue;
        for (int t = 0; t < c->ntimes; t++)
            S->floor_ms += c->times[t];
        S->floor_ms += c->warmed * c->stat;
    }
    if (rc) S->full_floor_ms = xmt_race_full_floor(rc, S->n + 1, S->warmup, S->iterations);
}

/* Decide: the fastest valid candidate by the statistic (a pin: the first valid one).
 * Candidates within the tie limit of the best tie (race.h: the band of noise, at least
 * the practical margin), and the first of them in the session's order wins (the
 * program's own config, then the policy's order), so that processes measuring the same
 * GPU pick the same winner. */
static void decide(xmt_session *S)
{
    if (S->error != CUDA_SUCCESS || S->valid == 0 || S->untuned[0] || S->uninformative) return;
    xmt_cand *best = NULL;
    for (size_t i = 0; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        if (c->status != XMT_C_OK) continue;
        c->stat = S->verify_only ? 0 : statistic(c->times, c->ntimes, S->mean);
        if (S->verify_only && !best && i > 0) best = c;
    }
    if (!S->verify_only) {
        xmt_race_cand *rc = race_view(S);
        if (rc) {
            S->tie_band = xmt_race_band_of(rc, S->n + 1, S->mean);
            S->tie_limit = xmt_race_tie_limit(S->tie_band);
            long w = xmt_race_decide(rc, S->n + 1, S->mean, S->tie_limit);
            best = w >= 0 ? &S->cands[w] : NULL;
        }
        floors(S, rc);
        free(rc);
    }
    if (best) {
        S->choice.index = best->index;
        snprintf(S->choice.label, sizeof S->choice.label, "%s", best->c.label);
        S->choice.time_ms = best->stat;
    }
}

/* In the trial helper, after a decision for a winner: the regions (the helper's copy of
 * the program's memory) are given the own config's result, the reference, so that the
 * program can compare its own first run with it (trialtune.c): whether the helper saw
 * everything the kernel reads. Auto protection only (it keeps whole-region references). */
static void stage_reference(xmt_session *S)
{
    if (!S->trial || !S->automatic || S->error != CUDA_SUCCESS || S->untuned[0] ||
        S->choice.index == XMT_OWN_CONFIG || S->tolerance)
        return;
    for (size_t i = 0; i < S->nregs; i++)
        if (!S->regs[i].ref || xmt_drv.cuMemcpyDtoDAsync(S->regs[i].base, S->regs[i].ref,
                                                         S->regs[i].bytes, S->s) != CUDA_SUCCESS)
            return;
    S->reference_staged = xmt_drv.cuStreamSynchronize(S->s) == CUDA_SUCCESS;
}

/* Scratch memory and events are freed whatever happened; the capture mode put back. */
static void release(xmt_session *S)
{
    guard_release(S);
    /* the trial helper after a failure: it exits next, and a free could wait forever on a
     * run that never ends (cuMemFree synchronizes); its memory goes with it */
    if (S->trial && S->error != CUDA_SUCCESS) {
        S->regions_found = S->nregs;
        for (size_t i = 0; i < S->nregs; i++)
            S->region_bytes += S->regs[i].bytes;
        xmt_protect_free(S->regs, S->nregs);
        S->regs = NULL;
        S->nregs = 0;
        return;
    }
    for (size_t i = 0; i < S->nbufs; i++) {
        if (S->bufs[i].snap) xmt_drv.cuMemFree(S->bufs[i].snap);
        if (S->bufs[i].ref) xmt_drv.cuMemFree(S->bufs[i].ref);
        S->bufs[i].snap = S->bufs[i].ref = 0;
    }
    S->regions_found = S->nregs;
    S->verified_on_gpu = xmt_gc_on_gpu(&S->gc);
    for (size_t i = 0; i < S->nregs; i++) {
        S->region_bytes += S->regs[i].bytes;
        if (S->regs[i].snap) xmt_drv.cuMemFree(S->regs[i].snap);
        if (S->regs[i].ref) xmt_drv.cuMemFree(S->regs[i].ref);
    }
    xmt_protect_free(S->regs, S->nregs);
    S->regs = NULL;
    S->nregs = 0;
    xmt_gc_close(&S->gc);
    if (S->flush_buf) xmt_drv.cuMemFree(S->flush_buf);
    for (size_t i = 0; i <= S->n; i++) {
        xmt_cand *c = &S->cands[i];
        if (c->start) xmt_drv.cuEventDestroy(c->start);
        if (c->end) xmt_drv.cuEventDestroy(c->end);
        if (c->prep) xmt_drv.cuEventDestroy(c->prep);
        c->start = c->end = c->prep = NULL;
    }
    if (S->gate_ev) xmt_drv.cuEventDestroy(S->gate_ev);
    S->gate_ev = NULL;
    if (S->capture_swapped) xmt_drv.cuThreadExchangeStreamCaptureMode(&S->capture_mode);
}

/* The phases that touch the GPU, in order; -1 at the first failure. An untuned key
 * stops early with its data put back. */
static int benchmark(xmt_session *S)
{
    S->capture_mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (xmt_drv.cuThreadExchangeStreamCaptureMode &&
        xmt_drv.cuThreadExchangeStreamCaptureMode(&S->capture_mode) == CUDA_SUCCESS)
        S->capture_swapped = 1;
    int r = buffers(S);
    if (r < 0) return -1;
    if (r > 0) return put_back(S);
    if (S->any_verify) gc_ready(S);
    if ((r = guard_arm(S)) != 0) return r < 0 ? -1 : put_back(S);
    double t0 = xmt_now_ms();
    r = S->automatic ? outputs(S) : 0;
    S->ph.verify_own += xmt_now_ms() - t0;
    S->ph.verification += xmt_now_ms() - t0;
    if (r < 0) return -1;
    if (r > 0) return put_back(S);
    t0 = xmt_now_ms();
    double own0 = S->ph.verify_own; /* an in-place check the data check asked for */
    r = S->automatic ? data_check(S) : 0;
    S->ph.verify_data += xmt_now_ms() - t0 - (S->ph.verify_own - own0);
    S->ph.verification += xmt_now_ms() - t0;
    if (r != 0) return r < 0 ? -1 : put_back(S);
    if (S->uninformative) return put_back(S); /* the key waits for data that tells */
    if ((r = verify(S)) != 0) return r < 0 ? -1 : put_back(S);
    if (S->any_verify && data_digest(S) != 0) return -1;
    if (S->searched && !S->verify_only) {
        r = clock_warm_up(S) != 0 ? -1 : search_space(S);
        if (r != 0) return r < 0 ? -1 : put_back(S);
    }
    if (!S->searched && !S->verify_only && passing(S) > 0 &&
        (clock_warm_up(S) != 0 || warm_up(S) != 0 || timed_runs(S) != 0))
        return -1;
    return put_back(S);
}

/* protect: of the entry, else XMATUNE_PROTECT. */
int xmt_session_protects_auto(const xmt_entry *e)
{
    int p = xmt_entry_protect(e);
    return (p >= 0 ? p : xmt_opt.protect) == XMT_PROTECT_AUTO;
}

int xmt_session_tolerance(const xmt_entry *e, double *rtol, double *atol)
{
    return xmt_session_protects_auto(e) && xmt_entry_tolerance(e, rtol, atol) &&
           (*rtol > 0 || *atol > 0);
}

int xmt_session_run(xmt_session *S, xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                    const char *key_text, int device, int verify_only, const xmt_candidate *only,
                    long only_index)
{
    return xmt_session_run_trial(S, k, l, v, key_text, device, verify_only, only, only_index, NULL);
}

int xmt_session_run_trial(xmt_session *S, xmt_kernel *k, const xmt_launch *l,
                          const xmt_launch_view *v, const char *key_text, int device,
                          int verify_only, const xmt_candidate *only, long only_index,
                          const xmt_trial_in *in)
{
    memset(S, 0, sizeof *S);
    S->trial = in;
    S->k = k;
    S->l = l;
    S->v = v;
    S->key_text = key_text;
    S->device = device;
    S->verify_only = verify_only;
    S->only = only;
    S->only_index = only_index;
    S->s = xmt_launch_stream(l);
    S->t0 = xmt_now_ms();
    xmt_drvtime drv0; /* the helper's driver-call sums when the session began */
    S->has_drv = in && xmt_drvtime_read(&drv0) == 0;
    if (S->has_drv && in->drv0) drv0 = *in->drv0; /* the module load is the session's */
    S->ph.module_load = in ? in->module_ms : 0;
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
        /* valid == 0: nothing else to try, the program's own config stays (a searched
         * space's points are built as the search visits them) */
        if ((S->valid > 0 || S->searched) && benchmark(S) != 0) failed(S);
        decide(S);
        stage_reference(S);
        release(S);
    }
    /* the helper's code load before the session is part of it (module_load) */
    S->spent_ms = xmt_now_ms() - S->t0 + (in ? in->module_ms : 0);
    xmt_drvtime now;
    if (S->has_drv && xmt_drvtime_read(&now) == 0) xmt_drvtime_since(&drv0, &now, &S->drv);
    atomic_store(&last_session_end_us, (uint64_t)(xmt_now_ms() * 1000));
    return 0;
}

void xmt_session_free(xmt_session *S)
{
    free(S->cands);
    free(S->times);
    free(S->bufs);
    free(S->spans);
    free(S->segs);
    free(S->results);
    free(S->seg_kind);
    free(S->seg_buf);
    free(S->segbufs);
    free(S->ext_names);
    free(S->ext_scale);
    S->ext_scale = NULL;
    S->seg_kind = NULL;
    S->seg_buf = NULL;
    S->segbufs = NULL;
    S->ext_names = NULL;
    S->cands = NULL;
    S->times = NULL;
    S->bufs = NULL;
    S->spans = NULL;
    S->segs = NULL;
    S->results = NULL;
}
