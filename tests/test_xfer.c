/* Partition transfer (transport/xfer.h) over inproc:// and over TCP on
 * 127.0.0.1: partitions of 0 bytes, 1 byte, sizes that are no multiple of
 * the chunk, several buffers and 100 MB arrive whole; the client never has
 * more chunks asked for than its window, and the server never sends more
 * than it was asked; published buffers are sent without a copy and
 * released once the last frame is done; and every way a fetch fails is
 * reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "transport/wire.h"
#include "transport/xfer.h"

#define MB (1000 * 1000)

/* A server answering in a thread of its own until told to stop. */
typedef struct {
  void *zctx;
  sl_xfer_server *s;
  pthread_t th;
  atomic_bool stop;
} server;

static void *serve(void *arg)
{
  server *sv = arg;
  char err[256];
  while (!atomic_load(&sv->stop)) {
    int rc = sl_xfer_server_serve(sv->s, 10, err, sizeof err);
    if (rc < 0 && rc != SL_EINTR)
      fail_msg("serve: %s", err);
  }
  return NULL;
}

/* Binds a server at @p endpoint; start it with server_start() once its
 * partitions are published (the table is the serving thread's after). */
static void server_new(server *sv, void *zctx, const char *endpoint)
{
  char err[256];
  sv->zctx = zctx;
  sv->s = sl_xfer_server_new(zctx, endpoint, err, sizeof err);
  if (!sv->s)
    fail_msg("%s", err);
  atomic_init(&sv->stop, false);
}

static void server_start(server *sv)
{
  assert_int_equal(pthread_create(&sv->th, NULL, serve, sv), 0);
}

static void server_stop(server *sv)
{
  atomic_store(&sv->stop, true);
  pthread_join(sv->th, NULL);
}

/* Counts releases: the test's stand-in for a store's unpin. */
static atomic_int released;

static void release(void *ctx)
{
  (void)ctx;
  atomic_fetch_add(&released, 1);
}

/* @p n bytes that differ with their position and @p seed. */
static uint8_t *pattern(size_t n, uint32_t seed)
{
  uint8_t *p = malloc(n ? n : 1);
  assert_non_null(p);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (uint8_t)x;
  }
  return p;
}

static sl_xfer_client *client_new(void *zctx, const char *endpoint, uint32_t chunk, uint32_t window)
{
  sl_xfer_opts o;
  sl_xfer_opts_default(&o);
  o.chunk_bytes = chunk;
  o.window = window;
  char err[256];
  sl_xfer_client *c = sl_xfer_client_new(zctx, endpoint, &o, err, sizeof err);
  if (!c)
    fail_msg("%s", err);
  return c;
}

/* A destination that checks the bytes come in order from 0 and compares
 * them with what was published. */
typedef struct {
  const uint8_t *want;
  size_t n, next;
} in_order;

static int put_in_order(void *ctx, uint64_t total, uint64_t offset, const void *data, size_t len, char *err,
                        size_t errlen)
{
  in_order *o = ctx;
  if (total != o->n || offset != o->next || len == 0 || len > o->n - o->next ||
      memcmp(data, o->want + offset, len) != 0) {
    snprintf(err, errlen, "bytes %llu+%zu of %llu, expected at %zu of %zu", (unsigned long long)offset, len,
             (unsigned long long)total, o->next, o->n);
    return SL_EPROTO;
  }
  o->next += len;
  return 0;
}

/* Fetches partition @p part into a fresh buffer and compares it with
 * @p want; then again through a destination that takes it piece by piece. */
