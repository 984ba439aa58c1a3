/*
 * graph_explicit -- examples/gpu/saxpy.cu's kernel in CUDA graphs, replayed: the GPU
 * suite's check that graph replays are counted and that graph kernel nodes get a winner
 * the on-disk cache already holds (tests/gpu/run.sh, "graphs" rows).
 *
 * Built twice from this file (tests/gpu/build.sh):
 *   graph_explicit  the graphs are built node by node: cudaGraphAddKernelNode (graph A:
 *                   one saxpy node) and a child graph (graph B: a parent whose child
 *                   graph holds one saxpy node), no stream capture.
 *   graph_captured  (-DXMT_CAPTURE) the same two graphs from stream capture of
 *                   saxpy<<<32, 128>>> (graph B: captured into its own graph, added to
 *                   the parent as a child graph node).
 * The kernel and its arguments are exactly saxpy.cu's (n = 1<<25, <<<32, 128>>>), so
 * its lookup key and code are the same: a cache saxpy's tune run wrote applies.
 *
 * Graph A is replayed REPLAYS_A times, each replay timed with events (TIME_MS: the
 * median per replay, i.e. per saxpy kernel; compare with saxpy's own TIME_MS); graph B
 * REPLAYS_B times. Prints LAUNCHES (launch calls made: 0 explicit, 2 captured),
 * GRAPH_REPLAYS, GRAPH_KERNELS (kernel launches the replays made), TIME_MS, TOTAL_MS,
 * FIRST_MS; writes z and w to argv[1].
 */
#include "common.h"

/* Verbatim examples/gpu/saxpy.cu's kernel: same name, same code, same cache records. */
extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, const float *__restrict__ y,
                                 float *__restrict__ z)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        z[i] = a * x[i] + y[i];
}

static int n = 1 << 25;

#ifndef XMT_CAPTURE
/* A graph of one saxpy node with the program's own (poor) <<<32, 128>>>. */
static cudaGraph_t saxpy_graph(float *a, float **x, float **y, float **z)
{
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    void *args[] = {&n, a, x, y, z};
    cudaKernelNodeParams p = {};
    p.func = (void *)saxpy;
    p.gridDim = dim3(32);
    p.blockDim = dim3(128);
    p.sharedMemBytes = 0;
    p.kernelParams = args;
    p.extra = nullptr;
    cudaGraphNode_t node;
    CK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &p)); /* copies the arguments */
    return g;
}
#else
static cudaGraph_t saxpy_graph(float *a, float **x, float **y, float **z)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    saxpy<<<32, 128, 0, s>>>(n, *a, *x, *y, *z);
    LAUNCHED();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaStreamDestroy(s));
    return g;
}
#endif

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int replays_a = 30, replays_b = 5;
    std::vector<float> hx(n), hy(n);
    fill_real(hx, 1001);
    fill_real(hy, 1002);
    float *x, *y, *z, *w;
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMalloc(&z, (size_t)n * 4));
    CK(cudaMalloc(&w, (size_t)n * 4));
    CK(cudaMemcpy(x, hx.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    /* Graph A: z = 2.5 x + y, as saxpy.cu computes it. */
    float a = 2.5f;
    cudaGraph_t ga = saxpy_graph(&a, &x, &y, &z);
    /* Graph B: a parent graph whose only node is a child graph: w = -1.5 x + y. */
    float b = -1.5f;
    cudaGraph_t child = saxpy_graph(&b, &x, &y, &w), gb;
    CK(cudaGraphCreate(&gb, 0));
    cudaGraphNode_t cn;
    CK(cudaGraphAddChildGraphNode(&cn, gb, nullptr, 0, child)); /* clones child */

    cudaGraphExec_t ea, eb;
    CK(cudaGraphInstantiate(&ea, ga, 0));
    CK(cudaGraphInstantiate(&eb, gb, 0));
    LoopTimer tm(replays_a, s);
    tm.begin_loop();
    for (int i = 0; i < replays_a; ++i) {
        tm.before(i);
        CK(cudaGraphLaunch(ea, s));
        tm.after(i);
    }
    tm.end_loop();
    for (int i = 0; i < replays_b; ++i)
        CK(cudaGraphLaunch(eb, s));
    CK(cudaStreamSynchronize(s));
    tm.report();

    out.dev(z, n);
    out.dev(w, n);
    CK(cudaGraphExecDestroy(ea));
    CK(cudaGraphExecDestroy(eb));
    CK(cudaGraphDestroy(ga));
    CK(cudaGraphDestroy(gb));
    CK(cudaGraphDestroy(child));
    CK(cudaStreamDestroy(s));
    for (float *p : {x, y, z, w}) CK(cudaFree(p));
    out.close();
    printf("GRAPH_REPLAYS %d\nGRAPH_KERNELS %d\n", replays_a + replays_b, replays_a + replays_b);
    finish();
    return 0;
}
