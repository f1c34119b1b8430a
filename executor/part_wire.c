/* A partition on the wire: header, records, payloads (part_wire.h). */
#include "part_wire.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void put_u64(uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

void sl_part_wire_segs(const sl_rows *rows, sl_part_wire *out)
{
  put_u64(out->hdr, rows->count);
  put_u64(out->hdr + 8, rows->bytes);
  out->seg[0] = (sl_xfer_seg){out->hdr, SL_PART_WIRE_HEADER};
  out->seg[1] = (sl_xfer_seg){rows->row, rows->count * sizeof(sl_row)};
  out->seg[2] = (sl_xfer_seg){rows->data, rows->bytes};
  out->nsegs = 3;
}

size_t sl_part_wire_size(const sl_rows *rows)
{
  return SL_PART_WIRE_HEADER + rows->count * sizeof(sl_row) + rows->bytes;
}

void sl_part_wire_reader_init(sl_part_wire_reader *r, sl_rows *out)
{
  *r = (sl_part_wire_reader){.out = out, .total = UINT64_MAX};
  sl_rows_reset(out);
}

/* The header is in: the sizes it says must add up to the partition's,
 * and the rows get room for them. */
static int open_rows(sl_part_wire_reader *r, char *err, size_t errlen)
{
  r->count = get_u64(r->hdr);
  r->bytes = get_u64(r->hdr + 8);
  uint64_t body = r->total - SL_PART_WIRE_HEADER;
  if (r->count > body / sizeof(sl_row) || r->bytes != body - r->count * sizeof(sl_row)) {
    snprintf(err, errlen, "a partition of %llu bytes that says %llu rows of %llu payload bytes",
             (unsigned long long)r->total, (unsigned long long)r->count, (unsigned long long)r->bytes);
    return SL_EPROTO;
  }
  void *rec, *pay;
  if (sl_rows_open_raw(r->out, (size_t)r->count, (size_t)r->bytes, &rec, &pay) < 0)
    return SL_ENOMEM;
  r->records = rec;
  r->payload = pay;
  return 0;
}

/* Copies what of @p data (at partition offset @p at) falls in the region
 * [@p from, @p from + @p n) of the partition to @p dst, at the same place. */
static void copy_region(uint8_t *dst, uint64_t from, uint64_t n, uint64_t at, const uint8_t *data, size_t len)
{
  uint64_t lo = at > from ? at : from, hi = at + len < from + n ? at + len : from + n;
  if (lo < hi)
    memcpy(dst + (lo - from), data + (lo - at), (size_t)(hi - lo));
}

int sl_part_wire_reader_put(sl_part_wire_reader *r, uint64_t total, uint64_t offset, const void *data, size_t len,
                            char *err, size_t errlen)
{
  if (r->total == UINT64_MAX) {
    if (total < SL_PART_WIRE_HEADER) {
      snprintf(err, errlen, "a partition of %llu bytes, shorter than its header", (unsigned long long)total);
      return SL_EPROTO;
    }
    r->total = total;
  }
  if (total != r->total || offset != r->got || len > r->total - r->got) {
    snprintf(err, errlen, "bytes %llu to %llu of a partition of %llu bytes, after %llu", (unsigned long long)offset,
             (unsigned long long)(offset + len), (unsigned long long)total, (unsigned long long)r->got);
    return SL_EPROTO;
  }
  const uint8_t *p = data;
  bool had_header = r->got >= SL_PART_WIRE_HEADER;
  copy_region(r->hdr, 0, SL_PART_WIRE_HEADER, offset, p, len);
  r->got += len;
  int rc = 0;
  if (!had_header && r->got >= SL_PART_WIRE_HEADER && (rc = open_rows(r, err, errlen)) != 0)
    return rc;
  if (r->got >= SL_PART_WIRE_HEADER) {
    uint64_t rec_bytes = r->count * sizeof(sl_row);
    copy_region(r->records, SL_PART_WIRE_HEADER, rec_bytes, offset, p, len);
    copy_region(r->payload, SL_PART_WIRE_HEADER + rec_bytes, r->bytes, offset, p, len);
  }
  return 0;
}

int sl_part_wire_reader_end(sl_part_wire_reader *r, char *err, size_t errlen)
{
  if (r->total == UINT64_MAX || r->got < SL_PART_WIRE_HEADER) {
    snprintf(err, errlen, "a partition of %llu bytes, shorter than its header",
             (unsigned long long)(r->total == UINT64_MAX ? 0 : r->total));
    sl_rows_reset(r->out);
    return SL_EPROTO;
  }
  if (r->got != r->total) {
    snprintf(err, errlen, "a partition of %llu bytes cut at %llu", (unsigned long long)r->total,
             (unsigned long long)r->got);
    sl_rows_reset(r->out);
    return SL_EPROTO;
  }
  size_t bad;
  if (sl_rows_commit_raw(r->out, (size_t)r->count, (size_t)r->bytes, &bad) != 0) {
    snprintf(err, errlen, "row %llu of a partition: its payload is not where the rows before it end",
             (unsigned long long)bad);
    return SL_EPROTO;
  }
  return 0;
}
