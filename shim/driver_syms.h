/*
 * driver_syms: the one list of real-driver entry points the shim calls itself.
 *
 * X-macro: XMT_DRV(name, version). Each is asked of cuGetProcAddress at exactly that
 * version and typed PFN_<name>_v<version> from cudaTypedefs.h, so the signature we call
 * is the one the driver hands out. Asking at the toolkit's own version would be wrong:
 * at 13000, "cuCtxGetDevice" is the two-argument cuCtxGetDevice_v2.
 */
XMT_DRV(cuGetErrorName, 6000)
XMT_DRV(cuCtxGetCurrent, 4000)
XMT_DRV(cuCtxGetDevice, 2000)
XMT_DRV(cuCtxSynchronize, 2000)
XMT_DRV(cuDeviceGetCount, 2000)
XMT_DRV(cuDeviceGetAttribute, 2000)
XMT_DRV(cuDeviceGetName, 2000)
XMT_DRV(cuFuncGetName, 12030)
XMT_DRV(cuFuncGetParamInfo, 12040)
XMT_DRV(cuFuncGetAttribute, 2020)
XMT_DRV(cuKernelGetName, 12030)
XMT_DRV(cuKernelGetParamInfo, 12040)
XMT_DRV(cuKernelGetFunction, 12000)
XMT_DRV(cuKernelGetAttribute, 12000)
XMT_DRV(cuStreamIsCapturing, 10000)
XMT_DRV(cuStreamSynchronize, 2000)
XMT_DRV(cuThreadExchangeStreamCaptureMode, 10010)
XMT_DRV(cuEventCreate, 2000)
XMT_DRV(cuEventDestroy, 4000)
XMT_DRV(cuEventRecord, 2000)
XMT_DRV(cuEventSynchronize, 2000)
XMT_DRV(cuEventElapsedTime, 12080)
XMT_DRV(cuMemAlloc, 3020)
XMT_DRV(cuMemFree, 3020)
XMT_DRV(cuMemcpyDtoDAsync, 3020)
XMT_DRV(cuMemcpyDtoHAsync, 3020)
XMT_DRV(cuMemsetD8Async, 3020)
XMT_DRV(cuMemGetInfo, 3020)
XMT_DRV(cuMemGetAddressRange, 3020)
XMT_DRV(cuPointerGetAttribute, 4000)
XMT_DRV(cuCtxGetId, 12000)
XMT_DRV(cuModuleLoadData, 2000)
XMT_DRV(cuModuleGetFunction, 2000)
XMT_DRV(cuModuleUnload, 2000)
XMT_DRV(cuLaunchKernel, 4000)
