/*
 * race: the rules that decide, from timings alone, when a candidate's timing may stop
 * (racing), which candidates tie (the tie band and the practical margin), which are
 * re-timed before the decision (the finalists), and what timing every candidate in full
 * would have cost (`full_floor_ms`). Pure functions over arrays of timings, no CUDA: the
 * session (session_timing.c) calls them between its interleaved rounds, a search loop can call
 * them the same way, and the unit tests replay recorded GPU timings through them
 * (tests/unit/test_race.c). docs/tuning.md, "Racing", says the rules in words.
 */
#ifndef XMT_RACE_H
#define XMT_RACE_H

#include <stddef.h>

/* Rounds every candidate gets before any may be eliminated: a median of 3 stands an
 * outlier run, and the pooled noise estimate needs runs of its own. */
#define XMT_RACE_MIN_ROUNDS 3
/* The elimination margin is never below this (relative to the leader's median): wider than
 * twice the widest tie limit (2 x max(XMT_TIE_BAND_CAP, XMT_TIE_MARGIN) = 6%), so that no
 * candidate that could still tie with the best, or be a finalist, is eliminated. */
#define XMT_RACE_FLOOR 0.10
/* Before those rounds only a candidate that no noise explains goes: its fastest run slower
 * than this much beyond the slowest run of another (the program's own config is often
 * several times slower than the best, and each of its runs the longest of a round). */
#define XMT_RACE_EARLY 0.5
/* ... and only once it has this many runs: its fastest of one run is that run, and a
 * single slow run (an outlier: a preemption, an interrupt) would eliminate the best. */
#define XMT_RACE_EARLY_RUNS 2
/* Noise multiples in the elimination margin, over the estimated sigma of one run. */
#define XMT_RACE_SIGMAS 6.0
/* The tie band (4 standard errors of a difference of two medians) is never wider than this
 * (issue 10). */
#define XMT_TIE_BAND_CAP 0.03
/* The practical margin: medians within 2% of the best tie even when the runs separate
 * them (re-timing in one process cannot remove differences between processes: on the
 * H200, two configs 1.1% apart split 10 processes 6 to 4). */
#define XMT_TIE_MARGIN 0.02

/* The edge (agreement): a candidate whose distance from the best is within this many
 * standard errors of the tie limit, and whose side of it decides the winner, is timed
 * again (xmt_race_edge). */
#define XMT_EDGE_Z 2.0
/* ... in at most this many interleaved rounds, while its runs' own times add up to at most
 * this share of the key's full floor (xmt_race_full_floor, the same measure): more runs
 * narrow the standard error only as their square root, and a config whose true distance is
 * the limit itself would be timed for ever. A count, not a multiple of `iterations`: a
 * session of many iterations has small standard errors already, and its candidates' room
 * for runs (settings.c, cap) grows by this much. On a model of the H100's inplace_gs8 (a
 * config 1.8% from the best, limit 2%, 15 runs each) 30 rounds left 6.5% of processes on
 * the other side, 100 left 1.75%, at 77 runs on average (tests/unit/test_race.c). */
#define XMT_EDGE_ROUNDS 100
#define XMT_EDGE_SHARE 0.25

/* One candidate's timings, in the session's order (the program's own config first, then
 * policy order): its timed runs so far, and whether it is still raced (0: eliminated or
 * never timed; its runs still count for the noise estimate and the floors). */
typedef struct {
    const double *t;
    int n;
    int alive;
} xmt_race_cand;

/* The median (mean when `mean`) of n runs; INFINITY when n <= 0. */
double xmt_race_stat(const double *t, int n, int mean);

/* The noise of one timed run, relative to the median: 1.4826 x the median, over the
 * candidates with at least 3 runs, of their median absolute deviation over their median.
 * When none has 3, pooled: the median of every run's deviation from its own candidate's
 * median (candidates with 2 runs), relative to that median. 0 when nothing tells. */
double xmt_race_sigma(const xmt_race_cand *c, size_t n);

