/*
 * gpucheck's GPU path (shim/session/gpucheck.c) over a stand-in driver whose device memory is
 * host memory: the module "loads", a launch of xmt_cmp_bits publishes a result the test
 * chose, and the copies back to the host are counted. What it pins: each comparison's
 * results, counts and first indices, come back in one copy and one wait, however many
 * comparisons one call runs.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "gpucheck.h"
#include "hostmem_driver.h"
#include "options.h"
#include "verify.h"

struct xmt_driver xmt_drv;
struct xmt_options xmt_opt;
const char xmt_gpucheck_ptx[] = "(stand-in)";

void xmt_warn(const char *fmt, ...)
{
    (void)fmt;
}
const char *xmt_cu_name(CUresult r, char *buf, size_t cap)
{
    (void)r;
    if (cap) buf[0] = '\0';
    return buf;
}

static CUfunction fn_bits = (CUfunction)(uintptr_t)0x100;

static CUresult load_data(CUmodule *m, const void *image)
{
    (void)image;
    *m = (CUmodule)(uintptr_t)0x10;
    return CUDA_SUCCESS;
}
static CUresult get_function(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    *f = !strcmp(name, "xmt_cmp_bits") ? fn_bits : (CUfunction)(uintptr_t)0x200;
    return CUDA_SUCCESS;
}
static CUresult ctx_id(CUcontext c, unsigned long long *id)
{
    (void)c;
    *id = 7;
    return CUDA_SUCCESS;
}
/* xmt_cmp_bits(a, b, bytes, es, count, first): publishes count = bytes and first = a's
 * address's low byte, so that each comparison's result is its own. */
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned sh, CUstream s, void **args, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)s, (void)extra;
    ck_assert(f == fn_bits);
    CUdeviceptr a = *(CUdeviceptr *)args[0], cnt = *(CUdeviceptr *)args[4],
                fst = *(CUdeviceptr *)args[5];
    uint64_t bytes = *(uint64_t *)args[2], first = a & 0xff;
    *(uint64_t *)(uintptr_t)cnt += bytes;
    memcpy((void *)(uintptr_t)fst, &first, 8);
    return CUDA_SUCCESS;
}

static void stand_in(void)
{
    xmt_drv.cuModuleLoadData = load_data;
    xmt_drv.cuModuleGetFunction = get_function;
    xmt_drv.cuCtxGetId = ctx_id;
    xmt_drv.cuLaunchKernel = launch;
    hostmem_install();
}

/* 1, 64 and 150 comparisons in one call: every result is its own, read in one copy. */
START_TEST(results_in_one_copy)
{
    stand_in();
    xmt_gc g;
    xmt_gc_open(&g, NULL);
    ck_assert(xmt_gc_on_gpu(&g));
    static const size_t ns[] = {1, 64, 150};
    for (size_t k = 0; k < 3; k++) {
        size_t n = ns[k];
        xmt_gc_cmp *c = calloc(n, sizeof *c);
        xmt_gc_result *out = calloc(n, sizeof *out);
        for (size_t i = 0; i < n; i++)
            c[i] = (xmt_gc_cmp){0x1000 + i, 0x9000, 16 * (i + 1), XMT_CMP_BITS, 1, 0, 0};
        hostmem_calls.dtoh = hostmem_calls.stream_waits = 0;
        ck_assert_int_eq(xmt_gc_compare(&g, c, n, out), CUDA_SUCCESS);
        ck_assert_int_eq(hostmem_calls.dtoh, 1);
        ck_assert_int_eq(hostmem_calls.stream_waits, 1);
        for (size_t i = 0; i < n; i++) {
            ck_assert_uint_eq(out[i].count, 16 * (i + 1));
            ck_assert_uint_eq(out[i].first, (0x1000 + i) & 0xff);
        }
        free(c);
        free(out);
    }
    xmt_gc_close(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gpucheck");
    TCase *t = tcase_create("gpucheck");
    tcase_add_test(t, results_in_one_copy);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
