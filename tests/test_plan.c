/* Physical plan: fusion rules, fused costs, expansion, typical tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/bound.h"
#include "models/cluster.h"
#include "models/core.h"
#include "models/error.h"
#include "models/plan.h"
#include "models/workload.h"

#define MB 1e6

static sl_op_spec *add_op(sl_workload *w, const char *name, sl_op_kind kind, double cpu, double gpu)
{
  sl_op_spec *s = &w->ops[w->nops];
  memset(s, 0, sizeof(*s));
  snprintf(s->name, sizeof(s->name), "%s", name);
  s->line = w->nops + 1;
  s->kind = kind;
  s->cpu = cpu;
  s->gpu = gpu;
  s->rows_out_per_row = 1.0;
  w->nops++;
  return s;
}

static void init_workload(sl_workload *w, const char *name)
{
  memset(w, 0, sizeof(*w));
  snprintf(w->name, sizeof(w->name), "%s", name);
  w->target_partition_bytes = 128 * MB;
}

static sl_op_spec *add_source(sl_workload *w, int64_t tasks, int64_t rows_per_task, double cpu)
{
  sl_op_spec *s = add_op(w, "src", SL_OP_SOURCE, cpu, 0);
  s->tasks = tasks;
  s->rows_per_task = rows_per_task;
  return s;
}

/* The paper's Fig. 9 pipeline: produce (1 CPU) -> transform (0.99 CPU)
 * -> inference (1 GPU), 100 MB rows. */
static void fig9(sl_workload *w)
{
  init_workload(w, "fig9");
  sl_op_spec *s = add_source(w, 160, 5, 1.0);
  snprintf(s->name, sizeof(s->name), "produce");
  s->time_per_task = 5.0;
  s->out_row_bytes = 100 * MB;
  s = add_op(w, "transform", SL_OP_MAP, 0.99, 0);
  s->time_per_row = 0.5;
  s->out_row_bytes = 100 * MB;
  s = add_op(w, "inference", SL_OP_MAP_BATCHES, 0, 1);
  s->time_per_row = 0.5;
  s->batch_size = 1;
  add_op(w, "sink", SL_OP_SINK, 0, 0);
}

static void build_ok(sl_plan *p, const sl_workload *w, int no_fusion)
{
  sl_plan_opts opts = {.no_fusion = no_fusion};
  char err[256] = "";
  int rc = sl_plan_build(p, w, &opts, err, sizeof(err));
  if (rc)
    fail_msg("sl_plan_build: %s (%s)", sl_strerror(rc), err);
}

static void test_same_shape_maps_fuse(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;

  init_workload(&w, "fuse");
  add_source(&w, 4, 10, 1.0);
  add_op(&w, "a", SL_OP_MAP, 1.0, 0);
  add_op(&w, "b", SL_OP_MAP, 1.0, 0);
  build_ok(&p, &w, 0);
  assert_int_equal(p.nops, 1);
  assert_string_equal(p.ops[0].name, "src->a->b");
  assert_int_equal(p.ops[0].kind, SL_OP_SOURCE);
  assert_int_equal(p.ops[0].first, 0);
  assert_int_equal(p.ops[0].nfused, 3);
  assert_int_equal(p.source_rows, 40);

  build_ok(&p, &w, 1);
  assert_int_equal(p.nops, 3);
  assert_string_equal(p.ops[1].name, "a");
  assert_int_equal(p.ops[2].first, 2);
}

static void test_no_fusion_across_shapes(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;

  fig9(&w);
  build_ok(&p, &w, 0);
  /* 1 vs 0.99 CPU keep produce and transform apart; the sink is no op. */
  assert_int_equal(p.nops, 3);
  assert_string_equal(p.ops[0].name, "produce");
  assert_string_equal(p.ops[1].name, "transform");
  assert_string_equal(p.ops[2].name, "inference");
  assert_int_equal(p.ops[2].kind, SL_OP_MAP_BATCHES);
  assert_int_equal(p.source_rows, 800);
  assert_true(fabs(p.sink_rows - 800) < 1e-9);
  assert_true(fabs(p.ops[1].in_row_bytes - 100 * MB) < 1);
  assert_true(fabs(p.ops[0].in_row_bytes) < 1e-12);
}

static void pin(sl_op_spec *s, const char *a, const char *b)
{
  memset(&s->accel, 0, sizeof(s->accel));
  snprintf(s->accel.names[s->accel.n++], SL_NAME_MAX, "%s", a);
  if (b)
    snprintf(s->accel.names[s->accel.n++], SL_NAME_MAX, "%s", b);
}

