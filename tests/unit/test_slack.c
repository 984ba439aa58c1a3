/*
 * The trial helper's guard bytes (shim/session/slack.c): the slack of the staged windows (their
 * bytes outside every region), filled and checked, over a stand-in driver whose device
 * memory is host memory (a CUdeviceptr is a host address) and a host comparison in place
 * of the GPU's; the sequence's kernel (xmt_seq) is stood in for by its host twin.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "hostmem_driver.h"
#include "slack.h"
#include "verify.h"

struct xmt_driver xmt_drv;

static int seq_calls, on_gpu;

/* gpucheck's bitwise comparison, on the host (element size 1). */
CUresult xmt_gc_compare(xmt_gc *g, const xmt_gc_cmp *c, size_t n, xmt_gc_result *out)
{
    (void)g;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *a = (const uint8_t *)(uintptr_t)c[i].ref;
        const uint8_t *b = (const uint8_t *)(uintptr_t)c[i].got;
        out[i].count = 0;
        out[i].first = UINT64_MAX;
        for (size_t j = 0; j < c[i].bytes; j++)
            if (a[j] != b[j] && out[i].count++ == 0) out[i].first = j;
    }
    return CUDA_SUCCESS;
}

/* The kernels "load" when a test sets on_gpu; xmt_seq is its host twin, word by word. */
int xmt_gc_on_gpu(const xmt_gc *g)
{
    return g && on_gpu;
}
CUresult xmt_gc_sequence(xmt_gc *g, CUdeviceptr dst, uint64_t words, uint64_t seed)
{
    ck_assert(xmt_gc_on_gpu(g));
    seq_calls++;
    xmt_verify_seq_fill((uint64_t *)(uintptr_t)dst, words, seed);
    return CUDA_SUCCESS;
}

static void stand_in(void)
{
    hostmem_install();
}

#define W 4096 /* a window in these tests */

/* Two windows: the first holds two regions (one overlapping the other, out of order), the
 * second one region at its very start; a region outside every window is ignored. */
START_TEST(slack_between_and_around)
{
    CUdeviceptr win[] = {0x100000, 0x200000};
    size_t wb[] = {W, W};
    xmt_region r[] = {{.base = 0x100800, .bytes = 0x100},
                      {.base = 0x100100, .bytes = 0x200},
                      {.base = 0x100200, .bytes = 0x200},
                      {.base = 0x200000, .bytes = 0x10},
                      {.base = 0x900000, .bytes = 0x10}};
    xmt_slack g;
    ck_assert_int_eq(xmt_slack_find(win, wb, 2, r, 5, &g), 0);
    ck_assert_uint_eq(g.n, 4);
    /* before the first region, between the merged pair and the third, after it; after the
     * second window's region */
    ck_assert_uint_eq(g.spans[0].at, 0x100000);
    ck_assert_uint_eq(g.spans[0].bytes, 0x100);
    ck_assert_int_eq(g.spans[0].after, -1);
    ck_assert_int_eq(g.spans[0].before, 1);
    ck_assert_uint_eq(g.spans[1].at, 0x100400);
    ck_assert_uint_eq(g.spans[1].bytes, 0x400);
    ck_assert_int_eq(g.spans[1].after, 2);
    ck_assert_int_eq(g.spans[1].before, 0);
    ck_assert_uint_eq(g.spans[2].at, 0x100900);
    ck_assert_uint_eq(g.spans[2].bytes, W - 0x900);
    ck_assert_int_eq(g.spans[2].after, 0);
    ck_assert_int_eq(g.spans[2].before, -1);
    ck_assert_uint_eq(g.spans[3].at, 0x200010);
    ck_assert_uint_eq(g.spans[3].bytes, W - 0x10);
    ck_assert_int_eq(g.spans[3].after, 3);
    ck_assert_uint_eq(g.total, 0x100 + 0x400 + (W - 0x900) + (W - 0x10));
    ck_assert_uint_eq(g.largest, W - 0x10);
    xmt_slack_free(&g);
}
END_TEST

/* A window its regions cover whole has no slack; so has no window at all. */
START_TEST(slack_none)
{
    CUdeviceptr win[] = {0x100000};
    size_t wb[] = {W};
    xmt_region r[] = {{.base = 0x100000, .bytes = W / 2}, {.base = 0x100000 + W / 2, .bytes = W}};
    xmt_slack g;
    ck_assert_int_eq(xmt_slack_find(win, wb, 1, r, 2, &g), 0);
    ck_assert_uint_eq(g.n, 0);
    ck_assert_uint_eq(g.total, 0);
    xmt_slack_free(&g);
    ck_assert_int_eq(xmt_slack_find(NULL, NULL, 0, r, 2, &g), 0);
    ck_assert_uint_eq(g.n, 0);
    xmt_slack_free(&g);
}
END_TEST

/* Filled, the slack checks unchanged; a byte written past a region's end is found (its
 * span and offset), and so is a copy of one span's bytes into another (a kernel copying
 * what it read past one buffer into the slack past another), which a guard of one
 * repeated byte would not see. */
