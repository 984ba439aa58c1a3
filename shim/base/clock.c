/*
 * clock: milliseconds of CLOCK_MONOTONIC (see clock.h).
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

double xmt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
