/* sim_driver.c: the simulated driver's state and everything but modules and launches.
 *
 * Holds the controls (environment, call counters, fault injection, noise, trace),
 * devices, contexts (per-thread current-context stack), memory (host memory behind
 * CUdeviceptr, every allocation tracked), streams with a virtual clock and stream
 * capture, events stamped from those clocks, and graphs replayed by cuGraphLaunch.
 * One mutex, sim_lock, guards all of it: this is a test double, simple beats fast. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim_errors.h"
#include "sim_internal.h"
#include "simcuda.h"

/* SIMCUDA_HANG=kernel:block_x:ms[:nth]: a launch of that kernel with that block.x (from
 * its nth in the process on) keeps the device busy for ms of wall time, as a candidate
 * that takes forever would: cuStreamQuery says CUDA_ERROR_NOT_READY and the synchronizing
 * calls sleep until then. Device-wide, for simplicity; but an event recorded before the
 * hanging launch has completed (on a GPU the work before it finished), so only events
 * recorded from it on say NOT_READY and wait (g_hang_from). ms "forever" (or the spin
 * kernel's hanging config) makes it INFINITY: only killing the process ends the wait. With
 * SIMCUDA_HANG_UNTIL=path the hang lasts until that file exists instead (ms 0: only that):
 * a test ends it when it has seen what it waits for, however slow the machine is. */
static char g_hang_kernel[128];
static unsigned g_hang_block;
static double g_hang_ms;
static unsigned long long g_hang_nth = 1; /* the first matching launch that hangs */
static unsigned long long g_hang_seen;    /* matching launches so far */
static unsigned long long g_hang_from;    /* the executed launch (g_launches) that hangs */
static _Atomic double g_hang_until;       /* CLOCK_MONOTONIC ms */
static char g_hang_file[4096];            /* SIMCUDA_HANG_UNTIL, or "" */
static _Atomic int g_hang_held;           /* a hang waits for g_hang_file */
/* One launch named by kernel:block_x:nth: that config's nth executed launch in the
 * process, counted by the config's own launches, which other kernels' launches (the
 * shim's comparisons) do not shift. nth 0: none. */
typedef struct {
    char kernel[128];
    unsigned block;
    unsigned long long nth, seen;
} sim_at;
/* SIMCUDA_FAULT_AT: that launch faults (ILLEGAL_ADDRESS, sticky) instead of running */
static sim_at g_fault_at;
/* SIMCUDA_HOLD (the program's) / SIMCUDA_HOLD_HELPER (a helper's), kernel:block_x:nth:file:
 * that launch runs, and its call returns once file exists (the calling thread held, the
 * driver's lock not): a test's way to stop a process at a point of its own choosing */
static sim_at g_hold_at;
static char g_hold_file[4096];
/* SIMCUDA_NOISE_OUTLIER_AT: that launch costs 100 times more, once: one outlier exactly
 * where a test wants it */
static sim_at g_outlier_at;

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
static int hang_busy(void)
{
    if (atomic_load(&g_hang_held)) {
        if (access(g_hang_file, F_OK) != 0) return 1;
        atomic_store(&g_hang_held, 0);
    }
    return wall_ms() < atomic_load(&g_hang_until);
}
static void hang_wait(void)
{
    while (atomic_load(&g_hang_held) && hang_busy()) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    double left;
    while ((left = atomic_load(&g_hang_until) - wall_ms()) > 0) {
        if (left > 100) left = 100; /* so that a hang forever sleeps in finite steps */
        struct timespec ts = {(time_t)(left / 1e3), (long)(fmod(left, 1e3) * 1e6)};
        nanosleep(&ts, NULL);
    }
}

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------ controls */

#define SYMNAME_X(base, ver, kind, sym) #sym,
#define BASENAME_X(base, ver, kind, sym) base,
#define NONE_A(base, ver, kind, sym)
static const char *const g_sym_names[SIM_NFUNCS] = {SIM_FUNCS(SYMNAME_X, NONE_A)};
static const char *const g_base_names[SIM_NFUNCS] = {SIM_FUNCS(BASENAME_X, NONE_A)};

static atomic_ullong g_calls[SIM_NFUNCS];
static atomic_int g_inited;
static int g_ndevices = 1;

#define MAX_RULES 32
typedef struct {
    int nth;
    CUresult err;
    unsigned long long seen;
    unsigned char match[SIM_NFUNCS];
} fault_rule;
static pthread_mutex_t g_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static fault_rule g_rules[MAX_RULES];
static atomic_int g_nrules;
static atomic_ullong g_faults_injected;

static atomic_int g_fake_capturing;
static atomic_int g_sticky_on = 1; /* SIMCUDA_STICKY */
static atomic_int g_sticky;        /* the process's sticky error, 0 while none */
static int g_helper;               /* this process has the helper role (SIMCUDA_ROLE) */
static double g_noise;             /* under sim_lock */
static unsigned g_noise_seed;      /* under sim_lock */
static unsigned g_outlier;         /* under sim_lock */
/* The noise's draws are counted per launch config: the nth launch of one (kernel, grid,
 * block, shared memory) draws the same number whatever else ran before it. Counted over
 * every launch, a session's own kernels (verification, guard bytes, staging: how many of
 * them depends on where the program's allocations lie, which varied from run to run under
 * ASan) shifted every later draw, and one seed gave a tuned key other timings each run. */
#define NOISE_SLOTS 4096
/* Under sim_lock; a full table reuses slots, the same way each run. */
static struct {
    uint64_t key, n;
} g_noise_count[NOISE_SLOTS];

static void noise_reset_locked(void)
{
    memset(g_noise_count, 0, sizeof g_noise_count);
}
/* SIMCUDA_UNIQUE_HANDLES: destroyed executable graphs stay allocated (g_graveyard, listed
 * for leak checkers), so that no handle is handed out twice, as by a driver whose handles
 * are counters; by default they are freed and malloc may reuse their addresses. */
static int g_unique_handles;
static size_t g_range_short; /* SIMCUDA_RANGE_SHORT */
static int g_pointer_kind;   /* SIMCUDA_POINTER_KIND: 0 device, 1 host, 2 managed */
static char *g_trace_path;   /* under sim_lock */
static FILE *g_trace;        /* under sim_lock */

/* Statistics (under sim_lock). */
static unsigned long long g_launches, g_captured, g_graph_launches, g_alloc_count, g_frees;
static struct simcuda_launch_info g_last;

/* A name matches an entry point when it is its symbol or its base name. */
static int name_matches(const char *name, int idx)
{
    return strcmp(name, g_sym_names[idx]) == 0 || strcmp(name, g_base_names[idx]) == 0;
}

/* SIMCUDA_TEARDOWN_AT_EXIT=path[:sync]: the CUDA runtime's exit handler, which tears the
 * driver down (every later call fails CUDA_ERROR_DEINITIALIZED, as on a GPU once it ran) and
 * then makes path. Registered with atexit where the runtime registers its own: at the
 * program's first context (cuDevicePrimaryCtxRetain, cuCtxCreate), so that it runs after
 * every handler registered later; with :sync at its first cuCtxSynchronize instead (a
 * handler registered after the program's launches, so it runs before theirs). Main role
 * only. */
static char g_teardown_file[4096];
static int g_teardown_at_sync;
static atomic_int g_torn_down;

static void teardown_at_exit(void)
{
    atomic_store(&g_torn_down, 1);
    FILE *f = fopen(g_teardown_file, "w");
    if (f) fclose(f);
}

static void teardown_register(int at_sync)
{
    static atomic_int done;
    if (g_teardown_file[0] && at_sync == g_teardown_at_sync && !atomic_exchange(&done, 1))
        atexit(teardown_at_exit);
}

static void parse_teardown(const char *v)
{
    snprintf(g_teardown_file, sizeof g_teardown_file, "%s", v);
    char *c = strrchr(g_teardown_file, ':');
    if (c && !strcmp(c, ":sync")) {
        *c = 0;
        g_teardown_at_sync = 1;
    }
}

int sim_is_sticky(CUresult rc)
{
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_ASSERT: return 1;
    default: return 0;
    }
}

CUresult sim_fault(CUresult rc)
{
    int none = 0;
    if (sim_is_sticky(rc) && atomic_load(&g_sticky_on))
        atomic_compare_exchange_strong(&g_sticky, &none, (int)rc);
    return rc;
}

/* Calls that still answer after a sticky error: they need no context's work (device
 * queries, error names) or only move the calling thread between contexts. */
static int sticky_exempt(int idx)
{
    static const int ok[] = {SIM_F_cuDeviceGet,
                             SIM_F_cuDeviceGetCount,
                             SIM_F_cuDeviceGetName,
                             SIM_F_cuDeviceGetAttribute,
                             SIM_F_cuDeviceTotalMem_v2,
                             SIM_F_cuDeviceGetUuid_v2,
                             SIM_F_cuDevicePrimaryCtxGetState,
                             SIM_F_cuCtxGetCurrent,
                             SIM_F_cuCtxSetCurrent,
                             SIM_F_cuCtxPushCurrent_v2,
                             SIM_F_cuCtxPopCurrent_v2};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (ok[i] == idx) return 1;
    return 0;
}

/* A fault rule's "error" that ends the process instead (SIMCUDA_FAIL...:exit): a helper
 * that dies in the middle of a session. */
#define SIM_FAIL_EXIT ((CUresult)0x7ffffff0)

CUresult sim_enter(int idx, int need_init)
{
    atomic_fetch_add(&g_calls[idx], 1);
    if (atomic_load(&g_nrules) > 0) {
        CUresult rc = CUDA_SUCCESS;
        pthread_mutex_lock(&g_fault_lock);
        int n = atomic_load(&g_nrules);
        for (int i = 0; i < n && rc == CUDA_SUCCESS; i++) {
            fault_rule *r = &g_rules[i];
            if (!r->match[idx]) continue;
            r->seen++;
            if (r->nth == 0 || r->seen == (unsigned long long)r->nth) rc = r->err;
        }
        pthread_mutex_unlock(&g_fault_lock);
        if (rc == SIM_FAIL_EXIT) _exit(9);
        if (rc != CUDA_SUCCESS) {
            atomic_fetch_add(&g_faults_injected, 1);
            return sim_fault(rc);
        }
    }
    if (need_init && !atomic_load(&g_inited)) return CUDA_ERROR_NOT_INITIALIZED;
    if (need_init && atomic_load(&g_torn_down)) return CUDA_ERROR_DEINITIALIZED;
    int sticky = atomic_load(&g_sticky);
    if (need_init && sticky && !sticky_exempt(idx)) return (CUresult)sticky;
    return CUDA_SUCCESS;
}

SIM_API int simcuda_set_fail(const char *fn, int nth, CUresult err)
{
    if (!fn || nth < 0) return -1;
    fault_rule r = {.nth = nth, .err = err};
    int any = 0;
    for (int i = 0; i < SIM_NFUNCS; i++)
        if (name_matches(fn, i)) r.match[i] = 1, any = 1;
    if (!any) return -1;
    pthread_mutex_lock(&g_fault_lock);
    int n = atomic_load(&g_nrules), rc = -1;
    if (n < MAX_RULES) {
        g_rules[n] = r;
        atomic_store(&g_nrules, n + 1);
        rc = 0;
    }
    pthread_mutex_unlock(&g_fault_lock);
    return rc;
}

