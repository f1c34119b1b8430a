/**
 * @file kernel_registry.h
 * @brief Names of the operator kernels and the parameters each accepts.
 *
 * The spec parser checks `kernel = NAME` and every kernel parameter key
 * against this table, so a typo in a spec is an error, not a silent default.
 * The kernels themselves live in workloads/kernels.h.
 */
#ifndef SL_KERNEL_REGISTRY_H
#define SL_KERNEL_REGISTRY_H

#include <stdbool.h>

#define SL_KERNEL_MAX_PARAMS 4

typedef struct {
  const char *name;
  const char *summary;
  bool source;   /**< produces rows from a split (no input rows) */
  const char *params[SL_KERNEL_MAX_PARAMS + 1]; /**< NULL-terminated */
  bool whole_task; /**< needs every row of a task before its first output (a sort): an engine
                        gathers the rows, and the outputs come at the task's end */
  bool data_rows;  /**< makes the rows its data has (a row per group): the operator's
                        rows_out_per_row is the model's estimate, not a factor the kernel
                        applies, and a real run is not held to the rows it predicts */
} sl_kernel_info;

/** @brief The kernel called @p name, or NULL. Static storage. */
const sl_kernel_info *sl_kernel_info_find(const char *name);

/** @brief Whether kernel @p k accepts parameter @p param. */
bool sl_kernel_info_has_param(const sl_kernel_info *k, const char *param);

/** @brief Number of kernels and the i-th one, for listings. */
int sl_kernel_info_count(void);
const sl_kernel_info *sl_kernel_info_at(int i);

#endif
