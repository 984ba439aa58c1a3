/*
 * test_clock: the one monotonic clock (common/clock.c): its two readings agree and never go
 * back; and how long a wait for the GPU sleeps between its asks.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

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

/* xmt_now_ns and xmt_now_ms read the same clock: a millisecond reading lies between two
 * nanosecond readings taken around it; neither goes back; a 2 ms sleep is seen as one. */
START_TEST(one_clock_two_units)
{
    for (int i = 0; i < 1000; i++) {
        uint64_t a = xmt_now_ns();
        double m = xmt_now_ms();
        uint64_t b = xmt_now_ns();
        ck_assert_uint_le(a, b);
        ck_assert(m * 1e6 >= (double)a - 1e3 && m * 1e6 <= (double)b + 1e3);
    }
    uint64_t t0 = xmt_now_ns();
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
    ck_assert_uint_ge(xmt_now_ns() - t0, 2000000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("poll");
    tcase_add_test(tc, asks_at_once_at_first);
    tcase_add_test(tc, an_eighth_of_the_wait_within_bounds);
    tcase_add_test(tc, one_clock_two_units);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
