/* The scheduling core and its three policies, driven by hand-written event
 * sequences and by the deterministic test engine in harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"
#include "models/bound.h"
#include "models/core_internal.h"

#define MB 1e6

/* --------------------------------------------------------------- fixtures */

static sl_op_spec *add_op(sl_workload *w, const char *name, sl_op_kind kind, double cpu, double gpu)
{
  sl_op_spec *o = &w->ops[w->nops++];
  memset(o, 0, sizeof *o);
  snprintf(o->name, sizeof o->name, "%s", name);
  snprintf(o->kernel, sizeof o->kernel, "%s", kind == SL_OP_SOURCE ? "generate" : "sleep");
  o->kind = kind;
  o->cpu = cpu;
  o->gpu = gpu;
  o->rows_out_per_row = 1;
  return o;
}

static void one_node(sl_cluster *c, double cpu, double gpu, double store)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "test");
  c->ngroups = 1;
  sl_node_group *g = &c->groups[0];
  snprintf(g->name, sizeof g->name, "n");
  g->count = 1;
  g->cpu = cpu;
  g->gpu = gpu;
  g->memory_bytes = 4 * store;
  g->store_bytes = store;
  g->cpu_speed = g->gpu_speed = 1;
  g->nic_bps = 1.25e9;
  assert_int_equal(sl_cluster_expand(c), 0);
}

static void many_nodes(sl_cluster *c, int count, double cpu, double gpu, double store)
{
  one_node(c, cpu, gpu, store);
  sl_cluster_free(c);
  c->groups[0].count = count;
  assert_int_equal(sl_cluster_expand(c), 0);
}

/* fig9 at 1/10 of the time and 1/100 of the size: bound 15 s. */
static void fig9_small(sl_workload *w)
{
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "fig9-small");
  w->target_partition_bytes = 1 * MB;
  w->seed = 1;
  sl_op_spec *p = add_op(w, "produce", SL_OP_SOURCE, 1, 0);
  p->tasks = 160;
  p->rows_per_task = 5;
  p->out_row_bytes = 1 * MB;
  p->time_per_task = 0.5;
  sl_op_spec *t = add_op(w, "transform", SL_OP_MAP, 0.99, 0);
  t->time_per_row = 0.05;
  t->out_row_bytes = 1 * MB;
  sl_op_spec *i = add_op(w, "infer", SL_OP_MAP_BATCHES, 0, 1);
  i->time_per_row = 0.05;
  i->batch_size = 1;
  i->out_row_bytes = 1000;
  add_op(w, "sink", SL_OP_SINK, 0, 0);
}

static void build(sl_plan *p, const sl_workload *w)
{
  char err[256];
  sl_plan_opts po = {0};
  int rc = sl_plan_build(p, w, &po, err, sizeof err);
  if (rc)
    fprintf(stderr, "plan: %s\n", err);
  assert_int_equal(rc, 0);
}

static sl_core_opts model(const char *name)
{
  sl_core_opts o;
  sl_core_opts_default(&o);
  assert_int_equal(sl_core_opts_set_model(&o, name), 0);
  return o;
}

/* --------------------------------------------------------- Algorithm 2 */

/* The paper's worked example: load -> transform (12 s, doubles the data)
 * -> inference (2 s per source-sized partition) on 8 CPU + 4 GPU, with two
 * source tasks running: P = 12/6 + 2/4 * 2 = 3 s per source partition. */
/* The pace both engines emit a task's partitions by: its set-up first,
 * then the rest of its charge evenly; all at the end when outputs come at
 * the end. A task of 4 s whose first 1 s is set-up, 3 partitions: out at
 * 2, 3 and 4 s (evenly over the whole, they left at 1.33, 2.67 and 4). */
static void test_emit_share(void **state)
{
  (void)state;
  assert_float_equal(sl_emit_share(1, 4, false, 1, 3), 0.5, 1e-12);
  assert_float_equal(sl_emit_share(1, 4, false, 2, 3), 0.75, 1e-12);
  assert_float_equal(sl_emit_share(1, 4, false, 3, 3), 1.0, 1e-12);
  assert_float_equal(sl_emit_share(0, 4, false, 1, 4), 0.25, 1e-12); /* no set-up: evenly */
  assert_float_equal(sl_emit_share(1, 4, true, 1, 3), 1.0, 1e-12);   /* at the end */
  assert_float_equal(sl_emit_share(0, 0, false, 1, 2), 0.5, 1e-12);  /* no work: evenly, harmless */
  assert_float_equal(sl_emit_share(5, 4, false, 1, 2), 1.0, 1e-12);  /* a set-up past the work: clamped */
  assert_float_equal(sl_emit_share(1, 4, false, 0, 0), 1.0, 1e-12);  /* no partitions */
}

static void test_algorithm2_worked_example(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 100 * MB;
  sl_op_spec *load = add_op(&w, "load", SL_OP_SOURCE, 1, 0);
  load->tasks = 100;
  load->rows_per_task = 1;
  load->out_row_bytes = 100 * MB;
  load->time_per_task = 1;
  load->concurrency = 2;
  sl_op_spec *tr = add_op(&w, "transform", SL_OP_MAP, 0.99, 0);
  tr->time_per_row = 12;
  tr->rows_out_per_row = 2;
  tr->out_row_bytes = 100 * MB;
  sl_op_spec *inf = add_op(&w, "inference", SL_OP_MAP_BATCHES, 0, 1);
  inf->time_per_row = 2;
  inf->batch_size = 1;
  inf->out_row_bytes = 1;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 8, 4, 100e9);
  sl_core_opts o = model("streaming");
  o.drain_sum = true;
  char err[256];
  sl_core *c = sl_core_new(&plan, &cl, &o, err, sizeof err);
  assert_non_null(c);
  assert_int_equal(sl_core_start(c, 0), 0);
  /* only the two admitted source tasks run: they hold 2 of the 8 CPUs */
  assert_int_equal(c->ops[0].running, 2);
  assert_float_equal(sl__streaming_drain_seconds(c), 3.0, 1e-9);
  /* the bottleneck form: the transform alone takes 2 s per partition */
  c->opts.drain_sum = false;
  assert_float_equal(sl__streaming_drain_seconds(c), 2.0, 1e-9);
  /* Over a period, the slots the others held on average: had the sources
   * held 2 CPUs for the first half second only (1 CPU on average over
   * the second since the period began), the transform of 0.99 CPU had 7
   * CPUs, 7 / 0.99 of its slots on average. */
  c->ops[0].used_s[0] = 1.0;
  c->ops[0].used_at = 1.0;
  c->now = 1.0;
  assert_float_equal(sl__streaming_period_drain_seconds(c), 12.0 / (7 / 0.99), 1e-9);
  assert_float_equal(sl__streaming_drain_seconds(c), 2.0, 1e-9); /* the instant */
  /* Bug: the average was floored to whole slots, so sources that held 1.08
   * CPUs on average left the transform 6 slots and ones that held 1.06
   * left it 7: a sixth more admitted for 0.02 of a CPU, which engine
   * timing decides (fig9-small at 160 MB: the real run idled 3.3
   * CPU-seconds for admission, its simulation 0.4-1.5, -4.7%). */
  c->ops[0].used_s[0] = 1.08;
  double p_more = sl__streaming_period_drain_seconds(c);
  c->ops[0].used_s[0] = 1.06;
  double p_less = sl__streaming_period_drain_seconds(c);
  assert_true(p_more > p_less && p_more < 1.01 * p_less);
  sl_core_free(c);
  sl_cluster_free(&cl);
}

/* Ray Data's reservation example: 4 CPU, 1000 MB, two operators, ratio
 * 0.5: each reserves 1 CPU and 125 MB for tasks and 125 MB for outputs;
 * 2 CPU and 500 MB stay shared. */
static void test_reservation_example(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 1 * MB;
  sl_op_spec *a = add_op(&w, "a", SL_OP_SOURCE, 1, 0);
  a->tasks = 10;
  a->rows_per_task = 1;
  a->out_row_bytes = 1 * MB;
  a->time_per_task = 1;
  sl_op_spec *b = add_op(&w, "b", SL_OP_MAP, 0.5, 0);
  b->time_per_row = 1;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 4, 0, 1000 * MB);
  sl_core_opts o = model("streaming");
  o.reservation_ratio = 0.5;
  char err[256];
  sl_core *c = sl_core_new(&plan, &cl, &o, err, sizeof err);
  assert_non_null(c);
  double cpu, mem, out, sh_cpu, sh_mem;
  for (int op = 0; op < 2; op++) {
    sl__streaming_reservation(c, op, &cpu, &mem, &out, &sh_cpu, &sh_mem);
    assert_float_equal(cpu, 1, 1e-9);
    assert_float_equal(mem, 125 * MB, 1);
    assert_float_equal(out, 125 * MB, 1);
  }
  assert_float_equal(sh_cpu, 2, 1e-9);
  assert_float_equal(sh_mem, 500 * MB, 1);
  sl_core_free(c);
  sl_cluster_free(&cl);
}

/* ------------------------------------------------------------ end to end */

static void test_fig9_small_every_model_completes(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-noadapt", "streaming-nopart", "static", "batch", "stream"};
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++) {
    sl_cluster cl;
    one_node(&cl, 8, 4, 160 * MB);
    sl_core_opts o = model(models[m]);
    harness h = {0};
    double jct = h_run(&h, &plan, &cl, &o, 1e5);
    sl_core_stats st;
    sl_core_get_stats(h.core, &st);
    fprintf(stderr, "  %-18s jct %.2f s (%.2fx bound) peak %.0f MB spilled %.0f MB (%lld inputs)\n", models[m],
            jct, jct / 15.0, st.peak_store_bytes / MB, st.spilled_bytes / MB, (long long)h.inputs_spilled);
    assert_true(jct >= 15.0 - 1e-9);
    assert_float_equal(h_delivered(&h), 800, 1e-9);
    assert_true(h.max_store_over_budget <= 1e-6);
    /* every LAUNCH says where its inputs are, as they were emitted */
    assert_true(h.inputs_checked > 0);
    assert_int_equal(h.input_mismatches, 0);
    if (st.spilled_bytes > 0) /* batch: the stage's inputs come back from disk */
      assert_true(h.inputs_spilled > 0);
    h_free(&h);
    sl_cluster_free(&cl);
  }
}

