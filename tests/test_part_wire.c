/* The bytes of a partition between worker processes (executor/part_wire.h):
 * what goes out comes back row for row, and what a peer sends that is not
 * a partition is refused with a message, never read past its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/part_wire.h"

/* The wire form of @p rows, in one buffer, as a fetch receives it. */
static uint8_t *flatten(const sl_rows *rows, size_t *len)
{
  sl_part_wire w;
  sl_part_wire_segs(rows, &w);
  *len = sl_part_wire_size(rows);
  uint8_t *buf = malloc(*len ? *len : 1), *at = buf;
  assert_non_null(buf);
  size_t sum = 0;
  for (int i = 0; i < w.nsegs; i++) {
    if (w.seg[i].len)
      memcpy(at, w.seg[i].data, w.seg[i].len);
    at += w.seg[i].len;
    sum += w.seg[i].len;
  }
  assert_int_equal(sum, *len);
  return buf;
}

/* The @p len bytes at @p buf read back into @p out as one piece, as a
 * partition in a single frame arrives. */
static int decode(const void *buf, size_t len, sl_rows *out, char *err, size_t errlen)
{
  sl_part_wire_reader r;
  sl_part_wire_reader_init(&r, out);
  int rc = len ? sl_part_wire_reader_put(&r, len, 0, buf, len, err, errlen) : 0;
  return rc ? rc : sl_part_wire_reader_end(&r, err, errlen);
}

/* Rows of lengths 0, 1, ... @p n - 1, ids from 1000, split = id % 7. */
static void sample_rows(sl_rows *r, size_t n)
{
  sl_rows_init(r);
  for (size_t i = 0; i < n; i++) {
    uint8_t payload[64];
    for (size_t k = 0; k < i; k++)
      payload[k] = (uint8_t)(i * 31 + k);
    assert_int_equal(sl_rows_append(r, 1000 + (int64_t)i, (uint32_t)(i % 7), payload, i), 0);
  }
}

static void test_round_trip(void **state)
{
  (void)state;
  for (size_t n = 0; n < 40; n += 13) {
    sl_rows rows, back;
    sample_rows(&rows, n);
    sl_rows_init(&back);
    size_t len;
    uint8_t *buf = flatten(&rows, &len);
    char err[200];
    assert_int_equal(decode(buf, len, &back, err, sizeof err), 0);
    assert_int_equal(sl_rows_count(&back), n);
    assert_int_equal(sl_rows_bytes(&back), sl_rows_bytes(&rows));
    for (size_t i = 0; i < n; i++) {
      assert_int_equal(sl_rows_id(&back, i), sl_rows_id(&rows, i));
      assert_int_equal(sl_rows_split(&back, i), sl_rows_split(&rows, i));
      assert_int_equal(sl_rows_len(&back, i), sl_rows_len(&rows, i));
      if (sl_rows_len(&rows, i))
        assert_memory_equal(sl_rows_payload(&back, i), sl_rows_payload(&rows, i), sl_rows_len(&rows, i));
    }
    free(buf);
    sl_rows_free(&rows);
    sl_rows_free(&back);
  }
}

static void refused(const uint8_t *buf, size_t len, const char *what)
{
  sl_rows back;
  sl_rows_init(&back);
  char err[200] = "";
  /* a copy of exactly its size: a sanitized build sees a read past it */
  uint8_t *exact = malloc(len ? len : 1);
  assert_non_null(exact);
  if (len)
    memcpy(exact, buf, len);
  int rc = decode(exact, len, &back, err, sizeof err);
  if (rc != SL_EPROTO || !strstr(err, what))
    fail_msg("expected SL_EPROTO with \"%s\", got %d: %s", what, rc, err);
  assert_int_equal(sl_rows_count(&back), 0);
  free(exact);
  sl_rows_free(&back);
}

