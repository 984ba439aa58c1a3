/*
 * discover: per-(kernel, device) launch shapes and the discovery report (see discover.h).
 */
#include "discover.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"
#include "xmt_policy.h"

/* Distinct shapes kept per kernel and device; launches beyond them are counted as
 * "other" so that a kernel launched with thousands of sizes cannot grow without bound. */
#define MAX_SHAPES 64

typedef struct {
    unsigned grid[3], block[3], shared;
    uint64_t count;
} shape_t;

struct xmt_discover {
    int device;
    unsigned paths;
    uint64_t launches, other;
    int nshapes;
    shape_t shapes[MAX_SHAPES];
    struct xmt_discover *next;
};

json_t *xmt_paths_json(unsigned paths)
{
    static const char *const names[] = {"launch", "launch_ex", "launch_ex_attrs", "cooperative",
                                        "extra"};
    json_t *a = json_array();
    for (int i = 0; i < 5; i++)
        if (paths & (1u << i)) json_array_append_new(a, json_string(names[i]));
    return a;
}

static json_t *dim3_json(const unsigned d[3])
{
    return json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
}

static void log_first_sight(const xmt_kernel *k, int device)
{
    if (!xmt_log_enabled()) return;
    json_t *params = json_array();
    for (size_t i = 0; i < k->nparams; i++)
        json_array_append_new(params, json_pack("{sIsI}", "offset", (json_int_t)k->offsets[i],
                                                "size", (json_int_t)k->sizes[i]));
    json_t *ev = json_pack("{sssssssisosbsisisi}", "event", "kernel", "kernel", k->mangled, "name",
                           k->demangled, "device", device, "params", params, "params_known",
                           k->params_known, "max_threads", k->max_threads, "static_shared",
                           k->static_shared, "max_dynamic_shared", k->max_dynamic_shared);
    if (!ev) return;
    json_object_set_new(ev, "handle", json_string(k->is_cukernel ? "CUkernel" : "CUfunction"));
    json_object_set_new(ev, "policy",
                        k->entry ? json_string(xmt_entry_origin(k->entry)) : json_null());
    xmt_log_event(ev);
}

/* Adds one shape's count to d: to an equal shape, a new one while there is room, or to
 * "other". */
static void add_shape(struct xmt_discover *d, const unsigned grid[3], const unsigned block[3],
                      unsigned shared, uint64_t count)
{
    for (int i = 0; i < d->nshapes; i++) {
        shape_t *s = &d->shapes[i];
        if (s->shared == shared && !memcmp(s->grid, grid, sizeof s->grid) &&
            !memcmp(s->block, block, sizeof s->block)) {
            s->count += count;
            return;
        }
    }
    if (d->nshapes < MAX_SHAPES) {
        shape_t *s = &d->shapes[d->nshapes++];
        memcpy(s->grid, grid, sizeof s->grid);
        memcpy(s->block, block, sizeof s->block);
        s->shared = shared;
        s->count = count;
    } else {
        d->other += count;
    }
}

/* k's shapes on one device, made if make and missing (k->lock held). */
static struct xmt_discover *device_of(xmt_kernel *k, int device, int make)
{
    struct xmt_discover *d = k->discover;
    while (d && d->device != device)
        d = d->next;
    if (!d && make && (d = calloc(1, sizeof *d))) {
        d->device = device;
        d->next = k->discover;
        k->discover = d;
    }
    return d;
}

/* A retired record's shapes go to its name's summary (kernels.c; both locks held). */
static void fold_shapes(xmt_kernel *dst, xmt_kernel *src)
{
    for (struct xmt_discover *s = src->discover; s; s = s->next) {
        struct xmt_discover *d = device_of(dst, s->device, 1);
        if (!d) return;
        d->paths |= s->paths;
        d->launches += s->launches;
        d->other += s->other;
        for (int i = 0; i < s->nshapes; i++)
            add_shape(d, s->shapes[i].grid, s->shapes[i].block, s->shapes[i].shared,
                      s->shapes[i].count);
        s->launches = s->other = 0;
        s->nshapes = 0;
    }
}

