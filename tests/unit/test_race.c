/*
 * The racing and tie rules (shim/session/race.c) on synthetic timings (fixed seeds) and on the
 * timings of a real GPU-suite run on an H200 (tests/unit/data/race, one file per program: the
 * `tune` events of its programs, as logged): replaying each key's recorded runs round by round
 * through the elimination rule never eliminates the winner that full timing picks, nor
 * anything within the tie limit of the best; the fraction of timed runs racing saves is
 * printed and must be real. And on the timings of fresh processes on an H100 and an H200
 * (tests/unit/data/agree: tests/gpu/agreement.sh's part 1, stripped to the timings by
 * tests/gpu/agree_record.py): the tie rule gives every process of a run the same winner per key.
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "race.h"

static const char *data_dir;

/* ---- synthetic ---------------------------------------------------------------------- */

static unsigned long long rng;
static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

#define NC 30
#define NR 10

/* Runs round by round through the elimination rule; alive[i] 0 from the round it was
 * eliminated; ran[i] the runs it got. */
static void race(double t[][NR], size_t n, int rounds, int *ran)
{
    xmt_race_cand c[NC];
    unsigned char out[NC];
    for (size_t i = 0; i < n; i++)
        c[i] = (xmt_race_cand){t[i], 0, 1};
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++)
            if (c[i].alive) c[i].n++;
        xmt_race_eliminate(c, n, out, NULL);
        for (size_t i = 0; i < n; i++)
            if (out[i]) c[i].alive = 0;
    }
    for (size_t i = 0; i < n; i++)
        ran[i] = c[i].n;
}

START_TEST(synthetic_never_drops_the_plateau)
{
    /* 30 configs: the first 5 within 3% of the best (a plateau), the rest 15% to 300%
     * slower; runs with 1% gaussian noise and now and then a 10% outlier. Over 500 seeds,
     * nothing of the plateau is ever eliminated, and most runs of the slow ones are saved. */
    double t[NC][NR];
    long saved = 0, total = 0;
    for (int seed = 1; seed <= 500; seed++) {
        rng = (unsigned long long)seed;
        double truth[NC];
        for (int i = 0; i < NC; i++)
            truth[i] = i < 5 ? 1.0 + 0.0075 * i : 1.15 + 0.1 * (i - 5);
        for (int i = 0; i < NC; i++)
            for (int r = 0; r < NR; r++)
                t[i][r] = truth[i] * (1 + 0.01 * gauss() + (uniform() < 0.05 ? 0.1 : 0));
        int ran[NC];
        race(t, NC, NR, ran);
        for (int i = 0; i < 5; i++)
            ck_assert_msg(ran[i] == NR, "seed %d: config %d of the plateau eliminated after %d",
                          seed, i, ran[i]);
        for (int i = 0; i < NC; i++)
            saved += NR - ran[i], total += NR;
    }
    printf("synthetic: racing saved %.1f%% of the timed runs\n", 100.0 * saved / total);
    ck_assert(saved > total / 2);
}
END_TEST

START_TEST(nothing_before_min_rounds)
{
    /* 40% slower, the margin's four times over: kept until every candidate has its rounds */
    double t[2][NR] = {{1, 1, 1, 1}, {1.4, 1.4, 1.4, 1.4}};
    xmt_race_cand c[2] = {{t[0], XMT_RACE_MIN_ROUNDS - 1, 1}, {t[1], XMT_RACE_MIN_ROUNDS - 1, 1}};
    unsigned char out[2];
    ck_assert_uint_eq(xmt_race_eliminate(c, 2, out, NULL), 0);
    c[0].n = c[1].n = XMT_RACE_MIN_ROUNDS;
    double m = 0;
    ck_assert_uint_eq(xmt_race_eliminate(c, 2, out, &m), 1);
    ck_assert(out[1] && !out[0] && m >= XMT_RACE_FLOOR);
}
END_TEST

