/*
 * blocked_lu -- an LU decomposition (no pivoting) of a 1024 x 1024 diagonally dominant
 * matrix, right-looking: for each step k one launch scales column k below the pivot and
 * one updates the trailing matrix, 2048 launches. Both kernels cover the whole matrix with
 * an exact grid of 16 x 16 tiles and no bounds check (each thread tests whether its cell is
 * in the step's part): a config that keeps the grid and grows the tile reaches rows past
 * the end of the matrix (an illegal address), and k is a key part, a new key at every step.
 * A fault family for the tuner (docs/tuning.md), shaped like PolyBench's lu.
 *
 * Prints TOTAL_MS (GPU time of the factorisation) and LAUNCHES; checks L*U against the
 * matrix on sampled entries (exit 1 if off); writes the factors to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

__global__ void lu_scale(float *__restrict__ a, int n, int k)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c == k && r > k) a[(size_t)r * n + k] /= a[(size_t)k * n + k]; /* no bounds check */
}

__global__ void lu_update(float *__restrict__ a, int n, int k)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    float l = a[(size_t)r * n + k]; /* no bounds check: the grid is exactly n x n */
    if (r > k && c > k) a[(size_t)r * n + c] -= l * a[(size_t)k * n + c];
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1024;
    std::vector<float> h((size_t)n * n);
    fill_real(h, 77);
    for (int i = 0; i < n; ++i)
        h[(size_t)i * n + i] = (float)n; /* diagonally dominant: stable without pivoting */
    float *a;
    CK(cudaMalloc(&a, h.size() * 4));
    CK(cudaMemcpy(a, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    const dim3 block(16, 16), grid(n / 16, n / 16);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int k = 0; k < n - 1; ++k) {
        lu_scale<<<grid, block>>>(a, n, k);
        LAUNCHED();
        lu_update<<<grid, block>>>(a, n, k);
        LAUNCHED();
    }
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("TOTAL_MS %.6f\n", ms);
    std::vector<float> f(h.size());
    CK(cudaMemcpy(f.data(), a, f.size() * 4, cudaMemcpyDeviceToHost));
    for (int s = 0; s < 64; ++s) { /* (L U)[i][j] against the matrix at 64 entries */
        int i = (int)(xmt_mix(2 * s) % n), j = (int)(xmt_mix(2 * s + 1) % n);
        double acc = 0;
        for (int t = 0; t <= std::min(i, j); ++t)
            acc += (t == i ? 1.0 : f[(size_t)i * n + t]) * f[(size_t)t * n + j];
        if (std::fabs(acc - h[(size_t)i * n + j]) > 1e-2 * n) {
            fprintf(stderr, "blocked_lu: (LU)[%d][%d] = %g, expected %g\n", i, j, acc,
                    (double)h[(size_t)i * n + j]);
            return 1;
        }
    }
    out.put(f);
    CK(cudaFree(a));
    out.close();
    finish();
    return 0;
}
