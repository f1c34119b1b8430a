/**
 * @file zoo.h
 * @brief The workload zoo: a seeded generator of pipelines and clusters,
 *        written as ordinary workload and cluster specs.
 *
 * Case i (1-based) of seed s is a pure function of (s, i, small): the zoo
 * of `--count 20` is the first twenty cases of `--count 200`, and the same
 * seed gives byte-identical files on every run. A case is a pipeline of 2
 * to 6 operators (a source that reads from storage or generates its rows,
 * then maps and map_batches on CPU, GPU or both, with fractional requests,
 * expansions up to 1 -> 32 rows, shrinks down to 1 row in 8, batch sizes,
 * concurrency caps and sometimes an accelerator pin) and a sink; its
 * cluster has 1 to 64 nodes in 1 to 4 groups of unequal speeds (CPU-only,
 * CPU+GPU and GPU-only groups), store budgets of 4 to 64 target partitions
 * per node (0.5 to 4 per slot, drawn once per case), and a storage link
 * and NICs that sometimes bind. Every operator fits some group, and a
 * static placement can give every operator an instance, by construction;
 * no task's whole output exceeds half the smallest store where rows can
 * be made small enough (runs without dynamic partitioning need it).
 *
 * Costs are scaled so that the bound (models/bound.h) of a full case lies
 * in tens to hundreds of simulated seconds (the job usually
 * throughput-bound: more read tasks until the area is 3x the critical
 * path, where the cap allows) with at most SL_ZOO_MAX_TASKS tasks; a small
 * case (--small) is a run of seconds on this machine with sleep kernels
 * (few nodes and slots, few tasks, kilobyte rows), rescaled by a measure
 * when one is given (sl_zoo_opts.measure).
 *
 * Shrinks stay exact: where a pipeline keeps 1 row in d, every size is a
 * power of two and every row count a partition or a task sees is a
 * multiple of d, so no task rounds its output rows and the sink receives
 * exactly what the plan expects.
 */
#ifndef SL_ZOO_H
#define SL_ZOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/workload.h"

/** @brief Most cases one call writes. */
#define SL_ZOO_MAX_COUNT 10000
/** @brief Most tasks (all operators) the plan of a full case expects. */
#define SL_ZOO_MAX_TASKS 20000
/** @brief Most tasks the plan of a small case expects. */
#define SL_ZOO_MAX_TASKS_SMALL 400

/**
 * @brief Measures a case as written: the seconds a run of it takes, or a
 *        negative number when it cannot say. The CLI's, for --small, is a
 *        streaming simulation, which a real run on this machine follows
 *        closely; the zoo itself knows nothing of the engines.
 */
typedef double (*sl_zoo_measure_fn)(const char *workload, const char *cluster, void *ctx);

/** @brief What to generate. */
typedef struct {
  uint64_t seed; /**< the zoo's seed (below 2^63) */
  int count;     /**< cases 1..count, 1 to SL_ZOO_MAX_COUNT */
  bool small;    /**< cases sized for a real run on this machine */
  /** Give the operators that stand for actors (a GPU, or batches) a set-up
   *  per slot, as a model load: half to five of its typical tasks' time,
   *  drawn from a stream of its own, so the other draws stay as they are. */
  bool setups;
  /** NULL: costs are scaled to the bound alone. Else every case is measured
   *  once written, and its costs scaled again (at most 3 times, by 1/16 to
   *  16 in all) until it measures within 25% of run_target_s: the bound
   *  says what the cluster could do, not what a model makes of it. */
  sl_zoo_measure_fn measure;
  void *measure_ctx;
  double run_target_s;
} sl_zoo_opts;

/** @brief What one case is, as index.csv says it. Plain data. */
typedef struct {
  int index;                /**< 1-based case number */
  uint64_t seed;            /**< the case's own seed (also its workload seed) */
  char name[SL_NAME_MAX];   /**< "case-007": the workload's name and file stem */
  int ops;                  /**< logical operators, source included, sink excluded */
  int physical_ops;         /**< after fusion */
  double max_expansion;     /**< largest rows_out_per_row of an operator */
  double min_expansion;     /**< smallest (below 1: a shrink) */
  int nodes, groups;
  int gpu_only_groups;      /**< groups with GPUs and no CPU slot */
  double budget_parts;      /**< store budget per node in target partitions
                                 (the smallest of the groups') */
  double budget_parts_max;  /**< the largest of the groups' */
  double target_partition_bytes;
  double bound_s;           /**< JCT bound of the specs as written */
  double area_s;            /**< its area (throughput) part */
  double critical_path_s;   /**< its critical path part (one typical task each) */
  char bottleneck[64];      /**< the bound's bottleneck class */
  double tasks;             /**< tasks the plan expects, all operators */
  double source_rows, sink_rows;
  bool reads_storage;       /**< the source fetches bytes from storage */
  bool storage_binds;       /**< storage bandwidth below the compute rate */
  bool nic_tight;           /**< NICs within 1.5x of the estimated traffic */
  bool pinned;              /**< some operator names an accelerator */
  bool spread;              /**< task times vary (time_spread) */
  double measured_s;        /**< the last measure of the case as written; 0: none */
  double run_scale;         /**< the measure's rescaling of its costs (1: none) */
  char description[256];    /**< one line, no commas */
} sl_zoo_case;

/** @brief The seed of case @p index of zoo seed @p seed. */
uint64_t sl_zoo_case_seed(uint64_t seed, int index);

/**
 * @brief Writes cases 1..o->count into @p dir (created, with its parents,
 *        when missing): dir/case-NNN.ini, dir/case-NNN.cluster.ini and
 *        dir/index.csv, each under a temporary name renamed when complete.
 *        Every case is read back with the spec loaders, checked feasible,
 *        planned and bounded before the next is written.
 * @param cases o->count records filled as the cases are written, or NULL.
 * @return 0; SL_EINVAL for bad options (count out of range, NULL dir); SL_EIO
 *         when a file cannot be written; the loader's, plan's or bound's
 *         code when a generated case does not check (a bug of the
 *         generator). @p err names the file and what is wrong.
 */
int sl_zoo_write(const sl_zoo_opts *o, const char *dir, sl_zoo_case *cases, char *err,
                 size_t errlen);

/**
 * @brief Loads the workload spec @p workload and the cluster spec @p cluster,
 *        checks that every operator fits, builds the plan and its bound, and
 *        fills the measured fields of @p info (ops, physical_ops, nodes,
 *        groups, gpu_only_groups, budget_parts, budget_parts_max,
 *        target_partition_bytes, expansions, bound_s, area_s,
 *        critical_path_s, bottleneck, tasks,
 *        rows, reads_storage, pinned); the others are left alone.
 * @return 0, or the loader's, sl_check_feasible()'s, the plan's or the
 *         bound's code with the message in @p err.
 */
int sl_zoo_check(const char *workload, const char *cluster, sl_zoo_case *info, char *err,
                 size_t errlen);

#endif
