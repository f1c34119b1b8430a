/**
 * @file remote.h
 * @brief A worker process: one node of a run on several machines, driven
 *        by a head (executor/head.h) over ZeroMQ.
 *
 * It runs what a virtual node of the executor runs (slots, the store and
 * its budget's spills, kernels), through the same task code
 * (executor/task.c), with no core: each output's fate is asked of the
 * head, and each attempt's end told to it. Inputs other nodes hold are
 * fetched from their workers (transport/xfer.h), and its own partitions
 * are served from its store's buffers as they are asked for.
 *
 * The worker says HELLO with its name, is given a node and an
 * incarnation, then receives the run's command line (PLAN) and builds the
 * same plan the head built. It ends when the head dismisses it, and exits
 * on its own when the head has been silent past the timeout, so that none
 * outlives its head.
 */
#ifndef SL_EXEC_REMOTE_H
#define SL_EXEC_REMOTE_H

#include <stddef.h>

#include "executor/engine.h"
#include "models/cluster.h"
#include "models/plan.h"

typedef struct {
  const char *head;       /**< the head's control endpoint, tcp://HOST:PORT */
  const char *name;       /**< the node to be (a name of the cluster spec); NULL: any free node */
  const char *listen;     /**< the address its peers fetch partitions at (default: 127.0.0.1 for a
                               head on loopback, else this host's name) */
  double join_timeout_s;  /**< how long to wait for the head's WELCOME (default 10 s) */
} sl_remote_opts;

void sl_remote_opts_default(sl_remote_opts *o);

/** @brief The run a PLAN describes, as its builder made it: borrowed until the worker ends. */
typedef struct {
  const sl_plan *plan;
  const sl_cluster *cluster;
  const sl_exec_opts *opts;
} sl_remote_run;

/** @brief Builds the run from the head's working directory @p cwd and its
 *  @p argc arguments after `sluice run`; 0, or a code and why in @p err. */
typedef int (*sl_remote_build_fn)(void *ctx, const char *cwd, int argc, char **argv, sl_remote_run *out,
                                  char *err, size_t errlen);

/**
 * @brief Joins the head and works for it until dismissed.
 * @return 0 when the head dismissed it at the end of the run; SL_EIO when
 *         no head answered or the head fell silent; the head's code when
 *         it refused the worker; the code of a failure here (why in
 *         @p err), after telling the head.
 */
int sl_remote_worker_run(const sl_remote_opts *o, sl_remote_build_fn build, void *ctx, char *err, size_t errlen);

#endif
