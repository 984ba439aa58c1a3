/*
 * Fault families (shim/session/family.c): which candidates a faulted one condemns, on the launch
 * shapes XMATUNE_AUTO derives (policy/derive.c) for a one-dimensional kernel launched with
 * blocks of 32 covering n = 2^20 exactly, and for a two-dimensional one; and the groups
 * (idioms, a policy's configs and space) families are drawn within.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

static xmt_dims d1(uint32_t gx, uint32_t bx, uint32_t shared)
{
    return (xmt_dims){{gx, 1, 1}, {bx, 1, 1}, shared};
}

static xmt_dims d2(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by)
{
    return (xmt_dims){{gx, gy, 1}, {bx, by, 1}, 0};
}

/* grid0 (the program's grid kept) with 64 threads faulted: every larger block on that
 * grid reaches further (more threads per block, more threads in x); the smaller block does
 * not, nor does a grid covering the same threads (cdiv). */
START_TEST(grid0_larger_blocks)
{
    xmt_dims own = d1(32768, 32, 0), f = d1(32768, 64, 0);
    char why[200];
    for (uint32_t b = 64; b <= 1024; b *= 2) {
        xmt_dims c = d1(32768, b, 0);
        ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 1);
    }
    xmt_dims c = d1(32768, 128, 0);
    xmt_family_reaches(&own, &f, &c, why, sizeof why);
    ck_assert_str_eq(why, "block.x 128 >= 64, threads in x 4194304 >= 2097152");
    c = d1(32768, 32, 0);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
    c = d1(8192, 128, 0); /* cdiv: the program's threads, no more */
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
}
END_TEST

/* A stride grid of 132 x 8 blocks of 1024 faulted (1081344 threads for 2^20 elements): its
 * grid is smaller than the program's, so only its block and its threads grew; stride grids
 * of fewer blocks have fewer threads and are not condemned, though their block is as
 * large. */
START_TEST(stride_fewer_threads_not_condemned)
{
    xmt_dims own = d1(32768, 32, 0), f = d1(1056, 1024, 0);
    char why[200];
    for (uint32_t g = 132; g < 1056; g *= 2) {
        xmt_dims c = d1(g, 1024, 0);
        ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
    }
}
END_TEST

/* A config that grew in no dimension (a smaller block on the program's grid) says nothing
 * of any other: it condemns nothing, not even a config equal to the program's. */
START_TEST(no_growth_condemns_nothing)
{
    xmt_dims own = d1(16, 256, 0), f = d1(16, 64, 0);
    char why[200];
    for (uint32_t b = 64; b <= 1024; b *= 2) {
        xmt_dims c = d1(16, b, 0);
        ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
    }
}
END_TEST

/* More blocks with fewer threads each (the same threads in x): the grid grew, so larger
 * grids are condemned, whatever their block; a grid as large as the program's is not. */
START_TEST(more_blocks)
{
    xmt_dims own = d1(16, 256, 0), f = d1(132, 128, 0);
    char why[200];
    xmt_dims c = d1(264, 128, 0);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 1);
    ck_assert_str_eq(why, "grid.x 264 >= 132, threads in x 33792 >= 16896");
    c = d1(16, 1024, 0);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
}
END_TEST

/* Tiles on the program's grid (32 x 8): 16 x 16 faulted, having grown in y only (block.y,
 * threads in y); 8 x 32 and 32 x 16 reach at least as far in y, and are condemned though
 * narrower in x; 64 x 4 is not. */
START_TEST(tiles_grew_in_y)
{
    xmt_dims own = d2(64, 128, 32, 8), f = d2(64, 128, 16, 16);
    char why[200];
    xmt_dims c = d2(64, 128, 8, 32);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 1);
    ck_assert_str_eq(why, "block.y 32 >= 16, threads in y 4096 >= 2048");
    c = d2(64, 128, 32, 16);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 1);
    c = d2(64, 128, 64, 4);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
}
END_TEST

/* Dynamic shared memory is a dimension too: scaled with the block, it grew. */
START_TEST(shared_memory)
{
    xmt_dims own = d1(64, 128, 512), f = d1(64, 128, 2048), c = d1(64, 128, 4096);
    char why[200];
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 1);
    ck_assert_str_eq(why, "shared 4096 >= 2048");
    c = d1(64, 256, 1024);
    ck_assert_int_eq(xmt_family_reaches(&own, &f, &c, why, sizeof why), 0);
}
END_TEST

