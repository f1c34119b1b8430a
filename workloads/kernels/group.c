/* groupby: the count, sum, least and greatest record number of each group
 * of the sort benchmark's records, a group being the records whose keys
 * share their first key_bytes bytes. The aggregates combine: a map of
 * groupby folds the records of a task into one partial row per group (the
 * combine before the shuffle), and an all-to-all of groupby sends each row
 * to the reducer whose key range holds its group and folds the partial
 * rows into the final ones. Either reads records, partial rows or both. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "models/error.h"

size_t sl_group_row_bytes(int key_bytes)
{
  return (size_t)key_bytes + 4 * sizeof(uint64_t);
}

int64_t sl_group_key(const uint8_t *payload, int key_bytes)
{
  int64_t key = 0;
  for (int i = 0; i < key_bytes; i++)
    key = key << 8 | payload[i];
  return key;
}

void sl_group_write(uint8_t *row, int key_bytes, int64_t key, const sl_group_agg *a)
{
  for (int i = key_bytes - 1; i >= 0; i--, key >>= 8)
    row[i] = (uint8_t)(key & 0xff);
  uint64_t v[4] = {a->count, a->sum, a->min, a->max};
  memcpy(row + key_bytes, v, sizeof v);
}

void sl_group_read(const uint8_t *row, int key_bytes, sl_group_agg *a)
{
  uint64_t v[4];
  memcpy(v, row + key_bytes, sizeof v);
  *a = (sl_group_agg){.count = v[0], .sum = v[1], .min = v[2], .max = v[3]};
}

void sl_group_fold(sl_group_agg *into, const sl_group_agg *a)
{
  if (into->count == 0) {
    *into = *a;
    return;
  }
  into->count += a->count;
  into->sum += a->sum; /* mod 2^64, as the check computes it */
  into->min = a->min < into->min ? a->min : into->min;
  into->max = a->max > into->max ? a->max : into->max;
}

static int group_init(sl_kernel *k)
{
  if (k->key_bytes < 1 || k->key_bytes > SL_GROUP_MAX_KEY_BYTES)
    return SL_EINVAL;
  return 0;
}

/* One input row as an aggregate: a record counts itself once, with its
 * number (its row id) as the value; a partial row is read as it is. */
static int row_agg(sl_kernel *k, const sl_rows *in, size_t i, sl_group_agg *a)
{
  size_t len = sl_rows_len(in, i), partial = sl_group_row_bytes(k->key_bytes);
  int64_t id = sl_rows_id(in, i);
  if (len == SL_SORT_RECORD_BYTES) {
    *a = (sl_group_agg){.count = 1, .sum = (uint64_t)id, .min = (uint64_t)id, .max = (uint64_t)id};
    return 0;
  }
  if (len == partial) {
    sl_group_read(sl_rows_payload(in, i), k->key_bytes, a);
    if (a->count > 0)
      return 0;
  }
  return sl__kernel_fail(k, SL_EKERNEL,
                         "row %lld: groupby reads records of %d bytes or partial groups of %zu bytes, not %zu "
                         "bytes%s", (long long)id, SL_SORT_RECORD_BYTES, partial, len,
                         len == partial ? " of a count of 0" : "");
}

typedef struct {
  int64_t key;
  sl_group_agg agg;
} group;

static int by_group_key(const void *pa, const void *pb)
{
  const group *a = pa, *b = pb;
  return (a->key > b->key) - (a->key < b->key);
}

/* The task's rows folded into one row per group, in key order. A group's
 * row carries its key as its id (one row per group reaches the sink) and
 * split 0 (it stands for rows of every split). */
static int group_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out)
{
  group *g = malloc((count ? count : 1) * sizeof *g);
  if (!g)
    return sl__kernel_fail(k, SL_ENOMEM, "groupby: out of memory for %zu rows", count);
  int rc = 0;
  for (size_t i = 0; i < count && rc == 0; i++) {
    g[i].key = sl_group_key(sl_rows_payload(in, first + i), k->key_bytes);
    rc = row_agg(k, in, first + i, &g[i].agg);
  }
  if (rc == 0)
    qsort(g, count, sizeof *g, by_group_key);
  size_t bytes = sl_group_row_bytes(k->key_bytes);
  for (size_t i = 0; i < count && rc == 0;) {
    sl_group_agg total = g[i].agg;
    size_t j = i + 1;
    for (; j < count && g[j].key == g[i].key; j++)
      sl_group_fold(&total, &g[j].agg);
    uint8_t *p = sl_rows_add(out, g[i].key, 0, bytes);
    if (!p)
      rc = sl__kernel_fail(k, SL_ENOMEM, "groupby: out of memory");
    else
      sl_group_write(p, k->key_bytes, g[i].key, &total);
    i = j;
  }
  free(g);
  return rc;
}

/* Records and partial rows both begin with the key: the same key range
 * sends a group's records and its partial rows to the same reducer. */
static int64_t group_share(const sl_kernel *k, int64_t id, const uint8_t *payload, size_t len, int64_t shares)
{
  (void)id;
  size_t n = len < (size_t)k->key_bytes ? len : (size_t)k->key_bytes;
  uint8_t key[8] = {0};
  memcpy(key, payload, n);
  return sl_sort_share(key, sizeof key, shares);
}

const sl__kernel_ops sl__groupby_ops = {.init = group_init, .apply = group_apply, .share = group_share};
