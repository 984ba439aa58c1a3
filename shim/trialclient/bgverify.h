/*
 * bgverify: verifications off the program's path (docs/cache.md, "Trust").
 *
 * A winner read from the on-disk cache is verified in this process before the program
 * depends on it for long, but never on the program's thread: the launch that first meets
 * it takes a snapshot of what it reaches (trialtune.c, stream-ordered, no wait) and hands
 * it here; one worker thread per process runs each job's verification in the trial helper,
 * one at a time (verifications in the order they came, then the tunings with the most
 * launch time first: xmt_bgtune_queue), and calls the job's callback with what it found. The worker
 * starts with the first job. At exit (xmt_bgverify_stop) jobs not started are dropped and no
 * callback runs after it returns; a session in flight is left to the helper, which ends with the
 * program.
 */
#ifndef XMT_BGVERIFY_H
#define XMT_BGVERIFY_H

#include <stdint.h>

#include "trialtune.h"

/* learned: 0 when nothing was learned (no helper, the module gone, exit), o and why then
 * say why in why; 1 with *o the helper's decision. Runs on the worker thread. */
typedef void (*xmt_bgverify_done)(void *ud, int learned, const xmt_trial_outcome *o,
                                  const char *why);

/* Queues the verification of `only` (its index, the record's data digest: may be NULL) on
 * snapshot s; takes s, key_text is copied. done(ud, ...) is called once, on the worker,
 * unless the process exits first. ud is heap memory (malloc) the job owns until done runs:
 * done frees it, and a job dropped at exit frees it with free(). 0 queued; -1 when it
 * cannot be (the worker cannot start, the shim is exiting): s freed, done not called, ud
 * left to the caller. */
int xmt_bgverify_queue(xmt_trial_snap *s, const char *key_text, const xmt_candidate *only,
                       long only_index, const char *record_data, xmt_bgverify_done done, void *ud);

/* A background tuning's step on the worker before its session (no lock held: it may wait,
 * boundedly; the fleet's claim, bgjobs.c): 1 when the session is not to run (done is then
 * called with learned 0 and what it wrote in why), else 0. */
typedef int (*xmt_bgtune_start)(void *ud, char *why, size_t cap);

/* Queues the background tuning of a key (a whole session) on snapshot s, taken before the
 * program's own launch and completed after it (xmt_trial_snap_after); start (may be NULL)
 * runs first; as xmt_bgverify_queue otherwise (learned: the session decided, *o its outcome).
 * decided: the key's partial record's candidates (skipped), or NULL. If the process exits while
 * the session runs, partial(ud, list) is called once at xmt_bgverify_stop, on the exiting
 * thread, with the candidates it decided cannot win so far (those of decided included), unless
 * it decided none; done is not called then, and ud is freed as for a job dropped. */
typedef void (*xmt_bgtune_partial)(void *ud, const char *decided);
/* The launches of a queued tuning's key so far (the first one's included), read by the worker
 * (under the queue's lock) when it picks the next job: the tunings wait in the order of the
 * most launch time, launches(ud) times the own config's time at the snapshot's launch
 * (xmt_trial_snap_own_ms); verifications and warm-ups go first, in the order they came. */
typedef uint64_t (*xmt_bgtune_launches)(void *ud);
int xmt_bgtune_queue(xmt_trial_snap *s, const char *key_text, xmt_bgtune_start start,
                     const char *decided, xmt_bgverify_done done, xmt_bgtune_partial partial,
                     xmt_bgtune_launches launches, void *ud);

/* At a module or library load: the current context's memory pool made ready on the worker
 * (once per context), so that the first snapshot's stream-ordered allocation does not pay
 * for it on the program's thread; nothing where no snapshot will be taken (not tuning or
 * replaying, inline trials, neither background tuning nor background verification). */
void xmt_bgverify_warm(void);

/* Jobs queued or running now (for the exit report and the tests). */
int xmt_bgverify_pending(void);

/* Waits until no job is pending or timeout_ms passed (-1: no limit). 1 when none is. */
int xmt_bgverify_wait(int timeout_ms);

/* fork(2) phases: the queue's lock held across it; a child has no worker and no jobs (it
 * has no trial helper either: its verifications are not made). */
void xmt_bgverify_atfork(int phase);

/* At exit: waits at most wait_ms (XMATUNE_EXIT_WAIT_MS) for the jobs queued and running,
 * then drops the rest; no new jobs. After it returns no callback runs. */
void xmt_bgverify_stop(int wait_ms);

#endif
