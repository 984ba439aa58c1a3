/*
 * spaces.cu -- the bench spaces of the search over large spaces (issue 26 item 2), and the
 * program that times every config of each once on a GPU.
 *
 * Five kernels whose work really depends on run-time launch parameters and scalar
 * arguments (never on template arguments: one compiled kernel per space, as the shim sees
 * a program's kernel): a tiled GEMM (block shape, items per thread in each direction, the
 * K tile), a 2-D 5-point stencil (block shape, items per thread in x and y, their layout),
 * a row reduction (threads per row, rows per block, unrolling, grid size), a tiled
 * transpose (tile shape, block rows, padding, tiles per block) and a 1-D convolution
 * (block, outputs per thread, shared-memory staging, layout, grid size). Each has a GPU
 * reference (a plain kernel) and every config's output is compared with it.
 *
 * For each space, spaces times EVERY config: the output filled with NaNs, one checked run
 * (a launch error or a wrong output makes the config invalid), warm-ups, then up to 10
 * runs timed with events one by one (fewer for a slow config: about 50 ms each at most),
 * their median; and writes DIR/<space>.tsv in the format search_eval reads: "# params:"
 * (names and value lists, the last varying fastest), "# default:" (the program's own
 * config, the search's start), a header row, one row per config (values, median_ms,
 * valid). Before each space its default config runs for 300 ms, so the clock is up.
 *
 *   bash tools/bench/search/build.sh OUTDIR        (nvcc, sm_90)
 *   OUTDIR/spaces [--out DIR] [--space NAME] [--runs N] [--list] [--check]
 *
 * --check runs each space's default config once against its reference (a smoke test);
 * --list prints the spaces and their sizes. The whole timing run is meant to take less
 * than 4 minutes on an H200.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "spaces: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                     \
                    cudaGetErrorString(e_));                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int cdiv(long a, long b) { return (int)((a + b - 1) / b); }
static int g_sms;

/* ---- inputs: small integers (times a power of two), so that every sum is exact ------- */

__global__ void fill_ints(float *p, size_t n, uint32_t seed, int range, float scale)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = (float)((int)(h % (2 * range + 1)) - range) * scale;
    }
}

static float *dev_alloc(size_t n)
{
    float *p;
    CK(cudaMalloc(&p, n * sizeof(float)));
    return p;
}

static float *dev_ints(size_t n, uint32_t seed, int range, float scale)
{
    float *p = dev_alloc(n);
    fill_ints<<<1024, 256>>>(p, n, seed, range, scale);
    CK(cudaGetLastError());
    return p;
}

/* Counts the elements of out that differ from ref by more than atol + rtol |ref| (a NaN
 * counts). */
__global__ void count_bad(const float *out, const float *ref, size_t n, float rtol, float atol,
                          unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float o = out[i], r = ref[i];
        if (!(fabsf(o - r) <= atol + rtol * fabsf(r))) mine++;
    }
    if (mine) atomicAdd(bad, mine);
}

/* ---- 1. GEMM: C[M][N] = A[M][K] B[K][N], a block of (BX, BY) threads computes a tile of
 * (BY*TM) x (BX*TN) outputs, TM x TN per thread (rows strided by BY, columns by BX),
 * through shared tiles TK deep. ---------------------------------------------------------- */

