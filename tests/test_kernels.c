/* Unit tests of workloads/kernels.h and workloads/sink.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/error.h"
#include "workloads/kernels.h"
#include "workloads/kernels/gemm_cuda.h"
#include "workloads/kernels/internal.h"
#include "workloads/sink.h"
#include "workloads/sort_check.h"

/* ---- helpers ------------------------------------------------------------------ */

static double now_s(clockid_t clock)
{
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static sl_kernel *kernel(const char *name, const sl_kernel_args *a)
{
  sl_kernel *k = sl_kernel_new(name, a);
  assert_non_null(k);
  return k;
}

/* Rows with ids first..first+n-1 of split @p split, each @p len bytes of
 * generate content under seed 1. */
static void make_rows(sl_rows *r, uint32_t split, int64_t first, int64_t n, double len)
{
  sl_kernel_args a = {.seed = 1, .out_row_bytes = len};
  sl_kernel *g = kernel("generate", &a);
  assert_int_equal(sl_kernel_generate(g, split, first, n, r), 0);
  sl_kernel_free(g);
}

/* n JPEG images of w x h, decoded into U8_HWC rows. */
static void make_images(sl_rows *out, int64_t n, int w, int h)
{
  sl_param p[] = {{"width", w}, {"height", h}, {"quality", 90}};
  sl_kernel_args ga = {.params = p, .nparams = 3, .seed = 5};
  sl_kernel_args da = {0};
  sl_kernel *gen = kernel("jpeg_generate", &ga), *dec = kernel("jpeg_decode", &da);
  sl_rows jpeg;
  sl_rows_init(&jpeg);
  assert_int_equal(sl_kernel_generate(gen, 0, 0, n, &jpeg), 0);
  assert_int_equal(sl_kernel_apply(dec, &jpeg, 0, n, out), 0);
  sl_rows_free(&jpeg);
  sl_kernel_free(gen);
  sl_kernel_free(dec);
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* ---- rows --------------------------------------------------------------------- */

static void test_rows_basics(void **state)
{
  (void)state;
  sl_rows r, s;
  sl_rows_init(&r);
  sl_rows_init(&s);
  assert_int_equal(sl_rows_append(&r, 10, 1, "abc", 3), 0);
  assert_int_equal(sl_rows_append(&r, 11, 1, "", 0), 0);
  uint8_t *p = sl_rows_add(&r, 12, 2, 100);
  assert_non_null(p);
  memset(p, 'x', 100);
  sl_rows_trim_last(&r, 5);
  assert_int_equal(sl_rows_count(&r), 3);
  assert_int_equal(sl_rows_bytes(&r), 8);
  assert_int_equal(sl_rows_len(&r, 2), 5);
  assert_memory_equal(sl_rows_payload(&r, 0), "abc", 3);

  assert_int_equal(sl_rows_append_range(&s, &r, 1, 2), 0);
  assert_int_equal(sl_rows_count(&s), 2);
  assert_int_equal(sl_rows_bytes(&s), 5);
  assert_int_equal(sl_rows_id(&s, 1), 12);
  assert_int_equal(sl_rows_split(&s, 1), 2);
  assert_memory_equal(sl_rows_payload(&s, 1), "xxxxx", 5);
  assert_int_equal(sl_rows_append_range(&s, &r, 2, 2), SL_EINVAL);

  sl_rows_truncate(&r, 1);
  assert_int_equal(sl_rows_bytes(&r), 3);
  assert_int_equal(sl_rows_shrink_to_fit(&r), 0);
  assert_int_equal(sl_rows_footprint(&r), sizeof(sl_row) + 3);

  sl_rows_move(&s, &r);
  assert_int_equal(sl_rows_count(&s), 1);
  assert_int_equal(sl_rows_count(&r), 0);
  assert_null(r.data);
  sl_rows_reset(&s);
  assert_int_equal(sl_rows_bytes(&s), 0);
  sl_rows_free(&s);
  sl_rows_free(&r);
}

/* ---- arguments ------------------------------------------------------------------ */

static void test_check_args(void **state)
{
  (void)state;
  char err[160];
  sl_kernel_args a = {0};
  assert_int_equal(sl_kernel_check_args("nope", &a, err, sizeof err), SL_ENOENT);
  assert_non_null(strstr(err, "nope"));
  assert_null(sl_kernel_new("nope", &a));

  sl_param q = {"quality", 101};
  a.params = &q;
  a.nparams = 1;
  assert_int_equal(sl_kernel_check_args("jpeg_generate", &a, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "quality"));
  assert_null(sl_kernel_new("jpeg_generate", &a));

  sl_kernel_args e = {.rows_out_per_row = 1.5};
  assert_int_equal(sl_kernel_check_args("noop", &e, err, sizeof err), SL_EINVAL);
  e.rows_out_per_row = 0.25;
  assert_int_equal(sl_kernel_check_args("noop", &e, NULL, 0), 0);
  e.rows_out_per_row = 0.3;
  assert_int_equal(sl_kernel_check_args("noop", &e, NULL, 0), SL_EINVAL);
  e.rows_out_per_row = -1;
  assert_int_equal(sl_kernel_check_args("noop", &e, NULL, 0), SL_EINVAL);

  /* every registry kernel can be built from zeroed args */
  for (int i = 0; i < sl_kernel_info_count(); i++) {
    sl_kernel_args z = {0};
    sl_kernel *k = sl_kernel_new(sl_kernel_info_at(i)->name, &z);
    assert_non_null(k);
    assert_ptr_equal(sl_kernel_info_of(k), sl_kernel_info_at(i));
    sl_kernel_free(k);
  }
}

static void test_wrong_entry_point(void **state)
{
  (void)state;
  sl_kernel_args a = {0};
  sl_kernel *g = kernel("generate", &a), *n = kernel("noop", &a);
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  assert_int_equal(sl_kernel_apply(g, &in, 0, 0, &out), SL_EINVAL);
  assert_int_equal(sl_kernel_generate(n, 0, 0, 1, &out), SL_EINVAL);
  assert_int_equal(sl_kernel_apply(n, &in, 0, 1, &out), SL_EINVAL); /* range */
  assert_int_equal(sl_kernel_generate(g, 0, 0, -1, &out), SL_EINVAL);
  sl_kernel_free(g);
  sl_kernel_free(n);
}

/* ---- generate ------------------------------------------------------------------- */

static void test_generate_deterministic(void **state)
{
  (void)state;
  sl_rows a, b, c;
  sl_rows_init(&a);
  sl_rows_init(&b);
  sl_rows_init(&c);
  sl_kernel_args args = {.seed = 42, .out_row_bytes = 1001};
  sl_kernel *k1 = kernel("generate", &args), *k2 = kernel("generate", &args);
  assert_int_equal(sl_kernel_generate(k1, 3, 100, 50, &a), 0);
  /* in chunks, by another instance: the same rows */
  assert_int_equal(sl_kernel_generate(k2, 3, 100, 20, &b), 0);
  assert_int_equal(sl_kernel_generate(k2, 3, 120, 30, &b), 0);
  assert_int_equal(sl_rows_count(&a), 50);
  assert_int_equal(sl_rows_bytes(&a), 50 * 1001);
  assert_int_equal(sl_rows_bytes(&a), sl_rows_bytes(&b));
  assert_memory_equal(a.data, b.data, sl_rows_bytes(&a));
  for (size_t i = 0; i < 50; i++) {
    assert_int_equal(sl_rows_id(&a, i), 100 + (int64_t)i);
    assert_int_equal(sl_rows_split(&a, i), 3);
    assert_int_equal(sl_rows_len(&a, i), 1001);
  }
  /* another seed: other content */
  sl_kernel_args other = args;
  other.seed = 43;
  sl_kernel *k3 = kernel("generate", &other);
  assert_int_equal(sl_kernel_generate(k3, 3, 100, 50, &c), 0);
  assert_memory_not_equal(a.data, c.data, 1001);
  /* rows differ from each other */
  assert_memory_not_equal(sl_rows_payload(&a, 0), sl_rows_payload(&a, 1), 1001);
  sl_kernel_free(k1);
  sl_kernel_free(k2);
  sl_kernel_free(k3);
  sl_rows_free(&a);
  sl_rows_free(&b);
  sl_rows_free(&c);
}

static void test_generate_incompressible(void **state)
{
  (void)state;
  enum { ROW = 1 << 16, ROWS = 64 };
  sl_rows r;
  sl_rows_init(&r);
  sl_kernel_args args = {.seed = 7, .out_row_bytes = ROW};
  sl_kernel *k = kernel("generate", &args);
  double t0 = now_s(CLOCK_MONOTONIC);
  assert_int_equal(sl_kernel_generate(k, 0, 0, ROWS, &r), 0);
  double dt = now_s(CLOCK_MONOTONIC) - t0;
  print_message("generate: %.2f GB/s (this build)\n", ROW * (double)ROWS / dt / 1e9);

  /* every 8-byte word distinct */
  size_t nw = sl_rows_bytes(&r) / 8;
  uint64_t *w = malloc(nw * 8);
  assert_non_null(w);
  memcpy(w, r.data, nw * 8);
  qsort(w, nw, 8, cmp_u64);
  size_t dup = 0;
  for (size_t i = 1; i < nw; i++)
    dup += w[i] == w[i - 1];
  assert_int_equal(dup, 0);
  free(w);

  /* byte histogram flat: chi-square with 255 degrees of freedom stays far
   * below 400 for random bytes, far above for anything compressible */
  size_t hist[256] = {0};
  for (size_t i = 0; i < sl_rows_bytes(&r); i++)
    hist[r.data[i]]++;
  double expect = (double)sl_rows_bytes(&r) / 256, chi = 0;
  for (int i = 0; i < 256; i++)
    chi += ((double)hist[i] - expect) * ((double)hist[i] - expect) / expect;
  assert_true(chi < 400);
  sl_kernel_free(k);
  sl_rows_free(&r);
}

static void test_generate_odd_sizes(void **state)
{
  (void)state;
  sl_rows r;
  sl_rows_init(&r);
  for (int len = 0; len < 20; len++) {
    sl_rows_reset(&r);
    make_rows(&r, 0, 5, 3, len);
    assert_int_equal(sl_rows_bytes(&r), 3 * len);
    uint8_t buf[20];
    sl_kernel_fill(1, 6, buf, (size_t)len);
    assert_memory_equal(sl_rows_payload(&r, 1), buf, (size_t)len);
  }
  sl_rows_free(&r);
}

/* ---- pass-through and expansion ------------------------------------------------- */

static void test_noop_and_resize(void **state)
{
  (void)state;
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  make_rows(&in, 2, 0, 10, 64);
  sl_kernel_args a = {0};
  sl_kernel *k = kernel("noop", &a);
  assert_int_equal(sl_kernel_apply(k, &in, 3, 4, &out), 0);
  assert_int_equal(sl_rows_count(&out), 4);
  assert_int_equal(sl_rows_id(&out, 0), 3);
  assert_memory_equal(out.data, sl_rows_payload(&in, 3), 4 * 64);
  sl_kernel_free(k);

  /* out_row_bytes: cut to 16, or padded to 100 with the row's content */
  sl_kernel_args cut = {.out_row_bytes = 16};
  k = kernel("noop", &cut);
  sl_rows_reset(&out);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 10, &out), 0);
  assert_int_equal(sl_rows_bytes(&out), 160);
  assert_memory_equal(sl_rows_payload(&out, 9), sl_rows_payload(&in, 9), 16);
  sl_kernel_free(k);
  sl_kernel_args pad = {.out_row_bytes = 100, .seed = 9};
  k = kernel("noop", &pad);
  sl_rows_reset(&out);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 10, &out), 0);
  assert_int_equal(sl_rows_bytes(&out), 1000);
  assert_memory_equal(sl_rows_payload(&out, 4), sl_rows_payload(&in, 4), 64);
  sl_kernel_free(k);
  sl_rows_free(&in);
  sl_rows_free(&out);
}

