/* sluice capacity: the cheapest cluster shapes that meet a target. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capacity/search.h"
#include "cli.h"
#include "gnuplot.h"
#include "models/error.h"
#include "workloads/spec.h"
#include "workloads/units.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif

static const char *USAGE =
  "sluice capacity WORKLOAD --node-types TYPES (--target-throughput RATE | --deadline TIME)\n"
  "                       [--only TYPE,...] [--max TYPE=N]... [--budget DOLLARS]\n"
  "                       [--model MODEL]... [--rank run|hour] [--top N]\n"
  "                       [--sample F] [--gpu-reference TYPE] [--memory SIZE] [--seed N]\n"
  "                       [--max-simulations N] [--profile NAME|FILE] [--out DIR] [--quiet]";

static const char *HELP =
  "Finds the cheapest cluster shapes, built from the node types in TYPES, on which\n"
  "WORKLOAD meets a throughput target or a deadline. A shape is a count per type,\n"
  "from each type's min to its max; the search never lists them all. It fixes the\n"
  "count of one type at a time, dearest first, and bounds each group of shapes by\n"
  "its largest (the LP of `sluice bound`: more nodes never lower it): a group whose\n"
  "largest shape misses the target, cannot run the job, or whose cheapest shape is\n"
  "over the budget is pruned whole. Whole shapes are simulated cheapest lower bound\n"
  "first, until no shape left can beat the N cheapest found.\n"
  "Writes DIR/shapes.csv (every shape reached one by one, simulated or not and\n"
  "why) and DIR/pareto.png and .svg (cost per run against JCT, when some shape was\n"
  "simulated to the end), and prints the answer; when no shape meets the target,\n"
  "the most any shape could do and why the infeasible ones are.\n"
  "\n"
  "  --node-types TYPES      node types: a cluster spec whose groups carry price_per_hour\n"
  "                          and max (and min) counts; a path or a built-in name under\n"
  "                          workloads/node-types/ (e.g. aws)\n"
  "  --only TYPE,...         search only these node types of the file\n"
  "  --max TYPE=N            at most N nodes of TYPE (overrides the file; repeatable)\n"
  "  --target-throughput R   source rows per second over the whole run (e.g. 120)\n"
  "  --deadline TIME         job completion time (e.g. 10min, 80h)\n"
  "  --budget DOLLARS        most a run may cost (per hour with --rank hour), e.g. 16000\n"
  "  --model MODEL           execution model; repeat it to compare models on the same\n"
  "                          shapes (default streaming)\n"
  "  --rank run|hour         cheapest per run or per hour of cluster (default: per hour\n"
  "                          for a throughput target, per run for a deadline)\n"
  "  --top N                 shapes to find (default 5)\n"
  "  --sample F              simulate only this fraction of the source tasks and of an\n"
  "                          all-to-all's reducers (e.g. 0.002 for a job too long to\n"
  "                          simulate whole); the JCT is scaled up: the time beyond one\n"
  "                          partition's critical path grows with the rows\n"
  "  --gpu-reference TYPE    the workload's GPU costs were measured on TYPE's GPUs: every\n"
  "                          type's GPU speed is taken relative to TYPE's\n"
  "  --memory SIZE           every node's store budget (default: the node types')\n"
  "  --seed N                simulation seed (default: the workload's)\n"
  "  --max-simulations N     stop after N simulations per model (default 30, 0: no limit):\n"
  "                          a target that only simulations miss would otherwise simulate\n"
  "                          every shape whose bound meets it. The answer is then not proven\n"
  "  --profile NAME|FILE     size the cluster for a system's own costs beside the operators'\n"
  "                          (as `sluice sim --profile`: raydata, spark, flink, sluice, a file)\n"
  "  --out DIR               default runs/capacity-WORKLOAD\n"
  "  --quiet                 print nothing but errors\n"
  "\n"
  "Exit: 0 at least one shape meets the target, 1 none does, 2 bad usage or input.\n";

enum { O_TYPES = 256, O_ONLY, O_MAX, O_SAMPLE, O_GPU_REF, O_RATE, O_DEADLINE, O_BUDGET, O_MODEL, O_RANK, O_TOP, O_MEMORY, O_SEED, O_OUT,
       O_QUIET, O_MAX_SIMS, O_PROFILE, O_HELP };

#define SL_CAP_MAX_OVERRIDES 16

typedef struct {
  const char *workload, *types, *out, *only, *gpu_reference, *profile;
  double sample;
  const char *max[SL_CAP_MAX_OVERRIDES];
  int nmax;
  const char *models[SL_CAP_MAX_MODELS];
  int nmodels;
  bool quiet, have_seed, rank_given;
  uint64_t seed;
  sl_cap_opts cap;
} args;

static int bad(const char *fmt, const char *value)
{
  return sl_cli_usage_error("capacity", fmt, value);
}

static int parse_positive(const char *v, double *out)
{
  char *end;
  errno = 0;
  if (*v == '$')
    v++;
  *out = strtod(v, &end);
  if (end == v || errno || !isfinite(*out) || *out <= 0)
    return -1;
  return strcmp(end, "") == 0 || strcmp(end, "/s") == 0 ? 0 : -1;
}

static int parse_option(int ch, args *a)
{
  int64_t n;
  switch (ch) {
  case O_TYPES: a->types = optarg; return 0;
  case O_ONLY: a->only = optarg; return 0;
  case O_GPU_REF: a->gpu_reference = optarg; return 0;
  case O_SAMPLE:
    return parse_positive(optarg, &a->sample) < 0 || a->sample > 1
             ? bad("--sample: '%s' is not a fraction in (0, 1]", optarg) : 0;
  case O_MAX:
    if (a->nmax == SL_CAP_MAX_OVERRIDES)
      return bad("at most 16 --max%s", "");
    a->max[a->nmax++] = optarg;
    return 0;
  case O_RATE:
    return parse_positive(optarg, &a->cap.target_rows_s) < 0
             ? bad("--target-throughput: '%s' is not a positive rate in rows per second", optarg) : 0;
  case O_DEADLINE:
    return sl_cli_parse_time("capacity", "--deadline", optarg, true, &a->cap.deadline_s);
  case O_BUDGET:
    return parse_positive(optarg, &a->cap.budget) < 0 ? bad("--budget: '%s' is not a positive amount", optarg) : 0;
  case O_MODEL:
    if (a->nmodels == SL_CAP_MAX_MODELS)
      return bad("at most 8 --model%s", "");
    a->models[a->nmodels++] = optarg;
    return 0;
  case O_RANK:
    if (strcmp(optarg, "run") && strcmp(optarg, "hour"))
      return bad("--rank: '%s' is neither run nor hour", optarg);
    a->cap.rank = strcmp(optarg, "hour") == 0 ? SL_CAP_RANK_HOUR : SL_CAP_RANK_RUN;
    a->rank_given = true;
    return 0;
  case O_TOP:
    if (sl_parse_int(optarg, &n) < 0 || n < 1 || n > 64)
      return bad("--top: '%s' is not a count from 1 to 64", optarg);
    a->cap.top = (int)n;
    return 0;
  case O_MEMORY:
    return sl_parse_size(optarg, &a->cap.memory_bytes) < 0 || a->cap.memory_bytes <= 0
             ? bad("--memory: '%s' is not a size (e.g. 8GB)", optarg) : 0;
  case O_SEED:
    if (sl_parse_int(optarg, &n) < 0 || n < 0)
      return bad("--seed: '%s' is not a non-negative integer", optarg);
    a->seed = (uint64_t)n;
    a->have_seed = true;
    return 0;
  case O_OUT: a->out = optarg; return 0;
  case O_QUIET: a->quiet = true; return 0;
  case O_PROFILE: a->profile = optarg; return 0;
  case O_MAX_SIMS:
    if (sl_parse_int(optarg, &n) < 0 || n < 0 || n > 1000000)
      return bad("--max-simulations: '%s' is not a count from 0 to 1000000", optarg);
    a->cap.max_simulations = (int)n;
    return 0;
  }
  return bad("unknown or incomplete option '%s'", optarg ? optarg : "");
}

static int parse_args(int argc, char **argv, args *a)
{
  static const struct option opts[] = {
    {"node-types", required_argument, NULL, O_TYPES}, {"target-throughput", required_argument, NULL, O_RATE},
    {"only", required_argument, NULL, O_ONLY},         {"max", required_argument, NULL, O_MAX},
    {"sample", required_argument, NULL, O_SAMPLE},     {"gpu-reference", required_argument, NULL, O_GPU_REF},
    {"deadline", required_argument, NULL, O_DEADLINE}, {"budget", required_argument, NULL, O_BUDGET},
    {"model", required_argument, NULL, O_MODEL},       {"rank", required_argument, NULL, O_RANK},
    {"top", required_argument, NULL, O_TOP},           {"memory", required_argument, NULL, O_MEMORY},
    {"seed", required_argument, NULL, O_SEED},         {"out", required_argument, NULL, O_OUT},
    {"quiet", no_argument, NULL, O_QUIET},             {"help", no_argument, NULL, O_HELP},
    {"max-simulations", required_argument, NULL, O_MAX_SIMS}, {"profile", required_argument, NULL, O_PROFILE},
    {NULL, 0, NULL, 0}};
  optind = 1;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (ch == 'h' || ch == O_HELP) {
      printf("usage: %s\n\n%s", USAGE, HELP);
      return -1;
    }
    if (ch == '?' || ch == ':')
      return sl_cli_usage_error("capacity", "unknown or incomplete option '%s'", argv[optind - 1]);
    int rc = parse_option(ch, a);
    if (rc)
      return rc;
  }
  if (optind != argc - 1)
    return bad("expected one WORKLOAD%s", "");
  a->workload = argv[optind];
  if (!a->types)
    return bad("--node-types is required%s", "");
  if ((a->cap.deadline_s > 0) == (a->cap.target_rows_s > 0))
    return bad("give exactly one of --target-throughput and --deadline%s", "");
  /* A rate is kept up for hours: what it costs per hour matters. A
   * deadline is one run: what that run costs matters. */
  if (!a->rank_given)
    a->cap.rank = a->cap.target_rows_s > 0 ? SL_CAP_RANK_HOUR : SL_CAP_RANK_RUN;
  return 0;
}

