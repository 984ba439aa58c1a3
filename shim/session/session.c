/*
 * session: one tuning session, phase by phase (see session.h): the phases in order
 * (benchmark), the decision, the put-back and release, and the whole run.
 */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "driver.h"
#include "log.h"
#include "session_base.h"
#include "session_cands.h"
#include "session_data.h"
#include "session_search.h"
#include "session_timing.h"
#include "session_verify.h"

/* After a failure: say so, and put the buffers back all the same. */
static void failed(xmt_session *S)
{
    char b[32];
    if (S->out.has_culprit) return; /* the helper's context is broken; the program retries */
    xmt_warn("%s: tuning stopped at %s (%s); the program's own config is used for key %s",
             S->req.k->demangled, S->out.error_at ? S->out.error_at : "?",
             xmt_cu_name(S->out.error, b, sizeof b), S->req.key_text);
    CUresult saved = S->out.error;
    const char *saved_at = S->out.error_at; /* the failure reported is the first, not put_back's */
    S->out.error = CUDA_SUCCESS;
    if (xmt_sess_put_back(S) != 0) /* auto protection's regions hold the declared buffers too */
        xmt_warn("%s: could not put back %s after a failure (%s)", S->req.k->demangled,
                 S->data.nregs ? "the memory its pointer arguments reach" : "the declared buffers",
                 S->out.error_at);
    S->out.error = saved;
    S->out.error_at = saved_at;
}

/* The floors: what the measurements cost on the GPU (timed runs, and warm-up runs at the
 * candidate's statistic), and what timing every candidate in full would have. */
static void floors(xmt_session *S, const xmt_race_cand *rc)
{
    for (size_t i = 0; i <= S->cand.n; i++) {
        const xmt_cand *c = &S->cand.cands[i];
        if (c->status != XMT_C_OK || c->ntimes == 0) continue;
        for (int t = 0; t < c->ntimes; t++)
            S->out.floor_ms += c->times[t];
        S->out.floor_ms += c->warmed * c->stat;
    }
    if (rc)
        S->out.full_floor_ms =
            xmt_race_full_floor(rc, S->cand.n + 1, S->set.warmup, S->set.iterations);
}

/* Decide: the fastest valid candidate by the statistic (a pin: the first valid one).
 * Candidates within the tie limit of the best tie (race.h: the band of noise, at least
 * the practical margin), and the first of them in the session's order wins (the
 * program's own config, then the policy's order), so that processes measuring the same
 * GPU pick the same winner. */
static void decide(xmt_session *S)
{
    XMT_ASSERT(S->out.choice.index == XMT_OWN_CONFIG && S->cand.valid <= S->cand.n, "re-decided");
    if (S->out.error != CUDA_SUCCESS || S->cand.valid == 0 || S->out.untuned[0] ||
        S->out.uninformative)
        return;
    xmt_cand *best = NULL;
    for (size_t i = 0; i <= S->cand.n; i++) {
        xmt_cand *c = &S->cand.cands[i];
        if (c->status != XMT_C_OK) continue;
        c->stat = S->req.verify_only ? 0 : xmt_sess_stat(c->times, c->ntimes, S->set.mean);
        if (S->req.verify_only && !best && i > 0) best = c;
    }
    if (!S->req.verify_only) {
        xmt_race_cand *rc = xmt_sess_race_view(S);
        if (rc) {
            S->out.tie_band = xmt_race_band_of(rc, S->cand.n + 1, S->set.mean);
            S->out.tie_limit = xmt_race_tie_limit(S->out.tie_band);
            long w = xmt_race_decide(rc, S->cand.n + 1, S->set.mean, S->out.tie_limit);
            best = w >= 0 ? &S->cand.cands[w] : NULL;
        }
        floors(S, rc);
        free(rc);
    }
    if (best) {
        S->out.choice.index = best->index;
        snprintf(S->out.choice.label, sizeof S->out.choice.label, "%s", best->c.label);
        S->out.choice.time_ms = best->stat;
    }
}

/* In the trial helper, after a decision for a winner: the regions (the helper's copy of
 * the program's memory) are given the own config's result, the reference, so that the
 * program can compare its own first run with it (trialtune.c): whether the helper saw
 * everything the kernel reads. Auto protection only (it keeps whole-region references). */