#define GEMM_MAXT 8
__global__ void gemm_tiled(const float *__restrict__ A, const float *__restrict__ B,
                           float *__restrict__ C, int M, int N, int K, int TM, int TN, int TK)
{
    extern __shared__ float sm[];
    const int BX = blockDim.x, BY = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int tile_m = BY * TM, tile_n = BX * TN;
    float *As = sm, *Bs = sm + tile_m * TK;
    const int row0 = blockIdx.y * tile_m, col0 = blockIdx.x * tile_n;
    const int tid = ty * BX + tx, nth = BX * BY;
    float acc[GEMM_MAXT][GEMM_MAXT];
#pragma unroll
    for (int i = 0; i < GEMM_MAXT; i++)
#pragma unroll
        for (int j = 0; j < GEMM_MAXT; j++)
            acc[i][j] = 0;
    for (int k0 = 0; k0 < K; k0 += TK) {
        for (int i = tid; i < tile_m * TK; i += nth) {
            int r = i / TK, c = i % TK;
            As[i] = row0 + r < M && k0 + c < K ? A[(size_t)(row0 + r) * K + k0 + c] : 0.f;
        }
        for (int i = tid; i < TK * tile_n; i += nth) {
            int r = i / tile_n, c = i % tile_n;
            Bs[i] = k0 + r < K && col0 + c < N ? B[(size_t)(k0 + r) * N + col0 + c] : 0.f;
        }
        __syncthreads();
        for (int kk = 0; kk < TK; kk++) {
            float a[GEMM_MAXT], b[GEMM_MAXT];
#pragma unroll
            for (int i = 0; i < GEMM_MAXT; i++)
                a[i] = i < TM ? As[(ty + i * BY) * TK + kk] : 0.f;
#pragma unroll
            for (int j = 0; j < GEMM_MAXT; j++)
                b[j] = j < TN ? Bs[kk * tile_n + tx + j * BX] : 0.f;
#pragma unroll
            for (int i = 0; i < GEMM_MAXT; i++)
#pragma unroll
                for (int j = 0; j < GEMM_MAXT; j++)
                    if (i < TM && j < TN) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < GEMM_MAXT; i++)
#pragma unroll
        for (int j = 0; j < GEMM_MAXT; j++) {
            int r = row0 + ty + i * BY, c = col0 + tx + j * BX;
            if (i < TM && j < TN && r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
}

__global__ void gemm_ref(const float *A, const float *B, float *C, int M, int N, int K)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M || c >= N) return;
    float s = 0;
    for (int k = 0; k < K; k++)
        s += A[(size_t)r * K + k] * B[(size_t)k * N + c];
    C[(size_t)r * N + c] = s;
}

/* ---- 2. 5-point stencil on H x W: a block of (BX, BY) threads, IX x IY points per thread,
 * contiguous (MODE 0) or strided by the block's size (MODE 1). --------------------------- */

__device__ __forceinline__ float stencil_at(const float *in, int W, int H, int x, int y)
{
    if (x == 0 || y == 0 || x == W - 1 || y == H - 1) return in[(size_t)y * W + x];
    size_t i = (size_t)y * W + x;
    return 0.25f * (in[i - 1] + in[i + 1] + in[i - W] + in[i + W]) - in[i];
}

__global__ void stencil2d(const float *__restrict__ in, float *__restrict__ out, int W, int H,
                          int IX, int IY, int MODE)
{
    int bx = blockIdx.x * blockDim.x * IX, by = blockIdx.y * blockDim.y * IY;
    for (int j = 0; j < IY; j++)
        for (int i = 0; i < IX; i++) {
            int x = MODE ? bx + i * blockDim.x + threadIdx.x : bx + threadIdx.x * IX + i;
            int y = MODE ? by + j * blockDim.y + threadIdx.y : by + threadIdx.y * IY + j;
            if (x < W && y < H) out[(size_t)y * W + x] = stencil_at(in, W, H, x, y);
        }
}

__global__ void stencil_ref(const float *in, float *out, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < W) out[(size_t)y * W + x] = stencil_at(in, W, H, x, y);
}

/* ---- 3. row sums of an R x N matrix: BX threads per row, BY rows per block, UNROLL loads
 * per step, the grid capped at GRIDF blocks per SM (0: one block per BY rows). --------- */

