/*
 * The typed INI reader on a schema of its own: the callbacks see sections,
 * keys and ends in file order; every type parses, stores and refuses as
 * documented; defaults, required keys, key lists and the reference come
 * from the same table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/error.h"
#include "workloads/typed_ini.h"

/* A record with a field of every stored type. */
typedef struct {
  double wait, size, rate, ratio, price;
  int count, colour;
  int64_t big;
  char label[8];
  unsigned given;
} record;

enum { KIND_PLAIN, KIND_FANCY };
static const char *const kinds[] = {"plain", "fancy", NULL};
static const char *const colours[] = {"red", "green", "blue", NULL};

#define R(field) offsetof(record, field)
static const sl_ini_key keys[] = {
  {.name = "wait", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG, .offset = R(wait), .dflt = "2s",
   .doc = "how long", .tag = 1},
  {.name = "size", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS, .offset = R(size), .scale = 1e-6,
   .kinds = 1u << KIND_FANCY, .required = 1u << KIND_FANCY, .doc = "how big, stored in MB", .tag = 2},
  {.name = "rate", .type = SL_INI_BANDWIDTH, .offset = R(rate), .doc = "how fast"},
  {.name = "ratio", .type = SL_INI_REAL, .range = SL_INI_ONE, .offset = R(ratio), .dflt = "1", .doc = "how much"},
  {.name = "price", .type = SL_INI_PRICE, .offset = R(price), .dflt_doc = "free", .doc = "how dear"},
  {.name = "count", .type = SL_INI_INT, .offset = R(count), .doc = "how many"},
  {.name = "big", .type = SL_INI_INT64, .offset = R(big), .doc = "how many more"},
  {.name = "colour", .type = SL_INI_CHOICE, .choices = colours, .offset = R(colour), .doc = "which"},
  {.name = "label", .type = SL_INI_NAME, .offset = R(label), .size = 8, .doc = "called"},
  {.name = "note", .type = SL_INI_TEXT, .doc = "ignored"},
  {.name = "tags", .type = SL_INI_LABELS, .doc = "the caller's"},
  {.name = NULL},
};

/* What the callbacks saw, and the record of the last section. */
typedef struct {
  char log[512];
  record r;
  int kind;
} seen;

static void note(seen *s, const char *fmt, ...)
{
  size_t used = strlen(s->log);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->log + used, sizeof s->log - used, fmt, ap);
  va_end(ap);
}

static int on_section(sl_ini *ini, const char *name, int line)
{
  seen *s = sl_ini_user(ini);
  memset(&s->r, 0, sizeof s->r);
  s->kind = strcmp(name, "fancy") == 0 ? KIND_FANCY : KIND_PLAIN;
  note(s, "[%s]@%d ", name, line);
  return 0;
}

static int on_key(sl_ini *ini, const char *key, const char *value, int line)
{
  seen *s = sl_ini_user(ini);
  const sl_ini_key *k = sl_ini_find_key(keys, key);
  note(s, "%s=%s@%d ", key, value, line);
  if (!k)
    return sl_ini_fail(ini, line, "unknown key '%s'", key);
  if (!sl_ini_key_applies(k, s->kind))
    return sl_ini_fail(ini, line, "'%s' is for fancy sections", key);
  if (sl_ini_set(ini, k, &s->r, value, line) != 0)
    return sl_ini_error(ini);
  s->r.given |= k->tag;
  return 0;
}

static int on_end(sl_ini *ini)
{
  seen *s = sl_ini_user(ini);
  note(s, "end(%d keys) ", sl_ini_nkeys(ini));
  return sl_ini_check_required(ini, keys, s->kind, "this section", 1);
}

static const sl_ini_ops ops = {on_section, on_key, on_end};

static int parse_text(const char *text, seen *s, char *err, size_t errlen, char path[64])
{
  strcpy(path, "/tmp/sl_test_typed_ini_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  memset(s, 0, sizeof *s);
  int rc = sl_ini_parse(path, &ops, s, err, errlen);
  unlink(path);
  return rc;
}

static void expect_error(const char *text, int line, const char *needle)
{
  seen s;
  char err[512] = "", path[64], prefix[96];
  int rc = parse_text(text, &s, err, sizeof err, path);
  assert_int_equal(rc, SL_EPARSE);
  snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
  if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, needle))
    fail_msg("'%s' is not '%s... %s'", err, prefix, needle);
}

static void test_callbacks_in_file_order(void **state)
{
  (void)state;
  seen s;
  char err[256] = "", path[64];
  assert_int_equal(parse_text("; comment\n[plain]\nwait = 1s ; inline\n  ratio=2\n\n[fancy]\nsize = 3MB\n", &s,
                              err, sizeof err, path), 0);
  assert_string_equal(s.log, "[plain]@2 wait=1s@3 ratio=2@4 end(2 keys) [fancy]@6 size=3MB@7 end(1 keys) ");
  assert_true(s.r.size == 3);
  assert_int_equal(s.r.given, 2);
}

static void test_types(void **state)
{
  (void)state;
  seen s;
  char err[256] = "", path[64];
  int rc = parse_text("[plain]\nwait = 250ms\nrate = 8Mbps\nratio = 1.5\nprice = $0.5\ncount = 7\n"
                      "big = 9223372036854775807\ncolour = blue\nlabel = a-1.b\nnote = anything at all\n",
                      &s, err, sizeof err, path);
  if (rc)
    fail_msg("%s", err);
  assert_true(s.r.wait == 0.25);
  assert_true(s.r.rate == 1e6);
  assert_true(s.r.ratio == 1.5);
  assert_true(s.r.price == 0.5);
  assert_int_equal(s.r.count, 7);
  assert_true(s.r.big == INT64_MAX); /* exact, from the text */
  assert_int_equal(s.r.colour, 2);
  assert_string_equal(s.r.label, "a-1.b");
}

