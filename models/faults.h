/**
 * @file faults.h
 * @brief Failure schedules: what fails when, for both engines.
 *
 * Text form, comma separated: `kill@15s` (a running task, any operator),
 * `kill:transform@15s` (a running task of that operator), `lose:1@900s`
 * (node 1 is lost: its partitions and running tasks with it),
 * `join:1@1800s` (node 1 comes back, empty). A node is its index or
 * GROUP.INDEX (`lose:cpu.0@15min`). Times need a unit (ns, us, ms, s, min
 * or h, in any case; 0 may go without), as in the specs: `@100` could be
 * seconds or milliseconds.
 *
 * A schedule that cannot apply is refused: a join of a node that the
 * schedule loses only later. What may or may not apply depending on the
 * run (a join of a node no scheduled loss took, which a random loss may
 * have; a second loss of a lost node; a kill that finds nothing to strike;
 * anything due after the job ended) is recorded in a sl_fault_log as the
 * run goes, and reported with the run's results.
 */
#ifndef SL_FAULTS_H
#define SL_FAULTS_H

#include <stddef.h>

#include <stdbool.h>

#include "cluster.h"
#include "core.h"
#include "plan.h"

#define SL_MAX_FAULTS 64
#define SL_FAULT_TEXT_MAX 64

typedef enum { SL_FAULT_KILL, SL_FAULT_LOSE, SL_FAULT_JOIN } sl_fault_kind;

typedef struct {
  sl_fault_kind kind;
  double at_s;
  int op;   /**< KILL: physical operator, -1 = any */
  int node; /**< LOSE, JOIN */
  int seq;  /**< position in the text: equal times keep their order */
  char text[SL_FAULT_TEXT_MAX]; /**< the item as written, for reports */
} sl_fault;

typedef struct {
  int n;
  sl_fault ev[SL_MAX_FAULTS];
} sl_fault_schedule;

/**
 * @brief Parses @p text for @p plan on @p cluster into @p out, sorted by
 *        time. Operator names may be any fused member's name. Returns 0 or
 *        SL_EPARSE with a message in @p err: a malformed item, a time
 *        without unit, an unknown operator or node ("group gpu has 4
 *        nodes: gpu.0 to gpu.3"), or a join before the loss of its node.
 */
int sl_faults_parse(const char *text, const sl_plan *plan, const sl_cluster *cluster,
                    sl_fault_schedule *out, char *err, size_t errlen);

/** @brief The node @p ref names (an index or GROUP.INDEX), or -1. */
int sl_faults_node(const sl_cluster *cluster, const char *ref);

/** @brief What became of one scheduled fault in a run. */
typedef enum {
  SL_FAULT_NOT_DUE,       /**< the run ended before its time */
  SL_FAULT_APPLIED,       /**< it changed the run */
  SL_FAULT_NODE_WAS_UP,   /**< a join of a node in service: nothing to do */
  SL_FAULT_NODE_WAS_DOWN, /**< a loss of a node already lost */
  SL_FAULT_NO_VICTIM,     /**< a kill that found nothing running, and nothing of its operator started again */
} sl_fault_outcome;

/**
 * @brief What became of each fault of a schedule in one run. Plain data,
 *        the caller's; both engines keep one and report it the same way.
 */
typedef struct {
  int n;
  sl_fault_outcome outcome[SL_MAX_FAULTS];
  bool deferred[SL_MAX_FAULTS]; /**< a kill left waiting for an attempt to launch */
} sl_fault_log;

/** @brief A log for @p s (may be NULL: no faults) in which no fault is due yet. */
void sl_fault_log_init(sl_fault_log *log, const sl_fault_schedule *s);

/**
 * @brief Records what fault @p i of @p s does to @p core now, just before
 *        the engine applies it: a loss of a lost node or a join of a node
 *        in service changes nothing. Returns whether it applies.
 */
bool sl_fault_log_check(sl_fault_log *log, const sl_fault_schedule *s, int i, const sl_core *core);

/** @brief Kill @p i found nothing running: it strikes the next attempt to launch, if one does. */
void sl_fault_log_defer(sl_fault_log *log, int i);

/** @brief At the end of a run: the kills @p core still holds, waiting for an attempt, never struck. */
void sl_fault_log_finish(sl_fault_log *log, const sl_fault_schedule *s, const sl_core *core);

/** @brief How many faults of the log applied. */
int sl_fault_log_applied(const sl_fault_log *log);

/**
 * @brief Writes the faults that did not apply, and why, into @p buf:
 *        "join:1@50s (the node was in service); kill@2h (the run had
 *        ended)"; "" when every fault applied. Returns how many did not.
 */
int sl_fault_log_describe(const sl_fault_log *log, const sl_fault_schedule *s, char *buf, size_t n);

#endif
