/* test_policy.c - Check unit tests of libxmtpolicy: every trigger form, operator,
 * function, default and error path of the policy language, through the public API
 * (expressions are driven through functional triggers, whose values the key carries).
 */
#include "eval.h"
#include "expr.h"
#include "xmt_policy.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char diags[65536];
static int ndiags;

static void cap_diag(void *ud, const char *m)
{
    (void)ud;
    size_t n = strlen(diags);
    snprintf(diags + n, sizeof diags - n, "%s\n", m);
    ndiags++;
}

static xmt_policy_set *load(const char *yaml, int *nerr)
{
    xmt_policy_set *s = NULL;
    diags[0] = 0;
    ndiags = 0;
    int n = xmt_policy_load_string("t.yaml", yaml, strlen(yaml), &s, cap_diag, NULL);
    if (nerr) *nerr = n;
    return s;
}

static xmt_policy_set *load_ok(const char *yaml)
{
    int nerr;
    xmt_policy_set *s = load(yaml, &nerr);
    ck_assert_msg(nerr == 0, "unexpected errors:\n%s\nin:\n%s", diags, yaml);
    ck_assert_ptr_nonnull(s);
    return s;
}

static void expect_err(const char *yaml, const char *needle)
{
    int nerr;
    xmt_policy_set *s = load(yaml, &nerr);
    ck_assert_msg(nerr > 0, "expected an error containing '%s' in:\n%s", needle, yaml);
    ck_assert_msg(strstr(diags, needle) != NULL, "expected '%s', got:\n%s", needle, diags);
    ck_assert_ptr_nonnull(s);
    xmt_policy_free(s);
}

/* ---- standard parameters for expression tests ------------------------------------------- */

#define STD_PARAMS                                                                                 \
    "    params: [n: i32, m: i64, a: f32, d: f64, h: f16, b: bf16, c: i8, s: i16, u: u8, w: u16, " \
    "v: u32, q: u64, p: ptr, z: i32]\n"

static int32_t P_n = 100, P_z = 0;
static int64_t P_m = -7;
static float P_a = 2.5f;
static double P_d = 0.25;
static uint16_t P_h = 0x3e00; /* 1.5 */
static uint16_t P_b = 0x4000; /* 2.0 */
static int8_t P_c = -3;
static int16_t P_s = -300;
static uint8_t P_u = 200;
static uint16_t P_w = 60000;
static uint32_t P_v = 4000000000u;
static uint64_t P_q = (uint64_t)1 << 40;
static uint64_t P_p = 0x1000;
static void *std_params[14];
static xmt_attrs std_attrs;

static xmt_launch_view std_view(void)
{
    void *p[14] = {&P_n, &P_m, &P_a, &P_d, &P_h, &P_b, &P_c,
                   &P_s, &P_u, &P_w, &P_v, &P_q, &P_p, &P_z};
    memcpy(std_params, p, sizeof p);
    xmt_attrs_default(&std_attrs);
    xmt_launch_view v = {std_params, 14, {{10, 20, 30}, {128, 2, 1}, 512}, &std_attrs};
    return v;
}

/* Evaluates expr as a functional trigger over the standard parameters. Returns 0 and the
 * value, 1 when the key could not be computed, -1 when the policy did not load (diags). */
static int fx(const char *expr, xmt_val *out)
{
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "kernels:\n  - mangled: k\n" STD_PARAMS
             "    functional_triggers: {r: '%s'}\n    pin: {}\n",
             expr);
    int nerr;
    xmt_policy_set *s = load(yaml, &nerr);
    if (nerr) {
        xmt_policy_free(s);
        return -1;
    }
    const xmt_entry *e = xmt_policy_entry(s, 0);
    xmt_launch_view v = std_view();
    uint8_t key[XMT_KEY_MAX];
    size_t kl = xmt_entry_key(e, &v, key, sizeof key);
    xmt_policy_free(s);
    if (kl != 9) return 1;
    out->isf = key[0];
    memcpy(&out->u, key + 1, 8);
    return 0;
}

static void expect_i(const char *expr, int64_t want)
{
    xmt_val v;
    int rc = fx(expr, &v);
    ck_assert_msg(rc == 0, "%s: rc %d %s", expr, rc, diags);
    ck_assert_msg(!v.isf, "%s: float %g, wanted integer %lld", expr, v.u.f, (long long)want);
    ck_assert_msg(v.u.i == want, "%s = %lld, wanted %lld", expr, (long long)v.u.i, (long long)want);
}

static void expect_f(const char *expr, double want)
{
    xmt_val v;
    int rc = fx(expr, &v);
    ck_assert_msg(rc == 0, "%s: rc %d %s", expr, rc, diags);
    ck_assert_msg(v.isf, "%s: integer %lld, wanted float %g", expr, (long long)v.u.i, want);
    ck_assert_msg(fabs(v.u.f - want) <= 1e-9 * fabs(want), "%s = %.17g, wanted %.17g", expr, v.u.f,
                  want);
}

static void expect_eval_fail(const char *expr)
{
    xmt_val v;
    int rc = fx(expr, &v);
    ck_assert_msg(rc == 1, "%s: expected an evaluation failure, rc %d (%s)", expr, rc, diags);
}

static void expect_compile_fail(const char *expr, const char *needle)
{
    xmt_val v;
    int rc = fx(expr, &v);
    ck_assert_msg(rc == -1, "%s: expected a compile error", expr);
    ck_assert_msg(strstr(diags, needle) != NULL, "%s: expected '%s', got %s", expr, needle, diags);
}

/* ---- expressions --------------------------------------------------------------------------- */

START_TEST(expr_int_arith)
{
    expect_i("1 + 2 * 3", 7);
    expect_i("(1 + 2) * 3", 9);
    expect_i("10 - 4 - 3", 3);
    expect_i("7 / 2", 3);
    expect_i("-7 / 2", -3);
    expect_i("-7 % 2", -1);
    expect_i("7 % 3", 1);
    expect_i("100 / 10 / 5", 2);
    expect_i("0x10 + 1", 17);
    expect_i("-n", -100);
    expect_i("+n", 100);
    expect_i("- -n", 100);
    expect_i("9223372036854775807", INT64_MAX);
}
END_TEST

START_TEST(expr_float)
{
    expect_f("7 / 2.0", 3.5);
    expect_f("1e3", 1000);
    expect_f(".5 + 1", 1.5);
    expect_f("a * 2", 5.0);
    expect_f("7.5 % 2", 1.5);
    expect_f("-a", -2.5);
    expect_f("n + 0.5", 100.5);
}
END_TEST

START_TEST(expr_compare_logic)
{
    expect_i("1 < 2", 1);
    expect_i("2 < 1", 0);
    expect_i("2 <= 2", 1);
    expect_i("3 > 2", 1);
    expect_i("2 >= 3", 0);
    expect_i("2 == 2", 1);
    expect_i("2 != 2", 0);
    expect_i("2.5 == a", 1);
    expect_i("a > 2", 1);
    expect_i("!0", 1);
    expect_i("!5", 0);
    expect_i("!!5", 1);
    expect_i("!0.0", 1);
    expect_i("1 && 2", 1);
    expect_i("1 && 0", 0);
    expect_i("0 || 3", 1);
    expect_i("0 || 0", 0);
    expect_i("0 && 1 / 0", 0); /* short-circuit */
    expect_i("1 || 1 / 0", 1); /* short-circuit */
    expect_i("z > 0 ? n / z : -1", -1);
    expect_i("1 ? 2 : 3", 2);
    expect_i("0 ? 2 : 3", 3);
    expect_i("0 ? 1 : 0 ? 2 : 3", 3); /* right associative */
    expect_i("1 + 1 == 2 && 3 > 2 || 0", 1);
    expect_i("true", 1);
    expect_i("false", 0);
    expect_f("1 ? a : n", 2.5);
}
END_TEST

START_TEST(expr_functions)
{
    expect_i("cdiv(10, 3)", 4);
    expect_i("cdiv(9, 3)", 3);
    expect_i("cdiv(0, 3)", 0);
    expect_i("cdiv(-7, 2)", -3);
    expect_i("cdiv(-7, -2)", 4);
    expect_f("cdiv(7.0, 2)", 4.0);
    expect_i("min(3, 1, 2)", 1);
    expect_i("max(3, 1, 2)", 3);
    expect_f("min(3, 2.5)", 2.5);
    expect_f("max(1, a)", 2.5);
    expect_i("next_pow2(0)", 1);
    expect_i("next_pow2(1)", 1);
    expect_i("next_pow2(2)", 2);
    expect_i("next_pow2(3)", 4);
    expect_i("next_pow2(1000)", 1024);
    expect_i("next_pow2(1024)", 1024);
    expect_i("next_pow2(2.5)", 4);
    expect_i("next_pow2(-1e300)", 1);
    expect_i("log2(1)", 0);
    expect_i("log2(1024)", 10);
    expect_i("log2(1023)", 9);
    expect_f("log2(8.0)", 3.0);
    expect_i("abs(-5)", 5);
    expect_i("abs(5)", 5);
    expect_f("abs(-2.5)", 2.5);
    expect_i("max(next_pow2(n), 16)", 128);
}
END_TEST

/* intlike(x): x, unless x is a float or its 32 bits look like an f32 (a biased exponent
 * within 127 +/- 20, either sign), then the bits of 1.0f; the edges of both windows. */
START_TEST(expr_intlike)
{
    const int64_t F = XMT_INTLIKE_FLOAT;
    ck_assert_int_eq(F, 0x3F800000);
    expect_i("intlike(n)", 100); /* an i32 size */
    expect_i("intlike(m)", -7);  /* an i64 */
    expect_i("intlike(a)", F);   /* an f32 parameter: a float */
    expect_i("intlike(d)", F);   /* f64 */
    expect_i("intlike(2.5)", F);
    expect_i("intlike(v)", 4000000000LL);  /* u32: 0xEE6B2800, exponent 220 */
    expect_i("intlike(q)", 1099511627776); /* beyond 32 bits: never a 4-byte float */
    expect_i("intlike(0)", 0);
    expect_i("intlike(-1)", -1);
    expect_i("intlike(16777216)", 16777216);
    expect_i("intlike(1061158912)", F); /* 0.75f as int32 bits */
    expect_i("intlike(1061326684)", F); /* 0.75001f */
    expect_i("intlike(1066192077)", F); /* 1.1f */
    expect_i("intlike(897581055)", 897581055);
    expect_i("intlike(897581056)", F);  /* 2^-20: exponent 107 */
    expect_i("intlike(1241513983)", F); /* just under 2^21: exponent 147 */
    expect_i("intlike(1241513984)", 1241513984);
    expect_i("intlike(-1082130432)", F); /* -0.75f, sign-extended from i32 */
    expect_i("intlike(3212836864)", F);  /* -1.0f as u32 */
    expect_i("intlike(-1249902592)", F);
    expect_i("intlike(-1249902593)", -1249902593);
    expect_i("intlike(-905969665)", F);
    expect_i("intlike(-905969664)", -905969664);
    expect_i("intlike(4294967296 + 1061158912)", 4294967296LL + 1061158912);
    expect_i("intlike(intlike(1061158912))", F); /* idempotent */
    expect_i("intlike(n) + 1", 101);
    ck_assert(xmt_f32_like(0x358637BDu));  /* 1e-6f */
    ck_assert(!xmt_f32_like(0x2B8CBCCCu)); /* 1e-12f: too small */
    ck_assert(xmt_f32_like(0x49742400u));  /* 1e6f */
    ck_assert(!xmt_f32_like(0x4B189680u)); /* 1e7f: too large */
    ck_assert(!xmt_f32_like(0x7FC00000u)); /* NaN */
    ck_assert(!xmt_f32_like(0u));
    ck_assert_int_eq(xmt_intlike(1, 0), F);
    ck_assert_int_eq(xmt_intlike(0, INT32_MIN), INT32_MIN); /* 0x80000000: -0.0f, exponent 0 */
    expect_compile_fail("intlike(1, 2)", "intlike takes 1 argument, not 2");
    expect_compile_fail("intlike()", "intlike takes 1 argument, not 0");
}
END_TEST

START_TEST(expr_eval_errors)
{
    expect_eval_fail("1 / 0");
    expect_eval_fail("1 % 0");
    expect_eval_fail("n / z");
    expect_eval_fail("1.0 / 0");
    expect_eval_fail("cdiv(1, 0)");
    expect_eval_fail("(-9223372036854775807 - 1) / -1");
    expect_eval_fail("9223372036854775807 + 1");
    expect_eval_fail("-9223372036854775807 - 2");
    expect_eval_fail("4611686018427387904 * 2");
    expect_eval_fail("-(-9223372036854775807 - 1)");
    expect_eval_fail("abs(-9223372036854775807 - 1)");
    expect_eval_fail("next_pow2(4611686018427387905)");
    expect_eval_fail("log2(0)");
    expect_eval_fail("log2(-1.0)");
    expect_eval_fail("1e308 * 10");
    expect_eval_fail("q * q * q");
    expect_i("(-9223372036854775807 - 1) % -1", 0);
}
END_TEST

