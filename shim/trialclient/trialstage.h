/*
 * trialstage: a launch's memory staged for the trial helper: the regions it reaches
 * (protect.c) widened to the driver's allocation granularity into windows, copied into
 * cuMemCreate memory exported as a file descriptor that the helper maps at the program's
 * addresses (or elsewhere, its pointers translated). trialtune.c's sessions and snapshots
 * both stage through it.
 */
#ifndef XMT_TRIALSTAGE_H
#define XMT_TRIALSTAGE_H

#include <stddef.h>

#include "driver.h"
#include "kernels.h"
#include "launch.h"
#include "protect.h"
#include "trialreq.h"

/* The staged copy of a launch's memory. */
typedef struct {
    xmt_region *regs;
    size_t nregs;
    size_t nwin;
    CUdeviceptr win_va[XMT_TR_MAX_WINDOWS];
    size_t win_bytes[XMT_TR_MAX_WINDOWS], win_off[XMT_TR_MAX_WINDOWS];
    size_t bytes; /* the staging allocation: the windows end to end */
    /* the driver's allocation granularity the windows are rounded to: the shim's to ask,
     * the helper's guard (the request carries it; the helper does not ask again) */
    size_t gran;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va; /* where the program maps it, to copy into it */
    int fd;         /* its exported descriptor */
} xmt_staging;

/* Copies the regions into exportable memory. 0, or -1 with why. */
int xmt_stage(const xmt_kernel *k, const xmt_launch_view *v, int device, xmt_staging *st, char *why,
              size_t cap);

/* The staging memory for st's regions (set): windows, exportable memory mapped here and
 * exported. 0, or -1 with why. */
int xmt_stage_alloc(xmt_staging *st, int device, char *why, size_t cap);

/* The staging allocation's offset of program address p (inside a window). */
size_t xmt_staged_at(const xmt_staging *st, CUdeviceptr p);

/* Copies the program's data into the staging memory (after every stream finished). */
CUresult xmt_stage_refill(const xmt_staging *st);

/* Frees what st holds (its regions too) and empties it (fd -1). */
void xmt_unstage(xmt_staging *st);

#endif