START_TEST(slack_fill_and_check)
{
    stand_in();
    uint8_t *mem = aligned_alloc(4096, 2 * W);
    memset(mem, 0x11, 2 * W);
    CUdeviceptr base = (CUdeviceptr)(uintptr_t)mem;
    CUdeviceptr win[] = {base, base + W};
    size_t wb[] = {W, W};
    xmt_region r[] = {{.base = base + 100, .bytes = 1000}, {.base = base + W + 100, .bytes = 1000}};
    xmt_slack g;
    ck_assert_int_eq(xmt_slack_find(win, wb, 2, r, 2, &g), 0);
    ck_assert_uint_eq(g.n, 4);
    uint8_t *pat = malloc(g.pattern_bytes);
    g.pattern = (CUdeviceptr)(uintptr_t)pat;
    ck_assert_int_eq(xmt_slack_fill(&g, NULL, NULL), CUDA_SUCCESS);
    ck_assert_int_eq(mem[100], 0x11); /* the regions untouched */
    ck_assert_int_eq(mem[W + 1099], 0x11);
    uint64_t changed, first;
    size_t span;
    ck_assert_int_eq(xmt_slack_check(&g, NULL, &changed, &span, &first), CUDA_SUCCESS);
    ck_assert_uint_eq(changed, 0);
    /* a write 3 bytes past the first region's end (its value differs from the guard's) */
    mem[1100 + 3] ^= 0x5A;
    ck_assert_int_eq(xmt_slack_check(&g, NULL, &changed, &span, &first), CUDA_SUCCESS);
    ck_assert_uint_eq(changed, 1);
    ck_assert_uint_eq(span, 1);
    ck_assert_uint_eq(first, 3);
    ck_assert_int_eq(g.spans[span].after, 0);
    ck_assert_int_eq(xmt_slack_fill(&g, NULL, NULL), CUDA_SUCCESS);
    ck_assert_int_eq(xmt_slack_check(&g, NULL, &changed, &span, &first), CUDA_SUCCESS);
    ck_assert_uint_eq(changed, 0);
    /* the 64 bytes past the first region copied past the second's */
    memcpy(mem + W + 1100, mem + 1100, 64);
    ck_assert_int_eq(xmt_slack_check(&g, NULL, &changed, &span, &first), CUDA_SUCCESS);
    ck_assert_uint_ge(changed, 56);
    ck_assert_uint_eq(span, 3);
    ck_assert_int_eq(g.spans[span].after, 1);
    xmt_slack_free(&g);
    free(pat);
    free(mem);
}
END_TEST

/* The pattern is made once per arming: on the GPU (xmt_seq, no copy from the host) when
 * gpucheck's kernels are loaded, else on the host and copied; byte for byte the same
 * sequence either way, in whole words even when the largest span is not. */
START_TEST(pattern_made_on_the_gpu_or_copied)
{
    stand_in();
    uint8_t *mem = aligned_alloc(4096, W);
    CUdeviceptr base = (CUdeviceptr)(uintptr_t)mem;
    CUdeviceptr win[] = {base};
    size_t wb[] = {W};
    xmt_region r[] = {{.base = base + 101, .bytes = 1000}};
    uint8_t *pat[2];
    xmt_gc gc;
    memset(&gc, 0, sizeof gc);
    for (int gpu = 0; gpu < 2; gpu++) {
        xmt_slack g;
        ck_assert_int_eq(xmt_slack_find(win, wb, 1, r, 1, &g), 0);
        ck_assert_uint_eq(g.largest, W - 1101);
        ck_assert_uint_eq(g.pattern_bytes % 8, 0);
        ck_assert_uint_ge(g.pattern_bytes, g.largest + 16 * (size_t)XMT_SLACK_OFFSETS);
        pat[gpu] = calloc(1, g.pattern_bytes);
        g.pattern = (CUdeviceptr)(uintptr_t)pat[gpu];
        on_gpu = gpu;
        hostmem_calls.htod = seq_calls = 0;
        for (int again = 0; again < 2; again++) /* made once, the spans filled twice */
            ck_assert_int_eq(xmt_slack_fill(&g, &gc, NULL), CUDA_SUCCESS);
        ck_assert_int_eq(hostmem_calls.htod, !gpu);
        ck_assert_int_eq(seq_calls, gpu);
        for (size_t i = 0; i < g.pattern_bytes / 8; i++) {
            uint64_t w;
            memcpy(&w, pat[gpu] + 8 * i, 8);
            ck_assert_uint_eq(w, xmt_verify_seq_word(XMT_SLACK_SEED, i));
        }
        ck_assert_int_eq(memcmp(mem, pat[gpu], 101), 0);                  /* span 0 from byte 0 */
        ck_assert_int_eq(memcmp(mem + 1101, pat[gpu] + 16, W - 1101), 0); /* span 1 from 16 */
        if (gpu) ck_assert_int_eq(memcmp(pat[0], pat[1], g.pattern_bytes), 0);
        xmt_slack_free(&g);
    }
    on_gpu = 0;
    free(pat[0]);
    free(pat[1]);
    free(mem);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slack");
    TCase *t = tcase_create("slack");
    tcase_add_test(t, slack_between_and_around);
    tcase_add_test(t, slack_none);
    tcase_add_test(t, slack_fill_and_check);
    tcase_add_test(t, pattern_made_on_the_gpu_or_copied);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
