/*
 * The real executor. One lock guards the core, the store's books, the sink
 * and the recorder; kernels run outside it. A worker that ends a task asks
 * the core under the lock and, when the next task lands on its own slot,
 * runs it at once without a thread switch: that keeps the dispatch cost in
 * microseconds. Everything the executor decides is what the core decided.
 *
 * Beside it: task.c runs what a slot is handed (kernels, pacing, emission,
 * spills; engine_internal.h is what the two share), store.c holds the
 * partitions' bytes, rejected.c the tally of rows kernels reject,
 * local_cluster.c this machine as a cluster.
 */
#include "engine.h"

#include <errno.h>
#include <stdarg.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "executor/net.h"
#include "executor/rejected.h"
#include "executor/store.h"
#include "models/bound.h"
#include "models/error.h"
#include "results/events.h"
#include "results/failure.h"
#include "workloads/kernel_registry.h"
#include "workloads/kernels.h"
#include "workloads/kernels/gemm_cuda.h"
#include "workloads/sink.h"
#include "workloads/group_check.h"
#include "workloads/sort_check.h"

#include "executor/engine_internal.h"

/* ------------------------------------------------------------------ time */

double sl__exec_now(const engine *e)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - e->t0.tv_sec) + (double)(t.tv_nsec - e->t0.tv_nsec) * 1e-9;
}

