/* Messages over ZeroMQ sockets (transport/wire.h): a ROUTER learns who
 * sent and answers that peer, and a wait sees a message come; a malformed
 * message, even one of too many frames, is consumed whole and refused,
 * and the next one reads fine; a payload sent without a copy is handed
 * back exactly once per frame, whether the send went or failed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>
#include <zmq.h>

#include "transport/wire.h"

typedef struct {
  void *zctx, *router, *dealer;
  sl_wire_in *in;
  sl_msg m;
  sl_msg_frames frames;
} fixture;

static int setup(void **state)
{
  static fixture f;
  memset(&f, 0, sizeof f);
  f.zctx = zmq_ctx_new();
  f.router = zmq_socket(f.zctx, ZMQ_ROUTER);
  f.dealer = zmq_socket(f.zctx, ZMQ_DEALER);
  int one = 1, zero = 0;
  zmq_setsockopt(f.router, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
  zmq_setsockopt(f.router, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(f.dealer, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(f.dealer, ZMQ_ROUTING_ID, "w1", 2);
  assert_int_equal(zmq_bind(f.router, "inproc://wire"), 0);
  assert_int_equal(zmq_connect(f.dealer, "inproc://wire"), 0);
  f.in = sl_wire_in_new();
  assert_non_null(f.in);
  sl_msg_init(&f.m);
  *state = &f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;
  sl_msg_free(&f->m);
  sl_msg_frames_free(&f->frames);
  sl_wire_in_free(f->in);
  zmq_close(f->dealer);
  zmq_close(f->router);
  zmq_ctx_term(f->zctx);
  return 0;
}

static void heartbeat(sl_msg *m, uint64_t seq)
{
  m->kind = SL_MSG_HEARTBEAT;
  m->node = 3;
  m->incarnation = 4;
  m->u.heartbeat.seq = seq;
}

static void test_router_answers_who_sent(void **state)
{
  fixture *f = *state;
  char err[256];
  sl_wire_peer from;
  assert_int_equal(sl_wire_recv(f->router, f->in, &from, &f->m, SL_WIRE_DONTWAIT, err, sizeof err), SL_EAGAIN);
  assert_int_equal(sl_wire_wait(f->router, 0, err, sizeof err), 0);
  heartbeat(&f->m, 1);
  assert_int_equal(sl_wire_send(f->dealer, NULL, &f->m, &f->frames, NULL, NULL, 0, err, sizeof err), 0);
  assert_int_equal(sl_wire_wait(f->router, 1000, err, sizeof err), 1);
  assert_int_equal(sl_wire_recv(f->router, f->in, &from, &f->m, 0, err, sizeof err), 0);
  assert_int_equal(from.len, 2);
  assert_memory_equal(from.id, "w1", 2);
  assert_int_equal(f->m.kind, SL_MSG_HEARTBEAT);
  assert_int_equal(f->m.u.heartbeat.seq, 1);
  heartbeat(&f->m, 2);
  assert_int_equal(sl_wire_send(f->router, &from, &f->m, &f->frames, NULL, NULL, 0, err, sizeof err), 0);
  assert_int_equal(sl_wire_recv(f->dealer, f->in, NULL, &f->m, 0, err, sizeof err), 0);
  assert_int_equal(f->m.u.heartbeat.seq, 2);
  assert_int_equal(f->m.node, 3);
  /* a peer the ROUTER does not know: the send fails and says so */
  sl_wire_peer nobody = {.len = 3, .id = "w99"};
  assert_int_equal(sl_wire_send(f->router, &nobody, &f->m, &f->frames, NULL, NULL, 0, err, sizeof err), SL_EIO);
  assert_non_null(strstr(err, "send: "));
}

