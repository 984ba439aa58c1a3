/*
 * launch_ex -- launches through cudaLaunchKernelEx (driver: cuLaunchKernelEx).
 *
 * Without attributes (template and C form cudaLaunchKernelExC), and with one
 * benign attribute (stream priority), on the legacy stream and a created stream,
 * with and without dynamic shared memory.
 *
 * Checks: every CUDA call's return code; outputs to argv[1]; prints LAUNCHES n.
 */
#include "common.h"

template <typename T, int R>
__global__ void blur1d(const T *__restrict__ in, T *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T acc = 0;
        for (int k = -R; k <= R; ++k) {
            int j = min(max(i + k, 0), n - 1);
            acc += in[j];
        }
        out[i] = acc / (T)(2 * R + 1);
    }
}

/* Block-local prefix sums in dynamic shared memory (blockDim.x elements). */
extern "C" __global__ void block_scan(const float *in, float *out, int n)
{
    extern __shared__ float sh[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    sh[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        float v = t >= off ? sh[t - off] : 0.0f;
        __syncthreads();
        sh[t] += v;
        __syncthreads();
    }
    if (i < n) out[i] = sh[t];
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 21;
    std::vector<float> hx(n);
    std::vector<double> hd(n);
    fill_real(hx, 11);
    fill_real(hd, 12);
    float *x, *y, *z;
    double *dx, *dy;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&z, n * 4));
    CK(cudaMalloc(&dx, n * 8));
    CK(cudaMalloc(&dy, n * 8));
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, hd.data(), n * 8, cudaMemcpyHostToDevice));

    int lo = 0, hi = 0;
    CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));

    for (int rep = 0; rep < 4; ++rep) {
        /* No attributes, template form, legacy stream. */
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((n + 255) / 256);
        cfg.blockDim = dim3(256);
        cfg.dynamicSmemBytes = 0;
        cfg.stream = 0;
        cfg.attrs = nullptr;
        cfg.numAttrs = 0;
        CK_LAUNCH(cudaLaunchKernelEx(&cfg, blur1d<float, 3>, (const float *)x, y, n));

        /* One benign attribute: a priority, on a created stream. */
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributePriority;
        attr[0].val.priority = hi;
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        cfg.blockDim = dim3(128);
        cfg.gridDim = dim3((n + 127) / 128);
        CK_LAUNCH(cudaLaunchKernelEx(&cfg, blur1d<double, 5>, (const double *)dx, dy, n));

        /* C form, dynamic shared memory, no attributes. */
        cudaLaunchConfig_t c2 = {};
        c2.gridDim = dim3((n + 511) / 512);
        c2.blockDim = dim3(512);
        c2.dynamicSmemBytes = 512 * sizeof(float);
        c2.stream = s;
        int nn = n;
        void *args[] = {&y, &z, &nn};
        CK_LAUNCH(cudaLaunchKernelExC(&c2, (const void *)block_scan, args));

        /* C form with the priority attribute. */
        c2.attrs = attr;
        c2.numAttrs = 1;
        attr[0].val.priority = lo;
        void *args2[] = {&z, &y, &nn};
        CK_LAUNCH(cudaLaunchKernelExC(&c2, (const void *)block_scan, args2));
        CK(cudaStreamSynchronize(s));
        std::swap(dx, dy);
    }
    CK(cudaDeviceSynchronize());
    out.dev(y, n);
    out.dev(z, n);
    out.dev(dx, n);
    out.dev(dy, n);
    for (void *p : {(void *)x, (void *)y, (void *)z, (void *)dx, (void *)dy}) CK(cudaFree(p));
    CK(cudaStreamDestroy(s));
    out.close();
    finish();
    return 0;
}
