#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"

typedef struct {
  const char *name;
  double scale; /* canonical units per one of this unit */
} sl__unit;

static const sl__unit sl__size_units[] = {
  {"B", 1},
  {"KB", 1e3},  {"kB", 1e3},  {"MB", 1e6},  {"GB", 1e9},  {"TB", 1e12}, {"PB", 1e15},
  {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
  {NULL, 0},
};

static const sl__unit sl__time_units[] = {
  {"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ms", 1e-3},
  {"s", 1},     {"min", 60},  {"h", 3600},
  {NULL, 0},
};

/* Canonical bandwidth is bytes per second, so bit units carry a 1/8. */
static const sl__unit sl__bandwidth_units[] = {
  {"bps", 1.0 / 8},   {"Kbps", 1e3 / 8},   {"kbps", 1e3 / 8}, {"Mbps", 1e6 / 8},
  {"Gbps", 1e9 / 8},  {"Tbps", 1e12 / 8},
  {"B/s", 1},         {"KB/s", 1e3},       {"kB/s", 1e3},     {"MB/s", 1e6},
  {"GB/s", 1e9},      {"TB/s", 1e12},      {"KBps", 1e3},     {"MBps", 1e6},
  {"GBps", 1e9},      {"TBps", 1e12},
  {"KiB/s", 1024.0},  {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
  {NULL, 0},
};

static const char *sl__skip_space(const char *p)
{
  while (isspace((unsigned char)*p))
    p++;
  return p;
}

static const char *sl__skip_digits(const char *p, int *ndigits)
{
  while (isdigit((unsigned char)*p)) {
    p++;
    (*ndigits)++;
  }
  return p;
}

/*
 * The end of a decimal number at s ([+-]digits[.digits][e[+-]digits]), or
 * NULL. Our own grammar rather than strtod's alone, because strtod also takes
 * "inf", "nan" and hexadecimal, none of which belongs in a spec.
 */
static const char *sl__scan_number(const char *s)
{
  const char *p = s;
  int digits = 0;

  if (*p == '+' || *p == '-')
    p++;
  p = sl__skip_digits(p, &digits);
  if (*p == '.')
    p = sl__skip_digits(p + 1, &digits);
  if (digits == 0)
    return NULL;
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int exp_digits = 0;
    if (*q == '+' || *q == '-')
      q++;
    q = sl__skip_digits(q, &exp_digits);
    if (exp_digits > 0)
      p = q;
  }
  return p;
}

/* Converts the number in [s, end) with strtod; rejects overflow. */
static int sl__convert(const char *s, const char *end, double *out)
{
  char buf[64];
  size_t len = (size_t)(end - s);
  if (len >= sizeof buf)
    return SL_EPARSE;
  memcpy(buf, s, len);
  buf[len] = '\0';
  errno = 0;
  char *stop;
  double v = strtod(buf, &stop);
  if (stop != buf + len || (errno == ERANGE && fabs(v) > 1.0) || !isfinite(v))
    return SL_EPARSE;
  *out = v;
  return 0;
}

static const sl__unit *sl__find_unit(const sl__unit *units, const char *name, size_t len)
{
  for (const sl__unit *u = units; u->name; u++)
    if (strlen(u->name) == len && memcmp(u->name, name, len) == 0)
      return u;
  return NULL;
}

/* number [unit], where a missing unit means scale 1 when bare_ok. */
static int sl__parse_scaled(const char *s, const sl__unit *units, bool bare_ok, double *out)
{
  if (!s)
    return SL_EPARSE;
  const char *start = sl__skip_space(s);
  const char *end = sl__scan_number(start);
  double v;
  if (!end || sl__convert(start, end, &v) != 0)
    return SL_EPARSE;

  const char *unit = sl__skip_space(end);
  const char *unit_end = unit;
  while (*unit_end && !isspace((unsigned char)*unit_end))
    unit_end++;
  if (*sl__skip_space(unit_end) != '\0')
    return SL_EPARSE;

  double scale = 1;
  if (unit_end == unit) {
    if (!bare_ok)
      return SL_EPARSE;
  } else {
    const sl__unit *u = sl__find_unit(units, unit, (size_t)(unit_end - unit));
    if (!u)
      return SL_EPARSE;
    scale = u->scale;
  }
  if (!isfinite(v * scale))
    return SL_EPARSE;
  *out = v * scale;
  return 0;
}

int sl_parse_size(const char *s, double *out)
{
  return sl__parse_scaled(s, sl__size_units, true, out);
}

int sl_parse_time(const char *s, double *out)
{
  return sl__parse_scaled(s, sl__time_units, true, out);
}

int sl_parse_bandwidth(const char *s, double *out)
{
  return sl__parse_scaled(s, sl__bandwidth_units, false, out);
}

int sl_parse_number(const char *s, double *out)
{
  static const sl__unit none[] = {{NULL, 0}};
  return sl__parse_scaled(s, none, true, out);
}

int sl_parse_int(const char *s, int64_t *out)
{
  if (!s)
    return SL_EPARSE;
  const char *start = sl__skip_space(s);
  const char *p = start;
  int digits = 0;
  if (*p == '+' || *p == '-')
    p++;
  p = sl__skip_digits(p, &digits);
  if (digits == 0 || *sl__skip_space(p) != '\0')
    return SL_EPARSE;
  errno = 0;
  long long v = strtoll(start, NULL, 10);
  if (errno == ERANGE)
    return SL_EPARSE;
  *out = (int64_t)v;
  return 0;
}

int sl_parse_price(const char *s, double *out)
{
  if (!s)
    return SL_EPARSE;
  const char *p = sl__skip_space(s);
  if (*p == '$')
    p++;
  return sl_parse_number(p, out);
}

/*
 * Writes v / units[i].scale with the largest unit not above |v| (units in
 * descending order, the last one the fallback), four significant digits.
 */
static char *sl__format_scaled(double v, const sl__unit *units, int nunits, char *buf, size_t n)
{
  if (!buf || n == 0)
    return buf;
  if (!isfinite(v) || v == 0) {
    snprintf(buf, n, "%g %s", v, units[nunits - 1].name);
    return buf;
  }
  int i = 0;
  while (i < nunits - 1 && fabs(v) < units[i].scale)
    i++;
  /* 999.96 MB rounds to "1000 MB": say "1 GB" instead. */
  if (i > 0 && fabs(v) / units[i].scale >= 999.95)
    i--;
  snprintf(buf, n, "%.4g %s", v / units[i].scale, units[i].name);
  return buf;
}

char *sl_format_size(double bytes, char *buf, size_t n)
{
  static const sl__unit units[] = {
    {"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
  };
  return sl__format_scaled(bytes, units, 6, buf, n);
}

char *sl_format_time(double seconds, char *buf, size_t n)
{
  /* Seconds up to 1000 s, as JCTs are usually quoted; minutes up to 100 min. */
  static const sl__unit units[] = {
    {"h", 6000}, {"min", 1000}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
  };
  static const double divisor[] = {3600, 60, 1, 1e-3, 1e-6, 1e-9};
  if (!buf || n == 0)
    return buf;
  if (!isfinite(seconds) || seconds == 0) {
    snprintf(buf, n, "%g s", seconds);
    return buf;
  }
  int i = 0;
  while (i < 5 && fabs(seconds) < units[i].scale)
    i++;
  snprintf(buf, n, "%.4g %s", seconds / divisor[i], units[i].name);
  return buf;
}

char *sl_format_bandwidth(double bytes_per_s, char *buf, size_t n)
{
  static const sl__unit units[] = {
    {"Tbps", 1e12}, {"Gbps", 1e9}, {"Mbps", 1e6}, {"Kbps", 1e3}, {"bps", 1},
  };
  return sl__format_scaled(bytes_per_s * 8, units, 5, buf, n);
}
