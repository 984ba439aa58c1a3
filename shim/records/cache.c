/*
 * cache: the on-disk cache of winners (see cache.h).
 */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cachefile.h"
#include "cacheidx.h"
#include "cacherec.h"
#include "invariant.h"
#include "log.h"
#include "logevent.h"
#include "options.h"

/* The records in memory, and their hashes, are cacheidx.c's; what a line read back says is
 * this file's to judge: the very identity asked for, field by field. */
static int same_identity(const xmt_cacherec *a, const xmt_cacherec *b)
{
    return !strcmp(a->key_hex, b->key_hex) && !strcmp(a->kernel, b->kernel) &&
           !strcmp(a->code, b->code) && !strcmp(a->entry_fp, b->entry_fp) &&
           !strcmp(a->entry, b->entry) && !strcmp(a->device, b->device);
}

/* ---- the cache's state, all of it in one place ----
 * cache.lock guards every field but these: `path` is written by xmt_cache_load only (at
 * the shim's start, before any launch can reach the cache) and read unlocked after it;
 * the *_warned flags are atomics of their own (xmt_first_time). Nothing here is read on
 * the launch path: the tuner asks the cache once per key and remembers the answer. */
static struct {
    pthread_mutex_t lock;
    /* The cache file's absolute path, fixed at load: a program that changes directory
     * later still writes where it read. Empty: no cache (none set, or refused). */
    char path[XMT_PATH_MAX];
    atomic_int no_flock_warned, lock_warned, write_warned, compact_warned, long_warned,
        claim_warned;
    /* The lock was not had within XMATUNE_CACHE_LOCK_WAIT_MS (another process holds it):
     * the process goes on without the cache, rather than wait at every store. */
    atomic_int gave_up;

    /* The claim names of the keys this process was told another process claims: a
     * waiting key is said once (xmt_cache_wait's first), not at each look again. */
    struct {
        uint64_t *v;
        size_t n, cap;
    } told;

    /* The file the XMT_CACHEIDX_FILE records are in: a descriptor of its own, kept open,
     * so that another process's compaction (a rename) leaves every offset valid; a new file
     * (another inode, or this one shrunk) is a new epoch, and records it no longer has are
     * copied into memory from the old one (settle). dev and ino say whether fd is still
     * that file: a program may close descriptors it did not open. */
    struct {
        int fd;
        dev_t dev;
        ino_t ino;
        uint8_t epoch;
    } cfile;

    /* What the file was when it was last read, so that it is read again only when it has
     * changed (a writer appended: only the new lines; another process compacted it:
     * all). */
    struct {
        int known;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        uint64_t pos; /* the offset after the last whole line read */
        int lines;    /* lines in the file (records, bad lines and older records) */
    } seen;
    int lines_read; /* record lines seen by load_one since the count was reset */

    /* The records: where each one's line is, and the table over them (cacheidx.h). */
    xmt_cacheidx idx;

    /* Compaction's window on the file (next_line): lines are read back in order. */
    struct {
        size_t next; /* the record next_line looks at */
        char *win;   /* WINDOW bytes of the file from off, len of them read */
        uint64_t off;
        size_t len;
    } rw;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER, .cfile = {.fd = -1}};

/* Buffers for reading one line back (cache.lock held): 48 KiB, touched only when a lookup
 * reads a line. Apart from `cache` because that one has an initializer: in it they would
 * be 48 KiB of zeros in the shared object's data instead of BSS. */
static struct {
    char line[XMT_CACHEREC_MAX_LINE + 2];
    char parsed[XMT_CACHEREC_SCRATCH(XMT_CACHEREC_MAX_LINE)];
} cache_bufs;

/* ---- invariants (shim/invariant.h: debug builds and the unit tests) ----
 * The index's (cacheidx.h), given the file as now read. Run after every change: a load or
 * re-read, a store (compaction is a re-read). cache.lock held. */
#if XMT_INVARIANTS
static void check_locked(void)
{
    int in_seen =
        cache.seen.known && cache.seen.dev == cache.cfile.dev && cache.seen.ino == cache.cfile.ino;
    xmt_cacheidx_check(&cache.idx, cache.cfile.epoch, cache.cfile.fd >= 0, in_seen, cache.seen.pos);
}
#define CHECK_LOCKED() check_locked()
#else
#define CHECK_LOCKED() ((void)0)
#endif