/* Streaming batch stays near the bound with nothing spilled from 80 MB up. */
static void test_streaming_near_bound(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  for (double mb = 80; mb <= 160; mb += 40) {
    sl_cluster cl;
    one_node(&cl, 8, 4, mb * MB);
    sl_core_opts o = model("streaming");
    harness h = {0};
    double jct = h_run(&h, &plan, &cl, &o, 1e5);
    sl_core_stats st;
    sl_core_get_stats(h.core, &st);
    fprintf(stderr, "  streaming %3.0f MB: %.2f s = %.3fx bound\n", mb, jct, jct / 15.0);
    assert_true(jct > 0 && jct <= 1.10 * 15.0);
    assert_float_equal(st.spilled_bytes, 0, 0);
    h_free(&h);
    sl_cluster_free(&cl);
  }
}

static void test_batch_stage_barrier(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 8, 4, 2000 * MB);
  sl_core_opts o = model("batch");
  harness h = {0};
  assert_true(h_run(&h, &plan, &cl, &o, 1e5) > 0);
  for (int k = 0; k + 1 < plan.nops; k++)
    assert_true(h.launched_at_op_min[k + 1] >= h.ended_at_op_max[k] - 1e-9);
  assert_float_equal(h_delivered(&h), 800, 1e-9);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* A budget too small for one partition fails at once, naming the operator. */
static void test_budget_too_small(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 8, 4, 0.5 * MB);
  sl_core_opts o = model("streaming");
  o.on_full = SL_FULL_OOM;
  char err[256] = "";
  sl_core *c = sl_core_new(&plan, &cl, &o, err, sizeof err);
  assert_null(c);
  assert_non_null(strstr(err, "produce"));
  sl_cluster_free(&cl);
}

/* --------------------------------------------------------------- failures */

static void test_stream_rolls_back_everything(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 8, 4, 160 * MB);
  sl_core_opts o = model("stream");
  o.checkpoint_interval_s = 3;
  harness h = {0};
  h_push(&h, 7.2, H_FAIL_TASK_OF_OP, 0, 1);
  double jct = h_run(&h, &plan, &cl, &o, 1e5);
  sl_core_stats st;
  sl_core_get_stats(h.core, &st);
  assert_true(jct > 0);
  assert_int_equal(h.rollbacks, 1);
  assert_true(h.checkpoints >= 2);
  /* every operator's running tasks were cancelled, not just the failed one */
  assert_true(st.tasks_failed > 3);
  assert_float_equal(h_delivered(&h), 800, 1e-9);
  /* the rows the sink gave back are counted, and delivered again */
  assert_true(st.rows_rolled_back > 0);
  assert_float_equal(st.rows_delivered, 800, 1e-9);
  h_free(&h);
  sl_cluster_free(&cl);
}

static void run_with_failures(const char *name, sl_core_opts o, uint64_t seed, int nevents)
{
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 3, 4, 2, 40 * MB);
  harness h = {0};
  uint64_t x = seed;
  for (int i = 0; i < nevents; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double t = (double)(x >> 40) / (double)(1ULL << 24) * 20.0;
    int what = (int)((x >> 20) % 4);
    int node = (int)((x >> 10) % 3);
    if (what <= 1) {
      h_push(&h, t, H_FAIL_TASK_OF_OP, 0, (int)((x >> 30) % 3));
    } else {
      h_push(&h, t, H_NODE_LOST, 0, node);
      h_push(&h, t + 1.5, H_NODE_JOINED, 0, node);
    }
  }
  double jct = h_run(&h, &plan, &cl, &o, 1e5);
  if (jct < 0)
    fprintf(stderr, "%s seed %llu failed: %d\n", name, (unsigned long long)seed, h.failed_code);
  assert_true(jct > 0);
  assert_float_equal(h_delivered(&h), 800, 1e-9);
  assert_true(h.max_store_over_budget <= 1e-6);
  assert_int_equal(h.slot_clashes, 0);
  assert_int_equal(h.input_mismatches, 0); /* regenerated partitions say where they are now */
  h_free(&h);
  sl_cluster_free(&cl);
}

/* Streaming batch never exceeds its budget and loses nothing, whatever
 * fails, in long random sequences of failures and rejoins. */
static void test_random_failures_every_model(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-noadapt", "streaming-nopart", "static", "batch", "stream"};
  for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++)
    for (uint64_t seed = 1; seed <= 20; seed++) {
      sl_core_opts o = model(models[m]);
      o.checkpoint_interval_s = 2;
      run_with_failures(models[m], o, seed, 6);
    }
}

static void test_lineage_recovers_lost_partitions(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 2, 4, 2, 400 * MB);
  sl_core_opts o = model("batch");
  harness h = {0};
  h_push(&h, 14.0, H_NODE_LOST, 0, 1); /* stage 2 running, stage 1 outputs stored */
  assert_true(h_run(&h, &plan, &cl, &o, 1e5) > 0);
  sl_core_stats st;
  sl_core_get_stats(h.core, &st);
  assert_true(st.lost_partitions > 0);
  assert_true(st.retried_tasks > 0);
  assert_float_equal(h_delivered(&h), 800, 1e-9);
  h_free(&h);
  sl_cluster_free(&cl);
}

static void test_all_to_all(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 1 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
  src->tasks = 16;
  src->rows_per_task = 4;
  src->out_row_bytes = 0.5 * MB;
  src->time_per_task = 0.2;
  sl_op_spec *sort = add_op(&w, "sort", SL_OP_ALL_TO_ALL, 1, 0);
  sort->tasks = 4;
  sort->time_per_row = 0.01;
  sl_op_spec *m = add_op(&w, "write", SL_OP_MAP, 0.5, 0);
  m->time_per_row = 0.01;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 2, 4, 0, 200 * MB);
  sl_core_opts o = model("streaming");
  harness h = {0};
  h_push(&h, 1.0, H_NODE_LOST, 0, 0);
  assert_true(h_run(&h, &plan, &cl, &o, 1e5) > 0);
  assert_float_equal(h_delivered(&h), 64, 1e-9);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* A source of @p tasks tasks of @p rows rows of @p row_bytes into an
 * all-to-all of @p reducers reducers at 10 ms a row, partitions of
 * @p target bytes; the source's cost is the caller's. */
static sl_op_spec *shuffle_job(sl_workload *w, double target, int64_t tasks, int64_t rows, double row_bytes,
                               int64_t reducers)
{
  *w = (sl_workload){0};
  w->target_partition_bytes = target;
  sl_op_spec *src = add_op(w, "read", SL_OP_SOURCE, 1, 0);
  src->tasks = tasks;
  src->rows_per_task = rows;
  src->out_row_bytes = row_bytes;
  sl_op_spec *sort = add_op(w, "sort", SL_OP_ALL_TO_ALL, 1, 0);
  sort->tasks = reducers;
  sort->time_per_row = 0.01;
  return src;
}

/* 96 rows in partitions of one row each (a row is the target) into four
 * reducers: each reads 24, as a kernel that shares rows by id gives them.
 * Each partition's row drawn to a share apart gave 17 to 32, and the JCT
 * followed the largest (bench/validate.sh's shuffle case, 5.7% off). */
static void test_reducers_share_rows_evenly(void **state)
{
  (void)state;
  sl_workload w;
  shuffle_job(&w, 0.5 * MB, 24, 4, 0.5 * MB, 4)->time_per_row = 0.01;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 2, 4, 0, 200 * MB);
  sl_core_opts o = model("streaming");
  harness h = {0};
  assert_true(h_run(&h, &plan, &cl, &o, 1e5) > 0);
  assert_float_equal(h_delivered(&h), 96, 1e-9);
  int reducers = 0;
  for (size_t i = 0; i < h.ntasks; i++)
    if (h.tasks[i].op == 1) {
      assert_int_equal(h.tasks[i].rows_in, 24);
      reducers++;
    }
  assert_int_equal(reducers, 4);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* The shuffle strategies on three nodes, every model: each row reaches the
 * sink once, and the reducers read each byte the shuffle holds once. A
 * merge stage halves the blocks the reducers read (merge_factor 2); push
 * puts each reducer's blocks on its node, so that they read them there;
 * push-star runs the producers at most two rounds ahead of the merges. */
static void test_shuffle_strategies(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-plus", "batch", "static", "stream"};
  for (unsigned m = 0; m < sizeof models / sizeof *models; m++) {
    double blocks[4] = {0}, remote[4] = {0};
    int most_maps[4] = {0};
    for (int strategy = SL_SHUFFLE_SIMPLE; strategy <= SL_SHUFFLE_PUSH_STAR; strategy++) {
      sl_workload w = {0};
      w.target_partition_bytes = 2 * MB;
      sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
      src->tasks = 48;
      src->rows_per_task = 4;
      src->out_row_bytes = 0.5 * MB;
      src->time_per_task = 0.2;
      sl_op_spec *sort = add_op(&w, "sort", SL_OP_ALL_TO_ALL, 1, 0);
      sort->tasks = 6;
      sort->time_per_row = 0.01;
      sort->strategy = strategy;
      sort->merge_factor = 2;
      sort->concurrent_rounds = 2;
      sort->map_parallelism = 1;
      sort->merge_time_per_byte = 1e-9;
      sl_plan plan;
      build(&plan, &w);
      assert_int_equal(plan.nops, strategy == SL_SHUFFLE_SIMPLE ? 2 : 3);
      int reduce = plan.nops - 1;
      sl_cluster cl;
      many_nodes(&cl, 3, 4, 0, 400 * MB);
      sl_core_opts o = model(models[m]);
      harness h = {0};
      double jct = h_run(&h, &plan, &cl, &o, 1e5);
      if (jct <= 0)
        fail_msg("%s, %s: failed (%d)", models[m], sl_shuffle_strategy_name(strategy), h.failed_code);
      assert_float_equal(h_delivered(&h), 192, 1e-9);
      assert_int_equal(h.input_mismatches, 0);
      /* the reducers read the 96 MB the maps made, each byte once */
      assert_float_equal(h.read_bytes_at_op[reduce], 96 * MB, 1e-3);
      blocks[strategy] = (double)h.blocks_at_op[reduce];
      remote[strategy] = h.remote_read_at_op[reduce] / (96 * MB);
      most_maps[strategy] = h.max_running[0];
      fprintf(stderr, "  %-15s %-9s jct %6.2f s, %4.0f blocks, %3.0f%% remote, %2d maps at once\n", models[m],
              sl_shuffle_strategy_name(strategy), jct, blocks[strategy], 100 * remote[strategy], most_maps[strategy]);
      h_free(&h);
      sl_cluster_free(&cl);
    }
    assert_true(blocks[SL_SHUFFLE_MERGE] <= 0.6 * blocks[SL_SHUFFLE_SIMPLE]);
    assert_true(blocks[SL_SHUFFLE_PUSH] <= 0.6 * blocks[SL_SHUFFLE_SIMPLE]);
    if (strcmp(models[m], "static") != 0 && strcmp(models[m], "stream") != 0) {
      assert_true(remote[SL_SHUFFLE_SIMPLE] > 0.4); /* two thirds of the maps ran elsewhere */
      assert_true(remote[SL_SHUFFLE_PUSH] < 0.1);
    }
    if (strncmp(models[m], "streaming", 9) == 0) /* two rounds of one map a node */
      assert_true(most_maps[SL_SHUFFLE_PUSH_STAR] <= 6 && most_maps[SL_SHUFFLE_PUSH] > 6);
  }
}

