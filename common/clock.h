/*
 * clock: the one clock for durations and deadlines, of the shim, the trial helper and
 * common/ alike: CLOCK_MONOTONIC (never the wall clock: a date change must not end a
 * budget, a recheck, a lock wait or a protocol timeout early), read in one place. Used by
 * the tuning session's phases and budget, the tuner's rechecks of a key another process
 * claimed, the trial helper's spawn and pings, the protocol's waits and the cache lock's
 * bounded wait. A leaf; no CUDA.
 */
#ifndef XMT_CLOCK_H
#define XMT_CLOCK_H

#include <stdint.h>

/* Nanoseconds of CLOCK_MONOTONIC (exact: integer arithmetic). */
uint64_t xmt_now_ns(void);

/* Milliseconds of CLOCK_MONOTONIC, the same reading as a double (sub-millisecond parts
 * kept). */
double xmt_now_ms(void);

/* A wait for the GPU asks without sleeping for its first XMT_POLL_SPIN_MS: a short run ends
 * there, and a sleep would cost more than the run. */
#define XMT_POLL_SPIN_MS 0.05
/* Its sleeps between asks: never shorter than this, nor longer than the next. */
#define XMT_POLL_MIN_NS 2000L
#define XMT_POLL_MAX_NS 1000000L

/* How long a wait for the GPU (polled, so that a watchdog can end it) sleeps before it
 * asks again, having waited waited_ms so far: 0 (ask at once) within XMT_POLL_SPIN_MS,
 * then an eighth of what it has waited, within [XMT_POLL_MIN_NS, XMT_POLL_MAX_NS], so
 * that it sees the end at most about 12.5% late. (A pause that doubled after each ask
 * could see it as late again as the wait itself: in the trial helper, on an H100, that was
 * most of what a key with nothing to time spent beyond its driver calls.) */
long xmt_poll_pause_ns(double waited_ms);

#endif
