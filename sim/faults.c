/*
 * The simulator's faults: a node lost (its workers and hosts gone, the
 * transfers that pulled from it cut first), a node that joins or an
 * acquired pool node that comes into service, a running task killed, from
 * the failure schedule or from random losses of mean MTBF, and the
 * timeline row that marks each. The driver (engine.c) applies them when
 * they are due; the core decides what they mean for the job. Apart from
 * the engine because a fault comes from outside the job and has SimGrid
 * traps of its own: a host turned off under a transfer or a drain.
 */
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/error.h"
#include "models/rng.h"
#include "sim/engine_internal.h"

/* A timeline row marking a fault where it struck: a kill names the
 * operator of its attempt (-1: not known, "any"), a loss or a join its node. */
void sl__sim_mark_fault(sim *s, double now, const char *kind, int node, int op)
{
  char target[SL_NAME_MAX * 2 + 16];
  if (node >= 0)
    sl_cluster_node_name(s->cluster, node, target, sizeof target);
  else
    snprintf(target, sizeof target, "%s", op >= 0 ? s->plan->ops[op].name : "any");
  if (sl_recorder_fault(s->rec, now, s->core, kind, target) < 0)
    s->res->code = SL_ENOMEM;
}

void sl__sim_unreported(sim *s, int n, sl_task_id task)
{
  node_t *nd = &s->nodes[n];
  if (nd->nunreported == nd->capunreported) {
    int cap = nd->capunreported ? 2 * nd->capunreported : 8;
    sl_task_id *grown = realloc(nd->unreported, sizeof *grown * (size_t)cap);
    if (!grown) {
      s->res->code = SL_ENOMEM;
      return;
    }
    nd->unreported = grown;
    nd->capunreported = cap;
  }
  nd->unreported[nd->nunreported++] = task;
}

/* The core hears that node @p n is lost (a timeline row @p mark): its
 * partitions and attempts go, and the attempts elsewhere that were reading
 * from it fail. */
static void report_loss(sim *s, int n, double now, const char *mark)
{
  node_t *nd = &s->nodes[n];
  nd->report_at = INFINITY;
  for (int k = 0; k < nd->nslots; k++) /* orders the core gave it meanwhile: nothing ran them */
    nd->slots[k].busy = nd->slots[k].waiting = false;
  sl_core_node_lost(s->core, now, n);
  sl__sim_mark_fault(s, now, mark, n, -1); /* before the rollback it may bring */
  sl__sim_drain(s, now);
  for (int v = 0; v < nd->nunreported; v++) {
    sl_core_failed(s->core, now, nd->unreported[v]);
    sl__sim_drain(s, now);
  }
  nd->nunreported = 0;
}

/* The node goes down with its workers; tasks elsewhere that were pulling
 * its bytes die first, then are reported failed once the core knows. */
static void lose_node(sim *s, int n, double now)
{
  node_t *nd = &s->nodes[n];
  if (!nd->alive)
    return;
  /* The kills below are simcalls that let other workers run: one that
   * ended a transfer from another node could start one from this node,
   * after the scan for its pullers, and die with the whole simulation
   * when the host goes off (a NetworkFailure that C cannot catch). */
  nd->dying = true;
  /* Its workers in the middle of a drain finish it first, and every one
   * settles where the loss kills it cleanly (no simulated time passes). */
  for (int round = 0; round < 1000; round++) {
    bool waiting = false;
    for (int k = 0; k < nd->nslots; k++)
      waiting |= !sl__sim_settled(&nd->slots[k]);
    if (!waiting)
      break;
    sg_actor_yield();
  }
  sl_task_id *victims = NULL;
  int nvictims = 0;
  for (int i = 0; i < s->nslots; i++) {
    slot_t *w = &s->slots[i];
    if (w->node == n || w->pulling_from != n)
      continue;
    if (!w->busy) { /* still pulling for an attempt written off: only the transfer goes */
      sl__sim_restart_worker(s, w);
      continue;
    }
    sl_task_id *grown = realloc(victims, sizeof *victims * (nvictims + 1));
    if (!grown)
      continue;
    victims = grown;
    victims[nvictims++] = w->task;
    sl__sim_kill_attempt(s, w, SL_TASK_FAILED, now);
    s->res->transfers_cut++;
  }
  for (int k = 0; k < nd->nslots; k++) {
    slot_t *w = &nd->slots[k];
    if (w->busy)
      sl__sim_record(s, w, SL_TASK_FAILED, now);
    w->busy = w->waiting = false;
    if (w->actor)
      sg_actor_unref(w->actor);
    w->actor = NULL;
  }
  nd->alive = false;
  nd->dying = false;
  sg_host_turn_off(nd->cpu); /* first: workers die before their GPU executions */
  if (nd->gpu)
    sg_host_turn_off(nd->gpu);
  s->res->nodes_lost++;
  for (int v = 0; v < nvictims; v++)
    sl__sim_unreported(s, n, victims[v]);
  free(victims);
  if (s->o->node_timeout_s > 0) { /* the core hears of it when it has been silent that long */
    sl__sim_mark_fault(s, now, "lose", n, -1);
    nd->report_at = now + s->o->node_timeout_s;
    return;
  }
  report_loss(s, n, now, "lose");
}

