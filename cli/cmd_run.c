#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli/engine_opts.h"
#include "cli/run_setup.h"
#include "executor/head.h"
#include "report.h"
#include "executor/engine.h"
#include "executor/local_cluster.h"
#include "models/bound.h"
#include "models/error.h"
#include "sim/costs.h"
#include "workloads/units.h"

static const char *USAGE =
  "sluice run WORKLOAD [--cluster SPEC] [--model MODEL] [--memory SIZE] [--on-full spill|oom]\n"
  "                    [--launch local|ssh|slurm|none [--listen ENDPOINT] [--node-timeout TIME]]\n"
  "                    [--fail SCHEDULE] [--out DIR] [--reservation-ratio R]\n"
  "                    [--checkpoint-interval TIME] [--checkpoint-cost TIME] [--restart-cost TIME]\n"
  "                    [--seed N] [--stall-timeout TIME] [--max-errored-rows N] [--time-scale F]\n"
  "                    [--record-events FILE | --replay-events FILE] [--auto-order]\n"
  "                    [--profile NAME|FILE] [--autoplace POLICY [--autoplace-interval TIME]] [--quiet]";

static const char *HELP =
  "Runs WORKLOAD on this machine: one worker thread per slot of each virtual\n"
  "node, real buffers counted against each node's store, real kernels (GPU\n"
  "kernels on CUDA when a GPU is present, otherwise emulated).\n\n"
  "  --cluster SPEC        virtual nodes (default: this machine, from hwloc)\n"
  "  --model MODEL         streaming (default), streaming-plus, streaming-noadapt,\n"
  "                        streaming-nopart, static, batch or stream\n"
  "  --memory SIZE         partition store budget per node (e.g. 80MB)\n"
  "  --on-full spill|oom   past the budget: spill to disk (default) or fail\n"
  "  --fail SCHEDULE       failures: kill[:OP]@T, lose:NODE@T, join:NODE@T, comma separated\n"
  "                        (NODE = index or GROUP.INDEX; a join comes after its node's loss;\n"
  "                        faults that do not apply are reported)\n"
  "  --out DIR             summary.csv, timeline.csv, tasks.csv (default runs/run-WORKLOAD-MODEL)\n"
  "  --reservation-ratio R Ray Data's per-operator reservation (default %g)\n"
  "  --checkpoint-interval TIME   stream model: time between checkpoints (default %gs)\n"
  "  --checkpoint-cost TIME       stream model: pause per checkpoint (default %gs)\n"
  "  --restart-cost TIME          stream model: pause per rollback (default %gs)\n"
  "  --seed N              task time spreads (default: the workload's seed)\n"
  "  --record-events FILE  write the events the core was fed, for --replay-events\n"
  "  --replay-events FILE  run nothing: feed FILE's events to the core alone and say\n"
  "                        whether it decides as the recorded run did (exit 1 if not)\n"
  "  --stall-timeout TIME  fail a run that makes no progress this long (default: never)\n"
  "  --max-errored-rows N  rows a kernel may reject before the run fails (default 0)\n"
  "  --time-scale F        multiply every modelled time by F (0.1: ten times faster)\n"
  "  --auto-order          run the operators of each reorder_group in the order with the\n"
  "                        best bound on the cluster (`sluice plan --auto-order` ranks them)\n"
  "  --profile NAME|FILE   charge a system's own costs beside the operators' (per task, per\n"
  "                        partition, per byte copied or serialized): ideal (none, the default),\n"
  "                        raydata, spark, flink, sluice (profiles/NAME.ini, each number's source\n"
  "                        beside it), or a profile file\n"
  SL_CLI_AUTOPLACE_HELP
  "  --launch HOW          run each node of the cluster in a worker process (sluice worker)\n"
  "                        that this process, the head, drives over ZeroMQ: local (started\n"
  "                        here), ssh (on each node's host, its group's `hosts`; $SLUICE_SSH\n"
  "                        replaces ssh), slurm (srun, one per node of the allocation) or none\n"
  "                        (started by hand or by any tool; no join faults: start one by hand).\n"
  "                        A lose fault SIGKILLs the node's worker (slurm, none: it is told to)\n"
  "  --listen ENDPOINT     where the head takes its workers (default tcp://127.0.0.1:*: a free port)\n"
  "  --node-timeout TIME   a worker silent this long is lost (default 2s)\n"
  "  --quiet               no progress line\n\n"
  "Times need a unit (15s, 500ms, 2min). 'sluice spec' describes the spec files.\n"
  "Exit codes: 0 complete, 1 the run failed or was interrupted, 2 bad usage or input.\n";