static struct timespec abs_time(const engine *e, double t)
{
  struct timespec ts = e->t0;
  double whole = floor(t);
  ts.tv_sec += (time_t)whole;
  ts.tv_nsec += (long)((t - whole) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

/* ------------------------------------------------------------- failures */

void sl__exec_fail(engine *e, int code, const char *fmt, ...)
{
  if (e->fail_code == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->fail_msg, sizeof e->fail_msg, fmt, ap);
    va_end(ap);
    e->fail_code = code;
  }
  e->stop = true;
  pthread_cond_signal(&e->main_cv);
}

/* ------------------------------------------------------------- decisions */

static worker *worker_at(engine *e, int node, int slot)
{
  if (node < 0 || node >= e->cluster->nnodes || slot < 0 || slot >= e->nslots[node])
    return NULL;
  return &e->workers[node][slot];
}

void sl__exec_sink_rows(engine *e, const sl_rows *rows)
{
  if (sl_sink_deliver(e->sink, rows) < 0)
    sl__exec_fail(e, SL_ESTATE, "sink: %s", sl_sink_last_error(e->sink));
  else if (e->sort_check && sl_sort_check_partition(e->sort_check, rows) < 0) {
    e->sort_check_failed = true;
    sl__exec_fail(e, SL_ESTATE, "sort check: %s", sl_sort_check_error(e->sort_check));
  } else if (e->group_check && sl_group_check_partition(e->group_check, rows) < 0) {
    e->group_check_failed = true;
    sl__exec_fail(e, SL_ESTATE, "group check: %s", sl_group_check_error(e->group_check));
  }
}

static void deliver(engine *e, const sl_decision *d)
{
  const sl_rows *mem;
  char path[600], err[700];
  sl_rows loaded;
  sl_rows_init(&loaded);
  sl_blob *b = sl_store_acquire(e->store, d->part, &mem, path, sizeof path);
  if (!b) {
    sl__exec_fail(e, SL_ESTATE, "partition %u reached the sink without its bytes", d->part);
    return;
  }
  if (!mem && !sl_store_blob_ready(b)) { /* a sink's partition is written under the lock: never */
    sl__exec_fail(e, SL_ESTATE, "partition %u reached the sink before its file was written", d->part);
    goto out_release;
  }
  if (!mem) {
    if (sl_store_read_spill(path, &loaded, err, sizeof err) < 0) {
      sl__exec_fail(e, SL_EIO, "%s", err);
      goto out_release;
    }
    mem = &loaded;
  }
  sl__exec_sink_rows(e, mem);
out_release:
  sl_rows_free(&loaded);
  sl_store_release(e->store, b);
  sl_store_drop(e->store, d->part);
}

/* A task fetches its inputs when it is launched, as a remote task would:
 * losing their node afterwards does not take them from it. */
static input_ref *pin_inputs(engine *e, const sl_decision *d)
{
  if (d->ninputs == 0)
    return NULL;
  input_ref *in = calloc(d->ninputs, sizeof *in);
  if (!in) {
    sl__exec_fail(e, SL_ENOMEM, "out of memory");
    return NULL;
  }
  for (int i = 0; i < d->ninputs; i++) {
    in[i].node = d->in[i].node;
    in[i].part = d->inputs[i];
    in[i].bytes = d->in[i].read_bytes; /* what the task reads of it: a reducer, its block */
    in[i].blob = sl_store_acquire(e->store, d->inputs[i], &in[i].mem, in[i].path, sizeof in[i].path);
    if (!in[i].blob)
      sl__exec_fail(e, SL_ESTATE, "task %u of '%s' launched without input partition %u", d->task,
               e->plan->ops[d->op].name, d->inputs[i]);
    /* the store holds the bytes, the core the books: they must agree, as
     * check_accounting() asks of the totals */
    else if ((in[i].mem == NULL) != d->in[i].spilled)
      sl__exec_fail(e, SL_ESTATE, "input partition %u of task %u is %s, but the core has it %s", d->inputs[i],
               d->task, in[i].mem ? "in memory" : "spilled", d->in[i].spilled ? "spilled" : "in memory");
    else
      continue;
    for (int k = 0; k <= i; k++)
      if (in[k].blob)
        sl_store_release(e->store, in[k].blob);
    free(in);
    return NULL;
  }
  return in;
}

void sl__exec_unpin_inputs(engine *e, input_ref *in, int n)
{
  for (int i = 0; in && i < n; i++) {
    if (in[i].blob)
      sl_store_release(e->store, in[i].blob);
    sl_rows_free(&in[i].fetched); /* fetched from another node by a worker process */
  }
  free(in);
}

/* Below this, freeing what a drain let go of costs less than waking the
 * reclaimer: tasks of a few rows, thousands a second (bench_dispatch's
 * cost per task rose 1.5-fold when every drain woke it). */
#define RECLAIM_MIN_BYTES (1 << 20)

/* Hands what the store no longer references to the reclaimer, or frees it
 * here when it is small. Under the lock, as every store call. */
static void hand_garbage(engine *e)
{
  if (sl_store_garbage_bytes(e->store) < RECLAIM_MIN_BYTES || !e->reclaimer_running) {
    /* small, or before the workers start, or after they stop */
    sl_store_free_garbage(sl_store_take_garbage(e->store, NULL));
    return;
  }
  e->reclaim = sl_store_take_garbage(e->store, e->reclaim);
  pthread_cond_signal(&e->reclaim_cv);
}

void sl__exec_job_decision(engine *e, const sl_decision *d)
{
  switch (d->kind) {
  case SL_DEC_ROLLBACK:
    sl_sink_rollback(e->sink, d->keep_split, (uint32_t)e->plan->ops[0].tasks);
    if (e->sort_check)
      sl_sort_check_rolled_back(e->sort_check);
    if (e->group_check)
      sl_group_check_rollback(e->group_check, d->keep_split, (uint32_t)e->plan->ops[0].tasks);
    if (sl_recorder_rollback(e->rec, sl__exec_now(e), e->core) < 0)
      sl__exec_fail(e, SL_ENOMEM, "out of memory recording the timeline");
    break;
  case SL_DEC_CHECKPOINT:
    break; /* the sink keeps its state per split: nothing to copy */
  case SL_DEC_DONE:
    e->done = true;
    pthread_cond_signal(&e->main_cv);
    break;
  case SL_DEC_FAIL: {
    char why[320];
    sl_failure_text(d, e->plan, e->cluster, e->core, why, sizeof why);
    sl__exec_fail(e, d->code, "%s", why);
    break;
  }
  default:
    break; /* a task's or a partition's: the engine's own */
  }
}


/* Acts on every pending decision of the core. Called with the lock held;
 * returns true when a LAUNCH landed on @p self (it runs it next). */
bool sl__exec_drain(engine *e, worker *self)
{
  sl_decision d;
  bool mine = false;
  if (!e->core) /* a worker process: the head decides, and its orders come as messages */
    return false;
  while (sl_core_next(e->core, &d)) {
    worker *w = worker_at(e, d.node, d.slot);
    switch (d.kind) {
    case SL_DEC_LAUNCH:
      if (!w) {
        sl__exec_fail(e, SL_ESTATE, "core launched on a slot that does not exist");
        break;
      }
      if (w->has_next) /* a launch its node's loss cancelled before it ran */
        sl__exec_unpin_inputs(e, w->next_inputs, w->next.ninputs);
      w->has_next = true;
      w->next = d;
      w->next_launched_s = sl__exec_now(e);
      w->next_inputs = pin_inputs(e, &d);
      if (d.ninputs > 0 && !w->next_inputs)
        break; /* pin_inputs() failed the job */
      if (w == self)
        mine = true;
      else
        pthread_cond_signal(&w->cv);
      break;
    case SL_DEC_RESUME:
      if (w && w->busy && w->current == d.task) {
        w->resume = true;
        pthread_cond_signal(&w->cv);
      }
      break;
    case SL_DEC_CANCEL:
      if (w && w->busy && w->current == d.task) {
        atomic_store(&w->cancel, true);
        w->killed = true; /* the core has already written it off */
        pthread_cond_signal(&w->cv);
      }
      break;
    case SL_DEC_DELIVER:
      deliver(e, &d);
      break;
    case SL_DEC_DROP:
      sl_store_drop(e->store, d.part);
      break;
    case SL_DEC_ROLLBACK:
    case SL_DEC_CHECKPOINT:
    case SL_DEC_DONE:
    case SL_DEC_FAIL:
      sl__exec_job_decision(e, &d);
      break;
    case SL_DEC_ACQUIRE: /* its workers wait already: it serves once provisioned */
      e->join_at[d.node] = sl__exec_now(e) + d.delay_s;
      pthread_cond_signal(&e->main_cv);
      sl__exec_mark_fault(e, sl__exec_now(e), "acquire", d.node, NULL);
      break;
    case SL_DEC_RELEASE: /* the core left nothing there: its workers idle until the end */
      sl__exec_mark_fault(e, sl__exec_now(e), "release", d.node, NULL);
      break;
    }
  }
  hand_garbage(e); /* the inputs a finish released, the partitions dropped */
  return mine;
}

/* A kill that found nothing running took this attempt (the order says
 * it is doomed): it dies as it starts. */
static void crash_at_start(engine *e, worker *w)
{
  atomic_store(&w->cancel, true);
  w->killed = true;
  sl_core_failed(e->core, sl__exec_now(e), w->current);
}

bool sl__exec_await_order(worker *w, sl_decision *d, double *launched, input_ref **in)
{
  engine *e = w->e;
  while (!w->has_next && !e->stop)
    pthread_cond_wait(&w->cv, &e->lock);
  if (e->stop)
    return false;
  *d = w->next;
  *launched = w->next_launched_s;
  *in = w->next_inputs;
  w->next_inputs = NULL;
  w->has_next = false;
  return true;
}

void sl__exec_begin_attempt(worker *w, const sl_decision *d)
{
  w->busy = true;
  w->current = d->task;
  w->current_op = d->op;
  w->resume = false;
  w->killed = false;
  w->has_answer = false;
  atomic_store(&w->cancel, false);
}

static void *worker_main(void *arg)
{
  worker *w = arg;
  engine *e = w->e;
  pthread_mutex_lock(&e->lock);
  sl_decision d;
  double launched;
  input_ref *in;
  while (sl__exec_await_order(w, &d, &launched, &in)) {
    if (!sl_core_task_live(e->core, d.task)) { /* written off before it started */
      sl__exec_unpin_inputs(e, in, d.ninputs);
      continue;
    }
    sl__exec_begin_attempt(w, &d);
    if (d.doomed)
      crash_at_start(e, w);
    pthread_mutex_unlock(&e->lock);
    sl__exec_run_task(w, &d, launched, in); /* returns with the lock held */
    w->busy = false;
    if (sl__exec_drain(e, w) && w->done_row >= 0) /* its own finish gave it its next task */
      sl_recorder_set_handoff(e->rec, w->done_row, w->next_launched_s - w->done_at);
  }
  pthread_mutex_unlock(&e->lock);
  return NULL;
}

/* ---------------------------------------------------------------- faults */

/* A timeline row marking a fault as it strikes: a kill names the operator
 * of its victim (NULL: the next attempt to start, "any"), a loss or a
 * join its node. */
void sl__exec_mark_fault(engine *e, double now, const char *kind, int node, const char *op)
{
  char target[SL_NAME_MAX * 2 + 16];
  if (node >= 0)
    sl_cluster_node_name(e->cluster, node, target, sizeof target);
  else
    snprintf(target, sizeof target, "%s", op ? op : "any");
  if (sl_recorder_fault(e->rec, now, e->core, kind, target) < 0)
    sl__exec_fail(e, SL_ENOMEM, "out of memory recording the timeline");
}

/* Stops the worker running @p victim; returns its operator, -1 when none
 * runs it (launched but not yet picked up: the worker skips it). */
static int stop_victim(engine *e, sl_task_id victim)
{
  int op = -1;
  for (int n = 0; n < e->cluster->nnodes; n++)
    for (int s = 0; s < e->nslots[n]; s++) {
      worker *w = &e->workers[n][s];
      if (w->busy && !w->killed && w->current == victim) {
        atomic_store(&w->cancel, true);
        w->killed = true;
        pthread_cond_signal(&w->cv);
        op = w->current_op;
      }
    }
  return op;
}

static void inject(engine *e, int i, double now)
{
  /* what the core decided before the fault is carried out first, as the
   * simulator does at once: a LAUNCH a worker's emission made pins its
   * inputs before their node goes (a merge task launched 6 ms before its
   * input's node was lost found the store already without it) */
  sl__exec_drain(e, NULL);
  const sl_fault *f = &e->opts->faults.ev[i];
  sl_fault_log_check(&e->fault_log, &e->opts->faults, i, e->core);
  int struck = f->op;
  switch (f->kind) {
  case SL_FAULT_KILL: {
    /* the core picks the victim; its worker dies with it and a fresh
     * worker takes over the slot */
    sl_task_id victim;
    if (sl_core_kill(e->core, now, f->op, &victim) < 0 || victim == SL_NONE) {
      sl_fault_log_defer(&e->fault_log, i); /* nothing runs: the next attempt to start is doomed */
      break;
    }
    int op = stop_victim(e, victim);
    struck = op >= 0 ? op : struck;
    /* one launched but not yet picked up by its worker is written off
     * too: the worker skips it when it looks */
    sl_core_failed(e->core, now, victim);
    break;
  }
  case SL_FAULT_LOSE:
    for (int s = 0; s < e->nslots[f->node]; s++) {
      worker *w = &e->workers[f->node][s];
      if (w->busy) {
        atomic_store(&w->cancel, true);
        w->killed = true;
        pthread_cond_signal(&w->cv);
      }
    }
    sl_core_node_lost(e->core, now, f->node);
    sl_store_drop_node(e->store, f->node);
    break;
  case SL_FAULT_JOIN:
    sl_core_node_joined(e->core, now, f->node);
    break;
  }
  /* marked before the decisions it brings (a rollback) are carried out */
  if (f->kind == SL_FAULT_KILL)
    sl__exec_mark_fault(e, now, "kill", -1, struck >= 0 ? e->plan->ops[struck].name : NULL);
  else
    sl__exec_mark_fault(e, now, f->kind == SL_FAULT_LOSE ? "lose" : "join", f->node, NULL);
  sl__exec_drain(e, NULL);
}

/* Acquired pool nodes whose provisioning is over join the run. */
static void join_provisioned(engine *e, double now)
{
  for (int n = 0; n < e->cluster->nnodes; n++)
    if (e->join_at[n] <= now) {
      e->join_at[n] = INFINITY;
      sl_core_node_joined(e->core, now, n);
      sl__exec_mark_fault(e, now, "join", n, NULL);
      sl__exec_drain(e, NULL);
    }
}

/* -------------------------------------------------------------- progress */

void sl__exec_progress_line(engine *e, double now, const char *extra)
{
  sl_core_stats st;
  sl_core_get_stats(e->core, &st);
  double rate = now > e->last_progress_t ? (st.rows_delivered - e->last_progress_rows) /
                                               (now - e->last_progress_t)
                                         : 0;
  e->last_progress_rows = st.rows_delivered;
  e->last_progress_t = now;
  char ops[512] = "", bp[256] = "";
  size_t o = 0, b = 0;
  for (int i = 0; i < e->plan->nops; i++) {
    sl_core_op_stats os;
    sl_core_get_op_stats(e->core, i, &os);
    o += (size_t)snprintf(ops + o, o < sizeof ops ? sizeof ops - o : 0, " %s:%d", e->plan->ops[i].name,
                          os.running);
    if (os.waiting > 0)
      b += (size_t)snprintf(bp + b, b < sizeof bp ? sizeof bp - b : 0, " %s", e->plan->ops[i].name);
  }
  double budget = 0;
  for (int n = 0; n < e->cluster->nnodes; n++)
    budget += sl_cluster_node_group(e->cluster, n)->store_bytes;
  /* the pace since the start: a rate over half a second would swing */
  char left[40] = "";
  if (st.rows_delivered > 0 && st.rows_delivered < e->plan->sink_rows)
    snprintf(left, sizeof left, " ~%.0fs left", (e->plan->sink_rows - st.rows_delivered) * now / st.rows_delivered);
  fprintf(stderr, "\r\033[K%6.1fs rows %.0f/%.0f%s %.1f rows/s mem %.0f/%.0f MB running%s%s%s%s", now,
          st.rows_delivered, e->plan->sink_rows, left, rate, st.store_bytes / 1e6, budget / 1e6, ops,
          b ? " backpressured:" : "", bp, extra ? extra : "");
  fflush(stderr);
}

/* ----------------------------------------------------------------- setup */

/*
 * Frees the partitions no one references any more, away from the lock:
 * freeing a GPU batch's inputs (four partitions of 8 MB) took 1-10 ms in
 * one finish in twelve on an H200 whose 14 decoders all allocated, under
 * the lock, and the GPU's next batch waited for it (images under
 * streaming-plus: 22 such finishes a run; 0 since).
 */
static void *reclaim(void *arg)
{
  engine *e = arg;
  pthread_mutex_lock(&e->lock);
  for (;;) {
    while (!e->reclaim && !e->reclaim_stop)
      pthread_cond_wait(&e->reclaim_cv, &e->lock);
    sl_blob *g = e->reclaim;
    e->reclaim = NULL;
    if (!g)
      break; /* stopping, and nothing left */
    pthread_mutex_unlock(&e->lock);
    sl_store_free_garbage(g);
    pthread_mutex_lock(&e->lock);
  }
  pthread_mutex_unlock(&e->lock);
  return NULL;
}

static int start_workers(engine *e, char *err, size_t errlen)
{
  int nn = e->cluster->nnodes;
  pthread_cond_init(&e->reclaim_cv, NULL);
  if (pthread_create(&e->reclaimer, NULL, reclaim, e) != 0) {
    snprintf(err, errlen, "cannot start the reclaimer thread: %s", strerror(errno));
    return SL_ENOMEM;
  }
  e->reclaimer_running = true;
  e->workers = calloc(nn, sizeof *e->workers);
  e->nslots = calloc(nn, sizeof *e->nslots);
  e->join_at = malloc(sizeof *e->join_at * (size_t)nn);
  if (!e->workers || !e->nslots || !e->join_at)
    goto out_nomem;
  for (int n = 0; n < nn; n++)
    e->join_at[n] = INFINITY;
  for (int n = 0; n < nn; n++) {
    e->nslots[n] = sl_core_node_slots(e->core, n);
    e->workers[n] = calloc(e->nslots[n] > 0 ? e->nslots[n] : 1, sizeof **e->workers);
    if (!e->workers[n])
      goto out_nomem;
    for (int s = 0; s < e->nslots[n]; s++) {
      worker *w = &e->workers[n][s];
      w->e = e;
      w->node = n;
      w->slot = s;
      pthread_cond_init(&w->cv, NULL);
      atomic_init(&w->cancel, false);
      if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        snprintf(err, errlen, "cannot start worker thread: %s", strerror(errno));
        e->nslots[n] = s; /* only the started ones are joined */
        return SL_ENOMEM;
      }
    }
  }
  return 0;
out_nomem:
  snprintf(err, errlen, "out of memory");
  return SL_ENOMEM;
}

