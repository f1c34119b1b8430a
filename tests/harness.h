/*
 * A minimal discrete-event engine for tests: it drives the scheduling core
 * with task durations from the plan's cost model, emits partitions at the
 * target size while a task runs, honours RESUME and CANCEL, injects
 * failures, and checks the invariants every engine must keep (the store
 * never exceeds its budget, every row reaches the sink exactly once).
 */
#ifndef SL_TEST_HARNESS_H
#define SL_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/core.h"
#include "models/error.h"
#include "models/plan.h"

typedef enum { H_EMIT, H_FINISH, H_FAIL_TASK_OF_OP, H_NODE_LOST, H_NODE_JOINED, H_TICK } h_kind;

typedef struct {
  double time;
  uint64_t seq;
  h_kind kind;
  uint32_t task;
  int arg;
} h_event;

typedef struct {
  bool live, waiting;
  bool at_end; /* the order's outputs_at_end */
  int op, node, slot;
  double rows_out, row_bytes, duration, start;
  int64_t emitted_rows;
  int64_t rows_per_flush;
  uint32_t nflush, next;
  int64_t split;
  int64_t rows_in;
} h_task;

typedef struct {
  sl_core *core;
  const sl_plan *plan;
  const sl_cluster *cluster;
  h_event *heap;
  size_t nheap, capheap;
  uint64_t seq;
  h_task *tasks;
  size_t ntasks;
  double now;
  double *split_rows;
  int64_t nsplits;
  double max_store_over_budget; /* worst (used - budget) seen, should be <= 0 */
  double last_delivery;
  int failed_code;
  bool done;
  int64_t launches, rollbacks, checkpoints;
  int64_t acquired, released; /* pool nodes: ACQUIRE and RELEASE decisions */
  double launched_at_op_min[SL_MAX_OPS], ended_at_op_max[SL_MAX_OPS];
  int64_t slot_clashes; /* LAUNCHes on a slot a live task still held */
  int64_t launches_on_group[SL_MAX_OPS][SL_MAX_GROUPS]; /* where each operator ran */
  int max_running[SL_MAX_OPS];  /* most tasks of each operator running at once */
  /* every partition as it was emitted, to check what LAUNCHes say of their inputs */
  struct h_part {
    int node;
    double bytes;
    bool spilled, emitted;
  } *parts;
  size_t parts_cap;
  int64_t inputs_checked, input_mismatches; /* LAUNCH inputs whose facts were not the emission's */
  int64_t inputs_spilled;                   /* of those checked, on a node's disk */
  /* what each operator's tasks read of their inputs (a shuffle's blocks) */
  double read_bytes_at_op[SL_MAX_OPS], remote_read_at_op[SL_MAX_OPS];
  int64_t blocks_at_op[SL_MAX_OPS];
} harness;

static void h_push(harness *h, double time, h_kind kind, uint32_t task, int arg)
{
  if (h->nheap == h->capheap) {
    h->capheap = h->capheap ? h->capheap * 2 : 256;
    h->heap = realloc(h->heap, sizeof *h->heap * h->capheap);
  }
  h_event e = {time, h->seq++, kind, task, arg};
  size_t i = h->nheap++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    const h_event *q = &h->heap[p];
    if (q->time < e.time || (q->time == e.time && q->seq < e.seq))
      break;
    h->heap[i] = h->heap[p];
    i = p;
  }
  h->heap[i] = e;
}

static h_event h_pop(harness *h)
{
  h_event top = h->heap[0];
  h_event last = h->heap[--h->nheap];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const h_event *cand = &last;
    if (l < h->nheap && (h->heap[l].time < cand->time ||
                         (h->heap[l].time == cand->time && h->heap[l].seq < cand->seq))) {
      m = l;
      cand = &h->heap[l];
    }
    if (r < h->nheap && (h->heap[r].time < cand->time ||
                         (h->heap[r].time == cand->time && h->heap[r].seq < cand->seq)))
      m = r;
    if (m == i)
      break;
    h->heap[i] = h->heap[m];
    i = m;
  }
  if (h->nheap)
    h->heap[i] = last;
  return top;
}

static h_task *h_task_of(harness *h, uint32_t id)
{
  while (h->ntasks <= id) {
    size_t n = h->ntasks ? h->ntasks * 2 : 256;
    h->tasks = realloc(h->tasks, sizeof *h->tasks * n);
    memset(h->tasks + h->ntasks, 0, sizeof *h->tasks * (n - h->ntasks));
    h->ntasks = n;
  }
  return &h->tasks[id];
}

static void h_schedule_emit(harness *h, uint32_t id, h_task *t)
{
  if (t->next >= t->nflush) {
    h_push(h, h->now, H_FINISH, id, 0);
    return;
  }
  /* rows come out evenly over the task, or all at its end */
  double gap = t->at_end ? (t->next == 0 ? t->duration : 0) : t->duration / t->nflush;
  h_push(h, (t->next == 0 ? t->start : h->now) + gap, H_EMIT, id, 0);
}

