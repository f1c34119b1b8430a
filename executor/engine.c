/*
 * The real executor. One lock guards the core, the store's books, the sink
 * and the recorder; kernels run outside it. A worker that ends a task asks
 * the core under the lock and, when the next task lands on its own slot,
 * runs it at once without a thread switch: that keeps the dispatch cost in
 * microseconds. Everything the executor decides is what the core decided.
 *
 * Beside it: store.c holds the partitions' bytes, rejected.c the tally of
 * rows kernels reject, local_cluster.c this machine as a cluster.
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

#define MAX_MEMBERS 8

typedef struct engine engine;

/* An input partition a task holds: in memory, or the file it was spilled to. */
typedef struct {
  sl_blob *blob;
  const sl_rows *mem;
  char path[600];
  int node;     /* where the order says it lives: a node other than the task's sends it */
  double bytes;
} input_ref;

typedef struct {
  engine *e;
  int node, slot;
  pthread_t thread;
  pthread_cond_t cv;
  bool has_next;       /* a LAUNCH waits for this worker */
  sl_decision next;
  double next_launched_s; /* when the core handed it out: the slot is taken from then */
  input_ref *next_inputs; /* pinned when the LAUNCH came: the task has fetched them */
  bool busy;           /* running a task now */
  sl_task_id current;
  int current_op;
  bool resume;         /* RESUME for the current task */
  atomic_bool cancel;  /* the current task must stop (CANCEL, kill, node loss) */
  bool killed;         /* the core already knows the current task failed */
  int64_t done_row;    /* tasks.csv row of the attempt just done (-1: none), and its end: */
  double done_at;      /* its handoff is known once its finish has been decided on */
  sl_kernel *kernels[SL_MAX_OPS][MAX_MEMBERS];
} worker;

struct engine {
  const sl_plan *plan;
  const sl_cluster *cluster;
  const sl_exec_opts *opts;
  sl_core *core;
  sl_store *store;
  sl_sink *sink;
  sl_sort_check *sort_check; /* the sink checks a sort (check = sorted); NULL: no */
  bool sort_check_failed;    /* a delivered partition failed it: the run's verdict */
  sl_group_check *group_check; /* the sink checks a groupby (check = grouped); NULL: no */
  bool group_check_failed;
  sl_recorder *rec;
  sl_event_log *events; /* what the core was fed, with --record-events */
  pthread_mutex_t lock;
  pthread_cond_t main_cv;
  pthread_cond_t spill_cv; /* a spilled partition's file is complete */
  /* partitions no one holds any more, freed by their own thread: freeing
   * megabytes under the lock held every worker up (below, reclaim()) */
  pthread_t reclaimer;
  pthread_cond_t reclaim_cv;
  sl_blob *reclaim;
  bool reclaimer_running, reclaim_stop;
  worker **workers;     /* [node][slot] */
  int *nslots;
  /* kill: events that found no running task of their operator, by op + 1
   * (0: any operator): the next attempt of it to start dies, as in the
   * simulator (sim/engine.h), so a scheduled kill always strikes. */
  struct timespec t0;
  bool done, stop;
  int fail_code;
  char fail_msg[512];
  sl_fault_log fault_log;   /* what became of each scheduled fault */
  sl_rejected_tally rejected; /* rows kernels rejected, skipped under --max-errored-rows */
  bool gpu_present;
  atomic_bool real_kernels; /* some attempt ran a kernel that takes its own time */
  double last_progress_rows, last_progress_t;
  sl_net *net;              /* the cluster's links, emulated: storage reads, remote inputs */
  double *join_at;          /* per node: when an acquired pool node is in service, INFINITY: none */
};

/* ------------------------------------------------------------------ time */

static double now_s(const engine *e)
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

