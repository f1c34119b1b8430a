/*
 * The scheduling core's mechanics: tasks and their attempts, partitions and
 * their lineage, the events engines feed, and the decision queue. What to
 * run, when and where is left to the policy (policy_*.c); this file keeps
 * the books straight and recovers lost partitions through lineage. Node
 * fitting is in placement.c, memory accounting in memory.c, the capacity
 * account in idle.c, the all-to-all's reducers and merge tasks in
 * shuffle.c.
 */
#include "core_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "rng.h"

#define EPS 1e-9

/* ---------------------------------------------------------------- options */

void sl_core_opts_default(sl_core_opts *o)
{
  memset(o, 0, sizeof *o);
  o->model = SL_MODEL_STREAMING;
  o->on_full = SL_FULL_SPILL;
  o->reservation_ratio = 0; /* Algorithms 1 and 2 in charge, as in the paper's runs */
  o->replenish_period_s = 1.0;
  o->checkpoint_interval_s = 360.0;
  o->checkpoint_cost_s = 0.0;
  o->restart_cost_s = 0.0;
  o->channel_capacity = 2;
  o->max_retries = 0;
  o->seed = 0;
  o->autoplace = SL_AUTOPLACE_BOUND;
  o->autoplace_interval_s = 10.0;
}

static const struct {
  const char *name;
  sl_model model;
  sl_streaming_opts streaming;
} model_names[] = {
  {"streaming", SL_MODEL_STREAMING, {false, false, false, false}},
  {"streaming-noadapt", SL_MODEL_STREAMING, {true, false, false, false}},
  {"streaming-nopart", SL_MODEL_STREAMING, {false, true, false, false}},
  {"static", SL_MODEL_STREAMING, {false, false, true, false}},
  {"streaming-plus", SL_MODEL_STREAMING, {false, false, false, true}},
  {"batch", SL_MODEL_BATCH, {false, false, false, false}},
  {"stream", SL_MODEL_STREAM, {false, false, false, false}},
};

int sl_core_opts_set_model(sl_core_opts *o, const char *name)
{
  for (unsigned i = 0; i < sizeof model_names / sizeof model_names[0]; i++)
    if (strcmp(model_names[i].name, name) == 0) {
      o->model = model_names[i].model;
      o->streaming = model_names[i].streaming;
      return 0;
    }
  return SL_EINVAL;
}

const char *sl_core_opts_model_name(const sl_core_opts *o)
{
  for (unsigned i = 0; i < sizeof model_names / sizeof model_names[0]; i++)
    if (model_names[i].model == o->model &&
        model_names[i].streaming.no_adaptive == o->streaming.no_adaptive &&
        model_names[i].streaming.no_dynamic_part == o->streaming.no_dynamic_part &&
        model_names[i].streaming.static_alloc == o->streaming.static_alloc &&
        model_names[i].streaming.bound_shares == o->streaming.bound_shares)
      return model_names[i].name;
  return "custom";
}

void sl_core_opts_sizing(const sl_core_opts *o, double target_partition_bytes, sl_sizing_rule *out)
{
  bool dynamic = !o->streaming.no_dynamic_part;
  switch (o->model) {
  case SL_MODEL_STREAMING:
    *out = (sl_sizing_rule){dynamic ? target_partition_bytes : INFINITY, dynamic, dynamic};
    return;
  case SL_MODEL_BATCH: /* one partition per task; map_batches still groups rows into its batch */
    *out = (sl_sizing_rule){INFINITY, false, true};
    return;
  case SL_MODEL_STREAM: /* channels keep the upstream partitioning, batches excepted */
    *out = (sl_sizing_rule){target_partition_bytes, false, true};
    return;
  }
  *out = (sl_sizing_rule){target_partition_bytes, false, false};
}

bool sl__gathers(const sl_core *c, int op)
{
  sl_sizing_rule r;
  const sl_pop *o = &c->plan->ops[op];
  sl_core_opts_sizing(&c->opts, c->plan->target_partition_bytes, &r);
  return o->kind == SL_OP_MAP_BATCHES && o->batch_size > 0 ? r.gather_batches : r.gather_maps;
}

double sl__target_bytes(const sl_core *c)
{
  sl_sizing_rule r;
  sl_core_opts_sizing(&c->opts, c->plan->target_partition_bytes, &r);
  return r.target_bytes;
}

/* -------------------------------------------------------------- decisions */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

/* Every field of @p d that an engine acts on, and what its pointers point
 * to: two cores that push equal hashes decided the same. */
static uint64_t hash_decision(const sl_core *c, uint64_t h, const sl_decision *d)
{
  int64_t ints[] = {d->kind, d->task, d->origin, d->op, d->node, d->slot, d->attempt, d->ninputs, d->split,
                    d->rows, d->rows_per_part, d->out_rows, d->out_parts, d->share, d->share_end, d->shares, d->out_blocks, d->part, d->code, d->doomed, d->fresh,
                    d->outputs_at_end};
  double reals[] = {d->bytes, d->target_bytes, d->work_s, d->charge_s, d->speed, d->stalled_s, d->setup_s,
                    d->delay_s};
  h = fnv(h, ints, sizeof ints);
  h = fnv(h, reals, sizeof reals);
  if (d->inputs && d->ninputs > 0)
    h = fnv(h, d->inputs, sizeof *d->inputs * (size_t)d->ninputs);
  if (d->keep_split && c->plan->ops[0].tasks > 0)
    h = fnv(h, d->keep_split, sizeof *d->keep_split * (size_t)c->plan->ops[0].tasks);
  return h;
}

void sl__push(sl_core *c, const sl_decision *d)
{
  /* byte by byte, each step waiting for the last: a third of the
   * executor's cost per task, paid only when someone will read it */
  if (!c->opts.no_decision_hash)
    c->dec_hash = hash_decision(c, c->dec_hash, d);
  if (c->dec_len == c->dec_cap) {
    uint32_t ncap = c->dec_cap ? c->dec_cap * 2 : 64;
    sl_decision *n = malloc(sizeof *n * ncap);
    if (!n) {
      c->failed = true; /* reported through the FAIL the engine sees next */
      return;
    }
    for (uint32_t i = 0; i < c->dec_len; i++)
      n[i] = c->decs[(c->dec_head + i) % c->dec_cap];
    free(c->decs);
    c->decs = n;
    c->dec_head = 0;
    c->dec_cap = ncap;
  }
  c->decs[(c->dec_head + c->dec_len) % c->dec_cap] = *d;
  c->dec_len++;
}

/* A LAUNCH's inputs as the core books them, for the engine to read them
 * from where they are: sl__launch() made room for them. */
static void describe_inputs(sl_core *c, sl_decision *d)
{
  d->in = NULL;
  if (d->kind != SL_DEC_LAUNCH || d->ninputs <= 0)
    return;
  /* an all-to-all task reads the blocks of its shares of each input */
  for (int i = 0; i < d->ninputs; i++) {
    const sl__part *p = &c->parts[d->inputs[i]];
    c->launch_in[i] = (sl_input){.part = d->inputs[i], .node = p->node, .bytes = p->bytes,
                                 .read_bytes = p->bytes * sl__share_fraction(p, d->share, d->share_end, d->shares),
                                 .spilled = p->spilled != 0};
  }
  d->in = c->launch_in;
}

bool sl_core_next(sl_core *c, sl_decision *out)
{
  if (c->dec_len == 0)
    return false;
  *out = c->decs[c->dec_head];
  c->dec_head = (c->dec_head + 1) % c->dec_cap;
  c->dec_len--;
  describe_inputs(c, out);
  return true;
}

/* The job cannot complete: a FAIL with the code, and the operator and node
 * it happened on when there is one (-1 otherwise). */
