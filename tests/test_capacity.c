/* Capacity search (capacity/search.h): the branch and bound finds exactly
 * what simulating every shape finds, never prunes a shape that could have
 * been in the answer, and searches a huge space without listing it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capacity/search.h"
#include "models/error.h"
#include "sim/engine.h"

/* A CPU stage feeding a GPU stage: which mix of node types is cheapest
 * depends on both, as in the video pipeline. */
static void make_workload(sl_workload *w)
{
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "cap");
  w->target_partition_bytes = 1e6;
  w->seed = 3;
  w->nops = 2;
  sl_op_spec *src = &w->ops[0], *gpu = &w->ops[1];
  snprintf(src->name, sizeof src->name, "decode");
  src->kind = SL_OP_SOURCE;
  src->cpu = 1;
  src->tasks = 120;
  src->rows_per_task = 2;
  src->out_row_bytes = 5e5;
  src->time_per_task = 0.4;
  src->rows_out_per_row = 1;
  snprintf(gpu->name, sizeof gpu->name, "infer");
  gpu->kind = SL_OP_MAP_BATCHES;
  gpu->gpu = 1;
  gpu->batch_size = 2;
  gpu->time_per_row = 0.05;
  gpu->out_row_bytes = 100;
  gpu->rows_out_per_row = 1;
}

static void add_type(sl_cluster *c, const char *name, double cpu, double gpu, double price, int max)
{
  sl_node_group *g = &c->groups[c->ngroups++];
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->count = 1;
  g->cpu = cpu;
  g->gpu = gpu;
  g->cpu_speed = g->gpu_speed = 1;
  g->memory_bytes = 8e9;
  g->store_bytes = 2e9;
  g->nic_bps = 10e9 / 8;
  g->price_per_hour = price;
  g->max_count = max;
}

static void make_types(sl_cluster *c)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "types");
  c->backbone_bps = 100e9 / 8;
  c->latency_s = 50e-6;
  add_type(c, "cpu4", 4, 0, 0.4, 3);
  add_type(c, "gpu1", 2, 1, 1.0, 3);
  add_type(c, "gpu2", 8, 2, 2.6, 2);
}

typedef struct {
  sl_workload w;
  sl_plan plan;
  sl_cluster types;
} fixture;

static int setup(void **state)
{
  fixture *f = calloc(1, sizeof *f);
  make_workload(&f->w);
  sl_plan_opts po = {0};
  char err[256];
  if (sl_plan_build(&f->plan, &f->w, &po, err, sizeof err) != 0)
    return -1;
  make_types(&f->types);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  free(*state);
  return 0;
}

static void opts_for(const fixture *f, sl_cap_opts *o)
{
  sl_cap_opts_default(o);
  o->plan = &f->plan;
  o->types = &f->types;
  o->seed = f->w.seed;
  o->top = 3;
  o->max_simulations = 0; /* exactness is what is checked */
}

/* JCT of one shape, simulated directly (not through the search). */
static double simulate_shape(const fixture *f, const sl_cap_opts *o, const int *counts, int m, bool *complete)
{
  sl_cluster c;
  memset(&c, 0, sizeof c);
  c = f->types;
  c.ngroups = 0;
  for (int g = 0; g < f->types.ngroups; g++)
    if (counts[g]) {
      c.groups[c.ngroups] = f->types.groups[g];
      c.groups[c.ngroups++].count = counts[g];
    }
  c.nodes = NULL;
  assert_int_equal(sl_cluster_expand(&c), 0);
  sl_sim_opts so;
  sl_sim_opts_default(&so);
  so.plan = &f->plan;
  so.cluster = &c;
  so.core = o->models[m];
  so.seed = o->seed;
  so.keep_tasks = false;
  so.sample_interval_s = 1e300;
  sl_sim_result r;
  assert_int_equal(sl_sim_run(&so, &r), 0);
  sl_cluster_free(&c);
  *complete = r.summary.complete;
  return r.summary.jct_s;
}

static double objective(const sl_cap_opts *o, double price, double jct)
{
  return o->rank == SL_CAP_RANK_HOUR ? price : price * jct / 3600;
}

static bool meets(const sl_cap_opts *o, const fixture *f, double jct, double price)
{
  if (o->deadline_s > 0 && jct > o->deadline_s)
    return false;
  if (o->target_rows_s > 0 && (double)f->plan.source_rows / jct < o->target_rows_s)
    return false;
  return o->budget <= 0 || objective(o, price, jct) <= o->budget;
}

