/*
 * modload: the module and library images the program loads (see modload.h).
 */
#include "modload.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "logevent.h"
#include "options.h"

/* Seven load entry points exist; a few more slots cost nothing. A slot is claimed by
 * storing its entry's name (hook.c's static strings), and never given back: no lock, so
 * nothing to hold across fork(2) or at exit. */
#define MAX_ENTRIES 16

static struct {
    _Atomic(const char *) entry;
    atomic_ullong ok, failed;
} seen[MAX_ENTRIES];

void xmt_modload_seen(const char *entry, CUresult r)
{
    for (int i = 0; i < MAX_ENTRIES; i++) {
        const char *e = atomic_load_explicit(&seen[i].entry, memory_order_acquire);
        if (!e && atomic_compare_exchange_strong(&seen[i].entry, &e, entry)) e = entry;
        if (strcmp(e, entry) != 0) continue;
        atomic_fetch_add_explicit(r == CUDA_SUCCESS ? &seen[i].ok : &seen[i].failed, 1,
                                  memory_order_relaxed);
        return;
    }
}

void xmt_modload_each(void (*fn)(void *ud, const char *entry, unsigned long long ok,
                                 unsigned long long failed),
                      void *ud)
{
    for (int i = 0; i < MAX_ENTRIES; i++) {
        const char *e = atomic_load_explicit(&seen[i].entry, memory_order_acquire);
        if (!e) break;
        fn(ud, e, atomic_load(&seen[i].ok), atomic_load(&seen[i].failed));
    }
}

/* ---- kept images -------------------------------------------------------------------- */

/* No image is larger than this (the biggest library images are hundreds of MB): a header
 * that says more is not believed. */
#define IMAGE_LIMIT ((size_t)1 << 31)

typedef struct kept {
    xmt_image im;
    void *own; /* what this module allocated for the bytes: a copy or a file's contents */
    struct kept *next;
} kept_t;

static kept_t *images; /* newest first; a module's loads are few */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A file's whole contents, NUL-terminated (PTX read from a file is text); NULL if it
 * cannot be read. */
static void *read_file(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    void *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size < IMAGE_LIMIT &&
        (buf = malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, (char *)buf + got, (size_t)st.st_size - got);
            if (r <= 0) break;
            got += (size_t)r;
        }
        ((char *)buf)[got] = 0;
        *n = got;
    }
    close(fd);
    return buf;
}

/* The JIT options worth giving again: those whose value is a number. Log buffers and
 * their sizes, and the wall time the driver writes back, are the caller's memory. */
static int replayable(CUjit_option o)
{
    switch (o) {
    case CU_JIT_INFO_LOG_BUFFER:
    case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
    case CU_JIT_ERROR_LOG_BUFFER:
    case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
    case CU_JIT_WALL_TIME:
    case CU_JIT_LOG_VERBOSE: return 0;
    default: return 1;
    }
}

/* Finds the image's bytes (reading a file loaded by path) into k; keep: hold on to them
 * (a copy unless they lie inside a loaded object). 0 when they cannot be had. */
static int locate(kept_t *k, const void *image, int from_file, int keep)
{
    const void *bytes = NULL;
    size_t size = 0;
    if (from_file) {
        k->own = read_file((const char *)image, &size);
        if (!k->own) return 0;
        k->im.format = xmt_image_locate(k->own, size + 1, &bytes, &size);
        k->im.kept = "file";
    } else {
        k->im.format = xmt_image_locate(image, IMAGE_LIMIT, &bytes, &size);
        Dl_info info;
        if (k->im.format == XMT_IMAGE_UNKNOWN || !keep) {
            k->im.kept = "no";
        } else if (dladdr(bytes, &info) && info.dli_fname) {
            k->im.kept = "mapped"; /* inside a loaded object: it stays */
        } else {
            if (!(k->own = malloc(size))) return 0;
            memcpy(k->own, bytes, size);
            bytes = k->own;
            k->im.kept = "copied";
        }
    }
    k->im.bytes = bytes;
    k->im.size = size;
    return k->im.format != XMT_IMAGE_UNKNOWN && keep;
}

