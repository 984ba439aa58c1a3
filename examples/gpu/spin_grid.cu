/*
 * spin_grid -- blocks that wait for one another: out[i] = 3*x[i] + (sum of all x),
 * in unsigned arithmetic (wrapping, so the sum's order does not matter), over 4M
 * values. Each block adds its part of the sum to bar[2], arrives at a grid-wide
 * barrier (bar[0]) and spins until every block of the grid has arrived, then writes its
 * part of out; the last block to leave (bar[1]) puts the three counters back to zero,
 * so each launch leaves bar as it found it.
 *
 * Such a barrier is correct only when every block of the grid is resident at once: the
 * program's own config (64 blocks of 128 threads, on a GPU of 132 SMs) finishes. A grid
 * of 132000 blocks of 1024 threads cannot be resident at once (an H200 holds at most 264
 * such blocks): the resident ones spin forever waiting for the others, which never start.
 *
 * Policy (spin_grid.yaml): block size x grid (at most one block per SM, always
 * resident), after one config that hangs, on purpose. Run inline (XMATUNE_TRIALS=inline)
 * the program hangs at its first launch; with trials in the helper process the hung
 * candidate is logged `fault` and the outputs must be byte-identical to an untuned run.
 *
 * Prints LAUNCHES, CONFIG, TIME_MS (median per launch), TOTAL_MS; writes out to argv[1].
 */
#include "../../tests/gpu/common.h"

/* At most 64 registers a thread, so that a block of 1024 threads fits on any SM. */
__global__ void __launch_bounds__(1024) grid_sync_sum(const unsigned *__restrict__ x, unsigned *__restrict__ out,
                                                      unsigned *bar, int n)
{
    __shared__ unsigned part[32];
    const int stride = gridDim.x * blockDim.x;
    unsigned s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        s += x[i];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned b = 0;
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w)
            b += part[w];
        atomicAdd(&bar[2], b);
        __threadfence();
        atomicAdd(&bar[0], 1u); /* arrive */
        while (*(volatile unsigned *)&bar[0] < gridDim.x) /* wait for every block */
            __nanosleep(100);
        __threadfence();
        part[0] = atomicAdd(&bar[2], 0u); /* the sum, read where the atomics were made */
    }
    __syncthreads();
    const unsigned total = part[0];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = 3u * x[i] + total;
    if (threadIdx.x == 0 && atomicAdd(&bar[1], 1u) == gridDim.x - 1) {
        /* every block has read the sum and left the barrier: reset for the next launch */
        bar[0] = 0;
        bar[1] = 0;
        bar[2] = 0;
        __threadfence();
    }
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 22, iters = 30;
    const dim3 grid(64), block(128); /* resident at once on any recent GPU */
    std::vector<unsigned> h(n);
    fill_int(h, 4401, 1u << 30);
    unsigned *x, *o, *bar;
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&o, (size_t)n * 4));
    CK(cudaMalloc(&bar, 4 * sizeof(unsigned)));
    CK(cudaMemcpy(x, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(bar, 0, 4 * sizeof(unsigned))); /* once: each launch leaves it at zero */
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaDeviceSynchronize()); /* the memset (legacy stream) before the first launch */

    LoopTimer tm(iters, s);
    tm.begin_loop();
    for (int i = 0; i < iters; ++i) {
        tm.before(i);
        grid_sync_sum<<<grid, block, 0, s>>>(x, o, bar, n);
        LAUNCHED();
        tm.after(i);
    }
    tm.end_loop();
    tm.report();
    printf("CONFIG grid=(%u,%u,%u) block=(%u,%u,%u) shared=0\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);

    std::vector<unsigned> ho(n), hb(4);
    CK(cudaMemcpy(ho.data(), o, (size_t)n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), bar, 4 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned total = 0;
    for (unsigned v : h)
        total += v;
    for (int k = 0; k < n; k += 1021) {
        if (ho[k] != 3u * h[k] + total) {
            fprintf(stderr, "out[%d] = %u, expected %u\n", k, ho[k], 3u * h[k] + total);
            return 1;
        }
    }
    if (hb[0] || hb[1] || hb[2]) {
        fprintf(stderr, "bar = {%u, %u, %u} after the launches, expected zeros\n", hb[0], hb[1], hb[2]);
        return 1;
    }
    out.put(ho);
    out.put(hb);
    CK(cudaFree(x));
    CK(cudaFree(o));
    CK(cudaFree(bar));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