static void test_expansion(void **state)
{
  (void)state;
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  make_rows(&in, 1, 10, 4, 8); /* ids 10..13 */
  sl_kernel_args a = {.rows_out_per_row = 3};
  sl_kernel *k = kernel("noop", &a);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 4, &out), 0);
  assert_int_equal(sl_rows_count(&out), 12);
  assert_int_equal(sl_rows_bytes(&out), 12 * 8);
  int seen[40] = {0};
  for (size_t i = 0; i < 12; i++) {
    int64_t id = sl_rows_id(&out, i);
    assert_true(id >= 30 && id < 42);
    seen[id - 30]++;
    assert_int_equal(sl_rows_split(&out, i), 1);
    /* same payload as its parent id/3 */
    assert_memory_equal(sl_rows_payload(&out, i), sl_rows_payload(&in, (size_t)(id / 3 - 10)), 8);
  }
  for (int i = 0; i < 12; i++)
    assert_int_equal(seen[i], 1);
  sl_kernel_free(k);

  sl_kernel_args f = {.rows_out_per_row = 0.5};
  k = kernel("noop", &f);
  sl_rows_reset(&out);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 4, &out), 0);
  assert_int_equal(sl_rows_count(&out), 2);
  assert_int_equal(sl_rows_id(&out, 0), 10);
  assert_int_equal(sl_rows_id(&out, 1), 12);
  sl_kernel_free(k);
  sl_rows_free(&in);
  sl_rows_free(&out);
}

/* ---- sleep and spin --------------------------------------------------------------- */

static void test_sleep_accuracy(void **state)
{
  (void)state;
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  make_rows(&in, 0, 0, 10, 32);
  sl_kernel_args a = {.time_per_row = 0.002, .time_per_task = 0.005};
  sl_kernel *k = kernel("sleep", &a);
  double t0 = now_s(CLOCK_MONOTONIC);
  assert_int_equal(sl_kernel_begin_task(k), 0);
  double t1 = now_s(CLOCK_MONOTONIC);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 10, &out), 0);
  double t2 = now_s(CLOCK_MONOTONIC);
  print_message("sleep: task %.3f ms (5), rows %.3f ms (20)\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3);
  /* held at least the modelled time; the upper limits only catch gross
   * errors, since a loaded machine may oversleep by any amount */
  assert_true(t1 - t0 >= 0.005 && t1 - t0 < 2.0);
  assert_true(t2 - t1 >= 0.020 && t2 - t1 < 2.0);
  assert_int_equal(sl_rows_count(&out), 10);
  sl_kernel_free(k);
  sl_rows_free(&in);
  sl_rows_free(&out);
}

