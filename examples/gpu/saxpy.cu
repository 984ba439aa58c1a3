/*
 * saxpy -- a grid-stride z = a*x + y over 32M floats, launched with a poor
 * configuration: 32 blocks of 128 threads (4096 threads for 33.5M elements, so
 * every thread loops 8192 times and most of the GPU idles).
 *
 * Policy (saxpy.yaml): block size x blocks per SM; nothing to protect, since the
 * kernel writes z only and reads x, y. Every launch computes the same z, so the
 * outputs of a tuned and an untuned run are byte-identical.
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes z to argv[1].
 */
#include "../../tests/gpu/common.h"

extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, const float *__restrict__ y,
                                 float *__restrict__ z)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        z[i] = a * x[i] + y[i];
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 25, iters = 30;
    const dim3 grid(32), block(128); /* the program's own (poor) configuration */
    std::vector<float> hx(n), hy(n);
    fill_real(hx, 1001);
    fill_real(hy, 1002);
    float *x, *y, *z;
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMalloc(&z, (size_t)n * 4));
    CK(cudaMemcpy(x, hx.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        saxpy<<<grid, block, 0, s>>>(n, 2.5f, x, y, z);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    out.dev(z, n);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(z));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
