/*
 * kernels: per-handle records and their lock-free table (see kernels.h).
 */
#include "kernels.h"

#include <fnmatch.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "autotune.h"
#include "clock.h"
#include "driver.h"
#include "invariant.h"
#include "log.h"
#include "logevent.h"
#include "options.h"
#include "policies.h"
#include "xmt_policy.h"

struct xmt_kslot xmt_ktab[1u << XMT_KTAB_BITS];

/* Live records by owner (next_owner/prev_owner). */
typedef struct owner_group {
    UT_hash_handle hh;
    uintptr_t owner;
    xmt_kernel *head;
} owner_group;

/* One summary per mangled name that has had a record retired (for the exit report). */
typedef struct summary {
    UT_hash_handle hh;
    xmt_kernel k;
} summary_t;

/* What other modules hang on records (xmt_kernels_add_parts). */
#define MAX_PARTS 4

/* The module's state, in one place. The lists, the indexes and the table's writers are
 * under lock; serials are handed out atomically; the driver's owner queries are found once
 * (owner_once); parts are set once each (under lock) and read lock-free. */
static struct {
    pthread_mutex_t lock;
    size_t table_used;                 /* slots with a handle (they are never emptied) */
    xmt_kernel *live_head, *live_tail; /* live records, oldest first (next/prev) */
    xmt_kernel *unknown_owner;         /* live records whose owner the driver did not tell */
    xmt_kernel *quar_head, *quar_tail; /* retired structs, oldest first (next) */
    size_t quar_n;
    _Atomic uint64_t next_serial;
    owner_group *owners;  /* live records by owner (next_owner/prev_owner) */
    summary_t *summaries; /* one per mangled name that has had a record retired */
    unsigned since_scan;  /* the invariant check's changes since its last full scan */
    /* the driver's owner queries (not in driver_syms.h: only this module uses them);
     * missing ones leave owners unknown: such records go at every unload, as before */
    PFN_cuFuncGetModule_v11000 func_module;
    PFN_cuKernelGetLibrary_v12050 kernel_library;
    PFN_cuLibraryGetModule_v12000 library_module;
    pthread_once_t owner_once;
    _Atomic(const xmt_kernel_parts *) parts[MAX_PARTS];
} recs = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_serial = 1, .owner_once = PTHREAD_ONCE_INIT};

/* Past this load the table stops taking new handles (probes stay short); such kernels
 * are then found by a walk of the live records, under the lock: correct, only slower. */
#define TABLE_LIMIT ((1u << XMT_KTAB_BITS) / 4 * 3)

static size_t slot_of(uintptr_t h)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - XMT_KTAB_BITS));
}

/* ---- invariants (shim/invariant.h: debug builds and the unit tests) ----
 * The live list is doubly linked from live_head to live_tail and holds no retired
 * record; every live record is on its owner's list (or the unknown owner's) exactly once,
 * and those lists hold nothing else; a table slot's record is a live record of that
 * handle, and a live record marked in_table is the one its handle's slot finds; as many
 * slots have a handle as table_used says; the quarantine runs from quar_head to
 * quar_tail, quar_n structs, none of them live; the serials of live, quarantined and
 * summary records are all different and below next_serial. Checked after each insert,
 * retirement and reuse of a struct (the table's every slot only every SCAN_EVERY-th
 * time; a quarantined struct's own slot each time). recs.lock held. */
#if XMT_INVARIANTS
static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (xmt_kernel *const *)a, y = (uintptr_t) * (xmt_kernel *const *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Where k is in live (n records sorted by address), or -1. */
static long live_index(xmt_kernel *const *live, size_t n, const xmt_kernel *k)
{
    xmt_kernel *const *at = bsearch(&k, live, n, sizeof(xmt_kernel *), cmp_addr);
    return at ? at - live : -1;
}

/* One owner's list: linked both ways, only live records of that owner; each counted in
 * on[] by its place in live. */
static void check_owner_list(const xmt_kernel *head, uintptr_t owner, xmt_kernel *const *live,
                             size_t n, unsigned *on)
{
    size_t steps = 0;
    for (const xmt_kernel *k = head, *prev = NULL; k; prev = k, k = k->next_owner) {
        XMT_INVARIANT(++steps <= n, "kernels: owner %#lx's list loops", (unsigned long)owner);
        XMT_INVARIANT(k->prev_owner == prev, "kernels: owner %#lx's list is mislinked at %s",
                      (unsigned long)owner, k->mangled);
        long at = live_index(live, n, k);
        XMT_INVARIANT(at >= 0, "kernels: owner %#lx's list holds a record that is not live",
                      (unsigned long)owner);
        XMT_INVARIANT(k->owner == owner, "kernels: %s (owner %#lx) is on owner %#lx's list",
                      k->mangled, (unsigned long)k->owner, (unsigned long)owner);
        on[at]++;
    }
}

/* The slot of handle h, or NULL when it has none. */
static struct xmt_kslot *slot_of_handle(uintptr_t h)
{
    for (size_t i = slot_of(h);; i = (i + 1) & ((1u << XMT_KTAB_BITS) - 1)) {
        uintptr_t k = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed);
        if (k == h) return &xmt_ktab[i];
        if (!k) return NULL;
    }
}

