/*
 * rt_kernels -- runtime-API program with several kinds of kernels.
 *
 * Kernels: templates (over type and an int, and over a functor type), kernels in a
 * namespace, extern "C" kernels, a kernel without parameters, a kernel with one
 * argument of every scalar type plus a struct by value, a 260-byte struct by value,
 * dim3 by value, dynamic shared memory, 2-D and 3-D grids. Launch paths: <<<>>> on
 * the legacy default stream, on a created blocking and a non-blocking stream, on
 * cudaStreamPerThread, and cudaLaunchKernel with an argument array.
 *
 * Checks: every CUDA call's return code; the outputs (written to argv[1]) are
 * compared by run.sh between runs with and without the shim. Prints LAUNCHES n.
 */
#include "common.h"

namespace xmt_test {

template <typename T, int UNROLL>
__global__ void axpy(T a, const T *__restrict__ x, T *__restrict__ y, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x * UNROLL;
    for (long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * UNROLL; base < n;
         base += stride) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            if (base + u < n) y[base + u] = a * x[base + u] + y[base + u];
    }
}

struct Square {
    __device__ float operator()(float v) const { return v * v; }
};
struct Affine {
    float s, t;
    __device__ float operator()(float v) const { return s * v + t; }
};

template <class F> __global__ void map(F f, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f(x[i]);
}

/* 3-D grid, dim3 by value. */
__global__ void fill3d(unsigned *v, dim3 dims, unsigned salt)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < dims.x && y < dims.y && z < dims.z) {
        unsigned idx = (z * dims.y + y) * dims.x + x;
        unsigned h = idx * 2654435761u ^ salt;
        v[idx] = (h ^ (h >> 13)) * 0x5bd1e995u;
    }
}

} // namespace xmt_test

struct Mixed {
    int n;
    float alpha;
    double beta;
    char tag;
    long long offset;
};

struct Coeffs {
    float c[64];
    int degree;
};

extern "C" __global__ void scale_rows(float *m, const float *s, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) m[(size_t)r * cols + c] *= s[r];
}

/* One argument of each scalar type, a struct by value, and pointers. */
extern "C" __global__ void mixed_args(char c, short s, int i, long long ll, unsigned char uc, float f,
                                      double d, bool flag, Mixed m, const int *in, double *out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m.n) {
        double v = (double)in[k] * d + f * c + s - i + (double)(ll % 1000) + uc + m.alpha * m.beta +
                   m.tag + (double)m.offset;
        out[k] = flag ? v : -v;
    }
}

/* Horner evaluation with the coefficients passed by value (260-byte argument). */
__global__ void poly_eval(Coeffs k, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i], acc = k.c[k.degree];
        for (int d = k.degree - 1; d >= 0; --d) acc = acc * v + k.c[d];
        y[i] = acc;
    }
}

