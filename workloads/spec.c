/*
 * What the spec files share. spec.h is written by four of them, one idea
 * each: spec_workload.c reads workload specs, spec_cluster.c cluster
 * specs, spec_reference.c writes the reference of both from their key
 * tables, feasible.c checks a workload against a cluster;
 * spec_internal.h is what they share. This one holds the helpers both
 * readers use: messages into the caller's buffer, a spec's default name,
 * and the names of a true-or-false choice.
 */
#include "spec.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "spec_internal.h"
#include "typed_ini.h"

void sl__msg(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  if (!err || errlen == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* The file name without folders and extension: the default spec name. */
void sl__stem(char *dst, size_t n, const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  sl_ini_trim_copy(dst, n, base, len);
}

const char *const sl__bool_names[] = {"false", "true", NULL};