START_TEST(expr_compile_errors)
{
    expect_compile_fail("foo(1)", "unknown function 'foo'");
    expect_compile_fail("cdiv(1)", "cdiv takes 2 arguments, not 1");
    expect_compile_fail("abs(1, 2)", "abs takes 1 argument, not 2");
    expect_compile_fail("min(1)", "min takes two or more arguments");
    expect_compile_fail("nope + 1", "unknown name 'nope'");
    expect_compile_fail("(1 + 2", "expected ')'");
    expect_compile_fail("1 + 2)", "unexpected ')'");
    expect_compile_fail("1 +", "expression ends early");
    expect_compile_fail("n = 1", "comparison is '=='");
    expect_compile_fail("n & 1", "logical operators are && and ||");
    expect_compile_fail("1 ? 2", "expected ':'");
    expect_compile_fail("99999999999999999999", "integer out of range");
    expect_compile_fail("12abc", "unexpected character after a number");
    expect_compile_fail("grid0 + 1", "grid0 needs a member");
    expect_compile_fail("grid0.w", "grid0 has members x, y and z");
    expect_compile_fail("min(1, 2", "expected ',' or ')'");
    expect_compile_fail("$", "expected a number, a name or '('");
    char deep[256] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "(");
    strcat(deep, "1");
    for (int i = 0; i < 40; i++)
        strcat(deep, ")");
    expect_compile_fail(deep, "nested deeper than 32");
    char lng[1200];
    memset(lng, 0, sizeof lng);
    strcat(lng, "1");
    for (int i = 0; i < 520; i++)
        strcat(lng, "+1");
    expect_compile_fail(lng, "longer than 1024 characters");
}
END_TEST

START_TEST(expr_identifiers)
{
    expect_i("grid0.x", 10);
    expect_i("grid0.y", 20);
    expect_i("grid0.z", 30);
    expect_i("block0.x", 128);
    expect_i("block0.y", 2);
    expect_i("block0.z", 1);
    expect_i("shared0", 512);
    expect_i("sm_count", 132);
    expect_i("max_threads_per_block", 1024);
    expect_i("max_shared_per_block", 49152);
    expect_i("cc_major", 9);
    expect_i("cc_minor", 0);
    expect_i("warp_size", 32);
    expect_i("l2_bytes", 52428800);
    expect_i("max_grid_x", 2147483647);
    expect_i("max_grid_y", 65535);
    expect_i("max_grid_z", 65535);
    expect_i("max_block_x", 1024);
    expect_i("max_block_y", 1024);
    expect_i("max_block_z", 64);
    expect_i("kernel_max_threads", 1024);
    expect_i("kernel_static_shared", 0);
}
END_TEST

START_TEST(expr_param_types)
{
    expect_i("n", 100);
    expect_i("m", -7);
    expect_f("a", 2.5);
    expect_f("d", 0.25);
    expect_f("h", 1.5);
    expect_f("b", 2.0);
    expect_i("c", -3);
    expect_i("s", -300);
    expect_i("u", 200);
    expect_i("w", 60000);
    expect_i("v", 4000000000LL);
    expect_i("q", (int64_t)1 << 40);
    expect_i("p", 0x1000);
    expect_i("p % 256 == 0", 1);
    uint64_t save = P_q;
    P_q = UINT64_MAX;
    expect_eval_fail("q"); /* u64 beyond int64 */
    P_q = save;
}
END_TEST

/* An expression of one leaf (a constant, a parameter, an original-launch value, an
 * attribute) skips the stack machine: the same value and the same failures as through it. */
START_TEST(expr_one_leaf)
{
    const char *leaves[] = {"7",       "-7",      "2.5",      "n",       "m",        "a",
                            "h",       "c",       "u",        "v",       "q",        "p",
                            "grid0.x", "grid0.z", "block0.y", "shared0", "sm_count", "warp_size"};
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
        char through[64];
        snprintf(through, sizeof through, "(%s) + 0", leaves[i]);
        xmt_val x, y;
        ck_assert_int_eq(fx(leaves[i], &x), 0);
        ck_assert_int_eq(fx(through, &y), 0);
        ck_assert_msg(x.isf == y.isf && memcmp(&x.u, &y.u, 8) == 0, "%s", leaves[i]);
        /* intlike of one leaf (auto's key of an untyped 4-byte scalar) skips it too */
        char il[64], il_through[80];
        snprintf(il, sizeof il, "intlike(%s)", leaves[i]);
        snprintf(il_through, sizeof il_through, "intlike((%s) + 0) + 0", leaves[i]);
        ck_assert_int_eq(fx(il, &x), 0);
        ck_assert_int_eq(fx(il_through, &y), 0);
        ck_assert_msg(!x.isf && !y.isf && x.u.i == y.u.i, "%s", il);
    }
    uint64_t save = P_q;
    P_q = UINT64_MAX; /* u64 beyond int64: fails both ways */
    expect_eval_fail("q");
    expect_eval_fail("(q) + 0");
    expect_eval_fail("intlike(q)");
    expect_eval_fail("intlike(q) + 0");
    P_q = save;
}
END_TEST

START_TEST(expr_standalone)
{
    xmt_attrs at;
    xmt_attrs_default(&at);
    xmt_launch_view v = {NULL, 0, {{4, 1, 1}, {256, 1, 1}, 0}, &at};
    double d;
    int64_t i;
    int isf;
    char err[256];
    ck_assert_int_eq(xmt_expr_eval_string("grid0.x * block0.x", &v, &d, &i, &isf, err, sizeof err),
                     0);
    ck_assert_int_eq(i, 1024);
    ck_assert_int_eq(isf, 0);
    ck_assert_int_eq(xmt_expr_eval_string("sm_count / 2.0", &v, &d, &i, &isf, err, sizeof err), 0);
    ck_assert(isf && d == 66.0);
    ck_assert_int_eq(xmt_expr_eval_string("1 +", &v, &d, &i, &isf, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "column 4"));
    /* found by the fuzzer: a float beyond int64 saturates instead of converting (UB) */
    ck_assert_int_eq(xmt_expr_eval_string("71E80", &v, &d, &i, &isf, err, sizeof err), 0);
    ck_assert(isf && i == INT64_MAX);
    ck_assert_int_eq(xmt_expr_eval_string("-71E80", &v, &d, &i, &isf, err, sizeof err), 0);
    ck_assert(i == INT64_MIN);
    xmt_launch_view nv = {NULL, 0, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    ck_assert_int_eq(xmt_expr_eval_string("sm_count", &nv, &d, &i, &isf, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "attributes"));
    xmt_attrs a2;
    memset(&a2, 0, sizeof a2);
    ck_assert_int_eq(xmt_attrs_set(&a2, "l2_bytes", 7), 0);
    ck_assert_int_eq(a2.l2_bytes, 7);
    ck_assert_int_eq(xmt_attrs_set(&a2, "nope", 7), -1);
}
END_TEST

START_TEST(half_conversions)
{
    ck_assert(xmt_half_to_double(0x3c00) == 1.0);
    ck_assert(xmt_half_to_double(0xc000) == -2.0);
    ck_assert(xmt_half_to_double(0x0001) == ldexp(1, -24));
    ck_assert(isinf(xmt_half_to_double(0x7c00)));
    ck_assert(isnan(xmt_half_to_double(0x7e00)));
    ck_assert_uint_eq(xmt_double_to_half(1.0), 0x3c00);
    ck_assert_uint_eq(xmt_double_to_half(-2.0), 0xc000);
    ck_assert_uint_eq(xmt_double_to_half(65504.0), 0x7bff);
    ck_assert_uint_eq(xmt_double_to_half(1e6), 0x7c00);
    ck_assert_uint_eq(xmt_double_to_half(ldexp(1, -24)), 0x0001);
    ck_assert_uint_eq(xmt_double_to_half(0.0), 0);
    for (uint32_t h = 0; h < 0x7c00; h += 7)
        ck_assert_uint_eq(xmt_double_to_half(xmt_half_to_double((uint16_t)h)), h);
    ck_assert_uint_eq(xmt_double_to_bf16(1.0), 0x3f80);
    ck_assert(xmt_bf16_to_double(0x4000) == 2.0);
    ck_assert(xmt_bf16_to_double(xmt_double_to_bf16(-3.0)) == -3.0);
}
END_TEST

/* ---- saxpy: triggers, keys, candidates, buffers ------------------------------------------ */

static const char *saxpy_yaml =
    "kernels:\n"
    "  - match: \"saxpy*\"\n"
    "    params: [n: i32, a: f32, x: ptr, y: ptr]\n"
    "    tensors:\n"
    "      x: {dtype: f32, shape: [n]}\n"
    "      y: {dtype: f32, shape: [n]}\n"
    "    triggers: [x.shape, y.dtype]\n"
    "    functional_triggers: {big: \"n >= 1048576\"}\n"
    "    space: {BLOCK: [64, 128, 256, 512, 1024, 2048]}\n"
    "    condition: \"BLOCK <= 1024\"\n"
    "    launch: {block: [BLOCK], grid: [\"cdiv(n, BLOCK)\"], shared: 0}\n"
    "    reset_to_zero: {y: \"n > 0\"}\n"
    "    restore: [y]\n"
    "    verify: {y: {rtol: 1e-5, atol: 0}}\n"
    "    warmup: 3\n"
    "    iterations: 20\n";

typedef struct {
    int32_t n;
    float a;
    uint64_t x, y;
    void *p[4];
    xmt_attrs at;
    xmt_launch_view v;
} saxpy_args;

static void saxpy_init(saxpy_args *s, int32_t n)
{
    s->n = n;
    s->a = 2;
    s->x = 0x10000;
    s->y = 0x20000;
    s->p[0] = &s->n;
    s->p[1] = &s->a;
    s->p[2] = &s->x;
    s->p[3] = &s->y;
    xmt_attrs_default(&s->at);
    xmt_launch_view v = {s->p, 4, {{4096, 1, 1}, {256, 1, 1}, 0}, &s->at};
    s->v = v;
}

START_TEST(saxpy_key_and_render)
{
    xmt_policy_set *set = load_ok(saxpy_yaml);
    ck_assert_uint_eq(xmt_policy_count(set), 1);
    const xmt_entry *e = xmt_policy_match(set, "_Z5saxpyifPKfPf", cap_diag, NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(xmt_entry_origin(e), "t.yaml:2");
    ck_assert_str_eq(xmt_entry_pattern(e), "match: saxpy*");
    saxpy_args s;
    saxpy_init(&s, 1024);
    uint8_t k1[XMT_KEY_MAX], k2[XMT_KEY_MAX];
    size_t l1 = xmt_entry_key(e, &s.v, k1, sizeof k1);
    ck_assert_uint_eq(l1, 9 + 1 + 9);
    char buf[256];
    ck_assert_int_gt(xmt_entry_key_render(e, k1, l1, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "x.shape=(1024,), y.dtype=f32, big=0");
    s.x = 0x30000; /* pointers are not part of the key */
    size_t l2 = xmt_entry_key(e, &s.v, k2, sizeof k2);
    ck_assert(l1 == l2 && memcmp(k1, k2, l1) == 0);
    s.n = 1 << 20;
    l2 = xmt_entry_key(e, &s.v, k2, sizeof k2);
    ck_assert(memcmp(k1, k2, l1) != 0);
    xmt_entry_key_render(e, k2, l2, buf, sizeof buf);
    ck_assert_str_eq(buf, "x.shape=(1048576,), y.dtype=f32, big=1");
    ck_assert_uint_eq(xmt_entry_key(e, &s.v, k2, 10), 0); /* cap too small */
    ck_assert_int_eq(xmt_entry_key_render(e, k2, 5, buf, sizeof buf), -1);
    ck_assert_int_eq(xmt_entry_warmup(e), 3);
    ck_assert_int_eq(xmt_entry_iterations(e), 20);
    xmt_policy_free(set);
}
END_TEST

/* The parameters a decision reads (the memo compares only those): the key's slots, a
 * tensor's shape inlined in them, conditions, launch and argument expressions of the
 * entry, its configs and its pin; a pointer no expression names is not among them, nor
 * what only a buffer declaration (tuning, not deciding) reads. */
START_TEST(entry_params_read)
{
    static const char *yaml =
        "kernels:\n"
        "  - match: k\n"
        "    params: [a: ptr, b: ptr, n: i32, m: i32, s: f32, c: ptr, st: bytes(16), w: i32,"
        " o: i32, q: i32]\n"
        "    tensors:\n"
        "      a: {dtype: f32, shape: [n]}\n"
        "      b: {dtype: f32, shape: [q]}\n"
        "    triggers: [a]\n"
        "    space: {BLOCK: [64, 128]}\n"
        "    condition: \"c % 16 == 0\"\n"
        "    launch: {block: [BLOCK], grid: [\"cdiv(m, BLOCK)\"]}\n"
        "    configs:\n"
        "      - {BLOCK: 32, args: {o: \"w * 2\"}}\n"
        "    verify:\n"
        "      b: {rtol: 0.001}\n";
    xmt_policy_set *set = load_ok(yaml);
    const xmt_entry *e = xmt_policy_entry(set, 0);
    uint8_t read[10];
    memset(read, 7, sizeof read);
    ck_assert_uint_eq(xmt_entry_params_read(e, read, 10), 4);
    /*                      a  b  n  m  s  c  st w  o  q */
    const uint8_t want[] = {0, 0, 1, 1, 0, 1, 0, 1, 0, 0};
    ck_assert_mem_eq(read, want, sizeof want);
    xmt_policy_free(set);
    /* a field of a bytes(N) parameter, read by the pin */
    set = load_ok("kernels:\n  - match: k\n    params:\n      - p: ptr\n      - st:\n"
                  "          bytes: 16\n          fields: {len: i32@8}\n"
                  "    space: {B: [1, 2]}\n    launch: {block: [B]}\n"
                  "    pin: {B: 2, launch: {grid: [\"st.len\"]}}\n");
    e = xmt_policy_entry(set, 0);
    ck_assert_uint_eq(xmt_entry_params_read(e, read, 2), 1);
    ck_assert(read[0] == 0 && read[1] == 1);
    xmt_policy_free(set);
}
END_TEST

/* A slot that is only an original-launch value is copied into the key, not evaluated: the
 * same bytes as evaluating it (each against its "+ 0" twin, which the machine evaluates),
 * and the same rendered text. */
START_TEST(key_orig_slots_copied)
{
    enum { SLOT = 9 }; /* a slot's bytes in a key: its tag, its value (XMT_KEY_SLOT) */
    static const char *dims[7] = {"grid0.x",  "grid0.y",  "grid0.z", "block0.x",
                                  "block0.y", "block0.z", "shared0"};
    char yaml[2048];
    int at = snprintf(yaml, sizeof yaml,
                      "kernels:\n  - mangled: k\n" STD_PARAMS "    functional_triggers: {");
    for (int d = 0; d < 7; d++)
        at += snprintf(yaml + at, sizeof yaml - (size_t)at, "%sc%d: %s, e%d: '%s + 0'",
                       d ? ", " : "", d, dims[d], d, dims[d]);
    snprintf(yaml + at, sizeof yaml - (size_t)at, "}\n    pin: {}\n");
    int nerr;
    xmt_policy_set *set = load(yaml, &nerr);
    ck_assert_msg(nerr == 0, "%s", diags);
    const xmt_entry *e = xmt_policy_entry(set, 0);
    xmt_launch_view v = std_view(); /* grid 10, 20, 30; block 128, 2, 1; shared 512 */
    uint8_t key[XMT_KEY_MAX];
    ck_assert_uint_eq(xmt_entry_key(e, &v, key, sizeof key), 14 * SLOT);
    const int64_t want[7] = {10, 20, 30, 128, 2, 1, 512};
    for (int d = 0; d < 7; d++) {
        const uint8_t *c = key + 2 * d * SLOT, *t = c + SLOT;
        ck_assert_msg(memcmp(c, t, SLOT) == 0, "%s", dims[d]);
        int64_t x;
        memcpy(&x, c + 1, 8);
        ck_assert(c[0] == 0 && x == want[d]);
    }
    char buf[512];
    ck_assert_int_gt(xmt_entry_key_render(e, key, 14 * SLOT, buf, sizeof buf), 0);
    ck_assert_ptr_nonnull(strstr(buf, "c0=10, e0=10, c1=20, e1=20"));
    ck_assert_ptr_nonnull(strstr(buf, "c6=512, e6=512"));
    xmt_policy_free(set);
}
END_TEST

START_TEST(saxpy_candidates)
{
    xmt_policy_set *set = load_ok(saxpy_yaml);
    const xmt_entry *e = xmt_policy_entry(set, 0);
    saxpy_args s;
    saxpy_init(&s, 1000);
    ck_assert_uint_eq(xmt_entry_ncandidates(e), 6);
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &s.v, &c), 1);
    ck_assert_str_eq(c.label, "BLOCK=64");
    ck_assert_uint_eq(c.dims.block.x, 64);
    ck_assert_uint_eq(c.dims.block.y, 1);
    ck_assert_uint_eq(c.dims.grid.x, 16);
    ck_assert_uint_eq(c.dims.grid.y, 1);
    ck_assert_uint_eq(c.dims.shared, 0);
    ck_assert_uint_eq(c.nargs, 0);
    ck_assert_int_eq(xmt_entry_candidate(e, 4, &s.v, &c), 1);
    ck_assert_uint_eq(c.dims.grid.x, 1);
    ck_assert_int_eq(xmt_entry_candidate(e, 5, &s.v, &c), 0);
    ck_assert_str_eq(c.label, "BLOCK=2048");
    ck_assert_str_eq(c.why, "condition false");
    ck_assert_int_eq(xmt_entry_candidate(e, 6, &s.v, &c), 0);
    ck_assert_int_eq(xmt_entry_pin(e, &s.v, &c), 0);
    xmt_policy_free(set);
}
END_TEST

START_TEST(saxpy_buffers)
{
    xmt_policy_set *set = load_ok(saxpy_yaml);
    const xmt_entry *e = xmt_policy_entry(set, 0);
    saxpy_args s;
    saxpy_init(&s, 1000);
    ck_assert_uint_eq(xmt_entry_nbuffers(e), 1);
    xmt_buffer b;
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &s.v, &b), 1);
    ck_assert_str_eq(b.name, "y");
    ck_assert_uint_eq(b.param, 3);
    ck_assert_uint_eq(b.roles, XMT_BUF_RESET | XMT_BUF_RESTORE | XMT_BUF_VERIFY);
    ck_assert_uint_eq(b.bytes, 4000);
    ck_assert_int_eq(b.dtype, XMT_DT_F32);
    ck_assert(b.rtol == 1e-5 && b.atol == 0);
    s.n = 0; /* reset condition false: restore and verify remain */
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &s.v, &b), 1);
    ck_assert_uint_eq(b.roles, XMT_BUF_RESTORE | XMT_BUF_VERIFY);
    ck_assert_uint_eq(b.bytes, 0);
    ck_assert_int_eq(xmt_entry_buffer(e, 1, &s.v, &b), -1);
    xmt_policy_free(set);
}
END_TEST

