/*
 * test_kernels: Check unit tests of shim/records/kernels.c with its invariant checks on
 * (shim/base/invariant.h) — records made, retired by owner and reused, the checks run after
 * each change — and of the checks themselves: each fires, saying what broke, on a table,
 * list, quarantine or serial broken on purpose. The driver is a stand-in filled in here:
 * a kernel's name is its handle, its module the handle's tens (0: unknown owner).
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aborts.h"
#include "autotune.h"
#include "driver.h"
#include "kernels.h"

static char names[1024][16];

static CUresult fake_name(const char **name, CUfunction f)
{
    uintptr_t h = (uintptr_t)f;
    snprintf(names[h % 1024], sizeof names[0], "_Z1k%lu", (unsigned long)h);
    *name = names[h % 1024];
    return CUDA_SUCCESS;
}

/* Handles ending in 7 have an owner the driver will not tell. */
static CUresult fake_module(CUmodule *m, CUfunction f)
{
    uintptr_t h = (uintptr_t)f;
    if (h % 10 == 7) return CUDA_ERROR_NOT_SUPPORTED;
    *m = (CUmodule)(h / 10 * 0x100);
    return CUDA_SUCCESS;
}

static CUresult fake_getproc(const char *name, void **fn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *st)
{
    (void)version;
    (void)flags;
    *st = CU_GET_PROC_ADDRESS_SUCCESS;
    if (strcmp(name, "cuFuncGetModule") == 0) {
        *fn = (void *)fake_module;
        return CUDA_SUCCESS;
    }
    *st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}

/* Records for handles from..to-1 (never 0), each made once and found again. */
static void make(uintptr_t from, uintptr_t to)
{
    for (uintptr_t h = from; h < to; h++) {
        xmt_kernel *k = xmt_kernels_get((CUfunction)h);
        ck_assert_ptr_nonnull(k);
        ck_assert_ptr_eq(xmt_kernels_find((void *)h), k);
        ck_assert_ptr_eq(xmt_kernels_get((CUfunction)h), k);
    }
}

static void setup(void)
{
    xmt_drv.getproc = fake_getproc;
    xmt_drv.cuFuncGetName = fake_name;
}

/* Modules loaded and unloaded, records retired, their structs reused past the quarantine:
 * the checks run after every change (they abort the test when anything is wrong). */
START_TEST(kernels_churn_keeps_invariants)
{
    make(1, 300);
    xmt_kernels_check();
    for (uintptr_t m = 1; m < 30; m += 2)
        xmt_kernels_unloaded(XMT_UNLOAD_MODULE, (void *)(m * 0x100), 0);
    ck_assert_ptr_null(xmt_kernels_find((void *)15));
    ck_assert_ptr_nonnull(xmt_kernels_find((void *)25));
    make(1, 300); /* the unloaded modules' handles again: structs from the quarantine */
    xmt_kernels_unloaded(XMT_UNLOAD_CONTEXT, NULL, 0);
    make(300, 400);
    xmt_kernels_forget_all();
    make(1, 100);
    xmt_kernels_check();
}
END_TEST

/* Breaks one structure (what: XMT_KERNELS_BREAK_*) and runs the checker. */
static void break_and_check(int what)
{
    xmt_kernels_test_break(what);
    xmt_kernels_check();
}

static int aborts_saying(int what, const char *want)
{
    return aborts_saying_fn(break_and_check, what, want);
}

/* Each check fires on the structure it guards, broken on purpose. */
/* XMATUNE_AUTO's entries (shim/records/autotune.c): one per kernel name, made once; NCCL's kernels
 * on the default list declined with the reason; a derived candidate's label names its
 * idiom, another's none. */
START_TEST(auto_entries)
{
    const uint32_t sizes[4] = {4, 4, 8, 8};
    char why[256] = "";
    const xmt_entry *e =
        xmt_auto_entry("_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)", 4, sizes, NULL,
                       why, sizeof why);
    ck_assert_ptr_nonnull(e);
    ck_assert(xmt_auto_owns(e));
    ck_assert_str_eq(xmt_entry_origin(e), "(auto):2");
    ck_assert_ptr_eq(xmt_auto_entry("_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)", 4,
                                    sizes, NULL, why, sizeof why),
                     e);
    ck_assert_ptr_null(xmt_auto_entry("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                      "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 4, sizes, NULL,
                                      why, sizeof why));
    ck_assert_msg(strstr(why, "default list") != NULL, "%s", why);
    ck_assert_ptr_null(xmt_auto_entry("_Z4NCCLv", "NCCL()", 0, sizes, NULL, why, sizeof why));
    ck_assert_str_eq(xmt_auto_idiom_of("IDIOM=2, BX=256, BY=1, BPS=4, SCALED=0"), "stride");
    ck_assert_ptr_null(xmt_auto_idiom_of("BLOCK=256"));
    ck_assert_ptr_null(xmt_auto_idiom_of("IDIOM=9"));
    ck_assert(!xmt_auto_owns(NULL));
}
END_TEST

START_TEST(kernels_invariants_fire)
{
    make(1000, 1100);
    xmt_kernels_unloaded(XMT_UNLOAD_MODULE, (void *)(100 * 0x100), 0); /* some quarantined */
    make(1100, 1120);
    xmt_kernels_check();
    ck_assert(aborts_saying(XMT_KERNELS_BREAK_OWNER, "on its owner's lists 0 times"));
    ck_assert(aborts_saying(XMT_KERNELS_BREAK_TABLE, "holds a retired record"));
    ck_assert(aborts_saying(XMT_KERNELS_BREAK_QUARANTINE, "quar_n says"));
    ck_assert(aborts_saying(XMT_KERNELS_BREAK_SERIAL, "not unique"));
    xmt_kernels_check(); /* the children's damage stayed in them */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, kernels_churn_keeps_invariants);
    tcase_add_test(tc, kernels_invariants_fire);
    tcase_add_test(tc, auto_entries);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
