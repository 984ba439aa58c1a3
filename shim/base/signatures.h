/*
 * signatures: every C signature of an entry point the shim interposes, written once.
 *
 * One row per signature: XMT_SIG_<KIND> is its parameter list as (type, name) pairs, and
 * the kind's name in one of three lists says what the shim does with a call of it:
 *
 *   XMT_LAUNCH_SIGNATURES  a kernel launch. dispatch.h generates its inline fast path and
 *                          slow half from the row; launch.h makes it an xmt_launch value
 *                          (xmt_launch_of_<KIND>) and answers the kind questions for it
 *                          (switches without `default`: -Wswitch names a missing kind).
 *   XMT_HOOK_SIGNATURES    a call the shim acts on: hook.c has its handler, written as
 *                          XMT_HANDLER(KIND) { ... } over the row's parameter names.
 *   XMT_PASS_SIGNATURES    a call wrapped and passed through (cuLinkComplete): the
 *                          handler is generated, and counts the call (modload.h).
 *
 * From the rows follow, for every kind: the typedef xmt_pfn_<KIND>, the wrapper slots
 * (hook.c), the prototypes and definitions of the exported entry points, and for launches
 * the fast path and slow half. Entry points (names) are listed in entries.h, each with
 * its kind. docs/architecture.md, "To add an entry point", is the checklist;
 * tests/integration/scratch_kind.sh adds a kind in a scratch copy and checks it.
 *
 * The pairs are plain (type, name); a type may not contain a comma. At most 12 of them.
 */
#ifndef XMT_SIGNATURES_H
#define XMT_SIGNATURES_H

#include <cuda.h>

/* ---- the rows ---------------------------------------------------------------------- */

/* clang-format off */
#define XMT_SIG_GETPROC1  (const char *, sym), (void **, pfn), (int, ver), (cuuint64_t, flags)
#define XMT_SIG_GETPROC2  (const char *, sym), (void **, pfn), (int, ver), (cuuint64_t, flags), \
                          (CUdriverProcAddressQueryResult *, st)
#define XMT_SIG_LAUNCH    (CUfunction, f), (unsigned, gx), (unsigned, gy), (unsigned, gz), \
                          (unsigned, bx), (unsigned, by), (unsigned, bz), (unsigned, shared), \
                          (CUstream, s), (void **, params), (void **, extra)
#define XMT_SIG_EX        (const CUlaunchConfig *, cfg), (CUfunction, f), (void **, params), \
                          (void **, extra)
#define XMT_SIG_COOP      (CUfunction, f), (unsigned, gx), (unsigned, gy), (unsigned, gz), \
                          (unsigned, bx), (unsigned, by), (unsigned, bz), (unsigned, shared), \
                          (CUstream, s), (void **, params)
#define XMT_SIG_UNLOADM   (CUmodule, h)
#define XMT_SIG_UNLOADL   (CUlibrary, h)
#define XMT_SIG_UNLOADC   (CUcontext, h)
#define XMT_SIG_GADD1     (CUgraphNode *, ph), (CUgraph, g), (const CUgraphNode *, d), \
                          (size_t, nd), (const CUDA_KERNEL_NODE_PARAMS_v1 *, p)
#define XMT_SIG_GADD2     (CUgraphNode *, ph), (CUgraph, g), (const CUgraphNode *, d), \
                          (size_t, nd), (const CUDA_KERNEL_NODE_PARAMS_v2 *, p)
#define XMT_SIG_GSET1     (CUgraphNode, n), (const CUDA_KERNEL_NODE_PARAMS_v1 *, p)
#define XMT_SIG_GSET2     (CUgraphNode, n), (const CUDA_KERNEL_NODE_PARAMS_v2 *, p)
#define XMT_SIG_GXSET1    (CUgraphExec, x), (CUgraphNode, n), (const CUDA_KERNEL_NODE_PARAMS_v1 *, p)
#define XMT_SIG_GXSET2    (CUgraphExec, x), (CUgraphNode, n), (const CUDA_KERNEL_NODE_PARAMS_v2 *, p)
#define XMT_SIG_GINST     (CUgraphExec *, px), (CUgraph, g), (CUgraphNode *, e), (char *, l), \
                          (size_t, ln)
