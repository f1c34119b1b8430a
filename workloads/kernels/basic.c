/* The kernels without a library behind them: generate, noop, sleep, spin. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "models/error.h"

/* ---- generate -------------------------------------------------------------- */

static int generate_row(sl_kernel *k, int64_t id, uint32_t split, sl_rows *out)
{
  uint8_t *p = sl_rows_add(out, id, split, k->out_bytes);
  if (!p)
    return sl__kernel_fail(k, SL_ENOMEM, "generate: out of memory at row %lld", (long long)id);
  sl_kernel_fill(k->seed, id, p, k->out_bytes);
  return 0;
}

const sl__kernel_ops sl__generate_ops = {.gen = generate_row, .paced = true, .modelled = true};

/* ---- pass-through ---------------------------------------------------------- */

/* Copies one kept row, cut or padded to out_bytes when that is set (or to
 * its own size times the inflation). The padding is generate's content for
 * the row, so it stays incompressible. */
static int pass_row(sl_kernel *k, const sl_rows *in, size_t i, sl_rows *out)
{
  size_t len = sl_rows_len(in, i);
  size_t olen = k->out_bytes ? k->out_bytes : k->inflation > 0 ? (size_t)llround((double)len * k->inflation) : len;
  int64_t id = sl_rows_id(in, i);
  uint8_t *p = sl_rows_add(out, id, sl_rows_split(in, i), olen);
  if (!p)
    return sl__kernel_fail(k, SL_ENOMEM, "%s: out of memory at row %lld", k->info->name,
                           (long long)id);
  size_t keep = len < olen ? len : olen;
  if (keep)
    memcpy(p, sl_rows_payload(in, i), keep);
  if (olen > keep)
    sl_kernel_fill(k->seed, id, p + keep, olen - keep);
  return 0;
}

static int pass_rows(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                     sl_rows *out)
{
  if (k->out_bytes == 0 && !(k->inflation > 0) && k->keep_every == 1) {
    if (sl_rows_append_range(out, in, first, count) != 0)
      return sl__kernel_fail(k, SL_ENOMEM, "%s: out of memory", k->info->name);
    return 0;
  }
  for (size_t i = first; i < first + count; i++) {
    if (!sl__kernel_keeps(k, sl_rows_id(in, i)))
      continue;
    int rc = pass_row(k, in, i, out);
    if (rc)
      return rc;
  }
  return 0;
}

const sl__kernel_ops sl__noop_ops = {.apply = pass_rows, .modelled = true};

/* ---- sleep ------------------------------------------------------------------ */

static int sleep_for(sl_kernel *k, double seconds)
{
  if (seconds <= 0)
    return 0;
  struct timespec deadline = sl__deadline_after(seconds);
  if (sl__sleep_until(k, &deadline) != 0)
    return sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name);
  return 0;
}

static int sleep_task(sl_kernel *k)
{
  return sleep_for(k, k->time_per_task);
}

static int sleep_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                       sl_rows *out)
{
  /* The deadline is taken before the copy: the copy is part of the held time. */
  struct timespec deadline = sl__deadline_after((double)count * k->time_per_row);
  int rc = pass_rows(k, in, first, count, out);
  if (rc == 0 && sl__sleep_until(k, &deadline) != 0)
    rc = sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name);
  return rc;
}

const sl__kernel_ops sl__sleep_ops = {.apply = sleep_apply, .begin_task = sleep_task, .modelled = true};

/* ---- spin ------------------------------------------------------------------- */

static bool past(const struct timespec *deadline)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec > deadline->tv_sec ||
         (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* Folds up to 4 KiB of @p p into @p acc: real loads and multiplies, so the
 * burnt time is CPU and memory work, not a pause loop. */
static uint64_t touch(uint64_t acc, const uint8_t *p, size_t len)
{
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    acc = (acc ^ w) * 0x100000001b3ull;
  }
  for (; i < len; i++)
    acc = (acc ^ p[i]) * 0x100000001b3ull;
  return acc;
}

/* Burns CPU until @p deadline, cycling over the payloads of the range. */
static int burn_until(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                      const struct timespec *deadline)
{
  enum { CHUNK = 4096 };
  uint64_t acc = 0xcbf29ce484222325ull;
  size_t begin = count ? in->row[first].off : 0;
  size_t end = count ? in->row[first + count - 1].off + in->row[first + count - 1].len : 0;
  size_t pos = begin;
  while (!past(deadline)) {
    if (sl__kernel_cancelled(k))
      return sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name);
    if (end > begin) {
      size_t n = end - pos < CHUNK ? end - pos : CHUNK;
      acc = touch(acc, in->data + pos, n);
      pos = pos + n == end ? begin : pos + n;
    } else {
      acc = touch(acc, (const uint8_t *)&acc, sizeof acc);
    }
  }
  volatile uint64_t sink = acc; /* keeps the work from being optimised away */
  (void)sink;
  return 0;
}

static int spin_task(sl_kernel *k)
{
  struct timespec deadline = sl__deadline_after(k->time_per_task);
  return burn_until(k, NULL, 0, 0, &deadline);
}

static int spin_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                      sl_rows *out)
{
  struct timespec deadline = sl__deadline_after((double)count * k->time_per_row);
  int rc = pass_rows(k, in, first, count, out);
  if (rc == 0)
    rc = burn_until(k, in, first, count, &deadline);
  return rc;
}

static int spin_hold(sl_kernel *k, const struct timespec *deadline)
{
  return burn_until(k, NULL, 0, 0, deadline);
}

const sl__kernel_ops sl__spin_ops = {
  .apply = spin_apply, .begin_task = spin_task, .modelled = true, .hold = spin_hold};
