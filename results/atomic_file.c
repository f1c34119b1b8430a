/*
 * Files that appear whole or not at all (atomic_file.h): one writer for
 * every output, so that the temporary names, the sync before the rename
 * and the clean-up on failure are the same everywhere. The temporary lives
 * in the final file's folder, as a rename only replaces a file atomically
 * within one file system.
 */
#include "atomic_file.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void sl_atomic_tmp_path(const char *path, char *tmp, size_t n)
{
  const char *slash = strrchr(path, '/');
  if (slash)
    snprintf(tmp, n, "%.*s/.%s.tmp", (int)(slash - path), path, slash + 1);
  else
    snprintf(tmp, n, ".%s.tmp", path);
}

FILE *sl_atomic_open(sl_atomic_file *a, const char *path, char *err, size_t errlen)
{
  snprintf(a->path, sizeof a->path, "%s", path);
  sl_atomic_tmp_path(path, a->tmp, sizeof a->tmp);
  a->f = fopen(a->tmp, "w");
  if (!a->f)
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
  return a->f;
}

int sl_atomic_publish(const char *tmp, const char *path, char *err, size_t errlen)
{
  if (rename(tmp, path) == 0)
    return 0;
  snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
  unlink(tmp);
  return SL_EIO;
}

int sl_atomic_commit(sl_atomic_file *a, bool ok, char *err, size_t errlen)
{
  int why = 0;
  if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0)
    why = errno ? errno : EIO;
  if (fclose(a->f) != 0 && !why)
    why = errno ? errno : EIO;
  a->f = NULL;
  if (!ok || why) {
    if (why) /* else the caller has said what went wrong */
      snprintf(err, errlen, "%s: cannot write: %s", a->path, strerror(why));
    unlink(a->tmp);
    return SL_EIO;
  }
  return sl_atomic_publish(a->tmp, a->path, err, errlen);
}
