/*
 * report: `xmatune report LOG`, a log as tables (tunings, what tuning cost, kernels,
 * replay misses), and with --svg/--html a picture of its tune events (report_svg.c).
 *
 * The log is read by common/logread's collector, its fields by logevent.h's names (the
 * shim writes with the same). Kernel names are shown demangled, without parameter lists,
 * so that a table stays readable.
 */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cacherec.h"
#include "logread.h"
#include "report_svg.h"
#include "xmt_policy.h"

/* The short name of a kernel for a table: demangled, no return type or parameters (as
 * match: sees it), at most cap - 1 characters. */
static const char *short_name(const char *name, char *buf, size_t cap)
{
    xmt_sig_name(name, buf, cap);
    return buf;
}

static const char *sget(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

const char *xmt_md_cell(const char *s, char *buf, size_t cap)
{
    size_t at = 0;
    for (; s && *s && at + 3 < cap; s++) {
        if (*s == '|') buf[at++] = '\\';
        buf[at++] = *s;
    }
    buf[at] = 0;
    return buf;
}

/* Whether a config of a tune event (its winner) is the program's own: index -1. */
static int is_own(json_t *cfg)
{
    return json_integer_value(json_object_get(cfg, XMT_F_INDEX)) == -1;
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
    json_t *g = json_object_get(o, XMT_F_GRID), *b = json_object_get(o, XMT_F_BLOCK);
    snprintf(buf, cap, "grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) shared=%lld",
             json_integer_value(json_array_get(g, 0)), json_integer_value(json_array_get(g, 1)),
             json_integer_value(json_array_get(g, 2)), json_integer_value(json_array_get(b, 0)),
             json_integer_value(json_array_get(b, 1)), json_integer_value(json_array_get(b, 2)),
             json_integer_value(json_object_get(o, XMT_F_SHARED)));
}

/* Keys a replay run had no cached winner for (they ran the program's own config): one
 * row per kernel and key, with how many times (processes) it was missed. */
/* The keys decided from a cache (cache_hit events): which record each used, how it was
 * trusted, and where it came from: this user's cache, an import, or the fleet's tier
 * (XMATUNE_CACHE_REMOTE: "from the fleet"). */
static void report_hits(json_t *hits)
{
    size_t i, fleet = 0;
    json_t *e;
    json_array_foreach(hits, i, e) fleet += !strcmp(sget(e, XMT_F_ORIGIN), "remote");
    printf("\nKeys decided from the cache (%zu, %zu of them from the fleet's tier):\n\n"
           "| kernel | key | config | trust | from |\n| --- | --- | --- | --- | --- |\n",
           json_array_size(hits), fleet);
    json_array_foreach(hits, i, e)
    {
        char name[96], key[512];
        const char *o = sget(e, XMT_F_ORIGIN), *cfg = sget(e, XMT_F_CONFIG);
        const char *outcome = sget(e, XMT_F_OUTCOME);
        printf("| %s | %s | %s%s%s | %s | %s |\n",
               short_name(sget(e, XMT_F_NAME), name, sizeof name),
               xmt_md_cell(sget(e, XMT_F_KEY), key, sizeof key), cfg[0] ? cfg : "own config",
               outcome[0] ? ": " : "", outcome, sget(e, XMT_F_TRUST),
               !strcmp(o, "remote")   ? "from the fleet"
               : !strcmp(o, "import") ? "an import"
                                      : "this user's cache");
    }
}

static void report_misses(json_t *misses)
{
    json_t *seen = json_object(), *order = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(misses, i, e)
    {
        char id[2048];
        snprintf(id, sizeof id, "%s\x1f%s\x1f%lld", sget(e, XMT_F_KERNEL), sget(e, XMT_F_KEY),
                 (long long)json_integer_value(json_object_get(e, XMT_F_DEVICE)));
        json_t *n = json_object_get(seen, id);
        if (n) {
            json_integer_set(n, json_integer_value(n) + 1);
            continue;
        }
        json_object_set_new(seen, id, json_integer(1));
        json_array_append_new(order, json_pack("{sssO}", "id", id, "e", e));
    }
    printf(
        "\nReplay: keys with no cached winner (the program's own config ran; tune them):\n\n"
        "| kernel | key | device | times | policy | cause |\n| --- | --- | ---: | ---: | --- | --- "
        "|\n");
    json_array_foreach(order, i, e)
    {
        json_t *m = json_object_get(e, "e");
        char name[96];
        const char *cause = json_string_value(json_object_get(m, XMT_F_CAUSE));
        char cell[1024];
        printf("| %s | %s | %lld | %lld | %s | %s |\n",
               short_name(sget(m, XMT_F_NAME), name, sizeof name), sget(m, XMT_F_KEY),
               (long long)json_integer_value(json_object_get(m, XMT_F_DEVICE)),
               (long long)json_integer_value(json_object_get(seen, sget(e, "id"))),
               sget(m, XMT_F_POLICY), cause ? xmt_md_cell(cause, cell, sizeof cell) : "—");
    }
    json_decref(order);
    json_decref(seen);
}

/* Keys whose launches changed config in the middle of a process (switch events): what ran
 * before, what after, why, and when. */
static void report_switches(json_t *switches)
{
    printf("\nSwitches: keys whose launches changed config once the background decided:\n\n"
           "| kernel | key | device | before | after | why | after (ms) |\n"
           "| --- | --- | ---: | --- | --- | --- | ---: |\n");
    size_t i;
    json_t *e;
    json_array_foreach(switches, i, e)
    {
        char name[96];
        const char *from = json_string_value(json_object_get(e, XMT_F_FROM));
        const char *to = json_string_value(json_object_get(e, XMT_F_TO));
        printf("| %s | %s | %lld | %s | %s | %s | %.1f |\n",
               short_name(sget(e, XMT_F_NAME), name, sizeof name), sget(e, XMT_F_KEY),
               (long long)json_integer_value(json_object_get(e, XMT_F_DEVICE)),
               from ? from : "the program's own", to ? to : "the program's own", sget(e, XMT_F_WHY),
               fget(e, XMT_F_AFTER_MS));
    }
}

/* A session's waits on the GPU (its driver_calls' synchronizations and polled waits, in
 * ms) into buf; "—" when the event has none (the session ran in the program's process). */
static void gpu_waits(json_t *e, char *buf, size_t cap)
{
    json_t *dc = json_object_get(e, XMT_F_DRIVER_CALLS);
    if (!json_is_object(dc)) {
        snprintf(buf, cap, "—");
        return;
    }
    static const char *const waits[] = {"cuStreamSynchronize", "cuCtxSynchronize",
                                        "cuEventSynchronize", "polled_waits"};
    double ms = 0;
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
        double w = fget(json_object_get(dc, waits[i]), "ms");
        if (w > 0) ms += w;
    }
    snprintf(buf, cap, "%.1f", ms);
}

