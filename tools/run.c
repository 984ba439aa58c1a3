/*
 * run: `xmatune run [--tune|--discover|...] -- PROGRAM`, a program under the shim without
 * typing LD_PRELOAD.
 */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "preload.h"

#ifndef XMATUNE_LIBDIR_REL
#define XMATUNE_LIBDIR_REL "../lib"
#endif

/* Where libxmatune.so is: XMATUNE_SHIM, else beside this program: in the build tree
 * (tools/ -> shim/), installed (bin/ -> the library directory this build installs into,
 * XMATUNE_LIBDIR_REL, then lib/ and lib64/), or in the same folder. Returns 0, or -1
 * after saying where it looked (each place once: XMATUNE_LIBDIR_REL is often ../lib). */
static int find_shim(char *out, size_t cap)
{
    const char *env = getenv("XMATUNE_SHIM");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        if (access(out, R_OK) == 0) return 0;
        fprintf(stderr, "xmatune run: XMATUNE_SHIM=%s: %s\n", env, strerror(errno));
        return -1;
    }
    static const char *const rel[] = {"../shim", XMATUNE_LIBDIR_REL, "../lib", "../lib64", "."};
    size_t nrel = sizeof rel / sizeof rel[0];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = 0;
    char *slash = n > 0 ? strrchr(exe, '/') : NULL;
    if (slash) {
        *slash = 0;
        for (size_t i = 0; i < nrel; i++) {
            if (snprintf(out, cap, "%s/%s/libxmatune.so", exe, rel[i]) >= (int)cap ||
                access(out, R_OK) != 0)
                continue;
            char *real = realpath(out, NULL);
            if (real) {
                snprintf(out, cap, "%s", real);
                free(real);
            }
            return 0;
        }
    }
    char places[512];
    size_t len = 0;
    places[0] = 0;
    for (size_t i = 0; i < nrel; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= !strcmp(rel[i], rel[j]);
        if (!dup && len < sizeof places)
            len += (size_t)snprintf(places + len, sizeof places - len, "%s%s/", len ? ", " : "",
                                    rel[i]);
    }
    fprintf(stderr,
            "xmatune run: libxmatune.so is not beside this command (%s); set XMATUNE_SHIM to "
            "its path\n",
            places);
    return -1;
}

static void usage_run(FILE *f)
{
    fprintf(f, "usage: xmatune run [--discover|--tune|--replay|--off] [--auto] [--retune]\n"
               "                   [--background]\n"
               "                   [--policy P]\n"
               "                   [--log L] [--cache C] [--include GLOB] [--exclude GLOB]\n"
               "                   [--budget MS] [--iterations N] [--warmup N] [--libcuda PATH]\n"
               "                   [-v [-v]] [--] PROGRAM [ARGS...]\n"
               "Runs PROGRAM with libxmatune.so preloaded (found beside this command, or\n"
               "XMATUNE_SHIM) and the options given as XMATUNE_* variables: --policy is\n"
               "XMATUNE_POLICY, --log XMATUNE_LOG, --cache XMATUNE_CACHE, --include\n"
               "XMATUNE_INCLUDE, --exclude XMATUNE_EXCLUDE, --budget XMATUNE_BUDGET_MS,\n"
               "--iterations XMATUNE_ITERATIONS, --warmup XMATUNE_WARMUP, --libcuda\n"
               "XMATUNE_LIBCUDA, --auto XMATUNE_AUTO=1 (kernels no policy names are tuned\n"
               "too: README, Tuning with no policy), --retune XMATUNE_RETUNE=outcomes (keys\n"
               "whose cached outcome kept the program's own config untuned are tuned again:\n"
               "docs/cache.md), --background XMATUNE_TUNING=background (new keys are tuned\n"
               "while the program runs its own config: docs/tuning.md); each -v raises\n"
               "XMATUNE_VERBOSE by one.\n"
               "A --policy or --libcuda path that does not exist, a value the shim would not\n"
               "take (--iterations abc; `xmatune options` lists what each takes) and under\n"
               "replay a --cache that does not exist are errors before PROGRAM starts (the\n"
               "shim itself would run the program untuned). Exit status:\n"
               "PROGRAM's, 127 when it could not start, 2 for a usage mistake, 1 when the\n"
               "shim or a path is missing.\n");
}

/* The options that take a value, and the variable each sets. */
static const struct {
    const char *opt, *var;
    int path; /* must exist */
} value_opts[] = {
    {"--policy", "XMATUNE_POLICY", 1},         {"--log", "XMATUNE_LOG", 0},
    {"--cache", "XMATUNE_CACHE", 0},           {"--include", "XMATUNE_INCLUDE", 0},
    {"--exclude", "XMATUNE_EXCLUDE", 0},       {"--budget", "XMATUNE_BUDGET_MS", 0},
    {"--iterations", "XMATUNE_ITERATIONS", 0}, {"--warmup", "XMATUNE_WARMUP", 0},
    {"--libcuda", "XMATUNE_LIBCUDA", 1},
};

int run_option_takes_value(const char *opt)
{
    for (size_t o = 0; o < sizeof value_opts / sizeof value_opts[0]; o++)
        if (!strcmp(opt, value_opts[o].opt)) return 1;
    return 0;
}