static void fetch_and_check(sl_xfer_client *c, sl_part_id part, const uint8_t *want, size_t n)
{
  uint8_t *got = malloc(n ? n : 1);
  assert_non_null(got);
  size_t len = 12345;
  char err[256] = "";
  int rc = sl_xfer_fetch(c, part, got, n, &len, err, sizeof err);
  if (rc)
    fail_msg("fetch of partition %u (%zu bytes): %s", part, n, err);
  assert_int_equal(len, n);
  assert_memory_equal(got, want, n);
  free(got);
  in_order o = {want, n, 0};
  sl_xfer_dest d = {put_in_order, &o};
  if ((rc = sl_xfer_fetch_to(c, part, &d, &len, err, sizeof err)) != 0)
    fail_msg("fetch of partition %u (%zu bytes) to a destination: %s", part, n, err);
  assert_int_equal(len, n);
  assert_int_equal(o.next, n);
}

/* A destination that takes nothing: its refusal ends the fetch. */
static int put_nothing(void *ctx, uint64_t total, uint64_t offset, const void *data, size_t len, char *err,
                       size_t errlen)
{
  (void)ctx, (void)total, (void)offset, (void)data, (void)len;
  snprintf(err, errlen, "not what this takes");
  return SL_EPROTO;
}

/* Every size over @p endpoint: published, fetched twice (a second fetch
 * by the same client), withdrawn and released once. */
static void transfer_sizes(const char *endpoint)
{
  const uint32_t chunk = 64 * 1024;
  const size_t sizes[] = {0, 1, chunk - 1, chunk, 3 * (size_t)chunk + 17, 100 * MB};
  const int n = (int)(sizeof sizes / sizeof sizes[0]);
  void *zctx = zmq_ctx_new();
  server sv;
  server_new(&sv, zctx, endpoint);
  uint8_t *data[6];
  atomic_store(&released, 0);
  for (int i = 0; i < n; i++) {
    data[i] = pattern(sizes[i], (uint32_t)i);
    sl_xfer_seg seg = {data[i], sizes[i]};
    assert_int_equal(sl_xfer_server_publish(sv.s, (sl_part_id)i, &seg, 1, release, NULL), 0);
  }
  server_start(&sv);
  /* the 100 MB goes in chunks of 1 MB, the rest in small ones */
  sl_xfer_client *small = client_new(zctx, sl_xfer_server_endpoint(sv.s), chunk, 4);
  sl_xfer_client *big = client_new(zctx, sl_xfer_server_endpoint(sv.s), 1 << 20, 8);
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < n; i++)
      fetch_and_check(sizes[i] > 10 * MB ? big : small, (sl_part_id)i, data[i], sizes[i]);
  server_stop(&sv);
  for (int i = 0; i < n; i++)
    assert_int_equal(sl_xfer_server_withdraw(sv.s, (sl_part_id)i), 0);
  sl_xfer_client_free(small);
  sl_xfer_client_free(big);
  sl_xfer_server_free(sv.s);
  zmq_ctx_term(zctx); /* ZeroMQ has let every frame go */
  assert_int_equal(atomic_load(&released), n); /* once each, the empty one too */
  for (int i = 0; i < n; i++)
    free(data[i]);
}

static void test_sizes_over_inproc(void **state)
{
  (void)state;
  transfer_sizes("inproc://xfer-sizes");
}

static void test_sizes_over_tcp(void **state)
{
  (void)state;
  transfer_sizes("tcp://127.0.0.1:*");
}

/* A partition in three buffers, chunks cut across them. */
static void test_partition_in_several_buffers(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  server sv;
  server_new(&sv, zctx, "tcp://127.0.0.1:*");
  uint8_t *whole = pattern(1000, 7);
  sl_xfer_seg segs[] = {{whole, 10}, {whole + 10, 0}, {whole + 10, 333}, {whole + 343, 657}};
  assert_int_equal(sl_xfer_server_publish(sv.s, 1, segs, 4, NULL, NULL), 0);
  server_start(&sv);
  const uint32_t chunks[] = {1, 7, 100, 343, 999, 1000, 4096};
  for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    sl_xfer_client *c = client_new(zctx, sl_xfer_server_endpoint(sv.s), chunks[i], 3);
    fetch_and_check(c, 1, whole, 1000);
    sl_xfer_client_free(c);
  }
  server_stop(&sv);
  sl_xfer_server_free(sv.s);
  zmq_ctx_term(zctx);
  free(whole);
}

