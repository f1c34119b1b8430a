/* The check of a groupby's output against the records gensort makes. */
#include "group_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"

struct sl_group_check {
  int key_bytes;
  size_t ngroups;        /* 256^key_bytes */
  sl_group_agg *got;     /* per group; count 0: not delivered */
  uint32_t *split;       /* the split the group's row came with */
  char err[256];
};

sl_group_check *sl_group_check_new(int key_bytes)
{
  if (key_bytes < 1 || key_bytes > SL_GROUP_MAX_KEY_BYTES)
    return NULL;
  sl_group_check *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->key_bytes = key_bytes;
  c->ngroups = (size_t)1 << (8 * key_bytes);
  c->got = calloc(c->ngroups, sizeof *c->got);
  c->split = calloc(c->ngroups, sizeof *c->split);
  if (!c->got || !c->split) {
    sl_group_check_free(c);
    return NULL;
  }
  return c;
}

void sl_group_check_free(sl_group_check *c)
{
  if (!c)
    return;
  free(c->got);
  free(c->split);
  free(c);
}

int sl_group_check_partition(sl_group_check *c, const sl_rows *rows)
{
  size_t n = sl_rows_count(rows), bytes = sl_group_row_bytes(c->key_bytes);
  for (size_t i = 0; i < n; i++) {
    if (sl_rows_len(rows, i) != bytes) {
      snprintf(c->err, sizeof c->err, "row %lld is not a group's: %zu bytes where a group's row has %zu",
               (long long)sl_rows_id(rows, i), sl_rows_len(rows, i), bytes);
      return SL_ESTATE;
    }
    int64_t key = sl_group_key(sl_rows_payload(rows, i), c->key_bytes);
    sl_group_agg a;
    sl_group_read(sl_rows_payload(rows, i), c->key_bytes, &a);
    if (c->got[key].count > 0 || a.count == 0) {
      snprintf(c->err, sizeof c->err, "group %lld %s", (long long)key,
               a.count == 0 ? "came with a count of 0" : "was delivered twice");
      return SL_ESTATE;
    }
    c->got[key] = a;
    c->split[key] = sl_rows_split(rows, i);
  }
  return 0;
}

void sl_group_check_rollback(sl_group_check *c, const bool *keep_split, uint32_t nsplits)
{
  for (size_t g = 0; g < c->ngroups; g++)
    if (c->got[g].count > 0 && !(c->split[g] < nsplits && keep_split[c->split[g]]))
      c->got[g] = (sl_group_agg){0};
}

int sl_group_check_finish(sl_group_check *c, uint64_t seed, int64_t tasks, int64_t rows_per_task)
{
  c->err[0] = '\0';
  sl_group_agg *want = calloc(c->ngroups, sizeof *want);
  if (!want)
    return SL_ENOMEM;
  uint64_t count = (uint64_t)tasks * (uint64_t)rows_per_task;
  uint8_t record[SL_SORT_RECORD_BYTES];
  for (uint64_t id = 0; id < count; id++) {
    sl_sort_record(seed, (int64_t)id, record);
    sl_group_agg one = {.count = 1, .sum = id, .min = id, .max = id};
    sl_group_fold(&want[sl_group_key(record, c->key_bytes)], &one);
  }
  int rc = 0;
  for (size_t g = 0; g < c->ngroups && rc == 0; g++) {
    const sl_group_agg *a = &c->got[g], *b = &want[g];
    if (a->count == b->count && a->sum == b->sum && (b->count == 0 || (a->min == b->min && a->max == b->max)))
      continue;
    snprintf(c->err, sizeof c->err,
             "group %zu: count %llu, sum %llu, min %llu, max %llu where the source's records give count %llu, "
             "sum %llu, min %llu, max %llu", g, (unsigned long long)a->count, (unsigned long long)a->sum,
             (unsigned long long)a->min, (unsigned long long)a->max, (unsigned long long)b->count,
             (unsigned long long)b->sum, (unsigned long long)b->min, (unsigned long long)b->max);
    rc = SL_ESTATE;
  }
  free(want);
  return rc;
}

const char *sl_group_check_error(const sl_group_check *c)
{
  return c->err;
}
