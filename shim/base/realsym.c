/*
 * realsym: glibc's own dlsym (see realsym.h).
 */
#include "realsym.h"

#include <dlfcn.h>
#include <stddef.h>

void *(*xmt_real_dlsym_ptr)(void *, const char *);

__attribute__((constructor)) XMT_NO_SANITIZE void xmt_find_real_dlsym(void)
{
    if (xmt_real_dlsym_ptr) return;
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    xmt_real_dlsym_ptr = (void *(*)(void *, const char *))p;
}

XMT_NO_SANITIZE void *xmt_real_dlsym(void *handle, const char *name)
{
    if (!xmt_real_dlsym_ptr) xmt_find_real_dlsym();
    return xmt_real_dlsym_ptr ? xmt_real_dlsym_ptr(handle, name) : NULL;
}
