/*
 * graph -- kernels captured into CUDA graphs with stream capture, then replayed.
 *
 * Graph A is captured in global mode over two streams (fork/join through events);
 * graph B in thread-local mode on one stream. Each is instantiated once and
 * replayed many times with cudaGraphLaunch.
 *
 * What the shim sees: kernels launched during capture go through cuLaunchKernel
 * (they are recorded, not run); replays are cuGraphLaunch and contain no kernel
 * launch call. So LAUNCHES counts the launch calls this program issued (direct
 * ones plus captured ones), not the kernels the replays execute; the program also
 * prints GRAPH_REPLAYS and GRAPH_KERNELS_EXECUTED for information.
 *
 * Checks: every CUDA call's return code; outputs to argv[1]; prints LAUNCHES n.
 */
#include "common.h"

__global__ void init(float *v, float base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = base + (float)(i % 97) * 0.01f;
}

template <typename T> __global__ void smooth(const T *in, T *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T l = in[i > 0 ? i - 1 : 0], r = in[i < n - 1 ? i + 1 : n - 1];
        out[i] = (T)0.25 * l + (T)0.5 * in[i] + (T)0.25 * r;
    }
}

extern "C" __global__ void combine(float *a, const float *b, float wb, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * (1.0f - wb) + b[i] * wb + 0.001f;
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 20, grid = (n + 255) / 256;
    std::vector<float> h(n);
    fill_real(h, 41);
    float *a, *b, *c, *d;
    CK(cudaMalloc(&a, n * 4));
    CK(cudaMalloc(&b, n * 4));
    CK(cudaMalloc(&c, n * 4));
    CK(cudaMalloc(&d, n * 4));
    CK(cudaMemcpy(a, h.data(), n * 4, cudaMemcpyHostToDevice));

    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    /* Direct launches (run now). */
    init<<<grid, 256, 0, s1>>>(c, 1.0f, n);
    LAUNCHED();
    init<<<grid, 256, 0, s1>>>(d, -2.0f, n);
    LAUNCHED();
    CK(cudaStreamSynchronize(s1));

    /* Graph A: global-mode capture, fork/join over s1 and s2. */
    int captured = 0;
    cudaGraph_t ga;
    CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    smooth<float><<<grid, 256, 0, s1>>>(a, b, n);
    LAUNCHED();
    ++captured;
    CK(cudaEventRecord(fork, s1));
    CK(cudaStreamWaitEvent(s2, fork, 0));
    smooth<float><<<grid, 256, 0, s2>>>(c, d, n); /* s2 branch */
    LAUNCHED();
    ++captured;
    combine<<<grid / 2, 512, 0, s2>>>(c, d, 0.3f, n);
    LAUNCHED();
    ++captured;
    smooth<float><<<grid, 256, 0, s1>>>(b, a, n); /* s1 branch */
    LAUNCHED();
    ++captured;
    CK(cudaEventRecord(join, s2));
    CK(cudaStreamWaitEvent(s1, join, 0));
    combine<<<grid, 256, 0, s1>>>(a, c, 0.125f, n);
    LAUNCHED();
    ++captured;
    CK(cudaStreamEndCapture(s1, &ga));
    const int kernels_a = captured;

    /* Graph B: thread-local capture on one stream, double-precision smoothing. */
    double *x, *y;
    std::vector<double> hd(n);
    fill_real(hd, 42);
    CK(cudaMalloc(&x, n * 8));
    CK(cudaMalloc(&y, n * 8));
    CK(cudaMemcpy(x, hd.data(), n * 8, cudaMemcpyHostToDevice));
    cudaGraph_t gb;
    CK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < 3; ++k) {
        smooth<double><<<grid, 256, 0, s2>>>(x, y, n);
        LAUNCHED();
        ++captured;
        smooth<double><<<grid / 4, 1024, 0, s2>>>(y, x, n);
        LAUNCHED();
        ++captured;
    }
    CK(cudaStreamEndCapture(s2, &gb));
    const int kernels_b = captured - kernels_a;

    cudaGraphExec_t ea, eb;
    CK(cudaGraphInstantiate(&ea, ga, 0));
    CK(cudaGraphInstantiate(&eb, gb, 0));
    const int replays_a = 20, replays_b = 10;
    for (int r = 0; r < replays_a; ++r) CK(cudaGraphLaunch(ea, s1));
    for (int r = 0; r < replays_b; ++r) CK(cudaGraphLaunch(eb, s2));
    CK(cudaStreamSynchronize(s1));
    CK(cudaStreamSynchronize(s2));

    out.dev(a, n);
    out.dev(b, n);
    out.dev(c, n);
    out.dev(d, n);
    out.dev(x, n);
    out.dev(y, n);

    CK(cudaGraphExecDestroy(ea));
    CK(cudaGraphExecDestroy(eb));
    CK(cudaGraphDestroy(ga));
    CK(cudaGraphDestroy(gb));
    CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(join));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    for (void *p : {(void *)a, (void *)b, (void *)c, (void *)d, (void *)x, (void *)y}) CK(cudaFree(p));
    out.close();
    printf("GRAPH_REPLAYS %d\nGRAPH_KERNELS_EXECUTED %d\n", replays_a + replays_b,
           replays_a * kernels_a + replays_b * kernels_b);
    finish();
    return 0;
}
