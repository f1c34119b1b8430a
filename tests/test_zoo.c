/* The workload zoo: deterministic, every case loads, plans and bounds, the
 * ranges hold, and bad arguments are refused (library and CLI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/bound.h"
#include "models/cluster.h"
#include "models/error.h"
#include "models/plan.h"
#include "workloads/spec.h"
#include "workloads/zoo.h"

#ifndef SL_BINARY_DIR
#define SL_BINARY_DIR "."
#endif

static void make_tmp(char *dir, size_t n, const char *tag)
{
  snprintf(dir, n, "/tmp/sluice-zoo-%s-XXXXXX", tag);
  assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void write_zoo(const char *dir, uint64_t seed, int count, bool small, sl_zoo_case *cases)
{
  sl_zoo_opts o = {.seed = seed, .count = count, .small = small};
  char err[1024] = "";
  int rc = sl_zoo_write(&o, dir, cases, err, sizeof err);
  if (rc)
    fail_msg("sl_zoo_write(seed %llu, count %d%s): %s (%s)", (unsigned long long)seed, count,
             small ? ", small" : "", sl_strerror(rc), err);
}

/* The whole file, NUL-terminated (caller frees); NULL when unreadable. */
static char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = '\0';
    *len = (size_t)n;
  }
  return buf;
}

