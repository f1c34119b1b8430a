/* The control channel of transport/control.h: each side's step loop
 * around a member table (head) or a watch on the head (worker). A loop
 * turn reads the clock, sends the heartbeats due, takes in one message,
 * and, when the socket is empty (or, on the head, under a backlog, every
 * interval), looks for silence; it waits on the socket until the next of
 * the caller's end, a heartbeat and a timeout. */
#include "control.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "wire.h"

double sl_control_clock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *sl_control_event_name(sl_control_event_kind k)
{
  static const char *const names[] = {
      [SL_CONTROL_NONE] = "none",       [SL_CONTROL_JOINED] = "joined",   [SL_CONTROL_LOST] = "lost",
      [SL_CONTROL_LEFT] = "left",       [SL_CONTROL_REFUSED] = "refused", [SL_CONTROL_STALE] = "stale",
      [SL_CONTROL_MESSAGE] = "message", [SL_CONTROL_HEAD_LOST] = "head lost",
      [SL_CONTROL_DISMISSED] = "dismissed",
  };
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* The wait in ms from @p now until @p until: -1 for ever, else 1 at least
 * (the clock must pass a deadline, not reach it). */
static int ms_until(double now, double until)
{
  if (until == INFINITY)
    return -1;
  double ms = ceil((until - now) * 1e3);
  return ms < 1 ? 1 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Makes @p m a message of kind @p kind to or from @p node, @p incarnation. */
static void stamp(sl_msg *m, sl_msg_kind kind, int node, uint64_t incarnation)
{
  m->kind = kind;
  m->node = node;
  m->incarnation = incarnation;
}

/* --------------------------------------------------------------- head */

struct sl_control_head {
  void *sock;
  char endpoint[SL_MSG_ENDPOINT_MAX + 1];
  sl_members *m;
  sl_wire_peer *peer; /* per node: where its live incarnation last spoke from */
  sl_wire_in *in;
  sl_wire_peer from;
  sl_msg msg, out;
  sl_msg_frames frames;
  uint64_t beats;
  int taken;                /* messages taken in since the socket was last found empty... */
  double taken_since;       /* ...from this time on, or since silence was last looked for */
  double returned_at;       /* when the last step returned */
  sl_control_event pending; /* an event a message made second, for the next step */
  uint64_t unreadable;      /* messages dropped as unreadable... */
  char first_unreadable[256]; /* ...and why the first was */
};

sl_control_head *sl_control_head_new(void *zctx, const char *endpoint, int nodes, const char *const *names,
                                     const sl_members_timing *t, char *err, size_t errlen)
{
  sl_control_head *h = calloc(1, sizeof *h);
  if (!h) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "head: out of memory");
    return NULL;
  }
  sl_msg_init(&h->msg);
  sl_msg_init(&h->out);
  if (!(h->m = sl_members_new(nodes, names, t, err, errlen)))
    goto free_head;
  h->peer = calloc((size_t)nodes, sizeof *h->peer);
  h->in = sl_wire_in_new();
  if (!h->peer || !h->in) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "head: out of memory");
    goto free_head;
  }
  /* a ROUTER's send to a worker gone fails instead of vanishing */
  if (!(h->sock = sl_wire_open(zctx, ZMQ_ROUTER, endpoint, NULL, 0, h->endpoint, sizeof h->endpoint, "head", err,
                               errlen)))
    goto free_head;
  struct timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  sl_members_number_from(h->m, (uint64_t)start.tv_sec * 1000000 + (uint64_t)start.tv_nsec / 1000);
  return h;

free_head:
  sl_control_head_free(h);
  return NULL;
}

void sl_control_head_free(sl_control_head *h)
{
  if (!h)
    return;
  if (h->sock)
    zmq_close(h->sock);
  sl_members_free(h->m);
  free(h->peer);
  sl_wire_in_free(h->in);
  sl_msg_free(&h->msg);
  sl_msg_free(&h->out);
  sl_msg_frames_free(&h->frames);
  free(h);
}