static void release_shapes(xmt_kernel *k)
{
    for (struct xmt_discover *d = k->discover, *next; d; d = next) {
        next = d->next;
        free(d);
    }
    k->discover = NULL;
}

static const xmt_kernel_parts shape_parts = {fold_shapes, release_shapes};

/* Has this kernel's name been seen on this device before, by a record since retired? */
static int seen_before(xmt_kernel *k, int device)
{
    xmt_kernel *sm = k->summary;
    if (!sm) return 0;
    pthread_mutex_lock(&sm->lock);
    int seen = device_of(sm, device, 0) != NULL;
    pthread_mutex_unlock(&sm->lock);
    return seen;
}

/* Records count launches like l of k on dev by path (takes k->lock): the shape, the
 * counts, and the kernel event at its first sight on that device. */
static void record_launch(xmt_kernel *k, const xmt_launch *l, int dev, unsigned path,
                          uint64_t count)
{
    pthread_mutex_lock(&k->lock);
    int first = device_of(k, dev, 0) == NULL;
    struct xmt_discover *d = device_of(k, dev, 1);
    if (!d) {
        pthread_mutex_unlock(&k->lock);
        return;
    }
    atomic_fetch_add_explicit(&k->launches, count, memory_order_relaxed);
    d->paths |= path;
    d->launches += count;
    add_shape(d, l->grid, l->block, l->shared, count);
    pthread_mutex_unlock(&k->lock);
    /* One kernel event per name and device: a module loaded again is no news. */
    if (first && !seen_before(k, dev)) log_first_sight(k, dev);
}

/* ---- the per-thread memo: a launch like this thread's last one of a kernel -----------
 *
 * Many threads launching one kernel would all take its k->lock at every launch, and the
 * lock's cache line would bounce between their cores (with 2 threads on 2 cores, +155 ns
 * a launch against +29 for one). So each thread remembers, per kernel (8 slots, by
 * record address), what its last launch recorded: record serial, device, path and
 * shape. A launch equal to it only counts, in the slot (no lock, no shared write); the
 * count is recorded as that many launches like it (record_launch) when the slot takes
 * another launch, at thread exit and before the exit report. (Whatever else is recorded
 * per launch must be in the slot too, and compared.) */
#define MEMO_SLOTS 8
typedef struct {
    xmt_kernel *k;
    uint64_t serial; /* k's incarnation (kernels.h): a reused struct is another kernel */
    int device;
    unsigned path;
    unsigned grid[3], block[3], shared;
    _Atomic uint64_t pending; /* launches like this one, not yet recorded */
} memo_t;
typedef struct memo_block {
    memo_t slots[MEMO_SLOTS];
    pthread_mutex_t lock; /* its owner's slot changes against a flush by another thread */
    struct memo_block *next;
} memo_block;
static __thread memo_block *tls_memo __attribute__((tls_model("initial-exec")));
static memo_block *memo_blocks; /* every live thread's, for the flush before the report */
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t memo_key;
static pthread_once_t memo_key_once = PTHREAD_ONCE_INIT;
static int memo_key_ok;

/* Records a slot's pending launches (its block's lock held). A retired record's go to its
 * summary; a reused struct's are another kernel's, and are dropped. */
static void memo_flush(memo_t *m)
{
    uint64_t n = atomic_exchange_explicit(&m->pending, 0, memory_order_relaxed);
    xmt_kernel *k = m->k;
    if (!n || !k || atomic_load_explicit(&k->serial, memory_order_acquire) != m->serial) return;
    xmt_kernel *to = atomic_load_explicit(&k->retired_to, memory_order_acquire);
    if (to) k = to;
    xmt_launch l = {XMT_K_LAUNCH,
                    0,
                    NULL,
                    NULL,
                    {m->grid[0], m->grid[1], m->grid[2]},
                    {m->block[0], m->block[1], m->block[2]},
                    m->shared,
                    NULL,
                    NULL,
                    NULL,
                    NULL};
    record_launch(k, &l, m->device, m->path, n);
}