START_TEST(early_only_beyond_any_noise)
{
    /* before round 3, a candidate with two runs goes only when its fastest is slower than
     * 1 + XMT_RACE_EARLY times the smallest slowest run: against {1, 1.2}, 1.85 goes and
     * 1.75 stays; the one that sets the bound never goes; one not yet run is not judged */
    double t[4][NR] = {{1, 1.2}, {1.85, 1.9}, {1.75, 3.0}, {9}};
    xmt_race_cand c[4] = {{t[0], 2, 1}, {t[1], 2, 1}, {t[2], 2, 1}, {t[3], 0, 1}};
    unsigned char out[4];
    ck_assert_uint_eq(xmt_race_eliminate(c, 4, out, NULL), 1);
    ck_assert(!out[0] && out[1] && !out[2] && !out[3]);
    /* an eliminated candidate sets no bound: only the alive ones do */
    c[0].alive = 0;
    ck_assert_uint_eq(xmt_race_eliminate(c, 4, out, NULL), 0);
    /* the program's own config several times slower goes after its second run, not its
     * first: one run alone may be an outlier (below) */
    double u[3][NR] = {{3.51, 3.50}, {0.114, 0.115}, {0.152, 0.150}};
    xmt_race_cand d[3] = {{u[0], 1, 1}, {u[1], 1, 1}, {u[2], 1, 1}};
    ck_assert_uint_eq(xmt_race_eliminate(d, 3, out, NULL), 0);
    d[0].n = d[1].n = d[2].n = 2;
    ck_assert_uint_eq(xmt_race_eliminate(d, 3, out, NULL), 1);
    ck_assert(out[0] && !out[1] && !out[2]);
}
END_TEST

START_TEST(early_not_on_one_outlier)
{
    /* the best config's one run of round 1 was an outlier (100 times its speed): it is not
     * eliminated on it; with a second, normal run its fastest is back and it stays */
    double t[3][NR] = {{0.52, 0.0047}, {0.0052, 0.0053}, {0.0051, 0.0052}};
    xmt_race_cand c[3] = {{t[0], 1, 1}, {t[1], 1, 1}, {t[2], 1, 1}};
    unsigned char out[3];
    ck_assert_uint_eq(xmt_race_eliminate(c, 3, out, NULL), 0);
    c[0].n = c[1].n = c[2].n = 2;
    ck_assert_uint_eq(xmt_race_eliminate(c, 3, out, NULL), 0);
}
END_TEST

START_TEST(one_fast_run_keeps_a_candidate)
{
    /* its median is 50% slower, but one run came within the margin: it stays */
    double t[2][NR] = {{1, 1.01, 0.99}, {1.5, 1.05, 1.5}};
    xmt_race_cand c[2] = {{t[0], 3, 1}, {t[1], 3, 1}};
    unsigned char out[2];
    ck_assert_uint_eq(xmt_race_eliminate(c, 2, out, NULL), 0);
}
END_TEST

START_TEST(margin_wider_than_twice_the_tie_limit)
{
    /* the best has at least XMT_RACE_MIN_ROUNDS runs once anything was eliminated */
    for (double s = 0; s < 0.05; s += 0.001)
        for (int runs = XMT_RACE_MIN_ROUNDS; runs <= 40; runs++)
            for (int mean = 0; mean < 2; mean++) {
                double lim = xmt_race_tie_limit(xmt_race_tie_band(s, runs, mean));
                ck_assert(lim >= XMT_TIE_MARGIN && lim <= XMT_TIE_BAND_CAP + 1e-12);
                ck_assert(xmt_race_margin(s) >= 2 * lim && xmt_race_margin(s) >= XMT_RACE_FLOOR);
            }
}
END_TEST

START_TEST(band_is_four_standard_errors_of_a_difference)
{
    /* medians: 4 x sqrt(pi/2) x sigma x sqrt(2/n); means without the sqrt(pi/2) */
    ck_assert(fabs(xmt_race_tie_band(0.005, 15, 0) - 4 * 1.2533141373155 * 0.005 * sqrt(2.0 / 15)) <
              1e-12);
    ck_assert(fabs(xmt_race_tie_band(0.005, 8, 1) - 4 * 0.005 * 0.5) < 1e-12);
    /* fewer runs, a wider band; none or one run count as one; never past the cap */
    ck_assert(xmt_race_tie_band(0.005, 3, 0) > xmt_race_tie_band(0.005, 15, 0));
    ck_assert(xmt_race_tie_band(0.001, 0, 0) == xmt_race_tie_band(0.001, 1, 0));
    ck_assert(xmt_race_tie_band(0.05, 15, 0) == XMT_TIE_BAND_CAP);
    ck_assert(xmt_race_tie_band(0, 15, 0) == 0);
    /* of candidates: the best one's runs count (here 4 runs, the other 8) */
    double t[2][8] = {{1.0, 1.01, 0.99, 1.0}, {1.2, 1.21, 1.19, 1.2, 1.2, 1.2, 1.2, 1.2}};
    xmt_race_cand c[3] = {{t[0], 4, 1}, {t[1], 8, 1}, {NULL, 0, 0}};
    double s = xmt_race_sigma(c, 3);
    ck_assert(s > 0);
    ck_assert(fabs(xmt_race_band_of(c, 3, 0) - xmt_race_tie_band(s, 4, 0)) < 1e-15);
    ck_assert(xmt_race_band_of(c + 2, 1, 0) == 0);
}
END_TEST

