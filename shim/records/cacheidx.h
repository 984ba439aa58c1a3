/*
 * cacheidx: the on-disk cache's records in memory (cache.c's index; docs/cache.md): for
 * each identity, where its line is (an offset in the file as last read, or a copy kept in
 * memory), a hash of the identity and one of its choice, the devices it was checked on;
 * and an open-addressing table over them by the identity's hash. A record says where its
 * line is, not what it says: cache.c reads the line back at each lookup and uses it only
 * when it parses as the record asked for.
 *
 * Apart from cache.c because it is a data structure and only that: it reads no file and
 * takes no lock. cache.c owns the one index (in its state, under its lock: every function
 * here is called with cache.c's lock held) and does all the file's reading, writing and
 * locking, the claims and the lookups' reading back. Internal to shim/records/.
 */
#ifndef XMT_CACHEIDX_H
#define XMT_CACHEIDX_H

#include <stddef.h>
#include <stdint.h>

#include "cacherec.h"
#include "invariant.h"

/* The records: where each one's line is, not what it says. Loading a big cache costs its fresh
 * memory most (on a virtual machine the first write of a page can cost more than parsing the
 * records on it), so a record in memory is 32 bytes: its identity's hash, its choice's hash, the
 * device bits it was checked on, and where its line is. A lookup reads the line back (pread; once
 * per key and process, the tuner remembers the answer) and uses it only when it parses as the very
 * record asked for: a file changed under the process, or two identities of one hash, cost a tuning,
 * never a wrong winner. */

/* Where a record's line is (its `where`). */
enum {
    XMT_CACHEIDX_FILE, /* at.off in the file as last read (cache.c's cfile), len bytes */
    XMT_CACHEIDX_MEM,  /* at.line: this process wrote it, or kept it when its file went away */
    XMT_CACHEIDX_DEAD  /* its line no longer reads back as itself: no record */
};

typedef struct {
    uint64_t hv; /* the identity's hash (xmt_cacheidx_hash) */
    union {
        uint64_t off; /* XMT_CACHEIDX_FILE */
        char *line;   /* XMT_CACHEIDX_MEM: an xmt_cacheidx_line's text, '\n' and a NUL ending it */
    } at;
    /* the choice's hash (xmt_cacheidx_choice_hash): another choice clears checked */
    uint32_t choice;
    uint32_t checked; /* bit d: verified (or tuned) on device ordinal d < 32 in this process
                       * (a device of a higher ordinal verifies at each lookup) */
    uint16_t len;     /* the line's length without '\n' */
    uint8_t where;    /* XMT_CACHEIDX_* */
    uint8_t epoch;    /* XMT_CACHEIDX_FILE: the cfile epoch it was read in (outside a re-read,
                       * every such record has the current one: wrapping is harmless) */
    uint8_t mine;     /* this process decided its choice (tuned it): a compaction writes an
                       * XMT_CACHEIDX_MEM record back only then; one kept in memory because
                       * its file lost it (`xmatune cache clear`) stays out of the file */
} xmt_cacheidx_rec;
_Static_assert(sizeof(xmt_cacheidx_rec) == 32, "a record in memory is 32 bytes (docs/cache.md)");
_Static_assert(XMT_CACHEREC_MAX_LINE <= UINT16_MAX, "a record's length fits its len");

/* A line kept in memory (XMT_CACHEIDX_MEM), on the index's memlines. */
typedef struct xmt_cacheidx_line xmt_cacheidx_line;

/* The records in insertion order (compaction writes them so), and an open-addressing
 * table over them by hv: slot i holds a record's index + 1, 0 when empty. Both in
 * anonymous mappings sized from the file before the first load. The records' mapping
 * is reserved for more records than the file can hold and written in advance
 * (prefaulted) a step at a time as records come, so that a file of few or no records
 * costs no memory; past its end it grows with mremap (nothing copied). Zeroed: empty. */
typedef struct {
    xmt_cacheidx_rec *recs;
    size_t nrecs, recs_cap, recs_mapped, recs_ready; /* ready: bytes prefaulted */
    uint32_t *slots;
    size_t nslots, slots_mapped; /* nslots a power of 2, at least twice nrecs */
    size_t file_size;            /* the file's size at the first load: sizes both */

    /* The lines kept in memory (XMT_CACHEIDX_MEM), listed from here: LeakSanitizer does
     * not scan the records' anonymous mapping, and would call them leaked. */
    xmt_cacheidx_line *memlines;
} xmt_cacheidx;

/* The identity's hash: device, kernel, code, entry, entry_fp and key. */
uint64_t xmt_cacheidx_hash(const xmt_cacherec *r);

/* The choice's hash: its index and label (what a verification checked; not the time). */
uint32_t xmt_cacheidx_choice_hash(const xmt_choice *c);

/* The record of hash hv, NULL when none. */
xmt_cacheidx_rec *xmt_cacheidx_find(const xmt_cacheidx *ix, uint64_t hv);

/* Points the record of hv (added when new) at its latest line: in the file at off (text
 * NULL; epoch: the file's, as cache.c counts them), or in memory (a copy of text, len
 * bytes without its '\n'). The record (valid until the next add), or NULL when out of
 * memory. */
xmt_cacheidx_rec *xmt_cacheidx_put(xmt_cacheidx *ix, uint64_t hv, uint32_t choice, const char *text,
                                   uint64_t off, size_t len, uint8_t epoch);

/* A copy of text[0..len) with '\n' and a NUL, listed; NULL when out of memory. Freed with
 * xmt_cacheidx_line_free (or xmt_cacheidx_reset). */
char *xmt_cacheidx_line_new(xmt_cacheidx *ix, const char *text, size_t len);
void xmt_cacheidx_line_free(xmt_cacheidx *ix, char *text);

/* The bytes the records take: what was prefaulted of their array, and the table. */
size_t xmt_cacheidx_mem(const xmt_cacheidx *ix);

/* The records a compaction would write: those in the file, and those in memory that this
 * process tuned (not those its file lost). */
size_t xmt_cacheidx_live(const xmt_cacheidx *ix);

/* Empty again: the records, their lines and the table freed. */
void xmt_cacheidx_reset(xmt_cacheidx *ix);

#if XMT_INVARIANTS
/* The index's invariant checks (shim/base/invariant.h; cache.c's check_locked runs them):
 * the index and the records agree, and a record in the file is of the file as now read
 * (epoch, file_open: its descriptor is) and, when in_seen (that descriptor is the file as
 * last read), within the seen_pos bytes read of it. */
void xmt_cacheidx_check(const xmt_cacheidx *ix, uint8_t epoch, int file_open, int in_seen,
                        uint64_t seen_pos);
#endif

#endif
