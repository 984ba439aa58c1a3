/*
 * atomic_rowsum -- row sums of a 4096 x 16384 float matrix: blocks cover chunks of
 * a row and add their partial sum into out[row] with a float atomicAdd, so the
 * program zeroes out before every launch. Launched with a poor configuration:
 * grid (1, rows), block 32 (one warp per row, 512 sequential loads per thread).
 *
 * Policy (atomic_rowsum.yaml): block size x blocks per row; out needs
 * reset_to_zero (every benchmark run adds into it), and verify with a tolerance.
 * Float atomics add in a different order every run, so outputs are compared
 * within a tolerance, not byte for byte: run.sh marks this program so.
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes out to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

__global__ void row_sum_atomic(const float *__restrict__ x, float *__restrict__ out, int rows, int cols)
{
    __shared__ float warp_sums[32];
    int row = blockIdx.y;
    float acc = 0.0f;
    if (row < rows) {
        const float *p = x + (size_t)row * cols;
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) acc += p[c];
    }
    /* Block reduction: any blockDim.x that is a multiple of 32. */
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < nwarps ? warp_sums[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (lane == 0 && row < rows) atomicAdd(&out[row], acc);
    }
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int rows = 4096, cols = 16384, iters = 30;
    const size_t N = (size_t)rows * cols;
    const dim3 grid(1, rows), block(32); /* the program's own (poor) configuration */
    std::vector<float> h(N);
    fill_real(h, 3001);
    for (auto &v : h) v = v < 0 ? -v : v; /* positive: sums without cancellation */
    float *x, *o;
    CK(cudaMalloc(&x, N * 4));
    CK(cudaMalloc(&o, rows * 4));
    CK(cudaMemcpy(x, h.data(), N * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        CK(cudaMemsetAsync(o, 0, rows * 4, s));
        tm.before(i);
        row_sum_atomic<<<grid, block, 0, s>>>(x, o, rows, cols);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    /* Check against a double-precision host sum. */
    std::vector<float> ho(rows);
    CK(cudaMemcpy(ho.data(), o, rows * 4, cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
        double ref = 0;
        for (int c = 0; c < cols; ++c) ref += h[(size_t)r * cols + c];
        if (std::abs(ho[r] - ref) > 1e-4 * ref) {
            fprintf(stderr, "row %d: sum %.7g, reference %.7g\n", r, ho[r], ref);
            return 1;
        }
    }
    out.put(ho);
    CK(cudaFree(x));
    CK(cudaFree(o));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