/* One option at argv[*i] (a value option consumes the next argument). Each value is
 * checked with the shim's own parser (common/options.c): the shim would warn and keep
 * its default, which a command line must not do silently. Returns 0, or the exit status
 * after saying what is wrong (2 a usage mistake, 1 a path that is not there). */
static int run_option(int argc, char **argv, int *i, int *verbose)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--discover") || !strcmp(a, "--tune") || !strcmp(a, "--replay") ||
        !strcmp(a, "--off")) {
        setenv("XMATUNE_MODE", a + 2, 1);
        return 0;
    }
    if (!strcmp(a, "--auto")) {
        setenv("XMATUNE_AUTO", "1", 1);
        return 0;
    }
    if (!strcmp(a, "--background")) { /* docs/tuning.md, "In the background" */
        setenv("XMATUNE_TUNING", "background", 1);
        return 0;
    }
    if (!strcmp(a, "--retune")) { /* docs/cache.md, "Every outcome is remembered" */
        setenv("XMATUNE_RETUNE", "outcomes", 1);
        return 0;
    }
    if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
        char lvl[16], ok[160];
        snprintf(lvl, sizeof lvl, "%d", ++*verbose);
        if (xmt_option_check("XMATUNE_VERBOSE", lvl, ok, sizeof ok) == -1) {
            fprintf(stderr, "xmatune run: -v given %d times: XMATUNE_VERBOSE takes %s\n", *verbose,
                    ok);
            return 2;
        }
        setenv("XMATUNE_VERBOSE", lvl, 1);
        return 0;
    }
    for (size_t o = 0; o < sizeof value_opts / sizeof value_opts[0]; o++) {
        if (strcmp(a, value_opts[o].opt)) continue;
        if (*i + 1 >= argc) {
            fprintf(stderr, "xmatune run: %s needs a value\n", a);
            usage_run(stderr);
            return 2;
        }
        const char *v = argv[++*i];
        char ok[160];
        if (xmt_option_check(value_opts[o].var, v, ok, sizeof ok) == -1) {
            fprintf(stderr, "xmatune run: %s %s: %s takes %s\n", a, *v ? v : "(empty)",
                    value_opts[o].var, ok);
            return 2;
        }
        if (value_opts[o].path && access(v, F_OK) != 0) {
            fprintf(stderr, "xmatune run: %s %s: %s\n", a, v, strerror(errno));
            return 1;
        }
        setenv(value_opts[o].var, v, 1);
        return 0;
    }
    fprintf(stderr, "xmatune run: unknown option %s\n", a);
    usage_run(stderr);
    return 2;
}

/* Under replay the cache is only read: one that is not there is a typo (as for `xmatune
 * cache list`), and the program would run untuned with nothing said but a miss per key.
 * A path with %p (one per process) cannot be checked. 0, or 1 after saying so. */
static int replay_cache_missing(int flag)
{
    const char *mode = getenv("XMATUNE_MODE"), *cache = getenv("XMATUNE_CACHE");
    if (!mode || strcmp(mode, "replay") || !cache || !*cache || !strcmp(cache, "off") ||
        strstr(cache, "%p") || access(cache, F_OK) == 0)
        return 0;
    fprintf(stderr, "xmatune run: %s%s: %s (replay reads a cache, never makes one)\n",
            flag ? "--cache " : "XMATUNE_CACHE=", cache, strerror(errno));
    return 1;
}

int run_prepare(int argc, char **argv, int *status)
{
    int i = 1, verbose = 0, cache_flag = 0;
    *status = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage_run(stdout);
            return -1;
        }
        cache_flag |= !strcmp(argv[i], "--cache");
        int r = run_option(argc, argv, &i, &verbose);
        if (r) {
            *status = r;
            return -1;
        }
    }
    if (i >= argc) {
        usage_run(stderr);
        *status = 2;
        return -1;
    }
    if (replay_cache_missing(cache_flag)) {
        *status = 1;
        return -1;
    }
    char shim[PATH_MAX];
    if (find_shim(shim, sizeof shim) != 0) {
        *status = 1;
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    char pre[2 * PATH_MAX];
    size_t san = xmt_preload_sanitizer_first(old);
    const char *rest = old ? old + san : "";
    rest += strspn(rest, ": ");
    if (snprintf(pre, sizeof pre, "%.*s%s%s%s%s", (int)san, old ? old : "", san ? ":" : "", shim,
                 *rest ? ":" : "", rest) >= (int)sizeof pre) {
        fprintf(stderr, "xmatune run: LD_PRELOAD is too long\n");
        *status = 1;
        return -1;
    }
    setenv("LD_PRELOAD", pre, 1);
    return i;
}

int run_exec(char **argv)
{
    execvp(argv[0], argv);
    fprintf(stderr, "xmatune run: %s: %s\n", argv[0], strerror(errno));
    return 127;
}

int cmd_run(int argc, char **argv)
{
    int status, prog = run_prepare(argc, argv, &status);
    return prog < 0 ? status : run_exec(argv + prog);
}
