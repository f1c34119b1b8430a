/**
 * @file engine_opts.h
 * @brief The options `sluice run` and `sluice sim` share, parsed in one
 *        place.
 *
 * Both commands drive the same core, so an option they share means the
 * same thing, takes the same values and is refused with the same words:
 * --model, --memory, --on-full, --reservation-ratio, --fail, --out,
 * --checkpoint-interval, --checkpoint-cost, --restart-cost, --seed,
 * --stall-timeout, --record-events, --replay-events, --auto-order, --profile
 * and --quiet. Each
 * command lists SL_CLI_ENGINE_LONGOPTS in its getopt_long() table, hands
 * every option to sl_cli_engine_option() first, and parses only its own.
 */
#ifndef SL_CLI_ENGINE_OPTS_H
#define SL_CLI_ENGINE_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/core.h"

/** @brief getopt_long() codes of the shared options (above any command's own). */
enum {
  SL_CLI_O_MODEL = 1000,
  SL_CLI_O_MEMORY,
  SL_CLI_O_ON_FULL,
  SL_CLI_O_RATIO,
  SL_CLI_O_FAIL,
  SL_CLI_O_OUT,
  SL_CLI_O_CK_INTERVAL,
  SL_CLI_O_CK_COST,
  SL_CLI_O_RESTART,
  SL_CLI_O_SEED,
  SL_CLI_O_STALL,
  SL_CLI_O_RECORD,
  SL_CLI_O_REPLAY,
  SL_CLI_O_QUIET,
  SL_CLI_O_AUTO_ORDER,
  SL_CLI_O_PROFILE,
  SL_CLI_O_AUTOPLACE,
  SL_CLI_O_AUTOPLACE_INTERVAL,
};

/** @brief The shared options' entries, for a command's struct option table. */
#define SL_CLI_ENGINE_LONGOPTS                                                                               \
  {"model", required_argument, NULL, SL_CLI_O_MODEL}, {"memory", required_argument, NULL, SL_CLI_O_MEMORY},   \
  {"on-full", required_argument, NULL, SL_CLI_O_ON_FULL},                                                     \
  {"reservation-ratio", required_argument, NULL, SL_CLI_O_RATIO},                                             \
  {"fail", required_argument, NULL, SL_CLI_O_FAIL}, {"out", required_argument, NULL, SL_CLI_O_OUT},           \
  {"checkpoint-interval", required_argument, NULL, SL_CLI_O_CK_INTERVAL},                                     \
  {"checkpoint-cost", required_argument, NULL, SL_CLI_O_CK_COST},                                             \
  {"restart-cost", required_argument, NULL, SL_CLI_O_RESTART}, {"seed", required_argument, NULL, SL_CLI_O_SEED}, \
  {"stall-timeout", required_argument, NULL, SL_CLI_O_STALL},                                                 \
  {"record-events", required_argument, NULL, SL_CLI_O_RECORD},                                                \
  {"replay-events", required_argument, NULL, SL_CLI_O_REPLAY}, {"quiet", no_argument, NULL, SL_CLI_O_QUIET},  \
  {"auto-order", no_argument, NULL, SL_CLI_O_AUTO_ORDER}, {"profile", required_argument, NULL, SL_CLI_O_PROFILE}, \
  {"autoplace", required_argument, NULL, SL_CLI_O_AUTOPLACE},                                                 \
  {"autoplace-interval", required_argument, NULL, SL_CLI_O_AUTOPLACE_INTERVAL}

/** @brief The help lines of --autoplace and --autoplace-interval, shared by run and sim. */
#define SL_CLI_AUTOPLACE_HELP                                                                   \
  "  --autoplace POLICY    with elastic node groups (a pool rented by the second): who runs\n"  \
  "                        the CPU-only operators: bound (default: the fewest pool nodes\n"     \
  "                        the bound says feed the accelerators, their hosts' CPUs first),\n"  \
  "                        collocated (the hosts only), remote (pool nodes only, added while\n" \
  "                        each helps, as Cachew) or pecan (Pecan's AutoPlacement)\n"         \
  "  --autoplace-interval TIME  how long each measure of the delivery rate lasts, on which\n"  \
  "                        remote, pecan and bound act (default 10s)\n"

/** @brief What the shared options said. Strings point into argv. */
typedef struct {
  sl_core_opts core;      /**< model, on-full, ratio, checkpoints (defaults where not given) */
  double memory;          /**< every node's store, 0: the cluster's own */
  const char *fail, *out; /**< NULL when not given */
  const char *record, *replay;
  double stall_timeout_s; /**< 0: never */
  bool have_seed;
  uint64_t seed;          /**< with have_seed; 0: the workload's */
  bool quiet;
  bool auto_order;        /**< reorder the spec's reorder groups by the bound (models/reorder.h) */
  const char *profile;    /**< a system cost profile's name or file (models/profile.h), NULL: ideal */
} sl_cli_engine_opts;

/** @brief The defaults: sl_core_opts_default(), nothing else given. */
void sl_cli_engine_opts_default(sl_cli_engine_opts *o);

/**
 * @brief Takes option @p ch with value @p arg if it is a shared one. Returns
 *        0 when it was taken, 1 when it is not a shared option (the
 *        command's own), or SL_EXIT_USAGE after printing what is wrong
 *        ("sluice CMD: --memory: ...").
 */
int sl_cli_engine_option(const char *cmd, int ch, const char *arg, sl_cli_engine_opts *o);

/** @brief Checks the shared options together once all are read: 0, or
 *  SL_EXIT_USAGE after printing what is wrong. */
int sl_cli_engine_opts_check(const char *cmd, const sl_cli_engine_opts *o);

/** @brief Creates the folders above @p dir (mkdir -p of its parent; the
 *  engine makes the last one itself, once the run is known to start).
 *  0, or SL_EXIT_USAGE after printing what is wrong. */
int sl_cli_make_parents(const char *cmd, const char *dir);

#endif
