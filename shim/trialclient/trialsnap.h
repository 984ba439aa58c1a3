/*
 * trialsnap: a snapshot of what a launch reaches, for a session off the program's path
 * (docs/cache.md, "Trust"; docs/tuning.md, "In the background"): taken on the program's
 * thread by stream-ordered copies (no wait for the GPU), completed after the program's own
 * launch for a tuning, freed on the worker. trialtune.c runs the sessions on it and reads
 * its fields (the struct is this header's for that alone); everyone else holds the pointer.
 */
#ifndef XMT_TRIALSNAP_H
#define XMT_TRIALSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "launch.h"
#include "modload.h"
#include "protect.h"
#include "trialstage.h"

/* The program thread's steps of a snapshot, timed for the snapshot event (docs/log.md). */
enum { S_ADMIT, S_REACH, S_ALLOC, S_COPY, S_EVENT, S_AFTER, SNAP_STEPS };

typedef struct xmt_trial_snap xmt_trial_snap;
struct xmt_trial_snap {
    xmt_kernel *k;
    uint64_t serial; /* k's incarnation when the snapshot was taken */
    int device;
    CUcontext ctx;
    CUevent copied; /* recorded on the launch's stream after the copies (timed) */
    /* background tuning: recorded right after the program's own launch (timed): with copied,
     * that launch's time, for the worker's order (xmt_trial_snap_own_ms) */
    CUevent launched;
    xmt_launch l; /* the launch, its arguments copied (args) */
    xmt_launch_view v;
    xmt_attrs attrs;
    void *argp[XMT_KERNEL_MAX_PARAMS];
    uint8_t *args;
    /* what the launch reaches, copied before it on its stream: the regions end to end */
    xmt_region *regs;
    size_t nregs, bytes;
    CUdeviceptr copy;
    int copy_async; /* from cuMemAllocAsync: freed so */
    xmt_staging st; /* made on the worker, filled from copy */
    double snap_ms;
    /* the program thread's steps, in host µs (the snapshot event: xmt_trial_snap_log) */
    double step_us[SNAP_STEPS];
    /* background tuning: what the program's own launch left, copied after it (the same
     * layout as copy), for the helper's fidelity check (xmt_trial_snap_after) */
    CUdeviceptr after;
    int after_async;
    CUevent after_ev;
};

/* The offset of region i in a snapshot's copy: the regions end to end, 256-byte aligned. */
static inline size_t xmt_snap_off(const xmt_trial_snap *s, size_t i)
{
    size_t at = 0;
    for (size_t r = 0; r < i; r++)
        at += (s->regs[r].bytes + 255) & ~(size_t)255;
    return at;
}

/* Can this launch's session run in the helper at all? 1 and *img, else 0 with why: a
 * launch it cannot replay, parameters unknown, a texture or surface object among them (a
 * handle another process cannot use), no module image. */
int xmt_trial_admissible(const xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                         xmt_image *img, char *why, size_t cap);

/* The worker made ctx's memory pool ready (bgverify.c's warm-up): a snapshot in ctx allocates
 * stream-ordered from now on (before, with the program's allocator: trialsnap.c, pool_ready). */
void xmt_trial_pool_ready(CUcontext ctx);

/* On the program's thread: what the launch reaches copied into memory of the snapshot's,
 * stream-ordered before the launch (no wait for the GPU). Returns NULL with why when the
 * launch cannot be snapshot (as xmt_trial_session's refusals). */
xmt_trial_snap *xmt_trial_snapshot(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                                   int device, char *why, size_t cap);
/* Background tuning: on the program's thread, right after its own launch, what that launch
 * left copied (stream-ordered, no wait), for the fidelity check; 0, or -1 (the check then
 * cannot run: the key stays the program's own config). */
int xmt_trial_snap_after(xmt_trial_snap *s, const xmt_launch *l);
/* On the worker: the program's own launch's time in ms, from its snapshot's events (that of
 * xmt_trial_snap_after); -1 while it still runs, -2 when it cannot be had. Makes the
 * snapshot's context current. */
double xmt_trial_snap_own_ms(const xmt_trial_snap *s);
/* The snapshot event (docs/log.md): the host µs of each of the program thread's steps
 * (after xmt_trial_snap_after, where it ran), with the key and what it is for. */
void xmt_trial_snap_log(const xmt_trial_snap *s, const char *key_text, const char *purpose);
void xmt_trial_snap_free(xmt_trial_snap *s);
/* A snapshot dropped at exit: its host memory freed, its device memory and events left to
 * the process (no driver call: the exiting thread may not make its context current). */
void xmt_trial_snap_drop(xmt_trial_snap *s);

#endif
