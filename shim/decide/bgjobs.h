/*
 * bgjobs: a key's work done off the program's path (docs/tuning.md, "In the background";
 * docs/cache.md, Trust): a new key tuned in the trial helper (XMATUNE_TUNING=background;
 * its fleet claim taken on the worker first, never on the launch) or a cached winner verified
 * there, each from a snapshot of the launch's memory taken before the program's own launch, queued
 * on bgverify.c's worker; and what the outcome does to the key's result when the worker calls back
 * (a hint switched to its winner, a used winner dropped, a tuned winner used from the next launch
 * on; the switch event; the record written again).
 *
 * Apart from tuner.c because it is another path with another thread: tuner.c decides on
 * the launching thread and publishes; these jobs are queued from there and finish on the
 * worker's. What they need of tuner.c (running a decided key, auto's checks)
 * tuner.c passes down in an xmt_bg_ops, so that the two do not use each other in a cycle
 * (scripts/layering.sh, rule 4).
 */
#ifndef XMT_BGJOBS_H
#define XMT_BGJOBS_H

#include "kernels.h"
#include "launch.h"
#include "plan.h"
#include "results.h"
#include "xmt_policy.h"

/* tuner.c's side of a job (its static functions): the jobs keep a pointer to it. */
typedef struct {
    /* runs decided key r (its winner, or the program's own config) */
    CUresult (*run)(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v, xmt_result *r,
                    int device, const CUresult *made);
    /* XMATUNE_AUTO_MIN_US: auto's kernel passes through when ch was too short */
    void (*auto_too_short)(xmt_kernel *k, const xmt_choice *ch, const char *key_text);
    /* n keys decided (-1: a key counted so that is not decided after all): k's tuned keys */
    void (*count_key)(xmt_kernel *k, int n);
} xmt_bg_ops;

/* Whether the background queue has room for one more key (fewer than
 * XMATUNE_BACKGROUND_QUEUE wait). */
int xmt_bg_room(void);

/* XMATUNE_BACKGROUND_QUEUE reached: the key (mine, held by this thread) waits and is looked
 * at again later, its claim given up. 1 when so; 0 when the queue has room. */
int xmt_bg_busy(xmt_kernel *k, xmt_result *mine, const xmt_plan *p, const char *key_text);

/* A new key tuned in the background: 1 with *rc the launch's result (the program's own
 * config runs meanwhile); 0 when it cannot be (nothing done: the caller tunes it now). */
int xmt_bg_tune(const xmt_bg_ops *ops, xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                int device, xmt_result *mine, const xmt_plan *p, const char *key_text,
                CUresult *rc);

/* A cached winner verified in the background, its snapshot taken now, before the launch:
 * 0 queued; -1 when it cannot be (the caller verifies it now). */
int xmt_bg_start(const xmt_bg_ops *ops, xmt_kernel *k, const xmt_launch *l,
                 const xmt_launch_view *v, int device, xmt_result *mine, const xmt_plan *p,
                 const char *key_text);

#endif
