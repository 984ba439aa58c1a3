/* search_eval.c - the search strategy (policy/search.c) against recorded times: for each
 * space (a TSV that tools/bench/search/spaces.cu writes after timing every config on a GPU,
 * or a synthetic one this program writes) and seeds 1..N, runs the search as the tuner
 * would, an evaluation being one config reported, and prints a Markdown table of what it
 * found against the exhaustive best (issue 26 item 2; docs/benchmarks.md).
 *
 *   search_eval [--share F | --evals N] [--seeds N] [--batch N] [--strategy
 * local|local-kick|local-random|anneal]
 *               [--require R] FILE.tsv...
 *   search_eval [options] --synthetic DIR      (writes DIR/synth_*.tsv, then evaluates them)
 *
 * --require R exits 1 unless the median ratio over spaces and seeds is at least R.
 *
 * The TSV: comment lines "# params: NAME=v1,v2,... NAME=..." (the space, in order, the last
 * name varying fastest) and "# default: NAME=v ..." (the program's own config, the search's
 * start), a header row, then one row per config: the values, median_ms, valid (0/1).
 */
#include "search.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXD 16
#define MAXV 64
#define VLEN 24

typedef struct {
    char name[64];
    unsigned nd, dims[MAXD];
    char dname[MAXD][32];
    char val[MAXD][MAXV][VLEN];
    unsigned start[MAXD];
    size_t n, nvalid;
    double *t; /* INFINITY: invalid or missing */
} space;

typedef struct {
    double share;
    size_t evals;
    unsigned seeds, batch;
    xmt_strategy strategy;
    double require;
} opts;

static int find_val(const space *s, unsigned d, const char *v)
{
    for (unsigned i = 0; i < s->dims[d]; i++)
        if (!strcmp(s->val[d][i], v)) return (int)i;
    return -1;
}

/* "# params: A=1,2,4 B=8,16" */
static int parse_params(space *s, char *line)
{
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || s->nd >= MAXD) return -1;
        *eq = 0;
        unsigned d = s->nd++;
        snprintf(s->dname[d], sizeof s->dname[d], "%s", tok);
        char *save2 = NULL;
        for (char *v = strtok_r(eq + 1, ",", &save2); v; v = strtok_r(NULL, ",", &save2)) {
            if (s->dims[d] >= MAXV) return -1;
            snprintf(s->val[d][s->dims[d]++], VLEN, "%s", v);
        }
        if (!s->dims[d]) return -1;
    }
    return s->nd ? 0 : -1;
}

/* "# default: A=2 B=16" */
static int parse_default(space *s, char *line)
{
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        for (unsigned d = 0; d < s->nd; d++) {
            if (strcmp(s->dname[d], tok)) continue;
            int i = find_val(s, d, eq + 1);
            if (i < 0) return -1;
            s->start[d] = (unsigned)i;
        }
    }
    return 0;
}

/* One data row: the values, median_ms, valid. */
static int parse_row(space *s, char *line)
{
    unsigned c[MAXD];
    char *save = NULL, *tok = strtok_r(line, "\t\n", &save);
    for (unsigned d = 0; d < s->nd; d++, tok = strtok_r(NULL, "\t\n", &save)) {
        int i = tok ? find_val(s, d, tok) : -1;
        if (i < 0) return -1;
        c[d] = (unsigned)i;
    }
    char *tv = tok, *vv = strtok_r(NULL, "\t\n", &save);
    if (!tv || !vv) return -1;
    double t = strtod(tv, NULL);
    size_t idx = xmt_search_index(s->dims, s->nd, c);
    if (!strcmp(vv, "1") && isfinite(t) && t > 0) {
        if (!isfinite(s->t[idx])) s->nvalid++;
        s->t[idx] = t;
    }
    return 0;
}

