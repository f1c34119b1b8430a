/*
 * The seeds of the msg fuzz target (corpus/msg/seed-*): one message of
 * every kind as this build encodes it, and the variants a worker sends
 * (an EMIT that asks, that ends its attempt, that carries an output for
 * the sink). Every seed then decodes: a fuzzer that starts from messages
 * its decoder refuses (an old version byte, a kind numbered anew) never
 * reaches the code behind the envelope.
 *
 * usage: msg_seeds DIR           writes the seeds into DIR
 *        msg_seeds --check DIR   exit 1, naming them, when DIR's seeds are
 *                                not what this build writes (after a
 *                                protocol change: write them anew)
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/msg.h"

static bool check_only;
static int stale;

/* The frames of @p m as a corpus file: each a 16-bit little-endian length
 * and its bytes (fuzz_msg.c reads them so). */
static void seed(const char *dir, const char *name, const sl_msg *m)
{
  sl_msg_frames w = {0};
  char err[256], path[1024];
  if (sl_msg_encode(m, &w, err, sizeof err) != 0) {
    fprintf(stderr, "msg_seeds: %s: %s\n", name, err);
    exit(2);
  }
  size_t len = 0;
  for (int i = 0; i < w.nparts; i++)
    len += 2 + w.part[i].len;
  unsigned char *bytes = malloc(len), *at = bytes;
  if (!bytes)
    exit(2);
  for (int i = 0; i < w.nparts; i++) {
    *at++ = (unsigned char)(w.part[i].len & 255);
    *at++ = (unsigned char)(w.part[i].len >> 8);
    memcpy(at, w.part[i].data, w.part[i].len);
    at += w.part[i].len;
  }
  sl_msg_frames_free(&w);
  snprintf(path, sizeof path, "%s/seed-%s", dir, name);
  FILE *f = fopen(path, check_only ? "rb" : "wb");
  if (check_only) {
    unsigned char *old = malloc(len + 1);
    size_t n = f && old ? fread(old, 1, len + 1, f) : 0;
    if (n != len || memcmp(old, bytes, len) != 0) {
      fprintf(stderr, "msg_seeds: %s is not what this build encodes\n", path);
      stale++;
    }
    free(old);
  } else if (!f || fwrite(bytes, 1, len, f) != len) {
    fprintf(stderr, "msg_seeds: cannot write %s\n", path);
    exit(2);
  }
  if (f)
    fclose(f);
  free(bytes);
}

static void envelope(sl_msg *m, sl_msg_kind k)
{
  sl_msg_init(m);
  m->kind = k;
  m->node = 2;
  m->incarnation = 1;
}

