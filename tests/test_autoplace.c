/* The elastic pool and the autoplacement policies (models/autoplace.c),
 * through the core alone (tests/harness.h plays the engine: an ACQUIRE
 * joins its node after the decision's delay). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "models/core.h"
#include "models/plan.h"

#define MB 1e6
#define SOURCE_TASKS 200
#define ROWS_PER_TASK 4

enum { HOST, POOL };

/* A training job in small: read (1 CPU, 0.2 s) -> preprocess (1 CPU, 0.3 s
 * a row) -> train (a GPU, 0.02 s a row). The GPU takes 16 s of work; the
 * CPUs 280 s: one host of 4 CPUs alone feeds it at a fifth of its rate. */
static void training(sl_workload *w)
{
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "train-small");
  w->target_partition_bytes = 1 * MB;
  w->seed = 1;
  sl_op_spec *o = &w->ops[w->nops++];
  *o = (sl_op_spec){.kind = SL_OP_SOURCE, .cpu = 1, .tasks = SOURCE_TASKS, .rows_per_task = ROWS_PER_TASK,
                    .out_row_bytes = 0.1 * MB, .time_per_task = 0.2, .rows_out_per_row = 1};
  snprintf(o->name, sizeof o->name, "read");
  snprintf(o->kernel, sizeof o->kernel, "generate");
  o = &w->ops[w->nops++];
  *o = (sl_op_spec){.kind = SL_OP_MAP, .cpu = 1, .out_row_bytes = 0.2 * MB, .time_per_row = 0.3,
                    .rows_out_per_row = 1};
  snprintf(o->name, sizeof o->name, "preprocess");
  snprintf(o->kernel, sizeof o->kernel, "sleep");
  o = &w->ops[w->nops++];
  *o = (sl_op_spec){.kind = SL_OP_MAP_BATCHES, .gpu = 1, .batch_size = 8, .out_row_bytes = 1000,
                    .time_per_row = 0.02, .rows_out_per_row = 1};
  snprintf(o->name, sizeof o->name, "train");
  snprintf(o->kernel, sizeof o->kernel, "sleep");
  o = &w->ops[w->nops++];
  *o = (sl_op_spec){.kind = SL_OP_SINK};
  snprintf(o->name, sizeof o->name, "sink");
}

static void build_tasks(sl_plan *p, int64_t tasks)
{
  sl_workload w;
  training(&w);
  w.ops[0].tasks = tasks;
  char err[256];
  sl_plan_opts po = {0};
  int rc = sl_plan_build(p, &w, &po, err, sizeof err);
  if (rc)
    fprintf(stderr, "plan: %s\n", err);
  assert_int_equal(rc, 0);
}

static void build(sl_plan *p)
{
  build_tasks(p, SOURCE_TASKS);
}

static void group(sl_node_group *g, const char *name, int count, double cpu, double gpu, double price)
{
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->count = count;
  g->cpu = cpu;
  g->gpu = gpu;
  g->store_bytes = 200 * MB;
  g->memory_bytes = 800 * MB;
  g->cpu_speed = g->gpu_speed = 1;
  g->nic_bps = 1.25e9;
  g->price_per_hour = price;
}

/* One accelerator host (4 CPUs, a GPU, $3.6 an hour) and a pool of
 * @p pool 4-CPU workers ($0.36 an hour) that take 2 s to provision. */
static void cluster(sl_cluster *c, int pool)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "pool");
  c->ngroups = 2;
  group(&c->groups[HOST], "host", 1, 4, 1, 3.6);
  group(&c->groups[POOL], "worker", pool, 4, 0, 0.36);
  c->groups[POOL].elastic = 1;
  c->groups[POOL].provision_delay_s = 2;
  assert_int_equal(sl_cluster_expand(c), 0);
}

static sl_core_opts policy(const char *name)
{
  sl_core_opts o;
  sl_core_opts_default(&o);
  assert_int_equal(sl_core_opts_set_autoplace(&o, name), 0);
  o.autoplace_interval_s = 2;
  return o;
}

/* A run: the harness, and the plan and cluster its core points at. */
typedef struct {
  harness h;
  sl_plan plan;
  sl_cluster cl;
  sl_core_pool_stats ps;
  double jct;
} job;

/* Runs the job under @p name; checks what holds under every policy: every
 * row delivered once, no store over its budget, no slot given twice, every
 * pool node acquired given back by the end, and the bill: the host for
 * the whole run, pool nodes while held. */
