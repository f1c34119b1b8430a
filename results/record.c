#include "record.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/bound.h"
#include "models/error.h"
#include "results/atomic_file.h"

/* Per-node memory columns stop here: a 1,000-node timeline keeps totals. */
#define SL_MAX_NODE_COLUMNS 64

/* Event labels: "lose:" and a node name, "rollback:" and a count. */
#define SL_EVENT_MAX (SL_NAME_MAX + 32)

typedef struct {
  double t, rows, rate, store, rolled_back;
  int running[SL_MAX_OPS], waiting[SL_MAX_OPS];
  int64_t queued[SL_MAX_OPS];
  double node_store[SL_MAX_NODE_COLUMNS];
  char event[SL_EVENT_MAX]; /* "" for a periodic sample */
} sample;

struct sl_recorder_s {
  const sl_plan *plan;
  const sl_cluster *cluster;
  bool keep_tasks;
  sl_task_record *tasks;
  int64_t ntasks, tasks_cap;
  sample *samples;
  int64_t nsamples, samples_cap;
  int64_t last_periodic; /* the sample the next rate is measured from, -1: none yet */
  int64_t prev_periodic; /* the one before it, -1: none */
  double rolled_back_marked; /* rows given back that rollback rows have named so far */
};

sl_recorder *sl_recorder_new(const sl_plan *plan, const sl_cluster *cluster, bool keep_tasks)
{
  sl_recorder *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->plan = plan;
  r->cluster = cluster;
  r->keep_tasks = keep_tasks;
  r->last_periodic = r->prev_periodic = -1;
  return r;
}

void sl_recorder_free(sl_recorder *r)
{
  if (!r)
    return;
  free(r->tasks);
  free(r->samples);
  free(r);
}

static int grow(void **p, int64_t *cap, size_t elem)
{
  int64_t ncap = *cap ? *cap * 2 : 1024;
  void *n = realloc(*p, (size_t)ncap * elem);
  if (!n)
    return SL_ENOMEM;
  *p = n;
  *cap = ncap;
  return 0;
}

int sl_recorder_task(sl_recorder *r, const sl_task_record *t)
{
  if (!r->keep_tasks)
    return 0;
  if (r->ntasks == r->tasks_cap && grow((void **)&r->tasks, &r->tasks_cap, sizeof *r->tasks) < 0)
    return SL_ENOMEM;
  r->tasks[r->ntasks++] = *t;
  return 0;
}

int64_t sl_recorder_ntasks(const sl_recorder *r)
{
  return r->ntasks;
}

const sl_task_record *sl_recorder_task_at(const sl_recorder *r, int64_t i)
{
  return i >= 0 && i < r->ntasks ? &r->tasks[i] : NULL;
}

void sl_recorder_set_handoff(sl_recorder *r, int64_t i, double handoff_s)
{
  if (i >= 0 && i < r->ntasks)
    r->tasks[i].handoff_s = handoff_s;
}

/* Appends a row with the core's counters now; its rate is left to the caller. */
static sample *append_sample(sl_recorder *r, double t, const sl_core *core)
{
  if (r->nsamples == r->samples_cap &&
      grow((void **)&r->samples, &r->samples_cap, sizeof *r->samples) < 0)
    return NULL;
  sample *s = &r->samples[r->nsamples++];
  memset(s, 0, sizeof *s);
  sl_core_stats st;
  sl_core_get_stats(core, &st);
  s->t = t;
  s->rows = st.rows_delivered;
  s->rolled_back = st.rows_rolled_back;
  s->store = st.store_bytes;
  for (int i = 0; i < r->plan->nops; i++) {
    sl_core_op_stats os;
    sl_core_get_op_stats(core, i, &os);
    s->running[i] = os.running;
    s->waiting[i] = os.waiting;
    s->queued[i] = os.queued_parts;
  }
  for (int n = 0; n < r->cluster->nnodes && n < SL_MAX_NODE_COLUMNS; n++)
    s->node_store[n] = sl_core_node_store(core, n);
  return s;
}

/* Rows the sink received up to @p s, those given back later included: a
 * rollback takes rows away from the sink, never from the throughput. */