const char *sl_control_head_endpoint(const sl_control_head *h)
{
  return h->endpoint;
}

void *sl_control_head_socket(sl_control_head *h)
{
  return h->sock;
}

const sl_members *sl_control_head_members(const sl_control_head *h)
{
  return h->m;
}

void sl_control_head_named_only(sl_control_head *h, int node)
{
  sl_members_named_only(h->m, node);
}

uint64_t sl_control_head_unreadable(const sl_control_head *h, const char **first)
{
  if (first)
    *first = h->first_unreadable;
  return h->unreadable;
}

double sl_control_head_wakeup(const sl_control_head *h)
{
  return sl_members_wakeup(h->m);
}

/* Sends @p h->out to peer @p to, without waiting. */
static int head_send_to(sl_control_head *h, const sl_wire_peer *to, char *err, size_t errlen)
{
  return sl_wire_send(h->sock, to, &h->out, &h->frames, NULL, NULL, SL_WIRE_DONTWAIT, err, errlen);
}

/* BYE with @p code to peer @p to, addressed to @p node, @p incarnation;
 * a peer gone or full misses it, which changes nothing. */
static void head_bye(sl_control_head *h, const sl_wire_peer *to, int node, uint64_t incarnation, int32_t code)
{
  stamp(&h->out, SL_MSG_BYE, node, incarnation);
  h->out.u.bye.code = code;
  (void)head_send_to(h, to, NULL, 0);
}

/* A heartbeat to every live node owed one: a node that cannot take it
 * (gone, or not reading) is judged by its silence, not by this. */
static void head_beat(sl_control_head *h, double now)
{
  int node;
  while ((node = sl_members_beat_due(h->m, now)) >= 0) {
    stamp(&h->out, SL_MSG_HEARTBEAT, node, sl_members_get(h->m, node)->incarnation);
    h->out.u.heartbeat.seq = ++h->beats;
    (void)head_send_to(h, &h->peer[node], NULL, 0);
    sl_members_sent(h->m, node, now);
  }
}

static int event(sl_control_event *ev, sl_control_event_kind kind, int node, uint64_t incarnation, double at,
                 const sl_msg *msg)
{
  *ev = (sl_control_event){.kind = kind, .node = node, .incarnation = incarnation, .at = at, .msg = msg};
  return 1;
}

/* A HELLO: WELCOME and JOINED (after LOST when it replaces a live
 * incarnation), or BYE and REFUSED. */
static int head_hello(sl_control_head *h, double now, sl_control_event *ev)
{
  sl_members_join j;
  int rc = sl_members_hello(h->m, &h->msg.u.hello, now, &j, NULL, 0);
  if (rc) {
    head_bye(h, &h->from, -1, 0, rc);
    event(ev, SL_CONTROL_REFUSED, -1, 0, now, &h->msg);
    ev->code = rc;
    return 1;
  }
  h->peer[j.node] = h->from;
  stamp(&h->out, SL_MSG_WELCOME, j.node, j.incarnation);
  h->out.u.welcome = (sl_msg_welcome){.heartbeat_ms = sl_members_get_timing(h->m)->heartbeat_ms,
                                      .timeout_ms = sl_members_get_timing(h->m)->timeout_ms};
  (void)head_send_to(h, &h->from, NULL, 0); /* a worker gone at once is lost after its timeout */
  if (!j.replaced)
    return event(ev, SL_CONTROL_JOINED, j.node, j.incarnation, now, NULL);
  event(&h->pending, SL_CONTROL_JOINED, j.node, j.incarnation, now, NULL);
  return event(ev, SL_CONTROL_LOST, j.node, j.replaced, now, NULL);
}

/* The message just received: 1 and an event for the caller, or 0 when it
 * was the channel's own business (a heartbeat). */
