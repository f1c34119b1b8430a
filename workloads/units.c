#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "models/error.h"

typedef struct {
  const char *name;
  double scale; /* canonical units per one of this unit */
} sl__unit;

/* How a table of units matches what a spec writes. */
typedef struct {
  const sl__unit *units;
  bool any_case;       /* 150kb is 150 KB: nothing of this kind counts bits */
  bool bare_nonzero;   /* a bare number is in canonical units (bytes) */
} sl__unit_rules;

/* Case is folded for sizes, so one spelling of each unit is enough here. */
static const sl__unit sl__size_units[] = {
  {"B", 1},
  {"KB", 1e3},  {"MB", 1e6},  {"GB", 1e9},  {"TB", 1e12}, {"PB", 1e15},
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

static const sl__unit sl__no_units[] = {{NULL, 0}};

static const sl__unit_rules sl__size_rules = {sl__size_units, true, true};
static const sl__unit_rules sl__time_rules = {sl__time_units, true, false};
static const sl__unit_rules sl__bandwidth_rules = {sl__bandwidth_units, false, false};
static const sl__unit_rules sl__number_rules = {sl__no_units, false, true};

/* Why a value was refused; sl_value_explain() turns it into words. */
typedef enum {
  SL__V_OK,
  SL__V_MALFORMED,    /* no number where one belongs, or garbage after it */
  SL__V_NEEDS_UNIT,   /* a bare number the unit would decide */
  SL__V_UNKNOWN_UNIT, /* a unit the kind does not have */
  SL__V_CASE,         /* a bandwidth unit in the wrong case: bits or bytes? */
  SL__V_RANGE,        /* a number, but too large to hold */
} sl__verdict;

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

/* Converts the number in [s, end) with strtod; an overflow is out of range. */
static sl__verdict sl__convert(const char *s, const char *end, double *out)
{
  char buf[64];
  size_t len = (size_t)(end - s);
  if (len >= sizeof buf)
    return SL__V_RANGE; /* 64 digits: no quantity of ours is that precise */
  memcpy(buf, s, len);
  buf[len] = '\0';
  errno = 0;
  char *stop;
  double v = strtod(buf, &stop);
  if (stop != buf + len)
    return SL__V_MALFORMED;
  if ((errno == ERANGE && fabs(v) > 1.0) || !isfinite(v))
    return SL__V_RANGE;
  *out = v;
  return SL__V_OK;
}

static bool sl__same_name(const char *a, const char *b, size_t len, bool any_case)
{
  if (strlen(a) != len)
    return false;
  return any_case ? strncasecmp(a, b, len) == 0 : memcmp(a, b, len) == 0;
}

static const sl__unit *sl__find_unit(const sl__unit *units, const char *name, size_t len, bool any_case)
{
  for (const sl__unit *u = units; u->name; u++)
    if (sl__same_name(u->name, name, len, any_case))
      return u;
  return NULL;
}

/* The scale of the unit in [unit, unit + len), or why there is none. */
static sl__verdict sl__unit_scale(const sl__unit_rules *r, const char *unit, size_t len, double *scale)
{
  const sl__unit *u = sl__find_unit(r->units, unit, len, false);
  if (!u && r->any_case)
    u = sl__find_unit(r->units, unit, len, true);
  if (u) {
    *scale = u->scale;
    return SL__V_OK;
  }
  if (sl__find_unit(r->units, unit, len, true))
    return SL__V_CASE;
  return SL__V_UNKNOWN_UNIT;
}

/* number [unit]: the value in canonical units, or why it is not one. */
static sl__verdict sl__judge(const char *s, const sl__unit_rules *r, double *out)
{
  if (!s)
    return SL__V_MALFORMED;
  const char *start = sl__skip_space(s);
  const char *end = sl__scan_number(start);
  double v = 0, scale = 1;
  if (!end)
    return SL__V_MALFORMED;
  sl__verdict why = sl__convert(start, end, &v);
  if (why != SL__V_OK)
    return why;
  const char *unit = sl__skip_space(end);
  const char *unit_end = unit;
  while (*unit_end && !isspace((unsigned char)*unit_end))
    unit_end++;
  if (*sl__skip_space(unit_end) != '\0')
    return SL__V_MALFORMED;
  if (unit_end == unit) {
    /* zero is zero in every unit */
    if (!r->bare_nonzero && v != 0)
      return SL__V_NEEDS_UNIT;
  } else if (r->units == sl__no_units) {
    return SL__V_MALFORMED;
  } else if ((why = sl__unit_scale(r, unit, (size_t)(unit_end - unit), &scale)) != SL__V_OK) {
    return why;
  }
  if (!isfinite(v * scale))
    return SL__V_RANGE;
  *out = v * scale;
  return SL__V_OK;
}

static int sl__parse_scaled(const char *s, const sl__unit_rules *r, double *out)
{
  double v;
  if (sl__judge(s, r, &v) != SL__V_OK)
    return SL_EPARSE;
  *out = v;
  return 0;
}

int sl_parse_size(const char *s, double *out)
{
  return sl__parse_scaled(s, &sl__size_rules, out);
}

int sl_parse_time(const char *s, double *out)
{
  return sl__parse_scaled(s, &sl__time_rules, out);
}

int sl_parse_bandwidth(const char *s, double *out)
{
  return sl__parse_scaled(s, &sl__bandwidth_rules, out);
}

int sl_parse_number(const char *s, double *out)
{
  return sl__parse_scaled(s, &sl__number_rules, out);
}

/* A plain decimal integer, or why it is not one that fits an int64_t. */
static sl__verdict sl__judge_int(const char *s, int64_t *out)
{
  if (!s)
    return SL__V_MALFORMED;
  const char *start = sl__skip_space(s);
  const char *p = start;
  int digits = 0;
  if (*p == '+' || *p == '-')
    p++;
  p = sl__skip_digits(p, &digits);
  if (digits == 0 || *sl__skip_space(p) != '\0')
    return SL__V_MALFORMED;
  errno = 0;
  long long v = strtoll(start, NULL, 10);
  if (errno == ERANGE)
    return SL__V_RANGE;
  *out = (int64_t)v;
  return SL__V_OK;
}

int sl_parse_int(const char *s, int64_t *out)
{
  return sl__judge_int(s, out) == SL__V_OK ? 0 : SL_EPARSE;
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

/* ------------------------------------------------------------------------ */
/* Explaining a refusal                                                      */
/* ------------------------------------------------------------------------ */

static const sl__unit_rules *sl__rules_of(sl_value_kind kind)
{
  switch (kind) {
  case SL_VALUE_SIZE:
    return &sl__size_rules;
  case SL_VALUE_TIME:
    return &sl__time_rules;
  case SL_VALUE_BANDWIDTH:
    return &sl__bandwidth_rules;
  default:
    return &sl__number_rules;
  }
}

/* What a valid value of @p kind looks like, for a message. */
static const char *sl__example(sl_value_kind kind)
{
  switch (kind) {
  case SL_VALUE_SIZE:
    return "a size such as 100MB or 1.5GiB";
  case SL_VALUE_TIME:
    return "a time such as 0.5s, 5ms or 2min";
  case SL_VALUE_BANDWIDTH:
    return "a bandwidth such as 10Gbps or 1.25GB/s";
  case SL_VALUE_INT:
    return "a whole number";
  case SL_VALUE_PRICE:
    return "dollars, such as 1.212 or $0.384";
  default:
    return "a plain number";
  }
}

static const char *sl__kind_noun(sl_value_kind kind)
{
  return kind == SL_VALUE_SIZE ? "size" : kind == SL_VALUE_TIME ? "time" : "bandwidth";
}

char *sl_value_units(sl_value_kind kind, char *buf, size_t n)
{
  const sl__unit *units = sl__rules_of(kind)->units;
  size_t used = 0, count = 0;
  if (!buf || n == 0)
    return buf;
  buf[0] = '\0';
  while (units[count].name)
    count++;
  for (size_t i = 0; i < count && used < n; i++) {
    /* µs is us; listing both would only puzzle a reader */
    if (strcmp(units[i].name, "\xc2\xb5s") == 0)
      continue;
    const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
    int w = snprintf(buf + used, n - used, "%s%s", sep, units[i].name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  return buf;
}

/* The word after the number in @p s, for "unknown unit 'x'". */
static void sl__unit_text(const char *s, char *buf, size_t n)
{
  const char *p = sl__scan_number(sl__skip_space(s));
  p = p ? sl__skip_space(p) : s;
  size_t len = strcspn(p, " \t\r\n");
  snprintf(buf, n, "%.*s", (int)(len < 32 ? len : 32), p);
}

/* The units of the table that match @p unit but for case: "Gbps or GBps". */
static void sl__case_matches(const char *unit, char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  for (const sl__unit *u = sl__bandwidth_units; u->name && used < n; u++) {
    if (!sl__same_name(u->name, unit, strlen(unit), true))
      continue;
    int w = snprintf(buf + used, n - used, "%s%s", used ? " or " : "", u->name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

/* "out of range (at most 9223372036854775807)" for an integer. */
static char *sl__explain_int(const char *s, char *buf, size_t n)
{
  int64_t v;
  if (sl__judge_int(s, &v) == SL__V_RANGE)
    snprintf(buf, n, "out of range (from %lld to %lld)", (long long)INT64_MIN, (long long)INT64_MAX);
  else
    snprintf(buf, n, "expected %s", sl__example(SL_VALUE_INT));
  return buf;
}

bool sl_value_out_of_range(sl_value_kind kind, const char *s)
{
  double v;
  int64_t i;
  if (kind == SL_VALUE_INT)
    return sl__judge_int(s, &i) == SL__V_RANGE;
  if (kind == SL_VALUE_PRICE && s && *sl__skip_space(s) == '$')
    s = sl__skip_space(s) + 1;
  return sl__judge(s, sl__rules_of(kind), &v) == SL__V_RANGE;
}

char *sl_value_explain(sl_value_kind kind, const char *s, char *buf, size_t n)
{
  char units[128], unit[40], matches[64];
  double v;
  if (!buf || n == 0)
    return buf;
  if (kind == SL_VALUE_INT)
    return sl__explain_int(s, buf, n);
  if (kind == SL_VALUE_PRICE && s && *sl__skip_space(s) == '$')
    s = sl__skip_space(s) + 1;
  sl_value_units(kind, units, sizeof units);
  switch (sl__judge(s, sl__rules_of(kind), &v)) {
  case SL__V_NEEDS_UNIT: {
    const char *number = sl__skip_space(s);
    int len = (int)(sl__scan_number(number) - number);
    snprintf(buf, n, "a %s needs a unit: %s (such as %.*s%s)", sl__kind_noun(kind), units,
             len < 32 ? len : 32, number, kind == SL_VALUE_TIME ? "s" : "Gbps");
    break;
  }
  case SL__V_UNKNOWN_UNIT:
    sl__unit_text(s, unit, sizeof unit);
    snprintf(buf, n, "unknown unit '%s' (a %s takes %s)", unit, sl__kind_noun(kind), units);
    break;
  case SL__V_CASE:
    sl__unit_text(s, unit, sizeof unit);
    sl__case_matches(unit, matches, sizeof matches);
    snprintf(buf, n, "no unit '%s': bandwidth units are case-sensitive, b for bits and B for bytes "
             "(did you mean %s?)", unit, matches);
    break;
  case SL__V_RANGE:
    snprintf(buf, n, "out of range");
    break;
  default:
    snprintf(buf, n, "expected %s", sl__example(kind));
    break;
  }
  return buf;
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