static double rows_received(const sample *s)
{
  return s->rows + s->rolled_back;
}

int sl_recorder_sample(sl_recorder *r, double t, const sl_core *core)
{
  sample *s = append_sample(r, t, core);
  if (!s)
    return SL_ENOMEM;
  if (r->last_periodic >= 0) {
    /* The last row of a run comes whenever the job ends, maybe an instant
     * after the one before: a rate over that instant is a spike of noise.
     * A row less than half a period after the last is measured from the
     * one before it, over a period and a half at most. */
    const sample *prev = &r->samples[r->last_periodic];
    if (r->prev_periodic >= 0) {
      const sample *before = &r->samples[r->prev_periodic];
      if (t - prev->t < 0.5 * (prev->t - before->t))
        prev = before;
    }
    s->rate = t > prev->t ? (rows_received(s) - rows_received(prev)) / (t - prev->t) : prev->rate;
  }
  r->prev_periodic = r->last_periodic;
  r->last_periodic = r->nsamples - 1;
  return 0;
}

/* An event row keeps the rate of the row before it. */
static sample *append_event(sl_recorder *r, double t, const sl_core *core)
{
  sample *s = append_sample(r, t, core);
  if (s && r->nsamples > 1)
    s->rate = r->samples[r->nsamples - 2].rate;
  return s;
}

int sl_recorder_fault(sl_recorder *r, double t, const sl_core *core, const char *kind, const char *target)
{
  sample *s = append_event(r, t, core);
  if (!s)
    return SL_ENOMEM;
  snprintf(s->event, sizeof s->event, "%s:%s", kind, target);
  return 0;
}

/* The count comes from the core's total since the last rollback row, not
 * from the row before: the fault that caused it may have been marked after
 * the core rolled back and before the engine carried the decision out. */
int sl_recorder_rollback(sl_recorder *r, double t, const sl_core *core)
{
  sample *s = append_event(r, t, core);
  if (!s)
    return SL_ENOMEM;
  snprintf(s->event, sizeof s->event, "rollback:%.0f", s->rolled_back - r->rolled_back_marked);
  r->rolled_back_marked = s->rolled_back;
  return 0;
}

void sl_csv_identifier(const char *name, char *buf, size_t len)
{
  size_t n = 0;
  bool gap = false;
  for (const char *p = name; *p && len > 0; p++) {
    bool plain = isalnum((unsigned char)*p) || *p == '_';
    if (!plain) {
      gap = n > 0;
      continue;
    }
    if (gap && n + 1 < len)
      buf[n++] = '_';
    gap = false;
    if (n + 1 < len)
      buf[n++] = *p;
  }
  if (len == 0)
    return;
  if (n == 0 && len > 1)
    buf[n++] = 'x';
  buf[n] = '\0';
}

/* Operator @p i's part of a column name: its identifier, with its index
 * after it when an earlier operator's name gives the same one. */
static void op_identifier(const sl_plan *plan, int i, char *buf, size_t len)
{
  char other[2 * SL_NAME_MAX];
  sl_csv_identifier(plan->ops[i].name, buf, len);
  for (int j = 0; j < i; j++) {
    sl_csv_identifier(plan->ops[j].name, other, sizeof other);
    if (strcmp(other, buf) == 0) {
      size_t n = strlen(buf);
      snprintf(buf + n, len > n ? len - n : 0, "_%d", i);
      return;
    }
  }
}

const char *sl_spill_time_name(sl_spill_time t)
{
  switch (t) {
  case SL_SPILL_NONE: return "none";
  case SL_SPILL_NOT_MODELLED: return "not_modelled";
  case SL_SPILL_MODELLED: return "modelled";
  case SL_SPILL_REAL: return "real";
  }
  return "?";
}