#define XMT_SIG_GINSTF    (CUgraphExec *, px), (CUgraph, g), (unsigned long long, fl)
#define XMT_SIG_GINSTP    (CUgraphExec *, px), (CUgraph, g), (CUDA_GRAPH_INSTANTIATE_PARAMS *, ip)
#define XMT_SIG_GUPD1     (CUgraphExec, x), (CUgraph, g), (CUgraphNode *, e), \
                          (CUgraphExecUpdateResult *, res)
#define XMT_SIG_GUPD2     (CUgraphExec, x), (CUgraph, g), (CUgraphExecUpdateResultInfo *, info)
#define XMT_SIG_GLAUNCH   (CUgraphExec, x), (CUstream, s)
#define XMT_SIG_GXDESTROY (CUgraphExec, x)
#define XMT_SIG_MLOAD     (CUmodule *, m), (const char *, path)
#define XMT_SIG_MLOADDATA (CUmodule *, m), (const void *, image)
#define XMT_SIG_MLOADDATAEX (CUmodule *, m), (const void *, image), (unsigned, n), \
                          (CUjit_option *, opts), (void **, vals)
#define XMT_SIG_MLOADFATBIN (CUmodule *, m), (const void *, fatbin)
#define XMT_SIG_LLOADDATA (CUlibrary *, lib), (const void *, code), (CUjit_option *, jo), \
                          (void **, jv), (unsigned, nj), (CUlibraryOption *, lo), (void **, lv), \
                          (unsigned, nl)
#define XMT_SIG_LLOADFILE (CUlibrary *, lib), (const char *, path), (CUjit_option *, jo), \
                          (void **, jv), (unsigned, nj), (CUlibraryOption *, lo), (void **, lv), \
                          (unsigned, nl)
#define XMT_SIG_LINKCOMPLETE (CUlinkState, state), (void **, cubin), (size_t *, size)
#define XMT_SIG_TEXCREATE (CUtexObject *, pt), (const CUDA_RESOURCE_DESC *, rd), \
                          (const CUDA_TEXTURE_DESC *, td), (const CUDA_RESOURCE_VIEW_DESC *, vd)
#define XMT_SIG_SURFCREATE (CUsurfObject *, ps), (const CUDA_RESOURCE_DESC *, rd)
#define XMT_SIG_TEXDESTROY (CUtexObject, tex)
#define XMT_SIG_SURFDESTROY (CUsurfObject, surf)
#define XMT_SIG_MGLOBAL   (CUdeviceptr *, dp), (size_t *, bytes), (CUmodule, hmod), \
                          (const char *, gname)
#define XMT_SIG_LGLOBAL   (CUdeviceptr *, dp), (size_t *, bytes), (CUlibrary, lib), \
                          (const char *, gname)

#define XMT_LAUNCH_SIGNATURES(X) X(LAUNCH) X(EX) X(COOP)
#define XMT_HOOK_SIGNATURES(X) \
    X(GETPROC1) X(GETPROC2) X(UNLOADM) X(UNLOADL) X(UNLOADC) \
    X(GADD1) X(GADD2) X(GSET1) X(GSET2) X(GXSET1) X(GXSET2) X(GINST) X(GINSTF) X(GINSTP) \
    X(GUPD1) X(GUPD2) X(GLAUNCH) X(GXDESTROY) \
    X(MLOAD) X(MLOADDATA) X(MLOADDATAEX) X(MLOADFATBIN) X(LLOADDATA) X(LLOADFILE) \
    X(MGLOBAL) X(LGLOBAL) X(TEXCREATE) X(SURFCREATE) X(TEXDESTROY) X(SURFDESTROY)
#define XMT_PASS_SIGNATURES(X) \
    X(LINKCOMPLETE)
/* clang-format on */

#define XMT_ALL_SIGNATURES(X) XMT_LAUNCH_SIGNATURES(X) XMT_HOOK_SIGNATURES(X) XMT_PASS_SIGNATURES(X)

/* ---- what follows from a row -------------------------------------------------------- */

