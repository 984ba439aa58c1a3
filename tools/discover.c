/*
 * discover: `xmatune discover [--log LOG] [--stub FILE] [--] PROGRAM [ARGS...]` — the
 * first thing a user runs. It runs PROGRAM under the shim in discover mode, then prints
 * what it launched (`xmatune report` of the log) and, with --stub, writes a policy
 * skeleton for every kernel it saw: its exact name, its parameters as the driver laid them
 * out, its launch shapes as comments, and a block-size space to start from. The skeleton
 * loads as it is (`xmatune check`) but decides nothing about data safety: which buffers
 * need restore, reset_to_zero or verify is for the person who knows the kernel, and the
 * comments say so.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "xmt_policy.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: xmatune discover [--log LOG] [--stub FILE] [--] PROGRAM [ARGS...]\n"
            "Runs PROGRAM under the shim in discover mode, then prints every kernel it\n"
            "launched with its launch shapes; --stub FILE also writes a policy skeleton for\n"
            "them. LOG defaults to xmatune-discover.jsonl (replaced).\n");
}

/* A parameter type from its size alone (extern "C" and Triton names carry no types). */
static void guess_type(long long size, char *buf, size_t cap)
{
    if (size == 8)
        snprintf(buf, cap, "ptr");
    else if (size == 4)
        snprintf(buf, cap, "i32");
    else if (size == 2)
        snprintf(buf, cap, "i16");
    else if (size == 1)
        snprintf(buf, cap, "i8");
    else
        snprintf(buf, cap, "{bytes: %lld}", size);
}

static void write_stub(FILE *f, json_t *kernels, json_t *summaries)
{
    fprintf(f, "# A policy skeleton written by `xmatune discover`: one entry per kernel seen.\n"
               "# Delete the kernels not worth tuning, name the parameters, choose triggers (what\n"
               "# decides the best config) and, before tuning anything that writes memory it\n"
               "# also reads, declare restore / reset_to_zero / verify buffers: docs/policy.md.\n"
               "# Check it with: xmatune check THIS_FILE\n"
               "kernels:\n");
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        const char *mangled = json_string_value(json_object_get(k, "kernel"));
        const char *name = json_string_value(json_object_get(k, "name"));
        if (!mangled || !name) continue;
        /* Only once per kernel, whatever the devices. */
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) {
            const char *m2 =
                json_string_value(json_object_get(json_array_get(kernels, j), "kernel"));
            dup = m2 && !strcmp(m2, mangled);
        }
        if (dup) continue;
        char dm[2048];
        int demangled = xmt_demangle(mangled, NULL, 0, dm, sizeof dm) == 1;
        fprintf(f, "\n  # %s\n", name);
        size_t j;
        json_t *s;
        json_array_foreach(summaries, j, s)
        {
            const char *m2 = json_string_value(json_object_get(s, "kernel"));
            if (!m2 || strcmp(m2, mangled)) continue;
            fprintf(f, "  # device %lld: %lld launches%s\n",
                    json_integer_value(json_object_get(s, "device")),
                    json_integer_value(json_object_get(s, "launches")),
                    json_is_false(json_object_get(s, "rewritable"))
                        ? " (some through a path the tuner leaves alone: cooperative or "
                          "cluster launches)"
                        : "");
            size_t n;
            json_t *sh;
            json_array_foreach(json_object_get(s, "shapes"), n, sh)
            {
                json_t *g = json_object_get(sh, "grid"), *b = json_object_get(sh, "block");
                fprintf(f, "  #   grid (%lld,%lld,%lld) block (%lld,%lld,%lld) shared %lld: %lld\n",
                        json_integer_value(json_array_get(g, 0)),
                        json_integer_value(json_array_get(g, 1)),
                        json_integer_value(json_array_get(g, 2)),
                        json_integer_value(json_array_get(b, 0)),
                        json_integer_value(json_array_get(b, 1)),
                        json_integer_value(json_array_get(b, 2)),
                        json_integer_value(json_object_get(sh, "shared")),
                        json_integer_value(json_object_get(sh, "count")));
                if (n >= 7) {
                    fprintf(f, "  #   ...\n");
                    break;
                }
            }
        }
        fprintf(f, "  - mangled: \"%s\"\n    params: [", mangled);
        json_t *params = json_object_get(k, "params");
        size_t p;
        json_t *pv;
        json_array_foreach(params, p, pv)
        {
            char type[64];
            guess_type(json_integer_value(json_object_get(pv, "size")), type, sizeof type);
            /* With a demangled signature the types come from it: names alone suffice. */
            if (demangled)
                fprintf(f, "%sp%zu", p ? ", " : "", p);
            else
                fprintf(f, "%sp%zu: %s", p ? ", " : "", p, type);
        }
        fprintf(f, "]%s\n",
                demangled ? "   # types from the signature"
                          : "   # types guessed from sizes: check them");
        fprintf(f,
                "    # triggers: [p0]                 # the arguments that decide the best config\n"
                "    space: {BLOCK: [64, 128, 256, 512, 1024]}\n"
                "    launch: {block: [BLOCK]}         # grid kept: the same threads per dimension\n"
                "    # restore: [pN]   reset_to_zero: [pN]   verify: [pN]   (pointer parameters, "
                "with tensors: sizes)\n");
    }
}

/* Keeps the kernel and kernel_summary events of a log. */
static int collect(json_t *e, void *ud)
{
    json_t **lists = ud;
    const char *ev = json_string_value(json_object_get(e, "event"));
    if (ev && !strcmp(ev, "kernel"))
        json_array_append(lists[0], e);
    else if (ev && !strcmp(ev, "kernel_summary"))
        json_array_append(lists[1], e);
    return 0;
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
        json_t *lists[2] = {json_array(), json_array()}; /* kernel, kernel_summary */
        (void)read_jsonl(log, collect, lists);
        json_t *kernels = lists[0], *summaries = lists[1];
        FILE *out = fopen(stub, "w");
        if (!out) {
            perror(stub);
            rc = rc ? rc : 1;
        } else {
            write_stub(out, kernels, summaries);
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