/* The shape of @p counts among those the search reached one by one, or NULL. */
static const sl_cap_shape *reached(const sl_cap_result *r, const int *counts)
{
  for (int i = 0; i < r->nshapes; i++)
    if (memcmp(r->shapes[i].counts, counts, sizeof r->shapes[i].counts) == 0)
      return &r->shapes[i];
  return NULL;
}

/* Odometer over every count of every type, from every min to every max. */
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

/* Simulates every shape of the space (the search lists only those it
 * reached), then checks the search's answer, its counts and every shape it
 * reached against that ground truth. */
static void check_against_brute_force(const fixture *f, const sl_cap_opts *o)
{
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(o, &r, err, sizeof err), 0);
  assert_int_equal(r.total_shapes, 4 * 4 * 3 - 1);
  assert_false(r.stopped);
  assert_int_equal(r.simulated_shapes + r.pruned_bound + r.pruned_budget + r.pruned_infeasible + r.pruned_dominated,
                   r.total_shapes);
  assert_true(r.nshapes < r.total_shapes); /* the search never lists them all */
  assert_true(r.pruned_bound + r.pruned_budget + r.pruned_dominated > 0); /* the bound saves work */
  for (int m = 0; m < o->nmodels; m++) {
    double truth[64];
    int ntruth = 0, counts[SL_MAX_GROUPS] = {0};
    do {
      int nodes = 0;
      for (int g = 0; g < f->types.ngroups; g++)
        nodes += counts[g];
      if (nodes == 0)
        continue;
      bool complete;
      double price = 0;
      for (int g = 0; g < f->types.ngroups; g++)
        price += counts[g] * f->types.groups[g].price_per_hour;
      bool has_gpu = counts[1] + counts[2] > 0;
      if (!has_gpu)
        continue; /* infeasible: infer needs a GPU */
      double jct = simulate_shape(f, o, counts, m, &complete);
      bool ok = complete && meets(o, f, jct, price);
      const sl_cap_shape *s = reached(&r, counts);
      if (s) {
        /* The bound is a bound: no simulation beats it. */
        assert_true(jct >= s->bound_jct_s * (1 - 1e-9));
        if (s->by_model[m].status == SL_CAP_SIMULATED) {
          assert_true(fabs(s->by_model[m].jct_s - jct) <= 1e-9 * jct); /* deterministic */
          assert_int_equal(s->by_model[m].meets, ok);
        } else if (s->by_model[m].status == SL_CAP_BOUND_MISSES || s->by_model[m].status == SL_CAP_OVER_BUDGET) {
          assert_false(ok);
        }
      }
      if (ok)
        truth[ntruth++] = objective(o, price, jct);
    } while (next_counts(&f->types, counts));
    /* The cheapest `top` of the ground truth, in order, are the answer. */
    for (int i = 0; i < ntruth; i++)
      for (int j = i + 1; j < ntruth; j++)
        if (truth[j] < truth[i]) {
          double t = truth[i];
          truth[i] = truth[j];
          truth[j] = t;
        }
    int want = ntruth < o->top ? ntruth : o->top;
    assert_int_equal(r.ntop[m], want);
    for (int i = 0; i < want; i++) {
      const sl_cap_shape *s = &r.shapes[r.top[m][i]];
      double got = objective(o, s->price_per_hour, s->by_model[m].jct_s);
      assert_true(fabs(got - truth[i]) <= 1e-9 * truth[i]);
    }
  }
  sl_cap_result_free(&r);
}

static void deadline_per_run_matches_brute_force(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.deadline_s = 20;
  check_against_brute_force(f, &o);
}

static void throughput_per_hour_matches_brute_force(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.target_rows_s = 20;
  o.rank = SL_CAP_RANK_HOUR;
  check_against_brute_force(f, &o);
}

static void budget_prunes_and_still_matches(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.deadline_s = 30;
  o.budget = 0.0046; /* dollars per run: 1 x gpu1 alone (at least $0.0067) is over it */
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), 0);
  assert_true(r.pruned_budget > 0);
  sl_cap_result_free(&r);
  check_against_brute_force(f, &o);
}

static void models_compare_on_the_same_shapes(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.deadline_s = 8;
  o.nmodels = 2;
  sl_core_opts_default(&o.models[1]);
  assert_int_equal(sl_core_opts_set_model(&o.models[1], "batch"), 0);
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), 0);
  for (int a = 0; a < 2; a++)
    for (int i = 0; i < r.ntop[a]; i++)
      for (int m = 0; m < 2; m++)
        assert_int_equal(r.shapes[r.top[a][i]].by_model[m].status, SL_CAP_SIMULATED);
  sl_cap_result_free(&r);
  check_against_brute_force(f, &o);
}

