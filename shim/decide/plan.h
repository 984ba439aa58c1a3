/*
 * plan: what to do with a key never seen in this process, and doing it.
 *
 * A pin, the on-disk cache, replay's rule and the total budget decide a new key without
 * a benchmark; else it is tuned. A pin and a winner from the disk are verified once first
 * (XMATUNE_CACHE_VERIFY=0: a cached one is trusted). Before a tuning starts the key is
 * claimed on disk, where another process may have decided it meanwhile, and in the fleet's
 * tier (remote.h): by the launch, or, for a key tuned in the background, by the background
 * worker before it tunes (the launch never waits on the network). The tuner
 * (tuner.c) owns the key's result and publishes what the plan decided; a session
 * (session.c) is what the plan runs.
 */
#ifndef XMT_PLAN_H
#define XMT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "devinfo.h"
#include "kernels.h"
#include "launch.h"
#include "xmt_policy.h"

typedef struct {
    xmt_choice ch;
    int need_run;              /* a session must run (a benchmark, or a verification) */
    int verify_only;           /* that session verifies only */
    int store_on_disk;         /* the outcome goes to the on-disk cache */
    int from_cache;            /* ch came from the disk: tune again if it fails */
    int cached;                /* ch is a winner the disk holds (verified or not) */
    int claimed;               /* this process claimed the key on disk (cache.h) */
    int deferred;              /* its session's data proved nothing: nothing is decided */
    int recheck;               /* the session re-checks a decided winner (logged) */
    int launched;              /* the launch was made already (trialtune.c's check) */
    int bg_verify;             /* ch (from the disk) is verified in the background (bgverify.c) */
    int hint;                  /* ...and the program's own config runs until it passes */
    int fleet_later;           /* the worker claims it in the fleet (tuned in the background) */
    const char *trust;         /* how a record from the disk is used (the cache_hit event) */
    CUresult launch_rc;        /* what it returned */
    const xmt_candidate *only; /* the pin or cached config, when verify_only */
    long only_index;           /* its index: XMT_PIN_CONFIG or the cached candidate's */
    xmt_candidate pin;
    char code[17], entry_fp[17]; /* the cache identity's fingerprints */
    xmt_cache_id id;
    const uint8_t *key; /* the key (its binary form, as the cache has it) */
    size_t keylen;
} xmt_plan;

/* Fills p for a key never decided in this process (key: its binary form, as the cache
 * has it; key_text: its rendering, for messages). */
void xmt_plan_new_key(const xmt_kernel *k, const xmt_launch_view *v, const xmt_devinfo *di,
                      CUdevice dev, const uint8_t *key, size_t kl, const char *key_text,
                      xmt_plan *p);

/* Tuning time spent elsewhere (a session in the background) counted against
 * XMATUNE_TOTAL_BUDGET_MS. */
void xmt_plan_spent(double ms);

/* A plan to verify its cached winner in the background that cannot (under capture, no
 * snapshot): verified now, before its first use, as XMATUNE_CACHE_TRUST=strict does. */
void xmt_plan_verify_now(xmt_plan *p);

/* A decided winner that passed every re-check (XMATUNE_RECHECKS) in this process: its record
 * is written again with that count, so that a later process repeats none of them. */
void xmt_plan_store_rechecked(const xmt_kernel *k, const xmt_devinfo *di, CUdevice dev,
                              const uint8_t *key, size_t kl, const char *key_text,
                              const xmt_choice *ch);

/* A decision stored in both tiers: the on-disk cache (xmt_cache_store) and the fleet's
 * (remote.h, queued; only what this process decided itself goes there). */
void xmt_plan_store(const xmt_cache_id *id, const uint8_t *key, size_t kl, int dev,
                    const char *key_text, const xmt_choice *c);

/* A claim given up in both tiers (xmt_cache_unclaim, xmt_remote_unclaim). */
void xmt_plan_unclaim(const xmt_cache_id *id, const uint8_t *key, size_t kl);

/* A tuning about to start: claims the key on disk (cache.h), where another process may
 * have tuned it meanwhile (then p becomes that winner's plan) or be tuning it now, then in the
 * fleet's tier (remote.h). 1 when that other process has it (the key waits), else 0. A key
 * tuned in the background (xmt_plan_in_background) never waits on the network here: the
 * fleet's tier answers from what it knows already, else the claim is left to the background
 * worker (p->fleet_later: xmt_plan_claim_fleet_bg). */
int xmt_plan_claim_on_disk(const xmt_kernel *k, const xmt_launch_view *v, CUdevice dev,
                           xmt_plan *p);

/* Whether the plan tunes its key in the background (XMATUNE_TUNING=background, trials out of
 * the program's process): the launch runs the program's own config and returns. */
int xmt_plan_in_background(const xmt_plan *p);

/* A key whose fleet claim was left to the background worker (p->fleet_later) tuned on the
 * launch after all (no snapshot could be taken): claimed in the fleet now, as under
 * XMATUNE_TUNING=sync (the launch waits, boundedly). 1 when another process has it (the key
 * waits; its claim on disk given up), else 0 (p may be the found record's plan). */
int xmt_plan_claim_fleet(const xmt_kernel *k, const xmt_launch_view *v, xmt_plan *p);

/* On the background worker, before it tunes a key whose launch left the fleet's claim to it
 * (p->fleet_later; it may wait here, boundedly): XMT_REMOTE_MINE or XMT_REMOTE_OFF: tune it
 * (a claim won is renewed, and given up when the outcome is stored or unclaimed, as a
 * launch's); XMT_REMOTE_THEIRS (another process tunes it: watched) or XMT_REMOTE_FOUND (its
 * record is the fleet's tier's now, where a later launch finds it): not tuned here, the key's
 * claim on disk given up (p->claimed cleared). */
int xmt_plan_claim_fleet_bg(xmt_plan *p);

/* Runs what the plan asks (p->need_run): its session, and again as a tuning when a winner
 * from the disk fails its check (replay: the program's own config). p->ch is the choice. */
void xmt_plan_run(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v, int device,
                  xmt_plan *p, const char *key_text);

/* What a re-check of a decided winner found (xmt_plan_recheck). */
enum { XMT_RECHECK_PASSED, XMT_RECHECK_UNTOLD, XMT_RECHECK_FAILED };

/* A re-check of a decided winner (index: a candidate's, or XMT_PIN_CONFIG) at a later
 * launch of its key (docs/tuning.md, "Data that proves nothing"): one verify-only
 * session of it against the program's own config on this launch's data, logged as a
 * `tune` event with `recheck`. XMT_RECHECK_PASSED (digest: the digest of the data it was
 * verified on), XMT_RECHECK_UNTOLD (nothing learned: the data proved nothing, the winner's
 * condition does not hold for this launch, or the session failed), XMT_RECHECK_FAILED (its
 * result differs: in tune mode a candidate's record on disk is replaced by the program's
 * own config, *own its choice). */
int xmt_plan_recheck(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                     const xmt_devinfo *di, CUdevice dev, const uint8_t *key, size_t kl,
                     const char *key_text, long index, char digest[17], xmt_choice *own);

/* A re-check of decided winner ch (a winner tuned in the background: bgjobs.c) made in the
 * background too, as a hint's verification is (docs/tuning.md, "In the background"): p is
 * that verification's plan. 1 when there is something to check on this launch; 0 when the
 * winner does not apply to it (its condition does not hold, or it launches as the program
 * does). */
int xmt_plan_recheck_bg(const xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                        const xmt_devinfo *di, CUdevice dev, const uint8_t *key, size_t kl,
                        const xmt_choice *ch, xmt_plan *p);

#endif
