/**
 * @file faults.h
 * @brief Failure schedules for the simulator: `--fail SCHEDULE`.
 *
 * A schedule is a comma-separated list of events:
 *
 *   kill:OP@TIME    kill one running task of operator OP (the lowest task
 *                   id among those running), as a crashed worker process
 *   kill@TIME       the same, any operator
 *   lose:NODE@TIME  the node goes down: its tasks and partitions are lost
 *   join:NODE@TIME  the node (back) in service, empty
 *
 * OP is a physical operator's name as `sluice plan` prints it, or the name
 * of one of the logical operators fused into it. NODE is a node index
 * (`1`), or a group name with an index in the group (`cpu.0`,
 * `m6i.2xlarge.0`), or a group name alone when the group has one node.
 * TIME carries a unit (`15s`, `900ms`, `15min`; a bare number is seconds).
 * Events apply in time order, ties in the written order.
 */
#ifndef SL_SIM_FAULTS_H
#define SL_SIM_FAULTS_H

#include <stddef.h>

#include "models/cluster.h"
#include "models/plan.h"

typedef enum { SL_FAULT_KILL, SL_FAULT_LOSE, SL_FAULT_JOIN } sl_fault_kind;

typedef struct {
  sl_fault_kind kind;
  double time_s;
  int op;   /**< KILL: physical operator, -1 for any */
  int node; /**< LOSE, JOIN: node index */
} sl_sim_fault;

/** @brief A resolved schedule; owns its array (sl_sim_faults_free). */
typedef struct {
  sl_sim_fault *v;
  int n;
} sl_sim_faults;

/**
 * @brief Parses @p schedule and resolves its operators and nodes against
 *        @p plan and @p c (expanded). On error returns SL_EPARSE with a
 *        message naming the event in @p err, and leaves @p out empty.
 */
int sl_sim_faults_parse(const char *schedule, const sl_plan *plan, const sl_cluster *c, sl_sim_faults *out,
                        char *err, size_t errlen);

void sl_sim_faults_free(sl_sim_faults *f);

/** @brief Resolves a node reference (`3`, `cpu.0`, `gpu`); -1 when none matches. */
int sl_sim_node_ref(const sl_cluster *c, const char *ref);

/** @brief Resolves an operator name to a physical operator; -1 when none matches. */
int sl_sim_op_ref(const sl_plan *plan, const char *name);

#endif