void sl_summary_from_core(sl_summary *s, const sl_core *core)
{
  sl_core_stats st;
  sl_core_get_stats(core, &st);
  s->tasks = st.tasks_launched;
  s->retried_tasks = st.retried_tasks;
  s->lost_partitions = st.lost_partitions;
  s->checkpoints = st.checkpoints;
  s->rollbacks = st.rollbacks;
  s->peak_node_store_bytes = st.peak_store_bytes;
  s->peak_store_node = st.peak_store_node;
  s->spilled_bytes = st.spilled_bytes;
  s->rows = st.rows_delivered;
  s->rows_rolled_back = st.rows_rolled_back;
  s->first_output_s = st.first_output_s;
  s->storage_gets = st.storage_gets;
  s->storage_puts = st.storage_puts;
  s->shuffle_bytes = st.shuffle_bytes;
  s->oom = st.oom;
  sl_core_idle(core, false, &s->cpu_time);
  sl_core_idle(core, true, &s->gpu_time);
}

/* Per group: the budget of a node, and which of its nodes held the most.
 * The peak node of the whole cluster is named with its own budget, so a
 * mixed cluster never reads a big node's peak against a small one's budget. */
static void fill_stores(sl_summary *s, const sl_core *core, const sl_cluster *cluster)
{
  s->ngroups = cluster->ngroups;
  for (int g = 0; g < cluster->ngroups; g++) {
    sl_group_store *gs = &s->groups[g];
    snprintf(gs->name, sizeof gs->name, "%s", cluster->groups[g].name);
    gs->budget_bytes = cluster->groups[g].store_bytes;
    gs->peak_node = -1;
  }
  for (int n = 0; cluster->nodes && n < cluster->nnodes; n++) {
    sl_group_store *gs = &s->groups[cluster->nodes[n].group];
    double peak = sl_core_node_store_peak(core, n);
    gs->nodes++;
    if (gs->peak_node < 0 || peak > gs->peak_bytes) {
      gs->peak_bytes = peak;
      gs->peak_node = n;
      gs->peak_index = cluster->nodes[n].index_in_group;
    }
  }
  int n = s->peak_store_node >= 0 ? s->peak_store_node : 0;
  /* a tie names the node the cluster's peak names */
  if (cluster->nodes && s->peak_store_node >= 0 && s->peak_store_node < cluster->nnodes) {
    sl_group_store *gs = &s->groups[cluster->nodes[n].group];
    if (sl_core_node_store_peak(core, n) >= gs->peak_bytes) {
      gs->peak_node = n;
      gs->peak_index = cluster->nodes[n].index_in_group;
    }
  }
  sl_cluster_node_name(cluster, n, s->peak_store_node_name, sizeof s->peak_store_node_name);
  s->peak_node_budget_bytes = cluster->nodes && n < cluster->nnodes ? sl_cluster_node_group(cluster, n)->store_bytes : 0;
}

static void fill_resources(sl_summary *s, const sl_plan *plan, const sl_cluster *cluster)
{
  char id[2 * SL_NAME_MAX];
  size_t len = 0;
  s->cpu_slots = sl_cluster_total(cluster, false);
  s->gpu_slots = sl_cluster_total(cluster, true);
  for (int i = 0; i < plan->nops; i++) {
    if (!(plan->ops[i].gpu > 0))
      continue;
    op_identifier(plan, i, id, sizeof id);
    int k = snprintf(s->gpu_operators + len, sizeof s->gpu_operators - len, "%s%s", len ? " " : "", id);
    if (k < 0 || (size_t)k >= sizeof s->gpu_operators - len)
      break; /* the list stops at whole names */
    len += (size_t)k;
  }
  s->gpu_operators[len] = '\0';
}

/* Elastic nodes are billed while held, not for the whole run. */
static void fill_pool(sl_summary *s, const sl_core *core, const sl_cluster *cluster, const sl_core_opts *opts,
                      double jct_s)
{
  bool pool = false;
  for (int g = 0; g < cluster->ngroups; g++)
    pool = pool || cluster->groups[g].elastic;
  if (!pool)
    return;
  sl_core_pool_stats ps;
  sl_core_pool_stats_at(core, jct_s > 0 ? jct_s : 0, &ps);
  snprintf(s->autoplace, sizeof s->autoplace, "%s", sl_autoplace_name(opts->autoplace));
  s->pool_acquired = ps.acquired;
  s->pool_peak = ps.peak;
  s->pool_node_s = ps.node_s;
  s->pool_cost_usd = ps.cost_usd;
  s->host_cost_usd = ps.host_cost_usd;
  s->cost.instances = ps.cost_usd + ps.host_cost_usd;
  s->cost.total = s->cost.instances + s->cost.requests + s->cost.held;
}