static void memo_flush_block(memo_block *b)
{
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < MEMO_SLOTS; i++)
        memo_flush(&b->slots[i]);
    pthread_mutex_unlock(&b->lock);
}

/* At thread exit: the thread's pending launches are recorded, its block freed. */
static void memo_release(void *p)
{
    memo_block *b = p;
    pthread_mutex_lock(&memo_lock);
    memo_flush_block(b);
    for (memo_block **q = &memo_blocks; *q; q = &(*q)->next)
        if (*q == b) {
            *q = b->next;
            break;
        }
    pthread_mutex_unlock(&memo_lock);
    tls_memo = NULL;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

static void memo_key_create(void)
{
    memo_key_ok = pthread_key_create(&memo_key, memo_release) == 0;
}

/* This thread's slot for k, its block made at the thread's first launch; NULL when it
 * cannot be (then nothing is memoized). */
static memo_t *memo_slot(const xmt_kernel *k)
{
    memo_block *b = tls_memo;
    if (__builtin_expect(!b, 0)) {
        pthread_once(&memo_key_once, memo_key_create);
        if (!memo_key_ok) return NULL;
        b = aligned_alloc(64, (sizeof *b + 63) / 64 * 64); /* no line shared */
        if (!b) return NULL;
        memset(b, 0, sizeof *b);
        pthread_mutex_init(&b->lock, NULL);
        if (pthread_setspecific(memo_key, b) != 0) {
            pthread_mutex_destroy(&b->lock);
            free(b);
            return NULL;
        }
        pthread_mutex_lock(&memo_lock);
        b->next = memo_blocks;
        memo_blocks = b;
        pthread_mutex_unlock(&memo_lock);
        tls_memo = b;
    }
    return &b->slots[((uintptr_t)k >> 6) % MEMO_SLOTS];
}

/* Is l the launch the slot remembers? */
static inline int memo_hit(const memo_t *m, const xmt_kernel *k, int dev, unsigned path,
                           const xmt_launch *l)
{
    if (m->k != k || m->serial != atomic_load_explicit(&k->serial, memory_order_relaxed) ||
        m->device != dev || m->path != path || m->shared != l->shared || m->grid[0] != l->grid[0] ||
        m->grid[1] != l->grid[1] || m->grid[2] != l->grid[2] || m->block[0] != l->block[0] ||
        m->block[1] != l->block[1] || m->block[2] != l->block[2])
        return 0;
    return 1;
}

/* The slot takes l (just recorded): the launches it held are recorded first. */
static void memo_take(memo_t *m, xmt_kernel *k, int dev, unsigned path, const xmt_launch *l)
{
    memo_block *b = tls_memo;
    pthread_mutex_lock(&b->lock);
    memo_flush(m);
    m->device = dev;
    m->path = path;
    memcpy(m->grid, l->grid, sizeof m->grid);
    memcpy(m->block, l->block, sizeof m->block);
    m->shared = l->shared;
    m->serial = atomic_load_explicit(&k->serial, memory_order_relaxed);
    m->k = k;
    pthread_mutex_unlock(&b->lock);
}

void xmt_discover_flush_counts(void)
{
    pthread_mutex_lock(&memo_lock);
    for (memo_block *b = memo_blocks; b; b = b->next)
        memo_flush_block(b);
    pthread_mutex_unlock(&memo_lock);
}

void xmt_discover_atfork(int phase)
{
    /* memo_lock first, then every block's (the order of a flush); the child drops its
     * parent's pending launches: its report counts its own. */
    if (phase == XMT_FORK_PREPARE) pthread_mutex_lock(&memo_lock);
    for (memo_block *b = memo_blocks; b; b = b->next) {
        if (phase == XMT_FORK_CHILD)
            for (int i = 0; i < MEMO_SLOTS; i++)
                atomic_store_explicit(&b->slots[i].pending, 0, memory_order_relaxed);
        xmt_fork_mutex(&b->lock, phase);
    }
    if (phase != XMT_FORK_PREPARE) pthread_mutex_unlock(&memo_lock);
}

void xmt_discover_record(xmt_kernel *k, const xmt_launch *l)
{
    CUdevice dev = -1;
    XMT_IN_SHIM_SCOPE
    {
        if (xmt_drv.cuCtxGetDevice && xmt_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS) dev = -1;
    }

    unsigned path = l->kind == XMT_K_COOP ? XMT_PATH_COOP
                    : l->kind == XMT_K_EX
                        ? (xmt_launch_has_blocking_attrs(l->cfg) ? XMT_PATH_EX_ATTRS : XMT_PATH_EX)
                        : XMT_PATH_LAUNCH;
    if (l->extra) path |= XMT_PATH_EXTRA;

    static atomic_int registered;
    if (!atomic_load_explicit(&registered, memory_order_acquire)) {
        xmt_kernels_add_parts(&shape_parts);
        atomic_store_explicit(&registered, 1, memory_order_release);
    }
    memo_t *m = memo_slot(k);
    if (m && memo_hit(m, k, (int)dev, path, l)) {
        /* only this thread writes its slot's count (a flush by another thread exchanges it) */
        atomic_store_explicit(&m->pending,
                              atomic_load_explicit(&m->pending, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return;
    }
    record_launch(k, l, (int)dev, path, 1);
    if (m) memo_take(m, k, (int)dev, path, l);
}

int xmt_discover_report(xmt_kernel *k, FILE *table)
{
    int n = 0;
    pthread_mutex_lock(&k->lock);
    for (struct xmt_discover *d = k->discover; d; d = d->next, n++) {
        if (xmt_log_enabled()) {
            json_t *shapes = json_array();
            for (int i = 0; i < d->nshapes; i++) {
                const shape_t *s = &d->shapes[i];
                json_array_append_new(shapes, json_pack("{sosos I sI}", "grid", dim3_json(s->grid),
                                                        "block", dim3_json(s->block), "shared",
                                                        (json_int_t)s->shared, "count",
                                                        (json_int_t)s->count));
            }
            unsigned rewritable = XMT_PATH_LAUNCH | XMT_PATH_EX | XMT_PATH_EXTRA;
            json_t *ev = json_pack("{sssssssisIsIsIsosososb}", "event", "kernel_summary", "kernel",
                                   k->mangled, "name", k->demangled, "device", d->device,
                                   "launches", (json_int_t)d->launches, "rewritten", (json_int_t)0,
                                   "passed_through", (json_int_t)d->launches, "paths",
                                   xmt_paths_json(d->paths), "shapes", shapes, "policy",
                                   k->entry ? json_string(xmt_entry_origin(k->entry)) : json_null(),
                                   "rewritable", (d->paths & ~rewritable) == 0);
            if (ev && d->other)
                json_object_set_new(ev, "other_shapes", json_integer((json_int_t)d->other));
            xmt_log_event(ev);
        }
        if (table) {
            const char *origin = k->entry ? xmt_entry_origin(k->entry) : "-";
            const char *slash = strrchr(origin, '/');
            fprintf(table, "xmatune: %10llu %6d %4d  %-20.20s %s%s\n",
                    (unsigned long long)d->launches, d->nshapes + (d->other ? 1 : 0), d->device,
                    slash ? slash + 1 : origin, k->demangled,
                    (d->paths & (XMT_PATH_COOP | XMT_PATH_EX_ATTRS)) ? "  [not rewritable]" : "");
        }
    }
    pthread_mutex_unlock(&k->lock);
    return n;
}
