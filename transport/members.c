/* The member table of transport/members.h: an array of nodes, each with
 * its name, state, incarnation and a watch on it, and one counter that
 * hands out incarnations to all of them. */
#include "members.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sl_members {
  sl_members_timing timing;
  int nodes;
  int live;
  uint64_t last_incarnation; /* the last one given, to any node */
  sl_member node[];
};

void sl_members_timing_default(sl_members_timing *t)
{
  *t = (sl_members_timing){.heartbeat_ms = 250, .timeout_ms = 2000};
}

int sl_members_timing_check(const sl_members_timing *t, char *err, size_t errlen)
{
  if (t->heartbeat_ms == 0 || t->timeout_ms <= t->heartbeat_ms)
    return sl__msg_fail(SL_EINVAL, err, errlen,
                        "heartbeats every %u ms and a timeout of %u ms: the interval must be at least 1 ms and "
                        "shorter than the timeout",
                        t->heartbeat_ms, t->timeout_ms);
  return 0;
}

/* -------------------------------------------------------------- watch */

void sl_members_watch_start(sl_members_watch *w, const sl_members_timing *t, double now)
{
  *w = (sl_members_watch){
      .heartbeat_s = t->heartbeat_ms / 1e3, .timeout_s = t->timeout_ms / 1e3, .heard = now, .sent = now};
}

void sl_members_watch_heard(sl_members_watch *w, double now)
{
  if (now > w->heard)
    w->heard = now;
}

void sl_members_watch_sent(sl_members_watch *w, double now)
{
  if (now > w->sent)
    w->sent = now;
}

bool sl_members_watch_beat_due(const sl_members_watch *w, double now)
{
  return now >= w->sent + w->heartbeat_s;
}

bool sl_members_watch_silent(const sl_members_watch *w, double now)
{
  return now > w->heard + w->timeout_s;
}

double sl_members_watch_wakeup(const sl_members_watch *w)
{
  double beat = w->sent + w->heartbeat_s, end = w->heard + w->timeout_s;
  return beat < end ? beat : end;
}

/* -------------------------------------------------------------- table */

const char *sl_member_state_name(sl_member_state s)
{
  switch (s) {
  case SL_MEMBER_VACANT:
    return "vacant";
  case SL_MEMBER_LIVE:
    return "live";
  case SL_MEMBER_LOST:
    return "lost";
  case SL_MEMBER_LEFT:
    return "left";
  }
  return "?";
}

/* Checks the names a table is made with. */
static int check_names(int nodes, const char *const *names, char *err, size_t errlen)
{
  for (int i = 0; names && i < nodes; i++) {
    if (!names[i])
      continue;
    size_t n = strnlen(names[i], SL_MSG_NAME_MAX + 1);
    if (n == 0 || n > SL_MSG_NAME_MAX)
      return sl__msg_fail(SL_EINVAL, err, errlen, "node %d: its name must have 1 to %d bytes", i, SL_MSG_NAME_MAX);
    for (int j = 0; j < i; j++)
      if (names[j] && strcmp(names[i], names[j]) == 0)
        return sl__msg_fail(SL_EINVAL, err, errlen, "nodes %d and %d are both named '%s'", j, i, names[i]);
  }
  return 0;
}

sl_members *sl_members_new(int nodes, const char *const *names, const sl_members_timing *t, char *err,
                           size_t errlen)
{
  if (nodes < 1) {
    sl__msg_fail(SL_EINVAL, err, errlen, "%d nodes: a run has 1 at least", nodes);
    return NULL;
  }
  if (sl_members_timing_check(t, err, errlen) != 0 || check_names(nodes, names, err, errlen) != 0)
    return NULL;
  sl_members *m = calloc(1, sizeof *m + (size_t)nodes * sizeof m->node[0]);
  if (!m) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "members: out of memory");
    return NULL;
  }
  m->timing = *t;
  m->nodes = nodes;
  for (int i = 0; names && i < nodes; i++)
    if (names[i])
      strcpy(m->node[i].name, names[i]);
  return m;
}

void sl_members_free(sl_members *m)
{
  free(m);
}

void sl_members_number_from(sl_members *m, uint64_t last)
{
  if (last > m->last_incarnation)
    m->last_incarnation = last;
}

int sl_members_nodes(const sl_members *m)
{
  return m->nodes;
}

void sl_members_named_only(sl_members *m, int node)
{
  if (node >= 0 && node < m->nodes)
    m->node[node].named_only = true;
}

int sl_members_live(const sl_members *m)
{
  return m->live;
}

const sl_members_timing *sl_members_get_timing(const sl_members *m)
{
  return &m->timing;
}

const sl_member *sl_members_get(const sl_members *m, int node)
{
  return node >= 0 && node < m->nodes ? &m->node[node] : NULL;
}

/* The node of name @p name, else the first open one (which takes the
 * name); -1 when neither. */