static void test_spin_burns_cpu(void **state)
{
  (void)state;
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  make_rows(&in, 0, 0, 4, 100000);
  sl_kernel_args a = {.time_per_row = 0.005};
  sl_kernel *k = kernel("spin", &a);
  double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 4, &out), 0);
  double wall = now_s(CLOCK_MONOTONIC) - w0, cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  print_message("spin: wall %.3f ms, cpu %.3f ms (20)\n", wall * 1e3, cpu * 1e3);
  assert_true(wall >= 0.020 && wall < 2.0);
  assert_true(cpu > 0.002); /* burnt, not slept: a sleep would use no CPU at all */
  assert_memory_equal(out.data, in.data, sl_rows_bytes(&in));
  sl_kernel_free(k);
  sl_rows_free(&in);
  sl_rows_free(&out);
}

static void test_cancel(void **state)
{
  (void)state;
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  make_rows(&in, 0, 0, 2, 8);
  atomic_bool stop = true;
  sl_kernel_args a = {.time_per_row = 5, .cancel = &stop};
  sl_kernel *k = kernel("sleep", &a);
  double t0 = now_s(CLOCK_MONOTONIC);
  assert_int_equal(sl_kernel_apply(k, &in, 0, 2, &out), SL_EINTR);
  assert_true(now_s(CLOCK_MONOTONIC) - t0 < 3.0); /* well before the 10 s it would sleep */
  assert_int_equal(sl_rows_count(&out), 0); /* nothing half-done */
  sl_kernel_free(k);
  sl_rows_free(&in);
  sl_rows_free(&out);
}

/* ---- images --------------------------------------------------------------------- */

static void test_jpeg_round_trip(void **state)
{
  (void)state;
  sl_param p[] = {{"width", 64}, {"height", 48}, {"quality", 85}};
  sl_kernel_args ga = {.params = p, .nparams = 3, .seed = 3};
  sl_kernel_args da = {0};
  sl_kernel *gen = kernel("jpeg_generate", &ga), *gen2 = kernel("jpeg_generate", &ga);
  sl_kernel *dec = kernel("jpeg_decode", &da);
  sl_rows jpeg, jpeg2, rgb;
  sl_rows_init(&jpeg);
  sl_rows_init(&jpeg2);
  sl_rows_init(&rgb);
  assert_int_equal(sl_kernel_generate(gen, 4, 20, 5, &jpeg), 0);
  assert_int_equal(sl_kernel_generate(gen2, 4, 20, 5, &jpeg2), 0);
  assert_int_equal(sl_rows_bytes(&jpeg), sl_rows_bytes(&jpeg2));
  assert_memory_equal(jpeg.data, jpeg2.data, sl_rows_bytes(&jpeg));
  assert_true(sl_rows_len(&jpeg, 0) < 64 * 48 * 3); /* compressed */
  assert_int_equal(sl_rows_payload(&jpeg, 0)[0], 0xFF); /* SOI marker */
  assert_int_equal(sl_rows_payload(&jpeg, 0)[1], 0xD8);

  assert_int_equal(sl_kernel_apply(dec, &jpeg, 0, 5, &rgb), 0);
  assert_int_equal(sl_rows_count(&rgb), 5);
  for (size_t i = 0; i < 5; i++) {
    sl_row_hdr h;
    assert_true(sl_row_hdr_parse(sl_rows_payload(&rgb, i), sl_rows_len(&rgb, i), &h));
    assert_int_equal(h.width, 64);
    assert_int_equal(h.height, 48);
    assert_int_equal(h.channels, 3);
    assert_int_equal(h.kind, SL_ROW_U8_HWC);
    assert_int_equal(sl_rows_len(&rgb, i), 8 + 64 * 48 * 3);
    assert_int_equal(sl_rows_id(&rgb, i), 20 + (int64_t)i);
    assert_int_equal(sl_rows_split(&rgb, i), 4);
  }
  sl_kernel_free(gen);
  sl_kernel_free(gen2);
  sl_kernel_free(dec);
  sl_rows_free(&jpeg);
  sl_rows_free(&jpeg2);
  sl_rows_free(&rgb);
}

static void test_jpeg_corrupt(void **state)
{
  (void)state;
  sl_param p[] = {{"width", 32}, {"height", 32}};
  sl_kernel_args ga = {.params = p, .nparams = 2};
  sl_kernel_args da = {0};
  sl_kernel *gen = kernel("jpeg_generate", &ga), *dec = kernel("jpeg_decode", &da);
  sl_rows jpeg, bad, out;
  sl_rows_init(&jpeg);
  sl_rows_init(&bad);
  sl_rows_init(&out);
  assert_int_equal(sl_kernel_generate(gen, 0, 5, 3, &jpeg), 0);
  /* row 5 intact, row 6 truncated to half, row 7 garbage */
  assert_int_equal(sl_rows_append_range(&bad, &jpeg, 0, 1), 0);
  size_t half = sl_rows_len(&jpeg, 1) / 2;
  assert_int_equal(sl_rows_append(&bad, 6, 0, sl_rows_payload(&jpeg, 1), half), 0);
  assert_int_equal(sl_rows_append(&bad, 7, 0, "not a jpeg at all", 17), 0);
  assert_int_equal(sl_rows_append(&out, 99, 0, "x", 1), 0);

  assert_int_equal(sl_kernel_apply(dec, &bad, 0, 1, &out), 0);
  assert_int_equal(sl_rows_count(&out), 2);
  assert_int_equal(sl_kernel_apply(dec, &bad, 1, 1, &out), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(dec), "row 6"));
  /* row 5 still decodes after a failure (the decoder's state is not stale) */
  assert_int_equal(sl_kernel_apply(dec, &bad, 0, 3, &out), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(dec), "row 6"));
  assert_int_equal(sl_kernel_apply(dec, &bad, 2, 1, &out), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(dec), "row 7"));
  print_message("corrupt: %s\n", sl_kernel_last_error(dec));
  assert_int_equal(sl_rows_count(&out), 2); /* failed calls left no rows */
  assert_int_equal(sl_kernel_apply(dec, &bad, 0, 1, &out), 0);
  assert_int_equal(sl_rows_count(&out), 3);
  sl_kernel_free(gen);
  sl_kernel_free(dec);
  sl_rows_free(&jpeg);
  sl_rows_free(&bad);
  sl_rows_free(&out);
}

