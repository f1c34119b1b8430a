/*
 * Scratch files and the error-message check the harnesses share.
 */
#include "fuzz_io.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Files written so far, so the exit handler removes them and the folder. */
#define SL__FUZZ_MAX_FILES 8

static char sl__fuzz_dir[SL_FUZZ_PATH_MAX];
static char sl__fuzz_files[SL__FUZZ_MAX_FILES][SL_FUZZ_PATH_MAX];
static int sl__fuzz_nfiles;

_Noreturn void sl_fuzz_fail(const char *what, const char *err)
{
  fprintf(stderr, "fuzz: %s\n  message: %s\n", what, err ? err : "(none)");
  abort();
}

static void sl__fuzz_cleanup(void)
{
  for (int i = 0; i < sl__fuzz_nfiles; i++)
    unlink(sl__fuzz_files[i]);
  rmdir(sl__fuzz_dir);
}

/* The scratch folder, made on first use. */
static const char *sl__fuzz_scratch(void)
{
  if (sl__fuzz_dir[0])
    return sl__fuzz_dir;
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
  snprintf(sl__fuzz_dir, sizeof sl__fuzz_dir, "%s/sl_fuzz_XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(sl__fuzz_dir))
    sl_fuzz_fail("cannot make a scratch folder", sl__fuzz_dir);
  atexit(sl__fuzz_cleanup);
  return sl__fuzz_dir;
}

void sl_fuzz_path(const char *name, char *out, char *dir)
{
  const char *scratch = sl__fuzz_scratch();
  int n = snprintf(out, SL_FUZZ_PATH_MAX, "%s/%s", scratch, name);
  if (n < 0 || n >= SL_FUZZ_PATH_MAX)
    sl_fuzz_fail("scratch path too long", name);
  if (dir)
    snprintf(dir, SL_FUZZ_PATH_MAX, "%s", scratch);
  for (int i = 0; i < sl__fuzz_nfiles; i++)
    if (strcmp(sl__fuzz_files[i], out) == 0)
      return;
  if (sl__fuzz_nfiles == SL__FUZZ_MAX_FILES)
    sl_fuzz_fail("too many scratch files", name);
  memcpy(sl__fuzz_files[sl__fuzz_nfiles++], out, SL_FUZZ_PATH_MAX);
}

void sl_fuzz_write(const char *path, const uint8_t *data, size_t size)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    sl_fuzz_fail("cannot write a scratch file", path);
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n <= 0)
      sl_fuzz_fail("short write to a scratch file", path);
    data += n;
    size -= (size_t)n;
  }
  close(fd);
}

void sl_fuzz_check_located(const char *err, const char *path, const uint8_t *data, size_t size)
{
  static int verbose = -1; /* SL_FUZZ_VERBOSE=1 shows what a replayed corpus makes the parsers say */
  if (verbose < 0)
    verbose = getenv("SL_FUZZ_VERBOSE") != NULL;
  if (verbose)
    fprintf(stderr, "%s\n", err);
  size_t plen = strlen(path);
  if (strncmp(err, path, plen) != 0 || err[plen] != ':')
    sl_fuzz_fail("the message does not start with the file's path and ':'", err);
  const char *p = err + plen + 1;
  long line = 0;
  bool digits = false;
  for (; *p >= '0' && *p <= '9' && line < 100000000; p++, digits = true)
    line = line * 10 + (*p - '0');
  if (!digits || p[0] != ':' || p[1] != ' ' || p[2] == '\0')
    sl_fuzz_fail("the message is not 'FILE:LINE: what is wrong'", err);
  long lines = 1;
  for (size_t i = 0; i < size; i++)
    lines += data[i] == '\n';
  if (line < 1 || line > lines)
    sl_fuzz_fail("the message names a line the input does not have", err);
}
