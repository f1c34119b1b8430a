/* Transformations that commute, more or less: center_crop, augment and
 * normalize. A pipeline may run them in any order (a reorder group), and
 * each order does different work on different bytes: cropping first
 * shrinks what the others touch, normalizing first makes every later
 * pixel a float, four times the bytes. crop and augment take either
 * kind of image row; normalize turns uint8 pixels into floats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "models/error.h"

/* ImageNet statistics in RGB order (torchvision's Normalize). */
static const float mean_rgb[3] = {0.485f, 0.456f, 0.406f};
static const float std_rgb[3] = {0.229f, 0.224f, 0.225f};

static bool image_row(const sl_rows *in, size_t i, sl_row_hdr *h)
{
  return sl_row_hdr_parse(sl_rows_payload(in, i), sl_rows_len(in, i), h) && h->width > 0 && h->height > 0 &&
         h->channels > 0 && (h->kind == SL_ROW_U8_HWC || h->kind == SL_ROW_F32_CHW);
}

static int not_an_image(sl_kernel *k, const sl_rows *in, size_t i)
{
  return sl__kernel_fail(k, SL_EKERNEL, "%s: row %lld is not an image row (%zu bytes)", k->info->name,
                         (long long)sl_rows_id(in, i), sl_rows_len(in, i));
}

static uint8_t *add_row(sl_kernel *k, const sl_rows *in, size_t i, const sl_row_hdr *h, sl_rows *out)
{
  uint8_t *p = sl_rows_add(out, sl_rows_id(in, i), sl_rows_split(in, i), sl_row_hdr_payload_bytes(h));
  if (!p) {
    sl__kernel_fail(k, SL_ENOMEM, "%s: out of memory at row %lld", k->info->name, (long long)sl_rows_id(in, i));
    return NULL;
  }
  sl_row_hdr_write(p, h);
  return p;
}

/* Element (c, y, x) of an image of either kind, as a float; payloads
 * have no float alignment, hence memcpy. */
static float element(const uint8_t *px, const sl_row_hdr *h, int c, int y, int x)
{
  if (h->kind == SL_ROW_U8_HWC)
    return px[((size_t)y * h->width + x) * h->channels + c];
  float v;
  memcpy(&v, px + 4 * (((size_t)c * h->height + y) * h->width + x), sizeof v);
  return v;
}

static void set_element(uint8_t *px, const sl_row_hdr *h, int c, int y, int x, float v)
{
  if (h->kind == SL_ROW_U8_HWC) {
    float r = roundf(v);
    px[((size_t)y * h->width + x) * h->channels + c] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    return;
  }
  memcpy(px + 4 * (((size_t)c * h->height + y) * h->width + x), &v, sizeof v);
}

/* Runs @p row over every kept row of the range, watching for cancel. */
static int each_row(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out,
                    int (*row)(sl_kernel *, const sl_rows *, size_t, sl_rows *))
{
  for (size_t i = first; i < first + count; i++) {
    if (sl__kernel_cancelled(k))
      return sl__kernel_fail(k, SL_EINTR, "%s: cancelled", k->info->name);
    if (!sl__kernel_keeps(k, sl_rows_id(in, i)))
      continue;
    int rc = row(k, in, i, out);
    if (rc)
      return rc;
  }
  return 0;
}

/* ---- center_crop ------------------------------------------------------------ */

/* The centered percent x percent of the image, at least one pixel each
 * way; the kind of row is kept. */
static int crop_row(sl_kernel *k, const sl_rows *in, size_t i, sl_rows *out)
{
  sl_row_hdr h;
  if (!image_row(in, i, &h))
    return not_an_image(k, in, i);
  int cw = (int)fmax(1, floor(h.width * k->percent / 100.0)), ch = (int)fmax(1, floor(h.height * k->percent / 100.0));
  int x0 = (h.width - cw) / 2, y0 = (h.height - ch) / 2;
  sl_row_hdr oh = {.width = (uint16_t)cw, .height = (uint16_t)ch, .channels = h.channels, .kind = h.kind};
  uint8_t *o = add_row(k, in, i, &oh, out);
  if (!o)
    return SL_ENOMEM;
  const uint8_t *src = sl_rows_payload(in, i) + SL_ROW_HDR_BYTES;
  uint8_t *dst = o + SL_ROW_HDR_BYTES;
  if (h.kind == SL_ROW_U8_HWC) {
    size_t line = (size_t)cw * h.channels;
    for (int y = 0; y < ch; y++)
      memcpy(dst + (size_t)y * line, src + (((size_t)(y0 + y) * h.width + x0) * h.channels), line);
  } else {
    for (int c = 0; c < h.channels; c++)
      for (int y = 0; y < ch; y++)
        memcpy(dst + 4 * (((size_t)c * ch + y) * cw), src + 4 * (((size_t)c * h.height + y0 + y) * h.width + x0),
               4 * (size_t)cw);
  }
  return 0;
}