__global__ void rowsum(const float *__restrict__ a, float *__restrict__ out, int R, int N,
                       int UNROLL)
{
    extern __shared__ float part[]; /* blockDim.y * (blockDim.x / 32) warp sums */
    const int BX = blockDim.x, nw = BX / 32, lane = threadIdx.x % 32, w = threadIdx.x / 32;
    for (int r0 = blockIdx.x * blockDim.y; r0 < R; r0 += gridDim.x * blockDim.y) {
        int r = r0 + threadIdx.y;
        float s = 0;
        if (r < R) {
            const float *row = a + (size_t)r * N;
            for (int c = threadIdx.x; c < N; c += BX * UNROLL) {
                float v[8];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    v[u] = u < UNROLL && c + u * BX < N ? row[c + u * BX] : 0.f;
#pragma unroll
                for (int u = 0; u < 8; u++)
                    s += v[u];
            }
        }
        for (int o = 16; o; o >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, o);
        if (lane == 0) part[threadIdx.y * nw + w] = s;
        __syncthreads();
        if (threadIdx.x == 0 && r < R) {
            float t = 0;
            for (int k = 0; k < nw; k++)
                t += part[threadIdx.y * nw + k];
            out[r] = t;
        }
        __syncthreads();
    }
}

__global__ void rowsum_ref(const float *a, float *out, int R, int N)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float s = 0;
    for (int c = 0; c < N; c++)
        s += a[(size_t)r * N + c];
    out[r] = s;
}

/* ---- 4. transpose of an H x W matrix: tiles of TY rows x TX columns through shared memory
 * (row pitch TX + PAD), a block of (TX, BR) threads, TPB tiles per block down the rows. -- */

__global__ void transpose_tiled(const float *__restrict__ in, float *__restrict__ out, int W,
                                int H, int TY, int PAD, int TPB)
{
    extern __shared__ float tile[];
    const int TX = blockDim.x, BR = blockDim.y, pitch = TX + PAD;
    const int x0 = blockIdx.x * TX, tid = threadIdx.y * TX + threadIdx.x;
    for (int t = 0; t < TPB; t++) {
        int y0 = (blockIdx.y * TPB + t) * TY;
        if (y0 >= H) break;
        for (int j = threadIdx.y; j < TY; j += BR) {
            int x = x0 + threadIdx.x, y = y0 + j;
            if (x < W && y < H) tile[j * pitch + threadIdx.x] = in[(size_t)y * W + x];
        }
        __syncthreads();
        for (int i = tid; i < TX * TY; i += TX * BR) {
            int r = i / TY, c = i % TY; /* out row x0 + r, column y0 + c */
            if (x0 + r < W && y0 + c < H) out[(size_t)(x0 + r) * H + y0 + c] = tile[c * pitch + r];
        }
        __syncthreads();
    }
}

__global__ void transpose_ref(const float *in, float *out, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < W) out[(size_t)x * H + y] = in[(size_t)y * W + x];
}

/* ---- 5. 1-D convolution, TAPS taps centred (zeros outside): a block computes chunks of
 * blockDim.x * OPT outputs, OPT per thread, contiguous (MODE 0) or strided (MODE 1); the
 * chunk's input staged in shared memory when SMEM; GRIDF blocks per SM (0: one block per
 * chunk) walk the chunks. ---------------------------------------------------------------- */

#define TAPS 31
__constant__ float c_w[TAPS];

__device__ __forceinline__ float conv_at(const float *in, int n, int i)
{
    float s = 0;
#pragma unroll
    for (int k = 0; k < TAPS; k++) {
        int j = i + k - TAPS / 2;
        s += c_w[k] * (j >= 0 && j < n ? in[j] : 0.f);
    }
    return s;
}