static void run(job *j, const char *name, int pool)
{
  build(&j->plan);
  cluster(&j->cl, pool);
  sl_core_opts o = policy(name);
  harness *h = &j->h;
  j->jct = h_run(h, &j->plan, &j->cl, &o, 1e5);
  assert_true(j->jct > 0);
  assert_float_equal(h_delivered(h), SOURCE_TASKS * ROWS_PER_TASK, 1e-9);
  assert_true(h->max_store_over_budget <= 1e-6);
  assert_int_equal(h->slot_clashes, 0);
  sl_core_pool_stats *ps = &j->ps;
  sl_core_pool_stats_at(h->core, j->jct, ps);
  assert_int_equal(ps->acquired, h->acquired);
  assert_int_equal(h->released + ps->lost, h->acquired);
  assert_true(ps->node_s >= 0 && ps->node_s <= ps->acquired * j->jct + 1e-9);
  assert_float_equal(ps->host_cost_usd, 3.6 * j->jct / 3600, 1e-9);
  assert_float_equal(ps->cost_usd, 0.36 * ps->node_s / 3600, 1e-9);
}

static void done(job *j)
{
  h_free(&j->h);
  sl_cluster_free(&j->cl);
}

static void test_names(void **state)
{
  (void)state;
  const char *names[] = {"bound", "collocated", "remote", "pecan"};
  for (unsigned i = 0; i < 4; i++) {
    sl_core_opts o;
    sl_core_opts_default(&o);
    assert_int_equal(sl_core_opts_set_autoplace(&o, names[i]), 0);
    assert_string_equal(sl_autoplace_name(o.autoplace), names[i]);
  }
  sl_core_opts o;
  sl_core_opts_default(&o);
  assert_int_equal(o.autoplace, SL_AUTOPLACE_BOUND);
  assert_int_equal(sl_core_opts_set_autoplace(&o, "cachew"), SL_EINVAL);
}

/* tf.data on the host: the pool stays untouched, and the CPUs of the host
 * do all the preprocessing, slowly. */
static void test_collocated_never_acquires(void **state)
{
  (void)state;
  job j = {0};
  run(&j, "collocated", 4);
  assert_int_equal(j.h.acquired, 0);
  assert_float_equal(j.ps.node_s, 0, 0);
  for (int op = 0; op < 2; op++)
    assert_int_equal(j.h.launches_on_group[op][POOL], 0);
  assert_true(j.jct > 60); /* 280 CPU-seconds on 4 CPUs */
  done(&j);
}

/* Cachew: no preprocessing on the host at all, pool nodes added one at a
 * time while each raises the rate; all of them given back at the end. */
static void test_remote_keeps_preprocessing_off_the_host(void **state)
{
  (void)state;
  job c = {0}, j = {0};
  run(&c, "collocated", 4);
  run(&j, "remote", 4);
  assert_true(j.h.acquired >= 2);
  assert_int_equal(j.h.launches_on_group[0][HOST], 0); /* read and preprocess, fused */
  assert_true(j.h.launches_on_group[1][HOST] > 0);     /* training stays on the GPU */
  assert_true(j.jct < c.jct);
  assert_true(j.ps.node_s > 0);
  done(&c);
  done(&j);
}

/* sluice's own: the host's CPUs first and, at the start, the fewest pool
 * nodes whose bound comes near the whole pool's. The GPU needs 16 s for the
 * CPUs' 280: 17.5 CPUs, the host's 4 and four workers' 16; with a pool of
 * eight it starts four, and beats Cachew's ramp of one at a time. */
static void test_bound_acquires_what_the_bound_needs(void **state)
{
  (void)state;
  job j = {0}, r = {0};
  run(&j, "bound", 8);
  run(&r, "remote", 8);
  assert_true(j.h.acquired >= 4);
  assert_true(j.ps.peak >= 4 && j.ps.peak <= 6);
  assert_true(j.h.launches_on_group[0][HOST] > 0); /* the host preprocesses too */
  assert_true(j.jct < r.jct);
  done(&j);
  done(&r);
}

/* Pecan: with a pool of one worker the remote phase ends at once, and the
 * host's CPUs come in: preprocessing runs on the host before the end. */