static void stop_workers(engine *e)
{
  pthread_mutex_lock(&e->lock);
  e->stop = true;
  for (int n = 0; e->workers && n < e->cluster->nnodes; n++)
    for (int s = 0; s < e->nslots[n]; s++) {
      atomic_store(&e->workers[n][s].cancel, true);
      pthread_cond_signal(&e->workers[n][s].cv);
    }
  pthread_mutex_unlock(&e->lock);
  /* every worker first: one still running may launch onto a slot whose
   * worker has already been joined, and its pinned inputs must be seen */
  for (int n = 0; e->workers && n < e->cluster->nnodes; n++)
    for (int s = 0; s < e->nslots[n]; s++)
      pthread_join(e->workers[n][s].thread, NULL);
  for (int n = 0; e->workers && n < e->cluster->nnodes; n++) {
    for (int s = 0; s < e->nslots[n]; s++) {
      worker *w = &e->workers[n][s];
      pthread_cond_destroy(&w->cv);
      if (w->has_next)
        sl__exec_unpin_inputs(e, w->next_inputs, w->next.ninputs); /* launched, never run */
      for (int op = 0; op < SL_MAX_OPS; op++)
        for (int m = 0; m < MAX_MEMBERS; m++)
          sl_kernel_free(w->kernels[op][m]);
    }
    free(e->workers[n]);
  }
  free(e->workers);
  free(e->nslots);
  free(e->join_at);
  e->join_at = NULL;
  e->workers = NULL;
  if (e->reclaimer_running) { /* last: the workers' unpins above made garbage too */
    pthread_mutex_lock(&e->lock);
    hand_garbage(e);
    e->reclaim_stop = true;
    e->reclaimer_running = false; /* what comes after is freed where it is made */
    pthread_cond_signal(&e->reclaim_cv);
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->reclaimer, NULL);
    pthread_cond_destroy(&e->reclaim_cv);
  }
}