/* Every slot of the table against the live records: 16384 of them, so only at every
 * SCAN_EVERY-th check (and at xmt_kernels_check): a churn of 100k loads and unloads would
 * otherwise spend minutes here. The checks of each change (check_table) look at the
 * records instead. */
#define SCAN_EVERY 64
static void scan_table(xmt_kernel *const *live, size_t n)
{
    size_t used = 0;
    for (size_t i = 0; i < (1u << XMT_KTAB_BITS); i++) {
        uintptr_t h = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed);
        xmt_kernel *k = atomic_load_explicit(&xmt_ktab[i].rec, memory_order_relaxed);
        used += h != 0;
        if (!k) continue;
        XMT_INVARIANT(live_index(live, n, k) >= 0,
                      "kernels: table slot %zu holds a retired record (serial %llu)", i,
                      (unsigned long long)atomic_load(&k->serial));
        XMT_INVARIANT(k->handle == h && k->in_table,
                      "kernels: table slot %zu (handle %#lx) holds %s of handle %#lx", i,
                      (unsigned long)h, k->mangled, (unsigned long)k->handle);
    }
    XMT_INVARIANT(used == recs.table_used,
                  "kernels: %zu table slots have a handle, table_used says %zu", used,
                  recs.table_used);
}

/* The lookup table against the records: a live record in the table is the one its
 * handle's slot finds; a quarantined struct is in no slot of its handle. */
static void check_table(xmt_kernel *const *live, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        struct xmt_kslot *sl = live[j]->in_table ? slot_of_handle(live[j]->handle) : NULL;
        XMT_INVARIANT(!live[j]->in_table ||
                          (sl && atomic_load_explicit(&sl->rec, memory_order_relaxed) == live[j]),
                      "kernels: %s is not the record its handle's slot finds", live[j]->mangled);
    }
    for (const xmt_kernel *k = recs.quar_head; k; k = k->next) {
        struct xmt_kslot *sl = k->handle ? slot_of_handle(k->handle) : NULL;
        XMT_INVARIANT(!sl || atomic_load_explicit(&sl->rec, memory_order_relaxed) != k,
                      "kernels: table slot of handle %#lx holds a retired record (serial %llu)",
                      (unsigned long)k->handle, (unsigned long long)atomic_load(&k->serial));
    }
}

/* The quarantine and the serials of every record struct (serials[0..n) holds the live
 * ones' already; room for quar_n and the summaries' more). */
static void check_quarantine_serials(xmt_kernel *const *live, size_t n, uint64_t *serials)
{
    size_t q = 0, m = n;
    const xmt_kernel *last = NULL;
    for (const xmt_kernel *k = recs.quar_head; k; last = k, k = k->next) {
        XMT_INVARIANT(++q <= recs.quar_n, "kernels: the quarantine holds more than its %zu structs",
                      recs.quar_n);
        XMT_INVARIANT(live_index(live, n, k) < 0 && !k->in_table,
                      "kernels: a quarantined struct is live or in the table");
        serials[m++] = atomic_load(&k->serial);
    }
    XMT_INVARIANT(q == recs.quar_n && last == recs.quar_tail,
                  "kernels: the quarantine's list has %zu structs, quar_n says %zu%s", q,
                  recs.quar_n, last == recs.quar_tail ? "" : ", and it does not end at quar_tail");
    for (summary_t *sm = recs.summaries; sm; sm = sm->hh.next)
        serials[m++] = atomic_load(&sm->k.serial);
    qsort(serials, m, sizeof *serials, cmp_u64);
    for (size_t i = 0; i < m; i++)
        XMT_INVARIANT(
            (!i || serials[i] != serials[i - 1]) && serials[i] < atomic_load(&recs.next_serial),
            "kernels: serial %llu is %s", (unsigned long long)serials[i],
            serials[i] >= atomic_load(&recs.next_serial) ? "not yet given out" : "not unique");
}

