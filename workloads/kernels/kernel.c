/* sl_kernel: argument checking, the instance, and what every kernel shares
 * (the 1/K filter and K-fold expansion, errors, waiting, row headers). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "models/error.h"

/* ---- which ops serve which registry name --------------------------------- */

static const struct {
  const char *name;
  const sl__kernel_ops *ops;
} bindings[] = {
  {"generate", &sl__generate_ops},
  {"jpeg_generate", &sl__jpeg_generate_ops},
  {"noop", &sl__noop_ops},
  {"sleep", &sl__sleep_ops},
  {"spin", &sl__spin_ops},
  {"jpeg_decode", &sl__jpeg_decode_ops},
  {"resize_normalize", &sl__resize_normalize_ops},
  {"gemm_classifier", &sl__gemm_classifier_ops},
  {"center_crop", &sl__center_crop_ops},
  {"augment", &sl__augment_ops},
  {"normalize", &sl__normalize_ops},
  {"gensort", &sl__gensort_ops},
  {"sort_records", &sl__sort_records_ops},
  {"shuffle_rows", &sl__shuffle_rows_ops},
  {"groupby", &sl__groupby_ops},
};

static const sl__kernel_ops *ops_of(const char *name)
{
  for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
    if (strcmp(bindings[i].name, name) == 0)
      return bindings[i].ops;
  return NULL;
}

/* ---- arguments ------------------------------------------------------------ */

/* Integer parameters: name, default and bounds. One table, so the header's
 * promise and the check cannot drift. */
static const struct {
  const char *name;
  int dflt_image, dflt_resize; /* width/height differ between kernels */
  int lo, hi;
} int_params[] = {
  {"width", 256, 224, 1, 65535},  {"height", 256, 224, 1, 65535},
  {"quality", 90, 90, 1, 100},    {"layers", 2, 2, 1, 16},
  {"hidden", 512, 512, 1, 65536}, {"classes", 1000, 1000, 1, 65535},
  {"corrupt_every", 0, 0, 0, INT32_MAX},
  {"percent", 50, 50, 1, 100},    {"passes", 4, 4, 1, 64},
  {"key_bytes", 1, 1, 1, SL_GROUP_MAX_KEY_BYTES},
};

