#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void sl_profile_ideal(sl_profile *p)
{
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "ideal");
}

bool sl_profile_charges(const sl_profile *p)
{
  return p->task_s > 0 || p->put_s > 0 || p->get_s > 0 || p->put_bps > 0 || p->get_bps > 0 ||
         p->serialize_bps > 0;
}

/* Seconds to move @p bytes at @p bps; 0 when the profile does not copy. */
static double per_byte(double bytes, double bps)
{
  return bps > 0 ? bytes / bps : 0.0;
}

/* Rows of one output partition of a typical task of operator @p i: a
 * target partition's worth, or the task's whole output when that is less
 * (a task never joins its output with another's). */
static double rows_per_out_partition(const sl_plan *plan, int i)
{
  const sl_pop *o = &plan->ops[i];
  double out = sl_plan_task_out_rows(o, sl_plan_typical_rows(plan, i));
  double cut = (double)sl_plan_rows_per_part(o, plan->target_partition_bytes);
  double rows = fmin(out, cut);
  return rows > 1.0 ? rows : 1.0;
}

double sl_profile_row_cost(const sl_plan *plan, int i, const sl_profile *prof)
{
  const sl_pop *o = &plan->ops[i];
  bool source = o->kind == SL_OP_SOURCE;
  double in_bytes = source ? 0.0 : o->in_row_bytes;
  double out_bytes = o->rows_out_per_row * o->out_row_bytes;
  double s = 0.0;

  if (!source)
    s += prof->get_s / rows_per_out_partition(plan, i - 1) + per_byte(in_bytes, prof->get_bps);
  s += prof->put_s * o->rows_out_per_row / rows_per_out_partition(plan, i) + per_byte(out_bytes, prof->put_bps);
  s += per_byte(in_bytes + out_bytes, prof->serialize_bps);
  return s;
}

void sl_profile_apply(sl_plan *plan, const sl_profile *prof)
{
  snprintf(plan->profile, sizeof plan->profile, "%s", prof->name);
  if (!sl_profile_charges(prof))
    return;
  double add[SL_MAX_OPS];
  for (int i = 0; i < plan->nops; i++)
    add[i] = sl_profile_row_cost(plan, i, prof);
  for (int i = 0; i < plan->nops; i++) {
    plan->ops[i].time_per_task += prof->task_s;
    plan->ops[i].time_per_row += add[i];
  }
}
