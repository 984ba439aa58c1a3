/*
 * entries: every driver entry point the shim interposes, listed once (an X-macro list,
 * as driver_syms.h is for the entry points the shim calls). No include guard: define
 * XMT_ENTRY(name, kind, ptsz, exported, handle), include, undefine.
 *
 *   name      the driver's symbol, as dlsym and cuGetProcAddress name it
 *   kind      the wrapper signature (hook.c): GETPROC1, GETPROC2, LAUNCH, EX, COOP, UNLOAD
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
