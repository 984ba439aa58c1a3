/*
 * common.h -- shared helpers of the GPU suite's CUDA programs.
 *
 * Every program of the suite:
 *   - checks the return code of every CUDA call (CK for the runtime, CU for the
 *     driver API) and exits with status 2 and a message naming the call otherwise;
 *   - fills its inputs with deterministic pseudo-random, non-zero data (fill_*),
 *     so that a run with and a run without the shim compute the same bytes;
 *   - counts the kernel launches it makes itself (LAUNCHED() after each launch)
 *     and prints "LAUNCHES <n>" on stdout at the end (finish());
 *   - writes the raw bytes of all its outputs, in a fixed order, to the file named
 *     by argv[1] (class Out), so that the two runs can be compared with cmp.
 *
 * Define XMT_DRIVER_ONLY before including it in a program that uses the driver
 * API only (no runtime).
 */
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef XMT_DRIVER_ONLY
#include <cuda_runtime.h>
#endif

/* The number of kernel launches this program made through the CUDA API. */
static std::atomic<long> g_launches{0};

#ifndef XMT_DRIVER_ONLY
#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t ck_e_ = (call);                                                                \
        if (ck_e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorString(ck_e_), (int)ck_e_);                                        \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

/* After a <<<>>> launch: check that it was accepted, and count it. */
#define LAUNCHED()                                                                                 \
    do {                                                                                           \
        CK(cudaGetLastError());                                                                    \
        g_launches.fetch_add(1, std::memory_order_relaxed);                                        \
    } while (0)

/* Around a launch call that returns cudaError_t (cudaLaunchKernel, ...Ex). */
#define CK_LAUNCH(call)                                                                            \
    do {                                                                                           \
        CK(call);                                                                                  \
        g_launches.fetch_add(1, std::memory_order_relaxed);                                        \
    } while (0)
#endif

/* splitmix64: a good 64-bit mix of a counter; the basis of every fill. */
static inline uint64_t xmt_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Non-zero floats in +-[lo, hi), deterministic in (seed, index). */
template <typename T>
static void fill_real(std::vector<T> &v, uint64_t seed, double lo = 0.25, double hi = 1.0)
{
    for (size_t i = 0; i < v.size(); ++i) {
        uint64_t r = xmt_mix(seed * 0x100000001B3ull + i);
        double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0,1) */
        double m = lo + (hi - lo) * u;
        v[i] = (T)((r & 1) ? -m : m);
    }
}

/* Non-zero integers in [1, mod] (mod > 0), deterministic in (seed, index). */
template <typename T> static void fill_int(std::vector<T> &v, uint64_t seed, uint64_t mod)
{
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = (T)(1 + xmt_mix(seed * 0x100000001B3ull + i) % mod);
}

/* The output file: raw bytes of every output, in program order. */
class Out
{
  public:
    explicit Out(const char *path) : path_(path)
    {
        f_ = fopen(path, "wb");
        if (!f_) {
            perror(path);
            exit(2);
        }
    }
    ~Out() { close(); }
    void put(const void *p, size_t n)
    {
        if (n && fwrite(p, 1, n, f_) != n) {
            perror(path_);
            exit(2);
        }
    }
    template <typename T> void put(const std::vector<T> &v) { put(v.data(), v.size() * sizeof(T)); }
#ifndef XMT_DRIVER_ONLY
    /* Copy count elements of device memory back and append them. */
    template <typename T> void dev(const T *d, size_t count)
    {
        std::vector<T> h(count);
        CK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
        put(h);
    }
#endif
    void close()
    {
        if (f_) {
            if (fclose(f_) != 0) {
                perror(path_);
                exit(2);
            }
            f_ = nullptr;
        }
    }

  private:
    const char *path_;
    FILE *f_ = nullptr;
};

static inline const char *out_path(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTPUT_FILE\n", argv[0]);
        exit(2);
    }
    return argv[1];
}

/* Print the launch count; the suite's run.sh reads this line. */
static inline void finish()
{
    printf("LAUNCHES %ld\n", g_launches.load());
    fflush(stdout);
}

#ifndef XMT_DRIVER_ONLY
/*
 * Timing of a loop of launches for the tuning programs: one event pair per
 * launch (the median ignores the first launch, which in tune mode includes the
 * benchmark) and one around the whole loop.
 */
class LoopTimer
{
  public:
    LoopTimer(int n, cudaStream_t s) : n_(n), s_(s), ev_(2 * (size_t)n + 2)
    {
        for (auto &e : ev_)
            CK(cudaEventCreate(&e));
    }
    ~LoopTimer()
    {
        for (auto &e : ev_)
            cudaEventDestroy(e);
    }
    void begin_loop() { CK(cudaEventRecord(ev_[2 * n_], s_)); }
    void end_loop() { CK(cudaEventRecord(ev_[2 * n_ + 1], s_)); }
    void before(int i) { CK(cudaEventRecord(ev_[2 * i], s_)); }
    void after(int i) { CK(cudaEventRecord(ev_[2 * i + 1], s_)); }
    /* Prints TIME_MS <median per launch>, TOTAL_MS <loop> and FIRST_MS. */
    void report()
    {
        CK(cudaStreamSynchronize(s_));
        std::vector<float> t(n_);
        for (int i = 0; i < n_; ++i)
            CK(cudaEventElapsedTime(&t[i], ev_[2 * i], ev_[2 * i + 1]));
        float total = 0;
        CK(cudaEventElapsedTime(&total, ev_[2 * n_], ev_[2 * n_ + 1]));
        float first = t[0];
        std::sort(t.begin(), t.end());
        float med = (n_ % 2) ? t[n_ / 2] : 0.5f * (t[n_ / 2 - 1] + t[n_ / 2]);
        printf("TIME_MS %.6f\nTOTAL_MS %.6f\nFIRST_MS %.6f\n", med, total, first);
    }

  private:
    int n_;
    cudaStream_t s_;
    std::vector<cudaEvent_t> ev_;
};
#endif
