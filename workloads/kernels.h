/**
 * @file kernels.h
 * @brief The operator kernels the real executor runs, and the row buffers
 *        they read and write.
 *
 * Two things live here:
 *
 * - **sl_rows**, a growable batch of rows. Each row has a 64-bit id, the
 *   index of the source split it descends from, and a byte payload. Payloads
 *   sit back to back in one data buffer, so a partition is two allocations
 *   whatever its row count. The size of a partition, as executors count it
 *   against a node's store, is the sum of its payload sizes (sl_rows_bytes());
 *   ids, splits and slack capacity are not counted (sl_rows_footprint() gives
 *   the real allocation when that matters).
 *
 * - **sl_kernel**, one instance of a named kernel (workloads/kernel_registry.h)
 *   with its parameters resolved. An instance keeps per-thread state (a
 *   TurboJPEG handle, weights, scratch buffers): create one per worker thread
 *   and never share it; kernels take no locks on their hot path.
 *
 * Image rows are self-describing: their payload starts with an sl_row_hdr
 * (8 bytes, host byte order; rows never leave the process) followed by the
 * pixels or tensor elements. JPEG rows are raw JPEG files (JPEG describes
 * itself).
 *
 *   kernel            input row                    output row
 *   generate          -                            row_bytes of PRNG output
 *   jpeg_generate     -                            JPEG file (width x height RGB)
 *   noop/sleep/spin   anything                     the same payload
 *   jpeg_decode       JPEG file                    hdr U8_HWC  + w*h*3 bytes RGB
 *   resize_normalize  hdr U8_HWC, 3 channels       hdr F32_CHW + 3*W*H float32
 *   gemm_classifier   hdr F32_CHW or U8_HWC,       hdr F32_CHW (classes x 1 x 1)
 *                     or any bytes (as b/255)      + classes float32 logits
 *
 * Every output row keeps the split of its input row. Errors are the codes of
 * models/error.h; SL_EKERNEL means a corrupt input row and comes with a
 * message naming the row id (sl_kernel_last_error()).
 */
#ifndef SL_KERNELS_H
#define SL_KERNELS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/error.h"

#include "models/workload.h"
#include "workloads/kernel_registry.h"

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */
/* ------------------------------------------------------------------------ */

/** @brief Where one row's payload is: data + off, len bytes. */
typedef struct {
  int64_t id;     /**< row id, unique over the whole job */
  uint32_t split; /**< source split the row descends from */
  uint32_t len;   /**< payload bytes */
  uint64_t off;   /**< offset of the payload in sl_rows.data */
} sl_row;

/**
 * @brief A batch of rows in two allocations: the row records and the
 *        payloads, back to back in row order.
 *
 * Caller-allocated (on the stack or inside a partition); sl_rows_init()
 * makes it empty without allocating, sl_rows_free() releases its buffers.
 * Fields are readable; change them only through the functions below.
 * Not thread-safe: one writer at a time, readers only while nobody writes.
 */
typedef struct {
  sl_row *row;      /**< count records, owned */
  uint8_t *data;    /**< payloads, owned; row[i].off is the sum of earlier lens */
  size_t count;     /**< rows */
  size_t cap;       /**< records allocated */
  size_t bytes;     /**< sum of payload sizes = bytes of data in use */
  size_t data_cap;  /**< bytes of data allocated */
} sl_rows;

/** @brief Makes @p r empty; allocates nothing. */
void sl_rows_init(sl_rows *r);

/** @brief Releases @p r's buffers and leaves it empty (reusable). */
void sl_rows_free(sl_rows *r);

/** @brief Forgets every row but keeps the capacity, for reuse. */
void sl_rows_reset(sl_rows *r);

/** @brief Drops the rows from index @p count on (no-op if fewer rows). */
void sl_rows_truncate(sl_rows *r, size_t count);

/**
 * @brief Hands @p src's storage to @p dst, whose old buffers are freed;
 *        @p src is left empty. How an executor flushes a partition.
 */
void sl_rows_move(sl_rows *dst, sl_rows *src);

/** @brief Ensures room for @p rows more rows and @p bytes more payload bytes.
 *  @return 0 or SL_ENOMEM. */
SL_MUST_CHECK int sl_rows_reserve(sl_rows *r, size_t rows, size_t bytes);

/**
 * @brief Empties @p r and makes room for @p count records and @p bytes of
 *        payload, returned as raw bytes for the caller to write (a
 *        partition received from the network goes there with one copy);
 *        sl_rows_commit_raw() then takes them as rows.
 * @return 0 or SL_ENOMEM.
 */
