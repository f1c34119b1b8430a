/* What a run leaves (results/record.h): column names are plain
 * identifiers, bytes and counts are whole numbers, a mixed cluster's
 * summary names each group's budget beside its own peak, spills say whether
 * their time is in the JCT, and faults and rollbacks are timeline rows of
 * their own that never turn into a negative throughput. Runs go through the
 * simulator on small specs; the files are read back as a user would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/faults.h"
#include "models/error.h"
#include "results/record.h"
#include "sim/engine.h"
#include "workloads/spec.h"

typedef struct {
  sl_workload w;
  sl_plan plan;
  sl_cluster cluster;
  char dir[64];
} fixture;

static void load(fixture *f, const char *workload, const char *cluster)
{
  char err[512];
  int rc = sl_workload_load(workload, &f->w, err, sizeof err);
  if (rc == 0)
    rc = sl_cluster_load(cluster, &f->cluster, err, sizeof err);
  if (rc)
    fprintf(stderr, "%s\n", err);
  assert_int_equal(rc, 0);
  sl_plan_opts po = {0};
  assert_int_equal(sl_plan_build(&f->plan, &f->w, &po, err, sizeof err), 0);
  snprintf(f->dir, sizeof f->dir, "/tmp/sluice-test-record-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
}

static void unload(fixture *f)
{
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  assert_int_equal(system(cmd), 0);
  sl_cluster_free(&f->cluster);
}

static sl_sim_result simulate(fixture *f, const char *model, const char *fail, double spill_bps)
{
  sl_sim_opts o;
  sl_sim_opts_default(&o);
  assert_int_equal(sl_core_opts_set_model(&o.core, model), 0);
  o.plan = &f->plan;
  o.cluster = &f->cluster;
  o.seed = f->w.seed;
  o.spill_bps = spill_bps;
  o.out_dir = f->dir;
  sl_fault_schedule faults;
  char err[256];
  if (fail) {
    assert_int_equal(sl_faults_parse(fail, &f->plan, &f->cluster, &faults, err, sizeof err), 0);
    o.faults = &faults;
  }
  sl_sim_result r;
  assert_int_equal(sl_sim_run(&o, &r), 0);
  assert_true(r.summary.complete);
  return r;
}

/* ------------------------------------------------------------ reading CSV */

#define MAX_COLS 256

typedef struct {
  int ncols;
  char *names[MAX_COLS];
  char header[8192];
} csv_head;

/* Splits the header of @p path; the file must have one. */
static FILE *open_csv(const char *dir, const char *name, csv_head *h)
{
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(h->header, sizeof h->header, f));
  h->header[strcspn(h->header, "\n")] = '\0';
  h->ncols = 0;
  char *save = NULL;
  for (char *t = strtok_r(h->header, ",", &save); t && h->ncols < MAX_COLS; t = strtok_r(NULL, ",", &save))
    h->names[h->ncols++] = t;
  return f;
}

static int col_of(const csv_head *h, const char *name)
{
  for (int i = 0; i < h->ncols; i++)
    if (strcmp(h->names[i], name) == 0)
      return i;
  fail_msg("no column '%s'", name);
  return -1;
}

/* The fields of one line, split on commas (no field here is quoted). */
static int split(char *line, char **field, int max)
{
  int n = 0;
  line[strcspn(line, "\n")] = '\0';
  for (char *p = line; n < max;) {
    field[n++] = p;
    char *c = strchr(p, ',');
    if (!c)
      break;
    *c = '\0';
    p = c + 1;
  }
  return n;
}

static bool is_identifier(const char *s)
{
  if (!*s || isdigit((unsigned char)*s))
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return false;
  return true;
}

static bool is_whole_number(const char *s)
{
  if (*s == '-')
    s++;
  return *s && strspn(s, "0123456789") == strlen(s);
}

/* ------------------------------------------------------------------ tests */

static void test_identifiers(void **state)
{
  (void)state;
  char buf[64];
  sl_csv_identifier("read->decode->augment", buf, sizeof buf);
  assert_string_equal(buf, "read_decode_augment");
  sl_csv_identifier("g5.2xlarge", buf, sizeof buf);
  assert_string_equal(buf, "g5_2xlarge");
  sl_csv_identifier("->a  b<-", buf, sizeof buf);
  assert_string_equal(buf, "a_b");
  sl_csv_identifier("keep_under_scores", buf, sizeof buf);
  assert_string_equal(buf, "keep_under_scores");
  sl_csv_identifier("->", buf, sizeof buf);
  assert_string_equal(buf, "x");
  sl_csv_identifier("abcdef", buf, 4);
  assert_string_equal(buf, "abc");
  assert_string_equal(sl_spill_time_name(SL_SPILL_NOT_MODELLED), "not_modelled");
}

/* Every column of the three files is an identifier; every byte and row
 * count a whole number, never 5.15396e+09. */
