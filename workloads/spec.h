/**
 * @file spec.h
 * @brief Workload and cluster specs: INI files (workloads/typed_ini.h) into sl_workload and
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
 * Every key, its type, unit, default and the kinds of operator that take it
 * are in the tables of spec_workload.c and spec_cluster.c, which parse the
 * files and from which spec_reference.c writes the reference
 * (sl_spec_write_reference(), `sluice spec`, docs/spec.md). In
 * short: operators have a kind (source, map, map_batches, all_to_all,
 * sink), a kernel and its parameters (workloads/kernel_registry.h),
 * resource requests and a cost model; a source has tasks, rows_per_task and
 * row_bytes. A cluster spec has an optional `[cluster]` section and one
 * `[group NAME]` section per node group (cpu and memory required).
 *
 * The syntax is that of workloads/typed_ini.h; values take the units of
 * workloads/units.h (a time needs one).
 *
 * Loaders never write anything outside @p out, @p err and @p warn, and
 * print nothing. On error they return SL_EIO (the file cannot be read) or
 * SL_EPARSE, write the message (NUL-terminated, truncated to @p errlen;
 * @p err may be NULL) and zero @p out. The old content of @p out is not
 * freed.
 */
#ifndef SL_SPEC_H
#define SL_SPEC_H

#include <stddef.h>
#include <stdio.h>

#include "models/cluster.h"
#include "models/workload.h"
#include "typed_ini.h"

#define SL_SPEC_MAX_WARNINGS 4

/**
 * @brief What a spec that loads may not mean as written, one line each,
 *        `FILE:LINE: warning: what`, for the caller to show (the loaders
 *        print nothing).
 */
typedef struct {
  int n;
  char text[SL_SPEC_MAX_WARNINGS][320];
} sl_spec_warnings;

/** @brief Loads the workload spec at @p path into @p out. */
int sl_workload_load(const char *path, sl_workload *out, char *err, size_t errlen);

/**
 * @brief sl_workload_load(), and the warnings of a spec that loaded into
 *        @p warn (may be NULL): a spec without a `[workload]` section,
 *        whose name and target partition are then defaults.
 */
int sl_workload_load_warn(const char *path, sl_workload *out, sl_spec_warnings *warn, char *err, size_t errlen);

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

/** @brief Writes the reference of workload and cluster specs (Markdown), from the tables that parse them. */
void sl_spec_write_reference(FILE *f);

/** @brief The kinds of section of a spec, for sl_spec_keys(). */
typedef enum { SL_SPEC_WORKLOAD, SL_SPEC_OPERATOR, SL_SPEC_CLUSTER, SL_SPEC_GROUP } sl_spec_section;

/** @brief The key table of a kind of section (static storage), for tests and tools. */
const sl_ini_key *sl_spec_keys(sl_spec_section section);

#endif