/* A fused task runs on one node, so maps pinned differently stay apart;
 * the same labels in another order still fuse. The pin reaches the plan. */
static void test_no_fusion_across_pins(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;
  char buf[2048];

  init_workload(&w, "pins");
  add_source(&w, 4, 10, 1.0);
  pin(add_op(&w, "a", SL_OP_MAP, 1.0, 0), "a10g", "a100");
  pin(add_op(&w, "b", SL_OP_MAP, 1.0, 0), "a100", "a10g");
  pin(add_op(&w, "c", SL_OP_MAP, 1.0, 0), "a100", NULL);
  build_ok(&p, &w, 0);
  assert_int_equal(p.nops, 3);
  assert_string_equal(p.ops[0].name, "src");
  assert_int_equal(p.ops[0].accel.n, 0);
  assert_string_equal(p.ops[1].name, "a->b");
  assert_int_equal(p.ops[1].accel.n, 2);
  assert_string_equal(p.ops[2].name, "c");
  assert_int_equal(p.ops[2].accel.n, 1);
  assert_string_equal(p.ops[2].accel.names[0], "a100");

  FILE *f = tmpfile();
  assert_non_null(f);
  sl_plan_print(&p, NULL, f);
  rewind(f);
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  buf[n] = '\0';
  fclose(f);
  assert_non_null(strstr(buf, "1 CPU@a10g,a100"));
  assert_non_null(strstr(buf, "1 CPU@a100"));
}

static void test_no_fusion_into_map_batches(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;

  init_workload(&w, "mb");
  add_source(&w, 2, 2, 1.0);
  add_op(&w, "batched", SL_OP_MAP_BATCHES, 1.0, 0);
  add_op(&w, "after", SL_OP_MAP, 1.0, 0);
  sl_op_spec *capped = add_op(&w, "capped", SL_OP_MAP, 1.0, 0);
  capped->concurrency = 2;
  add_op(&w, "last", SL_OP_MAP, 1.0, 0);
  build_ok(&p, &w, 0);
  /* Neither into a map_batches, nor after one, nor into/out of a capped map. */
  assert_int_equal(p.nops, 5);
  assert_string_equal(p.ops[1].name, "batched");
  assert_string_equal(p.ops[2].name, "after");
  assert_string_equal(p.ops[4].name, "last");
}

static void test_fused_costs(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;

  init_workload(&w, "costs");
  sl_op_spec *s = add_source(&w, 4, 10, 1.0);
  s->time_per_task = 2.0;
  s->time_per_row = 0.1;
  s->out_row_bytes = 1000;
  s = add_op(&w, "a", SL_OP_MAP, 1.0, 0);
  s->time_per_row = 0.2;
  s->time_per_byte = 1e-3; /* 1000-byte input rows: +1 s per row */
  s->rows_out_per_row = 3;
  s->out_row_bytes = 500;
  s = add_op(&w, "b", SL_OP_MAP, 1.0, 0);
  s->time_per_row = 0.05; /* reached by 3 rows per generated row */
  s->time_per_task = 1.0;
  build_ok(&p, &w, 0);

  const sl_pop *o = &p.ops[0];
  assert_int_equal(p.nops, 1);
  assert_true(fabs(o->time_per_task - 3.0) < 1e-12);
  assert_true(fabs(o->time_per_row - (0.1 + 1.2 + 0.15)) < 1e-12);
  assert_true(fabs(o->rows_out_per_row - 3) < 1e-12);
  assert_true(fabs(o->out_row_bytes - 500) < 1e-12); /* b keeps a's size */
  assert_true(fabs(o->alpha_rows - 3) < 1e-12);
  assert_true(fabs(sl_plan_task_time(o, 10) - 17.5) < 1e-12);
  assert_true(fabs(sl_plan_task_out_rows(o, 10) - 30) < 1e-12);
  assert_true(fabs(p.sink_rows - 120) < 1e-9);
  /* Per source row: (2 + 1 + 14.5) / 10 generated rows. */
  assert_true(fabs(sl_plan_work_per_source_row(&p, 0) - 1.75) < 1e-12);
}

