/*
 * The elastic pool and who preprocesses (Pecan's AutoPlacement).
 *
 * A cluster spec's elastic groups (`elastic = true`) are a pool of nodes
 * rented by the second: they start out of service, the core acquires them
 * (an ACQUIRE decision: billing starts, and the engine reports the node in
 * service once its provisioning delay has passed) and releases them (a
 * RELEASE once nothing runs or is stored there: billing stops). Which
 * nodes, and how much of the accelerator hosts' CPUs the CPU-only
 * operators may hold, is the autoplacement's choice:
 *
 *   collocated  the hosts only, as tf.data on the accelerator's VM;
 *   remote      pool nodes only, one more while each raises the delivery
 *               rate by UP_GAIN, as Cachew autoscales remote workers;
 *   pecan       Pecan's state machine: pool nodes up while they help, then
 *               the hosts' CPUs up in fifths while the rate holds within
 *               TOLERANCE, then pool nodes down while it still holds;
 *   bound       sluice's own: the fewest pool nodes whose bound (the LP of
 *               `sluice bound`, the hosts' CPUs counted) comes within
 *               BOUND_ENOUGH of the whole pool's, acquired at the start,
 *               and one more while the measured rate falls BOUND_SHORT
 *               short of that bound and each addition still helps.
 *
 * Every policy releases its pool nodes once no CPU-only operator has work
 * left. Measures of the rate (rows delivered per second) last
 * sl_core_opts.autoplace_interval_s and begin only once every acquired node
 * is in service and has served a measure's length.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "core_internal.h"

#define EPS 1e-9

/* A pool node more helps when the rate rises by this share. */
#define UP_GAIN 0.03
/* Pecan's tolerance: a change that costs less than this share of the best
 * rate stands. */
#define TOLERANCE 0.10
/* Pecan's most local workers: the hosts' CPUs come in fifths. */
#define LOCAL_STEPS 5
/* sluice: a shape whose bound comes within this share of the whole pool's
 * is enough. */
#define BOUND_ENOUGH 0.98
/* sluice: a measured rate this far below the bound's asks for one more node. */
#define BOUND_SHORT 0.90
/* sluice: ... and only while the accelerators idle this share of the
 * measure for want of input. */
#define STARVED 0.10

typedef enum {
  ST_REMOTE_UP,   /* pool nodes added one at a time while each helps */
  ST_LOCAL_UP,    /* pecan: the hosts' CPUs added in fifths while the rate holds */
  ST_REMOTE_DOWN, /* pecan: pool nodes given back while the rate holds */
  ST_STABLE,
} ap_phase;

typedef struct {
  ap_phase phase;
  double window_start; /* when the running measure began; -1: none runs */
  double window_rows;  /* rows delivered then */
  double window_gpu_cap, window_gpu_starved; /* GPU-seconds then: all, and idle for want of input */
  double last_rate;    /* the measure before the last change, -1: none yet */
  double best_rate;    /* the best measure so far */
  int pending;         /* acquired, not yet in service */
  int local_steps;     /* pecan: fifths of the hosts' CPUs preprocessing may hold */
  double bound_rate;   /* bound: the bound's rows per second with the nodes held */
  bool tail;           /* no CPU-only operator has work left: the pool goes */
} ap_state;

static const char *const autoplace_names[] = {"bound", "collocated", "remote", "pecan", NULL};

int sl_core_opts_set_autoplace(sl_core_opts *o, const char *name)
{
  for (int i = 0; autoplace_names[i]; i++)
    if (strcmp(autoplace_names[i], name) == 0) {
      o->autoplace = (sl_autoplace)i;
      return 0;
    }
  return SL_EINVAL;
}

const char *sl_autoplace_name(sl_autoplace a)
{
  return (int)a >= 0 && (int)a < 4 ? autoplace_names[a] : NULL;
}

static ap_state *ap(const sl_core *c)
{
  return c->autoplace;
}

/* A host whose CPUs the autoplacement shares out: a node with GPUs, not of
 * the pool. */
static bool accelerator_host(const sl__node *nd)
{
  return !nd->elastic && nd->gpu_total > 0;
}

