/*
 * row_softmax -- softmax of each row of an 8192 x 4096 float matrix, one block per row,
 * launched 30 times with 32 threads per block (one warp walks each 4096-wide row).
 *
 * Each block reduces its row twice (the maximum, then the sum of exponentials): every
 * thread accumulates the columns c = t, t + B, t + 2B, ... of the row (B the block size),
 * then the block adds the threads' partial sums by warp shuffles and across warps. The
 * block size thus decides the order of the additions: another block gives sums, and so
 * outputs, that differ from the program's in the last bits (the maximum is exact in any
 * order). Issue 28: a kernel whose candidates differ from its own config only by float
 * rounding, tuned only when the user allows a tolerance (its policy, row_softmax.yaml,
 * declares one; with no policy, XMATUNE_AUTO_TOLERANCE).
 *
 * Checks sampled rows against a softmax computed on the host in double precision, and
 * writes y to argv[1]. Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS,
 * FIRST_MS.
 */
#include "../../tests/gpu/common.h"

#include <cmath>

/* The block-wide sum (op 0) or maximum (op 1) of v, returned to every thread. The block
 * size is a multiple of 32; red holds one value per warp. */
__device__ float block_reduce(float v, int op, float *red)
{
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = op ? fmaxf(v, w) : v + w;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
    __syncthreads(); /* red may still be read from the previous reduction */
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? red[lane] : (op ? -INFINITY : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            float w = __shfl_xor_sync(0xffffffffu, v, o);
            v = op ? fmaxf(v, w) : v + w;
        }
        if (lane == 0) red[0] = v;
    }
    __syncthreads();
    return red[0];
}

__global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int rows, int cols)
{
    __shared__ float red[32];
    int r = blockIdx.x;
    if (r >= rows) return; /* the whole block: the barriers below stay uniform */
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_reduce(m, 1, red);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
    s = block_reduce(s, 0, red);
    float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int rows = 8192, cols = 4096, iters = 30;
    const size_t N = (size_t)rows * cols;
    const dim3 grid(rows), block(32); /* the program's own (poor) configuration */
    std::vector<float> h(N);
    fill_real(h, 7001, 0.25, 4.0);
    float *x, *y;
    CK(cudaMalloc(&x, N * 4));
    CK(cudaMalloc(&y, N * 4));
    CK(cudaMemcpy(x, h.data(), N * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        softmax_rows<<<grid, block, 0, s>>>(x, y, rows, cols);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    std::vector<float> ho(N);
    CK(cudaMemcpy(ho.data(), y, N * 4, cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r += 997) {
        const float *xr = &h[(size_t)r * cols];
        double m = -INFINITY, sum = 0;
        for (int c = 0; c < cols; ++c) m = std::max(m, (double)xr[c]);
        for (int c = 0; c < cols; ++c) sum += std::exp((double)xr[c] - m);
        for (int c = 0; c < cols; c += 61) {
            double want = std::exp((double)xr[c] - m) / sum, got = ho[(size_t)r * cols + c];
            if (std::fabs(got - want) > 1e-4 * want) {
                fprintf(stderr, "y[%d][%d] = %.9g, expected %.9g\n", r, c, got, want);
                return 1;
            }
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
