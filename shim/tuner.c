/*
 * tuner: benchmark, protect the data, pick, cache, rewrite (see tuner.h).
 */
#include "tuner.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "cache.h"
#include "driver.h"
#include "log.h"
#include "options.h"
#include "xmt_policy.h"

#define XMT_PIN_CONFIG (-2)
#define MAX_ITERATIONS 10000
#define POISON 0xA5 /* fills verify-only buffers before a verify run: unwritten bytes show */

/* ---- per-kernel results --------------------------------------------------------------- */

enum { R_TUNING = 0, R_DONE = 1 };

typedef struct result {
    UT_hash_handle hh;
    _Atomic int state;
    long index; /* XMT_OWN_CONFIG, XMT_PIN_CONFIG or a candidate index */
    char label[160];
    size_t keylen;
    uint8_t key[]; /* device (4 bytes) then the entry's key */
} result_t;

struct xmt_tune_state {
    pthread_rwlock_t lock;
    result_t *results;
    unsigned keys_tuned;
    int key_error_warned;
};

static struct xmt_tune_state *state_of(xmt_kernel *k)
{
    struct xmt_tune_state *s = __atomic_load_n(&k->tune, __ATOMIC_ACQUIRE);
    if (s) return s;
    pthread_mutex_lock(&k->lock);
    s = k->tune;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (s) {
            pthread_rwlock_init(&s->lock, NULL);
            __atomic_store_n(&k->tune, s, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&k->lock);
    return s;
}

/* ---- devices ---------------------------------------------------------------------------- */

#define MAX_DEVICES 64
typedef struct {
    _Atomic int filled;
    xmt_attrs attrs;
    char id[200]; /* "NVIDIA H200|cc9.0|sm132": the on-disk identity (device model) */
} devinfo_t;
static devinfo_t devices[MAX_DEVICES];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t dev_attr(CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    if (!xmt_drv.cuDeviceGetAttribute || xmt_drv.cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS)
        return 0;
    return v;
}

static const devinfo_t *device_info(CUdevice d)
{
    if (d < 0 || d >= MAX_DEVICES) return NULL;
    devinfo_t *di = &devices[d];
    if (atomic_load_explicit(&di->filled, memory_order_acquire)) return di;
    pthread_mutex_lock(&devices_lock);
    if (!atomic_load(&di->filled)) {
        xmt_attrs *a = &di->attrs;
        a->sm_count = dev_attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        a->max_threads_per_block = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        a->max_shared_per_block = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
        a->cc_major = dev_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        a->cc_minor = dev_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        a->warp_size = dev_attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
        a->l2_bytes = dev_attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
        a->max_grid_x = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
        a->max_grid_y = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
        a->max_grid_z = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
        a->max_block_x = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
        a->max_block_y = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
        a->max_block_z = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
        char name[128] = "unknown";
        if (!xmt_drv.cuDeviceGetName ||
            xmt_drv.cuDeviceGetName(name, sizeof name, d) != CUDA_SUCCESS)
            strcpy(name, "unknown");
        snprintf(di->id, sizeof di->id, "%s|cc%lld.%lld|sm%lld", name, (long long)a->cc_major,
                 (long long)a->cc_minor, (long long)a->sm_count);
        atomic_store_explicit(&di->filled, 1, memory_order_release);
    }
    pthread_mutex_unlock(&devices_lock);
    return di;
}

/* ---- launching a configuration ------------------------------------------------------------ */

/* Finds the packed argument buffer of an `extra` array. */
static int extra_buffer(void **extra, uint8_t **buf, size_t *size)
{
    *buf = NULL;
    *size = 0;
    for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            *buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            *size = *(size_t *)extra[i + 1];
    }
    return *buf && *size ? 0 : -1;
}

/* Launches l with candidate c's dimensions and scalar arguments (c NULL: as the program
 * made it). The program's argument memory is never written: overrides go into copies. */
static CUresult launch_as(const xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c)
{
    if (!c) return xmt_launch_call(l);
    xmt_launch m = *l;
    m.grid[0] = c->dims.grid.x;
    m.grid[1] = c->dims.grid.y;
    m.grid[2] = c->dims.grid.z;
    m.block[0] = c->dims.block.x;
    m.block[1] = c->dims.block.y;
    m.block[2] = c->dims.block.z;
    m.shared = c->dims.shared;
    CUlaunchConfig cfg;
    if (l->kind == XMT_K_EX) {
        cfg = *l->cfg;
        cfg.gridDimX = m.grid[0];
        cfg.gridDimY = m.grid[1];
        cfg.gridDimZ = m.grid[2];
        cfg.blockDimX = m.block[0];
        cfg.blockDimY = m.block[1];
        cfg.blockDimZ = m.block[2];
        cfg.sharedMemBytes = m.shared;
        m.cfg = &cfg;
    }
    if (c->nargs == 0) return xmt_launch_call(&m);

    void *params[XMT_KERNEL_MAX_PARAMS];
    uint64_t values[XMT_MAX_ARG_OVERRIDES];
    uint8_t packed_stack[4096];
    uint8_t *packed = NULL;
    size_t packed_size = 0;
    void *extra[5];
    CUresult r;
    if (l->params) {
        if (k->nparams > XMT_KERNEL_MAX_PARAMS) return xmt_launch_call(l);
        memcpy(params, l->params, k->nparams * sizeof *params);
        for (unsigned i = 0; i < c->nargs; i++) {
            values[i] = c->args[i].value; /* little-endian: the low bytes come first */
            params[c->args[i].param] = &values[i];
        }
        m.params = params;
        return xmt_launch_call(&m);
    }
    uint8_t *buf;
    if (extra_buffer(l->extra, &buf, &packed_size) != 0) return xmt_launch_call(l);
    packed = packed_size <= sizeof packed_stack ? packed_stack : malloc(packed_size);
    if (!packed) return xmt_launch_call(l);
    memcpy(packed, buf, packed_size);
    for (unsigned i = 0; i < c->nargs; i++) {
        unsigned p = c->args[i].param;
        if (p < k->nparams && k->offsets[p] + c->args[i].size <= packed_size)
            memcpy(packed + k->offsets[p], &c->args[i].value, c->args[i].size);
    }
    extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = packed;
    extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &packed_size;
    extra[4] = CU_LAUNCH_PARAM_END;
    m.extra = extra;
    r = xmt_launch_call(&m);
    if (packed != packed_stack) free(packed);
    return r;
}

