/* gemm_classifier on CUDA against the CPU. Exits 77 (skipped) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "workloads/kernels.h"
#include "workloads/kernels/gemm_cuda.h"

/* n image tensors of 3 x side x side, from generated JPEGs. */
static void make_inputs(sl_rows *x, int64_t n, int side)
{
  sl_param gp[] = {{"width", 40}, {"height", 30}};
  sl_param rp[] = {{"width", side}, {"height", side}};
  sl_kernel_args ga = {.params = gp, .nparams = 2, .seed = 21};
  sl_kernel_args da = {0};
  sl_kernel_args ra = {.params = rp, .nparams = 2};
  sl_kernel *gen = sl_kernel_new("jpeg_generate", &ga);
  sl_kernel *dec = sl_kernel_new("jpeg_decode", &da);
  sl_kernel *rs = sl_kernel_new("resize_normalize", &ra);
  assert_non_null(gen);
  assert_non_null(dec);
  assert_non_null(rs);
  sl_rows a, b;
  sl_rows_init(&a);
  sl_rows_init(&b);
  assert_int_equal(sl_kernel_generate(gen, 0, 0, n, &a), 0);
  assert_int_equal(sl_kernel_apply(dec, &a, 0, n, &b), 0);
  assert_int_equal(sl_kernel_apply(rs, &b, 0, n, x), 0);
  sl_rows_free(&a);
  sl_rows_free(&b);
  sl_kernel_free(gen);
  sl_kernel_free(dec);
  sl_kernel_free(rs);
}

static sl_kernel *classifier(bool gpu, int layers, int hidden, int classes)
{
  sl_param p[] = {{"layers", layers}, {"hidden", hidden}, {"classes", classes}};
  sl_kernel_args a = {.params = p, .nparams = 3, .seed = 77, .gpu_slot = gpu};
  sl_kernel *k = sl_kernel_new("gemm_classifier", &a);
  assert_non_null(k);
  return k;
}

#define MAX_CLASSES 1000

/* The documented tolerance: |gpu - cpu| <= 1e-3 * max(1, max |cpu| of the row). */
static void compare(const sl_rows *cpu, const sl_rows *gpu, int classes)
{
  assert_true(classes <= MAX_CLASSES);
  assert_int_equal(sl_rows_count(cpu), sl_rows_count(gpu));
  assert_int_equal(sl_rows_bytes(cpu), sl_rows_bytes(gpu));
  double worst = 0;
  for (size_t i = 0; i < sl_rows_count(cpu); i++) {
    assert_int_equal(sl_rows_id(cpu, i), sl_rows_id(gpu, i));
    float c[MAX_CLASSES], g[MAX_CLASSES];
    memcpy(c, sl_rows_payload(cpu, i) + SL_ROW_HDR_BYTES, (size_t)classes * sizeof(float));
    memcpy(g, sl_rows_payload(gpu, i) + SL_ROW_HDR_BYTES, (size_t)classes * sizeof(float));
    float scale = 1;
    for (int j = 0; j < classes; j++)
      scale = fabsf(c[j]) > scale ? fabsf(c[j]) : scale;
    for (int j = 0; j < classes; j++) {
      double err = fabsf(g[j] - c[j]) / scale;
      worst = err > worst ? err : worst;
      assert_true(err <= 1e-3);
    }
  }
  print_message("worst relative difference %.3g\n", worst);
}

static void run_case(int n, int side, int layers, int hidden, int classes)
{
  sl_rows x, yc, yg;
  sl_rows_init(&x);
  sl_rows_init(&yc);
  sl_rows_init(&yg);
  make_inputs(&x, n, side);
  sl_kernel *cpu = classifier(false, layers, hidden, classes);
  sl_kernel *gpu = classifier(true, layers, hidden, classes);
  assert_true(sl_kernel_on_gpu(gpu));
  assert_false(sl_kernel_emulated(gpu));
  assert_int_equal(sl_kernel_apply(cpu, &x, 0, (size_t)n, &yc), 0);
  int rc = sl_kernel_apply(gpu, &x, 0, (size_t)n, &yg);
  if (rc)
    print_message("cuda: %s\n", sl_kernel_last_error(gpu));
  assert_int_equal(rc, 0);
  compare(&yc, &yg, classes);
  sl_kernel_free(cpu);
  sl_kernel_free(gpu);
  sl_rows_free(&x);
  sl_rows_free(&yc);
  sl_rows_free(&yg);
}

/* Odd sizes: every tile edge, and more rows than one GPU sub-batch. */
static void test_small_odd(void **state)
{
  (void)state;
  run_case(300, 9, 3, 37, 13);
}

/* Model-like sizes: 3x64x64 inputs, two hidden layers. */
static void test_model_sized(void **state)
{
  (void)state;
  run_case(96, 64, 3, 512, 1000);
}

/* An image classifier's first layer: 150,528 features, summed in many k
 * chunks; still within the tolerance of the CPU's plain k order. */
