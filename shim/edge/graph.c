/*
 * graph: kernel nodes given known winners, replays counted (see graph.h).
 */
#include "graph.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "discover.h"
#include "driver.h"
#include "kernels.h"
#include "launch.h"
#include "log.h"
#include "logevent.h"
#include "options.h"
#include "tuner.h"
#include "xmt_policy.h"

typedef CUresult (*pfn_add)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const void *);
typedef CUresult (*pfn_set)(CUgraphNode, const void *);
typedef CUresult (*pfn_xset)(CUgraphExec, CUgraphNode, const void *);
typedef CUresult (*pfn_glaunch)(CUgraphExec, CUstream);
typedef CUresult (*pfn_xdestroy)(CUgraphExec);

static void node_kernel(CUgraphExec x, CUgraphNode n, CUfunction f);

static int active(void)
{
    return !xmt_in_shim && xmt_opt.mode != XMT_MODE_OFF;
}

/* ---- kernel nodes: the winner, if one is known ----------------------------------------- */

/* Keys of untuned nodes already logged (one event per kernel and key). */
typedef struct {
    UT_hash_handle hh;
    char id[]; /* "<serial>:<key>" */
} seen_t;
static seen_t *seen_keys;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void untuned(xmt_kernel *k, const char *key_text, const char *why)
{
    atomic_fetch_add_explicit(&k->graph_untuned, 1, memory_order_relaxed);
    char id[600];
    int n =
        snprintf(id, sizeof id, "%llu:%s", (unsigned long long)atomic_load(&k->serial), key_text);
    if (n < 0) return;
    size_t len = strlen(id);
    int fresh = 0;
    pthread_mutex_lock(&seen_lock);
    seen_t *s = NULL;
    HASH_FIND(hh, seen_keys, id, len, s);
    if (!s && (s = malloc(sizeof *s + len + 1))) {
        memcpy(s->id, id, len + 1);
        HASH_ADD(hh, seen_keys, id[0], len, s);
        fresh = 1;
    }
    pthread_mutex_unlock(&seen_lock);
    if (!fresh) return;
    xmt_verbose(1, "%s: a graph kernel node with key %s keeps the program's config (%s)",
                k->demangled, key_text, why);
    xmt_log_event(xmt_ev_graph_node(k->mangled, k->demangled, key_text, "untuned", why,
                                    xmt_entry_origin(k->entry)));
}

/* The kernel a node runs: func, or (v2, func NULL) the CUkernel in kern. */
static CUfunction node_function(int ver, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    if (p->func) return p->func;
    return ver == 2 ? (CUfunction)(void *)p->kern : NULL;
}

static xmt_kernel *record_of(CUfunction f)
{
    xmt_kernel *k = xmt_kernels_find(f);
    if (!k || atomic_load_explicit(&k->stale, memory_order_relaxed)) k = xmt_kernels_get(f);
    return k;
}

/* 1 and *out (with its arguments in *a): the node's parameters with the winner's config;
 * 0: the program's own parameters go to the driver. *kp: the kernel, when a policy names
 * it. Only the fields of the caller's struct version are read or written. */