SL_MUST_CHECK int sl_rows_open_raw(sl_rows *r, size_t count, size_t bytes, void **records, void **payload);

/**
 * @brief Takes the @p count records and @p bytes of payload written after
 *        sl_rows_open_raw() as @p r's rows, once each record's payload
 *        starts where the one before it ends and they end at @p bytes.
 * @return 0; SL_EPROTO (the first row that does not, in *@p bad_row) and
 *         @p r left empty.
 */
SL_MUST_CHECK int sl_rows_commit_raw(sl_rows *r, size_t count, size_t bytes, size_t *bad_row);

/** @brief Reallocates both buffers to exactly what is used, so that the
 *         footprint of a stored partition is its payload. 0 or SL_ENOMEM. */
SL_MUST_CHECK int sl_rows_shrink_to_fit(sl_rows *r);

/**
 * @brief Appends a row with @p len uninitialised payload bytes and returns
 *        them for the caller to fill.
 *
 * The pointer is valid until the next call that may grow @p r. This is the
 * zero-copy path: kernels write their output in place.
 * @return the payload, or NULL when out of memory or @p len > UINT32_MAX.
 */
uint8_t *sl_rows_add(sl_rows *r, int64_t id, uint32_t split, size_t len);

/** @brief Appends a copy of @p len bytes at @p payload. 0, SL_ENOMEM or
 *         SL_EINVAL (len > UINT32_MAX). */
SL_MUST_CHECK int sl_rows_append(sl_rows *r, int64_t id, uint32_t split, const void *payload,
                   size_t len);

/** @brief Appends copies of rows [first, first+count) of @p src (one memcpy
 *         for all payloads). @p src must not be @p dst. 0, SL_ENOMEM, SL_EINVAL. */
SL_MUST_CHECK int sl_rows_append_range(sl_rows *dst, const sl_rows *src, size_t first, size_t count);

/** @brief Shortens the last row's payload to @p len bytes (len <= its size),
 *         e.g. after encoding into a worst-case sized row. */
void sl_rows_trim_last(sl_rows *r, size_t len);

/** @brief Bytes allocated by @p r (records and payload capacity). */
size_t sl_rows_footprint(const sl_rows *r);

static inline size_t sl_rows_count(const sl_rows *r) { return r->count; }
/** @brief Sum of payload sizes: what an executor counts for a partition. */
static inline size_t sl_rows_bytes(const sl_rows *r) { return r->bytes; }
static inline int64_t sl_rows_id(const sl_rows *r, size_t i) { return r->row[i].id; }
static inline uint32_t sl_rows_split(const sl_rows *r, size_t i) { return r->row[i].split; }
static inline size_t sl_rows_len(const sl_rows *r, size_t i) { return r->row[i].len; }
static inline const uint8_t *sl_rows_payload(const sl_rows *r, size_t i)
{
  return r->data + r->row[i].off;
}

/* ------------------------------------------------------------------------ */
/* Image and tensor rows                                                     */
/* ------------------------------------------------------------------------ */

/** Kinds of sl_row_hdr; odd values so that random bytes rarely pass for a
 *  header (sl_row_hdr_parse() also checks the payload size). */
#define SL_ROW_U8_HWC 0x55A8u  /**< uint8 pixels, height x width x channels */
#define SL_ROW_F32_CHW 0xF3C2u /**< float32, channels x height x width */

/** @brief First 8 bytes of an image or tensor row, host byte order. */
typedef struct {
  uint16_t width, height, channels, kind;
} sl_row_hdr;

#define SL_ROW_HDR_BYTES 8

/**
 * @brief Reads the header of a payload of @p len bytes into @p out.
 * @return true when the kind is known and @p len is exactly the header plus
 *         width*height*channels elements of that kind.
 */
bool sl_row_hdr_parse(const uint8_t *payload, size_t len, sl_row_hdr *out);

/** @brief Payload size of a row with header @p h (header included). */
size_t sl_row_hdr_payload_bytes(const sl_row_hdr *h);

/** @brief Writes @p h at @p payload (which needs SL_ROW_HDR_BYTES bytes). */
void sl_row_hdr_write(uint8_t *payload, const sl_row_hdr *h);

/* ------------------------------------------------------------------------ */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct sl_kernel sl_kernel;

