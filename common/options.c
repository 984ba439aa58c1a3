/*
 * options: the one table of XMATUNE_* variables (see options.h).
 */
#include "options.h"

#include "xmt_policy.h" /* xmt_edit_distance */

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Messages before the options are read (none today) still get the default cap. */
struct xmt_options xmt_opt = {.max_messages = 100};

typedef enum { T_MODE, T_BOOL, T_INT, T_DOUBLE, T_STR, T_CHOICE, T_TOL } opt_type;

/* The words of a T_CHOICE option; the field holds the index of the one given. */
static const char *const stat_words[] = {"median", "mean", NULL};              /* xmt_statistic */
static const char *const protect_words[] = {"auto", "declared", NULL};         /* XMT_PROTECT_* */
static const char *const verify_on_words[] = {"gpu", "host", NULL};            /* XMT_VERIFY_ON_* */
static const char *const trials_words[] = {"auto", "process", "inline", NULL}; /* xmt_trials */
static const char *const trust_words[] = {"graded", "strict", NULL};           /* xmt_cache_trust */
static const char *const retune_words[] = {"no", "outcomes", "all", NULL};     /* xmt_retune */
static const char *const tuning_words[] = {"sync", "background", NULL};        /* xmt_tuning */

typedef struct {
    const char *name;
    opt_type type;
    size_t offset;
    size_t size; /* for strings */
    const char *def;
    long min, max; /* for numbers */
    const char *doc;
    const char *const *choices; /* T_CHOICE */
} opt_desc;

#define OFF(f) offsetof(struct xmt_options, f)
#define SZ(f) sizeof(((struct xmt_options *)0)->f)