SIM_API void simcuda_reset_faults(void)
{
    pthread_mutex_lock(&g_fault_lock);
    atomic_store(&g_nrules, 0);
    pthread_mutex_unlock(&g_fault_lock);
}

SIM_API void simcuda_set_sticky(int on)
{
    atomic_store(&g_sticky_on, on != 0);
}

SIM_API CUresult simcuda_sticky_error(void)
{
    return (CUresult)atomic_load(&g_sticky);
}

SIM_API int simcuda_is_helper(void)
{
    return g_helper;
}

SIM_API void simcuda_set_capturing(int on)
{
    atomic_store(&g_fake_capturing, on != 0);
}

SIM_API void simcuda_set_noise(double fraction, unsigned seed)
{
    pthread_mutex_lock(&sim_lock);
    g_noise = fraction < 0 ? 0 : fraction;
    g_noise_seed = seed;
    noise_reset_locked(); /* the sequence starts again */
    pthread_mutex_unlock(&sim_lock);
}

SIM_API void simcuda_set_outlier(unsigned every)
{
    pthread_mutex_lock(&sim_lock);
    g_outlier = every;
    pthread_mutex_unlock(&sim_lock);
}

SIM_API void simcuda_set_trace(const char *path)
{
    pthread_mutex_lock(&sim_lock);
    if (g_trace) fclose(g_trace);
    g_trace = NULL;
    free(g_trace_path);
    g_trace_path = path && *path ? strdup(path) : NULL;
    pthread_mutex_unlock(&sim_lock);
}

SIM_API unsigned long long simcuda_calls(const char *fn)
{
    unsigned long long n = 0;
    for (int i = 0; fn && i < SIM_NFUNCS; i++)
        if (name_matches(fn, i)) n += atomic_load(&g_calls[i]);
    return n;
}

SIM_API void simcuda_reset_calls(void)
{
    for (int i = 0; i < SIM_NFUNCS; i++)
        atomic_store(&g_calls[i], 0);
}

SIM_API unsigned long long simcuda_launch_count(void)
{
    pthread_mutex_lock(&sim_lock);
    unsigned long long n = g_launches;
    pthread_mutex_unlock(&sim_lock);
    return n;
}

/* Parses "name:nth:err[,name:nth:err...]"; err is a number or a CUDA_ERROR_* name.
 * A malformed item is reported on stderr and skipped. */
