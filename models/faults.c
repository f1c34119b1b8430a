#include "faults.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"

/*
 * A time and its unit. models/ cannot use workloads/units.h, so this is a
 * short copy of its rules for times: the same units in any case, and a bare
 * number refused unless it is 0 (tests/test_faults.c holds them to it).
 */
static const struct {
  const char *name;
  double scale;
} time_units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ms", 1e-3},
                  {"s", 1},     {"min", 60},  {"h", 3600}};

typedef enum { TIME_OK, TIME_MALFORMED, TIME_NO_UNIT } time_verdict;

static time_verdict parse_time(const char *s, double *out)
{
  char *end;
  if (!isdigit((unsigned char)*s) && *s != '.')
    return TIME_MALFORMED; /* no sign: a fault happens after the start */
  double v = strtod(s, &end);
  if (end == s || !isfinite(v) || strspn(s, "0123456789.eE+-") < (size_t)(end - s))
    return TIME_MALFORMED; /* strtod also reads hexadecimal */
  const char *unit = end + strspn(end, " \t");
  size_t len = strlen(unit);
  while (len > 0 && isspace((unsigned char)unit[len - 1]))
    len--;
  if (len == 0) {
    *out = v;
    return v == 0 ? TIME_OK : TIME_NO_UNIT;
  }
  for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++)
    if (strlen(time_units[i].name) == len && strncasecmp(unit, time_units[i].name, len) == 0) {
      *out = v * time_units[i].scale;
      return TIME_OK;
    }
  return TIME_MALFORMED;
}

static int find_op(const sl_plan *plan, const char *name)
{
  for (int i = 0; i < plan->nops; i++) {
    const sl_workload *w = plan->workload;
    if (strcmp(plan->ops[i].name, name) == 0)
      return i;
    for (int k = 0; w && k < plan->ops[i].nfused; k++)
      if (strcmp(w->ops[plan->ops[i].first + k].name, name) == 0)
        return i;
  }
  return -1;
}

/* The group a GROUP.INDEX reference names, and the index of its first node; NULL when none. */
static const sl_node_group *group_of(const sl_cluster *cluster, const char *ref, const char *dot, int *base)
{
  *base = 0;
  for (int g = 0; g < cluster->ngroups; g++) {
    const sl_node_group *grp = &cluster->groups[g];
    if (strlen(grp->name) == (size_t)(dot - ref) && strncmp(grp->name, ref, dot - ref) == 0)
      return grp;
    *base += grp->count;
  }
  return NULL;
}

int sl_faults_node(const sl_cluster *cluster, const char *ref)
{
  char *end;
  long n = strtol(ref, &end, 10);
  if (*ref && *end == 0)
    return n >= 0 && n < cluster->nnodes ? (int)n : -1;
  const char *dot = strrchr(ref, '.');
  if (!dot || dot == ref)
    return -1;
  long k = strtol(dot + 1, &end, 10);
  if (dot[1] == 0 || *end != 0 || k < 0)
    return -1;
  int base;
  const sl_node_group *grp = group_of(cluster, ref, dot, &base);
  return grp && k < grp->count ? base + (int)k : -1;
}

/* Why @p ref names no node, in words that say which nodes there are. */
static void no_such_node(const sl_cluster *cluster, const char *what, const char *ref, char *err, size_t errlen)
{
  const char *dot = strrchr(ref, '.');
  int base;
  const sl_node_group *grp = dot && dot != ref ? group_of(cluster, ref, dot, &base) : NULL;
  if (grp && grp->count == 1)
    snprintf(err, errlen, "%s: no node '%s': group %s has 1 node, %s.0", what, ref, grp->name, grp->name);
  else if (grp)
    snprintf(err, errlen, "%s: no node '%s': group %s has %d nodes, %s.0 to %s.%d", what, ref, grp->name,
             grp->count, grp->name, grp->name, grp->count - 1);
  else
    snprintf(err, errlen, "%s: expected a node index from 0 to %d or GROUP.INDEX, got '%s'", what,
             cluster->nnodes - 1, ref);
}

