/* Rejected rows (executor/rejected.h): each counts once however often a
 * re-run meets it, the first is named, the sink rows they cost follow the
 * expansions and filters downstream, and the sink's count is checked
 * against them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "executor/rejected.h"
#include "workloads/spec.h"

static void push(sl_rejected_batch *b, int level, int64_t id, double sink_rows, bool exact)
{
  sl_rejected_row r = {.level = level, .id = id, .sink_rows = sink_rows, .exact = exact};
  assert_int_equal(sl_rejected_batch_push(b, &r), 0);
}

/* A job's tally and one task's batch, empty. */
typedef struct {
  sl_rejected_tally t;
  sl_rejected_batch b;
} tally_fixture;

static int tally_setup(void **state)
{
  tally_fixture *f = calloc(1, sizeof *f);
  if (!f)
    return -1;
  sl_rejected_tally_init(&f->t);
  *state = f;
  return 0;
}

static int tally_teardown(void **state)
{
  tally_fixture *f = *state;
  sl_rejected_batch_free(&f->b);
  sl_rejected_tally_free(&f->t);
  free(f);
  return 0;
}

static void test_each_row_counts_once(void **state)
{
  tally_fixture *f = *state;
  sl_rejected_tally *t = &f->t;
  sl_rejected_batch *b = &f->b;
  push(b, 1, 7, 2, true);
  push(b, 1, 7, 2, true); /* the same row twice in one batch */
  push(b, 2, 7, 1, true); /* the same id at another operator: another row */
  snprintf(b->first, sizeof b->first, "row 7 is bad");
  assert_int_equal(sl_rejected_tally_add(t, b), 0);
  assert_int_equal(t->rows, 2);
  assert_true(t->sink_rows_lost == 3);
  assert_string_equal(t->first, "row 7 is bad");
  sl_rejected_batch_clear(b);
  assert_int_equal(b->n, 0);
  push(b, 1, 7, 2, true); /* a re-run meets it again */
  snprintf(b->first, sizeof b->first, "later");
  assert_int_equal(sl_rejected_tally_add(t, b), 0);
  assert_int_equal(t->rows, 2);
  assert_string_equal(t->first, "row 7 is bad"); /* the first stays the first */
  /* many rows: the set grows and still counts each once */
  sl_rejected_batch_clear(b);
  for (int64_t id = 0; id < 1000; id++)
    push(b, 3, id, 1, true);
  assert_int_equal(sl_rejected_tally_add(t, b), 0);
  assert_int_equal(sl_rejected_tally_add(t, b), 0);
  assert_int_equal(t->rows, 1002);
}

static void test_rows_add_up(void **state)
{
  tally_fixture *f = *state;
  sl_rejected_tally *t = &f->t;
  sl_rejected_batch *b = &f->b;
  push(b, 1, 1, 4, true);
  assert_int_equal(sl_rejected_tally_add(t, b), 0);
  assert_true(sl_rejected_rows_add_up(t, 96, 100));
  assert_false(sl_rejected_rows_add_up(t, 100, 100));
  /* behind a filter, anything between the least and all of them */
  push(b, 1, 2, 4, false);
  assert_int_equal(sl_rejected_tally_add(t, b), 0);
  assert_false(t->sink_rows_exact);
  assert_true(sl_rejected_rows_add_up(t, 92, 100));
  assert_true(sl_rejected_rows_add_up(t, 97, 100));
  assert_false(sl_rejected_rows_add_up(t, 91, 100));
}

static void test_sink_rows_of_a_row(void **state)
{
  (void)state;
  sl_workload w;
  sl_plan p;
  char err[512];
  assert_int_equal(sl_workload_load(SL_SOURCE_DIR "/workloads/fig9-small.ini", &w, err, sizeof err), 0);
  sl_plan_opts po = {0};
  assert_int_equal(sl_plan_build(&p, &w, &po, err, sizeof err), 0);
  /* the product of the expansions from the rejecting member on */
  bool exact;
  double want = 1;
  for (int i = p.nops - 1; i >= 1; i--)
    for (int m = p.ops[i].nfused - 1; m >= 0; m--) {
      double r = w.ops[p.ops[i].first + m].rows_out_per_row;
      want *= r == 0 ? 1 : r < 1 ? 1 : r;
    }
  assert_true(sl_rejected_sink_rows(&p, 1, 0, &exact) == want);
  assert_true(sl_rejected_sink_rows(&p, p.nops - 1, p.ops[p.nops - 1].nfused, &exact) == 1); /* past the last */
  assert_true(exact);
}

static void test_message(void **state)
{
  (void)state;
  assert_string_equal(sl_rejected_message("row 12: bad JPEG", 12), "bad JPEG");
  assert_string_equal(sl_rejected_message("row 13: bad JPEG", 12), "row 13: bad JPEG");
  assert_string_equal(sl_rejected_message("bad", 12), "bad");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_each_row_counts_once, tally_setup, tally_teardown),
    cmocka_unit_test_setup_teardown(test_rows_add_up, tally_setup, tally_teardown),
    cmocka_unit_test(test_sink_rows_of_a_row),
    cmocka_unit_test(test_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