static void parse_fail_spec(const char *spec)
{
    char *copy = strdup(spec), *save = NULL;
    if (!copy) return;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        int ok = 0;
        if (c1 && c2) {
            *c1 = *c2 = '\0';
            char *end;
            long nth = strtol(c1 + 1, &end, 10);
            long err = -1;
            if (*end == '\0' && nth >= 0) {
                err = strtol(c2 + 1, &end, 10);
                if (*end != '\0' || c2[1] == '\0') {
                    err = -1;
#define PARSE_E(code, msg)                                                                         \
    if (strcmp(c2 + 1, #code) == 0) err = code;
                    SIM_ERRORS(PARSE_E)
#undef PARSE_E
                    if (strcmp(c2 + 1, "exit") == 0) err = SIM_FAIL_EXIT;
                }
                if (err >= 0) ok = simcuda_set_fail(item, (int)nth, (CUresult)err) == 0;
            }
        }
        if (!ok) fprintf(stderr, "simcuda: SIMCUDA_FAIL: ignoring bad item '%s'\n", item);
    }
    free(copy);
}

/* Whether this process is a trial helper: SIMCUDA_ROLE=helper|main when set, else
 * XMATUNE_HELPER set to anything but "" or "0" (what the shim gives its helper). */
static int helper_role(void)
{
    const char *v = getenv("SIMCUDA_ROLE");
    if (v && *v) {
        if (strcmp(v, "helper") == 0) return 1;
        if (strcmp(v, "main") != 0)
            fprintf(stderr, "simcuda: SIMCUDA_ROLE: expected main or helper, got '%s'\n", v);
        return 0;
    }
    v = getenv("XMATUNE_HELPER");
    return v && *v && strcmp(v, "0") != 0;
}

/* The value v of variable var: kernel:block_x:nth, nth >= 1 (else none, and a message). */
static void parse_at(sim_at *at, const char *var, const char *v)
{
    char tail[2];
    if (sscanf(v, "%127[^:]:%u:%llu%1s", at->kernel, &at->block, &at->nth, tail) == 3 &&
        at->nth >= 1)
        return;
    at->nth = 0;
    fprintf(stderr, "simcuda: %s: expected kernel:block_x:nth, got '%s'\n", var, v);
}

/* Whether launch r is at's launch (counting it when it is its config's). */
static int at_hit(sim_at *at, const sim_launch_rec *r)
{
    return at->nth && r->block[0] == at->block && !strcmp(r->k->name, at->kernel) &&
           ++at->seen == at->nth;
}

static void parse_hold(const char *var, const char *v)
{
    char tail[2];
    if (sscanf(v, "%127[^:]:%u:%llu:%4095[^:]%1s", g_hold_at.kernel, &g_hold_at.block,
               &g_hold_at.nth, g_hold_file, tail) == 4 &&
        g_hold_at.nth >= 1)
        return;
    g_hold_at.nth = 0;
    fprintf(stderr, "simcuda: %s: expected kernel:block_x:nth:file, got '%s'\n", var, v);
}

int sim_hold_hit_locked(const sim_launch_rec *r)
{
    return at_hit(&g_hold_at, r);
}

void sim_hold_wait(void)
{
    while (access(g_hold_file, F_OK) != 0) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

/* SIMCUDA_HANG's value: kernel:block_x:ms[:nth], ms a number or "forever", nth >= 1. */
static void parse_hang(const char *v)
{
    char ms[32], tail[2];
    unsigned long long nth = 1;
    int got =
        sscanf(v, "%127[^:]:%u:%31[^:]:%llu%1s", g_hang_kernel, &g_hang_block, ms, &nth, tail);
    if ((got == 3 || got == 4) && nth >= 1) {
        char *end;
        g_hang_nth = nth;
        g_hang_ms = strcmp(ms, "forever") == 0 ? INFINITY : strtod(ms, &end);
        if (isinf(g_hang_ms) || (*end == '\0' && g_hang_ms >= 0)) return;
    }
    g_hang_ms = 0;
    fprintf(stderr, "simcuda: SIMCUDA_HANG: expected kernel:block_x:ms|forever[:nth], got '%s'\n",
            v);
}

/* The environment switches, read once at the first cuInit. SIMCUDA_FAIL, SIMCUDA_TRACE
 * and SIMCUDA_CAPTURING are the program's (the main role's); a helper reads
 * SIMCUDA_FAIL_HELPER and SIMCUDA_TRACE_HELPER instead and never fakes capture. */
static void read_env(void)
{
    const char *v;
    g_helper = helper_role();
    if ((v = getenv("SIMCUDA_DEVICES")) && *v) {
        long n = strtol(v, NULL, 10);
        g_ndevices = n < 0 ? 0 : n > SIMCUDA_MAX_DEVICES ? SIMCUDA_MAX_DEVICES : (int)n;
    }
    if ((v = getenv(g_helper ? "SIMCUDA_FAIL_HELPER" : "SIMCUDA_FAIL")) && *v) parse_fail_spec(v);
    if (!g_helper && (v = getenv("SIMCUDA_CAPTURING")) && *v && strcmp(v, "0") != 0)
        simcuda_set_capturing(1);
    unsigned seed = 1;
    if ((v = getenv("SIMCUDA_NOISE_SEED")) && *v) seed = (unsigned)strtoul(v, NULL, 10);
    if ((v = getenv("SIMCUDA_NOISE")) && *v) simcuda_set_noise(strtod(v, NULL), seed);
    if ((v = getenv("SIMCUDA_NOISE_OUTLIER")) && *v)
        simcuda_set_outlier((unsigned)strtoul(v, NULL, 10));
    if ((v = getenv("SIMCUDA_NOISE_OUTLIER_AT")) && *v)
        parse_at(&g_outlier_at, "SIMCUDA_NOISE_OUTLIER_AT", v);
    if ((v = getenv(g_helper ? "SIMCUDA_TRACE_HELPER" : "SIMCUDA_TRACE")) && *v)
        simcuda_set_trace(v);
    if ((v = getenv("SIMCUDA_HANG")) && *v) parse_hang(v);
    const char *hold = g_helper ? "SIMCUDA_HOLD_HELPER" : "SIMCUDA_HOLD";
    if ((v = getenv(hold)) && *v) parse_hold(hold, v);
    if ((v = getenv("SIMCUDA_FAULT_AT")) && *v) parse_at(&g_fault_at, "SIMCUDA_FAULT_AT", v);
    if (g_helper && (v = getenv("SIMCUDA_FAULT_AT_HELPER")) && *v)
        parse_at(&g_fault_at, "SIMCUDA_FAULT_AT_HELPER", v);
    if ((v = getenv("SIMCUDA_STICKY")) && *v) simcuda_set_sticky(strcmp(v, "0") != 0);
    if ((v = getenv("SIMCUDA_UNIQUE_HANDLES")) && *v) g_unique_handles = strcmp(v, "0") != 0;
    if ((v = getenv("SIMCUDA_RANGE_SHORT")) && *v) g_range_short = strtoul(v, NULL, 10);
    if ((v = getenv("SIMCUDA_POINTER_KIND")) && *v)
        g_pointer_kind = !strcmp(v, "host") ? 1 : !strcmp(v, "managed") ? 2 : 0;
    if (!g_helper && (v = getenv("SIMCUDA_TEARDOWN_AT_EXIT")) && *v) parse_teardown(v);
    if ((v = getenv("SIMCUDA_HANG_UNTIL")) && *v)
        snprintf(g_hang_file, sizeof g_hang_file, "%s", v);
}
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------ errors, init */

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    SIM_ENTER_NOINIT(cuGetErrorName);
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
#define NAME_E(code, msg)                                                                          \
    if (error == code) {                                                                           \
        *pStr = #code;                                                                             \
        return CUDA_SUCCESS;                                                                       \
    }
    SIM_ERRORS(NAME_E)
#undef NAME_E
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    SIM_ENTER_NOINIT(cuGetErrorString);
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
#define STR_E(code, msg)                                                                           \
    if (error == code) {                                                                           \
        *pStr = msg;                                                                               \
        return CUDA_SUCCESS;                                                                       \
    }
    SIM_ERRORS(STR_E)
#undef STR_E
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int flags)
{
    pthread_once(&g_env_once, read_env);
    SIM_ENTER_NOINIT(cuInit);
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (g_ndevices == 0) return CUDA_ERROR_NO_DEVICE;
    const char *slow = g_helper ? getenv("SIMCUDA_HELPER_INIT_MS") : NULL;
    double init_ms = slow && *slow && !atomic_load(&g_inited) ? strtod(slow, NULL) : 0;
    if (init_ms > 0) { /* a helper's start as long as the real driver's */
        struct timespec ts = {(time_t)(init_ms / 1e3), (long)(fmod(init_ms, 1e3) * 1e6)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    simk_layout();
    atomic_store(&g_inited, 1);
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    SIM_ENTER_NOINIT(cuDriverGetVersion);
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = SIMCUDA_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ devices */

static CUresult check_dev(CUdevice d)
{
    return d >= 0 && d < g_ndevices ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    SIM_ENTER(cuDeviceGet);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    SIM_ENTER(cuDeviceGetCount);
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = g_ndevices;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    SIM_ENTER(cuDeviceGetName);
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", SIMCUDA_DEVICE_NAME);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    SIM_ENTER(cuDeviceTotalMem_v2);
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = SIMCUDA_TOTAL_MEM;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice d)
{
    SIM_ENTER(cuDeviceGetUuid_v2);
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    for (int i = 0; i < 16; i++)
        uuid->bytes[i] = (char)(0x51 + i);
    uuid->bytes[15] = (char)d;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    SIM_ENTER(cuDeviceGetAttribute);
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    if ((int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = SIM_MAX_THREADS; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = SIM_SHARED_DEFAULT; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = SIM_SHARED_OPTIN; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = SIM_SHARED_PER_SM; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = SIM_REGS_PER_SM; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 6144; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = SIM_SM_COUNT; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 60 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = SIM_THREADS_PER_SM; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = SIM_MAX_BLOCKS_PER_SM; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = d; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER:
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: /* SIMCUDA_COMPUTE_MODE: a CUcomputemode, 0 */
        *v = getenv("SIMCUDA_COMPUTE_MODE") ? atoi(getenv("SIMCUDA_COMPUTE_MODE")) : 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: /* SIMCUDA_MPS=1: as under an MPS server */
        *v = getenv("SIMCUDA_MPS") && !strcmp(getenv("SIMCUDA_MPS"), "1");
        break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 3; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *v = 1; break;
    default: *v = 0; break; /* a valid attribute the simulation has no number for */
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ streams, contexts */

#define STREAM_MAGIC 0x5354524du
#define CTX_MAGIC 0x43545831u
#define EVENT_MAGIC 0x45564e54u
#define GRAPH_MAGIC 0x47524150u
#define GEXEC_MAGIC 0x47455845u

#define NODE_MAGIC 0x4e4f4445u
#define GCHILD_MAGIC 0x4743484cu

enum { NODE_KERNEL, NODE_MEMCPY, NODE_MEMSET, NODE_EVENT, NODE_CHILD };
typedef struct simevent simevent;
typedef struct simgraph simgraph;
typedef struct simnode {
    uint32_t magic; /* NODE_MAGIC while the node exists: its address is its CUgraphNode */
    int kind;
    sim_launch_rec k;
    void *func, *kern; /* kernel nodes: the handles it was given (GetParams returns them) */
    CUcontext ctx;
    void *argp[SIMK_MAXP]; /* GetParams' kernelParams: pointers into k.params */
    void *dst;
    const void *src;
    size_t bytes; /* memcpy bytes, or memset element count */
    unsigned val, elsz;
    simevent *ev;
    simgraph *child;            /* NODE_CHILD: its own copy of the child graph */
    const struct simnode *orig; /* in an executable graph: the graph's node it copies */
} simnode;

/* A graph's nodes are allocated one by one, so that a node's address (its handle) stays
 * valid while the graph grows. */
struct simgraph {
    uint32_t magic;
    int n, cap;
    simnode **nodes;
    struct simgraph *next;
};

struct simstream {
    uint32_t magic;
    simctx *ctx;
    unsigned flags;
    int prio;
    double clock_ns; /* the stream's virtual clock */
    int capturing, invalidated;
    CUstreamCaptureMode cmode;
    pthread_t cthread;
    unsigned long long cid;
    simgraph *graph;
    simstream *next;
};

struct simctx {
    uint32_t magic;
    atomic_int alive;
    int dev, primary, prim_refs;
    unsigned flags;
    unsigned long long id; /* cuCtxGetId: unique in the process, never reused */
    simstream legacy;
    simctx *next;
};

struct simevent {
    uint32_t magic;
    unsigned flags;
    int recorded;
    double stamp;
    unsigned long long after; /* launches executed when it was recorded (g_launches) */
    simevent *next;
};

static simctx g_prim[SIMCUDA_MAX_DEVICES];
static simctx *g_ctxs;       /* created contexts; never freed, so stale handles stay readable */
static simstream *g_streams; /* created streams */
static simevent *g_events;
static simgraph *g_graphs; /* graphs and executable graphs */
#define MAX_CAPTURES 64
static simstream *g_cap[MAX_CAPTURES]; /* streams capturing now */
static int g_ncap;
static unsigned long long g_capid;

static _Thread_local simctx *tls_ctx[16];
static _Thread_local int tls_depth;
static _Thread_local simstream tls_pts; /* this thread's per-thread default stream */
static _Thread_local CUstreamCaptureMode tls_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

simctx *sim_current_ctx(void)
{
    simctx *c = tls_depth > 0 ? tls_ctx[tls_depth - 1] : NULL;
    return c && atomic_load(&c->alive) ? c : NULL;
}

static int valid_ctx_locked(simctx *c)
{
    if (!c) return 0;
    for (int i = 0; i < SIMCUDA_MAX_DEVICES; i++)
        if (c == &g_prim[i]) return atomic_load(&c->alive);
    for (simctx *p = g_ctxs; p; p = p->next)
        if (p == c) return atomic_load(&c->alive);
    return 0;
}

static void init_ctx(simctx *c, int dev, unsigned flags, int primary)
{
    static atomic_ullong next_id = 1;
    c->magic = CTX_MAGIC;
    c->id = atomic_fetch_add(&next_id, 1);
    c->dev = dev;
    c->flags = flags;
    c->primary = primary;
    memset(&c->legacy, 0, sizeof c->legacy);
    c->legacy.magic = STREAM_MAGIC;
    c->legacy.ctx = c;
    atomic_store(&c->alive, 1);
}

simstream *sim_stream_locked(CUstream h, int ptsz, CUresult *err)
{
    simctx *c = sim_current_ctx();
    uintptr_t v = (uintptr_t)h;
    if (v == 0 || v == (uintptr_t)CU_STREAM_LEGACY || v == (uintptr_t)CU_STREAM_PER_THREAD) {
        if (!c) {
            *err = CUDA_ERROR_INVALID_CONTEXT;
            return NULL;
        }
        if (v == (uintptr_t)CU_STREAM_PER_THREAD || (v == 0 && ptsz)) {
            if (tls_pts.magic != STREAM_MAGIC) tls_pts.magic = STREAM_MAGIC;
            tls_pts.ctx = c;
            return &tls_pts;
        }
        return &c->legacy;
    }
    for (simstream *s = g_streams; s; s = s->next)
        if (s == (simstream *)h) return s;
    *err = CUDA_ERROR_INVALID_HANDLE;
    return NULL;
}

int sim_stream_capturing(const simstream *s)
{
    return s->capturing;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
    SIM_ENTER(cuDevicePrimaryCtxRetain);
    teardown_register(0);
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lock);
    simctx *c = &g_prim[d];
    if (c->prim_refs++ == 0) init_ctx(c, d, 0, 1);
    pthread_mutex_unlock(&sim_lock);
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    SIM_ENTER(cuDevicePrimaryCtxRelease_v2);
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simctx *c = &g_prim[d];
    if (c->prim_refs <= 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (--c->prim_refs == 0)
        atomic_store(&c->alive, 0);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    SIM_ENTER(cuDevicePrimaryCtxGetState);
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lock);
    *flags = g_prim[d].flags;
    *active = g_prim[d].prim_refs > 0;
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice d)
{
    teardown_register(0);
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (check_dev(d)) return CUDA_ERROR_INVALID_DEVICE;
    if (tls_depth >= 16) return CUDA_ERROR_OUT_OF_MEMORY;
    simctx *c = calloc(1, sizeof *c);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    init_ctx(c, d, flags, 0);
    pthread_mutex_lock(&sim_lock);
    c->next = g_ctxs;
    g_ctxs = c;
    pthread_mutex_unlock(&sim_lock);
    tls_ctx[tls_depth++] = c; /* a new context is pushed onto the caller's stack */
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice d)
{
    SIM_ENTER(cuCtxCreate_v2);
    return ctx_create(pctx, flags, d);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice d)
{
    SIM_ENTER(cuCtxCreate_v4);
    (void)params;
    return ctx_create(pctx, flags, d);
}

CUresult cuCtxDestroy_v2(CUcontext h)
{
    SIM_ENTER(cuCtxDestroy_v2);
    simctx *c = (simctx *)h;
    pthread_mutex_lock(&sim_lock);
    int ok = valid_ctx_locked(c) && !c->primary;
    if (ok) atomic_store(&c->alive, 0);
    pthread_mutex_unlock(&sim_lock);
    if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth > 0 && tls_ctx[tls_depth - 1] == c) tls_depth--;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext h)
{
    SIM_ENTER(cuCtxSetCurrent);
    simctx *c = (simctx *)h;
    if (c) {
        pthread_mutex_lock(&sim_lock);
        int ok = valid_ctx_locked(c);
        pthread_mutex_unlock(&sim_lock);
        if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (tls_depth == 0) {
        if (c) tls_ctx[tls_depth++] = c;
    } else {
        tls_ctx[tls_depth - 1] = c;
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    SIM_ENTER(cuCtxGetCurrent);
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)sim_current_ctx();
    return CUDA_SUCCESS;
}

CUresult cuCtxGetId(CUcontext h, unsigned long long *id)
{
    SIM_ENTER(cuCtxGetId);
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = h ? (simctx *)h : sim_current_ctx();
    pthread_mutex_lock(&sim_lock);
    int ok = c && valid_ctx_locked(c);
    if (ok) *id = c->id;
    pthread_mutex_unlock(&sim_lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxPushCurrent_v2(CUcontext h)
{
    SIM_ENTER(cuCtxPushCurrent_v2);
    simctx *c = (simctx *)h;
    pthread_mutex_lock(&sim_lock);
    int ok = valid_ctx_locked(c);
    pthread_mutex_unlock(&sim_lock);
    if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth >= 16) return CUDA_ERROR_OUT_OF_MEMORY;
    tls_ctx[tls_depth++] = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    SIM_ENTER(cuCtxPopCurrent_v2);
    if (tls_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    simctx *c = tls_ctx[--tls_depth];
    if (pctx) *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
    SIM_ENTER(cuCtxGetDevice);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = sim_current_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    *d = c->dev;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext h)
{
    SIM_ENTER(cuCtxGetDevice_v2);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = h ? (simctx *)h : sim_current_ctx();
    pthread_mutex_lock(&sim_lock);
    int ok = valid_ctx_locked(c);
    pthread_mutex_unlock(&sim_lock);
    if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    *d = c->dev;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    SIM_ENTER(cuCtxGetFlags);
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = sim_current_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext h, unsigned int *version)
{
    SIM_ENTER(cuCtxGetApiVersion);
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = h ? (simctx *)h : sim_current_ctx();
    pthread_mutex_lock(&sim_lock);
    int ok = valid_ctx_locked(c);
    pthread_mutex_unlock(&sim_lock);
    if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    SIM_ENTER(cuCtxGetStreamPriorityRange);
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}

/* The stream-capture rule for "potentially unsafe" calls (allocation, synchronous
 * copies, synchronization), as cudaStreamCaptureMode documents it: under the calling
 * thread's mode (cuThreadExchangeStreamCaptureMode), GLOBAL forbids them while this
 * thread captures in a non-relaxed mode or any other thread captures in GLOBAL mode;
 * THREAD_LOCAL only the former; RELAXED never. A forbidden call invalidates the
 * capture(s) it would break and returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED. */
static CUresult unsafe_call_locked(void)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_t self = pthread_self();
    for (int i = 0; i < g_ncap; i++) {
        simstream *s = g_cap[i];
        int own = pthread_equal(s->cthread, self);
        int bad = own ? (tls_mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
                         s->cmode != CU_STREAM_CAPTURE_MODE_RELAXED)
                      : (tls_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                         s->cmode == CU_STREAM_CAPTURE_MODE_GLOBAL);
        if (bad) {
            s->invalidated = 1;
            rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    return rc;
}

CUresult cuCtxSynchronize(void)
{
    SIM_ENTER(cuCtxSynchronize);
    teardown_register(1);
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    hang_wait();
    pthread_mutex_lock(&sim_lock);
    CUresult rc = unsafe_call_locked();
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuCtxSynchronize_v2(CUcontext h)
{
    SIM_ENTER(cuCtxSynchronize_v2);
    simctx *c = h ? (simctx *)h : sim_current_ctx();
    pthread_mutex_lock(&sim_lock);
    CUresult rc = valid_ctx_locked(c) ? unsafe_call_locked() : CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

/* ------------------------------------------------------------------ memory */

/* An allocation: cuMemAlloc's own pages (mmap), made shareable in place by
 * cuIpcGetMemHandle (fd >= 0), or another process's allocation that cuIpcOpenMemHandle
 * mapped here (ipc). */
typedef struct {
    uintptr_t base;
    size_t size;
    size_t mapped; /* size rounded up to whole pages */
    int fd;
    int ipc;
    int global; /* a module's global (sim_global_alloc_locked): not the program's allocation */
} alloc_rec;
static alloc_rec *g_allocs; /* under sim_lock */
static size_t g_nallocs, g_capallocs, g_live_bytes;

static alloc_rec *find_alloc_locked(uintptr_t p)
{
    for (size_t i = 0; i < g_nallocs; i++)
        if (p >= g_allocs[i].base && p - g_allocs[i].base < g_allocs[i].size) return &g_allocs[i];
    return NULL;
}

/* The allocation or accessible mapping containing p: 1 and *out (range_start/size are
 * the reservation for a mapping, as the real driver's pointer attributes say), or 0. */
static int range_locked(uintptr_t p, sim_range *out)
{
    alloc_rec *a = find_alloc_locked(p);
    if (a) {
        *out = (sim_range){a->base, a->size, a->base, a->size};
        return 1;
    }
    return sim_map_find_locked(p, out);
}

size_t sim_alloc_avail_locked(uintptr_t p)
{
    alloc_rec *a = find_alloc_locked(p);
    return a ? a->size - (p - a->base) : sim_map_avail_locked(p);
}

int sim_device_count(void)
{
    return g_ndevices;
}

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

static CUresult add_alloc_locked(alloc_rec r)
{
    if (g_nallocs == g_capallocs) {
        size_t cap = g_capallocs ? g_capallocs * 2 : 64;
        alloc_rec *n = realloc(g_allocs, cap * sizeof *n);
        if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
        g_allocs = n;
        g_capallocs = cap;
    }
    g_allocs[g_nallocs++] = r;
    g_live_bytes += r.size;
    g_alloc_count++;
    return CUDA_SUCCESS;
}

/* Device memory is host memory, page-aligned (so beyond the real allocator's 256 bytes)
 * and mapped by itself so that cuIpcGetMemHandle can make it shareable where it lies,
 * filled with 0xA5 so that a kernel reading what nobody wrote gets the same garbage
 * every run. */
static CUresult alloc_locked(CUdeviceptr *dptr, size_t bytes)
{
    if (!dptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    if (bytes > SIMCUDA_TOTAL_MEM - g_live_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t mapped = page_round(bytes);
    void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(p, 0xA5, mapped);
    CUresult rc = add_alloc_locked((alloc_rec){(uintptr_t)p, bytes, mapped, -1, 0, 0});
    if (rc != CUDA_SUCCESS) {
        munmap(p, mapped);
        return rc;
    }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

static void drop_alloc_locked(size_t i)
{
    munmap((void *)g_allocs[i].base, g_allocs[i].mapped);
    if (g_allocs[i].fd >= 0) close(g_allocs[i].fd);
    g_live_bytes -= g_allocs[i].size;
    /* in the order they were made: a lookup's cost (find_alloc_locked walks them) depends on
     * which allocations are live, never on the order of earlier frees (launch_cost.py counts
     * the shim's instructions against a run whose background frees came at other times) */
    memmove(&g_allocs[i], &g_allocs[i + 1], (g_nallocs - i - 1) * sizeof *g_allocs);
    g_nallocs--;
    g_frees++;
}

/* Frees the allocation starting at d (ipc: one cuIpcOpenMemHandle mapped, which only
 * cuIpcCloseMemHandle frees). */
static CUresult free_locked(CUdeviceptr d, int ipc)
{
    for (size_t i = 0; i < g_nallocs; i++) {
        if (g_allocs[i].base != (uintptr_t)d || g_allocs[i].ipc != ipc) continue;
        drop_alloc_locked(i);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

/* ---- legacy IPC: the handle names the exporter's descriptor, opened by the importer
 * through /proc/<pid>/fd (same user), checked against the inode it was made for. */
#define IPC_MAGIC 0x53494d4950433031ull /* "SIMIPC01" */
typedef struct {
    uint64_t magic, pid, fd, ino, size, mapped;
} ipc_payload;
_Static_assert(sizeof(ipc_payload) <= CU_IPC_HANDLE_SIZE, "IPC handle too small");

/* Makes allocation a shareable where it lies: its bytes move to a memfd mapped
 * MAP_SHARED over the very same pages. */
static CUresult share_locked(alloc_rec *a)
{
    if (a->fd >= 0) return CUDA_SUCCESS;
    int fd = memfd_create("simcuda-ipc", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, (off_t)a->mapped) != 0 ||
        pwrite(fd, (void *)a->base, a->mapped, 0) != (ssize_t)a->mapped ||
        mmap((void *)a->base, a->mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
            MAP_FAILED) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->fd = fd;
    return CUDA_SUCCESS;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr d)
{
    SIM_ENTER(cuIpcGetMemHandle);
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    alloc_rec *a = find_alloc_locked((uintptr_t)d);
    CUresult rc =
        !a || a->base != (uintptr_t)d || a->ipc ? CUDA_ERROR_INVALID_VALUE : share_locked(a);
    struct stat st;
    if (rc == CUDA_SUCCESS && fstat(a->fd, &st) != 0) rc = CUDA_ERROR_OPERATING_SYSTEM;
    if (rc == CUDA_SUCCESS) {
        ipc_payload pl = {IPC_MAGIC,           (uint64_t)getpid(), (uint64_t)a->fd,
                          (uint64_t)st.st_ino, (uint64_t)a->size,  (uint64_t)a->mapped};
        memset(h, 0, sizeof *h);
        memcpy(h->reserved, &pl, sizeof pl);
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr *pd, CUipcMemHandle h, unsigned int flags)
{
    SIM_ENTER(cuIpcOpenMemHandle_v2);
    ipc_payload pl;
    memcpy(&pl, h.reserved, sizeof pl);
    if (!pd || pl.magic != IPC_MAGIC || (flags & ~1u)) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pl.pid == (uint64_t)getpid()) return CUDA_ERROR_INVALID_CONTEXT; /* as the real one */
    char path[64];
    snprintf(path, sizeof path, "/proc/%llu/fd/%llu", (unsigned long long)pl.pid,
             (unsigned long long)pl.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_ino != pl.ino) {
        if (fd >= 0) close(fd);
        return CUDA_ERROR_INVALID_VALUE; /* the exporter freed it, or is gone */
    }
    void *p = mmap(NULL, pl.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim_lock);
    CUresult rc = add_alloc_locked((alloc_rec){(uintptr_t)p, pl.size, pl.mapped, -1, 1, 0});
    pthread_mutex_unlock(&sim_lock);
    if (rc != CUDA_SUCCESS) munmap(p, pl.mapped);
    if (rc == CUDA_SUCCESS) *pd = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr d)
{
    SIM_ENTER(cuIpcCloseMemHandle);
    pthread_mutex_lock(&sim_lock);
    CUresult rc = free_locked(d, 1);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

SIM_API long simcuda_live_allocations(void)
{
    pthread_mutex_lock(&sim_lock);
    long n = 0;
    for (size_t i = 0; i < g_nallocs; i++)
        n += !g_allocs[i].global;
    pthread_mutex_unlock(&sim_lock);
    return n;
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    SIM_ENTER(cuMemGetInfo_v2);
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    if (free_b) *free_b = SIMCUDA_TOTAL_MEM - g_live_bytes;
    if (total) *total = SIMCUDA_TOTAL_MEM;
    pthread_mutex_unlock(&sim_lock);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    SIM_ENTER(cuMemAlloc_v2);
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    CUresult rc = unsafe_call_locked();
    if (rc == CUDA_SUCCESS) rc = alloc_locked(dptr, bytes);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuMemFree_v2(CUdeviceptr d)
{
    SIM_ENTER(cuMemFree_v2);
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    if (d == 0) return CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    CUresult rc = unsafe_call_locked();
    if (rc == CUDA_SUCCESS) rc = free_locked(d, 0);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

/* Stream-ordered allocation is allowed during capture; the simulation allocates (and
 * frees) at once instead of recording a node. */
static CUresult alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream h, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    if (sim_stream_locked(h, ptsz, &rc)) rc = alloc_locked(dptr, bytes);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
static CUresult free_async(CUdeviceptr d, CUstream h, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    if (sim_stream_locked(h, ptsz, &rc)) rc = free_locked(d, 0);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t b, CUstream s)
{
    SIM_ENTER(cuMemAllocAsync);
    return alloc_async(p, b, s, 0);
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t b, CUstream s)
{
    SIM_ENTER(cuMemAllocAsync_ptsz);
    return alloc_async(p, b, s, 1);
}
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    SIM_ENTER(cuMemFreeAsync);
    return free_async(p, s, 0);
}
CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
    SIM_ENTER(cuMemFreeAsync_ptsz);
    return free_async(p, s, 1);
}

static void graph_free(simgraph *g);

/* Appends a copy of n to g; *out (if not NULL) is the new node. */
static CUresult graph_add_node_locked(simgraph *g, const simnode *n, simnode **out)
{
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 16;
        simnode **nn = realloc(g->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = nn;
        g->cap = cap;
    }
    simnode *c = malloc(sizeof *c);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    *c = *n;
    c->magic = NODE_MAGIC;
    for (int i = 0; i < SIMK_MAXP; i++)
        c->argp[i] = c->k.k && i < c->k.k->nparams ? c->k.params + c->k.k->off[i] : NULL;
    g->nodes[g->n++] = c;
    if (out) *out = c;
    return CUDA_SUCCESS;
}
static CUresult graph_add_locked(simgraph *g, const simnode *n)
{
    return graph_add_node_locked(g, n, NULL);
}

/* Virtual time of a copy or memset: 500 ns plus 1 ns per KB. */
static double xfer_ns(size_t bytes)
{
    return 500.0 + (double)bytes / 1000.0;
}

static void run_node_locked(simstream *s, const simnode *n)
{
    switch (n->kind) {
    case NODE_MEMCPY:
        memmove(n->dst, n->src, n->bytes);
        s->clock_ns += xfer_ns(n->bytes);
        break;
    case NODE_MEMSET:
        if (n->elsz == 1) {
            memset(n->dst, (int)(n->val & 0xff), n->bytes);
        } else {
            for (size_t i = 0; i < n->bytes; i++)
                memcpy((char *)n->dst + 4 * i, &n->val, 4);
        }
        s->clock_ns += xfer_ns(n->bytes * n->elsz);
        break;
    case NODE_EVENT:
        n->ev->recorded = 1;
        n->ev->stamp = s->clock_ns;
        n->ev->after = g_launches;
        break;
    default: break;
    }
}

/* Copy or memset on a stream: checks device ranges, then records (capture) or runs. A
 * synchronous one (sync != 0) is an unsafe call under capture rules. A side that lies
 * in no allocation is host memory when host_ok has its bit (1 dst, 2 src). */
static CUresult xfer(simnode *n, CUstream h, int ptsz, int sync, int host_ok)
{
    CUresult rc = CUDA_SUCCESS;
    size_t bytes = n->kind == NODE_MEMSET ? n->bytes * n->elsz : n->bytes;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    if (s && sync) rc = unsafe_call_locked();
    if (s && rc == CUDA_SUCCESS) {
        sim_range tmp;
        int d = range_locked((uintptr_t)n->dst, &tmp);
        int sr = n->kind == NODE_MEMCPY && range_locked((uintptr_t)n->src, &tmp);
        if ((d && sim_alloc_avail_locked((uintptr_t)n->dst) < bytes) || (!d && !(host_ok & 1)))
            rc = CUDA_ERROR_INVALID_VALUE;
        if (n->kind == NODE_MEMCPY &&
            ((sr && sim_alloc_avail_locked((uintptr_t)n->src) < bytes) || (!sr && !(host_ok & 2))))
            rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (s && rc == CUDA_SUCCESS && bytes > 0) {
        if (s->capturing)
            rc = sync ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : graph_add_locked(s->graph, n);
        else
            run_node_locked(s, n);
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

static CUresult memset_(CUdeviceptr d, unsigned v, unsigned elsz, size_t count, CUstream h,
                        int ptsz, int sync)
{
    simnode n = {
        .kind = NODE_MEMSET, .dst = (void *)(uintptr_t)d, .bytes = count, .val = v, .elsz = elsz};
    if (elsz == 4 && (d & 3)) return CUDA_ERROR_INVALID_VALUE;
    return xfer(&n, h, ptsz, sync, 0);
}
static CUresult memcpy_(void *dst, const void *src, size_t bytes, CUstream h, int ptsz, int sync,
                        int host_ok)
{
    simnode n = {.kind = NODE_MEMCPY, .dst = dst, .src = src, .bytes = bytes};
    return xfer(&n, h, ptsz, sync, host_ok);
}
#define DP(x) ((void *)(uintptr_t)(x))

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
    SIM_ENTER(cuMemsetD8_v2);
    return memset_(d, v, 1, n, NULL, 0, 1);
}
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n)
{
    SIM_ENTER(cuMemsetD8_v2_ptds);
    return memset_(d, v, 1, n, NULL, 1, 1);
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
    SIM_ENTER(cuMemsetD32_v2);
    return memset_(d, v, 4, n, NULL, 0, 1);
}
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n)
{
    SIM_ENTER(cuMemsetD32_v2_ptds);
    return memset_(d, v, 4, n, NULL, 1, 1);
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    SIM_ENTER(cuMemsetD8Async);
    return memset_(d, v, 1, n, s, 0, 0);
}
CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    SIM_ENTER(cuMemsetD8Async_ptsz);
    return memset_(d, v, 1, n, s, 1, 0);
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    SIM_ENTER(cuMemsetD32Async);
    return memset_(d, v, 4, n, s, 0, 0);
}
CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    SIM_ENTER(cuMemsetD32Async_ptsz);
    return memset_(d, v, 4, n, s, 1, 0);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t b)
{
    SIM_ENTER(cuMemcpyHtoD_v2);
    return memcpy_(DP(d), h, b, NULL, 0, 1, 2);
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *h, size_t b)
{
    SIM_ENTER(cuMemcpyHtoD_v2_ptds);
    return memcpy_(DP(d), h, b, NULL, 1, 1, 2);
}
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t b)
{
    SIM_ENTER(cuMemcpyDtoH_v2);
    return memcpy_(h, DP(d), b, NULL, 0, 1, 1);
}
CUresult cuMemcpyDtoH_v2_ptds(void *h, CUdeviceptr d, size_t b)
{
    SIM_ENTER(cuMemcpyDtoH_v2_ptds);
    return memcpy_(h, DP(d), b, NULL, 1, 1, 1);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t b)
{
    SIM_ENTER(cuMemcpyDtoD_v2);
    return memcpy_(DP(d), DP(s), b, NULL, 0, 1, 0);
}
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t b)
{
    SIM_ENTER(cuMemcpyDtoD_v2_ptds);
    return memcpy_(DP(d), DP(s), b, NULL, 1, 1, 0);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyHtoDAsync_v2);
    return memcpy_(DP(d), h, b, s, 0, 0, 2);
}
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *h, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyHtoDAsync_v2_ptsz);
    return memcpy_(DP(d), h, b, s, 1, 0, 2);
}
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyDtoHAsync_v2);
    return memcpy_(h, DP(d), b, s, 0, 0, 1);
}
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *h, CUdeviceptr d, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyDtoHAsync_v2_ptsz);
    return memcpy_(h, DP(d), b, s, 1, 0, 1);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyDtoDAsync_v2);
    return memcpy_(DP(d), DP(src), b, s, 0, 0, 0);
}
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr src, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyDtoDAsync_v2_ptsz);
    return memcpy_(DP(d), DP(src), b, s, 1, 0, 0);
}
/* cuMemcpy/cuMemcpyAsync take unified addresses: either side may be host memory. */
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr src, size_t b)
{
    SIM_ENTER(cuMemcpy);
    return memcpy_(DP(d), DP(src), b, NULL, 0, 1, 3);
}
CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr src, size_t b)
{
    SIM_ENTER(cuMemcpy_ptds);
    return memcpy_(DP(d), DP(src), b, NULL, 1, 1, 3);
}
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr src, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyAsync);
    return memcpy_(DP(d), DP(src), b, s, 0, 0, 3);
}
CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr src, size_t b, CUstream s)
{
    SIM_ENTER(cuMemcpyAsync_ptsz);
    return memcpy_(DP(d), DP(src), b, s, 1, 0, 3);
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    SIM_ENTER(cuMemGetAddressRange_v2);
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    sim_range copy;
    int a = range_locked((uintptr_t)p, &copy);
    pthread_mutex_unlock(&sim_lock);
    if (!a) return CUDA_ERROR_NOT_FOUND;
    if (base) *base = (CUdeviceptr)copy.base;
    if (size) *size = copy.size > g_range_short ? copy.size - g_range_short : copy.size;
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    SIM_ENTER(cuPointerGetAttribute);
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = sim_current_ctx();
    pthread_mutex_lock(&sim_lock);
    sim_range copy;
    int a = range_locked((uintptr_t)p, &copy);
    pthread_mutex_unlock(&sim_lock);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)c; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = g_pointer_kind == 1 ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = copy.resv_base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = copy.resv_size; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = c ? c->dev : 0; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = g_pointer_kind == 2; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ streams */