__global__ void conv1d(const float *__restrict__ in, float *__restrict__ out, int n, int OPT,
                       int SMEM, int MODE)
{
    extern __shared__ float st[];
    const int B = blockDim.x, chunk = B * OPT;
    for (long c0 = (long)blockIdx.x * chunk; c0 < n; c0 += (long)gridDim.x * chunk) {
        if (SMEM) {
            for (int i = threadIdx.x; i < chunk + TAPS - 1; i += B) {
                long j = c0 + i - TAPS / 2;
                st[i] = j >= 0 && j < n ? in[j] : 0.f;
            }
            __syncthreads();
        }
        for (int o = 0; o < OPT; o++) {
            int k = MODE ? o * B + threadIdx.x : threadIdx.x * OPT + o;
            long i = c0 + k;
            if (i >= n) continue;
            float s;
            if (SMEM) {
                s = 0;
#pragma unroll
                for (int t = 0; t < TAPS; t++)
                    s += c_w[t] * st[k + t];
            } else
                s = conv_at(in, n, (int)i);
            out[i] = s;
        }
        if (SMEM) __syncthreads();
    }
}

__global__ void conv_ref(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = conv_at(in, n, i);
}

/* ---- the spaces -------------------------------------------------------------------- */

struct param {
    const char *name;
    std::vector<int> vals;
    int def;
};

struct space {
    const char *name, *what;
    std::vector<param> params;
    void (*setup)(space *);
    /* launches config v (values, in params' order) on the default stream */
    cudaError_t (*launch)(const space *, const int *v);
    const float *in, *in2;
    float *out, *ref;
    size_t out_n;
    float rtol, atol;
};

static const int GM = 1024, GN = 1024, GK = 1024;
static void gemm_setup(space *s)
{
    s->in = dev_ints((size_t)GM * GK, 1, 2, 0.25f);
    s->in2 = dev_ints((size_t)GK * GN, 2, 2, 0.25f);
    s->out_n = (size_t)GM * GN;
    s->out = dev_alloc(s->out_n);
    s->ref = dev_alloc(s->out_n);
    gemm_ref<<<dim3(GN / 16, GM / 16), dim3(16, 16)>>>(s->in, s->in2, s->ref, GM, GN, GK);
}
static cudaError_t gemm_launch(const space *s, const int *v)
{
    int BX = v[0], BY = v[1], TM = v[2], TN = v[3], TK = v[4];
    size_t sh = (size_t)(BY * TM + BX * TN) * TK * sizeof(float);
    gemm_tiled<<<dim3(cdiv(GN, BX * TN), cdiv(GM, BY * TM)), dim3(BX, BY), sh>>>(
        s->in, s->in2, s->out, GM, GN, GK, TM, TN, TK);
    return cudaGetLastError();
}

static const int SW = 4096, SH = 4096;
static void stencil_setup(space *s)
{
    s->in = dev_ints((size_t)SW * SH, 3, 8, 1.0f);
    s->out_n = (size_t)SW * SH;
    s->out = dev_alloc(s->out_n);
    s->ref = dev_alloc(s->out_n);
    stencil_ref<<<dim3(cdiv(SW, 256), SH), 256>>>(s->in, s->ref, SW, SH);
}
static cudaError_t stencil_launch(const space *s, const int *v)
{
    int BX = v[0], BY = v[1], IX = v[2], IY = v[3], MODE = v[4];
    stencil2d<<<dim3(cdiv(SW, BX * IX), cdiv(SH, BY * IY)), dim3(BX, BY)>>>(s->in, s->out, SW, SH,
                                                                         IX, IY, MODE);
    return cudaGetLastError();
}

static const int RR = 16384, RN = 4096;
static void rowsum_setup(space *s)
{
    s->in = dev_ints((size_t)RR * RN, 4, 3, 1.0f);
    s->out_n = RR;
    s->out = dev_alloc(s->out_n);
    s->ref = dev_alloc(s->out_n);
    rowsum_ref<<<cdiv(RR, 128), 128>>>(s->in, s->ref, RR, RN);
}
static cudaError_t rowsum_launch(const space *s, const int *v)
{
    int BX = v[0], BY = v[1], UNROLL = v[2], GRIDF = v[3];
    int blocks = cdiv(RR, BY);
    if (GRIDF) blocks = std::min(blocks, g_sms * GRIDF);
    rowsum<<<blocks, dim3(BX, BY), BY * (BX / 32) * sizeof(float)>>>(s->in, s->out, RR, RN,
                                                                       UNROLL);
    return cudaGetLastError();
}