START_TEST(sigma_pooled_below_three_runs)
{
    /* two runs each: a candidate's own MAD of 3 runs cannot be told, the pooled one can */
    double t[3][2] = {{1.0, 1.02}, {2.0, 2.04}, {3.0, 3.06}};
    xmt_race_cand c[3] = {{t[0], 2, 1}, {t[1], 2, 1}, {t[2], 2, 1}};
    double s = xmt_race_sigma(c, 3);
    ck_assert_msg(s > 0.01 && s < 0.02, "sigma %g", s);
    /* one run each: nothing tells */
    for (int i = 0; i < 3; i++)
        c[i].n = 1;
    ck_assert(xmt_race_sigma(c, 3) == 0);
    /* with 3 runs: each candidate's relative MAD, their median, times 1.4826 */
    double u[2][3] = {{1, 1.1, 0.9}, {2, 2.02, 1.98}};
    xmt_race_cand d[2] = {{u[0], 3, 1}, {u[1], 3, 1}};
    ck_assert(fabs(xmt_race_sigma(d, 2) - 1.4826 * (0.1 + 0.01) / 2) < 1e-9);
}
END_TEST

START_TEST(near_ties_go_to_the_first_in_order)
{
    /* the program's own config 1.1% slower than a candidate, a quiet measurement (band 0):
     * within the practical margin, the own config (first in order) wins either way round */
    double t[3][4] = {{1.011, 1.011, 1.011, 1.011}, {1.0, 1.0, 1.0, 1.0}, {0.5, 9, 9, 9}};
    xmt_race_cand c[3] = {{t[0], 4, 1}, {t[1], 4, 1}, {t[2], 0, 0}};
    double lim = xmt_race_tie_limit(xmt_race_band_of(c, 3, 0));
    ck_assert(fabs(lim - XMT_TIE_MARGIN) < 1e-12);
    ck_assert_int_eq(xmt_race_decide(c, 3, 0, lim), 0);
    c[0].t = t[1], c[1].t = t[0];
    ck_assert_int_eq(xmt_race_decide(c, 3, 0, lim), 0);
    /* 3% apart: the faster one wins */
    double v[2][4] = {{1.03, 1.03, 1.03, 1.03}, {1.0, 1.0, 1.0, 1.0}};
    xmt_race_cand d[2] = {{v[0], 4, 1}, {v[1], 4, 1}};
    ck_assert_int_eq(xmt_race_decide(d, 2, 0, lim), 1);
    unsigned char out[2];
    ck_assert_uint_eq(xmt_race_finalists(d, 2, 0, lim, out), 2); /* within 2 x 2% */
    ck_assert_int_eq(xmt_race_decide(d, 0, 0, lim), -1);
}
END_TEST

/* Five runs of base x (1 + d x {-2, -1, 0, 1, 2}): median base, relative MAD d. */
static void five_runs(double *t, double base, double d)
{
    for (int r = 0; r < 5; r++)
        t[r] = base * (1 + d * (r - 2));
}