/* Whether descriptor fd is still the file dev/ino. */
static int fd_is(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Whether line (r->len bytes) still reads as r's record: parsed into *out (its strings in
 * scratch) and of r's hash. cache.lock held. */
static int reads_as(const xmt_cacheidx_rec *r, const char *line, xmt_cacherec *out)
{
    return xmt_cacherec_parse(line, r->len, cache_bufs.parsed, out) == 0 &&
           xmt_cacheidx_hash(out) == r->hv;
}

/* r's line parsed into *out (its strings in scratch), read from fd when it is in a file;
 * 0, or -1 when it cannot be read or no longer reads as the record of r's hash.
 * cache.lock held. */
static int read_back(const xmt_cacheidx_rec *r, int fd, xmt_cacherec *out)
{
    const char *line = r->at.line;
    if (r->where == XMT_CACHEIDX_DEAD) return -1;
    if (r->where == XMT_CACHEIDX_FILE) { /* XMT_CACHEIDX_MEM: the line, ending in '\n' past len */
        if (pread(fd, cache_bufs.line, r->len, (off_t)r->at.off) != (ssize_t)r->len) return -1;
        line = cache_bufs.line;
    }
    return reads_as(r, line, out) ? 0 : -1;
}

/* Keeps r's line in memory (from fd, the file it was read from) or, when it no longer
 * reads back as itself, drops it. cache.lock held. */
static void keep_in_memory(xmt_cacheidx_rec *r, int fd)
{
    xmt_cacherec got;
    char *line = read_back(r, fd, &got) == 0
                     ? xmt_cacheidx_line_new(&cache.idx, cache_bufs.line, r->len)
                     : NULL;
    r->where = line ? XMT_CACHEIDX_MEM : XMT_CACHEIDX_DEAD;
    r->at.line = line;
}

/* After a new file was read (cfile's epoch moved on from old's): the records it did not
 * have (cleared, pruned, or the file truncated) are kept in memory from the old file,
 * which is then closed, when it is still that file. cache.lock held. */
static void settle(int old_fd, dev_t old_dev, ino_t old_ino)
{
    int ok = fd_is(old_fd, old_dev, old_ino);
    for (size_t i = 0; i < cache.idx.nrecs; i++) {
        xmt_cacheidx_rec *r = &cache.idx.recs[i];
        if (r->where != XMT_CACHEIDX_FILE || r->epoch == cache.cfile.epoch) continue;
        if (ok)
            keep_in_memory(r, old_fd);
        else
            r->where = XMT_CACHEIDX_DEAD;
    }
    if (ok) close(old_fd);
}

static uint32_t device_bit(int device)
{
    return device >= 0 && device < 32 ? 1u << device : 0;
}

/* The identity of r into buf (cap bytes): its fields joined with \x1f, as
 * xmt_cacherec_identity makes it, without an allocation. Its length, 0 when too long. */
static size_t identity_into(const xmt_cacherec *r, char *buf, size_t cap)
{
    const char *f[6] = {r->device, r->kernel, r->code, r->entry, r->entry_fp, r->key_hex};
    size_t n = 0;
    for (int i = 0; i < 6; i++) {
        size_t l = strlen(f[i]);
        if (n + l + 1 >= cap) return 0;
        if (i) buf[n++] = '\x1f';
        memcpy(buf + n, f[i], l);
        n += l;
    }
    buf[n] = 0;
    return n;
}

static void load_one(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    cache.lines_read++;
    (void)xmt_cacheidx_put(&cache.idx, xmt_cacheidx_hash(r), xmt_cacheidx_choice_hash(&r->choice),
                           NULL, r->offset, r->raw_len, cache.cfile.epoch);
}

/* Makes path absolute against the current directory. 0, or -1 when too long. */
static int absolute(const char *path, char *out, size_t cap)
{
    char cwd[XMT_PATH_MAX];
    if (path[0] == '/') return snprintf(out, cap, "%s", path) < (int)cap ? 0 : -1;
    if (!getcwd(cwd, sizeof cwd)) return -1;
    return snprintf(out, cap, "%s/%s", cwd, path) < (int)cap ? 0 : -1;
}

/* Whether the folder of the cache may be trusted: not one anyone may write, unless it
 * has the sticky bit (as /tmp does). Says why not. */
