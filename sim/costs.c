/*
 * Cost files (read and written) and calibration from a run's tasks.csv.
 *
 * A cost file is read with the typed INI reader of the specs
 * (workloads/typed_ini.h): the same syntax, units and FILE:LINE messages,
 * and its keys documented by `sluice spec` from the table below.
 */
#include "costs.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "results/record.h"
#include "workloads/typed_ini.h"
#include "workloads/units.h"

static int fail_at(char *err, size_t errlen, const char *path, int line, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));

static int fail_at(char *err, size_t errlen, const char *path, int line, const char *fmt, ...)
{
  int n = snprintf(err, errlen, "%s:%d: ", path, line);
  if (n >= 0 && (size_t)n < errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return SL_EPARSE;
}

/* ------------------------------------------------------------- reading */

#define COST(field) offsetof(sl_sim_op_cost, field)

/* Every key is optional: a section replaces only what it gives (.tag). */
static const sl_ini_key cost_keys[] = {
  {.name = "time_per_task", .type = SL_INI_TIME, .unit = "s per task", .range = SL_INI_NONNEG,
   .offset = COST(time_per_task), .tag = SL_COST_TIME_PER_TASK, .dflt_doc = "the spec's",
   .doc = "fixed cost of a task at speed 1"},
  {.name = "time_per_row", .type = SL_INI_TIME, .unit = "s per row", .range = SL_INI_NONNEG,
   .offset = COST(time_per_row), .tag = SL_COST_TIME_PER_ROW, .dflt_doc = "the spec's",
   .doc = "cost of each input row at speed 1"},
  {.name = "time_per_batch", .type = SL_INI_TIME, .unit = "s per batch", .range = SL_INI_NONNEG,
   .offset = COST(time_per_batch), .tag = SL_COST_TIME_PER_BATCH,
   .dflt_doc = "0s if the section gives time_per_task or time_per_row, else the spec's",
   .doc = "cost of each batch at speed 1"},
  {.name = "time_setup", .type = SL_INI_TIME, .unit = "s per slot", .range = SL_INI_NONNEG,
   .offset = COST(time_setup), .tag = SL_COST_TIME_SETUP, .dflt_doc = "the spec's",
   .doc = "set-up a slot pays before its first task of the operator, at speed 1"},
  {.name = "time_handoff", .type = SL_INI_TIME, .unit = "s per task", .range = SL_INI_NONNEG,
   .offset = COST(time_handoff), .tag = SL_COST_TIME_HANDOFF, .dflt_doc = "0s",
   .doc = "after a task of the operator ends, how long until the tasks its finish launches may start "
          "(the executor's worker handing the finish to the core and back: on a host whose CPUs are "
          "all busy, a worker that waited on a GPU or slept waits for one); at any node speed"},
  {.name = "handoffs_observed", .type = SL_INI_INT64, .unit = "tasks", .range = SL_INI_NONNEG,
   .offset = COST(handoffs_observed), .dflt_doc = "none",
   .doc = "finishes whose handoff the run measured; informational"},
  {.name = "time_spread", .type = SL_INI_REAL, .range = SL_INI_NONNEG, .offset = COST(time_spread),
   .tag = SL_COST_TIME_SPREAD, .dflt_doc = "the spec's", .doc = "coefficient of variation of a task's time"},
  {.name = "time_noise", .type = SL_INI_REAL, .range = SL_INI_NONNEG, .offset = COST(time_noise),
   .tag = SL_COST_TIME_NOISE, .dflt_doc = "0",
   .doc = "coefficient of variation of a second factor on a task's time, drawn apart from time_spread's "
          "(calibrate writes what the run varied beyond the spread factors it drew, so that a simulation "
          "draws those very factors, and this noise on top)"},
  {.name = "rows_out_per_row", .type = SL_INI_REAL, .unit = "rows", .range = SL_INI_NONNEG,
   .offset = COST(rows_out_per_row), .tag = SL_COST_ROWS_OUT, .dflt_doc = "the spec's",
   .doc = "output rows per input row (a source keeps its own)"},
  {.name = "out_row_bytes", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG,
   .offset = COST(out_row_bytes), .tag = SL_COST_OUT_ROW_BYTES, .dflt_doc = "the spec's",
   .doc = "size of one output row"},
  {.name = "rows_fitted", .type = SL_INI_REAL, .unit = "rows", .range = SL_INI_NONNEG,
   .offset = COST(rows_fitted), .tag = SL_COST_ROWS_FITTED, .dflt_doc = "none: the costs apply as given",
   .doc = "the one rows_in every attempt had, where the fit could not tell task from row costs: a "
          "simulation keeps the spec's split between them, scaled to what a task of these rows took"},
  {.name = "tasks_observed", .type = SL_INI_INT64, .unit = "tasks", .range = SL_INI_NONNEG,
   .offset = COST(tasks_observed), .dflt_doc = "none", .doc = "attempts the fit saw; informational"},
  {.name = "rows_out_spread", .type = SL_INI_REAL, .range = SL_INI_NONNEG, .offset = COST(rows_out_spread),
   .dflt_doc = "none", .doc = "coefficient of variation of rows out per row in; informational"},
  {.name = "out_row_bytes_spread", .type = SL_INI_REAL, .range = SL_INI_NONNEG,
   .offset = COST(out_row_bytes_spread), .dflt_doc = "none",
   .doc = "coefficient of variation of the output row size; informational"},
  {.name = "inflation", .type = SL_INI_REAL, .range = SL_INI_NONNEG, .offset = COST(inflation), .dflt_doc = "none",
   .doc = "bytes out per byte in over the run (Pecan's inflation factor); informational: a workload "
          "spec's `inflation` key is where an operator of a reorder group takes it"},
  {.name = NULL},
};

#define DISK(field) offsetof(sl_sim_costs, field)

static const sl_ini_key disk_keys[] = {
  {.name = "read_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = DISK(disk_read_bps), .doc = "reading spilled partitions back"},
  {.name = "write_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = DISK(disk_write_bps), .doc = "writing partitions the store could not hold"},
  {.name = "bytes_read", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG, .offset = DISK(disk_read_bytes),
   .doc = "what the read measure rests on; informational"},
  {.name = "bytes_written", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG,
   .offset = DISK(disk_write_bytes), .doc = "what the write measure rests on; informational"},
  {.name = NULL},
};

#define WHOLE(field) offsetof(sl_sim_costs, field)

static const sl_ini_key dispatch_keys[] = {
  {.name = "launch_spacing", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = WHOLE(launch_spacing_s),
   .doc = "in a burst of tasks handed out at once, how much later each next one starts"},
  {.name = "bursts", .type = SL_INI_INT, .range = SL_INI_NONNEG, .offset = WHOLE(bursts_observed),
   .doc = "bursts of two or more tasks the fit rests on; informational"},
  {.name = "launches", .type = SL_INI_INT, .range = SL_INI_NONNEG, .offset = WHOLE(burst_launches_observed),
   .doc = "the tasks in those bursts; informational"},
  {.name = NULL},
};

static const sl_ini_key run_keys[] = {
  {.name = "time_scale", .type = SL_INI_REAL, .range = SL_INI_POS, .offset = WHOLE(time_scale),
   .doc = "the run's --time-scale: a simulation scales the cluster's links by it (its times are in the "
          "fit already)"},
  {.name = "profile", .type = SL_INI_NAME, .size = 48, .offset = WHOLE(profile),
   .doc = "the system cost profile the run charged (`--profile`): its costs are in the fits above, so a "
          "simulation of these costs that adds a profile warns"},
  {.name = NULL},
};

#define LINK(field) offsetof(sl_sim_link, field)

static const sl_ini_key link_keys[] = {
  {.name = "nic", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS, .offset = LINK(nic_bps),
   .doc = "what one node of the group received at, shared by the transfers it received at once"},
  {.name = "latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG, .offset = LINK(latency_s),
   .doc = "what a transfer took beyond its bytes (the request and the route)"},
  {.name = "transfers", .type = SL_INI_INT64, .range = SL_INI_NONNEG, .offset = LINK(transfers),
   .doc = "the transfers the fit rests on; informational"},
  {.name = "bytes", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG, .offset = LINK(bytes),
   .doc = "their bytes; informational"},
  {.name = NULL},
};

/* The sections that are not an operator's: they say something of the
 * whole run. */
typedef struct {
  const char *name;
  const sl_ini_key *keys;
} whole_section;

enum { WHOLE_DISK, WHOLE_DISPATCH, WHOLE_RUN };
static const whole_section whole_sections[SL_SIM_COSTS_WHOLE_SECTIONS] = {
  [WHOLE_DISK] = {SL_SIM_COSTS_DISK_SECTION, disk_keys},
  [WHOLE_DISPATCH] = {SL_SIM_COSTS_DISPATCH_SECTION, dispatch_keys},
  [WHOLE_RUN] = {SL_SIM_COSTS_RUN_SECTION, run_keys},
};

static const sl_ini_schema cost_schema = {
  .title = "Cost file: one section per physical operator, [NAME]",
  .intro = "What `sluice calibrate` writes and `sluice sim --costs` reads: costs that replace the plan's. "
           "A section is named like a physical operator of `sluice plan` (`read->decode` for a fused "
           "one), and replaces only the costs it gives: tasks are charged its times while the policy "
           "plans with the spec's, as the run it was fitted on did (`--plan-with-costs`: with its "
           "times too); its data sizes are both's. A section [spill disk] (read_bandwidth, "
           "write_bandwidth: what the run's spills took on its disk) gives every node group without a "
           "disk of its own that disk. A section [dispatch] (launch_spacing) makes the simulator "
           "start each task of a burst handed out at once that much after the one before, in a "
           "random order, as the executor's workers wake. A section [run] (time_scale) gives the "
           "calibrated run's --time-scale: the simulation's links run scaled by it, as that run's did; "
           "its profile is the system cost profile the run charged (`--profile`), whose costs are then "
           "in the fits: `sluice sim --profile` warns that it adds a profile to them. A section "
           "[link GROUP] (nic, latency: what the transfers into the group's nodes took) gives that "
           "node group of the cluster its NIC, and the cluster the transfers' mean latency.",
  .keys = cost_keys,
};

const sl_ini_schema *sl_sim_costs_schema(void)
{
  return &cost_schema;
}

static bool is_group_name(const char *s)
{
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
      return false;
  return true;
}

/* The index of the node group named @p name in @p cl, -1 when none. */
static int group_index(const sl_cluster *cl, const char *name)
{
  for (int g = 0; g < cl->ngroups; g++)
    if (strcmp(cl->groups[g].name, name) == 0)
      return g;
  return -1;
}

/* A [link GROUP] section: one per node group. */
static int link_section(sl_ini *ini, sl_sim_costs *c, const char *group, int line)
{
  if (!*group || strlen(group) >= sizeof c->links[0].group || !is_group_name(group))
    return sl_ini_fail(ini, line, "[%s%.40s]: a link section names a node group (letters, digits, '_', '-', '.')",
                       SL_SIM_COSTS_LINK_PREFIX, group);
  for (int i = 0; i < c->nlinks; i++)
    if (strcmp(c->links[i].group, group) == 0)
      return sl_ini_fail(ini, line, "duplicate section [%s%s] (first at line %d)", SL_SIM_COSTS_LINK_PREFIX, group,
                         c->links[i].line);
  if (c->nlinks == SL_MAX_GROUPS)
    return sl_ini_fail(ini, line, "more than %d link sections", SL_MAX_GROUPS);
  sl_sim_link *l = &c->links[c->nlinks];
  memset(l, 0, sizeof *l);
  snprintf(l->group, sizeof l->group, "%s", group);
  l->line = line;
  c->in_link = c->nlinks++;
  return 0;
}

static int cost_section(sl_ini *ini, const char *name, int line)
{
  sl_sim_costs *c = sl_ini_user(ini);
  c->in_whole = -1;
  c->in_link = -1;
  if (strncmp(name, SL_SIM_COSTS_LINK_PREFIX, strlen(SL_SIM_COSTS_LINK_PREFIX)) == 0)
    return link_section(ini, c, name + strlen(SL_SIM_COSTS_LINK_PREFIX), line);
  for (int i = 0; i < SL_SIM_COSTS_WHOLE_SECTIONS; i++)
    if (strcmp(name, whole_sections[i].name) == 0) {
      if (c->whole_line[i])
        return sl_ini_fail(ini, line, "duplicate section [%s] (first at line %d)", name, c->whole_line[i]);
      c->whole_line[i] = line;
      c->in_whole = i;
      return 0;
    }
  if (!*name)
    return sl_ini_fail(ini, line, "a section needs an operator name");
  if (strlen(name) >= sizeof c->ops[0].op)
    return sl_ini_fail(ini, line, "operator name '%.40s...' is too long", name);
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->ops[i].op, name) == 0)
      return sl_ini_fail(ini, line, "duplicate section [%s] (first at line %d)", name, c->ops[i].line);
  if (c->n == SL_MAX_OPS)
    return sl_ini_fail(ini, line, "more than %d operators", SL_MAX_OPS);
  sl_sim_op_cost *oc = &c->ops[c->n++];
  memset(oc, 0, sizeof *oc);
  snprintf(oc->op, sizeof oc->op, "%s", name);
  oc->line = line;
  return 0;
}

static int cost_key(sl_ini *ini, const char *key, const char *value, int line)
{
  sl_sim_costs *c = sl_ini_user(ini);
  char names[320];
  if (c->in_whole >= 0) {
    const whole_section *ws = &whole_sections[c->in_whole];
    const sl_ini_key *wk = sl_ini_find_key(ws->keys, key);
    if (!wk)
      return sl_ini_fail(ini, line, "unknown key '%s' in [%s] (expected %s)", key, ws->name,
                         sl_ini_key_names(ws->keys, -1, names, sizeof names));
    return sl_ini_set(ini, wk, c, value, line) != 0 ? sl_ini_error(ini) : 0;
  }
  if (c->in_link >= 0) {
    const sl_ini_key *lk = sl_ini_find_key(link_keys, key);
    if (!lk)
      return sl_ini_fail(ini, line, "unknown key '%s' in [%s%s] (expected %s)", key, SL_SIM_COSTS_LINK_PREFIX,
                         c->links[c->in_link].group, sl_ini_key_names(link_keys, -1, names, sizeof names));
    return sl_ini_set(ini, lk, &c->links[c->in_link], value, line) != 0 ? sl_ini_error(ini) : 0;
  }
  sl_sim_op_cost *oc = &c->ops[c->n - 1];
  const sl_ini_key *k = sl_ini_find_key(cost_keys, key);
  if (!k)
    return sl_ini_fail(ini, line, "unknown key '%s' (expected %s)", key,
                       sl_ini_key_names(cost_keys, -1, names, sizeof names));
  if (sl_ini_set(ini, k, oc, value, line) != 0)
    return sl_ini_error(ini);
  oc->set |= k->tag;
  return 0;
}

static int cost_end(sl_ini *ini)
{
  sl_sim_costs *c = sl_ini_user(ini);
  if (c->in_whole == WHOLE_DISK && (!(c->disk_read_bps > 0) || !(c->disk_write_bps > 0)))
    return sl_ini_fail(ini, c->whole_line[WHOLE_DISK], "[%s] needs read_bandwidth and write_bandwidth",
                       SL_SIM_COSTS_DISK_SECTION);
  if (c->in_link >= 0 && !(c->links[c->in_link].nic_bps > 0))
    return sl_ini_fail(ini, c->links[c->in_link].line, "[%s%s] needs nic", SL_SIM_COSTS_LINK_PREFIX,
                       c->links[c->in_link].group);
  return 0;
}

int sl_sim_costs_apply_links(const sl_sim_costs *c, sl_cluster *cl, char *err, size_t errlen)
{
  for (int i = 0; i < c->nlinks; i++)
    if (group_index(cl, c->links[i].group) < 0)
      return fail_at(err, errlen, c->path, c->links[i].line, "no node group '%s' in cluster '%s'",
                     c->links[i].group, cl->name);
  if (c->time_scale > 0 && c->time_scale != 1)
    sl_cluster_scale_time(cl, c->time_scale);
  double latency = 0, weight = 0;
  for (int i = 0; i < c->nlinks; i++) {
    const sl_sim_link *l = &c->links[i];
    cl->groups[group_index(cl, l->group)].nic_bps = l->nic_bps;
    double w = l->transfers > 0 ? (double)l->transfers : 1;
    latency += w * l->latency_s;
    weight += w;
  }
  if (weight > 0)
    cl->latency_s = latency / weight;
  return 0;
}

void sl_sim_costs_apply_disk(const sl_sim_costs *c, sl_cluster *cl)
{
  if (!(c->disk_read_bps > 0 && c->disk_write_bps > 0))
    return;
  for (int g = 0; g < cl->ngroups; g++) {
    sl_node_group *grp = &cl->groups[g];
    if (sl_group_has_disk(grp))
      continue;
    grp->disks = 1;
    grp->disk_read_bps = c->disk_read_bps;
    grp->disk_write_bps = c->disk_write_bps;
    grp->disk_capacity_bytes = 0;
  }
}

int sl_sim_costs_load(const char *path, sl_sim_costs *out, char *err, size_t errlen)
{
  static const sl_ini_ops ops = {cost_section, cost_key, cost_end};
  memset(out, 0, sizeof *out);
  out->in_whole = -1;
  out->in_link = -1;
  snprintf(out->path, sizeof out->path, "%s", path);
  int rc = sl_ini_parse(path, &ops, out, err, errlen);
  if (rc == 0 && out->n == 0)
    rc = fail_at(err, errlen, path, 1, "no [operator] section: nothing to apply");
  if (rc < 0)
    memset(out, 0, sizeof *out);
  return rc;
}

/* ------------------------------------------------------------- applying */

/* Row sizes and row counts downstream follow the new costs, as plan.c
 * derives them. */
static void refresh_plan(sl_plan *p)
{
  double alpha = 1.0;
  for (int i = 0; i < p->nops; i++) {
    if (i > 0)
      p->ops[i].in_row_bytes = p->ops[i - 1].out_row_bytes;
    alpha *= p->ops[i].rows_out_per_row;
    p->ops[i].alpha_rows = alpha;
  }
  p->sink_rows = (double)p->source_rows * alpha;
}

/* A fit whose attempts all took the same rows (@p oc's rows_fitted)
 * measured what a task of those rows takes, not how it splits between
 * fixed and per-row costs; writing all of it per row claimed that smaller
 * tasks cost less, which the run never showed. A batch operator whose
 * real tasks were all one batch of 5 rows (300 ms a batch, 15 ms a row in
 * its spec) then had free batches in the simulation, and streaming-plus
 * cut them to one row: 210 batch tasks where the real run had 42
 * (bench/validate oddrows, -5.9%). The spec's split is kept instead,
 * scaled so that a task of the fitted rows takes what was measured; a
 * spec with no time for such a task keeps the file's per-row cost. True
 * when it applied. */
static bool apply_at_one_size(const sl_sim_op_cost *oc, sl_pop *o)
{
  if (!(oc->set & SL_COST_ROWS_FITTED) || !(oc->rows_fitted > 0))
    return false;
  double x = oc->rows_fitted;
  double spec = sl_plan_task_time(o, x);
  double measured = (oc->set & SL_COST_TIME_PER_TASK ? oc->time_per_task : 0) +
                    (oc->set & SL_COST_TIME_PER_ROW ? oc->time_per_row : 0) * x;
  if (!(spec > 0) || !(measured > 0))
    return false;
  double k = measured / spec;
  o->time_per_task *= k;
  o->time_per_batch *= k;
  o->time_per_row *= k;
  return true;
}

/* The fixed costs of @p o from @p oc. A file that gives no time_per_batch
 * (a calibrated one: it fits a cost per task and per row) has the batch
 * costs inside its time per task. Where the spec splits a batch
 * operator's fixed cost between task and batch, the file's is split the
 * same way: a task of one batch costs what was measured, and the operator
 * keeps its shape (one whose batches cost time waits for whole batches
 * under streaming-plus; zeroing its batch time made the simulation cut
 * batches the real run did not: zoo small case 1, -14.6%). */
static void apply_fixed_costs(const sl_sim_op_cost *oc, sl_pop *o)
{
  if (oc->set & SL_COST_TIME_PER_BATCH) {
    o->time_per_batch = oc->time_per_batch;
    if (oc->set & SL_COST_TIME_PER_TASK)
      o->time_per_task = oc->time_per_task;
    return;
  }
  if (!(oc->set & (SL_COST_TIME_PER_TASK | SL_COST_TIME_PER_ROW)))
    return;
  double fixed = oc->set & SL_COST_TIME_PER_TASK ? oc->time_per_task : o->time_per_task + o->time_per_batch;
  double spec = o->time_per_task + o->time_per_batch;
  double batch_share = o->batch_size > 0 && o->time_per_batch > 0 && spec > 0 ? o->time_per_batch / spec : 0;
  o->time_per_batch = fixed * batch_share;
  o->time_per_task = fixed - o->time_per_batch;
}

/* The index of @p plan's operator named @p name; plan->nops when none is. */
static int plan_op(const sl_plan *plan, const char *name)
{
  int i = 0;
  while (i < plan->nops && strcmp(plan->ops[i].name, name) != 0)
    i++;
  return i;
}

static int apply(const sl_sim_costs *c, sl_plan *plan, bool times, char *err, size_t errlen)
{
  for (int k = 0; k < c->n; k++) {
    const sl_sim_op_cost *oc = &c->ops[k];
    int i = plan_op(plan, oc->op);
    if (i == plan->nops) {
      char names[256] = "";
      for (int j = 0; j < plan->nops; j++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", j ? ", " : "", plan->ops[j].name);
      return fail_at(err, errlen, c->path, oc->line, "no operator '%s' in the plan (operators: %s)", oc->op, names);
    }
    sl_pop *o = &plan->ops[i];
    if (times && !apply_at_one_size(oc, o)) {
      apply_fixed_costs(oc, o);
      if (oc->set & SL_COST_TIME_PER_ROW)
        o->time_per_row = oc->time_per_row;
    }
    if (times && (oc->set & SL_COST_TIME_SPREAD))
      o->time_spread = oc->time_spread;
    if (times && (oc->set & SL_COST_TIME_NOISE))
      o->time_noise = oc->time_noise;
    if (times && (oc->set & SL_COST_TIME_SETUP))
      o->time_setup = oc->time_setup;
    if ((oc->set & SL_COST_ROWS_OUT) && o->kind != SL_OP_SOURCE)
      o->rows_out_per_row = oc->rows_out_per_row; /* a source's rows are its rows */
    if (oc->set & SL_COST_OUT_ROW_BYTES)
      o->out_row_bytes = oc->out_row_bytes;
  }
  refresh_plan(plan);
  return 0;
}

int sl_sim_costs_apply(const sl_sim_costs *c, sl_plan *plan, char *err, size_t errlen)
{
  return apply(c, plan, true, err, errlen);
}

int sl_sim_costs_apply_data(const sl_sim_costs *c, sl_plan *plan, char *err, size_t errlen)
{
  return apply(c, plan, false, err, errlen);
}


bool sl_sim_costs_handoffs(const sl_sim_costs *c, const sl_plan *plan, double out[SL_MAX_OPS])
{
  bool any = false;
  for (int i = 0; i < SL_MAX_OPS; i++)
    out[i] = 0;
  for (int k = 0; k < c->n; k++) {
    const sl_sim_op_cost *oc = &c->ops[k];
    int i = plan_op(plan, oc->op);
    if (!(oc->set & SL_COST_TIME_HANDOFF) || i == plan->nops)
      continue;
    out[i] = oc->time_handoff;
    any = any || oc->time_handoff > 0;
  }
  return any;
}

/* ----------------------------------------------------------- calibration */

/* Columns read; those from C_N on are optional. 'speed' (the speed of the
 * node's resource an attempt ran at) turns a duration back into time at
 * speed 1, so that a run on unequal nodes calibrates right; 'waited_s'
 * (time held by backpressure) and 'transfer_s' (time receiving inputs,
 * which the simulator charges to the links) are no cost of the operator's
 * and are taken out, so that a run that backpressured or read from shared
 * storage calibrates right too; 'spread' (the factor a task's time was
 * drawn with) is divided out, leaving the operator's base time; 'fresh'
 * (the slot's first task of the operator) marks the attempts that also
 * paid its set-up, which is measured apart from the per-task fit; the
 * spill columns (time on the node's disk) are taken out too, and give the
 * disk's bandwidths. */
enum { C_OP, C_OP_NAME, C_START, C_END, C_ROWS_IN, C_ROWS_OUT, C_BYTES_OUT, C_STATUS, C_N,
       C_SPEED = C_N, C_WAITED, C_TRANSFER, C_SPREAD, C_BYTES_IN, C_FRESH, C_SPILL_WS, C_SPILL_WB, C_SPILL_RS,
       C_SPILL_RB, C_NODE, C_DISPATCH, C_HANDOFF, C_NODE_NAME, C_TRANSFER_BYTES, C_SPREAD_CV, C_NOISE_CV, C_ALL };
static const char *const wanted[C_ALL] = {"op",        "op_name", "start_s",  "end_s",      "rows_in",
                                          "rows_out",  "bytes_out", "status", "speed",      "waited_s",
                                          "transfer_s", "spread",  "bytes_in", "fresh", "spill_write_s",
                                          "spill_write_bytes", "spill_read_s", "spill_read_bytes", "node",
                                          "dispatch_s", "handoff_s", "node_name", "transfer_bytes",
                                          "spread_cv", "noise_cv"};

typedef struct {
  double *x, *y, *rows_out, *bytes_out;
  double *f;     /* the spread factor y was divided by (1: none recorded) */
  unsigned char *fresh; /* the attempt set its operator up on its slot */
  double bytes_in; /* over every attempt, when the trace has the column */
  double handoff_sum; /* over the attempts with a handoff_s */
  int64_t handoffs;
  /* the coefficients the attempts' factors were drawn with, where the
   * trace has them (spread_cv, noise_cv): summed over the cv_n attempts
   * that recorded them */
  double cv_sum, noise_sum;
  int64_t cv_n;
  double *y_var; /* variance of y that the printed times' rounding alone makes */
  int64_t n, cap;
} samples;

/* A node's interval of time: a spill written or read back, or an
 * attempt's receiving of its inputs. */
typedef struct {
  double node, from, to;
} node_window;

typedef struct {
  double at, dispatch; /* the LAUNCH's time, and how long its worker took to start it */
} launch_sample;

/* One attempt's receiving of its inputs over the network: on node @c node
 * of group @c group (an index of reader.groups), from @c from to @c to. */
typedef struct {
  node_window w; /* first: by_from() sorts these too */
  int group;
  double bytes;
  double at_once; /* fit_links(): transfers the node received at once, on average over this one */
} transfer_sample;

typedef struct {
  const char *path;
  int line;        /* physical line being parsed, for messages */
  int record;      /* records complete so far; record 0 is the header */
  int record_line; /* line where the last complete record ended */
  int col, rc;
  int index[C_ALL]; /* column of each wanted field, -1 when absent */
  char field[C_ALL][128];
  int ncols;
  sl_sim_costs *costs;
  samples s[SL_MAX_OPS];
  double spill_w_s, spill_w_bytes, spill_r_s, spill_r_bytes; /* over every attempt */
  /* when the disk was busy: each attempt's reads right after its inputs
   * arrived, its writes just before it ended; the disk is one device, so
   * its bandwidth is the bytes over the union of these windows, not over
   * their sum (two tasks reading at once each saw half of it); one disk a
   * node, so the unions are per node, and add */
  node_window *win[2];
  int64_t nwin[2], capwin[2];
  launch_sample *launch; /* attempts with a dispatch_s */
  int64_t nlaunch, caplaunch;
  transfer_sample *xfer; /* attempts that received bytes over the network */
  int64_t nxfer, capxfer;
  char groups[SL_MAX_GROUPS][SL_NAME_MAX]; /* the node groups of the receiving nodes */
  int ngroups;
  char *err;
  size_t errlen;
} reader;

static int push(samples *s, double x, double y, double ro, double bo, double y_var, double f, bool fresh)
{
  if (s->n == s->cap) {
    int64_t ncap = s->cap ? s->cap * 2 : 256;
    double *nx = realloc(s->x, sizeof *nx * ncap);
    if (nx)
      s->x = nx;
    double *ny = realloc(s->y, sizeof *ny * ncap);
    if (ny)
      s->y = ny;
    double *nr = realloc(s->rows_out, sizeof *nr * ncap);
    if (nr)
      s->rows_out = nr;
    double *nb = realloc(s->bytes_out, sizeof *nb * ncap);
    if (nb)
      s->bytes_out = nb;
    double *nv = realloc(s->y_var, sizeof *nv * ncap);
    if (nv)
      s->y_var = nv;
    double *nf = realloc(s->f, sizeof *nf * ncap);
    if (nf)
      s->f = nf;
    unsigned char *ng = realloc(s->fresh, sizeof *ng * ncap);
    if (ng)
      s->fresh = ng;
    if (!nx || !ny || !nr || !nb || !nv || !nf || !ng)
      return SL_ENOMEM;
    s->cap = ncap;
  }
  s->x[s->n] = x;
  s->y[s->n] = y;
  s->rows_out[s->n] = ro;
  s->bytes_out[s->n] = bo;
  s->y_var[s->n] = y_var;
  s->f[s->n] = f;
  s->fresh[s->n] = fresh;
  s->n++;
  return 0;
}

/* The step of the last digit a number was written with ("15.6107": 1e-4,
 * "2e-05": 1e-5): what it may be off by, half of it either way. The
 * engines write six significant digits and drop trailing zeros ("7.3" is
 * 7.30000), so the step is never taken coarser than that. */
static double printed_quantum(const char *text)
{
  double v = fabs(strtod(text, NULL));
  double six_digits = v > 0 ? pow(10.0, floor(log10(v)) - 5) : 0;
  const char *dot = strchr(text, '.');
  const char *e = strpbrk(text, "eE");
  int decimals = 0;
  if (dot)
    for (const char *d = dot + 1; *d >= '0' && *d <= '9'; d++)
      decimals++;
  long exp10 = e ? strtol(e + 1, NULL, 10) : 0;
  return fmin(pow(10.0, (double)(exp10 - decimals)), six_digits);
}

/* The most variance that printing alone gives a duration made of these
 * times. Rounded on the same step q, the two ends of a duration d are off
 * by c q or (c - 1) q together, c the fraction of a step in d: a variance
 * of c (1 - c) q^2, at most q^2 / 4, so q^2 / 8 a time. */
static double rounding_variance(const reader *r, const int *cols, int ncols)
{
  double v = 0;
  for (int k = 0; k < ncols; k++)
    if (r->index[cols[k]] >= 0) {
      double q = printed_quantum(r->field[cols[k]]);
      v += q * q / 8;
    }
  return v;
}

static void on_field(void *data, size_t len, void *ctx)
{
  reader *r = ctx;
  int col = r->col++;
  if (r->rc)
    return;
  const char *s = data ? data : "";
  if (r->record == 0) {
    for (int k = 0; k < C_ALL; k++)
      if (strcmp(s, wanted[k]) == 0)
        r->index[k] = col;
    return;
  }
  for (int k = 0; k < C_ALL; k++)
    if (r->index[k] == col)
      snprintf(r->field[k], sizeof r->field[k], "%.*s", (int)(len < 127 ? len : 127), s);
}

static int number_field(reader *r, int k, double *out)
{
  char *end;
  errno = 0;
  *out = strtod(r->field[k], &end);
  if (!r->field[k][0] || *end || errno || !isfinite(*out))
    return fail_at(r->err, r->errlen, r->path, r->line, "%s: '%s' is not a number", wanted[k], r->field[k]);
  return 0;
}

/*
 * A run's clock starts at 0, and a billion seconds is thirty years. Rows and
 * bytes are counts. The bounds keep the fit's sums of squares finite: past
 * them a value cannot come from a run, and the fit would write inf or nan
 * into a cost file that `sluice sim --costs` then rejects.
 */
#define TRACE_TIME_MAX 1e9
#define TRACE_COUNT_MAX 1e15

static bool is_count(double v)
{
  return v >= 0 && v <= TRACE_COUNT_MAX && v == floor(v);
}

/* Physical operator names are spec names (letters, digits, '_', '-', '.')
 * joined by "->" for fused operators. Anything else cannot have come from a
 * run, and would not survive being written as a [section] of a cost file. */
static bool is_op_name(const char *s)
{
  if (!*s)
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("_-.>", *s))
      return false;
  return true;
}

/* Finds or adds the cost entry of an operator, keyed by name. */
static int op_slot(reader *r, const char *name, int op_index)
{
  sl_sim_costs *c = r->costs;
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->ops[i].op, name) == 0)
      return i;
  if (c->n == SL_MAX_OPS)
    return fail_at(r->err, r->errlen, r->path, r->line, "more than %d operators", SL_MAX_OPS);
  sl_sim_op_cost *oc = &c->ops[c->n];
  memset(oc, 0, sizeof *oc);
  snprintf(oc->op, sizeof oc->op, "%.*s", (int)sizeof oc->op - 1, name);
  oc->op_index = op_index;
  return c->n++;
}

