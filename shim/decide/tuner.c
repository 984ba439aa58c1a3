/*
 * tuner: benchmark, protect the data, pick, cache, rewrite (see tuner.h).
 */
#include "tuner.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The results' hash, 8 bytes at a time. uthash's default (Jenkins) reads a byte at a time:
 * ~500 instructions for the 85 bytes of an auto key (8 triggers and a scalar), paid by
 * every launch that misses the per-thread memo (a program whose tensors move). Only the
 * buckets depend on it. */
static inline unsigned results_hash(const void *key, size_t n)
{
    const unsigned char *p = key;
    uint64_t h = 0x9e3779b97f4a7c15u ^ n, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    return (unsigned)(h ^ (h >> 29));
}
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = results_hash((keyptr), (keylen)))
#include <uthash.h>

#include "autotune.h"
#include "bgjobs.h"
#include "cache.h"
#include "clock.h"
#include "devinfo.h"
#include "driver.h"
#include "invariant.h"
#include "launch.h"
#include "launchview.h"
#include "log.h"
#include "logevent.h"
#include "memo.h"
#include "options.h"
#include "plan.h"
#include "results.h"
#include "session.h"
#include "tls.h"
#include "trialtune.h"
#include "tune_event.h"
#include "xmt_policy.h"

/* ---- per-kernel results (one key's: results.h) ---------------------------------------- */

struct xmt_tune_state {
    pthread_rwlock_t lock;
    xmt_result *results;
    unsigned keys_tuned;
    /* keys whose launches wait for room in the background queue (bg_deferred): under auto
     * counted with the tuned ones against XMATUNE_AUTO_MAX_KEYS (k->lock) */
    unsigned keys_deferred;
    atomic_int key_error_warned;
    /* The arguments a decision reads (xmt_entry_params_read), which the memo compares;
     * memo_nargs < 0: too many bytes of them to remember, nothing is memoized. */
    int memo_nargs;
    xmt_memo_arg memo_args[];
};

/* A retired record's tuned keys are counted in its name's summary (kernels.c; both
 * locks held); its results are freed when its struct is reused. */
static void fold_keys(xmt_kernel *dst, xmt_kernel *src)
{
    dst->keys_retired += src->keys_retired + (src->tune ? src->tune->keys_tuned : 0);
    src->keys_retired = 0;
    if (src->tune) src->tune->keys_tuned = 0;
}

static void release_results(xmt_kernel *k)
{
    struct xmt_tune_state *s = k->tune;
    if (!s) return;
    /* The table goes first; the items keep their links (uthash leaves them alone). */
    xmt_result *r = s->results;
    HASH_CLEAR(hh, s->results);
    while (r) {
        xmt_result *next = r->hh.next;
        free(r);
        r = next;
    }
    pthread_rwlock_destroy(&s->lock);
    free(s);
    k->tune = NULL;
}

static const xmt_kernel_parts result_parts = {fold_keys, release_results};

