/* bench_launch.c - host cost of one kernel launch on the simulated driver, with or
 * without the shim (whatever LD_PRELOAD says; this program does not know).
 *
 * It reaches the driver as the CUDA runtime does: dlopen("libcuda.so.1"), one
 * dlsym(handle, "cuGetProcAddress_v2"), that asked for cuGetProcAddress at 12000, and
 * cuLaunchKernel and the rest through it; the kernel is a CUkernel (cuLibraryGetKernel)
 * cast to CUfunction, as the runtime launches. The kernel is the simulated "vecadd" with
 * n = 1, grid 1, block 1 (by default), so the simulated kernel body costs almost nothing
 * and the figure is the launch path: the program's call, the shim (if loaded), the
 * simulated driver's checks and bookkeeping.
 *
 *   bench_launch [-n LAUNCHES] [-t THREADS] [-r REPS] [-w WARMUP] [-b BLOCK] [-g GRID] [-p] [-a]
 *
 * With -a each thread alternates between two sets of buffers, launch by launch: the same
 * key (n and the dims do not change) but other pointer arguments each time, as a program
 * whose allocator hands out other tensors does. The shim's per-thread memo compares only
 * the arguments a policy entry's expressions read, so a decided key whose expressions do
 * not read the pointers still takes the fast path; an entry that reads them (a condition
 * on alignment, say) takes the slow one (key derivation, the lookup of the key, the
 * winner's config evaluated).
 *
 * Each of THREADS threads has its own stream and, per repetition, makes LAUNCHES
 * launches back to back, then synchronises its stream; the threads start together at a
 * barrier. A repetition's figure is its wall time (clock_gettime, CLOCK_MONOTONIC, from
 * the first thread's start to the last thread's end, each taken by the thread itself, so
 * that a main thread the scheduler runs late cannot shorten it) divided by LAUNCHES: the time one
 * launch takes as each thread sees it, all threads launching at once. Before the first repetition
 * each thread makes WARMUP launches (the first launch of a key is where the shim tunes).
 * With -p, thread i is pinned to the i-th CPU the process may run on (sched_getaffinity),
 * one thread per core; it exits 2 when there are fewer CPUs than threads, since two
 * threads on a core would measure the sharing, not the launch path. Prints one line:
 *
 *   threads=T launches=N reps=R median_ns=M min_ns=m max_ns=x launches_per_s=L pinned=P
 *
 * (L = T * N / median wall time). For instruction counts run it under callgrind with
 * -r 1: the launch loop is the function launch_loop (never inlined), so
 * --toggle-collect=launch_loop counts only the launches, and two runs with different
 * -n give instructions per launch by difference (bench_launch.sh does both).
 * Exits 1 with a message on any failed driver call.
 */
/* sched_getaffinity, pthread_setaffinity_np: _GNU_SOURCE comes from the build */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

typedef CUresult (*pfn_gp2)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);

#define API(X)                                                                                     \
    X(cuInit, CUresult (*)(unsigned))                                                              \
    X(cuGetErrorName, CUresult (*)(CUresult, const char **))                                       \
    X(cuDeviceGet, CUresult (*)(CUdevice *, int))                                                  \
    X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext *, CUdevice))                               \
    X(cuCtxSetCurrent, CUresult (*)(CUcontext))                                                    \
    X(cuCtxSynchronize, CUresult (*)(void))                                                        \
    X(cuMemAlloc, CUresult (*)(CUdeviceptr *, size_t))                                             \
    X(cuMemFree, CUresult (*)(CUdeviceptr))                                                        \
    X(cuMemcpyDtoH, CUresult (*)(void *, CUdeviceptr, size_t))                                     \
    X(cuMemsetD8, CUresult (*)(CUdeviceptr, unsigned char, size_t))                                \
    X(cuStreamCreate, CUresult (*)(CUstream *, unsigned))                                          \
    X(cuStreamDestroy, CUresult (*)(CUstream))                                                     \
    X(cuStreamSynchronize, CUresult (*)(CUstream))                                                 \
    X(cuLibraryLoadData, CUresult (*)(CUlibrary *, const void *, CUjit_option *, void **,          \
                                      unsigned, CUlibraryOption *, void **, unsigned))             \
    X(cuLibraryGetKernel, CUresult (*)(CUkernel *, CUlibrary, const char *))                       \
    X(cuLibraryUnload, CUresult (*)(CUlibrary))

static struct {
#define FIELD(name, type) __typeof__(type) name; /* NOLINT(bugprone-macro-parentheses): a type */
    API(FIELD)
#undef FIELD
    pfn_launch launch;
} cu;

