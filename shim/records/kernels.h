/*
 * kernels: what the shim knows about each kernel handle it has seen launched.
 *
 * A record holds the kernel's name, its parameter layout as the driver reports it, and
 * the policy entry that describes it (or none). Records are found by handle with a
 * lock-free open-addressing table: a launch of a kernel no policy names costs one hash,
 * one or two loads and a compare. Records are created on the cold path under a mutex.
 *
 * Unloads: each record knows its owner (the CUmodule of a CUfunction, cuFuncGetModule;
 * the CUlibrary of a CUkernel, cuKernelGetLibrary), and records are indexed by owner, so
 * cuModuleUnload/cuLibraryUnload forget only that owner's records (and those whose owner
 * the driver would not tell), at a cost in what was unloaded; a context's destruction
 * forgets its CUfunction records (CUkernels outlive contexts). The driver reuses handle
 * values: the next launch of a forgotten handle makes a fresh record.
 *
 * Reclamation, with nothing added to the launch path: a forgotten record is *retired*.
 * Its counts and shapes are added to the kernel's summary (one per mangled name, kept for
 * the exit report) and its struct goes to a quarantine, then to reuse; record structs are
 * never returned to malloc (type-stable), so a pointer that the lookup table or a
 * thread's memo still holds always points at a record. Every incarnation has a serial
 * number that is never reused: the memos (tuner.c) compare it, so a reused struct never
 * matches an old memo entry, and a memo's unreported counts follow a retired record to
 * its summary. What a record owns (names, layout, per-key results, shapes) is freed when
 * its struct leaves the quarantine, XMT_KERNELS_QUARANTINE retirements later. A table
 * slot's handle never changes once set (forgetting clears only its record pointer), so a
 * reader that finds a handle's slot gets that handle's record or NULL, never another's.
 *
 * Both handle kinds work: CUfunction (driver API, Triton) and CUkernel cast to
 * CUfunction (the CUDA runtime), whose name and parameters come from cuKernelGet*.
 */
#ifndef XMT_KERNELS_H
#define XMT_KERNELS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

struct xmt_entry;
struct xmt_policy_set;
struct xmt_discover;
struct xmt_tune_state;

#define XMT_KERNEL_MAX_PARAMS 256

typedef struct xmt_kernel {
    uintptr_t handle;
    int passthrough;         /* hot: nothing to do for this kernel but count */
    int is_cukernel;         /* handle is a CUkernel cast to CUfunction */
    atomic_int stale;        /* forgotten by an unload (retired), or a summary */
    _Atomic uint64_t serial; /* this incarnation of the struct; never reused */
    char *mangled;           /* as the driver names it */
    char *demangled;         /* full demangled signature, or the mangled name */
    size_t nparams;          /* as the driver reports them; params_known = 0 if it could not */
    int params_known;
    uint32_t *offsets, *sizes;
    const struct xmt_entry *entry; /* policy entry, or NULL */
    int max_threads;               /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0 if unknown */
    int static_shared;             /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    int max_dynamic_shared; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (the opt-in) */
    /* Host µs its first sight took on the program's thread (the driver's queries, the
     * demangling, the entry matched or derived): the `kernel` event's host_us. sight_log:
     * auto derived its entry, so the event is logged when that sight ends. */
    double sight_us;
    int sight_log, sight_ahead; /* sight_ahead: auto's entry was derived ahead (autotune.h) */
    atomic_uint_fast64_t launches, rewritten, passed;
    /* graph.c: launches made by graph replays; kernel nodes added or set (of a kernel a
     * policy names), those given a winner, those kept untuned for want of one */
    atomic_uint_fast64_t graph_launches, graph_nodes, graph_rewritten, graph_untuned;
    pthread_mutex_t lock;          /* guards the two lists below */
    struct xmt_discover *discover; /* per-device launch shapes (discover mode) */
    struct xmt_tune_state *tune;   /* per-device key caches (tune/replay) */
    unsigned keys_retired;         /* a summary: keys its retired records had tuned */
    /* Set when the record is retired: its summary, where late counts go (tuner.c). */
    _Atomic(struct xmt_kernel *) retired_to;
    /* kernels.c's own: owner, links (under its table lock) */
    uintptr_t owner; /* CUmodule or CUlibrary; 0 when the driver would not say */
    struct xmt_kernel *next, *prev, *next_owner, *prev_owner;
    struct xmt_kernel *summary; /* the summary of its name, if one exists yet */
    int in_table;
} xmt_kernel;

