/*
 * AutoOrder: enumerate the orders of every reorder group, bound each one,
 * keep them all sorted best first.
 *
 * A group is a run of adjacent maps with one group name. Its operators
 * with keep_position stay put; the others take the remaining positions in
 * every order (m! of them for m that move). Groups multiply, so the total
 * is capped (SL_REORDER_MAX_ORDERS): each order costs a plan and one LP.
 */
#include "reorder.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "error.h"
#include "plan.h"

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
  if (!err || !errlen)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static bool in_group(const sl_op_spec *op)
{
  return op->reorder_group[0] != '\0';
}

bool sl_reorder_has_groups(const sl_workload *w)
{
  for (int i = 0; i < w->nops; i++)
    if (in_group(&w->ops[i]))
      return true;
  return false;
}

/* The end (exclusive) of the run of operators of @p start's group. */
static int group_end(const sl_workload *w, int start)
{
  int e = start + 1;
  while (e < w->nops && strcmp(w->ops[e].reorder_group, w->ops[start].reorder_group) == 0)
    e++;
  return e;
}

int sl_reorder_check(const sl_workload *w, char *err, size_t errlen)
{
  for (int i = 0; i < w->nops; i++) {
    const sl_op_spec *op = &w->ops[i];
    if (!in_group(op))
      continue;
    if (op->kind != SL_OP_MAP && op->kind != SL_OP_MAP_BATCHES) {
      say(err, errlen, "operator '%s' is a %s in reorder group '%s': only maps and map_batches reorder", op->name,
          sl_op_kind_name(op->kind), op->reorder_group);
      return i;
    }
    int end = group_end(w, i);
    if (i > 0 && strcmp(w->ops[i - 1].reorder_group, op->reorder_group) == 0)
      continue; /* inside a run already checked */
    for (int j = end; j < w->nops; j++)
      if (strcmp(w->ops[j].reorder_group, op->reorder_group) == 0) {
        say(err, errlen, "operator '%s' is in reorder group '%s', but '%s' before it is not: a group's operators "
            "must be next to each other", w->ops[j].name, op->reorder_group, w->ops[end].name);
        return j;
      }
    if (end - i < 2) {
      say(err, errlen, "reorder group '%s' has only operator '%s': a group needs two operators next to each other",
          op->reorder_group, op->name);
      return i;
    }
  }
  return -1;
}

double sl_reorder_inflation(const sl_workload *w, int i)
{
  if (i <= 0 || i >= w->nops)
    return 1;
  double in = sl_workload_out_row_bytes(w, i - 1), out = sl_workload_out_row_bytes(w, i);
  double rows = w->ops[i].rows_out_per_row > 0 ? w->ops[i].rows_out_per_row : 1;
  return in > 0 ? rows * out / in : rows;
}

void sl_workload_reorder(const sl_workload *w, const int *order, sl_workload *out)
{
  *out = *w;
  for (int k = 0; k < w->nops; k++)
    out->ops[k] = w->ops[order[k]];
}

void sl_reorder_format(const sl_workload *w, const int *order, char *buf, size_t len)
{
  size_t used = 0;
  if (!len)
    return;
  buf[0] = '\0';
  for (int k = 0; k < w->nops && used < len; k++) {
    const sl_op_spec *op = &w->ops[order[k]];
    if (op->kind == SL_OP_SINK)
      continue;
    int n = snprintf(buf + used, len - used, "%s%s", k ? " > " : "", op->name);
    if (n < 0)
      break;
    used += (size_t)n;
  }
}

/* ------------------------------------------------------------ enumeration */

/* Next lexicographic permutation of @p a[0..n); false after the last. */
static bool next_permutation(int *a, int n)
{
  int i = n - 2;
  while (i >= 0 && a[i] >= a[i + 1])
    i--;
  if (i < 0)
    return false;
  int j = n - 1;
  while (a[j] <= a[i])
    j--;
  int t = a[i];
  a[i] = a[j];
  a[j] = t;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) {
    t = a[l];
    a[l] = a[r];
    a[r] = t;
  }
  return true;
}

/* The movable positions of every group, and their current permutation:
 * an odometer over the groups, each wheel a permutation. */
typedef struct {
  int ngroups;
  int pos[SL_MAX_OPS][SL_MAX_OPS]; /* pos[g][k]: the k-th movable position of group g */
  int perm[SL_MAX_OPS][SL_MAX_OPS]; /* perm[g][k]: which movable operator takes it (an index into pos[g]) */
  int m[SL_MAX_OPS];                /* movable operators of group g */
} odometer;

static void odometer_init(odometer *o, const sl_workload *w)
{
  memset(o, 0, sizeof *o);
  for (int i = 0; i < w->nops;) {
    if (!in_group(&w->ops[i])) {
      i++;
      continue;
    }
    int end = group_end(w, i), g = o->ngroups++;
    for (int j = i; j < end; j++)
      if (!w->ops[j].keep_position) {
        o->perm[g][o->m[g]] = o->m[g];
        o->pos[g][o->m[g]++] = j;
      }
    i = end;
  }
}

