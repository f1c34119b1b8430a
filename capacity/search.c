/* Capacity planning: a branch and bound over cluster shapes (search.h). */
#include "search.h"

#include <csv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/bound.h"
#include "models/error.h"
#include "sim/engine.h"
#include "workloads/spec.h"

void sl_cap_opts_default(sl_cap_opts *o)
{
  memset(o, 0, sizeof *o);
  o->rank = SL_CAP_RANK_RUN;
  o->top = 5;
  o->nmodels = 1;
  sl_core_opts_default(&o->models[0]);
  o->seed = 1;
  o->max_simulations = 30;
}

void sl_cap_result_free(sl_cap_result *r)
{
  if (!r)
    return;
  free(r->shapes);
  free(r->order);
  memset(r, 0, sizeof *r);
}

const char *sl_cap_status_name(sl_cap_status s)
{
  switch (s) {
  case SL_CAP_SIMULATED: return "simulated";
  case SL_CAP_INFEASIBLE: return "infeasible";
  case SL_CAP_BOUND_MISSES: return "bound-misses-target";
  case SL_CAP_OVER_BUDGET: return "over-budget";
  case SL_CAP_DOMINATED: return "dominated";
  }
  return "?";
}

void sl_cap_shape_name(const sl_cluster *types, const sl_cap_shape *s, char *buf, size_t n)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int g = 0; g < types->ngroups; g++) {
    if (!s->counts[g])
      continue;
    int k = snprintf(buf + len, len < n ? n - len : 0, "%s%s%d x %s", len ? " + " : "",
                     types->groups[g].elastic ? "a pool of " : "", s->counts[g], types->groups[g].name);
    len += k > 0 ? (size_t)k : 0;
  }
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Shapes and bounds                                                         */
/* ------------------------------------------------------------------------ */

/* The cluster of one shape: the node types with their counts, empty types
 * left out (a group of 0 nodes means nothing to the engines). Expanded
 * into nodes for a simulation only: the bound counts nodes by group, and
 * a shape of 100,000 nodes is bounded thousands of times. */
static int shape_groups(const sl_cap_opts *o, const int *counts, sl_cluster *c)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", o->types->name);
  c->backbone_bps = o->types->backbone_bps;
  c->latency_s = o->types->latency_s;
  c->storage_bps = o->types->storage_bps;
  c->storage_latency_s = o->types->storage_latency_s;
  c->storage_get_bytes = o->types->storage_get_bytes;
  c->storage_put_bytes = o->types->storage_put_bytes;
  c->storage_get_price = o->types->storage_get_price;
  c->storage_put_price = o->types->storage_put_price;
  c->storage_gb_month_price = o->types->storage_gb_month_price;
  for (int g = 0; g < o->types->ngroups; g++) {
    if (!counts[g])
      continue;
    sl_node_group *dst = &c->groups[c->ngroups++];
    *dst = o->types->groups[g];
    dst->count = counts[g];
    if (o->memory_bytes > 0)
      dst->store_bytes = o->memory_bytes;
  }
  return c->ngroups > 0 ? 0 : SL_EINVAL;
}

static int shape_cluster(const sl_cap_opts *o, const int *counts, sl_cluster *c)
{
  int rc = shape_groups(o, counts, c);
  return rc ? rc : sl_cluster_expand(c);
}

/* What a run of the whole plan pays remote storage: its requests, the
 * same on every shape, and the bytes held there for its length. */
static double storage_cost(const sl_cap_opts *o, double jct_s)
{
  double gets, puts, in, out;
  sl_plan_storage_use(o->plan, o->types, &gets, &puts, &in, &out);
  /* the input held all along, the output from its upload: half of it, as a
   * sort's reducers upload it over the run's second half at most */
  sl_run_cost r = sl_cluster_run_cost(o->types, jct_s, gets, puts, (in + out / 2) * jct_s);
  return r.requests + r.held;
}

static double objective_of(const sl_cap_opts *o, double price_per_hour, double jct_s)
{
  return o->rank == SL_CAP_RANK_HOUR ? price_per_hour : price_per_hour * jct_s / 3600 + storage_cost(o, jct_s);
}

/* Whether a (simulated or bound) JCT meets the target. */
static bool meets_target(const sl_cap_opts *o, double jct_s)
{
  if (o->deadline_s > 0 && jct_s > o->deadline_s * (1 + 1e-12))
    return false;
  if (o->target_rows_s > 0 && (double)o->plan->source_rows / jct_s < o->target_rows_s * (1 - 1e-12))
    return false;
  return true;
}

static void set_all_models(const sl_cap_opts *o, sl_cap_shape *s, sl_cap_status st)
{
  for (int m = 0; m < o->nmodels; m++)
    s->by_model[m].status = st;
}

/* What the shape's nodes cost an hour, an elastic type's at none: a pool
 * is billed while held, from none to all of it, so the fixed part alone
 * is a lower bound of what a run pays. */
