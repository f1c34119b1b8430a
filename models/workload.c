#include "workload.h"

#include <stdio.h>
#include <string.h>

int64_t sl_workload_source_rows(const sl_workload *w)
{
  int64_t rows = 0;
  for (int i = 0; i < w->nops; i++)
    if (w->ops[i].kind == SL_OP_SOURCE)
      rows += w->ops[i].tasks * w->ops[i].rows_per_task;
  return rows;
}

double sl_workload_out_row_bytes(const sl_workload *w, int i)
{
  if (i < 0 || i >= w->nops)
    return 0;
  const sl_op_spec *op = &w->ops[i];
  if (op->kind == SL_OP_SOURCE || i == 0)
    return op->out_row_bytes;
  double in = sl_workload_out_row_bytes(w, i - 1);
  if (op->inflation > 0)
    return in * op->inflation;
  return op->out_row_bytes > 0 ? op->out_row_bytes : in;
}

double sl_op_param(const sl_op_spec *op, const char *name, double dflt)
{
  for (int i = 0; i < op->nparams; i++)
    if (strcmp(op->params[i].name, name) == 0)
      return op->params[i].value;
  return dflt;
}

bool sl_accel_set_has(const sl_accel_set *s, const char *label)
{
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->names[i], label) == 0)
      return true;
  return false;
}

/* Order does not matter: "a10g, a100" and "a100, a10g" pin alike. */
bool sl_accel_set_equal(const sl_accel_set *a, const sl_accel_set *b)
{
  if (a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (!sl_accel_set_has(b, a->names[i]))
      return false;
  return true;
}

void sl_accel_set_format(const sl_accel_set *s, char *buf, size_t len)
{
  size_t used = 0;
  if (len == 0)
    return;
  buf[0] = '\0';
  for (int i = 0; i < s->n && used < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", s->names[i]);
    if (w < 0)
      break;
    used += (size_t)w;
  }
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

const char *sl_shuffle_strategy_name(int s)
{
  static const char *const names[] = {"simple", "merge", "push", "push-star"};
  return s >= 0 && s < (int)(sizeof names / sizeof *names) ? names[s] : "?";
}
