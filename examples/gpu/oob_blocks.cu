/*
 * oob_blocks -- y = a*x + 1 over 16M floats by a kernel with no bounds check: each
 * thread handles `items` elements, one grid (gridDim.x * blockDim.x) apart, and the
 * kernel is correct only when grid x block x items is exactly n, as the program
 * launches it (16384 blocks of 256 threads, 4 items each).
 *
 * Policy (oob_blocks.yaml): a space of configs that keep grid x block x items = n
 * (correct), after two mistakes that keep the program's grid while the block and the
 * item count grow: they read and write 15n and 63n elements past the end of x and y
 * (about 1 and 4 GiB past 64 MiB buffers), an illegal address on the GPU. Run inline
 * (XMATUNE_TRIALS=inline) the first mistake breaks the program's context for good and
 * the program dies at its first launch (exit 2); with trials in the helper process the
 * outputs must be byte-identical to an untuned run, the first mistake logged `fault` and
 * the second `skipped_after_fault` (its fault family: it reaches further on the same grid).
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes y to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

__global__ void scale_items(const float *__restrict__ x, float *__restrict__ y, float a, int items)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < items; ++k, i += stride) /* no bounds check: the launch must fit n */
        y[i] = fmaf(a, x[i], 1.0f);
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 24, iters = 30, items = 4;
    const float a = 1.5f;
    const dim3 block(256), grid(n / (256 * items)); /* exactly n elements: the only safe shape */
    std::vector<float> h(n);
    fill_real(h, 2401);
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
        scale_items<<<grid, block, 0, s>>>(x, y, a, items);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    std::vector<float> ho(n);
    CK(cudaMemcpy(ho.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k += 4099) {
        float ref = std::fma(a, h[k], 1.0f); /* fused on both sides: exact */
        if (ho[k] != ref) {
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
