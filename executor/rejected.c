/*
 * Rows a kernel rejected (rejected.h). Rejections are rare, so the set of
 * rows seen is a small open-addressing hash table, grown at half full; a
 * task's batch is a plain array.
 */
#include "rejected.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sl_rejected_key {
  int64_t id;
  int level; /* -1: an empty cell */
};

int sl_rejected_batch_push(sl_rejected_batch *b, const sl_rejected_row *r)
{
  if (b->n == b->cap) {
    size_t ncap = b->cap ? 2 * b->cap : 16;
    sl_rejected_row *n = realloc(b->rows, ncap * sizeof *n);
    if (!n)
      return SL_ENOMEM;
    b->rows = n;
    b->cap = ncap;
  }
  b->rows[b->n++] = *r;
  return 0;
}

void sl_rejected_batch_clear(sl_rejected_batch *b)
{
  b->n = 0;
  b->first[0] = 0;
}

void sl_rejected_batch_free(sl_rejected_batch *b)
{
  free(b->rows);
  memset(b, 0, sizeof *b);
}

void sl_rejected_tally_init(sl_rejected_tally *t)
{
  memset(t, 0, sizeof *t);
  t->sink_rows_exact = true;
}

void sl_rejected_tally_free(sl_rejected_tally *t)
{
  free(t->cell);
  sl_rejected_tally_init(t);
}

static size_t key_hash(int level, int64_t id, size_t cap)
{
  uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull ^ (uint64_t)level * 0xbf58476d1ce4e5b9ull;
  return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

/* 1 when (@p level, @p id) is new, 0 when seen before; the table has room. */
static int key_add(struct sl_rejected_key *cell, size_t cap, int level, int64_t id)
{
  for (size_t i = key_hash(level, id, cap);; i = (i + 1) & (cap - 1)) {
    struct sl_rejected_key *k = &cell[i];
    if (k->level == level && k->id == id)
      return 0;
    if (k->level < 0) {
      k->level = level;
      k->id = id;
      return 1;
    }
  }
}

static int grow(sl_rejected_tally *t)
{
  size_t cap = t->cap ? 2 * t->cap : 64;
  struct sl_rejected_key *cell = malloc(cap * sizeof *cell);
  if (!cell)
    return SL_ENOMEM;
  for (size_t i = 0; i < cap; i++)
    cell[i].level = -1;
  for (size_t i = 0; i < t->cap; i++)
    if (t->cell[i].level >= 0)
      key_add(cell, cap, t->cell[i].level, t->cell[i].id);
  free(t->cell);
  t->cell = cell;
  t->cap = cap;
  return 0;
}

int sl_rejected_tally_add(sl_rejected_tally *t, const sl_rejected_batch *b)
{
  if (!t->first[0])
    snprintf(t->first, sizeof t->first, "%s", b->first);
  for (size_t i = 0; i < b->n; i++) {
    const sl_rejected_row *r = &b->rows[i];
    if (2 * ((size_t)t->rows + 1) > t->cap && grow(t) < 0)
      return SL_ENOMEM;
    if (key_add(t->cell, t->cap, r->level, r->id)) {
      t->rows++;
      t->sink_rows_lost += r->sink_rows;
      t->sink_rows_exact = t->sink_rows_exact && r->exact;
    }
  }
  return 0;
}

double sl_rejected_sink_rows(const sl_plan *p, int op, int member, bool *exact)
{
  double f = 1;
  *exact = true;
  for (int i = op; i < p->nops; i++) {
    const sl_pop *pop = &p->ops[i];
    for (int m = i == op ? member : 0; m < pop->nfused; m++) {
      double r = p->workload->ops[pop->first + m].rows_out_per_row;
      if (r == 0)
        r = 1;
      if (r < 1) {
        *exact = false;
        r = 1;
      }
      f *= r;
    }
  }
  return f;
}

bool sl_rejected_rows_add_up(const sl_rejected_tally *t, double got, double expected)
{
  double least = expected - t->sink_rows_lost;
  if (t->sink_rows_exact)
    return fabs(got - least) < 0.5;
  return got <= expected + 0.5 && got >= least - 0.5;
}

const char *sl_rejected_message(const char *msg, int64_t id)
{
  char prefix[40];
  int n = snprintf(prefix, sizeof prefix, "row %lld: ", (long long)id);
  return strncmp(msg, prefix, (size_t)n) == 0 ? msg + n : msg;
}