static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    simctx *c = sim_current_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    simstream *s = calloc(1, sizeof *s);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = STREAM_MAGIC;
    s->ctx = c;
    s->flags = flags;
    s->prio = prio < -5 ? -5 : prio > 0 ? 0 : prio;
    pthread_mutex_lock(&sim_lock);
    s->next = g_streams;
    g_streams = s;
    pthread_mutex_unlock(&sim_lock);
    *ph = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
    SIM_ENTER(cuStreamCreate);
    return stream_create(ph, flags, 0);
}
CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
    SIM_ENTER(cuStreamCreateWithPriority);
    return stream_create(ph, flags, prio);
}

static void uncapture_locked(simstream *s)
{
    for (int i = 0; i < g_ncap; i++)
        if (g_cap[i] == s) {
            g_cap[i] = g_cap[--g_ncap];
            break;
        }
    s->capturing = 0;
}

static void graph_free(simgraph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) {
        if (g->nodes[i]->kind == NODE_CHILD) graph_free(g->nodes[i]->child);
        g->nodes[i]->magic = 0;
        free(g->nodes[i]);
    }
    free(g->nodes);
    g->magic = 0;
    free(g);
}

CUresult cuStreamDestroy_v2(CUstream h)
{
    SIM_ENTER(cuStreamDestroy_v2);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lock);
    for (simstream **pp = &g_streams; *pp; pp = &(*pp)->next) {
        simstream *s = *pp;
        if (s != (simstream *)h) continue;
        *pp = s->next;
        if (s->capturing) {
            uncapture_locked(s);
            graph_free(s->graph);
        }
        s->magic = 0;
        free(s);
        rc = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

/* Synchronizing or querying a capturing stream is not allowed and breaks the capture. */
static CUresult stream_sync(CUstream h, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    if (s && s->capturing) {
        s->invalidated = 1;
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuStreamSynchronize(CUstream s)
{
    SIM_ENTER(cuStreamSynchronize);
    hang_wait();
    return stream_sync(s, 0);
}
CUresult cuStreamSynchronize_ptsz(CUstream s)
{
    SIM_ENTER(cuStreamSynchronize_ptsz);
    hang_wait();
    return stream_sync(s, 1);
}
CUresult cuStreamQuery(CUstream s)
{
    SIM_ENTER(cuStreamQuery);
    CUresult r = stream_sync(s, 0);
    return r == CUDA_SUCCESS && hang_busy() ? CUDA_ERROR_NOT_READY : r;
}
CUresult cuStreamQuery_ptsz(CUstream s)
{
    SIM_ENTER(cuStreamQuery_ptsz);
    CUresult r = stream_sync(s, 1);
    return r == CUDA_SUCCESS && hang_busy() ? CUDA_ERROR_NOT_READY : r;
}

static simevent *find_event_locked(CUevent h)
{
    for (simevent *e = g_events; e; e = e->next)
        if (e == (simevent *)h) return e;
    return NULL;
}

/* A stream that waits for an event cannot run before it: its clock moves up to the
 * event's stamp. */
static CUresult stream_wait(CUstream h, CUevent ev, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    simevent *e = s ? find_event_locked(ev) : NULL;
    if (s && !e) rc = CUDA_ERROR_INVALID_HANDLE;
    if (e && e->recorded && !s->capturing && e->stamp > s->clock_ns) s->clock_ns = e->stamp;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    SIM_ENTER(cuStreamWaitEvent);
    (void)flags;
    return stream_wait(s, e, 0);
}
CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags)
{
    SIM_ENTER(cuStreamWaitEvent_ptsz);
    (void)flags;
    return stream_wait(s, e, 1);
}

/* Reads one field of a stream (what = 0 ctx, 1 flags, 2 priority). */
static CUresult stream_get(CUstream h, int ptsz, int what, void *out)
{
    CUresult rc = CUDA_SUCCESS;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    if (s) {
        if (what == 0) *(CUcontext *)out = (CUcontext)s->ctx;
        if (what == 1) *(unsigned *)out = s->flags;
        if (what == 2) *(int *)out = s->prio;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuStreamGetCtx(CUstream s, CUcontext *c)
{
    SIM_ENTER(cuStreamGetCtx);
    return stream_get(s, 0, 0, c);
}
CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *c)
{
    SIM_ENTER(cuStreamGetCtx_ptsz);
    return stream_get(s, 1, 0, c);
}
CUresult cuStreamGetFlags(CUstream s, unsigned int *f)
{
    SIM_ENTER(cuStreamGetFlags);
    return stream_get(s, 0, 1, f);
}
CUresult cuStreamGetFlags_ptsz(CUstream s, unsigned int *f)
{
    SIM_ENTER(cuStreamGetFlags_ptsz);
    return stream_get(s, 1, 1, f);
}
CUresult cuStreamGetPriority(CUstream s, int *p)
{
    SIM_ENTER(cuStreamGetPriority);
    return stream_get(s, 0, 2, p);
}
CUresult cuStreamGetPriority_ptsz(CUstream s, int *p)
{
    SIM_ENTER(cuStreamGetPriority_ptsz);
    return stream_get(s, 1, 2, p);
}

/* Capture status; SIMCUDA_CAPTURING makes every stream look capturing. */
static CUresult capture_info(CUstream h, int ptsz, CUstreamCaptureStatus *st, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *ndeps)
{
    CUresult rc = CUDA_SUCCESS;
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    if (s) {
        int fake = atomic_load(&g_fake_capturing);
        if (s->capturing)
            *st = s->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                 : CU_STREAM_CAPTURE_STATUS_ACTIVE;
        else
            *st = fake ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
        if (id) *id = s->capturing ? s->cid : fake ? 1 : 0;
        if (graph) *graph = s->capturing ? (CUgraph)s->graph : NULL;
        if (deps) *deps = NULL;
        if (edges) *edges = NULL;
        if (ndeps) *ndeps = 0;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    SIM_ENTER(cuStreamIsCapturing);
    return capture_info(s, 0, st, NULL, NULL, NULL, NULL, NULL);
}
CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
    SIM_ENTER(cuStreamIsCapturing_ptsz);
    return capture_info(s, 1, st, NULL, NULL, NULL, NULL, NULL);
}
CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                   CUgraph *g, const CUgraphNode **d, const CUgraphEdgeData **e,
                                   size_t *n)
{
    SIM_ENTER(cuStreamGetCaptureInfo_v3);
    return capture_info(s, 0, st, id, g, d, e, n);
}
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                        CUgraph *g, const CUgraphNode **d,
                                        const CUgraphEdgeData **e, size_t *n)
{
    SIM_ENTER(cuStreamGetCaptureInfo_v3_ptsz);
    return capture_info(s, 1, st, id, g, d, e, n);
}

static int is_legacy_handle(CUstream h, int ptsz)
{
    return h == CU_STREAM_LEGACY || (h == NULL && !ptsz);
}

static CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    if (s && is_legacy_handle(h, ptsz))
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    else if (s && s->capturing)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    else if (s && g_ncap == MAX_CAPTURES)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if (s) {
        simgraph *g = calloc(1, sizeof *g);
        if (!g) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            g->magic = GRAPH_MAGIC;
            g->next = g_graphs;
            g_graphs = g;
            s->graph = g;
            s->capturing = 1;
            s->invalidated = 0;
            s->cmode = mode;
            s->cthread = pthread_self();
            s->cid = ++g_capid;
            g_cap[g_ncap++] = s;
        }
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    SIM_ENTER(cuStreamBeginCapture_v2);
    return begin_capture(s, mode, 0);
}
CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    SIM_ENTER(cuStreamBeginCapture_v2_ptsz);
    return begin_capture(s, mode, 1);
}