static int head_take(sl_control_head *h, double now, sl_control_event *ev)
{
  const sl_msg *m = &h->msg;
  if (m->kind == SL_MSG_HELLO)
    return head_hello(h, now, ev);
  sl_members_verdict v = m->kind == SL_MSG_BYE ? sl_members_bye(h->m, m->node, m->incarnation, now)
                                               : sl_members_heard(h->m, m->node, m->incarnation, now);
  if (v == SL_MEMBERS_STALE) {
    if (m->kind != SL_MSG_BYE)
      head_bye(h, &h->from, m->node, m->incarnation, SL_ESTATE);
    return event(ev, SL_CONTROL_STALE, m->node, m->incarnation, now, m);
  }
  if (m->kind == SL_MSG_BYE) {
    event(ev, SL_CONTROL_LEFT, m->node, m->incarnation, now, m);
    ev->code = m->u.bye.code;
    return 1;
  }
  h->peer[m->node] = h->from; /* it may have reconnected */
  if (m->kind == SL_MSG_HEARTBEAT)
    return 0;
  return event(ev, SL_CONTROL_MESSAGE, m->node, m->incarnation, now, m);
}

/* LOST for the next node silent too long at @p now: 1, or 0 when none is. */
static int head_expire(sl_control_head *h, double now, sl_control_event *ev)
{
  int node = sl_members_expire(h->m, now);
  if (node < 0)
    return 0;
  return event(ev, SL_CONTROL_LOST, node, sl_members_get(h->m, node)->incarnation, now, NULL);
}

/* Counts the messages taken in anew from @p now. */
static void head_count_from(sl_control_head *h, double now)
{
  h->taken = 0;
  h->taken_since = now;
}

/* sl_control_head_step() until it returns. */
static int head_step(sl_control_head *h, double now, double end, sl_control_event *ev, char *err, size_t errlen)
{
  const double interval = sl_members_get_timing(h->m)->heartbeat_ms / 1e3;
  for (;; now = sl_control_clock()) {
    if (h->pending.kind != SL_CONTROL_NONE) {
      *ev = h->pending;
      h->pending.kind = SL_CONTROL_NONE;
      return 1;
    }
    head_beat(h, now);
    /* Silence is looked for once the messages that came are in, so that
     * a step late to take them in does not lose their senders; under a
     * backlog that keeps the socket from emptying, every interval, once a
     * round of messages is in: ZeroMQ takes them from the senders in
     * turn, so a round holds one of every node that had one waiting. */
    if (h->taken > sl_members_nodes(h->m) && now >= h->taken_since + interval) {
      head_count_from(h, now);
      if (head_expire(h, now, ev))
        return 1;
    }
    int rc = sl_wire_recv(h->sock, h->in, &h->from, &h->msg, SL_WIRE_DONTWAIT, err, errlen);
    if (rc == 0 || rc == SL_EPROTO)
      h->taken++;
    if (rc == SL_EPROTO && h->unreadable++ == 0)
      snprintf(h->first_unreadable, sizeof h->first_unreadable, "%s", err ? err : "unreadable");
    if (rc == 0 && head_take(h, now, ev))
      return 1;
    if (rc != 0 && rc != SL_EAGAIN && rc != SL_EPROTO)
      return rc;
    if (rc != SL_EAGAIN)
      continue;
    head_count_from(h, now);
    if (head_expire(h, now, ev))
      return 1;
    if (now >= end)
      return 0;
    double wake = sl_members_wakeup(h->m);
    rc = sl_wire_wait(h->sock, ms_until(now, wake < end ? wake : end), err, errlen);
    if (rc < 0)
      return rc;
  }
}

int sl_control_head_step(sl_control_head *h, int wait_ms, sl_control_event *ev, char *err, size_t errlen)
{
  double now = sl_control_clock(), end = wait_ms < 0 ? INFINITY : now + wait_ms / 1e3;
  /* after a pause of the caller's, messages may wait from every node: a
   * round starts again */
  if (now > h->returned_at + sl_members_get_timing(h->m)->heartbeat_ms / 1e3)
    head_count_from(h, now);
  int rc = head_step(h, now, end, ev, err, errlen);
  h->returned_at = sl_control_clock();
  return rc;
}

