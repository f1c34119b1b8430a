/*
 * The SimGrid engine. Actors (engine.h says who does what):
 *   driver  one, on the driver host: starts and ticks the core, samples the
 *           timeline, applies the failure schedule, ends the simulation;
 *   worker  one per (node, slot), on the node's CPU host: runs the attempts
 *           the core launches on its slot, one after the other.
 * Every actor that calls the core drains the decisions at once
 * (sl__sim_drain()): actors run one at a time, so the core needs no lock,
 * and decisions take effect at the simulated instant of the event that
 * caused them.
 *
 * SimGrid traps kept in mind (reference toolchain §2.4): one blocking
 * activity per actor at a time, no wait_any; sg_host_sendto and remote disk
 * reads only from the receiving worker, which dies with its host, and never
 * from a host that may be turned off mid-transfer (pullers are killed
 * before); workers are daemons and register no on_exit (the code that
 * kills an actor or turns a host off does the bookkeeping of the deaths).
 *
 * Beside it: faults.c applies the failure schedule and random losses,
 * setup.c lays the cluster out on the platform's hosts, run.c runs one
 * simulation from start to end (engine_internal.h is what they share);
 * sink.c follows rows by source split for the sink's checks, child.c runs
 * each simulation in a process of its own, platform.c and costs.c turn
 * specs into SimGrid hosts and cost models.
 */
#include "engine.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/disk.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "results/failure.h"
#include "sim/engine_internal.h"
#include "sim/platform.h"
#include "sim/sink.h"
#include "models/rng.h"

/* SimGrid's clock as the core sees it: to the nanosecond. The engine
 * advances every running activity at each event, so an extra event (the
 * timeline's sample wakeups) changes the last bits of the times that
 * follow: 0.30000000000000004 instead of 0.3. Ties between such times then
 * broke differently and fig9-small under streaming took 15.4, 15.85 or
 * 16.06 s with the sampling period alone changed. Rounded, they agree. */
/* past this, a double no longer holds every nanosecond */
#define CLOCK_ROUND_LIMIT 4e6

static double sim_clock(void)
{
  double t = simgrid_get_clock();
  return t < CLOCK_ROUND_LIMIT ? nearbyint(t * 1e9) / 1e9 : t;
}

/* ------------------------------------------------------------ recording */

void sl__sim_record(sim *s, const slot_t *w, sl_task_status status, double end)
{
  if (!s->o->keep_tasks)
    return;
  sl_task_record r = {.task = w->task, .origin = w->origin, .attempt = w->attempt, .op = w->op, .node = w->node,
                      .slot = w->slot, .start_s = w->start, .end_s = end, .rows_in = w->rows_in,
                      .rows_out = w->emitted_rows, .bytes_in = w->bytes_in, .bytes_out = w->bytes_out,
                      .parts_out = w->parts_out, .status = status, .speed = w->speed,
                      .waited_s = w->waited, .transfer_s = w->transfer,
                      .transfer_bytes = w->transfer_bytes, .spread = w->spread,
                      .fresh = w->fresh, .spill_write_s = w->spill_write_s,
                      .spill_write_bytes = w->spill_write_bytes, .spill_read_s = w->spill_read_s,
                      .spill_read_bytes = w->spill_read_bytes, .dispatch_s = w->launch_delay,
                      .handoff_s = -1};
  if (sl_recorder_task(s->rec, &r) < 0)
    s->res->code = SL_ENOMEM;
}

/* ------------------------------------------------------------- decisions */

/* Ends the job for the reason the FAIL decision @p why gives. */
static void fail_job_for(sim *s, const sl_decision *why, double now)
{
  if (s->done)
    return;
  s->done = s->failed = true;
  s->fail_code = why->code;
  s->end_time = now;
  sl_failure_text(why, s->plan, s->cluster, s->core, s->fail_note, sizeof s->fail_note);
}

/* Ends the job for a reason of the engine's own. */
static void fail_job(sim *s, int code, double now)
{
  sl_decision why = {.kind = SL_DEC_FAIL, .code = code, .op = -1, .node = -1, .task = SL_NONE, .part = SL_NONE};
  fail_job_for(s, &why, now);
}


