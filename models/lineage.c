/* Lineage and recovery: what it takes to get back a partition or a
 * task's work after a failure.
 *
 * Every partition knows the origin task that made it, and every origin
 * task the inputs it read: a partition that is lost (its node died) or
 * already freed, and needed again, is made again by re-running its
 * producer, which may in turn need its own lost inputs back. Inputs stay
 * pinned (referenced) until the task that reads them has finished, so a
 * failed attempt can run again on the same data; an attempt whose inputs
 * are not all back waits, blocked, until they are. Nothing here decides
 * where or when work runs: the policies launch what is queued. */
#include <math.h>
#include <string.h>

#include "core_internal.h"

#define EPS 1e-9

static void regen(sl_core *c, sl_part_id pid);

/* ------------------------------------------------- partitions' lifetime */

static void part_pin(sl_core *c, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  if (p->refs++ == 0)
    c->live_parts++;
  if (p->state == SL__P_FREED)
    p->state = SL__P_LOST; /* consumed once, needed again: recompute it */
  if (p->state == SL__P_LOST)
    regen(c, pid);
}

void sl__part_free(sl_core *c, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  if (p->state == SL__P_ALIVE || p->state == SL__P_SPILLED) {
    if (p->state == SL__P_ALIVE)
      sl__store_sub(c, p->node, p->bytes);
    else if ((c->nodes[p->node].disk_used -= p->bytes) < 1e-9)
      c->nodes[p->node].disk_used = 0;
    c->ops[p->op].buffered -= p->bytes;
    sl_decision d = {.kind = SL_DEC_DROP, .task = SL_NONE, .part = pid, .op = p->op,
                     .node = p->node, .bytes = p->bytes};
    sl__push(c, &d);
  }
  p->state = SL__P_FREED;
  c->live_parts--;
}

void sl__part_unpin(sl_core *c, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  if (--p->refs == 0) {
    int node = p->node;
    bool held_memory = p->state == SL__P_ALIVE;
    sl__part_free(c, pid);
    if (held_memory)
      sl__resume_fitting(c, node);
  }
}

/* ------------------------------------------------------------ re-running */

/* A new attempt of origin @p o, queued (or blocked on lost inputs). */
void sl__retry(sl_core *c, sl_task_id oid)
{
  sl__task *o = &c->tasks[oid];
  if (c->opts.max_retries > 0 && o->attempt >= c->opts.max_retries) {
    sl__push_fail(c, SL_ESTATE);
    return;
  }
  sl_task_id id = sl__task_alloc(c);
  if (id == SL_NONE) {
    sl__push_fail(c, SL_ENOMEM);
    return;
  }
  o = &c->tasks[oid]; /* task_alloc may have moved the array */
  sl__task *t = &c->tasks[id];
  t->origin = oid;
  t->op = o->op;
  t->split = o->split;
  t->rows = o->rows;
  t->bytes = o->bytes;
  t->attempt = ++o->attempt;
  t->instance = o->instance;
  t->share = o->share;
  t->share_end = o->share_end;
  t->home = o->home;
  o->current = id;
  c->active++;
  c->ops[t->op].active++;
  c->stats.retried_tasks++;
  /* part_pin() and regen() may create attempts and move c->tasks: index, do
   * not hold pointers, across them */
  bool pinned = o->pinned;
  o->pinned = 1;
  for (int i = 0; i < c->tasks[oid].ninputs; i++) {
    sl_part_id in = c->tasks[oid].inputs[i];
    if (!pinned)
      part_pin(c, in);
    else if (c->parts[in].state == SL__P_LOST)
      regen(c, in);
  }
  t = &c->tasks[id];
  if (sl__inputs_ready(c, t)) {
    t->state = SL__T_QUEUED;
    sl__enqueue_id(c, &c->ops[t->op].retryq, id);
  } else {
    t->state = SL__T_BLOCKED;
    sl__enqueue_id(c, &c->blocked, id);
  }
}

