/*
 * A piece of work in a child process (child.h): fork, let the child write
 * its result into a pipe and _exit() without any teardown, read the result
 * whole in the parent, and tell a crash from a result by its length.
 */
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_all(int fd, const void *buf, size_t n)
{
  const char *p = buf;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    p += k;
    n -= (size_t)k;
  }
}

static size_t read_all(int fd, void *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t k = read(fd, (char *)buf + got, n - got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  return got;
}

static void in_child(sl_sim_child_fn fn, void *ctx, size_t size, int fd)
{
  void *r = calloc(1, size);
  if (!r)
    _exit(3);
  fn(ctx, r);
  write_all(fd, r, size);
  free(r);
  _exit(0); /* skip the teardown of what the work built (SimGrid's actors) */
}

int sl_sim_child_run(sl_sim_child_fn fn, void *ctx, void *result, size_t size, char *err, size_t errlen)
{
  memset(result, 0, size);
  int fds[2];
  if (pipe(fds) < 0) {
    snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
    return SL_EIO;
  }
  fflush(NULL); /* or the child would write the parent's buffered output again */
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    snprintf(err, errlen, "cannot fork: %s", strerror(errno));
    return SL_EIO;
  }
  if (pid == 0) {
    close(fds[0]);
    in_child(fn, ctx, size, fds[1]);
  }
  close(fds[1]);
  size_t got = read_all(fds[0], result, size);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got == size)
    return 0;
  memset(result, 0, size);
  if (WIFSIGNALED(status))
    snprintf(err, errlen, "the simulation died (signal %d)", WTERMSIG(status));
  else
    snprintf(err, errlen, "the simulation ended without a result (exit %d)", WEXITSTATUS(status));
  return SL_EIO;
}
