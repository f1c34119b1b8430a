/**
 * @file cli.h
 * @brief The `sluice` binary: subcommands and the helpers they share.
 *
 * Exit codes mean the same everywhere: 0 success, 1 the job ran but failed
 * (OOM, a kernel error, an interrupted run), 2 bad usage or bad input.
 */
#ifndef SL_CLI_H
#define SL_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/cluster.h"
#include "models/core.h"
#include "models/plan.h"
#include "models/workload.h"

enum { SL_EXIT_OK = 0, SL_EXIT_FAILED = 1, SL_EXIT_USAGE = 2 };

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} sl_cli_cmd;

/**
 * @brief Prints "sluice CMD: message" and one line pointing at
 *        `sluice CMD --help`, on stderr; returns SL_EXIT_USAGE.
 */
int sl_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * @brief Names the running command (a static string), so that the helpers
 *        below report an argument naming no spec as a usage error of that
 *        command. Without it they print one line.
 */
void sl_cli_set_command(const char *cmd);

/**
 * @brief Finds a spec: @p arg as a path, else a built-in name under the
 *        data directory (workloads/NAME.ini or workloads/clusters/NAME.ini).
 *        Writes the path into @p out; false when nothing exists.
 */
bool sl_cli_find_spec(const char *arg, bool cluster, char *out, size_t n);

/** @brief Loads the workload named or pointed at by @p arg; prints the error. */
int sl_cli_load_workload(const char *arg, sl_workload *w);

/**
 * @brief Loads the cluster @p arg, or, when NULL, the built-in cluster named
 *        like the workload (fig9-small falls back to fig9). Checks that
 *        every operator fits some node. Prints the error.
 */
int sl_cli_load_cluster(const char *arg, const sl_workload *w, sl_cluster *c);

/** @brief Builds the plan and prints its error. */
int sl_cli_build_plan(const sl_workload *w, sl_plan *p);

/**
 * @brief `--profile NAME|FILE`: reads the system cost profile (a name is
 *        `profiles/NAME.ini` of the source tree) and folds it into @p p
 *        (models/profile.h). @p arg NULL leaves the plan ideal. 0, or
 *        SL_EXIT_USAGE after printing `sluice CMD: --profile: FILE:LINE: ...`.
 */
int sl_cli_apply_profile(const char *cmd, const char *arg, sl_plan *p);

/**
 * @brief `--auto-order`: puts the operators of @p w's reorder groups in the
 *        order with the best bound on @p c (models/reorder.h), and says on
 *        stderr which, unless @p quiet. A workload without a group keeps
 *        its order (and gets a note). 0, or SL_EXIT_USAGE after printing
 *        what is wrong ("sluice CMD: ...").
 */
int sl_cli_auto_order(const char *cmd, sl_workload *w, const sl_cluster *c, bool quiet);

/**
 * @brief Replays the events of @p path (written by --record-events) through
 *        a core built from @p plan, @p cluster and @p opts alone, and says
 *        whether it decides what the recorded run decided. SL_EXIT_OK when
 *        the decision hashes agree, SL_EXIT_FAILED when not, SL_EXIT_USAGE
 *        for a file that cannot be read.
 */
int sl_cli_replay(const char *cmd, const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts,
                  const char *path);

/**
 * @brief Prints the "; "-separated @p items one per line, the first after
 *        @p label, the others under it (a summary's list of faults).
 */
void sl_cli_print_list(FILE *f, const char *label, const char *items);

/** @brief @p one when @p n is 1, else @p many: "1 node", "2 nodes". */
const char *sl_cli_plural(int64_t n, const char *one, const char *many);

/**
 * @brief Reads option @p opt's @p value as a time (0 or more; more than 0
 *        when @p positive) into @p out. Returns 0, or prints the usage
 *        error (a missing unit, an unknown one...) and returns SL_EXIT_USAGE.
 */
int sl_cli_parse_time(const char *cmd, const char *opt, const char *value, bool positive, double *out);

/**
 * @brief Reads option @p opt's @p value as a whole number from @p lo to
 *        @p hi into @p out. Returns 0, or prints the usage error ("out of
 *        range (from 1 to 32)", "expected a whole number") and returns
 *        SL_EXIT_USAGE.
 */
int sl_cli_parse_count(const char *cmd, const char *opt, const char *value, int64_t lo, int64_t hi, int64_t *out);

/** @brief Whether @p s is one of -h, --help. */
bool sl_cli_is_help(const char *s);

int sl_cmd_plan(int argc, char **argv);
int sl_cmd_bound(int argc, char **argv);
int sl_cmd_run(int argc, char **argv);
int sl_cmd_worker(int argc, char **argv);
int sl_cmd_sim(int argc, char **argv);
int sl_cmd_calibrate(int argc, char **argv);
int sl_cmd_plot(int argc, char **argv);
int sl_cmd_experiment(int argc, char **argv);
int sl_cmd_capacity(int argc, char **argv);
int sl_cmd_bench(int argc, char **argv);
int sl_cmd_zoo(int argc, char **argv);
int sl_cmd_spec(int argc, char **argv);

#endif
