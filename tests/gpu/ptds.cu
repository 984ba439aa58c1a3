/*
 * ptds -- built with `nvcc --default-stream per-thread`.
 *
 * The runtime then launches through the driver's _ptsz entry points
 * (cuLaunchKernel_ptsz), where stream 0 means the calling thread's default
 * stream. Four host threads each launch a chain of kernels on stream 0 (their own
 * per-thread stream) with <<<>>> and cudaLaunchKernel; the main thread also
 * launches on cudaStreamPerThread and on cudaStreamLegacy explicitly.
 *
 * Checks: every CUDA call's return code; outputs to argv[1]; prints LAUNCHES n.
 */
#include "common.h"

#include <thread>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "build ptds.cu with --default-stream per-thread"
#endif

template <typename T> __global__ void step(T *v, T mul, T add, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * mul + add;
}

extern "C" __global__ void mix_neighbours(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0.5f * in[i] + 0.25f * in[(i + 1) % n] + 0.25f * in[(i + n - 1) % n];
}

static const int kThreads = 4, kIters = 25, kN = 1 << 18;

static void worker(int t, float *a, float *b, double *d)
{
    for (int it = 0; it < kIters; ++it) {
        step<float><<<(kN + 255) / 256, 256>>>(a, 0.999f, 0.001f * (t + 1), kN); /* stream 0 = per-thread */
        LAUNCHED();
        mix_neighbours<<<(kN + 127) / 128, 128, 0, 0>>>(a, b, kN);
        LAUNCHED();
        int n = kN;
        float mul = 1.0001f, add = -0.0002f;
        void *args[] = {&b, &mul, &add, &n};
        CK_LAUNCH(cudaLaunchKernel((const void *)step<float>, dim3((kN + 511) / 512), dim3(512), args, 0, 0));
        std::swap(a, b);
        step<double><<<(kN + 255) / 256, 256>>>(d, 0.99, 0.01 * t, kN);
        LAUNCHED();
    }
    CK(cudaStreamSynchronize(0));
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    CK(cudaSetDevice(0));
    std::vector<float *> a(kThreads), b(kThreads);
    std::vector<double *> d(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        std::vector<float> h(kN);
        std::vector<double> hd(kN);
        fill_real(h, 100 + t);
        fill_real(hd, 200 + t);
        CK(cudaMalloc(&a[t], kN * 4));
        CK(cudaMalloc(&b[t], kN * 4));
        CK(cudaMalloc(&d[t], kN * 8));
        CK(cudaMemcpy(a[t], h.data(), kN * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d[t], hd.data(), kN * 8, cudaMemcpyHostToDevice));
    }
    std::vector<std::thread> th;
    for (int t = 0; t < kThreads; ++t) th.emplace_back(worker, t, a[t], b[t], d[t]);
    for (auto &x : th) x.join();
    /* kIters is odd: after the swaps the latest values are in b[t]. */
    static_assert(kIters % 2 == 1, "kIters must be odd");

    /* Main thread: explicit per-thread and legacy stream handles. */
    step<float><<<(kN + 255) / 256, 256, 0, cudaStreamPerThread>>>(b[0], 2.0f, 1.0f, kN);
    LAUNCHED();
    CK(cudaStreamSynchronize(cudaStreamPerThread));
    step<float><<<(kN + 255) / 256, 256, 0, cudaStreamLegacy>>>(b[1], -1.0f, 0.5f, kN);
    LAUNCHED();
    CK(cudaDeviceSynchronize());

    for (int t = 0; t < kThreads; ++t) {
        out.dev(b[t], kN);
        out.dev(d[t], kN);
        CK(cudaFree(a[t]));
        CK(cudaFree(b[t]));
        CK(cudaFree(d[t]));
    }
    out.close();
    finish();
    return 0;
}
