/**
 * @file search.h
 * @brief Capacity planning: the cheapest cluster shapes, built from a set of
 *        node types, that meet a throughput target or a deadline.
 *
 * A shape is a count per node type (each between the type's min and max,
 * models/cluster.h). The search is a best-first branch and bound over a
 * tree of partial shapes, so that a catalogue of hundreds of thousands of
 * shapes is searched without listing them:
 *
 * 1. a node of the tree fixes the counts of the first types (the dearest
 *    first) and leaves the rest free. Every shape below it costs at least
 *    its cheapest completion (the free types at their min) and runs no
 *    faster than its largest (the free types at their max): the LP bound
 *    of sl_bound_limits() only improves with more nodes. One bound of the
 *    largest completion so settles the whole subtree when it already
 *    misses the target (bound-misses-target), when some operator fits on no
 *    node even there (infeasible, and why), or when the cheapest completion
 *    at that bound is over the budget (over-budget);
 *    The counts of a node's next type too few to run the job or to meet
 *    the target are found by bisection (both only improve with the
 *    count) and settled at once; the others wait as one range, each
 *    count split off when its lower bound comes up;
 * 2. nodes are expanded cheapest lower bound of the objective first
 *    (dollars per run: price x bound JCT; per hour: price); a whole shape
 *    reached that way is simulated, under every model asked for
 *    (sim/engine.h);
 * 3. once `top` shapes meet the target and the next node's lower bound is
 *    no better than the top-th found, nothing left can enter the answer:
 *    every shape left is dominated.
 *
 * The answer is exact for the simulated cost model: a pruned shape is
 * provably not among the `top` cheapest. With several models, each model's
 * answer is simulated under every other model too, so they compare on the
 * same shapes. Deterministic: ties break by the order nodes were made.
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
/** Distinct reasons kept for infeasible shapes. */
#define SL_CAP_MAX_REASONS 8

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
  double cost_per_run;      /**< price per hour x JCT, plus remote storage's requests and bytes held;
                                 an elastic type's nodes only while the run held them */
  double pool_cost_per_run; /**< of that, the elastic types' nodes (the rented CPU workers) */
  bool complete;            /**< the simulated job finished */
  bool meets;               /**< complete, meets the target and the budget */
  bool pareto;              /**< no other simulated shape is both cheaper per run and faster */
} sl_cap_outcome;

typedef struct {
  int counts[SL_MAX_GROUPS]; /**< nodes of each type */
  int nodes;
  double price_per_hour;     /**< of its nodes, an elastic type's counted at none: the pool is
                                  billed while held, which only a simulation says */
  double bound_jct_s;        /**< INFINITY when infeasible */
  double critical_path_s;    /**< of one partition through every operator (the bound's) */
  double bound_throughput_rows_s; /**< rows / bound JCT */
  double objective_bound;    /**< lower bound of the objective */
  sl_cap_outcome by_model[SL_CAP_MAX_MODELS];
} sl_cap_shape;

/** @brief Where a search stands, for a progress line. */
typedef struct {
  int simulations;         /**< done so far */
  int at_least_left;       /**< more it needs at least: shapes the answers still lack */
  int at_most_left;        /**< more it may run before max_simulations stops it (-1: no limit) */
  int64_t settled, total;  /**< shapes settled (pruned, bounded or simulated) of the whole space */
  double elapsed_s;
  double per_simulation_s; /**< mean wall time of one so far (0 before the first) */
  const char *shape;       /**< the shape about to be simulated */
  const char *model;       /**< under this model */
} sl_cap_progress;

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
  int max_simulations;        /**< stop after this many simulations per model (0: no limit): a
                                   target that only simulations miss would otherwise have every
                                   shape whose bound meets it simulated; the answer is then not
                                   proven */
  /** Called before each simulation (may be NULL). */
  void (*progress)(void *ctx, const sl_cap_progress *p);
  void *progress_ctx;
} sl_cap_opts;



typedef struct {
  int64_t total_shapes;       /**< the whole space: every count of every type, at least one node */
  int nshapes;                /**< shapes reached one by one (bounded alone, maybe simulated) */
  sl_cap_shape *shapes;       /**< owned, in the order they were reached */
  int *order;                 /**< owned: shape indices by objective, cheapest first */
  int ntop[SL_CAP_MAX_MODELS];
  int top[SL_CAP_MAX_MODELS][64]; /**< per model: shapes meeting the target, cheapest first */
  int simulations;            /**< simulator runs (shape x model) */
  int64_t bounds;             /**< LP bounds computed, of subtrees and shapes */
  /** Shapes of the whole space by outcome; they add up to total_shapes
   *  (every count saturates at INT64_MAX: a space can be larger). */
  int64_t simulated_shapes, pruned_infeasible, pruned_bound, pruned_budget, pruned_dominated;
  int64_t unsearched;         /**< left when max_simulations stopped the search: they might have
                                   entered the answer */
  bool stopped;               /**< max_simulations stopped the search: the answer is not proven */
  int nreasons;               /**< why infeasible shapes are: distinct reasons, with their shapes */
  char reasons[SL_CAP_MAX_REASONS][320];
  int64_t reason_shapes[SL_CAP_MAX_REASONS];
  /** The most any shape can do: every type at its max. Its bound's rate in
   *  source rows/s (0 when even that shape is infeasible). */
  int best_bound_counts[SL_MAX_GROUPS];
  double best_bound_rows_s;
  int best_simulated;         /**< the simulated shape with the highest complete throughput, -1: none */
  int best_simulated_model;
  double wall_s;
} sl_cap_result;

/** @brief Defaults: rank per run, top 5, streaming only, workload seed, at most 30 simulations per model. */
void sl_cap_opts_default(sl_cap_opts *o);

/**
 * @brief Runs the search. @p r is the caller's; release with sl_cap_result_free().
 * @return 0; SL_EINVAL (no target, no node types: @p err says which);
 *         SL_ENOMEM; SL_EIO when a simulation could not run.
 */
int sl_cap_search(const sl_cap_opts *o, sl_cap_result *r, char *err, size_t errlen);

void sl_cap_result_free(sl_cap_result *r);

/** @brief "2 x g5.2xlarge + 1 x m7i.2xlarge" */
void sl_cap_shape_name(const sl_cluster *types, const sl_cap_shape *s, char *buf, size_t n);

/** @brief The status as a word for the CSV: simulated, infeasible, ... */
const char *sl_cap_status_name(sl_cap_status s);

/**
 * @brief One CSV row per shape reached one by one and model (libcsv
 *        quoting): the counts, the price, the bound, the status and why,
 *        and the simulated figures. Subtrees settled whole are counted in
 *        the result, not listed.
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