/* Room for one more element of @p size in *@p array of @p n, doubling *@p cap. */
static int room_for_one(void **array, int64_t n, int64_t *cap, size_t size)
{
  if (n < *cap)
    return 0;
  int64_t ncap = *cap ? 2 * *cap : 256;
  void *grown = realloc(*array, size * (size_t)ncap);
  if (!grown)
    return SL_ENOMEM;
  *array = grown;
  *cap = ncap;
  return 0;
}

static int push_window(reader *r, int kind, double node, double from, double to)
{
  if (room_for_one((void **)&r->win[kind], r->nwin[kind], &r->capwin[kind], sizeof *r->win[kind]) < 0)
    return SL_ENOMEM;
  r->win[kind][r->nwin[kind]++] = (node_window){node, from, to};
  return 0;
}

/* Windows, or records that start with one (transfer_sample), by node,
 * then by start. */
static int by_from(const void *pa, const void *pb)
{
  const node_window *a = pa, *b = pb;
  if (a->node != b->node)
    return (a->node > b->node) - (a->node < b->node);
  return (a->from > b->from) - (a->from < b->from);
}

static int push_launch(reader *r, double at, double dispatch)
{
  if (room_for_one((void **)&r->launch, r->nlaunch, &r->caplaunch, sizeof *r->launch) < 0)
    return SL_ENOMEM;
  r->launch[r->nlaunch++] = (launch_sample){at, dispatch};
  return 0;
}

