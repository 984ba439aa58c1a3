/*
 * clock: the shim's one clock for durations and deadlines, in milliseconds of
 * CLOCK_MONOTONIC (never the wall clock: a date change must not end a budget or a
 * recheck early). Used by the tuning session's phases and budget and by the tuner's
 * rechecks of a key another process claimed. A leaf.
 */
#ifndef XMT_CLOCK_H
#define XMT_CLOCK_H

/* Milliseconds of CLOCK_MONOTONIC. */
double xmt_now_ms(void);

#endif
