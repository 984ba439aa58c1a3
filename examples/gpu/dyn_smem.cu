/*
 * dyn_smem -- a 17-point 1-D stencil over 32M floats that stages each block's
 * tile plus a halo of 8 on each side in dynamic shared memory, so the launch's
 * shared size must be (blockDim.x + 16) * 4 bytes. Launched with a poor
 * configuration: 32 threads (50% halo overhead, and at most 32 blocks per SM).
 *
 * Policy (dyn_smem.yaml): block size, with shared = (BLOCK + 16) * 4 computed per
 * config. Each output is the same 17 fmaf in the same order whatever the block
 * size, so outputs are byte-identical.
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes out to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

#define RADIUS 8

__constant__ float c_w[2 * RADIUS + 1];

__global__ void stencil17_dyn(const float *__restrict__ in, float *__restrict__ out, int n)
{
    extern __shared__ float tile[]; /* blockDim.x + 2 * RADIUS floats */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x + RADIUS;
    tile[t] = in[min(i, n - 1)];
    if (threadIdx.x < RADIUS) { /* needs blockDim.x >= RADIUS */
        tile[threadIdx.x] = in[max(i - RADIUS, 0)];
        tile[t + blockDim.x] = in[min(i + (int)blockDim.x, n - 1)];
    }
    __syncthreads();
    if (i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -RADIUS; k <= RADIUS; ++k) acc = fmaf(c_w[k + RADIUS], tile[t + k], acc);
        out[i] = acc;
    }
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 25, iters = 30;
    const dim3 block(32), grid((n + 31) / 32); /* the program's own (poor) configuration */
    const size_t shared = (block.x + 2 * RADIUS) * sizeof(float);
    std::vector<float> h(n), w(2 * RADIUS + 1);
    fill_real(h, 6001);
    fill_real(w, 6002, 0.01, 0.1);
    CK(cudaMemcpyToSymbol(c_w, w.data(), w.size() * sizeof(float)));
    float *x, *y;
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMemcpy(x, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        stencil17_dyn<<<grid, block, shared, s>>>(x, y, n);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=%zu\n", grid.x, grid.y, grid.z, block.x, block.y, block.z,
           shared);

    std::vector<float> ho(n);
    CK(cudaMemcpy(ho.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k += 77777) {
        float acc = 0.0f;
        for (int j = -RADIUS; j <= RADIUS; ++j) acc = fmaf(w[j + RADIUS], h[std::min(std::max(k + j, 0), n - 1)], acc);
        if (std::fabs(ho[k] - acc) > 1e-5f) {
            fprintf(stderr, "out[%d] = %.9g, expected %.9g\n", k, ho[k], acc);
            return 1;
        }
    }
    out.put(ho);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
