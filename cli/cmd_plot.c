/* sluice plot: draw one run from its timeline.csv with plots/run.gp. */
#include <csv.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gnuplot.h"

#ifndef SL_DATA_DIR
#define SL_DATA_DIR "."
#endif


static const char *USAGE = "sluice plot RUN_DIR [--out FILE.png]";

static const char *HELP =
  "Draws the run in RUN_DIR (a folder written by sluice run or sluice sim) from\n"
  "its timeline.csv: throughput, partition store per node against the budget,\n"
  "and running tasks per operator over time. The operators and nodes come from\n"
  "the CSV header; the figure is drawn by gnuplot with plots/run.gp.\n\n"
  "  --out FILE.png   where to write the PNG (default RUN_DIR/timeline.png);\n"
  "                   the SVG goes beside it, FILE.svg\n\n"
  "Exit codes: 0 drawn, 1 gnuplot failed or is missing, 2 bad usage or no timeline.csv.\n";

/* The columns of timeline.csv that the script needs, and what the summary
 * says about the run. Fixed buffers: a header line is a few KB at most. */
#define SL_PLOT_LIST 4096

typedef struct {
  int col;                    /* current column while parsing, 1-based */
  int row;                    /* rows parsed so far */
  char opcols[SL_PLOT_LIST];  /* "5 8 11" */
  char opnames[SL_PLOT_LIST]; /* "produce transform inference" */
  char nodecols[SL_PLOT_LIST];
} header_info;

typedef struct {
  char names[32][64];
  char values[32][96];
  int n, row, col;
} summary_info;

static void append_word(char *list, size_t n, const char *word)
{
  size_t len = strlen(list);
  snprintf(list + len, n - len, "%s%s", len ? " " : "", word);
}

static void header_field(void *s, size_t len, void *data)
{
  header_info *h = data;
  char name[256], num[16];
  h->col++;
  if (h->row > 0)
    return;
  snprintf(name, sizeof name, "%.*s", (int)len, (const char *)s);
  snprintf(num, sizeof num, "%d", h->col);
  if (strncmp(name, "running_", 8) == 0) {
    /* gnuplot's word() splits on blanks: a name keeps its letters, not its spaces */
    for (char *p = name; *p; p++)
      if (*p == ' ' || *p == '\'')
        *p = '_';
    append_word(h->opcols, sizeof h->opcols, num);
    append_word(h->opnames, sizeof h->opnames, name + 8);
  } else if (strncmp(name, "store_node", 10) == 0) {
    append_word(h->nodecols, sizeof h->nodecols, num);
  }
}

static void header_row(int c, void *data)
{
  (void)c;
  header_info *h = data;
  h->row++;
  h->col = 0;
}

static void summary_field(void *s, size_t len, void *data)
{
  summary_info *si = data;
  int i = si->col++;
  if (i >= 32 || si->row > 1)
    return;
  if (si->row == 0) {
    snprintf(si->names[i], sizeof si->names[i], "%.*s", (int)len, (const char *)s);
    si->n = i + 1;
  } else {
    snprintf(si->values[i], sizeof si->values[i], "%.*s", (int)len, (const char *)s);
  }
}

static void summary_row(int c, void *data)
{
  (void)c;
  summary_info *si = data;
  si->row++;
  si->col = 0;
}

/* Feeds the first @p max_bytes of @p path to libcsv; enough for a header or a
 * one-row summary. Returns false when the file cannot be read. */
static bool parse_csv_head(const char *path, size_t max_bytes, void (*field)(void *, size_t, void *),
                           void (*row)(int, void *), void *data)
{
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  struct csv_parser p;
  csv_init(&p, 0);
  char buf[8192];
  size_t n, total = 0;
  while (total < max_bytes && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    csv_parse(&p, buf, n, field, row, data);
    total += n;
  }
  csv_fini(&p, field, row, data);
  csv_free(&p);
  fclose(f);
  return true;
}

static const char *summary_get(const summary_info *si, const char *name)
{
  for (int i = 0; i < si->n; i++)
    if (strcmp(si->names[i], name) == 0)
      return si->values[i];
  return "";
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

/* The -e string shared by the PNG and the SVG. */
static void build_expr(char *e, size_t n, const char *timeline, const header_info *h,
                       const summary_info *si)
{
  double budget = atof(summary_get(si, "store_budget_bytes"));
  bool gb = budget >= 1e9;
  char title[400];
  const char *jct = summary_get(si, "jct_s");
  if (si->n > 0)
    snprintf(title, sizeof title, "%s on %s, %s model (%s): %s %.1f s", summary_get(si, "workload"),
             summary_get(si, "cluster"), summary_get(si, "model"), summary_get(si, "engine"),
             strcmp(summary_get(si, "complete"), "1") == 0 ? "JCT" : "INCOMPLETE at", atof(jct));
  else
    snprintf(title, sizeof title, "%.300s", timeline);
  e[0] = 0;
  sl_gnuplot_string(e, n, "data", timeline);
  sl_gnuplot_string(e, n, "title", title);
  sl_gnuplot_string(e, n, "opcols", h->opcols);
  sl_gnuplot_string(e, n, "opnames", h->opnames);
  sl_gnuplot_string(e, n, "nodecols", h->nodecols);
  sl_gnuplot_string(e, n, "munit", gb ? "GB" : "MB");
  size_t len = strlen(e);
  snprintf(e + len, n - len, "budget=%.17g; mscale=%s; ", budget, gb ? "1e9" : "1e6");
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

  header_info h = {0};
  summary_info si = {0};
  parse_csv_head(timeline, 65536, header_field, header_row, &h);
  if (!h.opcols[0])
    return sl_cli_usage_error("plot", "%s: no running_<op> columns in the header", timeline);
  parse_csv_head(summary, 65536, summary_field, summary_row, &si); /* optional */

  static char expr[16384];
  build_expr(expr, sizeof expr, timeline, &h, &si);
  int rc = sl_gnuplot_draw("plot", expr, "png", script, png);
  if (rc == SL_EXIT_OK)
    rc = sl_gnuplot_draw("plot", expr, "svg", script, svg);
  if (rc == SL_EXIT_OK)
    printf("%s\n%s\n", png, svg);
  return rc;
}
