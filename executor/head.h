/**
 * @file head.h
 * @brief The executor across machines: this process, the head, runs the
 *        scheduling core; each node of the cluster is a worker process
 *        (`sluice worker`, executor/remote.h) that runs the tasks the core
 *        launches there and keeps their outputs, over ZeroMQ
 *        (transport/control.h, transport/xfer.h).
 *
 * The head is an engine on the core's seam as the executor and the
 * simulator are: it sends each decision whole (a LAUNCH is the work
 * order), feeds the core what the workers report, and keeps nothing of
 * the core's books. Nodes are lost as real processes are: a worker silent
 * past the node timeout is lost to the core, whatever stopped it, and a
 * process that says HELLO again joins with a new incarnation. The sink is
 * here: the head fetches each partition the core delivers from the worker
 * that holds it. The outputs are the executor's files.
 */
#ifndef SL_EXEC_HEAD_H
#define SL_EXEC_HEAD_H

#include <stddef.h>

#include "executor/engine.h"

typedef struct {
  const char *launch;        /**< "local": worker processes started here (the default); "ssh": on
                                  each node's host (sl_cluster_node_host()), through $SLUICE_SSH
                                  (default ssh) called as `SLUICE_SSH HOST COMMAND`; "slurm": srun,
                                  one worker per node of the allocation; "none": started by hand or
                                  by any other tool */
  const char *listen;        /**< the control endpoint (default tcp://127.0.0.1:*: a free port) */
  double node_timeout_s;     /**< a worker silent this long is lost (default 2 s) */
  double join_timeout_s;     /**< how long the workers have to join at the start (default 30 s) */
  int argc;                  /**< the run's arguments after `sluice run`, which the workers build */
  const char *const *argv;   /**< the plan from (transport/msg.h's PLAN) */
} sl_head_opts;

void sl_head_opts_default(sl_head_opts *o);

/**
 * @brief Runs @p plan on @p cluster with one worker process per node.
 *        As sl_exec_run(): fills @p summary and writes the run's files.
 * @return 0 when the job completed; else a code and why in @p err (a
 *         worker that never joined, a node's failure, a lost head's
 *         partition for the sink, the core's failure).
 */
int sl_head_run(const sl_plan *plan, const sl_cluster *cluster, const sl_exec_opts *opts, const sl_head_opts *ho,
                sl_summary *summary, char *err, size_t errlen);

#endif
