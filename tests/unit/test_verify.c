/*
 * test_verify: Check unit tests of the tuner's output comparison (shim/session/verify.c), which
 * decides whether a candidate is rejected: bitwise for integers and for floats without
 * tolerance, within rtol/atol otherwise, NaN equal to NaN, f16 and bf16 decoded.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "verify.h"

static xmt_buffer buf(xmt_dtype t, uint64_t bytes, double rtol, double atol)
{
    xmt_buffer b = {0, "out", XMT_BUF_VERIFY, bytes, t, rtol, atol};
    return b;
}

START_TEST(bitwise_counts_and_names_the_first)
{
    int32_t ref[4] = {1, 2, 3, 4}, got[4] = {1, 9, 3, 8};
    xmt_buffer b = buf(XMT_DT_I32, sizeof ref, 0, 0);
    char why[300] = "";
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)ref, why, sizeof why), 0);
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 2);
    ck_assert_str_eq(why, "out: 2 of 4 elements differ bitwise, the first at element 1");
}
END_TEST

/* One difference in the singular, and its place, not "the first" of one (issue 50). */
START_TEST(one_difference_in_the_singular)
{
    int32_t ref[4] = {1, 2, 3, 4}, got[4] = {1, 9, 3, 4};
    xmt_buffer b = buf(XMT_DT_I32, sizeof ref, 0, 0);
    char why[300] = "";
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 1);
    ck_assert_str_eq(why, "out: 1 of 4 elements differs bitwise, at element 1");
}
END_TEST

START_TEST(float_without_tolerance_is_bitwise)
{
    float ref[2] = {1.0f, 0.0f}, got[2] = {1.0f, -0.0f}; /* equal as numbers, not as bits */
    xmt_buffer b = buf(XMT_DT_F32, sizeof ref, 0, 0);
    char why[300];
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 1);
}
END_TEST

START_TEST(tolerance_rtol_atol_and_nan)
{
    float ref[4] = {100.0f, 1.0f, NAN, 0.0f}, got[4] = {100.5f, 1.0f, NAN, 0.001f};
    xmt_buffer b = buf(XMT_DT_F32, sizeof ref, 1e-2, 1e-2);
    char why[300] = "";
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 0);
    got[1] = 1.5f; /* 0.5 > 0.01 + 0.01 * 1 */
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 1);
    ck_assert_ptr_nonnull(strstr(
        why, "1 of 4 elements differs beyond rtol=0.01 atol=0.01, at element 1: 1.5, expected 1"));
    got[1] = 1.0f;
    got[2] = 0.0f; /* NaN expected, a number got */
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 1);
}
END_TEST

START_TEST(half_and_bfloat16_decoded)
{
    /* f16: 0x3c00 = 1.0, 0x3c01 = 1.0009765625; 0x0001 = 2^-24 (subnormal) */
    uint16_t ref[2] = {0x3c00, 0x0001}, got[2] = {0x3c01, 0x0000};
    xmt_buffer b = buf(XMT_DT_F16, sizeof ref, 0, 1e-3);
    char why[300];
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 0);
    b.atol = 1e-4;
    ck_assert_uint_eq(xmt_verify_compare(&b, (uint8_t *)ref, (uint8_t *)got, why, sizeof why), 1);
    /* bf16: 0x3f80 = 1.0, 0x3f81 = 1.0078125 */
    uint16_t bref[1] = {0x3f80}, bgot[1] = {0x3f81};
    xmt_buffer bb = buf(XMT_DT_BF16, sizeof bref, 0, 1e-2);
    ck_assert_uint_eq(xmt_verify_compare(&bb, (uint8_t *)bref, (uint8_t *)bgot, why, sizeof why),
                      0);
    bb.atol = 1e-3;
    ck_assert_uint_eq(xmt_verify_compare(&bb, (uint8_t *)bref, (uint8_t *)bgot, why, sizeof why),
                      1);
}
END_TEST