/* After a push, each reducer waits for the node its share was merged on,
 * and the reducers queue by share: node 0's first, node 3's last. With
 * more of them than the 4,096 the retry scan once looked past, the nodes
 * whose reducers came later sat idle until the scan reached them: 16 s of
 * reducing on 8 slots took 2.74 s instead of 2.06. */
static void test_homed_reducers_use_every_node(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 1 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
  src->tasks = 8;
  src->rows_per_task = 8192;
  src->out_row_bytes = 100;
  src->time_per_task = 0.01;
  sl_op_spec *sort = add_op(&w, "sort", SL_OP_ALL_TO_ALL, 1, 0);
  sort->tasks = 8192;
  sort->time_per_task = 0.002;
  sort->strategy = SL_SHUFFLE_PUSH;
  sort->merge_factor = 2;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 4, 2, 0, 400 * MB);
  sl_core_opts o = model("streaming");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e5);
  if (jct <= 0)
    fail_msg("failed (%d)", h.failed_code);
  int reduce = plan.nops - 1;
  fprintf(stderr, "  8,192 homed reducers on 4 nodes: %d at once, JCT %.2f s\n", h.max_running[reduce], jct);
  assert_float_equal(h_delivered(&h), 65536, 1e-9);
  assert_int_equal(h.max_running[reduce], 8);
  assert_true(jct < 1.1 * 8192 * 0.002 / 8);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* A shuffle whose input is three times the stores: what its maps make stays
 * until the last of them ends, so holding them back for memory frees
 * nothing. The streaming policies ran the maps one at a time through the
 * liveness rule after the first wave (a 300 GB sort simulated at 378 s,
 * batch 77 s); now they spill as batch does and keep every slot busy. */
static void test_streaming_spills_before_a_shuffle(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-plus", "batch"};
  double jct[3];
  for (int m = 0; m < 3; m++) {
    sl_workload w;
    shuffle_job(&w, 8 * MB, 96, 8, 1 * MB, 12)->time_per_task = 1;
    sl_plan plan;
    build(&plan, &w);
    sl_cluster cl;
    many_nodes(&cl, 2, 4, 0, 128 * MB); /* 768 MB to shuffle, 256 MB of stores */
    sl_core_opts o = model(models[m]);
    harness h = {0};
    jct[m] = h_run(&h, &plan, &cl, &o, 1e5);
    assert_true(jct[m] > 0);
    assert_float_equal(h_delivered(&h), 768, 1e-9);
    sl_core_stats st;
    sl_core_get_stats(h.core, &st);
    fprintf(stderr, "  %-15s %6.2f s, %3d maps at once, %.0f MB spilled\n", models[m], jct[m], h.max_running[0],
            st.spilled_bytes / MB);
    assert_int_equal(h.max_running[0], 8);
    h_free(&h);
    sl_cluster_free(&cl);
  }
  assert_true(jct[0] <= 1.05 * jct[2] && jct[1] <= 1.05 * jct[2]);
}

/* Bug: static placement routed partitions round-robin whatever their
 * size. Sources of 7 rows of 1.5 MB cut at 4 MB make partitions of 3, 3
 * and 1 rows, and with six instances downstream two of them got every
 * 1-row partition: a third of the rows of the others, and which two
 * depended on the order of emissions, so the engines' JCTs drifted apart
 * by 30%. A rebalance shares rows out evenly: so does the placement now. */
static void test_static_routes_rows_evenly(void **state)
{
  (void)state;
  const char *models[] = {"static", "stream"};
  for (int m = 0; m < 2; m++) {
    sl_workload w = {0};
    w.target_partition_bytes = 4 * MB;
    sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
    src->tasks = 30;
    src->rows_per_task = 7;
    src->out_row_bytes = 1.5 * MB;
    src->time_per_row = 0.01;
    src->time_spread = 0.5; /* sources out of step: emissions interleave */
    sl_op_spec *t = add_op(&w, "clean", SL_OP_MAP, 0.99, 0);
    t->time_per_row = 0.05;
    sl_plan plan;
    build(&plan, &w);
    sl_cluster cl;
    many_nodes(&cl, 3, 4, 0, 200 * MB);
    sl_core_opts o = model(models[m]);
    harness h = {0};
    assert_true(h_run(&h, &plan, &cl, &o, 1e5) > 0);
    assert_float_equal(h_delivered(&h), 210, 1e-9);
    int64_t rows[64] = {0};
    int used = 0;
    for (size_t k = 0; k < h.ntasks; k++)
      if (h.tasks[k].op == 1 && h.tasks[k].node >= 0) {
        int at = h.tasks[k].node * 8 + h.tasks[k].slot;
        assert_true(at >= 0 && at < 64);
        rows[at] += h.tasks[k].rows_in;
      }
    int64_t lo = INT64_MAX, hi = 0;
    for (int k = 0; k < 64; k++)
      if (rows[k] > 0) {
        used++;
        lo = rows[k] < lo ? rows[k] : lo;
        hi = rows[k] > hi ? rows[k] : hi;
      }
    fprintf(stderr, "  %s: %d instances of clean, %lld to %lld rows each\n", models[m], used, (long long)lo,
            (long long)hi);
    assert_true(used >= 2);
    assert_true(hi - lo <= 3); /* one partition apart at most */
    h_free(&h);
    sl_cluster_free(&cl);
  }
}

/* Two node groups for the static placement: @p gpu_only nodes of 2 GPUs
 * and no CPU, and one node of 4 CPUs and 1 GPU. */
static void gpu_only_and_mixed(sl_cluster *cl, int gpu_only)
{
  memset(cl, 0, sizeof *cl);
  snprintf(cl->name, sizeof cl->name, "gpu-only+mixed");
  cl->ngroups = 2;
  for (int g = 0; g < 2; g++) {
    sl_node_group *n = &cl->groups[g];
    snprintf(n->name, sizeof n->name, g == 0 ? "gpu-only" : "mixed");
    n->count = g == 0 ? gpu_only : 1;
    n->cpu = g == 0 ? 0 : 4;
    n->gpu = g == 0 ? 2 : 1;
    n->memory_bytes = 1e9;
    n->store_bytes = 200 * MB;
    n->cpu_speed = n->gpu_speed = 1;
    n->nic_bps = 1.25e9;
  }
  assert_int_equal(sl_cluster_expand(cl), 0);
}

/* Bug: static placement dealt GPU positions out by the largest GPU request
 * and never asked whether a node had the CPU an operator also needs. A
 * GPU operator that asks for a CPU got instances on GPU-only nodes, which
 * never ran: half of its input waited there for ever (zoo case 68), or
 * the node of 1 GPU got no position and the job could not be placed at all
 * (zoo case 102). Every row must reach the sink, under both static models,
 * and the operator must run only where it fits. */
static void test_static_places_gpu_operators_where_they_fit(void **state)
{
  (void)state;
  const char *models[] = {"static", "stream"};
  for (int m = 0; m < 2; m++)
    for (int gpu_only = 1; gpu_only <= 3; gpu_only++) {
      sl_workload w = {0};
      w.target_partition_bytes = 4 * MB;
      sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
      src->tasks = 12;
      src->rows_per_task = 4;
      src->out_row_bytes = 1 * MB;
      src->time_per_row = 0.01;
      sl_op_spec *big = add_op(&w, "big", SL_OP_MAP, 0, 2); /* only the GPU-only nodes have 2 */
      big->time_per_row = 0.02;
      sl_op_spec *needs_cpu = add_op(&w, "needs-cpu", SL_OP_MAP, 1, 0.5); /* only the mixed node */
      needs_cpu->time_per_row = 0.02;
      sl_plan plan;
      build(&plan, &w);
      sl_cluster cl;
      gpu_only_and_mixed(&cl, gpu_only);
      sl_core_opts o = model(models[m]);
      harness h = {0};
      assert_true(h_run(&h, &plan, &cl, &o, 1e4) > 0);
      assert_float_equal(h_delivered(&h), 48, 1e-9);
      for (size_t k = 0; k < h.ntasks; k++)
        if (h.tasks[k].op == 2)
          assert_int_equal(h.tasks[k].node, gpu_only); /* the mixed node */
      h_free(&h);
      sl_cluster_free(&cl);
    }
}

/* Bug: a GPU operator that asks for 2 CPUs with each GPU took every CPU of
 * nodes of 8 GPUs and 8 CPUs before the CPU operators were placed, and the
 * job could not be placed (zoo case 23). It now leaves them half. */
static void test_static_leaves_cpu_to_cpu_operators(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 4 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 2, 0);
  src->tasks = 16;
  src->rows_per_task = 4;
  src->out_row_bytes = 1 * MB;
  src->time_per_row = 0.01;
  sl_op_spec *g = add_op(&w, "explode", SL_OP_MAP, 2, 1);
  g->time_per_row = 0.02;
  sl_op_spec *t = add_op(&w, "clean", SL_OP_MAP, 4, 0);
  t->time_per_row = 0.02;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 2, 8, 8, 200 * MB);
  sl_core_opts o = model("static");
  harness h = {0};
  assert_true(h_run(&h, &plan, &cl, &o, 1e4) > 0);
  assert_float_equal(h_delivered(&h), 64, 1e-9);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* Bug: static routing sent each partition to the instance sent the fewest
 * rows, so with many instances of a batch operator every channel held
 * part of a batch and none ran. Sources filled every store with them,
 * paused, and the job crept on through the liveness rule one spilled
 * partition at a time: zoo case 90 stopped at its time limit, 130 times
 * its bound. A batch operator's channel now fills one batch at a time,
 * and a partial batch runs once the router moves on. */