static void test_wide_first_layer(void **state)
{
  (void)state;
  run_case(40, 224, 2, 256, 10);
}

/* The chunks are added in a fixed order: two passes give the same bits. */
static void test_repeats_bit_for_bit(void **state)
{
  (void)state;
  enum { N = 37, IN = 20000, OUT = 3 };
  const int dims[2] = {IN, OUT};
  float *w = malloc(sizeof(float) * IN * OUT), *x = malloc(sizeof(float) * N * IN);
  assert_non_null(w);
  assert_non_null(x);
  const float b[OUT] = {0.25f, -0.5f, 1};
  for (int i = 0; i < IN * OUT; i++)
    w[i] = (float)((long)i * 7919 % 1001 - 500) / 997.0f;
  for (int i = 0; i < N * IN; i++)
    x[i] = (float)((long)i * 104729 % 1003 - 501) / 1009.0f;
  const float *ws[1] = {w}, *bs[1] = {b};
  sl_cuda_gemm *g;
  assert_int_equal(sl_cuda_gemm_new(&g, 0, 1, dims, ws, bs), 0);
  float y1[N * OUT], y2[N * OUT];
  assert_int_equal(sl_cuda_gemm_forward(g, x, N, y1), 0);
  assert_int_equal(sl_cuda_gemm_forward(g, x, N, y2), 0);
  assert_memory_equal(y1, y2, sizeof y1);
  /* and row 0, column 0 against a double-precision sum */
  double ref = b[0];
  for (int k = 0; k < IN; k++)
    ref += (double)x[k] * w[(size_t)k * OUT];
  assert_true(fabs(y1[0] - ref) <= 1e-3 * (fabs(ref) > 1 ? fabs(ref) : 1));
  sl_cuda_gemm_free(g);
  free(w);
  free(x);
}

/* A batch in page-locked memory (how gemm_classifier stages it on a GPU)
 * gives the same bits as the same batch in pageable memory. */
static void test_pinned_batch(void **state)
{
  (void)state;
  enum { N = 32, IN = 30000, OUT = 5 };
  const int dims[2] = {IN, OUT};
  float *w = malloc(sizeof(float) * IN * OUT), *x = malloc(sizeof(float) * N * IN);
  float *pinned = sl_cuda_host_alloc(0, sizeof(float) * N * IN);
  assert_non_null(w);
  assert_non_null(x);
  assert_non_null(pinned);
  const float b[OUT] = {0.5f, -0.25f, 0, 1, -1};
  for (int i = 0; i < IN * OUT; i++)
    w[i] = (float)((long)i * 6007 % 1013 - 506) / 1019.0f;
  for (int i = 0; i < N * IN; i++)
    x[i] = (float)((long)i * 7727 % 997 - 498) / 991.0f;
  memcpy(pinned, x, sizeof(float) * N * IN);
  const float *ws[1] = {w}, *bs[1] = {b};
  sl_cuda_gemm *g;
  assert_int_equal(sl_cuda_gemm_new(&g, 0, 1, dims, ws, bs), 0);
  float y1[N * OUT], y2[N * OUT];
  assert_int_equal(sl_cuda_gemm_forward(g, x, N, y1), 0);
  assert_int_equal(sl_cuda_gemm_forward(g, pinned, N, y2), 0);
  assert_memory_equal(y1, y2, sizeof y1);
  sl_cuda_gemm_free(g);
  sl_cuda_host_free(pinned);
  sl_cuda_host_free(NULL);
  assert_null(sl_cuda_host_alloc(0, 0));
  free(w);
  free(x);
}

static void test_direct_api(void **state)
{
  (void)state;
  /* y = x W + b for 2 rows of 2 features: hand-checked on the device */
  const int dims[2] = {2, 2};
  const float w[4] = {1, 2, 3, 4}, b[2] = {0.5f, -1};
  const float *ws[1] = {w}, *bs[1] = {b};
  sl_cuda_gemm *g;
  assert_int_equal(sl_cuda_gemm_new(&g, 0, 1, dims, ws, bs), 0);
  const float x[4] = {1, 1, -2, 0.5f};
  float y[4];
  assert_int_equal(sl_cuda_gemm_forward(g, x, 2, y), 0);
  assert_float_equal(y[0], 4.5, 1e-6);
  assert_float_equal(y[1], 5, 1e-6);
  assert_float_equal(y[2], 0, 1e-6);
  assert_float_equal(y[3], -3, 1e-6);
  sl_cuda_gemm_free(g);
  assert_int_equal(sl_cuda_gemm_new(&g, 0, 0, dims, ws, bs), SL_EINVAL);
}

int main(void)
{
  if (sl_cuda_device_count() == 0) {
    fprintf(stderr, "no CUDA device: skipped\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_direct_api),
    cmocka_unit_test(test_small_odd),
    cmocka_unit_test(test_model_sized),
    cmocka_unit_test(test_wide_first_layer),
    cmocka_unit_test(test_repeats_bit_for_bit),
    cmocka_unit_test(test_pinned_batch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
