/**
 * @file search.h
 * @brief Capacity planning: the cheapest cluster shapes, built from a set of
 *        node types, that meet a throughput target or a deadline.
 *
 * A shape is a count per node type (each between the type's min and max,
 * models/cluster.h). The search is a branch and bound over all shapes:
 *
 * 1. every shape gets its physical limit from the LP bound (models/bound.h)
 *    for free: a shape whose bound already misses the target, or whose
 *    cheapest conceivable run (price x bound JCT) is over the budget, is
 *    pruned without simulating it;
 * 2. the rest are sorted by a lower bound of the objective (dollars per run,
 *    or per hour) and simulated in that order, each under every model asked
 *    for (sim/engine.h);
 * 3. once `top` shapes meet the target and the next shape's lower bound is
 *    no better than the top-th found, no shape left can enter the answer:
 *    they are pruned as dominated.
 *
 * The answer is exact for the simulated cost model: a pruned shape is
 * provably not among the `top` cheapest. With several models, each model's
 * answer is simulated under every other model too, so they compare on the
 * same shapes. Deterministic: ties break by price, then by counts.
 */
#ifndef SL_CAPACITY_SEARCH_H
#define SL_CAPACITY_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/cluster.h"
#include "models/core.h"
#include "models/plan.h"

#define SL_CAP_MAX_MODELS 8
/** More shapes than this is a search the user should narrow (the maxima). */
#define SL_CAP_MAX_SHAPES 200000

/** @brief What "cheapest" means. */
typedef enum {
  SL_CAP_RANK_RUN,  /**< dollars for the whole run: price per hour x JCT */
  SL_CAP_RANK_HOUR, /**< dollars per hour of the cluster */
} sl_cap_rank;

typedef enum {
  SL_CAP_SIMULATED,
  SL_CAP_INFEASIBLE,   /**< some operator fits on no node of the shape */
  SL_CAP_BOUND_MISSES, /**< even the physical limit misses the target */
  SL_CAP_OVER_BUDGET,  /**< even the cheapest conceivable run costs too much */
  SL_CAP_DOMINATED,    /**< cannot be cheaper than the top shapes found */
} sl_cap_status;

/** @brief How one shape fared under one model. */
typedef struct {
  sl_cap_status status;
  double jct_s, throughput_rows_s, pct_of_bound;
  double cost_per_run;      /**< price per hour x JCT */
  bool complete;            /**< the simulated job finished */
  bool meets;               /**< complete, meets the target and the budget */
  bool pareto;              /**< no other simulated shape is both cheaper per run and faster */
} sl_cap_outcome;

typedef struct {
  int counts[SL_MAX_GROUPS]; /**< nodes of each type */
  int nodes;
  double price_per_hour;
  double bound_jct_s;        /**< INFINITY when infeasible */
  double critical_path_s;    /**< of one partition through every operator (the bound's) */
  double bound_throughput_rows_s; /**< rows / bound JCT */
  double objective_bound;    /**< lower bound of the objective */
  sl_cap_outcome by_model[SL_CAP_MAX_MODELS];
} sl_cap_shape;

typedef struct {
  const sl_plan *plan;        /**< borrowed: the whole job, which the bound and the answer are for */
  /** Borrowed, may be NULL: the same job with only a fraction of its source
   *  tasks, simulated in its place when the whole job is too long to
   *  simulate. Its JCT is scaled up: the time beyond one partition's
   *  critical path grows in proportion to the source rows. */
  const sl_plan *sample_plan;
  const sl_cluster *types;    /**< borrowed: the node types, as groups */
  double deadline_s;          /**< JCT target; 0 = none */
  double target_rows_s;       /**< throughput target (rows / JCT); 0 = none */
  double budget;              /**< dollars per run (or per hour with RANK_HOUR); 0 = none */
  sl_cap_rank rank;
  int top;                    /**< how many cheapest shapes to find (default 5) */
  int nmodels;
  sl_core_opts models[SL_CAP_MAX_MODELS]; /**< one simulation per shape and entry */
  uint64_t seed;              /**< of every simulation */
  double memory_bytes;        /**< every node's store budget; 0 = the node types' */
  /** Called after each simulation (may be NULL): done so far, and an upper
   *  estimate of the total. */
  void (*progress)(void *ctx, int simulated, int estimate);
  void *progress_ctx;
} sl_cap_opts;

typedef struct {
  int nshapes;
  sl_cap_shape *shapes;       /**< owned, in the order they were enumerated */
  int *order;                 /**< owned: shape indices by objective, cheapest first */
  int ntop[SL_CAP_MAX_MODELS];
  int top[SL_CAP_MAX_MODELS][64]; /**< per model: shapes meeting the target, cheapest first */
  int simulations;            /**< simulator runs (shape x model) */
  int simulated_shapes, pruned_infeasible, pruned_bound, pruned_budget, pruned_dominated;
  double wall_s;
} sl_cap_result;

/** @brief Defaults: rank per run, top 5, streaming only, workload seed. */
void sl_cap_opts_default(sl_cap_opts *o);

/**
 * @brief Runs the search. @p r is the caller's; release with sl_cap_result_free().
 * @return 0; SL_EINVAL (no target, no node types, too many shapes: @p err
 *         says which); SL_ENOMEM; SL_EIO when a simulation could not run.
 */
int sl_cap_search(const sl_cap_opts *o, sl_cap_result *r, char *err, size_t errlen);

void sl_cap_result_free(sl_cap_result *r);

/** @brief "2 x g5.2xlarge + 1 x m7i.2xlarge" */
void sl_cap_shape_name(const sl_cluster *types, const sl_cap_shape *s, char *buf, size_t n);

/** @brief The status as a word for the CSV: simulated, infeasible, ... */
const char *sl_cap_status_name(sl_cap_status s);

/**
 * @brief One CSV row per shape and model (libcsv quoting): the counts, the
 *        price, the bound, the status and why, and the simulated figures.
 * @return 0 or SL_EIO.
 */
int sl_cap_write_csv(const sl_cap_opts *o, const sl_cap_result *r, FILE *f);

/**
 * @brief The Pareto front of each model, one block per model in model order
 *        (blocks separated by two blank lines, as gnuplot's `index` wants),
 *        sorted by JCT: jct_s,cost_per_run,shape, under a commented header.
 * @return 0 or SL_EIO.
 */
int sl_cap_write_front(const sl_cap_opts *o, const sl_cap_result *r, FILE *f);

#endif
