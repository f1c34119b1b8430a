/* sluice plot: draw one run from its timeline.csv with plots/run.gp. */
#include <csv.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gnuplot.h"
#include "results/record.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif


static const char *USAGE = "sluice plot RUN_DIR [--out FILE.png]";

static const char *HELP =
  "Draws the run in RUN_DIR (a folder written by sluice run or sluice sim) from\n"
  "its timeline.csv and summary.csv: throughput against the bound's rate, the\n"
  "partition store of every node against its group's budget, and running tasks\n"
  "per operator (GPU operators on an axis of the GPU count), with a marker at\n"
  "every fault and rollback (rows a rollback took back from the sink are named\n"
  "on its marker). Drawn by gnuplot with plots/run.gp.\n\n"
  "  --out FILE.png   where to write the PNG (default RUN_DIR/timeline.png);\n"
  "                   the SVG goes beside it, FILE.svg\n\n"
  "Exit codes: 0 drawn, 1 gnuplot failed or is missing, 2 bad usage or no timeline.csv.\n";

/* Lists handed to the script, space separated. Fixed buffers: a header is a
 * few KB, and markers stop at SL_PLOT_MAX_EVENTS. */
#define SL_PLOT_LIST 8192
#define SL_PLOT_MAX_EVENTS 200

typedef struct {
  int col;                    /* current column while parsing, 1-based */
  int row;                    /* rows parsed so far */
  int event_col;              /* column of `event`, 0 when absent */
  char opcols[SL_PLOT_LIST];  /* "6 9 12" */
  char opnames[SL_PLOT_LIST]; /* "produce transform inference" */
  char nodecols[SL_PLOT_LIST];
  char nodeids[SL_PLOT_LIST]; /* "cpu_0 cpu_1 gpu_0", beside nodecols */
  char time[256];             /* the current row's time_s */
  char last_time[256];        /* the last marker's */
  char evtimes[SL_PLOT_LIST]; /* markers: times and labels */
  char evlabels[2 * SL_PLOT_LIST];
  int nevents, events_left_out;
} timeline_info;

static void append_word(char *list, size_t n, const char *word)
{
  size_t len = strlen(list);
  snprintf(list + len, n - len, "%s%s", len ? " " : "", word);
}

/* gnuplot's word() splits on blanks: a word keeps its letters, not its
 * blanks or quotes. */
static void as_word(char *w)
{
  for (char *p = w; *p; p++)
    if (*p == ' ' || *p == '\t' || *p == '\'' || *p == '"')
      *p = '_';
}

static void header_cell(timeline_info *h, const char *name)
{
  char num[16];
  snprintf(num, sizeof num, "%d", h->col);
  if (strncmp(name, "running_", 8) == 0) {
    append_word(h->opcols, sizeof h->opcols, num);
    append_word(h->opnames, sizeof h->opnames, name + 8);
  } else if (strncmp(name, "store_bytes_", 12) == 0) {
    append_word(h->nodecols, sizeof h->nodecols, num);
    append_word(h->nodeids, sizeof h->nodeids, name + 12);
  } else if (strcmp(name, "event") == 0) {
    h->event_col = h->col;
  }
}

/* A marker's text as gnuplot will show it, '~' standing for a blank and '|'
 * for a line break inside the one word it must stay: "rollback:1234"
 * becomes "rollback:~1234~rows~un-delivered". */
static void marker_text(const char *label, char *buf, size_t n)
{
  if (strncmp(label, "rollback:", 9) == 0)
    snprintf(buf, n, "rollback:~%s~rows~un-delivered", label + 9);
  else
    snprintf(buf, n, "%s", label);
}

/* Events at the same time share one marker, their texts joined. */
static void event_cell(timeline_info *h, const char *label)
{
  char text[300];
  char *end;
  if (!label[0])
    return;
  strtod(h->time, &end);
  if (end == h->time || *end)
    return; /* a row without a time has no place on the axis */
  marker_text(label, text, sizeof text);
  size_t len = strlen(h->evlabels);
  if (len + strlen(text) + 2 >= sizeof h->evlabels || strlen(h->evtimes) + strlen(h->time) + 2 >= sizeof h->evtimes) {
    h->events_left_out++; /* a marker cut in half would pair a time with another's text */
    return;
  }
  if (h->nevents > 0 && strcmp(h->time, h->last_time) == 0) {
    snprintf(h->evlabels + len, sizeof h->evlabels - len, "|%s", text);
    return;
  }
  if (h->nevents == SL_PLOT_MAX_EVENTS) {
    h->events_left_out++;
    return;
  }
  h->nevents++;
  snprintf(h->last_time, sizeof h->last_time, "%s", h->time);
  append_word(h->evtimes, sizeof h->evtimes, h->time);
  append_word(h->evlabels, sizeof h->evlabels, text);
}