static bool same_file(const char *a, const char *b)
{
  size_t na = 0, nb = 0;
  char *x = slurp(a, &na), *y = slurp(b, &nb);
  bool same = x && y && na == nb && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

static void case_path(char *out, size_t n, const char *dir, int index, bool cluster)
{
  snprintf(out, n, "%s/case-%03d%s.ini", dir, index, cluster ? ".cluster" : "");
}

/* Same seed, same bytes; case i does not depend on the count; another
 * seed, other cases. */
static void test_deterministic(void **state)
{
  (void)state;
  char a[64], b[64], c[64], d[64], pa[256], pb[256];
  make_tmp(a, sizeof a, "a");
  make_tmp(b, sizeof b, "b");
  make_tmp(c, sizeof c, "c");
  make_tmp(d, sizeof d, "d");
  write_zoo(a, 7, 6, false, NULL);
  write_zoo(b, 7, 6, false, NULL);
  write_zoo(c, 7, 3, false, NULL);
  write_zoo(d, 8, 6, false, NULL);
  for (int i = 1; i <= 6; i++)
    for (int cl = 0; cl < 2; cl++) {
      case_path(pa, sizeof pa, a, i, cl);
      case_path(pb, sizeof pb, b, i, cl);
      assert_true(same_file(pa, pb));
      if (i <= 3) {
        case_path(pb, sizeof pb, c, i, cl);
        assert_true(same_file(pa, pb));
      }
      case_path(pb, sizeof pb, d, i, cl);
      assert_false(same_file(pa, pb));
    }
  snprintf(pa, sizeof pa, "%s/index.csv", a);
  snprintf(pb, sizeof pb, "%s/index.csv", b);
  assert_true(same_file(pa, pb));
  /* no temporary left behind */
  snprintf(pa, sizeof pa, "%s/.index.csv.tmp", a);
  assert_int_equal(access(pa, F_OK), -1);
  assert_int_not_equal(sl_zoo_case_seed(1, 1), sl_zoo_case_seed(1, 2));
  assert_int_not_equal(sl_zoo_case_seed(1, 1), sl_zoo_case_seed(2, 1));
  remove_dir(a);
  remove_dir(b);
  remove_dir(c);
  remove_dir(d);
}

/* Tallies of what a set of cases covers. */
typedef struct {
  int cases, gpu_ops, mixed_ops, fractional, pinned, batches, expansions, shrinks, reads,
    gpu_only_groups, unequal_speeds;
} coverage;

/* Loads the case's files itself (not through sl_zoo_check) and checks the
 * zoo's promises on them. */
static void check_case(const char *dir, int index, bool small, const sl_zoo_case *k, coverage *cov)
{
  char wpath[256], cpath[256], err[512] = "";
  case_path(wpath, sizeof wpath, dir, index, false);
  case_path(cpath, sizeof cpath, dir, index, true);
  sl_workload *w = malloc(sizeof *w);
  sl_cluster c;
  sl_plan p;
  sl_bound b;
  assert_non_null(w);
  if (sl_workload_load(wpath, w, err, sizeof err) != 0)
    fail_msg("%s", err);
  if (sl_cluster_load(cpath, &c, err, sizeof err) != 0)
    fail_msg("%s", err);
  if (sl_check_feasible(w, &c, err, sizeof err) != 0)
    fail_msg("%s", err);
  sl_plan_opts po = {0};
  if (sl_plan_build(&p, w, &po, err, sizeof err) != 0)
    fail_msg("%s: %s", wpath, err);
  assert_int_equal(sl_bound_compute(&p, &c, &b), 0);

  /* a pipeline of 2 to 6 operators and a sink */
  assert_int_equal(w->ops[w->nops - 1].kind, SL_OP_SINK);
  int ops = w->nops - 1;
  assert_in_range(ops, 2, 6);
  assert_int_equal(k->ops, ops);
  assert_int_equal(w->ops[0].kind, SL_OP_SOURCE);
  /* 1 to 64 nodes in 1 to 4 groups, stores of 4 to 64 partitions per node */
  assert_in_range(c.nnodes, 1, small ? 3 : 64);
  assert_in_range(c.ngroups, 1, 4);
  assert_int_equal(k->nodes, c.nnodes);
  for (int g = 0; g < c.ngroups; g++) {
    const sl_node_group *gr = &c.groups[g];
    double parts = gr->store_bytes / w->target_partition_bytes;
    assert_true(parts >= 4 - 1e-9 && parts <= 64 + 1e-9);
    cov->gpu_only_groups += gr->gpu > 0 && gr->cpu == 0;
    cov->unequal_speeds += gr->cpu_speed != 1 || gr->gpu_speed != 1;
  }
  /* a bound of tens to hundreds of seconds (a few for small cases), and
   * few enough tasks to simulate in well under a second */
  double tasks = 0;
  for (int i = 0; i < p.nops; i++)
    tasks += sl_plan_expected_tasks(&p, i);
  if (small) {
    assert_true(tasks <= SL_ZOO_MAX_TASKS_SMALL);
    assert_true(b.jct_s >= 2 && b.jct_s <= 15);
  } else {
    assert_true(tasks <= SL_ZOO_MAX_TASKS);
    assert_true(b.jct_s >= 10 && b.jct_s <= 1000);
  }
  assert_true(fabs(k->bound_s - b.jct_s) < 1e-3 * b.jct_s + 1e-3);
  /* shrinks are exact: the sink expects whole rows */
  assert_true(fabs(p.sink_rows - round(p.sink_rows)) < 1e-9);
  for (int i = 0; i < ops; i++) {
    const sl_op_spec *op = &w->ops[i];
    assert_true(op->rows_out_per_row >= 0.125 && op->rows_out_per_row <= 32);
    cov->gpu_ops += op->gpu > 0;
    cov->mixed_ops += op->gpu > 0 && op->cpu > 0;
    cov->fractional += (op->cpu > 0 && op->cpu != floor(op->cpu)) || (op->gpu > 0 && op->gpu != floor(op->gpu));
    cov->pinned += op->accel.n > 0;
    cov->batches += op->batch_size > 0;
    cov->expansions += op->rows_out_per_row > 1;
    cov->shrinks += op->rows_out_per_row < 1;
    cov->reads += op->read_bytes_per_row > 0;
  }
  cov->cases++;
  sl_cluster_free(&c);
  free(w);
}

static void check_zoo(uint64_t seed, int count, bool small, coverage *cov)
{
  char dir[64];
  make_tmp(dir, sizeof dir, "load");
  sl_zoo_case *cases = calloc((size_t)count, sizeof *cases);
  assert_non_null(cases);
  write_zoo(dir, seed, count, small, cases);
  for (int i = 0; i < count; i++) {
    assert_int_equal(cases[i].index, i + 1);
    assert_true(cases[i].description[0] != '\0');
    assert_null(strchr(cases[i].description, ','));
    check_case(dir, i + 1, small, &cases[i], cov);
  }
  /* index.csv: a header and one row per case */
  char path[128];
  size_t len = 0;
  snprintf(path, sizeof path, "%s/index.csv", dir);
  char *text = slurp(path, &len);
  assert_non_null(text);
  int lines = 0;
  for (size_t i = 0; i < len; i++)
    lines += text[i] == '\n';
  assert_int_equal(lines, count + 1);
  assert_true(strncmp(text, "case,seed,", 10) == 0);
  free(text);
  free(cases);
  remove_dir(dir);
}

/* Seeds 1 to 3, 20 cases each: every case loads, fits, plans and bounds,
 * and the zoo as a whole covers what it promises. */
/* --setups: the same cases plus a set-up on some operators that run on a
 * GPU or take batches (and on no other), and bounds no lower for it. */
static void test_setups(void **state)
{
  (void)state;
  char a[64], b[64], pa[256], pb[256], err[512];
  make_tmp(a, sizeof a, "plain");
  make_tmp(b, sizeof b, "setups");
  write_zoo(a, 7, 12, false, NULL);
  sl_zoo_opts o = {.seed = 7, .count = 12, .setups = true};
  assert_int_equal(sl_zoo_write(&o, b, NULL, err, sizeof err), 0);
  int with = 0;
  for (int i = 1; i <= 12; i++) {
    static sl_workload wa, wb;
    sl_cluster c;
    case_path(pa, sizeof pa, a, i, false);
    case_path(pb, sizeof pb, b, i, false);
    assert_int_equal(sl_workload_load(pa, &wa, err, sizeof err), 0);
    assert_int_equal(sl_workload_load(pb, &wb, err, sizeof err), 0);
    assert_int_equal(wa.nops, wb.nops);
    for (int k = 0; k < wa.nops; k++) {
      const sl_op_spec *x = &wa.ops[k], *y = &wb.ops[k];
      assert_true(x->time_per_row == y->time_per_row && x->time_per_task == y->time_per_task &&
                  x->cpu == y->cpu && x->gpu == y->gpu && x->time_setup == 0);
      if (y->time_setup > 0) {
        with++;
        assert_true(y->gpu > 0 || y->kind == SL_OP_MAP_BATCHES);
      }
    }
    case_path(pa, sizeof pa, a, i, true);
    case_path(pb, sizeof pb, b, i, true);
    assert_true(same_file(pa, pb));
    assert_int_equal(sl_cluster_load(pa, &c, err, sizeof err), 0);
    sl_plan p, q;
    sl_plan_opts po = {0};
    sl_bound ba, bb;
    assert_int_equal(sl_plan_build(&p, &wa, &po, err, sizeof err), 0);
    assert_int_equal(sl_plan_build(&q, &wb, &po, err, sizeof err), 0);
    assert_int_equal(sl_bound_compute(&p, &c, &ba), 0);
    assert_int_equal(sl_bound_compute(&q, &c, &bb), 0);
    assert_true(bb.jct_s >= ba.jct_s * (1 - 1e-9));
    sl_cluster_free(&c);
  }
  assert_true(with > 0);
  remove_dir(a);
  remove_dir(b);
}

static void test_cases_load_and_plan(void **state)
{
  (void)state;
  coverage cov = {0};
  for (uint64_t seed = 1; seed <= 3; seed++)
    check_zoo(seed, 20, false, &cov);
  assert_int_equal(cov.cases, 60);
  assert_true(cov.gpu_ops > 0);
  assert_true(cov.mixed_ops > 0);
  assert_true(cov.fractional > 0);
  assert_true(cov.pinned > 0);
  assert_true(cov.batches > 0);
  assert_true(cov.expansions > 0);
  assert_true(cov.shrinks > 0);
  assert_true(cov.reads > 0);
  assert_true(cov.gpu_only_groups > 0);
  assert_true(cov.unequal_speeds > 0);
}

static void test_small_cases(void **state)
{
  (void)state;
  coverage cov = {0};
  check_zoo(1, 12, true, &cov);
  check_zoo(2, 12, true, &cov);
  assert_int_equal(cov.cases, 24);
}

/* A stand-in for the CLI's streaming simulation: a model that reaches 40%
 * of the bound. Counts its calls. */
static double fake_measure(const char *workload, const char *cluster, void *ctx)
{
  int *calls = ctx;
  sl_zoo_case k;
  char err[512];
  (*calls)++;
  if (sl_zoo_check(workload, cluster, &k, err, sizeof err) != 0)
    return -1;
  return k.bound_s / 0.4;
}

/* With a measure, each case's costs are scaled again until it measures
 * within 25% of the target, and the files say so. */
static void test_measured_small_cases(void **state)
{
  (void)state;
  char dir[64], path[256];
  int calls = 0;
  make_tmp(dir, sizeof dir, "measure");
  sl_zoo_case cases[8];
  sl_zoo_opts o = {.seed = 3, .count = 8, .small = true, .measure = fake_measure,
                   .measure_ctx = &calls, .run_target_s = 10};
  char err[512] = "";
  if (sl_zoo_write(&o, dir, cases, err, sizeof err) != 0)
    fail_msg("%s", err);
  assert_true(calls >= 8 && calls <= 8 * 4);
  for (int i = 0; i < 8; i++) {
    assert_true(cases[i].measured_s >= 8 && cases[i].measured_s <= 12.5);
    assert_true(fabs(cases[i].bound_s / 0.4 - cases[i].measured_s) < 0.01 * cases[i].measured_s);
    assert_true(cases[i].run_scale > 0);
    case_path(path, sizeof path, dir, i + 1, false);
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "a run takes about"));
    free(text);
  }
  remove_dir(dir);
}