static void test_refusals(void **state)
{
  (void)state;
  expect_error("[plain]\nwait = 5\n", 2, "malformed value '5' for 'wait': a time needs a unit");
  expect_error("[plain]\nwait = -1s\n", 2, "'wait' must be >= 0, got '-1s'");
  expect_error("[plain]\nratio = 0.5\n", 2, "'ratio' must be >= 1");
  expect_error("[plain]\nrate = 8mbps\n", 2, "case-sensitive");
  expect_error("[plain]\ncount = 2147483648\n", 2, "value '2147483648' for 'count' is out of range (at most 2147483647)");
  expect_error("[plain]\nbig = 9223372036854775808\n", 2, "value '9223372036854775808' for 'big' is out of range");
  expect_error("[plain]\ncount = 1.5\n", 2, "malformed value '1.5' for 'count': expected a whole number");
  expect_error("[plain]\ncolour = mauve\n", 2, "unknown colour 'mauve' (expected red, green or blue)");
  expect_error("[plain]\nlabel = a b\n", 2, "label name 'a b' must be letters, digits");
  expect_error("[plain]\nlabel = abcdefgh\n", 2, "label name 'abcdefgh' is longer than 7 characters");
  expect_error("[plain]\ntags = a, b\n", 2, "read by its section");
  expect_error("[plain]\nsize = 1MB\n", 2, "'size' is for fancy sections");
  expect_error("[fancy]\nwait = 1s\n", 1, "this section is missing required key 'size'");
  expect_error("[plain]\nwait = 1s\nwait = 2s\n", 3, "duplicate key 'wait' (first set at line 2)");
  expect_error("wait = 1s\n", 1, "key 'wait' is outside any section");
  expect_error("[plain]\nwait 1s\n", 2, "expected 'key = value', '[section]' or a comment");
}

/* Lines are at most 197 characters, but a comment may run on. */
static void test_long_lines(void **state)
{
  (void)state;
  char text[700];
  seen s;
  char err[256] = "", path[64];
  snprintf(text, sizeof text, "# %0300d\n[plain]\nwait = 1s\n", 0);
  assert_int_equal(parse_text(text, &s, err, sizeof err, path), 0);
  assert_true(s.r.wait == 1);
  snprintf(text, sizeof text, "[plain]\nnote = %0300d\n", 0);
  expect_error(text, 2, "line longer than 197 characters");
}

static void test_missing_file(void **state)
{
  (void)state;
  char err[256];
  assert_int_equal(sl_ini_parse("/nonexistent/x.ini", &ops, NULL, err, sizeof err), SL_EIO);
  assert_non_null(strstr(err, "/nonexistent/x.ini: cannot open"));
}

static void test_defaults_and_lists(void **state)
{
  (void)state;
  record r = {0};
  char err[256], names[256];
  assert_int_equal(sl_ini_set_defaults(keys, &r, err, sizeof err), 0);
  assert_true(r.wait == 2);
  assert_true(r.ratio == 1);
  assert_string_equal(sl_ini_key_names(keys, -1, names, sizeof names),
                      "wait, size, rate, ratio, price, count, big, colour, label, note or tags");
  assert_string_equal(sl_ini_key_names(keys, KIND_PLAIN, names, sizeof names),
                      "wait, rate, ratio, price, count, big, colour, label, note or tags");
  static const sl_ini_key broken[] = {{.name = "wait", .type = SL_INI_TIME, .dflt = "2"}, {.name = NULL}};
  assert_int_equal(sl_ini_set_defaults(broken, &r, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "default of 'wait' does not parse"));
}

static void test_reference(void **state)
{
  (void)state;
  char *text = NULL;
  size_t len = 0;
  sl_ini_schema with_kinds = {.title = "[plain] or [fancy]", .intro = "Two kinds.", .keys = keys, .kinds = kinds};
  sl_ini_schema without = {.title = "[plain]", .keys = keys};
  FILE *f = open_memstream(&text, &len);
  sl_ini_write_reference(&with_kinds, f);
  sl_ini_write_reference(&without, f);
  fclose(f);
  assert_non_null(strstr(text, "### [plain] or [fancy]\n\nTwo kinds.\n\n| key | type | unit | default | kinds | meaning |\n"));
  assert_non_null(strstr(text, "| `wait` | time >= 0 | s | 2s | all | how long |\n"));
  assert_non_null(strstr(text, "| `size` | size > 0 | B | none | fancy (required) | how big, stored in MB |\n"));
  assert_non_null(strstr(text, "| `price` | price |  | free | all | how dear |\n"));
  assert_non_null(strstr(text, "| `colour` | one of red, green or blue |  | none | all | which |\n"));
  /* without a kinds column, the default column says what is required */
  assert_non_null(strstr(text, "| `size` | size > 0 | B | required | how big, stored in MB |\n"));
  free(text);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_callbacks_in_file_order),
    cmocka_unit_test(test_types),
    cmocka_unit_test(test_refusals),
    cmocka_unit_test(test_long_lines),
    cmocka_unit_test(test_missing_file),
    cmocka_unit_test(test_defaults_and_lists),
    cmocka_unit_test(test_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