static void unlink_graph_locked(simgraph *g)
{
    for (simgraph **pp = &g_graphs; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            return;
        }
}

static CUresult end_capture(CUstream h, CUgraph *out, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simstream *s = sim_stream_locked(h, ptsz, &rc);
    if (s && !s->capturing)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    else if (s && s->cmode != CU_STREAM_CAPTURE_MODE_RELAXED &&
             !pthread_equal(s->cthread, pthread_self()))
        rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    else if (s) {
        uncapture_locked(s);
        if (s->invalidated) {
            unlink_graph_locked(s->graph);
            graph_free(s->graph);
            *out = NULL;
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else {
            *out = (CUgraph)s->graph;
        }
        s->graph = NULL;
        s->invalidated = 0;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    SIM_ENTER(cuStreamEndCapture);
    return end_capture(s, g, 0);
}
CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    SIM_ENTER(cuStreamEndCapture_ptsz);
    return end_capture(s, g, 1);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    SIM_ENTER(cuThreadExchangeStreamCaptureMode);
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode m = *mode;
    if (m != CU_STREAM_CAPTURE_MODE_GLOBAL && m != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        m != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = tls_mode;
    tls_mode = m;
    return CUDA_SUCCESS;
}

CUresult sim_capture_launch_locked(simstream *s, const sim_launch_rec *r)
{
    simnode n = {.kind = NODE_KERNEL, .k = *r};
    CUresult rc = graph_add_locked(s->graph, &n);
    if (rc == CUDA_SUCCESS) g_captured++;
    return rc;
}

/* ------------------------------------------------------------------ events */

CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
    SIM_ENTER(cuEventCreate);
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    simevent *e = calloc(1, sizeof *e);
    if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = EVENT_MAGIC;
    e->flags = flags;
    pthread_mutex_lock(&sim_lock);
    e->next = g_events;
    g_events = e;
    pthread_mutex_unlock(&sim_lock);
    *ph = (CUevent)e;
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent h)
{
    SIM_ENTER(cuEventDestroy_v2);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lock);
    for (simevent **pp = &g_events; *pp; pp = &(*pp)->next) {
        if (*pp != (simevent *)h) continue;
        simevent *e = *pp;
        *pp = e->next;
        e->magic = 0;
        free(e);
        rc = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

/* Stamps the event with its stream's virtual clock (or records that into a capture). */
static CUresult event_record(CUevent h, CUstream hs, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simevent *e = find_event_locked(h);
    simstream *s = e ? sim_stream_locked(hs, ptsz, &rc) : NULL;
    if (!e) rc = CUDA_ERROR_INVALID_HANDLE;
    if (e && s) {
        simnode n = {.kind = NODE_EVENT, .ev = e};
        if (s->capturing)
            rc = graph_add_locked(s->graph, &n);
        else
            run_node_locked(s, &n);
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuEventRecord(CUevent e, CUstream s)
{
    SIM_ENTER(cuEventRecord);
    return event_record(e, s, 0);
}
CUresult cuEventRecord_ptsz(CUevent e, CUstream s)
{
    SIM_ENTER(cuEventRecord_ptsz);
    return event_record(e, s, 1);
}
CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{
    SIM_ENTER(cuEventRecordWithFlags);
    if (flags & ~1u) return CUDA_ERROR_INVALID_VALUE;
    return event_record(e, s, 0);
}
CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags)
{
    SIM_ENTER(cuEventRecordWithFlags_ptsz);
    if (flags & ~1u) return CUDA_ERROR_INVALID_VALUE;
    return event_record(e, s, 1);
}

/* Whether h is a live event (*held: 1 when it was recorded after the launch that hangs,
 * so it waits for the hang). */
static CUresult event_check(CUevent h, int *held)
{
    pthread_mutex_lock(&sim_lock);
    simevent *e = find_event_locked(h);
    CUresult rc = e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    *held = e && e->recorded && g_hang_from && e->after >= g_hang_from;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
/* Execution is synchronous, so every recorded event has completed, but one recorded after
 * a launch that hangs. */
CUresult cuEventSynchronize(CUevent e)
{
    SIM_ENTER(cuEventSynchronize);
    int held;
    CUresult r = event_check(e, &held);
    if (r == CUDA_SUCCESS && held) hang_wait();
    return r;
}
CUresult cuEventQuery(CUevent e)
{
    SIM_ENTER(cuEventQuery);
    int held;
    CUresult r = event_check(e, &held);
    return r == CUDA_SUCCESS && held && hang_busy() ? CUDA_ERROR_NOT_READY : r;
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simevent *ea = find_event_locked(a), *eb = find_event_locked(b);
    if (!ea || !eb || !ea->recorded || !eb->recorded ||
        ((ea->flags | eb->flags) & CU_EVENT_DISABLE_TIMING))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        *ms = (float)((eb->stamp - ea->stamp) / 1e6);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    SIM_ENTER(cuEventElapsedTime);
    return elapsed(ms, a, b);
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    SIM_ENTER(cuEventElapsedTime_v2);
    return elapsed(ms, a, b);
}

/* ------------------------------------------------------------------ graphs */

/* Graphs run their nodes one after another, in the order they were added (dependencies
 * are accepted and not needed: a stream is sequential anyway). A child graph node owns a
 * copy of the child graph (cuGraphChildGraphNodeGetGraph hands out that copy, as the real
 * driver does); an executable graph is a deep copy whose nodes remember the graph node
 * they came from, for cuGraphExecKernelNodeSetParams and cuGraphExecUpdate. */

static simgraph *graph_in_locked(simgraph *g, const void *h, uint32_t magic)
{
    if (g == (const simgraph *)h && g->magic == magic) return g;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i]->kind == NODE_CHILD) {
            simgraph *c = graph_in_locked(g->nodes[i]->child, h, magic);
            if (c) return c;
        }
    return NULL;
}
static simgraph *find_graph_locked(const void *h, uint32_t magic)
{
    if (!h) return NULL;
    for (simgraph *g = g_graphs; g; g = g->next) {
        if (g == (const simgraph *)h && g->magic == magic) return g;
        if (magic == GRAPH_MAGIC && g->magic == GRAPH_MAGIC) {
            simgraph *c = graph_in_locked(g, h, magic);
            if (c) return c;
        }
    }
    return NULL;
}

/* A node of a (non-executable) graph, searched through child graphs too. */
static simnode *node_in_locked(simgraph *g, const void *h)
{
    for (int i = 0; i < g->n; i++) {
        simnode *n = g->nodes[i];
        if (n == (const simnode *)h) return n->magic == NODE_MAGIC ? n : NULL;
        if (n->kind == NODE_CHILD) {
            simnode *c = node_in_locked(n->child, h);
            if (c) return c;
        }
    }
    return NULL;
}
static simnode *find_node_locked(const void *h)
{
    if (!h) return NULL;
    for (simgraph *g = g_graphs; g; g = g->next)
        if (g->magic == GRAPH_MAGIC) {
            simnode *n = node_in_locked(g, h);
            if (n) return n;
        }
    return NULL;
}

/* The node of executable graph x that copies graph node orig. */
static simnode *exec_node_locked(simgraph *x, const simnode *orig)
{
    for (int i = 0; i < x->n; i++) {
        simnode *n = x->nodes[i];
        if (n->orig == orig) return n;
        if (n->kind == NODE_CHILD) {
            simnode *c = exec_node_locked(n->child, orig);
            if (c) return c;
        }
    }
    return NULL;
}

/* A deep copy of g with magic `magic` (children: GRAPH_MAGIC in graphs, GCHILD_MAGIC in
 * executables); exec: its nodes remember their originals. NULL when out of memory. */
static simgraph *clone_locked(const simgraph *g, uint32_t magic, int exec)
{
    simgraph *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->magic = magic;
    for (int i = 0; i < g->n; i++) {
        simnode n = *g->nodes[i];
        n.orig = exec ? g->nodes[i] : NULL;
        if (n.kind == NODE_CHILD &&
            !(n.child = clone_locked(n.child, exec ? GCHILD_MAGIC : GRAPH_MAGIC, exec))) {
            graph_free(c);
            return NULL;
        }
        if (graph_add_node_locked(c, &n, NULL) != CUDA_SUCCESS) {
            if (n.kind == NODE_CHILD) graph_free(n.child);
            graph_free(c);
            return NULL;
        }
    }
    return c;
}

CUresult cuGraphCreate(CUgraph *pg, unsigned int flags)
{
    SIM_ENTER(cuGraphCreate);
    if (!pg || flags) return CUDA_ERROR_INVALID_VALUE;
    simgraph *g = calloc(1, sizeof *g);
    if (!g) return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = GRAPH_MAGIC;
    pthread_mutex_lock(&sim_lock);
    g->next = g_graphs;
    g_graphs = g;
    pthread_mutex_unlock(&sim_lock);
    *pg = (CUgraph)g;
    return CUDA_SUCCESS;
}

/* v2 is v1 with kern and ctx appended: v1 callers pass kern = NULL. */
static CUresult kernel_node_rec_locked(simnode *n, const CUDA_KERNEL_NODE_PARAMS_v2 *p, int v2)
{
    void *kern = v2 ? (void *)p->kern : NULL;
    CUfunction h = p->func ? p->func : (CUfunction)kern;
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    sim_launch_rec r;
    CUresult rc =
        sim_kernel_rec_locked(h, grid, block, p->sharedMemBytes, p->kernelParams, p->extra, &r);
    if (rc != CUDA_SUCCESS) return rc;
    n->kind = NODE_KERNEL;
    n->k = r;
    n->func = p->func;
    n->kern = p->func ? NULL : kern;
    n->ctx = v2 && !p->func ? p->ctx : NULL;
    for (int i = 0; i < SIMK_MAXP; i++)
        n->argp[i] = i < r.k->nparams ? n->k.params + r.k->off[i] : NULL;
    return CUDA_SUCCESS;
}

static CUresult add_kernel_node(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t nd,
                                const CUDA_KERNEL_NODE_PARAMS_v2 *p, int v2)
{
    if (!ph || !p || (nd && !deps)) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    simgraph *g = find_graph_locked(hg, GRAPH_MAGIC);
    simnode n;
    memset(&n, 0, sizeof n);
    CUresult rc = g ? kernel_node_rec_locked(&n, p, v2) : CUDA_ERROR_INVALID_VALUE;
    simnode *made = NULL;
    if (rc == CUDA_SUCCESS) rc = graph_add_node_locked(g, &n, &made);
    if (rc == CUDA_SUCCESS) *ph = (CUgraphNode)made;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuGraphAddKernelNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t nd,
                              const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    SIM_ENTER(cuGraphAddKernelNode);
    CUDA_KERNEL_NODE_PARAMS_v2 q;
    memset(&q, 0, sizeof q);
    if (p) memcpy(&q, p, sizeof *p);
    return add_kernel_node(ph, g, deps, nd, p ? &q : NULL, 0);
}
CUresult cuGraphAddKernelNode_v2(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t nd,
                                 const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    SIM_ENTER(cuGraphAddKernelNode_v2);
    return add_kernel_node(ph, g, deps, nd, p, 1);
}

static void node_params(const simnode *n, CUDA_KERNEL_NODE_PARAMS_v2 *p, int v2)
{
    CUDA_KERNEL_NODE_PARAMS_v2 q;
    memset(&q, 0, sizeof q);
    q.func = n->func;
    q.gridDimX = n->k.grid[0];
    q.gridDimY = n->k.grid[1];
    q.gridDimZ = n->k.grid[2];
    q.blockDimX = n->k.block[0];
    q.blockDimY = n->k.block[1];
    q.blockDimZ = n->k.block[2];
    q.sharedMemBytes = n->k.shared;
    q.kernelParams = (void **)n->argp;
    q.kern = n->kern;
    q.ctx = n->ctx;
    memcpy(p, &q, v2 ? sizeof q : sizeof(CUDA_KERNEL_NODE_PARAMS_v1));
}

static CUresult get_params(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS_v2 *p, int v2)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simnode *n = find_node_locked(h);
    CUresult rc = !n                       ? CUDA_ERROR_INVALID_HANDLE
                  : n->kind != NODE_KERNEL ? CUDA_ERROR_INVALID_VALUE
                                           : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) node_params(n, p, v2);
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuGraphKernelNodeGetParams(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    SIM_ENTER(cuGraphKernelNodeGetParams);
    return get_params(n, (CUDA_KERNEL_NODE_PARAMS_v2 *)(void *)p, 0);
}
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    SIM_ENTER(cuGraphKernelNodeGetParams_v2);
    return get_params(n, p, 1);
}