static void push_fail_at(sl_core *c, int code, int op, int node)
{
  if (c->failed && c->done)
    return;
  c->failed = true;
  c->done = true;
  sl_decision d = {.kind = SL_DEC_FAIL, .task = SL_NONE, .part = SL_NONE, .code = code, .op = op, .node = node};
  sl__push(c, &d);
}

void sl__push_fail(sl_core *c, int code)
{
  push_fail_at(c, code, -1, -1);
}

void sl__enqueue_id(sl_core *c, sl__idq *q, uint32_t id)
{
  if (sl__idq_push(q, id) < 0)
    sl__push_fail(c, SL_ENOMEM);
}

/* ------------------------------------------------------------ allocation */

sl_task_id sl__task_alloc(sl_core *c)
{
  if (c->ntasks == c->tasks_cap) {
    uint32_t ncap = c->tasks_cap ? c->tasks_cap * 2 : 256;
    sl__task *n = realloc(c->tasks, sizeof *n * ncap);
    if (!n)
      return SL_NONE;
    c->tasks = n;
    c->tasks_cap = ncap;
  }
  sl__task *t = &c->tasks[c->ntasks];
  memset(t, 0, sizeof *t);
  t->origin = c->ntasks;
  t->current = SL_NONE;
  t->instance = -1;
  t->share = -1;
  t->share_end = -1;
  t->home = -1;
  t->node = t->slot = -1;
  return c->ntasks++;
}

static sl_part_id part_alloc(sl_core *c)
{
  if (c->nparts == c->parts_cap) {
    uint32_t ncap = c->parts_cap ? c->parts_cap * 2 : 256;
    sl__part *n = realloc(c->parts, sizeof *n * ncap);
    if (!n)
      return SL_NONE;
    c->parts = n;
    c->parts_cap = ncap;
  }
  sl__part *p = &c->parts[c->nparts];
  memset(p, 0, sizeof *p);
  p->consumer = SL_NONE;
  return c->nparts++;
}

/* ------------------------------------------------------------ estimates */

double sl__typical_rows(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  if (o->kind == SL_OP_SOURCE)
    return (double)o->rows_per_task;
  if (o->batch_size > 0)
    return o->batch_size;
  double reaching = (double)c->plan->source_rows * (op > 0 ? c->plan->ops[op - 1].alpha_rows : 1);
  double per_part = o->in_row_bytes > 0 ? floor(c->plan->target_partition_bytes / o->in_row_bytes) : reaching;
  double upstream = sl__typical_rows(c, op - 1) * c->plan->ops[op - 1].rows_out_per_row;
  double rows = fmin(per_part, reaching);
  if (!c->opts.streaming.no_dynamic_part && c->opts.model == SL_MODEL_STREAMING)
    return fmax(1, rows);
  return fmax(1, fmin(upstream, reaching)); /* one partition per upstream task */
}

static void init_estimates(sl_core *c)
{
  for (int i = 0; i < c->nops; i++) {
    const sl_pop *o = &c->plan->ops[i];
    sl__op *s = &c->ops[i];
    double rows = sl__typical_rows(c, i);
    double out_rows = sl_plan_task_out_rows(o, rows);
    s->est_time = sl_plan_task_time(o, rows);
    s->est_in_bytes = rows * o->in_row_bytes;
    s->est_out_bytes = out_rows * o->out_row_bytes;
    s->est_out_parts = fmax(1, ceil(s->est_out_bytes / c->plan->target_partition_bytes));
    s->est_in_rows = rows;
  }
}

static void observe(sl_core *c, const sl__task *t, double duration)
{
  sl__op *s = &c->ops[t->op];
  s->nobs++;
  s->sum_time += duration;
  s->sum_out_bytes += t->out_bytes;
  s->sum_in_bytes += t->bytes;
  s->sum_out_parts += t->nemitted;
  s->sum_in_rows += (double)t->rows;
  s->est_in_rows = s->sum_in_rows / s->nobs;
  s->est_time = s->sum_time / s->nobs;
  s->est_out_bytes = s->sum_out_bytes / s->nobs;
  s->est_in_bytes = s->sum_in_bytes / s->nobs;
  s->est_out_parts = fmax(1, s->sum_out_parts / s->nobs);
}

/* --------------------------------------------------------------- nodes */

/* Attempt @p t has made the last output of its work order: all that is
 * left is its engine's report that it finished, at once. */
static void note_last_output(sl_core *c, sl__task *t, sl_part_id pid)
{
  if (t->finishing || t->out_parts == 0 || t->nemitted != t->out_parts)
    return;
  sl__node *nd = &c->nodes[t->node];
  t->finishing = 1;
  t->last_out = pid;
  if (pid != SL_NONE)
    c->parts[pid].fresh = 1;
  nd->nfinishing++;
  nd->cpu_finishing += t->cpu;
  nd->gpu_finishing += t->gpu;
}

/* The finish of attempt @p t has been seen (or will never come): its last
 * output @p pid is an output like any other. */
void sl__forget_fresh(sl_core *c, sl__task *t, sl_part_id pid)
{
  if (pid != SL_NONE)
    c->parts[pid].fresh = 0;
  t->last_out = SL_NONE;
}
/* --------------------------------------------------------- construction */

/* Whether @p a and @p b have the same operators, by name, in order. */
static bool same_operators(const sl_plan *a, const sl_plan *b)
{
  if (a->nops != b->nops)
    return false;
  for (int i = 0; i < a->nops; i++)
    if (strcmp(a->ops[i].name, b->ops[i].name) != 0)
      return false;
  return true;
}

sl_core *sl_core_create(const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts, int *code,
                        char *err, size_t errlen)
{
  int rc = SL_ENOMEM, dummy;
  if (!code)
    code = &dummy;
  if (plan->nops < 1 || cluster->nnodes < 1) {
    snprintf(err, errlen, "empty plan or cluster");
    *code = SL_EINVAL;
    return NULL;
  }
  if (opts->charges && !same_operators(plan, opts->charges)) {
    snprintf(err, errlen, "the charged costs are of other operators than the plan's");
    *code = SL_EINVAL;
    return NULL;
  }
  sl_core *c = calloc(1, sizeof *c);
  if (!c)
    goto out_nomem;
  c->plan = plan;
  c->charges = opts->charges ? opts->charges : plan;
  c->cluster = cluster;
  c->opts = *opts;
  c->dec_hash = 0xcbf29ce484222325ULL; /* FNV-1a's offset basis */
  c->seed = opts->seed ? opts->seed : plan->workload && plan->workload->seed ? (uint64_t)plan->workload->seed : 1;
  c->nops = plan->nops;
  c->nnodes = cluster->nnodes;
  c->policy = opts->model == SL_MODEL_BATCH    ? &sl__policy_batch
              : opts->model == SL_MODEL_STREAM ? &sl__policy_stream
                                               : &sl__policy_streaming;
  if ((rc = sl__init_pins(c, err, errlen)) < 0)
    goto out_free_core_quiet;
  c->nodes = calloc(c->nnodes, sizeof *c->nodes);
  if (!c->nodes)
    goto out_free_core;
  for (int n = 0; n < c->nnodes; n++) {
    const sl_node_group *g = sl_cluster_node_group(cluster, n);
    c->nodes[n].nslots = sl__slots_for(plan, g->cpu, g->gpu);
    c->nodes[n].free_slots = malloc(sizeof(int) * (c->nodes[n].nslots + 1));
    c->nodes[n].set_up = calloc((size_t)c->nodes[n].nslots + 1, sizeof(uint32_t));
    if (!c->nodes[n].free_slots || !c->nodes[n].set_up)
      goto out_free_core;
    sl__node_reset(c, n);
  }
  c->nsplits = plan->ops[0].tasks;
  c->split_rows = calloc(c->nsplits > 0 ? c->nsplits : 1, sizeof *c->split_rows);
  c->merge_count = calloc((size_t)c->nnodes + 1, sizeof *c->merge_count);
  c->home_full_pass = calloc((size_t)c->nnodes + 1, sizeof *c->home_full_pass);
  if (!c->split_rows || !c->merge_count || !c->home_full_pass)
    goto out_free_core;
  c->stats.first_output_s = -1;
  c->stats.peak_store_node = -1;
  c->stats.store_budget_bytes = INFINITY;
  for (int n = 0; n < c->nnodes; n++)
    c->stats.store_budget_bytes = fmin(c->stats.store_budget_bytes, c->nodes[n].store_budget);
  init_estimates(c);
  if ((rc = sl__autoplace_init(c, err, errlen)) < 0)
    goto out_free_core_quiet;
  if ((rc = c->policy->init(c, err, errlen)) < 0)
    goto out_free_core_quiet;
  if ((rc = sl__check_budgets(c, err, errlen)) < 0)
    goto out_free_core_quiet;
  *code = 0;
  return c;

out_free_core:
  snprintf(err, errlen, "out of memory");
  rc = SL_ENOMEM;
out_free_core_quiet:
  sl_core_free(c);
  *code = rc;
  return NULL;
out_nomem:
  snprintf(err, errlen, "out of memory");
  *code = SL_ENOMEM;
  return NULL;
}

