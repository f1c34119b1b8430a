/**
 * @file bound.h
 * @brief The physical limit of a workload on a cluster: the best throughput
 *        any schedule could reach and the job completion time it implies.
 *
 * The throughput bound is a linear program (GLPK): how much of every
 * operator's work each node takes, so that no node's CPU or GPU slots, no
 * operator's concurrency cap and no remote-storage link is over-used. The
 * JCT bound is the largest of the area bound (all rows at that throughput),
 * the critical path (one typical partition through every operator) and
 * the bounds below that count what a fluid program misses: the cut into
 * tasks, the source's whole splits, disks at a barrier, and each
 * operator's fill and drain.
 * Plain data: the caller owns the sl_bound.
 */
#ifndef SL_BOUND_H
#define SL_BOUND_H

#include <stdio.h>

#include "cluster.h"
#include "plan.h"

typedef struct {
  double throughput_rows_s; /**< source rows per second at the bound */
  double jct_s;             /**< max(area_s, critical_path_s, task_cut_s, source_waves_s, disk_s, fill_drain_s) */
  double area_s;            /**< source rows / throughput */
  double critical_path_s;   /**< a source task, then one row through each operator up to a filter, fastest nodes */
  double whole_expansion_path_s; /**< not a bound: a source task, then a source row's whole expansion
                                      through each operator in one task (what the critical path was
                                      until an engine split it; sluice zoo sizes its drafts by it, so
                                      that a seed keeps its cases) */
  double task_cut_s;        /**< the least JCT the cut of an operator with a fixed time per task
                                 or batch allows: its area grows with its tasks, its longest task
                                 shrinks (0: none has such a time) */
  int task_cut_op;          /**< that operator, -1 when none */
  double source_waves_s;    /**< the source's splits packed whole on every slot that may run them,
                                 then its last output through the operators after it (0: its tasks
                                 vary in time, so no such bound holds) */
  double disk_s;            /**< what must touch the nodes' disks, spread over all of them: a source's
                                 input read off them, an all-to-all's input that the stores cannot
                                 hold at its barrier (written, then read back), a sink's output
                                 written (0: none, or some node has no disk, where it costs nothing) */
  double disk_held_bytes;   /**< the most that must sit on the disks at once: an all-to-all's input
                                 the stores of all nodes cannot hold at its barrier (0: none) */
  double disk_capacity_bytes; /**< what the nodes' disks hold together; 0 when some node with a disk
                                   gives no capacity (unbounded) or has no disk (spills for free) */
  double fill_drain_s;      /**< the least JCT in which every operator's work fits between its first
                                 input (or its set-up: time_setup at its fastest speed, from the start,
                                 if later) and the time its last output needs to go through the operators
                                 after it, and the source's reads from storage end in time for the
                                 split read last to be computed and go through them too (0: no more
                                 than the area) */
  int bottleneck_op;        /**< physical operator with the most work in the bottleneck */
  char bottleneck[64];      /**< "CPU", "GPU", "storage" or "concurrency" */
} sl_bound;

/** @brief Whether the disks of the cluster @p b was computed on cannot hold what must spill
 *  at once (disk_held_bytes over a bounded disk_capacity_bytes): no run can complete there. */
bool sl_bound_disks_overflow(const sl_bound *b);

/** @brief Says so in @p buf: "its disks hold 86.25 TB, less than the 99.05 TB a shuffle must
 *  spill at once". */
void sl_bound_disks_overflow_text(const sl_bound *b, char *buf, size_t n);

/**
 * @brief Computes the bound of plan @p p on cluster @p c (expanded or not:
 *        nodes are counted from c->nodes when present, else from the groups).
 * @return 0; SL_EINVAL on a NULL or empty argument; SL_EUNSAT when some
 *         operator fits on no node; SL_ENOMEM; SL_ELP when GLPK finds no
 *         optimum (e.g. no resource limits the throughput at all).
 */
int sl_bound_compute(const sl_plan *p, const sl_cluster *c, sl_bound *out);

/**
 * @brief sl_bound_compute() without naming the bottleneck (bottleneck_op
 *        -1, bottleneck ""): one linear program instead of five, for a
 *        search that bounds thousands of clusters.
 */
int sl_bound_limits(const sl_plan *p, const sl_cluster *c, sl_bound *out);

/**
 * @brief sl_bound_limits() without the network: the rate slots, caps and
 *        storage allow when transfers cost nothing. What a policy sizes
 *        its operators' shares of slots by: a task that waits for its
 *        input to arrive still holds its slot, so the network's lower rate
 *        would size them too small. Its tasks do a typical task's work, not
 *        the least any model's tasks reach: the shares are of the slots the
 *        policy's own tasks will hold.
 */
int sl_bound_compute_rate(const sl_plan *p, const sl_cluster *c, sl_bound *out);

/** The rate program's optimum as an allocation: where each operator's work
 *  runs at the bound's throughput. One optimum of possibly many (the simplex
 *  gives a vertex): read a zero as "not needed there", not "harmful there". */
typedef struct {
  double tasks[SL_MAX_OPS][SL_MAX_GROUPS]; /**< tasks of operator i running at once over group g's nodes */
  double idle_slots[SL_MAX_GROUPS][2];     /**< CPU [0] and GPU [1] slots of group g that no operator uses */
} sl_bound_allocation;

/**
 * @brief sl_bound_compute_rate(), and its optimum's allocation in @p alloc
 *        (NULL: not wanted).
 * @return as sl_bound_compute_rate().
 */
int sl_bound_rate_allocation(const sl_plan *p, const sl_cluster *c, sl_bound *out, sl_bound_allocation *alloc);

/**
 * @brief The rows a task of each operator with a fixed time per task
 *        should take: those that make the least of the area the cut's work
 *        leaves (the rate program, transfers free) plus one task on the
 *        slowest node that may run it. More tasks pay the fixed time more
 *        often; fewer leave a long last one. @p rows[i] is 0 where the
 *        usual cut (a tenth of a task's work fixed) costs no more than 1%
 *        over the best, and for an operator without a fixed time per task,
 *        a source or an all-to-all.
 * @return 0; SL_EINVAL; SL_ENOMEM.
 */
int sl_bound_task_rows(const sl_plan *p, const sl_cluster *c, double rows[SL_MAX_OPS]);

/**
 * @brief Writes a header line and one row:
 *        workload,cluster,throughput_bound_rows_s,jct_bound_s,area_s,critical_path_s,bottleneck,task_cut_s,
 *        source_waves_s,disk_s,fill_drain_s
 * @return 0 or SL_EIO.
 */
int sl_bound_write_csv(const sl_bound *b, const sl_plan *p, const sl_cluster *c, FILE *f);

/** @brief Writes the bound for a human reader. */
void sl_bound_print(const sl_bound *b, const sl_plan *p, const sl_cluster *c, FILE *f);

#endif
