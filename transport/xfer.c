/* Partition transfer: a stateless server over a table of published
 * partitions, and a client that keeps `window` chunks asked for. A
 * published partition is an entry counted by references: one for the
 * table, one for each payload frame ZeroMQ holds, which its free callback
 * (frame_done(), maybe on ZeroMQ's thread) gives back. */
#include "xfer.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "wire.h"

void sl_xfer_opts_default(sl_xfer_opts *o)
{
  *o = (sl_xfer_opts){.chunk_bytes = 1u << 20, .window = 8, .timeout_ms = 2000};
}

int sl_xfer_tune_allocator(void)
{
  /* mallopt() answers 1 on success; either setting also stops glibc from
   * moving its mapping threshold up and down by itself */
  if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 64 << 20) != 1)
    return SL_EINVAL;
  return 0;
}

/* ------------------------------------------------------------- server */

typedef struct entry {
  sl_part_id part;
  atomic_uint refs;
  uint64_t total;
  int nsegs;
  sl_xfer_seg seg[SL_XFER_MAX_SEGS];
  sl_xfer_release_fn release;
  void *ctx;
  struct entry *next;
} entry;

/* A FETCH of a partition not served yet, held until it is or until
 * @c until (ms on the monotonic clock). */
typedef struct {
  sl_wire_peer from;
  sl_msg_fetch fetch;
  double until;
} parked;

/* The most FETCHes held at once: past it, one is answered SL_ENOENT at
 * once and its client asks again, as without parking. */
#define SL_XFER_MAX_PARKED 4096

static double now_ms(void);

struct sl_xfer_server {
  void *sock;
  char endpoint[SL_MSG_ENDPOINT_MAX + 1];
  entry **bucket; /* chained hash table of the published partitions */
  size_t nbuckets, count;
  sl_wire_in *in;
  sl_msg msg, out;
  sl_msg_frames frames;
  sl_xfer_lookup_fn lookup;
  void *lookup_ctx;
  int park_ms;   /* how long a FETCH of a partition not served yet waits for it */
  parked *park;  /* those waiting, oldest first */
  size_t npark, park_cap;
};

static void unref(entry *e)
{
  if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
    return;
  if (e->release)
    e->release(e->ctx);
  free(e);
}

static void frame_done(void *data, void *hint)
{
  (void)data;
  unref(hint);
}

static size_t bucket_of(size_t nbuckets, sl_part_id part)
{
  return (size_t)(part * 2654435761u) & (nbuckets - 1);
}

static entry **find(sl_xfer_server *s, sl_part_id part)
{
  entry **p = &s->bucket[bucket_of(s->nbuckets, part)];
  while (*p && (*p)->part != part)
    p = &(*p)->next;
  return p;
}

/* Doubles the table; 0 or SL_ENOMEM (the table is then as it was). */
static int grow(sl_xfer_server *s)
{
  size_t n = s->nbuckets * 2;
  entry **b = calloc(n, sizeof *b);
  if (!b)
    return SL_ENOMEM;
  for (size_t i = 0; i < s->nbuckets; i++)
    for (entry *e = s->bucket[i], *next; e; e = next) {
      next = e->next;
      size_t k = bucket_of(n, e->part);
      e->next = b[k];
      b[k] = e;
    }
  free(s->bucket);
  s->bucket = b;
  s->nbuckets = n;
  return 0;
}

sl_xfer_server *sl_xfer_server_new(void *zctx, const char *endpoint, char *err, size_t errlen)
{
  sl_xfer_server *s = calloc(1, sizeof *s);
  if (!s)
    goto fail_nomem;
  s->nbuckets = 64;
  s->bucket = calloc(s->nbuckets, sizeof *s->bucket);
  s->in = sl_wire_in_new();
  if (!s->bucket || !s->in) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "partition server: out of memory");
    goto free_server;
  }
  sl_msg_init(&s->msg);
  sl_msg_init(&s->out);
  /* a peer gone fails the send, which ends its request; clients' windows
   * bound the queue, and its frames are not copies */
  static const sl_wire_opt server_opts[] = {{ZMQ_SNDHWM, 0}};
  s->sock = sl_wire_open(zctx, ZMQ_ROUTER, endpoint, server_opts, 1, s->endpoint, sizeof s->endpoint,
                         "partition server", err, errlen);
  if (!s->sock)
    goto free_server;
  return s;

free_server:
  sl_xfer_server_free(s);
  return NULL;
fail_nomem:
  sl__msg_fail(SL_ENOMEM, err, errlen, "partition server: out of memory");
  return NULL;
}