/* Sets a kernel node's parameters: of a graph's node (x NULL), or of an executable
 * graph's copy of it. */
static CUresult set_params(CUgraphExec hx, CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v2 *p,
                           int v2)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    simnode *n = find_node_locked(h);
    CUresult rc = CUDA_SUCCESS;
    if (n && hx) {
        simgraph *x = find_graph_locked(hx, GEXEC_MAGIC);
        n = x ? exec_node_locked(x, n) : NULL;
        if (!x) rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (rc == CUDA_SUCCESS && !n) rc = CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS && n->kind != NODE_KERNEL) rc = CUDA_ERROR_INVALID_VALUE;
    simnode t;
    if (rc == CUDA_SUCCESS) {
        t = *n;
        rc = kernel_node_rec_locked(&t, p, v2);
    }
    if (rc == CUDA_SUCCESS) *n = t;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
static CUresult set_v1(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    CUDA_KERNEL_NODE_PARAMS_v2 q;
    memset(&q, 0, sizeof q);
    if (p) memcpy(&q, p, sizeof *p);
    return set_params(x, n, p ? &q : NULL, 0);
}
CUresult cuGraphKernelNodeSetParams(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    SIM_ENTER(cuGraphKernelNodeSetParams);
    return set_v1(NULL, n, p);
}
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    SIM_ENTER(cuGraphKernelNodeSetParams_v2);
    return set_params(NULL, n, p, 1);
}
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    SIM_ENTER(cuGraphExecKernelNodeSetParams);
    if (!x) return CUDA_ERROR_INVALID_VALUE;
    return set_v1(x, n, p);
}
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n,
                                           const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    SIM_ENTER(cuGraphExecKernelNodeSetParams_v2);
    if (!x) return CUDA_ERROR_INVALID_VALUE;
    return set_params(x, n, p, 1);
}

