/*
 * shim: activation at the first CUDA entry point, launch counters, the exit report.
 */
#include "shim.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autotune.h"
#include "bgverify.h"
#include "cache.h"
#include "clock.h"
#include "counters.h"
#include "discover.h"
#include "driver.h"
#include "graph.h"
#include "kernels.h"
#include "log.h"
#include "logevent.h"
#include "memo.h"
#include "modload.h"
#include "options.h"
#include "policies.h"
#include "remote.h"
#include "trialproc.h"
#include "tuner.h"
#include "xmt_policy.h"

static void at_exit(void)
{
    /* a verification still in the background is dropped, by default never waited for: the
     * program's exit is as quick as without the shim (the next process verifies again) */
    xmt_bgverify_stop(xmt_opt.exit_wait_ms);
    xmt_remote_stop();   /* decisions sent to the fleet, boundedly (never while it is away) */
    xmt_trial_at_exit(); /* then no helper outlives the program, a stopped one neither */
    xmt_report();
}

/* fork(2): every lock the exit report takes is held across the fork and released on
 * both sides, so a child never inherits one held by a thread it does not have (a child
 * exiting at once used to hang in its report). Locks whose holders call the driver
 * (devinfo, the wrapper slots) are left out: the driver has fork handlers of its own,
 * and a child cannot use CUDA. Taken in this order, released in reverse. */
static void fork_phase(int phase)
{
    /* the trial helpers' first (their holder logs), graphs next (a replay fold takes a
     * kernel's lock and the log's), then discover's memo: a thread holding a memo block's
     * lock may take the log's. */
    /* the background verifications' first: their worker takes the others under it */
    /* the fleet tier's next: its thread says things (the log's lock) under its lock, and a
     * background verification's callback stores (its lock) under bgverify's */
    void (*const mods[])(int) = {xmt_bgverify_atfork, xmt_remote_atfork,   xmt_trial_atfork,
                                 xmt_graph_atfork,    xmt_discover_atfork, xmt_log_atfork,
                                 xmt_cache_atfork,    xmt_counters_atfork, xmt_kernels_atfork,
                                 xmt_memo_atfork,     xmt_modload_atfork,  xmt_auto_atfork};
    size_t n = sizeof mods / sizeof mods[0];
    for (size_t i = 0; i < n; i++)
        mods[phase == XMT_FORK_PREPARE ? i : n - 1 - i](phase);
}

static void fork_prepare(void)
{
    fork_phase(XMT_FORK_PREPARE);
}

static void fork_parent(void)
{
    fork_phase(XMT_FORK_PARENT);
}

static void fork_child(void)
{
    fork_phase(XMT_FORK_CHILD);
}

static pthread_once_t activate_once = PTHREAD_ONCE_INIT;