/* Three clients in threads of their own, over TCP, at once. */
typedef struct {
  void *zctx;
  const char *endpoint;
  uint8_t *const *data;
  size_t n;
} reader_arg;

static void *reader(void *arg)
{
  reader_arg *a = arg;
  sl_xfer_client *c = client_new(a->zctx, a->endpoint, 4096, 4);
  for (int round = 0; round < 3; round++)
    for (sl_part_id p = 0; p < 2; p++)
      fetch_and_check(c, p, a->data[p], a->n);
  sl_xfer_client_free(c);
  return NULL;
}

static void test_clients_at_once(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  server sv;
  server_new(&sv, zctx, "tcp://127.0.0.1:*");
  const size_t n = 300 * 1000 + 3;
  uint8_t *data[2] = {pattern(n, 1), pattern(n, 2)};
  for (sl_part_id p = 0; p < 2; p++) {
    sl_xfer_seg seg = {data[p], n};
    assert_int_equal(sl_xfer_server_publish(sv.s, p, &seg, 1, NULL, NULL), 0);
  }
  server_start(&sv);
  pthread_t th[3];
  reader_arg a = {zctx, sl_xfer_server_endpoint(sv.s), data, n};
  for (int i = 0; i < 3; i++)
    assert_int_equal(pthread_create(&th[i], NULL, reader, &a), 0);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  server_stop(&sv);
  sl_xfer_server_free(sv.s);
  zmq_ctx_term(zctx);
  free(data[0]);
  free(data[1]);
}

/* The client's window, seen from a server played by the test: it owes the
 * chunks asked for and sends them one at a time, and the chunks asked for
 * and not yet sent, plus those sent and not yet taken in, never pass the
 * window. */
static void test_client_keeps_its_window(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  void *router = zmq_socket(zctx, ZMQ_ROUTER);
  assert_int_equal(zmq_bind(router, "inproc://window"), 0);
  const uint32_t chunk = 100, window = 3;
  const size_t total = 2550; /* 26 chunks, the last of 50 bytes */
  uint8_t *data = pattern(total, 3), *got = malloc(total);
  assert_non_null(got);
  sl_xfer_client *c = client_new(zctx, "inproc://window", chunk, window);
  char err[256];
  assert_int_equal(sl_xfer_fetch_start(c, 9, got, total, err, sizeof err), 0);

  sl_wire_in *in = sl_wire_in_new();
  sl_msg m, out;
  sl_msg_init(&m);
  sl_msg_init(&out);
  sl_msg_frames frames = {0};
  sl_wire_peer peer;
  /* chunks asked for from byte owed_from on, not sent yet: owed; asked
   * past the end, never to be sent: voided. Every chunk sent is taken in
   * by the step that follows it (inproc delivers at once). */
  uint64_t owed_from = 0, owed = 0, asked = 0, sent = 0, voided = 0, most = 0;
  int rc = SL_EAGAIN;
  size_t len = 0;
  while (rc == SL_EAGAIN) {
    while (sl_wire_recv(router, in, &peer, &m, SL_WIRE_DONTWAIT, err, sizeof err) == 0) {
      assert_int_equal(m.kind, SL_MSG_FETCH);
      assert_int_equal(m.u.fetch.part, 9);
      assert_int_equal(m.u.fetch.chunk_bytes, chunk);
      assert_true(m.u.fetch.offset == owed_from + owed * chunk); /* each ask goes on where the last ended */
      owed += m.u.fetch.credit;
      asked += m.u.fetch.credit;
    }
    uint64_t in_flight = asked - voided - sent;
    assert_true(in_flight <= window);
    most = in_flight > most ? in_flight : most;
    if (owed && owed_from < total) {
      uint64_t n = total - owed_from < chunk ? total - owed_from : chunk;
      out.kind = SL_MSG_CHUNK;
      out.node = -1;
      out.u.chunk = (sl_msg_chunk){.part = 9, .tag = m.u.fetch.tag, .offset = owed_from, .total = total,
                                   .len = n, .npayload = 1};
      out.u.chunk.flags = owed_from + n == total ? SL_MSG_CHUNK_LAST : 0;
      out.u.chunk.payload[0] = (sl_msg_part){data + owed_from, n};
      assert_int_equal(sl_wire_send(router, &peer, &out, &frames, NULL, NULL, 0, err, sizeof err), 0);
      owed_from += n;
      owed--;
      sent++;
    } else {
      voided += owed;
      owed = 0;
    }
    rc = sl_xfer_fetch_step(c, 0, &len, err, sizeof err);
  }
  if (rc)
    fail_msg("%s", err);
  assert_int_equal(len, total);
  assert_memory_equal(got, data, total);
  assert_true(most == window); /* it did fill its window */
  assert_true(sent == 26);

  sl_msg_frames_free(&frames);
  sl_msg_free(&m);
  sl_msg_free(&out);
  sl_wire_in_free(in);
  sl_xfer_client_free(c);
  zmq_close(router);
  zmq_ctx_term(zctx);
  free(data);
  free(got);
}

