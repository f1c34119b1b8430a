/* AutoOrder: row sizes that follow the order, the orders a group allows,
 * and the choice by the bound where sorting by inflation is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/bound.h"
#include "models/cluster.h"
#include "models/error.h"
#include "models/plan.h"
#include "models/reorder.h"
#include "models/workload.h"

#define MB 1e6

static sl_op_spec *add_op(sl_workload *w, const char *name, sl_op_kind kind, const char *group)
{
  sl_op_spec *s = &w->ops[w->nops++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  snprintf(s->reorder_group, sizeof s->reorder_group, "%s", group ? group : "");
  s->kind = kind;
  s->cpu = 1;
  s->rows_out_per_row = 1;
  return s;
}

/* 2,000 rows of 1 MB: the image pipeline of the spec's documentation. */
static void image_pipeline(sl_workload *w)
{
  memset(w, 0, sizeof *w);
  snprintf(w->name, sizeof w->name, "images");
  w->target_partition_bytes = 16 * MB;
  sl_op_spec *src = add_op(w, "read", SL_OP_SOURCE, NULL);
  src->tasks = 100;
  src->rows_per_task = 20;
  src->out_row_bytes = 1 * MB;
  src->time_per_row = 0.005;
  sl_op_spec *norm = add_op(w, "normalize", SL_OP_MAP, "aug");
  norm->inflation = 4;
  norm->time_per_byte = 0.010 / MB;
  sl_op_spec *aug = add_op(w, "augment", SL_OP_MAP, "aug");
  aug->time_per_byte = 0.020 / MB;
  sl_op_spec *crop = add_op(w, "crop", SL_OP_MAP, "aug");
  crop->inflation = 0.25;
  crop->time_per_byte = 0.001 / MB;
  sl_op_spec *train = add_op(w, "train", SL_OP_MAP_BATCHES, NULL);
  train->cpu = 0;
  train->gpu = 1;
  train->batch_size = 32;
  train->time_per_row = 0.002;
}

static void small_cluster(sl_cluster *c, double cpu, double gpu)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "two");
  sl_node_group *g = &c->groups[c->ngroups++];
  snprintf(g->name, sizeof g->name, "n");
  g->count = 2;
  g->cpu = cpu;
  g->gpu = gpu;
  g->cpu_speed = g->gpu_speed = 1;
  g->memory_bytes = g->store_bytes = 8e9;
}

static void format(const sl_workload *w, const int *order, char *buf, size_t n)
{
  sl_reorder_format(w, order, buf, n);
}

static void choose(const sl_workload *w, const sl_cluster *c, sl_reorder_result *r)
{
  char err[512] = "";
  int rc = sl_reorder_choose(w, c, r, err, sizeof err);
  if (rc)
    fail_msg("sl_reorder_choose: %s (%s)", sl_strerror(rc), err);
}

/* A row's size follows its input through inflation, is fixed by
 * out_row_bytes, or is kept; the plan reads the same sizes. */
static void test_row_sizes_follow_the_order(void **state)
{
  (void)state;
  sl_workload w, r;
  image_pipeline(&w);
  assert_true(fabs(sl_workload_out_row_bytes(&w, 1) - 4 * MB) < 1e-6);
  assert_true(fabs(sl_workload_out_row_bytes(&w, 2) - 4 * MB) < 1e-6);
  assert_true(fabs(sl_workload_out_row_bytes(&w, 3) - 1 * MB) < 1e-6);
  assert_true(fabs(sl_reorder_inflation(&w, 1) - 4) < 1e-12);
  assert_true(fabs(sl_reorder_inflation(&w, 3) - 0.25) < 1e-12);
  int order[] = {0, 3, 2, 1, 4}; /* crop, augment, normalize */
  sl_workload_reorder(&w, order, &r);
  assert_true(fabs(sl_workload_out_row_bytes(&r, 1) - 0.25 * MB) < 1e-6);
  assert_true(fabs(sl_workload_out_row_bytes(&r, 3) - 1 * MB) < 1e-6);
  /* an absolute size stays absolute wherever the operator goes */
  r.ops[2].out_row_bytes = 3 * MB;
  assert_true(fabs(sl_workload_out_row_bytes(&r, 2) - 3 * MB) < 1e-6);
  assert_true(fabs(sl_workload_out_row_bytes(&r, 3) - 12 * MB) < 1e-6);
  sl_plan p;
  sl_plan_opts po = {.no_fusion = 1};
  char err[256];
  assert_int_equal(sl_plan_build(&p, &r, &po, err, sizeof err), 0);
  assert_true(fabs(p.ops[3].in_row_bytes - 3 * MB) < 1e-6);
  assert_true(fabs(p.ops[3].out_row_bytes - 12 * MB) < 1e-6);
  /* per-MB costs are charged on the bytes the operator now reads */
  assert_true(fabs(p.ops[3].time_per_row - 0.010 * 3) < 1e-9);
}

