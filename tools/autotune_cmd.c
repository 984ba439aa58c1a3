/*
 * autotune_cmd: `xmatune autotune [--log LOG] [--write-policy FILE] [RUN OPTIONS] [--]
 * PROGRAM [ARGS...]`. Runs PROGRAM as `xmatune run --auto` does (every option of run may
 * be given), with its log in LOG (default xmatune-autotune.jsonl, replaced), then prints
 * the report of that log; --write-policy FILE writes, for each kernel auto tuned, the
 * policy entry that reproduces it (stub.c, write_auto_policy), for a person to edit.
 */
#include "autotune_cmd.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "logevent.h"
#include "logread.h"
#include "report.h"
#include "run.h"
#include "stub.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: xmatune autotune [--log LOG] [--write-policy FILE] [RUN OPTIONS]\n"
               "                        [--] PROGRAM [ARGS...]\n"
               "Runs PROGRAM tuned with no policy (xmatune run --auto: XMATUNE_AUTO=1; the\n"
               "options of xmatune run may be given too, a --policy's entries win for the\n"
               "kernels they name), its log in LOG (default xmatune-autotune.jsonl, replaced),\n"
               "then prints the log's report. --write-policy FILE writes, for each kernel auto\n"
               "tuned, the policy entry that reproduces what it did (the idiom that won, its\n"
               "space, its key), to check with `xmatune check FILE` and edit. Exit status:\n"
               "PROGRAM's, 127 when it could not start, 2 for a usage mistake, 1 when the\n"
               "policy could not be written.\n");
}

/* Writes the policy for the log's kernel and tune events. 0, or 1 after saying why. */
static int write_policy(const char *log, const char *path)
{
    json_t *ev[XMT_EV_COUNT] = {0};
    json_t *kernels = ev[XMT_EV_KERNEL] = json_array();
    json_t *tunes = ev[XMT_EV_TUNE] = json_array();
    (void)xmt_log_collect(log, ev);
    FILE *out = fopen(path, "w");
    int rc = 0;
    if (!out) {
        perror(path);
        rc = 1;
    } else {
        size_t n = write_auto_policy(out, kernels, tunes);
        int bad = ferror(out);
        if (fclose(out) != 0 || bad) {
            perror(path);
            rc = 1;
        } else
            fprintf(stderr, "xmatune autotune: policy for %zu kernel%s auto tuned in %s\n", n,
                    n == 1 ? "" : "s", path);
    }
    json_decref(kernels);
    json_decref(tunes);
    return rc;
}

int cmd_autotune(int argc, char **argv)
{
    const char *log = "xmatune-autotune.jsonl", *policy = NULL;
    /* argv for run: "run", --auto, --log LOG, the run options, "--", PROGRAM ... */
    char **rargv = calloc((size_t)argc + 6, sizeof *rargv);
    if (!rargv) return 1;
    int rn = 0, i = 1;
    rargv[rn++] = "run";
    rargv[rn++] = "--auto";
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            free(rargv);
            return 0;
        }
        if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log = argv[++i];
        else if (!strcmp(argv[i], "--write-policy") && i + 1 < argc)
            policy = argv[++i];
        else {
            rargv[rn++] = argv[i]; /* run's own, with its value when it takes one */
            if (run_option_takes_value(argv[i]) && i + 1 < argc) rargv[rn++] = argv[++i];
        }
    }
    if (i >= argc) {
        usage(stderr);
        free(rargv);
        return 2;
    }
    rargv[rn++] = "--log";
    rargv[rn++] = (char *)log;
    rargv[rn++] = "--";
    for (; i < argc; i++)
        rargv[rn++] = argv[i];
    rargv[rn] = NULL;
    /* run's options checked (and set) here, before the last log is removed: a bad one
     * ends the command as it ends xmatune run */
    int status = 0, prog = run_prepare(rn, rargv, &status);
    if (prog < 0) {
        free(rargv);
        return status;
    }
    unlink(log); /* the report and the policy are this run's only */
    (void)fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("xmatune autotune: fork");
        free(rargv);
        return 1;
    }
    if (pid == 0) _exit(run_exec(rargv + prog)); /* execs PROGRAM, or says why not */
    free(rargv);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (access(log, R_OK) != 0) {
        fprintf(stderr,
                "xmatune autotune: no log: the program did not start or asked for no "
                "CUDA entry point (exit status %d)\n",
                rc);
        return rc ? rc : 1;
    }
    fprintf(stderr, "xmatune autotune: exited with %d; log in %s\n", rc, log);
    char *pargv[] = {"report", (char *)log};
    cmd_report(2, pargv);
    if (policy && write_policy(log, policy) != 0 && !rc) rc = 1;
    return rc;
}
