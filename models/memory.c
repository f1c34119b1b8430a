/*
 * Memory accounting: the bytes in each node's store and their peaks, which
 * emissions a store takes, which wait (a paused task holds its slot), and
 * when waiting tasks resume. The liveness rule lives here too: when every
 * running task waits for room only they could make, one goes through.
 */
#include "core_internal.h"

#include <math.h>
#include <stdio.h>

#define EPS 1e-9

void sl__store_add(sl_core *c, int node, double bytes)
{
  sl__node *nd = &c->nodes[node];
  nd->store_used += bytes;
  c->stats.store_bytes += bytes;
  if (nd->store_used > nd->store_peak)
    nd->store_peak = nd->store_used;
  if (nd->store_used > c->stats.peak_store_bytes) {
    c->stats.peak_store_bytes = nd->store_used;
    c->stats.peak_store_node = node;
  }
}

void sl__store_sub(sl_core *c, int node, double bytes)
{
  sl__node *nd = &c->nodes[node];
  nd->store_used -= bytes;
  c->stats.store_bytes -= bytes;
  if (nd->store_used < EPS)
    nd->store_used = 0;
  if (c->stats.store_bytes < EPS)
    c->stats.store_bytes = 0;
}

bool sl__may_spill(const sl_core *c, int node, double bytes)
{
  const sl__node *nd = &c->nodes[node];
  return c->opts.on_full != SL_FULL_OOM && nd->disk_used + bytes <= nd->disk_capacity + EPS;
}

bool sl__someone_progresses(const sl_core *c, const sl__task *except)
{
  int progressing = 0;
  for (int i = 0; i < c->nops; i++)
    progressing += c->ops[i].running - c->ops[i].waiting;
  if (except && except->state == SL__T_RUNNING && !except->waiting)
    progressing--;
  return progressing > 0;
}

int sl__admit_memory(sl_core *c, sl__task *t, double bytes, sl_emit_fate *fate)
{
  return sl__admit_memory_keeping(c, t, bytes, 0, fate);
}

int sl__admit_memory_keeping(sl_core *c, sl__task *t, double bytes, double keep, sl_emit_fate *fate)
{
  sl__node *nd = &c->nodes[t->node];
  if (nd->store_used + bytes <= nd->store_budget - keep + EPS) {
    *fate = SL_EMIT_STORED;
    return 0;
  }
  if (t->spill_next || !sl__someone_progresses(c, t)) {
    /* Every running task waits for memory that only they could free: the
     * liveness rule lets this emission through, to disk or to an error. */
    t->spill_next = 0;
    if (!sl__may_spill(c, t->node, bytes))
      return SL_EOOM;
    *fate = SL_EMIT_SPILLED;
    return 0;
  }
  return SL_EAGAIN;
}

/* Store room on @p node that the emissions of @p op leave free (the
 * static and stream models, and streaming-plus): one
 * output partition for every task running there of each operator after
 * it (but the last, whose outputs leave for the sink), up to a quarter
 * of the store. Channels alone bound a node's partitions by its consumers'
 * instances, and sixteen instances of a batch operator with channels of
 * eight 64 MB partitions take more than a 4 GB store: the sources filled
 * every store, the consumers that had started could not store a single
 * output, and the job crept through the liveness rule one spilled
 * partition at a time (zoo case 90). Room for every instance placed
 * there, or up to half the store, left the sources of case 106 half their
 * store of 1 MB partitions and made the job 30% slower. */
#define DOWNSTREAM_ROOM_SHARE 0.25

double sl__downstream_room(const sl_core *c, int op, int node)
{
  double room = 0;
  for (int k = op + 1; k + 1 < c->nops; k++) {
    const sl__op *s = &c->ops[k];
    double part = fmin(c->plan->target_partition_bytes, s->est_out_bytes / fmax(1, s->est_out_parts));
    room += c->nodes[node].op_running[k] * part;
  }
  return fmin(room, DOWNSTREAM_ROOM_SHARE * c->nodes[node].store_budget);
}

void sl__resume_fitting(sl_core *c, int node)
{
  sl__node *nd = &c->nodes[node];
  double room = nd->store_budget - nd->store_used;
  while (!sl__idq_empty(&nd->waiting)) {
    sl__task *t = &c->tasks[sl__idq_at(&nd->waiting, 0)];
    if (t->pending_bytes > room + EPS && sl__someone_progresses(c, NULL))
      break; /* FIFO: later waiters must not overtake the head */
    if (t->pending_bytes > room + EPS)
      t->spill_next = 1;
    room -= t->pending_bytes;
    sl__idq_pop(&nd->waiting);
    t->waiting = 0;
    c->ops[t->op].waiting--;
    sl_decision d = {.kind = SL_DEC_RESUME, .task = (sl_task_id)(t - c->tasks), .op = t->op,
                     .node = t->node, .slot = t->slot, .attempt = t->attempt, .part = SL_NONE};
    sl__push(c, &d);
  }
}

void sl__resume_op(sl_core *c, int op)
{
  for (int n = 0; n < c->nnodes; n++) {
    sl__idq *q = &c->nodes[n].waiting;
    for (uint32_t k = 0; k < sl__idq_len(q);) {
      sl_task_id id = sl__idq_at(q, k);
      sl__task *t = &c->tasks[id];
      if (t->op != op) {
        k++;
        continue;
      }
      sl__idq_remove(q, id);
      t->waiting = 0;
      c->ops[op].waiting--;
      sl_decision d = {.kind = SL_DEC_RESUME, .task = id, .op = t->op, .node = t->node,
                       .slot = t->slot, .attempt = t->attempt, .part = SL_NONE};
      sl__push(c, &d);
    }
  }
}

/* Liveness: when every running task waits for room that only they could
 * make, the oldest waiter may go through (to disk, or to an OOM error). */
void sl__unjam(sl_core *c)
{
  if (c->done || sl__someone_progresses(c, NULL))
    return;
  for (int n = 0; n < c->nnodes; n++) {
    sl__node *nd = &c->nodes[n];
    if (sl__idq_empty(&nd->waiting))
      continue;
    sl__task *t = &c->tasks[sl__idq_pop(&nd->waiting)];
    t->waiting = 0;
    t->spill_next = 1;
    c->ops[t->op].waiting--;
    sl_decision d = {.kind = SL_DEC_RESUME, .task = (sl_task_id)(t - c->tasks), .op = t->op,
                     .node = t->node, .slot = t->slot, .attempt = t->attempt, .part = SL_NONE};
    sl__push(c, &d);
    return;
  }
}

void sl__mark_waiting(sl_core *c, sl__task *t, double bytes)
{
  if (t->waiting)
    return;
  t->waiting = 1;
  t->pending_bytes = bytes;
  c->ops[t->op].waiting++;
  sl__enqueue_id(c, &c->nodes[t->node].waiting, (uint32_t)(t - c->tasks));
}
