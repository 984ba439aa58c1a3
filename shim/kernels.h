/*
 * kernels: what the shim knows about each kernel handle it has seen launched.
 *
 * A record holds the kernel's name, its parameter layout as the driver reports it, and
 * the policy entry that describes it (or none). Records are found by handle with a
 * lock-free open-addressing table: a launch of a kernel no policy names costs one hash,
 * one or two loads and a compare. Records are created on the cold path under a mutex and
 * never freed while the process runs, so a reader holding one is always safe. On any
 * module, library or context unload every handle is forgotten (the driver reuses handle
 * values), and the next launch of a handle makes a fresh record.
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
    int passthrough;  /* hot: nothing to do for this kernel but count */
    int is_cukernel;  /* handle is a CUkernel cast to CUfunction */
    atomic_int stale; /* forgotten by an unload; kept only for the exit report */
    char *mangled;    /* as the driver names it */
    char *demangled;  /* full demangled signature, or the mangled name */
    size_t nparams;   /* as the driver reports them; params_known = 0 if it could not */
    int params_known;
    uint32_t *offsets, *sizes;
    const struct xmt_entry *entry; /* policy entry, or NULL */
    int max_threads;               /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0 if unknown */
    int static_shared;             /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    int max_dynamic_shared; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (the opt-in) */
    atomic_uint_fast64_t launches, rewritten, passed;
    pthread_mutex_t lock;          /* guards the two lists below */
    struct xmt_discover *discover; /* per-device launch shapes (discover mode) */
    struct xmt_tune_state *tune;   /* per-device key caches (tune/replay) */
    struct xmt_kernel *next_all;   /* every record ever made, for the exit report */
} xmt_kernel;

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

/* The loaded policies (set once at activation by shim.c); NULL: none loaded. */
extern struct xmt_policy_set *xmt_policies;

/* Finds or makes the record of a handle (cold path: driver queries, demangling, policy
 * matching). NULL only for a NULL handle or when out of memory. */
xmt_kernel *xmt_kernels_get(CUfunction f);

/* Forgets every handle (after an unload). Records stay readable until exit. */
void xmt_kernels_forget_all(void);

/* fork(2): the table lock held across it; in the child every record's counters start
 * from zero. */
void xmt_kernels_atfork(int phase);

/* Calls fn for every record ever made, oldest first, e.g. for the exit report. */
void xmt_kernels_foreach(void (*fn)(xmt_kernel *k, void *ud), void *ud);

#endif
