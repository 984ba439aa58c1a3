/*
 * discover: `xmatune discover [--log LOG] [--stub FILE] [--] PROGRAM [ARGS...]` — the
 * first thing a user runs. It runs PROGRAM under the shim in discover mode, then prints
 * what it launched (`xmatune report` of the log) and, with --stub, writes a policy
 * skeleton for every kernel it saw (tools/stub.c), its launch idiom chosen from the
 * launches recorded. The skeleton loads as it is (`xmatune check`); protect: auto needs no
 * buffer declared, and what only the person who knows the kernel can say (a float-atomic
 * output's tolerance, a block size it relies on) is left in comments that say so.
 */
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

static void usage(void)
{
    fprintf(stderr,
            "usage: xmatune discover [--log LOG] [--stub FILE] [--] PROGRAM [ARGS...]\n"
            "Runs PROGRAM under the shim in discover mode, then prints every kernel it\n"
            "launched with its launch shapes; --stub FILE also writes a policy skeleton for\n"
            "them. LOG defaults to xmatune-discover.jsonl (replaced).\n");
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
        if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log = argv[++i];
        else if (!strcmp(argv[i], "--stub") && i + 1 < argc)
            stub = argv[++i];
        else {
            usage();
            return 2;
        }
    }
    if (i >= argc) {
        usage();
        return 2;
    }
    unlink(log);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        char **args = calloc((size_t)(argc - i) + 6, sizeof *args);
        if (!args) _exit(127);
        int n = 0;
        args[n++] = "run";
        args[n++] = "--discover";
        args[n++] = "--log";
        args[n++] = (char *)log;
        args[n++] = "--";
        for (int j = i; j < argc; j++)
            args[n++] = argv[j];
        _exit(cmd_run(n, args));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(stderr, "xmatune discover: %s exited with %d; log in %s\n", argv[i], rc, log);
    if (access(log, R_OK) != 0) {
        fprintf(stderr, "xmatune discover: no log: the program asked for no CUDA entry point\n");
        return rc ? rc : 1;
    }
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
                fprintf(stderr, "xmatune discover: policy skeleton for %zu kernel(s) in %s\n",
                        json_array_size(kernels), stub);
        }
        json_decref(kernels);
        json_decref(summaries);
    }
    return rc;
}
