/*
 * bgjobs: tuning and verification in the background, and their outcomes (see bgjobs.h).
 */
#include "bgjobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgverify.h"
#include "cache.h"
#include "clock.h"
#include "log.h"
#include "logevent.h"
#include "memo.h"
#include "options.h"
#include "remote.h"
#include "trialtune.h"

/* What a background verification applies its outcome to. */
typedef struct {
    xmt_kernel *k;
    uint64_t serial; /* k's incarnation: a kernel unloaded meanwhile is left alone */
    xmt_result *r;
    int device, hint;
    long index;
    char label[160], key_text[512];
    xmt_plan plan;  /* its identity (pointers fixed to this copy) */
    double t_first; /* the key's first launch (the snapshot's), for the switch event */
    const xmt_bg_ops *ops;
    int fleet; /* a tuning's fleet claim, taken on the worker (XMT_REMOTE_*) */
    uint8_t key[XMT_KEY_MAX];
    char kernel[]; /* the identity's kernel name: the worker's claim reads it with no lock */
} bg_job;

/* A job for plan p's key, its kernel name's room included; NULL when out of memory or the key
 * is longer than a job holds. */
static bg_job *job_alloc(const xmt_plan *p)
{
    bg_job *j = calloc(1, sizeof *j + strlen(p->id.kernel) + 1);
    if (!j || p->keylen > sizeof j->key) {
        free(j);
        return NULL;
    }
    return j;
}

/* What every job holds: whose key it is, and its own copy of the plan's identity (the key,
 * the fingerprints, the kernel name: the worker reads them after the launch has returned). */
static void job_fill(bg_job *j, const xmt_bg_ops *ops, xmt_kernel *k, xmt_result *mine, int device,
                     const xmt_plan *p, const char *key_text)
{
    j->k = k;
    j->ops = ops;
    j->serial = atomic_load(&k->serial);
    j->r = mine;
    j->device = device;
    j->t_first = xmt_now_ms();
    snprintf(j->key_text, sizeof j->key_text, "%s", key_text);
    j->plan = *p;
    memcpy(j->key, p->key, p->keylen);
    j->plan.key = j->key;
    j->plan.id.code = j->plan.code;
    j->plan.id.entry_fp = j->plan.entry_fp;
    memcpy(j->kernel, p->id.kernel, strlen(p->id.kernel) + 1);
    j->plan.id.kernel = j->kernel;
}

/* The switch event: job j's key runs `to` (NULL: the program's own config) from its next
 * launch on, having run `from` (docs/log.md). */
static void said_switch(const bg_job *j, const char *from, const char *to, const char *why)
{
    if (!xmt_log_enabled()) return;
    xmt_log_event(xmt_ev_switch(j->k->mangled, j->k->demangled, j->key_text, j->device, from, to,
                                why, xmt_now_ms() - j->t_first));
}

/* The launches of job j's key while it waited (results.h), for the worker's order; 0 once
 * its kernel is unloaded (its results are not ours to read then). */
static uint64_t bg_launches(void *ud)
{
    const bg_job *j = ud;
    if (atomic_load(&j->k->serial) != j->serial) return 0;
    return atomic_load_explicit(&j->r->queued_launches, memory_order_relaxed);
}

/* Job j's key no longer waits: its launches are not counted from now on (every thread's memo
 * of it looks again at its next launch, counting nothing more). */
static void bg_unqueue(bg_job *j)
{
    atomic_store(&j->r->queued, 0);
    xmt_memo_forget(j->k);
}