/* Writes a message into the optional buffer of sl_kernel_check_args(). */
static void say(char *err, size_t errlen, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
  if (!err || !errlen)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static const sl_param *find_param(const sl_kernel_args *a, const char *name)
{
  for (int i = 0; i < a->nparams; i++)
    if (strcmp(a->params[i].name, name) == 0)
      return &a->params[i];
  return NULL;
}

/* Resolves parameter @p i of int_params for kernel @p name into @p out. */
static int resolve_int(const char *name, const sl_kernel_args *a, int i, int *out,
                       char *err, size_t errlen)
{
  const sl_param *p = find_param(a, int_params[i].name);
  bool resize = strcmp(name, "resize_normalize") == 0;
  double v = p ? p->value : (resize ? int_params[i].dflt_resize : int_params[i].dflt_image);
  if (v != floor(v) || v < int_params[i].lo || v > int_params[i].hi) {
    say(err, errlen, "parameter %s = %g: must be an integer in [%d, %d]", int_params[i].name, v,
        int_params[i].lo, int_params[i].hi);
    return SL_EINVAL;
  }
  *out = (int)v;
  return 0;
}

bool sl_kernel_param_range(const char *kernel, const char *param, int *dflt, int *lo, int *hi)
{
  const sl_kernel_info *info = sl_kernel_info_find(kernel);
  if (!info || !sl_kernel_info_has_param(info, param))
    return false;
  for (size_t i = 0; i < sizeof int_params / sizeof int_params[0]; i++) {
    if (strcmp(int_params[i].name, param) != 0)
      continue;
    *dflt = strcmp(kernel, "resize_normalize") == 0 ? int_params[i].dflt_resize : int_params[i].dflt_image;
    *lo = int_params[i].lo;
    *hi = int_params[i].hi;
    return true;
  }
  return false;
}

/* Reads rows_out_per_row as "K per row" or "1 in K". */
static int resolve_expansion(double r, uint64_t *expand, uint64_t *keep_every,
                             char *err, size_t errlen)
{
  *expand = *keep_every = 1;
  if (r == 0 || r == 1)
    return 0;
  if (!(r > 0) || !isfinite(r) || r > 1e9 || 1 / r > 1e9)
    goto invalid;
  double k = r >= 1 ? r : 1 / r;
  double kr = round(k);
  if (fabs(k - kr) > 1e-6 * kr)
    goto invalid;
  *(r >= 1 ? expand : keep_every) = (uint64_t)kr;
  return 0;
invalid:
  say(err, errlen, "rows_out_per_row = %g: must be an integer K >= 1 or a fraction 1/K", r);
  return SL_EINVAL;
}

/* Fills the resolved fields of @p k (may be a scratch record) from @p a. */
static int resolve(sl_kernel *k, const char *name, const sl_kernel_args *a, char *err,
                   size_t errlen)
{
  int *slots[] = {&k->width,   &k->height,        &k->quality, &k->layers, &k->hidden,
                  &k->classes, &k->corrupt_every, &k->percent, &k->passes, &k->key_bytes};
  _Static_assert(sizeof slots / sizeof slots[0] == sizeof int_params / sizeof int_params[0],
                 "one slot per integer parameter");
  for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
    int rc = resolve_int(name, a, (int)i, slots[i], err, errlen);
    if (rc)
      return rc;
  }
  /* a kernel that makes the rows its data has (a row per group): its
   * rows_out_per_row is the model's estimate, not a factor it applies */
  double factor = sl_kernel_info_find(name)->data_rows ? 1 : a->rows_out_per_row;
  int rc = resolve_expansion(factor, &k->expand, &k->keep_every, err, errlen);
  if (rc)
    return rc;
  if (!(a->out_row_bytes >= 0 && a->out_row_bytes <= UINT32_MAX)) {
    say(err, errlen, "out_row_bytes = %g: must be in [0, 4 GiB)", a->out_row_bytes);
    return SL_EINVAL;
  }
  if (strcmp(name, "gensort") == 0 && a->out_row_bytes != 0 && a->out_row_bytes != SL_SORT_RECORD_BYTES) {
    say(err, errlen, "gensort writes records of %d bytes: row_bytes = %gB says otherwise", SL_SORT_RECORD_BYTES,
        a->out_row_bytes);
    return SL_EINVAL;
  }
  if (!(a->time_per_row >= 0 && a->time_per_task >= 0 && isfinite(a->time_per_row) &&
        isfinite(a->time_per_task))) {
    say(err, errlen, "modelled times must be finite and >= 0 (per row %g, per task %g)",
        a->time_per_row, a->time_per_task);
    return SL_EINVAL;
  }
  k->seed = a->seed;
  if (!(a->inflation >= 0 && isfinite(a->inflation))) {
    say(err, errlen, "inflation = %g: must be finite and >= 0", a->inflation);
    return SL_EINVAL;
  }
  k->out_bytes = (size_t)a->out_row_bytes;
  k->inflation = a->inflation;
  k->time_per_row = a->time_per_row;
  k->time_per_task = a->time_per_task;
  k->gpu_slot = a->gpu_slot;
  k->gpu_device = a->gpu_device;
  k->cancel = a->cancel;
  return 0;
}

int sl_kernel_check_args(const char *name, const sl_kernel_args *args, char *err,
                         size_t errlen)
{
  if (err && errlen)
    err[0] = '\0';
  if (!name || !sl_kernel_info_find(name) || !ops_of(name)) {
    say(err, errlen, "unknown kernel '%s'", name ? name : "(null)");
    return SL_ENOENT;
  }
  sl_kernel scratch;
  memset(&scratch, 0, sizeof scratch);
  return resolve(&scratch, name, args, err, errlen);
}

/* ---- the instance --------------------------------------------------------- */

