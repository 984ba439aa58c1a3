// timing_ways: one in-place kernel's configs timed the ways a tuner and a program see them
// (issue 26: the tuner ranked cq_axpb_inplace's BLOCK=512 ahead of BLOCK=256 at n = 2^22
// where choice_quality.py's harness ranks them the other way round; this finds which way
// of timing changes the order).
//
//   nvcc -O2 -std=c++17 -gencode 'arch=compute_90,code=[sm_90,compute_90]' \
//        -o timing_ways tools/bench/cq/timing_ways.cu && ./timing_ways [N_LOG2] [ROUNDS]
//
// The kernel is cq_axpb_inplace (tools/bench/cq/kernels.cu): y = a*y + b, grid-stride, grid
// sm_count * BPS. Ways, each config's figure the median of its runs (µs), the mean over 3 repeats:
//   queued        the harness's: ROUNDS runs back to back behind a spin kernel, each
//                 between its own events (a program's loop of this kernel)
//   queued+copy   the same, a restore (DtoD copy of y from a snapshot) before each run
//   tuner         the tuner's rounds: per round an untimed lead-in run, then each config
//                 once, interleaved, a restore before each, events around the run alone;
//                 the round waited for (a policy that declares restore: [y])
//   tuner-nocopy  the same without the restores (protect: auto, as cq/policy.yaml tunes it:
//                 timed runs are not restored)
//   tuner+again   the same, each config run once untimed after its restore, then timed
//   nocopy+again  tuner-nocopy with each config run once untimed right before its timed
//                 run: the same config before each, as in a program's loop, at the cost of
//                 one more run each (a fix for the tuner, if this order is the harness's)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

__global__ void axpb_inplace(float *y, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * y[i] + b;
}

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

struct Cfg {
    int block, bps;
};

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.f : v[v.size() / 2];
}

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 22, rounds = argc > 2 ? atoi(argv[2]) : 100;
    int n = 1 << lg;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<Cfg> cfgs = {{512, 8}, {256, 8}, {128, 16}, {1024, 2}, {256, 16}};
    float *y, *snap;
    CK(cudaMalloc(&y, (size_t)n * 4));
    CK(cudaMalloc(&snap, (size_t)n * 4));
    std::vector<float> h(n);
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 1000) / 7.f;
    CK(cudaMemcpy(snap, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, snap, (size_t)n * 4, cudaMemcpyDeviceToDevice));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    std::vector<cudaEvent_t> ev0(rounds), ev1(rounds);
    for (int i = 0; i < rounds; i++) {
        CK(cudaEventCreate(&ev0[i]));
        CK(cudaEventCreate(&ev1[i]));
    }
    auto run = [&](const Cfg &c) { axpb_inplace<<<sms * c.bps, c.block, 0, s>>>(y, 0.5f, 1.f, n); };
    auto restore = [&] { CK(cudaMemcpyAsync(y, snap, (size_t)n * 4, cudaMemcpyDeviceToDevice, s)); };
    // a run between event pair i, and what it took (after a synchronize), in µs
    auto timed = [&](const Cfg &c, size_t i) {
        CK(cudaEventRecord(ev0[i], s));
        run(c);
        CK(cudaEventRecord(ev1[i], s));
    };
    auto elapsed_us = [&](size_t i) {
        float ms;
        CK(cudaEventElapsedTime(&ms, ev0[i], ev1[i]));
        return ms * 1000;
    };
    // clock up
    spin<<<1, 1, 0, s>>>(2000000000LL / 10);
    CK(cudaStreamSynchronize(s));
    const char *ways[] = {"queued",       "queued+copy", "tuner",
                          "tuner-nocopy", "tuner+again", "nocopy+again"};
    const int nways = 6;
    std::vector<std::vector<float>> res(nways, std::vector<float>(cfgs.size()));
    for (int rep = 0; rep < 3; rep++) // repeated: each figure the mean of the three medians
        for (int w = 0; w < nways; w++) {
            std::vector<std::vector<float>> t(cfgs.size());
            if (w < 2) {
                for (size_t c = 0; c < cfgs.size(); c++) {
                    for (int i = 0; i < 10; i++)
                        run(cfgs[c]);
                    spin<<<1, 1, 0, s>>>(20000000LL);
                    for (int i = 0; i < rounds; i++) {
                        if (w == 1) restore();
                        timed(cfgs[c], (size_t)i);
                    }
                    CK(cudaStreamSynchronize(s));
                    for (int i = 0; i < rounds; i++)
                        t[c].push_back(elapsed_us((size_t)i));
                }
            } else {
                for (int r = 0; r < rounds / 4; r++) {
                    size_t m = cfgs.size();
                    run(cfgs[r % m]); // lead-in
                    for (size_t j = 0; j < m; j++) {
                        size_t c = (j + r) % m;
                        if (w == 2 || w == 4) restore();
                        if (w >= 4) run(cfgs[c]);
                        timed(cfgs[c], c);
                    }
                    CK(cudaStreamSynchronize(s));
                    for (size_t c = 0; c < m; c++)
                        t[c].push_back(elapsed_us(c));
                }
            }
            for (size_t c = 0; c < cfgs.size(); c++)
                res[w][c] += median(t[c]) / 3;
        }
    printf("n = 2^%d, %d SMs, %d runs per config and way; medians in µs (mean of 3 repeats)\n", lg,
           sms, rounds);
    printf("| way |");
    for (auto &c : cfgs)
        printf(" BLOCK=%d, BPS=%d |", c.block, c.bps);
    printf(" order |\n| --- |");
    for (size_t c = 0; c < cfgs.size(); c++)
        printf(" ---: |");
    printf(" --- |\n");
    for (int w = 0; w < nways; w++) {
        printf("| %s |", ways[w]);
        std::vector<int> idx(cfgs.size());
        for (size_t c = 0; c < cfgs.size(); c++) {
            printf(" %.2f |", res[w][c]);
            idx[c] = (int)c;
        }
        std::sort(idx.begin(), idx.end(), [&](int a, int b) { return res[w][a] < res[w][b]; });
        printf(" ");
        for (int i : idx)
            printf("%d/%d ", cfgs[i].block, cfgs[i].bps);
        printf("|\n");
    }
    return 0;
}