START_TEST(edge_marks_only_what_decides)
{
    /* MAD 0.2%: sigma 0.30%, a difference of two medians of 5 runs has a standard error of
     * 0.235 points, so the edge is the limit (2%) +- 0.47 points */
    enum { K = 4 };
    static double t[K][5];
    xmt_race_cand c[K];
    unsigned char out[K];
    const double d = 0.002;
    for (int i = 0; i < K; i++)
        c[i] = (xmt_race_cand){t[i], 5, 1};
#define SET(a, b, cc, dd, noise)                                                                   \
    do {                                                                                           \
        five_runs(t[0], a, noise), five_runs(t[1], b, noise), five_runs(t[2], cc, noise);          \
        five_runs(t[3], dd, noise);                                                                \
    } while (0)
    double lim;
    /* first in order, 2.1% from the best: outside by 0.1 point, it would win from inside;
     * it and the best are timed again, not the 5% one */
    SET(1.021, 1.0, 1.05, 1.08, d);
    lim = xmt_race_tie_limit(xmt_race_band_of(c, K, 0));
    ck_assert(fabs(lim - XMT_TIE_MARGIN) < 1e-12);
    ck_assert_int_eq(xmt_race_decide(c, K, 0, lim), 1);
    ck_assert_uint_eq(xmt_race_edge(c, K, 0, lim, out), 1);
    ck_assert(out[0] && out[1] && !out[2] && !out[3]);
    /* 3% from the best: clearly outside; the 1.9% one comes after the winner and decides
     * nothing on either side */
    SET(1.03, 1.0, 1.019, 1.08, d);
    ck_assert_uint_eq(xmt_race_edge(c, K, 0, lim, out), 0);
    ck_assert(!out[0] && !out[1] && !out[2] && !out[3]);
    /* the winner itself 1.8% from the best, inside by 0.2 point: it, the best and the one
     * 0.1% from the best (either may be the best the distances are measured from) */
    SET(1.018, 1.0, 1.001, 1.08, d);
    ck_assert_int_eq(xmt_race_decide(c, K, 0, lim), 0);
    ck_assert_uint_eq(xmt_race_edge(c, K, 0, lim, out), 1);
    ck_assert(out[0] && out[1] && out[2] && !out[3]);
    /* the same, with the statistic the mean (standard error sigma, not 1.25 sigma) */
    ck_assert_uint_eq(xmt_race_edge(c, K, 1, lim, out), 1);
    /* no noise measured: nothing is near anything */
    SET(1.0201, 1.0, 1.05, 1.08, 0);
    ck_assert_uint_eq(xmt_race_edge(c, K, 0, lim, out), 0);
    /* nothing timed */
    for (int i = 0; i < K; i++)
        c[i].n = 0;
    ck_assert_uint_eq(xmt_race_edge(c, K, 0, lim, out), 0);
#undef SET
}
END_TEST

START_TEST(full_floor_counts_warmups_and_iterations)
{
    double t[2][3] = {{1, 2, 3}, {4, 4, 4}};
    xmt_race_cand c[3] = {{t[0], 3, 0}, {t[1], 1, 1}, {NULL, 0, 0}};
    ck_assert(fabs(xmt_race_full_floor(c, 3, 5, 10) - (2 * 15 + 4 * 15)) < 1e-9);
}
END_TEST

/* ---- recorded --------------------------------------------------------------------------- */

/* One key's recorded runs: the program's own config, then the candidates in policy order
 * (those never timed too, with no runs, when asked for), with their labels. */
#define KC 64 /* configs */
#define KR 64 /* runs each */
typedef struct {
    double t[KC][KR];
    int n[KC];
    const char *label[KC];
    size_t nc;
} recorded;

/* Reads a tune event's own config and candidates into *k (static storage: it is large),
 * keeping the candidates never timed when `untimed`. */
static recorded *load_key(json_t *ev, int untimed)
{
    static recorded k;
    memset(&k, 0, sizeof k);
    json_t *cands = json_object_get(ev, "candidates");
    for (size_t i = 0; i <= json_array_size(cands) && k.nc < KC; i++) {
        json_t *cfg = i == 0 ? json_object_get(ev, "own") : json_array_get(cands, i - 1);
        json_t *ts = json_object_get(cfg, "times_ms");
        size_t n = json_is_array(ts) ? json_array_size(ts) : 0;
        if (!cfg || (n == 0 && !untimed)) continue;
        k.label[k.nc] = json_string_value(json_object_get(cfg, "config"));
        for (size_t r = 0; r < n && r < KR; r++)
            k.t[k.nc][r] = json_number_value(json_array_get(ts, r));
        k.n[k.nc++] = (int)(n < KR ? n : KR);
    }
    return &k;
}

/* The band until the ninth session: 4 sigma of one run, at most XMT_TIE_BAND_CAP. */
static double one_run_band(double sigma)
{
    return fmin(4 * sigma, XMT_TIE_BAND_CAP);
}