bool sl__host_cpu_allows(const sl_core *c, const sl__node *nd, int node, int op)
{
  (void)node;
  const sl_pop *o = &c->plan->ops[op];
  if (o->gpu > 0 || !accelerator_host(nd) || c->host_cpu_share >= 1)
    return true;
  /* a share too small for one task still runs one (Pecan's first local
   * worker is a whole worker) */
  double limit = c->host_cpu_share * nd->cpu_total;
  if (c->host_cpu_share > 0 && limit < o->cpu)
    limit = o->cpu;
  return nd->pre_cpu + o->cpu <= limit + EPS;
}

bool sl_core_node_elastic(const sl_core *c, int node)
{
  return node >= 0 && node < c->nnodes && c->nodes[node].elastic;
}

int sl__autoplace_init(sl_core *c, char *err, size_t errlen)
{
  c->host_cpu_share = 1;
  for (int n = 0; n < c->nnodes; n++)
    if (sl_cluster_node_group(c->cluster, n)->elastic)
      c->has_pool = true;
  if (!c->has_pool)
    return 0;
  for (int g = 0; g < c->cluster->ngroups; g++)
    if (c->cluster->groups[g].elastic && c->cluster->groups[g].gpu > 0) {
      snprintf(err, errlen, "node group '%s': an elastic group rents CPU workers and may have no GPU (its "
                            "nodes are given back once the CPU-only operators are done)",
               c->cluster->groups[g].name);
      return SL_EINVAL;
    }
  for (int i = 0; i < c->nops; i++)
    if (c->plan->ops[i].kind == SL_OP_ALL_TO_ALL && c->opts.autoplace != SL_AUTOPLACE_COLLOCATED) {
      snprintf(err, errlen, "operator '%s': an all-to-all operator places its merges and reducers on nodes "
                            "fixed in advance, which a pool's nodes are not: use --autoplace collocated",
               c->plan->ops[i].name);
      return SL_EINVAL;
    }
  bool fixed = c->opts.model == SL_MODEL_STREAM || c->opts.streaming.static_alloc;
  if (fixed && c->opts.autoplace != SL_AUTOPLACE_COLLOCATED) {
    snprintf(err, errlen, "an elastic node group needs a model that places tasks as they come (streaming, "
                          "streaming-plus, streaming-noadapt, streaming-nopart or batch): %s places its operators "
                          "on the nodes in service at the start (or use --autoplace collocated)",
             sl_core_opts_model_name(&c->opts));
    return SL_EINVAL;
  }
  ap_state *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  s->window_start = -1;
  s->last_rate = -1;
  c->autoplace = s;
  for (int n = 0; n < c->nnodes; n++) {
    sl__node *nd = &c->nodes[n];
    if (!sl_cluster_node_group(c->cluster, n)->elastic)
      continue;
    nd->elastic = true;
    sl__count_node(c, n, -1); /* out of service until acquired */
    nd->alive = false;
    nd->cpu_free = nd->gpu_free = 0;
    nd->nfree = 0;
  }
  switch (c->opts.autoplace) {
  case SL_AUTOPLACE_REMOTE:
  case SL_AUTOPLACE_PECAN:
    c->host_cpu_share = 0;
    break;
  case SL_AUTOPLACE_COLLOCATED:
  case SL_AUTOPLACE_BOUND:
    break;
  }
  return 0;
}

void sl__autoplace_fini(sl_core *c)
{
  free(c->autoplace);
  c->autoplace = NULL;
}

/* ---------------------------------------------------------- acquisitions */

static int pool_held(const sl_core *c)
{
  int k = 0;
  for (int n = 0; n < c->nnodes; n++)
    k += c->nodes[n].elastic && c->nodes[n].acquired && !c->nodes[n].draining;
  return k;
}

static int pool_size(const sl_core *c)
{
  int k = 0;
  for (int n = 0; n < c->nnodes; n++)
    k += c->nodes[n].elastic;
  return k;
}

