/**
 * @file units.h
 * @brief Numbers with units, as specs write them: `100MB`, `0.5s`, `10Gbps`.
 *
 * Every parser takes a NUL-terminated string, allows whitespace around the
 * number and between the number and its unit, and returns 0 with the value
 * in canonical units in *out, or SL_EPARSE (and leaves *out alone) for an
 * empty string, trailing garbage, an unknown unit, NaN, infinity or an
 * overflow. sl_value_explain() says which of these it was.
 *
 * Units match whatever their case where that is unambiguous: `150kb` is
 * 150 KB and `5MS` is 5 ms, since no size is counted in bits and no time
 * has a mega prefix. Bandwidths are the exception: `Mbps` (bits) and
 * `MBps` (bytes) differ by a factor of eight, so a unit that matches both
 * but for case (`mbps`) is refused, with a message saying why. A bare
 * number is accepted only where it cannot be misread: a size in bytes, and
 * zero for a time or a bandwidth. Signs are accepted: whether a value may
 * be negative or zero is the caller's rule, so it can say which key broke
 * it.
 *
 * Formatters write into a caller's buffer and return it, for printf().
 */
#ifndef SL_UNITS_H
#define SL_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** @brief Buffer size that always holds a formatted value. */
#define SL_FORMAT_MAX 32

/**
 * @brief A size in bytes: B, KB, MB, GB, TB, PB (powers of 1000) or KiB,
 *        MiB, GiB, TiB (powers of 1024), in any case. A plain number is bytes.
 */
int sl_parse_size(const char *s, double *out);

/**
 * @brief A duration in seconds: ns, us, µs, ms, s, min, h, in any case. A
 *        unit is required (is `8` seconds or milliseconds?), except for 0.
 */
int sl_parse_time(const char *s, double *out);

/**
 * @brief A bandwidth in bytes per second. Bits: bps, Kbps, kbps, Mbps, Gbps,
 *        Tbps. Bytes: B/s, KB/s, kB/s, MB/s, GB/s, TB/s, KBps, MBps, GBps,
 *        TBps, KiB/s, MiB/s, GiB/s. A unit is required, except for 0: a bare
 *        `10` could be bits or bytes, and guessing wrong is off by eight.
 */
int sl_parse_bandwidth(const char *s, double *out);

/** @brief A plain real number without unit (a fraction like 0.99, a ratio). */
int sl_parse_number(const char *s, double *out);

/** @brief A plain decimal integer (no fraction, no exponent, no unit). */
int sl_parse_int(const char *s, int64_t *out);

/** @brief A price in dollars, with an optional leading `$` (`1.212`, `$0.384`). */
int sl_parse_price(const char *s, double *out);

/** @brief The kinds of value the parsers above read, for sl_value_explain(). */
typedef enum {
  SL_VALUE_SIZE,
  SL_VALUE_TIME,
  SL_VALUE_BANDWIDTH,
  SL_VALUE_NUMBER,
  SL_VALUE_INT,
  SL_VALUE_PRICE,
} sl_value_kind;

/** @brief Buffer size that always holds a message of sl_value_explain(). */
#define SL_EXPLAIN_MAX 256

/**
 * @brief Says what is wrong with @p s, which the parser of @p kind refused:
 *        "a time needs a unit: ns, us, ms, s, min or h (such as 8s)",
 *        "unknown unit 'parsecs' ...", "out of range (at most ...)", or what
 *        a valid value looks like. Written into @p buf; returns @p buf.
 */
char *sl_value_explain(sl_value_kind kind, const char *s, char *buf, size_t n);

/** @brief Whether @p s is a number of @p kind too large (or long) to hold. */
bool sl_value_out_of_range(sl_value_kind kind, const char *s);

/** @brief The units of @p kind, as "ns, us, ms, s, min or h" ("" for a plain number). Returns @p buf. */
char *sl_value_units(sl_value_kind kind, char *buf, size_t n);

/** @brief Writes @p bytes as "100 MB", "1.5 GB" (powers of 1000). Returns @p buf. */
char *sl_format_size(double bytes, char *buf, size_t n);

/** @brief Writes @p seconds as "500 ms", "561.6 s", "61.13 min", "2.5 h". Returns @p buf. */
char *sl_format_time(double seconds, char *buf, size_t n);

/** @brief Writes @p bytes_per_s in bits per second: "10 Gbps". Returns @p buf. */
char *sl_format_bandwidth(double bytes_per_s, char *buf, size_t n);

#endif