static void h_launch(harness *h, const sl_decision *d)
{
  for (size_t i = 0; i < h->ntasks; i++)
    if (h->tasks[i].live && h->tasks[i].node == d->node && h->tasks[i].slot == d->slot &&
        sl_core_task_live(h->core, (uint32_t)i))
      h->slot_clashes++;
  for (int i = 0; i < d->ninputs; i++) {
    const sl_input *in = &d->in[i];
    const struct h_part *p = in->part < h->parts_cap ? &h->parts[in->part] : NULL;
    h->inputs_checked++;
    h->inputs_spilled += in->spilled;
    h->read_bytes_at_op[d->op] += in->read_bytes;
    h->remote_read_at_op[d->op] += in->node != d->node ? in->read_bytes : 0;
    h->blocks_at_op[d->op] += in->read_bytes > 0;
    if (in->part != d->inputs[i] || !p || !p->emitted || p->node != in->node || p->bytes != in->bytes ||
        p->spilled != in->spilled)
      h->input_mismatches++;
  }
  h_task *t = h_task_of(h, d->task);
  memset(t, 0, sizeof *t);
  t->live = true;
  t->op = d->op;
  t->node = d->node;
  t->slot = d->slot;
  t->start = h->now;
  t->split = d->split;
  t->rows_in = d->rows;
  /* the work order, as both engines carry it out */
  t->duration = d->charge_s;
  t->rows_out = (double)d->out_rows;
  t->row_bytes = h->plan->ops[d->op].out_row_bytes;
  t->rows_per_flush = d->rows_per_part; /* the last partition takes what is left */
  t->nflush = (uint32_t)d->out_parts;
  t->at_end = d->outputs_at_end;
  h->launches++;
  sl_core_op_stats os;
  sl_core_get_op_stats(h->core, d->op, &os);
  if (os.running > h->max_running[d->op])
    h->max_running[d->op] = os.running;
  h->launches_on_group[d->op][h->cluster->nodes[d->node].group]++;
  if (h->launched_at_op_min[d->op] == 0 || h->now < h->launched_at_op_min[d->op])
    h->launched_at_op_min[d->op] = h->now > 0 ? h->now : 1e-12;
  if (t->nflush == 0)
    h_push(h, h->now + t->duration, H_FINISH, d->task, 0);
  else
    h_schedule_emit(h, d->task, t);
}

static void h_drain(harness *h)
{
  sl_decision d;
  while (sl_core_next(h->core, &d)) {
    switch (d.kind) {
    case SL_DEC_LAUNCH:
      h_launch(h, &d);
      break;
    case SL_DEC_RESUME: {
      h_task *t = h_task_of(h, d.task);
      if (t->live && t->waiting) {
        t->waiting = false;
        h_push(h, h->now, H_EMIT, d.task, 0);
      }
      break;
    }
    case SL_DEC_CANCEL: {
      h_task *t = h_task_of(h, d.task);
      t->live = false;
      sl_core_failed(h->core, h->now, d.task);
      break;
    }
    case SL_DEC_DELIVER:
      if (d.split >= 0 && d.split < h->nsplits)
        h->split_rows[d.split] += (double)d.rows;
      h->last_delivery = h->now;
      break;
    case SL_DEC_ROLLBACK:
      for (int64_t s = 0; s < h->nsplits; s++)
        if (!d.keep_split[s])
          h->split_rows[s] = 0;
      h->rollbacks++;
      break;
    case SL_DEC_CHECKPOINT:
      h->checkpoints++;
      break;
    case SL_DEC_DONE:
      h->done = true;
      break;
    case SL_DEC_FAIL:
      h->failed_code = d.code;
      h->done = true;
      break;
    case SL_DEC_DROP:
      break;
    case SL_DEC_ACQUIRE:
      h_push(h, h->now + d.delay_s, H_NODE_JOINED, 0, d.node);
      h->acquired++;
      break;
    case SL_DEC_RELEASE:
      h->released++;
      break;
    }
  }
  for (int n = 0; n < h->cluster->nnodes; n++) {
    double over = sl_core_node_store(h->core, n) - sl_cluster_node_group(h->cluster, n)->store_bytes;
    if (over > h->max_store_over_budget)
      h->max_store_over_budget = over;
  }
}

