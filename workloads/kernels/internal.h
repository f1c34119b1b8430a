/**
 * @file internal.h
 * @brief What the kernel files share: the instance record, the per-kernel
 *        operations table, the PRNG and the waiting helpers. Not for users
 *        of workloads/kernels.h.
 */
#ifndef SL_KERNELS_INTERNAL_H
#define SL_KERNELS_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <time.h>

#include "workloads/kernels.h"

/* ---- PRNG: splitmix64 to seed, xoshiro256** to stream ------------------- */

static inline uint64_t sl__splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/** @brief A well-mixed 64-bit hash of two words (seed and row id). */
static inline uint64_t sl__mix2(uint64_t a, uint64_t b)
{
  uint64_t s = a ^ (b * 0xd6e8feb86659fd93ull);
  (void)sl__splitmix64(&s);
  return sl__splitmix64(&s);
}

typedef struct {
  uint64_t s[4];
} sl__rng;

static inline uint64_t sl__rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

/** @brief Seeds @p r from (seed, stream): distinct streams never overlap in practice. */
static inline void sl__rng_seed(sl__rng *r, uint64_t seed, uint64_t stream)
{
  uint64_t s = sl__mix2(seed, stream);
  for (int i = 0; i < 4; i++)
    r->s[i] = sl__splitmix64(&s);
}

static inline uint64_t sl__rng_next(sl__rng *r)
{
  uint64_t *s = r->s;
  uint64_t out = sl__rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = sl__rotl(s[3], 45);
  return out;
}

/** @brief Uniform float in [-1, 1) from the top 24 bits of a draw. */
static inline float sl__rng_sym(sl__rng *r)
{
  return (float)(sl__rng_next(r) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/* Purposes of one workload seed, mixed into it (sl__purpose_seed()) so that
 * generate's rows, the images, the weights and the emulated logits of the
 * same id are independent. Generate uses the seed itself. */
enum {
  SL__PURPOSE_IMAGE = 1,
  SL__PURPOSE_WEIGHTS = 2,
  SL__PURPOSE_EMULATED = 3,
  SL__PURPOSE_AUGMENT = 4,
  SL__PURPOSE_SORT = 5,
  SL__PURPOSE_SHUFFLE = 6,
};

static inline uint64_t sl__purpose_seed(uint64_t seed, uint64_t purpose)
{
  return sl__mix2(seed, purpose ^ 0x5eed5eed00000000ull);
}

/* ---- the instance -------------------------------------------------------- */

/** @brief What one kernel does. NULL entries are not supported by it. */
typedef struct {
  int (*init)(sl_kernel *k);   /**< builds state; 0 or a negative code */
  void (*fini)(sl_kernel *k);  /**< frees state */
  /** Sources: appends the row @p id. */
  int (*gen)(sl_kernel *k, int64_t id, uint32_t split, sl_rows *out);
  /** Maps: appends one output per kept row of [first, first+count), with
   *  the input's id and split; expansion is done by the caller. */
  int (*apply)(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
               sl_rows *out);
  int (*begin_task)(sl_kernel *k);
  /** Sources that stand in for a modelled read: rows come out no faster
   *  than time_per_row each, so emission follows the cost model. */
  bool paced;
  /** Stands for work that only the cost model times (sl_kernel_modelled()). */
  bool modelled;
  /** Holds the slot until @p deadline; NULL: sleeps. */
  int (*hold)(sl_kernel *k, const struct timespec *deadline);
  /** All-to-all kernels that partition by content: the share of @p shares a
   *  row goes to. NULL: by row id, id % shares. */
  int64_t (*share)(const sl_kernel *k, int64_t id, const uint8_t *payload, size_t len, int64_t shares);
} sl__kernel_ops;

struct sl_kernel {
  const sl_kernel_info *info;
  const sl__kernel_ops *ops;
  uint64_t seed;
  size_t out_bytes;            /**< out_row_bytes, 0 = keep */
  double inflation;            /**< > 0: output rows of the input's size times this (copying kernels) */
  uint64_t expand;             /**< K of "K rows per row", 1 = none */
  uint64_t keep_every;         /**< K of "1/K": keep ids % K == 0, 1 = all */
  double time_per_row, time_per_task;
  bool gpu_slot, on_gpu, emulated;
  int gpu_device;
  const atomic_bool *cancel;
  int width, height, quality, layers, hidden, classes;
  int corrupt_every;           /**< jpeg_generate: break rows K-1, 2K-1, ...; 0 = none */
  int percent;                 /**< center_crop: width and height kept, in percent */
  int passes;                  /**< augment: blur passes over every element */
  int key_bytes;               /**< groupby: bytes of a record's key that name its group */
  void *state;                 /**< kernel-specific, owned */
  char err[256];
};

/** @brief Records a message for sl_kernel_last_error() and returns @p code. */
int sl__kernel_fail(sl_kernel *k, int code, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/** @brief Whether input row @p id survives the 1/K filter. */
static inline bool sl__kernel_keeps(const sl_kernel *k, int64_t id)
{
  return k->keep_every == 1 || (uint64_t)id % k->keep_every == 0;
}

static inline bool sl__kernel_cancelled(const sl_kernel *k)
{
  return k->cancel && atomic_load_explicit(k->cancel, memory_order_relaxed);
}

/* ---- time ---------------------------------------------------------------- */

/** @brief CLOCK_MONOTONIC now plus @p seconds. */
struct timespec sl__deadline_after(double seconds);

/** @brief Sleeps until @p deadline (absolute, CLOCK_MONOTONIC), waking every
 *  10 ms to look at the cancel flag. 0 or SL_EINTR. */
int sl__sleep_until(const sl_kernel *k, const struct timespec *deadline);

/* ---- the kernels, by file ------------------------------------------------ */

extern const sl__kernel_ops sl__generate_ops, sl__noop_ops, sl__sleep_ops,
  sl__spin_ops;                                         /* basic.c */
extern const sl__kernel_ops sl__jpeg_generate_ops, sl__jpeg_decode_ops,
  sl__resize_normalize_ops;                             /* image.c */
extern const sl__kernel_ops sl__gemm_classifier_ops;    /* gemm.c */
extern const sl__kernel_ops sl__center_crop_ops, sl__augment_ops,
  sl__normalize_ops;                                    /* augment.c */
extern const sl__kernel_ops sl__gensort_ops, sl__sort_records_ops, sl__shuffle_rows_ops; /* sort.c */
extern const sl__kernel_ops sl__groupby_ops; /* group.c */

/**
 * @brief Y = act(X W + b) on the CPU, for the tests and the GEMM kernel:
 *        X is n x in, W in x out, Y n x out, all row-major; act is ReLU when
 *        @p relu, identity otherwise. Each Y element is summed over k in
 *        increasing order, in float, then the bias is added: the order the
 *        CUDA kernel uses too.
 */
void sl__sgemm_bias(size_t n, size_t in, size_t out, const float *x, const float *w,
                    const float *b, bool relu, float *y);

#endif
