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
 */
#include "hook.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "dispatch.h"
#include "driver.h"
#include "graph.h"
#include "kernels.h"
#include "launch.h"
#include "log.h"
#include "options.h"
#include "realsym.h"
#include "shim.h"

/* ---- the signatures we interpose, and their names ---------------------------------- */

enum {
    K_GETPROC1,
    K_GETPROC2,
    K_LAUNCH,
    K_EX,
    K_COOP,
    K_UNLOAD,
    K_GADD1,
    K_GADD2,
    K_GSET1,
    K_GSET2,
    K_GXSET1,
    K_GXSET2,
    K_GINST,
    K_GINSTF,
    K_GINSTP,
    K_GUPD1,
    K_GUPD2,
    K_GLAUNCH,
    K_GXDESTROY,
    K_COUNT
};

/* Kinds whose _ptsz variant cuGetProcAddress hands out for
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (for the others the flag changes nothing:
 * UNLOAD's slot field says what the handle names). */
static int has_ptsz(int kind)
{
    return kind == K_LAUNCH || kind == K_EX || kind == K_COOP || kind == K_GLAUNCH ||
           kind == K_GINSTP;
}

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
#define XMT_IF_0(...)
#define XMT_IF_1(...) __VA_ARGS__

/* What an unload entry point's handle names (kernels.h), from its handle type. */
#define XMT_UNLOAD_WHAT(type)                                                                      \
    _Generic((type)0, CUmodule                                                                     \
             : XMT_UNLOAD_MODULE, CUlibrary                                                        \
             : XMT_UNLOAD_LIBRARY, CUcontext                                                       \
             : XMT_UNLOAD_CONTEXT)
#define XMT_WHAT_CUmodule XMT_UNLOAD_MODULE
#define XMT_WHAT_CUlibrary XMT_UNLOAD_LIBRARY
#define XMT_WHAT_CUcontext XMT_UNLOAD_CONTEXT

/* ptsz: for UNLOAD entries, what the handle names instead (a slot's ptsz carries it). */
static const struct {
    const char *name;
    int kind, ptsz;
} names[] = {
#define XMT_PTSZ_GETPROC1(ptsz, handle) (ptsz)
#define XMT_PTSZ_GETPROC2(ptsz, handle) (ptsz)
#define XMT_PTSZ_LAUNCH(ptsz, handle) (ptsz)
#define XMT_PTSZ_EX(ptsz, handle) (ptsz)
#define XMT_PTSZ_COOP(ptsz, handle) (ptsz)
#define XMT_PTSZ_UNLOAD(ptsz, handle) XMT_WHAT_##handle
#define XMT_PTSZ_GADD1(ptsz, handle) 0
#define XMT_PTSZ_GADD2(ptsz, handle) 0
#define XMT_PTSZ_GSET1(ptsz, handle) 0
#define XMT_PTSZ_GSET2(ptsz, handle) 0
#define XMT_PTSZ_GXSET1(ptsz, handle) 0
#define XMT_PTSZ_GXSET2(ptsz, handle) 0
#define XMT_PTSZ_GINST(ptsz, handle) 0
#define XMT_PTSZ_GINSTF(ptsz, handle) 0
#define XMT_PTSZ_GINSTP(ptsz, handle) (ptsz)
#define XMT_PTSZ_GUPD1(ptsz, handle) 0
#define XMT_PTSZ_GUPD2(ptsz, handle) 0
#define XMT_PTSZ_GLAUNCH(ptsz, handle) (ptsz)
#define XMT_PTSZ_GXDESTROY(ptsz, handle) 0
#define XMT_ENTRY(name, kind, ptsz, exported, handle)                                              \
    {#name, K_##kind, XMT_PTSZ_##kind(ptsz, handle)},
#include "entries.h"
#undef XMT_ENTRY
};

XMT_NO_SANITIZE static int kind_of(const char *name, int *ptsz)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) {
            *ptsz = names[i].ptsz;
            return names[i].kind;
        }
    return -1;
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
#define REP8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define LIST8(p)                                                                                   \
    {                                                                                              \
        p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7                                             \
    }

