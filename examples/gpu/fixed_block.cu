/*
 * fixed_block -- a 3-point smoothing stencil whose shared tile is sized for
 * exactly 256 threads (a common hand-written pattern): it is correct only when
 * blockDim.x == 256. With 512 or 1024 threads, threads alias each other's tile
 * slots; with 64 or 128, the right halo slot is never loaded. Neither faults (the
 * tile index is masked), both give wrong numbers.
 *
 * Policy (fixed_block.yaml) offers 64..1024 threads and declares `verify: [y]`:
 * every config but 256 must be rejected by verification, and the winner is the
 * program's own config. The program launches it correctly (256 threads).
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes y to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

#define TILE 256

__global__ void smooth_tile256(const float *__restrict__ x, float *__restrict__ y, int n)
{
    __shared__ float s[TILE + 2];
    int t = threadIdx.x & (TILE - 1); /* assumes blockDim.x == TILE */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[t + 1] = x[min(i, n - 1)];
    if (t == 0) s[0] = x[max(i - 1, 0)];
    if (t == TILE - 1) s[TILE + 1] = x[min(i + 1, n - 1)];
    __syncthreads();
    if (i < n) y[i] = 0.25f * s[t] + 0.5f * s[t + 1] + 0.25f * s[t + 2];
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 25, iters = 30;
    const dim3 block(TILE), grid((n + TILE - 1) / TILE); /* correct, and the only correct one */
    std::vector<float> h(n);
    fill_real(h, 5001);
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
        smooth_tile256<<<grid, block, 0, s>>>(x, y, n);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    std::vector<float> ho(n);
    CK(cudaMemcpy(ho.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k += 65537) {
        float l = h[k > 0 ? k - 1 : 0], r = h[k < n - 1 ? k + 1 : n - 1];
        float ref = 0.25f * l + 0.5f * h[k] + 0.25f * r;
        if (std::fabs(ho[k] - ref) > 1e-6f * (std::fabs(ref) + 1.0f)) {
            fprintf(stderr, "y[%d] = %.9g, expected %.9g\n", k, ho[k], ref);
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