int sl_control_head_send(sl_control_head *h, int node, sl_msg *m, char *err, size_t errlen)
{
  const sl_member *s = sl_members_get(h->m, node);
  if (!s || s->state != SL_MEMBER_LIVE)
    return sl__msg_fail(SL_ESTATE, err, errlen, "node %d is not live", node);
  m->node = node;
  m->incarnation = s->incarnation;
  int rc = sl_wire_send(h->sock, &h->peer[node], m, &h->frames, NULL, NULL, SL_WIRE_DONTWAIT, err, errlen);
  if (rc == 0)
    sl_members_sent(h->m, node, sl_control_clock());
  return rc;
}

int sl_control_head_dismiss(sl_control_head *h, int node, int32_t code)
{
  const sl_member *s = sl_members_get(h->m, node);
  if (node >= 0 && (!s || s->state != SL_MEMBER_LIVE))
    return SL_ESTATE;
  double now = sl_control_clock();
  int first = node >= 0 ? node : 0, last = node >= 0 ? node : sl_members_nodes(h->m) - 1;
  for (int i = first; i <= last; i++) {
    s = sl_members_get(h->m, i);
    if (s->state != SL_MEMBER_LIVE)
      continue;
    uint64_t incarnation = s->incarnation;
    head_bye(h, &h->peer[i], i, incarnation, code);
    (void)sl_members_bye(h->m, i, incarnation, now);
  }
  sl_wire_set_int(h->sock, ZMQ_LINGER, (int)sl_members_get_timing(h->m)->heartbeat_ms);
  return 0;
}

/* ------------------------------------------------------------- worker */

struct sl_control_worker {
  void *sock;
  char head[SL_MSG_ENDPOINT_MAX + 1];
  sl_msg_hello hello;
  int node;
  uint64_t incarnation;
  sl_members_timing timing;
  sl_members_watch watch; /* on the head */
  bool hello_said, joined, over;
  uint64_t beats;
  sl_wire_in *in;
  sl_msg msg, out;
  sl_msg_frames frames;
};

sl_control_worker *sl_control_worker_new(void *zctx, const char *head, const sl_msg_hello *hello, char *err,
                                         size_t errlen)
{
  sl_msg probe = {.kind = SL_MSG_HELLO, .node = -1, .u.hello = *hello};
  sl_msg_frames frames = {0};
  int rc = sl_msg_encode(&probe, &frames, err, errlen);
  sl_msg_frames_free(&frames);
  if (rc)
    return NULL; /* a name or endpoint that no head would take */
  sl_control_worker *w = calloc(1, sizeof *w);
  if (!w) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "worker: out of memory");
    return NULL;
  }
  snprintf(w->head, sizeof w->head, "%s", head);
  w->hello = *hello;
  w->node = -1;
  sl_msg_init(&w->msg);
  sl_msg_init(&w->out);
  if (!(w->in = sl_wire_in_new())) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "worker: out of memory");
    goto free_worker;
  }
  /* a worker whose head is gone exits without waiting for it: no linger */
  if (!(w->sock = sl_wire_open(zctx, ZMQ_DEALER, head, NULL, 0, NULL, 0, "worker", err, errlen)))
    goto free_worker;
  return w;

free_worker:
  sl_control_worker_free(w);
  return NULL;
}

void sl_control_worker_free(sl_control_worker *w)
{
  if (!w)
    return;
  if (w->sock)
    zmq_close(w->sock);
  sl_wire_in_free(w->in);
  sl_msg_free(&w->msg);
  sl_msg_free(&w->out);
  sl_msg_frames_free(&w->frames);
  free(w);
}

void *sl_control_worker_socket(sl_control_worker *w)
{
  return w->sock;
}