sl_core_opts sl_exec_core_opts(const sl_exec_opts *o)
{
  sl_core_opts core = o->core;
  core.stall_timeout_s = o->stall_timeout_s; /* the core watches for stalls, as in the simulator */
  return core;
}

void sl_exec_opts_default(sl_exec_opts *o)
{
  memset(o, 0, sizeof *o);
  sl_core_opts_default(&o->core);
  o->out_dir = "runs/last";
  o->sample_period_s = 0.1;
  o->max_errored_rows = 0;
  o->time_scale = 1;
}

static bool has_gpu_op(const sl_plan *p)
{
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i].gpu > 0)
      return true;
  return false;
}

/* The sink's verdict in summary.csv's output_check: passed, or failed (the
 * run too, with @p what's reason). A run that did not complete is not
 * checked, unless a delivered partition failed already. */
static void record_verdict(engine *e, sl_summary *s, int rc, const char *what, const char *why)
{
  if (rc == 0) {
    snprintf(s->output_check, sizeof s->output_check, "passed");
    return;
  }
  snprintf(s->output_check, sizeof s->output_check, "failed");
  s->complete = false;
  e->fail_code = rc;
  snprintf(e->fail_msg, sizeof e->fail_msg, "%s check: %s", what, rc == SL_ENOMEM ? "out of memory" : why);
  snprintf(s->note, sizeof s->note, "%.300s", e->fail_msg);
}

