#include "record.h"

#include <csv.h>
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

typedef struct {
  double t, rows, rate, store;
  int running[SL_MAX_OPS], waiting[SL_MAX_OPS];
  int64_t queued[SL_MAX_OPS];
  float node_store[SL_MAX_NODE_COLUMNS];
} sample;

struct sl_recorder_s {
  const sl_plan *plan;
  const sl_cluster *cluster;
  bool keep_tasks;
  sl_task_record *tasks;
  int64_t ntasks, tasks_cap;
  sample *samples;
  int64_t nsamples, samples_cap;
};

sl_recorder *sl_recorder_new(const sl_plan *plan, const sl_cluster *cluster, bool keep_tasks)
{
  sl_recorder *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->plan = plan;
  r->cluster = cluster;
  r->keep_tasks = keep_tasks;
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

int sl_recorder_sample(sl_recorder *r, double t, const sl_core *core)
{
  if (r->nsamples == r->samples_cap &&
      grow((void **)&r->samples, &r->samples_cap, sizeof *r->samples) < 0)
    return SL_ENOMEM;
  sample *s = &r->samples[r->nsamples];
  memset(s, 0, sizeof *s);
  sl_core_stats st;
  sl_core_get_stats(core, &st);
  s->t = t;
  s->rows = st.rows_delivered;
  s->store = st.store_bytes;
  if (r->nsamples > 0) {
    const sample *prev = &r->samples[r->nsamples - 1];
    s->rate = t > prev->t ? (s->rows - prev->rows) / (t - prev->t) : prev->rate;
  }
  for (int i = 0; i < r->plan->nops; i++) {
    sl_core_op_stats os;
    sl_core_get_op_stats(core, i, &os);
    s->running[i] = os.running;
    s->waiting[i] = os.waiting;
    s->queued[i] = os.queued_parts;
  }
  for (int n = 0; n < r->cluster->nnodes && n < SL_MAX_NODE_COLUMNS; n++)
    s->node_store[n] = (float)sl_core_node_store(core, n);
  r->nsamples++;
  return 0;
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
  s->peak_store_bytes = st.peak_store_bytes;
  s->store_budget_bytes = st.store_budget_bytes;
  s->spilled_bytes = st.spilled_bytes;
  s->rows = st.rows_delivered;
  s->first_output_s = st.first_output_s;
  s->oom = st.oom;
}

void sl_summary_fill(sl_summary *s, const sl_core *core, const sl_plan *plan, const sl_cluster *cluster,
                     const sl_core_opts *opts, const char *engine, double jct_s, double rows, bool complete,
                     double bound_scale)
{
  memset(s, 0, sizeof *s);
  sl_summary_from_core(s, core);
  snprintf(s->workload, sizeof s->workload, "%s", plan->workload ? plan->workload->name : "");
  snprintf(s->cluster, sizeof s->cluster, "%s", cluster->name);
  snprintf(s->model, sizeof s->model, "%s", sl_core_opts_model_name(opts));
  snprintf(s->engine, sizeof s->engine, "%s", engine);
  s->jct_s = jct_s;
  s->rows = rows;
  s->expected_rows = plan->sink_rows;
  s->throughput_rows_s = jct_s > 0 ? rows / jct_s : 0;
  s->complete = complete;
  sl_bound b;
  if (sl_bound_compute(plan, cluster, &b) == 0 && b.jct_s > 0) {
    s->bound_s = b.jct_s * bound_scale;
    /* a job that stopped early has no completion time to compare */
    s->pct_of_bound = complete && jct_s > 0 ? 100 * s->bound_s / jct_s : 0;
  }
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

static void field_num(csv_out *o, double v)
{
  if (o->col++)
    fputc(',', o->f);
  if (!isfinite(v))
    fputs(v > 0 ? "inf" : v < 0 ? "-inf" : "nan", o->f);
  else if (v == floor(v) && fabs(v) < 1e15)
    fprintf(o->f, "%.0f", v);
  else
    fprintf(o->f, "%.6g", v);
}

static void field_i64(csv_out *o, int64_t v)
{
  if (o->col++)
    fputc(',', o->f);
  fprintf(o->f, "%" PRId64, v);
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
  "peak_store_bytes", "store_budget_bytes", "peak_rss_bytes", "spilled_bytes", "tasks",
  "retried_tasks", "lost_partitions", "oom", "complete", "accelerator", "sink_checksum", "rows",
  "expected_rows", "first_output_s", "checkpoints", "rollbacks", "errored_rows", "note", "faults_applied",
  "faults_not_applied", NULL};

int sl_summary_write(const sl_summary *s, const char *dir, char *err, size_t errlen)
{
  sl_atomic_file tmp;
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
  field_str(&o, s->workload);
  field_str(&o, s->cluster);
  field_str(&o, s->model);
  field_str(&o, s->engine);
  field_num(&o, s->jct_s);
  field_num(&o, s->throughput_rows_s);
  field_num(&o, s->bound_s);
  field_num(&o, s->pct_of_bound);
  field_num(&o, s->peak_store_bytes);
  field_num(&o, s->store_budget_bytes);
  field_num(&o, s->peak_rss_bytes);
  field_num(&o, s->spilled_bytes);
  field_i64(&o, s->tasks);
  field_i64(&o, s->retried_tasks);
  field_i64(&o, s->lost_partitions);
  field_i64(&o, s->oom);
  field_i64(&o, s->complete);
  field_str(&o, s->accelerator[0] ? s->accelerator : "none");
  field_str(&o, checksum);
  field_num(&o, s->rows);
  field_num(&o, s->expected_rows);
  field_num(&o, s->first_output_s);
  field_i64(&o, s->checkpoints);
  field_i64(&o, s->rollbacks);
  field_i64(&o, s->errored_rows);
  field_str(&o, s->note);
  field_i64(&o, s->faults_applied);
  field_str(&o, s->faults_not_applied);
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

static int write_timeline(const sl_recorder *r, const char *dir, char *err, size_t errlen)
{
  sl_atomic_file tmp;
  char col[160];
  FILE *f = open_tmp(&tmp, dir, "timeline.csv", err, errlen);
  if (!f)
    return SL_EIO;
  csv_out o = {f, 0};
  int nnode_cols = r->cluster->nnodes < SL_MAX_NODE_COLUMNS ? r->cluster->nnodes : SL_MAX_NODE_COLUMNS;
  field_str(&o, "time_s");
  field_str(&o, "rows_done");
  field_str(&o, "throughput_rows_s");
  field_str(&o, "store_bytes");
  for (int i = 0; i < r->plan->nops; i++) {
    snprintf(col, sizeof col, "running_%s", r->plan->ops[i].name);
    field_str(&o, col);
    snprintf(col, sizeof col, "backpressured_%s", r->plan->ops[i].name);
    field_str(&o, col);
    snprintf(col, sizeof col, "queued_%s", r->plan->ops[i].name);
    field_str(&o, col);
  }
  for (int n = 0; n < nnode_cols; n++) {
    snprintf(col, sizeof col, "store_node%d", n);
    field_str(&o, col);
  }
  end_row(&o);
  for (int64_t k = 0; k < r->nsamples; k++) {
    const sample *s = &r->samples[k];
    field_num(&o, s->t);
    field_num(&o, s->rows);
    field_num(&o, s->rate);
    field_num(&o, s->store);
    for (int i = 0; i < r->plan->nops; i++) {
      field_i64(&o, s->running[i]);
      field_i64(&o, s->waiting[i]);
      field_i64(&o, s->queued[i]);
    }
    for (int n = 0; n < nnode_cols; n++)
      field_num(&o, s->node_store[n]);
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
  const char *cols[] = {"task", "origin", "attempt", "op", "op_name", "node", "slot", "start_s",
                        "end_s", "rows_in", "bytes_in", "rows_out", "bytes_out", "partitions_out",
                        "status", "speed", "waited_s", NULL};
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
    field_i64(&o, t->slot);
    field_num(&o, t->start_s);
    field_num(&o, t->end_s);
    field_i64(&o, t->rows_in);
    field_num(&o, t->bytes_in);
    field_i64(&o, t->rows_out);
    field_num(&o, t->bytes_out);
    field_i64(&o, t->parts_out);
    field_str(&o, status_name(t->status));
    field_num(&o, t->speed);
    field_num(&o, t->waited_s);
    end_row(&o);
  }
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