static void test_alpha_with_expansion(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;

  init_workload(&w, "expand");
  w.target_partition_bytes = 4 * MB;
  sl_op_spec *s = add_source(&w, 10, 1, 1.0);
  s->out_row_bytes = 10 * MB;
  s = add_op(&w, "decode", SL_OP_MAP, 0.5, 0); /* one video -> 8 frames */
  s->rows_out_per_row = 8;
  s->out_row_bytes = 1 * MB;
  s->time_per_row = 0.4;
  s = add_op(&w, "model", SL_OP_MAP_BATCHES, 0, 1);
  s->rows_out_per_row = 0.25;
  s->batch_size = 16;
  s->time_per_batch = 0.8;
  s = add_op(&w, "post", SL_OP_MAP, 1, 0);
  s->time_per_row = 0.1;
  add_op(&w, "sink", SL_OP_SINK, 0, 0);
  build_ok(&p, &w, 0);

  assert_int_equal(p.nops, 4);
  assert_true(fabs(p.ops[0].alpha_rows - 1) < 1e-12);
  assert_true(fabs(p.ops[1].alpha_rows - 8) < 1e-12);
  assert_true(fabs(p.ops[2].alpha_rows - 2) < 1e-12);
  assert_true(fabs(p.ops[3].alpha_rows - 2) < 1e-12);
  assert_true(fabs(p.sink_rows - 20) < 1e-12);
  assert_true(fabs(p.ops[2].in_row_bytes - 1 * MB) < 1);
  assert_true(fabs(p.ops[3].in_row_bytes - 1 * MB) < 1); /* model keeps the size */

  /* decode: 10 MB rows, 4 MB target, but a source task yields only 1 row. */
  assert_true(fabs(sl_plan_typical_rows(&p, 1) - 1) < 1e-12);
  assert_true(fabs(sl_plan_expected_tasks(&p, 1) - 10) < 1e-12);
  /* model: one batch of 16 of the 80 frames. */
  assert_true(fabs(sl_plan_typical_rows(&p, 2) - 16) < 1e-12);
  assert_true(fabs(sl_plan_expected_tasks(&p, 2) - 5) < 1e-12);
  /* 0.8 s per 16 frames, 8 frames per source row. */
  assert_true(fabs(sl_plan_work_per_source_row(&p, 2) - 0.4) < 1e-12);
  /* post: 4 rows of 1 MB make a partition; 16 * 0.25 = 4 come per batch. */
  assert_true(fabs(sl_plan_typical_rows(&p, 3) - 4) < 1e-12);
  assert_true(fabs(sl_plan_rows_in(&p, 3) - 20) < 1e-12);
}

static void test_typical_rows_fig9(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;

  fig9(&w);
  build_ok(&p, &w, 0);
  assert_true(fabs(sl_plan_typical_rows(&p, 0) - 5) < 1e-12);
  /* 128 MB target over 100 MB rows: a partition closes after 2 rows. */
  assert_true(fabs(sl_plan_typical_rows(&p, 1) - 2) < 1e-12);
  assert_true(fabs(sl_plan_expected_tasks(&p, 0) - 160) < 1e-12);
  assert_true(fabs(sl_plan_expected_tasks(&p, 1) - 400) < 1e-12);
  assert_true(fabs(sl_plan_expected_tasks(&p, 2) - 800) < 1e-12);
  assert_true(fabs(sl_plan_work_per_source_row(&p, 0) - 1.0) < 1e-12);
  assert_true(fabs(sl_plan_work_per_source_row(&p, 1) - 0.5) < 1e-12);
}

static void expect_einval(sl_workload *w, const char *needle)
{
  sl_plan p;
  char err[256] = "";
  assert_int_equal(sl_plan_build(&p, w, NULL, err, sizeof(err)), SL_EINVAL);
  if (!strstr(err, needle))
    fail_msg("message '%s' lacks '%s'", err, needle);
}

static void test_errors(void **state)
{
  (void)state;
  sl_workload w;

  init_workload(&w, "bad");
  add_op(&w, "m", SL_OP_MAP, 1, 0);
  expect_einval(&w, "start with a source");

  init_workload(&w, "bad");
  add_source(&w, 1, 1, 1);
  add_op(&w, "sink", SL_OP_SINK, 0, 0);
  add_op(&w, "m", SL_OP_MAP, 1, 0);
  expect_einval(&w, "sink must be the last");

  init_workload(&w, "bad");
  add_source(&w, 1, 1, 1);
  add_source(&w, 1, 1, 1);
  expect_einval(&w, "only the first");

  init_workload(&w, "bad");
  add_source(&w, 0, 1, 1);
  expect_einval(&w, "tasks");

  init_workload(&w, "bad");
  expect_einval(&w, "operators");

  /* A NULL error buffer is allowed. */
  sl_plan p;
  assert_int_equal(sl_plan_build(&p, &w, NULL, NULL, 0), SL_EINVAL);
}