static int folder_trusted(const char *path)
{
    struct stat dst;
    char dir[XMT_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    if (stat(dir, &dst) == 0 && (dst.st_mode & S_IWOTH) && !(dst.st_mode & S_ISVTX)) {
        xmt_warn("the cache %s is in a folder anyone may write (%s, no sticky bit): not used", path,
                 dir);
        return 0;
    }
    return 1;
}

/* Whether a cache file (open as fd) may be trusted; says why not. */
static int trusted(int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        xmt_warn("the cache %s is not a regular file: not used", path);
        return 0;
    }
    if (st.st_mode & S_IWOTH) {
        xmt_warn("the cache %s may be written by anyone (mode %03o): not used", path,
                 (unsigned)(st.st_mode & 0777));
        return 0;
    }
    return 1;
}

int xmt_cache_private(void)
{
    if (!cache.path[0]) return 0;
    struct stat st, dst;
    char dir[XMT_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", cache.path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = 0;
    uid_t me = geteuid();
    return lstat(cache.path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me &&
           !(st.st_mode & (S_IWGRP | S_IWOTH)) && stat(dir, &dst) == 0 &&
           (dst.st_uid == me || dst.st_uid == 0) &&
           (!(dst.st_mode & (S_IWGRP | S_IWOTH)) || (dst.st_mode & S_ISVTX));
}

/* Opens the cache file: never following a symlink, never blocking; made under the umask
 * (cachefile.h). -1 and errno when it cannot be opened (ENOENT: not there yet). */
static int open_cache(const char *path, int flags)
{
    return open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, XMT_CACHEFILE_MODE);
}

/* Reads what changed in the open file (st: its fstat) into memory: what was appended to
 * the file as last read, or, when it is another file now (or this one shrank), all of it
 * as a new epoch (settle; all: even when it looks unchanged). Called with cache.lock held. The
 * number of bad lines read, -1 and errno when reading failed. */
static int refresh_fd(int fd, const struct stat *st, xmt_cacherec_other *old, int all)
{
    *old = (xmt_cacherec_other){0, 0};
    if (!all && cache.seen.known && st->st_dev == cache.seen.dev && st->st_ino == cache.seen.ino &&
        st->st_size == cache.seen.size && st->st_mtim.tv_sec == cache.seen.mtime.tv_sec &&
        st->st_mtim.tv_nsec == cache.seen.mtime.tv_nsec)
        return 0;
    int same = !all && cache.seen.known && st->st_dev == cache.seen.dev &&
               st->st_ino == cache.seen.ino && (uint64_t)st->st_size >= cache.seen.pos &&
               cache.cfile.fd >= 0 && cache.cfile.dev == st->st_dev &&
               cache.cfile.ino == st->st_ino;
    uint64_t pos = same ? cache.seen.pos : 0; /* the same file, grown: only what was appended */
    int old_fd = cache.cfile.fd;
    dev_t old_dev = cache.cfile.dev;
    ino_t old_ino = cache.cfile.ino;
    if (!same) {
        int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (nfd < 0) return -1;
        cache.cfile.fd = nfd;
        cache.cfile.dev = st->st_dev;
        cache.cfile.ino = st->st_ino;
        cache.cfile.epoch++;
        cache.seen.lines = 0;
    }
    uint64_t from = pos;
    cache.lines_read = 0;
    int bad = xmt_cacherec_read_at(fd, &pos, load_one, NULL, old);
    int e = errno;
    if (!same) settle(old_fd, old_dev, old_ino);
    if (bad < 0) {
        cache.seen.known = 0; /* read it all again next time */
        CHECK_LOCKED();
        errno = e;
        return -1;
    }
    /* a partial last line is read again next time: counted once all the same */
    cache.seen.lines += pos > from ? cache.lines_read + bad + old->older + old->newer : 0;
    cache.seen.known = 1;
    cache.seen.dev = st->st_dev;
    cache.seen.ino = st->st_ino;
    cache.seen.size = st->st_size;
    cache.seen.mtime = st->st_mtim;
    cache.seen.pos = pos;
    CHECK_LOCKED();
    return bad;
}

/* Reads the whole file again from its path, as a new epoch: a record's line could not be
 * read back (a program closed the descriptor, or the file changed in place). 0, or -1.
 * cache.lock held; the file's lock is not (taking it here could deadlock with a writer
 * that holds it and waits for cache.lock): a writer's half-written last line is read
 * again at the next refresh. */
static int reread(void)
{
    if (!cache.path[0]) return -1;
    int fd = open_cache(cache.path, O_RDONLY);
    xmt_cacherec_other old;
    struct stat st;
    int rc = -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        rc = refresh_fd(fd, &st, &old, 1) < 0 ? -1 : 0;
    if (fd >= 0) close(fd);
    return rc;
}

/* Takes the cache's lock (exclusive or shared), waiting XMATUNE_CACHE_LOCK_WAIT_MS at
 * most. -1 when there is none to take: flock does not work there (said once: appends go
 * on, without compaction or claims), the lock file cannot be made (said once, with the
 * real reason), or another process held it all that time (said once: gave_up, no cache
 * from then on). */
static int take_lock(int exclusive)
{
    int fd = xmt_cachefile_lock_for(cache.path, exclusive, xmt_opt.cache_lock_wait_ms);
    if (fd >= 0) return fd;
    int e = errno;
    if (e == ETIMEDOUT) {
        if (!atomic_exchange(&cache.gave_up, 1))
            xmt_warn("the cache %s is locked by another process (%s.lock) for more than %d ms "
                     "(XMATUNE_CACHE_LOCK_WAIT_MS): this process goes on without the cache",
                     cache.path, cache.path, xmt_opt.cache_lock_wait_ms);
    } else if (xmt_cachefile_no_flock(e)) {
        if (xmt_first_time(&cache.no_flock_warned))
            xmt_warn("flock does not work where the cache %s is (%s; a network file system?): "
                     "records are appended without compaction, and processes do not agree on "
                     "who tunes a key",
                     cache.path, strerror(e));
    } else if (exclusive && xmt_first_time(&cache.lock_warned)) {
        xmt_warn("cannot lock the cache %s (%s.lock: %s): records are appended unlocked",
                 cache.path, cache.path, strerror(e));
    }
    return -1;
}

/* Whether the cache is in use: one was set, and its lock was not given up on. */
static int usable(void)
{
    return cache.path[0] && !atomic_load(&cache.gave_up);
}

static void drop_lock(int fd)
{
    if (fd >= 0) close(fd); /* closing the last descriptor releases the flock */
}

void xmt_cache_load(void)
{
    char path[XMT_PATH_MAX], why[XMT_PATH_MAX + 64];
    cache.path[0] = 0;
    atomic_store(&cache.gave_up, 0);
    const char *want = xmt_opt.cache;
    if (strcmp(want, "off") == 0) return;
    if (!want[0]) {
        if (xmt_cachefile_default(path, sizeof path, why, sizeof why) != 0) {
            xmt_warn("no default cache (%s): winners are kept in memory only; set XMATUNE_CACHE "
                     "to a file, or to off",
                     why);
            return;
        }
    } else if (xmt_expand_path(want, path, sizeof path) != 0) {
        xmt_warn("the cache path %s is too long: not used", want);
        return;
    }
    if (absolute(path, cache.path, sizeof cache.path) != 0) {
        xmt_warn("the cache path %s is too long: not used", path);
        cache.path[0] = 0;
        return;
    }
    if (!folder_trusted(cache.path)) {
        cache.path[0] = 0;
        return;
    }
    int fd = open_cache(cache.path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return; /* written at the first store */
        xmt_warn("cannot open the cache %s: %s: not used", cache.path,
                 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        cache.path[0] = 0;
        return;
    }
    if (!trusted(fd, cache.path)) {
        close(fd);
        cache.path[0] = 0;
        return;
    }
    int lk = take_lock(0); /* a writer's append or rename is never seen half done */
    if (!usable()) {
        close(fd);
        return;
    }
    struct stat st;
    xmt_cacherec_other old = {0, 0};
    int bad = -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t heap0 = mallinfo2().uordblks + xmt_cacheidx_mem(&cache.idx);
    pthread_mutex_lock(&cache.lock);
    int stat_ok = fstat(fd, &st) == 0;
    if (stat_ok && !cache.idx.nrecs) cache.idx.file_size = (size_t)st.st_size;
    if (stat_ok) bad = refresh_fd(fd, &st, &old, 0);
    int e = errno;
    unsigned live = xmt_cacheidx_live(&cache.idx);
    int lines = cache.seen.lines;
    pthread_mutex_unlock(&cache.lock);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t heap1 = mallinfo2().uordblks + xmt_cacheidx_mem(&cache.idx);
    /* what loading cost, for tools/bench/bench_cache.sh and for people with big caches */
    xmt_log_event(xmt_ev_cache_load(cache.path, (int)live, lines, bad, old.older + old.newer,
                                    (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                                        (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
                                    heap1 > heap0 ? heap1 - heap0 : 0));
    drop_lock(lk);
    close(fd);
    if (bad < 0)
        xmt_warn("cannot read the cache %s: %s", cache.path, strerror(e));
    else if (bad > 0)
        xmt_warn("%s: %d line(s) are not cache records and were skipped", cache.path, bad);
    if (old.older > 0)
        xmt_warn("%s: %d record(s) of an older format were dropped (those keys are tuned again)",
                 cache.path, old.older);
    if (old.newer > 0)
        xmt_warn("%s: %d record(s) of a newer format (written by a later xmatune) were skipped "
                 "(this one reads format %d; those keys are tuned again)",
                 cache.path, old.newer, XMT_CACHEREC_VERSION);
}

#define ID_CAP (6 * XMT_PATH_MAX)
#define MAX_KEY 512 /* bytes of binary key a record may have */

/* The record of id and key (its strings pointing into key_hex and id) and its identity in
 * idbuf; the identity's length, 0 when the key or the identity is too long. */
static size_t identity_of(const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                          char key_hex[2 * MAX_KEY + 1], xmt_cacherec *rec, char *idbuf)
{
    if (keylen > MAX_KEY) return 0;
    xmt_cacherec_hex(key, keylen, key_hex);
    *rec = (xmt_cacherec){.device = id->device,
                          .kernel = id->kernel,
                          .code = id->code,
                          .entry = id->entry,
                          .entry_fp = id->entry_fp,
                          .key_hex = key_hex,
                          .key_text = ""};
    return identity_into(rec, idbuf, ID_CAP);
}

/* Looks q's identity up: its record's line read back and compared field by field. A line
 * that cannot be read back (the descriptor closed by the program, the file changed in
 * place) makes the whole file read again, once. Called with cache.lock held. */
static int find_locked(const xmt_cacherec *q, int device, xmt_choice *out, int *checked)
{
    uint64_t hv = xmt_cacheidx_hash(q);
    for (int again = 0;; again = 1) {
        xmt_cacheidx_rec *r = xmt_cacheidx_find(&cache.idx, hv);
        if (!r || r->where == XMT_CACHEIDX_DEAD) return 0;
        xmt_cacherec got;
        if ((r->where != XMT_CACHEIDX_FILE ||
             fd_is(cache.cfile.fd, cache.cfile.dev, cache.cfile.ino)) &&
            read_back(r, cache.cfile.fd, &got) == 0) {
            if (!same_identity(&got, q)) return 0; /* another identity of the same hash */
            uint32_t ch = xmt_cacheidx_choice_hash(&got.choice);
            if (ch != r->choice) { /* the file was edited in place: what was checked is not this */
                r->choice = ch;
                r->checked = 0;
            }
            *out = got.choice;
            *checked = (r->checked & device_bit(device)) != 0;
            return 1;
        }
        if (again || r->where != XMT_CACHEIDX_FILE || reread() != 0) return 0;
    }
}

int xmt_cache_find(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                   xmt_choice *out, int *checked)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    *checked = 0;
    if (!n) return 0;
    pthread_mutex_lock(&cache.lock);
    int found = find_locked(&rec, device, out, checked);
    pthread_mutex_unlock(&cache.lock);
    return found;
}

void xmt_cache_checked(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    if (!n) return;
    pthread_mutex_lock(&cache.lock);
    /* the caller found it by its full identity */
    xmt_cacheidx_rec *r = xmt_cacheidx_find(&cache.idx, xmt_cacheidx_hash(&rec));
    if (r && r->where != XMT_CACHEIDX_DEAD) r->checked |= device_bit(device);
    pthread_mutex_unlock(&cache.lock);
}

/* How old a claim may be: from this process's options (cachefile.h). */
static long claim_age_s(void)
{
    return xmt_cachefile_claim_max_age_s(xmt_opt.budget_ms, xmt_opt.trial_timeout_ms);
}

/* The claim's name for an identity: its FNV-1a hash, hex (the claims file stays small
 * whatever the keys). */
static void claim_name(const char *id, size_t n, char out[17])
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)id[i]) * 1099511628211ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* Opens the data file for a write and reads what changed. Called with the lock (when there
 * is one) and cache.lock held. The descriptor, or -1 with *what saying why. */
static int open_for_write(const char **what, struct stat *st)
{
    int fd = open_cache(cache.path, O_RDWR | O_CREAT | O_APPEND); /* read: its last byte */
    if (fd < 0) {
        *what = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
        return -1;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        *what = "not a regular file";
        close(fd);
        return -1;
    }
    xmt_cacherec_other old;
    (void)refresh_fd(fd, st, &old, 0);
    return fd;
}

/* Compaction: every record's line, in the order records were first seen, through a
 * temporary file renamed over the data file; then the new file is read (as a new epoch:
 * the records' offsets are its own). A record whose line no longer reads back as itself
 * is left out. Called with the exclusive lock and cache.lock held. */
#define WINDOW (256u << 10) /* the file is read back a window at a time: lines in order */

static const char *next_line(void *ud, size_t *len)
{
    (void)ud;
    while (cache.rw.next < cache.idx.nrecs) {
        const xmt_cacheidx_rec *r = &cache.idx.recs[cache.rw.next++];
        /* its file lost it: cleared stays so */
        if (r->where == XMT_CACHEIDX_MEM && !r->mine) continue;
        if (r->where == XMT_CACHEIDX_MEM) {
            *len = r->len + 1;
            return r->at.line;
        }
        if (r->where != XMT_CACHEIDX_FILE) continue;
        if (r->at.off < cache.rw.off || r->at.off + r->len > cache.rw.off + cache.rw.len) {
            ssize_t n = pread(cache.cfile.fd, cache.rw.win, WINDOW, (off_t)r->at.off);
            cache.rw.off = r->at.off;
            cache.rw.len = n > 0 ? (size_t)n : 0;
            if (r->len > cache.rw.len) continue; /* the file shrank under us */
        }
        const char *line = cache.rw.win + (r->at.off - cache.rw.off);
        xmt_cacherec got;
        if (!reads_as(r, line, &got)) continue;
        memcpy(cache_bufs.line, line, r->len);
        cache_bufs.line[r->len] = '\n';
        *len = r->len + 1;
        return cache_bufs.line;
    }
    return NULL;
}

/* 0, or -1 with *what when the file could not be rewritten (a folder this process may
 * not write: the file is as it was). */
static int compact(const char **what)
{
    if (!fd_is(cache.cfile.fd, cache.cfile.dev, cache.cfile.ino) && reread() != 0) {
        *what = "the cache could not be read again";
        return -1;
    }
    xmt_cachefile_clean_temps(cache.path); /* a killed process's: no other writer now */
    cache.rw.next = 0;
    cache.rw.off = cache.rw.len = 0;
    if (!(cache.rw.win = malloc(WINDOW))) {
        *what = strerror(ENOMEM);
        return -1;
    }
    int rc = xmt_cachefile_rewrite(cache.path, next_line, NULL);
    int e = errno;
    free(cache.rw.win);
    cache.rw.win = NULL;
    if (rc != 0) {
        *what = strerror(e); /* nothing changed: the caller appends instead */
        return -1;
    }
    if (reread() != 0) *what = strerror(errno); /* the records stay where they were read */
    return 0;
}

/* Appends one line; a line a killed writer left unfinished is ended first, so that the
 * new record is never glued to it. 0 with *at the line's offset in cfile when nothing
 * but it was added since the file was last read (else *at is UINT64_MAX: the record keeps
 * its line in memory), or -1 with *what. Called with cache.lock (and the lock, when there
 * is one) held. */
static int append(int fd, const struct stat *st, const char *line, size_t len, const char **what,
                  uint64_t *at)
{
    *at = UINT64_MAX;
    char last = '\n';
    if (st->st_size > 0 && pread(fd, &last, 1, st->st_size - 1) != 1) last = '\n';
    if (last != '\n' && write(fd, "\n", 1) != 1) {
        *what = strerror(errno);
        return -1;
    }
    errno = 0;
    ssize_t w = write(fd, line, len);
    if (w < 0) {
        *what = strerror(errno);
        return -1;
    }
    if ((size_t)w != len) {
        *what = errno ? strerror(errno) : "short write (the disk may be full)";
        return -1;
    }
    struct stat now;
    if (fstat(fd, &now) == 0 && cache.seen.known && now.st_ino == cache.seen.ino &&
        cache.seen.pos == (uint64_t)st->st_size) {
        /* only our line was added since the last read: no need to read it back */
        if (now.st_ino == cache.cfile.ino && now.st_dev == cache.cfile.dev &&
            (uint64_t)now.st_size == (uint64_t)st->st_size + len + (last != '\n'))
            *at = (uint64_t)now.st_size - len;
        cache.seen.size = now.st_size;
        cache.seen.mtime = now.st_mtim;
        cache.seen.pos = (uint64_t)now.st_size;
        cache.seen.lines += 1 + (last != '\n');
    }
    return 0;
}

/* Says, once, that a record could not be kept: every run tunes that key again. */
static void too_long(const char *kernel, size_t len)
{
    if (!xmt_first_time(&cache.long_warned)) return;
    char n[32] = "";
    if (len) snprintf(n, sizeof n, " (%zu bytes)", len);
    xmt_warn("a cache record of kernel %.80s%s is longer than a record may be (%d bytes): not "
             "cached, so every run tunes that key again",
             kernel, n, XMT_CACHEREC_MAX_LINE);
}

void xmt_cache_store(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                     const char *key_text, const xmt_choice *c)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    if (!n) {
        too_long(cid->kernel, 0);
        return;
    }
    rec.key_text = key_text ? key_text : "";
    rec.choice = *c;
    char *line = xmt_cacherec_format(&rec);
    if (!line) return;
    size_t len = strlen(line);
    if (len - 1 > XMT_CACHEREC_MAX_LINE) { /* no reader would read it back: not kept */
        too_long(cid->kernel, len - 1);
        free(line);
        return;
    }
    uint64_t hv = xmt_cacheidx_hash(&rec);
    int lk = usable() ? take_lock(1) : -1;
    pthread_mutex_lock(&cache.lock);
    const char *what = NULL, *cwhy = NULL;
    struct stat st;
    int fd = usable() ? open_for_write(&what, &st) : -1; /* reads what others wrote */
    xmt_cacheidx_rec *r = xmt_cacheidx_put(&cache.idx, hv, xmt_cacheidx_choice_hash(c), line, 0,
                                           len - 1, cache.cfile.epoch);
    if (r) r->checked |= device_bit(device); /* tuned here: nothing to check */
    if (r) r->mine = 1;                      /* a compaction writes it back */
    if (fd >= 0) {
        /* within twice its live records: compaction when the next line would pass that
         * (only under a working lock: a rename under an unlocked appender loses lines);
         * a compaction that cannot be written (a read-only folder) appends instead */
        int live = (int)xmt_cacheidx_live(&cache.idx);
        uint64_t at;
        if (!(lk >= 0 && cache.seen.lines + 1 > 2 * live && cache.seen.lines + 1 > 8 &&
              compact(&cwhy) == 0) &&
            append(fd, &st, line, len, &what, &at) == 0 && r && at != UINT64_MAX)
            (void)xmt_cacheidx_put(&cache.idx, hv, r->choice, NULL, at, len - 1,
                                   cache.cfile.epoch); /* the line is in the file now */
        close(fd);
    }
    if (usable() && lk >= 0) {
        char cn[17];
        claim_name(id, n, cn);
        xmt_cachefile_unclaim(cache.path, cn, claim_age_s());
    }
    CHECK_LOCKED();
    pthread_mutex_unlock(&cache.lock);
    drop_lock(lk);
    free(line);
    if (cwhy && xmt_first_time(&cache.compact_warned))
        xmt_warn("cannot compact the cache %s (a new file in its folder: %s): records are "
                 "appended to it instead",
                 cache.path, cwhy);
    if (what && xmt_first_time(&cache.write_warned))
        xmt_warn("cannot write the cache %s: %s", cache.path, what);
}