static int crop_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out)
{
  return each_row(k, in, first, count, out, crop_row);
}

const sl__kernel_ops sl__center_crop_ops = {.apply = crop_apply};

/* ---- augment ---------------------------------------------------------------- */

/* A random horizontal flip, a random gain and offset per channel, then
 * @c passes rounds of a [1 2 1]/4 horizontal blur: the draws come from
 * the row's id, so every engine and every retry augments a row alike.
 * Its cost is per element and pass, whatever the kind of row. Rows are
 * worked in floats and written back in the row's own kind (uint8 rounds
 * and clamps). */
static int augment_row(sl_kernel *k, const sl_rows *in, size_t i, sl_rows *out)
{
  sl_row_hdr h;
  if (!image_row(in, i, &h))
    return not_an_image(k, in, i);
  sl__rng r;
  sl__rng_seed(&r, sl__purpose_seed(k->seed, SL__PURPOSE_AUGMENT), (uint64_t)sl_rows_id(in, i));
  bool flip = sl__rng_next(&r) & 1;
  float *line = malloc(sizeof *line * 2 * (size_t)h.width);
  if (!line)
    return sl__kernel_fail(k, SL_ENOMEM, "augment: out of memory at row %lld", (long long)sl_rows_id(in, i));
  float *tmp = line + h.width;
  uint8_t *o = add_row(k, in, i, &h, out);
  if (!o) {
    free(line);
    return SL_ENOMEM;
  }
  const uint8_t *src = sl_rows_payload(in, i) + SL_ROW_HDR_BYTES;
  float scale = h.kind == SL_ROW_U8_HWC ? 255.0f : 1.0f;
  for (int c = 0; c < h.channels; c++) {
    float gain = 1.0f + 0.2f * sl__rng_sym(&r), offset = 0.1f * scale * sl__rng_sym(&r);
    for (int y = 0; y < h.height; y++) {
      for (int x = 0; x < h.width; x++)
        line[x] = gain * element(src, &h, c, y, flip ? h.width - 1 - x : x) + offset;
      for (int p = 0; p < k->passes; p++) {
        for (int x = 0; x < h.width; x++) {
          float l = line[x > 0 ? x - 1 : x], rr = line[x + 1 < h.width ? x + 1 : x];
          tmp[x] = 0.25f * l + 0.5f * line[x] + 0.25f * rr;
        }
        memcpy(line, tmp, sizeof *line * (size_t)h.width);
      }
      for (int x = 0; x < h.width; x++)
        set_element(o + SL_ROW_HDR_BYTES, &h, c, y, x, line[x]);
    }
  }
  free(line);
  return 0;
}

static int augment_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out)
{
  return each_row(k, in, first, count, out, augment_row);
}

const sl__kernel_ops sl__augment_ops = {.apply = augment_apply};

/* ---- normalize -------------------------------------------------------------- */

/* uint8 RGB (HWC) to float32 CHW, scaled to [0, 1] and standardized by
 * ImageNet's statistics: four bytes out for every byte in. A float row
 * has been normalized already; doing it twice is a pipeline's mistake. */
static int normalize_row(sl_kernel *k, const sl_rows *in, size_t i, sl_rows *out)
{
  sl_row_hdr h;
  if (!image_row(in, i, &h))
    return not_an_image(k, in, i);
  if (h.kind != SL_ROW_U8_HWC || h.channels != 3)
    return sl__kernel_fail(k, SL_EKERNEL, "normalize: row %lld is not uint8 RGB (normalized twice?)",
                           (long long)sl_rows_id(in, i));
  sl_row_hdr oh = {.width = h.width, .height = h.height, .channels = 3, .kind = SL_ROW_F32_CHW};
  uint8_t *o = add_row(k, in, i, &oh, out);
  if (!o)
    return SL_ENOMEM;
  const uint8_t *src = sl_rows_payload(in, i) + SL_ROW_HDR_BYTES;
  for (int c = 0; c < 3; c++) {
    float a = 1.0f / (255.0f * std_rgb[c]), b = -mean_rgb[c] / std_rgb[c];
    for (int y = 0; y < h.height; y++)
      for (int x = 0; x < h.width; x++)
        set_element(o + SL_ROW_HDR_BYTES, &oh, c, y, x, a * src[((size_t)y * h.width + x) * 3 + c] + b);
  }
  return 0;
}

static int normalize_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count, sl_rows *out)
{
  return each_row(k, in, first, count, out, normalize_row);
}

const sl__kernel_ops sl__normalize_ops = {.apply = normalize_apply};
