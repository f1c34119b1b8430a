/*
 * Node fitting: what each node offers (slots, CPUs, GPUs, its store), which
 * nodes an operator may run on (accelerator pins), whether a task fits a
 * node, and which node takes it. The core's mechanics (core.c) and the
 * policies ask; nothing here decides what runs.
 */
#include "core_internal.h"

#include <math.h>
#include <stdio.h>

#define EPS 1e-9

static double min_request(const sl_plan *p, bool gpu)
{
  double m = INFINITY;
  for (int i = 0; i < p->nops; i++) {
    double r = gpu ? p->ops[i].gpu : p->ops[i].cpu;
    bool counts = gpu ? p->ops[i].gpu > 0 : (p->ops[i].gpu <= 0 && p->ops[i].cpu > 0);
    if (counts && r < m)
      m = r;
  }
  return m;
}

int sl__slots_for(const sl_plan *p, double cpu, double gpu)
{
  double mc = min_request(p, false), mg = min_request(p, true);
  int n = 0;
  if (isfinite(mc))
    n += (int)floor(cpu / mc + EPS);
  if (isfinite(mg))
    n += (int)floor(gpu / mg + EPS);
  return n;
}

/* Adds (sign 1) or removes (-1) what node @p n offers to the cluster sums. */
void sl__count_node(sl_core *c, int n, int sign)
{
  const sl__node *nd = &c->nodes[n];
  c->alive_cpu += sign * nd->cpu_total;
  c->alive_gpu += sign * nd->gpu_total;
  c->alive_store += sign * nd->store_budget;
  c->group_alive_cpu[c->cluster->nodes[n].group] += sign * nd->cpu_total;
  c->group_alive_gpu[c->cluster->nodes[n].group] += sign * nd->gpu_total;
  c->free_cpu += sign * nd->cpu_free;
  c->free_gpu += sign * nd->gpu_free;
  c->free_slots += sign * nd->nfree;
}

void sl__node_reset(sl_core *c, int n)
{
  sl__node *nd = &c->nodes[n];
  const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
  nd->alive = true;
  nd->cpu_total = nd->cpu_free = g->cpu;
  nd->gpu_total = nd->gpu_free = g->gpu;
  nd->store_budget = g->store_bytes;
  nd->store_used = 0;
  nd->disk_used = 0; /* a node that (re)joins has lost what it spilled */
  nd->disk_capacity = sl_group_disk_capacity(g);
  nd->nfree = nd->nslots;
  nd->nfinishing = 0;
  nd->pulls = 0;
  nd->held_for = -1;
  nd->draining = false;
  nd->pre_cpu = 0;
  nd->cpu_finishing = nd->gpu_finishing = 0;
  for (int s = 0; s < nd->nslots; s++) {
    nd->free_slots[s] = nd->nslots - 1 - s; /* slot 0 on top */
    nd->set_up[s] = 0; /* a node that (re)joins starts its workers afresh */
  }
  sl__idq_clear(&nd->waiting);
  sl__count_node(c, n, 1);
}

int sl_core_node_slots(const sl_core *c, int node)
{
  return node >= 0 && node < c->nnodes ? c->nodes[node].nslots : 0;
}

double sl_core_node_store(const sl_core *c, int node)
{
  return node >= 0 && node < c->nnodes ? c->nodes[node].store_used : 0;
}

double sl_core_node_disk(const sl_core *c, int node)
{
  return node >= 0 && node < c->nnodes ? c->nodes[node].disk_used : 0;
}

bool sl_core_spills_on(const sl_core *c)
{
  return c->opts.on_full != SL_FULL_OOM;
}

double sl_core_node_store_peak(const sl_core *c, int node)
{
  return node >= 0 && node < c->nnodes ? c->nodes[node].store_peak : 0;
}

bool sl__fits_anywhere(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  return c->free_slots > 0 && c->free_cpu + EPS >= o->cpu && c->free_gpu + EPS >= o->gpu;
}

/* Whether @p nd keeps what it frees of a class @p op uses for another
 * operator (sl__node.held_for). */
static bool held_from(const sl_core *c, const sl__node *nd, int op)
{
  if (nd->held_for < 0 || nd->held_for == op)
    return false;
  const sl_pop *h = &c->plan->ops[nd->held_for], *o = &c->plan->ops[op];
  return (h->cpu > 0 && o->cpu > 0) || (h->gpu > 0 && o->gpu > 0);
}

