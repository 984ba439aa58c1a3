/*
 * discover: XMATUNE_MODE=discover. Answers "what does my program launch, and can xmatune
 * see it?": once per distinct (kernel, device) a `kernel` event with its names and
 * parameter layout (a kernel of a module loaded again is the same kernel: by name), and at exit a
 * `kernel_summary` with every distinct launch shape and its count, and a bounded number of
 * distinct launches with their scalar argument values (what `xmatune discover --stub` picks a
 * launch idiom from, and `xmatune check --log` evaluates), plus a short table on stderr.
 * Nothing about the launch changes.
 */
#ifndef XMT_DISCOVER_H
#define XMT_DISCOVER_H

#include <stdint.h>
#include <stdio.h>

#include "kernels.h"
#include "launch.h"

/* Records one launch of k (cold path). A launch equal to this thread's last one of k (dims,
 * scalar argument values, device, path) is only counted in a per-thread memo; others take
 * k->lock, the kernel's own (allocating only at a kernel's first launch on a device). */
void xmt_discover_record(xmt_kernel *k, const xmt_launch *l);

/* Records every thread's memoized launches (before the exit report). */
void xmt_discover_flush_counts(void);

/* fork(2): the memo's locks held across it; in the child pending launches are dropped. */
void xmt_discover_atfork(int phase);

/* Adds launches made by graph replays of k on a device (graph.c; takes k->lock). They
 * are reported apart from direct launches; their shapes are not recorded. */
void xmt_discover_add_graph(xmt_kernel *k, int device, uint64_t launches);

/* Writes k's kernel_summary events (one per device) and, if table is not NULL, its lines
 * of the stderr table. Returns the number of devices reported. */
int xmt_discover_report(xmt_kernel *k, FILE *table);

/* Path bits (XMT_PATH_*): launch.h, beside the launch value. */

/* json array of path names for a bit set. */
struct json_t;
struct json_t *xmt_paths_json(unsigned paths);

#endif
