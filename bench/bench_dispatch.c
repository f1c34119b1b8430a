/*
 * Dispatch overhead of the real executor: no-op tasks over many small
 * partitions (a source task yields one 16-byte row, a map passes it on),
 * on the slots of this machine. Prints tasks per second and microseconds
 * per task, median of several runs.
 *
 * usage: bench_dispatch [source_tasks] [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/engine.h"
#include "models/plan.h"

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? atoll(argv[1]) : 200000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  sl_workload w = {0};
  snprintf(w.name, sizeof w.name, "dispatch");
  w.target_partition_bytes = 16;
  w.seed = 1;
  w.nops = 2;
  sl_op_spec *src = &w.ops[0], *map = &w.ops[1];
  snprintf(src->name, sizeof src->name, "read");
  snprintf(src->kernel, sizeof src->kernel, "generate");
  src->kind = SL_OP_SOURCE;
  src->cpu = 1;
  src->tasks = n;
  src->rows_per_task = 1;
  src->out_row_bytes = 16;
  src->rows_out_per_row = 1;
  snprintf(map->name, sizeof map->name, "noop");
  snprintf(map->kernel, sizeof map->kernel, "noop");
  map->kind = SL_OP_MAP;
  map->cpu = 0.5;
  map->rows_out_per_row = 1;
  sl_plan plan;
  char err[600];
  sl_plan_opts po = {0};
  if (sl_plan_build(&plan, &w, &po, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  sl_cluster c;
  if (sl_exec_local_cluster(&c, 1e9) < 0)
    return 1;
  double rates[32];
  runs = runs > 32 ? 32 : runs;
  for (int r = 0; r < runs; r++) {
    sl_exec_opts o;
    sl_exec_opts_default(&o);
    char dir[] = "/tmp/sluice-bench-XXXXXX";
    if (!mkdtemp(dir))
      return 1;
    o.out_dir = dir;
    sl_summary s;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (sl_exec_run(&plan, &c, &o, &s, err, sizeof err) < 0) {
      fprintf(stderr, "run failed: %s\n", err);
      return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    rates[r] = (double)s.tasks / s.jct_s;
    printf("run %d: %lld tasks in %.3f s (job) %.3f s (with outputs): %.0f tasks/s, %.2f us/task\n", r,
           (long long)s.tasks, s.jct_s, wall, rates[r], 1e6 / rates[r]);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
      return 1;
  }
  qsort(rates, runs, sizeof rates[0], cmp);
  double med = rates[runs / 2];
  printf("median: %.0f tasks/s, %.2f us per task (%d slots on %d cores)\n", med, 1e6 / med,
         (int)c.groups[0].cpu * 2, (int)c.groups[0].cpu);
  sl_cluster_free(&c);
  return 0;
}
