/*
 * session_timing: see session_timing.h.
 */
#include "session_timing.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "clock.h"
#include "driver.h"
#include "session_base.h"

static _Atomic uint64_t last_session_end_us; /* CLOCK_MONOTONIC, any thread's session */

void xmt_sess_timing_ended(void)
{
    atomic_store(&last_session_end_us, (uint64_t)(xmt_now_ms() * 1000));
}

/* Whether the clock warm-up runs, in S->timing.warmup_fate, with the time since another tuning
 * ended (S->timing.since_last_ms, -1 when none has in this process): the tune event reports both,
 * so that the rule's choice can be read rather than assumed. 1 when it runs. */
static int clock_warm_up_needed(xmt_session *S, double w0)
{
    uint64_t last = atomic_load(&last_session_end_us);
    /* another thread's tuning may have ended after w0: the clock is up all the same */
    S->timing.since_last_ms = last ? fmax(0.0, w0 - (double)last / 1000.0) : -1;
    if (S->set.warmup_ms <= 0)
        S->timing.warmup_fate = XMT_WARMUP_OFF;
    else if (last && S->timing.since_last_ms < XMT_CLOCK_STILL_UP_MS)
        S->timing.warmup_fate = XMT_WARMUP_STILL_UP;
    else
        S->timing.warmup_fate = XMT_WARMUP_RAN;
    return S->timing.warmup_fate == XMT_WARMUP_RAN;
}

int xmt_sess_clock_warm_up(xmt_session *S)
{
    XMT_ASSERT(!S->req.verify_only && S->cand.cands, "clock warm-up: nothing to time");
    double w0 = xmt_now_ms();
    if (S->timing.warmup_fate != XMT_WARMUP_NOT_REACHED) return 0; /* done during verification */
    if (!clock_warm_up_needed(S, w0)) return 0;
    if (xmt_sess_over_budget(S, "clock_warmup")) {
        S->timing.warmup_fate = XMT_WARMUP_BUDGET;
        return 0;
    }
    for (int i = 0; i < 100000; i++) {
        if (xmt_sess_prepare(S, 0, 0) != 0 || xmt_sess_run_candidate(S, &S->cand.cands[0]) != 0)
            return -1;
        if (i % 4 == 3) {
            XMT_TRY(S, xmt_drv.cuStreamSynchronize(S->run.s), "synchronize");
            if (xmt_now_ms() - w0 >= S->set.warmup_ms || xmt_sess_over_budget(S, "clock_warmup"))
                break;
        }
    }
    S->out.ph.clock_warmup += xmt_now_ms() - w0;
    return 0;
fail:
    return -1;
}

int xmt_sess_warm_runs(const xmt_session *S, const xmt_cand *c)
{
    if (S->set.racing && c->index == XMT_OWN_CONFIG && S->timing.warmup_fate == XMT_WARMUP_RAN)
        return 0;
    return S->set.racing && S->timing.warmup_fate != XMT_WARMUP_OFF && S->set.warmup > 1
               ? 1
               : S->set.warmup;
}

int xmt_sess_warm_one(xmt_session *S, xmt_cand *c, int runs)
{
    for (int w = 0; w < runs && c->status == XMT_C_OK; w++) {
        if (xmt_sess_prepare(S, 0, 0) != 0 || xmt_sess_run_candidate(S, c) < 0) return -1;
        c->warmed++;
    }
    return c->warmed ? xmt_sess_wait_runs(S, NULL, c->warmed, c) : 0;
}

int xmt_sess_warm_up(xmt_session *S)
{
    XMT_ASSERT(!S->req.verify_only && !S->cand.searched, "warm-up runs: not timed in full");
    double t0 = xmt_now_ms();
    for (size_t i = 0; i <= S->cand.n; i++) {
        xmt_cand *c = &S->cand.cands[i];
        int runs = xmt_sess_warm_runs(S, c);
        if (runs && c->status == XMT_C_OK && xmt_sess_over_budget(S, "warmup_runs")) break;
        if (xmt_sess_warm_one(S, c, runs) != 0) return -1;
    }
    S->out.ph.warmup_runs += xmt_now_ms() - t0;
    return 0;
}

int xmt_sess_has_prep(const xmt_session *S)
{
    for (size_t i = 0; i < S->data.nbufs; i++)
        if (S->data.bufs[i].b.roles & (XMT_BUF_RESTORE | XMT_BUF_RESET)) return 1;
    if (S->data.nspans && xmt_sess_program_data(S)) return 1; /* its outputs restored */
    return S->set.flush && S->data.flush_buf;
}