static slot_t *slot_at(sim *s, int node, int slot)
{
  if (node < 0 || node >= s->cluster->nnodes || slot < 0 || slot >= s->nodes[node].nslots)
    return NULL;
  return &s->nodes[node].slots[slot];
}

static bool is_self(const slot_t *w)
{
  return w->actor && w->actor == sg_actor_self();
}

static void wake(slot_t *w)
{
  /* a worker handed work by its own drain needs no wake-up */
  if (w->actor && !is_self(w)) {
    w->tokens++;
    sg_sem_release(w->wake);
  }
}

/* Waits on the slot's semaphore until wake() releases it. */
static void park(slot_t *w)
{
  w->parked = true;
  sg_sem_acquire(w->wake);
  w->parked = false;
  w->tokens--;
}

/* Whether the worker of @p w sits where its host may be turned off: not in
 * the middle of decisions, started, and not about to get out of a wait
 * that a token already answered. An actor caught in such a simcall when
 * its host goes off outlives it as a zombie. */
bool sl__sim_settled(const slot_t *w)
{
  return !w->actor || (w->draining == 0 && w->settled && !(w->parked && w->tokens > 0));
}

/* Inputs by node, starting at the reader's own and going round from
 * there (qsort_r's context: the node count and the reader's node), then
 * by partition. Every reader starting at node 0 made a convoy: eighty
 * reducers on one disk at a time, 1,090 -> 1,966 s. */
static int by_node_from_reader(const void *a, const void *b, void *ctx)
{
  const int *nodes_and_reader = ctx;
  const sl_input *x = a, *y = b;
  int n = nodes_and_reader[0], me = nodes_and_reader[1];
  int dx = (x->node - me + n) % n, dy = (y->node - me + n) % n;
  if (dx != dy)
    return dx < dy ? -1 : 1;
  return (x->part > y->part) - (x->part < y->part);
}

/* A shuffle's task, whose many inputs come from every node; a map's few
 * keep the order they were queued in. */
static bool is_shuffle_task(const slot_t *w, const sl_decision *d)
{
  return w->s->plan->ops[d->op].kind == SL_OP_ALL_TO_ALL;
}

/* The order's inputs outlive the decision: the worker pulls them later,
 * grouped by the node that holds them (fetch_inputs() makes one transfer a
 * node, by_node_from_reader()): a reducer of a 2,000-map shuffle read its inputs in the order the
 * maps ended, one transfer and one disk read each, and a 1 TB sort took
 * 390 s to simulate). */
static int copy_inputs(slot_t *w, const sl_decision *d)
{
  w->ninputs = 0;
  if (d->ninputs > w->inputs_cap) {
    sl_input *n = realloc(w->inputs, sizeof *n * (size_t)d->ninputs);
    if (!n)
      return SL_ENOMEM;
    w->inputs = n;
    w->inputs_cap = d->ninputs;
  }
  if (d->ninputs > 0)
    memcpy(w->inputs, d->in, sizeof *w->inputs * (size_t)d->ninputs);
  int ctx[2] = {w->s->cluster->nnodes, d->node};
  if (d->ninputs > 1 && ctx[0] > 0 && is_shuffle_task(w, d))
    qsort_r(w->inputs, (size_t)d->ninputs, sizeof *w->inputs, by_node_from_reader, ctx);
  w->ninputs = d->ninputs;
  return 0;
}