static CUresult pass(xmt_kernel *k, const xmt_launch *l)
{
    atomic_fetch_add_explicit(&k->passed, 1, memory_order_relaxed);
    return xmt_launch_call(l);
}

/* Errors after which the context is still usable: the launch was refused, nothing ran. */
static int refused(CUresult r)
{
    return r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_NOT_SUPPORTED ||
           r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
}

/* The launch for real, with a candidate: if the driver refuses it, the program's own
 * config runs instead and its result is what the program sees. */
static CUresult run_for_real(xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c)
{
    CUresult r = launch_as(k, l, c);
    if (r == CUDA_SUCCESS) {
        atomic_fetch_add_explicit(&k->rewritten, 1, memory_order_relaxed);
        return r;
    }
    if (refused(r)) {
        char b[32];
        xmt_warn("%s: the driver refused the tuned config %s (%s); the program's own runs",
                 k->demangled, c->label, xmt_cu_name(r, b, sizeof b));
        return pass(k, l);
    }
    return r;
}

/* ---- timing helpers ----------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double statistic(const double *t, int n, int mean)
{
    if (n <= 0) return INFINITY;
    if (mean) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += t[i];
        return s / n;
    }
    double tmp[MAX_ITERATIONS];
    memcpy(tmp, t, (size_t)n * sizeof *t);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static _Atomic uint64_t total_tuning_us;

/* ---- verify ------------------------------------------------------------------------------- */

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double element(const uint8_t *p, xmt_dtype t)
{
    union {
        float f;
        uint32_t u;
    } fu;
    double d;
    uint16_t h;
    switch (t) {
    case XMT_DT_F32: memcpy(&fu.f, p, 4); return fu.f;
    case XMT_DT_F64: memcpy(&d, p, 8); return d;
    case XMT_DT_F16: memcpy(&h, p, 2); return half_to_double(h);
    case XMT_DT_BF16:
        memcpy(&h, p, 2);
        fu.u = (uint32_t)h << 16;
        return fu.f;
    default: return 0;
    }
}

/* Compares a candidate's buffer to the reference. Returns 0 when they agree, else the
 * number of differing elements, with the first described in why. */
static size_t compare(const xmt_buffer *b, const uint8_t *ref, const uint8_t *got, char *why,
                      size_t cap)
{
    int is_float = b->dtype == XMT_DT_F32 || b->dtype == XMT_DT_F64 || b->dtype == XMT_DT_F16 ||
                   b->dtype == XMT_DT_BF16;
    if (!is_float || (b->rtol == 0 && b->atol == 0)) {
        if (memcmp(ref, got, b->bytes) == 0) return 0;
        size_t es = xmt_dtype_size(b->dtype), n = 0, first = (size_t)-1;
        if (!es) es = 1;
        for (size_t i = 0; i + es <= b->bytes; i += es)
            if (memcmp(ref + i, got + i, es)) {
                if (first == (size_t)-1) first = i / es;
                n++;
            }
        snprintf(why, cap, "%s: %zu of %llu elements differ (bitwise), first at %zu", b->name, n,
                 (unsigned long long)(b->bytes / es), first);
        return n ? n : 1;
    }
    size_t es = xmt_dtype_size(b->dtype), n = 0, first = (size_t)-1;
    double fr = 0, fg = 0;
    for (size_t i = 0; i + es <= b->bytes; i += es) {
        double r = element(ref + i, b->dtype), g = element(got + i, b->dtype);
        int same = (isnan(r) && isnan(g)) || r == g || fabs(g - r) <= b->atol + b->rtol * fabs(r);
        if (!same) {
            if (first == (size_t)-1) {
                first = i / es;
                fr = r;
                fg = g;
            }
            n++;
        }
    }
    if (n)
        snprintf(why, cap,
                 "%s: %zu of %llu elements differ beyond rtol=%g atol=%g, first at %zu "
                 "(%.9g, expected %.9g)",
                 b->name, n, (unsigned long long)(b->bytes / es), b->rtol, b->atol, first, fg, fr);
    return n;
}

/* ---- one tuning session -------------------------------------------------------------------- */

enum { C_OK = 0, C_SKIPPED, C_REJECTED };

typedef struct {
    xmt_candidate c;
    long index; /* XMT_OWN_CONFIG for the program's own */
    int status;
    char why[300];
    double *times;
    int ntimes;
    double stat;
    CUevent start, end;
} cand_t;

typedef struct {
    xmt_buffer b;
    CUdeviceptr ptr, snap;
    uint8_t *host_ref, *host_got;
} buf_t;

typedef struct {
    xmt_kernel *k;
    const xmt_launch *l;
    const xmt_launch_view *v;
    CUstream s;
    buf_t *bufs;
    size_t nbufs;
    int snapshots_taken;
    CUdeviceptr flush;
    size_t flush_bytes;
    CUresult error; /* first driver failure; ends the session */
    const char *error_at;
} session_t;

#define TRY(sess, call, what)                                                                      \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            if ((sess)->error == CUDA_SUCCESS) {                                                   \
                (sess)->error = r_;                                                                \
                (sess)->error_at = (what);                                                         \
            }                                                                                      \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* Puts the declared buffers into the state every run starts from: restore buffers (and
 * reset ones, when snapshots exist for the final put-back only) from their snapshots,
 * reset buffers zeroed, verify-only buffers poisoned when asked; and flushes L2. */
static int prepare(session_t *S, int poison, int flush)
{
    for (size_t i = 0; i < S->nbufs; i++) {
        buf_t *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_RESTORE)
            TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ptr, b->snap, b->b.bytes, S->s), "restore");
        else if (b->b.roles & XMT_BUF_RESET)
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, 0, b->b.bytes, S->s), "reset_to_zero");
        else if (poison && (b->b.roles & XMT_BUF_VERIFY))
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, POISON, b->b.bytes, S->s), "poison");
    }
    if (flush && S->flush)
        TRY(S, xmt_drv.cuMemsetD8Async(S->flush, 0, S->flush_bytes, S->s), "l2 flush");
    return 0;