static void check_names_and_numbers(const char *dir, const char *file, const char *const *whole)
{
  csv_head h;
  FILE *f = open_csv(dir, file, &h);
  for (int i = 0; i < h.ncols; i++)
    if (!is_identifier(h.names[i]))
      fail_msg("%s: column '%s' is not a plain identifier", file, h.names[i]);
  char line[16384], *field[MAX_COLS];
  while (fgets(line, sizeof line, f)) {
    int n = split(line, field, MAX_COLS);
    for (int i = 0; i < n && i < h.ncols; i++) {
      bool must = strstr(h.names[i], "bytes") != NULL;
      for (int k = 0; whole[k]; k++)
        must |= strcmp(h.names[i], whole[k]) == 0;
      if (must && field[i][0] && !is_whole_number(field[i]))
        fail_msg("%s: %s = '%s' is not a whole number", file, h.names[i], field[i]);
    }
  }
  fclose(f);
}

static void test_columns_are_identifiers_and_counts_whole(void **state)
{
  (void)state;
  fixture f;
  load(&f, SL_SOURCE_DIR "/workloads/fig9-small.ini", SL_SOURCE_DIR "/tests/fixtures/mixed.cluster.ini");
  /* a fused operator's name has arrows: its columns must not */
  snprintf(f.w.ops[1].name, sizeof f.w.ops[1].name, "trans-form");
  char err[128];
  sl_plan_opts po = {0};
  assert_int_equal(sl_plan_build(&f.plan, &f.w, &po, err, sizeof err), 0);
  simulate(&f, "batch", NULL, 0); /* spills: bytes that are not round */
  const char *summary_whole[] = {"rows", "expected_rows", "tasks", "rows_rolled_back", NULL};
  const char *timeline_whole[] = {"rows_done", "rows_rolled_back", NULL};
  const char *tasks_whole[] = {"rows_in", "rows_out", "node", "slot", NULL};
  check_names_and_numbers(f.dir, "summary.csv", summary_whole);
  check_names_and_numbers(f.dir, "timeline.csv", timeline_whole);
  check_names_and_numbers(f.dir, "tasks.csv", tasks_whole);
  csv_head h;
  FILE *tf = open_csv(f.dir, "timeline.csv", &h);
  col_of(&h, "running_trans_form");
  col_of(&h, "cluster_store_bytes");
  col_of(&h, "store_bytes_cpu_1");
  col_of(&h, "store_bytes_gpu_0");
  fclose(tf);
  unload(&f);
}

/* The peak node is read against its own budget: a big GPU node's peak
 * beside the small CPU nodes' budget would look over budget. */
static void test_mixed_cluster_stores_per_group(void **state)
{
  (void)state;
  fixture f;
  load(&f, SL_SOURCE_DIR "/workloads/fig9-small.ini", SL_SOURCE_DIR "/tests/fixtures/mixed.cluster.ini");
  sl_sim_result r = simulate(&f, "batch", NULL, 0);
  const sl_summary *s = &r.summary;
  assert_int_equal(s->ngroups, 2);
  assert_string_equal(s->groups[0].name, "cpu");
  assert_int_equal(s->groups[0].nodes, 2);
  assert_float_equal(s->groups[0].budget_bytes, 20e6, 1);
  assert_float_equal(s->groups[1].budget_bytes, 200e6, 1);
  for (int g = 0; g < 2; g++)
    assert_true(s->groups[g].peak_bytes <= s->groups[g].budget_bytes + 1);
  /* batch materializes on the big node: the cluster's peak is there */
  assert_true(s->peak_node_store_bytes > 20e6);
  assert_string_equal(s->peak_store_node_name, "gpu.0");
  assert_float_equal(s->peak_node_budget_bytes, 200e6, 1);
  assert_true(s->peak_node_store_bytes <= s->peak_node_budget_bytes);
  assert_float_equal(s->gpu_slots, 4, 0);
  assert_float_equal(s->cpu_slots, 10, 0);
  assert_string_equal(s->gpu_operators, "inference");

  csv_head h;
  char line[4096], *field[MAX_COLS], want[256];
  FILE *sf = open_csv(f.dir, "summary.csv", &h);
  assert_non_null(fgets(line, sizeof line, sf));
  split(line, field, MAX_COLS);
  snprintf(want, sizeof want, "cpu=%.0f/20000000@cpu.%d;gpu=%.0f/200000000@gpu.0", s->groups[0].peak_bytes,
           s->groups[0].peak_index, s->groups[1].peak_bytes);
  assert_string_equal(field[col_of(&h, "group_stores")], want);
  assert_string_equal(field[col_of(&h, "peak_store_node")], "gpu.0");
  assert_string_equal(field[col_of(&h, "peak_node_budget_bytes")], "200000000");
  fclose(sf);

  FILE *tf = open_csv(f.dir, "tasks.csv", &h);
  int node = col_of(&h, "node"), name = col_of(&h, "node_name");
  while (fgets(line, sizeof line, tf)) {
    split(line, field, MAX_COLS);
    const char *expect = atoi(field[node]) < 2 ? "cpu." : "gpu.0";
    assert_true(strncmp(field[name], expect, strlen(expect)) == 0);
  }
  fclose(tf);
  unload(&f);
}

