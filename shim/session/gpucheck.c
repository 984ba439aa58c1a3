/*
 * gpucheck: the shim's verification kernels, per context, and their host twin (see
 * gpucheck.h).
 */
#include "gpucheck.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"
#include "options.h"
#include "verify.h"

extern const char xmt_gpucheck_ptx[]; /* gpucheck/ptx.S */

static const char *const fn_names[XMT_GC_NFN] = {
    "xmt_cmp_bits", "xmt_cmp_tol", "xmt_changed", "xmt_absmax", "xmt_not", "xmt_spin", "xmt_seq"};
enum { F_BITS, F_TOL, F_CHANGED, F_ABSMAX, F_NOT, F_SPIN, F_SEQ };

#define MAX_CTX 16
#define THREADS 256
#define MAX_BLOCKS 4096

/* One loaded module per context, by cuCtxGetId (never reused, unlike context handles). */
static struct {
    unsigned long long id;
    CUfunction fn[XMT_GC_NFN]; /* all NULL: the module could not be loaded in that context */
} g_ctx[MAX_CTX];
static unsigned g_next;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* Loads the module into the current context; 0 and fn filled, or -1 (said once). */
static int load_module(CUfunction fn[XMT_GC_NFN])
{
    CUmodule m = NULL;
    CUresult r = xmt_drv.cuModuleLoadData(&m, xmt_gpucheck_ptx);
    for (int i = 0; r == CUDA_SUCCESS && i < XMT_GC_NFN; i++)
        r = xmt_drv.cuModuleGetFunction(&fn[i], m, fn_names[i]);
    /* Under lazy loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2) a
     * function is loaded at its first launch, inside whatever phase launches it first;
     * loading here, with the module, puts that cost where the tune event counts module
     * loads (phases_ms.module_load), once per context. (It was tried for the data check's
     * ~3.5 ms on the H200; measured there at e5d452b it changed neither that nor
     * module_load's 0.3-0.5 ms: the cost was every thread's own pair of atomics on one
     * address, which the kernels now publish once per block.) */
    for (int i = 0; r == CUDA_SUCCESS && xmt_drv.cuFuncLoad && i < XMT_GC_NFN; i++)
        (void)xmt_drv.cuFuncLoad(fn[i]); /* a failure leaves it to its first launch */
    if (r == CUDA_SUCCESS) return 0;
    if (m) xmt_drv.cuModuleUnload(m);
    memset(fn, 0, XMT_GC_NFN * sizeof(CUfunction));
    char b[32];
    static atomic_int warned;
    if (xmt_first_time(&warned))
        xmt_warn("the shim's verification kernels could not be loaded (%s): comparing on the "
                 "host, which is slower",
                 xmt_cu_name(r, b, sizeof b));
    return -1;
}

void xmt_gc_open(xmt_gc *g, CUstream s)
{
    memset(g, 0, sizeof *g);
    g->s = s;
    if (xmt_opt.verify_on == XMT_VERIFY_ON_HOST || !xmt_drv.cuModuleLoadData ||
        !xmt_drv.cuModuleGetFunction || !xmt_drv.cuLaunchKernel || !xmt_drv.cuCtxGetId)
        return;
    unsigned long long id = 0;
    if (xmt_drv.cuCtxGetId(NULL, &id) != CUDA_SUCCESS) return;
    pthread_mutex_lock(&g_mu);
    for (unsigned i = 0; i < MAX_CTX; i++)
        if (g_ctx[i].id == id) {
            memcpy(g->fn, g_ctx[i].fn, sizeof g->fn);
            pthread_mutex_unlock(&g_mu);
            return;
        }
    unsigned slot = g_next++ % MAX_CTX; /* the oldest: most likely a context long gone */
    g_ctx[slot].id = id;
    (void)load_module(g_ctx[slot].fn);
    memcpy(g->fn, g_ctx[slot].fn, sizeof g->fn);
    pthread_mutex_unlock(&g_mu);
}

int xmt_gc_on_gpu(const xmt_gc *g)
{
    return g->fn[0] != NULL;
}

/* Grows a device scratch buffer to at least `need` bytes. */
static CUresult grow(CUdeviceptr *p, size_t *cap, size_t need)
{
    if (*cap >= need) return CUDA_SUCCESS;
    if (*p) xmt_drv.cuMemFree(*p);
    *p = 0;
    *cap = 0;
    CUresult r = xmt_drv.cuMemAlloc(p, need);
    if (r == CUDA_SUCCESS) *cap = need;
    return r;
}

