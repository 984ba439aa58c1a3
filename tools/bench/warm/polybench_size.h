/*
 * polybench_size.h -- forced in front of a PolyBench/GPU program (nvcc -include) by
 * tools/bench/warm/run.sh to set its problem size without editing its source: cuda.h
 * names a parameter N (cuMemsetD32Async), so -DN=1024 on the command line breaks it; here
 * the CUDA headers come first (their include guards make the program's own #include
 * <cuda.h> a no-op), then the sizes the program's header leaves alone when N is defined.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#ifdef XMT_PB_N
#define N XMT_PB_N
#endif
#ifdef XMT_PB_M
#define M XMT_PB_M
#endif