static struct xmt_tune_state *state_of(xmt_kernel *k)
{
    struct xmt_tune_state *s = __atomic_load_n(&k->tune, __ATOMIC_ACQUIRE);
    if (s) return s;
    xmt_kernels_add_parts(&result_parts); /* cold: once per record */
    pthread_mutex_lock(&k->lock);
    s = k->tune;
    if (!s) {
        s = calloc(1, sizeof *s + k->nparams * sizeof(xmt_memo_arg));
        if (s) {
            pthread_rwlock_init(&s->lock, NULL);
            s->memo_nargs = xmt_memo_args(k, s->memo_args);
            __atomic_store_n(&k->tune, s, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&k->lock);
    return s;
}

static xmt_result *find_result(struct xmt_tune_state *ts, const uint8_t *key, size_t kl)
{
    xmt_result *r = NULL;
    pthread_rwlock_rdlock(&ts->lock);
    HASH_FIND(hh, ts->results, key, kl, r);
    pthread_rwlock_unlock(&ts->lock);
    return r;
}

/* A decided choice's config for this launch: 1 and *c, or 0 for the program's own (the
 * own config won, or the winner's condition does not hold for these arguments). Without
 * its label (xmt_entry_label writes it for a message): this runs at every launch that
 * misses the memo. */
_Static_assert(XMT_PIN_CONFIG == XMT_CAND_PIN, "the pin's index is the policy library's");
static int choice_config(const xmt_kernel *k, const xmt_launch_view *v, long index,
                         xmt_candidate *c)
{
    if (index == XMT_OWN_CONFIG) return 0;
    return xmt_entry_config(k->entry, index, v, c) == 1;
}

/* Set by the hit path when a queued key's countdown ran out: the launches this slow one
 * stands for (XMT_QUEUED_SAMPLE); 0 otherwise (it stands for itself). */
static __thread uint32_t tls_stands_for;

/* This thread's memo slot m was just stored from decision index of key r, which another
 * thread may have changed meanwhile (a background switch or drop, a re-check's drop), its
 * walk of the memos (xmt_memo_forget) perhaps before this store: then the slot is dropped,
 * so that a dropped winner never stays remembered here. The fence orders the store before
 * the load, as xmt_memo_forget's and xmt_memo_recheck_soon's order the change before their
 * walk. */
static void memo_settle(xmt_memo *m, const xmt_result *r, long index)
{
    if (!m) return;
    atomic_thread_fence(memory_order_seq_cst);
    if (__atomic_load_n(&r->index, __ATOMIC_RELAXED) != index) xmt_memo_drop(m);
}

/* Runs a decided key: the winner's config recomputed for this launch, or the program's. */
static CUresult run_winner(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                           xmt_result *r, int device, const CUresult *made)
{
    xmt_memo *m = xmt_memo_slot(k);
    const struct xmt_tune_state *ts = __atomic_load_n(&k->tune, __ATOMIC_ACQUIRE);
    const xmt_memo_arg *args = ts ? ts->memo_args : NULL;
    int nargs = ts ? ts->memo_nargs : -1;
    /* atomic: a re-check in another thread may drop the winner (drop_winner) */
    long index = __atomic_load_n(&r->index, __ATOMIC_ACQUIRE);
    if (index == XMT_OWN_CONFIG) {
        /* a key waiting for the background worker: its launches counted for the worker's
         * order, the memo's countdown sending one in XMT_QUEUED_SAMPLE here */
        int queued = atomic_load_explicit(&r->queued, memory_order_relaxed);
        if (queued)
            atomic_fetch_add_explicit(&r->queued_launches, tls_stands_for ? tls_stands_for : 1,
                                      memory_order_relaxed);
        xmt_memo_store(m, k, args, nargs, device, l, v->params, NULL, queued);
        if (m)
            __atomic_store_n(&m->recheck_in, queued ? XMT_QUEUED_SAMPLE : UINT32_MAX,
                             __ATOMIC_RELAXED);
        memo_settle(m, r, index);
        return made ? *made : xmt_pass(k, l);
    }
    xmt_candidate c;
    int ok = choice_config(k, v, index, &c);
    xmt_memo_store(m, k, args, nargs, device, l, v->params, ok ? &c : NULL, 0);
    if (m && ok) /* the hit path counts the launches to the next re-check from here */
        __atomic_store_n(&m->recheck_in,
                         atomic_load(&r->rechecks_left) > 0 ? atomic_load(&r->due_in) : UINT32_MAX,
                         __ATOMIC_RELAXED);
    memo_settle(m, r, index);
    if (made) /* this launch was made already: the program's own config, for a check */
        return *made;
    if (!ok) /* its condition does not hold for this launch's non-key arguments */
        return xmt_pass(k, l);
    return xmt_run_for_real(k, l, &c);
}

static int capturing(CUstream s)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!xmt_drv.cuStreamIsCapturing) return 0;
    CUresult r = CUDA_SUCCESS;
    XMT_IN_SHIM_SCOPE
    {
        r = xmt_drv.cuStreamIsCapturing(s, &st);
    }
    return r != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* ---- re-checks of a winner (docs/tuning.md, "Data that proves nothing") ---------------- */

/* Each gap between re-checks is RECHECK_GROWTH times the one before: 1, 8, 64, ... */
#define RECHECK_GROWTH 8
/* Set by the hit path when its countdown ran out: this launch re-checks. */
static __thread int tls_recheck_now;

/* A key just decided: its re-checks, when a winner (not the program's own config) won. */
static void recheck_setup(xmt_result *r, const xmt_choice *ch)
{
    /* re-checks its record says it passed already are not repeated */
    int left = ch->index == XMT_OWN_CONFIG ? 0 : xmt_opt.rechecks - ch->rechecked;
    atomic_store(&r->rechecks_left, left > 0 ? left : 0);
    r->time_ms = ch->time_ms;
    r->rechecked = ch->rechecked;
    r->gap = 1;
    atomic_store(&r->due_in, 2); /* the deciding launch counts one: the next is re-checked */
    memcpy(r->digest, ch->data, sizeof r->digest);
}

/* Whether this launch of decided key r re-checks its winner: the hit path said so, or
 * the key's count of slow-path launches ran out. */
static int recheck_is_due(xmt_result *r)
{
    if (tls_recheck_now) {
        tls_recheck_now = 0;
        return 1;
    }
    return atomic_load_explicit(&r->rechecks_left, memory_order_relaxed) > 0 &&
           atomic_fetch_sub(&r->due_in, 1) == 1;
}

/* A re-check found the winner wrong: the program's own config from now on, said once;
 * every thread that remembers the winner looks again at its next launch. */
static void drop_winner(xmt_kernel *k, xmt_result *r, const xmt_choice *own, const char *key_text)
{
    xmt_warn("%s: the winner %s for key %s gave other results than the program's own config "
             "at a re-check on later data; dropped: the program's own config is used%s",
             k->demangled, r->label, key_text,
             xmt_opt.mode == XMT_MODE_TUNE && r->index >= 0 && xmt_cache_path()[0]
                 ? " (and stored on disk)"
                 : "");
    snprintf(r->label, sizeof r->label, "%s", own->label); /* read by the re-checking thread only */
    __atomic_store_n(&r->index, XMT_OWN_CONFIG, __ATOMIC_RELEASE);
    atomic_store(&r->rechecks_left, 0);
    xmt_memo_recheck_soon(k);
}

static const xmt_bg_ops bg_ops;

/* A re-check of a winner tuned in the background (r->recheck_bg; docs/tuning.md, "In the
 * background"): no re-check waits on the program's thread, and no winner runs on data it was
 * not verified on, so this launch runs the program's own config and takes a snapshot, and
 * the key is a hint until the worker has verified the winner on that snapshot (bgjobs.c's
 * bg_done: it switches back, or the winner is dropped). A queue without room, or a launch
 * the winner does not apply to, moves the re-check a gap later. r: held (XMT_R_TUNING). */
static CUresult recheck_in_background(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                                      xmt_result *r, int device, const xmt_devinfo *di,
                                      const char *key_text)
{
    xmt_choice ch = {.index = r->index,
                     .time_ms = r->time_ms,
                     .rechecked = r->rechecked,
                     .rechecks = xmt_opt.rechecks};
    snprintf(ch.label, sizeof ch.label, "%s", r->label);
    memcpy(ch.data, r->digest, sizeof ch.data);
    xmt_plan p;
    int queued = 0;
    if (xmt_bg_room() &&
        xmt_plan_recheck_bg(k, l, v, di, (CUdevice)device, r->key + 4, r->keylen - 4, &ch, &p)) {
        /* the program's own config from this launch until the verdict (the snapshot is taken
         * before it); every thread's memo looks again */
        __atomic_store_n(&r->index, XMT_OWN_CONFIG, __ATOMIC_RELEASE);
        queued = xmt_bg_start(&bg_ops, k, l, v, device, r, &p, key_text) == 0;
        if (!queued) __atomic_store_n(&r->index, ch.index, __ATOMIC_RELEASE);
        xmt_memo_forget(k);
    }
    if (queued) {
        atomic_fetch_sub(&r->rechecks_left, 1);
        xmt_verbose(1,
                    "%s: key %s: the winner %s is re-checked in the background on this "
                    "launch's data; the program's own config runs until it passes",
                    k->demangled, key_text, ch.label);
    }
    r->gap = r->gap > UINT32_MAX / RECHECK_GROWTH ? UINT32_MAX : r->gap * RECHECK_GROWTH;
    atomic_store(&r->due_in, r->gap);
    xmt_result_move(r, XMT_R_DONE);
    return run_winner(k, l, v, r, device, NULL);
}

/* Re-checks decided key r's winner on this launch's data (one thread at a time: the key
 * is XMT_R_TUNING meanwhile, and other threads run the program's own config), then runs the
 * launch with what stands. A re-check that cannot run now (capture, another thread's)
 * is due at the next launch. */
static __attribute__((noinline, cold)) CUresult recheck_winner(xmt_kernel *k, const xmt_launch *l,
                                                               const xmt_launch_view *v,
                                                               xmt_result *r, int device)
{
    int s = XMT_R_DONE;
    const xmt_devinfo *di = xmt_device_info((CUdevice)device);
    if (!di || capturing(xmt_launch_stream(l)) ||
        !atomic_compare_exchange_strong(&r->state, &s, XMT_R_TUNING)) {
        atomic_store(&r->due_in, 1);
        return run_winner(k, l, v, r, device, NULL);
    }
    char key_text[512], digest[17] = "";
    if (xmt_entry_key_render(k->entry, r->key + 4, r->keylen - 4, key_text, sizeof key_text) < 0)
        snprintf(key_text, sizeof key_text, "?");
    if (r->recheck_bg) return recheck_in_background(k, l, v, r, device, di, key_text);
    xmt_choice own;
    int f = xmt_plan_recheck(k, l, v, di, (CUdevice)device, r->key + 4, r->keylen - 4, key_text,
                             r->index, digest, &own);
    if (f == XMT_RECHECK_FAILED) {
        drop_winner(k, r, &own, key_text);
    } else {
        /* only data other than the last check's is new evidence */
        if (f == XMT_RECHECK_PASSED && digest[0] && strcmp(digest, r->digest) != 0) {
            memcpy(r->digest, digest, sizeof r->digest);
            atomic_fetch_sub(&r->rechecks_left, 1);
            if (r->index >= 0 && r->rechecked++ == 0) {
                /* the first re-check passed on new data: the record says so (rechecked), and
                 * a later process may use it at once (docs/cache.md, Trust) */
                xmt_choice ch = {.index = r->index, .time_ms = r->time_ms, .rechecked = 1};
                snprintf(ch.label, sizeof ch.label, "%s", r->label);
                memcpy(ch.data, digest, sizeof ch.data);
                xmt_plan_store_rechecked(k, di, (CUdevice)device, r->key + 4, r->keylen - 4,
                                         key_text, &ch);
            }
        }
        r->gap = r->gap > UINT32_MAX / RECHECK_GROWTH ? UINT32_MAX : r->gap * RECHECK_GROWTH;
        atomic_store(&r->due_in, r->gap);
    }
    xmt_result_move(r, XMT_R_DONE);
    return run_winner(k, l, v, r, device, NULL);
}

/* Runs a decided key, re-checking its winner first when that is due. made: this launch
 * was made already (trialtune.c's check of the helper), what it returned; else NULL. */
static CUresult run_choice(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                           xmt_result *r, int device, const CUresult *made)
{
    int due = __atomic_load_n(&r->index, __ATOMIC_ACQUIRE) != XMT_OWN_CONFIG && recheck_is_due(r);
    if (due && !made) return recheck_winner(k, l, v, r, device);
    if (due) /* this launch was made already (a trial check): the next one re-checks */
        atomic_store(&r->due_in, 1);
    return run_winner(k, l, v, r, device, made);
}

/* The lookup key of a launch: the device (4 bytes), then the entry's key. 0 when the
 * entry's key cannot be computed for it (warned once per kernel). */
static size_t launch_key(xmt_kernel *k, struct xmt_tune_state *ts, const xmt_launch_view *v,
                         CUdevice dev, uint8_t *key)
{
    int32_t d32 = (int32_t)dev;
    memcpy(key, &d32, 4);
    size_t kl = xmt_entry_key(k->entry, v, key + 4, XMT_KEY_MAX);
    if (kl == 0) {
        if (xmt_first_time(&ts->key_error_warned))
            xmt_warn("%s: the lookup key of policy %s cannot be computed for this launch; such "
                     "launches pass through",
                     k->demangled, xmt_entry_origin(k->entry));
        return 0;
    }
    return kl + 4;
}

/* Claims a key for this thread: NULL and *theirs when another thread has it already. */
static xmt_result *claim_key(struct xmt_tune_state *ts, const uint8_t *key, size_t kl,
                             xmt_result **theirs)
{
    xmt_result *mine = calloc(1, sizeof(xmt_result) + kl);
    *theirs = NULL;
    if (!mine) return NULL;
    mine->keylen = kl;
    memcpy(mine->key, key, kl);
    atomic_store(&mine->state, XMT_R_TUNING);
    pthread_rwlock_wrlock(&ts->lock);
    HASH_FIND(hh, ts->results, key, kl, *theirs);
    if (!*theirs) HASH_ADD(hh, ts->results, key, kl, mine);
    pthread_rwlock_unlock(&ts->lock);
    if (*theirs) {
        free(mine);
        return NULL;
    }
    return mine;
}

/* Launches of a key whose data proved nothing that try again, in a process. */
#define DEFER_TRIES 16

/* A key whose session's data proved nothing (docs/tuning.md, "Data that proves nothing"):
 * nothing is decided; the program's own config runs and the key's next launch tries
 * again (XMT_R_WAITING, due at once), DEFER_TRIES times at most. Returns 1 when it waits;
 * 0 after the last try, with p's choice the program's own config for the rest of the
 * process (not stored on disk) and a message. */
static int defer_key(const xmt_kernel *k, xmt_result *mine, xmt_plan *p, const char *key_text)
{
    if (++mine->tries < DEFER_TRIES) {
        if (p->claimed) xmt_plan_unclaim(&p->id, mine->key + 4, mine->keylen - 4);
        atomic_store(&mine->recheck_ms, 0.0);
        xmt_result_move(mine, XMT_R_WAITING);
        return 1;
    }
    xmt_warn("%s: key %s: the data of its first %d launches proved nothing (what each read "
             "and wrote repeats one value); the program's own config is kept (and remembered "
             "in the cache: XMATUNE_RETUNE=outcomes tries it again)",
             k->demangled, key_text, DEFER_TRIES);
    char why[120];
    snprintf(why, sizeof why, "the data of its first %d launches proved nothing", DEFER_TRIES);
    xmt_choice_outcome(&p->ch, XMT_OUTCOME_UNTOLD, why);
    /* remembered (docs/cache.md, "Every outcome"): a later run does not try it again */
    p->store_on_disk = !p->recheck && !p->from_cache;
    return 0;
}

/* XMATUNE_AUTO_MIN_US: a kernel auto tunes whose key's best config (the winner's time as
 * its session measured it; the program's own when it stays) runs for less than that is not
 * worth a session per key nor the hit path per launch: it passes through from now on. */
static void auto_too_short(xmt_kernel *k, const xmt_choice *ch, const char *key_text)
{
    if (!xmt_auto_owns(k->entry) || !(ch->time_ms > 0) ||
        ch->time_ms * 1000.0 >= xmt_opt.auto_min_us)
        return;
    xmt_kernels_pass_through(k);
    xmt_verbose(1,
                "XMATUNE_AUTO: %s: %.2f us for %s, under XMATUNE_AUTO_MIN_US (%g us): the "
                "kernel passes through from now on",
                k->demangled, ch->time_ms * 1000.0, key_text, xmt_opt.auto_min_us);
}

/* A key decided from the disk at its first launch here: a -v line for a record that keeps
 * the program's own config, and the cache_hit event with the host time so far (t0: when
 * this launch entered the tuner). */
static void said_cache_hit(const xmt_kernel *k, const xmt_plan *p, int device, const char *key_text,
                           double t0)
{
    double host_us = (xmt_now_ms() - t0) * 1000.0;
    const xmt_choice *c = &p->ch;
    if (c->index == XMT_OWN_CONFIG)
        xmt_verbose(1, "%s: key %s: the cache keeps the program's own config (%s%s%s)",
                    k->demangled, key_text, c->outcome[0] ? c->outcome : "it was timed fastest",
                    c->why[0] ? ": " : "", c->why);
    else
        xmt_verbose(1, "%s: key %s: %s from the cache (%s%s)", k->demangled, key_text, c->label,
                    p->trust ? p->trust : "used",
                    !strcmp(c->origin, "remote") ? ", from the fleet's tier" : "");
    if (xmt_log_enabled())
        xmt_log_event(xmt_ev_cache_hit(k->mangled, k->demangled, key_text, device,
                                       c->index == XMT_OWN_CONFIG ? NULL : c->label, c->outcome,
                                       c->why, p->trust ? p->trust : "used", c->origin, host_us));
}

/* Keys decided (n = 1), or one not decided after all (n = -1: bgjobs.c, a key the fleet
 * has): counted in k's tuned keys (the report's, and auto's cap). */
static void count_keys(xmt_kernel *k, int n)
{
    pthread_mutex_lock(&k->lock);
    k->tune->keys_tuned += (unsigned)n;
    pthread_mutex_unlock(&k->lock);
}

static void count_key(xmt_kernel *k)
{
    count_keys(k, 1);
}

/* What the background jobs (bgjobs.c) do to a key's result through this file. */
static const xmt_bg_ops bg_ops = {run_winner, auto_too_short, count_keys};

/* A key that would wait for the background worker (a session, or a hint's verification)
 * while XMATUNE_BACKGROUND_QUEUE keys wait already: deferred before anything that costs
 * more, its claim on disk above all (two file locks and a write, then the unclaim: where a
 * scalar new at every launch made every launch such a key, those launches cost 167 to 232
 * us more on the H100 at 19:06 of 2026-12-07, docs/benchmarks.md). Under
 * auto it counts against XMATUNE_AUTO_MAX_KEYS until it is queued, so that such a kernel
 * reaches the cap as it does under sync, and passes through from then on. 1 when deferred
 * (r waits, looked at again XMT_RECHECK_MS later). */
static int bg_deferred(xmt_kernel *k, xmt_result *r, const xmt_plan *p, const char *key_text)
{
    if (!xmt_plan_in_background(p) && !(p->bg_verify && p->hint)) return 0;
    int busy = xmt_bg_busy(k, r, p, key_text);
    if (busy == !!r->bg_deferred) return busy;
    r->bg_deferred = busy; /* the thread holding r's state (XMT_R_TUNING) only */
    pthread_mutex_lock(&k->lock);
    k->tune->keys_deferred += busy ? 1u : (unsigned)-1;
    pthread_mutex_unlock(&k->lock);
    return busy;
}

/* A key this thread claimed: decide it (tuning if the plan says so), publish, store.
 * t0: when this launch entered the tuner. */
static CUresult decide_key(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v, int device,
                           xmt_result *mine, xmt_plan *p, const char *key_text, double t0)
{
    XMT_ASSERT(atomic_load_explicit(&mine->state, memory_order_relaxed) == XMT_R_TUNING,
               "a key decided by a thread that does not hold it");
    /* a cached winner verified off the program's path: the snapshot before the launch, or,
     * when there can be none, the verification now as strict trust makes it */
    CUresult rc;
    if (xmt_plan_in_background(p)) {
        if (xmt_bg_tune(&bg_ops, k, l, v, device, mine, p, key_text, &rc)) return rc;
        /* tuned on this launch after all: the fleet's claim, left to the worker, is taken now */
        if (xmt_plan_claim_fleet(k, v, p)) {
            xmt_result_wait(mine);
            return xmt_pass(k, l);
        }
    }
    int bg = 0;
    if (p->bg_verify && p->hint && xmt_bg_busy(k, mine, p, key_text)) return xmt_pass(k, l);
    if (p->bg_verify) {
        bg = xmt_bg_start(&bg_ops, k, l, v, device, mine, p, key_text) == 0;
        if (!bg) xmt_plan_verify_now(p);
    }
    if (p->need_run) xmt_plan_run(k, l, v, device, p, key_text);
    if (p->need_run) auto_too_short(k, &p->ch, key_text);
    if (p->deferred && defer_key(k, mine, p, key_text))
        return p->launched ? p->launch_rc : xmt_pass(k, l);
    /* a record that keeps the program's own config because the key cannot be tuned where its
     * candidates may run: auto passes the kernel through, as the session that decided it did */
    if (p->cached && !p->need_run && !strcmp(p->ch.outcome, XMT_OUTCOME_DECLINED) &&
        xmt_auto_owns(k->entry))
        xmt_kernels_pass_through(k);
    /* a hint runs the program's own config until its verification passes (bgjobs.c) */
    int hint = bg && p->hint;
    mine->index = hint ? XMT_OWN_CONFIG : p->ch.index;
    recheck_setup(mine, &p->ch);
    /* the background verification is this process's check: none waits on the program */
    if (bg) atomic_store(&mine->rechecks_left, 0);
    snprintf(mine->label, sizeof mine->label, "%s", hint ? "" : p->ch.label);
    if (p->cached) said_cache_hit(k, p, device, key_text, t0);
    count_key(k);
    xmt_result_move(mine, XMT_R_DONE);
    if (p->store_on_disk) {
        /* a winner says how many of this process's later launches will re-check it (a failure
         * writes the key's record again): with none, a later process takes it as a hint */
        xmt_choice ch = p->ch;
        if (ch.index >= 0 && !ch.origin[0]) ch.rechecks = atomic_load(&mine->rechecks_left);
        xmt_plan_store(&p->id, mine->key + 4, mine->keylen - 4, device, key_text, &ch);
    } else if (p->claimed) /* nothing worth keeping came of it: another process may try */
        xmt_plan_unclaim(&p->id, mine->key + 4, mine->keylen - 4);
    return run_choice(k, l, v, mine, device, p->launched ? &p->launch_rc : NULL);
}

/* A key another process is tuning, looked at again: its winner is in the cache now (it is
 * used, verified once first), its claim is gone (this process tunes it), or it still
 * waits. */
static CUresult recheck(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                        const xmt_devinfo *di, CUdevice dev, xmt_result *r)
{
    char key_text[512];
    if (xmt_entry_key_render(k->entry, r->key + 4, r->keylen - 4, key_text, sizeof key_text) < 0)
        snprintf(key_text, sizeof key_text, "?");
    xmt_plan plan;
    xmt_plan_new_key(k, v, di, dev, r->key + 4, r->keylen - 4, key_text, &plan);
    if ((plan.need_run || plan.bg_verify) && capturing(xmt_launch_stream(l))) {
        xmt_result_wait(r);
        return xmt_pass(k, l);
    }
    if (bg_deferred(k, r, &plan, key_text)) return xmt_pass(k, l);
    if (xmt_plan_claim_on_disk(k, v, dev, &plan)) {
        xmt_result_wait(r);
        return xmt_pass(k, l);
    }
    return decide_key(k, l, v, (int)dev, r, &plan, key_text, xmt_now_ms());
}

/* A decided key: run it; a key another thread is tuning: the program's own config; a key
 * another process is tuning: the same, looking at the cache again now and then. */
static CUresult run_known(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                          xmt_result *r, const xmt_devinfo *di, CUdevice dev)
{
    int s = atomic_load_explicit(&r->state, memory_order_acquire);
    if (s == XMT_R_DONE) return run_choice(k, l, v, r, (int)dev, NULL);
    if (s == XMT_R_WAITING && xmt_now_ms() >= atomic_load(&r->recheck_ms) &&
        atomic_compare_exchange_strong(&r->state, &s, XMT_R_TUNING))
        return recheck(k, l, v, di, dev, r);
    return xmt_pass(k, l);
}

/* A launch made ready for a decision: its view and lookup key. v points into argv and
 * attrs, so a keyed_t is used where it was made and never copied. */
typedef struct {
    struct xmt_tune_state *ts;
    void *argv[XMT_KERNEL_MAX_PARAMS];
    CUdevice dev;
    const xmt_devinfo *di;
    xmt_attrs attrs;
    xmt_launch_view v;
    uint8_t key[4 + XMT_KEY_MAX];
    size_t kl;
} keyed_t;

/* The opening that tune_launch_slow and xmt_tune_known share: k's tuner state, l's view
 * and l's key, into q. 0 when any of them cannot be had (l's key cannot be computed). */
static int launch_keyed(xmt_kernel *k, const xmt_launch *l, keyed_t *q)
{
    q->ts = state_of(k);
    q->dev = 0;
    q->di = NULL;
    q->kl = 0;
    return q->ts && xmt_tuner_view(k, l, q->argv, &q->attrs, &q->v, &q->dev, &q->di) &&
           (q->kl = launch_key(k, q->ts, &q->v, q->dev, q->key)) != 0;
}

/* XMATUNE_AUTO_MAX_KEYS: a kernel auto tunes whose keys reached the cap (a scalar that
 * changes at every call, a counter or an RNG offset, would make every launch a new key
 * and tune forever) passes through from now on, its tuned keys with it. 1 when so. */
static int auto_capped(xmt_kernel *k, const struct xmt_tune_state *ts)
{
    if (!xmt_auto_owns(k->entry)) return 0;
    pthread_mutex_lock(&k->lock);
    unsigned waiting = ts->keys_deferred, keys = ts->keys_tuned + waiting;
    pthread_mutex_unlock(&k->lock);
    if (keys < (unsigned)xmt_opt.auto_max_keys) return 0;
    xmt_kernels_pass_through(k);
    if (waiting)
        xmt_warn("XMATUNE_AUTO: %s: %u keys tuned or waiting for room in the background queue "
                 "(%u of them: XMATUNE_AUTO_MAX_KEYS counts both); a new one came, so the kernel "
                 "passes through untuned from now on",
                 k->demangled, keys, waiting);
    else
        xmt_warn("XMATUNE_AUTO: %s: %u keys tuned (XMATUNE_AUTO_MAX_KEYS); a new one came, so "
                 "the kernel passes through untuned from now on",
                 k->demangled, keys);
    return 1;
}

static __attribute__((noinline)) CUresult tune_launch_slow(xmt_kernel *k, xmt_launch *l)
{
    double t0 = xmt_now_ms();
    atomic_fetch_add_explicit(&k->launches, 1, memory_order_relaxed);
    if (!xmt_launch_rewritable(l)) return xmt_pass(k, l);
    keyed_t q;
    if (!launch_keyed(k, l, &q)) return xmt_pass(k, l);
    xmt_result *r = find_result(q.ts, q.key, q.kl);
    if (r) return run_known(k, l, &q.v, r, q.di, q.dev);

    /* A new key. */
    if (auto_capped(k, q.ts)) return xmt_pass(k, l);
    char key_text[512];
    if (xmt_entry_key_render(k->entry, q.key + 4, q.kl - 4, key_text, sizeof key_text) < 0)
        snprintf(key_text, sizeof key_text, "?");
    xmt_plan plan;
    xmt_plan_new_key(k, &q.v, q.di, q.dev, q.key + 4, q.kl - 4, key_text, &plan);
    /* Under capture nothing runs but the launch itself (a rewrite would be baked into the
     * graph): an unverified pin or an untuned key keeps the program's config, and the next
     * launch outside capture decides. */
    if ((plan.need_run || plan.bg_verify) && capturing(xmt_launch_stream(l))) return xmt_pass(k, l);
    xmt_result *mine = claim_key(q.ts, q.key, q.kl, &r);
    if (!mine) return r ? run_known(k, l, &q.v, r, q.di, q.dev) : xmt_pass(k, l);
    if (bg_deferred(k, mine, &plan, key_text)) return xmt_pass(k, l);
    if (xmt_plan_claim_on_disk(k, &q.v, q.dev, &plan)) {
        xmt_result_wait(mine);
        return xmt_pass(k, l);
    }
    return decide_key(k, l, &q.v, (int)q.dev, mine, &plan, key_text, t0);
}

int xmt_tune_known(xmt_kernel *k, const xmt_launch *l, xmt_candidate *c, char *key_text,
                   size_t key_len, const char **why)
{
    *why = NULL;
    snprintf(key_text, key_len, "?");
    keyed_t q;
    if (!launch_keyed(k, l, &q)) {
        *why = "its lookup key cannot be computed";
        return -1;
    }
    if (xmt_entry_key_render(k->entry, q.key + 4, q.kl - 4, key_text, key_len) < 0)
        snprintf(key_text, key_len, "?");
    xmt_result *r = find_result(q.ts, q.key, q.kl);
    long index;
    if (r && atomic_load_explicit(&r->state, memory_order_acquire) == XMT_R_DONE) {
        index = __atomic_load_n(&r->index, __ATOMIC_ACQUIRE);
    } else {
        /* Not decided here yet: a pin or a winner on disk may decide it without a run. */
        xmt_plan plan;
        xmt_plan_new_key(k, &q.v, q.di, q.dev, q.key + 4, q.kl - 4, key_text, &plan);
        if (plan.need_run || (plan.bg_verify && plan.hint) ||
            (plan.ch.index == XMT_OWN_CONFIG && !plan.cached)) {
            *why = plan.from_cache ? "its cached winner is not verified in this process yet"
                   : plan.only_index == XMT_PIN_CONFIG && plan.need_run
                       ? "its pin is not verified yet"
                       : "its key has no winner yet";
            return -1;
        }
        index = plan.ch.index;
    }
    return choice_config(k, &q.v, index, c);
}

/* The hit path's countdown ran out: this launch goes the slow way and re-checks the winner
 * there (run_choice). The memo asks again at the next launch unless the slow path
 * stores it anew (another thread may be re-checking the key now). */
static __attribute__((noinline, cold)) CUresult recheck_due(xmt_kernel *k, xmt_launch *l,
                                                            xmt_memo *m)
{
    m->launches--; /* the slow path counts this launch */
    m->recheck_in = 1;
    tls_recheck_now = 1;
    CUresult r = tune_launch_slow(k, l);
    tls_recheck_now = 0;
    return r;
}

/* A queued key's countdown ran out (its own config's hit path): this launch goes the slow
 * way, counted there for XMT_QUEUED_SAMPLE launches (run_winner). */
static __attribute__((noinline, cold)) CUresult queued_due(xmt_kernel *k, xmt_launch *l,
                                                           xmt_memo *m)
{
    m->launches--;              /* the slow path counts this launch */
    m->recheck_in = UINT32_MAX; /* the slow path sets it again when it stores the key */
    tls_stands_for = XMT_QUEUED_SAMPLE;
    CUresult r = tune_launch_slow(k, l);
    tls_stands_for = 0;
    return r;
}

/* The fast path of a decided key: this thread launched this kernel with these argument
 * bytes and dims before (see xmt_memo). Everything else is tune_launch_slow's. */
CUresult xmt_tune_launch(xmt_kernel *k, xmt_launch *l)
{
    xmt_memo *m = xmt_tls_memo;
    CUdevice dev;
    if (__builtin_expect(m != NULL && l->params != NULL, 1) && xmt_launch_rewritable(l) &&
        xmt_current_device(&dev)) {
        m = xmt_memo_of(m, k);
        if (xmt_memo_hit(m, k, (int)dev, l, (void *const *)l->params)) {
            m->launches++;
            if (m->own) {
                /* UINT32_MAX for a decided key; XMT_QUEUED_SAMPLE for one that waits for the
                 * background worker (its launches counted, queued_due) */
                if (__builtin_expect(--m->recheck_in == 0, 0)) return queued_due(k, l, m);
                m->passed++;
                return xmt_launch_call(l);
            }
            if (__builtin_expect(--m->recheck_in == 0, 0)) return recheck_due(k, l, m);
            if (m->c.nargs == 0 && l->kind == XMT_K_LAUNCH) {
                const xmt_dims *d = &m->c.dims;
                CUresult r = ((xmt_pfn_launch)l->real)(l->f, d->grid.x, d->grid.y, d->grid.z,
                                                       d->block.x, d->block.y, d->block.z,
                                                       d->shared, l->stream, l->params, l->extra);
                if (r == CUDA_SUCCESS) {
                    m->rewritten++;
                    return r;
                }
                if (!xmt_refused(r)) return r;
            }
            return xmt_run_for_real(k, l, &m->c);
        }
        /* another key of this kernel that this thread saw keep the program's own config */
        if (m->own_n && xmt_memo_own_hit(m, k, (int)dev, l, (void *const *)l->params)) {
            m->launches++;
            m->passed++;
            return xmt_launch_call(l);
        }
    }
    return tune_launch_slow(k, l);
}

/* ---- lifecycle and report ----------------------------------------------------------------- */

void xmt_tuner_init(void)
{
    if (xmt_opt.mode == XMT_MODE_TUNE || xmt_opt.mode == XMT_MODE_REPLAY) xmt_cache_load();
}

void xmt_tune_report(xmt_kernel *k, FILE *table)
{
    unsigned keys = (k->tune ? k->tune->keys_tuned : 0) + k->keys_retired;
    uint64_t launches = atomic_load(&k->launches), rewritten = atomic_load(&k->rewritten),
             passed = atomic_load(&k->passed);
    uint64_t glaunches = atomic_load(&k->graph_launches), gnodes = atomic_load(&k->graph_nodes),
             grewritten = atomic_load(&k->graph_rewritten),
             guntuned = atomic_load(&k->graph_untuned);
    /* graph.c's counts: replays' launches apart; nodes added or set */
    xmt_ev_summary_info s = {.kernel = k->mangled,
                             .name = k->demangled,
                             .launches = launches,
                             .rewritten = rewritten,
                             .passed_through = passed,
                             .keys = keys,
                             .graph_launches = glaunches,
                             .graph_nodes = gnodes,
                             .graph_nodes_rewritten = grewritten,
                             .graph_nodes_untuned = guntuned,
                             .policy = xmt_entry_origin(k->entry)};
    if (xmt_log_enabled()) xmt_log_event(xmt_ev_kernel_summary(&s));
    if (table) {
        char nodes[32] = "-";
        if (gnodes)
            snprintf(nodes, sizeof nodes, "%llu/%llu", (unsigned long long)grewritten,
                     (unsigned long long)gnodes);
        /* a kernel auto stopped tuning (its cap, XMATUNE_AUTO_MIN_US, declined) takes the
         * pass-through path from then on, which counts nothing per kernel (docs/log.md,
         * kernel_summary): its line says so rather than look like all its launches */
        char since[96] = "";
        if (__atomic_load_n(&k->passthrough, __ATOMIC_RELAXED))
            snprintf(since, sizeof since,
                     "  [passes through since its launch %llu: later ones are in the total only]",
                     (unsigned long long)launches);
        fprintf(table, "xmatune: %10llu %10llu %6u %10llu %11s  %s%s%s\n",
                (unsigned long long)launches, (unsigned long long)rewritten, keys,
                (unsigned long long)glaunches, nodes, k->demangled,
                guntuned ? "  [in a graph, not tuned]" : "", since);
    }
}
