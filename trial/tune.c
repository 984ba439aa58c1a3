/*
 * tune: one tuning session in the trial helper (see tune.h).
 */
#include "tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "drvtime.h"
#include "drvwrap.h"
#include "kernels.h"
#include "log.h"
#include "options.h"
#include "policies.h"
#include "session.h"
#include "trialreq.h"
#include "tune_event.h"
#include "tuner.h"

#define MAX_WINDOWS XMT_TR_MAX_WINDOWS
#define MAX_FAULTED XMT_TR_MAX_FAULTED
#define MODULES 64

_Static_assert(XMT_TR_MAX_ARGS == XMT_MAX_ARG_OVERRIDES, "a config's arguments fit");
_Static_assert(XMT_TR_MAX_PARAMS <= XMT_KERNEL_MAX_PARAMS, "a request's parameters fit");
_Static_assert(XMT_TR_WHY == sizeof(((xmt_cand *)0)->after_fault_label), "a fault's why fits");

static int chan = -1;
static uint32_t cur_seq;
static double last_beat;
static CUstream stream;
static int started;

/* Modules loaded in this helper, by the image id the program gave (its owner handle). */
static struct {
    char id[40];
    CUmodule m;
} modules[MODULES];
static size_t nmodules;

/* The log lines a session produced, for the RESULT. */
static char *events;
static size_t events_len, events_cap;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void note(const char *text)
{
    xmt_tp_msg m = {.type = XMT_TP_NOTE, .seq = cur_seq};
    snprintf(m.u.note.text, sizeof m.u.note.text, "%s", text);
    xmt_tp_send(chan, &m, NULL, 0);
    last_beat = now_ms();
}

static void relay_message(const char *line)
{
    note(line[0] ? line : " ");
}

static void relay_event(const char *json)
{
    size_t n = strlen(json);
    if (events_len + n + 2 > events_cap) {
        size_t cap = (events_len + n + 2) * 2;
        char *e = realloc(events, cap);
        if (!e) return;
        events = e;
        events_cap = cap;
    }
    memcpy(events + events_len, json, n + 1); /* its NUL, replaced by the newline */
    events_len += n;
    events[events_len++] = '\n';
}

/* A candidate the session decided cannot win, streamed as it is decided: what the program
 * keeps for a session its exit cuts (docs/tuning.md, "Resuming a session cut at exit"). */
static void decided(long index)
{
    xmt_tp_msg m = {.type = XMT_TP_DECIDED, .seq = cur_seq, .u.decided = index};
    xmt_tp_send(chan, &m, NULL, 0);
    last_beat = now_ms();
}

/* The heartbeat: the program takes a helper silent for XMATUNE_TRIAL_TIMEOUT_MS as hung. */
static void tick(void)
{
    if (now_ms() - last_beat >= 250) note("");
}

static void quiet(const char *msg)
{
    (void)msg;
}

static void quiet_diag(void *ud, const char *msg)
{
    (void)ud;
    (void)msg;
}

/* Once: the options and the policy, as the program read them (the same environment); the
 * driver through driver.c; messages and events relayed to the program. */
static int start(char *why, size_t cap)
{
    if (started) return 0;
    xmt_options_load(quiet);
    if (xmt_driver_init() != 0) {
        snprintf(why, cap, "the helper cannot open the CUDA driver");
        return -1;
    }
    /* every session's tune event says where its driver time went (drvtime.h) */
    xmt_drvtime_install();
    if (xmt_opt.policy[0]) xmt_policy_load(xmt_opt.policy, &xmt_policies, quiet_diag, NULL);
    xmt_log_set_relay(relay_message, relay_event);
    xmt_session_tick = tick;
    xmt_session_decided = decided;
    CUresult r = xmt_drv.cuStreamCreate ? xmt_drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)
                                        : CUDA_ERROR_NOT_SUPPORTED;
    if (r != CUDA_SUCCESS) {
        snprintf(why, cap, "the helper cannot create a stream (CUresult %d)", (int)r);
        return -1;
    }
    started = 1;
    return 0;
}

