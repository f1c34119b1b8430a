/* sluice: one binary, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const sl_cli_cmd commands[] = {
  {"plan", sl_cmd_plan, "print the physical plan of a workload"},
  {"bound", sl_cmd_bound, "the physical limit: best throughput and JCT on a cluster"},
  {"sim", sl_cmd_sim, "simulate a workload on a cluster (SimGrid)"},
  {"calibrate", sl_cmd_calibrate, "fit a cost model to a run's tasks.csv"},
  {"run", sl_cmd_run, "execute a workload on this machine, or on worker processes (--launch)"},
  {"worker", sl_cmd_worker, "one node of a run on several machines, driven by its head"},
  {"plot", sl_cmd_plot, "draw a run's timeline with gnuplot"},
  {"experiment", sl_cmd_experiment, "reproduce a figure of the paper beside its numbers"},
  {"capacity", sl_cmd_capacity, "the cheapest cluster shapes that meet a target"},
  {"bench", sl_cmd_bench, "regression suite: simulations and micro-benchmarks against a baseline"},
  {"zoo", sl_cmd_zoo, "write a seeded zoo of workload and cluster specs"},
  {"spec", sl_cmd_spec, "the reference of spec files: every key, its type, unit and default"},
};

static const sl_cli_cmd *find_command(const char *name)
{
  for (unsigned i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(name, commands[i].name) == 0)
      return &commands[i];
  return NULL;
}

static void usage(FILE *f)
{
  fprintf(f, "usage: sluice COMMAND [ARGS...]\n\n"
             "Runs ML data pipelines under three execution models (streaming batch,\n"
             "batch, stream), for real on this machine or simulated on any cluster.\n\n"
             "commands:\n");
  for (unsigned i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'sluice COMMAND --help' (or 'sluice help COMMAND') describes a command;\n"
             "'sluice spec' lists every key of the spec files.\n");
}

/* `sluice help [COMMAND]`: the overview, or COMMAND --help. */
static int help(int argc, char **argv)
{
  if (argc < 3) {
    usage(stdout);
    return SL_EXIT_OK;
  }
  const sl_cli_cmd *cmd = find_command(argv[2]);
  if (!cmd) {
    fprintf(stderr, "sluice help: no command '%s'\nTry 'sluice --help' for the commands.\n", argv[2]);
    return SL_EXIT_USAGE;
  }
  char *args[] = {argv[2], "--help", NULL};
  return cmd->run(2, args);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    usage(stderr);
    return SL_EXIT_USAGE;
  }
  if (sl_cli_is_help(argv[1])) {
    usage(stdout);
    return SL_EXIT_OK;
  }
  if (strcmp(argv[1], "help") == 0)
    return help(argc, argv);
  const sl_cli_cmd *cmd = find_command(argv[1]);
  if (cmd)
    return cmd->run(argc - 1, argv + 1);
  fprintf(stderr, "sluice: unknown command '%s'\nTry 'sluice --help' for the commands.\n", argv[1]);
  return SL_EXIT_USAGE;
}
