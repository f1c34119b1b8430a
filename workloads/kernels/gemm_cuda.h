/**
 * @file gemm_cuda.h
 * @brief The CUDA side of gemm_classifier, callable from C.
 *
 * Built from gemm_cuda.cu when CMake finds a CUDA compiler, from
 * nocuda/gemm_cuda.c otherwise (no device, every call SL_ESTATE), so callers
 * never test for CUDA at compile time.
 *
 * A handle holds one network's weights on one device plus activation
 * buffers; like a kernel instance it belongs to one thread.
 */
#ifndef SL_GEMM_CUDA_H
#define SL_GEMM_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_cuda_gemm sl_cuda_gemm;

/** @brief CUDA devices present; 0 when cudaGetDeviceCount fails (no GPU,
 *         no driver) or when built without CUDA. */
int sl_cuda_device_count(void);

/**
 * @brief Uploads a network of @p nlayers dense layers to @p device.
 *
 * Layer l maps dims[l] inputs to dims[l+1] outputs with weights[l]
 * (dims[l] x dims[l+1], row-major) and biases[l] (dims[l+1]); ReLU follows
 * every layer but the last. The arrays are copied: the caller keeps them.
 * @return 0 with *out set (free with sl_cuda_gemm_free()), SL_EINVAL,
 *         SL_ENOMEM (device memory), or SL_ESTATE (no CUDA, CUDA error).
 */
int sl_cuda_gemm_new(sl_cuda_gemm **out, int device, int nlayers, const int *dims,
                     const float *const *weights, const float *const *biases);

/**
 * @brief Runs @p n rows (x: n x dims[0], row-major, host memory) through the
 *        network into y (n x dims[nlayers], host memory). Synchronous.
 *
 * Each output is summed in float over chunks of k (each in increasing k, the
 * chunks then added in order), then biased: a fixed order, so a run repeats
 * bit for bit, and the CPU's sum agrees within 1e-3 relative (the GPU may fuse
 * multiply-adds).
 * @return 0, SL_EINVAL, SL_ENOMEM or SL_ESTATE.
 */
int sl_cuda_gemm_forward(sl_cuda_gemm *g, const float *x, int n, float *y);

/** @brief Frees @p g and its device memory. NULL is fine. */
void sl_cuda_gemm_free(sl_cuda_gemm *g);

/**
 * @brief @p bytes of page-locked host memory on @p device's behalf, or NULL
 *        (no CUDA, no memory): a batch staged there crosses to the GPU by
 *        DMA, where one in pageable memory is copied through the driver's
 *        own staging buffers by the CPU first. Free with sl_cuda_host_free().
 */
void *sl_cuda_host_alloc(int device, size_t bytes);

/** @brief Frees what sl_cuda_host_alloc() gave. NULL is fine. */
void sl_cuda_host_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
