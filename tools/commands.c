/*
 * commands: the xmatune subcommands that read what the shim wrote or start a program
 * under it — report (a log as tables), options
 * (the XMATUNE_* table, from the shim's own options table) and run (a program under the
 * shim without typing LD_PRELOAD).
 *
 * These run as an ordinary program, so they use jansson's loader (the shim itself only
 * writes JSON). Kernel names are shown demangled, without parameter lists, so that a
 * table stays readable.
 */
#include "commands.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "preload.h"
#include "report_svg.h"
#include "xmt_policy.h"

/* The short name of a kernel for a table: demangled, no parameters, at most `width`. */
static const char *short_name(const char *name, char *buf, size_t cap)
{
    const char *paren = strchr(name, '(');
    size_t n = paren ? (size_t)(paren - name) : strlen(name);
    if (n >= cap) n = cap - 1;
    memcpy(buf, name, n);
    buf[n] = 0;
    return buf;
}

static const char *sget(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static double fget(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static void print_time(double ms)
{
    if (ms < 0)
        printf(" — |");
    else if (ms < 1)
        printf(" %.1f µs |", ms * 1000);
    else
        printf(" %.3f ms |", ms);
}

static void dims(json_t *o, char *buf, size_t cap)
{
    json_t *g = json_object_get(o, "grid"), *b = json_object_get(o, "block");
    snprintf(buf, cap, "grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) shared=%lld",
             json_integer_value(json_array_get(g, 0)), json_integer_value(json_array_get(g, 1)),
             json_integer_value(json_array_get(g, 2)), json_integer_value(json_array_get(b, 0)),
             json_integer_value(json_array_get(b, 1)), json_integer_value(json_array_get(b, 2)),
             json_integer_value(json_object_get(o, "shared")));
}

int read_jsonl(const char *path, int (*fn)(json_t *e, void *ud), void *ud)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int bad = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t err;
        json_t *e = json_loads(line, 0, &err);
        if (!e || fn(e, ud) != 0) bad++;
        json_decref(e);
    }
    free(line);
    (void)fclose(f); /* read only */
    return bad;
}

typedef struct {
    json_t *tunes, *summaries, *misses;
    long long launches, rewritten, processes;
} report_acc;

/* Keys a replay run had no cached winner for (they ran the program's own config): one
 * row per kernel and key, with how many times (processes) it was missed. */
static void report_misses(json_t *misses)
{
    json_t *seen = json_object(), *order = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(misses, i, e)
    {
        char id[2048];
        snprintf(id, sizeof id, "%s\x1f%s\x1f%lld", sget(e, "kernel"), sget(e, "key"),
                 (long long)json_integer_value(json_object_get(e, "device")));
        json_t *n = json_object_get(seen, id);
        if (n) {
            json_integer_set(n, json_integer_value(n) + 1);
            continue;
        }
        json_object_set_new(seen, id, json_integer(1));
        json_array_append_new(order, json_pack("{sssO}", "id", id, "e", e));
    }
    printf("\nReplay: keys with no cached winner (the program's own config ran; tune them):\n\n"
           "| kernel | key | device | times | policy |\n| --- | --- | ---: | ---: | --- |\n");
    json_array_foreach(order, i, e)
    {
        json_t *m = json_object_get(e, "e");
        char name[96];
        printf("| %s | %s | %lld | %lld | %s |\n", short_name(sget(m, "name"), name, sizeof name),
               sget(m, "key"), (long long)json_integer_value(json_object_get(m, "device")),
               (long long)json_integer_value(json_object_get(seen, sget(e, "id"))),
               sget(m, "policy"));
    }
    json_decref(order);
    json_decref(seen);
}

static int report_event(json_t *e, void *ud)
{
    report_acc *a = ud;
    const char *ev = sget(e, "event");
    if (!strcmp(ev, "tune"))
        json_array_append(a->tunes, e);
    else if (!strcmp(ev, "kernel_summary"))
        json_array_append(a->summaries, e);
    else if (!strcmp(ev, "replay_miss"))
        json_array_append(a->misses, e);
    else if (!strcmp(ev, "exit")) {
        a->processes++;
        a->launches += json_integer_value(json_object_get(e, "launches"));
        a->rewritten += json_integer_value(json_object_get(e, "rewritten"));
    }
    return 0;
}