static void check(CUresult r, const char *what, int line)
{
    if (r == CUDA_SUCCESS) return;
    const char *name = "?";
    if (cu.cuGetErrorName) cu.cuGetErrorName(r, &name);
    fprintf(stderr, "bench_launch.c:%d: %s failed: %s (%d)\n", line, what, name, (int)r);
    exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

static void load_api(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_launch: dlopen libcuda.so.1: %s\n", dlerror());
        exit(1);
    }
    pfn_gp2 first = (pfn_gp2)dlsym(h, "cuGetProcAddress_v2");
    if (!first) {
        fprintf(stderr, "bench_launch: no cuGetProcAddress_v2 in libcuda.so.1\n");
        exit(1);
    }
    CUdriverProcAddressQueryResult st;
    pfn_gp2 gp2 = NULL;
    CHECK(first("cuGetProcAddress", (void **)&gp2, 12000, 0, &st));
#define GET(name, type) CHECK(gp2(#name, (void **)&cu.name, 12000, 0, &st));
    API(GET)
#undef GET
    CHECK(gp2("cuLaunchKernel", (void **)&cu.launch, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static CUcontext ctx;
static CUfunction vecadd;
static long launches = 100000, warmup = 1000;
static int nthreads = 1, reps = 7, pin, alternate;
static unsigned grid = 1, block = 1;
static pthread_barrier_t start_bar, end_bar;

typedef struct {
    CUstream stream;
    CUdeviceptr a, b, out, out2;
    int n;
    void *params[4];
    void *params2[4]; /* -a: the other set (out2 for out) */
    int cpu;          /* pinned to this CPU (-p), or -1 */
    double *t0, *t1;  /* each repetition's start and end, taken by the thread itself */
} worker;

/* The measured loop: nothing but launches. Its name is what callgrind's
 * --toggle-collect takes. */
__attribute__((noinline)) void launch_loop(worker *w, long count)
{
    if (alternate) { /* -a: pairs of launches, so that the loop's own cost stays one branch */
        for (long i = 0; i + 1 < count; i += 2) {
            CHECK(cu.launch(vecadd, grid, 1, 1, block, 1, 1, 0, w->stream, w->params, NULL));
            CHECK(cu.launch(vecadd, grid, 1, 1, block, 1, 1, 0, w->stream, w->params2, NULL));
        }
        if (count % 2)
            CHECK(cu.launch(vecadd, grid, 1, 1, block, 1, 1, 0, w->stream, w->params, NULL));
        return;
    }
    for (long i = 0; i < count; i++)
        CHECK(cu.launch(vecadd, grid, 1, 1, block, 1, 1, 0, w->stream, w->params, NULL));
}

static void *thread_main(void *p)
{
    worker *w = p;
    if (w->cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(w->cpu, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
            fprintf(stderr, "bench_launch: cannot pin a thread to CPU %d\n", w->cpu);
            exit(1);
        }
    }
    CHECK(cu.cuCtxSetCurrent(ctx));
    launch_loop(w, warmup);
    CHECK(cu.cuStreamSynchronize(w->stream));
    for (int r = 0; r < reps; r++) {
        pthread_barrier_wait(&start_bar);
        w->t0[r] = now_ns();
        launch_loop(w, launches);
        CHECK(cu.cuStreamSynchronize(w->stream));
        w->t1[r] = now_ns();
        pthread_barrier_wait(&end_bar);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long arg_long(const char *s, long lo, long hi, const char *what)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < lo || v > hi) {
        fprintf(stderr, "bench_launch: bad %s: %s (%ld..%ld)\n", what, s, lo, hi);
        exit(2);
    }
    return v;
}

/* The options into the globals; 0, or 2 after the usage line. */
static int parse_args(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "n:t:r:w:b:g:pah")) != -1) {
        switch (c) {
        case 'n': launches = arg_long(optarg, 1, 1000000000, "-n"); break;
        case 't': nthreads = (int)arg_long(optarg, 1, 256, "-t"); break;
        case 'r': reps = (int)arg_long(optarg, 1, 1000, "-r"); break;
        case 'w': warmup = arg_long(optarg, 0, 1000000000, "-w"); break;
        case 'b': block = (unsigned)arg_long(optarg, 1, 1024, "-b"); break;
        case 'g': grid = (unsigned)arg_long(optarg, 1, 65535, "-g"); break;
        case 'p': pin = 1; break;
        case 'a': alternate = 1; break;
        default:
            fprintf(stderr, "usage: bench_launch [-n LAUNCHES] [-t THREADS] [-r REPS] "
                            "[-w WARMUP] [-b BLOCK] [-g GRID] [-p] [-a]\n");
            return 2;
        }
    }
    return 0;
}

/* Each worker's stream, buffers (large enough for any config a policy could rewrite the
 * launch to) and kernel arguments. */
static void setup_worker(worker *w)
{
    size_t bytes = (size_t)grid * block * 4 + 4096;
    CHECK(cu.cuStreamCreate(&w->stream, CU_STREAM_NON_BLOCKING));
    CHECK(cu.cuMemAlloc(&w->a, bytes));
    CHECK(cu.cuMemAlloc(&w->b, bytes));
    CHECK(cu.cuMemAlloc(&w->out, bytes));
    CHECK(cu.cuMemAlloc(&w->out2, bytes));
    CHECK(cu.cuMemsetD8(w->a, 0, bytes));
    CHECK(cu.cuMemsetD8(w->b, 0, bytes));
    w->n = 1;
    w->params[0] = &w->a;
    w->params[1] = &w->b;
    w->params[2] = &w->out;
    w->params[3] = &w->n;
    memcpy(w->params2, w->params, sizeof w->params2);
    w->params2[2] = &w->out2;
}

