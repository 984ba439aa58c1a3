// A tiny kernel whose nvcc outputs (tiny.cubin, tiny.fatbin, tiny.ptx) are the unit test
// images of common/cuimage.c: tools/dev/gen_test_images.sh makes them again.
extern "C" __global__ void tiny_scale(float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
__constant__ float tiny_taps[4] = {1, 2, 3, 4};
extern "C" __global__ void tiny_taps_sum(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tiny_taps[i % 4];
}
