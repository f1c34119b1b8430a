#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "executor/engine.h"
#include "models/error.h"
#include "workloads/units.h"

static const char *USAGE =
  "sluice run WORKLOAD [--cluster SPEC] [--model MODEL] [--memory SIZE] [--on-full spill|oom]\n"
  "                    [--fail SCHEDULE] [--out DIR] [--reservation-ratio R]\n"
  "                    [--checkpoint-interval TIME] [--checkpoint-cost TIME] [--restart-cost TIME]\n"
  "                    [--seed N] [--stall-timeout TIME] [--max-errored-rows N] [--time-scale F]\n"
  "                    [--record-events FILE | --replay-events FILE] [--quiet]";

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
  "  --out DIR             summary.csv, timeline.csv, tasks.csv (default runs/run-WORKLOAD-MODEL)\n"
  "  --reservation-ratio R Ray Data's per-operator reservation (default 0)\n"
  "  --checkpoint-interval TIME   stream model (default 360s)\n"
  "  --checkpoint-cost TIME       stream model: pause per checkpoint (default 0)\n"
  "  --restart-cost TIME          stream model: pause per rollback (default 0)\n"
  "  --seed N              task time spreads (default: the workload's seed)\n"
  "  --record-events FILE  write the events the core was fed, for --replay-events\n"
  "  --replay-events FILE  run nothing: feed FILE's events to the core alone and say\n"
  "                        whether it decides as the recorded run did (exit 1 if not)\n"
  "  --stall-timeout TIME  fail a run that makes no progress this long (default 0: never)\n"
  "  --max-errored-rows N  rows a kernel may reject before the run fails (default 0)\n"
  "  --time-scale F        multiply every modelled time by F (0.1: ten times faster)\n"
  "  --quiet               no progress line\n\n"
  "Exit codes: 0 complete, 1 the run failed or was interrupted, 2 bad usage or input.\n";

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
  (void)sig;
  interrupted = 1;
}

/* Creates the folders above @p dir, as sim does; sl_exec_run() makes the
 * last one itself, and only once the run is known to start. */
static int make_parents(const char *dir, char *err, size_t errlen)
{
  char path[512];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    struct stat st;
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      snprintf(err, errlen, "%s: cannot create the folder: %s", path, strerror(errno));
      return -1;
    }
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
      snprintf(err, errlen, "%s: not a folder", path);
      return -1;
    }
    *p = '/';
  }
  return 0;
}