static int node_rewrite(int ver, const void *in, CUDA_KERNEL_NODE_PARAMS_v2 *out, xmt_cand_args *a,
                        xmt_kernel **kp)
{
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    memcpy(&p, in, ver == 2 ? sizeof p : sizeof(CUDA_KERNEL_NODE_PARAMS_v1));
    CUfunction f = node_function(ver, &p);
    xmt_kernel *k = f ? record_of(f) : NULL;
    *kp = NULL;
    if (!k || __atomic_load_n(&k->passthrough, __ATOMIC_RELAXED) || !k->entry) return 0;
    *kp = k;
    atomic_fetch_add_explicit(&k->graph_nodes, 1, memory_order_relaxed);
    if (xmt_opt.mode != XMT_MODE_TUNE && xmt_opt.mode != XMT_MODE_REPLAY) return 0;
    xmt_launch l = {XMT_K_LAUNCH,
                    0,
                    NULL,
                    f,
                    {p.gridDimX, p.gridDimY, p.gridDimZ},
                    {p.blockDimX, p.blockDimY, p.blockDimZ},
                    p.sharedMemBytes,
                    NULL,
                    p.kernelParams,
                    p.extra,
                    NULL};
    xmt_candidate c;
    char key_text[512];
    const char *why = NULL;
    int known = xmt_tune_known(k, &l, &c, key_text, sizeof key_text, &why);
    if (known < 0) untuned(k, key_text, why ? why : "no winner");
    if (known <= 0) return 0;
    if (xmt_candidate_args(k, p.kernelParams, p.extra, &c, a) != 0) {
        untuned(k, key_text, "its arguments cannot be found");
        return 0;
    }
    *out = p;
    out->gridDimX = c.dims.grid.x;
    out->gridDimY = c.dims.grid.y;
    out->gridDimZ = c.dims.grid.z;
    out->blockDimX = c.dims.block.x;
    out->blockDimY = c.dims.block.y;
    out->blockDimZ = c.dims.block.z;
    out->sharedMemBytes = c.dims.shared;
    out->kernelParams = a->params_out;
    out->extra = a->extra_out;
    return 1;
}

/* After the driver refused the winner's node: said once; the program's own goes in. */
static void refused(const xmt_kernel *k, CUresult r)
{
    static atomic_int warned;
    char b[32];
    if (xmt_first_time(&warned))
        xmt_warn("%s: the driver refused a graph kernel node with the tuned config (%s); the "
                 "program's own parameters are used",
                 k->demangled, xmt_cu_name(r, b, sizeof b));
}

/* The three calls share this: call(p) adds or sets with parameters p. */
#define NODE_CALL(ver, params, CALL)                                                               \
    do {                                                                                           \
        if (!active() || !(params)) {                                                              \
            const void *p_ = (params);                                                             \
            return CALL;                                                                           \
        }                                                                                          \
        CUDA_KERNEL_NODE_PARAMS_v2 q_;                                                             \
        xmt_cand_args a_;                                                                          \
        xmt_kernel *k_ = NULL;                                                                     \
        if (node_rewrite((ver), (params), &q_, &a_, &k_)) {                                        \
            const void *p_ = &q_;                                                                  \
            CUresult r_ = CALL;                                                                    \
            xmt_cand_args_free(&a_);                                                               \
            if (r_ == CUDA_SUCCESS) {                                                              \
                atomic_fetch_add_explicit(&k_->graph_rewritten, 1, memory_order_relaxed);          \
                return r_;                                                                         \
            }                                                                                      \
            refused(k_, r_);                                                                       \
        }                                                                                          \
        const void *p_ = (params);                                                                 \
        return CALL;                                                                               \
    } while (0)

CUresult xmt_graph_add_node(void *real, int ver, CUgraphNode *ph, CUgraph g,
                            const CUgraphNode *deps, size_t ndeps, const void *params)
{
    NODE_CALL(ver, params, ((pfn_add)real)(ph, g, deps, ndeps, p_));
}

CUresult xmt_graph_set_node(void *real, int ver, CUgraphNode n, const void *params)
{
    NODE_CALL(ver, params, ((pfn_set)real)(n, p_));
}

