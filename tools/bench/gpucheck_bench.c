/*
 * gpucheck_bench: what the shim's verification kernels cost on the GPU, for one or two
 * builds of their PTX side by side (shim/session/gpucheck/kernels.ptx, and e.g. an older one from
 * git), over buffers of a size a tuning key has (128 MiB by default).
 *
 *   gpucheck_bench [--mib N] A.ptx [B.ptx]
 *
 * Cases: the bitwise comparison of equal buffers and of buffers that differ in every
 * word (element sizes 1 and 4), the tolerance comparison of f32 buffers that differ
 * everywhere, change detection of buffers that differ everywhere, and the largest
 * magnitude. Each is launched as the shim launches it (256 threads, at most 4096 blocks),
 * 3 times untimed and 15 times between events once the clock is up (a spin of 300 ms of
 * the bitwise kernel first); the median is printed in microseconds, with the memory
 * traffic it implies (bytes read / median). "idle first" times one launch of the
 * everywhere-differing bitwise case after a second of idle GPU, the clock the shim
 * verifies at when no candidate has passed yet. Prints a Markdown table.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = NULL;                                                                 \
            cuGetErrorName(r_, &s_);                                                               \
            fprintf(stderr, "gpucheck_bench: %s failed: %s\n", #x, s_ ? s_ : "?");                 \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

enum { F_BITS, F_TOL, F_CHANGED, F_ABSMAX, NF };
static const char *const names[NF] = {"xmt_cmp_bits", "xmt_cmp_tol", "xmt_changed", "xmt_absmax"};

typedef struct {
    CUfunction f[NF];
} module;

static CUdeviceptr d_a, d_b, d_c, d_res, d_flags;
static size_t bytes;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    char *b = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "gpucheck_bench: cannot read %s\n", path);
        exit(2);
    }
    b[n] = 0;
    (void)fclose(f);
    return b;
}

static unsigned blocks_for(size_t items)
{
    size_t b = (items + 255) / 256;
    return b < 1 ? 1 : b > 4096 ? 4096 : (unsigned)b;
}

/* One launch of case c with module m; reset: the result slots first (as the shim does). */
static void launch(const module *m, int c)
{
    uint64_t n = bytes, n4 = bytes / 4;
    unsigned es = c == 1 ? 1 : 4, dt = 3, shift = 16;
    double rtol = 0, atol = 0;
    CUdeviceptr cnt = d_res, fst = d_res + 8, a = d_a, b = c == 0 ? d_c : d_b;
    CK(cuMemsetD8Async(d_res, 0, 8, 0));
    CK(cuMemsetD8Async(d_res + 8, 0xFF, 8, 0));
    switch (c) {
    case 0:   /* equal */
    case 1:   /* differ everywhere, es 1 */
    case 2: { /* differ everywhere, es 4 */
        void *args[] = {&a, &b, &n, &es, &cnt, &fst};
        CK(cuLaunchKernel(m->f[F_BITS], blocks_for(n / 16 + 1), 1, 1, 256, 1, 1, 0, 0, args, NULL));
        break;
    }
    case 3: {
        void *args[] = {&a, &b, &n4, &dt, &rtol, &atol, &cnt, &fst};
        CK(cuLaunchKernel(m->f[F_TOL], blocks_for(n4), 1, 1, 256, 1, 1, 0, 0, args, NULL));
        break;
    }
    case 4: {
        void *args[] = {&a, &b, &n, &shift, &d_flags, &cnt, &fst};
        CK(cuLaunchKernel(m->f[F_CHANGED], blocks_for(n / 16 + 1), 1, 1, 256, 1, 1, 0, 0, args,
                          NULL));
        break;
    }
    default: {
        void *args[] = {&a, &n4, &dt, &d_res};
        CK(cuLaunchKernel(m->f[F_ABSMAX], blocks_for(n4), 1, 1, 256, 1, 1, 0, 0, args, NULL));
    }
    }
}

static const char *const cases[] = {
    "bits, equal (es 4)",
    "bits, every word differs (es 1)",
    "bits, every word differs (es 4)",
    "tol f32, every element differs",
    "changed, every word differs",
    "absmax f32",
};
/* buffers read per launch (a and b, or a alone) */
static const int reads[] = {2, 2, 2, 2, 2, 1};
#define NCASES 6