/**
 * @brief What a kernel instance is built from. A zeroed struct is valid: it
 *        means seed 0, no modelled time, one output row per input row, CPU.
 *
 * Parameters (looked up by name; a missing one takes its default):
 *   jpeg_generate:    width 256, height 256, quality 90
 *   resize_normalize: width 224, height 224
 *   gemm_classifier:  layers 2, hidden 512, classes 1000
 *   jpeg_generate:    corrupt_every 0: with K > 0, the rows whose id is
 *                     K-1, 2K-1, ... come out as corrupt JPEG files (no
 *                     start-of-image marker), to try a pipeline's handling
 *                     of bad input (sluice run --max-errored-rows)
 * All must be integers: width/height in [1, 65535], quality in [1, 100],
 * layers in [1, 16], hidden in [1, 65536], classes in [1, 65535],
 * corrupt_every in [0, 2^31 - 1].
 */
typedef struct {
  const sl_param *params;   /**< borrowed; read only by sl_kernel_new() */
  int nparams;
  uint64_t seed;            /**< the workload seed: row contents, weights */
  /** generate: payload bytes of each row. noop/sleep/spin: when > 0, output
   *  payloads are cut or padded (with generate's content) to this size, so
   *  a pass-through operator can model a change of size. Others: ignored,
   *  their output size is what their computation yields. */
  double out_row_bytes;
  double inflation;       /**< > 0: a copying kernel's output row is its input's size times this */
  /** Expansion, for every non-source kernel. An integer K >= 1: each kept
   *  input row yields K rows with ids id*K+j, j < K, same payload. A fraction
   *  1/K: only input rows with id % K == 0 are kept, ids unchanged. 0 is read
   *  as 1. Anything else is invalid. Sources ignore it. */
  double rows_out_per_row;
  /** Modelled seconds, already scaled by the node's speed. sleep holds and
   *  spin burns exactly time_per_row per input row (per apply call, in one
   *  absolute deadline) and time_per_task in sl_kernel_begin_task(). The
   *  emulated GPU gemm_classifier holds them too. Other kernels ignore
   *  them: their real work is their cost. */
  double time_per_row, time_per_task;
  bool gpu_slot;            /**< the instance serves a GPU slot */
  int gpu_device;           /**< CUDA device of that slot */
  /** Optional, borrowed: when it becomes true, waiting kernels wake within
   *  10 ms and every kernel stops between rows, returning SL_EINTR. */
  const atomic_bool *cancel;
} sl_kernel_args;

/**
 * @brief The default and the valid range of integer parameter @p param of
 *        kernel @p kernel (width, layers, ...), for the spec reference.
 * @return false when the kernel has no such parameter.
 */
bool sl_kernel_param_range(const char *kernel, const char *param, int *dflt, int *lo, int *hi);

/**
 * @brief Checks that @p args suit kernel @p name, without building anything.
 * @return 0, SL_ENOENT (unknown kernel) or SL_EINVAL, with a message in
 *         @p err (@p errlen bytes; may be NULL).
 */
int sl_kernel_check_args(const char *name, const sl_kernel_args *args, char *err,
                         size_t errlen);

/**
 * @brief A new instance of kernel @p name (a name of kernel_registry.c).
 *
 * gemm_classifier runs on CUDA when @p args says GPU slot and a CUDA device
 * exists; on a GPU slot without a device it is emulated: it holds the slot
 * for the modelled time and writes logits of the right size with
 * deterministic pseudo-random values (sl_kernel_emulated()).
 * @return the instance (free with sl_kernel_free()), or NULL for an unknown
 *         name, invalid args (sl_kernel_check_args() says why) or no memory.
 */
sl_kernel *sl_kernel_new(const char *name, const sl_kernel_args *args);

/** @brief Releases @p k and its state. NULL is fine. */
void sl_kernel_free(sl_kernel *k);

/** @brief The registry entry of @p k. Static storage. */
const sl_kernel_info *sl_kernel_info_of(const sl_kernel *k);

/** @brief Whether @p k runs its computation on a CUDA device. */
bool sl_kernel_on_gpu(const sl_kernel *k);

/** @brief Whether @p k stands in for an absent accelerator. */
bool sl_kernel_emulated(const sl_kernel *k);

/**
 * @brief Whether @p k stands for work that only the cost model times
 *        (generate, noop, sleep, spin, an emulated accelerator): an engine
 *        then builds it with no time of its own and holds the slot for the
 *        work order's charge with sl_kernel_hold(). A real kernel's time is
 *        the time it takes.
 */
bool sl_kernel_modelled(const sl_kernel *k);

/** @brief Whether sl_kernel_hold() burns CPU (spin) rather than sleeps. */
bool sl_kernel_burns_cpu(const sl_kernel *k);

/** @brief Whether @p k must see every row of a task in one apply (a sort):
 *         an engine gathers the task's rows first, then applies once. */
bool sl_kernel_whole_task(const sl_kernel *k);

