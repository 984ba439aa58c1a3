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
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <cuda_runtime.h>

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

static double now_s()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
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
