/* Micro-benchmarks and the reference loop (micro.h). */
#include "micro.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/engine.h"
#include "executor/local_cluster.h"
#include "models/plan.h"
#include "sim/engine.h"

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sl_bench_median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

double sl_bench_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One pass of the reference work; returns a value the compiler must keep. */
static uint64_t reference_pass(uint64_t *table, size_t n)
{
  uint64_t x = 88172645463325252ULL, sum = 0;
  for (int i = 0; i < 4000000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    table[x % n] += x;
    if ((i & 15) == 0) {
      char *p = malloc(32 + (x & 255));
      if (p) {
        p[0] = (char)x;
        sum += (unsigned char)p[0];
        free(p);
      }
    }
    sum += table[(x >> 20) % n];
  }
  return sum;
}

double sl_bench_reference_s(int runs)
{
  enum { N = 1 << 17 }; /* 1 MiB: larger than L1 and L2, like a core's books */
  uint64_t *table = calloc(N, sizeof *table);
  double t[32];
  volatile uint64_t sink = 0;
  runs = runs < 1 ? 1 : runs > 32 ? 32 : runs;
  if (!table)
    return 0;
  for (int r = 0; r < runs; r++) {
    double t0 = sl_bench_now();
    sink += reference_pass(table, N);
    t[r] = sl_bench_now() - t0;
  }
  (void)sink;
  free(table);
  /* The fastest pass is the machine undisturbed: other processes only
   * ever add time. */
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  return t[0];
}

/* ------------------------------------------------------------------------ */

static sl_op_spec *add_op(sl_workload *w, const char *name, const char *kernel, sl_op_kind kind, double cpu)
{
  sl_op_spec *o = &w->ops[w->nops++];
  memset(o, 0, sizeof *o);
  snprintf(o->name, sizeof o->name, "%s", name);
  snprintf(o->kernel, sizeof o->kernel, "%s", kernel);
  o->kind = kind;
  o->cpu = cpu;
  o->rows_out_per_row = 1;
  return o;
}

static int remove_dir(const char *dir)
{
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

int sl_bench_dispatch(int64_t tasks, int runs, bool verbose, double *tasks_per_s)
{
  sl_workload w = {0};
  snprintf(w.name, sizeof w.name, "dispatch");
  w.target_partition_bytes = 16;
  w.seed = 1;
  sl_op_spec *src = add_op(&w, "read", "generate", SL_OP_SOURCE, 1);
  src->tasks = tasks;
  src->rows_per_task = 1;
  src->out_row_bytes = 16;
  add_op(&w, "noop", "noop", SL_OP_MAP, 0.5);
  sl_plan plan;
  char err[600];
  sl_plan_opts po = {0};
  if (sl_plan_build(&plan, &w, &po, err, sizeof err) < 0) {
    fprintf(stderr, "dispatch: %s\n", err);
    return -1;
  }
  sl_cluster c;
  if (sl_exec_local_cluster(&c, 1e9) < 0)
    return -1;
  double rates[32];
  runs = runs < 1 ? 1 : runs > 32 ? 32 : runs;
  int rc = 0;
  for (int r = 0; r < runs && !rc; r++) {
    sl_exec_opts o;
    sl_exec_opts_default(&o);
    char dir[] = "/tmp/sluice-bench-XXXXXX";
    if (!mkdtemp(dir)) {
      rc = -1;
      break;
    }
    o.out_dir = dir;
    sl_summary s;
    if (sl_exec_run(&plan, &c, &o, &s, err, sizeof err) < 0) {
      fprintf(stderr, "dispatch: run failed: %s\n", err);
      rc = -1;
    } else {
      rates[r] = (double)s.tasks / s.jct_s;
      if (verbose)
        printf("dispatch run %d: %lld tasks in %.3f s: %.0f tasks/s, %.2f us/task\n", r + 1,
               (long long)s.tasks, s.jct_s, rates[r], 1e6 / rates[r]);
    }
    if (remove_dir(dir) < 0)
      rc = -1;
  }
  if (!rc)
    *tasks_per_s = sl_bench_median(rates, runs);
  if (!rc && verbose)
    printf("dispatch median: %.0f tasks/s, %.2f us per task (%g slots)\n", *tasks_per_s,
           1e6 / *tasks_per_s, c.groups[0].cpu * 2);
  sl_cluster_free(&c);
  return rc;
}

int sl_bench_sim_rate(int64_t tasks, int runs, bool verbose, double *tasks_per_s)
{
  sl_workload w = {0};
  snprintf(w.name, sizeof w.name, "bench-rate");
  w.target_partition_bytes = 1e6;
  sl_op_spec *src = add_op(&w, "read", "", SL_OP_SOURCE, 1);
  src->tasks = tasks;
  src->rows_per_task = 1;
  src->out_row_bytes = 1e6; /* one partition per row: no coalescing */
  src->time_per_task = 0.01;
  sl_op_spec *map = add_op(&w, "transform", "", SL_OP_MAP, 0.99);
  map->time_per_row = 0.01;
  map->out_row_bytes = 1e6;
  sl_plan plan;
  char err[256];
  sl_plan_opts po = {0};
  if (sl_plan_build(&plan, &w, &po, err, sizeof err) < 0) {
    fprintf(stderr, "sim rate: %s\n", err);
    return -1;
  }
  sl_cluster c = {0};
  snprintf(c.name, sizeof c.name, "one-node");
  c.ngroups = 1;
  sl_node_group *g = &c.groups[0];
  snprintf(g->name, sizeof g->name, "n");
  g->count = 1;
  g->cpu = 16;
  g->cpu_speed = g->gpu_speed = 1;
  g->store_bytes = 1e9;
  g->memory_bytes = 4e9;
  g->nic_bps = 25e9 / 8;
  if (sl_cluster_expand(&c) != 0)
    return -1;
  double rate[32];
  runs = runs < 1 ? 1 : runs > 32 ? 32 : runs;
  int rc = 0;
  for (int k = 0; k < runs && !rc; k++) {
    sl_sim_opts o;
    sl_sim_opts_default(&o);
    o.plan = &plan;
    o.cluster = &c;
    o.keep_tasks = false;
    sl_sim_result r;
    sl_sim_run(&o, &r);
    if (r.code < 0 || !r.summary.complete) {
      fprintf(stderr, "sim rate: run failed: %s %s\n", r.err, r.summary.note);
      rc = -1;
      break;
    }
    rate[k] = (double)r.summary.tasks / r.wall_s;
    if (verbose)
      printf("sim rate run %d: %lld tasks in %.3f s wall = %.0f tasks/s\n", k + 1,
             (long long)r.summary.tasks, r.wall_s, rate[k]);
  }
  if (!rc) {
    *tasks_per_s = sl_bench_median(rate, runs);
    if (verbose)
      printf("sim rate median: %.0f simulated tasks per wall second\n", *tasks_per_s);
  }
  sl_cluster_free(&c);
  return rc;
}
