/*
 * cachefile: the on-disk cache's files and how they are shared — the default location,
 * the lock, atomic compaction and the claims on keys being tuned. The shim
 * (shim/records/cache.c) and `xmatune cache` (tools/cache_cmd.c) both use it, so that the
 * command's writes (prune, clear, import) take the same lock as the shim's.
 *
 * Next to the data file P (one record a line, common/cacherec) live:
 *   P.lock    flock(2)ed by every reader (shared) and writer (exclusive); never replaced
 *             (a lock on a file that a rename replaces locks nothing);
 *   P.claims  one line a key a live process is tuning (written under the lock);
 *   P.tmp.*   a compaction in progress; one left by a killed process is removed by the
 *             next writer (under the exclusive lock no other writer can be making one).
 */
#ifndef XMT_CACHEFILE_H
#define XMT_CACHEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define XMT_CACHE_FILE_NAME "cache.jsonl" /* the data file's name in the default folder */

/* The mode a new data file is made with, under the umask as P.lock and P.claims are
 * (0666): under umask 002 a team's cache in a setgid folder is group-writable, so that the
 * whole team writes it. Never writable by others, even under umask 0: the shim refuses a
 * cache anyone may write (shim/records/cache.c). */
#define XMT_CACHEFILE_MODE 0664

/* The default cache, $XDG_CACHE_HOME/xmatune/cache.jsonl (an absolute XDG_CACHE_HOME
 * only, as the XDG spec says), else ~/.cache/xmatune/cache.jsonl; the xmatune folder
 * (and ~/.cache) are created 0700 when missing. 0, or -1 with a reason in why (no home,
 * a folder that cannot be made). */
int xmt_cachefile_default(char *out, size_t cap, char *why, size_t why_cap);

/* Locks P.lock (created when missing), shared or exclusive, waiting for it. Returns the
 * lock's descriptor (close it to unlock), or -1 with errno: ENOLCK, EOPNOTSUPP or ENOSYS
 * mean flock does not work on that file system (xmt_cachefile_no_flock), anything else
 * that the lock file cannot be made or opened. */
int xmt_cachefile_lock(const char *path, int exclusive);
/* As xmt_cachefile_lock, giving up after wait_ms milliseconds (negative: never) with
 * ETIMEDOUT: another process may hold the lock for as long as it likes (a stopped one,
 * another user's). The lock file is opened read-only when it cannot be opened for
 * writing (another user's): flock works on any descriptor. */
int xmt_cachefile_lock_for(const char *path, int exclusive, long wait_ms);

/* Why path may not be used as a cache (a symbolic link: a rewrite would replace the link
 * with a plain file; not a regular file), NULL when it may (or does not exist). The shim
 * opens it with O_NOFOLLOW; `xmatune cache` asks this first. */
const char *xmt_cachefile_unusable(const char *path);
int xmt_cachefile_no_flock(int err);

/* Replaces P with what next yields (lines ending in '\n', NULL at the end), atomically:
 * written to a temporary file in P's folder, given P's mode (none yet: XMT_CACHEFILE_MODE
 * under the umask), fsync'd and renamed over P.
 * Call with the exclusive lock held. 0, or -1 with errno (the temporary file removed). */
int xmt_cachefile_rewrite(const char *path, const char *(*next)(void *ud, size_t *len), void *ud);

/* Removes P.tmp.* left by a killed process. Call with the exclusive lock held. */
void xmt_cachefile_clean_temps(const char *path);

/* Claims: who is tuning which key. A claim names its process (pid, its start time, the
 * boot's id and, for people, its host's name) and when it was made. A claim whose process
 * is gone is stale and taken over; a claim from another machine (another boot id) cannot
 * be asked and counts as live until it is too old. And any claim older than max_age_s
 * (xmt_cachefile_claim_max_age_s) is ignored, either way: one dated in the future (a clock
 * ahead) expires as soon. So a claim's age is capped by the reader: a process that
 * stopped, or a forged line naming a process that lives for ever (pid 1: whoever may
 * write P.claims may write one), keeps a key from being tuned for max_age_s at most. */
#define XMT_CLAIM_AGE_MIN_S 600
enum { XMT_CLAIM_MINE, XMT_CLAIM_THEIRS };

/* How long a claim counts as live at most, in seconds: a key's tuning should be done by
 * then. XMT_CLAIM_AGE_MIN_S (10 minutes), or with a tuning budget per key
 * (XMATUNE_BUDGET_MS, >= 0) twice it plus the trial helper's deadline for one answer
 * (XMATUNE_TRIAL_TIMEOUT_MS: a helper's start) when that is longer: a budget bounds the
 * timed phases, not a busy machine's verification and start. A tuning that takes longer
 * than this is taken over by the next process that needs its key (the key is tuned twice,
 * the last record wins): nothing is lost but the work. */
long xmt_cachefile_claim_max_age_s(double budget_ms, int trial_timeout_ms);

/* Whose claim a key waits on (xmt_cachefile_claim's XMT_CLAIM_THEIRS). */
typedef struct {
    long pid;
    char host[64];    /* its host name, printable; "" when the claim has none (an older one) */
    int this_machine; /* its boot id is this machine's */
    long long age_s;  /* since its time stamp (negative: dated ahead) */
    long long left_s; /* how much longer it counts as live at most */
} xmt_claim_holder;

/* With the exclusive lock held: claims `what` (a hash of the identity, hex) for this
 * process unless a live process holds it. XMT_CLAIM_MINE (a stale claim is taken over),
 * XMT_CLAIM_THEIRS (*holder, when not NULL: whose claim it is), or -1 and errno when the
 * claims file cannot be written. */
int xmt_cachefile_claim(const char *path, const char *what, long max_age_s,
                        xmt_claim_holder *holder);

/* With the exclusive lock held: 1 when a live process other than this one claims what. */
int xmt_cachefile_claimed(const char *path, const char *what, long max_age_s);

/* With the exclusive lock held: drops this process's claim on what (NULL: all of them;
 * also every stale claim). */
void xmt_cachefile_unclaim(const char *path, const char *what, long max_age_s);

#endif
