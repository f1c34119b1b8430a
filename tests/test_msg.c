/* The messages of a head and its workers (transport/msg.h): every kind
 * survives encoding and decoding field for field, the header layout is
 * the documented one, and every malformed input is refused with SL_EPROTO
 * and a message that says what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/msg.h"

/* A message's frames, copied out of the encoder's scratch so that a test
 * may change them. */
typedef struct {
  uint8_t *data[SL_MSG_MAX_FRAMES + 2];
  size_t len[SL_MSG_MAX_FRAMES + 2];
  int n;
  int owned; /* data[0 .. owned) are ours to free, whatever n became */
} frames;

static void frames_free(frames *f)
{
  for (int i = 0; i < f->owned; i++)
    free(f->data[i]);
  f->n = f->owned = 0;
}

/* splitmix64: a fixed sequence, so that a failure replays */
static uint64_t draw(uint64_t *s, uint64_t below)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) % below;
}

static void encode(const sl_msg *m, frames *out)
{
  sl_msg_frames w = {0};
  char err[256] = "";
  int rc = sl_msg_encode(m, &w, err, sizeof err);
  if (rc)
    fail_msg("encode: %s", err);
  out->n = out->owned = w.nparts;
  for (int i = 0; i < w.nparts; i++) {
    out->len[i] = w.part[i].len;
    out->data[i] = malloc(w.part[i].len ? w.part[i].len : 1);
    assert_non_null(out->data[i]);
    memcpy(out->data[i], w.part[i].data, w.part[i].len);
  }
  sl_msg_frames_free(&w);
}

static int decode(const frames *f, sl_msg *m, char *err, size_t errlen)
{
  sl_msg_part parts[SL_MSG_MAX_FRAMES + 2];
  for (int i = 0; i < f->n; i++)
    parts[i] = (sl_msg_part){f->data[i], f->len[i]};
  err[0] = '\0';
  return sl_msg_decode(parts, f->n, m, err, errlen);
}

/* Encodes @p m, decodes it into @p back, and checks that the decoded
 * message encodes to the same frames. */
static frames kept; /* the frames round_trip() decoded last: a CHUNK's payload points there */

static void round_trip(const sl_msg *m, sl_msg *back)
{
  frames again, *f = &kept;
  frames_free(f);
  encode(m, f);
  char err[256];
  int rc = decode(f, back, err, sizeof err);
  if (rc)
    fail_msg("decode of a %s: %s", sl_msg_kind_name(m->kind), err);
  assert_int_equal(back->kind, m->kind);
  assert_int_equal(back->node, m->node);
  assert_true(back->incarnation == m->incarnation);
  encode(back, &again);
  assert_int_equal(again.n, f->n);
  for (int i = 0; i < f->n; i++) {
    assert_int_equal(again.len[i], f->len[i]);
    assert_memory_equal(again.data[i], f->data[i], f->len[i]);
  }
  frames_free(&again);
}

static void head(sl_msg *m, sl_msg_kind k)
{
  sl_msg_init(m);
  m->kind = k;
  m->node = -7;
  m->incarnation = 0x0123456789abcdefull;
}

/* A launch with three inputs, every field set to something of its own. */
static sl_input test_inputs[3] = {
    {.part = 11, .node = 2, .bytes = 1e6, .read_bytes = 2.5e5, .spilled = false},
    {.part = 4000000000u, .node = -1, .bytes = 0.5, .read_bytes = 0.5, .spilled = true},
    {.part = 0, .node = 31, .bytes = 123456789.25, .read_bytes = 0, .spilled = true},
};
static sl_part_id test_parts[3] = {11, 4000000000u, 0};

static sl_decision test_launch(void)
{
  return (sl_decision){.kind = SL_DEC_LAUNCH, .task = 77, .origin = 70, .op = 3, .node = 5, .slot = 2,
                       .attempt = 4, .inputs = test_parts, .in = test_inputs, .ninputs = 3, .split = -1,
                       .rows = 1000000, .bytes = 1.5e9, .target_bytes = 128e6, .rows_per_part = INT64_MAX,
                       .out_rows = 999, .out_parts = 8, .work_s = 12.75, .outputs_at_end = true,
                       .fresh = false, .setup_s = 0.25, .spread = 1.125, .charge_s = 6.375, .speed = 2,
                       .share = 3, .shares = 16, .share_end = 5, .out_blocks = 16, .doomed = true,
                       .part = SL_NONE};
}

