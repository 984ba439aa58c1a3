/*
 * hook: dlsym, cuGetProcAddress and the exported entry points (see hook.h).
 *
 * Each real pointer the driver hands out for an entry point we interpose gets a wrapper
 * *slot* of its own: a small fixed set of generated wrapper functions per signature, each
 * bound to one real pointer. So a wrapper never guesses which variant to call — it calls
 * exactly the pointer the program would have received — and the same base name can come
 * back as different functions by version and flags (cuLaunchKernel vs _ptsz) without
 * confusion. When a signature's slots run out (never seen in practice: the driver has one
 * or two variants of each) the real pointer is handed out unwrapped, with a warning.
 *
 * Everything per signature is generated from its row in signatures.h: the slot wrappers,
 * the exported definitions and their prototypes. What is written here by hand is each
 * hook signature's handler (XMT_HANDLER), over the row's parameter names.
 */
#include "hook.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "bgverify.h"
#include "dispatch.h"
#include "driver.h"
#include "graph.h"
#include "kernels.h"
#include "launch.h"
#include "log.h"
#include "modload.h"
#include "options.h"
#include "realsym.h"
#include "shim.h"
#include "signatures.h"

/* ---- the signatures we interpose (signatures.h), and their names ------------------ */

typedef enum {
#define XMT_KIND_ENUM_(K) K_##K,
    XMT_ALL_SIGNATURES(XMT_KIND_ENUM_)
#undef XMT_KIND_ENUM_
        K_COUNT
} kind_t;

/* cuGetProcAddress names a base name and a version; some versions of a base name are
 * another symbol, with another signature, that entries.h lists under its own name. The
 * newest row at or below the version asked for applies. */
static const struct {
    const char *base;
    int version;
    const char *symbol;
} versioned[] = {
    {"cuGetProcAddress", 12000, "cuGetProcAddress_v2"},
    {"cuGraphAddKernelNode", 12000, "cuGraphAddKernelNode_v2"},
    {"cuGraphKernelNodeSetParams", 12000, "cuGraphKernelNodeSetParams_v2"},
    {"cuGraphExecKernelNodeSetParams", 12000, "cuGraphExecKernelNodeSetParams_v2"},
    {"cuGraphInstantiate", 11000, "cuGraphInstantiate_v2"},
    {"cuGraphInstantiate", 12000, "cuGraphInstantiateWithFlags"},
    {"cuGraphExecUpdate", 12000, "cuGraphExecUpdate_v2"},
    {"cuModuleGetGlobal", 3020, "cuModuleGetGlobal_v2"},
};

static const char *versioned_name(const char *name, int version)
{
    const char *best = name;
    int best_version = -1;
    for (size_t i = 0; i < sizeof versioned / sizeof versioned[0]; i++)
        if (version >= versioned[i].version && versioned[i].version > best_version &&
            strcmp(name, versioned[i].base) == 0) {
            best = versioned[i].symbol;
            best_version = versioned[i].version;
        }
    return best;
}

/* cuda.h renames some of the names we list (cuGetProcAddress to _v2, cuCtxDestroy to
 * _v2): undone here, so that each name in entries.h means that symbol exactly. */
#undef cuGetProcAddress
#undef cuCtxDestroy
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphLaunch
#undef cuGraphInstantiateWithParams
#undef cuModuleGetGlobal
#define XMT_IF_0(...)
#define XMT_IF_1(...) __VA_ARGS__

static const struct {
    const char *name;
    kind_t kind;
    int ptsz;
} names[] = {
#define XMT_ENTRY(name, kind, ptsz, exported) {#name, K_##kind, ptsz},
#include "entries.h"
#undef XMT_ENTRY
};

XMT_NO_SANITIZE static int kind_of(const char *name, int *ptsz)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) {
            *ptsz = names[i].ptsz;
            return (int)names[i].kind;
        }
    return -1;
}

/* Does a signature have a _ptsz entry point? Then cuGetProcAddress hands that variant out
 * for CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM; for the others the flag changes
 * nothing. */
static int has_ptsz(int kind)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((int)names[i].kind == kind && names[i].ptsz) return 1;
    return 0;
}

