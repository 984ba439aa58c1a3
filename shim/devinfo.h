/*
 * devinfo: what the shim knows of each device — the attributes policies may read
 * (xmt_attrs) and the on-disk identity of its model ("NVIDIA H200|cc9.0|sm132"), asked
 * of the driver once per device.
 */
#ifndef XMT_DEVINFO_H
#define XMT_DEVINFO_H

#include <cuda.h>
#include <stdatomic.h>

#include "xmt_policy.h"

typedef struct {
    _Atomic int filled;
    xmt_attrs attrs;
    char id[200]; /* the on-disk identity (device model) */
} xmt_devinfo;

/* The device's record, filled on first use; NULL for an ordinal out of range. */
const xmt_devinfo *xmt_device_info(CUdevice d);

#endif