static int cmp_f(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

static float median_us(const module *m, int c)
{
    enum { RUNS = 15 };
    float t[RUNS];
    CUevent s, e;
    CK(cuEventCreate(&s, 0));
    CK(cuEventCreate(&e, 0));
    for (int i = 0; i < 3; i++)
        launch(m, c);
    for (int i = 0; i < RUNS; i++) {
        CK(cuEventRecord(s, 0));
        launch(m, c);
        CK(cuEventRecord(e, 0));
        CK(cuEventSynchronize(e));
        CK(cuEventElapsedTime(&t[i], s, e));
    }
    cuEventDestroy(s);
    cuEventDestroy(e);
    qsort(t, RUNS, sizeof t[0], cmp_f);
    return t[RUNS / 2] * 1000.0f;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static float idle_first_us(const module *m)
{
    CUevent s, e;
    float ms;
    struct timespec one = {1, 0};
    CK(cuCtxSynchronize());
    nanosleep(&one, NULL);
    CK(cuEventCreate(&s, 0));
    CK(cuEventCreate(&e, 0));
    CK(cuEventRecord(s, 0));
    launch(m, 2);
    CK(cuEventRecord(e, 0));
    CK(cuEventSynchronize(e));
    CK(cuEventElapsedTime(&ms, s, e));
    cuEventDestroy(s);
    cuEventDestroy(e);
    return ms * 1000.0f;
}

int main(int argc, char **argv)
{
    int at = 1;
    size_t mib = 128;
    if (argc > 2 && !strcmp(argv[1], "--mib")) {
        char *end;
        long v = strtol(argv[2], &end, 10);
        mib = *end || v <= 0 ? 0 : (size_t)v;
        at = 3;
    }
    int nm = argc - at;
    if (nm < 1 || nm > 2 || mib == 0) {
        fprintf(stderr, "usage: gpucheck_bench [--mib N] A.ptx [B.ptx]\n");
        return 2;
    }
    bytes = mib << 20;
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    module m[2];
    for (int i = 0; i < nm; i++) {
        CUmodule mod;
        char *ptx = read_file(argv[at + i]);
        CK(cuModuleLoadData(&mod, ptx));
        free(ptx);
        for (int f = 0; f < NF; f++)
            CK(cuModuleGetFunction(&m[i].f[f], mod, names[f]));
    }
    CK(cuMemAlloc(&d_a, bytes));
    CK(cuMemAlloc(&d_b, bytes));
    CK(cuMemAlloc(&d_c, bytes));
    CK(cuMemAlloc(&d_res, 16));
    CK(cuMemAlloc(&d_flags, (bytes >> 16) + 1));
    /* a: 1.0f everywhere; c: a copy; b: 2.0f (its two high bytes differ from a's in every
     * element: es 1 counts two bytes in four, es 4 every element) */
    CK(cuMemsetD32(d_a, 0x3f800000u, bytes / 4));
    CK(cuMemsetD32(d_c, 0x3f800000u, bytes / 4));
    CK(cuMemsetD32(d_b, 0x40000000u, bytes / 4));
    CK(cuCtxSynchronize());
    float idle[2] = {0, 0};
    for (int i = 0; i < nm; i++)
        idle[i] = idle_first_us(&m[i]);
    for (double t0 = now_ms(); now_ms() - t0 < 300;) { /* the clock up */
        for (int k = 0; k < 8; k++)
            launch(&m[0], 0);
        CK(cuCtxSynchronize());
    }
    printf("| case (%zu MiB) | %s µs | %s", mib, argv[at], nm > 1 ? "" : "GB/s |\n");
    if (nm > 1) printf("%s µs | GB/s, %s | GB/s, %s |\n", argv[at + 1], argv[at], argv[at + 1]);
    printf(nm > 1 ? "| --- | ---: | ---: | ---: | ---: |\n" : "| --- | ---: | ---: |\n");
    for (int c = 0; c < NCASES; c++) {
        float us[2] = {0, 0};
        for (int i = 0; i < nm; i++)
            us[i] = median_us(&m[i], c);
        printf("| %s | %.1f |", cases[c], us[0]);
        if (nm > 1) printf(" %.1f |", us[1]);
        for (int i = 0; i < nm; i++)
            printf(" %.0f |", (double)reads[c] * (double)bytes / (us[i] * 1e3));
        printf("\n");
    }
    printf("| idle first (bits, es 4, every word differs) | %.1f |", idle[0]);
    if (nm > 1) printf(" %.1f | | |", idle[1]);
    printf("\n");
    return 0;
}
