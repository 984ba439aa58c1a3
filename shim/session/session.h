/*
 * session: one tuning session — the benchmark of every candidate configuration of one
 * (device, kernel, key), with the data protected.
 *
 * The phases, each in a file of its own: settings (iterations, statistic, budget,
 * protection: settings.c, resolved once), candidates (the program's own first, the policy's after
 * it, invalid ones skipped with a reason: session_cands.c), buffers (evaluate every declared
 * buffer; under `protect: auto` also the regions the pointer arguments reach, protect.c; check the
 * scratch they need; snapshot them before anything runs), outputs (auto: the program's own config
 * run on the snapshot tells which chunks it writes, whether from scratch or in place, and whether
 * it is deterministic; outputs.c; these three are session_data.c), verify (each candidate once
 * against the program's own on the same inputs, compared on the GPU, gpucheck.c; session_verify.c),
 * clock warm-up (by time), warm-up runs, timed runs (round-robin, rotating start; session_timing.c,
 * or session_search.c for a searched space), put-back, decide (session.c, which runs them in
 * order). What every phase stands on (a run, its wait under the watchdog, the comparisons) is
 * session_base.c; the session's types are session_types.h. Any driver failure ends the session: the
 * data is put back and the program's own config is the choice. A key that cannot be tuned safely
 * (memory auto cannot protect, a nondeterministic kernel, too little scratch) keeps the program's
 * own config with the reason in `untuned`. Each phase's time is kept for the tune event
 * (tune_event.c), which reads the session until xmt_session_free.
 */
#ifndef XMT_SESSION_H
#define XMT_SESSION_H

#include "session_types.h"

/* Runs a whole session of rq and fills S->out.choice (the program's own config on any
 * failure). Returns -1 only when the session could not start (out of memory, said once). */
int xmt_session_run(xmt_session *S, const xmt_session_req *rq);

/* The same in the trial helper: the regions come from `in`, a watchdog that fires ends
 * the session at once naming its culprit (the helper exits after it: the run cannot be
 * stopped), and so does a fault. */
int xmt_session_run_trial(xmt_session *S, const xmt_session_req *rq, const xmt_trial_in *in);

/* Frees what the session kept for the report. */
void xmt_session_free(xmt_session *S);

#endif