static void test_launch_carries_the_whole_work_order(void **state)
{
  (void)state;
  sl_decision d = test_launch();
  sl_msg m, back;
  sl_msg_init(&m);
  sl_msg_init(&back);
  sl_msg_set_launch(&m, &d, 9);
  assert_int_equal(m.node, 5);
  round_trip(&m, &back);
  const sl_decision *b = &back.u.launch;
  assert_int_equal(b->kind, SL_DEC_LAUNCH);
  assert_int_equal(b->task, 77);
  assert_int_equal(b->origin, 70);
  assert_int_equal(b->op, 3);
  assert_int_equal(b->node, 5);
  assert_int_equal(b->slot, 2);
  assert_int_equal(b->attempt, 4);
  assert_int_equal(b->split, -1);
  assert_int_equal(b->rows, 1000000);
  assert_true(b->bytes == 1.5e9 && b->target_bytes == 128e6);
  assert_true(b->rows_per_part == INT64_MAX);
  assert_int_equal(b->out_rows, 999);
  assert_int_equal(b->out_parts, 8);
  assert_true(b->work_s == 12.75 && b->setup_s == 0.25 && b->spread == 1.125);
  assert_true(b->charge_s == 6.375 && b->speed == 2);
  assert_true(b->outputs_at_end && !b->fresh && b->doomed);
  assert_int_equal(b->share, 3);
  assert_int_equal(b->shares, 16);
  assert_int_equal(b->share_end, 5);
  assert_int_equal(b->out_blocks, 16);
  assert_int_equal(b->part, SL_NONE);
  assert_int_equal(b->ninputs, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(b->inputs[i], test_parts[i]);
    assert_int_equal(b->in[i].part, test_inputs[i].part);
    assert_int_equal(b->in[i].node, test_inputs[i].node);
    assert_true(b->in[i].bytes == test_inputs[i].bytes);
    assert_true(b->in[i].read_bytes == test_inputs[i].read_bytes);
    assert_int_equal(b->in[i].spilled, test_inputs[i].spilled);
  }

  /* no inputs: no table, and the decision's arrays are NULL */
  d.ninputs = 0;
  d.in = NULL;
  d.inputs = NULL;
  d.fresh = true;
  d.outputs_at_end = d.doomed = false;
  sl_msg_set_launch(&m, &d, 9);
  round_trip(&m, &back);
  frames_free(&kept);
  assert_int_equal(back.u.launch.ninputs, 0);
  assert_null(back.u.launch.in);
  assert_null(back.u.launch.inputs);
  assert_true(back.u.launch.fresh && !back.u.launch.outputs_at_end && !back.u.launch.doomed);
  sl_msg_free(&back);
  sl_msg_free(&m);
}