static void stage_reference(xmt_session *S)
{
    if (!S->run.trial || !S->set.automatic || S->out.error != CUDA_SUCCESS || S->out.untuned[0] ||
        S->out.choice.index == XMT_OWN_CONFIG || S->data.tolerance)
        return;
    for (size_t i = 0; i < S->data.nregs; i++)
        if (!S->data.regs[i].ref ||
            xmt_drv.cuMemcpyDtoDAsync(S->data.regs[i].base, S->data.regs[i].ref,
                                      S->data.regs[i].bytes, S->run.s) != CUDA_SUCCESS)
            return;
    S->out.reference_staged = xmt_drv.cuStreamSynchronize(S->run.s) == CUDA_SUCCESS;
}

/* Scratch memory and events are freed whatever happened; the capture mode put back. */
static void release(xmt_session *S)
{
    XMT_ASSERT(S->cand.cands && S->data.bufs, "release: no candidates phase");
    xmt_sess_guard_release(S);
    /* the trial helper after a failure: it exits next, and a free could wait forever on a
     * run that never ends (cuMemFree synchronizes); its memory goes with it */
    if (S->run.trial && S->out.error != CUDA_SUCCESS) {
        S->out.regions_found = S->data.nregs;
        for (size_t i = 0; i < S->data.nregs; i++)
            S->out.region_bytes += S->data.regs[i].bytes;
        xmt_protect_free(S->data.regs, S->data.nregs);
        S->data.regs = NULL;
        S->data.nregs = 0;
        return;
    }
    for (size_t i = 0; i < S->data.nbufs; i++) {
        if (S->data.bufs[i].snap) xmt_drv.cuMemFree(S->data.bufs[i].snap);
        if (S->data.bufs[i].ref) xmt_drv.cuMemFree(S->data.bufs[i].ref);
        S->data.bufs[i].snap = S->data.bufs[i].ref = 0;
    }
    S->out.regions_found = S->data.nregs;
    S->out.verified_on_gpu = xmt_gc_on_gpu(&S->check.gc);
    for (size_t i = 0; i < S->data.nregs; i++) {
        S->out.region_bytes += S->data.regs[i].bytes;
        if (S->data.regs[i].snap) xmt_drv.cuMemFree(S->data.regs[i].snap);
        if (S->data.regs[i].ref) xmt_drv.cuMemFree(S->data.regs[i].ref);
    }
    xmt_protect_free(S->data.regs, S->data.nregs);
    S->data.regs = NULL;
    S->data.nregs = 0;
    xmt_gc_close(&S->check.gc);
    if (S->data.flush_buf) xmt_drv.cuMemFree(S->data.flush_buf);
    for (size_t i = 0; i <= S->cand.n; i++) {
        xmt_cand *c = &S->cand.cands[i];
        if (c->start) xmt_drv.cuEventDestroy(c->start);
        if (c->end) xmt_drv.cuEventDestroy(c->end);
        if (c->prep) xmt_drv.cuEventDestroy(c->prep);
        c->start = c->end = c->prep = NULL;
    }
    if (S->timing.gate_ev) xmt_drv.cuEventDestroy(S->timing.gate_ev);
    S->timing.gate_ev = NULL;
    if (S->run.capture_swapped) xmt_drv.cuThreadExchangeStreamCaptureMode(&S->run.capture_mode);
}

/* The phases that touch the GPU, in order; -1 at the first failure. An untuned key
 * stops early with its data put back. */
