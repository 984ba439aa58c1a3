/*
 * devinfo: what the shim knows of each device — the attributes policies may read
 * (xmt_attrs) and the on-disk identity of its model and driver
 * ("NVIDIA H200|cc9.0|sm132|drv13000"), asked of the driver once per device — and the
 * identity of a kernel's code.
 */
#ifndef XMT_DEVINFO_H
#define XMT_DEVINFO_H

#include <cuda.h>
#include <stdatomic.h>

#include "kernels.h"
#include "xmt_policy.h"

typedef struct {
    _Atomic int filled;
    xmt_attrs attrs;
    char id[200]; /* the on-disk identity (device model) */
} xmt_devinfo;

/* The device's record, filled on first use; NULL for an ordinal out of range. */
const xmt_devinfo *xmt_device_info(CUdevice d);

/* A fingerprint of the kernel's code as the driver describes it on device d: its
 * parameter layout, registers, static shared, constant and local sizes, PTX and binary
 * versions, thread limit. 16 hex digits and a NUL. A rebuilt kernel that differs in any
 * of these gets new cache records. */
void xmt_code_fingerprint(const xmt_kernel *k, CUdevice d, char out[17]);

#endif
