/* sl_rows: row records plus one payload buffer, both grown by doubling. */
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "workloads/kernels.h"

void sl_rows_init(sl_rows *r)
{
  memset(r, 0, sizeof *r);
}

void sl_rows_free(sl_rows *r)
{
  free(r->row);
  free(r->data);
  sl_rows_init(r);
}

void sl_rows_reset(sl_rows *r)
{
  r->count = 0;
  r->bytes = 0;
}

void sl_rows_truncate(sl_rows *r, size_t count)
{
  if (count >= r->count)
    return;
  /* Payloads are in row order, so the kept ones end where row[count] began. */
  r->bytes = r->row[count].off;
  r->count = count;
}

void sl_rows_move(sl_rows *dst, sl_rows *src)
{
  if (dst == src)
    return;
  sl_rows_free(dst);
  *dst = *src;
  sl_rows_init(src);
}

/* Smallest doubling of @p cap (from @p floor) that holds @p need. */
static size_t grown(size_t cap, size_t need, size_t floor)
{
  size_t c = cap ? cap : floor;
  while (c < need) {
    if (c > SIZE_MAX / 2)
      return need;
    c *= 2;
  }
  return c;
}

int sl_rows_reserve(sl_rows *r, size_t rows, size_t bytes)
{
  if (rows > SIZE_MAX / sizeof(sl_row) - r->count || bytes > SIZE_MAX - r->bytes)
    return SL_ENOMEM;
  if (r->count + rows > r->cap) {
    size_t cap = grown(r->cap, r->count + rows, 64);
    sl_row *row = realloc(r->row, cap * sizeof *row);
    if (!row)
      return SL_ENOMEM;
    r->row = row;
    r->cap = cap;
  }
  /* data is allocated even for empty payloads: sl_rows_add() returns a
   * non-NULL pointer for a zero-length row. */
  if (r->bytes + bytes > r->data_cap || !r->data) {
    size_t cap = grown(r->data_cap, r->bytes + bytes, 4096);
    uint8_t *data = realloc(r->data, cap);
    if (!data)
      return SL_ENOMEM;
    r->data = data;
    r->data_cap = cap;
  }
  return 0;
}

int sl_rows_shrink_to_fit(sl_rows *r)
{
  if (r->count == 0) {
    sl_rows_free(r);
    return 0;
  }
  sl_row *row = realloc(r->row, r->count * sizeof *row);
  if (!row)
    return SL_ENOMEM;
  r->row = row;
  r->cap = r->count;
  if (r->bytes > 0) {
    uint8_t *data = realloc(r->data, r->bytes);
    if (!data)
      return SL_ENOMEM;
    r->data = data;
    r->data_cap = r->bytes;
  }
  return 0;
}

uint8_t *sl_rows_add(sl_rows *r, int64_t id, uint32_t split, size_t len)
{
  if (len > UINT32_MAX || sl_rows_reserve(r, 1, len) != 0)
    return NULL;
  sl_row *row = &r->row[r->count++];
  row->id = id;
  row->split = split;
  row->len = (uint32_t)len;
  row->off = r->bytes;
  r->bytes += len;
  return r->data + row->off;
}

int sl_rows_open_raw(sl_rows *r, size_t count, size_t bytes, void **records, void **payload)
{
  sl_rows_reset(r);
  if (sl_rows_reserve(r, count, bytes) != 0)
    return SL_ENOMEM;
  *records = r->row;
  *payload = r->data;
  return 0;
}

int sl_rows_commit_raw(sl_rows *r, size_t count, size_t bytes, size_t *bad_row)
{
  uint64_t off = 0;
  for (size_t i = 0; i < count; i++) {
    if (r->row[i].off != off || r->row[i].len > bytes - off) {
      *bad_row = i;
      sl_rows_reset(r);
      return SL_EPROTO;
    }
    off += r->row[i].len;
  }
  if (off != bytes) {
    *bad_row = count;
    sl_rows_reset(r);
    return SL_EPROTO;
  }
  r->count = count;
  r->bytes = bytes;
  return 0;
}

int sl_rows_append(sl_rows *r, int64_t id, uint32_t split, const void *payload,
                   size_t len)
{
  if (len > UINT32_MAX)
    return SL_EINVAL;
  uint8_t *p = sl_rows_add(r, id, split, len);
  if (!p)
    return SL_ENOMEM;
  if (len)
    memcpy(p, payload, len);
  return 0;
}

int sl_rows_append_range(sl_rows *dst, const sl_rows *src, size_t first, size_t count)
{
  if (dst == src || first > src->count || count > src->count - first)
    return SL_EINVAL;
  if (count == 0)
    return 0;
  size_t begin = src->row[first].off;
  size_t end = first + count < src->count ? src->row[first + count].off : src->bytes;
  if (sl_rows_reserve(dst, count, end - begin) != 0)
    return SL_ENOMEM;
  if (end > begin)
    memcpy(dst->data + dst->bytes, src->data + begin, end - begin);
  /* Rebase the offsets: the payloads moved as one block. */
  for (size_t i = 0; i < count; i++) {
    sl_row row = src->row[first + i];
    row.off = row.off - begin + dst->bytes;
    dst->row[dst->count + i] = row;
  }
  dst->count += count;
  dst->bytes += end - begin;
  return 0;
}

void sl_rows_trim_last(sl_rows *r, size_t len)
{
  if (r->count == 0)
    return;
  sl_row *row = &r->row[r->count - 1];
  if (len >= row->len)
    return;
  r->bytes -= row->len - len;
  row->len = (uint32_t)len;
}

size_t sl_rows_footprint(const sl_rows *r)
{
  return r->cap * sizeof(sl_row) + r->data_cap;
}
