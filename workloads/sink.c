/* The sink checker: per-split accumulators plus an open-addressing set of
 * delivered ids (linear probing, backward-shift deletion, so no tombstones). */
#include "sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"

typedef struct {
  uint64_t rows, bytes, checksum;
} split_acc;

struct sl_sink {
  /* id set: key[i] = id + 1, 0 = empty; owner[i] = split of that id */
  uint64_t *key;
  uint32_t *owner;
  size_t cap, used; /* cap is a power of two */
  split_acc *split;
  size_t nsplit;    /* accumulators allocated: splits 0..nsplit-1 */
  char err[160];
};

/* ---- XXH64 ------------------------------------------------------------------- */

#define P1 11400714785092588743ull
#define P2 14029467366897019727ull
#define P3 1609587929392839161ull
#define P4 9650029242287828579ull
#define P5 2870177450012600261ull

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t rd64(const uint8_t *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static inline uint64_t rd32(const uint8_t *p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline uint64_t xround(uint64_t acc, uint64_t in)
{
  return rotl(acc + in * P2, 31) * P1;
}

static inline uint64_t xmerge(uint64_t h, uint64_t v)
{
  return (h ^ xround(0, v)) * P1 + P4;
}

/* XXH64 (little-endian reads): ~10 GB/s, so the sink never limits a run. */
static uint64_t xxh64(const uint8_t *p, size_t len, uint64_t seed)
{
  const uint8_t *end = p + len;
  uint64_t h;
  if (len >= 32) {
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    for (; p + 32 <= end; p += 32) {
      v1 = xround(v1, rd64(p));
      v2 = xround(v2, rd64(p + 8));
      v3 = xround(v3, rd64(p + 16));
      v4 = xround(v4, rd64(p + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = xmerge(xmerge(xmerge(xmerge(h, v1), v2), v3), v4);
  } else {
    h = seed + P5;
  }
  h += len;
  for (; p + 8 <= end; p += 8)
    h = rotl(h ^ xround(0, rd64(p)), 27) * P1 + P4;
  if (p + 4 <= end) {
    h = rotl(h ^ (rd32(p) * P1), 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; p++)
    h = rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  return h ^ (h >> 32);
}

uint64_t sl_sink_row_hash(int64_t id, const uint8_t *payload, size_t len)
{
  return xxh64(payload, len, (uint64_t)id);
}

/* ---- the id set --------------------------------------------------------------- */

static size_t slot_of(uint64_t key, size_t cap)
{
  uint64_t z = key * 0x9e3779b97f4a7c15ull;
  return (size_t)((z ^ (z >> 29)) & (cap - 1));
}

/* Inserts @p key; false when it is already there. Room must exist. */
static bool set_insert(sl_sink *s, uint64_t key, uint32_t split, uint32_t *had)
{
  size_t i = slot_of(key, s->cap);
  while (s->key[i]) {
    if (s->key[i] == key) {
      *had = s->owner[i];
      return false;
    }
    i = (i + 1) & (s->cap - 1);
  }
  s->key[i] = key;
  s->owner[i] = split;
  s->used++;
  return true;
}

/* Removes @p key (present), shifting later members of its probe run back so
 * that lookups never stop early at the hole. */
static void set_remove(sl_sink *s, uint64_t key)
{
  size_t mask = s->cap - 1, i = slot_of(key, s->cap);
  while (s->key[i] != key)
    i = (i + 1) & mask;
  for (size_t j = (i + 1) & mask; s->key[j]; j = (j + 1) & mask) {
    size_t home = slot_of(s->key[j], s->cap);
    /* j's entry may fill the hole i when its home is not in (i, j]. */
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays)
      continue;
    s->key[i] = s->key[j];
    s->owner[i] = s->owner[j];
    i = j;
  }
  s->key[i] = 0;
  s->used--;
}

/* Rebuilds the set with capacity @p cap; with @p filter, only the entries
 * whose split is kept (split < nkeep && keep[split]) survive. */
static int set_rebuild(sl_sink *s, size_t cap, bool filter, const bool *keep, uint32_t nkeep)
{
  uint64_t *key = calloc(cap, sizeof *key);
  uint32_t *owner = malloc(cap * sizeof *owner);
  if (!key || !owner) {
    free(key);
    free(owner);
    return SL_ENOMEM;
  }
  uint64_t *old_key = s->key;
  uint32_t *old_owner = s->owner;
  size_t old_cap = s->cap;
  s->key = key;
  s->owner = owner;
  s->cap = cap;
  s->used = 0;
  uint32_t dummy;
  for (size_t i = 0; i < old_cap; i++) {
    uint32_t sp = old_owner[i];
    if (old_key[i] && (!filter || (sp < nkeep && keep[sp])))
      set_insert(s, old_key[i], sp, &dummy);
  }
  free(old_key);
  free(old_owner);
  return 0;
}

/* Grows the set so that @p more inserts keep the load under 3/4. */
static int set_reserve(sl_sink *s, size_t more)
{
  size_t need = s->used + more, cap = s->cap;
  while (need > cap / 4 * 3)
    cap *= 2;
  return cap == s->cap ? 0 : set_rebuild(s, cap, false, NULL, 0);
}

/* ---- the sink ----------------------------------------------------------------- */

sl_sink *sl_sink_new(void)
{
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->cap = 1024;
  s->key = calloc(s->cap, sizeof *s->key);
  s->owner = malloc(s->cap * sizeof *s->owner);
  if (!s->key || !s->owner) {
    sl_sink_free(s);
    return NULL;
  }
  return s;
}

void sl_sink_free(sl_sink *s)
{
  if (!s)
    return;
  free(s->key);
  free(s->owner);
  free(s->split);
  free(s);
}

static int grow_splits(sl_sink *s, uint32_t split)
{
  if (split < s->nsplit)
    return 0;
  size_t n = s->nsplit ? s->nsplit : 16;
  while (n <= split)
    n *= 2;
  if (n > SIZE_MAX / sizeof(split_acc))
    return SL_ENOMEM;
  split_acc *a = realloc(s->split, n * sizeof *a);
  if (!a)
    return SL_ENOMEM;
  memset(a + s->nsplit, 0, (n - s->nsplit) * sizeof *a);
  s->split = a;
  s->nsplit = n;
  return 0;
}

/* Takes back the ids of rows [0, upto) of @p rows after a refused delivery. */
static void undo_ids(sl_sink *s, const sl_rows *rows, size_t upto)
{
  while (upto-- > 0)
    set_remove(s, (uint64_t)sl_rows_id(rows, upto) + 1);
}

int sl_sink_deliver(sl_sink *s, const sl_rows *rows)
{
  size_t n = sl_rows_count(rows);
  s->err[0] = '\0';
  if (set_reserve(s, n) != 0)
    return SL_ENOMEM;
  uint32_t max_split = 0;
  for (size_t i = 0; i < n; i++)
    max_split = sl_rows_split(rows, i) > max_split ? sl_rows_split(rows, i) : max_split;
  if (n && grow_splits(s, max_split) != 0)
    return SL_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    uint32_t had;
    int64_t id = sl_rows_id(rows, i);
    if (!set_insert(s, (uint64_t)id + 1, sl_rows_split(rows, i), &had)) {
      undo_ids(s, rows, i);
      snprintf(s->err, sizeof s->err, "row %lld delivered twice (split %u, first from split %u)",
               (long long)id, sl_rows_split(rows, i), had);
      return SL_ESTATE;
    }
  }
  for (size_t i = 0; i < n; i++) {
    split_acc *a = &s->split[sl_rows_split(rows, i)];
    a->rows++;
    a->bytes += sl_rows_len(rows, i);
    a->checksum += sl_sink_row_hash(sl_rows_id(rows, i), sl_rows_payload(rows, i),
                                    sl_rows_len(rows, i));
  }
  return 0;
}

int sl_sink_rollback(sl_sink *s, const bool *keep_split, uint32_t nsplits)
{
  int rc = set_rebuild(s, s->cap, true, keep_split, nsplits);
  if (rc)
    return rc;
  for (size_t i = 0; i < s->nsplit; i++)
    if (!(i < nsplits && keep_split[i]))
      memset(&s->split[i], 0, sizeof s->split[i]);
  return 0;
}

/* Totals over the splits; checksums add mod 2^64 like the rows' hashes. */
static split_acc total(const sl_sink *s)
{
  split_acc t = {0, 0, 0};
  for (size_t i = 0; i < s->nsplit; i++) {
    t.rows += s->split[i].rows;
    t.bytes += s->split[i].bytes;
    t.checksum += s->split[i].checksum;
  }
  return t;
}

uint64_t sl_sink_rows(const sl_sink *s) { return total(s).rows; }
uint64_t sl_sink_bytes(const sl_sink *s) { return total(s).bytes; }
uint64_t sl_sink_checksum(const sl_sink *s) { return total(s).checksum; }

uint64_t sl_sink_split_rows(const sl_sink *s, uint32_t split)
{
  return split < s->nsplit ? s->split[split].rows : 0;
}

uint64_t sl_sink_split_checksum(const sl_sink *s, uint32_t split)
{
  return split < s->nsplit ? s->split[split].checksum : 0;
}

const char *sl_sink_last_error(const sl_sink *s) { return s->err; }