/* Per key: what tuning cost against its floor (the measurements' own GPU time), the
 * module load and clock warm-up apart, how much of it the trial helper waited on the GPU,
 * and why a key was left untuned. */
static void report_cost(json_t *tunes)
{
    size_t i;
    json_t *e;
    char name[96];
    printf("\n## Tuning cost\n\nfloor: what the measurements cost on the GPU alone (every timed "
           "run's kernel time, plus each candidate's warm-up runs); rest / floor: the tuning's "
           "other time (module load and clock warm-up apart) against it; full floor: what "
           "timing every candidate in full would have cost (racing saves the difference); GPU "
           "waits: the part of the tuning the trial helper spent waiting on the GPU (its "
           "synchronizations and polled waits for runs; — for a session in the program's own "
           "process).\n\n"
           "| kernel | key | tuning ms | module load + clock warm-up ms "
           "| floor ms | rest / floor | full floor ms | GPU waits ms | protection | untuned |\n"
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    json_array_foreach(tunes, i, e)
    {
        json_t *ph = json_object_get(e, XMT_F_PHASES_MS), *pr = json_object_get(e, XMT_F_PROTECT);
        double d = fget(e, XMT_F_DURATION_MS), fl = fget(e, XMT_F_FLOOR_MS);
        double apart = ph ? fget(ph, XMT_F_PH_MODULE_LOAD) + fget(ph, XMT_F_PH_CLOCK_WARMUP) : 0;
        char prot[96] = "—", ratio[32] = "—";
        if (json_is_string(pr))
            snprintf(prot, sizeof prot, "%s", json_string_value(pr));
        else if (json_is_object(pr) && json_is_false(json_object_get(pr, XMT_F_IN_PLACE_CHECKED)))
            snprintf(prot, sizeof prot, "auto: %lld output bytes, in place not asked, on the %s",
                     json_integer_value(json_object_get(pr, XMT_F_OUTPUT_BYTES)),
                     sget(pr, XMT_F_VERIFY_ON));
        else if (json_is_object(pr))
            snprintf(prot, sizeof prot, "auto: %lld output bytes, %lld in place, on the %s",
                     json_integer_value(json_object_get(pr, XMT_F_OUTPUT_BYTES)),
                     json_integer_value(json_object_get(pr, XMT_F_IN_PLACE_BYTES)),
                     sget(pr, XMT_F_VERIFY_ON));
        if (fl > 0) snprintf(ratio, sizeof ratio, "%.2f", (d - apart) / fl);
        const char *why = json_string_value(json_object_get(e, XMT_F_UNTUNED));
        const char *cut = json_string_value(json_object_get(e, XMT_F_BUDGET_CUT));
        char untold[400];
        snprintf(untold, sizeof untold, "%s%s%s%s", why ? why : "", why && cut ? "; " : "",
                 cut ? "budget spent in " : "", cut ? cut : "");
        double full = fget(e, XMT_F_FULL_FLOOR_MS);
        char waits[32];
        gpu_waits(e, waits, sizeof waits);
        printf("| %s | %s | %.1f | %.1f | %.1f | %s | %.1f | %s | %s | %s |\n",
               short_name(sget(e, XMT_F_NAME), name, sizeof name), sget(e, XMT_F_KEY), d, apart,
               fl > 0 ? fl : 0.0, ratio, full > 0 ? full : 0.0, waits, prot, untold);
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
        json_t *own = json_object_get(e, XMT_F_OWN), *win = json_object_get(e, XMT_F_WINNER);
        int ok = 0, skipped = 0, rejected = 0, faulted = 0, eliminated = 0;
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(e, XMT_F_CANDIDATES), j, c)
        {
            const char *st = sget(c, XMT_F_STATUS);
            ok += !strcmp(st, "ok");
            skipped += !strcmp(st, "skipped") || !strcmp(st, "skipped_after_fault");
            rejected += !strcmp(st, "rejected");
            faulted += !strcmp(st, "fault");
            eliminated += json_object_get(c, XMT_F_ELIMINATED) != NULL;
        }
        double to =
            fget(own, XMT_F_MEDIAN_MS) >= 0 ? fget(own, XMT_F_MEDIAN_MS) : fget(own, XMT_F_MEAN_MS);
        double tw =
            fget(win, XMT_F_MEDIAN_MS) >= 0 ? fget(win, XMT_F_MEDIAN_MS) : fget(win, XMT_F_MEAN_MS);
        dims(own, a, sizeof a);
        dims(win, b, sizeof b);
        printf("| %s | %s | %s |", short_name(sget(e, XMT_F_NAME), name, sizeof name),
               sget(e, XMT_F_KEY), a);
        print_time(to);
        int cached = json_is_true(json_object_get(e, XMT_F_FROM_CACHE));
        /* a config auto derived names the launch idiom it follows */
        const char *idiom =
            json_string_value(json_object_get(json_object_get(win, XMT_F_AUTO), XMT_F_IDIOM));
        char idm[48] = "";
        if (idiom) snprintf(idm, sizeof idm, " (idiom: %s)", idiom);
        int own_won = is_own(win);
        printf(" %s%s%s%s%s |", own_won ? "program's own" : sget(win, XMT_F_CONFIG),
               own_won ? "" : ": ", own_won ? "" : b, idm,
               cached ? " (from the cache, verified: not tuned here)" : "");
        print_time(tw);
        if (!cached && to > 0 && tw > 0) /* a cached winner's speed-up was not measured here */
            printf(" %.2f× |", to / tw);
        else
            printf(" — |");
        char fl[96] = "";
        if (faulted) snprintf(fl, sizeof fl, ", %d faulted (trial helper)", faulted);
        if (eliminated) {
            size_t l = strlen(fl);
            snprintf(fl + l, sizeof fl - l, "; %d of the ok eliminated by racing", eliminated);
        }
        /* float outputs that differed by rounding alone (shim/session/rounding.h) */
        json_t *rd = json_object_get(e, XMT_F_ROUNDING);
        char rnd[96] = "";
        if (json_integer_value(json_object_get(rd, XMT_F_ROUNDED)) > 0)
            snprintf(rnd, sizeof rnd, "; %lld differ by float rounding alone, up to %.2g",
                     (long long)json_integer_value(json_object_get(rd, XMT_F_ROUNDED)),
                     json_number_value(json_object_get(rd, XMT_F_MAX_REL)));
        printf(" %d ok, %d skipped, %d rejected%s%s%s%s |\n", ok, skipped, rejected, fl,
               json_is_true(json_object_get(e, XMT_F_TOLERANCE)) ? "; within a tolerance" : "", rnd,
               json_object_get(e, XMT_F_ERROR) ? "; an error: see the log" : "");
    }
}