void sl_summary_fill(sl_summary *s, const sl_core *core, const sl_plan *plan, const sl_cluster *cluster,
                     const sl_core_opts *opts, const char *engine, double jct_s, double rows, bool complete)
{
  memset(s, 0, sizeof *s);
  sl_summary_from_core(s, core);
  fill_stores(s, core, cluster);
  fill_resources(s, plan, cluster);
  snprintf(s->workload, sizeof s->workload, "%s", plan->workload ? plan->workload->name : "");
  snprintf(s->cluster, sizeof s->cluster, "%s", cluster->name);
  snprintf(s->model, sizeof s->model, "%s", sl_core_opts_model_name(opts));
  snprintf(s->engine, sizeof s->engine, "%s", engine);
  s->jct_s = jct_s;
  s->time_scale = 1;
  snprintf(s->bound_costs, sizeof s->bound_costs, "spec");
  snprintf(s->profile, sizeof s->profile, "%s", plan->profile[0] ? plan->profile : "ideal");
  s->rows = rows;
  s->expected_rows = plan->sink_rows;
  s->throughput_rows_s = jct_s > 0 ? rows / jct_s : 0;
  s->complete = complete;
  sl_core_stats st;
  sl_core_get_stats(core, &st);
  double gets, puts, input, output; /* the requests are the core's, retries included */
  sl_plan_storage_use(plan, cluster, &gets, &puts, &input, &output);
  double held = input * jct_s + st.storage_put_bytes * jct_s - st.storage_put_byte_s; /* each output byte from its upload */
  s->cost = sl_cluster_run_cost(cluster, jct_s, st.storage_gets, st.storage_puts, held);
  fill_pool(s, core, cluster, opts, jct_s);
  sl_bound b;
  if (sl_bound_compute(plan, cluster, &b) == 0 && b.jct_s > 0) {
    s->bound_s = b.jct_s;
    s->disk_bound_s = b.disk_s;
    /* the sink's rows, as the timeline counts them */
    s->bound_throughput_rows_s = b.throughput_rows_s * plan->ops[plan->nops - 1].alpha_rows;
    /* a job that stopped early has no completion time to compare */
    s->pct_of_bound = complete && jct_s > 0 ? 100 * s->bound_s / jct_s : 0;
  }
}

/* ------------------------------------------------------------ reading back */

typedef struct {
  sl_summary_columns *out;
  int record, col;
} columns_reader;

static void column_field(void *data, size_t len, void *ctx)
{
  columns_reader *r = ctx;
  int i = r->col++;
  if (i >= SL_SUMMARY_MAX_COLUMNS || r->record > 1)
    return;
  const char *s = data ? data : "";
  if (r->record == 0) {
    snprintf(r->out->names[i], sizeof r->out->names[i], "%.*s", (int)len, s);
    r->out->n = i + 1;
  } else {
    snprintf(r->out->values[i], sizeof r->out->values[i], "%.*s", (int)len, s);
  }
}

static void column_record(int term, void *ctx)
{
  (void)term;
  columns_reader *r = ctx;
  r->record++;
  r->col = 0;
}

int sl_summary_read_columns(const char *path, sl_summary_columns *out)
{
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "r");
  if (!f)
    return SL_EIO;
  struct csv_parser p;
  if (csv_init(&p, 0) != 0) {
    fclose(f);
    return SL_EIO;
  }
  columns_reader r = {.out = out};
  char buf[8192];
  size_t got;
  while (r.record < 2 && (got = fread(buf, 1, sizeof buf, f)) > 0)
    if (csv_parse(&p, buf, got, column_field, column_record, &r) != got)
      break;
  csv_fini(&p, column_field, column_record, &r);
  csv_free(&p);
  fclose(f);
  return 0;
}