static void timeline_field(void *s, size_t len, void *data)
{
  timeline_info *h = data;
  char cell[256];
  h->col++;
  snprintf(cell, sizeof cell, "%.*s", (int)len, (const char *)s);
  as_word(cell);
  if (h->row == 0)
    header_cell(h, cell);
  else if (h->col == 1)
    snprintf(h->time, sizeof h->time, "%s", cell);
  else if (h->col == h->event_col)
    event_cell(h, cell);
}

static void timeline_row(int c, void *data)
{
  (void)c;
  timeline_info *h = data;
  h->row++;
  h->col = 0;
}

/* Feeds @p path to libcsv. Returns false when the file cannot be read. */
static bool parse_csv(const char *path, void (*field)(void *, size_t, void *), void (*row)(int, void *), void *data)
{
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  struct csv_parser p;
  csv_init(&p, 0);
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    csv_parse(&p, buf, n, field, row, data);
  csv_fini(&p, field, row, data);
  csv_free(&p);
  fclose(f);
  return true;
}

static bool parent_exists(const char *file)
{
  char dir[1024];
  const char *slash = strrchr(file, '/');
  if (!slash)
    return true;
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - file), file);
  struct stat st;
  return dir[0] == 0 || (stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
}

/* The groups of summary.csv's group_stores ("NAME=PEAK/BUDGET@NODE;..."):
 * their names as column identifiers and their budgets per node. */
typedef struct {
  int n;
  char ids[SL_MAX_GROUPS][2 * SL_NAME_MAX];
  double budget[SL_MAX_GROUPS];
} group_list;

static void parse_groups(const char *stores, group_list *g)
{
  g->n = 0;
  for (const char *p = stores; *p && g->n < SL_MAX_GROUPS;) {
    size_t len = strcspn(p, ";");
    const char *eq = memchr(p, '=', len), *slash = memchr(p, '/', len);
    if (eq && slash) {
      char name[2 * SL_NAME_MAX];
      snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
      sl_csv_identifier(name, g->ids[g->n], sizeof g->ids[g->n]);
      g->budget[g->n++] = atof(slash + 1);
    }
    p += len + (p[len] == ';');
  }
}

/* The group (1-based, 0 when none) of a node column "GROUPID_INDEX". */
static int group_of_node(const group_list *g, const char *node_id)
{
  int best = 0;
  size_t best_len = 0;
  for (int i = 0; i < g->n; i++) {
    size_t len = strlen(g->ids[i]);
    const char *rest = node_id + len;
    if (strncmp(node_id, g->ids[i], len) == 0 && rest[0] == '_' && strspn(rest + 1, "0123456789") == strlen(rest + 1) &&
        rest[1] && len > best_len) {
      best = i + 1;
      best_len = len;
    }
  }
  return best;
}

/* Node columns to groups, and each group's name and budget, for the store
 * panel: one colour and one budget line per group. */
static void append_groups(char *e, size_t n, const timeline_info *h, const sl_summary_columns *si, double *largest)
{
  group_list g;
  char list[SL_PLOT_LIST] = "", num[32], ids[SL_PLOT_LIST];
  parse_groups(sl_summary_column(si, "group_stores"), &g);
  snprintf(ids, sizeof ids, "%s", h->nodeids);
  for (char *tok = strtok(ids, " "); tok; tok = strtok(NULL, " ")) {
    snprintf(num, sizeof num, "%d", group_of_node(&g, tok));
    append_word(list, sizeof list, num);
  }
  sl_gnuplot_string(e, n, "nodegroups", list);
  list[0] = '\0';
  *largest = 0;
  for (int i = 0; i < g.n; i++) {
    snprintf(num, sizeof num, "%.17g", g.budget[i]);
    append_word(list, sizeof list, num);
    *largest = g.budget[i] > *largest ? g.budget[i] : *largest;
  }
  sl_gnuplot_string(e, n, "budgets", list);
  list[0] = '\0';
  for (int i = 0; i < g.n; i++)
    append_word(list, sizeof list, g.ids[i]);
  sl_gnuplot_string(e, n, "groupnames", list);
}

/* Which running_<op> columns are GPU operators' ("0 1"), from summary.csv. */
static void append_gpu_flags(char *e, size_t n, const timeline_info *h, const sl_summary_columns *si)
{
  char names[SL_PLOT_LIST], gpu_ops[1100], flags[SL_PLOT_LIST] = "";
  snprintf(names, sizeof names, "%s", h->opnames);
  for (char *tok = strtok(names, " "); tok; tok = strtok(NULL, " ")) {
    snprintf(gpu_ops, sizeof gpu_ops, " %s ", sl_summary_column(si, "gpu_operators"));
    char word[300];
    snprintf(word, sizeof word, " %s ", tok);
    append_word(flags, sizeof flags, strstr(gpu_ops, word) ? "1" : "0");
  }
  sl_gnuplot_string(e, n, "opgpu", flags);
}

