#include "cli.h"
#include "models/reorder.h"
#include "results/events.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/error.h"
#include "workloads/profile_spec.h"
#include "workloads/spec.h"
#include "workloads/units.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif

int sl_cli_usage_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "sluice %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  /* one line, so the error stays the first thing a user reads */
  fprintf(stderr, "\nTry 'sluice %s --help' for the options.\n", cmd);
  return SL_EXIT_USAGE;
}

static const char *current_cmd;

void sl_cli_set_command(const char *cmd)
{
  current_cmd = cmd;
}

/* An argument that names nothing: a usage error of the running command. */
static int no_such_spec(const char *what, const char *arg, const char *hint)
{
  if (current_cmd)
    return sl_cli_usage_error(current_cmd, "no %s '%s' (%s)", what, arg, hint);
  fprintf(stderr, "sluice: no %s '%s' (%s)\n", what, arg, hint);
  return SL_EXIT_USAGE;
}

int sl_cli_parse_time(const char *cmd, const char *opt, const char *value, bool positive, double *out)
{
  char why[SL_EXPLAIN_MAX];
  double v;
  if (sl_parse_time(value, &v) < 0)
    return sl_cli_usage_error(cmd, "%s: '%s': %s", opt, value, sl_value_explain(SL_VALUE_TIME, value, why, sizeof why));
  if (v < 0 || (positive && v == 0))
    return sl_cli_usage_error(cmd, "%s: '%s' must be %s", opt, value, positive ? "more than 0" : "0 or more");
  *out = v;
  return 0;
}

int sl_cli_parse_count(const char *cmd, const char *opt, const char *value, int64_t lo, int64_t hi, int64_t *out)
{
  char why[SL_EXPLAIN_MAX];
  int64_t v;
  if (sl_parse_int(value, &v) < 0 && !sl_value_out_of_range(SL_VALUE_INT, value))
    return sl_cli_usage_error(cmd, "%s: '%s': %s", opt, value, sl_value_explain(SL_VALUE_INT, value, why, sizeof why));
  if (sl_value_out_of_range(SL_VALUE_INT, value) || v < lo || v > hi)
    return sl_cli_usage_error(cmd, "%s: '%s' is out of range (from %lld to %lld)", opt, value, (long long)lo,
                              (long long)hi);
  *out = v;
  return 0;
}

bool sl_cli_is_help(const char *s)
{
  return strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0;
}

static bool readable(const char *path)
{
  return access(path, R_OK) == 0;
}

bool sl_cli_find_spec(const char *arg, bool cluster, char *out, size_t n)
{
  if (strchr(arg, '/') || strstr(arg, ".ini") || readable(arg)) {
    snprintf(out, n, "%s", arg);
    return true; /* a path: the loader reports what is wrong with it */
  }
  const char *dirs[] = {".", SL_DATA_DIR};
  for (int i = 0; i < 2; i++) {
    snprintf(out, n, "%s/workloads/%s%s.ini", dirs[i], cluster ? "clusters/" : "", arg);
    if (readable(out))
      return true;
  }
  return false;
}

