/**
 * @file typed_ini.h
 * @brief The typed INI reader every spec file goes through: workload and
 *        cluster specs (workloads/spec.h) and cost files (sim/costs.h).
 *
 * Two layers.
 *
 * The reader (sl_ini_parse) feeds inih one line at a time, so that every
 * message names `FILE:LINE`, and calls the caller back for each section
 * header, each key and the end of each section. It refuses what is not INI
 * text (a binary file, invalid UTF-8, control characters), keys outside a
 * section, a key given twice in a section, and lines inih cannot read. The
 * first error wins: later ones are its consequences.
 *
 * Typed keys (sl_ini_key) describe, one table entry per key, what a section
 * takes: the key's type and unit, its range, its default, which kinds of
 * section take it (the kinds of an operator, say) and where its value goes
 * in the record the section fills. One table parses the file
 * (sl_ini_set()), fills the defaults (sl_ini_set_defaults()), lists the
 * valid keys in messages (sl_ini_key_names()) and writes the reference
 * (sl_ini_write_reference(), printed by `sluice spec`), so the
 * documentation cannot drift from the parser.
 *
 * Syntax: `[section]` headers, `key = value` lines, comments on their own
 * line after `#` or `;`, or after a value following ` ;`. Leading blanks
 * are ignored, so an indented line is never the continuation of the one
 * above. Values take the units of workloads/units.h.
 */
#ifndef SL_TYPED_INI_H
#define SL_TYPED_INI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* The reader                                                                */
/* ------------------------------------------------------------------------ */

/** @brief One parse in progress (opaque; lives for the length of sl_ini_parse()). */
typedef struct sl_ini sl_ini;

/**
 * @brief What the caller does with the file. Each callback returns 0, or
 *        the code sl_ini_fail() returned, which stops the parse.
 */
typedef struct {
  /** A `[name]` header; @p name is trimmed. The previous section has ended. */
  int (*section)(sl_ini *ini, const char *name, int line);
  /** A `key = value` line of the current section, given for the first time. */
  int (*key)(sl_ini *ini, const char *key, const char *value, int line);
  /** The current section is complete (also at the end of the file). */
  int (*end)(sl_ini *ini);
} sl_ini_ops;

/**
 * @brief Reads the file at @p path and calls @p ops with @p user.
 * @return 0; SL_EIO when the file cannot be read; SL_ENOMEM; SL_EPARSE with
 *         `PATH:LINE: what is wrong` in @p err (NUL-terminated, truncated to
 *         @p errlen; @p err may be NULL), from the reader or a callback.
 */
int sl_ini_parse(const char *path, const sl_ini_ops *ops, void *user, char *err, size_t errlen);

/** @brief The @p user given to sl_ini_parse(). */
void *sl_ini_user(const sl_ini *ini);

/** @brief The path being read. */
const char *sl_ini_path(const sl_ini *ini);

/**
 * @brief Records an error as `PATH:LINE: message` unless one was recorded
 *        before (the first error wins). Returns SL_EPARSE, for the callback
 *        to return.
 */
