/*
 * plan: what to do with a key never seen in this process, and doing it (see plan.h).
 */
#include "plan.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "autotune.h"
#include "launch.h"
#include "log.h"
#include "logevent.h"
#include "misscause.h"
#include "options.h"
#include "remote.h"
#include "session.h"
#include "settings.h"
#include "trialtune.h"
#include "tune_event.h"

/* Tuning time spent by this process, every thread (XMATUNE_TOTAL_BUDGET_MS). */
static _Atomic uint64_t total_tuning_us;

/* A key first launched after the total budget was spent: its record's why begins so (the
 * fleet's tier never gets it: another process's budget says nothing of the key), and at most
 * BUDGET_RECORDS such keys a process are remembered. */
static const char budget_why[] = "the total tuning budget";
#define BUDGET_RECORDS 1024

/* The identity of this kernel's winners on disk (device, code, entry and protection). */
static void cache_id(const xmt_kernel *k, const xmt_devinfo *di, CUdevice dev, xmt_plan *p)
{
    const xmt_entry *e = k->entry;
    xmt_code_fingerprint(k, dev, p->code);
    uint64_t fp = xmt_entry_fingerprint(e) ^ (xmt_settings_protects_auto(e) ? 0 : 0x9e3779b9ull);
    snprintf(p->entry_fp, sizeof p->entry_fp, "%016llx", (unsigned long long)fp);
    p->id = (xmt_cache_id){di->id, k->mangled, p->code, xmt_entry_pattern(e), p->entry_fp};
}

static int cached_choice_holds(const xmt_entry *e, const xmt_launch_view *v, const xmt_choice *ch,
                               xmt_candidate *cc)
{
    return ch->index == XMT_OWN_CONFIG ||
           (ch->index >= 0 && (size_t)ch->index < xmt_entry_ncandidates(e) &&
            xmt_entry_candidate(e, (size_t)ch->index, v, cc) == 1 &&
            strcmp(cc->label, ch->label) == 0);
}

/* Whether XMATUNE_RETUNE asks that this record be ignored (its key tuned again). */
static int retuned(const xmt_choice *ch)
{
    return xmt_opt.retune == XMT_RETUNE_ALL ||
           (xmt_opt.retune == XMT_RETUNE_OUTCOMES && ch->outcome[0] != 0);
}

/* A record from the disk (docs/cache.md, Trust): the program's own config (timed fastest,
 * or an outcome that keeps it) is used as it is, and so is a winner under
 * XMATUNE_CACHE_VERIFY=0 or verified here already. Otherwise a winner is verified in this
 * process: under XMATUNE_CACHE_TRUST=strict before its first use, on the program's thread;
 * else in the background (bgverify.c), and meanwhile used at once when this user's own
 * process verified it in a file only this user can write, or else a hint: the program's own
 * config runs until it passes. */
static int plan_cached(const xmt_kernel *k, const xmt_launch_view *v, int checked, xmt_plan *p)
{
    /* a partial record (a session the exit cut) is a tuning's input, never a decision */
    if (!strcmp(p->ch.outcome, XMT_OUTCOME_PARTIAL)) return 0;
    if (!cached_choice_holds(k->entry, v, &p->ch, &p->pin)) return 0;
    if (p->ch.index == XMT_OWN_CONFIG) {
        p->trust = "used";
        return 1;
    }
    /* a record from the fleet is never trusted unverified (docs/cache.md, The fleet's tier) */
    if ((!xmt_opt.cache_verify && strcmp(p->ch.origin, "remote") != 0) || checked) {
        p->trust = "trusted";
        return 1;
    }
    p->only = &p->pin;
    p->only_index = p->ch.index;
    p->from_cache = 1;
    if (xmt_opt.cache_trust == XMT_TRUST_GRADED && xmt_opt.trials != XMT_TRIALS_INLINE) {
        p->bg_verify = 1;
        /* used at once: verified by this user's process on data that proved something, and
         * re-checked since on other data or stored by a process that would have re-checked
         * it at its later launches on other data, in a file only this user can write */
        p->hint = !(p->ch.data[0] && (p->ch.rechecked >= 1 || p->ch.rechecks > 0) &&
                    !p->ch.origin[0] && xmt_cache_private());
        p->trust = p->hint ? "hint" : "used";
        return 1;
    }
    p->trust = "verified first";
    p->need_run = 1;
    p->verify_only = 1;
    return 1;
}

