/* simcuda.h: the simulated CUDA driver (a stand-in libcuda.so.1) as tests see it.
 *
 * CI has no GPU. This library implements the driver-API subset that xmatune and its
 * test programs use, on the CPU: device memory is host memory (a CUdeviceptr is the
 * host address), kernels are C functions that run at launch over every block and
 * thread, and events report a virtual time that each launch advances by a
 * deterministic cost model of its configuration. So a test can know which launch
 * configuration must win a benchmark, see which one really ran, and check outputs.
 *
 * ---------------------------------------------------------------- the device
 * SIMCUDA_DEVICES (default 1, max 8) devices, each "Simulated GPU", compute
 * capability 9.0, 132 SMs, 1024 threads per block (block dims 1024 x 1024 x 64),
 * grid 2^31-1 x 65535 x 65535, warp 32, 2048 threads and 65536 registers per SM,
 * 48 KiB shared per block (232448 with opt-in), 233472 shared per SM, 60 MiB L2,
 * SIMCUDA_TOTAL_MEM bytes of memory. cuDriverGetVersion says 13000. Calls other than
 * cuInit, cuDriverGetVersion, cuGetErrorName/String and cuGetProcAddress/_v2 return
 * CUDA_ERROR_NOT_INITIALIZED before cuInit.
 *
 * ---------------------------------------------------------------- kernels
 * Every module or library loaded holds all of these, unless its image names its own
 * (see "Images" below). Mangled names are what cuModuleGetFunction takes and
 * cuFuncGetName/cuKernelGetName give.
 * Parameters are packed as a compiler packs them (pointers 8-aligned). "regs" limits
 * threads per block to 65536/regs (rounded down to a warp); above it a launch fails
 * with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. A launch whose kernel touches memory
 * outside the allocation a pointer argument lies in returns CUDA_ERROR_ILLEGAL_ADDRESS.
 *
 *  name (mangled)                 signature / param offsets           correct configs
 *  _Z5saxpyifPKfPf                saxpy(int n, float a, const float*  any (grid-stride);
 *                                 x, float* y)  0,4,8,16; 24 bytes    y = a*x + y IN PLACE
 *  vecadd                         vecadd(const float* a, const float* any with
 *                                 b, float* out, int n) 0,8,16,24     grid.x*block.x >= n
 *  _Z9block_sumPKfPfi             block_sum(const float* in, float*   ONLY block.x == 256,
 *                                 out, int n) 0,8,16; 1024 B static   grid cdiv(n,256):
 *                                 shared                              out[b] = sum in[b*256..+256)
 *  _Z10atomic_sumPKfPfi           atomic_sum(const float* in, float*  any; out[0] += every
 *                                 out, int n) 0,8,16                  in[i] (float rounding
 *                                                                     varies by config;
 *                                                                     needs reset_to_zero)
 *  _Z7scale2dPfiif                scale2d(float* a, int w, int h,     grid.x*block.x >= w,
 *                                 float s) 0,8,12,16; regs 128 (so    grid.y*block.y >= h;
 *                                 <= 512 threads per block)           a *= s IN PLACE
 *  _Z9tile_copyILi128EEvPKfPfi    tile_copy<128>(const float* in,     any block.x <= 128
 *                                 float* out, int n) 0,8,16;          (launch bounds 128),
 *                                 __launch_bounds__(128)              grid cdiv(n,128)
 *  _Z11struct_axpy6ParamsPKfPf    struct_axpy(Params p, const float*  grid.x*block.x >= p.n;
 *                                 x, float* y), Params {int n; float  y[i*stride] +=
 *                                 alpha; int stride;} 0,16,24         alpha*x[i*stride]
 *  _Z8smem_revPKfPfi              smem_rev(const float* in, float*    reverses each block's
 *                                 out, int n) 0,8,16; dynamic shared  block.x elements: the
 *                                 >= block.x*4 bytes or it faults     result depends on
 *                                                                     block.x by design
 *  triton_poi_fused_add_0         (ptr in0, ptr in1, ptr out, i32 n)  any block.x, grid
 *                                 0,8,16,24; XBLOCK 1024 baked in     cdiv(n,1024): out=in0+in1
 *  _Z11chunk_scalePfifi           chunk_scale(float* y, int n, float  grid.x*block.x*items
 *                                 s, int items_per_thread) 0,8,12,16  >= n; y *= s IN PLACE
 *  _Z5stampPfi                    stamp(float* out, int n) 0,8        grid-stride; out[i] =
 *                                                                     stamp launches so far
 *  _Z3hopPiPKii                   hop(int* p, const int* next, int    grid.x*block.x >= n;
 *                                 n) 0,8,16                           p[i] = next[p[i]] IN
 *                                                                     PLACE; p poisoned (any
 *                                                                     negative index):
 *                                                                     ILLEGAL_ADDRESS (sticky)
 *  _Z5drainPii                    drain(int* c, int n) 0,8            grid.x*block.x >= n;
 *                                                                     c[i] -= 1 IN PLACE; c
 *                                                                     negative (poisoned):
 *                                                                     never finishes (busy
 *                                                                     until killed)
 *  _Z4markPiS_i                   mark(int* p, int* seen, int n)      grid.x*block.x >= n;
 *                                 0,8,16                              seen[(unsigned)p[i] % n]
 *                                                                     = 1, p[i] = (p[i] + 1)
 *                                                                     % (n/2) IN PLACE; p
 *                                                                     poisoned: writes
 *                                                                     seen[n-1] (a power of
 *                                                                     two n), never written
 *                                                                     from p in [0, n/2)
 *  _Z7fill_m1Pii                  fill_m1(int* out, int n) 0,8        grid.x*block.x >= n (one
 *                                                                     thread per element):
 *                                                                     out[i] = -1, all bytes
 *                                                                     0xFF
 *  _Z9own_blockPfii               own_block(float* out, int n, int    ONLY block.x == own,
 *                                 own) 0,8,12                         grid cdiv(n, own):
 *                                                                     out[i] = i; any other
 *                                                                     block.x writes before
 *                                                                     out: ILLEGAL_ADDRESS
 *                                                                     (sticky)
 *  _Z4spinPfii                    spin(float* out, int n, int         grid-stride out[i] = 1;
 *                                 hang_block) 0,8,12                  block.x == hang_block
 *                                                                     then never finishes
 *                                                                     (busy until killed)
 *  _Z13scale_nocheckPfi            scale_nocheck(float* y, int n) 0,8  ONLY grid.x*block.x ==
 *                                 (n not read: no bounds check)       n: y = 2*y + 1 IN
 *                                                                     PLACE; more threads write
 *                                                                     past y: ILLEGAL_ADDRESS
 *                                                                     past its allocation
 *  _Z9ref_accumRfi                ref_accum(float& y, int n) 0,8      any with grid.x*block.x
 *                                                                     >= n; y[i] += 1 IN PLACE
 *  _Z10cast_accumILc1EEvPfil      cast_accum<(char)1>(float* y, int   the same; the cookie
 *                                 n, long cookie) 0,8,16              is not read
 *  _Z10pair_accum4PairPf          pair_accum(Pair p, float* y), Pair  grid.x*block.x >= p.n;
 *                                 {int n; float add;} 0,8             y[i] += p.add IN PLACE
 *  _Z9pack_axpy4Pack              pack_axpy(Pack p), Pack {const      grid.x*block.x >= p.n;
 *                                 float* x; float* y; int n; float    y[i] += p.a*p.x[i] IN
 *                                 a;} 0 (24 bytes): its pointers      PLACE; a pointer into
 *                                 inside the struct                   memory the process does
 *                                                                     not have: ILLEGAL_ADDRESS
 *  scale_n64 (extern "C")         scale_n64(float* y, unsigned long   grid.x*block.x >= n;
 *                                 long n, float a) 0,8,16             y[i] *= a IN PLACE
 *  _Z10coef_scalePfPKfi           coef_scale(float* y, const float*   grid.x*block.x >= n;
 *                                 x, int n) 0,8,16                    y[i] = x[i] * sim_coef
 *                                                                     (its module's global)
 *  _Z8tex_readPfyi                tex_read(float* y, unsigned long    grid.x*block.x >= n;
 *                                 long tex, int n) 0,8,16             y[i] = i + (tex & 0xff)
 *  _Z7row_maxPKfPfi               row_max(const float* x, float*      ONLY grid.x == rows (one
 *                                 out, int ncols) 0,8,16; 4096 B      block per row), any
 *                                 static shared                       block.x: out[b] = max of
 *                                                                     row b; a block past the
 *                                                                     rows: ILLEGAL_ADDRESS
 *  _Z7row_sumPKfPfi               row_sum(const float* x, float*      the same, out[b] = sum
 *                                 out, int ncols) 0,8,16; 4096 B      of row b: strided float
 *                                 static shared                       partials, then a halving
 *                                                                     tree, so its rounding
 *                                                                     follows block.x (bitwise
 *                                                                     stable for one block.x)
 *  _Z10step_scalePfPKfii          step_scale(float* y, const float*   grid.x*block.x >= n;
 *                                 x, int n, int step) 0,8,16,20       y[i] = x[i] * 2 + step
 *                                                                     (step: a call counter)
 *  xmt_cmp_bits, xmt_cmp_tol,     the shim's verification kernels     sim_xmtcheck.c: the
 *  xmt_changed                    (shim/session/gpucheck/             same results as the PTX
 *                                 kernels.cu)
 *
 * All kernels index with x only (except scale2d): block.y/z > 1 repeats the work,
 * which is wrong for in-place kernels, as on a GPU.
 *
 * ---------------------------------------------------------------- cost model
 * Virtual nanoseconds of a launch (before noise), with T = threads per block,
 * B = blocks, SAT = 132 * 2048 = 270336 resident threads,
 * pen(v, opt, k) = 1 + k * log2(v / opt)^2:
 *
 *   cost = 2000 + 0.25 * B + t_elem * elems * shape * max(1, SAT / active)
 *   active = min(B * T, useful threads); for the tiled kernels (block_sum tile 256,
 *   tile_copy 128, triton 1024, row_max and row_sum 256) active = min(B * tile, n),
 *   whatever T is
 *
 *   kernel         elems   t_elem  shape                                useful
 *   saxpy          n       0.010   pen(T, 256, 0.15)                    n
 *   vecadd         n       0.012   pen(T, 128, 0.15)                    n
 *   block_sum      n       0.010   pen(T, 512, 0.15)  (fastest = WRONG) tiled, 256
 *   atomic_sum     n       0.020   pen(T, 512, 0.15)                    n
 *   scale2d        w*h     0.010   pen(T, 256, 0.15) + 0.1*log2(bx/32)^2
 *                                  (best 32 x 8)        min(gx*bx,w)*min(gy*by,h)
 *   tile_copy      n       0.008   pen(T, 64, 0.15)                     tiled, 128
 *   struct_axpy    p.n     0.010   pen(T, 128, 0.15)                    p.n
 *   smem_rev       n       0.010   pen(T, 256, 0.15), whole cost times
 *                                  (1 + 0.5 * shared / 49152)           n
 *   triton add     n       0.010   pen(T, 128, 0.15)                    tiled, 1024
 *   own_block,spin n       0.010   pen(T, 256, 0.15)                    n
 *     scale_nocheck
 *   row_max,       B*ncols 0.010   pen(T, 256, 0.15)                    tiled, 256
 *     row_sum
 *   step_scale     n       0.010   pen(T, 256, 0.15)                    n
 *   coef_scale,    n       0.010   pen(T, 256, 0.15)                    n
 *     tex_read, stamp, ref_accum, cast_accum, pair_accum and pack_axpy (p.n),
 *     scale_n64, hop, drain, mark (n)
 *   fill_m1        G       0.010   pen(T, 256, 0.15)                    G
 *     (G = grid.x * block.x: the threads it launches, whatever n is)
 *   chunk_scale    n       0.010   pen(T, 256, 0.15) * pen(items, 4, 0.1)
 *                                  (active = min(B * T * items, n))     n
 *
 * So with grid = cdiv(n, T) (cdiv(n, tile) for the tiled kernels, cdiv(n, T * items)
 * for chunk_scale; the rows for row_max and row_sum), at any n, every kernel has one
 * smooth optimum (saxpy 256, vecadd 128, block_sum 512 (a wrong config: only 256 is
 * right), atomic_sum 512, tile_copy 64, struct_axpy 128, smem_rev 256 with shared = 1024,
 * triton 128, scale2d 32x8, chunk_scale 256 with 4 items, row_max and row_sum 256,
 * step_scale 256); the exact figure of any launch is
 * simcuda_cost_ns(). Copies and memsets cost 500 ns + 1 ns per 1000 bytes.
 *
 * Each stream has a virtual clock (ns) that its launches, copies and memsets advance;
 * cuEventRecord stamps the stream's clock; cuEventElapsedTime gives (end - start) in
 * ms; cuStreamWaitEvent moves a stream's clock up to the event's stamp. Execution is
 * synchronous at the call. Stream 0 is the context's legacy stream, or the calling
 * thread's per-thread stream through a _ptsz/_ptds entry point; CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD name them explicitly.
 *
 * ---------------------------------------------------------------- behaviour worth knowing
 * - Handles: a CUkernel (cuLibraryGetKernel) is a different pointer from any CUfunction.
 *   cuFuncGetName/cuFuncGetParamInfo (and cuFuncGetModule) on a CUkernel cast to
 *   CUfunction fail with CUDA_ERROR_INVALID_HANDLE, as on the real driver, and the
 *   cuKernel* calls (cuKernelGetLibrary among them) refuse a CUfunction; launches,
 * cuFuncGetAttribute, cuFuncSetAttribute and the occupancy calls take either kind. After
 *   cuModuleUnload/cuLibraryUnload the handles are invalid (INVALID_HANDLE), and the
 *   next load reuses the lowest free slot, so it hands out the same handle values.
 *   A library's CUmodule (cuLibraryGetModule, and cuFuncGetModule of the CUfunction that
 *   cuKernelGetFunction gives: the runtime's cudaGetFuncBySymbol) is a handle of its
 *   own, not the CUlibrary, as on the real driver; the cuModule* calls take it.
 * - Launch checks: dims of 0 or past the device limits, T > 1024 or T > the kernel's
 *   launch bounds -> CUDA_ERROR_INVALID_VALUE; T past the register limit ->
 *   CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; static + dynamic shared > 48 KiB without
 *   cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) (or above it) -> INVALID_VALUE;
 *   both or neither of kernelParams/extra (for a kernel with parameters), or an extra
 *   buffer smaller than the kernel's parameters -> INVALID_VALUE; cooperative launch of
 *   more blocks than fit at once -> CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; a cluster
 *   dimension that does not divide the grid -> CUDA_ERROR_INVALID_CLUSTER_SIZE.
 * - Capture: cuStreamBeginCapture_v2 makes the stream record kernel launches, async
 *   copies/memsets and event records instead of running them; cuStreamEndCapture gives
 *   the graph; cuGraphInstantiateWithFlags + cuGraphLaunch replay them (each replayed
 *   kernel counts as a launch and is traced with " replay"). Stream-ordered allocation
 *   runs at once. "Unsafe" calls (cuMemAlloc_v2, cuMemFree_v2, synchronous copies and
 *   memsets, cuCtxSynchronize) follow cudaStreamCaptureMode: forbidden ones return
 *   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate the capture, whose
 *   cuStreamEndCapture then returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
 *   cuStreamSynchronize/Query on a capturing stream do the same.
 * - Memory: a CUdeviceptr is host memory filled with 0xA5, each allocation its own
 *   pages (page-aligned, so 256-aligned as on the real driver). cuMemFree_v2 of
 *   anything but an allocation's start, and copies/memsets past an allocation's end,
 *   return CUDA_ERROR_INVALID_VALUE.
 * - Legacy IPC: cuIpcGetMemHandle (of an allocation's start; else INVALID_VALUE) moves
 *   that cuMemAlloc allocation's bytes into a memfd mapped MAP_SHARED where they were,
 *   and the handle names that descriptor (pid, fd, inode). cuIpcOpenMemHandle in
 *   another process of the same user opens it through /proc/<pid>/fd and maps it at an
 *   address of its own, sharing the bytes; in the exporting process it returns
 *   CUDA_ERROR_INVALID_CONTEXT, and after the exporter freed the allocation (or exited)
 *   CUDA_ERROR_INVALID_VALUE. The mapping is an allocation there (address range, bounds,
 *   simcuda_live_allocations) that cuMemFree refuses and cuIpcCloseMemHandle unmaps.
 * - Sticky faults: a kernel that touches memory outside its allocations returns
 *   CUDA_ERROR_ILLEGAL_ADDRESS, and from then on every call of the process that needs a
 *   context (launches, copies, memsets, allocation and free, cuCtxSynchronize,
 *   cuStreamSynchronize/Query, events, module calls, ...) returns that same error, as
 *   on a real GPU ("the process must be terminated"); only device queries
 *   (cuDeviceGet*, cuDevicePrimaryCtxGetState), error names, cuDriverGetVersion,
 *   cuGetProcAddress and cuCtxGet/Set/Push/PopCurrent still answer. Only a new process
 *   recovers (another process is unaffected). The same holds for an error injected by
 *   SIMCUDA_FAIL into any call when it is ILLEGAL_ADDRESS, MISALIGNED_ADDRESS,
 *   ILLEGAL_INSTRUCTION, LAUNCH_FAILED, HARDWARE_STACK_ERROR, INVALID_PC,
 *   INVALID_ADDRESS_SPACE or ASSERT; other injected errors (OUT_OF_MEMORY,
 *   LAUNCH_OUT_OF_RESOURCES, INVALID_VALUE, ...) fail their one call only.
 *   SIMCUDA_STICKY=0 turns stickiness off (a fault fails its own launch only). To make
 *   one config of a kernel fault use own_block (faults unless block.x == own), or
 *   SIMCUDA_FAIL=cuLaunchKernel:N:CUDA_ERROR_ILLEGAL_ADDRESS for the Nth launch.
 * - Images: an image that begins "simcuda-image v1\n" holds only the kernels it names,
 *   one mangled name a line, up to an empty line or the end of the text (what follows
 *   is ignored); cuModuleGetFunction/cuLibraryGetKernel of another kernel return
 *   CUDA_ERROR_NOT_FOUND, and a name the driver has no kernel for makes the load fail
 *   with CUDA_ERROR_INVALID_IMAGE. Any other image holds every kernel. The kernels are a
 *   function of the image's bytes alone, so a second process loading the same bytes
 *   gets the same kernels. cuModuleLoadData/Ex, cuModuleLoadFatBinary and
 *   cuLibraryLoadData read the image up to its NUL (at most 64 KiB); cuModuleLoad and
 *   cuLibraryLoadFromFile read the file (one that cannot be read holds every kernel:
 *   tests load made-up paths). cuLinkCreate/AddData/AddFile/Complete/Destroy:
 *   cuLinkComplete's image (owned by the link state) is a header naming every kernel
 *   any added image holds. "No image": load with simcuda_module_load_unseen (below),
 *   which goes through no CUDA entry point, so a shim wrapping the load calls never
 *   sees the image of that module's kernels.
 * - Shareable memory (virtual memory management, sim_vmm.c): cuMemCreate makes a memfd
 *   (size a multiple of the 2 MiB granularity, cuMemGetAllocationGranularity; type
 *   PINNED on a device; requestedHandleTypes NONE or POSIX_FILE_DESCRIPTOR, others
 *   NOT_SUPPORTED), filled with 0xA5. cuMemExportToShareableHandle (POSIX_FILE_DESCRIPTOR
 *   only; NOT_PERMITTED when not requested at creation) writes a close-on-exec dup of it
 *   into an int: hand it to another process with SCM_RIGHTS. There
 *   cuMemImportFromShareableHandle((void *)(intptr_t)fd) dups it again (the caller keeps
 *   and closes its own). cuMemAddressReserve(ptr, size, align, addr, 0) reserves
 *   inaccessible address space: at addr when addr is given, aligned and the whole range
 *   there is free (mmap MAP_FIXED_NOREPLACE), else anywhere (aligned to max(align, 2
 *   MiB)): *ptr == addr says the hint was honoured. cuMemMap mmaps the memfd MAP_SHARED
 *   at the reserved address (ptr, size, offset multiples of 2 MiB; overlapping a mapping:
 *   CUDA_ERROR_ALREADY_MAPPED), so writes in one process are seen by every process that
 *   mapped it; cuMemSetAccess must then cover whole mappings, and only then is the
 *   range memory to copies, memsets, kernels' bounds checks (consecutive mappings are one
 *   span), cuMemGetAddressRange (the mapping holding the pointer) and
 *   cuPointerGetAttribute (RANGE_START_ADDR/RANGE_SIZE: the whole reservation, as the
 *   real driver says for expandable segments). cuMemUnmap takes whole mappings back to
 *   reserved space; cuMemRelease drops the handle (mapped memory lives until unmapped);
 *   cuMemAddressFree takes an exact reservation without mappings. cuMemGetInfo and
 *   simcuda_live_allocations do not count this memory (simcuda_live_mappings does).

 * - cuGetProcAddress (4 arguments, PFN_cuGetProcAddress_v11030) and cuGetProcAddress_v2
 *   map (base name, cudaVersion, flags) to the newest variant whose version <=
 *   cudaVersion; flags CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM picks the
 *   _ptsz/_ptds variant where there is one. sim_funcs.h is the table.
 *
 * ---------------------------------------------------------------- switches
 * Environment, read once at the first cuInit (each has a run-time function below):
 *   SIMCUDA_DEVICES=N           number of devices (0: cuInit fails CUDA_ERROR_NO_DEVICE)
 *   SIMCUDA_HANG=kernel:block_x:ms[:nth]: a launch of that kernel (mangled name) with
 *     that block.x keeps the device busy for ms of wall time: cuStreamQuery returns
 *     CUDA_ERROR_NOT_READY, and the synchronizing calls sleep, until then (a candidate
 *     that takes far too long, for the tuner's watchdog). ms "forever": busy until the
 *     process is killed (the synchronizing calls never return), as after the spin
 *     kernel's hanging config. Applies in every process (a property of the config). nth
 *     (default 1): only that config's nth launch in the process and those after it hang,
 *     the earlier ones run as usual (a config that hangs in a timed round, not in its
 *     verification or warm-up: count its launches in the trace). Events, as on a GPU (and
 *     after spin's hang too): one recorded before the hanging launch (in the process's
 *     order of calls, on any stream: the hang is device-wide) has completed; one recorded
 *     after it says NOT_READY to cuEventQuery and waits in cuEventSynchronize while the
 *     hang lasts, so that a run's end event tells whether it is the one that hangs or
 *     came before it.
 *   SIMCUDA_FAULT_AT=kernel:block_x:nth: that config's nth launch in the process (counted
 *                               like SIMCUDA_HANG's nth) faults with ILLEGAL_ADDRESS (sticky)
 *                               instead of running: unlike SIMCUDA_FAIL's count of every
 *                               launch, the shim's own comparison kernels do not move it
 *   SIMCUDA_FAULT_AT_HELPER=kernel:block_x:nth: the same, in the trial helper only (each
 *                               helper counts its own launches); it replaces
 *                               SIMCUDA_FAULT_AT there
 *   SIMCUDA_HANG_UNTIL=path     such a hang lasts until path exists instead of ms: a test
 *                               creates the file once it has seen what it waits for (a
 *                               message, a claim), so no wait depends on the machine's speed
 *   SIMCUDA_TEARDOWN_AT_EXIT=path[:sync]: the CUDA runtime's exit handler: at exit every
 *                               later call fails CUDA_ERROR_DEINITIALIZED and path is made.
 *                               Registered (atexit) at the program's first context, as the
 *                               runtime registers its own, so handlers registered later run
 *                               before it; :sync registers it at the first cuCtxSynchronize
 *                               instead (after the launches). Main role only
 *   SIMCUDA_HOLD=kernel:block_x:nth:path: that launch (counted as SIMCUDA_FAULT_AT counts)
 *                               runs, and its call returns only once path exists: the
 *                               program's thread is held there (the driver's lock is not);
 *                               SIMCUDA_HOLD_HELPER: the same in a trial helper only (its
 *                               thread held: no heartbeat while held), replacing SIMCUDA_HOLD
 *   SIMCUDA_HELPER_INIT_MS=ms   cuInit in a trial helper takes ms of wall time, as the real
 *                               driver's start and context do (about 550 ms on an H100):
 *                               what each helper start costs, for measurements
 *   SIMCUDA_ATOMIC_REVERSED_IN_HELPER=1: atomic_sum adds in the other order in the trial
 *                               helper (a process named xmatune-trial): its float result
 *                               differs there by rounding from the program's own run of the
 *                               same config, as float atomics do from run to run on a GPU
 *   SIMCUDA_STICKY=0            faults are not sticky (see "Sticky faults" above)
 *   (in SIMCUDA_FAIL and SIMCUDA_FAIL_HELPER, the error "exit" ends the process at that
 *   call instead, _exit(9): a trial helper that dies in the middle of a session)
 *   SIMCUDA_COMPUTE_MODE=N      CU_DEVICE_ATTRIBUTE_COMPUTE_MODE answers N (a CUcomputemode;
 *                               default 0, Default); read at each query
 *   SIMCUDA_MPS=1               CU_DEVICE_ATTRIBUTE_MPS_ENABLED answers 1 (as under MPS)
 *   SIMCUDA_UNIQUE_HANDLES=1    a destroyed executable graph's handle is never handed out
 *                               again (default: its memory is freed, and malloc may give
 *                               the next one the same address)
 *   SIMCUDA_POINTER_KIND=host|managed  cuPointerGetAttribute says every allocation is host
 *                               memory (CU_MEMORYTYPE_HOST), or managed (IS_MANAGED 1): memory
 *                               protect: auto refuses to snapshot
 *   SIMCUDA_RANGE_SHORT=N       cuMemGetAddressRange reports every allocation larger than N
 *                               bytes N bytes short (a range that misses the allocation's
 *                               end: memory a launch writes that protect: auto does not
 *                               stage for the trial helper)
 *   SIMCUDA_ROLE=main|helper    the process's role; unset: helper when XMATUNE_HELPER is
 *                               set to anything but "" or "0" (what whoever spawns a
 *                               trial helper puts in its environment), else main.
 *                               SIMCUDA_FAIL, SIMCUDA_TRACE and SIMCUDA_CAPTURING apply
 *                               to the main role only (the program), so that tests keep
 *                               meaning the program when a helper loads this driver too;
 *                               a helper reads SIMCUDA_FAIL_HELPER and
 *                               SIMCUDA_TRACE_HELPER (same syntax) instead.
 *                               simcuda_is_helper() tells.
 *   SIMCUDA_FAIL=fn:nth:err,... make the nth call (1-based; 0 = every call) of fn return
 *                               err (a number or a CUDA_ERROR_* name). fn is an exported
 *                               symbol (cuMemAlloc_v2) or a base name, which covers all
 *                               its variants (cuLaunchKernel = cuLaunchKernel and
 *                               cuLaunchKernel_ptsz). The call does nothing else.
 *   SIMCUDA_CAPTURING=1         every stream reports CU_STREAM_CAPTURE_STATUS_ACTIVE from
 *                               cuStreamIsCapturing/GetCaptureInfo; nothing is captured
 *   SIMCUDA_NOISE=f             each launch's cost times 1 + f*u, u uniform in [-1, 1),
 *                               a fixed sequence from SIMCUDA_NOISE_SEED (default 1) per
 *                               launch config (kernel, grid, block, shared): its nth launch
 *                               draws the same u whatever else ran before it
 *   SIMCUDA_NOISE_OUTLIER=N     every Nth executed launch costs 100 times more
 *   SIMCUDA_NOISE_OUTLIER_AT=kernel:block_x:nth
 *                               the nth executed launch of that kernel (mangled name) with
 *                               that block.x costs 100 times more, once
 *   SIMCUDA_TRACE=path          append one line per executed kernel:
 *                               "<mangled> grid=X,Y,Z block=X,Y,Z shared=N cost_ns=C[ replay]";
 *                               a helper's lines (SIMCUDA_TRACE_HELPER, which may name
 *                               the same file) carry " helper=<pid>" before " replay"
 *   SIMCUDA_FUNC_LOADS=path     append "<pid> <kernel>" for every cuFuncLoad (functions
 *                               are always loaded here; this says which a process asked
 *                               for explicitly), in every role
 */
