/* Why a job failed: the words both engines use (results/failure.h), for
 * an out-of-memory with and without a place, a stall with and without a
 * time, and any other code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "models/error.h"
#include "results/failure.h"
#include "workloads/spec.h"

typedef struct {
  sl_workload w;
  sl_plan plan;
  sl_cluster cluster;
  sl_core *core;
} fixture;

static int setup(void **state)
{
  static fixture f;
  char err[512];
  if (sl_workload_load(SL_SOURCE_DIR "/workloads/fig9-small.ini", &f.w, err, sizeof err) ||
      sl_cluster_load(SL_SOURCE_DIR "/workloads/clusters/fig9.ini", &f.cluster, err, sizeof err))
    return -1;
  sl_plan_opts po = {0};
  if (sl_plan_build(&f.plan, &f.w, &po, err, sizeof err))
    return -1;
  sl_core_opts o;
  sl_core_opts_default(&o);
  f.core = sl_core_new(&f.plan, &f.cluster, &o, err, sizeof err);
  *state = &f;
  return f.core ? 0 : -1;
}

static int teardown(void **state)
{
  fixture *f = *state;
  sl_core_free(f->core);
  sl_cluster_free(&f->cluster);
  return 0;
}

static const char *text(const fixture *f, int code, int op, int node, double stalled_s)
{
  static char buf[320];
  sl_decision d = {.kind = SL_DEC_FAIL, .code = code, .op = op, .node = node, .stalled_s = stalled_s};
  sl_failure_text(&d, &f->plan, &f->cluster, f->core, buf, sizeof buf);
  return buf;
}

static void test_oom(void **state)
{
  fixture *f = *state;
  char want[320];
  snprintf(want, sizeof want,
           "out of memory: operator '%s' on node 0: the partition store is full (0 of %.0f bytes) "
           "and spilling is off (--on-full oom)",
           f->plan.ops[1].name, sl_cluster_node_group(&f->cluster, 0)->store_bytes);
  assert_string_equal(text(f, SL_EOOM, 1, 0, 0), want);
  assert_string_equal(text(f, SL_EOOM, -1, -1, 0),
                      "out of memory: the partition store is full and spilling is off (--on-full oom)");
}

/* Spilling on, and the node's disks full: the message says both. */
static void test_oom_disk_full(void **state)
{
  fixture *f = *state;
  sl_node_group *g = &f->cluster.groups[f->cluster.nodes[0].group];
  g->disks = 2;
  g->disk_read_bps = g->disk_write_bps = 1e9;
  g->disk_capacity_bytes = 2.5e9;
  char want[320];
  snprintf(want, sizeof want,
           "out of memory and disk: operator '%s' on node 0: the partition store is full (0 of %.0f bytes) "
           "and its disks hold 0 of 5000000000 bytes spilled (disk_capacity)",
           f->plan.ops[1].name, g->store_bytes);
  assert_string_equal(text(f, SL_EOOM, 1, 0, 0), want);
  g->disks = 0;
}

static void test_stall(void **state)
{
  fixture *f = *state;
  char want[320];
  snprintf(want, sizeof want, "stalled: no progress for 5 s; operator '%s' is stuck", f->plan.ops[2].name);
  assert_string_equal(text(f, SL_ESTALL, 2, -1, 5), want);
  snprintf(want, sizeof want, "stalled: work is stranded; operator '%s' is stuck", f->plan.ops[2].name);
  assert_string_equal(text(f, SL_ESTALL, 2, -1, 0), want);
  /* no operator named: the one the core says holds the job up, here (not
   * started) the source with all its work still to start */
  snprintf(want, sizeof want, "stalled: work is stranded; operator '%s' is stuck",
           f->plan.ops[sl_core_stuck_op(f->core)].name);
  assert_int_equal(sl_core_stuck_op(f->core), 0);
  assert_string_equal(text(f, SL_ESTALL, -1, -1, 0), want);
}

static void test_other_codes(void **state)
{
  fixture *f = *state;
  assert_string_equal(text(f, SL_ESTATE, -1, -1, 0), sl_strerror(SL_ESTATE));
  assert_string_equal(text(f, SL_EIO, 0, 0, 0), sl_strerror(SL_EIO));
}

static void test_short_buffer(void **state)
{
  fixture *f = *state;
  char buf[16];
  sl_decision d = {.kind = SL_DEC_FAIL, .code = SL_EOOM, .op = 0, .node = 0};
  sl_failure_text(&d, &f->plan, &f->cluster, f->core, buf, sizeof buf);
  assert_int_equal(strlen(buf), sizeof buf - 1);
  assert_memory_equal(buf, "out of memory: ", 15);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_oom),
    cmocka_unit_test(test_oom_disk_full),
    cmocka_unit_test(test_stall),
    cmocka_unit_test(test_other_codes),
    cmocka_unit_test(test_short_buffer),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
