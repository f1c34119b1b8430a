/**
 * @file profile.h
 * @brief System cost profiles: what a real data system charges beside the
 *        operators' own work, folded into a plan so that every engine and
 *        the bound charge it alike.
 *
 * A workload spec gives what its operators cost. A system that runs them
 * adds its own costs: each task is submitted, scheduled and reported (an
 * RPC round trip in Ray, a task launch in Spark), each partition is put
 * into and fetched from an object store, bytes are copied into that store,
 * and a Python operator inside a JVM system has every row serialized
 * across the language boundary and back. A profile names those costs per
 * task, per partition and per byte; sl_profile_apply() adds them to each
 * physical operator's time_per_task and time_per_row, so the core sizes,
 * paces and bounds the run by them and both engines charge them through
 * the one task-time function (sl_plan_task_time()).
 *
 * Partitions per row come from the plan's typical task
 * (sl_plan_typical_rows()): a task whose whole output is under a target
 * partition emits one partition, whatever the target. Transfers between
 * nodes and spills to disk are the engines' (the cluster's NICs and disks),
 * not a profile's.
 *
 * The `ideal` profile charges nothing: the operators' work alone.
 */
#ifndef SL_PROFILE_H
#define SL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

/** @brief A system's costs. Every field 0 charges nothing. */
typedef struct {
  char name[SL_NAME_MAX];
  double task_s;            /**< per task: submission, scheduling and completion */
  double put_s;             /**< per output partition put into the store */
  double get_s;             /**< per input partition fetched from the store */
  double put_bps;           /**< bytes per second of copying output into the store; 0: no copy */
  double get_bps;           /**< bytes per second of copying input out of it; 0: read in place */
  double serialize_bps;     /**< bytes per second of serializing across a language boundary
                                 (charged on a task's input and its output); 0: none */
} sl_profile;

/** @brief The ideal system: no cost beyond the operators' work. */
void sl_profile_ideal(sl_profile *p);

/** @brief Whether @p p charges anything. */
bool sl_profile_charges(const sl_profile *p);

/**
 * @brief Seconds per input row that @p prof adds to operator @p i of @p plan
 *        (store puts and gets spread over the rows of a typical partition,
 *        copies, serialization), at speed 1.
 */
double sl_profile_row_cost(const sl_plan *plan, int i, const sl_profile *prof);

/**
 * @brief Adds @p prof's costs to every physical operator of @p plan:
 *        task_s to time_per_task, sl_profile_row_cost() to time_per_row.
 *        Computed from the plan as it was, so the order of operators
 *        does not matter. An ideal profile leaves the plan as it is.
 */
void sl_profile_apply(sl_plan *plan, const sl_profile *prof);

#endif
