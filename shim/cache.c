/*
 * cache: the on-disk cache of winners (see cache.h).
 */
#include "cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

#include "cacherec.h"
#include "log.h"
#include "options.h"

typedef struct {
    char *id; /* device \x1f kernel \x1f entry \x1f hex key */
    xmt_choice choice;
    UT_hash_handle hh;
} record_t;

static record_t *records;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Inserts or replaces; takes ownership of id. Called with cache_lock held. */
static void put(char *id, const xmt_choice *c)
{
    record_t *r = NULL;
    HASH_FIND_STR(records, id, r);
    if (r) {
        r->choice = *c;
        free(id);
        return;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        free(id);
        return;
    }
    r->id = id;
    r->choice = *c;
    HASH_ADD_KEYPTR(hh, records, r->id, strlen(r->id), r);
}

static void load_one(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    char *id = xmt_cacherec_identity(r->device, r->kernel, r->entry, r->key_hex);
    if (id) put(id, &r->choice);
}

void xmt_cache_load(void)
{
    if (!xmt_opt.cache[0]) return;
    char path[XMT_PATH_MAX];
    if (xmt_expand_path(xmt_opt.cache, path, sizeof path) != 0) return;
    if (access(path, F_OK) != 0) return;
    pthread_mutex_lock(&cache_lock);
    int bad = xmt_cacherec_read(path, load_one, NULL);
    pthread_mutex_unlock(&cache_lock);
    if (bad < 0)
        xmt_warn("cannot read the cache %s: %m", path);
    else if (bad > 0)
        xmt_warn("%s: %d line(s) are not cache records and were skipped", path, bad);
}

int xmt_cache_find(const char *device, const char *kernel, const char *entry, const uint8_t *key,
                   size_t keylen, xmt_choice *out)
{
    char key_hex[2 * 512 + 1];
    if (keylen > 512) return 0;
    xmt_cacherec_hex(key, keylen, key_hex);
    char *id = xmt_cacherec_identity(device, kernel, entry, key_hex);
    if (!id) return 0;
    pthread_mutex_lock(&cache_lock);
    record_t *r = NULL;
    HASH_FIND_STR(records, id, r);
    if (r) *out = r->choice;
    pthread_mutex_unlock(&cache_lock);
    free(id);
    return r != NULL;
}

void xmt_cache_store(const char *device, const char *kernel, const char *entry, const uint8_t *key,
                     size_t keylen, const char *key_text, const xmt_choice *c)
{
    char key_hex[2 * 512 + 1];
    if (keylen > 512) return;
    xmt_cacherec_hex(key, keylen, key_hex);
    char *id = xmt_cacherec_identity(device, kernel, entry, key_hex);
    if (!id) return;
    pthread_mutex_lock(&cache_lock);
    put(id, c);
    pthread_mutex_unlock(&cache_lock);
    if (!xmt_opt.cache[0]) return;
    char path[XMT_PATH_MAX];
    if (xmt_expand_path(xmt_opt.cache, path, sizeof path) != 0) return;
    xmt_cacherec rec = {device, kernel, entry, key_hex, key_text, *c};
    char *line = xmt_cacherec_format(&rec);
    if (!line) return;
    size_t len = strlen(line) - 1;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    static atomic_int warned; /* stores come from any tuning thread */
    if (fd < 0 || write(fd, line, len + 1) != (ssize_t)(len + 1)) {
        if (xmt_first_time(&warned)) xmt_warn("cannot write the cache %s: %m", path);
    }
    if (fd >= 0) close(fd);
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