static const int TW = 4096, TH = 4096;
static void transpose_setup(space *s)
{
    s->in = dev_ints((size_t)TW * TH, 5, 1000, 1.0f);
    s->out_n = (size_t)TW * TH;
    s->out = dev_alloc(s->out_n);
    s->ref = dev_alloc(s->out_n);
    transpose_ref<<<dim3(cdiv(TW, 256), TH), 256>>>(s->in, s->ref, TW, TH);
}
static cudaError_t transpose_launch(const space *s, const int *v)
{
    int TX = v[0], TY = v[1], BR = v[2], PAD = v[3], TPB = v[4];
    transpose_tiled<<<dim3(cdiv(TW, TX), cdiv(TH, TY * TPB)), dim3(TX, BR),
                      (size_t)TY * (TX + PAD) * sizeof(float)>>>(s->in, s->out, TW, TH, TY, PAD,
                                                                 TPB);
    return cudaGetLastError();
}

static const int CN = 1 << 24;
static void conv_setup(space *s)
{
    float w[TAPS];
    for (int k = 0; k < TAPS; k++)
        w[k] = (float)((k * 7) % 9 - 4) * 0.125f;
    CK(cudaMemcpyToSymbol(c_w, w, sizeof w));
    s->in = dev_ints(CN, 6, 16, 1.0f);
    s->out_n = CN;
    s->out = dev_alloc(s->out_n);
    s->ref = dev_alloc(s->out_n);
    conv_ref<<<cdiv(CN, 256), 256>>>(s->in, s->ref, CN);
}
static cudaError_t conv_launch(const space *s, const int *v)
{
    int B = v[0], OPT = v[1], SMEM = v[2], MODE = v[3], GRIDF = v[4];
    int blocks = cdiv(CN, (long)B * OPT);
    if (GRIDF) blocks = std::min(blocks, g_sms * GRIDF);
    size_t sh = SMEM ? (size_t)(B * OPT + TAPS - 1) * sizeof(float) : 0;
    conv1d<<<blocks, B, sh>>>(s->in, s->out, CN, OPT, SMEM, MODE);
    return cudaGetLastError();
}

