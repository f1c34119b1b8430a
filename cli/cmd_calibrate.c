/* sluice calibrate: a cost model fitted to a run's tasks.csv. */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "models/error.h"
#include "results/atomic_file.h"
#include "sim/costs.h"

static const char *USAGE = "sluice calibrate RUN_DIR [-o FILE]";

static const char *HELP =
  "Fits a cost model to RUN_DIR/tasks.csv (a run of sluice run or sluice sim): per\n"
  "operator, over the attempts that ended done, duration = time_per_task +\n"
  "rows_in * time_per_row by least squares, output rows per input row, output\n"
  "bytes per row, and the spread of each (coefficient of variation). Writes an\n"
  "INI file to read, edit and give to 'sluice sim WORKLOAD --costs FILE'.\n"
  "\n"
  "  -o, --output FILE   where to write it (default RUN_DIR/costs.ini; '-' for stdout)\n";

/* Writes through a temporary (results/atomic_file.h): a failed write
 * leaves no file that looks whole. */
static int write_file(const char *path, const sl_sim_costs *c, const char *source, const char *workload)
{
  if (strcmp(path, "-") == 0)
    return sl_sim_costs_write(c, source, workload, stdout) < 0 ? SL_EXIT_FAILED : SL_EXIT_OK;
  char err[1400];
  sl_atomic_file a;
  FILE *f = sl_atomic_open(&a, path, err, sizeof err);
  if (!f) {
    fprintf(stderr, "sluice calibrate: %s\n", err);
    return SL_EXIT_USAGE;
  }
  int rc = sl_sim_costs_write(c, source, workload, f);
  snprintf(err, sizeof err, "%s: cannot write", path);
  if (sl_atomic_commit(&a, rc >= 0, err, sizeof err) < 0) {
    fprintf(stderr, "sluice calibrate: %s\n", err);
    return SL_EXIT_FAILED;
  }
  return SL_EXIT_OK;
}

int sl_cmd_calibrate(int argc, char **argv)
{
  static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  const char *output = NULL;
  int ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
    switch (ch) {
    case 'o':
      output = optarg;
      break;
    case 'h':
      printf("usage: %s\n\n%s", USAGE, HELP);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("calibrate", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("calibrate", optind >= argc ? "missing RUN_DIR" : "too many arguments");
  const char *dir = argv[optind];
  sl_sim_costs costs;
  char err[512], workload[64], path[1024];
  if (sl_sim_calibrate(dir, &costs, workload, sizeof workload, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return SL_EXIT_USAGE;
  }
  snprintf(path, sizeof path, "%s/costs.ini", dir);
  int rc = write_file(output ? output : path, &costs, costs.path, workload);
  if (rc == SL_EXIT_OK && (!output || strcmp(output, "-") != 0))
    printf("%s: cost model of %d operators\n", output ? output : path, costs.n);
  return rc;
}
