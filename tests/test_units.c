/* Numbers with units: every unit, whitespace, rejects, and format round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "models/error.h"
#include "workloads/units.h"

/* Relative tolerance: unit scales are exact in decimal, not in binary. */
static void assert_close(double got, double want)
{
  double tol = 1e-12 * (fabs(want) > 1 ? fabs(want) : 1);
  if (fabs(got - want) > tol)
    fail_msg("got %.17g, want %.17g", got, want);
}

static void check(int (*parse)(const char *, double *), const char *s, double want)
{
  double v = -12345;
  int rc = parse(s, &v);
  if (rc != 0)
    fail_msg("'%s' was rejected", s);
  assert_close(v, want);
}

static void reject(int (*parse)(const char *, double *), const char *s)
{
  double v = 42;
  if (parse(s, &v) != SL_EPARSE)
    fail_msg("'%s' was accepted as %g", s, v);
  assert_true(v == 42); /* untouched on error */
}

static void test_sizes(void **state)
{
  (void)state;
  check(sl_parse_size, "100MB", 100e6);
  check(sl_parse_size, "100 MB", 100e6);
  check(sl_parse_size, "  1.5GB\t", 1.5e9);
  check(sl_parse_size, "512", 512);
  check(sl_parse_size, "512B", 512);
  check(sl_parse_size, "2KB", 2000);
  check(sl_parse_size, "2kB", 2000);
  check(sl_parse_size, "1TB", 1e12);
  check(sl_parse_size, "1PB", 1e15);
  check(sl_parse_size, "1KiB", 1024);
  check(sl_parse_size, "1MiB", 1048576);
  check(sl_parse_size, "2GiB", 2147483648.0);
  check(sl_parse_size, "1TiB", 1099511627776.0);
  check(sl_parse_size, ".5MB", 0.5e6);
  check(sl_parse_size, "1e3KB", 1e6);
  check(sl_parse_size, "0", 0);
  check(sl_parse_size, "-5MB", -5e6); /* the sign is the caller's rule */
  check(sl_parse_size, "9633792B", 9633792);
  /* no size counts bits, so case cannot mislead */
  check(sl_parse_size, "150kb", 150e3);
  check(sl_parse_size, "100mb", 100e6);
  check(sl_parse_size, "100Mb", 100e6);
  check(sl_parse_size, "2gib", 2147483648.0);
  check(sl_parse_size, "7b", 7);
}

static void test_size_rejects(void **state)
{
  (void)state;
  reject(sl_parse_size, "");
  reject(sl_parse_size, "   ");
  reject(sl_parse_size, "MB");
  reject(sl_parse_size, "100MBx");
  reject(sl_parse_size, "100 MB x");
  reject(sl_parse_size, "100XB");
  reject(sl_parse_size, "nan");
  reject(sl_parse_size, "inf");
  reject(sl_parse_size, "infMB");
  reject(sl_parse_size, "0x10");
  reject(sl_parse_size, "1e400");
  reject(sl_parse_size, "1e300TB"); /* finite number, infinite bytes */
  reject(sl_parse_size, "1,5GB");
  reject(sl_parse_size, "+");
  reject(sl_parse_size, ".");
  reject(sl_parse_size, NULL);
}

static void test_times(void **state)
{
  (void)state;
  check(sl_parse_time, "0.5s", 0.5);
  check(sl_parse_time, "5ms", 5e-3);
  check(sl_parse_time, "50us", 50e-6);
  check(sl_parse_time, "50\xc2\xb5s", 50e-6);
  check(sl_parse_time, "10ns", 10e-9);
  check(sl_parse_time, "2min", 120);
  check(sl_parse_time, "1.5h", 5400);
  check(sl_parse_time, " 1.01362 s ", 1.01362);
  check(sl_parse_time, "5MS", 5e-3);
  check(sl_parse_time, "2 Min", 120);
  check(sl_parse_time, "0", 0); /* zero is zero in every unit */
  check(sl_parse_time, "0.0", 0);
  reject(sl_parse_time, "3"); /* seconds? milliseconds? */
  reject(sl_parse_time, "-8");
  reject(sl_parse_time, "");
  reject(sl_parse_time, "5 sec");
  reject(sl_parse_time, "5m"); /* minutes or metres? say min */
  reject(sl_parse_time, "5s5");
  reject(sl_parse_time, "nan s");
  reject(sl_parse_time, "-inf");
}

