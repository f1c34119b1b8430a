#include "typed_ini.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "units.h"

/* Specs are a few hundred lines; a megabyte means the wrong file was given. */
#define SL__INI_MAX_BYTES (1 << 20)
#define SL__INI_MAX_KEYS 64
#define SL__INI_KEY_MAX 64

/* ------------------------------------------------------------------------ */
/* The reader                                                                */
/* ------------------------------------------------------------------------ */

/*
 * One parse. inih in this build does not pass line numbers to the handler,
 * so our reader feeds it one line per call and counts; the handler reads the
 * count. The reader also spots section headers itself, because inih only
 * reports sections through their keys, and an empty section or the line of
 * a header is what our messages need.
 */
struct sl_ini {
  const char *path;
  const char *text;
  size_t len, pos;
  int lineno;
  bool in_section;
  struct {
    char name[SL__INI_KEY_MAX];
    int line;
  } keys[SL__INI_MAX_KEYS]; /* keys of the current section, in file order */
  int nkeys;
  const sl_ini_ops *ops;
  void *user;
  int rc, err_line; /* the first error: later ones are consequences */
  char *err;
  size_t errlen;
};

static void sl__msg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void sl__msg(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  if (!err || errlen == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int sl_ini_fail(sl_ini *ini, int line, const char *fmt, ...)
{
  if (ini->rc)
    return ini->rc;
  ini->rc = SL_EPARSE;
  ini->err_line = line;
  if (!ini->err || ini->errlen == 0)
    return ini->rc;
  int n = snprintf(ini->err, ini->errlen, "%s:%d: ", ini->path, line);
  if (n >= 0 && (size_t)n < ini->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ini->err + n, ini->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return ini->rc;
}

void *sl_ini_user(const sl_ini *ini)
{
  return ini->user;
}

const char *sl_ini_path(const sl_ini *ini)
{
  return ini->path;
}

int sl_ini_error(const sl_ini *ini)
{
  return ini->rc;
}

int sl_ini_key_line(const sl_ini *ini, const char *name)
{
  for (int i = 0; i < ini->nkeys; i++)
    if (strcmp(ini->keys[i].name, name) == 0)
      return ini->keys[i].line;
  return 0;
}

int sl_ini_nkeys(const sl_ini *ini)
{
  return ini->nkeys;
}

const char *sl_ini_key_at(const sl_ini *ini, int i, int *line)
{
  if (i < 0 || i >= ini->nkeys)
    return NULL;
  if (line)
    *line = ini->keys[i].line;
  return ini->keys[i].name;
}

void sl_ini_trim_copy(char *dst, size_t n, const char *s, size_t len)
{
  while (len > 0 && isspace((unsigned char)*s)) {
    s++;
    len--;
  }
  while (len > 0 && isspace((unsigned char)s[len - 1]))
    len--;
  if (len >= n)
    len = n - 1;
  memcpy(dst, s, len);
  dst[len] = '\0';
}

static int sl__begin_section(sl_ini *ini, const char *line)
{
  const char *close = strchr(line, ']');
  if (!close)
    return 0; /* inih reports the malformed header */
  char name[INI_MAX_LINE];
  sl_ini_trim_copy(name, sizeof name, line + 1, (size_t)(close - line - 1));
  if (ini->in_section && ini->ops->end(ini) != 0)
    return ini->rc;
  ini->in_section = true;
  ini->nkeys = 0;
  return ini->ops->section(ini, name, ini->lineno);
}

/*
 * fgets-like reader over the file in memory. Leading blanks are dropped so
 * that inih never takes an indented line as the continuation of the previous
 * value: a spec line means what it says on its own.
 */
static char *sl__ini_reader(char *str, int num, void *stream)
{
  sl_ini *ini = stream;
  if (ini->rc || ini->pos >= ini->len)
    return NULL;
  const char *line = ini->text + ini->pos;
  const char *nl = memchr(line, '\n', ini->len - ini->pos);
  size_t len = nl ? (size_t)(nl - line) + 1 : ini->len - ini->pos;
  ini->pos += len;
  ini->lineno++;
  if (ini->lineno == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
    line += 3;
    len -= 3;
  }
  while (len > 0 && (*line == ' ' || *line == '\t')) {
    line++;
    len--;
  }
  size_t content = len;
  while (content > 0 && (line[content - 1] == '\n' || line[content - 1] == '\r'))
    content--;
  /* A comment says nothing to the parser, however long (a cost file's
   * header names a run folder of any length): keep its first character. */
  if ((*line == '#' || *line == ';') && content + 3 > (size_t)num)
    content = 1;
  /* inih wants room for "\r\n\0" after the longest line */
  if (content + 3 > (size_t)num) {
    sl_ini_fail(ini, ini->lineno, "line longer than %d characters", num - 3);
    return NULL;
  }
  /* One newline, however many CRs the line ended with: they would not fit. */
  memcpy(str, line, content);
  memcpy(str + content, "\n", 2);
  if (str[0] == '[' && sl__begin_section(ini, str) != 0)
    return NULL;
  return str;
}

static int sl__ini_handler(void *user, const char *section, const char *name, const char *value)
{
  sl_ini *ini = user;
  int line = ini->lineno;
  (void)section; /* ours, trimmed, is in the parser state */
  if (ini->rc)
    return 0;
  if (!ini->in_section)
    return !sl_ini_fail(ini, line, "key '%s' is outside any section", name);
  int first = sl_ini_key_line(ini, name);
  if (first)
    return !sl_ini_fail(ini, line, "duplicate key '%s' (first set at line %d)", name, first);
  if (ini->nkeys == SL__INI_MAX_KEYS)
    return !sl_ini_fail(ini, line, "more than %d keys in one section", SL__INI_MAX_KEYS);
  snprintf(ini->keys[ini->nkeys].name, SL__INI_KEY_MAX, "%s", name);
  ini->keys[ini->nkeys].line = line;
  ini->nkeys++;
  return ini->ops->key(ini, name, value, line) == 0;
}

/* Length of the valid UTF-8 sequence at s (2 to 4 bytes), or 0. */
static size_t sl__utf8_len(const unsigned char *s, size_t avail)
{
  /* The second byte's range excludes overlong forms and surrogates. */
  unsigned char c = s[0], lo = 0x80, hi = 0xBF;
  size_t n;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80;
    hi = c == 0xED ? 0x9F : 0xBF;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (n > avail || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t k = 2; k < n; k++)
    if ((s[k] & 0xC0) != 0x80)
      return 0;
  return n;
}

/* A spec is UTF-8 text: say so before inih makes nonsense of a binary file. */
static int sl__check_text(sl_ini *ini)
{
  const unsigned char *s = (const unsigned char *)ini->text;
  int line = 1;
  for (size_t i = 0; i < ini->len;) {
    unsigned char c = s[i];
    if (c == '\n') {
      line++;
      i++;
    } else if (c == 0) {
      return sl_ini_fail(ini, line, "binary file (NUL byte); a spec is INI text");
    } else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      return sl_ini_fail(ini, line, "control character 0x%02x: not INI text (a binary file?)", c);
    } else if (c < 0x80) {
      i++;
    } else {
      size_t n = sl__utf8_len(s + i, ini->len - i);
      if (n == 0)
        return sl_ini_fail(ini, line, "invalid UTF-8 (byte 0x%02x); is this a binary file?", c);
      i += n;
    }
  }
  return 0;
}

/* The whole file, NUL-terminated, into *text (caller frees). */
static int sl__read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    sl__msg(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return SL_EIO;
  }
  int rc = 0;
  char *buf = malloc(SL__INI_MAX_BYTES + 2);
  if (!buf) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    rc = SL_ENOMEM;
    goto close_file;
  }
  size_t n = fread(buf, 1, SL__INI_MAX_BYTES + 1, f);
  if (ferror(f)) {
    sl__msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    rc = SL_EIO;
  } else if (n > SL__INI_MAX_BYTES) {
    sl__msg(err, errlen, "%s:1: larger than %d bytes; not a spec file", path, SL__INI_MAX_BYTES);
    rc = SL_EPARSE;
  }
  if (rc) {
    free(buf);
    goto close_file;
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
close_file:
  fclose(f);
  return rc;
}

/* Feeds the text to inih and closes the last section; returns the first error. */
static int sl__run(sl_ini *ini)
{
  if (sl__check_text(ini) != 0)
    return ini->rc;
  int ret = ini_parse_stream(sl__ini_reader, ini, sl__ini_handler, ini);
  if (ret == -2) {
    ini->rc = SL_ENOMEM;
    sl__msg(ini->err, ini->errlen, "%s: %s", ini->path, sl_strerror(SL_ENOMEM));
  } else if (ret > 0 && (!ini->rc || ret < ini->err_line)) {
    ini->rc = 0; /* a syntax error inih saw before ours */
    sl_ini_fail(ini, ret, "expected 'key = value', '[section]' or a comment");
  }
  if (!ini->rc && ini->in_section)
    ini->ops->end(ini);
  return ini->rc;
}

int sl_ini_parse(const char *path, const sl_ini_ops *ops, void *user, char *err, size_t errlen)
{
  char *text = NULL;
  size_t len = 0;
  if (!path || !ops)
    return SL_EINVAL;
  int rc = sl__read_file(path, &text, &len, err, errlen);
  if (rc)
    return rc;
  sl_ini *ini = calloc(1, sizeof *ini);
  if (!ini) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    rc = SL_ENOMEM;
    goto free_text;
  }
  *ini = (sl_ini){.path = path, .text = text, .len = len, .ops = ops, .user = user, .err = err,
                  .errlen = errlen};
  rc = sl__run(ini);
  free(ini);
free_text:
  free(text);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Typed keys                                                                */
/* ------------------------------------------------------------------------ */

const sl_ini_key *sl_ini_find_key(const sl_ini_key *keys, const char *name)
{
  for (const sl_ini_key *k = keys; k->name; k++)
    if (strcmp(k->name, name) == 0)
      return k;
  return NULL;
}

bool sl_ini_key_applies(const sl_ini_key *k, int kind)
{
  return k->kinds == 0 || (kind >= 0 && (k->kinds & (1u << kind)));
}

/* Names end up in CSV columns and in messages: keep them plain. */
static bool sl__valid_name(const char *name)
{
  if (!*name)
    return false;
  for (const char *p = name; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
      return false;
  return true;
}

int sl_ini_check_name(sl_ini *ini, const char *what, const char *name, size_t size, int line)
{
  if (!sl__valid_name(name))
    return sl_ini_fail(ini, line, "%s '%s' must be letters, digits, '_', '-' or '.'", what, name);
  if (strlen(name) >= size)
    return sl_ini_fail(ini, line, "%s '%s' is longer than %zu characters", what, name, size - 1);
  return 0;
}

static sl_value_kind sl__value_kind(sl_ini_type type)
{
  switch (type) {
  case SL_INI_TIME:
    return SL_VALUE_TIME;
  case SL_INI_SIZE:
    return SL_VALUE_SIZE;
  case SL_INI_BANDWIDTH:
    return SL_VALUE_BANDWIDTH;
  case SL_INI_PRICE:
    return SL_VALUE_PRICE;
  case SL_INI_INT:
  case SL_INI_INT64:
    return SL_VALUE_INT;
  default:
    return SL_VALUE_NUMBER;
  }
}

static int sl__parse_typed(sl_ini_type type, const char *value, double *v)
{
  int64_t i = 0;
  int rc;
  switch (type) {
  case SL_INI_TIME:
    return sl_parse_time(value, v);
  case SL_INI_SIZE:
    return sl_parse_size(value, v);
  case SL_INI_BANDWIDTH:
    return sl_parse_bandwidth(value, v);
  case SL_INI_PRICE:
    return sl_parse_price(value, v);
  case SL_INI_INT:
  case SL_INI_INT64:
    rc = sl_parse_int(value, &i);
    *v = (double)i;
    return rc;
  default:
    return sl_parse_number(value, v);
  }
}

/* The key's value is not one of its type: say what is wrong with it. */
static int sl__malformed(sl_ini *ini, const sl_ini_key *k, const char *value, int line)
{
  char why[SL_EXPLAIN_MAX];
  sl_value_kind kind = sl__value_kind(k->type);
  if (sl_value_out_of_range(kind, value))
    return sl_ini_fail(ini, line, "value '%s' for '%s' is %s", value, k->name,
                       sl_value_explain(kind, value, why, sizeof why));
  return sl_ini_fail(ini, line, "malformed value '%s' for '%s': %s", value, k->name,
                     sl_value_explain(kind, value, why, sizeof why));
}

static int sl__check_range(sl_ini *ini, const sl_ini_key *k, double v, const char *value, int line)
{
  static const char *const rule[] = {"", ">= 0", "> 0", ">= 1"};
  bool ok = k->range == SL_INI_ANY || (k->range == SL_INI_NONNEG && v >= 0) ||
            (k->range == SL_INI_POS && v > 0) || (k->range == SL_INI_ONE && v >= 1);
  if (!ok)
    return sl_ini_fail(ini, line, "'%s' must be %s, got '%s'", k->name, rule[k->range], value);
  if (k->type == SL_INI_INT && v > INT_MAX)
    return sl_ini_fail(ini, line, "value '%s' for '%s' is out of range (at most %d)", value, k->name, INT_MAX);
  return 0;
}

/* Stores a number of key @p k: @p value is its text, @p v its parsed value. */
static void sl__store_number(const sl_ini_key *k, void *record, const char *value, double v)
{
  char *field = (char *)record + k->offset;
  if (k->type == SL_INI_INT) {
    int i = (int)v;
    memcpy(field, &i, sizeof i);
  } else if (k->type == SL_INI_INT64) {
    /* From the text, exact, where a double rounds past 2^53 (and 2^63 - 1
     * rounds to 2^63, which no int64_t holds); it parsed before. */
    int64_t i = 0;
    sl_parse_int(value, &i);
    memcpy(field, &i, sizeof i);
  } else {
    v *= k->scale != 0 ? k->scale : 1;
    memcpy(field, &v, sizeof v);
  }
}

/* "source, map or sink": the choices of a CHOICE key. */
static char *sl__choice_list(const sl_ini_key *k, char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; k->choices[i] && used < n; i++) {
    const char *sep = i == 0 ? "" : k->choices[i + 1] ? ", " : " or ";
    int w = snprintf(buf + used, n - used, "%s%s", sep, k->choices[i]);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  return buf;
}

static int sl__set_choice(sl_ini *ini, const sl_ini_key *k, void *record, const char *value, int line)
{
  char list[256];
  for (int i = 0; k->choices[i]; i++)
    if (strcmp(k->choices[i], value) == 0) {
      memcpy((char *)record + k->offset, &i, sizeof i);
      return 0;
    }
  return sl_ini_fail(ini, line, "unknown %s '%s' (expected %s)", k->name, value,
                     sl__choice_list(k, list, sizeof list));
}

int sl_ini_set(sl_ini *ini, const sl_ini_key *k, void *record, const char *value, int line)
{
  double v = 0;
  switch (k->type) {
  case SL_INI_TEXT:
    return 0;
  case SL_INI_NAME: {
    /* "accelerator name 'a/100' must be ...", but "name 'x y' must be ..." */
    char what[SL__INI_KEY_MAX + 8];
    snprintf(what, sizeof what, "%s%s", k->name, strcmp(k->name, "name") == 0 ? "" : " name");
    if (sl_ini_check_name(ini, what, value, k->size, line) != 0)
      return ini->rc;
    snprintf((char *)record + k->offset, k->size, "%s", value);
    return 0;
  }
  case SL_INI_CHOICE:
    return sl__set_choice(ini, k, record, value, line);
  case SL_INI_LABELS:
    return sl_ini_fail(ini, line, "key '%s' is read by its section, not by sl_ini_set()", k->name);
  default:
    break;
  }
  if (sl__parse_typed(k->type, value, &v) != 0)
    return sl__malformed(ini, k, value, line);
  if (sl__check_range(ini, k, v, value, line) != 0)
    return ini->rc;
  sl__store_number(k, record, value, v);
  return 0;
}

/* A reader that fails without a file, for the defaults. */
static int sl__no_section(sl_ini *ini, const char *name, int line)
{
  (void)name;
  return sl_ini_fail(ini, line, "no sections here");
}

int sl_ini_set_defaults(const sl_ini_key *keys, void *record, char *err, size_t errlen)
{
  static const sl_ini_ops ops = {sl__no_section, NULL, NULL};
  sl_ini ini = {.path = "(default)", .ops = &ops, .err = err, .errlen = errlen};
  for (const sl_ini_key *k = keys; k->name; k++) {
    if (!k->dflt)
      continue;
    ini.rc = 0;
    if (sl_ini_set(&ini, k, record, k->dflt, 0) != 0) {
      char why[256];
      snprintf(why, sizeof why, "%s", err && errlen ? err : "");
      sl__msg(err, errlen, "default of '%s' does not parse: %s", k->name, why);
      return SL_EINVAL;
    }
  }
  return 0;
}

int sl_ini_check_required(sl_ini *ini, const sl_ini_key *keys, int kind, const char *what, int line)
{
  for (const sl_ini_key *k = keys; k->name; k++) {
    bool required = kind >= 0 ? (k->required & (1u << kind)) != 0 : k->required != 0;
    if (required && !sl_ini_key_line(ini, k->name))
      return sl_ini_fail(ini, line, "%s is missing required key '%s'", what, k->name);
  }
  return 0;
}

char *sl_ini_key_names(const sl_ini_key *keys, int kind, char *buf, size_t n)
{
  size_t used = 0, count = 0, listed = 0;
  if (!buf || n == 0)
    return buf;
  buf[0] = '\0';
  for (const sl_ini_key *k = keys; k->name; k++)
    count += kind < 0 || sl_ini_key_applies(k, kind);
  for (const sl_ini_key *k = keys; k->name && used < n; k++) {
    if (kind >= 0 && !sl_ini_key_applies(k, kind))
      continue;
    listed++;
    const char *sep = listed == 1 ? "" : listed == count ? " or " : ", ";
    int w = snprintf(buf + used, n - used, "%s%s", sep, k->name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  return buf;
}

/* ------------------------------------------------------------------------ */
/* The reference                                                             */
/* ------------------------------------------------------------------------ */

const char *sl_ini_type_name(sl_ini_type type)
{
  static const char *const names[] = {
    [SL_INI_TIME] = "time",       [SL_INI_SIZE] = "size",     [SL_INI_BANDWIDTH] = "bandwidth",
    [SL_INI_REAL] = "number",     [SL_INI_PRICE] = "price",   [SL_INI_INT] = "integer",
    [SL_INI_INT64] = "integer",   [SL_INI_NAME] = "name",     [SL_INI_TEXT] = "text",
    [SL_INI_CHOICE] = "choice",   [SL_INI_LABELS] = "names",
  };
  return type <= SL_INI_LABELS ? names[type] : "?";
}

/* The type column: "time >= 0", "choice: source, map or sink". */
static void sl__type_cell(const sl_ini_key *k, char *buf, size_t n)
{
  static const char *const rule[] = {"", " >= 0", " > 0", " >= 1"};
  char list[256];
  if (k->type == SL_INI_CHOICE)
    snprintf(buf, n, "one of %s", sl__choice_list(k, list, sizeof list));
  else if (k->type == SL_INI_LABELS)
    snprintf(buf, n, "names, comma separated");
  else
    snprintf(buf, n, "%s%s", sl_ini_type_name(k->type), rule[k->range]);
}

/* The kinds column: "all", or the names of the kinds that take the key. */
static void sl__kinds_cell(const sl_ini_schema *s, const sl_ini_key *k, char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  if (k->kinds == 0) {
    snprintf(buf, n, "all%s", k->required ? " (required)" : "");
    return;
  }
  for (int i = 0; s->kinds[i] && used < n; i++) {
    if (!(k->kinds & (1u << i)))
      continue;
    int w = snprintf(buf + used, n - used, "%s%s%s", used ? ", " : "", s->kinds[i],
                     k->required & (1u << i) ? " (required)" : "");
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

/* The default column: the value, the rule, "required" or "none". */
static const char *sl__default_cell(const sl_ini_key *k, bool has_kinds)
{
  if (k->dflt)
    return k->dflt;
  if (k->dflt_doc)
    return k->dflt_doc;
  /* with a kinds column, that column says which kinds require the key */
  if (k->required && !has_kinds)
    return "required";
  return "none";
}

void sl_ini_write_reference(const sl_ini_schema *s, FILE *f)
{
  bool has_kinds = s->kinds != NULL;
  char type[320], kinds[320];
  fprintf(f, "### %s\n\n", s->title);
  if (s->intro)
    fprintf(f, "%s\n\n", s->intro);
  fprintf(f, "| key | type | unit | default |%s meaning |\n", has_kinds ? " kinds |" : "");
  fprintf(f, "|---|---|---|---|%s---|\n", has_kinds ? "---|" : "");
  for (const sl_ini_key *k = s->keys; k->name; k++) {
    sl__type_cell(k, type, sizeof type);
    fprintf(f, "| `%s` | %s | %s | %s |", k->name, type, k->unit ? k->unit : "", sl__default_cell(k, has_kinds));
    if (has_kinds) {
      sl__kinds_cell(s, k, kinds, sizeof kinds);
      fprintf(f, " %s |", kinds);
    }
    fprintf(f, " %s |\n", k->doc ? k->doc : "");
  }
  fprintf(f, "\n");
}