static bool find_types(const char *arg, char *out, size_t n)
{
  if (strchr(arg, '/') || strstr(arg, ".ini") || access(arg, R_OK) == 0) {
    snprintf(out, n, "%s", arg);
    return true;
  }
  const char *dirs[] = {".", SL_DATA_DIR};
  for (int i = 0; i < 2; i++) {
    snprintf(out, n, "%s/workloads/node-types/%s.ini", dirs[i], arg);
    if (access(out, R_OK) == 0)
      return true;
  }
  return false;
}

static int set_models(args *a)
{
  if (a->nmodels == 0)
    a->models[a->nmodels++] = "streaming";
  a->cap.nmodels = a->nmodels;
  for (int m = 0; m < a->nmodels; m++) {
    sl_core_opts_default(&a->cap.models[m]);
    if (sl_core_opts_set_model(&a->cap.models[m], a->models[m]) < 0)
      return bad("--model: unknown model '%s' (streaming, streaming-plus, streaming-noadapt, "
                 "streaming-nopart, static, batch, stream)", a->models[m]);
  }
  return 0;
}

static int find_group(const sl_cluster *types, const char *name, size_t len)
{
  for (int g = 0; g < types->ngroups; g++)
    if (strlen(types->groups[g].name) == len && strncmp(types->groups[g].name, name, len) == 0)
      return g;
  return -1;
}