sl_kernel *sl_kernel_new(const char *name, const sl_kernel_args *args)
{
  if (sl_kernel_check_args(name, args, NULL, 0) != 0)
    return NULL;
  sl_kernel *k = calloc(1, sizeof *k);
  if (!k)
    return NULL;
  k->info = sl_kernel_info_find(name);
  k->ops = ops_of(name);
  if (resolve(k, name, args, NULL, 0) != 0)
    goto fail_free;
  if (k->ops->init && k->ops->init(k) != 0)
    goto fail_free;
  return k;
fail_free:
  free(k);
  return NULL;
}

void sl_kernel_free(sl_kernel *k)
{
  if (!k)
    return;
  if (k->ops->fini)
    k->ops->fini(k);
  free(k);
}

const sl_kernel_info *sl_kernel_info_of(const sl_kernel *k) { return k->info; }
bool sl_kernel_on_gpu(const sl_kernel *k) { return k->on_gpu; }
bool sl_kernel_emulated(const sl_kernel *k) { return k->emulated; }

bool sl_kernel_modelled(const sl_kernel *k) { return k->ops->modelled || k->emulated; }

bool sl_kernel_burns_cpu(const sl_kernel *k) { return k->ops->hold != NULL; }

bool sl_kernel_whole_task(const sl_kernel *k) { return k->info->whole_task; }

int64_t sl_kernel_share_of(const sl_kernel *k, int64_t id, const uint8_t *payload, size_t len, int64_t shares)
{
  if (shares <= 1)
    return 0;
  if (k && k->ops->share)
    return k->ops->share(k, id, payload, len, shares);
  return (int64_t)((uint64_t)id % (uint64_t)shares);
}

int sl_kernel_hold(sl_kernel *k, double seconds)
{
  struct timespec deadline;
  double whole = floor(seconds);
  deadline.tv_sec = (time_t)whole;
  deadline.tv_nsec = (long)((seconds - whole) * 1e9);
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  int rc = k->ops->hold ? k->ops->hold(k, &deadline) : sl__sleep_until(k, &deadline);
  return rc ? sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name) : 0;
}
const char *sl_kernel_last_error(const sl_kernel *k) { return k->err; }

int sl__kernel_fail(sl_kernel *k, int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->err, sizeof k->err, fmt, ap);
  va_end(ap);
  return code;
}

int sl_kernel_begin_task(sl_kernel *k)
{
  k->err[0] = '\0';
  return k->ops->begin_task ? k->ops->begin_task(k) : 0;
}

int sl_kernel_generate(sl_kernel *k, uint32_t split, int64_t first_row_id,
                       int64_t nrows, sl_rows *out)
{
  k->err[0] = '\0';
  if (!k->ops->gen || nrows < 0 || first_row_id > INT64_MAX - nrows)
    return sl__kernel_fail(k, SL_EINVAL, "%s: generate needs a source kernel and 0 <= rows",
                           k->info->name);
  size_t mark = out->count;
  int rc = 0;
  /* the deadline is taken first: generating the rows is part of the time */
  struct timespec deadline = sl__deadline_after((double)nrows * k->time_per_row);
  for (int64_t i = 0; i < nrows && rc == 0; i++) {
    if (sl__kernel_cancelled(k))
      rc = sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name);
    else
      rc = k->ops->gen(k, first_row_id + i, split, out);
  }
  if (rc == 0 && k->ops->paced && k->time_per_row > 0 && sl__sleep_until(k, &deadline) != 0)
    rc = sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name);
  if (rc)
    sl_rows_truncate(out, mark);
  return rc;
}

/* Turns rows [mark, count) of @p out, one per kept input row, into K rows
 * each: ids id*K+j. Copies go after the block; row order is immaterial. */
