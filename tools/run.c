/*
 * run: `xmatune run [--tune|--discover|...] -- PROGRAM`, a program under the shim without
 * typing LD_PRELOAD.
 */
#include "run.h"
#include "preload.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef XMATUNE_LIBDIR_REL
#define XMATUNE_LIBDIR_REL "../lib"
#endif

/* Where libxmatune.so is: XMATUNE_SHIM, else beside this program: in the build tree
 * (tools/ -> shim/), installed (bin/ -> the library directory this build installs into,
 * XMATUNE_LIBDIR_REL, then lib/ and lib64/), or in the same folder. */
static int find_shim(char *out, size_t cap)
{
    const char *env = getenv("XMATUNE_SHIM");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    static const char installed[] = "/" XMATUNE_LIBDIR_REL "/libxmatune.so";
    static const char *const rel[] = {"/../shim/libxmatune.so", installed, "/../lib/libxmatune.so",
                                      "/../lib64/libxmatune.so", "/libxmatune.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(out, cap, "%s%s", exe, rel[i]);
        if (access(out, R_OK) == 0) {
            char *real = realpath(out, NULL);
            if (real) {
                snprintf(out, cap, "%s", real);
                free(real);
            }
            return 0;
        }
    }
    return -1;
}

int cmd_run(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "--discover") || !strcmp(a, "--tune") || !strcmp(a, "--replay") ||
            !strcmp(a, "--off")) {
            setenv("XMATUNE_MODE", a + 2, 1);
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            setenv("XMATUNE_VERBOSE", "1", 1);
        } else if ((!strcmp(a, "--policy") || !strcmp(a, "--log") || !strcmp(a, "--cache")) &&
                   i + 1 < argc) {
            const char *var = !strcmp(a, "--policy") ? "XMATUNE_POLICY"
                              : !strcmp(a, "--log")  ? "XMATUNE_LOG"
                                                     : "XMATUNE_CACHE";
            setenv(var, argv[++i], 1);
        } else {
            fprintf(stderr, "xmatune run: unknown option %s\n", a);
            i = argc;
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr,
                "usage: xmatune run [--discover|--tune|--replay|--off] [--policy P] [--log L]\n"
                "                   [--cache C] [-v] [--] PROGRAM [ARGS...]\n"
                "Runs PROGRAM with libxmatune.so preloaded (found beside this command, or\n"
                "XMATUNE_SHIM) and the options given as XMATUNE_* variables.\n");
        return 2;
    }
    char shim[PATH_MAX];
    if (find_shim(shim, sizeof shim) != 0) {
        fprintf(
            stderr,
            "xmatune: run: libxmatune.so is not beside this command (../shim/, " XMATUNE_LIBDIR_REL
            "/, ../lib/, ../lib64/); set XMATUNE_SHIM to its path\n");
        return 1;
    }
    const char *old = getenv("LD_PRELOAD");
    char pre[2 * PATH_MAX];
    size_t san = xmt_preload_sanitizer_first(old);
    const char *rest = old ? old + san : "";
    rest += strspn(rest, ": ");
    if (snprintf(pre, sizeof pre, "%.*s%s%s%s%s", (int)san, old ? old : "", san ? ":" : "", shim,
                 *rest ? ":" : "", rest) >= (int)sizeof pre) {
        fprintf(stderr, "xmatune run: LD_PRELOAD is too long\n");
        return 1;
    }
    setenv("LD_PRELOAD", pre, 1);
    execvp(argv[i], argv + i);
    perror(argv[i]);
    return 127;
}