/* Three operators that move make six orders; data-reducing first wins,
 * and here that is also Pecan's rule. Worked out by hand: the maps fuse
 * into the source; as written a row costs 5 + 10 + 80 + 4 = 99 ms, a split
 * of 20 rows 1.98 s, and 100 splits on 16 CPUs take 7 whole waves,
 * 13.86 s, then the last row's 2 ms on a GPU (the area says 12.375 s).
 * Crop first, a row costs 5 + 1 + 5 + 2.5 = 13.5 ms: 7 waves of 0.27 s,
 * under the GPUs' 2 ms a row on 2 GPUs, 2 s. */
static void test_data_reducing_first(void **state)
{
  (void)state;
  sl_workload w;
  sl_cluster c;
  image_pipeline(&w);
  small_cluster(&c, 8, 1);
  sl_reorder_result r;
  choose(&w, &c, &r);
  assert_int_equal(r.n, 6);
  char s[256];
  format(&w, r.orders[0].order, s, sizeof s);
  assert_string_equal(s, "read > crop > augment > normalize > train");
  assert_int_equal(r.pecan_at, 0);
  assert_int_equal(r.written_at, 5);
  /* 2 s, and the GPUs wait for the first row's 13.5 ms */
  assert_true(fabs(r.orders[0].jct_s - 2.0135) < 1e-3);
  assert_true(fabs(r.orders[r.written_at].jct_s - (7 * 20 * 0.099 + 0.002)) < 1e-6);
  for (int i = 1; i < r.n; i++)
    assert_true(r.orders[i].jct_s >= r.orders[i - 1].jct_s - 1e-9);
  sl_reorder_result_free(&r);
}

/* Sorting by inflation puts the GPU filter first, because it halves the
 * bytes; but the GPUs are the bottleneck, and the filter's cost per MB
 * then falls on every byte, while the CPU's shrink (0.8) first saves the
 * GPUs a fifth of their work. The bound sees it; the sort does not. */
static void test_bound_beats_inflation_sort(void **state)
{
  (void)state;
  sl_workload w;
  memset(&w, 0, sizeof w);
  snprintf(w.name, sizeof w.name, "gpu-bound");
  w.target_partition_bytes = 16 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, NULL);
  src->tasks = 100;
  src->rows_per_task = 10;
  src->out_row_bytes = 1 * MB;
  sl_op_spec *gf = add_op(&w, "gpu_filter", SL_OP_MAP, "g");
  gf->cpu = 0;
  gf->gpu = 1;
  gf->inflation = 0.5;
  gf->time_per_byte = 0.010 / MB;
  sl_op_spec *shrink = add_op(&w, "cpu_shrink", SL_OP_MAP, "g");
  shrink->inflation = 0.8;
  shrink->time_per_byte = 0.001 / MB;
  sl_cluster c;
  small_cluster(&c, 8, 1);
  sl_reorder_result r;
  choose(&w, &c, &r);
  assert_int_equal(r.n, 2);
  char s[256];
  format(&w, r.orders[0].order, s, sizeof s);
  assert_string_equal(s, "read > cpu_shrink > gpu_filter");
  assert_int_equal(r.pecan_at, 1);
  assert_int_equal(r.written_at, 1);
  /* 1,000 rows x 10 ms on 2 GPUs = 5 s; shrunk first, 8 ms: 4 s */
  /* and a row's first or last ms on the CPU, which the GPUs wait for */
  assert_true(fabs(r.orders[1].jct_s - 5.0) < 2e-3);
  assert_true(fabs(r.orders[0].jct_s - 4.0) < 2e-3);
  assert_true(r.orders[0].jct_s < r.orders[1].jct_s);
  sl_reorder_result_free(&r);
}

