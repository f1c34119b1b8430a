#include "workload.h"

#include <string.h>

int64_t sl_workload_source_rows(const sl_workload *w)
{
  int64_t rows = 0;
  for (int i = 0; i < w->nops; i++)
    if (w->ops[i].kind == SL_OP_SOURCE)
      rows += w->ops[i].tasks * w->ops[i].rows_per_task;
  return rows;
}

double sl_op_param(const sl_op_spec *op, const char *name, double dflt)
{
  for (int i = 0; i < op->nparams; i++)
    if (strcmp(op->params[i].name, name) == 0)
      return op->params[i].value;
  return dflt;
}

const char *sl_op_kind_name(sl_op_kind k)
{
  switch (k) {
  case SL_OP_SOURCE:
    return "source";
  case SL_OP_MAP:
    return "map";
  case SL_OP_MAP_BATCHES:
    return "map_batches";
  case SL_OP_ALL_TO_ALL:
    return "all_to_all";
  case SL_OP_SINK:
    return "sink";
  }
  return "unknown";
}
