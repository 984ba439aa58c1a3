/*
 * session_base: what every phase of a tuning session stands on -- a run of one candidate
 * (run_candidate), the state every run starts from (prepare: restores, resets, poison, the
 * L2 flush) and the put-back, the comparisons with the reference, waiting for runs under
 * the watchdog (and, in the trial helper, the deadline that names a hung culprit), the
 * progress lines, the budget, the session's first failure, and scratch memory within
 * XMATUNE_SCRATCH_MB. The phases themselves are session_cands.c (candidates),
 * session_data.c (buffers, outputs, the data check), session_verify.c (verification and
 * the guard bytes), session_timing.c (clock warm-up, warm-up runs, timed rounds, racing),
 * session_search.c (searched spaces) and session.c (the decision and the whole run).
 */
#ifndef XMT_SESSION_BASE_H
#define XMT_SESSION_BASE_H

#include "race.h"
#include "session_types.h"

/* A verify run's third poison (xmt_sess_prepare): the complement of the reference
 * (gpucheck's xmt_not), where the comparison kernels run on the GPU: a candidate's one
 * verify run then tells every byte it leaves unwritten, since no byte equals its
 * complement. Poisons 1 and 2 are byte patterns (session_base.c). */
#define XMT_POISON_COMPLEMENT 3

/* A driver call of a phase: a failure is remembered and the phase ends (fail:). */
#define XMT_TRY(sess, call, what)                                                                  \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            xmt_sess_error((sess), r_, (what));                                                    \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* The statistic of n times (the mean, else the median): race.c's, so that the decision
 * and the racing read the same number. */
double xmt_sess_stat(const double *t, int n, int mean);

/* The candidates' timings as race.c sees them: alive, those still raced (valid, not
 * eliminated); a candidate that is not valid counts as not timed. NULL: out of memory. */
xmt_race_cand *xmt_sess_race_view(const xmt_session *S);

/* Whether the key's budget is spent; the first time, the phase it cut short is kept. A
 * tuning budget: the verification of a pin or a cached winner, or a re-check, is not cut
 * (a winner cut short would be dropped as if it had failed). */
int xmt_sess_over_budget(xmt_session *S, const char *phase);

/* Remembers the session's first failure: it is the one reported. */
void xmt_sess_error(xmt_session *S, CUresult r, const char *what);

/* Whether every run of S starts from the program's own data: auto protection in the
 * program's own process (no trial helper). A run there that faults or hangs takes the
 * program with it, so none may run on data the program never gave it (poisoned outputs,
 * or what an earlier run left): the outputs are restored from the snapshot before every
 * run instead, and nothing that only poison can tell is asked (docs/tuning.md, "Where
 * candidates run"). In the helper the runs are on its copy and may be poisoned. */
int xmt_sess_program_data(const xmt_session *S);

/* Puts the declared buffers into the state every run starts from: restore buffers (and
 * reset ones, when snapshots exist for the final put-back only) from their snapshots,
 * reset buffers zeroed, verify-only buffers poisoned when asked (under auto protection
 * its outputs instead: a declared verify buffer may be one the kernel accumulates into,
 * and auto finds out which; where xmt_sess_program_data, the outputs restored before
 * every run, poison asked or not); and flushes L2. */
int xmt_sess_prepare(xmt_session *S, int poison, int flush);

/* Puts every declared buffer back as the program left it; under auto protection the
 * outputs, and where xmt_sess_program_data every other chunk of the regions that differs
 * from the snapshot too, so that the program's own launch runs on its data exactly. */
int xmt_sess_put_back(xmt_session *S);

/* One launch of candidate c (the program's own when c->index is XMT_OWN_CONFIG). Returns
 * 0 when it ran; 1 when the driver refused it (c is then skipped, saying why, and the
 * session goes on without it); -1 when the session must end: the program's own config
 * failed, or a launch failed in a way that may have left the context broken. Such a
 * failure with other candidates' runs queued before c (S->run.queued, a timed round) blames
 * nobody: a kernel's fault is reported by whatever call comes next, and the broken context
 * answers every query alike, so which queued run it was is not known (c may be innocent). */
int xmt_sess_run_candidate(xmt_session *S, xmt_cand *c);

/* Compares what the last run left with the references. Returns the index of the first
 * comparison that differs (its result in S->data.results), -1 when all agree, -2 on failure. */
long xmt_sess_compare_all(xmt_session *S);

/* Makes what the last run left the reference: the declared verify buffers' (auto
 * protection keeps its own in the regions' ref copies). */
int xmt_sess_take_reference(xmt_session *S);

/* A progress line once a second while the session runs longer than a second: "xmatune:
 * tuning saxpy [n=16777216] (key 3 in this process, 30 candidates): verify 12/30, about
 * 4 s left in this phase". The estimate is the phase's pace so far: the phases after it
 * (timed rounds after verify) are not in it. */
void xmt_sess_progress(xmt_session *S, const char *phase, size_t done, size_t total);

/* Waits for the stream (ev NULL) or an event after `runs` candidate runs, by polling so
 * that the watchdog can speak. who: the candidate that ran, NULL for a timed round.
 * Returns 0, or -1 on a failure or when the watchdog fired (tuning stops). */
int xmt_sess_wait_runs(xmt_session *S, CUevent ev, int runs, const xmt_cand *who);

/* One run of a candidate for verification, from outputs poisoned with the first pattern
 * (pattern 1), the second (2) or the complement of the reference (XMT_POISON_COMPLEMENT),
 * waited for. Returns as run_candidate. The program's own first run sets the watchdog's
 * measure; a candidate's run, poison included, counts as verification's candidate_runs. */
int xmt_sess_verify_run_from(xmt_session *S, xmt_cand *c, int pattern);

int xmt_sess_verify_run(xmt_session *S, xmt_cand *c);

/* Records why the key stays untuned (the first reason wins), and the outcome the cache
 * keeps for it (XMT_OUTCOME_*: docs/cache.md, "Every outcome"). Returns 1. */
int xmt_sess_untuned_as(xmt_session *S, const char *outcome, const char *fmt, const char *detail);

int xmt_sess_untuned(xmt_session *S, const char *fmt, const char *detail);

/* One more scratch allocation, within the limit. Returns 0, 1 when over it (untuned). */
int xmt_sess_scratch(xmt_session *S, CUdeviceptr *p, size_t bytes, const char *what);

/* The regions' changes against their snapshot (against_ref 0) or reference (1); 0, or -1
 * on failure (the session's error). */
int xmt_sess_changes(xmt_session *S, int against_ref);

size_t xmt_sess_passing(const xmt_session *S);

/* The shim's GPU kernels (gpucheck.h) opened for this session, once: the load counted as
 * module_load (on first need in a context). */
void xmt_sess_gc_ready(xmt_session *S);

#endif