CUresult cuGraphAddChildGraphNode(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t nd,
                                  CUgraph child)
{
    SIM_ENTER(cuGraphAddChildGraphNode);
    if (!ph || (nd && !deps)) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simgraph *g = find_graph_locked(hg, GRAPH_MAGIC), *c = find_graph_locked(child, GRAPH_MAGIC);
    simnode n;
    memset(&n, 0, sizeof n);
    n.kind = NODE_CHILD;
    if (!g || !c || g == c)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(n.child = clone_locked(c, GRAPH_MAGIC, 0)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    simnode *made = NULL;
    if (rc == CUDA_SUCCESS && (rc = graph_add_node_locked(g, &n, &made)) != CUDA_SUCCESS)
        graph_free(n.child);
    if (rc == CUDA_SUCCESS) *ph = (CUgraphNode)made;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode h, CUgraph *pg)
{
    SIM_ENTER(cuGraphChildGraphNodeGetGraph);
    if (!pg) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simnode *n = find_node_locked(h);
    CUresult rc = !n                      ? CUDA_ERROR_INVALID_HANDLE
                  : n->kind != NODE_CHILD ? CUDA_ERROR_INVALID_VALUE
                                          : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) *pg = (CUgraph)n->child;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuGraphGetNodes(CUgraph hg, CUgraphNode *nodes, size_t *num)
{
    SIM_ENTER(cuGraphGetNodes);
    if (!num) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simgraph *g = find_graph_locked(hg, GRAPH_MAGIC);
    if (g && !nodes) {
        *num = (size_t)g->n;
    } else if (g) {
        size_t i;
        for (i = 0; i < *num; i++)
            nodes[i] = i < (size_t)g->n ? (CUgraphNode)g->nodes[i] : NULL;
        if (*num > (size_t)g->n) *num = (size_t)g->n;
    }
    pthread_mutex_unlock(&sim_lock);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *t)
{
    SIM_ENTER(cuGraphNodeGetType);
    if (!t) return CUDA_ERROR_INVALID_VALUE;
    static const CUgraphNodeType types[] = {
        CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMSET,
        CU_GRAPH_NODE_TYPE_EVENT_RECORD, CU_GRAPH_NODE_TYPE_GRAPH};
    pthread_mutex_lock(&sim_lock);
    simnode *n = find_node_locked(h);
    if (n) *t = types[n->kind];
    pthread_mutex_unlock(&sim_lock);
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult instantiate(CUgraphExec *pexec, CUgraph hg)
{
    if (!pexec) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simgraph *g = find_graph_locked(hg, GRAPH_MAGIC);
    simgraph *x = g ? clone_locked(g, GEXEC_MAGIC, 1) : NULL;
    if (!g)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!x)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        x->next = g_graphs;
        g_graphs = x;
        *pexec = (CUgraphExec)x;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *pexec, CUgraph hg, unsigned long long flags)
{
    SIM_ENTER(cuGraphInstantiateWithFlags);
    (void)flags;
    return instantiate(pexec, hg);
}
CUresult cuGraphInstantiate(CUgraphExec *pexec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
    SIM_ENTER(cuGraphInstantiate);
    (void)err;
    if (log && n) log[0] = '\0';
    return instantiate(pexec, g);
}
CUresult cuGraphInstantiate_v2(CUgraphExec *pexec, CUgraph g, CUgraphNode *err, char *log, size_t n)
{
    SIM_ENTER(cuGraphInstantiate_v2);
    (void)err;
    if (log && n) log[0] = '\0';
    return instantiate(pexec, g);
}
static CUresult instantiate_params(CUgraphExec *pexec, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = instantiate(pexec, g);
    p->result_out =
        rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    p->hErrNode_out = NULL;
    return rc;
}
CUresult cuGraphInstantiateWithParams(CUgraphExec *pexec, CUgraph g,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    SIM_ENTER(cuGraphInstantiateWithParams);
    return instantiate_params(pexec, g, p);
}
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *pexec, CUgraph g,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    SIM_ENTER(cuGraphInstantiateWithParams_ptsz);
    return instantiate_params(pexec, g, p);
}

