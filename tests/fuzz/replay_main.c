/*
 * The main() of a fuzz harness in the normal build, where there is no
 * libFuzzer: feeds every file of the folders (or the files) named on the
 * command line to LLVMFuzzerTestOneInput, once, in name order so that runs
 * replay the same way. A crash or abort fails the CTest test; so does a
 * folder with no input, which would mean a test that checks nothing.
 *
 *     fuzz_workload tests/fuzz/corpus/workload [MORE...]
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole file at @p path and runs it; 0, or -1 if it cannot be read. */
static int replay_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;
  int rc = 0;
  do {
    if (len == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *nbuf = realloc(buf, cap);
      if (!nbuf) {
        fprintf(stderr, "%s: out of memory\n", path);
        rc = -1;
        goto free_buf;
      }
      buf = nbuf;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
  } while (n > 0);
  if (ferror(f)) {
    perror(path);
    rc = -1;
    goto free_buf;
  }
  /* As libFuzzer does, hand over a buffer of exactly the input's size, so
   * that a sanitized build sees a harness that reads past it. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    rc = -1;
    goto free_buf;
  }
  memcpy(exact, buf, len);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
free_buf:
  free(buf);
  fclose(f);
  return rc;
}

static int by_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of folder @p dir; returns how many, or -1. */
static int replay_dir(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return -1;
  }
  char **names = NULL;
  int n = 0, cap = 0, rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nn = realloc(names, (size_t)cap * sizeof *nn);
      if (!nn) {
        rc = -1;
        goto free_names;
      }
      names = nn;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if (!(names[n] = malloc(len))) {
      rc = -1;
      goto free_names;
    }
    snprintf(names[n++], len, "%s/%s", dir, e->d_name);
  }
  qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n && rc >= 0; i++) {
    struct stat st;
    if (stat(names[i], &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (replay_file(names[i]) != 0)
      rc = -1;
    else
      rc++;
  }
free_names:
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
  closedir(d);
  return rc;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
    return 2;
  }
  int total = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    int n = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
            : replay_file(argv[i]) == 0                     ? 1
                                                            : -1;
    if (n < 0)
      return 1;
    if (n == 0) {
      fprintf(stderr, "%s: no input to replay\n", argv[i]);
      return 1;
    }
    total += n;
  }
  printf("%s: replayed %d inputs\n", argv[0], total);
  return 0;
}
