/*
 * drvwrap: the trial helper's wrappers of its driver calls. Each entry point that
 * shim/session/drvtime.h lists (XMT_DRVTIME_FUNCS) is wrapped once in xmt_drv at the
 * helper's start, and each call's count and wall time is added to drvtime's sums, which a
 * session reads for its tune event's driver_calls (docs/log.md). Here, in trial/, and not
 * in the shim: the program's own process keeps its driver calls unwrapped, and links none
 * of this (the test shim_links_no_driver_wrappers checks).
 */
#ifndef XMT_DRVWRAP_H
#define XMT_DRVWRAP_H

/* Wraps the entry points in xmt_drv (those the driver has), once; after xmt_driver_init,
 * before any session. From then on xmt_drvtime_read answers. */
void xmt_drvtime_install(void);

#endif
