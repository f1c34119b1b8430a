/**
 * @file sink.h
 * @brief The simulated sink: which source split every delivered row came
 *        from.
 *
 * A simulated partition has a size and no rows, yet the run must be checked
 * as a real one is: every source split reaches the sink whole, exactly once,
 * a rollback takes back what a split delivered since the checkpoint, and
 * two runs that delivered the same rows have the same checksum. So the
 * simulator follows the rows by split: an attempt reads its inputs' rows
 * (sl_sim_sink_inputs()), each partition it emits holds its share of them
 * in input order (sl_sim_sink_hold()), and the sink counts a delivered
 * partition's rows against their splits.
 *
 * This is the engine's own knowledge, not a copy of the core's: the core
 * keeps one split per partition (its first input's), the sink all of them,
 * as a batch of several splits' rows makes one partition.
 */
#ifndef SL_SIM_SINK_H
#define SL_SIM_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "models/core.h"
#include "models/error.h"

/** @brief Rows of one source split. */
typedef struct {
  int64_t split;
  double rows;
} sl_sim_piece;

/** @brief An attempt's input rows by split, in input order; caller-allocated,
 *  zero-initialised, freed with sl_sim_rows_free(). */
typedef struct {
  sl_sim_piece *v;
  uint32_t n, cap;
  double rows; /**< the sum of v[].rows */
} sl_sim_rows;

typedef struct sl_sim_sink_s sl_sim_sink;

/** @brief A sink for @p nsplits source splits, nothing delivered. NULL when
 *  out of memory. Free with sl_sim_sink_free(). */
sl_sim_sink *sl_sim_sink_new(int64_t nsplits);

/** @brief Frees the sink and every partition's holding; NULL is a no-op. */
void sl_sim_sink_free(sl_sim_sink *s);

/** @brief Frees the rows' storage and empties them. */
void sl_sim_rows_free(sl_sim_rows *in);

/** @brief Fills @p in with what LAUNCH @p d reads: its inputs' rows by split,
 *  or, for a source (or inputs that hold nothing), @c rows of its own split.
 *  0 or SL_ENOMEM. */
SL_MUST_CHECK int sl_sim_sink_inputs(const sl_sim_sink *s, const sl_decision *d, sl_sim_rows *in);

/**
 * @brief Partition @p part holds output rows [from, from + rows) of an
 *        attempt that reads @p in and makes @p rows_out rows: the same share
 *        of its input rows, as rows come out in input order. Replaces what
 *        @p part held before. 0 or SL_ENOMEM.
 */
SL_MUST_CHECK int sl_sim_sink_hold(sl_sim_sink *s, sl_part_id part, const sl_sim_rows *in, int64_t rows_out,
                                   int64_t from, int64_t rows);

/** @brief The DELIVER @p d: its partition's rows go to their splits, and the
 *  partition holds nothing more. */
void sl_sim_sink_deliver(sl_sim_sink *s, const sl_decision *d);

/** @brief Partition @p part is gone (DROP): it holds nothing more. */
void sl_sim_sink_forget(sl_sim_sink *s, sl_part_id part);

/** @brief A ROLLBACK: splits not in @p keep_split have delivered nothing. */
void sl_sim_sink_rollback(sl_sim_sink *s, const bool *keep_split);

/** @brief FNV-1a over (split, rows delivered) in split order: equal for two
 *  runs that delivered the same rows of the same splits, in any order. */
uint64_t sl_sim_sink_checksum(const sl_sim_sink *s);

/** @brief Splits whose delivered rows differ from @p per_split. */
int64_t sl_sim_sink_splits_wrong(const sl_sim_sink *s, double per_split);

#endif