/* ---- every trigger form -----------------------------------------------------------------------
 */

static const char *tens_yaml_fmt = "kernels:\n"
                                   "  - mangled: k\n"
                                   "    params: [m: i32, n: i64, x: ptr, cfg: {bytes: 16, fields: "
                                   "{count: i32@0, scale: {type: f32, offset: 8}}}]\n"
                                   "    tensors:\n"
                                   "      x: {dtype: f16, shape: [m, n]}\n"
                                   "    triggers: [%s]\n"
                                   "    configs: [{launch: {block: [128]}}]\n";

static void render_trigger(const char *trig, int32_t m, int64_t n, char *buf, size_t cap)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, trig);
    xmt_policy_set *set = load_ok(yaml);
    const xmt_entry *e = xmt_policy_entry(set, 0);
    uint64_t x = 0x1000;
    unsigned char cfg[16] = {0};
    int32_t count = 7;
    float scale = 0.5f;
    memcpy(cfg, &count, 4);
    memcpy(cfg + 8, &scale, 4);
    void *p[4] = {&m, &n, &x, cfg};
    xmt_launch_view v = {p, 4, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    uint8_t key[XMT_KEY_MAX];
    size_t kl = xmt_entry_key(e, &v, key, sizeof key);
    ck_assert_uint_gt(kl, 0);
    xmt_entry_key_render(e, key, kl, buf, cap);
    xmt_policy_free(set);
}

START_TEST(trigger_forms)
{
    char b[512];
    render_trigger("x", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x=(f16, (3, 5), (5, 1))");
    render_trigger("x.dtype", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.dtype=f16");
    render_trigger("x.shape", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.shape=(3, 5)");
    render_trigger("x.size()", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.shape=(3, 5)");
    render_trigger("x.size(1)", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.shape[1]=5");
    render_trigger("'x.shape[0]'", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.shape[0]=3");
    render_trigger("x.stride()", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.stride()=(5, 1)");
    render_trigger("x.stride(0)", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "x.stride(0)=5");
    render_trigger("m", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "m=3");
    render_trigger("cfg.count", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "cfg.count=7");
    render_trigger("cfg.scale", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "cfg.scale=0.5");
    render_trigger("m, n, x.dtype", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "m=3, n=5, x.dtype=f16");
    /* x subsumes x.shape and x.dtype (XMA) */
    render_trigger("x.shape, m, x, x.dtype", 3, 5, b, sizeof b);
    ck_assert_str_eq(b, "m=3, x=(f16, (3, 5), (5, 1))");
}
END_TEST

START_TEST(trigger_errors)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "x.foo");
    expect_err(yaml, "unknown tensor trigger");
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "x.size(2)");
    expect_err(yaml, "x has 2 dimensions");
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "nope");
    expect_err(yaml, "unknown parameter 'nope'");
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "m, m");
    expect_err(yaml, "trigger m appears twice");
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "cfg");
    expect_err(yaml, "bytes(N) parameter; name a field");
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "cfg.nope");
    expect_err(yaml, "cfg has no field 'nope'");
    snprintf(yaml, sizeof yaml, tens_yaml_fmt, "m + 1");
    expect_err(yaml, "computed keys belong in functional_triggers");
    expect_err("kernels:\n  - mangled: k\n    params: [x: ptr]\n    triggers: [x]\n    pin: {}\n",
               "x is a pointer; declare it in tensors:");
    expect_err(
        "kernels:\n  - mangled: k\n    params: [x: ptr]\n    triggers: [x.shape]\n    pin: {}\n",
        "x is not declared in tensors:");
    expect_err("kernels:\n  - mangled: k\n    params: [n: i32]\n    triggers: [BLOCK]\n    space: "
               "{BLOCK: [1, 2]}\n",
               "BLOCK is a tunable value");
    expect_err("kernels:\n  - mangled: k\n    params: [n: i32, it: i32]\n    triggers: [it]\n"
               "    space: {I: [1, 2]}\n    args: {it: I}\n",
               "it is set by a config (args:)");
    expect_err(
        "kernels:\n  - mangled: k\n    params: [n: i32]\n    functional_triggers: {f: 'B * 2'}\n"
        "    space: {B: [1, 2]}\n",
        "B is a tunable value (space:/configs:): not allowed in the functional trigger f");
    expect_err("kernels:\n  - mangled: k\n    params: [n: i32]\n    functional_triggers: {f: n}\n"
               "    triggers: [f]\n    pin: {}\n",
               "f is a functional trigger");
}
END_TEST

