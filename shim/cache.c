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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The records' hash: eight bytes a step, multiply and fold. uthash's default (Jenkins, a
 * byte a step) over identities of 100-200 bytes was a quarter of loading a cache. The
 * file is trusted (its owner is checked) so a hash without a secret seed is enough. */
static inline unsigned id_hash(const void *key, size_t n)
{
    const unsigned char *p = key;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return (unsigned)(h ^ h >> 29);
}
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = id_hash((keyptr), (size_t)(keylen)))
/* uthash is the interned strings' table (the records have their own, below). Its buckets
 * come from the arena (pre-faulted) and are never given back one by one (xmt_cache_free
 * unmaps the arena). Out of memory is not fatal: the string is not added (uthash would
 * exit the program). */
static void *arena_alloc(size_t n);
static int add_failed;
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (add_failed = 1)
#define uthash_malloc(sz) arena_alloc(sz)
#define uthash_free(ptr, sz) ((void)(ptr), (void)(sz))
#include <uthash.h>

#include "cachefile.h"
#include "cacherec.h"
#include "log.h"
#include "options.h"

/* A record as small as it can be (memory is what loading a big cache costs most: fresh
 * pages): its identity, the choice, and key_text. Compaction writes its line anew from
 * these (xmt_cacherec_format): a record has no other field. The identity is binary: the
 * interned device, kernel, code, entry and entry_fp (5 pointers: records share them) and
 * then the key's hex, NUL-ended (see bin_id). */
typedef struct record {
    long index; /* the choice: candidate index, label and time */
    double time_ms;
    const char *label; /* interned; key_text in the arena */
    const char *key_text;
    uint64_t checked;    /* bit d: verified (or tuned) on device ordinal d in this process */
    struct record *next; /* in insertion order: compaction writes them in the order first seen */
    uint32_t hv, idlen;  /* the identity's hash and length */
    char id[];           /* the record's identity, binary (bin_id) */
} record_t;

/* Strings records share, once each (in the arena), so that equal ones are one pointer. */
typedef struct {
    UT_hash_handle hh;
    char s[];
} istr_t;
static istr_t *interned;
static const char *intern_memo[6]; /* the last string of each slot: the next is often it */

/* The records: a list in insertion order, and an open-addressing table of them by
 * identity (a slot is a pointer: 8 bytes a record where uthash's handle is 56, and memory
 * is what loading a big cache costs most). */
static record_t *records, **records_tail = &records;
static record_t **slots;
static size_t nslots, nrecords;   /* nslots a power of 2, at least twice nrecords */
static size_t initial_slots = 64; /* set from the file's size before the first load */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Records and their lines live in an arena of 1 MiB blocks, mapped with MAP_POPULATE:
 * one system call where malloc would take a page fault every 4 KiB (on a virtual machine
 * a fault can cost more than parsing the page's records), and records side by side for
 * the hash chains. A replaced line stays until exit; compaction keeps the file within
 * twice its live records, so the arena stays within about twice them too. */
typedef struct arena_blk {
    struct arena_blk *next;
    size_t used, cap, mapped;
    char data[];
} arena_blk;
static arena_blk *arena;
static size_t arena_bytes;       /* mapped, for the cache_load event */
#define ARENA_BLOCK (256u << 10) /* small enough that the last block's unused tail is little */

/* n bytes (16-aligned) from the arena; NULL when out of memory. cache_lock held. */
static void *arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!arena || arena->used + n > arena->cap) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        size_t sz = sizeof(arena_blk) + cap;
        void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                       -1, 0);
        if (p == MAP_FAILED) return NULL;
        arena_blk *b = p;
        b->next = arena;
        b->used = 0;
        b->cap = cap;
        b->mapped = sz;
        arena = b;
        arena_bytes += sz;
    }
    void *r = arena->data + arena->used;
    arena->used += n;
    return r;
}