/* Keep in the order a user reads them; the README table is generated from this. */
static const opt_desc options[] = {
    {"XMATUNE_MODE", T_MODE, OFF(mode), 0, "", 0, 0,
     "`off`, `discover`, `tune` or `replay`. Default: `tune` when `XMATUNE_POLICY` is set "
     "or `XMATUNE_AUTO=1`, else `off`; any other value: `off`, with a message",
     NULL},
    {"XMATUNE_POLICY", T_STR, OFF(policy), SZ(policy), "", 0, 0,
     "policy file, or directory of `*.yaml`/`*.yml` files read in name order", NULL},
    {"XMATUNE_AUTO", T_BOOL, OFF(autotune), 0, "0", 0, 1,
     "`1`: tune kernels no policy names too, trying the launch idioms derived from each "
     "key's own launch, in the trial helper only (README, Tuning with no policy); policy "
     "entries win for the kernels they name; `XMATUNE_TOTAL_BUDGET_MS` then defaults to "
     "60000",
     NULL},
    {"XMATUNE_AUTO_MAX_KEYS", T_INT, OFF(auto_max_keys), 0, "8", 1, 1000000,
     "under `XMATUNE_AUTO=1`, most keys tuned per kernel with no policy entry (under "
     "`XMATUNE_TUNING=background`, keys waiting for room in its queue count too); past it "
     "the kernel passes through untuned (said once)",
     NULL},
    {"XMATUNE_AUTO_MIN_US", T_DOUBLE, OFF(auto_min_us), 0, "2", 0, 1e9,
     "under `XMATUNE_AUTO=1`, a kernel with no policy entry that a key's session finds "
     "shorter than this many microseconds in its best config (the program's own when it "
     "stays) passes through from then on, that key included",
     NULL},
    {"XMATUNE_AUTO_TOLERANCE", T_TOL, OFF(auto_tol), 0, "0", 0, 0,
     "under `XMATUNE_AUTO=1`, `RTOL` or `RTOL,ATOL`: the outputs a kernel with no policy "
     "entry writes through pointers to a float type are verified within `abs(a - b) <= "
     "ATOL + RTOL * abs(b)` instead of bitwise, so that candidates that differ from its own config "
     "only "
     "by float rounding can win (`docs/tuning.md`, Rounding); `0`: bitwise",
     NULL},
    {"XMATUNE_LOG", T_STR, OFF(log), SZ(log), "", 0, 0,
     "JSON Lines log (`docs/log.md`); `%p` is replaced by the process id; empty: no log", NULL},
    {"XMATUNE_CACHE", T_STR, OFF(cache), SZ(cache), "", 0, 0,
     "on-disk cache of tuned winners shared by processes (`docs/cache.md`); `%p` = process id; "
     "unset or empty: `$XDG_CACHE_HOME/xmatune/cache.jsonl` (else `~/.cache/xmatune/cache.jsonl`); "
     "`off`: none",
     NULL},
    {"XMATUNE_CACHE_REMOTE", T_STR, OFF(cache_remote), SZ(cache_remote), "", 0, 0,
     "a shared tier beside the on-disk cache (`docs/cache.md`, The fleet's tier): "
     "`redis://HOST:PORT/PREFIX` (port 6379 and prefix `xmatune` by default); its records are "
     "hints, verified in each process before use; `rediss://` (TLS) needs hiredis 1.0 or later: "
     "refused with a message; empty: none",
     NULL},
    {"XMATUNE_CACHE_REMOTE_PASSWORD_FILE", T_STR, OFF(cache_remote_password_file),
     SZ(cache_remote_password_file), "", 0, 0,
     "a file holding the Redis password (its first line; `USER PASSWORD` for an ACL user), "
     "readable by its owner only (a file group or others may read is refused); never in the URL",
     NULL},
    {"XMATUNE_CACHE_REMOTE_TIMEOUT_MS", T_INT, OFF(cache_remote_timeout_ms), 0, "200", 1, 60000,
     "the remote tier's connect and command timeout; a server slower than this counts as "
     "unreachable (the program goes on with the local cache, reconnecting with backoff)",
     NULL},
    {"XMATUNE_CACHE_REMOTE_CLAIM_MS", T_INT, OFF(cache_remote_claim_ms), 0, "30000", 100, 3600000,
     "how long a claim on a key in the remote tier lives unless renewed (its process renews it "
     "while it tunes): a claimer that died frees its key after this",
     NULL},
    {"XMATUNE_CACHE_VERIFY", T_BOOL, OFF(cache_verify), 0, "1", 0, 1,
     "`1`: a winner read from the cache is verified once per process and device before its "
     "first use (no timing); `0`: trusted as it is (re-checks on later data, "
     "`XMATUNE_RECHECKS`, still apply)",
     NULL},
    {"XMATUNE_CACHE_TRUST", T_CHOICE, OFF(cache_trust), 0, "graded", 0, 0,
     "how a winner read from the cache is trusted (`docs/cache.md`, Trust): `graded`: a record "
     "this user's own process verified, in a file only this user can write, is used at once and "
     "verified in the background on a snapshot of its first launch's data (a failure drops it); "
     "any other record is a hint: the program's own config runs until the background "
     "verification passes; `strict`: every winner is verified before its first use, on the "
     "program's thread",
     trust_words},
    {"XMATUNE_TUNING", T_CHOICE, OFF(tuning), 0, "sync", 0, 0,
     "when a new key is tuned (`docs/tuning.md`, In the background): `sync`: at its first launch, "
     "which returns once every candidate has run; `background`: that launch runs the program's "
     "own config at once after a stream-ordered snapshot of its data, a thread of the shim tunes "
     "the key on the snapshot in the trial helper, and later launches switch to the winner once it "
     "is verified",
     tuning_words},
    {"XMATUNE_BACKGROUND_QUEUE", T_INT, OFF(background_queue), 0, "4", 1, 64,
     "how many keys may wait for the background at once (tuned or verified there: "
     "`docs/tuning.md`, In the background): a key's first launch takes a snapshot of its data "
     "only while fewer are queued; past that, a new key (or a hint) runs the program's own "
     "config and is looked at again at a later launch (keys launched often get there first), "
     "so at most this many snapshots of the program's memory exist at once",
     0},
    {"XMATUNE_BACKGROUND_SHARE", T_INT, OFF(background_share), 0, "50", 1, 100,
     "the share of the time, in percent, the background may keep the trial helper at work "
     "while the program runs (`docs/tuning.md`, In the background): after a session (a tuning "
     "or a verification) of T ms the worker waits T x (100 - SHARE) / SHARE ms before it "
     "starts the next; `100`: no wait. A session itself is not slowed",
     NULL},
    {"XMATUNE_EXIT_WAIT_MS", T_INT, OFF(exit_wait_ms), 0, "0", 0, 3600000,
     "how long the program's exit waits for the verifications and tunings still running in the "
     "background (`docs/cache.md`, Trust) before it drops them: `0`, the default, never waits "
     "(the next process verifies again, and resumes a tuning cut from what it decided: "
     "`docs/tuning.md`, \"Resuming a session cut at exit\"); a CI job or a test that wants "
     "every outcome logged and on disk sets more",
     NULL},
    {"XMATUNE_RETUNE", T_CHOICE, OFF(retune), 0, "no", 0, 0,
     "`outcomes`: cached outcomes that keep the program's own config (untold, declined, faulted, "
     "untuned, ..., `docs/cache.md`) are ignored and their keys tuned again; `all`: every cached "
     "record is ignored (new records replace them); `no`: both are used",
     retune_words},
    {"XMATUNE_RECHECKS", T_INT, OFF(rechecks), 0, "4", 0, 64,
     "re-checks of each winner on later data (`docs/tuning.md`, \"Data that proves nothing\"): "
     "at the next launch of its key, then 8, 64, 512, ... launches later, the winner is "
     "verified again against the program's own config and dropped if they differ; a "
     "re-check counts only on data other than its last check's; `0`: none",
     NULL},
    {"XMATUNE_CACHE_LOCK_WAIT_MS", T_INT, OFF(cache_lock_wait_ms), 0, "10000", 0, 86400000,
     "longest wait, in ms, for the cache's lock (another process may hold it: a stopped one); "
     "past it the process says so and goes on without the cache",
     NULL},
    {"XMATUNE_VERBOSE", T_INT, OFF(verbose), 0, "0", 0, 3,
     "`1` prints the options in effect (in every mode, `off` too), one line per tuning (like "
     "`XMA_PRINT_AUTOTUNING`) "
     "and the exit table (launches, rewrites, keys per kernel; discover prints it always); "
     "`2` also every candidate",
     NULL},
    {"XMATUNE_STRICT", T_BOOL, OFF(strict), 0, "0", 0, 1,
     "`1`: a policy error stops the program at load instead of running untuned", NULL},
    {"XMATUNE_LIBCUDA", T_STR, OFF(libcuda), SZ(libcuda), "libcuda.so.1", 0, 0,
     "the real driver library that the shim opens", NULL},
    {"XMATUNE_WARMUP", T_INT, OFF(warmup), 0, "5", 0, 1000,
     "untimed runs of each candidate, unless the policy entry says otherwise", NULL},
    {"XMATUNE_ITERATIONS", T_INT, OFF(iterations), 0, "10", 1, 10000,
     "timed runs of each candidate, unless the policy entry says otherwise", NULL},
    {"XMATUNE_RACE", T_BOOL, OFF(race), 0, "1", 0, 1,
     "`1`: candidates are raced (`docs/tuning.md`, Racing): one warm-up run each once the "
     "clock is up, and after 3 timed rounds a candidate slower than the leader by more than "
     "the noise explains (10% at least) is timed no more; the finalists are re-timed before "
     "the decision, and a config at the edge of the tie limit until its side of it is clear "
     "(100 rounds at most); `0`: every candidate gets every run. An entry that sets "
     "`iterations:` is never raced",
     NULL},
    {"XMATUNE_STATISTIC", T_CHOICE, OFF(statistic), 0, "median", 0, 0,
     "`median` or `mean` of the timed runs picks the winner", stat_words},
    {"XMATUNE_PROTECT", T_CHOICE, OFF(protect), 0, "auto", 0, 0,
     "`auto`: tuning finds and protects what each launch writes by itself; `declared`: only "
     "the buffers the policy names (`docs/tuning.md`), unless the entry says otherwise",
     protect_words},
    {"XMATUNE_SCRATCH_MB", T_DOUBLE, OFF(scratch_mb), 0, "-1", -1, 1e9,
     "most device memory one tuning may take for snapshots and references, in MiB; `-1`: "
     "half of the free memory at the time; a key that needs more runs untuned",
     NULL},
    {"XMATUNE_VERIFY_ON", T_CHOICE, OFF(verify_on), 0, "gpu", 0, 0,
     "`gpu`: comparisons run as the shim's own kernels; `host`: on the CPU (slower; the "
     "fallback when the kernels cannot load)",
     verify_on_words},
    {"XMATUNE_TRIALS", T_CHOICE, OFF(trials), 0, "auto", 0, 0,
     "where tuning sessions run (`docs/tuning.md`, Where candidates run): `auto` in the trial "
     "helper (`xmatune-trial`, a process of its own, where a candidate that faults or hangs "
     "cannot harm the program), in the program's own process where a key's session cannot "
     "run there (said once; never after the helper failed: then the key keeps the program's "
     "own config); `process` in the helper only (such a key keeps the program's own "
     "config); `inline` in the program's own process",
     trials_words},
    {"XMATUNE_TRIAL_TIMEOUT_MS", T_INT, OFF(trial_timeout_ms), 0, "30000", 1, 3600000,
     "the trial helper's deadline for one answer (its start included; during a session, "
     "between two of its heartbeats), in ms; past it the helper is ended as hung",
     NULL},
    {"XMATUNE_TRIAL_SPARE", T_BOOL, OFF(trial_spare), 0, "1", 0, 1,
     "`1`: once a session that runs candidates starts on a device, a spare trial helper "
     "for that device starts beside its helper (one per device), so that after a fault the "
     "next session's helper has opened its device already (`docs/tuning.md`, Where "
     "candidates run); `0`: a new helper starts when one is needed",
     NULL},
    {"XMATUNE_L2_FLUSH", T_BOOL, OFF(l2_flush), 0, "0", 0, 1,
     "`1`: flush the L2 cache before every timed run (outside the timed window)", NULL},
    {"XMATUNE_SELF_LEAD_US", T_DOUBLE, OFF(self_lead_us), 0, "50", 0, 1e9,
     "a candidate whose timed runs so far took less than this many microseconds (median) "
     "has each later timed run right after an untimed run of itself, as in a program's "
     "loop, rather than after another candidate's (a short kernel's time depends on what "
     "the L2 holds); `0`: never. Not with an L2 flush",
     NULL},
    {"XMATUNE_GATE_US", T_DOUBLE, OFF(gate_us), 0, "50", 0, 1e9,
     "a timed round with a candidate whose runs so far took less than this many "
     "microseconds (median), or that has none yet, is queued behind a kernel that holds the "
     "GPU until the whole round is queued, so that its runs follow one another as in a "
     "program's loop rather than each waiting for its launch; `0`: never",
     NULL},
    {"XMATUNE_WARMUP_MS", T_DOUBLE, OFF(warmup_ms), 0, "50", 0, 10000,
     "run the program's own config for this long as soon as a candidate passes "
     "verification (never when none does), so the GPU clock is up for the rest of "
     "verification and every timed or warm-up run, unless the policy entry says otherwise "
     "(`warmup_ms:`)",
     NULL},
    {"XMATUNE_BUDGET_MS", T_DOUBLE, OFF(budget_ms), 0, "-1", -1, 1000000000,
     "tuning-time budget per key in ms, over every phase (verification, warm-ups, timed "
     "rounds); past it the key decides from what was measured (`docs/tuning.md`); `-1`: none",
     NULL},
    {"XMATUNE_TOTAL_BUDGET_MS", T_DOUBLE, OFF(total_budget_ms), 0, "-1", -1, 1000000000,
     "tuning-time budget for the whole process in ms; past it new keys run untuned "
     "(remembered in the cache: `XMATUNE_RETUNE=outcomes` tunes them)",
     NULL},
    {"XMATUNE_INCLUDE", T_STR, OFF(include), SZ(include), "", 0, 0,
     "comma-separated globs on kernel names: only these may be tuned (empty: all)", NULL},
    {"XMATUNE_EXCLUDE", T_STR, OFF(exclude), SZ(exclude), "", 0, 0,
     "comma-separated globs on kernel names that are never tuned", NULL},
    {"XMATUNE_PROGRESS", T_INT, OFF(progress), 0, "-1", -1, 1,
     "`1`: a progress line on stderr, at most one a second, while a key's tuning runs longer "
     "than a second; `0`: never; `-1`: when stderr is a terminal",
     NULL},
    {"XMATUNE_MAX_MESSAGES", T_INT, OFF(max_messages), 0, "100", 0, 1000000,
     "most `xmatune:` messages printed on stderr; further ones are counted (0: none at all)", NULL},
};