static int node_for(sl_members *m, const char *name)
{
  if (strcmp(name, SL_MEMBERS_ANY) == 0) { /* a node no worker has had yet, else one not live */
    for (int i = 0; i < m->nodes; i++)
      if (m->node[i].joins == 0 && !m->node[i].named_only)
        return i;
    for (int i = 0; i < m->nodes; i++)
      if (m->node[i].state != SL_MEMBER_LIVE && !m->node[i].named_only)
        return i;
    return -1;
  }
  int open = -1;
  for (int i = 0; i < m->nodes; i++) {
    if (strcmp(m->node[i].name, name) == 0)
      return i;
    if (open < 0 && !m->node[i].name[0])
      open = i;
  }
  if (open >= 0)
    strcpy(m->node[open].name, name);
  return open;
}

/* Node @p i's live incarnation ends at @p now, in state @p to. */
static void end_live(sl_members *m, int i, sl_member_state to, double now)
{
  m->node[i].state = to;
  m->node[i].gone = now;
  m->live--;
}

int sl_members_hello(sl_members *m, const sl_msg_hello *h, double now, sl_members_join *out, char *err,
                     size_t errlen)
{
  size_t n = strnlen(h->name, SL_MSG_NAME_MAX + 1);
  if (n == 0 || n > SL_MSG_NAME_MAX)
    return sl__msg_fail(SL_EINVAL, err, errlen, "hello: a name of 1 to %d bytes", SL_MSG_NAME_MAX);
  int i = node_for(m, h->name);
  if (i < 0)
    return sl__msg_fail(SL_ENOENT, err, errlen, "worker '%s': no node has that name and all %d are taken",
                        h->name, m->nodes);
  sl_member *s = &m->node[i];
  *out = (sl_members_join){.node = i, .replaced = 0};
  if (s->state == SL_MEMBER_LIVE) {
    out->replaced = s->incarnation;
    end_live(m, i, SL_MEMBER_LOST, now);
  }
  s->state = SL_MEMBER_LIVE;
  s->incarnation = ++m->last_incarnation;
  s->joins++;
  s->joined = now;
  s->hello = *h;
  sl_members_watch_start(&s->watch, &m->timing, now);
  m->live++;
  out->incarnation = s->incarnation;
  return 0;
}

/* The node whose live incarnation @p incarnation is; NULL when none. */
static sl_member *current(sl_members *m, int node, uint64_t incarnation)
{
  if (node < 0 || node >= m->nodes)
    return NULL;
  sl_member *s = &m->node[node];
  return s->state == SL_MEMBER_LIVE && s->incarnation == incarnation ? s : NULL;
}

sl_members_verdict sl_members_heard(sl_members *m, int node, uint64_t incarnation, double now)
{
  sl_member *s = current(m, node, incarnation);
  if (!s)
    return SL_MEMBERS_STALE;
  sl_members_watch_heard(&s->watch, now);
  return SL_MEMBERS_CURRENT;
}

sl_members_verdict sl_members_bye(sl_members *m, int node, uint64_t incarnation, double now)
{
  sl_member *s = current(m, node, incarnation);
  if (!s)
    return SL_MEMBERS_STALE;
  sl_members_watch_heard(&s->watch, now);
  end_live(m, node, SL_MEMBER_LEFT, now);
  return SL_MEMBERS_CURRENT;
}

int sl_members_expire(sl_members *m, double now)
{
  for (int i = 0; i < m->nodes; i++)
    if (m->node[i].state == SL_MEMBER_LIVE && sl_members_watch_silent(&m->node[i].watch, now)) {
      end_live(m, i, SL_MEMBER_LOST, now);
      return i;
    }
  return -1;
}

int sl_members_lose(sl_members *m, int node, double now)
{
  if (node < 0 || node >= m->nodes)
    return SL_EINVAL;
  if (m->node[node].state != SL_MEMBER_LIVE)
    return SL_ESTATE;
  end_live(m, node, SL_MEMBER_LOST, now);
  return 0;
}

int sl_members_beat_due(const sl_members *m, double now)
{
  for (int i = 0; i < m->nodes; i++)
    if (m->node[i].state == SL_MEMBER_LIVE && sl_members_watch_beat_due(&m->node[i].watch, now))
      return i;
  return -1;
}

void sl_members_sent(sl_members *m, int node, double now)
{
  if (node >= 0 && node < m->nodes && m->node[node].state == SL_MEMBER_LIVE)
    sl_members_watch_sent(&m->node[node].watch, now);
}

double sl_members_wakeup(const sl_members *m)
{
  double at = INFINITY;
  for (int i = 0; i < m->nodes; i++)
    if (m->node[i].state == SL_MEMBER_LIVE) {
      double w = sl_members_watch_wakeup(&m->node[i].watch);
      at = w < at ? w : at;
    }
  return at;
}