static int alloc_times(space *s)
{
    s->n = 1;
    for (unsigned d = 0; d < s->nd; d++)
        s->n *= s->dims[d];
    s->t = malloc(s->n * sizeof *s->t);
    if (!s->t) return -1;
    for (size_t i = 0; i < s->n; i++)
        s->t[i] = INFINITY;
    return 0;
}

static int load_space(const char *path, space *s)
{
    memset(s, 0, sizeof *s);
    const char *base = strrchr(path, '/');
    snprintf(s->name, sizeof s->name, "%s", base ? base + 1 : path);
    char *dot = strrchr(s->name, '.');
    if (dot) *dot = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "search_eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int header = 0, bad = 0;
    unsigned lineno = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strncmp(line, "# params:", 9))
            bad = parse_params(s, line + 9) || alloc_times(s);
        else if (!strncmp(line, "# default:", 10))
            bad = s->nd ? parse_default(s, line + 10) : -1;
        else if (line[0] == '#' || line[0] == '\n')
            continue;
        else if (!header)
            header = 1; /* the column names */
        else
            bad = s->t ? parse_row(s, line) : -1;
    }
    (void)fclose(f);
    if (bad || !s->t) {
        fprintf(stderr, "search_eval: %s:%u: not a space's TSV (see the top of search_eval.c)\n",
                path, lineno);
        free(s->t);
        return -1;
    }
    return 0;
}

/* The search as the tuner runs it: batches handed out, each point's recorded time
 * reported. Returns the winner's time (INFINITY when nothing valid was found). */
static double run_search(const space *s, const opts *o, uint64_t seed, size_t budget, size_t *evals,
                         unsigned *restarts)
{
    xmt_search *x = xmt_search_new_with(
        s->dims, s->nd, seed, xmt_search_index(s->dims, s->nd, s->start), budget, o->strategy);
    if (!x) return INFINITY;
    size_t batch[1024];
    unsigned b = o->batch > 1024 ? 1024 : o->batch ? o->batch : 1;
    while (!xmt_search_done(x)) {
        size_t k = xmt_search_next(x, batch, b);
        if (!k) break; /* cannot happen with nothing outstanding: the test says so */
        for (size_t i = 0; i < k; i++)
            xmt_search_report(x, batch[i], s->t[batch[i]]);
    }
    double t;
    xmt_search_best(x, &t);
    *evals = xmt_search_evaluated(x);
    *restarts = xmt_search_restarts(x);
    xmt_search_free(x);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
}

/* One table row; appends this space's ratios to all. */
static void eval_space(const space *s, const opts *o, double *all, size_t *nall)
{
    double best = INFINITY;
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i] < best) best = s->t[i];
    size_t budget = o->evals       ? o->evals
                    : o->share > 0 ? (size_t)fmax(1, floor((double)s->n * o->share))
                                   : xmt_search_default_evals(s->n);
    double r[64] = {0}, worst = INFINITY;
    size_t used = 0, maxused = 0;
    unsigned rs = 0;
    for (unsigned seed = 1; seed <= o->seeds; seed++) {
        size_t ev = 0;
        unsigned rr = 0;
        double w = run_search(s, o, seed, budget, &ev, &rr);
        r[seed - 1] = isfinite(w) ? best / w : 0;
        if (r[seed - 1] < worst) worst = r[seed - 1];
        all[(*nall)++] = r[seed - 1];
        used += ev;
        rs += rr;
        if (ev > maxused) maxused = ev;
    }
    printf("| %s | %zu | %zu | %.1f (%.2f %%), at most %zu | %.1f | %.4f | %.4f |\n", s->name, s->n,
           s->nvalid, (double)used / o->seeds, 100.0 * (double)used / o->seeds / (double)s->n,
           maxused, (double)rs / o->seeds, median(r, o->seeds), worst);
}

/* ---- synthetic spaces: known landscapes for CI, with no GPU -------------------------- */