static CUresult getproc_after(CUresult r, const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    if (r == CUDA_SUCCESS && pfn && *pfn && sym && !xmt_in_shim)
        *pfn = xmt_wrap_proc(sym, *pfn, ver, flags);
    return r;
}

#define DEF_GP1(i)                                                                                 \
    static CUresult gp1_w##i(const char *sym, void **pfn, int ver, cuuint64_t flags)               \
    {                                                                                              \
        CUresult (*real)(const char *, void **, int, cuuint64_t) = REAL(K_GETPROC1, i);            \
        return getproc_after(real(sym, pfn, ver, flags), sym, pfn, ver, flags);                    \
    }
#define DEF_GP2(i)                                                                                 \
    static CUresult gp2_w##i(const char *sym, void **pfn, int ver, cuuint64_t flags,               \
                             CUdriverProcAddressQueryResult *st)                                   \
    {                                                                                              \
        CUresult (*real)(const char *, void **, int, cuuint64_t,                                   \
                         CUdriverProcAddressQueryResult *) = REAL(K_GETPROC2, i);                  \
        return getproc_after(real(sym, pfn, ver, flags, st), sym, pfn, ver, flags);                \
    }
#define DEF_LAUNCH(i)                                                                              \
    static CUresult launch_w##i(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,  \
                                unsigned by, unsigned bz, unsigned sh, CUstream s, void **p,       \
                                void **e)                                                          \
    {                                                                                              \
        return xmt_dispatch_launch(REAL(K_LAUNCH, i), slots[K_LAUNCH][i].ptsz, f, gx, gy, gz, bx,  \
                                   by, bz, sh, s, p, e);                                           \
    }
#define DEF_EX(i)                                                                                  \
    static CUresult ex_w##i(const CUlaunchConfig *c, CUfunction f, void **p, void **e)             \
    {                                                                                              \
        return xmt_dispatch_ex(REAL(K_EX, i), slots[K_EX][i].ptsz, c, f, p, e);                    \
    }
#define DEF_COOP(i)                                                                                \
    static CUresult coop_w##i(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,    \
                              unsigned by, unsigned bz, unsigned sh, CUstream s, void **p)         \
    {                                                                                              \
        return xmt_dispatch_coop(REAL(K_COOP, i), slots[K_COOP][i].ptsz, f, gx, gy, gz, bx, by,    \
                                 bz, sh, s, p);                                                    \
    }
/* An unload forgets what it unloaded (kernels.c); the slot's ptsz says what that is. */
static CUresult unloaded(CUresult (*real)(void *), int what, void *h)
{
    if (xmt_in_shim) return real(h);
    uintptr_t begun = xmt_kernels_unload_begin(what, h);
    CUresult r = real(h);
    if (r == CUDA_SUCCESS) xmt_kernels_unloaded(what, h, begun);
    return r;
}

#define DEF_UNLOAD(i)                                                                              \
    static CUresult unload_w##i(void *h)                                                           \
    {                                                                                              \
        return unloaded(REAL(K_UNLOAD, i), slots[K_UNLOAD][i].ptsz, h);                            \
    }

/* The graph calls: graph.c does the work; instantiation and update are told what the
 * driver made. */
typedef CUresult (*pfn_ginst)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
typedef CUresult (*pfn_ginstf)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*pfn_ginstp)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
typedef CUresult (*pfn_gupd1)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
typedef CUresult (*pfn_gupd2)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);

#define GADD_BODY(real, ver) return xmt_graph_add_node(real, ver, ph, g, d, nd, p)
#define GSET_BODY(real, ver) return xmt_graph_set_node(real, ver, n, p)
#define GXSET_BODY(real, ver) return xmt_graph_exec_set_node(real, ver, x, n, p)
#define GINST_BODY(real, ver)                                                                      \
    return xmt_graph_instantiated(((pfn_ginst)(real))(px, g, e, l, ln), px, g)
