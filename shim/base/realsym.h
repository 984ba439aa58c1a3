/*
 * realsym: glibc's own dlsym, found once, for the shim's own lookups and for our dlsym
 * (hook_dlsym.S) to jump to.
 */
#ifndef XMT_REALSYM_H
#define XMT_REALSYM_H

/* The sanitizer runtimes look up what they intercept with dlsym(RTLD_NEXT, ...) before
 * their shadow memory exists, so our dlsym runs inside their start-up: the code on that
 * path must not be instrumented (ASan/TSan builds: LD_PRELOAD=libasan.so:libxmatune.so). */
#define XMT_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

/* glibc's dlsym (found with dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34")), for the shim's
 * own lookups; never call it with RTLD_NEXT (it would be relative to us). */
extern void *(*xmt_real_dlsym_ptr)(void *, const char *);
void *xmt_real_dlsym(void *handle, const char *name);

/* Finds it (a constructor does so at load; our dlsym may run before constructors). */
void xmt_find_real_dlsym(void);

#endif
