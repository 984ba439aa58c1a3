/*
 * drvtime: where a trial helper's session spends its time in the driver.
 *
 * A session's phases (the tune event's phases_ms, verification_ms) say which part of
 * tuning took long, not why: the same verification can be slow because it waits on a
 * GPU whose clock is still down, because allocating scratch is slow, or because it
 * makes many small round trips. So in the trial helper (trial/xmatune-trial, and only
 * there: the program's own process keeps its driver calls unwrapped, its launch path
 * included; the wrappers are trial/drvwrap.c) the entry points below are wrapped once at
 * start, and each call's count and
 * wall time added up; a session reads the sums at its start and at its end, and the
 * tune event carries the difference as `driver_calls` (docs/log.md). The helper runs one
 * session at a time on one thread, so the sums need no lock.
 */
#ifndef XMT_DRVTIME_H
#define XMT_DRVTIME_H

/* The wrapped entry points, in the order the tune event lists them: the calls that wait
 * for the GPU, then allocations, copies and fills, launches, module loads, polls and
 * records, then the calls that make, free and read events and the queries of pointers,
 * memory and functions (what else the session calls, so that the time none of them took
 * is the helper's own work). */
#define XMT_DRVTIME_FUNCS(X)                                                                       \
    X(cuStreamSynchronize)                                                                         \
    X(cuCtxSynchronize)                                                                            \
    X(cuEventSynchronize)                                                                          \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuMemcpyDtoDAsync)                                                                           \
    X(cuMemcpyDtoHAsync)                                                                           \
    X(cuMemcpyDtoH)                                                                                \
    X(cuMemcpyHtoD)                                                                                \
    X(cuMemsetD8Async)                                                                             \
    X(cuLaunchKernel)                                                                              \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleLoadDataEx)                                                                          \
    X(cuModuleGetFunction)                                                                         \
    X(cuFuncLoad)                                                                                  \
    X(cuStreamQuery)                                                                               \
    X(cuEventQuery)                                                                                \
    X(cuEventRecord)                                                                               \
    X(cuEventCreate)                                                                               \
    X(cuEventDestroy)                                                                              \
    X(cuEventElapsedTime)                                                                          \
    X(cuPointerGetAttribute)                                                                       \
    X(cuMemGetAddressRange)                                                                        \
    X(cuMemGetInfo)                                                                                \
    X(cuFuncGetAttribute)

/* After the entry points, one that is not: the session's polled waits for its runs
 * (session_base.c's wait_runs asks cuStreamQuery or cuEventQuery and sleeps between asks, so
 * that its watchdog can end a run that hangs). Their time is the GPU's as much as a
 * synchronization's; the polls inside them are counted under their own names too. */
enum {
#define XMT_DRVTIME_ENUM(name) XMT_DT_##name,
    XMT_DRVTIME_FUNCS(XMT_DRVTIME_ENUM)
#undef XMT_DRVTIME_ENUM
        XMT_DT_POLLED_WAITS,
    XMT_DT_COUNT
};

/* Calls and milliseconds per wrapped entry point. */
typedef struct {
    unsigned long long calls[XMT_DT_COUNT];
    double ms[XMT_DT_COUNT];
} xmt_drvtime;

/* The helper's wrappers (trial/drvwrap.c, xmt_drvtime_install) start the counting, and add
 * each call of entry point i (an XMT_DT_* index) that took ms. Nothing in the shim calls
 * them: there the sums stay unread (xmt_drvtime_read says -1). */
void xmt_drvtime_start(void);
void xmt_drvtime_add(int i, double ms);

/* The sums so far into *out; 0, or -1 (nothing written) when not installed. */
int xmt_drvtime_read(xmt_drvtime *out);

/* *d = now - then, per entry point. */
void xmt_drvtime_since(const xmt_drvtime *then, const xmt_drvtime *now, xmt_drvtime *d);

/* One polled wait of ms, counted when installed. */
void xmt_drvtime_polled_wait(double ms);

/* The entry point's name ("cuStreamSynchronize"; "polled_waits" for the polled waits), for
 * i < XMT_DT_COUNT. */
const char *xmt_drvtime_name(int i);

#endif
