/*
 * bitonic -- sorts 1M 32-bit keys with the classic bitonic network: one launch per stage
 * (k, j), 210 of them, each thread comparing element i with i ^ j. The kernel has no
 * bounds check: the program launches exactly n threads (n / 256 blocks of 256), so a
 * config that keeps the grid and grows the block reads and writes past the end of the
 * keys (an illegal address), and each stage's (k, j) is a key of its own. A fault family
 * for the tuner (docs/tuning.md): a program shaped like cuda-samples' sortingNetworks.
 *
 * Prints TOTAL_MS (the whole sort, GPU time) and LAUNCHES; checks the result is sorted
 * and a permutation of the input (exit 1 if not); writes the sorted keys to argv[1].
 */
#include "../../tests/gpu/common.h"

__global__ void bitonic_step(unsigned *__restrict__ v, int j, int k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; /* no bounds check: exactly n threads */
    unsigned p = i ^ (unsigned)j;
    if (p > i) {
        unsigned a = v[i], b = v[p];
        bool up = (i & (unsigned)k) == 0;
        if ((a > b) == up) {
            v[i] = b;
            v[p] = a;
        }
    }
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 20;
    std::vector<unsigned> h(n);
    fill_int(h, 4242, 1u << 30);
    unsigned *d;
    CK(cudaMalloc(&d, (size_t)n * 4));
    CK(cudaMemcpy(d, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int k = 2; k <= n; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            bitonic_step<<<n / 256, 256>>>(d, j, k);
            LAUNCHED();
        }
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("TOTAL_MS %.6f\n", ms);
    std::vector<unsigned> o(n);
    CK(cudaMemcpy(o.data(), d, (size_t)n * 4, cudaMemcpyDeviceToHost));
    std::vector<unsigned> ref = h;
    std::sort(ref.begin(), ref.end());
    if (o != ref) {
        fprintf(stderr, "bitonic: the result is not the sorted input\n");
        return 1;
    }
    out.put(o);
    CK(cudaFree(d));
    out.close();
    finish();
    return 0;
}