/* Replays one key: 0 when fine, else a failure said in msg. */
static int replay(json_t *ev, long *saved, long *total, char *msg, size_t cap)
{
    const recorded *k = load_key(ev, 0);
    if (k->nc < 2) return 0; /* nothing was raced */
    xmt_race_cand full[KC], c[KC] = {{NULL, 0, 0}};
    for (size_t j = 0; j < k->nc; j++)
        full[j] = (xmt_race_cand){k->t[j], k->n[j], 1};
    double lim = xmt_race_tie_limit(xmt_race_band_of(full, k->nc, 0));
    long w = xmt_race_decide(full, k->nc, 0, lim);
    double best = INFINITY;
    for (size_t j = 0; j < k->nc; j++)
        best = fmin(best, xmt_race_stat(k->t[j], k->n[j], 0));
    int rounds = 0;
    for (size_t j = 0; j < k->nc; j++) {
        c[j] = (xmt_race_cand){k->t[j], 0, 1};
        rounds = k->n[j] > rounds ? k->n[j] : rounds;
    }
    unsigned char out[KC];
    for (int r = 0; r < rounds; r++) {
        for (size_t j = 0; j < k->nc; j++)
            if (c[j].alive && c[j].n < k->n[j]) c[j].n++;
        xmt_race_eliminate(c, k->nc, out, NULL);
        for (size_t j = 0; j < k->nc; j++)
            if (out[j]) c[j].alive = 0;
    }
    for (size_t j = 0; j < k->nc; j++) {
        *saved += k->n[j] - c[j].n;
        *total += k->n[j];
        int tied = xmt_race_stat(k->t[j], k->n[j], 0) <= best * (1 + lim);
        if (!c[j].alive && ((long)j == w || tied)) {
            snprintf(msg, cap, "%s: config %zu eliminated after %d runs (winner %ld, limit %.3f)",
                     json_string_value(json_object_get(ev, "key")), j, c[j].n, w, lim);
            return 1;
        }
    }
    /* the raced decision is full timing's */
    long rw = xmt_race_decide(c, k->nc, 0, lim);
    if (rw != w) {
        snprintf(msg, cap, "%s: raced winner %ld, full timing's %ld",
                 json_string_value(json_object_get(ev, "key")), rw, w);
        return 1;
    }
    return 0;
}

START_TEST(recorded_h200_never_drops_the_winner)
{
    DIR *d = opendir(data_dir);
    ck_assert_msg(d != NULL, "%s", data_dir);
    struct dirent *e;
    long saved = 0, total = 0;
    int keys = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".jsonl")) continue;
        char path[4096], msg[300];
        snprintf(path, sizeof path, "%s/%s", data_dir, e->d_name);
        FILE *f = fopen(path, "r");
        ck_assert(f != NULL);
        char line[1 << 16];
        while (fgets(line, sizeof line, f)) {
            json_t *ev = json_loads(line, 0, NULL);
            ck_assert_msg(ev != NULL, "%s: not JSON", path);
            ck_assert_str_eq(json_string_value(json_object_get(ev, "event")), "tune");
            long s0 = saved, t0 = total;
            ck_assert_msg(replay(ev, &saved, &total, msg, sizeof msg) == 0, "%s: %s", e->d_name,
                          msg);
            if (total > t0)
                printf("recorded %-26s %5.1f%% of %ld timed runs saved\n", e->d_name,
                       100.0 * (double)(saved - s0) / (double)(total - t0), total - t0);
            keys++;
            json_decref(ev);
        }
        fclose(f);
    }
    closedir(d);
    printf("recorded: %d keys, racing saved %.1f%% of %ld timed runs\n", keys,
           100.0 * (double)saved / (double)total, total);
    ck_assert_int_ge(keys, 9);
    ck_assert(saved * 5 > total); /* more than a fifth */
}
END_TEST

/* ---- agreement, recorded ---------------------------------------------------------------- */

/* The winner one process's timings give, with the band of 4 standard errors (old_band 0) or
 * 4 sigma of one run (1: the band until the ninth session); *limit the limit, *band the band. */