void xmt_modload_loaded(const char *entry, const void *owner, int library, const void *image,
                        int from_file, unsigned n, const CUjit_option *opts, void *const *vals)
{
    kept_t *k = calloc(1, sizeof *k);
    if (!k) {
        if (xmt_log_enabled()) xmt_log_event(xmt_ev_module_load(entry, "unknown", 0, "no", n));
        return;
    }
    k->im.owner = owner;
    k->im.library = library;
    for (unsigned i = 0; opts && vals && i < n && k->im.njit < 16; i++)
        if (replayable(opts[i])) {
            k->im.jit_opts[k->im.njit] = opts[i];
            k->im.jit_vals[k->im.njit++] = vals[i];
        }
    /* discover mode only says what it saw: the helper runs only for tuning */
    int keep = xmt_opt.mode == XMT_MODE_TUNE || xmt_opt.mode == XMT_MODE_REPLAY;
    int kept = locate(k, image, from_file, keep);
    if (xmt_log_enabled())
        xmt_log_event(xmt_ev_module_load(entry, xmt_image_format_name(k->im.format),
                                         k->im.format ? k->im.size : 0, kept ? k->im.kept : "no",
                                         n));
    if (!kept) {
        free(k->own);
        free(k);
        return;
    }
    pthread_mutex_lock(&lock);
    k->next = images;
    images = k;
    pthread_mutex_unlock(&lock);
}

int xmt_modload_image(const void *owner, xmt_image *out)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    for (kept_t *k = images; k; k = k->next)
        if (k->im.owner == owner) {
            *out = k->im;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

size_t xmt_modload_libraries(xmt_image *out, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (kept_t *k = images; k; k = k->next)
        if (k->im.library && n++ < cap) out[n - 1] = k->im;
    pthread_mutex_unlock(&lock);
    return n;
}

/* ---- texture and surface objects ---------------------------------------------------- */

#define TEXOBJS 4096
static unsigned long long texobjs[TEXOBJS]; /* live handles, 0 free; guarded by lock */
static atomic_int texobjs_seen;             /* any was ever made: the common case asks nothing */

void xmt_modload_texobj(unsigned long long handle, int live)
{
    if (!handle) return;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < TEXOBJS; i++)
        if (live ? !texobjs[i] : texobjs[i] == handle) {
            texobjs[i] = live ? handle : 0;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (live) atomic_store(&texobjs_seen, 1);
}

int xmt_modload_is_texobj(unsigned long long handle)
{
    if (!handle || !atomic_load(&texobjs_seen)) return 0;
    int found = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < TEXOBJS && !found; i++)
        found = texobjs[i] == handle;
    pthread_mutex_unlock(&lock);
    return found;
}

/* ---- module globals ---------------------------------------------------------------- */

typedef struct global {
    const void *owner;
    xmt_global g;
    struct global *next;
} global_t;

static global_t *globals; /* guarded by lock */
static size_t nglobals;

void xmt_modload_global(const void *owner, const char *name, CUdeviceptr dptr, size_t bytes)
{
    if (!name || strlen(name) >= sizeof((xmt_global *)0)->name ||
        (xmt_opt.mode != XMT_MODE_TUNE && xmt_opt.mode != XMT_MODE_REPLAY))
        return;
    pthread_mutex_lock(&lock);
    global_t *g = globals;
    while (g && !(g->owner == owner && !strcmp(g->g.name, name)))
        g = g->next;
    if (!g && nglobals < XMT_MODLOAD_GLOBALS && (g = calloc(1, sizeof *g))) {
        g->owner = owner;
        snprintf(g->g.name, sizeof g->g.name, "%s", name);
        g->next = globals;
        globals = g;
        nglobals++;
    }
    if (g) { /* the latest context's address */
        g->g.dptr = dptr;
        if (bytes) g->g.bytes = bytes;
    }
    pthread_mutex_unlock(&lock);
}

size_t xmt_modload_globals(const void *owner, xmt_global *out, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (global_t *g = globals; g && n < cap; g = g->next)
        if (g->owner == owner) out[n++] = g->g;
    pthread_mutex_unlock(&lock);
    return n;
}

static void forget_globals_locked(const void *owner)
{
    for (global_t **p = &globals; *p;)
        if ((*p)->owner == owner) {
            global_t *g = *p;
            *p = g->next;
            free(g);
            nglobals--;
        } else {
            p = &(*p)->next;
        }
}

void xmt_modload_forget(const void *owner)
{
    kept_t *gone = NULL;
    pthread_mutex_lock(&lock);
    forget_globals_locked(owner);
    for (kept_t **p = &images; *p; p = &(*p)->next)
        if ((*p)->im.owner == owner) {
            gone = *p;
            *p = gone->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (gone) {
        free(gone->own);
        free(gone);
    }
}

void xmt_modload_atfork(int phase)
{
    xmt_fork_mutex(&lock, phase);
}