static void check_locked(int scan)
{
    size_t n = 0;
    const xmt_kernel *prev = NULL;
    for (const xmt_kernel *k = recs.live_head; k; prev = k, k = k->next, n++) {
        XMT_INVARIANT(k->prev == prev, "kernels: the live list is mislinked at %s", k->mangled);
        XMT_INVARIANT(!atomic_load(&k->stale), "kernels: retired %s is on the live list",
                      k->mangled);
    }
    XMT_INVARIANT(recs.live_tail == prev, "kernels: live_tail is not the live list's last record");
    xmt_kernel **live = malloc((n ? n : 1) * sizeof(xmt_kernel *));
    unsigned *on = calloc(n ? n : 1, sizeof *on);
    uint64_t *serials =
        malloc((n + recs.quar_n + HASH_COUNT(recs.summaries) + 1) * sizeof *serials);
    if (live && on && serials) { /* out of memory: not checked */
        size_t j = 0;
        for (xmt_kernel *k = recs.live_head; k; k = k->next, j++) {
            live[j] = k;
            serials[j] = atomic_load(&k->serial);
        }
        qsort(live, n, sizeof(xmt_kernel *), cmp_addr);
        check_owner_list(recs.unknown_owner, 0, live, n, on);
        for (owner_group *g = recs.owners; g; g = g->hh.next) {
            XMT_INVARIANT(g->head && g->owner, "kernels: owner %#lx has an empty list",
                          (unsigned long)g->owner);
            check_owner_list(g->head, g->owner, live, n, on);
        }
        for (size_t i = 0; i < n; i++)
            XMT_INVARIANT(on[i] == 1, "kernels: %s is on its owner's lists %u times",
                          live[i]->mangled, on[i]);
        if (scan || ++recs.since_scan >= SCAN_EVERY) {
            scan_table(live, n);
            recs.since_scan = 0;
        }
        check_table(live, n);
        check_quarantine_serials(live, n, serials);
    }
    free(live);
    free(on);
    free(serials);
}
#define CHECK_LOCKED() check_locked(0)
#else
#define CHECK_LOCKED() ((void)0)
#endif

static void owner_syms(void)
{
    CUdriverProcAddressQueryResult st;
    if (!xmt_drv.getproc) return;
    XMT_IN_SHIM_SCOPE
    {
        if (xmt_drv.getproc("cuFuncGetModule", (void **)&recs.func_module, 11000, 0, &st) !=
            CUDA_SUCCESS)
            recs.func_module = NULL;
        if (xmt_drv.getproc("cuKernelGetLibrary", (void **)&recs.kernel_library, 12050, 0, &st) !=
            CUDA_SUCCESS)
            recs.kernel_library = NULL;
        if (xmt_drv.getproc("cuLibraryGetModule", (void **)&recs.library_module, 12000, 0, &st) !=
            CUDA_SUCCESS)
            recs.library_module = NULL;
    }
}

/* The module (CUfunction) or library (CUkernel) a handle belongs to; 0 if unknown. Called
 * inside the shim's scope. */
static uintptr_t owner_of(CUfunction f, int is_cukernel)
{
    pthread_once(&recs.owner_once, owner_syms);
    if (is_cukernel) {
        CUlibrary lib = NULL;
        if (recs.kernel_library && recs.kernel_library(&lib, (CUkernel)f) == CUDA_SUCCESS)
            return (uintptr_t)lib;
    } else {
        CUmodule m = NULL;
        if (recs.func_module && recs.func_module(&m, f) == CUDA_SUCCESS) return (uintptr_t)m;
    }
    return 0;
}

/* Does a comma-separated glob list match name? */
static int list_matches(const char *list, const char *name)
{
    char pat[256];
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0 && n < sizeof pat) {
            memcpy(pat, p, n);
            pat[n] = 0;
            if (fnmatch(pat, name, 0) == 0) return 1;
        }
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Asks the driver for name and parameter layout; tries the CUfunction calls first and
 * the CUkernel ones when the driver says the handle is not a function (400). */
