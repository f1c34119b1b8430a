/* sluice sim: replay a workload's plan on a simulated cluster (SimGrid). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "report.h"
#include "models/error.h"
#include "models/faults.h"
#include "sim/costs.h"
#include "sim/engine.h"
#include "sim/platform.h"
#include "workloads/spec.h"
#include "workloads/units.h"

static const char *USAGE =
  "sluice sim WORKLOAD [--cluster SPEC|--platform XML] [--model MODEL] [--memory SIZE]\n"
  "                  [--on-full spill|oom] [--reservation-ratio R] [--fail SCHEDULE]\n"
  "                  [--mtbf TIME [--repair TIME]] [--seed N] [--costs FILE] [--spill-bandwidth BW]\n"
  "                  [--checkpoint-interval TIME] [--checkpoint-cost TIME] [--restart-cost TIME]\n"
  "                  [--sample TIME] [--time-limit TIME] [--stall-timeout TIME] [--out DIR]\n"
  "                  [--record-events FILE | --replay-events FILE] [--no-tasks] [--quiet]";

static const char *HELP =
  "Replays the plan of WORKLOAD on a simulated cluster: SimGrid supplies time,\n"
  "executions and transfers, the scheduling core every decision, as in a real run.\n"
  "Writes summary.csv, timeline.csv and tasks.csv into --out (default\n"
  "runs/sim-WORKLOAD-MODEL) and prints a summary.\n"
  "\n"
  "  --cluster SPEC        cluster spec or built-in name (default: named like the workload)\n"
  "  --platform XML        a SimGrid platform instead (hosts with kind=cpu|gpu|storage|driver,\n"
  "                        see sim/platform.h)\n"
  "  --model MODEL         streaming (default), streaming-plus, streaming-noadapt,\n"
  "                        streaming-nopart, static, batch or stream\n"
  "  --memory SIZE         every node's partition store budget (e.g. 8GB)\n"
  "  --on-full spill|oom   when the store is full and nothing can wait (default spill)\n"
  "  --reservation-ratio R Ray Data's per-operator reservation (default 0)\n"
  "  --fail SCHEDULE       e.g. kill:transform@15s,lose:1@900s,join:cpu.0@30min\n"
  "                        (kill[:OP]@T, lose:NODE@T, join:NODE@T; NODE = index or GROUP.INDEX)\n"
  "  --mtbf TIME           random node losses, exponential with this mean per node\n"
  "  --repair TIME         a randomly lost node joins again after this (default 5min, 0 = never)\n"
  "  --seed N              task time spreads and random losses (default: the workload's seed)\n"
  "  --costs FILE          cost model replacing the spec's (from sluice calibrate)\n"
  "  --spill-bandwidth BW  each node's disk for spilled partitions (e.g. 500MB/s); without\n"
  "                        it, spilling takes no time\n"
  "  --checkpoint-interval, --checkpoint-cost, --restart-cost TIME   the stream model's\n"
  "  --sample TIME         timeline period (default 1% of the bound)\n"
  "  --time-limit TIME     stop the simulation there (default 50 x bound + 1 h)\n"
  "  --stall-timeout TIME  fail a run that delivers no row and finishes no task for this\n"
  "                        much simulated time, naming the operator that holds it up\n"
  "                        (default 0: only the time limit)\n"
  "  --record-events FILE  write the events the core was fed, for --replay-events\n"
  "  --replay-events FILE  simulate nothing: feed FILE's events (of sim or run) to the core\n"
  "                        alone and say whether it decides as the recorded run did\n"
  "  --no-tasks            no tasks.csv rows (huge runs)\n"
  "  --quiet               print nothing but errors\n"
  "\n"
  "Exit: 0 the job completed, 1 it did not (OOM, stalled, time limit), 2 bad usage or input.\n";

enum {
  O_CLUSTER = 256, O_PLATFORM, O_MODEL, O_MEMORY, O_ON_FULL, O_RATIO, O_FAIL, O_MTBF, O_REPAIR, O_SEED, O_COSTS,
  O_CK_INTERVAL, O_CK_COST, O_RESTART, O_SAMPLE, O_LIMIT, O_STALL, O_OUT, O_NO_TASKS, O_QUIET, O_SPILL, O_RECORD, O_REPLAY, O_HELP
};

typedef struct {
  const char *workload, *cluster, *platform, *model, *fail, *costs, *out, *record, *replay;
  double memory, ratio, mtbf, repair, ck_interval, ck_cost, restart, sample, limit, spill, stall;
  bool oom, no_tasks, quiet, have_seed, have_repair;
  uint64_t seed;
} args;

static int bad(const char *fmt, const char *value)
{
  return sl_cli_usage_error("sim", USAGE, fmt, value);
}

static int parse_time_opt(const char *name, const char *v, double *out)
{
  if (sl_parse_time(v, out) < 0 || *out < 0)
    return sl_cli_usage_error("sim", USAGE, "%s: '%s' is not a time (e.g. 15s, 500ms, 15min)", name, v);
  return 0;
}

/* A period or a limit of zero means nothing: say so rather than ignore it. */
static int parse_positive_time(const char *name, const char *v, double *out)
{
  if (sl_parse_time(v, out) < 0 || !(*out > 0))
    return sl_cli_usage_error("sim", USAGE, "%s: '%s' is not a time above zero (e.g. 15s, 500ms, 15min)", name, v);
  return 0;
}

