/* The sort benchmark's kernels: gensort writes 100-byte records (a 10-byte
 * key, then the record's number and filler), sort_records sorts the rows
 * it is given by key, and range partitioning sends each record to the
 * reducer whose share of the key space holds it. shuffle_rows is the
 * random shuffle (Ray Data's random_shuffle): rows go to reducers and come
 * out in the order of a seeded hash of their ids. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "models/error.h"

enum { KEY_BYTES = SL_SORT_KEY_BYTES, RECORD_BYTES = SL_SORT_RECORD_BYTES };

/* ---- gensort --------------------------------------------------------------- */

void sl_sort_record(uint64_t seed, int64_t id, uint8_t record[SL_SORT_RECORD_BYTES])
{
  sl__rng r;
  sl__rng_seed(&r, sl__purpose_seed(seed, SL__PURPOSE_SORT), (uint64_t)id);
  uint64_t a = sl__rng_next(&r), b = sl__rng_next(&r);
  memcpy(record, &a, 8);
  memcpy(record + 8, &b, 2);
  /* like gensort: the record's number in hex, then filler of one repeated
   * hex digit per group, so a record is readable in a dump */
  static const char hex[] = "0123456789ABCDEF";
  uint8_t *p = record + KEY_BYTES;
  *p++ = ' ';
  *p++ = ' ';
  for (int i = 31; i >= 0; i--)
    *p++ = i < 16 ? (uint8_t)hex[((uint64_t)id >> (4 * i)) & 15] : '0';
  *p++ = ' ';
  *p++ = ' ';
  for (int i = 0; p < record + RECORD_BYTES - 2; i++)
    *p++ = (uint8_t)hex[(((uint64_t)id + (uint64_t)(i / 4)) & 15)];
  *p++ = '\r';
  *p = '\n';
}

static int gensort_init(sl_kernel *k)
{
  if (k->out_bytes != 0 && k->out_bytes != RECORD_BYTES)
    return SL_EINVAL; /* records are 100 bytes: row_bytes says otherwise */
  return 0;
}

static int gensort_row(sl_kernel *k, int64_t id, uint32_t split, sl_rows *out)
{
  uint8_t *p = sl_rows_add(out, id, split, RECORD_BYTES);
  if (!p)
    return sl__kernel_fail(k, SL_ENOMEM, "gensort: out of memory at record %lld", (long long)id);
  sl_sort_record(k->seed, id, p);
  return 0;
}

const sl__kernel_ops sl__gensort_ops = {.init = gensort_init, .gen = gensort_row};

/* ---- range partitioning ---------------------------------------------------- */

int64_t sl_sort_share(const uint8_t *payload, size_t len, int64_t shares)
{
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; i++)
    prefix = prefix << 8 | (i < len ? payload[i] : 0);
  /* keys are uniform over the key space: equal ranges are equal shares */
  return (int64_t)(((unsigned __int128)prefix * (uint64_t)shares) >> 64);
}

static int64_t records_share(const sl_kernel *k, int64_t id, const uint8_t *payload, size_t len, int64_t shares)
{
  (void)k;
  (void)id;
  return sl_sort_share(payload, len, shares);
}

/* ---- sort_records ---------------------------------------------------------- */

typedef struct {
  uint8_t key[KEY_BYTES];
  uint32_t len;
  size_t row;
} keyed;

int sl_sort_compare_keys(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
  size_t n = alen < blen ? alen : blen;
  n = n < KEY_BYTES ? n : KEY_BYTES;
  int c = memcmp(a, b, n);
  if (c != 0 || n == KEY_BYTES)
    return c;
  return (alen > n) - (blen > n); /* a short key sorts before its extensions */
}

static int by_key(const void *pa, const void *pb)
{
  const keyed *a = pa, *b = pb;
  int c = sl_sort_compare_keys(a->key, a->len, b->key, b->len);
  return c ? c : (a->row > b->row) - (a->row < b->row); /* stable */
}

static int sort_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out)
{
  keyed *ix = malloc((count ? count : 1) * sizeof *ix);
  if (!ix)
    return sl__kernel_fail(k, SL_ENOMEM, "sort_records: out of memory for %zu keys", count);
  for (size_t i = 0; i < count; i++) {
    size_t len = sl_rows_len(in, first + i);
    memset(ix[i].key, 0, KEY_BYTES);
    memcpy(ix[i].key, sl_rows_payload(in, first + i), len < KEY_BYTES ? len : KEY_BYTES);
    ix[i].len = (uint32_t)len;
    ix[i].row = first + i;
  }
  qsort(ix, count, sizeof *ix, by_key);
  int rc = sl_rows_reserve(out, count, 0);
  for (size_t i = 0; i < count && rc == 0; i++)
    rc = sl_rows_append_range(out, in, ix[i].row, 1);
  free(ix);
  return rc ? sl__kernel_fail(k, rc, "sort_records: out of memory") : 0;
}

const sl__kernel_ops sl__sort_records_ops = {.apply = sort_apply, .share = records_share};

/* ---- shuffle_rows ---------------------------------------------------------- */

/* A row's place in the shuffle: a hash of the seed and its id, so the order
 * does not depend on the order its inputs arrived in (a retry, another
 * model), and neither does its reducer. */
static uint64_t shuffle_rank(const sl_kernel *k, int64_t id)
{
  return sl__mix2(sl__purpose_seed(k->seed, SL__PURPOSE_SHUFFLE), (uint64_t)id);
}

static int64_t shuffle_share(const sl_kernel *k, int64_t id, const uint8_t *payload, size_t len, int64_t shares)
{
  (void)payload;
  (void)len;
  /* the high bits: the order within a reducer uses all of them */
  return (int64_t)(((unsigned __int128)(shuffle_rank(k, id) ^ 0x9e3779b97f4a7c15ull) * (uint64_t)shares) >> 64);
}

typedef struct {
  uint64_t rank;
  size_t row;
} ranked;

static int by_rank(const void *pa, const void *pb)
{
  const ranked *a = pa, *b = pb;
  if (a->rank != b->rank)
    return (a->rank > b->rank) - (a->rank < b->rank);
  return (a->row > b->row) - (a->row < b->row);
}

static int shuffle_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out)
{
  ranked *ix = malloc((count ? count : 1) * sizeof *ix);
  if (!ix)
    return sl__kernel_fail(k, SL_ENOMEM, "shuffle_rows: out of memory for %zu rows", count);
  for (size_t i = 0; i < count; i++)
    ix[i] = (ranked){shuffle_rank(k, sl_rows_id(in, first + i)), first + i};
  qsort(ix, count, sizeof *ix, by_rank);
  int rc = 0;
  for (size_t i = 0; i < count && rc == 0; i++)
    rc = sl_rows_append_range(out, in, ix[i].row, 1);
  free(ix);
  return rc ? sl__kernel_fail(k, rc, "shuffle_rows: out of memory") : 0;
}

const sl__kernel_ops sl__shuffle_rows_ops = {.apply = shuffle_apply, .share = shuffle_share};