void xmt_plan_spent(double ms)
{
    if (ms > 0) atomic_fetch_add(&total_tuning_us, (uint64_t)(ms * 1000));
}

void xmt_plan_verify_now(xmt_plan *p)
{
    p->bg_verify = p->hint = 0;
    p->trust = "verified first";
    p->need_run = 1;
    p->verify_only = 1;
}

/* A replay without a winner for a key: one line with its cause on stderr (a replay that
 * silently ran untuned looked like one that worked) and a replay_miss event, which
 * `xmatune report` lists. stale: the cache had a record whose config the policy no longer
 * offers for this launch. */
static void replay_miss(const xmt_kernel *k, const xmt_plan *p, const char *key_text, int dev,
                        int stale)
{
    char cause[512];
    if (stale)
        snprintf(cause, sizeof cause,
                 "the cached winner is no longer a valid candidate of the policy for this launch");
    else
        xmt_miss_cause(xmt_cache_path(), &p->id, p->key, p->keylen, cause, sizeof cause);
    xmt_warn("replay: %s, key %s: no cached winner: %s; the program's own config runs",
             k->demangled, key_text, cause);
    xmt_log_event(xmt_ev_replay_miss(k->mangled, k->demangled, key_text, xmt_entry_origin(k->entry),
                                     dev, cause));
}

void xmt_plan_new_key(const xmt_kernel *k, const xmt_launch_view *v, const xmt_devinfo *di,
                      CUdevice dev, const uint8_t *key, size_t kl, const char *key_text,
                      xmt_plan *p)
{
    static atomic_int budget_warned;
    const xmt_entry *e = k->entry;
    memset(p, 0, sizeof *p);
    cache_id(k, di, dev, p);
    p->key = key;
    p->keylen = kl;
    p->ch.index = XMT_OWN_CONFIG;
    int pin = xmt_entry_pin(e, v, &p->pin);
    if (pin < 0)
        xmt_warn("%s: the pin of policy %s is not valid for key %s (%s); tuning instead",
                 k->demangled, xmt_entry_origin(e), key_text, p->pin.why);
    if (pin == 1) {
        p->ch.index = XMT_PIN_CONFIG;
        snprintf(p->ch.label, sizeof p->ch.label, "%s", p->pin.label);
        if (xmt_entry_nbuffers(e) > 0 || xmt_settings_protects_auto(e)) {
            /* verified once, never benchmarked */
            p->need_run = 1;
            p->verify_only = 1;
            p->only = &p->pin;
            p->only_index = XMT_PIN_CONFIG;
        }
        return;
    }
    int checked = 0, stale = 0;
    /* local first, then what the fleet's tier has read already (never a network wait) */
    int found = xmt_cache_find(&p->id, key, kl, (int)dev, &p->ch, &checked) ||
                xmt_remote_find(&p->id, key, kl, &p->ch);
    if (found && !retuned(&p->ch)) {
        /* what faulted at this key in an earlier run: the kernel's keys tuned now skip it */
        xmt_trial_learn_record(k, (int)dev, &p->ch, key_text);
        if ((p->cached = plan_cached(k, v, checked, p))) return;
        /* the policy changed since, or the record is partial: tune again */
        stale = strcmp(p->ch.outcome, XMT_OUTCOME_PARTIAL) != 0;
        p->ch.index = XMT_OWN_CONFIG;
        /* a partial record's decided stays: its session skips them (docs/tuning.md) */
        p->ch.outcome[0] = p->ch.why[0] = 0;
    }
    if (found && retuned(&p->ch)) p->ch.decided[0] = 0; /* from zero, a partial record's too */
    if (xmt_opt.mode == XMT_MODE_REPLAY) {
        p->ch.index = XMT_OWN_CONFIG; /* replay never benchmarks: the program's config */
        replay_miss(k, p, key_text, (int)dev, stale);
        return;
    }
    if (xmt_opt.total_budget_ms >= 0 &&
        (double)atomic_load(&total_tuning_us) / 1000.0 > xmt_opt.total_budget_ms) {
        if (xmt_first_time(&budget_warned))
            xmt_warn("the total tuning budget (%g ms) is spent; new keys run untuned (and are "
                     "remembered so: XMATUNE_RETUNE=outcomes tunes them again)",
                     xmt_opt.total_budget_ms);
        /* remembered (docs/cache.md, "Every outcome"): a later run does no tuning work for
         * it either, where it would tune a few more keys each run. Not over a record found
         * (XMATUNE_RETUNE asked for it: what it said stands), and at most BUDGET_RECORDS a
         * process (a scalar that changes at every launch would write one per launch). */
        static atomic_int budget_records;
        if (!found && atomic_fetch_add(&budget_records, 1) < BUDGET_RECORDS) {
            char why[160];
            snprintf(why, sizeof why,
                     "%s (XMATUNE_TOTAL_BUDGET_MS=%g) was spent before its "
                     "first launch",
                     budget_why, xmt_opt.total_budget_ms);
            xmt_choice_outcome(&p->ch, XMT_OUTCOME_UNTUNED, why);
            p->store_on_disk = 1;
        }
        return;
    }
    p->need_run = 1;
    p->store_on_disk = 1;
    p->verify_only = xmt_entry_ncandidates(e) == 1; /* XMA: a single config is not timed */
}

