/*
 * Why a job failed, in one set of words for both engines (failure.h).
 * Operator names are cut at 60 characters, so that a message fits the
 * note column of summary.csv whole.
 */
#include "failure.h"

#include <math.h>
#include <stdio.h>

#include "models/error.h"

static const char *op_name(const sl_plan *plan, int op)
{
  return op >= 0 && op < plan->nops ? plan->ops[op].name : "none";
}

void sl_failure_text(const sl_decision *d, const sl_plan *plan, const sl_cluster *cluster, const sl_core *core,
                     char *buf, size_t n)
{
  int stuck = d->op;
  switch (d->code) {
  case SL_EOOM:
    if (d->op >= 0 && d->node >= 0 && d->node < cluster->nnodes && sl_core_spills_on(core) &&
        isfinite(sl_group_disk_capacity(sl_cluster_node_group(cluster, d->node)))) {
      const sl_node_group *g = sl_cluster_node_group(cluster, d->node);
      snprintf(buf, n, "out of memory and disk: operator '%.60s' on node %d: the partition store is full (%.0f of "
               "%.0f bytes) and its disks hold %.0f of %.0f bytes spilled (disk_capacity)",
               op_name(plan, d->op), d->node, sl_core_node_store(core, d->node), g->store_bytes,
               sl_core_node_disk(core, d->node), sl_group_disk_capacity(g));
    } else if (d->op >= 0 && d->node >= 0 && d->node < cluster->nnodes)
      snprintf(buf, n, "out of memory: operator '%.60s' on node %d: the partition store is full (%.0f of %.0f bytes) "
               "and spilling is off (--on-full oom)", op_name(plan, d->op), d->node,
               sl_core_node_store(core, d->node), sl_cluster_node_group(cluster, d->node)->store_bytes);
    else
      snprintf(buf, n, "out of memory: the partition store is full and spilling is off (--on-full oom)");
    return;
  case SL_ESTALL:
    if (stuck < 0)
      stuck = sl_core_stuck_op(core);
    if (d->stalled_s > 0)
      snprintf(buf, n, "stalled: no progress for %.3g s; operator '%.60s' is stuck", d->stalled_s,
               op_name(plan, stuck));
    else
      snprintf(buf, n, "stalled: work is stranded; operator '%.60s' is stuck", op_name(plan, stuck));
    return;
  default:
    snprintf(buf, n, "%s", sl_strerror(d->code));
  }
}
