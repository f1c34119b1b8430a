#include "wire.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* A routing id, then the most frames a message has. */
enum { MAX_IN = 1 + SL_MSG_MAX_FRAMES };

struct sl_wire_in {
  zmq_msg_t f[MAX_IN];
  int n;
};

sl_wire_in *sl_wire_in_new(void)
{
  sl_wire_in *in = calloc(1, sizeof *in);
  return in;
}

static void release(sl_wire_in *in)
{
  for (int i = 0; i < in->n; i++)
    zmq_msg_close(&in->f[i]);
  in->n = 0;
}

void sl_wire_in_free(sl_wire_in *in)
{
  if (!in)
    return;
  release(in);
  free(in);
}

/* ZeroMQ's last error as one of ours, said in @p err for SL_EIO. */
static int zmq_fail(const char *what, char *err, size_t errlen)
{
  int e = zmq_errno();
  switch (e) {
  case EAGAIN:
    return SL_EAGAIN;
  case EINTR:
    return SL_EINTR;
  case ENOMEM:
    return SL_ENOMEM;
  default:
    if (err && errlen)
      snprintf(err, errlen, "%s: %s", what, zmq_strerror(e));
    return SL_EIO;
  }
}

/* Receives the rest of a message too long to keep; how many frames it had. */
static int drain(void *sock, int have)
{
  zmq_msg_t f;
  zmq_msg_init(&f);
  do {
    if (zmq_msg_recv(&f, sock, 0) < 0)
      break;
    have++;
  } while (zmq_msg_more(&f));
  zmq_msg_close(&f);
  return have;
}

int sl_wire_recv(void *sock, sl_wire_in *in, sl_wire_peer *from, sl_msg *m, int flags, char *err, size_t errlen)
{
  release(in);
  int zflags = flags & SL_WIRE_DONTWAIT ? ZMQ_DONTWAIT : 0;
  bool more = true;
  while (more) {
    if (in->n == MAX_IN) {
      int n = drain(sock, in->n);
      if (err && errlen)
        snprintf(err, errlen, "a message of %d frames, at most %d", n - (from ? 1 : 0), SL_MSG_MAX_FRAMES);
      return SL_EPROTO;
    }
    zmq_msg_t *f = &in->f[in->n];
    zmq_msg_init(f);
    if (zmq_msg_recv(f, sock, in->n ? 0 : zflags) < 0) {
      zmq_msg_close(f);
      return zmq_fail("receive", err, errlen);
    }
    in->n++;
    more = zmq_msg_more(f);
  }
  int first = 0;
  if (from) {
    size_t len = zmq_msg_size(&in->f[0]);
    from->len = (uint8_t)(len < sizeof from->id ? len : sizeof from->id);
    memcpy(from->id, zmq_msg_data(&in->f[0]), from->len);
    first = 1;
  }
  sl_msg_part parts[SL_MSG_MAX_FRAMES];
  for (int i = first; i < in->n; i++)
    parts[i - first] = (sl_msg_part){zmq_msg_data(&in->f[i]), zmq_msg_size(&in->f[i])};
  return sl_msg_decode(parts, in->n - first, m, err, errlen);
}

void sl_wire_set_int(void *sock, int opt, int v)
{
  (void)zmq_setsockopt(sock, opt, &v, sizeof v);
}