fail:
    return -1;
}

/* Puts every declared buffer back as the program left it. */
static int put_back(session_t *S)
{
    if (!S->snapshots_taken) return 0;
    for (size_t i = 0; i < S->nbufs; i++)
        if (S->bufs[i].snap)
            TRY(S,
                xmt_drv.cuMemcpyDtoDAsync(S->bufs[i].ptr, S->bufs[i].snap, S->bufs[i].b.bytes,
                                          S->s),
                "put back");
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

/* One launch of candidate c (the program's own when c->index is XMT_OWN_CONFIG). Returns
 * 0 when it ran; 1 when the driver refused it (c is then skipped, saying why, and the
 * session goes on without it); -1 when the session must end: the program's own config
 * failed, or a launch failed in a way that may have left the context broken. */
static int run_candidate(session_t *S, cand_t *c)
{
    CUresult r = launch_as(S->k, S->l, c->index == XMT_OWN_CONFIG ? NULL : &c->c);
    if (r == CUDA_SUCCESS) return 0;
    if (c->index != XMT_OWN_CONFIG) {
        char b[32];
        c->status = C_SKIPPED;
        snprintf(c->why, sizeof c->why, "launch failed: %s", xmt_cu_name(r, b, sizeof b));
        if (refused(r)) return 1;
    }
    if (S->error == CUDA_SUCCESS) {
        S->error = r;
        S->error_at =
            c->index == XMT_OWN_CONFIG ? "the program's own config" : "a candidate's launch";
    }
    return -1;
}

/* One run of a candidate for verification; reads its verify buffers into host memory.
 * Returns as run_candidate, and -1 on a failed copy. */
static int verify_run(session_t *S, cand_t *c, int into_ref)
{
    if (prepare(S, 1, 0) != 0) return -1;
    int r = run_candidate(S, c);
    if (r != 0) return r;
    for (size_t i = 0; i < S->nbufs; i++) {
        buf_t *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_VERIFY)
            TRY(S,
                xmt_drv.cuMemcpyDtoHAsync(into_ref ? b->host_ref : b->host_got, b->ptr, b->b.bytes,
                                          S->s),
                "verify copy");
    }
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

static json_t *dims_json(const xmt_dims *d)
{
    return json_pack("{s[iii]s[iii]si}", "grid", (int)d->grid.x, (int)d->grid.y, (int)d->grid.z,
                     "block", (int)d->block.x, (int)d->block.y, (int)d->block.z, "shared",
                     (int)d->shared);
}

static json_t *times_json(const cand_t *c)
{
    json_t *a = json_array();
    for (int i = 0; i < c->ntimes; i++)
        json_array_append_new(a, json_real(c->times[i]));
    return a;
}

static void own_label(const xmt_launch *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u", l->grid[0], l->grid[1],
             l->grid[2], l->block[0], l->block[1], l->block[2], l->shared);
}

static int same_as_own(const xmt_candidate *c, const xmt_launch *l)
{
    return c->nargs == 0 && c->dims.grid.x == l->grid[0] && c->dims.grid.y == l->grid[1] &&
           c->dims.grid.z == l->grid[2] && c->dims.block.x == l->block[0] &&
           c->dims.block.y == l->block[1] && c->dims.block.z == l->block[2] &&
           c->dims.shared == l->shared;
}

/* Benchmarks the candidates of one key. Fills *choice with the winner (the program's own
 * config on any failure). The event for the log is built on the way. */