static void odometer_order(const odometer *o, int nops, int *order)
{
  for (int k = 0; k < nops; k++)
    order[k] = k;
  for (int g = 0; g < o->ngroups; g++)
    for (int k = 0; k < o->m[g]; k++)
      order[o->pos[g][k]] = o->pos[g][o->perm[g][k]];
}

/* Turns the odometer one step; false once every order was seen. */
static bool odometer_next(odometer *o)
{
  for (int g = o->ngroups - 1; g >= 0; g--) {
    if (next_permutation(o->perm[g], o->m[g]))
      return true;
    for (int k = 0; k < o->m[g]; k++) /* wrapped: back to the first order, carry on */
      o->perm[g][k] = k;
  }
  return false;
}

/* How many orders the groups make; INFINITY past the cap. */
static double count_orders(const odometer *o, int *worst)
{
  double n = 1;
  *worst = -1;
  for (int g = 0; g < o->ngroups; g++)
    for (int k = 2; k <= o->m[g]; k++) {
      n *= k;
      if (n > SL_REORDER_MAX_ORDERS && *worst < 0)
        *worst = o->pos[g][0];
    }
  return n;
}

/* --------------------------------------------------------------- bounding */

static int bound_order(const sl_workload *w, const sl_cluster *c, sl_workload *scratch, sl_plan *plan, sl_order *o)
{
  char err[256];
  sl_workload_reorder(w, o->order, scratch);
  sl_plan_opts po = {0};
  o->jct_s = INFINITY;
  o->throughput_rows_s = 0;
  o->read_bytes = 0;
  int rc = sl_plan_build(plan, scratch, &po, err, sizeof err);
  if (rc < 0)
    return rc;
  /* every operator's input, fused or not: what the order changes */
  double rows = (double)sl_workload_source_rows(scratch);
  for (int i = 1; i < scratch->nops && scratch->ops[i].kind != SL_OP_SINK; i++) {
    o->read_bytes += rows * sl_workload_out_row_bytes(scratch, i - 1);
    rows *= scratch->ops[i].rows_out_per_row > 0 ? scratch->ops[i].rows_out_per_row : 1;
  }
  sl_bound b;
  rc = sl_bound_limits(plan, c, &b);
  if (rc < 0)
    return rc;
  o->jct_s = b.jct_s;
  o->throughput_rows_s = b.throughput_rows_s;
  return 0;
}

/* Best first: the lower bound, then fewer bytes read, then the spec's
 * order and those nearest it in enumeration. Bounds within a millionth
 * are one bound: LP round-off must not decide. */
static int order_cmp(const void *pa, const void *pb)
{
  const sl_order *a = pa, *b = pb;
  double tol = 1e-6 * fmax(1, fmin(a->jct_s, b->jct_s));
  if (isfinite(a->jct_s) != isfinite(b->jct_s))
    return isfinite(a->jct_s) ? -1 : 1;
  if (isfinite(a->jct_s) && fabs(a->jct_s - b->jct_s) > tol)
    return a->jct_s < b->jct_s ? -1 : 1;
  if (fabs(a->read_bytes - b->read_bytes) > 1e-6 * fmax(1, fmin(a->read_bytes, b->read_bytes)))
    return a->read_bytes < b->read_bytes ? -1 : 1;
  return (a->rank_key > b->rank_key) - (a->rank_key < b->rank_key);
}

/* Pecan's rule: within each group, the movable operators by ascending
 * inflation factor (as the spec orders them), ties in spec order. */
static void pecan_order(const sl_workload *w, const odometer *o, int *order)
{
  for (int k = 0; k < w->nops; k++)
    order[k] = k;
  for (int g = 0; g < o->ngroups; g++) {
    int ops[SL_MAX_OPS];
    for (int k = 0; k < o->m[g]; k++)
      ops[k] = o->pos[g][k];
    for (int k = 1; k < o->m[g]; k++) /* insertion sort: stable */
      for (int j = k; j > 0 && sl_reorder_inflation(w, ops[j]) < sl_reorder_inflation(w, ops[j - 1]); j--) {
        int t = ops[j];
        ops[j] = ops[j - 1];
        ops[j - 1] = t;
      }
    for (int k = 0; k < o->m[g]; k++)
      order[o->pos[g][k]] = ops[k];
  }
}

static int find_order(const sl_reorder_result *r, int nops, const int *order)
{
  for (int i = 0; i < r->n; i++)
    if (memcmp(r->orders[i].order, order, sizeof(int) * (size_t)nops) == 0)
      return i;
  return -1;
}