static void bg_done(void *ud, int learned, const xmt_trial_outcome *o, const char *why)
{
    bg_job *j = ud;
    xmt_kernel *k = j->k;
    if (atomic_load(&k->serial) != j->serial) { /* retired: its result is not ours to touch */
        free(j);
        return;
    }
    xmt_result *r = j->r;
    if (learned && o->uninformative) { /* data that proved nothing: no evidence either way */
        learned = 0;
        why = j->plan.recheck ? "the re-check's launch's data proved nothing"
                              : "its first launch's data proved nothing";
    }
    if (!learned && j->plan.recheck) {
        /* a re-check that learned nothing (no helper, data that proved nothing): the winner
         * goes on, as a re-check on the program's thread that learns nothing does */
        xmt_verbose(1,
                    "%s: the tuned winner %s for key %s could not be re-checked in the "
                    "background (%s); it is used again from the next launch",
                    k->demangled, j->label, j->key_text, why);
        __atomic_store_n(&r->index, j->index, __ATOMIC_RELEASE);
        xmt_memo_forget(k);
    } else if (!learned) {
        xmt_verbose(1,
                    "%s: the cached winner %s for key %s could not be verified in the "
                    "background (%s); %s",
                    k->demangled, j->label, j->key_text, why,
                    j->hint ? "the program's own config stays" : "it stays in use");
    } else if (o->choice.index == j->index) {
        xmt_cache_checked(&j->plan.id, j->key, j->plan.keylen, j->device);
        if (xmt_opt.mode == XMT_MODE_TUNE && o->choice.data[0] && j->plan.ch.rechecked == 0 &&
            strcmp(o->choice.data, j->plan.ch.data) != 0) {
            /* verified on other data than its record's: a re-check passed, on record */
            xmt_choice ch = j->plan.ch;
            ch.rechecked++;
            memcpy(ch.data, o->choice.data, sizeof ch.data);
            j->plan.ch.rechecked = ch.rechecked;
            xmt_plan_store(&j->plan.id, j->key, j->plan.keylen, j->device, j->key_text, &ch);
        }
        if (j->hint) {
            /* a hint verified here (or a winner re-checked: tuner.c's recheck_in_background):
             * the program switches to it at its next launch */
            snprintf(r->label, sizeof r->label, "%s", j->label);
            r->time_ms = j->plan.ch.time_ms;
            r->rechecked = j->plan.ch.rechecked;
            if (o->choice.data[0]) memcpy(r->digest, o->choice.data, sizeof r->digest);
            __atomic_store_n(&r->index, j->index, __ATOMIC_RELEASE);
            xmt_memo_forget(k);
            said_switch(j, NULL, j->label, j->plan.recheck ? "re-checked" : "verified");
        }
        xmt_verbose(1, "%s: key %s: the %s winner %s passed %s in the background%s", k->demangled,
                    j->key_text, j->plan.recheck ? "tuned" : "cached", j->label,
                    j->plan.recheck ? "a re-check" : "its verification",
                    !j->hint          ? ""
                    : j->plan.recheck ? "; the program uses it again from its next launch"
                                      : "; the program uses it from its next launch");
    } else {
        int tune = xmt_opt.mode == XMT_MODE_TUNE;
        xmt_warn("%s: the %s winner %s for key %s failed %s in the background (%s); %s%s",
                 k->demangled, j->plan.recheck ? "tuned" : "cached", j->label, j->key_text,
                 j->plan.recheck ? "a re-check on later data" : "its verification",
                 o->choice.why[0] ? o->choice.why : "other results than the program's own config",
                 j->plan.recheck ? "dropped: the program's own config is used from now on"
                 : j->hint       ? "it is not used"
                                 : "dropped: the program's own config is used from now on",
                 tune && xmt_cache_path()[0] ? " (and stored on disk)" : "");
        /* a winner in use dropped; a re-checked one ran until the re-check's launch (the
         * program's own config since): dropped now */
        if (!j->hint || j->plan.recheck) {
            snprintf(r->label, sizeof r->label, "%s", "");
            atomic_store(&r->rechecks_left, 0);
            if (!j->hint) {
                __atomic_store_n(&r->index, XMT_OWN_CONFIG, __ATOMIC_RELEASE);
                xmt_memo_forget(k);
            }
            said_switch(j, j->label, NULL, "failed");
        }
        if (tune) { /* not propagated: this key's record says it failed here */
            xmt_choice f;
            xmt_choice_outcome(&f, XMT_OUTCOME_FAILED,
                               o->choice.why[0] ? o->choice.why : "failed its verification");
            xmt_plan_store(&j->plan.id, j->key, j->plan.keylen, j->device, j->key_text, &f);
        }
    }
    free(j);
}

