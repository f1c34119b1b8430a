/**
 * @file faults.h
 * @brief Failure schedules: what fails when, for both engines.
 *
 * Text form, comma separated: `kill@15s` (a running task, any operator),
 * `kill:transform@15s` (a running task of that operator), `lose:1@900s`
 * (node 1 is lost: its partitions and running tasks with it),
 * `join:1@1800s` (node 1 comes back, empty). A node is its index or
 * GROUP.INDEX (`lose:cpu.0@15min`). Times take units (ms, s, min, h).
 */
#ifndef SL_FAULTS_H
#define SL_FAULTS_H

#include <stddef.h>

#include "cluster.h"
#include "plan.h"

#define SL_MAX_FAULTS 64

typedef enum { SL_FAULT_KILL, SL_FAULT_LOSE, SL_FAULT_JOIN } sl_fault_kind;

typedef struct {
  sl_fault_kind kind;
  double at_s;
  int op;   /**< KILL: physical operator, -1 = any */
  int node; /**< LOSE, JOIN */
  int seq;  /**< position in the text: equal times keep their order */
} sl_fault;

typedef struct {
  int n;
  sl_fault ev[SL_MAX_FAULTS];
} sl_fault_schedule;

/**
 * @brief Parses @p text for @p plan on @p cluster into @p out, sorted by
 *        time. Operator names may be any fused member's name. Returns 0 or
 *        SL_EPARSE with a message in @p err.
 */
int sl_faults_parse(const char *text, const sl_plan *plan, const sl_cluster *cluster,
                    sl_fault_schedule *out, char *err, size_t errlen);

/** @brief The node @p ref names (an index or GROUP.INDEX), or -1. */
int sl_faults_node(const sl_cluster *cluster, const char *ref);

#endif