const char *sl_summary_column(const sl_summary_columns *c, const char *name)
{
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->names[i], name) == 0)
      return c->values[i];
  return "";
}

/* ----------------------------------------------------------------- files */

typedef struct {
  FILE *f;
  int col;
} csv_out;

static void field_str(csv_out *o, const char *s)
{
  if (o->col++)
    fputc(',', o->f);
  /* names are plain by spec rules; quote only when they need it */
  if (strpbrk(s, ",\"\n\r"))
    csv_fwrite(o->f, s, strlen(s));
  else
    fputs(s, o->f);
}

/* Whole numbers are most of a tasks.csv row and are written by hand:
 * printf costs microseconds a number here, more still in a process where
 * a library registered printf extensions (libquadmath does), which sends
 * every call down glibc's positional path. Same digits as "%" PRId64. */
static void put_i64(FILE *f, int64_t v)
{
  char buf[24], *p = buf + sizeof buf;
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0)
    *--p = '-';
  fwrite(p, 1, (size_t)(buf + sizeof buf - p), f);
}

/* "%.0f" of a whole, finite @p v: below 2^63 it is an int64 exactly. */
static void put_whole(FILE *f, double v)
{
  if (v == 0 && signbit(v))
    fputs("-0", f);
  else if (fabs(v) < 9e18)
    put_i64(f, (int64_t)v);
  else
    fprintf(f, "%.0f", v);
}

static void field_num(csv_out *o, double v)
{
  if (o->col++)
    fputc(',', o->f);
  if (!isfinite(v))
    fputs(v > 0 ? "inf" : v < 0 ? "-inf" : "nan", o->f);
  else if (v == floor(v) && fabs(v) < 1e15)
    put_whole(o->f, v); /* "%.0f" */
  else
    fprintf(o->f, "%.6g", v);
}

/* Bytes and rows: whole numbers, never in exponent form; empty when the
 * value is not finite (a budget nobody set). */
static void field_count(csv_out *o, double v)
{
  if (o->col++)
    fputc(',', o->f);
  if (isfinite(v))
    put_whole(o->f, round(v)); /* "%.0f" */
}

static void field_i64(csv_out *o, int64_t v)
{
  if (o->col++)
    fputc(',', o->f);
  put_i64(o->f, v);
}

static void end_row(csv_out *o)
{
  fputc('\n', o->f);
  o->col = 0;
}

static int make_dir(const char *dir, char *err, size_t errlen)
{
  if (mkdir(dir, 0777) == 0 || errno == EEXIST)
    return 0;
  snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
  return SL_EIO;
}

/* Opens DIR/NAME through a temporary (atomic_file.h). */
static FILE *open_tmp(sl_atomic_file *a, const char *dir, const char *name, char *err, size_t errlen)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return sl_atomic_open(a, path, err, errlen);
}

static const char *summary_cols[] = {
  "workload", "cluster", "model", "engine", "jct_s", "throughput_rows_s", "bound_s", "pct_of_bound",
  "bound_throughput_rows_s", "peak_node_store_bytes", "peak_store_node", "peak_node_budget_bytes",
  "group_stores", "peak_rss_bytes", "spilled_bytes", "spill_time", "tasks", "retried_tasks", "lost_partitions",
  "oom", "complete", "accelerator", "sink_checksum", "rows", "expected_rows", "first_output_s", "checkpoints",
  "rollbacks", "rows_rolled_back", "errored_rows", "cpu_slots", "gpu_slots", "gpu_operators", "note", "faults_applied",
  "faults_not_applied", "cpu_capacity_s", "cpu_busy_s", "cpu_idle_admission_s", "cpu_idle_backpressure_s",
  "cpu_idle_input_s", "cpu_idle_transfer_s", "cpu_idle_failure_s", "cpu_idle_packing_s", "gpu_capacity_s", "gpu_busy_s",
  "gpu_idle_admission_s", "gpu_idle_backpressure_s", "gpu_idle_input_s", "gpu_idle_transfer_s", "gpu_idle_failure_s",
  "gpu_idle_packing_s", "output_check", "startup_s", "time_scale", "bound_costs", "profile",
  "storage_gets", "storage_puts", "instance_cost_usd", "request_cost_usd", "storage_held_cost_usd", "cost_usd",
  "autoplace", "pool_acquired", "pool_peak_nodes", "pool_node_s", "pool_cost_usd", "host_cost_usd",
  "shuffle_bytes", "disk_bound_s", "disk_read_bps", "disk_write_bps", NULL};