static int by_launch_time(const void *pa, const void *pb)
{
  const launch_sample *a = pa, *b = pb;
  return (a->at > b->at) - (a->at < b->at);
}

static int by_dispatch(const void *pa, const void *pb)
{
  const launch_sample *a = pa, *b = pb;
  return (a->dispatch > b->dispatch) - (a->dispatch < b->dispatch);
}

/* LAUNCHes the executor handed out in one pass over the core's decisions
 * lie within microseconds of each other; this gap is well above that and
 * well below a task. */
#define BURST_GAP_S 5e-4

/*
 * The launch spacing: the executor wakes the workers of a burst one after
 * another, in the order the host's scheduler picks, so sorted by their
 * wait the k-th of a burst waited about k spacings (a worker that ran its
 * own slot's next task at once is the 0th). The least-squares slope
 * through 0 over every burst of two or more.
 */
static void fit_launch_spacing(launch_sample *l, int64_t n, sl_sim_costs *out)
{
  if (n == 0)
    return; /* l may be NULL: qsort must not see it */
  qsort(l, (size_t)n, sizeof *l, by_launch_time);
  double sum_rd = 0, sum_rr = 0;
  for (int64_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && l[j].at - l[j - 1].at <= BURST_GAP_S; j++)
      ;
    if (j - i < 2)
      continue;
    qsort(l + i, (size_t)(j - i), sizeof *l, by_dispatch);
    for (int64_t k = i; k < j; k++) {
      double rank = (double)(k - i);
      sum_rd += rank * l[k].dispatch;
      sum_rr += rank * rank;
    }
    out->bursts_observed++;
    out->burst_launches_observed += (int)(j - i);
  }
  out->launch_spacing_s = sum_rr > 0 ? fmax(0, sum_rd / sum_rr) : 0;
}

