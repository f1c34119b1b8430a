/* Work in a child process (sim/child.h): its result comes back whole; a
 * child that crashes or exits early is an error that says so, with a
 * zeroed result; the parent's buffered output is not written twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/child.h"

typedef struct {
  int64_t n;
  double v[512]; /* larger than a pipe's atomic write */
  char text[64];
} result;

static void fill(void *ctx, void *out)
{
  result *r = out;
  r->n = *(const int64_t *)ctx;
  for (int i = 0; i < 512; i++)
    r->v[i] = i * 0.5;
  strcpy(r->text, "from the child");
}

static void crash(void *ctx, void *out)
{
  (void)ctx;
  (void)out;
  raise(SIGKILL);
}

static void leave(void *ctx, void *out)
{
  (void)ctx;
  (void)out;
  _exit(5);
}

static void test_result_comes_back(void **state)
{
  (void)state;
  int64_t n = 42;
  result r;
  char err[200] = "";
  assert_int_equal(sl_sim_child_run(fill, &n, &r, sizeof r, err, sizeof err), 0);
  assert_int_equal(r.n, 42);
  assert_true(r.v[511] == 255.5);
  assert_string_equal(r.text, "from the child");
}

static void test_crash(void **state)
{
  (void)state;
  result r;
  memset(&r, 0xff, sizeof r);
  char err[200] = "";
  assert_int_equal(sl_sim_child_run(crash, NULL, &r, sizeof r, err, sizeof err), SL_EIO);
  assert_string_equal(err, "the simulation died (signal 9)");
  assert_int_equal(r.n, 0);
}

static void test_early_exit(void **state)
{
  (void)state;
  result r;
  char err[200] = "";
  assert_int_equal(sl_sim_child_run(leave, NULL, &r, sizeof r, err, sizeof err), SL_EIO);
  assert_string_equal(err, "the simulation ended without a result (exit 5)");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_result_comes_back),
    cmocka_unit_test(test_crash),
    cmocka_unit_test(test_early_exit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