/* The -e string shared by the PNG and the SVG. */
static void build_expr(char *e, size_t n, const char *timeline, const timeline_info *h,
                       const sl_summary_columns *si)
{
  char title[600];
  const char *jct = sl_summary_column(si, "jct_s");
  if (si->n > 0)
    snprintf(title, sizeof title, "%s on %s, %s model (%s): %s %.1f s%s", sl_summary_column(si, "workload"),
             sl_summary_column(si, "cluster"), sl_summary_column(si, "model"), sl_summary_column(si, "engine"),
             strcmp(sl_summary_column(si, "complete"), "1") == 0 ? "JCT" : "INCOMPLETE at", atof(jct),
             h->events_left_out ? " (some markers left out)" : "");
  else
    snprintf(title, sizeof title, "%.300s", timeline);
  e[0] = 0;
  sl_gnuplot_string(e, n, "data", timeline);
  sl_gnuplot_string(e, n, "title", title);
  sl_gnuplot_string(e, n, "opcols", h->opcols);
  sl_gnuplot_string(e, n, "opnames", h->opnames);
  sl_gnuplot_string(e, n, "nodecols", h->nodecols);
  sl_gnuplot_string(e, n, "evtimes", h->evtimes);
  sl_gnuplot_string(e, n, "evlabels", h->evlabels);
  double largest;
  append_groups(e, n, h, si, &largest);
  append_gpu_flags(e, n, h, si);
  bool gb = largest >= 1e9;
  sl_gnuplot_string(e, n, "munit", gb ? "GB" : "MB");
  size_t len = strlen(e);
  snprintf(e + len, n - len, "mscale=%s; bound_rate=%.17g; gpu_slots=%.17g; cpu_slots=%.17g; ", gb ? "1e9" : "1e6",
           atof(sl_summary_column(si, "bound_throughput_rows_s")), atof(sl_summary_column(si, "gpu_slots")),
           atof(sl_summary_column(si, "cpu_slots")));
}

/* FILE.png -> FILE.svg; false when @p png does not end in .png. */
static bool svg_beside(const char *png, char *svg, size_t n)
{
  size_t len = strlen(png);
  if (len < 5 || strcmp(png + len - 4, ".png") != 0)
    return false;
  snprintf(svg, n, "%.*s.svg", (int)(len - 4), png);
  return true;
}

int sl_cmd_plot(int argc, char **argv)
{
  static const struct option opts[] = {
    {"out", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0}};
  const char *out_arg = NULL;
  int ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
    if (ch == 'o') {
      out_arg = optarg;
    } else if (ch == 'h') {
      printf("usage: %s\n\n%s", USAGE, HELP);
      return SL_EXIT_OK;
    } else {
      return sl_cli_usage_error("plot", "unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return sl_cli_usage_error("plot", optind >= argc ? "missing RUN_DIR" : "too many arguments");
  const char *dir = argv[optind];
  char timeline[1024], summary[1024], png[1024], svg[1024], script[1024];
  snprintf(timeline, sizeof timeline, "%s/timeline.csv", dir);
  snprintf(summary, sizeof summary, "%s/summary.csv", dir);
  if (access(timeline, R_OK) != 0)
    return sl_cli_usage_error("plot", "%s: no timeline.csv there (not a run folder?)", dir);
  snprintf(png, sizeof png, "%s", out_arg ? out_arg : "");
  if (!out_arg)
    snprintf(png, sizeof png, "%s/timeline.png", dir);
  if (!svg_beside(png, svg, sizeof svg))
    return sl_cli_usage_error("plot", "--out: '%s' does not end in .png", png);
  if (!parent_exists(png))
    return sl_cli_usage_error("plot", "--out: the folder of '%s' does not exist", png);
  if (!sl_gnuplot_find_script("run.gp", script, sizeof script)) {
    fprintf(stderr, "sluice plot: plots/run.gp not found under %s or here\n", SL_DATA_DIR);
    return SL_EXIT_FAILED;
  }

  static timeline_info h;
  static sl_summary_columns si;
  memset(&h, 0, sizeof h);
  parse_csv(timeline, timeline_field, timeline_row, &h);
  if (!h.opcols[0])
    return sl_cli_usage_error("plot", "%s: no running_<op> columns in the header", timeline);
  sl_summary_read_columns(summary, &si); /* optional: without it, no title or groups */

  static char expr[60000];
  build_expr(expr, sizeof expr, timeline, &h, &si);
  int rc = sl_gnuplot_draw("plot", expr, "png", script, png);
  if (rc == SL_EXIT_OK)
    rc = sl_gnuplot_draw("plot", expr, "svg", script, svg);
  if (rc == SL_EXIT_OK)
    printf("%s\n%s\n", png, svg);
  return rc;
}