void sl_xfer_server_free(sl_xfer_server *s)
{
  if (!s)
    return;
  for (size_t i = 0; s->bucket && i < s->nbuckets; i++)
    for (entry *e = s->bucket[i], *next; e; e = next) {
      next = e->next;
      unref(e);
    }
  free(s->bucket);
  free(s->park);
  if (s->sock)
    zmq_close(s->sock);
  sl_wire_in_free(s->in);
  sl_msg_free(&s->msg);
  sl_msg_free(&s->out);
  sl_msg_frames_free(&s->frames);
  free(s);
}

const char *sl_xfer_server_endpoint(const sl_xfer_server *s)
{
  return s->endpoint;
}

void *sl_xfer_server_socket(sl_xfer_server *s)
{
  return s->sock;
}

int sl_xfer_server_publish(sl_xfer_server *s, sl_part_id part, const sl_xfer_seg *segs, int nsegs,
                           sl_xfer_release_fn release, void *ctx)
{
  if (*find(s, part))
    return SL_EINVAL;
  entry *e = calloc(1, sizeof *e);
  if (!e)
    return SL_ENOMEM;
  for (int i = 0; i < nsegs; i++) {
    if (segs[i].len == 0)
      continue;
    if (e->nsegs == SL_XFER_MAX_SEGS) {
      free(e);
      return SL_EINVAL;
    }
    e->seg[e->nsegs++] = segs[i];
    e->total += segs[i].len;
  }
  if (s->count >= s->nbuckets && grow(s) != 0) {
    free(e);
    return SL_ENOMEM;
  }
  e->part = part;
  atomic_init(&e->refs, 1);
  e->release = release;
  e->ctx = ctx;
  entry **p = &s->bucket[bucket_of(s->nbuckets, part)];
  e->next = *p;
  *p = e;
  s->count++;
  return 0;
}

void sl_xfer_server_set_lookup(sl_xfer_server *s, sl_xfer_lookup_fn fn, void *ctx)
{
  s->lookup = fn;
  s->lookup_ctx = ctx;
}

void sl_xfer_server_set_park(sl_xfer_server *s, int park_ms)
{
  s->park_ms = park_ms > 0 ? park_ms : 0;
}

size_t sl_xfer_server_parked(const sl_xfer_server *s)
{
  return s->npark;
}

int sl_xfer_server_withdraw(sl_xfer_server *s, sl_part_id part)
{
  entry **p = find(s, part), *e = *p;
  if (!e)
    return SL_ENOENT;
  *p = e->next;
  s->count--;
  unref(e);
  return 0;
}

/* The payload of bytes [off, off + len) of @p e: one part per buffer they span. */
static int slice(const entry *e, uint64_t off, uint64_t len, sl_msg_part *out)
{
  int n = 0;
  uint64_t start = 0;
  for (int i = 0; i < e->nsegs && len > 0; i++) {
    uint64_t end = start + e->seg[i].len;
    if (off < end) {
      uint64_t take = end - off < len ? end - off : len;
      out[n++] = (sl_msg_part){(const uint8_t *)e->seg[i].data + (off - start), (size_t)take};
      off += take;
      len -= take;
    }
    start = end;
  }
  return n;
}

/* The entry serving @p part, published on demand by the lookup; NULL. */
static entry *served(sl_xfer_server *s, sl_part_id part)
{
  entry *e = *find(s, part);
  if (!e && s->lookup) {
    s->lookup(s->lookup_ctx, s, part);
    e = *find(s, part);
  }
  return e;
}

/* Holds FETCH @p f of a partition not served yet; false when it cannot
 * wait (parking off, or too many waiting). */
static bool park(sl_xfer_server *s, const sl_wire_peer *from, const sl_msg_fetch *f)
{
  if (s->park_ms <= 0 || s->npark >= SL_XFER_MAX_PARKED)
    return false;
  if (s->npark == s->park_cap) {
    size_t cap = s->park_cap ? 2 * s->park_cap : 16;
    parked *p = realloc(s->park, cap * sizeof *p);
    if (!p)
      return false;
    s->park = p;
    s->park_cap = cap;
  }
  s->park[s->npark++] = (parked){*from, *f, now_ms() + s->park_ms};
  return true;
}

static int send_chunks(sl_xfer_server *s, const sl_wire_peer *to, const sl_msg_fetch *f, entry *e);

/* Sends the chunks FETCH @p f asks for to @p to, or holds the FETCH
 * (park()) when its partition is not served yet; whether it was sent. */
