/**
 * @file plan.c
 * @brief Logical operators fused into physical ones, with aggregated costs.
 *
 * A physical operator's cost is kept per input row of the physical operator,
 * so the engines and the bounds need only sl_plan_task_time(): everything a
 * fused member does per row (its own per-row and per-byte costs, scaled by
 * how many rows reach it) is folded into one time_per_row.
 */
#include "plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "error.h"

/* Writes a message into the caller's buffer; the buffer may be NULL. */
static int plan_fail(char *err, size_t errlen, const char *fmt, ...)
{
  if (err && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return SL_EINVAL;
}

/* Appends sep and name to a fused name; a name too long for the buffer ends
 * in "..." so a reader sees it was cut. */
static void name_append(char *dst, size_t cap, const char *sep, const char *name)
{
  size_t used = strlen(dst);

  if (used + strlen(sep) + strlen(name) < cap) {
    strcat(dst, sep);
    strcat(dst, name);
    return;
  }
  if (used >= 3 && strcmp(dst + used - 3, "...") == 0)
    return;
  size_t at = used + 4 <= cap ? used : cap - 4;
  memcpy(dst + at, "...", 4);
}

static bool spec_has_own_batching(const sl_op_spec *s)
{
  return s->batch_size > 0 || s->time_per_batch > 0 || s->concurrency > 0;
}

static bool pop_has_own_batching(const sl_pop *o)
{
  return o->batch_size > 0 || o->time_per_batch > 0 || o->concurrency > 0;
}

/* Ray Data fuses a map into its producer when both can run in one task:
 * the same resource shape and no batching or concurrency of their own. */
static bool can_fuse(const sl_pop *cur, const sl_op_spec *next, const sl_plan_opts *opts)
{
  if (opts && opts->no_fusion)
    return false;
  if (next->kind != SL_OP_MAP)
    return false;
  if (cur->kind != SL_OP_SOURCE && cur->kind != SL_OP_MAP)
    return false;
  if (cur->cpu != next->cpu || cur->gpu != next->gpu)
    return false;
  /* a fused task runs on one node: both members must accept it */
  if (!sl_accel_set_equal(&cur->accel, &next->accel))
    return false;
  return !pop_has_own_batching(cur) && !spec_has_own_batching(next);
}

static int check_op(const sl_workload *w, int i, char *err, size_t errlen)
{
  const sl_op_spec *s = &w->ops[i];

  if (i == 0 && s->kind != SL_OP_SOURCE)
    return plan_fail(err, errlen, "operator '%s' (line %d): the pipeline must start with a source",
                     s->name, s->line);
  if (i > 0 && s->kind == SL_OP_SOURCE)
    return plan_fail(err, errlen, "operator '%s' (line %d): only the first operator may be a source",
                     s->name, s->line);
  if (s->kind == SL_OP_SINK && i != w->nops - 1)
    return plan_fail(err, errlen, "operator '%s' (line %d): a sink must be the last operator",
                     s->name, s->line);
  if ((int)s->kind < SL_OP_SOURCE || s->kind > SL_OP_SINK)
    return plan_fail(err, errlen, "operator '%s' (line %d): unknown kind %d", s->name, s->line,
                     (int)s->kind);
  if (s->kind == SL_OP_SOURCE && (s->tasks <= 0 || s->rows_per_task <= 0))
    return plan_fail(err, errlen, "operator '%s' (line %d): a source needs tasks and rows_per_task > 0",
                     s->name, s->line);
  if (!(s->cpu >= 0) || !(s->gpu >= 0) || !(s->time_per_task >= 0) || !(s->time_per_row >= 0) ||
      !(s->time_per_batch >= 0) || !(s->time_per_byte >= 0) || !(s->rows_out_per_row >= 0) ||
      !(s->out_row_bytes >= 0) || !(s->read_bytes_per_row >= 0) || s->batch_size < 0 ||
      s->concurrency < 0)
    return plan_fail(err, errlen, "operator '%s' (line %d): requests, costs and sizes must be >= 0",
                     s->name, s->line);
  return 0;
}

static int check_workload(const sl_workload *w, char *err, size_t errlen)
{
  if (w->nops < 1 || w->nops > SL_MAX_OPS)
    return plan_fail(err, errlen, "workload '%s': %d operators (expected 1 to %d)", w->name,
                     w->nops, SL_MAX_OPS);
  if (w->nops == 1 && w->ops[0].kind != SL_OP_SOURCE)
    return plan_fail(err, errlen, "workload '%s': the pipeline must start with a source", w->name);
  for (int i = 0; i < w->nops; i++) {
    int rc = check_op(w, i, err, errlen);
    if (rc)
      return rc;
  }
  return 0;
}

/* Starts a physical operator with logical operator @p s as its first member.
 * @p in_bytes is the row size flowing in (0 for a source). */
static void pop_start(sl_pop *o, const sl_op_spec *s, int index, double in_bytes)
{
  memset(o, 0, sizeof(*o));
  snprintf(o->name, sizeof(o->name), "%.*s", (int)sizeof(o->name) - 1, s->name);
  o->first = index;
  o->nfused = 1;
  o->kind = s->kind;
  o->cpu = s->cpu;
  o->gpu = s->gpu;
  o->time_per_task = s->time_per_task;
  o->time_per_batch = s->time_per_batch;
  o->time_spread = s->time_spread;
  o->batch_size = s->batch_size;
  o->concurrency = s->concurrency;
  o->accel = s->accel;
  o->in_row_bytes = in_bytes;
  if (s->kind == SL_OP_SOURCE) {
    /* A source's "input rows" are the rows it generates; what it fetches
     * from storage is the per-byte input of each of them. */
    o->time_per_row = s->time_per_row + s->time_per_byte * s->read_bytes_per_row;
    o->rows_out_per_row = 1.0;
    o->out_row_bytes = s->out_row_bytes;
    o->tasks = s->tasks;
    o->rows_per_task = s->rows_per_task;
    o->read_bytes_per_row = s->read_bytes_per_row;
  } else {
    o->time_per_row = s->time_per_row + s->time_per_byte * in_bytes;
    o->rows_out_per_row = s->rows_out_per_row;
    o->out_row_bytes = s->out_row_bytes > 0 ? s->out_row_bytes : in_bytes;
    if (s->kind == SL_OP_ALL_TO_ALL)
      o->tasks = s->tasks; /* reducers, each reading its share of every input */
  }
}

/* Adds map @p s to the end of physical operator @p o. Rows reaching @p s per
 * input row of @p o are the product of the expansions so far. */
static void pop_fuse(sl_pop *o, const sl_op_spec *s)
{
  double reach = o->rows_out_per_row, in_bytes = o->out_row_bytes;

  name_append(o->name, sizeof(o->name), "->", s->name);
  o->nfused++;
  o->time_per_task += s->time_per_task;
  o->time_per_row += reach * (s->time_per_row + s->time_per_byte * in_bytes);
  /* Spreads of fused members do not add; the widest is a fair summary. */
  if (s->time_spread > o->time_spread)
    o->time_spread = s->time_spread;
  o->rows_out_per_row *= s->rows_out_per_row;
  o->out_row_bytes = s->out_row_bytes > 0 ? s->out_row_bytes : in_bytes;
}

int sl_plan_build(sl_plan *out, const sl_workload *w, const sl_plan_opts *opts, char *err,
                  size_t errlen)
{
  if (!out || !w)
    return plan_fail(err, errlen, "sl_plan_build: NULL plan or workload");
  int rc = check_workload(w, err, errlen);
  if (rc)
    return rc;

  memset(out, 0, sizeof(*out));
  out->workload = w;
  out->target_partition_bytes = w->target_partition_bytes;
  int nlogical = w->ops[w->nops - 1].kind == SL_OP_SINK ? w->nops - 1 : w->nops;

  for (int i = 0; i < nlogical; i++) {
    const sl_op_spec *s = &w->ops[i];
    if (out->nops > 0 && can_fuse(&out->ops[out->nops - 1], s, opts)) {
      pop_fuse(&out->ops[out->nops - 1], s);
      continue;
    }
    double in_bytes = out->nops > 0 ? out->ops[out->nops - 1].out_row_bytes : 0.0;
    pop_start(&out->ops[out->nops++], s, i, in_bytes);
  }

  double alpha = 1.0;
  for (int i = 0; i < out->nops; i++) {
    alpha *= out->ops[i].rows_out_per_row;
    out->ops[i].alpha_rows = alpha;
  }
  out->source_rows = out->ops[0].tasks * out->ops[0].rows_per_task;
  out->sink_rows = (double)out->source_rows * alpha;
  return 0;
}

double sl_plan_task_time(const sl_pop *op, double rows)
{
  double batches = 0.0;

  if (rows > 0)
    /* batch_size 0 means "any": the whole task is one batch. */
    batches = op->batch_size > 0 ? ceil(rows / op->batch_size) : 1.0;
  return op->time_per_task + rows * op->time_per_row + batches * op->time_per_batch;
}

int64_t sl_plan_rows_per_part(const sl_pop *op, double target_bytes)
{
  if (!isfinite(target_bytes) || !(target_bytes > 0))
    return INT64_MAX;
  double rows = ceil(target_bytes / fmax(op->out_row_bytes, 1));
  return rows >= (double)INT64_MAX ? INT64_MAX : (int64_t)fmax(1, rows);
}

double sl_plan_task_out_rows(const sl_pop *op, double rows)
{
  return rows * op->rows_out_per_row;
}

/* Rows per source row flowing into operator @p i. */
static double alpha_in(const sl_plan *p, int i)
{
  return i == 0 ? 1.0 : p->ops[i - 1].alpha_rows;
}

double sl_plan_rows_in(const sl_plan *p, int i)
{
  return (double)p->source_rows * alpha_in(p, i);
}

double sl_plan_typical_rows(const sl_plan *p, int i)
{
  const sl_pop *o = &p->ops[i];

  if (o->kind == SL_OP_SOURCE)
    return (double)o->rows_per_task;
  if (o->kind == SL_OP_MAP_BATCHES && o->batch_size > 0)
    return o->batch_size;

  double upstream = sl_plan_task_out_rows(&p->ops[i - 1], sl_plan_typical_rows(p, i - 1));
  double rows = upstream;
  if (p->target_partition_bytes > 0 && o->in_row_bytes > 0) {
    rows = ceil(p->target_partition_bytes / o->in_row_bytes);
    /* A partition never spans producer tasks unless they emit less than a
     * row each, in which case the scheduler coalesces them. */
    if (upstream >= 1.0 && rows > upstream)
      rows = upstream;
  }
  double total = sl_plan_rows_in(p, i);
  if (total >= 1.0 && rows > total)
    rows = total;
  return rows < 1.0 ? 1.0 : rows;
}

double sl_plan_expected_tasks(const sl_plan *p, int i)
{
  if (p->ops[i].kind == SL_OP_SOURCE)
    return (double)p->ops[i].tasks;
  double total = sl_plan_rows_in(p, i);
  return total > 0 ? ceil(total / sl_plan_typical_rows(p, i) - 1e-9) : 0.0;
}

double sl_plan_work_per_source_row(const sl_plan *p, int i)
{
  double rows = sl_plan_typical_rows(p, i);
  return sl_plan_task_time(&p->ops[i], rows) * alpha_in(p, i) / rows;
}

void sl_resources_format(double cpu, double gpu, const sl_accel_set *accel, char *buf, size_t len)
{
  char pin[SL_MAX_ACCELS * SL_NAME_MAX + 2] = "";
  if (accel->n > 0) {
    pin[0] = '@';
    sl_accel_set_format(accel, pin + 1, sizeof pin - 1);
  }
  if (gpu > 0 && cpu > 0)
    snprintf(buf, len, "%g GPU + %g CPU%s", gpu, cpu, pin);
  else if (gpu > 0)
    snprintf(buf, len, "%g GPU%s", gpu, pin);
  else if (cpu > 0)
    snprintf(buf, len, "%g CPU%s", cpu, pin);
  else
    snprintf(buf, len, "none");
}

/* Decimal units, as specs write sizes ("100MB"). */
static void format_bytes(double b, char *buf, size_t len)
{
  static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;

  while (b >= 1000.0 && u < 5) {
    b /= 1000.0;
    u++;
  }
  snprintf(buf, len, "%.3g %s", b, unit[u]);
}

static void print_header(const sl_plan *p, const sl_cluster *c, FILE *f)
{
  char part[32];
  const char *name = p->workload ? p->workload->name : "?";

  format_bytes(p->target_partition_bytes, part, sizeof(part));
  /* rows are counted, not measured: 1000000, not 1e+06; a filter's 1-in-K may leave a fraction */
  fprintf(f, "workload %s: %d physical operator%s, target partition %s, %lld source rows, %.*f sink rows\n",
          name, p->nops, p->nops == 1 ? "" : "s", part, (long long)p->source_rows,
          p->sink_rows == floor(p->sink_rows) ? 0 : 2, p->sink_rows);
  if (c)
    fprintf(f, "cluster %s: %d node%s, %g CPU slots, %g GPU slots\n", c->name, c->nnodes,
            c->nnodes == 1 ? "" : "s", sl_cluster_total(c, false), sl_cluster_total(c, true));
}

void sl_plan_print(const sl_plan *p, const sl_cluster *c, FILE *f)
{
  if (!p || !f)
    return;
  print_header(p, c, f);
  fprintf(f, "%-3s %-32s %-12s %-14s %-5s %10s %10s %10s %10s\n", "#", "name", "kind",
          "resources", "fused", "task_s", "rows/task", "row_size", "tasks");
  for (int i = 0; i < p->nops; i++) {
    const sl_pop *o = &p->ops[i];
    char res[SL_MAX_ACCELS * SL_NAME_MAX + 48], size[32];
    double rows = sl_plan_typical_rows(p, i);

    sl_resources_format(o->cpu, o->gpu, &o->accel, res, sizeof(res));
    format_bytes(o->out_row_bytes, size, sizeof(size));
    fprintf(f, "%-3d %-32s %-12s %-14s %-5d %10.4g %10.4g %10s %10.6g\n", i, o->name,
            sl_op_kind_name(o->kind), res, o->nfused, sl_plan_task_time(o, rows), rows, size,
            sl_plan_expected_tasks(p, i));
  }
}