int sl_control_worker_node(const sl_control_worker *w)
{
  return w->node;
}

uint64_t sl_control_worker_incarnation(const sl_control_worker *w)
{
  return w->incarnation;
}

const sl_members_timing *sl_control_worker_timing(const sl_control_worker *w)
{
  return &w->timing;
}

double sl_control_worker_wakeup(const sl_control_worker *w)
{
  return w->joined && !w->over ? sl_members_watch_wakeup(&w->watch) : INFINITY;
}

/* Sends @p w->out to the head, without waiting. */
static int worker_send_out(sl_control_worker *w, char *err, size_t errlen)
{
  return sl_wire_send(w->sock, NULL, &w->out, &w->frames, NULL, NULL, SL_WIRE_DONTWAIT, err, errlen);
}

/* A BYE's code as one of ours: the head refuses with one. */
static int refusal(int32_t code)
{
  return code > SL__ERR_FIRST && code < SL__ERR_LAST ? code : SL_ESTATE;
}

/* The WELCOME just received: the worker's node, incarnation, timings. */
static int worker_welcome(sl_control_worker *w, double now, char *err, size_t errlen)
{
  sl_members_timing t = {w->msg.u.welcome.heartbeat_ms, w->msg.u.welcome.timeout_ms};
  char why[160];
  if (sl_members_timing_check(&t, why, sizeof why) != 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "the head at %s sent wrong timings: %s", w->head, why);
  if (w->msg.node < 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "the head at %s gave node %d", w->head, (int)w->msg.node);
  w->node = w->msg.node;
  w->incarnation = w->msg.incarnation;
  w->timing = t;
  sl_members_watch_start(&w->watch, &t, now);
  w->joined = true;
  return 0;
}

int sl_control_worker_join(sl_control_worker *w, int timeout_ms, char *err, size_t errlen)
{
  /* A second HELLO on this connection would be answered too, and the
   * WELCOME of the first, if it came late, taken for it. */
  if (w->hello_said)
    return sl__msg_fail(SL_ESTATE, err, errlen, "worker '%s': %s", w->hello.name,
                        w->joined ? "already joined" : "a worker joins once; make another to try again");
  stamp(&w->out, SL_MSG_HELLO, -1, 0);
  w->out.u.hello = w->hello;
  int rc = worker_send_out(w, err, errlen);
  w->hello_said = rc == 0;
  if (rc == SL_EAGAIN)
    rc = sl__msg_fail(SL_EIO, err, errlen, "worker '%s': cannot say hello to %s now", w->hello.name, w->head);
  if (rc)
    return rc;
  double end = sl_control_clock() + timeout_ms / 1e3;
  char unreadable[200] = ""; /* why the head's last message could not be read */
  for (;;) {
    double now = sl_control_clock();
    rc = sl_wire_recv(w->sock, w->in, NULL, &w->msg, SL_WIRE_DONTWAIT, err, errlen);
    if (rc == 0 && w->msg.kind == SL_MSG_WELCOME)
      return worker_welcome(w, now, err, errlen);
    if (rc == 0 && w->msg.kind == SL_MSG_BYE)
      return sl__msg_fail(refusal(w->msg.u.bye.code), err, errlen, "the head at %s refused worker '%s': %s",
                          w->head, w->hello.name, sl_strerror(w->msg.u.bye.code));
    if (rc == SL_EPROTO)
      snprintf(unreadable, sizeof unreadable, "; it sent what this worker cannot read: %s", err ? err : "?");
    if (rc == 0 || rc == SL_EPROTO)
      continue; /* nothing else is for a worker without a node */
    if (rc != SL_EAGAIN)
      return rc;
    if (now >= end)
      return sl__msg_fail(SL_EIO, err, errlen, "worker '%s': no answer from the head at %s in %d ms%s",
                          w->hello.name, w->head, timeout_ms, unreadable);
    if ((rc = sl_wire_wait(w->sock, ms_until(now, end), err, errlen)) < 0)
      return rc;
  }
}

