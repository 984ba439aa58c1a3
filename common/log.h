/*
 * log: what the shim tells people.
 *
 * Two channels. Messages on stderr, each prefixed "xmatune:", capped in number
 * (XMATUNE_MAX_MESSAGES) so that a broken policy cannot flood a program's output.
 * And the JSON Lines log (XMATUNE_LOG, schema in docs/log.md), written through jansson,
 * one object per line, appended under a lock with O_APPEND so several processes can
 * share one file. Nothing is opened before the first event: a process that never asks
 * for a CUDA entry point leaves no file behind.
 */
#ifndef XMT_LOG_H
#define XMT_LOG_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

/* stderr, capped; printf-style. */
void xmt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* xmt_warn("%s", msg), shaped as the callbacks want it: the options' warn and the
 * policy library's diag (ud unused). */
void xmt_warn_msg(const char *msg);
void xmt_warn_diag(void *ud, const char *msg);

/* stderr, only when XMATUNE_VERBOSE >= level; not capped (the user asked for them). */
void xmt_verbose(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A progress line on stderr (a long tuning), not capped: when XMATUNE_PROGRESS=1, or
 * when it is -1 (the default) and stderr is a terminal. */
void xmt_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Appends one event to the log and takes ownership of obj (decref'd). A log that cannot
 * be opened or written warns once; the program goes on. No-op when there is no log. */
void xmt_log_event(json_t *obj);

/* Is there a log to write to? Lets callers skip building events nobody reads. */
int xmt_log_enabled(void);

/* Expands %p in a path template into out (cap bytes). Returns 0, or -1 if too long. */
int xmt_expand_path(const char *tmpl, char *out, size_t cap);

/* The one warn-once idiom: 1 the first time it is called for *flag, from any thread,
 * else 0 (an atomic exchange: two threads cannot both see the first time). */
static inline int xmt_first_time(atomic_int *flag)
{
    return !atomic_exchange_explicit(flag, 1, memory_order_relaxed);
}

/* fork(2) phases, for the pthread_atfork handlers of each module that owns a lock: the
 * lock is taken before the fork and released on both sides, so that a child never
 * inherits it held by a thread that does not exist there (shim.c registers them). */
enum { XMT_FORK_PREPARE, XMT_FORK_PARENT, XMT_FORK_CHILD };
void xmt_log_atfork(int phase);

/* What each handler does with its lock: taken before the fork, released after it on
 * both sides (a child handler resets its module's state first, still holding it). */
static inline void xmt_fork_mutex(pthread_mutex_t *m, int phase)
{
    if (phase == XMT_FORK_PREPARE)
        pthread_mutex_lock(m);
    else
        pthread_mutex_unlock(m);
}

/* The trial helper speaks through the program: with a relay set, each message line
 * (after the caps and levels above, without the prefix and newline) goes to message,
 * and each event (compact JSON, one line) to event, instead of stderr and the log. */
void xmt_log_set_relay(void (*message)(const char *line), void (*event)(const char *json));

/* The program's side of the relay: a line the helper said, printed with the prefix (its
 * caps were applied there); an event line the helper built, appended to the log as it is
 * (a line holding a newline is dropped). */
void xmt_message_line(const char *line);
void xmt_log_line(const char *json);

/* Flushes and reports how many messages were suppressed. Called at exit. */
void xmt_log_close(void);

#endif
