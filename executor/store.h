/**
 * @file store.h
 * @brief The executor's partition store: real buffers, one entry per
 *        partition id the core hands out, in memory or spilled to a local
 *        directory with real file I/O.
 *
 * Not thread-safe: the engine calls it under its lock. Buffers are
 * immutable once stored, so a task may read an acquired partition without
 * the lock; an entry dropped while read is freed by the last release.
 */
#ifndef SL_EXEC_STORE_H
#define SL_EXEC_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "models/error.h"

#include "models/core.h"
#include "workloads/kernels.h"

typedef struct sl_store_s sl_store;

/** @brief A store for @p nnodes nodes spilling into @p spill_dir (created on
 *  first spill, removed by sl_store_free()). Partition files a killed run
 *  left there are removed first. NULL on no memory. */
sl_store *sl_store_new(int nnodes, const char *spill_dir);
void sl_store_free(sl_store *s);

/** @brief Keeps @p rows (moved in, @p rows left empty) as partition @p id on @p node. */
SL_MUST_CHECK int sl_store_put(sl_store *s, sl_part_id id, int node, sl_rows *rows);

/** @brief A pinned partition: its bytes stay until released, even when the
 *  store forgets the partition meanwhile. */
typedef struct sl_blob_s sl_blob;

/** @brief Writes @p rows to disk as partition @p id; @p rows is reset.
 *  SL_EIO (message in @p err) when the disk refuses; the partition is then
 *  not kept. */
int sl_store_spill(sl_store *s, sl_part_id id, int node, sl_rows *rows, char *err, size_t errlen);

/**
 * @brief How a spilled partition's file groups its rows: row i goes to
 *        block block_of[i] (0 <= it < nblocks). An all-to-all's input is
 *        written by its reducers' shares, so that a reducer reads its block
 *        off the disk and not the whole file, as a shuffle's map writes one
 *        block per reducer.
 */
typedef struct {
  int64_t nblocks;
  const int64_t *block_of;
} sl_spill_blocks;

/*
 * The same in three steps, so that the engine writes the file without its
 * lock and two slots' spills share the disk: begin (with the lock) makes
 * @p id a spilled partition of @p bytes on @p node whose file is not yet
 * written and pins it for the writer (*out); write (without the lock: it
 * touches that blob alone) fills the file and resets @p rows; end (with
 * the lock) marks it complete and drops the writer's pin. @p blocks
 * (NULL: one) groups the rows in the file. A reader that pins it in
 * between waits for sl_store_blob_ready().
 */
SL_MUST_CHECK int sl_store_spill_begin(sl_store *s, sl_part_id id, int node, double bytes, sl_blob **out,
                                       char *err, size_t errlen);
SL_MUST_CHECK int sl_store_spill_write(sl_blob *b, sl_rows *rows, const sl_spill_blocks *blocks, char *err,
                                       size_t errlen);
void sl_store_spill_end(sl_store *s, sl_blob *b);
/** @brief False while a pinned spilled partition's file is still being written. */
bool sl_store_blob_ready(const sl_blob *b);


/** @brief Pins partition @p id for reading. In memory: *mem points at its
 *  rows. Spilled: *mem is NULL and @p path gets the file to read. NULL when
 *  the store has no such partition. */
sl_blob *sl_store_acquire(sl_store *s, sl_part_id id, const sl_rows **mem, char *path, size_t n);
void sl_store_release(sl_store *s, sl_blob *b);

/** @brief Forgets partition @p id (its bytes leave the node's count now; its
 *  buffers go on the garbage list once no reader holds it). */
void sl_store_drop(sl_store *s, sl_part_id id);

/**
 * @brief The blobs no one references any more, taken off the store (under
 *        the lock that guards it), ahead of list @p onto (NULL: none): the
 *        list joined. Free them with sl_store_free_garbage(),
 *        which needs no lock: freeing a partition's buffers (megabytes,
 *        page tables, the allocator's own locks) took 1-10 ms under the
 *        executor's lock on a 16-core host whose workers all allocated.
 */
sl_blob *sl_store_take_garbage(sl_store *s, sl_blob *onto);

/** @brief Bytes in memory of the blobs on the garbage list now. */
double sl_store_garbage_bytes(const sl_store *s);

/** @brief Frees a list from sl_store_take_garbage(): buffers, spill files, blobs. */
void sl_store_free_garbage(sl_blob *list);

/** @brief The blob after @p b on a garbage list (NULL at its end). */
sl_blob *sl_store_garbage_next(const sl_blob *b);


/** @brief Forgets every partition on @p node: the node is lost. */
void sl_store_drop_node(sl_store *s, int node);

/** @brief Bytes held in memory on @p node, counted from the buffers. */
double sl_store_node_bytes(const sl_store *s, int node);
double sl_store_peak_node_bytes(const sl_store *s);

/** @brief Reads a spilled partition file into @p out (every block). 0 or SL_EIO. */
int sl_store_read_spill(const char *path, sl_rows *out, char *err, size_t errlen);

/** @brief Reads blocks [@p first, @p end) of @p nblocks of a spilled
 *  partition file into @p out: only their rows come off the disk when the
 *  file was written in those blocks; a file written otherwise is read
 *  whole. The bytes read, index included, go to @p *read when it is not
 *  NULL. 0 or SL_EIO. */
int sl_store_read_spill_blocks(const char *path, int64_t first, int64_t end, int64_t nblocks, sl_rows *out,
                               double *read, char *err, size_t errlen);

#endif
