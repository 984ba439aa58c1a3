/* sim_internal.h: what the simulated driver's source files share.
 *
 * The simulated libcuda.so.1 is four files: sim_kernels.c (the built-in kernels and
 * their cost models), sim_driver.c (state, controls, devices, contexts, memory,
 * streams, events, graphs), sim_launch.c (modules, libraries, the linker, function
 * handles, launches, cuGetProcAddress) and sim_vmm.c (virtual memory management,
 * shareable across processes); sim_xmtcheck.c adds the shim's verification kernels.
 * This header holds the types they pass between them. Nothing here is exported:
 * cross-file helpers carry SIM_HIDDEN. */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sim_funcs.h"

/* cuda.h renames these to their newest variant by macro; the simulated driver also
 * exports the plain, older symbol, so it needs the names free. */
#undef cuGetProcAddress
#undef cuEventElapsedTime
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeGetParams
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams

#define SIM_HIDDEN __attribute__((visibility("hidden")))
#define SIM_API __attribute__((visibility("default")))

/* ---- exported entry points that cuda.h does not declare in a default build ---- */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s);
CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char uc, size_t n);
CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int ui, size_t n);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuStreamSynchronize_ptsz(CUstream s);
CUresult cuStreamQuery_ptsz(CUstream s);
CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent ev, unsigned int flags);
CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pctx);
CUresult cuStreamGetFlags_ptsz(CUstream s, unsigned int *flags);
CUresult cuStreamGetPriority_ptsz(CUstream s, int *prio);
CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st);
CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                        CUgraph *graph, const CUgraphNode **deps,
                                        const CUgraphEdgeData **edges, size_t *ndeps);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g);
CUresult cuEventRecord_ptsz(CUevent ev, CUstream s);
CUresult cuEventRecordWithFlags_ptsz(CUevent ev, CUstream s, unsigned int flags);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                             CUstream s, void **params, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
                               void **extra);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int shared, CUstream s,
                                        void **params);
CUresult cuGraphLaunch_ptsz(CUgraphExec ge, CUstream s);
CUresult cuGraphInstantiate(CUgraphExec *pexec, CUgraph g, CUgraphNode *err, char *log, size_t n);
CUresult cuGraphInstantiate_v2(CUgraphExec *pexec, CUgraph g, CUgraphNode *err, char *log,
                               size_t n);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *pexec, CUgraph g,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *p);
CUresult cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphNode *err,
                           CUgraphExecUpdateResult *res);
