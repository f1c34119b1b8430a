#include "idqueue.h"

#include <stdlib.h>

#include "error.h"

/* Capacity stays a power of two so the index mask replaces a modulo. */
static int grow(sl__idq *q)
{
  uint32_t ncap = q->cap ? q->cap * 2 : 16;
  uint32_t *n = malloc(sizeof *n * ncap);
  if (!n)
    return SL_ENOMEM;
  for (uint32_t i = 0; i < q->len; i++)
    n[i] = sl__idq_at(q, i);
  free(q->ring);
  q->ring = n;
  q->head = 0;
  q->cap = ncap;
  return 0;
}

int sl__idq_push(sl__idq *q, uint32_t id)
{
  if (q->len == q->cap && grow(q) < 0)
    return SL_ENOMEM;
  q->ring[(q->head + q->len) & (q->cap - 1)] = id;
  q->len++;
  return 0;
}

int sl__idq_push_front(sl__idq *q, uint32_t id)
{
  if (q->len == q->cap && grow(q) < 0)
    return SL_ENOMEM;
  q->head = (q->head + q->cap - 1) & (q->cap - 1);
  q->ring[q->head] = id;
  q->len++;
  return 0;
}

uint32_t sl__idq_pop(sl__idq *q)
{
  uint32_t id = q->ring[q->head];
  q->head = (q->head + 1) & (q->cap - 1);
  q->len--;
  return id;
}

void sl__idq_filter(sl__idq *q, bool (*drop)(uint32_t id, void *ctx), void *ctx)
{
  uint32_t kept = 0;
  for (uint32_t i = 0; i < q->len; i++) {
    uint32_t id = sl__idq_at(q, i);
    if (!drop(id, ctx))
      q->ring[(q->head + kept++) & (q->cap - 1)] = id;
  }
  q->len = kept;
}

void sl__idq_filter_head(sl__idq *q, uint32_t n, bool (*drop)(uint32_t id, void *ctx), void *ctx)
{
  if (n > q->len)
    n = q->len;
  /* keep the survivors of the first n, packed against the rest */
  uint32_t kept = n;
  for (uint32_t i = n; i-- > 0;) {
    uint32_t id = sl__idq_at(q, i);
    if (!drop(id, ctx))
      q->ring[(q->head + --kept) & (q->cap - 1)] = id;
  }
  q->head = (q->head + kept) & (q->cap - 1);
  q->len -= kept;
}

static bool is_id(uint32_t id, void *ctx)
{
  uint32_t *target = ctx;
  if (*target != id)
    return false;
  *target = UINT32_MAX - 1; /* drop only the first occurrence */
  return true;
}

bool sl__idq_remove(sl__idq *q, uint32_t id)
{
  uint32_t target = id, before = q->len;
  sl__idq_filter(q, is_id, &target);
  return q->len != before;
}

void sl__idq_clear(sl__idq *q)
{
  q->head = 0;
  q->len = 0;
}

void sl__idq_free(sl__idq *q)
{
  free(q->ring);
  q->ring = NULL;
  q->head = q->len = q->cap = 0;
}