/* XMT_PARAMS(KIND): `type name, ...`; XMT_ARGS(KIND): `name, ...`; XMT_TYPES(KIND):
 * `type, ...`. Each maps a first-pair macro F and a next-pair macro N over the row. */
#define XMT_PARAMS(K) XMT_EACH_(XMT_P1_, XMT_PN_, XMT_SIG_##K)
#define XMT_ARGS(K) XMT_EACH_(XMT_A1_, XMT_AN_, XMT_SIG_##K)
#define XMT_TYPES(K) XMT_EACH_(XMT_T1_, XMT_TN_, XMT_SIG_##K)
#define XMT_P1_(t, a) t a
#define XMT_PN_(t, a) , t a
#define XMT_A1_(t, a) a
#define XMT_AN_(t, a) , a
#define XMT_T1_(t, a) t
#define XMT_TN_(t, a) , t

#define XMT_EACH_(F, N, ...) XMT_CAT_(XMT_EACH_, XMT_NARGS_(__VA_ARGS__))(F, N, __VA_ARGS__)
#define XMT_CAT_(a, b) XMT_CAT2_(a, b)
#define XMT_CAT2_(a, b) a##b
#define XMT_NARGS_(...) XMT_NARGS2_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define XMT_NARGS2_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n
/* clang-format off */
#define XMT_EACH_1(F, N, a) F a
#define XMT_EACH_2(F, N, a, ...) F a XMT_NEXT_1(N, __VA_ARGS__)
#define XMT_EACH_3(F, N, a, ...) F a XMT_NEXT_2(N, __VA_ARGS__)
#define XMT_EACH_4(F, N, a, ...) F a XMT_NEXT_3(N, __VA_ARGS__)
#define XMT_EACH_5(F, N, a, ...) F a XMT_NEXT_4(N, __VA_ARGS__)
#define XMT_EACH_6(F, N, a, ...) F a XMT_NEXT_5(N, __VA_ARGS__)
#define XMT_EACH_7(F, N, a, ...) F a XMT_NEXT_6(N, __VA_ARGS__)
#define XMT_EACH_8(F, N, a, ...) F a XMT_NEXT_7(N, __VA_ARGS__)
#define XMT_EACH_9(F, N, a, ...) F a XMT_NEXT_8(N, __VA_ARGS__)
#define XMT_EACH_10(F, N, a, ...) F a XMT_NEXT_9(N, __VA_ARGS__)
#define XMT_EACH_11(F, N, a, ...) F a XMT_NEXT_10(N, __VA_ARGS__)
#define XMT_EACH_12(F, N, a, ...) F a XMT_NEXT_11(N, __VA_ARGS__)
#define XMT_NEXT_1(N, a) N a
#define XMT_NEXT_2(N, a, ...) N a XMT_NEXT_1(N, __VA_ARGS__)
#define XMT_NEXT_3(N, a, ...) N a XMT_NEXT_2(N, __VA_ARGS__)
#define XMT_NEXT_4(N, a, ...) N a XMT_NEXT_3(N, __VA_ARGS__)
#define XMT_NEXT_5(N, a, ...) N a XMT_NEXT_4(N, __VA_ARGS__)
#define XMT_NEXT_6(N, a, ...) N a XMT_NEXT_5(N, __VA_ARGS__)
#define XMT_NEXT_7(N, a, ...) N a XMT_NEXT_6(N, __VA_ARGS__)
#define XMT_NEXT_8(N, a, ...) N a XMT_NEXT_7(N, __VA_ARGS__)
#define XMT_NEXT_9(N, a, ...) N a XMT_NEXT_8(N, __VA_ARGS__)
#define XMT_NEXT_10(N, a, ...) N a XMT_NEXT_9(N, __VA_ARGS__)
#define XMT_NEXT_11(N, a, ...) N a XMT_NEXT_10(N, __VA_ARGS__)
/* clang-format on */

/* The real entry point's type, for every kind. */
#define XMT_PFN_TYPEDEF_(K) typedef CUresult (*xmt_pfn_##K)(XMT_TYPES(K));
XMT_ALL_SIGNATURES(XMT_PFN_TYPEDEF_)
#undef XMT_PFN_TYPEDEF_

#endif