static bool answer(sl_xfer_server *s, const sl_wire_peer *to, const sl_msg_fetch *f)
{
  entry *e = served(s, f->part);
  if (!e && f->offset == 0 && park(s, to, f))
    return false;
  (void)send_chunks(s, to, f, e); /* a peer gone is no error of the server's */
  return true;
}

/* Sends the chunks FETCH @p f asks for of @p e (NULL: not served) to @p
 * to. Stops at the first that cannot go, and returns why: the peer is
 * gone, and the rest would not arrive either. */
static int send_chunks(sl_xfer_server *s, const sl_wire_peer *to, const sl_msg_fetch *f, entry *e)
{
  sl_msg *m = &s->out;
  sl_msg_chunk *c = &m->u.chunk;
  m->kind = SL_MSG_CHUNK;
  m->node = -1;
  m->incarnation = 0;
  memset(c, 0, sizeof *c);
  c->part = f->part;
  c->tag = f->tag;
  if (!e || f->offset > e->total || (f->offset == e->total && e->total > 0)) {
    c->status = e ? SL_EINVAL : SL_ENOENT;
    return sl_wire_send(s->sock, to, m, &s->frames, NULL, NULL, SL_WIRE_DONTWAIT, NULL, 0);
  }
  c->total = e->total;
  for (uint64_t k = 0, off = f->offset; k < f->credit; k++) {
    c->offset = off;
    c->len = e->total - off < f->chunk_bytes ? e->total - off : f->chunk_bytes;
    c->flags = off + c->len == e->total ? SL_MSG_CHUNK_LAST : 0;
    c->npayload = slice(e, off, c->len, c->payload);
    atomic_fetch_add_explicit(&e->refs, (unsigned)c->npayload, memory_order_relaxed);
    int rc = sl_wire_send(s->sock, to, m, &s->frames, frame_done, e, SL_WIRE_DONTWAIT, NULL, 0);
    if (rc || (c->flags & SL_MSG_CHUNK_LAST))
      return rc;
    off += c->len;
  }
  return 0;
}

int sl_xfer_server_serve(sl_xfer_server *s, int wait_ms, char *err, size_t errlen)
{
  int rc = sl_wire_wait(s->sock, wait_ms, err, errlen);
  int answered = s->npark ? sl_xfer_server_recheck(s) : 0;
  if (rc <= 0)
    return rc < 0 ? rc : answered;
  for (;;) {
    sl_wire_peer from;
    rc = sl_wire_recv(s->sock, s->in, &from, &s->msg, SL_WIRE_DONTWAIT, err, errlen);
    if (rc == SL_EAGAIN)
      return answered;
    if (rc == SL_EPROTO || (rc == 0 && s->msg.kind != SL_MSG_FETCH))
      continue;
    if (rc != 0)
      return rc;
    answered += answer(s, &from, &s->msg.u.fetch);
  }
}

int sl_xfer_server_recheck(sl_xfer_server *s)
{
  double now = now_ms();
  size_t kept = 0;
  int answered = 0;
  for (size_t i = 0; i < s->npark; i++) {
    parked *p = &s->park[i];
    entry *e = served(s, p->fetch.part);
    if (!e && now < p->until) {
      s->park[kept++] = *p;
      continue;
    }
    (void)send_chunks(s, &p->from, &p->fetch, e); /* past its wait, unserved: SL_ENOENT */
    answered++;
  }
  s->npark = kept;
  return answered;
}

/* ------------------------------------------------------------- client */

struct sl_xfer_client {
  void *sock;
  sl_xfer_opts o;
  sl_wire_in *in;
  sl_msg msg, out;
  sl_msg_frames frames;
  bool busy;
  sl_part_id part;
  uint32_t tag;
  sl_xfer_dest dest; /* where the fetch under way puts its bytes */
  uint8_t *buf;      /* sl_xfer_fetch_start()'s buffer, its dest's */
  size_t cap;
  uint64_t total;    /* UINT64_MAX until the first chunk says */
  uint64_t received; /* bytes in, from 0: the next chunk's offset */
  uint64_t asked;    /* bytes asked for, from 0 */
  uint64_t chunks;   /* chunks taken in, over the client's life */
};