static void tune_key(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                     const char *key_text, int device, int verify_only, const xmt_candidate *only,
                     xmt_choice *choice)
{
    const xmt_entry *e = k->entry;
    double t0 = now_ms();
    session_t S = {.k = k, .l = l, .v = v, .s = xmt_launch_stream(l)};
    int warmup = xmt_entry_warmup(e) >= 0 ? xmt_entry_warmup(e) : xmt_opt.warmup;
    int iterations = xmt_entry_iterations(e) >= 0 ? xmt_entry_iterations(e) : xmt_opt.iterations;
    if (iterations < 1) iterations = 1;
    if (iterations > MAX_ITERATIONS) iterations = MAX_ITERATIONS;
    int mean = xmt_entry_use_mean(e) || xmt_opt.statistic == XMT_STAT_MEAN;
    int flush = xmt_entry_l2_flush(e) >= 0 ? xmt_entry_l2_flush(e) : xmt_opt.l2_flush;
    double budget = xmt_entry_budget_ms(e) >= 0 ? xmt_entry_budget_ms(e) : xmt_opt.budget_ms;
    int tolerance = 0, any_verify = 0;

    choice->index = XMT_OWN_CONFIG;
    own_label(l, choice->label, sizeof choice->label);
    choice->time_ms = 0;

    size_t n = only ? 1 : xmt_entry_ncandidates(e);
    cand_t *cands = calloc(n + 1, sizeof *cands);
    double *times = calloc((n + 1) * (size_t)iterations, sizeof *times);
    size_t nb = xmt_entry_nbuffers(e);
    S.bufs = calloc(nb ? nb : 1, sizeof *S.bufs);
    if (!cands || !times || !S.bufs) {
        free(cands);
        free(times);
        free(S.bufs);
        xmt_warn("%s: out of memory while tuning; the program's own config is used", k->demangled);
        return;
    }

    /* The candidates: the program's own first, then the policy's. */
    cands[0].index = XMT_OWN_CONFIG;
    own_label(l, cands[0].c.label, sizeof cands[0].c.label);
    cands[0].times = times;
    int allowed_dyn = k->max_dynamic_shared;
    if (xmt_drv.cuFuncGetAttribute && !k->is_cukernel) {
        int a = 0;
        if (xmt_drv.cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l->f) ==
            CUDA_SUCCESS)
            allowed_dyn = a;
    }
    if (allowed_dyn < (int)l->shared) allowed_dyn = (int)l->shared;
    size_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        cand_t *c = &cands[i + 1];
        c->index = only ? XMT_PIN_CONFIG : (long)i;
        c->times = times + (i + 1) * (size_t)iterations;
        if (only) c->c = *only;
        if (!only && xmt_entry_candidate(e, i, v, &c->c) != 1) {
            c->status = C_SKIPPED;
            snprintf(c->why, sizeof c->why, "%s", c->c.why);
        } else if (allowed_dyn > 0 && c->c.dims.shared > (unsigned)allowed_dyn) {
            c->status = C_SKIPPED;
            snprintf(c->why, sizeof c->why,
                     "shared %u > %d bytes the program opted the kernel into", c->c.dims.shared,
                     allowed_dyn);
        } else if (same_as_own(&c->c, l)) {
            c->status = C_SKIPPED;
            snprintf(c->why, sizeof c->why, "same as the program's own config");
        } else {
            valid++;
        }
    }

    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    int mode_swapped = 0;
    xmt_in_shim++;
    if (valid == 0) goto decide; /* nothing else to try: the program's own config stays */

    if (xmt_drv.cuThreadExchangeStreamCaptureMode &&
        xmt_drv.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS)
        mode_swapped = 1;

    /* Buffers: evaluate, then snapshot every one before anything runs. */
    for (size_t i = 0; i < nb; i++) {
        buf_t *b = &S.bufs[S.nbufs];
        int r = xmt_entry_buffer(e, i, v, &b->b);
        if (r == 0 || (r == 1 && b->b.bytes == 0)) continue;
        if (r < 0 || b->b.param >= k->nparams || !v->params[b->b.param]) {
            S.error = CUDA_ERROR_INVALID_VALUE;
            S.error_at = "buffer size";
            goto fail;
        }
        memcpy(&b->ptr, v->params[b->b.param], sizeof b->ptr);
        if (b->b.roles & XMT_BUF_VERIFY) {
            any_verify = 1;
            tolerance |= b->b.rtol != 0 || b->b.atol != 0;
            b->host_ref = malloc(b->b.bytes);
            b->host_got = malloc(b->b.bytes);
            if (!b->host_ref || !b->host_got) {
                S.error = CUDA_ERROR_OUT_OF_MEMORY;
                S.error_at = "host verify buffer";
                S.nbufs++;
                goto fail;
            }
        }
        S.nbufs++;
        TRY(&S, xmt_drv.cuMemAlloc(&b->snap, b->b.bytes), "snapshot alloc");
        TRY(&S, xmt_drv.cuMemcpyDtoDAsync(b->snap, b->ptr, b->b.bytes, S.s), "snapshot");
        S.snapshots_taken = 1;
    }
    if (flush && v->attrs && v->attrs->l2_bytes > 0) {
        S.flush_bytes = (size_t)v->attrs->l2_bytes * 2;
        TRY(&S, xmt_drv.cuMemAlloc(&S.flush, S.flush_bytes), "l2 flush alloc");
    }

    /* Verify: every candidate once against the program's own config on the same inputs. */
    if (any_verify) {
        if (verify_run(&S, &cands[0], 1) != 0) goto fail;
        for (size_t i = 1; i <= n; i++) {
            cand_t *c = &cands[i];
            if (c->status != C_OK) continue;
            int r = verify_run(&S, c, 0);
            if (r < 0) goto fail;
            if (r > 0) continue;
            for (size_t j = 0; j < S.nbufs; j++) {
                buf_t *bf = &S.bufs[j];
                if ((bf->b.roles & XMT_BUF_VERIFY) &&
                    compare(&bf->b, bf->host_ref, bf->host_got, c->why, sizeof c->why)) {
                    c->status = C_REJECTED;
                    break;
                }
            }
        }
    }
    if (verify_only) goto measured; /* a pin or a single config: verified, not benchmarked */

    /* Warm the GPU up by time with the program's own config, so the clock is up before
     * the first candidate is timed. */
    if (xmt_opt.warmup_ms > 0) {
        double w0 = now_ms();
        for (int i = 0; i < 100000; i++) {
            if (prepare(&S, 0, 0) != 0 || run_candidate(&S, &cands[0]) != 0) goto fail;
            if (i % 4 == 3) {
                TRY(&S, xmt_drv.cuStreamSynchronize(S.s), "synchronize");
                if (now_ms() - w0 >= xmt_opt.warmup_ms) break;
            }
        }
    }

    /* Untimed warm-up runs of each candidate. */
    for (size_t i = 0; i <= n; i++) {
        cand_t *c = &cands[i];
        if (c->status != C_OK) continue;
        for (int w = 0; w < warmup && c->status == C_OK; w++)
            if (prepare(&S, 0, 0) != 0 || run_candidate(&S, c) < 0) goto fail;
    }

    /* Timed runs, round-robin so that clock drift favours no candidate; the starting
     * candidate rotates each round. */
    for (size_t i = 0; i <= n; i++)
        if (cands[i].status == C_OK) {
            TRY(&S, xmt_drv.cuEventCreate(&cands[i].start, CU_EVENT_DEFAULT), "event create");
            TRY(&S, xmt_drv.cuEventCreate(&cands[i].end, CU_EVENT_DEFAULT), "event create");
        }
    for (int it = 0; it < iterations; it++) {
        CUevent last = NULL;
        for (size_t j = 0; j <= n; j++) {
            cand_t *c = &cands[(j + (size_t)it) % (n + 1)];
            if (c->status != C_OK) continue;
            if (prepare(&S, 0, flush) != 0) goto fail;
            TRY(&S, xmt_drv.cuEventRecord(c->start, S.s), "event record");
            int r = run_candidate(&S, c);
            if (r < 0) goto fail;
            if (r > 0) continue;
            TRY(&S, xmt_drv.cuEventRecord(c->end, S.s), "event record");
            last = c->end;
        }
        if (last) TRY(&S, xmt_drv.cuEventSynchronize(last), "event synchronize");
        for (size_t j = 0; j <= n; j++) {
            cand_t *c = &cands[j];
            if (c->status != C_OK || c->ntimes != it) continue;
            float ms = 0;
            TRY(&S, xmt_drv.cuEventElapsedTime(&ms, c->start, c->end), "event elapsed");
            c->times[c->ntimes++] = ms;
        }
        if (budget >= 0 && now_ms() - t0 > budget)
            break; /* keep the best so far: every candidate has the same rounds */
    }

measured:
    if (put_back(&S) != 0) goto fail;
    goto decide;