static int grow_host(xmt_gc *g, size_t need)
{
    if (g->hcap >= need) return 0;
    free(g->h1);
    free(g->h2);
    g->h1 = malloc(need);
    g->h2 = malloc(need);
    g->hcap = g->h1 && g->h2 ? need : 0;
    return g->hcap ? 0 : -1;
}

static unsigned blocks_for(size_t items)
{
    size_t b = (items + THREADS - 1) / THREADS;
    return b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : (unsigned)b;
}

static CUresult launch(xmt_gc *g, int f, size_t items, void **args)
{
    return xmt_drv.cuLaunchKernel(g->fn[f], blocks_for(items), 1, 1, THREADS, 1, 1, 0, g->s, args,
                                  NULL);
}

/* Copies both sides of a host-path operation into host memory and waits. */
static CUresult fetch(xmt_gc *g, CUdeviceptr a, CUdeviceptr b, size_t bytes)
{
    if (grow_host(g, bytes ? bytes : 1) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = xmt_drv.cuMemcpyDtoHAsync(g->h1, a, bytes, g->s);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemcpyDtoHAsync(g->h2, b, bytes, g->s);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuStreamSynchronize(g->s);
    return r;
}

static CUresult compare_host(xmt_gc *g, const xmt_gc_cmp *c, size_t n, xmt_gc_result *out)
{
    for (size_t i = 0; i < n; i++) {
        CUresult r = fetch(g, c[i].ref, c[i].got, c[i].bytes);
        if (r != CUDA_SUCCESS) return r;
        out[i].count = xmt_verify_host(g->h1, g->h2, c[i].bytes, c[i].kind, c[i].es, c[i].rtol,
                                       c[i].atol, &out[i].first);
    }
    return CUDA_SUCCESS;
}

/* Result slots: counts at res, firsts after the n counts; zeroed and set to ~0. */
static CUresult results_ready(xmt_gc *g, size_t n)
{
    CUresult r = grow(&g->res, &g->res_cap, 16 * n);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemsetD8Async(g->res, 0, 8 * n, g->s);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemsetD8Async(g->res + 8 * n, 0xFF, 8 * n, g->s);
    return r;
}

/* The n results in one copy (counts and firsts are adjacent) and one wait, not a copy
 * of each: a copy to pageable memory is synchronous and staged by the driver, tens of
 * microseconds each (a fixed_block session on an H100 made 40, 1.9 ms in all). */
static CUresult results_read(xmt_gc *g, size_t n, xmt_gc_result *out)
{
    uint64_t small[2 * 64], *buf = n <= 64 ? small : malloc(16 * n);
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = xmt_drv.cuMemcpyDtoHAsync(buf, g->res, 16 * n, g->s);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuStreamSynchronize(g->s);
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++) {
        out[i].count = buf[i];
        out[i].first = buf[n + i];
    }
    if (buf != small) free(buf);
    return r;
}

CUresult xmt_gc_compare(xmt_gc *g, const xmt_gc_cmp *c, size_t n, xmt_gc_result *out)
{
    if (n == 0) return CUDA_SUCCESS;
    if (!xmt_gc_on_gpu(g)) return compare_host(g, c, n, out);
    CUresult r = results_ready(g, n);
    for (size_t i = 0; i < n && r == CUDA_SUCCESS; i++) {
        CUdeviceptr cnt = g->res + 8 * i, fst = g->res + 8 * (n + i);
        uint64_t bytes = c[i].bytes, elems = c[i].bytes / c[i].es;
        unsigned es = c[i].es, kind = (unsigned)c[i].kind;
        double rtol = c[i].rtol, atol = c[i].atol;
        if (c[i].kind == XMT_CMP_BITS) {
            void *a[] = {(void *)&c[i].ref, (void *)&c[i].got, &bytes, &es, &cnt, &fst};
            r = launch(g, F_BITS, bytes / 16 + 1, a);
        } else {
            void *a[] = {
                (void *)&c[i].ref, (void *)&c[i].got, &elems, &kind, &rtol, &atol, &cnt, &fst};
            r = launch(g, F_TOL, elems, a);
        }
    }
    if (r == CUDA_SUCCESS) r = results_read(g, n, out);
    return r;
}

