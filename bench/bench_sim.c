/*
 * Simulator speed:
 *   rate   simulated tasks per wall second on one node (16 CPU slots, a
 *          source of 1-row tasks feeding a 1-row map: 2 tasks per row);
 *   scale  a heterogeneous 1,000-node cluster (800 CPU nodes x 16 slots,
 *          200 GPU nodes x 8 CPU + 4 GPU at 1.5x CPU speed) running about
 *          1,000,000 tasks (read -> transform on CPU -> infer on GPU, one
 *          1 MB row each, task times spread by 20%), without tasks.csv:
 *          wall time and peak memory. Most inferences pull their input
 *          from a CPU node, so the network carries ~650,000 transfers.
 * Each is run REPS times (default 3); the median is printed.
 *
 *   bench_sim [rate|scale|all] [REPS] [SCALE_TASKS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/micro.h"
#include "models/error.h"
#include "sim/engine.h"

static sl_op_spec *add_op(sl_workload *w, const char *name, sl_op_kind kind, double cpu, double gpu)
{
  sl_op_spec *o = &w->ops[w->nops++];
  memset(o, 0, sizeof *o);
  snprintf(o->name, sizeof o->name, "%s", name);
  o->kind = kind;
  o->cpu = cpu;
  o->gpu = gpu;
  o->rows_out_per_row = 1;
  return o;
}

static void group(sl_node_group *g, const char *name, int count, double cpu, double gpu, double speed, double store)
{
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->count = count;
  g->cpu = cpu;
  g->gpu = gpu;
  g->cpu_speed = speed;
  g->gpu_speed = 1;
  g->memory_bytes = 4 * store;
  g->store_bytes = store;
  g->nic_bps = 25e9 / 8;
}


static int run(const sl_plan *plan, const sl_cluster *c, sl_sim_result *r)
{
  sl_sim_opts o;
  sl_sim_opts_default(&o);
  o.plan = plan;
  o.cluster = c;
  o.keep_tasks = false;
  sl_sim_run(&o, r);
  if (r->code < 0 || !r->summary.complete) {
    fprintf(stderr, "bench_sim: run failed: %s %s\n", r->err, r->summary.note);
    return 1;
  }
  return 0;
}

static int bench_rate(int reps)
{
  double rate;
  return sl_bench_sim_rate(100000, reps, true, &rate) < 0;
}

static int bench_scale(int reps, int64_t ntasks)
{
  sl_workload w = {0};
  snprintf(w.name, sizeof w.name, "bench-scale");
  w.target_partition_bytes = 1e6;
  sl_op_spec *src = add_op(&w, "read", SL_OP_SOURCE, 1, 0);
  src->tasks = ntasks / 3;
  src->rows_per_task = 1;
  src->out_row_bytes = 1e6;
  src->time_per_task = 0.2;
  /* Task times spread as real ones do: identical times would end 14,400
   * tasks at the same instant and turn every wave into a burst of
   * thousands of simultaneous transfers. */
  src->time_spread = 0.2;
  sl_op_spec *t = add_op(&w, "transform", SL_OP_MAP, 0.99, 0);
  t->time_per_row = 0.3;
  t->time_spread = 0.2;
  t->out_row_bytes = 1e6;
  sl_op_spec *inf = add_op(&w, "infer", SL_OP_MAP_BATCHES, 0, 1);
  inf->time_per_row = 0.1;
  inf->time_spread = 0.2;
  inf->batch_size = 1;
  inf->out_row_bytes = 1000;
  sl_plan plan;
  char err[256];
  sl_plan_opts po = {0};
  if (sl_plan_build(&plan, &w, &po, err, sizeof err) < 0) {
    fprintf(stderr, "bench_sim: %s\n", err);
    return 1;
  }
  sl_cluster c = {0};
  snprintf(c.name, sizeof c.name, "hetero-1000");
  c.ngroups = 2;
  c.backbone_bps = 1e12;
  c.latency_s = 50e-6;
  group(&c.groups[0], "cpu", 800, 16, 0, 1, 4e9);
  group(&c.groups[1], "gpu", 200, 8, 4, 1.5, 8e9);
  sl_cluster_expand(&c);
  double wall[16], rss[16];
  for (int k = 0; k < reps; k++) {
    sl_sim_result r;
    if (run(&plan, &c, &r))
      return 1;
    wall[k] = r.wall_s;
    rss[k] = r.peak_rss_bytes;
    printf("scale run %d: %lld tasks on %d nodes in %.2f s wall, peak RSS %.0f MB (simulated JCT %.1f s, %.1f%% of bound)\n",
           k + 1, (long long)r.summary.tasks, c.nnodes, r.wall_s, r.peak_rss_bytes / 1e6, r.summary.jct_s,
           r.summary.pct_of_bound);
  }
  printf("scale median: %.2f s wall, %.0f MB peak RSS\n", sl_bench_median(wall, reps), sl_bench_median(rss, reps) / 1e6);
  sl_cluster_free(&c);
  return 0;
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "all";
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  int64_t ntasks = argc > 3 ? atoll(argv[3]) : 1000000;
  if (reps < 1 || reps > 16)
    reps = 3;
  int rc = 0;
  if (strcmp(what, "rate") == 0 || strcmp(what, "all") == 0)
    rc |= bench_rate(reps);
  if (strcmp(what, "scale") == 0 || strcmp(what, "all") == 0)
    rc |= bench_scale(reps, ntasks);
  return rc;
}
