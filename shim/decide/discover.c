/*
 * discover: per-(kernel, device) launch shapes and the discovery report (see discover.h).
 */
#include "discover.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "launch.h"
#include "log.h"
#include "logevent.h"
#include "protect.h"
#include "tls.h"
#include "xmt_policy.h"

/* Distinct shapes kept per kernel and device; launches beyond them are counted as
 * "other" so that a kernel launched with thousands of sizes cannot grow without bound. */
#define MAX_SHAPES 64

typedef struct {
    unsigned grid[3], block[3], shared;
    uint64_t count;
} shape_t;

/* Distinct launches (shape and scalar argument values) kept per kernel and device, and
 * how many scalar parameters are looked at: a small fixed table inside the record, so that
 * a launch costs a few loads and at most MAX_ARGSETS compares, and never an allocation;
 * launches that find neither their set nor room are only counted. */
#define MAX_ARGSETS 16
#define MAX_SCALARS 16

typedef struct {
    unsigned grid[3], block[3], shared;
    int shape;    /* its index in shapes[], or -1 when its shape went to "other" */
    uint16_t ptr; /* bit j: v[j] (an untyped 8-byte argument) is memory the driver knows: a
                     pointer, whose address is no part of the set (two launches differing
                     only there are the same set) */
    int64_t v[MAX_SCALARS];
    uint64_t count;
} argset_t;

/* The paths whose launches are never rewritten (binding attributes, cooperative). */
#define NOT_REWRITABLE (XMT_PATH_COOP | XMT_PATH_EX_ATTRS)

