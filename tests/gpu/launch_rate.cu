/*
 * launch_rate.cu -- host launch rate of a tiny empty kernel, for tests/gpu/launch_rate.sh.
 *
 *   launch_rate [LAUNCHES [WARMUP]]        (defaults 200000 and 20000)
 *
 * Launches tiny<<<1, 32>>>(p) WARMUP times and synchronises (the first launch is where the
 * shim, if loaded, sees the kernel and, in tune mode, settles its key), then LAUNCHES times
 * back to back on the legacy default stream, timed with the host clock (CLOCK_MONOTONIC)
 * from before the first launch to after the final cudaDeviceSynchronize. The kernel does
 * nothing (its store is never taken), so the figure is the launch path: the runtime, the
 * driver and, when LD_PRELOAD names it, xmatune. It is extern "C" so that policies and
 * XMATUNE_EXCLUDE name it as "tiny". Prints one line:
 *
 *   launch_rate launches=N loop_s=L total_s=T launches_per_s=R host_us_per_launch=U
 *
 * (R = N / T; U = L / N, the loop alone, before the final sync: the host cost per launch
 * while the queue is not full) and "LAUNCHES n" as the other suite programs do.
 * Exits 2 with a message on any CUDA error.
 *
 *   launch_rate --paired BLOCKS PER_BLOCK [KERNEL [vary]]    (under the shim only)
 *
 * The same comparison inside one process, so that what differs between processes (this
 * machine's launch rate moves by 10-20 % from one process to the next) cancels: the
 * driver's cuLaunchKernel as the program gets it (cudaGetDriverEntryPointByVersion, which
 * the shim wraps) against the real driver's own entry point (xmatune_driver_entry), in
 * BLOCKS blocks of PER_BLOCK launches on the legacy stream, alternating ABBA, each block
 * timed by the host clock around its loop and its synchronize. KERNEL is tiny (the
 * default) or tiny_w, which writes p[threadIdx.x] = threadIdx.x: a kernel whose outputs
 * auto protection can tell, so that XMATUNE_AUTO=1 decides its key (tiny writes nothing,
 * and auto leaves such a key untuned). Its handle comes from cudaGetKernel (a CUkernel of
 * the library the runtime loaded, whose image the shim kept: the trial helper can have
 * it), else from cudaGetFuncBySymbol (a CUfunction the shim cannot trace to an image).
 * With vary, p moves by 32 ints at every launch (64 places in turn): the arguments change
 * at every launch, as a program's tensors do. Prints the medians and the median of the
 * per-pair ratios real / wrapped (the wrapped launch rate as a fraction of the real one):
 *
 *   paired blocks=B per_block=N wrapped_us=.. real_us=.. ratio=.. kernel=K vary=0|1 handle=H
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <algorithm>
#include <string_view>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#define CK(call)                                                                      \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(e_), (int)e_);                                 \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

extern "C" __global__ void tiny(int *p)
{
    if (p != nullptr && threadIdx.x == 0xFFFFFFFFu) /* never true: the kernel is empty */
        *p = 1;
}

extern "C" __global__ void tiny_w(int *p)
{
    p[threadIdx.x] = (int)threadIdx.x;
}

static double now_s()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Host µs per launch of one block: the loop and its synchronize. With vary, the pointer
 * argument moves by 32 ints at every launch (p has room for 64 such places). */
static double block(launch_fn fn, CUfunction f, int *p, bool vary, long n)
{
    int *q = p;
    void *args[] = {&q};
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        if (vary) q = p + (i & 63) * 32;
        if (fn(f, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr) != CUDA_SUCCESS) {
            fprintf(stderr, "launch_rate: cuLaunchKernel failed\n");
            exit(2);
        }
    }
    CK(cudaDeviceSynchronize());
    return (now_s() - t0) * 1e6 / (double)n;
}