START_TEST(functional_bucketing)
{
    xmt_policy_set *set =
        load_ok("kernels:\n  - mangled: k\n    params: [n: i32]\n"
                "    functional_triggers: {bucket: 'next_pow2(n)', small: 'n < 512'}\n"
                "    pin: {}\n");
    const xmt_entry *e = xmt_policy_entry(set, 0);
    int32_t n = 1000;
    void *p[1] = {&n};
    xmt_launch_view v = {p, 1, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    uint8_t k1[64], k2[64];
    size_t l1 = xmt_entry_key(e, &v, k1, sizeof k1);
    n = 1020;
    size_t l2 = xmt_entry_key(e, &v, k2, sizeof k2);
    ck_assert(l1 == 18 && l1 == l2 && !memcmp(k1, k2, l1));
    // cppcheck-suppress [redundantAssignment,unreadVariable]
    n = 1025;
    xmt_entry_key(e, &v, k2, sizeof k2);
    ck_assert(memcmp(k1, k2, l1) != 0);
    char buf[128];
    xmt_entry_key_render(e, k2, l2, buf, sizeof buf);
    ck_assert_str_eq(buf, "bucket=2048, small=0");
    xmt_policy_free(set);
    /* no triggers at all: one constant 1-byte key, never the error value 0 */
    set = load_ok("kernels:\n  - mangled: k\n    params: [n: i32]\n    pin: {}\n");
    e = xmt_policy_entry(set, 0);
    ck_assert_uint_eq(xmt_entry_key(e, &v, k1, sizeof k1), 1);
    ck_assert_uint_eq(xmt_entry_key(e, &v, k1, 0), 0);
    ck_assert_int_gt(xmt_entry_key_render(e, k1, 1, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "(no triggers)");
    ck_assert_int_eq(xmt_entry_key_render(e, k1, 2, buf, sizeof buf), -1);
    xmt_policy_free(set);
}
END_TEST

START_TEST(tensor_attributes)
{
    /* strides explicit, tensor attributes in expressions */
    xmt_policy_set *set = load_ok(
        "kernels:\n  - mangled: k\n    params: [m: i32, n: i32, ld: i32, x: \"float*\"]\n"
        "    tensors:\n      x: {shape: [m, n], strides: [ld, 1]}\n"
        "    functional_triggers: {a: 'x.numel', b: 'x.numel()', c: 'x.ndim', d: 'x.dim()', "
        "e: 'x.itemsize', f: 'x.element_size()', g: 'x.nbytes', h: 'x.shape[1]', "
        "i: 'x.size(0)', j: 'x.stride(0)'}\n"
        "    triggers: [x]\n    pin: {}\n");
    const xmt_entry *e = xmt_policy_entry(set, 0);
    int32_t m = 3, n = 5, ld = 8;
    uint64_t x = 0x100;
    void *p[4] = {&m, &n, &ld, &x};
    xmt_launch_view v = {p, 4, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    uint8_t k[XMT_KEY_MAX];
    size_t kl = xmt_entry_key(e, &v, k, sizeof k);
    char buf[512];
    xmt_entry_key_render(e, k, kl, buf, sizeof buf);
    ck_assert_str_eq(
        buf, "x=(f32, (3, 5), (8, 1)), a=15, b=15, c=2, d=2, e=4, f=4, g=60, h=5, i=3, j=8");
    xmt_policy_free(set);
    expect_err("kernels:\n  - mangled: k\n    params: [m: i32, x: ptr]\n    tensors: {x: {dtype: "
               "f32, shape: [m]}}\n"
               "    functional_triggers: {a: 'x.shape'}\n    pin: {}\n",
               "x.shape is a tuple");
    expect_err("kernels:\n  - mangled: k\n    params: [m: i32, x: ptr]\n    tensors: {x: {dtype: "
               "f32, shape: [m]}}\n"
               "    functional_triggers: {a: 'x.shape[3]'}\n    pin: {}\n",
               "x has 1 dimension: dimension 3 does not exist");
    expect_err("kernels:\n  - mangled: k\n    params: [m: i32, x: ptr]\n    tensors: {x: {dtype: "
               "f32, shape: [m]}}\n"
               "    functional_triggers: {a: 'x.foo'}\n    pin: {}\n",
               "unknown tensor attribute 'x.foo'");
    expect_err("kernels:\n  - mangled: k\n    params: [m: i32, x: ptr, y: ptr]\n"
               "    tensors: {x: {dtype: f32, shape: ['y.shape[0]']}, y: {dtype: f32, shape: "
               "[m]}}\n    pin: {}\n",
               "y is not declared in tensors:");
}
END_TEST

START_TEST(buffers_bytes_and_strides)
{
    xmt_policy_set *set =
        load_ok("kernels:\n  - mangled: k\n    params: [m: i32, n: i32, x: ptr, ws: ptr, z: ptr]\n"
                "    tensors:\n      x: {dtype: f64, shape: [m, n], strides: [1, m]}\n      ws: "
                "{bytes: 'm * 100'}\n"
                "      z: {dtype: u8, shape: [m, 0]}\n"
                "    reset_to_zero: [ws, z]\n    restore: [x]\n    verify: [x]\n    pin: {}\n");
    const xmt_entry *e = xmt_policy_entry(set, 0);
    int32_t m = 3, n = 4;
    uint64_t a = 1, b = 2, c = 3;
    void *p[5] = {&m, &n, &a, &b, &c};
    xmt_launch_view v = {p, 5, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    ck_assert_uint_eq(xmt_entry_nbuffers(e), 3);
    xmt_buffer bf;
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &v, &bf), 1);
    ck_assert_str_eq(bf.name, "ws");
    ck_assert_uint_eq(bf.bytes, 300);
    ck_assert_int_eq(bf.dtype, XMT_DT_BYTES);
    ck_assert_uint_eq(bf.roles, XMT_BUF_RESET);
    ck_assert_int_eq(xmt_entry_buffer(e, 1, &v, &bf), 1);
    ck_assert_uint_eq(bf.bytes, 0);
    ck_assert_int_eq(xmt_entry_buffer(e, 2, &v, &bf), 1);
    ck_assert_str_eq(bf.name, "x");
    ck_assert_uint_eq(bf.bytes, (1 + 2 * 1 + 3 * 3) * 8); /* strided extent */
    ck_assert_uint_eq(bf.roles, XMT_BUF_RESTORE | XMT_BUF_VERIFY);
    ck_assert(bf.rtol == 0 && bf.atol == 0);
    m = -1;
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &v, &bf), -1);
    xmt_policy_free(set);
    /* a reset whose condition is false and that has no other role: nothing to do */
    set = load_ok("kernels:\n  - mangled: k\n    params: [m: i32, x: ptr]\n    tensors: {x: "
                  "{dtype: i32, shape: [m]}}\n"
                  "    reset_to_zero: {x: 'm > 10'}\n    verify: {x: bitwise}\n    pin: {}\n");
    e = xmt_policy_entry(set, 0);
    // cppcheck-suppress redundantAssignment ; read through p2
    m = 5;
    void *p2[2] = {&m, &a};
    xmt_launch_view v2 = {p2, 2, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &v2, &bf), 1);
    ck_assert_uint_eq(bf.roles, XMT_BUF_VERIFY);
    xmt_policy_free(set);
    set = load_ok("kernels:\n  - mangled: k\n    params: [m: i32, x: ptr]\n    tensors: {x: "
                  "{dtype: i32, shape: [m]}}\n"
                  "    reset_to_zero: {x: 'm > 10'}\n    pin: {}\n");
    e = xmt_policy_entry(set, 0);
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &v2, &bf), 0);
    // cppcheck-suppress unreadVariable ; read through p2
    m = 11;
    ck_assert_int_eq(xmt_entry_buffer(e, 0, &v2, &bf), 1);
    ck_assert_uint_eq(bf.roles, XMT_BUF_RESET);
    ck_assert_uint_eq(bf.bytes, 44);
    xmt_policy_free(set);
}
END_TEST

/* ---- candidates ----------------------------------------------------------------------------- */

static const xmt_entry *cand_entry(xmt_policy_set **set, const char *body)
{
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "kernels:\n  - mangled: k\n    params: [n: i32, it: i32, sc: f32, hh: f16]\n%s", body);
    *set = load_ok(yaml);
    return xmt_policy_entry(*set, 0);
}

static int32_t C_n = 1000, C_it = 1;
static float C_sc = 1;
static uint16_t C_hh = 0;
static void *c_params[4] = {&C_n, &C_it, &C_sc, &C_hh};
static xmt_attrs c_attrs;

static xmt_launch_view cview(void)
{
    xmt_attrs_default(&c_attrs);
    xmt_launch_view v = {c_params, 4, {{8, 2, 1}, {128, 1, 1}, 256}, &c_attrs};
    return v;
}

START_TEST(cand_order_and_defaults)
{
    xmt_policy_set *set;
    const xmt_entry *e = cand_entry(
        &set, "    configs:\n      - {A: 1, B: 10}\n      - {A: 2, B: 20, condition: 'n > 5000'}\n"
              "    space: {A: [3, 4], B: [30, 40, 50]}\n    launch: {block: ['A * 32']}\n");
    xmt_launch_view v = cview();
    ck_assert_uint_eq(xmt_entry_ncandidates(e), 2 + 6);
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 1);
    ck_assert_str_eq(c.label, "A=1, B=10");
    ck_assert_uint_eq(c.dims.block.x, 32);
    /* grid omitted: keep threads per dim: cdiv(8*128, 32) = 32; y: cdiv(2*1, 1) = 2 */
    ck_assert_uint_eq(c.dims.grid.x, 32);
    ck_assert_uint_eq(c.dims.grid.y, 2);
    ck_assert_uint_eq(c.dims.grid.z, 1);
    ck_assert_uint_eq(c.dims.shared, 256); /* shared omitted: shared0 */
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 0);
    ck_assert_str_eq(c.why, "config condition false");
    const char *labels[] = {"A=3, B=30", "A=3, B=40", "A=3, B=50",
                            "A=4, B=30", "A=4, B=40", "A=4, B=50"};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(xmt_entry_candidate(e, 2 + (size_t)i, &v, &c), 1);
        ck_assert_str_eq(c.label, labels[i]);
    }
    xmt_policy_free(set);
    /* block omitted: block0; grid list shorter than 3: 1 */
    e = cand_entry(
        &set, "    configs: [{launch: {grid: [7]}}, {launch: {block: 64, shared: 'n * 4'}}]\n");
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 1);
    ck_assert_str_eq(c.label, "config 0");
    ck_assert_uint_eq(c.dims.block.x, 128);
    ck_assert_uint_eq(c.dims.grid.x, 7);
    ck_assert_uint_eq(c.dims.grid.y, 1);
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 1);
    ck_assert_uint_eq(c.dims.block.x, 64);
    ck_assert_uint_eq(c.dims.block.y, 1);
    ck_assert_uint_eq(c.dims.grid.x, 16);
    ck_assert_uint_eq(c.dims.shared, 4000);
    xmt_policy_free(set);
}
END_TEST

START_TEST(cand_limits)
{
    xmt_policy_set *set;
    const xmt_entry *e = cand_entry(&set, "    space: {BX: [2048, 256], BY: [1, 8], BZ: [1, 128]}\n"
                                          "    launch: {block: [BX, BY, BZ], grid: [1]}\n");
    xmt_launch_view v = cview();
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "block 2048 > kernel_max_threads 1024");
    c_attrs.kernel_max_threads = 4096;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "block 2048 > max_threads_per_block 1024");
    c_attrs.max_threads_per_block = 0; /* unknown: not checked */
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "block.x 2048 > max_block_x 1024");
    c_attrs.max_threads_per_block = 100000;
    c_attrs.kernel_max_threads = 100000;
    c_attrs.max_block_y = 4;
    ck_assert_int_eq(xmt_entry_candidate(e, 6, &v, &c), 0); /* 256, 8, 1 */
    ck_assert_str_eq(c.why, "block.y 8 > max_block_y 4");
    ck_assert_int_eq(xmt_entry_candidate(e, 5, &v, &c), 0); /* 256, 1, 128 */
    ck_assert_str_eq(c.why, "block.z 128 > max_block_z 64");
    ck_assert_int_eq(xmt_entry_candidate(e, 4, &v, &c), 1); /* 256, 1, 1 */
    xmt_policy_free(set);
    e = cand_entry(&set, "    space: {G: [1, 70000, 3000000000]}\n    launch: {grid: [G, 'G > 1 ? "
                         "2 : 1', 'G > 1 ? G : 1'], block: [32]}\n");
    v = cview();
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 1);
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 0);
    ck_assert_str_eq(c.why, "grid.z 70000 > max_grid_z 65535");
    ck_assert_int_eq(xmt_entry_candidate(e, 2, &v, &c), 0);
    ck_assert_str_eq(c.why, "grid.x 3000000000 > max_grid_x 2147483647");
    c_attrs.max_grid_y = 1;
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 0);
    ck_assert_str_eq(c.why, "grid.y 2 > max_grid_y 1");
    xmt_policy_free(set);
    e = cand_entry(&set, "    space: {S: [1000, 49152]}\n    launch: {shared: S}\n");
    v = cview();
    c_attrs.kernel_static_shared = 1024;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 1);
    ck_assert_uint_eq(c.dims.shared, 1000);
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 0);
    ck_assert_str_eq(c.why,
                     "shared 49152 + kernel_static_shared 1024 > max_shared_per_block 49152");
    xmt_policy_free(set);
}
END_TEST

START_TEST(cand_eval_faults)
{
    xmt_policy_set *set;
    const xmt_entry *e = cand_entry(
        &set, "    space: {B: [0, 32]}\n    launch: {block: [32], grid: ['n / B', 2.5, -1]}\n");
    xmt_launch_view v = cview();
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "division by zero in grid.x");
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 0);
    ck_assert_str_eq(c.why, "grid.y = 2.5 is not a whole number");
    xmt_policy_free(set);
    e = cand_entry(&set, "    space: {B: [0]}\n    launch: {block: [B]}\n");
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "block.x = 0 is not a positive 32-bit count");
    xmt_policy_free(set);
    e = cand_entry(&set, "    space: {B: [1]}\n    condition: 'n / (B - 1) > 0'\n");
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "division by zero in condition");
    xmt_policy_free(set);
    e = cand_entry(&set, "    space: {B: [1]}\n    launch: {shared: '-5'}\n");
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 0);
    ck_assert_str_eq(c.why, "shared = -5 bytes is out of range");
    xmt_policy_free(set);
}
END_TEST

