/* sluice sim: replay a workload's plan on a simulated cluster (SimGrid). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli/engine_opts.h"
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
  "                  [--mtbf TIME [--repair TIME]] [--node-timeout TIME] [--seed N] [--costs FILE]\n"
  "                  [--spill-bandwidth BW]\n"
  "                  [--checkpoint-interval TIME] [--checkpoint-cost TIME] [--restart-cost TIME]\n"
  "                  [--sample TIME] [--time-limit TIME] [--stall-timeout TIME] [--out DIR]\n"
  "                  [--record-events FILE | --replay-events FILE] [--no-tasks] [--auto-order]\n"
  "                  [--flow-solver lazy|full]\n"
  "                  [--profile NAME|FILE] [--autoplace POLICY [--autoplace-interval TIME]] [--quiet]";

/* A randomly lost node's time away, unless --repair says otherwise. */
#define DEFAULT_REPAIR_S 300.0

/* The defaults come from the code that applies them (print_help()). */
static const char *HELP =
  "Replays the plan of WORKLOAD on a simulated cluster: SimGrid supplies time,\n"
  "executions and transfers, the scheduling core every decision, as in a real run.\n"
  "Writes summary.csv, timeline.csv and tasks.csv into --out (default\n"
  "runs/sim-WORKLOAD-MODEL) and prints a summary.\n"
  "\n"
  "  --cluster SPEC        cluster spec or built-in name (default: named like the workload)\n"
  "  --platform XML        a SimGrid platform instead (PLATFORM below)\n"
  "  --model MODEL         streaming (default), streaming-plus, streaming-noadapt,\n"
  "                        streaming-nopart, static, batch or stream\n"
  "  --memory SIZE         every node's partition store budget (e.g. 8GB)\n"
  "  --on-full spill|oom   when the store is full and nothing can wait (default spill)\n"
  "  --reservation-ratio R Ray Data's per-operator reservation (default %g)\n"
  "  --fail SCHEDULE       e.g. kill:transform@15s,lose:1@900s,join:cpu.0@30min\n"
  "                        (kill[:OP]@T, lose:NODE@T, join:NODE@T; NODE = index or GROUP.INDEX;\n"
  "                        a join comes after its node's loss; faults that do not apply are reported)\n"
  "  --mtbf TIME           random node losses, exponential with this mean per node\n"
  "  --repair TIME         a randomly lost node joins again after this (default %gs, 0 = never)\n"
  "  --node-timeout TIME   a lost node's loss reaches the core this long after the node went\n"
  "                        down, as `sluice run --launch` hears of a silent worker (default 0:\n"
  "                        at once); its slots run nothing meanwhile, and reads from it fail then\n"
  "  --seed N              task time spreads and random losses (default: the workload's seed)\n"
  "  --costs FILE          cost model replacing the spec's (from sluice calibrate): tasks are\n"
  "                        charged its times while the policy plans with the spec's, as the\n"
  "                        run it was fitted on did; its data sizes are known to both\n"
  "  --plan-with-costs     the policy plans with the cost file's times too\n"
  "  --spill-bandwidth BW  the disk for spilled partitions of nodes whose group gives no\n"
  "                        disk_bandwidth (e.g. 500MB/s); without either, spilling takes no time\n"
  "  --checkpoint-interval TIME   stream model: time between checkpoints (default %gs)\n"
  "  --checkpoint-cost TIME       stream model: pause per checkpoint (default %gs)\n"
  "  --restart-cost TIME          stream model: pause per rollback (default %gs)\n"
  "  --sample TIME         timeline period (default 1%% of the bound)\n"
  "  --time-limit TIME     stop the simulation there (default 50 x bound + 1 h)\n"
  "  --stall-timeout TIME  fail a run that delivers no row and finishes no task for this\n"
  "                        much simulated time, naming the operator that holds it up\n"
  "                        (default 0: only the time limit)\n"
  "  --record-events FILE  write the events the core was fed, for --replay-events\n"
  "  --replay-events FILE  simulate nothing: feed FILE's events (of sim or run) to the core\n"
  "                        alone and say whether it decides as the recorded run did\n"
  "  --no-tasks            no tasks.csv rows (huge runs)\n"
  "  --flow-solver full|lazy  how SimGrid shares links between flows at each event: full\n"
  "                        (default) re-solves them all; lazy only those the event touched,\n"
  "                        which SimGrid 3.32 gets wrong where links with latency differ in\n"
  "                        bandwidth (flows then beat their links): for comparison only\n"
  "  --auto-order          run the operators of each reorder_group in the order with the\n"
  "                        best bound on the cluster (`sluice plan --auto-order` ranks them)\n"
  "  --profile NAME|FILE   charge a system's own costs beside the operators' (per task, per\n"
  "                        partition, per byte copied or serialized): ideal (none, the default),\n"
  "                        raydata, spark, flink, sluice (profiles/NAME.ini, each number's source\n"
  "                        beside it), or a profile file\n"
  SL_CLI_AUTOPLACE_HELP
  "  --quiet               print nothing but errors and warnings\n"
  "\n"
  "Times need a unit (15s, 500ms, 2min). 'sluice spec' describes the spec files.\n"
  "\n"
  "PLATFORM: a SimGrid platform XML (version 4.1) whose hosts say what they are\n"
  "with a property, <prop id=\"kind\" value=\"...\"/>:\n"
  "  kind=cpu      a node: its cores are its CPU slots and its speed in Gf its\n"
  "                cpu_speed; optional props group (default \"xml\"), memory (default\n"
  "                16GB), store (default 30%% of memory), price_per_hour\n"
  "  kind=gpu      the GPUs of the node whose cpu host the prop \"node\" names: cores\n"
  "                are GPU slots, speed in Gf the gpu_speed\n"
  "  kind=storage  remote storage: its route to the first node gives the storage\n"
  "                bandwidth and latency\n"
  "  kind=driver   the scheduler's host (may be left out when there is a storage\n"
  "                host); neither it nor storage may fail\n"
  "A <disk> of a node's cpu host takes its spilled partitions. Nodes are numbered\n"
  "by group, in order of first appearance, then by host name; nodes of a group\n"
  "must agree on cores, speeds, memory and store.\n"
  "\n"
  "Exit: 0 the job completed, 1 it did not (OOM, stalled, time limit), 2 bad usage or input.\n";

