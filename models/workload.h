/**
 * @file workload.h
 * @brief The logical workload: a pipeline of operators with their resource
 *        requests and cost models, as a spec describes it.
 *
 * The spec parser (workloads/spec.h) fills these records; the plan
 * (plan.h) fuses them into physical operators. Plain data with no pointers
 * inside: whoever holds an sl_workload owns all of it, and copies it by
 * assignment.
 */
#ifndef SL_WORKLOAD_H
#define SL_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_NAME_MAX 48
#define SL_MAX_OPS 32
#define SL_MAX_PARAMS 8
#define SL_MAX_ACCELS 4

/**
 * @brief The accelerators an operator may run on: the labels of the node
 *        groups (sl_node_group.accelerator) whose nodes may take its tasks.
 *
 * Empty (n == 0) means any node, as before pinning existed. A spec writes
 * it as `accelerator = a100` or `accelerator = a10g, a100` (any of them).
 */
typedef struct {
  int n;
  char names[SL_MAX_ACCELS][SL_NAME_MAX];
} sl_accel_set;

/** @brief Where a sink writes what it takes (`write_to`). */
typedef enum {
  SL_WRITE_NONE,    /**< nowhere: the rows are counted and checked */
  SL_WRITE_DISK,    /**< to the disks of the node that made the partition (a sort's output) */
  SL_WRITE_STORAGE, /**< to remote storage over the storage link (S3), a PUT per request */
} sl_write_to;

typedef enum {
  SL_OP_SOURCE,      /**< read tasks: no input partitions, one task per split */
  SL_OP_MAP,         /**< a stateless per-row transform on a task pool */
  SL_OP_MAP_BATCHES, /**< per-batch transform on an actor pool (e.g. a model) */
  SL_OP_ALL_TO_ALL,  /**< every output depends on every input (shuffle, sort) */
  SL_OP_SINK,        /**< consumes rows; checks exactly-once delivery */
} sl_op_kind;

/** @brief A named numeric kernel parameter (image width, GEMM layers...). */
typedef struct {
  char name[SL_NAME_MAX];
  double value;
} sl_param;

/**
 * @brief How an all-to-all moves its blocks (Exoshuffle's variants).
 *
 * simple: each reducer reads its block of every input (M x R blocks).
 * The others add a merge stage before the reducers, whose tasks combine
 * merge_factor inputs as they arrive: merge (Riffle) into one partition
 * on their node, holding every reducer's block; push (Magnet) into one
 * partition per node, holding the blocks of the reducers that node will
 * run; push-star (Exoshuffle's two-stage) as push, with the inputs made in
 * rounds that run at most concurrent_rounds ahead of their merges.
 */
typedef enum {
  SL_SHUFFLE_SIMPLE,
  SL_SHUFFLE_MERGE,
  SL_SHUFFLE_PUSH,
  SL_SHUFFLE_PUSH_STAR,
} sl_shuffle_strategy;

/** @brief What a real run's sink proves of the output beyond "each row once". */
typedef enum {
  SL_CHECK_NONE,   /**< rows and checksum, as every run */
  SL_CHECK_SORTED, /**< valsort: each partition sorted by key, partitions in key order, the same
                        records as the source made (gensort) */
  SL_CHECK_GROUPED, /**< a groupby's output: one row per group, each with the count, sum, min and
                         max that the source's records (gensort's) give it */
} sl_check;

/**
 * @brief One logical operator.
 *
 * Costs are in seconds at speed 1 of the operator's resource class (GPU when
 * gpu > 0, else CPU). A task's modelled duration is
 *   time_per_task + rows_in * time_per_row + ceil(rows_in / batch) * time_per_batch
 *   + bytes_in * time_per_byte.
 */
