/*
 * wavefront -- a sequence alignment score (Needleman-Wunsch, linear gaps) of two random
 * 1024-letter sequences by dynamic programming over anti-diagonals: one launch per
 * diagonal, 2047 of them, each covering the whole score matrix with an exact grid of
 * 16 x 16 tiles and no bounds check (a thread computes its cell when the cell is on the
 * launch's diagonal). A config that keeps the grid and grows the tile reaches rows past the
 * end of the matrix (an illegal address), and the diagonal is a key part: a new key at every
 * launch. A fault family for the tuner (docs/tuning.md), shaped like Rodinia's needle.
 *
 * Prints TOTAL_MS (GPU time of the recurrence) and LAUNCHES; checks the score matrix
 * against a CPU run (exit 1 if it differs); writes the matrix to argv[1].
 */
#include "../../tests/gpu/common.h"

__global__ void nw_diagonal(int *__restrict__ s, const char *__restrict__ x,
                            const char *__restrict__ y, int n, int d)
{
    int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    int w = n + 1;
    int here = s[(size_t)i * w + j]; /* no bounds check: the grid covers the matrix exactly */
    if (i >= 1 && j >= 1 && i <= n && j <= n && i + j == d) {
        int m = s[(size_t)(i - 1) * w + j - 1] + (x[i - 1] == y[j - 1] ? 2 : -1);
        int u = s[(size_t)(i - 1) * w + j] - 1, l = s[(size_t)i * w + j - 1] - 1;
        here = max(m, max(u, l));
        s[(size_t)i * w + j] = here;
    }
}

int main(int argc, char **argv)
{
    Out out(out_path(argc, argv));
    const int n = 1024, w = n + 1;
    /* the matrix is padded to whole tiles (n + 1 rounded up to 16 would not divide): the
     * grid covers (n + 16) x (n + 16) cells of a (n + 16) x w allocation read row-major */
    const int cover = n + 16;
    std::vector<char> hx(n), hy(n);
    std::vector<int> r(n);
    fill_int(r, 5, 4);
    for (int i = 0; i < n; ++i)
        hx[i] = "ACGT"[r[i] - 1];
    fill_int(r, 6, 4);
    for (int i = 0; i < n; ++i)
        hy[i] = "ACGT"[r[i] - 1];
    std::vector<int> h((size_t)cover * w + cover, 0);
    for (int i = 0; i <= n; ++i)
        h[(size_t)i * w] = -i;
    for (int j = 0; j <= n; ++j)
        h[j] = -j;
    int *s;
    char *x, *y;
    CK(cudaMalloc(&s, h.size() * 4));
    CK(cudaMalloc(&x, n));
    CK(cudaMalloc(&y, n));
    CK(cudaMemcpy(s, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(x, hx.data(), n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), n, cudaMemcpyHostToDevice));
    const dim3 block(16, 16), grid(cover / 16, cover / 16);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int d = 2; d <= 2 * n; ++d) {
        nw_diagonal<<<grid, block>>>(s, x, y, n, d);
        LAUNCHED();
    }
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("TOTAL_MS %.6f\n", ms);
    std::vector<int> o(h.size());
    CK(cudaMemcpy(o.data(), s, o.size() * 4, cudaMemcpyDeviceToHost));
    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j) {
            int m = h[(size_t)(i - 1) * w + j - 1] + (hx[i - 1] == hy[j - 1] ? 2 : -1);
            int u = h[(size_t)(i - 1) * w + j] - 1, l = h[(size_t)i * w + j - 1] - 1;
            h[(size_t)i * w + j] = std::max(m, std::max(u, l));
        }
    for (int i = 0; i <= n; ++i)
        for (int j = 0; j <= n; ++j)
            if (o[(size_t)i * w + j] != h[(size_t)i * w + j]) {
                fprintf(stderr, "wavefront: score[%d][%d] = %d, expected %d\n", i, j,
                        o[(size_t)i * w + j], h[(size_t)i * w + j]);
                return 1;
            }
    out.put(o);
    CK(cudaFree(s));
    CK(cudaFree(x));
    CK(cudaFree(y));
    out.close();
    finish();
    return 0;
}