/* The capacity account's columns, in summary_cols' order. */
static void field_time(csv_out *o, const sl_idle_breakdown *b)
{
  field_num(o, b->capacity_s);
  field_num(o, b->busy_s);
  for (int r = 0; r < SL_IDLE_NREASONS; r++)
    field_num(o, b->idle_s[r]);
}

/* "GROUP=PEAK/BUDGET@GROUP.INDEX;..." (bytes): every group's store in one
 * field, its peak node named as a --fail schedule names it. */
static void format_group_stores(const sl_summary *s, char *buf, size_t n)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int g = 0; g < s->ngroups && len < n; g++) {
    const sl_group_store *gs = &s->groups[g];
    int k = snprintf(buf + len, n - len, "%s%s=%.0f/%.0f@%s.%d", g ? ";" : "", gs->name, round(gs->peak_bytes),
                     isfinite(gs->budget_bytes) ? round(gs->budget_bytes) : 0, gs->name, gs->peak_index);
    len += k > 0 ? (size_t)k : 0;
  }
}

int sl_summary_write(const sl_summary *s, const char *dir, char *err, size_t errlen)
{
  sl_atomic_file tmp;
  char stores[SL_MAX_GROUPS * (SL_NAME_MAX * 2 + 64)];
  if (make_dir(dir, err, errlen) < 0)
    return SL_EIO;
  FILE *f = open_tmp(&tmp, dir, "summary.csv", err, errlen);
  if (!f)
    return SL_EIO;
  csv_out o = {f, 0};
  for (int i = 0; summary_cols[i]; i++)
    field_str(&o, summary_cols[i]);
  end_row(&o);
  char checksum[32];
  snprintf(checksum, sizeof checksum, "%016" PRIx64, s->sink_checksum);
  format_group_stores(s, stores, sizeof stores);
  field_str(&o, s->workload);
  field_str(&o, s->cluster);
  field_str(&o, s->model);
  field_str(&o, s->engine);
  field_num(&o, s->jct_s);
  field_num(&o, s->throughput_rows_s);
  field_num(&o, s->bound_s);
  field_num(&o, s->pct_of_bound);
  field_num(&o, s->bound_throughput_rows_s);
  field_count(&o, s->peak_node_store_bytes);
  field_str(&o, s->peak_store_node_name);
  field_count(&o, s->peak_node_budget_bytes);
  field_str(&o, stores);
  field_count(&o, s->peak_rss_bytes);
  field_count(&o, s->spilled_bytes);
  field_str(&o, sl_spill_time_name(s->spill_time));
  field_i64(&o, s->tasks);
  field_i64(&o, s->retried_tasks);
  field_i64(&o, s->lost_partitions);
  field_i64(&o, s->oom);
  field_i64(&o, s->complete);
  field_str(&o, s->accelerator[0] ? s->accelerator : "none");
  field_str(&o, checksum);
  field_count(&o, s->rows);
  field_count(&o, s->expected_rows);
  field_num(&o, s->first_output_s);
  field_i64(&o, s->checkpoints);
  field_i64(&o, s->rollbacks);
  field_count(&o, s->rows_rolled_back);
  field_i64(&o, s->errored_rows);
  field_num(&o, s->cpu_slots);
  field_num(&o, s->gpu_slots);
  field_str(&o, s->gpu_operators);
  field_str(&o, s->note);
  field_i64(&o, s->faults_applied);
  field_str(&o, s->faults_not_applied);
  field_time(&o, &s->cpu_time);
  field_time(&o, &s->gpu_time);
  field_str(&o, s->output_check[0] ? s->output_check : "none");
  field_num(&o, s->startup_s);
  field_num(&o, s->time_scale);
  field_str(&o, s->bound_costs[0] ? s->bound_costs : "spec");
  field_str(&o, s->profile[0] ? s->profile : "ideal");
  field_count(&o, s->storage_gets);
  field_count(&o, s->storage_puts);
  field_num(&o, s->cost.instances);
  field_num(&o, s->cost.requests);
  field_num(&o, s->cost.held);
  field_num(&o, s->cost.total);
  field_str(&o, s->autoplace);
  field_i64(&o, s->pool_acquired);
  field_i64(&o, s->pool_peak);
  field_num(&o, s->pool_node_s);
  field_num(&o, s->pool_cost_usd);
  field_num(&o, s->host_cost_usd);
  field_count(&o, s->shuffle_bytes);
  field_num(&o, s->disk_bound_s);
  field_count(&o, s->disk_read_bps);
  field_count(&o, s->disk_write_bps);
  end_row(&o);
  return sl_atomic_commit(&tmp, true, err, errlen);
}

