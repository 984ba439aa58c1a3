/*
 * bgverify: verifications off the program's path (see bgverify.h).
 */
#include "bgverify.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "driver.h"
#include "guard.h"
#include "log.h"
#include "options.h"
#include "trialprog.h"

typedef struct job {
    struct job *next;
    xmt_trial_snap *snap;
    int tune; /* a whole session (background tuning), not a verification of `only` */
    xmt_candidate only;
    long only_index;
    char record_data[17];
    int has_data;
    char key_text[512];
    xmt_bgverify_done done;
    xmt_bgtune_start start;     /* a tuning's step before its session (may be NULL) */
    xmt_bgtune_partial partial; /* a tuning's: what its session decided, at an exit that cuts it */
    char decided[sizeof(((xmt_choice *)0)->decided)]; /* a tuning's partial record's */
    void *ud;
    CUcontext warm; /* a pool warm-up (xmt_bgverify_warm): no snapshot, no callback */
    /* a tuning's place in the order (take_next): its key's launches so far, when it was
     * queued, its launch's time once known (-1 before) */
    xmt_bgtune_launches launches;
    double queued_ms, own_ms;
} job;

/* The module's state: the queue, the worker, and whether the process is exiting. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;   /* a job queued, or stopping */
    pthread_cond_t idle; /* the pending count went down */
    job *head, *tail;
    int pending; /* queued + running */
    int started, stopping;
    /* the exit's wait has begun (xmt_bgverify_stop): an outcome that comes now may be the
     * driver's teardown speaking, not the key's (worker) */
    int exiting;
    struct timespec rest_until; /* XMATUNE_BACKGROUND_SHARE: no session starts before it */
    int resting;
    double last_end_ms; /* when the last session ended (xmt_now_ms), 0 before the first */
    job *running;       /* the worker's job, NULL between jobs */
    pthread_t worker;
} bg = {.lock = PTHREAD_MUTEX_INITIALIZER,
        .cv = PTHREAD_COND_INITIALIZER,
        .idle = PTHREAD_COND_INITIALIZER};

/* The first stream-ordered allocation in a context costs the driver milliseconds (the
 * device's memory pool made ready: 6.8 to 17.9 ms on an H100, whatever its size, then tens
 * of µs); a snapshot's first copy on the program's thread would pay it at a launch. Made
 * here instead, on the worker, on a stream of its own, once per context; a snapshot taken
 * before it has ended uses the program's allocator (trialsnap.c, pool_ready). */