/* Per key: what tuning cost against its floor (the measurements' own GPU time), the
 * module load and clock warm-up apart, and why a key was left untuned. */
static void report_cost(json_t *tunes)
{
    size_t i;
    json_t *e;
    char name[96];
    printf("\n## Tuning cost\n\n| kernel | key | tuning ms | module load + clock warm-up ms "
           "| floor ms | rest / floor | protection | untuned |\n| --- | --- | ---: | ---: | ---: "
           "| ---: | --- | --- |\n");
    json_array_foreach(tunes, i, e)
    {
        json_t *ph = json_object_get(e, "phases_ms"), *pr = json_object_get(e, "protect");
        double d = fget(e, "duration_ms"), fl = fget(e, "floor_ms");
        double apart = ph ? fget(ph, "module_load") + fget(ph, "clock_warmup") : 0;
        char prot[96] = "—", ratio[32] = "—";
        if (json_is_string(pr))
            snprintf(prot, sizeof prot, "%s", json_string_value(pr));
        else if (json_is_object(pr))
            snprintf(prot, sizeof prot, "auto: %lld output bytes, %lld in place, on the %s",
                     json_integer_value(json_object_get(pr, "output_bytes")),
                     json_integer_value(json_object_get(pr, "in_place_bytes")),
                     sget(pr, "verify_on"));
        if (fl > 0) snprintf(ratio, sizeof ratio, "%.2f", (d - apart) / fl);
        const char *why = json_string_value(json_object_get(e, "untuned"));
        printf("| %s | %s | %.1f | %.1f | %.1f | %s | %s | %s |\n",
               short_name(sget(e, "name"), name, sizeof name), sget(e, "key"), d, apart,
               fl > 0 ? fl : 0.0, ratio, prot, why ? why : "");
    }
}

/* The tunings table: each key's own config and winner, their times, the candidates. */
static void report_tunings(json_t *tunes)
{
    size_t i;
    json_t *e;
    char name[96], a[128], b[128];
    printf("\n## Tunings\n\n| kernel | key | program's config | its time | winner | its time "
           "| speed-up | candidates |\n| --- | --- | --- | ---: | --- | ---: | ---: | --- |\n");
    json_array_foreach(tunes, i, e)
    {
        json_t *own = json_object_get(e, "own"), *win = json_object_get(e, "winner");
        int ok = 0, skipped = 0, rejected = 0;
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(e, "candidates"), j, c)
        {
            const char *st = sget(c, "status");
            ok += !strcmp(st, "ok");
            skipped += !strcmp(st, "skipped");
            rejected += !strcmp(st, "rejected");
        }
        double to = fget(own, "median_ms") >= 0 ? fget(own, "median_ms") : fget(own, "mean_ms");
        double tw = fget(win, "median_ms") >= 0 ? fget(win, "median_ms") : fget(win, "mean_ms");
        dims(own, a, sizeof a);
        dims(win, b, sizeof b);
        printf("| %s | %s | %s |", short_name(sget(e, "name"), name, sizeof name), sget(e, "key"),
               a);
        print_time(to);
        printf(" %s%s%s |",
               json_integer_value(json_object_get(win, "index")) == -1 ? "program's own"
                                                                       : sget(win, "config"),
               json_integer_value(json_object_get(win, "index")) == -1 ? "" : ": ",
               json_integer_value(json_object_get(win, "index")) == -1 ? "" : b);
        print_time(tw);
        if (to > 0 && tw > 0)
            printf(" %.2f× |", to / tw);
        else
            printf(" — |");
        printf(" %d ok, %d skipped, %d rejected%s%s |\n", ok, skipped, rejected,
               json_is_true(json_object_get(e, "tolerance")) ? " (within tolerance)" : "",
               json_object_get(e, "error") ? " (error: see log)" : "");
    }
}

