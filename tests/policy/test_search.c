/* test_search.c - Check unit tests of the search over large spaces (policy/search.c):
 * a synthetic landscape with a known optimum, the batch contract (no point twice, the
 * budget, waiting for outstanding points), determinism (seed, order of reports) and the
 * edge cases (the whole space, nothing valid, bad arguments).
 */
#include "xmt_policy.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A bowl over 8 x 8 x 6 x 5 = 1920 points with its minimum at (6, 2, 4, 1), 1% of
 * deterministic noise elsewhere, and an invalid corner (c0 + c1 < 3) like a block too
 * large for the kernel. */
static const unsigned bowl_dims[4] = {8, 8, 6, 5};
static const unsigned bowl_opt[4] = {6, 2, 4, 1};

static double bowl(size_t i)
{
    unsigned c[4];
    xmt_search_coord(bowl_dims, 4, i, c);
    if (c[0] + c[1] < 3) return INFINITY;
    double t = 1;
    int at = 1;
    for (unsigned d = 0; d < 4; d++) {
        double x = ((double)c[d] - bowl_opt[d]) / bowl_dims[d];
        t += 3 * x * x;
        at &= c[d] == bowl_opt[d];
    }
    uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
    return at ? 1 : t * (1.005 + 0.01 * (double)(h >> 40) / (double)(1ull << 24));
}

/* Runs a search to the end, reporting f's times (a batch in reverse order when rev);
 * records the points in the order handed out. Returns the best index. */
static size_t run(xmt_search *s, double (*f)(size_t), size_t batch, int rev, size_t *seq,
                  size_t *nseq)
{
    size_t out[64], n = 0;
    ck_assert(batch <= 64);
    while (!xmt_search_done(s)) {
        size_t k = xmt_search_next(s, out, batch);
        ck_assert_msg(k > 0, "nothing handed out, nothing outstanding, not done");
        for (size_t j = 0; j < k; j++) {
            size_t p = out[rev ? k - 1 - j : j];
            if (seq) seq[n] = out[j];
            n++;
            ck_assert_int_eq(xmt_search_report(s, p, f(p)), 0);
        }
    }
    if (nseq) *nseq = n;
    return xmt_search_best(s, NULL);
}

START_TEST(finds_known_optimum)
{
    size_t opt = xmt_search_index(bowl_dims, 4, bowl_opt);
    unsigned start_c[4] = {1, 6, 1, 3};
    size_t start = xmt_search_index(bowl_dims, 4, start_c);
    size_t budget = xmt_search_default_evals(1920);
    ck_assert_uint_eq(budget, 96); /* 5% */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        xmt_search *s = xmt_search_new(bowl_dims, 4, seed, start, budget);
        ck_assert_ptr_nonnull(s);
        size_t best = run(s, bowl, 16, 0, NULL, NULL);
        ck_assert_msg(best == opt, "seed %u: best %zu, optimum %zu", (unsigned)seed, best, opt);
        ck_assert_uint_le(xmt_search_evaluated(s), budget);
        xmt_search_free(s);
    }
}
END_TEST

/* Every point at most once, never over the budget, and next() waits (0) while points of
 * a decision are outstanding. */
START_TEST(batch_contract)
{
    for (size_t batch = 1; batch <= 64; batch *= 4) {
        /* every strategy keeps the contract; annealing hands out one point at a time */
        static const xmt_strategy sts[] = {XMT_STRATEGY_LOCAL, XMT_STRATEGY_ANNEAL,
                                           XMT_STRATEGY_LOCAL_KICK, XMT_STRATEGY_LOCAL_RANDOM};
        xmt_strategy st = sts[(batch == 1 ? 0 : batch == 4 ? 1 : batch == 16 ? 2 : 3)];
        xmt_search *s = xmt_search_new_with(bowl_dims, 4, 7, 0, 200, st);
        static uint8_t seen[1920];
        memset(seen, 0, sizeof seen);
        size_t out[64], total = 0;
        while (!xmt_search_done(s)) {
            size_t k = xmt_search_next(s, out, batch);
            ck_assert(k > 0 && k <= batch);
            for (size_t j = 0; j < k; j++) {
                ck_assert_uint_lt(out[j], 1920);
                ck_assert_msg(!seen[out[j]], "point %zu handed out twice", out[j]);
                seen[out[j]] = 1;
            }
            total += k;
            ck_assert_uint_le(total, 200);
            /* everything of this batch outstanding: the search asks for nothing new, or
             * only more of the same neighbourhood, never a decision's result */
            ck_assert_int_eq(xmt_search_report(s, out[0], bowl(out[0])), 0);
            ck_assert_int_eq(xmt_search_report(s, out[0], 1.0), -1); /* not outstanding */
            for (size_t j = 1; j < k; j++)
                ck_assert_int_eq(xmt_search_report(s, out[j], bowl(out[j])), 0);
        }
        ck_assert_uint_eq(total, 200);
        ck_assert_uint_eq(xmt_search_next(s, out, batch), 0);
        xmt_search_free(s);
    }
}
END_TEST

/* The same seed and times give the same points, whatever order a batch is reported in;
 * another seed restarts elsewhere. */
