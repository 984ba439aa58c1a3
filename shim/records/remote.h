/*
 * remote: the fleet's tier of the cache, a Redis server beside the on-disk cache
 * (XMATUNE_CACHE_REMOTE; docs/cache.md, "The fleet's tier"), as the shim uses it.
 *
 * No launch waits on the network for a lookup: one thread of the shim's own (started by
 * xmt_remote_start, every signal blocked) reads every record and every claim under the
 * prefix when it connects, and the claims' index every 200 ms, keeps them in memory, polls
 * the keys this process waits on, and sends what this process decided. A lookup (xmt_remote_find)
 * is a table look-up under a lock the thread never holds across a network call. A key another
 * process held when the thread last read the claims is known as such: its launches keep the
 * program's own config with no word to the server. The one wait: a key this process is about to
 * tune whose state in the fleet it does not know yet is claimed in Redis first (xmt_remote_claim),
 * so that a fleet tunes each key once; the asker waits for the answer at most twice the command
 * timeout, and not at all while the server is unreachable. Under XMATUNE_TUNING=sync the asker is
 * the launch about to tune the key (it is about to wait for a tuning anyway); under
 * XMATUNE_TUNING=background the launch asks only what is known already (xmt_remote_known) and
 * the background worker claims the key before it tunes it, so that no launch waits.
 *
 * A record from Redis is a hint: xmt_remote_find marks its choice origin "remote", which
 * plan.c never uses at once (docs/cache.md, Trust). What goes to Redis is only what this
 * process decided itself (xmt_remote_store refuses records of another origin and `failed`
 * ones): a record that fails its verification here is not propagated.
 *
 * Faults (unreachable, slow, restarted, full, garbage answers): one message, the program
 * runs with the local cache alone, and the thread connects again with a backoff (0.1 s
 * doubling to 5 s); decisions made meanwhile are sent once it is back (1,024 at most).
 */
#ifndef XMT_REMOTE_H
#define XMT_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

/* Starts the tier when XMATUNE_CACHE_REMOTE is set (a bad URL or password file: one
 * message, no tier). At activation, in tune and replay modes. */
void xmt_remote_start(void);

/* 1 with *out (origin "remote") when the fleet's record for this identity has been read
 * already, else 0. Never waits on the network. Thread-safe. */
int xmt_remote_find(const xmt_cache_id *id, const uint8_t *key, size_t keylen, xmt_choice *out);

/* What xmt_remote_claim found. */
enum {
    XMT_REMOTE_OFF,   /* no tier, or it is unreachable now, or it did not answer in time */
    XMT_REMOTE_MINE,  /* this process holds the claim: tune (then store, or unclaim) */
    XMT_REMOTE_FOUND, /* a record is there: *out, as xmt_remote_find's */
    XMT_REMOTE_THEIRS /* another process claimed it: keep the program's own config, ask again */
};

/* Before this process tunes a key: claims it in Redis (SET NX PX), or says who has it. A key
 * whose record or claim this process read already (at connect, by a poll, by an earlier
 * claim) is answered from memory, without a network call; else the launch waits for the
 * thread's answer (boundedly). A key another process holds is watched (polled every 200 ms
 * off the launch path) and answered from memory until its record comes or its claim goes.
 * Thread-safe. */
int xmt_remote_claim(const xmt_cache_id *id, const uint8_t *key, size_t keylen, xmt_choice *out);

/* xmt_remote_claim's answer when it needs no network call (the key's record or claim was read
 * already, or this process claimed it), with no wait and nothing queued: for a launch that
 * leaves the claim to the background worker. XMT_REMOTE_OFF also when nothing is known yet
 * (then the worker asks xmt_remote_claim). Thread-safe. */
int xmt_remote_known(const xmt_cache_id *id, const uint8_t *key, size_t keylen, xmt_choice *out);

/* Sends a decision of this process to Redis (queued: never waits) and gives up its claim
 * there; a record of another origin, or a `failed` one, stays local. */
void xmt_remote_store(const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                      const char *key_text, const xmt_choice *c);

/* Gives up this process's claim on a key it decided nothing worth storing for. */
void xmt_remote_unclaim(const xmt_cache_id *id, const uint8_t *key, size_t keylen);

/* At exit: what is queued is sent and claims given up, for at most 4 times the command
 * timeout (nothing waited for while the server is unreachable); then the thread ends. */
void xmt_remote_stop(void);

/* fork(2): a child has no tier (the thread is the parent's). */
void xmt_remote_atfork(int phase);

#endif