/* ---- the request ------------------------------------------------------------------------ */

/* A request being served: the request as the program sent it (rq, decoded), and what this
 * helper made of it. */
typedef struct {
    xmt_trialreq rq;
    char *image;
    size_t image_len;
    int staging_fd;
    uint64_t staging_bytes;
    /* the windows of staged memory: where the program has them, where in the staging */
    size_t nwin;
    CUdeviceptr win_va[MAX_WINDOWS];
    size_t win_bytes[MAX_WINDOWS], win_off[MAX_WINDOWS];
    CUdeviceptr here[MAX_WINDOWS]; /* where this helper mapped each */
    CUmemGenericAllocationHandle h;
    CUdeviceptr whole;        /* the moved mapping's start, or 0 */
    CUdeviceptr resv;         /* the reservation: the mapping with its unmapped guard each side */
    size_t resv_bytes, guard; /* guard: rq's granularity (the shim asked the driver) */
    int moved;                /* not at the program's addresses: pointers are translated */
    int mapped;
    xmt_region *regs;
    size_t nregs;
    long faulted[MAX_FAULTED];
    char faulted_why[MAX_FAULTED][160];
    char faulted_key[MAX_FAULTED][160];
    size_t nfaulted;
} request;

/* Reads a memfd whole (len bytes) into a malloc'd buffer with a NUL after it. */
static char *read_fd(int fd, size_t len)
{
    char *b = malloc(len + 1);
    size_t got = 0;
    while (b && got < len) {
        ssize_t n = pread(fd, b + got, len - got, (off_t)got);
        if (n <= 0 && errno != EINTR) {
            free(b);
            return NULL;
        }
        if (n > 0) got += (size_t)n;
    }
    if (b) b[len] = 0;
    return b;
}

/* The address a program address has here. */
static CUdeviceptr here_of(const request *q, CUdeviceptr p)
{
    for (size_t i = 0; q->moved && i < q->nwin; i++)
        if (p >= q->win_va[i] && p < q->win_va[i] + q->win_bytes[i])
            return q->here[i] + (p - q->win_va[i]);
    return p;
}

/* Reserves bytes with `guard` bytes more each side, at hint - guard when hint is not 0:
 * *start the reservation's start. At a hint, only there: *start 0 (and CUDA_SUCCESS) when
 * the range is not free. Anywhere: the driver's failure, as it said it. */
static CUresult reserve_guarded(request *q, size_t bytes, CUdeviceptr hint, CUdeviceptr *start)
{
    CUdeviceptr got = 0, want = hint ? hint - q->guard : 0;
    *start = 0;
    if (hint && hint < q->guard) return CUDA_SUCCESS;
    CUresult r = xmt_drv.cuMemAddressReserve(&got, bytes + 2 * q->guard, 0, want, 0);
    if (r != CUDA_SUCCESS) return hint ? CUDA_SUCCESS : r;
    if (hint && got != want) {
        xmt_drv.cuMemAddressFree(got, bytes + 2 * q->guard);
        return CUDA_SUCCESS;
    }
    q->resv = got;
    q->resv_bytes = bytes + 2 * q->guard;
    *start = got;
    return CUDA_SUCCESS;
}

/* The staged memory mapped: at the program's own addresses when it is one window whose
 * range is free here (then pointers stored inside device memory stay valid), else in one
 * range anywhere with the pointer arguments translated. Either way between two guards of
 * reserved address space left unmapped (the allocation granularity each): a candidate
 * that writes past the staged memory faults there, where it would otherwise write
 * whatever this helper has next to it (its own snapshot and reference copies among them)
 * unseen; on the GPU the window of a PyTorch segment is the segment itself, with no
 * guard bytes (slack.h) around it. */
