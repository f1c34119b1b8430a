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
  double transfer_s; /**< receiving its inputs: storage reads and partitions from other nodes */
  double transfer_bytes; /**< the bytes it received so: from storage and from other nodes */
  /* its node's disk: writing the outputs the core spilled, reading back the
   * spilled inputs (seconds and bytes; not in transfer_s) */
  double spill_write_s, spill_write_bytes, spill_read_s, spill_read_bytes;
  double spread;     /**< the spread factor its charged time carries (1: none, or a real kernel's
                          own time): what a calibration divides out */
  bool fresh;        /**< its slot's first task of the operator: it paid the set-up (time_setup,
                          or a real kernel's own start), which a calibration measures apart */
  double dispatch_s; /**< from the core's LAUNCH to its start: the slot was taken but idle (a
                          worker thread waking); the simulator starts at once (0) */
  double handoff_s;  /**< a done attempt whose own finish gave its slot the next task: from its
                          end until that order reached the slot (the worker handing its finish
                          to the core and getting its next task back, on a host whose CPUs
                          may all be busy); -1 when its finish gave its slot nothing */
} sl_task_record;

/** @brief How the time spent spilling partitions enters a run's JCT. */
typedef enum {
  SL_SPILL_NONE,         /**< nothing was spilled */
  SL_SPILL_NOT_MODELLED, /**< simulated without a spill disk (--spill-bandwidth): spills took no time */
  SL_SPILL_MODELLED,     /**< simulated with a spill disk: every write and read back was charged */
  SL_SPILL_REAL,         /**< a real run: the executor wrote and read real files */
} sl_spill_time;

/** @brief The word summary.csv writes for @p t: none, not_modelled, modelled or real. */
const char *sl_spill_time_name(sl_spill_time t);

/** @brief The partition store of one node group over a run. */
typedef struct {
  char name[SL_NAME_MAX];
  int nodes;
  double budget_bytes; /**< of each of its nodes */
  double peak_bytes;   /**< the most any one of its nodes held at once */
  int peak_node;       /**< that node (cluster index); the group's first node when none held a byte */
  int peak_index;      /**< its index in the group (GROUP.INDEX) */
} sl_group_store;

/** @brief The one-row summary. Columns are listed in record.c and
 *  documented in docs/outputs.md. */
