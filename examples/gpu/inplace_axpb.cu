/*
 * inplace_axpb -- y = a*y + b in place over 32M floats (grid-stride), launched 30
 * times with a poor configuration: 64 blocks of 64 threads.
 *
 * Each launch changes y, so every benchmark run would change the program's
 * result: the policy (inplace_axpb.yaml) declares `restore: [y]`, so the tuner
 * snapshots y before tuning and restores it before every run and before the
 * real launch. The final y after 30 launches is byte-identical with and without
 * tuning only if that works (a = 0.999, so each extra application shows).
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes y to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

extern "C" __global__ void axpb_inplace(float *y, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * y[i] + b;
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 25, iters = 30;
    const dim3 grid(64), block(64); /* the program's own (poor) configuration */
    std::vector<float> h(n);
    fill_real(h, 4001, 1.0, 4.0);
    float *y;
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMemcpy(y, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        axpb_inplace<<<grid, block, 0, s>>>(y, 0.999f, 0.001f, n);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    /* Check a few elements against the host recurrence (same float operations). */
    std::vector<float> ho(n);
    CK(cudaMemcpy(ho.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k += 1000003) {
        float v = h[k];
        for (int i = 0; i < iters; ++i) v = fmaf(0.999f, v, 0.001f);
        if (v != ho[k]) {
            fprintf(stderr, "y[%d] = %.9g after %d launches, expected %.9g\n", k, ho[k], iters, v);
            return 1;
        }
    }
    out.put(ho);
    CK(cudaFree(y));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