static void fail_job(engine *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail_job(engine *e, int code, const char *fmt, ...)
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

static void deliver(engine *e, const sl_decision *d)
{
  const sl_rows *mem;
  char path[600], err[700];
  sl_rows loaded;
  sl_rows_init(&loaded);
  sl_blob *b = sl_store_acquire(e->store, d->part, &mem, path, sizeof path);
  if (!b) {
    fail_job(e, SL_ESTATE, "partition %u reached the sink without its bytes", d->part);
    return;
  }
  if (!mem && !sl_store_blob_ready(b)) { /* a sink's partition is written under the lock: never */
    fail_job(e, SL_ESTATE, "partition %u reached the sink before its file was written", d->part);
    goto out_release;
  }
  if (!mem) {
    if (sl_store_read_spill(path, &loaded, err, sizeof err) < 0) {
      fail_job(e, SL_EIO, "%s", err);
      goto out_release;
    }
    mem = &loaded;
  }
  if (sl_sink_deliver(e->sink, mem) < 0)
    fail_job(e, SL_ESTATE, "sink: %s", sl_sink_last_error(e->sink));
  else if (e->sort_check && sl_sort_check_partition(e->sort_check, mem) < 0) {
    e->sort_check_failed = true;
    fail_job(e, SL_ESTATE, "sort check: %s", sl_sort_check_error(e->sort_check));
  } else if (e->group_check && sl_group_check_partition(e->group_check, mem) < 0) {
    e->group_check_failed = true;
    fail_job(e, SL_ESTATE, "group check: %s", sl_group_check_error(e->group_check));
  }
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
    fail_job(e, SL_ENOMEM, "out of memory");
    return NULL;
  }
  for (int i = 0; i < d->ninputs; i++) {
    in[i].node = d->in[i].node;
    in[i].bytes = d->in[i].read_bytes; /* what the task reads of it: a reducer, its block */
    in[i].blob = sl_store_acquire(e->store, d->inputs[i], &in[i].mem, in[i].path, sizeof in[i].path);
    if (!in[i].blob)
      fail_job(e, SL_ESTATE, "task %u of '%s' launched without input partition %u", d->task,
               e->plan->ops[d->op].name, d->inputs[i]);
    /* the store holds the bytes, the core the books: they must agree, as
     * check_accounting() asks of the totals */
    else if ((in[i].mem == NULL) != d->in[i].spilled)
      fail_job(e, SL_ESTATE, "input partition %u of task %u is %s, but the core has it %s", d->inputs[i],
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

static void unpin_inputs(engine *e, input_ref *in, int n)
{
  for (int i = 0; in && i < n; i++)
    sl_store_release(e->store, in[i].blob);
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

static void mark_fault(engine *e, double now, const char *kind, int node, const char *op);

/* Acts on every pending decision of the core. Called with the lock held;
 * returns true when a LAUNCH landed on @p self (it runs it next). */
static bool drain(engine *e, worker *self)
{
  sl_decision d;
  bool mine = false;
  while (sl_core_next(e->core, &d)) {
    worker *w = worker_at(e, d.node, d.slot);
    switch (d.kind) {
    case SL_DEC_LAUNCH:
      if (!w) {
        fail_job(e, SL_ESTATE, "core launched on a slot that does not exist");
        break;
      }
      if (w->has_next) /* a launch its node's loss cancelled before it ran */
        unpin_inputs(e, w->next_inputs, w->next.ninputs);
      w->has_next = true;
      w->next = d;
      w->next_launched_s = now_s(e);
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
      sl_sink_rollback(e->sink, d.keep_split, (uint32_t)e->plan->ops[0].tasks);
      if (e->sort_check)
        sl_sort_check_rolled_back(e->sort_check);
      if (e->group_check)
        sl_group_check_rollback(e->group_check, d.keep_split, (uint32_t)e->plan->ops[0].tasks);
      if (sl_recorder_rollback(e->rec, now_s(e), e->core) < 0)
        fail_job(e, SL_ENOMEM, "out of memory recording the timeline");
      break;
    case SL_DEC_CHECKPOINT:
      break; /* the sink keeps its state per split: nothing to copy */
    case SL_DEC_DONE:
      e->done = true;
      pthread_cond_signal(&e->main_cv);
      break;
    case SL_DEC_FAIL: {
      char why[320];
      sl_failure_text(&d, e->plan, e->cluster, e->core, why, sizeof why);
      fail_job(e, d.code, "%s", why);
      break;
    }
    case SL_DEC_ACQUIRE: /* its workers wait already: it serves once provisioned */
      e->join_at[d.node] = now_s(e) + d.delay_s;
      pthread_cond_signal(&e->main_cv);
      mark_fault(e, now_s(e), "acquire", d.node, NULL);
      break;
    case SL_DEC_RELEASE: /* the core left nothing there: its workers idle until the end */
      mark_fault(e, now_s(e), "release", d.node, NULL);
      break;
    }
  }
  hand_garbage(e); /* the inputs a finish released, the partitions dropped */
  return mine;
}

/* --------------------------------------------------------------- kernels */

/* What member @p member of operator @p op is built from. Kernels get no
 * time of their own: a modelled kernel's slot is held for the work order's
 * charge by the task (pace_to()), a real one takes what it takes. */
static void kernel_args(const engine *e, int op, int member, sl_kernel_args *out)
{
  const sl_pop *pop = &e->plan->ops[op];
  const sl_op_spec *spec = &e->plan->workload->ops[pop->first + member];
  sl_kernel_args a = {0};
  a.params = spec->params;
  a.nparams = spec->nparams;
  a.seed = e->plan->workload->seed;
  a.out_row_bytes = spec->inflation > 0 ? 0 : spec->out_row_bytes;
  a.inflation = spec->inflation;
  a.rows_out_per_row = spec->kind == SL_OP_SOURCE ? 1 : spec->rows_out_per_row;
  a.gpu_slot = pop->gpu > 0;
  a.gpu_device = 0;
  *out = a;
}

static sl_kernel *kernel_for(worker *w, int op, int member)
{
  engine *e = w->e;
  sl_kernel **slot = &w->kernels[op][member];
  if (*slot)
    return *slot;
  const sl_op_spec *spec = &e->plan->workload->ops[e->plan->ops[op].first + member];
  sl_kernel_args a;
  kernel_args(e, op, member, &a);
  a.cancel = &w->cancel;
  *slot = sl_kernel_new(spec->kernel, &a);
  return *slot;
}

/* Every kernel's parameters, checked before anything runs: a value out of
 * range is an error in the spec, to be reported at its line, not a task
 * failure half-way through the run. */
static int check_kernels(const engine *e, char *err, size_t errlen)
{
  const sl_workload *w = e->plan->workload;
  char why[256];
  for (int op = 0; op < e->plan->nops; op++)
    for (int m = 0; m < e->plan->ops[op].nfused; m++) {
      const sl_op_spec *spec = &w->ops[e->plan->ops[op].first + m];
      sl_kernel_args a;
      kernel_args(e, op, m, &a);
      if (sl_kernel_check_args(spec->kernel, &a, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s:%d: operator '%s', kernel '%s': %s", w->path, spec->line, spec->name,
                 spec->kernel, why);
        return SL_EINVAL;
      }
    }
  return 0;
}

/* ------------------------------------------------------------ the task */

typedef struct {
  sl_task_id id;
  int op;
  int64_t rows_out, parts_out;
  double bytes_out;
  bool gone; /* the core no longer wants this attempt */
  /* the work order's pace: the k-th of nparts partitions goes out at k /
   * nparts of the charge, as the simulator emits them; 0 charge: real
   * kernels, not paced */
  double start_abs, charge;
  int64_t nparts;
  sl_kernel *holder;
  double waited; /* held by backpressure: refused emissions until RESUME */
  double transfer; /* receiving its inputs: storage reads, partitions from other nodes */
  double spread;   /* the order's spread factor when its charge is held, else 1 */
  /* the spill disk: outputs written, spilled inputs read back (seconds, bytes) */
  double spill_write_s, spill_write_bytes, spill_read_s, spill_read_bytes;
  double dispatch; /* from the core's LAUNCH to the worker starting it */
  int64_t out_blocks; /* the order's: blocks a spilled output is written in */
} task_run;

/* The core's books and the real buffers must agree byte for byte: the
 * budget the core enforces is only true if they do. */
static void check_accounting(engine *e, int node)
{
  double real = sl_store_node_bytes(e->store, node), booked = sl_core_node_store(e->core, node);
  if (fabs(real - booked) > 0.5)
    fail_job(e, SL_ESTATE, "node %d holds %.0f bytes but the core counts %.0f", node, real, booked);
}

/* Cuts a spilled output in the @p nblocks blocks its order names
 * (sl_decision.out_blocks): each row goes to its reducer's share by the
 * kernel of the shuffle after operator @p op. False, and one block, when
 * the order names one (or there is no memory for the cut). */
static bool reducer_blocks(worker *w, int op, int64_t nblocks, const sl_rows *rows, sl_spill_blocks *bl,
                           int64_t **owned)
{
  *owned = NULL;
  *bl = (sl_spill_blocks){.nblocks = 1, .block_of = NULL};
  if (nblocks <= 1)
    return false;
  size_t n = sl_rows_count(rows);
  int64_t *of = malloc(sizeof *of * (n ? n : 1));
  if (!of)
    return false; /* one block: each reducer reads the whole file, as before blocks */
  /* a merge stage takes its shares from its shuffle's kernel too (its first) */
  const sl_kernel *k = kernel_for(w, op + 1, 0);
  for (size_t i = 0; i < n; i++)
    of[i] = sl_kernel_share_of(k, sl_rows_id(rows, i), sl_rows_payload(rows, i), sl_rows_len(rows, i), nblocks);
  *bl = (sl_spill_blocks){.nblocks = nblocks, .block_of = of};
  *owned = of;
  return true;
}

/*
 * Writes a partition the core spilled; called and returns with the lock
 * held. A partition for the sink is written with the lock, as its DELIVER
 * reads it at once. Any other is written without: the engine goes on
 * meanwhile, and two slots' spills share the disk, as in the simulator
 * (under the lock they took turns). A task that reads it before it is
 * complete waits (wait_spill_written()).
 */
static int spill(worker *w, task_run *tr, sl_part_id pid, sl_rows *out, double bytes)
{
  engine *e = w->e;
  char err[700];
  double t0 = now_s(e);
  int rc;
  if (tr->op == e->plan->nops - 1) {
    rc = sl_store_spill(e->store, pid, w->node, out, err, sizeof err);
  } else {
    sl_blob *b;
    rc = sl_store_spill_begin(e->store, pid, w->node, bytes, &b, err, sizeof err);
    if (rc == 0) {
      pthread_mutex_unlock(&e->lock);
      sl_spill_blocks blocks;
      int64_t *owned;
      reducer_blocks(w, tr->op, tr->out_blocks, out, &blocks, &owned);
      rc = sl_store_spill_write(b, out, &blocks, err, sizeof err);
      free(owned);
      if (rc == 0) /* the disk the cluster spec gives the node, as the simulator's */
        sl_net_disk(e->net, w->node, bytes, true);
      pthread_mutex_lock(&e->lock);
      sl_store_spill_end(e->store, b);
      pthread_cond_broadcast(&e->spill_cv);
    }
  }
  if (rc < 0)
    fail_job(e, rc == SL_ENOMEM ? SL_ENOMEM : SL_EIO, "operator '%s' on node %d: %s", e->plan->ops[tr->op].name,
             w->node, err);
  double took = now_s(e) - t0;
  tr->spill_write_s += took;
  tr->start_abs += took; /* the disk's time comes on top of the charge, as in the simulator */
  tr->spill_write_bytes += bytes;
  return rc;
}

/* A spilled input whose file another slot is still writing: the disk's
 * time, as the reader sees it. Called without the lock. */
static void wait_spill_written(engine *e, const sl_blob *b)
{
  pthread_mutex_lock(&e->lock);
  while (!sl_store_blob_ready(b))
    pthread_cond_wait(&e->spill_cv, &e->lock);
  pthread_mutex_unlock(&e->lock);
}

/* Hands a full output buffer to the core; waits while it says wait. */
static int flush(worker *w, task_run *tr, sl_rows *out)
{
  engine *e = w->e;
  int rc = 0;
  int64_t rows = (int64_t)sl_rows_count(out);
  double bytes = (double)sl_rows_bytes(out);
  pthread_mutex_lock(&e->lock);
  for (;;) {
    if (atomic_load(&w->cancel) || e->stop) {
      rc = SL_EINTR;
      break;
    }
    sl_part_id pid;
    sl_emit_fate fate;
    rc = sl_core_emit(e->core, now_s(e), tr->id, rows, bytes, &pid, &fate);
    if (rc == SL_EAGAIN) {
      /* Parking this task may have been the core's cue to let another
       * waiter (or this one) through: act on that before sleeping. */
      double parked = now_s(e);
      drain(e, w);
      while (!w->resume && !atomic_load(&w->cancel) && !e->stop)
        pthread_cond_wait(&w->cv, &e->lock);
      w->resume = false;
      tr->waited += now_s(e) - parked;
      /* the pace moves with the wait: the charge is work, not wall time */
      tr->start_abs += now_s(e) - parked;
      continue;
    }
    if (rc == SL_ESTATE) {
      tr->gone = true;
      rc = SL_EINTR;
      break;
    }
    if (rc == SL_EOOM)
      drain(e, w); /* the core's FAIL names the operator and the node */
    if (rc < 0)
      break;
    if (fate == SL_EMIT_STORED)
      rc = sl_store_put(e->store, pid, w->node, out);
    else if (fate == SL_EMIT_SPILLED)
      rc = spill(w, tr, pid, out, bytes);
    sl_rows_reset(out);
    tr->rows_out += rows;
    tr->bytes_out += bytes;
    tr->parts_out++;
    break;
  }
  drain(e, w); /* a LAUNCH for us waits in w->next until this task ends */
  check_accounting(e, w->node);
  pthread_mutex_unlock(&e->lock);
  /* a sink that writes to disk: the spec's disk takes the partition first,
   * as the simulator charges it (the rows themselves go to the sink) */
  if (rc == 0 && tr->op == e->plan->nops - 1 && e->plan->sink_to_disk)
    sl_net_disk(e->net, w->node, bytes, true);
  else if (rc == 0 && tr->op == e->plan->nops - 1 && e->plan->sink_to_storage)
    sl_net_upload(e->net, w->node, bytes); /* an upload to storage, likewise */
  return rc;
}

/* Where the rows a task feeds its kernels come from, so that a rejected
 * row can be named, and what it rejected so far. */
typedef struct {
  const sl_decision *d;
  sl_part_id input;      /* the input partition, SL_NONE in a source task */
  sl_rejected_batch rejected; /* since the last note_errors() */
} row_origin;

/* Counts row @p i of @p rows as rejected by member @p m of @p op and names
 * the first one: operator, row, source partition, input partition, task. */
static int reject_row(worker *w, int op, int m, const sl_rows *rows, size_t i, const sl_kernel *k,
                      row_origin *o)
{
  const sl_plan *p = w->e->plan;
  int64_t id = sl_rows_id(rows, i);
  sl_rejected_row r = {.level = p->ops[op].first + m, .id = id};
  r.sink_rows = sl_rejected_sink_rows(p, op, m, &r.exact);
  if (sl_rejected_batch_push(&o->rejected, &r) < 0)
    return SL_ENOMEM;
  if (o->rejected.first[0])
    return 0;
  char input[48] = "";
  if (o->input != SL_NONE)
    snprintf(input, sizeof input, ", input partition %u", o->input);
  snprintf(o->rejected.first, sizeof o->rejected.first, "operator '%s' rejected row %lld (partition %u of source '%s'%s, task %u): %s",
           p->workload->ops[p->ops[op].first + m].name, (long long)id, sl_rows_split(rows, i),
           p->workload->ops[0].name, input, o->d->task, sl_rejected_message(sl_kernel_last_error(k), id));
  return 0;
}

/* Passes @p rows through fused members [from, nfused) into @p out. A row a
 * kernel rejects as corrupt is left out and counted in @p o. */
static int through_members(worker *w, int op, int from, sl_rows *rows, sl_rows *out, row_origin *o)
{
  const sl_pop *pop = &w->e->plan->ops[op];
  sl_rows a, b;
  sl_rows_init(&a);
  sl_rows_init(&b);
  sl_rows *cur = rows;
  int rc = 0;
  for (int m = from; m < pop->nfused && rc == 0; m++) {
    sl_kernel *k = kernel_for(w, op, m);
    if (!k) {
      rc = SL_EKERNEL;
      break;
    }
    sl_rows *dst = (m == pop->nfused - 1) ? out : (cur == &a ? &b : &a);
    if (dst != out)
      sl_rows_reset(dst);
    size_t n = sl_rows_count(cur);
    rc = sl_kernel_apply(k, cur, 0, n, dst);
    if (rc == SL_EKERNEL) {
      /* find the bad rows: apply row by row, leaving out what fails */
      rc = 0;
      for (size_t i = 0; i < n && rc == 0; i++) {
        int r = n == 1 ? SL_EKERNEL : sl_kernel_apply(k, cur, i, 1, dst);
        if (r == SL_EKERNEL)
          rc = reject_row(w, op, m, cur, i, k, o);
        else if (r < 0)
          rc = r;
      }
    }
    cur = dst;
  }
  if (pop->nfused == from && rc == 0)
    rc = sl_rows_append_range(out, rows, 0, sl_rows_count(rows));
  sl_rows_free(&a);
  sl_rows_free(&b);
  return rc;
}

/* Input rows a task feeds its kernels at a time: a batch operator's
 * batch, else about one output partition's worth. */
static int64_t chunk_rows(const sl_pop *pop, const sl_decision *d)
{
  if (pop->batch_size > 0)
    return pop->batch_size;
  if (d->rows_per_part == INT64_MAX)
    return INT64_MAX;
  double per = floor((double)d->rows_per_part / fmax(pop->rows_out_per_row, 1e-9));
  return per >= (double)INT64_MAX ? INT64_MAX : (int64_t)fmax(1, per);
}

static double monotonic_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Holds the slot until fraction @p frac of the charge has passed. */
static int pace_to(task_run *tr, double frac)
{
  if (tr->charge <= 0 || !tr->holder)
    return 0;
  return sl_kernel_hold(tr->holder, tr->start_abs + tr->charge * fmin(1, frac)) ? SL_EINTR : 0;
}

/* Emits the rows of @p out as the work order cuts them: whole partitions
 * of rows_per_part rows, each at its time; with @p last, the rest too.
 * Rows of a partition not yet whole stay in @p out. */
/* How far into its charge a task is held before its next partition goes
 * out: the set-up, then evenly over the rest, or all of it first
 * (outputs_at_end): sl_emit_share(), as the simulator paces. */
static double emit_point(const sl_decision *d, const task_run *tr)
{
  return sl_emit_share(d->setup_s, d->work_s, d->outputs_at_end, tr->parts_out + 1, tr->nparts);
}

static int emit_parts(worker *w, const sl_decision *d, task_run *tr, sl_rows *out, bool last)
{
  size_t n = sl_rows_count(out), at = 0;
  size_t per = d->rows_per_part == INT64_MAX ? SIZE_MAX : (size_t)d->rows_per_part;
  int rc = 0;
  if (n == per || (last && n > 0 && n <= per)) { /* the common case: all of it, no copy */
    if ((rc = pace_to(tr, emit_point(d, tr))) == 0)
      rc = flush(w, tr, out);
    return rc;
  }
  sl_rows part, rest;
  sl_rows_init(&part);
  sl_rows_init(&rest);
  while (rc == 0 && at < n && (n - at >= per || last)) {
    size_t take = n - at < per ? n - at : per;
    sl_rows_reset(&part);
    if ((rc = sl_rows_append_range(&part, out, at, take)) < 0)
      break;
    at += take;
    if ((rc = pace_to(tr, emit_point(d, tr))) == 0)
      rc = flush(w, tr, &part);
  }
  if (rc == 0 && at > 0) { /* keep the unfinished partition's rows */
    if ((rc = sl_rows_append_range(&rest, out, at, n - at)) == 0)
      sl_rows_move(out, &rest);
  }
  sl_rows_free(&part);
  sl_rows_free(&rest);
  return rc;
}

/* Adds the rows @p o rejected to the job's count; past --max-errored-rows
 * the job fails, naming the row. */
static int note_errors(worker *w, row_origin *o)
{
  if (o->rejected.n == 0)
    return 0;
  engine *e = w->e;
  int64_t limit = e->opts->max_errored_rows;
  pthread_mutex_lock(&e->lock);
  /* a re-run (after a failure or a rollback) meets the same bad rows: each
   * counts once */
  int rc = sl_rejected_tally_add(&e->rejected, &o->rejected);
  if (rc < 0)
    fail_job(e, SL_ENOMEM, "out of memory counting rejected rows");
  bool over = e->rejected.rows > limit;
  if (over && limit == 0)
    fail_job(e, SL_EKERNEL, "%s (--max-errored-rows N skips up to N such rows)", o->rejected.first);
  else if (over)
    fail_job(e, SL_EKERNEL, "%lld rows rejected, more than --max-errored-rows %lld; %s",
             (long long)e->rejected.rows, (long long)limit, o->rejected.first);
  pthread_mutex_unlock(&e->lock);
  sl_rejected_batch_clear(&o->rejected);
  return rc < 0 ? rc : over ? SL_EKERNEL : 0;
}

static int run_source(worker *w, const sl_decision *d, task_run *tr, sl_rows *out)
{
  engine *e = w->e;
  const sl_pop *pop = &e->plan->ops[d->op];
  sl_kernel *gen = kernel_for(w, d->op, 0);
  if (!gen)
    return SL_EKERNEL;
  int64_t per = chunk_rows(pop, d);
  int64_t first = d->split * pop->rows_per_task;
  sl_rows chunk;
  sl_rows_init(&chunk);
  int rc = 0;
  row_origin origin = {.d = d, .input = SL_NONE};
  for (int64_t done = 0; done < d->rows && rc == 0;) {
    int64_t n = d->rows - done < per ? d->rows - done : per;
    sl_rows_reset(&chunk);
    rc = sl_kernel_generate(gen, (uint32_t)d->split, first + done, n, &chunk);
    if (rc == SL_EKERNEL) { /* the source itself cannot make its rows: no row to skip */
      pthread_mutex_lock(&e->lock);
      fail_job(e, SL_EKERNEL, "operator '%s' task %u (partition %u): %s", e->plan->workload->ops[0].name,
               d->task, (unsigned)d->split, sl_kernel_last_error(gen));
      pthread_mutex_unlock(&e->lock);
    }
    if (rc == 0)
      rc = through_members(w, d->op, 1, &chunk, out, &origin);
    if (rc == 0)
      rc = note_errors(w, &origin);
    done += n;
    if (rc == 0)
      rc = emit_parts(w, d, tr, out, false);
  }
  sl_rows_free(&chunk);
  sl_rejected_batch_free(&origin.rejected);
  return rc;
}

/* Whether row @p r of @p src falls in shares [lo, hi) of @p shares. */
static bool in_shares(const sl_kernel *k, const sl_rows *src, size_t r, int64_t lo, int64_t hi, int64_t shares)
{
  int64_t s = sl_kernel_share_of(k, sl_rows_id(src, r), sl_rows_payload(src, r), sl_rows_len(src, r), shares);
  return s >= lo && s < hi;
}

static int run_map(worker *w, const sl_decision *d, input_ref *in, task_run *tr, sl_rows *out)
{
  engine *e = w->e;
  const sl_pop *pop = &e->plan->ops[d->op];
  int64_t per = chunk_rows(pop, d);
  int rc = 0;
  char err[700];
  sl_rows chunk, loaded;
  sl_rows_init(&chunk);
  sl_rows_init(&loaded);
  row_origin origin = {.d = d};
  /* an all-to-all task reads the share of every input its order names, by
   * its kernel's partitioning (a sort's key ranges) or by row id */
  int64_t reducers = d->shares > 1 ? d->shares : 1, share = d->share, share_end = d->share_end;
  const sl_kernel *first = kernel_for(w, d->op, 0);
  /* a kernel that needs the whole task (a sort) gets every row at once */
  bool whole = first && sl_kernel_whole_task(first);
  for (int i = 0; i < d->ninputs && rc == 0; i++) {
    const sl_rows *src = in[i].mem;
    if (!src) { /* spilled: read it back, outside the lock */
      sl_rows_reset(&loaded);
      double t0 = now_s(e);
      wait_spill_written(e, in[i].blob);
      rc = sl_store_read_spill_blocks(in[i].path, share, share_end, reducers, &loaded, NULL, err, sizeof err);
      if (rc == 0)
        sl_net_disk(e->net, d->node, (double)sl_rows_bytes(&loaded), false);
      double took = now_s(e) - t0;
      tr->spill_read_s += took;
      tr->start_abs += took; /* read before the work starts: not part of the charge */
      tr->spill_read_bytes += (double)sl_rows_bytes(&loaded);
      if (rc < 0) {
        pthread_mutex_lock(&e->lock);
        fail_job(e, SL_EIO, "%s", err);
        pthread_mutex_unlock(&e->lock);
        break;
      }
      src = &loaded;
    }
    size_t rows = sl_rows_count(src);
    origin.input = d->inputs[i];
    for (size_t at = 0; at < rows && rc == 0;) {
      size_t take = rows - at < (size_t)per ? rows - at : (size_t)per;
      if (!whole)
        sl_rows_reset(&chunk);
      for (size_t r = at; r < at + take && rc == 0; r++)
        if (reducers == 1 || in_shares(first, src, r, share, share_end, reducers))
          rc = sl_rows_append_range(&chunk, src, r, 1);
      at += take;
      if (whole)
        continue;
      if (rc == 0)
        rc = through_members(w, d->op, 0, &chunk, out, &origin);
      if (rc == 0)
        rc = note_errors(w, &origin);
      if (rc == 0)
        rc = emit_parts(w, d, tr, out, false);
    }
  }
  if (whole && rc == 0) {
    rc = through_members(w, d->op, 0, &chunk, out, &origin);
    if (rc == 0)
      rc = note_errors(w, &origin);
    if (rc == 0)
      rc = emit_parts(w, d, tr, out, false);
  }
  sl_rows_free(&chunk);
  sl_rows_free(&loaded);
  sl_rejected_batch_free(&origin.rejected);
  return rc;
}

/* Records the attempt; its row in tasks.csv (-1: rows are not kept). */
static int64_t record(worker *w, const sl_decision *d, const task_run *tr, double start, double end,
                      sl_task_status st)
{
  sl_task_record r = {.task = d->task, .origin = d->origin, .attempt = d->attempt, .op = d->op,
                      .node = d->node, .slot = d->slot, .start_s = start, .end_s = end,
                      .rows_in = d->rows, .bytes_in = d->bytes, .rows_out = tr->rows_out,
                      .bytes_out = tr->bytes_out, .parts_out = (int)tr->parts_out, .status = st,
                      .speed = d->speed, .waited_s = tr->waited, .transfer_s = tr->transfer,
                      .spread = tr->spread, .fresh = d->fresh, .spill_write_s = tr->spill_write_s,
                      .spill_write_bytes = tr->spill_write_bytes, .spill_read_s = tr->spill_read_s,
                      .spill_read_bytes = tr->spill_read_bytes, .dispatch_s = tr->dispatch,
                      .handoff_s = -1};
  if (sl_recorder_task(w->e->rec, &r) < 0) {
    fail_job(w->e, SL_ENOMEM, "out of memory recording task %u", d->task);
    return -1;
  }
  return sl_recorder_ntasks(w->e->rec) - 1;
}

/* What the attempt receives before it works, over the emulated links as
 * the simulator's attempt does: a source its rows from storage; any other
 * task the inputs another node holds, one transfer per run of inputs from
 * the same node. The wall seconds it took. */
static double receive_inputs(engine *e, const sl_decision *d, const input_ref *in)
{
  const sl_pop *pop = &e->plan->ops[d->op];
  if (pop->kind == SL_OP_SOURCE && e->plan->source_from_disk) /* off the spec's disk, as the simulator */
    return sl_net_disk(e->net, d->node, (double)d->rows * pop->read_bytes_per_row, false);
  if (pop->kind == SL_OP_SOURCE)
    return sl_net_transfer(e->net, SL_NET_STORAGE, d->node, (double)d->rows * pop->read_bytes_per_row);
  double took = 0;
  for (int i = 0; i < d->ninputs;) {
    int from = in[i].node;
    double bytes = 0;
    for (; i < d->ninputs && in[i].node == from; i++)
      bytes += in[i].bytes;
    took += sl_net_transfer(e->net, from, d->node, bytes);
  }
  return took;
}

/* Runs one task; called without the lock, returns with it held. */
static void run_task(worker *w, const sl_decision *d, double launched, input_ref *in)
{
  engine *e = w->e;
  task_run tr = {.id = d->task, .op = d->op, .out_blocks = d->out_blocks};
  double start = now_s(e);
  tr.dispatch = fmax(0, start - launched);
  sl_rows out;
  sl_rows_init(&out);
  int rc = 0;
  const sl_pop *pop = &e->plan->ops[d->op];
  bool modelled = true;
  for (int m = 0; m < pop->nfused && rc == 0; m++) {
    if (d->fresh) { /* the order says this slot sets the operator up: a new instance does */
      sl_kernel_free(w->kernels[d->op][m]);
      w->kernels[d->op][m] = NULL;
    }
    sl_kernel *k = kernel_for(w, d->op, m);
    rc = k ? sl_kernel_begin_task(k) : SL_EKERNEL;
    if (rc == 0) {
      modelled = modelled && sl_kernel_modelled(k);
      /* the held time is slept, or burnt as CPU by a member that burns it */
      if (!tr.holder || sl_kernel_burns_cpu(k))
        tr.holder = k;
    }
  }
  if (rc == 0)
    tr.transfer = receive_inputs(e, d, in);
  tr.start_abs = monotonic_s();
  tr.charge = modelled ? d->charge_s : 0;
  if (!modelled && rc == 0)
    atomic_store(&e->real_kernels, true);
  tr.spread = modelled ? d->spread : 1; /* a real kernel's time is its own */
  tr.nparts = d->out_parts > 0 ? d->out_parts : 1;
  if (rc == 0)
    rc = pop->kind == SL_OP_SOURCE ? run_source(w, d, &tr, &out) : run_map(w, d, in, &tr, &out);
  if (rc == 0 && sl_rows_count(&out) > 0)
    rc = emit_parts(w, d, &tr, &out, true);
  if (rc == 0)
    rc = pace_to(&tr, 1); /* the slot is held for the whole charge */
  sl_rows_free(&out);
  pthread_mutex_lock(&e->lock);
  unpin_inputs(e, in, d->ninputs);
  double end = now_s(e);
  if (rc == 0 && w->killed)
    rc = SL_EINTR; /* written off while it ran, even if it emitted nothing */
  if (tr.transfer > 0 && sl_core_task_live(e->core, d->task))
    sl_core_note_transfer(e->core, d->task, tr.transfer);
  w->done_row = -1;
  if (rc == 0) {
    sl_core_finished(e->core, end, d->task);
    w->done_row = record(w, d, &tr, start, end, SL_TASK_DONE);
    w->done_at = end;
  } else {
    if (rc == SL_EKERNEL && !e->stop)
      fail_job(e, SL_EKERNEL, "operator '%s' task %u: cannot build its kernel", pop->name, d->task);
    if (!w->killed && !tr.gone)
      sl_core_failed(e->core, end, d->task);
    record(w, d, &tr, start, end, w->killed || tr.gone ? SL_TASK_CANCELLED : SL_TASK_FAILED);
  }
}

/* A kill that found nothing running took this attempt (the order says
 * it is doomed): it dies as it starts. */
static void crash_at_start(engine *e, worker *w)
{
  atomic_store(&w->cancel, true);
  w->killed = true;
  sl_core_failed(e->core, now_s(e), w->current);
}

static void *worker_main(void *arg)
{
  worker *w = arg;
  engine *e = w->e;
  pthread_mutex_lock(&e->lock);
  for (;;) {
    while (!w->has_next && !e->stop)
      pthread_cond_wait(&w->cv, &e->lock);
    if (e->stop)
      break;
    sl_decision d = w->next;
    double launched = w->next_launched_s;
    input_ref *in = w->next_inputs;
    w->next_inputs = NULL;
    w->has_next = false;
    if (!sl_core_task_live(e->core, d.task)) { /* written off before it started */
      unpin_inputs(e, in, d.ninputs);
      continue;
    }
    w->busy = true;
    w->current = d.task;
    w->current_op = d.op;
    w->resume = false;
    w->killed = false;
    atomic_store(&w->cancel, false);
    if (d.doomed)
      crash_at_start(e, w);
    pthread_mutex_unlock(&e->lock);
    run_task(w, &d, launched, in); /* returns with the lock held */
    w->busy = false;
    if (drain(e, w) && w->done_row >= 0) /* its own finish gave it its next task */
      sl_recorder_set_handoff(e->rec, w->done_row, w->next_launched_s - w->done_at);
  }
  pthread_mutex_unlock(&e->lock);
  return NULL;
}

/* ---------------------------------------------------------------- faults */

/* A timeline row marking a fault as it strikes: a kill names the operator
 * of its victim (NULL: the next attempt to start, "any"), a loss or a
 * join its node. */
static void mark_fault(engine *e, double now, const char *kind, int node, const char *op)
{
  char target[SL_NAME_MAX * 2 + 16];
  if (node >= 0)
    sl_cluster_node_name(e->cluster, node, target, sizeof target);
  else
    snprintf(target, sizeof target, "%s", op ? op : "any");
  if (sl_recorder_fault(e->rec, now, e->core, kind, target) < 0)
    fail_job(e, SL_ENOMEM, "out of memory recording the timeline");
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
  drain(e, NULL);
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
    mark_fault(e, now, "kill", -1, struck >= 0 ? e->plan->ops[struck].name : NULL);
  else
    mark_fault(e, now, f->kind == SL_FAULT_LOSE ? "lose" : "join", f->node, NULL);
  drain(e, NULL);
}

/* Acquired pool nodes whose provisioning is over join the run. */
static void join_provisioned(engine *e, double now)
{
  for (int n = 0; n < e->cluster->nnodes; n++)
    if (e->join_at[n] <= now) {
      e->join_at[n] = INFINITY;
      sl_core_node_joined(e->core, now, n);
      mark_fault(e, now, "join", n, NULL);
      drain(e, NULL);
    }
}

/* -------------------------------------------------------------- progress */

static void progress_line(engine *e, double now)
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
  fprintf(stderr, "\r\033[K%6.1fs rows %.0f/%.0f%s %.1f rows/s mem %.0f/%.0f MB running%s%s%s", now,
          st.rows_delivered, e->plan->sink_rows, left, rate, st.store_bytes / 1e6, budget / 1e6, ops,
          b ? " backpressured:" : "", bp);
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
        unpin_inputs(e, w->next_inputs, w->next.ninputs); /* launched, never run */
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
    fail_job(e, rc, "the core could not start the job: %s", sl_strerror(rc));
  drain(e, NULL);
  while (!e->done && !e->stop) {
    double wake = fmin(sl_core_wakeup(e->core), next_sample);
    if (next_fault < o->faults.n)
      wake = fmin(wake, o->faults.ev[next_fault].at_s);
    for (int n = 0; n < e->cluster->nnodes; n++)
      wake = fmin(wake, e->join_at[n]);
    wake = fmin(wake, now_s(e) + 0.05); /* notice signals promptly */
    struct timespec ts = abs_time(e, wake);
    pthread_cond_timedwait(&e->main_cv, &e->lock, &ts);
    double now = now_s(e);
    if (o->interrupted && *o->interrupted) {
      fail_job(e, SL_EINTR, "interrupted by a signal");
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
      drain(e, NULL);
    }
    if (now >= next_sample) {
      if (sl_recorder_sample(e->rec, now, e->core) < 0)
        fail_job(e, SL_ENOMEM, "out of memory recording the timeline");
      next_sample = now + o->sample_period_s;
    }
    if (o->progress && now >= next_progress) {
      progress_line(e, now);
      next_progress = now + 0.5;
    }
  }
  if (sl_recorder_sample(e->rec, now_s(e), e->core) < 0)
    fail_job(e, SL_ENOMEM, "out of memory recording the timeline");
  pthread_mutex_unlock(&e->lock);
  if (o->progress)
    fprintf(stderr, "\n");
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
  if ((rc = check_kernels(&e, err, errlen)) < 0)
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
  e.sink = sl_sink_new();
  const sl_workload *wl = plan->workload;
  bool check_sort = wl->nops > 0 && wl->ops[wl->nops - 1].kind == SL_OP_SINK &&
                    wl->ops[wl->nops - 1].check == SL_CHECK_SORTED;
  e.sort_check = check_sort ? sl_sort_check_new() : NULL;
  bool check_group = wl->nops > 1 && wl->ops[wl->nops - 1].kind == SL_OP_SINK &&
                     wl->ops[wl->nops - 1].check == SL_CHECK_GROUPED;
  e.group_check = check_group ? sl_group_check_new(grouped_key_bytes(wl)) : NULL;
  e.rec = sl_recorder_new(plan, cluster, true);
  if (opts->record_events && (e.events = sl_event_log_new()) != NULL)
    sl_core_observe(e.core, sl_event_log_observe, e.events);
  if (!e.store || !e.sink || !e.rec || (opts->record_events && !e.events) || (check_sort && !e.sort_check) ||
      (check_group && !e.group_check)) {
    snprintf(err, errlen, "out of memory");
    rc = SL_ENOMEM;
    goto out_free;
  }
  /* Only a run that starts touches the output folder: a refused one
   * changes nothing on disk. */
  fill_summary(&e, summary, 0);
  snprintf(summary->note, sizeof summary->note, "%s", SL_SUMMARY_STARTED_NOTE);
  if ((rc = sl_run_dir_begin(summary, opts->out_dir, err, errlen)) < 0) {
    memset(summary, 0, sizeof *summary); /* no run took place */
    goto out_free;
  }
  if ((rc = start_workers(&e, err, errlen)) < 0) {
    stop_workers(&e);
    goto out_free;
  }
  /* The job's clock starts with the core, as a simulation's does: the
   * engine's own start (a GPU probe takes 0.1 s on an H100) is not the
   * job's, and the core must not see it as time its policy had. */
  double startup = now_s(&e);
  clock_gettime(CLOCK_MONOTONIC, &e.t0);
  supervise(&e);
  double jct = now_s(&e);
  stop_workers(&e);
  fill_summary(&e, summary, jct);
  summary->startup_s = startup;
  summary->time_scale = opts->time_scale;
  /* a kernel that makes the rows its data has (a groupby: a row per group)
   * leaves the plan only an estimate of the rows; a check counts them */
  if (summary->complete && !rows_estimated(plan->workload) &&
      !sl_rejected_rows_add_up(&e.rejected, summary->rows, summary->expected_rows)) {
    summary->complete = false;
    snprintf(summary->note, sizeof summary->note, "the sink got %.0f rows of %.0f (%lld rejected)", summary->rows,
             summary->expected_rows, (long long)e.rejected.rows);
    e.fail_code = SL_ESTATE;
  } else if (summary->complete && e.rejected.rows > 0) {
    snprintf(summary->note, sizeof summary->note, "skipped %lld rejected rows; first: %.250s",
             (long long)e.rejected.rows, e.rejected.first);
  }
  if (e.sort_check)
    check_sorted_output(&e, summary);
  if (e.group_check)
    check_grouped_output(&e, summary);
  if (sl_recorder_write(e.rec, summary, opts->out_dir, err, errlen) < 0) {
    rc = SL_EIO;
    goto out_free;
  }
  if (e.events && (rc = sl_event_log_write(e.events, opts->record_events, sl_core_decision_hash(e.core), err,
                                           errlen)) < 0)
    goto out_free;
  rc = e.fail_code;
  if (rc) /* the whole message: the summary's note may be cut short */
    snprintf(err, errlen, "%s", e.fail_msg[0] ? e.fail_msg : summary->note);
out_free:
  sl_event_log_free(e.events);
  sl_rejected_tally_free(&e.rejected);
  sl_recorder_free(e.rec);
  sl_sink_free(e.sink);
  sl_sort_check_free(e.sort_check);
  sl_group_check_free(e.group_check);
  sl_store_free(e.store);
  sl_core_free(e.core);
out_destroy:
  sl_net_free(e.net);
  pthread_cond_destroy(&e.main_cv);
  pthread_cond_destroy(&e.spill_cv);
  pthread_mutex_destroy(&e.lock);
  return rc;
}