static void every_kind(const char *dir)
{
  static sl_input in[2] = {{.node = 1, .read_bytes = 100}, {.node = 2, .read_bytes = 50, .spilled = true}};
  static sl_part_id parts[2] = {3, 4};
  static const char args[] = "a.ini\0--quiet\0", chunk[] = "0123456789";
  sl_msg m;
  for (int k = 1; k < SL_MSG_NKINDS; k++) {
    envelope(&m, (sl_msg_kind)k);
    switch (k) {
    case SL_MSG_HELLO:
      m.u.hello.cpu_slots = 4;
      m.u.hello.store_budget = 1000;
      strcpy(m.u.hello.name, "w1");
      strcpy(m.u.hello.endpoint, "tcp://127.0.0.1:5000");
      break;
    case SL_MSG_WELCOME:
      m.u.welcome = (sl_msg_welcome){.heartbeat_ms = 500, .timeout_ms = 2000};
      break;
    case SL_MSG_PEER:
      m.u.peer.node = 1;
      m.u.peer.incarnation = 1;
      strcpy(m.u.peer.endpoint, "tcp://127.0.0.1:5001");
      break;
    case SL_MSG_LAUNCH: {
      sl_decision d = {.kind = SL_DEC_LAUNCH, .task = 9, .origin = 9, .op = 1, .node = 2, .slot = 1, .rows = 10,
                       .bytes = 150, .ninputs = 2, .in = in, .inputs = parts, .rows_per_part = 5, .out_parts = 2,
                       .work_s = 0.1, .charge_s = 0.1, .speed = 1, .spread = 1, .shares = 1, .share_end = 1};
      sl_msg_set_launch(&m, &d, 1);
      break;
    }
    case SL_MSG_EMIT: /* the head's answer */
      m.u.emit = (sl_msg_emit){.task = 1, .index = 1, .rows = 3, .bytes = 30, .part = 2, .fate = SL_MSG_FATE_STORED};
      break;
    case SL_MSG_FINISHED:
      m.u.finished = (sl_msg_finished){.task = 1, .parts_out = 1, .rows_out = 3, .bytes_out = 30, .run_s = 0.5,
                                       .spread = 1};
      break;
    case SL_MSG_FAILED:
      m.u.failed = (sl_msg_failed){.task = 1, .op = 1, .node = 2, .code = SL_EINTR};
      strcpy(m.u.failed.why, "stopped");
      break;
    case SL_MSG_HEARTBEAT:
      m.u.heartbeat.seq = 7;
      break;
    case SL_MSG_CANCEL:
    case SL_MSG_RESUME:
      m.u.task.task = 5;
      break;
    case SL_MSG_DROP:
      m.u.part = (sl_msg_part_order){.part = 4, .op = 1, .bytes = 30};
      break;
    case SL_MSG_FETCH:
      m.u.fetch = (sl_msg_fetch){.part = 1, .tag = 2, .credit = 2, .chunk_bytes = 10};
      break;
    case SL_MSG_CHUNK:
      m.u.chunk = (sl_msg_chunk){.part = 1, .offset = 10, .total = 20, .len = 10, .npayload = 1,
                                 .flags = SL_MSG_CHUNK_LAST};
      m.u.chunk.payload[0] = (sl_msg_part){chunk, 10};
      break;
    case SL_MSG_PLAN:
      m.u.plan = (sl_msg_plan){.slots = 2, .argc = 2, .args = args, .args_len = sizeof args - 1};
      strcpy(m.u.plan.cwd, "/");
      break;
    case SL_MSG_LOSE:
      m.u.lose.signal = SIGKILL;
      break;
    default: /* BYE: code 0 */
      break;
    }
    seed(dir, sl_msg_kind_name((sl_msg_kind)k), &m);
  }
}

/* What a worker sends that the loop above does not: an EMIT that asks,
 * one that ends its attempt, one with an output for the sink, and a
 * refused CHUNK. */
static void variants(const char *dir)
{
  static const char hdr[16] = {1}, row[8] = "xxxxxxxx";
  sl_msg m;
  envelope(&m, SL_MSG_EMIT);
  m.u.emit = (sl_msg_emit){.task = 7, .index = 1, .rows = 1, .bytes = 24, .part = SL_NONE,
                           .fate = SL_MSG_FATE_ASK, .flags = SL_MSG_EMIT_ENDS | SL_MSG_EMIT_UNANSWERED,
                           .npayload = 2};
  m.u.emit.end = (sl_msg_finished){.task = 7, .parts_out = 1, .rows_out = 1, .bytes_out = 24, .run_s = 0.001,
                                   .spread = 1};
  m.u.emit.payload[0] = (sl_msg_part){hdr, sizeof hdr};
  m.u.emit.payload[1] = (sl_msg_part){row, sizeof row};
  seed(dir, "emit-ends-sink", &m);
  m.u.emit.flags = SL_MSG_EMIT_ENDS;
  m.u.emit.npayload = 0;
  seed(dir, "emit-ends", &m);
  m.u.emit.flags = 0;
  m.u.emit.end = (sl_msg_finished){0};
  seed(dir, "emit-ask", &m);
  envelope(&m, SL_MSG_CHUNK);
  m.u.chunk = (sl_msg_chunk){.part = 1, .status = SL_ENOENT};
  seed(dir, "chunk-refused", &m);
}

int main(int argc, char **argv)
{
  check_only = argc == 3 && strcmp(argv[1], "--check") == 0;
  if (argc != 2 + check_only) {
    fprintf(stderr, "usage: msg_seeds [--check] DIR\n");
    return 2;
  }
  const char *dir = argv[argc - 1];
  every_kind(dir);
  variants(dir);
  if (stale)
    fprintf(stderr, "msg_seeds: %d seed(s) out of date: write them anew with `msg_seeds %s`\n", stale, dir);
  return stale ? 1 : 0;
}