static void print_help(void)
{
  sl_core_opts d;
  sl_core_opts_default(&d);
  printf("usage: %s\n\n", USAGE);
  printf(HELP, d.reservation_ratio, DEFAULT_REPAIR_S, d.checkpoint_interval_s, d.checkpoint_cost_s, d.restart_cost_s);
}

/* sim's own options; the shared ones are cli/engine_opts.h's */
enum { O_CLUSTER = 256, O_PLATFORM, O_MTBF, O_REPAIR, O_COSTS, O_SAMPLE, O_LIMIT, O_NO_TASKS, O_SPILL, O_SOLVER, O_HELP,
       O_NODE_TIMEOUT, O_PLAN_COSTS };

typedef struct {
  sl_cli_engine_opts e; /* what run and sim share */
  const char *workload, *cluster, *platform, *costs;
  double mtbf, repair, sample, limit, spill, node_timeout;
  bool no_tasks, have_repair, lazy_solver;
  bool plan_costs; /* the policy plans with the cost file's times too */
} args;

static int bad(const char *fmt, const char *value)
{
  return sl_cli_usage_error("sim", fmt, value);
}

static int parse_time_opt(const char *name, const char *v, double *out)
{
  return sl_cli_parse_time("sim", name, v, false, out);
}

/* A period or a limit of zero means nothing: say so rather than ignore it. */
static int parse_positive_time(const char *name, const char *v, double *out)
{
  return sl_cli_parse_time("sim", name, v, true, out);
}

static int parse_option(int ch, args *a)
{
  switch (ch) {
  case O_CLUSTER: a->cluster = optarg; return 0;
  case O_PLATFORM: a->platform = optarg; return 0;
  case O_COSTS: a->costs = optarg; return 0;
  case O_PLAN_COSTS: a->plan_costs = true; return 0;
  case O_NO_TASKS: a->no_tasks = true; return 0;
  case O_SPILL:
    if (sl_parse_bandwidth(optarg, &a->spill) < 0 || a->spill <= 0)
      return bad("--spill-bandwidth: '%s' is not a bandwidth (e.g. 500MB/s)", optarg);
    return 0;
  case O_SOLVER:
    if (strcmp(optarg, "full") != 0 && strcmp(optarg, "lazy") != 0)
      return bad("--flow-solver: '%s' is neither lazy nor full", optarg);
    a->lazy_solver = strcmp(optarg, "lazy") == 0;
    return 0;
  case O_MTBF: return parse_positive_time("--mtbf", optarg, &a->mtbf);
  case O_NODE_TIMEOUT: return parse_time_opt("--node-timeout", optarg, &a->node_timeout);
  case O_REPAIR:
    a->have_repair = true;
    return parse_time_opt("--repair", optarg, &a->repair);
  case O_SAMPLE: return parse_positive_time("--sample", optarg, &a->sample);
  case O_LIMIT: return parse_positive_time("--time-limit", optarg, &a->limit);
  default: return bad("unknown or incomplete option '%s'", optarg ? optarg : "?");
  }
}