/* On the worker, before a key's session: the fleet's claim, which its launch left to the
 * worker (docs/cache.md, "The fleet's tier"). 1 when the session is not run: another process
 * has the key (its claim, or its record). */
static int bg_claim(void *ud, char *why, size_t cap)
{
    bg_job *j = ud;
    j->fleet = xmt_plan_claim_fleet_bg(&j->plan);
    if (j->fleet != XMT_REMOTE_THEIRS && j->fleet != XMT_REMOTE_FOUND) return 0;
    snprintf(why, cap, "%s",
             j->fleet == XMT_REMOTE_THEIRS ? "another process of the fleet is tuning it"
                                           : "another process of the fleet decided it");
    return 1;
}

/* A key the worker did not tune because another process of the fleet has it (bg_claim): it
 * keeps the program's own config, and a launch looks at it again as at a key another process
 * is tuning (tuner.c's recheck): at once when its record was found (it is then a hint,
 * verified in the background as any record from the fleet), else XMT_RECHECK_MS later, and
 * again until the other process's record lands (the fleet's tier polls the key meanwhile)
 * or its claim goes (then this process claims it). */
static void bg_elsewhere(bg_job *j)
{
    xmt_kernel *k = j->k;
    xmt_result *r = j->r;
    int found = j->fleet == XMT_REMOTE_FOUND;
    if (found)
        xmt_verbose(1,
                    "%s: key %s: another process of the fleet decided it meanwhile: not tuned "
                    "here; its record is used as a hint",
                    k->demangled, j->key_text);
    else
        xmt_verbose(1,
                    "%s: key %s: another process of the fleet is tuning this key (the remote "
                    "cache holds its claim): not tuned here; the program's own config runs "
                    "until its winner is there",
                    k->demangled, j->key_text);
    /* the key's result was published (the program's own config) when its job was queued: out
     * of XMT_R_DONE by a compare-and-swap, as a re-check takes it (results.h) */
    int s = XMT_R_DONE;
    if (atomic_compare_exchange_strong(&r->state, &s, XMT_R_TUNING)) {
        if (found) { /* its next launch takes the record */
            atomic_store(&r->recheck_ms, 0.0);
            xmt_result_move(r, XMT_R_WAITING);
        } else {
            xmt_result_wait(r);
        }
        j->ops->count_key(k, -1); /* counted when queued: decided by a later launch */
        xmt_memo_forget(k);
    }
}

/* A key tuned in the background has its outcome: stored as a tuning's is (a winner, the
 * program's own config, an outcome), and a winner used from the next launch on (every
 * thread's memo looks again). Nothing learned: the key keeps the program's own config for
 * this process, its claim given up. */
