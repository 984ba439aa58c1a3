/*
 * cache: the on-disk cache of tuned winners (XMATUNE_CACHE), shared by processes.
 *
 * One JSON object per line (common/cacherec), appended with O_APPEND in a single write
 * under an exclusive flock of a separate lock file (common/cachefile), so concurrent
 * processes never tear a line; the last line for a given identity wins, and a writer
 * compacts the file (temporary file + rename) when it would pass twice its live records.
 * It is read again only when it changed (fstat: inode, size, mtime), and then only what
 * was appended since, when it is the same file. Before tuning a key a process claims it
 * (common/cachefile's claims); one that finds a live claim runs the program's config.
 * XMATUNE_CACHE unset or empty: $XDG_CACHE_HOME/xmatune/cache.jsonl (else
 * ~/.cache/xmatune/cache.jsonl); `off`: no file. A
 * winner is identified by device *model* and driver version (identical GPUs share
 * results; a new driver tunes again), kernel (mangled name and a fingerprint of its
 * code: parameter layout and attributes), policy entry (its pattern and a fingerprint
 * of what it says and of the protection in force: editing an entry voids that entry's
 * records only) and lookup key. It records the candidate's index and label, not its
 * grid: the grid is recomputed from each launch.
 *
 * In memory a record is where its line is (offset and length in the file as last read,
 * a hash of its identity and of its choice), not what it says: a lookup reads the line
 * back and uses it only when it parses as the record asked for. A descriptor of the file
 * stays open for that; a new file (another process's compaction) is read whole, and
 * records it lacks are copied into memory from the old one before it is closed.
 *
 * The file's path is made absolute once, when it is loaded. It is opened with
 * O_NOFOLLOW|O_NONBLOCK and must be a regular file (a symlink, FIFO, device or
 * directory gets one message and is never used); a file anyone may write, or one in a
 * directory anyone may write without the sticky bit, is refused (a group-writable one is
 * allowed: a team's cache).
 */
#ifndef XMT_CACHE_H
#define XMT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cachefile.h"
#include "cacherec.h"

/* Who a winner belongs to: the fields of a record's identity but the key. */
typedef struct {
    const char *device, *kernel, *code, *entry, *entry_fp;
} xmt_cache_id;

/* Reads the cache file if there is one and may be trusted. Bad lines are skipped with
 * one warning, records of an older format with another. */
void xmt_cache_load(void);

/* 1 and *out when the cache holds a winner for this identity, else 0; *checked = 1 when
 * this process tuned it or verified it on device ordinal `device` already. Thread-safe. */
int xmt_cache_find(const xmt_cache_id *id, const uint8_t *key, size_t keylen, int device,
                   xmt_choice *out, int *checked);

/* Marks a winner verified on device ordinal `device` in this process: later kernel
 * records of the same kernel (a module loaded again) use it without another check. */
void xmt_cache_checked(const xmt_cache_id *id, const uint8_t *key, size_t keylen, int device);

/* Remembers a winner in memory (checked on `device`: it was tuned here) and, under the
 * file's lock, appends it to the file (or compacts the file, when the line would make it
 * more than twice its live records) and drops this process's claim on it. key_text is
 * for people. */
void xmt_cache_store(const xmt_cache_id *id, const uint8_t *key, size_t keylen, int device,
                     const char *key_text, const xmt_choice *c);

/* What xmt_cache_claim found. */
enum { XMT_CACHE_TUNE, XMT_CACHE_FOUND, XMT_CACHE_WAIT };

/* Whose claim a key waits on (XMT_CACHE_WAIT), and whether to say so: first is 1 the
 * first time this process finds that key claimed by another (one message per key). */
typedef struct {
    xmt_claim_holder who;
    long max_age_s; /* a claim older than this is ignored (xmt_cachefile_claim_max_age_s) */
    int first;
} xmt_cache_wait;

/* Before this process tunes a key no one here has decided: under the file's lock, reads
 * what changed in the file and claims the key. XMT_CACHE_FOUND (*out and *checked as
 * xmt_cache_find: another process wrote it meanwhile), XMT_CACHE_WAIT (a live process has
 * claimed it, *wait says whose: run the program's own config and ask again later), or
 * XMT_CACHE_TUNE (this process claimed it, took over a stale or too old claim, or there is
 * no lock to claim with: tune, then xmt_cache_store or xmt_cache_unclaim). */
int xmt_cache_claim(const xmt_cache_id *id, const uint8_t *key, size_t keylen, int device,
                    xmt_choice *out, int *checked, xmt_cache_wait *wait);

/* What a key waiting on *w waits for, for a message after "KERNEL: key KEY ": "waits for
 * process 4242 on host gpu7, which claimed it 3 s ago in P.claims: ...". */
void xmt_cache_wait_text(const xmt_cache_wait *w, char *out, size_t cap);

/* Gives up this process's claim on a key it tuned without a winner worth storing. */
void xmt_cache_unclaim(const xmt_cache_id *id, const uint8_t *key, size_t keylen);

/* Whether only this user can write the cache file: owned by the effective user, not group or
 * other writable, in a folder of this user's (or root's) that others cannot write (or that
 * has the sticky bit). Records there that this user's processes verified may be used at
 * once (docs/cache.md, Trust). A cold path: a stat of each. */
int xmt_cache_private(void);

/* The cache file's absolute path ("" when there is none). */
const char *xmt_cache_path(void);

/* fork(2): the cache's lock held across it (XMT_FORK_* phases, common/log.h). */
void xmt_cache_atfork(int phase);

/* Frees the in-memory copy (at exit). */
void xmt_cache_free(void);

#ifdef XMT_CHECK_INVARIANTS
/* Tests (shim/invariant.h): xmt_cache_check runs the checks of the records and their
 * index now; xmt_cache_test_break breaks them first: a slot pointing past the records,
 * or a record in the file pointing past what was read of it. */
enum { XMT_CACHE_BREAK_SLOT, XMT_CACHE_BREAK_OFFSET };
void xmt_cache_check(void);
void xmt_cache_test_break(int what);
#endif

#endif