/* Each transfer's at_once: 1 plus the time the node's other transfers
 * overlapped it, over its length. Sorted by node, then start; a transfer
 * overlaps only those that start before it ends, and of those before it,
 * the ones that have not ended (@p longest bounds how far back they start). */
static void count_at_once(transfer_sample *x, int64_t n, double longest)
{
  for (int64_t i = 0; i < n; i++) {
    const node_window *a = &x[i].w;
    double len = a->to - a->from, shared = 0;
    for (int64_t j = i - 1; j >= 0 && x[j].w.node == a->node && x[j].w.from >= a->from - longest; j--)
      shared += fmax(0, fmin(a->to, x[j].w.to) - a->from);
    for (int64_t j = i + 1; j < n && x[j].w.node == a->node && x[j].w.from < a->to; j++)
      shared += fmin(a->to, x[j].w.to) - x[j].w.from;
    x[i].at_once = 1 + shared / len;
  }
}

/*
 * [link GROUP]: per node group, the transfers into its nodes fitted by
 * least squares as time = latency + bytes * at_once / nic. A node's link
 * is shared: a transfer that ran beside others got a share of it (two at
 * once, each half), which at_once puts back, as the simulator shares its
 * links. Where the sizes and sharing did not vary, the fit cannot tell
 * latency from bandwidth and puts it all in the bandwidth; a negative
 * intercept (noise) is refitted through 0. No section for a group with
 * fewer than 3 transfers.
 */