/* Whether c runs in a timed round: valid, not eliminated, with room for a run; with
 * `only`, a finalist. */
static int in_round(const xmt_session *S, const xmt_cand *c, const unsigned char *only)
{
    if (c->status != XMT_C_OK || c->ntimes >= S->set.cap) return 0;
    return only ? only[c - S->cand.cands] : !c->elim_round;
}

/* Whether c's timed run follows an untimed run of c itself (its self lead-in): when its
 * runs so far took less than self_lead_ms. A short kernel's time depends on what ran just
 * before it (the L2 holds what that run left, in the order it left it): a program's loop
 * runs the same config again, a timed round another config; on the H200 that reversed the
 * order of an in-place update's configs of 9 us (docs/benchmarks.md). Not in a round
 * before c has a time: that round's first candidate has its lead-in all the same. */
static int self_lead(const xmt_session *S, const xmt_cand *c)
{
    return S->set.self_lead_ms > 0 && c->ntimes > 0 &&
           xmt_sess_stat(c->times, c->ntimes, S->set.mean) < S->set.self_lead_ms;
}

/* The longest gate: a round that takes longer than this to queue is not short. */
#define GATE_MAX_MS 5.0

/* Whether a timed round is gated: one of its candidates has no timed run yet, or its runs
 * so far took less than gate_ms (median), and the gate kernel can run. */