static double price_of(const sl_cap_opts *o, const int *counts)
{
  double price = 0;
  for (int g = 0; g < o->types->ngroups; g++)
    if (!o->types->groups[g].elastic)
      price += counts[g] * o->types->groups[g].price_per_hour;
  return price;
}

/* Whether the node types hold an elastic pool. */
static bool has_pool(const sl_cap_opts *o)
{
  for (int g = 0; g < o->types->ngroups; g++)
    if (o->types->groups[g].elastic)
      return true;
  return false;
}

/* The objective of a simulated outcome: the pool billed as the run held it. */
static double simulated_objective(const sl_cap_opts *o, const sl_cap_shape *s, const sl_cap_outcome *out)
{
  if (!has_pool(o))
    return objective_of(o, s->price_per_hour, out->jct_s);
  double per_hour = s->price_per_hour + (out->jct_s > 0 ? out->pool_cost_per_run * 3600 / out->jct_s : 0);
  return o->rank == SL_CAP_RANK_HOUR ? per_hour : out->cost_per_run;
}

/* Whether operator @p op fits on some node of @p c, as the bound has it. */
static bool fits_some_node(const sl_pop *op, const sl_cluster *c)
{
  for (int g = 0; g < c->ngroups; g++) {
    const sl_node_group *gr = &c->groups[g];
    bool cpu = op->cpu <= 0 || floor(gr->cpu / op->cpu + 1e-9) >= 1;
    bool gpu = op->gpu <= 0 || floor(gr->gpu / op->gpu + 1e-9) >= 1;
    if (gr->count > 0 && cpu && gpu && sl_group_allows(gr, &op->accel))
      return true;
  }
  return false;
}

/* Why no shape of @p c's kind can run the job: the first operator that
 * fits on none of its nodes, and what it asks for. */
static void explain_infeasible(const sl_cap_opts *o, const sl_cluster *c, char *buf, size_t n)
{
  const sl_plan *p = o->plan;
  for (int i = 0; i < p->nops; i++) {
    const sl_pop *op = &p->ops[i];
    if (fits_some_node(op, c))
      continue;
    char res[SL_MAX_ACCELS * SL_NAME_MAX + 48];
    sl_resources_format(op->cpu, op->gpu, &op->accel, res, sizeof res);
    if (c->ngroups == 0)
      snprintf(buf, n, "no nodes at all");
    else if (op->gpu > 0 && sl_cluster_total(c, true) <= 0)
      snprintf(buf, n, "operator '%s' needs %s and no type in the shape has a GPU", op->name, res);
    else
      snprintf(buf, n, "operator '%s' needs %s, which no type in the shape offers", op->name, res);
    return;
  }
  snprintf(buf, n, "the bound finds no rate any schedule could reach");
}

/* Counts saturate at INT64_MAX: sixteen types of 100,000 nodes make more
 * shapes than any counter holds. */
static void add_count(int64_t *to, int64_t n)
{
  if (__builtin_add_overflow(*to, n, to))
    *to = INT64_MAX;
}

static void count_infeasible(sl_cap_result *r, const char *why, int64_t shapes)
{
  add_count(&r->pruned_infeasible, shapes);
  for (int i = 0; i < r->nreasons; i++)
    if (strcmp(r->reasons[i], why) == 0) {
      add_count(&r->reason_shapes[i], shapes);
      return;
    }
  if (r->nreasons == SL_CAP_MAX_REASONS)
    return;
  snprintf(r->reasons[r->nreasons], sizeof r->reasons[0], "%s", why);
  r->reason_shapes[r->nreasons++] = shapes;
}

/* The bound of one cluster shape; false when the shape cannot run the job
 * (why in @p why). */
static bool bound_counts(const sl_cap_opts *o, sl_cap_result *r, const int *counts, sl_bound *b, char *why,
                         size_t n)
{
  sl_cluster c;
  int rc = shape_groups(o, counts, &c);
  r->bounds++;
  if (rc == 0)
    rc = sl_bound_limits(o->plan, &c, b);
  if (rc != 0 && why)
    explain_infeasible(o, &c, why, n);
  /* the whole job's shuffle, even when a sample is simulated: a sample's
   * spills would fit where the job's do not */
  if (rc == 0 && sl_bound_disks_overflow(b)) {
    if (why)
      sl_bound_disks_overflow_text(b, why, n);
    return false;
  }
  return rc == 0;
}

/* ------------------------------------------------------------------------ */
/* The tree of partial shapes                                                */
/* ------------------------------------------------------------------------ */

/* A node of the tree. A subtree: the counts of the first `depth` types of
 * the branching order are fixed, the others free between their min and
 * max. A range: the subtrees of one parent whose next type has a count in
 * lo..hi, kept as one entry until each is needed, so that a type of
 * 100,000 nodes costs no 100,000 bounds. */
typedef struct {
  double lb;                  /* of the objective, for every shape below */
  uint64_t seq;               /* ties: the order nodes were made */
  int depth;
  bool range;                 /* the type branch[depth] spans lo..hi */
  int lo, hi;
  int counts[SL_MAX_GROUPS];  /* by type index; free types hold their max */
  double bound_jct_s, critical_path_s; /* of the largest completion (of a range: the parent's) */
} subtree;

