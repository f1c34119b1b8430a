/* Image kernels: jpeg_generate and jpeg_decode (TurboJPEG), resize_normalize. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "internal.h"
#include "models/error.h"

/* Decoded images larger than this are taken for corrupt headers rather than
 * allocated: 1 GiB of RGB is far past any image a pipeline means. */
#define SL__MAX_PIXEL_BYTES ((size_t)1 << 30)

/* ---- jpeg_generate ---------------------------------------------------------- */

typedef struct {
  tjhandle tj;
  uint8_t *pixels; /* width*height*3, reused for every image */
} jpeg_gen_state;

static void jpeg_gen_fini(sl_kernel *k)
{
  jpeg_gen_state *s = k->state;
  if (!s)
    return;
  if (s->tj)
    tjDestroy(s->tj);
  free(s->pixels);
  free(s);
  k->state = NULL;
}

static int jpeg_gen_init(sl_kernel *k)
{
  jpeg_gen_state *s = calloc(1, sizeof *s);
  if (!s)
    return SL_ENOMEM;
  k->state = s;
  s->tj = tjInitCompress();
  s->pixels = malloc((size_t)k->width * k->height * 3);
  if (!s->tj || !s->pixels) {
    jpeg_gen_fini(k);
    return SL_ENOMEM;
  }
  return 0;
}

/* Gradients with a per-image phase plus per-pixel noise: smooth enough to
 * compress like a photo, noisy enough that every image differs. */
static void paint(uint8_t *px, int w, int h, uint64_t seed, int64_t id)
{
  sl__rng r;
  sl__rng_seed(&r, sl__purpose_seed(seed, SL__PURPOSE_IMAGE), (uint64_t)id);
  uint64_t phase = sl__rng_next(&r);
  unsigned pr = phase & 255, pg = (phase >> 8) & 255, pb = (phase >> 16) & 255;
  uint64_t noise = 0;
  int left = 0;
  for (int y = 0; y < h; y++) {
    uint8_t *row = px + (size_t)y * w * 3;
    unsigned gy = (unsigned)(y * 255 / h);
    for (int x = 0; x < w; x++) {
      unsigned gx = (unsigned)(x * 255 / w);
      if (left == 0) {
        noise = sl__rng_next(&r);
        left = 8;
      }
      int n = (int)(noise & 31) - 16;
      noise >>= 8;
      left--;
      int v[3] = {(int)((gx + pr) & 255), (int)((gy + pg) & 255),
                  (int)(((gx + gy) / 2 + pb) & 255)};
      for (int c = 0; c < 3; c++) {
        int q = v[c] + n;
        row[3 * x + c] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
      }
    }
  }
}

/* corrupt_every = K: rows K-1, 2K-1, ... are broken on purpose, the same
 * ones on every run, so that a pipeline's handling of bad input can be
 * tried. The start-of-image marker is wiped: no decoder takes the row. */
static bool corrupted(const sl_kernel *k, int64_t id)
{
  return k->corrupt_every > 0 && id % k->corrupt_every == k->corrupt_every - 1;
}

static int jpeg_gen_row(sl_kernel *k, int64_t id, uint32_t split, sl_rows *out)
{
  jpeg_gen_state *s = k->state;
  paint(s->pixels, k->width, k->height, k->seed, id);
  /* Encode straight into a worst-case sized row, then trim: no copy. */
  unsigned long size = tjBufSize(k->width, k->height, TJSAMP_420);
  unsigned char *p = sl_rows_add(out, id, split, size);
  if (!p)
    return sl__kernel_fail(k, SL_ENOMEM, "jpeg_generate: out of memory at row %lld",
                           (long long)id);
  if (tjCompress2(s->tj, s->pixels, k->width, 0, k->height, TJPF_RGB, &p, &size,
                  TJSAMP_420, k->quality, TJFLAG_NOREALLOC) != 0)
    return sl__kernel_fail(k, SL_EKERNEL, "row %lld: JPEG encoding failed: %s",
                           (long long)id, tjGetErrorStr2(s->tj));
  sl_rows_trim_last(out, size);
  if (corrupted(k, id))
    memset(p, 0, 2);
  return 0;
}

const sl__kernel_ops sl__jpeg_generate_ops = {
  .init = jpeg_gen_init, .fini = jpeg_gen_fini, .gen = jpeg_gen_row};

/* ---- jpeg_decode ------------------------------------------------------------ */

static int jpeg_dec_init(sl_kernel *k)
{
  k->state = tjInitDecompress();
  return k->state ? 0 : SL_ENOMEM;
}