CUresult xmt_graph_exec_set_node(void *real, int ver, CUgraphExec x, CUgraphNode n,
                                 const void *params)
{
    CUresult r;
    do {
        if (!active() || !params) {
            r = ((pfn_xset)real)(x, n, params);
            break;
        }
        CUDA_KERNEL_NODE_PARAMS_v2 q;
        xmt_cand_args a;
        xmt_kernel *k = NULL;
        if (node_rewrite(ver, params, &q, &a, &k)) {
            r = ((pfn_xset)real)(x, n, &q);
            xmt_cand_args_free(&a);
            if (r == CUDA_SUCCESS) {
                atomic_fetch_add_explicit(&k->graph_rewritten, 1, memory_order_relaxed);
                break;
            }
            refused(k, r);
        }
        r = ((pfn_xset)real)(x, n, params);
    } while (0);
    if (r == CUDA_SUCCESS && params && active()) {
        /* The node may run another kernel now: its replays so far stay with the old one. */
        CUDA_KERNEL_NODE_PARAMS_v2 p;
        memset(&p, 0, sizeof p);
        memcpy(&p, params, ver == 2 ? sizeof p : sizeof(CUDA_KERNEL_NODE_PARAMS_v1));
        CUfunction f = node_function(ver, &p);
        if (f) node_kernel(x, n, f);
    }
    return r;
}

/* ---- executable graphs: their kernel nodes, found once -------------------------------- */

typedef struct {
    CUgraphNode node;
    xmt_kernel *k;
    uint64_t serial;
    int device;
} gnode_t;

typedef struct gexec {
    _Atomic uint64_t replays; /* since the last fold */
    uint64_t replays_total;
    int n, cap;
    gnode_t *nodes;
    int conditional; /* has conditional nodes: their bodies are not counted */
    struct gexec *next_free;
} gexec_t;

#define GTAB_BITS 12
static struct {
    _Atomic uintptr_t handle; /* never changes once set */
    _Atomic(gexec_t *) rec;
} gtab[1u << GTAB_BITS];
static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER; /* writers; folds */
static gexec_t *free_execs; /* type-stable: a racing replay may still hold one */
static _Atomic uint64_t unseen_replays, total_replays, conditional_graphs;

static size_t slot_of(uintptr_t h)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - GTAB_BITS));
}

static gexec_t *exec_find(CUgraphExec x)
{
    uintptr_t h = (uintptr_t)x;
    size_t i = slot_of(h);
    for (size_t probes = 0; probes < (1u << GTAB_BITS); probes++) {
        uintptr_t k = atomic_load_explicit(&gtab[i].handle, memory_order_acquire);
        if (k == h) return atomic_load_explicit(&gtab[i].rec, memory_order_acquire);
        if (k == 0) return NULL;
        i = (i + 1) & ((1u << GTAB_BITS) - 1);
    }
    return NULL;
}

/* The slot of x, made if missing (glock held); -1 when the table is full. A slot whose
 * graph was destroyed (its record gone) is taken again for a new handle: a long-running
 * program makes many more graphs than the table holds, and its driver may never reuse a
 * handle. Reusing one is safe for lock-free readers: a slot's handle never goes back to
 * 0, so no probe sequence is cut short, and a reader that still finds the destroyed
 * handle is replaying a destroyed graph (the program's error). */
static long exec_slot(CUgraphExec x)
{
    uintptr_t h = (uintptr_t)x;
    size_t i = slot_of(h);
    long reuse = -1;
    for (size_t probes = 0; probes < (1u << GTAB_BITS); probes++) {
        uintptr_t k = atomic_load_explicit(&gtab[i].handle, memory_order_relaxed);
        if (k == h) return (long)i;
        if (k == 0) {
            if (reuse >= 0) break;
            atomic_store_explicit(&gtab[i].handle, h, memory_order_release);
            return (long)i;
        }
        if (reuse < 0 && !atomic_load_explicit(&gtab[i].rec, memory_order_relaxed)) reuse = (long)i;
        i = (i + 1) & ((1u << GTAB_BITS) - 1);
    }
    if (reuse >= 0) atomic_store_explicit(&gtab[reuse].handle, h, memory_order_release);
    return reuse;
}

