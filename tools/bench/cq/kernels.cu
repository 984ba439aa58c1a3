/*
 * kernels.cu -- the kernels of the choice-quality benchmark (tools/bench/choice_quality.py).
 *
 * One kind each: memory-bound 1-D, 2-D blocks, integer atomic reduction, shared-memory
 * reduction, compute-bound, tiny (latency-bound), in-place, and float atomics (verified
 * within a tolerance). Every kernel computes the same result for every configuration of
 * its policy's space (tools/bench/cq/policy.yaml): a grid-stride loop, a bounds check,
 * or a loop over its row with whatever block it gets. extern "C": the names do not
 * mangle, so the policy declares the parameter types.
 *
 * Compiled to a cubin (sm_90) by tests/gpu/build.sh; the benchmark loads that cubin with
 * CuPy's RawModule, both under the shim (tuning) and without it (measuring), so every
 * measurement runs the same code.
 */

/* Memory-bound 1-D: z = a*x + y, grid-stride. */
extern "C" __global__ void cq_saxpy(int n, float a, const float *__restrict__ x,
                                    const float *__restrict__ y, float *__restrict__ z)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        z[i] = a * x[i] + y[i];
}

/* 2-D: naive transpose of a rows x cols matrix, one thread per element of a 2-D block. */
extern "C" __global__ void cq_transpose(const float *__restrict__ src, float *__restrict__ dst,
                                        int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

/* Integer atomic reduction: the sum of n ints into one 64-bit counter; grid-stride
 * partial sums, a warp shuffle, one atomicAdd per warp. Exact for any config (the block
 * is a multiple of 32 in the policy). */
extern "C" __global__ void cq_sum_atomic(const int *__restrict__ x, unsigned long long *out, int n)
{
    long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += x[i];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)s);
}

/* Shared-memory reduction: out[row] = sum of row, a block per row (grid-stride over
 * rows), a tree reduction in blockDim.x ints of dynamic shared memory (a power of two).
 * Integers: the same sums in any order. */
extern "C" __global__ void cq_rowsum_smem(const int *__restrict__ x, int *__restrict__ out,
                                          int rows, int cols)
{
    extern __shared__ int part[];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        int s = 0;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            s += x[(size_t)r * cols + c];
        part[threadIdx.x] = s;
        __syncthreads();
        for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
            if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
            __syncthreads();
        }
        if (threadIdx.x == 0) out[r] = part[0];
        __syncthreads();
    }
}

/* Compute-bound: iters dependent FMAs per element (a contraction, so no overflow). */
extern "C" __global__ void cq_compute(int n, int iters, const float *__restrict__ x,
                                      float *__restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i], w = 1.0f - v;
        for (int k = 0; k < iters; k++) {
            v = fmaf(v, 0.999f, 0.0005f);
            w = fmaf(w, 0.998f, v * 0.001f);
        }
        y[i] = v + w;
    }
}

/* Tiny, latency-bound: c = a + b over a few thousand elements, one thread each. */
extern "C" __global__ void cq_tiny(const float *__restrict__ a, const float *__restrict__ b,
                                   float *__restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

/* In place: y = a*y + b, grid-stride (with a = 0.5, b = 1 repeated runs converge to 2:
 * no overflow however often the benchmark runs it). */
extern "C" __global__ void cq_axpb_inplace(float *y, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * y[i] + b;
}

/* Float atomics (verified within a tolerance): out[row] += row sums, gridDim.x blocks per
 * row, a warp shuffle and one atomicAdd per warp; the order of the adds varies. */
extern "C" __global__ void cq_rowsum_atomic(const float *__restrict__ x, float *out, int rows,
                                            int cols)
{
    int r = blockIdx.y;
    if (r >= rows) return;
    float s = 0.f;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x)
        s += x[(size_t)r * cols + c];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&out[r], s);
}

/* Not tuned: the harness's stream filler. Spins for `cycles` clocks so that the timed
 * launches queued behind it run back to back, each bracketed by its own events, with
 * no host launch gap inside any measurement. */
extern "C" __global__ void cq_spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
