/* groupby over gensort records (workloads/kernels/group.c) and the check
 * of its output (workloads/group_check.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "workloads/group_check.h"
#include "workloads/kernels.h"

#define SEED 11

static sl_kernel *groupby(int key_bytes)
{
  sl_param p[] = {{"key_bytes", key_bytes}};
  sl_kernel_args a = {.params = p, .nparams = 1, .seed = SEED};
  sl_kernel *k = sl_kernel_new("groupby", &a);
  assert_non_null(k);
  return k;
}

static void records(sl_rows *out, int64_t first, int64_t n)
{
  sl_kernel_args a = {.seed = SEED, .out_row_bytes = SL_SORT_RECORD_BYTES};
  sl_kernel *g = sl_kernel_new("gensort", &a);
  assert_non_null(g);
  assert_int_equal(sl_kernel_generate(g, 0, first, n, out), 0);
  sl_kernel_free(g);
}

/* The aggregates of records [first, first + n) by the first key byte, as
 * the definition says, record by record. */
static void expected(int64_t first, int64_t n, sl_group_agg want[256])
{
  memset(want, 0, 256 * sizeof *want);
  uint8_t r[SL_SORT_RECORD_BYTES];
  for (int64_t id = first; id < first + n; id++) {
    sl_sort_record(SEED, id, r);
    sl_group_agg one = {1, (uint64_t)id, (uint64_t)id, (uint64_t)id};
    sl_group_fold(&want[r[0]], &one);
  }
}

static void assert_groups(const sl_rows *rows, const sl_group_agg want[256])
{
  int64_t groups = 0, last = -1;
  for (size_t i = 0; i < sl_rows_count(rows); i++) {
    assert_int_equal(sl_rows_len(rows, i), sl_group_row_bytes(1));
    int64_t key = sl_group_key(sl_rows_payload(rows, i), 1);
    assert_true(key > last); /* one row per group, in key order */
    assert_int_equal(sl_rows_id(rows, i), key);
    last = key;
    sl_group_agg a;
    sl_group_read(sl_rows_payload(rows, i), 1, &a);
    assert_true(a.count == want[key].count && a.sum == want[key].sum && a.min == want[key].min &&
                a.max == want[key].max);
    groups++;
  }
  int64_t nonempty = 0;
  for (int g = 0; g < 256; g++)
    nonempty += want[g].count > 0;
  assert_int_equal(groups, nonempty);
}

/* A task of records folds into one row per group with its count, sum,
 * least and greatest record number. */
static void test_records_fold_into_groups(void **state)
{
  (void)state;
  sl_kernel *k = groupby(1);
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  records(&in, 0, 5000);
  assert_int_equal(sl_kernel_apply(k, &in, 0, sl_rows_count(&in), &out), 0);
  sl_group_agg want[256];
  expected(0, 5000, want);
  assert_groups(&out, want);
  assert_int_equal(sl_rows_count(&out), 256); /* 5,000 records cover every first byte */
  sl_rows_free(&in);
  sl_rows_free(&out);
  sl_kernel_free(k);
}

/* The combine: partial rows of three tasks fold into the rows one task of
 * all their records makes, whatever the mix of partial rows and records. */
static void test_partials_combine(void **state)
{
  (void)state;
  sl_kernel *k = groupby(1);
  sl_rows in, partial, merged;
  sl_rows_init(&in);
  sl_rows_init(&partial);
  sl_rows_init(&merged);
  records(&in, 0, 3000);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 1000, &partial), 0);
  assert_int_equal(sl_kernel_apply(k, &in, 1000, 1000, &partial), 0);
  /* the third thousand joins as records, beside the partial rows */
  assert_int_equal(sl_rows_append_range(&partial, &in, 2000, 1000), 0);
  assert_int_equal(sl_kernel_apply(k, &partial, 0, sl_rows_count(&partial), &merged), 0);
  sl_group_agg want[256];
  expected(0, 3000, want);
  assert_groups(&merged, want);
  sl_rows_free(&in);
  sl_rows_free(&partial);
  sl_rows_free(&merged);
  sl_kernel_free(k);
}

/* A group's records and its partial rows go to the same reducer, and the
 * reducers' key ranges are in key order. */
static void test_share_by_key_range(void **state)
{
  (void)state;
  sl_kernel *k = groupby(1);
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  records(&in, 0, 2000);
  assert_int_equal(sl_kernel_apply(k, &in, 0, sl_rows_count(&in), &out), 0);
  int64_t share_of_group[256];
  for (size_t i = 0; i < sl_rows_count(&out); i++)
    share_of_group[sl_group_key(sl_rows_payload(&out, i), 1)] =
      sl_kernel_share_of(k, sl_rows_id(&out, i), sl_rows_payload(&out, i), sl_rows_len(&out, i), 8);
  for (size_t i = 0; i < sl_rows_count(&in); i++) {
    const uint8_t *r = sl_rows_payload(&in, i);
    assert_int_equal(sl_kernel_share_of(k, sl_rows_id(&in, i), r, sl_rows_len(&in, i), 8), share_of_group[r[0]]);
    assert_int_equal(share_of_group[r[0]], r[0] / 32); /* 8 equal ranges of the first byte */
  }
  sl_rows_free(&in);
  sl_rows_free(&out);
  sl_kernel_free(k);
}