static void warm_pool(CUcontext ctx)
{
    CUstream st = NULL;
    CUdeviceptr p = 0;
    if (!xmt_drv.cuMemAllocAsync || !xmt_drv.cuMemFreeAsync || !xmt_drv.cuStreamCreate ||
        !xmt_drv.cuStreamDestroy || xmt_drv.cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        xmt_drv.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return;
    int ok = xmt_drv.cuMemAllocAsync(&p, (size_t)1 << 20, st) == CUDA_SUCCESS;
    if (ok) xmt_drv.cuMemFreeAsync(p, st);
    if (xmt_drv.cuStreamSynchronize(st) == CUDA_SUCCESS && ok) xmt_trial_pool_ready(ctx);
    xmt_drv.cuStreamDestroy(st);
}

static struct timespec deadline(int ms);

/* A queued tuning's launch time per launch, in ms: its snapshot's launch's time; while that
 * launch still runs, how long it has run at least; 1 where the events cannot say (every
 * tuning is then ordered by its launches alone). */
static double own_ms(job *j)
{
    if (j->own_ms >= 0) return j->own_ms;
    double ms = xmt_trial_snap_own_ms(j->snap);
    if (ms == -1) { /* still running */
        double ran = xmt_now_ms() - j->queued_ms;
        return ran > 1e-3 ? ran : 1e-3;
    }
    j->own_ms = ms >= 0 ? ms : 1.0;
    return j->own_ms;
}

/* The next job (the lock held; the queue not empty), unlinked: the first warm-up or
 * verification (a cached winner made usable at the cost of one comparison), else the tuning
 * whose key has the most launch time so far, its launches times its launch's time (issue 49:
 * the keys that cost the program most get their winners first); the first of equals. */
static job *take_next(void)
{
    job **at = &bg.head, *prev = NULL, *at_prev = NULL;
    double best = -1;
    uint64_t best_n = 0;
    int tunings = 0;
    for (job **pp = &bg.head; *pp; prev = *pp, pp = &(*pp)->next) {
        job *j = *pp;
        if (!j->tune) {
            at = pp, at_prev = prev, tunings = 0;
            break;
        }
        tunings++;
        if (!bg.head->next) break; /* one job: nothing to order */
        uint64_t n = j->launches ? j->launches(j->ud) : 1;
        double w = (double)(n ? n : 1) * own_ms(j);
        if (w > best) best = w, best_n = n, at = pp, at_prev = prev;
    }
    job *j = *at;
    *at = j->next;
    if (bg.tail == j) bg.tail = at_prev;
    if (tunings > 1)
        xmt_verbose(2,
                    "background: key %s tuned next: %llu launch%s of %.3f ms so far, the most "
                    "launch time of the %d keys waiting",
                    j->key_text, (unsigned long long)best_n, best_n == 1 ? "" : "es", own_ms(j),
                    tunings);
    return j;
}

/* A session that ended during the exit's wait with an outcome (declined, failed, faulted,
 * ...) rather than a winner or the program's own config timed fastest: cut, as if the exit
 * had come first, so that nothing is decided on it. The driver may be going down by then (a
 * runtime's exit handler that ran before the wait: every call fails), and a failure is not
 * the key's to keep; the next run tunes or verifies it again (a tuning resumes from its
 * partial record, if an earlier run left one). Said at -v 1. Under bg.lock. */
static int cut_by_exit(const job *j, int learned, const xmt_trial_outcome *o, const char *why)
{
    if (!bg.exiting || (learned && !o->choice.outcome[0])) return 0;
    xmt_verbose(1,
                "key %s: its background %s ended during the program's exit without a winner "
                "(%s): nothing is kept of it; the next run %s it again",
                j->key_text, j->tune ? "tuning" : "verification",
                learned ? (o->choice.why[0] ? o->choice.why : o->choice.outcome) : why,
                j->tune ? "tunes" : "verifies");
    return 1;
}

static void *worker(void *arg)
{
    (void)arg;
    /* the worker is the shim's own thread: its driver calls never go through the hooks */
    xmt_in_shim = 1;
    /* and never break a stream capture of the program's: under the default (global) mode
     * a thread's "potentially unsafe" call (an allocation or a free, a synchronization)
     * while another thread captures in global mode invalidates that capture; the pool
     * warm-up beside a program's capture did so on an H100 (graph_captured: error 901).
     * Relaxed, the worker's calls, on streams and memory of its own, leave it alone. */
    CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (xmt_drv.cuThreadExchangeStreamCaptureMode)
        xmt_drv.cuThreadExchangeStreamCaptureMode(&relaxed);
    pthread_mutex_lock(&bg.lock);
    for (;;) {
        while (!bg.head && !bg.stopping)
            pthread_cond_wait(&bg.cv, &bg.lock);
        /* the share: the rest the last session earned, unless the process is exiting */
        int r = 0;
        while (bg.resting && !bg.stopping && r != ETIMEDOUT)
            r = pthread_cond_timedwait(&bg.cv, &bg.lock, &bg.rest_until);
        bg.resting = 0;
        if (bg.stopping) break;
        job *j = take_next();
        bg.running = j;
        pthread_mutex_unlock(&bg.lock);
        if (j->warm) {
            warm_pool(j->warm);
            free(j);
            pthread_mutex_lock(&bg.lock);
            bg.running = NULL;
            bg.pending--;
            pthread_cond_broadcast(&bg.idle);
            continue;
        }
        xmt_trial_outcome o;
        char why[400] = "";
        /* a tuning's start may wait (the fleet's claim): not under the lock, not timed */
        int skip = j->tune && j->start && j->start(j->ud, why, sizeof why);
        if (skip) memset(&o, 0, sizeof o);
        double t0 = xmt_now_ms();
        int learned =
            skip ? 0
            : j->tune
                ? xmt_trial_tune_snap(j->snap, j->key_text, 0, j->decided, &o, why, sizeof why) == 1
                : xmt_trial_verify_snap(j->snap, j->key_text, &j->only, j->only_index,
                                        j->has_data ? j->record_data : NULL, &o, why, sizeof why);
        xmt_trial_snap_free(j->snap);
        double end = xmt_now_ms(), ran = end - t0;
        pthread_mutex_lock(&bg.lock);
        if (xmt_opt.background_share < 100) {
            double rest = ran * (100 - xmt_opt.background_share) / xmt_opt.background_share;
            bg.rest_until = deadline((int)(rest + 0.5));
            bg.resting = 1;
            xmt_verbose(2,
                        "background: a session of %.1f ms, started %.1f ms after the last one "
                        "ended; the next starts %.1f ms after it (XMATUNE_BACKGROUND_SHARE=%d)",
                        ran, bg.last_end_ms > 0 ? t0 - bg.last_end_ms : -1.0, rest,
                        xmt_opt.background_share);
        }
        bg.last_end_ms = end;
        /* the callback runs under the lock: stop() then knows that none runs after it */
        if (!bg.stopping && !cut_by_exit(j, learned, &o, why))
            j->done(j->ud, learned, &o, why);
        else
            free(j->ud); /* dropped: the callback's to free, and it does not run */
        free(j);
        bg.running = NULL;
        bg.pending--;
        pthread_cond_broadcast(&bg.idle);
    }
    pthread_mutex_unlock(&bg.lock);
    return NULL;
}

/* At exit, before the runtime's teardown (queue() says why): the wait, the cut. */
static void exit_early(void)
{
    xmt_bgverify_stop(xmt_opt.exit_wait_ms);
}

/* Queues j (taking it and its snapshot), the worker started with the first. 0, or -1 (j and
 * its snapshot freed). */
static int queue(job *j)
{
    pthread_mutex_lock(&bg.lock);
    int ok = !bg.stopping;
    if (ok && !bg.started) {
        /* the worker takes no signal the program handles (they belong to its threads) */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        ok = pthread_create(&bg.worker, NULL, worker, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (ok) {
            pthread_detach(bg.worker);
            bg.started = 1;
            /* The exit's wait (XMATUNE_EXIT_WAIT_MS) must run while the program's context is
             * alive. The shim's own handler (shim.c) was registered at its activation, before
             * the CUDA runtime registered the one that tears the context down at exit, so it
             * runs after that one: on an H100 every session that ended in it failed with
             * CUDA_ERROR_DEINITIALIZED (2026-12-07). This one, registered at the first job (a
             * launch: the runtime is initialized by then), runs before it. */
            static int registered;
            if (!registered) registered = atexit(exit_early) == 0;
        }
    }
    if (ok) {
        if (bg.tail)
            bg.tail->next = j;
        else
            bg.head = j;
        bg.tail = j;
        bg.pending++;
        pthread_cond_signal(&bg.cv);
    }
    pthread_mutex_unlock(&bg.lock);
    if (!ok) {
        if (j->snap) xmt_trial_snap_free(j->snap);
        free(j);
        return -1;
    }
    return 0;
}

void xmt_bgverify_warm(void)
{
    /* only where snapshots will be taken: tuning in the background, or cached winners
     * verified there */
    if ((xmt_opt.mode != XMT_MODE_TUNE && xmt_opt.mode != XMT_MODE_REPLAY) ||
        xmt_opt.trials == XMT_TRIALS_INLINE ||
        !(xmt_opt.tuning == XMT_TUNING_BACKGROUND ||
          (xmt_opt.cache_verify && xmt_opt.cache_trust == XMT_TRUST_GRADED)) ||
        !xmt_drv.cuCtxGetCurrent || !xmt_drv.cuMemAllocAsync)
        return;
    static CUcontext warmed[8];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    CUcontext ctx = NULL;
    if (xmt_drv.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) return;
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < sizeof warmed / sizeof warmed[0] && warmed[i] && warmed[i] != ctx)
        i++;
    int fresh = i < sizeof warmed / sizeof warmed[0] && !warmed[i];
    if (fresh) warmed[i] = ctx;
    pthread_mutex_unlock(&lock);
    if (!fresh) return;
    job *j = calloc(1, sizeof *j);
    if (!j) return;
    j->warm = ctx;
    (void)queue(j);
}

int xmt_bgverify_queue(xmt_trial_snap *s, const char *key_text, const xmt_candidate *only,
                       long only_index, const char *record_data, xmt_bgverify_done done, void *ud)
{
    job *j = calloc(1, sizeof *j);
    if (!j) {
        xmt_trial_snap_free(s);
        return -1;
    }
    j->snap = s;
    j->only = *only;
    j->only_index = only_index;
    if (record_data) {
        snprintf(j->record_data, sizeof j->record_data, "%s", record_data);
        j->has_data = 1;
    }
    snprintf(j->key_text, sizeof j->key_text, "%s", key_text);
    j->done = done;
    j->ud = ud;
    return queue(j);
}

int xmt_bgtune_queue(xmt_trial_snap *s, const char *key_text, xmt_bgtune_start start,
                     const char *decided, xmt_bgverify_done done, xmt_bgtune_partial partial,
                     xmt_bgtune_launches launches, void *ud)
{
    job *j = calloc(1, sizeof *j);
    if (!j) {
        xmt_trial_snap_free(s);
        return -1;
    }
    j->snap = s;
    j->tune = 1;
    snprintf(j->key_text, sizeof j->key_text, "%s", key_text);
    j->start = start;
    snprintf(j->decided, sizeof j->decided, "%s", decided ? decided : "");
    j->partial = partial;
    j->launches = launches;
    j->queued_ms = xmt_now_ms();
    j->own_ms = -1;
    j->done = done;
    j->ud = ud;
    return queue(j);
}

void xmt_bgverify_atfork(int phase)
{
    if (phase == XMT_FORK_PREPARE) {
        pthread_mutex_lock(&bg.lock);
        return;
    }
    if (phase == XMT_FORK_CHILD) {
        /* the parent's jobs are the parent's (their snapshots too: never freed here) */
        bg.head = bg.tail = NULL;
        bg.pending = 0;
        bg.started = 0;
        bg.stopping = 1; /* no helper in a child: nothing is queued */
    }
    pthread_mutex_unlock(&bg.lock);
}

int xmt_bgverify_pending(void)
{
    pthread_mutex_lock(&bg.lock);
    int n = bg.pending;
    pthread_mutex_unlock(&bg.lock);
    return n;
}

/* now + ms as an absolute CLOCK_REALTIME time (pthread_cond_timedwait's clock) */
static struct timespec deadline(int ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

int xmt_bgverify_wait(int timeout_ms)
{
    struct timespec t = deadline(timeout_ms < 0 ? 0 : timeout_ms);
    pthread_mutex_lock(&bg.lock);
    int r = 0;
    while (bg.pending > 0 && r != ETIMEDOUT && !bg.stopping)
        r = timeout_ms < 0 ? pthread_cond_wait(&bg.idle, &bg.lock)
                           : pthread_cond_timedwait(&bg.idle, &bg.lock, &t);
    int none = bg.pending == 0;
    pthread_mutex_unlock(&bg.lock);
    return none;
}

void xmt_bgverify_stop(int wait_ms)
{
    pthread_mutex_lock(&bg.lock);
    if (bg.stopping) { /* stopped before (exit_early, then shim.c's handler): nothing waits */
        pthread_mutex_unlock(&bg.lock);
        return;
    }
    bg.exiting = 1;
    struct timespec t = deadline(wait_ms);
    int r = 0;
    while (wait_ms > 0 && bg.pending > 0 && r != ETIMEDOUT)
        r = pthread_cond_timedwait(&bg.idle, &bg.lock, &t);
    /* a tuning still running keeps what its session decided so far: the next run resumes it
     * (docs/tuning.md, "Resuming a session cut at exit"). Under the lock: its callback cannot
     * run meanwhile, and none runs after (stopping) */
    char decided[sizeof(((xmt_choice *)0)->decided)];
    if (!bg.stopping && bg.running && bg.running->tune && bg.running->partial &&
        xmt_trial_tune_progress(decided, sizeof decided))
        bg.running->partial(bg.running->ud, decided);
    /* what is left is dropped: its host memory freed, its device memory and events left to
     * the process (freeing them would make their context current on the exiting thread) */
    for (job *j = bg.head, *n; j; j = n) {
        n = j->next;
        if (j->snap) xmt_trial_snap_drop(j->snap);
        free(j->ud);
        free(j);
        bg.pending--;
    }
    bg.head = bg.tail = NULL;
    bg.stopping = 1;
    pthread_cond_broadcast(&bg.cv);
    pthread_mutex_unlock(&bg.lock);
}
