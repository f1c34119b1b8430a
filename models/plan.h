/**
 * @file plan.h
 * @brief The physical plan: logical operators fused into physical ones,
 *        with aggregated cost models and the initial partitioning.
 *
 * Consecutive operators with the same resource shape (same CPU and GPU
 * request, same accelerator pin, per-row kinds, no batch size of their own)
 * run in one task, as Ray Data fuses them. The sink is not a physical operator: partitions that
 * leave the last physical operator are delivered to it.
 */
#ifndef SL_PLAN_H
#define SL_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cluster.h"
#include "workload.h"

/** @brief One physical operator. Costs are per task at speed 1. */
typedef struct {
  char name[2 * SL_NAME_MAX]; /**< fused names joined by "->" */
  int first, nfused;          /**< range of logical operators it runs */
  sl_op_kind kind;            /**< SOURCE, MAP, MAP_BATCHES or ALL_TO_ALL */
  double cpu, gpu;            /**< request per task */
  double time_per_task;       /**< fixed seconds per task */
  double time_per_row;        /**< seconds per input row (per-byte costs folded in) */
  double time_per_batch;      /**< seconds per batch of batch_size rows */
  double time_setup;          /**< seconds a slot spends setting the operator up before its
                                   first task of it (the members' sum): an actor's start */
  double time_spread;         /**< coefficient of variation of task time */
  double time_noise;          /**< coefficient of variation of a second factor on task time, drawn
                                   apart from the spread's: what a calibrated run varied beyond its
                                   drawn spread (0 from a spec) */
  bool outputs_at_end;        /**< a task's outputs appear when it ends (any member's do) */
  int batch_size;             /**< rows per task (map_batches), 0 = any */
  int concurrency;            /**< cap on tasks in flight, 0 = none */
  sl_accel_set accel;         /**< node groups its tasks may run on; empty: any */
  double rows_out_per_row;    /**< output rows per input row */
  double in_row_bytes;        /**< bytes of one input row */
  double out_row_bytes;       /**< bytes of one output row */
  double alpha_rows;          /**< output rows of this op per source row */
  /* all_to_all: the shuffle (sl_shuffle_strategy); a merge stage is the
   * all_to_all the plan puts before the reducers of a strategy other than
   * simple (see sl_pop_is_merge_stage()): it runs no kernel of its own,
   * and each of its tasks combines merge_inputs inputs */
  int strategy;
  bool merge_stage;
  int merge_inputs;
  int concurrent_rounds;
  double map_parallelism;     /**< push-star: producer tasks per node in a round, 0 = half its CPUs */
  /* source only; an all_to_all's tasks are its reducers (0 in a merge stage
   * of push: one merged partition per node) */
  int64_t tasks, rows_per_task;
  double read_bytes_per_row;  /**< from remote storage, per source row */
} sl_pop;

typedef struct {
  const sl_workload *workload; /**< borrowed: must outlive the plan */
  double target_partition_bytes;
  int nops;                    /**< physical operators (sink excluded) */
  sl_pop ops[SL_MAX_OPS];
  int64_t source_rows;         /**< rows produced by the source */
  double sink_rows;            /**< rows the sink should receive */
  bool source_from_disk;       /**< the source reads its read_bytes_per_row off its node's disks */
  bool sink_to_disk;           /**< the last operator's partitions are written to their node's disks */
  bool sink_to_storage;        /**< the last operator's partitions are uploaded to remote storage */
  char profile[SL_NAME_MAX];   /**< the system cost profile folded into the costs
                                    (models/profile.h); empty: none, the ideal system */
} sl_plan;

/** @brief What a failure-free run of @p p on @p c asks of remote storage:
 *  its sources' ranged GETs, its sink's upload parts (each partition cut
 *  at the target), and the bytes it reads and writes there, for a cost
 *  before the run (`sluice capacity`). */
void sl_plan_storage_use(const sl_plan *p, const sl_cluster *c, double *gets, double *puts, double *read_bytes,
                         double *written_bytes);

/** @brief Options of plan construction. */
typedef struct {
  int no_fusion; /**< keep every logical operator on its own */
} sl_plan_opts;

/**
 * @brief Builds the physical plan of @p w into @p out.
 * @return 0, or SL_EINVAL (with a message in @p err of @p errlen bytes) when the
 *         pipeline is not a source followed by operators and an optional sink.
 */
int sl_plan_build(sl_plan *out, const sl_workload *w, const sl_plan_opts *opts,
                  char *err, size_t errlen);

/** @brief Whether @p o waits for every input before it starts (a shuffle's
 *  reducers), where a merge stage starts as its inputs come. */
static inline bool sl_pop_is_barrier(const sl_pop *o)
{
  return o->kind == SL_OP_ALL_TO_ALL && !o->merge_stage;
}

/** @brief "1 CPU", "0.99 CPU", "1 GPU + 4 CPU", "none"; a pin adds "@a100". */
void sl_resources_format(double cpu, double gpu, const sl_accel_set *accel, char *buf, size_t len);

/**
 * @brief Output rows per partition of a task of @p op flushing at
 *        @p target_bytes: the fewest rows whose bytes reach the target, at
 *        least one; INT64_MAX when the target is infinite (one partition).
 *        The one cut both engines make.
 */
