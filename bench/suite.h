/**
 * @file suite.h
 * @brief The regression suite behind `sluice bench`: a fixed list of
 *        deterministic simulations and bounds (the experiments at reduced
 *        size) and the micro-benchmarks, compared with a committed baseline.
 *
 * Two kinds of metric:
 *
 * - exact: a simulated or computed figure (JCT, peak store, tasks, retries,
 *   a bound). The scheduler and the simulator are deterministic, so these
 *   must match the baseline to within a relative 1e-9 (printing noise);
 *   any other difference means the change altered a result, and the same
 *   commit must update the baseline and say why.
 * - ratio: a wall-clock cost (seconds per dispatched or simulated task)
 *   divided by the time of the reference loop measured in the same process
 *   just before (bench/micro.h), median of several pairs. It fails only when
 *   it grows by more than the metric's noise band.
 *
 * The baseline is a CSV (libcsv): metric,kind,value,band,unit. An unknown
 * kind, a missing column or a number that is not one is reported as
 * `FILE:LINE: problem`.
 */
#ifndef SL_BENCH_SUITE_H
#define SL_BENCH_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { SL_METRIC_EXACT, SL_METRIC_RATIO } sl_metric_kind;

typedef struct {
  char name[96];
  sl_metric_kind kind;
  double value;
  double band;       /**< exact: relative tolerance; ratio: allowed relative growth */
  char unit[24];
} sl_metric;

typedef struct {
  int n, cap;
  sl_metric *m;
} sl_metric_set;

void sl_metric_set_free(sl_metric_set *s);

/** @brief The metric called @p name, or NULL. */
const sl_metric *sl_metric_find(const sl_metric_set *s, const char *name);

typedef struct {
  const char *data_dir;  /**< where workloads/ lives */
  const char *filter;    /**< run only metrics whose name contains this; NULL = all */
  int micro_runs;        /**< pairs of (reference, benchmark) per ratio metric */
  bool verbose;
  /** Called before each step (may be NULL): what runs, and how many steps
   *  ran before it of how many the suite has. */
  void (*progress)(void *ctx, const char *what, int done, int total);
  void *progress_ctx;
} sl_suite_opts;

/**
 * @brief Runs the suite, appending its metrics to @p out.
 * @return 0, or -1 with a message in @p err (a spec missing, a run failed).
 */
int sl_suite_run(const sl_suite_opts *o, sl_metric_set *out, char *err, size_t errlen);

/** @brief Reads a baseline. 0; SL_EIO (cannot read) or SL_EPARSE, `FILE:LINE: problem` in @p err. */
int sl_baseline_read(const char *path, sl_metric_set *out, char *err, size_t errlen);

/** @brief Writes @p s to @p path through a temporary renamed at the end. 0 or SL_EIO. */
int sl_baseline_write(const char *path, const sl_metric_set *s, char *err, size_t errlen);

/**
 * @brief Prints the table of every metric of @p now beside @p base (and
 *        every baseline metric the run did not produce, when no filter was
 *        given) and returns the number of regressions: an exact metric that
 *        differs, a ratio over its band, a metric missing on either side.
 */
int sl_suite_compare(const sl_metric_set *base, const sl_metric_set *now, bool filtered, FILE *f);

#endif