static const char *const mode_names[] = {"off", "discover", "tune", "replay"};

const char *xmt_mode_name(int mode)
{
    return mode >= 0 && mode < 4 ? mode_names[mode] : "?";
}

/* Parses one value into its field. Returns 0 on success, -1 (field untouched) if bad. */
static int parse_value(const opt_desc *o, const char *v)
{
    char *p = (char *)&xmt_opt + o->offset;
    char *end;
    switch (o->type) {
    case T_MODE:
        for (int i = 0; i < 4; i++)
            if (strcmp(v, mode_names[i]) == 0) {
                *(int *)p = i;
                return 0;
            }
        return -1;
    case T_CHOICE:
        for (int i = 0; o->choices[i]; i++)
            if (strcmp(v, o->choices[i]) == 0) {
                *(int *)p = i;
                return 0;
            }
        return -1;
    case T_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on")) {
            *(int *)p = 1;
            return 0;
        }
        if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off") ||
            !*v) {
            *(int *)p = 0;
            return 0;
        }
        return -1;
    case T_INT: {
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || end == v || *end || n < o->min || n > o->max) return -1;
        *(int *)p = (int)n;
        return 0;
    }
    case T_DOUBLE: {
        errno = 0;
        double d = strtod(v, &end);
        if (errno || end == v || *end || isnan(d) || d < (double)o->min || d > (double)o->max)
            return -1;
        *(double *)p = d;
        return 0;
    }
    case T_STR:
        if (strlen(v) >= o->size) return -1;
        strcpy(p, v);
        return 0;
    case T_TOL: {
        xmt_tol t = {0, 0};
        errno = 0;
        t.rtol = strtod(v, &end);
        if (*end == ',') {
            const char *a = end + 1;
            t.atol = strtod(a, &end);
            if (end == a) return -1;
        }
        if (errno || end == v || *end || !(t.rtol >= 0 && t.rtol < INFINITY) ||
            !(t.atol >= 0 && t.atol < INFINITY))
            return -1;
        *(xmt_tol *)p = t;
        return 0;
    }
    }
    return -1;
}

