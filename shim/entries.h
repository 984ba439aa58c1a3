/*
 * entries: every driver entry point the shim interposes, listed once (an X-macro list,
 * as driver_syms.h is for the entry points the shim calls). No include guard: define
 * XMT_ENTRY(name, kind, ptsz, exported, handle), include, undefine.
 *
 *   name      the driver's symbol, as dlsym and cuGetProcAddress name it
 *   kind      the wrapper signature (hook.c): GETPROC1, GETPROC2, LAUNCH, EX, COOP, UNLOAD, and
 *             the graph calls (graph.h): GADD1/GADD2, GSET1/GSET2, GXSET1/GXSET2 (kernel
 *             node parameters, CUDA_KERNEL_NODE_PARAMS_v1/_v2), GINST (the 5-argument
 *             cuGraphInstantiate), GINSTF, GINSTP, GUPD1, GUPD2, GLAUNCH, GXDESTROY
 *   ptsz      1 for the per-thread-default-stream variant (stream 0 means per-thread)
 *   exported  1 when the shim also defines the symbol itself, for programs linked with
 *             -lcuda (then it must be in xmatune.map; tests/integration checks both)
 *   handle    UNLOAD only: the handle type of its one argument (else `_`)
 *
 * From this list follow hook.c's name table, its exported definitions and their
 * prototypes, and the test that our exports are only what is listed. To add an entry
 * point: docs/architecture.md, "To add a launch entry point".
 */
XMT_ENTRY(cuGetProcAddress, GETPROC1, 0, 1, _)
XMT_ENTRY(cuGetProcAddress_v2, GETPROC2, 0, 1, _)
XMT_ENTRY(cuLaunchKernel, LAUNCH, 0, 1, _)
XMT_ENTRY(cuLaunchKernel_ptsz, LAUNCH, 1, 1, _)
XMT_ENTRY(cuLaunchKernelEx, EX, 0, 1, _)
XMT_ENTRY(cuLaunchKernelEx_ptsz, EX, 1, 1, _)
XMT_ENTRY(cuLaunchCooperativeKernel, COOP, 0, 1, _)
XMT_ENTRY(cuLaunchCooperativeKernel_ptsz, COOP, 1, 1, _)
XMT_ENTRY(cuModuleUnload, UNLOAD, 0, 1, CUmodule)
XMT_ENTRY(cuLibraryUnload, UNLOAD, 0, 1, CUlibrary)
XMT_ENTRY(cuCtxDestroy, UNLOAD, 0, 0, CUcontext)
XMT_ENTRY(cuCtxDestroy_v2, UNLOAD, 0, 1, CUcontext)
XMT_ENTRY(cuGraphAddKernelNode, GADD1, 0, 1, _)
XMT_ENTRY(cuGraphAddKernelNode_v2, GADD2, 0, 1, _)
XMT_ENTRY(cuGraphKernelNodeSetParams, GSET1, 0, 1, _)
XMT_ENTRY(cuGraphKernelNodeSetParams_v2, GSET2, 0, 1, _)
XMT_ENTRY(cuGraphExecKernelNodeSetParams, GXSET1, 0, 1, _)
XMT_ENTRY(cuGraphExecKernelNodeSetParams_v2, GXSET2, 0, 1, _)
XMT_ENTRY(cuGraphInstantiate, GINST, 0, 1, _)
XMT_ENTRY(cuGraphInstantiate_v2, GINST, 0, 1, _)
XMT_ENTRY(cuGraphInstantiateWithFlags, GINSTF, 0, 1, _)
XMT_ENTRY(cuGraphInstantiateWithParams, GINSTP, 0, 1, _)
XMT_ENTRY(cuGraphInstantiateWithParams_ptsz, GINSTP, 1, 1, _)
XMT_ENTRY(cuGraphExecUpdate, GUPD1, 0, 1, _)
XMT_ENTRY(cuGraphExecUpdate_v2, GUPD2, 0, 1, _)
XMT_ENTRY(cuGraphLaunch, GLAUNCH, 0, 1, _)
XMT_ENTRY(cuGraphLaunch_ptsz, GLAUNCH, 1, 1, _)
XMT_ENTRY(cuGraphExecDestroy, GXDESTROY, 0, 1, _)
