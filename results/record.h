/**
 * @file record.h
 * @brief What a run leaves behind, the same for the executor and the
 *        simulator: summary.csv, timeline.csv and tasks.csv in one folder.
 *
 * The engine feeds a recorder as it runs (one record per task attempt, a
 * timeline sample now and then) and fills the summary at the end;
 * sl_recorder_write() writes every file under a temporary name and renames
 * it, so an interrupted run never leaves a half file that looks whole.
 * CSV goes through libcsv.
 */
#ifndef SL_RECORD_H
#define SL_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "models/error.h"

#include "models/core.h"

typedef enum { SL_TASK_DONE, SL_TASK_FAILED, SL_TASK_CANCELLED } sl_task_status;

/** @brief One task attempt. */
typedef struct {
  uint32_t task, origin;
  int attempt, op, node, slot;
  double start_s, end_s;
  int64_t rows_in, rows_out;
  double bytes_in, bytes_out;
  int parts_out;
  sl_task_status status;
  double speed; /**< of the node's resource the attempt ran on (the order's) */
  double waited_s; /**< held by backpressure: an emission refused until RESUME */
} sl_task_record;

/** @brief The one-row summary. Columns are listed in record.c. */
typedef struct {
  char workload[64], cluster[64], model[32], engine[16], accelerator[16];
  double jct_s, throughput_rows_s, bound_s, pct_of_bound;
  double peak_store_bytes, store_budget_bytes, peak_rss_bytes, spilled_bytes;
  int64_t tasks, retried_tasks, lost_partitions, checkpoints, rollbacks;
  double rows, expected_rows, first_output_s;
  bool oom, complete;
  uint64_t sink_checksum;
  int64_t errored_rows; /**< rows kernels rejected as corrupt and skipped */
  char note[320];  /**< why a run is incomplete; for a complete one, the
                        rows it skipped (--max-errored-rows), or empty */
  int64_t faults_applied;       /**< faults (scheduled or random) that changed the run */
  char faults_not_applied[320]; /**< the scheduled ones that did not, and why
                                     (sl_fault_log_describe()); "" when none */
} sl_summary;

typedef struct sl_recorder_s sl_recorder;

/** @brief A recorder for a run of @p plan on @p cluster (both borrowed).
 *  @p keep_tasks false records no tasks.csv rows (huge simulations). */
sl_recorder *sl_recorder_new(const sl_plan *plan, const sl_cluster *cluster, bool keep_tasks);
void sl_recorder_free(sl_recorder *r);

/** @brief Records one attempt. Returns 0 or SL_ENOMEM. */
SL_MUST_CHECK int sl_recorder_task(sl_recorder *r, const sl_task_record *t);

/** @brief Appends a timeline row at time @p t from the core's counters. */
SL_MUST_CHECK int sl_recorder_sample(sl_recorder *r, double t, const sl_core *core);

/** @brief Fills the summary fields the core knows (tasks, memory, rows...). */
void sl_summary_from_core(sl_summary *s, const sl_core *core);

/**
 * @brief The one summary both engines write: clears @p s, then fills what
 *        the core knows, the names, the JCT, the rows delivered and
 *        expected, throughput and the bound. @p bound_scale multiplies the
 *        bound (the executor's --time-scale); % of bound is given only for
 *        a @p complete run. The engine adds what is its own (accelerator,
 *        peak RSS, sink checksum, note).
 */
void sl_summary_fill(sl_summary *s, const sl_core *core, const sl_plan *plan, const sl_cluster *cluster,
                     const sl_core_opts *opts, const char *engine, double jct_s, double rows, bool complete,
                     double bound_scale);

/**
 * @brief Writes summary.csv, timeline.csv and tasks.csv into @p dir (created
 *        if missing). Returns 0, or SL_EIO with a message in @p err.
 */
int sl_recorder_write(sl_recorder *r, const sl_summary *s, const char *dir, char *err, size_t errlen);

/** @brief Writes only summary.csv (used for an interrupted run). */
int sl_summary_write(const sl_summary *s, const char *dir, char *err, size_t errlen);

/** @brief The note of the summary a run writes when it starts. */
#define SL_SUMMARY_STARTED_NOTE "started; not finished (still running or killed)"

/**
 * @brief Prepares @p dir (created if missing) for a run that starts now:
 *        removes timeline.csv, tasks.csv and the temporary files a previous
 *        run left there, and writes @p started (complete = 0, a note such
 *        as SL_SUMMARY_STARTED_NOTE) as summary.csv. A run killed before
 *        its end so leaves a summary that says it is incomplete, never an
 *        older one that looks like its result. 0, or SL_EIO with a message.
 */
int sl_run_dir_begin(const sl_summary *started, const char *dir, char *err, size_t errlen);

/** @brief Number of task records kept. */
int64_t sl_recorder_ntasks(const sl_recorder *r);

/** @brief The i-th task record. */
const sl_task_record *sl_recorder_task_at(const sl_recorder *r, int64_t i);

#endif