/* Every rejected candidate with its reason, in the policy's terms (the parameter whose
 * data differed): the table above only counts them. */
static void report_rejections(json_t *tunes)
{
    size_t i, j;
    json_t *e, *c;
    char name[96];
    int any = 0;
    json_array_foreach(tunes, i, e)
    {
        json_array_foreach(json_object_get(e, XMT_F_CANDIDATES), j, c)
        {
            if (strcmp(sget(c, XMT_F_STATUS), "rejected")) continue;
            if (!any++)
                printf("\nRejected candidates (they ran and their results differed from the "
                       "program's own config's):\n\n");
            printf("- %s, %s: %s: %s\n", short_name(sget(e, XMT_F_NAME), name, sizeof name),
                   sget(e, XMT_F_KEY), sget(c, XMT_F_CONFIG), sget(c, XMT_F_WHY));
        }
    }
}

/* Every key whose decision the edge did not settle (race.h, xmt_race_edge): a candidate
 * still measured within 2 standard errors of the tie limit when its rounds or its share of
 * the floor ran out, so that another process may choose otherwise. */
static void report_edge(json_t *tunes)
{
    size_t i;
    json_t *e;
    char name[96];
    int any = 0;
    json_array_foreach(tunes, i, e)
    {
        json_t *race = json_object_get(e, XMT_F_RACE);
        long long left = json_integer_value(json_object_get(race, XMT_F_EDGE_LEFT));
        if (left <= 0) continue;
        if (!any++)
            printf("\nDecided at the edge of the tie limit (re-timing did not settle which side "
                   "a config is on: another process may choose another config within the limit; "
                   "pin one to make every process use it; docs/tuning.md, Racing, \"The "
                   "edge\"):\n\n");
        json_t *win = json_object_get(e, XMT_F_WINNER);
        printf("- %s, %s: %lld config%s still at the edge after %lld rounds; chose %s\n",
               short_name(sget(e, XMT_F_NAME), name, sizeof name), sget(e, XMT_F_KEY), left,
               left == 1 ? "" : "s",
               (long long)json_integer_value(json_object_get(race, XMT_F_EDGE_ROUNDS)),
               is_own(win) ? "the program's own config" : sget(win, XMT_F_CONFIG));
    }
}