static void test_every_kind_round_trips(void **state)
{
  (void)state;
  sl_msg m, back;
  sl_msg_init(&back);

  head(&m, SL_MSG_HELLO);
  m.u.hello = (sl_msg_hello){.cpu_slots = 16, .gpu_slots = 4, .store_budget = 40ull << 30};
  strcpy(m.u.hello.name, "gpu-node-3");
  strcpy(m.u.hello.endpoint, "tcp://10.77.0.3:41000");
  round_trip(&m, &back);
  assert_int_equal(back.u.hello.cpu_slots, 16);
  assert_int_equal(back.u.hello.gpu_slots, 4);
  assert_true(back.u.hello.store_budget == 40ull << 30);
  assert_string_equal(back.u.hello.name, "gpu-node-3");
  assert_string_equal(back.u.hello.endpoint, "tcp://10.77.0.3:41000");

  head(&m, SL_MSG_WELCOME);
  m.u.welcome = (sl_msg_welcome){.heartbeat_ms = 50, .timeout_ms = 300};
  round_trip(&m, &back);
  assert_int_equal(back.u.welcome.heartbeat_ms, 50);
  assert_int_equal(back.u.welcome.timeout_ms, 300);

  head(&m, SL_MSG_PEER);
  m.u.peer.node = 12;
  m.u.peer.incarnation = UINT64_MAX;
  strcpy(m.u.peer.endpoint, "ipc:///tmp/n12");
  round_trip(&m, &back);
  assert_int_equal(back.u.peer.node, 12);
  assert_true(back.u.peer.incarnation == UINT64_MAX);
  assert_string_equal(back.u.peer.endpoint, "ipc:///tmp/n12");

  head(&m, SL_MSG_EMIT);
  m.u.emit = (sl_msg_emit){.task = 5, .index = 3, .rows = -2, .bytes = 1e-300, .part = 99,
                           .fate = SL_MSG_FATE_HOLD};
  round_trip(&m, &back);
  assert_int_equal(back.u.emit.task, 5);
  assert_int_equal(back.u.emit.index, 3);
  assert_int_equal(back.u.emit.rows, -2);
  assert_true(back.u.emit.bytes == 1e-300);
  assert_int_equal(back.u.emit.part, 99);
  assert_int_equal(back.u.emit.fate, SL_MSG_FATE_HOLD);
  assert_int_equal(back.u.emit.npayload, 0);

  /* an output for the sink asks with its bytes, an empty frame kept */
  head(&m, SL_MSG_EMIT);
  m.u.emit = (sl_msg_emit){.task = 6, .index = 1, .rows = 2, .bytes = 5, .part = SL_NONE, .fate = SL_MSG_FATE_ASK,
                           .npayload = 3};
  m.u.emit.payload[0] = (sl_msg_part){"head", 4};
  m.u.emit.payload[1] = (sl_msg_part){"", 0};
  m.u.emit.payload[2] = (sl_msg_part){"hello", 5};
  round_trip(&m, &back);
  assert_int_equal(back.u.emit.npayload, 3);
  assert_int_equal(back.u.emit.payload[1].len, 0);
  assert_memory_equal(back.u.emit.payload[2].data, "hello", 5);

  /* the last output for the sink ends its attempt and goes unanswered:
   * its end is the FINISHED that no longer follows */
  m.u.emit.flags = SL_MSG_EMIT_ENDS | SL_MSG_EMIT_UNANSWERED;
  m.u.emit.end = (sl_msg_finished){.task = 6, .parts_out = 1, .flags = SL_MSG_FINISHED_REAL, .rows_out = 2,
                                   .bytes_out = 5, .run_s = 0.25, .waited_s = 0.125, .transfer_s = 1e-3,
                                   .transfer_bytes = 7, .spill_write_s = 2, .spill_write_bytes = 3,
                                   .spill_read_s = 4, .spill_read_bytes = 6, .spread = 1.5};
  round_trip(&m, &back);
  assert_int_equal(back.u.emit.flags, SL_MSG_EMIT_ENDS | SL_MSG_EMIT_UNANSWERED);
  assert_int_equal(back.u.emit.end.task, 6);
  assert_int_equal(back.u.emit.end.parts_out, 1);
  assert_int_equal(back.u.emit.end.flags, SL_MSG_FINISHED_REAL);
  assert_int_equal(back.u.emit.end.rows_out, 2);
  assert_true(back.u.emit.end.run_s == 0.25 && back.u.emit.end.waited_s == 0.125);
  assert_true(back.u.emit.end.transfer_bytes == 7 && back.u.emit.end.spill_read_bytes == 6);
  assert_true(back.u.emit.end.spread == 1.5);
  assert_int_equal(back.u.emit.npayload, 3);

  /* an output to store ends its attempt too, and is answered */
  m.u.emit.flags = SL_MSG_EMIT_ENDS;
  m.u.emit.npayload = 0;
  round_trip(&m, &back);
  assert_int_equal(back.u.emit.flags, SL_MSG_EMIT_ENDS);
  assert_int_equal(back.u.emit.npayload, 0);

  head(&m, SL_MSG_FINISHED);
  m.u.finished = (sl_msg_finished){.task = 4000000001u, .parts_out = 7, .flags = SL_MSG_FINISHED_REAL,
                                   .rows_out = -5, .bytes_out = 3.5,
                                   .run_s = 0.25, .waited_s = 1e-9, .transfer_s = 2, .transfer_bytes = 1e12,
                                   .spill_write_s = 3, .spill_write_bytes = 4, .spill_read_s = 5,
                                   .spill_read_bytes = 6, .spread = 1.5};
  round_trip(&m, &back);
  assert_memory_equal(&back.u.finished, &m.u.finished, sizeof m.u.finished);

  head(&m, SL_MSG_PLAN);
  static const char args[] = "workloads/sort.ini\0--model\0batch\0";
  m.u.plan = (sl_msg_plan){.slots = 3, .argc = 3, .args = args, .args_len = sizeof args - 1};
  strcpy(m.u.plan.cwd, "/home/user/sluice");
  round_trip(&m, &back);
  assert_int_equal(back.u.plan.slots, 3);
  assert_int_equal(back.u.plan.argc, 3);
  assert_string_equal(back.u.plan.cwd, "/home/user/sluice");
  assert_int_equal(back.u.plan.args_len, sizeof args - 1);
  assert_memory_equal(back.u.plan.args, args, sizeof args - 1);

  const sl_msg_kind task_kinds[] = {SL_MSG_CANCEL, SL_MSG_RESUME};
  for (size_t i = 0; i < 2; i++) {
    head(&m, task_kinds[i]);
    m.u.task.task = 4000000000u + (uint32_t)i;
    round_trip(&m, &back);
    assert_int_equal(back.u.task.task, 4000000000u + i);
  }

  head(&m, SL_MSG_FAILED);
  m.u.failed = (sl_msg_failed){.task = 8, .op = 2, .node = -1, .code = SL_EOOM};
  strcpy(m.u.failed.why, "node 2: out of memory");
  round_trip(&m, &back);
  assert_string_equal(back.u.failed.why, "node 2: out of memory");
  assert_int_equal(back.u.failed.task, 8);
  assert_int_equal(back.u.failed.op, 2);
  assert_int_equal(back.u.failed.node, -1);
  assert_int_equal(back.u.failed.code, SL_EOOM);

  head(&m, SL_MSG_HEARTBEAT);
  m.u.heartbeat.seq = 1ull << 40;
  round_trip(&m, &back);
  assert_true(back.u.heartbeat.seq == 1ull << 40);

  head(&m, SL_MSG_BYE);
  m.u.bye.code = SL_ESTALL;
  round_trip(&m, &back);
  assert_int_equal(back.u.bye.code, SL_ESTALL);

  head(&m, SL_MSG_LOSE);
  m.u.lose.signal = SIGSTOP;
  round_trip(&m, &back);
  assert_int_equal(back.u.lose.signal, SIGSTOP);

  head(&m, SL_MSG_DROP);
  m.u.part = (sl_msg_part_order){.part = 31, .op = 6, .bytes = -0.0};
  round_trip(&m, &back);
  assert_int_equal(back.u.part.part, 31);
  assert_int_equal(back.u.part.op, 6);
  assert_true(back.u.part.bytes == 0 && signbit(back.u.part.bytes));

  head(&m, SL_MSG_FETCH);
  m.u.fetch = (sl_msg_fetch){.part = 3, .tag = 9, .offset = 5ull << 32, .credit = 8, .chunk_bytes = 1 << 20};
  round_trip(&m, &back);
  assert_int_equal(back.u.fetch.part, 3);
  assert_int_equal(back.u.fetch.tag, 9);
  assert_true(back.u.fetch.offset == 5ull << 32);
  assert_int_equal(back.u.fetch.credit, 8);
  assert_int_equal(back.u.fetch.chunk_bytes, 1 << 20);

  /* a chunk over two buffers; an empty part of the sender's is left out */
  head(&m, SL_MSG_CHUNK);
  static const char a[] = "partition ", b[] = "bytes";
  m.u.chunk = (sl_msg_chunk){.part = 3, .tag = 9, .offset = 100, .total = 115, .len = 15,
                             .flags = SL_MSG_CHUNK_LAST, .npayload = 3};
  m.u.chunk.payload[0] = (sl_msg_part){a, 10};
  m.u.chunk.payload[1] = (sl_msg_part){b, 0};
  m.u.chunk.payload[2] = (sl_msg_part){b, 5};
  round_trip(&m, &back);
  const sl_msg_chunk *c = &back.u.chunk;
  assert_int_equal(c->part, 3);
  assert_int_equal(c->tag, 9);
  assert_int_equal(c->status, 0);
  assert_true(c->offset == 100 && c->total == 115 && c->len == 15);
  assert_int_equal(c->flags, SL_MSG_CHUNK_LAST);
  assert_int_equal(c->npayload, 2);
  assert_memory_equal(c->payload[0].data, "partition ", 10);
  assert_memory_equal(c->payload[1].data, "bytes", 5);

  /* the empty chunk of an empty partition, and a refusal */
  m.u.chunk = (sl_msg_chunk){.part = 4, .tag = 1, .flags = SL_MSG_CHUNK_LAST};
  round_trip(&m, &back);
  assert_int_equal(back.u.chunk.npayload, 0);
  assert_true(back.u.chunk.total == 0);
  m.u.chunk = (sl_msg_chunk){.part = 4, .tag = 1, .status = SL_ENOENT};
  round_trip(&m, &back);
  assert_int_equal(back.u.chunk.status, SL_ENOENT);

  frames_free(&kept);
  sl_msg_free(&back);
}