static void test_bad_rows_and_parameters(void **state)
{
  (void)state;
  sl_kernel *k = groupby(1);
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  memset(sl_rows_add(&in, 7, 0, 10), 1, 10);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 1, &out), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(k), "records of 100 bytes or partial groups of 33 bytes, not 10"));
  assert_int_equal(sl_rows_count(&out), 0); /* nothing half-made */
  sl_rows_free(&in);
  sl_rows_free(&out);
  sl_kernel_free(k);
  sl_param p[] = {{"key_bytes", 3}};
  sl_kernel_args a = {.params = p, .nparams = 1};
  char err[200];
  assert_int_equal(sl_kernel_check_args("groupby", &a, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "key_bytes"));
  /* its rows_out_per_row is the model's estimate, not a factor */
  sl_kernel_args est = {.rows_out_per_row = 0.00512};
  assert_int_equal(sl_kernel_check_args("groupby", &est, err, sizeof err), 0);
}

/* ---- the check ---- */

/* The groups of records [0, n) made by @p tasks tasks and one reducer. */
static void grouped_output(sl_rows *out, int64_t n, int tasks)
{
  sl_kernel *k = groupby(1);
  sl_rows in, partial;
  sl_rows_init(&in);
  sl_rows_init(&partial);
  records(&in, 0, n);
  for (int t = 0; t < tasks; t++)
    assert_int_equal(sl_kernel_apply(k, &in, (size_t)(n / tasks * t), (size_t)(n / tasks), &partial), 0);
  assert_int_equal(sl_kernel_apply(k, &partial, 0, sl_rows_count(&partial), out), 0);
  sl_rows_free(&in);
  sl_rows_free(&partial);
  sl_kernel_free(k);
}

static void test_check_passes_the_right_answer(void **state)
{
  (void)state;
  sl_rows out;
  sl_rows_init(&out);
  grouped_output(&out, 4000, 4);
  sl_group_check *c = sl_group_check_new(1);
  assert_int_equal(sl_group_check_partition(c, &out), 0);
  assert_int_equal(sl_group_check_finish(c, SEED, 4, 1000), 0);
  sl_group_check_free(c);
  sl_rows_free(&out);
}

static void test_check_catches_wrong_answers(void **state)
{
  (void)state;
  sl_rows out;
  sl_rows_init(&out);
  grouped_output(&out, 4000, 4);
  char err[300];
  /* a sum off by one */
  sl_group_check *c = sl_group_check_new(1);
  uint8_t *row = out.data + out.row[5].off;
  sl_group_agg a;
  sl_group_read(row, 1, &a);
  a.sum++;
  sl_group_write(row, 1, sl_group_key(row, 1), &a);
  assert_int_equal(sl_group_check_partition(c, &out), 0);
  assert_int_equal(sl_group_check_finish(c, SEED, 4, 1000), SL_ESTATE);
  snprintf(err, sizeof err, "%s", sl_group_check_error(c));
  assert_non_null(strstr(err, "group 5: count"));
  sl_group_check_free(c);
  /* a group delivered twice */
  c = sl_group_check_new(1);
  assert_int_equal(sl_group_check_partition(c, &out), 0);
  assert_int_equal(sl_group_check_partition(c, &out), SL_ESTATE);
  assert_non_null(strstr(sl_group_check_error(c), "delivered twice"));
  sl_group_check_free(c);
  /* records of another seed: every group is wrong */
  a.sum--;
  sl_group_write(row, 1, sl_group_key(row, 1), &a);
  c = sl_group_check_new(1);
  assert_int_equal(sl_group_check_partition(c, &out), 0);
  assert_int_equal(sl_group_check_finish(c, SEED + 1, 4, 1000), SL_ESTATE);
  sl_group_check_free(c);
  /* a group missing: the rollback of its split drops it */
  c = sl_group_check_new(1);
  assert_int_equal(sl_group_check_partition(c, &out), 0);
  bool keep[1] = {false};
  sl_group_check_rollback(c, keep, 1);
  assert_int_equal(sl_group_check_finish(c, SEED, 4, 1000), SL_ESTATE);
  assert_non_null(strstr(sl_group_check_error(c), "group 0: count 0"));
  sl_group_check_free(c);
  /* a row that is not a group's */
  sl_rows bad;
  sl_rows_init(&bad);
  records(&bad, 0, 1);
  c = sl_group_check_new(1);
  assert_int_equal(sl_group_check_partition(c, &bad), SL_ESTATE);
  assert_non_null(strstr(sl_group_check_error(c), "not a group's"));
  sl_group_check_free(c);
  sl_rows_free(&bad);
  sl_rows_free(&out);
  assert_null(sl_group_check_new(3));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_records_fold_into_groups),
    cmocka_unit_test(test_partials_combine),
    cmocka_unit_test(test_share_by_key_range),
    cmocka_unit_test(test_bad_rows_and_parameters),
    cmocka_unit_test(test_check_passes_the_right_answer),
    cmocka_unit_test(test_check_catches_wrong_answers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