/* Acquires the first pool node not held; false when the pool is spent. */
static bool acquire_one(sl_core *c, double now)
{
  for (int n = 0; n < c->nnodes; n++) {
    sl__node *nd = &c->nodes[n];
    if (!nd->elastic || nd->acquired || nd->alive)
      continue;
    nd->acquired = true;
    nd->acquired_at = now;
    ap(c)->pending++;
    c->pool_acquired++;
    int billed = 0; /* draining ones included: they are billed till released */
    for (int k = 0; k < c->nnodes; k++)
      billed += c->nodes[k].elastic && c->nodes[k].acquired;
    c->pool_peak = billed > c->pool_peak ? billed : c->pool_peak;
    const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
    sl_decision d = {.kind = SL_DEC_ACQUIRE, .task = SL_NONE, .part = SL_NONE, .op = -1, .node = n,
                     .delay_s = g->provision_delay_s};
    sl__push(c, &d);
    return true;
  }
  return false;
}

/* Whether every CPU-only operator with work left may run on some node in
 * service outside the pool (its pin, its request, the hosts' share). */
static bool hosts_preprocess(const sl_core *c)
{
  for (int i = 0; i < c->nops; i++) {
    const sl_pop *o = &c->plan->ops[i];
    if (o->gpu > 0 || !(o->cpu > 0) || sl__op_drained(c, i))
      continue;
    bool somewhere = false;
    for (int n = 0; n < c->nnodes && !somewhere; n++) {
      const sl__node *nd = &c->nodes[n];
      somewhere = nd->alive && !nd->elastic && sl__op_allowed(c, n, i) && nd->cpu_total + EPS >= o->cpu &&
                  (!accelerator_host(nd) || c->host_cpu_share > 0);
    }
    if (!somewhere)
      return false;
  }
  return true;
}

/* Marks the pool node acquired last, in service, to go once empty; false
 * when none is held, or when it is the last place preprocessing may run:
 * its stored partitions wait for a consumer, and none would be left. */
static bool release_one(sl_core *c)
{
  int last = -1, held = 0;
  for (int n = 0; n < c->nnodes; n++) {
    const sl__node *nd = &c->nodes[n];
    if (!nd->elastic || !nd->acquired || nd->draining)
      continue;
    held++;
    if (nd->alive && (last < 0 || nd->acquired_at >= c->nodes[last].acquired_at))
      last = n;
  }
  if (last < 0 || (held == 1 && !hosts_preprocess(c) && !ap(c)->tail))
    return false;
  c->nodes[last].draining = true;
  return true;
}

/* Releases every draining node that nothing runs on and nothing is stored on. */
static void release_drained(sl_core *c, double now)
{
  for (int n = 0; n < c->nnodes; n++) {
    sl__node *nd = &c->nodes[n];
    /* half a byte: sums of partition sizes leave rounding dust, never a byte */
    if (!nd->draining || !nd->alive || nd->nfree < nd->nslots || nd->store_used > 0.5 || nd->disk_used > 0.5)
      continue;
    sl__count_node(c, n, -1);
    nd->alive = false;
    nd->draining = false;
    nd->acquired = false;
    nd->billed_s += now - nd->acquired_at;
    nd->cpu_free = nd->gpu_free = 0;
    nd->nfree = 0;
    c->pool_released++;
    sl_decision d = {.kind = SL_DEC_RELEASE, .task = SL_NONE, .part = SL_NONE, .op = -1, .node = n};
    sl__push(c, &d);
  }
}

void sl__autoplace_end(sl_core *c, double now)
{
  for (int n = 0; n < c->nnodes; n++) {
    sl__node *nd = &c->nodes[n];
    if (!nd->elastic || !nd->acquired)
      continue;
    nd->acquired = false;
    nd->draining = false;
    nd->billed_s += now - nd->acquired_at;
    c->pool_released++;
    sl_decision d = {.kind = SL_DEC_RELEASE, .task = SL_NONE, .part = SL_NONE, .op = -1, .node = n};
    sl__push(c, &d);
  }
}

void sl__autoplace_joined(sl_core *c, int node)
{
  if (!c->autoplace || !c->nodes[node].elastic)
    return;
  if (ap(c)->pending > 0)
    ap(c)->pending--;
  if (ap(c)->tail)
    c->nodes[node].draining = true; /* it came too late to help: back at once */
}

void sl__autoplace_lost(sl_core *c, double now, int node)
{
  sl__node *nd = &c->nodes[node];
  if (!c->autoplace || !nd->elastic || !nd->acquired)
    return;
  nd->billed_s += now - nd->acquired_at; /* a lost machine is billed no longer */
  nd->acquired = false;
  nd->draining = false;
  c->pool_lost++;
}