static bool checkable(const engine *e, sl_summary *s, bool failed_on_delivery)
{
  if (s->complete && !e->fail_code)
    return true;
  snprintf(s->output_check, sizeof s->output_check, "%s", failed_on_delivery ? "failed" : "not_checked");
  return false;
}

/* valsort's verdict on a complete sort: the partitions' key ranges, and the
 * records against gensort's (regenerated from the seed). A wrong output
 * fails the run. */
static void check_sorted_output(engine *e, sl_summary *s)
{
  const sl_pop *src = &e->plan->ops[0];
  if (!checkable(e, s, e->sort_check_failed))
    return;
  int rc = sl_sort_check_finish(e->sort_check, e->plan->workload->seed, src->tasks, src->rows_per_task,
                                sl_sink_rows(e->sink), sl_sink_checksum(e->sink));
  record_verdict(e, s, rc, "sort", sl_sort_check_error(e->sort_check));
}

/* A groupby's verdict on a complete run: every group once, with the
 * aggregates of gensort's records (regenerated from the seed). A wrong
 * output fails the run. */
static void check_grouped_output(engine *e, sl_summary *s)
{
  const sl_pop *src = &e->plan->ops[0];
  if (!checkable(e, s, e->group_check_failed))
    return;
  int rc = sl_group_check_finish(e->group_check, e->plan->workload->seed, src->tasks, src->rows_per_task);
  record_verdict(e, s, rc, "group", sl_group_check_error(e->group_check));
}

