/* search.h - exploring a large config space without timing every point (issue 26).
 *
 * A policy's space: is the cartesian product of its names' value lists; its points are
 * numbered in mixed radix, the last name varying fastest (xmt_entry_candidate's order,
 * after the configs: items). Above a size (XMT_SEARCH_DEFAULT_THRESHOLD, or the entry's
 * search:) the tuner evaluates only the points a search visits. The search here knows
 * nothing of CUDA or of timing: the caller asks it for a batch of point indices
 * (xmt_search_next), verifies and times them however it likes (interleaved, raced, in a
 * side process), reports each time back (xmt_search_report: INFINITY for a point that
 * failed, was rejected or was cut short) and asks again until xmt_search_done. So the
 * same search runs in the shim, in the trial helper and in the offline evaluator
 * (tools/bench/search/search_eval.c) over recorded times.
 *
 * The strategy: local search with restarts. From the start point (the caller passes the
 * point nearest the program's own config), a batch holds the centre's neighbours not yet
 * evaluated (one name moved to an adjacent value in its list); once they are all
 * reported the centre moves to the best of them when that is faster (best improvement),
 * and the next batch tries the points further along that move and along all improving
 * moves at once (a pattern move), going on while that improves. When no neighbour is
 * faster the search is stuck and restarts from a kick: the best point found so far with
 * one to three names moved by one or two steps (iterated local search), or, every other
 * restart, a random point not yet evaluated. See docs/tuning.md, "Search". Simulated
 * annealing (XMT_STRATEGY_ANNEAL) is there for comparison (docs/benchmarks.md).
 *
 * Deterministic: the same dims, seed, start, budget and reported times give the same
 * batches, whatever order the times of one batch are reported in. Allocates once, in
 * xmt_search_new; not thread-safe (one search per tuning key, one caller at a time).
 */
#ifndef XMT_SEARCH_H
#define XMT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Spaces larger than this are searched unless the entry says search: exhaustive. */
#define XMT_SEARCH_DEFAULT_THRESHOLD 256
/* The default budget: this share of the space, but at least XMT_SEARCH_MIN_EVALS. */
#define XMT_SEARCH_DEFAULT_SHARE 0.05
#define XMT_SEARCH_MIN_EVALS 24
/* The seed the shim uses (fixed, so that independent processes visit the same points
 * for the same times: issue 26 item 3). */
#define XMT_SEARCH_SEED 1

/* search: in a policy entry */
enum { XMT_SEARCH_UNSET = -1, XMT_SEARCH_EXHAUSTIVE = 0, XMT_SEARCH_LOCAL = 1 };

/* Strategies, for the offline evaluator's comparison (docs/benchmarks.md); the shim uses
 * XMT_STRATEGY_LOCAL, which xmt_search_new gives. */
typedef enum {
    XMT_STRATEGY_LOCAL = 0,        /* restarts: a kick from the best, then a random point, ... */
    XMT_STRATEGY_LOCAL_KICK = 1,   /* restarts: always a kick from the best point */
    XMT_STRATEGY_LOCAL_RANDOM = 2, /* restarts: always a random point not yet evaluated */
    XMT_STRATEGY_ANNEAL = 3        /* simulated annealing: one random neighbour at a time,
                                      taken when faster, or by chance (the Metropolis rule
                                      on the relative difference, cooling geometrically
                                      from 0.2 to 0.002 over the budget) */
} xmt_strategy;

typedef struct xmt_search xmt_search;

/* dims[d]: the number of values of name d (each >= 1), ndims at most 16; the space's size
 * (their product) at most 1 << 26. start: a point index (clamped to the space). max_evals:
 * how many points may be evaluated in all (0: the whole space). NULL when the arguments
 * are out of range or memory is short (the caller then tries everything: fail open). */
xmt_search *xmt_search_new(const unsigned *dims, unsigned ndims, uint64_t seed, size_t start,
                           size_t max_evals);
xmt_search *xmt_search_new_with(const unsigned *dims, unsigned ndims, uint64_t seed, size_t start,
                                size_t max_evals, xmt_strategy strategy);
void xmt_search_free(xmt_search *s);

/* Up to max_batch point indices to evaluate next, never one handed out before. 0 means
 * either done (xmt_search_done) or waiting: report the outstanding points first. */
size_t xmt_search_next(xmt_search *s, size_t *out, size_t max_batch);
/* The time of a point handed out by xmt_search_next (INFINITY: invalid, failed,
 * rejected, cut short; a NaN counts as INFINITY). 0 ok, -1 for a point not outstanding. */
int xmt_search_report(xmt_search *s, size_t index, double time_ms);
/* 1 when the budget is spent or the space exhausted and nothing is outstanding. */
int xmt_search_done(const xmt_search *s);

/* Points evaluated (reported) so far, the space's size, and the best point (SIZE_MAX
 * when no reported time was finite; *time_ms then INFINITY; time_ms may be NULL). */
size_t xmt_search_evaluated(const xmt_search *s);
size_t xmt_search_size(const xmt_search *s);
size_t xmt_search_best(const xmt_search *s, double *time_ms);
/* How many restarts the search made (for logs and the evaluator). */
unsigned xmt_search_restarts(const xmt_search *s);

/* The default evaluation budget for a space of n points: floor(n * 5%), at least
 * XMT_SEARCH_MIN_EVALS, at most n. */
size_t xmt_search_default_evals(size_t n);
/* Point index <-> per-name value indices (mixed radix, the last name fastest). */
size_t xmt_search_index(const unsigned *dims, unsigned ndims, const unsigned *coord);
void xmt_search_coord(const unsigned *dims, unsigned ndims, size_t index, unsigned *coord);

#ifdef __cplusplus
}
#endif
#endif