sl_core *sl_core_new(const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts, char *err,
                     size_t errlen)
{
  return sl_core_create(plan, cluster, opts, NULL, err, errlen);
}

void sl_core_free(sl_core *c)
{
  if (!c)
    return;
  if (c->policy && c->policy->fini)
    c->policy->fini(c);
  sl__autoplace_fini(c);
  for (uint32_t i = 0; i < c->ntasks; i++)
    if (c->tasks[i].origin == i) {
      free(c->tasks[i].inputs);
      free(c->tasks[i].outs);
    }
  for (int n = 0; c->nodes && n < c->nnodes; n++) {
    free(c->nodes[n].free_slots);
    free(c->nodes[n].set_up);
    sl__idq_free(&c->nodes[n].waiting);
  }
  for (int i = 0; i < c->nops; i++) {
    sl__idq_free(&c->ops[i].inq);
    sl__idq_free(&c->ops[i].retryq);
    free(c->ops[i].run_ids);
  }
  sl__idq_free(&c->blocked);
  free(c->nodes);
  free(c->tasks);
  free(c->parts);
  free(c->decs);
  free(c->launch_in);
  free(c->split_rows);
  free(c->merge_count);
  free(c->home_full_pass);
  free(c);
}

/* ------------------------------------------------------------ partitions */

void sl__enqueue_part(sl_core *c, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  sl__op *next = &c->ops[p->op + 1];
  if (sl__idq_push(&next->inq, pid) < 0) {
    sl__push_fail(c, SL_ENOMEM);
    return;
  }
  p->in_queue = 1;
  p->queued_at = c->now;
  next->in_queue_bytes += p->bytes;
}

static void deliver(sl_core *c, double now, sl_part_id pid)
{
  sl__part *p = &c->parts[pid];
  sl_decision d = {.kind = SL_DEC_DELIVER, .task = p->producer, .part = pid, .op = p->op,
                   .node = p->node, .bytes = p->bytes, .rows = p->rows, .split = p->split};
  sl__push(c, &d);
  c->stats.rows_delivered += (double)p->rows;
  if (p->split >= 0 && p->split < c->nsplits)
    c->split_rows[p->split] += (double)p->rows;
  if (c->stats.first_output_s < 0)
    c->stats.first_output_s = now;
  p->state = SL__P_FREED; /* the sink holds it now; it is never lost */
  p->refs = 0;
}

/* ----------------------------------------------------------------- tasks */

sl_task_id sl__task_new(sl_core *c, int op, const sl_part_id *inputs, int n, int64_t split)
{
  sl_task_id id = sl__task_alloc(c);
  if (id == SL_NONE) {
    sl__push_fail(c, SL_ENOMEM);
    return SL_NONE;
  }
  sl__task *t = &c->tasks[id];
  t->op = (int16_t)op;
  t->state = SL__T_QUEUED;
  t->split = split;
  t->current = id;
  if (n > 0) {
    t->inputs = malloc(sizeof *t->inputs * n);
    if (!t->inputs) {
      sl__push_fail(c, SL_ENOMEM);
      return SL_NONE;
    }
    memcpy(t->inputs, inputs, sizeof *t->inputs * n);
    t->ninputs = n;
    t->pinned = 1; /* inputs taken from a queue already hold their ref */
    for (int i = 0; i < n; i++) {
      t->rows += c->parts[inputs[i]].rows;
      t->bytes += c->parts[inputs[i]].bytes;
    }
    t->split = c->parts[inputs[0]].split;
  } else {
    t->rows = c->plan->ops[op].rows_per_task;
  }
  c->active++;
  c->ops[op].active++;
  return id;
}

bool sl__inputs_ready(const sl_core *c, const sl__task *t)
{
  const sl__task *o = &c->tasks[t->origin];
  for (int i = 0; i < o->ninputs; i++) {
    uint8_t s = c->parts[o->inputs[i]].state;
    if (s != SL__P_ALIVE && s != SL__P_SPILLED)
      return false;
  }
  return true;
}

/* Draws of task time spreads: a stream of their own in models/rng.h; the
 * noise a calibration adds, another, so that a calibrated simulation
 * draws the very spread factors of the run it replays (same data, same
 * coefficient) and its noise on top. */
enum { DRAW_SPREAD = 1, DRAW_NOISE = 2 };

/* The facts of a LAUNCH that engines used to work out each its own way:
 * the output cut, the output rows, the time to charge and the share of
 * an all-to-all task. One place, so that both engines do the same. */
/* Output rows of origin task @p o, fixed at its first launch so that every
 * attempt makes the same. Rounding each task on its own lost rows: a filter
 * keeping one row in eight made 0 of a 1-row task and llround(0.375) = 0 of
 * a 3-row one, and the job never completed. The operator's running sum of
 * rows is rounded instead: its tasks make floor(rows * ratio) in all. */
static int64_t out_rows_of(sl_core *c, sl__task *o)
{
  if (o->out_rows_set)
    return o->out_rows;
  const sl_pop *op = &c->plan->ops[o->op];
  int64_t *before = &c->ops[o->op].rows_launched;
  double from = floor(sl_plan_task_out_rows(op, (double)*before) + 1e-6);
  double to = floor(sl_plan_task_out_rows(op, (double)(*before + o->rows)) + 1e-6);
  *before += o->rows;
  o->out_rows = (int64_t)(to - from);
  o->out_rows_set = 1;
  return o->out_rows;
}

/* The identity of the data origin task @p o works on, from its inputs'
 * keys (a source: its split), its operator, share and rows; never
 * from ids, which number tasks in the order an engine's events made them.
 * Task time spreads are drawn from it: the same data takes the same time
 * whichever engine runs it, in whatever order, and however often (a retry
 * is the same work again). Drawn by task id, a real run and its simulation
 * charged different tasks the slow draws: 18% apart on a static placement
 * with a 0.2 spread (bench/validate's oddrows under stream). Drawn by the
 * first input's key, a batch of 96 rows whose partitions the two engines
 * queued in another order drew 0.56 for real and 0.93 simulated (zoo small
 * seed 1 case 3 under batch). */
static uint64_t data_key(const sl_core *c, sl__task *o)
{
  if (o->key)
    return o->key;
  uint64_t inputs = 0; /* by the set of inputs, in any order: engines queue them in their events' */
  for (int i = 0; i < o->ninputs; i++)
    inputs ^= sl__draw_mix(c->parts[o->inputs[i]].key);
  uint64_t h = sl__draw_mix((uint64_t)o->op + 1);
  h = sl__draw_mix(h ^ (o->ninputs > 0 ? inputs : (uint64_t)o->split));
  h = sl__draw_mix(h ^ (uint64_t)(o->share + 1));
  h = sl__draw_mix(h ^ (uint64_t)o->rows);
  o->key = h ? h : 1; /* 0 means not yet fixed */
  return o->key;
}

