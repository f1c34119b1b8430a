/*
 * Whether a workload can run on a cluster at all: every operator that
 * takes slots needs a node group (with nodes) that has as many CPU and
 * GPU slots as one of its tasks asks for and, when the operator is
 * pinned, the accelerator it names; else the message says which
 * operator, where in its file, and what the cluster lacks. Apart from the
 * readers because it judges two specs together once both are read.
 */
#include "spec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "models/error.h"
#include "spec_internal.h"

static bool sl__group_fits(const sl_node_group *g, const sl_op_spec *op)
{
  return g->count > 0 && g->cpu >= op->cpu && g->gpu >= op->gpu && sl_group_allows(g, &op->accel);
}

/* The operator's pin names no label of the cluster's groups (with nodes). */
static int sl__unknown_accel(const char *file, const sl_cluster *c, const sl_op_spec *op,
                             char *err, size_t errlen)
{
  char want[SL_MAX_ACCELS * SL_NAME_MAX], have[SL_MAX_GROUPS * SL_NAME_MAX] = "";
  sl_accel_set labels = {0};
  size_t used = 0;
  sl_accel_set_format(&op->accel, want, sizeof want);
  for (int g = 0; g < c->ngroups; g++) {
    const char *a = c->groups[g].accelerator;
    if (!a[0] || c->groups[g].count <= 0 || sl_accel_set_has(&labels, a))
      continue;
    if (labels.n < SL_MAX_ACCELS)
      snprintf(labels.names[labels.n++], SL_NAME_MAX, "%s", a);
    int n = snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "", a);
    if (n > 0 && (size_t)n < sizeof have - used)
      used += (size_t)n;
  }
  sl__msg(err, errlen, "%s:%d: operator '%s' asks for accelerator %s but no node group of "
          "cluster '%s' has it (%s%s)", file, op->line, op->name, want, c->name,
          used ? "accelerators there: " : "no group there sets 'accelerator'", have);
  return SL_EUNSAT;
}

static int sl__unsat(const sl_workload *w, const sl_cluster *c, const sl_op_spec *op, char *err,
                     size_t errlen)
{
  double max_cpu = 0, max_gpu = 0;
  bool pinned_somewhere = false;
  const char *file = w->path[0] ? w->path : w->name;
  for (int g = 0; g < c->ngroups; g++) {
    /* a pinned operator is judged on the groups it may use */
    if (c->groups[g].count <= 0 || !sl_group_allows(&c->groups[g], &op->accel))
      continue;
    pinned_somewhere = true;
    if (c->groups[g].cpu > max_cpu)
      max_cpu = c->groups[g].cpu;
    if (c->groups[g].gpu > max_gpu)
      max_gpu = c->groups[g].gpu;
  }
  if (!pinned_somewhere)
    return sl__unknown_accel(file, c, op, err, errlen);
  char want[SL_MAX_ACCELS * SL_NAME_MAX] = "", where[SL_MAX_ACCELS * SL_NAME_MAX + 32] = "";
  sl_accel_set_format(&op->accel, want, sizeof want);
  if (op->accel.n > 0)
    snprintf(where, sizeof where, " with accelerator %s", want);
  if (op->gpu > max_gpu)
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g GPU but no node%s of cluster '%s' has "
            "more than %g", file, op->line, op->name, op->gpu, where, c->name, max_gpu);
  else if (op->cpu > max_cpu)
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g CPU but no node%s of cluster '%s' has "
            "more than %g", file, op->line, op->name, op->cpu, where, c->name, max_cpu);
  else
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g CPU and %g GPU but no node%s of "
            "cluster '%s' has both", file, op->line, op->name, op->cpu, op->gpu, where, c->name);
  return SL_EUNSAT;
}

int sl_check_feasible(const sl_workload *w, const sl_cluster *c, char *err, size_t errlen)
{
  if (!w || !c)
    return SL_EINVAL;
  for (int i = 0; i < w->nops; i++) {
    const sl_op_spec *op = &w->ops[i];
    if (op->kind == SL_OP_SINK || (op->cpu <= 0 && op->gpu <= 0))
      continue;
    bool fits = false;
    for (int g = 0; g < c->ngroups && !fits; g++)
      fits = sl__group_fits(&c->groups[g], op);
    if (!fits)
      return sl__unsat(w, c, op, err, errlen);
  }
  return 0;
}