static void test_print(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;
  sl_cluster c;
  char buf[4096];

  fig9(&w);
  build_ok(&p, &w, 0);
  memset(&c, 0, sizeof(c));
  snprintf(c.name, sizeof(c.name), "m6i");
  c.ngroups = 1;
  c.groups[0].count = 1;
  c.groups[0].cpu = 8;
  c.groups[0].gpu = 4;
  c.groups[0].cpu_speed = c.groups[0].gpu_speed = 1;
  assert_int_equal(sl_cluster_expand(&c), 0);

  FILE *f = tmpfile();
  assert_non_null(f);
  sl_plan_print(&p, &c, f);
  rewind(f);
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  buf[n] = '\0';
  fclose(f);
  sl_cluster_free(&c);

  assert_non_null(strstr(buf, "fig9"));
  assert_non_null(strstr(buf, "m6i"));
  assert_non_null(strstr(buf, "0.99 CPU"));
  assert_non_null(strstr(buf, "1 GPU"));
  assert_non_null(strstr(buf, "map_batches"));
  assert_non_null(strstr(buf, "100 MB"));
  /* A header and one line per physical operator at least. */
  int lines = 0;
  for (char *q = buf; *q; q++)
    lines += *q == '\n';
  assert_true(lines >= 2 + p.nops);
}

/* The one output cut both engines make: the fewest rows that reach the
 * target, at least one; no target, one partition. Rows of 1.5 MB against
 * 4 MB take three (the executor once took two and added until past). */
static void test_rows_per_part(void **state)
{
  (void)state;
  sl_pop op;
  memset(&op, 0, sizeof op);
  op.out_row_bytes = 1.5e6;
  assert_int_equal(sl_plan_rows_per_part(&op, 4e6), 3);
  op.out_row_bytes = 1e6;
  assert_int_equal(sl_plan_rows_per_part(&op, 4e6), 4);
  op.out_row_bytes = 16e6;
  assert_int_equal(sl_plan_rows_per_part(&op, 4e6), 1);
  op.out_row_bytes = 0;
  assert_int_equal(sl_plan_rows_per_part(&op, 4e6), 4000000);
  assert_true(sl_plan_rows_per_part(&op, INFINITY) == INT64_MAX);
  assert_true(sl_plan_rows_per_part(&op, 0) == INT64_MAX);
}

/* A source of @p tasks tasks of @p rows rows of @p row_bytes, then a
 * map_batches of batches of @p batch (0: a plain map of 0.5 CPU). */
static void sized(sl_workload *w, sl_plan *p, int64_t tasks, int64_t rows, double row_bytes, double target,
                  int batch)
{
  init_workload(w, "sized");
  w->target_partition_bytes = target;
  sl_op_spec *s = add_source(w, tasks, rows, 1.0);
  s->out_row_bytes = row_bytes;
  s->time_per_row = 0.01;
  s = add_op(w, "next", batch ? SL_OP_MAP_BATCHES : SL_OP_MAP, batch ? 0 : 0.5, batch ? 1 : 0);
  s->batch_size = batch;
  s->time_per_row = 0.01;
  char err[256];
  assert_int_equal(sl_plan_build(p, w, NULL, err, sizeof err), 0);
}

static sl_sizing_rule rule_of(const char *model, double target)
{
  sl_core_opts o;
  sl_core_opts_default(&o);
  assert_int_equal(sl_core_opts_set_model(&o, model), 0);
  sl_sizing_rule r;
  sl_core_opts_sizing(&o, target, &r);
  return r;
}

static void test_batch_gains(void **state)
{
  (void)state;
  assert_true(sl_plan_batch_gains(5, 5, 32));   /* 10 rows in one batch beat 5 */
  assert_false(sl_plan_batch_gains(30, 5, 32)); /* 35 need two batches of 17.5 */
  assert_false(sl_plan_batch_gains(32, 1, 32)); /* a whole batch takes no more */
  assert_true(sl_plan_batch_gains(14, 2, 32));
}

/* The bug: plan said one batch of 32 rows per task and 15,625 tasks, the
 * engines ran whole upstream partitions gathered toward whole batches. */
