/*
 * tied_pair -- y = a*x + b over 32M floats with a grid-stride loop, launched 30 times
 * as <<<16, 128>>>. The kernel takes an int `tag` that it never reads.
 *
 * Its policy (tied_pair.yaml) is a deliberately tied pair (issue 26, agreement on
 * near-ties): two configs with the same grid and block that differ only in the `tag`
 * they pass, so both run the same machine code on the same launch. Their medians differ
 * by measurement noise alone; every process must still pick the same one (the tie rule:
 * the program's own config first, then policy order), which tests/gpu/agreement.sh
 * counts over 10 fresh processes.
 *
 * Writes y only (x is read): every config gives the same bytes.
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS, FIRST_MS; writes y to
 * argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

extern "C" __global__ void tied_scale(const float *__restrict__ x, float *__restrict__ y, float a, float b, int n,
                                      int tag)
{
    (void)tag; /* on purpose: a scalar that does not change the work */
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + b;
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 25, iters = 30;
    const dim3 grid(16), block(128); /* the program's own (poor) configuration */
    std::vector<float> hx(n);
    fill_real(hx, 9001);
    float *x, *y;
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMemcpy(x, hx.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        tied_scale<<<grid, block, 0, s>>>(x, y, 1.5f, -0.25f, n, 0);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    std::vector<float> ho(n);
    CK(cudaMemcpy(ho.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k += 999983) {
        float v = fmaf(1.5f, hx[k], -0.25f);
        if (v != ho[k]) {
            fprintf(stderr, "y[%d] = %.9g, expected %.9g\n", k, ho[k], v);
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