static void test_malformed_messages_are_consumed_whole(void **state)
{
  fixture *f = *state;
  char err[256];
  /* garbage, then a message of too many frames, then a good one */
  assert_int_equal(zmq_send(f->dealer, "garbage", 7, 0), 7);
  for (int i = 0; i < SL_MSG_MAX_FRAMES + 3; i++)
    assert_int_equal(zmq_send(f->dealer, "x", 1, i < SL_MSG_MAX_FRAMES + 2 ? ZMQ_SNDMORE : 0), 1);
  heartbeat(&f->m, 7);
  assert_int_equal(sl_wire_send(f->dealer, NULL, &f->m, &f->frames, NULL, NULL, 0, err, sizeof err), 0);
  sl_wire_peer from;
  assert_int_equal(sl_wire_recv(f->router, f->in, &from, &f->m, 0, err, sizeof err), SL_EPROTO);
  assert_non_null(strstr(err, "shorter than the envelope"));
  assert_int_equal(sl_wire_recv(f->router, f->in, &from, &f->m, 0, err, sizeof err), SL_EPROTO);
  assert_string_equal(err, "a message of 12 frames, at most 9");
  assert_int_equal(sl_wire_recv(f->router, f->in, &from, &f->m, 0, err, sizeof err), 0);
  assert_int_equal(f->m.u.heartbeat.seq, 7);
}

static int handed_back;
static const void *last_data;

static void hand_back(void *data, void *hint)
{
  assert_ptr_equal(hint, &handed_back);
  last_data = data;
  handed_back++;
}

static void test_payload_without_a_copy_is_handed_back_once(void **state)
{
  fixture *f = *state;
  char err[256];
  static const char bytes[] = "0123456789abcdef";
  sl_msg *m = &f->m;
  m->kind = SL_MSG_CHUNK;
  m->node = -1;
  m->u.chunk = (sl_msg_chunk){.part = 1, .offset = 0, .total = 16, .len = 16, .npayload = 3,
                              .flags = SL_MSG_CHUNK_LAST};
  m->u.chunk.payload[0] = (sl_msg_part){bytes, 10};
  m->u.chunk.payload[1] = (sl_msg_part){bytes + 10, 0}; /* empty: not sent, not handed back */
  m->u.chunk.payload[2] = (sl_msg_part){bytes + 10, 6};

  /* sent: the receiver sees the sender's bytes themselves (inproc), and
   * each frame comes back once the receiver lets it go */
  handed_back = 0;
  assert_int_equal(sl_wire_send(f->dealer, NULL, m, &f->frames, hand_back, &handed_back, 0, err, sizeof err), 0);
  sl_wire_peer from;
  assert_int_equal(sl_wire_recv(f->router, f->in, &from, m, 0, err, sizeof err), 0);
  assert_int_equal(m->u.chunk.npayload, 2);
  assert_ptr_equal(m->u.chunk.payload[0].data, bytes);
  assert_ptr_equal(m->u.chunk.payload[1].data, bytes + 10);
  assert_int_equal(handed_back, 0);
  sl_wire_in_free(f->in);
  f->in = sl_wire_in_new();
  assert_int_equal(handed_back, 2);

  /* not sent (no such peer), or not even encoded: handed back all the same */
  m->u.chunk.payload[0] = (sl_msg_part){bytes, 10};
  m->u.chunk.payload[1] = (sl_msg_part){bytes + 10, 6};
  m->u.chunk.npayload = 2;
  handed_back = 0;
  sl_wire_peer nobody = {.len = 3, .id = "w99"};
  assert_int_equal(
      sl_wire_send(f->router, &nobody, m, &f->frames, hand_back, &handed_back, 0, err, sizeof err), SL_EIO);
  assert_int_equal(handed_back, 2);
  m->u.chunk.len = 15;
  handed_back = 0;
  assert_int_equal(sl_wire_send(f->dealer, NULL, m, &f->frames, hand_back, &handed_back, 0, err, sizeof err),
                   SL_EINVAL);
  assert_int_equal(handed_back, 2);
  assert_ptr_equal(last_data, bytes + 10);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_router_answers_who_sent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_malformed_messages_are_consumed_whole, setup, teardown),
      cmocka_unit_test_setup_teardown(test_payload_without_a_copy_is_handed_back_once, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
