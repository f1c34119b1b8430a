/* The executor's emulated link: transfers in flight share its bandwidth,
 * each waits its latency, and a link without a limit costs nothing. The
 * bounds below are loose on the slow side (a loaded machine wakes threads
 * late) and exact on the fast one: a sleep never ends early. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "executor/link.h"

typedef struct {
  sl_link *link;
  double bytes, took;
} job;

static void *run(void *arg)
{
  job *j = arg;
  j->took = sl_link_transfer(j->link, j->bytes);
  return NULL;
}

/* One transfer alone moves at the link's rate, after its latency; at a
 * time scale of 2 both stretch twice. */
static void test_one_transfer(void **state)
{
  (void)state;
  sl_link l;
  assert_int_equal(sl_link_init(&l, 10e6, 0.05, 2), 0);
  double took = sl_link_transfer(&l, 1e6); /* (0.1 s + 0.05 s) x 2 */
  assert_true(took >= 0.3 - 1e-3);
  assert_true(took < 1.5);
  sl_link_destroy(&l);
}

/* Four equal transfers started together share the link: each takes as
 * long as all four bytes at the full rate, not a quarter of it. */
static void test_transfers_share(void **state)
{
  (void)state;
  sl_link l;
  assert_int_equal(sl_link_init(&l, 20e6, 0, 1), 0);
  job jobs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (job){.link = &l, .bytes = 1e6};
    assert_int_equal(pthread_create(&th[i], NULL, run, &jobs[i]), 0);
  }
  double longest = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    longest = fmax(longest, jobs[i].took);
  }
  assert_true(longest >= 0.2 - 5e-3); /* 4 MB at 20 MB/s */
  assert_true(longest < 2.0);
  assert_int_equal(l.active, 0);
  sl_link_destroy(&l);
}

/* No bandwidth given: no limit, no wait. */
static void test_unlimited(void **state)
{
  (void)state;
  sl_link l;
  assert_int_equal(sl_link_init(&l, 0, 0, 1), 0);
  assert_true(sl_link_transfer(&l, 1e12) < 0.5);
  sl_link_destroy(&l);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_one_transfer),
    cmocka_unit_test(test_transfers_share),
    cmocka_unit_test(test_unlimited),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
