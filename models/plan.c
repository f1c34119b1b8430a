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
  if (s->kind == SL_OP_ALL_TO_ALL && s->merge_factor > 256)
    return plan_fail(err, errlen, "operator '%s' (line %d): merge_factor %d: a merge combines 256 inputs at most",
                     s->name, s->line, s->merge_factor);
  if (!(s->cpu >= 0) || !(s->gpu >= 0) || !(s->time_per_task >= 0) || !(s->time_per_row >= 0) ||
      !(s->time_per_batch >= 0) || !(s->time_per_byte >= 0) || !(s->time_setup >= 0) || !(s->rows_out_per_row >= 0) ||
      !(s->out_row_bytes >= 0) || !(s->inflation >= 0) || !(s->read_bytes_per_row >= 0) || s->batch_size < 0 ||
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

/* Bytes of an output row of map @p s on input rows of @p in_bytes: the
 * rule of sl_workload_out_row_bytes(), one row at a time. */
static double out_bytes(const sl_op_spec *s, double in_bytes)
{
  if (s->inflation > 0)
    return in_bytes * s->inflation;
  return s->out_row_bytes > 0 ? s->out_row_bytes : in_bytes;
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
  o->time_setup = s->time_setup;
  o->time_spread = s->time_spread;
  o->outputs_at_end = s->outputs_at_end != 0;
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
    o->out_row_bytes = out_bytes(s, in_bytes);
    if (s->kind == SL_OP_ALL_TO_ALL) {
      o->tasks = s->tasks; /* reducers, each reading its share of every input */
      o->strategy = s->strategy;
    }
  }
}

/* The merge stage of all_to_all @p s (logical operator @p index), on input
 * rows of @p in_bytes: it moves rows between partitions and changes none.
 * It names no member (nfused 0): the engines run no kernel in it, and
 * take the share of a row from the all_to_all's kernel (first). */
static void pop_merge_stage(sl_pop *o, const sl_op_spec *s, int index, double in_bytes)
{
  memset(o, 0, sizeof(*o));
  snprintf(o->name, sizeof(o->name), "%.*s.merge", (int)sizeof(o->name) - 7, s->name);
  o->first = index;
  o->nfused = 0;
  o->kind = SL_OP_ALL_TO_ALL;
  o->merge_stage = true;
  o->strategy = s->strategy;
  o->merge_inputs = s->merge_factor > 0 ? s->merge_factor : 2;
  o->concurrent_rounds = s->concurrent_rounds > 0 ? s->concurrent_rounds : 2;
  o->map_parallelism = s->map_parallelism;
  o->cpu = s->cpu > 0 ? s->cpu : 1;
  o->accel = s->accel;
  o->time_per_row = s->merge_time_per_byte * in_bytes;
  o->outputs_at_end = true; /* a merged partition is whole only once every input is in */
  o->rows_out_per_row = 1.0;
  o->in_row_bytes = in_bytes;
  o->out_row_bytes = in_bytes;
  o->tasks = s->strategy == SL_SHUFFLE_MERGE ? 1 : 0;
}

/* Adds map @p s to the end of physical operator @p o. Rows reaching @p s per
 * input row of @p o are the product of the expansions so far. */
static void pop_fuse(sl_pop *o, const sl_op_spec *s)
{
  double reach = o->rows_out_per_row, in_bytes = o->out_row_bytes;

  name_append(o->name, sizeof(o->name), "->", s->name);
  o->nfused++;
  o->time_per_task += s->time_per_task;
  o->time_setup += s->time_setup;
  o->outputs_at_end = o->outputs_at_end || s->outputs_at_end;
  o->time_per_row += reach * (s->time_per_row + s->time_per_byte * in_bytes);
  /* Spreads of fused members do not add; the widest is a fair summary. */
  if (s->time_spread > o->time_spread)
    o->time_spread = s->time_spread;
  o->rows_out_per_row *= s->rows_out_per_row;
  o->out_row_bytes = out_bytes(s, in_bytes);
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
    if (s->kind == SL_OP_ALL_TO_ALL && s->strategy != SL_SHUFFLE_SIMPLE) {
      if (out->nops + 1 >= SL_MAX_OPS)
        return plan_fail(err, errlen, "operator '%s' (line %d): no room for its merge stage (%d physical operators at most)",
                         s->name, s->line, SL_MAX_OPS);
      pop_merge_stage(&out->ops[out->nops++], s, i, in_bytes);
    }
    pop_start(&out->ops[out->nops++], s, i, in_bytes);
  }

  double alpha = 1.0;
  for (int i = 0; i < out->nops; i++) {
    alpha *= out->ops[i].rows_out_per_row;
    out->ops[i].alpha_rows = alpha;
  }
  out->source_rows = out->ops[0].tasks * out->ops[0].rows_per_task;
  out->source_from_disk = w->ops[0].read_from_disk != 0;
  out->sink_to_disk = w->ops[w->nops - 1].kind == SL_OP_SINK && w->ops[w->nops - 1].write_to == SL_WRITE_DISK;
  out->sink_to_storage = w->ops[w->nops - 1].kind == SL_OP_SINK && w->ops[w->nops - 1].write_to == SL_WRITE_STORAGE;
  out->sink_rows = (double)out->source_rows * alpha;
  return 0;
}