static void describe(xmt_kernel *k, CUfunction f)
{
    const char *name = NULL;
    if (xmt_drv.cuFuncGetName && xmt_drv.cuFuncGetName(&name, f) == CUDA_SUCCESS && name) {
        k->is_cukernel = 0;
    } else if (xmt_drv.cuKernelGetName &&
               xmt_drv.cuKernelGetName(&name, (CUkernel)f) == CUDA_SUCCESS && name) {
        k->is_cukernel = 1;
    } else {
        name = NULL;
    }
    char buf[40];
    if (!name) {
        snprintf(buf, sizeof buf, "<unnamed %p>", (void *)f);
        name = buf;
    }
    k->mangled = strdup(name);
    k->owner = owner_of(f, k->is_cukernel);
    char *dm = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
    k->demangled = dm ? dm : strdup(name);

    size_t cap = 16, n = 0;
    k->offsets = malloc(cap * sizeof *k->offsets);
    k->sizes = malloc(cap * sizeof *k->sizes);
    k->params_known = 0;
    if (k->offsets && k->sizes) {
        for (;;) {
            size_t off = 0, sz = 0;
            CUresult r;
            if (k->is_cukernel)
                r = xmt_drv.cuKernelGetParamInfo
                        ? xmt_drv.cuKernelGetParamInfo((CUkernel)f, n, &off, &sz)
                        : CUDA_ERROR_NOT_SUPPORTED;
            else
                r = xmt_drv.cuFuncGetParamInfo ? xmt_drv.cuFuncGetParamInfo(f, n, &off, &sz)
                                               : CUDA_ERROR_NOT_SUPPORTED;
            if (r == CUDA_ERROR_INVALID_VALUE || (r != CUDA_SUCCESS && n > 0)) {
                k->params_known = 1; /* probed past the last parameter */
                break;
            }
            if (r != CUDA_SUCCESS || n >= XMT_KERNEL_MAX_PARAMS) break;
            if (n == cap) {
                cap *= 2;
                uint32_t *o2 = realloc(k->offsets, cap * sizeof *o2);
                if (o2) k->offsets = o2;
                uint32_t *s2 = realloc(k->sizes, cap * sizeof *s2);
                if (s2) k->sizes = s2;
                if (!o2 || !s2) break;
            }
            k->offsets[n] = (uint32_t)off;
            k->sizes[n] = (uint32_t)sz;
            n++;
        }
    }
    k->nparams = n;

    int v = 0;
    CUfunction fn = f;
    if (k->is_cukernel && xmt_drv.cuKernelGetFunction) {
        CUfunction f2 = NULL;
        if (xmt_drv.cuKernelGetFunction(&f2, (CUkernel)f) == CUDA_SUCCESS) fn = f2;
    }
    if (xmt_drv.cuFuncGetAttribute) {
        if (xmt_drv.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) ==
            CUDA_SUCCESS)
            k->max_threads = v;
        if (xmt_drv.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) == CUDA_SUCCESS)
            k->static_shared = v;
        if (xmt_drv.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn) ==
            CUDA_SUCCESS)
            k->max_dynamic_shared = v;
    }
}

/* XMATUNE_AUTO: the derived entry of a kernel no policy names, unless excluded (as a
 * policy's would be, and by auto's own rules: autotune.c). */
static void attach_auto(xmt_kernel *k)
{
    if ((xmt_opt.include[0] && !list_matches(xmt_opt.include, k->demangled) &&
         !list_matches(xmt_opt.include, k->mangled)) ||
        (xmt_opt.exclude[0] && (list_matches(xmt_opt.exclude, k->demangled) ||
                                list_matches(xmt_opt.exclude, k->mangled))))
        return;
    if (!k->params_known) return; /* nothing to derive a key from */
    char why[256];
    k->entry = xmt_auto_entry(k->mangled, k->demangled, k->nparams, k->sizes, &k->sight_ahead, why,
                              sizeof why);
    if (!k->entry) {
        xmt_verbose(1, "XMATUNE_AUTO: %s passes through: %s", k->demangled, why);
        return;
    }
    k->sight_log = 1; /* logged once its first sight is over (make_record): its cost too */
}

void xmt_kernel_log_event(const xmt_kernel *k, int device)
{
    if (!xmt_log_enabled()) return;
    xmt_ev_kernel_info info = {.kernel = k->mangled,
                               .name = k->demangled,
                               .device = device,
                               .is_cukernel = k->is_cukernel,
                               .nparams = k->nparams,
                               .offsets = k->offsets,
                               .sizes = k->sizes,
                               .params_known = k->params_known,
                               .max_threads = k->max_threads,
                               .static_shared = k->static_shared,
                               .max_dynamic_shared = k->max_dynamic_shared,
                               .host_us = k->sight_us,
                               .ahead = k->sight_log ? k->sight_ahead : -1,
                               .policy = k->entry ? xmt_entry_origin(k->entry) : NULL};
    xmt_log_event(xmt_ev_kernel(&info));
}

