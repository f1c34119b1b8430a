#include "faults.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "workloads/units.h"

#define SL_FAULT_TEXT 160

int sl_sim_op_ref(const sl_plan *plan, const char *name)
{
  for (int i = 0; i < plan->nops; i++)
    if (strcmp(plan->ops[i].name, name) == 0)
      return i;
  if (!plan->workload)
    return -1;
  for (int i = 0; i < plan->nops; i++)
    for (int k = 0; k < plan->ops[i].nfused; k++)
      if (strcmp(plan->workload->ops[plan->ops[i].first + k].name, name) == 0)
        return i;
  return -1;
}

static bool parse_index(const char *s, int64_t *out)
{
  return *s && sl_parse_int(s, out) == 0 && *out >= 0;
}

/* First node of group @p g. */
static int group_base(const sl_cluster *c, int g)
{
  int base = 0;
  for (int k = 0; k < g; k++)
    base += c->groups[k].count;
  return base;
}

int sl_sim_node_ref(const sl_cluster *c, const char *ref)
{
  int64_t idx;
  if (parse_index(ref, &idx))
    return idx < c->nnodes ? (int)idx : -1;
  for (int g = 0; g < c->ngroups; g++)
    if (strcmp(c->groups[g].name, ref) == 0)
      return c->groups[g].count == 1 ? group_base(c, g) : -1;
  /* GROUP.INDEX: group names may hold dots, so split at the last one */
  const char *dot = strrchr(ref, '.');
  if (!dot || !parse_index(dot + 1, &idx))
    return -1;
  for (int g = 0; g < c->ngroups; g++) {
    size_t len = strlen(c->groups[g].name);
    if (len == (size_t)(dot - ref) && strncmp(c->groups[g].name, ref, len) == 0)
      return idx < c->groups[g].count ? group_base(c, g) + (int)idx : -1;
  }
  return -1;
}

/* One event "what[:target]@time" (already trimmed) into @p f. */
static int parse_event(const char *ev, const sl_plan *plan, const sl_cluster *c, sl_sim_fault *f, char *err,
                       size_t errlen)
{
  char buf[SL_FAULT_TEXT];
  if (strlen(ev) >= sizeof buf) {
    snprintf(err, errlen, "--fail: event '%.40s...' is too long", ev);
    return SL_EPARSE;
  }
  snprintf(buf, sizeof buf, "%s", ev);
  char *at = strrchr(buf, '@');
  if (!at) {
    snprintf(err, errlen, "--fail: event '%s' has no time (expected KIND[:TARGET]@TIME, e.g. lose:1@900s)", ev);
    return SL_EPARSE;
  }
  *at = 0;
  if (sl_parse_time(at + 1, &f->time_s) < 0 || f->time_s < 0) {
    snprintf(err, errlen, "--fail: event '%s': '%s' is not a time (e.g. 15s, 900ms, 15min)", ev, at + 1);
    return SL_EPARSE;
  }
  char *colon = strchr(buf, ':');
  char *target = colon ? colon + 1 : NULL;
  if (colon)
    *colon = 0;
  f->op = -1;
  f->node = -1;
  if (strcmp(buf, "kill") == 0) {
    f->kind = SL_FAULT_KILL;
    if (target && (f->op = sl_sim_op_ref(plan, target)) < 0) {
      snprintf(err, errlen, "--fail: event '%s': no operator '%s' in the plan", ev, target);
      return SL_EPARSE;
    }
    return 0;
  }
  if (strcmp(buf, "lose") != 0 && strcmp(buf, "join") != 0) {
    snprintf(err, errlen, "--fail: event '%s': unknown kind '%s' (expected kill, lose or join)", ev, buf);
    return SL_EPARSE;
  }
  f->kind = strcmp(buf, "lose") == 0 ? SL_FAULT_LOSE : SL_FAULT_JOIN;
  if (!target || !*target) {
    snprintf(err, errlen, "--fail: event '%s' names no node (e.g. %s:1@900s)", ev, buf);
    return SL_EPARSE;
  }
  if ((f->node = sl_sim_node_ref(c, target)) < 0) {
    snprintf(err, errlen, "--fail: event '%s': no node '%s' in cluster '%s' (%d nodes; use an index or GROUP.INDEX)",
             ev, target, c->name, c->nnodes);
    return SL_EPARSE;
  }
  return 0;
}

static int by_time(const void *a, const void *b)
{
  const sl_sim_fault *x = a, *y = b;
  if (x->time_s != y->time_s)
    return x->time_s < y->time_s ? -1 : 1;
  return 0;
}

int sl_sim_faults_parse(const char *schedule, const sl_plan *plan, const sl_cluster *c, sl_sim_faults *out, char *err,
                        size_t errlen)
{
  memset(out, 0, sizeof *out);
  size_t len = strlen(schedule);
  int cap = 1;
  for (size_t i = 0; i < len; i++)
    cap += schedule[i] == ',';
  out->v = calloc((size_t)cap, sizeof *out->v);
  char *copy = strdup(schedule);
  if (!out->v || !copy) {
    free(copy);
    sl_sim_faults_free(out);
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    char *end = tok + strlen(tok);
    while (end > tok && end[-1] == ' ')
      *--end = 0;
    if (!*tok)
      continue;
    rc = parse_event(tok, plan, c, &out->v[out->n], err, errlen);
    if (rc == 0)
      out->n++;
  }
  if (rc == 0 && out->n == 0) {
    snprintf(err, errlen, "--fail: empty schedule (expected e.g. kill:transform@15s,lose:1@900s,join:1@1800s)");
    rc = SL_EPARSE;
  }
  free(copy);
  if (rc < 0) {
    sl_sim_faults_free(out);
    return rc;
  }
  /* insertion sort: stable, so ties keep the written order */
  for (int i = 1; i < out->n; i++)
    for (int j = i; j > 0 && by_time(&out->v[j - 1], &out->v[j]) > 0; j--) {
      sl_sim_fault t = out->v[j];
      out->v[j] = out->v[j - 1];
      out->v[j - 1] = t;
    }
  return 0;
}

void sl_sim_faults_free(sl_sim_faults *f)
{
  free(f->v);
  f->v = NULL;
  f->n = 0;
}