static void fit_links(reader *r, sl_sim_costs *out)
{
  if (r->nxfer == 0)
    return;
  qsort(r->xfer, (size_t)r->nxfer, sizeof *r->xfer, by_from);
  double longest = 0;
  for (int64_t i = 0; i < r->nxfer; i++)
    longest = fmax(longest, r->xfer[i].w.to - r->xfer[i].w.from);
  count_at_once(r->xfer, r->nxfer, longest);
  for (int g = 0; g < r->ngroups; g++) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, bytes = 0;
    for (int64_t i = 0; i < r->nxfer; i++) {
      const transfer_sample *t = &r->xfer[i];
      if (t->group != g)
        continue;
      double x = t->bytes * t->at_once, y = t->w.to - t->w.from;
      n++;
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
      bytes += t->bytes;
    }
    if (n < 3)
      continue;
    double var = sxx - sx * sx / n, per_byte, latency = 0;
    per_byte = var > 1e-9 * sxx ? (sxy - sx * sy / n) / var : 0;
    latency = var > 1e-9 * sxx ? (sy - per_byte * sx) / n : 0;
    if (!(per_byte > 0) || latency < 0) {
      latency = 0;
      per_byte = sxy / sxx;
    }
    if (!(per_byte > 0) || !isfinite(per_byte))
      continue;
    sl_sim_link *l = &out->links[out->nlinks++];
    snprintf(l->group, sizeof l->group, "%s", r->groups[g]);
    l->nic_bps = 1 / per_byte;
    l->latency_s = latency;
    l->transfers = (int64_t)n;
    l->bytes = bytes;
  }
}

/* Seconds in which at least one of a node's windows was open, summed over nodes. */
static double union_seconds(node_window *w, int64_t n)
{
  if (n == 0)
    return 0; /* w may be NULL: qsort must not see it */
  qsort(w, (size_t)n, sizeof *w, by_from);
  double total = 0, from = 0, to = -1;
  for (int64_t i = 0; i < n; i++) {
    if (w[i].from > to || (i > 0 && w[i].node != w[i - 1].node)) {
      total += to > from ? to - from : 0;
      from = w[i].from;
      to = w[i].to;
    } else if (w[i].to > to) {
      to = w[i].to;
    }
  }
  return total + (to > from ? to - from : 0);
}

/* The node group of a node named GROUP.INDEX, into @p group; false when
 * the name is not of that form. */
static bool group_of_node(const char *node_name, char *group, size_t n)
{
  const char *dot = strrchr(node_name, '.');
  if (!dot || dot == node_name || !dot[1] || (size_t)(dot - node_name) >= n)
    return false;
  for (const char *d = dot + 1; *d; d++)
    if (!isdigit((unsigned char)*d))
      return false;
  snprintf(group, n, "%.*s", (int)(dot - node_name), node_name);
  return is_group_name(group);
}

/* Keeps the network part of an attempt's input time (transfer_s with its
 * transfer_bytes, on a node named after its group) for fit_links(). Not a
 * source's (operator 0): its bytes came over the storage link or off its
 * disk, the cluster spec's, not a group's NIC. */
static int take_transfer(reader *r, double op, double node, double start, double transfer)
{
  if (op == 0 || r->index[C_TRANSFER_BYTES] < 0 || r->index[C_NODE_NAME] < 0 || !(transfer > 0))
    return 0;
  double bytes;
  int rc = number_field(r, C_TRANSFER_BYTES, &bytes);
  if (rc < 0)
    return rc;
  if (!(bytes >= 0 && bytes <= TRACE_COUNT_MAX))
    return fail_at(r->err, r->errlen, r->path, r->line, "transfer_bytes must be a number from 0 to %g",
                   TRACE_COUNT_MAX);
  char group[SL_NAME_MAX];
  if (!(bytes > 0) || !group_of_node(r->field[C_NODE_NAME], group, sizeof group))
    return 0;
  int g = 0;
  while (g < r->ngroups && strcmp(r->groups[g], group) != 0)
    g++;
  if (g == r->ngroups) {
    if (r->ngroups == SL_MAX_GROUPS)
      return 0;
    snprintf(r->groups[r->ngroups++], SL_NAME_MAX, "%s", group);
  }
  if (room_for_one((void **)&r->xfer, r->nxfer, &r->capxfer, sizeof *r->xfer) < 0) {
    snprintf(r->err, r->errlen, "out of memory");
    return SL_ENOMEM;
  }
  r->xfer[r->nxfer++] = (transfer_sample){.w = {node, start, start + transfer}, .group = g, .bytes = bytes};
  return 0;
}

/* The coefficients of variation this attempt's spread factor was drawn
 * with (spread_cv, and noise_cv: 0 when the trace lacks it), into @p s;
 * nothing where the trace does not record them. */
static int take_drawn(reader *r, samples *s)
{
  if (r->index[C_SPREAD_CV] < 0 || !r->field[C_SPREAD_CV][0])
    return 0;
  double cv = 0, noise = 0;
  int rc = number_field(r, C_SPREAD_CV, &cv);
  if (!rc && r->index[C_NOISE_CV] >= 0 && r->field[C_NOISE_CV][0])
    rc = number_field(r, C_NOISE_CV, &noise);
  if (rc)
    return rc;
  if (!(cv >= 0 && cv <= 1e3) || !(noise >= 0 && noise <= 1e3))
    return fail_at(r->err, r->errlen, r->path, r->line, "spread_cv and noise_cv must be numbers from 0 to 1000");
  s->cv_sum += cv;
  s->noise_sum += noise;
  s->cv_n++;
  return 0;
}