static CUresult map_staging(request *q)
{
    CUresult r;
    if (!q->staging_bytes) return CUDA_SUCCESS;
    r = xmt_drv.cuMemImportFromShareableHandle(&q->h, (void *)(uintptr_t)q->staging_fd,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (r != CUDA_SUCCESS) return r;
    CUdevice dev = 0;
    if (xmt_drv.cuCtxGetDevice) xmt_drv.cuCtxGetDevice(&dev);
    /* the granularity the shim rounded the windows to (it asked the driver: the same device) */
    q->guard = (size_t)q->rq.granularity;
    if (q->guard == 0) return CUDA_ERROR_INVALID_VALUE;
    /* cuMemMap maps an allocation from its start only ("offset: must be zero currently",
     * the driver API's documentation; the H200 answered 801 NOT_SUPPORTED): several
     * windows of one allocation cannot each go to the program's address, so they are
     * mapped end to end elsewhere and the pointer arguments translated */
    CUdeviceptr start = 0;
    if (q->nwin == 1 && reserve_guarded(q, q->win_bytes[0], q->win_va[0], &start) == CUDA_SUCCESS &&
        start)
        q->here[0] = q->win_va[0];
    if (!q->here[0]) { /* moved: end to end, anywhere */
        q->moved = 1;
        if ((r = reserve_guarded(q, q->staging_bytes, 0, &start)) != CUDA_SUCCESS) return r;
        q->whole = q->resv + q->guard;
        for (size_t i = 0; i < q->nwin; i++)
            q->here[i] = q->whole + q->win_off[i];
    }
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, (int)dev},
                           CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUdeviceptr at = q->moved ? q->whole : q->here[0];
    if ((r = xmt_drv.cuMemMap(at, q->staging_bytes, 0, q->h, 0)) != CUDA_SUCCESS) return r;
    q->mapped = 1;
    return xmt_drv.cuMemSetAccess(at, q->staging_bytes, &acc, 1);
}

static void unmap_staging(request *q)
{
    if (!q->staging_bytes || !q->h) return;
    CUdeviceptr at = q->moved ? q->whole : q->here[0];
    if (q->mapped) xmt_drv.cuMemUnmap(at, q->staging_bytes);
    if (q->resv) xmt_drv.cuMemAddressFree(q->resv, q->resv_bytes);
    xmt_drv.cuMemRelease(q->h);
}

/* The request's windows and faulted candidates as the session takes them, and room for
 * its regions where this helper has them. 0, or -1 with why. */
