/*
 * dmod -- the module that driver_api loads with cuModuleLoadData/cuLibraryLoadData.
 * build.sh compiles it to a cubin (sm_90) and to PTX (compute_90, JIT-compiled by
 * the driver at load) and embeds both in driver_api.
 */
extern "C" __global__ void saxpy_f(float *y, const float *x, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

/* int then double: the double is at offset 8 (4 bytes of padding). */
extern "C" __global__ void axpy_d(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

/* dst[i] = src[idx[i]] * scale + bias: a 2-byte argument between pointers and an int. */
extern "C" __global__ void gather_scale(const int *idx, const float *src, float *dst, unsigned short scale,
                                        char bias, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[idx[i]] * (float)scale + (float)bias;
}

/* 2-D grid over a rows x cols matrix: m[r][c] += r - c. */
extern "C" __global__ void add_index2d(float *m, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) m[(size_t)r * cols + c] += (float)(r - c) * 0.001f;
}