#ifndef SIMCUDA_H
#define SIMCUDA_H

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMCUDA_DRIVER_VERSION 13000
#define SIMCUDA_DEVICE_NAME "Simulated GPU"
#define SIMCUDA_TOTAL_MEM ((size_t)150754820096ull) /* 143771 MiB, as an H200 */
#define SIMCUDA_MAX_DEVICES 8
#define SIMCUDA_VMM_GRANULARITY ((size_t)2 << 20) /* cuMemGetAllocationGranularity: 2 MiB */

/* What the last executed kernel was (see simcuda_get_stats). */
struct simcuda_launch_info {
    char kernel[128];
    unsigned grid[3], block[3], shared;
    double cost_ns; /* with noise */
};

struct simcuda_stats {
    unsigned long long launches;       /* kernels executed, graph replays included */
    unsigned long long captured;       /* launches recorded into a stream capture */
    unsigned long long graph_launches; /* cuGraphLaunch calls that ran */
    unsigned long long allocs, frees;  /* successful allocations and frees, async ones too */
    long live_allocations;
    size_t live_bytes;
    unsigned long long faults_injected;
    struct simcuda_launch_info last;
};

/* Adds a fault rule (as one SIMCUDA_FAIL item): the nth call (1-based; 0 = every call)
 * of fn returns err. Returns 0, or -1 when fn names no entry point or the table (32
 * rules) is full. Rules count calls from the moment they are added. */