/* Groups: a derived entry's configs by the idiom their label names; a policy's configs
 * list and its space apart (a label naming IDIOM there means nothing). */
START_TEST(groups)
{
    const char *g0 = "IDIOM=0, BX=64, BY=1, BPS=0, SCALED=0";
    const char *cd = "IDIOM=1, BX=64, BY=1, BPS=0, SCALED=0";
    const char *st = "IDIOM=2, BX=128, BY=1, BPS=1, SCALED=0";
    ck_assert_int_ne(xmt_family_group(1, g0, 0, 60), xmt_family_group(1, cd, 1, 60));
    ck_assert_int_ne(xmt_family_group(1, cd, 1, 60), xmt_family_group(1, st, 20, 60));
    ck_assert_int_eq(xmt_family_group(1, g0, 0, 60),
                     xmt_family_group(1, "IDIOM=0, BX=1024, BY=1, BPS=0, SCALED=1", 19, 60));
    ck_assert_int_eq(xmt_family_group(0, "BLOCK=512, ITEMS=32", 0, 2),
                     xmt_family_group(0, "BLOCK=1024, ITEMS=64", 1, 2));
    ck_assert_int_ne(xmt_family_group(0, "BLOCK=512, ITEMS=32", 1, 2),
                     xmt_family_group(0, "BLOCK=128, ITEMS=1", 2, 2));
    ck_assert_int_eq(xmt_family_group(0, g0, 0, 5), xmt_family_group(0, st, 1, 5));
}
END_TEST

/* Faults carried across a kernel's keys: a key gets the other keys' faults of its kernel, not
 * its own nor another kernel's; each (kernel, index) once; at most XMT_FAMILY_KEPT a kernel. */
START_TEST(learned_across_keys)
{
    xmt_family_forget();
    xmt_family_fault f[XMT_FAMILY_KEPT + 4];
    xmt_family_learn(7, 0, "faulted in the trial helper: CUDA_ERROR_ILLEGAL_ADDRESS", "n=1024");
    xmt_family_learn(7, 35, "ran past the watchdog", "n=1024");
    xmt_family_learn(7, 0, "again, at another key", "n=2048"); /* known: not kept twice */
    xmt_family_learn(8, 3, "another kernel's", "n=1024");
    ck_assert_uint_eq(xmt_family_learned(7, "n=1024", f, 8), 0); /* its own key's */
    ck_assert_uint_eq(xmt_family_learned(7, "n=4096", f, 8), 2);
    ck_assert_int_eq(f[0].index, 0);
    ck_assert_str_eq(f[0].key, "n=1024");
    ck_assert_str_eq(f[0].why, "faulted in the trial helper: CUDA_ERROR_ILLEGAL_ADDRESS");
    ck_assert_int_eq(f[1].index, 35);
    ck_assert_uint_eq(xmt_family_learned(7, "n=4096", f, 1), 1); /* at most cap */
    ck_assert_uint_eq(xmt_family_learned(8, "n=4096", f, 8), 1);
    ck_assert_int_eq(f[0].index, 3);
    for (long i = 100; i < 100 + 2 * XMT_FAMILY_KEPT; i++)
        xmt_family_learn(9, i, "x", "k");
    ck_assert_uint_eq(xmt_family_learned(9, "other", f, XMT_FAMILY_KEPT + 4), XMT_FAMILY_KEPT);
    /* the table full: nothing more kept, nothing overwritten */
    for (long i = 0; i < 2 * XMT_FAMILY_SLOTS; i++)
        xmt_family_learn(1000 + (uint64_t)i, 1, "x", "k");
    ck_assert_uint_eq(xmt_family_learned(7, "n=4096", f, 8), 2);
    xmt_family_learn(7, 36, "late", "n=1024");
    ck_assert_uint_eq(xmt_family_learned(7, "n=4096", f, 8), 2);
    xmt_family_forget();
    ck_assert_uint_eq(xmt_family_learned(7, "n=4096", f, 8), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("family");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, grid0_larger_blocks);
    tcase_add_test(tc, stride_fewer_threads_not_condemned);
    tcase_add_test(tc, no_growth_condemns_nothing);
    tcase_add_test(tc, more_blocks);
    tcase_add_test(tc, tiles_grew_in_y);
    tcase_add_test(tc, shared_memory);
    tcase_add_test(tc, groups);
    tcase_add_test(tc, learned_across_keys);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
