#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "models/core.h"
#include "models/plan.h"
#include "models/reorder.h"

static const char *USAGE =
  "sluice plan WORKLOAD [--cluster CLUSTER] [--model MODEL] [--profile NAME|FILE] [--auto-order [--top N]]";

static const char *HELP =
  "Prints the physical plan: operators after fusion, their resources, and their\n"
  "tasks as the engines of MODEL size them: rows per task, the time a task takes\n"
  "at speed 1, and how many tasks the job makes. An operator after the source\n"
  "takes whole partitions of its upstream; where its tasks gather several (up\n"
  "to the target partition, or into whole batches of a map_batches operator),\n"
  "a note says how, and where the count is decided at run time, between which\n"
  "bounds. With a cluster, its slots too.\n\n"
  "  --cluster CLUSTER  a cluster spec or built-in name\n"
  "  --model MODEL      streaming (default), streaming-plus, streaming-noadapt,\n"
  "                     streaming-nopart, static, batch or stream\n"
  "  --profile NAME|FILE  fold a system's own costs into the operators' (as `sluice\n"
  "                     sim --profile`): each task's time then includes them\n"
  "  --auto-order       rank every order of the spec's reorder groups by the JCT\n"
  "                     bound on the cluster (the workload's own when no --cluster\n"
  "                     is given), beside each operator's inflation factor and\n"
  "                     the order Pecan's rule (ascending inflation) would take;\n"
  "                     then print the plan of the best order, which `sluice run`\n"
  "                     and `sluice sim` take with --auto-order\n"
  "  --top N            orders listed (default 10; the spec's and Pecan's always)\n";

/* --auto-order: the ranking, then the plan of the order chosen. */
static int plan_auto_order(sl_workload *w, const char *cluster_arg, const sl_core_opts *core, const char *model,
                           int top)
{
  sl_cluster c;
  int rc = sl_cli_load_cluster(cluster_arg, w, &c);
  if (rc)
    return rc;
  if (!sl_reorder_has_groups(w)) {
    sl_cluster_free(&c);
    fprintf(stderr, "sluice plan: --auto-order: %s has no reorder_group: nothing to order\n", w->path);
    return SL_EXIT_USAGE;
  }
  sl_reorder_result r;
  char err[512];
  if (sl_reorder_choose(w, &c, &r, err, sizeof err) < 0) {
    sl_cluster_free(&c);
    fprintf(stderr, "sluice plan: --auto-order: %s\n", err);
    return SL_EXIT_USAGE;
  }
  sl_reorder_print(&r, w, &c, top, stdout);
  sl_workload *chosen = malloc(sizeof *chosen);
  sl_plan *p = malloc(sizeof *p);
  if (chosen && p) {
    sl_workload_reorder(w, r.orders[0].order, chosen);
    if (!(rc = sl_cli_build_plan(chosen, p))) {
      sl_sizing_rule rule;
      sl_core_opts_sizing(core, p->target_partition_bytes, &rule);
      printf("\n");
      sl_plan_print_sized(p, &c, &rule, model, stdout);
    }
  } else {
    fprintf(stderr, "sluice plan: out of memory\n");
    rc = SL_EXIT_FAILED;
  }
  free(chosen);
  free(p);
  sl_reorder_result_free(&r);
  sl_cluster_free(&c);
  return rc;
}

int sl_cmd_plan(int argc, char **argv)
{
  static const struct option opts[] = {
    {"cluster", required_argument, NULL, 'c'}, {"model", required_argument, NULL, 'm'},
    {"auto-order", no_argument, NULL, 'a'}, {"top", required_argument, NULL, 't'},
    {"profile", required_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'}, {0}};
  const char *cluster_arg = NULL, *model = "streaming", *profile = NULL;
  bool auto_order = false;
  int64_t top = 10;
  int ch;
  sl_cli_set_command("plan");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "c:m:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'a':
      auto_order = true;
      break;
    case 't':
      if (sl_cli_parse_count("plan", "--top", optarg, 1, 100000, &top))
        return SL_EXIT_USAGE;
      break;
    case 'c':
      cluster_arg = optarg;
      break;
    case 'm':
      model = optarg;
      break;
    case 'p':
      profile = optarg;
      break;
    case 'h':
      printf("usage: %s\n\n%s", USAGE, HELP);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("plan", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("plan", optind >= argc ? "missing WORKLOAD" : "too many arguments");
  sl_core_opts core;
  sl_core_opts_default(&core);
  if (sl_core_opts_set_model(&core, model) < 0)
    return sl_cli_usage_error("plan", "--model: unknown model '%s' (expected streaming, streaming-plus, "
                              "streaming-noadapt, streaming-nopart, static, batch or stream)", model);
  sl_workload w;
  sl_plan p;
  sl_cluster c;
  int rc = sl_cli_load_workload(argv[optind], &w);
  if (rc)
    return rc;
  if (auto_order)
    return plan_auto_order(&w, cluster_arg, &core, model, (int)top);
  if ((rc = sl_cli_build_plan(&w, &p)) || (rc = sl_cli_apply_profile("plan", profile, &p)))
    return rc;
  sl_sizing_rule rule;
  sl_core_opts_sizing(&core, p.target_partition_bytes, &rule);
  if (cluster_arg) {
    if ((rc = sl_cli_load_cluster(cluster_arg, &w, &c)))
      return rc;
    sl_plan_print_sized(&p, &c, &rule, model, stdout);
    sl_cluster_free(&c);
  } else {
    sl_plan_print_sized(&p, NULL, &rule, model, stdout);
  }
  return SL_EXIT_OK;
}
