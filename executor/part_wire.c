/* A partition on the wire: header, records, payloads (part_wire.h). */
#include "part_wire.h"

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

int sl_part_wire_decode(const void *buf, size_t len, sl_rows *out, char *err, size_t errlen)
{
  const uint8_t *p = buf;
  sl_rows_reset(out);
  if (len < SL_PART_WIRE_HEADER) {
    snprintf(err, errlen, "a partition of %zu bytes, shorter than its header", len);
    return SL_EPROTO;
  }
  uint64_t count = get_u64(p), bytes = get_u64(p + 8);
  uint64_t body = len - SL_PART_WIRE_HEADER;
  if (count > body / sizeof(sl_row) || bytes != body - count * sizeof(sl_row)) {
    snprintf(err, errlen, "a partition of %zu bytes that says %llu rows of %llu payload bytes", len,
             (unsigned long long)count, (unsigned long long)bytes);
    return SL_EPROTO;
  }
  const uint8_t *rec = p + SL_PART_WIRE_HEADER, *data = rec + count * sizeof(sl_row);
  if (sl_rows_reserve(out, (size_t)count, (size_t)bytes) < 0)
    return SL_ENOMEM;
  uint64_t off = 0;
  for (uint64_t i = 0; i < count; i++) {
    sl_row r;
    memcpy(&r, rec + i * sizeof r, sizeof r);
    if (r.off != off || r.len > bytes - off) {
      snprintf(err, errlen, "row %llu of a partition: its payload is not where the rows before it end",
               (unsigned long long)i);
      sl_rows_reset(out);
      return SL_EPROTO;
    }
    if (sl_rows_append(out, r.id, r.split, data + off, r.len) < 0) {
      sl_rows_reset(out);
      return SL_ENOMEM;
    }
    off += r.len;
  }
  return 0;
}