static const char *decide_recorded(json_t *ev, int old_band, double *limit, double *band)
{
    /* every config, timed or not, so that the decision sees the session's order */
    const recorded *k = load_key(ev, 1);
    xmt_race_cand c[KC];
    for (size_t j = 0; j < k->nc; j++)
        c[j] = (xmt_race_cand){k->t[j], k->n[j], 1};
    int mean = !strcmp(json_string_value(json_object_get(ev, "statistic")), "mean");
    *band = old_band ? one_run_band(xmt_race_sigma(c, k->nc)) : xmt_race_band_of(c, k->nc, mean);
    *limit = xmt_race_tie_limit(*band);
    long w = xmt_race_decide(c, k->nc, mean, *limit);
    return w >= 0 ? k->label[w] : k->label[0]; /* nothing timed: the own config stays */
}

/* How many of the processes' winners (n of them) are the modal one. */
static int modal_count(const char **w, int n)
{
    int best = 0;
    for (int i = 0; i < n; i++) {
        int same = 0;
        for (int j = 0; j < n; j++)
            same += !strcmp(w[i], w[j]);
        best = same > best ? same : best;
    }
    return best;
}

START_TEST(quiet_processes_share_one_limit)
{
    /* 200 processes (seeds) time 25 configs 15 times each with gaussian noise of 0.4-0.6%
     * (each process its own: the H100's on the suite's keys): the best, one 0.2% behind it,
     * two 1.2-1.6% behind, one 2.6% behind (inplace_gs8's BLOCK=128, BPS=16 on the H100),
     * the rest 5% or more. With the band of medians every process's limit is the 2% margin;
     * with 4 sigma of one run (the band until the ninth session: 1.6-2.4% here) it moves
     * with each process's noise, and processes part from the modal winner more often (4
     * of 200 against 2: what is left is the 2.6% config measured within 2%, which no
     * limit prevents). */
    enum { P = 200, K = 25, R = 15 };
    static double t[K][R];
    const char *wn[P], *wo[P];
    static char names[K][8];
    double lo = 1, hi = 0, olo = 1, ohi = 0;
    for (int i = 0; i < K; i++)
        snprintf(names[i], sizeof names[i], "c%d", i);
    for (int p = 0; p < P; p++) {
        rng = 7919ULL * (unsigned long long)(p + 1);
        static const double head[5] = {1.026, 1.012, 1.016, 1.0, 1.002};
        double sigma = 0.004 + 0.002 * uniform(); /* processes differ in their noise */
        xmt_race_cand c[K];
        for (int i = 0; i < K; i++) {
            double truth = i < 5 ? head[i] : 1.05 + 0.02 * (i - 5);
            for (int r = 0; r < R; r++)
                t[i][r] = truth * (1 + sigma * gauss());
            c[i] = (xmt_race_cand){t[i], R, 1};
        }
        double lim = xmt_race_tie_limit(xmt_race_band_of(c, K, 0));
        double old = xmt_race_tie_limit(one_run_band(xmt_race_sigma(c, K)));
        lo = fmin(lo, lim), hi = fmax(hi, lim), olo = fmin(olo, old), ohi = fmax(ohi, old);
        wn[p] = names[xmt_race_decide(c, K, 0, lim)];
        wo[p] = names[xmt_race_decide(c, K, 0, old)];
    }
    int an = modal_count(wn, P), ao = modal_count(wo, P);
    printf("synthetic agreement: %d/%d processes (limits %.2f-%.2f%%); with 4 sigma of one run "
           "%d/%d (limits %.2f-%.2f%%)\n",
           an, P, 100 * lo, 100 * hi, ao, P, 100 * olo, 100 * ohi);
    ck_assert(lo == XMT_TIE_MARGIN && hi == XMT_TIE_MARGIN);
    ck_assert(ohi > XMT_TIE_MARGIN);
    ck_assert_int_ge(an, ao);
    ck_assert_int_ge(an, P - P / 50); /* 98% at least */
}
END_TEST

/* One process of the edge model below (seed p): its winner, and in *extra the runs the
 * edge added (edge 0: none, the decision as before the edge). */