START_TEST(cand_args_and_pin)
{
    xmt_policy_set *set;
    const xmt_entry *e = cand_entry(
        &set, "    space: {ITEMS: [1, 4, 3000000000]}\n    args: {it: ITEMS, sc: 'ITEMS / 2.0'}\n"
              "    configs: [{ITEMS: 8, args: {it: 99, hh: 1.5}}]\n"
              "    pin: {ITEMS: 2, launch: {block: [64]}}\n    launch: {block: [128]}\n");
    xmt_launch_view v = cview();
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_candidate(e, 0, &v, &c), 1);
    ck_assert_uint_eq(c.nargs, 3); /* config's it and hh, then the entry's sc */
    ck_assert_uint_eq(c.args[0].param, 1);
    ck_assert_uint_eq(c.args[0].value, 99);
    ck_assert_uint_eq(c.args[0].size, 4);
    ck_assert_uint_eq(c.args[1].param, 3);
    ck_assert_uint_eq(c.args[1].value, 0x3e00);
    ck_assert_uint_eq(c.args[1].size, 2);
    ck_assert_uint_eq(c.args[2].param, 2);
    float f = 4.0f;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    ck_assert_uint_eq(c.args[2].value, fb);
    ck_assert_int_eq(xmt_entry_candidate(e, 2, &v, &c), 1); /* ITEMS=4 */
    ck_assert_uint_eq(c.args[0].param, 1);
    ck_assert_uint_eq(c.args[0].value, 4);
    ck_assert_int_eq(xmt_entry_candidate(e, 3, &v, &c), 0); /* does not fit i32 */
    ck_assert_str_eq(c.why, "args: it: value does not fit i32");
    ck_assert_int_eq(xmt_entry_pin(e, &v, &c), 1);
    ck_assert_str_eq(c.label, "pin: ITEMS=2");
    ck_assert_uint_eq(c.dims.block.x, 64);
    ck_assert_uint_eq(c.args[0].value, 2);
    xmt_policy_free(set);
    e = cand_entry(&set, "    pin: {launch: {block: [4096]}}\n");
    ck_assert_uint_eq(xmt_entry_ncandidates(e), 0);
    ck_assert_int_eq(xmt_entry_pin(e, &v, &c), -1);
    ck_assert_str_eq(c.label, "pin");
    ck_assert_str_eq(c.why, "block 4096 > kernel_max_threads 1024");
    xmt_policy_free(set);
}
END_TEST

/* xmt_entry_config (the launch path's): xmt_entry_candidate's and xmt_entry_pin's answer,
 * dims, args and why for every config, the pin and none, without the label, which
 * xmt_entry_label writes as they do. */
static void same_as_candidate(const xmt_entry *e, const xmt_launch_view *v, long config)
{
    xmt_candidate a, b;
    int ra = config == XMT_CAND_PIN ? xmt_entry_pin(e, v, &a)
                                    : xmt_entry_candidate(e, (size_t)config, v, &a);
    int rb = xmt_entry_config(e, config, v, &b);
    ck_assert_int_eq(ra, rb);
    ck_assert_str_eq(b.label, "");
    ck_assert_str_eq(a.why, b.why);
    ck_assert_int_eq(a.config, config);
    ck_assert_int_eq(b.config, config);
    ck_assert(memcmp(&a.dims, &b.dims, sizeof a.dims) == 0);
    ck_assert_uint_eq(a.nargs, b.nargs);
    ck_assert(memcmp(a.args, b.args, sizeof a.args) == 0);
    char label[sizeof a.label];
    if (config == XMT_CAND_PIN && ra == 0) { /* no pin: no label either */
        ck_assert_int_eq(xmt_entry_label(e, &b, label, sizeof label), -1);
        return;
    }
    ck_assert_int_eq(xmt_entry_label(e, &b, label, sizeof label), 0);
    ck_assert_str_eq(label, a.label);
}

START_TEST(cand_config_without_label)
{
    xmt_policy_set *set;
    const xmt_entry *e = cand_entry(
        &set, "    space: {ITEMS: [1, 4, 3000000000]}\n    args: {it: ITEMS, sc: 'ITEMS / 2.0'}\n"
              "    configs: [{ITEMS: 8, args: {it: 99, hh: 1.5}}, {ITEMS: 5, condition: 'n < 0'}]\n"
              "    pin: {ITEMS: 2, launch: {block: [64]}}\n    launch: {block: [128]}\n");
    xmt_launch_view v = cview();
    for (long i = 0; i < (long)xmt_entry_ncandidates(e); i++)
        same_as_candidate(e, &v, i); /* valid, a false condition, an arg that does not fit */
    same_as_candidate(e, &v, XMT_CAND_PIN);
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_config(e, (long)xmt_entry_ncandidates(e), &v, &c), 0);
    ck_assert_str_eq(c.why, "no such candidate");
    ck_assert_int_eq(xmt_entry_label(e, &c, c.label, sizeof c.label), -1);
    ck_assert_int_eq(xmt_entry_config(e, -1, &v, &c), 0); /* the program's own: not an entry's */
    ck_assert_int_eq(xmt_entry_label(e, &c, c.label, sizeof c.label), -1);
    xmt_policy_free(set);
    e = cand_entry(&set, "    configs: [{launch: {grid: [7]}}]\n"); /* "config 0"; no pin */
    same_as_candidate(e, &v, 0);
    same_as_candidate(e, &v, XMT_CAND_PIN);
    xmt_policy_free(set);
    e = cand_entry(&set, "    pin: {launch: {block: [4096]}}\n"); /* an invalid pin */
    same_as_candidate(e, &v, XMT_CAND_PIN);
    xmt_policy_free(set);
}
END_TEST

/* search: and search_evals: (issue 26): when a space is searched, with what budget. */
START_TEST(entry_search_keys)
{
    xmt_policy_set *set;
    unsigned dims[4];
    /* 320 points: above the threshold, so searched by default, 5% (16) below the floor */
    const char *big = "    space: {A: [1, 2, 3, 4, 5, 6, 7, 8], B: [1, 2, 3, 4, 5, 6, 7, 8], "
                      "C: [1, 2, 3, 4, 5]}\n    launch: {block: A * 32}\n";
    char body[1024];
    const xmt_entry *e = cand_entry(&set, big);
    ck_assert_int_eq(xmt_entry_search(e), XMT_SEARCH_UNSET);
    ck_assert_int_eq(xmt_entry_searched(e), 1);
    ck_assert_uint_eq(xmt_entry_search_evals(e), XMT_SEARCH_MIN_EVALS);
    ck_assert_uint_eq(xmt_entry_space_dims(e, dims, 4), 3);
    ck_assert(dims[0] == 8 && dims[1] == 8 && dims[2] == 5);
    ck_assert_uint_eq(xmt_entry_space_first(e), 0);
    char d[4096];
    xmt_entry_describe(e, d, sizeof d);
    ck_assert_msg(strstr(d, "search: local (the default for its size), seed 1, at most 24 of 320 "
                            "points evaluated\n"),
                  "%s", d);
    xmt_policy_free(set);
    snprintf(body, sizeof body, "%s    search: exhaustive\n", big);
    e = cand_entry(&set, body);
    ck_assert_int_eq(xmt_entry_search(e), XMT_SEARCH_EXHAUSTIVE);
    ck_assert_int_eq(xmt_entry_searched(e), 0);
    xmt_entry_describe(e, d, sizeof d);
    ck_assert_msg(strstr(d, "search: exhaustive, every point of the space timed\n"), "%s", d);
    xmt_policy_free(set);
    snprintf(body, sizeof body, "%s    search_evals: 10%%\n", big);
    e = cand_entry(&set, body);
    ck_assert_uint_eq(xmt_entry_search_evals(e), 32);
    xmt_policy_free(set);
    /* a small space with configs: items first: timed in full unless search: local */
    const char *small = "    configs: [{A: 9}]\n    space: {A: [1, 2, 3, 4]}\n"
                        "    launch: {block: A * 32}\n";
    e = cand_entry(&set, small);
    ck_assert_int_eq(xmt_entry_searched(e), 0);
    ck_assert_uint_eq(xmt_entry_space_first(e), 1);
    xmt_policy_free(set);
    snprintf(body, sizeof body, "%s    search: local\n    search_evals: 3\n", small);
    e = cand_entry(&set, body);
    ck_assert_int_eq(xmt_entry_searched(e), 1);
    ck_assert_uint_eq(xmt_entry_search_evals(e), 3);
    xmt_policy_free(set);
    snprintf(body, sizeof body, "%s    search: local\n    search_evals: 1000\n", small);
    e = cand_entry(&set, body);
    ck_assert_uint_eq(xmt_entry_search_evals(e), 4); /* at most the space */
    xmt_policy_free(set);
}
END_TEST

/* tolerance: (issue 28): the one protect: auto gives the float outputs it finds. */
START_TEST(entry_tolerance_key)
{
    xmt_policy_set *set;
    double r = -1, a = -1;
    const xmt_entry *e = cand_entry(&set, "    space: {B: [1, 2]}\n");
    ck_assert_int_eq(xmt_entry_tolerance(e, &r, &a), 0); /* none: bitwise */
    xmt_policy_free(set);
    e = cand_entry(&set, "    space: {B: [1, 2]}\n    tolerance: {rtol: 1e-5}\n");
    ck_assert_int_eq(xmt_entry_tolerance(e, &r, &a), 1);
    ck_assert(r == 1e-5 && a == 0);
    char d[4096];
    xmt_entry_describe(e, d, sizeof d);
    ck_assert_msg(strstr(d, ", tolerance rtol 1e-05 atol 0\n"), "%s", d);
    xmt_policy_free(set);
    e = cand_entry(
        &set, "    space: {B: [1, 2]}\n    protect: auto\n    tolerance: {rtol: 0, atol: 2}\n");
    ck_assert_int_eq(xmt_entry_tolerance(e, &r, &a), 1);
    ck_assert(r == 0 && a == 2);
    xmt_policy_free(set);
}
END_TEST

/* The search's start: the valid point nearest the program's own launch and arguments. */
START_TEST(space_nearest_own)
{
    xmt_policy_set *set;
    const char *body = "    space: {B: [32, 64, 128, 256], I: [1, 2, 4]}\n"
                       "    launch: {block: [B]}\n    args: {it: I}\n";
    const xmt_entry *e = cand_entry(&set, body);
    xmt_launch_view v = cview(); /* block 128, it = 1 */
    ck_assert_uint_eq(xmt_entry_space_nearest(e, &v), 2 * 3 + 0);
    C_it = 4;
    ck_assert_uint_eq(xmt_entry_space_nearest(e, &v), 2 * 3 + 2);
    C_it = 1;
    xmt_policy_free(set);
    /* the own block excluded: 64 and 256 are as far (block and grid one step each); the
     * lower index wins */
    char b2[512];
    snprintf(b2, sizeof b2, "%s    condition: 'B != 128'\n", body);
    e = cand_entry(&set, b2);
    ck_assert_uint_eq(xmt_entry_space_nearest(e, &v), 1 * 3 + 0);
    xmt_policy_free(set);
    /* nothing valid, and no space */
    snprintf(b2, sizeof b2, "%s    condition: 'B > 1000'\n", body);
    e = cand_entry(&set, b2);
    ck_assert_uint_eq(xmt_entry_space_nearest(e, &v), SIZE_MAX);
    xmt_policy_free(set);
    e = cand_entry(&set, "    configs: [{launch: {block: [64]}}]\n");
    ck_assert_uint_eq(xmt_entry_space_nearest(e, &v), SIZE_MAX);
    xmt_policy_free(set);
}
END_TEST

START_TEST(entry_defaults_and_options)
{
    xmt_policy_set *set;
    const xmt_entry *e = cand_entry(&set, "    pin: {}\n");
    ck_assert_int_eq(xmt_entry_warmup(e), -1);
    ck_assert_int_eq(xmt_entry_iterations(e), -1);
    ck_assert(xmt_entry_budget_ms(e) < 0);
    ck_assert(xmt_entry_warmup_ms(e) < 0);
    ck_assert_int_eq(xmt_entry_use_mean(e), -1); /* XMATUNE_STATISTIC decides */
    ck_assert_int_eq(xmt_entry_l2_flush(e), -1);
    ck_assert_uint_eq(xmt_entry_nbuffers(e), 0);
    xmt_policy_free(set);
    /* an explicit median is kept, so that it overrides XMATUNE_STATISTIC=mean */
    e = cand_entry(&set, "    pin: {}\n    statistic: median\n");
    ck_assert_int_eq(xmt_entry_use_mean(e), 0);
    xmt_policy_free(set);
    e = cand_entry(&set, "    pin: {}\n    warmup: 0\n    iterations: 100\n    budget_ms: 250.5\n"
                         "    statistic: mean\n    l2_flush: true\n    warmup_ms: 0\n");
    ck_assert_int_eq(xmt_entry_warmup(e), 0);
    ck_assert_int_eq(xmt_entry_iterations(e), 100);
    ck_assert(xmt_entry_budget_ms(e) == 250.5);
    ck_assert(xmt_entry_warmup_ms(e) == 0);
    ck_assert_int_eq(xmt_entry_use_mean(e), 1);
    ck_assert_int_eq(xmt_entry_l2_flush(e), 1);
    xmt_policy_free(set);
    e = cand_entry(&set, "    pin: {}\n    statistic: median\n    l2_flush: no\n");
    ck_assert_int_eq(xmt_entry_use_mean(e), 0);
    ck_assert_int_eq(xmt_entry_l2_flush(e), 0);
    xmt_policy_free(set);
}
END_TEST