/* Whether the slot of @p d starts operator d->op for the first time since
 * its node joined, and so pays the operator's set-up; marks it set up. */
static bool first_on_slot(sl_core *c, const sl_decision *d)
{
  uint32_t *set_up = &c->nodes[d->node].set_up[d->slot];
  uint32_t bit = (uint32_t)1 << d->op;
  bool first = !(*set_up & bit);
  *set_up |= bit;
  return first;
}

double sl__slot_speed(const sl_core *c, int op, int node)
{
  const sl_node_group *g = sl_cluster_node_group(c->cluster, node);
  double speed = c->plan->ops[op].gpu > 0 ? g->gpu_speed : g->cpu_speed;
  return speed > 0 ? speed : 1;
}

/* The reducers' shares of the shuffle operator @p op feeds (through its
 * merge stage, if it has one), 1 when the next operator is no shuffle. */
static int64_t shuffle_shares_after(const sl_core *c, int op)
{
  if (op + 1 >= c->nops || c->plan->ops[op + 1].kind != SL_OP_ALL_TO_ALL)
    return 1;
  const sl_pop *to = &c->plan->ops[op + 1];
  if (to->merge_stage && op + 2 < c->nops)
    to = &c->plan->ops[op + 2];
  return to->tasks > 1 ? to->tasks : 1;
}

static void work_order(sl_core *c, sl_decision *d, sl__task *o, int node)
{
  const sl_pop *op = &c->plan->ops[d->op];
  const sl_pop *cost = &c->charges->ops[d->op]; /* the times charged, as the policy's may not be */
  d->rows_per_part = sl_plan_rows_per_part(op, d->target_bytes);
  d->out_rows = o->out_rows;
  d->out_parts = d->out_rows <= 0                  ? 0
                 : d->rows_per_part == INT64_MAX ? 1
                                                 : (d->out_rows + d->rows_per_part - 1) / d->rows_per_part;
  d->spread = sl__draw_spread(cost->time_spread, c->seed, DRAW_SPREAD, data_key(c, o)) *
              sl__draw_spread(cost->time_noise, c->seed, DRAW_NOISE, data_key(c, o));
  d->outputs_at_end = op->outputs_at_end;
  d->fresh = first_on_slot(c, d);
  d->setup_s = d->fresh ? cost->time_setup : 0;
  d->work_s = sl_plan_task_time(cost, (double)d->rows) * d->spread + d->setup_s;
  d->speed = sl__slot_speed(c, d->op, node);
  d->charge_s = d->work_s / d->speed;
  /* a kill that found nothing of this operator running takes this attempt */
  int k = c->pending_kills[d->op + 1] > 0 ? d->op + 1 : c->pending_kills[0] > 0 ? 0 : -1;
  d->doomed = k >= 0;
  if (k >= 0)
    c->pending_kills[k]--;
  /* shares count the reducers' key (or hash) ranges, a merge stage's too */
  int64_t reducers = op->merge_stage && d->op + 1 < c->nops ? c->plan->ops[d->op + 1].tasks : op->tasks;
  d->share = o->share;
  d->share_end = o->share_end;
  d->shares = o->share >= 0 && op->kind == SL_OP_ALL_TO_ALL && reducers > 1 ? reducers : 1;
  if (d->shares == 1) {
    d->share = 0;
    d->share_end = 1;
  }
  d->out_blocks = shuffle_shares_after(c, d->op);
  if (op->merge_stage) { /* a merge makes one partition of what it combines */
    d->rows_per_part = INT64_MAX;
    d->out_parts = d->out_rows > 0 ? 1 : 0;
  }
}

/* Room in @p op's running list for one more attempt. */
static int reserve_running(sl_core *c, int op)
{
  sl__op *s = &c->ops[op];
  if ((uint32_t)s->running < s->run_cap)
    return 0;
  uint32_t ncap = s->run_cap ? 2 * s->run_cap : 16;
  uint32_t *ids = realloc(s->run_ids, sizeof *ids * ncap);
  if (!ids)
    return SL_ENOMEM;
  s->run_ids = ids;
  s->run_cap = ncap;
  return 0;
}

/* Room for the facts of @p n inputs, so that sl_core_next() never allocates. */
static int reserve_launch_in(sl_core *c, int n)
{
  if (n <= 0 || (uint32_t)n <= c->launch_in_cap)
    return 0;
  uint32_t ncap = c->launch_in_cap ? c->launch_in_cap : 16;
  while (ncap < (uint32_t)n)
    ncap *= 2;
  sl_input *in = realloc(c->launch_in, sizeof *in * ncap);
  if (!in)
    return SL_ENOMEM;
  c->launch_in = in;
  c->launch_in_cap = ncap;
  return 0;
}

/* Charges operator @p op's holdings up to @p now, before they change. */
static void accrue_usage(sl_core *c, int op, double now)
{
  sl__op *s = &c->ops[op];
  if (now > s->used_at) {
    s->used_s[0] += s->cpu_used * (now - s->used_at);
    s->used_s[1] += s->gpu_used * (now - s->used_at);
    s->used_at = now;
  }
}

double sl__op_used_seconds(const sl_core *c, int op, bool gpu, double now)
{
  const sl__op *s = &c->ops[op];
  double held = gpu ? s->gpu_used : s->cpu_used;
  return s->used_s[gpu] + (now > s->used_at ? held * (now - s->used_at) : 0);
}

/* A free slot of @p nd for operator @p op, taken off the free stack: one
 * that has set the operator up already when there is one, so that its
 * set-up (a model's weights, a CUDA context) is paid once per slot it
 * needs rather than once per slot the finishes happen to free (an image
 * classifier on one GPU was set up twice, 0.31 s each, when its last
 * batch went to a CPU worker's freed slot); otherwise the last freed. */
static int take_slot(sl__node *nd, int op)
{
  uint32_t bit = (uint32_t)1 << op;
  for (int i = nd->nfree - 1; i >= 0; i--)
    if (nd->set_up[nd->free_slots[i]] & bit) {
      int slot = nd->free_slots[i];
      nd->free_slots[i] = nd->free_slots[nd->nfree - 1];
      nd->free_slots[nd->nfree - 1] = slot;
      break;
    }
  return nd->free_slots[--nd->nfree];
}

/* Every attempt of a source that reads remote storage reads its rows
 * again, and is billed again: what the summary's request cost counts. */
static void count_storage_reads(sl_core *c, int op, int64_t rows)
{
  const sl_pop *p = &c->plan->ops[op];
  if (op != 0 || p->kind != SL_OP_SOURCE || c->plan->source_from_disk || !(p->read_bytes_per_row > 0))
    return;
  double bytes = (double)rows * p->read_bytes_per_row;
  c->stats.storage_gets += sl_storage_requests(c->cluster, bytes, false);
}

/* The node holding the largest input of @p o that a task on @p node must
 * receive over the network, -1 when every input is local. */
static int largest_remote_input(const sl_core *c, const sl__task *o, int node)
{
  int from = -1;
  double most = 0;
  for (int i = 0; i < o->ninputs; i++) {
    const sl__part *p = &c->parts[o->inputs[i]];
    if (p->node >= 0 && p->node < c->nnodes && p->node != node && p->bytes > most) {
      most = p->bytes;
      from = p->node;
    }
  }
  return from;
}