bool sl__fits(const sl_core *c, int node, int op)
{
  const sl__node *nd = &c->nodes[node];
  const sl_pop *o = &c->plan->ops[op];
  return nd->alive && !nd->draining && nd->nfree > 0 && nd->cpu_free + EPS >= o->cpu &&
         nd->gpu_free + EPS >= o->gpu && sl__op_allowed(c, node, op) && !held_from(c, nd, op) &&
         !((c->op_yields[op] >> c->cluster->nodes[node].group) & 1u) &&
         (!c->has_pool || sl__host_cpu_allows(c, nd, node, op));
}

bool sl__fits_once_finished(const sl_core *c, int node, int op)
{
  const sl__node *nd = &c->nodes[node];
  const sl_pop *o = &c->plan->ops[op];
  return nd->alive && nd->nfinishing > 0 && !sl__fits(c, node, op) &&
         nd->cpu_free + nd->cpu_finishing + EPS >= o->cpu && nd->gpu_free + nd->gpu_finishing + EPS >= o->gpu &&
         sl__op_allowed(c, node, op) && !((c->op_yields[op] >> c->cluster->nodes[node].group) & 1u);
}

double sl__op_capacity(const sl_core *c, int op, bool gpu)
{
  double total = 0;
  for (int g = 0; g < c->cluster->ngroups; g++)
    if ((c->op_groups[op] >> g) & 1u)
      total += gpu ? c->group_alive_gpu[g] : c->group_alive_cpu[g];
  return total;
}

int sl__pick_node(sl_core *c, int op, const sl__task *t)
{
  const sl__task *o = sl__origin_of(c, t);
  /* a push merge runs where its reducers will: it waits for its node
   * while the node lives (its blocks are pushed there), else goes anywhere */
  if (o->home >= 0 && o->home < c->nnodes && c->nodes[o->home].alive)
    return sl__fits(c, o->home, op) ? o->home : -1;
  if (o->ninputs > 0) {
    int home = c->parts[o->inputs[0]].node;
    if (home >= 0 && home < c->nnodes && sl__fits(c, home, op))
      return home;
  }
  return sl__next_fitting_node(c, op);
}

/* Next fit from a rotating cursor spreads work over nodes in O(1)
 * amortized, which keeps 1,000-node simulations fast. */
int sl__next_fitting_node(sl_core *c, int op)
{
  for (int k = 0; k < c->nnodes; k++) {
    int n = (c->ops[op].rr_next + k) % c->nnodes;
    if (sl__fits(c, n, op)) {
      c->ops[op].rr_next = (n + 1) % c->nnodes;
      return n;
    }
  }
  return -1;
}

/* The groups each operator's accelerator pin allows. An operator no group
 * allows would wait forever: refuse the plan instead. */
int sl__init_pins(sl_core *c, char *err, size_t errlen)
{
  for (int i = 0; i < c->nops; i++) {
    const sl_pop *o = &c->plan->ops[i];
    c->op_groups[i] = sl_cluster_allowed_groups(c->cluster, &o->accel);
    if (c->op_groups[i] == 0) {
      char want[SL_MAX_ACCELS * SL_NAME_MAX];
      sl_accel_set_format(&o->accel, want, sizeof want);
      snprintf(err, errlen, "operator '%s' runs only on accelerator %s, which no node group of "
               "cluster '%s' has", o->name, want, c->cluster->name);
      return SL_EUNSAT;
    }
  }
  return 0;
}

int sl__check_budgets(sl_core *c, char *err, size_t errlen)
{
  double smallest = INFINITY;
  for (int n = 0; n < c->nnodes; n++)
    smallest = fmin(smallest, c->nodes[n].store_budget);
  for (int i = 0; i + 1 < c->nops; i++) {
    double part = fmin(c->ops[i].est_out_bytes, c->policy->target_bytes(c, i));
    /* A partition bigger than every store can never be held: fail now
     * rather than hang. Spilling is no way out: a task still holds its
     * inputs in memory, so such a budget could not be kept anyway. The
     * last operator delivers straight to the sink. */
    if (part > smallest) {
      snprintf(err, errlen,
               "operator '%s' emits partitions of %.0f bytes but the store budget is %.0f bytes "
               "(--memory must hold at least one partition)",
               c->plan->ops[i].name, part, smallest);
      return SL_EOOM;
    }
  }
  return 0;
}

bool sl_core_node_alive(const sl_core *c, int node)
{
  return node >= 0 && node < c->nnodes && c->nodes[node].alive;
}
