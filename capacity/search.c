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
    int k = snprintf(buf + len, len < n ? n - len : 0, "%s%d x %s", len ? " + " : "",
                     s->counts[g], types->groups[g].name);
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
/* Enumeration and bounds                                                    */
/* ------------------------------------------------------------------------ */

static int64_t count_shapes(const sl_cluster *types)
{
  int64_t n = 1;
  for (int g = 0; g < types->ngroups; g++) {
    n *= (int64_t)(types->groups[g].max_count - types->groups[g].min_count + 1);
    if (n > SL_CAP_MAX_SHAPES * 4LL)
      return n;
  }
  return n;
}

/* Odometer over the counts, from every min to every max. */
static bool next_counts(const sl_cluster *types, int *counts)
{
  for (int g = 0; g < types->ngroups; g++) {
    if (counts[g] < types->groups[g].max_count) {
      counts[g]++;
      return true;
    }
    counts[g] = types->groups[g].min_count;
  }
  return false;
}

/* The cluster of one shape: the node types with their counts, empty types
 * left out (a group of 0 nodes means nothing to the engines). */
static int shape_cluster(const sl_cap_opts *o, const int *counts, sl_cluster *c)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", o->types->name);
  c->backbone_bps = o->types->backbone_bps;
  c->latency_s = o->types->latency_s;
  c->storage_bps = o->types->storage_bps;
  c->storage_latency_s = o->types->storage_latency_s;
  for (int g = 0; g < o->types->ngroups; g++) {
    if (!counts[g])
      continue;
    sl_node_group *dst = &c->groups[c->ngroups++];
    *dst = o->types->groups[g];
    dst->count = counts[g];
    if (o->memory_bytes > 0)
      dst->store_bytes = o->memory_bytes;
  }
  return sl_cluster_expand(c);
}

