/* The progress line of long commands (results/progress.h): which step of
 * how many, and a time left only once there is a pace to go by. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "results/progress.h"

static void test_time_left(void **state)
{
  (void)state;
  assert_float_equal(sl_progress_left(10, 0, 20), -1, 0); /* nothing done: no pace */
  assert_float_equal(sl_progress_left(10, 5, 0), -1, 0);  /* no total */
  assert_float_equal(sl_progress_left(10, 5, 20), 30, 1e-12);
  assert_float_equal(sl_progress_left(10, 20, 20), 0, 0);
  assert_float_equal(sl_progress_left(10, 25, 20), 0, 0);
}

static void test_line(void **state)
{
  (void)state;
  char buf[256];
  sl_progress_format(buf, sizeof buf, "bench", 0, 169, "sim/video/batch", 0.2);
  assert_string_equal(buf, "bench: step 1 of 169: sim/video/batch; 0 s elapsed");
  sl_progress_format(buf, sizeof buf, "bench", 12, 169, "sim/video/batch", 24);
  assert_string_equal(buf, "bench: step 13 of 169: sim/video/batch; 24 s elapsed, about 5 min left");
  sl_progress_format(buf, sizeof buf, "bench", 100, 120, "zoo", 50);
  assert_string_equal(buf, "bench: step 101 of 120: zoo; 50 s elapsed, about 10 s left");
  /* a line never overflows its buffer */
  char small[16];
  sl_progress_format(small, sizeof small, "bench", 1, 2, "a long name of a step", 1);
  assert_int_equal(strlen(small), sizeof small - 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_time_left),
    cmocka_unit_test(test_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
