/**
 * @file atomic_file.h
 * @brief Files that appear whole or not at all.
 *
 * Every file sluice writes for a user (CSVs, recorded events, baselines,
 * cost models, zoo cases, plots) is written under a hidden temporary name
 * beside its final one, ".NAME.tmp" in the same folder, and renamed over
 * the final name once it is complete and on disk. A run interrupted half
 * way, or a write that fails, never leaves a half file that looks whole:
 * the final name holds the old file, or none.
 *
 * Use: sl_atomic_open(), write to the stream it returns, then
 * sl_atomic_commit() in every case (it closes the stream and removes the
 * temporary when anything failed). A file written by another program (a
 * plot by gnuplot) goes through sl_atomic_tmp_path() and
 * sl_atomic_publish().
 */
#ifndef SL_ATOMIC_FILE_H
#define SL_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "models/error.h"

/** @brief One file being written; caller-allocated, no resource of its own after commit. */
typedef struct {
  FILE *f;         /**< the stream to write: the temporary */
  char tmp[1200];  /**< the temporary's path */
  char path[1200]; /**< the final path */
} sl_atomic_file;

/** @brief Writes the temporary path of @p path (".NAME.tmp" in its folder) into @p tmp. */
void sl_atomic_tmp_path(const char *path, char *tmp, size_t n);

/**
 * @brief Creates the temporary of @p path and returns the stream to write
 *        (also in a->f). NULL when it cannot be created: @p err says why
 *        ("PATH: cannot write: REASON") and nothing was created.
 */
FILE *sl_atomic_open(sl_atomic_file *a, const char *path, char *err, size_t errlen);

/**
 * @brief Ends the write: flushes, syncs and closes the stream, then renames
 *        the temporary to the final path. @p ok false says the caller's own
 *        writing failed: the temporary is removed and the final path left
 *        as it was, and @p err as the caller left it. Returns 0, or SL_EIO
 *        (with @p err saying why when the failure was the file's). Call it
 *        once for every successful open.
 */
SL_MUST_CHECK int sl_atomic_commit(sl_atomic_file *a, bool ok, char *err, size_t errlen);

/**
 * @brief Renames @p tmp, complete, over @p path; on failure removes @p tmp
 *        and returns SL_EIO with @p err saying why.
 */
SL_MUST_CHECK int sl_atomic_publish(const char *tmp, const char *path, char *err, size_t errlen);

#endif