/* ------------------------------------------------------------ the bound */

/* The bound's rows per second with the first @p k pool nodes (by node
 * order) and every other node. */
static double bound_rate_with(const sl_core *c, int k)
{
  sl_cluster cc = *c->cluster;
  cc.nodes = NULL; /* counted by group */
  cc.nnodes = 0;
  for (int g = 0; g < cc.ngroups; g++)
    if (cc.groups[g].elastic) {
      int take = k < cc.groups[g].count ? k : cc.groups[g].count;
      cc.groups[g].count = take;
      k -= take;
    }
  sl_bound b;
  if (sl_bound_compute_rate(c->plan, &cc, &b) < 0)
    return 0;
  return b.throughput_rows_s;
}

/* bound: the fewest pool nodes whose bound comes within BOUND_ENOUGH of
 * the whole pool's. */
static int bound_nodes(const sl_core *c, double *rate)
{
  int max = pool_size(c);
  double full = bound_rate_with(c, max);
  for (int k = 0; k <= max; k++) {
    double r = bound_rate_with(c, k);
    if (r >= BOUND_ENOUGH * full - EPS) {
      *rate = r;
      return k;
    }
  }
  *rate = full;
  return max;
}

void sl__autoplace_start(sl_core *c, double now)
{
  ap_state *s = ap(c);
  switch (c->opts.autoplace) {
  case SL_AUTOPLACE_COLLOCATED:
    s->phase = ST_STABLE;
    break;
  case SL_AUTOPLACE_REMOTE:
  case SL_AUTOPLACE_PECAN:
    s->phase = ST_REMOTE_UP;
    acquire_one(c, now);
    break;
  case SL_AUTOPLACE_BOUND: {
    int k = bound_nodes(c, &s->bound_rate);
    for (int i = 0; i < k; i++)
      acquire_one(c, now);
    s->phase = ST_REMOTE_UP;
    break;
  }
  }
}

/* ------------------------------------------------------------- measures */

static void begin_measure(sl_core *c, double now)
{
  ap(c)->window_start = now;
  ap(c)->window_rows = c->stats.rows_delivered;
  ap(c)->window_gpu_cap = c->idle.capacity[SL__IDLE_GPU];
  ap(c)->window_gpu_starved = c->idle.s[SL__IDLE_GPU][SL_IDLE_INPUT];
}

/* The share of the accelerators' time in the measure just ended that they
 * idled for want of input (1 without accelerators: all is preprocessing). */
static double starved_share(const sl_core *c)
{
  double cap = c->idle.capacity[SL__IDLE_GPU] - ap(c)->window_gpu_cap;
  if (!(cap > 0))
    return 1;
  return (c->idle.s[SL__IDLE_GPU][SL_IDLE_INPUT] - ap(c)->window_gpu_starved) / cap;
}

/* The next step of the policy after a measure of @p rate rows per second. */
static void step(sl_core *c, double now, double rate)
{
  ap_state *s = ap(c);
  bool first = s->last_rate < 0;
  bool helped = first || rate > s->last_rate * (1 + UP_GAIN);
  s->best_rate = fmax(s->best_rate, rate);
  bool holds = rate >= (1 - TOLERANCE) * s->best_rate;
  switch (s->phase) {
  case ST_REMOTE_UP:
    if (c->opts.autoplace == SL_AUTOPLACE_BOUND && !first && !helped) {
      release_one(c); /* the last one did not help */
      s->phase = ST_STABLE;
    } else if (c->opts.autoplace == SL_AUTOPLACE_BOUND &&
               (rate >= BOUND_SHORT * s->bound_rate || starved_share(c) < STARVED)) {
      s->phase = ST_STABLE; /* the bound's rate, near enough, or the accelerators fed: a rate
                               short of the bound is then the pipeline filling, not CPUs */
    } else if (helped && acquire_one(c, now)) {
      ;
    } else {
      if (!first && !helped)
        release_one(c); /* the last one did not help */
      if (c->opts.autoplace == SL_AUTOPLACE_PECAN) {
        s->phase = ST_LOCAL_UP;
        s->local_steps = 1;
        c->host_cpu_share = 1.0 / LOCAL_STEPS;
      } else {
        s->phase = ST_STABLE;
      }
    }
    break;
  case ST_LOCAL_UP:
    if (!holds) { /* a step too far: back one, and the pool down */
      s->local_steps--;
      c->host_cpu_share = (double)s->local_steps / LOCAL_STEPS;
      s->phase = release_one(c) ? ST_REMOTE_DOWN : ST_STABLE;
    } else if (s->local_steps < LOCAL_STEPS) {
      s->local_steps++;
      c->host_cpu_share = (double)s->local_steps / LOCAL_STEPS;
    } else {
      s->phase = release_one(c) ? ST_REMOTE_DOWN : ST_STABLE;
    }
    break;
  case ST_REMOTE_DOWN:
    if (!holds) {
      acquire_one(c, now); /* one too few: back up, and stay */
      s->phase = ST_STABLE;
    } else if (!release_one(c)) {
      s->phase = ST_STABLE;
    }
    break;
  case ST_STABLE:
    break;
  }
  s->last_rate = rate;
}

