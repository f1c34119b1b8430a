/**
 * @file net.h
 * @brief The cluster's network emulated in real time, for the executor's
 *        virtual nodes: the links the simulator builds from a cluster spec
 *        (each node's NIC, up and down; the storage link; a backbone that
 *        binds), with transfers sharing them max-min fairly, each after its
 *        path's latency.
 *
 * The executor's nodes live in one process and no byte crosses a wire, but
 * a cluster spec gives the links their bandwidth. A source that reads from
 * shared storage, or a task whose input sits on another node, waits here as
 * long as the simulator's would, so that both engines run the same cluster.
 */
#ifndef SL_EXECUTOR_NET_H
#define SL_EXECUTOR_NET_H

#include <stdbool.h>

#include "models/cluster.h"

typedef struct sl_net sl_net;

/** @brief The node index that names the storage service as a source. */
#define SL_NET_STORAGE (-1)

/** @brief The network of @p c (borrowed; it must outlive the net). NULL
 *  when out of memory. */
sl_net *sl_net_new(const sl_cluster *c);
void sl_net_free(sl_net *n);

/** @brief Moves @p bytes from node @p from (or SL_NET_STORAGE) to node
 *  @p to, sharing every link of the path with the transfers in flight;
 *  returns, once they have arrived, the wall seconds that took. Nothing
 *  moves between a node and itself. */
double sl_net_transfer(sl_net *n, int from, int to, double bytes);

/** @brief Uploads @p bytes from node @p node to remote storage: its NIC up
 *  and the storage link's other direction (as the simulator routes it),
 *  after the storage latency; the wall seconds it took. At once when the
 *  cluster has no storage link. */
double sl_net_upload(sl_net *n, int node, double bytes);

/** @brief Writes (@p write) or reads @p bytes on node @p node's disk as
 *  its cluster spec gives it (its disks striped), sharing it with the
 *  spills in flight there; returns, once done, the wall seconds that took.
 *  A node whose group gives no disk waits for nothing: its spills take the
 *  real disk's time alone, as `sluice calibrate` then measures it. */
double sl_net_disk(sl_net *n, int node, double bytes, bool write);

#endif