static void test_static_fills_batches_under_memory_pressure(void **state)
{
  (void)state;
  const char *models[] = {"static", "stream"};
  for (int m = 0; m < 2; m++) {
    sl_workload w = {0};
    w.target_partition_bytes = 4 * MB;
    sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 1, 0);
    src->tasks = 32;
    src->rows_per_task = 16;
    src->out_row_bytes = 1 * MB; /* partitions of 4 rows */
    src->time_per_row = 0.05;
    sl_op_spec *b = add_op(&w, "batch", SL_OP_MAP_BATCHES, 0.25, 0);
    b->batch_size = 16; /* four partitions a batch */
    b->time_per_row = 0.01;
    b->out_row_bytes = 2 * MB;
    sl_op_spec *f = add_op(&w, "filter", SL_OP_MAP, 1, 0);
    f->time_per_row = 0.01;
    f->rows_out_per_row = 0.25;
    sl_plan plan;
    build(&plan, &w);
    sl_cluster cl;
    many_nodes(&cl, 2, 16, 0, 48 * MB); /* a store holds 12 partitions */
    sl_bound b_;
    assert_true(sl_bound_compute(&plan, &cl, &b_) >= 0);
    sl_core_opts o = model(models[m]);
    harness h = {0};
    double jct = h_run(&h, &plan, &cl, &o, 1e4);
    fprintf(stderr, "  %s: %.2f s, bound %.2f s\n", models[m], jct, b_.jct_s);
    assert_true(jct > 0);
    assert_float_equal(h_delivered(&h), 128, 1e-9);
    assert_true(jct < 4 * b_.jct_s);
    h_free(&h);
    sl_cluster_free(&cl);
  }
}

/* read -> frames (each row into 16) -> embed on three nodes of unequal
 * speed, each store ten target partitions: a frames task emits 64 MB, more
 * than a node's store. */
static void expanding_pipeline(sl_workload *w, sl_cluster *cl)
{
  memset(w, 0, sizeof *w);
  w->target_partition_bytes = 4 * MB;
  sl_op_spec *src = add_op(w, "read", SL_OP_SOURCE, 1, 0);
  src->tasks = 24;
  src->rows_per_task = 2;
  src->out_row_bytes = 1 * MB;
  src->time_per_row = 0.1;
  sl_op_spec *f = add_op(w, "frames", SL_OP_MAP, 0.99, 0);
  f->rows_out_per_row = 16;
  f->time_per_row = 0.4;
  f->out_row_bytes = 1 * MB;
  sl_op_spec *e = add_op(w, "embed", SL_OP_MAP, 0.98, 0);
  e->time_per_row = 0.075;
  e->out_row_bytes = 1e3;
  memset(cl, 0, sizeof *cl);
  snprintf(cl->name, sizeof cl->name, "unequal3");
  cl->ngroups = 3;
  for (int g = 0; g < 3; g++) {
    sl_node_group *n = &cl->groups[g];
    snprintf(n->name, sizeof n->name, "g%d", g);
    n->count = 1;
    n->cpu = 4;
    n->memory_bytes = 1e9;
    n->store_bytes = 40 * MB;
    n->cpu_speed = n->gpu_speed = g == 0 ? 1 : g == 1 ? 0.7 : 0.5;
    n->nic_bps = 1.25e9;
  }
  assert_int_equal(sl_cluster_expand(cl), 0);
}

/* Bug: the streaming policy charged a task that grows data its whole
 * output before launching it. An expanding task's output (64 MB) is more
 * than a store: one ran at a time while the stores sat two-thirds empty,
 * at 28% of the bound. A task now adds at most two partitions at a time
 * (it pauses when its emission is refused, as a generator does). */
static void test_expanding_operator_does_not_starve(void **state)
{
  (void)state;
  sl_workload w;
  sl_cluster cl;
  expanding_pipeline(&w, &cl);
  sl_plan plan;
  build(&plan, &w);
  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  sl_core_opts o = model("streaming");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e5);
  assert_float_equal(h_delivered(&h), 768, 1e-9);
  fprintf(stderr, "  expanding pipeline: %.2f s, %.0f%% of the %.2f s bound\n", jct, 100 * b.jct_s / jct, b.jct_s);
  assert_true(h.max_store_over_budget <= 1e-6);
  assert_true(jct < 2.5 * b.jct_s);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* Algorithm 1's budget counts source bytes. Capped at the stores'
 * capacity, a source whose map doubles its bytes was admitted whole into
 * a store larger than its output, and the map's outputs then waited for
 * room (zoo seed 1 case 52: 357 s, and 2,596 s with twice the memory).
 * The cap is the capacity over the pipeline's largest expansion of a
 * source byte: with 60 sources of 10 MB and a 900 MB store, at most 45
 * start before the pipeline drains, and twice the memory is not slower. */
static void test_budget_counts_expansion(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 10 * MB;
  sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 0.1, 0);
  src->tasks = 60;
  src->rows_per_task = 1;
  src->out_row_bytes = 10 * MB;
  src->time_per_task = 0.5;
  sl_op_spec *m = add_op(&w, "decode", SL_OP_MAP, 1, 0);
  m->rows_out_per_row = 4;
  m->out_row_bytes = 5 * MB;
  m->time_per_row = 1;
  sl_op_spec *e = add_op(&w, "embed", SL_OP_MAP, 0, 1); /* on GPUs: not fused with decode */
  e->time_per_row = 0.05;
  e->out_row_bytes = 1000;
  sl_plan plan;
  build(&plan, &w);
  double jct[2];
  for (int k = 0; k < 2; k++) {
    sl_cluster cl;
    one_node(&cl, 16, 2, (k + 1) * 900 * MB);
    sl_core_opts o = model("streaming");
    harness h = {0};
    jct[k] = h_run(&h, &plan, &cl, &o, 1e5);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-9);
    fprintf(stderr, "  store %d MB: %.2f s, %d sources at once\n", (k + 1) * 900, jct[k], h.max_running[0]);
    if (k == 0)
      assert_true(h.max_running[0] <= 50);
    h_free(&h);
    sl_cluster_free(&cl);
  }
  assert_true(jct[1] <= 1.02 * jct[0]);
}

/* streaming-plus caps each operator at its share of the bound's allocation
 * while its inputs flow: on the expanding pipeline the frames tasks can no
 * longer take the slots embed needs to drain them (paused, they hold their
 * slots), and it beats the paper's policy; on fig9-small it loses nothing. */
static void test_streaming_plus(void **state)
{
  (void)state;
  sl_workload w;
  sl_cluster cl;
  expanding_pipeline(&w, &cl);
  sl_plan plan;
  build(&plan, &w);
  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  double jct[2];
  const char *names[2] = {"streaming", "streaming-plus"};
  for (int m = 0; m < 2; m++) {
    sl_core_opts o = model(names[m]);
    harness h = {0};
    jct[m] = h_run(&h, &plan, &cl, &o, 1e5);
    assert_float_equal(h_delivered(&h), 768, 1e-9);
    assert_true(h.max_store_over_budget <= 1e-6);
    fprintf(stderr, "  expanding, %s: %.2f s, %.0f%% of the bound\n", names[m], jct[m], 100 * b.jct_s / jct[m]);
    h_free(&h);
  }
  sl_cluster_free(&cl);
  assert_true(jct[1] < 0.9 * jct[0]);
  assert_true(b.jct_s / jct[1] >= 0.85);

  fig9_small(&w);
  build(&plan, &w);
  for (int m = 0; m < 2; m++) {
    many_nodes(&cl, 2, 4, 2, 50 * MB);
    sl_core_opts o = model(names[m]);
    harness h = {0};
    jct[m] = h_run(&h, &plan, &cl, &o, 1e5);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-9);
    h_free(&h);
    sl_cluster_free(&cl);
  }
  fprintf(stderr, "  fig9-small: streaming %.2f s, streaming-plus %.2f s\n", jct[0], jct[1]);
  assert_true(jct[1] <= 1.02 * jct[0]);
}

/* A streaming core over @p plan on two nodes of 4 CPU and 2 GPU slots,
 * started at 0: its first decisions wait in its queue. */
static sl_core *started_on_two_nodes(const sl_plan *plan, sl_cluster *cl)
{
  many_nodes(cl, 2, 4, 2, 50 * MB);
  sl_core_opts o = model("streaming");
  char err[256];
  sl_core *c = sl_core_new(plan, cl, &o, err, sizeof err);
  assert_non_null(c);
  assert_int_equal(sl_core_start(c, 0), 0);
  return c;
}

/* The core picks what a kill strikes, so both engines strike the same
 * attempt: the running attempt of the operator with the lowest id. With
 * nothing of it running, the next attempt of it to launch is doomed. */
static void test_kill_is_the_cores_choice(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  sl_core *c = started_on_two_nodes(&plan, &cl);
  sl_decision d;
  sl_task_id first = SL_NONE;
  while (sl_core_next(c, &d))
    if (d.kind == SL_DEC_LAUNCH && d.op == 0 && (first == SL_NONE || d.task < first))
      first = d.task;
  assert_true(first != SL_NONE);
  sl_task_id victim;
  assert_int_equal(sl_core_kill(c, 0.1, 0, &victim), 0);
  assert_int_equal(victim, first);
  assert_int_equal(sl_core_failed(c, 0.1, victim), 0);
  /* nothing of the last operator runs yet: its next attempt is doomed */
  assert_int_equal(sl_core_kill(c, 0.2, plan.nops - 1, &victim), 0);
  assert_true(victim == SL_NONE);
  assert_int_equal(sl_core_kill(c, 0.2, plan.nops, &victim), SL_EINVAL);
  sl_core_free(c);
  sl_cluster_free(&cl);
}