fail : {
    char b[32];
    xmt_warn("%s: tuning stopped at %s (%s); the program's own config is used for key %s",
             k->demangled, S.error_at ? S.error_at : "?", xmt_cu_name(S.error, b, sizeof b),
             key_text);
    CUresult saved = S.error;
    S.error = CUDA_SUCCESS;
    if (put_back(&S) != 0)
        xmt_warn("%s: could not put the declared buffers back after a failure (%s)", k->demangled,
                 S.error_at);
    S.error = saved;
}

decide:
    if (S.error == CUDA_SUCCESS && valid > 0) {
        for (size_t i = 0; i <= n; i++) {
            cand_t *c = &cands[i];
            if (c->status == C_OK) c->stat = verify_only ? 0 : statistic(c->times, c->ntimes, mean);
        }
        cand_t *best = NULL;
        if (verify_only) {
            for (size_t i = 1; i <= n && !best; i++)
                if (cands[i].status == C_OK) best = &cands[i];
        } else {
            for (size_t i = 0; i <= n; i++)
                if (cands[i].status == C_OK && cands[i].ntimes > 0 &&
                    (!best || cands[i].stat < best->stat))
                    best = &cands[i];
        }
        if (best) {
            choice->index = best->index;
            snprintf(choice->label, sizeof choice->label, "%s", best->c.label);
            choice->time_ms = best->stat;
        }
    }

    /* Scratch memory is freed whatever happened. */
    for (size_t i = 0; i < S.nbufs; i++) {
        if (S.bufs[i].snap) xmt_drv.cuMemFree(S.bufs[i].snap);
        free(S.bufs[i].host_ref);
        free(S.bufs[i].host_got);
    }
    if (S.flush) xmt_drv.cuMemFree(S.flush);
    for (size_t i = 0; i <= n; i++) {
        if (cands[i].start) xmt_drv.cuEventDestroy(cands[i].start);
        if (cands[i].end) xmt_drv.cuEventDestroy(cands[i].end);
    }
    if (mode_swapped) xmt_drv.cuThreadExchangeStreamCaptureMode(&mode);
    xmt_in_shim--;

    double spent = now_ms() - t0;
    atomic_fetch_add(&total_tuning_us, (uint64_t)(spent * 1000));

    /* Report. */
    cand_t *own = &cands[0];
    double own_t = own->status == C_OK && own->ntimes ? own->stat : NAN;
    if (xmt_opt.verbose >= 2)
        for (size_t i = 0; i <= n; i++) {
            cand_t *c = &cands[i];
            if (c->status == C_OK && c->ntimes)
                xmt_verbose(2, "%s: config %s took %.4f ms (%s of %d) for %s", k->demangled,
                            c->c.label, c->stat, mean ? "mean" : "median", c->ntimes, key_text);
            else if (c->status != C_OK)
                xmt_verbose(2, "%s: config %s %s: %s", k->demangled, c->c.label,
                            c->status == C_REJECTED ? "rejected" : "skipped", c->why);
        }
    if (verify_only)
        xmt_verbose(1, "%s: config %s used without benchmark (%s) for %s", k->demangled,
                    choice->label, any_verify ? "verified" : "single config", key_text);
    else if (xmt_opt.verbose >= 1) {
        size_t timed = 0, rejected = 0, skipped = 0;
        for (size_t i = 1; i <= n; i++) {
            timed += cands[i].status == C_OK && cands[i].ntimes > 0;
            rejected += cands[i].status == C_REJECTED;
            skipped += cands[i].status == C_SKIPPED;
        }
        if (choice->index == XMT_OWN_CONFIG)
            xmt_verbose(1,
                        "%s: the program's own config %s stays (%.4f ms) for %s; %zu configs "
                        "timed, %zu rejected, %zu skipped, in %.1f ms%s",
                        k->demangled, choice->label, own_t, key_text, timed, rejected, skipped,
                        spent, S.error != CUDA_SUCCESS ? " (tuning stopped by an error)" : "");
        else
            xmt_verbose(1,
                        "%s: config %s achieved the best time (%.4f ms; own %.4f ms, %.2fx) for "
                        "%s; %zu configs timed, %zu rejected, %zu skipped, in %.1f ms",
                        k->demangled, choice->label, choice->time_ms, own_t,
                        own_t / choice->time_ms, key_text, timed, rejected, skipped, spent);
    }

    if (xmt_log_enabled()) {
        json_t *cl = json_array();
        json_t *winner = NULL;
        for (size_t i = 0; i <= n; i++) {
            cand_t *c = &cands[i];
            xmt_dims d = c->c.dims;
            if (c->index == XMT_OWN_CONFIG) d = v->orig;
            json_t *o = dims_json(&d);
            json_object_set_new(o, "config", json_string(c->c.label));
            json_object_set_new(o, "status",
                                json_string(c->status == C_OK        ? "ok"
                                            : c->status == C_SKIPPED ? "skipped"
                                                                     : "rejected"));
            if (c->status != C_OK) json_object_set_new(o, "why", json_string(c->why));
            if (c->ntimes) {
                json_object_set_new(o, mean ? "mean_ms" : "median_ms", json_real(c->stat));
                json_object_set_new(o, "times_ms", times_json(c));
            }
            if (c->c.nargs) {
                json_t *args = json_array();
                for (unsigned a = 0; a < c->c.nargs; a++)
                    json_array_append_new(args,
                                          json_pack("{sisI}", "param", (int)c->c.args[a].param,
                                                    "value", (json_int_t)c->c.args[a].value));
                json_object_set_new(o, "args", args);
            }
            if (c->index == choice->index) winner = json_deep_copy(o);
            if (i == 0) {
                json_decref(o); /* the program's own: reported under "own" */
                continue;
            }
            json_object_set_new(o, "index", json_integer(c->index));
            json_array_append_new(cl, o);
        }
        json_t *owno = dims_json(&v->orig);
        json_object_set_new(owno, "config", json_string(own->c.label));
        if (own->ntimes) {
            json_object_set_new(owno, mean ? "mean_ms" : "median_ms", json_real(own->stat));
            json_object_set_new(owno, "times_ms", times_json(own));
        }
        if (!winner) winner = json_deep_copy(owno);
        json_object_set_new(winner, "index", json_integer(choice->index));
        json_t *ev = json_pack("{sssssssiss}", "event", "tune", "kernel", k->mangled, "name",
                               k->demangled, "device", device, "key", key_text);
        if (ev) {
            json_object_set_new(ev, "policy", json_string(xmt_entry_origin(e)));
            json_object_set_new(ev, "own", owno);
            json_object_set_new(ev, "candidates", cl);
            json_object_set_new(ev, "winner", winner);
            json_object_set_new(ev, "statistic", json_string(mean ? "mean" : "median"));
            json_object_set_new(ev, "iterations", json_integer(iterations));
            json_object_set_new(ev, "warmup", json_integer(warmup));
            json_object_set_new(ev, "tolerance", json_boolean(tolerance));
            json_object_set_new(ev, "l2_flush", json_boolean(S.flush != 0));
            json_object_set_new(ev, "verified", json_boolean(any_verify));
            json_object_set_new(ev, "benchmarked", json_boolean(!verify_only && valid > 0));
            json_object_set_new(ev, "duration_ms", json_real(spent));
            if (S.error != CUDA_SUCCESS) {
                char b[32];
                json_object_set_new(ev, "error",
                                    json_sprintf("%s at %s", xmt_cu_name(S.error, b, sizeof b),
                                                 S.error_at ? S.error_at : "?"));
            }
            xmt_log_event(ev);
        } else {
            json_decref(owno);
            json_decref(cl);
            json_decref(winner);
        }
    }
    free(cands);
    free(times);
    free(S.bufs);
}

