/**
 * @file local_cluster.h
 * @brief This machine as a cluster of one node, for `sluice run` without
 *        --cluster.
 *
 * The executor runs virtual nodes; with no cluster spec, it runs one that
 * describes the machine it is on: its cores as hwloc counts them, its
 * memory, its CUDA devices as GPU slots. Apart from the engine, so that the
 * engine itself never looks at the machine: tests hand it synthetic
 * clusters.
 */
#ifndef SL_EXEC_LOCAL_CLUSTER_H
#define SL_EXEC_LOCAL_CLUSTER_H

#include "models/cluster.h"

/**
 * @brief Fills @p out with one virtual node describing this machine: cores
 *        (hwloc; the online processors when hwloc cannot tell), physical
 *        memory, CUDA devices as GPU slots, and @p store_bytes of partition
 *        store (0: 30% of memory). Returns sl_cluster_expand()'s result.
 *        Free with sl_cluster_free().
 */
int sl_exec_local_cluster(sl_cluster *out, double store_bytes);

#endif