static void on_launch(sim *s, const sl_decision *d, double now)
{
  slot_t *w = slot_at(s, d->node, d->slot);
  /* a LAUNCH drained after its node was lost: the core wrote it off already */
  if (!sl_core_task_live(s->core, d->task))
    return;
  /* a slot still marked with an attempt the core has written off is free:
   * its worker sees the new task when it looks again */
  if (!w || (w->busy && sl_core_task_live(s->core, w->task))) {
    fail_job(s, SL_ESTATE, now); /* the core promised a slot twice: a bug */
    return;
  }
  const sl_pop *op = &s->plan->ops[d->op];
  if (!s->nodes[d->node].alive) { /* lost, and the core has not heard: nothing runs it, the loss fails it */
    w->busy = true;
    w->task = d->task;
    s->res->attempts++;
    return;
  }
  w->busy = true;
  w->waiting = false;
  /* pulling_from stays: the worker may still be in the transfer of the
   * attempt this slot held, and a loss of that node must find it */
  w->doomed = d->doomed; /* a kill that found nothing running takes this attempt */
  w->task = d->task;
  w->origin = d->origin;
  w->op = d->op;
  w->attempt = d->attempt;
  w->split = d->split;
  w->rows_in = d->rows;
  w->bytes_in = d->bytes;
  w->speed = d->speed;
  w->spread = d->spread;
  w->fresh = d->fresh;
  w->launch_delay = 0; /* sl__sim_drain() spaces the burst this LAUNCH is part of */
  w->handoff_delay = 0;
  w->waited = 0;
  w->transfer = 0;
  w->transfer_bytes = 0;
  w->spill_write_s = w->spill_write_bytes = w->spill_read_s = w->spill_read_bytes = 0;
  w->start = now;
  if (copy_inputs(w, d) < 0)
    s->res->code = SL_ENOMEM;
  /* the work order's cut and time: emissions evenly over the attempt; the
   * host's speed turns work_s into the order's charge_s */
  double seconds = d->work_s;
  w->rows_out = d->out_rows;
  w->row_bytes = op->out_row_bytes;
  w->rows_per_flush = d->rows_per_part; /* the last partition takes what is left */
  w->nflush = (uint32_t)d->out_parts;
  w->next = 0;
  w->emitted_rows = 0;
  w->bytes_out = 0;
  w->parts_out = 0;
  /* the set-up first, then the rest evenly; outputs at the end: all the
   * work first, then every partition at once (sl_emit_share()) */
  w->work_flops = seconds * SL_SIM_FLOPS;
  w->setup_s = d->setup_s;
  w->work_s = d->work_s;
  w->first_chunk_only = d->outputs_at_end;
  if (sl_sim_sink_inputs(s->sink, d, &w->in) < 0)
    s->res->code = SL_ENOMEM;
  s->res->attempts++;
  wake(w);
}

static void on_resume(sim *s, const sl_decision *d)
{
  slot_t *w = slot_at(s, d->node, d->slot);
  if (w && w->busy && w->task == d->task && w->waiting) {
    w->waiting = false;
    wake(w);
  }
}

/* Stops the attempt on @p w: its worker dies and a fresh one takes the slot. */
/* Replaces the worker of slot @p w by a fresh one, unless it is the actor
 * running now or one suspended while it handles decisions: it would die
 * with them unhandled, so it drops its attempt itself. */
void sl__sim_restart_worker(sim *s, slot_t *w)
{
  if (!w->actor || is_self(w) || w->draining)
    return; /* the worker sees it is no longer busy and drops the attempt */
  w->pulling_from = -1;
  sg_actor_kill(w->actor);
  sg_actor_unref(w->actor);
  w->actor = NULL;
  sl__sim_spawn_worker(s, w);
}

void sl__sim_kill_attempt(sim *s, slot_t *w, sl_task_status status, double now)
{
  sl__sim_record(s, w, status, now);
  w->busy = w->waiting = false;
  sl__sim_restart_worker(s, w);
}

static void on_cancel(sim *s, const sl_decision *d, double now)
{
  slot_t *w = slot_at(s, d->node, d->slot);
  if (w && w->busy && w->task == d->task)
    sl__sim_kill_attempt(s, w, SL_TASK_CANCELLED, now);
  sl_core_failed(s->core, now, d->task); /* decisions join the queue being drained */
}

static void on_rollback(sim *s, const sl_decision *d, double now)
{
  sl_sim_sink_rollback(s->sink, d->keep_split);
  if (sl_recorder_rollback(s->rec, now, s->core) < 0)
    s->res->code = SL_ENOMEM;
}

static void notify_driver(sim *s);