/* Task time spreads are drawn from the data a task works on, never from
 * its id: ids number tasks in the order an engine's events made them, so
 * a real run and its simulation charged the slow draws to different
 * tasks (bench/validate's oddrows under stream, 18% apart). The same
 * data takes the same time, a retry included; other data draws anew. */
static void test_spread_follows_the_data(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  w.ops[0].time_spread = 0.5;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  sl_core *c = started_on_two_nodes(&plan, &cl);
  sl_decision d;
  double work[64] = {0};
  sl_task_id victim = SL_NONE;
  int64_t victim_split = -1;
  int distinct = 0;
  while (sl_core_next(c, &d))
    if (d.kind == SL_DEC_LAUNCH && d.op == 0 && d.split >= 0 && d.split < 64) {
      work[d.split] = d.work_s;
      distinct += d.split > 0 && d.work_s != work[0];
      if (victim == SL_NONE) {
        victim = d.task;
        victim_split = d.split;
      }
    }
  assert_true(victim != SL_NONE);
  assert_true(distinct > 0);
  assert_int_equal(sl_core_failed(c, 0.1, victim), 0);
  bool retried = false;
  while (sl_core_next(c, &d))
    if (d.kind == SL_DEC_LAUNCH && d.op == 0 && d.split == victim_split && d.task != victim) {
      assert_true(d.attempt > 0);
      assert_float_equal(d.work_s, work[victim_split], 1e-12);
      retried = true;
    }
  assert_true(retried);
  sl_core_free(c);
  sl_cluster_free(&cl);
}

/* An operator's set-up is paid once per slot: the first LAUNCH of it on a
 * slot is fresh and its work carries time_setup (no spread on it); a
 * retry on a slot that ran it is not fresh; a node that rejoins starts
 * its slots afresh. */
static void test_setup_once_per_slot(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  w.ops[0].time_setup = 2;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  sl_core *c = started_on_two_nodes(&plan, &cl);
  sl_decision d;
  bool seen[2][64] = {{false}};
  sl_task_id victim = SL_NONE;
  int victim_node = -1, launches = 0;
  while (sl_core_next(c, &d))
    if (d.kind == SL_DEC_LAUNCH && d.op == 0) {
      assert_true(d.node < 2 && d.slot < 64);
      assert_true(d.fresh == !seen[d.node][d.slot]);
      seen[d.node][d.slot] = true;
      assert_float_equal(d.setup_s, 2, 1e-12);
      assert_float_equal(d.work_s, 0.5 + 2, 1e-12);
      if (victim == SL_NONE) {
        victim = d.task;
        victim_node = d.node;
      }
      launches++;
    }
  assert_true(launches >= 2);
  /* the retry takes the slot back (the free slots are a stack): not fresh */
  assert_int_equal(sl_core_failed(c, 0.1, victim), 0);
  bool retried = false;
  while (sl_core_next(c, &d))
    if (d.kind == SL_DEC_LAUNCH && d.op == 0) {
      assert_true(seen[d.node][d.slot]);
      assert_false(d.fresh);
      assert_float_equal(d.setup_s, 0, 0);
      assert_float_equal(d.work_s, 0.5, 1e-12);
      retried = true;
    }
  assert_true(retried);
  /* the node goes and comes back: its slots set the operator up again */
  assert_int_equal(sl_core_node_lost(c, 0.2, victim_node), 0);
  while (sl_core_next(c, &d))
    ;
  assert_int_equal(sl_core_node_joined(c, 0.3, victim_node), 0);
  bool refreshed = false;
  while (sl_core_next(c, &d))
    if (d.kind == SL_DEC_LAUNCH && d.op == 0 && d.node == victim_node) {
      assert_true(d.fresh);
      refreshed = true;
      break;
    }
  assert_true(refreshed);
  sl_core_free(c);
  sl_cluster_free(&cl);
}

/* Bug (zoo case 86): room for the transient outputs of downstream
 * operators was asked for every slot they could use. With 128 CPU slots
 * and an operator that grows rows 8-fold, that headroom alone was more than
 * the stores: only the liveness rule launched, one task at a time. */
static void test_headroom_does_not_serialize(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 8 * MB;
  sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 1, 0);
  src->tasks = 60;
  src->rows_per_task = 52;
  src->out_row_bytes = 30.7e3;
  src->time_per_row = 1.629;
  sl_op_spec *t1 = add_op(&w, "transform1", SL_OP_MAP, 0.5, 0);
  t1->out_row_bytes = 246e3;
  t1->time_per_row = 1.841;
  sl_op_spec *t2 = add_op(&w, "transform2", SL_OP_MAP, 2, 0);
  t2->out_row_bytes = 1.97e6;
  t2->time_per_row = 0.5177;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 2, 64, 0, 512 * MB);
  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  sl_core_opts o = model("streaming");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e6);
  fprintf(stderr, "  zoo case 86 (60 sources): %.0f s, %.0f%% of the %.0f s bound\n", jct, 100 * b.jct_s / jct, b.jct_s);
  assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
  assert_true(b.jct_s / jct > 0.15);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* Many tiny partitions and slow per-row work (zoo case 56): coalescing up
 * to the target partition bundled 192 rows into one task, 14 minutes of
 * work on one slot while the others sat idle. A task now takes no more
 * than its operator's share of the queue. */
static void test_coalescing_keeps_parallelism(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 32 * MB;
  sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 1, 0);
  src->tasks = 300;
  src->rows_per_task = 2;
  src->out_row_bytes = 38.4e3;
  src->time_per_row = 0.5;
  sl_op_spec *t = add_op(&w, "transform", SL_OP_MAP, 2, 0); /* 2 CPUs: not fused with gen */
  t->out_row_bytes = 77e3;
  t->time_per_row = 4;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 64, 0, 2000 * MB);
  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  const char *models[] = {"streaming", "streaming-plus"};
  for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
    sl_core_opts o = model(models[m]);
    harness h = {0};
    double jct = h_run(&h, &plan, &cl, &o, 1e6);
    fprintf(stderr, "  %s: %.0f s, %.0f%% of the %.0f s bound, %d transforms at once\n", models[m], jct,
            100 * b.jct_s / jct, b.jct_s, h.max_running[1]);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
    assert_true(h.max_running[1] >= 24);
    assert_true(b.jct_s / jct > 0.8);
    h_free(&h);
  }
  sl_cluster_free(&cl);
}

/* A batch operator with no per-batch time (zoo case 120): full batches of
 * 512 rows made 6 tasks for 64 GPUs. streaming-plus cuts such batches; the
 * paper's policy keeps Ray Data's full batches. */
static void test_plus_cuts_free_batches(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 1 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
  src->tasks = 68;
  src->rows_per_task = 43;
  src->out_row_bytes = 4.64e3;
  src->time_per_row = 0.05;
  sl_op_spec *i = add_op(&w, "infer", SL_OP_MAP_BATCHES, 0, 1);
  i->batch_size = 512;
  i->out_row_bytes = 2.32e3;
  i->time_per_row = 2;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 8, 8, 8, 512 * MB);
  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  sl_core_opts o = model("streaming-plus");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e6);
  fprintf(stderr, "  streaming-plus: %.0f s, %.0f%% of the %.0f s bound, %d inferences at once\n", jct,
          100 * b.jct_s / jct, b.jct_s, h.max_running[1]);
  assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
  assert_true(h.max_running[1] > 6);
  assert_true(b.jct_s / jct > 0.7);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* Batches that cost time on GPUs of unequal speeds (zoo seed 1 case 2,
 * smaller): streaming-plus sizes a batch task by what its slot does by
 * the time every slot would end the rows left together (fill_horizon()),
 * so a slow GPU gets fewer rows than a fast one. Split by slot count, the
 * slow GPUs (0.47 against 1.2) got more than the fast ones and ended
 * the job long after them: 184 s, 47% of the bound (120 s, 72%, now). */
static void test_plus_batches_by_speed(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 1 * MB;
  sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 1, 0);
  src->tasks = 2000;
  src->rows_per_task = 4;
  src->out_row_bytes = 4.76e3;
  src->time_per_row = 0.4;
  sl_op_spec *i = add_op(&w, "infer", SL_OP_MAP_BATCHES, 0, 1);
  i->batch_size = 512;
  i->time_per_task = 7.9;
  i->time_per_batch = 11.3;
  i->time_per_row = 0.106;
  i->out_row_bytes = 595;
  add_op(&w, "sink", SL_OP_SINK, 0, 0);
  sl_plan plan;
  build(&plan, &w);

  sl_cluster cl;
  many_nodes(&cl, 4, 32, 2, 18 * MB);
  sl_cluster_free(&cl);
  cl.groups[0].gpu_speed = 1.2;
  cl.groups[1] = cl.groups[0];
  snprintf(cl.groups[1].name, SL_NAME_MAX, "slow");
  cl.groups[1].count = 2;
  cl.groups[1].cpu = 4;
  cl.groups[1].gpu = 4;
  cl.groups[1].gpu_speed = 0.47;
  cl.groups[1].store_bytes = 4 * MB;
  cl.ngroups = 2;
  assert_int_equal(sl_cluster_expand(&cl), 0);

  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  sl_core_opts o = model("streaming-plus");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e6);
  assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
  double rows[2] = {0}, tasks[2] = {0};
  for (size_t k = 0; k < h.ntasks; k++)
    if (h.tasks[k].op == 1) {
      int slow = sl_cluster_node_group(&cl, h.tasks[k].node) == &cl.groups[1];
      rows[slow] += (double)h.tasks[k].rows_in;
      tasks[slow]++;
    }
  assert_true(tasks[0] > 0 && tasks[1] > 0);
  double fast_rows = rows[0] / tasks[0], slow_rows = rows[1] / tasks[1];
  fprintf(stderr, "  streaming-plus: %.1f s, %.0f%% of the %.1f s bound; rows a task: %.0f fast, %.0f slow\n", jct,
          100 * b.jct_s / jct, b.jct_s, fast_rows, slow_rows);
  assert_true(slow_rows < 0.6 * fast_rows);
  assert_true(b.jct_s / jct > 0.6); /* 47% split by slot count */
  h_free(&h);
  sl_cluster_free(&cl);
}

/* @p tasks generated sources of 132 rows of 4 MB, 45 s each, longer than
 * the job's area on 8 or 16 nodes of 48 CPUs (zoo seed 1 case 90,
 * smaller), then a 0.25-CPU map that doubles the bytes and a filter. */