/* 1 the first time claim name cn is asked about (cache.lock held); 0 after, and when out
 * of memory (silence rather than a message per look). */
static int first_told(const char cn[17])
{
    uint64_t h = strtoull(cn, NULL, 16);
    for (size_t i = 0; i < cache.told.n; i++)
        if (cache.told.v[i] == h) return 0;
    if (cache.told.n == cache.told.cap) {
        size_t cap = cache.told.cap ? 2 * cache.told.cap : 16;
        uint64_t *v = realloc(cache.told.v, cap * sizeof *v);
        if (!v) return 0;
        cache.told.v = v;
        cache.told.cap = cap;
    }
    cache.told.v[cache.told.n++] = h;
    return 1;
}

void xmt_cache_wait_text(const xmt_cache_wait *w, char *out, size_t cap)
{
    char where[96], when[64];
    if (w->who.this_machine)
        snprintf(where, sizeof where, "this machine");
    else if (w->who.host[0] && strcmp(w->who.host, "-") != 0)
        snprintf(where, sizeof where, "host %s", w->who.host);
    else
        snprintf(where, sizeof where, "another machine");
    if (w->who.age_s >= 0)
        snprintf(when, sizeof when, "%lld s ago", w->who.age_s);
    else
        snprintf(when, sizeof when, "with a time stamp %lld s ahead", -w->who.age_s);
    snprintf(out, cap,
             "waits for process %ld on %s, which claimed it %s in %s.claims: the program's own "
             "config runs until that process's winner is in the cache, for %lld s more at most "
             "(a claim older than %ld s is ignored)",
             w->who.pid, where, when, cache.path, w->who.left_s, w->max_age_s);
}