static void h_emit(harness *h, uint32_t id)
{
  h_task *t = h_task_of(h, id);
  int64_t left = (int64_t)t->rows_out - t->emitted_rows;
  int64_t rows = left < t->rows_per_flush ? left : t->rows_per_flush;
  sl_part_id part;
  sl_emit_fate fate;
  int rc = sl_core_emit(h->core, h->now, id, rows, rows * t->row_bytes, &part, &fate);
  if (rc == SL_EAGAIN) {
    t->waiting = true;
    return;
  }
  if (rc < 0) {
    h->failed_code = rc;
    h->done = true;
    return;
  }
  if (fate != SL_EMIT_DISCARDED) {
    if (part >= h->parts_cap) {
      size_t ncap = h->parts_cap ? h->parts_cap : 256;
      while (ncap <= part)
        ncap *= 2;
      struct h_part *n = realloc(h->parts, sizeof *n * ncap);
      if (!n)
        abort();
      memset(n + h->parts_cap, 0, sizeof *n * (ncap - h->parts_cap));
      h->parts = n;
      h->parts_cap = ncap;
    }
    h->parts[part] = (struct h_part){.node = t->node, .bytes = rows * t->row_bytes,
                                     .spilled = fate == SL_EMIT_SPILLED, .emitted = true};
  }
  t->emitted_rows += rows;
  t->next++;
  h_schedule_emit(h, id, t);
}

/* Fails the first running task of @p op at the event's time. */
static void h_fail_task_of_op(harness *h, int op)
{
  for (size_t i = 0; i < h->ntasks; i++)
    if (h->tasks[i].live && h->tasks[i].op == op && sl_core_task_live(h->core, (uint32_t)i)) {
      h->tasks[i].live = false;
      sl_core_failed(h->core, h->now, (uint32_t)i);
      return;
    }
}

/* Runs to completion; returns the job completion time or -1 on failure. */
static double h_run(harness *h, const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts,
                    double limit)
{
  char err[256];
  h->plan = plan;
  h->cluster = cluster;
  h->nsplits = plan->ops[0].tasks;
  h->split_rows = calloc(h->nsplits, sizeof *h->split_rows);
  h->core = sl_core_new(plan, cluster, opts, err, sizeof err);
  if (!h->core) {
    fprintf(stderr, "core: %s\n", err);
    h->failed_code = SL_EINVAL;
    return -1;
  }
  if (sl_core_start(h->core, 0) < 0)
    return -1;
  h_drain(h);
  while (!h->done) {
    double wake = sl_core_wakeup(h->core);
    double next = h->nheap ? h->heap[0].time : INFINITY;
    if (!isfinite(wake) && !isfinite(next))
      break;
    if (fmin(wake, next) > limit)
      break;
    if (wake < next) {
      h->now = wake;
      sl_core_tick(h->core, wake);
      h_drain(h);
      continue;
    }
    h_event e = h_pop(h);
    h->now = e.time;
    if (h->now > limit)
      break;
    h_task *t = e.kind <= H_FINISH ? h_task_of(h, e.task) : NULL;
    switch (e.kind) {
    case H_EMIT:
      if (t->live && sl_core_task_live(h->core, e.task))
        h_emit(h, e.task);
      break;
    case H_FINISH:
      if (t->live && sl_core_task_live(h->core, e.task)) {
        t->live = false;
        sl_core_finished(h->core, h->now, e.task);
        if (h->now > h->ended_at_op_max[t->op])
          h->ended_at_op_max[t->op] = h->now;
      }
      break;
    case H_FAIL_TASK_OF_OP:
      h_fail_task_of_op(h, e.arg);
      break;
    case H_NODE_LOST:
      for (size_t i = 0; i < h->ntasks; i++)
        if (h->tasks[i].live && h->tasks[i].node == e.arg)
          h->tasks[i].live = false;
      sl_core_node_lost(h->core, h->now, e.arg);
      break;
    case H_NODE_JOINED:
      sl_core_node_joined(h->core, h->now, e.arg);
      break;
    case H_TICK:
      sl_core_tick(h->core, h->now);
      if (getenv("SL_HARNESS_TRACE")) {
        fprintf(stderr, "t=%6.2f", h->now);
        for (int i = 0; i < plan->nops; i++) {
          sl_core_op_stats os;
          sl_core_get_op_stats(h->core, i, &os);
          fprintf(stderr, "  op%d run %2d wait %d q %3lld buf %5.1fMB", i, os.running, os.waiting,
                  (long long)os.queued_parts, os.buffered_bytes / 1e6);
        }
        fprintf(stderr, "  store %.1fMB\n", sl_core_node_store(h->core, 0) / 1e6);
      }
      break;
    }
    h_drain(h);
  }
  return h->done && h->failed_code == 0 ? h->now : -1;
}

static double h_delivered(const harness *h)
{
  double rows = 0;
  for (int64_t s = 0; s < h->nsplits; s++)
    rows += h->split_rows[s];
  return rows;
}

static void h_free(harness *h)
{
  sl_core_free(h->core);
  free(h->heap);
  free(h->tasks);
  free(h->split_rows);
  free(h->parts);
  memset(h, 0, sizeof *h);
}

#endif
