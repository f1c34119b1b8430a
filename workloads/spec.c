#include "spec.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_registry.h"
#include "models/error.h"
#include "units.h"

/* Specs are a few hundred lines; a megabyte means the wrong file was given. */
#define SL__SPEC_MAX_BYTES (1 << 20)
#define SL__MAX_KEYS 64
#define SL__KEY_MAX 64
#define SL__VALUE_MAX 64
#define SL__MAX_NODES (1 << 20)

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

static void sl__vmsg(char *err, size_t errlen, const char *fmt, va_list ap)
{
  if (err && errlen > 0)
    vsnprintf(err, errlen, fmt, ap);
}

static void sl__msg(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  sl__vmsg(err, errlen, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* The INI layer both spec kinds share                                       */
/* ------------------------------------------------------------------------ */

typedef struct sl__ini sl__ini;

/* Each callback returns 0, or the code sl__fail() returned. */
typedef struct {
  int (*section)(sl__ini *ini, const char *name, int line); /* a header */
  int (*key)(sl__ini *ini, const char *key, const char *value, int line);
  int (*end)(sl__ini *ini); /* the current section is complete */
} sl__ini_ops;

/*
 * One parse. inih in this build does not pass line numbers to the handler,
 * so our reader feeds it one line per call and counts; the handler reads the
 * count. The reader also spots section headers itself, because inih only
 * reports sections through their keys, and an empty section or the line of
 * a header is what our messages need.
 */
struct sl__ini {
  const char *path;
  const char *text;
  size_t len, pos;
  int lineno;
  bool in_section;
  int section_line;
  struct {
    char name[SL__KEY_MAX];
    int line;
  } keys[SL__MAX_KEYS]; /* keys of the current section, in file order */
  int nkeys;
  const sl__ini_ops *ops;
  void *user;
  int rc, err_line; /* the first error: later ones are consequences */
  char *err;
  size_t errlen;
};

/* Records the first error as "path:line: message"; returns SL_EPARSE. */
static int sl__fail(sl__ini *ini, int line, const char *fmt, ...)
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

/* Line of key @p name in the current section, 0 when it was not given. */
static int sl__key_line(const sl__ini *ini, const char *name)
{
  for (int i = 0; i < ini->nkeys; i++)
    if (strcmp(ini->keys[i].name, name) == 0)
      return ini->keys[i].line;
  return 0;
}

static void sl__trim_copy(char *dst, size_t n, const char *s, size_t len)
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

static int sl__begin_section(sl__ini *ini, const char *line)
{
  const char *close = strchr(line, ']');
  if (!close)
    return 0; /* inih reports the malformed header */
  char name[INI_MAX_LINE];
  sl__trim_copy(name, sizeof name, line + 1, (size_t)(close - line - 1));
  if (ini->in_section && ini->ops->end(ini) != 0)
    return ini->rc;
  ini->in_section = true;
  ini->section_line = ini->lineno;
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
  sl__ini *ini = stream;
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
  /* inih wants room for "\r\n\0" after the longest line */
  if (content + 3 > (size_t)num) {
    sl__fail(ini, ini->lineno, "line longer than %d characters", num - 3);
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
  sl__ini *ini = user;
  int line = ini->lineno;
  (void)section; /* ours, trimmed, is in the parser state */
  if (ini->rc)
    return 0;
  if (!ini->in_section)
    return !sl__fail(ini, line, "key '%s' is outside any section", name);
  int first = sl__key_line(ini, name);
  if (first)
    return !sl__fail(ini, line, "duplicate key '%s' (first set at line %d)", name, first);
  if (ini->nkeys == SL__MAX_KEYS)
    return !sl__fail(ini, line, "more than %d keys in one section", SL__MAX_KEYS);
  snprintf(ini->keys[ini->nkeys].name, SL__KEY_MAX, "%s", name);
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
static int sl__check_text(sl__ini *ini)
{
  const unsigned char *s = (const unsigned char *)ini->text;
  int line = 1;
  for (size_t i = 0; i < ini->len;) {
    unsigned char c = s[i];
    if (c == '\n') {
      line++;
      i++;
    } else if (c == 0) {
      return sl__fail(ini, line, "binary file (NUL byte); a spec is INI text");
    } else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      return sl__fail(ini, line, "control character 0x%02x: not INI text (a binary file?)", c);
    } else if (c < 0x80) {
      i++;
    } else {
      size_t n = sl__utf8_len(s + i, ini->len - i);
      if (n == 0)
        return sl__fail(ini, line, "invalid UTF-8 (byte 0x%02x); is this a binary file?", c);
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
  char *buf = malloc(SL__SPEC_MAX_BYTES + 2);
  if (!buf) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    rc = SL_ENOMEM;
    goto close_file;
  }
  size_t n = fread(buf, 1, SL__SPEC_MAX_BYTES + 1, f);
  if (ferror(f)) {
    sl__msg(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    rc = SL_EIO;
  } else if (n > SL__SPEC_MAX_BYTES) {
    sl__msg(err, errlen, "%s:1: larger than %d bytes; not a spec file", path, SL__SPEC_MAX_BYTES);
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

/* Reads, checks and parses @p path, calling @p ops; returns 0 or the first error. */
static int sl__ini_run(sl__ini *ini, const char *path, const sl__ini_ops *ops, void *user,
                       char *err, size_t errlen)
{
  char *text = NULL;
  size_t len = 0;
  int ret, rc = sl__read_file(path, &text, &len, err, errlen);
  if (rc)
    return rc;
  *ini = (sl__ini){.path = path, .text = text, .len = len, .ops = ops, .user = user,
                   .err = err, .errlen = errlen};
  if (sl__check_text(ini) != 0)
    goto free_text;
  ret = ini_parse_stream(sl__ini_reader, ini, sl__ini_handler, ini);
  if (ret == -2) {
    ini->rc = SL_ENOMEM;
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
  } else if (ret > 0 && (!ini->rc || ret < ini->err_line)) {
    ini->rc = 0; /* a syntax error inih saw before ours */
    sl__fail(ini, ret, "expected 'key = value', '[section]' or a comment");
  }
  if (!ini->rc && ini->in_section)
    ops->end(ini);
free_text:
  free(text);
  return ini->rc;
}

/* The file name without folders and extension: the default spec name. */
static void sl__stem(char *dst, size_t n, const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  sl__trim_copy(dst, n, base, len);
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

static int sl__check_name(sl__ini *ini, const char *what, const char *name, int line)
{
  if (!sl__valid_name(name))
    return sl__fail(ini, line, "%s name '%s' must be letters, digits, '_', '-' or '.'", what, name);
  if (strlen(name) >= SL_NAME_MAX)
    return sl__fail(ini, line, "%s name '%s' is longer than %d characters", what, name,
                    SL_NAME_MAX - 1);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Typed values                                                              */
/* ------------------------------------------------------------------------ */

typedef enum {
  SL__T_TIME,
  SL__T_SIZE,
  SL__T_BANDWIDTH,
  SL__T_REAL,
  SL__T_PRICE,
  SL__T_INT,   /* stored as int */
  SL__T_INT64, /* stored as int64_t */
  SL__T_KIND,  /* operators only, handled before the generic setter */
  SL__T_KERNEL,
  SL__T_ACCEL, /* accelerator labels, handled before the generic setter */
} sl__type;

typedef enum { SL__R_ANY, SL__R_NONNEG, SL__R_POS, SL__R_ONE } sl__range;

/* A key that sets one field of a record at @p offset. */
typedef struct {
  const char *name;
  sl__type type;
  size_t offset;
  sl__range range;
  double scale;   /* canonical value = parsed value * scale */
  unsigned kinds; /* operators: mask of the kinds it applies to */
} sl__key;

static const sl__key *sl__find_key(const sl__key *keys, const char *name)
{
  for (const sl__key *k = keys; k->name; k++)
    if (strcmp(k->name, name) == 0)
      return k;
  return NULL;
}

static int sl__parse_typed(sl__type type, const char *value, double *v)
{
  int64_t i = 0; /* read below even when the parse fails */
  int rc;
  switch (type) {
  case SL__T_TIME:
    return sl_parse_time(value, v);
  case SL__T_SIZE:
    return sl_parse_size(value, v);
  case SL__T_BANDWIDTH:
    return sl_parse_bandwidth(value, v);
  case SL__T_PRICE:
    return sl_parse_price(value, v);
  case SL__T_INT:
  case SL__T_INT64:
    rc = sl_parse_int(value, &i);
    *v = (double)i;
    return rc;
  default:
    return sl_parse_number(value, v);
  }
}

static const char *sl__type_hint(sl__type type)
{
  switch (type) {
  case SL__T_TIME:
    return "a time such as 0.5s, 5ms or 2min";
  case SL__T_SIZE:
    return "a size such as 100MB or 1.5GiB";
  case SL__T_BANDWIDTH:
    return "a bandwidth with its unit, such as 10Gbps or 1.25GB/s";
  case SL__T_PRICE:
    return "dollars, such as 1.212";
  case SL__T_INT:
  case SL__T_INT64:
    return "a whole number";
  default:
    return "a number";
  }
}

static int sl__check_range(sl__ini *ini, const sl__key *k, double v, const char *value, int line)
{
  static const char *const rule[] = {"", ">= 0", "> 0", ">= 1"};
  bool ok = k->range == SL__R_ANY || (k->range == SL__R_NONNEG && v >= 0) ||
            (k->range == SL__R_POS && v > 0) || (k->range == SL__R_ONE && v >= 1);
  if (!ok)
    return sl__fail(ini, line, "'%s' must be %s, got '%s'", k->name, rule[k->range], value);
  if (k->type == SL__T_INT && v > INT_MAX)
    return sl__fail(ini, line, "'%s' is too large: '%s'", k->name, value);
  return 0;
}

/* Parses @p value as key @p k and stores it into @p record. */
static int sl__set_field(sl__ini *ini, const sl__key *k, void *record, const char *value, int line)
{
  double v;
  if (sl__parse_typed(k->type, value, &v) != 0)
    return sl__fail(ini, line, "malformed value '%s' for '%s': expected %s", value, k->name,
                    sl__type_hint(k->type));
  if (sl__check_range(ini, k, v, value, line) != 0)
    return ini->rc;
  char *field = (char *)record + k->offset;
  if (k->type == SL__T_INT) {
    int i = (int)v;
    memcpy(field, &i, sizeof i);
  } else if (k->type == SL__T_INT64) {
    /* From the text, exact, where a double rounds past 2^53 (and 2^63 - 1
     * rounds to 2^63, which no int64_t holds); it parsed above. */
    int64_t i = 0;
    sl_parse_int(value, &i);
    memcpy(field, &i, sizeof i);
  } else {
    v *= k->scale;
    memcpy(field, &v, sizeof v);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Workload specs                                                            */
/* ------------------------------------------------------------------------ */

#define SL__K(kind) (1u << (kind))
#define SL__SOURCE SL__K(SL_OP_SOURCE)
#define SL__TRANSFORMS (SL__K(SL_OP_MAP) | SL__K(SL_OP_MAP_BATCHES) | SL__K(SL_OP_ALL_TO_ALL))
#define SL__TASKS (SL__SOURCE | SL__TRANSFORMS)
#define SL__ANY_KIND (SL__TASKS | SL__K(SL_OP_SINK))
#define SL__OP(field) offsetof(sl_op_spec, field)

static const sl__key sl__op_keys[] = {
  {"kind", SL__T_KIND, 0, SL__R_ANY, 1, SL__ANY_KIND},
  {"kernel", SL__T_KERNEL, 0, SL__R_ANY, 1, SL__TASKS},
  {"accelerator", SL__T_ACCEL, 0, SL__R_ANY, 1, SL__TASKS},
  {"cpu", SL__T_REAL, SL__OP(cpu), SL__R_NONNEG, 1, SL__TASKS},
  {"gpu", SL__T_REAL, SL__OP(gpu), SL__R_NONNEG, 1, SL__TASKS},
  {"time_per_task", SL__T_TIME, SL__OP(time_per_task), SL__R_NONNEG, 1, SL__TASKS},
  {"time_per_row", SL__T_TIME, SL__OP(time_per_row), SL__R_NONNEG, 1, SL__TASKS},
  {"time_per_batch", SL__T_TIME, SL__OP(time_per_batch), SL__R_NONNEG, 1, SL__TRANSFORMS},
  /* per MB of input in the spec, per byte in the model */
  {"time_per_mb", SL__T_TIME, SL__OP(time_per_byte), SL__R_NONNEG, 1e-6, SL__TASKS},
  {"time_spread", SL__T_REAL, SL__OP(time_spread), SL__R_NONNEG, 1, SL__TASKS},
  {"rows_out_per_row", SL__T_REAL, SL__OP(rows_out_per_row), SL__R_POS, 1, SL__TRANSFORMS},
  {"out_row_bytes", SL__T_SIZE, SL__OP(out_row_bytes), SL__R_POS, 1, SL__TRANSFORMS},
  {"batch_size", SL__T_INT, SL__OP(batch_size), SL__R_ONE, 1, SL__TRANSFORMS},
  {"concurrency", SL__T_INT, SL__OP(concurrency), SL__R_ONE, 1, SL__TASKS},
  {"tasks", SL__T_INT64, SL__OP(tasks), SL__R_ONE, 1, SL__SOURCE | SL__K(SL_OP_ALL_TO_ALL)},
  {"rows_per_task", SL__T_INT64, SL__OP(rows_per_task), SL__R_ONE, 1, SL__SOURCE},
  /* a source's rows are its output rows */
  {"row_bytes", SL__T_SIZE, SL__OP(out_row_bytes), SL__R_POS, 1, SL__SOURCE},
  {"read_bytes_per_row", SL__T_SIZE, SL__OP(read_bytes_per_row), SL__R_POS, 1, SL__SOURCE},
  {NULL, 0, 0, 0, 0, 0},
};

static const char *const sl__source_required[] = {"tasks", "rows_per_task", "row_bytes", NULL};

typedef struct {
  sl__ini ini;
  sl_workload *w;
  int workload_line; /* the [workload] header, 0 when there is none */
  sl_op_spec *op;    /* the operator being read, NULL in [workload] */
  /* keys that are not operator keys: kernel parameters, checked once the
   * section is complete, because `kernel =` may come after them */
  struct {
    char name[SL__KEY_MAX];
    char value[SL__VALUE_MAX];
    int line;
  } params[SL_MAX_PARAMS];
  int nparams;
} sl__wl_parser;

static int sl__wl_section(sl__ini *ini, const char *name, int line)
{
  sl__wl_parser *p = ini->user;
  sl_workload *w = p->w;
  p->op = NULL;
  p->nparams = 0;
  if (strcmp(name, "workload") == 0) {
    if (p->workload_line)
      return sl__fail(ini, line, "duplicate section [workload] (first at line %d)",
                      p->workload_line);
    p->workload_line = line;
    return 0;
  }
  if (strcmp(name, "cluster") == 0 || strncmp(name, "group ", 6) == 0)
    return sl__fail(ini, line, "section [%s] belongs in a cluster spec, not a workload", name);
  if (sl__check_name(ini, "operator", name, line) != 0)
    return ini->rc;
  for (int i = 0; i < w->nops; i++)
    if (strcmp(w->ops[i].name, name) == 0)
      return sl__fail(ini, line, "duplicate operator '%s' (first defined at line %d)", name,
                      w->ops[i].line);
  if (w->nops == SL_MAX_OPS)
    return sl__fail(ini, line, "more than %d operators", SL_MAX_OPS);
  sl_op_spec *op = &w->ops[w->nops++];
  memset(op, 0, sizeof *op);
  snprintf(op->name, sizeof op->name, "%s", name);
  op->line = line;
  op->rows_out_per_row = 1;
  p->op = op;
  return 0;
}

static int sl__wl_header_key(sl__wl_parser *p, const char *key, const char *value, int line)
{
  static const sl__key target = {"target_partition", SL__T_SIZE, 0, SL__R_POS, 1, 0};
  static const sl__key seed = {"seed", SL__T_INT64, 0, SL__R_NONNEG, 1, 0};
  sl__ini *ini = &p->ini;
  sl_workload *w = p->w;
  if (strcmp(key, "description") == 0)
    return 0;
  if (strcmp(key, "name") == 0) {
    if (sl__check_name(ini, "workload", value, line) != 0)
      return ini->rc;
    snprintf(w->name, sizeof w->name, "%s", value);
    return 0;
  }
  if (strcmp(key, "target_partition") == 0)
    return sl__set_field(ini, &target, &w->target_partition_bytes, value, line);
  if (strcmp(key, "seed") == 0) {
    int64_t s = 0;
    if (sl__set_field(ini, &seed, &s, value, line) != 0)
      return ini->rc;
    w->seed = (uint64_t)s;
    return 0;
  }
  return sl__fail(ini, line,
                  "unknown key '%s' in [workload] (expected name, target_partition, seed or "
                  "description)",
                  key);
}

static int sl__parse_kind(const char *value, sl_op_kind *out)
{
  for (int k = SL_OP_SOURCE; k <= SL_OP_SINK; k++)
    if (strcmp(value, sl_op_kind_name((sl_op_kind)k)) == 0) {
      *out = (sl_op_kind)k;
      return 0;
    }
  return SL_EPARSE;
}

/* `accelerator = a10g, a100`: the labels of the node groups an operator may
 * run on. Which labels exist is only known with the cluster
 * (sl_check_feasible). */
static int sl__parse_accels(sl__ini *ini, const char *value, sl_accel_set *out, int line)
{
  memset(out, 0, sizeof *out);
  for (const char *s = value;; s++) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    char name[INI_MAX_LINE];
    sl__trim_copy(name, sizeof name, s, len);
    if (!*name)
      return sl__fail(ini, line, "empty accelerator name in '%s' (expected labels such as "
                      "'a100' or 'a10g, a100')", value);
    if (sl__check_name(ini, "accelerator", name, line) != 0)
      return ini->rc;
    if (sl_accel_set_has(out, name))
      return sl__fail(ini, line, "accelerator '%s' is listed twice", name);
    if (out->n == SL_MAX_ACCELS)
      return sl__fail(ini, line, "more than %d accelerators in '%s'", SL_MAX_ACCELS, value);
    snprintf(out->names[out->n++], SL_NAME_MAX, "%.*s", SL_NAME_MAX - 1, name);
    if (!comma)
      return 0;
    s = comma;
  }
}

static int sl__wl_key(sl__ini *ini, const char *key, const char *value, int line)
{
  sl__wl_parser *p = ini->user;
  sl_op_spec *op = p->op;
  if (!op)
    return sl__wl_header_key(p, key, value, line);
  const sl__key *k = sl__find_key(sl__op_keys, key);
  if (k && k->type == SL__T_KIND) {
    if (sl__parse_kind(value, &op->kind) != 0)
      return sl__fail(ini, line,
                      "unknown kind '%s' (expected source, map, map_batches, all_to_all or sink)",
                      value);
    return 0;
  }
  if (k && k->type == SL__T_KERNEL) {
    if (strlen(value) >= sizeof op->kernel)
      return sl__fail(ini, line, "unknown kernel '%s'", value);
    snprintf(op->kernel, sizeof op->kernel, "%s", value);
    return 0;
  }
  if (k && k->type == SL__T_ACCEL)
    return sl__parse_accels(ini, value, &op->accel, line);
  if (k)
    return sl__set_field(ini, k, op, value, line);
  if (p->nparams == SL_MAX_PARAMS)
    return sl__fail(ini, line, "unknown key '%s' (and more than %d kernel parameters)", key,
                    SL_MAX_PARAMS);
  snprintf(p->params[p->nparams].name, SL__KEY_MAX, "%s", key);
  snprintf(p->params[p->nparams].value, SL__VALUE_MAX, "%s", value);
  p->params[p->nparams].line = line;
  p->nparams++;
  return 0;
}

/* Kernel names, for the message about an unknown one. */
static void sl__kernel_names(char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < sl_kernel_info_count() && used < n; i++) {
    int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", sl_kernel_info_at(i)->name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

/* Resolves the operator's kernel (or its default) and checks it fits the kind. */
static int sl__op_kernel(sl__wl_parser *p, const sl_kernel_info **out)
{
  sl__ini *ini = &p->ini;
  sl_op_spec *op = p->op;
  int line = sl__key_line(ini, "kernel");
  if (!line)
    snprintf(op->kernel, sizeof op->kernel, "%s", op->kind == SL_OP_SOURCE ? "generate" : "sleep");
  int at = line ? line : op->line;
  const sl_kernel_info *k = sl_kernel_info_find(op->kernel);
  if (!k) {
    char names[256];
    sl__kernel_names(names, sizeof names);
    return sl__fail(ini, at, "unknown kernel '%s' (known: %s)", op->kernel, names);
  }
  if (k->source && op->kind != SL_OP_SOURCE)
    return sl__fail(ini, at, "kernel '%s' makes rows from nothing: only a source can run it",
                    op->kernel);
  if (!k->source && op->kind == SL_OP_SOURCE)
    return sl__fail(ini, at, "kernel '%s' transforms rows: a source needs a source kernel "
                    "such as generate or jpeg_generate", op->kernel);
  *out = k;
  return 0;
}

static int sl__op_misplaced(sl__ini *ini, const sl_op_spec *op, const sl__key *k, int line)
{
  if (op->kind == SL_OP_SINK)
    return sl__fail(ini, line, "key '%s' does not apply to a sink: a sink takes 'kind' only",
                    k->name);
  if (k->kinds == SL__SOURCE)
    return sl__fail(ini, line, "key '%s' applies to a source only; '%s' is a %s", k->name,
                    op->name, sl_op_kind_name(op->kind));
  return sl__fail(ini, line, "key '%s' does not apply to a %s operator", k->name,
                  sl_op_kind_name(op->kind));
}

/* A key that is not an operator key: a parameter of the kernel, or a typo. */
static int sl__op_param(sl__wl_parser *p, const sl_kernel_info *k, const char *name, int line)
{
  sl__ini *ini = &p->ini;
  sl_op_spec *op = p->op;
  if (op->kind == SL_OP_SINK)
    return sl__fail(ini, line, "unknown key '%s': a sink takes 'kind' only", name);
  if (!sl_kernel_info_has_param(k, name))
    return sl__fail(ini, line, "unknown key '%s': not an operator key, nor a parameter of "
                    "kernel '%s'", name, k->name);
  for (int i = 0; i < p->nparams; i++) {
    if (strcmp(p->params[i].name, name) != 0)
      continue;
    sl_param *param = &op->params[op->nparams++];
    snprintf(param->name, sizeof param->name, "%s", name);
    if (sl_parse_number(p->params[i].value, &param->value) != 0)
      return sl__fail(ini, line, "malformed value '%s' for kernel parameter '%s': expected a "
                      "number", p->params[i].value, name);
  }
  return 0;
}

/* Every key fits the operator's kind, in file order so the first wrong one is named. */
static int sl__op_check_keys(sl__wl_parser *p, const sl_kernel_info *kernel)
{
  sl__ini *ini = &p->ini;
  for (int i = 0; i < ini->nkeys; i++) {
    const sl__key *k = sl__find_key(sl__op_keys, ini->keys[i].name);
    if (k && !(k->kinds & SL__K(p->op->kind)))
      return sl__op_misplaced(ini, p->op, k, ini->keys[i].line);
    if (!k && sl__op_param(p, kernel, ini->keys[i].name, ini->keys[i].line) != 0)
      return ini->rc;
  }
  return 0;
}

/* The operator's section is complete: check what depends on several keys. */
static int sl__wl_end(sl__ini *ini)
{
  sl__wl_parser *p = ini->user;
  sl_op_spec *op = p->op;
  const sl_kernel_info *kernel = NULL;
  if (!op)
    return 0;
  if (!sl__key_line(ini, "kind"))
    return sl__fail(ini, op->line, "operator '%s' is missing required key 'kind'", op->name);
  if (op->kind != SL_OP_SINK && sl__op_kernel(p, &kernel) != 0)
    return ini->rc;
  if (sl__op_check_keys(p, kernel) != 0)
    return ini->rc;
  if (op->kind == SL_OP_SINK)
    return 0;
  for (int i = 0; op->kind == SL_OP_SOURCE && sl__source_required[i]; i++)
    if (!sl__key_line(ini, sl__source_required[i]))
      return sl__fail(ini, op->line, "source '%s' is missing required key '%s'", op->name,
                      sl__source_required[i]);
  /* The model counts rows in int64_t; more would overflow, not run for ages. */
  if (op->kind == SL_OP_SOURCE && op->tasks > INT64_MAX / op->rows_per_task)
    return sl__fail(ini, sl__key_line(ini, "rows_per_task"), "source '%s' makes tasks x "
                    "rows_per_task rows, more than 2^63", op->name);
  /* An accelerator operator holds no CPU slot unless it asks for one, as in Ray. */
  if (!sl__key_line(ini, "cpu"))
    op->cpu = op->gpu > 0 ? 0 : 1;
  if (op->cpu + op->gpu <= 0) {
    int line = sl__key_line(ini, "cpu");
    return sl__fail(ini, line ? line : op->line, "operator '%s' asks for no CPU and no GPU",
                    op->name);
  }
  int tpb = sl__key_line(ini, "time_per_batch");
  if (tpb && op->batch_size == 0)
    return sl__fail(ini, tpb, "'time_per_batch' needs 'batch_size' in operator '%s'", op->name);
  return 0;
}

/* Checks that the operators form a pipeline: one source, first; a sink, if any, last. */
static int sl__wl_check_pipeline(sl__wl_parser *p)
{
  sl__ini *ini = &p->ini;
  const sl_workload *w = p->w;
  if (w->nops == 0)
    return sl__fail(ini, p->workload_line ? p->workload_line : 1,
                    "no operators: a workload needs at least a source section");
  if (w->ops[0].kind != SL_OP_SOURCE)
    return sl__fail(ini, w->ops[0].line,
                    "the first operator '%s' is a %s; a pipeline starts with a source",
                    w->ops[0].name, sl_op_kind_name(w->ops[0].kind));
  for (int i = 1; i < w->nops; i++) {
    const sl_op_spec *op = &w->ops[i];
    if (op->kind == SL_OP_SOURCE)
      return sl__fail(ini, op->line, "operator '%s' is a second source; a pipeline has one "
                      "source, first", op->name);
    if (op->kind == SL_OP_SINK && i != w->nops - 1)
      return sl__fail(ini, op->line, "sink '%s' must be the last operator", op->name);
  }
  return 0;
}

int sl_workload_load(const char *path, sl_workload *out, char *err, size_t errlen)
{
  static const sl__ini_ops ops = {sl__wl_section, sl__wl_key, sl__wl_end};
  if (!path || !out)
    return SL_EINVAL;
  if (err && errlen)
    err[0] = '\0';
  sl__wl_parser *p = calloc(1, sizeof *p + sizeof *p->w);
  if (!p) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    memset(out, 0, sizeof *out);
    return SL_ENOMEM;
  }
  sl_workload *w = (sl_workload *)(p + 1);
  p->w = w;
  w->target_partition_bytes = 128e6; /* Ray Data's default target block size */
  w->seed = 1;
  int rc = sl__ini_run(&p->ini, path, &ops, p, err, errlen);
  if (!rc)
    rc = sl__wl_check_pipeline(p);
  if (!rc) {
    if (!w->name[0])
      sl__stem(w->name, sizeof w->name, path);
    snprintf(w->path, sizeof w->path, "%s", path);
    *out = *w;
  } else {
    memset(out, 0, sizeof *out);
  }
  free(p);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Cluster specs                                                             */
/* ------------------------------------------------------------------------ */

#define SL__CL(field) offsetof(sl_cluster, field)
#define SL__GR(field) offsetof(sl_node_group, field)

static const sl__key sl__cluster_keys[] = {
  {"backbone", SL__T_BANDWIDTH, SL__CL(backbone_bps), SL__R_POS, 1, 0},
  {"latency", SL__T_TIME, SL__CL(latency_s), SL__R_NONNEG, 1, 0},
  {"storage_bandwidth", SL__T_BANDWIDTH, SL__CL(storage_bps), SL__R_POS, 1, 0},
  {"storage_latency", SL__T_TIME, SL__CL(storage_latency_s), SL__R_NONNEG, 1, 0},
  {NULL, 0, 0, 0, 0, 0},
};

static const sl__key sl__group_keys[] = {
  {"count", SL__T_INT, SL__GR(count), SL__R_ONE, 1, 0},
  {"cpu", SL__T_REAL, SL__GR(cpu), SL__R_NONNEG, 1, 0},
  {"gpu", SL__T_REAL, SL__GR(gpu), SL__R_NONNEG, 1, 0},
  {"memory", SL__T_SIZE, SL__GR(memory_bytes), SL__R_POS, 1, 0},
  {"store", SL__T_SIZE, SL__GR(store_bytes), SL__R_POS, 1, 0},
  {"cpu_speed", SL__T_REAL, SL__GR(cpu_speed), SL__R_POS, 1, 0},
  {"gpu_speed", SL__T_REAL, SL__GR(gpu_speed), SL__R_POS, 1, 0},
  {"nic", SL__T_BANDWIDTH, SL__GR(nic_bps), SL__R_POS, 1, 0},
  {"price_per_hour", SL__T_PRICE, SL__GR(price_per_hour), SL__R_NONNEG, 1, 0},
  {"min", SL__T_INT, SL__GR(min_count), SL__R_NONNEG, 1, 0},
  {"max", SL__T_INT, SL__GR(max_count), SL__R_ONE, 1, 0},
  {NULL, 0, 0, 0, 0, 0},
};

typedef struct {
  sl__ini ini;
  sl_cluster *c;
  int cluster_line;     /* the [cluster] header, 0 when there is none */
  sl_node_group *group; /* the group being read, NULL in [cluster] */
} sl__cl_parser;

static int sl__cl_group(sl__cl_parser *p, const char *name, int line)
{
  sl__ini *ini = &p->ini;
  sl_cluster *c = p->c;
  if (!*name)
    return sl__fail(ini, line, "a node group needs a name: [group NAME]");
  if (sl__check_name(ini, "node group", name, line) != 0)
    return ini->rc;
  for (int g = 0; g < c->ngroups; g++)
    if (strcmp(c->groups[g].name, name) == 0)
      return sl__fail(ini, line, "duplicate node group '%s' (first defined at line %d)", name,
                      c->groups[g].line);
  if (c->ngroups == SL_MAX_GROUPS)
    return sl__fail(ini, line, "more than %d node groups", SL_MAX_GROUPS);
  sl_node_group *g = &c->groups[c->ngroups++];
  *g = (sl_node_group){.line = line, .count = 1, .cpu_speed = 1, .gpu_speed = 1,
                       .nic_bps = 10e9 / 8}; /* 10 Gbps: a common cloud NIC */
  /* sl__check_name() has bounded the length; the precision tells the compiler. */
  snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, name);
  p->group = g;
  return 0;
}

static int sl__cl_section(sl__ini *ini, const char *name, int line)
{
  sl__cl_parser *p = ini->user;
  p->group = NULL;
  if (strcmp(name, "cluster") == 0) {
    if (p->cluster_line)
      return sl__fail(ini, line, "duplicate section [cluster] (first at line %d)",
                      p->cluster_line);
    p->cluster_line = line;
    return 0;
  }
  if (strncmp(name, "group", 5) == 0 && (name[5] == '\0' || isspace((unsigned char)name[5]))) {
    char group[INI_MAX_LINE];
    sl__trim_copy(group, sizeof group, name + 5, strlen(name + 5));
    return sl__cl_group(p, group, line);
  }
  return sl__fail(ini, line, "unknown section [%s] (expected [cluster] or [group NAME])", name);
}

static int sl__cl_key(sl__ini *ini, const char *key, const char *value, int line)
{
  sl__cl_parser *p = ini->user;
  if (p->group) {
    if (strcmp(key, "accelerator") == 0) {
      if (sl__check_name(ini, "accelerator", value, line) != 0)
        return ini->rc;
      snprintf(p->group->accelerator, sizeof p->group->accelerator, "%.*s", SL_NAME_MAX - 1, value);
      return 0;
    }
    const sl__key *k = sl__find_key(sl__group_keys, key);
    if (!k)
      return sl__fail(ini, line, "unknown key '%s' in node group '%s' (expected count, cpu, "
                      "gpu, memory, store, cpu_speed, gpu_speed, nic, price_per_hour, "
                      "accelerator, min or max)",
                      key, p->group->name);
    return sl__set_field(ini, k, p->group, value, line);
  }
  if (strcmp(key, "name") == 0) {
    if (sl__check_name(ini, "cluster", value, line) != 0)
      return ini->rc;
    snprintf(p->c->name, sizeof p->c->name, "%s", value);
    return 0;
  }
  if (strcmp(key, "description") == 0)
    return 0;
  const sl__key *k = sl__find_key(sl__cluster_keys, key);
  if (!k)
    return sl__fail(ini, line, "unknown key '%s' in [cluster] (expected name, description, "
                    "backbone, latency, storage_bandwidth or storage_latency)", key);
  return sl__set_field(ini, k, p->c, value, line);
}

static int sl__cl_end(sl__ini *ini)
{
  sl__cl_parser *p = ini->user;
  sl_node_group *g = p->group;
  if (!g)
    return 0;
  static const char *const required[] = {"cpu", "memory", NULL};
  for (int i = 0; required[i]; i++)
    if (!sl__key_line(ini, required[i]))
      return sl__fail(ini, g->line, "node group '%s' is missing required key '%s'", g->name,
                      required[i]);
  /* Ray gives the object store 30% of a node's memory by default. */
  int store = sl__key_line(ini, "store");
  if (!store)
    g->store_bytes = 0.3 * g->memory_bytes;
  if (g->store_bytes > g->memory_bytes) {
    char s[SL_FORMAT_MAX], m[SL_FORMAT_MAX];
    return sl__fail(ini, store, "store (%s) is larger than memory (%s)",
                    sl_format_size(g->store_bytes, s, sizeof s),
                    sl_format_size(g->memory_bytes, m, sizeof m));
  }
  if (g->cpu + g->gpu <= 0)
    return sl__fail(ini, sl__key_line(ini, "cpu"), "node group '%s' has no CPU and no GPU slots",
                    g->name);
  if (g->accelerator[0] && g->gpu <= 0)
    return sl__fail(ini, sl__key_line(ini, "accelerator"), "node group '%s' names accelerator "
                    "'%s' but has no GPU slots (set gpu)", g->name, g->accelerator);
  if (!g->max_count)
    g->max_count = g->count;
  if (g->min_count > g->max_count)
    return sl__fail(ini, sl__key_line(ini, "min"), "min (%d) is larger than max (%d)",
                    g->min_count, g->max_count);
  return 0;
}

static int sl__cl_check(sl__cl_parser *p)
{
  sl__ini *ini = &p->ini;
  const sl_cluster *c = p->c;
  if (c->ngroups == 0)
    return sl__fail(ini, p->cluster_line ? p->cluster_line : 1,
                    "no node groups: a cluster needs at least one [group NAME] section");
  long long nodes = 0;
  for (int g = 0; g < c->ngroups; g++)
    nodes += c->groups[g].count;
  if (nodes > SL__MAX_NODES)
    return sl__fail(ini, c->groups[c->ngroups - 1].line, "%lld nodes in all; at most %d", nodes,
                    SL__MAX_NODES);
  return 0;
}

int sl_cluster_load(const char *path, sl_cluster *out, char *err, size_t errlen)
{
  static const sl__ini_ops ops = {sl__cl_section, sl__cl_key, sl__cl_end};
  if (!path || !out)
    return SL_EINVAL;
  if (err && errlen)
    err[0] = '\0';
  sl__cl_parser *p = calloc(1, sizeof *p + sizeof *p->c);
  if (!p) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    memset(out, 0, sizeof *out);
    return SL_ENOMEM;
  }
  sl_cluster *c = (sl_cluster *)(p + 1);
  p->c = c;
  c->backbone_bps = 100e9 / 8;   /* 100 Gbps */
  c->latency_s = 50e-6;          /* within one cloud availability zone */
  c->storage_latency_s = 10e-3;  /* first byte from an S3-like store */
  int rc = sl__ini_run(&p->ini, path, &ops, p, err, errlen);
  if (!rc)
    rc = sl__cl_check(p);
  if (!rc) {
    if (!c->name[0])
      sl__stem(c->name, sizeof c->name, path);
    snprintf(c->path, sizeof c->path, "%s", path);
    rc = sl_cluster_expand(c);
    if (rc)
      sl__msg(err, errlen, "%s: %s", path, sl_strerror(rc));
  }
  if (!rc)
    *out = *c;
  else
    memset(out, 0, sizeof *out);
  free(p);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Feasibility                                                               */
/* ------------------------------------------------------------------------ */

static bool sl__group_fits(const sl_node_group *g, const sl_op_spec *op)
{
  return g->count > 0 && g->cpu >= op->cpu && g->gpu >= op->gpu && sl_group_allows(g, &op->accel);
}

/* The operator's pin names no label of the cluster's groups (with nodes). */
static int sl__unknown_accel(const char *file, const sl_cluster *c, const sl_op_spec *op,
                             char *err, size_t errlen)
{
  char want[SL_MAX_ACCELS * SL_NAME_MAX], have[SL_MAX_GROUPS * SL_NAME_MAX] = "";
  sl_accel_set labels = {0};
  size_t used = 0;
  sl_accel_set_format(&op->accel, want, sizeof want);
  for (int g = 0; g < c->ngroups; g++) {
    const char *a = c->groups[g].accelerator;
    if (!a[0] || c->groups[g].count <= 0 || sl_accel_set_has(&labels, a))
      continue;
    if (labels.n < SL_MAX_ACCELS)
      snprintf(labels.names[labels.n++], SL_NAME_MAX, "%s", a);
    int n = snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "", a);
    if (n > 0 && (size_t)n < sizeof have - used)
      used += (size_t)n;
  }
  sl__msg(err, errlen, "%s:%d: operator '%s' asks for accelerator %s but no node group of "
          "cluster '%s' has it (%s%s)", file, op->line, op->name, want, c->name,
          used ? "accelerators there: " : "no group there sets 'accelerator'", have);
  return SL_EUNSAT;
}

static int sl__unsat(const sl_workload *w, const sl_cluster *c, const sl_op_spec *op, char *err,
                     size_t errlen)
{
  double max_cpu = 0, max_gpu = 0;
  bool pinned_somewhere = false;
  const char *file = w->path[0] ? w->path : w->name;
  for (int g = 0; g < c->ngroups; g++) {
    /* a pinned operator is judged on the groups it may use */
    if (c->groups[g].count <= 0 || !sl_group_allows(&c->groups[g], &op->accel))
      continue;
    pinned_somewhere = true;
    if (c->groups[g].cpu > max_cpu)
      max_cpu = c->groups[g].cpu;
    if (c->groups[g].gpu > max_gpu)
      max_gpu = c->groups[g].gpu;
  }
  if (!pinned_somewhere)
    return sl__unknown_accel(file, c, op, err, errlen);
  char want[SL_MAX_ACCELS * SL_NAME_MAX] = "", where[SL_MAX_ACCELS * SL_NAME_MAX + 32] = "";
  sl_accel_set_format(&op->accel, want, sizeof want);
  if (op->accel.n > 0)
    snprintf(where, sizeof where, " with accelerator %s", want);
  if (op->gpu > max_gpu)
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g GPU but no node%s of cluster '%s' has "
            "more than %g", file, op->line, op->name, op->gpu, where, c->name, max_gpu);
  else if (op->cpu > max_cpu)
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g CPU but no node%s of cluster '%s' has "
            "more than %g", file, op->line, op->name, op->cpu, where, c->name, max_cpu);
  else
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g CPU and %g GPU but no node%s of "
            "cluster '%s' has both", file, op->line, op->name, op->cpu, op->gpu, where, c->name);
  return SL_EUNSAT;
}

int sl_check_feasible(const sl_workload *w, const sl_cluster *c, char *err, size_t errlen)
{
  if (!w || !c)
    return SL_EINVAL;
  for (int i = 0; i < w->nops; i++) {
    const sl_op_spec *op = &w->ops[i];
    if (op->kind == SL_OP_SINK || (op->cpu <= 0 && op->gpu <= 0))
      continue;
    bool fits = false;
    for (int g = 0; g < c->ngroups && !fits; g++)
      fits = sl__group_fits(&c->groups[g], op);
    if (!fits)
      return sl__unsat(w, c, op, err, errlen);
  }
  return 0;
}