static void test_kind_names(void **state)
{
  (void)state;
  assert_string_equal(sl_msg_kind_name(SL_MSG_HELLO), "hello");
  assert_string_equal(sl_msg_kind_name(SL_MSG_CHUNK), "chunk");
  for (int k = 1; k < SL_MSG_NKINDS; k++)
    assert_non_null(sl_msg_kind_name((sl_msg_kind)k));
  assert_null(sl_msg_kind_name((sl_msg_kind)0));
  assert_null(sl_msg_kind_name(SL_MSG_NKINDS));
}

/* The documented layout, byte for byte: envelope, then the fields in
 * little-endian order. */
static void test_header_layout(void **state)
{
  (void)state;
  sl_msg m;
  head(&m, SL_MSG_FETCH);
  m.node = 0x01020304;
  m.incarnation = 0x1112131415161718ull;
  m.u.fetch = (sl_msg_fetch){.part = 0x21222324, .tag = 0x31323334, .offset = 0x4142434445464748ull,
                             .credit = 0x51525354, .chunk_bytes = 0x61626364};
  frames f;
  encode(&m, &f);
  static const uint8_t want[] = {'S',  'L',  SL_MSG_VERSION, SL_MSG_FETCH, 0x04, 0x03, 0x02, 0x01, 0x18, 0x17,
                                 0x16, 0x15, 0x14,           0x13,         0x12, 0x11, 0x24, 0x23, 0x22, 0x21,
                                 0x34, 0x33, 0x32,           0x31,         0x48, 0x47, 0x46, 0x45, 0x44, 0x43,
                                 0x42, 0x41, 0x54,           0x53,         0x52, 0x51, 0x64, 0x63, 0x62, 0x61};
  assert_int_equal(f.n, 1);
  assert_int_equal(f.len[0], sizeof want);
  assert_memory_equal(f.data[0], want, sizeof want);
  frames_free(&f);

  /* a double is its bits, little-endian */
  head(&m, SL_MSG_DROP);
  m.u.part = (sl_msg_part_order){.part = 1, .op = 2, .bytes = 1.0};
  encode(&m, &f);
  static const uint8_t one[8] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
  assert_int_equal(f.len[0], SL_MSG_ENVELOPE + 16);
  assert_memory_equal(f.data[0] + SL_MSG_ENVELOPE + 8, one, 8);
  frames_free(&f);
}