/* ---- the launch ---------------------------------------------------------------------------- */

/* ---- the per-thread memo: the fast path of a decided key ---------------------------------- */

/* A program launches the same kernel with the same arguments again and again. Key and
 * candidate are pure functions of the argument bytes, the program's own dims and the
 * device, so each thread remembers, per kernel, the last arguments it saw decided and what
 * was decided: a launch with the same bytes skips key derivation, the cache lookup and
 * expression evaluation, and costs a compare of its arguments. Only decided keys are
 * remembered (never "another thread is tuning"). */
#define MEMO_SLOTS 8
#define MEMO_ARG_BYTES 256
typedef struct {
    const xmt_kernel *k;
    int device;
    int own; /* the decision is the program's own config */
    unsigned nbytes;
    unsigned grid[3], block[3], shared;
    uint8_t bytes[MEMO_ARG_BYTES];
    xmt_candidate c;
    /* This thread's counts for k since the entry was filled, added to k's shared counters
     * when the entry is replaced and at exit: a hit writes no shared cache line. */
    uint64_t launches, rewritten, passed;
} memo_t;
typedef struct memo_block {
    memo_t slots[MEMO_SLOTS];
    struct memo_block *next;
} memo_block;
static __thread memo_t *tls_memo __attribute__((tls_model("initial-exec")));
static memo_block *memo_blocks; /* every live thread's, for the flush at exit */
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t memo_key;
static pthread_once_t memo_key_once = PTHREAD_ONCE_INIT;

static void memo_flush(memo_t *m)
{
    xmt_kernel *k = (xmt_kernel *)m->k;
    if (!k) return;
    atomic_fetch_add_explicit(&k->launches, m->launches, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->rewritten, m->rewritten, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->passed, m->passed, memory_order_relaxed);
    m->launches = m->rewritten = m->passed = 0;
}

/* At thread exit: the thread's counts go to the kernels, its block is freed. */
static void memo_release(void *p)
{
    memo_block *b = p;
    pthread_mutex_lock(&memo_lock);
    for (int i = 0; i < MEMO_SLOTS; i++)
        memo_flush(&b->slots[i]);
    for (memo_block **q = &memo_blocks; *q; q = &(*q)->next)
        if (*q == b) {
            *q = b->next;
            break;
        }
    pthread_mutex_unlock(&memo_lock);
    tls_memo = NULL;
    free(b);
}

static void memo_key_create(void)
{
    if (pthread_key_create(&memo_key, memo_release) != 0) memo_key = (pthread_key_t)-1;
}

static memo_t *memo_slot(const xmt_kernel *k)
{
    memo_t *m = tls_memo;
    if (__builtin_expect(!m, 0)) {
        /* Freed at thread exit (memo_release), after its counts are added up. */
        pthread_once(&memo_key_once, memo_key_create);
        memo_block *b = aligned_alloc(64, (sizeof *b + 63) / 64 * 64); /* no line shared */
        if (!b) return NULL;
        memset(b, 0, sizeof *b);
        if (memo_key == (pthread_key_t)-1 || pthread_setspecific(memo_key, b) != 0) {
            free(b);
            return NULL;
        }
        pthread_mutex_lock(&memo_lock);
        b->next = memo_blocks;
        memo_blocks = b;
        pthread_mutex_unlock(&memo_lock);
        m = tls_memo = b->slots;
    }
    return &m[((uintptr_t)k >> 6) % MEMO_SLOTS];
}

/* Equality of a few argument bytes: fixed-size loads for the usual 4 and 8, not a call. */
static inline int same_bytes(const uint8_t *a, const void *b, unsigned n)
{
    if (n == 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x == y;
    }
    if (n == 4) {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x == y;
    }
    return memcmp(a, b, n) == 0;
}

static inline int memo_hit(const memo_t *m, const xmt_kernel *k, int device, const xmt_launch *l,
                           void *const *params)
{
    if (m->k != k || m->device != device || m->shared != l->shared || m->grid[0] != l->grid[0] ||
        m->grid[1] != l->grid[1] || m->grid[2] != l->grid[2] || m->block[0] != l->block[0] ||
        m->block[1] != l->block[1] || m->block[2] != l->block[2])
        return 0;
    unsigned off = 0;
    for (size_t i = 0; i < k->nparams; i++) {
        unsigned sz = k->sizes[i];
        if (off + sz > m->nbytes || !same_bytes(m->bytes + off, params[i], sz)) return 0;
        off += sz;
    }
    return off == m->nbytes;
}

