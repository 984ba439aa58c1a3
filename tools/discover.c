/*
 * discover: `xmatune discover [--log LOG] [--stub FILE] [--] PROGRAM [ARGS...]` — the
 * first thing a user runs. It runs PROGRAM under the shim in discover mode, then prints
 * what it launched (`xmatune report` of the log) and, with --stub, writes a policy
 * skeleton for every kernel it saw (tools/stub.c), its launch idiom chosen from the
 * launches recorded. The skeleton loads as it is (`xmatune check`); protect: auto needs no
 * buffer declared, and what only the person who knows the kernel can say (a float-atomic
 * output's tolerance, a block size it relies on) is left in comments that say so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "discover.h"
#include "logread.h"
#include "report.h"
#include "run.h"
#include "stub.h"
#include "xmt_policy.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: xmatune discover [--log LOG] [--stub FILE] [--] PROGRAM [ARGS...]\n"
               "Runs PROGRAM under the shim in discover mode, then prints every kernel it\n"
               "launched with its launch shapes; --stub FILE also writes a policy skeleton for\n"
               "them. LOG defaults to xmatune-discover.jsonl (replaced).\n");
}

/* Runs argv[i..] under the shim in discover mode, logging to log, and waits for it; *rc
 * its exit status. Returns 0, or -1 when the program did not start (the shim missing, the
 * exec failed: `run` returned, which it does only then), said by the child through a
 * close-on-exec pipe. */
static int run_discover(int argc, char **argv, int i, const char *log, int *rc)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        perror("pipe");
        *rc = 1;
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        close(fds[0]);
        close(fds[1]);
        *rc = 1;
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        char **args = calloc((size_t)(argc - i) + 6, sizeof *args);
        int r = 127;
        if (args) {
            int n = 0;
            args[n++] = "run";
            args[n++] = "--discover";
            args[n++] = "--log";
            args[n++] = (char *)log;
            args[n++] = "--";
            for (int j = i; j < argc; j++)
                args[n++] = argv[j];
            r = cmd_run(n, args);
        }
        char b = 1;
        ssize_t w = write(fds[1], &b, 1);
        (void)w;
        _exit(r);
    }
    close(fds[1]);
    char b;
    ssize_t got;
    do
        got = read(fds[0], &b, 1);
    while (got < 0 && errno == EINTR);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return got == 1 ? -1 : 0;
}

/* Why a program may never have asked for a CUDA entry point: it did not find the driver.
 * The program looked in this environment, so a dlopen here looks where it looked. Returns
 * the hint ("" when libcuda.so.1 loads, or under XMATUNE_LIBCUDA, which the program does
 * not read). */
static const char *driver_hint(void)
{
    static char hint[600];
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        return "";
    }
    const char *llp = getenv("LD_LIBRARY_PATH");
    snprintf(hint, sizeof hint,
             "; libcuda.so.1 is not found from this environment (LD_LIBRARY_PATH=%.300s): if "
             "the driver is in a folder of its own, add that folder to LD_LIBRARY_PATH",
             llp && *llp ? llp : "(unset)");
    return hint;
}

int cmd_discover(int argc, char **argv)
{
    const char *log = "xmatune-discover.jsonl", *stub = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log = argv[++i];
        else if (!strcmp(argv[i], "--stub") && i + 1 < argc)
            stub = argv[++i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    /* the run writes a log of its own, which replaces LOG only when the program started:
     * a typo in its path keeps the last good log */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.new", log) >= (int)sizeof tmp) {
        fprintf(stderr, "xmatune discover: %s: path too long\n", log);
        return 2;
    }
    unlink(tmp);
    int rc = 0;
    if (run_discover(argc, argv, i, tmp, &rc) != 0) {
        unlink(tmp);
        fprintf(stderr, "xmatune discover: %s did not start (exit status %d)%s%s\n", argv[i], rc,
                access(log, R_OK) == 0 ? "; the last log is kept in " : "",
                access(log, R_OK) == 0 ? log : "");
        return rc ? rc : 127;
    }
    if (access(tmp, F_OK) != 0)
        unlink(log); /* the program started but wrote no log: the old one is not its */
    else if (rename(tmp, log) != 0) {
        perror(log);
        return 1;
    }
    if (access(log, R_OK) != 0) {
        /* one line: "log in X" and then "no log" contradicted each other */
        fprintf(stderr,
                "xmatune discover: %s exited with %d without asking for a CUDA entry point: no "
                "log%s\n",
                argv[i], rc, driver_hint());
        return rc ? rc : 1;
    }
    fprintf(stderr, "xmatune discover: %s exited with %d; log in %s\n", argv[i], rc, log);
    char *rargv[] = {"report", (char *)log};
    cmd_report(2, rargv);
    if (stub) {
        json_t *ev[XMT_EV_COUNT] = {0};
        json_t *kernels = ev[XMT_EV_KERNEL] = json_array();
        json_t *summaries = ev[XMT_EV_KERNEL_SUMMARY] = json_array();
        (void)xmt_log_collect(log, ev);
        FILE *out = fopen(stub, "w");
        if (!out) {
            perror(stub);
            rc = rc ? rc : 1;
        } else {
            write_policy_stub(out, kernels, summaries);
            /* a full disk shows only here: never report a skeleton that was not written */
            int bad = ferror(out);
            if (fclose(out) != 0 || bad) {
                perror(stub);
                rc = rc ? rc : 1;
            } else
                fprintf(stderr, "xmatune discover: policy skeleton for %zu kernel%s in %s\n",
                        json_array_size(kernels), json_array_size(kernels) == 1 ? "" : "s", stub);
        }
        json_decref(kernels);
        json_decref(summaries);
    }
    return rc;
}