void sl__launch(sl_core *c, double now, sl_task_id id, int node)
{
  sl__task *t = &c->tasks[id];
  sl__task *o = sl__origin_of(c, t);
  const sl_pop *op = &c->plan->ops[t->op];
  if (reserve_launch_in(c, o->ninputs) < 0 || reserve_running(c, t->op) < 0) {
    sl__push_fail(c, SL_ENOMEM); /* the job ends; no order goes out without its facts */
    return;
  }
  sl__node *nd = &c->nodes[node];
  out_rows_of(c, o);
  t->state = SL__T_RUNNING;
  t->node = node;
  t->slot = take_slot(nd, t->op);
  t->cpu = op->cpu;
  t->gpu = op->gpu;
  t->start = now;
  t->paused_s = 0;
  t->nemitted = 0;
  t->finishing = 0;
  t->last_out = SL_NONE;
  t->out_bytes = 0;
  nd->cpu_free -= op->cpu;
  nd->gpu_free -= op->gpu;
  if (!(op->gpu > 0))
    nd->pre_cpu += op->cpu;
  c->free_cpu -= op->cpu;
  c->free_gpu -= op->gpu;
  c->free_slots--;
  t->pull_from = largest_remote_input(c, o, node);
  if (t->pull_from >= 0)
    c->nodes[t->pull_from].pulls++;
  t->run_pos = (uint32_t)c->ops[t->op].running;
  c->ops[t->op].run_ids[t->run_pos] = id;
  c->ops[t->op].running++;
  nd->op_running[t->op]++;
  accrue_usage(c, t->op, now);
  c->ops[t->op].cpu_used += op->cpu;
  c->ops[t->op].gpu_used += op->gpu;
  c->stats.tasks_launched++;
  count_storage_reads(c, t->op, o->rows);
  sl_decision d = {.kind = SL_DEC_LAUNCH, .task = id, .origin = t->origin, .op = t->op, .node = node,
                   .slot = t->slot, .attempt = t->attempt, .inputs = o->inputs, .ninputs = o->ninputs,
                   .split = o->split, .rows = o->rows, .bytes = o->bytes,
                   .target_bytes = c->policy->target_bytes(c, t->op), .part = SL_NONE};
  work_order(c, &d, o, node);
  t->out_parts = d.out_parts > 0 && d.out_parts < UINT32_MAX ? (uint32_t)d.out_parts : 0;
  t->charge_end = now + d.charge_s;
  sl__push(c, &d);
}

void sl__release(sl_core *c, sl__task *t)
{
  sl__node *nd = &c->nodes[t->node];
  if (t->finishing) {
    t->finishing = 0;
    nd->nfinishing--;
    nd->cpu_finishing -= t->cpu;
    nd->gpu_finishing -= t->gpu;
    if (nd->nfinishing == 0)
      nd->cpu_finishing = nd->gpu_finishing = 0; /* no rounding residue */
  }
  if (!(t->gpu > 0))
    nd->pre_cpu = fmax(0, nd->pre_cpu - t->cpu);
  if (nd->alive) {
    nd->free_slots[nd->nfree++] = t->slot;
    nd->cpu_free += t->cpu;
    nd->gpu_free += t->gpu;
    c->free_cpu += t->cpu;
    c->free_gpu += t->gpu;
    c->free_slots++;
  }
  if (t->pull_from >= 0 && c->nodes[t->pull_from].pulls > 0)
    c->nodes[t->pull_from].pulls--;
  t->pull_from = -1;
  sl__op *s = &c->ops[t->op];
  uint32_t last = s->run_ids[s->running - 1];
  s->run_ids[t->run_pos] = last; /* the last one takes its place */
  c->tasks[last].run_pos = t->run_pos;
  c->ops[t->op].running--;
  c->ops[t->op].running_out_bytes -= t->out_bytes;
  nd->op_running[t->op]--;
  nd->op_running_out[t->op] -= t->out_bytes;
  if (nd->op_running[t->op] == 0)
    nd->op_running_out[t->op] = 0; /* no rounding residue */
  accrue_usage(c, t->op, c->now);
  c->ops[t->op].cpu_used -= t->cpu;
  c->ops[t->op].gpu_used -= t->gpu;
  if (t->waiting) {
    sl__idq_remove(&nd->waiting, (uint32_t)(t - c->tasks));
    t->waiting = 0;
    c->ops[t->op].waiting--;
  }
}

/* Whether adding a partition of @p more rows to @p rows fills batches of
 * @p batch better: a batch costs the same full or not, so 30 rows in one
 * batch beat 35 rows in two. */
bool sl__batch_gains(int64_t rows, int64_t more, int batch)
{
  return sl_plan_batch_gains(rows, more, batch);
}

typedef struct {
  const sl_core *c;
  const sl_pop *o;
  bool coalesce;
  bool split_batch; /* rows up to the batch size, by the bytes limit */
  int64_t max_rows; /* > 0: no more rows than this (sl__take_rows) */
  sl_part_id buf[256];
  int n;
  int64_t rows;
  double bytes;
  double limit_bytes; /* coalesce up to this many bytes (no batch size) */
} take_state;

/* Whether partition @p p joins the task being assembled in @p ts. */
static bool take_fits(const take_state *ts, const sl__part *p)
{
  if (ts->n == 0)
    return true;
  if (!ts->coalesce || ts->n == 256)
    return false;
  if (ts->max_rows > 0)
    return ts->rows + p->rows <= ts->max_rows;
  if (ts->o->batch_size > 0 && !ts->split_batch)
    return sl__batch_gains(ts->rows, p->rows, ts->o->batch_size);
  if (ts->o->batch_size > 0 && ts->rows + p->rows > ts->o->batch_size)
    return false;
  return ts->bytes + p->bytes <= ts->limit_bytes + EPS;
}

double sl__op_instances(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  bool gpu = o->gpu > 0;
  double request = gpu ? o->gpu : o->cpu;
  double n = request > 0 ? floor(sl__op_capacity(c, op, gpu) / request + EPS) : 1;
  if (o->concurrency > 0 && n > o->concurrency)
    n = o->concurrency;
  return n > 1 ? n : 1;
}

double sl__amortising_rows(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  if (!(o->time_per_task > 0))
    return 0;
  if (c->ops[op].task_rows > 0)
    return c->ops[op].task_rows;
  return sl_plan_amortising_rows(o->time_per_task, o->time_per_row);
}

/* Coalescing small partitions saves per-task costs, but a task that takes
 * more than its operator's share of the queue leaves slots idle that could
 * run the rest: bundle up to the target partition, and no more than the
 * queued bytes spread over every slot the operator could use. A batch cut
 * short (@p split_batch) still takes rows enough to keep its per-task cost
 * under a tenth of its work (zoo case 182: 10-row tasks of 156 ms each). */
static double coalesce_limit(const sl_core *c, int op, bool split_batch)
{
  double share = c->ops[op].in_queue_bytes / sl__op_instances(c, op);
  if (split_batch || c->ops[op].task_rows > 0)
    share = fmax(share, sl__amortising_rows(c, op) * c->plan->ops[op].in_row_bytes);
  return fmin(c->plan->target_partition_bytes, share);
}

static void take(take_state *ts, sl__op *s, sl__part *p, sl_part_id pid)
{
  ts->buf[ts->n++] = pid;
  p->in_queue = 0; /* also marks it for removal from the queue */
  s->in_queue_bytes -= p->bytes;
  ts->rows += p->rows;
  ts->bytes += p->bytes;
}

bool sl__taken(uint32_t id, void *ctx)
{
  return ((sl_core *)ctx)->parts[id].in_queue == 0;
}

/* Partitions already on @p near first (no transfer), then the oldest. */
bool sl__batch_free(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  return o->batch_size > 0 && !(o->time_per_batch > 0);
}

static sl_task_id assemble(sl_core *c, int op, take_state ts, int near);