static int expand(sl_kernel *k, sl_rows *out, size_t mark)
{
  uint64_t K = k->expand;
  size_t n = out->count - mark;
  if (K == 1 || n == 0)
    return 0;
  if (n > SIZE_MAX / K)
    return sl__kernel_fail(k, SL_ENOMEM, "%s: expansion too large", k->info->name);
  size_t bytes = out->bytes - out->row[mark].off;
  if ((bytes && K - 1 > SIZE_MAX / bytes) ||
      sl_rows_reserve(out, n * (K - 1), bytes * (K - 1)) != 0)
    return sl__kernel_fail(k, SL_ENOMEM, "%s: out of memory", k->info->name);
  for (size_t i = mark; i < mark + n; i++) {
    sl_row *row = &out->row[i];
    if (row->id < 0 || (uint64_t)row->id > (uint64_t)INT64_MAX / K)
      return sl__kernel_fail(k, SL_EKERNEL, "row %lld: id overflows when expanded %llu-fold",
                             (long long)row->id, (unsigned long long)K);
    row->id *= (int64_t)K;
  }
  for (size_t i = mark; i < mark + n; i++) {
    for (uint64_t j = 1; j < K; j++) {
      sl_row src = out->row[i]; /* copied: the append may move records */
      uint8_t *p = sl_rows_add(out, src.id + (int64_t)j, src.split, src.len);
      memcpy(p, out->data + src.off, src.len); /* room was reserved: no NULL */
    }
  }
  return 0;
}

int sl_kernel_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                    sl_rows *out)
{
  k->err[0] = '\0';
  if (!k->ops->apply || in == out || first > in->count || count > in->count - first)
    return sl__kernel_fail(k, SL_EINVAL, "%s: apply needs a map kernel and a range of the input",
                           k->info->name);
  size_t mark = out->count;
  int rc = k->ops->apply(k, in, first, count, out);
  if (rc == 0)
    rc = expand(k, out, mark);
  if (rc)
    sl_rows_truncate(out, mark);
  return rc;
}

/* ---- content -------------------------------------------------------------- */

void sl_kernel_fill(uint64_t seed, int64_t id, uint8_t *buf, size_t len)
{
  sl__rng r;
  sl__rng_seed(&r, seed, (uint64_t)id);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t v = sl__rng_next(&r);
    memcpy(buf + i, &v, 8); /* memcpy: buf has no alignment promise */
  }
  if (i < len) {
    uint64_t v = sl__rng_next(&r);
    memcpy(buf + i, &v, len - i);
  }
}

/* ---- time ----------------------------------------------------------------- */

struct timespec sl__deadline_after(double seconds)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  double whole = floor(seconds);
  t.tv_sec += (time_t)whole;
  t.tv_nsec += (long)((seconds - whole) * 1e9);
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

static bool before(const struct timespec *a, const struct timespec *b)
{
  return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int sl__sleep_until(const sl_kernel *k, const struct timespec *deadline)
{
  /* Absolute deadlines: oversleeping one step is not added to the next, so
   * the total stays within the scheduler's wakeup latency (~0.1 ms). */
  for (;;) {
    if (sl__kernel_cancelled(k))
      return SL_EINTR;
    struct timespec step = sl__deadline_after(0.010);
    if (!k->cancel || before(deadline, &step))
      step = *deadline;
    int rc;
    do
      rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &step, NULL);
    while (rc == EINTR);
    if (!before(&step, deadline))
      return 0;
  }
}

/* ---- row headers ---------------------------------------------------------- */

_Static_assert(sizeof(sl_row_hdr) == SL_ROW_HDR_BYTES, "row header is 8 bytes");

static size_t elem_size(unsigned kind)
{
  return kind == SL_ROW_U8_HWC ? 1 : kind == SL_ROW_F32_CHW ? 4 : 0;
}

size_t sl_row_hdr_payload_bytes(const sl_row_hdr *h)
{
  return SL_ROW_HDR_BYTES +
         (size_t)h->width * h->height * h->channels * elem_size(h->kind);
}

bool sl_row_hdr_parse(const uint8_t *payload, size_t len, sl_row_hdr *out)
{
  if (len < SL_ROW_HDR_BYTES)
    return false;
  sl_row_hdr h;
  memcpy(&h, payload, sizeof h);
  if (elem_size(h.kind) == 0 || sl_row_hdr_payload_bytes(&h) != len)
    return false;
  *out = h;
  return true;
}

void sl_row_hdr_write(uint8_t *payload, const sl_row_hdr *h)
{
  memcpy(payload, h, SL_ROW_HDR_BYTES);
}