#define GINSTF_BODY(real, ver) return xmt_graph_instantiated(((pfn_ginstf)(real))(px, g, fl), px, g)
#define GINSTP_BODY(real, ver) return xmt_graph_instantiated(((pfn_ginstp)(real))(px, g, ip), px, g)
#define GUPD1_BODY(real, ver) return xmt_graph_updated(((pfn_gupd1)(real))(x, g, e, res), x, g)
#define GUPD2_BODY(real, ver) return xmt_graph_updated(((pfn_gupd2)(real))(x, g, info), x, g)
#define GLAUNCH_BODY(real, ver) return xmt_graph_launch(real, x, s)
#define GXDESTROY_BODY(real, ver) return xmt_graph_exec_destroy(real, x)

#define SIG_GADD(name, t)                                                                          \
    CUresult name(CUgraphNode *ph, CUgraph g, const CUgraphNode *d, size_t nd, const t *p)
#define SIG_GADD1(name) SIG_GADD(name, CUDA_KERNEL_NODE_PARAMS_v1)
#define SIG_GADD2(name) SIG_GADD(name, CUDA_KERNEL_NODE_PARAMS_v2)
#define SIG_GSET1(name) CUresult name(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
#define SIG_GSET2(name) CUresult name(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
#define SIG_GXSET1(name)                                                                           \
    CUresult name(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
#define SIG_GXSET2(name)                                                                           \
    CUresult name(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
#define SIG_GINST(name)                                                                            \
    CUresult name(CUgraphExec *px, CUgraph g, CUgraphNode *e, char *l, size_t ln)
#define SIG_GINSTF(name) CUresult name(CUgraphExec *px, CUgraph g, unsigned long long fl)
#define SIG_GINSTP(name)                                                                           \
    CUresult name(CUgraphExec *px, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *ip)
#define SIG_GUPD1(name)                                                                            \
    CUresult name(CUgraphExec x, CUgraph g, CUgraphNode *e, CUgraphExecUpdateResult *res)
#define SIG_GUPD2(name) CUresult name(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
#define SIG_GLAUNCH(name) CUresult name(CUgraphExec x, CUstream s)
#define SIG_GXDESTROY(name) CUresult name(CUgraphExec x)

#define VER_GADD1 1
#define VER_GADD2 2
#define VER_GSET1 1
#define VER_GSET2 2
#define VER_GXSET1 1
#define VER_GXSET2 2
#define VER_GINST 0
#define VER_GINSTF 0
#define VER_GINSTP 0
#define VER_GUPD1 0
#define VER_GUPD2 0
#define VER_GLAUNCH 0
#define VER_GXDESTROY 0
#define BODY_GADD1 GADD_BODY
#define BODY_GADD2 GADD_BODY
#define BODY_GSET1 GSET_BODY
#define BODY_GSET2 GSET_BODY
#define BODY_GXSET1 GXSET_BODY
#define BODY_GXSET2 GXSET_BODY
#define BODY_GINST GINST_BODY
#define BODY_GINSTF GINSTF_BODY
#define BODY_GINSTP GINSTP_BODY
#define BODY_GUPD1 GUPD1_BODY
#define BODY_GUPD2 GUPD2_BODY
#define BODY_GLAUNCH GLAUNCH_BODY
#define BODY_GXDESTROY GXDESTROY_BODY

#define DEF_G(K, i)                                                                                \
    static SIG_##K(g_##K##_w##i)                                                                   \
    {                                                                                              \
        BODY_##K(REAL(K_##K, i), VER_##K);                                                         \
    }
/* clang-format off */
#define GRAPH_KINDS(M) \
    M(GADD1) M(GADD2) M(GSET1) M(GSET2) M(GXSET1) M(GXSET2) M(GINST) M(GINSTF) M(GINSTP) \
    M(GUPD1) M(GUPD2) M(GLAUNCH) M(GXDESTROY)
/* clang-format on */
#define DEF_G8(K)                                                                                  \
    DEF_G(K, 0) DEF_G(K, 1) DEF_G(K, 2) DEF_G(K, 3) DEF_G(K, 4) DEF_G(K, 5) DEF_G(K, 6) DEF_G(K, 7)
GRAPH_KINDS(DEF_G8)

REP8(DEF_GP1)
REP8(DEF_GP2)
REP8(DEF_LAUNCH)
REP8(DEF_EX)
REP8(DEF_COOP)
REP8(DEF_UNLOAD)

static void *const wrappers[K_COUNT][NSLOTS] = {LIST8((void *)gp1_w),    LIST8((void *)gp2_w),
                                                LIST8((void *)launch_w), LIST8((void *)ex_w),
                                                LIST8((void *)coop_w),   LIST8((void *)unload_w),
#define LIST_G(K) LIST8((void *)g_##K##_w),
                                                GRAPH_KINDS(LIST_G)
#undef LIST_G
};

/* ---- exported entry points (programs linked with -lcuda) ---------------------------- */

/* Their prototypes: cuda.h declares some only under other names or conditions. */
#define DECL_GETPROC1(name, t) CUresult name(const char *, void **, int, cuuint64_t)
#define DECL_GETPROC2(name, t)                                                                     \
    CUresult name(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *)
#define DECL_LAUNCH(name, t)                                                                       \
    CUresult name(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,          \
                  unsigned, CUstream, void **, void **)
#define DECL_EX(name, t) CUresult name(const CUlaunchConfig *, CUfunction, void **, void **)
#define DECL_COOP(name, t)                                                                         \
    CUresult name(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,          \
                  unsigned, CUstream, void **)
#define DECL_UNLOAD(name, t) CUresult name(t)
#define DECL_GADD1(name, t) SIG_GADD1(name)
#define DECL_GADD2(name, t) SIG_GADD2(name)
#define DECL_GSET1(name, t) SIG_GSET1(name)
#define DECL_GSET2(name, t) SIG_GSET2(name)
#define DECL_GXSET1(name, t) SIG_GXSET1(name)
#define DECL_GXSET2(name, t) SIG_GXSET2(name)
#define DECL_GINST(name, t) SIG_GINST(name)
#define DECL_GINSTF(name, t) SIG_GINSTF(name)
#define DECL_GINSTP(name, t) SIG_GINSTP(name)
#define DECL_GUPD1(name, t) SIG_GUPD1(name)
#define DECL_GUPD2(name, t) SIG_GUPD2(name)
#define DECL_GLAUNCH(name, t) SIG_GLAUNCH(name)
#define DECL_GXDESTROY(name, t) SIG_GXDESTROY(name)
#define XMT_ENTRY(name, kind, ptsz, exported, handle)                                              \
    XMT_IF_##exported(XMT_EXPORT DECL_##kind(name, handle);)
#include "entries.h"
#undef XMT_ENTRY

/* Our own exports: the real dlsym finds these for RTLD_DEFAULT lookups, and a stand-in
 * driver without -Bsymbolic may even hand them out as its own. They are wrappers already. */
static int is_our_export(void *p)
{
    return 0
#define XMT_ENTRY(name, kind, ptsz, exported, handle) XMT_IF_##exported(|| p == (void *)(name))
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

#define EXPORT_GETPROC1(name, ptsz, t)                                                             \
    XMT_EXPORT CUresult name(const char *sym, void **pfn, int ver, cuuint64_t flags)               \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        CUresult r =                                                                               \
            ((CUresult(*)(const char *, void **, int, cuuint64_t))real)(sym, pfn, ver, flags);     \
        return getproc_after(r, sym, pfn, ver, flags);                                             \
    }

#define EXPORT_GETPROC2(name, ptsz, t)                                                             \
    XMT_EXPORT CUresult name(const char *sym, void **pfn, int ver, cuuint64_t flags,               \
                             CUdriverProcAddressQueryResult *st)                                   \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        CUresult r =                                                                               \
            ((CUresult(*)(const char *, void **, int, cuuint64_t,                                  \
                          CUdriverProcAddressQueryResult *))real)(sym, pfn, ver, flags, st);       \
        return getproc_after(r, sym, pfn, ver, flags);                                             \
    }

#define EXPORT_LAUNCH(name, ptsz, t)                                                               \
    XMT_EXPORT CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,     \
                             unsigned by, unsigned bz, unsigned sh, CUstream s, void **p,          \
                             void **e)                                                             \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        if (xmt_opt.mode == XMT_MODE_OFF)                                                          \
            return ((xmt_pfn_launch)real)(f, gx, gy, gz, bx, by, bz, sh, s, p, e);                 \
        return xmt_dispatch_launch(real, ptsz, f, gx, gy, gz, bx, by, bz, sh, s, p, e);            \
    }