static void test_resize_normalize(void **state)
{
  (void)state;
  sl_rows img, out;
  sl_rows_init(&img);
  sl_rows_init(&out);
  make_images(&img, 3, 80, 60);
  sl_param p[] = {{"width", 32}, {"height", 24}};
  sl_kernel_args a = {.params = p, .nparams = 2};
  sl_kernel *k = kernel("resize_normalize", &a);
  assert_int_equal(sl_kernel_apply(k, &img, 0, 3, &out), 0);
  assert_int_equal(sl_rows_count(&out), 3);
  const float lo = (0 - 0.485f) / 0.229f, hi = (1 - 0.406f) / 0.225f;
  for (size_t i = 0; i < 3; i++) {
    sl_row_hdr h;
    assert_true(sl_row_hdr_parse(sl_rows_payload(&out, i), sl_rows_len(&out, i), &h));
    assert_int_equal(h.kind, SL_ROW_F32_CHW);
    assert_int_equal(h.width, 32);
    assert_int_equal(h.height, 24);
    assert_int_equal(h.channels, 3);
    assert_int_equal(sl_rows_len(&out, i), 8 + 3 * 32 * 24 * 4);
    for (size_t j = 0; j < 3 * 32 * 24; j++) {
      float v;
      memcpy(&v, sl_rows_payload(&out, i) + 8 + 4 * j, 4);
      assert_true(v >= lo - 1e-4f && v <= hi + 1e-4f);
    }
  }

  /* hand check: a flat image of value 100 normalizes to (100/255-mean)/std */
  sl_rows flat, fo;
  sl_rows_init(&flat);
  sl_rows_init(&fo);
  sl_row_hdr h = {.width = 7, .height = 5, .channels = 3, .kind = SL_ROW_U8_HWC};
  uint8_t *px = sl_rows_add(&flat, 1, 0, sl_row_hdr_payload_bytes(&h));
  sl_row_hdr_write(px, &h);
  memset(px + 8, 100, 7 * 5 * 3);
  assert_int_equal(sl_kernel_apply(k, &flat, 0, 1, &fo), 0);
  const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
  for (int c = 0; c < 3; c++)
    for (int j = 0; j < 32 * 24; j += 37) {
      float v;
      memcpy(&v, sl_rows_payload(&fo, 0) + 8 + 4 * (c * 32 * 24 + j), 4);
      assert_float_equal(v, (100.0f / 255 - mean[c]) / sd[c], 1e-4);
    }

  /* a row that is not an image */
  sl_rows_reset(&fo);
  assert_int_equal(sl_kernel_apply(k, &img, 0, 1, &fo), 0);
  sl_rows junk;
  sl_rows_init(&junk);
  make_rows(&junk, 0, 77, 1, 50);
  assert_int_equal(sl_kernel_apply(k, &junk, 0, 1, &fo), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(k), "row 77"));
  assert_int_equal(sl_rows_count(&fo), 1);
  sl_kernel_free(k);
  sl_rows_free(&img);
  sl_rows_free(&out);
  sl_rows_free(&flat);
  sl_rows_free(&fo);
  sl_rows_free(&junk);
}

/* ---- center_crop, augment, normalize --------------------------------------------- */

static sl_row_hdr hdr_of(const sl_rows *r, size_t i)
{
  sl_row_hdr h;
  assert_true(sl_row_hdr_parse(sl_rows_payload(r, i), sl_rows_len(r, i), &h));
  return h;
}

static void apply_all(const char *name, const sl_param *p, int np, const sl_rows *in, sl_rows *out)
{
  sl_kernel_args a = {.params = p, .nparams = np, .seed = 3};
  sl_kernel *k = kernel(name, &a);
  sl_rows_reset(out);
  assert_int_equal(sl_kernel_apply(k, in, 0, sl_rows_count(in), out), 0);
  sl_kernel_free(k);
}

/* Each takes the rows the others make, in any order, and sizes its output
 * as the spec's inflation says: crop 50% keeps a quarter, normalize makes
 * four bytes of each. */
static void test_reorderable_image_kernels(void **state)
{
  (void)state;
  sl_rows img, a, b, c;
  sl_rows_init(&img);
  sl_rows_init(&a);
  sl_rows_init(&b);
  sl_rows_init(&c);
  make_images(&img, 2, 64, 48);
  sl_param half[] = {{"percent", 50}}, two[] = {{"passes", 2}};

  apply_all("center_crop", half, 1, &img, &a); /* uint8, 64x48 -> 32x24 */
  sl_row_hdr h = hdr_of(&a, 0);
  assert_int_equal(h.kind, SL_ROW_U8_HWC);
  assert_int_equal(h.width, 32);
  assert_int_equal(h.height, 24);
  /* the crop is the center: pixel (0, 0) of the crop is (16, 12) of the image */
  assert_memory_equal(sl_rows_payload(&a, 1) + 8, sl_rows_payload(&img, 1) + 8 + (12 * 64 + 16) * 3, 3 * 32);

  apply_all("normalize", NULL, 0, &a, &b); /* uint8 -> float, 4 bytes a byte */
  h = hdr_of(&b, 0);
  assert_int_equal(h.kind, SL_ROW_F32_CHW);
  assert_int_equal(sl_rows_len(&b, 0) - 8, 4 * (sl_rows_len(&a, 0) - 8));
  float v;
  memcpy(&v, sl_rows_payload(&b, 0) + 8, 4); /* channel 0, pixel (0, 0) */
  assert_float_equal(v, (sl_rows_payload(&a, 0)[8] / 255.0f - 0.485f) / 0.229f, 1e-5);

  apply_all("center_crop", half, 1, &b, &c); /* a float crop keeps its kind */
  h = hdr_of(&c, 0);
  assert_int_equal(h.kind, SL_ROW_F32_CHW);
  assert_int_equal(h.width, 16);
  assert_int_equal(h.height, 12);

  /* augment keeps the size and kind, changes the pixels, the same way twice */
  apply_all("augment", two, 1, &b, &c);
  assert_int_equal(sl_rows_len(&c, 1), sl_rows_len(&b, 1));
  assert_int_equal(hdr_of(&c, 1).kind, SL_ROW_F32_CHW);
  assert_true(memcmp(sl_rows_payload(&c, 1), sl_rows_payload(&b, 1), sl_rows_len(&b, 1)) != 0);
  sl_rows again;
  sl_rows_init(&again);
  apply_all("augment", two, 1, &b, &again);
  assert_memory_equal(sl_rows_payload(&again, 1), sl_rows_payload(&c, 1), sl_rows_len(&c, 1));
  apply_all("augment", two, 1, &img, &again); /* uint8 too */
  assert_int_equal(hdr_of(&again, 0).kind, SL_ROW_U8_HWC);
  assert_int_equal(sl_rows_len(&again, 0), sl_rows_len(&img, 0));

  /* normalizing twice is refused, naming the row; so is a row that is no image */
  sl_kernel_args na = {0};
  sl_kernel *n = kernel("normalize", &na);
  sl_rows_reset(&c);
  assert_int_equal(sl_kernel_apply(n, &b, 0, 1, &c), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(n), "normalized twice"));
  sl_kernel_free(n);
  sl_rows junk;
  sl_rows_init(&junk);
  make_rows(&junk, 0, 9, 1, 40);
  sl_kernel_args ca = {.params = half, .nparams = 1};
  sl_kernel *cr = kernel("center_crop", &ca);
  assert_int_equal(sl_kernel_apply(cr, &junk, 0, 1, &c), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(cr), "row 9"));
  sl_kernel_free(cr);
  sl_rows_free(&junk);
  sl_rows_free(&again);
  sl_rows_free(&img);
  sl_rows_free(&a);
  sl_rows_free(&b);
  sl_rows_free(&c);
}