/* s (NUL-ended) copied into the arena; "" costs nothing. cache_lock held. */
static const char *arena_str(const char *s)
{
    size_t n = strlen(s);
    if (n == 0) return "";
    char *c = arena_alloc(n + 1);
    if (c) memcpy(c, s, n + 1);
    return c;
}

/* The one copy of s (slot: which field, for the memo); with add 0, NULL when there is
 * none (so no record can have it), with add 1, NULL only when out of memory. cache_lock
 * held. */
static const char *intern(int slot, const char *s, int add)
{
    const char *m = intern_memo[slot];
    if (m && strcmp(m, s) == 0) return m;
    size_t n = strlen(s);
    istr_t *e = NULL;
    HASH_FIND(hh, interned, s, n, e);
    if (!e && add) {
        e = arena_alloc(sizeof *e + n + 1);
        if (!e) return NULL;
        memset(e, 0, sizeof *e);
        memcpy(e->s, s, n + 1);
        HASH_ADD_KEYPTR(hh, interned, e->s, n, e);
        if (add_failed) {
            add_failed = 0;
            return NULL;
        }
    }
    if (!e) return NULL;
    intern_memo[slot] = e->s;
    return e->s;
}

/* r's binary identity into buf (cap bytes): the five shared fields' interned pointers,
 * then key_hex and a NUL. Its length without the NUL; 0 when too long, out of memory, or
 * (add 0) when a field was never interned: no record has it. cache_lock held. */
static size_t bin_id(const xmt_cacherec *r, char *buf, size_t cap, int add)
{
    const char *f[5] = {r->device, r->kernel, r->code, r->entry, r->entry_fp};
    size_t kl = strlen(r->key_hex);
    if (sizeof f + kl + 1 > cap) return 0;
    for (int i = 0; i < 5; i++)
        if (!(f[i] = intern(i, f[i], add))) return 0;
    memcpy(buf, f, sizeof f);
    memcpy(buf + sizeof f, r->key_hex, kl + 1);
    return sizeof f + kl;
}

/* The record's fields back from its binary identity (pointing into it and the interned
 * strings). */
static void fields_of(const record_t *r, xmt_cacherec *rec)
{
    const char *f[5];
    memcpy(f, r->id, sizeof f);
    *rec =
        (xmt_cacherec){f[0], f[1], f[2], f[3], f[4], r->id + sizeof f, r->key_text, {0}, NULL, 0};
}

static void choice_of(const record_t *r, xmt_choice *c)
{
    c->index = r->index;
    c->time_ms = r->time_ms;
    size_t n = strnlen(r->label, sizeof c->label - 1);
    memcpy(c->label, r->label, n);
    c->label[n] = 0;
}

#define MAX_KEY 512 /* bytes of binary key a record may have */
#define BIN_ID_CAP (5 * sizeof(char *) + XMT_CACHEREC_MAX_LINE + 1)

/* The record of identity id (n bytes, hash hv), NULL when none (cache_lock held). */
static record_t *slot_find(const char *id, size_t n, uint32_t hv)
{
    for (size_t i = hv & (nslots - 1); nslots && slots[i]; i = (i + 1) & (nslots - 1)) {
        record_t *r = slots[i];
        if (r->hv == hv && r->idlen == n && memcmp(r->id, id, n) == 0) return r;
    }
    return NULL;
}

/* Adds r to the table, made or doubled first when it would be over half full; -1 when
 * out of memory (r is not added). The old slots stay in the arena. cache_lock held. */
static int slot_add(record_t *r)
{
    if (2 * (nrecords + 1) > nslots) {
        size_t n = nslots ? 2 * nslots : initial_slots;
        record_t **t = arena_alloc(n * sizeof(record_t *));
        if (!t) return -1;
        memset(t, 0, n * sizeof(record_t *));
        for (size_t i = 0; i < nslots; i++)
            if (slots[i]) {
                size_t j = slots[i]->hv & (n - 1);
                while (t[j])
                    j = (j + 1) & (n - 1);
                t[j] = slots[i];
            }
        slots = t;
        nslots = n;
    }
    size_t i = r->hv & (nslots - 1);
    while (slots[i])
        i = (i + 1) & (nslots - 1);
    slots[i] = r;
    nrecords++;
    *records_tail = r;
    records_tail = &r->next;
    return 0;
}

