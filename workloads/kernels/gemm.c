/* gemm_classifier: a stack of dense layers with seeded weights, run over a
 * batch of rows as matrices, on the CPU, on CUDA, or emulated.
 *
 * The network: dims = {in, hidden x (layers-1), classes}; layer l computes
 * relu(x W_l + b_l) (no ReLU after the last). `in` is the feature count of
 * the first row the instance sees; every later row must match. Output rows
 * are the logits: an F32_CHW header (width = classes, height = channels = 1)
 * and `classes` floats. Consumers take the argmax themselves. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_cuda.h"
#include "internal.h"
#include "models/error.h"

#define SL__GEMM_MAX_LAYERS 16
/* Weights past this many floats (1 GiB) mean rows far bigger than a model
 * input: refuse rather than allocate. */
#define SL__GEMM_MAX_WEIGHTS ((size_t)1 << 28)
#define SL__GEMM_CPU_BATCH 64
#define SL__GEMM_GPU_BATCH 256

/* ---- SGEMM ------------------------------------------------------------------ */

/* Four floats as one SSE register. A GCC/Clang vector type rather than
 * auto-vectorisation, because the compiler's choice swings by 2x between
 * -O2 and -O3 on this loop; the arithmetic is still one multiply and one add
 * per term, in k order. */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p)
{
  v4f v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void store4(float *p, v4f v)
{
  memcpy(p, &v, sizeof v);
}

/* y[4 rows][8 cols] += x[4 rows][kn] * w[kn][8 cols]: 8 vector accumulators,
 * named so they stay in registers at any -O level, while the k loop streams
 * one row of w. */
static void micro4x8(size_t kn, const float *restrict x, size_t ldx,
                     const float *restrict w, size_t ldw, float *restrict y, size_t ldy)
{
  float *y0 = y, *y1 = y + ldy, *y2 = y + 2 * ldy, *y3 = y + 3 * ldy;
  const float *x0 = x, *x1 = x + ldx, *x2 = x + 2 * ldx, *x3 = x + 3 * ldx;
  v4f a0 = load4(y0), b0 = load4(y0 + 4), a1 = load4(y1), b1 = load4(y1 + 4);
  v4f a2 = load4(y2), b2 = load4(y2 + 4), a3 = load4(y3), b3 = load4(y3 + 4);
  for (size_t k = 0; k < kn; k++) {
    v4f wa = load4(w + k * ldw), wb = load4(w + k * ldw + 4);
    v4f s0 = {x0[k], x0[k], x0[k], x0[k]}, s1 = {x1[k], x1[k], x1[k], x1[k]};
    v4f s2 = {x2[k], x2[k], x2[k], x2[k]}, s3 = {x3[k], x3[k], x3[k], x3[k]};
    a0 += s0 * wa, b0 += s0 * wb;
    a1 += s1 * wa, b1 += s1 * wb;
    a2 += s2 * wa, b2 += s2 * wb;
    a3 += s3 * wa, b3 += s3 * wb;
  }
  store4(y0, a0), store4(y0 + 4, b0), store4(y1, a1), store4(y1 + 4, b1);
  store4(y2, a2), store4(y2 + 4, b2), store4(y3, a3), store4(y3 + 4, b3);
}

/* The general edge case: @p rows x @p cols, any sizes. */
static void micro_any(size_t rows, size_t cols, size_t kn, const float *restrict x,
                      size_t ldx, const float *restrict w, size_t ldw,
                      float *restrict y, size_t ldy)
{
  for (size_t r = 0; r < rows; r++)
    for (size_t k = 0; k < kn; k++) {
      float a = x[r * ldx + k];
      for (size_t j = 0; j < cols; j++)
        y[r * ldy + j] += a * w[k * ldw + j];
    }
}

void sl__sgemm_bias(size_t n, size_t in, size_t out, const float *x, const float *w,
                    const float *b, bool relu, float *y)
{
  /* A KB x JB panel of w (128 KiB) stays in L2 while every row of the batch
   * passes over it. Blocks are visited in increasing k, so each y element
   * is still summed in plain k order. */
  enum { JB = 256, KB = 128 };
  memset(y, 0, n * out * sizeof *y);
  for (size_t j0 = 0; j0 < out; j0 += JB) {
    size_t jn = out - j0 < JB ? out - j0 : JB;
    for (size_t k0 = 0; k0 < in; k0 += KB) {
      size_t kn = in - k0 < KB ? in - k0 : KB;
      const float *wp = w + k0 * out + j0;
      size_t i = 0;
      for (; i + 4 <= n; i += 4) {
        size_t j = 0;
        for (; j + 8 <= jn; j += 8)
          micro4x8(kn, x + i * in + k0, in, wp + j, out, y + i * out + j0 + j, out);
        micro_any(4, jn - j, kn, x + i * in + k0, in, wp + j, out, y + i * out + j0 + j, out);
      }
      micro_any(n - i, jn, kn, x + i * in + k0, in, wp, out, y + i * out + j0, out);
    }
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < out; j++) {
      float v = y[i * out + j] + b[j];
      y[i * out + j] = relu && v < 0 ? 0 : v;
    }
}

/* ---- weights, shared by the instances of one process ------------------------ */

/* Instances with the same seed and shape share one read-only copy: eight
 * CPU workers running a 150k-input classifier need one 300 MB weight set,
 * not eight. The lock is taken only to find or drop a set, never per row. */
typedef struct sl__mlp {
  uint64_t seed;
  int nlayers;
  int dims[SL__GEMM_MAX_LAYERS + 1];
  float *w[SL__GEMM_MAX_LAYERS], *b[SL__GEMM_MAX_LAYERS];
  int refs;
  struct sl__mlp *next;
} sl__mlp;

static pthread_mutex_t mlp_lock = PTHREAD_MUTEX_INITIALIZER;
static sl__mlp *mlp_cache;

static void mlp_destroy(sl__mlp *m)
{
  for (int l = 0; l < m->nlayers; l++) {
    free(m->w[l]);
    free(m->b[l]);
  }
  free(m);
}

/* He-uniform weights (variance 2/fan_in keeps ReLU activations at unit
 * scale), small biases; layer l draws from its own stream. */
static sl__mlp *mlp_build(uint64_t seed, int nlayers, const int *dims)
{
  sl__mlp *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->seed = seed;
  m->nlayers = nlayers;
  memcpy(m->dims, dims, (size_t)(nlayers + 1) * sizeof *dims);
  for (int l = 0; l < nlayers; l++) {
    size_t nw = (size_t)dims[l] * dims[l + 1];
    m->w[l] = malloc(nw * sizeof(float));
    m->b[l] = malloc((size_t)dims[l + 1] * sizeof(float));
    if (!m->w[l] || !m->b[l]) {
      mlp_destroy(m);
      return NULL;
    }
    sl__rng r;
    sl__rng_seed(&r, sl__purpose_seed(seed, SL__PURPOSE_WEIGHTS), (uint64_t)l);
    float a = sqrtf(6.0f / (float)dims[l]);
    for (size_t i = 0; i < nw; i++)
      m->w[l][i] = a * sl__rng_sym(&r);
    for (int j = 0; j < dims[l + 1]; j++)
      m->b[l][j] = 0.1f * sl__rng_sym(&r);
  }
  return m;
}

static const sl__mlp *mlp_acquire(uint64_t seed, int nlayers, const int *dims)
{
  pthread_mutex_lock(&mlp_lock);
  sl__mlp *m = mlp_cache;
  while (m && !(m->seed == seed && m->nlayers == nlayers &&
                memcmp(m->dims, dims, (size_t)(nlayers + 1) * sizeof *dims) == 0))
    m = m->next;
  if (!m && (m = mlp_build(seed, nlayers, dims))) {
    m->next = mlp_cache;
    mlp_cache = m;
  }
  if (m)
    m->refs++;
  pthread_mutex_unlock(&mlp_lock);
  return m;
}

static void mlp_release(const sl__mlp *gone)
{
  if (!gone)
    return;
  pthread_mutex_lock(&mlp_lock);
  for (sl__mlp **p = &mlp_cache; *p; p = &(*p)->next) {
    if (*p != gone)
      continue;
    sl__mlp *m = *p;
    if (--m->refs == 0) {
      *p = m->next;
      mlp_destroy(m);
    }
    break;
  }
  pthread_mutex_unlock(&mlp_lock);
}

/* ---- the instance ------------------------------------------------------------ */

typedef struct {
  const sl__mlp *mlp;   /* NULL until the first row fixes the input size */
  sl_cuda_gemm *cuda;   /* on_gpu only, also lazy */
  size_t in_dim;
  size_t batch;         /* rows per sub-batch */
  float *x, *h[2];      /* batch x in_dim, batch x widest layer */
  bool x_pinned;        /* x is page-locked (sl_cuda_host_alloc): on a GPU it crosses by DMA */
  size_t *idx;          /* rows of the current sub-batch */
} gemm_state;

/* Back to "no model yet": what a failed gemm_setup() leaves behind. */
static void gemm_unsetup(gemm_state *s)
{
  sl_cuda_gemm_free(s->cuda);
  mlp_release(s->mlp);
  if (s->x_pinned)
    sl_cuda_host_free(s->x);
  else
    free(s->x);
  s->x_pinned = false;
  free(s->h[0]);
  free(s->h[1]);
  s->cuda = NULL;
  s->mlp = NULL;
  s->x = s->h[0] = s->h[1] = NULL;
  s->in_dim = 0;
}

static void gemm_fini(sl_kernel *k)
{
  gemm_state *s = k->state;
  if (!s)
    return;
  gemm_unsetup(s);
  free(s->idx);
  free(s);
  k->state = NULL;
}

static int gemm_init(sl_kernel *k)
{
  if (k->gpu_slot) {
    int devices = sl_cuda_device_count();
    if (devices > 0 && (k->gpu_device < 0 || k->gpu_device >= devices))
      return SL_EINVAL; /* a slot naming a device that is not there */
    k->on_gpu = devices > 0;
    k->emulated = devices == 0;
  }
  gemm_state *s = calloc(1, sizeof *s);
  if (!s)
    return SL_ENOMEM;
  k->state = s;
  s->batch = k->on_gpu ? SL__GEMM_GPU_BATCH : SL__GEMM_CPU_BATCH;
  s->idx = malloc(s->batch * sizeof *s->idx);
  if (!s->idx) {
    gemm_fini(k);
    return SL_ENOMEM;
  }
  return 0;
}

/* Feature count of a row: the elements of an image/tensor row, else its bytes. */
static size_t row_features(const uint8_t *p, size_t len, sl_row_hdr *h, bool *has_hdr)
{
  *has_hdr = sl_row_hdr_parse(p, len, h);
  return *has_hdr ? (size_t)h->width * h->height * h->channels : len;
}

/* Copies row @p i of @p in into matrix row @p dst as floats: F32 rows as they
 * are, bytes (of a U8 image or of anything else) as b/255. */
static void load_row(const sl_rows *in, size_t i, float *dst)
{
  const uint8_t *p = sl_rows_payload(in, i);
  sl_row_hdr h;
  bool has_hdr;
  size_t n = row_features(p, sl_rows_len(in, i), &h, &has_hdr);
  if (has_hdr)
    p += SL_ROW_HDR_BYTES;
  if (has_hdr && h.kind == SL_ROW_F32_CHW) {
    memcpy(dst, p, n * sizeof(float));
    return;
  }
  for (size_t j = 0; j < n; j++)
    dst[j] = (float)p[j] * (1.0f / 255.0f);
}

/* Builds (or finds) the network for @p in_dim inputs, and its buffers. */
static int gemm_setup(sl_kernel *k, size_t in_dim, int64_t id)
{
  gemm_state *s = k->state;
  int dims[SL__GEMM_MAX_LAYERS + 1];
  size_t total = 0, widest = 0;
  if (in_dim == 0 || in_dim > INT32_MAX)
    return sl__kernel_fail(k, SL_EKERNEL, "row %lld: %zu features is not a model input",
                           (long long)id, in_dim);
  dims[0] = (int)in_dim;
  for (int l = 1; l <= k->layers; l++)
    dims[l] = l == k->layers ? k->classes : k->hidden;
  for (int l = 0; l < k->layers; l++) {
    total += (size_t)dims[l] * dims[l + 1];
    widest = (size_t)dims[l + 1] > widest ? (size_t)dims[l + 1] : widest;
  }
  if (total > SL__GEMM_MAX_WEIGHTS)
    return sl__kernel_fail(k, SL_EKERNEL,
                           "row %lld: %zu features make a model of %zu weights, over 2^28",
                           (long long)id, in_dim, total);
  s->mlp = mlp_acquire(k->seed, k->layers, dims);
  /* On a GPU the batch is loaded straight into page-locked memory: from
   * pageable memory the driver copies it through its own staging buffers on
   * the CPU first, and an image classifier's 19 MB batches crossed at about
   * 3 GB/s on an H200 whose CPUs decoders kept busy. */
  s->x = k->on_gpu ? sl_cuda_host_alloc(k->gpu_device, s->batch * in_dim * sizeof(float)) : NULL;
  s->x_pinned = s->x != NULL;
  if (!s->x)
    s->x = malloc(s->batch * in_dim * sizeof(float));
  s->h[0] = malloc(s->batch * widest * sizeof(float));
  s->h[1] = malloc(s->batch * widest * sizeof(float));
  s->in_dim = in_dim;
  if (!s->mlp || !s->x || !s->h[0] || !s->h[1]) {
    gemm_unsetup(s);
    return sl__kernel_fail(k, SL_ENOMEM, "gemm_classifier: out of memory for the model");
  }
  if (k->on_gpu) {
    int rc = sl_cuda_gemm_new(&s->cuda, k->gpu_device, k->layers, dims,
                              (const float *const *)s->mlp->w, (const float *const *)s->mlp->b);
    if (rc) {
      gemm_unsetup(s);
      return sl__kernel_fail(k, rc, "gemm_classifier: cannot load the model on GPU %d: %s",
                             k->gpu_device, sl_strerror(rc));
    }
  }
  return 0;
}

/* Runs the n rows loaded in s->x through the network; returns the logits. */
static const float *forward(sl_kernel *k, size_t n, int *rc)
{
  gemm_state *s = k->state;
  const sl__mlp *m = s->mlp;
  *rc = 0;
  if (k->on_gpu) {
    *rc = sl_cuda_gemm_forward(s->cuda, s->x, (int)n, s->h[0]);
    if (*rc)
      sl__kernel_fail(k, *rc, "gemm_classifier: CUDA forward failed: %s", sl_strerror(*rc));
    return s->h[0];
  }
  const float *cur = s->x;
  for (int l = 0; l < m->nlayers; l++) {
    float *next = s->h[l % 2];
    sl__sgemm_bias(n, (size_t)m->dims[l], (size_t)m->dims[l + 1], cur, m->w[l], m->b[l],
                   l + 1 < m->nlayers, next);
    cur = next;
  }
  return cur;
}

static int append_logits(sl_kernel *k, const sl_rows *in, size_t i, const float *logits,
                         sl_rows *out)
{
  sl_row_hdr h = {.width = (uint16_t)k->classes, .height = 1, .channels = 1,
                  .kind = SL_ROW_F32_CHW};
  uint8_t *p = sl_rows_add(out, sl_rows_id(in, i), sl_rows_split(in, i),
                           sl_row_hdr_payload_bytes(&h));
  if (!p)
    return sl__kernel_fail(k, SL_ENOMEM, "gemm_classifier: out of memory at row %lld",
                           (long long)sl_rows_id(in, i));
  sl_row_hdr_write(p, &h);
  memcpy(p + SL_ROW_HDR_BYTES, logits, (size_t)k->classes * sizeof(float));
  return 0;
}

/* One sub-batch: load, check sizes, forward, append. */
static int gemm_batch(sl_kernel *k, const sl_rows *in, const size_t *idx, size_t n,
                      sl_rows *out)
{
  gemm_state *s = k->state;
  for (size_t r = 0; r < n; r++) {
    sl_row_hdr h;
    bool has_hdr;
    int64_t id = sl_rows_id(in, idx[r]);
    size_t f = row_features(sl_rows_payload(in, idx[r]), sl_rows_len(in, idx[r]), &h, &has_hdr);
    if (!s->mlp) {
      int rc = gemm_setup(k, f, id);
      if (rc)
        return rc;
    }
    if (f != s->in_dim)
      return sl__kernel_fail(k, SL_EKERNEL, "row %lld: %zu features, the model takes %zu",
                             (long long)id, f, s->in_dim);
    load_row(in, idx[r], s->x + r * s->in_dim);
  }
  int rc;
  const float *y = forward(k, n, &rc);
  for (size_t r = 0; r < n && rc == 0; r++)
    rc = append_logits(k, in, idx[r], y + r * (size_t)k->classes, out);
  return rc;
}

/* Emulated accelerator: hold the slot for the modelled time; the logits are
 * pseudo-random (seed, id), so runs stay deterministic without the math. */
static int emulate(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                   sl_rows *out)
{
  struct timespec deadline = sl__deadline_after((double)count * k->time_per_row);
  float *logits = malloc((size_t)k->classes * sizeof *logits);
  if (!logits)
    return sl__kernel_fail(k, SL_ENOMEM, "gemm_classifier: out of memory");
  int rc = 0;
  for (size_t i = first; i < first + count && rc == 0; i++) {
    if (!sl__kernel_keeps(k, sl_rows_id(in, i)))
      continue;
    sl__rng r;
    sl__rng_seed(&r, sl__purpose_seed(k->seed, SL__PURPOSE_EMULATED), (uint64_t)sl_rows_id(in, i));
    for (int c = 0; c < k->classes; c++)
      logits[c] = sl__rng_sym(&r);
    rc = append_logits(k, in, i, logits, out);
  }
  free(logits);
  if (rc == 0 && sl__sleep_until(k, &deadline) != 0)
    rc = sl__kernel_fail(k, SL_EINTR, "gemm_classifier: cancelled");
  return rc;
}

static int gemm_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                      sl_rows *out)
{
  if (k->emulated)
    return emulate(k, in, first, count, out);
  gemm_state *s = k->state;
  size_t n = 0;
  for (size_t i = first; i < first + count; i++) {
    if (sl__kernel_keeps(k, sl_rows_id(in, i)))
      s->idx[n++] = i;
    if (n == s->batch || (i + 1 == first + count && n > 0)) {
      if (sl__kernel_cancelled(k))
        return sl__kernel_fail(k, SL_EINTR, "gemm_classifier: cancelled");
      int rc = gemm_batch(k, in, s->idx, n, out);
      if (rc)
        return rc;
      n = 0;
    }
  }
  return 0;
}

static int gemm_begin_task(sl_kernel *k)
{
  if (!k->emulated || k->time_per_task <= 0)
    return 0;
  struct timespec deadline = sl__deadline_after(k->time_per_task);
  if (sl__sleep_until(k, &deadline) != 0)
    return sl__kernel_fail(k, SL_EINTR, "gemm_classifier: cancelled");
  return 0;
}

const sl__kernel_ops sl__gemm_classifier_ops = {
  .init = gemm_init, .fini = gemm_fini, .apply = gemm_apply, .begin_task = gemm_begin_task};