sl_task_id sl__take_inputs(sl_core *c, int op, bool coalesce, bool split_batch, int near)
{
  take_state ts = {.c = c, .o = &c->plan->ops[op], .coalesce = coalesce};
  ts.split_batch = split_batch && sl__batch_free(c, op);
  ts.limit_bytes = coalesce_limit(c, op, ts.split_batch);
  return assemble(c, op, ts, near);
}

sl_task_id sl__take_rows(sl_core *c, int op, int64_t max_rows, int near)
{
  take_state ts = {.c = c, .o = &c->plan->ops[op], .coalesce = true, .split_batch = true};
  ts.max_rows = max_rows > 0 ? max_rows : 1;
  return assemble(c, op, ts, near);
}

/* Whether moving partition @p p over its holder's NIC takes more than a
 * quarter of the work of a task of @p op: below that, which NIC serves it
 * matters less than taking the oldest first, which frees the stores in the
 * order they filled (small stores of GPU-only nodes filled when cheap
 * transfers were reordered: zoo seed 1 case 102, 76.5 -> 68.7% of the
 * bound). */
static bool transfer_matters(const sl_core *c, int op, const sl__part *p)
{
  if (p->node < 0 || p->node >= c->nnodes)
    return false;
  double nic = sl_cluster_node_group(c->cluster, p->node)->nic_bps;
  if (!(nic > 0) || !isfinite(nic))
    return false;
  double work = sl_plan_task_time(&c->plan->ops[op], c->ops[op].est_in_rows);
  return p->bytes / nic > 0.25 * work;
}

/* The queued partition, among the first @p window, whose node serves the
 * fewest transfers now (sl__node.pulls), the oldest on ties; SL_NONE when
 * none is queued. A task placed where none of its input lives pulls it
 * over the holder's NIC, and the oldest partitions are often the outputs
 * of one node's tasks that ended together: eight capped GPU tasks pulled
 * 11 MB each from the same 100 Mbps NIC, 2.7 s a task for 0.1 s of work
 * (zoo seed 1 case 49). */
static sl_part_id least_pulled(const sl_core *c, int op, uint32_t window)
{
  const sl__op *s = &c->ops[op];
  sl_part_id best = SL_NONE;
  int fewest = INT_MAX;
  for (uint32_t k = 0; k < window && fewest > 0; k++) {
    sl_part_id pid = sl__idq_at(&s->inq, k);
    const sl__part *p = &c->parts[pid];
    if (!p->in_queue)
      continue;
    if (best == SL_NONE && (p->spilled || !transfer_matters(c, op, p)))
      return pid; /* the oldest, as without the count */
    if (p->spilled)
      continue; /* its disk, not its NIC, sets the pace of reading it */
    int pulls = p->node >= 0 && p->node < c->nnodes ? c->nodes[p->node].pulls : 0;
    if (pulls < fewest) {
      fewest = pulls;
      best = pid;
    }
  }
  return best;
}

/* Assembles a task of @p op from its queue as @p ts allows. */
static sl_task_id assemble(sl_core *c, int op, take_state ts, int near)
{
  sl__op *s = &c->ops[op];
  uint32_t window = sl__input_window(&s->inq);
  /* a pool node to be released waits for its stored partitions to go:
   * they go first, or a host that makes its own inputs leaves them to the
   * end (and the node is billed till then) */
  for (uint32_t k = 0; c->has_pool && k < window; k++) {
    sl_part_id pid = sl__idq_at(&s->inq, k);
    sl__part *p = &c->parts[pid];
    if (!p->in_queue || p->node < 0 || !c->nodes[p->node].draining)
      continue;
    if (!take_fits(&ts, p))
      break;
    take(&ts, s, p, pid);
  }
  for (uint32_t k = 0; near >= 0 && k < window; k++) {
    sl_part_id pid = sl__idq_at(&s->inq, k);
    sl__part *p = &c->parts[pid];
    if (p->node != near || !p->in_queue)
      continue;
    if (!take_fits(&ts, p))
      break;
    take(&ts, s, p, pid);
  }
  if (ts.n == 0 && c->opts.streaming.bound_shares) {
    sl_part_id pid = least_pulled(c, op, window);
    if (pid != SL_NONE)
      take(&ts, s, &c->parts[pid], pid);
  }
  for (uint32_t k = 0; k < window; k++) {
    sl_part_id pid = sl__idq_at(&s->inq, k);
    sl__part *p = &c->parts[pid];
    if (!p->in_queue)
      continue;
    if (!take_fits(&ts, p))
      break;
    take(&ts, s, p, pid);
  }
  if (ts.n == 0)
    return SL_NONE;
  sl__idq_filter_head(&s->inq, window, sl__taken, c);
  sl_task_id id = sl__task_new(c, op, ts.buf, ts.n, -1);
  if (id == SL_NONE)
    return SL_NONE;
  for (int i = 0; i < ts.n; i++)
    c->parts[ts.buf[i]].consumer = id;
  return id;
}

bool sl__op_drained(const sl_core *c, int i)
{
  for (int j = 0; j <= i; j++) {
    const sl__op *s = &c->ops[j];
    if (s->active > 0 || !sl__idq_empty(&s->inq))
      return false;
    if (j == 0 && s->next_split < c->plan->ops[0].tasks)
      return false;
  }
  return true;
}

static void check_done(sl_core *c)
{
  if (!c->started || c->done)
    return;
  if (c->active == 0 && c->live_parts == 0 && sl__op_drained(c, c->nops - 1)) {
    c->done = true;
    if (c->has_pool)
      sl__autoplace_end(c, c->now);
    sl_decision d = {.kind = SL_DEC_DONE, .task = SL_NONE, .part = SL_NONE};
    sl__push(c, &d);
  }
}

static double policy_wakeup(const sl_core *c)
{
  double pool = c->has_pool ? sl__autoplace_wakeup(c) : INFINITY;
  return fmin(pool, c->policy->wakeup ? c->policy->wakeup(c) : INFINITY);
}

static void after_event(sl_core *c, double now)
{
  if (c->has_pool && !c->done)
    sl__autoplace_after_event(c, now);
  if (!c->done)
    c->policy->schedule(c, now);
  sl__unjam(c);
  check_done(c);
  /* Nothing runs, nothing was decided and the policy awaits no tick: work
   * is stranded, and saying so beats hanging the engine. */
  if (!c->done && c->active == 0 && c->dec_len == 0 && !isfinite(policy_wakeup(c)))
    push_fail_at(c, SL_ESTALL, sl_core_stuck_op(c), -1);
}

/* ---------------------------------------------------------------- events */

/* Progress (a row delivered, a task finished) is seen at the next event,
 * so a stall is declared after at least the timeout, never before. */
static void note_progress(sl_core *c, double now)
{
  double mark = c->stats.rows_delivered + (double)c->stats.tasks_finished;
  if (mark != c->progress_mark) {
    c->progress_mark = mark;
    c->progress_at = now;
  }
}

/* The stall timeout: the job fails, naming the operator that holds it up. */
static bool check_stall(sl_core *c, double now)
{
  double limit = c->opts.stall_timeout_s;
  if (!(limit > 0) || c->done || now < c->progress_at + limit)
    return false;
  c->failed = c->done = true;
  sl_decision d = {.kind = SL_DEC_FAIL, .task = SL_NONE, .part = SL_NONE, .code = SL_ESTALL,
                   .op = sl_core_stuck_op(c), .node = -1, .stalled_s = now - c->progress_at};
  sl__push(c, &d);
  return true;
}

static void observe_event(sl_core *c, sl_event_kind kind, double now, sl_task_id task, int64_t rows, double bytes,
                          int node)
{
  sl__idle_advance(c, now);
  note_progress(c, now);
  if (!c->observer)
    return;
  sl_event ev = {.kind = kind, .now = now, .task = task, .rows = rows, .bytes = bytes, .node = node};
  c->observer(c->observer_ctx, &ev);
}

