/*
 * The executor's task execution: what a slot does with a LAUNCH. It builds
 * the operator's kernels, receives the inputs the order names (storage
 * reads, partitions from other nodes, spilled files), runs the rows through
 * the fused members, paces a modelled charge, emits partitions as the core
 * cuts them, spills what the core spilled and records the attempt. The
 * driver (engine.c) hands it orders and asks the core; nothing here
 * decides anything the core decides.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/engine_internal.h"
#include "models/error.h"
#include "transport/msg.h"
#include "workloads/kernel_registry.h"

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
int sl__exec_check_kernels(const engine *e, char *err, size_t errlen)
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
  double transfer_bytes;
  double spread;   /* the order's spread factor when its charge is held, else 1 */
  /* the spill disk: outputs written, spilled inputs read back (seconds, bytes) */
  double spill_write_s, spill_write_bytes, spill_read_s, spill_read_bytes;
  double dispatch; /* from the core's LAUNCH to the worker starting it */
  int64_t out_blocks; /* the order's: blocks a spilled output is written in */
  const sl_decision *d; /* the order */
  double start;         /* when the attempt started, on the run's clock */
  bool end_told;        /* a worker process: its last output told the head the attempt ended */
} task_run;

static sl_task_record attempt_record(const sl_decision *d, const task_run *tr, double start, double end,
                                     sl_task_status st);
static double emit_point(const sl_decision *d, const task_run *tr);

/* The core's books and the real buffers must agree byte for byte: the
 * budget the core enforces is only true if they do. */
