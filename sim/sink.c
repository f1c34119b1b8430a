/*
 * The simulated sink (sink.h): rows followed by source split through the
 * partitions that carry them, so that a simulated run is checked for lost
 * or doubled rows, and rolled back, as a real one is. Partitions are
 * indexed by id in one growing array; a partition's split rows are one
 * piece inline, more on the heap (a batch over several splits).
 */
#include "sink.h"

#include <math.h>
#include <stdlib.h>

/* The rows a partition holds, by source split. */
typedef struct {
  sl_sim_piece one;
  sl_sim_piece *more; /* n > 1: all n pieces */
  uint32_t n;
} holding;

struct sl_sim_sink_s {
  double *split_rows; /* delivered, by split */
  int64_t nsplits;
  holding *holds;     /* by partition id */
  uint32_t cap;
};

sl_sim_sink *sl_sim_sink_new(int64_t nsplits)
{
  sl_sim_sink *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->nsplits = nsplits;
  s->split_rows = calloc(nsplits > 0 ? nsplits : 1, sizeof *s->split_rows);
  if (!s->split_rows) {
    free(s);
    return NULL;
  }
  return s;
}

static const sl_sim_piece *holding_pieces(const holding *h)
{
  return h->n > 1 ? h->more : &h->one;
}

static void holding_clear(holding *h)
{
  if (h->n > 1)
    free(h->more);
  *h = (holding){.n = 0};
}

void sl_sim_sink_free(sl_sim_sink *s)
{
  if (!s)
    return;
  for (uint32_t i = 0; s->holds && i < s->cap; i++)
    holding_clear(&s->holds[i]);
  free(s->holds);
  free(s->split_rows);
  free(s);
}

void sl_sim_rows_free(sl_sim_rows *in)
{
  free(in->v);
  *in = (sl_sim_rows){0};
}

static int reserve(sl_sim_sink *s, sl_part_id p)
{
  if (p < s->cap)
    return 0;
  uint32_t ncap = s->cap ? s->cap : 1024;
  while (ncap <= p)
    ncap *= 2;
  holding *holds = realloc(s->holds, sizeof *holds * ncap);
  if (!holds)
    return SL_ENOMEM;
  s->holds = holds;
  for (uint32_t i = s->cap; i < ncap; i++)
    s->holds[i] = (holding){.n = 0};
  s->cap = ncap;
  return 0;
}

/* Appends @p rows of @p split to the attempt's inputs, merging runs. */
static int input_add(sl_sim_rows *in, int64_t split, double rows)
{
  if (rows <= 0)
    return 0;
  in->rows += rows;
  if (in->n > 0 && in->v[in->n - 1].split == split) {
    in->v[in->n - 1].rows += rows;
    return 0;
  }
  if (in->n == in->cap) {
    uint32_t ncap = in->cap ? in->cap * 2 : 4;
    sl_sim_piece *n = realloc(in->v, sizeof *n * ncap);
    if (!n)
      return SL_ENOMEM;
    in->v = n;
    in->cap = ncap;
  }
  in->v[in->n++] = (sl_sim_piece){split, rows};
  return 0;
}

int sl_sim_sink_inputs(const sl_sim_sink *s, const sl_decision *d, sl_sim_rows *in)
{
  in->n = 0;
  in->rows = 0;
  for (int i = 0; i < d->ninputs; i++) {
    sl_part_id q = d->inputs[i];
    const holding *h = q < s->cap ? &s->holds[q] : NULL;
    for (uint32_t k = 0; h && k < h->n; k++)
      if (input_add(in, holding_pieces(h)[k].split, holding_pieces(h)[k].rows) < 0)
        return SL_ENOMEM;
  }
  if (in->rows <= 0)
    return input_add(in, d->split, (double)(d->rows > 0 ? d->rows : 1));
  return 0;
}

int sl_sim_sink_hold(sl_sim_sink *s, sl_part_id part, const sl_sim_rows *in, int64_t rows_out, int64_t from,
                     int64_t rows)
{
  if (reserve(s, part) < 0)
    return SL_ENOMEM;
  holding *h = &s->holds[part];
  holding_clear(h);
  if (rows_out <= 0 || in->rows <= 0 || rows <= 0)
    return 0;
  double scale = in->rows / (double)rows_out; /* input rows per output row */
  double lo = (double)from * scale, hi = (double)(from + rows) * scale;
  uint32_t first = 0, n = 0;
  double at = 0, first_at = 0;
  for (uint32_t k = 0; k < in->n && at < hi; at += in->v[k].rows, k++)
    if (fmin(hi, at + in->v[k].rows) > fmax(lo, at)) {
      if (n++ == 0) {
        first = k;
        first_at = at;
      }
    }
  sl_sim_piece *out = n > 1 ? malloc(sizeof *out * n) : &h->one;
  if (!out)
    return SL_ENOMEM;
  at = first_at;
  for (uint32_t k = first, j = 0; j < n; at += in->v[k].rows, k++) {
    double a = fmax(lo, at), b = fmin(hi, at + in->v[k].rows);
    if (b > a)
      out[j++] = (sl_sim_piece){in->v[k].split, (b - a) / scale};
  }
  if (n > 1)
    h->more = out;
  h->n = n;
  return 0;
}

void sl_sim_sink_deliver(sl_sim_sink *s, const sl_decision *d)
{
  const holding *h = d->part < s->cap ? &s->holds[d->part] : NULL;
  if (!h || h->n == 0) {
    if (d->split >= 0 && d->split < s->nsplits)
      s->split_rows[d->split] += (double)d->rows;
    return;
  }
  for (uint32_t k = 0; k < h->n; k++) {
    const sl_sim_piece *pc = &holding_pieces(h)[k];
    if (pc->split >= 0 && pc->split < s->nsplits)
      s->split_rows[pc->split] += pc->rows;
  }
  sl_sim_sink_forget(s, d->part);
}

void sl_sim_sink_forget(sl_sim_sink *s, sl_part_id part)
{
  if (part < s->cap)
    holding_clear(&s->holds[part]);
}

void sl_sim_sink_rollback(sl_sim_sink *s, const bool *keep_split)
{
  for (int64_t k = 0; k < s->nsplits; k++)
    if (!keep_split[k])
      s->split_rows[k] = 0;
}

uint64_t sl_sim_sink_checksum(const sl_sim_sink *s)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t k = 0; k < s->nsplits; k++) {
    uint64_t v[2] = {(uint64_t)k, (uint64_t)llround(s->split_rows[k])};
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++)
      h = (h ^ p[i]) * 0x100000001b3ULL;
  }
  return h;
}

int64_t sl_sim_sink_splits_wrong(const sl_sim_sink *s, double per_split)
{
  int64_t wrong = 0;
  for (int64_t k = 0; k < s->nsplits; k++)
    wrong += fabs(s->split_rows[k] - per_split) > 1e-6;
  return wrong;
}
