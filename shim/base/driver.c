/*
 * driver: the real driver's handle and the entry points the shim uses (see driver.h).
 */
#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "options.h"
#include "realsym.h"

struct xmt_driver xmt_drv;
__thread int xmt_in_shim __attribute__((tls_model("initial-exec")));

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static int driver_status = -1;

static void driver_load(void)
{
    const char *lib = xmt_opt.libcuda[0] ? xmt_opt.libcuda : "libcuda.so.1";
    /* dlopen reads the file with a blocking open: a FIFO would hang the program. */
    struct stat fst;
    if (strchr(lib, '/') && stat(lib, &fst) == 0 && !S_ISREG(fst.st_mode)) {
        xmt_warn("the CUDA driver %s is not a regular file; every launch passes through", lib);
        return;
    }
    xmt_drv.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (xmt_drv.handle && xmt_real_dlsym(xmt_drv.handle, "xmatune_version")) {
        /* libxmatune.so itself: its cuGetProcAddress_v2 would call back into activation,
         * which is waiting for this very call (a deadlock in pthread_once). */
        dlclose(xmt_drv.handle);
        xmt_drv.handle = NULL;
        xmt_warn("XMATUNE_LIBCUDA=%s is the shim itself, not a CUDA driver; every launch "
                 "passes through",
                 lib);
        return;
    }
    if (!xmt_drv.handle) {
        xmt_warn("cannot open the CUDA driver %s (%s); every launch passes through", lib,
                 dlerror());
        return;
    }
    xmt_drv.getproc =
        (__typeof__(xmt_drv.getproc))xmt_real_dlsym(xmt_drv.handle, "cuGetProcAddress_v2");
    if (!xmt_drv.getproc) {
        xmt_warn("the CUDA driver %s has no cuGetProcAddress_v2; every launch passes through", lib);
        return;
    }
    CUdriverProcAddressQueryResult st;
#define XMT_DRV(name, version)                                                                     \
    if (xmt_drv.getproc(#name, (void **)&xmt_drv.name, version, CU_GET_PROC_ADDRESS_DEFAULT,       \
                        &st) != CUDA_SUCCESS)                                                      \
        xmt_drv.name = NULL;
#include "driver_syms.h"
#undef XMT_DRV
    driver_status = 0;
}

static void driver_open(void)
{
    XMT_IN_SHIM_SCOPE driver_load();
}

int xmt_driver_init(void)
{
    pthread_once(&driver_once, driver_open);
    return driver_status;
}

void *xmt_driver_sym(const char *name)
{
    if (xmt_driver_init() != 0) return NULL;
    void *p = NULL;
    XMT_IN_SHIM_SCOPE
    {
        p = xmt_real_dlsym(xmt_drv.handle, name);
    }
    return p;
}

const char *xmt_cu_name(CUresult r, char *buf, size_t cap)
{
    const char *s = NULL;
    if (xmt_drv.cuGetErrorName && xmt_drv.cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    snprintf(buf, cap, "CUresult %d", (int)r);
    return buf;
}
