#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "models/core.h"
#include "models/plan.h"

static const char *USAGE = "sluice plan WORKLOAD [--cluster CLUSTER] [--model MODEL]";

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
  "                     streaming-nopart, static, batch or stream\n";

int sl_cmd_plan(int argc, char **argv)
{
  static const struct option opts[] = {
    {"cluster", required_argument, NULL, 'c'}, {"model", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'}, {0}};
  const char *cluster_arg = NULL, *model = "streaming";
  int ch;
  sl_cli_set_command("plan");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "c:m:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'c':
      cluster_arg = optarg;
      break;
    case 'm':
      model = optarg;
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
  if ((rc = sl_cli_build_plan(&w, &p)))
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