/* What an option accepts, for the message about a bad value: its words or its range. */
static void allowed(const opt_desc *o, char *out, size_t cap)
{
    size_t n = 0;
    switch (o->type) {
    case T_MODE: snprintf(out, cap, "one of off, discover, tune, replay"); return;
    case T_BOOL: snprintf(out, cap, "1, true, yes, on, or 0, false, no, off"); return;
    case T_INT: snprintf(out, cap, "an integer from %ld to %ld", o->min, o->max); return;
    case T_DOUBLE: snprintf(out, cap, "a number from %ld to %ld", o->min, o->max); return;
    case T_STR: snprintf(out, cap, "at most %zu characters", o->size - 1); return;
    case T_TOL: snprintf(out, cap, "RTOL or RTOL,ATOL, numbers >= 0"); return;
    case T_CHOICE:
        n = (size_t)snprintf(out, cap, "one of");
        for (int i = 0; o->choices[i] && n < cap; i++)
            n += (size_t)snprintf(out + n, cap - n, "%s %s", i ? "," : "", o->choices[i]);
        return;
    }
}

static void bad_value(void (*warn)(const char *msg), const opt_desc *o, const char *v)
{
    char msg[1024], ok[160];
    /* a long value is quoted in part, so that the message still says why */
    size_t vl = strlen(v);
    char more[48] = "";
    if (vl > 80) snprintf(more, sizeof more, "... (%zu characters)", vl);
    allowed(o, ok, sizeof ok);
    if (o->type == T_MODE)
        /* DESIGN.md: a misspelt `replay` must never start tuning in production */
        snprintf(msg, sizeof msg,
                 "%s=\"%.80s%s\" is not valid (%s); the mode in effect is \"off\": the "
                 "shim passes every launch through",
                 o->name, v, more, ok);
    else
        snprintf(msg, sizeof msg, "%s=\"%.80s%s\" is not valid (%s); keeping the default \"%s\"",
                 o->name, v, more, ok, o->def);
    if (warn)
        warn(msg);
    else
        fprintf(stderr, "xmatune: %s\n", msg);
}

