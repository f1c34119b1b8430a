/* Processor sharing in real time: n transfers in flight each move at
 * bps / n. Every arrival or departure changes the rates, so each one
 * brings the remaining bytes of all up to date first (advance()), then
 * every waiting transfer sleeps until the soonest one could finish, or
 * until the rates change again. */
#include "link.h"

#include <errno.h>
#include <math.h>
#include <time.h>

struct sl_link_xfer {
  double remaining, slack;
  int done;
  struct sl_link_xfer *next;
};

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
  if (!(s > 0))
    return;
  struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - floor(s)) * 1e9)};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

int sl_link_init(sl_link *l, double bps, double latency_s, double time_scale)
{
  double scale = time_scale > 0 ? time_scale : 1;
  l->bps = bps > 0 ? bps / scale : INFINITY;
  l->latency_s = latency_s > 0 ? latency_s * scale : 0;
  l->last = now_s();
  l->active = 0;
  l->head = NULL;
  if (pthread_mutex_init(&l->mu, NULL) != 0)
    return -1;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&l->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc != 0) {
    pthread_mutex_destroy(&l->mu);
    return -1;
  }
  return 0;
}

void sl_link_destroy(sl_link *l)
{
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
}

/* Charges the time since the last update to every transfer in flight and
 * takes those that have arrived off the link, so that the rest speed up
 * at once, not when their threads next run. */
static void advance(sl_link *l, double now)
{
  double moved = l->active > 0 ? (now - l->last) * l->bps / l->active : 0;
  l->last = now;
  for (sl_link_xfer **p = &l->head; *p;) {
    sl_link_xfer *x = *p;
    x->remaining -= moved;
    if (x->remaining <= x->slack) {
      x->done = 1;
      *p = x->next;
      l->active--;
    } else {
      p = &x->next;
    }
  }
}

static double soonest_remaining(const sl_link *l)
{
  double m = INFINITY;
  for (const sl_link_xfer *x = l->head; x; x = x->next)
    m = fmin(m, x->remaining);
  return m;
}

double sl_link_transfer(sl_link *l, double bytes)
{
  double t0 = now_s();
  sleep_s(l->latency_s);
  if (!(bytes > 0) || !isfinite(l->bps))
    return now_s() - t0;
  /* a few bytes' slack: a wakeup lands a hair before its deadline */
  sl_link_xfer me = {.remaining = bytes, .slack = 1e-9 * bytes + 1e-3};
  pthread_mutex_lock(&l->mu);
  advance(l, now_s());
  me.next = l->head;
  l->head = &me;
  l->active++;
  pthread_cond_broadcast(&l->cv); /* everyone's rate just fell */
  while (!me.done) {
    double until = now_s() + fmax(soonest_remaining(l) * l->active / l->bps, 0);
    struct timespec ts = {.tv_sec = (time_t)until, .tv_nsec = (long)((until - floor(until)) * 1e9)};
    pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    int before = l->active;
    advance(l, now_s());
    if (l->active != before)
      pthread_cond_broadcast(&l->cv); /* someone arrived: the others speed up */
  }
  pthread_mutex_unlock(&l->mu);
  return now_s() - t0;
}