START_TEST(deterministic)
{
    static size_t a[400], b[400], c[400];
    size_t na, nb, nc;
    xmt_search *s = xmt_search_new(bowl_dims, 4, 3, 17, 300);
    run(s, bowl, 8, 0, a, &na);
    xmt_search_free(s);
    s = xmt_search_new(bowl_dims, 4, 3, 17, 300);
    run(s, bowl, 8, 1, b, &nb);
    xmt_search_free(s);
    ck_assert_uint_eq(na, nb);
    ck_assert(!memcmp(a, b, na * sizeof *a));
    s = xmt_search_new(bowl_dims, 4, 4, 17, 300);
    run(s, bowl, 8, 0, c, &nc);
    ck_assert_uint_gt(xmt_search_restarts(s), 0);
    xmt_search_free(s);
    ck_assert(nc != na || memcmp(a, c, na * sizeof *a));
    /* annealing too */
    s = xmt_search_new_with(bowl_dims, 4, 3, 17, 300, XMT_STRATEGY_ANNEAL);
    run(s, bowl, 8, 0, a, &na);
    xmt_search_free(s);
    s = xmt_search_new_with(bowl_dims, 4, 3, 17, 300, XMT_STRATEGY_ANNEAL);
    run(s, bowl, 8, 1, b, &nb);
    xmt_search_free(s);
    ck_assert_uint_eq(na, nb);
    ck_assert(!memcmp(a, b, na * sizeof *a));
}
END_TEST

static double invalid(size_t i)
{
    (void)i;
    return INFINITY;
}

/* A budget of 0 (or the space's size) is every point once; the best is the true best. */
START_TEST(whole_space)
{
    static uint8_t seen[1920];
    static size_t seq[1920];
    size_t n;
    xmt_search *s = xmt_search_new(bowl_dims, 4, 1, 5, 0);
    size_t best = run(s, bowl, 64, 0, seq, &n);
    ck_assert_uint_eq(n, 1920);
    for (size_t i = 0; i < n; i++) {
        ck_assert(!seen[seq[i]]);
        seen[seq[i]] = 1;
    }
    ck_assert_uint_eq(best, xmt_search_index(bowl_dims, 4, bowl_opt));
    xmt_search_free(s);
    /* nothing valid: no best, every point tried */
    s = xmt_search_new(bowl_dims, 4, 1, 5, 0);
    double t = 0;
    ck_assert_uint_eq(run(s, invalid, 64, 0, NULL, &n), SIZE_MAX);
    ck_assert_uint_eq(xmt_search_best(s, &t), SIZE_MAX);
    ck_assert(isinf(t));
    ck_assert_uint_eq(n, 1920);
    xmt_search_free(s);
}
END_TEST

START_TEST(edges)
{
    unsigned one = 1, zero[2] = {4, 0}, many[17], big[4] = {1024, 1024, 1024, 1024};
    for (unsigned i = 0; i < 17; i++)
        many[i] = 2;
    ck_assert_ptr_null(xmt_search_new(NULL, 1, 1, 0, 0));
    ck_assert_ptr_null(xmt_search_new(zero, 2, 1, 0, 0));
    ck_assert_ptr_null(xmt_search_new(many, 17, 1, 0, 0));
    ck_assert_ptr_null(xmt_search_new(big, 4, 1, 0, 0));
    /* one point, a start out of range (clamped); a NaN or negative time is invalid */
    xmt_search *s = xmt_search_new(&one, 1, 1, 99, 10);
    size_t out[4];
    ck_assert_uint_eq(xmt_search_next(s, out, 4), 1);
    ck_assert_uint_eq(out[0], 0);
    ck_assert_int_eq(xmt_search_report(s, 0, NAN), 0);
    ck_assert(xmt_search_done(s));
    ck_assert_uint_eq(xmt_search_best(s, NULL), SIZE_MAX);
    ck_assert_int_eq(xmt_search_report(s, 5, 1.0), -1);
    xmt_search_free(s);
    /* the start comes first */
    s = xmt_search_new(bowl_dims, 4, 1, 1234, 50);
    ck_assert_uint_ge(xmt_search_next(s, out, 4), 1);
    ck_assert_uint_eq(out[0], 1234);
    xmt_search_free(s);
    /* index <-> coordinates; the default budget's floor and cap */
    unsigned c[4];
    xmt_search_coord(bowl_dims, 4, 1234, c);
    ck_assert_uint_eq(xmt_search_index(bowl_dims, 4, c), 1234);
    ck_assert_uint_eq(c[3], 1234 % 5);
    ck_assert_uint_eq(xmt_search_default_evals(10), 10);
    ck_assert_uint_eq(xmt_search_default_evals(300), XMT_SEARCH_MIN_EVALS);
    ck_assert_uint_eq(xmt_search_default_evals(10000), 500);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("search");
    TCase *t = tcase_create("search");
    tcase_add_test(t, finds_known_optimum);
    tcase_add_test(t, batch_contract);
    tcase_add_test(t, deterministic);
    tcase_add_test(t, whole_space);
    tcase_add_test(t, edges);
    suite_add_tcase(su, t);
    SRunner *r = srunner_create(su);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