/* -p: thread i on the i-th CPU of the process's affinity mask; nonzero (with a message)
 * when there are fewer CPUs than threads. */
static int assign_cpus(worker *ws)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "bench_launch: sched_getaffinity failed\n");
        return 1;
    }
    int i = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && i < nthreads; cpu++)
        if (CPU_ISSET(cpu, &set)) ws[i++].cpu = cpu;
    if (i < nthreads) {
        fprintf(stderr, "bench_launch: -p: %d threads but %d CPUs to pin them to\n", nthreads,
                CPU_COUNT(&set));
        return 1;
    }
    return 0;
}

static void print_result(const double *per)
{
    double sorted[1000];
    memcpy(sorted, per, (size_t)reps * sizeof *per);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    double med = reps % 2 ? sorted[reps / 2] : (sorted[reps / 2 - 1] + sorted[reps / 2]) / 2;
    printf("threads=%d launches=%ld reps=%d median_ns=%.1f min_ns=%.1f max_ns=%.1f "
           "launches_per_s=%.0f pinned=%d\n",
           nthreads, launches, reps, med, sorted[0], sorted[reps - 1], (double)nthreads * 1e9 / med,
           pin);
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv)) return 2;
    load_api();
    CHECK(cu.cuInit(0));
    CUdevice dev;
    CHECK(cu.cuDeviceGet(&dev, 0));
    CHECK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cu.cuCtxSetCurrent(ctx));
    static const char image[] = "simulated image";
    CUlibrary lib;
    CHECK(cu.cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CHECK(cu.cuLibraryGetKernel(&k, lib, "vecadd"));
    vecadd = (CUfunction)k; /* as the runtime launches */

    worker *ws = calloc((size_t)nthreads, sizeof *ws);
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    double *per = calloc((size_t)reps, sizeof *per);
    double *stamps = calloc((size_t)nthreads * 2 * (size_t)reps, sizeof *stamps);
    if (!ws || !tids || !per || !stamps) {
        fprintf(stderr, "bench_launch: out of memory\n");
        free(ws);
        free(tids);
        free(per);
        free(stamps);
        return 1;
    }
    for (int i = 0; i < nthreads; i++) {
        setup_worker(&ws[i]);
        ws[i].cpu = -1;
        ws[i].t0 = stamps + (size_t)i * 2 * (size_t)reps;
        ws[i].t1 = ws[i].t0 + reps;
    }
    if (pin && assign_cpus(ws) != 0) {
        free(ws);
        free(tids);
        free(per);
        free(stamps);
        return 2;
    }
    pthread_barrier_init(&start_bar, NULL, (unsigned)nthreads + 1);
    pthread_barrier_init(&end_bar, NULL, (unsigned)nthreads + 1);
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&tids[i], NULL, thread_main, &ws[i]) != 0) {
            fprintf(stderr, "bench_launch: pthread_create failed\n");
            exit(1); /* the started threads wait at the barrier */
        }
    for (int r = 0; r < reps; r++) {
        pthread_barrier_wait(&start_bar);
        pthread_barrier_wait(&end_bar);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    for (int r = 0; r < reps; r++) {
        double t0 = stamps[r], t1 = stamps[reps + r]; /* thread 0's */
        for (int i = 1; i < nthreads; i++) {
            if (ws[i].t0[r] < t0) t0 = ws[i].t0[r];
            if (ws[i].t1[r] > t1) t1 = ws[i].t1[r];
        }
        per[r] = (t1 - t0) / (double)launches;
    }

    /* The kernel really ran: out[0] = a[0] + b[0] = 0 (the simulated fill is 0xA5). */
    float o = -1;
    CHECK(cu.cuMemcpyDtoH(&o, ws[0].out, sizeof o));
    if (o != 0.0f) {
        fprintf(stderr, "bench_launch: vecadd did not run (out[0] = %g)\n", (double)o);
        free(per);
        free(stamps);
        free(tids);
        free(ws);
        return 1;
    }
    for (int i = 0; i < nthreads; i++) {
        CHECK(cu.cuMemFree(ws[i].a));
        CHECK(cu.cuMemFree(ws[i].b));
        CHECK(cu.cuMemFree(ws[i].out));
        CHECK(cu.cuMemFree(ws[i].out2));
        CHECK(cu.cuStreamDestroy(ws[i].stream));
    }
    CHECK(cu.cuLibraryUnload(lib));

    print_result(per);
    free(per);
    free(stamps);
    free(ws);
    free(tids);
    return 0;
}