typedef struct {
  char name[SL_NAME_MAX];
  char kernel[SL_NAME_MAX]; /**< kernel name (workloads/kernels.h) */
  int line;                 /**< line of the section header in the spec */
  sl_op_kind kind;
  double cpu, gpu;          /**< resource request per task (fractions allowed) */
  double time_per_task, time_per_row, time_per_batch, time_per_byte;
  double time_setup;        /**< once per slot, before the slot's first task of this operator
                                 (loading a model, starting a CUDA context): not per task */
  double time_spread;       /**< coefficient of variation of task time (sim) */
  double rows_out_per_row;  /**< expansion (1 = one output row per input row) */
  double out_row_bytes;     /**< bytes of one output row; 0 = keep input size */
  double inflation;         /**< output bytes per input byte, 0 = not given (out_row_bytes decides) */
  char reorder_group[SL_NAME_MAX]; /**< operators of one group may run in any order; "" = none */
  int keep_position;        /**< 1: stays where the spec puts it within its reorder group */
  int check;                /**< sink: what a real run proves of its output (SL_CHECK_*) */
  int read_from_disk;       /**< source: 1 reads read_bytes_per_row off its node's disks, 0 from storage */
  int write_to;             /**< sink: where each partition it takes is written (sl_write_to) */
  int outputs_at_end;       /**< 1: a task's outputs appear when it ends (a sort), 0: as it makes them */
  /* all_to_all only: how it shuffles (sl_shuffle_strategy) */
  int strategy;
  int merge_factor;         /**< inputs one merge task combines */
  int concurrent_rounds;    /**< push-star: rounds of inputs ahead of their merges */
  double map_parallelism;   /**< push-star: producer tasks per node in a round, 0 = half its CPUs */
  double merge_time_per_byte; /**< a merge task's cost per input byte at speed 1 */
  int batch_size;           /**< rows per task for map_batches (0 = any) */
  int concurrency;          /**< max tasks in flight, 0 = unlimited */
  sl_accel_set accel;       /**< node groups it may run on; empty: any */
  /* source only */
  int64_t tasks;            /**< source: read tasks (splits); all_to_all: reducers */
  int64_t rows_per_task;    /**< rows each read task yields */
  double read_bytes_per_row;/**< bytes fetched from remote storage per row */
  int nparams;
  sl_param params[SL_MAX_PARAMS];
} sl_op_spec;

/** @brief A whole workload: its operators in pipeline order. */
typedef struct {
  char name[SL_NAME_MAX];
  char path[256];           /**< the spec file it came from */
  double target_partition_bytes; /**< dynamic partitioning target size */
  uint64_t seed;            /**< seeds row contents and cost draws */
  int nops;
  sl_op_spec ops[SL_MAX_OPS];
} sl_workload;

/**
 * @brief Bytes of one output row of operator @p i as the pipeline is
 *        ordered now: its input row's size times its inflation when it has
 *        one, else out_row_bytes, else its input row's size (a source:
 *        out_row_bytes). What plan.c builds on and the executor's copying
 *        kernels write, so a reordered pipeline sizes its rows by the same
 *        rule everywhere.
 */
double sl_workload_out_row_bytes(const sl_workload *w, int i);

/** @brief Rows the sources of @p w produce in all. */
int64_t sl_workload_source_rows(const sl_workload *w);

/** @brief A parameter's value, or @p dflt when the operator has none. */
double sl_op_param(const sl_op_spec *op, const char *name, double dflt);

/** @brief Whether two accelerator sets name the same labels (in any order). */
bool sl_accel_set_equal(const sl_accel_set *a, const sl_accel_set *b);

/** @brief Whether @p s names @p label. */
bool sl_accel_set_has(const sl_accel_set *s, const char *label);

/** @brief Writes the set as "a10g,a100" into @p buf ("" when empty). */
void sl_accel_set_format(const sl_accel_set *s, char *buf, size_t len);

/** @brief The name of a shuffle strategy ("push-star"). */
const char *sl_shuffle_strategy_name(int s);

/** @brief Lower-case name of an operator kind ("map_batches"). */
const char *sl_op_kind_name(sl_op_kind k);

#endif