/* keep_position pins an operator; the others move around it. Two groups
 * multiply. Equal bounds keep the spec's order. */
static void test_pins_groups_and_ties(void **state)
{
  (void)state;
  sl_workload w;
  memset(&w, 0, sizeof w);
  w.target_partition_bytes = 16 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, NULL);
  src->tasks = 10;
  src->rows_per_task = 10;
  src->out_row_bytes = 1 * MB;
  const char *names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; i++)
    add_op(&w, names[i], SL_OP_MAP, "g")->time_per_row = 0.01;
  w.ops[2].keep_position = 1; /* b */
  add_op(&w, "mid", SL_OP_MAP, NULL)->time_per_row = 0.01;
  add_op(&w, "x", SL_OP_MAP, "h")->time_per_row = 0.01;
  add_op(&w, "y", SL_OP_MAP, "h")->time_per_row = 0.01;
  add_op(&w, "out", SL_OP_SINK, NULL);
  sl_cluster c;
  small_cluster(&c, 4, 0);
  sl_reorder_result r;
  choose(&w, &c, &r);
  assert_int_equal(r.n, 3 * 2 * 1 * 2); /* a, c, d move (3!); x, y (2!) */
  for (int i = 0; i < r.n; i++)
    assert_int_equal(r.orders[i].order[2], 2); /* b never moves */
  assert_int_equal(r.written_at, 0);           /* every bound equal: as written */
  char s[256];
  format(&w, r.orders[0].order, s, sizeof s);
  assert_string_equal(s, "read > a > b > c > d > mid > x > y");
  sl_reorder_result_free(&r);
}

static void test_refusals(void **state)
{
  (void)state;
  sl_workload w;
  memset(&w, 0, sizeof w);
  w.target_partition_bytes = 16 * MB;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, NULL);
  src->tasks = 1;
  src->rows_per_task = 1;
  src->out_row_bytes = 1;
  for (int i = 0; i < 8; i++) {
    char n[8];
    snprintf(n, sizeof n, "m%d", i);
    add_op(&w, n, SL_OP_MAP, "big")->time_per_row = 0.001 * (i + 1);
  }
  sl_cluster c;
  small_cluster(&c, 4, 0);
  sl_reorder_result r;
  char err[512] = "";
  assert_int_equal(sl_reorder_choose(&w, &c, &r, err, sizeof err), SL_EINVAL); /* 8! = 40320 */
  assert_non_null(strstr(err, "40320 orders"));
  assert_null(r.orders);
  w.ops[1].keep_position = 1; /* 7! = 5040: tried */
  choose(&w, &c, &r);
  assert_int_equal(r.n, 5040);
  sl_reorder_result_free(&r);
  /* a gap in a group, a group of one, a source in a group */
  snprintf(w.ops[4].reorder_group, sizeof w.ops[4].reorder_group, "other");
  assert_int_equal(sl_reorder_check(&w, err, sizeof err), 5);
  assert_non_null(strstr(err, "'m3' before it is not"));
  snprintf(w.ops[4].reorder_group, sizeof w.ops[4].reorder_group, "big");
  w.nops = 2;
  assert_int_equal(sl_reorder_check(&w, err, sizeof err), 1);
  assert_non_null(strstr(err, "has only operator 'm0'"));
  snprintf(w.ops[0].reorder_group, sizeof w.ops[0].reorder_group, "big");
  assert_int_equal(sl_reorder_check(&w, err, sizeof err), 0);
  assert_non_null(strstr(err, "only maps and map_batches reorder"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_row_sizes_follow_the_order),
    cmocka_unit_test(test_data_reducing_first),
    cmocka_unit_test(test_bound_beats_inflation_sort),
    cmocka_unit_test(test_pins_groups_and_ties),
    cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