static void bg_tuned(void *ud, int learned, const xmt_trial_outcome *o, const char *why)
{
    bg_job *j = ud;
    xmt_kernel *k = j->k;
    if (atomic_load(&k->serial) != j->serial) {
        free(j);
        return;
    }
    xmt_result *r = j->r;
    xmt_plan *p = &j->plan;
    bg_unqueue(j);
    if (!learned && (j->fleet == XMT_REMOTE_THEIRS || j->fleet == XMT_REMOTE_FOUND)) {
        bg_elsewhere(j);
        free(j);
        return;
    }
    xmt_plan_spent(o->spent_ms);
    if (!learned || o->uninformative) {
        xmt_verbose(1,
                    "%s: key %s was not tuned in the background (%s); the program's own config "
                    "stays",
                    k->demangled, j->key_text,
                    learned ? "its first launch's data proved nothing" : why);
        if (p->claimed) xmt_plan_unclaim(&p->id, j->key, p->keylen);
        free(j);
        return;
    }
    xmt_choice ch = o->choice;
    /* its re-checks run in the background (tuner.c's recheck_in_background: a failure writes
     * the key's record again), so its record says they would, as a sync tuning's does, and
     * a later process of this user's uses it at once (docs/cache.md, Trust) */
    if (ch.index >= 0 && !ch.origin[0] && xmt_opt.rechecks > 0) ch.rechecks = xmt_opt.rechecks;
    int store = o->storable || ch.outcome[0];
    if (store)
        xmt_plan_store(&p->id, j->key, p->keylen, j->device, j->key_text, &ch);
    else if (p->claimed)
        xmt_plan_unclaim(&p->id, j->key, p->keylen);
    if (ch.index != XMT_OWN_CONFIG) {
        snprintf(r->label, sizeof r->label, "%s", ch.label);
        r->time_ms = ch.time_ms;
        memcpy(r->digest, ch.data, sizeof r->digest);
        /* re-checked at its next launch, then 8, 64, ... launches later (results.h) */
        r->recheck_bg = 1;
        r->rechecked = 0;
        r->gap = 1;
        atomic_store(&r->due_in, 1);
        atomic_store(&r->rechecks_left, xmt_opt.rechecks);
        __atomic_store_n(&r->index, ch.index, __ATOMIC_RELEASE);
        xmt_memo_forget(k);
        said_switch(j, NULL, ch.label, "tuned");
    }
    xmt_verbose(1, "%s: key %s: tuned in the background: %s%s", k->demangled, j->key_text,
                ch.index == XMT_OWN_CONFIG ? "the program's own config stays" : ch.label,
                ch.index == XMT_OWN_CONFIG ? "" : "; the program uses it from its next launch");
    j->ops->auto_too_short(k, &ch, j->key_text);
    free(j);
}

/* A key's background session cut by the exit: what it decided cannot win is kept in a partial
 * record (docs/tuning.md, "Resuming a session cut at exit"), in this process's file only (the
 * fleet's tier gets decisions, never a tuning's input), its claim dropped with it. */
static void bg_partial(void *ud, const char *decided)
{
    bg_job *j = ud;
    if (atomic_load(&j->k->serial) != j->serial || xmt_opt.mode != XMT_MODE_TUNE) return;
    xmt_choice ch;
    char why[200];
    size_t n = 0;
    for (const char *c = decided; *c; c++)
        n += *c == ' ';
    snprintf(why, sizeof why,
             "the program ended while its key was tuned in the background, %zu candidate%s "
             "decided",
             n + 1, n ? "s" : "");
    xmt_choice_outcome(&ch, XMT_OUTCOME_PARTIAL, why);
    snprintf(ch.decided, sizeof ch.decided, "%s", decided);
    xmt_cache_store(&j->plan.id, j->key, j->plan.keylen, j->device, j->key_text, &ch);
    xmt_verbose(1, "%s: key %s: %s (kept for the next run)", j->k->demangled, j->key_text, why);
}

/* A bounded queue (XMATUNE_BACKGROUND_QUEUE; docs/tuning.md, "In the background"): while
 * that many keys wait for the worker, a new key's first launch (or a hint's) takes no
 * snapshot and runs the program's own config; the key is looked at again at a launch
 * XMT_RECHECK_MS later, so the keys launched most often get the worker first. 1 when deferred. */
int xmt_bg_room(void)
{
    return xmt_bgverify_pending() < xmt_opt.background_queue;
}

int xmt_bg_busy(xmt_kernel *k, xmt_result *mine, const xmt_plan *p, const char *key_text)
{
    if (xmt_bg_room()) return 0;
    if (p->claimed) xmt_plan_unclaim(&p->id, mine->key + 4, mine->keylen - 4);
    xmt_verbose(2, "%s: key %s: the background worker is busy; looked at again later", k->demangled,
                key_text);
    xmt_result_wait(mine);
    return 1;
}

