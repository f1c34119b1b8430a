/* sluice bench: the regression suite against a committed baseline. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/suite.h"
#include "cli.h"
#include "models/error.h"
#include "results/progress.h"
#include "workloads/units.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *USAGE = "sluice bench [--baseline FILE] [--update] [--filter TEXT] [--runs N] [--verbose]";

static const char *HELP =
  "Runs the regression suite and compares it with a baseline:\n"
  "  - deterministic simulations (the experiments at reduced size: fig9-small under\n"
  "    every model, fig9 at 8 GB, fig11-small, video under every model and with a\n"
  "    node lost and back, images; images-hetero, the expand case under four budgets\n"
  "    and video on 32 nodes, where the streaming policies once fell far from the\n"
  "    bound), the first 50 cases of the workload zoo (seed 1)\n"
  "    under streaming, streaming-plus and batch, and bounds. They must match the baseline to a\n"
  "    relative 1e-9: a change that alters a simulated result must update the\n"
  "    baseline in the same commit and say why;\n"
  "  - micro-benchmarks (executor dispatch, simulation speed): cost per task divided\n"
  "    by a reference loop timed in the same process just before, median of --runs\n"
  "    pairs. One fails when it grows past its band (stated in the baseline, 75%:\n"
  "    this machine's noise), never for getting faster.\n"
  "\n"
  "  --baseline FILE  default bench/baseline.csv of the source tree\n"
  "  --update         write the measured values as the new baseline (exit 0)\n"
  "  --filter TEXT    only the metrics whose name contains TEXT (e.g. sim/video)\n"
  "  --runs N         pairs per micro-benchmark (default 5)\n"
  "  --verbose        print every run as it goes\n"
  "\n"
  "Exit: 0 no regression, 1 a regression (the table says what moved and by how\n"
  "much), 2 bad usage or an unreadable baseline.\n";

typedef struct {
  const char *baseline, *filter;
  bool update, verbose;
  int runs;
} args;

static int parse_args(int argc, char **argv, args *a)
{
  static const struct option opts[] = {
    {"baseline", required_argument, NULL, 'b'}, {"update", no_argument, NULL, 'u'},
    {"filter", required_argument, NULL, 'f'},   {"runs", required_argument, NULL, 'r'},
    {"verbose", no_argument, NULL, 'v'},        {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};
  optind = 1;
  opterr = 0;
  int ch;
  int64_t n;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 'h': printf("usage: %s\n\n%s", USAGE, HELP); return -1;
    case 'b': a->baseline = optarg; break;
    case 'u': a->update = true; break;
    case 'f': a->filter = optarg; break;
    case 'v': a->verbose = true; break;
    case 'r':
      if (sl_parse_int(optarg, &n) < 0 || n < 1 || n > 32)
        return sl_cli_usage_error("bench", "--runs: '%s' is not a count from 1 to 32", optarg);
      a->runs = (int)n;
      break;
    default:
      return sl_cli_usage_error("bench", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc)
    return sl_cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
  if (a->update && a->filter)
    return sl_cli_usage_error("bench", "--update writes the whole baseline: it takes no --filter%s", "");
  return 0;
}

/* On a terminal: the step about to run, how many of how many, time left. */
static void progress(void *ctx, const char *what, int done, int total)
{
  double *t0 = ctx;
  char line[256];
  sl_progress_format(line, sizeof line, "bench", done, total, what, now_s() - *t0);
  fprintf(stderr, "\r\033[K  %s", line);
  fflush(stderr);
}

/* The suite runs the committed specs of the source tree, wherever it is run from. */
static const char *data_dir(void)
{
  return SL_DATA_DIR;
}

int sl_cmd_bench(int argc, char **argv)
{
  args a = {.runs = 5};
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? SL_EXIT_OK : rc;
  char path[1024], err[1200];
  if (a.baseline)
    snprintf(path, sizeof path, "%s", a.baseline);
  else
    snprintf(path, sizeof path, "%s/bench/baseline.csv", data_dir());
  sl_metric_set base = {0}, now = {0};
  if (!a.update && sl_baseline_read(path, &base, err, sizeof err) != 0) {
    fprintf(stderr, "sluice bench: %s\n", err);
    return SL_EXIT_USAGE;
  }
  sl_suite_opts o = {.data_dir = data_dir(), .filter = a.filter, .micro_runs = a.runs, .verbose = a.verbose};
  double t0 = now_s();
  /* --verbose prints each run on its own line: no line to rewrite then */
  bool show = isatty(STDERR_FILENO) && !a.verbose;
  if (show) {
    o.progress = progress;
    o.progress_ctx = &t0;
  }
  rc = sl_suite_run(&o, &now, err, sizeof err);
  if (show)
    fprintf(stderr, "\r\033[K");
  if (rc < 0) {
    fprintf(stderr, "sluice bench: %s\n", err);
    sl_metric_set_free(&base);
    sl_metric_set_free(&now);
    return SL_EXIT_FAILED;
  }
  if (a.update) {
    rc = sl_baseline_write(path, &now, err, sizeof err) ? SL_EXIT_FAILED : SL_EXIT_OK;
    if (rc)
      fprintf(stderr, "sluice bench: %s\n", err);
    else
      printf("sluice bench: %d metrics written to %s\n", now.n, path);
  } else {
    int bad = sl_suite_compare(&base, &now, a.filter != NULL, stdout);
    printf("%s: %d metrics, %d regression%s against %s\n", bad ? "FAILED" : "passed", now.n, bad,
           bad == 1 ? "" : "s", path);
    rc = bad ? SL_EXIT_FAILED : SL_EXIT_OK;
  }
  sl_metric_set_free(&base);
  sl_metric_set_free(&now);
  return rc;
}