/* A winner another process wrote meanwhile (found when claiming): p becomes its plan, when
 * the policy still has its config (1; else 0, p unchanged). */
static int use_found(const xmt_kernel *k, const xmt_launch_view *v, int checked,
                     const xmt_choice *ch, xmt_plan *p)
{
    xmt_plan cached = *p;
    cached.ch = *ch;
    cached.need_run = cached.verify_only = cached.store_on_disk = 0;
    cached.bg_verify = cached.hint = 0;
    if (plan_cached(k, v, checked, &cached)) {
        *p = cached;
        if (p->only) p->only = &p->pin; /* it pointed into the copy */
        return 1;
    }
    return 0;
}

int xmt_plan_in_background(const xmt_plan *p)
{
    return p->need_run && !p->verify_only && !p->from_cache && !p->recheck &&
           xmt_opt.tuning == XMT_TUNING_BACKGROUND && xmt_opt.trials != XMT_TRIALS_INLINE;
}

/* The key claimed on disk (or there is no lock to claim with): now in the fleet's tier
 * (remote.h), where another process may have stored it or be tuning it. 1 when the key
 * waits for that process, else 0 (p may be the found record's plan). A key tuned in the
 * background (!wait) is answered from what the tier knows already, never by the network:
 * when it knows nothing, the claim is the background worker's (p->fleet_later). */
static int claim_remote(const xmt_kernel *k, const xmt_launch_view *v, xmt_plan *p, int wait)
{
    xmt_choice ch;
    int a = wait ? xmt_remote_claim(&p->id, p->key, p->keylen, &ch)
                 : xmt_remote_known(&p->id, p->key, p->keylen, &ch);
    if (!wait && a == XMT_REMOTE_OFF) {
        p->fleet_later = 1;
        return 0;
    }
    switch (a) {
    case XMT_REMOTE_FOUND:
        if (retuned(&ch)) return 0;
        xmt_cache_unclaim(&p->id, p->key, p->keylen);
        p->claimed = 0;
        /* decided from the fleet's record at this launch: its cache_hit says so */
        if (use_found(k, v, 0, &ch, p)) p->cached = 1;
        return 0;
    case XMT_REMOTE_THEIRS:
        xmt_cache_unclaim(&p->id, p->key, p->keylen);
        p->claimed = 0;
        xmt_verbose(1,
                    "%s: another process of the fleet is tuning this key (the remote cache "
                    "holds its claim): the program's own config runs until its winner is there",
                    k->demangled);
        return 1;
    default: return 0;
    }
}

/* A tuning about to start: claims the key on disk (cache.h), where another process may
 * have tuned it meanwhile (then p becomes that winner's plan) or be tuning it now. 1 when
 * that other process has it (the key waits), else 0. */
int xmt_plan_claim_on_disk(const xmt_kernel *k, const xmt_launch_view *v, CUdevice dev, xmt_plan *p)
{
    if (!p->store_on_disk) return 0;
    int checked = 0;
    xmt_choice ch;
    xmt_cache_wait w;
    switch (xmt_cache_claim(&p->id, p->key, p->keylen, (int)dev, &ch, &checked, &w)) {
    case XMT_CACHE_FOUND:
        if (retuned(&ch)) { /* XMATUNE_RETUNE: this process tunes it again, claimed */
            p->claimed = 1;
            return 0;
        }
        (void)use_found(k, v, checked, &ch, p);
        return 0; /* else tuned again, unclaimed: the policy no longer has that config */
    case XMT_CACHE_WAIT:
        if (w.first) { /* once per key: it is looked at again every 200 ms */
            char kt[256], why[XMT_PATH_MAX + 400];
            if (xmt_entry_key_render(k->entry, p->key, p->keylen, kt, sizeof kt) < 0) kt[0] = 0;
            xmt_cache_wait_text(&w, why, sizeof why);
            xmt_warn("%s: key %s %s", k->demangled, kt[0] ? kt : "?", why);
        }
        return 1;
    default: p->claimed = 1; return claim_remote(k, v, p, !xmt_plan_in_background(p));
    }
}