/* A new key tuned in the background (XMATUNE_TUNING=background): a snapshot of what the
 * launch reaches before it, the program's own launch, a copy of what it left after it, and
 * the session queued; the key runs the program's own config until the session is done
 * (bg_tuned). 1 with *rc the launch's result when so; 0 when the launch cannot be tuned so
 * (nothing done: the caller tunes it as usual). */
int xmt_bg_tune(const xmt_bg_ops *ops, xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                int device, xmt_result *mine, const xmt_plan *p, const char *key_text, CUresult *rc)
{
    char why[400] = "";
    if (xmt_bg_busy(k, mine, p, key_text)) {
        *rc = xmt_pass(k, l);
        return 1;
    }
    bg_job *j = job_alloc(p);
    if (!j) return 0;
    xmt_trial_snap *s = xmt_trial_snapshot(k, l, v, device, why, sizeof why);
    if (!s) {
        xmt_verbose(1, "%s: key %s: no snapshot for tuning in the background (%s); tuned now",
                    k->demangled, key_text, why);
        free(j);
        return 0;
    }
    job_fill(j, ops, k, mine, device, p, key_text);
    j->plan.only = NULL;
    j->fleet = XMT_REMOTE_OFF;
    /* published first: the program's own config meanwhile, no re-check waits on it; its
     * launches counted while it waits (this one too), for the worker's order */
    mine->index = XMT_OWN_CONFIG;
    mine->label[0] = 0;
    atomic_store(&mine->rechecks_left, 0);
    atomic_store(&mine->queued_launches, 0);
    atomic_store(&mine->queued, 1);
    ops->count_key(k, 1);
    xmt_result_move(mine, XMT_R_DONE);
    *rc = ops->run(k, l, v, mine, device, NULL);
    int after = *rc == CUDA_SUCCESS ? xmt_trial_snap_after(s, l) : -1;
    xmt_trial_snap_log(s, key_text, "tune");
    if (after != 0) {
        xmt_verbose(1, "%s: key %s: not tuned in the background (the launch or its copy failed)",
                    k->demangled, key_text);
        xmt_trial_snap_free(s);
        if (p->claimed) xmt_plan_unclaim(&p->id, j->key, p->keylen);
        bg_unqueue(j);
        free(j);
    } else if (xmt_bgtune_queue(s, key_text, bg_claim, p->ch.decided, bg_tuned, bg_partial,
                                bg_launches, j) != 0) {
        if (p->claimed) xmt_plan_unclaim(&p->id, j->key, p->keylen);
        bg_unqueue(j);
        free(j);
    }
    return 1;
}

/* A cached winner to verify off the program's path: the snapshot of this launch's memory
 * taken now (before the launch, stream-ordered) and the job queued. 0 queued, -1 when it
 * cannot be (the plan is then verified now instead). */
int xmt_bg_start(const xmt_bg_ops *ops, xmt_kernel *k, const xmt_launch *l,
                 const xmt_launch_view *v, int device, xmt_result *mine, const xmt_plan *p,
                 const char *key_text)
{
    char why[400] = "";
    bg_job *j = job_alloc(p);
    if (!j) return -1;
    xmt_trial_snap *s = xmt_trial_snapshot(k, l, v, device, why, sizeof why);
    if (!s) {
        xmt_verbose(1, "%s: key %s: no snapshot for a background %s (%s); %s", k->demangled,
                    key_text, p->recheck ? "re-check" : "verification", why,
                    p->recheck ? "re-checked at a later launch" : "verified now");
        free(j);
        return -1;
    }
    xmt_trial_snap_log(s, key_text, "verify");
    job_fill(j, ops, k, mine, device, p, key_text);
    j->hint = p->hint;
    j->index = p->ch.index;
    snprintf(j->label, sizeof j->label, "%s", p->ch.label);
    j->plan.only = &j->plan.pin;
    if (xmt_bgverify_queue(s, key_text, &p->pin, p->ch.index, p->ch.data[0] ? p->ch.data : NULL,
                           bg_done, j) != 0) {
        free(j);
        return -1;
    }
    return 0;
}