/* Spills without a disk cost no time, and the summary says so. */
static void test_spill_time_is_named(void **state)
{
  (void)state;
  fixture f;
  load(&f, SL_SOURCE_DIR "/workloads/fig9-small.ini", SL_SOURCE_DIR "/tests/fixtures/mixed.cluster.ini");
  sl_sim_result free_spill = simulate(&f, "batch", NULL, 0);
  assert_true(free_spill.summary.spilled_bytes > 0);
  assert_int_equal(free_spill.summary.spill_time, SL_SPILL_NOT_MODELLED);
  sl_sim_result disk = simulate(&f, "batch", NULL, 100e6);
  assert_int_equal(disk.summary.spill_time, SL_SPILL_MODELLED);
  assert_true(disk.summary.jct_s > free_spill.summary.jct_s);
  sl_sim_result none = simulate(&f, "streaming", NULL, 0);
  assert_float_equal(none.summary.spilled_bytes, 0, 0);
  assert_int_equal(none.summary.spill_time, SL_SPILL_NONE);
  unload(&f);
}

/* summary.csv reads back as written, every column in place past a note
 * that quotes commas: the time scale sits past column 48, where sluice
 * plot's own reader stopped. */
static void test_summary_reads_back(void **state)
{
  (void)state;
  sl_summary s;
  memset(&s, 0, sizeof s);
  snprintf(s.workload, sizeof s.workload, "w");
  snprintf(s.note, sizeof s.note, "stopped, then \"resumed\", twice");
  s.jct_s = 12.5;
  s.time_scale = 0.25;
  char dir[160], path[200], err[256];
  snprintf(dir, sizeof dir, "%s/summary-back-%d", SL_BINARY_DIR, (int)getpid());
  assert_int_equal(mkdir(dir, 0755), 0);
  assert_int_equal(sl_summary_write(&s, dir, err, sizeof err), 0);
  snprintf(path, sizeof path, "%s/summary.csv", dir);
  static sl_summary_columns c;
  assert_int_equal(sl_summary_read_columns(path, &c), 0);
  assert_true(c.n > 48);
  assert_string_equal(sl_summary_column(&c, "workload"), "w");
  assert_string_equal(sl_summary_column(&c, "note"), "stopped, then \"resumed\", twice");
  assert_float_equal(atof(sl_summary_column(&c, "jct_s")), 12.5, 1e-9);
  assert_float_equal(atof(sl_summary_column(&c, "time_scale")), 0.25, 1e-12);
  assert_string_equal(sl_summary_column(&c, "no_such_column"), "");
  remove(path);
  rmdir(dir);
  assert_int_equal(sl_summary_read_columns(path, &c), SL_EIO);
}

/* A rollback is a row of its own naming the rows the sink gave back; the
 * fault before it is one too, and no row's throughput is negative. */
static void test_faults_and_rollbacks_are_rows(void **state)
{
  (void)state;
  fixture f;
  load(&f, SL_SOURCE_DIR "/workloads/fig9-small.ini", SL_SOURCE_DIR "/tests/golden/sim/cluster.ini");
  sl_sim_result r = simulate(&f, "stream", "lose:cpu.1@6s,join:cpu.1@8s,kill:transform@10s", 0);
  assert_true(r.summary.rollbacks >= 2);
  assert_true(r.summary.rows_rolled_back > 0);

  csv_head h;
  char line[4096], *field[MAX_COLS];
  FILE *tf = open_csv(f.dir, "timeline.csv", &h);
  int ev = col_of(&h, "event"), rate = col_of(&h, "throughput_rows_s"), back = col_of(&h, "rows_rolled_back");
  assert_int_equal(ev, h.ncols - 1);
  double named = 0, last_back = 0, prev_rate = 0;
  int lose = 0, join = 0, kill = 0, rollbacks = 0;
  while (fgets(line, sizeof line, tf)) {
    int n = split(line, field, MAX_COLS);
    assert_int_equal(n, h.ncols);
    assert_true(atof(field[rate]) >= 0);
    last_back = atof(field[back]);
    if (strncmp(field[ev], "rollback:", 9) == 0) {
      rollbacks++;
      named += atof(field[ev] + 9);
    }
    if (field[ev][0])
      assert_float_equal(atof(field[rate]), prev_rate, 1e-9); /* an event row keeps the rate */
    lose += strcmp(field[ev], "lose:cpu.1") == 0;
    join += strcmp(field[ev], "join:cpu.1") == 0;
    kill += strcmp(field[ev], "kill:transform") == 0;
    prev_rate = atof(field[rate]);
  }
  fclose(tf);
  assert_int_equal(lose, 1);
  assert_int_equal(join, 1);
  assert_int_equal(kill, 1);
  assert_int_equal(rollbacks, r.summary.rollbacks);
  assert_float_equal(named, r.summary.rows_rolled_back, 0.5);
  assert_float_equal(last_back, r.summary.rows_rolled_back, 0.5);
  unload(&f);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_identifiers),
    cmocka_unit_test(test_columns_are_identifiers_and_counts_whole),
    cmocka_unit_test(test_mixed_cluster_stores_per_group),
    cmocka_unit_test(test_spill_time_is_named),
    cmocka_unit_test(test_faults_and_rollbacks_are_rows),
    cmocka_unit_test(test_summary_reads_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