static double objective_of(const sl_cap_opts *o, double price_per_hour, double jct_s)
{
  return o->rank == SL_CAP_RANK_HOUR ? price_per_hour : price_per_hour * jct_s / 3600;
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

/* Prices a shape and bounds it; prunes it when the bound alone settles it. */
static void bound_shape(const sl_cap_opts *o, const int *counts, sl_cap_shape *s)
{
  memset(s, 0, sizeof *s);
  memcpy(s->counts, counts, sizeof s->counts);
  for (int g = 0; g < o->types->ngroups; g++) {
    s->nodes += counts[g];
    s->price_per_hour += counts[g] * o->types->groups[g].price_per_hour;
  }
  s->bound_jct_s = INFINITY;
  sl_cluster c;
  sl_bound b;
  if (shape_cluster(o, counts, &c) != 0 || sl_bound_compute(o->plan, &c, &b) != 0) {
    sl_cluster_free(&c);
    s->objective_bound = INFINITY;
    set_all_models(o, s, SL_CAP_INFEASIBLE);
    return;
  }
  sl_cluster_free(&c);
  s->bound_jct_s = b.jct_s;
  s->critical_path_s = b.critical_path_s;
  s->bound_throughput_rows_s = (double)o->plan->source_rows / b.jct_s;
  s->objective_bound = objective_of(o, s->price_per_hour, b.jct_s);
  if (!meets_target(o, b.jct_s))
    set_all_models(o, s, SL_CAP_BOUND_MISSES);
  else if (o->budget > 0 && s->objective_bound > o->budget)
    set_all_models(o, s, SL_CAP_OVER_BUDGET);
  else
    set_all_models(o, s, SL_CAP_DOMINATED); /* until it is simulated */
}

static int enumerate(const sl_cap_opts *o, sl_cap_result *r, char *err, size_t errlen)
{
  int64_t total = count_shapes(o->types);
  if (total - 1 > SL_CAP_MAX_SHAPES) {
    snprintf(err, errlen, "%s: %lld shapes to search, at most %d: narrow the search (fewer types, lower maxima: --only, --max)",
             o->types->path[0] ? o->types->path : o->types->name, (long long)(total - 1),
             SL_CAP_MAX_SHAPES);
    return SL_EINVAL;
  }
  r->shapes = calloc((size_t)total, sizeof *r->shapes);
  r->order = calloc((size_t)total, sizeof *r->order);
  if (!r->shapes || !r->order)
    return SL_ENOMEM;
  int counts[SL_MAX_GROUPS] = {0};
  for (int g = 0; g < o->types->ngroups; g++)
    counts[g] = o->types->groups[g].min_count;
  do {
    int nodes = 0;
    for (int g = 0; g < o->types->ngroups; g++)
      nodes += counts[g];
    if (nodes > 0)
      bound_shape(o, counts, &r->shapes[r->nshapes++]);
  } while (next_counts(o->types, counts));
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The search                                                                */
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

static bool candidate(const sl_cap_shape *s, int m)
{
  sl_cap_status st = s->by_model[m].status;
  return st == SL_CAP_DOMINATED || st == SL_CAP_SIMULATED;
}

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
  out->cost_per_run = s->price_per_hour * out->jct_s / 3600;
  double objective = objective_of(o, s->price_per_hour, out->jct_s);
  out->meets = out->complete && meets_target(o, out->jct_s) && (o->budget <= 0 || objective <= o->budget);
  return 0;
}

static double outcome_objective(const sl_cap_opts *o, const sl_cap_shape *s, int m)
{
  return objective_of(o, s->price_per_hour, s->by_model[m].jct_s);
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

static int search_model(const sl_cap_opts *o, sl_cap_result *r, int m, char *err, size_t errlen)
{
  double best[64];
  int top = o->top < 64 ? o->top : 64, nfound = 0;
  for (int k = 0; k < r->nshapes; k++) {
    sl_cap_shape *s = &r->shapes[r->order[k]];
    if (!candidate(s, m))
      continue;
    if (nfound == top && s->objective_bound >= best[top - 1])
      break; /* this and every later shape: dominated */
    if (s->by_model[m].status != SL_CAP_SIMULATED) {
      int rc = simulate(o, s, m, err, errlen);
      if (rc)
        return rc;
      r->simulations++;
      if (o->progress)
        o->progress(o->progress_ctx, r->simulations, r->simulations + top - nfound);
    }
    if (s->by_model[m].meets)
      record_found(best, top, &nfound, outcome_objective(o, s, m));
  }
  return 0;
}

/* The shapes meeting the target under model m, cheapest first (by the
 * simulated objective, then by the enumeration order of r->order). */
static void rank_answers(const sl_cap_opts *o, sl_cap_result *r, int m)
{
  int top = o->top < 64 ? o->top : 64;
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
static int cross_simulate(const sl_cap_opts *o, sl_cap_result *r, char *err, size_t errlen)
{
  for (int a = 0; a < o->nmodels; a++)
    for (int i = 0; i < r->ntop[a]; i++) {
      sl_cap_shape *s = &r->shapes[r->top[a][i]];
      for (int m = 0; m < o->nmodels; m++) {
        if (s->by_model[m].status != SL_CAP_DOMINATED)
          continue;
        int rc = simulate(o, s, m, err, errlen);
        if (rc)
          return rc;
        r->simulations++;
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

static void count_statuses(const sl_cap_opts *o, sl_cap_result *r)
{
  for (int i = 0; i < r->nshapes; i++) {
    const sl_cap_shape *s = &r->shapes[i];
    bool simulated = false;
    for (int m = 0; m < o->nmodels; m++)
      simulated |= s->by_model[m].status == SL_CAP_SIMULATED;
    if (simulated) {
      r->simulated_shapes++;
      continue;
    }
    switch (s->by_model[0].status) {
    case SL_CAP_INFEASIBLE: r->pruned_infeasible++; break;
    case SL_CAP_BOUND_MISSES: r->pruned_bound++; break;
    case SL_CAP_OVER_BUDGET: r->pruned_budget++; break;
    default: r->pruned_dominated++; break;
    }
  }
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
  double t0 = now_s();
  rc = enumerate(o, r, err, errlen);
  for (int i = 0; !rc && i < r->nshapes; i++)
    r->order[i] = i;
  if (!rc) {
    qsort_r(r->order, (size_t)r->nshapes, sizeof *r->order, cmp_objective, r);
  }
  for (int m = 0; !rc && m < o->nmodels; m++)
    rc = search_model(o, r, m, err, errlen);
  for (int m = 0; !rc && m < o->nmodels; m++)
    rank_answers(o, r, m);
  if (!rc)
    rc = cross_simulate(o, r, err, errlen);
  if (rc) {
    if (rc == SL_ENOMEM && !err[0])
      snprintf(err, errlen, "%s", sl_strerror(rc));
    sl_cap_result_free(r);
    return rc;
  }
  mark_pareto(o, r);
  count_statuses(o, r);
  r->wall_s = now_s() - t0;
  return 0;
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
                        "cost_per_run", "meets_target", "pareto"};
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