static int paired(long blocks, long per, std::string_view kernel, bool vary)
{
    typedef void *(*entry_fn)(const char *, int, unsigned long long);
    entry_fn entry = (entry_fn)dlsym(RTLD_DEFAULT, "xmatune_driver_entry");
    if (!entry) {
        fprintf(stderr, "launch_rate --paired: not under the shim (no xmatune_driver_entry)\n");
        return 3;
    }
    int *p = nullptr;
    CK(cudaMalloc(&p, 64 * 32 * sizeof(int)));
    CK(cudaMemset(p, 0, 64 * 32 * sizeof(int)));
    const void *sym = kernel == "tiny_w" ? (const void *)tiny_w : (const void *)tiny;
    CUfunction f = nullptr;
    const char *handle = "cudaGetKernel";
#if CUDART_VERSION >= 12050
    cudaKernel_t kern;
    if (cudaGetKernel(&kern, sym) == cudaSuccess) f = (CUfunction)kern;
#endif
    if (!f) {
        cudaFunction_t fn;
        CK(cudaGetFuncBySymbol(&fn, sym));
        f = (CUfunction)fn;
        handle = "cudaGetFuncBySymbol";
    }
    launch_fn wrapped = nullptr, real = (launch_fn)entry("cuLaunchKernel", 12000, 0);
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&wrapped, 12000,
                                        cudaEnableDefault, &q));
    if (!wrapped || !real || wrapped == real) {
        fprintf(stderr, "launch_rate --paired: wrapped %p real %p: nothing to compare\n",
                (void *)wrapped, (void *)real);
        return 3;
    }
    block(wrapped, f, p, vary, per); /* warm both paths, and let the shim see the kernel */
    block(real, f, p, vary, per);
    std::vector<double> w, r, ratio;
    for (long b = 0; b < blocks; b++) {
        double a, c;
        if (b % 2) { /* ABBA: neither path always goes first */
            c = block(real, f, p, vary, per);
            a = block(wrapped, f, p, vary, per);
        } else {
            a = block(wrapped, f, p, vary, per);
            c = block(real, f, p, vary, per);
        }
        w.push_back(a);
        r.push_back(c);
        ratio.push_back(c / a);
    }
    CK(cudaFree(p));
    printf("paired blocks=%ld per_block=%ld wrapped_us=%.4f real_us=%.4f ratio=%.4f kernel=%.*s "
           "vary=%d handle=%s\n",
           blocks, per, median(w), median(r), median(ratio), (int)kernel.size(), kernel.data(),
           vary ? 1 : 0, handle);
    printf("LAUNCHES %ld\n", 2 * per * (blocks + 1));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::string_view(argv[1]) == "--paired")
        return paired(argc > 2 ? atol(argv[2]) : 40, argc > 3 ? atol(argv[3]) : 5000,
                      argc > 4 ? std::string_view(argv[4]) : std::string_view("tiny"),
                      argc > 5 && std::string_view(argv[5]) == "vary");
    long n = argc > 1 ? atol(argv[1]) : 200000;
    long warm = argc > 2 ? atol(argv[2]) : 20000;
    if (n < 1 || warm < 0) {
        fprintf(stderr, "usage: launch_rate [LAUNCHES [WARMUP]]\n");
        return 2;
    }
    int *p = nullptr;
    CK(cudaMalloc(&p, sizeof(int)));
    CK(cudaMemset(p, 0, sizeof(int)));
    for (long i = 0; i < warm; i++)
        tiny<<<1, 32>>>(p);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    double t0 = now_s();
    for (long i = 0; i < n; i++)
        tiny<<<1, 32>>>(p);
    double t1 = now_s();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    double t2 = now_s();

    int h = -1;
    CK(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost));
    if (h != 0) {
        fprintf(stderr, "launch_rate: the kernel wrote %d\n", h);
        return 2;
    }
    CK(cudaFree(p));
    printf("launch_rate launches=%ld loop_s=%.6f total_s=%.6f launches_per_s=%.0f "
           "host_us_per_launch=%.4f\n",
           n, t1 - t0, t2 - t0, (double)n / (t2 - t0), (t1 - t0) * 1e6 / (double)n);
    printf("LAUNCHES %ld\n", n + warm);
    return 0;
}
