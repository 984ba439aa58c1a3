/*
 * invariant: the shim's checks of itself: XMT_INVARIANT, the expensive walks of its own
 * data structures (debug builds), and XMT_ASSERT, the cheap assertion (below).
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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

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

/*
 * XMT_ASSERT(cond, "what, %d", ...): the cheap assertion, for what the code believes at a
 * phase's entry or a state change. Its contract:
 *  - on (XMT_ASSERTS defined: the CMake option XMATUNE_ASSERTS, on by default in Debug and
 *    RelWithDebInfo builds; the unit tests that use it define it), a false cond says, once
 *    per place, "xmatune: internal error: <what> (<cond> is false at <file>:<line>)"
 *    through the shim's messages (capped like any, a NOTE from the trial helper) and goes
 *    on: an internal error never stops the host program, so the code after an assertion
 *    must stand the case it rules out (fail open, as everywhere);
 *  - off (Release), cond is compiled but never evaluated: no cost at all;
 *  - cond must be cheap and have no side effects (it is not evaluated when off); a true
 *    one costs a branch. XMT_INVARIANT, not this, is for checks that walk a structure.
 */
#ifdef XMT_ASSERTS
#define XMT_ASSERTS_ON 1
#else
#define XMT_ASSERTS_ON 0
#endif

/* The cold half of XMT_ASSERT: the message. */
__attribute__((format(printf, 4, 5), cold, noinline, unused)) static void
xmt_assert_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    xmt_warn("internal error: %s (%s is false at %s:%d)", what, cond, base ? base + 1 : file, line);
}

#define XMT_ASSERT(cond, ...)                                                                      \
    do {                                                                                           \
        if (XMT_ASSERTS_ON && __builtin_expect(!(cond), 0)) {                                      \
            static atomic_int xmt_assert_said_;                                                    \
            if (xmt_first_time(&xmt_assert_said_))                                                 \
                xmt_assert_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);                         \
        }                                                                                          \
    } while (0)

#endif
