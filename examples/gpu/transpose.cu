/*
 * transpose -- a naive out-of-place transpose of an 8192 x 8192 float matrix, with
 * a 2-D grid launched with block (1, 32): each warp reads 32 different rows (32
 * separate memory segments for 128 useful bytes) and writes one column segment.
 * The block shape decides how well reads and writes coalesce.
 *
 * Policy (transpose.yaml): (block.x, block.y) over powers of two with 32..1024
 * threads, grid = cdiv(cols, BX) x cdiv(rows, BY). Each element is copied, so every
 * shape gives the same bytes.
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes out to argv[1].
 */
#include "../../tests/gpu/common.h"

__global__ void transpose_naive(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int rows = 8192, cols = 8192, iters = 30;
    const size_t N = (size_t)rows * cols;
    const dim3 block(1, 32); /* the program's own (poor) shape */
    const dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    std::vector<float> h(N);
    fill_real(h, 2001);
    float *in, *o;
    CK(cudaMalloc(&in, N * 4));
    CK(cudaMalloc(&o, N * 4));
    CK(cudaMemcpy(in, h.data(), N * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        transpose_naive<<<grid, block, 0, s>>>(in, o, rows, cols);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    /* Spot-check the transpose itself on the host. */
    std::vector<float> ho(N);
    CK(cudaMemcpy(ho.data(), o, N * 4, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < N; k += 999983) {
        size_t r = k / cols, c = k % cols;
        if (ho[c * rows + r] != h[k]) {
            fprintf(stderr, "transpose wrong at (%zu, %zu)\n", r, c);
            return 1;
        }
    }
    out.put(ho);
    CK(cudaFree(in));
    CK(cudaFree(o));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