/* The defaults come from the code that applies them. */
static void print_help(void)
{
  sl_core_opts d;
  sl_core_opts_default(&d);
  printf("usage: %s\n\n", USAGE);
  printf(HELP, d.reservation_ratio, d.checkpoint_interval_s, d.checkpoint_cost_s, d.restart_cost_s);
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
  (void)sig;
  interrupted = 1;
}

/*
 * A run of real kernels took the time its kernels took, not the spec's
 * estimates, and a bound of those estimates says nothing of it (the images
 * pipeline on an H200 read 135% of its bound). Its bound is recomputed from
 * its own tasks, fitted as `sluice calibrate` fits them, and summary.csv is
 * written again with it (bound_costs = measured). Where the fit fails, the
 * spec's bound stays, and says so.
 */
static void bound_of_measured_costs(const sl_plan *plan, const sl_cluster *cluster, const char *dir, sl_summary *s)
{
  sl_sim_costs *costs = malloc(sizeof *costs);
  sl_plan *measured = malloc(sizeof *measured);
  /* a shallow copy: only its groups' disks change, its nodes are the run's */
  sl_cluster *with_disk = malloc(sizeof *with_disk);
  char workload[64], err[600];
  sl_bound b;
  if (costs && measured && with_disk && sl_sim_calibrate(dir, costs, workload, sizeof workload, err, sizeof err) == 0) {
    *measured = *plan;
    /* what spilled did so on this machine's disk, at the pace the run
     * measured: the bound then owes the time the data that the stores
     * cannot hold takes to go there and back */
    *with_disk = *cluster;
    sl_sim_costs_apply_disk(costs, with_disk);
    if (sl_sim_costs_apply(costs, measured, err, sizeof err) == 0 &&
        sl_bound_compute(measured, with_disk, &b) == 0 && b.jct_s > 0) {
      s->bound_s = b.jct_s;
      s->disk_bound_s = b.disk_s;
      s->disk_read_bps = costs->disk_read_bps;
      s->disk_write_bps = costs->disk_write_bps;
      s->bound_throughput_rows_s = b.throughput_rows_s * measured->ops[measured->nops - 1].alpha_rows;
      s->pct_of_bound = s->jct_s > 0 ? 100 * s->bound_s / s->jct_s : 0;
      snprintf(s->bound_costs, sizeof s->bound_costs, "measured");
      if (sl_summary_write(s, dir, err, sizeof err) < 0)
        fprintf(stderr, "sluice run: %s\n", err);
    }
  }
  free(costs);
  free(measured);
  free(with_disk);
}

/* What the sink proved of the output (check = sorted or grouped). */
static void print_output_check(const sl_workload *w, const sl_summary *s)
{
  bool grouped = w->nops > 0 && w->ops[w->nops - 1].check == SL_CHECK_GROUPED;
  const char *check = grouped ? "grouped" : "sorted";
  if (strcmp(s->output_check, "passed") == 0 && grouped)
    printf("  output check passed: one row per group, each with the count, sum, min and max its records "
           "give it (check = grouped)\n");
  else if (strcmp(s->output_check, "passed") == 0)
    printf("  output check passed: every partition sorted, partitions in key order, the source's records "
           "each once (check = sorted)\n");
  else if (s->output_check[0])
    printf("  output check %s (check = %s)\n", s->output_check, check);
}

/* Runs a prepared run here, or on worker processes with --launch, and
 * reports it. */
