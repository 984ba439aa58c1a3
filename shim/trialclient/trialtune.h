/*
 * trialtune: a key's tuning session run in the trial helper, seen from the program.
 *
 * Nothing runs on the program's memory before the decision. The launch's memory (the
 * regions its pointer arguments reach, protect.c) is copied on the GPU into memory made
 * exportable (cuMemCreate, a POSIX file descriptor), laid out in windows of the
 * allocation granularity so that the helper can map each at the program's own address;
 * the module image the program loaded (modload.c), the launch (its dims and argument
 * bytes) and the candidates that faulted so far go with it in a TUNE request
 * (common/trialproto.h), the request itself an xmt_trialreq filled here and encoded by
 * its codec (common/trialreq.h), with the granularity the windows were rounded to. The
 * helper runs the whole session there (trial/tune.c) and answers with the choice and the
 * tune event, which is logged here. A candidate that
 * faults or runs past the watchdog ends that helper: it is recorded as `fault` and the
 * session runs again in a new helper without it, from the same staged copy (the program
 * is held at this launch, so its memory has not changed). The program's own config
 * faulting or hanging there leaves the key untuned.
 *
 * The helper's fidelity is checked, not assumed: when it chose a winner other than the
 * program's own config (and may_launch), this launch runs the program's own config for
 * real and what it leaves is compared on the GPU with the helper's reference (the same
 * config on the helper's copy, left in the staged memory): bitwise, except within the
 * entry's tolerance: where it has one (rounding.h); the winner is used from the next
 * launch only if they are equal (the `trial_check` event).
 */
#ifndef XMT_TRIALTUNE_H
#define XMT_TRIALTUNE_H

#include "cache.h"
#include "kernels.h"
#include "launch.h"
#include "session.h"
#include "trialsnap.h"
#include "xmt_policy.h"

/* Sessions that faults may repeat for one key (a helper each) before it is left untuned. */
#define XMT_TRIAL_MAX_FAULTS 32

typedef struct {
    xmt_choice choice; /* the winner, or the program's own config */
    int storable;      /* the outcome may go to the disk cache */
    int uninformative; /* its data proved nothing: nothing decided, the key waits */
    double spent_ms;   /* the whole of it, helpers' starts included */
    int launched;      /* this launch was made (the program's own config, for the check) */
    /* when the session did not run: the key itself cannot be tuned there (its launch, its
     * memory, the helper's setup), not that no helper is to be had; choice.why says why */
    int declined;
    CUresult launch_rc; /* what it returned */
} xmt_trial_outcome;

/* Runs the session rq asks for (session.h; rq->recheck: logged as a `recheck` event) in
 * rq->device's helper. may_launch: the check above may make this launch (not for a
 * re-check: its caller launches after it). Returns 1 with
 * *out filled when the helper decided (the choice may be the program's own config:
 * untuned, faulted, ...; out->choice.data: the digest of the data it was verified on); 0
 * when the session cannot run there (no image, memory that cannot be staged, a launch it
 * cannot replay, no helper may run on the device) with why, for the caller's fallback; -1
 * when the helper failed (it cannot start now, or was restarted too often: trialproc.h's
 * XMT_TRIAL_FAILED), with why: a policy's key then keeps the program's own config. */
int xmt_trial_session(const xmt_session_req *rq, int may_launch, xmt_trial_outcome *out, char *why,
                      size_t cap);

/* The identity fault families are carried under across a kernel's keys (session/family.h):
 * what its cache records are kept under but the device's model (a fault is the code's):
 * its name, its entry's pattern and fingerprint, its code's fingerprint on device. */
uint64_t xmt_trial_family_id(const xmt_kernel *k, int device);

/* A record of one of k's keys read from the cache (not retuned): the candidates it says
 * faulted there (ch->faults) are kept for the kernel's other keys in this process, as if
 * they had faulted here (family.h), so a key tuned now skips their families. */
void xmt_trial_learn_record(const xmt_kernel *k, int device, const xmt_choice *ch,
                            const char *key_text);

/* A verification off the program's path (docs/cache.md, "Trust"): on another thread than
 * the program's, xmt_trial_verify_snap verifies `only` against the program's own config on a
 * snapshot (trialsnap.h) in the helper (one session, no retry). 1 with *out when the helper
 * decided (out->choice is `only`'s index when it verified; the program's own config, outcome
 * XMT_OUTCOME_FAILED or another, when it did not); 0 when nothing was learned (no helper, the
 * helper lost, the module unloaded), with why. */
int xmt_trial_verify_snap(xmt_trial_snap *s, const char *key_text, const xmt_candidate *only,
                          long only_index, const char *record_data, xmt_trial_outcome *out,
                          char *why, size_t cap);

/* Background tuning (docs/tuning.md, "In the background"): on the worker, the key's whole
 * session on a snapshot completed by xmt_trial_snap_after (retried without a candidate that
 * faults, from the same copy), a winner checked against what the program's launch left
 * (decided: a partial record's candidates, skipped; NULL none). Returns as
 * xmt_trial_session. */
int xmt_trial_tune_snap(xmt_trial_snap *s, const char *key_text, int verify_only,
                        const char *decided, xmt_trial_outcome *out, char *why, size_t cap);

#endif