/* Sends FETCH @p f on DEALER @p d. */
static void send_fetch(void *d, sl_msg_fetch f)
{
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_FETCH;
  m.node = -1;
  m.u.fetch = f;
  sl_msg_frames frames = {0};
  char err[256];
  assert_int_equal(sl_wire_send(d, NULL, &m, &frames, NULL, NULL, 0, err, sizeof err), 0);
  sl_msg_frames_free(&frames);
}

/* The server sends what it is asked, no more, without a copy, and lets
 * the partition go once withdrawn and ZeroMQ holds none of its frames. */
static void test_server_sends_what_it_is_asked_without_a_copy(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  server sv;
  server_new(&sv, zctx, "inproc://credit");
  uint8_t *data = pattern(1000, 4);
  atomic_store(&released, 0);
  sl_xfer_seg seg = {data, 1000};
  assert_int_equal(sl_xfer_server_publish(sv.s, 5, &seg, 1, release, NULL), 0);
  void *d = zmq_socket(zctx, ZMQ_DEALER);
  assert_int_equal(zmq_connect(d, "inproc://credit"), 0);
  send_fetch(d, (sl_msg_fetch){.part = 5, .tag = 1, .offset = 200, .credit = 3, .chunk_bytes = 100});
  char err[256];
  assert_int_equal(sl_xfer_server_serve(sv.s, 1000, err, sizeof err), 1);

  /* three chunks, from byte 200, each pointing at the published bytes
   * themselves (inproc hands the frames over as they are) */
  sl_wire_in *in[4];
  sl_msg m;
  sl_msg_init(&m);
  for (int i = 0; i < 3; i++) {
    in[i] = sl_wire_in_new();
    assert_int_equal(sl_wire_recv(d, in[i], NULL, &m, 0, err, sizeof err), 0);
    assert_int_equal(m.kind, SL_MSG_CHUNK);
    assert_int_equal(m.u.chunk.tag, 1);
    assert_true(m.u.chunk.offset == 200 + 100 * (uint64_t)i && m.u.chunk.len == 100);
    assert_true(m.u.chunk.total == 1000 && m.u.chunk.flags == 0);
    assert_ptr_equal(m.u.chunk.payload[0].data, data + 200 + 100 * i);
  }
  in[3] = sl_wire_in_new();
  assert_int_equal(sl_wire_recv(d, in[3], NULL, &m, SL_WIRE_DONTWAIT, err, sizeof err), SL_EAGAIN);

  /* withdrawn, but the client still holds three frames of it */
  assert_int_equal(sl_xfer_server_withdraw(sv.s, 5), 0);
  assert_int_equal(sl_xfer_server_withdraw(sv.s, 5), SL_ENOENT);
  assert_int_equal(atomic_load(&released), 0);
  for (int i = 0; i < 2; i++)
    sl_wire_in_free(in[i]);
  assert_int_equal(atomic_load(&released), 0);
  sl_wire_in_free(in[2]);
  assert_int_equal(atomic_load(&released), 1);

  /* withdrawn: refused */
  send_fetch(d, (sl_msg_fetch){.part = 5, .tag = 2, .offset = 0, .credit = 1, .chunk_bytes = 100});
  assert_int_equal(sl_xfer_server_serve(sv.s, 1000, err, sizeof err), 1);
  assert_int_equal(sl_wire_recv(d, in[3], NULL, &m, 0, err, sizeof err), 0);
  assert_int_equal(m.u.chunk.status, SL_ENOENT);
  assert_int_equal(m.u.chunk.tag, 2);

  /* a request past the end is refused; garbage is dropped, not answered */
  seg.len = 10;
  assert_int_equal(sl_xfer_server_publish(sv.s, 6, &seg, 1, NULL, NULL), 0);
  send_fetch(d, (sl_msg_fetch){.part = 6, .tag = 3, .offset = 10, .credit = 1, .chunk_bytes = 100});
  assert_int_equal(zmq_send(d, "garbage", 7, 0), 7);
  send_fetch(d, (sl_msg_fetch){.part = 6, .tag = 4, .offset = 4, .credit = 5, .chunk_bytes = 5});
  int answered = 0;
  while (answered < 2)
    answered += sl_xfer_server_serve(sv.s, 1000, err, sizeof err);
  assert_int_equal(answered, 2);
  assert_int_equal(sl_wire_recv(d, in[3], NULL, &m, 0, err, sizeof err), 0);
  assert_int_equal(m.u.chunk.tag, 3);
  assert_int_equal(m.u.chunk.status, SL_EINVAL);
  /* from byte 4 in chunks of 5: two, the second short and last */
  assert_int_equal(sl_wire_recv(d, in[3], NULL, &m, 0, err, sizeof err), 0);
  assert_true(m.u.chunk.offset == 4 && m.u.chunk.len == 5 && m.u.chunk.flags == 0);
  assert_int_equal(sl_wire_recv(d, in[3], NULL, &m, 0, err, sizeof err), 0);
  assert_true(m.u.chunk.offset == 9 && m.u.chunk.len == 1 && m.u.chunk.flags == SL_MSG_CHUNK_LAST);
  assert_int_equal(sl_wire_recv(d, in[3], NULL, &m, SL_WIRE_DONTWAIT, err, sizeof err), SL_EAGAIN);

  sl_wire_in_free(in[3]);
  sl_msg_free(&m);
  zmq_close(d);
  sl_xfer_server_free(sv.s);
  zmq_ctx_term(zctx);
  free(data);
}