int xmt_plan_claim_fleet(const xmt_kernel *k, const xmt_launch_view *v, xmt_plan *p)
{
    if (!p->fleet_later) return 0;
    p->fleet_later = 0;
    return claim_remote(k, v, p, 1);
}

int xmt_plan_claim_fleet_bg(xmt_plan *p)
{
    if (!p->fleet_later) return XMT_REMOTE_OFF;
    p->fleet_later = 0;
    xmt_choice ch;
    int a = xmt_remote_claim(&p->id, p->key, p->keylen, &ch);
    if (a == XMT_REMOTE_FOUND && retuned(&ch)) return XMT_REMOTE_OFF; /* XMATUNE_RETUNE */
    if (a == XMT_REMOTE_THEIRS || a == XMT_REMOTE_FOUND) {
        if (p->claimed) xmt_cache_unclaim(&p->id, p->key, p->keylen);
        p->claimed = 0;
    }
    return a;
}

void xmt_plan_store(const xmt_cache_id *id, const uint8_t *key, size_t kl, int dev,
                    const char *key_text, const xmt_choice *c)
{
    xmt_cache_store(id, key, kl, dev, key_text, c);
    if (!strcmp(c->outcome, XMT_OUTCOME_UNTUNED) &&
        !strncmp(c->why, budget_why, sizeof budget_why - 1))
        return; /* this process's budget: nothing the fleet should keep */
    xmt_remote_store(id, key, kl, key_text, c);
}

void xmt_plan_unclaim(const xmt_cache_id *id, const uint8_t *key, size_t kl)
{
    xmt_cache_unclaim(id, key, kl);
    xmt_remote_unclaim(id, key, kl);
}

/* Whether this plan's session decides a key afresh (not a re-check, not the verification
 * of a winner from the disk): only then is an undecided outcome a record of its own. */
static int fresh(const xmt_plan *p)
{
    return !p->recheck && !p->from_cache && !p->deferred;
}

/* Where a key's session runs: in the trial helper (XMATUNE_TRIALS auto and process),
 * else, or when it cannot run there, in the program's process (auto: said once per
 * reason; process: not at all, the key keeps the program's own config). After the
 * helper failed (it could not start, or was restarted too often) the key keeps the
 * program's own config in every mode but inline (auto's derived entries too, without
 * declining the kernel): only inline runs candidates in the program. 1 when
 * the helper decided (*ch set), 0 to run it inline. */