static int take_record(reader *r)
{
  if (r->record == 0) {
    for (int k = 0; k < C_N; k++)
      if (r->index[k] < 0)
        return fail_at(r->err, r->errlen, r->path, r->line, "no column '%s' (is this a sluice tasks.csv?)",
                       wanted[k]);
    r->ncols = r->col;
    return 0;
  }
  if (r->col != r->ncols)
    return fail_at(r->err, r->errlen, r->path, r->line, "%d fields, the header has %d", r->col, r->ncols);
  if (strcmp(r->field[C_STATUS], "done") != 0)
    return 0;
  double op, start, end, rows_in, rows_out, bytes_out;
  int rc = number_field(r, C_OP, &op);
  if (!rc)
    rc = number_field(r, C_START, &start);
  if (!rc)
    rc = number_field(r, C_END, &end);
  if (!rc)
    rc = number_field(r, C_ROWS_IN, &rows_in);
  if (!rc)
    rc = number_field(r, C_ROWS_OUT, &rows_out);
  if (!rc)
    rc = number_field(r, C_BYTES_OUT, &bytes_out);
  double speed = 1, waited = 0, transfer = 0, spread = 1;
  if (!rc && r->index[C_SPEED] >= 0)
    rc = number_field(r, C_SPEED, &speed);
  if (!rc && r->index[C_WAITED] >= 0)
    rc = number_field(r, C_WAITED, &waited);
  if (!rc && r->index[C_TRANSFER] >= 0)
    rc = number_field(r, C_TRANSFER, &transfer);
  if (!rc && r->index[C_SPREAD] >= 0)
    rc = number_field(r, C_SPREAD, &spread);
  double bytes_in = 0, fresh = 0;
  if (!rc && r->index[C_BYTES_IN] >= 0)
    rc = number_field(r, C_BYTES_IN, &bytes_in);
  if (!rc && r->index[C_FRESH] >= 0)
    rc = number_field(r, C_FRESH, &fresh);
  if (rc)
    return rc;
  if (fresh != 0 && fresh != 1)
    return fail_at(r->err, r->errlen, r->path, r->line, "fresh must be 0 or 1");
  double spill[4] = {0, 0, 0, 0}; /* write s, write bytes, read s, read bytes */
  for (int k = 0; k < 4; k++)
    if (r->index[C_SPILL_WS + k] >= 0) {
      if ((rc = number_field(r, C_SPILL_WS + k, &spill[k])) < 0)
        return rc;
      if (!(spill[k] >= 0 && spill[k] <= TRACE_COUNT_MAX))
        return fail_at(r->err, r->errlen, r->path, r->line, "%s must be a number from 0 to %g",
                       wanted[C_SPILL_WS + k], TRACE_COUNT_MAX);
    }
  double disk = spill[0] + spill[2];
  /* the executor's slot was taken from the LAUNCH; its worker started a
   * little later. That wait is the engine's, not the operator's: it does
   * not scale with the node's speed, and it grows with the number of
   * workers woken at once ([dispatch], fitted from these samples). */
  if (r->index[C_DISPATCH] >= 0) {
    double dispatch;
    if ((rc = number_field(r, C_DISPATCH, &dispatch)) < 0)
      return rc;
    if (!(dispatch >= 0 && dispatch <= TRACE_TIME_MAX && dispatch <= start + 1e-6))
      return fail_at(r->err, r->errlen, r->path, r->line, "dispatch_s must be a number from 0 to start_s");
    if (push_launch(r, start - dispatch, dispatch) < 0) {
      snprintf(r->err, r->errlen, "out of memory");
      return SL_ENOMEM;
    }
  }
  if (!(bytes_in >= 0 && bytes_in <= TRACE_COUNT_MAX))
    return fail_at(r->err, r->errlen, r->path, r->line, "bytes_in must be a number from 0 to %g", TRACE_COUNT_MAX);
  if (!(spread > 0 && spread <= 1e6))
    return fail_at(r->err, r->errlen, r->path, r->line, "spread must be a number above 0, up to 1e6");
  if (!(speed > 0 && speed <= 1e6))
    return fail_at(r->err, r->errlen, r->path, r->line, "speed must be a number above 0, up to 1e6");
  if (!(waited >= 0 && waited <= end - start + 1e-6))
    return fail_at(r->err, r->errlen, r->path, r->line, "waited_s must be from 0 to end_s - start_s");
  if (!(transfer >= 0 && waited + transfer <= end - start + 1e-6))
    return fail_at(r->err, r->errlen, r->path, r->line,
                   "transfer_s must be from 0 to end_s - start_s - waited_s");
  if (!(waited + transfer + disk <= end - start + 1e-6))
    return fail_at(r->err, r->errlen, r->path, r->line,
                   "spill_write_s + spill_read_s must be at most end_s - start_s - waited_s - transfer_s");
  r->spill_w_s += spill[0];
  r->spill_w_bytes += spill[1];
  r->spill_r_s += spill[2];
  r->spill_r_bytes += spill[3];
  double node = 0;
  if (r->index[C_NODE] >= 0 && (rc = number_field(r, C_NODE, &node)) < 0)
    return rc;
  if ((spill[0] > 0 && push_window(r, 0, node, end - spill[0], end) < 0) ||
      (spill[2] > 0 && push_window(r, 1, node, start + transfer, start + transfer + spill[2]) < 0)) {
    snprintf(r->err, r->errlen, "out of memory");
    return SL_ENOMEM;
  }
  if (start < 0 || end < start || end > TRACE_TIME_MAX)
    return fail_at(r->err, r->errlen, r->path, r->line, "start_s and end_s must be 0 <= start_s <= end_s <= %g",
                   TRACE_TIME_MAX);
  if ((rc = take_transfer(r, op, node, start, transfer)) < 0)
    return rc;
  if (!is_count(rows_in) || !is_count(rows_out) || !(bytes_out >= 0 && bytes_out <= TRACE_COUNT_MAX))
    return fail_at(r->err, r->errlen, r->path, r->line,
                   "rows_in and rows_out must be whole numbers, and bytes_out a number, from 0 to %g",
                   TRACE_COUNT_MAX);
  if (op < 0 || op > INT_MAX || op != floor(op))
    return fail_at(r->err, r->errlen, r->path, r->line, "op: '%s' is not an operator index", r->field[C_OP]);
  if (!is_op_name(r->field[C_OP_NAME]))
    return fail_at(r->err, r->errlen, r->path, r->line,
                   "op_name is not an operator name (letters, digits, '_', '-', '.', '->')");
  if (strlen(r->field[C_OP_NAME]) >= sizeof r->costs->ops[0].op)
    return fail_at(r->err, r->errlen, r->path, r->line, "op_name '%.40s...' is too long", r->field[C_OP_NAME]);
  int slot = op_slot(r, r->field[C_OP_NAME], (int)op);
  if (slot < 0)
    return slot;
  /* the work at speed 1 without its drawn spread factor: the operator's
   * base time. Averaging the factors into it biased a calibration by their
   * sample mean's distance from 1, about spread / sqrt(tasks): -5% on a
   * run of 22 tasks with a 0.2 spread, though its simulation draws the
   * very same factors again. */
  static const int timed[] = {C_START, C_END, C_WAITED, C_TRANSFER};
  double y_var = rounding_variance(r, timed, 4) * speed * speed / (spread * spread);
  double work = fmax(0, end - start - waited - transfer - disk) * speed / spread;
  if (push(&r->s[slot], rows_in, work, rows_out, bytes_out, y_var, spread, fresh == 1) < 0) {
    snprintf(r->err, r->errlen, "out of memory");
    return SL_ENOMEM;
  }
  r->s[slot].bytes_in += bytes_in;
  if ((rc = take_drawn(r, &r->s[slot])) < 0)
    return rc;
  /* the engine's handoff after this attempt, where its finish launched its
   * slot's next task (empty otherwise): like the dispatch, no cost of the
   * operator's work and at no node speed, but its worker's: a GPU
   * operator's worker waited off the CPUs, and hands its finish over on a
   * host whose CPUs the other operators keep busy */
  if (r->index[C_HANDOFF] >= 0 && r->field[C_HANDOFF][0]) {
    double handoff;
    if ((rc = number_field(r, C_HANDOFF, &handoff)) < 0)
      return rc;
    if (!(handoff >= 0 && handoff <= TRACE_TIME_MAX))
      return fail_at(r->err, r->errlen, r->path, r->line, "handoff_s must be empty or a number from 0 to %g",
                     TRACE_TIME_MAX);
    r->s[slot].handoff_sum += handoff;
    r->s[slot].handoffs++;
  }
  return 0;
}

static void on_record(int term, void *ctx)
{
  (void)term;
  reader *r = ctx;
  if (!r->rc)
    r->rc = take_record(r);
  for (int k = 0; k < C_ALL; k++)
    r->field[k][0] = 0;
  r->col = 0;
  r->record++;
  r->record_line = r->line;
}

/*
 * Gives libcsv one physical line at a time, so that r->line is the line a
 * callback or an error belongs to. libcsv itself counts nothing, and records
 * are not lines: blank lines make no record, a quoted field may hold a
 * newline.
 */
static void parse_lines(reader *r, struct csv_parser *p, const char *buf, size_t n)
{
  while (n > 0 && !r->rc) {
    const char *nl = memchr(buf, '\n', n);
    size_t len = nl ? (size_t)(nl - buf) + 1 : n;
    if (csv_parse(p, buf, len, on_field, on_record, r) != len && !r->rc)
      r->rc = fail_at(r->err, r->errlen, r->path, r->line, "%s", csv_strerror(csv_error(p)));
    if (nl)
      r->line++;
    buf += len;
    n -= len;
  }
}

static int parse_csv(reader *r, FILE *f)
{
  struct csv_parser p;
  if (csv_init(&p, CSV_STRICT | CSV_APPEND_NULL) != 0) {
    snprintf(r->err, r->errlen, "out of memory");
    return SL_ENOMEM;
  }
  char buf[65536];
  size_t n;
  while (!r->rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
    parse_lines(r, &p, buf, n);
  if (!r->rc)
    csv_fini(&p, on_field, on_record, r);
  csv_free(&p);
  return r->rc;
}

static double mean(const double *v, int64_t n)
{
  double s = 0;
  for (int64_t i = 0; i < n; i++)
    s += v[i];
  return n ? s / (double)n : 0;
}

/* Coefficient of variation of v[i]/w[i] over i with w[i] > 0. */
static double ratio_cv(const double *v, const double *w, int64_t n)
{
  double s = 0, s2 = 0;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++)
    if (w[i] > 0) {
      double q = v[i] / w[i];
      s += q;
      s2 += q * q;
      k++;
    }
  if (k < 2 || s <= 0)
    return 0;
  double m = s / (double)k, var = fmax(0, s2 / (double)k - m * m);
  return sqrt(var) / m;
}

/* Coefficient of variation of the recorded spread factors. */
static double factor_cv(const samples *s)
{
  double m = 0;
  for (int64_t i = 0; i < s->n; i++)
    m += s->f[i];
  if (s->n < 2 || !(m > 0))
    return 0;
  m /= (double)s->n;
  double var = 0;
  for (int64_t i = 0; i < s->n; i++)
    var += (s->f[i] - m) * (s->f[i] - m);
  return sqrt(var / (double)s->n) / m;
}

/* duration = a + b * rows_in, by least squares, with a, b >= 0. Returns
 * the variance of the relative residuals beyond what rounding explains. */