/* ---- parameters, signatures, layout ------------------------------------------------------- */

START_TEST(params_c_types_and_layout)
{
    xmt_policy_set *set = load_ok(
        "kernels:\n  - mangled: k\n"
        "    params: {n: int, a: float, x: const float*, y: float *, q: size_t, s: bytes(24)}\n"
        "    tensors: {x: {shape: [n]}}\n    pin: {}\n");
    const xmt_entry *e = xmt_policy_entry(set, 0);
    ck_assert_uint_eq(xmt_entry_nparams(e), 6);
    const char *name, *type;
    size_t size;
    size_t want[6] = {4, 4, 8, 8, 8, 24};
    for (size_t i = 0; i < 6; i++) {
        ck_assert(xmt_entry_param(e, i, &name, &type, &size));
        ck_assert_uint_eq(size, want[i]);
    }
    ck_assert(!xmt_entry_param(e, 6, &name, &type, &size));
    xmt_entry_param(e, 2, &name, &type, &size);
    ck_assert_str_eq(name, "x");
    size_t offs[6] = {0, 4, 8, 16, 24, 32};
    char why[512];
    ck_assert_int_eq(xmt_entry_check_layout(e, 6, offs, want, why, sizeof why), 0);
    size_t bad[6] = {4, 4, 8, 8, 4, 24};
    ck_assert_int_eq(xmt_entry_check_layout(e, 6, offs, bad, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "policy: 6 params (n int=4, a float=4, x const float*=8") != NULL,
                  "%s", why);
    ck_assert_msg(strstr(why, "kernel: 6 params (4@0, 4@4, 8@8, 8@16, 4@24, 24@32 size@offset)") !=
                      NULL,
                  "%s", why);
    ck_assert_int_eq(xmt_entry_check_layout(e, 5, offs, want, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "kernel: 5 params"));
    /* the tensor's dtype came from float* */
    xmt_policy_free(set);
}
END_TEST

