/* sluice experiment: reproduce a figure of the paper by running its folder's
 * run.sh (experiments/NAME/run.sh) with this binary and the source tree. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif

extern char **environ;

static const char *USAGE = "sluice experiment NAME|all [--out DIR] [--quick]";

static const char *HELP =
  "Reproduces a figure of the paper: runs experiments/NAME/run.sh, which runs\n"
  "sluice run and sluice sim, collects OUT/results.csv, draws OUT/NAME.png and\n"
  ".svg with gnuplot, and writes OUT/report.md: our numbers beside the paper's,\n"
  "with the reason for every gap over 25%.\n\n"
  "  NAME          an experiment folder (listed below), or all of them in order\n"
  "  --out DIR     where the results go (default runs/experiments/NAME; with\n"
  "                'all', DIR/NAME for each)\n"
  "  --quick       reduced sizes (QUICK=1), as the tests use\n\n"
  "run.sh sees SLUICE (this binary), SLUICE_SRC (the source tree), OUT and QUICK.\n"
  "Exit codes: 0 every experiment succeeded, 1 one failed, 2 bad usage.\n";

#define SL_MAX_EXPERIMENTS 64

static const char *experiments_dir(void)
{
  static char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/experiments", SL_DATA_DIR);
  return dir;
}

static bool has_runner(const char *name)
{
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s/run.sh", experiments_dir(), name) >= (int)sizeof path)
    return false;
  return access(path, R_OK) == 0;
}

static int runner_filter(const struct dirent *d)
{
  return d->d_name[0] != '.' && has_runner(d->d_name);
}

/* The experiment folders in figure order: versionsort puts fig9 before
 * fig10a, where an alphabetical sort would not. Returns the count or -1. */
static int list_experiments(char names[][NAME_MAX + 1], int max)
{
  struct dirent **ents;
  int n = scandir(experiments_dir(), &ents, runner_filter, versionsort);
  if (n < 0)
    return -1;
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (kept < max)
      snprintf(names[kept++], NAME_MAX + 1, "%s", ents[i]->d_name);
    free(ents[i]);
  }
  free(ents);
  return kept;
}