/* Which policy entry, if any, may tune this kernel. */
static void attach_policy(xmt_kernel *k)
{
    if (xmt_opt.mode != XMT_MODE_TUNE && xmt_opt.mode != XMT_MODE_REPLAY &&
        xmt_opt.mode != XMT_MODE_DISCOVER)
        return;
    const xmt_entry *e =
        xmt_policies ? xmt_policy_match(xmt_policies, k->mangled, xmt_warn_diag, NULL) : NULL;
    if (!e && xmt_opt.autotune && xmt_opt.mode != XMT_MODE_DISCOVER) {
        attach_auto(k);
        return;
    }
    if (!e) return;
    if (xmt_opt.include[0] && !list_matches(xmt_opt.include, k->demangled) &&
        !list_matches(xmt_opt.include, k->mangled))
        return;
    if (xmt_opt.exclude[0] &&
        (list_matches(xmt_opt.exclude, k->demangled) || list_matches(xmt_opt.exclude, k->mangled)))
        return;
    if (!k->params_known) {
        xmt_warn("%s: the driver does not report its parameters, so policy %s cannot be "
                 "checked against it; the kernel passes through",
                 k->demangled, xmt_entry_origin(e));
        return;
    }
    size_t offs[XMT_KERNEL_MAX_PARAMS], sizes[XMT_KERNEL_MAX_PARAMS];
    for (size_t i = 0; i < k->nparams; i++) {
        offs[i] = k->offsets[i];
        sizes[i] = k->sizes[i];
    }
    char why[512];
    if (xmt_entry_check_layout(e, k->nparams, offs, sizes, why, sizeof why) != 0) {
        xmt_warn("%s: policy %s does not fit the kernel (%s); the kernel passes through",
                 k->demangled, xmt_entry_origin(e), why);
        return;
    }
    k->entry = e;
}

void xmt_kernels_add_parts(const xmt_kernel_parts *p)
{
    pthread_mutex_lock(&recs.lock);
    for (int i = 0; i < MAX_PARTS; i++) {
        const xmt_kernel_parts *q = atomic_load(&recs.parts[i]);
        if (q == p) break;
        if (!q) {
            atomic_store(&recs.parts[i], p);
            break;
        }
    }
    pthread_mutex_unlock(&recs.lock);
}

/* Frees what a retired (or discarded) record owns; the struct itself stays. */
static void release_parts(xmt_kernel *k)
{
    free(k->mangled);
    free(k->demangled);
    free(k->offsets);
    free(k->sizes);
    for (int i = 0; i < MAX_PARTS; i++) {
        const xmt_kernel_parts *p = atomic_load(&recs.parts[i]);
        if (p) p->release(k);
    }
}

/* A struct for a new record: the oldest quarantined one once the quarantine is full,
 * else a new one. Its serial is new before anything else changes, so that no memo entry
 * of its past matches it. NULL when out of memory. */
static xmt_kernel *take_struct(void)
{
    xmt_kernel *k = NULL;
    pthread_mutex_lock(&recs.lock);
    if (recs.quar_n > XMT_KERNELS_QUARANTINE) {
        k = recs.quar_head;
        recs.quar_head = k->next;
        if (!recs.quar_head) recs.quar_tail = NULL;
        recs.quar_n--;
    }
    CHECK_LOCKED();
    pthread_mutex_unlock(&recs.lock);
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k) return NULL;
        pthread_mutex_init(&k->lock, NULL);
    }
    atomic_store(&k->serial, atomic_fetch_add(&recs.next_serial, 1));
    release_parts(k);
    atomic_store(&k->launches, 0);
    atomic_store(&k->rewritten, 0);
    atomic_store(&k->passed, 0);
    atomic_store(&k->graph_launches, 0);
    atomic_store(&k->graph_nodes, 0);
    atomic_store(&k->graph_rewritten, 0);
    atomic_store(&k->graph_untuned, 0);
    atomic_store(&k->retired_to, NULL);
    atomic_store(&k->stale, 0);
    k->handle = 0;
    k->passthrough = k->is_cukernel = k->params_known = k->in_table = 0;
    k->mangled = k->demangled = NULL;
    k->nparams = 0;
    k->offsets = k->sizes = NULL;
    k->entry = NULL;
    k->max_threads = k->static_shared = k->max_dynamic_shared = 0;
    k->discover = NULL;
    k->tune = NULL;
    k->keys_retired = 0;
    k->sight_us = 0;
    k->sight_log = 0;
    k->sight_ahead = 0;
    k->owner = 0;
    k->next = k->prev = k->next_owner = k->prev_owner = k->summary = NULL;
    return k;
}

/* Puts a struct in the quarantine (recs.lock held). */
static void quarantine_locked(xmt_kernel *k)
{
    k->next = NULL;
    if (recs.quar_tail)
        recs.quar_tail->next = k;
    else
        recs.quar_head = k;
    recs.quar_tail = k;
    recs.quar_n++;
}

