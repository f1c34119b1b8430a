/* The executor's emulated network: transfers share the links of their
 * paths max-min fairly, each waits its path's latency, and what has no
 * limit costs nothing. The bounds are loose on the slow side (a loaded
 * machine wakes threads late) and exact on the fast one: a sleep never
 * ends early. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "executor/net.h"

#define MB 1e6

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  sl_net *net;
  int from, to;
  double bytes, took;
  double start, end; /* on the monotonic clock */
} job;

static void *run(void *arg)
{
  job *j = arg;
  j->start = now_s();
  j->took = sl_net_transfer(j->net, j->from, j->to, j->bytes);
  j->end = now_s();
  return NULL;
}

/* Runs @p n transfers at once; from the first start to the last end. That,
 * not the longest transfer, is what a shared link bounds below, however the
 * threads' starts fall (a loaded host may start one late, and the others
 * have the link to themselves meanwhile). */
static double run_all(job *jobs, int n)
{
  pthread_t th[8];
  for (int i = 0; i < n; i++)
    assert_int_equal(pthread_create(&th[i], NULL, run, &jobs[i]), 0);
  double first = INFINITY, last = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    first = fmin(first, jobs[i].start);
    last = fmax(last, jobs[i].end);
  }
  return last - first;
}

/* Three nodes with NICs of @p nic bytes per second and a storage link of
 * @p storage. */
static void cluster3(sl_cluster *c, double nic, double storage, double storage_latency)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "net3");
  c->ngroups = 1;
  snprintf(c->groups[0].name, sizeof c->groups[0].name, "n");
  c->groups[0].count = 3;
  c->groups[0].cpu = 4;
  c->groups[0].nic_bps = nic;
  c->groups[0].memory_bytes = c->groups[0].store_bytes = 1e9;
  c->storage_bps = storage;
  c->storage_latency_s = storage_latency;
  assert_int_equal(sl_cluster_expand(c), 0);
}

/* Four reads started together share the storage link: each takes as long
 * as all four at its full rate, plus the link's latency; at a time scale
 * of 2 (sl_cluster_scale_time()) both stretch twice. */
static void test_storage_reads_share(void **state)
{
  (void)state;
  sl_cluster c;
  cluster3(&c, 0, 20 * MB, 0.05);
  sl_cluster_scale_time(&c, 2);
  sl_net *n = sl_net_new(&c);
  assert_non_null(n);
  job jobs[4];
  for (int i = 0; i < 4; i++)
    jobs[i] = (job){.net = n, .from = SL_NET_STORAGE, .to = i % 3, .bytes = 1 * MB};
  double longest = run_all(jobs, 4);
  assert_true(longest >= 2 * (0.2 + 0.05) - 5e-3); /* 4 MB at 20 MB/s, then x2 */
  assert_true(longest < 3.0);
  sl_net_free(n);
  sl_cluster_free(&c);
}

/* Two senders into one node share its NIC's down link (half each), while a
 * third transfer between the other two nodes' free directions runs at
 * full speed alongside. */
static void test_nic_down_link_shared(void **state)
{
  (void)state;
  sl_cluster c;
  cluster3(&c, 10 * MB, 0, 0);
  sl_net *n = sl_net_new(&c);
  job into1[2] = {{.net = n, .from = 0, .to = 1, .bytes = 1 * MB}, {.net = n, .from = 2, .to = 1, .bytes = 1 * MB}};
  double longest = run_all(into1, 2);
  assert_true(longest >= 0.2 - 5e-3); /* 2 MB through a 10 MB/s link */
  assert_true(longest < 2.0);
  /* no limit: nothing waits; a node sends nothing to itself */
  assert_true(sl_net_transfer(n, 1, 1, 1e12) == 0);
  sl_net_free(n);
  sl_cluster_free(&c);
  cluster3(&c, 0, 0, 0);
  n = sl_net_new(&c);
  assert_true(sl_net_transfer(n, 0, 1, 1e12) < 0.5);
  assert_true(sl_net_transfer(n, SL_NET_STORAGE, 1, 1e12) < 0.5);
  sl_net_free(n);
  sl_cluster_free(&c);
}

typedef struct {
  sl_net *net;
  int node;
  bool write;
  double bytes, took;
  double start, end; /* on the monotonic clock */
} disk_job;

static void *run_disk(void *arg)
{
  disk_job *j = arg;
  j->start = now_s();
  j->took = sl_net_disk(j->net, j->node, j->bytes, j->write);
  j->end = now_s();
  return NULL;
}

/* A node's disk as its group gives it: two spills written at once share
 * its write bandwidth, a read back alongside has the read side to itself,
 * and another node's disk is its own. A node without a disk waits for
 * nothing. */
static void test_disk_spills_share(void **state)
{
  (void)state;
  sl_cluster c;
  cluster3(&c, 0, 0, 0);
  sl_cluster_free(&c);
  c.groups[0].disks = 2;
  c.groups[0].disk_write_bps = c.groups[0].disk_read_bps = 5 * MB; /* 10 MB/s striped */
  assert_int_equal(sl_cluster_expand(&c), 0);
  sl_net *n = sl_net_new(&c);
  assert_non_null(n);
  disk_job jobs[4] = {{.net = n, .node = 0, .write = true, .bytes = 1 * MB},
                      {.net = n, .node = 0, .write = true, .bytes = 1 * MB},
                      {.net = n, .node = 0, .write = false, .bytes = 1 * MB},
                      {.net = n, .node = 1, .write = true, .bytes = 1 * MB}};
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&th[i], NULL, run_disk, &jobs[i]), 0);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  /* 2 MB at 10 MB/s: the two writes keep the disk 0.2 s, however their
   * threads' starts fall (a loaded host started one 50 ms late, and the
   * other had the disk to itself meanwhile) */
  double first = fmin(jobs[0].start, jobs[1].start), last = fmax(jobs[0].end, jobs[1].end);
  assert_true(last - first >= 0.2 - 5e-3);
  assert_true(jobs[0].took >= 0.1 - 5e-3 && jobs[1].took >= 0.1 - 5e-3); /* each its 1 MB at most 10 MB/s */
  assert_true(jobs[2].took >= 0.1 - 5e-3 && jobs[3].took >= 0.1 - 5e-3);
  assert_true(jobs[0].took < 2.0 && jobs[2].took < 2.0);
  sl_net_free(n);
  sl_cluster_free(&c);
  cluster3(&c, 0, 0, 0);
  n = sl_net_new(&c);
  assert_true(sl_net_disk(n, 0, 1e12, true) < 0.5);
  sl_net_free(n);
  sl_cluster_free(&c);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_disk_spills_share),
    cmocka_unit_test(test_storage_reads_share),
    cmocka_unit_test(test_nic_down_link_shared),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