/* Whether some operator's kernel makes the rows its data has, so that the
 * plan's sink rows are an estimate (sl_kernel_info.data_rows). */
static bool rows_estimated(const sl_workload *wl)
{
  for (int i = 0; i < wl->nops; i++) {
    const sl_kernel_info *k = wl->ops[i].kernel[0] ? sl_kernel_info_find(wl->ops[i].kernel) : NULL;
    if (k && k->data_rows)
      return true;
  }
  return false;
}

/* The key size of the groupby just before a sink that checks one. */
static int grouped_key_bytes(const sl_workload *wl)
{
  const sl_op_spec *agg = &wl->ops[wl->nops - 2];
  for (int i = 0; i < agg->nparams; i++)
    if (strcmp(agg->params[i].name, "key_bytes") == 0)
      return (int)agg->params[i].value;
  int dflt = 1, lo, hi;
  sl_kernel_param_range("groupby", "key_bytes", &dflt, &lo, &hi);
  return dflt;
}

static void fill_summary(engine *e, sl_summary *s, double jct)
{
  /* the bound of the plan as it ran: a time scale is in its times and links already */
  sl_summary_fill(s, e->core, e->plan, e->cluster, &e->opts->core, "executor", jct, (double)sl_sink_rows(e->sink),
                  e->done && e->fail_code == 0);
  snprintf(s->accelerator, sizeof s->accelerator, "%s",
           !has_gpu_op(e->plan) ? "none" : e->gpu_present ? "cuda" : "emulated");
  s->real_kernels = atomic_load(&e->real_kernels);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  s->peak_rss_bytes = (double)ru.ru_maxrss * 1024.0;
  s->sink_checksum = sl_sink_checksum(e->sink);
  s->errored_rows = e->rejected.rows;
  sl_fault_log_finish(&e->fault_log, &e->opts->faults, e->core);
  s->faults_applied = sl_fault_log_applied(&e->fault_log);
  sl_fault_log_describe(&e->fault_log, &e->opts->faults, s->faults_not_applied, sizeof s->faults_not_applied);
  s->spill_time = s->spilled_bytes > 0 ? SL_SPILL_REAL : SL_SPILL_NONE; /* real files, real time */
  if (e->fail_code == SL_EOOM)
    s->oom = true;
  if (!s->complete)
    snprintf(s->note, sizeof s->note, "%.300s", e->fail_msg[0] ? e->fail_msg : "interrupted");
}

/* The main thread: ticks the core, samples, injects failures, watches for
 * interruption and stalls. Holds the lock except while waiting. */