static void check_accounting(engine *e, int node)
{
  if (!e->core) /* a worker process: the head's core keeps the books */
    return;
  double real = sl_store_node_bytes(e->store, node), booked = sl_core_node_store(e->core, node);
  if (fabs(real - booked) > 0.5)
    sl__exec_fail(e, SL_ESTATE, "node %d holds %.0f bytes but the core counts %.0f", node, real, booked);
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
  double t0 = sl__exec_now(e);
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
    sl__exec_fail(e, rc == SL_ENOMEM ? SL_ENOMEM : SL_EIO, "operator '%s' on node %d: %s", e->plan->ops[tr->op].name,
             w->node, err);
  double took = sl__exec_now(e) - t0;
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

/* Whether a worker process's output, the attempt's last (@p last), may
 * tell the head that the attempt ends with it: it goes out at the end of
 * the charge, and no disk or upload of the sink's comes after it. */
static bool ends_with(const engine *e, const task_run *tr, bool last)
{
  bool sink_io = tr->op == e->plan->nops - 1 && (e->plan->sink_to_disk || e->plan->sink_to_storage);
  return last && e->remote && !sink_io && emit_point(tr->d, tr) >= 1;
}

/* Hands a full output buffer to the core; waits while it says wait. With
 * @p last, it is the attempt's last output. */
static int flush(worker *w, task_run *tr, sl_rows *out, bool last)
{
  engine *e = w->e;
  int rc = 0;
  int64_t rows = (int64_t)sl_rows_count(out);
  double bytes = (double)sl_rows_bytes(out);
  bool ends = ends_with(e, tr, last);
  pthread_mutex_lock(&e->lock);
  for (;;) {
    if (atomic_load(&w->cancel) || e->stop) {
      rc = SL_EINTR;
      break;
    }
    sl_part_id pid;
    sl_emit_fate fate;
    sl_task_record end;
    if (ends) { /* the attempt as it ends with this output (told again after a wait) */
      end = attempt_record(tr->d, tr, tr->start, sl__exec_now(e), SL_TASK_DONE);
      end.rows_out += rows;
      end.bytes_out += bytes;
      end.parts_out++;
    }
    rc = e->remote ? e->remote->emit(w, tr->id, out, ends ? &end : NULL, &pid, &fate)
                   : sl_core_emit(e->core, sl__exec_now(e), tr->id, rows, bytes, &pid, &fate);
    if (rc == SL_EAGAIN) {
      /* Parking this task may have been the core's cue to let another
       * waiter (or this one) through: act on that before sleeping. */
      double parked = sl__exec_now(e);
      sl__exec_drain(e, w);
      while (!w->resume && !atomic_load(&w->cancel) && !e->stop)
        pthread_cond_wait(&w->cv, &e->lock);
      w->resume = false;
      tr->waited += sl__exec_now(e) - parked;
      /* the pace moves with the wait: the charge is work, not wall time */
      tr->start_abs += sl__exec_now(e) - parked;
      continue;
    }
    if (rc == SL_ESTATE) {
      tr->gone = true;
      rc = SL_EINTR;
      break;
    }
    if (rc == SL_EOOM)
      sl__exec_drain(e, w); /* the core's FAIL names the operator and the node */
    if (rc < 0)
      break;
    if (fate == SL_EMIT_STORED)
      rc = sl_store_put(e->store, pid, w->node, out);
    else if (fate == SL_EMIT_SPILLED)
      rc = spill(w, tr, pid, out, bytes);
    if (e->remote && (fate == SL_EMIT_STORED || fate == SL_EMIT_SPILLED)) {
      /* a worker process: a slot here, or a peer's fetch, may wait for it
       * (the head knew of it first) */
      pthread_cond_broadcast(&e->spill_cv);
      e->remote->stored(w);
    }
    tr->end_told = ends && sl_msg_emit_ended(fate); /* a spill is written first, and its FINISHED follows */
    sl_rows_reset(out);
    tr->rows_out += rows;
    tr->bytes_out += bytes;
    tr->parts_out++;
    break;
  }
  sl__exec_drain(e, w); /* a LAUNCH for us waits in w->next until this task ends */
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

/* How far into its charge a task is held before its next partition goes
 * out: the set-up, then evenly over the rest, or all of it first
 * (outputs_at_end): sl_emit_share(), as the simulator paces. */
static double emit_point(const sl_decision *d, const task_run *tr)
{
  return sl_emit_share(d->setup_s, d->work_s, d->outputs_at_end, tr->parts_out + 1, tr->nparts);
}

/* Emits the rows of @p out as the work order cuts them: whole partitions
 * of rows_per_part rows, each at its time; with @p last (no more rows
 * will come), the rest too. Rows of a partition not yet whole stay in
 * @p out. */
static int emit_parts(worker *w, const sl_decision *d, task_run *tr, sl_rows *out, bool last)
{
  size_t n = sl_rows_count(out), at = 0;
  size_t per = d->rows_per_part == INT64_MAX ? SIZE_MAX : (size_t)d->rows_per_part;
  int rc = 0;
  if (n == per || (last && n > 0 && n <= per)) { /* the common case: all of it, no copy */
    if ((rc = pace_to(tr, emit_point(d, tr))) == 0)
      rc = flush(w, tr, out, last);
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
      rc = flush(w, tr, &part, last && at == n);
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
    sl__exec_fail(e, SL_ENOMEM, "out of memory counting rejected rows");
  bool over = e->rejected.rows > limit;
  if (over && limit == 0)
    sl__exec_fail(e, SL_EKERNEL, "%s (--max-errored-rows N skips up to N such rows)", o->rejected.first);
  else if (over)
    sl__exec_fail(e, SL_EKERNEL, "%lld rows rejected, more than --max-errored-rows %lld; %s",
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
      sl__exec_fail(e, SL_EKERNEL, "operator '%s' task %u (partition %u): %s", e->plan->workload->ops[0].name,
               d->task, (unsigned)d->split, sl_kernel_last_error(gen));
      pthread_mutex_unlock(&e->lock);
    }
    if (rc == 0)
      rc = through_members(w, d->op, 1, &chunk, out, &origin);
    if (rc == 0)
      rc = note_errors(w, &origin);
    done += n;
    if (rc == 0)
      rc = emit_parts(w, d, tr, out, done >= d->rows);
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
      double t0 = sl__exec_now(e);
      wait_spill_written(e, in[i].blob);
      rc = sl_store_read_spill_blocks(in[i].path, share, share_end, reducers, &loaded, NULL, err, sizeof err);
      if (rc == 0)
        sl_net_disk(e->net, d->node, (double)sl_rows_bytes(&loaded), false);
      double took = sl__exec_now(e) - t0;
      tr->spill_read_s += took;
      tr->start_abs += took; /* read before the work starts: not part of the charge */
      tr->spill_read_bytes += (double)sl_rows_bytes(&loaded);
      if (rc < 0) {
        pthread_mutex_lock(&e->lock);
        sl__exec_fail(e, SL_EIO, "%s", err);
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
        rc = emit_parts(w, d, tr, out, i == d->ninputs - 1 && at >= rows);
    }
  }
  if (whole && rc == 0) {
    rc = through_members(w, d->op, 0, &chunk, out, &origin);
    if (rc == 0)
      rc = note_errors(w, &origin);
    if (rc == 0)
      rc = emit_parts(w, d, tr, out, true);
  }
  sl_rows_free(&chunk);
  sl_rows_free(&loaded);
  sl_rejected_batch_free(&origin.rejected);
  return rc;
}

/* The attempt's row of tasks.csv. */
static sl_task_record attempt_record(const sl_decision *d, const task_run *tr, double start, double end,
                                     sl_task_status st)
{
  sl_task_record r = {.task = d->task, .origin = d->origin, .attempt = d->attempt, .op = d->op,
                      .node = d->node, .slot = d->slot, .start_s = start, .end_s = end,
                      .rows_in = d->rows, .bytes_in = d->bytes, .rows_out = tr->rows_out,
                      .bytes_out = tr->bytes_out, .parts_out = (int)tr->parts_out, .status = st,
                      .speed = d->speed, .waited_s = tr->waited, .transfer_s = tr->transfer,
                      .transfer_bytes = tr->transfer_bytes, .spread = tr->spread, .fresh = d->fresh, .spill_write_s = tr->spill_write_s,
                      .spill_write_bytes = tr->spill_write_bytes, .spill_read_s = tr->spill_read_s,
                      .spill_read_bytes = tr->spill_read_bytes, .dispatch_s = tr->dispatch,
                      .handoff_s = -1};
  return r;
}

/* Records the attempt; its row in tasks.csv (-1: rows are not kept). */
static int64_t record(worker *w, const sl_decision *d, const task_run *tr, double start, double end,
                      sl_task_status st)
{
  sl_task_record r = attempt_record(d, tr, start, end, st);
  if (sl_recorder_task(w->e->rec, &r) < 0) {
    sl__exec_fail(w->e, SL_ENOMEM, "out of memory recording task %u", d->task);
    return -1;
  }
  return sl_recorder_ntasks(w->e->rec) - 1;
}

/* What the attempt receives before it works, over the emulated links as
 * the simulator's attempt does: a source its rows from storage; any other
 * task the inputs another node holds, one transfer per run of inputs from
 * the same node. The wall seconds it took. */
static double receive_inputs(worker *w, const sl_decision *d, input_ref *in, double *received, int *rc)
{
  engine *e = w->e;
  const sl_pop *pop = &e->plan->ops[d->op];
  *received = 0;
  if (pop->kind == SL_OP_SOURCE) {
    *received = (double)d->rows * pop->read_bytes_per_row;
    if (e->plan->source_from_disk) /* off the spec's disk, as the simulator */
      return sl_net_disk(e->net, d->node, *received, false);
    return sl_net_transfer(e->net, SL_NET_STORAGE, d->node, *received);
  }
  double took = 0;
  for (int i = 0; i < d->ninputs; i++)
    *received += in[i].node != d->node ? in[i].bytes : 0;
  if (e->remote) { /* a worker process: over the real links */
    *rc = e->remote->fetch(w, d, in, &took);
    return took;
  }
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
void sl__exec_run_task(worker *w, const sl_decision *d, double launched, input_ref *in)
{
  engine *e = w->e;
  task_run tr = {.id = d->task, .op = d->op, .out_blocks = d->out_blocks, .d = d};
  double start = sl__exec_now(e);
  tr.start = start;
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
    tr.transfer = receive_inputs(w, d, in, &tr.transfer_bytes, &rc);
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
  sl__exec_unpin_inputs(e, in, d->ninputs);
  double end = sl__exec_now(e);
  if (rc == 0 && w->killed)
    rc = SL_EINTR; /* written off while it ran, even if it emitted nothing */
  if (e->remote) { /* a worker process: the head tells its core and records it */
    if (rc == 0 && tr.end_told)
      return; /* told with its last output */
    sl_task_status st = rc == 0 ? SL_TASK_DONE : w->killed || tr.gone ? SL_TASK_CANCELLED : SL_TASK_FAILED;
    sl_task_record r = attempt_record(d, &tr, start, end, st);
    e->remote->ended(w, d, &r, rc == SL_EKERNEL && !e->stop ? SL_EKERNEL : rc);
    return;
  }
  if (tr.transfer > 0 && sl_core_task_live(e->core, d->task))
    sl_core_note_transfer(e->core, d->task, tr.transfer);
  w->done_row = -1;
  if (rc == 0) {
    sl_core_finished(e->core, end, d->task);
    w->done_row = record(w, d, &tr, start, end, SL_TASK_DONE);
    w->done_at = end;
  } else {
    if (rc == SL_EKERNEL && !e->stop)
      sl__exec_fail(e, SL_EKERNEL, "operator '%s' task %u: cannot build its kernel", pop->name, d->task);
    if (!w->killed && !tr.gone)
      sl_core_failed(e->core, end, d->task);
    record(w, d, &tr, start, end, w->killed || tr.gone ? SL_TASK_CANCELLED : SL_TASK_FAILED);
  }
}