/* The entry point's name of a signature that one entry point alone has (the loads). */
static const char *name_of_kind(kind_t kind)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].kind == kind) return names[i].name;
    return "?";
}

/* ---- what each signature does: its handler -------------------------------------------
 * on_<KIND>(real, ptsz, the row's parameters): real is the exact driver entry point the
 * program would have called, ptsz says whether stream 0 means the per-thread stream. */

#define XMT_HANDLER(K)                                                                             \
    static inline __attribute__((always_inline)) CUresult on_##K(                                  \
        void *real __attribute__((unused)), int ptsz __attribute__((unused)), XMT_PARAMS(K))

/* Launches: dispatch.h's fast path, generated from the row. */
#define XMT_LAUNCH_HANDLER_(K)                                                                     \
    XMT_HANDLER(K)                                                                                 \
    {                                                                                              \
        return xmt_dispatch_##K(real, ptsz, XMT_ARGS(K));                                          \
    }
XMT_LAUNCH_SIGNATURES(XMT_LAUNCH_HANDLER_)
#undef XMT_LAUNCH_HANDLER_

/* Passed through, and counted (modload.h): cuLinkComplete (its cubin reaches a load of
 * its own). */
#define XMT_PASS_HANDLER_(K)                                                                       \
    XMT_HANDLER(K)                                                                                 \
    {                                                                                              \
        CUresult r = ((xmt_pfn_##K)real)(XMT_ARGS(K));                                             \
        if (!xmt_in_shim) xmt_modload_seen(name_of_kind(K_##K), r);                                \
        return r;                                                                                  \
    }
XMT_PASS_SIGNATURES(XMT_PASS_HANDLER_)
#undef XMT_PASS_HANDLER_

static CUresult getproc_after(CUresult r, const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    if (r == CUDA_SUCCESS && pfn && *pfn && sym && !xmt_in_shim)
        *pfn = xmt_wrap_proc(sym, *pfn, ver, flags);
    return r;
}

XMT_HANDLER(GETPROC1)
{
    return getproc_after(((xmt_pfn_GETPROC1)real)(XMT_ARGS(GETPROC1)), sym, pfn, ver, flags);
}
XMT_HANDLER(GETPROC2)
{
    return getproc_after(((xmt_pfn_GETPROC2)real)(XMT_ARGS(GETPROC2)), sym, pfn, ver, flags);
}

/* An unload forgets what it unloaded (kernels.c, and the image: modload.c). */
#define UNLOAD_BODY(K, what)                                                                       \
    do {                                                                                           \
        if (xmt_in_shim) return ((xmt_pfn_##K)real)(h);                                            \
        uintptr_t begun = xmt_kernels_unload_begin(what, h);                                       \
        CUresult r = ((xmt_pfn_##K)real)(h);                                                       \
        if (r == CUDA_SUCCESS) {                                                                   \
            xmt_kernels_unloaded(what, h, begun);                                                  \
            if ((what) != XMT_UNLOAD_CONTEXT) xmt_modload_forget(h);                               \
        }                                                                                          \
        return r;                                                                                  \
    } while (0)
XMT_HANDLER(UNLOADM)
{
    UNLOAD_BODY(UNLOADM, XMT_UNLOAD_MODULE);
}
XMT_HANDLER(UNLOADL)
{
    UNLOAD_BODY(UNLOADL, XMT_UNLOAD_LIBRARY);
}
XMT_HANDLER(UNLOADC)
{
    UNLOAD_BODY(UNLOADC, XMT_UNLOAD_CONTEXT);
}

/* The module and library loads: counted, and kept for the trial helper (modload.h). */
#define LOAD_BODY(K, owner, library, image, from_file, n, opts, vals)                              \
    do {                                                                                           \
        CUresult r = ((xmt_pfn_##K)real)(XMT_ARGS(K));                                             \
        if (xmt_in_shim) return r;                                                                 \
        xmt_modload_seen(name_of_kind(K_##K), r);                                                  \
        if (r == CUDA_SUCCESS && (owner)) {                                                        \
            xmt_modload_loaded(name_of_kind(K_##K), *(owner), library, image, from_file, n, opts,  \
                               vals);                                                              \
            xmt_bgverify_warm();                                                                   \
        }                                                                                          \
        return r;                                                                                  \
    } while (0)
XMT_HANDLER(MLOAD)
{
    LOAD_BODY(MLOAD, m, 0, path, 1, 0, NULL, NULL);
}
XMT_HANDLER(MLOADDATA)
{
    LOAD_BODY(MLOADDATA, m, 0, image, 0, 0, NULL, NULL);
}
XMT_HANDLER(MLOADDATAEX)
{
    LOAD_BODY(MLOADDATAEX, m, 0, image, 0, n, opts, vals);
}
XMT_HANDLER(MLOADFATBIN)
{
    LOAD_BODY(MLOADFATBIN, m, 0, fatbin, 0, 0, NULL, NULL);
}
XMT_HANDLER(LLOADDATA)
{
    LOAD_BODY(LLOADDATA, lib, 1, code, 0, nj, jo, jv);
}
XMT_HANDLER(LLOADFILE)
{
    LOAD_BODY(LLOADFILE, lib, 1, path, 1, nj, jo, jv);
}

/* A module global's address asked for (cudaMemcpyToSymbol, CuPy's get_global): the
 * program may set it, so the trial helper is given its value (modload.h). */
#define GLOBAL_BODY(K, owner)                                                                      \
    do {                                                                                           \
        CUresult r = ((xmt_pfn_##K)real)(XMT_ARGS(K));                                             \
        if (!xmt_in_shim && r == CUDA_SUCCESS && dp)                                               \
            xmt_modload_global(owner, gname, *dp, bytes ? *bytes : 0);                             \
        return r;                                                                                  \
    } while (0)
/* Texture and surface objects: their handles are known, so that a launch passing one is
 * not given to the trial helper, which cannot see it (modload.h). */
XMT_HANDLER(TEXCREATE)
{
    CUresult r = ((xmt_pfn_TEXCREATE)real)(XMT_ARGS(TEXCREATE));
    if (!xmt_in_shim && r == CUDA_SUCCESS && pt) xmt_modload_texobj(*pt, 1);
    return r;
}
XMT_HANDLER(SURFCREATE)
{
    CUresult r = ((xmt_pfn_SURFCREATE)real)(XMT_ARGS(SURFCREATE));
    if (!xmt_in_shim && r == CUDA_SUCCESS && ps) xmt_modload_texobj(*ps, 1);
    return r;
}
XMT_HANDLER(TEXDESTROY)
{
    CUresult r = ((xmt_pfn_TEXDESTROY)real)(XMT_ARGS(TEXDESTROY));
    if (!xmt_in_shim && r == CUDA_SUCCESS) xmt_modload_texobj(tex, 0);
    return r;
}
XMT_HANDLER(SURFDESTROY)
{
    CUresult r = ((xmt_pfn_SURFDESTROY)real)(XMT_ARGS(SURFDESTROY));
    if (!xmt_in_shim && r == CUDA_SUCCESS) xmt_modload_texobj(surf, 0);
    return r;
}

XMT_HANDLER(MGLOBAL)
{
    GLOBAL_BODY(MGLOBAL, hmod);
}
XMT_HANDLER(LGLOBAL)
{
    GLOBAL_BODY(LGLOBAL, lib);
}

/* The graph calls: graph.c does the work (the number is the kernel node parameters'
 * version); instantiation and update are told what the driver made. */
XMT_HANDLER(GADD1)
{
    return xmt_graph_add_node(real, 1, ph, g, d, nd, p);
}
XMT_HANDLER(GADD2)
{
    return xmt_graph_add_node(real, 2, ph, g, d, nd, p);
}
XMT_HANDLER(GSET1)
{
    return xmt_graph_set_node(real, 1, n, p);
}
XMT_HANDLER(GSET2)
{
    return xmt_graph_set_node(real, 2, n, p);
}
XMT_HANDLER(GXSET1)
{
    return xmt_graph_exec_set_node(real, 1, x, n, p);
}
XMT_HANDLER(GXSET2)
{
    return xmt_graph_exec_set_node(real, 2, x, n, p);
}
XMT_HANDLER(GINST)
{
    return xmt_graph_instantiated(((xmt_pfn_GINST)real)(XMT_ARGS(GINST)), px, g);
}
XMT_HANDLER(GINSTF)
{
    return xmt_graph_instantiated(((xmt_pfn_GINSTF)real)(XMT_ARGS(GINSTF)), px, g);
}
XMT_HANDLER(GINSTP)
{
    return xmt_graph_instantiated(((xmt_pfn_GINSTP)real)(XMT_ARGS(GINSTP)), px, g);
}
XMT_HANDLER(GUPD1)
{
    return xmt_graph_updated(((xmt_pfn_GUPD1)real)(XMT_ARGS(GUPD1)), x, g);
}
XMT_HANDLER(GUPD2)
{
    return xmt_graph_updated(((xmt_pfn_GUPD2)real)(XMT_ARGS(GUPD2)), x, g);
}
XMT_HANDLER(GLAUNCH)
{
    return xmt_graph_launch(real, x, s);
}
XMT_HANDLER(GXDESTROY)
{
    return xmt_graph_exec_destroy(real, x);
}

/* ---- wrapper slots ------------------------------------------------------------------ */

#define NSLOTS 8
typedef struct {
    _Atomic(void *) real;
    int ptsz;
} slot_t;
static slot_t slots[K_COUNT][NSLOTS];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

#define REAL(k, i) atomic_load_explicit(&slots[k][i].real, memory_order_relaxed)

/* NSLOTS wrappers per signature, w_<KIND>_<i>, each bound to slot i of its kind. */
#define DEF_WRAPPER_(K, i)                                                                         \
    static CUresult w_##K##_##i(XMT_PARAMS(K))                                                     \
    {                                                                                              \
        return on_##K(REAL(K_##K, i), slots[K_##K][i].ptsz, XMT_ARGS(K));                          \
    }
#define DEF_WRAPPERS_(K)                                                                           \
    DEF_WRAPPER_(K, 0)                                                                             \
    DEF_WRAPPER_(K, 1)                                                                             \
    DEF_WRAPPER_(K, 2)                                                                             \
    DEF_WRAPPER_(K, 3)                                                                             \
    DEF_WRAPPER_(K, 4) DEF_WRAPPER_(K, 5) DEF_WRAPPER_(K, 6) DEF_WRAPPER_(K, 7)
XMT_ALL_SIGNATURES(DEF_WRAPPERS_)
#undef DEF_WRAPPERS_
#undef DEF_WRAPPER_

static void *const wrappers[K_COUNT][NSLOTS] = {
#define LIST_WRAPPERS_(K)                                                                          \
    [K_##K] = {(void *)w_##K##_0, (void *)w_##K##_1, (void *)w_##K##_2, (void *)w_##K##_3,         \
               (void *)w_##K##_4, (void *)w_##K##_5, (void *)w_##K##_6, (void *)w_##K##_7},
    XMT_ALL_SIGNATURES(LIST_WRAPPERS_)
#undef LIST_WRAPPERS_
};

/* ---- exported entry points (programs linked with -lcuda) ---------------------------- */

/* Their prototypes: cuda.h declares some only under other names or conditions. */
#define XMT_ENTRY(name, kind, ptsz, exported)                                                      \
    XMT_IF_##exported(XMT_EXPORT CUresult name(XMT_PARAMS(kind));)
#include "entries.h"
#undef XMT_ENTRY

/* Our own exports: the real dlsym finds these for RTLD_DEFAULT lookups, and a stand-in
 * driver without -Bsymbolic may even hand them out as its own. They are wrappers already. */
static int is_our_export(void *p)
{
    return 0
#define XMT_ENTRY(name, kind, ptsz, exported) XMT_IF_##exported(|| p == (void *)(name))
#include "entries.h"
#undef XMT_ENTRY
        ;
}

static void *bind_slot(int kind, void *real, int ptsz)
{
    for (int i = 0; i < NSLOTS; i++) {
        void *r = REAL(kind, i);
        if (r == real && slots[kind][i].ptsz == ptsz) return wrappers[kind][i];
        if (!r) break;
    }
    pthread_mutex_lock(&slot_lock);
    void *w = NULL;
    int i;
    for (i = 0; i < NSLOTS; i++) {
        void *r = REAL(kind, i);
        if (r == real && slots[kind][i].ptsz == ptsz) {
            w = wrappers[kind][i];
            break;
        }
        if (!r) {
            slots[kind][i].ptsz = ptsz;
            atomic_store_explicit(&slots[kind][i].real, real, memory_order_release);
            w = wrappers[kind][i];
            break;
        }
    }
    pthread_mutex_unlock(&slot_lock);
    if (!w) {
        static atomic_int warned;
        if (xmt_first_time(&warned))
            xmt_warn("more than %d variants of one driver entry point; further ones pass "
                     "through unwrapped",
                     NSLOTS);
        return real;
    }
    return w;
}

void *xmt_wrap_proc(const char *name, void *real, int version, cuuint64_t flags)
{
    int ptsz = 0;
    int kind = kind_of(versioned_name(name, version), &ptsz);
    if (kind < 0 || !real || is_our_export(real)) return real;
    if (has_ptsz(kind) && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) ptsz = 1;
    if (xmt_activate() == XMT_MODE_OFF) return real;
    return bind_slot(kind, real, ptsz);
}

XMT_NO_SANITIZE void *xmt_dlsym_hook(void *handle, const char *name)
{
    if (!xmt_real_dlsym_ptr) xmt_find_real_dlsym();
    /* Only cu[A-Z]* concerns us (a looser prefix broke cuDNN in another shim). */
    if (xmt_in_shim || !name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
        return NULL;
    if (handle == RTLD_NEXT) /* relative to the caller: only glibc can answer */
        return NULL;
    int ptsz = 0;
    int kind = kind_of(name, &ptsz);
    if (kind < 0) return NULL;
    if (xmt_activate() == XMT_MODE_OFF) return NULL;
    void *real = NULL;
    XMT_IN_SHIM_SCOPE
    {
        real = xmt_real_dlsym_ptr(handle, name);
    }
    if (!real || is_our_export(real)) return real;
    return bind_slot(kind, real, ptsz);
}

/* The real definition behind one of our exports, found once in the driver's handle. */
static void *export_real(const char *name, _Atomic(void *) *cache)
{
    void *p = atomic_load_explicit(cache, memory_order_acquire);
    if (__builtin_expect(p != NULL, 1)) return p;
    xmt_activate();
    /* The driver the shim opened; failing that (XMATUNE_LIBCUDA wrong, say), the next
     * definition after us, or the libcuda.so.1 the program has loaded: our exports must
     * reach the driver whatever else failed, or the program would lose its CUDA calls. */
    p = xmt_driver_sym(name);
    if (!p || is_our_export(p)) {
        XMT_IN_SHIM_SCOPE
        {
            p = xmt_real_dlsym(RTLD_NEXT, name);
            if (!p || is_our_export(p)) {
                void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
                p = h ? xmt_real_dlsym(h, name) : NULL;
                if (h) dlclose(h);
            }
        }
    }
    if (p == NULL || is_our_export(p)) {
        static atomic_int warned;
        if (xmt_first_time(&warned)) xmt_warn("the CUDA driver has no %s", name);
        return NULL;
    }
    atomic_store_explicit(cache, p, memory_order_release);
    return p;
}

#define EXPORT_REAL(name)                                                                          \
    static _Atomic(void *) real_##name;                                                            \
    void *real = export_real(#name, &real_##name);                                                 \
    if (!real) return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;

/* The definitions, one per exported entry of entries.h: the slot wrappers' handler with
 * the pointer found once, or straight through when the shim is off. */
#define XMT_ENTRY(name, kind, ptsz, exported)                                                      \
    XMT_IF_##exported(XMT_EXPORT CUresult name(XMT_PARAMS(kind)) {                                 \
        EXPORT_REAL(name)                                                                          \
        if (xmt_opt.mode == XMT_MODE_OFF) return ((xmt_pfn_##kind)real)(XMT_ARGS(kind));           \
        return on_##kind(real, ptsz, XMT_ARGS(kind));                                              \
    })
#include "entries.h"
#undef XMT_ENTRY