START_TEST(params_from_signature)
{
    xmt_policy_set *set = load_ok("kernels:\n  - match: saxpy\n    params: [n, a, x, y]\n"
                                  "    tensors: {y: {dtype: f32, shape: [n]}}\n"
                                  "    triggers: [n, a]\n    space: {B: [128, 256]}\n"
                                  "    launch: {block: [B], grid: ['cdiv(n, B)']}\n");
    const xmt_entry *base = xmt_policy_entry(set, 0);
    ck_assert_int_eq(xmt_entry_needs_signature(base), 1);
    diags[0] = 0;
    const xmt_entry *e = xmt_policy_match(set, "_Z5saxpyifPKfPf", cap_diag, NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(xmt_entry_needs_signature(e), 0);
    const xmt_entry *e2 = xmt_policy_match(set, "_Z5saxpyifPKfPf", cap_diag, NULL);
    ck_assert_ptr_eq(e, e2); /* cached per signature */
    const char *name, *type;
    size_t size;
    xmt_entry_param(e, 0, &name, &type, &size);
    ck_assert_str_eq(type, "i32");
    xmt_entry_param(e, 1, &name, &type, &size);
    ck_assert_str_eq(type, "f32");
    xmt_entry_param(e, 2, &name, &type, &size);
    ck_assert_str_eq(type, "ptr");
    ck_assert_uint_eq(size, 8);
    int32_t n = 1000;
    float a = 0.5f;
    uint64_t x = 1, y = 2;
    void *p[4] = {&n, &a, &x, &y};
    xmt_launch_view v = {p, 4, {{1, 1, 1}, {1, 1, 1}, 0}, NULL};
    uint8_t k[64];
    char buf[128];
    size_t kl = xmt_entry_key(e, &v, k, sizeof k);
    xmt_entry_key_render(e, k, kl, buf, sizeof buf);
    ck_assert_str_eq(buf, "n=1000, a=0.5");
    xmt_candidate c;
    ck_assert_int_eq(xmt_entry_candidate(e, 1, &v, &c), 1);
    ck_assert_uint_eq(c.dims.grid.x, 4);
    /* the unspecialised entry cannot read n */
    ck_assert_uint_eq(xmt_entry_key(base, &v, k, sizeof k), 0);
    /* an extern "C" kernel carries no types */
    diags[0] = 0;
    ck_assert_ptr_null(xmt_policy_match(set, "saxpy", cap_diag, NULL));
    ck_assert_ptr_nonnull(strstr(diags, "carries no parameter types"));
    /* wrong number of parameters */
    diags[0] = 0;
    ck_assert_ptr_null(xmt_policy_match(set, "_Z5saxpyifPf", cap_diag, NULL));
    ck_assert_ptr_nonnull(strstr(diags, "the signature has 3 parameters, the policy names 4"));
    xmt_policy_free(set);
    /* a struct by value cannot be typed from the signature */
    set = load_ok("kernels:\n  - match: k\n    params: [s]\n    pin: {}\n");
    diags[0] = 0;
    ck_assert_ptr_null(xmt_policy_match(set, "_Z1k3Foo", cap_diag, NULL));
    ck_assert_ptr_nonnull(strstr(diags, "parameter s has type 'Foo'"));
    xmt_policy_free(set);
    /* a reference is passed as a pointer (it was "not a scalar or pointer"); match: sees
     * the name with its non-type template argument, cast included */
    set = load_ok("kernels:\n  - match: 'k<(char)1>'\n    params: [x, n]\n    pin: {}\n");
    diags[0] = 0;
    e = xmt_policy_match(set, "_Z1kILc1EEvRfi", cap_diag, NULL); /* k<(char)1>(float&, int) */
    ck_assert_msg(e != NULL, "%s", diags);
    xmt_entry_param(e, 0, &name, &type, &size);
    ck_assert_str_eq(type, "ptr");
    ck_assert_uint_eq(size, 8);
    xmt_entry_param(e, 1, &name, &type, &size);
    ck_assert_str_eq(type, "i32");
    xmt_policy_free(set);
}
END_TEST

START_TEST(set_arg_and_describe)
{
    xmt_policy_set *set = load_ok("kernels:\n  - mangled: k\n    params: [n: u16, cfg: {bytes: 8, "
                                  "fields: {c: i32@4}}, x: ptr]\n    pin: {}\n");
    const xmt_entry *e = xmt_policy_entry(set, 0);
    uint16_t n = 0;
    unsigned char cfg[8] = {0};
    uint64_t x = 0;
    void *p[3] = {&n, cfg, &x};
    char why[128];
    ck_assert_int_eq(xmt_entry_set_arg(e, "n", "513", p, why, sizeof why), 0);
    ck_assert_uint_eq(n, 513);
    ck_assert_int_eq(xmt_entry_set_arg(e, "n", "70000", p, why, sizeof why), -1);
    ck_assert_int_eq(xmt_entry_set_arg(e, "cfg.c", "-2", p, why, sizeof why), 0);
    int32_t cv;
    memcpy(&cv, cfg + 4, 4);
    ck_assert_int_eq(cv, -2);
    ck_assert_int_eq(xmt_entry_set_arg(e, "cfg", "1", p, why, sizeof why), -1);
    ck_assert_int_eq(xmt_entry_set_arg(e, "cfg.nope", "1", p, why, sizeof why), -1);
    ck_assert_int_eq(xmt_entry_set_arg(e, "x", "0x4000", p, why, sizeof why), 0);
    ck_assert_uint_eq(x, 0x4000);
    ck_assert_int_eq(xmt_entry_set_arg(e, "zz", "1", p, why, sizeof why), -1);
    ck_assert_int_eq(xmt_entry_set_arg(e, "n", "abc", p, why, sizeof why), -1);
    char buf[2048];
    ck_assert_int_gt(xmt_entry_describe(e, buf, sizeof buf), 0);
    ck_assert_ptr_nonnull(strstr(buf, "cfg: bytes(8) {c: i32@4}"));
    ck_assert_ptr_nonnull(strstr(buf, "pinned"));
    xmt_policy_free(set);
}
END_TEST

/* ---- matching ------------------------------------------------------------------------------ */

START_TEST(demangle)
{
    char name[256], sig[256];
    ck_assert_int_eq(xmt_demangle("_ZN2ns3fooIfLi128EEEvPfi", name, sizeof name, sig, sizeof sig),
                     1);
    ck_assert_str_eq(name, "ns::foo<float, 128>");
    ck_assert_str_eq(sig, "ns::foo<float, 128>(float*, int)");
    ck_assert_int_eq(xmt_demangle("triton_poi_fused_add_0", name, sizeof name, sig, sizeof sig), 0);
    ck_assert_str_eq(name, "triton_poi_fused_add_0");
    ck_assert_str_eq(sig, "triton_poi_fused_add_0");
    ck_assert_int_eq(xmt_demangle("_Zgarbage", name, sizeof name, sig, sizeof sig), 0);
    ck_assert_str_eq(name, "_Zgarbage");
    ck_assert_int_eq(xmt_demangle("_ZN2ns3fooIfLi128EEEvPfi", name, 5, NULL, 0), -1);
    ck_assert_str_eq(name, "ns::");
    ck_assert_int_eq(xmt_demangle("_Z5saxpyifPKfPf", NULL, 0, sig, sizeof sig), 1);
    ck_assert_str_eq(sig, "saxpy(int, float, float const*, float*)");
}
END_TEST

static const char *match_yaml = "kernels:\n"
                                "  - match: 'ns::foo<*>'\n    pin: {}\n"               /* line 2 */
                                "  - match: 'ns::foo<float, *>'\n    pin: {}\n"        /* line 4 */
                                "  - signature: '*(float\\*, int)'\n    pin: {}\n"     /* line 6 */
                                "  - mangled: _ZN2ns3fooIfLi256EEEvPfi\n    pin: {}\n" /* line 8 */
                                "  - match: 'triton_*_fused_?'\n    pin: {}\n"         /* line 10 */
                                "  - match: 'vec_add'\n    pin: {}\n"                  /* line 12 */
                                "  - match: 'vec_*'\n    pin: {}\n"                    /* line 14 */
                                "  - match: 'vec_ad?'\n    pin: {}\n"                  /* line 16 */
                                "  - match: 'operator[]*'\n    pin: {}\n";             /* line 18 */

static const char *matched(xmt_policy_set *set, const char *mangled)
{
    diags[0] = 0;
    const xmt_entry *e = xmt_policy_match(set, mangled, cap_diag, NULL);
    return e ? xmt_entry_origin(e) : "none";
}

START_TEST(match_precedence)
{
    xmt_policy_set *set = load_ok(match_yaml);
    /* template kernel, double: only the first glob */
    ck_assert_str_eq(matched(set, "_ZN2ns3fooIdLi128EEEvPdi"), "t.yaml:2");
    ck_assert_str_eq(diags, "");
    /* float, 128: signature: beats both match: globs; warning names all three */
    ck_assert_str_eq(matched(set, "_ZN2ns3fooIfLi128EEEvPfi"), "t.yaml:6");
    ck_assert_ptr_nonnull(strstr(
        diags,
        "matches 3 entries: t.yaml:2 (match: ns::foo<*>), t.yaml:4 (match: ns::foo<float, *>), "
        "t.yaml:6 (signature: *(float\\*, int)); using t.yaml:6, by signature:"));
    /* mangled: exact beats all */
    ck_assert_str_eq(matched(set, "_ZN2ns3fooIfLi256EEEvPfi"), "t.yaml:8");
    /* Triton / extern "C" names as they are */
    ck_assert_str_eq(matched(set, "triton_poi_fused_0"), "t.yaml:10");
    ck_assert_str_eq(matched(set, "triton_poi_fused_10"), "none");
    /* same kind: more literal characters; then first loaded */
    ck_assert_str_eq(matched(set, "vec_add"), "t.yaml:12");
    ck_assert_str_eq(matched(set, "vec_mul"), "t.yaml:14");
    ck_assert_str_eq(matched(set, "vec_adx"), "t.yaml:16");
    ck_assert_ptr_nonnull(strstr(diags, "using t.yaml:16"));
    ck_assert_str_eq(matched(set, "none_such"), "none");
    ck_assert_int_eq(xmt_entry_matches(xmt_policy_entry(set, 0), "_ZN2ns3fooIdLi128EEEvPdi"), 1);
    ck_assert_int_eq(xmt_entry_matches(xmt_policy_entry(set, 1), "_ZN2ns3fooIdLi128EEEvPdi"), 0);
    xmt_policy_free(set);
    set = load_ok("kernels:\n  - match: 'a*'\n    pin: {}\n  - match: '*a'\n    pin: {}\n");
    ck_assert_str_eq(matched(set, "aba"), "t.yaml:2"); /* tie: first loaded */
    xmt_policy_free(set);
    set = load_ok("kernels: []\n");
    ck_assert_str_eq(matched(set, "x"), "none");
    xmt_policy_free(set);
}
END_TEST

/* ---- loading ------------------------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(load_dir_and_files)
{
    char dir[] = "/tmp/xmtpolXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char p[256];
    snprintf(p, sizeof p, "%s/b.yml", dir);
    write_file(p, "kernels:\n  - match: b\n    pin: {}\n");
    snprintf(p, sizeof p, "%s/a.yaml", dir);
    write_file(p, "kernels:\n  - match: a\n    pin: {}\n  - match: a2\n    pin: {}\n");
    snprintf(p, sizeof p, "%s/c.txt", dir);
    write_file(p, "not yaml: [");
    snprintf(p, sizeof p, "%s/.hidden.yaml", dir);
    write_file(p, "not yaml: [");
    xmt_policy_set *set = NULL;
    diags[0] = 0;
    ck_assert_int_eq(xmt_policy_load(dir, &set, cap_diag, NULL), 0);
    ck_assert_uint_eq(xmt_policy_count(set), 3);
    ck_assert_str_eq(xmt_entry_pattern(xmt_policy_entry(set, 0)), "match: a");
    ck_assert_str_eq(xmt_entry_pattern(xmt_policy_entry(set, 2)), "match: b");
    ck_assert_ptr_null(xmt_policy_entry(set, 3));
    xmt_policy_free(set);
    snprintf(p, sizeof p, "%s/a.yaml", dir);
    ck_assert_int_eq(xmt_policy_load(p, &set, cap_diag, NULL), 0);
    ck_assert_uint_eq(xmt_policy_count(set), 2);
    char orig[300];
    snprintf(orig, sizeof orig, "%s:4", p);
    ck_assert_str_eq(xmt_entry_origin(xmt_policy_entry(set, 1)), orig);
    xmt_policy_free(set);
    /* errors in one file keep the other's entries */
    snprintf(p, sizeof p, "%s/a2.yaml", dir);
    write_file(p, "kernels:\n  - match: x\n    bogus: 1\n    pin: {}\n  - match: y\n    pin: {}\n");
    diags[0] = 0;
    ck_assert_int_eq(xmt_policy_load(dir, &set, cap_diag, NULL), 1);
    ck_assert_uint_eq(xmt_policy_count(set), 4);
    ck_assert_ptr_nonnull(strstr(diags, "a2.yaml:3:5: kernel entry: unknown key 'bogus'"));
    xmt_policy_free(set);
    ck_assert_int_eq(xmt_policy_load("/nonexistent/policy.yaml", &set, cap_diag, NULL), 1);
    ck_assert_ptr_nonnull(strstr(diags, "/nonexistent/policy.yaml:1:1: cannot open"));
    ck_assert_uint_eq(xmt_policy_count(set), 0);
    xmt_policy_free(set);
    ck_assert_int_eq(xmt_policy_load("/nonexistent", NULL, NULL, NULL), 1);
    /* clean up */
    const char *names[] = {"a.yaml", "b.yml", "c.txt", ".hidden.yaml", "a2.yaml"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}
END_TEST

START_TEST(load_edge_cases)
{
    xmt_policy_set *s = load_ok("");
    ck_assert_uint_eq(xmt_policy_count(s), 0);
    xmt_policy_free(s);
    s = load_ok("kernels:\n");
    xmt_policy_free(s);
    s = load_ok("version: 1\nkernels: []\n");
    xmt_policy_free(s);
    /* aliases that do not loop are fine */
    s = load_ok(
        "kernels:\n  - match: a\n    params: &p [n: i32]\n    pin: &c {launch: {block: [64]}}\n"
        "  - match: b\n    params: *p\n    pin: *c\n");
    ck_assert_uint_eq(xmt_policy_count(s), 2);
    xmt_policy_free(s);
    /* a big but bounded space */
    s = load_ok("kernels:\n  - match: a\n    space: {A: [1,2,3,4,5,6,7,8], B: [1,2,3,4,5,6,7,8], "
                "C: [1,2,3,4,5,6,7,8], "
                "D: [1,2,3,4,5,6,7,8], E: [1,2,3,4,5,6,7,8]}\n");
    ck_assert_uint_eq(xmt_entry_ncandidates(xmt_policy_entry(s, 0)), 32768);
    xmt_policy_free(s);
}
END_TEST

START_TEST(load_errors)
{
    expect_err("kernels: [\n", "t.yaml:2:1: YAML:");
    expect_err("kernels:\n  - match: a\n    match: b\n    pin: {}\n",
               "t.yaml:3:5: kernel entry: duplicate key 'match' (first at line 2)");
    expect_err("a: &x [*x]\n", "recursive alias");
    expect_err("kernels:\n  - match: a\n    pin: {}\n    colour: red\n",
               "t.yaml:4:5: kernel entry: unknown key 'colour'");
    expect_err("kernels:\n  - match: a\n    space: {}\n", "space: is empty");
    expect_err("kernels:\n  - match: a\n    space: {B: []}\n",
               "t.yaml:3:16: space B: empty list of values");
    expect_err("kernels:\n  - match: a\n    warmup: many\n    pin: {}\n",
               "t.yaml:3:13: warmup: expected a whole number, found 'many'");
    expect_err("kernels:\n  - match: a\n    params: [n: i33]\n    pin: {}\n", "unknown type 'i33'");
    expect_err("kernels:\n  - match: a\n    params: [n: i32]\n    space: {B: [1]}\n    condition: "
               "'n + Q'\n",
               "t.yaml:5:21: in the entry's condition 'n + Q': unknown name 'Q'");
    expect_err(
        "kernels:\n  - match: a\n    params: [n: i32]\n    space: {B: [1]}\n    condition: n +\n",
        "t.yaml:5:19: in the entry's condition 'n +': expression ends early");
    expect_err("kernels:\n  - match: a\n", "nothing to tune");
    expect_err("kernels:\n  - match: a\n    pin: {}\n    protect: declared\n    tolerance: "
               "{rtol: 1e-5}\n",
               "t.yaml:5:16: tolerance: applies under protect: auto");
    expect_err("kernels:\n  - match: a\n    pin: {}\n    tolerance: {rtol: -1}\n",
               "t.yaml:4:23: rtol:");
    expect_err("kernels:\n  - match: a\n    pin: {}\n    tolerance: {ulp: 1}\n",
               "t.yaml:4:17: tolerance: unknown key 'ulp'");
    expect_err("kernels:\n  - pin: {}\n", "needs one of match:");
    expect_err("kernels: 3\n", "kernels: expected a list");
    expect_err("kernels: []\n---\nkernels: []\n", "one YAML document per file");
    expect_err("stuff: 1\n", "unknown key 'stuff'");
    expect_err("version: 2\nkernels: []\n", "version: 2 is out of range");
    expect_err("- a\n", "expected a mapping");
    char big[400];
    snprintf(
        big, sizeof big, "kernels:\n  - match: a\n    space: {A: [%s], B: [%s]}\n",
        "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32",
        "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32");
    xmt_policy_set *s = load_ok(big); /* 1024 */
    xmt_policy_free(s);
    /* the alias bomb: bounded */
    char bomb[2048] = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'h'; c++) {
        char line[128];
        snprintf(line, sizeof line, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n",
                 c, c, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
        strcat(bomb, line);
    }
    expect_err(bomb, "aliases expand to more than 100000 nodes");
    /* file size */
    size_t n = XMT_MAX_FILE_BYTES + 10;
    char *huge = malloc(n + 1);
    memset(huge, '#', n);
    huge[n] = 0;
    expect_err(huge, "file larger than 1048576 bytes");
    free(huge);
}
END_TEST

/* The fingerprint follows what an entry says: not comments or layout, and not what
 * other entries say. */
START_TEST(entry_fingerprint)
{
    const char *a = "kernels:\n  - match: saxpy\n    space: {B: [64, 128]}\n"
                    "  - match: other\n    configs: [{launch: {block: [32]}}]\n";
    const char *b = "# a comment\nkernels:\n  - match: \"saxpy\"   # quoted\n"
                    "    space:\n      B: [64, 128]\n"
                    "  - match: other\n    configs: [{launch: {block: [64]}}]\n";
    const char *c = "kernels:\n  - match: saxpy\n    space: {B: [64, 256]}\n";
    xmt_policy_set *sa = load_ok(a), *sb = load_ok(b), *sc = load_ok(c);
    uint64_t fa = xmt_entry_fingerprint(xmt_policy_entry(sa, 0));
    ck_assert_uint_eq(fa, xmt_entry_fingerprint(xmt_policy_entry(sb, 0)));
    ck_assert_uint_ne(fa, xmt_entry_fingerprint(xmt_policy_entry(sc, 0)));
    ck_assert_uint_ne(xmt_entry_fingerprint(xmt_policy_entry(sa, 1)),
                      xmt_entry_fingerprint(xmt_policy_entry(sb, 1)));
    /* a measurement key is part of what the entry says (warmup_ms: issue 12) */
    xmt_policy_set *sd = load_ok("kernels:\n  - match: saxpy\n    space: {B: [64, 128]}\n"
                                 "    warmup_ms: 20\n");
    ck_assert_uint_ne(fa, xmt_entry_fingerprint(xmt_policy_entry(sd, 0)));
    xmt_policy_free(sd);
    xmt_policy_free(sa);
    xmt_policy_free(sb);
    xmt_policy_free(sc);
}
END_TEST

/* An untyped 8-byte parameter (issue 28, item 4): what discover recorded of it at each
 * launch decides what the stub declares -- a pointer where every launch saw memory the
 * driver knows, a 64-bit scalar where every one saw a value (then evidence for the idioms
 * like an i32: grid.x == cdiv(n, block.x)), neither where they disagree, and a pointer,
 * as before, from an older log that recorded nothing there. */
START_TEST(untyped8_kinds)
{
    static xmt_shapes sh;
    memset(&sh, 0, sizeof sh);
    ck_assert_int_eq(xmt_untyped8_kind(&sh, 1), XMT_U8_UNSEEN); /* no launch recorded */
    sh.nobs = 2;
    for (size_t i = 0; i < 2; i++) {
        xmt_obs *o = &sh.o[i];
        long long n = i ? 80000 : 40000;
        o->grid[0] = (n + 63) / 64;
        o->block[0] = 64;
        o->grid[1] = o->grid[2] = o->block[1] = o->block[2] = 1;
        o->has[0] = XMT_OBS_POINTER;
        o->has[1] = XMT_OBS_VALUE;
        o->v[1] = n;
        o->has[2] = XMT_OBS_NONE; /* an older log's untyped 8-byte parameter */
        o->has[3] = i ? XMT_OBS_VALUE : XMT_OBS_POINTER;
        o->v[3] = 0; /* a pointer passed as 0 once */
    }
    ck_assert_int_eq(xmt_untyped8_kind(&sh, 0), XMT_U8_POINTER);
    ck_assert_int_eq(xmt_untyped8_kind(&sh, 1), XMT_U8_VALUE);
    ck_assert_int_eq(xmt_untyped8_kind(&sh, 2), XMT_U8_UNSEEN);
    ck_assert_int_eq(xmt_untyped8_kind(&sh, 3), XMT_U8_MIXED);
    sh.o[1].has[1] = XMT_OBS_NONE; /* a launch that did not record it does not disagree */
    ck_assert_int_eq(xmt_untyped8_kind(&sh, 1), XMT_U8_VALUE);
    sh.o[1].has[1] = XMT_OBS_VALUE;
    /* declared i64 (is_int), the 64-bit size is what the grid covers */
    xmt_pinfo info[4] = {{8, 1, 0, 0, 0, XMT_U8_POINTER},
                         {8, 0, 1, 0, 0, XMT_U8_VALUE},
                         {8, 1, 0, 0, 0, XMT_U8_UNSEEN},
                         {8, 0, 0, 1, 0, XMT_U8_MIXED}};
    xmt_evidence ev;
    xmt_find_evidence(&sh, info, 4, &ev);
    ck_assert_int_eq(ev.cover[0], 1);
    /* a pointer recorded as such is never evidence, even where its kind says integer */
    info[0].is_int = 1;
    sh.o[0].v[0] = 40000; /* bits that would cover the grid, were they a value */
    sh.o[1].v[0] = 80000;
    xmt_find_evidence(&sh, info, 4, &ev);
    ck_assert_int_eq(ev.cover[0], 1);
    ck_assert_int_eq(ev.cover2[0], -1);
}
END_TEST

/* Finds the candidate whose label starts with want; -1 when none. */
static long find_label(const xmt_entry *e, const xmt_launch_view *v, const char *want,
                       xmt_candidate *c)
{
    for (size_t i = 0; i < xmt_entry_ncandidates(e); i++) {
        xmt_entry_candidate(e, i, v, c);
        if (!strncmp(c->label, want, strlen(want))) return (long)i;
    }
    return -1;
}

/* A derived entry (XMATUNE_AUTO, --write-policy) loads as written and tries each idiom:
 * the grid kept, covering the program's threads, striding over sm_count x BPS; tiles for
 * a 2-D block; shared memory kept and scaled; the key follows the scalars and the shape. */
START_TEST(derive_entry_idioms)
{
    xmt_pinfo info[3] = {{8, 1, 0, 0, 0, 0}, {4, 0, 1, 0, 0, 0}, {8, 1, 0, 0, 0, 0}};
    xmt_dims d1 = {{40, 1, 1}, {256, 1, 1}, 0};
    static char text[65536] = "kernels:\n";
    int n = xmt_derive_entry("k1", info, 3, 0, &d1, 0, text + 9, sizeof text - 9);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(xmt_derive_entry("k1", info, 3, 0, &d1, 0, text + 9, 100), -1);
    n = xmt_derive_entry("k1", info, 3, 0, &d1, 0, text + 9, sizeof text - 9);
    xmt_policy_set *set = load_ok(text);
    const xmt_entry *e = xmt_policy_entry(set, 0);
    ck_assert_uint_eq(xmt_entry_ncandidates(e), 26);
    ck_assert_int_eq(xmt_entry_protect(e), XMT_PROTECT_AUTO);
    uint64_t ptr = 0x1000;
    int32_t nel = 10240;
    void *p[3] = {&ptr, &nel, &ptr};
    xmt_attrs at;
    xmt_attrs_default(&at);
    at.sm_count = 132;
    at.kernel_max_threads = 512;
    xmt_launch_view v = {p, 3, d1, &at};
    xmt_candidate c;
    ck_assert_int_ge(find_label(e, &v, "IDIOM=1, BX=128,", &c), 0); /* cdiv */
    ck_assert_uint_eq(c.dims.grid.x, 80);
    ck_assert_uint_eq(c.dims.block.x, 128);
    ck_assert_int_ge(find_label(e, &v, "IDIOM=0, BX=64,", &c), 0); /* grid kept */
    ck_assert_uint_eq(c.dims.grid.x, 40);
    ck_assert_int_ge(find_label(e, &v, "IDIOM=2, BX=256, BY=1, BPS=4", &c), 0); /* stride */
    ck_assert_uint_eq(c.dims.grid.x, 528);
    long i = find_label(e, &v, "IDIOM=1, BX=1024,", &c); /* over the kernel's limit */
    ck_assert_int_ge(i, 0);
    ck_assert_int_eq(xmt_entry_candidate(e, (size_t)i, &v, &c), 0);
    ck_assert_str_eq(xmt_idiom_name(XMT_IDIOM_STRIDE), "stride");
    ck_assert_str_eq(xmt_idiom_name(9), "?");
    /* the key: the integer scalar and the program's own shape, never a pointer */
    uint8_t k1[XMT_KEY_MAX], k2[XMT_KEY_MAX];
    size_t l1 = xmt_entry_key(e, &v, k1, sizeof k1);
    char kt[256], rules[32];
    ck_assert_int_gt(xmt_entry_key_render(e, k1, l1, kt, sizeof kt), 0);
    snprintf(rules, sizeof rules, "rules=%d", XMT_DERIVE_RULES); /* in the fingerprint too */
    /* (untyped, 4 bytes: keyed by intlike, so that a float there is one key part) */
    ck_assert_msg(strstr(kt, "intlike_p1=10240") && strstr(kt, rules) && strstr(kt, "gx=40"), "%s",
                  kt);
    ptr = 0x2000;
    size_t l2 = xmt_entry_key(e, &v, k2, sizeof k2);
    ck_assert(l1 && l1 == l2 && !memcmp(k1, k2, l1));
    nel = 20480;
    l2 = xmt_entry_key(e, &v, k2, sizeof k2);
    ck_assert(l1 == l2 && memcmp(k1, k2, l1));
    /* a float that changes from call to call: one key (0.75f, then 0.75001f) */
    float fl = 0.75f;
    memcpy(&nel, &fl, 4);
    l1 = xmt_entry_key(e, &v, k1, sizeof k1);
    fl = 0.75001f;
    memcpy(&nel, &fl, 4);
    l2 = xmt_entry_key(e, &v, k2, sizeof k2);
    ck_assert(l1 && l1 == l2 && !memcmp(k1, k2, l1));
    ck_assert_int_gt(xmt_entry_key_render(e, k1, l1, kt, sizeof kt), 0);
    ck_assert_msg(strstr(kt, "intlike_p1=1065353216"), "%s", kt);
    nel = 10240;
    v.orig.grid.x = 41;
    l2 = xmt_entry_key(e, &v, k2, sizeof k2);
    ck_assert(l1 == l2 && memcmp(k1, k2, l1));
    xmt_policy_free(set);

    /* a 2-D block with dynamic shared memory: tiles, kept and scaled */
    xmt_dims d2 = {{64, 64, 1}, {16, 16, 1}, 1024};
    n = xmt_derive_entry("k2", info, 3, 0, &d2, 0, text + 9, sizeof text - 9);
    ck_assert_int_gt(n, 0);
    set = load_ok(text);
    e = xmt_policy_entry(set, 0);
    ck_assert_uint_eq(xmt_entry_ncandidates(e), 56); /* 14 tiles x (kept, covering) x 2 */
    ck_assert_uint_le(xmt_entry_ncandidates(e), XMT_DERIVE_MAX_CONFIGS);
    xmt_launch_view v2 = {p, 3, d2, &at};
    /* a narrow tile too (rules 2): 8 x 32 covers 1024 x 1024 threads in 128 x 32 blocks */
    ck_assert_int_ge(find_label(e, &v2, "IDIOM=3, BX=8, BY=32, BPS=0, SCALED=0", &c), 0);
    ck_assert_uint_eq(c.dims.grid.x, 128);
    ck_assert_uint_eq(c.dims.grid.y, 32);
    ck_assert_int_ge(find_label(e, &v2, "IDIOM=3, BX=32, BY=8, BPS=0, SCALED=1", &c), 0);
    ck_assert_uint_eq(c.dims.grid.x, 32);
    ck_assert_uint_eq(c.dims.grid.y, 128);
    ck_assert_uint_eq(c.dims.shared, 1024);
    ck_assert_int_ge(find_label(e, &v2, "IDIOM=0, BX=32, BY=16, BPS=0, SCALED=1", &c), 0);
    ck_assert_uint_eq(c.dims.grid.x, 64);
    ck_assert_uint_eq(c.dims.shared, 2048);
    xmt_policy_free(set);

    /* every shape (XMATUNE_AUTO: one entry for every key): each idiom under a condition */
    n = xmt_derive_entry("k3", info, 3, 0, NULL, 0, text + 9, sizeof text - 9);
    ck_assert_int_gt(n, 0);
    set = load_ok(text);
    e = xmt_policy_entry(set, 0);
    ck_assert_uint_eq(xmt_entry_ncandidates(e), 10 + 10 + 16 + 28 + 28);
    size_t valid = 0;
    at.kernel_max_threads = 1024;
    v.orig = d1;
    for (size_t j = 0; j < xmt_entry_ncandidates(e); j++)
        valid += (size_t)xmt_entry_candidate(e, j, &v, &c);
    ck_assert_uint_eq(valid, 26); /* a 1-D launch without shared memory */
    valid = 0;
    for (size_t j = 0; j < xmt_entry_ncandidates(e); j++)
        valid += (size_t)xmt_entry_candidate(e, j, &v2, &c);
    ck_assert_uint_eq(valid, 56); /* a 2-D block with shared memory: tiles, kept and scaled */
    xmt_policy_free(set);

    /* one idiom only (what --write-policy writes for a winner) */
    n = xmt_derive_entry("k4", info, 3, 0, &d1, 1u << XMT_IDIOM_STRIDE, text + 9, sizeof text - 9);
    set = load_ok(text);
    ck_assert_uint_eq(xmt_entry_ncandidates(xmt_policy_entry(set, 0)), 16);
    xmt_policy_free(set);

    /* parameter kinds: from the signature, else from sizes (8 untyped bytes: not a pointer
     * for sure, not a key part) */
    xmt_pinfo pi[3];
    const uint32_t sz[3] = {4, 8, 8};
    ck_assert_int_eq(xmt_derive_params("f(int, float*, long)", 3, sz, pi), 1);
    ck_assert(pi[0].is_int && pi[1].is_ptr && pi[2].is_int && !pi[1].is_int);
    ck_assert_int_eq(xmt_derive_params("vecadd", 3, sz, pi), 0);
    ck_assert(pi[0].is_int && pi[1].is_struct && !pi[1].is_ptr && pi[2].size == 8);

    /* the key parts: intlike only for an untyped 4-byte scalar (a typed kernel knows its
     * floats; 1 and 2 bytes cannot hold an f32) */
    const uint32_t sz3[3] = {4, 2, 4};
    ck_assert_int_eq(xmt_derive_params("k5", 3, sz3, pi), 0);
    n = xmt_derive_entry("k5", pi, 3, 0, &d1, 0, text + 9, sizeof text - 9);
    ck_assert_int_gt(n, 0);
    ck_assert_msg(strstr(text, "triggers: [p1]") &&
                      strstr(text, "functional_triggers: {intlike_p0: \"intlike(p0)\", "
                                   "intlike_p2: \"intlike(p2)\", rules:"),
                  "%s", text);
    xmt_policy_free(load_ok(text));
    ck_assert_int_eq(xmt_derive_params("f(int, short, float)", 3, sz3, pi), 1);
    n = xmt_derive_entry("k6", pi, 3, 1, &d1, 0, text + 9, sizeof text - 9);
    ck_assert_int_gt(n, 0);
    ck_assert_msg(strstr(text, "triggers: [p0, p1]") && !strstr(text, "intlike"), "%s", text);
}
END_TEST

/* The one edit distance of every "did you mean" (common/editdist.h): exact below its cap,
 * cap + 1 above it, early for lengths too far apart or strings too long. */
START_TEST(edit_distance_capped)
{
    ck_assert_uint_eq(xmt_edit_distance("XMATUNE_POLCY", "XMATUNE_POLICY", 2), 1);
    ck_assert_uint_eq(xmt_edit_distance("kitten", "sitting", 3), 3);
    ck_assert_uint_eq(xmt_edit_distance("kitten", "sitting", 2), 3);
    ck_assert_uint_eq(xmt_edit_distance("verify", "verify", 2), 0);
    ck_assert_uint_eq(xmt_edit_distance("", "ab", 2), 2);
    ck_assert_uint_eq(xmt_edit_distance("abc", "abcdef", 2), 3);
    char big[80];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ck_assert_uint_eq(xmt_edit_distance(big, big, 2), 3);
}
END_TEST

Suite *policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *t = tcase_create("expr");
    tcase_add_test(t, expr_int_arith);
    tcase_add_test(t, expr_float);
    tcase_add_test(t, expr_compare_logic);
    tcase_add_test(t, expr_functions);
    tcase_add_test(t, expr_intlike);
    tcase_add_test(t, expr_eval_errors);
    tcase_add_test(t, expr_compile_errors);
    tcase_add_test(t, expr_identifiers);
    tcase_add_test(t, expr_param_types);
    tcase_add_test(t, expr_one_leaf);
    tcase_add_test(t, expr_standalone);
    tcase_add_test(t, half_conversions);
    suite_add_tcase(s, t);
    t = tcase_create("key");
    tcase_add_test(t, saxpy_key_and_render);
    tcase_add_test(t, key_orig_slots_copied);
    tcase_add_test(t, trigger_forms);
    tcase_add_test(t, trigger_errors);
    tcase_add_test(t, functional_bucketing);
    tcase_add_test(t, tensor_attributes);
    suite_add_tcase(s, t);
    t = tcase_create("candidates");
    tcase_add_test(t, saxpy_candidates);
    tcase_add_test(t, cand_order_and_defaults);
    tcase_add_test(t, cand_limits);
    tcase_add_test(t, cand_eval_faults);
    tcase_add_test(t, cand_args_and_pin);
    tcase_add_test(t, cand_config_without_label);
    tcase_add_test(t, entry_defaults_and_options);
    suite_add_tcase(s, t);
    t = tcase_create("buffers");
    tcase_add_test(t, saxpy_buffers);
    tcase_add_test(t, buffers_bytes_and_strides);
    suite_add_tcase(s, t);
    t = tcase_create("params");
    tcase_add_test(t, params_c_types_and_layout);
    tcase_add_test(t, params_from_signature);
    tcase_add_test(t, set_arg_and_describe);
    suite_add_tcase(s, t);
    t = tcase_create("match");
    tcase_add_test(t, demangle);
    tcase_add_test(t, match_precedence);
    suite_add_tcase(s, t);
    t = tcase_create("load");
    tcase_add_test(t, load_dir_and_files);
    tcase_add_test(t, load_edge_cases);
    tcase_add_test(t, load_errors);
    tcase_add_test(t, edit_distance_capped);
    tcase_add_test(t, entry_tolerance_key);
    tcase_add_test(t, entry_fingerprint);
    tcase_add_test(t, entry_search_keys);
    tcase_add_test(t, space_nearest_own);
    tcase_add_test(t, derive_entry_idioms);
    tcase_add_test(t, untyped8_kinds);
    tcase_add_test(t, entry_params_read);
    tcase_set_timeout(t, 300); /* a hang, not a slow or busy machine */
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(policy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