/* Decoding @p f must fail with SL_EPROTO and a message containing @p what. */
static void assert_refused(const frames *f, const char *what)
{
  sl_msg m;
  sl_msg_init(&m);
  char err[256];
  int rc = decode(f, &m, err, sizeof err);
  if (rc != SL_EPROTO)
    fail_msg("expected SL_EPROTO (%s), got %d: %s", what, rc, err);
  if (!strstr(err, what))
    fail_msg("expected a message with \"%s\", got \"%s\"", what, err);
  sl_msg_free(&m);
}

/* One valid message of every kind, for the tests that break them. */
static void sample(sl_msg_kind k, sl_msg *m)
{
  static sl_decision d;
  head(m, k);
  switch (k) {
  case SL_MSG_HELLO:
    strcpy(m->u.hello.name, "w1");
    strcpy(m->u.hello.endpoint, "tcp://127.0.0.1:5000");
    break;
  case SL_MSG_PEER:
    strcpy(m->u.peer.endpoint, "tcp://127.0.0.1:5001");
    break;
  case SL_MSG_FAILED:
    strcpy(m->u.failed.why, "stopped");
    break;
  case SL_MSG_EMIT: /* an answer: no payload frames */
    m->u.emit = (sl_msg_emit){.task = 1, .part = 2, .fate = SL_MSG_FATE_STORED};
    break;
  case SL_MSG_PLAN: {
    static const char args[] = "a.ini\0--quiet\0";
    m->u.plan = (sl_msg_plan){.slots = 2, .argc = 2, .args = args, .args_len = sizeof args - 1};
    strcpy(m->u.plan.cwd, "/");
    break;
  }
  case SL_MSG_LAUNCH:
    d = test_launch();
    sl_msg_set_launch(m, &d, 1);
    break;
  case SL_MSG_FETCH:
    m->u.fetch = (sl_msg_fetch){.part = 1, .credit = 2, .chunk_bytes = 10};
    break;
  case SL_MSG_LOSE:
    m->u.lose.signal = SIGKILL;
    break;
  case SL_MSG_CHUNK: {
    static const char bytes[] = "0123456789";
    m->u.chunk = (sl_msg_chunk){.part = 1, .offset = 10, .total = 20, .len = 10, .npayload = 1,
                                .flags = SL_MSG_CHUNK_LAST};
    m->u.chunk.payload[0] = (sl_msg_part){bytes, 10};
    break;
  }
  default:
    break;
  }
}

static void test_truncated_and_padded_headers_are_refused(void **state)
{
  (void)state;
  for (int k = 1; k < SL_MSG_NKINDS; k++) {
    sl_msg m;
    frames f;
    sample((sl_msg_kind)k, &m);
    encode(&m, &f);
    size_t full = f.len[0];
    for (size_t len = 0; len < full; len++) {
      f.len[0] = len;
      assert_refused(&f, len < SL_MSG_ENVELOPE ? "shorter than the envelope" : "expected");
    }
    uint8_t *longer = realloc(f.data[0], full + 1);
    assert_non_null(longer);
    f.data[0] = longer;
    f.len[0] = full + 1;
    assert_refused(&f, "expected");
    frames_free(&f);
  }
}

static void test_bad_envelopes_are_refused(void **state)
{
  (void)state;
  sl_msg m;
  frames f;
  sample(SL_MSG_HEARTBEAT, &m);
  encode(&m, &f);
  f.data[0][0] = 'X';
  assert_refused(&f, "not a sluice message");
  f.data[0][0] = 'S';
  f.data[0][2] = SL_MSG_VERSION + 1;
  char said[128];
  snprintf(said, sizeof said, "message version %d, this end speaks %d: the two ends are different builds",
           SL_MSG_VERSION + 1, SL_MSG_VERSION);
  assert_refused(&f, said);
  f.data[0][2] = 2; /* a build from before an EMIT could end its attempt */
  snprintf(said, sizeof said, "message version 2, this end speaks %d", SL_MSG_VERSION);
  assert_refused(&f, said);
  f.data[0][2] = SL_MSG_VERSION;
  const uint8_t unknown[] = {0, SL_MSG_NKINDS, 200, 255};
  for (size_t i = 0; i < sizeof unknown; i++) {
    f.data[0][3] = unknown[i];
    assert_refused(&f, "unknown message kind");
  }
  frames_free(&f);

  frames none = {0};
  assert_refused(&none, "without frames");
}

