/**
 * @file fuzz_io.h
 * @brief What the fuzz harnesses share.
 *
 * The parsers under test read files by path, as the CLI gives them, so a
 * harness writes each input into a private scratch folder and passes that
 * path: the bytes reach the parser through the same fopen() a user's spec
 * does. The folder (in /dev/shm where there is one, so a million inputs
 * cost no disk writes) is made on first use and removed at exit.
 *
 * Every function here aborts on a failure of its own (a full disk, say):
 * an abort is what libFuzzer and the replay both report, and a harness that
 * silently skips its input would fuzz nothing.
 */
#ifndef SL_FUZZ_IO_H
#define SL_FUZZ_IO_H

#include <stddef.h>
#include <stdint.h>

/** @brief Longest path sl_fuzz_path() writes, NUL included. */
#define SL_FUZZ_PATH_MAX 256

/**
 * @brief Writes into @p out (SL_FUZZ_PATH_MAX bytes) the path of file
 *        @p name in the scratch folder, and the folder name alone
 *        into @p dir when it is not NULL (also SL_FUZZ_PATH_MAX bytes).
 */
void sl_fuzz_path(const char *name, char *out, char *dir);

/** @brief Replaces the file at @p path (from sl_fuzz_path) with @p size bytes of @p data. */
void sl_fuzz_write(const char *path, const uint8_t *data, size_t size);

/**
 * @brief Checks the promise every parser makes about bad input: the message
 *        reads `PATH:LINE: what is wrong`, where LINE is a line of the input
 *        (1 to its number of lines). Prints the message and aborts if not;
 *        prints it anyway when the environment has SL_FUZZ_VERBOSE.
 */
void sl_fuzz_check_located(const char *err, const char *path, const uint8_t *data, size_t size);

/** @brief Prints "fuzz: @p what" with the parser's message @p err, and aborts. */
_Noreturn void sl_fuzz_fail(const char *what, const char *err);

#endif