static void test_publish_refuses_duplicates_and_too_many_buffers(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  char err[256];
  sl_xfer_server *s = sl_xfer_server_new(zctx, "inproc://publish", err, sizeof err);
  assert_non_null(s);
  static const char bytes[] = "abcdefghij";
  sl_xfer_seg segs[SL_XFER_MAX_SEGS + 1];
  for (int i = 0; i <= SL_XFER_MAX_SEGS; i++)
    segs[i] = (sl_xfer_seg){bytes + i, 1};
  assert_int_equal(sl_xfer_server_publish(s, 1, segs, SL_XFER_MAX_SEGS + 1, NULL, NULL), SL_EINVAL);
  assert_int_equal(sl_xfer_server_publish(s, 1, segs, SL_XFER_MAX_SEGS, NULL, NULL), 0);
  assert_int_equal(sl_xfer_server_publish(s, 1, segs, 1, NULL, NULL), SL_EINVAL);
  /* many partitions: the table grows */
  for (sl_part_id p = 2; p < 1000; p++)
    assert_int_equal(sl_xfer_server_publish(s, p, segs, 1, NULL, NULL), 0);
  for (sl_part_id p = 999; p >= 2; p--)
    assert_int_equal(sl_xfer_server_withdraw(s, p), 0);
  assert_int_equal(sl_xfer_server_withdraw(s, 2), SL_ENOENT);
  sl_xfer_server_free(s);
  assert_null(sl_xfer_server_new(zctx, "bogus://x", err, sizeof err));
  assert_non_null(strstr(err, "cannot bind bogus://x"));
  zmq_ctx_term(zctx);
}