typedef struct {
  char workload[64], cluster[64], model[32], engine[16], accelerator[16];
  double jct_s, throughput_rows_s, bound_s, pct_of_bound;
  double bound_throughput_rows_s; /**< sink rows per second at the bound's steady rate */
  double peak_node_store_bytes;   /**< the most any one node's store held at once */
  int peak_store_node;            /**< that node (cluster index), -1 when no byte was stored */
  char peak_store_node_name[SL_NAME_MAX + 16]; /**< "GROUP.INDEX" */
  double peak_node_budget_bytes;  /**< that node's store budget */
  int ngroups;
  sl_group_store groups[SL_MAX_GROUPS];
  double peak_rss_bytes, spilled_bytes;
  sl_spill_time spill_time;
  int64_t tasks, retried_tasks, lost_partitions, checkpoints, rollbacks;
  double rows, expected_rows, first_output_s;
  double rows_rolled_back;        /**< rows the sink gave back in rollbacks */
  double cpu_slots, gpu_slots;    /**< of the whole cluster */
  char gpu_operators[256];        /**< operators that request a GPU, as timeline identifiers, space separated */
  bool oom, complete;
  uint64_t sink_checksum;
  int64_t errored_rows; /**< rows kernels rejected as corrupt and skipped */
  char output_check[16]; /**< what the sink proved beyond each row once: "" (nothing asked, or a
                              simulation: no payloads), passed, failed, not_checked (the run failed) */
  char note[320];  /**< why a run is incomplete; for a complete one, the
                        rows it skipped (--max-errored-rows), or empty */
  int64_t faults_applied;       /**< faults (scheduled or random) that changed the run */
  char faults_not_applied[320]; /**< the scheduled ones that did not, and why
                                     (sl_fault_log_describe()); "" when none */
  sl_idle_breakdown cpu_time, gpu_time; /**< where the capacity went (sl_core_idle()) */
  double startup_s; /**< the engine's own start, before the job's clock: the executor's GPU probe,
                         kernel checks and worker threads; 0 in a simulation. Not in jct_s */
  double time_scale; /**< a real run's --time-scale: its plan's times and its links were scaled by
                          it (1 as specified, and in a simulation) */
  bool real_kernels; /**< a real run in which some attempt ran a kernel that takes its own time
                          (not the cost model's): the spec's costs are only its estimates */
  char bound_costs[16]; /**< what bound_s is computed from: "spec" (the plan's costs), or
                             "measured" (a real run of real kernels: its own tasks, fitted as
                             sluice calibrate fits them) */
  char profile[48];     /**< the system cost profile the plan's costs include (models/profile.h):
                             "ideal" when none */
  double storage_gets, storage_puts; /**< requests to remote storage (sl_core_stats) */
  sl_run_cost cost;     /**< dollars: the cluster's nodes over jct_s (elastic ones while held), the
                             requests, the bytes held */
  char autoplace[16];   /**< with elastic groups: who preprocessed (sl_autoplace_name()), else "" */
  int pool_acquired;    /**< elastic nodes acquired over the run */
  int pool_peak;        /**< the most held at once */
  double pool_node_s;   /**< their billed node-seconds */
  double pool_cost_usd; /**< those seconds at their prices: the CPU workers' share of cost.instances */
  double host_cost_usd; /**< the other nodes' share (the accelerator hosts) */
  double shuffle_bytes; /**< what the all-to-all operators read (sl_core_stats.shuffle_bytes) */
  double disk_bound_s;  /**< the bound's disk term (sl_bound.disk_s): the data that must touch disk,
                             read and written the fewest times at the disks' bandwidth; 0 with no disk */
  double disk_read_bps, disk_write_bps; /**< the disk that term used when a real run measured it
                                             (its spills); 0: the cluster spec's, or none */
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

/**
 * @brief Appends a timeline row at time @p t that marks a fault the engine
 *        has just applied, its `event` column reading "@p kind:@p target"
 *        as a --fail schedule writes it ("lose:gpu.1", "kill:decode").
 *        The row's throughput is the previous row's: a rate over the
 *        instant since the last sample would mean nothing.
 */
SL_MUST_CHECK int sl_recorder_fault(sl_recorder *r, double t, const sl_core *core, const char *kind,
                                    const char *target);

/**
 * @brief Appends a timeline row at time @p t that marks a rollback the core
 *        has just decided: `event` reads "rollback:N", N the rows the sink
 *        gave back (the core's count since the previous row).
 */
SL_MUST_CHECK int sl_recorder_rollback(sl_recorder *r, double t, const sl_core *core);

/** @brief Fills the summary fields the core knows (tasks, memory, rows...). */
void sl_summary_from_core(sl_summary *s, const sl_core *core);

/**
 * @brief @p name as a plain identifier for a CSV column: every run of
 *        characters other than letters, digits and '_' becomes one '_',
 *        none leads or trails ("read->decode" gives "read_decode",
 *        "g5.2xlarge" gives "g5_2xlarge"); "x" if nothing is left.
 */
void sl_csv_identifier(const char *name, char *buf, size_t len);

/**
 * @brief The one summary both engines write: clears @p s, then fills what
 *        the core knows, the names, the JCT, the rows delivered and
 *        expected, throughput and the bound; % of bound is given only for
 *        a @p complete run. The engine adds what is its own (accelerator,
 *        peak RSS, sink checksum, note).
 */
void sl_summary_fill(sl_summary *s, const sl_core *core, const sl_plan *plan, const sl_cluster *cluster,
                     const sl_core_opts *opts, const char *engine, double jct_s, double rows, bool complete);

/** @brief The most columns sl_summary_read_columns() keeps (summary.csv writes about 60). */
#define SL_SUMMARY_MAX_COLUMNS 96

/** @brief A summary.csv read back: its header's names and its row's values, as text. */
typedef struct {
  int n;
  char names[SL_SUMMARY_MAX_COLUMNS][64];
  char values[SL_SUMMARY_MAX_COLUMNS][1024];
} sl_summary_columns;

/**
 * @brief Reads the header and the first row of the summary.csv at @p path
 *        into @p out (about 100 KB: keep it off small stacks), with libcsv,
 *        so that a note that quotes commas keeps the columns after it in
 *        place. Columns past SL_SUMMARY_MAX_COLUMNS, and text past a
 *        field's room, are left out.
 * @return 0; SL_EIO when the file cannot be read.
 */
int sl_summary_read_columns(const char *path, sl_summary_columns *out);

/** @brief The value of column @p name in @p c; "" when there is none. */
const char *sl_summary_column(const sl_summary_columns *c, const char *name);

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

/** @brief Sets the handoff_s of task row @p i (sl_recorder_ntasks() - 1
 *  right after sl_recorder_task()): an engine knows it only once the
 *  attempt's finish has been decided on. No effect on a row not kept. */
void sl_recorder_set_handoff(sl_recorder *r, int64_t i, double handoff_s);

#endif
