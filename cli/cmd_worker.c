/* `sluice worker`: one node of a run on several machines (executor/remote.h). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "cli.h"
#include "cli/run_setup.h"
#include "executor/remote.h"
#include "models/error.h"

static const char *USAGE = "sluice worker --head tcp://HOST:PORT [--name NODE] [--listen HOST] [--join-timeout TIME]";

static const char *HELP =
  "Works as one node of a run that `sluice run --launch ...` heads: joins the\n"
  "head, builds the run's plan from the command line the head sends, runs the\n"
  "tasks the head launches on this node's slots, keeps their outputs in its\n"
  "store (spilling past its budget) and serves them to the other workers.\n"
  "Exits when the head ends the run, or when the head has been silent past\n"
  "its node timeout.\n\n"
  "  --head ENDPOINT       the head's control endpoint (the head prints it)\n"
  "  --name NODE           the node to be, as the cluster spec names it (GROUP.INDEX\n"
  "                        or the node's name); default: any node not yet taken\n"
  "  --listen HOST         the address other workers fetch partitions at (default:\n"
  "                        127.0.0.1 for a head on loopback, else this host's name)\n"
  "  --join-timeout TIME   how long to wait for the head (default 10s)\n\n"
  "Exit codes: 0 the run ended, 1 it failed here or the head was lost, 2 bad usage.\n";

/* The plan the head's command line gives, built as `sluice run` builds it. */
static int build_run(void *ctx, const char *cwd, int argc, char **argv, sl_remote_run *out, char *err, size_t errlen)
{
  (void)cwd;
  sl_cli_run *r = ctx;
  int rc = sl_cli_run_prepare(argc, argv, r);
  if (rc) {
    snprintf(err, errlen, "the head's command line does not build here (its message is above)");
    return SL_EINVAL;
  }
  *out = (sl_remote_run){.plan = &r->plan, .cluster = &r->cluster, .opts = &r->eo};
  return 0;
}

int sl_cmd_worker(int argc, char **argv)
{
  enum { O_HEAD = 1, O_NAME, O_LISTEN, O_JOIN, O_HELP = 'h' };
  static const struct option opts[] = {{"head", required_argument, NULL, O_HEAD},
                                       {"name", required_argument, NULL, O_NAME},
                                       {"listen", required_argument, NULL, O_LISTEN},
                                       {"join-timeout", required_argument, NULL, O_JOIN},
                                       {"help", no_argument, NULL, O_HELP},
                                       {0}};
  sl_remote_opts o;
  sl_remote_opts_default(&o);
  sl_cli_set_command("worker");
  optind = 1;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case O_HEAD:
      o.head = optarg;
      break;
    case O_NAME:
      o.name = optarg;
      break;
    case O_LISTEN:
      o.listen = optarg;
      break;
    case O_JOIN:
      if (sl_cli_parse_time("worker", "--join-timeout", optarg, true, &o.join_timeout_s))
        return SL_EXIT_USAGE;
      break;
    case O_HELP:
      printf("usage: %s\n\n%s", USAGE, HELP);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("worker", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc)
    return sl_cli_usage_error("worker", "too many arguments");
  if (!o.head)
    return sl_cli_usage_error("worker", "missing --head ENDPOINT");
  /* a worker its launcher started dies with it: no orphan outlives a
   * killed head on this machine (a remote one waits out the timeout) */
  if (getenv("SLUICE_WORKER_PARENT_DEATH"))
    prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  sl_cli_run *r = calloc(1, sizeof *r);
  if (!r) {
    fprintf(stderr, "sluice worker: out of memory\n");
    return SL_EXIT_FAILED;
  }
  char err[700] = "";
  int rc = sl_remote_worker_run(&o, build_run, r, err, sizeof err);
  sl_cli_run_free(r);
  free(r);
  if (rc) {
    fprintf(stderr, "sluice worker%s%s: %s\n", o.name ? " " : "", o.name ? o.name : "", err[0] ? err : sl_strerror(rc));
    return SL_EXIT_FAILED;
  }
  return SL_EXIT_OK;
}