CUresult xmt_gc_changed(xmt_gc *g, CUdeviceptr a, CUdeviceptr b, size_t bytes, unsigned shift,
                        uint8_t *flags, uint64_t *changed)
{
    size_t nflags = (bytes + ((size_t)1 << shift) - 1) >> shift;
    uint64_t first;
    *changed = 0;
    if (bytes == 0) return CUDA_SUCCESS;
    if (!xmt_gc_on_gpu(g)) {
        CUresult r = fetch(g, a, b, bytes);
        if (r == CUDA_SUCCESS)
            *changed = xmt_verify_changed_host(g->h1, g->h2, bytes, shift, flags, &first);
        return r;
    }
    CUresult r = grow(&g->flags, &g->flags_cap, nflags);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemsetD8Async(g->flags, 0, nflags, g->s);
    if (r == CUDA_SUCCESS) r = results_ready(g, 1);
    CUdeviceptr cnt = g->res, fst = g->res + 8;
    uint64_t n64 = bytes;
    void *args[] = {&a, &b, &n64, &shift, &g->flags, &cnt, &fst};
    if (r == CUDA_SUCCESS) r = launch(g, F_CHANGED, bytes / 16 + 1, args);
    xmt_gc_result res = {0, 0};
    if (r == CUDA_SUCCESS) r = results_read(g, 1, &res);
    *changed = res.count;
    /* the flags are read only when something changed: most runs change only outputs */
    if (r == CUDA_SUCCESS && res.count) {
        r = xmt_drv.cuMemcpyDtoHAsync(flags, g->flags, nflags, g->s);
        if (r == CUDA_SUCCESS) r = xmt_drv.cuStreamSynchronize(g->s);
    }
    return r;
}

/* The host path of xmt_gc_absmax: through the host in chunks, so that a large output
 * needs no copy of its own size. */
static CUresult absmax_host(xmt_gc *g, CUdeviceptr p, size_t bytes, int kind, unsigned es,
                            double *max)
{
    enum { CHUNK = 1 << 22 };
    if (grow_host(g, bytes < CHUNK ? bytes : CHUNK) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    for (size_t at = 0; r == CUDA_SUCCESS && at + es <= bytes; at += CHUNK) {
        size_t len = bytes - at < CHUNK ? bytes - at : CHUNK;
        r = xmt_drv.cuMemcpyDtoHAsync(g->h1, p + at, len, g->s);
        if (r == CUDA_SUCCESS) r = xmt_drv.cuStreamSynchronize(g->s);
        if (r == CUDA_SUCCESS) {
            double m = xmt_verify_absmax_host(g->h1, len / es, kind);
            if (m > *max) *max = m;
        }
    }
    return r;
}

CUresult xmt_gc_absmax(xmt_gc *g, CUdeviceptr p, size_t bytes, int kind, double *max)
{
    unsigned es = kind == XMT_CMP_F64 ? 8 : kind == XMT_CMP_F32 ? 4 : 2;
    *max = 0;
    if (bytes < es) return CUDA_SUCCESS;
    if (!xmt_gc_on_gpu(g)) return absmax_host(g, p, bytes, kind, es, max);
    uint64_t n = bytes / es, bits = 0;
    unsigned dt = (unsigned)kind;
    CUresult r = grow(&g->res, &g->res_cap, 16);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemsetD8Async(g->res, 0, 8, g->s);
    void *args[] = {&p, &n, &dt, &g->res};
    if (r == CUDA_SUCCESS) r = launch(g, F_ABSMAX, n, args);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuMemcpyDtoHAsync(&bits, g->res, 8, g->s);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuStreamSynchronize(g->s);
    if (r == CUDA_SUCCESS) memcpy(max, &bits, 8);
    return r;
}

CUresult xmt_gc_complement(xmt_gc *g, CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    if (!xmt_gc_on_gpu(g)) return CUDA_ERROR_NOT_SUPPORTED;
    if (bytes == 0) return CUDA_SUCCESS;
    uint64_t n = bytes;
    void *args[] = {&dst, &src, &n};
    return launch(g, F_NOT, bytes / 16 + 1, args);
}

CUresult xmt_gc_spin(xmt_gc *g, uint64_t ns)
{
    if (!xmt_gc_on_gpu(g)) return CUDA_ERROR_NOT_SUPPORTED;
    void *args[] = {&ns};
    return xmt_drv.cuLaunchKernel(g->fn[F_SPIN], 1, 1, 1, 1, 1, 1, 0, g->s, args, NULL);
}

CUresult xmt_gc_sequence(xmt_gc *g, CUdeviceptr dst, uint64_t words, uint64_t seed)
{
    if (!xmt_gc_on_gpu(g)) return CUDA_ERROR_NOT_SUPPORTED;
    if (words == 0) return CUDA_SUCCESS;
    void *args[] = {&dst, &words, &seed};
    return launch(g, F_SEQ, words, args);
}

void xmt_gc_close(xmt_gc *g)
{
    if (g->res) xmt_drv.cuMemFree(g->res);
    if (g->flags) xmt_drv.cuMemFree(g->flags);
    free(g->h1);
    free(g->h2);
    memset(g, 0, sizeof *g);
}
