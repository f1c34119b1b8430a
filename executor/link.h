/**
 * @file link.h
 * @brief A network link emulated in real time, for the executor's virtual
 *        nodes: transfers on it share its bandwidth equally, each after the
 *        link's latency, as the simulator's links share theirs.
 *
 * The executor's nodes live in one process and its partitions never cross
 * a wire, but a cluster spec gives the links their bandwidth: a source that
 * reads from shared storage waits on this link for as long as the
 * simulator's would take, so that both engines run the same cluster.
 */
#ifndef SL_EXECUTOR_LINK_H
#define SL_EXECUTOR_LINK_H

#include <pthread.h>

typedef struct sl_link_xfer sl_link_xfer;

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  double bps;          /**< bytes per second, in wall time (after the time scale) */
  double latency_s;    /**< wall seconds before a transfer's bytes move */
  double last;         /**< when the remaining bytes were last brought up to date */
  int active;
  sl_link_xfer *head;  /**< transfers in flight */
} sl_link;

/** @brief A link of @p bps bytes per second and @p latency_s seconds, both
 *  in modelled time; @p time_scale stretches them into wall time as the
 *  executor's modelled kernels are stretched. 0 on success. */
int sl_link_init(sl_link *l, double bps, double latency_s, double time_scale);
void sl_link_destroy(sl_link *l);

/** @brief Moves @p bytes over @p l, sharing its bandwidth fairly with the
 *  transfers in flight: returns when they have arrived, after the wall
 *  seconds that took. A link of no bandwidth limit returns at once. */
double sl_link_transfer(sl_link *l, double bytes);

#endif