struct xmt_discover {
    int device;
    unsigned paths;
    uint64_t launches, other;
    uint64_t fixed;          /* of launches, those through a path no rewrite may touch */
    uint64_t graph_launches; /* made by graph replays (graph.c), apart from launches */
    int nshapes;
    shape_t shapes[MAX_SHAPES];
    /* scalar parameters recorded: their indices and sizes, of nparams (a summary's record
     * has no layout of its own: these come with the records folded into it) */
    size_t nparams;
    int nscalars;
    uint16_t scalar[MAX_SCALARS];
    uint8_t ssize[MAX_SCALARS];
    uint16_t probe;     /* bit j: scalar j is an untyped 8-byte parameter, asked of the driver */
    int nargsets, last; /* last: the set the previous launch matched (most repeat it) */
    uint64_t other_args;
    argset_t argsets[MAX_ARGSETS];
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

/* The index of a shape in d, or -1. */
static int find_shape(const struct xmt_discover *d, const unsigned grid[3], const unsigned block[3],
                      unsigned shared)
{
    for (int i = 0; i < d->nshapes; i++) {
        const shape_t *s = &d->shapes[i];
        if (s->shared == shared && !memcmp(s->grid, grid, sizeof s->grid) &&
            !memcmp(s->block, block, sizeof s->block))
            return i;
    }
    return -1;
}

/* Adds one shape's count to d: to an equal shape, a new one while there is room, or to
 * "other". Returns its index, or -1 for "other". */
static int add_shape(struct xmt_discover *d, const unsigned grid[3], const unsigned block[3],
                     unsigned shared, uint64_t count)
{
    int i = find_shape(d, grid, block, shared);
    if (i >= 0) {
        d->shapes[i].count += count;
        return i;
    }
    if (d->nshapes < MAX_SHAPES) {
        shape_t *s = &d->shapes[d->nshapes];
        memcpy(s->grid, grid, sizeof s->grid);
        memcpy(s->block, block, sizeof s->block);
        s->shared = shared;
        s->count = count;
        return d->nshapes++;
    }
    d->other += count;
    return -1;
}

/* Which parameters discover records the values of: those of 8 bytes or less that the
 * signature (as xmt_sig_read classes it) says are integers or floats, not pointers,
 * references, function pointers or structs (a small struct may hold a pointer: PyTorch's
 * std::array<char*, 1>); without a signature (extern "C", Triton), those of 1, 2, 4 and 8
 * bytes, an 8-byte one marked to be asked of the driver (xmt_protect_driver_knows, the
 * question protect: auto asks): memory it knows is recorded as a pointer, anything else
 * (a CuPy kernel's 64-bit size) as its value. Of MAX_SCALARS slots, the untyped 8-byte
 * ones take what the others leave (a Triton kernel's many pointers do not crowd out its
 * sizes). Cold: once per kernel and device. */
static void pick_scalars(const xmt_kernel *k, struct xmt_discover *d)
{
    d->nscalars = 0;
    d->probe = 0;
    d->nparams = k->params_known ? k->nparams : 0;
    if (!k->params_known || !k->nparams || k->nparams > XMT_KERNEL_MAX_PARAMS) return;
    xmt_sig sig;
    xmt_sig_param p[XMT_KERNEL_MAX_PARAMS];
    uint8_t kind[XMT_KERNEL_MAX_PARAMS] = {0}; /* 1 a scalar, 2 an untyped 8-byte one */
    int typed = xmt_sig_read(k->demangled, &sig, p, XMT_KERNEL_MAX_PARAMS) == (int)k->nparams;
    int others = 0;
    for (size_t i = 0; i < k->nparams; i++) {
        uint32_t sz = k->sizes[i];
        if (sz != 1 && sz != 2 && sz != 4 && sz != 8) continue;
        if (typed && p[i].cls != XMT_SIG_INT && p[i].cls != XMT_SIG_FLOAT) continue;
        kind[i] = sz == 8 && !typed ? 2 : 1;
        others += kind[i] == 1;
    }
    int room8 = others < MAX_SCALARS ? MAX_SCALARS - others : 0;
    for (size_t i = 0; i < k->nparams && d->nscalars < MAX_SCALARS; i++) {
        if (!kind[i] || (kind[i] == 2 && room8-- <= 0)) continue;
        if (kind[i] == 2) d->probe |= (uint16_t)(1u << d->nscalars);
        d->scalar[d->nscalars] = (uint16_t)i;
        d->ssize[d->nscalars++] = (uint8_t)k->sizes[i];
    }
}

/* k's record of a device it has none of yet (k->lock held; cold). NULL: out of memory. */
static __attribute__((noinline, cold)) struct xmt_discover *new_device(xmt_kernel *k, int device)
{
    struct xmt_discover *d = calloc(1, sizeof *d);
    if (d) {
        d->device = device;
        pick_scalars(k, d);
        d->next = k->discover;
        k->discover = d;
    }
    return d;
}

/* k's shapes on one device, made if make and missing (k->lock held). */
static inline struct xmt_discover *device_of(xmt_kernel *k, int device, int make)
{
    struct xmt_discover *d = k->discover;
    while (d && d->device != device)
        d = d->next;
    return d || !make ? d : new_device(k, device);
}

/* The same set: dims, which arguments are pointers, and the values of the others. */
static inline int same_args(const argset_t *s, const argset_t *a, int n)
{
    if (s->grid[0] != a->grid[0] || s->block[0] != a->block[0] || s->grid[1] != a->grid[1] ||
        s->grid[2] != a->grid[2] || s->block[1] != a->block[1] || s->block[2] != a->block[2] ||
        s->shared != a->shared || s->ptr != a->ptr)
        return 0;
    for (int j = 0; j < n; j++)
        if (s->v[j] != a->v[j] && !(s->ptr & (1u << j))) return 0;
    return 1;
}

/* The set of d equal to a (the previous launch's first), or -1. */
static inline int find_argset(struct xmt_discover *d, const argset_t *a)
{
    if (d->last < d->nargsets && same_args(&d->argsets[d->last], a, d->nscalars)) return d->last;
    for (int i = 0; i < d->nargsets; i++)
        if (same_args(&d->argsets[i], a, d->nscalars)) return d->last = i;
    return -1;
}

/* Adds a set that find_argset did not find, with its shape's index, while there is room;
 * else counts it as "other". */
static void new_argset(struct xmt_discover *d, const argset_t *a, int shape, uint64_t count)
{
    if (d->nargsets < MAX_ARGSETS) {
        argset_t *s = &d->argsets[d->nargsets];
        memcpy(s, a, offsetof(argset_t, v) + sizeof a->v[0] * (size_t)d->nscalars);
        s->shape = shape;
        s->count = count;
        d->last = d->nargsets++;
    } else {
        d->other_args += count;
    }
}

/* The launch's scalar argument values, where the program put them (kernelParams, or the
 * packed `extra` buffer), sign-extended from their size. 0, or -1 when they cannot be
 * read (a: shape only). Per launch: a few loads per scalar, nothing else. */
typedef struct {
    int n;
    uint16_t scalar[MAX_SCALARS];
    uint8_t ssize[MAX_SCALARS];
    uint16_t probe; /* as struct xmt_discover's */
} layout_t;

static inline int read_args(const xmt_kernel *k, const layout_t *d, const xmt_launch *l,
                            argset_t *a)
{
    /* only what same_args and new_argset read: no memset of the whole set per launch */
    memcpy(a->grid, l->grid, sizeof a->grid);
    memcpy(a->block, l->block, sizeof a->block);
    a->shared = l->shared;
    a->ptr = 0; /* classify() says which are pointers */
    uint8_t *buf = NULL;
    size_t size = 0;
    void **params = l->params;
    if (!params && (!l->extra || xmt_extra_buffer(l->extra, &buf, &size) != 0)) return -1;
    for (int j = 0; j < d->n; j++) {
        size_t i = d->scalar[j];
        const void *p = params ? params[i] : buf + k->offsets[i];
        if (!p || (!params && k->offsets[i] + k->sizes[i] > size)) return -1;
        int64_t v;
        switch (d->ssize[j]) {
        case 1: {
            uint8_t x; /* sign-extended by hand (a char's sign is not its value's) */
            memcpy(&x, p, 1);
            v = (int64_t)x - (x & 0x80 ? 256 : 0);
            break;
        }
        case 2: {
            int16_t x;
            memcpy(&x, p, 2);
            v = x;
            break;
        }
        case 4: {
            int32_t x;
            memcpy(&x, p, 4);
            v = x;
            break;
        }
        default: memcpy(&v, p, 8);
        }
        a->v[j] = v;
    }
    return 0;
}

/* Marks in a->ptr the untyped 8-byte arguments that are memory the driver knows (one driver
 * call each, the question protect: auto asks). Only where read_args read a new set: a
 * launch the thread's memo takes for its previous one is not asked again. */
static void classify(const layout_t *d, argset_t *a)
{
    if (!d->probe) return;
    XMT_IN_SHIM_SCOPE
    {
        for (int j = 0; j < d->n; j++)
            if ((d->probe & (1u << j)) && xmt_protect_driver_knows((CUdeviceptr)a->v[j], NULL))
                a->ptr |= (uint16_t)(1u << j);
    }
}

/* A retired record's shapes go to its name's summary (kernels.c; both locks held). */
static void fold_shapes(xmt_kernel *dst, xmt_kernel *src)
{
    for (struct xmt_discover *s = src->discover; s; s = s->next) {
        struct xmt_discover *d = device_of(dst, s->device, 0);
        if (!d && (d = new_device(dst, s->device))) {
            /* the summary's first: the layout of the record folded into it */
            d->nparams = s->nparams;
            d->nscalars = s->nscalars;
            d->probe = s->probe;
            memcpy(d->scalar, s->scalar, sizeof d->scalar);
            memcpy(d->ssize, s->ssize, sizeof d->ssize);
        }
        if (!d) return;
        d->paths |= s->paths;
        d->launches += s->launches;
        d->fixed += s->fixed;
        d->graph_launches += s->graph_launches;
        d->other += s->other;
        for (int i = 0; i < s->nshapes; i++)
            add_shape(d, s->shapes[i].grid, s->shapes[i].block, s->shapes[i].shared,
                      s->shapes[i].count);
        /* the same name, the same layout: the sets go together (else only counted) */
        int same = d->nparams == s->nparams && d->nscalars == s->nscalars && d->probe == s->probe &&
                   !memcmp(d->scalar, s->scalar, sizeof d->scalar[0] * (size_t)d->nscalars);
        for (int i = 0; i < s->nargsets; i++) {
            const argset_t *a = &s->argsets[i];
            int at = same ? find_argset(d, a) : -1;
            if (at >= 0)
                d->argsets[at].count += a->count;
            else if (same)
                new_argset(d, a, find_shape(d, a->grid, a->block, a->shared), a->count);
            else
                d->other_args += a->count;
        }
        d->other_args += s->other_args;
        s->launches = s->fixed = s->other = s->other_args = s->graph_launches = 0;
        s->nshapes = s->nargsets = 0;
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

static void layout_of(const struct xmt_discover *d, layout_t *out)
{
    out->n = d->nscalars;
    out->probe = d->probe;
    memcpy(out->scalar, d->scalar, sizeof out->scalar);
    memcpy(out->ssize, d->ssize, sizeof out->ssize);
}

/* Records count launches like l of k on dev by path (takes k->lock): the counts, the
 * argument set (with its shape), and the kernel event at its first sight on that device.
 * *readable < 0: the values are read here from l into *a (then *readable says whether they
 * could be, and *lay gets the record's layout, when lay is not NULL); else *a holds them
 * already (a memo's), read or not. */
static void record_launch(xmt_kernel *k, const xmt_launch *l, int dev, unsigned path,
                          uint64_t count, argset_t *a, int *readable, layout_t *lay)
{
    if (*readable < 0) { /* the dims, whatever else can be read */
        memcpy(a->grid, l->grid, sizeof a->grid);
        memcpy(a->block, l->block, sizeof a->block);
        a->shared = l->shared;
        a->ptr = 0;
    }
    pthread_mutex_lock(&k->lock);
    int first = device_of(k, dev, 0) == NULL;
    struct xmt_discover *d = device_of(k, dev, 1);
    if (!d) {
        pthread_mutex_unlock(&k->lock);
        if (*readable < 0) *readable = 0;
        return;
    }
    if (*readable < 0) {
        layout_t own;
        layout_of(d, lay ? lay : &own);
        *readable = read_args(k, lay ? lay : &own, l, a) == 0;
        /* (the driver asked under k->lock: only at a launch unlike the thread's last) */
        if (*readable) classify(lay ? lay : &own, a);
    }
    atomic_fetch_add_explicit(&k->launches, count, memory_order_relaxed);
    d->paths |= path;
    d->launches += count;
    if (path & NOT_REWRITABLE) d->fixed += count;
    /* A launch like an earlier one (the usual case) finds its set, which knows its shape:
     * two counts, no search of the shapes. */
    int at = *readable ? find_argset(d, a) : -1;
    if (at >= 0) {
        argset_t *s = &d->argsets[at];
        s->count += count;
        if (s->shape >= 0)
            d->shapes[s->shape].count += count;
        else
            d->other += count;
    } else {
        int shape = add_shape(d, a->grid, a->block, a->shared, count);
        if (*readable)
            new_argset(d, a, shape, count);
        else
            d->other_args += count;
    }
    pthread_mutex_unlock(&k->lock);
    /* One kernel event per name and device: a module loaded again is no news. */
    if (first && !seen_before(k, dev)) xmt_kernel_log_event(k, dev);
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
    int readable;             /* the values in a could be read */
    argset_t a;               /* the launch: dims and scalar argument values */
    layout_t lay;             /* which parameters are the scalars (the record's, copied) */
    _Atomic uint64_t pending; /* launches like this one, not yet recorded */
} memo_t;
typedef struct memo_block {
    memo_t slots[MEMO_SLOTS];
    pthread_mutex_t lock; /* its owner's slot changes against a flush by another thread */
    struct memo_block *next;
} memo_block;
static __thread memo_block *tls_memo __attribute__((tls_model("initial-exec")));
static void memo_init(void *p);
static void memo_release(void *p);
/* Every live thread's block, for the flush before the report; each freed at its thread's
 * exit (memo_release), after its pending launches are recorded. */
static xmt_tls_list memo_blocks = XMT_TLS_LIST(memo_block, next, memo_init, memo_release);

/* Records a slot's pending launches (its block's lock held). A retired record's go to its
 * summary; a reused struct's are another kernel's, and are dropped. */
static void memo_flush(memo_t *m)
{
    uint64_t n = atomic_exchange_explicit(&m->pending, 0, memory_order_relaxed);
    xmt_kernel *k = m->k;
    if (!n || !k || atomic_load_explicit(&k->serial, memory_order_acquire) != m->serial) return;
    xmt_kernel *to = atomic_load_explicit(&k->retired_to, memory_order_acquire);
    if (to) k = to;
    xmt_launch l = {XMT_K_LAUNCH, 0, NULL, NULL, {0, 0, 0}, {0, 0, 0}, 0, NULL, NULL, NULL, NULL};
    int readable = m->readable;
    record_launch(k, &l, m->device, m->path, n, &m->a, &readable, NULL);
}

static void memo_flush_block(void *p)
{
    memo_block *b = p;
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < MEMO_SLOTS; i++)
        memo_flush(&b->slots[i]);
    pthread_mutex_unlock(&b->lock);
}

static void memo_init(void *p)
{
    memo_block *b = p;
    pthread_mutex_init(&b->lock, NULL);
}

/* At thread exit: the thread's pending launches are recorded, its block freed. */
static void memo_release(void *p)
{
    memo_block *b = p;
    xmt_tls_unlist(&memo_blocks, b, memo_flush_block);
    tls_memo = NULL;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* This thread's slot for k, its block made at the thread's first launch; NULL when it
 * cannot be (then nothing is memoized). */
static memo_t *memo_slot(const xmt_kernel *k)
{
    memo_block *b = tls_memo;
    if (__builtin_expect(!b, 0)) {
        b = xmt_tls_new(&memo_blocks);
        if (!b) return NULL;
        tls_memo = b;
    }
    return &b->slots[((uintptr_t)k >> 6) % MEMO_SLOTS];
}

/* Is l the launch the slot remembers: the same record, device, path, dims and scalar
 * argument values (read with the slot's copy of the record's layout, no lock)? Where the
 * remembered launch had a pointer (an untyped 8-byte argument the driver knew), any
 * address but 0 is taken for one again without asking the driver: a program passes
 * new buffers every launch, and the memo exists to keep the launch path free of calls. */
static inline int memo_hit(const memo_t *m, const xmt_kernel *k, int dev, unsigned path,
                           const xmt_launch *l)
{
    if (m->k != k || m->serial != atomic_load_explicit(&k->serial, memory_order_relaxed) ||
        m->device != dev || m->path != path)
        return 0;
    argset_t a;
    int readable = read_args(k, &m->lay, l, &a) == 0;
    if (!readable) {
        memcpy(a.grid, l->grid, sizeof a.grid);
        memcpy(a.block, l->block, sizeof a.block);
        a.shared = l->shared;
    }
    a.ptr = m->a.ptr;
    if (readable != m->readable || !same_args(&m->a, &a, 0)) return 0;
    for (int j = 0; readable && j < m->lay.n; j++)
        if ((a.ptr >> j) & 1u ? !a.v[j] : a.v[j] != m->a.v[j]) return 0;
    return 1;
}

/* The slot takes a launch just recorded (its set in a): the launches it held are
 * recorded first. */
static void memo_take(memo_t *m, xmt_kernel *k, int dev, unsigned path, const argset_t *a,
                      int readable, const layout_t *lay)
{
    memo_block *b = tls_memo;
    pthread_mutex_lock(&b->lock);
    memo_flush(m);
    m->device = dev;
    m->path = path;
    m->readable = readable;
    m->lay = *lay;
    memcpy(&m->a, a, offsetof(argset_t, v) + sizeof a->v[0] * (size_t)(readable ? lay->n : 0));
    m->serial = atomic_load_explicit(&k->serial, memory_order_relaxed);
    m->k = k;
    pthread_mutex_unlock(&b->lock);
}

void xmt_discover_flush_counts(void)
{
    xmt_tls_each(&memo_blocks, memo_flush_block);
}

void xmt_discover_atfork(int phase)
{
    /* memo_blocks.lock first, then every block's (the order of a flush); the child drops its
     * parent's pending launches: its report counts its own. */
    if (phase == XMT_FORK_PREPARE) pthread_mutex_lock(&memo_blocks.lock);
    for (memo_block *b = memo_blocks.head; b; b = b->next) {
        if (phase == XMT_FORK_CHILD)
            for (int i = 0; i < MEMO_SLOTS; i++)
                atomic_store_explicit(&b->slots[i].pending, 0, memory_order_relaxed);
        xmt_fork_mutex(&b->lock, phase);
    }
    if (phase != XMT_FORK_PREPARE) pthread_mutex_unlock(&memo_blocks.lock);
}

void xmt_discover_record(xmt_kernel *k, const xmt_launch *l)
{
    CUdevice dev = -1;
    XMT_IN_SHIM_SCOPE
    {
        if (xmt_drv.cuCtxGetDevice && xmt_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS) dev = -1;
    }

    unsigned path = xmt_launch_path(l);

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
    argset_t a;
    layout_t lay = {0};
    int readable = -1;
    record_launch(k, l, (int)dev, path, 1, &a, &readable, &lay);
    if (m) memo_take(m, k, (int)dev, path, &a, readable, &lay);
}

/* A kernel_summary's "args": one value per parameter: its value, "pointer" for an untyped
 * 8-byte one that was memory the driver knows, null for one not recorded (a pointer by
 * the signature, a struct, ...). */
static json_t *args_json(const struct xmt_discover *d)
{
    json_t *sets = json_array();
    for (int i = 0; i < d->nargsets; i++) {
        const argset_t *a = &d->argsets[i];
        json_t *vals = json_array();
        for (size_t p = 0, j = 0; p < d->nparams && p < XMT_KERNEL_MAX_PARAMS; p++) {
            if (j < (size_t)d->nscalars && d->scalar[j] == p) {
                json_array_append_new(vals, a->ptr & (1u << j) ? json_string(XMT_V_POINTER)
                                                               : json_integer((json_int_t)a->v[j]));
                j++;
            } else {
                json_array_append_new(vals, json_null());
            }
        }
        json_array_append_new(sets, xmt_ev_argset(a->grid, a->block, a->shared, vals, a->count));
    }
    return sets;
}

void xmt_discover_add_graph(xmt_kernel *k, int device, uint64_t launches)
{
    static atomic_int registered;
    if (!atomic_load_explicit(&registered, memory_order_acquire)) {
        xmt_kernels_add_parts(&shape_parts);
        atomic_store_explicit(&registered, 1, memory_order_release);
    }
    pthread_mutex_lock(&k->lock);
    int first = device_of(k, device, 0) == NULL;
    struct xmt_discover *d = device_of(k, device, 1);
    if (d) d->graph_launches += launches;
    pthread_mutex_unlock(&k->lock);
    if (d && first && !seen_before(k, device)) xmt_kernel_log_event(k, device);
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
                json_array_append_new(shapes, xmt_ev_shape(s->grid, s->block, s->shared, s->count));
            }
            unsigned rewritable = XMT_PATH_LAUNCH | XMT_PATH_EX | XMT_PATH_EXTRA;
            xmt_ev_summary_info s = {.kernel = k->mangled,
                                     .name = k->demangled,
                                     .discover = 1,
                                     .device = d->device,
                                     .launches = d->launches,
                                     .passed_through = d->launches,
                                     .paths = xmt_paths_json(d->paths),
                                     .rewritable = (d->paths & ~rewritable) == 0,
                                     .shapes = shapes,
                                     .other_shapes = d->other,
                                     .args = args_json(d),
                                     .other_args = d->other_args,
                                     .graph_launches = d->graph_launches,
                                     .policy = k->entry ? xmt_entry_origin(k->entry) : NULL};
            xmt_log_event(xmt_ev_kernel_summary(&s));
        }
        if (table) {
            const char *origin = k->entry ? xmt_entry_origin(k->entry) : "-";
            const char *slash = strrchr(origin, '/');
            /* how many: one cooperative launch among thousands is another story than all */
            char fixed[80] = "";
            if (d->fixed)
                snprintf(fixed, sizeof fixed, "  [%llu of %llu launch%s not rewritable]",
                         (unsigned long long)d->fixed, (unsigned long long)d->launches,
                         d->launches == 1 ? "" : "es");
            fprintf(table, "xmatune: %10llu %10llu %6d %4d  %-20.20s %s%s\n",
                    (unsigned long long)d->launches, (unsigned long long)d->graph_launches,
                    d->nshapes + (d->other ? 1 : 0), d->device, slash ? slash + 1 : origin,
                    k->demangled, fixed);
        }
    }
    pthread_mutex_unlock(&k->lock);
    return n;
}
