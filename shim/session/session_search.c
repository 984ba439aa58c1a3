/*
 * session_search: see session_search.h.
 */
#include "session_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "session_base.h"
#include "session_cands.h"
#include "session_timing.h"
#include "session_verify.h"

#define SEARCH_BATCH 16 /* points asked of the search at a time */

/* The candidates marked in `in`, in timed rounds as timed_runs times the whole list:
 * interleaved, raced against every candidate timed so far (earlier batches' included), until
 * none of them is left or the rounds are done. */
static int time_batch(xmt_session *S, const unsigned char *in, int prep)
{
    unsigned char *only = malloc(S->cand.n + 1);
    if (!only) return -1;
    int r = 0;
    for (int it = 0; it < S->set.iterations && r == 0; it++) {
        size_t left = 0;
        for (size_t i = 0; i <= S->cand.n; i++) {
            const xmt_cand *c = &S->cand.cands[i];
            only[i] = in[i] && c->status == XMT_C_OK && !c->elim_round;
            left += only[i];
        }
        if (!left || (it > 0 && xmt_sess_over_budget(S, "timed_runs"))) break;
        xmt_sess_progress(S, "search: timed round", (size_t)it, (size_t)S->set.iterations);
        r = xmt_sess_timed_round(S, it, prep, only);
        if (r == 0 && S->set.racing) xmt_sess_eliminate(S, it + 1);
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
        xmt_sess_progress(S, "search: verify", S->search.visited - npts + j,
                          S->search.search_evals);
        v = xmt_sess_verify_one(S, &S->cand.cands[1 + S->cand.space_first + pts[j]]);
    }
    S->out.ph.verification += xmt_now_ms() - t0;
    if (v != 0) return v;
    t0 = xmt_now_ms();
    for (size_t i = 0; i <= S->cand.n; i++) {
        xmt_cand *c = &S->cand.cands[i];
        if (!in[i] || c->status != XMT_C_OK) continue;
        if (xmt_sess_make_events(S, c, prep) != 0) return -1;
        if (!c->warmed && !xmt_sess_over_budget(S, "warmup_runs") &&
            xmt_sess_warm_one(S, c, xmt_sess_warm_runs(S, c)) != 0)
            return -1;
    }
    S->out.ph.warmup_runs += xmt_now_ms() - t0;
    t0 = xmt_now_ms();
    int r = time_batch(S, in, prep);
    S->out.ph.timed_runs += xmt_now_ms() - t0;
    return r;
}

int xmt_sess_search_space(xmt_session *S)
{
    XMT_ASSERT(S->cand.searched && S->cand.space_first <= S->cand.n, "search: not searched");
    const xmt_entry *e = S->req.k->entry;
    unsigned dims[XMT_MAX_TUNABLES];
    unsigned nd = xmt_entry_space_dims(e, dims, XMT_MAX_TUNABLES);
    size_t start = xmt_entry_space_nearest(e, S->req.v), pts[SEARCH_BATCH];
    S->search.search_start = start == SIZE_MAX ? 0 : start;
    S->search.search_evals = xmt_entry_search_evals(e);
    xmt_search *q =
        xmt_search_new(dims, nd, XMT_SEARCH_SEED, S->search.search_start, S->search.search_evals);
    unsigned char *in = calloc(S->cand.n + 1, 1);
    int prep = xmt_sess_has_prep(S), r = q && in ? 0 : -1;
    for (size_t i = 0; r == 0 && i <= S->cand.space_first && i <= S->cand.n; i++)
        in[i] = 1; /* the first batch: the program's own and the configs: items too */
    while (r == 0 && !xmt_search_done(q) && !S->run.cut) {
        size_t np = xmt_search_next(q, pts, SEARCH_BATCH);
        if (np == 0) break;
        for (size_t j = 0; j < np; j++) {
            xmt_cand *c = &S->cand.cands[1 + S->cand.space_first + pts[j]];
            xmt_sess_admit(S, c, S->cand.space_first + pts[j]);
            in[c - S->cand.cands] = 1;
            S->search.visited++;
        }
        if ((r = run_batch(S, in, pts, np, prep)) != 0) break;
        for (size_t j = 0; j < np; j++) {
            const xmt_cand *c = &S->cand.cands[1 + S->cand.space_first + pts[j]];
            int timed = c->status == XMT_C_OK && c->ntimes > 0;
            xmt_search_report(q, pts[j],
                              timed ? xmt_sess_stat(c->times, c->ntimes, S->set.mean) : INFINITY);
        }
        memset(in, 0, S->cand.n + 1);
    }
    if (q) S->search.search_restarts = (int)xmt_search_restarts(q);
    xmt_search_free(q);
    free(in);
    if (r == 0 && S->set.racing) {
        double t1 = xmt_now_ms();
        r = xmt_sess_retime(S, prep);
        S->out.ph.timed_runs += xmt_now_ms() - t1;
    }
    S->out.ph.timed_runs -= S->out.ph.restores;
    return r;
}
