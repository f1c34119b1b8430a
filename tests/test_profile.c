/* System cost profiles: how a profile folds into a plan (models/profile.h)
 * and how a profile file is read (workloads/profile_spec.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/bound.h"
#include "models/cluster.h"
#include "models/error.h"
#include "models/plan.h"
#include "models/profile.h"
#include "models/workload.h"
#include "workloads/profile_spec.h"

#define MB 1e6

static sl_op_spec *add_op(sl_workload *w, const char *name, sl_op_kind kind, double cpu)
{
  sl_op_spec *s = &w->ops[w->nops];
  memset(s, 0, sizeof(*s));
  snprintf(s->name, sizeof(s->name), "%s", name);
  s->line = w->nops + 1;
  s->kind = kind;
  s->cpu = cpu;
  s->rows_out_per_row = 1.0;
  w->nops++;
  return s;
}

/* Fig. 10a's shape: a source of @p tasks tasks of @p rows rows of 1 MB,
 * then two CPU maps of 10 ms a row (not fused: their CPU requests
 * differ), and a target partition of @p target bytes. */
static void three_ops(sl_workload *w, int64_t tasks, int64_t rows, double target)
{
  memset(w, 0, sizeof(*w));
  snprintf(w->name, sizeof(w->name), "three");
  w->target_partition_bytes = target;
  sl_op_spec *s = add_op(w, "read", SL_OP_SOURCE, 1.0);
  s->tasks = tasks;
  s->rows_per_task = rows;
  s->out_row_bytes = 1 * MB;
  sl_op_spec *a = add_op(w, "process", SL_OP_MAP, 0.5);
  a->time_per_row = 0.010;
  a->out_row_bytes = 1 * MB;
  sl_op_spec *b = add_op(w, "drop", SL_OP_MAP, 0.99);
  b->time_per_row = 0.010;
  b->out_row_bytes = 1 * MB;
}

static void build(sl_plan *p, const sl_workload *w)
{
  char err[256];
  sl_plan_opts o = {0};
  assert_int_equal(sl_plan_build(p, w, &o, err, sizeof err), 0);
  assert_int_equal(p->nops, 3);
}

static void test_ideal_changes_nothing(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan before, after;
  three_ops(&w, 64, 4, 128 * MB);
  build(&before, &w);
  after = before;
  sl_profile ideal;
  sl_profile_ideal(&ideal);
  assert_false(sl_profile_charges(&ideal));
  sl_profile_apply(&after, &ideal);
  assert_string_equal(after.profile, "ideal");
  for (int i = 0; i < before.nops; i++) {
    assert_true(after.ops[i].time_per_task == before.ops[i].time_per_task);
    assert_true(after.ops[i].time_per_row == before.ops[i].time_per_row);
  }
}

static void test_task_cost_on_every_operator(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;
  three_ops(&w, 64, 4, 128 * MB);
  build(&p, &w);
  sl_profile prof;
  sl_profile_ideal(&prof);
  prof.task_s = 0.001;
  sl_profile_apply(&p, &prof);
  for (int i = 0; i < p.nops; i++)
    assert_float_equal(p.ops[i].time_per_task, 0.001, 1e-12);
  assert_float_equal(p.ops[1].time_per_row, 0.010, 1e-12);
}

/* A task whose output is under one target partition emits one partition,
 * so with Fig. 10a's target of 1 GiB and one row per task every row pays a
 * whole put and a whole get; with 4 rows a task, a quarter of each. */