/* Every config racing stopped timing, with the runs it got: the table above counts them
 * among the ok ones (they were verified and timed, and lost). */
static void report_eliminated(json_t *tunes)
{
    size_t i, j;
    json_t *e, *c;
    char name[96];
    int any = 0;
    json_array_foreach(tunes, i, e)
    {
        json_t *own = json_object_get(e, XMT_F_OWN);
        for (j = 0; j <= json_array_size(json_object_get(e, XMT_F_CANDIDATES)); j++) {
            c = j == 0 ? own : json_array_get(json_object_get(e, XMT_F_CANDIDATES), j - 1);
            json_t *el = json_object_get(c, XMT_F_ELIMINATED);
            if (!el) continue;
            if (!any++)
                printf("\nEliminated candidates (racing timed them no more: slower than the "
                       "leader by more than the noise explains; docs/tuning.md, Racing):\n\n");
            long long runs = json_integer_value(json_object_get(el, XMT_F_TIMED_RUNS));
            long long warm = json_integer_value(json_object_get(el, XMT_F_WARMUP_RUNS));
            printf("- %s, %s: %s: after round %lld (%lld timed run%s, %lld warm-up%s)\n",
                   short_name(sget(e, XMT_F_NAME), name, sizeof name), sget(e, XMT_F_KEY),
                   j == 0 ? "the program's own config" : sget(c, XMT_F_CONFIG),
                   json_integer_value(json_object_get(el, XMT_F_ROUND)), runs, runs == 1 ? "" : "s",
                   warm, warm == 1 ? "" : "s");
        }
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
        json_t *shapes = json_object_get(e, XMT_F_SHAPES);
        long long n = json_is_array(shapes) ? (long long)json_array_size(shapes)
                                            : json_integer_value(json_object_get(e, XMT_F_KEYS));
        const char *pol = json_string_value(json_object_get(e, XMT_F_POLICY));
        /* graphs (docs/graphs.md): launches made by replays; kernel nodes rewritten/added */
        long long gn = json_integer_value(json_object_get(e, XMT_F_GRAPH_NODES)),
                  gu = json_integer_value(json_object_get(e, XMT_F_GRAPH_NODES_UNTUNED));
        char nodes[96] = "—";
        if (gn)
            snprintf(nodes, sizeof nodes, "%lld/%lld rewritten%s",
                     json_integer_value(json_object_get(e, XMT_F_GRAPH_NODES_REWRITTEN)), gn,
                     gu ? "; in a graph, not tuned" : "");
        printf("| %s | %lld | %lld | %lld | %lld | %s | %lld | %s |\n",
               short_name(sget(e, XMT_F_NAME), name, sizeof name),
               json_integer_value(json_object_get(e, XMT_F_LAUNCHES)),
               json_integer_value(json_object_get(e, XMT_F_REWRITTEN)),
               json_integer_value(json_object_get(e, XMT_F_PASSED_THROUGH)), n, pol ? pol : "—",
               json_integer_value(json_object_get(e, XMT_F_GRAPH_LAUNCHES)), nodes);
    }
}