/* ---- GEMM ---------------------------------------------------------------------- */

static void test_sgemm_hand_checked(void **state)
{
  (void)state;
  /* [1 2 3; -1 0 1] x [1 0; 0 1; 1 1] + [0.5 -10] */
  const float x[6] = {1, 2, 3, -1, 0, 1};
  const float w[6] = {1, 0, 0, 1, 1, 1};
  const float b[2] = {0.5f, -10};
  float y[4];
  sl__sgemm_bias(2, 3, 2, x, w, b, false, y);
  assert_float_equal(y[0], 4.5, 0);
  assert_float_equal(y[1], -5, 0);
  assert_float_equal(y[2], 0.5, 0);
  assert_float_equal(y[3], -9, 0);
  sl__sgemm_bias(2, 3, 2, x, w, b, true, y);
  assert_float_equal(y[1], 0, 0);
  assert_float_equal(y[3], 0, 0);
}

static void test_sgemm_blocked_matches_naive(void **state)
{
  (void)state;
  const size_t n = 7, in = 300, out = 270; /* every edge of the blocking */
  float *x = malloc(n * in * 4), *w = malloc(in * out * 4), *b = malloc(out * 4);
  float *y = malloc(n * out * 4);
  sl__rng r;
  sl__rng_seed(&r, 1, 2);
  for (size_t i = 0; i < n * in; i++)
    x[i] = sl__rng_sym(&r);
  for (size_t i = 0; i < in * out; i++)
    w[i] = sl__rng_sym(&r);
  for (size_t i = 0; i < out; i++)
    b[i] = sl__rng_sym(&r);
  sl__sgemm_bias(n, in, out, x, w, b, false, y);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < out; j++) {
      float acc = 0;
      for (size_t k = 0; k < in; k++)
        acc += x[i * in + k] * w[k * out + j];
      acc += b[j];
      assert_true(y[i * out + j] == acc); /* same order: same bits */
    }
  free(x);
  free(w);
  free(b);
  free(y);
}

static sl_kernel *classifier(int layers, int hidden, int classes, uint64_t seed)
{
  sl_param p[] = {{"layers", layers}, {"hidden", hidden}, {"classes", classes}};
  sl_kernel_args a = {.params = p, .nparams = 3, .seed = seed};
  return kernel("gemm_classifier", &a);
}

static void test_gemm_classifier(void **state)
{
  (void)state;
  sl_rows img, x, y1, y2, y3;
  sl_rows_init(&img);
  sl_rows_init(&x);
  sl_rows_init(&y1);
  sl_rows_init(&y2);
  sl_rows_init(&y3);
  make_images(&img, 70, 20, 16);
  sl_param p[] = {{"width", 8}, {"height", 8}};
  sl_kernel_args ra = {.params = p, .nparams = 2};
  sl_kernel *rs = kernel("resize_normalize", &ra);
  assert_int_equal(sl_kernel_apply(rs, &img, 0, 70, &x), 0);

  sl_kernel *a = classifier(3, 40, 10, 11), *b = classifier(3, 40, 10, 11);
  assert_false(sl_kernel_on_gpu(a));
  assert_int_equal(sl_kernel_apply(a, &x, 0, 70, &y1), 0);
  /* another instance, row by row: the same logits (rows are independent) */
  for (size_t i = 0; i < 70; i++)
    assert_int_equal(sl_kernel_apply(b, &x, i, 1, &y2), 0);
  assert_int_equal(sl_rows_count(&y1), 70);
  assert_int_equal(sl_rows_bytes(&y1), 70 * (8 + 10 * 4));
  assert_memory_equal(y1.data, y2.data, sl_rows_bytes(&y1));
  sl_row_hdr h;
  assert_true(sl_row_hdr_parse(sl_rows_payload(&y1, 0), sl_rows_len(&y1, 0), &h));
  assert_int_equal(h.width, 10);
  assert_int_equal(h.kind, SL_ROW_F32_CHW);
  /* logits are finite and not all equal */
  float l0, l1;
  memcpy(&l0, sl_rows_payload(&y1, 0) + 8, 4);
  memcpy(&l1, sl_rows_payload(&y1, 0) + 12, 4);
  assert_true(isfinite(l0) && isfinite(l1) && l0 != l1);

  /* another seed, other weights */
  sl_kernel *c = classifier(3, 40, 10, 12);
  assert_int_equal(sl_kernel_apply(c, &x, 0, 1, &y3), 0);
  assert_memory_not_equal(sl_rows_payload(&y3, 0), sl_rows_payload(&y1, 0), 48);

  /* a row of another size is refused, naming it */
  sl_rows odd;
  sl_rows_init(&odd);
  make_rows(&odd, 0, 123, 1, 17);
  assert_int_equal(sl_kernel_apply(a, &odd, 0, 1, &y3), SL_EKERNEL);
  assert_non_null(strstr(sl_kernel_last_error(a), "row 123"));

  sl_kernel_free(rs);
  sl_kernel_free(a);
  sl_kernel_free(b);
  sl_kernel_free(c);
  sl_rows_free(&img);
  sl_rows_free(&x);
  sl_rows_free(&y1);
  sl_rows_free(&y2);
  sl_rows_free(&y3);
  sl_rows_free(&odd);
}

/* One layer: logits = x W + b, so the map is affine: f(2x) - f(x) = f(x) - f(0). */
static void test_gemm_single_layer_affine(void **state)
{
  (void)state;
  sl_rows x, y;
  sl_rows_init(&x);
  sl_rows_init(&y);
  sl_row_hdr h = {.width = 5, .height = 1, .channels = 1, .kind = SL_ROW_F32_CHW};
  const float v[3][5] = {{0, 0, 0, 0, 0}, {1, -2, 0.5f, 3, 1}, {2, -4, 1, 6, 2}};
  for (int r = 0; r < 3; r++) {
    uint8_t *p = sl_rows_add(&x, r, 0, sl_row_hdr_payload_bytes(&h));
    sl_row_hdr_write(p, &h);
    memcpy(p + 8, v[r], sizeof v[r]);
  }
  sl_kernel *k = classifier(1, 1, 4, 3);
  assert_int_equal(sl_kernel_apply(k, &x, 0, 3, &y), 0);
  for (int c = 0; c < 4; c++) {
    float f[3];
    for (int r = 0; r < 3; r++)
      memcpy(&f[r], sl_rows_payload(&y, (size_t)r) + 8 + 4 * c, 4);
    assert_float_equal(f[2] - f[1], f[1] - f[0], 1e-5);
    assert_true(fabsf(f[0]) <= 0.1f); /* biases are small */
  }
  sl_kernel_free(k);
  sl_rows_free(&x);
  sl_rows_free(&y);
}