static void supervise(engine *e)
{
  const sl_exec_opts *o = e->opts;
  double next_sample = 0, next_progress = 0.5;
  int next_fault = 0;
  pthread_mutex_lock(&e->lock);
  int rc = sl_core_start(e->core, 0);
  if (rc < 0)
    sl__exec_fail(e, rc, "the core could not start the job: %s", sl_strerror(rc));
  sl__exec_drain(e, NULL);
  while (!e->done && !e->stop) {
    double wake = fmin(sl_core_wakeup(e->core), next_sample);
    if (next_fault < o->faults.n)
      wake = fmin(wake, o->faults.ev[next_fault].at_s);
    for (int n = 0; n < e->cluster->nnodes; n++)
      wake = fmin(wake, e->join_at[n]);
    wake = fmin(wake, sl__exec_now(e) + 0.05); /* notice signals promptly */
    struct timespec ts = abs_time(e, wake);
    pthread_cond_timedwait(&e->main_cv, &e->lock, &ts);
    double now = sl__exec_now(e);
    if (o->interrupted && *o->interrupted) {
      sl__exec_fail(e, SL_EINTR, "interrupted by a signal");
      break;
    }
    /* the job may have ended during the wait: a fault due since then
     * would strike a finished job (a stream rollback took rows back from
     * a sink already complete) */
    if (e->done)
      break;
    while (next_fault < o->faults.n && o->faults.ev[next_fault].at_s <= now)
      inject(e, next_fault++, now);
    join_provisioned(e, now);
    if (sl_core_wakeup(e->core) <= now) {
      sl_core_tick(e->core, now);
      sl__exec_drain(e, NULL);
    }
    if (now >= next_sample) {
      if (sl_recorder_sample(e->rec, now, e->core) < 0)
        sl__exec_fail(e, SL_ENOMEM, "out of memory recording the timeline");
      next_sample = now + o->sample_period_s;
    }
    if (o->progress && now >= next_progress) {
      sl__exec_progress_line(e, now, NULL);
      next_progress = now + 0.5;
    }
  }
  if (sl_recorder_sample(e->rec, sl__exec_now(e), e->core) < 0)
    sl__exec_fail(e, SL_ENOMEM, "out of memory recording the timeline");
  pthread_mutex_unlock(&e->lock);
  if (o->progress)
    fprintf(stderr, "\n");
}

/* The sink, its checks and the recorder of a run, and the output folder
 * begun: what the executor and its head (head.c) open alike. Fills
 * @p summary as a run that started. */
int sl__exec_outputs_open(engine *e, sl_summary *summary, char *err, size_t errlen)
{
  e->sink = sl_sink_new();
  const sl_workload *wl = e->plan->workload;
  bool check_sort = wl->nops > 0 && wl->ops[wl->nops - 1].kind == SL_OP_SINK &&
                    wl->ops[wl->nops - 1].check == SL_CHECK_SORTED;
  e->sort_check = check_sort ? sl_sort_check_new() : NULL;
  bool check_group = wl->nops > 1 && wl->ops[wl->nops - 1].kind == SL_OP_SINK &&
                     wl->ops[wl->nops - 1].check == SL_CHECK_GROUPED;
  e->group_check = check_group ? sl_group_check_new(grouped_key_bytes(wl)) : NULL;
  e->rec = sl_recorder_new(e->plan, e->cluster, true);
  if (e->opts->record_events && (e->events = sl_event_log_new()) != NULL)
    sl_core_observe(e->core, sl_event_log_observe, e->events);
  if (!e->sink || !e->rec || (e->opts->record_events && !e->events) || (check_sort && !e->sort_check) ||
      (check_group && !e->group_check)) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  /* Only a run that starts touches the output folder: a refused one
   * changes nothing on disk. */
  fill_summary(e, summary, 0);
  snprintf(summary->note, sizeof summary->note, "%s", SL_SUMMARY_STARTED_NOTE);
  int rc = sl_run_dir_begin(summary, e->opts->out_dir, err, errlen);
  if (rc < 0)
    memset(summary, 0, sizeof *summary); /* no run took place */
  return rc;
}

/* The run's summary, its checks of the output and its files, once it has
 * ended after @p jct seconds (@p startup before its clock started). */
int sl__exec_outputs_finish(engine *e, sl_summary *summary, double jct, double startup, char *err, size_t errlen)
{
  fill_summary(e, summary, jct);
  summary->startup_s = startup;
  summary->time_scale = e->opts->time_scale;
  /* a kernel that makes the rows its data has (a groupby: a row per group)
   * leaves the plan only an estimate of the rows; a check counts them */
  if (summary->complete && !rows_estimated(e->plan->workload) &&
      !sl_rejected_rows_add_up(&e->rejected, summary->rows, summary->expected_rows)) {
    summary->complete = false;
    snprintf(summary->note, sizeof summary->note, "the sink got %.0f rows of %.0f (%lld rejected)", summary->rows,
             summary->expected_rows, (long long)e->rejected.rows);
    e->fail_code = SL_ESTATE;
  } else if (summary->complete && e->rejected.rows > 0) {
    snprintf(summary->note, sizeof summary->note, "skipped %lld rejected rows; first: %.250s",
             (long long)e->rejected.rows, e->rejected.first);
  }
  if (e->sort_check)
    check_sorted_output(e, summary);
  if (e->group_check)
    check_grouped_output(e, summary);
  if (sl_recorder_write(e->rec, summary, e->opts->out_dir, err, errlen) < 0)
    return SL_EIO;
  return 0;
}

/* Frees what sl__exec_outputs_open() made. */
void sl__exec_outputs_close(engine *e)
{
  sl_event_log_free(e->events);
  sl_recorder_free(e->rec);
  sl_sink_free(e->sink);
  sl_sort_check_free(e->sort_check);
  sl_group_check_free(e->group_check);
  e->events = NULL;
  e->rec = NULL;
  e->sink = NULL;
  e->sort_check = NULL;
  e->group_check = NULL;
}