sl_xfer_client *sl_xfer_client_new(void *zctx, const char *endpoint, const sl_xfer_opts *o, char *err,
                                   size_t errlen)
{
  sl_xfer_client *c = calloc(1, sizeof *c);
  if (!c) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "partition client: out of memory");
    return NULL;
  }
  if (o)
    c->o = *o;
  else
    sl_xfer_opts_default(&c->o);
  if (c->o.chunk_bytes == 0 || c->o.window == 0) {
    sl__msg_fail(SL_EINVAL, err, errlen,
                 "partition client: chunks of %u bytes, a window of %u: both must be positive", c->o.chunk_bytes,
                 c->o.window);
    goto free_client;
  }
  sl_msg_init(&c->msg);
  sl_msg_init(&c->out);
  if (!(c->in = sl_wire_in_new())) {
    sl__msg_fail(SL_ENOMEM, err, errlen, "partition client: out of memory");
    goto free_client;
  }
  static const sl_wire_opt client_opts[] = {{ZMQ_RCVHWM, 0}}; /* the window bounds what comes */
  if (!(c->sock = sl_wire_open(zctx, ZMQ_DEALER, endpoint, client_opts, 1, NULL, 0, "partition client", err, errlen)))
    goto free_client;
  return c;

free_client:
  sl_xfer_client_free(c);
  return NULL;
}

void sl_xfer_client_free(sl_xfer_client *c)
{
  if (!c)
    return;
  if (c->sock)
    zmq_close(c->sock);
  sl_wire_in_free(c->in);
  sl_msg_free(&c->msg);
  sl_msg_free(&c->out);
  sl_msg_frames_free(&c->frames);
  free(c);
}

void *sl_xfer_client_socket(sl_xfer_client *c)
{
  return c->sock;
}

bool sl_xfer_fetching(const sl_xfer_client *c)
{
  return c->busy;
}

/* Asks for @p credit chunks from @p offset. */
static int ask(sl_xfer_client *c, uint64_t offset, uint32_t credit, char *err, size_t errlen)
{
  sl_msg *m = &c->out;
  m->kind = SL_MSG_FETCH;
  m->node = -1;
  m->incarnation = 0;
  m->u.fetch = (sl_msg_fetch){
      .part = c->part, .tag = c->tag, .offset = offset, .credit = credit, .chunk_bytes = c->o.chunk_bytes};
  int rc = sl_wire_send(c->sock, NULL, m, &c->frames, NULL, NULL, SL_WIRE_DONTWAIT, err, errlen);
  if (rc == SL_EAGAIN)
    return sl__msg_fail(SL_EIO, err, errlen, "partition %u: cannot ask the server for it now", c->part);
  return rc;
}

int sl_xfer_fetch_start_to(sl_xfer_client *c, sl_part_id part, const sl_xfer_dest *dest, char *err, size_t errlen)
{
  if (c->busy)
    return sl__msg_fail(SL_ESTATE, err, errlen, "partition %u: a fetch of %u is under way", part, c->part);
  c->part = part;
  c->tag++;
  c->dest = *dest;
  c->total = UINT64_MAX;
  c->received = 0;
  c->asked = (uint64_t)c->o.window * c->o.chunk_bytes;
  int rc = ask(c, 0, c->o.window, err, errlen);
  c->busy = rc == 0;
  return rc;
}

/* The destination of sl_xfer_fetch_start(): the client's buffer. */
static int put_in_buffer(void *ctx, uint64_t total, uint64_t offset, const void *data, size_t len, char *err,
                         size_t errlen)
{
  sl_xfer_client *c = ctx;
  if (total > c->cap)
    return sl__msg_fail(SL_EINVAL, err, errlen, "partition %u: %llu bytes, more than the buffer's %zu", c->part,
                        (unsigned long long)total, c->cap);
  memcpy(c->buf + offset, data, len);
  return 0;
}

int sl_xfer_fetch_start(sl_xfer_client *c, sl_part_id part, void *buf, size_t cap, char *err, size_t errlen)
{
  if (c->busy)
    return sl__msg_fail(SL_ESTATE, err, errlen, "partition %u: a fetch of %u is under way", part, c->part);
  c->buf = buf;
  c->cap = cap;
  sl_xfer_dest d = {put_in_buffer, c};
  return sl_xfer_fetch_start_to(c, part, &d, err, errlen);
}

/* Ends the fetch under way with @p code. */
static int end_fetch(sl_xfer_client *c, int code)
{
  c->busy = false;
  return code;
}

/* Takes in chunk @p k of the fetch under way: 0 when it was the last,
 * SL_EAGAIN when more are to come, else the fetch failed. */
