#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/error.h"

/* The bytes of one version of a partition. A partition regenerated after
 * a loss gets a new blob while readers may still hold the old one. */
struct sl_blob_s {
  sl_rows rows;
  bool spilled;
  bool writing; /* spilled, its file not yet complete: readers wait */
  int refs; /* the store's own reference plus one per reader */
  char path[600];
  struct sl_blob_s *next; /* on the store's garbage list, once the last reference went */
};

typedef struct {
  sl_blob *b;
  int node;
  double bytes; /* counted in node_bytes while in memory */
} entry;

struct sl_store_s {
  entry *e;
  uint32_t cap;
  int nnodes;
  double *node_bytes;
  double peak;
  char dir[512];
  bool dir_made;
  sl_blob *garbage; /* blobs no one references, not yet freed (sl_store_take_garbage()) */
  sl_blob *garbage_tail; /* its first entry: where a taken list joins another */
  double garbage_bytes; /* what their rows hold */
};

/* A run killed mid-way leaves its spilled partitions behind; they are
 * ours by name (part-ID-VERSION.bin) and of no use to a new run. */
static void remove_stale_spills(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *ent;
  char path[1024];
  while ((ent = readdir(d))) {
    size_t len = strlen(ent->d_name);
    if (strncmp(ent->d_name, "part-", 5) != 0 || len < 9 || strcmp(ent->d_name + len - 4, ".bin") != 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir); /* only when empty: never what someone else keeps there */
}

sl_store *sl_store_new(int nnodes, const char *spill_dir)
{
  sl_store *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->nnodes = nnodes;
  s->node_bytes = calloc(nnodes, sizeof *s->node_bytes);
  if (!s->node_bytes) {
    free(s);
    return NULL;
  }
  snprintf(s->dir, sizeof s->dir, "%s", spill_dir);
  remove_stale_spills(s->dir);
  return s;
}

/* The last reference puts the blob on the garbage list: freeing a
 * partition's buffers is left to whoever takes the list, away from the
 * lock that guards the store (sl_store_take_garbage()). */
static void blob_unref(sl_store *s, sl_blob *b)
{
  if (--b->refs > 0)
    return;
  b->next = s->garbage;
  if (!s->garbage)
    s->garbage_tail = b;
  s->garbage = b;
  s->garbage_bytes += (double)sl_rows_bytes(&b->rows);
}

sl_blob *sl_store_take_garbage(sl_store *s, sl_blob *onto)
{
  sl_blob *g = s->garbage;
  if (!g)
    return onto;
  s->garbage_tail->next = onto;
  s->garbage = s->garbage_tail = NULL;
  s->garbage_bytes = 0;
  return g;
}

double sl_store_garbage_bytes(const sl_store *s)
{
  return s->garbage_bytes;
}

sl_blob *sl_store_garbage_next(const sl_blob *b)
{
  return b->next;
}

void sl_store_free_garbage(sl_blob *list)
{
  while (list) {
    sl_blob *next = list->next;
    sl_rows_free(&list->rows);
    if (list->spilled)
      unlink(list->path);
    free(list);
    list = next;
  }
}

void sl_store_drop(sl_store *s, sl_part_id id)
{
  if (id >= s->cap || !s->e[id].b)
    return;
  entry *e = &s->e[id];
  if (!e->b->spilled)
    s->node_bytes[e->node] -= e->bytes;
  blob_unref(s, e->b);
  memset(e, 0, sizeof *e);
}

void sl_store_free(sl_store *s)
{
  if (!s)
    return;
  for (uint32_t i = 0; i < s->cap; i++)
    sl_store_drop(s, i);
  sl_store_free_garbage(sl_store_take_garbage(s, NULL)); /* before the spill folder goes */
  if (s->dir_made)
    rmdir(s->dir);
  free(s->e);
  free(s->node_bytes);
  free(s);
}

static entry *slot(sl_store *s, sl_part_id id)
{
  if (id >= s->cap) {
    uint32_t ncap = s->cap ? s->cap : 1024;
    while (ncap <= id)
      ncap *= 2;
    entry *n = realloc(s->e, sizeof *n * ncap);
    if (!n)
      return NULL;
    memset(n + s->cap, 0, sizeof *n * (ncap - s->cap));
    s->e = n;
    s->cap = ncap;
  }
  sl_store_drop(s, id); /* a partition regenerated after its loss */
  return &s->e[id];
}

static sl_blob *blob_new(void)
{
  sl_blob *b = calloc(1, sizeof *b);
  if (b) {
    sl_rows_init(&b->rows);
    b->refs = 1;
  }
  return b;
}

int sl_store_put(sl_store *s, sl_part_id id, int node, sl_rows *rows)
{
  entry *e = slot(s, id);
  sl_blob *b = e ? blob_new() : NULL;
  if (!b)
    return SL_ENOMEM;
  sl_rows_move(&b->rows, rows);
  e->b = b;
  e->node = node;
  e->bytes = (double)sl_rows_bytes(&b->rows);
  s->node_bytes[node] += e->bytes;
  if (s->node_bytes[node] > s->peak)
    s->peak = s->node_bytes[node];
  return 0;
}

static bool write_row(FILE *f, const sl_rows *rows, size_t i)
{
  int64_t rid = sl_rows_id(rows, i);
  uint32_t split = sl_rows_split(rows, i), len = (uint32_t)sl_rows_len(rows, i);
  return fwrite(&rid, sizeof rid, 1, f) == 1 && fwrite(&split, sizeof split, 1, f) == 1 &&
         fwrite(&len, sizeof len, 1, f) == 1 && (len == 0 || fwrite(sl_rows_payload(rows, i), len, 1, f) == 1);
}

/* What one row takes in the file: id, split, length, payload. */
static uint64_t row_file_bytes(const sl_rows *rows, size_t i)
{
  return sizeof(int64_t) + 2 * sizeof(uint32_t) + sl_rows_len(rows, i);
}

/* Writes the rows block after block; offsets[k] is where block k starts,
 * counted from the first row, offsets[nblocks] the end. */
static bool write_blocks(FILE *f, const sl_rows *rows, const sl_spill_blocks *bl, uint64_t *offsets)
{
  size_t n = sl_rows_count(rows);
  memset(offsets, 0, sizeof *offsets * (size_t)(bl->nblocks + 1));
  for (size_t i = 0; i < n; i++)
    offsets[bl->block_of[i] + 1] += row_file_bytes(rows, i);
  for (int64_t k = 0; k < bl->nblocks; k++)
    offsets[k + 1] += offsets[k];
  if (fwrite(offsets, sizeof *offsets, (size_t)bl->nblocks + 1, f) != (size_t)bl->nblocks + 1)
    return false;
  /* one pass per block: the rows of a block are few passes' worth of a
   * partition, and the file stays in the rows' order within each block */
  bool ok = true;
  for (int64_t k = 0; ok && k < bl->nblocks; k++)
    for (size_t i = 0; ok && i < n; i++)
      if (bl->block_of[i] == k)
        ok = write_row(f, rows, i);
  return ok;
}

static bool blocks_valid(const sl_rows *rows, const sl_spill_blocks *bl)
{
  if (!bl || bl->nblocks <= 1)
    return false;
  for (size_t i = 0; i < sl_rows_count(rows); i++)
    if (bl->block_of[i] < 0 || bl->block_of[i] >= bl->nblocks)
      return false;
  return true;
}

/* File layout: row count, block count, then (with more than one block)
 * the blocks' offsets, then per row id, split, length, payload. */
static bool write_rows(FILE *f, const sl_rows *rows, const sl_spill_blocks *bl)
{
  uint64_t n = sl_rows_count(rows), nblocks = blocks_valid(rows, bl) ? (uint64_t)bl->nblocks : 1;
  bool ok = fwrite(&n, sizeof n, 1, f) == 1 && fwrite(&nblocks, sizeof nblocks, 1, f) == 1;
  if (ok && nblocks > 1) {
    uint64_t *offsets = malloc(sizeof *offsets * (nblocks + 1));
    ok = offsets && write_blocks(f, rows, bl, offsets);
    free(offsets);
    return ok;
  }
  for (size_t i = 0; ok && i < n; i++)
    ok = write_row(f, rows, i);
  return ok;
}

static bool make_spill_dir(sl_store *s, char *err, size_t errlen)
{
  if (!s->dir_made) {
    if (mkdir(s->dir, 0777) != 0 && errno != EEXIST) {
      snprintf(err, errlen, "%s: cannot create spill directory: %s", s->dir, strerror(errno));
      return false;
    }
    s->dir_made = true;
  }
  return true;
}

int sl_store_spill_begin(sl_store *s, sl_part_id id, int node, double bytes, sl_blob **out, char *err,
                         size_t errlen)
{
  *out = NULL;
  if (!make_spill_dir(s, err, errlen))
    return SL_EIO;
  entry *e = slot(s, id);
  sl_blob *b = e ? blob_new() : NULL;
  if (!b) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  /* a new name per version: an old reader may still have the old file open */
  static unsigned version;
  snprintf(b->path, sizeof b->path, "%s/part-%u-%u.bin", s->dir, id, version++);
  b->spilled = true;
  b->writing = true;
  b->refs++; /* the writer's pin */
  e->b = b;
  e->node = node;
  e->bytes = bytes;
  *out = b;
  return 0;
}

int sl_store_spill_write(sl_blob *b, sl_rows *rows, const sl_spill_blocks *blocks, char *err, size_t errlen)
{
  errno = 0;
  FILE *f = fopen(b->path, "wb");
  bool ok = f && write_rows(f, rows, blocks);
  ok = f && fflush(f) == 0 && ok;
  ok = f && fclose(f) == 0 && ok;
  sl_rows_reset(rows);
  if (ok)
    return 0;
  int why = errno ? errno : EIO;
  snprintf(err, errlen, "%s: cannot spill partition: %s%s", b->path, strerror(why),
           why == ENOSPC || why == EFBIG ? " (the spill disk is full or a file size limit applies)" : "");
  return SL_EIO;
}

void sl_store_spill_end(sl_store *s, sl_blob *b)
{
  b->writing = false;
  blob_unref(s, b); /* the writer's pin; the file goes with the last one */
}

bool sl_store_blob_ready(const sl_blob *b)
{
  return !b->writing;
}

int sl_store_spill(sl_store *s, sl_part_id id, int node, sl_rows *rows, char *err, size_t errlen)
{
  sl_blob *b;
  int rc = sl_store_spill_begin(s, id, node, (double)sl_rows_bytes(rows), &b, err, errlen);
  if (rc < 0)
    return rc;
  rc = sl_store_spill_write(b, rows, NULL, err, errlen);
  sl_store_spill_end(s, b);
  if (rc < 0)
    sl_store_drop(s, id); /* nothing half-written stays in the books */
  return rc;
}

/* Reads rows until @p bytes of the file's row section are read (all @p n
 * rows when bytes is negative). */
static bool read_rows(FILE *f, uint64_t n, int64_t bytes, sl_rows *out, double *read)
{
  for (uint64_t i = 0; i < n && (bytes < 0 || bytes > 0); i++) {
    int64_t rid;
    uint32_t split, len;
    if (fread(&rid, sizeof rid, 1, f) != 1 || fread(&split, sizeof split, 1, f) != 1 ||
        fread(&len, sizeof len, 1, f) != 1)
      return false;
    uint8_t *p = sl_rows_add(out, rid, split, len);
    if (!p || (len && fread(p, len, 1, f) != 1))
      return false;
    int64_t took = (int64_t)(sizeof rid + sizeof split + sizeof len + len);
    *read += (double)took;
    if (bytes >= 0 && (bytes -= took) < 0)
      return false; /* a row across the block's end: the index lies */
  }
  return bytes <= 0;
}

int sl_store_read_spill_blocks(const char *path, int64_t first, int64_t end, int64_t nblocks, sl_rows *out,
                               double *read, char *err, size_t errlen)
{
  errno = 0;
  FILE *f = fopen(path, "rb");
  uint64_t n = 0, file_blocks = 0;
  double got = 0;
  if (!f || fread(&n, sizeof n, 1, f) != 1 || fread(&file_blocks, sizeof file_blocks, 1, f) != 1 ||
      file_blocks == 0)
    goto out_error;
  got = 2 * sizeof n;
  long rows_at = (long)(sizeof n + sizeof file_blocks + (file_blocks > 1 ? (file_blocks + 1) * sizeof n : 0));
  if (file_blocks > 1 && nblocks == (int64_t)file_blocks && first >= 0 && end > first && end <= nblocks) {
    uint64_t span[2];
    if (fseek(f, (long)(2 * sizeof n + (uint64_t)first * sizeof n), SEEK_SET) != 0 ||
        fread(&span[0], sizeof *span, 1, f) != 1 ||
        fseek(f, (long)(2 * sizeof n + (uint64_t)end * sizeof n), SEEK_SET) != 0 ||
        fread(&span[1], sizeof *span, 1, f) != 1 || span[1] < span[0] ||
        fseek(f, rows_at + (long)span[0], SEEK_SET) != 0)
      goto out_error;
    got += 2 * sizeof n;
    if (!read_rows(f, n, (int64_t)(span[1] - span[0]), out, &got))
      goto out_error;
  } else if (fseek(f, rows_at, SEEK_SET) != 0 || !read_rows(f, n, -1, out, &got)) {
    goto out_error;
  }
  fclose(f);
  if (read)
    *read = got;
  return 0;
out_error:
  snprintf(err, errlen, "%s: cannot read spilled partition: %s", path,
           errno ? strerror(errno) : "truncated file");
  if (f)
    fclose(f);
  return SL_EIO;
}

int sl_store_read_spill(const char *path, sl_rows *out, char *err, size_t errlen)
{
  return sl_store_read_spill_blocks(path, 0, 1, 1, out, NULL, err, errlen);
}

sl_blob *sl_store_acquire(sl_store *s, sl_part_id id, const sl_rows **mem, char *path, size_t n)
{
  if (id >= s->cap || !s->e[id].b)
    return NULL;
  sl_blob *b = s->e[id].b;
  b->refs++;
  *mem = b->spilled ? NULL : &b->rows;
  if (b->spilled)
    snprintf(path, n, "%s", b->path);
  return b;
}

void sl_store_release(sl_store *s, sl_blob *b)
{
  blob_unref(s, b);
}

void sl_store_drop_node(sl_store *s, int node)
{
  for (uint32_t i = 0; i < s->cap; i++)
    if (s->e[i].b && s->e[i].node == node)
      sl_store_drop(s, i);
}

double sl_store_node_bytes(const sl_store *s, int node)
{
  return s->node_bytes[node];
}

double sl_store_peak_node_bytes(const sl_store *s)
{
  return s->peak;
}