int sl_reorder_choose(const sl_workload *w, const sl_cluster *c, sl_reorder_result *out, char *err, size_t errlen)
{
  memset(out, 0, sizeof *out);
  if (!w || !c)
    return SL_EINVAL;
  int bad = sl_reorder_check(w, err, errlen);
  if (bad >= 0)
    return SL_EINVAL;
  odometer *o = malloc(sizeof *o);
  sl_workload *scratch = malloc(sizeof *scratch);
  sl_plan *plan = malloc(sizeof *plan);
  if (!o || !scratch || !plan) {
    free(o);
    free(scratch);
    free(plan);
    return SL_ENOMEM;
  }
  odometer_init(o, w);
  int worst;
  double total = count_orders(o, &worst);
  int rc = 0;
  if (total > SL_REORDER_MAX_ORDERS) {
    say(err, errlen, "the reorder groups allow %.0f orders, more than the %d sluice tries: pin operators with "
        "keep_position or split a group (group '%s')", total, SL_REORDER_MAX_ORDERS, w->ops[worst].reorder_group);
    rc = SL_EINVAL;
  } else if (!(out->orders = calloc((size_t)total, sizeof *out->orders))) {
    rc = SL_ENOMEM;
  }
  int first_error = 0;
  for (int k = 0; rc == 0; k++) {
    sl_order *cand = &out->orders[out->n++];
    odometer_order(o, w->nops, cand->order);
    cand->rank_key = k;
    int brc = bound_order(w, c, scratch, plan, cand);
    if (brc < 0 && !first_error)
      first_error = brc;
    if (!odometer_next(o))
      break;
  }
  if (rc == 0) {
    qsort(out->orders, (size_t)out->n, sizeof *out->orders, order_cmp);
    if (!isfinite(out->orders[0].jct_s)) {
      if (err && errlen)
        snprintf(err, errlen, "no order of the reorder groups could be bounded on cluster '%s' (%s)", c->name,
                 sl_strerror(first_error));
      rc = first_error ? first_error : SL_ELP;
    }
  }
  if (rc == 0) {
    int ident[SL_MAX_OPS], pecan[SL_MAX_OPS];
    for (int k = 0; k < w->nops; k++)
      ident[k] = k;
    pecan_order(w, o, pecan);
    out->written_at = find_order(out, w->nops, ident);
    out->pecan_at = find_order(out, w->nops, pecan);
  } else {
    sl_reorder_result_free(out);
  }
  free(o);
  free(scratch);
  free(plan);
  return rc;
}

void sl_reorder_result_free(sl_reorder_result *r)
{
  if (!r)
    return;
  free(r->orders);
  memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- report */

static void print_row(const sl_reorder_result *r, const sl_workload *w, int i, FILE *f)
{
  const sl_order *o = &r->orders[i];
  char order[1024];
  sl_reorder_format(w, o->order, order, sizeof order);
  const char *tag = i == 0 ? "  <- chosen" : "";
  char note[96] = "";
  if (i == r->written_at && i == r->pecan_at)
    snprintf(note, sizeof note, "  (as written; Pecan's rule)");
  else if (i == r->written_at)
    snprintf(note, sizeof note, "  (as written)");
  else if (i == r->pecan_at)
    snprintf(note, sizeof note, "  (Pecan's rule: ascending inflation)");
  if (isfinite(o->jct_s))
    fprintf(f, "  %4d  %10.3f  %12.4g  %10.1f  %s%s%s\n", i + 1, o->jct_s, o->throughput_rows_s, o->read_bytes / 1e6,
            order, tag, note);
  else
    fprintf(f, "  %4d  %10s  %12s  %10s  %s%s\n", i + 1, "-", "-", "-", order, note);
}

void sl_reorder_print(const sl_reorder_result *r, const sl_workload *w, const sl_cluster *c, int top, FILE *f)
{
  fprintf(f, "auto-order of %s on %s: %d order%s of its reorder groups, ranked by the JCT bound\n", w->name, c->name,
          r->n, r->n == 1 ? "" : "s");
  fprintf(f, "  inflation (bytes out per byte in, as written):");
  for (int i = 0; i < w->nops; i++)
    if (in_group(&w->ops[i]))
      fprintf(f, " %s %.4g%s", w->ops[i].name, sl_reorder_inflation(w, i), w->ops[i].keep_position ? " (kept)" : "");
  fprintf(f, "\n  %4s  %10s  %12s  %10s  %s\n", "rank", "bound_s", "rows_per_s", "MB_read", "order");
  for (int i = 0; i < r->n; i++)
    if (i < top || i == r->written_at || i == r->pecan_at)
      print_row(r, w, i, f);
  const sl_order *best = &r->orders[0], *as = &r->orders[r->written_at];
  char order[1024];
  sl_reorder_format(w, best->order, order, sizeof order);
  if (r->written_at == 0)
    fprintf(f, "chosen: the order as written (%.3f s)\n", best->jct_s);
  else
    fprintf(f, "chosen: %s: bound %.3f s against %.3f s as written (%.2fx)\n", order, best->jct_s, as->jct_s,
            best->jct_s > 0 ? as->jct_s / best->jct_s : 1);
}