int sl_ini_fail(sl_ini *ini, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** @brief The error recorded so far: 0 or a negative code. */
int sl_ini_error(const sl_ini *ini);

/** @brief Line of key @p name in the current section; 0 when it was not given. */
int sl_ini_key_line(const sl_ini *ini, const char *name);

/** @brief Keys of the current section so far, in file order. */
int sl_ini_nkeys(const sl_ini *ini);

/** @brief The i-th key of the current section and its line in @p line. */
const char *sl_ini_key_at(const sl_ini *ini, int i, int *line);

/* ------------------------------------------------------------------------ */
/* Typed keys                                                                */
/* ------------------------------------------------------------------------ */

/** @brief How a key's value is written and stored. */
typedef enum {
  SL_INI_TIME,      /**< seconds, with a unit (0 may go without); double */
  SL_INI_SIZE,      /**< bytes, with a unit or bare bytes; double */
  SL_INI_BANDWIDTH, /**< bytes per second, with a unit (bits or bytes); double */
  SL_INI_REAL,      /**< a plain number; double */
  SL_INI_PRICE,     /**< dollars, an optional leading `$`; double */
  SL_INI_INT,       /**< a whole number; int */
  SL_INI_INT64,     /**< a whole number; int64_t */
  SL_INI_NAME,      /**< letters, digits, '_', '-', '.'; char[size] */
  SL_INI_TEXT,      /**< free text for people; not stored */
  SL_INI_CHOICE,    /**< one of @c choices; its index, as int */
  SL_INI_LABELS,    /**< a comma-separated list of names; the caller parses it */
} sl_ini_type;

/** @brief What values a numeric key accepts. */
typedef enum {
  SL_INI_ANY,
  SL_INI_NONNEG, /**< >= 0 */
  SL_INI_POS,    /**< > 0 */
  SL_INI_ONE,    /**< >= 1 */
} sl_ini_range;

/**
 * @brief One key a kind of section takes. Tables of keys end with an entry
 *        whose name is NULL. Designated initializers keep them readable.
 */
typedef struct {
  const char *name;
  sl_ini_type type;
  const char *unit;     /**< for the reference: "s per row", "B", "slots"; NULL: none */
  sl_ini_range range;
  unsigned kinds;       /**< the section kinds that take it, bit k for kind k; 0: every kind */
  unsigned required;    /**< the kinds that must give it */
  const char *dflt;     /**< the default, written as in a spec ("1", "10Gbps"), which
                             sl_ini_set_defaults() stores. NULL: none */
  const char *dflt_doc; /**< a default that is a rule rather than a value ("30% of memory") */
  const char *doc;      /**< what it means, one sentence for the reference */
  size_t offset;        /**< where the value goes in the section's record */
  size_t size;          /**< NAME: the capacity of its char array */
  double scale;         /**< stored value = parsed value * scale; 0 is read as 1 */
  const char *const *choices; /**< CHOICE: the names, NULL-terminated */
  unsigned tag;         /**< the caller's own (a bit of a "given" mask, say) */
} sl_ini_key;

/** @brief The entry of @p keys called @p name, or NULL. */
const sl_ini_key *sl_ini_find_key(const sl_ini_key *keys, const char *name);

/** @brief Whether a section of kind @p kind takes key @p k. */
bool sl_ini_key_applies(const sl_ini_key *k, int kind);

/**
 * @brief Parses @p value as key @p k and stores it into @p record. LABELS
 *        keys are the caller's: this refuses them.
 * @return 0, or sl_ini_fail()'s code with a message that names the key,
 *         the value and what is wrong with it (a missing unit, an unknown
 *         one, out of range, below the key's minimum).
 */
int sl_ini_set(sl_ini *ini, const sl_ini_key *k, void *record, const char *value, int line);

/**
 * @brief Stores every default of @p keys into @p record, as sl_ini_set()
 *        would store it. A default that does not parse is a bug of the
 *        table, and a test (tests/test_typed_ini.c) parses them all.
 * @return 0, or SL_EINVAL naming the key in @p err.
 */
int sl_ini_set_defaults(const sl_ini_key *keys, void *record, char *err, size_t errlen);

/**
 * @brief Checks that the current section gave every key @p keys requires of
 *        kind @p kind. @p what names the section in the message:
 *        "source 'read' is missing required key 'tasks'", at @p line.
 */
int sl_ini_check_required(sl_ini *ini, const sl_ini_key *keys, int kind, const char *what, int line);

/**
 * @brief Writes the names of the keys of @p keys that kind @p kind takes (all
 *        of them when @p kind < 0) as "a, b or c", for "unknown key" messages.
 *        Returns @p buf.
 */
char *sl_ini_key_names(const sl_ini_key *keys, int kind, char *buf, size_t n);

/**
 * @brief Checks that @p name is letters, digits, '_', '-' or '.' and shorter
 *        than @p size; else fails with "WHAT 'name' must be ...", @p what
 *        being "operator name", say.
 */
int sl_ini_check_name(sl_ini *ini, const char *what, const char *name, size_t size, int line);

/* ------------------------------------------------------------------------ */
/* The reference                                                             */
/* ------------------------------------------------------------------------ */

/** @brief A kind of section, as the reference documents it. */
typedef struct {
  const char *title;        /**< a heading: "[workload]", "[NAME] (an operator)" */
  const char *intro;        /**< a paragraph under it, or NULL */
  const sl_ini_key *keys;
  const char *const *kinds; /**< the names of the kind bits, NULL-terminated, for a
                                 "kinds" column; NULL: one kind, no column */
} sl_ini_schema;

/** @brief Writes a Markdown table of every key of @p s (key, type, unit, default, kinds, meaning). */
void sl_ini_write_reference(const sl_ini_schema *s, FILE *f);

/** @brief The name of a type for the reference ("time", "size", ...). */
const char *sl_ini_type_name(sl_ini_type type);

/** @brief Copies @p len bytes of @p s into @p dst (@p n bytes) without leading
 *  and trailing white space, cut to fit. */
void sl_ini_trim_copy(char *dst, size_t n, const char *s, size_t len);

#endif
