/* Where the capacity went: the core's account of every CPU- and
 * GPU-second of a run, busy or idle, and if idle, why.
 *
 * The core's state changes only at events, so between two events every
 * node's capacity is in one condition; sl__idle_advance() charges the
 * interval just ended to that condition before the next event changes it.
 * The reasons are the core's own facts (what runs, what waits for memory,
 * what input is queued), never an engine's guess; the one engine fact,
 * how long an attempt spent receiving its inputs, arrives through
 * sl_core_note_transfer(). */
#include <math.h>
#include <string.h>

#include "core_internal.h"

#define EPS 1e-9

/* Whether @p op has work it could start now: queued input, a retry, or
 * (the source) a split not yet launched; and room under the concurrency
 * cap its spec sets (a cap the user set is the pipeline's shape, not the
 * model holding work back). */
static bool has_ready_work(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  int cap = c->plan->ops[op].concurrency;
  if (cap > 0 && s->running >= cap)
    return false;
  if (!sl__idq_empty(&s->retryq) || !sl__idq_empty(&s->inq))
    return true;
  return op == 0 && s->next_split < c->plan->ops[0].tasks;
}

/* Whether the store of node @p n could not take one more partition. */
static bool store_full(const sl_core *c, int n)
{
  const sl__node *nd = &c->nodes[n];
  double target = sl__target_bytes(c);
  double need = isfinite(target) ? target : 0;
  return nd->store_used + need > nd->store_budget + EPS;
}

/* Charges @p free capacity of class @p k on node @p n to a reason. */
static void charge_free(sl_core *c, int n, int k, double free_dt, uint32_t ready)
{
  sl__idle *a = &c->idle;
  if (free_dt <= 0)
    return;
  bool wanted = false, fits = false;
  for (int op = 0; op < c->nops; op++) {
    if (!((ready >> op) & 1u) || !sl__op_allowed(c, n, op))
      continue;
    const sl_pop *o = &c->plan->ops[op];
    if (k == SL__IDLE_GPU ? !(o->gpu > 0) : !(o->cpu > 0))
      continue;
    wanted = true;
    if (sl__fits(c, n, op))
      fits = true;
  }
  if (!wanted)
    a->s[k][SL_IDLE_INPUT] += free_dt;
  else if (!fits)
    a->s[k][SL_IDLE_PACKING] += free_dt;
  else if (store_full(c, n))
    a->s[k][SL_IDLE_BACKPRESSURE] += free_dt;
  else
    a->s[k][SL_IDLE_ADMISSION] += free_dt;
}

void sl__idle_advance(sl_core *c, double now)
{
  sl__idle *a = &c->idle;
  double dt = now - a->last;
  if (!c->started || c->done || !(dt > 0))
    return;
  a->last = now;
  uint32_t ready = 0;
  for (int op = 0; op < c->nops; op++)
    if (has_ready_work(c, op))
      ready |= 1u << op;
  for (int n = 0; n < c->nnodes; n++) {
    sl__node *nd = &c->nodes[n];
    const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
    if (nd->elastic && !nd->alive)
      continue; /* a pool node counts while it serves */
    a->capacity[SL__IDLE_CPU] += g->cpu * dt;
    a->capacity[SL__IDLE_GPU] += g->gpu * dt;
    if (!nd->alive) {
      a->s[SL__IDLE_CPU][SL_IDLE_FAILURE] += g->cpu * dt;
      a->s[SL__IDLE_GPU][SL_IDLE_FAILURE] += g->gpu * dt;
      continue;
    }
    /* paused attempts hold their slot and do nothing: backpressure */
    for (uint32_t i = 0; i < sl__idq_len(&nd->waiting); i++) {
      sl__task *t = &c->tasks[sl__idq_at(&nd->waiting, i)];
      t->paused_s += dt;
      a->paused[SL__IDLE_CPU] += t->cpu * dt;
      a->paused[SL__IDLE_GPU] += t->gpu * dt;
    }
    a->held[SL__IDLE_CPU] += (nd->cpu_total - nd->cpu_free) * dt;
    a->held[SL__IDLE_GPU] += (nd->gpu_total - nd->gpu_free) * dt;
    charge_free(c, n, SL__IDLE_CPU, nd->cpu_free * dt, ready);
    charge_free(c, n, SL__IDLE_GPU, nd->gpu_free * dt, ready);
  }
}

void sl__idle_attempt_end(sl_core *c, const sl__task *t, double now, bool wasted)
{
  if (!wasted)
    return;
  double worked = fmax(0, now - t->start - t->paused_s);
  c->idle.wasted[SL__IDLE_CPU] += worked * t->cpu;
  c->idle.wasted[SL__IDLE_GPU] += worked * t->gpu;
}

int sl_core_note_transfer(sl_core *c, sl_task_id task, double seconds)
{
  if (task >= c->ntasks || !(seconds >= 0))
    return SL_EINVAL;
  const sl__task *t = &c->tasks[task];
  c->idle.transfer[SL__IDLE_CPU] += seconds * t->cpu;
  c->idle.transfer[SL__IDLE_GPU] += seconds * t->gpu;
  return 0;
}

void sl_core_idle(const sl_core *c, bool gpu, sl_idle_breakdown *out)
{
  const sl__idle *a = &c->idle;
  int k = gpu ? SL__IDLE_GPU : SL__IDLE_CPU;
  memset(out, 0, sizeof *out);
  out->capacity_s = a->capacity[k];
  for (int r = 0; r < SL_IDLE_NREASONS; r++)
    out->idle_s[r] = a->s[k][r];
  /* held capacity is work, less what paused, what was thrown away and
   * what waited for its inputs to arrive */
  double held = fmax(0, a->held[k] - a->paused[k]);
  double wasted = fmin(a->wasted[k], held);
  double transfer = fmin(a->transfer[k], held - wasted);
  out->idle_s[SL_IDLE_BACKPRESSURE] += a->paused[k];
  out->idle_s[SL_IDLE_FAILURE] += wasted;
  out->idle_s[SL_IDLE_TRANSFER] = transfer;
  out->busy_s = held - wasted - transfer;
}

const char *sl_idle_reason_name(sl_idle_reason r)
{
  static const char *const names[SL_IDLE_NREASONS] = {"admission", "backpressure", "input", "transfer",
                                                      "failure",   "packing"};
  return (unsigned)r < SL_IDLE_NREASONS ? names[r] : NULL;
}