static void unreachable_target_finds_nothing_without_simulating(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.deadline_s = 0.5; /* below the critical path of one partition */
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), 0);
  assert_int_equal(r.ntop[0], 0);
  assert_int_equal(r.simulations, 0);
  assert_int_equal(r.pruned_bound + r.pruned_infeasible, r.total_shapes);
  /* how near any shape comes: every type at its max, by the bound */
  assert_int_equal(r.best_bound_counts[0], 3);
  assert_int_equal(r.best_bound_counts[2], 2);
  assert_true(r.best_bound_rows_s > 0);
  assert_int_equal(r.best_simulated, -1);
  sl_cap_result_free(&r);
}

/* Shapes of CPU nodes alone cannot run a GPU operator: counted, and the
 * reason names the operator. */
static void infeasible_shapes_say_why(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.deadline_s = 20;
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), 0);
  assert_int_equal(r.pruned_infeasible, 3); /* 1 to 3 x cpu4 */
  assert_int_equal(r.nreasons, 1);
  assert_int_equal(r.reason_shapes[0], 3);
  assert_non_null(strstr(r.reasons[0], "operator 'infer' needs 1 GPU"));
  assert_non_null(strstr(r.reasons[0], "no type in the shape has a GPU"));
  sl_cap_result_free(&r);
}

/* A space of a million shapes is searched without listing them, and finds
 * what the small one finds when the cheap shapes are the same. */
static void a_huge_space_is_searched_without_listing_it(void **state)
{
  const fixture *f = *state;
  sl_cluster big = f->types;
  for (int g = 0; g < big.ngroups; g++)
    big.groups[g].max_count = 100;
  sl_cap_opts o, small;
  opts_for(f, &o);
  o.types = &big;
  o.target_rows_s = 20;
  o.rank = SL_CAP_RANK_HOUR;
  opts_for(f, &small);
  small.target_rows_s = 20;
  small.rank = SL_CAP_RANK_HOUR;
  sl_cap_result r, s;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), 0);
  assert_int_equal(r.total_shapes, 101 * 101 * 101 - 1);
  assert_true(r.nshapes < 1000);
  assert_true(r.bounds < 5000);
  assert_int_equal(r.simulated_shapes + r.pruned_bound + r.pruned_budget + r.pruned_infeasible + r.pruned_dominated,
                   r.total_shapes);
  assert_int_equal(sl_cap_search(&small, &s, err, sizeof err), 0);
  assert_true(r.ntop[0] > 0 && r.ntop[0] == s.ntop[0]);
  for (int i = 0; i < r.ntop[0]; i++)
    assert_memory_equal(r.shapes[r.top[0][i]].counts, s.shapes[s.top[0][i]].counts, sizeof s.shapes[0].counts);
  sl_cap_result_free(&r);
  sl_cap_result_free(&s);
}

/* --max-simulations stops a search that only simulations could settle,
 * and says so: what is left is unsearched, not dominated. */
static void max_simulations_stops_and_says_so(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  o.deadline_s = 20;
  o.max_simulations = 2;
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), 0);
  assert_true(r.stopped);
  assert_int_equal(r.simulations, 2);
  assert_true(r.unsearched > 0);
  assert_int_equal(r.simulated_shapes + r.pruned_bound + r.pruned_budget + r.pruned_infeasible + r.pruned_dominated +
                     r.unsearched,
                   r.total_shapes);
  sl_cap_result_free(&r);
}

static void refuses_bad_options(void **state)
{
  const fixture *f = *state;
  sl_cap_opts o;
  opts_for(f, &o);
  sl_cap_result r;
  char err[256];
  assert_int_equal(sl_cap_search(&o, &r, err, sizeof err), SL_EINVAL); /* no target */
  assert_non_null(strstr(err, "target"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(deadline_per_run_matches_brute_force),
    cmocka_unit_test(throughput_per_hour_matches_brute_force),
    cmocka_unit_test(budget_prunes_and_still_matches),
    cmocka_unit_test(models_compare_on_the_same_shapes),
    cmocka_unit_test(unreachable_target_finds_nothing_without_simulating),
    cmocka_unit_test(infeasible_shapes_say_why),
    cmocka_unit_test(a_huge_space_is_searched_without_listing_it),
    cmocka_unit_test(max_simulations_stops_and_says_so),
    cmocka_unit_test(refuses_bad_options),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