static int gated(xmt_session *S, const unsigned char *only)
{
    int short_one = 0;
    if (S->set.gate_ms <= 0) return 0;
    for (size_t j = 0; j <= S->cand.n && !short_one; j++) {
        const xmt_cand *c = &S->cand.cands[j];
        short_one =
            in_round(S, c, only) &&
            (c->ntimes == 0 || xmt_sess_stat(c->times, c->ntimes, S->set.mean) < S->set.gate_ms);
    }
    if (!short_one) return 0;
    xmt_sess_gc_ready(S); /* a key without verification: the module is loaded for the gate */
    if (!S->timing.gate_ev &&
        xmt_drv.cuEventCreate(&S->timing.gate_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        S->timing.gate_ev = NULL;
    return S->timing.gate_ev && xmt_drv.cuEventQuery && xmt_gc_on_gpu(&S->check.gc);
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
    if (S->timing.gate_next_ms <= 0) S->timing.gate_next_ms = 0.02 + 0.01 * (double)runs;
    if (S->timing.gate_next_ms > GATE_MAX_MS) S->timing.gate_next_ms = GATE_MAX_MS;
    XMT_TRY(S, xmt_gc_spin(&S->check.gc, (uint64_t)(S->timing.gate_next_ms * 1e6)), "gate");
    XMT_TRY(S, xmt_drv.cuEventRecord(S->timing.gate_ev, S->run.s), "event record");
    return 0;
fail:
    return -1;
}

/* Once the round is queued (q_ms after its gate): whether the gate held it, and the next
 * gate's length. */
static void gate_end(xmt_session *S, double q_ms)
{
    int ended =
        xmt_drv.cuEventQuery(S->timing.gate_ev) == CUDA_SUCCESS; /* faults: wait_runs says */
    double next = 1.5 * q_ms + 0.01;
    S->timing.gated_rounds++;
    S->timing.gates_short += ended;
    if (ended && next < 2 * S->timing.gate_next_ms) next = 2 * S->timing.gate_next_ms;
    S->timing.gate_next_ms = next < GATE_MAX_MS ? next : GATE_MAX_MS;
}

/* run_candidate for a run of c queued behind `behind` other timed runs of the round. */
static int run_queued(xmt_session *S, xmt_cand *c, int behind)
{
    S->run.queued = behind;
    int r = xmt_sess_run_candidate(S, c);
    S->run.queued = 0;
    return r;
}

int xmt_sess_timed_round(xmt_session *S, int it, int prep, const unsigned char *only)
{
    CUevent last = NULL;
    int runs = 0, lead_in = 0;
    size_t m = 0, *order = malloc(2 * (S->cand.n + 1) * sizeof *order),
           *seq = order + S->cand.n + 1;
    if (!order) return -1;
    /* who runs, starting at the it-th of them: each is first as often as another (rotated
     * over all candidates, two finalists of three put the same one first in 2 rounds of 3) */
    for (size_t j = 0; j <= S->cand.n; j++) {
        S->cand.cands[j].in_round = 0;
        if (in_round(S, &S->cand.cands[j], only)) order[m++] = j;
    }
    for (size_t j = 0; j < m; j++)
        seq[j] = order[(j + (size_t)it) % m];
    /* the first runs twice (its lead-in): not the program's own config while another runs,
     * as it is often the slowest by far (saxpy's: 30 times the best) */
    if (m > 1 && S->cand.cands[seq[0]].index == XMT_OWN_CONFIG) {
        size_t t = seq[0];
        seq[0] = seq[1];
        seq[1] = t;
    }
    int gate = m > 0 && gated(S, only);
    double q0 = xmt_now_ms();
    if (gate && gate_begin(S, 2 * m) != 0) goto fail;
    for (size_t j = 0; j < m; j++) {
        xmt_cand *c = &S->cand.cands[seq[j]];
        /* a lead-in run, untimed, so that the first timed run does not start on a GPU that
         * sat idle while the last round was waited for: on the H200 the first run of a
         * round was ~3% slower, enough to split a tied pair between processes */
        int first = !lead_in;
        if (first || self_lead(S, c)) {
            if (xmt_sess_prepare(S, 0, S->set.flush) != 0) goto fail;
            int r = run_queued(S, c, runs);
            if (r < 0) goto fail;
            if (r > 0) continue;
            lead_in++;
            S->timing.self_leads += !first;
        }
        if (prep) XMT_TRY(S, xmt_drv.cuEventRecord(c->prep, S->run.s), "event record");
        if (xmt_sess_prepare(S, 0, S->set.flush) != 0) goto fail;
        XMT_TRY(S, xmt_drv.cuEventRecord(c->start, S->run.s), "event record");
        int r = run_queued(S, c, runs); /* c's lead-in, when it has one, is its own */
        if (r < 0) goto fail;
        if (r > 0) continue;
        XMT_TRY(S, xmt_drv.cuEventRecord(c->end, S->run.s), "event record");
        last = c->end;
        c->in_round = ++runs; /* its place in the launch order: the watchdog's culprit */
    }
    free(order);
    order = NULL;
    if (gate) gate_end(S, xmt_now_ms() - q0);
    if (last && xmt_sess_wait_runs(S, last, runs + lead_in, NULL) != 0) return -1;
    for (size_t j = 0; j <= S->cand.n; j++) {
        xmt_cand *c = &S->cand.cands[j];
        if (c->status != XMT_C_OK || !c->in_round) continue;
        float ms = 0, pm = 0;
        XMT_TRY(S, xmt_drv.cuEventElapsedTime(&ms, c->start, c->end), "event elapsed");
        if (prep) XMT_TRY(S, xmt_drv.cuEventElapsedTime(&pm, c->prep, c->start), "event elapsed");
        c->times[c->ntimes++] = ms;
        S->out.ph.restores += pm;
    }
    return 0;
fail:
    free(order);
    return -1;
}

size_t xmt_sess_eliminate(xmt_session *S, int round)
{
    xmt_race_cand *rc = xmt_sess_race_view(S);
    unsigned char *out = malloc(S->cand.n + 1);
    size_t alive = 0;
    if (rc && out && xmt_race_eliminate(rc, S->cand.n + 1, out, &S->timing.race_margin) > 0)
        for (size_t i = 0; i <= S->cand.n; i++)
            if (out[i]) {
                S->cand.cands[i].elim_round = round;
                S->timing.eliminated++;
                /* lost to a candidate still timed: the next run need not time it again */
                if (xmt_session_decided && S->cand.cands[i].index != XMT_OWN_CONFIG)
                    xmt_session_decided(S->cand.cands[i].index);
            }
    for (size_t i = 0; i <= S->cand.n; i++)
        alive += S->cand.cands[i].status == XMT_C_OK && !S->cand.cands[i].elim_round;
    free(rc);
    free(out);
    return rc && out ? alive : S->cand.n + 1;
}

int xmt_sess_retime(xmt_session *S, int prep)
{
    xmt_race_cand *rc = xmt_sess_race_view(S);
    unsigned char *fin = malloc(S->cand.n + 1);
    int r = 0;
    if (rc && fin) {
        double lim = xmt_race_tie_limit(xmt_race_band_of(rc, S->cand.n + 1, S->set.mean));
        S->timing.finalists = xmt_race_finalists(rc, S->cand.n + 1, S->set.mean, lim, fin);
    }
    int rounds = (S->set.iterations + 1) / 2 > 3 ? (S->set.iterations + 1) / 2 : 3;
    for (int it = 0; rc && fin && S->timing.finalists > 1 && it < rounds && r == 0; it++) {
        if (xmt_sess_over_budget(S, "retiming")) break;
        xmt_sess_progress(S, "re-timing finalists", (size_t)it, (size_t)rounds);
        r = xmt_sess_timed_round(S, it, prep, fin);
        S->timing.retime_rounds += r == 0;
    }
    /* The edge: while a candidate whose side of the tie limit decides the winner measures
     * within 2 standard errors of it, it and the best are timed again, a round at a time
     * (race.h, xmt_race_edge), for at most a share of the full floor in their timed runs'
     * own time (the floor's measure; the rounds' waits are bounded by their count). The
     * spread between processes was that of each one's medians, so that more runs narrow it
     * where it matters and nowhere else. */
    int *had = malloc((S->cand.n + 1) * sizeof *had);
    double spent = 0, allow = -1;
    for (int it = 0; rc && fin && had && S->timing.finalists > 1 && r == 0; it++) {
        free(rc);
        if (!(rc = xmt_sess_race_view(S))) break;
        if (allow < 0)
            allow = XMT_EDGE_SHARE *
                    xmt_race_full_floor(rc, S->cand.n + 1, S->set.warmup, S->set.iterations);
        double lim = xmt_race_tie_limit(xmt_race_band_of(rc, S->cand.n + 1, S->set.mean));
        S->timing.edge_left = xmt_race_edge(rc, S->cand.n + 1, S->set.mean, lim, fin);
        if (!S->timing.edge_left || it >= XMT_EDGE_ROUNDS || spent > allow ||
            xmt_sess_over_budget(S, "retiming"))
            break;
        xmt_sess_progress(S, "re-timing the edge", (size_t)it, XMT_EDGE_ROUNDS);
        for (size_t i = 0; i <= S->cand.n; i++)
            had[i] = S->cand.cands[i].ntimes;
        r = xmt_sess_timed_round(S, it, prep, fin);
        S->timing.edge_rounds += r == 0;
        for (size_t i = 0; r == 0 && i <= S->cand.n; i++)
            if (S->cand.cands[i].ntimes > had[i])
                spent += S->cand.cands[i].times[S->cand.cands[i].ntimes - 1];
    }
    free(had);
    free(rc);
    free(fin);
    return r;
}

int xmt_sess_make_events(xmt_session *S, xmt_cand *c, int prep)
{
    if (!c->start) XMT_TRY(S, xmt_drv.cuEventCreate(&c->start, CU_EVENT_DEFAULT), "event create");
    if (!c->end) XMT_TRY(S, xmt_drv.cuEventCreate(&c->end, CU_EVENT_DEFAULT), "event create");
    if (prep && !c->prep)
        XMT_TRY(S, xmt_drv.cuEventCreate(&c->prep, CU_EVENT_DEFAULT), "event create");
    return 0;
fail:
    return -1;
}

int xmt_sess_timed_runs(xmt_session *S)
{
    XMT_ASSERT(!S->req.verify_only && S->set.iterations <= S->set.cap, "timed runs: no room");
    double t0 = xmt_now_ms();
    int prep = xmt_sess_has_prep(S);
    for (size_t i = 0; i <= S->cand.n; i++)
        if (S->cand.cands[i].status == XMT_C_OK &&
            xmt_sess_make_events(S, &S->cand.cands[i], prep) != 0)
            return -1;
    for (int it = 0; it < S->set.iterations; it++) {
        if (it > 0 && xmt_sess_over_budget(S, "timed_runs")) break;
        xmt_sess_progress(S, "timed round", (size_t)it, (size_t)S->set.iterations);
        if (xmt_sess_timed_round(S, it, prep, NULL) != 0) return -1;
        if (S->set.racing && xmt_sess_eliminate(S, it + 1) <= 1) break;
    }
    if (S->set.racing && xmt_sess_retime(S, prep) != 0) return -1;
    S->out.ph.timed_runs += xmt_now_ms() - t0 - S->out.ph.restores;
    return 0;
}