static int run_prepared(sl_cli_run *r, int argc, char **argv)
{
  sl_exec_opts eo = r->eo;
  const sl_plan *pp = &r->plan;
  const sl_cluster *cp = &r->cluster;
  const char *outdir = r->outdir;
  const sl_workload *w = &r->w;
  eo.interrupted = &interrupted;
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  /* Past a file size limit (ulimit -f) a write fails with EFBIG, reported
   * like a full disk, instead of the signal killing the run mid-file. */
  signal(SIGXFSZ, SIG_IGN);

  sl_summary s;
  memset(&s, 0, sizeof s);
  char err[600];
  int rc;
  if (r->launch) {
    sl_head_opts ho;
    sl_head_opts_default(&ho);
    ho.launch = r->launch;
    ho.listen = r->listen;
    ho.node_timeout_s = r->node_timeout_s;
    ho.argc = argc - 1; /* after "run" */
    ho.argv = (const char *const *)argv + 1;
    rc = sl_head_run(pp, cp, &eo, &ho, &s, err, sizeof err);
  } else {
    rc = sl_exec_run(pp, cp, &eo, &s, err, sizeof err);
  }
  if (rc == 0 && s.complete && s.real_kernels)
    bound_of_measured_costs(pp, cp, outdir, &s);
  if (rc == SL_EIO && s.workload[0] == 0) {
    fprintf(stderr, "sluice run: %s\n", err);
    return SL_EXIT_FAILED;
  }
  if (rc == SL_EINVAL || (rc == SL_EOOM && s.workload[0] == 0)) {
    fprintf(stderr, "sluice run: %s\n", err);
    return rc == SL_EOOM ? SL_EXIT_FAILED : SL_EXIT_USAGE;
  }
  printf("%s on %s, %s model: %s in %.2f s, %.1f rows/s, %.1f%% of the %.2f s bound%s\n", s.workload,
         s.cluster, s.model, s.complete ? "complete" : "INCOMPLETE", s.jct_s, s.throughput_rows_s,
         s.pct_of_bound, s.bound_s, strcmp(s.bound_costs, "measured") == 0 ? " of its measured costs" : "");
  if (r->launch && s.complete && s.pct_of_bound > 105)
    /* in one process the executor emulates the spec's links; across
     * processes the transfers take what the real network gives */
    printf("  faster than the bound: it charges the cluster spec's links, and this run's partitions crossed a "
           "faster network (sluice calibrate fits the links it saw)\n");
  printf("  rows %.0f of %.0f, tasks %lld (%lld retried), lost partitions %lld, checksum %016llx\n",
         s.rows, s.expected_rows, (long long)s.tasks, (long long)s.retried_tasks,
         (long long)s.lost_partitions, (unsigned long long)s.sink_checksum);
  print_output_check(w, &s);
  printf("  peak RSS %.1f MB, accelerator %s\n", s.peak_rss_bytes / 1e6, s.accelerator);
  sl_cli_print_stores(stdout, &s);
  sl_cli_print_idle(stdout, &s);
  sl_cli_print_cost(stdout, &s);
  if (s.faults_applied > 0 || s.faults_not_applied[0])
    printf("  faults %lld applied%s\n", (long long)s.faults_applied, s.faults_not_applied[0] ? "; not applied:" : "");
  sl_cli_print_list(stdout, "    ", s.faults_not_applied);
  printf("  outputs in %s\n", outdir);
  if (rc) {
    fprintf(stderr, "sluice run: %s\n", err);
    return SL_EXIT_FAILED;
  }
  return SL_EXIT_OK;
}