int64_t sl_plan_rows_per_part(const sl_pop *op, double target_bytes);

/** @brief Modelled duration at speed 1 of a task of @p op on @p rows input rows. */
double sl_plan_task_time(const sl_pop *op, double rows);

/**
 * @brief Multiplies every modelled time of @p p (per task, row, batch and
 *        set-up) by @p factor > 0: a run ten times faster than specified
 *        (`sluice run --time-scale 0.1`) is the plan of ten-times-faster
 *        operators, so the core sizes and paces its tasks by the times
 *        they take. The cluster's links scale with it
 *        (sl_cluster_scale_time()).
 */
void sl_plan_scale_time(sl_plan *p, double factor);

/** @brief Rows whose work, at @p time_per_row, is ten times a fixed time
 *         @p fixed_s a task pays: the usual size that amortises it (0 when
 *         nothing is fixed, infinity when rows cost nothing). */
double sl_plan_amortising_rows(double fixed_s, double time_per_row);

/** @brief Output rows of a task of @p op on @p rows input rows. */
double sl_plan_task_out_rows(const sl_pop *op, double rows);

/**
 * @brief Input rows of a typical task of operator @p i.
 *
 * A source task generates rows_per_task rows; a map_batches operator with a
 * batch size gets exactly one batch; any other operator gets one target-size
 * partition, never more rows than one typical upstream task emits (a
 * partition does not span producer tasks) nor than reach the operator in all.
 * At least one row.
 */
double sl_plan_typical_rows(const sl_plan *p, int i);

/** @brief Rows reaching operator @p i over the whole job (a source: source_rows). */
double sl_plan_rows_in(const sl_plan *p, int i);

/** @brief Expected tasks of operator @p i (a source: its splits). */
double sl_plan_expected_tasks(const sl_plan *p, int i);

/**
 * @brief Seconds of operator @p i's work per source row at speed 1: the
 *        typical task's time divided by the source rows that task represents.
 */
double sl_plan_work_per_source_row(const sl_plan *p, int i);

/**
 * @brief The least seconds of operator @p i's work per source row at speed 1
 *        that any execution model can reach: per-task costs spread over the
 *        largest task an engine may form (sl_plan_largest_task_rows), per-batch
 *        costs over full batches. What a lower bound may charge.
 */
double sl_plan_least_work_per_source_row(const sl_plan *p, int i);

/**
 * @brief The most input rows a task of operator @p i can take: a source its
 *        split; else the larger of a target partition's worth of rows (what
 *        a task coalesces up to), one whole output of a producer task (a
 *        partition that no model cut) and a batch; at most every row.
 */
double sl_plan_largest_task_rows(const sl_plan *p, int i);

/**
 * @brief How an execution model cuts and gathers partitions; core.h gives
 *        each model's (sl_core_opts_sizing), which its policy follows.
 */
typedef struct {
  double target_bytes; /**< a task cuts its output at this size; INFINITY: one partition per task */
  bool gather_maps;    /**< a map task takes queued partitions while their bytes stay within target_bytes */
  bool gather_batches; /**< a map_batches task takes queued partitions while they bring it closer to
                            whole batches (sl_plan_batch_gains) */
} sl_sizing_rule;

/** @brief How the engines size the tasks of one operator under a rule. */
typedef struct {
  double cut_rows;  /**< rows of an upstream partition as the target cuts them (0 for a source) */
  double up_task_rows; /**< rows an upstream task emits, on average (0 for a source) */
  double part_rows; /**< rows of an input partition on average: cuts, and the rest of each upstream
                         task's output (a partition never spans producer tasks) */
  double parts;     /**< input partitions of a task, on average */
  double rows;      /**< input rows of a task, on average (the last task of the job aside) */
  double rows_min, rows_max; /**< the fewest and most rows of a task (the last aside) */
  double tasks;     /**< tasks over the job when every task takes all it may */
  double tasks_max; /**< tasks when every task takes the one partition it starts with: a gathering
                         map takes what is queued when it launches, so its count falls between the two */
} sl_task_sizing;

/**
 * @brief Whether @p more rows join a task of @p rows rows with batches of
 *        @p batch rows: only while the task is short of a batch and the
 *        rows per batch it will run grow. The one rule every model gathers by.
 */
bool sl_plan_batch_gains(int64_t rows, int64_t more, int batch);

/**
 * @brief The tasks of operator @p i as the engines size them under @p rule:
 *        an operator after the source takes whole partitions of its
 *        upstream, cut at the rule's target, and gathers them as the rule
 *        says. The last task of the job may take fewer.
 */
void sl_plan_task_sizing(const sl_plan *p, int i, const sl_sizing_rule *rule, sl_task_sizing *out);

/**
 * @brief Writes the plan for a human reader; with a @p rule, the tasks as
 *        that model's engines size them, and a note for every operator
 *        whose task size or count is decided at run time. NULL: the rule of
 *        the default model cannot be known here, and the typical tasks the
 *        bound uses are printed.
 */
void sl_plan_print_sized(const sl_plan *p, const sl_cluster *c, const sl_sizing_rule *rule, const char *model,
                         FILE *f);

/** @brief Writes the plan for a human reader (the bound's typical tasks). */
void sl_plan_print(const sl_plan *p, const sl_cluster *c, FILE *f);

#endif
