/* simtest.h: small helpers for test programs that run on the simulated driver (or a
 * real one): CHECK(cu_call) stops the program with file:line and the error's name
 * when a driver call fails; CHECK_ERR(cu_call, expected) when it must fail just so.
 * Header-only and link-free: the error name comes from whatever cuGetErrorName the
 * process has loaded (linked with -lcuda or dlopen'ed libcuda.so.1), or just the
 * number when it has none. */
#ifndef SIMTEST_H
#define SIMTEST_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static inline const char *simtest_errname(CUresult rc)
{
    typedef CUresult (*name_fn)(CUresult, const char **);
    name_fn fn = (name_fn)dlsym(RTLD_DEFAULT, "cuGetErrorName");
    if (!fn) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (h) fn = (name_fn)dlsym(h, "cuGetErrorName");
    }
    const char *s = NULL;
    if (fn && fn(rc, &s) == CUDA_SUCCESS && s) return s;
    return "unknown CUresult";
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult check_rc_ = (call);                                                               \
        if (check_rc_ != CUDA_SUCCESS) {                                                           \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,              \
                    simtest_errname(check_rc_), (int)check_rc_);                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_ERR(call, expected)                                                                  \
    do {                                                                                           \
        CUresult check_rc_ = (call);                                                               \
        if (check_rc_ != (expected)) {                                                             \
            fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s\n", __FILE__, __LINE__,       \
                    #call, simtest_errname(check_rc_), (int)check_rc_, #expected);                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