static void test_partition_costs_follow_the_typical_partition(void **state)
{
  (void)state;
  sl_profile prof;
  sl_profile_ideal(&prof);
  prof.put_s = 0.002;
  prof.get_s = 0.001;
  const int64_t rows_per_task[] = {1, 4};
  for (int k = 0; k < 2; k++) {
    sl_workload w;
    sl_plan p;
    int64_t r = rows_per_task[k];
    three_ops(&w, 64 / r, r, 1024 * MB);
    build(&p, &w);
    sl_profile_apply(&p, &prof);
    assert_float_equal(p.ops[0].time_per_row, 0.002 / (double)r, 1e-12);        /* put only */
    assert_float_equal(p.ops[1].time_per_row, 0.010 + 0.003 / (double)r, 1e-12); /* get + put */
    assert_float_equal(p.ops[2].time_per_row, 0.010 + 0.003 / (double)r, 1e-12);
  }
  /* a target of 2 MB cuts 8-row outputs into partitions of 2 rows */
  sl_workload w;
  sl_plan p;
  three_ops(&w, 8, 8, 2 * MB);
  build(&p, &w);
  sl_profile_apply(&p, &prof);
  assert_float_equal(p.ops[0].time_per_row, 0.002 / 2, 1e-12);
  assert_float_equal(p.ops[1].time_per_row, 0.010 + 0.003 / 2, 1e-12);
}

/* Copies and serialization are per byte: the store copy on what a task
 * reads and writes, the language boundary on both. An expanding map
 * writes twice the bytes it reads. */
static void test_byte_costs(void **state)
{
  (void)state;
  sl_workload w;
  three_ops(&w, 16, 4, 128 * MB);
  w.ops[1].rows_out_per_row = 2.0;
  sl_plan p;
  build(&p, &w);
  sl_profile prof;
  sl_profile_ideal(&prof);
  prof.put_bps = 1000 * MB;
  prof.get_bps = 500 * MB;
  prof.serialize_bps = 100 * MB;
  sl_profile_apply(&p, &prof);
  /* source: writes 1 MB a row */
  assert_float_equal(p.ops[0].time_per_row, 0.001 + 0.01, 1e-12);
  /* process: reads 1 MB, writes 2 MB a row */
  assert_float_equal(p.ops[1].time_per_row, 0.010 + 0.002 + 0.002 + 0.03, 1e-12);
  /* drop: reads and writes 1 MB a row */
  assert_float_equal(p.ops[2].time_per_row, 0.010 + 0.002 + 0.001 + 0.02, 1e-12);
}

/* The bound is of the plan with the profile in it: a system that pays
 * for every partition it puts cannot be bound by the ideal system's time.
 * (A per-task cost alone moves it less: the bound spreads it over the
 * largest task a model may coalesce.) */
static void test_bound_includes_the_profile(void **state)
{
  (void)state;
  sl_workload w;
  three_ops(&w, 8192, 1, 1024 * MB);
  sl_plan ideal, charged;
  build(&ideal, &w);
  charged = ideal;
  sl_profile prof;
  sl_profile_ideal(&prof);
  snprintf(prof.name, sizeof prof.name, "costly");
  prof.put_s = 0.001;
  sl_profile_apply(&charged, &prof);
  assert_string_equal(charged.profile, "costly");
  sl_cluster c;
  memset(&c, 0, sizeof c);
  snprintf(c.name, sizeof c.name, "one");
  c.ngroups = 1;
  c.groups[0].count = 1;
  c.groups[0].cpu = 8;
  c.groups[0].cpu_speed = c.groups[0].gpu_speed = 1;
  c.groups[0].store_bytes = 15e9;
  assert_int_equal(sl_cluster_expand(&c), 0);
  sl_bound a, b;
  assert_int_equal(sl_bound_compute(&ideal, &c, &a), 0);
  assert_int_equal(sl_bound_compute(&charged, &c, &b), 0);
  /* each source row is put alone in its partition: 8192 x 1 ms more on
   * 8 CPUs is 1.02 s (the maps gather rows into larger partitions) */
  assert_true(b.jct_s >= a.jct_s + 1.0);
  sl_cluster_free(&c);
}

/* ------------------------------------------------------------- files */

