/*
 * The options `sluice run` and `sluice sim` share (engine_opts.h): one
 * parser, so that the two commands cannot drift apart in what they accept
 * or how they refuse it.
 */
#include "engine_opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "workloads/units.h"

void sl_cli_engine_opts_default(sl_cli_engine_opts *o)
{
  memset(o, 0, sizeof *o);
  sl_core_opts_default(&o->core);
}

/* An option naming a file or folder takes a name. */
static int name_arg(const char *cmd, const char *opt, const char *arg, const char **out)
{
  if (!arg[0])
    return sl_cli_usage_error(cmd, "%s: empty name", opt);
  *out = arg;
  return 0;
}

int sl_cli_engine_option(const char *cmd, int ch, const char *arg, sl_cli_engine_opts *o)
{
  double v;
  int64_t n;
  switch (ch) {
  case SL_CLI_O_MODEL:
    if (sl_core_opts_set_model(&o->core, arg) < 0)
      return sl_cli_usage_error(cmd, "--model: unknown model '%s' (expected streaming, streaming-plus, "
                                "streaming-noadapt, streaming-nopart, static, batch or stream)", arg);
    return 0;
  case SL_CLI_O_MEMORY:
    if (sl_parse_size(arg, &o->memory) < 0 || o->memory <= 0)
      return sl_cli_usage_error(cmd, "--memory: '%s' is not a size (e.g. 8GB)", arg);
    return 0;
  case SL_CLI_O_ON_FULL:
    if (strcmp(arg, "spill") != 0 && strcmp(arg, "oom") != 0)
      return sl_cli_usage_error(cmd, "--on-full: '%s' (expected spill or oom)", arg);
    o->core.on_full = strcmp(arg, "oom") == 0 ? SL_FULL_OOM : SL_FULL_SPILL;
    return 0;
  case SL_CLI_O_RATIO:
    if (sl_parse_number(arg, &v) < 0 || v < 0 || v > 1)
      return sl_cli_usage_error(cmd, "--reservation-ratio: '%s' (expected a number from 0 to 1)", arg);
    o->core.reservation_ratio = v;
    return 0;
  case SL_CLI_O_FAIL:
    if (!arg[0])
      return sl_cli_usage_error(cmd, "--fail: empty schedule (e.g. kill:transform@15s,lose:0@1min)");
    o->fail = arg;
    return 0;
  case SL_CLI_O_OUT:
    return name_arg(cmd, "--out", arg, &o->out);
  case SL_CLI_O_CK_INTERVAL:
    return sl_cli_parse_time(cmd, "--checkpoint-interval", arg, true, &o->core.checkpoint_interval_s);
  case SL_CLI_O_CK_COST:
    return sl_cli_parse_time(cmd, "--checkpoint-cost", arg, false, &o->core.checkpoint_cost_s);
  case SL_CLI_O_RESTART:
    return sl_cli_parse_time(cmd, "--restart-cost", arg, false, &o->core.restart_cost_s);
  case SL_CLI_O_SEED:
    if (sl_cli_parse_count(cmd, "--seed", arg, 0, INT64_MAX, &n))
      return SL_EXIT_USAGE;
    o->seed = (uint64_t)n;
    o->have_seed = true;
    return 0;
  case SL_CLI_O_STALL: /* 0 would mean never, as not giving it does: say so rather than ignore it */
    return sl_cli_parse_time(cmd, "--stall-timeout", arg, true, &o->stall_timeout_s);
  case SL_CLI_O_RECORD:
    return name_arg(cmd, "--record-events", arg, &o->record);
  case SL_CLI_O_REPLAY:
    return name_arg(cmd, "--replay-events", arg, &o->replay);
  case SL_CLI_O_QUIET:
    o->quiet = true;
    return 0;
  case SL_CLI_O_AUTO_ORDER:
    o->auto_order = true;
    return 0;
  case SL_CLI_O_PROFILE:
    return name_arg(cmd, "--profile", arg, &o->profile);
  case SL_CLI_O_AUTOPLACE:
    if (sl_core_opts_set_autoplace(&o->core, arg) < 0)
      return sl_cli_usage_error(cmd, "--autoplace: unknown policy '%s' (expected bound, collocated, remote or pecan)",
                                arg);
    return 0;
  case SL_CLI_O_AUTOPLACE_INTERVAL:
    return sl_cli_parse_time(cmd, "--autoplace-interval", arg, true, &o->core.autoplace_interval_s);
  default:
    return 1;
  }
}

int sl_cli_engine_opts_check(const char *cmd, const sl_cli_engine_opts *o)
{
  if (o->record && o->replay)
    return sl_cli_usage_error(cmd, "--record-events and --replay-events exclude each other");
  return 0;
}

int sl_cli_make_parents(const char *cmd, const char *dir)
{
  char path[512];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    struct stat st;
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
      return sl_cli_usage_error(cmd, "--out: %s: cannot create the folder: %s", path, strerror(errno));
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
      return sl_cli_usage_error(cmd, "--out: %s: not a folder", path);
    *p = '/';
  }
  return 0;
}