/* The kernels table: launches, rewrites and keys per kernel. */
static void report_kernels(json_t *summaries)
{
    size_t i;
    json_t *e;
    char name[96];
    printf("\n## Kernels\n\n| kernel | launches | rewritten | passed through | keys / shapes "
           "| policy | replayed | graph nodes |\n| --- | ---: | ---: | ---: | ---: | --- | ---: "
           "| --- |\n");
    json_array_foreach(summaries, i, e)
    {
        json_t *shapes = json_object_get(e, "shapes");
        long long n = shapes ? (long long)json_array_size(shapes)
                             : json_integer_value(json_object_get(e, "keys"));
        const char *pol = json_string_value(json_object_get(e, "policy"));
        /* graphs (docs/graphs.md): launches made by replays; kernel nodes rewritten/added */
        long long gn = json_integer_value(json_object_get(e, "graph_nodes")),
                  gu = json_integer_value(json_object_get(e, "graph_nodes_untuned"));
        char nodes[96] = "—";
        if (gn)
            snprintf(nodes, sizeof nodes, "%lld/%lld rewritten%s",
                     json_integer_value(json_object_get(e, "graph_nodes_rewritten")), gn,
                     gu ? "; in a graph, not tuned" : "");
        printf("| %s | %lld | %lld | %lld | %lld | %s | %lld | %s |\n",
               short_name(sget(e, "name"), name, sizeof name),
               json_integer_value(json_object_get(e, "launches")),
               json_integer_value(json_object_get(e, "rewritten")),
               json_integer_value(json_object_get(e, "passed_through")), n, pol ? pol : "—",
               json_integer_value(json_object_get(e, "graph_launches")), nodes);
    }
}

int cmd_report(int argc, char **argv)
{
    const char *svg = NULL, *html = NULL;
    int first = 1;
    while (first + 1 < argc && (!strcmp(argv[first], "--svg") || !strcmp(argv[first], "--html"))) {
        *(argv[first][2] == 's' ? &svg : &html) = argv[first + 1];
        first += 2;
    }
    /* the options may also follow the logs */
    for (int i = first; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--svg") || !strcmp(argv[i], "--html")) {
            *(argv[i][2] == 's' ? &svg : &html) = argv[i + 1];
            for (int j = i; j + 2 < argc; j++)
                argv[j] = argv[j + 2];
            argc -= 2;
            i--;
        }
    if (argc <= first || argv[first][0] == '-') {
        fprintf(stderr,
                "usage: xmatune report [--svg FILE] [--html FILE] LOG...\n"
                "Prints a log (XMATUNE_LOG) as tables: every tuning (program's config and\n"
                "time, winner and time, speed-up, candidates), every kernel's launches, and\n"
                "in discover mode every kernel's launch shapes. --svg draws every tuning as a\n"
                "picture, --html writes a page with the tunings' table and that picture.\n");
        return 2;
    }
    report_acc acc = {json_array(), json_array(), json_array(), 0, 0, 0};
    long long bad = 0;
    for (int i = first; i < argc; i++) {
        int b = read_jsonl(argv[i], report_event, &acc);
        if (b < 0) return 1;
        bad += b;
    }
    json_t *tunes = acc.tunes, *summaries = acc.summaries;
    long long launches = acc.launches, rewritten = acc.rewritten, processes = acc.processes;
    printf("%lld process%s, %lld launches, %lld rewritten%s\n", processes,
           processes == 1 ? "" : "es", launches, rewritten,
           bad ? " (some lines were not JSON)" : "");
    if (json_array_size(tunes)) {
        report_tunings(tunes);
        report_cost(tunes);
    }
    if (json_array_size(summaries)) report_kernels(summaries);
    if (json_array_size(acc.misses)) report_misses(acc.misses);
    json_decref(acc.misses);
    int wrote = 0;
    if (svg) wrote |= write_report_svg(svg, tunes);
    if (html) wrote |= write_report_html(html, tunes);
    json_decref(tunes);
    json_decref(summaries);
    return bad || wrote ? 1 : 0;
}

int cmd_options(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    xmt_options_markdown(stdout);
    return 0;
}

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
