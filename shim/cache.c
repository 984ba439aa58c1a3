/*
 * cache: the on-disk cache of winners (see cache.h).
 */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#include "cacherec.h"
#include "log.h"
#include "options.h"

typedef struct {
    char *id; /* the record's identity (xmt_cacherec_identity) */
    xmt_choice choice;
    uint64_t checked; /* bit d: verified (or tuned) on device ordinal d in this process */
    UT_hash_handle hh;
} record_t;

static record_t *records;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Inserts or replaces; takes ownership of id. Called with cache_lock held. Returns the
 * record, NULL when out of memory. */
static record_t *put(char *id, const xmt_choice *c)
{
    record_t *r = NULL;
    HASH_FIND_STR(records, id, r);
    if (r) {
        if (r->choice.index != c->index || strcmp(r->choice.label, c->label)) r->checked = 0;
        r->choice = *c;
        free(id);
        return r;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        free(id);
        return NULL;
    }
    r->id = id;
    r->choice = *c;
    HASH_ADD_KEYPTR(hh, records, r->id, strlen(r->id), r);
    return r;
}

static uint64_t device_bit(int device)
{
    return device >= 0 && device < 64 ? 1ull << device : 0;
}

static void load_one(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    char *id = xmt_cacherec_identity(r);
    if (id) put(id, &r->choice);
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

void xmt_cache_load(void)
{
    char path[XMT_PATH_MAX];
    cache_path[0] = 0;
    if (!xmt_opt.cache[0] || xmt_expand_path(xmt_opt.cache, path, sizeof path) != 0) return;
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
    int old = 0;
    pthread_mutex_lock(&cache_lock);
    int bad = xmt_cacherec_read_fd(fd, load_one, NULL, &old);
    pthread_mutex_unlock(&cache_lock);
    close(fd);
    if (bad < 0)
        xmt_warn("cannot read the cache %s: %m", cache_path);
    else if (bad > 0)
        xmt_warn("%s: %d line(s) are not cache records and were skipped", cache_path, bad);
    if (old > 0)
        xmt_warn("%s: %d record(s) of an older format were dropped (those keys are tuned again)",
                 cache_path, old);
}

#define MAX_KEY 512 /* bytes of binary key a record may have */

/* The record of id and key (its strings pointing into key_hex and id) and its identity,
 * malloc'd; NULL when the key is too long or out of memory. */
static char *identity_of(const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                         char key_hex[2 * MAX_KEY + 1], xmt_cacherec *rec)
{
    if (keylen > MAX_KEY) return NULL;
    xmt_cacherec_hex(key, keylen, key_hex);
    *rec =
        (xmt_cacherec){id->device, id->kernel, id->code, id->entry, id->entry_fp, key_hex, "", {0}, NULL, 0};
    return xmt_cacherec_identity(rec);
}

int xmt_cache_find(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                   xmt_choice *out, int *checked)
{
    char key_hex[2 * MAX_KEY + 1];
    xmt_cacherec rec;
    char *id = identity_of(cid, key, keylen, key_hex, &rec);
    *checked = 0;
    if (!id) return 0;
    pthread_mutex_lock(&cache_lock);
    record_t *r = NULL;
    HASH_FIND_STR(records, id, r);
    if (r) {
        *out = r->choice;
        *checked = (r->checked & device_bit(device)) != 0;
    }
    pthread_mutex_unlock(&cache_lock);
    free(id);
    return r != NULL;
}

void xmt_cache_checked(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device)
{
    char key_hex[2 * MAX_KEY + 1];
    xmt_cacherec rec;
    char *id = identity_of(cid, key, keylen, key_hex, &rec);
    if (!id) return;
    pthread_mutex_lock(&cache_lock);
    record_t *r = NULL;
    HASH_FIND_STR(records, id, r);
    if (r) r->checked |= device_bit(device);
    pthread_mutex_unlock(&cache_lock);
    free(id);
}

/* Appends one line; a line a killed writer left unfinished is ended first, so that the
 * new record is never glued to it. */
static void append(const char *line, size_t len)
{
    static atomic_int warned; /* stores come from any tuning thread */
    int fd = open_cache(cache_path, O_RDWR | O_CREAT | O_APPEND); /* read: its last byte */
    char last = '\n';
    const char *what = NULL;
    if (fd < 0) {
        what = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
    } else {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            what = "not a regular file";
        } else {
            if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1) last = '\n';
            if (last != '\n' && write(fd, "\n", 1) != 1) what = strerror(errno);
            ssize_t w = what ? -1 : write(fd, line, len);
            if (!what && w < 0) what = strerror(errno);
            if (!what && (size_t)w != len) what = "short write (the disk may be full)";
        }
    }
    if (what && xmt_first_time(&warned))
        xmt_warn("cannot write the cache %s: %s", cache_path, what);
    if (fd >= 0) close(fd);
}

void xmt_cache_store(const xmt_cache_id *cid, const uint8_t *key, size_t keylen, int device,
                     const char *key_text, const xmt_choice *c)
{
    char key_hex[2 * MAX_KEY + 1];
    xmt_cacherec rec;
    char *id = identity_of(cid, key, keylen, key_hex, &rec);
    if (!id) return;
    rec.key_text = key_text;
    rec.choice = *c;
    pthread_mutex_lock(&cache_lock);
    record_t *r = put(id, c);
    if (r) r->checked |= device_bit(device); /* tuned here: nothing to check */
    pthread_mutex_unlock(&cache_lock);
    if (!cache_path[0]) return;
    char *line = xmt_cacherec_format(&rec);
    if (!line) return;
    append(line, strlen(line));
    free(line);
}

void xmt_cache_atfork(int phase)
{
    xmt_fork_mutex(&cache_lock, phase);
}

void xmt_cache_free(void)
{
    pthread_mutex_lock(&cache_lock);
    record_t *r, *tmp;
    HASH_ITER(hh, records, r, tmp)
    {
        HASH_DEL(records, r);
        free(r->id);
        free(r);
    }
    pthread_mutex_unlock(&cache_lock);
}
