/*
 * Failure schedules (models/faults.h): what parses, what is refused and how
 * it is said, and the log that tells which faults applied in a run and why
 * the others did not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "models/core.h"
#include "models/error.h"
#include "models/faults.h"
#include "models/plan.h"
#include "workloads/spec.h"
#include "workloads/units.h"

typedef struct {
  sl_workload w;
  sl_plan plan;
  sl_cluster cluster; /* cpu.0, cpu.1, gpu.0 */
} fixture;

static int setup(void **state)
{
  static fixture f;
  char err[512];
  if (sl_workload_load(SL_SOURCE_DIR "/tests/golden/sim/workload.ini", &f.w, err, sizeof err) != 0 ||
      sl_cluster_load(SL_SOURCE_DIR "/tests/golden/sim/cluster.ini", &f.cluster, err, sizeof err) != 0 ||
      sl_plan_build(&f.plan, &f.w, &(sl_plan_opts){0}, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  *state = &f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;
  sl_cluster_free(&f->cluster);
  return 0;
}

static void expect_refused(fixture *f, const char *text, const char *message)
{
  sl_fault_schedule s;
  char err[512] = "";
  memset(&s, 0xab, sizeof s);
  if (sl_faults_parse(text, &f->plan, &f->cluster, &s, err, sizeof err) != SL_EPARSE)
    fail_msg("'%s' was accepted", text);
  if (strcmp(err, message) != 0)
    fail_msg("'%s': got '%s', want '%s'", text, err, message);
  assert_int_equal(s.n, 0); /* nothing half-parsed escapes */
}

static void test_parse(void **state)
{
  fixture *f = *state;
  sl_fault_schedule s;
  char err[512] = "";
  assert_int_equal(sl_faults_parse("join:cpu.1@3S, kill:transform@1s,lose:cpu.1@2s,kill@0,lose:2@500MS", &f->plan,
                                   &f->cluster, &s, err, sizeof err), 0);
  assert_int_equal(s.n, 5);
  /* sorted by time, and each keeps its text for reports */
  assert_string_equal(s.ev[0].text, "kill@0");
  assert_true(s.ev[0].at_s == 0);
  assert_string_equal(s.ev[1].text, "lose:2@500MS");
  assert_true(s.ev[1].at_s == 0.5);
  assert_int_equal(s.ev[1].node, 2);
  assert_string_equal(s.ev[4].text, "join:cpu.1@3S");
  assert_int_equal(s.ev[4].kind, SL_FAULT_JOIN);
  assert_int_equal(s.ev[4].node, 1);
  /* a join of a node the schedule never loses may follow a random loss */
  assert_int_equal(sl_faults_parse("join:0@1s", &f->plan, &f->cluster, &s, err, sizeof err), 0);
}

/* Fault times read as spec times do (models/ keeps its own copy of the rules). */
static void test_times_as_in_specs(void **state)
{
  fixture *f = *state;
  static const char *const times[] = {"3ns", "3us", "3\xc2\xb5s", "3ms", "3s", "3min", "3h", "2.5MIN", "1e3Ms",
                                      "0", "8", "8 s", "8sec", "8m", ".5s"};
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
    char text[64], err[512];
    sl_fault_schedule s;
    double want;
    snprintf(text, sizeof text, "kill@%s", times[i]);
    bool spec_ok = sl_parse_time(times[i], &want) == 0 && want >= 0;
    bool fault_ok = sl_faults_parse(text, &f->plan, &f->cluster, &s, err, sizeof err) == 0;
    if (spec_ok != fault_ok)
      fail_msg("'%s': a spec %s it, a schedule %s it", times[i], spec_ok ? "takes" : "refuses",
               fault_ok ? "takes" : "refuses");
    if (fault_ok && s.ev[0].at_s != want)
      fail_msg("'%s': %g in a spec, %g in a schedule", times[i], want, s.ev[0].at_s);
  }
}

static void test_refused(void **state)
{
  fixture *f = *state;
  expect_refused(f, "lose:1@100", "'lose:1@100': the time needs a unit: ns, us, ms, s, min or h (such as 100s)");
  expect_refused(f, "kill@5 sec", "'kill@5 sec': malformed time '5 sec' (such as 15s, 500ms or 2min)");
  expect_refused(f, "kill@-1s", "'kill@-1s': malformed time '-1s' (such as 15s, 500ms or 2min)");
  expect_refused(f, "kill@0x10s", "'kill@0x10s': malformed time '0x10s' (such as 15s, 500ms or 2min)");
  expect_refused(f, "lose:1@100s,join:1@50s", "'join:1@50s' comes before 'lose:1@100s': a node joins only after it is lost");
  expect_refused(f, "lose:1@1s,join:1@2s,join:1@3s,lose:1@4s",
                 "'join:1@3s' comes before 'lose:1@4s': a node joins only after it is lost");
  expect_refused(f, "lose:gpu.7@1s", "lose: no node 'gpu.7': group gpu has 1 node, gpu.0");
  expect_refused(f, "join:cpu.2@1s", "join: no node 'cpu.2': group cpu has 2 nodes, cpu.0 to cpu.1");
  expect_refused(f, "lose:tpu.0@1s", "lose: expected a node index from 0 to 2 or GROUP.INDEX, got 'tpu.0'");
  expect_refused(f, "kill:nosuch@1s", "kill: no operator 'nosuch' in the plan");
}

/* The log says which faults applied, and why the others did not. */
static void test_log(void **state)
{
  fixture *f = *state;
  sl_fault_schedule s;
  sl_fault_log log;
  char err[512] = "", text[320];
  assert_int_equal(sl_faults_parse("kill:transform@0,lose:1@1s,lose:1@2s,join:0@3s,join:1@4s,kill@1h", &f->plan,
                                   &f->cluster, &s, err, sizeof err), 0);
  sl_core_opts o;
  sl_core_opts_default(&o);
  sl_core *core = sl_core_new(&f->plan, &f->cluster, &o, err, sizeof err);
  assert_non_null(core);
  sl_fault_log_init(&log, &s);
  assert_int_equal(sl_fault_log_describe(&log, &s, text, sizeof text), 6); /* nothing is due yet */

  sl_task_id victim;
  /* nothing runs before the start: the kill waits for an attempt */
  assert_true(sl_fault_log_check(&log, &s, 0, core));
  assert_int_equal(sl_core_kill(core, 0, s.ev[0].op, &victim), 0);
  assert_int_equal(victim, SL_NONE);
  sl_fault_log_defer(&log, 0);
  assert_true(sl_fault_log_check(&log, &s, 1, core));
  sl_core_node_lost(core, 1, 1);
  assert_false(sl_fault_log_check(&log, &s, 2, core)); /* already lost */
  assert_false(sl_fault_log_check(&log, &s, 3, core)); /* node 0 never left */
  assert_true(sl_fault_log_check(&log, &s, 4, core));
  sl_core_node_joined(core, 4, 1);
  /* kill@1h never comes: the run ends first */
  sl_fault_log_finish(&log, &s, core);
  sl_fault_log_finish(&log, &s, core); /* twice changes nothing */
  assert_int_equal(sl_fault_log_applied(&log), 2);
  assert_int_equal(sl_fault_log_describe(&log, &s, text, sizeof text), 4);
  assert_string_equal(text, "kill:transform@0 (nothing ran, and nothing started again, to kill); "
                            "lose:1@2s (the node was already lost); join:0@3s (the node was in service); "
                            "kill@1h (the run had ended)");
  sl_core_free(core);

  char tiny[8];
  assert_int_equal(sl_fault_log_describe(&log, &s, tiny, sizeof tiny), 4); /* cut, still counted */
  assert_int_equal(strlen(tiny), 7);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse),
    cmocka_unit_test(test_times_as_in_specs),
    cmocka_unit_test(test_refused),
    cmocka_unit_test(test_log),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