static int parse_option(int ch, args *a)
{
  double v;
  int64_t n;
  switch (ch) {
  case O_CLUSTER: a->cluster = optarg; return 0;
  case O_PLATFORM: a->platform = optarg; return 0;
  case O_MODEL: a->model = optarg; return 0;
  case O_FAIL: a->fail = optarg; return 0;
  case O_COSTS: a->costs = optarg; return 0;
  case O_OUT: a->out = optarg; return 0;
  case O_NO_TASKS: a->no_tasks = true; return 0;
  case O_QUIET: a->quiet = true; return 0;
  case O_RECORD:
    if (!optarg[0])
      return bad("--record-events: empty file name%s", "");
    a->record = optarg;
    return 0;
  case O_REPLAY: a->replay = optarg; return 0;
  case O_MEMORY:
    if (sl_parse_size(optarg, &a->memory) < 0 || a->memory <= 0)
      return bad("--memory: '%s' is not a size (e.g. 8GB)", optarg);
    return 0;
  case O_ON_FULL:
    if (strcmp(optarg, "spill") != 0 && strcmp(optarg, "oom") != 0)
      return bad("--on-full: '%s' (expected spill or oom)", optarg);
    a->oom = strcmp(optarg, "oom") == 0;
    return 0;
  case O_RATIO:
    if (sl_parse_number(optarg, &v) < 0 || v < 0 || v > 1)
      return bad("--reservation-ratio: '%s' (expected a number from 0 to 1)", optarg);
    a->ratio = v;
    return 0;
  case O_SEED:
    if (sl_parse_int(optarg, &n) < 0 || n < 0)
      return bad("--seed: '%s' is not a whole number", optarg);
    a->seed = (uint64_t)n;
    a->have_seed = true;
    return 0;
  case O_SPILL:
    if (sl_parse_bandwidth(optarg, &a->spill) < 0 || a->spill <= 0)
      return bad("--spill-bandwidth: '%s' is not a bandwidth (e.g. 500MB/s)", optarg);
    return 0;
  case O_MTBF: return parse_positive_time("--mtbf", optarg, &a->mtbf);
  case O_REPAIR:
    a->have_repair = true;
    return parse_time_opt("--repair", optarg, &a->repair);
  case O_CK_INTERVAL: return parse_time_opt("--checkpoint-interval", optarg, &a->ck_interval);
  case O_CK_COST: return parse_time_opt("--checkpoint-cost", optarg, &a->ck_cost);
  case O_RESTART: return parse_time_opt("--restart-cost", optarg, &a->restart);
  case O_SAMPLE: return parse_positive_time("--sample", optarg, &a->sample);
  case O_LIMIT: return parse_positive_time("--time-limit", optarg, &a->limit);
  case O_STALL: return parse_positive_time("--stall-timeout", optarg, &a->stall);
  default: return bad("unknown or incomplete option '%s'", optarg ? optarg : "?");
  }
}