static void test_missing_and_extra_frames_are_refused(void **state)
{
  (void)state;
  for (int k = 1; k < SL_MSG_NKINDS; k++) {
    sl_msg m;
    frames f;
    sample((sl_msg_kind)k, &m);
    encode(&m, &f);
    int n = f.n;
    if (k != SL_MSG_CHUNK) {
      /* one frame short */
      f.n = n - 1;
      assert_refused(&f, n == 1 ? "a message without frames" : "frames, expected");
    }
    /* one frame too many (a CHUNK's makes the sizes disagree) */
    f.data[n] = malloc(3);
    assert_non_null(f.data[n]);
    memcpy(f.data[n], "abc", 3);
    f.len[n] = 3;
    f.n = f.owned = n + 1;
    assert_refused(&f, k == SL_MSG_CHUNK  ? "payload frames hold 13 bytes, its header says 10"
                       : k == SL_MSG_EMIT ? "emit: payload frames with an answer"
                                          : "frames, expected");
    frames_free(&f);
  }
}

/* Sets the little-endian u32 at @p at. */
static void poke_u32(uint8_t *at, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    at[i] = (uint8_t)(v >> (8 * i));
}

static void poke_u64(uint8_t *at, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    at[i] = (uint8_t)(v >> (8 * i));
}

static void test_bad_launches_are_refused(void **state)
{
  (void)state;
  sl_msg m;
  frames f;
  sample(SL_MSG_LAUNCH, &m);
  encode(&m, &f);
  uint8_t *flags = f.data[0] + SL_MSG_ENVELOPE + 152, *count = flags + 4;
  /* the table's length does not match the count */
  f.len[1] -= 1;
  assert_refused(&f, "an input table of 83 bytes for 3 inputs, expected 84");
  f.len[1] += 1;
  poke_u32(count, 4);
  assert_refused(&f, "for 4 inputs");
  poke_u32(count, 0);
  assert_refused(&f, "for 0 inputs");
  poke_u32(count, UINT32_MAX);
  assert_refused(&f, "inputs, at most");
  poke_u32(count, 3);
  /* flags no sender writes */
  poke_u32(flags, 1u << 3);
  assert_refused(&f, "launch: unknown flag bits 0x8");
  poke_u32(flags, 0);
  poke_u32(f.data[1] + SL_MSG_INPUT_BYTES + 8, 2);
  assert_refused(&f, "input 1 has unknown flag bits 0x2");
  frames_free(&f);
}

static void test_bad_strings_are_refused(void **state)
{
  (void)state;
  sl_msg m;
  frames f;
  sample(SL_MSG_HELLO, &m);
  encode(&m, &f);
  size_t len = f.len[1];
  f.len[1] = 0;
  assert_refused(&f, "hello: the name is empty");
  f.len[1] = len;
  f.data[1][1] = '\0';
  assert_refused(&f, "hello: the name holds a NUL byte");
  f.data[1][1] = '1';
  free(f.data[1]);
  f.data[1] = malloc(SL_MSG_NAME_MAX + 1);
  assert_non_null(f.data[1]);
  memset(f.data[1], 'n', SL_MSG_NAME_MAX + 1);
  f.len[1] = SL_MSG_NAME_MAX + 1;
  assert_refused(&f, "hello: the name: 65 bytes, at most 64");
  f.len[1] = SL_MSG_NAME_MAX; /* the longest is fine */
  sl_msg back;
  sl_msg_init(&back);
  char err[256];
  assert_int_equal(decode(&f, &back, err, sizeof err), 0);
  assert_int_equal(strlen(back.u.hello.name), SL_MSG_NAME_MAX);
  f.len[2] = 0;
  assert_refused(&f, "hello: the endpoint is empty");
  frames_free(&f);

  sample(SL_MSG_PEER, &m);
  encode(&m, &f);
  f.len[1] = 0;
  assert_refused(&f, "peer: the endpoint is empty");
  frames_free(&f);
}

