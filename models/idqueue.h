/**
 * @file idqueue.h
 * @brief A growable FIFO ring of 32-bit ids (partitions, tasks).
 *
 * Pushing never fails silently: it returns SL_ENOMEM. The queue owns its
 * ring; sl__idq_free() releases it.
 */
#ifndef SL_IDQUEUE_H
#define SL_IDQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct {
  uint32_t *ring;
  uint32_t head, len, cap;
} sl__idq;

/** @brief Appends @p id. 0, or SL_ENOMEM (the queue is unchanged). */
SL_MUST_CHECK int sl__idq_push(sl__idq *q, uint32_t id);
/** @brief Puts @p id at the head, so it is popped next. 0 or SL_ENOMEM. */
SL_MUST_CHECK int sl__idq_push_front(sl__idq *q, uint32_t id);
uint32_t sl__idq_pop(sl__idq *q);

static inline uint32_t sl__idq_len(const sl__idq *q) { return q->len; }
static inline bool sl__idq_empty(const sl__idq *q) { return q->len == 0; }
static inline uint32_t sl__idq_at(const sl__idq *q, uint32_t i)
{
  return q->ring[(q->head + i) & (q->cap - 1)];
}

/** @brief Removes every id for which @p drop returns true, keeping order. */
void sl__idq_filter(sl__idq *q, bool (*drop)(uint32_t id, void *ctx), void *ctx);
/** @brief Like sl__idq_filter() over the first @p n ids only: O(n), not
 *  O(length), for takers that look at the head of a long queue. */
void sl__idq_filter_head(sl__idq *q, uint32_t n, bool (*drop)(uint32_t id, void *ctx), void *ctx);
/** @brief Removes the first occurrence of @p id; true when found. */
bool sl__idq_remove(sl__idq *q, uint32_t id);
void sl__idq_clear(sl__idq *q);
void sl__idq_free(sl__idq *q);

#endif
