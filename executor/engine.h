/**
 * @file engine.h
 * @brief The real executor: runs a plan on this machine with worker
 *        threads, real buffers, real kernels and the wall clock, asking the
 *        scheduling core for every decision.
 *
 * Virtual nodes come from the cluster spec (or executor/local_cluster.h);
 * each node has one worker thread per slot the core asks for, so slots are
 * logical: eight CPU slots of a sleep-bound operator run on two cores.
 */
#ifndef SL_EXEC_ENGINE_H
#define SL_EXEC_ENGINE_H

#include <signal.h>
#include <stdbool.h>

#include "models/core.h"
#include "models/faults.h"
#include "results/record.h"

typedef struct {
  sl_core_opts core;
  const char *out_dir;        /**< summary.csv, timeline.csv, tasks.csv */
  const char *spill_dir;      /**< NULL: OUT_DIR/spill */
  sl_fault_schedule faults;
  double sample_period_s;     /**< timeline resolution (0.1 s) */
  bool progress;              /**< a progress line on stderr */
  double stall_timeout_s;     /**< fail a run without progress this long; 0 = never */
  int64_t max_errored_rows;   /**< rows a kernel may reject before the run fails */
  const volatile sig_atomic_t *interrupted; /**< set by a signal handler */
  const char *record_events;  /**< write the events fed to the core here (results/events.h), or NULL */
  double time_scale;          /**< the factor the caller scaled the plan's times and the cluster's links
                                   by (sl_plan_scale_time()), written to summary.csv for calibration;
                                   the executor runs the plan as given (1: none) */
} sl_exec_opts;

void sl_exec_opts_default(sl_exec_opts *o);

/** @brief The core options a run with @p o builds its core with (for a replay of its events). */
sl_core_opts sl_exec_core_opts(const sl_exec_opts *o);

/**
 * @brief Runs @p plan on @p cluster. Fills @p summary (also written to
 *        opts->out_dir with the other files, even for an incomplete run).
 * @return 0 when the job completed; SL_EOOM, SL_EINTR, SL_EKERNEL,
 *         SL_ESTALL or SL_EIO otherwise, with a message in @p err.
 */
int sl_exec_run(const sl_plan *plan, const sl_cluster *cluster, const sl_exec_opts *opts,
                sl_summary *summary, char *err, size_t errlen);

#endif