static void test_gemm_emulated(void **state)
{
  (void)state;
  if (sl_cuda_device_count() > 0)
    skip(); /* a real GPU: the slot is not emulated */
  sl_rows x, y;
  sl_rows_init(&x);
  sl_rows_init(&y);
  make_rows(&x, 0, 0, 5, 12);
  sl_param p[] = {{"classes", 7}};
  sl_kernel_args a = {.params = p, .nparams = 1, .gpu_slot = true, .time_per_row = 0.002,
                      .time_per_task = 0.003};
  sl_kernel *k = kernel("gemm_classifier", &a);
  assert_true(sl_kernel_emulated(k));
  assert_false(sl_kernel_on_gpu(k));
  double t0 = now_s(CLOCK_MONOTONIC);
  assert_int_equal(sl_kernel_begin_task(k), 0);
  assert_int_equal(sl_kernel_apply(k, &x, 0, 5, &y), 0);
  double dt = now_s(CLOCK_MONOTONIC) - t0;
  assert_true(dt >= 0.013 && dt < 2.0);
  assert_int_equal(sl_rows_count(&y), 5);
  assert_int_equal(sl_rows_len(&y, 0), 8 + 7 * 4);
  sl_kernel_free(k);
  sl_rows_free(&x);
  sl_rows_free(&y);
  /* no device, no page-locked staging: the kernel keeps pageable memory */
  assert_null(sl_cuda_host_alloc(0, 1 << 20));
  sl_cuda_host_free(NULL);
}

/* ---- sort ------------------------------------------------------------------------- */

static sl_kernel *sort_kernel(const char *name, double out_row_bytes)
{
  sl_kernel_args a = {.seed = 11, .out_row_bytes = out_row_bytes};
  return sl_kernel_new(name, &a);
}

/* gensort: 100-byte records that depend on (seed, id) only; row_bytes must
 * say 100 B if it says anything. */
static void test_gensort_records(void **state)
{
  (void)state;
  sl_kernel *g = sort_kernel("gensort", 100);
  assert_non_null(g);
  assert_null(sort_kernel("gensort", 64));
  char err[200];
  sl_kernel_args bad = {.out_row_bytes = 64};
  assert_int_equal(sl_kernel_check_args("gensort", &bad, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "records of 100 bytes"));
  sl_rows a, b;
  sl_rows_init(&a);
  sl_rows_init(&b);
  assert_int_equal(sl_kernel_generate(g, 0, 0, 50, &a), 0);
  assert_int_equal(sl_kernel_generate(g, 3, 20, 10, &b), 0); /* any chunk, the same records */
  assert_int_equal(sl_rows_count(&a), 50);
  for (size_t i = 0; i < 10; i++) {
    assert_int_equal(sl_rows_len(&b, i), 100);
    assert_memory_equal(sl_rows_payload(&a, 20 + i), sl_rows_payload(&b, i), 100);
  }
  uint8_t rec[SL_SORT_RECORD_BYTES];
  sl_sort_record(11, 7, rec);
  assert_memory_equal(rec, sl_rows_payload(&a, 7), 100);
  assert_true(rec[98] == '\r' && rec[99] == '\n');
  assert_memory_equal(rec + 10, "  00000000000000000000000000000007", 34); /* the record's number */
  sl_sort_record(12, 7, rec); /* another seed, another key */
  assert_memory_not_equal(rec, sl_rows_payload(&a, 7), 10);
  sl_rows_free(&a);
  sl_rows_free(&b);
  sl_kernel_free(g);
}

/* sort_records puts a task's records in key order and keeps them whole;
 * range partitioning cuts the key space into equal, ordered shares. */