static int read_layout(request *q, char *why, size_t cap)
{
    q->nwin = (size_t)q->rq.nwindows; /* at most MAX_WINDOWS, MAX_FAULTED: the decoder's */
    q->nregs = (size_t)q->rq.nregions;
    q->nfaulted = (size_t)q->rq.nfaulted;
    for (size_t i = 0; i < q->nwin; i++) {
        q->win_va[i] = (CUdeviceptr)q->rq.windows[i].va;
        q->win_bytes[i] = (size_t)q->rq.windows[i].bytes;
        q->win_off[i] = (size_t)q->rq.windows[i].offset;
    }
    for (size_t i = 0; i < q->nfaulted; i++) {
        q->faulted[i] = (long)q->rq.faulted[i].index;
        memcpy(q->faulted_why[i], q->rq.faulted[i].why, sizeof q->faulted_why[i]);
        memcpy(q->faulted_key[i], q->rq.faulted[i].key, sizeof q->faulted_key[i]);
    }
    q->regs = calloc(q->nregs ? q->nregs : 1, sizeof *q->regs);
    if (!q->regs) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- the module, the kernel, the launch -------------------------------------------------- */

/* The function the program launched, from its image (loaded once per image here). */
static CUresult function_of(request *q, CUfunction *f, CUmodule *mod, char *why, size_t cap)
{
    const char *id = q->rq.image.id;
    CUmodule m = NULL;
    for (size_t i = 0; i < nmodules; i++)
        if (!strcmp(modules[i].id, id)) m = modules[i].m;
    if (!m) {
        if (!q->image) {
            snprintf(why, cap, "no image %s here", id);
            return CUDA_ERROR_NOT_FOUND;
        }
        CUjit_option opts[XMT_TR_MAX_JIT];
        void *vals[XMT_TR_MAX_JIT];
        unsigned n = 0;
        for (; n < q->rq.image.njit; n++) {
            opts[n] = (CUjit_option)q->rq.image.jit[n].option;
            vals[n] = (void *)(uintptr_t)q->rq.image.jit[n].value;
        }
        CUresult r = xmt_drv.cuModuleLoadDataEx(&m, q->image, n, opts, vals);
        if (r != CUDA_SUCCESS) {
            snprintf(why, cap, "the program's module image does not load here (CUresult %d)",
                     (int)r);
            return r;
        }
        if (nmodules < MODULES) {
            snprintf(modules[nmodules].id, sizeof modules[nmodules].id, "%s", id);
            modules[nmodules++].m = m;
        }
    }
    *mod = m;
    CUresult r = xmt_drv.cuModuleGetFunction(f, m, q->rq.kernel);
    if (r != CUDA_SUCCESS) snprintf(why, cap, "the image has no kernel %s", q->rq.kernel);
    return r;
}

/* The kernel's code loaded for a session: its time, and the driver-call sums before it
 * (drvtime.h; counted 0 when they are not kept), both the session's. */
typedef struct {
    double ms;
    xmt_drvtime drv0;
    int counted;
} code_load;

/* function_of, and the function's code loaded now rather than inside its first run (lazy
 * loading, the driver's default, would load it there): the session counts both loads as
 * module_load, not as the program's own config's outputs run. */
static CUresult load_function(request *q, CUfunction *f, CUmodule *mod, code_load *cl, char *why,
                              size_t cap)
{
    cl->counted = xmt_drvtime_read(&cl->drv0) == 0;
    double m0 = xmt_now_ms();
    CUresult r = function_of(q, f, mod, why, cap);
    if (r == CUDA_SUCCESS && xmt_drv.cuFuncLoad) (void)xmt_drv.cuFuncLoad(*f);
    cl->ms = xmt_now_ms() - m0;
    return r;
}

/* The module globals the program set, given their values here (before every session:
 * the module is kept, and an earlier session's runs may have changed them). */
static CUresult set_globals(const request *q, CUmodule m, char *why, size_t cap)
{
    for (size_t i = 0; i < q->rq.nglobals; i++) {
        const xmt_tr_global *g = &q->rq.globals[i];
        size_t have = 0;
        CUdeviceptr d = 0;
        CUresult r = xmt_drv.cuModuleGetGlobal(&d, &have, m, g->name);
        if (r == CUDA_SUCCESS && have != g->value.len) r = CUDA_ERROR_INVALID_VALUE;
        if (r == CUDA_SUCCESS) r = xmt_drv.cuMemcpyHtoD(d, g->value.bytes, g->value.len);
        if (r != CUDA_SUCCESS) {
            snprintf(why, cap, "the module global %s cannot be set here (CUresult %d)", g->name,
                     (int)r);
            return r;
        }
    }
    return CUDA_SUCCESS;
}

/* The launch's parameters: the program's bytes, pointers translated when moved (any 8-byte
 * word that points into a staged window: at the same offset there). */
static int params_of(request *q, const xmt_kernel *k, uint8_t *store, size_t cap, void **params,
                     char *why, size_t wcap)
{
    const xmt_tr_launch *L = &q->rq.launch;
    if (!k->params_known || L->nparams != k->nparams || k->nparams > XMT_KERNEL_MAX_PARAMS) {
        snprintf(why, wcap, "the kernel's parameters here do not match the program's");
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < k->nparams; i++) {
        size_t n = L->params[i].len;
        if (n != k->sizes[i] || at + n + 8 > cap) {
            snprintf(why, wcap, "parameter %zu: %zu bytes, the kernel here has %u", i, n,
                     k->sizes[i]);
            return -1;
        }
        at = (at + 7) & ~(size_t)7;
        if (n) memcpy(store + at, L->params[i].bytes, n);
        /* an 8-byte parameter, and each 8-byte word of a larger one (a struct by value,
         * whose pointer members the shim staged too: protect.c) */
        for (size_t o = 0; q->moved && o + 8 <= n; o += 8) {
            CUdeviceptr p;
            memcpy(&p, store + at + o, 8);
            p = here_of(q, p);
            memcpy(store + at + o, &p, 8);
        }
        params[i] = store + at;
        at += n;
    }
    return 0;
}

/* A candidate as the program sent it (a pin, or a cached winner to verify). Its arguments
 * fit the launch's parameters (the decoder's xmt_tr_args_check), and those are the
 * kernel's here (params_of): never an index past the kernel's parameter list. */
static void candidate_of(const xmt_tr_candidate *o, xmt_candidate *c)
{
    memset(c, 0, sizeof *c);
    c->dims.grid = (xmt_dim3){o->grid.x, o->grid.y, o->grid.z};
    c->dims.block = (xmt_dim3){o->block.x, o->block.y, o->block.z};
    c->dims.shared = o->shared;
    c->nargs = o->nargs;
    for (uint32_t i = 0; i < o->nargs; i++) {
        c->args[i].param = o->args[i].param;
        c->args[i].value = o->args[i].value;
        c->args[i].size = o->args[i].size;
    }
    memcpy(c->label, o->label, sizeof c->label);
}

/* ---- the session ------------------------------------------------------------------------- */

/* The session's event relayed (a tune event, or a re-check's), and its outcome in res. */
static void report(xmt_session *S, xmt_tp_result *res)
{
    /* a session retried without its culprit reports only its last run */
    if ((!S->out.has_culprit || S->out.culprit == XMT_OWN_CONFIG) && S->req.recheck)
        xmt_recheck_event(S);
    else if (!S->out.has_culprit || S->out.culprit == XMT_OWN_CONFIG)
        xmt_tune_event(S);
    res->choice = S->out.choice.index;
    res->time_ms = S->out.choice.time_ms;
    snprintf(res->label, sizeof res->label, "%s", S->out.choice.label);
    res->spent_ms = S->out.spent_ms;
    res->storable = S->out.error == CUDA_SUCCESS && !S->out.untuned[0] && !S->out.uninformative;
    res->uninformative = S->out.uninformative;
    snprintf(res->data, sizeof res->data, "%s", S->out.data_digest);
    res->exiting = S->out.error != CUDA_SUCCESS;
    res->reference = (uint8_t)S->out.reference_staged;
    res->culprit = S->out.has_culprit ? S->out.culprit : XMT_TP_NO_CULPRIT;
    res->culprit_error = (int32_t)S->out.error;
    res->culprit_unsorted = (uint8_t)S->out.culprit_unsorted;
    if (S->out.error != CUDA_SUCCESS) {
        char nb[32];
        snprintf(res->why, sizeof res->why, "%s at %s", xmt_cu_name(S->out.error, nb, sizeof nb),
                 S->out.error_at ? S->out.error_at : "?");
    } else if (S->out.untuned[0]) { /* what the program's cache keeps as this key's outcome */
        snprintf(res->why, sizeof res->why, "%.250s", S->out.untuned);
        snprintf(res->outcome, sizeof res->outcome, "%s",
                 S->out.untuned_outcome ? S->out.untuned_outcome : XMT_OUTCOME_UNTUNED);
    }
}

/* The function's attributes as the program set them (the launch's max_dynamic_shared and
 * carveout). */
static void set_attributes(CUfunction f, const xmt_tr_launch *L)
{
    if (!xmt_drv.cuFuncSetAttribute) return;
    int dyn = L->max_dynamic_shared, carve = L->carveout;
    if (dyn > 0)
        xmt_drv.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn);
    if (carve >= 0)
        xmt_drv.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carve);
}