/* The record of rec's identity, NULL when none (cache_lock held). */
static record_t *lookup(const xmt_cacherec *rec)
{
    char id[BIN_ID_CAP];
    size_t n = bin_id(rec, id, sizeof id, 0);
    return n ? slot_find(id, n, id_hash(id, n)) : NULL;
}

/* Inserts or replaces the record of rec's identity, with the choice and key_text. Called
 * with cache_lock held. Returns the record, NULL when out of memory. */
static record_t *put(const xmt_cacherec *rec, const xmt_choice *c, const char *key_text)
{
    char id[BIN_ID_CAP];
    size_t idlen = bin_id(rec, id, sizeof id, 1);
    if (!idlen) return NULL;
    uint32_t hv = id_hash(id, idlen); /* once, for the lookup and the insertion */
    record_t *r = slot_find(id, idlen, hv);
    const char *label = intern(5, c->label, 1);
    if (!label) return NULL;
    if (r) {
        if (r->index != c->index || r->label != label) r->checked = 0;
        if (strcmp(r->key_text, key_text) != 0) {
            const char *kt = arena_str(key_text);
            if (!kt) return NULL;
            r->key_text = kt;
        }
        r->label = label;
        r->index = c->index;
        r->time_ms = c->time_ms;
        return r;
    }
    r = arena_alloc(sizeof *r + idlen + 1);
    const char *kt = r ? arena_str(key_text) : NULL;
    if (!kt) return NULL; /* what was taken stays in the arena: freed at exit */
    memset(r, 0, sizeof *r);
    memcpy(r->id, id, idlen + 1);
    r->index = c->index;
    r->time_ms = c->time_ms;
    r->label = label;
    r->key_text = kt;
    r->hv = hv;
    r->idlen = (uint32_t)idlen;
    return slot_add(r) == 0 ? r : NULL;
}

