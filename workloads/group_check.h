/**
 * @file group_check.h
 * @brief What a real run proves of a groupby's output when its sink says
 *        `check = grouped`: one row per group, and each group's count, sum,
 *        least and greatest record number equal to what the source's
 *        records (gensort's, regenerated from the seed) give it.
 *
 * The executor feeds it each partition the sink accepts and asks for the
 * verdict once the job is complete. Not thread-safe (the sink's lock).
 */
#ifndef SL_GROUP_CHECK_H
#define SL_GROUP_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "workloads/kernels.h"

typedef struct sl_group_check sl_group_check;

/** @brief An empty check of groups of @p key_bytes bytes (1 to
 *  SL_GROUP_MAX_KEY_BYTES), or NULL (no memory, or a bad size). */
sl_group_check *sl_group_check_new(int key_bytes);
void sl_group_check_free(sl_group_check *c);

/**
 * @brief Keeps the groups of @p rows (one delivered partition).
 * @return 0, or SL_ESTATE (a row that is not a group's, or a group
 *         delivered twice: sl_group_check_error() says which).
 */
int sl_group_check_partition(sl_group_check *c, const sl_rows *rows);

/** @brief Forgets the groups of the splits not kept, as the sink does on a
 *  rollback (sl_sink_rollback()): split i is kept when i < nsplits and
 *  keep_split[i]. */
void sl_group_check_rollback(sl_group_check *c, const bool *keep_split, uint32_t nsplits);

/**
 * @brief The verdict: the groups delivered are exactly those of the records
 *        gensort makes for @p seed over @p tasks splits of @p rows_per_task,
 *        with their aggregates.
 * @return 0, SL_ESTATE (sl_group_check_error() says what is wrong) or SL_ENOMEM.
 */
int sl_group_check_finish(sl_group_check *c, uint64_t seed, int64_t tasks, int64_t rows_per_task);

/** @brief What the last failed check found ("" if none); owned by @p c. */
const char *sl_group_check_error(const sl_group_check *c);

#endif