static void long_sources(sl_workload *w, int tasks)
{
  memset(w, 0, sizeof *w);
  w->target_partition_bytes = 64 * MB;
  sl_op_spec *src = add_op(w, "gen", SL_OP_SOURCE, 1, 0);
  src->tasks = tasks;
  src->rows_per_task = 132;
  src->out_row_bytes = 4 * MB;
  src->time_per_task = 7.665;
  src->time_per_row = 0.2831;
  sl_op_spec *b = add_op(w, "batch", SL_OP_MAP_BATCHES, 0.25, 0);
  b->batch_size = 64;
  b->time_per_row = 0.1494;
  b->time_per_byte = 0.007777e-6;
  b->out_row_bytes = 8 * MB;
  sl_op_spec *f = add_op(w, "filter", SL_OP_MAP, 0.99, 0);
  f->rows_out_per_row = 0.25;
  f->time_per_task = 0.03172;
  f->time_per_row = 0.04765;
  f->time_per_byte = 0.002557e-6;
  f->out_row_bytes = 16 * MB;
  add_op(w, "sink", SL_OP_SINK, 0, 0);
}

/* Source tasks longer than the bound's area: every one must start within
 * the bound less the critical path, so streaming-plus lets them in faster
 * than twice the bound's pace while the stores are less than a quarter
 * full. Held to twice the pace, the last of 480 started 9.1 s into a job
 * whose bound is one 45 s source task (82% of the bound); then 5.8 s
 * (88%). Since a consumer with no fixed cost gets 32 partitions a slot,
 * not 8 (PARTS_PER_SLOT_FREE), its quarter-CPU tasks are four times as
 * many and take slots between the sources: 7.6 s (86%), the price of a
 * cut that moved 115 zoo cases up and 37 down. */
static void test_plus_starts_long_sources_early(void **state)
{
  (void)state;
  sl_workload w;
  long_sources(&w, 480);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 16, 48, 0, 8192 * MB);
  sl_bound bd;
  assert_int_equal(sl_bound_compute(&plan, &cl, &bd), 0);
  assert_true(bd.critical_path_s > bd.area_s); /* the case this is about */
  sl_core_opts o = model("streaming-plus");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e6);
  assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
  double last_start = 0;
  for (size_t k = 0; k < h.ntasks; k++)
    if (h.tasks[k].op == 0)
      last_start = fmax(last_start, h.tasks[k].start);
  fprintf(stderr, "  streaming-plus: %.1f s, %.0f%% of the %.1f s bound; the last source started at %.2f s\n", jct,
          100 * bd.jct_s / jct, bd.jct_s, last_start);
  assert_true(last_start < 8.0);
  assert_true(bd.jct_s / jct > 0.85);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* The same sources, 240 on 8 nodes with 4 GB stores: counted two
 * partitions ahead each, they left their consumer, which doubles its
 * bytes, no room with the stores 6% full. streaming-plus ran at 49% of the
 * bound, behind the batch model (58%); the consumer now counts only what
 * it and the operators after it will emit while the stores are less than
 * a quarter full and the sources are counted for more than half of them
 * (upstream_yields()). */
static void test_plus_consumer_room_before_sources(void **state)
{
  (void)state;
  sl_workload w;
  long_sources(&w, 240);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 8, 48, 0, 4096 * MB);
  sl_bound bd;
  assert_int_equal(sl_bound_compute(&plan, &cl, &bd), 0);
  double jct[2];
  const char *models[2] = {"streaming-plus", "batch"};
  for (int m = 0; m < 2; m++) {
    sl_core_opts o = model(models[m]);
    harness h = {0};
    jct[m] = h_run(&h, &plan, &cl, &o, 1e6);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
    h_free(&h);
    fprintf(stderr, "  %s: %.1f s, %.0f%% of the %.1f s bound\n", models[m], jct[m], 100 * bd.jct_s / jct[m],
            bd.jct_s);
  }
  assert_true(bd.jct_s / jct[0] > 0.7);
  assert_true(jct[0] < 1.02 * jct[1]);
  sl_cluster_free(&cl);
}

/* Zoo seed 1 case 16: 83 cheap sources of four 2 MiB rows for a 1-CPU
 * filter of 5.7 s a row, on one node of 64 CPUs whose store holds the
 * whole job's data three times over. Held to their share of the bound's
 * allocation the sources came a few at a time while CPUs idled for input
 * (78.6% of the bound under the simulator); nothing else waiting and no
 * store to fill, they all start at once. */
static void test_plus_sources_run_ahead_where_stores_cannot_fill(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 64 * MB;
  sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 0.25, 0);
  src->tasks = 83;
  src->rows_per_task = 4;
  src->out_row_bytes = 2 * MB;
  src->time_per_row = 1.237;
  sl_op_spec *f = add_op(&w, "filter", SL_OP_MAP, 1, 0);
  f->rows_out_per_row = 0.5;
  f->out_row_bytes = 256 * 1024;
  f->time_per_row = 5.692;
  sl_op_spec *t = add_op(&w, "transform", SL_OP_MAP, 0.99, 0);
  t->out_row_bytes = 32 * 1024;
  t->time_per_task = 0.446;
  t->time_per_row = 2.402;
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  one_node(&cl, 64, 0, 2112 * MB);
  cl.groups[0].cpu_speed = 1.3; /* speeds are read from the group */
  sl_bound bd;
  assert_int_equal(sl_bound_compute(&plan, &cl, &bd), 0);
  sl_core_opts o = model("streaming-plus");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e6);
  assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
  fprintf(stderr, "  %d sources at once at most; %.1f s, %.0f%% of the %.1f s bound\n", h.max_running[0], jct,
          100 * bd.jct_s / jct, bd.jct_s);
  assert_int_equal(h.max_running[0], 83);
  assert_true(bd.jct_s / jct > 0.8);
  h_free(&h);
  sl_cluster_free(&cl);
}

/* A memory-bound job (zoo seed 1 case 44, smaller): sources of 3.3 MB on
 * stores of 48 MB, for a consumer of 2-row batches. streaming-plus holds
 * the sources to the stores where nodes have no disk, and spills rather
 * than leave CPUs idle where they have one. */
static void test_plus_spills_only_with_a_disk(void **state)
{
  (void)state;
  sl_workload w = {0};
  w.target_partition_bytes = 2e6;
  sl_op_spec *src = add_op(&w, "gen", SL_OP_SOURCE, 0.25, 0);
  src->tasks = 120;
  src->rows_per_task = 3;
  src->out_row_bytes = 1.11e6;
  src->time_per_task = 0.6;
  src->time_per_row = 2.64;
  sl_op_spec *b = add_op(&w, "batch", SL_OP_MAP_BATCHES, 1, 0);
  b->batch_size = 2;
  b->out_row_bytes = 0.278e6;
  b->time_per_row = 0.81;
  b->time_per_batch = 0.66;
  sl_plan plan;
  build(&plan, &w);
  int64_t spilled[2], sources[2];
  double jct[2];
  for (int disk = 0; disk < 2; disk++) {
    sl_cluster cl;
    one_node(&cl, 16, 0, 48e6);
    sl_cluster_free(&cl);
    cl.groups[0].count = 2;
    if (disk) {
      cl.groups[0].disks = 1;
      cl.groups[0].disk_read_bps = cl.groups[0].disk_write_bps = 500e6;
    }
    assert_int_equal(sl_cluster_expand(&cl), 0);
    sl_core_opts o = model("streaming-plus");
    harness h = {0};
    jct[disk] = h_run(&h, &plan, &cl, &o, 1e6);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-6);
    assert_true(h.max_store_over_budget <= 1e-6);
    spilled[disk] = h.inputs_spilled;
    sources[disk] = h.max_running[0];
    h_free(&h);
    sl_cluster_free(&cl);
  }
  fprintf(stderr, "  no disk: %.1f s, %lld spilled inputs, %lld sources at once; disk: %.1f s, %lld, %lld\n",
          jct[0], (long long)spilled[0], (long long)sources[0], jct[1], (long long)spilled[1],
          (long long)sources[1]);
  assert_int_equal(spilled[0], 0);
  assert_true(spilled[1] > 0);
  assert_true(sources[1] > sources[0]);
  assert_true(jct[1] < jct[0]);
}

/* streaming-noadapt splits the CPUs evenly between CPU operators, but an
 * operator's own concurrency cap still holds (zoo case 41 ran 10 tasks of
 * an operator capped at 3, and beat the bound). */
static void test_noadapt_keeps_concurrency_caps(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  w.ops[1].concurrency = 2;
  sl_plan plan;
  build(&plan, &w);
  /* static placement too gave an operator capped at 3 fourteen instances
   * (zoo case 167, whose run beat its bound) */
  const char *names[] = {"streaming-noadapt", "static", "stream"};
  for (int m = 0; m < 3; m++) {
    sl_cluster cl;
    many_nodes(&cl, 2, 8, 2, 50 * MB);
    sl_core_opts o = model(names[m]);
    harness h = {0};
    assert_true(h_run(&h, &plan, &cl, &o, 1e5) > 0);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-9);
    if (h.max_running[1] > 2)
      fail_msg("%s ran %d tasks of an operator capped at 2", names[m], h.max_running[1]);
    h_free(&h);
    sl_cluster_free(&cl);
  }
}

/* ------------------------------------------------------ accelerator pins */

/* 3 x (4 CPU, 1 GPU at half speed, "a10g") and 2 x (8 CPU, 2 GPU, "a100"). */
static void accel_nodes(sl_cluster *c)
{
  many_nodes(c, 3, 4, 1, 100 * MB);
  sl_cluster_free(c);
  c->groups[0].gpu_speed = 0.5;
  snprintf(c->groups[0].accelerator, SL_NAME_MAX, "a10g");
  c->groups[1] = c->groups[0];
  snprintf(c->groups[1].name, SL_NAME_MAX, "big");
  c->groups[1].count = 2;
  c->groups[1].cpu = 8;
  c->groups[1].gpu = 2;
  c->groups[1].gpu_speed = 1;
  snprintf(c->groups[1].accelerator, SL_NAME_MAX, "a100");
  c->ngroups = 2;
  assert_int_equal(sl_cluster_expand(c), 0);
}