/* Retired records kept (their memory unreleased) before their structs are reused. */
#define XMT_KERNELS_QUARANTINE 64

#define XMT_KTAB_BITS 14
struct xmt_kslot {
    _Atomic uintptr_t handle;
    _Atomic(xmt_kernel *) rec;
};
extern struct xmt_kslot xmt_ktab[1u << XMT_KTAB_BITS];

/* Lock-free lookup; NULL when the handle has no (current) record. */
static inline xmt_kernel *xmt_kernels_find(const void *f)
{
    uintptr_t h = (uintptr_t)f;
    size_t i = (size_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - XMT_KTAB_BITS));
    for (;;) {
        uintptr_t k = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_acquire);
        if (k == h) return atomic_load_explicit(&xmt_ktab[i].rec, memory_order_acquire);
        if (k == 0) return NULL;
        i = (i + 1) & ((1u << XMT_KTAB_BITS) - 1);
    }
}

/* From now on the kernel passes through (auto declined it or stopped tuning it): the
 * launch path reads the flag with relaxed atomic loads. */
static inline void xmt_kernels_pass_through(xmt_kernel *k)
{
    __atomic_store_n(&k->passthrough, 1, __ATOMIC_RELAXED);
}

/* Finds or makes the record of a handle (cold path: driver queries, demangling, policy
 * matching). NULL only for a NULL handle or when out of memory. */
xmt_kernel *xmt_kernels_get(CUfunction f);

/* The log's `kernel` event for k (its parameter layout and limits, the policy entry it
 * has) as seen on `device` (-1: not known); nothing when the log is off. Written at
 * discover's first sight of a kernel on a device, and when XMATUNE_AUTO derives its entry. */
void xmt_kernel_log_event(const xmt_kernel *k, int device);

/* What an unload names: cuModuleUnload, cuLibraryUnload, cuCtxDestroy(_v2). */
enum { XMT_UNLOAD_MODULE, XMT_UNLOAD_LIBRARY, XMT_UNLOAD_CONTEXT };

/* Before the driver's unload: what must be asked while the handle is still valid (a
 * library's module in the current context). Pass the result to xmt_kernels_unloaded. */
uintptr_t xmt_kernels_unload_begin(int what, const void *handle);

/* After a successful unload: retires the records of what was unloaded, and those whose
 * owner is unknown. */
void xmt_kernels_unloaded(int what, const void *handle, uintptr_t begun);

/* Retires every record (tests; a driver without owner queries behaves so anyway). */
void xmt_kernels_forget_all(void);

/* fork(2): the table lock held across it; in the child every record's counters start
 * from zero. */
void xmt_kernels_atfork(int phase);

/* Calls fn for the exit report: for each name that was unloaded, its summary (the
 * retired records' counts, shapes and keys, the live records of that name added to it);
 * and every other live record. Lists them under the table lock, calls fn outside it. */
void xmt_kernels_foreach(void (*fn)(xmt_kernel *k, void *ud), void *ud);

/* Adds src's counts, and what other modules hang on it (xmt_kernel_parts), to dst. */
void xmt_kernels_fold(xmt_kernel *dst, xmt_kernel *src);

/* A module that hangs data on records (discover.c: launch shapes; tuner.c: per-key
 * results) says how to add one record's to another's (fold: both records' locks held)
 * and how to free it (release: the record unreachable). It registers before it first
 * hangs anything on a record; kernels.c calls these when it retires a record and when it
 * reuses its struct. At most 4; registering twice is harmless. (Registration, not calls,
 * so that kernels.c uses neither module: no cycle.) */
typedef struct {
    void (*fold)(xmt_kernel *dst, xmt_kernel *src);
    void (*release)(xmt_kernel *k);
} xmt_kernel_parts;
void xmt_kernels_add_parts(const xmt_kernel_parts *p);

#ifdef XMT_CHECK_INVARIANTS
/* Tests (shim/invariant.h): xmt_kernels_check runs the checks of the table, the lists and
 * the quarantine now; xmt_kernels_test_break breaks one first: the oldest live record off
 * its owner's list, a quarantined struct in a live record's table slot, the quarantine's
 * count, or a serial given twice. */
enum {
    XMT_KERNELS_BREAK_OWNER,
    XMT_KERNELS_BREAK_TABLE,
    XMT_KERNELS_BREAK_QUARANTINE,
    XMT_KERNELS_BREAK_SERIAL
};
void xmt_kernels_check(void);
void xmt_kernels_test_break(int what);
#endif

#endif