static void memo_store(memo_t *m, const xmt_kernel *k, int device, const xmt_launch *l,
                       void *const *params, const xmt_candidate *c)
{
    if (!m) return;
    memo_flush(m);
    unsigned off = 0;
    for (size_t i = 0; i < k->nparams; i++) {
        if (off + k->sizes[i] > MEMO_ARG_BYTES) {
            m->k = NULL; /* too many argument bytes to remember */
            return;
        }
        memcpy(m->bytes + off, params[i], k->sizes[i]);
        off += k->sizes[i];
    }
    m->nbytes = off;
    m->device = device;
    memcpy(m->grid, l->grid, sizeof m->grid);
    memcpy(m->block, l->block, sizeof m->block);
    m->shared = l->shared;
    m->own = c == NULL;
    if (c) m->c = *c;
    m->k = k;
}

/* The launching thread's device. A process that sees one device needs no driver call. */
static _Atomic int device_count = -1;
static int current_device(CUdevice *dev)
{
    int n = atomic_load_explicit(&device_count, memory_order_relaxed);
    if (n < 0) {
        int c = 0;
        xmt_in_shim++;
        if (!xmt_drv.cuDeviceGetCount || xmt_drv.cuDeviceGetCount(&c) != CUDA_SUCCESS) c = 0;
        xmt_in_shim--;
        atomic_store(&device_count, c);
        n = c;
    }
    if (n == 1) {
        *dev = 0;
        return 1;
    }
    xmt_in_shim++;
    CUresult r = xmt_drv.cuCtxGetDevice ? xmt_drv.cuCtxGetDevice(dev) : CUDA_ERROR_NOT_SUPPORTED;
    xmt_in_shim--;
    return r == CUDA_SUCCESS;
}

static result_t *find_result(struct xmt_tune_state *ts, const uint8_t *key, size_t kl)
{
    result_t *r = NULL;
    pthread_rwlock_rdlock(&ts->lock);
    HASH_FIND(hh, ts->results, key, kl, r);
    pthread_rwlock_unlock(&ts->lock);
    return r;
}

/* Runs a decided key: the winner's config recomputed for this launch, or the program's. */
static CUresult run_choice(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                           const result_t *r, int device)
{
    memo_t *m = memo_slot(k);
    if (r->index == XMT_OWN_CONFIG) {
        memo_store(m, k, device, l, v->params, NULL);
        return pass(k, l);
    }
    xmt_candidate c;
    int ok = r->index == XMT_PIN_CONFIG
                 ? xmt_entry_pin(k->entry, v, &c) == 1
                 : xmt_entry_candidate(k->entry, (size_t)r->index, v, &c) == 1;
    memo_store(m, k, device, l, v->params, ok ? &c : NULL);
    if (!ok) /* its condition does not hold for this launch's non-key arguments */
        return pass(k, l);
    return run_for_real(k, l, &c);
}

static int capturing(CUstream s)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!xmt_drv.cuStreamIsCapturing) return 0;
    xmt_in_shim++;
    CUresult r = xmt_drv.cuStreamIsCapturing(s, &st);
    xmt_in_shim--;
    return r != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static __attribute__((noinline)) CUresult tune_launch_slow(xmt_kernel *k, xmt_launch *l)
{
    atomic_fetch_add_explicit(&k->launches, 1, memory_order_relaxed);
    const xmt_entry *e = k->entry;
    if (l->kind == XMT_K_COOP || (l->kind == XMT_K_EX && xmt_launch_has_blocking_attrs(l->cfg)))
        return pass(k, l);
    struct xmt_tune_state *ts = state_of(k);
    if (!ts) return pass(k, l);

    /* The arguments, wherever the program put them. */
    void *argv[XMT_KERNEL_MAX_PARAMS];
    void *const *params = (void *const *)l->params;
    if (!params) {
        uint8_t *buf;
        size_t size;
        if (!l->extra || extra_buffer(l->extra, &buf, &size) != 0 ||
            k->nparams > XMT_KERNEL_MAX_PARAMS)
            return pass(k, l);
        for (size_t i = 0; i < k->nparams; i++) {
            if (k->offsets[i] + k->sizes[i] > size) return pass(k, l);
            argv[i] = buf + k->offsets[i];
        }
        params = argv;
    }

    CUdevice dev = 0;
    if (!current_device(&dev)) return pass(k, l);
    const devinfo_t *di = device_info(dev);
    if (!di) return pass(k, l);
    xmt_attrs attrs = di->attrs;
    attrs.kernel_max_threads = k->max_threads;
    attrs.kernel_static_shared = k->static_shared;
    xmt_launch_view v = {
        params,
        k->nparams,
        {{l->grid[0], l->grid[1], l->grid[2]}, {l->block[0], l->block[1], l->block[2]}, l->shared},
        &attrs};

    uint8_t key[4 + XMT_KEY_MAX];
    int32_t d32 = (int32_t)dev;
    memcpy(key, &d32, 4);
    size_t kl = xmt_entry_key(e, &v, key + 4, XMT_KEY_MAX);
    if (kl == 0) {
        if (!__atomic_exchange_n(&ts->key_error_warned, 1, __ATOMIC_RELAXED))
            xmt_warn("%s: the lookup key of policy %s cannot be computed for this launch; such "
                     "launches pass through",
                     k->demangled, xmt_entry_origin(e));
        return pass(k, l);
    }
    kl += 4;

    result_t *r = find_result(ts, key, kl);
    if (r) {
        if (atomic_load_explicit(&r->state, memory_order_acquire) == R_DONE)
            return run_choice(k, l, &v, r, (int)dev);
        return pass(k, l); /* another thread is tuning this key */
    }

    /* A new key. */
    char key_text[512];
    if (xmt_entry_key_render(e, key + 4, kl - 4, key_text, sizeof key_text) < 0)
        snprintf(key_text, sizeof key_text, "?");
    xmt_choice ch = {XMT_OWN_CONFIG, "", 0};
    int decided = 0, store_on_disk = 0, verify_only = 0, need_run = 0;
    const xmt_candidate *only = NULL;
    xmt_candidate c;
    int pin = xmt_entry_pin(e, &v, &c);
    if (pin < 0)
        xmt_warn("%s: the pin of policy %s is not valid for key %s (%s); tuning instead",
                 k->demangled, xmt_entry_origin(e), key_text, c.why);
    if (pin == 1) {
        ch.index = XMT_PIN_CONFIG;
        snprintf(ch.label, sizeof ch.label, "%s", c.label);
        decided = 1;
        if (xmt_entry_nbuffers(e) > 0) { /* verified once, never benchmarked */
            need_run = 1;
            verify_only = 1;
            only = &c;
        }
    } else if (xmt_cache_find(di->id, k->mangled, xmt_entry_pattern(e), key + 4, kl - 4, &ch)) {
        xmt_candidate cc;
        if (ch.index == XMT_OWN_CONFIG ||
            (ch.index >= 0 && (size_t)ch.index < xmt_entry_ncandidates(e) &&
             xmt_entry_candidate(e, (size_t)ch.index, &v, &cc) >= 0 &&
             strcmp(cc.label, ch.label) == 0))
            decided = 1;
        else
            ch.index = XMT_OWN_CONFIG; /* the policy changed since: tune again */
    }
    if (!decided && xmt_opt.mode == XMT_MODE_REPLAY) {
        decided = 1; /* replay never benchmarks: an unknown key keeps the program's config */
        ch.index = XMT_OWN_CONFIG;
    }
    if (!decided && xmt_opt.total_budget_ms >= 0 &&
        (double)atomic_load(&total_tuning_us) / 1000.0 > xmt_opt.total_budget_ms) {
        static atomic_int warned;
        if (!atomic_exchange(&warned, 1))
            xmt_warn("the total tuning budget (%g ms) is spent; new keys run untuned",
                     xmt_opt.total_budget_ms);
        decided = 1;
        ch.index = XMT_OWN_CONFIG;
    }
    if (!decided) {
        need_run = 1;
        store_on_disk = 1;
        verify_only = xmt_entry_ncandidates(e) == 1; /* XMA: a single config is not timed */
    }
    /* Under capture nothing runs but the launch itself (a rewrite would be baked into the
     * graph): an unverified pin or an untuned key keeps the program's config, and the next
     * launch outside capture decides. */
    if (need_run && capturing(xmt_launch_stream(l))) return pass(k, l);

    /* Claim the key: exactly one thread tunes it. */
    size_t rsize = sizeof(result_t) + kl;
    result_t *mine = calloc(1, rsize);
    if (!mine) return pass(k, l);
    mine->keylen = kl;
    memcpy(mine->key, key, kl);
    atomic_store(&mine->state, R_TUNING);
    pthread_rwlock_wrlock(&ts->lock);
    HASH_FIND(hh, ts->results, key, kl, r);
    if (!r) HASH_ADD(hh, ts->results, key, kl, mine);
    pthread_rwlock_unlock(&ts->lock);
    if (r) {
        free(mine);
        if (atomic_load_explicit(&r->state, memory_order_acquire) == R_DONE)
            return run_choice(k, l, &v, r, (int)dev);
        return pass(k, l);
    }

    if (need_run) tune_key(k, l, &v, key_text, (int)dev, verify_only, only, &ch);
    mine->index = ch.index;
    snprintf(mine->label, sizeof mine->label, "%s", ch.label);
    pthread_mutex_lock(&k->lock);
    ts->keys_tuned++;
    pthread_mutex_unlock(&k->lock);
    atomic_store_explicit(&mine->state, R_DONE, memory_order_release);
    if (store_on_disk)
        xmt_cache_store(di->id, k->mangled, xmt_entry_pattern(e), key + 4, kl - 4, key_text, &ch);
    return run_choice(k, l, &v, mine, (int)dev);
}