typedef struct {
    const char *name;
    unsigned nd, dims[5], opt[5], start[5];
    double ripple, noise; /* ripple: local minima every 3 steps; noise: relative */
    int kind;             /* 0 bowl, 1 invalid corner (c0 + c1 > 5), 2 ridge + invalid */
} synth;

static const synth synths[] = {
    {"synth_bowl", 4, {8, 8, 6, 5}, {6, 2, 4, 1}, {1, 6, 1, 3}, 0, 0.01, 0},
    {"synth_ripple", 3, {10, 10, 10}, {7, 3, 8}, {2, 7, 1}, 0.15, 0.01, 0},
    {"synth_invalid", 5, {4, 4, 4, 4, 4}, {3, 2, 1, 0, 3}, {1, 1, 2, 2, 0}, 0, 0.01, 1},
    {"synth_coupled", 5, {6, 6, 6, 6, 6}, {4, 3, 1, 2, 5}, {1, 1, 3, 3, 0}, 0.05, 0.01, 2},
    {"synth_flat", 3, {12, 12, 4}, {9, 10, 2}, {3, 3, 0}, 0, 0.02, 0},
};

static double noise01(uint64_t x)
{
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return (double)((x ^ (x >> 33)) >> 11) / 9007199254740992.0;
}

/* The time of one point, INFINITY where invalid; the optimum is the minimum by design
 * (its noise is 0). */
static double synth_time(const synth *y, unsigned id, size_t idx, const unsigned *c)
{
    if (y->kind >= 1 && c[0] + c[1] > 5) return INFINITY;
    if (y->kind == 2 && c[2] * c[3] > 12) return INFINITY;
    double t = 1, far = 0;
    for (unsigned d = 0; d < y->nd; d++) {
        double x = ((double)c[d] - y->opt[d]) / y->dims[d];
        t += 3 * x * x;
        far += fabs(x);
        t += y->ripple * (1 - cos(2 * M_PI * ((double)c[d] - y->opt[d]) / 3));
    }
    if (y->kind == 2) {
        double r = ((double)c[0] - c[1]) - ((double)y->opt[0] - y->opt[1]);
        t += 0.2 * r * r;
    }
    if (far == 0) return 1;
    return t * (1 + y->noise * (0.5 + noise01(idx * 131 + id)));
}

static int write_synth(const char *dir, unsigned id, char *path, size_t cap)
{
    const synth *y = &synths[id];
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "search_eval: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    snprintf(path, cap, "%s/%s.tsv", dir, y->name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "search_eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# space: %s (synthetic: search_eval --synthetic)\n# params:", y->name);
    for (unsigned d = 0; d < y->nd; d++) {
        fprintf(f, " %c=", 'A' + d);
        for (unsigned i = 0; i < y->dims[d]; i++)
            fprintf(f, "%s%u", i ? "," : "", 1u << i);
    }
    fprintf(f, "\n# default:");
    for (unsigned d = 0; d < y->nd; d++)
        fprintf(f, " %c=%u", 'A' + d, 1u << y->start[d]);
    fprintf(f, "\n");
    for (unsigned d = 0; d < y->nd; d++)
        fprintf(f, "%c\t", 'A' + d);
    fprintf(f, "median_ms\tvalid\n");
    size_t n = 1;
    for (unsigned d = 0; d < y->nd; d++)
        n *= y->dims[d];
    for (size_t i = 0; i < n; i++) {
        unsigned c[5];
        xmt_search_coord(y->dims, y->nd, i, c);
        double t = synth_time(y, id, i, c);
        for (unsigned d = 0; d < y->nd; d++)
            fprintf(f, "%u\t", 1u << c[d]);
        fprintf(f, "%.6f\t%d\n", isfinite(t) ? t : 0.0, isfinite(t) ? 1 : 0);
    }
    return fclose(f) ? -1 : 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: search_eval [--share F | --evals N] [--seeds N] [--batch N] "
                    "[--strategy local|local-kick|local-random|anneal] [--require R] (FILE.tsv... "
                    "| --synthetic DIR)\n");
    return 2;
}