/* The tie band from that sigma: 4 standard errors of the difference between two candidates'
 * statistics of `runs` runs each, 4 x k x sigma x sqrt(2 / runs) with k = sqrt(pi / 2) for
 * medians (a median of n runs of normal noise varies by 1.2533 sigma / sqrt(n)) and 1 for
 * means; runs below 1 count as 1; at most XMT_TIE_BAND_CAP. Not 4 sigma of one run (the
 * band until the ninth session): that band is 2.2 times this one at 15 runs, and on an
 * H100 it straddled the practical margin (4 x 0.43-0.58%), so that the tie limit itself
 * moved between processes and split them on a config 2.2-3.1% from the best. */
double xmt_race_tie_band(double sigma, int runs, int mean);

/* The band of these candidates: their sigma, and the run count of the best (the smallest
 * statistic: every comparison of the tie rule is with it). 0 when none was timed. */
double xmt_race_band_of(const xmt_race_cand *c, size_t n, int mean);

/* The tie limit: medians within it of the best tie (the band, at least XMT_TIE_MARGIN). */
double xmt_race_tie_limit(double band);

/* The elimination margin: XMT_RACE_SIGMAS sigma beyond twice the tie limit of a band of
 * XMT_RACE_MIN_ROUNDS runs (the widest the decision can use once anything was eliminated:
 * the best has at least that many runs by then), at least XMT_RACE_FLOOR. */
double xmt_race_margin(double sigma);

/* After an interleaved round: marks in out[i] (1) each alive candidate to stop timing: one
 * with at least XMT_RACE_MIN_ROUNDS runs whose fastest run is slower than the leader's
 * median times (1 + margin), the leader being the alive candidate (with that many runs)
 * of the smallest median. Until every alive candidate has XMT_RACE_MIN_ROUNDS runs, only
 * one with at least XMT_RACE_EARLY_RUNS runs whose fastest run is slower than
 * (1 + XMT_RACE_EARLY) times the smallest of the alive candidates' slowest runs. Returns how many
 * were marked; *margin_out (may be NULL) gets the margin used. */
size_t xmt_race_eliminate(const xmt_race_cand *c, size_t n, unsigned char *out, double *margin_out);

/* Finalists, marked in out[i]: the timed candidates whose statistic is within twice the
 * tie limit of the best (so that one just outside the limit may still come in when
 * re-timed). Returns how many. */
size_t xmt_race_finalists(const xmt_race_cand *c, size_t n, int mean, double limit,
                          unsigned char *out);

/* The decision: the first timed candidate in order whose statistic is within the tie
 * limit of the best one's (canonical: the program's own config, then policy order).
 * Returns its index, or -1 when none was timed. */
long xmt_race_decide(const xmt_race_cand *c, size_t n, int mean, double limit);

/* The edge, after the finalists' re-timing: marks in out[i] the candidates to time again
 * before the decision, and returns how many of them are *at the edge* (0: the decision is
 * settled, out all 0). A timed candidate is at the edge when its side of the tie limit
 * decides the winner (it is the winner, or comes before the winner in order) and its
 * distance from the best (stat / best - 1) is within XMT_EDGE_Z standard errors of the
 * limit: k x sigma x sqrt(1 / its runs + 1 / the best's runs), k as in the band. Those,
 * and the candidates within XMT_EDGE_Z standard errors of the best (any of them may be
 * the best the distances are measured from), are marked. Why: processes that measure a
 * config on either side of the limit pick different winners (on an H100, one of 10 fresh
 * processes measured inplace_gs8's BLOCK=256, BPS=32 2.06% from the best, the others
 * 1.43-1.92%, against a limit of 2.00%); the spread between processes was that of the
 * medians within each (about 0.2 points at 15 runs), so more runs narrow it. */
size_t xmt_race_edge(const xmt_race_cand *c, size_t n, int mean, double limit, unsigned char *out);

/* What timing every timed candidate in full would have cost on the GPU: for each, its
 * median times (warmup + iterations). */
double xmt_race_full_floor(const xmt_race_cand *c, size_t n, int warmup, int iterations);

#endif
