/*
 * guard: the in-shim flag, and warning once.
 *
 * xmt_in_shim is non-zero while the shim itself is inside the driver, so that every
 * hook passes straight through (libfaketime's dont_fake). It is set only through
 * XMT_IN_SHIM_SCOPE, which saves and restores it (libfaketime's DONT_FAKE_TIME), so
 * scopes nest and no path can leave it set. The variable lives in driver.c. (Warning
 * once is xmt_first_time, in common/log.h.)
 */
#ifndef XMT_GUARD_H
#define XMT_GUARD_H

extern __thread int xmt_in_shim __attribute__((tls_model("initial-exec")));

/* XMT_IN_SHIM_SCOPE { ...driver calls... }: the block runs once with the flag set, and
 * the flag is put back as it was when the block ends normally. Never leave the block
 * with return, goto or break: that skips the restore (use a flag and fall out). */
#define XMT_IN_SHIM_SCOPE                                                                          \
    for (int xmt_saved_ = xmt_in_shim, xmt_once_ = (xmt_in_shim = 1, 1); xmt_once_;                \
         xmt_once_ = 0, xmt_in_shim = xmt_saved_)

#endif