/* Runs the session of q and fills res. */
static void run(request *q, xmt_tp_result *res)
{
    char why[XMT_TP_NAME] = "";
    CUfunction f;
    CUmodule mod = NULL;
    code_load cl;
    CUresult r = load_function(q, &f, &mod, &cl, why, sizeof why);
    if (r == CUDA_SUCCESS) r = set_globals(q, mod, why, sizeof why);
    char nb[32];
    if (r == CUDA_SUCCESS && (r = map_staging(q)) != CUDA_SUCCESS)
        snprintf(why, sizeof why, "the staged memory cannot be mapped here (%s)",
                 xmt_cu_name(r, nb, sizeof nb));
    const xmt_tr_launch *L = &q->rq.launch;
    if (r == CUDA_SUCCESS) set_attributes(f, L);
    xmt_kernel *k = r == CUDA_SUCCESS ? xmt_kernels_get(f) : NULL;
    if (r == CUDA_SUCCESS && (!k || !k->entry)) {
        r = CUDA_ERROR_NOT_FOUND;
        snprintf(why, sizeof why, "no policy entry for %s in the helper", q->rq.kernel);
    } else if (r == CUDA_SUCCESS && xmt_entry_fingerprint(k->entry) != q->rq.entry_fp) {
        r = CUDA_ERROR_NOT_FOUND;
        snprintf(why, sizeof why, "the policy file changed since the program read it");
    }
    static uint8_t store[XMT_KERNEL_MAX_PARAMS * 16 + 4096];
    void *params[XMT_KERNEL_MAX_PARAMS];
    if (r == CUDA_SUCCESS && params_of(q, k, store, sizeof store, params, why, sizeof why) != 0)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS) {
        res->status = (int32_t)r;
        snprintf(res->why, sizeof res->why, "%s", why);
        return;
    }
    xmt_launch l = {.kind = XMT_K_LAUNCH,
                    .real = (void *)xmt_drv.cuLaunchKernel,
                    .f = f,
                    .grid = {L->grid.x, L->grid.y, L->grid.z},
                    .block = {L->block.x, L->block.y, L->block.z},
                    .shared = L->shared,
                    .stream = stream,
                    .params = params};
    for (size_t i = 0; i < q->nregs; i++) {
        q->regs[i].base = here_of(q, (CUdeviceptr)q->rq.regions[i].base);
        q->regs[i].bytes = (size_t)q->rq.regions[i].bytes;
    }
    void *argv[XMT_KERNEL_MAX_PARAMS];
    xmt_attrs attrs;
    xmt_launch_view v;
    CUdevice dev;
    const xmt_devinfo *di;
    if (!xmt_tuner_view(k, &l, argv, &attrs, &v, &dev, &di)) {
        res->status = CUDA_ERROR_INVALID_VALUE;
        snprintf(res->why, sizeof res->why, "the launch's view cannot be made here");
        return;
    }
    xmt_candidate only;
    if (q->rq.has_only) candidate_of(&q->rq.only, &only);
    xmt_trial_in in = {.regs = q->regs,
                       .nregs = q->nregs,
                       .win = q->here,
                       .win_bytes = q->win_bytes,
                       .nwin = q->staging_bytes ? q->nwin : 0,
                       .faulted = q->faulted,
                       .faulted_why = q->faulted_why,
                       .faulted_key = q->faulted_key,
                       .nfaulted = q->nfaulted,
                       .staged_bytes = q->staging_bytes,
                       .moved = q->moved,
                       .guard_va = q->mapped ? q->guard : 0,
                       .staging_ms = q->rq.staging_ms,
                       .module_ms = cl.ms,
                       .drv0 = cl.counted ? &cl.drv0 : NULL,
                       .in_place_first = q->rq.in_place_first};
    xmt_session_req rq = {.k = k,
                          .l = &l,
                          .v = &v,
                          .key_text = q->rq.key,
                          .device = q->rq.device,
                          .verify_only = q->rq.verify_only,
                          .only = q->rq.has_only ? &only : NULL,
                          .only_index = (long)q->rq.only_index,
                          .from_cache = q->rq.from_cache,
                          .recheck = q->rq.recheck,
                          .record_data = q->rq.record_data,
                          .decided = q->rq.decided};
    xmt_session S;
    xmt_session_run_trial(&S, &rq, &in);
    if (S.out.has_culprit && S.out.culprit == XMT_OWN_CONFIG) {
        snprintf(S.out.untuned, sizeof S.out.untuned,
                 "its own config %s in the trial helper (%s at %s)",
                 S.out.error == CUDA_ERROR_TIMEOUT ? "ran past the watchdog" : "faulted",
                 xmt_cu_name(S.out.error, nb, sizeof nb), S.out.error_at ? S.out.error_at : "?");
        xmt_warn("%s: key %s is not tuned: %s; the program's own config is used", k->demangled,
                 q->rq.key, S.out.untuned);
    }
    report(&S, res);
    xmt_session_free(&S);
}