int simcuda_set_fail(const char *fn, int nth, CUresult err);
/* Removes every fault rule. */
void simcuda_reset_faults(void);
/* SIMCUDA_CAPTURING at run time: nonzero makes every stream report capturing. */
void simcuda_set_capturing(int on);
/* SIMCUDA_NOISE at run time: fraction 0 turns noise off. */
void simcuda_set_noise(double fraction, unsigned seed);
/* SIMCUDA_NOISE_OUTLIER at run time: every Nth executed launch costs 100x; 0 = off. */
void simcuda_set_outlier(unsigned every);
/* SIMCUDA_TRACE at run time; NULL or "" stops tracing. */
void simcuda_set_trace(const char *path);
/* Total kernels executed (graph replays included; captured launches excluded). */
unsigned long long simcuda_launch_count(void);
/* Calls so far of fn (a symbol, or a base name summing its variants), failed ones
 * included. */
unsigned long long simcuda_calls(const char *fn);
/* Sets every call counter to 0. */
void simcuda_reset_calls(void);
/* Allocations not freed yet (cuMemAlloc and stream-ordered ones; not mappings). */
long simcuda_live_allocations(void);
/* cuMemMap mappings not unmapped yet. */
long simcuda_live_mappings(void);
/* SIMCUDA_STICKY at run time: 0 keeps later faults from becoming sticky (one that
 * already is stays). */