/* e's replays since the last fold go to its kernels (glock held). */
static void fold(gexec_t *e)
{
    uint64_t n = atomic_exchange(&e->replays, 0);
    if (!n) return;
    e->replays_total += n;
    for (int i = 0; i < e->n; i++) {
        xmt_kernel *k = e->nodes[i].k;
        if (atomic_load_explicit(&k->serial, memory_order_acquire) != e->nodes[i].serial)
            continue; /* its struct is another kernel's now */
        xmt_kernel *to = atomic_load_explicit(&k->retired_to, memory_order_acquire);
        if (to) k = to;
        atomic_fetch_add_explicit(&k->graph_launches, n, memory_order_relaxed);
        if (xmt_opt.mode == XMT_MODE_DISCOVER) xmt_discover_add_graph(k, e->nodes[i].device, n);
    }
}

static void add_node(gexec_t *e, CUgraphNode node, CUfunction f, int device)
{
    xmt_kernel *k = f ? record_of(f) : NULL;
    if (!k) return;
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 16;
        gnode_t *nn = realloc(e->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return;
        e->nodes = nn;
        e->cap = cap;
    }
    e->nodes[e->n++] = (gnode_t){node, k, atomic_load(&k->serial), device};
}

#define MAX_DEPTH 16

/* Finds g's kernel nodes, child graphs' included (in the shim's scope). */
static void walk(CUgraph g, gexec_t *e, int device, int depth)
{
    size_t n = 0;
    if (depth > MAX_DEPTH || !xmt_drv.cuGraphGetNodes || !xmt_drv.cuGraphNodeGetType ||
        xmt_drv.cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS || n == 0)
        return;
    CUgraphNode *nodes = malloc(n * sizeof(CUgraphNode));
    if (!nodes) return;
    if (xmt_drv.cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS) n = 0;
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        if (!nodes[i] || xmt_drv.cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS) continue;
        if (t == CU_GRAPH_NODE_TYPE_KERNEL && xmt_drv.cuGraphKernelNodeGetParams) {
            CUDA_KERNEL_NODE_PARAMS_v2 p;
            memset(&p, 0, sizeof p);
            if (xmt_drv.cuGraphKernelNodeGetParams(nodes[i], &p) == CUDA_SUCCESS)
                /* the CUkernel first: it is what the runtime's own launches use */
                add_node(e, nodes[i], p.kern ? (CUfunction)(void *)p.kern : p.func, device);
        } else if (t == CU_GRAPH_NODE_TYPE_GRAPH && xmt_drv.cuGraphChildGraphNodeGetGraph) {
            CUgraph child = NULL;
            if (xmt_drv.cuGraphChildGraphNodeGetGraph(nodes[i], &child) == CUDA_SUCCESS && child)
                walk(child, e, device, depth + 1);
        } else if (t == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
            e->conditional = 1;
        }
    }
    free(nodes);
}

/* (Re)makes x's record from graph g, folding what it had. The graph is walked before
 * glock is taken: a walk calls the driver (and the kernel table, which may too), and a
 * lock held across driver calls could not be taken safely at fork. */
static void remember(CUgraphExec x, CUgraph g)
{
    CUdevice dev = -1;
    gexec_t w = {0};
    XMT_IN_SHIM_SCOPE
    {
        if (!xmt_drv.cuCtxGetDevice || xmt_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS) dev = -1;
        walk(g, &w, (int)dev, 0);
    }
    gnode_t *old = w.nodes; /* freed after the lock: w's when unused, else e's old array */
    pthread_mutex_lock(&glock);
    long i = exec_slot(x);
    gexec_t *e = i < 0 ? NULL : atomic_load_explicit(&gtab[i].rec, memory_order_relaxed);
    if (e) {
        fold(e);
    } else if (i >= 0) {
        e = free_execs;
        if (e)
            free_execs = e->next_free;
        else
            e = calloc(1, sizeof *e);
        if (e) {
            atomic_store(&e->replays, 0);
            e->replays_total = 0;
        }
    }
    if (e) {
        old = e->nodes;
        e->nodes = w.nodes;
        e->n = w.n;
        e->cap = w.cap;
        e->conditional = w.conditional;
        if (e->conditional) atomic_fetch_add(&conditional_graphs, 1);
        atomic_store_explicit(&gtab[i].rec, e, memory_order_release);
    }
    pthread_mutex_unlock(&glock);
    free(old);
    static atomic_int warned;
    if (i < 0 && xmt_first_time(&warned))
        xmt_warn("more than %u executable graphs at once: replays of further ones are not counted",
                 1u << GTAB_BITS);
}