static int parse_when(char *item, char *at, sl_fault *f, char *err, size_t errlen)
{
  *at = 0;
  switch (parse_time(at + 1, &f->at_s)) {
  case TIME_OK:
    return 0;
  case TIME_NO_UNIT:
    snprintf(err, errlen, "'%s@%s': the time needs a unit: ns, us, ms, s, min or h (such as %ss)", item, at + 1,
             at + 1);
    return SL_EPARSE;
  default:
    snprintf(err, errlen, "'%s@%s': malformed time '%s' (such as 15s, 500ms or 2min)", item, at + 1, at + 1);
    return SL_EPARSE;
  }
}

static int parse_one(char *item, const sl_plan *plan, const sl_cluster *cluster, sl_fault *f,
                     char *err, size_t errlen)
{
  char *at = strchr(item, '@');
  snprintf(f->text, sizeof f->text, "%s", item);
  if (!at) {
    snprintf(err, errlen, "'%s': expected WHAT@TIME, e.g. kill@15s or lose:1@900s", item);
    return SL_EPARSE;
  }
  if (parse_when(item, at, f, err, errlen) < 0)
    return SL_EPARSE;
  char *arg = strchr(item, ':');
  if (arg)
    *arg++ = 0;
  f->op = -1;
  f->node = -1;
  if (strcmp(item, "kill") == 0) {
    f->kind = SL_FAULT_KILL;
    if (arg && (f->op = find_op(plan, arg)) < 0) {
      snprintf(err, errlen, "kill: no operator '%s' in the plan", arg);
      return SL_EPARSE;
    }
    return 0;
  }
  if (strcmp(item, "lose") != 0 && strcmp(item, "join") != 0) {
    snprintf(err, errlen, "'%s': unknown failure (kill, lose or join)", item);
    return SL_EPARSE;
  }
  f->kind = item[0] == 'l' ? SL_FAULT_LOSE : SL_FAULT_JOIN;
  f->node = arg ? sl_faults_node(cluster, arg) : -1;
  if (f->node < 0) {
    no_such_node(cluster, item, arg ? arg : "", err, errlen);
    return SL_EPARSE;
  }
  return 0;
}

/* The first loss of @p node after position @p i of the sorted schedule, or -1. */
static int later_loss(const sl_fault_schedule *s, int i, int node)
{
  for (int k = i + 1; k < s->n; k++)
    if (s->ev[k].kind == SL_FAULT_LOSE && s->ev[k].node == node)
      return k;
  return -1;
}

/*
 * A join while the schedule has its node in service, and loses it later, is
 * a join before its loss: the schedule is out of order, and what was meant
 * cannot be guessed. A join of a node no scheduled loss takes may still
 * apply after a random loss (sim --mtbf): the run reports it if it does not.
 */
static int check_order(const sl_fault_schedule *s, char *err, size_t errlen)
{
  bool down[SL_MAX_FAULTS] = {false}; /* by position of the node's first mention */
  int nodes[SL_MAX_FAULTS], nnodes = 0;
  for (int i = 0; i < s->n; i++) {
    const sl_fault *f = &s->ev[i];
    if (f->kind == SL_FAULT_KILL)
      continue;
    int k = 0;
    while (k < nnodes && nodes[k] != f->node)
      k++;
    if (k == nnodes)
      nodes[nnodes++] = f->node;
    int loss = f->kind == SL_FAULT_JOIN && !down[k] ? later_loss(s, i, f->node) : -1;
    if (loss >= 0) {
      snprintf(err, errlen, "'%s' comes before '%s': a node joins only after it is lost", f->text, s->ev[loss].text);
      return SL_EPARSE;
    }
    down[k] = f->kind == SL_FAULT_LOSE;
  }
  return 0;
}

static int by_time(const void *a, const void *b)
{
  const sl_fault *x = a, *y = b;
  if (x->at_s != y->at_s)
    return (x->at_s > y->at_s) - (x->at_s < y->at_s);
  return x->seq - y->seq;
}