/* The request's descriptors read: its JSON, the image (when sent), the staging memory. */
static int read_request(const xmt_tp_tune *t, const int *fds, int nfds, request *q, char *why,
                        size_t cap)
{
    int want = 1 + (t->image_bytes > 0) + (t->staging_bytes > 0);
    if (nfds != want) {
        snprintf(why, cap, "TUNE came with %d descriptors, not %d", nfds, want);
        return -1;
    }
    char *text = read_fd(fds[0], (size_t)t->request_bytes);
    if (!text) {
        snprintf(why, cap, "the request cannot be read");
        return -1;
    }
    char err[XMT_TP_NAME - 32];
    int d = xmt_trialreq_decode(text, (size_t)t->request_bytes, &q->rq, err, sizeof err);
    free(text);
    if (d != 0) {
        snprintf(why, cap, "the request is refused: %s", err);
        return -1;
    }
    int at = 1;
    if (t->image_bytes && !(q->image = read_fd(fds[at++], (size_t)t->image_bytes))) {
        snprintf(why, cap, "the image cannot be read");
        return -1;
    }
    q->image_len = (size_t)t->image_bytes;
    q->staging_fd = t->staging_bytes ? fds[at] : -1;
    q->staging_bytes = t->staging_bytes;
    return read_layout(q, why, cap);
}