static void test_task_sizing_follows_partitions(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;
  sl_task_sizing z;
  /* video: 5-row source tasks of 9.6 MB rows under 128 MB: partitions of 5 */
  sized(&w, &p, 100, 5, 9633792, 128 * MB, 32);
  sl_sizing_rule r = rule_of("streaming", p.target_partition_bytes);
  sl_plan_task_sizing(&p, 1, &r, &z);
  assert_float_equal(z.cut_rows, 14, 0);
  assert_float_equal(z.part_rows, 5, 0);
  assert_float_equal(z.rows, 30, 1e-9);
  assert_float_equal(z.parts, 6, 1e-9);
  assert_float_equal(z.tasks, 17, 0);
  r = rule_of("streaming-nopart", p.target_partition_bytes);
  sl_plan_task_sizing(&p, 1, &r, &z);
  assert_float_equal(z.rows, 5, 0);
  assert_float_equal(z.tasks, 100, 0);
  /* cuts of 14 and the rest of each 16-row task: 14 + 2 + 14 + 2 = 32 */
  sized(&w, &p, 4, 16, 602112, 8 * MB, 32);
  r = rule_of("streaming", p.target_partition_bytes);
  sl_plan_task_sizing(&p, 1, &r, &z);
  assert_float_equal(z.cut_rows, 14, 0);
  assert_float_equal(z.part_rows, 8, 1e-9);
  assert_float_equal(z.rows, 32, 1e-9);
  assert_float_equal(z.tasks, 2, 0);
  /* batch: one partition per upstream task, 16 rows: two make a batch */
  r = rule_of("batch", p.target_partition_bytes);
  sl_plan_task_sizing(&p, 1, &r, &z);
  assert_true(isinf(z.cut_rows));
  assert_float_equal(z.part_rows, 16, 0);
  assert_float_equal(z.rows, 32, 1e-9);
  /* partitions bigger than a batch: one each, whatever the batch */
  sized(&w, &p, 10, 1000, 196608, 128 * MB, 128);
  r = rule_of("streaming", p.target_partition_bytes);
  sl_plan_task_sizing(&p, 1, &r, &z);
  assert_float_equal(z.cut_rows, 652, 0); /* 128 MB of 196,608-byte rows */
  assert_float_equal(z.rows_min, 348, 0);
  assert_float_equal(z.rows_max, 652, 0);
  assert_float_equal(z.rows, 500, 1e-9);
  assert_float_equal(z.tasks, 20, 0);
}

/* A plain map under streaming batch gathers what is queued when it starts:
 * its count is a range; batch and stream keep one partition per task. */
static void test_task_sizing_of_a_gathering_map(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;
  sl_task_sizing z;
  sized(&w, &p, 200, 3, 10e3, 100e3, 0);
  sl_sizing_rule r = rule_of("streaming", p.target_partition_bytes);
  sl_plan_task_sizing(&p, 1, &r, &z);
  assert_float_equal(z.rows, 9, 1e-9);
  assert_float_equal(z.tasks, 67, 0);
  assert_float_equal(z.tasks_max, 200, 0);
  const char *one_each[] = {"batch", "stream", "streaming-nopart"};
  for (int m = 0; m < 3; m++) {
    r = rule_of(one_each[m], p.target_partition_bytes);
    sl_plan_task_sizing(&p, 1, &r, &z);
    assert_float_equal(z.rows, 3, 0);
    assert_float_equal(z.tasks, 200, 0);
  }
  char buf[4096];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  r = rule_of("streaming", p.target_partition_bytes);
  sl_plan_print_sized(&p, NULL, &r, "streaming", f);
  fclose(f);
  assert_non_null(strstr(buf, "67-200*"));
  assert_non_null(strstr(buf, "decided\n    at run time, from 67 tasks"));
}

/* A run at a time scale is the plan of faster operators on faster links
 * (sluice run --time-scale): every modelled time scales, bandwidths by the
 * inverse, and the bound with them, whatever limits it (here the storage
 * link, NICs and slots all within a factor of two of each other). */