static uint64_t device_bit(int device)
{
    return device >= 0 && device < 64 ? 1ull << device : 0;
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

static int lines_read; /* record lines seen by load_one since the count was reset */

static void load_one(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    lines_read++;
    (void)put(r, &r->choice, r->key_text);
}

/* The cache file's absolute path, fixed at load: a program that changes directory
 * later still writes where it read. Empty: no cache (none set, or refused). */
static char cache_path[XMT_PATH_MAX];

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

/* Opens the cache file: never following a symlink, never blocking. -1 and errno when it
 * cannot be opened (ENOENT: not there yet). */
static int open_cache(const char *path, int flags)
{
    return open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
}

/* What the file was when it was last read, so that it is read again only when it has
 * changed (a writer appended: only the new lines; another process compacted it: all). */
static struct {
    int known;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    uint64_t pos; /* the offset after the last whole line read */
    int lines;    /* lines in the file (records, bad lines and older records) */
} seen;

static atomic_int no_flock_warned, lock_warned, write_warned;

/* Reads what changed in the open file (st: its fstat) into memory. Called with cache_lock
 * held. The number of bad lines read, -1 when reading failed. */
static int refresh_fd(int fd, const struct stat *st, int *old)
{
    *old = 0;
    if (seen.known && st->st_dev == seen.dev && st->st_ino == seen.ino &&
        st->st_size == seen.size && st->st_mtim.tv_sec == seen.mtime.tv_sec &&
        st->st_mtim.tv_nsec == seen.mtime.tv_nsec)
        return 0;
    uint64_t pos = 0;
    if (seen.known && st->st_dev == seen.dev && st->st_ino == seen.ino &&
        (uint64_t)st->st_size >= seen.pos)
        pos = seen.pos; /* the same file, grown: only what was appended */
    else
        seen.lines = 0;
    uint64_t from = pos;
    lines_read = 0;
    int bad = xmt_cacherec_read_at(fd, &pos, load_one, NULL, old);
    if (bad < 0) return -1;
    /* a partial last line is read again next time: counted once all the same */
    seen.lines += pos > from ? lines_read + bad + *old : 0;
    seen.known = 1;
    seen.dev = st->st_dev;
    seen.ino = st->st_ino;
    seen.size = st->st_size;
    seen.mtime = st->st_mtim;
    seen.pos = pos;
    return bad;
}

/* Takes the cache's lock (exclusive or shared). -1 when there is none to take: flock does
 * not work there (said once: appends go on, without compaction or claims) or the lock
 * file cannot be made (said once, with the real reason). */
static int take_lock(int exclusive)
{
    int fd = xmt_cachefile_lock(cache_path, exclusive);
    if (fd >= 0) return fd;
    int e = errno;
    if (xmt_cachefile_no_flock(e)) {
        if (xmt_first_time(&no_flock_warned))
            xmt_warn("flock does not work where the cache %s is (%s; a network file system?): "
                     "records are appended without compaction, and processes do not agree on "
                     "who tunes a key",
                     cache_path, strerror(e));
    } else if (exclusive && xmt_first_time(&lock_warned)) {
        xmt_warn("cannot lock the cache %s (%s.lock: %s): records are appended unlocked",
                 cache_path, cache_path, strerror(e));
    }
    return -1;
}

static void drop_lock(int fd)
{
    if (fd >= 0) close(fd); /* closing the last descriptor releases the flock */
}

void xmt_cache_load(void)
{
    char path[XMT_PATH_MAX], why[XMT_PATH_MAX + 64];
    cache_path[0] = 0;
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
    if (absolute(path, cache_path, sizeof cache_path) != 0) {
        xmt_warn("the cache path %s is too long: not used", path);
        cache_path[0] = 0;
        return;
    }
    if (!folder_trusted(cache_path)) {
        cache_path[0] = 0;
        return;
    }
    int fd = open_cache(cache_path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return; /* written at the first store */
        xmt_warn("cannot open the cache %s: %s: not used", cache_path,
                 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        cache_path[0] = 0;
        return;
    }
    if (!trusted(fd, cache_path)) {
        close(fd);
        cache_path[0] = 0;
        return;
    }
    int lk = take_lock(0); /* a writer's append or rename is never seen half done */
    struct stat st;
    int old = 0, bad = -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t heap0 = mallinfo2().uordblks + arena_bytes;
    pthread_mutex_lock(&cache_lock);
    int stat_ok = fstat(fd, &st) == 0;
    if (stat_ok && !records) {
        /* two slots a record (a line is 200-300 bytes): the table is made once */
        initial_slots = 64;
        while (initial_slots < ((size_t)1 << 24) && initial_slots * 128 < (uint64_t)st.st_size)
            initial_slots *= 2;
    }
    if (stat_ok) bad = refresh_fd(fd, &st, &old);
    int e = errno;
    unsigned live = nrecords;
    int lines = seen.lines;
    pthread_mutex_unlock(&cache_lock);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t heap1 = mallinfo2().uordblks + arena_bytes;
    /* what loading cost, for tools/bench/bench_cache.sh and for people with big caches */
    xmt_log_event(
        json_pack("{sssssisisisisfsI}", "event", "cache_load", "path", cache_path, "records",
                  (int)live, "lines", lines, "bad", bad, "old", old, "ms",
                  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
                  "heap_bytes", (json_int_t)(heap1 > heap0 ? heap1 - heap0 : 0)));
    drop_lock(lk);
    close(fd);
    if (bad < 0)
        xmt_warn("cannot read the cache %s: %s", cache_path, strerror(e));
    else if (bad > 0)
        xmt_warn("%s: %d line(s) are not cache records and were skipped", cache_path, bad);
    if (old > 0)
        xmt_warn("%s: %d record(s) of an older format were dropped (those keys are tuned again)",
                 cache_path, old);
}

#define ID_CAP (6 * XMT_PATH_MAX)

/* The record of id and key (its strings pointing into key_hex and id) and its identity in
 * idbuf; the identity's length, 0 when the key or the identity is too long. */
static size_t identity_of(const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                          char key_hex[2 * MAX_KEY + 1], xmt_cacherec *rec, char *idbuf)
{
    if (keylen > MAX_KEY) return 0;
    xmt_cacherec_hex(key, keylen, key_hex);
    *rec = (xmt_cacherec){id->device, id->kernel, id->code, id->entry, id->entry_fp,
                          key_hex,    "",         {0},      NULL,      0};
    return identity_into(rec, idbuf, ID_CAP);
}

/* Looks rec's identity up; called with cache_lock held. */
static int find_locked(const xmt_cacherec *rec, int device, xmt_choice *out, int *checked)
{
    record_t *r = lookup(rec);
    if (r) {
        choice_of(r, out);
        *checked = (r->checked & device_bit(device)) != 0;
    }
    return r != NULL;
}

int xmt_cache_find(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                   xmt_choice *out, int *checked)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    *checked = 0;
    if (!n) return 0;
    pthread_mutex_lock(&cache_lock);
    int found = find_locked(&rec, device, out, checked);
    pthread_mutex_unlock(&cache_lock);
    return found;
}

void xmt_cache_checked(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    if (!n) return;
    pthread_mutex_lock(&cache_lock);
    record_t *r = lookup(&rec);
    if (r) r->checked |= device_bit(device);
    pthread_mutex_unlock(&cache_lock);
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
 * is one) and cache_lock held. The descriptor, or -1 with *what saying why. */
static int open_for_write(const char **what, struct stat *st)
{
    int fd = open_cache(cache_path, O_RDWR | O_CREAT | O_APPEND); /* read: its last byte */
    if (fd < 0) {
        *what = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
        return -1;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        *what = "not a regular file";
        close(fd);
        return -1;
    }
    int old;
    (void)refresh_fd(fd, st, &old);
    return fd;
}

/* Writes everything in memory through a temporary file renamed over the data file.
 * Called with the exclusive lock and cache_lock held. */
static record_t *rewrite_at;
static char *rewrite_line; /* the last line next_line made */
static const char *next_line(void *ud, size_t *len)
{
    (void)ud;
    free(rewrite_line);
    rewrite_line = NULL;
    record_t *r = rewrite_at;
    if (!r) return NULL;
    rewrite_at = r->next;
    xmt_cacherec rec;
    fields_of(r, &rec);
    choice_of(r, &rec.choice);
    if (!(rewrite_line = xmt_cacherec_format(&rec))) return NULL; /* out of memory */
    *len = strlen(rewrite_line);
    return rewrite_line;
}

static int compact(const char **what)
{
    xmt_cachefile_clean_temps(cache_path); /* a killed process's: no other writer now */
    rewrite_at = records;
    int rc = xmt_cachefile_rewrite(cache_path, next_line, NULL);
    int e = errno;
    free(rewrite_line);
    rewrite_line = NULL;
    if (rc != 0) {
        *what = strerror(e);
        return -1;
    }
    seen.known = 0; /* read again (nothing new: the same records) at the next change */
    int fd = open_cache(cache_path, O_RDONLY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        seen.known = 1;
        seen.dev = st.st_dev;
        seen.ino = st.st_ino;
        seen.size = st.st_size;
        seen.mtime = st.st_mtim;
        seen.pos = (uint64_t)st.st_size;
        seen.lines = (int)nrecords;
    }
    if (fd >= 0) close(fd);
    return 0;
}

/* Appends one line; a line a killed writer left unfinished is ended first, so that the
 * new record is never glued to it. Called with cache_lock (and the lock, when there is
 * one) held. */
static int append(int fd, const struct stat *st, const char *line, size_t len, const char **what)
{
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
    if (fstat(fd, &now) == 0 && seen.known && now.st_ino == seen.ino &&
        seen.pos == (uint64_t)st->st_size) {
        /* only our line was added since the last read: no need to read it back */
        seen.size = now.st_size;
        seen.mtime = now.st_mtim;
        seen.pos = (uint64_t)now.st_size;
        seen.lines += 1 + (last != '\n');
    }
    return 0;
}

void xmt_cache_store(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                     const char *key_text, const xmt_choice *c)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    if (!n) return;
    rec.key_text = key_text;
    rec.choice = *c;
    char *line = xmt_cacherec_format(&rec);
    if (!line) return;
    size_t len = strlen(line);
    int lk = cache_path[0] ? take_lock(1) : -1;
    pthread_mutex_lock(&cache_lock);
    const char *what = NULL;
    if (cache_path[0]) {
        struct stat st;
        int fd = open_for_write(&what, &st);
        record_t *r = put(&rec, c, key_text ? key_text : "");
        if (r) r->checked |= device_bit(device); /* tuned here: nothing to check */
        if (fd >= 0) {
            /* within twice its live records: compaction when the next line would pass that
             * (only under a working lock: a rename under an unlocked appender loses lines) */
            int live = (int)nrecords;
            if (lk >= 0 && seen.lines + 1 > 2 * live && seen.lines + 1 > 8)
                (void)compact(&what);
            else
                (void)append(fd, &st, line, len, &what);
            close(fd);
        }
        if (lk >= 0) {
            char cn[17];
            claim_name(id, n, cn);
            xmt_cachefile_unclaim(cache_path, cn);
        }
    } else {
        record_t *r = put(&rec, c, key_text ? key_text : "");
        if (r) r->checked |= device_bit(device);
    }
    pthread_mutex_unlock(&cache_lock);
    drop_lock(lk);
    free(line);
    if (what && xmt_first_time(&write_warned))
        xmt_warn("cannot write the cache %s: %s", cache_path, what);
}

