/* What `sluice run` and `sluice sim` print about a run's memory: the store
 * of the node that peaked, beside its own budget, every group's on a mixed
 * cluster, whether the time of spilled bytes is in the JCT, what a shuffle
 * moved and the least time the disks owe. */
#include "report.h"

#include "workloads/units.h"

void sl_cli_print_stores(FILE *f, const sl_summary *s)
{
  char peak[SL_FORMAT_MAX], budget[SL_FORMAT_MAX], spilled[SL_FORMAT_MAX];
  fprintf(f, "  peak store    %s of %s budget on %s, spilled %s%s\n",
          sl_format_size(s->peak_node_store_bytes, peak, sizeof peak),
          sl_format_size(s->peak_node_budget_bytes, budget, sizeof budget), s->peak_store_node_name,
          sl_format_size(s->spilled_bytes, spilled, sizeof spilled), s->oom ? ", OOM" : "");
  /* one group: the line above says it all */
  for (int g = 0; s->ngroups > 1 && g < s->ngroups; g++) {
    const sl_group_store *gs = &s->groups[g];
    fprintf(f, "  %-13s %s: %s of %s per node, most on %s.%d (%d node%s)\n", g == 0 ? "by group" : "", gs->name,
            sl_format_size(gs->peak_bytes, peak, sizeof peak), sl_format_size(gs->budget_bytes, budget, sizeof budget),
            gs->name, gs->peak_index, gs->nodes, gs->nodes == 1 ? "" : "s");
  }
  if (s->spill_time == SL_SPILL_NOT_MODELLED)
    fprintf(f, "  spill time    not modelled: the %s spilled on nodes with no disk cost no time (a node\n"
               "                group's disk_bandwidth, or --spill-bandwidth BW, charges every write and read back)\n",
            sl_format_size(s->spilled_bytes, spilled, sizeof spilled));
  if (s->shuffle_bytes > 0) {
    char moved[SL_FORMAT_MAX];
    fprintf(f, "  shuffle       %s read by the all-to-all operators (merges and reducers, re-runs included)\n",
            sl_format_size(s->shuffle_bytes, moved, sizeof moved));
  }
  if (s->disk_bound_s > 0) {
    fprintf(f, "  disk bound    %.3g s: what the stores cannot hold, written once and read back once", s->disk_bound_s);
    if (s->disk_write_bps > 0) {
      char w[SL_FORMAT_MAX], r[SL_FORMAT_MAX];
      fprintf(f, ", at the %s/s write and %s/s read this run measured",
              sl_format_size(s->disk_write_bps, w, sizeof w), sl_format_size(s->disk_read_bps, r, sizeof r));
    }
    if (s->complete && s->jct_s > 0)
      fprintf(f, " (%.0f%% of the JCT)", 100 * s->disk_bound_s / s->jct_s);
    fputc('\n', f);
  }
}

static void print_class(FILE *f, const char *label, const sl_idle_breakdown *b)
{
  if (!(b->capacity_s > 0))
    return;
  int order[SL_IDLE_NREASONS];
  for (int r = 0; r < SL_IDLE_NREASONS; r++)
    order[r] = r;
  for (int i = 1; i < SL_IDLE_NREASONS; i++) /* largest first */
    for (int j = i; j > 0 && b->idle_s[order[j]] > b->idle_s[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  fprintf(f, "  %-13s %.1f%% busy", label, 100 * b->busy_s / b->capacity_s);
  const char *sep = "; idle: ";
  for (int i = 0; i < SL_IDLE_NREASONS; i++) {
    double pct = 100 * b->idle_s[order[i]] / b->capacity_s;
    if (pct < 0.1)
      continue;
    fprintf(f, "%s%s %.1f%%", sep, sl_idle_reason_name((sl_idle_reason)order[i]), pct);
    sep = ", ";
  }
  fputc('\n', f);
}

void sl_cli_print_cost(FILE *f, const sl_summary *s)
{
  const sl_run_cost *c = &s->cost;
  if (!(c->total > 0))
    return;
  fprintf(f, "  cost          $%.4g: nodes $%.4g", c->total, c->instances);
  if (s->autoplace[0])
    fprintf(f, " (hosts $%.4g, pool $%.4g: %.0f node-seconds, %d acquired, at most %d at once; --autoplace %s)",
            s->host_cost_usd, s->pool_cost_usd, s->pool_node_s, s->pool_acquired, s->pool_peak, s->autoplace);
  if (s->storage_gets + s->storage_puts > 0 || c->held > 0)
    fprintf(f, ", %.0f GET and %.0f PUT requests $%.4g, storage held $%.4g", s->storage_gets, s->storage_puts,
            c->requests, c->held);
  fputc('\n', f);
}

void sl_cli_print_idle(FILE *f, const sl_summary *s)
{
  print_class(f, "CPU time", &s->cpu_time);
  print_class(f, "GPU time", &s->gpu_time);
}