static int benchmark(xmt_session *S)
{
    XMT_ASSERT(S->cand.cands && !S->run.capture_swapped && !S->out.error, "benchmark run twice");
    S->run.capture_mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (xmt_drv.cuThreadExchangeStreamCaptureMode &&
        xmt_drv.cuThreadExchangeStreamCaptureMode(&S->run.capture_mode) == CUDA_SUCCESS)
        S->run.capture_swapped = 1;
    int r = xmt_sess_buffers(S);
    if (r < 0) return -1;
    if (r > 0) return xmt_sess_put_back(S);
    if (S->data.any_verify) xmt_sess_gc_ready(S);
    if ((r = xmt_sess_guard_arm(S)) != 0) return r < 0 ? -1 : xmt_sess_put_back(S);
    double t0 = xmt_now_ms();
    r = S->set.automatic ? xmt_sess_outputs(S) : 0;
    S->out.ph.verify_own += xmt_now_ms() - t0;
    S->out.ph.verification += xmt_now_ms() - t0;
    if (r < 0) return -1;
    if (r > 0) return xmt_sess_put_back(S);
    t0 = xmt_now_ms();
    double own0 = S->out.ph.verify_own; /* an in-place check the data check asked for */
    r = S->set.automatic ? xmt_sess_data_check(S) : 0;
    S->out.ph.verify_data += xmt_now_ms() - t0 - (S->out.ph.verify_own - own0);
    S->out.ph.verification += xmt_now_ms() - t0;
    if (r != 0) return r < 0 ? -1 : xmt_sess_put_back(S);
    if (S->out.uninformative) return xmt_sess_put_back(S); /* the key waits for data that tells */
    if ((r = xmt_sess_verify(S)) != 0) return r < 0 ? -1 : xmt_sess_put_back(S);
    if (S->data.any_verify && xmt_sess_data_digest(S) != 0) return -1;
    if (S->cand.searched && !S->req.verify_only) {
        r = xmt_sess_clock_warm_up(S) != 0 ? -1 : xmt_sess_search_space(S);
        if (r != 0) return r < 0 ? -1 : xmt_sess_put_back(S);
    }
    if (!S->cand.searched && !S->req.verify_only && xmt_sess_passing(S) > 0 &&
        (xmt_sess_clock_warm_up(S) != 0 || xmt_sess_warm_up(S) != 0 || xmt_sess_timed_runs(S) != 0))
        return -1;
    return xmt_sess_put_back(S);
}

int xmt_session_run(xmt_session *S, const xmt_session_req *rq)
{
    return xmt_session_run_trial(S, rq, NULL);
}

int xmt_session_run_trial(xmt_session *S, const xmt_session_req *rq, const xmt_trial_in *in)
{
    memset(S, 0, sizeof *S);
    S->run.trial = in;
    S->req = *rq;
    xmt_kernel *k = rq->k;
    const xmt_launch *l = rq->l;
    S->run.s = xmt_launch_stream(l);
    S->run.t0 = xmt_now_ms();
    xmt_drvtime drv0; /* the helper's driver-call sums when the session began */
    S->out.has_drv = in && xmt_drvtime_read(&drv0) == 0;
    if (S->out.has_drv && in->drv0) drv0 = *in->drv0; /* the module load is the session's */
    S->out.ph.module_load = in ? in->module_ms : 0;
    S->out.choice.index = XMT_OWN_CONFIG;
    xmt_sess_own_label(l, S->out.choice.label, sizeof S->out.choice.label);
    xmt_settings_resolve(k->entry, rq->verify_only, &S->set);
    if (xmt_sess_candidates(S) != 0) {
        xmt_session_free(S);
        xmt_warn("%s: out of memory while tuning; the program's own config is used", k->demangled);
        return -1;
    }
    XMT_IN_SHIM_SCOPE
    {
        /* valid == 0: nothing else to try, the program's own config stays (a searched
         * space's points are built as the search visits them) */
        if ((S->cand.valid > 0 || S->cand.searched) && benchmark(S) != 0) failed(S);
        decide(S);
        stage_reference(S);
        release(S);
    }
    /* the helper's code load before the session is part of it (module_load) */
    S->out.spent_ms = xmt_now_ms() - S->run.t0 + (in ? in->module_ms : 0);
    xmt_drvtime now;
    if (S->out.has_drv && xmt_drvtime_read(&now) == 0) xmt_drvtime_since(&drv0, &now, &S->out.drv);
    xmt_sess_timing_ended();
    return 0;
}

void xmt_session_free(xmt_session *S)
{
    free(S->cand.cands);
    free(S->cand.times);
    free(S->data.bufs);
    free(S->data.spans);
    free(S->data.segs);
    free(S->data.results);
    free(S->data.seg_kind);
    free(S->data.seg_buf);
    free(S->data.segbufs);
    free(S->data.ext_names);
    free(S->data.ext_scale);
    S->data.ext_scale = NULL;
    S->data.seg_kind = NULL;
    S->data.seg_buf = NULL;
    S->data.segbufs = NULL;
    S->data.ext_names = NULL;
    S->cand.cands = NULL;
    S->cand.times = NULL;
    S->data.bufs = NULL;
    S->data.spans = NULL;
    S->data.segs = NULL;
    S->data.results = NULL;
}