int sl_run_dir_begin(const sl_summary *started, const char *dir, char *err, size_t errlen)
{
  /* the new summary goes first: from then on, whatever else is there, the
   * folder says its run is incomplete */
  static const char *stale[] = {"timeline.csv", "tasks.csv", ".timeline.csv.tmp", ".tasks.csv.tmp", NULL};
  char path[1024];
  sl_summary s = *started;
  s.complete = false;
  if (sl_summary_write(&s, dir, err, errlen) < 0)
    return SL_EIO;
  for (int i = 0; stale[i]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, stale[i]);
    if (unlink(path) != 0 && errno != ENOENT) {
      snprintf(err, errlen, "%s: cannot remove the previous run's file: %s", path, strerror(errno));
      return SL_EIO;
    }
  }
  return 0;
}

static void timeline_header(csv_out *o, const sl_recorder *r, int nnode_cols)
{
  char col[3 * SL_NAME_MAX], id[2 * SL_NAME_MAX + 16], node[SL_NAME_MAX + 16];
  static const char *const per_op[] = {"running", "backpressured", "queued"};
  field_str(o, "time_s");
  field_str(o, "rows_done");
  field_str(o, "rows_rolled_back");
  field_str(o, "throughput_rows_s");
  field_str(o, "cluster_store_bytes");
  for (int i = 0; i < r->plan->nops; i++) {
    op_identifier(r->plan, i, id, sizeof id);
    for (int k = 0; k < 3; k++) {
      snprintf(col, sizeof col, "%s_%s", per_op[k], id);
      field_str(o, col);
    }
  }
  for (int n = 0; n < nnode_cols; n++) {
    sl_cluster_node_name(r->cluster, n, node, sizeof node);
    sl_csv_identifier(node, id, sizeof id);
    snprintf(col, sizeof col, "store_bytes_%s", id);
    field_str(o, col);
  }
  field_str(o, "event");
  end_row(o);
}

static int write_timeline(const sl_recorder *r, const char *dir, char *err, size_t errlen)
{
  sl_atomic_file tmp;
  FILE *f = open_tmp(&tmp, dir, "timeline.csv", err, errlen);
  if (!f)
    return SL_EIO;
  csv_out o = {f, 0};
  int nnode_cols = r->cluster->nnodes < SL_MAX_NODE_COLUMNS ? r->cluster->nnodes : SL_MAX_NODE_COLUMNS;
  timeline_header(&o, r, nnode_cols);
  for (int64_t k = 0; k < r->nsamples; k++) {
    const sample *s = &r->samples[k];
    field_num(&o, s->t);
    field_count(&o, s->rows);
    field_count(&o, s->rolled_back);
    field_num(&o, s->rate);
    field_count(&o, s->store);
    for (int i = 0; i < r->plan->nops; i++) {
      field_i64(&o, s->running[i]);
      field_i64(&o, s->waiting[i]);
      field_i64(&o, s->queued[i]);
    }
    for (int n = 0; n < nnode_cols; n++)
      field_count(&o, s->node_store[n]);
    field_str(&o, s->event);
    end_row(&o);
  }
  return sl_atomic_commit(&tmp, true, err, errlen);
}

