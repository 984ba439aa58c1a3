/*
 * launch_paths -- the launch shapes the tuner must pass through untouched.
 *
 *  - cudaLaunchCooperativeKernel (driver: cuLaunchCooperativeKernel) of a kernel
 *    that synchronises the whole grid (cooperative_groups grid.sync());
 *  - cudaLaunchKernelEx with a cluster-dimension attribute (2 blocks per cluster)
 *    of a kernel that reads its partner block's shared memory (distributed shared
 *    memory, sm_90);
 *  - cudaLaunchKernelEx with a compile-time cluster size (__cluster_dims__), and a
 *    plain <<<>>> launch of the same family for comparison.
 *
 * Checks: every CUDA call's return code; outputs to argv[1]; prints LAUNCHES n.
 */
#include "common.h"

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

/* Two phases separated by a grid-wide barrier: out[i] = in[i] + 2 in[n-1-i]. */
__global__ void coop_reverse_add(const float *in, float *tmp, float *out, int n)
{
    cg::grid_group g = cg::this_grid();
    for (int i = g.thread_rank(); i < n; i += g.size()) tmp[i] = in[i] * 2.0f;
    g.sync();
    for (int i = g.thread_rank(); i < n; i += g.size()) out[i] = in[i] + tmp[n - 1 - i];
}

/* Each block adds its partner block's shared tile to its own (cluster of 2). */
__global__ void cluster_pair_sum(const float *in, float *out, int n)
{
    __shared__ float tile[256];
    cg::cluster_group cl = cg::this_cluster();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    cl.sync();
    unsigned partner = cl.block_rank() ^ 1u;
    float *other = cl.map_shared_rank(tile, partner);
    float v = tile[threadIdx.x] + 0.5f * other[threadIdx.x];
    cl.sync(); /* keep the partner's shared memory alive until every read is done */
    if (i < n) out[i] = v;
}

__global__ void __cluster_dims__(2, 1, 1) cluster_fixed(const float *in, float *out, int n)
{
    cg::cluster_group cl = cg::this_cluster();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * (float)(cl.block_rank() + 1);
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 20;
    std::vector<float> h(n);
    fill_real(h, 21);
    float *in, *tmp, *o1, *o2, *o3;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&tmp, n * 4));
    CK(cudaMalloc(&o1, n * 4));
    CK(cudaMalloc(&o2, n * 4));
    CK(cudaMalloc(&o3, n * 4));
    CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));

    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (!coop) {
        fprintf(stderr, "device does not support cooperative launches\n");
        return 2;
    }
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_reverse_add, 256, 0));
    /* The result does not depend on the grid size; keep it co-resident. */
    int blocks = std::min(per_sm, 2) * sms;
    for (int rep = 0; rep < 3; ++rep) {
        int nn = n;
        void *args[] = {&in, &tmp, &o1, &nn};
        CK_LAUNCH(cudaLaunchCooperativeKernel((const void *)coop_reverse_add, dim3(blocks), dim3(256), args, 0, 0));
    }

    for (int rep = 0; rep < 3; ++rep) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = 2;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(n / 256); /* even: a multiple of the cluster size */
        cfg.blockDim = dim3(256);
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        CK_LAUNCH(cudaLaunchKernelEx(&cfg, cluster_pair_sum, (const float *)in, o2, n));

        cudaLaunchConfig_t c2 = {};
        c2.gridDim = dim3(n / 128);
        c2.blockDim = dim3(128);
        CK_LAUNCH(cudaLaunchKernelEx(&c2, cluster_fixed, (const float *)o2, o3, n));
    }
    cluster_fixed<<<n / 512, 512>>>(o3, tmp, n);
    LAUNCHED();
    CK(cudaDeviceSynchronize());

    out.dev(o1, n);
    out.dev(o2, n);
    out.dev(o3, n);
    out.dev(tmp, n);
    for (void *p : {(void *)in, (void *)tmp, (void *)o1, (void *)o2, (void *)o3}) CK(cudaFree(p));
    out.close();
    finish();
    return 0;
}
