#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "models/bound.h"
#include "models/error.h"

static const char *USAGE = "sluice bound WORKLOAD [--cluster CLUSTER] [--profile NAME|FILE] [--csv]";

int sl_cmd_bound(int argc, char **argv)
{
  static const struct option opts[] = {{"cluster", required_argument, NULL, 'c'},
                                       {"csv", no_argument, NULL, 'v'},
                                       {"profile", required_argument, NULL, 'p'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  const char *cluster_arg = NULL, *profile = NULL;
  bool csv = false;
  int ch;
  sl_cli_set_command("bound");
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'c':
      cluster_arg = optarg;
      break;
    case 'v':
      csv = true;
      break;
    case 'p':
      profile = optarg;
      break;
    case 'h':
      printf("usage: %s\n\nThe physical limit of a workload on a cluster: the area bound over\n"
             "resource classes (a linear program solved with GLPK where operators share a\n"
             "class or nodes differ in speed; with the network, a task holds its slot while\n"
             "its input arrives), the critical path of one partition, and the task cut: for\n"
             "an operator with a fixed time per task or batch, more tasks are more work and\n"
             "fewer a longer last task, and the best number of them still takes this long;\n"
             "and the source waves: splits of equal time, whole, on every slot that may run\n"
             "them, then the last one's output through the operators after it.\n"
             "Without --cluster, the built-in cluster named like the workload is used.\n"
             "--profile adds a system's own costs to the operators' (as `sluice sim --profile`).\n"
             "--csv prints a header and one row (jct_bound_s, throughput_bound_rows_s, ...).\n",
             USAGE);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("bound", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("bound", optind >= argc ? "missing WORKLOAD" : "too many arguments");
  sl_workload w;
  sl_plan p;
  sl_cluster c;
  int rc = sl_cli_load_workload(argv[optind], &w);
  if (rc || (rc = sl_cli_build_plan(&w, &p)) || (rc = sl_cli_apply_profile("bound", profile, &p)) ||
      (rc = sl_cli_load_cluster(cluster_arg, &w, &c)))
    return rc;
  sl_bound b;
  int err = sl_bound_compute(&p, &c, &b);
  if (err < 0) {
    fprintf(stderr, "sluice bound: %s\n", sl_strerror(err));
    sl_cluster_free(&c);
    return SL_EXIT_FAILED;
  }
  if (csv)
    sl_bound_write_csv(&b, &p, &c, stdout);
  else
    sl_bound_print(&b, &p, &c, stdout);
  sl_cluster_free(&c);
  return SL_EXIT_OK;
}