/* Whether no CPU-only operator has work left. */
static bool preprocessing_done(const sl_core *c)
{
  for (int i = 0; i < c->nops; i++)
    if (!(c->plan->ops[i].gpu > 0) && !sl__op_drained(c, i))
      return false;
  return true;
}

void sl__autoplace_after_event(sl_core *c, double now)
{
  ap_state *s = ap(c);
  bool done = preprocessing_done(c);
  if (!s->tail && done) {
    s->tail = true;
    s->phase = ST_STABLE;
    while (release_one(c))
      ;
  } else if (s->tail && !done) {
    s->tail = false; /* a loss brought preprocessing back (lineage): the pool may serve again */
  }
  /* liveness: preprocessing left, the hosts closed to it and no pool node
   * held (the one held was lost, or all were given back): one more */
  if (!s->tail && c->opts.autoplace != SL_AUTOPLACE_COLLOCATED && !hosts_preprocess(c) && pool_held(c) == 0)
    acquire_one(c, now);
  if (s->phase != ST_STABLE && !s->tail) {
    double len = c->opts.autoplace_interval_s > 0 ? c->opts.autoplace_interval_s : 10;
    if (s->pending > 0 || c->stats.first_output_s < 0)
      s->window_start = -1; /* a node on its way, or nothing delivered yet: no measure counts */
    else if (s->window_start < 0)
      begin_measure(c, now);
    else if (now >= s->window_start + len - EPS) {
      double rate = (c->stats.rows_delivered - s->window_rows) / (now - s->window_start);
      step(c, now, rate);
      s->window_start = -1;
      if (s->pending == 0)
        begin_measure(c, now);
    }
  }
  release_drained(c, now);
}

double sl__autoplace_wakeup(const sl_core *c)
{
  const ap_state *s = ap(c);
  if (s->tail || s->phase == ST_STABLE)
    return INFINITY;
  double len = c->opts.autoplace_interval_s > 0 ? c->opts.autoplace_interval_s : 10;
  if (s->window_start >= 0)
    return s->window_start + len;
  /* a node on its way: look again, and call nothing stranded meanwhile;
   * else the next event, a delivery, starts the measure */
  return s->pending > 0 ? c->now + len : INFINITY;
}

void sl_core_pool_stats_at(const sl_core *c, double now, sl_core_pool_stats *out)
{
  memset(out, 0, sizeof *out);
  int held = 0;
  for (int n = 0; n < c->nnodes; n++) {
    const sl__node *nd = &c->nodes[n];
    const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
    if (!nd->elastic) {
      out->host_cost_usd += g->price_per_hour * now / 3600;
      continue;
    }
    double s = nd->billed_s + (nd->acquired ? now - nd->acquired_at : 0);
    out->node_s += s;
    out->cost_usd += g->price_per_hour * s / 3600;
    held += nd->acquired;
  }
  out->acquired = c->pool_acquired;
  out->released = c->pool_released;
  out->lost = c->pool_lost;
  out->peak = c->pool_peak > held ? c->pool_peak : held;
}