/* Variables named XMATUNE_* that are not the shim's options: the command's, the helper's
 * and the scripts' (README, docs/gpu-suite.md); never flagged as mistyped. A name ending in
 * '_' stands for every name it begins. */
static const char *const not_options[] = {
    "XMATUNE_SHIM", "XMATUNE_TRIAL_FD", "XMATUNE_DEMO_BUILD", "XMATUNE_LOAD",  "XMATUNE_LOAD_RUNS",
    "XMATUNE_GPU_", "XMATUNE_SANITIZE", "XMATUNE_SANITIZE_",  "XMATUNE_FUZZ_", NULL};

/* Every XMATUNE_* name in the environment that is not an option: a typo (XMATUNE_POLCY)
 * would otherwise leave the program silently untuned. Named with the option nearest to it
 * (edit distance at most 2, or 3 for long names) when there is one. */
static void unknown_names(void (*warn)(const char *msg))
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        char name[72];
        if (strncmp(*e, "XMATUNE_", 8) != 0 || len >= sizeof name) continue;
        memcpy(name, *e, len);
        name[len] = 0;
        int known = 0;
        for (size_t i = 0; !known && i < sizeof options / sizeof options[0]; i++)
            known = !strcmp(name, options[i].name);
        for (size_t i = 0; !known && not_options[i]; i++) {
            size_t l = strlen(not_options[i]);
            known = not_options[i][l - 1] == '_' ? !strncmp(name, not_options[i], l)
                                                 : !strcmp(name, not_options[i]);
        }
        if (known) continue;
        const char *near = NULL;
        size_t cap = len > 16 ? 3 : 2, best = cap + 1;
        for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
            size_t d = xmt_edit_distance(name, options[i].name, cap);
            if (d < best) best = d, near = options[i].name;
        }
        char msg[256];
        if (near)
            snprintf(msg, sizeof msg,
                     "%s is not an xmatune variable (it is ignored): did you mean %s?", name, near);
        else
            snprintf(msg, sizeof msg,
                     "%s is not an xmatune variable (it is ignored; `xmatune options` lists "
                     "them)",
                     name);
        if (warn)
            warn(msg);
        else
            fprintf(stderr, "xmatune: %s\n", msg);
    }
}

