/*
 * Fuzz target: the unit parsers and formatters of workloads/units.c, which
 * every spec value and cost file goes through. The input is one value as a
 * spec would write it (up to the first NUL byte).
 *
 * Checks, besides crashes: a parsed value is finite; a formatted value reads
 * back (the formatters print four significant digits, so within 0.1%); a
 * formatter never writes past a small buffer.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_io.h"
#include "workloads/units.h"

typedef int (*parse_fn)(const char *, double *);
typedef char *(*format_fn)(double, char *, size_t);

/* Formats @p v, reads it back with @p parse, and compares; also formats into 4 bytes. */
static void check_round_trip(double v, parse_fn parse, format_fn format, const char *text)
{
  char buf[SL_FORMAT_MAX], tiny[4];
  format(v, tiny, sizeof tiny);
  if (strnlen(tiny, sizeof tiny) == sizeof tiny)
    sl_fuzz_fail("a formatter left a small buffer unterminated", text);
  /* beyond 1e300 the bits of a bandwidth overflow; nothing real is that big */
  if (fabs(v) > 1e300)
    return;
  double back;
  format(v, buf, sizeof buf);
  if (parse(buf, &back) != 0)
    sl_fuzz_fail("a formatted value does not parse back", buf);
  if (fabs(back - v) > 1e-3 * fabs(v))
    sl_fuzz_fail("a formatted value parses back to another value", buf);
}

static void check_parse(parse_fn parse, format_fn format, const char *text)
{
  double v = 12345; /* a failed parse must leave this alone */
  if (parse(text, &v) != 0) {
    if (v != 12345)
      sl_fuzz_fail("a failed parse changed its output", text);
    return;
  }
  if (!isfinite(v))
    sl_fuzz_fail("a parse gave a non-finite value", text);
  if (format)
    check_round_trip(v, parse, format, text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  check_parse(sl_parse_size, sl_format_size, text);
  check_parse(sl_parse_time, sl_format_time, text);
  check_parse(sl_parse_bandwidth, sl_format_bandwidth, text);
  check_parse(sl_parse_number, NULL, text);
  check_parse(sl_parse_price, NULL, text);
  int64_t i = 42;
  if (sl_parse_int(text, &i) != 0 && i != 42)
    sl_fuzz_fail("a failed integer parse changed its output", text);
  free(text);
  return 0;
}