static void handle(sim *s, const sl_decision *d, double now)
{
  switch (d->kind) {
  case SL_DEC_LAUNCH:
    on_launch(s, d, now);
    break;
  case SL_DEC_RESUME:
    on_resume(s, d);
    break;
  case SL_DEC_CANCEL:
    on_cancel(s, d, now);
    break;
  case SL_DEC_DELIVER:
    sl_sim_sink_deliver(s->sink, d);
    break;
  case SL_DEC_ROLLBACK:
    on_rollback(s, d, now);
    break;
  case SL_DEC_DONE:
    if (!s->done) {
      s->done = true;
      s->end_time = now;
    }
    break;
  case SL_DEC_FAIL:
    fail_job_for(s, d, now);
    break;
  case SL_DEC_DROP:
    sl_sim_sink_forget(s->sink, d->part); /* a re-run that makes it again says anew */
    break;
  case SL_DEC_CHECKPOINT:
    break; /* the simulated sink has nothing to snapshot */
  case SL_DEC_ACQUIRE: /* its workers wait already: it serves once provisioned */
    s->nodes[d->node].join_at = now + d->delay_s;
    sl__sim_mark_fault(s, now, "acquire", d->node, -1);
    notify_driver(s);
    break;
  case SL_DEC_RELEASE: /* the core left nothing there: its workers idle until the end */
    sl__sim_mark_fault(s, now, "release", d->node, -1);
    break;
  }
}

/* Wakes the driver when the job ended or the core wants a tick before the
 * driver planned to wake up. */
static void notify_driver(sim *s)
{
  if (s->in_driver || s->driver_signalled)
    return;
  if (s->done || fmin(sl_core_wakeup(s->core), sl__sim_next_fault_time(s)) < s->driver_wake_at - EPS) {
    s->driver_signalled = true;
    sg_sem_release(s->driver_sem);
  }
}

/* The slots one sl__sim_drain() launched. Its own: drains interleave (below). */
typedef struct {
  slot_t **slot;
  int n, cap;
} burst_t;

/* Notes a slot that @p d launched, for space_starts(); true when it is the
 * slot of the worker draining, which runs its next task at once. */
static bool note_launch(sim *s, const slot_t *me, const sl_decision *d, burst_t *b, double handoff)
{
  slot_t *w = slot_at(s, d->node, d->slot);
  if (!w || !w->busy || w->task != d->task)
    return false; /* not launched after all (written off) */
  w->handoff_delay = handoff;
  if (w == me)
    return true;
  if (!(s->o->launch_spacing_s > 0))
    return false;
  if (b->n == b->cap) {
    int ncap = b->cap ? 2 * b->cap : 16;
    slot_t **ns = realloc(b->slot, sizeof *ns * (size_t)ncap);
    if (!ns) {
      s->res->code = SL_ENOMEM;
      return false;
    }
    b->slot = ns;
    b->cap = ncap;
  }
  b->slot[b->n++] = w;
  return false;
}

/*
 * The executor starts the tasks it hands out at once one after another, as
 * their workers wake, in an order the host's scheduler picks: the slots
 * of @p burst start at ranks of a random order, each the
 * calibrated spacing after the one before, and after the draining worker's
 * own next task when there is one (rank 0).
 */
static void space_starts(sim *s, burst_t *burst, bool continued)
{
  int n = burst->n;
  slot_t **b = burst->slot;
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)(sl__draw_uniform(s->o->seed, STREAM_LAUNCH, s->launch_draws++) * (i + 1));
    if (j > i)
      j = i;
    slot_t *t = b[i];
    b[i] = b[j];
    b[j] = t;
  }
  for (int i = 0; i < n; i++)
    b[i]->launch_delay = s->o->launch_spacing_s * (i + (continued ? 1 : 0));
  free(burst->slot);
}

/* Decisions take effect through simcalls (kills, spawns, semaphores), and
 * a simcall lets other actors run, which may drain the rest of the queue:
 * several actors may be draining at one instant. The worker slots among
 * them are marked, so that none is killed with decisions in hand.
 *
 * After a finish, its worker hands it over in @p handoff seconds (the
 * executor's measured handoff of its operator): every task the decisions
 * launch starts that much later. True when one of them is the finishing
 * worker's own next task. */
static bool drain_with(sim *s, double now, double handoff)
{
  sg_actor_t self = sg_actor_self();
  slot_t *me = self == s->driver ? NULL : sg_actor_self_get_data();
  if (me && me->actor != self)
    me = NULL;
  if (me)
    me->draining++;
  /* a worker another drain woke during a simcall of this one may have
   * started before its delay is set: it starts at once, as it did */
  burst_t burst = {0};
  bool continued = false;
  sl_decision d;
  while (sl_core_next(s->core, &d)) {
    handle(s, &d, now);
    if (d.kind == SL_DEC_LAUNCH)
      continued |= note_launch(s, me, &d, &burst, handoff);
  }
  space_starts(s, &burst, continued);
  notify_driver(s);
  if (me)
    me->draining--;
  return continued;
}