/* A number in [lo, hi]: 0, else -1. */
static int num(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return end == s || *end || errno || !(*out >= lo && *out <= hi) ? -1 : 0;
}

/* Options; the files to read go to files (synthetic ones written first). */
static int parse_args(int argc, char **argv, opts *o, char ***files, int *nfiles)
{
    static char paths[sizeof synths / sizeof *synths][4096];
    static char *list[256];
    int n = 0;
    for (int i = 1; i < argc && argv[i]; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x = 0;
        if (!strcmp(a, "--share") && v && !num(argv[++i], 1e-6, 1, &x))
            o->share = x;
        else if (!strcmp(a, "--evals") && v && !num(argv[++i], 1, 1e9, &x))
            o->evals = (size_t)x;
        else if (!strcmp(a, "--seeds") && v && !num(argv[++i], 1, 64, &x))
            o->seeds = (unsigned)x;
        else if (!strcmp(a, "--batch") && v && !num(argv[++i], 1, 1024, &x))
            o->batch = (unsigned)x;
        else if (!strcmp(a, "--require") && v && !num(argv[++i], 0, 1, &x))
            o->require = x;
        else if (!strcmp(a, "--strategy") && v) {
            i++;
            o->strategy = !strcmp(v, "local-kick")     ? XMT_STRATEGY_LOCAL_KICK
                          : !strcmp(v, "local-random") ? XMT_STRATEGY_LOCAL_RANDOM
                          : !strcmp(v, "local")        ? XMT_STRATEGY_LOCAL
                          : !strcmp(v, "anneal")       ? XMT_STRATEGY_ANNEAL
                                                       : (xmt_strategy)-1;
            if ((int)o->strategy < 0) return usage();
        } else if (!strcmp(a, "--synthetic") && v) {
            i++;
            for (unsigned k = 0; k < sizeof synths / sizeof *synths && n < 256; k++) {
                if (write_synth(v, k, paths[k], sizeof paths[k])) return 1;
                list[n++] = paths[k];
            }
        } else if (a[0] == '-' || n >= 256)
            return usage();
        else
            list[n++] = argv[i];
    }
    if (!n || o->seeds < 1 || o->seeds > 64) return usage();
    *files = list;
    *nfiles = n;
    return 0;
}

int main(int argc, char **argv)
{
    opts o = {.share = 0, .evals = 0, .seeds = 5, .batch = 16, .strategy = XMT_STRATEGY_LOCAL};
    char **files = NULL;
    int nfiles = 0, rc = parse_args(argc, argv, &o, &files, &nfiles);
    if (rc) return rc;
    double *all = malloc((size_t)nfiles * o.seeds * sizeof *all);
    if (!all) return 1;
    size_t nall = 0;
    printf("| space | configs | valid | evaluations per seed (%% of the space), most | restarts | "
           "best/winner, median of %u seeds | worst |\n| --- | ---: | ---: | ---: | ---: | ---: "
           "| ---: |\n",
           o.seeds);
    for (int i = 0; i < nfiles; i++) {
        space s;
        if (load_space(files[i], &s)) {
            free(all);
            return 1;
        }
        eval_space(&s, &o, all, &nall);
        free(s.t);
    }
    double worst = INFINITY, mean = 0;
    for (size_t i = 0; i < nall; i++) {
        if (all[i] < worst) worst = all[i];
        mean += all[i] / (double)nall;
    }
    double med = median(all, nall);
    printf("\nover %d spaces and %u seeds: best/winner median %.4f, worst %.4f, mean %.4f\n",
           nfiles, o.seeds, med, worst, mean);
    free(all);
    if (o.require > 0 && !(med >= o.require)) {
        fprintf(stderr, "search_eval: median %.4f below the required %.4f\n", med, o.require);
        return 1;
    }
    return 0;
}