/* The edges the GPU kernels must match (tests/gpu/gpucheck_edges.c checks they do). */
START_TEST(tolerance_edges)
{
    double r = 1e-3, a = 1e-6;
    ck_assert(xmt_verify_within(NAN, NAN, r, a));
    ck_assert(!xmt_verify_within(NAN, 1.0, r, a));
    ck_assert(!xmt_verify_within(1.0, NAN, r, a));
    ck_assert(xmt_verify_within(INFINITY, INFINITY, r, a));
    ck_assert(!xmt_verify_within(INFINITY, -INFINITY, r, a));
    /* an infinity is not "within" rtol of a finite value (rtol * inf would say so) */
    ck_assert(!xmt_verify_within(INFINITY, 1e300, r, a));
    ck_assert(!xmt_verify_within(-1.0, -INFINITY, r, a));
    ck_assert(xmt_verify_within(0.0, -0.0, 0, 1e-30));
    ck_assert(xmt_verify_within(5e-324, 0.0, 0, 1e-320)); /* denormals are values */
    ck_assert(!xmt_verify_within(5e-324, 1e-323, 0, 0));
    ck_assert(xmt_verify_within(1.0, 1.0 + 1e-3, 1e-3, 0));
    ck_assert(!xmt_verify_within(1.0, 1.0 + 1.0001e-3, 1e-3, 0));
    /* bitwise: -0.0 differs from 0.0 */
    float z[2] = {0.0f, 1.0f}, nz[2] = {-0.0f, 1.0f};
    uint64_t first;
    ck_assert_uint_eq(
        xmt_verify_host((uint8_t *)z, (uint8_t *)nz, sizeof z, XMT_CMP_BITS, 4, 0, 0, &first), 1);
    ck_assert_uint_eq(first, 0);
    ck_assert_uint_eq(
        xmt_verify_host((uint8_t *)z, (uint8_t *)nz, sizeof z, XMT_CMP_F32, 4, 0, 1e-9, &first), 0);
}
END_TEST

START_TEST(changed_chunks)
{
    uint8_t a[2048] = {0}, b[2048] = {0}, flags[4] = {0};
    uint64_t first;
    ck_assert_uint_eq(xmt_verify_changed_host(a, b, sizeof a, 9, flags, &first), 0);
    b[600] = 1;
    b[2047] = 1;
    ck_assert_uint_eq(xmt_verify_changed_host(a, b, sizeof a, 9, flags, &first), 2);
    ck_assert_uint_eq(first, 592);
    ck_assert(!flags[0] && flags[1] && !flags[2] && flags[3]);
}
END_TEST

START_TEST(absmax_leaves_out_nan_and_infinity)
{
    float f[] = {1.5f, -7.25f, NAN, INFINITY, -INFINITY, -0.0f, 3.0f};
    ck_assert(xmt_verify_absmax_host((uint8_t *)f, 7, XMT_CMP_F32) == 7.25);
    ck_assert(xmt_verify_absmax_host((uint8_t *)f, 1, XMT_CMP_F32) == 1.5);
    ck_assert(xmt_verify_absmax_host((uint8_t *)(f + 2), 4, XMT_CMP_F32) == 0);
    double d[] = {-1e300, 2.0};
    ck_assert(xmt_verify_absmax_host((uint8_t *)d, 2, XMT_CMP_F64) == 1e300);
    uint16_t h[] = {0xC500, 0x7C00, 0x3C00}; /* f16: -5, +inf, 1 */
    ck_assert(xmt_verify_absmax_host((uint8_t *)h, 3, XMT_CMP_F16) == 5);
    uint16_t bf[] = {0x4040, 0xFF80}; /* bf16: 3, -inf */
    ck_assert(xmt_verify_absmax_host((uint8_t *)bf, 2, XMT_CMP_BF16) == 3);
}
END_TEST

/* The guard bytes' sequence is SplitMix64 (Vigna's splitmix64.c, seed 0: its first four
 * outputs), any word made on its own: word i from a seed equals word i - 1 from the seed
 * one step on. */
START_TEST(sequence_is_splitmix64)
{
    static const uint64_t want[] = {0xE220A8397B1DCDAFull, 0x6E789E6AA1B965F4ull,
                                    0x06C45D188009454Full, 0xF88BB8A8724C81ECull};
    for (uint64_t i = 0; i < 4; i++)
        ck_assert_uint_eq(xmt_verify_seq_word(0, i), want[i]);
    const uint64_t step = 0x9E3779B97F4A7C15ull;
    ck_assert_uint_eq(xmt_verify_seq_word(step, 0), want[1]);
    ck_assert_uint_eq(xmt_verify_seq_word(step, 999999), xmt_verify_seq_word(0, 1000000));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("compare");
    tcase_add_test(tc, bitwise_counts_and_names_the_first);
    tcase_add_test(tc, one_difference_in_the_singular);
    tcase_add_test(tc, float_without_tolerance_is_bitwise);
    tcase_add_test(tc, tolerance_rtol_atol_and_nan);
    tcase_add_test(tc, half_and_bfloat16_decoded);
    tcase_add_test(tc, tolerance_edges);
    tcase_add_test(tc, changed_chunks);
    tcase_add_test(tc, absmax_leaves_out_nan_and_infinity);
    tcase_add_test(tc, sequence_is_splitmix64);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