static int in_helper(const xmt_session_req *rq, xmt_plan *p, xmt_choice *ch)
{
    xmt_kernel *k = rq->k;
    const char *key_text = rq->key_text;
    static atomic_int said_inline, said_process, said_failed;
    /* a space auto derived is never tried in the program's own process */
    int derived = xmt_auto_owns(k->entry);
    if (xmt_opt.trials == XMT_TRIALS_INLINE && !derived) return 0;
    xmt_trial_outcome o;
    memset(&o, 0, sizeof o);
    char why[400] = "";
    p->deferred = 0;
    int r = 0;
    if (xmt_opt.trials == XMT_TRIALS_INLINE) {
        snprintf(why, sizeof why, "XMATUNE_TRIALS=inline");
    } else if ((r = xmt_trial_session(rq, /* a re-check's launch is made by its caller (tuner.c) */
                                      !p->launched && !p->recheck, &o, why, sizeof why)) > 0) {
        *ch = o.choice;
        if (o.launched) {
            p->launched = 1;
            p->launch_rc = o.launch_rc;
        }
        /* as run_session's inline bookkeeping: data that proved nothing decides nothing */
        p->deferred = o.uninformative;
        if (!o.storable || p->deferred) p->store_on_disk = 0;
        /* every outcome is remembered (docs/cache.md): a key left untuned goes on record */
        if (o.choice.outcome[0] && fresh(p)) p->store_on_disk = 1;
        atomic_fetch_add(&total_tuning_us, (uint64_t)(o.spent_ms * 1000));
        return 1;
    }
    if (r < 0) { /* auto's derived entries too: the kernel is tried again at its next key */
        if (xmt_first_time(&said_failed))
            xmt_warn("%s: key %s is not tuned: %s (the trial helper failed); it keeps the "
                     "program's own config rather than run candidates in the program's own "
                     "process, which XMATUNE_TRIALS=inline asks for (said once)",
                     k->demangled, key_text, why);
        *ch = (xmt_choice){.index = XMT_OWN_CONFIG};
        p->store_on_disk = 0;
        return 1;
    }
    if (derived) {
        /* auto declines the kernel: it passes through from now on */
        xmt_warn("XMATUNE_AUTO: %s: key %s cannot be tuned in the trial helper (%s); the "
                 "kernel passes through untuned",
                 k->demangled, key_text, why);
        xmt_kernels_pass_through(k);
        *ch = (xmt_choice){.index = XMT_OWN_CONFIG};
        p->store_on_disk = 0;
        /* the key's own refusal (not a missing helper) is remembered: the next run passes
         * the kernel through at once */
        if (o.declined && fresh(p)) {
            xmt_choice_outcome(ch, XMT_OUTCOME_DECLINED, why);
            p->store_on_disk = 1;
        }
        return 1;
    }
    if (xmt_opt.trials == XMT_TRIALS_PROCESS) {
        if (xmt_first_time(&said_process))
            xmt_warn("XMATUNE_TRIALS=process: %s: key %s cannot be tuned in the trial helper (%s); "
                     "it keeps the program's own config (said once)",
                     k->demangled, key_text, why);
        *ch = (xmt_choice){.index = XMT_OWN_CONFIG};
        p->store_on_disk = 0;
        return 1;
    }
    if (xmt_first_time(&said_inline))
        xmt_warn("%s: key %s is tuned in the program's own process, not in the trial helper: %s "
                 "(said once)",
                 k->demangled, key_text, why);
    return 0;
}

/* Runs the session a plan asks for and returns its choice. */
static xmt_choice run_session(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                              const char *key_text, int device, xmt_plan *p)
{
    xmt_choice ch;
    /* the request, once: the helper's session and this process's are asked alike */
    xmt_session_req rq = {.k = k,
                          .l = l,
                          .v = v,
                          .key_text = key_text,
                          .device = device,
                          .verify_only = p->verify_only,
                          .only = p->only,
                          .only_index = p->only_index,
                          .from_cache = p->from_cache,
                          .recheck = p->recheck,
                          .record_data = p->from_cache ? p->ch.data : NULL,
                          .decided = p->ch.decided[0] ? p->ch.decided : NULL};
    if (in_helper(&rq, p, &ch)) return ch;
    xmt_session S;
    int started = xmt_session_run(&S, &rq) == 0;
    ch = S.out.choice;
    memcpy(ch.data, S.out.data_digest, sizeof ch.data); /* the data it was verified on */
    /* a failed or untuned session decided nothing a later process should trust, nor one
     * whose data proved nothing (the key waits: docs/tuning.md) */
    p->deferred = started && S.out.uninformative;
    if (!started || S.out.error != CUDA_SUCCESS || S.out.untuned[0] || p->deferred)
        p->store_on_disk = 0;
    if (started && S.out.error == CUDA_SUCCESS && S.out.untuned[0] && fresh(p)) {
        /* an untuned key's outcome is remembered (docs/cache.md) */
        xmt_choice_outcome(&ch, S.out.untuned_outcome ? S.out.untuned_outcome : XMT_OUTCOME_UNTUNED,
                           S.out.untuned);
        p->store_on_disk = 1;
    }
    if (started) {
        atomic_fetch_add(&total_tuning_us, (uint64_t)(S.out.spent_ms * 1000));
        if (S.req.recheck)
            xmt_recheck_event(&S);
        else
            xmt_tune_event(&S);
        xmt_session_free(&S);
    }
    return ch;
}

/* Runs what the plan asks; a winner from the disk that fails its check here is dropped
 * and the key tuned again (replay: the program's own config). */