static double fit(const samples *s, sl_sim_op_cost *oc)
{
  double mx = mean(s->x, s->n), my = mean(s->y, s->n), sxx = 0, sxy = 0;
  for (int64_t i = 0; i < s->n; i++) {
    sxx += (s->x[i] - mx) * (s->x[i] - mx);
    sxy += (s->x[i] - mx) * (s->y[i] - my);
  }
  double a, b;
  oc->rows_varied = s->n >= 2 && sxx > 1e-9 * fmax(1, mx * mx) * (double)s->n;
  if (!oc->rows_varied) {
    a = mx > 0 ? 0 : my;
    b = mx > 0 ? my / mx : 0;
    oc->rows_fitted = s->n > 0 && mx > 0 ? mx : 0;
  } else {
    b = sxy / sxx;
    a = my - b * mx;
    if (a < 0) { /* through the origin */
      double xx = 0, xy = 0;
      for (int64_t i = 0; i < s->n; i++) {
        xx += s->x[i] * s->x[i];
        xy += s->x[i] * s->y[i];
      }
      a = 0;
      b = xy / xx;
    }
    if (b < 0) {
      b = 0;
      a = my;
    }
  }
  oc->time_per_task = a;
  oc->time_per_row = b;
  /* relative residuals: the simulator's spread multiplies the task time.
   * What the printed times' rounding could explain is not spread: a
   * spread of 2e-5 fitted to a run that had none perturbed every tie of
   * its simulation (fig9-small's calibrated JCT moved 4%). */
  double s1 = 0, s2 = 0, rounding = 0;
  int64_t k = 0;
  for (int64_t i = 0; i < s->n; i++) {
    double pred = a + b * s->x[i];
    if (pred > 0) {
      double q = s->y[i] / pred - 1;
      s1 += q;
      s2 += q * q;
      rounding += s->y_var[i] / (pred * pred);
      k++;
    }
  }
  double residual = 0;
  if (k >= 2) {
    double var = s2 / (double)k - (s1 / (double)k) * (s1 / (double)k);
    double rounded = rounding / (double)k;
    /* a sample variance of k residuals is off by sqrt(2 / k) of itself:
     * within three such errors of what rounding could make, it is taken
     * for rounding */
    if (var > rounded * (1 + 3 * sqrt(2.0 / (double)k)))
      residual = var - rounded;
  }
  /* where every attempt recorded the coefficients its factor was drawn
   * with, those: a simulation keyed alike then draws the very factors of
   * the run, and what varied beyond them as a factor of its own. The
   * factors' sample spread is only an estimate of their coefficient (0.30
   * over 15 tasks drawn at 0.22: zoo small seed 1 case 3), and folded into
   * one coefficient with the residual it scaled every drawn factor
   * otherwise. Without them, or where nothing was drawn, what varied
   * beyond the drawn factors and the factors' own spread, independent, so
   * their variances add, in one coefficient */
  double drawn_cv = s->n > 0 && s->cv_n == s->n ? s->cv_sum / (double)s->n : 0;
  if (drawn_cv > 0) {
    double noise = s->noise_sum / (double)s->n;
    oc->time_spread = drawn_cv;
    oc->time_noise = sqrt(residual + noise * noise);
  } else {
    double drawn = factor_cv(s);
    oc->time_spread = sqrt(residual + drawn * drawn);
    oc->time_noise = 0;
  }
  return residual;
}

/* The samples of @p s that did not set their operator up, into @p w
 * (arrays owned by the caller, s->n long). */
static void later_attempts(const samples *s, samples *w)
{
  w->n = 0;
  for (int64_t i = 0; i < s->n; i++)
    if (!s->fresh[i]) {
      w->x[w->n] = s->x[i];
      w->y[w->n] = s->y[i];
      w->y_var[w->n] = s->y_var[i];
      w->f[w->n] = s->f[i];
      w->n++;
    }
  /* an operator's attempts share its coefficients: their mean carries over */
  bool known = s->n > 0 && s->cv_n == s->n;
  w->cv_n = known ? w->n : 0;
  w->cv_sum = known ? s->cv_sum / (double)s->n * (double)w->n : 0;
  w->noise_sum = known ? s->noise_sum / (double)s->n * (double)w->n : 0;
}

/* The set-up: what the fresh attempts took beyond the per-task fit, in
 * seconds at speed 1 with no spread (the set-up is not drawn). Taken only
 * when it stands out of the later attempts' noise by three standard
 * errors: an operator with no set-up keeps 0, not a noise. */
static double setup_excess(const samples *s, const sl_sim_op_cost *oc, double residual)
{
  double sum = 0, var = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < s->n; i++)
    if (s->fresh[i]) {
      double pred = (oc->time_per_task + oc->time_per_row * s->x[i]) * s->f[i];
      sum += s->y[i] * s->f[i] - pred;
      var += pred * pred * residual + s->y_var[i] * s->f[i] * s->f[i];
      n++;
    }
  if (n == 0)
    return 0;
  double mean = sum / (double)n, stderr_ = sqrt(var) / (double)n;
  return mean > 3 * stderr_ ? mean : 0;
}

/* Fits the per-task costs to the attempts that did not set their operator
 * up, when there are enough of them, and the set-up to those that did.
 * The first GPU batch of a classifier took 0.43 s against 35 ms for the
 * rest (weights made and uploaded, a CUDA context started): averaged into
 * the task time, the simulation spread it over every batch and put the
 * job 30% off. */
/* Whether the attempts' rows_in take two values or more (all of them, or
 * only those that were not their slot's first: @p later_only). */
static bool rows_vary(const samples *s, bool later_only)
{
  bool seen = false;
  double first = 0;
  for (int64_t i = 0; i < s->n; i++) {
    if (later_only && s->fresh[i])
      continue;
    if (seen && s->x[i] != first)
      return true;
    seen = true;
    first = s->x[i];
  }
  return false;
}

static void fit_with_setup(const samples *s, sl_sim_op_cost *oc)
{
  int64_t fresh = 0;
  for (int64_t i = 0; i < s->n; i++)
    fresh += s->fresh[i];
  oc->fresh_observed = fresh;
  oc->setup_told = 0;
  oc->time_setup = 0;
  /* the later attempts alone must tell per-task from per-row cost where
   * all of them can: a batch operator's first, bigger batches were fresh
   * and its later ones all of 16 rows, so a fit of those put the batch's
   * fixed 174 ms into its rows, and the simulation cut the partitions
   * before it 6 times finer than the real run (zoo small case 1, -20%) */
  if (fresh == 0 || s->n - fresh < 2 || (rows_vary(s, false) && !rows_vary(s, true))) {
    fit(s, oc);
    return;
  }
  samples w = {0};
  w.x = malloc(sizeof *w.x * (size_t)s->n);
  w.y = malloc(sizeof *w.y * (size_t)s->n);
  w.y_var = malloc(sizeof *w.y_var * (size_t)s->n);
  w.f = malloc(sizeof *w.f * (size_t)s->n);
  if (!w.x || !w.y || !w.y_var || !w.f) {
    fit(s, oc); /* short of memory: the plain fit, set-up in the average */
  } else {
    later_attempts(s, &w);
    double residual = fit(&w, oc);
    oc->time_setup = setup_excess(s, oc, residual);
    oc->setup_told = 1;
  }
  free(w.x);
  free(w.y);
  free(w.y_var);
  free(w.f);
}

static void summarize(const samples *s, sl_sim_op_cost *oc)
{
  double rows_in = 0, rows_out = 0, bytes_out = 0;
  for (int64_t i = 0; i < s->n; i++) {
    rows_in += s->x[i];
    rows_out += s->rows_out[i];
    bytes_out += s->bytes_out[i];
  }
  fit_with_setup(s, oc);
  oc->tasks_observed = s->n;
  oc->rows_out_per_row = rows_in > 0 ? rows_out / rows_in : 0;
  oc->out_row_bytes = rows_out > 0 ? bytes_out / rows_out : 0;
  oc->rows_out_spread = ratio_cv(s->rows_out, s->x, s->n);
  oc->out_row_bytes_spread = ratio_cv(s->bytes_out, s->rows_out, s->n);
  oc->inflation = s->bytes_in > 0 ? bytes_out / s->bytes_in : 0; /* a source reads no partitions */
  oc->handoffs_observed = s->handoffs;
  oc->time_handoff = s->handoffs > 0 ? s->handoff_sum / (double)s->handoffs : 0;
  oc->set = SL_COST_TIME_PER_TASK | SL_COST_TIME_PER_ROW | SL_COST_TIME_SPREAD | SL_COST_ROWS_OUT |
            SL_COST_OUT_ROW_BYTES | (oc->setup_told ? SL_COST_TIME_SETUP : 0) |
            (s->handoffs > 0 ? SL_COST_TIME_HANDOFF : 0) | (oc->time_noise > 0 ? SL_COST_TIME_NOISE : 0);
}

/* The run's workload name, time scale and profile, from its summary.csv
 * (a run written before a column existed ran at 1, under no profile). */
