/* sim_funcs.h: the one list of the simulated driver's CUDA entry points.
 *
 * Every exported cu* function appears here exactly once as an X row:
 *   X(base name, version it appeared in, N|P, exported symbol)
 * N is the legacy-stream (or stream-less) variant, P the per-thread-default-stream
 * variant (_ptsz/_ptds) that cuGetProcAddress hands out for
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. An A row maps one more (base name,
 * version) to a symbol that already has its X row (the real driver answers
 * "cuGraphInstantiate" at 12000 with cuGraphInstantiateWithFlags).
 *
 * From this list come: the call counters and fault-injection slots (one per X row),
 * and the cuGetProcAddress table (X and A rows). Versions are those the real driver
 * tags its pointers with (cudaTypedefs.h's PFN_<name>_v<version>). A (base, version)
 * below the lowest row gives CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: older ABI
 * variants (32-bit cuMemAlloc, ...) are not simulated. */
#ifndef SIM_FUNCS_H
#define SIM_FUNCS_H

#define SIM_FUNCS(X, A)                                                                            \
    X("cuInit", 2000, N, cuInit)                                                                   \
    X("cuDriverGetVersion", 2020, N, cuDriverGetVersion)                                           \
    X("cuGetErrorString", 6000, N, cuGetErrorString)                                               \
    X("cuGetErrorName", 6000, N, cuGetErrorName)                                                   \
    X("cuGetProcAddress", 11030, N, cuGetProcAddress)                                              \
    X("cuGetProcAddress", 12000, N, cuGetProcAddress_v2)                                           \
    X("cuDeviceGet", 2000, N, cuDeviceGet)                                                         \
    X("cuDeviceGetCount", 2000, N, cuDeviceGetCount)                                               \
    X("cuDeviceGetName", 2000, N, cuDeviceGetName)                                                 \
    X("cuDeviceGetAttribute", 2000, N, cuDeviceGetAttribute)                                       \
    X("cuDeviceTotalMem", 3020, N, cuDeviceTotalMem_v2)                                            \
    X("cuDeviceGetUuid", 11040, N, cuDeviceGetUuid_v2)                                             \
    X("cuDevicePrimaryCtxRetain", 7000, N, cuDevicePrimaryCtxRetain)                               \
    X("cuDevicePrimaryCtxRelease", 11000, N, cuDevicePrimaryCtxRelease_v2)                         \
    X("cuDevicePrimaryCtxGetState", 7000, N, cuDevicePrimaryCtxGetState)                           \
    X("cuCtxCreate", 3020, N, cuCtxCreate_v2)                                                      \
    X("cuCtxCreate", 12050, N, cuCtxCreate_v4)                                                     \
    X("cuCtxDestroy", 4000, N, cuCtxDestroy_v2)                                                    \
    X("cuCtxSetCurrent", 4000, N, cuCtxSetCurrent)                                                 \
    X("cuCtxGetCurrent", 4000, N, cuCtxGetCurrent)                                                 \
    X("cuCtxGetDevice", 2000, N, cuCtxGetDevice)                                                   \
    X("cuCtxGetDevice", 13000, N, cuCtxGetDevice_v2)                                               \
    X("cuCtxSynchronize", 2000, N, cuCtxSynchronize)                                               \
    X("cuCtxSynchronize", 13000, N, cuCtxSynchronize_v2)                                           \
    X("cuCtxGetId", 12000, N, cuCtxGetId)                                                          \
    X("cuCtxPushCurrent", 4000, N, cuCtxPushCurrent_v2)                                            \
    X("cuCtxPopCurrent", 4000, N, cuCtxPopCurrent_v2)                                              \
    X("cuCtxGetApiVersion", 3020, N, cuCtxGetApiVersion)                                           \
    X("cuCtxGetFlags", 7000, N, cuCtxGetFlags)                                                     \
    X("cuCtxGetStreamPriorityRange", 5050, N, cuCtxGetStreamPriorityRange)                         \
    X("cuMemGetInfo", 3020, N, cuMemGetInfo_v2)                                                    \
    X("cuMemGetAddressRange", 3020, N, cuMemGetAddressRange_v2)                                    \
    X("cuMemAlloc", 3020, N, cuMemAlloc_v2)                                                        \
    X("cuMemFree", 3020, N, cuMemFree_v2)                                                          \
    X("cuMemAllocAsync", 11020, N, cuMemAllocAsync)                                                \
    X("cuMemAllocAsync", 11020, P, cuMemAllocAsync_ptsz)                                           \
    X("cuMemFreeAsync", 11020, N, cuMemFreeAsync)                                                  \
    X("cuMemFreeAsync", 11020, P, cuMemFreeAsync_ptsz)                                             \
    X("cuMemsetD8", 3020, N, cuMemsetD8_v2)                                                        \
    X("cuMemsetD8", 7000, P, cuMemsetD8_v2_ptds)                                                   \
    X("cuMemsetD32", 3020, N, cuMemsetD32_v2)                                                      \
    X("cuMemsetD32", 7000, P, cuMemsetD32_v2_ptds)                                                 \
    X("cuMemsetD8Async", 3020, N, cuMemsetD8Async)                                                 \
    X("cuMemsetD8Async", 7000, P, cuMemsetD8Async_ptsz)                                            \
    X("cuMemsetD32Async", 3020, N, cuMemsetD32Async)                                               \
    X("cuMemsetD32Async", 7000, P, cuMemsetD32Async_ptsz)                                          \
    X("cuMemcpyHtoD", 3020, N, cuMemcpyHtoD_v2)                                                    \
    X("cuMemcpyHtoD", 7000, P, cuMemcpyHtoD_v2_ptds)                                               \
    X("cuMemcpyDtoH", 3020, N, cuMemcpyDtoH_v2)                                                    \
    X("cuMemcpyDtoH", 7000, P, cuMemcpyDtoH_v2_ptds)                                               \
    X("cuMemcpyDtoD", 3020, N, cuMemcpyDtoD_v2)                                                    \
    X("cuMemcpyDtoD", 7000, P, cuMemcpyDtoD_v2_ptds)                                               \
    X("cuMemcpyHtoDAsync", 3020, N, cuMemcpyHtoDAsync_v2)                                          \
    X("cuMemcpyHtoDAsync", 7000, P, cuMemcpyHtoDAsync_v2_ptsz)                                     \
    X("cuMemcpyDtoHAsync", 3020, N, cuMemcpyDtoHAsync_v2)                                          \
    X("cuMemcpyDtoHAsync", 7000, P, cuMemcpyDtoHAsync_v2_ptsz)                                     \
    X("cuMemcpyDtoDAsync", 3020, N, cuMemcpyDtoDAsync_v2)                                          \
    X("cuMemcpyDtoDAsync", 7000, P, cuMemcpyDtoDAsync_v2_ptsz)                                     \
    X("cuMemcpy", 4000, N, cuMemcpy)                                                               \
    X("cuMemcpy", 7000, P, cuMemcpy_ptds)                                                          \
    X("cuMemcpyAsync", 4000, N, cuMemcpyAsync)                                                     \
    X("cuMemcpyAsync", 7000, P, cuMemcpyAsync_ptsz)                                                \
    X("cuPointerGetAttribute", 4000, N, cuPointerGetAttribute)                                     \
    X("cuIpcGetMemHandle", 4010, N, cuIpcGetMemHandle)                                             \
    X("cuIpcOpenMemHandle", 11000, N, cuIpcOpenMemHandle_v2)                                       \
    X("cuIpcCloseMemHandle", 4010, N, cuIpcCloseMemHandle)                                         \
    X("cuMemCreate", 10020, N, cuMemCreate)                                                        \
    X("cuMemRelease", 10020, N, cuMemRelease)                                                      \
    X("cuMemExportToShareableHandle", 10020, N, cuMemExportToShareableHandle)                      \
    X("cuMemImportFromShareableHandle", 10020, N, cuMemImportFromShareableHandle)                  \
    X("cuMemGetAllocationGranularity", 10020, N, cuMemGetAllocationGranularity)                    \
    X("cuMemAddressReserve", 10020, N, cuMemAddressReserve)                                        \
    X("cuMemAddressFree", 10020, N, cuMemAddressFree)                                              \
    X("cuMemMap", 10020, N, cuMemMap)                                                              \
    X("cuMemUnmap", 10020, N, cuMemUnmap)                                                          \
    X("cuMemSetAccess", 10020, N, cuMemSetAccess)                                                  \
    X("cuStreamCreate", 2000, N, cuStreamCreate)                                                   \
    X("cuStreamCreateWithPriority", 5050, N, cuStreamCreateWithPriority)                           \
    X("cuStreamDestroy", 4000, N, cuStreamDestroy_v2)                                              \
    X("cuStreamSynchronize", 2000, N, cuStreamSynchronize)                                         \
    X("cuStreamSynchronize", 7000, P, cuStreamSynchronize_ptsz)                                    \
    X("cuStreamQuery", 2000, N, cuStreamQuery)                                                     \
    X("cuStreamQuery", 7000, P, cuStreamQuery_ptsz)                                                \
    X("cuStreamWaitEvent", 3020, N, cuStreamWaitEvent)                                             \
    X("cuStreamWaitEvent", 7000, P, cuStreamWaitEvent_ptsz)                                        \
    X("cuStreamGetCtx", 9020, N, cuStreamGetCtx)                                                   \
    X("cuStreamGetCtx", 9020, P, cuStreamGetCtx_ptsz)                                              \
    X("cuStreamGetFlags", 5050, N, cuStreamGetFlags)                                               \
    X("cuStreamGetFlags", 7000, P, cuStreamGetFlags_ptsz)                                          \
    X("cuStreamGetPriority", 5050, N, cuStreamGetPriority)                                         \
    X("cuStreamGetPriority", 7000, P, cuStreamGetPriority_ptsz)                                    \
    X("cuStreamIsCapturing", 10000, N, cuStreamIsCapturing)                                        \
    X("cuStreamIsCapturing", 10000, P, cuStreamIsCapturing_ptsz)                                   \
    X("cuStreamGetCaptureInfo", 12030, N, cuStreamGetCaptureInfo_v3)                               \
    X("cuStreamGetCaptureInfo", 12030, P, cuStreamGetCaptureInfo_v3_ptsz)                          \
    X("cuStreamBeginCapture", 10010, N, cuStreamBeginCapture_v2)                                   \
    X("cuStreamBeginCapture", 10010, P, cuStreamBeginCapture_v2_ptsz)                              \
    X("cuStreamEndCapture", 10000, N, cuStreamEndCapture)                                          \
    X("cuStreamEndCapture", 10000, P, cuStreamEndCapture_ptsz)                                     \
    X("cuThreadExchangeStreamCaptureMode", 10010, N, cuThreadExchangeStreamCaptureMode)            \
    X("cuEventCreate", 2000, N, cuEventCreate)                                                     \
    X("cuEventDestroy", 4000, N, cuEventDestroy_v2)                                                \
    X("cuEventRecord", 2000, N, cuEventRecord)                                                     \
    X("cuEventRecord", 7000, P, cuEventRecord_ptsz)                                                \
    X("cuEventRecordWithFlags", 11010, N, cuEventRecordWithFlags)                                  \
    X("cuEventRecordWithFlags", 11010, P, cuEventRecordWithFlags_ptsz)                             \
    X("cuEventSynchronize", 2000, N, cuEventSynchronize)                                           \
    X("cuEventQuery", 2000, N, cuEventQuery)                                                       \
    X("cuEventElapsedTime", 2000, N, cuEventElapsedTime)                                           \
    X("cuEventElapsedTime", 12080, N, cuEventElapsedTime_v2)                                       \
    X("cuModuleLoad", 2000, N, cuModuleLoad)                                                       \
    X("cuModuleLoadData", 2000, N, cuModuleLoadData)                                               \
    X("cuModuleLoadDataEx", 2010, N, cuModuleLoadDataEx)                                           \
    X("cuModuleUnload", 2000, N, cuModuleUnload)                                                   \
    X("cuModuleLoadFatBinary", 2000, N, cuModuleLoadFatBinary)                                     \
    X("cuLinkCreate", 6050, N, cuLinkCreate_v2)                                                    \
    X("cuLinkAddData", 6050, N, cuLinkAddData_v2)                                                  \
    X("cuLinkAddFile", 6050, N, cuLinkAddFile_v2)                                                  \
    X("cuLinkComplete", 5050, N, cuLinkComplete)                                                   \
    X("cuLinkDestroy", 5050, N, cuLinkDestroy)                                                     \
    X("cuModuleGetFunction", 2000, N, cuModuleGetFunction)                                         \
    X("cuModuleGetGlobal", 3020, N, cuModuleGetGlobal_v2)                                          \
    X("cuLibraryGetGlobal", 12000, N, cuLibraryGetGlobal)                                          \
    X("cuTexObjectCreate", 5000, N, cuTexObjectCreate)                                             \
    X("cuTexObjectDestroy", 5000, N, cuTexObjectDestroy)                                           \
    X("cuSurfObjectCreate", 5000, N, cuSurfObjectCreate)                                           \
    X("cuSurfObjectDestroy", 5000, N, cuSurfObjectDestroy)                                         \
    X("cuLibraryLoadData", 12000, N, cuLibraryLoadData)                                            \
    X("cuLibraryLoadFromFile", 12000, N, cuLibraryLoadFromFile)                                    \
    X("cuLibraryUnload", 12000, N, cuLibraryUnload)                                                \
    X("cuLibraryGetKernel", 12000, N, cuLibraryGetKernel)                                          \
    X("cuLibraryGetModule", 12000, N, cuLibraryGetModule)                                          \
    X("cuKernelGetFunction", 12000, N, cuKernelGetFunction)                                        \
    X("cuKernelGetLibrary", 12050, N, cuKernelGetLibrary)                                          \
    X("cuKernelGetName", 12030, N, cuKernelGetName)                                                \
    X("cuKernelGetParamInfo", 12040, N, cuKernelGetParamInfo)                                      \
    X("cuKernelGetAttribute", 12000, N, cuKernelGetAttribute)                                      \
    X("cuKernelSetAttribute", 12000, N, cuKernelSetAttribute)                                      \
    X("cuFuncGetName", 12030, N, cuFuncGetName)                                                    \
    X("cuFuncGetParamInfo", 12040, N, cuFuncGetParamInfo)                                          \
    X("cuFuncGetAttribute", 2020, N, cuFuncGetAttribute)                                           \
    X("cuFuncSetAttribute", 9000, N, cuFuncSetAttribute)                                           \
    X("cuFuncGetModule", 11000, N, cuFuncGetModule)                                                \
    X("cuFuncLoad", 12040, N, cuFuncLoad)                                                          \
    X("cuFuncSetCacheConfig", 3000, N, cuFuncSetCacheConfig)                                       \
    X("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, N,                                      \
      cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                 \
    X("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000, N,                             \
      cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)                                        \
    X("cuLaunchKernel", 4000, N, cuLaunchKernel)                                                   \
    X("cuLaunchKernel", 7000, P, cuLaunchKernel_ptsz)                                              \
    X("cuLaunchKernelEx", 11060, N, cuLaunchKernelEx)                                              \
    X("cuLaunchKernelEx", 11060, P, cuLaunchKernelEx_ptsz)                                         \
    X("cuLaunchCooperativeKernel", 9000, N, cuLaunchCooperativeKernel)                             \
    X("cuLaunchCooperativeKernel", 9000, P, cuLaunchCooperativeKernel_ptsz)                        \
    X("cuGraphCreate", 10000, N, cuGraphCreate)                                                    \
    X("cuGraphAddKernelNode", 10000, N, cuGraphAddKernelNode)                                      \
    X("cuGraphAddKernelNode", 12000, N, cuGraphAddKernelNode_v2)                                   \
    X("cuGraphKernelNodeGetParams", 10000, N, cuGraphKernelNodeGetParams)                          \
    X("cuGraphKernelNodeGetParams", 12000, N, cuGraphKernelNodeGetParams_v2)                       \
    X("cuGraphKernelNodeSetParams", 10000, N, cuGraphKernelNodeSetParams)                          \
    X("cuGraphKernelNodeSetParams", 12000, N, cuGraphKernelNodeSetParams_v2)                       \
    X("cuGraphExecKernelNodeSetParams", 10010, N, cuGraphExecKernelNodeSetParams)                  \
    X("cuGraphExecKernelNodeSetParams", 12000, N, cuGraphExecKernelNodeSetParams_v2)               \
    X("cuGraphAddChildGraphNode", 10000, N, cuGraphAddChildGraphNode)                              \
    X("cuGraphChildGraphNodeGetGraph", 10000, N, cuGraphChildGraphNodeGetGraph)                    \
    X("cuGraphGetNodes", 10000, N, cuGraphGetNodes)                                                \
    X("cuGraphNodeGetType", 10000, N, cuGraphNodeGetType)                                          \
    X("cuGraphInstantiate", 10000, N, cuGraphInstantiate)                                          \
    X("cuGraphInstantiate", 11000, N, cuGraphInstantiate_v2)                                       \
    X("cuGraphInstantiateWithFlags", 11040, N, cuGraphInstantiateWithFlags)                        \
    X("cuGraphInstantiateWithParams", 12000, N, cuGraphInstantiateWithParams)                      \
    X("cuGraphInstantiateWithParams", 12000, P, cuGraphInstantiateWithParams_ptsz)                 \
    X("cuGraphExecUpdate", 10020, N, cuGraphExecUpdate)                                            \
    X("cuGraphExecUpdate", 12000, N, cuGraphExecUpdate_v2)                                         \
    A("cuGraphInstantiate", 12000, N, cuGraphInstantiateWithFlags)                                 \
    X("cuGraphLaunch", 10000, N, cuGraphLaunch)                                                    \
    X("cuGraphLaunch", 10000, P, cuGraphLaunch_ptsz)                                               \
    X("cuGraphDestroy", 10000, N, cuGraphDestroy)                                                  \
    X("cuGraphExecDestroy", 10000, N, cuGraphExecDestroy)

#endif
