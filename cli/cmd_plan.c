#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "models/plan.h"

static const char *USAGE = "sluice plan WORKLOAD [--cluster CLUSTER]";

int sl_cmd_plan(int argc, char **argv)
{
  static const struct option opts[] = {
    {"cluster", required_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'}, {0}};
  const char *cluster_arg = NULL;
  int ch;
  sl_cli_set_command("plan");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'c':
      cluster_arg = optarg;
      break;
    case 'h':
      printf("usage: %s\n\nPrints the physical plan: operators after fusion, their resources,\n"
             "costs and the partitions they will see. With a cluster, its slots too.\n", USAGE);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("plan", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("plan", optind >= argc ? "missing WORKLOAD" : "too many arguments");
  sl_workload w;
  sl_plan p;
  sl_cluster c;
  int rc = sl_cli_load_workload(argv[optind], &w);
  if (rc)
    return rc;
  if ((rc = sl_cli_build_plan(&w, &p)))
    return rc;
  if (cluster_arg) {
    if ((rc = sl_cli_load_cluster(cluster_arg, &w, &c)))
      return rc;
    sl_plan_print(&p, &c, stdout);
    sl_cluster_free(&c);
  } else {
    sl_plan_print(&p, NULL, stdout);
  }
  return SL_EXIT_OK;
}