static void test_sort_records(void **state)
{
  (void)state;
  sl_kernel *g = sort_kernel("gensort", 0), *s = sort_kernel("sort_records", 0);
  assert_non_null(g);
  assert_non_null(s);
  assert_true(sl_kernel_whole_task(s));
  assert_false(sl_kernel_whole_task(g));
  sl_rows in, out;
  sl_rows_init(&in);
  sl_rows_init(&out);
  assert_int_equal(sl_kernel_generate(g, 0, 0, 2000, &in), 0);
  assert_int_equal(sl_kernel_apply(s, &in, 0, 2000, &out), 0);
  assert_int_equal(sl_rows_count(&out), 2000);
  uint64_t sum_in = 0, sum_out = 0;
  for (size_t i = 0; i < 2000; i++) {
    sum_in += sl_sink_row_hash(sl_rows_id(&in, i), sl_rows_payload(&in, i), 100);
    sum_out += sl_sink_row_hash(sl_rows_id(&out, i), sl_rows_payload(&out, i), 100);
    if (i > 0)
      assert_true(sl_sort_compare_keys(sl_rows_payload(&out, i - 1), 100, sl_rows_payload(&out, i), 100) <= 0);
  }
  assert_true(sum_in == sum_out); /* the same records, each whole */
  /* shares: monotonic in the key, all of [0, shares) used, id ignored */
  int64_t last = 0, used[8] = {0};
  for (size_t i = 0; i < 2000; i++) {
    int64_t sh = sl_kernel_share_of(s, sl_rows_id(&out, i), sl_rows_payload(&out, i), 100, 8);
    assert_true(sh >= last && sh < 8);
    last = sh;
    used[sh]++;
  }
  for (int r = 0; r < 8; r++)
    assert_true(used[r] > 150 && used[r] < 350); /* uniform keys: about 250 each */
  assert_int_equal(sl_kernel_share_of(g, 13, sl_rows_payload(&in, 0), 100, 5), 3); /* by id: 13 % 5 */
  assert_int_equal(sl_kernel_share_of(s, 13, sl_rows_payload(&in, 0), 100, 1), 0);
  const uint8_t lo[10] = {0}, hi[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  assert_int_equal(sl_sort_share(lo, 10, 4), 0);
  assert_int_equal(sl_sort_share(hi, 10, 4), 3);
  assert_true(sl_sort_compare_keys(lo, 3, lo, 10) < 0); /* a short key first */
  sl_rows_free(&in);
  sl_rows_free(&out);
  sl_kernel_free(g);
  sl_kernel_free(s);
}

/* shuffle_rows: a permutation of its rows in an order that depends on the
 * seed and the ids only (not on the order they came in), and reducers by
 * the same hash, evenly. */
static void test_shuffle_rows(void **state)
{
  (void)state;
  enum { N = 4000 };
  sl_kernel_args a = {.seed = 5}, a2 = {.seed = 6};
  sl_kernel *s = sl_kernel_new("shuffle_rows", &a), *s2 = sl_kernel_new("shuffle_rows", &a2);
  assert_non_null(s);
  assert_non_null(s2);
  assert_true(sl_kernel_whole_task(s));
  sl_rows in, rev, out, out_rev, out2;
  sl_rows_init(&in);
  sl_rows_init(&rev);
  sl_rows_init(&out);
  sl_rows_init(&out_rev);
  sl_rows_init(&out2);
  for (int64_t i = 0; i < N; i++) {
    uint8_t v = (uint8_t)i;
    assert_int_equal(sl_rows_append(&in, i, 0, &v, 1), 0);
  }
  for (int64_t i = N - 1; i >= 0; i--)
    assert_int_equal(sl_rows_append_range(&rev, &in, (size_t)i, 1), 0);
  assert_int_equal(sl_kernel_apply(s, &in, 0, N, &out), 0);
  assert_int_equal(sl_kernel_apply(s, &rev, 0, N, &out_rev), 0);
  assert_int_equal(sl_kernel_apply(s2, &in, 0, N, &out2), 0);
  assert_int_equal(sl_rows_count(&out), N);
  bool seen[N] = {false};
  int in_place = 0, same_as_other_seed = 0, used[4] = {0};
  for (size_t i = 0; i < N; i++) {
    int64_t id = sl_rows_id(&out, i);
    assert_true(id >= 0 && id < N && !seen[id]);
    seen[id] = true;
    assert_int_equal(sl_rows_payload(&out, i)[0], (uint8_t)id); /* rows stay whole */
    assert_int_equal(sl_rows_id(&out_rev, i), id);               /* input order does not matter */
    in_place += id == (int64_t)i;
    same_as_other_seed += sl_rows_id(&out2, i) == id;
    used[sl_kernel_share_of(s, id, sl_rows_payload(&out, i), 1, 4)]++;
  }
  assert_true(in_place < 20);           /* shuffled: about 1 in N stays */
  assert_true(same_as_other_seed < 20); /* another seed, another order */
  for (int r = 0; r < 4; r++)
    assert_true(used[r] > 850 && used[r] < 1150);
  sl_rows_free(&in);
  sl_rows_free(&rev);
  sl_rows_free(&out);
  sl_rows_free(&out_rev);
  sl_rows_free(&out2);
  sl_kernel_free(s);
  sl_kernel_free(s2);
}

/* valsort's checks: a good sort passes; a partition out of order, two that
 * overlap, a lost or changed record each fail, saying what. */
static void test_sort_check(void **state)
{
  (void)state;
  enum { N = 3000, SHARES = 3 };
  sl_kernel *g = sort_kernel("gensort", 0), *s = sort_kernel("sort_records", 0);
  sl_rows in, share, out;
  sl_rows_init(&in);
  sl_rows_init(&share);
  sl_rows_init(&out);
  assert_int_equal(sl_kernel_generate(g, 0, 0, N, &in), 0);
  sl_sort_check *c = sl_sort_check_new();
  sl_sink *sink = sl_sink_new();
  for (int r = SHARES - 1; r >= 0; r--) { /* delivered in any order */
    sl_rows_reset(&share);
    sl_rows_reset(&out);
    for (size_t i = 0; i < N; i++)
      if (sl_kernel_share_of(s, sl_rows_id(&in, i), sl_rows_payload(&in, i), 100, SHARES) == r)
        assert_int_equal(sl_rows_append_range(&share, &in, i, 1), 0);
    assert_int_equal(sl_kernel_apply(s, &share, 0, sl_rows_count(&share), &out), 0);
    assert_int_equal(sl_sort_check_partition(c, &out), 0);
    assert_int_equal(sl_sink_deliver(sink, &out), 0);
  }
  assert_int_equal(sl_sort_check_partitions(c), SHARES);
  assert_int_equal(sl_sort_check_finish(c, 11, 1, N, sl_sink_rows(sink), sl_sink_checksum(sink)), 0);
  /* a record lost, or the wrong seed's records */
  assert_int_equal(sl_sort_check_finish(c, 11, 1, N + 1, sl_sink_rows(sink), sl_sink_checksum(sink)), SL_ESTATE);
  assert_non_null(strstr(sl_sort_check_error(c), "not the input's records"));
  assert_int_equal(sl_sort_check_finish(c, 12, 1, N, sl_sink_rows(sink), sl_sink_checksum(sink)), SL_ESTATE);
  /* a partition out of order */
  assert_int_equal(sl_sort_check_partition(c, &in), SL_ESTATE);
  assert_non_null(strstr(sl_sort_check_error(c), "not sorted"));
  /* overlapping partitions: the unsplit input sorted, beside the shares */
  sl_rows_reset(&out);
  assert_int_equal(sl_kernel_apply(s, &in, 0, N, &out), 0);
  assert_int_equal(sl_sort_check_partition(c, &out), 0);
  assert_int_equal(sl_sort_check_finish(c, 11, 1, N, sl_sink_rows(sink), sl_sink_checksum(sink)), SL_ESTATE);
  assert_non_null(strstr(sl_sort_check_error(c), "overlap"));
  /* after a rollback the ranges are not compared; the records still are */
  sl_sort_check_rolled_back(c);
  assert_int_equal(sl_sort_check_finish(c, 11, 1, N, sl_sink_rows(sink), sl_sink_checksum(sink)), 0);
  sl_sort_check_free(c);
  sl_sink_free(sink);
  sl_rows_free(&in);
  sl_rows_free(&share);
  sl_rows_free(&out);
  sl_kernel_free(g);
  sl_kernel_free(s);
}

/* ---- sink ------------------------------------------------------------------------- */

static void test_sink_exactly_once(void **state)
{
  (void)state;
  sl_rows a, b;
  sl_rows_init(&a);
  sl_rows_init(&b);
  make_rows(&a, 0, 0, 100, 33);
  make_rows(&b, 1, 100, 50, 33);
  sl_sink *s = sl_sink_new();
  assert_non_null(s);
  assert_int_equal(sl_sink_deliver(s, &a), 0);
  assert_int_equal(sl_sink_deliver(s, &b), 0);
  assert_int_equal(sl_sink_rows(s), 150);
  assert_int_equal(sl_sink_bytes(s), 150 * 33);
  assert_int_equal(sl_sink_split_rows(s, 0), 100);
  assert_int_equal(sl_sink_split_rows(s, 1), 50);
  assert_int_equal(sl_sink_split_rows(s, 9), 0);
  uint64_t sum = 0;
  for (size_t i = 0; i < 100; i++)
    sum += sl_sink_row_hash(sl_rows_id(&a, i), sl_rows_payload(&a, i), sl_rows_len(&a, i));
  assert_true(sl_sink_split_checksum(s, 0) == sum);
  assert_true(sl_sink_checksum(s) == sum + sl_sink_split_checksum(s, 1));

  /* a partition with one already-delivered row: refused whole */
  uint64_t before = sl_sink_checksum(s);
  sl_rows c;
  sl_rows_init(&c);
  make_rows(&c, 2, 1000, 10, 8);
  assert_int_equal(sl_rows_append(&c, 42, 2, "dup", 3), 0);
  assert_int_equal(sl_sink_deliver(s, &c), SL_ESTATE);
  assert_non_null(strstr(sl_sink_last_error(s), "row 42"));
  assert_int_equal(sl_sink_rows(s), 150);
  assert_true(sl_sink_checksum(s) == before);
  /* ... and its other rows may still come, once */
  sl_rows_truncate(&c, 10);
  assert_int_equal(sl_sink_deliver(s, &c), 0);
  assert_int_equal(sl_sink_rows(s), 160);
  assert_int_equal(sl_sink_deliver(s, &c), SL_ESTATE);

  /* a duplicate inside one partition */
  sl_rows d;
  sl_rows_init(&d);
  assert_int_equal(sl_rows_append(&d, 5000, 3, "x", 1), 0);
  assert_int_equal(sl_rows_append(&d, 5000, 3, "x", 1), 0);
  assert_int_equal(sl_sink_deliver(s, &d), SL_ESTATE);
  assert_int_equal(sl_sink_rows(s), 160);
  sl_sink_free(s);
  sl_rows_free(&a);
  sl_rows_free(&b);
  sl_rows_free(&c);
  sl_rows_free(&d);
}

static void test_sink_order_independent(void **state)
{
  (void)state;
  enum { N = 5000 };
  sl_rows all, part;
  sl_rows_init(&all);
  sl_rows_init(&part);
  for (uint32_t sp = 0; sp < 5; sp++)
    make_rows(&all, sp, sp * (N / 5), N / 5, 20);
  sl_sink *one = sl_sink_new(), *many = sl_sink_new();
  assert_int_equal(sl_sink_deliver(one, &all), 0);
  /* the same rows, shuffled, in partitions of varying size */
  size_t perm[N];
  for (size_t i = 0; i < N; i++)
    perm[i] = i;
  sl__rng r;
  sl__rng_seed(&r, 9, 9);
  for (size_t i = N - 1; i > 0; i--) {
    size_t j = sl__rng_next(&r) % (i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (size_t i = 0; i < N;) {
    size_t n = 1 + sl__rng_next(&r) % 300;
    sl_rows_reset(&part);
    for (size_t j = 0; j < n && i < N; j++, i++)
      assert_int_equal(sl_rows_append_range(&part, &all, perm[i], 1), 0);
    assert_int_equal(sl_sink_deliver(many, &part), 0);
  }
  assert_int_equal(sl_sink_rows(many), N);
  assert_true(sl_sink_checksum(one) == sl_sink_checksum(many));
  for (uint32_t sp = 0; sp < 5; sp++)
    assert_true(sl_sink_split_checksum(one, sp) == sl_sink_split_checksum(many, sp));
  /* a different payload changes the checksum */
  all.data[7] ^= 1;
  sl_sink *flip = sl_sink_new();
  assert_int_equal(sl_sink_deliver(flip, &all), 0);
  assert_true(sl_sink_checksum(flip) != sl_sink_checksum(one));
  sl_sink_free(one);
  sl_sink_free(many);
  sl_sink_free(flip);
  sl_rows_free(&all);
  sl_rows_free(&part);
}

static void test_sink_rollback(void **state)
{
  (void)state;
  sl_rows sp[3];
  sl_sink *s = sl_sink_new();
  for (uint32_t i = 0; i < 3; i++) {
    sl_rows_init(&sp[i]);
    make_rows(&sp[i], i, i * 1000, 400, 16);
    assert_int_equal(sl_sink_deliver(s, &sp[i]), 0);
  }
  uint64_t full = sl_sink_checksum(s), keep0 = sl_sink_split_checksum(s, 0);
  /* roll back splits 1 and 2 (2 by being past nsplits) */
  bool keep[2] = {true, false};
  assert_int_equal(sl_sink_rollback(s, keep, 2), 0);
  assert_int_equal(sl_sink_rows(s), 400);
  assert_true(sl_sink_checksum(s) == keep0);
  assert_int_equal(sl_sink_split_rows(s, 1), 0);
  /* split 0's ids are still known, the others may be delivered again */
  assert_int_equal(sl_sink_deliver(s, &sp[0]), SL_ESTATE);
  assert_int_equal(sl_sink_deliver(s, &sp[2]), 0);
  assert_int_equal(sl_sink_deliver(s, &sp[1]), 0);
  assert_int_equal(sl_sink_rows(s), 1200);
  assert_true(sl_sink_checksum(s) == full);
  /* back to the start: everything dropped */
  assert_int_equal(sl_sink_rollback(s, NULL, 0), 0);
  assert_int_equal(sl_sink_rows(s), 0);
  assert_true(sl_sink_checksum(s) == 0);
  assert_int_equal(sl_sink_deliver(s, &sp[0]), 0);
  sl_sink_free(s);
  for (int i = 0; i < 3; i++)
    sl_rows_free(&sp[i]);
}

/* Refused deliveries undo their inserts (backward-shift deletion) without
 * losing any earlier id, through many probe collisions and table growths. */
static void test_sink_undo_stress(void **state)
{
  (void)state;
  sl_sink *s = sl_sink_new();
  sl_rows batch, one;
  sl_rows_init(&batch);
  sl_rows_init(&one);
  sl__rng r;
  sl__rng_seed(&r, 4, 4);
  int64_t next = 0;
  for (int b = 0; b < 200; b++) {
    sl_rows_reset(&batch);
    for (int i = 0; i < 100; i++, next++) /* ids spread out, clustered slots */
      assert_int_equal(sl_rows_append(&batch, next * 1024, (uint32_t)b, "r", 1), 0);
    if (b > 0) {
      int64_t old = (int64_t)(sl__rng_next(&r) % (uint64_t)(b * 100)) * 1024;
      assert_int_equal(sl_rows_append(&batch, old, (uint32_t)b, "d", 1), 0);
      assert_int_equal(sl_sink_deliver(s, &batch), SL_ESTATE);
      sl_rows_truncate(&batch, 100);
    }
    assert_int_equal(sl_sink_deliver(s, &batch), 0);
  }
  assert_int_equal(sl_sink_rows(s), 20000);
  for (int64_t id = 0; id < 20000; id += 7) {
    sl_rows_reset(&one);
    assert_int_equal(sl_rows_append(&one, id * 1024, 0, "r", 1), 0);
    assert_int_equal(sl_sink_deliver(s, &one), SL_ESTATE);
  }
  sl_sink_free(s);
  sl_rows_free(&batch);
  sl_rows_free(&one);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rows_basics),
    cmocka_unit_test(test_check_args),
    cmocka_unit_test(test_wrong_entry_point),
    cmocka_unit_test(test_generate_deterministic),
    cmocka_unit_test(test_generate_incompressible),
    cmocka_unit_test(test_generate_odd_sizes),
    cmocka_unit_test(test_noop_and_resize),
    cmocka_unit_test(test_expansion),
    cmocka_unit_test(test_sleep_accuracy),
    cmocka_unit_test(test_spin_burns_cpu),
    cmocka_unit_test(test_cancel),
    cmocka_unit_test(test_jpeg_round_trip),
    cmocka_unit_test(test_jpeg_corrupt),
    cmocka_unit_test(test_resize_normalize),
    cmocka_unit_test(test_reorderable_image_kernels),
    cmocka_unit_test(test_sgemm_hand_checked),
    cmocka_unit_test(test_sgemm_blocked_matches_naive),
    cmocka_unit_test(test_gemm_classifier),
    cmocka_unit_test(test_gemm_single_layer_affine),
    cmocka_unit_test(test_gemm_emulated),
    cmocka_unit_test(test_gensort_records),
    cmocka_unit_test(test_sort_records),
    cmocka_unit_test(test_sort_check),
    cmocka_unit_test(test_shuffle_rows),
    cmocka_unit_test(test_sink_exactly_once),
    cmocka_unit_test(test_sink_order_independent),
    cmocka_unit_test(test_sink_rollback),
    cmocka_unit_test(test_sink_undo_stress),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