static void test_bad_values_are_refused(void **state)
{
  (void)state;
  sl_msg m;
  frames f;
  sample(SL_MSG_EMIT, &m);
  encode(&m, &f);
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 28, SL_MSG_FATE_NKINDS);
  assert_refused(&f, "emit: unknown fate 6");
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 28, UINT32_MAX);
  assert_refused(&f, "emit: unknown fate -1");
  frames_free(&f);

  /* what an EMIT's flags and end may not say */
  const size_t flags_at = SL_MSG_ENVELOPE + 32, end_at = flags_at + 4;
  sample(SL_MSG_EMIT, &m); /* an answer: STORED */
  encode(&m, &f);
  poke_u32(f.data[0] + flags_at, 4);
  assert_refused(&f, "emit: unknown flag bits 0x4");
  poke_u32(f.data[0] + flags_at, SL_MSG_EMIT_ENDS);
  assert_refused(&f, "emit: flags 0x1 on an answer");
  poke_u32(f.data[0] + flags_at, 0);
  poke_u32(f.data[0] + end_at + 12, 1); /* the end's rows_out */
  assert_refused(&f, "emit: an end, but it ends nothing");
  frames_free(&f);
  m.u.emit.fate = SL_MSG_FATE_ASK;
  m.u.emit.part = SL_NONE;
  encode(&m, &f);
  poke_u32(f.data[0] + flags_at, SL_MSG_EMIT_UNANSWERED);
  assert_refused(&f, "emit: unanswered, but no output for the sink with it");
  poke_u32(f.data[0] + flags_at, SL_MSG_EMIT_ENDS);
  poke_u32(f.data[0] + end_at, 2); /* the end's task, the EMIT's is 1 */
  assert_refused(&f, "emit: task 1 ends task 2");
  poke_u32(f.data[0] + end_at, 1);
  poke_u32(f.data[0] + end_at + 8, 2); /* the end's flags */
  assert_refused(&f, "emit: its end: unknown flag bits 0x2");
  frames_free(&f);

  sample(SL_MSG_FETCH, &m);
  encode(&m, &f);
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 16, 0);
  assert_refused(&f, "fetch: credit 0");
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 16, 1);
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 20, 0);
  assert_refused(&f, "chunk of 0 bytes");
  frames_free(&f);

  /* a PLAN's arguments: as many NUL-ended strings as it says, no more */
  sample(SL_MSG_PLAN, &m);
  encode(&m, &f);
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 4, 3);
  assert_refused(&f, "plan: 3 arguments said, 2 sent");
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 4, 2);
  f.len[2]--;
  assert_refused(&f, "plan: the last argument is not ended by a NUL");
  f.len[2] = 0;
  assert_refused(&f, "plan: 2 arguments said, 0 sent");
  frames_free(&f);
  sample(SL_MSG_FAILED, &m);
  encode(&m, &f);
  f.len[1] = 0;
  assert_refused(&f, "failed: the reason is empty");
  frames_free(&f);
  sample(SL_MSG_FINISHED, &m);
  encode(&m, &f);
  poke_u32(f.data[0] + SL_MSG_ENVELOPE + 8, 2);
  assert_refused(&f, "finished: unknown flag bits 0x2");
  frames_free(&f);
  /* a worker kills itself with what LOSE says: only the two signals a
   * lost machine can stand for */
  sample(SL_MSG_LOSE, &m);
  encode(&m, &f);
  poke_u32(f.data[0] + SL_MSG_ENVELOPE, SIGTERM);
  assert_refused(&f, "lose: signal 15, not SIGKILL (9) or SIGSTOP (19)");
  poke_u32(f.data[0] + SL_MSG_ENVELOPE, 0);
  assert_refused(&f, "lose: signal 0");
  frames_free(&f);
}

static void test_bad_chunks_are_refused(void **state)
{
  (void)state;
  sl_msg m;
  frames f;
  sample(SL_MSG_CHUNK, &m);
  encode(&m, &f);
  uint8_t *h = f.data[0] + SL_MSG_ENVELOPE;
  uint8_t *status = h + 8, *flags = h + 12, *offset = h + 16, *total = h + 24, *len = h + 32;

  /* lengths that do not match */
  poke_u64(len, 9);
  assert_refused(&f, "payload frames hold 10 bytes, its header says 9");
  poke_u64(len, 10);
  f.len[1] = 0;
  assert_refused(&f, "payload frame 1 is empty");
  f.len[1] = 10;

  /* past the end, with the sum overflowing too */
  poke_u64(offset, 11);
  assert_refused(&f, "past the partition's 20");
  poke_u64(offset, UINT64_MAX - 5);
  assert_refused(&f, "past the partition's 20");
  poke_u64(offset, 10);

  /* the last flag where it does not belong, and missing where it does */
  poke_u64(total, 30);
  assert_refused(&f, "last flag before the partition's end");
  poke_u64(total, 20);
  poke_u32(flags, 0);
  assert_refused(&f, "without the last flag");
  poke_u32(flags, 4 | SL_MSG_CHUNK_LAST);
  assert_refused(&f, "unknown flag bits 0x4");
  poke_u32(flags, SL_MSG_CHUNK_LAST);

  /* a status that is no error, and an error with bytes */
  poke_u32(status, 3);
  assert_refused(&f, "status 3");
  poke_u32(status, (uint32_t)SL_ENOENT);
  assert_refused(&f, "with a payload");
  poke_u32(status, 0);

  /* an empty chunk of a partition that is not */
  f.n = 1;
  poke_u64(len, 0);
  poke_u64(offset, 20);
  assert_refused(&f, "empty, of a partition that is not");
  f.n = 2;

  /* more payload frames than any sender splits a chunk into */
  frames many = {.n = 1 + SL_MSG_MAX_PAYLOAD + 1}; /* borrows f's: owns nothing */
  many.data[0] = f.data[0];
  many.len[0] = f.len[0];
  poke_u64(offset, 0);
  poke_u64(len, SL_MSG_MAX_PAYLOAD + 1);
  poke_u64(total, SL_MSG_MAX_PAYLOAD + 1);
  for (int i = 1; i < many.n; i++) {
    many.data[i] = f.data[1];
    many.len[i] = 1;
  }
  assert_refused(&many, "payload frames, at most 8");
  frames_free(&f);
}