/* Partition @p pid is needed but gone: make its producer run again. */
static void regen(sl_core *c, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  sl__task *o = &c->tasks[p->producer];
  /* A live attempt that has not yet passed this output re-creates it; one
   * that has is run again when it ends (sl_core_finished() checks). */
  if (o->current != SL_NONE)
    return;
  sl__retry(c, p->producer);
}

/* A lost partition is needed while someone still holds it, unless the only
 * holder is the task that took it and it is running: a running task
 * fetched its inputs when it started. A shuffle's input is held by every
 * reducer yet to read it, the first (its consumer) only one of them: with
 * that one running and the rest queued, a node lost mid-shuffle was never
 * made up for, and the job hung. */
static bool part_needed(const sl_core *c, const sl__part *p)
{
  if (p->state != SL__P_LOST || p->refs == 0)
    return false;
  if (p->consumer == SL_NONE || p->refs > 1)
    return true;
  sl_task_id cur = c->tasks[p->consumer].current;
  return cur == SL_NONE || c->tasks[cur].state != SL__T_RUNNING;
}

static bool needs_rerun(const sl_core *c, const sl__task *o)
{
  for (uint32_t k = 0; k < o->nouts; k++)
    if (part_needed(c, &c->parts[o->outs[k]]))
      return true;
  return false;
}

static bool unblock_ready(uint32_t id, void *ctx)
{
  sl_core *c = ctx;
  sl__task *t = &c->tasks[id];
  if (t->state != SL__T_BLOCKED)
    return true;
  if (!sl__inputs_ready(c, t))
    return false;
  t->state = SL__T_QUEUED;
  sl__enqueue_id(c, &c->ops[t->op].retryq, id);
  return true;
}

/* A regenerated partition is back: give it to whoever waits for it. */
void sl__part_restored(sl_core *c, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  if (p->consumer == SL_NONE && !p->in_queue) {
    if (c->policy->on_emitted)
      c->policy->on_emitted(c, c->now, &c->tasks[p->producer], pid);
    else
      sl__enqueue_part(c, pid);
  }
  if (!sl__idq_empty(&c->blocked))
    sl__idq_filter(&c->blocked, unblock_ready, c);
}

/* Whether attempt @p t waits for a home node this pass already found
 * without room; marks it so when @p mark. */
static bool home_seen_full(sl_core *c, const sl__task *t, bool mark)
{
  int home = sl__origin_of(c, t)->home;
  if (home < 0 || home >= c->nnodes)
    return false;
  if (c->home_full_pass[home] == c->retry_pass)
    return true;
  if (mark) {
    c->home_full_pass[home] = c->retry_pass;
    c->homes_full++;
  }
  return false;
}

void sl__launch_retries(sl_core *c, double now, int op)
{
  sl__idq *q = &c->ops[op].retryq;
  uint32_t k = 0; /* attempts before it that wait for their own node */
  c->retry_pass++;
  c->homes_full = 0;
  /* past the head, only while some slot is free: none fits otherwise */
  while (k < sl__idq_len(q) && (k == 0 || c->free_slots > 0)) {
    sl_task_id id = sl__idq_at(q, k);
    sl__task *t = &c->tasks[id];
    if (t->state != SL__T_QUEUED) {
      sl__idq_remove(q, id);
      continue;
    }
    if (home_seen_full(c, t, false)) {
      k++; /* its node had no room a moment ago: nothing freed since */
      continue;
    }
    int node = sl__pick_node(c, op, t);
    if (node < 0) {
      /* a task homed on a node waits for it; the ones behind it may have
       * a free one. A shuffle's reducers queue by share, node after node:
       * the scan goes on until every node has been found without room
       * (a window of 4,096 left the nodes whose shares came later idle) */
      if (sl__origin_of(c, t)->home < 0)
        return;
      home_seen_full(c, t, true);
      if (c->homes_full >= c->nnodes)
        return;
      k++;
      continue;
    }
    sl__idq_remove(q, id);
    sl__launch(c, now, id, node);
  }
}