/* Every way a fetch fails, and a client that goes on after each. */
static void test_failed_fetches(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  server sv;
  server_new(&sv, zctx, "tcp://127.0.0.1:*");
  uint8_t *data = pattern(10000, 5);
  sl_xfer_seg seg = {data, 10000};
  assert_int_equal(sl_xfer_server_publish(sv.s, 1, &seg, 1, NULL, NULL), 0);
  assert_int_equal(sl_xfer_server_publish(sv.s, 3, NULL, 0, NULL, NULL), 0); /* empty */
  server_start(&sv);
  sl_xfer_opts o;
  sl_xfer_opts_default(&o);
  o.chunk_bytes = 1000;
  o.window = 4;
  o.timeout_ms = 200;
  char err[256];
  sl_xfer_client *c = sl_xfer_client_new(zctx, sl_xfer_server_endpoint(sv.s), &o, err, sizeof err);
  assert_non_null(c);
  uint8_t buf[10000];
  size_t len = 0;

  /* an empty partition needs no buffer at all */
  assert_int_equal(sl_xfer_fetch(c, 3, NULL, 0, &len, err, sizeof err), 0);
  assert_int_equal(len, 0);

  assert_int_equal(sl_xfer_fetch(c, 2, buf, sizeof buf, &len, err, sizeof err), SL_ENOENT);
  assert_non_null(strstr(err, "partition 2: the server does not have it"));
  assert_false(sl_xfer_fetching(c));

  /* too small a buffer: the size is said; the chunks still on their way
   * are ignored by the next fetch of the same partition */
  assert_int_equal(sl_xfer_fetch(c, 1, buf, 9999, &len, err, sizeof err), SL_EINVAL);
  assert_int_equal(len, 10000);
  assert_non_null(strstr(err, "10000 bytes, more than the buffer's 9999"));
  fetch_and_check(c, 1, data, 10000);

  /* a destination that refuses the bytes ends the fetch with its refusal */
  sl_xfer_dest none = {put_nothing, NULL};
  assert_int_equal(sl_xfer_fetch_to(c, 1, &none, &len, err, sizeof err), SL_EPROTO);
  assert_non_null(strstr(err, "not what this takes"));
  assert_false(sl_xfer_fetching(c));
  fetch_and_check(c, 1, data, 10000);

  /* one fetch at a time */
  assert_int_equal(sl_xfer_fetch_start(c, 1, buf, sizeof buf, err, sizeof err), 0);
  assert_true(sl_xfer_fetching(c));
  assert_int_equal(sl_xfer_fetch_start(c, 1, buf, sizeof buf, err, sizeof err), SL_ESTATE);
  int rc;
  while ((rc = sl_xfer_fetch_step(c, 100, &len, err, sizeof err)) == SL_EAGAIN)
    ;
  assert_int_equal(rc, 0);
  assert_int_equal(sl_xfer_fetch_step(c, 0, &len, err, sizeof err), SL_ESTATE);

  /* the server gone: no chunk for timeout_ms */
  server_stop(&sv);
  sl_xfer_server_free(sv.s);
  assert_int_equal(sl_xfer_fetch(c, 1, buf, sizeof buf, &len, err, sizeof err), SL_EIO);
  assert_non_null(strstr(err, "no chunk for 200 ms"));
  assert_false(sl_xfer_fetching(c));
  sl_xfer_client_free(c);

  o.window = 0;
  assert_null(sl_xfer_client_new(zctx, "tcp://127.0.0.1:1", &o, err, sizeof err));
  assert_non_null(strstr(err, "both must be positive"));
  zmq_ctx_term(zctx);
  free(data);
}

