/*
 * kernels: per-handle records and their lock-free table (see kernels.h).
 */
#include "kernels.h"

#include <fnmatch.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"
#include "options.h"
#include "xmt_policy.h"

struct xmt_kslot xmt_ktab[1u << XMT_KTAB_BITS];
struct xmt_policy_set *xmt_policies;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t table_used; /* slots with a handle (they are never emptied) */
static xmt_kernel *all_head, *all_tail;
/* Past this load the table stops taking new handles (probes stay short); such kernels
 * are then found by a walk of the record list, under the lock: correct, only slower. */
#define TABLE_LIMIT ((1u << XMT_KTAB_BITS) / 4 * 3)

static size_t slot_of(uintptr_t h)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - XMT_KTAB_BITS));
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

/* Which policy entry, if any, may tune this kernel. */
static void attach_policy(xmt_kernel *k)
{
    if (!xmt_policies || (xmt_opt.mode != XMT_MODE_TUNE && xmt_opt.mode != XMT_MODE_REPLAY &&
                          xmt_opt.mode != XMT_MODE_DISCOVER))
        return;
    const xmt_entry *e = xmt_policy_match(xmt_policies, k->mangled, xmt_warn_diag, NULL);
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

static xmt_kernel *make_record(CUfunction f)
{
    xmt_kernel *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    k->handle = (uintptr_t)f;
    pthread_mutex_init(&k->lock, NULL);
    XMT_IN_SHIM_SCOPE describe(k, f);
    if (!k->mangled || !k->demangled) {
        free(k->mangled);
        free(k->demangled);
        free(k->offsets);
        free(k->sizes);
        free(k);
        return NULL;
    }
    attach_policy(k);
    k->passthrough = xmt_opt.mode != XMT_MODE_DISCOVER && !k->entry;
    return k;
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
    pthread_mutex_lock(&table_lock);
    size_t i = slot_of(h);
    for (;;) {
        uintptr_t kh = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed);
        if (kh == h || kh == 0) break;
        i = (i + 1) & ((1u << XMT_KTAB_BITS) - 1);
    }
    xmt_kernel *cur = NULL;
    uintptr_t kh = atomic_load_explicit(&xmt_ktab[i].handle, memory_order_relaxed);
    if (kh == h) cur = atomic_load_explicit(&xmt_ktab[i].rec, memory_order_relaxed);
    if (!cur && kh == 0 && table_used >= TABLE_LIMIT) {
        /* Table full: look in the list (the newest live record of this handle). */
        for (xmt_kernel *r = all_head; r; r = r->next_all)
            if (r->handle == h && !atomic_load(&r->stale)) cur = r;
    }
    if (cur) {
        pthread_mutex_unlock(&table_lock);
        free(fresh->mangled);
        free(fresh->demangled);
        free(fresh->offsets);
        free(fresh->sizes);
        pthread_mutex_destroy(&fresh->lock);
        free(fresh);
        return cur;
    }
    if (all_tail)
        all_tail->next_all = fresh;
    else
        all_head = fresh;
    all_tail = fresh;
    if (kh == h) {
        atomic_store_explicit(&xmt_ktab[i].rec, fresh, memory_order_release);
    } else if (table_used < TABLE_LIMIT) {
        atomic_store_explicit(&xmt_ktab[i].rec, fresh, memory_order_release);
        atomic_store_explicit(&xmt_ktab[i].handle, h, memory_order_release);
        table_used++;
    }
    pthread_mutex_unlock(&table_lock);
    return fresh;
}

void xmt_kernels_forget_all(void)
{
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < (1u << XMT_KTAB_BITS); i++)
        atomic_store_explicit(&xmt_ktab[i].rec, NULL, memory_order_release);
    /* Records past the table limit are marked stale so the list walk skips them. */
    for (xmt_kernel *r = all_head; r; r = r->next_all)
        atomic_store(&r->stale, 1);
    pthread_mutex_unlock(&table_lock);
}

void xmt_kernels_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD)
        for (xmt_kernel *r = all_head; r; r = r->next_all) {
            atomic_store(&r->launches, 0);
            atomic_store(&r->rewritten, 0);
            atomic_store(&r->passed, 0);
            /* its holder, if any, is not in the child (held only for short updates) */
            pthread_mutex_init(&r->lock, NULL);
        }
    xmt_fork_mutex(&table_lock, phase);
}

void xmt_kernels_foreach(void (*fn)(xmt_kernel *k, void *ud), void *ud)
{
    pthread_mutex_lock(&table_lock);
    xmt_kernel *head = all_head;
    pthread_mutex_unlock(&table_lock);
    /* Records are appended, never removed: walking without the lock is safe. */
    for (xmt_kernel *r = head; r; r = r->next_all)
        fn(r, ud);
}