/* Keeps the types --only names, in the file's order. */
static int keep_only(const args *a, sl_cluster *types)
{
  bool keep[SL_MAX_GROUPS] = {false};
  for (const char *p = a->only; *p;) {
    size_t len = strcspn(p, ",");
    int g = find_group(types, p, len);
    if (g < 0) {
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)(len < 100 ? len : 100), p);
      return sl_cli_usage_error("capacity", "--only: no node type '%s' in %s", name, types->path);
    }
    keep[g] = true;
    p += len + (p[len] == ',');
  }
  int n = 0;
  for (int g = 0; g < types->ngroups; g++)
    if (keep[g])
      types->groups[n++] = types->groups[g];
  types->ngroups = n;
  return 0;
}

static int apply_max(const args *a, sl_cluster *types)
{
  for (int i = 0; i < a->nmax; i++) {
    const char *eq = strchr(a->max[i], '=');
    int64_t n;
    int g = eq ? find_group(types, a->max[i], (size_t)(eq - a->max[i])) : -1;
    if (!eq || sl_parse_int(eq + 1, &n) < 0 || n < 0 || n > 100000)
      return bad("--max: '%s' is not TYPE=N", a->max[i]);
    if (g < 0)
      return bad("--max: '%s' names no node type of the file", a->max[i]);
    types->groups[g].max_count = (int)n;
    if (types->groups[g].min_count > n)
      types->groups[g].min_count = (int)n;
  }
  return 0;
}