static std::vector<space> make_spaces(void)
{
    std::vector<space> v;
    space s = {};
    s = {"gemm", "C = A B, 1024 x 1024 x 1024, f32 (tiled, items per thread TM x TN)",
         {{"BX", {4, 8, 16, 32}, 16},
          {"BY", {4, 8, 16, 32}, 16},
          {"TM", {1, 2, 4, 8}, 1},
          {"TN", {1, 2, 4, 8}, 1},
          {"TK", {4, 8, 16, 32}, 16}},
         gemm_setup, gemm_launch};
    s.rtol = 0, s.atol = 0; /* exact: the inputs are multiples of 1/4 */
    v.push_back(s);
    s = {"stencil2d", "5-point stencil, 4096 x 4096 f32 (items per thread IX x IY)",
         {{"BX", {8, 16, 32, 64, 128, 256}, 32},
          {"BY", {1, 2, 4, 8, 16}, 8},
          {"IX", {1, 2, 4, 8}, 1},
          {"IY", {1, 2, 4, 8}, 1},
          {"MODE", {0, 1}, 0}},
         stencil_setup, stencil_launch};
    s.rtol = 1e-6f, s.atol = 0;
    v.push_back(s);
    s = {"rowsum", "row sums, 16384 x 4096 f32 (threads per row, rows per block, unroll, grid)",
         {{"BX", {32, 64, 128, 256, 512, 1024}, 256},
          {"BY", {1, 2, 4, 8, 16}, 1},
          {"UNROLL", {1, 2, 4, 8}, 1},
          {"GRIDF", {1, 2, 4, 8, 0}, 0}},
         rowsum_setup, rowsum_launch};
    s.rtol = 0, s.atol = 0; /* exact: integer inputs */
    v.push_back(s);
    s = {"transpose", "transpose, 4096 x 4096 f32 (tile TY x TX, block rows, padding, tiles per block)",
         {{"TX", {8, 16, 32, 64}, 32},
          {"TY", {8, 16, 32, 64}, 32},
          {"BR", {1, 2, 4, 8, 16, 32}, 8},
          {"PAD", {0, 1}, 1},
          {"TPB", {1, 2, 4}, 1}},
         transpose_setup, transpose_launch};
    s.rtol = 0, s.atol = 0;
    v.push_back(s);
    s = {"conv1d", "1-D convolution, 31 taps, 2^24 f32 (outputs per thread, staging, grid)",
         {{"B", {32, 64, 128, 256, 512, 1024}, 256},
          {"OPT", {1, 2, 4, 8, 16}, 1},
          {"SMEM", {0, 1}, 0},
          {"MODE", {0, 1}, 0},
          {"GRIDF", {1, 2, 4, 8, 0}, 0}},
         conv_setup, conv_launch};
    s.rtol = 1e-6f, s.atol = 0;
    v.push_back(s);
    return v;
}

static size_t space_size(const space &s)
{
    size_t n = 1;
    for (const param &p : s.params)
        n *= p.vals.size();
    return n;
}

/* config i's values, the last name varying fastest */
static void values_of(const space &s, size_t i, int *v)
{
    for (size_t d = s.params.size(); d-- > 0;) {
        v[d] = s.params[d].vals[i % s.params[d].vals.size()];
        i /= s.params[d].vals.size();
    }
}

/* ---- timing ------------------------------------------------------------------------ */

static unsigned long long *g_bad;

/* One run of config v against the reference: 1 right, 0 a launch error or a wrong output. */
static int check_config(const space &s, const int *v)
{
    CK(cudaMemset(s.out, 0xff, s.out_n * sizeof(float))); /* NaNs */
    if (s.launch(&s, v) != cudaSuccess) return 0;
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "spaces: %s: %s: the context is lost; stopping\n", s.name,
                cudaGetErrorString(e));
        exit(1);
    }
    CK(cudaMemset(g_bad, 0, sizeof *g_bad));
    count_bad<<<1024, 256>>>(s.out, s.ref, s.out_n, s.rtol, s.atol, g_bad);
    unsigned long long bad;
    CK(cudaMemcpy(&bad, g_bad, sizeof bad, cudaMemcpyDeviceToHost));
    return bad == 0;
}

static cudaEvent_t g_ev[2];

static float time_once(const space &s, const int *v)
{
    CK(cudaEventRecord(g_ev[0]));
    s.launch(&s, v);
    CK(cudaEventRecord(g_ev[1]));
    CK(cudaEventSynchronize(g_ev[1]));
    float ms;
    CK(cudaEventElapsedTime(&ms, g_ev[0], g_ev[1]));
    return ms;
}

/* Median of up to max_runs timed runs after two warm-ups (fewer runs when slow). */
static double time_config(const space &s, const int *v, int max_runs)
{
    float first = time_once(s, v);
    time_once(s, v);
    int runs = first > 0 ? (int)(50.0 / first) : max_runs;
    runs = std::max(3, std::min(max_runs, runs));
    std::vector<float> t(runs);
    for (int r = 0; r < runs; r++)
        t[r] = time_once(s, v);
    std::sort(t.begin(), t.end());
    return runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2.0;
}