void sl_core_observe(sl_core *c, sl_event_fn fn, void *ctx)
{
  c->observer = fn;
  c->observer_ctx = ctx;
}

uint64_t sl_core_decision_hash(const sl_core *c)
{
  return c->dec_hash;
}

static const char *const event_names[SL_EV_NKINDS] = {"start",  "emit", "finished", "failed",
                                                      "lost",   "joined", "tick",   "kill"};

const char *sl_event_kind_name(sl_event_kind k)
{
  return (unsigned)k < SL_EV_NKINDS ? event_names[k] : NULL;
}

int sl_core_apply(sl_core *c, const sl_event *ev)
{
  sl_part_id part;
  sl_emit_fate fate;
  switch (ev->kind) {
  case SL_EV_START:
    return sl_core_start(c, ev->now);
  case SL_EV_EMIT:
    return sl_core_emit(c, ev->now, ev->task, ev->rows, ev->bytes, &part, &fate);
  case SL_EV_FINISHED:
    return sl_core_finished(c, ev->now, ev->task);
  case SL_EV_FAILED:
    return sl_core_failed(c, ev->now, ev->task);
  case SL_EV_NODE_LOST:
    return sl_core_node_lost(c, ev->now, ev->node);
  case SL_EV_NODE_JOINED:
    return sl_core_node_joined(c, ev->now, ev->node);
  case SL_EV_TICK:
    return sl_core_tick(c, ev->now);
  case SL_EV_KILL: {
    sl_task_id victim;
    return sl_core_kill(c, ev->now, ev->node, &victim);
  }
  default:
    return SL_EINVAL;
  }
}

int sl_core_start(sl_core *c, double now)
{
  observe_event(c, SL_EV_START, now, SL_NONE, 0, 0, -1);
  if (c->started)
    return SL_ESTATE;
  c->started = true;
  c->now = now;
  c->idle.last = now;
  if (c->has_pool)
    sl__autoplace_start(c, now);
  after_event(c, now);
  return 0;
}

/* Asks the policy where an emission goes; a refusal parks the task. */
static int admit(sl_core *c, double now, sl__task *t, double bytes, sl_emit_fate *fate)
{
  int rc = c->policy->admit(c, now, t, bytes, fate);
  if (rc == SL_EAGAIN) {
    sl__mark_waiting(c, t, bytes);
    /* A policy may park a task for a reason of its own (a full channel)
     * without the liveness check: if this was the last task making
     * progress, let the oldest waiter through now, as no later event will. */
    sl__unjam(c);
  } else if (rc == SL_EOOM) {
    c->stats.oom = true;
    push_fail_at(c, SL_EOOM, t->op, t->node);
  } else if (rc == 0 && *fate == SL_EMIT_SPILLED) {
    c->stats.spilled_partitions++;
    c->stats.spilled_bytes += bytes;
  }
  return rc;
}

static void place(sl_core *c, sl__task *t, sl_part_id pid, sl_emit_fate fate)
{
  sl__part *p = &c->parts[pid];
  p->state = fate == SL_EMIT_SPILLED ? SL__P_SPILLED : SL__P_ALIVE;
  p->spilled = fate == SL_EMIT_SPILLED;
  p->node = t->node;
  if (p->state == SL__P_ALIVE)
    sl__store_add(c, t->node, p->bytes);
  else
    c->nodes[t->node].disk_used += p->bytes;
  c->ops[t->op].buffered += p->bytes;
  c->ops[t->op].running_out_bytes += p->bytes;
  c->nodes[t->node].op_running_out[t->op] += p->bytes;
  t->nemitted++;
  t->out_bytes += p->bytes;
}

static sl_part_id record_output(sl_core *c, sl__task *t, int64_t rows, double bytes)
{
  sl_part_id pid = part_alloc(c);
  if (pid == SL_NONE)
    return SL_NONE;
  sl__task *o = sl__origin_of(c, t);
  if (o->nouts == o->outs_cap) {
    uint32_t ncap = o->outs_cap ? o->outs_cap * 2 : 4;
    sl_part_id *n = realloc(o->outs, sizeof *n * ncap);
    if (!n)
      return SL_NONE;
    o->outs = n;
    o->outs_cap = ncap;
  }
  o->outs[o->nouts++] = pid;
  sl__part *p = &c->parts[pid];
  p->producer = t->origin;
  p->index = t->nemitted;
  p->node = t->node;
  p->op = t->op;
  p->rows = rows;
  p->bytes = bytes;
  p->split = t->split;
  p->key = sl__draw_mix(o->key ^ sl__draw_mix(p->index + 1));
  p->share_off = c->ops[t->op].rows_out;
  c->ops[t->op].rows_out += rows > 0 ? rows : 0;
  p->range_lo = p->range_hi = 0;
  if (c->plan->ops[t->op].merge_stage && o->share_end > o->share) {
    p->range_lo = o->share;
    p->range_hi = o->share_end;
  }
  c->stats.partitions++;
  return pid;
}

int sl_core_emit(sl_core *c, double now, sl_task_id id, int64_t rows, double bytes,
                 sl_part_id *part, sl_emit_fate *fate)
{
  observe_event(c, SL_EV_EMIT, now, id, rows, bytes, -1);
  if (id >= c->ntasks || c->tasks[id].state != SL__T_RUNNING || c->done)
    return SL_ESTATE;
  c->now = now;
  sl__task *t = &c->tasks[id];
  sl__task *o = sl__origin_of(c, t);
  uint32_t k = t->nemitted;
  if (k < o->nouts) {
    /* A re-run replays an output lineage already knows. Only a lost one
     * that someone still needs is taken; the rest would be duplicates. */
    sl_part_id pid = o->outs[k];
    sl__part *p = &c->parts[pid];
    *part = pid;
    if (p->state != SL__P_LOST || p->refs == 0) {
      t->nemitted++;
      c->stats.discarded_partitions++;
      *fate = SL_EMIT_DISCARDED;
      note_last_output(c, t, SL_NONE);
      return 0;
    }
    int rc = admit(c, now, t, bytes, fate);
    if (rc < 0)
      return rc;
    p->rows = rows;
    p->bytes = bytes;
    place(c, t, pid, *fate);
    sl__part_restored(c, pid);
    note_last_output(c, t, pid);
    after_event(c, now);
    return 0;
  }
  bool last = t->op == c->nops - 1;
  *fate = SL_EMIT_STORED;
  if (!last) {
    int rc = admit(c, now, t, bytes, fate);
    if (rc < 0)
      return rc;
  }
  sl_part_id pid = record_output(c, t, rows, bytes);
  if (pid == SL_NONE) {
    sl__push_fail(c, SL_ENOMEM);
    return SL_ENOMEM;
  }
  *part = pid;
  if (last) {
    if (c->plan->sink_to_storage) { /* uploaded once: a re-run's copy was discarded above */
      c->stats.storage_puts += sl_storage_requests(c->cluster, bytes, true);
      c->stats.storage_put_bytes += bytes;
      c->stats.storage_put_byte_s += bytes * now;
    }
    t->nemitted++;
    t->out_bytes += bytes;
    c->ops[t->op].running_out_bytes += bytes;
    c->nodes[t->node].op_running_out[t->op] += bytes;
    deliver(c, now, pid);
  } else {
    c->parts[pid].refs = 1;
    c->live_parts++;
    place(c, t, pid, *fate);
    if (c->policy->on_emitted)
      c->policy->on_emitted(c, now, t, pid);
    else
      sl__enqueue_part(c, pid);
  }
  note_last_output(c, t, *part);
  after_event(c, now);
  return 0;
}

