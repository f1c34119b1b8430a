/* The real executor on small workloads: every model gives the same sink
 * checksum, failures at any time change nothing in the output, and the
 * store stays within its budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor/engine.h"
#include "models/error.h"
#include "models/plan.h"

#define MB 1e6

static sl_op_spec *add_op(sl_workload *w, const char *name, sl_op_kind kind, double cpu, double gpu,
                          const char *kernel)
{
  sl_op_spec *o = &w->ops[w->nops++];
  memset(o, 0, sizeof *o);
  snprintf(o->name, sizeof o->name, "%s", name);
  snprintf(o->kernel, sizeof o->kernel, "%s", kernel);
  o->kind = kind;
  o->cpu = cpu;
  o->gpu = gpu;
  o->rows_out_per_row = 1;
  return o;
}

/* fig9's shape, tiny: 24 producers of 4 rows of 64 KB, 10 ms per row. */
static void tiny(sl_workload *w)
{
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "tiny");
  w->target_partition_bytes = 64e3;
  w->seed = 7;
  sl_op_spec *p = add_op(w, "produce", SL_OP_SOURCE, 1, 0, "generate");
  p->tasks = 24;
  p->rows_per_task = 4;
  p->out_row_bytes = 64e3;
  p->time_per_task = 0.04;
  sl_op_spec *t = add_op(w, "transform", SL_OP_MAP, 0.99, 0, "spin");
  t->time_per_row = 0.01;
  t->out_row_bytes = 64e3;
  sl_op_spec *i = add_op(w, "infer", SL_OP_MAP_BATCHES, 0, 1, "sleep");
  i->time_per_row = 0.01;
  i->batch_size = 2;
  i->out_row_bytes = 100;
}

static void cluster_of(sl_cluster *c, int nodes, double store)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "test");
  c->ngroups = 1;
  sl_node_group *g = &c->groups[0];
  snprintf(g->name, sizeof g->name, "n");
  g->count = nodes;
  g->cpu = 4;
  g->gpu = 2;
  g->memory_bytes = 1e9;
  g->store_bytes = store;
  g->cpu_speed = g->gpu_speed = 1;
  g->nic_bps = 1.25e9;
  assert_int_equal(sl_cluster_expand(c), 0);
}

typedef struct {
  uint64_t checksum;
  sl_summary s;
  int rc;
} outcome;

static outcome run(const char *model, int nodes, double store, const char *faults)
{
  sl_workload w;
  tiny(&w);
  sl_plan plan;
  char err[600];
  sl_plan_opts po = {0};
  assert_int_equal(sl_plan_build(&plan, &w, &po, err, sizeof err), 0);
  sl_cluster c;
  cluster_of(&c, nodes, store);
  sl_exec_opts o;
  sl_exec_opts_default(&o);
  assert_int_equal(sl_core_opts_set_model(&o.core, model), 0);
  o.core.checkpoint_interval_s = 0.2;
  char dir[] = "/tmp/sluice-exec-XXXXXX";
  assert_non_null(mkdtemp(dir));
  o.out_dir = dir;
  if (faults)
    assert_int_equal(sl_faults_parse(faults, &plan, &c, &o.faults, err, sizeof err), 0);
  outcome r;
  memset(&r, 0, sizeof r);
  r.rc = sl_exec_run(&plan, &c, &o, &r.s, err, sizeof err);
  if (r.rc)
    fprintf(stderr, "%s [%s]: %s\n", model, faults ? faults : "", err);
  r.checksum = r.s.sink_checksum;
  char cmd[700];
  snprintf(cmd, sizeof cmd, "test -s %s/summary.csv && test -s %s/tasks.csv && rm -rf %s", dir, dir, dir);
  assert_int_equal(system(cmd), 0);
  sl_cluster_free(&c);
  return r;
}

static uint64_t reference;

static void test_every_model_same_checksum(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-noadapt", "streaming-nopart", "static", "batch", "stream"};
  outcome base = run("streaming", 1, 4 * MB, NULL);
  assert_int_equal(base.rc, 0);
  assert_true(base.s.complete);
  assert_float_equal(base.s.rows, 96, 0);
  reference = base.checksum;
  for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++) {
    outcome r = run(models[m], 1, 4 * MB, NULL);
    assert_int_equal(r.rc, 0);
    assert_true(r.checksum == reference);
    assert_true(r.s.peak_store_bytes <= r.s.store_budget_bytes);
  }
}

static void test_failures_change_nothing(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "static", "batch", "stream"};
  const char *faults[] = {"kill:produce@0.05s", "kill:transform@0.15s", "kill:infer@0.2s",
                          "lose:1@0.1s", "lose:0@0.12s,join:0@0.3s", "kill@0.05s,lose:1@0.06s,join:1@0.2s"};
  for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++)
    for (unsigned f = 0; f < sizeof faults / sizeof faults[0]; f++) {
      fprintf(stderr, "  %s %s\n", models[m], faults[f]);
      outcome r = run(models[m], 2, 2 * MB, faults[f]);
      assert_int_equal(r.rc, 0);
      assert_true(r.checksum == reference);
      assert_true(r.s.peak_store_bytes <= r.s.store_budget_bytes);
    }
}

static void test_spill_and_oom(void **state)
{
  (void)state;
  /* batch materializes everything: spilled with room for 3 rows, or OOM */
  outcome r = run("batch", 1, 0.2 * MB, NULL);
  assert_int_equal(r.rc, 0);
  assert_true(r.s.spilled_bytes > 0);
  assert_true(r.checksum == reference);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_model_same_checksum),
    cmocka_unit_test(test_failures_change_nothing),
    cmocka_unit_test(test_spill_and_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
