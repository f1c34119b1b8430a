/**
 * @file units.h
 * @brief Numbers with units, as specs write them: `100MB`, `0.5s`, `10Gbps`.
 *
 * Every parser takes a NUL-terminated string, allows whitespace around the
 * number and between the number and its unit, and returns 0 with the value
 * in canonical units in *out, or SL_EPARSE (and leaves *out alone) for an
 * empty string, trailing garbage, an unknown unit, NaN, infinity or an
 * overflow. Units are case-sensitive because `Mbps` (bits) and `MBps`
 * (bytes) differ by a factor of eight. Signs are accepted: whether a value
 * may be negative or zero is the caller's rule, so it can say which key
 * broke it.
 *
 * Formatters write into a caller's buffer and return it, for printf().
 */
#ifndef SL_UNITS_H
#define SL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/** @brief Buffer size that always holds a formatted value. */
#define SL_FORMAT_MAX 32

/**
 * @brief A size in bytes: B, KB, kB, MB, GB, TB, PB (powers of 1000) or KiB,
 *        MiB, GiB, TiB (powers of 1024). A plain number is bytes.
 */
int sl_parse_size(const char *s, double *out);

/** @brief A duration in seconds: ns, us, µs, ms, s, min, h. A plain number is seconds. */
int sl_parse_time(const char *s, double *out);

/**
 * @brief A bandwidth in bytes per second. Bits: bps, Kbps, kbps, Mbps, Gbps,
 *        Tbps. Bytes: B/s, KB/s, kB/s, MB/s, GB/s, TB/s, KBps, MBps, GBps,
 *        TBps, KiB/s, MiB/s, GiB/s. A unit is required: a bare `10` could be
 *        bits or bytes, and guessing wrong is off by eight.
 */
int sl_parse_bandwidth(const char *s, double *out);

/** @brief A plain real number without unit (a fraction like 0.99, a ratio). */
int sl_parse_number(const char *s, double *out);

/** @brief A plain decimal integer (no fraction, no exponent, no unit). */
int sl_parse_int(const char *s, int64_t *out);

/** @brief A price in dollars, with an optional leading `$` (`1.212`, `$0.384`). */
int sl_parse_price(const char *s, double *out);

/** @brief Writes @p bytes as "100 MB", "1.5 GB" (powers of 1000). Returns @p buf. */
char *sl_format_size(double bytes, char *buf, size_t n);

/** @brief Writes @p seconds as "500 ms", "561.6 s", "61.13 min", "2.5 h". Returns @p buf. */
char *sl_format_time(double seconds, char *buf, size_t n);

/** @brief Writes @p bytes_per_s in bits per second: "10 Gbps". Returns @p buf. */
char *sl_format_bandwidth(double bytes_per_s, char *buf, size_t n);

#endif
