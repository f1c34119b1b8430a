/* The executor's store (executor/store.h): partitions kept in memory or
 * spilled to files, pinned by readers, and spilled in three steps so that
 * the engine writes a file without its lock while a reader that pinned the
 * partition waits for it to be complete. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/store.h"

typedef struct {
  char dir[64];
  sl_store *s;
} fixture;

static int setup(void **state)
{
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  snprintf(f->dir, sizeof f->dir, "/tmp/sluice-store-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  strcat(f->dir, "/spill"); /* the store makes it at its first spill */
  f->s = sl_store_new(2, f->dir);
  assert_non_null(f->s);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;
  sl_store_free(f->s); /* removes the spill folder once empty */
  f->dir[strlen(f->dir) - strlen("/spill")] = 0;
  assert_int_equal(rmdir(f->dir), 0); /* nothing left behind */
  free(f);
  return 0;
}

/* @p n rows of @p len bytes, row i filled with i. */
static void make_rows(sl_rows *r, int n, size_t len)
{
  sl_rows_init(r);
  for (int i = 0; i < n; i++) {
    uint8_t *p = sl_rows_add(r, 100 + i, 7, len);
    assert_non_null(p);
    memset(p, i, len);
  }
}

static void assert_rows(const sl_rows *r, int n, size_t len)
{
  assert_int_equal(sl_rows_count(r), n);
  for (int i = 0; i < n; i++) {
    assert_int_equal(sl_rows_id(r, (size_t)i), 100 + i);
    assert_int_equal(sl_rows_len(r, (size_t)i), len);
    assert_int_equal(sl_rows_payload(r, (size_t)i)[len - 1], i);
  }
}

static void test_put_counts_memory_and_drop_frees_it(void **state)
{
  fixture *f = *state;
  sl_rows r;
  make_rows(&r, 3, 1000);
  assert_int_equal(sl_store_put(f->s, 5, 1, &r), 0);
  assert_int_equal(sl_rows_count(&r), 0); /* moved in */
  assert_float_equal(sl_store_node_bytes(f->s, 1), 3000, 0);
  assert_float_equal(sl_store_node_bytes(f->s, 0), 0, 0);
  const sl_rows *mem;
  char path[600];
  sl_blob *b = sl_store_acquire(f->s, 5, &mem, path, sizeof path);
  assert_non_null(b);
  assert_non_null(mem);
  assert_rows(mem, 3, 1000);
  sl_store_drop(f->s, 5);
  assert_float_equal(sl_store_node_bytes(f->s, 1), 0, 0);
  assert_rows(mem, 3, 1000); /* the reader's pin keeps the bytes */
  sl_store_release(f->s, b);
  assert_null(sl_store_acquire(f->s, 5, &mem, path, sizeof path));
  sl_rows_free(&r);
}

/* Bug: freeing a GPU batch's four input partitions took 1-10 ms under the
 * executor's lock on a 16-core host. A partition no one holds goes on the
 * store's garbage list, freed by whoever takes it (the engine's reclaimer,
 * without the lock); its bytes leave the node's count at once. */
static void test_dropped_partitions_wait_on_the_garbage_list(void **state)
{
  fixture *f = *state;
  sl_rows r1, r2;
  make_rows(&r1, 3, 1000);
  make_rows(&r2, 2, 500);
  assert_int_equal(sl_store_put(f->s, 1, 0, &r1), 0);
  assert_int_equal(sl_store_put(f->s, 2, 0, &r2), 0);
  assert_null(sl_store_take_garbage(f->s, NULL));
  const sl_rows *mem;
  char path[600];
  sl_blob *pinned = sl_store_acquire(f->s, 2, &mem, path, sizeof path);
  sl_store_drop(f->s, 1);
  sl_store_drop(f->s, 2);
  assert_float_equal(sl_store_node_bytes(f->s, 0), 0, 0);
  assert_float_equal(sl_store_garbage_bytes(f->s), 3000, 0); /* what the engine weighs */
  sl_blob *g = sl_store_take_garbage(f->s, NULL);
  assert_float_equal(sl_store_garbage_bytes(f->s), 0, 0);
  assert_non_null(g); /* partition 1; 2 is still read */
  assert_null(sl_store_garbage_next(g));
  assert_null(sl_store_take_garbage(f->s, NULL)); /* taken once */
  assert_rows(mem, 2, 500);
  sl_store_release(f->s, pinned);
  sl_blob *h = sl_store_take_garbage(f->s, g); /* two lists joined, freed as one */
  assert_non_null(h);
  assert_ptr_equal(sl_store_garbage_next(h), g);
  sl_store_free_garbage(h);
  sl_store_free_garbage(NULL);
  sl_rows_free(&r1);
  sl_rows_free(&r2);
}

