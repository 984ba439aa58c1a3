/*
 * results: one key's in-memory result (xmt_result), the part of tuner.c's state that its
 * background jobs (bgjobs.c) also write: the state a key moves through, its decided
 * config and label, its re-checks. Internal to shim/decide/: only tuner.c and bgjobs.c
 * include it. The results' table itself (uthash per kernel, its lock, its hash) stays
 * tuner.c's; tuner.c defines the table's HASH_FUNCTION before it includes this header,
 * and bgjobs.c never looks a key up.
 */
#ifndef XMT_RESULTS_H
#define XMT_RESULTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "clock.h"
#include "invariant.h"

/* XMT_R_WAITING: another process claimed the key on disk; the program's own config runs, and
 * a launch after recheck_ms looks at the cache again (one thread at a time: it moves the
 * state to XMT_R_TUNING while it does). */
enum { XMT_R_TUNING = 0, XMT_R_DONE = 1, XMT_R_WAITING = 2 };
#define XMT_RECHECK_MS 200.0
/* A queued key's memo hits between two counted launches (tuner.c): its count is then short by
 * fewer than this many, and the slow trip's ~1,300 instructions cost about 40 a launch while
 * the key waits, nothing once it is decided. */
#define XMT_QUEUED_SAMPLE 32

typedef struct xmt_result {
    UT_hash_handle hh;
    _Atomic int state;
    _Atomic double recheck_ms; /* XMT_R_WAITING: when to look at the cache again */
    long index;                /* XMT_OWN_CONFIG, XMT_PIN_CONFIG or a candidate index */
    int tries;                 /* sessions whose data proved nothing (tuner.c's defer_key) */
    int bg_deferred;           /* 1 while counted in its kernel's keys_deferred (tuner.c) */
    /* re-checks of a winner (docs/tuning.md, "Data that proves nothing") */
    _Atomic int rechecks_left; /* re-checks on new data still to make (XMATUNE_RECHECKS) */
    _Atomic uint32_t due_in;   /* slow-path launches until the next re-check */
    uint32_t gap;              /* launches from the last re-check to the next */
    char digest[17];           /* the data the winner was last verified on ("": unknown) */
    double time_ms;            /* the winner's time as its record says (stored again) */
    int rechecked;             /* re-checks it passed, its record's and this process's */
    int recheck_bg;            /* its re-checks run in the background (tuned there: bgjobs.c) */
    /* A key waiting for the background worker (bgjobs.c): its launches meanwhile, counted by
     * the slow path (the memo sends one launch in XMT_QUEUED_SAMPLE there), for the worker's
     * order (bgverify.c: the most launch time first). */
    _Atomic int queued;
    _Atomic uint64_t queued_launches;
    char label[160];
    size_t keylen;
    uint8_t key[]; /* device (4 bytes) then the entry's key */
} xmt_result;

/* A key's state moves on: only from XMT_R_TUNING, by the one thread holding it so (it claimed
 * the key, or won the compare-and-swap out of XMT_R_DONE or XMT_R_WAITING), to XMT_R_DONE or
 * XMT_R_WAITING. Other threads only ever compare-and-swap out of those two. */
static inline void xmt_result_move(xmt_result *r, int to)
{
    XMT_ASSERT(atomic_load_explicit(&r->state, memory_order_relaxed) == XMT_R_TUNING,
               "a key's state moved on by a thread that does not hold it");
    XMT_ASSERT(to == XMT_R_DONE || to == XMT_R_WAITING, "a key's state moved to %d", to);
    atomic_store_explicit(&r->state, to, memory_order_release);
}

/* A key another process is tuning (or one that waits for the background worker): looked
 * at again at a launch XMT_RECHECK_MS from now. */
static inline void xmt_result_wait(xmt_result *r)
{
    atomic_store(&r->recheck_ms, xmt_now_ms() + XMT_RECHECK_MS);
    xmt_result_move(r, XMT_R_WAITING);
}

#endif
