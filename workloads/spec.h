/**
 * @file spec.h
 * @brief Workload and cluster specs: INI files (inih) into sl_workload and
 *        sl_cluster, with every error located as `FILE:LINE: what is wrong`.
 *
 * Workload spec: an optional `[workload]` section (name, target_partition,
 * seed, description), then one section per operator in pipeline order, the
 * section name being the operator's name:
 *
 *     [workload]
 *     target_partition = 100MB
 *
 *     [produce]
 *     kind = source          ; source | map | map_batches | all_to_all | sink
 *     tasks = 160
 *     rows_per_task = 5
 *     row_bytes = 100MB
 *     time_per_task = 5s
 *
 *     [transform]
 *     kind = map
 *     cpu = 0.99
 *     time_per_row = 0.5s
 *
 * Operator keys: kind (required); kernel (default generate for a source,
 * sleep otherwise, none for a sink); cpu, gpu; time_per_task, time_per_row,
 * time_per_batch, time_per_mb (seconds per MB of input); time_spread;
 * rows_out_per_row; out_row_bytes; batch_size; concurrency; for sources
 * tasks, rows_per_task, row_bytes (required) and read_bytes_per_row;
 * accelerator (a comma list of labels: the operator runs only on nodes of
 * groups whose `accelerator` is one of them; default: any node). Any
 * other key must be a parameter of the kernel (workloads/kernel_registry.h).
 * A sink takes `kind` only.
 *
 * Cluster spec: an optional `[cluster]` section (name, description,
 * backbone, latency, storage_bandwidth, storage_latency) and one
 * `[group NAME]` section per node group (count, cpu, gpu, memory, store,
 * cpu_speed, gpu_speed, nic, price_per_hour, accelerator: a label for the
 * group's GPUs such as a100, which operators may name; cpu and memory
 * required).
 * A group may also give `min` and `max`: the range of counts a capacity
 * search (`sluice capacity`) tries for it (default: 0 to count). A
 * node-types file is a cluster spec read that way.
 *
 * Comments start a line with `#` or `;`, or follow a value after ` ;`.
 * Sizes, times and bandwidths carry units (workloads/units.h).
 *
 * Loaders never write anything outside @p out and @p err. On error they
 * return SL_EIO (the file cannot be read) or SL_EPARSE, write the message
 * (NUL-terminated, truncated to @p errlen; @p err may be NULL) and zero
 * @p out. The old content of @p out is not freed.
 */
#ifndef SL_SPEC_H
#define SL_SPEC_H

#include <stddef.h>

#include "models/cluster.h"
#include "models/workload.h"

/** @brief Loads the workload spec at @p path into @p out. */
int sl_workload_load(const char *path, sl_workload *out, char *err, size_t errlen);

/**
 * @brief Loads the cluster spec at @p path into @p out and expands its
 *        nodes; the caller releases them with sl_cluster_free().
 */
int sl_cluster_load(const char *path, sl_cluster *out, char *err, size_t errlen);

/**
 * @brief Checks that every operator's CPU and GPU request fits on at least
 *        one node group of @p c that its accelerator pin allows.
 * @return 0, or SL_EUNSAT with `WORKLOAD:LINE: operator 'x' asks for 2 GPU
 *         but no node of cluster 'y' has more than 1` in @p err.
 */
int sl_check_feasible(const sl_workload *w, const sl_cluster *c, char *err, size_t errlen);

#endif
