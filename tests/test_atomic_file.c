/* Files that appear whole or not at all: a commit replaces the old file
 * and leaves no temporary; a failed write or a refused commit keeps the
 * old file and leaves no temporary either; an unwritable folder creates
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/error.h"
#include "results/atomic_file.h"

typedef struct {
  char dir[64];
  char path[128];
} scratch;

static int setup(void **state)
{
  scratch *s = calloc(1, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "/tmp/sl-atomic-XXXXXX");
  if (!mkdtemp(s->dir))
    return -1;
  snprintf(s->path, sizeof s->path, "%s/out.csv", s->dir);
  *state = s;
  return 0;
}

static int teardown(void **state)
{
  scratch *s = *state;
  char tmp[1200];
  sl_atomic_tmp_path(s->path, tmp, sizeof tmp);
  unlink(tmp);
  unlink(s->path);
  rmdir(s->dir);
  free(s);
  return 0;
}

/* The file's text, or "" when there is none. */
static const char *contents(const char *path)
{
  static char buf[256];
  buf[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* Files in @p dir, "." and ".." left out. */
static int entries(const char *dir)
{
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d)
    closedir(d);
  return n;
}

static void write_text(const char *path, const char *text, bool ok, int want)
{
  sl_atomic_file a;
  char err[1400] = "untouched";
  FILE *f = sl_atomic_open(&a, path, err, sizeof err);
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(sl_atomic_commit(&a, ok, err, sizeof err), want);
  if (!ok)
    assert_string_equal(err, "untouched"); /* the caller said what went wrong */
}

static void test_tmp_path(void **state)
{
  (void)state;
  char tmp[1200];
  sl_atomic_tmp_path("runs/last/summary.csv", tmp, sizeof tmp);
  assert_string_equal(tmp, "runs/last/.summary.csv.tmp");
  sl_atomic_tmp_path("costs.ini", tmp, sizeof tmp);
  assert_string_equal(tmp, ".costs.ini.tmp");
}

static void test_commit_replaces(void **state)
{
  scratch *s = *state;
  write_text(s->path, "one\n", true, 0);
  assert_string_equal(contents(s->path), "one\n");
  write_text(s->path, "two\n", true, 0);
  assert_string_equal(contents(s->path), "two\n");
  assert_int_equal(entries(s->dir), 1); /* no temporary left */
}

static void test_unwritten_until_commit(void **state)
{
  scratch *s = *state;
  write_text(s->path, "old\n", true, 0);
  sl_atomic_file a;
  char err[1400];
  FILE *f = sl_atomic_open(&a, s->path, err, sizeof err);
  assert_non_null(f);
  fputs("new, half written", f);
  fflush(f);
  assert_string_equal(contents(s->path), "old\n"); /* an interruption here leaves the old file */
  assert_int_equal(sl_atomic_commit(&a, true, err, sizeof err), 0);
  assert_string_equal(contents(s->path), "new, half written");
}

static void test_refused_keeps_old(void **state)
{
  scratch *s = *state;
  write_text(s->path, "old\n", true, 0);
  write_text(s->path, "broken\n", false, SL_EIO);
  assert_string_equal(contents(s->path), "old\n");
  assert_int_equal(entries(s->dir), 1);
}

static void test_unwritable_folder(void **state)
{
  scratch *s = *state;
  char path[200], err[1400] = "";
  snprintf(path, sizeof path, "%s/missing/out.csv", s->dir);
  sl_atomic_file a;
  assert_null(sl_atomic_open(&a, path, err, sizeof err));
  assert_non_null(strstr(err, "missing/out.csv: cannot write: "));
  assert_int_equal(entries(s->dir), 0);
}

static void test_publish(void **state)
{
  scratch *s = *state;
  char tmp[1200], err[1400] = "";
  sl_atomic_tmp_path(s->path, tmp, sizeof tmp);
  FILE *f = fopen(tmp, "w"); /* as another program would write it */
  assert_non_null(f);
  fputs("plot\n", f);
  fclose(f);
  assert_int_equal(sl_atomic_publish(tmp, s->path, err, sizeof err), 0);
  assert_string_equal(contents(s->path), "plot\n");
  assert_int_equal(entries(s->dir), 1);
  /* a rename that cannot happen removes the temporary and says where */
  char bad[200];
  snprintf(bad, sizeof bad, "%s/missing/out.csv", s->dir);
  f = fopen(tmp, "w");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(sl_atomic_publish(tmp, bad, err, sizeof err), SL_EIO);
  assert_non_null(strstr(err, "cannot write"));
  assert_int_equal(entries(s->dir), 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tmp_path),
    cmocka_unit_test_setup_teardown(test_commit_replaces, setup, teardown),
    cmocka_unit_test_setup_teardown(test_unwritten_until_commit, setup, teardown),
    cmocka_unit_test_setup_teardown(test_refused_keeps_old, setup, teardown),
    cmocka_unit_test_setup_teardown(test_unwritable_folder, setup, teardown),
    cmocka_unit_test_setup_teardown(test_publish, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