int sl_exec_run(const sl_plan *plan, const sl_cluster *cluster, const sl_exec_opts *opts,
                sl_summary *summary, char *err, size_t errlen)
{
  engine e = {.plan = plan, .cluster = cluster, .opts = opts};
  sl_fault_log_init(&e.fault_log, &opts->faults);
  char spill[600], cerr[512];
  int rc = 0;
  /* Partitions are allocated by one worker and freed by another at a high
   * rate; keeping freed memory in the heaps instead of trimming it back to
   * the kernel saves a page fault and a page clear per partition. */
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  /* Setting the trim threshold turns off glibc's sliding mmap threshold,
   * leaving it at 128 KB: every partition buffer was mapped and unmapped
   * on its own, 0.4 ms an 8 MB munmap (page tables, TLB shootdowns to the
   * other workers), under the engine lock. On an H100 that was a 1 ms gap
   * between GPU batches of 7 ms. Buffers up to glibc's largest threshold
   * (32 MB) now come from the heaps and are reused. */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  /* Per-thread arenas each grow and shrink on their own when buffers cross
   * threads; a few shared ones keep memory warm (measured with
   * bench_dispatch on 2 cores: 160k tasks/s with per-thread arenas, 260k
   * with two). One per core, not two in all: with partitions in the heaps,
   * 14 workers on 2 arenas queued on their locks (an image pipeline on 16
   * cores and an H100, median of 3: 3.93 s with 2 arenas, 2.74 s with 16;
   * a decode task 66 ms against 44 ms). */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  mallopt(M_ARENA_MAX, cores > 2 ? (int)(cores < 64 ? cores : 64) : 2);
  clock_gettime(CLOCK_MONOTONIC, &e.t0);
  pthread_mutex_init(&e.lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&e.main_cv, &ca);
  pthread_cond_init(&e.spill_cv, NULL);
  pthread_condattr_destroy(&ca);
  e.gpu_present = sl_cuda_device_count() > 0;
  if (!(e.net = sl_net_new(cluster))) {
    snprintf(err, errlen, "out of memory");
    pthread_cond_destroy(&e.main_cv);
    pthread_cond_destroy(&e.spill_cv);
    pthread_mutex_destroy(&e.lock);
    return SL_ENOMEM;
  }
  sl_rejected_tally_init(&e.rejected);
  snprintf(spill, sizeof spill, "%s", opts->spill_dir ? opts->spill_dir : "");
  if (!opts->spill_dir)
    snprintf(spill, sizeof spill, "%s/spill", opts->out_dir);
  if ((rc = sl__exec_check_kernels(&e, err, errlen)) < 0)
    goto out_destroy;
  int why = 0;
  sl_core_opts core = sl_exec_core_opts(opts);
  core.no_decision_hash = !opts->record_events; /* only the event log reads it */
  e.core = sl_core_create(plan, cluster, &core, &why, cerr, sizeof cerr);
  if (!e.core) {
    snprintf(err, errlen, "%s", cerr);
    rc = why == SL_EOOM || why == SL_ENOMEM ? why : SL_EINVAL; /* SL_EOOM: a budget below one partition */
    goto out_destroy;
  }
  e.store = sl_store_new(cluster->nnodes, spill);
  if (!e.store) {
    snprintf(err, errlen, "out of memory");
    rc = SL_ENOMEM;
    goto out_free;
  }
  if ((rc = sl__exec_outputs_open(&e, summary, err, errlen)) < 0)
    goto out_free;
  if ((rc = start_workers(&e, err, errlen)) < 0) {
    stop_workers(&e);
    goto out_free;
  }
  /* The job's clock starts with the core, as a simulation's does: the
   * engine's own start (a GPU probe takes 0.1 s on an H100) is not the
   * job's, and the core must not see it as time its policy had. */
  double startup = sl__exec_now(&e);
  clock_gettime(CLOCK_MONOTONIC, &e.t0);
  supervise(&e);
  double jct = sl__exec_now(&e);
  stop_workers(&e);
  if ((rc = sl__exec_outputs_finish(&e, summary, jct, startup, err, errlen)) < 0)
    goto out_free;
  if (e.events && (rc = sl_event_log_write(e.events, opts->record_events, sl_core_decision_hash(e.core), err,
                                           errlen)) < 0)
    goto out_free;
  rc = e.fail_code;
  if (rc) /* the whole message: the summary's note may be cut short */
    snprintf(err, errlen, "%s", e.fail_msg[0] ? e.fail_msg : summary->note);
out_free:
  sl__exec_outputs_close(&e);
  sl_rejected_tally_free(&e.rejected);
  sl_store_free(e.store);
  sl_core_free(e.core);
out_destroy:
  sl_net_free(e.net);
  pthread_cond_destroy(&e.main_cv);
  pthread_cond_destroy(&e.spill_cv);
  pthread_mutex_destroy(&e.lock);
  return rc;
}