void *sl_wire_open(void *zctx, int type, const char *endpoint, const sl_wire_opt *opts, int nopts, char *bound,
                   size_t boundlen, const char *who, char *err, size_t errlen)
{
  void *sock = zmq_socket(zctx, type);
  if (!sock) {
    sl__msg_fail(SL_EIO, err, errlen, "%s: %s", who, zmq_strerror(zmq_errno()));
    return NULL;
  }
  bool binds = type == ZMQ_ROUTER;
  sl_wire_set_int(sock, ZMQ_LINGER, 0);
  if (binds)
    sl_wire_set_int(sock, ZMQ_ROUTER_MANDATORY, 1);
  for (int i = 0; i < nopts; i++)
    sl_wire_set_int(sock, opts[i].opt, opts[i].value);
  if ((binds ? zmq_bind(sock, endpoint) : zmq_connect(sock, endpoint)) != 0) {
    sl__msg_fail(SL_EIO, err, errlen, "%s: cannot %s %s: %s", who, binds ? "bind" : "connect to", endpoint,
                 zmq_strerror(zmq_errno()));
    zmq_close(sock);
    return NULL;
  }
  size_t len = boundlen;
  if (binds && bound && boundlen && zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, bound, &len) != 0)
    snprintf(bound, boundlen, "%s", endpoint);
  return sock;
}

int sl_wire_wait(void *sock, int wait_ms, char *err, size_t errlen)
{
  zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLIN};
  int rc = zmq_poll(&it, 1, wait_ms);
  if (rc >= 0)
    return rc;
  if (zmq_errno() == EINTR)
    return SL_EINTR;
  if (err && errlen)
    snprintf(err, errlen, "poll: %s", zmq_strerror(zmq_errno()));
  return SL_EIO;
}

/* Whether frame @p i of @p m's encoding is a CHUNK's payload. */
static bool is_payload(const sl_msg *m, int i)
{
  return m->kind == SL_MSG_CHUNK && i > 0;
}

/* Hands every non-empty payload part of @p m to @p ffn: a send that never
 * built its frames keeps the promise that each is freed once. */
static void free_payload(const sl_msg *m, sl_wire_free_fn ffn, void *hint)
{
  if (!ffn || m->kind != SL_MSG_CHUNK || m->u.chunk.npayload < 0 || m->u.chunk.npayload > SL_MSG_MAX_PAYLOAD)
    return;
  for (int i = 0; i < m->u.chunk.npayload; i++)
    if (m->u.chunk.payload[i].len)
      ffn((void *)m->u.chunk.payload[i].data, hint);
}

int sl_wire_send(void *sock, const sl_wire_peer *to, const sl_msg *m, sl_msg_frames *scratch, sl_wire_free_fn ffn,
                 void *hint, int flags, char *err, size_t errlen)
{
  int rc = sl_msg_encode(m, scratch, err, errlen);
  if (rc) {
    free_payload(m, ffn, hint);
    return rc;
  }
  zmq_msg_t f[MAX_IN];
  int n = 0, sent = 0;
  if (to) {
    zmq_msg_init_size(&f[n], to->len);
    memcpy(zmq_msg_data(&f[n++]), to->id, to->len);
  }
  for (int i = 0; i < scratch->nparts; i++) {
    const sl_msg_part *p = &scratch->part[i];
    if (ffn && is_payload(m, i)) {
      zmq_msg_init_data(&f[n++], (void *)p->data, p->len, ffn, hint);
      continue;
    }
    if (zmq_msg_init_size(&f[n], p->len) != 0) {
      rc = SL_ENOMEM;
      goto close_unsent;
    }
    if (p->len)
      memcpy(zmq_msg_data(&f[n]), p->data, p->len);
    n++;
  }
  int zflags = flags & SL_WIRE_DONTWAIT ? ZMQ_DONTWAIT : 0;
  for (; sent < n; sent++)
    if (zmq_msg_send(&f[sent], sock, (sent ? 0 : zflags) | (sent + 1 < n ? ZMQ_SNDMORE : 0)) < 0) {
      rc = zmq_fail("send", err, errlen);
      goto close_unsent;
    }
  return 0;

close_unsent:
  /* ZeroMQ owns what it took; the rest is ours to close, and closing a
   * payload frame calls ffn. Payload parts never built are freed too. */
  for (int i = sent; i < n; i++)
    zmq_msg_close(&f[i]);
  if (ffn)
    for (int i = n - (to ? 1 : 0); i < scratch->nparts; i++)
      if (is_payload(m, i))
        ffn((void *)scratch->part[i].data, hint);
  return rc;
}