/* read (CPU) -> encode (GPU) -> train (GPU) -> sink, 400 rows of 1 MB;
 * with @p pinned, encode on a10g and train on a100, as in Stable Diffusion
 * pre-training. */
static void encode_train(sl_workload *w, bool pinned)
{
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "encode-train");
  w->target_partition_bytes = 2 * MB;
  w->seed = 1;
  sl_op_spec *r = add_op(w, "read", SL_OP_SOURCE, 1, 0);
  r->tasks = 40;
  r->rows_per_task = 10;
  r->out_row_bytes = 1 * MB;
  r->time_per_row = 0.01;
  sl_op_spec *e = add_op(w, "encode", SL_OP_MAP_BATCHES, 0, 1);
  e->time_per_row = 0.02;
  e->batch_size = 4;
  e->out_row_bytes = 0.5 * MB;
  sl_op_spec *t = add_op(w, "train", SL_OP_MAP_BATCHES, 0, 1);
  t->time_per_row = 0.05;
  t->batch_size = 4;
  t->out_row_bytes = 100;
  add_op(w, "sink", SL_OP_SINK, 0, 0);
  if (pinned) {
    e->accel = (sl_accel_set){.n = 1, .names = {"a10g"}};
    t->accel = (sl_accel_set){.n = 1, .names = {"a100"}};
  }
}

/* Runs encode_train on accel_nodes under @p name, with @p nfail random
 * task failures and node losses (seeded by @p seed), then, when @p lose is
 * a node, that node lost at 2 s and back at 3 s. The harness counts
 * launches per group. */
static void run_pinned(harness *h, const char *name, bool pinned, uint64_t seed, int nfail, int lose)
{
  static sl_workload w;
  static sl_plan plan;
  sl_cluster cl;
  encode_train(&w, pinned);
  build(&plan, &w);
  accel_nodes(&cl);
  sl_core_opts o = model(name);
  o.checkpoint_interval_s = 2;
  uint64_t x = seed;
  for (int i = 0; i < nfail; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double t = (double)(x >> 40) / (double)(1ULL << 24) * 10.0;
    int node = (int)((x >> 10) % 5);
    if ((x >> 20) % 2) {
      h_push(h, t, H_FAIL_TASK_OF_OP, 0, (int)((x >> 30) % 3));
    } else {
      h_push(h, t, H_NODE_LOST, 0, node);
      h_push(h, t + 1.0, H_NODE_JOINED, 0, node);
    }
  }
  if (lose >= 0) {
    h_push(h, 2.0, H_NODE_LOST, 0, lose);
    h_push(h, 3.0, H_NODE_JOINED, 0, lose);
  }
  double jct = h_run(h, &plan, &cl, &o, 1e5);
  if (jct < 0)
    fprintf(stderr, "%s seed %llu failed: %d\n", name, (unsigned long long)seed, h->failed_code);
  assert_true(jct > 0);
  assert_float_equal(h_delivered(h), 400, 1e-9);
  assert_int_equal(h->slot_clashes, 0);
  sl_cluster_free(&cl);
}

static void assert_pins_held(const harness *h)
{
  assert_true(h->launches_on_group[1][0] > 0);
  assert_int_equal(h->launches_on_group[1][1], 0);
  assert_int_equal(h->launches_on_group[2][0], 0);
  assert_true(h->launches_on_group[2][1] > 0);
}

/* streaming-plus leaves a group to the operator it is worth most to:
 * encode pinned to the half-speed a10g GPUs needs all of them, and train,
 * which may run anywhere, runs twice as fast on the a100s. Taking an a10g
 * whenever encode's next batch had not come yet, train ran 20 of its
 * tasks there (at half speed) and held encode back; it now runs there
 * only once encode has no work left. */
static void test_plus_leaves_pinned_group(void **state)
{
  (void)state;
  static sl_workload w;
  static sl_plan plan;
  sl_cluster cl;
  encode_train(&w, false);
  w.ops[1].accel = (sl_accel_set){.n = 1, .names = {"a10g"}};
  build(&plan, &w);
  accel_nodes(&cl);
  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  /* the allocation streaming-plus reads: encode on every a10g GPU, train
   * on the a100s only, no a10g GPU idle */
  sl_bound rate;
  sl_bound_allocation alloc;
  assert_int_equal(sl_bound_rate_allocation(&plan, &cl, &rate, &alloc), 0);
  assert_float_equal(alloc.tasks[1][0], 3, 1e-6);
  assert_float_equal(alloc.tasks[1][1], 0, 1e-9);
  assert_float_equal(alloc.tasks[2][0], 0, 1e-9);
  assert_true(alloc.tasks[2][1] > 0 && alloc.tasks[2][1] <= 4 + 1e-9);
  assert_float_equal(alloc.idle_slots[0][1], 0, 1e-6);
  const char *names[2] = {"streaming", "streaming-plus"};
  double jct[2];
  int64_t train_on_a10g[2];
  for (int m = 0; m < 2; m++) {
    harness h = {0};
    sl_core_opts o = model(names[m]);
    jct[m] = h_run(&h, &plan, &cl, &o, 1e5);
    assert_true(jct[m] > 0);
    assert_float_equal(h_delivered(&h), 400, 1e-9);
    assert_int_equal(h.launches_on_group[1][1], 0); /* the pin holds */
    train_on_a10g[m] = h.launches_on_group[2][0];
    h_free(&h);
  }
  fprintf(stderr, "  bound %.2f s; streaming %.2f s (%lld train tasks on a10g), streaming-plus %.2f s (%lld)\n",
          b.jct_s, jct[0], (long long)train_on_a10g[0], jct[1], (long long)train_on_a10g[1]);
  assert_true(train_on_a10g[1] <= 2);
  assert_true(jct[1] < jct[0]);
  sl_cluster_free(&cl);
}

/* In every model a pinned operator's tasks land only on its groups: encode
 * (op 1) on a10g (group 0), train (op 2) on a100 (group 1), also when a
 * node of either group leaves and comes back (the static models place
 * their instances again) and under random failures. Unpinned, the same run puts some training on an
 * a10g: the pins are what keeps it off. */
static void test_pins_hold_in_every_model(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-noadapt", "streaming-nopart", "static", "batch", "stream"};
  const int lost[] = {-1, 0, 3}; /* none, an a10g node, an a100 node */
  for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++)
    for (unsigned l = 0; l < sizeof lost / sizeof lost[0]; l++) {
      harness h = {0};
      run_pinned(&h, models[m], true, 0, 0, lost[l]);
      assert_pins_held(&h);
      h_free(&h);
    }
  for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++)
    for (uint64_t seed = 1; seed <= 10; seed++) {
      harness h = {0};
      run_pinned(&h, models[m], true, seed, 4, -1);
      assert_pins_held(&h);
      h_free(&h);
    }
  harness h = {0};
  run_pinned(&h, "streaming", false, 0, 0, -1);
  assert_true(h.launches_on_group[2][0] > 0);
  h_free(&h);
}

/* Stable Diffusion in small: read (CPU, anywhere) -> encode (GPU, pinned to
 * the a10g nodes, whose stores are tight) -> train (GPU, pinned to the a100
 * node, the bottleneck) -> sink. Admission is cluster-wide, but a task
 * stores its outputs on its own node: unless placement looks at each
 * node's store, read tasks fill the a10g stores with their outputs, the
 * encoders there cannot store theirs, and each encoder emission waits for
 * the liveness rule (nothing running anywhere). The run must stay near
 * its bound instead of crawling. */
/* 40 source tasks a node; 10 MB stores on the a10g nodes (5 read tasks'
 * output): before per-node backpressure, 2.6x the bound. */
#define PNB_TASKS 400
#define PNB_STORE_MB 10
/* Checks one run's capacity account: every CPU-second of every node, from
 * the start to the end, is busy or idle for one reason, none negative. */
static void assert_idle_adds_up(const harness *h, double cpu_total, double jct)
{
  sl_idle_breakdown b;
  sl_core_idle(h->core, false, &b);
  double sum = b.busy_s;
  for (int r = 0; r < SL_IDLE_NREASONS; r++) {
    assert_true(b.idle_s[r] >= 0);
    sum += b.idle_s[r];
  }
  assert_true(b.busy_s > 0);
  assert_float_equal(b.capacity_s, cpu_total * jct, 1e-6 * b.capacity_s);
  assert_float_equal(sum, b.capacity_s, 1e-6 * b.capacity_s);
}

/* Where capacity went, in every model, with and without a lost node: the
 * account adds up, a failure-free run charges nothing to failure, and a
 * node lost for good charges at least its capacity from then to the end. */
static void test_idle_accounts_for_every_second(void **state)
{
  (void)state;
  const char *models[] = {"streaming", "streaming-plus", "static", "batch", "stream"};
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 2, 4, 2, 400 * MB);
  for (size_t m = 0; m < sizeof models / sizeof *models; m++)
    for (int lose = 0; lose < 2; lose++) {
      sl_core_opts o = model(models[m]);
      harness h = {0};
      if (lose)
        h_push(&h, 14.0, H_NODE_LOST, 0, 1);
      double jct = h_run(&h, &plan, &cl, &o, 1e5);
      assert_true(jct > 0);
      assert_idle_adds_up(&h, 8, jct);
      sl_idle_breakdown b;
      sl_core_idle(h.core, false, &b);
      if (lose)
        assert_true(b.idle_s[SL_IDLE_FAILURE] >= 4 * (jct - 14.0) - 1e-6);
      else
        assert_float_equal(b.idle_s[SL_IDLE_FAILURE], 0, 1e-12);
      h_free(&h);
    }
  sl_cluster_free(&cl);
}

/* The reasons name the cause: a pipeline fed by one source task at a time
 * leaves its map's CPUs idle for want of input; the batch model's stage
 * barrier holds the GPU's ready input back (admission); an engine's transfer time
 * moves out of busy. */
