// gemm_classifier on CUDA: the network's weights live on the device; a
// forward pass uploads a batch, runs one tiled SGEMM (+bias, +ReLU) per
// layer and downloads the logits. See gemm_cuda.h.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "models/error.h"
#include "workloads/kernels/gemm_cuda.h"

#define SL__CUDA_MAX_LAYERS 16

namespace {

constexpr int TILE = 16;

// Y = act(X W + b): X n x in, W in x out, Y n x out, row-major. One thread
// per output; tiles of X and W pass through shared memory. acc sums k in
// increasing order, then adds the bias: the CPU's order (sl__sgemm_bias).
__global__ void dense(const float *__restrict__ x, const float *__restrict__ w,
                      const float *__restrict__ b, float *__restrict__ y, int n, int in,
                      int out, int relu)
{
  __shared__ float xs[TILE][TILE + 1];
  __shared__ float ws[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < in; k0 += TILE) {
    xs[ty][tx] = row < n && k0 + tx < in ? x[(size_t)row * in + k0 + tx] : 0.0f;
    ws[ty][tx] = k0 + ty < in && col < out ? w[(size_t)(k0 + ty) * out + col] : 0.0f;
    __syncthreads();
    int kn = in - k0 < TILE ? in - k0 : TILE; // no padded terms in the sum
    for (int k = 0; k < kn; k++)
      acc += xs[ty][k] * ws[k][tx];
    __syncthreads();
  }
  if (row < n && col < out) {
    float v = acc + b[col];
    y[(size_t)row * out + col] = relu && v < 0.0f ? 0.0f : v;
  }
}

int code_of(cudaError_t e)
{
  return e == cudaSuccess ? 0 : e == cudaErrorMemoryAllocation ? SL_ENOMEM : SL_ESTATE;
}

} // namespace

struct sl_cuda_gemm {
  int device;
  int nlayers;
  int dims[SL__CUDA_MAX_LAYERS + 1];
  float *w[SL__CUDA_MAX_LAYERS], *b[SL__CUDA_MAX_LAYERS];
  float *act[2];     // device activations, cap x widest
  int cap;           // rows the activation buffers hold
  size_t widest;     // largest of dims[]
  cudaStream_t stream;
};

extern "C" int sl_cuda_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky "no device" error
    return 0;
  }
  return n;
}

extern "C" void sl_cuda_gemm_free(sl_cuda_gemm *g)
{
  if (!g)
    return;
  cudaSetDevice(g->device);
  for (int l = 0; l < g->nlayers; l++) {
    cudaFree(g->w[l]);
    cudaFree(g->b[l]);
  }
  cudaFree(g->act[0]);
  cudaFree(g->act[1]);
  if (g->stream)
    cudaStreamDestroy(g->stream);
  free(g);
}

static int upload(float **dst, const float *src, size_t count)
{
  int rc = code_of(cudaMalloc(dst, count * sizeof(float)));
  if (rc == 0)
    rc = code_of(cudaMemcpy(*dst, src, count * sizeof(float), cudaMemcpyHostToDevice));
  return rc;
}

extern "C" int sl_cuda_gemm_new(sl_cuda_gemm **out, int device, int nlayers, const int *dims,
                                const float *const *weights, const float *const *biases)
{
  *out = nullptr;
  if (nlayers < 1 || nlayers > SL__CUDA_MAX_LAYERS)
    return SL_EINVAL;
  for (int l = 0; l <= nlayers; l++)
    if (dims[l] < 1)
      return SL_EINVAL;
  if (device < 0 || device >= sl_cuda_device_count())
    return SL_ESTATE;
  sl_cuda_gemm *g = static_cast<sl_cuda_gemm *>(calloc(1, sizeof *g));
  if (!g)
    return SL_ENOMEM;
  g->device = device;
  g->nlayers = nlayers;
  memcpy(g->dims, dims, (size_t)(nlayers + 1) * sizeof *dims);
  for (int l = 0; l <= nlayers; l++)
    g->widest = (size_t)dims[l] > g->widest ? (size_t)dims[l] : g->widest;
  int rc = code_of(cudaSetDevice(device));
  if (rc == 0)
    rc = code_of(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  for (int l = 0; l < nlayers && rc == 0; l++) {
    rc = upload(&g->w[l], weights[l], (size_t)dims[l] * dims[l + 1]);
    if (rc == 0)
      rc = upload(&g->b[l], biases[l], (size_t)dims[l + 1]);
  }
  if (rc) {
    sl_cuda_gemm_free(g);
    return rc;
  }
  *out = g;
  return 0;
}

// Activation buffers for n rows, grown on demand.
static int ensure_rows(sl_cuda_gemm *g, int n)
{
  if (n <= g->cap)
    return 0;
  cudaFree(g->act[0]);
  cudaFree(g->act[1]);
  g->act[0] = g->act[1] = nullptr;
  g->cap = 0;
  size_t bytes = (size_t)n * g->widest * sizeof(float);
  int rc = code_of(cudaMalloc(&g->act[0], bytes));
  if (rc == 0)
    rc = code_of(cudaMalloc(&g->act[1], bytes));
  if (rc == 0)
    g->cap = n;
  return rc;
}

extern "C" int sl_cuda_gemm_forward(sl_cuda_gemm *g, const float *x, int n, float *y)
{
  if (!g || n < 0)
    return SL_EINVAL;
  if (n == 0)
    return 0;
  int rc = code_of(cudaSetDevice(g->device));
  if (rc == 0)
    rc = ensure_rows(g, n);
  if (rc)
    return rc;
  size_t in_bytes = (size_t)n * g->dims[0] * sizeof(float);
  rc = code_of(cudaMemcpyAsync(g->act[0], x, in_bytes, cudaMemcpyHostToDevice, g->stream));
  int cur = 0;
  for (int l = 0; l < g->nlayers && rc == 0; l++) {
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((g->dims[l + 1] + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE));
    dense<<<grid, block, 0, g->stream>>>(g->act[cur], g->w[l], g->b[l], g->act[1 - cur], n,
                                        g->dims[l], g->dims[l + 1], l + 1 < g->nlayers);
    rc = code_of(cudaGetLastError());
    cur = 1 - cur;
  }
  size_t out_bytes = (size_t)n * g->dims[g->nlayers] * sizeof(float);
  if (rc == 0)
    rc = code_of(cudaMemcpyAsync(y, g->act[cur], out_bytes, cudaMemcpyDeviceToHost, g->stream));
  if (rc == 0)
    rc = code_of(cudaStreamSynchronize(g->stream));
  return rc;
}