/* Encoding refuses what decoding would: a sender cannot write what its peer refuses. */
static void test_encoder_refuses_what_decoder_would(void **state)
{
  (void)state;
  sl_msg_frames w = {0};
  char err[256];
  sl_msg m;
  sample(SL_MSG_CHUNK, &m);
  m.u.chunk.len = 11;
  assert_int_equal(sl_msg_encode(&m, &w, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "its header says 11"));
  sample(SL_MSG_HELLO, &m);
  memset(m.u.hello.name, 'x', sizeof m.u.hello.name); /* no NUL at all */
  assert_int_equal(sl_msg_encode(&m, &w, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "longer than 64 bytes"));
  sample(SL_MSG_LAUNCH, &m);
  m.u.launch.in = NULL;
  assert_int_equal(sl_msg_encode(&m, &w, err, sizeof err), SL_EINVAL);
  head(&m, SL_MSG_NKINDS);
  assert_int_equal(sl_msg_encode(&m, &w, err, sizeof err), SL_EINVAL);
  assert_non_null(strstr(err, "unknown message kind"));
  sl_msg_frames_free(&w);
}

/* Random damage to valid messages: whatever decodes encodes back to the
 * same frames, and the rest is refused with a message (a crash or a read
 * out of bounds fails the test under the sanitizers). */
static void test_random_damage(void **state)
{
  (void)state;
  uint64_t rng = 42;
  sl_msg back;
  sl_msg_init(&back);
  int accepted = 0, refused = 0;
  for (int round = 0; round < 20000; round++) {
    sl_msg m;
    frames f;
    sample((sl_msg_kind)(1 + draw(&rng, SL_MSG_NKINDS - 1)), &m);
    encode(&m, &f);
    int hits = 1 + (int)draw(&rng, 3);
    for (int h = 0; h < hits && f.n > 0; h++) {
      int i = (int)draw(&rng, (uint64_t)f.n);
      if (f.len[i] && draw(&rng, 4))
        f.data[i][draw(&rng, f.len[i])] ^= (uint8_t)(1u << draw(&rng, 8));
      else if (f.len[i])
        f.len[i] = draw(&rng, f.len[i]);
      else
        f.n--;
    }
    char err[256];
    int rc = decode(&f, &back, err, sizeof err);
    if (rc == 0) {
      frames again;
      encode(&back, &again);
      assert_int_equal(again.n, f.n);
      for (int i = 0; i < f.n; i++) {
        assert_int_equal(again.len[i], f.len[i]);
        assert_memory_equal(again.data[i], f.data[i], f.len[i]);
      }
      frames_free(&again);
      accepted++;
    } else {
      assert_int_equal(rc, SL_EPROTO);
      assert_true(err[0] != '\0');
      refused++;
    }
    frames_free(&f);
  }
  assert_true(accepted > 100 && refused > 100);
  sl_msg_free(&back);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_launch_carries_the_whole_work_order),
      cmocka_unit_test(test_every_kind_round_trips),
      cmocka_unit_test(test_kind_names),
      cmocka_unit_test(test_header_layout),
      cmocka_unit_test(test_truncated_and_padded_headers_are_refused),
      cmocka_unit_test(test_bad_envelopes_are_refused),
      cmocka_unit_test(test_missing_and_extra_frames_are_refused),
      cmocka_unit_test(test_bad_launches_are_refused),
      cmocka_unit_test(test_bad_strings_are_refused),
      cmocka_unit_test(test_bad_values_are_refused),
      cmocka_unit_test(test_bad_chunks_are_refused),
      cmocka_unit_test(test_encoder_refuses_what_decoder_would),
      cmocka_unit_test(test_random_damage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