/* Discover mode: every kernel's distinct launch shapes, with how many launches each. */
static void report_shapes(json_t *summaries)
{
    size_t i, j;
    json_t *e, *sh;
    char name[96], d[160];
    int any = 0;
    json_array_foreach(summaries, i, e)
    {
        json_t *shapes = json_object_get(e, XMT_F_SHAPES);
        if (!json_is_array(shapes)) continue;
        if (!any++)
            printf("\n## Launch shapes\n\n| kernel | device | launch shape | launches |\n"
                   "| --- | ---: | --- | ---: |\n");
        json_array_foreach(shapes, j, sh)
        {
            dims(sh, d, sizeof d);
            printf("| %s | %lld | %s | %lld |\n",
                   short_name(sget(e, XMT_F_NAME), name, sizeof name),
                   json_integer_value(json_object_get(e, XMT_F_DEVICE)), d,
                   json_integer_value(json_object_get(sh, XMT_F_COUNT)));
        }
        long long other = json_integer_value(json_object_get(e, XMT_F_OTHER_SHAPES));
        if (other)
            printf("| %s | %lld | (other shapes, beyond the 64 kept) | %lld |\n",
                   short_name(sget(e, XMT_F_NAME), name, sizeof name),
                   json_integer_value(json_object_get(e, XMT_F_DEVICE)), other);
    }
}

static void count_record(void *ud, const xmt_cacherec *r)
{
    (void)r;
    ++*(size_t *)ud;
}

/* 1 when path holds records of the on-disk cache (which read as a log of no events, and
 * report nothing); said, with the command that lists them. */
static int is_cache(const char *path)
{
    size_t n = 0;
    if (xmt_cacherec_read(path, count_record, &n, NULL) < 0 || !n) return 0;
    fprintf(stderr,
            "xmatune report: %s is a cache, not a log (XMATUNE_LOG): `xmatune cache list "
            "--cache %s` lists it\n",
            path, path);
    return 1;
}

