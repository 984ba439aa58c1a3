/*
 * race: racing, ties and floors over timings (see race.h).
 */
#include "race.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values, sorting them in place. */
static double median_in_place(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double xmt_race_stat(const double *t, int n, int mean)
{
    if (n <= 0) return INFINITY;
    if (mean) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += t[i];
        return s / n;
    }
    double small[128], *tmp = n <= 128 ? small : malloc((size_t)n * sizeof *tmp);
    if (!tmp) return t[0]; /* out of memory: a run stands for the median */
    memcpy(tmp, t, (size_t)n * sizeof *t);
    double m = median_in_place(tmp, (size_t)n);
    if (tmp != small) free(tmp);
    return m;
}

/* Adds each run's deviation from c's median, relative to it, to dev (from *k on). */
static void deviations(const xmt_race_cand *c, double *dev, size_t *k)
{
    double med = xmt_race_stat(c->t, c->n, 0);
    if (!(med > 0)) return;
    for (int i = 0; i < c->n; i++)
        dev[(*k)++] = fabs(c->t[i] - med) / med;
}

/* The median, over the candidates with at least `min_runs` runs (and at most max_runs),
 * of their relative MAD (per candidate) or, pooled, of every run's relative deviation. */
static double spread(const xmt_race_cand *c, size_t n, int min_runs, int max_runs, int pooled)
{
    size_t runs = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        runs += c[i].n > 0 ? (size_t)c[i].n : 0;
    double *dev = malloc((runs + 1) * sizeof *dev), *per = malloc((n + 1) * sizeof *per);
    size_t np = 0;
    double r = 0;
    if (!dev || !per) goto out;
    for (size_t i = 0; i < n; i++) {
        if (c[i].n < min_runs || c[i].n > max_runs) continue;
        if (pooled) {
            deviations(&c[i], dev, &k);
            continue;
        }
        size_t k0 = 0;
        deviations(&c[i], dev, &k0);
        if (k0) per[np++] = median_in_place(dev, k0);
    }
    if (pooled && k) r = median_in_place(dev, k);
    if (!pooled && np) r = median_in_place(per, np);
out:
    free(dev);
    free(per);
    return r;
}

double xmt_race_sigma(const xmt_race_cand *c, size_t n)
{
    double mad = spread(c, n, 3, 1 << 30, 0);
    /* Below 3 runs a candidate's own MAD is 0 (or its half-difference, biased low): with
     * none of 3, the deviations of every run with a partner are pooled instead, so that a
     * session cut short (or a candidate dropped early) does not read as a quiet one. */
    int any3 = 0;
    for (size_t i = 0; i < n; i++)
        any3 |= c[i].n >= 3;
    if (!any3) mad = spread(c, n, 2, 2, 1);
    return 1.4826 * mad;
}

/* A statistic's standard error over sigma x sqrt(1 / runs): sqrt(pi / 2) for medians (a
 * median of n runs of normal noise varies by 1.2533 sigma / sqrt(n)), 1 for means. */
static double stat_k(int mean)
{
    return mean ? 1.0 : 1.2533141373155;
}

double xmt_race_tie_band(double sigma, int runs, int mean)
{
    double k = stat_k(mean);
    double b = 4 * k * sigma * sqrt(2.0 / (runs > 1 ? runs : 1));
    return b < XMT_TIE_BAND_CAP ? b : XMT_TIE_BAND_CAP;
}

double xmt_race_tie_limit(double band)
{
    return band > XMT_TIE_MARGIN ? band : XMT_TIE_MARGIN;
}

double xmt_race_margin(double sigma)
{
    double band = xmt_race_tie_band(sigma, XMT_RACE_MIN_ROUNDS, 0);
    double m = 2 * xmt_race_tie_limit(band) + XMT_RACE_SIGMAS * sigma;
    return m > XMT_RACE_FLOOR ? m : XMT_RACE_FLOOR;
}

/* The fastest (sign 1) or slowest (sign -1) of a candidate's runs. */
static double extreme_run(const xmt_race_cand *c, int sign)
{
    double x = sign * INFINITY;
    for (int r = 0; r < c->n; r++)
        x = sign * c->t[r] < sign * x ? c->t[r] : x;
    return x;
}

/* Before the rounds that a median and a noise estimate need: a candidate whose fastest run
 * of at least XMT_RACE_EARLY_RUNS is slower than (1 + XMT_RACE_EARLY) times another's
 * slowest cannot be the best unless every run of it was slowed by half again, which no
 * noise seen on the H200 does; one run alone may be an outlier. */