static void warm_clock(const space &s, const int *v)
{
    CK(cudaEventRecord(g_ev[0]));
    float ms = 0;
    while (ms < 300) {
        for (int i = 0; i < 10; i++)
            s.launch(&s, v);
        CK(cudaEventRecord(g_ev[1]));
        CK(cudaEventSynchronize(g_ev[1]));
        CK(cudaEventElapsedTime(&ms, g_ev[0], g_ev[1]));
    }
}

static void write_header(FILE *f, const space &s, int max_runs)
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    fprintf(f, "# space: %s: %s (tools/bench/search/spaces.cu)\n# params:", s.name, s.what);
    for (const param &p : s.params) {
        fprintf(f, " %s=", p.name);
        for (size_t i = 0; i < p.vals.size(); i++)
            fprintf(f, "%s%d", i ? "," : "", p.vals[i]);
    }
    fprintf(f, "\n# default:");
    for (const param &p : s.params)
        fprintf(f, " %s=%d", p.name, p.def);
    fprintf(f, "\n# device: %s, %d SMs; each config checked against the reference, two "
               "warm-ups, median of up to %d timed runs (cudaEvents)\n",
            prop.name, prop.multiProcessorCount, max_runs);
    for (const param &p : s.params)
        fprintf(f, "%s\t", p.name);
    fprintf(f, "median_ms\tvalid\n");
}

static int run_space(space &s, const char *dir, int max_runs, int check_only)
{
    s.setup(&s);
    CK(cudaDeviceSynchronize());
    std::vector<int> def;
    for (const param &p : s.params)
        def.push_back(p.def);
    if (!check_config(s, def.data())) {
        fprintf(stderr, "spaces: %s: the default config does not match the reference\n", s.name);
        return 1;
    }
    if (check_only) {
        printf("%s: default config right (%zu configs)\n", s.name, space_size(s));
        return 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tsv", dir, s.name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    write_header(f, s, max_runs);
    auto t0 = std::chrono::steady_clock::now();
    warm_clock(s, def.data());
    size_t n = space_size(s), nvalid = 0;
    double best = INFINITY;
    std::vector<int> v(s.params.size());
    for (size_t i = 0; i < n; i++) {
        values_of(s, i, v.data());
        int ok = check_config(s, v.data());
        double t = ok ? time_config(s, v.data(), max_runs) : 0;
        for (int x : v)
            fprintf(f, "%d\t", x);
        fprintf(f, "%.6f\t%d\n", t, ok);
        nvalid += ok;
        if (ok && t < best) best = t;
    }
    fclose(f);
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("%s: %zu configs, %zu valid, best %.4f ms, %.1f s -> %s\n", s.name, n, nvalid, best,
           secs, path);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = "tools/bench/search/data", *only = NULL;
    int max_runs = 10, check_only = 0, list = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--space") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) max_runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--check")) check_only = 1;
        else if (!strcmp(argv[i], "--list")) list = 1;
        else {
            fprintf(stderr, "usage: spaces [--out DIR] [--space NAME] [--runs N] [--check] [--list]\n");
            return 2;
        }
    }
    std::vector<space> spaces = make_spaces();
    if (list) {
        for (const space &s : spaces)
            printf("%s\t%zu configs\t%s\n", s.name, space_size(s), s.what);
        return 0;
    }
    if (!check_only) mkdir(dir, 0777); /* its parent must exist; fopen says so otherwise */
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&g_bad, sizeof *g_bad));
    CK(cudaEventCreate(&g_ev[0]));
    CK(cudaEventCreate(&g_ev[1]));
    int rc = 0;
    for (space &s : spaces) {
        if (only && strcmp(only, s.name)) continue;
        rc |= run_space(s, dir, max_runs < 1 ? 1 : max_runs, check_only);
        cudaFree((void *)s.in);
        cudaFree((void *)s.in2);
        cudaFree(s.out);
        cudaFree(s.ref);
    }
    return rc;
}