static void test_bandwidths(void **state)
{
  (void)state;
  check(sl_parse_bandwidth, "10Gbps", 1.25e9);
  check(sl_parse_bandwidth, "100 Gbps", 12.5e9);
  check(sl_parse_bandwidth, "8bps", 1);
  check(sl_parse_bandwidth, "8Kbps", 1000);
  check(sl_parse_bandwidth, "8kbps", 1000);
  check(sl_parse_bandwidth, "8Mbps", 1e6);
  check(sl_parse_bandwidth, "8Tbps", 1e12);
  check(sl_parse_bandwidth, "1B/s", 1);
  check(sl_parse_bandwidth, "1KB/s", 1e3);
  check(sl_parse_bandwidth, "1.25GB/s", 1.25e9);
  check(sl_parse_bandwidth, "3MB/s", 3e6);
  check(sl_parse_bandwidth, "2GBps", 2e9);
  check(sl_parse_bandwidth, "2MBps", 2e6);
  check(sl_parse_bandwidth, "1MiB/s", 1048576);
  reject(sl_parse_bandwidth, "10");       /* bits or bytes? */
  reject(sl_parse_bandwidth, "10 GB");    /* a size, not a rate */
  reject(sl_parse_bandwidth, "10gbps");  /* Gbps or GBps: off by eight */
  reject(sl_parse_bandwidth, "10Gb/s");  /* not GB/s: b is bits */
  reject(sl_parse_bandwidth, "10mbps");
  check(sl_parse_bandwidth, "0", 0);
  reject(sl_parse_bandwidth, "10Gbps/s");
  reject(sl_parse_bandwidth, "");
}

static void test_numbers(void **state)
{
  (void)state;
  check(sl_parse_number, "0.99", 0.99);
  check(sl_parse_number, " 1 ", 1);
  check(sl_parse_number, "-2.5e-3", -2.5e-3);
  reject(sl_parse_number, "0.99s");
  reject(sl_parse_number, "1/2");
  reject(sl_parse_number, "nan");
  reject(sl_parse_number, "");

  check(sl_parse_price, "1.212", 1.212);
  check(sl_parse_price, "$0.384", 0.384);
  check(sl_parse_price, " $ 2 ", 2);
  reject(sl_parse_price, "$");
  reject(sl_parse_price, "1.2 USD");
}

static void test_ints(void **state)
{
  (void)state;
  int64_t v = 0;
  assert_int_equal(sl_parse_int("160", &v), 0);
  assert_int_equal(v, 160);
  assert_int_equal(sl_parse_int("  -7 ", &v), 0);
  assert_int_equal(v, -7);
  assert_int_equal(sl_parse_int("+12907", &v), 0);
  assert_int_equal(v, 12907);
  assert_int_equal(sl_parse_int("9223372036854775807", &v), 0);
  assert_true(v == INT64_MAX);
  v = 99;
  assert_int_equal(sl_parse_int("9223372036854775808", &v), SL_EPARSE);
  assert_int_equal(sl_parse_int("1.5", &v), SL_EPARSE);
  assert_int_equal(sl_parse_int("1e3", &v), SL_EPARSE);
  assert_int_equal(sl_parse_int("10 rows", &v), SL_EPARSE);
  assert_int_equal(sl_parse_int("", &v), SL_EPARSE);
  assert_int_equal(sl_parse_int("-", &v), SL_EPARSE);
  assert_int_equal(sl_parse_int("0x10", &v), SL_EPARSE);
  assert_int_equal(v, 99);
}

static void test_format(void **state)
{
  (void)state;
  char buf[SL_FORMAT_MAX];
  assert_string_equal(sl_format_size(100e6, buf, sizeof buf), "100 MB");
  assert_string_equal(sl_format_size(1.5e9, buf, sizeof buf), "1.5 GB");
  assert_string_equal(sl_format_size(512, buf, sizeof buf), "512 B");
  assert_string_equal(sl_format_size(0, buf, sizeof buf), "0 B");
  assert_string_equal(sl_format_size(999.99e6, buf, sizeof buf), "1 GB");
  assert_string_equal(sl_format_size(9633792, buf, sizeof buf), "9.634 MB");
  assert_string_equal(sl_format_time(0.5, buf, sizeof buf), "500 ms");
  assert_string_equal(sl_format_time(561.6, buf, sizeof buf), "561.6 s");
  assert_string_equal(sl_format_time(3667.8, buf, sizeof buf), "61.13 min");
  assert_string_equal(sl_format_time(9000, buf, sizeof buf), "2.5 h");
  assert_string_equal(sl_format_time(50e-6, buf, sizeof buf), "50 us");
  assert_string_equal(sl_format_time(0, buf, sizeof buf), "0 s");
  assert_string_equal(sl_format_bandwidth(1.25e9, buf, sizeof buf), "10 Gbps");
  assert_string_equal(sl_format_bandwidth(12.5e9, buf, sizeof buf), "100 Gbps");

  char tiny[4];
  sl_format_size(123456789, tiny, sizeof tiny); /* truncates, never overflows */
  assert_int_equal(strlen(tiny), 3);
}