static void join_node(sim *s, int n, double now)
{
  node_t *nd = &s->nodes[n];
  if (nd->alive)
    return;
  if (nd->report_at < INFINITY) /* a new process before the old one was missed: it replaces it */
    report_loss(s, n, now, "lost");
  sg_host_turn_on(nd->cpu);
  if (nd->gpu)
    sg_host_turn_on(nd->gpu);
  nd->alive = true;
  for (int k = 0; k < nd->nslots; k++)
    sl__sim_spawn_worker(s, &nd->slots[k]);
  s->res->nodes_joined++;
  sl_core_node_joined(s->core, now, n);
  sl__sim_mark_fault(s, now, "join", n, -1);
  sl__sim_drain(s, now);
}

/* Kills the running attempt of @p op (-1: any) that the core picks. */
static bool kill_task(sim *s, int op, double now)
{
  sl_task_id task;
  if (sl_core_kill(s->core, now, op, &task) < 0 || task == SL_NONE)
    return false; /* the next attempt to start is doomed; counted when it strikes */
  int struck = op;
  for (int i = 0; i < s->nslots; i++) {
    slot_t *w = &s->slots[i];
    if (w->busy && w->task == task) {
      struck = w->op;
      sl__sim_kill_attempt(s, w, SL_TASK_FAILED, now);
      break;
    }
  }
  /* a LAUNCH not yet carried out is written off: its slot skips it */
  s->res->tasks_killed++;
  sl_core_failed(s->core, now, task);
  sl__sim_mark_fault(s, now, "kill", -1, struck);
  sl__sim_drain(s, now);
  return true;
}

double sl__sim_next_fault_time(const sim *s)
{
  double t = INFINITY;
  for (int n = 0; n < s->cluster->nnodes; n++)
    t = fmin(t, fmin(s->nodes[n].join_at, s->nodes[n].report_at));
  if (s->o->faults && s->next_fault < s->o->faults->n)
    t = fmin(t, s->o->faults->ev[s->next_fault].at_s); /* an acquired node may join sooner */
  if (s->o->mtbf_s > 0)
    for (int n = 0; n < s->cluster->nnodes; n++)
      t = fmin(t, s->nodes[n].mtbf_next);
  return t;
}

static void apply_scheduled(sim *s, int i, double now)
{
  const sl_fault *f = &s->o->faults->ev[i];
  bool applied = false;
  sl_fault_log_check(&s->fault_log, s->o->faults, i, s->core);
  switch (f->kind) {
  case SL_FAULT_KILL:
    applied = kill_task(s, f->op, now);
    if (!applied)
      sl_fault_log_defer(&s->fault_log, i);
    break;
  case SL_FAULT_LOSE:
    applied = s->nodes[f->node].alive;
    lose_node(s, f->node, now);
    break;
  case SL_FAULT_JOIN:
    applied = !s->nodes[f->node].alive;
    join_node(s, f->node, now);
    break;
  }
  s->res->faults_applied += applied;
}

/* Random losses: each node fails after an exponential time of mean MTBF
 * and comes back after the repair time. */
static void apply_random(sim *s, int n, double now)
{
  node_t *nd = &s->nodes[n];
  if (nd->alive) {
    lose_node(s, n, now);
    nd->mtbf_next = s->o->repair_s > 0 ? now + s->o->repair_s : INFINITY;
  } else {
    join_node(s, n, now);
    nd->mtbf_next = now + sl__draw_exponential(s->o->mtbf_s, s->o->seed, STREAM_MTBF + (uint64_t)n, nd->mtbf_draws++);
  }
  s->res->faults_applied++;
}

void sl__sim_apply_faults(sim *s, double now)
{
  for (int n = 0; n < s->cluster->nnodes && !s->done; n++)
    if (s->nodes[n].report_at <= now + EPS)
      report_loss(s, n, now, "lost");
  for (int n = 0; n < s->cluster->nnodes && !s->done; n++)
    if (s->nodes[n].join_at <= now + EPS) { /* an acquired pool node, provisioned */
      s->nodes[n].join_at = INFINITY;
      if (!s->nodes[n].alive) { /* a random loss took its host while it was out of service */
        join_node(s, n, now);
        continue;
      }
      sl_core_node_joined(s->core, now, n);
      sl__sim_mark_fault(s, now, "join", n, -1);
      sl__sim_drain(s, now);
    }
  while (!s->done) {
    if (s->o->faults && s->next_fault < s->o->faults->n && s->o->faults->ev[s->next_fault].at_s <= now + EPS) {
      apply_scheduled(s, s->next_fault++, now);
      continue;
    }
    int due = -1;
    if (s->o->mtbf_s > 0)
      for (int n = 0; n < s->cluster->nnodes && due < 0; n++)
        if (s->nodes[n].mtbf_next <= now + EPS)
          due = n;
    if (due < 0)
      return;
    apply_random(s, due, now);
  }
}