int xmt_cache_claim(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                    xmt_choice *out, int *checked)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    *checked = 0;
    if (!n || !cache_path[0]) return XMT_CACHE_TUNE;
    int lk = take_lock(1);
    pthread_mutex_lock(&cache_lock);
    int rc = XMT_CACHE_TUNE;
    int fd = open_cache(cache_path, O_RDONLY);
    struct stat st;
    int old;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) (void)refresh_fd(fd, &st, &old);
    if (fd >= 0) close(fd);
    if (find_locked(&rec, device, out, checked)) {
        rc = XMT_CACHE_FOUND;
    } else if (lk >= 0) {
        char cn[17];
        claim_name(id, n, cn);
        if (xmt_cachefile_claim(cache_path, cn) == XMT_CLAIM_THEIRS) rc = XMT_CACHE_WAIT;
    }
    pthread_mutex_unlock(&cache_lock);
    drop_lock(lk);
    return rc;
}

void xmt_cache_unclaim(const xmt_cache_id *cid, const uint8_t *key, size_t keylen)
{
    char key_hex[2 * MAX_KEY + 1], id[ID_CAP];
    xmt_cacherec rec;
    size_t n = identity_of(cid, key, keylen, key_hex, &rec, id);
    if (!n || !cache_path[0]) return;
    int lk = take_lock(1);
    if (lk < 0) return;
    char cn[17];
    claim_name(id, n, cn);
    xmt_cachefile_unclaim(cache_path, cn);
    drop_lock(lk);
}

const char *xmt_cache_path(void)
{
    return cache_path;
}

void xmt_cache_atfork(int phase)
{
    xmt_fork_mutex(&cache_lock, phase);
}

void xmt_cache_free(void)
{
    pthread_mutex_lock(&cache_lock);
    records = NULL; /* the tables, records and strings are all in the arena */
    records_tail = &records;
    slots = NULL;
    nslots = nrecords = 0;
    interned = NULL;
    memset(intern_memo, 0, sizeof intern_memo);
    while (arena) {
        arena_blk *next = arena->next;
        arena_bytes -= arena->mapped;
        munmap(arena, arena->mapped);
        arena = next;
    }
    memset(&seen, 0, sizeof seen);
    pthread_mutex_unlock(&cache_lock);
}