int xmt_cache_claim(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                    xmt_choice *out, int *checked, xmt_cache_wait *wait)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    *checked = 0;
    if (!n || !usable()) return XMT_CACHE_TUNE;
    int lk = take_lock(1);
    pthread_mutex_lock(&cache.lock);
    int rc = XMT_CACHE_TUNE, claim_err = 0;
    int fd = open_cache(cache.path, O_RDONLY);
    struct stat st;
    xmt_cacherec_other old;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) (void)refresh_fd(fd, &st, &old, 0);
    if (fd >= 0) close(fd);
    if (find_locked(&rec, device, out, checked)) {
        rc = XMT_CACHE_FOUND;
    } else if (lk >= 0) {
        char cn[17];
        claim_name(id, n, cn);
        xmt_cache_wait w = {.max_age_s = claim_age_s()};
        int cl = xmt_cachefile_claim(cache.path, cn, w.max_age_s, &w.who);
        if (cl == XMT_CLAIM_THEIRS) {
            rc = XMT_CACHE_WAIT;
            w.first = first_told(cn);
            if (wait) *wait = w;
        }
        if (cl < 0) claim_err = errno;
    }
    pthread_mutex_unlock(&cache.lock);
    drop_lock(lk);
    if (claim_err && xmt_first_time(&cache.claim_warned))
        xmt_warn("cannot claim keys in %s.claims (%s; another user's?): this process tunes "
                 "without claiming, and may tune a key another process is tuning",
                 cache.path, strerror(claim_err));
    return rc;
}

