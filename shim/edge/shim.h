/*
 * shim: the shim's lifecycle — activation at the first CUDA entry point asked for, the
 * report at exit — and its public xmatune_* API.
 */
#ifndef XMT_SHIM_H
#define XMT_SHIM_H

/* What the shim exports (the rest is hidden: -fvisibility=hidden, xmatune.map). */
#define XMT_EXPORT __attribute__((visibility("default")))

/* First CUDA entry point asked for: read the options, open the driver, load the
 * policies, register the exit report. Once; thread-safe. Returns the mode in force. */
int xmt_activate(void);

/* The exit report: summaries to the log and the short table on stderr. Idempotent. */
void xmt_report(void);

#endif