static void read_summary(const char *run_dir, char *workload, size_t n, double *time_scale, char *profile,
                         size_t pn)
{
  char path[1024];
  workload[0] = 0;
  *time_scale = 1;
  snprintf(path, sizeof path, "%s/summary.csv", run_dir);
  sl_summary_columns *cols = malloc(sizeof *cols);
  if (!cols || sl_summary_read_columns(path, cols) < 0) {
    free(cols);
    return;
  }
  snprintf(workload, n, "%s", sl_summary_column(cols, "workload"));
  const char *scale = sl_summary_column(cols, "time_scale");
  char *end;
  double v = strtod(scale, &end);
  if (scale[0] && *end == 0 && v > 0 && isfinite(v))
    *time_scale = v;
  const char *prof = sl_summary_column(cols, "profile");
  snprintf(profile, pn, "%s", strcmp(prof, "ideal") == 0 ? "" : prof);
  free(cols);
}

static void sort_by_op(sl_sim_costs *c, samples *s)
{
  for (int i = 1; i < c->n; i++)
    for (int j = i; j > 0 && c->ops[j - 1].op_index > c->ops[j].op_index; j--) {
      sl_sim_op_cost t = c->ops[j];
      c->ops[j] = c->ops[j - 1];
      c->ops[j - 1] = t;
      samples u = s[j];
      s[j] = s[j - 1];
      s[j - 1] = u;
    }
}

int sl_sim_calibrate(const char *run_dir, sl_sim_costs *out, char *workload, size_t wlen, char *err, size_t errlen)
{
  char path[1024];
  memset(out, 0, sizeof *out);
  snprintf(path, sizeof path, "%s/tasks.csv", run_dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    return SL_EIO;
  }
  reader *r = calloc(1, sizeof *r);
  if (!r) {
    fclose(f);
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  *r = (reader){.path = path, .line = 1, .costs = out, .err = err, .errlen = errlen};
  for (int k = 0; k < C_ALL; k++)
    r->index[k] = -1;
  int rc = parse_csv(r, f);
  fclose(f);
  if (rc == 0 && r->record == 0)
    rc = fail_at(err, errlen, path, 1, "empty file: no header");
  if (rc == 0 && out->n == 0)
    rc = fail_at(err, errlen, path, r->record_line, "no attempt with status done to learn from");
  if (rc == 0) {
    sort_by_op(out, r->s);
    for (int i = 0; i < out->n; i++)
      summarize(&r->s[i], &out->ops[i]);
    snprintf(out->path, sizeof out->path, "%.*s", (int)sizeof out->path - 1, path);
    read_summary(run_dir, workload, wlen, &out->time_scale, out->profile, sizeof out->profile);
    /* the spill disk, where the run both wrote and read back through it */
    double busy_w = union_seconds(r->win[0], r->nwin[0]), busy_r = union_seconds(r->win[1], r->nwin[1]);
    if (busy_w > 0 && r->spill_w_bytes > 0 && busy_r > 0 && r->spill_r_bytes > 0) {
      out->disk_write_bps = r->spill_w_bytes / busy_w;
      out->disk_read_bps = r->spill_r_bytes / busy_r;
      out->disk_write_bytes = r->spill_w_bytes;
      out->disk_read_bytes = r->spill_r_bytes;
    }
    fit_launch_spacing(r->launch, r->nlaunch, out);
    fit_links(r, out);
  }
  for (int i = 0; i < SL_MAX_OPS; i++) {
    free(r->s[i].x);
    free(r->s[i].y);
    free(r->s[i].rows_out);
    free(r->s[i].bytes_out);
    free(r->s[i].y_var);
    free(r->s[i].f);
    free(r->s[i].fresh);
  }
  free(r->win[0]);
  free(r->win[1]);
  free(r->launch);
  free(r->xfer);
  free(r);
  if (rc < 0)
    memset(out, 0, sizeof *out);
  return rc;
}

/* ---------------------------------------------------------------- writing */

int sl_sim_costs_write(const sl_sim_costs *c, const char *source, const char *workload, FILE *f)
{
  fprintf(f, "# sluice cost model, calibrated from %s\n", source);
  if (workload && *workload)
    fprintf(f, "# workload: %s\n", workload);
  fputs("# A task of an operator takes time_per_task + rows_in * time_per_row seconds at\n"
        "# speed 1 (the speed of the machine that ran it), times a factor of mean 1 and\n"
        "# coefficient of variation time_spread. Fitted by least squares on the attempts\n"
        "# that ended done, less the time each held its slot waiting for memory\n"
        "# (waited_s) or for its inputs to arrive (transfer_s): the links and the\n"
        "# stores are the simulation's to charge.\n"
        "# Use it with: sluice sim WORKLOAD --costs THIS_FILE\n", f);
  for (int i = 0; i < c->n; i++) {
    const sl_sim_op_cost *o = &c->ops[i];
    fprintf(f, "\n[%s]\n", o->op);
    if (!o->rows_varied && o->rows_fitted > 0)
      fprintf(f, "; rows_in did not vary: the fit cannot tell per-task from per-row cost; it writes all of\n"
                 "; it per row, and a simulation keeps the spec's split, scaled to what %.6g rows took\n"
                 "rows_fitted = %.9g\n",
              o->rows_fitted, o->rows_fitted);
    else if (!o->rows_varied)
      fputs("; rows_in did not vary: the fit cannot tell per-task from per-row cost, so all of it is per row\n", f);
    fprintf(f, "tasks_observed = %lld\n", (long long)o->tasks_observed);
    fprintf(f, "time_per_task = %.9gs\n", o->time_per_task);
    fprintf(f, "time_per_row = %.9gs\n", o->time_per_row);
    if (o->setup_told)
      fprintf(f, "; %lld attempts were their slot's first of this operator; time_setup is what they\n"
                 "; took beyond the fit of the others (0: nothing beyond their noise)\n"
                 "time_setup = %.9gs\n",
              (long long)o->fresh_observed, o->time_setup);
    else if (o->fresh_observed > 0)
      fputs("; set-up not told apart: one later attempt or none, or their rows did not vary\n", f);
    if (o->set & SL_COST_TIME_HANDOFF)
      fprintf(f, "; after %lld of its tasks the executor handed the finish over and got the\n"
                 "; slot's next task back; the mean time that took:\n"
                 "time_handoff = %.9gs\nhandoffs_observed = %lld\n",
              (long long)o->handoffs_observed, o->time_handoff, (long long)o->handoffs_observed);
    if (o->set & SL_COST_TIME_NOISE)
      fprintf(f, "; the run recorded the coefficient its factors were drawn with: time_spread is it, and\n"
                 "; time_noise what the times varied beyond those factors, drawn apart\n"
                 "time_spread = %.6g\ntime_noise = %.6g\n",
              o->time_spread, o->time_noise);
    else
      fprintf(f, "time_spread = %.6g\n", o->time_spread);
    fprintf(f, "rows_out_per_row = %.9g\n", o->rows_out_per_row);
    fprintf(f, "rows_out_spread = %.6g\n", o->rows_out_spread);
    fprintf(f, "out_row_bytes = %.9gB\n", o->out_row_bytes);
    fprintf(f, "out_row_bytes_spread = %.6g\n", o->out_row_bytes_spread);
    if (o->inflation > 0)
      fprintf(f, "inflation = %.6g\n", o->inflation);
  }
  if (c->disk_read_bps > 0 && c->disk_write_bps > 0)
    fprintf(f, "\n[%s]\n; what the run's spills took on its disk (the tasks' spill_write_s and spill_read_s):\n"
               "; a simulation gives this disk to every node group without one of its own\n"
               "write_bandwidth = %.9gB/s\nread_bandwidth = %.9gB/s\nbytes_written = %.0fB\nbytes_read = %.0fB\n",
            SL_SIM_COSTS_DISK_SECTION, c->disk_write_bps, c->disk_read_bps, c->disk_write_bytes, c->disk_read_bytes);
  bool scaled = c->time_scale > 0 && c->time_scale != 1;
  if (scaled || c->profile[0])
    fprintf(f, "\n[%s]\n", SL_SIM_COSTS_RUN_SECTION);
  if (scaled)
    fprintf(f, "; the run's --time-scale: its times are in the fits above; a simulation runs\n"
               "; the cluster's links scaled by it too, as the run's were\ntime_scale = %.9g\n",
            c->time_scale);
  if (c->profile[0])
    fprintf(f, "; the system cost profile the run charged: its costs are in the fits above\nprofile = %s\n",
            c->profile);
  for (int i = 0; i < c->nlinks; i++) {
    const sl_sim_link *l = &c->links[i];
    fprintf(f, "\n[%s%s]\n; the transfers into the group's nodes (the tasks' transfer_s and transfer_bytes),\n"
               "; fitted as latency + bytes x (transfers the node received at once) / nic: a\n"
               "; simulation gives the group this NIC, and the cluster the mean latency\n"
               "nic = %.9gB/s\nlatency = %.9gs\ntransfers = %lld\nbytes = %.0fB\n",
            SL_SIM_COSTS_LINK_PREFIX, l->group, l->nic_bps, l->latency_s, (long long)l->transfers, l->bytes);
  }
  if (c->bursts_observed > 0)
    fprintf(f, "\n[%s]\n; tasks handed out at once started one after another, in no fixed order (the\n"
               "; tasks' dispatch_s): the simulator starts each of a burst this much after the one before\n"
               "launch_spacing = %.9gs\nbursts = %d\nlaunches = %d\n",
            SL_SIM_COSTS_DISPATCH_SECTION, c->launch_spacing_s, c->bursts_observed, c->burst_launches_observed);
  return ferror(f) ? SL_EIO : 0;
}