static int parse_args(int argc, char **argv, args *a)
{
  static const struct option opts[] = {
    SL_CLI_ENGINE_LONGOPTS,
    {"cluster", required_argument, NULL, O_CLUSTER}, {"platform", required_argument, NULL, O_PLATFORM},
    {"mtbf", required_argument, NULL, O_MTBF}, {"repair", required_argument, NULL, O_REPAIR},
    {"node-timeout", required_argument, NULL, O_NODE_TIMEOUT},
    {"costs", required_argument, NULL, O_COSTS}, {"plan-with-costs", no_argument, NULL, O_PLAN_COSTS},
    {"sample", required_argument, NULL, O_SAMPLE},
    {"time-limit", required_argument, NULL, O_LIMIT}, {"no-tasks", no_argument, NULL, O_NO_TASKS},
    {"spill-bandwidth", required_argument, NULL, O_SPILL}, {"flow-solver", required_argument, NULL, O_SOLVER},
    {"help", no_argument, NULL, O_HELP}, {0}};
  memset(a, 0, sizeof *a);
  sl_cli_engine_opts_default(&a->e);
  a->repair = DEFAULT_REPAIR_S;
  int ch;
  sl_cli_set_command("sim");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (ch == 'h' || ch == O_HELP) {
      print_help();
      return -1;
    }
    if (ch == '?' || ch == ':')
      return bad("unknown or incomplete option '%s'", argv[optind - 1]);
    int rc = sl_cli_engine_option("sim", ch, optarg, &a->e);
    if (rc == 1)
      rc = parse_option(ch, a);
    if (rc)
      return rc;
  }
  if (optind != argc - 1)
    return bad("%s", optind >= argc ? "missing WORKLOAD" : "too many arguments");
  if (a->cluster && a->platform)
    return bad("%s", "--cluster and --platform are exclusive");
  if (a->plan_costs && !a->costs)
    return bad("%s", "--plan-with-costs needs --costs");
  if (a->have_repair && a->mtbf <= 0)
    return bad("%s", "--repair applies to the random losses of --mtbf, which is not given");
  if (sl_cli_engine_opts_check("sim", &a->e))
    return SL_EXIT_USAGE;
  a->workload = argv[optind];
  return 0;
}

/* What a cost file says of the engine rather than the operators: how it
 * starts a burst of tasks, and how long each operator's finish takes to
 * hand over (none without a file). */
typedef struct {
  double launch_spacing;
  double handoff[SL_MAX_OPS];
  bool has_handoff;
} engine_costs;

/* Workload, costs and plan; cluster from a spec or a platform; the cost
 * file's engine costs. With a cost file, @p charges gets the plan with all
 * its costs, what tasks are charged, and @p p its data sizes alone, what
 * the policy plans with (its times all of them with --plan-with-costs, and
 * then no @p charges): a run's policy planned with the spec's times, and
 * ran tasks that took what calibration measured. Planning with those, a
 * simulation of a run whose tasks each paid 3 ms the spec does not cut
 * partitions twice as coarse, and ended 17% sooner (zoo small seed 1 case
 * 11). */