/* Same shape: the same number of nodes of the same kinds, child graphs alike. */
static int same_topology(const simgraph *a, const simgraph *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++) {
        if (a->nodes[i]->kind != b->nodes[i]->kind) return 0;
        if (a->nodes[i]->kind == NODE_CHILD &&
            !same_topology(a->nodes[i]->child, b->nodes[i]->child))
            return 0;
    }
    return 1;
}
/* Takes every node's parameters from g; x's nodes now stand for g's. */
static void update_from(simgraph *x, const simgraph *g)
{
    for (int i = 0; i < x->n; i++) {
        simnode *n = x->nodes[i];
        simgraph *child = n->child;
        *n = *g->nodes[i];
        n->magic = NODE_MAGIC;
        n->orig = g->nodes[i];
        n->child = child;
        for (int j = 0; j < SIMK_MAXP; j++)
            n->argp[j] = n->k.k && j < n->k.k->nparams ? n->k.params + n->k.k->off[j] : NULL;
        if (n->kind == NODE_CHILD) update_from(child, g->nodes[i]->child);
    }
}
static CUresult exec_update(CUgraphExec hx, CUgraph hg, CUgraphExecUpdateResult *res)
{
    pthread_mutex_lock(&sim_lock);
    simgraph *x = find_graph_locked(hx, GEXEC_MAGIC), *g = find_graph_locked(hg, GRAPH_MAGIC);
    CUresult rc = CUDA_SUCCESS;
    *res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    if (!x || !g) {
        rc = CUDA_ERROR_INVALID_VALUE;
        *res = CU_GRAPH_EXEC_UPDATE_ERROR;
    } else if (!same_topology(x, g)) {
        rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
        *res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    } else {
        update_from(x, g);
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res)
{
    SIM_ENTER(cuGraphExecUpdate);
    if (!err || !res) return CUDA_ERROR_INVALID_VALUE;
    *err = NULL;
    return exec_update(x, g, res);
}
CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    SIM_ENTER(cuGraphExecUpdate_v2);
    if (!info) return CUDA_ERROR_INVALID_VALUE;
    memset(info, 0, sizeof *info);
    return exec_update(x, g, &info->result);
}

static CUresult run_graph_locked(simstream *s, const simgraph *x)
{
    CUresult rc = CUDA_SUCCESS;
    for (int i = 0; i < x->n && rc == CUDA_SUCCESS; i++) {
        const simnode *n = x->nodes[i];
        if (n->kind == NODE_KERNEL)
            rc = sim_execute_locked(s, &n->k, 1);
        else if (n->kind == NODE_CHILD)
            rc = run_graph_locked(s, n->child);
        else
            run_node_locked(s, n);
    }
    return rc;
}

static CUresult graph_launch(CUgraphExec hx, CUstream h, int ptsz)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simgraph *x = find_graph_locked(hx, GEXEC_MAGIC);
    simstream *s = x ? sim_stream_locked(h, ptsz, &rc) : NULL;
    if (!x) rc = CUDA_ERROR_INVALID_VALUE;
    if (s && s->capturing)
        rc = CUDA_ERROR_NOT_SUPPORTED; /* a replay under capture: not simulated */
    if (s && rc == CUDA_SUCCESS) {
        g_graph_launches++;
        rc = run_graph_locked(s, x);
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
    SIM_ENTER(cuGraphLaunch);
    return graph_launch(x, s, 0);
}
CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s)
{
    SIM_ENTER(cuGraphLaunch_ptsz);
    return graph_launch(x, s, 1);
}

static simgraph *g_graveyard; /* under sim_lock */

static CUresult graph_destroy(void *h, uint32_t magic)
{
    pthread_mutex_lock(&sim_lock);
    simgraph *g = NULL;
    for (simgraph *t = g_graphs; t; t = t->next) /* top-level ones only */
        if (t == (simgraph *)h && t->magic == magic) g = t;
    if (g) {
        unlink_graph_locked(g);
        if (g_unique_handles && magic == GEXEC_MAGIC) {
            /* kept, so that no later executable graph gets its address as its handle */
            g->magic = 0;
            g->next = g_graveyard;
            g_graveyard = g;
        } else {
            graph_free(g);
        }
    }
    pthread_mutex_unlock(&sim_lock);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGraphDestroy(CUgraph g)
{
    SIM_ENTER(cuGraphDestroy);
    return graph_destroy(g, GRAPH_MAGIC);
}
CUresult cuGraphExecDestroy(CUgraphExec x)
{
    SIM_ENTER(cuGraphExecDestroy);
    return graph_destroy(x, GEXEC_MAGIC);
}

/* ------------------------------------------------------------------ execution */

/* splitmix64: a fixed, seedable sequence, so noisy runs repeat exactly. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void trace_locked(const sim_launch_rec *r, double cost, int replay)
{
    if (!g_trace_path) return;
    if (!g_trace && !(g_trace = fopen(g_trace_path, "a"))) {
        fprintf(stderr, "simcuda: cannot open trace %s: %s\n", g_trace_path, strerror(errno));
        free(g_trace_path);
        g_trace_path = NULL;
        return;
    }
    char who[32] = "";
    if (g_helper) snprintf(who, sizeof who, " helper=%ld", (long)getpid());
    fprintf(g_trace, "%s grid=%u,%u,%u block=%u,%u,%u shared=%u cost_ns=%.0f%s%s\n", r->k->name,
            r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->shared,
            cost, who, replay ? " replay" : "");
    fflush(g_trace);
}

double sim_cost(const sim_launch_rec *r)
{
    sim_exec e;
    memset(&e, 0, sizeof e);
    e.k = r->k;
    memcpy(e.grid, r->grid, sizeof e.grid);
    memcpy(e.block, r->block, sizeof e.block);
    e.dyn_shared = r->shared;
    e.params = r->params;
    return r->k->cost(&e);
}

uintptr_t sim_global_alloc_locked(size_t bytes)
{
    CUdeviceptr d = 0;
    if (alloc_locked(&d, bytes) != CUDA_SUCCESS) return 0;
    alloc_rec *a = find_alloc_locked((uintptr_t)d);
    if (a) a->global = 1;
    float one = 1.0f;
    for (size_t i = 0; i + 4 <= bytes; i += 4)
        memcpy((char *)(uintptr_t)d + i, &one, 4);
    return (uintptr_t)d;
}

void sim_global_free_locked(uintptr_t p)
{
    if (p) free_locked((CUdeviceptr)p, 0);
}

/* The nth launch of r's config: a number of its own (g_noise_count). */
static uint64_t noise_index_locked(const sim_launch_rec *r)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the name, then the dims */
    for (const char *c = r->k->name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    const unsigned dims[7] = {r->grid[0],  r->grid[1],  r->grid[2], r->block[0],
                              r->block[1], r->block[2], r->shared};
    for (int i = 0; i < 7; i++)
        h = mix64(h ^ dims[i]);
    h |= 1; /* 0 marks a free slot */
    size_t i = h % NOISE_SLOTS, probes = 0;
    while (g_noise_count[i].key && g_noise_count[i].key != h && ++probes < NOISE_SLOTS)
        i = (i + 1) % NOISE_SLOTS;
    g_noise_count[i].key = h;
    return mix64(h ^ ++g_noise_count[i].n);
}

CUresult sim_execute_locked(simstream *s, const sim_launch_rec *r, int replay)
{
    if (at_hit(&g_fault_at, r)) return sim_fault(CUDA_ERROR_ILLEGAL_ADDRESS);
    sim_exec e;
    memset(&e, 0, sizeof e);
    e.k = r->k;
    e.coef = (const float *)r->coef;
    memcpy(e.grid, r->grid, sizeof e.grid);
    memcpy(e.block, r->block, sizeof e.block);
    e.dyn_shared = r->shared;
    e.params = r->params;
    for (int i = 0; i < r->k->nparams; i++) {
        if (r->k->p[i].kind != SIMK_PTR) continue;
        uint64_t p;
        memcpy(&p, r->params + r->k->off[i], 8);
        e.base[i] = (unsigned char *)(uintptr_t)p;
        e.avail[i] = sim_alloc_avail_locked((uintptr_t)p);
    }
    e.smem_bytes = (size_t)r->k->static_shared + r->shared;
    e.smem = calloc(1, e.smem_bytes ? e.smem_bytes : 1);
    if (!e.smem) return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned z = 0; z < r->grid[2] && !e.fault; z++)
        for (unsigned y = 0; y < r->grid[1] && !e.fault; y++)
            for (unsigned x = 0; x < r->grid[0] && !e.fault; x++) {
                e.bid[0] = x, e.bid[1] = y, e.bid[2] = z;
                r->k->run_block(&e);
            }
    free(e.smem);

    g_launches++;
    if ((g_hang_ms > 0 || g_hang_file[0]) && r->block[0] == g_hang_block &&
        !strcmp(r->k->name, g_hang_kernel) && ++g_hang_seen >= g_hang_nth) {
        if (!hang_busy()) g_hang_from = g_launches; /* a new hang, not one going on */
        if (g_hang_file[0])
            atomic_store(&g_hang_held, 1);
        else
            atomic_store(&g_hang_until, wall_ms() + g_hang_ms);
    }
    if (e.hang && !hang_busy()) g_hang_from = g_launches;
    if (e.hang) atomic_store(&g_hang_until, INFINITY);
    double cost = sim_cost(r);
    if (g_noise > 0) {
        double u = (double)(mix64(((uint64_t)g_noise_seed << 32) ^ noise_index_locked(r)) >> 11) /
                   9007199254740992.0;
        cost *= 1.0 + g_noise * (2.0 * u - 1.0);
    }
    if (g_outlier && g_launches % g_outlier == 0) cost *= 100.0;
    if (at_hit(&g_outlier_at, r)) cost *= 100.0;
    s->clock_ns += cost;
    snprintf(g_last.kernel, sizeof g_last.kernel, "%s", r->k->name);
    memcpy(g_last.grid, r->grid, sizeof g_last.grid);
    memcpy(g_last.block, r->block, sizeof g_last.block);
    g_last.shared = r->shared;
    g_last.cost_ns = cost;
    trace_locked(r, cost, replay);
    return e.fault ? sim_fault(CUDA_ERROR_ILLEGAL_ADDRESS) : CUDA_SUCCESS;
}

SIM_API void simcuda_get_stats(struct simcuda_stats *out)
{
    if (!out) return;
    pthread_mutex_lock(&sim_lock);
    memset(out, 0, sizeof *out);
    out->launches = g_launches;
    out->captured = g_captured;
    out->graph_launches = g_graph_launches;
    out->allocs = g_alloc_count;
    out->frees = g_frees;
    out->live_allocations = (long)g_nallocs;
    out->live_bytes = g_live_bytes;
    out->faults_injected = atomic_load(&g_faults_injected);
    out->last = g_last;
    pthread_mutex_unlock(&sim_lock);
}