/* Speeds in a node-types file are relative to one reference GPU; a
 * workload measured on another one names it, and every speed follows. */
static int rebase_gpu_speed(const args *a, sl_cluster *types)
{
  if (!a->gpu_reference)
    return 0;
  int g = find_group(types, a->gpu_reference, strlen(a->gpu_reference));
  if (g < 0 || types->groups[g].gpu <= 0)
    return bad("--gpu-reference: '%s' is no node type with GPUs in the file", a->gpu_reference);
  double ref = types->groups[g].gpu_speed;
  for (int i = 0; i < types->ngroups; i++)
    types->groups[i].gpu_speed /= ref;
  return 0;
}

/* @p tasks times the sample fraction, rounded, at least one. */
static int64_t sampled_tasks(const args *a, int64_t tasks)
{
  double t = floor((double)tasks * a->sample + 0.5);
  return t < 1 ? 1 : (int64_t)t;
}

/* The same workload with only a fraction of its source tasks, and of an
 * all-to-all's reducers: each reducer then reads and writes what it would
 * in the whole job (a sort's 4 GB output partitions stay 4 GB), and the
 * shuffle's per-node traffic scales with the data as the maps' does. */
static int sample_plan(const args *a, const sl_workload *w, sl_workload *sw, sl_plan *sp)
{
  *sw = *w;
  sw->ops[0].tasks = sampled_tasks(a, w->ops[0].tasks);
  for (int i = 1; i < sw->nops; i++)
    if (sw->ops[i].kind == SL_OP_ALL_TO_ALL && sw->ops[i].tasks > 0)
      sw->ops[i].tasks = sampled_tasks(a, w->ops[i].tasks);
  int rc = sl_cli_build_plan(sw, sp);
  return rc ? rc : sl_cli_apply_profile("capacity", a->profile, sp);
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(buf, 0777) < 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  return mkdir(buf, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* Writes DIR/NAME through a temporary renamed when whole. */
static int write_file(const args *a, const sl_cap_result *r, const char *path,
                      int (*writer)(const sl_cap_opts *, const sl_cap_result *, FILE *))
{
  char tmp[1200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "sluice capacity: %s: %s\n", tmp, strerror(errno));
    return SL_EXIT_FAILED;
  }
  int rc = writer(&a->cap, r, f);
  if (fclose(f) != 0 || rc || rename(tmp, path) != 0) {
    fprintf(stderr, "sluice capacity: cannot write %s: %s\n", path, strerror(errno));
    unlink(tmp);
    return SL_EXIT_FAILED;
  }
  return 0;
}

/* Whether some shape was simulated to the end: the figure's only points. */
static bool has_front(const args *a, const sl_cap_result *r)
{
  for (int i = 0; i < r->nshapes; i++)
    for (int m = 0; m < a->cap.nmodels; m++)
      if (r->shapes[i].by_model[m].pareto)
        return true;
  return false;
}

static int draw_pareto(const args *a, const char *csv, const char *front, const char *dir)
{
  char script[1024], expr[4096] = "", title[512], png[1100], svg[1100];
  if (!sl_gnuplot_find_script("pareto.gp", script, sizeof script)) {
    fprintf(stderr, "sluice capacity: plots/pareto.gp not found under %s or here\n", SL_DATA_DIR);
    return SL_EXIT_FAILED;
  }
  snprintf(title, sizeof title, "%s on %s: cost per run against JCT", a->workload, a->types);
  sl_gnuplot_string(expr, sizeof expr, "data", csv);
  sl_gnuplot_string(expr, sizeof expr, "front", front);
  sl_gnuplot_string(expr, sizeof expr, "title", title);
  size_t len = strlen(expr);
  /* A throughput target is a deadline too: all the rows at that rate. */
  double deadline = a->cap.deadline_s > 0 ? a->cap.deadline_s : (double)a->cap.plan->source_rows / a->cap.target_rows_s;
  snprintf(expr + len, sizeof expr - len, "deadline=%.10g; nmodels=%d; ", deadline, a->cap.nmodels);
  for (int m = 0; m < a->cap.nmodels; m++) {
    char name[16];
    snprintf(name, sizeof name, "model%d", m + 1);
    sl_gnuplot_string(expr, sizeof expr, name, sl_core_opts_model_name(&a->cap.models[m]));
  }
  snprintf(png, sizeof png, "%s/pareto.png", dir);
  snprintf(svg, sizeof svg, "%s/pareto.svg", dir);
  if (sl_gnuplot_draw("capacity", expr, "png", script, png) || sl_gnuplot_draw("capacity", expr, "svg", script, svg))
    return SL_EXIT_FAILED;
  return 0;
}

/* On a terminal: what is simulated, how far the search is, and at least
 * how long it still takes (each shape the answers lack is one more run). */
static void progress(void *ctx, const sl_cap_progress *p)
{
  (void)ctx;
  char left[64] = "";
  int least = p->at_least_left, most = p->at_most_left;
  if (most >= 0 && least > most)
    least = most;
  if (p->per_simulation_s > 0 && most >= 0)
    snprintf(left, sizeof left, "; %.0f-%.0f s left", least * p->per_simulation_s, most * p->per_simulation_s);
  else if (p->per_simulation_s > 0)
    snprintf(left, sizeof left, "; at least %.0f s left", least * p->per_simulation_s);
  fprintf(stderr, "\r\033[K  simulation %d: %.60s (%s); %lld of %lld shapes settled, %.0f s%s", p->simulations + 1,
          p->shape, p->model, (long long)p->settled, (long long)p->total, p->elapsed_s, left);
  fflush(stderr);
}

static void remove_figure(const char *dir)
{
  const char *names[] = {"pareto.png", "pareto.svg"};
  char path[1200];
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
}

static void print_target(const args *a)
{
  char t[32];
  if (a->cap.deadline_s > 0)
    printf("target: finish within %s", sl_format_time(a->cap.deadline_s, t, sizeof t));
  else
    printf("target: %.6g rows/s", a->cap.target_rows_s);
  if (a->cap.budget > 0)
    printf(", at most $%.2f per %s", a->cap.budget, a->cap.rank == SL_CAP_RANK_HOUR ? "hour" : "run");
  printf("; cheapest per %s first\n", a->cap.rank == SL_CAP_RANK_HOUR ? "hour" : "run");
  if (a->cap.sample_plan)
    printf("simulating %lld of %lld source rows per shape; JCTs scaled to the whole job\n",
           (long long)a->cap.sample_plan->source_rows, (long long)a->cap.plan->source_rows);
}

/* A count of shapes; one that saturated reads as what it is. */
static const char *count_str(int64_t n, char *buf, size_t len)
{
  if (n == INT64_MAX)
    snprintf(buf, len, "over 9.2e18");
  else
    snprintf(buf, len, "%lld", (long long)n);
  return buf;
}

static void print_counts(const sl_cap_result *r, int ntypes)
{
  char c[7][32];
  int64_t pruned = r->total_shapes == INT64_MAX ? INT64_MAX : r->total_shapes - r->simulated_shapes - r->unsearched;
  printf("searched %s shapes of %d node types in %.1f s: %lld simulated (%d simulations), %s pruned\n"
         "    (%s by the bound, %s over budget, %s infeasible, %s dominated) with %lld bounds\n",
         count_str(r->total_shapes, c[0], sizeof c[0]), ntypes, r->wall_s, (long long)r->simulated_shapes,
         r->simulations, count_str(pruned, c[1], sizeof c[1]), count_str(r->pruned_bound, c[2], sizeof c[2]),
         count_str(r->pruned_budget, c[3], sizeof c[3]), count_str(r->pruned_infeasible, c[4], sizeof c[4]),
         count_str(r->pruned_dominated, c[5], sizeof c[5]), (long long)r->bounds);
  for (int i = 0; i < r->nreasons; i++)
    printf("  %s infeasible shape%s: %s\n", count_str(r->reason_shapes[i], c[6], sizeof c[6]),
           r->reason_shapes[i] == 1 ? "" : "s", r->reasons[i]);
  if (r->stopped)
    printf("  stopped at %d simulations (--max-simulations): %s shapes were left unsearched, so\n"
           "  the answers below are the cheapest found, not proven the cheapest\n",
           r->simulations, count_str(r->unsearched, c[6], sizeof c[6]));
}

/* When no shape meets the target: how near any came, and why. */
static void print_best_reached(const args *a, const sl_cap_result *r)
{
  const sl_cap_opts *o = &a->cap;
  char name[1024], jct[32];
  if (r->best_bound_rows_s <= 0) {
    printf("  no shape can run the job at all (every type at its max is infeasible)\n");
    return;
  }
  sl_cap_shape best = {0};
  memcpy(best.counts, r->best_bound_counts, sizeof best.counts);
  sl_cap_shape_name(o->types, &best, name, sizeof name);
  printf("  the most any shape can do: %.6g rows/s by the bound, every type at its max (%s)\n",
         r->best_bound_rows_s, name);
  if (r->best_simulated < 0) {
    printf("  no shape was simulated: %s\n", r->pruned_bound > 0 ? "the bound of every feasible one misses the target"
                                                                  : "every shape is pruned");
    return;
  }
  const sl_cap_shape *s = &r->shapes[r->best_simulated];
  const sl_cap_outcome *out = &s->by_model[r->best_simulated_model];
  sl_cap_shape_name(o->types, s, name, sizeof name);
  printf("  the best simulated: %.6g rows/s, JCT %s, on %s (%s)\n", out->throughput_rows_s,
         sl_format_time(out->jct_s, jct, sizeof jct), name, sl_core_opts_model_name(&o->models[r->best_simulated_model]));
}

/* Cents for real money, more digits for the tiny runs of small examples. */
static const char *dollars(double v, char *buf, size_t n)
{
  snprintf(buf, n, v >= 1 || v == 0 ? "%.2f" : "%.3g", v);
  return buf;
}

static int print_model(const args *a, const sl_cap_result *r, int m)
{
  const sl_cap_opts *o = &a->cap;
  printf("\nmodel %s: the cheapest shapes that meet the target\n", sl_core_opts_model_name(&o->models[m]));
  if (!r->ntop[m]) {
    printf("  no shape meets the target\n");
    print_best_reached(a, r);
    return 0;
  }
  bool pool = false;
  for (int g = 0; g < o->types->ngroups; g++)
    pool = pool || o->types->groups[g].elastic;
  printf("  %-3s %-52s %9s %10s %9s %10s %7s%s\n", "#", "shape", pool ? "hosts $/h" : "$/hour", "$/run", "rows/s",
         "JCT", "%bound", pool ? "  pool $/run" : "");
  for (int i = 0; i < r->ntop[m]; i++) {
    const sl_cap_shape *s = &r->shapes[r->top[m][i]];
    const sl_cap_outcome *out = &s->by_model[m];
    char name[1024], jct[32], cost[32], pool_cost[32];
    sl_cap_shape_name(o->types, s, name, sizeof name);
    printf("  %-3d %-52s %9.2f %10s %9.2f %10s %6.1f%%", i + 1, name, s->price_per_hour,
           dollars(out->cost_per_run, cost, sizeof cost), out->throughput_rows_s,
           sl_format_time(out->jct_s, jct, sizeof jct), out->pct_of_bound);
    if (pool)
      printf("  %10s", dollars(out->pool_cost_per_run, pool_cost, sizeof pool_cost));
    printf("\n");
  }
  return r->ntop[m];
}

/* Every model's answers under every model: JCT and cost per run, side by side. */
static void print_comparison(const args *a, const sl_cap_result *r)
{
  const sl_cap_opts *o = &a->cap;
  printf("\nthe same shapes under every model: JCT / $ per run (* misses the target)\n  %-52s", "shape");
  for (int m = 0; m < o->nmodels; m++)
    printf(" %22s", sl_core_opts_model_name(&o->models[m]));
  printf("\n");
  for (int b = 0; b < o->nmodels; b++)
    for (int i = 0; i < r->ntop[b]; i++) {
      int idx = r->top[b][i];
      bool dup = false;
      for (int c = 0; c < b && !dup; c++)
        for (int j = 0; j < r->ntop[c] && !dup; j++)
          dup = r->top[c][j] == idx;
      for (int j = 0; j < i && !dup; j++)
        dup = r->top[b][j] == idx;
      if (dup)
        continue;
      const sl_cap_shape *s = &r->shapes[idx];
      char name[1024], cell[80], jct[32], cost[32];
      sl_cap_shape_name(o->types, s, name, sizeof name);
      printf("  %-52s", name);
      for (int m = 0; m < o->nmodels; m++) {
        const sl_cap_outcome *out = &s->by_model[m];
        snprintf(cell, sizeof cell, "%s / %s%s", sl_format_time(out->jct_s, jct, sizeof jct),
                 dollars(out->cost_per_run, cost, sizeof cost), out->meets ? "" : "*");
        printf(" %22s", out->status == SL_CAP_SIMULATED ? cell : "-");
      }
      printf("\n");
    }
}

static int run_search(args *a, const sl_plan *plan, const sl_cluster *types)
{
  a->cap.plan = plan;
  a->cap.types = types;
  bool show = !a->quiet && isatty(STDERR_FILENO);
  if (show)
    a->cap.progress = progress;
  sl_cap_result r;
  char err[600];
  int rc = sl_cap_search(&a->cap, &r, err, sizeof err);
  if (show)
    fprintf(stderr, "\r\033[K");
  if (rc) {
    fprintf(stderr, "sluice capacity: %s\n", err);
    return rc == SL_EINVAL ? SL_EXIT_USAGE : SL_EXIT_FAILED;
  }
  char dir[1024], csv[1100], front[1100];
  if (a->out)
    snprintf(dir, sizeof dir, "%s", a->out);
  else
    snprintf(dir, sizeof dir, "runs/capacity-%s", plan->workload->name);
  snprintf(csv, sizeof csv, "%s/shapes.csv", dir);
  snprintf(front, sizeof front, "%s/pareto.csv", dir);
  int exit_code = make_dirs(dir) < 0 ? (fprintf(stderr, "sluice capacity: cannot create %s: %s\n", dir,
                                                strerror(errno)), SL_EXIT_FAILED)
                                     : write_file(a, &r, csv, sl_cap_write_csv);
  if (!exit_code)
    exit_code = write_file(a, &r, front, sl_cap_write_front);
  bool drawn = false;
  if (!exit_code && has_front(a, &r)) {
    exit_code = draw_pareto(a, csv, front, dir);
    drawn = exit_code == 0;
  } else if (!exit_code) {
    remove_figure(dir); /* an older search's figure must not pass for this one's */
  }
  int found = 0;
  if (!a->quiet) {
    printf("capacity: %s on node types %s\n", plan->workload->name, types->name);
    print_target(a);
    print_counts(&r, types->ngroups);
  }
  for (int m = 0; m < a->cap.nmodels; m++)
    found += a->quiet ? r.ntop[m] : print_model(a, &r, m);
  if (!a->quiet && a->cap.nmodels > 1)
    print_comparison(a, &r);
  if (!a->quiet && !exit_code && drawn)
    printf("\nshapes reached one by one: %s; cost against JCT: %s/pareto.png\n", csv, dir);
  else if (!a->quiet && !exit_code)
    printf("\nshapes reached one by one: %s; no figure: no shape was simulated to the end\n", csv);
  sl_cap_result_free(&r);
  if (exit_code)
    return exit_code;
  return found ? SL_EXIT_OK : SL_EXIT_FAILED;
}

int sl_cmd_capacity(int argc, char **argv)
{
  args a = {0};
  sl_cap_opts_default(&a.cap);
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? SL_EXIT_OK : rc;
  if ((rc = set_models(&a)))
    return rc;
  char path[1024], err[600];
  if (!find_types(a.types, path, sizeof path))
    return bad("--node-types: no file or built-in '%s'", a.types);
  sl_workload w;
  if ((rc = sl_cli_load_workload(a.workload, &w)))
    return rc;
  sl_cluster types;
  if (sl_cluster_load(path, &types, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return SL_EXIT_USAGE;
  }
  if ((a.only && (rc = keep_only(&a, &types))) || (rc = apply_max(&a, &types)) ||
      (rc = rebase_gpu_speed(&a, &types))) {
    sl_cluster_free(&types);
    return rc;
  }
  a.cap.seed = a.have_seed ? a.seed : w.seed;
  sl_plan plan;
  if ((rc = sl_cli_build_plan(&w, &plan)) || (rc = sl_cli_apply_profile("capacity", a.profile, &plan))) {
    sl_cluster_free(&types);
    return rc;
  }
  sl_workload sample_w;
  sl_plan sample_p;
  if (a.sample > 0 && a.sample < 1) {
    if ((rc = sample_plan(&a, &w, &sample_w, &sample_p))) {
      sl_cluster_free(&types);
      return rc;
    }
    a.cap.sample_plan = &sample_p;
  }
  rc = run_search(&a, &plan, &types);
  sl_cluster_free(&types);
  return rc;
}