static int load_inputs(const args *a, sl_workload *w, sl_plan *p, sl_cluster *c, engine_costs *ec, sl_plan *charges,
                       bool *charged)
{
  *charged = false;
  memset(ec, 0, sizeof *ec);
  char err[512];
  int rc = sl_cli_load_workload(a->workload, w);
  if (rc)
    return rc;
  if (!a->platform) {
    if ((rc = sl_cli_load_cluster(a->cluster, w, c)))
      return rc;
  } else if (sl_sim_platform_read(a->platform, c, err, sizeof err) < 0 || sl_check_feasible(w, c, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    sl_cluster_free(c);
    return SL_EXIT_USAGE;
  }
  /* the order first: the plan, and the costs that name its operators, follow it */
  if ((a->e.auto_order && (rc = sl_cli_auto_order("sim", w, c, a->e.quiet))) || (rc = sl_cli_build_plan(w, p))) {
    sl_cluster_free(c);
    return rc;
  }
  if (a->costs) {
    sl_sim_costs costs;
    /* the run's links, at its time scale, and those it measured */
    *charges = *p;
    *charged = !a->plan_costs;
    if (sl_sim_costs_load(a->costs, &costs, err, sizeof err) < 0 ||
        sl_sim_costs_apply(&costs, *charged ? charges : p, err, sizeof err) < 0 ||
        (*charged && sl_sim_costs_apply_data(&costs, p, err, sizeof err) < 0) ||
        sl_sim_costs_apply_links(&costs, c, err, sizeof err) < 0) {
      fprintf(stderr, "%s\n", err);
      sl_cluster_free(c);
      return SL_EXIT_USAGE;
    }
    sl_sim_costs_apply_disk(&costs, c); /* the run's measured spill disk, where a group has none */
    ec->launch_spacing = costs.launch_spacing_s;
    ec->has_handoff = sl_sim_costs_handoffs(&costs, p, ec->handoff);
    if (costs.profile[0] && a->e.profile)
      fprintf(stderr,
              "sluice sim: warning: %s was fitted on a run that charged the %s profile: --profile %s "
              "adds a system's costs to costs that hold that profile's already\n",
              a->costs, costs.profile, a->e.profile);
  }
  /* a system's costs on top of the operators' (calibrated ones included) */
  if ((rc = sl_cli_apply_profile("sim", a->e.profile, p)) ||
      (*charged && (rc = sl_cli_apply_profile("sim", a->e.profile, charges)))) {
    sl_cluster_free(c);
    return rc;
  }
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
  sl_cli_print_idle(stdout, m);
  sl_cli_print_cost(stdout, m);
  printf("  tasks         %lld launched, %lld retried; lost partitions %lld; checkpoints %lld, rollbacks %lld\n",
         (long long)m->tasks, (long long)m->retried_tasks, (long long)m->lost_partitions, (long long)m->checkpoints,
         (long long)m->rollbacks);
  if (r->faults_applied > 0 || m->faults_not_applied[0])
    printf("  faults        %lld applied: %lld %s lost, %lld joined, %lld %s killed\n", (long long)r->faults_applied,
           (long long)r->nodes_lost, sl_cli_plural(r->nodes_lost, "node", "nodes"), (long long)r->nodes_joined,
           (long long)r->tasks_killed, sl_cli_plural(r->tasks_killed, "task", "tasks"));
  sl_cli_print_list(stdout, "  not applied   ", m->faults_not_applied);
  printf("  simulated in  %.3g s wall, %s peak memory\n", r->wall_s, sl_format_size(r->peak_rss_bytes, a, sizeof a));
  if (out)
    printf("  outputs in    %s/\n", out);
}

static int simulate(const args *a, const sl_plan *p, const sl_plan *charges, const sl_cluster *c,
                    const sl_workload *w, const engine_costs *ec)
{
  sl_sim_opts o;
  sl_sim_opts_default(&o);
  o.core = a->e.core;
  int rc;
  sl_fault_schedule faults;
  char err[512], out[512];
  const char *fail = a->e.fail;
  if (fail && sl_faults_parse(fail, p, c, &faults, err, sizeof err) < 0)
    return sl_cli_usage_error("sim", "--fail: %s", err);
  if (fail && faults.n == 0)
    return sl_cli_usage_error("sim", "--fail: empty schedule (e.g. kill:transform@15s,lose:1@900s)");
  snprintf(out, sizeof out, "runs/sim-%s-%s", w->name, sl_core_opts_model_name(&o.core));
  o.plan = p;
  o.charges = charges;
  o.cluster = c;
  o.platform_xml = a->platform;
  o.faults = fail ? &faults : NULL;
  o.mtbf_s = a->mtbf;
  o.spill_bps = a->spill;
  o.lazy_solver = a->lazy_solver;
  o.launch_spacing_s = ec->launch_spacing;
  o.handoff_s = ec->has_handoff ? ec->handoff : NULL;
  o.repair_s = a->repair;
  o.node_timeout_s = a->node_timeout;
  o.seed = a->e.have_seed ? a->e.seed : w->seed;
  o.sample_interval_s = a->sample;
  o.time_limit_s = a->limit;
  o.stall_timeout_s = a->e.stall_timeout_s;
  o.keep_tasks = !a->no_tasks;
  o.out_dir = a->e.out ? a->e.out : out;
  o.record_events = a->e.record;
  if (a->e.replay) {
    sl_core_opts core = sl_sim_core_opts(&o);
    return sl_cli_replay("sim", p, c, &core, a->e.replay);
  }
  if ((rc = sl_cli_make_parents("sim", o.out_dir)))
    return rc;
  sl_sim_result r;
  sl_sim_run(&o, &r);
  if (r.code < 0) {
    fprintf(stderr, "sluice sim: %s\n", r.err);
    return r.code == SL_EINVAL ? SL_EXIT_USAGE : SL_EXIT_FAILED;
  }
  if (!a->e.quiet)
    print_summary(&r, c, o.out_dir);
  else if (r.summary.faults_not_applied[0])
    fprintf(stderr, "sluice sim: warning: faults not applied: %s\n", r.summary.faults_not_applied);
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
  sl_plan p, charges;
  bool charged;
  sl_cluster c = {0};
  engine_costs ec;
  if ((rc = load_inputs(&a, &w, &p, &c, &ec, &charges, &charged)))
    return rc;
  if (a.e.memory > 0)
    sl_cluster_set_store(&c, a.e.memory);
  rc = simulate(&a, &p, charged ? &charges : NULL, &c, &w, &ec);
  sl_cluster_free(&c);
  return rc;
}
