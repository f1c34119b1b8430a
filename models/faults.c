#include "faults.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* A time with an optional unit; models/ cannot use workloads/units.h. */
static int parse_time(const char *s, double *out)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || !isfinite(v) || v < 0)
    return SL_EPARSE;
  double scale = 1;
  if (*end == 0 || strcmp(end, "s") == 0)
    scale = 1;
  else if (strcmp(end, "ms") == 0)
    scale = 1e-3;
  else if (strcmp(end, "min") == 0)
    scale = 60;
  else if (strcmp(end, "h") == 0)
    scale = 3600;
  else
    return SL_EPARSE;
  *out = v * scale;
  return 0;
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
  int base = 0;
  for (int g = 0; g < cluster->ngroups; g++) {
    const sl_node_group *grp = &cluster->groups[g];
    if (strlen(grp->name) == (size_t)(dot - ref) && strncmp(grp->name, ref, dot - ref) == 0)
      return k < grp->count ? base + (int)k : -1;
    base += grp->count;
  }
  return -1;
}

static int parse_one(char *item, const sl_plan *plan, const sl_cluster *cluster, sl_fault *f,
                     char *err, size_t errlen)
{
  char *at = strchr(item, '@');
  if (!at) {
    snprintf(err, errlen, "'%s': expected WHAT@TIME, e.g. kill@15s or lose:1@900s", item);
    return SL_EPARSE;
  }
  *at = 0;
  if (parse_time(at + 1, &f->at_s) < 0) {
    snprintf(err, errlen, "'%s': malformed time '%s'", item, at + 1);
    return SL_EPARSE;
  }
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
    snprintf(err, errlen, "%s: expected a node index from 0 to %d or GROUP.INDEX, got '%s'", item,
             cluster->nnodes - 1, arg ? arg : "");
    return SL_EPARSE;
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
  return rc;
}