/* Takes the core's decisions after an event other than a finish. */
void sl__sim_drain(sim *s, double now)
{
  drain_with(s, now, 0);
}

/* ---------------------------------------------------------------- worker */

static bool still_mine(const slot_t *w, sl_task_id task)
{
  return w->busy && w->task == task && !w->s->done;
}

/* Pulls what the attempt reads: storage bytes of a source, then its block
 * of each input partition (a reducer's share, else all of it) held by
 * other nodes, one transfer per run of inputs from the same node; a
 * spilled block comes off its node's disk first, one access each. */
static void fetch_inputs(slot_t *w)
{
  sim *s = w->s;
  const sl_pop *op = &s->plan->ops[w->op];
  if (op->kind == SL_OP_SOURCE && op->read_bytes_per_row > 0) {
    double bytes = (double)w->rows_in * op->read_bytes_per_row;
    const node_t *nd = &s->nodes[w->node];
    w->transfer_bytes += bytes;
    if (bytes > 0 && s->plan->source_from_disk && nd->disk) /* its input laid out on its node */
      sg_disk_read(nd->disk, (sg_size_t)(bytes + nd->access_read_bytes));
    else if (bytes > 0 && !s->plan->source_from_disk && s->storage)
      sg_host_sendto(s->storage, nd->cpu, bytes);
  }
  int i = 0;
  while (i < w->ninputs) {
    int from = w->inputs[i].node;
    double bytes = 0, spilled = 0;
    int accesses = 0;
    for (; i < w->ninputs && w->inputs[i].node == from; i++) {
      bytes += w->inputs[i].read_bytes;
      spilled += w->inputs[i].spilled ? w->inputs[i].read_bytes : 0;
      accesses += w->inputs[i].spilled && w->inputs[i].read_bytes > 0;
    }
    if (from >= 0 && bytes > 0 && !s->nodes[from].alive && s->nodes[from].report_at < INFINITY) {
      /* its bytes went with it, and the core does not know yet: the
       * attempt waits for them until the loss is heard of, then fails */
      w->input_lost = true;
      sl__sim_unreported(s, from, w->task);
      return;
    }
    if (from < 0 || bytes <= 0 || !s->nodes[from].alive || s->nodes[from].dying)
      continue;
    /* a remote read counts as a pull: its source must not die under it */
    w->pulling_from = from == w->node ? -1 : from;
    if (spilled > 0 && s->nodes[from].disk) {
      double t0 = sim_clock();
      sg_disk_read(s->nodes[from].disk, (sg_size_t)(spilled + accesses * s->nodes[from].access_read_bytes));
      w->spill_read_s += sim_clock() - t0;
      w->spill_read_bytes += spilled;
    }
    if (from != w->node) {
      sg_host_sendto(s->nodes[from].cpu, s->nodes[w->node].cpu, bytes);
      w->transfer_bytes += bytes;
    }
    w->pulling_from = -1;
  }
}

static void execute(slot_t *w, double flops)
{
  if (flops <= 0)
    return;
  const node_t *nd = &w->s->nodes[w->node];
  if (w->s->plan->ops[w->op].gpu > 0 && nd->gpu) {
    sg_exec_t e = sg_actor_exec_init(flops);
    sg_exec_set_host(e, nd->gpu);
    sg_exec_start(e);
    sg_exec_wait(e); /* the GPU host goes down only after this worker's host */
    return;
  }
  sg_actor_execute(flops);
}

static void note_store(sim *s, int node)
{
  double over = sl_core_node_store(s->core, node) - s->nodes[node].budget;
  if (over > s->res->max_store_over_budget)
    s->res->max_store_over_budget = over;
}

/* Emits the next partition, waiting for RESUME while the core refuses it.
 * False when the attempt is over (cancelled, killed, or the job ended). */
