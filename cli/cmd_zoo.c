/* sluice zoo: a seeded zoo of workload and cluster specs (workloads/zoo.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "models/error.h"
#include "models/plan.h"
#include "sim/engine.h"
#include "workloads/spec.h"
#include "workloads/units.h"
#include "workloads/zoo.h"

/* What a small case's real run should take: the middle of 5 to 20 s. */
#define SMALL_RUN_S 10.0

static const char *USAGE = "sluice zoo --out DIR [--seed N] [--count K] [--small] [--setups] [--quiet]";

static const char *HELP =
  "Writes K seeded cases into DIR: case-NNN.ini (a pipeline of 2 to 6 operators and\n"
  "a sink), case-NNN.cluster.ini (1 to 64 nodes in 1 to 4 groups) and index.csv\n"
  "(one row per case: seed, operators, expansion, nodes, store budget in target\n"
  "partitions per node, bound, tasks, a one-line description). Each file starts\n"
  "with comments saying what the case is. The same seed writes the same bytes, and\n"
  "case i does not depend on K. Every case is read back, planned and bounded\n"
  "before the next is written.\n"
  "\n"
  "  --out DIR     where to write (created if missing; files of the same names are\n"
  "                replaced)\n"
  "  --seed N      the zoo's seed (default 1)\n"
  "  --count K     number of cases, 1 to 10000 (default 20)\n"
  "  --small       cases for a real run on this machine (sluice run): a few nodes,\n"
  "                few tasks, kilobyte rows, sleep kernels. Each case is simulated\n"
  "                under streaming once written and its costs scaled until the\n"
  "                simulation takes about 10 s, which a real run follows closely\n"
  "  --setups      operators on a GPU or taking batches pay a set-up per slot (a\n"
  "                model load: half to five of their typical tasks), each with\n"
  "                chance 0.7; drawn apart, so the cases are otherwise the same\n"
  "  --quiet       print nothing but errors\n"
  "\n"
  "A full case has a bound of tens to hundreds of simulated seconds and at most\n"
  "20,000 tasks. Simulate one with\n"
  "  sluice sim DIR/case-001.ini --cluster DIR/case-001.cluster.ini --model MODEL\n"
  "and every case under every model with bench/zoo.sh.\n"
  "\n"
  "Exit: 0 written, 1 a file could not be written (or a generated case did not\n"
  "check), 2 bad usage.\n";

enum { O_OUT = 256, O_SEED, O_COUNT, O_SMALL, O_SETUPS, O_QUIET, O_HELP };

static int bad(const char *fmt, const char *value)
{
  return sl_cli_usage_error("zoo", fmt, value);
}

static void print_case(const sl_zoo_case *k)
{
  printf("%-9s bound %7.1f s  %6.0f tasks  ", k->name, k->bound_s, k->tasks);
  if (k->measured_s > 0)
    printf("run ~%.0f s  ", k->measured_s);
  printf("%s\n", k->description);
}

/* A streaming simulation of a case as written (sl_zoo_measure_fn): a real
 * run on this machine, sleep kernels and all, takes about as long. A run
 * past the limit measures as the limit, so that the zoo scales it down. */
static double simulate_streaming(const char *workload, const char *cluster, void *ctx)
{
  const double *limit = ctx;
  char err[512];
  double jct = -1;
  sl_workload *w = malloc(sizeof *w);
  sl_cluster c;
  sl_plan p;
  sl_plan_opts po = {0};
  if (!w)
    return -1;
  if (sl_workload_load(workload, w, err, sizeof err) < 0 || sl_cluster_load(cluster, &c, err, sizeof err) < 0)
    goto free_workload;
  if (sl_plan_build(&p, w, &po, err, sizeof err) == 0) {
    sl_sim_opts o;
    sl_sim_result r;
    sl_sim_opts_default(&o);
    o.plan = &p;
    o.cluster = &c;
    o.seed = w->seed;
    o.keep_tasks = false;
    o.out_dir = NULL;
    o.time_limit_s = *limit;
    if (sl_sim_run(&o, &r) == 0 && r.summary.complete)
      jct = r.summary.jct_s;
    else if (r.code == 0 && r.timed_out)
      jct = *limit;
  }
  sl_cluster_free(&c);
free_workload:
  free(w);
  return jct;
}

int sl_cmd_zoo(int argc, char **argv)
{
  static const struct option opts[] = {
    {"out", required_argument, NULL, O_OUT},     {"seed", required_argument, NULL, O_SEED},
    {"count", required_argument, NULL, O_COUNT}, {"small", no_argument, NULL, O_SMALL},
    {"setups", no_argument, NULL, O_SETUPS},
    {"quiet", no_argument, NULL, O_QUIET},       {"help", no_argument, NULL, O_HELP},
    {0}};
  sl_zoo_opts o = {.seed = 1, .count = 20, .small = false};
  const char *out = NULL;
  bool quiet = false;
  int64_t n;
  int ch;
  sl_cli_set_command("zoo");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 'h':
    case O_HELP:
      printf("usage: %s\n\n%s", USAGE, HELP);
      return SL_EXIT_OK;
    case O_OUT:
      if (!optarg[0])
        return bad("--out: empty directory name%s", "");
      out = optarg;
      break;
    case O_SEED:
      if (sl_parse_int(optarg, &n) < 0 || n < 0)
        return bad("--seed: '%s' is not a whole number >= 0", optarg);
      o.seed = (uint64_t)n;
      break;
    case O_COUNT:
      if (sl_parse_int(optarg, &n) < 0 || n < 1 || n > SL_ZOO_MAX_COUNT)
        return bad("--count: '%s' is not a whole number from 1 to 10000", optarg);
      o.count = (int)n;
      break;
    case O_SMALL:
      o.small = true;
      break;
    case O_SETUPS:
      o.setups = true;
      break;
    case O_QUIET:
      quiet = true;
      break;
    default:
      return bad("unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc)
    return bad("unexpected argument '%s' (the zoo takes options only)", argv[optind]);
  if (!out)
    return bad("missing --out DIR%s", "");
  sl_zoo_case *cases = calloc((size_t)o.count, sizeof *cases);
  if (!cases) {
    fprintf(stderr, "sluice zoo: %s\n", sl_strerror(SL_ENOMEM));
    return SL_EXIT_FAILED;
  }
  char err[1024];
  double limit = 10 * SMALL_RUN_S;
  if (o.small) {
    o.measure = simulate_streaming;
    o.measure_ctx = &limit;
    o.run_target_s = SMALL_RUN_S;
  }
  int rc = sl_zoo_write(&o, out, cases, err, sizeof err);
  if (rc < 0) {
    fprintf(stderr, "sluice zoo: %s\n", err);
    free(cases);
    return rc == SL_EINVAL && !err[0] ? SL_EXIT_USAGE : SL_EXIT_FAILED;
  }
  if (!quiet) {
    for (int i = 0; i < o.count; i++)
      print_case(&cases[i]);
    printf("wrote %d %scase%s of seed %llu into %s/ (index.csv, case-NNN.ini, case-NNN.cluster.ini)\n",
           o.count, o.small ? "small " : "", o.count == 1 ? "" : "s", (unsigned long long)o.seed, out);
  }
  free(cases);
  return SL_EXIT_OK;
}