void simcuda_set_sticky(int on);
/* The process's sticky error, CUDA_SUCCESS while there is none. */
CUresult simcuda_sticky_error(void);
/* Nonzero in a process with the helper role (SIMCUDA_ROLE, XMATUNE_HELPER), as decided
 * at the first cuInit. */
int simcuda_is_helper(void);
/* A snapshot of the counters above. */
void simcuda_get_stats(struct simcuda_stats *out);
/* Loads a module from image (as cuModuleLoadData does) through no CUDA entry point, so
 * that no shim wrapping the load calls sees its image: its kernels have "no image". */
CUresult simcuda_module_load_unseen(CUmodule *m, const void *image);

/* Every module and library has one global, sim_coef (a float, 1.0 at load), that the
 * coef_scale kernel reads; cuModuleGetGlobal and cuLibraryGetGlobal give its address. This
 * gives it past any shim (a program that asked before the shim was there). */
CUresult simcuda_global_unseen(CUdeviceptr *dp, size_t *bytes, void *module_or_library,
                               const char *name);
/* The cost model's virtual ns of launching kernel `name` (mangled) with this config
 * and these arguments (kernelParams form), noise excluded; -1 for an unknown kernel. */
double simcuda_cost_ns(const char *name, const unsigned grid[3], const unsigned block[3],
                       unsigned shared, void **kernelParams);

#ifdef __cplusplus
}
#endif
#endif