int sl_cli_run_prepare(int argc, char **argv, sl_cli_run *r)
{
  enum { O_CLUSTER = 'c', O_MAX_ERRORED = 'e', O_TIME_SCALE = 't', O_HELP = 'h', O_LAUNCH = 2000, O_LISTEN,
         O_NODE_TIMEOUT };
  static const struct option opts[] = {
    SL_CLI_ENGINE_LONGOPTS,
    {"cluster", required_argument, NULL, O_CLUSTER},
    {"max-errored-rows", required_argument, NULL, O_MAX_ERRORED},
    {"time-scale", required_argument, NULL, O_TIME_SCALE},
    {"launch", required_argument, NULL, O_LAUNCH},
    {"listen", required_argument, NULL, O_LISTEN},
    {"node-timeout", required_argument, NULL, O_NODE_TIMEOUT},
    {"help", no_argument, NULL, O_HELP},
    {0}};
  const char *cluster_arg = NULL;
  memset(r, 0, sizeof *r);
  sl_cli_engine_opts_default(&r->a);
  sl_exec_opts_default(&r->eo);
  r->time_scale = 1;
  r->node_timeout_s = 2;
  r->listen = "tcp://127.0.0.1:*";
  sl_cli_engine_opts *a = &r->a;
  sl_exec_opts *eo = &r->eo;
  int ch;
  sl_cli_set_command("run");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    int rc = ch == '?' || ch == ':' ? 1 : sl_cli_engine_option("run", ch, optarg, a);
    if (rc != 1) {
      if (rc)
        return rc;
      continue;
    }
    switch (ch) {
    case O_CLUSTER:
      cluster_arg = optarg;
      break;
    case O_MAX_ERRORED: {
      int64_t n;
      if (sl_cli_parse_count("run", "--max-errored-rows", optarg, 0, INT64_MAX, &n))
        return SL_EXIT_USAGE;
      eo->max_errored_rows = n;
      break;
    }
    case O_TIME_SCALE:
      if (sl_parse_number(optarg, &r->time_scale) < 0 || !(r->time_scale > 0) || !isfinite(r->time_scale))
        return sl_cli_usage_error("run", "--time-scale takes a positive factor, not '%s'", optarg);
      break;
    case O_LAUNCH:
      if (strcmp(optarg, "local") && strcmp(optarg, "ssh") && strcmp(optarg, "slurm") && strcmp(optarg, "none"))
        return sl_cli_usage_error("run", "--launch takes local, ssh, slurm or none, not '%s'", optarg);
      r->launch = optarg;
      break;
    case O_LISTEN:
      r->listen = optarg;
      break;
    case O_NODE_TIMEOUT:
      if (sl_cli_parse_time("run", "--node-timeout", optarg, true, &r->node_timeout_s))
        return SL_EXIT_USAGE;
      break;
    case O_HELP:
      print_help();
      return -1;
    default:
      return sl_cli_usage_error("run", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("run", optind >= argc ? "missing WORKLOAD" : "too many arguments");
  if (sl_cli_engine_opts_check("run", a))
    return SL_EXIT_USAGE;
  if (r->launch && (a->replay || a->record))
    return sl_cli_usage_error("run", "--launch runs the plan on worker processes: --record-events and "
                                     "--replay-events are for a run in this process");
  eo->core = a->core;
  if (a->have_seed)
    eo->core.seed = a->seed;
  eo->stall_timeout_s = a->stall_timeout_s;
  eo->record_events = a->record;

  int rc = sl_cli_load_workload(argv[optind], &r->w);
  if (rc)
    return rc;
  if (cluster_arg) {
    if ((rc = sl_cli_load_cluster(cluster_arg, &r->w, &r->cluster)))
      return rc;
  } else if (sl_exec_local_cluster(&r->cluster, 0) < 0) {
    fprintf(stderr, "sluice run: cannot describe this machine\n");
    return SL_EXIT_FAILED;
  }
  r->have_cluster = true;
  /* the order first: the plan follows it */
  if ((a->auto_order && (rc = sl_cli_auto_order("run", &r->w, &r->cluster, a->quiet))) ||
      (rc = sl_cli_build_plan(&r->w, &r->plan)) || (rc = sl_cli_apply_profile("run", a->profile, &r->plan))) {
    sl_cli_run_free(r);
    return rc;
  }
  if (a->memory > 0)
    sl_cluster_set_store(&r->cluster, a->memory);
  /* the plan of faster operators on faster links: the core then sizes,
   * paces and bounds the run by the times it takes, as the simulator of
   * its calibrated costs does (the executor's core started from the
   * unscaled times, admitted half as fast in its first second, and
   * fig9-small ran 5% slower than its simulation) */
  sl_plan_scale_time(&r->plan, r->time_scale);
  sl_cluster_scale_time(&r->cluster, r->time_scale);
  eo->time_scale = r->time_scale;
  if (a->replay)
    return 0;
  char err[600];
  if (sl_faults_parse(a->fail, &r->plan, &r->cluster, &eo->faults, err, sizeof err) < 0) {
    sl_cli_run_free(r);
    return sl_cli_usage_error("run", "--fail: %s", err);
  }
  snprintf(r->outdir, sizeof r->outdir, "%s", a->out ? a->out : "");
  if (!a->out)
    snprintf(r->outdir, sizeof r->outdir, "runs/run-%s-%s", r->w.name, sl_core_opts_model_name(&eo->core));
  if ((rc = sl_cli_make_parents("run", r->outdir))) {
    sl_cli_run_free(r);
    return rc;
  }
  eo->out_dir = r->outdir;
  eo->progress = !a->quiet && isatty(STDERR_FILENO);
  return 0;
}

void sl_cli_run_free(sl_cli_run *r)
{
  if (r->have_cluster)
    sl_cluster_free(&r->cluster);
  r->have_cluster = false;
}

int sl_cmd_run(int argc, char **argv)
{
  sl_cli_run *r = malloc(sizeof *r);
  if (!r) {
    fprintf(stderr, "sluice run: out of memory\n");
    return SL_EXIT_FAILED;
  }
  int rc = sl_cli_run_prepare(argc, argv, r);
  if (rc) {
    free(r);
    return rc < 0 ? SL_EXIT_OK : rc;
  }
  if (r->a.replay) {
    sl_core_opts core = sl_exec_core_opts(&r->eo);
    rc = sl_cli_replay("run", &r->plan, &r->cluster, &core, r->a.replay);
    sl_cli_run_free(r);
    free(r);
    return rc;
  }
  rc = run_prepared(r, argc, argv);
  sl_cli_run_free(r);
  free(r);
  return rc;
}
