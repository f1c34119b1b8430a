/**
 * @file sort_check.h
 * @brief What valsort proves of a sort's output, for a real run whose sink
 *        says `check = sorted`: every delivered partition is sorted by its
 *        10-byte key, the partitions do not overlap (concatenated in key
 *        order they are one sorted run), and the records are the source's
 *        (gensort's), each once: same count, same checksum.
 *
 * The executor feeds it each partition the sink accepts and asks for the
 * verdict once the job is complete. Not thread-safe (the sink's lock).
 */
#ifndef SL_SORT_CHECK_H
#define SL_SORT_CHECK_H

#include <stdint.h>

#include "workloads/kernels.h"

typedef struct sl_sort_check sl_sort_check;

/** @brief An empty check (free with sl_sort_check_free()), or NULL without memory. */
sl_sort_check *sl_sort_check_new(void);
void sl_sort_check_free(sl_sort_check *c);

/**
 * @brief Checks that @p rows (one delivered partition) is sorted by key and
 *        keeps its first and last key.
 * @return 0; SL_ESTATE (out of order: sl_sort_check_error() names the rows); SL_ENOMEM.
 */
int sl_sort_check_partition(sl_sort_check *c, const sl_rows *rows);

/** @brief A rollback gave rows back: partitions delivered before it may be
 *         delivered again, so their key ranges can no longer be compared. */
void sl_sort_check_rolled_back(sl_sort_check *c);

/**
 * @brief The verdict: partitions that do not overlap, and @p rows records
 *        with checksum @p checksum (the sink's), equal to what gensort makes
 *        for @p seed over @p tasks splits of @p rows_per_task records.
 * @return 0, SL_ESTATE (sl_sort_check_error() says what is wrong) or SL_ENOMEM.
 */
int sl_sort_check_finish(sl_sort_check *c, uint64_t seed, int64_t tasks, int64_t rows_per_task, uint64_t rows,
                         uint64_t checksum);

/** @brief What the last failed check found ("" if none); owned by @p c. */
const char *sl_sort_check_error(const sl_sort_check *c);

/** @brief Partitions checked so far. */
int64_t sl_sort_check_partitions(const sl_sort_check *c);

#endif