static void test_time_scale(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p, scaled;
  init_workload(&w, "scaled");
  w.target_partition_bytes = 4 * MB;
  sl_op_spec *s = add_source(&w, 40, 10, 1.0);
  s->time_per_task = 0.5;
  s->time_per_row = 0.1;
  s->out_row_bytes = 2 * MB;
  s->read_bytes_per_row = 1 * MB;
  s = add_op(&w, "gpu", SL_OP_MAP_BATCHES, 0, 1);
  s->time_per_row = 0.05;
  s->time_per_batch = 0.2;
  s->time_setup = 1.0;
  s->batch_size = 4;
  s->out_row_bytes = 1 * MB;
  add_op(&w, "sink", SL_OP_SINK, 0, 0);
  build_ok(&p, &w, 0);
  scaled = p;
  sl_plan_scale_time(&scaled, 0.25);
  for (int i = 0; i < p.nops; i++) {
    assert_true(fabs(scaled.ops[i].time_per_task - 0.25 * p.ops[i].time_per_task) < 1e-12);
    assert_true(fabs(scaled.ops[i].time_per_row - 0.25 * p.ops[i].time_per_row) < 1e-12);
    assert_true(fabs(scaled.ops[i].time_per_batch - 0.25 * p.ops[i].time_per_batch) < 1e-12);
    assert_true(fabs(scaled.ops[i].time_setup - 0.25 * p.ops[i].time_setup) < 1e-12);
    assert_true(fabs(sl_plan_task_time(&scaled.ops[i], 7) - 0.25 * sl_plan_task_time(&p.ops[i], 7)) < 1e-12);
  }

  sl_cluster c;
  memset(&c, 0, sizeof c);
  snprintf(c.name, sizeof c.name, "two");
  c.ngroups = 2;
  c.storage_bps = 80 * MB;
  c.storage_latency_s = 0.02;
  c.latency_s = 0.001;
  c.backbone_bps = 1e9;
  snprintf(c.groups[0].name, sizeof c.groups[0].name, "cpu");
  c.groups[0].count = 2;
  c.groups[0].cpu = 8;
  c.groups[0].nic_bps = 50 * MB;
  c.groups[0].disks = 1;
  c.groups[0].disk_read_bps = c.groups[0].disk_write_bps = 200 * MB;
  snprintf(c.groups[1].name, sizeof c.groups[1].name, "gpu");
  c.groups[1].count = 1;
  c.groups[1].gpu = 2;
  c.groups[1].nic_bps = 100 * MB;
  for (int g = 0; g < 2; g++)
    c.groups[g].memory_bytes = c.groups[g].store_bytes = 1e9;
  sl_cluster fast = c;
  sl_cluster_scale_time(&fast, 0.25);
  assert_true(fabs(fast.storage_bps - 320 * MB) < 1e-3);
  assert_true(fabs(fast.backbone_bps - 4e9) < 1e-3);
  assert_true(fabs(fast.storage_latency_s - 0.005) < 1e-12);
  assert_true(fabs(fast.latency_s - 0.00025) < 1e-12);
  assert_true(fabs(fast.groups[0].nic_bps - 200 * MB) < 1e-3);
  assert_true(fabs(fast.groups[0].disk_read_bps - 800 * MB) < 1e-3);
  assert_true(fabs(fast.groups[0].disk_write_bps - 800 * MB) < 1e-3);
  assert_true(fabs(fast.groups[1].nic_bps - 400 * MB) < 1e-3);

  assert_int_equal(sl_cluster_expand(&c), 0);
  assert_int_equal(sl_cluster_expand(&fast), 0);
  sl_bound b, bf;
  assert_int_equal(sl_bound_compute(&p, &c, &b), 0);
  assert_int_equal(sl_bound_compute(&scaled, &fast, &bf), 0);
  assert_true(b.jct_s > 0);
  assert_true(fabs(bf.jct_s - 0.25 * b.jct_s) < 1e-6 * b.jct_s);
  assert_true(fabs(bf.throughput_rows_s - 4 * b.throughput_rows_s) < 1e-6 * b.throughput_rows_s);
  sl_cluster_free(&c);
  sl_cluster_free(&fast);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_same_shape_maps_fuse),
    cmocka_unit_test(test_rows_per_part),
    cmocka_unit_test(test_no_fusion_across_shapes),
    cmocka_unit_test(test_no_fusion_across_pins),
    cmocka_unit_test(test_no_fusion_into_map_batches),
    cmocka_unit_test(test_fused_costs),
    cmocka_unit_test(test_alpha_with_expansion),
    cmocka_unit_test(test_typical_rows_fig9),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_print),
    cmocka_unit_test(test_batch_gains),
    cmocka_unit_test(test_task_sizing_follows_partitions),
    cmocka_unit_test(test_task_sizing_of_a_gathering_map),
    cmocka_unit_test(test_time_scale),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