#define EXPORT_EX(name, ptsz, t)                                                                   \
    XMT_EXPORT CUresult name(const CUlaunchConfig *c, CUfunction f, void **p, void **e)            \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        if (xmt_opt.mode == XMT_MODE_OFF) return ((xmt_pfn_launch_ex)real)(c, f, p, e);            \
        return xmt_dispatch_ex(real, ptsz, c, f, p, e);                                            \
    }

#define EXPORT_COOP(name, ptsz, t)                                                                 \
    XMT_EXPORT CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,     \
                             unsigned by, unsigned bz, unsigned sh, CUstream s, void **p)          \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        if (xmt_opt.mode == XMT_MODE_OFF)                                                          \
            return ((xmt_pfn_launch_coop)real)(f, gx, gy, gz, bx, by, bz, sh, s, p);               \
        return xmt_dispatch_coop(real, ptsz, f, gx, gy, gz, bx, by, bz, sh, s, p);                 \
    }

#define EXPORT_UNLOAD(name, ptsz, type)                                                            \
    XMT_EXPORT CUresult name(type h)                                                               \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        if (xmt_opt.mode == XMT_MODE_OFF) return ((CUresult(*)(type))real)(h);                     \
        return unloaded((CUresult(*)(void *))real, XMT_UNLOAD_WHAT(type), (void *)h);              \
    }