typedef struct {
  const sl_cap_opts *o;
  sl_cap_result *r;
  int ntypes;
  int branch[SL_MAX_GROUPS];  /* type indices, dearest first */
  subtree *heap;
  size_t nheap, capheap;
  int shapes_cap;             /* room in r->shapes */
  uint64_t seq;
  int64_t settled;
  double t0, sim_s;
  double best[SL_CAP_MAX_MODELS][64];
  int nfound[SL_CAP_MAX_MODELS];
  char err[600];
} search;

static bool heap_less(const subtree *a, const subtree *b)
{
  return a->lb < b->lb || (a->lb == b->lb && a->seq < b->seq);
}

static int heap_push(search *z, subtree *t)
{
  if (z->nheap == z->capheap) {
    size_t cap = z->capheap ? 2 * z->capheap : 256;
    subtree *h = realloc(z->heap, cap * sizeof *h);
    if (!h)
      return SL_ENOMEM;
    z->heap = h;
    z->capheap = cap;
  }
  t->seq = z->seq++;
  size_t i = z->nheap++;
  z->heap[i] = *t;
  while (i > 0 && heap_less(&z->heap[i], &z->heap[(i - 1) / 2])) {
    subtree tmp = z->heap[i];
    z->heap[i] = z->heap[(i - 1) / 2];
    z->heap[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
  return 0;
}

static subtree heap_pop(search *z)
{
  subtree top = z->heap[0];
  z->heap[0] = z->heap[--z->nheap];
  for (size_t i = 0;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < z->nheap && heap_less(&z->heap[l], &z->heap[m]))
      m = l;
    if (l + 1 < z->nheap && heap_less(&z->heap[l + 1], &z->heap[m]))
      m = l + 1;
    if (m == i)
      break;
    subtree tmp = z->heap[i];
    z->heap[i] = z->heap[m];
    z->heap[m] = tmp;
    i = m;
  }
  return top;
}

static int64_t saturating_mul(int64_t a, int64_t b)
{
  int64_t n;
  return __builtin_mul_overflow(a, b, &n) ? INT64_MAX : n;
}

/* Shapes whose first @p fixed types (branching order) have the counts of
 * @p counts and whose type branch[fixed] has a count in lo..hi (the rest
 * free); less the shape of no node when it is one of them. Saturates:
 * sixteen types of 100,000 nodes overflow any counter. */
static int64_t shapes_in(const search *z, const int *counts, int fixed, int lo, int hi)
{
  int64_t n = hi - lo + 1;
  bool all_zero = lo <= 0;
  for (int k = 0; k < z->ntypes; k++) {
    const sl_node_group *g = &z->o->types->groups[z->branch[k]];
    if (k < fixed)
      all_zero = all_zero && counts[z->branch[k]] == 0;
    else if (k > fixed) {
      n = saturating_mul(n, (int64_t)(g->max_count - g->min_count + 1));
      all_zero = all_zero && g->min_count == 0;
    }
  }
  return n - (all_zero && n < INT64_MAX ? 1 : 0);
}

/* Shapes below @p t. */
static int64_t shapes_below(const search *z, const subtree *t)
{
  if (t->range)
    return shapes_in(z, t->counts, t->depth, t->lo, t->hi);
  if (t->depth == z->ntypes) {
    int nodes = 0;
    for (int g = 0; g < z->ntypes; g++)
      nodes += t->counts[g];
    return nodes > 0;
  }
  const sl_node_group *g = &z->o->types->groups[z->branch[t->depth]];
  return shapes_in(z, t->counts, t->depth, g->min_count, g->max_count);
}

/* The cheapest completion of the first @p fixed types' counts: the free
 * types at their min. */
static double least_price(const search *z, const int *counts, int fixed)
{
  int least[SL_MAX_GROUPS];
  memcpy(least, counts, sizeof least);
  for (int k = fixed; k < z->ntypes; k++)
    least[z->branch[k]] = z->o->types->groups[z->branch[k]].min_count;
  return price_of(z->o, least);
}

static int64_t total_shapes(const search *z)
{
  int counts[SL_MAX_GROUPS] = {0};
  const sl_node_group *g = &z->o->types->groups[z->branch[0]];
  return shapes_in(z, counts, 0, g->min_count, g->max_count);
}

static void settle(search *z, int64_t *bucket, int64_t n)
{
  add_count(bucket, n);
  add_count(&z->settled, n);
}

/* Bounds subtree @p t's largest completion and either settles it whole
 * (infeasible, missing the target, over the budget) or queues it at its
 * lower bound. */
static int consider(search *z, subtree *t)
{
  int64_t n = shapes_below(z, t);
  if (n == 0)
    return 0; /* only the shape of no node */
  sl_bound b;
  char why[320];
  if (!bound_counts(z->o, z->r, t->counts, &b, why, sizeof why)) {
    count_infeasible(z->r, why, n);
    add_count(&z->settled, n);
    return 0;
  }
  if (!meets_target(z->o, b.jct_s)) {
    settle(z, &z->r->pruned_bound, n);
    return 0;
  }
  t->bound_jct_s = b.jct_s;
  t->critical_path_s = b.critical_path_s;
  t->lb = objective_of(z->o, least_price(z, t->counts, t->depth), b.jct_s);
  if (z->o->budget > 0 && t->lb > z->o->budget) {
    settle(z, &z->r->pruned_budget, n);
    return 0;
  }
  return heap_push(z, t);
}

/* Whether the child of @p t with @p c of its next type can run the job
 * and meets the target at its largest: both only grow with c. */
static bool child_ok(search *z, const subtree *t, int c, bool need_target)
{
  int counts[SL_MAX_GROUPS];
  memcpy(counts, t->counts, sizeof counts);
  counts[z->branch[t->depth]] = c;
  sl_bound b;
  if (!bound_counts(z->o, z->r, counts, &b, NULL, 0))
    return false;
  return !need_target || meets_target(z->o, b.jct_s);
}

/* The least count in lo..hi for which child_ok() holds (hi + 1: none). */
static int least_ok(search *z, const subtree *t, int lo, int hi, bool need_target)
{
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (child_ok(z, t, mid, need_target))
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The counts of @p t's next type below the first whose largest shape can
 * run the job, and below the first that meets the target, are settled at
 * once (two binary searches); the rest become one range. */
static int expand(search *z, const subtree *t)
{
  int type = z->branch[t->depth];
  const sl_node_group *g = &z->o->types->groups[type];
  int feasible = least_ok(z, t, g->min_count, g->max_count, false);
  int meets = least_ok(z, t, feasible, g->max_count, true);
  if (feasible > g->min_count) {
    int counts[SL_MAX_GROUPS];
    char why[320];
    sl_bound b;
    memcpy(counts, t->counts, sizeof counts);
    counts[type] = feasible - 1; /* the most that still cannot: it says why */
    if (!bound_counts(z->o, z->r, counts, &b, why, sizeof why)) {
      int64_t n = shapes_in(z, t->counts, t->depth, g->min_count, feasible - 1);
      count_infeasible(z->r, why, n);
      add_count(&z->settled, n);
    }
  }
  if (meets > feasible)
    settle(z, &z->r->pruned_bound, shapes_in(z, t->counts, t->depth, feasible, meets - 1));
  if (meets > g->max_count)
    return 0;
  subtree r = *t;
  r.range = true;
  r.lo = meets;
  r.hi = g->max_count;
  r.counts[type] = meets;
  r.lb = objective_of(z->o, least_price(z, r.counts, t->depth + 1), t->bound_jct_s);
  r.counts[type] = g->max_count; /* a range keeps its largest completion */
  if (z->o->budget > 0 && r.lb > z->o->budget) {
    settle(z, &z->r->pruned_budget, shapes_below(z, &r));
    return 0;
  }
  return heap_push(z, &r);
}

/* The first count of a range becomes a subtree of its own; the others stay
 * a range, whose lower bound grows with its least count's price. */
static int split_range(search *z, const subtree *t)
{
  int type = z->branch[t->depth];
  subtree child = *t;
  child.range = false;
  child.depth = t->depth + 1;
  child.counts[type] = t->lo;
  int rc = consider(z, &child);
  if (rc || t->lo == t->hi)
    return rc;
  subtree rest = *t;
  rest.lo = t->lo + 1;
  rest.counts[type] = rest.lo;
  rest.lb = objective_of(z->o, least_price(z, rest.counts, t->depth + 1), t->bound_jct_s);
  rest.counts[type] = t->hi;
  if (z->o->budget > 0 && rest.lb > z->o->budget) {
    settle(z, &z->r->pruned_budget, shapes_below(z, &rest));
    return 0;
  }
  return heap_push(z, &rest);
}

/* ------------------------------------------------------------------------ */
/* Simulation                                                                */
/* ------------------------------------------------------------------------ */

/* The whole job's JCT from a sample's: pipeline fill and drain (one
 * partition's critical path) happen once; the rest grows with the rows. */
static double scale_jct(const sl_cap_opts *o, const sl_cap_shape *s, double jct)
{
  if (!o->sample_plan || o->sample_plan->source_rows <= 0)
    return jct;
  double f = (double)o->sample_plan->source_rows / (double)o->plan->source_rows;
  double cp = s->critical_path_s < jct ? s->critical_path_s : jct;
  return (jct - cp) / f + cp;
}

static int simulate(const sl_cap_opts *o, sl_cap_shape *s, int m, char *err, size_t errlen)
{
  sl_cluster c;
  int rc = shape_cluster(o, s->counts, &c);
  if (rc)
    return rc;
  sl_sim_opts so;
  sl_sim_opts_default(&so);
  so.plan = o->sample_plan ? o->sample_plan : o->plan;
  so.cluster = &c;
  so.core = o->models[m];
  so.seed = o->seed;
  so.keep_tasks = false;
  so.sample_interval_s = 1e300; /* no timeline: only the summary is kept */
  sl_sim_result res;
  rc = sl_sim_run(&so, &res);
  sl_cluster_free(&c);
  if (rc) {
    snprintf(err, errlen, "simulation failed: %s", res.err);
    return rc;
  }
  sl_cap_outcome *out = &s->by_model[m];
  out->status = SL_CAP_SIMULATED;
  out->complete = res.summary.complete;
  out->jct_s = scale_jct(o, s, res.summary.jct_s);
  out->throughput_rows_s = out->jct_s > 0 ? (double)o->plan->source_rows / out->jct_s : 0;
  out->pct_of_bound = out->complete && out->jct_s > 0 ? 100 * s->bound_jct_s / out->jct_s : 0;
  /* a sample's pool bill grows with its JCT, as the rest of it does */
  double sim_jct = res.summary.jct_s;
  out->pool_cost_per_run = sim_jct > 0 ? res.summary.pool_cost_usd * out->jct_s / sim_jct : 0;
  out->cost_per_run = s->price_per_hour * out->jct_s / 3600 + out->pool_cost_per_run + storage_cost(o, out->jct_s);
  double objective = simulated_objective(o, s, out);
  out->meets = out->complete && meets_target(o, out->jct_s) && (o->budget <= 0 || objective <= o->budget);
  return 0;
}

static double outcome_objective(const sl_cap_opts *o, const sl_cap_shape *s, int m)
{
  return simulated_objective(o, s, &s->by_model[m]);
}

/* Keeps the @p top smallest objectives found, ascending: best[top - 1] is
 * the bar a shape must beat once @p top shapes meet the target. */
static void record_found(double *best, int top, int *nfound, double v)
{
  int i;
  if (*nfound < top)
    i = (*nfound)++;
  else if (v < best[top - 1])
    i = top - 1;
  else
    return;
  best[i] = v;
  for (; i > 0 && best[i - 1] > best[i]; i--) {
    double t = best[i - 1];
    best[i - 1] = best[i];
    best[i] = t;
  }
}

static int top_of(const sl_cap_opts *o)
{
  return o->top < 64 ? o->top : 64;
}

/* Whether model @p m's answer may still change with a shape of lower
 * bound @p lb: it lacks shapes, or @p lb is below its top-th. */
static bool still_open(const search *z, int m, double lb)
{
  int top = top_of(z->o);
  return z->nfound[m] < top || lb < z->best[m][top - 1];
}

static void report_progress(search *z, const sl_cap_shape *s, int m)
{
  if (!z->o->progress)
    return;
  char name[1024];
  int left = 0;
  for (int k = 0; k < z->o->nmodels; k++)
    left += top_of(z->o) - z->nfound[k];
  sl_cap_shape_name(z->o->types, s, name, sizeof name);
  int most = z->o->max_simulations > 0 ? z->o->max_simulations * z->o->nmodels - z->r->simulations : -1;
  sl_cap_progress p = {.simulations = z->r->simulations, .at_least_left = left, .at_most_left = most,
                       .settled = z->settled,
                       .total = z->r->total_shapes, .elapsed_s = now_s() - z->t0,
                       .per_simulation_s = z->r->simulations ? z->sim_s / z->r->simulations : 0,
                       .shape = name, .model = sl_core_opts_model_name(&z->o->models[m])};
  z->o->progress(z->o->progress_ctx, &p);
}

static int run_simulation(search *z, sl_cap_shape *s, int m)
{
  report_progress(z, s, m);
  double t = now_s();
  int rc = simulate(z->o, s, m, z->err, sizeof z->err);
  z->sim_s += now_s() - t;
  if (rc)
    return rc;
  z->r->simulations++;
  return 0;
}

static sl_cap_shape *new_shape(search *z, const subtree *t)
{
  sl_cap_result *r = z->r;
  if (r->nshapes == z->shapes_cap) {
    int cap = z->shapes_cap ? 2 * z->shapes_cap : 64;
    sl_cap_shape *n = realloc(r->shapes, (size_t)cap * sizeof *n);
    if (!n)
      return NULL;
    r->shapes = n;
    z->shapes_cap = cap;
  }
  sl_cap_shape *s = &r->shapes[r->nshapes++];
  memset(s, 0, sizeof *s);
  memcpy(s->counts, t->counts, sizeof s->counts);
  for (int g = 0; g < z->o->types->ngroups; g++)
    s->nodes += t->counts[g];
  s->price_per_hour = price_of(z->o, t->counts);
  s->bound_jct_s = t->bound_jct_s;
  s->critical_path_s = t->critical_path_s;
  s->bound_throughput_rows_s = (double)z->o->plan->source_rows / t->bound_jct_s;
  s->objective_bound = t->lb;
  set_all_models(z->o, s, SL_CAP_DOMINATED); /* until it is simulated */
  return s;
}

/* A whole shape reached in order: simulated under every model whose answer
 * it may still enter. */
static int visit_shape(search *z, const subtree *t)
{
  sl_cap_shape *s = new_shape(z, t);
  if (!s)
    return SL_ENOMEM;
  add_count(&z->settled, 1);
  for (int m = 0; m < z->o->nmodels; m++) {
    if (!still_open(z, m, t->lb))
      continue;
    int rc = run_simulation(z, s, m);
    if (rc)
      return rc;
    if (s->by_model[m].meets)
      record_found(z->best[m], top_of(z->o), &z->nfound[m], outcome_objective(z->o, s, m));
  }
  return 0;
}

static bool any_open(const search *z, double lb)
{
  for (int m = 0; m < z->o->nmodels; m++)
    if (still_open(z, m, lb))
      return true;
  return false;
}

/* Whether max_simulations stops the search before it simulates @p t. */
static bool out_of_simulations(const search *z, const subtree *t)
{
  return !t->range && t->depth == z->ntypes && z->o->max_simulations > 0 &&
         z->r->simulations >= z->o->max_simulations * z->o->nmodels;
}

/* Best first until no model's answer can change; what is left is
 * dominated, or unsearched when the simulations ran out first. */
static int branch_and_bound(search *z)
{
  subtree root = {.depth = 0};
  for (int g = 0; g < z->o->types->ngroups; g++)
    root.counts[g] = z->o->types->groups[g].max_count;
  int rc = consider(z, &root);
  while (rc == 0 && z->nheap > 0 && any_open(z, z->heap[0].lb)) {
    if (out_of_simulations(z, &z->heap[0])) {
      z->r->stopped = true;
      break;
    }
    subtree t = heap_pop(z);
    rc = t.range ? split_range(z, &t) : t.depth == z->ntypes ? visit_shape(z, &t) : expand(z, &t);
  }
  for (size_t i = 0; rc == 0 && i < z->nheap; i++) {
    int64_t n = shapes_below(z, &z->heap[i]);
    if (z->r->stopped && any_open(z, z->heap[i].lb))
      add_count(&z->r->unsearched, n);
    else
      add_count(&z->r->pruned_dominated, n);
  }
  return rc;
}

/* Dearest type first: its counts split the space where the price moves most. */
static void branching_order(search *z)
{
  const sl_cluster *types = z->o->types;
  z->ntypes = types->ngroups;
  for (int g = 0; g < z->ntypes; g++)
    z->branch[g] = g;
  for (int i = 1; i < z->ntypes; i++)
    for (int j = i; j > 0 && types->groups[z->branch[j]].price_per_hour > types->groups[z->branch[j - 1]].price_per_hour;
         j--) {
      int t = z->branch[j];
      z->branch[j] = z->branch[j - 1];
      z->branch[j - 1] = t;
    }
}

/* ------------------------------------------------------------------------ */
/* The answer                                                                */
/* ------------------------------------------------------------------------ */

/* Cheapest lower bound first; then cheaper per hour; then fewer of the
 * first types (so the order never depends on qsort). */
static int cmp_objective(const void *a, const void *b, void *ctx)
{
  const sl_cap_result *r = ctx;
  const sl_cap_shape *x = &r->shapes[*(const int *)a], *y = &r->shapes[*(const int *)b];
  if (x->objective_bound != y->objective_bound)
    return x->objective_bound < y->objective_bound ? -1 : 1;
  if (x->price_per_hour != y->price_per_hour)
    return x->price_per_hour < y->price_per_hour ? -1 : 1;
  for (int g = 0; g < SL_MAX_GROUPS; g++)
    if (x->counts[g] != y->counts[g])
      return x->counts[g] < y->counts[g] ? -1 : 1;
  return 0;
}

/* The shapes meeting the target under model m, cheapest first (by the
 * simulated objective, then by the order of r->order). */
static void rank_answers(const sl_cap_opts *o, sl_cap_result *r, int m)
{
  int top = top_of(o);
  r->ntop[m] = 0;
  for (int k = 0; k < r->nshapes; k++) {
    const sl_cap_shape *s = &r->shapes[r->order[k]];
    if (!s->by_model[m].meets)
      continue;
    double v = outcome_objective(o, s, m);
    int i = r->ntop[m] < top ? r->ntop[m]++ : top;
    if (i == top && v >= outcome_objective(o, &r->shapes[r->top[m][top - 1]], m))
      continue;
    if (i == top)
      i = top - 1;
    for (; i > 0 && outcome_objective(o, &r->shapes[r->top[m][i - 1]], m) > v; i--)
      r->top[m][i] = r->top[m][i - 1];
    r->top[m][i] = r->order[k];
  }
}

/* Each model's answer is simulated under every other model as well. */
static int cross_simulate(search *z)
{
  const sl_cap_opts *o = z->o;
  sl_cap_result *r = z->r;
  for (int a = 0; a < o->nmodels; a++)
    for (int i = 0; i < r->ntop[a]; i++) {
      sl_cap_shape *s = &r->shapes[r->top[a][i]];
      for (int m = 0; m < o->nmodels; m++) {
        if (s->by_model[m].status != SL_CAP_DOMINATED)
          continue;
        int rc = run_simulation(z, s, m);
        if (rc)
          return rc;
      }
    }
  return 0;
}

/* Pareto front per model over the simulated, complete shapes: nothing else
 * is both cheaper per run and faster. */
static void mark_pareto(const sl_cap_opts *o, sl_cap_result *r)
{
  for (int m = 0; m < o->nmodels; m++)
    for (int i = 0; i < r->nshapes; i++) {
      sl_cap_outcome *a = &r->shapes[i].by_model[m];
      if (a->status != SL_CAP_SIMULATED || !a->complete)
        continue;
      a->pareto = true;
      for (int j = 0; j < r->nshapes && a->pareto; j++) {
        const sl_cap_outcome *b = &r->shapes[j].by_model[m];
        if (j == i || b->status != SL_CAP_SIMULATED || !b->complete)
          continue;
        bool no_worse = b->cost_per_run <= a->cost_per_run && b->jct_s <= a->jct_s;
        bool better = b->cost_per_run < a->cost_per_run || b->jct_s < a->jct_s;
        if (no_worse && better)
          a->pareto = false;
      }
    }
}

/* The shapes reached one by one: simulated under some model, or dominated.
 * And the fastest complete simulation, for a target no shape met. */
static void count_reached(const sl_cap_opts *o, sl_cap_result *r)
{
  r->best_simulated = -1;
  for (int i = 0; i < r->nshapes; i++) {
    const sl_cap_shape *s = &r->shapes[i];
    bool simulated = false;
    for (int m = 0; m < o->nmodels; m++) {
      const sl_cap_outcome *out = &s->by_model[m];
      simulated |= out->status == SL_CAP_SIMULATED;
      if (out->status == SL_CAP_SIMULATED && out->complete &&
          (r->best_simulated < 0 ||
           out->throughput_rows_s > r->shapes[r->best_simulated].by_model[r->best_simulated_model].throughput_rows_s)) {
        r->best_simulated = i;
        r->best_simulated_model = m;
      }
    }
    if (simulated)
      add_count(&r->simulated_shapes, 1);
    else
      add_count(&r->pruned_dominated, 1);
  }
}

/* What every type at its max could do: no shape does better. */
static void best_bound(search *z)
{
  sl_cap_result *r = z->r;
  for (int g = 0; g < z->o->types->ngroups; g++)
    r->best_bound_counts[g] = z->o->types->groups[g].max_count;
  sl_bound b;
  if (bound_counts(z->o, r, r->best_bound_counts, &b, NULL, 0))
    r->best_bound_rows_s = b.throughput_rows_s;
}

static int check_opts(const sl_cap_opts *o, char *err, size_t errlen)
{
  if (!o->plan || !o->types || o->types->ngroups == 0) {
    snprintf(err, errlen, "no workload or no node types");
    return SL_EINVAL;
  }
  if (o->deadline_s <= 0 && o->target_rows_s <= 0) {
    snprintf(err, errlen, "no target: give a deadline or a throughput");
    return SL_EINVAL;
  }
  if (o->nmodels < 1 || o->nmodels > SL_CAP_MAX_MODELS || o->top < 1) {
    snprintf(err, errlen, "between 1 and %d models, and at least one shape to find", SL_CAP_MAX_MODELS);
    return SL_EINVAL;
  }
  return 0;
}

int sl_cap_search(const sl_cap_opts *o, sl_cap_result *r, char *err, size_t errlen)
{
  memset(r, 0, sizeof *r);
  err[0] = '\0';
  int rc = check_opts(o, err, errlen);
  if (rc)
    return rc;
  search *z = calloc(1, sizeof *z);
  if (!z)
    return SL_ENOMEM;
  z->o = o;
  z->r = r;
  z->t0 = now_s();
  branching_order(z);
  r->total_shapes = total_shapes(z);
  rc = branch_and_bound(z);
  if (!rc && r->nshapes > 0 && !(r->order = malloc((size_t)r->nshapes * sizeof *r->order)))
    rc = SL_ENOMEM;
  for (int i = 0; !rc && i < r->nshapes; i++)
    r->order[i] = i;
  if (!rc && r->nshapes > 0)
    qsort_r(r->order, (size_t)r->nshapes, sizeof *r->order, cmp_objective, r);
  for (int m = 0; !rc && m < o->nmodels; m++)
    rank_answers(o, r, m);
  if (!rc)
    rc = cross_simulate(z);
  if (!rc) {
    mark_pareto(o, r);
    count_reached(o, r);
    best_bound(z);
  }
  if (rc) {
    snprintf(err, errlen, "%s", z->err[0] ? z->err : sl_strerror(rc));
    sl_cap_result_free(r);
  }
  double t0 = z->t0;
  free(z->heap);
  free(z);
  if (!rc)
    r->wall_s = now_s() - t0;
  return rc;
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */
/* ------------------------------------------------------------------------ */

static void put_field(FILE *f, const char *s, bool first)
{
  if (!first)
    fputc(',', f);
  csv_fwrite(f, s, strlen(s));
}

static void put_num(FILE *f, double v)
{
  if (isfinite(v))
    fprintf(f, ",%.10g", v);
  else
    fputs(",", f);
}

static const char *reason_of(const sl_cap_opts *o, const sl_cap_shape *s, int m, char *buf, size_t n)
{
  const sl_cap_outcome *out = &s->by_model[m];
  switch (out->status) {
  case SL_CAP_INFEASIBLE: return "some operator fits on no node";
  case SL_CAP_BOUND_MISSES: return "the bound already misses the target";
  case SL_CAP_OVER_BUDGET: return "the cheapest conceivable run is over the budget";
  case SL_CAP_DOMINATED: return "its cost bound is above the cheapest shapes found";
  case SL_CAP_SIMULATED: break;
  }
  if (!out->complete)
    return "the simulated job did not complete";
  if (!meets_target(o, out->jct_s))
    return "misses the target";
  if (!out->meets)
    return "over the budget";
  snprintf(buf, n, "meets the target");
  return buf;
}

int sl_cap_write_csv(const sl_cap_opts *o, const sl_cap_result *r, FILE *f)
{
  const char *head[] = {"shape", "nodes", "price_per_hour", "bound_jct_s", "bound_throughput_rows_s",
                        "model", "status", "reason", "jct_s", "throughput_rows_s", "pct_of_bound",
                        "cost_per_run", "pool_cost_per_run", "meets_target", "pareto"};
  for (unsigned i = 0; i < sizeof head / sizeof *head; i++)
    put_field(f, head[i], i == 0);
  for (int g = 0; g < o->types->ngroups; g++)
    put_field(f, o->types->groups[g].name, false);
  fputc('\n', f);
  char name[1024], reason[64];
  for (int k = 0; k < r->nshapes; k++) {
    const sl_cap_shape *s = &r->shapes[r->order[k]];
    sl_cap_shape_name(o->types, s, name, sizeof name);
    for (int m = 0; m < o->nmodels; m++) {
      const sl_cap_outcome *out = &s->by_model[m];
      put_field(f, name, true);
      fprintf(f, ",%d", s->nodes);
      put_num(f, s->price_per_hour);
      put_num(f, s->bound_jct_s);
      put_num(f, s->bound_throughput_rows_s);
      put_field(f, sl_core_opts_model_name(&o->models[m]), false);
      put_field(f, sl_cap_status_name(out->status), false);
      put_field(f, reason_of(o, s, m, reason, sizeof reason), false);
      bool sim = out->status == SL_CAP_SIMULATED;
      put_num(f, sim ? out->jct_s : NAN);
      put_num(f, sim ? out->throughput_rows_s : NAN);
      put_num(f, sim ? out->pct_of_bound : NAN);
      put_num(f, sim ? out->cost_per_run : NAN);
      put_num(f, sim ? out->pool_cost_per_run : NAN);
      fprintf(f, ",%d,%d", out->meets, out->pareto);
      for (int g = 0; g < o->types->ngroups; g++)
        fprintf(f, ",%d", s->counts[g]);
      fputc('\n', f);
    }
  }
  return ferror(f) ? SL_EIO : 0;
}

typedef struct {
  const sl_cap_result *r;
  int model;
} front_ctx;

static int cmp_jct(const void *a, const void *b, void *ctx)
{
  const front_ctx *f = ctx;
  double x = f->r->shapes[*(const int *)a].by_model[f->model].jct_s;
  double y = f->r->shapes[*(const int *)b].by_model[f->model].jct_s;
  return (x > y) - (x < y);
}

int sl_cap_write_front(const sl_cap_opts *o, const sl_cap_result *r, FILE *f)
{
  int *idx = malloc((size_t)(r->nshapes ? r->nshapes : 1) * sizeof *idx);
  if (!idx)
    return SL_ENOMEM;
  char name[1024];
  fprintf(f, "# jct_s,cost_per_run,shape\n");
  for (int m = 0; m < o->nmodels; m++) {
    int n = 0;
    for (int i = 0; i < r->nshapes; i++)
      if (r->shapes[i].by_model[m].pareto)
        idx[n++] = i;
    front_ctx by = {r, m};
    qsort_r(idx, (size_t)n, sizeof *idx, cmp_jct, &by);
    if (m)
      fputs("\n\n", f);
    for (int i = 0; i < n; i++) {
      const sl_cap_shape *s = &r->shapes[idx[i]];
      sl_cap_shape_name(o->types, s, name, sizeof name);
      fprintf(f, "%.10g,%.10g,", s->by_model[m].jct_s, s->by_model[m].cost_per_run);
      csv_fwrite(f, name, strlen(name));
      fputc('\n', f);
    }
    if (!n) /* an empty block would merge with the next one */
      fputs("NaN,NaN,\n", f);
  }
  free(idx);
  return ferror(f) ? SL_EIO : 0;
}