int cmd_report(int argc, char **argv)
{
    const char *svg = NULL, *html = NULL, *drawn = NULL;
    int first = 1;
    while (first + 1 < argc && (!strcmp(argv[first], "--svg") || !strcmp(argv[first], "--html"))) {
        drawn = argv[first];
        *(argv[first][2] == 's' ? &svg : &html) = argv[first + 1];
        first += 2;
    }
    /* the options may also follow the logs */
    for (int i = first; i < argc; i++)
        if (!strcmp(argv[i], "--svg") || !strcmp(argv[i], "--html")) {
            if (i + 1 >= argc) break; /* no FILE: said below */
            drawn = argv[i];
            *(argv[i][2] == 's' ? &svg : &html) = argv[i + 1];
            for (int j = i; j + 2 < argc; j++)
                argv[j] = argv[j + 2];
            argc -= 2;
            i--;
        }
    for (int i = first; i < argc; i++)
        if (!strcmp(argv[i], "--svg") || !strcmp(argv[i], "--html")) {
            fprintf(stderr, "xmatune report: %s needs a FILE (xmatune report %s FILE LOG...)\n",
                    argv[i], argv[i]);
            return 2;
        }
    if (drawn && argc <= first) {
        fprintf(stderr,
                "xmatune report: %s: no log named: it is made from a log (xmatune report %s FILE "
                "LOG...)\n",
                drawn, drawn);
        return 2;
    }
    int help = argc > first && (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h"));
    if (argc <= first || argv[first][0] == '-') {
        if (argc > first && !help)
            fprintf(stderr, "xmatune report: unknown option %s\n", argv[first]);
        fprintf(help ? stdout : stderr,
                "usage: xmatune report [--svg FILE] [--html FILE] LOG...\n"
                "Prints a log (XMATUNE_LOG) as tables: every tuning (program's config and\n"
                "time, winner and time, speed-up, candidates), every kernel's launches, and\n"
                "in discover mode every kernel's launch shapes. --svg draws every tuning as a\n"
                "picture, --html writes a page with the tunings' table and that picture.\n");
        return help ? 0 : 2;
    }
    for (int i = first; i < argc; i++)
        if (is_cache(argv[i])) return 1;
    json_t *ev[XMT_EV_COUNT] = {0};
    ev[XMT_EV_TUNE] = json_array();
    ev[XMT_EV_KERNEL_SUMMARY] = json_array();
    ev[XMT_EV_REPLAY_MISS] = json_array();
    ev[XMT_EV_EXIT] = json_array();
    ev[XMT_EV_CACHE_HIT] = json_array();
    ev[XMT_EV_SWITCH] = json_array();
    long long bad = 0;
    for (int i = first; i < argc; i++) {
        int b = xmt_log_collect(argv[i], ev);
        if (b < 0) return 1;
        bad += b;
    }
    json_t *tunes = ev[XMT_EV_TUNE], *summaries = ev[XMT_EV_KERNEL_SUMMARY];
    long long launches = 0, rewritten = 0, processes = (long long)json_array_size(ev[XMT_EV_EXIT]);
    size_t x;
    json_t *e;
    json_array_foreach(ev[XMT_EV_EXIT], x, e)
    {
        launches += json_integer_value(json_object_get(e, XMT_F_LAUNCHES));
        rewritten += json_integer_value(json_object_get(e, XMT_F_REWRITTEN));
    }
    json_decref(ev[XMT_EV_EXIT]);
    printf("%lld process%s, %lld launch%s, %lld rewritten%s\n", processes,
           processes == 1 ? "" : "es", launches, launches == 1 ? "" : "es", rewritten,
           bad ? " (some lines were not JSON)" : "");
    if (json_array_size(tunes)) {
        report_tunings(tunes);
        report_rejections(tunes);
        report_eliminated(tunes);
        report_edge(tunes);
        report_cost(tunes);
    }
    if (json_array_size(summaries)) {
        report_kernels(summaries);
        report_shapes(summaries);
    }
    if (json_array_size(ev[XMT_EV_CACHE_HIT])) report_hits(ev[XMT_EV_CACHE_HIT]);
    json_decref(ev[XMT_EV_CACHE_HIT]);
    if (json_array_size(ev[XMT_EV_REPLAY_MISS])) report_misses(ev[XMT_EV_REPLAY_MISS]);
    json_decref(ev[XMT_EV_REPLAY_MISS]);
    if (json_array_size(ev[XMT_EV_SWITCH])) report_switches(ev[XMT_EV_SWITCH]);
    json_decref(ev[XMT_EV_SWITCH]);
    int wrote = 0;
    if (svg) wrote |= write_report_svg(svg, tunes);
    if (html) wrote |= write_report_html(html, tunes);
    json_decref(tunes);
    json_decref(summaries);
    return bad || wrote ? 1 : 0;
}
