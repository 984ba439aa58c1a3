/*
 * const_taps -- a 17-tap 1-D convolution over 16M floats (clamped at the ends) whose
 * filter taps live in __constant__ memory. The module's image initializes them to a
 * box filter; the program overwrites them (cudaMemcpyToSymbolAsync) before its first
 * launch with a smoothing filter (taps A), launches 15 times, then sets a derivative
 * filter (taps B) and launches 15 more times. Neither set is the image's, so a trial
 * that starts from the image's initial values computes other numbers.
 *
 * Launched with a poor configuration: 32 threads per block, one element per thread.
 * Policy (const_taps.yaml): block size. Every element is computed by the same sequence
 * of fused multiply-adds whatever the config, so tuned and untuned outputs are
 * byte-identical.
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes y after the
 * launches with taps A, then y after those with taps B, to argv[1].
 */
#include "../../tests/gpu/common.h"

#include <cmath>

#define RADIUS 8
#define NTAPS (2 * RADIUS + 1)

/* The image's initial values: a box filter, which the program never uses. */
__constant__ float taps[NTAPS] = {1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS,
                                  1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS,
                                  1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS, 1.f / NTAPS};

__global__ void conv1d_const(const float *__restrict__ x, float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < NTAPS; ++k)
        acc = fmaf(taps[k], x[min(max(i + k - RADIUS, 0), n - 1)], acc);
    y[i] = acc;
}

/* The host's reference for element i, the same fused operations in the same order. */
static float conv_ref(const std::vector<float> &x, const float *t, int i)
{
    const int n = (int)x.size();
    float acc = 0.0f;
    for (int k = 0; k < NTAPS; ++k)
        acc = std::fma(t[k], x[std::min(std::max(i + k - RADIUS, 0), n - 1)], acc);
    return acc;
}

/* Checks sampled elements of y against the host's reference; exits 1 on a difference. */
static void check(const std::vector<float> &x, const std::vector<float> &y, const float *t, const char *which)
{
    for (size_t i = 0; i < y.size(); i += 4093) {
        float ref = conv_ref(x, t, (int)i);
        if (std::fabs(y[i] - ref) > 1e-6f * (std::fabs(ref) + 1.0f)) {
            fprintf(stderr, "taps %s: y[%zu] = %.9g, expected %.9g\n", which, i, y[i], ref);
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 24, iters = 30;
    const dim3 block(32), grid((n + 31) / 32); /* the program's own (poor) configuration */
    float ta[NTAPS], tb[NTAPS], sum = 0.0f;
    for (int k = 0; k < NTAPS; ++k) { /* A: a Gaussian, sigma 3, normalized; B: a derivative */
        ta[k] = std::exp(-(float)((k - RADIUS) * (k - RADIUS)) / 18.0f);
        sum += ta[k];
        tb[k] = (float)(k - RADIUS) / (float)(RADIUS * (RADIUS + 1));
    }
    for (int k = 0; k < NTAPS; ++k)
        ta[k] /= sum;
    std::vector<float> h(n);
    fill_real(h, 3301);
    float *x, *y;
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMemcpy(x, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* On the launches' stream: ordered with them (the legacy stream would not be). */
    CK(cudaMemcpyToSymbolAsync(taps, ta, sizeof ta, 0, cudaMemcpyHostToDevice, s));

    std::vector<float> ya(n), yb(n);
    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        if (i == iters / 2) { /* the first half's result, then the other filter */
            CK(cudaMemcpyAsync(ya.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost, s));
            CK(cudaMemcpyToSymbolAsync(taps, tb, sizeof tb, 0, cudaMemcpyHostToDevice, s));
        }
        tm.before(i);
        conv1d_const<<<grid, block, 0, s>>>(x, y, n);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report(); /* synchronizes s */
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    CK(cudaMemcpy(yb.data(), y, (size_t)n * 4, cudaMemcpyDeviceToHost));
    check(h, ya, ta, "A");
    check(h, yb, tb, "B");
    out.put(ya);
    out.put(yb);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