static xmt_kernel *make_record(CUfunction f)
{
    xmt_kernel *k = take_struct();
    if (!k) return NULL;
    k->handle = (uintptr_t)f;
    double t0 = xmt_now_ms();
    XMT_IN_SHIM_SCOPE describe(k, f);
    if (!k->mangled || !k->demangled) {
        pthread_mutex_lock(&recs.lock);
        quarantine_locked(k);
        CHECK_LOCKED();
        pthread_mutex_unlock(&recs.lock);
        return NULL;
    }
    attach_policy(k);
    k->passthrough = xmt_opt.mode != XMT_MODE_DISCOVER && !k->entry;
    k->sight_us = (xmt_now_ms() - t0) * 1000.0;
    if (k->sight_log) {
        /* the layout `xmatune autotune --write-policy` writes the kernel's entry from */
        CUdevice dev = -1;
        if (xmt_log_enabled() && (!xmt_drv.cuCtxGetDevice || xmt_drv.cuCtxGetDevice(&dev) != 0))
            dev = -1;
        xmt_kernel_log_event(k, (int)dev);
    }
    return k;
}

static xmt_kernel **owner_head_locked(uintptr_t owner, int make)
{
    if (!owner) return &recs.unknown_owner;
    owner_group *g = NULL;
    HASH_FIND(hh, recs.owners, &owner, sizeof owner, g);
    if (!g && make) {
        g = calloc(1, sizeof *g);
        if (!g) return NULL;
        g->owner = owner;
        HASH_ADD(hh, recs.owners, owner, sizeof g->owner, g);
    }
    return g ? &g->head : NULL;
}

/* Links a new record into the live list and its owner's list (recs.lock held). */
static void link_locked(xmt_kernel *k)
{
    k->prev = recs.live_tail;
    k->next = NULL;
    if (recs.live_tail)
        recs.live_tail->next = k;
    else
        recs.live_head = k;
    recs.live_tail = k;
    xmt_kernel **head = owner_head_locked(k->owner, 1);
    if (!head) { /* out of memory: an unknown owner, forgotten at every unload */
        k->owner = 0;
        head = &recs.unknown_owner;
    }
    k->prev_owner = NULL;
    k->next_owner = *head;
    if (*head) (*head)->prev_owner = k;
    *head = k;
    summary_t *sm = NULL;
    HASH_FIND_STR(recs.summaries, k->mangled, sm);
    k->summary = sm ? &sm->k : NULL;
}

static void unlink_locked(xmt_kernel *k)
{
    if (k->prev)
        k->prev->next = k->next;
    else
        recs.live_head = k->next;
    if (k->next)
        k->next->prev = k->prev;
    else
        recs.live_tail = k->prev;
    if (k->next_owner) k->next_owner->prev_owner = k->prev_owner;
    if (k->prev_owner) {
        k->prev_owner->next_owner = k->next_owner;
    } else if (!k->owner) {
        recs.unknown_owner = k->next_owner;
    } else {
        owner_group *g = NULL;
        HASH_FIND(hh, recs.owners, &k->owner, sizeof k->owner, g);
        if (g) {
            g->head = k->next_owner;
            if (!g->head) {
                HASH_DEL(recs.owners, g);
                free(g);
            }
        }
    }
    k->next = k->prev = k->next_owner = k->prev_owner = NULL;
}

/* The summary of a record's name, made on first need (recs.lock held). NULL when out
 * of memory. */
static xmt_kernel *summary_locked(const xmt_kernel *k)
{
    summary_t *sm = NULL;
    HASH_FIND_STR(recs.summaries, k->mangled, sm);
    if (sm) return &sm->k;
    sm = calloc(1, sizeof *sm);
    if (!sm) return NULL;
    sm->k.mangled = strdup(k->mangled);
    sm->k.demangled = strdup(k->demangled);
    if (!sm->k.mangled || !sm->k.demangled) {
        free(sm->k.mangled);
        free(sm->k.demangled);
        free(sm);
        return NULL;
    }
    sm->k.handle = k->handle;
    sm->k.is_cukernel = k->is_cukernel;
    sm->k.entry = k->entry;
    sm->k.passthrough = k->passthrough;
    atomic_store(&sm->k.stale, 1);
    atomic_store(&sm->k.serial, atomic_fetch_add(&recs.next_serial, 1));
    pthread_mutex_init(&sm->k.lock, NULL);
    HASH_ADD_KEYPTR(hh, recs.summaries, sm->k.mangled, strlen(sm->k.mangled), sm);
    return &sm->k;
}

