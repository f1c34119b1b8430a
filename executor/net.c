/* Max-min fair sharing in real time. Every arrival or departure of a
 * transfer changes the rates, so each one first charges the time since the
 * last change to every transfer in flight (advance()), then the rates are
 * filled anew (fill_rates(): progressive filling, as SimGrid's solver
 * shares its links), and every waiting transfer sleeps until the soonest
 * could end or the rates change again. */
#include "net.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_PATH = 3 };

typedef struct flow {
  double remaining, slack, rate;
  int links[MAX_PATH], nlinks;
  int done;
  struct flow *next;
} flow;

struct sl_net {
  const sl_cluster *c;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int nlinks;
  double *bps;      /* wall bytes per second of each link (INFINITY: no limit) */
  double *left;     /* scratch for fill_rates() */
  int *unfixed;     /* scratch: flows on the link whose rate is not fixed yet */
  double latency_s; /* wall seconds per hop, between nodes */
  double storage_latency_s;
  int storage, backbone; /* link indices, -1 when there is none */
  double last;
  flow *head;
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

static double limit(double bps)
{
  return bps > 0 && isfinite(bps) ? bps : INFINITY;
}

static int nic_up(int node) { return 2 + 2 * node; }
static int nic_down(int node) { return 3 + 2 * node; }
/* after every NIC: each node's disk, written and read (its disks striped) */
static int disk_link(const sl_net *n, int node, bool write) { return 2 + 2 * n->c->nnodes + 2 * node + !write; }
/* last: the storage link's other direction, uploads (split duplex, as the simulator's) */
static int storage_in(const sl_net *n) { return 2 + 4 * n->c->nnodes; }

sl_net *sl_net_new(const sl_cluster *c)
{
  sl_net *n = calloc(1, sizeof *n);
  if (!n)
    return NULL;
  n->c = c;
  n->nlinks = 3 + 4 * c->nnodes;
  n->bps = calloc(n->nlinks, sizeof *n->bps);
  n->left = calloc(n->nlinks, sizeof *n->left);
  n->unfixed = calloc(n->nlinks, sizeof *n->unfixed);
  if (!n->bps || !n->left || !n->unfixed || pthread_mutex_init(&n->mu, NULL) != 0) {
    free(n->bps), free(n->left), free(n->unfixed), free(n);
    return NULL;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&n->cv, &ca);
  pthread_condattr_destroy(&ca);
  n->storage = c->storage_bps > 0 ? 0 : -1;
  n->backbone = sl_cluster_backbone_binds(c) ? 1 : -1; /* as the simulator models it */
  n->bps[0] = limit(c->storage_bps);
  n->bps[storage_in(n)] = limit(c->storage_bps);
  n->bps[1] = n->backbone >= 0 ? limit(c->backbone_bps) : INFINITY;
  for (int k = 0; k < c->nnodes; k++) {
    const sl_node_group *g = sl_cluster_node_group(c, k);
    n->bps[nic_up(k)] = n->bps[nic_down(k)] = limit(g->nic_bps);
    bool disk = sl_group_has_disk(g);
    n->bps[disk_link(n, k, true)] = disk ? limit(g->disks * g->disk_write_bps) : INFINITY;
    n->bps[disk_link(n, k, false)] = disk ? limit(g->disks * g->disk_read_bps) : INFINITY;
  }
  n->latency_s = c->latency_s > 0 ? c->latency_s : 0;
  n->storage_latency_s = c->storage_latency_s > 0 ? c->storage_latency_s : 0;
  n->last = now_s();
  return n;
}

void sl_net_free(sl_net *n)
{
  if (!n)
    return;
  pthread_cond_destroy(&n->cv);
  pthread_mutex_destroy(&n->mu);
  free(n->bps);
  free(n->left);
  free(n->unfixed);
  free(n);
}

/* Progressive filling: the link that gives its flows the least share
 * fixes their rate; what they take leaves the other links of their paths;
 * repeat until every flow has a rate. */
static void fill_rates(sl_net *n)
{
  for (int l = 0; l < n->nlinks; l++) {
    n->left[l] = n->bps[l];
    n->unfixed[l] = 0;
  }
  int pending = 0;
  for (flow *f = n->head; f; f = f->next, pending++) {
    f->rate = -1;
    for (int k = 0; k < f->nlinks; k++)
      n->unfixed[f->links[k]]++;
  }
  while (pending > 0) {
    int tight = -1;
    double share = INFINITY;
    for (int l = 0; l < n->nlinks; l++)
      if (n->unfixed[l] > 0 && n->left[l] / n->unfixed[l] < share) {
        share = n->left[l] / n->unfixed[l];
        tight = l;
      }
    for (flow *f = n->head; f; f = f->next) {
      if (f->rate >= 0)
        continue;
      bool on_tight = tight < 0;
      for (int k = 0; k < f->nlinks; k++)
        on_tight = on_tight || f->links[k] == tight;
      if (!on_tight)
        continue;
      f->rate = tight < 0 ? INFINITY : fmax(share, 0);
      pending--;
      for (int k = 0; k < f->nlinks; k++) {
        n->left[f->links[k]] -= f->rate;
        n->unfixed[f->links[k]]--;
      }
    }
  }
}

/* Charges the time since the last change to every flow in flight and takes
 * off those that have arrived. True when one did: the rates change. */
static bool advance(sl_net *n, double now)
{
  double dt = now - n->last;
  n->last = now;
  bool ended = false;
  for (flow **p = &n->head; *p;) {
    flow *f = *p;
    f->remaining -= isfinite(f->rate) ? f->rate * dt : f->remaining;
    if (f->remaining <= f->slack) {
      f->done = 1;
      *p = f->next;
      ended = true;
    } else {
      p = &f->next;
    }
  }
  return ended;
}

static double soonest_end(const sl_net *n)
{
  double t = INFINITY;
  for (const flow *f = n->head; f; f = f->next)
    if (f->rate > 0)
      t = fmin(t, f->remaining / f->rate);
  return t;
}

static void move(sl_net *n, flow *me);

double sl_net_transfer(sl_net *n, int from, int to, double bytes)
{
  double t0 = now_s();
  if (from == to || to < 0 || to >= n->c->nnodes || from >= n->c->nnodes || !(bytes > 0))
    return 0;
  /* a few bytes' slack: a wakeup lands a hair before its deadline */
  flow me = {.remaining = bytes, .slack = 1e-9 * bytes + 1e-3};
  if (from == SL_NET_STORAGE) {
    if (n->storage < 0)
      return 0; /* no storage link: reads cost nothing, as in the simulator */
    me.links[me.nlinks++] = n->storage;
  } else {
    me.links[me.nlinks++] = nic_up(from);
  }
  if (n->backbone >= 0)
    me.links[me.nlinks++] = n->backbone;
  me.links[me.nlinks++] = nic_down(to);
  sleep_s(from == SL_NET_STORAGE ? n->storage_latency_s + n->latency_s / 2 : n->latency_s);
  move(n, &me);
  return now_s() - t0;
}

double sl_net_upload(sl_net *n, int node, double bytes)
{
  double t0 = now_s();
  if (n->storage < 0 || node < 0 || node >= n->c->nnodes || !(bytes > 0))
    return 0; /* no storage link: uploads cost nothing, as in the simulator */
  flow me = {.remaining = bytes, .slack = 1e-9 * bytes + 1e-3};
  me.links[me.nlinks++] = nic_up(node);
  if (n->backbone >= 0)
    me.links[me.nlinks++] = n->backbone;
  me.links[me.nlinks++] = storage_in(n);
  sleep_s(n->storage_latency_s + n->latency_s / 2);
  move(n, &me);
  return now_s() - t0;
}

double sl_net_disk(sl_net *n, int node, double bytes, bool write)
{
  double t0 = now_s();
  if (node < 0 || node >= n->c->nnodes || !(bytes > 0))
    return 0;
  /* one access first, as the simulator charges it: the bytes one disk
   * would have moved meanwhile */
  const sl_node_group *g = sl_cluster_node_group(n->c, node);
  if (sl_group_has_disk(g))
    bytes += g->disk_latency_s * (write ? g->disk_write_bps : g->disk_read_bps);
  flow me = {.remaining = bytes, .slack = 1e-9 * bytes + 1e-3};
  me.links[me.nlinks++] = disk_link(n, node, write);
  move(n, &me);
  return now_s() - t0;
}

/* Waits until flow @p me has crossed its links, sharing them with the
 * flows in flight; at once when none of them has a limit. */
static void move(sl_net *n, flow *me)
{
  bool limited = false;
  for (int k = 0; k < me->nlinks; k++)
    limited = limited || isfinite(n->bps[me->links[k]]);
  if (!limited)
    return;
  pthread_mutex_lock(&n->mu);
  advance(n, now_s());
  me->next = n->head;
  n->head = me;
  fill_rates(n);
  pthread_cond_broadcast(&n->cv); /* the others' rates just changed */
  while (!me->done) {
    double until = now_s() + fmin(soonest_end(n), 3600);
    struct timespec ts = {.tv_sec = (time_t)until, .tv_nsec = (long)((until - floor(until)) * 1e9)};
    pthread_cond_timedwait(&n->cv, &n->mu, &ts);
    if (advance(n, now_s())) {
      fill_rates(n);
      pthread_cond_broadcast(&n->cv);
    }
  }
  pthread_mutex_unlock(&n->mu);
}
