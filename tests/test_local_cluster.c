/* This machine as a cluster (executor/local_cluster.h): one node, at
 * least one CPU slot, its memory, the store at 30% of it unless given,
 * as many GPU slots as CUDA devices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <unistd.h>

#include "executor/local_cluster.h"
#include "workloads/kernels/gemm_cuda.h"

static void test_one_node_of_this_machine(void **state)
{
  (void)state;
  sl_cluster c;
  assert_int_equal(sl_exec_local_cluster(&c, 0), 0);
  assert_int_equal(c.nnodes, 1);
  assert_int_equal(c.ngroups, 1);
  const sl_node_group *g = sl_cluster_node_group(&c, 0);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  assert_true(g->cpu >= 1 && g->cpu <= (online > 0 ? online : 1));
  assert_int_equal(g->gpu, sl_cuda_device_count());
  double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  assert_true(g->memory_bytes == memory);
  assert_true(g->store_bytes == 0.3 * memory);
  assert_true(g->cpu_speed == 1 && g->gpu_speed == 1);
  sl_cluster_free(&c);
}

static void test_store_as_given(void **state)
{
  (void)state;
  sl_cluster c;
  assert_int_equal(sl_exec_local_cluster(&c, 123e6), 0);
  assert_true(sl_cluster_node_group(&c, 0)->store_bytes == 123e6);
  sl_cluster_free(&c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_one_node_of_this_machine),
    cmocka_unit_test(test_store_as_given),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