static void test_bad_arguments(void **state)
{
  (void)state;
  char dir[64], file[128], err[512];
  make_tmp(dir, sizeof dir, "bad");
  sl_zoo_opts o = {.seed = 1, .count = 0};
  assert_int_equal(sl_zoo_write(&o, dir, NULL, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "count"));
  o.count = SL_ZOO_MAX_COUNT + 1;
  assert_int_equal(sl_zoo_write(&o, dir, NULL, err, sizeof err), SL_EINVAL);
  o.count = 1;
  assert_int_equal(sl_zoo_write(NULL, dir, NULL, err, sizeof err), SL_EINVAL);
  assert_int_equal(sl_zoo_write(&o, NULL, NULL, err, sizeof err), SL_EINVAL);
  assert_int_equal(sl_zoo_write(&o, "", NULL, err, sizeof err), SL_EINVAL);
  o.seed = (uint64_t)INT64_MAX + 1;
  assert_int_equal(sl_zoo_write(&o, dir, NULL, err, sizeof err), SL_EINVAL);
  o.seed = 1;
  /* a directory that cannot be made: under a regular file */
  snprintf(file, sizeof file, "%s/plain", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  snprintf(file, sizeof file, "%s/plain/zoo", dir);
  assert_int_equal(sl_zoo_write(&o, file, NULL, err, sizeof err), SL_EIO);
  assert_non_null(strstr(err, "plain"));
  /* nothing was written for the refused calls */
  snprintf(file, sizeof file, "%s/index.csv", dir);
  assert_int_equal(access(file, F_OK), -1);
  sl_zoo_case k;
  assert_int_equal(sl_zoo_check(NULL, NULL, &k, err, sizeof err), SL_EINVAL);
  snprintf(file, sizeof file, "%s/none.ini", dir);
  assert_true(sl_zoo_check(file, file, &k, err, sizeof err) < 0);
  remove_dir(dir);
}

/* Exit status of `sluice zoo ARGS` (stdout and stderr discarded). */
static int cli(const char *args)
{
  char cmd[800];
  snprintf(cmd, sizeof cmd, "%s/sluice zoo %s >/dev/null 2>&1", SL_BINARY_DIR, args);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_usage(void **state)
{
  (void)state;
  char bin[512], dir[64], args[256];
  snprintf(bin, sizeof bin, "%s/sluice", SL_BINARY_DIR);
  if (access(bin, X_OK) != 0)
    skip(); /* the library tests above still ran */
  make_tmp(dir, sizeof dir, "cli");
  assert_int_equal(cli("--help"), 0);
  assert_int_equal(cli(""), 2);                       /* no --out */
  snprintf(args, sizeof args, "--out %s --count 0", dir);
  assert_int_equal(cli(args), 2);
  snprintf(args, sizeof args, "--out %s --count 10001", dir);
  assert_int_equal(cli(args), 2);
  snprintf(args, sizeof args, "--out %s --count two", dir);
  assert_int_equal(cli(args), 2);
  snprintf(args, sizeof args, "--out %s --seed -1", dir);
  assert_int_equal(cli(args), 2);
  snprintf(args, sizeof args, "--out %s --seed 1x", dir);
  assert_int_equal(cli(args), 2);
  snprintf(args, sizeof args, "--out %s --bogus", dir);
  assert_int_equal(cli(args), 2);
  snprintf(args, sizeof args, "--out %s extra", dir);
  assert_int_equal(cli(args), 2);
  assert_int_equal(cli("--out"), 2);
  snprintf(args, sizeof args, "--out %s/z --count 2 --seed 5 --quiet", dir);
  assert_int_equal(cli(args), 0);
  snprintf(args, sizeof args, "%s/z/case-002.cluster.ini", dir);
  assert_int_equal(access(args, R_OK), 0);
  /* --small measures each case with a simulation (a few milliseconds each) */
  snprintf(args, sizeof args, "--out %s/s --count 2 --small --quiet", dir);
  assert_int_equal(cli(args), 0);
  snprintf(args, sizeof args, "%s/s/index.csv", dir);
  assert_int_equal(access(args, R_OK), 0);
  remove_dir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_deterministic),
    cmocka_unit_test(test_setups),
    cmocka_unit_test(test_cases_load_and_plan),
    cmocka_unit_test(test_small_cases),
    cmocka_unit_test(test_measured_small_cases),
    cmocka_unit_test(test_bad_arguments),
    cmocka_unit_test(test_cli_usage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