static int take(sl_xfer_client *c, const sl_msg_chunk *k, size_t *len, char *err, size_t errlen)
{
  if (k->status == SL_ENOENT)
    return sl__msg_fail(SL_ENOENT, err, errlen, "partition %u: the server does not have it", c->part);
  if (k->status < 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "partition %u: the server refused the request: %s", c->part,
                        sl_strerror(k->status));
  if (c->total == UINT64_MAX)
    c->total = k->total;
  if (k->total != c->total)
    return sl__msg_fail(SL_EPROTO, err, errlen, "partition %u: a chunk says %llu bytes, the first said %llu",
                        c->part, (unsigned long long)k->total, (unsigned long long)c->total);
  if (k->offset != c->received)
    return sl__msg_fail(SL_EPROTO, err, errlen, "partition %u: a chunk at byte %llu, expected %llu", c->part,
                        (unsigned long long)k->offset, (unsigned long long)c->received);
  uint64_t at = k->offset;
  for (int i = 0; i < k->npayload; i++) { /* none for an empty partition, whose buffer may be NULL */
    int rc = c->dest.put(c->dest.ctx, c->total, at, k->payload[i].data, k->payload[i].len, err, errlen);
    if (rc == SL_EINVAL) /* too large for it: the size, for a larger one */
      *len = (size_t)(c->total < SIZE_MAX ? c->total : SIZE_MAX);
    if (rc)
      return rc;
    at += k->payload[i].len;
  }
  c->received += k->len;
  c->chunks++;
  if (k->flags & SL_MSG_CHUNK_LAST) {
    *len = (size_t)c->total;
    return 0;
  }
  if (c->asked < c->total) {
    int rc = ask(c, c->asked, 1, err, errlen);
    if (rc)
      return rc;
    c->asked += c->o.chunk_bytes;
  }
  return SL_EAGAIN;
}

int sl_xfer_fetch_step(sl_xfer_client *c, int wait_ms, size_t *len, char *err, size_t errlen)
{
  if (!c->busy)
    return sl__msg_fail(SL_ESTATE, err, errlen, "no fetch under way");
  int rc = sl_wire_wait(c->sock, wait_ms, err, errlen);
  if (rc < 0)
    return end_fetch(c, rc);
  while (rc > 0) {
    rc = sl_wire_recv(c->sock, c->in, NULL, &c->msg, SL_WIRE_DONTWAIT, err, errlen);
    if (rc == SL_EAGAIN)
      return SL_EAGAIN;
    if (rc == SL_EPROTO) {
      char why[200];
      snprintf(why, sizeof why, "%s", err && errlen ? err : "");
      return end_fetch(c,
                       sl__msg_fail(SL_EPROTO, err, errlen, "partition %u: a malformed answer: %s", c->part, why));
    }
    if (rc != 0)
      return end_fetch(c, rc);
    const sl_msg_chunk *k = &c->msg.u.chunk;
    if (c->msg.kind != SL_MSG_CHUNK || k->tag != c->tag || k->part != c->part) {
      rc = 1; /* a late chunk of a fetch given up on */
      continue;
    }
    rc = take(c, k, len, err, errlen);
    if (rc != SL_EAGAIN)
      return end_fetch(c, rc);
    rc = 1;
  }
  return SL_EAGAIN;
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Steps the fetch just started (@p rc its start's) until it ends, or no
 * chunk came for the options' timeout. */
static int fetch_until_done(sl_xfer_client *c, sl_part_id part, int rc, size_t *len, char *err, size_t errlen)
{
  double last = now_ms();
  uint64_t seen = c->chunks;
  while (rc == 0) {
    double left = last + c->o.timeout_ms - now_ms();
    if (left <= 0) {
      end_fetch(c, 0);
      return sl__msg_fail(SL_EIO, err, errlen, "partition %u: no chunk for %d ms", part, c->o.timeout_ms);
    }
    rc = sl_xfer_fetch_step(c, (int)left + 1, len, err, errlen);
    if (rc != SL_EAGAIN)
      return rc;
    rc = 0;
    if (c->chunks != seen) {
      seen = c->chunks;
      last = now_ms();
    }
  }
  return rc;
}

int sl_xfer_fetch(sl_xfer_client *c, sl_part_id part, void *buf, size_t cap, size_t *len, char *err, size_t errlen)
{
  return fetch_until_done(c, part, sl_xfer_fetch_start(c, part, buf, cap, err, errlen), len, err, errlen);
}

int sl_xfer_fetch_to(sl_xfer_client *c, sl_part_id part, const sl_xfer_dest *dest, size_t *len, char *err,
                     size_t errlen)
{
  return fetch_until_done(c, part, sl_xfer_fetch_start_to(c, part, dest, err, errlen), len, err, errlen);
}
