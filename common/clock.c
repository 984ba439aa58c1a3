/*
 * clock: CLOCK_MONOTONIC, read here and nowhere else (see clock.h).
 */
#include "clock.h"

#include <time.h>

long xmt_poll_pause_ns(double waited_ms)
{
    if (!(waited_ms >= XMT_POLL_SPIN_MS)) return 0; /* NaN too: ask at once */
    double ns = waited_ms * 1e6 / 8;
    if (ns < (double)XMT_POLL_MIN_NS) return XMT_POLL_MIN_NS;
    if (ns > (double)XMT_POLL_MAX_NS) return XMT_POLL_MAX_NS;
    return (long)ns;
}

/* The one call to clock_gettime(CLOCK_MONOTONIC) of the tree's product code. */
static struct timespec monotonic(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail for this clock */
    return ts;
}

uint64_t xmt_now_ns(void)
{
    struct timespec ts = monotonic();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double xmt_now_ms(void)
{
    struct timespec ts = monotonic();
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