static void test_pecan_turns_to_the_host(void **state)
{
  (void)state;
  job j = {0};
  run(&j, "pecan", 1);
  assert_true(j.h.acquired >= 1);
  assert_true(j.h.launches_on_group[0][HOST] > 0);
  done(&j);
}

/* Pecan where the host's CPUs suffice: it gives its workers back, and
 * each goes as soon as it is drained. The partitions stored on a draining
 * node go first: left in queue order, the host's own outputs fed the GPU
 * ahead of them and the nodes stayed billed to the end (0.95 of the
 * node-seconds four workers held for the whole run; 0.16 now). */
static void test_drained_pool_nodes_go_early(void **state)
{
  (void)state;
  job j = {0};
  build_tasks(&j.plan, 10 * SOURCE_TASKS); /* long enough for the search to end */
  cluster(&j.cl, 4);
  sl_cluster_free(&j.cl);
  j.cl.groups[HOST].cpu = 24; /* 17.5 CPUs feed the GPU */
  assert_int_equal(sl_cluster_expand(&j.cl), 0);
  sl_core_opts o = policy("pecan");
  j.jct = h_run(&j.h, &j.plan, &j.cl, &o, 1e5);
  assert_true(j.jct > 0);
  assert_float_equal(h_delivered(&j.h), 10 * SOURCE_TASKS * ROWS_PER_TASK, 1e-9);
  sl_core_pool_stats_at(j.h.core, j.jct, &j.ps);
  assert_true(j.ps.peak >= 2);
  assert_true(j.ps.node_s < 0.6 * j.ps.peak * j.jct);
  done(&j);
}

/* A pool node lost mid-run: its work is redone, nothing is lost (run()
 * checks every row), and it is billed only until the loss. */
static void test_pool_node_lost(void **state)
{
  (void)state;
  const char *names[] = {"bound", "remote", "pecan"};
  for (unsigned i = 0; i < 3; i++) {
    job j = {0};
    h_push(&j.h, 8.0, H_NODE_LOST, 0, 1); /* the first worker, in service since 2 s */
    run(&j, names[i], 4);
    assert_true(j.h.acquired >= 1);
    done(&j);
  }
}

/* Cachew's pool winding down (no preprocessing left, its nodes draining)
 * when a draining node is lost with the partitions it made: lineage makes
 * them again, the host is closed to preprocessing, and the pool must
 * serve again. It once stayed wound down, and the job hung. */
static void test_pool_serves_again_after_a_loss(void **state)
{
  (void)state;
  job j = {0};
  sl_workload w;
  training(&w);
  w.ops[2].time_per_row = 0.2; /* a slow GPU: 160 s of training, the CPUs done long before */
  char err[256];
  sl_plan_opts po = {0};
  assert_int_equal(sl_plan_build(&j.plan, &w, &po, err, sizeof err), 0);
  cluster(&j.cl, 2);
  h_push(&j.h, 90.0, H_NODE_LOST, 0, 1);
  sl_core_opts o = policy("remote");
  j.jct = h_run(&j.h, &j.plan, &j.cl, &o, 1e5);
  assert_true(j.jct > 0);
  assert_float_equal(h_delivered(&j.h), SOURCE_TASKS * ROWS_PER_TASK, 1e-9);
  sl_core_stats st;
  sl_core_get_stats(j.h.core, &st);
  assert_true(st.lost_partitions > 0); /* the loss took partitions still needed */
  done(&j);
}

/* Decisions are the core's: the same run decides the same twice. */
static void test_deterministic(void **state)
{
  (void)state;
  const char *names[] = {"bound", "collocated", "remote", "pecan"};
  for (unsigned i = 0; i < 4; i++) {
    job a = {0}, b = {0};
    run(&a, names[i], 4);
    run(&b, names[i], 4);
    assert_true(sl_core_decision_hash(a.h.core) == sl_core_decision_hash(b.h.core));
    done(&a);
    done(&b);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_names),
    cmocka_unit_test(test_collocated_never_acquires),
    cmocka_unit_test(test_remote_keeps_preprocessing_off_the_host),
    cmocka_unit_test(test_bound_acquires_what_the_bound_needs),
    cmocka_unit_test(test_pecan_turns_to_the_host),
    cmocka_unit_test(test_pool_node_lost),
    cmocka_unit_test(test_drained_pool_nodes_go_early),
    cmocka_unit_test(test_pool_serves_again_after_a_loss),
    cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
