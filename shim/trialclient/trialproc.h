/*
 * trialproc: the trial helper, seen from the program.
 *
 * One helper process (trial/xmatune-trial) per device, started at the first key that
 * needs a trial and kept for the life of the program, over a private channel
 * (common/trialproto.h). Its executable is found once, absolutely (beside the shim's own
 * file as the kernel names it, never against the program's current folder), opened then and
 * checked as trusted as the shim itself; every start runs that descriptor. It is spawned
 * by a vfork-like clone (never a fork of this CUDA process) as the child of the program's
 * parent, so that the program's wait, waitpid and waitid never see it (docs/tuning.md,
 * What a program sees of the helper). Its stdio is /dev/null. It ends
 * when the program's end of the channel closes, however the program ends, and is killed
 * at the program's exit. A helper found gone or hung (no answer within
 * XMATUNE_TRIAL_TIMEOUT_MS: it is killed) is restarted, at most XMT_TRIAL_MAX_RESTARTS
 * times per device and process; one that cannot start is tried again at later keys after
 * a backoff; each fallback is logged (the `trial_helper` event, docs/log.md) and said once.
 * A child the program forks has no helper: it would start its own. Tuning sessions run in
 * it through trialtune.c; one at a time per helper.
 */
#ifndef XMT_TRIALPROC_H
#define XMT_TRIALPROC_H

#define XMT_TRIAL_MAX_RESTARTS 3
#define XMT_TRIAL_DEVICES 64 /* device ordinals served; others fall back */

/* Why a device has no helper (the reason was logged): XMT_TRIAL_UNFIT, no helper may run
 * there (MPS, its compute mode, an ordinal past XMT_TRIAL_DEVICES); XMT_TRIAL_FAILED, the
 * helper failed (it cannot start, or was restarted too often): a policy's session then
 * never falls back to the program's own process (plan.c). */
#define XMT_TRIAL_UNFIT (-1)
#define XMT_TRIAL_FAILED (-2)

/* The live helper of this device ordinal, started on first use, checked alive with a
 * ping on later ones (restarted if gone; a failed start tried again after a backoff).
 * Returns 0 when it answers, else XMT_TRIAL_UNFIT or XMT_TRIAL_FAILED. Cold path: once per
 * key; takes a lock. */
int xmt_trial_get(int device);

/* This device's helper held for one session (sessions on one device queue here): its
 * channel, or XMT_TRIAL_UNFIT / XMT_TRIAL_FAILED when the device has no helper (nothing
 * held). Every successful acquire is followed by one xmt_trial_release. */
int xmt_trial_acquire(int device);

/* The session is over. ended: the helper exited after it (its context may be broken: a
 * candidate faulted or hung), or stopped answering, or died; it is ended for good here
 * and logged with why, and the next acquire starts another. Ends that follow a fault are
 * expected and not counted against XMT_TRIAL_MAX_RESTARTS. */
void xmt_trial_release(int device, int ended, const char *why);

/* At the program's exit (shim.c's exit handler, after the background verifications it
 * waits for): its helpers are killed at once, a stopped one too (the channel's end would
 * end a running one, a little later), and so is an unused spare. A child the program forked has
 * none (xmt_trial_atfork). Never blocks: a lock held at exit leaves them to the channel's end. */
void xmt_trial_at_exit(void);

/* A session that runs candidates (which may fault) is about to start on this device: from
 * now on each start of its helper starts a spare beside it (XMATUNE_TRIAL_SPARE), and one
 * starts now when its helper runs already and has none. Sessions that only verify (a pin,
 * a cached winner, a re-check) do not ask: a process that only verifies keeps one helper. */
void xmt_trial_spare(int device);

/* fork(2) phases (shim.c): the child closes its copies of the channels and has no
 * helper. */
void xmt_trial_atfork(int phase);

#endif