static void activate_guarded(void)
{
    xmt_options_load(xmt_warn_msg);
    /* in mode off too: whoever asks why nothing is tuned sees the mode in effect */
    if (xmt_opt.verbose) xmt_options_print(stderr);
    if (xmt_opt.mode == XMT_MODE_OFF) return;
    if (xmt_driver_init() != 0) {
        xmt_opt.mode = XMT_MODE_OFF;
        return;
    }
    if (xmt_opt.policy[0]) {
        int errors = xmt_policy_load(xmt_opt.policy, &xmt_policies, xmt_warn_diag, NULL);
        if (errors > 0 && xmt_opt.strict) {
            xmt_warn("%d error%s in %s and XMATUNE_STRICT=1: stopping", errors,
                     errors == 1 ? "" : "s", xmt_opt.policy);
            _exit(1);
        }
        if (errors > 0)
            xmt_warn("%d error%s in %s: the entries in error are ignored", errors,
                     errors == 1 ? "" : "s", xmt_opt.policy);
    } else if ((xmt_opt.mode == XMT_MODE_TUNE || xmt_opt.mode == XMT_MODE_REPLAY) &&
               !xmt_opt.autotune) {
        xmt_warn("XMATUNE_MODE=%s needs XMATUNE_POLICY or XMATUNE_AUTO=1; %s",
                 xmt_mode_name(xmt_opt.mode),
                 xmt_opt.mode == XMT_MODE_TUNE ? "nothing will be tuned"
                                               : "no launch will be rewritten");
    }
    xmt_tuner_init();
    if (xmt_opt.mode == XMT_MODE_TUNE || xmt_opt.mode == XMT_MODE_REPLAY) {
        xmt_remote_start();
        xmt_auto_prederive(xmt_cache_path()); /* the entries a warm run will want, made ahead */
    }
    xmt_log_event(xmt_ev_start(getpid(), xmt_mode_name(xmt_opt.mode), XMATUNE_VERSION,
                               xmt_policies ? (int)xmt_policy_count(xmt_policies) : 0));
    atexit(at_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void activate(void)
{
    XMT_IN_SHIM_SCOPE activate_guarded();
}

int xmt_activate(void)
{
    pthread_once(&activate_once, activate);
    return xmt_opt.mode;
}

typedef struct {
    FILE *table;
    int kernels, derived; /* derived: of kernels, those auto derived an entry for */
    uint64_t rewritten;
} report_ctx;

static void report_kernel(xmt_kernel *k, void *ud)
{
    report_ctx *c = ud;
    if (xmt_opt.mode == XMT_MODE_DISCOVER) {
        c->kernels += xmt_discover_report(k, c->table);
    } else if (k->entry) {
        c->kernels++;
        c->derived += xmt_auto_owns(k->entry);
        c->rewritten += atomic_load(&k->rewritten);
        xmt_tune_report(k, c->table);
    }
}

/* Which policy entries match some kernel this process launched (hit[i] for entry i). */
typedef struct {
    unsigned char *hit;
    size_t n;
} entry_hits;

static void mark_entries(xmt_kernel *k, void *ud)
{
    entry_hits *h = ud;
    for (size_t i = 0; k->mangled && i < h->n; i++)
        if (!h->hit[i] && xmt_entry_matches(xmt_policy_entry(xmt_policies, i), k->mangled))
            h->hit[i] = 1;
}

/* Under XMATUNE_VERBOSE: each policy entry that matched no kernel of this process (a typo
 * in match:, or a kernel this run did not launch), which otherwise does nothing silently. */
static void say_unmatched_entries(void)
{
    entry_hits h = {NULL, xmt_policy_count(xmt_policies)};
    if (!xmt_opt.verbose || !h.n || !(h.hit = calloc(h.n, 1))) return;
    xmt_kernels_foreach(mark_entries, &h);
    for (size_t i = 0; i < h.n; i++)
        if (!h.hit[i]) {
            const xmt_entry *e = xmt_policy_entry(xmt_policies, i);
            xmt_verbose(1, "policy entry %s (%s) matched no kernel this process launched",
                        xmt_entry_origin(e), xmt_entry_pattern(e));
        }
    free(h.hit);
}

/* The exit event's module_loads: successful loads by entry point (modload.h). */
static void add_load(void *ud, const char *entry, unsigned long long ok, unsigned long long failed)
{
    (void)failed;
    if (ok) json_object_set_new((json_t *)ud, entry, json_integer((json_int_t)ok));
}

static void report(void)
{
    uint64_t total = xmt_launches_total();
    xmt_memo_flush_counts();
    xmt_graph_flush();
    xmt_discover_flush_counts();
    /* The table is built in memory and written at once, so it is not interleaved with the
     * program's own last words. */
    char *buf = NULL;
    size_t len = 0;
    FILE *table = open_memstream(&buf, &len);
    report_ctx c = {.table = table};
    if (table) {
        if (xmt_opt.mode == XMT_MODE_DISCOVER)
            fprintf(table, "xmatune: %10s %10s %6s %4s  %-20s %s\n", "launches", "replayed",
                    "shapes", "dev", "policy", "kernel");
        else
            fprintf(table, "xmatune: %10s %10s %6s %10s %11s  %s\n", "launches", "rewritten",
                    "keys", "replayed", "graph nodes", "kernel");
    }
    xmt_kernels_foreach(report_kernel, &c);
    say_unmatched_entries();
    if (table) {
        fclose(table);
        /* the table is discover's answer; in the other modes it is noise on the program's
         * stderr unless asked for (XMATUNE_VERBOSE): warnings are said apart, when they
         * happen, and the log has the counts */
        if (xmt_opt.mode == XMT_MODE_DISCOVER || xmt_opt.verbose) {
            /* auto's kernels have no policy: say which are which */
            char which[96] = "";
            if (xmt_opt.mode == XMT_MODE_DISCOVER)
                ;
            else if (!c.derived)
                snprintf(which, sizeof which, " with a policy");
            else if (c.derived == c.kernels)
                snprintf(which, sizeof which, " under XMATUNE_AUTO=1, with no policy");
            else
                snprintf(which, sizeof which, ": %d with a policy, %d under XMATUNE_AUTO=1",
                         c.kernels - c.derived, c.derived);
            fprintf(stderr, "xmatune: %s: %llu launch%s, %d kernel%s%s\n%s",
                    xmt_mode_name(xmt_opt.mode), (unsigned long long)total, total == 1 ? "" : "es",
                    c.kernels, c.kernels == 1 ? "" : "s", which, c.kernels ? buf : "");
        }
        free(buf);
    }
    unsigned long long replays, unseen, conditional;
    xmt_graph_totals(&replays, &unseen, &conditional);
    if (replays || unseen) {
        char line[400];
        int n = snprintf(line, sizeof line, "xmatune: graph replays: %llu counted", replays);
        if (unseen && n > 0 && (size_t)n < sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n,
                          ", %llu of executable graphs the shim did not see made", unseen);
        if (conditional && n > 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n,
                     " (%llu with conditional nodes: their bodies are not counted)", conditional);
        fprintf(stderr, "%s\n", line);
    }
    xmt_log_event(xmt_ev_graphs(replays, unseen, conditional));
    json_t *loads = json_object();
    xmt_modload_each(add_load, loads);
    xmt_log_event(xmt_ev_exit(total, c.rewritten, c.kernels, getpid(), loads));
    xmt_log_close();
}

void xmt_report(void)
{
    static atomic_int done;
    if (!xmt_first_time(&done) || xmt_opt.mode == XMT_MODE_OFF) return;
    XMT_IN_SHIM_SCOPE report();
}

/* ---- public API (for programs and tests that want to ask the shim) ------------------ */

XMT_EXPORT const char *xmatune_version(void)
{
    return XMATUNE_VERSION;
}

/* Launches the shim has seen in this process so far (every entry point, every thread). */
XMT_EXPORT unsigned long long xmatune_launch_count(void)
{
    return (unsigned long long)xmt_launches_total();
}

/* The real driver's own entry point for (name, version, flags), never wrapped: for a
 * program or benchmark that wants to compare a launch through the shim with one that
 * bypasses it in the same process (tests/gpu/launch_rate.cu --paired). NULL when the driver
 * cannot be opened or has no such entry point. */
XMT_EXPORT void *xmatune_driver_entry(const char *name, int version, unsigned long long flags)
{
    xmt_activate();
    if (!name || xmt_driver_init() != 0) return NULL;
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    XMT_IN_SHIM_SCOPE
    {
        if (xmt_drv.getproc(name, &p, version, flags, &st) != CUDA_SUCCESS) p = NULL;
    }
    return p;
}

/* Waits until nothing runs in the background: no verification or tuning (docs/cache.md,
 * Trust; docs/tuning.md), and auto's entries derived ahead from the cache are made
 * (docs/tuning.md, Tuning with no policy), at most timeout_ms (-1: no limit): 1 when so, 0 when
 * some work still runs. For a program or test that wants what that work decides to apply from a
 * known point. */
XMT_EXPORT int xmatune_background_wait(int timeout_ms)
{
    double t0 = xmt_now_ms();
    if (!xmt_auto_ahead_wait(timeout_ms)) return 0;
    int left = timeout_ms < 0 ? -1 : timeout_ms - (int)(xmt_now_ms() - t0);
    return xmt_bgverify_wait(timeout_ms < 0 ? -1 : left > 0 ? left : 0);
}

/* The mode in force ("off" before any CUDA entry point was asked for). */
XMT_EXPORT const char *xmatune_mode(void)
{
    return xmt_mode_name(xmt_opt.mode);
}