static void expect_explained(sl_value_kind kind, const char *s, const char *needle)
{
  char buf[SL_EXPLAIN_MAX];
  sl_value_explain(kind, s, buf, sizeof buf);
  if (!strstr(buf, needle))
    fail_msg("'%s' explained as '%s', which does not say '%s'", s, buf, needle);
}

/* Every refusal says what to fix. */
static void test_explain(void **state)
{
  (void)state;
  expect_explained(SL_VALUE_TIME, "8", "a time needs a unit: ns, us, ms, s, min or h (such as 8s)");
  expect_explained(SL_VALUE_TIME, " 8 ", "(such as 8s)");
  expect_explained(SL_VALUE_TIME, "5 parsecs", "unknown unit 'parsecs' (a time takes ns, us, ms, s, min or h)");
  expect_explained(SL_VALUE_TIME, "soon", "expected a time such as 0.5s");
  expect_explained(SL_VALUE_SIZE, "1e400", "out of range");
  expect_explained(SL_VALUE_SIZE, "1e300TB", "out of range");
  expect_explained(SL_VALUE_SIZE, "3 bananas", "unknown unit 'bananas' (a size takes B, KB, MB");
  expect_explained(SL_VALUE_BANDWIDTH, "10", "a bandwidth needs a unit");
  expect_explained(SL_VALUE_BANDWIDTH, "10gbps", "case-sensitive, b for bits and B for bytes (did you mean Gbps or GBps?)");
  expect_explained(SL_VALUE_BANDWIDTH, "10Gb/s", "did you mean GB/s?");
  expect_explained(SL_VALUE_INT, "99999999999999999999", "out of range (from -9223372036854775808 to 9223372036854775807)");
  expect_explained(SL_VALUE_INT, "1.5", "expected a whole number");
  expect_explained(SL_VALUE_NUMBER, "0.99s", "expected a plain number");
  expect_explained(SL_VALUE_NUMBER, "1e999", "out of range");
  expect_explained(SL_VALUE_PRICE, "$1e999", "out of range");
  expect_explained(SL_VALUE_PRICE, "1.2 USD", "expected dollars");

  char units[128];
  assert_string_equal(sl_value_units(SL_VALUE_TIME, units, sizeof units), "ns, us, ms, s, min or h");
  assert_string_equal(sl_value_units(SL_VALUE_NUMBER, units, sizeof units), "");
}

/* What a formatter writes, the parser reads back (to four digits). */
static void test_round_trip(void **state)
{
  (void)state;
  const double values[] = {1, 999, 1234, 98765, 4.2e6, 128e6, 7.77e9, 3e12, 2e15};
  char buf[SL_FORMAT_MAX];
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    double v;
    assert_int_equal(sl_parse_size(sl_format_size(values[i], buf, sizeof buf), &v), 0);
    assert_true(fabs(v - values[i]) <= 5e-4 * values[i]);
    assert_int_equal(sl_parse_time(sl_format_time(values[i] / 1e6, buf, sizeof buf), &v), 0);
    assert_true(fabs(v - values[i] / 1e6) <= 5e-4 * values[i] / 1e6);
    assert_int_equal(sl_parse_bandwidth(sl_format_bandwidth(values[i], buf, sizeof buf), &v), 0);
    assert_true(fabs(v - values[i]) <= 5e-4 * values[i]);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sizes),      cmocka_unit_test(test_size_rejects),
    cmocka_unit_test(test_times),      cmocka_unit_test(test_bandwidths),
    cmocka_unit_test(test_numbers),    cmocka_unit_test(test_ints),
    cmocka_unit_test(test_format),     cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_explain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
