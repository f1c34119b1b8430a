/**
 * @file reorder.h
 * @brief AutoOrder, after Pecan: the operators of a reorder group may run
 *        in any order, and the order is chosen by the bound.
 *
 * A spec marks operators that commute (`reorder_group = NAME`, next to each
 * other in the pipeline; `keep_position = true` pins one). Pecan sorts them
 * by inflation factor, data-reducing ones first. sluice instead builds the
 * plan of every order and keeps the one with the lowest JCT bound
 * (bound.h): an order that shrinks data early but moves work onto the
 * bottleneck class is worse, and only the LP sees it. Ties go to the order
 * that reads fewer bytes over the job, then to the spec's own order. The
 * result keeps every candidate, so a caller can show why.
 *
 * Plain data in, plain data out: nothing here runs a task.
 */
#ifndef SL_REORDER_H
#define SL_REORDER_H

#include <stdio.h>

#include "cluster.h"
#include "workload.h"

/** Most orders tried in all; more is refused with a message (pin some). */
#define SL_REORDER_MAX_ORDERS 5040

/** @brief One candidate order and what the bound says of it. */
typedef struct {
  int order[SL_MAX_OPS];    /**< order[k]: the spec's index of the operator at position k */
  double jct_s;             /**< the bound's JCT (INFINITY when it could not be computed) */
  double throughput_rows_s; /**< the bound's source rows per second */
  double read_bytes;        /**< bytes the operators read over the job, sources' reads aside */
  int rank_key;             /**< enumeration index: the spec's order is 0 */
} sl_order;

/** @brief Every order of a workload's reorder groups, best first. */
typedef struct {
  int n;            /**< candidates */
  sl_order *orders; /**< n of them, best first; owned */
  int written_at;   /**< where the spec's order is in @p orders */
  int pecan_at;     /**< where the order of ascending inflation factors (Pecan's rule) is */
} sl_reorder_result;

/**
 * @brief Checks the reorder groups of @p w: each group's operators are
 *        maps next to each other, at least two of them.
 * @return -1 when they are fine; else the index of the operator at fault,
 *         with the reason in @p err (no file or line: the caller adds them).
 */
int sl_reorder_check(const sl_workload *w, char *err, size_t errlen);

/** @brief Whether @p w has a reorder group. */
bool sl_reorder_has_groups(const sl_workload *w);

/**
 * @brief Bytes of output per byte of input of operator @p i as the spec
 *        orders it (rows and row sizes both): Pecan's inflation factor.
 */
double sl_reorder_inflation(const sl_workload *w, int i);

/**
 * @brief Bounds every order of @p w's reorder groups on cluster @p c and
 *        sorts them best first. @p out is owned by the caller
 *        (sl_reorder_result_free()).
 * @return 0; SL_EINVAL (bad groups, too many orders, with a message);
 *         SL_ENOMEM; or the bound's error when no order can be bounded.
 */
int sl_reorder_choose(const sl_workload *w, const sl_cluster *c, sl_reorder_result *out, char *err,
                      size_t errlen);

void sl_reorder_result_free(sl_reorder_result *r);

/** @brief @p w with its operators in @p order (sl_order.order); @p out may not be @p w. */
void sl_workload_reorder(const sl_workload *w, const int *order, sl_workload *out);

/** @brief "read > crop > augment > normalize", the operators in @p order. */
void sl_reorder_format(const sl_workload *w, const int *order, char *buf, size_t len);

/**
 * @brief Prints the candidates for a reader: the inflation factors, the
 *        best @p top orders with their bounds, and the spec's order and
 *        Pecan's when they are further down.
 */
void sl_reorder_print(const sl_reorder_result *r, const sl_workload *w, const sl_cluster *c, int top,
                      FILE *f);

#endif