/* "fig7a, fig7b or fig9": the experiments, for the message about an unknown one. */
static void experiment_names(char *buf, size_t len)
{
  static char names[SL_MAX_EXPERIMENTS][NAME_MAX + 1];
  int n = list_experiments(names, SL_MAX_EXPERIMENTS);
  size_t used = 0;
  snprintf(buf, len, "none");
  for (int i = 0; i < n && used < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static void print_list(FILE *f)
{
  static char names[SL_MAX_EXPERIMENTS][NAME_MAX + 1];
  int n = list_experiments(names, SL_MAX_EXPERIMENTS);
  fprintf(f, "experiments under %s:", experiments_dir());
  for (int i = 0; i < n; i++)
    fprintf(f, " %s", names[i]);
  fprintf(f, "%s\n", n <= 0 ? " none" : "");
}

/* mkdir -p */
static int make_dirs(const char *path)
{
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    if (mkdir(buf, 0777) < 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  return mkdir(buf, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs bash run.sh for @p name with OUT=@p out. Returns run.sh's exit status,
 * 128 + signal when it was killed, or -1 when it could not be started. */
static int run_one(const char *name, const char *out)
{
  char script[PATH_MAX];
  if (snprintf(script, sizeof script, "%s/%s/run.sh", experiments_dir(), name) >= (int)sizeof script)
    return -1;
  if (setenv("OUT", out, 1) < 0)
    return -1;
  char *argv[] = {"bash", script, NULL};
  /* we ignore SIGINT while waiting; the child must not inherit that */
  posix_spawnattr_t attr;
  sigset_t dflt;
  sigemptyset(&dflt);
  sigaddset(&dflt, SIGINT);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigdefault(&attr, &dflt);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int rc = posix_spawnp(&pid, "bash", NULL, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return -1;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Sets SLUICE, SLUICE_SRC and QUICK, the environment every run.sh relies on. */
static int export_paths(bool quick)
{
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = 0;
  return setenv("SLUICE", self, 1) | setenv("SLUICE_SRC", SL_DATA_DIR, 1) |
         setenv("QUICK", quick ? "1" : "0", 1);
}

/* Creates @p out and writes its absolute path into @p abs, so run.sh may cd. */
static int prepare_out(const char *out, char *abs)
{
  if (make_dirs(out) < 0 || !realpath(out, abs)) {
    fprintf(stderr, "sluice experiment: cannot create %s: %s\n", out, strerror(errno));
    return -1;
  }
  return 0;
}

/* @p nth is "" for one experiment, " (3 of 9)" within `all`. */
static int run_named(const char *name, const char *out, const char *nth)
{
  char abs[PATH_MAX];
  if (strlen(out) >= PATH_MAX) {
    fprintf(stderr, "sluice experiment: output path too long\n");
    return SL_EXIT_FAILED;
  }
  if (prepare_out(out, abs) < 0)
    return SL_EXIT_FAILED;
  printf("experiment %s%s: running, outputs in %s\n", name, nth, abs);
  fflush(stdout);
  double t0 = now_s();
  int rc = run_one(name, abs);
  double dt = now_s() - t0;
  if (rc == 0) {
    printf("experiment %s: done in %.1f s; %s/report.md\n", name, dt, abs);
    return SL_EXIT_OK;
  }
  if (rc < 0)
    fprintf(stderr, "sluice experiment: cannot start bash for %s\n", name);
  else
    fprintf(stderr, "sluice experiment: %s failed (exit %d) after %.1f s; see %s/log.txt\n", name, rc,
            dt, abs);
  return rc > 128 ? -rc : SL_EXIT_FAILED; /* a signal stops 'all' */
}

/* The counts a report ends with (experiments/report.awk): "Ideal (no
 * system cost): N compared with the paper's, W within 25%, ..." and "As the
 * paper ran them (...): N compared, W within 25%, ...". */
typedef struct {
  int compared[2], within[2]; /* [0] ideal, [1] as the paper ran them */
} fidelity;

static void read_fidelity(const char *report, fidelity *f)
{
  FILE *in = fopen(report, "r");
  char line[1024];
  while (in && fgets(line, sizeof line, in)) {
    int n, w;
    const char *as_ran = strstr(line, "As the paper ran them");
    if (strncmp(line, "Ideal (no system cost): ", 24) == 0 &&
        sscanf(line + 24, "%d compared with the paper's, %d within", &n, &w) == 2) {
      f->compared[0] += n;
      f->within[0] += w;
    } else if (as_ran == line && (as_ran = strstr(line, "): ")) &&
               sscanf(as_ran + 3, "%d compared, %d within", &n, &w) == 2) {
      f->compared[1] += n;
      f->within[1] += w;
    }
  }
  if (in)
    fclose(in);
}

/* One line over every report: how many of our numbers are within 25% of
 * the paper's, with no system cost and with each system's profile. */
static void print_fidelity(const char *out_root, char names[][NAME_MAX + 1], int n)
{
  fidelity f = {{0, 0}, {0, 0}};
  for (int i = 0; i < n; i++) {
    char report[PATH_MAX];
    if (snprintf(report, sizeof report, "%s/%s/report.md", out_root, names[i]) < (int)sizeof report)
      read_fidelity(report, &f);
  }
  if (f.compared[0] > 0)
    printf("within 25%% of the paper: %d of %d numbers with no system cost; %d of %d as the paper ran them "
           "(each system's profile where it has one)\n",
           f.within[0], f.compared[0], f.within[1], f.compared[1]);
}

static int run_all(const char *out_root, bool quick)
{
  static char names[SL_MAX_EXPERIMENTS][NAME_MAX + 1];
  int n = list_experiments(names, SL_MAX_EXPERIMENTS);
  if (n <= 0) {
    fprintf(stderr, "sluice experiment: no experiments under %s\n", experiments_dir());
    return SL_EXIT_FAILED;
  }
  int failed = 0;
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    char out[PATH_MAX], nth[32];
    int rc = SL_EXIT_FAILED;
    snprintf(nth, sizeof nth, " (%d of %d)", i + 1, n);
    if (snprintf(out, sizeof out, "%s/%s", out_root, names[i]) < (int)sizeof out)
      rc = run_named(names[i], out, nth);
    else
      fprintf(stderr, "sluice experiment: output path too long for %s\n", names[i]);
    if (rc < 0) {
      fprintf(stderr, "sluice experiment: interrupted\n");
      return SL_EXIT_FAILED;
    }
    failed += rc != 0;
  }
  printf("experiments: %d of %d succeeded in %.1f s%s\n", n - failed, n, now_s() - t0,
         quick ? " (quick)" : "");
  print_fidelity(out_root, names, n);
  return failed ? SL_EXIT_FAILED : SL_EXIT_OK;
}

int sl_cmd_experiment(int argc, char **argv)
{
  static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
                                       {"quick", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0}};
  const char *out_arg = NULL;
  bool quick = false;
  int ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
    switch (ch) {
    case 'o':
      out_arg = optarg;
      break;
    case 'q':
      quick = true;
      break;
    case 'h':
      printf("usage: %s\n\n%s\n", USAGE, HELP);
      print_list(stdout);
      return SL_EXIT_OK;
    default:
      return sl_cli_usage_error("experiment", "unknown or incomplete option '%s'",
                                argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("experiment", optind >= argc ? "missing NAME" : "too many arguments");
  const char *name = argv[optind];
  if (strcmp(name, "all") != 0 && (strchr(name, '/') || !has_runner(name))) {
    char names[1024];
    experiment_names(names, sizeof names);
    return sl_cli_usage_error("experiment", "no experiment '%s' (expected all, %s)", name, names);
  }
  if (export_paths(quick) != 0) {
    fprintf(stderr, "sluice experiment: cannot find this binary's path\n");
    return SL_EXIT_FAILED;
  }
  signal(SIGINT, SIG_IGN); /* the child takes Ctrl-C and its exit tells us */
  if (strcmp(name, "all") == 0)
    return run_all(out_arg ? out_arg : "runs/experiments", quick);
  char out[PATH_MAX];
  snprintf(out, sizeof out, "%s", out_arg ? out_arg : "");
  if (!out_arg)
    snprintf(out, sizeof out, "runs/experiments/%s", name);
  int rc = run_named(name, out, "");
  return rc < 0 ? SL_EXIT_FAILED : rc;
}