static int parse_args(int argc, char **argv, args *a)
{
  static const struct option opts[] = {
    {"cluster", required_argument, NULL, O_CLUSTER}, {"platform", required_argument, NULL, O_PLATFORM},
    {"model", required_argument, NULL, O_MODEL}, {"memory", required_argument, NULL, O_MEMORY},
    {"on-full", required_argument, NULL, O_ON_FULL}, {"reservation-ratio", required_argument, NULL, O_RATIO},
    {"fail", required_argument, NULL, O_FAIL}, {"mtbf", required_argument, NULL, O_MTBF},
    {"repair", required_argument, NULL, O_REPAIR}, {"seed", required_argument, NULL, O_SEED},
    {"costs", required_argument, NULL, O_COSTS}, {"checkpoint-interval", required_argument, NULL, O_CK_INTERVAL},
    {"checkpoint-cost", required_argument, NULL, O_CK_COST}, {"restart-cost", required_argument, NULL, O_RESTART},
    {"sample", required_argument, NULL, O_SAMPLE}, {"time-limit", required_argument, NULL, O_LIMIT},
    {"stall-timeout", required_argument, NULL, O_STALL},
    {"out", required_argument, NULL, O_OUT}, {"no-tasks", no_argument, NULL, O_NO_TASKS},
    {"quiet", no_argument, NULL, O_QUIET}, {"spill-bandwidth", required_argument, NULL, O_SPILL},
    {"record-events", required_argument, NULL, O_RECORD}, {"replay-events", required_argument, NULL, O_REPLAY},
    {"help", no_argument, NULL, O_HELP}, {0}};
  memset(a, 0, sizeof *a);
  a->model = "streaming";
  a->repair = 300;
  a->ck_interval = -1;
  a->ck_cost = a->restart = -1;
  int ch;
  sl_cli_set_command("sim", USAGE);
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (ch == 'h' || ch == O_HELP) {
      printf("usage: %s\n\n%s", USAGE, HELP);
      return -1;
    }
    if (ch == '?' || ch == ':')
      return bad("unknown or incomplete option '%s'", argv[optind - 1]);
    int rc = parse_option(ch, a);
    if (rc)
      return rc;
  }
  if (optind != argc - 1)
    return bad("%s", optind >= argc ? "missing WORKLOAD" : "too many arguments");
  if (a->cluster && a->platform)
    return bad("%s", "--cluster and --platform are exclusive");
  if (a->have_repair && a->mtbf <= 0)
    return bad("%s", "--repair applies to the random losses of --mtbf, which is not given");
  a->workload = argv[optind];
  return 0;
}

/* Workload, costs and plan; cluster from a spec or a platform. */
static int load_inputs(const args *a, sl_workload *w, sl_plan *p, sl_cluster *c)
{
  char err[512];
  int rc = sl_cli_load_workload(a->workload, w);
  if (rc || (rc = sl_cli_build_plan(w, p)))
    return rc;
  if (a->costs) {
    sl_sim_costs costs;
    if (sl_sim_costs_load(a->costs, &costs, err, sizeof err) < 0 || sl_sim_costs_apply(&costs, p, err, sizeof err) < 0) {
      fprintf(stderr, "%s\n", err);
      return SL_EXIT_USAGE;
    }
  }
  if (!a->platform)
    return sl_cli_load_cluster(a->cluster, w, c);
  if (sl_sim_platform_read(a->platform, c, err, sizeof err) < 0 || sl_check_feasible(w, c, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    sl_cluster_free(c);
    return SL_EXIT_USAGE;
  }
  return 0;
}

static int core_options(const args *a, sl_core_opts *o)
{
  sl_core_opts_default(o);
  if (sl_core_opts_set_model(o, a->model) < 0)
    return bad("--model: unknown model '%s' (expected streaming, streaming-plus, streaming-noadapt, "
               "streaming-nopart, static, batch or stream)", a->model);
  o->on_full = a->oom ? SL_FULL_OOM : SL_FULL_SPILL;
  o->reservation_ratio = a->ratio;
  if (a->ck_interval > 0)
    o->checkpoint_interval_s = a->ck_interval;
  else if (a->ck_interval == 0)
    return bad("--checkpoint-interval: '%s' must be more than 0", "0");
  if (a->ck_cost >= 0)
    o->checkpoint_cost_s = a->ck_cost;
  if (a->restart >= 0)
    o->restart_cost_s = a->restart;
  return 0;
}

static void print_summary(const sl_sim_result *r, const sl_cluster *c, const char *out)
{
  const sl_summary *m = &r->summary;
  char a[SL_FORMAT_MAX], b[SL_FORMAT_MAX];
  printf("sim %s on %s (%d node%s: %g CPU, %g GPU slots), model %s\n", m->workload, m->cluster, c->nnodes,
         c->nnodes == 1 ? "" : "s", sl_cluster_total(c, false), sl_cluster_total(c, true), m->model);
  printf("  %s %s", m->complete ? "JCT          " : "stopped at   ", sl_format_time(m->jct_s, a, sizeof a));
  if (m->bound_s > 0 && m->complete)
    printf("   bound %s: %.1f%% of bound", sl_format_time(m->bound_s, b, sizeof b), m->pct_of_bound);
  else if (m->bound_s > 0)
    printf("   bound %s", sl_format_time(m->bound_s, b, sizeof b));
  printf("\n  throughput    %.4g rows/s   first output at %s\n", m->throughput_rows_s,
         m->first_output_s >= 0 ? sl_format_time(m->first_output_s, a, sizeof a) : "never");
  printf("  rows          %.0f of %.0f delivered%s%s\n", m->rows, m->expected_rows,
         m->complete ? ", complete" : ", INCOMPLETE: ", m->complete ? "" : m->note);
  sl_cli_print_stores(stdout, m);
  printf("  tasks         %lld launched, %lld retried; lost partitions %lld; checkpoints %lld, rollbacks %lld\n",
         (long long)m->tasks, (long long)m->retried_tasks, (long long)m->lost_partitions, (long long)m->checkpoints,
         (long long)m->rollbacks);
  if (r->faults_applied > 0)
    printf("  faults        %lld applied: %lld nodes lost, %lld joined, %lld tasks killed\n",
           (long long)r->faults_applied, (long long)r->nodes_lost, (long long)r->nodes_joined,
           (long long)r->tasks_killed);
  printf("  simulated in  %.3g s wall, %s peak memory\n", r->wall_s, sl_format_size(r->peak_rss_bytes, a, sizeof a));
  if (out)
    printf("  outputs in    %s/\n", out);
}

/* Creates the folders above @p dir (mkdir -p of its parent): the recorder
 * makes the last one itself. */
static int make_parents(const char *dir)
{
  char path[512];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "sluice sim: %s: cannot create directory: %s\n", path, strerror(errno));
      return SL_EXIT_FAILED;
    }
    *p = '/';
  }
  return 0;
}