int sl_cli_load_workload(const char *arg, sl_workload *w)
{
  char path[512], err[512];
  if (!sl_cli_find_spec(arg, false, path, sizeof path))
    return no_such_spec("workload", arg, "neither a file nor a built-in under workloads/");
  sl_spec_warnings warn;
  if (sl_workload_load_warn(path, w, &warn, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return SL_EXIT_USAGE;
  }
  for (int i = 0; i < warn.n; i++)
    fprintf(stderr, "%s\n", warn.text[i]);
  return 0;
}

int sl_cli_load_cluster(const char *arg, const sl_workload *w, sl_cluster *c)
{
  char path[512], err[512], name[SL_NAME_MAX + 8];
  bool found;
  if (arg) {
    found = sl_cli_find_spec(arg, true, path, sizeof path);
  } else {
    /* fig9-small runs on fig9's cluster: try the name, then its stem */
    snprintf(name, sizeof name, "%s", w->name);
    found = sl_cli_find_spec(name, true, path, sizeof path) && !strchr(name, '/');
    char *dash = strrchr(name, '-');
    if (!found && dash) {
      *dash = 0;
      found = sl_cli_find_spec(name, true, path, sizeof path);
    }
  }
  if (!found)
    return no_such_spec("cluster", arg ? arg : w->name,
                        arg ? "neither a file nor a built-in under workloads/clusters/"
                            : "no built-in named like the workload; give one with --cluster");
  if (sl_cluster_load(path, c, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    return SL_EXIT_USAGE;
  }
  if (sl_check_feasible(w, c, err, sizeof err) < 0) {
    fprintf(stderr, "%s\n", err);
    sl_cluster_free(c);
    return SL_EXIT_USAGE;
  }
  return 0;
}

int sl_cli_build_plan(const sl_workload *w, sl_plan *p)
{
  char err[512];
  sl_plan_opts o = {0};
  if (sl_plan_build(p, w, &o, err, sizeof err) < 0) {
    fprintf(stderr, "%s: %s\n", w->path, err);
    return SL_EXIT_USAGE;
  }
  return 0;
}

int sl_cli_apply_profile(const char *cmd, const char *arg, sl_plan *p)
{
  if (!arg)
    return 0;
  char path[1024], err[600];
  sl_profile prof;
  sl_profile_path(arg, SL_DATA_DIR, path, sizeof path);
  int rc = sl_profile_load(path, &prof, err, sizeof err);
  if (rc == SL_EIO)
    return sl_cli_usage_error(cmd, "--profile: cannot read %s (a name is one of profiles/*.ini: ideal, raydata, "
                                   "spark, flink, sluice)", path);
  if (rc < 0)
    return sl_cli_usage_error(cmd, "--profile: %s", err);
  sl_profile_apply(p, &prof);
  return 0;
}

int sl_cli_auto_order(const char *cmd, sl_workload *w, const sl_cluster *c, bool quiet)
{
  if (!sl_reorder_has_groups(w)) {
    if (!quiet)
      fprintf(stderr, "sluice %s: --auto-order: %s has no reorder_group: it runs as written\n", cmd, w->path);
    return 0;
  }
  sl_reorder_result r;
  char err[512];
  if (sl_reorder_choose(w, c, &r, err, sizeof err) < 0) {
    fprintf(stderr, "sluice %s: --auto-order: %s\n", cmd, err);
    return SL_EXIT_USAGE;
  }
  sl_workload *chosen = malloc(sizeof *chosen);
  if (!chosen) {
    sl_reorder_result_free(&r);
    fprintf(stderr, "sluice %s: --auto-order: out of memory\n", cmd);
    return SL_EXIT_FAILED;
  }
  char order[1024];
  sl_reorder_format(w, r.orders[0].order, order, sizeof order);
  if (!quiet)
    fprintf(stderr, "sluice %s: --auto-order: %s (bound %.3f s; %.3f s as written; %d orders, `sluice plan "
            "--auto-order` ranks them)\n", cmd, order, r.orders[0].jct_s, r.orders[r.written_at].jct_s, r.n);
  sl_workload_reorder(w, r.orders[0].order, chosen);
  *w = *chosen;
  free(chosen);
  sl_reorder_result_free(&r);
  return 0;
}

int sl_cli_replay(const char *cmd, const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts,
                  const char *path)
{
  char err[600];
  sl_core *core = sl_core_new(plan, cluster, opts, err, sizeof err);
  if (!core) {
    fprintf(stderr, "sluice %s: %s\n", cmd, err);
    return SL_EXIT_USAGE;
  }
  uint64_t recorded = 0, replayed = 0;
  int64_t n = 0;
  int rc = sl_event_log_replay(path, core, &recorded, &replayed, &n, err, sizeof err);
  sl_core_free(core);
  if (rc < 0) {
    fprintf(stderr, "sluice %s: %s\n", cmd, err);
    return SL_EXIT_USAGE;
  }
  bool same = recorded == replayed;
  printf("replayed %lld events of %s through the core alone: decisions %016llx, recorded %016llx: %s\n",
         (long long)n, path, (unsigned long long)replayed, (unsigned long long)recorded,
         same ? "the same" : "DIFFERENT");
  return same ? SL_EXIT_OK : SL_EXIT_FAILED;
}

void sl_cli_print_list(FILE *f, const char *label, const char *items)
{
  int pad = (int)strlen(label);
  bool first = true;
  for (const char *p = items; p && *p;) {
    size_t len = strcspn(p, ";");
    fprintf(f, "%-*s%.*s\n", pad, first ? label : "", (int)len, p);
    first = false;
    p += len;
    p += strspn(p, "; ");
  }
}

const char *sl_cli_plural(int64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}