void xmt_kernels_fold(xmt_kernel *dst, xmt_kernel *src)
{
    atomic_fetch_add(&dst->launches, atomic_exchange(&src->launches, 0));
    atomic_fetch_add(&dst->rewritten, atomic_exchange(&src->rewritten, 0));
    atomic_fetch_add(&dst->passed, atomic_exchange(&src->passed, 0));
    atomic_fetch_add(&dst->graph_launches, atomic_exchange(&src->graph_launches, 0));
    atomic_fetch_add(&dst->graph_nodes, atomic_exchange(&src->graph_nodes, 0));
    atomic_fetch_add(&dst->graph_rewritten, atomic_exchange(&src->graph_rewritten, 0));
    atomic_fetch_add(&dst->graph_untuned, atomic_exchange(&src->graph_untuned, 0));
    if (!dst->entry) dst->entry = src->entry;
    pthread_mutex_lock(&src->lock); /* always a record's, then its summary's */
    pthread_mutex_lock(&dst->lock);
    for (int i = 0; i < MAX_PARTS; i++) {
        const xmt_kernel_parts *p = atomic_load(&recs.parts[i]);
        if (p) p->fold(dst, src);
    }
    pthread_mutex_unlock(&dst->lock);
    pthread_mutex_unlock(&src->lock);
}

/* Forgets a live record: out of the table and the lists, its counts to its summary, its
 * struct to the quarantine (recs.lock held). */
static void retire_locked(xmt_kernel *k)
{
    if (k->in_table) {
        size_t i = slot_of(k->handle);
        while (atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed) != k->handle)
            i = (i + 1) & ((1u << XMT_KTAB_BITS) - 1);
        if (atomic_load_explicit(&xmt_ktab[i].rec, memory_order_relaxed) == k)
            atomic_store_explicit(&xmt_ktab[i].rec, NULL, memory_order_release);
        k->in_table = 0;
    }
    atomic_store(&k->stale, 1);
    unlink_locked(k);
    xmt_kernel *sm = summary_locked(k);
    if (sm) {
        /* First where late counts go (tuner.c's memos), then what is counted so far. */
        atomic_store(&k->retired_to, sm);
        xmt_kernels_fold(sm, k);
    }
    quarantine_locked(k);
}

xmt_kernel *xmt_kernels_get(CUfunction f)
{
    if (!f) return NULL;
    xmt_kernel *k = xmt_kernels_find(f);
    if (k) return k;
    /* Describe outside the lock: it calls the driver. Two threads may both describe a new
     * handle; the first to insert wins and the other's record is dropped. */
    xmt_kernel *fresh = make_record(f);
    if (!fresh) return NULL;
    uintptr_t h = (uintptr_t)f;
    pthread_mutex_lock(&recs.lock);
    size_t i = slot_of(h);
    for (;;) {
        uintptr_t kh = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed);
        if (kh == h || kh == 0) break;
        i = (i + 1) & ((1u << XMT_KTAB_BITS) - 1);
    }
    xmt_kernel *cur = NULL;
    uintptr_t kh = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed);
    if (kh == h) cur = atomic_load_explicit(&xmt_ktab[i].rec, memory_order_relaxed);
    if (!cur && kh == 0 && recs.table_used >= TABLE_LIMIT) {
        /* Table full: look among the live records. */
        for (xmt_kernel *r = recs.live_head; r; r = r->next)
            if (r->handle == h) cur = r;
    }
    if (cur) {
        quarantine_locked(fresh);
        CHECK_LOCKED();
        pthread_mutex_unlock(&recs.lock);
        return cur;
    }
    link_locked(fresh);
    if (kh == h) {
        atomic_store_explicit(&xmt_ktab[i].rec, fresh, memory_order_release);
        fresh->in_table = 1;
    } else if (recs.table_used < TABLE_LIMIT) {
        atomic_store_explicit(&xmt_ktab[i].rec, fresh, memory_order_release);
        atomic_store_explicit(&xmt_ktab[i].handle, h, memory_order_release);
        recs.table_used++;
        fresh->in_table = 1;
    }
    CHECK_LOCKED();
    pthread_mutex_unlock(&recs.lock);
    return fresh;
}

/* Retires every live record of one owner (recs.lock held). */
static void retire_owner_locked(uintptr_t owner)
{
    xmt_kernel **head;
    while ((head = owner_head_locked(owner, 0)) && *head)
        retire_locked(*head);
}

uintptr_t xmt_kernels_unload_begin(int what, const void *handle)
{
    uintptr_t m = 0;
    if (what != XMT_UNLOAD_LIBRARY || !handle) return 0;
    pthread_once(&recs.owner_once, owner_syms);
    XMT_IN_SHIM_SCOPE
    {
        CUmodule mod = NULL;
        if (recs.library_module && recs.library_module(&mod, (CUlibrary)handle) == CUDA_SUCCESS)
            m = (uintptr_t)mod;
    }
    return m;
}