static bool emit_next(slot_t *w, sl_task_id task)
{
  sim *s = w->s;
  for (;;) {
    int64_t left = w->rows_out - w->emitted_rows;
    int64_t rows = left < w->rows_per_flush ? left : w->rows_per_flush;
    double bytes = (double)rows * w->row_bytes, now = sim_clock();
    sl_part_id part;
    sl_emit_fate fate;
    int rc = sl_core_emit(s->core, now, task, rows, bytes, &part, &fate);
    if (rc == SL_EAGAIN) {
      w->waiting = true;
      sl__sim_drain(s, now);
      while (w->waiting && still_mine(w, task))
        park(w);
      if (!still_mine(w, task))
        return false;
      w->waited += sim_clock() - now;
      continue;
    }
    if (rc == SL_ESTATE)
      return false; /* the core wrote this attempt off (its node, a rollback) */
    if (rc < 0) {
      sl__sim_drain(s, now); /* an OOM: the core decided FAIL */
      fail_job(s, rc, now);
      return false;
    }
    if (fate != SL_EMIT_DISCARDED && sl_sim_sink_hold(s->sink, part, &w->in, w->rows_out, w->emitted_rows, rows) < 0)
      s->res->code = SL_ENOMEM;
    w->emitted_rows += rows;
    w->bytes_out += bytes;
    w->parts_out++;
    w->next++;
    note_store(s, w->node);
    sl__sim_drain(s, now);
    if (fate == SL_EMIT_SPILLED && !s->nodes[w->node].disk && bytes > 0)
      s->spilled_without_disk = true;
    if (w->op == s->plan->nops - 1 && s->plan->sink_to_disk && s->nodes[w->node].disk && bytes > 0 &&
        still_mine(w, task)) /* the sink's output, written where it was made */
      sg_disk_write(s->nodes[w->node].disk, (sg_size_t)(bytes + s->nodes[w->node].access_write_bytes));
    else if (w->op == s->plan->nops - 1 && s->plan->sink_to_storage && s->storage && bytes > 0 &&
             still_mine(w, task)) /* or uploaded to remote storage */
      sg_host_sendto(s->nodes[w->node].cpu, s->storage, bytes);
    if (fate == SL_EMIT_SPILLED && s->nodes[w->node].disk && bytes > 0 && still_mine(w, task)) {
      double t0 = sim_clock();
      /* the task goes on once it is on disk */
      sg_disk_write(s->nodes[w->node].disk, (sg_size_t)(bytes + s->nodes[w->node].access_write_bytes));
      w->spill_write_s += sim_clock() - t0;
      w->spill_write_bytes += bytes;
    }
    return still_mine(w, task);
  }
}

/* A kill scheduled while nothing of its operator ran takes the next
 * attempt that starts. */
static void crash_at_start(slot_t *w)
{
  sim *s = w->s;
  double now = sim_clock();
  w->doomed = false;
  sl__sim_record(s, w, SL_TASK_FAILED, now);
  w->busy = false;
  s->res->tasks_killed++;
  s->res->faults_applied++;
  sl_core_failed(s->core, now, w->task);
  sl__sim_mark_fault(s, now, "kill", -1, w->op);
  sl__sim_drain(s, now);
}

/* Executes the work before the attempt's next emission: its share of the
 * charge since the last one (sl_emit_share(): the set-up, then the rest
 * evenly). Without a set-up, a plain n-th of it, as it always was. */
static void execute_to_emission(slot_t *w)
{
  int64_t k = w->next, n = w->nflush;
  if (w->first_chunk_only) {
    if (k == 0)
      execute(w, w->work_flops);
    return;
  }
  if (!(w->setup_s > 0)) {
    execute(w, w->work_flops / (double)n);
    return;
  }
  double from = k ? sl_emit_share(w->setup_s, w->work_s, false, k, n) : 0;
  double to = sl_emit_share(w->setup_s, w->work_s, false, k + 1, n);
  if (to > from)
    execute(w, w->work_flops * (to - from));
}

