/*
 * trialproc: the trial helper, seen from the program.
 *
 * One helper process (trial/xmatune-trial) per device, started at the first key that
 * needs a trial and kept for the life of the program, over a private channel
 * (common/trialproto.h). It is spawned with posix_spawn (never a fork of this CUDA
 * process) and leaves the program's process tree at once, so a program that reaps every
 * child or ignores SIGCHLD never waits on it; it ends when the program's end of the
 * channel closes, however the program ends. A helper found gone or hung (no answer within
 * XMATUNE_TRIAL_TIMEOUT_MS: it is killed) is restarted, at most XMT_TRIAL_MAX_RESTARTS
 * times per device and process; then, or when it cannot start, that device falls back
 * for good, with one logged reason (the `trial_helper` event, docs/log.md). A child the
 * program forks has no helper: it would start its own. Tuning sessions run in it through
 * trialtune.c; one at a time per helper.
 */
#ifndef XMT_TRIALPROC_H
#define XMT_TRIALPROC_H

#define XMT_TRIAL_MAX_RESTARTS 3
#define XMT_TRIAL_DEVICES 64 /* device ordinals served; others fall back */

/* The live helper of this device ordinal, started on first use, checked alive with a
 * ping on later ones (restarted if gone). Returns 0 when it answers, -1 when this device
 * has no helper (the reason was logged). Cold path: once per key; takes a lock. */
int xmt_trial_get(int device);

/* This device's helper held for one session (sessions on one device queue here): its
 * channel, or -1 when the device has no helper (the reason was logged; nothing held).
 * Every successful acquire is followed by one xmt_trial_release. */
int xmt_trial_acquire(int device);

/* The session is over. ended: the helper exited after it (its context may be broken: a
 * candidate faulted or hung), or stopped answering, or died; it is ended for good here
 * and logged with why, and the next acquire starts another. Ends that follow a fault are
 * expected and not counted against XMT_TRIAL_MAX_RESTARTS. */
void xmt_trial_release(int device, int ended, const char *why);

/* fork(2) phases (shim.c): the child closes its copies of the channels and has no
 * helper. */
void xmt_trial_atfork(int phase);

#endif