/* ------------------------------------------------------------ lost nodes */

static bool part_is_lost(uint32_t id, void *ctx)
{
  sl_core *c = ctx;
  if (c->parts[id].state != SL__P_LOST)
    return false;
  c->ops[c->parts[id].op + 1].in_queue_bytes -= c->parts[id].bytes;
  c->parts[id].in_queue = 0;
  return true;
}

void sl__lose_node_parts(sl_core *c, int node)
{
  sl__node *nd = &c->nodes[node];
  for (uint32_t i = 0; i < c->nparts; i++) {
    sl__part *p = &c->parts[i];
    if (p->node != node || (p->state != SL__P_ALIVE && p->state != SL__P_SPILLED))
      continue;
    c->ops[p->op].buffered -= p->bytes;
    p->state = SL__P_LOST;
    c->stats.lost_partitions++;
  }
  c->stats.store_bytes -= nd->store_used;
  if (c->stats.store_bytes < EPS)
    c->stats.store_bytes = 0;
  nd->store_used = 0;
}

void sl__recover_node_parts(sl_core *c, int node)
{
  for (int i = 1; i < c->nops; i++)
    sl__idq_filter(&c->ops[i].inq, part_is_lost, c);
  for (uint32_t i = 0; i < c->nparts; i++)
    if (c->parts[i].node == node && part_needed(c, &c->parts[i]))
      regen(c, i);
  /* attempts already queued may now depend on lost inputs */
  for (int i = 0; i < c->nops; i++) {
    sl__idq *q = &c->ops[i].retryq;
    for (uint32_t k = 0; k < sl__idq_len(q); k++) {
      sl__task *t = &c->tasks[sl__idq_at(q, k)];
      if (t->state == SL__T_QUEUED && !sl__inputs_ready(c, t)) {
        t->state = SL__T_BLOCKED;
        sl__enqueue_id(c, &c->blocked, sl__idq_at(q, k));
      }
    }
  }
}

void sl__rerun_if_needed(sl_core *c, sl_task_id oid)
{
  if (needs_rerun(c, &c->tasks[oid]))
    sl__retry(c, oid);
}

/* -------------------------------------------------------------- rollback */

void sl__reset_all(sl_core *c, double now)
{
  for (uint32_t i = 0; i < c->ntasks; i++) {
    sl__task *t = &c->tasks[i];
    if (t->state == SL__T_RUNNING) {
      sl_decision d = {.kind = SL_DEC_CANCEL, .task = i, .op = t->op, .node = t->node,
                       .slot = t->slot, .attempt = t->attempt, .part = SL_NONE};
      sl__push(c, &d);
      sl__forget_fresh(c, t, t->last_out);
      sl__release(c, t);
      sl__idle_attempt_end(c, t, now, true);
      c->stats.tasks_failed++;
    }
    if (t->state == SL__T_RUNNING || t->state == SL__T_QUEUED || t->state == SL__T_BLOCKED) {
      t->state = SL__T_DEAD;
      c->active--;
      c->ops[t->op].active--;
    }
    if (t->origin == i) {
      t->current = SL_NONE;
      t->pinned = 0;
    }
  }
  for (uint32_t i = 0; i < c->nparts; i++) {
    sl__part *p = &c->parts[i];
    if (p->refs > 0) {
      if (p->state == SL__P_ALIVE || p->state == SL__P_SPILLED) {
        p->refs = 1;
        sl__part_free(c, i);
      } else {
        c->live_parts--;
      }
      p->refs = 0;
      p->state = SL__P_FREED;
    }
    p->in_queue = 0;
  }
  for (int i = 0; i < c->nops; i++) {
    sl__idq_clear(&c->ops[i].inq);
    sl__idq_clear(&c->ops[i].retryq);
    c->ops[i].in_queue_bytes = 0;
    c->ops[i].buffered = 0;
  }
  sl__idq_clear(&c->blocked);
  for (int n = 0; n < c->nnodes; n++)
    sl__idq_clear(&c->nodes[n].waiting);
}