/* Per-block sums through dynamic shared memory (blockDim.x floats). */
__global__ void tile_sum(const float *x, float *out, int n)
{
    extern __shared__ float sh[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    sh[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sh[0];
}

/* No parameters at all: counts its threads in a __device__ variable. */
__device__ unsigned long long g_counter;
__global__ void bump() { atomicAdd(&g_counter, 1ull); }

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1 << 20;
    const size_t N = n;

    cudaStream_t s1, s2;
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    /* float / double / int axpy, several unroll factors and streams. */
    std::vector<float> hxf(N), hyf(N);
    std::vector<double> hxd(N), hyd(N);
    std::vector<int> hxi(N), hyi(N);
    fill_real(hxf, 1);
    fill_real(hyf, 2);
    fill_real(hxd, 3);
    fill_real(hyd, 4);
    fill_int(hxi, 5, 100);
    fill_int(hyi, 6, 100);
    float *xf, *yf;
    double *xd, *yd;
    int *xi, *yi;
    CK(cudaMalloc(&xf, N * 4));
    CK(cudaMalloc(&yf, N * 4));
    CK(cudaMalloc(&xd, N * 8));
    CK(cudaMalloc(&yd, N * 8));
    CK(cudaMalloc(&xi, N * 4));
    CK(cudaMalloc(&yi, N * 4));
    CK(cudaMemcpy(xf, hxf.data(), N * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(yf, hyf.data(), N * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(xd, hxd.data(), N * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(yd, hyd.data(), N * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(xi, hxi.data(), N * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(yi, hyi.data(), N * 4, cudaMemcpyHostToDevice));

    for (int rep = 0; rep < 3; ++rep) {
        xmt_test::axpy<float, 1><<<1024, 256>>>(0.5f, xf, yf, n);
        LAUNCHED();
        xmt_test::axpy<float, 4><<<256, 128, 0, s1>>>(-0.25f, xf, yf, n);
        LAUNCHED();
        CK(cudaStreamSynchronize(s1));
        xmt_test::axpy<double, 2><<<512, 256, 0, s2>>>(1.5, xd, yd, n);
        LAUNCHED();
        xmt_test::axpy<int, 1><<<(n + 511) / 512, 512, 0, cudaStreamPerThread>>>(3, xi, yi, n);
        LAUNCHED();
    }
    CK(cudaDeviceSynchronize());

    /* cudaLaunchKernel with an argument array (legacy stream). */
    {
        float a = 2.0f;
        long long nn = n;
        void *args[] = {&a, &xf, &yf, &nn};
        CK_LAUNCH(cudaLaunchKernel((const void *)xmt_test::axpy<float, 2>, dim3(333), dim3(96), args, 0, 0));
    }

    /* Functor templates. */
    float *zf;
    CK(cudaMalloc(&zf, N * 4));
    xmt_test::map<<<(n + 255) / 256, 256, 0, s1>>>(xmt_test::Square{}, yf, zf, n);
    LAUNCHED();
    xmt_test::map<<<(n + 127) / 128, 128, 0, s1>>>(xmt_test::Affine{1.25f, -0.5f}, zf, zf, n);
    LAUNCHED();

    /* 2-D grid, extern "C". */
    const int rows = 512, cols = 2048;
    std::vector<float> hs(rows);
    fill_real(hs, 7, 0.5, 2.0);
    float *sr;
    CK(cudaMalloc(&sr, rows * 4));
    CK(cudaMemcpy(sr, hs.data(), rows * 4, cudaMemcpyHostToDevice));
    scale_rows<<<dim3(cols / 32, rows / 8), dim3(32, 8), 0, s1>>>(zf, sr, rows, cols);
    LAUNCHED();
    scale_rows<<<dim3(cols / 64, rows / 4), dim3(64, 4)>>>(yf, sr, rows, cols);
    LAUNCHED();

    /* Every scalar type plus a struct by value. */
    double *md;
    CK(cudaMalloc(&md, N * 8));
    Mixed m{n, 0.75f, -1.125, 'q', 123456789012ll};
    mixed_args<<<(n + 255) / 256, 256, 0, s2>>>('c', (short)-7, 42, 9876543210ll, (unsigned char)200, 0.5f,
                                                   0.001, true, m, xi, md);
    LAUNCHED();

    /* 260-byte struct by value. */
    Coeffs co;
    {
        std::vector<float> c(64);
        fill_real(c, 8, 0.01, 0.2);
        memcpy(co.c, c.data(), sizeof co.c);
        co.degree = 17;
    }
    float *pf;
    CK(cudaMalloc(&pf, N * 4));
    poly_eval<<<(n + 255) / 256, 256>>>(co, xf, pf, n);
    LAUNCHED();

    /* Dynamic shared memory. */
    float *ts;
    const int tb = 512, nb = (n + tb - 1) / tb;
    CK(cudaMalloc(&ts, nb * 4));
    tile_sum<<<nb, tb, tb * sizeof(float), s1>>>(pf, ts, n);
    LAUNCHED();

    /* 3-D grid. */
    const dim3 dims(64, 48, 40);
    unsigned *v3;
    CK(cudaMalloc(&v3, (size_t)dims.x * dims.y * dims.z * 4));
    xmt_test::fill3d<<<dim3(dims.x / 8, dims.y / 8, dims.z / 4), dim3(8, 8, 4), 0, s2>>>(v3, dims, 0xabcdu);
    LAUNCHED();

    /* No parameters. */
    unsigned long long zero = 0;
    CK(cudaMemcpyToSymbol(g_counter, &zero, sizeof zero));
    for (int r = 0; r < 5; ++r) {
        bump<<<7, 96>>>();
        LAUNCHED();
    }

    CK(cudaDeviceSynchronize());
    out.dev(yf, N);
    out.dev(yd, N);
    out.dev(yi, N);
    out.dev(zf, N);
    out.dev(md, N);
    out.dev(pf, N);
    out.dev(ts, nb);
    out.dev(v3, (size_t)dims.x * dims.y * dims.z);
    unsigned long long cnt = 0;
    CK(cudaMemcpyFromSymbol(&cnt, g_counter, sizeof cnt));
    out.put(&cnt, sizeof cnt);
    if (cnt != 5ull * 7 * 96) {
        fprintf(stderr, "bump counted %llu threads, expected %d\n", cnt, 5 * 7 * 96);
        return 1;
    }

    for (void *p : {(void *)xf, (void *)yf, (void *)xd, (void *)yd, (void *)xi, (void *)yi, (void *)zf,
                    (void *)sr, (void *)md, (void *)pf, (void *)ts, (void *)v3})
        CK(cudaFree(p));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    out.close();
    finish();
    return 0;
}