/* A graph call's export: the same body as its slot wrappers, with the pointer found once. */
#define EXPORT_G(K, name)                                                                          \
    XMT_EXPORT SIG_##K(name)                                                                       \
    {                                                                                              \
        EXPORT_REAL(name)                                                                          \
        BODY_##K(real, VER_##K);                                                                   \
    }
#define EXPORT_GADD1(name, ptsz, t) EXPORT_G(GADD1, name)
#define EXPORT_GADD2(name, ptsz, t) EXPORT_G(GADD2, name)
#define EXPORT_GSET1(name, ptsz, t) EXPORT_G(GSET1, name)
#define EXPORT_GSET2(name, ptsz, t) EXPORT_G(GSET2, name)
#define EXPORT_GXSET1(name, ptsz, t) EXPORT_G(GXSET1, name)
#define EXPORT_GXSET2(name, ptsz, t) EXPORT_G(GXSET2, name)
#define EXPORT_GINST(name, ptsz, t) EXPORT_G(GINST, name)
#define EXPORT_GINSTF(name, ptsz, t) EXPORT_G(GINSTF, name)
#define EXPORT_GINSTP(name, ptsz, t) EXPORT_G(GINSTP, name)
#define EXPORT_GUPD1(name, ptsz, t) EXPORT_G(GUPD1, name)
#define EXPORT_GUPD2(name, ptsz, t) EXPORT_G(GUPD2, name)
#define EXPORT_GLAUNCH(name, ptsz, t) EXPORT_G(GLAUNCH, name)
#define EXPORT_GXDESTROY(name, ptsz, t) EXPORT_G(GXDESTROY, name)

/* The definitions, one per exported entry of entries.h. */
#define XMT_ENTRY(name, kind, ptsz, exported, handle)                                              \
    XMT_IF_##exported(EXPORT_##kind(name, ptsz, handle))
#include "entries.h"
#undef XMT_ENTRY