/**
 * @brief The share, of @p shares, that a row goes to when @p k's operator
 *        is an all-to-all: by content for a kernel that partitions (a sort's
 *        key ranges), else id % shares. 0 when shares <= 1. @p k may be NULL.
 */
int64_t sl_kernel_share_of(const sl_kernel *k, int64_t id, const uint8_t *payload, size_t len, int64_t shares);

/* ---- the sort benchmark's records (workloads/kernels/sort.c) ---- */

#define SL_SORT_KEY_BYTES 10
#define SL_SORT_RECORD_BYTES 100

/** @brief Record @p id of gensort for @p seed, as the kernel writes it. */
void sl_sort_record(uint64_t seed, int64_t id, uint8_t record[SL_SORT_RECORD_BYTES]);

/** @brief The share of @p shares whose key range holds a record's key. */
int64_t sl_sort_share(const uint8_t *payload, size_t len, int64_t shares);

/* ---- groupby over the sort benchmark's records (workloads/kernels/group.c) ---- */

/** @brief Keys of at most 2 bytes: 65,536 groups, which a check can hold. */
#define SL_GROUP_MAX_KEY_BYTES 2

/** @brief A group's aggregates over the record numbers of its records. */
typedef struct {
  uint64_t count, sum, min, max; /**< sum mod 2^64 */
} sl_group_agg;

/** @brief Bytes of a group's row: its key, then count, sum, min and max. */
size_t sl_group_row_bytes(int key_bytes);

/** @brief The group of a record or a group's row: its first @p key_bytes bytes, big-endian. */
int64_t sl_group_key(const uint8_t *payload, int key_bytes);

/** @brief Writes a group's row (sl_group_row_bytes() bytes) and reads one. */
void sl_group_write(uint8_t *row, int key_bytes, int64_t key, const sl_group_agg *a);
void sl_group_read(const uint8_t *row, int key_bytes, sl_group_agg *a);

/** @brief Folds @p a into @p into (an empty @p into, count 0, becomes @p a). */
void sl_group_fold(sl_group_agg *into, const sl_group_agg *a);

/** @brief Orders two records by key (the first 10 bytes; a shorter row
 *         sorts before the longer rows it begins), like memcmp. */
int sl_sort_compare_keys(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/**
 * @brief Holds the slot until @p seconds on CLOCK_MONOTONIC (an absolute
 *        time): spin burns CPU, every other kernel sleeps. 0, or SL_EINTR
 *        when the task is cancelled.
 */
int sl_kernel_hold(sl_kernel *k, double seconds);

/**
 * @brief Marks the start of a task: spends time_per_task for sleep, spin and
 *        an emulated GPU (no-op for the others). Call once per task attempt,
 *        before its first generate/apply. 0 or SL_EINTR.
 */
int sl_kernel_begin_task(sl_kernel *k);

/**
 * @brief Source kernels: appends the rows with ids first_row_id ..
 *        first_row_id+nrows-1 of split @p split to @p out.
 *
 * A row's content depends only on (seed, id), so a source task may be run in
 * chunks of any size (to flush partitions as it goes) and re-run after a
 * failure with identical output.
 * @return 0; SL_EINVAL (not a source, nrows < 0); SL_ENOMEM; SL_EKERNEL;
 *         SL_EINTR. On error @p out holds the rows it had on entry.
 */
int sl_kernel_generate(sl_kernel *k, uint32_t split, int64_t first_row_id,
                       int64_t nrows, sl_rows *out);

/**
 * @brief Non-source kernels: processes rows [first, first+count) of @p in and
 *        appends the outputs (with expansion) to @p out.
 *
 * gemm_classifier processes the range as matrices (sub-batches of up to 64
 * rows on CPU, 256 on CUDA); the others row by row. @p in and @p out must
 * differ.
 * @return 0; SL_EINVAL (a source, range out of @p in); SL_ENOMEM; SL_EKERNEL
 *         (corrupt row: sl_kernel_last_error() names it); SL_EINTR. On error
 *         @p out holds the rows it had on entry.
 */
int sl_kernel_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                    sl_rows *out);

/** @brief Message of the last failed call of @p k ("" if none). Owned by
 *         @p k, valid until its next call. */
const char *sl_kernel_last_error(const sl_kernel *k);

/**
 * @brief Fills @p buf with the deterministic, incompressible content of row
 *        @p id under @p seed: what generate writes. Exposed for tests and
 *        for engines that need the same bytes.
 */
void sl_kernel_fill(uint64_t seed, int64_t id, uint8_t *buf, size_t len);

#endif