int sl_core_finished(sl_core *c, double now, sl_task_id id)
{
  observe_event(c, SL_EV_FINISHED, now, id, 0, 0, -1);
  if (id >= c->ntasks || c->tasks[id].state != SL__T_RUNNING)
    return SL_ESTATE;
  c->now = now;
  sl__task *t = &c->tasks[id];
  sl_part_id fresh = t->last_out;
  sl__release(c, t);
  /* a re-run of work that had finished repeats it: the failure's cost */
  sl__idle_attempt_end(c, t, now, sl__origin_of(c, t)->finished_once);
  t->state = SL__T_DONE;
  c->active--;
  c->ops[t->op].active--;
  c->ops[t->op].tasks_done++;
  c->stats.tasks_finished++;
  if (c->plan->ops[t->op].kind == SL_OP_ALL_TO_ALL)
    c->stats.shuffle_bytes += t->bytes;
  observe(c, t, now - t->start);
  sl__task *o = sl__origin_of(c, t);
  o->current = SL_NONE;
  o->finished_once = 1;
  if (o->pinned) {
    o->pinned = 0;
    for (int i = 0; i < o->ninputs; i++)
      sl__part_unpin(c, o->inputs[i]);
  }
  sl__rerun_if_needed(c, t->origin);
  after_event(c, now); /* its last output may take the slot it freed */
  sl__forget_fresh(c, &c->tasks[id], fresh); /* after_event() may move the tasks */
  return 0;
}

static void fail_attempt(sl_core *c, double now, sl__task *t)
{
  sl__forget_fresh(c, t, t->last_out);
  sl__release(c, t);
  sl__idle_attempt_end(c, t, now, true);
  t->state = SL__T_DEAD;
  c->active--;
  c->ops[t->op].active--;
  c->stats.tasks_failed++;
  sl__task *o = sl__origin_of(c, t);
  if (o->current == (sl_task_id)(t - c->tasks))
    o->current = SL_NONE;
  if (c->policy->on_task_failed && c->policy->on_task_failed(c, now, t))
    return;
  sl__retry(c, t->origin);
}

int sl_core_failed(sl_core *c, double now, sl_task_id id)
{
  observe_event(c, SL_EV_FAILED, now, id, 0, 0, -1);
  if (id >= c->ntasks)
    return SL_EINVAL;
  if (c->tasks[id].state != SL__T_RUNNING)
    return 0; /* already accounted (its node died, or a rollback took it) */
  c->now = now;
  fail_attempt(c, now, &c->tasks[id]);
  after_event(c, now);
  return 0;
}

int sl_core_node_lost(sl_core *c, double now, int node)
{
  observe_event(c, SL_EV_NODE_LOST, now, SL_NONE, 0, 0, node);
  if (node < 0 || node >= c->nnodes)
    return SL_EINVAL;
  if (!c->nodes[node].alive)
    return 0;
  c->now = now;
  sl__node *nd = &c->nodes[node];
  sl__count_node(c, node, -1);
  nd->alive = false;
  sl__autoplace_lost(c, now, node);
  for (uint32_t i = 0; i < c->ntasks; i++) {
    sl__task *t = &c->tasks[i];
    if (t->state == SL__T_RUNNING && t->node == node) {
      /* the slot vanishes with the node: release() must not return it */
      fail_attempt(c, now, t);
    }
  }
  nd->cpu_free = nd->gpu_free = 0;
  nd->nfree = 0;
  sl__lose_node_parts(c, node);
  bool handled = c->policy->on_cluster_change && c->policy->on_cluster_change(c, now, node, false);
  if (!handled)
    sl__recover_node_parts(c, node);
  after_event(c, now);
  return 0;
}

int sl_core_node_joined(sl_core *c, double now, int node)
{
  observe_event(c, SL_EV_NODE_JOINED, now, SL_NONE, 0, 0, node);
  if (node < 0 || node >= c->nnodes)
    return SL_EINVAL;
  if (c->nodes[node].alive || (c->nodes[node].elastic && !c->nodes[node].acquired))
    return 0; /* a pool node serves only once acquired */
  c->now = now;
  sl__node_reset(c, node);
  sl__autoplace_joined(c, node);
  if (c->policy->on_cluster_change)
    c->policy->on_cluster_change(c, now, node, true);
  after_event(c, now);
  return 0;
}

int sl_core_kill(sl_core *c, double now, int op, sl_task_id *victim)
{
  observe_event(c, SL_EV_KILL, now, SL_NONE, 0, 0, op);
  *victim = SL_NONE;
  if (op < -1 || op >= c->nops)
    return SL_EINVAL;
  for (sl_task_id id = 0; id < c->ntasks; id++) {
    const sl__task *t = &c->tasks[id];
    if (t->state == SL__T_RUNNING && (op < 0 || t->op == op)) {
      *victim = id;
      return 0;
    }
  }
  c->pending_kills[op + 1]++;
  return 0;
}

int sl_core_tick(sl_core *c, double now)
{
  observe_event(c, SL_EV_TICK, now, SL_NONE, 0, 0, -1);
  if (check_stall(c, now))
    return 0;
  c->now = now;
  if (c->policy->tick)
    c->policy->tick(c, now);
  after_event(c, now);
  return 0;
}

double sl_emit_share(double setup_s, double work_s, bool at_end, int64_t k, int64_t n)
{
  if (at_end || n <= 0 || k >= n)
    return 1.0;
  double setup = work_s > 0 ? fmin(1.0, fmax(0.0, setup_s / work_s)) : 0.0;
  return setup + (1.0 - setup) * (double)k / (double)n;
}

double sl_core_wakeup(const sl_core *c)
{
  if (c->done)
    return INFINITY;
  double policy = policy_wakeup(c);
  double stall = c->opts.stall_timeout_s > 0 ? c->progress_at + c->opts.stall_timeout_s : INFINITY;
  return fmin(policy, stall);
}

bool sl_core_done(const sl_core *c)
{
  return c->done;
}

bool sl_core_task_live(const sl_core *c, sl_task_id t)
{
  return t < c->ntasks && c->tasks[t].state == SL__T_RUNNING;
}

/* ----------------------------------------------------------------- stats */

void sl_core_get_stats(const sl_core *c, sl_core_stats *out)
{
  *out = c->stats;
  double rows = 0;
  for (int64_t s = 0; s < c->nsplits; s++)
    rows += c->split_rows[s];
  out->rows_delivered = rows;
}

void sl_core_get_op_stats(const sl_core *c, int op, sl_core_op_stats *out)
{
  const sl__op *s = &c->ops[op];
  out->running = s->running;
  out->waiting = s->waiting;
  out->queued_parts = sl__idq_len(&s->inq);
  out->buffered_bytes = s->buffered;
  out->tasks_done = s->tasks_done;
}

int sl_core_stuck_op(const sl_core *c)
{
  for (int i = c->nops - 1; i >= 0; i--)
    if (c->ops[i].running > c->ops[i].waiting)
      return i;
  /* nothing runs freely: who has work it cannot start? Input waits in a
   * queue, a channel, or nowhere (no instance to route it to) alike. */
  bool pending[SL_MAX_OPS] = {false};
  for (uint32_t k = 0; k < c->nparts; k++) {
    const sl__part *p = &c->parts[k];
    if (p->refs > 0 && p->consumer == SL_NONE && p->op + 1 < c->nops)
      pending[p->op + 1] = true;
  }
  for (int i = c->nops - 1; i >= 0; i--) {
    bool source_left = i == 0 && c->ops[0].next_split < c->plan->ops[0].tasks;
    if (pending[i] || c->ops[i].active > c->ops[i].running || source_left || c->ops[i].running > 0)
      return i;
  }
  return -1;
}

int sl_core_pending_kills(const sl_core *c, int op)
{
  return op >= -1 && op < c->nops ? c->pending_kills[op + 1] : 0;
}