static void jpeg_dec_fini(sl_kernel *k)
{
  if (k->state)
    tjDestroy(k->state);
  k->state = NULL;
}

/* A TurboJPEG 2.1 handle that failed on a corrupt stream may misread the
 * next, valid one (it reports 0x0 images): start afresh after any failure. */
static int jpeg_dec_failed(sl_kernel *k, int64_t id, const char *what)
{
  sl__kernel_fail(k, SL_EKERNEL, "row %lld: corrupt JPEG: %s", (long long)id, what);
  jpeg_dec_fini(k);
  k->state = tjInitDecompress(); /* NULL: the next call reports no memory */
  return SL_EKERNEL;
}

static int jpeg_dec_row(sl_kernel *k, const sl_rows *in, size_t i, sl_rows *out)
{
  tjhandle tj = k->state;
  int64_t id = sl_rows_id(in, i);
  const unsigned char *jpeg = sl_rows_payload(in, i);
  unsigned long len = (unsigned long)sl_rows_len(in, i);
  int w = 0, h = 0, subsamp = 0, colorspace = 0; /* unset on some corrupt headers */
  if (tjDecompressHeader3(tj, jpeg, len, &w, &h, &subsamp, &colorspace) != 0)
    return jpeg_dec_failed(k, id, tjGetErrorStr2(tj));
  if (w < 1 || h < 1 || w > 65535 || h > 65535 || (size_t)w * h * 3 > SL__MAX_PIXEL_BYTES)
    return jpeg_dec_failed(k, id, "image size out of range");
  sl_row_hdr hdr = {.width = (uint16_t)w, .height = (uint16_t)h, .channels = 3,
                    .kind = SL_ROW_U8_HWC};
  uint8_t *p = sl_rows_add(out, id, sl_rows_split(in, i), sl_row_hdr_payload_bytes(&hdr));
  if (!p)
    return sl__kernel_fail(k, SL_ENOMEM, "jpeg_decode: out of memory at row %lld",
                           (long long)id);
  sl_row_hdr_write(p, &hdr);
  /* STOPONWARNING: a truncated file is a corrupt row, not a grey bottom half. */
  if (tjDecompress2(tj, jpeg, len, p + SL_ROW_HDR_BYTES, w, 0, h, TJPF_RGB,
                    TJFLAG_STOPONWARNING) != 0)
    return jpeg_dec_failed(k, id, tjGetErrorStr2(tj));
  return 0;
}

static int jpeg_dec_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                          sl_rows *out)
{
  for (size_t i = first; i < first + count; i++) {
    if (!k->state)
      return sl__kernel_fail(k, SL_ENOMEM, "jpeg_decode: no TurboJPEG handle");
    if (sl__kernel_cancelled(k))
      return sl__kernel_fail(k, SL_EINTR, "jpeg_decode: cancelled");
    if (!sl__kernel_keeps(k, sl_rows_id(in, i)))
      continue;
    int rc = jpeg_dec_row(k, in, i, out);
    if (rc)
      return rc;
  }
  return 0;
}

const sl__kernel_ops sl__jpeg_decode_ops = {
  .init = jpeg_dec_init, .fini = jpeg_dec_fini, .apply = jpeg_dec_apply};

/* ---- resize_normalize ------------------------------------------------------- */

/* ImageNet statistics, in RGB order, as torchvision's Normalize uses them. */
static const float mean[3] = {0.485f, 0.456f, 0.406f};
static const float stdev[3] = {0.229f, 0.224f, 0.225f};

typedef struct {
  float *planes;  /* 3 x height x width output, then copied into the row */
  int *x0, *x1;   /* source columns of each output column */
  float *fx;      /* weight of x1 */
  int src_width;  /* the source width the column tables are for, 0 = none */
} resize_state;

static void resize_fini(sl_kernel *k)
{
  resize_state *s = k->state;
  if (!s)
    return;
  free(s->planes);
  free(s->x0);
  free(s->x1);
  free(s->fx);
  free(s);
  k->state = NULL;
}

static int resize_init(sl_kernel *k)
{
  resize_state *s = calloc(1, sizeof *s);
  if (!s)
    return SL_ENOMEM;
  k->state = s;
  size_t W = (size_t)k->width;
  s->planes = malloc(3 * W * (size_t)k->height * sizeof(float));
  s->x0 = malloc(W * sizeof(int));
  s->x1 = malloc(W * sizeof(int));
  s->fx = malloc(W * sizeof(float));
  if (!s->planes || !s->x0 || !s->x1 || !s->fx) {
    resize_fini(k);
    return SL_ENOMEM;
  }
  return 0;
}