/* Bug: a spill was one call that the engine made holding its lock, so two
 * slots' spills took turns and nothing else moved meanwhile. Now begin
 * (under the lock) makes the partition known and not ready, write (without
 * it) fills the file, end (under it again) makes it ready. */
static void test_spill_in_steps_is_not_ready_until_written(void **state)
{
  fixture *f = *state;
  sl_rows r;
  make_rows(&r, 4, 5000);
  sl_blob *w;
  char err[700];
  assert_int_equal(sl_store_spill_begin(f->s, 9, 0, 20000, &w, err, sizeof err), 0);
  assert_false(sl_store_blob_ready(w));
  assert_float_equal(sl_store_node_bytes(f->s, 0), 0, 0); /* on disk, not in memory */
  /* a reader launched meanwhile pins it and learns its file */
  const sl_rows *mem = (const sl_rows *)1;
  char path[600];
  sl_blob *b = sl_store_acquire(f->s, 9, &mem, path, sizeof path);
  assert_non_null(b);
  assert_null(mem);
  assert_false(sl_store_blob_ready(b));
  assert_int_equal(sl_store_spill_write(w, &r, NULL, err, sizeof err), 0);
  assert_int_equal(sl_rows_count(&r), 0);
  assert_false(sl_store_blob_ready(b)); /* written, not yet ended */
  sl_store_spill_end(f->s, w);
  assert_true(sl_store_blob_ready(b));
  sl_rows back;
  sl_rows_init(&back);
  assert_int_equal(sl_store_read_spill(path, &back, err, sizeof err), 0);
  assert_rows(&back, 4, 5000);
  sl_store_release(f->s, b);
  sl_store_drop(f->s, 9);
  assert_int_equal(access(path, F_OK), 0); /* the last pin put it on the garbage list */
  sl_store_free_garbage(sl_store_take_garbage(f->s, NULL));
  assert_int_not_equal(access(path, F_OK), 0); /* freeing the list took the file */
  sl_rows_free(&back);
  sl_rows_free(&r);
}

/* A partition dropped while its file is written (its node lost): the
 * writer's pin keeps the blob, and its end removes the file. */
static void test_spill_dropped_while_written(void **state)
{
  fixture *f = *state;
  sl_rows r;
  make_rows(&r, 2, 100);
  sl_blob *w;
  char err[700];
  assert_int_equal(sl_store_spill_begin(f->s, 3, 1, 200, &w, err, sizeof err), 0);
  sl_store_drop_node(f->s, 1);
  const sl_rows *mem;
  char path[600];
  assert_null(sl_store_acquire(f->s, 3, &mem, path, sizeof path));
  assert_int_equal(sl_store_spill_write(w, &r, NULL, err, sizeof err), 0);
  sl_store_spill_end(f->s, w); /* frees it: the teardown finds the folder empty */
  sl_rows_free(&r);
}

/* A spill the disk refuses names the file; the one-call spill keeps
 * nothing in the books. */
static void test_spill_that_fails_keeps_nothing(void **state)
{
  fixture *f = *state;
  sl_rows r;
  make_rows(&r, 2, 100);
  char err[700];
  assert_int_equal(sl_store_spill(f->s, 1, 0, &r, err, sizeof err), 0); /* makes the folder */
  sl_blob *w;
  assert_int_equal(sl_store_spill_begin(f->s, 2, 0, 200, &w, err, sizeof err), 0);
  char path[600];
  const sl_rows *mem;
  sl_blob *b = sl_store_acquire(f->s, 2, &mem, path, sizeof path);
  sl_store_release(f->s, b);
  assert_int_equal(mkdir(path, 0700), 0); /* its file's name taken by a folder: fopen fails */
  sl_rows more;
  make_rows(&more, 2, 100);
  int rc = sl_store_spill_write(w, &more, NULL, err, sizeof err);
  assert_true(rc < 0);
  assert_non_null(strstr(err, "cannot spill partition"));
  assert_non_null(strstr(err, path));
  sl_store_spill_end(f->s, w);
  sl_store_drop(f->s, 2); /* the engine fails the job; the books let go of it */
  assert_int_equal(rmdir(path), 0);
  sl_store_drop(f->s, 1);
  sl_rows_free(&more);
  sl_rows_free(&r);
}

/* A partition spilled in its reducers' blocks: a reader of one block gets
 * that block's rows alone and reads little more than their bytes; a
 * reader of the whole file gets every row; a reader expecting another
 * number of blocks gets the whole file (and filters it itself). */