void xmt_plan_run(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v, int device,
                  xmt_plan *p, const char *key_text)
{
    long cached = p->ch.index;
    p->ch = run_session(k, l, v, key_text, device, p);
    if (!p->from_cache || p->deferred) return; /* deferred: checked at a later launch */
    if (p->ch.index == cached) {
        xmt_cache_checked(&p->id, p->key, p->keylen, device);
        return;
    }
    int replay = xmt_opt.mode == XMT_MODE_REPLAY;
    xmt_warn("%s: the cached winner %s for key %s failed verification; %s", k->demangled,
             p->pin.label, key_text, replay ? "the program's own config runs" : "tuning again");
    if (replay) return;
    p->verify_only = xmt_entry_ncandidates(k->entry) == 1;
    p->only = NULL;
    p->from_cache = 0;
    p->store_on_disk = 1;
    p->ch = run_session(k, l, v, key_text, device, p);
}

/* A winner's record written again (a re-check passed): what the record it replaces says of
 * the key's faults stays said (fault families), when c says none itself. */
static void keep_faults(const xmt_cache_id *id, const uint8_t *key, size_t kl, CUdevice dev,
                        xmt_choice *c)
{
    xmt_choice old;
    int checked = 0;
    if (!c->faults[0] && xmt_cache_find(id, key, kl, (int)dev, &old, &checked) &&
        old.index == c->index && !strcmp(old.label, c->label))
        memcpy(c->faults, old.faults, sizeof c->faults);
}

void xmt_plan_store_rechecked(const xmt_kernel *k, const xmt_devinfo *di, CUdevice dev,
                              const uint8_t *key, size_t kl, const char *key_text,
                              const xmt_choice *ch)
{
    if (xmt_opt.mode != XMT_MODE_TUNE) return;
    xmt_plan p;
    memset(&p, 0, sizeof p);
    cache_id(k, di, dev, &p);
    xmt_choice c = *ch;
    keep_faults(&p.id, key, kl, dev, &c);
    xmt_plan_store(&p.id, key, kl, (int)dev, key_text, &c);
}

/* A re-check's plan (xmt_plan_recheck, xmt_plan_recheck_bg) of decided winner index for
 * key: its identity, the winner's config for this launch in p->pin, and that config as the
 * one to verify. 0 when there is nothing to check on this launch: the winner's condition
 * does not hold (the launch runs the program's own config), or it launches as the program
 * does (its session's only candidate would be skipped, which is no failure). */
static int recheck_plan(const xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                        const xmt_devinfo *di, CUdevice dev, const uint8_t *key, size_t kl,
                        long index, xmt_plan *p)
{
    memset(p, 0, sizeof *p);
    cache_id(k, di, dev, p);
    int holds = index == XMT_PIN_CONFIG ? xmt_entry_pin(k->entry, v, &p->pin)
                : index >= 0 && (size_t)index < xmt_entry_ncandidates(k->entry)
                    ? xmt_entry_candidate(k->entry, (size_t)index, v, &p->pin)
                    : 0;
    if (holds != 1 || xmt_candidate_is_own(&p->pin, l)) return 0;
    p->key = key;
    p->keylen = kl;
    p->recheck = 1;
    p->only = &p->pin;
    p->only_index = index;
    return 1;
}

int xmt_plan_recheck(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                     const xmt_devinfo *di, CUdevice dev, const uint8_t *key, size_t kl,
                     const char *key_text, long index, char digest[17], xmt_choice *own)
{
    xmt_plan p;
    if (!recheck_plan(k, l, v, di, dev, key, kl, index, &p)) return XMT_RECHECK_UNTOLD;
    p.need_run = p.verify_only = 1;
    p.store_on_disk = 1; /* cleared when the session decided nothing (failed, untuned, deferred) */
    xmt_choice ch = run_session(k, l, v, key_text, (int)dev, &p);
    if (!p.store_on_disk) return XMT_RECHECK_UNTOLD;
    if (ch.index == index) {
        memcpy(digest, ch.data, 17);
        return XMT_RECHECK_PASSED;
    }
    *own = ch;
    if (xmt_opt.mode == XMT_MODE_TUNE && index >= 0) /* the last record for a key wins */
        xmt_plan_store(&p.id, key, kl, (int)dev, key_text, &ch);
    return XMT_RECHECK_FAILED;
}

int xmt_plan_recheck_bg(const xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                        const xmt_devinfo *di, CUdevice dev, const uint8_t *key, size_t kl,
                        const xmt_choice *ch, xmt_plan *p)
{
    if (!recheck_plan(k, l, v, di, dev, key, kl, ch->index, p)) return 0;
    p->ch = *ch;
    keep_faults(&p->id, key, kl, dev, &p->ch); /* for a pass that writes the record again */
    p->bg_verify = p->hint = 1;
    p->trust = "re-checked";
    return 1;
}