enum { EK = 8, ER0 = 15, ECAP = ER0 + XMT_EDGE_ROUNDS };
static int edge_process(const double *truth, int p, int edge, int *extra)
{
    static double t[EK][ECAP];
    xmt_race_cand c[EK];
    unsigned char out[EK];
    rng = 104729ULL * (unsigned long long)(p + 1);
    double sigma = 0.004 + 0.002 * uniform();
    for (int i = 0; i < EK; i++) {
        for (int r = 0; r < ER0; r++)
            t[i][r] = truth[i] * (1 + sigma * gauss());
        c[i] = (xmt_race_cand){t[i], ER0, 1};
    }
    *extra = 0;
    double lim = xmt_race_tie_limit(xmt_race_band_of(c, EK, 0));
    /* the session's loop (session.c, retime): a round of the marked ones at a time */
    for (int round = 0; edge && round < XMT_EDGE_ROUNDS; round++) {
        lim = xmt_race_tie_limit(xmt_race_band_of(c, EK, 0));
        if (!xmt_race_edge(c, EK, 0, lim, out)) break;
        for (int i = 0; i < EK; i++)
            if (out[i]) {
                ck_assert_int_lt(c[i].n, ECAP);
                t[i][c[i].n++] = truth[i] * (1 + sigma * gauss());
                ++*extra;
            }
    }
    lim = xmt_race_tie_limit(xmt_race_band_of(c, EK, 0));
    return (int)xmt_race_decide(c, EK, 0, lim);
}

START_TEST(the_edge_is_timed_until_it_settles)
{
    /* The H100's inplace_gs8 of 2026-12-06 04:31 UTC (tests/gpu/agreement.sh): BLOCK=256,
     * BPS=32 first in order and 1.43-2.06% from the best in 10 processes (limit 2.00%),
     * BLOCK=512, BPS=32 0.1-0.6% behind BLOCK=1024, BPS=32, the best; 15 runs each with
     * 0.4-0.6% of noise. One process of 10 put it outside and chose BLOCK=512, BPS=32.
     * Modelled at 1.8% behind (its mean there), in 400 processes: without the edge about
     * one in five chooses otherwise; with it, 2% at most. Next to it a key with nothing near
     * the limit (the quiet model above): the edge adds a few runs on average. */
    enum { P = 400 };
    static const double gs8[EK] = {1.30, 1.018, 1.004, 1.0, 1.019, 1.021, 1.05, 1.08};
    static const double quiet[EK] = {1.30, 1.026, 1.012, 1.016, 1.0, 1.002, 1.05, 1.08};
    int before = 0, after = 0, runs = 0, most = 0, qruns = 0, qtouched = 0, x;
    for (int p = 0; p < P; p++) {
        before += edge_process(gs8, p, 0, &x) == 1;
        after += edge_process(gs8, p, 1, &x) == 1;
        runs += x, most = x > most ? x : most;
        int w0 = edge_process(quiet, p, 0, &x), w1 = edge_process(quiet, p, 1, &x);
        ck_assert(w0 == 1 || w0 == 2);
        ck_assert(w1 == 1 || w1 == 2);
        qruns += x, qtouched += x > 0;
    }
    printf("edge: %d/%d processes chose the modal winner without the edge, %d/%d with it "
           "(%.1f runs added on average, %d at most); the quiet key: %d of %d processes "
           "re-timed, %.1f runs on average\n",
           before, P, after, P, (double)runs / P, most, qtouched, P, (double)qruns / P);
    ck_assert_int_lt(before, P - P / 10); /* the split the GPU showed is in the model */
    ck_assert_int_ge(after, P - P / 50);
    ck_assert_int_lt(runs, 100 * P); /* 100 runs a process on average at most */
    ck_assert_int_lt(qruns, 10 * P); /* and 10 where nothing is near the limit */
}
END_TEST

/* Each file: one GPU's agreement run (tests/gpu/agreement.sh part 1, 10 fresh processes
 * one after another, each with its own cache), every key's tune event of every process;
 * `band` says which band the processes decided with ("one_run": 4 sigma of one run, until
 * the ninth session; "medians": race.c's). Replayed through the tie rule, that band gives
 * the logged band and winners (the replay is the processes' own decision), and the band of
 * 4 standard errors gives one winner per key in every process: in the run of 2026-12-05
 * 21:21 the band of one run split inplace_gs8 9 to 1 (a config 2.15-3.11% from the best,
 * limits 2.00-2.33%). The run of 2026-12-06 04:38 is the first with the edge (race.h): its
 * processes' runs include the edge's, and inplace_gs8's BLOCK=256, BPS=32 measured
 * 1.46-1.67% from the best in all 10, with 15-24 runs (1.43-2.06% at 04:31, without it).
 * The runs of 2026-12-06 06:55 and 07:01 are the H200's (tree 9ee038b), 10/10 every key. */