void sl_plan_scale_time(sl_plan *p, double factor)
{
  for (int i = 0; i < p->nops; i++) {
    sl_pop *o = &p->ops[i];
    o->time_per_task *= factor;
    o->time_per_row *= factor;
    o->time_per_batch *= factor;
    o->time_setup *= factor;
  }
}

double sl_plan_task_time(const sl_pop *op, double rows)
{
  double batches = 0.0;

  if (rows > 0)
    /* batch_size 0 means "any": the whole task is one batch. */
    batches = op->batch_size > 0 ? ceil(rows / op->batch_size) : 1.0;
  return op->time_per_task + rows * op->time_per_row + batches * op->time_per_batch;
}

double sl_plan_amortising_rows(double fixed_s, double time_per_row)
{
  if (!(fixed_s > 0))
    return 0;
  return time_per_row > 0 ? ceil(10 * fixed_s / time_per_row) : INFINITY;
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

double sl_plan_largest_task_rows(const sl_plan *p, int i)
{
  const sl_pop *o = &p->ops[i];
  if (o->kind == SL_OP_SOURCE)
    return (double)o->rows_per_task;
  double rows = sl_plan_task_out_rows(&p->ops[i - 1], sl_plan_largest_task_rows(p, i - 1));
  if (p->target_partition_bytes > 0 && o->in_row_bytes > 0)
    rows = fmax(rows, ceil(p->target_partition_bytes / o->in_row_bytes));
  rows = fmax(rows, (double)o->batch_size);
  double total = sl_plan_rows_in(p, i);
  if (total >= 1.0 && rows > total)
    rows = total;
  return rows < 1.0 ? 1.0 : rows;
}

double sl_plan_least_work_per_source_row(const sl_plan *p, int i)
{
  const sl_pop *o = &p->ops[i];
  double rows = sl_plan_largest_task_rows(p, i);
  /* a batch costs its time whether full or not: full ones cost least */
  double batches = o->batch_size > 0 ? rows / o->batch_size : 1.0;
  return (o->time_per_task + rows * o->time_per_row + batches * o->time_per_batch) * alpha_in(p, i) / rows;
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

bool sl_plan_batch_gains(int64_t rows, int64_t more, int batch)
{
  if (rows >= batch)
    return false;
  double now = (double)rows / ceil((double)rows / batch);
  double with = (double)(rows + more) / ceil((double)(rows + more) / batch);
  return with > now;
}

/* Whether a task of @p o holding @p rows rows in @p n partitions takes one
 * more of @p more rows, under @p rule: the engines' take rule. */
static bool takes_more(const sl_pop *o, const sl_sizing_rule *rule, int64_t rows, int n, int64_t more)
{
  if (n >= 256)
    return false;
  if (o->kind == SL_OP_MAP_BATCHES && o->batch_size > 0)
    return rule->gather_batches && sl_plan_batch_gains(rows, more, o->batch_size);
  return rule->gather_maps && (double)(rows + more) * o->in_row_bytes <= rule->target_bytes + 1e-9;
}

/* Partitions simulated per operator: enough for the pattern of cuts to
 * repeat many times, few enough for a plan of a billion rows. */
enum { SL_SIZING_PARTS = 20000 };

/* Takes partitions in the order one upstream task after another emits
 * them (cuts of @p cut rows, then the rest of its @p per_task rows), as
 * the take rule gathers them, over at most SL_SIZING_PARTS partitions of
 * the @p total rows; fills the averages and extremes of @p z. */
static void gather_pattern(const sl_pop *o, const sl_sizing_rule *rule, int64_t per_task, int64_t cut, double total,
                           sl_task_sizing *z)
{
  int64_t left_in_task = per_task, rows = 0, task_rows = 0, full_rows = 0;
  int n = 0, tasks = 0, parts = 0, full_parts = 0;
  z->up_task_rows = (double)per_task;
  z->rows_min = INFINITY;
  z->rows_max = 0;
  /* whole upstream tasks only, so that the pattern is not cut short */
  while ((parts < SL_SIZING_PARTS || left_in_task != per_task) && (double)rows < total) {
    int64_t p = left_in_task < cut ? left_in_task : cut;
    left_in_task = left_in_task > p ? left_in_task - p : per_task;
    if (n > 0 && !takes_more(o, rule, task_rows, n, p)) {
      tasks++;
      full_rows += task_rows;
      full_parts += n;
      z->rows_min = fmin(z->rows_min, (double)task_rows);
      z->rows_max = fmax(z->rows_max, (double)task_rows);
      n = 0;
      task_rows = 0;
    }
    n++;
    task_rows += p;
    rows += p;
    parts++;
  }
  /* the last task counts when it would take no more, or when it is the only one */
  int64_t next = left_in_task < cut ? left_in_task : cut;
  if (tasks == 0 || !takes_more(o, rule, task_rows, n, next)) {
    tasks++;
    full_rows += task_rows;
    full_parts += n;
    z->rows_min = fmin(z->rows_min, (double)task_rows);
    z->rows_max = fmax(z->rows_max, (double)task_rows);
  }
  z->rows = (double)full_rows / tasks;
  z->parts = (double)full_parts / tasks;
  z->part_rows = (double)rows / parts;
  z->tasks = ceil(total / z->rows - 1e-9);
  z->tasks_max = ceil(total / z->part_rows - 1e-9);
}

void sl_plan_task_sizing(const sl_plan *p, int i, const sl_sizing_rule *rule, sl_task_sizing *out)
{
  const sl_pop *o = &p->ops[i];
  memset(out, 0, sizeof *out);
  double total = sl_plan_rows_in(p, i);
  if (o->kind == SL_OP_SOURCE || o->kind == SL_OP_ALL_TO_ALL) {
    /* splits, or reducers each reading its share of everything */
    out->tasks = out->tasks_max = fmax(1, (double)o->tasks);
    out->rows = out->rows_min = out->rows_max = o->kind == SL_OP_SOURCE ? (double)o->rows_per_task : total / out->tasks;
    out->parts = 1;
    return;
  }
  sl_task_sizing up;
  sl_plan_task_sizing(p, i - 1, rule, &up);
  int64_t per_task = (int64_t)fmax(1, llround(sl_plan_task_out_rows(&p->ops[i - 1], up.rows)));
  int64_t cut = sl_plan_rows_per_part(&p->ops[i - 1], rule->target_bytes);
  out->cut_rows = cut == INT64_MAX ? INFINITY : (double)cut;
  gather_pattern(o, rule, per_task, cut < per_task ? cut : per_task, fmax(1, total), out);
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
  if (p->profile[0] && strcmp(p->profile, "ideal") != 0)
    fprintf(f, "costs include the %s profile's (a system's own costs per task, partition and byte)\n", p->profile);
  if (c)
    fprintf(f, "cluster %s: %d node%s, %g CPU slots, %g GPU slots\n", c->name, c->nnodes,
            c->nnodes == 1 ? "" : "s", sl_cluster_total(c, false), sl_cluster_total(c, true));
}

/* Rows per task as a reader wants them: one number, or the range. */
static void format_rows(const sl_task_sizing *z, char *buf, size_t n)
{
  if (z->rows_max - z->rows_min < 0.5)
    snprintf(buf, n, "%.6g rows", z->rows);
  else
    snprintf(buf, n, "%.6g-%.6g rows (%.4g on average)", z->rows_min, z->rows_max, z->rows);
}

/* Why an operator's tasks have the size the table gives, when that is not
 * plain: partitions gathered into a task, or a count only the run decides. */
static void print_sizing_note(const sl_plan *p, int i, const sl_task_sizing *z, FILE *f)
{
  const sl_pop *o = &p->ops[i], *up = &p->ops[i - 1];
  char part[32], rows[96];
  bool batches = o->kind == SL_OP_MAP_BATCHES && o->batch_size > 0;
  format_bytes(p->target_partition_bytes, part, sizeof(part));
  format_rows(z, rows, sizeof rows);
  fprintf(f, "  %s: takes whole partitions of %s, ", o->name, up->name);
  if (!isfinite(z->cut_rows))
    fprintf(f, "one per %s task (%.6g rows)", up->name, z->up_task_rows);
  else if (z->up_task_rows <= z->cut_rows)
    fprintf(f, "%.6g rows: all each %s task emits (the %s target would take %.6g)", z->up_task_rows, up->name,
            part, z->cut_rows);
  else if (fmod(z->up_task_rows, z->cut_rows) > 0)
    fprintf(f, "%.6g rows (the %s target) and the rest of each %s task's %.6g: %.4g on average", z->cut_rows, part,
            up->name, z->up_task_rows, z->part_rows);
  else
    fprintf(f, "%.6g rows (the %s target)", z->cut_rows, part);
  if (batches && z->parts > 1)
    fprintf(f, ";\n    it waits for enough of them to come close to whole batches of %d: %s,\n"
               "    about %.0f tasks (the last may take fewer)\n", o->batch_size, rows, z->tasks);
  else if (batches)
    fprintf(f, ";\n    one per task, whatever its batch of %d: %s, about %.0f tasks\n", o->batch_size, rows, z->tasks);
  else
    fprintf(f, ";\n    it gathers those queued when it starts, up to the %s target (%s): the count is decided\n"
               "    at run time, from %.0f tasks (every task full) to %.0f (one partition each)\n",
            part, rows, z->tasks, z->tasks_max);
}

/* Whether operator @p i's tasks need a note: they gather partitions, or a
 * map_batches operator's tasks are not one batch each. */
static bool needs_note(const sl_pop *o, const sl_task_sizing *z)
{
  if (o->kind == SL_OP_SOURCE || o->kind == SL_OP_ALL_TO_ALL)
    return false;
  bool batches = o->kind == SL_OP_MAP_BATCHES && o->batch_size > 0;
  return z->parts > 1 + 1e-9 || (batches && (z->rows_min != o->batch_size || z->rows_max != o->batch_size));
}

void sl_plan_print_sized(const sl_plan *p, const sl_cluster *c, const sl_sizing_rule *rule, const char *model,
                         FILE *f)
{
  if (!p || !f)
    return;
  if (!rule) {
    sl_plan_print(p, c, f);
    return;
  }
  print_header(p, c, f);
  fprintf(f, "model %s: tasks as its engines size them (--model for another)\n", model ? model : "?");
  fprintf(f, "%-3s %-32s %-12s %-14s %-5s %10s %10s %10s %14s\n", "#", "name", "kind", "resources", "fused", "task_s",
          "rows/task", "row_size", "tasks");
  sl_task_sizing z[SL_MAX_OPS];
  bool notes = false;
  for (int i = 0; i < p->nops; i++) {
    const sl_pop *o = &p->ops[i];
    char res[SL_MAX_ACCELS * SL_NAME_MAX + 48], size[32], tasks[48];
    sl_plan_task_sizing(p, i, rule, &z[i]);
    sl_resources_format(o->cpu, o->gpu, &o->accel, res, sizeof(res));
    format_bytes(o->out_row_bytes, size, sizeof(size));
    bool range = z[i].tasks_max > z[i].tasks && !(o->kind == SL_OP_MAP_BATCHES && o->batch_size > 0);
    if (range)
      snprintf(tasks, sizeof tasks, "%.0f-%.0f*", z[i].tasks, z[i].tasks_max);
    else
      snprintf(tasks, sizeof tasks, "%.0f%s", z[i].tasks, needs_note(o, &z[i]) ? "*" : "");
    notes |= needs_note(o, &z[i]);
    fprintf(f, "%-3d %-32s %-12s %-14s %-5d %10.4g %10.4g %10s %14s\n", i, o->name, sl_op_kind_name(o->kind), res,
            o->nfused, sl_plan_task_time(o, z[i].rows), z[i].rows, size, tasks);
  }
  if (!notes)
    return;
  fprintf(f, "* how the tasks are sized:\n");
  for (int i = 1; i < p->nops; i++)
    if (needs_note(&p->ops[i], &z[i]))
      print_sizing_note(p, i, &z[i], f);
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

void sl_plan_storage_use(const sl_plan *p, const sl_cluster *c, double *gets, double *puts, double *read_bytes,
                         double *written_bytes)
{
  *gets = *puts = *read_bytes = *written_bytes = 0;
  const sl_pop *src = &p->ops[0];
  if (src->kind == SL_OP_SOURCE && !p->source_from_disk && src->read_bytes_per_row > 0) {
    *gets = (double)src->tasks * sl_storage_requests(c, (double)src->rows_per_task * src->read_bytes_per_row, false);
    *read_bytes = (double)p->source_rows * src->read_bytes_per_row;
  }
  const sl_pop *last = &p->ops[p->nops - 1];
  double out = p->sink_rows * last->out_row_bytes;
  if (p->sink_to_storage && out > 0) {
    double target = p->target_partition_bytes > 0 && isfinite(p->target_partition_bytes) ? p->target_partition_bytes : out;
    double parts = ceil(out / target);
    *puts = parts * sl_storage_requests(c, out / parts, true);
    *written_bytes = out;
  }
}
