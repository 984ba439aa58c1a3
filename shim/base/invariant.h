/*
 * invariant: the debug-build checks of the shim's own data structures.
 *
 * With XMT_CHECK_INVARIANTS defined (the CMake option XMATUNE_CHECK_INVARIANTS, on by
 * default in Debug builds, and always in the unit tests), a module that keeps an
 * intricate structure (kernels.c: the handle table, the live and owner lists, the
 * quarantine; cache.c: the records and their open-addressing index) walks all of it
 * after each change and stops the program with "xmatune: invariant broken: ..." at the
 * first thing that does not hold: a broken structure found where it broke, not much
 * later as a wrong winner or a crash elsewhere. Without it the checks compile to nothing
 * (XMT_INVARIANTS is 0): release builds fail open as everywhere else. Header only.
 */
#ifndef XMT_INVARIANT_H
#define XMT_INVARIANT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef XMT_CHECK_INVARIANTS
#define XMT_INVARIANTS 1
#else
#define XMT_INVARIANTS 0
#endif

/* Says which invariant broke (written straight to stderr: the capped message path may be
 * silenced, and the process is about to stop) and aborts. */
__attribute__((format(printf, 1, 2), noreturn, unused)) static void
xmt_invariant_broken(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)fputs("xmatune: invariant broken: ", stderr);
    (void)vfprintf(stderr, fmt, ap);
    (void)fputc('\n', stderr);
    va_end(ap);
    (void)fflush(stderr);
    abort();
}

/* XMT_INVARIANT(cond, "what, %d", ...): aborts with the message when cond is false. */
#define XMT_INVARIANT(cond, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) xmt_invariant_broken(__VA_ARGS__);                                            \
    } while (0)

#endif
