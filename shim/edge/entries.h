/*
 * entries: every driver entry point the shim interposes, listed once (an X-macro list,
 * as driver_syms.h is for the entry points the shim calls). No include guard: define
 * XMT_ENTRY(name, kind, ptsz, exported), include, undefine.
 *
 *   name      the driver's symbol, as dlsym and cuGetProcAddress name it
 *   kind      its C signature: a row of signatures.h (XMT_SIG_<kind>), which also says
 *             what the shim does with the call (a launch, a call it acts on, or one it
 *             passes through)
 *   ptsz      1 for the per-thread-default-stream variant (stream 0 means per-thread)
 *   exported  1 when the shim also defines the symbol itself, for programs linked with
 *             -lcuda (then it must be in xmatune.map; tests/integration checks both)
 *
 * From this list follow hook.c's name table, its exported definitions and their
 * prototypes, and the test that our exports are only what is listed. To add an entry
 * point: docs/architecture.md, "To add an entry point".
 */
XMT_ENTRY(cuGetProcAddress, GETPROC1, 0, 1)
XMT_ENTRY(cuGetProcAddress_v2, GETPROC2, 0, 1)
XMT_ENTRY(cuLaunchKernel, LAUNCH, 0, 1)
XMT_ENTRY(cuLaunchKernel_ptsz, LAUNCH, 1, 1)
XMT_ENTRY(cuLaunchKernelEx, EX, 0, 1)
XMT_ENTRY(cuLaunchKernelEx_ptsz, EX, 1, 1)
XMT_ENTRY(cuLaunchCooperativeKernel, COOP, 0, 1)
XMT_ENTRY(cuLaunchCooperativeKernel_ptsz, COOP, 1, 1)
XMT_ENTRY(cuModuleUnload, UNLOADM, 0, 1)
XMT_ENTRY(cuLibraryUnload, UNLOADL, 0, 1)
XMT_ENTRY(cuCtxDestroy, UNLOADC, 0, 0)
XMT_ENTRY(cuCtxDestroy_v2, UNLOADC, 0, 1)
XMT_ENTRY(cuGraphAddKernelNode, GADD1, 0, 1)
XMT_ENTRY(cuGraphAddKernelNode_v2, GADD2, 0, 1)
XMT_ENTRY(cuGraphKernelNodeSetParams, GSET1, 0, 1)
XMT_ENTRY(cuGraphKernelNodeSetParams_v2, GSET2, 0, 1)
XMT_ENTRY(cuGraphExecKernelNodeSetParams, GXSET1, 0, 1)
XMT_ENTRY(cuGraphExecKernelNodeSetParams_v2, GXSET2, 0, 1)
XMT_ENTRY(cuGraphInstantiate, GINST, 0, 1)
XMT_ENTRY(cuGraphInstantiate_v2, GINST, 0, 1)
XMT_ENTRY(cuGraphInstantiateWithFlags, GINSTF, 0, 1)
XMT_ENTRY(cuGraphInstantiateWithParams, GINSTP, 0, 1)
XMT_ENTRY(cuGraphInstantiateWithParams_ptsz, GINSTP, 1, 1)
XMT_ENTRY(cuGraphExecUpdate, GUPD1, 0, 1)
XMT_ENTRY(cuGraphExecUpdate_v2, GUPD2, 0, 1)
XMT_ENTRY(cuGraphLaunch, GLAUNCH, 0, 1)
XMT_ENTRY(cuGraphLaunch_ptsz, GLAUNCH, 1, 1)
XMT_ENTRY(cuGraphExecDestroy, GXDESTROY, 0, 1)
XMT_ENTRY(cuModuleLoad, MLOAD, 0, 1)
XMT_ENTRY(cuModuleLoadData, MLOADDATA, 0, 1)
XMT_ENTRY(cuModuleLoadDataEx, MLOADDATAEX, 0, 1)
XMT_ENTRY(cuModuleLoadFatBinary, MLOADFATBIN, 0, 1)
XMT_ENTRY(cuLibraryLoadData, LLOADDATA, 0, 1)
XMT_ENTRY(cuLibraryLoadFromFile, LLOADFILE, 0, 1)
XMT_ENTRY(cuModuleGetGlobal_v2, MGLOBAL, 0, 1)
XMT_ENTRY(cuLibraryGetGlobal, LGLOBAL, 0, 1)
XMT_ENTRY(cuTexObjectCreate, TEXCREATE, 0, 1)
XMT_ENTRY(cuSurfObjectCreate, SURFCREATE, 0, 1)
XMT_ENTRY(cuTexObjectDestroy, TEXDESTROY, 0, 1)
XMT_ENTRY(cuSurfObjectDestroy, SURFDESTROY, 0, 1)
XMT_ENTRY(cuLinkComplete, LINKCOMPLETE, 0, 1)
