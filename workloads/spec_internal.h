/*
 * What the spec files share (spec.c says which holds what): the helpers
 * of spec.c and the readers' key tables, which the reference writes out.
 * Internal to workloads/: callers see spec.h only.
 */
#ifndef SL_SPEC_INTERNAL_H
#define SL_SPEC_INTERNAL_H

#include <stddef.h>

#include "typed_ini.h"

#define SL__LINE_MAX 200 /* inih's longest line, which no name exceeds */

/* ------------------------------------------------ spec.c */

/** @brief Formats a message into @p err (@p errlen bytes, truncated); a NULL @p err is ignored. */
void sl__msg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** @brief The file name of @p path without folders and extension: a spec's default name. */
void sl__stem(char *dst, size_t n, const char *path);
/** @brief The choices of a true-or-false key, in that order (index 0 false). */
extern const char *const sl__bool_names[];

/* ------------------------------------------------ spec_workload.c */

/** @brief Operator kinds by sl_op_kind, NULL-terminated. */
extern const char *const sl__kind_names[];
/** @brief The keys of [workload] and of an operator's section. */
extern const sl_ini_key sl__workload_keys[];
extern const sl_ini_key sl__op_keys[];

/* ------------------------------------------------ spec_cluster.c */

/** @brief The keys of [cluster] and of a [group NAME] section. */
extern const sl_ini_key sl__cluster_keys[];
extern const sl_ini_key sl__group_keys[];

#endif
