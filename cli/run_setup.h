/**
 * @file run_setup.h
 * @brief What `sluice run` builds from its command line before it runs:
 *        the workload, the plan, the cluster and the engine's options. A
 *        worker process builds the same from the command line its head
 *        sends it (transport/msg.h's PLAN), so that both hold one plan.
 */
#ifndef SL_CLI_RUN_SETUP_H
#define SL_CLI_RUN_SETUP_H

#include <stdbool.h>

#include "cli/engine_opts.h"
#include "executor/engine.h"
#include "models/workload.h"

/** @brief A run, prepared. Strings point into the argv it was built from. */
typedef struct {
  sl_cli_engine_opts a;
  sl_exec_opts eo;
  sl_workload w;
  sl_plan plan;
  sl_cluster cluster;
  bool have_cluster;
  double time_scale;
  char outdir[512];
  /* across machines (executor/head.h): NULL launch runs in this process */
  const char *launch;       /**< local, ssh, slurm or none (workers started by hand or any tool) */
  const char *listen;       /**< the head's control endpoint (default tcp://127.0.0.1:*) */
  double node_timeout_s;    /**< a worker silent this long is lost (default 2 s) */
} sl_cli_run;

/**
 * @brief Parses `sluice run`'s @p argc arguments at @p argv (argv[0] is
 *        "run") and builds the run into @p r. @p quiet_help: --help is
 *        refused, not printed (a worker process).
 * @return -1 when it printed the help; 0 when @p r is ready (free it with
 *         sl_cli_run_free()); else the exit code, after printing why.
 */
int sl_cli_run_prepare(int argc, char **argv, sl_cli_run *r);

/** @brief Frees what sl_cli_run_prepare() built. */
void sl_cli_run_free(sl_cli_run *r);

#endif
