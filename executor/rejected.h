/**
 * @file rejected.h
 * @brief Rows a kernel rejected as corrupt: which, how many, and what the
 *        sink should therefore miss.
 *
 * Under --max-errored-rows N a kernel's bad row is left out instead of
 * failing the job. The executor must then count each bad row once, though
 * a re-run (after a failure or a rollback) meets it again; stop past N,
 * naming the first; and still check that the sink got every row it should
 * have: all of them, less what the rejected rows would have become. A task
 * gathers its rejections in a batch (sl_rejected_batch, no lock needed); the
 * job's tally (sl_rejected_tally, under the engine's lock) takes the batch.
 */
#ifndef SL_EXEC_REJECTED_H
#define SL_EXEC_REJECTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "models/plan.h"

/** @brief One rejected row: the logical operator that rejected it, the row,
 *  and the sink rows it would have become (an upper bound when not exact). */
typedef struct {
  int level;
  int64_t id;
  double sink_rows;
  bool exact;
} sl_rejected_row;

/** @brief A task's rejections since it last handed them to the tally;
 *  caller-allocated, zero-initialised, freed with sl_rejected_batch_free(). */
typedef struct {
  sl_rejected_row *rows;
  size_t n, cap;
  char first[400]; /**< the first of them, named by the engine; "" before */
} sl_rejected_batch;

/** @brief The job's rejected rows; zero-initialise with sl_rejected_tally_init(),
 *  free with sl_rejected_tally_free(). */
typedef struct {
  struct sl_rejected_key *cell; /**< open-addressing set of (level, id) */
  size_t cap;
  int64_t rows;          /**< distinct rows rejected */
  double sink_rows_lost; /**< the sink rows they would have become */
  bool sink_rows_exact;  /**< whether that number is exact */
  char first[400];       /**< the first rejected row, named */
} sl_rejected_tally;

/** @brief Appends @p r to the batch. 0 or SL_ENOMEM. */
SL_MUST_CHECK int sl_rejected_batch_push(sl_rejected_batch *b, const sl_rejected_row *r);

/** @brief Empties the batch (its storage is kept). */
void sl_rejected_batch_clear(sl_rejected_batch *b);

void sl_rejected_batch_free(sl_rejected_batch *b);

void sl_rejected_tally_init(sl_rejected_tally *t);
void sl_rejected_tally_free(sl_rejected_tally *t);

/** @brief Counts the batch's rows not seen before, and keeps its first
 *  name when the tally has none. 0 or SL_ENOMEM (the rows after the one
 *  that could not be added are not counted). */
SL_MUST_CHECK int sl_rejected_tally_add(sl_rejected_tally *t, const sl_rejected_batch *b);

/**
 * @brief The sink rows one input row of member @p member of operator @p op
 *        turns into: the product of the expansions from there on. *exact is
 *        false when one of them is a 1-in-K filter, which may or may not
 *        have kept that row: the number is then the most it could be.
 */
double sl_rejected_sink_rows(const sl_plan *p, int op, int member, bool *exact);

/** @brief Whether @p got sink rows of @p expected add up once the rejected
 *  rows are left out (within the bounds when the number is not exact). */
bool sl_rejected_rows_add_up(const sl_rejected_tally *t, double got, double expected);

/** @brief @p msg without a leading "row ID: ", for a message that names the
 *  row itself. */
const char *sl_rejected_message(const char *msg, int64_t id);

#endif
