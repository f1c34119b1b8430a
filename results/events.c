#include "events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/error.h"
#include "results/atomic_file.h"

struct sl_event_log_s {
  sl_event *ev;
  int64_t n, cap;
  bool out_of_memory;
};

sl_event_log *sl_event_log_new(void)
{
  return calloc(1, sizeof(sl_event_log));
}

void sl_event_log_free(sl_event_log *log)
{
  if (!log)
    return;
  free(log->ev);
  free(log);
}

void sl_event_log_observe(void *ctx, const sl_event *ev)
{
  sl_event_log *log = ctx;
  if (log->out_of_memory)
    return;
  if (log->n == log->cap) {
    int64_t ncap = log->cap ? 2 * log->cap : 1024;
    sl_event *n = realloc(log->ev, sizeof *n * (size_t)ncap);
    if (!n) {
      log->out_of_memory = true;
      return;
    }
    log->ev = n;
    log->cap = ncap;
  }
  log->ev[log->n++] = *ev;
}

int64_t sl_event_log_count(const sl_event_log *log)
{
  return log->n;
}

int sl_event_log_write(const sl_event_log *log, const char *path, uint64_t decision_hash, char *err, size_t errlen)
{
  if (log->out_of_memory) {
    snprintf(err, errlen, "%s: out of memory while recording events: not written", path);
    return SL_ENOMEM;
  }
  sl_atomic_file a;
  FILE *f = sl_atomic_open(&a, path, err, errlen);
  if (!f)
    return SL_EIO;
  fprintf(f, "# sluice events v1: kind now task rows bytes node\n");
  for (int64_t i = 0; i < log->n; i++) {
    const sl_event *e = &log->ev[i];
    fprintf(f, "%s %a %" PRIu32 " %" PRId64 " %a %d\n", sl_event_kind_name(e->kind), e->now, e->task, e->rows,
            e->bytes, e->node);
  }
  fprintf(f, "decisions %016" PRIx64 "\n", decision_hash);
  return sl_atomic_commit(&a, true, err, errlen);
}

static int parse_fail(char *err, size_t errlen, const char *path, int line, const char *what)
{
  snprintf(err, errlen, "%s:%d: %s", path, line, what);
  return SL_EPARSE;
}

static bool kind_of(const char *name, sl_event_kind *out)
{
  for (int k = 0; k < SL_EV_NKINDS; k++)
    if (strcmp(name, sl_event_kind_name((sl_event_kind)k)) == 0) {
      *out = (sl_event_kind)k;
      return true;
    }
  return false;
}

int sl_event_log_replay(const char *path, sl_core *core, uint64_t *recorded, uint64_t *replayed, int64_t *nevents,
                        char *err, size_t errlen)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    return SL_EIO;
  }
  char buf[512];
  int line = 0, rc = 0;
  bool ended = false;
  *nevents = 0;
  while (rc == 0 && fgets(buf, sizeof buf, f)) {
    line++;
    if (buf[0] == '#' || buf[0] == '\n')
      continue;
    if (ended) {
      rc = parse_fail(err, errlen, path, line, "a line after 'decisions'");
      break;
    }
    char name[16];
    if (sscanf(buf, "decisions %" SCNx64, recorded) == 1) {
      ended = true;
      continue;
    }
    sl_event e = {0};
    uint32_t task;
    int got = sscanf(buf, "%15s %la %" SCNu32 " %" SCNd64 " %la %d", name, &e.now, &task, &e.rows, &e.bytes,
                     &e.node);
    e.task = task;
    if (got != 6 || !kind_of(name, &e.kind)) {
      rc = parse_fail(err, errlen, path, line, "expected 'KIND NOW TASK ROWS BYTES NODE' or 'decisions HASH'");
      break;
    }
    sl_core_apply(core, &e); /* the engine's call returned what this does */
    (*nevents)++;
  }
  if (rc == 0 && ferror(f)) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    rc = SL_EIO;
  } else if (rc == 0 && !ended) {
    rc = parse_fail(err, errlen, path, line, "no 'decisions HASH' line: the file is cut short");
  }
  fclose(f);
  *replayed = sl_core_decision_hash(core);
  return rc;
}
