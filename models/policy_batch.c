/*
 * Batch: stage at a time, as Spark runs a job. A stage starts only when
 * every task of the previous one has ended; each task reads one partition
 * and writes one materialized partition (static partitioning); a lost
 * partition is recomputed by re-running the task that wrote it.
 */
#include <math.h>

#include "core_internal.h"
#include "error.h"

static int batch_init(sl_core *c, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  c->pstate = NULL;
  return 0;
}

static bool stage_open(const sl_core *c, int op)
{
  return op == 0 || sl__op_drained(c, op - 1);
}

/* Spreads a stage's tasks over nodes; the first node that fits. */
static bool launch_next(sl_core *c, double now, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  sl__op *s = &c->ops[op];
  bool fits = false;
  for (int n = 0; n < c->nnodes && !fits; n++)
    fits = sl__fits(c, n, op);
  if (!fits)
    return false;
  if (o->concurrency > 0 && s->running >= o->concurrency)
    return false;
  sl_task_id id;
  if (o->kind == SL_OP_SOURCE) {
    if (s->next_split >= o->tasks)
      return false;
    id = sl__task_new(c, op, NULL, 0, s->next_split++);
  } else if (o->kind == SL_OP_ALL_TO_ALL) {
    if (!sl__all_to_all_ready(c, op))
      return false;
    id = sl__make_all_to_all(c, op); /* the stage is open: every input is in */
  } else {
    if (sl__idq_empty(&s->inq))
      return false;
    /* map_batches still groups rows into its batch; plain maps keep the
     * upstream partitioning: one task per partition */
    id = sl__take_inputs(c, op, sl__gathers(c, op), false, -1);
  }
  if (id == SL_NONE)
    return false;
  int node = sl__pick_node(c, op, &c->tasks[id]);
  if (node < 0) { /* a push merge whose node is busy waits for it */
    sl__enqueue_id(c, &s->retryq, id);
    return true;
  }
  sl__launch(c, now, id, node);
  return true;
}

static void batch_schedule(sl_core *c, double now)
{
  /* recovery first: re-runs of any stage may run whenever they fit */
  for (int i = 0; i < c->nops; i++)
    sl__launch_retries(c, now, i);
  for (int i = 0; i < c->nops; i++) {
    if (!stage_open(c, i))
      break;
    while (launch_next(c, now, i))
      ;
  }
}

/* Every output is materialized: in memory while it fits, then on disk (or
 * an OOM when spilling is off). A stage never waits for its consumer. */
static int batch_admit(sl_core *c, double now, sl__task *t, double bytes, sl_emit_fate *fate)
{
  (void)now;
  const sl__node *nd = &c->nodes[t->node];
  if (nd->store_used + bytes <= nd->store_budget + 1e-9) {
    *fate = SL_EMIT_STORED;
    return 0;
  }
  if (!sl__may_spill(c, t->node, bytes))
    return SL_EOOM;
  *fate = SL_EMIT_SPILLED;
  return 0;
}

static double batch_target(const sl_core *c, int op)
{
  (void)op;
  return sl__target_bytes(c); /* one output partition per task */
}

const sl__policy sl__policy_batch = {
  .name = "batch",
  .init = batch_init,
  .fini = NULL,
  .schedule = batch_schedule,
  .admit = batch_admit,
  .target_bytes = batch_target,
};
