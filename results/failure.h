/**
 * @file failure.h
 * @brief Why a job failed, in the words a user reads: one text for both
 *        engines.
 *
 * The core decides that a job fails (a FAIL decision: its code, and the
 * operator and node it happened at) and the engines report it: the
 * executor as its error message, the simulator in summary.csv's note.
 * Both take the words from here, so a stall or an out-of-memory reads the
 * same whichever engine ran the job, and a test or a user can match one
 * text.
 */
#ifndef SL_FAILURE_H
#define SL_FAILURE_H

#include <stddef.h>

#include "models/cluster.h"
#include "models/core.h"
#include "models/plan.h"

/**
 * @brief Writes into @p buf (@p n bytes, always terminated) what the FAIL
 *        decision @p d means: for SL_EOOM the operator, the node and its
 *        store against its budget, for SL_ESTALL how long nothing moved and
 *        the stuck operator (the decision's, else the one
 *        sl_core_stuck_op() names now), otherwise sl_strerror(). An engine
 *        that fails a job on its own reason passes a decision with only
 *        @c code set and @c op and @c node at -1. Call it when the FAIL is
 *        handled: the store's bytes are those of that moment.
 */
void sl_failure_text(const sl_decision *d, const sl_plan *plan, const sl_cluster *cluster, const sl_core *core,
                     char *buf, size_t n);

#endif