static size_t eliminate_early(const xmt_race_cand *c, size_t n, unsigned char *out)
{
    double bound = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (c[i].alive && c[i].n > 0) bound = fmin(bound, extreme_run(&c[i], -1));
    if (!(bound > 0) || isinf(bound)) return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].alive && c[i].n >= XMT_RACE_EARLY_RUNS &&
            extreme_run(&c[i], 1) > bound * (1 + XMT_RACE_EARLY))
            out[i] = 1, k++;
    return k;
}

size_t xmt_race_eliminate(const xmt_race_cand *c, size_t n, unsigned char *out, double *margin_out)
{
    double margin = xmt_race_margin(xmt_race_sigma(c, n));
    if (margin_out) *margin_out = margin;
    long leader = -1;
    double lead = INFINITY;
    memset(out, 0, n);
    for (size_t i = 0; i < n; i++) {
        if (!c[i].alive) continue;
        if (c[i].n < XMT_RACE_MIN_ROUNDS) return eliminate_early(c, n, out);
        double m = xmt_race_stat(c[i].t, c[i].n, 0);
        if (m < lead) lead = m, leader = (long)i;
    }
    if (leader < 0 || !(lead > 0)) return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].alive || (long)i == leader) continue;
        if (extreme_run(&c[i], 1) > lead * (1 + margin)) out[i] = 1, k++;
    }
    return k;
}

/* The timed candidate of the smallest statistic (the first of equals; -1: none), that
 * statistic in *stat (INFINITY: none). */
static long best_of(const xmt_race_cand *c, size_t n, int mean, double *stat)
{
    long best = -1;
    *stat = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double s = c[i].n > 0 ? xmt_race_stat(c[i].t, c[i].n, mean) : INFINITY;
        if (s < *stat) *stat = s, best = (long)i;
    }
    return best;
}

/* The smallest statistic of the timed candidates (INFINITY: none). */
static double best_stat(const xmt_race_cand *c, size_t n, int mean)
{
    double s;
    (void)best_of(c, n, mean, &s);
    return s;
}

double xmt_race_band_of(const xmt_race_cand *c, size_t n, int mean)
{
    double s;
    long best = best_of(c, n, mean, &s);
    return best < 0 ? 0 : xmt_race_tie_band(xmt_race_sigma(c, n), c[best].n, mean);
}

size_t xmt_race_finalists(const xmt_race_cand *c, size_t n, int mean, double limit,
                          unsigned char *out)
{
    double best = best_stat(c, n, mean);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = c[i].n > 0 && xmt_race_stat(c[i].t, c[i].n, mean) <= best * (1 + 2 * limit);
        k += out[i];
    }
    return k;
}

long xmt_race_decide(const xmt_race_cand *c, size_t n, int mean, double limit)
{
    double best = best_stat(c, n, mean);
    if (isinf(best)) return -1;
    for (size_t i = 0; i < n; i++)
        if (c[i].n > 0 && xmt_race_stat(c[i].t, c[i].n, mean) <= best * (1 + limit)) return (long)i;
    return -1;
}

/* Candidate i's distance from the best b (stat / best - 1), and in *z_se XMT_EDGE_Z
 * standard errors of that difference (ks: k x sigma, as in the band). */
static double edge_distance(const xmt_race_cand *c, size_t i, long b, double best, int mean,
                            double ks, double *z_se)
{
    *z_se = XMT_EDGE_Z * ks * sqrt(1.0 / c[i].n + 1.0 / c[b].n);
    return xmt_race_stat(c[i].t, c[i].n, mean) / best - 1;
}

size_t xmt_race_edge(const xmt_race_cand *c, size_t n, int mean, double limit, unsigned char *out)
{
    double best, z_se;
    long b = best_of(c, n, mean, &best), w = xmt_race_decide(c, n, mean, limit);
    memset(out, 0, n);
    if (b < 0 || w < 0 || !(best > 0)) return 0;
    double ks = stat_k(mean) * xmt_race_sigma(c, n);
    size_t edge = 0;
    /* only the winner and those before it: a later one wins on neither side of the limit */
    for (size_t i = 0; i <= (size_t)w; i++) {
        if (c[i].n <= 0 || (long)i == b) continue;
        double d = edge_distance(c, i, b, best, mean, ks, &z_se);
        if (fabs(d - limit) < z_se) out[i] = 1, edge++;
    }
    if (!edge) return 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].n <= 0 || out[i]) continue;
        double d = edge_distance(c, i, b, best, mean, ks, &z_se);
        out[i] = (long)i == b || d < z_se;
    }
    return edge;
}

double xmt_race_full_floor(const xmt_race_cand *c, size_t n, int warmup, int iterations)
{
    double f = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].n > 0) f += xmt_race_stat(c[i].t, c[i].n, 0) * (warmup + iterations);
    return f;
}