void xmt_cache_unclaim(const xmt_cache_id *cid, const uint8_t *key, size_t keylen)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    if (!n || !usable()) return;
    int lk = take_lock(1);
    if (lk < 0) return;
    char cn[17];
    claim_name(id, n, cn);
    xmt_cachefile_unclaim(cache.path, cn, claim_age_s());
    drop_lock(lk);
}

const char *xmt_cache_path(void)
{
    return cache.path;
}

/* A child keeps the parent's records (its own copy of them) and the descriptor they point
 * into (inherited): nothing to reset there, only the lock to release. */
void xmt_cache_atfork(int phase)
{
    xmt_fork_mutex(&cache.lock, phase);
}

/* Back to the state of a process that has loaded no file: the records and their lines
 * freed, the descriptor closed (when it is still ours). The path and the warn-once flags
 * stay: a store after xmt_cache_free still knows where the file is. cache.lock held. */
static void reset_locked(void)
{
    xmt_cacheidx_reset(&cache.idx);
    if (fd_is(cache.cfile.fd, cache.cfile.dev, cache.cfile.ino)) close(cache.cfile.fd);
    cache.cfile.fd = -1;
    memset(&cache.seen, 0, sizeof cache.seen);
    free(cache.told.v);
    memset(&cache.told, 0, sizeof cache.told);
    CHECK_LOCKED();
}

void xmt_cache_free(void)
{
    pthread_mutex_lock(&cache.lock);
    reset_locked();
    pthread_mutex_unlock(&cache.lock);
}

#if XMT_INVARIANTS
void xmt_cache_check(void)
{
    pthread_mutex_lock(&cache.lock);
    check_locked();
    pthread_mutex_unlock(&cache.lock);
}

void xmt_cache_test_break(int what)
{
    pthread_mutex_lock(&cache.lock);
    for (size_t i = 0; what == XMT_CACHE_BREAK_SLOT && i < cache.idx.nslots; i++)
        if (cache.idx.slots[i]) {
            cache.idx.slots[i] = (uint32_t)cache.idx.nrecs + 1;
            break;
        }
    for (size_t i = 0; what == XMT_CACHE_BREAK_OFFSET && i < cache.idx.nrecs; i++)
        if (cache.idx.recs[i].where == XMT_CACHEIDX_FILE) {
            cache.idx.recs[i].at.off = cache.seen.pos;
            break;
        }
    pthread_mutex_unlock(&cache.lock);
}
#endif