/* Whether the worker may still talk; else says why in @p err. */
static int worker_usable(const sl_control_worker *w, char *err, size_t errlen)
{
  if (!w->joined)
    return sl__msg_fail(SL_ESTATE, err, errlen, "worker '%s': not joined", w->hello.name);
  if (w->over)
    return sl__msg_fail(SL_ESTATE, err, errlen, "worker '%s': over (its head is lost or dismissed it)",
                        w->hello.name);
  return 0;
}

/* The message just received from the head: 1 and an event, or 0 when it
 * was the channel's own business (a heartbeat). */
static int worker_take(sl_control_worker *w, double now, sl_control_event *ev)
{
  const sl_msg *m = &w->msg;
  if (m->node != w->node || m->incarnation != w->incarnation)
    return event(ev, SL_CONTROL_STALE, m->node, m->incarnation, now, m);
  sl_members_watch_heard(&w->watch, now);
  if (m->kind == SL_MSG_HEARTBEAT)
    return 0;
  if (m->kind != SL_MSG_BYE)
    return event(ev, SL_CONTROL_MESSAGE, w->node, w->incarnation, now, m);
  w->over = true;
  event(ev, SL_CONTROL_DISMISSED, w->node, w->incarnation, now, m);
  ev->code = m->u.bye.code;
  return 1;
}

int sl_control_worker_step(sl_control_worker *w, int wait_ms, sl_control_event *ev, char *err, size_t errlen)
{
  int rc = worker_usable(w, err, errlen);
  if (rc)
    return rc;
  double now = sl_control_clock(), end = wait_ms < 0 ? INFINITY : now + wait_ms / 1e3;
  for (;; now = sl_control_clock()) {
    if (sl_members_watch_beat_due(&w->watch, now)) {
      stamp(&w->out, SL_MSG_HEARTBEAT, w->node, w->incarnation);
      w->out.u.heartbeat.seq = ++w->beats;
      (void)worker_send_out(w, NULL, 0); /* a head that cannot take it is judged by its silence */
      sl_members_watch_sent(&w->watch, now);
    }
    rc = sl_wire_recv(w->sock, w->in, NULL, &w->msg, SL_WIRE_DONTWAIT, err, errlen);
    if (rc == 0 && worker_take(w, now, ev))
      return 1;
    if (rc == 0 || rc == SL_EPROTO)
      continue;
    if (rc != SL_EAGAIN)
      return rc;
    if (sl_members_watch_silent(&w->watch, now)) {
      w->over = true;
      return event(ev, SL_CONTROL_HEAD_LOST, w->node, w->incarnation, now, NULL);
    }
    if (now >= end)
      return 0;
    double wake = sl_members_watch_wakeup(&w->watch);
    if ((rc = sl_wire_wait(w->sock, ms_until(now, wake < end ? wake : end), err, errlen)) < 0)
      return rc;
  }
}

int sl_control_worker_send(sl_control_worker *w, sl_msg *m, char *err, size_t errlen)
{
  int rc = worker_usable(w, err, errlen);
  if (rc)
    return rc;
  m->node = w->node;
  m->incarnation = w->incarnation;
  rc = sl_wire_send(w->sock, NULL, m, &w->frames, NULL, NULL, SL_WIRE_DONTWAIT, err, errlen);
  if (rc == 0)
    sl_members_watch_sent(&w->watch, sl_control_clock());
  return rc;
}

int sl_control_worker_leave(sl_control_worker *w, int32_t code)
{
  int rc = worker_usable(w, NULL, 0);
  if (rc)
    return rc;
  stamp(&w->out, SL_MSG_BYE, w->node, w->incarnation);
  w->out.u.bye.code = code;
  rc = worker_send_out(w, NULL, 0);
  w->over = true;
  sl_wire_set_int(w->sock, ZMQ_LINGER, (int)w->timing.heartbeat_ms);
  return rc;
}