void xmt_kernels_unloaded(int what, const void *handle, uintptr_t begun)
{
    pthread_mutex_lock(&recs.lock);
    if (what == XMT_UNLOAD_CONTEXT) {
        /* Its modules go with it (CUfunctions); libraries, and so CUkernels, stay. */
        for (xmt_kernel *r = recs.live_head, *next; r; r = next) {
            next = r->next;
            if (!r->is_cukernel || !r->owner) retire_locked(r);
        }
    } else {
        if (handle) retire_owner_locked((uintptr_t)handle);
        if (begun) retire_owner_locked(begun); /* the library's functions (its module) */
        retire_owner_locked(0);
    }
    CHECK_LOCKED();
    pthread_mutex_unlock(&recs.lock);
}

void xmt_kernels_forget_all(void)
{
    pthread_mutex_lock(&recs.lock);
    while (recs.live_head)
        retire_locked(recs.live_head);
    CHECK_LOCKED();
    pthread_mutex_unlock(&recs.lock);
}

static void atfork_child_one(xmt_kernel *r)
{
    atomic_store(&r->launches, 0);
    atomic_store(&r->rewritten, 0);
    atomic_store(&r->passed, 0);
    atomic_store(&r->graph_launches, 0);
    atomic_store(&r->graph_nodes, 0);
    atomic_store(&r->graph_rewritten, 0);
    atomic_store(&r->graph_untuned, 0);
    /* its holder, if any, is not in the child (held only for short updates) */
    pthread_mutex_init(&r->lock, NULL);
}

void xmt_kernels_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD) {
        for (xmt_kernel *r = recs.live_head; r; r = r->next)
            atfork_child_one(r);
        for (xmt_kernel *r = recs.quar_head; r; r = r->next)
            atfork_child_one(r);
        for (summary_t *sm = recs.summaries; sm; sm = sm->hh.next) {
            atfork_child_one(&sm->k);
            sm->k.keys_retired = 0;
        }
    }
    xmt_fork_mutex(&recs.lock, phase);
}

void xmt_kernels_foreach(void (*fn)(xmt_kernel *k, void *ud), void *ud)
{
    /* Folded and listed under the lock, reported outside it: fn logs, and the log's lock
     * is taken before this one at fork (a lock-order inversion otherwise). */
    pthread_mutex_lock(&recs.lock);
    size_t n = 0, cap = HASH_COUNT(recs.summaries);
    for (xmt_kernel *r = recs.live_head; r; r = r->next)
        cap++;
    xmt_kernel **list = malloc((cap ? cap : 1) * sizeof(xmt_kernel *));
    for (xmt_kernel *r = recs.live_head; r; r = r->next) {
        summary_t *sm = NULL;
        HASH_FIND_STR(recs.summaries, r->mangled, sm);
        if (sm) xmt_kernels_fold(&sm->k, r);
    }
    for (summary_t *sm = recs.summaries; list && sm; sm = sm->hh.next)
        list[n++] = &sm->k;
    for (xmt_kernel *r = recs.live_head; list && r; r = r->next) {
        summary_t *sm = NULL;
        HASH_FIND_STR(recs.summaries, r->mangled, sm);
        if (!sm) list[n++] = r;
    }
    pthread_mutex_unlock(&recs.lock);
    for (size_t i = 0; i < n; i++)
        fn(list[i], ud);
    free(list);
}

#if XMT_INVARIANTS
void xmt_kernels_check(void)
{
    pthread_mutex_lock(&recs.lock);
    check_locked(1);
    pthread_mutex_unlock(&recs.lock);
}

/* Takes the oldest live record off its owner's list, leaving it live. */
static void break_owner_locked(void)
{
    xmt_kernel *k = recs.live_head, **head = k ? owner_head_locked(k->owner, 0) : NULL;
    if (!head) return;
    if (k->prev_owner)
        k->prev_owner->next_owner = k->next_owner;
    else
        *head = k->next_owner;
    if (k->next_owner) k->next_owner->prev_owner = k->prev_owner;
}

void xmt_kernels_test_break(int what)
{
    pthread_mutex_lock(&recs.lock);
    if (what == XMT_KERNELS_BREAK_OWNER) break_owner_locked();
    if (what == XMT_KERNELS_BREAK_TABLE && recs.quar_head && recs.live_head &&
        recs.live_head->in_table) {
        size_t i = slot_of(recs.live_head->handle); /* a retired struct where a live one was */
        while (atomic_load(&xmt_ktab[i].handle) != recs.live_head->handle)
            i = (i + 1) & ((1u << XMT_KTAB_BITS) - 1);
        atomic_store(&xmt_ktab[i].rec, recs.quar_head);
    }
    if (what == XMT_KERNELS_BREAK_QUARANTINE) recs.quar_n++;
    if (what == XMT_KERNELS_BREAK_SERIAL && recs.live_head && recs.live_head->next)
        atomic_store(&recs.live_head->next->serial, atomic_load(&recs.live_head->serial));
    pthread_mutex_unlock(&recs.lock);
}
#endif