int sl_faults_parse(const char *text, const sl_plan *plan, const sl_cluster *cluster,
                    sl_fault_schedule *out, char *err, size_t errlen)
{
  memset(out, 0, sizeof *out);
  if (!text || !*text)
    return 0;
  char *copy = strdup(text);
  if (!copy)
    return SL_ENOMEM;
  int rc = 0;
  char *save = NULL;
  for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*item))
      item++;
    if (out->n == SL_MAX_FAULTS) {
      snprintf(err, errlen, "more than %d failures", SL_MAX_FAULTS);
      rc = SL_EPARSE;
      break;
    }
    if ((rc = parse_one(item, plan, cluster, &out->ev[out->n], err, errlen)) < 0)
      break;
    out->ev[out->n].seq = out->n;
    out->n++;
  }
  free(copy);
  if (rc == 0)
    qsort(out->ev, out->n, sizeof out->ev[0], by_time);
  if (rc == 0)
    rc = check_order(out, err, errlen);
  if (rc < 0)
    memset(out, 0, sizeof *out);
  return rc;
}

/* ------------------------------------------------------------------ log */

void sl_fault_log_init(sl_fault_log *log, const sl_fault_schedule *s)
{
  memset(log, 0, sizeof *log);
  log->n = s ? s->n : 0;
}

bool sl_fault_log_check(sl_fault_log *log, const sl_fault_schedule *s, int i, const sl_core *core)
{
  const sl_fault *f = &s->ev[i];
  sl_fault_outcome o = SL_FAULT_APPLIED;
  if (f->kind == SL_FAULT_LOSE && !sl_core_node_alive(core, f->node))
    o = SL_FAULT_NODE_WAS_DOWN;
  else if (f->kind == SL_FAULT_JOIN && sl_core_node_alive(core, f->node))
    o = SL_FAULT_NODE_WAS_UP;
  log->outcome[i] = o;
  return o == SL_FAULT_APPLIED;
}

void sl_fault_log_defer(sl_fault_log *log, int i)
{
  log->deferred[i] = true;
}

void sl_fault_log_finish(sl_fault_log *log, const sl_fault_schedule *s, const sl_core *core)
{
  /* from scratch each time, so that a second call changes nothing */
  for (int i = 0; i < log->n; i++)
    if (log->deferred[i] && log->outcome[i] == SL_FAULT_NO_VICTIM)
      log->outcome[i] = SL_FAULT_APPLIED;
  /* the core strikes waiting kills in order, so the last ones are those left */
  for (int op = -1; s && op < SL_MAX_OPS; op++) {
    int left = sl_core_pending_kills(core, op);
    for (int i = log->n - 1; i >= 0 && left > 0; i--)
      if (log->deferred[i] && s->ev[i].op == op && log->outcome[i] == SL_FAULT_APPLIED) {
        log->outcome[i] = SL_FAULT_NO_VICTIM;
        left--;
      }
  }
}

int sl_fault_log_applied(const sl_fault_log *log)
{
  int n = 0;
  for (int i = 0; i < log->n; i++)
    n += log->outcome[i] == SL_FAULT_APPLIED;
  return n;
}

static const char *outcome_reason(sl_fault_outcome o)
{
  switch (o) {
  case SL_FAULT_NOT_DUE:
    return "the run had ended";
  case SL_FAULT_NODE_WAS_UP:
    return "the node was in service";
  case SL_FAULT_NODE_WAS_DOWN:
    return "the node was already lost";
  case SL_FAULT_NO_VICTIM:
    return "nothing ran, and nothing started again, to kill";
  default:
    return "applied";
  }
}

int sl_fault_log_describe(const sl_fault_log *log, const sl_fault_schedule *s, char *buf, size_t n)
{
  size_t used = 0;
  int skipped = 0;
  if (n)
    buf[0] = 0;
  for (int i = 0; i < log->n; i++) {
    if (log->outcome[i] == SL_FAULT_APPLIED)
      continue;
    skipped++;
    if (used >= n)
      continue;
    int w = snprintf(buf + used, n - used, "%s%s (%s)", used ? "; " : "", s->ev[i].text,
                     outcome_reason(log->outcome[i]));
    if (w > 0)
      used += (size_t)w;
  }
  return skipped;
}