static char *write_file(const char *text)
{
  static char path[64];
  snprintf(path, sizeof path, "/tmp/sl_profile_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

static void test_reads_every_key(void **state)
{
  (void)state;
  char *path = write_file("# a system\n"
                          "[profile]\n"
                          "name = sys\n"
                          "description = a system\n"
                          "task = 1.02ms ; where it comes from\n"
                          "put = 0.193ms\n"
                          "get = 94us\n"
                          "put_bandwidth = 19.86GB/s\n"
                          "get_bandwidth = 8Gbps\n"
                          "serialize_bandwidth = 525MB/s\n");
  sl_profile p;
  char err[256];
  assert_int_equal(sl_profile_load(path, &p, err, sizeof err), 0);
  assert_string_equal(p.name, "sys");
  assert_float_equal(p.task_s, 1.02e-3, 1e-12);
  assert_float_equal(p.put_s, 0.193e-3, 1e-12);
  assert_float_equal(p.get_s, 94e-6, 1e-12);
  assert_float_equal(p.put_bps, 19.86e9, 1);
  assert_float_equal(p.get_bps, 1e9, 1);
  assert_float_equal(p.serialize_bps, 525e6, 1);
  unlink(path);
}

static void test_name_defaults_to_the_file(void **state)
{
  (void)state;
  char *path = write_file("[profile]\ntask = 1ms\n");
  sl_profile p;
  char err[256];
  assert_int_equal(sl_profile_load(path, &p, err, sizeof err), 0);
  assert_string_equal(p.name, strrchr(path, '/') + 1);
  assert_true(sl_profile_charges(&p));
  unlink(path);
}

static void expect_error(const char *text, int line, const char *words)
{
  char *path = write_file(text);
  sl_profile p;
  char err[256], where[128];
  assert_int_equal(sl_profile_load(path, &p, err, sizeof err), SL_EPARSE);
  snprintf(where, sizeof where, "%s:%d: ", path, line);
  if (strncmp(err, where, strlen(where)) != 0 || !strstr(err, words))
    fail_msg("got '%s', expected '%s...%s'", err, where, words);
  assert_false(sl_profile_charges(&p)); /* nothing half-read */
  unlink(path);
}

static void test_errors_name_file_and_line(void **state)
{
  (void)state;
  expect_error("[profile]\ntask = 1ms\ntask_cost = 2ms\n", 3, "unknown key 'task_cost'");
  expect_error("[profile]\ntask = 3\n", 2, "unit");
  expect_error("[profile]\nput = -1ms\n", 2, "put");
  expect_error("[system]\ntask = 1ms\n", 1, "unknown section [system]");
  expect_error("[profile]\ntask = 1ms\n[profile]\n", 3, "duplicate section");
  expect_error("# nothing\n", 1, "no [profile] section");
  expect_error("[profile]\nput_bandwidth = 10\n", 2, "put_bandwidth");
}

static void test_missing_file(void **state)
{
  (void)state;
  sl_profile p;
  char err[256];
  assert_int_equal(sl_profile_load("/nonexistent/raydata.ini", &p, err, sizeof err), SL_EIO);
}

static void test_names_and_files(void **state)
{
  (void)state;
  char buf[256];
  assert_string_equal(sl_profile_path("raydata", "/src", buf, sizeof buf), "/src/profiles/raydata.ini");
  assert_string_equal(sl_profile_path("mine.ini", "/src", buf, sizeof buf), "mine.ini");
  assert_string_equal(sl_profile_path("./x", "/src", buf, sizeof buf), "./x");
}

/* Every shipped profile reads, and names itself after its file. */
static void test_shipped_profiles_read(void **state)
{
  (void)state;
  const char *names[] = {"ideal", "raydata", "spark", "flink", "sluice"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[512], err[512];
    sl_profile p;
    sl_profile_path(names[i], SL_SOURCE_DIR, path, sizeof path);
    if (sl_profile_load(path, &p, err, sizeof err) != 0)
      fail_msg("%s", err);
    assert_string_equal(p.name, names[i]);
    assert_true(sl_profile_charges(&p) == (strcmp(names[i], "ideal") != 0));
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_ideal_changes_nothing),
    cmocka_unit_test(test_task_cost_on_every_operator),
    cmocka_unit_test(test_partition_costs_follow_the_typical_partition),
    cmocka_unit_test(test_byte_costs),
    cmocka_unit_test(test_bound_includes_the_profile),
    cmocka_unit_test(test_reads_every_key),
    cmocka_unit_test(test_name_defaults_to_the_file),
    cmocka_unit_test(test_errors_name_file_and_line),
    cmocka_unit_test(test_missing_file),
    cmocka_unit_test(test_names_and_files),
    cmocka_unit_test(test_shipped_profiles_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
