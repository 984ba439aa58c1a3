/*
 * driver: the real CUDA driver, as the shim itself uses it.
 *
 * The driver is never linked: it is opened with dlopen (XMATUNE_LIBCUDA, default
 * libcuda.so.1) the first time the shim needs it, and every entry point in
 * driver_syms.h is fetched once through the real cuGetProcAddress_v2. Calls through
 * xmt_drv go straight to the driver, never through our own hooks.
 */
#ifndef XMT_DRIVER_H
#define XMT_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "guard.h"

struct xmt_driver {
    void *handle;
    CUresult (*getproc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
#define XMT_DRV(name, version) PFN_##name##_v##version name;
#include "driver_syms.h"
#undef XMT_DRV
};

extern struct xmt_driver xmt_drv;

/* Opens the driver and fills xmt_drv, once (thread-safe). Returns 0, or -1 when the
 * driver or its cuGetProcAddress_v2 is missing (warned once). Entry points the driver
 * lacks stay NULL; the features needing them turn themselves off. */
int xmt_driver_init(void);

/* The real definition of an exported driver symbol, looked up in the driver's own
 * handle (never ours). NULL if the driver is missing or lacks it. */
void *xmt_driver_sym(const char *name);

/* "CUDA_ERROR_INVALID_VALUE", or "CUresult 123" when the driver cannot say. */
const char *xmt_cu_name(CUresult r, char *buf, size_t cap);

#endif
