/* valsort's checks on a sort's output, partition by partition. */
#include "sort_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/sink.h"

typedef struct {
  uint8_t first[SL_SORT_KEY_BYTES], last[SL_SORT_KEY_BYTES];
  uint32_t first_len, last_len;
} key_range;

struct sl_sort_check {
  key_range *ranges;
  int64_t n, cap;
  bool rolled_back;
  char err[256];
};

sl_sort_check *sl_sort_check_new(void)
{
  return calloc(1, sizeof(sl_sort_check));
}

void sl_sort_check_free(sl_sort_check *c)
{
  if (!c)
    return;
  free(c->ranges);
  free(c);
}

static void keep_key(uint8_t *dst, uint32_t *len, const sl_rows *rows, size_t i)
{
  size_t n = sl_rows_len(rows, i);
  n = n < SL_SORT_KEY_BYTES ? n : SL_SORT_KEY_BYTES;
  memset(dst, 0, SL_SORT_KEY_BYTES);
  memcpy(dst, sl_rows_payload(rows, i), n);
  *len = (uint32_t)sl_rows_len(rows, i);
}

static int compare_rows(const sl_rows *rows, size_t a, size_t b)
{
  return sl_sort_compare_keys(sl_rows_payload(rows, a), sl_rows_len(rows, a), sl_rows_payload(rows, b),
                              sl_rows_len(rows, b));
}

int sl_sort_check_partition(sl_sort_check *c, const sl_rows *rows)
{
  size_t n = sl_rows_count(rows);
  for (size_t i = 1; i < n; i++)
    if (compare_rows(rows, i - 1, i) > 0) {
      snprintf(c->err, sizeof c->err, "a partition is not sorted: record %lld comes before record %lld, whose "
               "key is smaller (rows %zu and %zu of %zu)", (long long)sl_rows_id(rows, i - 1),
               (long long)sl_rows_id(rows, i), i - 1, i, n);
      return SL_ESTATE;
    }
  if (n == 0)
    return 0;
  if (c->n == c->cap) {
    int64_t ncap = c->cap ? 2 * c->cap : 64;
    key_range *r = realloc(c->ranges, sizeof *r * (size_t)ncap);
    if (!r)
      return SL_ENOMEM;
    c->ranges = r;
    c->cap = ncap;
  }
  key_range *k = &c->ranges[c->n++];
  keep_key(k->first, &k->first_len, rows, 0);
  keep_key(k->last, &k->last_len, rows, n - 1);
  return 0;
}

void sl_sort_check_rolled_back(sl_sort_check *c)
{
  c->rolled_back = true;
}

static int by_first_key(const void *pa, const void *pb)
{
  const key_range *a = pa, *b = pb;
  return sl_sort_compare_keys(a->first, a->first_len, b->first, b->first_len);
}

static void hex_key(const uint8_t *key, char *out)
{
  for (int i = 0; i < SL_SORT_KEY_BYTES; i++)
    snprintf(out + 2 * i, 3, "%02x", key[i]);
}

/* Sorted by first key, each partition must end no later than the next begins. */
static int check_ranges(sl_sort_check *c)
{
  if (c->n == 0)
    return 0; /* ranges may be NULL: qsort must not see it */
  qsort(c->ranges, (size_t)c->n, sizeof *c->ranges, by_first_key);
  for (int64_t i = 1; i < c->n; i++) {
    const key_range *a = &c->ranges[i - 1], *b = &c->ranges[i];
    if (sl_sort_compare_keys(a->last, a->last_len, b->first, b->first_len) > 0) {
      char x[2 * SL_SORT_KEY_BYTES + 1], y[2 * SL_SORT_KEY_BYTES + 1];
      hex_key(a->last, x);
      hex_key(b->first, y);
      snprintf(c->err, sizeof c->err, "two partitions overlap: one ends at key %s, after another begins at %s",
               x, y);
      return SL_ESTATE;
    }
  }
  return 0;
}

int sl_sort_check_finish(sl_sort_check *c, uint64_t seed, int64_t tasks, int64_t rows_per_task, uint64_t rows,
                         uint64_t checksum)
{
  c->err[0] = '\0';
  if (!c->rolled_back) {
    int rc = check_ranges(c);
    if (rc)
      return rc;
  }
  uint64_t want = 0, count = (uint64_t)tasks * (uint64_t)rows_per_task;
  uint8_t record[SL_SORT_RECORD_BYTES];
  for (uint64_t id = 0; id < count; id++) {
    sl_sort_record(seed, (int64_t)id, record);
    want += sl_sink_row_hash((int64_t)id, record, sizeof record);
  }
  if (rows != count || checksum != want) {
    snprintf(c->err, sizeof c->err, "the output is not the input's records: %llu records with checksum %016llx, "
             "gensort made %llu with checksum %016llx", (unsigned long long)rows, (unsigned long long)checksum,
             (unsigned long long)count, (unsigned long long)want);
    return SL_ESTATE;
  }
  return 0;
}

const char *sl_sort_check_error(const sl_sort_check *c)
{
  return c->err;
}

int64_t sl_sort_check_partitions(const sl_sort_check *c)
{
  return c->n;
}
