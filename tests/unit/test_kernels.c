/*
 * test_kernels: Check unit tests of shim/kernels.c with its invariant checks on
 * (shim/invariant.h) — records made, retired by owner and reused, the checks run after
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

/* Runs fn in a child process with its stderr read back: 1 when the child aborted saying
 * "xmatune: invariant broken: " and, in what follows, want. */
static int aborts_saying(int what, const char *want)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        xmt_kernels_test_break(what);
        xmt_kernels_check();
        _exit(0);
    }
    close(p[1]);
    char buf[1024];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    const char *said = strstr(buf, "xmatune: invariant broken: ");
    if (!said || !strstr(said, want)) fprintf(stderr, "test_kernels: got: %s\n", buf);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && said && strstr(said, want);
}

/* Each check fires on the structure it guards, broken on purpose. */
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
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