static void test_spill_in_blocks_reads_one_block(void **state)
{
  fixture *f = *state;
  sl_rows r;
  make_rows(&r, 12, 1000);
  int64_t of[12];
  for (int i = 0; i < 12; i++)
    of[i] = (i * 7) % 4; /* blocks 0..3, three rows each, interleaved */
  sl_spill_blocks bl = {.nblocks = 4, .block_of = of};
  sl_blob *w;
  char err[700], path[600];
  assert_int_equal(sl_store_spill_begin(f->s, 5, 0, 12000, &w, err, sizeof err), 0);
  assert_int_equal(sl_store_spill_write(w, &r, &bl, err, sizeof err), 0);
  sl_store_spill_end(f->s, w);
  const sl_rows *mem;
  sl_blob *b = sl_store_acquire(f->s, 5, &mem, path, sizeof path);
  assert_non_null(b);
  for (int k = 0; k < 4; k++) {
    sl_rows back;
    sl_rows_init(&back);
    double read = 0;
    assert_int_equal(sl_store_read_spill_blocks(path, k, k + 1, 4, &back, &read, err, sizeof err), 0);
    assert_int_equal(sl_rows_count(&back), 3);
    for (size_t i = 0; i < 3; i++) {
      int64_t row = sl_rows_id(&back, i) - 100;
      assert_int_equal((row * 7) % 4, k);
      assert_int_equal(sl_rows_payload(&back, i)[999], (uint8_t)row);
    }
    assert_true(read >= 3000 && read < 3200); /* its rows and the index, not the file */
    sl_rows_free(&back);
  }
  sl_rows two; /* blocks 1 and 2, one read */
  sl_rows_init(&two);
  double read = 0;
  assert_int_equal(sl_store_read_spill_blocks(path, 1, 3, 4, &two, &read, err, sizeof err), 0);
  assert_int_equal(sl_rows_count(&two), 6);
  for (size_t i = 0; i < 6; i++) {
    int64_t row = sl_rows_id(&two, i) - 100;
    assert_true((row * 7) % 4 == 1 || (row * 7) % 4 == 2);
  }
  assert_true(read >= 6000 && read < 6200);
  sl_rows_free(&two);
  sl_rows all, other;
  sl_rows_init(&all);
  sl_rows_init(&other);
  assert_int_equal(sl_store_read_spill(path, &all, err, sizeof err), 0);
  assert_int_equal(sl_rows_count(&all), 12);
  assert_int_equal(sl_store_read_spill_blocks(path, 1, 2, 3, &other, NULL, err, sizeof err), 0);
  assert_int_equal(sl_rows_count(&other), 12);
  sl_rows_free(&all);
  sl_rows_free(&other);
  sl_store_release(f->s, b);
  sl_store_drop(f->s, 5);
  sl_store_free_garbage(sl_store_take_garbage(f->s, NULL));
  sl_rows_free(&r);
}

/* A file cut short where a block should be is an error, not fewer rows. */
static void test_spill_block_of_a_truncated_file_fails(void **state)
{
  fixture *f = *state;
  sl_rows r;
  make_rows(&r, 8, 500);
  int64_t of[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  sl_spill_blocks bl = {.nblocks = 2, .block_of = of};
  sl_blob *w;
  char err[700], path[600];
  assert_int_equal(sl_store_spill_begin(f->s, 6, 0, 4000, &w, err, sizeof err), 0);
  assert_int_equal(sl_store_spill_write(w, &r, &bl, err, sizeof err), 0);
  sl_store_spill_end(f->s, w);
  const sl_rows *mem;
  sl_blob *b = sl_store_acquire(f->s, 6, &mem, path, sizeof path);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(truncate(path, st.st_size - 700), 0); /* into the last block */
  sl_rows back;
  sl_rows_init(&back);
  assert_int_equal(sl_store_read_spill_blocks(path, 0, 1, 2, &back, NULL, err, sizeof err), 0);
  assert_int_equal(sl_rows_count(&back), 4); /* block 0 is whole */
  sl_rows_reset(&back);
  assert_int_equal(sl_store_read_spill_blocks(path, 1, 2, 2, &back, NULL, err, sizeof err), SL_EIO);
  assert_non_null(strstr(err, "cannot read spilled partition"));
  sl_rows_free(&back);
  sl_store_release(f->s, b);
  sl_store_drop(f->s, 6);
  sl_store_free_garbage(sl_store_take_garbage(f->s, NULL));
  sl_rows_free(&r);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_put_counts_memory_and_drop_frees_it, setup, teardown),
    cmocka_unit_test_setup_teardown(test_dropped_partitions_wait_on_the_garbage_list, setup, teardown),
    cmocka_unit_test_setup_teardown(test_spill_in_steps_is_not_ready_until_written, setup, teardown),
    cmocka_unit_test_setup_teardown(test_spill_dropped_while_written, setup, teardown),
    cmocka_unit_test_setup_teardown(test_spill_that_fails_keeps_nothing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_spill_in_blocks_reads_one_block, setup, teardown),
    cmocka_unit_test_setup_teardown(test_spill_block_of_a_truncated_file_fails, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