CUresult cuGraphAddKernelNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t nd,
                              const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphKernelNodeGetParams(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphKernelNodeSetParams(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *p);

/* ---- call counting and fault injection (sim_driver.c) ---- */
#define SIM_ENUM_X(base, ver, kind, sym) SIM_F_##sym,
#define SIM_ENUM_A(base, ver, kind, sym)
enum { SIM_FUNCS(SIM_ENUM_X, SIM_ENUM_A) SIM_NFUNCS };

/* Counts the call, then applies fault injection and, when need_init, the
 * "cuInit first" rule. Returns CUDA_SUCCESS or the error the call must return. */
SIM_HIDDEN CUresult sim_enter(int idx, int need_init);
#define SIM_ENTER(sym)                                                                             \
    do {                                                                                           \
        CUresult enter_rc_ = sim_enter(SIM_F_##sym, 1);                                            \
        if (enter_rc_ != CUDA_SUCCESS) return enter_rc_;                                           \
    } while (0)
#define SIM_ENTER_NOINIT(sym)                                                                      \
    do {                                                                                           \
        CUresult enter_rc_ = sim_enter(SIM_F_##sym, 0);                                            \
        if (enter_rc_ != CUDA_SUCCESS) return enter_rc_;                                           \
    } while (0)

/* Whether rc is one of the errors that a kernel's fault makes sticky on a real GPU. */
SIM_HIDDEN int sim_is_sticky(CUresult rc);
/* Returns rc, and when it is a sticky error (and SIMCUDA_STICKY is not 0) makes it the
 * process's sticky error: every later call that needs a context returns it. */
SIM_HIDDEN CUresult sim_fault(CUresult rc);

/* ---- the simulated device (sim_driver.c documents the numbers) ---- */
#define SIM_SM_COUNT 132
#define SIM_MAX_THREADS 1024
#define SIM_THREADS_PER_SM 2048
#define SIM_REGS_PER_SM 65536
#define SIM_SHARED_DEFAULT 49152
#define SIM_SHARED_OPTIN 232448
#define SIM_SHARED_PER_SM 233472
#define SIM_MAX_BLOCKS_PER_SM 32

/* ---- built-in kernels (sim_kernels.c) ---- */
enum { SIMK_I32, SIMK_F32, SIMK_PTR, SIMK_BYTES };
#define SIMK_MAXP 8
#define SIMK_MAX 40

typedef struct {
    int kind;
    unsigned size, align;
} simk_param;

typedef struct sim_exec sim_exec;

typedef struct simk_def {
    const char *name; /* mangled, as cuModuleGetFunction and cuFuncGetName see it */
    const char *sig;  /* readable signature, for messages */
    int nparams;
    simk_param p[SIMK_MAXP];
    int max_threads;                   /* its __launch_bounds__ (1024 when none) */
    int num_regs;                      /* registers per thread: limits threads per block */
    int static_shared;                 /* bytes of static __shared__ */
    void (*run_block)(sim_exec *e);    /* runs every thread of block e->bid */
    double (*cost)(const sim_exec *e); /* virtual ns of the whole launch */
    /* filled in by simk_layout(): */
    unsigned off[SIMK_MAXP];
    unsigned param_bytes;
} simk_def;

/* One launch as a kernel body sees it. */
struct sim_exec {
    const simk_def *k;
    unsigned grid[3], block[3], bid[3];
    unsigned dyn_shared;
    unsigned char *smem; /* static then dynamic shared memory of the current block */
    size_t smem_bytes;
    const unsigned char *params;    /* packed like the kernel's parameter buffer */
    unsigned char *base[SIMK_MAXP]; /* pointer params, resolved */
    size_t avail[SIMK_MAXP];        /* bytes from base to the end of its allocation */
    int fault;                      /* set by an out-of-bounds access: ILLEGAL_ADDRESS */
    int hang;                       /* set by a kernel that never finishes (spin) */
    const float *coef;              /* the launch's module's global sim_coef */
    unsigned char scratch[16];
};

/* the shim's verification kernels (sim_xmtcheck.c) */
SIM_HIDDEN void simx_cmp_bits_run(sim_exec *e);
SIM_HIDDEN void simx_cmp_tol_run(sim_exec *e);
SIM_HIDDEN void simx_changed_run(sim_exec *e);
SIM_HIDDEN double simx_cost(const sim_exec *e);
SIM_HIDDEN void simx_absmax_run(sim_exec *e);
SIM_HIDDEN double simx_absmax_cost(const sim_exec *e);
SIM_HIDDEN void simx_not_run(sim_exec *e);
SIM_HIDDEN void simx_spin_run(sim_exec *e);
SIM_HIDDEN double simx_spin_cost(const sim_exec *e);
SIM_HIDDEN void simx_seq_run(sim_exec *e);
SIM_HIDDEN double simx_seq_cost(const sim_exec *e);

SIM_HIDDEN void simk_layout(void);
SIM_HIDDEN int simk_count(void);
SIM_HIDDEN const simk_def *simk_get(int i);
SIM_HIDDEN const simk_def *simk_find(const char *name);

static inline int32_t simk_i32(const sim_exec *e, int i)
{
    int32_t v;
    memcpy(&v, e->params + e->k->off[i], 4);
    return v;
}
static inline float simk_f32(const sim_exec *e, int i)
{
    float v;
    memcpy(&v, e->params + e->k->off[i], 4);
    return v;
}
/* Element idx of float buffer param i, or a scratch slot (and a fault) when outside
 * the allocation: a bad config must not crash the test process. */
static inline float *simk_fp(sim_exec *e, int i, int64_t idx)
{
    if (idx < 0 || (uint64_t)(idx + 1) * 4u > e->avail[i]) {
        e->fault = 1;
        return (float *)(void *)e->scratch;
    }
    return (float *)(void *)e->base[i] + idx;
}

/* ---- shared by sim_driver.c and sim_launch.c ---- */
typedef struct simctx simctx;
typedef struct simstream simstream;

SIM_HIDDEN extern pthread_mutex_t sim_lock; /* guards every piece of driver state */
SIM_HIDDEN simctx *sim_current_ctx(void);   /* NULL when none is current */
/* The stream a handle means (0/legacy/per-thread/created), under sim_lock; NULL and
 * *err set when invalid. ptsz: the call came through a _ptsz/_ptds entry point. */
SIM_HIDDEN simstream *sim_stream_locked(CUstream h, int ptsz, CUresult *err);
SIM_HIDDEN int sim_stream_capturing(const simstream *s);

/* A launch, normalised: what a graph node keeps and what execution needs. */
typedef struct sim_launch_rec {
    const simk_def *k;
    uintptr_t coef; /* its module's global sim_coef (a float), for kernels that read it */
    unsigned grid[3], block[3], shared;
    unsigned char params[256];
} sim_launch_rec;
/* SIMCUDA_HOLD(_HELPER): whether launch r is the one held (counted, under sim_lock); then,
 * after the lock is let go, sim_hold_wait returns once the hold's file exists. */
SIM_HIDDEN int sim_hold_hit_locked(const sim_launch_rec *r);
SIM_HIDDEN void sim_hold_wait(void);

/* A kernel node's launch record from its parameters: the handle (CUfunction or CUkernel)
 * and dims checked as a launch checks them, the arguments packed (under sim_lock). */
SIM_HIDDEN CUresult sim_kernel_rec_locked(CUfunction h, const unsigned grid[3],
                                          const unsigned block[3], unsigned shared, void **params,
                                          void **extra, sim_launch_rec *r);

/* Records a launch into the stream's capture (under sim_lock). */
SIM_HIDDEN CUresult sim_capture_launch_locked(simstream *s, const sim_launch_rec *r);
/* Executes a launch on a stream now (under sim_lock): runs the kernel, advances the
 * stream's clock by its cost, counts and traces it. */
SIM_HIDDEN CUresult sim_execute_locked(simstream *s, const sim_launch_rec *r, int replay);
/* Bytes from p to the end of the allocation containing it, 0 when none (under lock). */
SIM_HIDDEN size_t sim_alloc_avail_locked(uintptr_t p);
/* Devices the process has (SIMCUDA_DEVICES). */
SIM_HIDDEN int sim_device_count(void);

/* A mapped range (sim_vmm.c): the mapping and the reservation it lies in. */
typedef struct {
    uintptr_t base;
    size_t size;
    uintptr_t resv_base;
    size_t resv_size;
} sim_range;
/* The accessible mapping containing p: 1 and *out filled, or 0 (under sim_lock). */
SIM_HIDDEN int sim_map_find_locked(uintptr_t p, sim_range *out);
/* Bytes from p to the end of the run of consecutive accessible mappings it lies in,
 * 0 when none (under sim_lock). */
SIM_HIDDEN size_t sim_map_avail_locked(uintptr_t p);
/* Cost of a launch in virtual ns, noise excluded. */
SIM_HIDDEN double sim_cost(const sim_launch_rec *r);

/* A module global: device memory of bytes, every float 1.0 (under sim_lock); freed with
 * the module. 0 when out of memory. */
SIM_HIDDEN uintptr_t sim_global_alloc_locked(size_t bytes);
SIM_HIDDEN void sim_global_free_locked(uintptr_t p);

#endif