void xmt_options_load(void (*warn)(const char *msg))
{
    memset(&xmt_opt, 0, sizeof xmt_opt);
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const opt_desc *o = &options[i];
        if (o->type != T_MODE) (void)parse_value(o, o->def);
    }
    int mode_bad = 0;
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const opt_desc *o = &options[i];
        const char *v = getenv(o->name);
        if (!v || (o->type == T_MODE && !*v)) continue;
        if (parse_value(o, v) == 0) continue;
        if (o->type == T_MODE) mode_bad = 1;
        bad_value(warn, o, v);
    }
    /* The mode's default depends on another option: decided after the loop. An unknown
     * mode is off, not the default. */
    const char *m = getenv("XMATUNE_MODE");
    if (mode_bad)
        xmt_opt.mode = XMT_MODE_OFF;
    else if (!m || !*m)
        xmt_opt.mode = xmt_opt.policy[0] || xmt_opt.autotune ? XMT_MODE_TUNE : XMT_MODE_OFF;
    /* auto has a total budget by default: it may meet many kernels */
    const char *tb = getenv("XMATUNE_TOTAL_BUDGET_MS");
    if (xmt_opt.autotune && (!tb || !*tb)) xmt_opt.total_budget_ms = XMT_AUTO_TOTAL_BUDGET_MS;
    unknown_names(warn);
}

static void print_value(FILE *out, const opt_desc *o)
{
    const char *p = (const char *)&xmt_opt + o->offset;
    switch (o->type) {
    case T_MODE: fputs(xmt_mode_name(*(const int *)p), out); break;
    case T_CHOICE: fputs(o->choices[*(const int *)p], out); break;
    case T_BOOL:
    case T_INT: fprintf(out, "%d", *(const int *)p); break;
    case T_DOUBLE: fprintf(out, "%g", *(const double *)p); break;
    case T_STR: fprintf(out, "\"%s\"", p); break;
    case T_TOL:
        fprintf(out, "%g,%g", ((const xmt_tol *)p)->rtol, ((const xmt_tol *)p)->atol);
        break;
    }
}

void xmt_options_print(FILE *out)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        fprintf(out, "xmatune: %s=", options[i].name);
        print_value(out, &options[i]);
        fputc('\n', out);
    }
}

void xmt_options_markdown(FILE *out)
{
    fputs("| variable | default | meaning |\n| --- | --- | --- |\n", out);
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const opt_desc *o = &options[i];
        const char *def = o->type == T_MODE ? "(see meaning)" : *o->def ? o->def : "empty";
        const char *q = o->type != T_MODE && *o->def ? "`" : "";
        fprintf(out, "| `%s` | %s%s%s | %s |\n", o->name, q, def, q, o->doc);
    }
}

int xmt_option_check(const char *name, const char *value, char *ok, size_t cap)
{
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const opt_desc *o = &options[i];
        if (strcmp(o->name, name)) continue;
        /* parse_value writes the field: parse, then put everything back */
        struct xmt_options saved = xmt_opt;
        int r = parse_value(o, value);
        xmt_opt = saved;
        if (r == 0) return 0;
        allowed(o, ok, cap);
        return -1;
    }
    return -2;
}

int xmt_option_doc(size_t i, const char **name, const char **def, const char **doc)
{
    if (i >= sizeof options / sizeof options[0]) return 0;
    *name = options[i].name;
    *def = options[i].type == T_MODE ? NULL : options[i].def;
    *doc = options[i].doc;
    return 1;
}
