/* Stand-ins for gemm_cuda.cu when sluice is built without CUDA: no device,
 * every call refused with SL_ESTATE, so the kernel falls back to the CPU or
 * to emulation. */
#include <stddef.h>

#include "models/error.h"
#include "workloads/kernels/gemm_cuda.h"

int sl_cuda_device_count(void)
{
  return 0;
}

int sl_cuda_gemm_new(sl_cuda_gemm **out, int device, int nlayers, const int *dims,
                     const float *const *weights, const float *const *biases)
{
  (void)device, (void)nlayers, (void)dims, (void)weights, (void)biases;
  *out = NULL;
  return SL_ESTATE;
}

int sl_cuda_gemm_forward(sl_cuda_gemm *g, const float *x, int n, float *y)
{
  (void)g, (void)x, (void)n, (void)y;
  return SL_ESTATE;
}

void sl_cuda_gemm_free(sl_cuda_gemm *g)
{
  (void)g;
}

void *sl_cuda_host_alloc(int device, size_t bytes)
{
  (void)device, (void)bytes;
  return NULL;
}

void sl_cuda_host_free(void *p)
{
  (void)p;
}
