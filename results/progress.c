/* Progress lines of long commands (progress.h). */
#include "progress.h"

#include <stdio.h>

double sl_progress_left(double elapsed_s, int done, int total)
{
  if (done <= 0 || total <= 0 || !(elapsed_s >= 0))
    return -1;
  if (done >= total)
    return 0;
  return elapsed_s / done * (total - done);
}

/* Seconds up to two minutes, minutes past them: a reader wants the order. */
static void format_duration(double s, char *buf, size_t n)
{
  if (s < 120)
    snprintf(buf, n, "%.0f s", s);
  else
    snprintf(buf, n, "%.0f min", s / 60);
}

void sl_progress_format(char *buf, size_t n, const char *cmd, int done, int total, const char *what,
                        double elapsed_s)
{
  char el[32], left[48] = "";
  double l = sl_progress_left(elapsed_s, done, total);
  format_duration(elapsed_s, el, sizeof el);
  if (l >= 0) {
    char d[32];
    format_duration(l, d, sizeof d);
    snprintf(left, sizeof left, ", about %s left", d);
  }
  snprintf(buf, n, "%s: step %d of %d: %s; %s elapsed%s", cmd, done + 1, total, what, el, left);
}