static void test_what_is_not_a_partition_is_refused(void **state)
{
  (void)state;
  sl_rows rows;
  sample_rows(&rows, 5);
  size_t len;
  uint8_t *buf = flatten(&rows, &len);
  /* cut anywhere: the counts no longer match the bytes */
  for (size_t cut = 0; cut < len; cut++)
    refused(buf, cut, cut < SL_PART_WIRE_HEADER ? "shorter than its header" : "that says");
  /* a row count too large for the bytes, or payload bytes that do not add up */
  uint8_t *bad = malloc(len);
  assert_non_null(bad);
  memcpy(bad, buf, len);
  bad[0] = 200;
  refused(bad, len, "that says 200 rows");
  memcpy(bad, buf, len);
  bad[8] += 1;
  refused(bad, len, "payload bytes");
  /* a record whose payload does not follow the one before it */
  memcpy(bad, buf, len);
  sl_row r;
  memcpy(&r, bad + SL_PART_WIRE_HEADER + 2 * sizeof r, sizeof r);
  r.off += 1;
  memcpy(bad + SL_PART_WIRE_HEADER + 2 * sizeof r, &r, sizeof r);
  refused(bad, len, "row 2");
  memcpy(bad, buf, len);
  memcpy(&r, bad + SL_PART_WIRE_HEADER + 4 * sizeof r, sizeof r);
  r.len = 1u << 30; /* past the payloads */
  memcpy(bad + SL_PART_WIRE_HEADER + 4 * sizeof r, &r, sizeof r);
  refused(bad, len, "row 4");
  free(bad);
  free(buf);
  sl_rows_free(&rows);
}

/* Feeds the @p len bytes at @p buf to a reader in pieces of @p piece. */
static int read_in_pieces(const uint8_t *buf, size_t len, size_t piece, sl_rows *out, char *err, size_t errlen)
{
  sl_part_wire_reader r;
  sl_part_wire_reader_init(&r, out);
  for (size_t at = 0; at < len; at += piece) {
    size_t n = len - at < piece ? len - at : piece;
    int rc = sl_part_wire_reader_put(&r, len, at, buf + at, n, err, errlen);
    if (rc)
      return rc;
  }
  return sl_part_wire_reader_end(&r, err, errlen);
}

/* A partition read as it arrives, in pieces of any size (chunks that cut
 * the header, a record or a payload anywhere), is the partition sent; and
 * pieces out of order, of another partition or too few are refused. */
static void test_read_in_pieces(void **state)
{
  (void)state;
  sl_rows rows, back;
  sample_rows(&rows, 30);
  sl_rows_init(&back);
  size_t len;
  uint8_t *buf = flatten(&rows, &len);
  char err[200];
  const size_t pieces[] = {1, 3, 7, 16, 17, 24, 100, 4096};
  for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
    assert_int_equal(read_in_pieces(buf, len, pieces[k], &back, err, sizeof err), 0);
    assert_int_equal(sl_rows_count(&back), 30);
    assert_int_equal(sl_rows_bytes(&back), sl_rows_bytes(&rows));
    for (size_t i = 0; i < 30; i++) {
      assert_int_equal(sl_rows_id(&back, i), sl_rows_id(&rows, i));
      assert_int_equal(sl_rows_len(&back, i), sl_rows_len(&rows, i));
      if (sl_rows_len(&rows, i))
        assert_memory_equal(sl_rows_payload(&back, i), sl_rows_payload(&rows, i), sl_rows_len(&rows, i));
    }
  }
  sl_part_wire_reader r;
  sl_part_wire_reader_init(&r, &back);
  assert_int_equal(sl_part_wire_reader_put(&r, len, 0, buf, 20, err, sizeof err), 0);
  assert_int_equal(sl_part_wire_reader_put(&r, len, 21, buf + 21, 5, err, sizeof err), SL_EPROTO);
  assert_non_null(strstr(err, "after 20"));
  assert_int_equal(sl_part_wire_reader_put(&r, len + 1, 20, buf + 20, 5, err, sizeof err), SL_EPROTO);
  assert_int_equal(sl_part_wire_reader_end(&r, err, sizeof err), SL_EPROTO);
  assert_non_null(strstr(err, "cut at 20"));
  assert_int_equal(sl_rows_count(&back), 0);
  free(buf);
  sl_rows_free(&rows);
  sl_rows_free(&back);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_what_is_not_a_partition_is_refused),
    cmocka_unit_test(test_read_in_pieces),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