static int simulate(const args *a, const sl_plan *p, const sl_cluster *c, const sl_workload *w)
{
  sl_sim_opts o;
  sl_sim_opts_default(&o);
  int rc = core_options(a, &o.core);
  if (rc)
    return rc;
  sl_fault_schedule faults;
  char err[512], out[512];
  if (a->fail && sl_faults_parse(a->fail, p, c, &faults, err, sizeof err) < 0)
    return sl_cli_usage_error("sim", USAGE, "--fail: %s", err);
  if (a->fail && faults.n == 0)
    return sl_cli_usage_error("sim", USAGE, "--fail: empty schedule (e.g. kill:transform@15s,lose:1@900s)");
  snprintf(out, sizeof out, "runs/sim-%s-%s", w->name, a->model);
  o.plan = p;
  o.cluster = c;
  o.platform_xml = a->platform;
  o.faults = a->fail ? &faults : NULL;
  o.mtbf_s = a->mtbf;
  o.spill_bps = a->spill;
  o.repair_s = a->repair;
  o.seed = a->have_seed ? a->seed : w->seed;
  o.sample_interval_s = a->sample;
  o.time_limit_s = a->limit;
  o.stall_timeout_s = a->stall;
  o.keep_tasks = !a->no_tasks;
  o.out_dir = a->out ? a->out : out;
  o.record_events = a->record;
  if (a->replay && a->record)
    return sl_cli_usage_error("sim", USAGE, "--record-events and --replay-events exclude each other");
  if (a->replay) {
    sl_core_opts core = sl_sim_core_opts(&o);
    return sl_cli_replay("sim", p, c, &core, a->replay);
  }
  if ((rc = make_parents(o.out_dir)))
    return rc;
  sl_sim_result r;
  sl_sim_run(&o, &r);
  if (r.code < 0) {
    fprintf(stderr, "sluice sim: %s\n", r.err);
    return r.code == SL_EINVAL ? SL_EXIT_USAGE : SL_EXIT_FAILED;
  }
  if (!a->quiet)
    print_summary(&r, c, o.out_dir);
  if (!r.summary.complete)
    fprintf(stderr, "sluice sim: the job did not complete: %s\n", r.summary.note);
  return r.summary.complete ? SL_EXIT_OK : SL_EXIT_FAILED;
}

int sl_cmd_sim(int argc, char **argv)
{
  args a;
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? SL_EXIT_OK : rc;
  sl_workload w;
  sl_plan p;
  sl_cluster c = {0};
  if ((rc = load_inputs(&a, &w, &p, &c)))
    return rc;
  if (a.memory > 0)
    sl_cluster_set_store(&c, a.memory);
  rc = simulate(&a, &p, &c, &w);
  sl_cluster_free(&c);
  return rc;
}