static const char *status_name(sl_task_status s)
{
  return s == SL_TASK_DONE ? "done" : s == SL_TASK_FAILED ? "failed" : "cancelled";
}

static int write_tasks(const sl_recorder *r, const char *dir, char *err, size_t errlen)
{
  sl_atomic_file tmp;
  FILE *f = open_tmp(&tmp, dir, "tasks.csv", err, errlen);
  if (!f)
    return SL_EIO;
  csv_out o = {f, 0};
  /* node names formatted once per node, not once per row */
  typedef char node_name[SL_NAME_MAX + 16];
  int nnames = r->cluster->nodes ? r->cluster->nnodes : 0;
  node_name *names = nnames > 0 ? malloc(sizeof *names * (size_t)nnames) : NULL;
  for (int n = 0; names && n < nnames; n++)
    sl_cluster_node_name(r->cluster, n, names[n], sizeof names[n]);
  node_name node;
  const char *cols[] = {"task", "origin", "attempt", "op", "op_name", "node", "node_name", "slot", "start_s",
                        "end_s", "rows_in", "bytes_in", "rows_out", "bytes_out", "partitions_out",
                        "status", "speed", "waited_s", "transfer_s", "spread", "fresh", "spill_write_s",
                        "spill_write_bytes", "spill_read_s", "spill_read_bytes", "dispatch_s", "handoff_s",
                        "transfer_bytes", "spread_cv", "noise_cv", NULL};
  for (int i = 0; cols[i]; i++)
    field_str(&o, cols[i]);
  end_row(&o);
  for (int64_t k = 0; k < r->ntasks; k++) {
    const sl_task_record *t = &r->tasks[k];
    field_i64(&o, t->task);
    field_i64(&o, t->origin);
    field_i64(&o, t->attempt);
    field_i64(&o, t->op);
    field_str(&o, r->plan->ops[t->op].name);
    field_i64(&o, t->node);
    if (names && t->node >= 0 && t->node < nnames)
      field_str(&o, names[t->node]);
    else {
      sl_cluster_node_name(r->cluster, t->node, node, sizeof node);
      field_str(&o, node);
    }
    field_i64(&o, t->slot);
    field_num(&o, t->start_s);
    field_num(&o, t->end_s);
    field_i64(&o, t->rows_in);
    field_count(&o, t->bytes_in);
    field_i64(&o, t->rows_out);
    field_count(&o, t->bytes_out);
    field_i64(&o, t->parts_out);
    field_str(&o, status_name(t->status));
    field_num(&o, t->speed);
    field_num(&o, t->waited_s);
    field_num(&o, t->transfer_s);
    field_num(&o, t->spread > 0 ? t->spread : 1);
    field_i64(&o, t->fresh);
    field_num(&o, t->spill_write_s);
    field_count(&o, t->spill_write_bytes);
    field_num(&o, t->spill_read_s);
    field_count(&o, t->spill_read_bytes);
    field_num(&o, t->dispatch_s);
    if (t->handoff_s >= 0)
      field_num(&o, t->handoff_s);
    else
      field_str(&o, ""); /* its finish gave its slot nothing */
    field_count(&o, t->transfer_bytes);
    /* the coefficients its spread factor was drawn with: calibration takes
     * them, and not the factors' sample spread, so that a simulation draws
     * the very same factors */
    field_num(&o, r->plan->ops[t->op].time_spread);
    field_num(&o, r->plan->ops[t->op].time_noise);
    end_row(&o);
  }
  free(names);
  return sl_atomic_commit(&tmp, true, err, errlen);
}

int sl_recorder_write(sl_recorder *r, const sl_summary *s, const char *dir, char *err, size_t errlen)
{
  if (make_dir(dir, err, errlen) < 0)
    return SL_EIO;
  /* the summary goes last: its presence says the other files are whole */
  int rc = write_timeline(r, dir, err, errlen);
  if (rc == 0)
    rc = write_tasks(r, dir, err, errlen);
  if (rc == 0)
    rc = sl_summary_write(s, dir, err, errlen);
  return rc;
}