/* A lookup that publishes partition 7 once the test says it is stored,
 * as a worker's store does for an output that came a moment late. */
typedef struct {
  atomic_bool stored;
  const uint8_t *data;
  size_t n;
} late_store;

static void publish_when_stored(void *ctx, sl_xfer_server *s, sl_part_id part)
{
  late_store *ls = ctx;
  sl_xfer_seg seg = {ls->data, ls->n};
  if (part == 7 && atomic_load(&ls->stored))
    assert_int_equal(sl_xfer_server_publish(s, part, &seg, 1, NULL, NULL), 0);
}

static double ms_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A FETCH of a partition not stored yet waits on the server (parking)
 * and is answered once it is, with no second FETCH; one never stored is
 * answered SL_ENOENT when its wait is over. Without parking the first
 * fetch below ends SL_ENOENT at once, and its client must ask again. */
static void test_fetch_waits_for_a_partition_stored_late(void **state)
{
  (void)state;
  void *zctx = zmq_ctx_new();
  server sv;
  server_new(&sv, zctx, "tcp://127.0.0.1:*");
  uint8_t *data = pattern(5000, 9);
  late_store ls = {.data = data, .n = 5000};
  atomic_init(&ls.stored, false);
  sl_xfer_server_set_lookup(sv.s, publish_when_stored, &ls);
  sl_xfer_server_set_park(sv.s, 1000);
  assert_int_equal(sl_xfer_server_parked(sv.s), 0);
  server_start(&sv);
  sl_xfer_opts o;
  sl_xfer_opts_default(&o);
  o.chunk_bytes = 1000;
  o.timeout_ms = 3000;
  char err[256];
  sl_xfer_client *c = sl_xfer_client_new(zctx, sl_xfer_server_endpoint(sv.s), &o, err, sizeof err);
  assert_non_null(c);
  uint8_t buf[5000];
  size_t len = 0;
  assert_int_equal(sl_xfer_fetch_start(c, 7, buf, sizeof buf, err, sizeof err), 0);
  int rc;
  double t0 = ms_now();
  while ((rc = sl_xfer_fetch_step(c, 10, &len, err, sizeof err)) == SL_EAGAIN && ms_now() - t0 < 60)
    ;
  assert_int_equal(rc, SL_EAGAIN); /* no answer yet: the FETCH waits */
  atomic_store(&ls.stored, true);
  while ((rc = sl_xfer_fetch_step(c, 10, &len, err, sizeof err)) == SL_EAGAIN)
    ;
  assert_int_equal(rc, 0);
  assert_int_equal(len, 5000);
  assert_memory_equal(buf, data, 5000);
  assert_true(ms_now() - t0 < 700); /* on the serve loop's next turn, not at the park's end */

  /* never stored: SL_ENOENT once the wait is over, before the client's timeout */
  t0 = ms_now();
  assert_int_equal(sl_xfer_fetch(c, 8, buf, sizeof buf, &len, err, sizeof err), SL_ENOENT);
  double waited = ms_now() - t0;
  assert_true(waited >= 990 && waited < 2900);
  server_stop(&sv);
  assert_int_equal(sl_xfer_server_parked(sv.s), 0);
  sl_xfer_client_free(c);
  sl_xfer_server_free(sv.s);
  zmq_ctx_term(zctx);
  free(data);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes_over_inproc),
      cmocka_unit_test(test_sizes_over_tcp),
      cmocka_unit_test(test_partition_in_several_buffers),
      cmocka_unit_test(test_clients_at_once),
      cmocka_unit_test(test_client_keeps_its_window),
      cmocka_unit_test(test_server_sends_what_it_is_asked_without_a_copy),
      cmocka_unit_test(test_publish_refuses_duplicates_and_too_many_buffers),
      cmocka_unit_test(test_failed_fetches),
      cmocka_unit_test(test_fetch_waits_for_a_partition_stored_late),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
