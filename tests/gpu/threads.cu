/*
 * threads -- 8 host threads, each with its own stream, launching many kernels at
 * once (three kernels, one of them a template with two instantiations), to
 * exercise the shim's first-sight and per-launch paths under concurrency.
 *
 * Checks: every CUDA call's return code; outputs to argv[1]; prints LAUNCHES n.
 */
#include "common.h"

#include <thread>

template <int K> __global__ void rotate_mix(unsigned *v, unsigned salt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned x = v[i] ^ salt;
        x = (x << K) | (x >> (32 - K));
        v[i] = x * 2654435761u + (unsigned)i;
    }
}

extern "C" __global__ void relax(float *a, const float *b, float w, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = (1.0f - w) * a[i] + w * b[(i * 7) % n];
}

__global__ void accumulate(double *acc, const float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += (double)a[i];
}

static const int kThreads = 8, kIters = 100, kN = 1 << 16;

static void worker(int t, unsigned *u, float *a, float *b, double *acc)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int grid = (kN + 255) / 256;
    for (int it = 0; it < kIters; ++it) {
        rotate_mix<5><<<grid, 256, 0, s>>>(u, 0x9e3779b9u * (unsigned)(t + 1) + it, kN);
        LAUNCHED();
        rotate_mix<13><<<grid / 2, 512, 0, s>>>(u, 0x85ebca6bu ^ (unsigned)it, kN);
        LAUNCHED();
        relax<<<grid * 2, 128, 0, s>>>(a, b, 0.125f + 0.01f * t, kN);
        LAUNCHED();
        accumulate<<<grid, 256, 0, s>>>(acc, a, kN);
        LAUNCHED();
        if (it % 10 == 9) std::swap(a, b);
    }
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    CK(cudaSetDevice(0));
    std::vector<unsigned *> u(kThreads);
    std::vector<float *> a(kThreads), b(kThreads);
    std::vector<double *> acc(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        std::vector<unsigned> hu(kN);
        std::vector<float> ha(kN), hb(kN);
        std::vector<double> hacc(kN);
        fill_int(hu, 300 + t, 0xFFFFFFFEull);
        fill_real(ha, 400 + t);
        fill_real(hb, 500 + t);
        fill_real(hacc, 600 + t);
        CK(cudaMalloc(&u[t], kN * 4));
        CK(cudaMalloc(&a[t], kN * 4));
        CK(cudaMalloc(&b[t], kN * 4));
        CK(cudaMalloc(&acc[t], kN * 8));
        CK(cudaMemcpy(u[t], hu.data(), kN * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(a[t], ha.data(), kN * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b[t], hb.data(), kN * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(acc[t], hacc.data(), kN * 8, cudaMemcpyHostToDevice));
    }
    std::vector<std::thread> th;
    for (int t = 0; t < kThreads; ++t) th.emplace_back(worker, t, u[t], a[t], b[t], acc[t]);
    for (auto &x : th) x.join();
    CK(cudaDeviceSynchronize());
    for (int t = 0; t < kThreads; ++t) {
        out.dev(u[t], kN);
        out.dev(a[t], kN);
        out.dev(b[t], kN);
        out.dev(acc[t], kN);
        CK(cudaFree(u[t]));
        CK(cudaFree(a[t]));
        CK(cudaFree(b[t]));
        CK(cudaFree(acc[t]));
    }
    out.close();
    finish();
    return 0;
}
