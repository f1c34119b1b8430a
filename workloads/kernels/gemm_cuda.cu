// gemm_classifier on CUDA: the network's weights live on the device; a
// forward pass uploads a batch, runs one tiled SGEMM (+bias, +ReLU) per
// layer and downloads the logits. See gemm_cuda.h.
//
// A classifier's first layer is short and wide in k (a batch of 32 images
// of 150,528 features into 256 units): one block per 16 x 16 outputs gives
// 32 blocks that each walk all of k, which leaves most of the device idle
// (35 ms a batch measured on an H100). So k is split into chunks, one
// block per chunk and output tile, each writing a partial sum; a second
// kernel adds the partials in chunk order, then the bias. Every output is
// still summed in a fixed order, so a run repeats bit for bit.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "models/error.h"
#include "workloads/kernels/gemm_cuda.h"

#define SL__CUDA_MAX_LAYERS 16

namespace {

constexpr int TILE = 16;
constexpr int CHUNK_MIN = 512;      // fewest k a chunk sums: amortizes its partial
constexpr int TARGET_BLOCKS = 1024; // enough blocks to fill any current device
constexpr int MAX_CHUNKS = 256;

// partial[z] = X[:, chunk z] W[chunk z, :]: X n x in, W in x out, row-major,
// chunk z = [z * chunk, (z + 1) * chunk). One thread per output; tiles of X
// and W pass through shared memory; k is summed in increasing order.
__global__ void dense_partial(const float *__restrict__ x, const float *__restrict__ w,
                              float *__restrict__ partial, int n, int in, int out, int chunk)
{
  __shared__ float xs[TILE][TILE + 1];
  __shared__ float ws[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  int kbeg = blockIdx.z * chunk;
  int kend = kbeg + chunk < in ? kbeg + chunk : in;
  float acc = 0.0f;
  for (int k0 = kbeg; k0 < kend; k0 += TILE) {
    xs[ty][tx] = row < n && k0 + tx < kend ? x[(size_t)row * in + k0 + tx] : 0.0f;
    ws[ty][tx] = k0 + ty < kend && col < out ? w[(size_t)(k0 + ty) * out + col] : 0.0f;
    __syncthreads();
    int kn = kend - k0 < TILE ? kend - k0 : TILE; // no padded terms in the sum
    for (int k = 0; k < kn; k++)
      acc += xs[ty][k] * ws[k][tx];
    __syncthreads();
  }
  if (row < n && col < out)
    partial[((size_t)blockIdx.z * n + row) * out + col] = acc;
}

// Y = act(sum over chunks of partial + b), the chunks added in order.
__global__ void dense_finish(const float *__restrict__ partial, const float *__restrict__ b,
                             float *__restrict__ y, int n, int out, int chunks, int relu)
{
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t cells = (size_t)n * out;
  if (i >= cells)
    return;
  float acc = 0.0f;
  for (int z = 0; z < chunks; z++)
    acc += partial[(size_t)z * cells + i];
  float v = acc + b[i % out];
  y[i] = relu && v < 0.0f ? 0.0f : v;
}

// The k chunk for a layer: as many chunks as fill TARGET_BLOCKS with the
// output tiles, each a multiple of TILE and at least CHUNK_MIN long.
int chunk_for(int n, int in, int out)
{
  long tiles = (long)((out + TILE - 1) / TILE) * ((n + TILE - 1) / TILE);
  long chunks = (TARGET_BLOCKS + tiles - 1) / tiles;
  chunks = chunks > MAX_CHUNKS ? MAX_CHUNKS : chunks;
  long chunk = (in + chunks - 1) / chunks;
  chunk = chunk < CHUNK_MIN ? CHUNK_MIN : chunk;
  chunk = (chunk + TILE - 1) / TILE * TILE;
  return (int)chunk;
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
  float *partial;    // the k chunks' partial sums of one layer
  size_t partial_cap; // floats partial holds
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
  cudaFree(g->partial);
  if (g->stream)
    cudaStreamDestroy(g->stream);
  free(g);
}

extern "C" void *sl_cuda_host_alloc(int device, size_t bytes)
{
  void *p = nullptr;
  if (bytes == 0 || cudaSetDevice(device) != cudaSuccess || cudaMallocHost(&p, bytes) != cudaSuccess) {
    cudaGetLastError(); // not sticky: the caller falls back to pageable memory
    return nullptr;
  }
  return p;
}

extern "C" void sl_cuda_host_free(void *p)
{
  if (p)
    cudaFreeHost(p);
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

// Room for @p floats of partial sums, grown on demand.
static int ensure_partial(sl_cuda_gemm *g, size_t floats)
{
  if (floats <= g->partial_cap)
    return 0;
  cudaFree(g->partial);
  g->partial = nullptr;
  g->partial_cap = 0;
  int rc = code_of(cudaMalloc(&g->partial, floats * sizeof(float)));
  if (rc == 0)
    g->partial_cap = floats;
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
    int in = g->dims[l], out = g->dims[l + 1];
    int chunk = chunk_for(n, in, out);
    int chunks = (in + chunk - 1) / chunk;
    size_t cells = (size_t)n * out;
    rc = ensure_partial(g, (size_t)chunks * cells);
    if (rc)
      break;
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((out + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE),
              (unsigned)chunks);
    dense_partial<<<grid, block, 0, g->stream>>>(g->act[cur], g->w[l], g->partial, n, in, out,
                                                chunk);
    dense_finish<<<(unsigned)((cells + 255) / 256), 256, 0, g->stream>>>(
        g->partial, g->b[l], g->act[1 - cur], n, out, chunks, l + 1 < g->nlayers);
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