int sl_cmd_run(int argc, char **argv)
{
  static const struct option opts[] = {
    {"cluster", required_argument, NULL, 'c'}, {"model", required_argument, NULL, 'm'},
    {"memory", required_argument, NULL, 'M'},  {"on-full", required_argument, NULL, 'F'},
    {"fail", required_argument, NULL, 'f'},    {"out", required_argument, NULL, 'o'},
    {"reservation-ratio", required_argument, NULL, 'r'},
    {"checkpoint-interval", required_argument, NULL, 'k'},
    {"stall-timeout", required_argument, NULL, 's'},
    {"max-errored-rows", required_argument, NULL, 'e'},
    {"time-scale", required_argument, NULL, 't'},
    {"checkpoint-cost", required_argument, NULL, 'C'}, {"restart-cost", required_argument, NULL, 'R'},
    {"seed", required_argument, NULL, 'S'},    {"record-events", required_argument, NULL, 'E'},
    {"replay-events", required_argument, NULL, 'P'},
    {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
    {0}};
  const char *cluster_arg = NULL, *fail_arg = NULL, *out_arg = NULL, *replay = NULL;
  double memory = 0;
  bool quiet = false;
  sl_exec_opts eo;
  sl_exec_opts_default(&eo);
  int ch;
  sl_cli_set_command("run", USAGE);
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "c:m:M:F:f:o:r:k:s:e:t:C:R:S:E:P:qh", opts, NULL)) != -1) {
    switch (ch) {
    case 'c':
      cluster_arg = optarg;
      break;
    case 'm':
      if (sl_core_opts_set_model(&eo.core, optarg) < 0)
        return sl_cli_usage_error("run", USAGE, "unknown model '%s'", optarg);
      break;
    case 'M':
      if (sl_parse_size(optarg, &memory) < 0 || memory <= 0)
        return sl_cli_usage_error("run", USAGE, "--memory: '%s' is not a size such as 80MB", optarg);
      break;
    case 'F':
      if (strcmp(optarg, "spill") && strcmp(optarg, "oom"))
        return sl_cli_usage_error("run", USAGE, "--on-full takes spill or oom, not '%s'", optarg);
      eo.core.on_full = optarg[0] == 's' ? SL_FULL_SPILL : SL_FULL_OOM;
      break;
    case 'f':
      if (!optarg[0])
        return sl_cli_usage_error("run", USAGE, "--fail: empty schedule (e.g. kill:transform@15s,lose:0@1min)");
      fail_arg = optarg;
      break;
    case 'o':
      if (!optarg[0])
        return sl_cli_usage_error("run", USAGE, "--out: empty folder name");
      out_arg = optarg;
      break;
    case 'r':
      if (sl_parse_number(optarg, &eo.core.reservation_ratio) < 0 || eo.core.reservation_ratio < 0 ||
          eo.core.reservation_ratio > 1)
        return sl_cli_usage_error("run", USAGE, "--reservation-ratio takes a number in [0, 1]");
      break;
    case 'k':
      if (sl_parse_time(optarg, &eo.core.checkpoint_interval_s) < 0 || eo.core.checkpoint_interval_s <= 0)
        return sl_cli_usage_error("run", USAGE, "--checkpoint-interval: '%s' is not a time", optarg);
      break;
    case 's':
      if (sl_parse_time(optarg, &eo.stall_timeout_s) < 0 || eo.stall_timeout_s < 0)
        return sl_cli_usage_error("run", USAGE, "--stall-timeout: '%s' is not a time (0 = never)", optarg);
      break;
    case 'e': {
      int64_t n;
      if (sl_parse_int(optarg, &n) < 0 || n < 0)
        return sl_cli_usage_error("run", USAGE, "--max-errored-rows takes a count");
      eo.max_errored_rows = n;
      break;
    }
    case 't':
      if (sl_parse_number(optarg, &eo.time_scale) < 0 || eo.time_scale <= 0)
        return sl_cli_usage_error("run", USAGE, "--time-scale takes a positive factor, not '%s'", optarg);
      break;
    case 'C':
      if (sl_parse_time(optarg, &eo.core.checkpoint_cost_s) < 0 || eo.core.checkpoint_cost_s < 0)
        return sl_cli_usage_error("run", USAGE, "--checkpoint-cost: '%s' is not a time", optarg);
      break;
    case 'R':
      if (sl_parse_time(optarg, &eo.core.restart_cost_s) < 0 || eo.core.restart_cost_s < 0)
        return sl_cli_usage_error("run", USAGE, "--restart-cost: '%s' is not a time", optarg);
      break;
    case 'S': {
      int64_t n;
      if (sl_parse_int(optarg, &n) < 0 || n <= 0)
        return sl_cli_usage_error("run", USAGE, "--seed: '%s' is not a whole number above 0", optarg);
      eo.core.seed = (uint64_t)n;
      break;
    }
    case 'E':
      if (!optarg[0])
        return sl_cli_usage_error("run", USAGE, "--record-events: empty file name");
      eo.record_events = optarg;
      break;
    case 'P':
      replay = optarg;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      printf("usage: %s\n\n%s", USAGE, HELP);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("run", USAGE, "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("run", USAGE, optind >= argc ? "missing WORKLOAD" : "too many arguments");
  if (replay && eo.record_events)
    return sl_cli_usage_error("run", USAGE, "--record-events and --replay-events exclude each other");

  sl_workload w;
  sl_plan plan;
  sl_cluster cluster;
  int rc = sl_cli_load_workload(argv[optind], &w);
  if (rc || (rc = sl_cli_build_plan(&w, &plan)))
    return rc;
  if (cluster_arg) {
    if ((rc = sl_cli_load_cluster(cluster_arg, &w, &cluster)))
      return rc;
  } else if (sl_exec_local_cluster(&cluster, 0) < 0) {
    fprintf(stderr, "sluice run: cannot describe this machine\n");
    return SL_EXIT_FAILED;
  }
  if (memory > 0)
    sl_cluster_set_store(&cluster, memory);
  if (replay) {
    sl_core_opts core = sl_exec_core_opts(&eo);
    rc = sl_cli_replay("run", &plan, &cluster, &core, replay);
    sl_cluster_free(&cluster);
    return rc;
  }
  char err[600], outdir[512];
  if (sl_faults_parse(fail_arg, &plan, &cluster, &eo.faults, err, sizeof err) < 0) {
    sl_cluster_free(&cluster);
    return sl_cli_usage_error("run", USAGE, "--fail: %s", err);
  }
  snprintf(outdir, sizeof outdir, "%s", out_arg ? out_arg : "");
  if (!out_arg)
    snprintf(outdir, sizeof outdir, "runs/run-%s-%s", w.name, sl_core_opts_model_name(&eo.core));
  if (make_parents(outdir, err, sizeof err) < 0) {
    sl_cluster_free(&cluster);
    return sl_cli_usage_error("run", USAGE, "--out: %s", err);
  }
  eo.out_dir = outdir;
  eo.progress = !quiet && isatty(STDERR_FILENO);
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
  rc = sl_exec_run(&plan, &cluster, &eo, &s, err, sizeof err);
  sl_cluster_free(&cluster);
  if (rc == SL_EIO && s.workload[0] == 0) {
    fprintf(stderr, "sluice run: %s\n", err);
    return SL_EXIT_FAILED;
  }
  if (rc == SL_EINVAL || (rc == SL_EOOM && s.workload[0] == 0)) {
    fprintf(stderr, "sluice run: %s\n", err);
    return rc == SL_EOOM ? SL_EXIT_FAILED : SL_EXIT_USAGE;
  }
  printf("%s on %s, %s model: %s in %.2f s, %.1f rows/s, %.1f%% of the %.2f s bound\n", s.workload,
         s.cluster, s.model, s.complete ? "complete" : "INCOMPLETE", s.jct_s, s.throughput_rows_s,
         s.pct_of_bound, s.bound_s);
  printf("  rows %.0f of %.0f, tasks %lld (%lld retried), lost partitions %lld, checksum %016llx\n",
         s.rows, s.expected_rows, (long long)s.tasks, (long long)s.retried_tasks,
         (long long)s.lost_partitions, (unsigned long long)s.sink_checksum);
  printf("  peak RSS %.1f MB, accelerator %s\n", s.peak_rss_bytes / 1e6, s.accelerator);
  sl_cli_print_stores(stdout, &s);
  printf("  outputs in %s\n", outdir);
  if (rc) {
    fprintf(stderr, "sluice run: %s\n", err);
    return SL_EXIT_FAILED;
  }
  return SL_EXIT_OK;
}