/* Bilinear sampling with half-pixel centres (OpenCV's INTER_LINEAR, PIL
 * without antialias): source coordinate of output i, and its two taps. */
static void taps(int i, int src, int dst, int *a, int *b, float *f)
{
  float s = ((float)i + 0.5f) * (float)src / (float)dst - 0.5f;
  if (s < 0)
    s = 0;
  int lo = (int)s;
  if (lo > src - 1)
    lo = src - 1;
  *a = lo;
  *b = lo + 1 < src ? lo + 1 : src - 1;
  *f = s - (float)lo;
  if (*f > 1)
    *f = 1;
}

static void column_tables(sl_kernel *k, int src_width)
{
  resize_state *s = k->state;
  if (s->src_width == src_width)
    return;
  for (int x = 0; x < k->width; x++)
    taps(x, src_width, k->width, &s->x0[x], &s->x1[x], &s->fx[x]);
  s->src_width = src_width;
}

static void resize_image(sl_kernel *k, const uint8_t *src, int sw, int sh)
{
  resize_state *s = k->state;
  int W = k->width, H = k->height;
  size_t plane = (size_t)W * H;
  float scale[3], bias[3];
  for (int c = 0; c < 3; c++) {
    scale[c] = 1.0f / (255.0f * stdev[c]);
    bias[c] = -mean[c] / stdev[c];
  }
  column_tables(k, sw);
  for (int y = 0; y < H; y++) {
    int y0, y1;
    float fy;
    taps(y, sh, H, &y0, &y1, &fy);
    const uint8_t *r0 = src + (size_t)y0 * sw * 3, *r1 = src + (size_t)y1 * sw * 3;
    for (int x = 0; x < W; x++) {
      int a = 3 * s->x0[x], b = 3 * s->x1[x];
      float fx = s->fx[x];
      for (int c = 0; c < 3; c++) {
        float top = r0[a + c] + fx * (float)(r0[b + c] - r0[a + c]);
        float bot = r1[a + c] + fx * (float)(r1[b + c] - r1[a + c]);
        float v = top + fy * (bot - top);
        s->planes[c * plane + (size_t)y * W + x] = v * scale[c] + bias[c];
      }
    }
  }
}

static int resize_row(sl_kernel *k, const sl_rows *in, size_t i, sl_rows *out)
{
  int64_t id = sl_rows_id(in, i);
  const uint8_t *p = sl_rows_payload(in, i);
  sl_row_hdr h;
  if (!sl_row_hdr_parse(p, sl_rows_len(in, i), &h) || h.kind != SL_ROW_U8_HWC ||
      h.channels != 3 || h.width == 0 || h.height == 0)
    return sl__kernel_fail(k, SL_EKERNEL, "row %lld: not an RGB image row (%zu bytes)",
                           (long long)id, sl_rows_len(in, i));
  resize_image(k, p + SL_ROW_HDR_BYTES, h.width, h.height);
  sl_row_hdr oh = {.width = (uint16_t)k->width, .height = (uint16_t)k->height,
                   .channels = 3, .kind = SL_ROW_F32_CHW};
  size_t bytes = sl_row_hdr_payload_bytes(&oh);
  uint8_t *o = sl_rows_add(out, id, sl_rows_split(in, i), bytes);
  if (!o)
    return sl__kernel_fail(k, SL_ENOMEM, "resize_normalize: out of memory at row %lld",
                           (long long)id);
  sl_row_hdr_write(o, &oh);
  /* Via a scratch plane: the row's payload has no float alignment. */
  memcpy(o + SL_ROW_HDR_BYTES, ((resize_state *)k->state)->planes, bytes - SL_ROW_HDR_BYTES);
  return 0;
}

static int resize_apply(sl_kernel *k, const sl_rows *in, size_t first, size_t count,
                        sl_rows *out)
{
  for (size_t i = first; i < first + count; i++) {
    if (sl__kernel_cancelled(k))
      return sl__kernel_fail(k, SL_EINTR, "resize_normalize: cancelled");
    if (!sl__kernel_keeps(k, sl_rows_id(in, i)))
      continue;
    int rc = resize_row(k, in, i, out);
    if (rc)
      return rc;
  }
  return 0;
}

const sl__kernel_ops sl__resize_normalize_ops = {
  .init = resize_init, .fini = resize_fini, .apply = resize_apply};