static void run_attempt(slot_t *w)
{
  sim *s = w->s;
  sl_task_id task = w->task;
  if (w->handoff_delay + w->launch_delay > 0) { /* the slot is taken; its worker is not up yet */
    sg_actor_sleep_for(w->handoff_delay + w->launch_delay);
    if (!still_mine(w, task))
      return;
    w->start = sim_clock();
  }
  if (w->doomed) {
    crash_at_start(w);
    return;
  }
  double fetch_start = sim_clock();
  w->input_lost = false;
  fetch_inputs(w);
  if (!still_mine(w, task))
    return;
  if (w->input_lost) { /* its slot stays taken, as the core sees it, until the loss is heard of */
    sl__sim_record(s, w, SL_TASK_FAILED, sim_clock());
    w->busy = false;
    return;
  }
  double fetched = sim_clock() - fetch_start;
  w->transfer = fmax(0, fetched - w->spill_read_s); /* the disk's part is spill time */
  if (fetched > 0)
    sl_core_note_transfer(s->core, task, fetched);
  if (w->nflush == 0)
    execute(w, w->work_flops);
  while (w->next < w->nflush) {
    execute_to_emission(w);
    if (!still_mine(w, task) || !emit_next(w, task))
      return;
  }
  if (!still_mine(w, task))
    return;
  double now = sim_clock();
  sl__sim_record(s, w, SL_TASK_DONE, now);
  int64_t row = s->o->keep_tasks ? sl_recorder_ntasks(s->rec) - 1 : -1;
  double handoff = s->o->handoff_s ? s->o->handoff_s[w->op] : 0;
  w->busy = false; /* before the core hands the slot out again */
  sl_core_finished(s->core, now, task);
  if (drain_with(s, now, handoff))
    sl_recorder_set_handoff(s->rec, row, handoff); /* as the executor records it */
}

static void worker_main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  slot_t *w = sg_actor_self_get_data();
  sg_actor_daemonize(sg_actor_self());
  w->settled = true;
  for (;;) {
    while (!w->busy || w->s->done)
      park(w);
    run_attempt(w);
  }
}

void sl__sim_spawn_worker(sim *s, slot_t *w)
{
  char name[48];
  snprintf(name, sizeof name, "w%d.%d", w->node, w->slot);
  sg_actor_t a = sg_actor_init(name, s->nodes[w->node].cpu);
  sg_actor_set_data(a, w);
  sg_actor_ref(a); /* kept valid until we let go of it */
  w->settled = w->parked = false;
  w->tokens = sg_sem_get_capacity(w->wake); /* what a killed actor left */
  w->actor = a; /* before it runs: it finds itself in its slot */
  sg_actor_start(a, worker_main, 0, NULL);
}

/* ---------------------------------------------------------------- driver */

static void sample(sim *s, double t)
{
  if (t <= s->last_sample && s->last_sample >= 0)
    return;
  if (sl_recorder_sample(s->rec, t, s->core) < 0)
    s->res->code = SL_ENOMEM;
  s->last_sample = t;
}

static double plan_wake(sim *s)
{
  /* the core's wakeup includes its stall timeout */
  double next = fmin(fmin(sl_core_wakeup(s->core), s->next_sample), sl__sim_next_fault_time(s));
  return fmin(next, s->time_limit);
}

void sl__sim_driver_main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  sim *s = sg_actor_self_get_data();
  s->in_driver = true;
  int rc = sl_core_start(s->core, 0);
  if (rc < 0)
    fail_job(s, rc, 0);
  sl__sim_drain(s, 0);
  sample(s, 0);
  s->next_sample = s->interval;
  int stuck = 0;
  while (!s->done) {
    double now = simgrid_get_clock(), next = plan_wake(s);
    if (next > now) {
      s->driver_wake_at = next;
      s->driver_signalled = false;
      s->in_driver = false;
      sg_sem_acquire_timeout(s->driver_sem, next - now);
      s->in_driver = true;
      now = simgrid_get_clock();
      stuck = 0;
    } else if (++stuck > 1000) {
      fail_job(s, SL_ESTALL, now); /* a wakeup that never moves on */
      break;
    }
    if (s->done)
      break;
    /* a timer that fired a hair early still serves its deadline */
    if (next - now < EPS && next >= now)
      now = next;
    if (now >= s->time_limit) {
      s->res->timed_out = true;
      s->end_time = now;
      break;
    }
    sl__sim_apply_faults(s, now);
    double wake = sl_core_wakeup(s->core);
    if (!s->done && wake <= now + EPS) {
      sl_core_tick(s->core, fmax(now, wake));
      sl__sim_drain(s, now);
    }
    while (s->next_sample <= now + EPS) {
      sample(s, s->next_sample);
      s->next_sample += s->interval;
    }
  }
  if (!s->done && !s->res->timed_out)
    s->end_time = simgrid_get_clock();
  sample(s, s->end_time);
}
