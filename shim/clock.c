/*
 * clock: milliseconds of CLOCK_MONOTONIC (see clock.h).
 */
#include "clock.h"

#include <time.h>

double xmt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