/* The log lines in a memfd, for the RESULT; -1 when there are none. */
static int events_fd(void)
{
    if (!events_len) return -1;
    int fd = memfd_create("xmatune-events", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (write(fd, events, events_len) != (ssize_t)events_len) {
        close(fd);
        return -1;
    }
    return fd;
}

int xmt_trial_tune(int channel, uint32_t seq, const xmt_tp_tune *t, const int *fds, int nfds)
{
    chan = channel;
    cur_seq = seq;
    last_beat = now_ms();
    events_len = 0;
    xmt_tp_msg m = {.type = XMT_TP_RESULT, .seq = seq};
    xmt_tp_result *res = &m.u.result;
    res->choice = -1;
    res->culprit = XMT_TP_NO_CULPRIT;
    request q = {.staging_fd = -1};
    char why[XMT_TP_NAME] = "";
    if (start(why, sizeof why) != 0 || read_request(t, fds, nfds, &q, why, sizeof why) != 0) {
        res->status = CUDA_ERROR_INVALID_VALUE;
        snprintf(res->why, sizeof res->why, "%s", why);
    } else {
        run(&q, res);
    }
    if (!res->exiting) unmap_staging(&q); /* else the helper exits: a driver call could block */
    xmt_trialreq_free(&q.rq);
    free(q.image);
    free(q.regs);
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    int efd = events_fd();
    res->events_bytes = efd >= 0 ? events_len : 0;
    int sent = xmt_tp_send(chan, &m, efd >= 0 ? &efd : NULL, efd >= 0 ? 1 : 0);
    if (efd >= 0) close(efd);
    return sent == 0 && !res->exiting ? 0 : 1;
}
