/* The simulated sink (sim/sink.h): rows followed by split through a
 * source, a batch over several splits and an expanding map; a partition
 * cut across splits; deliveries, drops and rollbacks; the checksum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/sink.h"

static sl_decision launch(int64_t split, int64_t rows, const sl_part_id *inputs, int n)
{
  return (sl_decision){.kind = SL_DEC_LAUNCH, .split = split, .rows = rows, .inputs = inputs, .ninputs = n,
                       .part = SL_NONE};
}

static sl_decision deliver(sl_part_id part, int64_t split, int64_t rows)
{
  return (sl_decision){.kind = SL_DEC_DELIVER, .part = part, .split = split, .rows = rows};
}

/* A source reads its own split; its partitions hold their share of it. */
static void test_source_then_deliver(void **state)
{
  (void)state;
  sl_sim_sink *s = sl_sim_sink_new(2);
  assert_non_null(s);
  sl_sim_rows in = {0};
  sl_decision d = launch(1, 10, NULL, 0);
  assert_int_equal(sl_sim_sink_inputs(s, &d, &in), 0);
  assert_int_equal(in.n, 1);
  assert_int_equal(in.v[0].split, 1);
  assert_true(in.rows == 10);
  /* 10 rows out, cut 6 + 4 */
  assert_int_equal(sl_sim_sink_hold(s, 7, &in, 10, 0, 6), 0);
  assert_int_equal(sl_sim_sink_hold(s, 8, &in, 10, 6, 4), 0);
  sl_decision a = deliver(7, 1, 6), b = deliver(8, 1, 4);
  sl_sim_sink_deliver(s, &a);
  sl_sim_sink_deliver(s, &b);
  assert_int_equal(sl_sim_sink_splits_wrong(s, 10), 1); /* split 0 got nothing */
  sl_sim_rows_free(&in);
  sl_sim_sink_free(s);
}

/* A batch over partitions of two splits, expanding each row into 3: a
 * partition that straddles the two holds rows of both, in proportion. */
static void test_batch_across_splits(void **state)
{
  (void)state;
  sl_sim_sink *s = sl_sim_sink_new(2);
  sl_sim_rows src = {0}, in = {0};
  for (int64_t k = 0; k < 2; k++) {
    sl_decision d = launch(k, 4, NULL, 0);
    assert_int_equal(sl_sim_sink_inputs(s, &d, &src), 0);
    assert_int_equal(sl_sim_sink_hold(s, (sl_part_id)k, &src, 4, 0, 4), 0);
  }
  sl_part_id parts[] = {0, 1};
  sl_decision d = launch(0, 8, parts, 2);
  assert_int_equal(sl_sim_sink_inputs(s, &d, &in), 0);
  assert_int_equal(in.n, 2);
  assert_true(in.rows == 8);
  /* 24 rows out in partitions of 9, 9 and 6: the second straddles */
  assert_int_equal(sl_sim_sink_hold(s, 2, &in, 24, 0, 9), 0);
  assert_int_equal(sl_sim_sink_hold(s, 3, &in, 24, 9, 9), 0);
  assert_int_equal(sl_sim_sink_hold(s, 4, &in, 24, 18, 6), 0);
  sl_sim_sink_forget(s, 0); /* the inputs were consumed */
  sl_sim_sink_forget(s, 1);
  for (sl_part_id p = 2; p <= 4; p++) {
    sl_decision dv = deliver(p, 0, 0);
    sl_sim_sink_deliver(s, &dv);
  }
  /* each split's 4 rows became 12: all delivered, none doubled */
  assert_int_equal(sl_sim_sink_splits_wrong(s, 12), 0);
  sl_sim_rows_free(&src);
  sl_sim_rows_free(&in);
  sl_sim_sink_free(s);
}

/* A rollback takes back the splits it does not keep; the checksum tells
 * runs that delivered different rows apart, and is equal otherwise. */
static void test_rollback_and_checksum(void **state)
{
  (void)state;
  sl_sim_sink *a = sl_sim_sink_new(3), *b = sl_sim_sink_new(3);
  for (int64_t k = 0; k < 3; k++) {
    sl_decision d = deliver(SL_NONE, k, 5); /* no holding: the decision's split and rows */
    sl_sim_sink_deliver(a, &d);
    sl_sim_sink_deliver(b, &d);
  }
  assert_true(sl_sim_sink_checksum(a) == sl_sim_sink_checksum(b));
  bool keep[] = {true, false, true};
  sl_sim_sink_rollback(a, keep);
  assert_int_equal(sl_sim_sink_splits_wrong(a, 5), 1);
  assert_true(sl_sim_sink_checksum(a) != sl_sim_sink_checksum(b));
  sl_decision again = deliver(SL_NONE, 1, 5);
  sl_sim_sink_deliver(a, &again);
  assert_true(sl_sim_sink_checksum(a) == sl_sim_sink_checksum(b));
  sl_sim_sink_free(a);
  sl_sim_sink_free(b);
  sl_sim_sink_free(NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_source_then_deliver),
    cmocka_unit_test(test_batch_across_splits),
    cmocka_unit_test(test_rollback_and_checksum),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
