/*
 * test_clock: how long a wait for the GPU sleeps between its asks (shim/base/clock.c).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "clock.h"

/* Within the spin, no sleep: a short run's end is seen at once. */
START_TEST(asks_at_once_at_first)
{
    ck_assert_int_eq(xmt_poll_pause_ns(0.0), 0);
    ck_assert_int_eq(xmt_poll_pause_ns(XMT_POLL_SPIN_MS / 2), 0);
    ck_assert_int_eq(xmt_poll_pause_ns(NAN), 0);
    ck_assert_int_eq(xmt_poll_pause_ns(-1.0), 0);
}
END_TEST

/* Then an eighth of the wait so far, within its bounds: the end of a run is seen at most
 * about 12.5% late, and the watchdog is asked at least once a millisecond. */
START_TEST(an_eighth_of_the_wait_within_bounds)
{
    ck_assert_int_eq(xmt_poll_pause_ns(XMT_POLL_SPIN_MS), 6250); /* 0.05 ms / 8 */
    ck_assert_int_eq(xmt_poll_pause_ns(0.4), 50000);
    ck_assert_int_eq(xmt_poll_pause_ns(4.0), 500000);
    ck_assert_int_eq(xmt_poll_pause_ns(8.0), XMT_POLL_MAX_NS);
    ck_assert_int_eq(xmt_poll_pause_ns(1e9), XMT_POLL_MAX_NS);
    /* over a wait of any length, each sleep is at most an eighth of the wait so far (or
     * the floor): the late look it allows */
    for (double w = XMT_POLL_SPIN_MS; w < 100.0; w *= 1.1) {
        long p = xmt_poll_pause_ns(w);
        ck_assert(p >= XMT_POLL_MIN_NS && p <= XMT_POLL_MAX_NS);
        ck_assert(p == XMT_POLL_MIN_NS || (double)p <= w * 1e6 / 8 + 1);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("poll");
    tcase_add_test(tc, asks_at_once_at_first);
    tcase_add_test(tc, an_eighth_of_the_wait_within_bounds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