static void test_idle_names_the_cause(void **state)
{
  (void)state;
  sl_workload w;
  memset(&w, 0, sizeof w);
  snprintf(w.name, sizeof w.name, "starved");
  w.target_partition_bytes = 1 * MB;
  sl_op_spec *r = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
  r->tasks = 8;
  r->rows_per_task = 4;
  r->out_row_bytes = 0.25 * MB;
  r->time_per_row = 0.5;
  r->concurrency = 1;
  sl_op_spec *m = add_op(&w, "map", SL_OP_MAP, 1, 0);
  m->time_per_row = 0.01;
  m->out_row_bytes = 100;
  add_op(&w, "sink", SL_OP_SINK, 0, 0);
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  many_nodes(&cl, 1, 8, 0, 400 * MB);
  sl_core_opts o = model("streaming");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e5);
  assert_true(jct > 0);
  assert_idle_adds_up(&h, 8, jct);
  sl_idle_breakdown b;
  sl_core_idle(h.core, false, &b);
  assert_true(b.idle_s[SL_IDLE_INPUT] > 0.5 * b.capacity_s);

  double busy = b.busy_s;
  assert_int_equal(sl_core_note_transfer(h.core, 0, 0.25), 0);
  assert_int_equal(sl_core_note_transfer(h.core, 1u << 30, 0.25), SL_EINVAL);
  sl_core_idle(h.core, false, &b);
  assert_float_equal(b.idle_s[SL_IDLE_TRANSFER], 0.25, 1e-9);
  assert_float_equal(b.busy_s, busy - 0.25, 1e-9);
  h_free(&h);
  sl_cluster_free(&cl);

  sl_workload w9;
  fig9_small(&w9);
  sl_plan p9;
  build(&p9, &w9);
  many_nodes(&cl, 2, 4, 2, 400 * MB);
  double admission[2];
  const char *models[] = {"streaming", "batch"};
  for (int k = 0; k < 2; k++) {
    o = model(models[k]);
    harness hb = {0};
    assert_true(h_run(&hb, &p9, &cl, &o, 1e5) > 0);
    sl_core_idle(hb.core, true, &b); /* the GPU waits out the CPU stage */
    admission[k] = b.idle_s[SL_IDLE_ADMISSION];
    h_free(&hb);
  }
  assert_true(admission[1] > 0.1 * b.capacity_s && admission[1] > admission[0]);
  sl_cluster_free(&cl);
}

static void test_per_node_store_backpressure(void **state)
{
  (void)state;
  static sl_workload w;
  static sl_plan plan;
  memset(&w, 0, sizeof w);
  snprintf(w.name, sizeof w.name, "sd-small");
  w.target_partition_bytes = 1 * MB;
  w.seed = 1;
  sl_op_spec *r = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
  r->tasks = PNB_TASKS;
  r->rows_per_task = 10;
  r->out_row_bytes = 0.2 * MB;
  r->time_per_row = 0.01;
  sl_op_spec *e = add_op(&w, "encode", SL_OP_MAP_BATCHES, 0, 1);
  e->time_per_row = 0.02;
  e->batch_size = 4;
  e->out_row_bytes = 0.18 * MB;
  e->accel = (sl_accel_set){.n = 1, .names = {"a10g"}};
  sl_op_spec *t = add_op(&w, "train", SL_OP_MAP_BATCHES, 0, 1);
  t->time_per_row = 0.05;
  t->batch_size = 4;
  t->out_row_bytes = 100;
  t->accel = (sl_accel_set){.n = 1, .names = {"a100"}};
  add_op(&w, "sink", SL_OP_SINK, 0, 0);
  build(&plan, &w);

  sl_cluster cl;
  many_nodes(&cl, 4, 8, 1, PNB_STORE_MB * MB);
  sl_cluster_free(&cl);
  cl.groups[0].gpu_speed = 0.3;
  snprintf(cl.groups[0].accelerator, SL_NAME_MAX, "a10g");
  cl.groups[1] = cl.groups[0];
  snprintf(cl.groups[1].name, SL_NAME_MAX, "big");
  cl.groups[1].count = 1;
  cl.groups[1].gpu = 2;
  cl.groups[1].gpu_speed = 1;
  cl.groups[1].store_bytes = 2000 * MB;
  cl.groups[1].memory_bytes = 8000 * MB;
  snprintf(cl.groups[1].accelerator, SL_NAME_MAX, "a100");
  cl.ngroups = 2;
  assert_int_equal(sl_cluster_expand(&cl), 0);

  sl_bound b;
  assert_int_equal(sl_bound_compute(&plan, &cl, &b), 0);
  sl_core_opts o = model("streaming");
  harness h = {0};
  double jct = h_run(&h, &plan, &cl, &o, 1e6);
  fprintf(stderr, "  per-node stores: jct %.2f s, bound %.2f s (%.2fx)\n", jct, b.jct_s, jct / b.jct_s);
  assert_true(jct > 0);
  assert_float_equal(h_delivered(&h), PNB_TASKS * 10, 1e-9);
  assert_true(jct <= 1.25 * b.jct_s);
  /* per node: each peak within its own budget; the cluster's peak is one
   * node's, and that node is named */
  sl_core_stats st;
  sl_core_get_stats(h.core, &st);
  double most = 0;
  for (int n = 0; n < cl.nnodes; n++) {
    double peak = sl_core_node_store_peak(h.core, n);
    assert_true(peak <= sl_cluster_node_group(&cl, n)->store_bytes + 1e-6);
    most = fmax(most, peak);
  }
  assert_true(st.peak_store_node >= 0 && st.peak_store_node < cl.nnodes);
  assert_float_equal(sl_core_node_store_peak(h.core, st.peak_store_node), st.peak_store_bytes, 1e-6);
  assert_float_equal(most, st.peak_store_bytes, 1e-6);
  assert_float_equal(sl_core_node_store_peak(h.core, cl.nnodes), 0, 0); /* out of range */
  char name[64];
  sl_cluster_node_name(&cl, cl.nnodes - 1, name, sizeof name);
  assert_string_equal(name, "big.0");
  sl_cluster_node_name(&cl, 1, name, sizeof name);
  assert_string_equal(name, "n.1");
  sl_cluster_node_name(&cl, -1, name, sizeof name);
  assert_string_equal(name, "?");
  h_free(&h);
  sl_cluster_free(&cl);
}

/* A pin no group of the cluster satisfies is refused at construction,
 * not left to wait forever. */
static void test_pin_to_missing_label(void **state)
{
  (void)state;
  sl_workload w;
  encode_train(&w, true);
  w.ops[2].accel = (sl_accel_set){.n = 1, .names = {"h100"}};
  sl_plan plan;
  build(&plan, &w);
  sl_cluster cl;
  accel_nodes(&cl);
  sl_core_opts o = model("streaming");
  char err[256] = "";
  sl_core *c = sl_core_new(&plan, &cl, &o, err, sizeof err);
  assert_null(c);
  assert_non_null(strstr(err, "operator 'train' runs only on accelerator h100"));
  sl_cluster_free(&cl);
}

/* The same events give the same decisions: three runs of one plan with a
 * node lost make the same decision stream (its hash), not just the same
 * JCT, and each of them completes. */
static void test_deterministic(void **state)
{
  (void)state;
  sl_workload w;
  fig9_small(&w);
  sl_plan plan;
  build(&plan, &w);
  uint64_t first = 0;
  for (int rep = 0; rep < 3; rep++) {
    sl_cluster cl;
    many_nodes(&cl, 2, 4, 2, 50 * MB);
    sl_core_opts o = model("streaming");
    harness h = {0};
    h_push(&h, 5.0, H_NODE_LOST, 0, 1);
    double jct = h_run(&h, &plan, &cl, &o, 1e5);
    assert_true(jct > 0);
    assert_true(h.done && h.failed_code == 0);
    assert_float_equal(h_delivered(&h), plan.sink_rows, 1e-9);
    uint64_t hash = sl_core_decision_hash(h.core);
    if (rep == 0)
      first = hash;
    assert_true(hash == first);
    h_free(&h);
    sl_cluster_free(&cl);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_emit_share),
    cmocka_unit_test(test_algorithm2_worked_example),
    cmocka_unit_test(test_reservation_example),
    cmocka_unit_test(test_fig9_small_every_model_completes),
    cmocka_unit_test(test_streaming_near_bound),
    cmocka_unit_test(test_batch_stage_barrier),
    cmocka_unit_test(test_budget_too_small),
    cmocka_unit_test(test_stream_rolls_back_everything),
    cmocka_unit_test(test_random_failures_every_model),
    cmocka_unit_test(test_lineage_recovers_lost_partitions),
    cmocka_unit_test(test_all_to_all),
    cmocka_unit_test(test_reducers_share_rows_evenly),
    cmocka_unit_test(test_shuffle_strategies),
    cmocka_unit_test(test_homed_reducers_use_every_node),
    cmocka_unit_test(test_streaming_spills_before_a_shuffle),
    cmocka_unit_test(test_static_routes_rows_evenly),
    cmocka_unit_test(test_static_places_gpu_operators_where_they_fit),
    cmocka_unit_test(test_static_leaves_cpu_to_cpu_operators),
    cmocka_unit_test(test_static_fills_batches_under_memory_pressure),
    cmocka_unit_test(test_expanding_operator_does_not_starve),
    cmocka_unit_test(test_budget_counts_expansion),
    cmocka_unit_test(test_streaming_plus),
    cmocka_unit_test(test_kill_is_the_cores_choice),
    cmocka_unit_test(test_spread_follows_the_data),
    cmocka_unit_test(test_setup_once_per_slot),
    cmocka_unit_test(test_headroom_does_not_serialize),
    cmocka_unit_test(test_noadapt_keeps_concurrency_caps),
    cmocka_unit_test(test_coalescing_keeps_parallelism),
    cmocka_unit_test(test_plus_cuts_free_batches),
    cmocka_unit_test(test_plus_batches_by_speed),
    cmocka_unit_test(test_plus_starts_long_sources_early),
    cmocka_unit_test(test_plus_consumer_room_before_sources),
    cmocka_unit_test(test_plus_sources_run_ahead_where_stores_cannot_fill),
    cmocka_unit_test(test_plus_spills_only_with_a_disk),
    cmocka_unit_test(test_deterministic),
    cmocka_unit_test(test_plus_leaves_pinned_group),
    cmocka_unit_test(test_pins_hold_in_every_model),
    cmocka_unit_test(test_pin_to_missing_label),
    cmocka_unit_test(test_per_node_store_backpressure),
    cmocka_unit_test(test_idle_accounts_for_every_second),
    cmocka_unit_test(test_idle_names_the_cause),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