static void node_kernel(CUgraphExec x, CUgraphNode n, CUfunction f)
{
    xmt_kernel *k = record_of(f); /* before glock: it may call the driver */
    if (!k) return;
    uint64_t serial = atomic_load(&k->serial);
    pthread_mutex_lock(&glock);
    gexec_t *e = exec_find(x);
    if (e) {
        fold(e);
        for (int i = 0; i < e->n; i++)
            if (e->nodes[i].node == n) e->nodes[i] = (gnode_t){n, k, serial, e->nodes[i].device};
    }
    pthread_mutex_unlock(&glock);
}

CUresult xmt_graph_instantiated(CUresult r, CUgraphExec *px, CUgraph g)
{
    if (r == CUDA_SUCCESS && px && *px && active()) remember(*px, g);
    return r;
}

CUresult xmt_graph_updated(CUresult r, CUgraphExec x, CUgraph g)
{
    if (r == CUDA_SUCCESS && x && active()) remember(x, g);
    return r;
}

CUresult xmt_graph_launch(void *real, CUgraphExec x, CUstream s)
{
    CUresult r = ((pfn_glaunch)real)(x, s);
    if (r != CUDA_SUCCESS || xmt_in_shim) return r;
    gexec_t *e = exec_find(x);
    if (__builtin_expect(e != NULL, 1))
        atomic_fetch_add_explicit(&e->replays, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&unseen_replays, 1, memory_order_relaxed);
    return r;
}

CUresult xmt_graph_exec_destroy(void *real, CUgraphExec x)
{
    if (active() && x) {
        pthread_mutex_lock(&glock);
        long i = -1;
        gexec_t *e = exec_find(x);
        if (e) {
            fold(e);
            atomic_fetch_add(&total_replays, e->replays_total);
            i = exec_slot(x);
            atomic_store_explicit(&gtab[i].rec, NULL, memory_order_release);
            e->next_free = free_execs;
            free_execs = e;
        }
        pthread_mutex_unlock(&glock);
    }
    return ((pfn_xdestroy)real)(x);
}

void xmt_graph_flush(void)
{
    pthread_mutex_lock(&glock);
    for (size_t i = 0; i < (1u << GTAB_BITS); i++) {
        gexec_t *e = atomic_load_explicit(&gtab[i].rec, memory_order_acquire);
        if (!e) continue;
        fold(e);
        atomic_fetch_add(&total_replays, e->replays_total);
        e->replays_total = 0;
    }
    pthread_mutex_unlock(&glock);
}

void xmt_graph_atfork(int phase)
{
    /* glock before seen_lock: neither holder takes the other, and glock's holder (fold)
     * may take a kernel's lock and the log's, which shim.c takes after this module's. */
    if (phase == XMT_FORK_PREPARE) {
        xmt_fork_mutex(&glock, phase);
        xmt_fork_mutex(&seen_lock, phase);
    } else {
        xmt_fork_mutex(&seen_lock, phase);
        xmt_fork_mutex(&glock, phase);
    }
}

void xmt_graph_totals(unsigned long long *replays, unsigned long long *unseen,
                      unsigned long long *conditional)
{
    *replays = atomic_load(&total_replays);
    *unseen = atomic_load(&unseen_replays);
    *conditional = atomic_load(&conditional_graphs);
}