/* The fast path of a decided key: this thread launched this kernel with these argument
 * bytes and dims before (see memo_t). Everything else is tune_launch_slow's. */
CUresult xmt_tune_launch(xmt_kernel *k, xmt_launch *l)
{
    memo_t *m = tls_memo;
    CUdevice dev;
    if (__builtin_expect(m != NULL && l->params != NULL, 1) &&
        (l->kind == XMT_K_LAUNCH ||
         (l->kind == XMT_K_EX && !xmt_launch_has_blocking_attrs(l->cfg))) &&
        current_device(&dev)) {
        m = &m[((uintptr_t)k >> 6) % MEMO_SLOTS];
        if (memo_hit(m, k, (int)dev, l, (void *const *)l->params)) {
            m->launches++;
            if (m->own) {
                m->passed++;
                return xmt_launch_call(l);
            }
            if (m->c.nargs == 0 && l->kind == XMT_K_LAUNCH) {
                const xmt_dims *d = &m->c.dims;
                CUresult r = ((xmt_pfn_launch)l->real)(l->f, d->grid.x, d->grid.y, d->grid.z,
                                                       d->block.x, d->block.y, d->block.z,
                                                       d->shared, l->stream, l->params, l->extra);
                if (r == CUDA_SUCCESS) {
                    m->rewritten++;
                    return r;
                }
                if (!refused(r)) return r;
            }
            return run_for_real(k, l, &m->c);
        }
    }
    return tune_launch_slow(k, l);
}

/* ---- lifecycle and report ----------------------------------------------------------------- */

void xmt_tuner_init(void)
{
    if (xmt_opt.mode == XMT_MODE_TUNE || xmt_opt.mode == XMT_MODE_REPLAY) xmt_cache_load();
}

void xmt_tune_flush_counts(void)
{
    pthread_mutex_lock(&memo_lock);
    for (memo_block *b = memo_blocks; b; b = b->next)
        for (int i = 0; i < MEMO_SLOTS; i++)
            memo_flush(&b->slots[i]);
    pthread_mutex_unlock(&memo_lock);
}

void xmt_tune_report(xmt_kernel *k, FILE *table)
{
    unsigned keys = k->tune ? k->tune->keys_tuned : 0;
    uint64_t launches = atomic_load(&k->launches), rewritten = atomic_load(&k->rewritten),
             passed = atomic_load(&k->passed);
    json_t *ev = json_pack("{sssssssIsIsIsiss}", "event", "kernel_summary", "kernel", k->mangled,
                           "name", k->demangled, "launches", (json_int_t)launches, "rewritten",
                           (json_int_t)rewritten, "passed_through", (json_int_t)passed, "keys",
                           (int)keys, "policy", xmt_entry_origin(k->entry));
    xmt_log_event(ev);
    if (table)
        fprintf(table, "xmatune: %10llu %10llu %6u  %s\n", (unsigned long long)launches,
                (unsigned long long)rewritten, keys, k->demangled);
}
