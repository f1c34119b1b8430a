/* Drawing with gnuplot into a temporary, renamed when whole (gnuplot.h). */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/atomic_file.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif

extern char **environ;

void sl_gnuplot_string(char *e, size_t n, const char *name, const char *value)
{
  size_t len = strlen(e);
  len += snprintf(e + len, len < n ? n - len : 0, "%s='", name);
  for (const char *p = value; *p && len + 3 < n; p++) {
    e[len++] = *p;
    if (*p == '\'')
      e[len++] = '\'';
  }
  snprintf(e + len, len < n ? n - len : 0, "'; ");
}

bool sl_gnuplot_find_script(const char *name, char *out, size_t n)
{
  const char *dirs[] = {SL_DATA_DIR, "."};
  for (int i = 0; i < 2; i++) {
    snprintf(out, n, "%s/plots/%s", dirs[i], name);
    if (access(out, R_OK) == 0)
      return true;
  }
  return false;
}

/* Runs gnuplot -e EXPR SCRIPT, its messages into @p log; its exit status,
 * 127 when it cannot start. */
static int run_gnuplot(const char *expr, const char *script, const char *log)
{
  char *argv[] = {"gnuplot", "-e", (char *)expr, (char *)script, NULL};
  posix_spawn_file_actions_t fa;
  pid_t pid;
  if (posix_spawn_file_actions_init(&fa) != 0)
    return 127;
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return 127;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The last line of gnuplot's messages that says something, for a failure. */
static void last_message(const char *log, char *buf, size_t n)
{
  char line[512];
  buf[0] = '\0';
  FILE *f = fopen(log, "r");
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (line[strspn(line, " ^")])
      snprintf(buf, n, "%s", line);
  }
  if (f)
    fclose(f);
}

static bool non_empty(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && st.st_size > 0;
}

int sl_gnuplot_draw(const char *cmd, const char *expr, const char *term, const char *script,
                    const char *final)
{
  static char e[65536]; /* events and node lists: tens of KB at most */
  char tmp[1200], log[1300], msg[512];
  sl_atomic_tmp_path(final, tmp, sizeof tmp);
  snprintf(log, sizeof log, "%s.log", tmp);
  snprintf(e, sizeof e, "%s", expr);
  sl_gnuplot_string(e, sizeof e, "term", term);
  sl_gnuplot_string(e, sizeof e, "out", tmp);
  /* gnuplot's own warnings are no business of a user's when the figure is
   * drawn; when it is not, its last word goes with ours */
  int rc = run_gnuplot(e, script, log);
  last_message(log, msg, sizeof msg);
  unlink(log);
  if (rc == 127) {
    unlink(tmp);
    fprintf(stderr, "sluice %s: cannot run gnuplot (install gnuplot-nox)\n", cmd);
    return 1;
  }
  if (rc != 0 || !non_empty(tmp)) {
    unlink(tmp);
    fprintf(stderr, "sluice %s: gnuplot failed (exit %d) drawing %s%s%s\n", cmd, rc, final, msg[0] ? ": " : "", msg);
    return 1;
  }
  char err[1400];
  if (sl_atomic_publish(tmp, final, err, sizeof err) < 0) {
    fprintf(stderr, "sluice %s: %s\n", cmd, err);
    return 1;
  }
  return 0;
}