START_TEST(recorded_fresh_processes_agree)
{
    char dpath[4096];
    snprintf(dpath, sizeof dpath, "%s/../agree", data_dir);
    DIR *d = opendir(dpath);
    ck_assert_msg(d != NULL, "%s", dpath);
    struct dirent *e;
    int files = 0, keys = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".jsonl")) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dpath, e->d_name);
        json_error_t err;
        json_t *evs = json_array();
        FILE *f = fopen(path, "r");
        ck_assert(f != NULL);
        json_t *ev;
        while ((ev = json_loadf(f, JSON_DISABLE_EOF_CHECK, &err)))
            json_array_append_new(evs, ev);
        fclose(f);
        files++;
        /* group by program and key; at most 16 processes each */
        size_t nev = json_array_size(evs);
        unsigned char *done = calloc(nev, 1);
        for (size_t i = 0; i < nev; i++) {
            if (done[i]) continue;
            json_t *a = json_array_get(evs, i);
            const char *prog = json_string_value(json_object_get(a, "program"));
            const char *key = json_string_value(json_object_get(a, "key"));
            const char *neww[16], *oldw[16];
            char store[16][2][256];
            double lo = 1, hi = 0, lim;
            int np = 0;
            for (size_t j = i; j < nev && np < 16; j++) {
                json_t *b = json_array_get(evs, j);
                if (strcmp(prog, json_string_value(json_object_get(b, "program"))) ||
                    strcmp(key, json_string_value(json_object_get(b, "key"))))
                    continue;
                done[j] = 1;
                int one_run = !strcmp(json_string_value(json_object_get(b, "band")), "one_run");
                double band, logged_band = json_number_value(json_object_get(b, "tie_band"));
                char as_run[256];
                snprintf(as_run, sizeof as_run, "%s", decide_recorded(b, one_run, &lim, &band));
                const char *logged = json_string_value(json_object_get(b, "winner"));
                ck_assert_msg(logged != NULL, "%s %s %s: no winner's config (a string)", e->d_name,
                              prog, key);
                ck_assert_msg(!strcmp(as_run, logged) && fabs(band - logged_band) < 1e-6,
                              "%s %s %s: replayed %s (band %g), logged %s (band %g)", e->d_name,
                              prog, key, as_run, band, logged, logged_band);
                snprintf(store[np][1], 256, "%s", decide_recorded(b, 1, &lim, &band));
                snprintf(store[np][0], 256, "%s", decide_recorded(b, 0, &lim, &band));
                lo = fmin(lo, lim), hi = fmax(hi, lim);
                neww[np] = store[np][0], oldw[np] = store[np][1];
                np++;
            }
            int agree = modal_count(neww, np);
            printf("agree %s %-14s %-22s %2d/%d (4 sigma of one run: %2d/%d), limits %.2f-%.2f%%\n",
                   e->d_name, prog, key, agree, np, modal_count(oldw, np), np, 100 * lo, 100 * hi);
            ck_assert_msg(agree == np, "%s %s %s: %d of %d processes agree", e->d_name, prog, key,
                          agree, np);
            keys++;
        }
        free(done);
        json_decref(evs);
    }
    closedir(d);
    ck_assert_int_ge(files, 7);
    ck_assert_int_ge(keys, 63);
}
END_TEST

int main(int argc, char **argv)
{
    data_dir = argc > 1 ? argv[1] : "data/race";
    Suite *s = suite_create("race");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, synthetic_never_drops_the_plateau);
    tcase_add_test(tc, nothing_before_min_rounds);
    tcase_add_test(tc, early_only_beyond_any_noise);
    tcase_add_test(tc, early_not_on_one_outlier);
    tcase_add_test(tc, one_fast_run_keeps_a_candidate);
    tcase_add_test(tc, margin_wider_than_twice_the_tie_limit);
    tcase_add_test(tc, sigma_pooled_below_three_runs);
    tcase_add_test(tc, near_ties_go_to_the_first_in_order);
    tcase_add_test(tc, full_floor_counts_warmups_and_iterations);
    tcase_add_test(tc, recorded_h200_never_drops_the_winner);
    tcase_add_test(tc, recorded_fresh_processes_agree);
    tcase_add_test(tc, band_is_four_standard_errors_of_a_difference);
    tcase_add_test(tc, quiet_processes_share_one_limit);
    tcase_add_test(tc, the_edge_is_timed_until_it_settles);
    tcase_add_test(tc, edge_marks_only_what_decides);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
