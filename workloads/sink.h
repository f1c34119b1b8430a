/**
 * @file sink.h
 * @brief The sink checker: accumulates delivered rows and proves that each
 *        row arrived exactly once.
 *
 * Per source split it keeps a row count, a byte count and a checksum (the
 * sum, mod 2^64, of sl_sink_row_hash() over the rows: independent of the
 * order and the partitioning in which rows arrive). A set of the delivered
 * row ids catches duplicates. A run is correct when the sink's rows and
 * checksum equal those of a failure-free run of the same workload and seed.
 *
 * Not thread-safe: the executor calls it under its own lock (deliveries are
 * per partition, so the lock is taken rarely). The simulator does not use
 * it (it has no payloads).
 */
#ifndef SL_SINK_H
#define SL_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workloads/kernels.h"

typedef struct sl_sink sl_sink;

/** @brief An empty sink (free with sl_sink_free()), or NULL without memory. */
sl_sink *sl_sink_new(void);

/** @brief Releases @p s. NULL is fine. */
void sl_sink_free(sl_sink *s);

/**
 * @brief Accepts every row of @p rows, all or nothing.
 * @return 0; SL_ESTATE when a row id was already delivered (or appears twice
 *         in @p rows): nothing of @p rows is kept and sl_sink_last_error()
 *         names the row; SL_ENOMEM.
 */
int sl_sink_deliver(sl_sink *s, const sl_rows *rows);

/**
 * @brief Forgets the rows of every split not kept: their counts, checksums
 *        and ids, so that they may be delivered again. The stream model's
 *        rollback to a checkpoint.
 *
 * Split i is kept when i < nsplits and keep_split[i]; splits at or past
 * @p nsplits are dropped. @return 0 or SL_ENOMEM (then nothing changed).
 */
int sl_sink_rollback(sl_sink *s, const bool *keep_split, uint32_t nsplits);

/** @brief Rows, payload bytes and checksum over all splits. */
uint64_t sl_sink_rows(const sl_sink *s);
uint64_t sl_sink_bytes(const sl_sink *s);
uint64_t sl_sink_checksum(const sl_sink *s);

/** @brief The same for one split (0 for a split never seen). */
uint64_t sl_sink_split_rows(const sl_sink *s, uint32_t split);
uint64_t sl_sink_split_checksum(const sl_sink *s, uint32_t split);

/** @brief Message of the last failed delivery ("" if none); owned by @p s. */
const char *sl_sink_last_error(const sl_sink *s);

/** @brief The 64-bit hash of a row (XXH64 of the payload, seeded by the id),
 *         the term the checksum sums. */
uint64_t sl_sink_row_hash(int64_t id, const uint8_t *payload, size_t len);

#endif
