/* The codec of transport/msg.h. Each kind's header is a table of fields
 * (where each lives in an sl_msg, 4 or 8 bytes wide), which the encoder
 * and the decoder both walk, so the two cannot disagree on a layout.
 * Decoding is in two steps: the frames are read into an sl_msg (sizes,
 * counts, magic, version, flag bits: what the struct cannot hold), then
 * check() judges the struct's values. Encoding runs the same check()
 * first, so both ends refuse the same messages and what decodes encodes
 * back to the same bytes. */
#include "msg.h"

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  LAUNCH_AT_END = 1u << 0,
  LAUNCH_FRESH = 1u << 1,
  LAUNCH_DOOMED = 1u << 2,
  LAUNCH_FLAGS = LAUNCH_AT_END | LAUNCH_FRESH | LAUNCH_DOOMED,
  INPUT_SPILLED = 1u << 0,
  LAUNCH_TAIL = 8, /* a LAUNCH's flags and input count, after its fields */
};

/* A field of the header: where it lives in an sl_msg and its width, 4 or 8
 * bytes. A double goes as its bits, like an integer of its width. */
typedef struct {
  uint16_t off;
  uint8_t width;
} field;

#define F(member) {offsetof(sl_msg, member), sizeof(((sl_msg *)0)->member)}
#define FIELDS(a) a, sizeof a / sizeof a[0]

static const field envelope_f[] = {F(node), F(incarnation)};
static const field hello_f[] = {F(u.hello.cpu_slots), F(u.hello.gpu_slots), F(u.hello.store_budget)};
static const field welcome_f[] = {F(u.welcome.heartbeat_ms), F(u.welcome.timeout_ms)};
static const field peer_f[] = {F(u.peer.node), F(u.peer.incarnation)};
static const field launch_f[] = {
    F(u.launch.task),         F(u.launch.origin),        F(u.launch.op),
    F(u.launch.node),         F(u.launch.slot),          F(u.launch.attempt),
    F(u.launch.split),        F(u.launch.rows),          F(u.launch.bytes),
    F(u.launch.target_bytes), F(u.launch.rows_per_part), F(u.launch.out_rows),
    F(u.launch.out_parts),    F(u.launch.work_s),        F(u.launch.setup_s),
    F(u.launch.spread),       F(u.launch.charge_s),      F(u.launch.speed),
    F(u.launch.share),        F(u.launch.shares),        F(u.launch.share_end),
    F(u.launch.out_blocks),
};
/* A FINISHED's fields where @p rec is: a FINISHED's own, or an EMIT's end. */
#define FINISHED_FIELDS(rec)                                                                                   \
  F(rec.task), F(rec.parts_out), F(rec.flags), F(rec.rows_out), F(rec.bytes_out), F(rec.run_s), F(rec.waited_s), \
      F(rec.transfer_s), F(rec.transfer_bytes), F(rec.spill_write_s), F(rec.spill_write_bytes),                   \
      F(rec.spill_read_s), F(rec.spill_read_bytes), F(rec.spread)
static const field emit_f[] = {F(u.emit.task), F(u.emit.index), F(u.emit.rows),  F(u.emit.bytes),
                               F(u.emit.part), F(u.emit.fate),  F(u.emit.flags), FINISHED_FIELDS(u.emit.end)};
static const field task_f[] = {F(u.task.task)};
static const field finished_f[] = {FINISHED_FIELDS(u.finished)};
static const field plan_f[] = {F(u.plan.slots), F(u.plan.argc)};
static const field failed_f[] = {F(u.failed.task), F(u.failed.op), F(u.failed.node), F(u.failed.code)};
static const field heartbeat_f[] = {F(u.heartbeat.seq)};
static const field bye_f[] = {F(u.bye.code)};
static const field lose_f[] = {F(u.lose.signal)};
static const field part_f[] = {F(u.part.part), F(u.part.op), F(u.part.bytes)};
static const field fetch_f[] = {F(u.fetch.part), F(u.fetch.tag), F(u.fetch.offset), F(u.fetch.credit),
                                F(u.fetch.chunk_bytes)};
static const field chunk_f[] = {F(u.chunk.part),   F(u.chunk.tag),   F(u.chunk.status), F(u.chunk.flags),
                                F(u.chunk.offset), F(u.chunk.total), F(u.chunk.len)};

/* Each kind's fields, in the order they go, and its frames (-1: a
 * CHUNK's or an EMIT's, 1 plus its payload). */
static const struct {
  const char *name;
  const field *f;
  size_t nf;
  int frames;
} kinds[SL_MSG_NKINDS] = {
    [SL_MSG_HELLO] = {"hello", FIELDS(hello_f), 3},    [SL_MSG_WELCOME] = {"welcome", FIELDS(welcome_f), 1},
    [SL_MSG_PEER] = {"peer", FIELDS(peer_f), 2},       [SL_MSG_LAUNCH] = {"launch", FIELDS(launch_f), 2},
    [SL_MSG_EMIT] = {"emit", FIELDS(emit_f), -1},       [SL_MSG_FINISHED] = {"finished", FIELDS(finished_f), 1},
    [SL_MSG_FAILED] = {"failed", FIELDS(failed_f), 2}, [SL_MSG_HEARTBEAT] = {"heartbeat", FIELDS(heartbeat_f), 1},
    [SL_MSG_CANCEL] = {"cancel", FIELDS(task_f), 1},   [SL_MSG_RESUME] = {"resume", FIELDS(task_f), 1},
    [SL_MSG_DROP] = {"drop", FIELDS(part_f), 1},
    [SL_MSG_BYE] = {"bye", FIELDS(bye_f), 1},          [SL_MSG_FETCH] = {"fetch", FIELDS(fetch_f), 1},
    [SL_MSG_CHUNK] = {"chunk", FIELDS(chunk_f), -1},  [SL_MSG_PLAN] = {"plan", FIELDS(plan_f), 3},
    [SL_MSG_LOSE] = {"lose", FIELDS(lose_f), 1},
};

/* Bytes of a kind's header, envelope included. */
static size_t head_size(sl_msg_kind k)
{
  size_t n = SL_MSG_ENVELOPE + (k == SL_MSG_LAUNCH ? LAUNCH_TAIL : 0);
  for (size_t i = 0; i < kinds[k].nf; i++)
    n += kinds[k].f[i].width;
  return n;
}

const char *sl_msg_kind_name(sl_msg_kind k)
{
  return k > 0 && k < SL_MSG_NKINDS ? kinds[k].name : NULL;
}

static bool known(sl_msg_kind k)
{
  return sl_msg_kind_name(k) != NULL;
}

int sl__msg_fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

void sl_msg_init(sl_msg *m)
{
  memset(m, 0, sizeof *m);
}

void sl_msg_free(sl_msg *m)
{
  free(m->in_store);
  free(m->parts_store);
  sl_msg_init(m);
}

void sl_msg_frames_free(sl_msg_frames *f)
{
  free(f->table);
  memset(f, 0, sizeof *f);
}

void sl_msg_set_launch(sl_msg *m, const sl_decision *d, uint64_t incarnation)
{
  m->kind = SL_MSG_LAUNCH;
  m->node = d->node;
  m->incarnation = incarnation;
  m->u.launch = *d;
}

/* ------------------------------------------------------------- values */

/* The checks of a string field: 1 to @p max bytes before a NUL. */
static int check_string(const char *s, size_t max, const char *what, char *err, size_t errlen)
{
  size_t n = strnlen(s, max + 1);
  if (n == 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "%s is empty", what);
  if (n > max)
    return sl__msg_fail(SL_EPROTO, err, errlen, "%s is longer than %zu bytes", what, max);
  return 0;
}

static int check_chunk(const sl_msg_chunk *c, char *err, size_t errlen)
{
  if (c->npayload < 0 || c->npayload > SL_MSG_MAX_PAYLOAD)
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: %d payload frames, at most %d", c->npayload,
                        SL_MSG_MAX_PAYLOAD);
  uint64_t sum = 0;
  for (int i = 0; i < c->npayload; i++)
    sum += c->payload[i].len;
  if (sum != c->len)
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: its payload frames hold %llu bytes, its header says %llu",
                        (unsigned long long)sum, (unsigned long long)c->len);
  if (c->flags & ~SL_MSG_CHUNK_LAST)
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: unknown flag bits 0x%x", c->flags & ~SL_MSG_CHUNK_LAST);
  if (c->status > 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: status %d, must be 0 or negative", c->status);
  if (c->status < 0) {
    if (c->len || c->offset || c->total || c->flags)
      return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: status %d with a payload, offset, total or flags",
                          c->status);
    return 0;
  }
  if (c->offset > c->total || c->len > c->total - c->offset)
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: bytes %llu + %llu past the partition's %llu",
                        (unsigned long long)c->offset, (unsigned long long)c->len, (unsigned long long)c->total);
  bool ends = c->offset + c->len == c->total;
  if (ends != !!(c->flags & SL_MSG_CHUNK_LAST))
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: %s",
                        ends ? "ends its partition without the last flag"
                             : "last flag before the partition's end");
  if (c->len == 0 && c->total != 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: empty, of a partition that is not");
  return 0;
}

/* A PLAN's arguments: argc strings, each ended by its NUL, and nothing after. */
static int check_plan(const sl_msg_plan *p, char *err, size_t errlen)
{
  int rc = check_string(p->cwd, SL_MSG_PATH_MAX, "plan: the working directory", err, errlen);
  if (rc)
    return rc;
  if (p->argc > SL_MSG_ARGC_MAX)
    return sl__msg_fail(SL_EPROTO, err, errlen, "plan: %u arguments, at most %d", p->argc, SL_MSG_ARGC_MAX);
  if (p->args_len > SL_MSG_ARGS_MAX)
    return sl__msg_fail(SL_EPROTO, err, errlen, "plan: %zu bytes of arguments, at most %d", p->args_len,
                        SL_MSG_ARGS_MAX);
  if (p->args_len > 0 && (!p->args || p->args[p->args_len - 1] != '\0'))
    return sl__msg_fail(SL_EPROTO, err, errlen, "plan: the last argument is not ended by a NUL");
  uint32_t n = 0;
  for (size_t i = 0; i < p->args_len; i++)
    n += p->args[i] == '\0';
  if (n != p->argc)
    return sl__msg_fail(SL_EPROTO, err, errlen, "plan: %u arguments said, %u sent", p->argc, n);
  return 0;
}

static int check_finished_flags(const sl_msg_finished *f, const char *what, char *err, size_t errlen)
{
  if (f->flags & ~SL_MSG_FINISHED_REAL)
    return sl__msg_fail(SL_EPROTO, err, errlen, "%s: unknown flag bits 0x%x", what, f->flags & ~SL_MSG_FINISHED_REAL);
  return 0;
}

/* Whether every field of @p f is zero (an EMIT's end when it ends nothing). */
static bool finished_zero(const sl_msg_finished *f)
{
  return !f->task && !f->parts_out && !f->flags && !f->rows_out && !f->bytes_out && !f->run_s && !f->waited_s &&
         !f->transfer_s && !f->transfer_bytes && !f->spill_write_s && !f->spill_write_bytes && !f->spill_read_s &&
         !f->spill_read_bytes && !f->spread;
}

/* An EMIT's flags and end: only a worker's ASK ends its attempt or goes
 * unanswered, only an output for the sink (its bytes with it) goes
 * unanswered, and the end is its own task's, or zero. */
static int check_emit_flags(const sl_msg_emit *q, char *err, size_t errlen)
{
  const uint32_t known_flags = SL_MSG_EMIT_ENDS | SL_MSG_EMIT_UNANSWERED;
  if (q->flags & ~known_flags)
    return sl__msg_fail(SL_EPROTO, err, errlen, "emit: unknown flag bits 0x%x", q->flags & ~known_flags);
  if (q->flags && q->fate != SL_MSG_FATE_ASK)
    return sl__msg_fail(SL_EPROTO, err, errlen, "emit: flags 0x%x on an answer (fate %d)", q->flags, (int)q->fate);
  if ((q->flags & SL_MSG_EMIT_UNANSWERED) && q->npayload == 0)
    return sl__msg_fail(SL_EPROTO, err, errlen, "emit: unanswered, but no output for the sink with it");
  if (!(q->flags & SL_MSG_EMIT_ENDS))
    return finished_zero(&q->end) ? 0 : sl__msg_fail(SL_EPROTO, err, errlen, "emit: an end, but it ends nothing");
  if (q->end.task != q->task)
    return sl__msg_fail(SL_EPROTO, err, errlen, "emit: task %u ends task %u", q->task, q->end.task);
  return check_finished_flags(&q->end, "emit: its end", err, errlen);
}

/* What the struct can hold and a sender never sends. */
static int check(const sl_msg *m, char *err, size_t errlen)
{
  if (!known(m->kind))
    return sl__msg_fail(SL_EPROTO, err, errlen, "unknown message kind %d", (int)m->kind);
  switch (m->kind) {
  case SL_MSG_HELLO: {
    int rc = check_string(m->u.hello.name, SL_MSG_NAME_MAX, "hello: the name", err, errlen);
    return rc ? rc : check_string(m->u.hello.endpoint, SL_MSG_ENDPOINT_MAX, "hello: the endpoint", err, errlen);
  }
  case SL_MSG_PEER:
    return check_string(m->u.peer.endpoint, SL_MSG_ENDPOINT_MAX, "peer: the endpoint", err, errlen);
  case SL_MSG_LAUNCH:
    if (m->u.launch.ninputs < 0 || m->u.launch.ninputs > SL_MSG_MAX_INPUTS)
      return sl__msg_fail(SL_EPROTO, err, errlen, "launch: %d inputs, at most %d", m->u.launch.ninputs,
                          SL_MSG_MAX_INPUTS);
    if (m->u.launch.ninputs > 0 && !m->u.launch.in)
      return sl__msg_fail(SL_EPROTO, err, errlen, "launch: %d inputs and no table", m->u.launch.ninputs);
    return 0;
  case SL_MSG_EMIT:
    if ((unsigned)m->u.emit.fate >= SL_MSG_FATE_NKINDS)
      return sl__msg_fail(SL_EPROTO, err, errlen, "emit: unknown fate %d", (int)m->u.emit.fate);
    if (m->u.emit.npayload < 0 || m->u.emit.npayload > SL_MSG_EMIT_MAX_PAYLOAD)
      return sl__msg_fail(SL_EPROTO, err, errlen, "emit: %d payload frames, at most %d", m->u.emit.npayload,
                          SL_MSG_EMIT_MAX_PAYLOAD);
    if (m->u.emit.npayload > 0 && m->u.emit.fate != SL_MSG_FATE_ASK)
      return sl__msg_fail(SL_EPROTO, err, errlen, "emit: payload frames with an answer (fate %d)",
                          (int)m->u.emit.fate);
    return check_emit_flags(&m->u.emit, err, errlen);
  case SL_MSG_FINISHED:
    return check_finished_flags(&m->u.finished, "finished", err, errlen);
  case SL_MSG_FAILED:
    return check_string(m->u.failed.why, SL_MSG_WHY_MAX, "failed: the reason", err, errlen);
  case SL_MSG_PLAN:
    return check_plan(&m->u.plan, err, errlen);
  case SL_MSG_FETCH:
    if (m->u.fetch.credit == 0 || m->u.fetch.chunk_bytes == 0)
      return sl__msg_fail(SL_EPROTO, err, errlen,
                          "fetch: credit %u and chunk of %u bytes, both must be at least 1", m->u.fetch.credit,
                          m->u.fetch.chunk_bytes);
    return 0;
  case SL_MSG_CHUNK:
    return check_chunk(&m->u.chunk, err, errlen);
  case SL_MSG_LOSE:
    if (m->u.lose.signal != SIGKILL && m->u.lose.signal != SIGSTOP)
      return sl__msg_fail(SL_EPROTO, err, errlen, "lose: signal %d, not SIGKILL (%d) or SIGSTOP (%d)",
                          (int)m->u.lose.signal, SIGKILL, SIGSTOP);
    return 0;
  default:
    return 0;
  }
}

/* ------------------------------------------------------------ writing */

typedef struct {
  uint8_t *p;
} writer;

static void put_u32(writer *w, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    *w->p++ = (uint8_t)(v >> (8 * i));
}

static void put_u64(writer *w, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    *w->p++ = (uint8_t)(v >> (8 * i));
}

static void put_f64(writer *w, double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put_u64(w, bits);
}

static void put_fields(writer *w, const sl_msg *m, const field *f, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const uint8_t *at = (const uint8_t *)m + f[i].off;
    uint32_t v32;
    uint64_t v64;
    if (f[i].width == 4) {
      memcpy(&v32, at, 4);
      put_u32(w, v32);
    } else {
      memcpy(&v64, at, 8);
      put_u64(w, v64);
    }
  }
}

/* The LAUNCH's input table, into out->table. */
static int put_inputs(const sl_decision *d, sl_msg_frames *out)
{
  size_t need = (size_t)d->ninputs * SL_MSG_INPUT_BYTES;
  if (need > out->table_cap) {
    uint8_t *t = realloc(out->table, need);
    if (!t)
      return SL_ENOMEM;
    out->table = t;
    out->table_cap = need;
  }
  writer w = {out->table};
  for (int i = 0; i < d->ninputs; i++) {
    put_u32(&w, d->in[i].part);
    put_u32(&w, (uint32_t)d->in[i].node);
    put_u32(&w, d->in[i].spilled ? INPUT_SPILLED : 0);
    put_f64(&w, d->in[i].bytes);
    put_f64(&w, d->in[i].read_bytes);
  }
  out->part[1] = (sl_msg_part){need ? out->table : out->head, need}; /* never NULL, even empty */
  return 0;
}

int sl_msg_encode(const sl_msg *m, sl_msg_frames *out, char *err, size_t errlen)
{
  if (check(m, err, errlen) != 0)
    return SL_EINVAL;
  writer w = {out->head};
  *w.p++ = 'S';
  *w.p++ = 'L';
  *w.p++ = SL_MSG_VERSION;
  *w.p++ = (uint8_t)m->kind;
  put_fields(&w, m, FIELDS(envelope_f));
  put_fields(&w, m, kinds[m->kind].f, kinds[m->kind].nf);
  if (m->kind == SL_MSG_LAUNCH) {
    const sl_decision *d = &m->u.launch;
    put_u32(&w, (d->outputs_at_end ? LAUNCH_AT_END : 0) | (d->fresh ? LAUNCH_FRESH : 0) |
                    (d->doomed ? LAUNCH_DOOMED : 0));
    put_u32(&w, (uint32_t)d->ninputs);
  }
  out->part[0] = (sl_msg_part){out->head, (size_t)(w.p - out->head)};
  out->nparts = 1;
  switch (m->kind) {
  case SL_MSG_HELLO:
    out->part[out->nparts++] = (sl_msg_part){m->u.hello.name, strlen(m->u.hello.name)};
    out->part[out->nparts++] = (sl_msg_part){m->u.hello.endpoint, strlen(m->u.hello.endpoint)};
    break;
  case SL_MSG_PEER:
    out->part[out->nparts++] = (sl_msg_part){m->u.peer.endpoint, strlen(m->u.peer.endpoint)};
    break;
  case SL_MSG_FAILED:
    out->part[out->nparts++] = (sl_msg_part){m->u.failed.why, strlen(m->u.failed.why)};
    break;
  case SL_MSG_PLAN:
    out->part[out->nparts++] = (sl_msg_part){m->u.plan.cwd, strlen(m->u.plan.cwd)};
    /* never NULL, even empty */
    out->part[out->nparts++] = (sl_msg_part){m->u.plan.args_len ? (const void *)m->u.plan.args : out->head, m->u.plan.args_len};
    break;
  case SL_MSG_LAUNCH:
    if (put_inputs(&m->u.launch, out) != 0)
      return sl__msg_fail(SL_ENOMEM, err, errlen, "launch: no memory for %d inputs", m->u.launch.ninputs);
    out->nparts = 2;
    break;
  case SL_MSG_EMIT: /* never NULL, even empty */
    for (int i = 0; i < m->u.emit.npayload; i++)
      out->part[out->nparts++] = (sl_msg_part){m->u.emit.payload[i].len ? m->u.emit.payload[i].data : out->head,
                                               m->u.emit.payload[i].len};
    break;
  case SL_MSG_CHUNK:
    for (int i = 0; i < m->u.chunk.npayload; i++)
      if (m->u.chunk.payload[i].len)
        out->part[out->nparts++] = m->u.chunk.payload[i];
    break;
  default:
    break;
  }
  return 0;
}

/* ------------------------------------------------------------ reading */

/* Reads from a frame whose size was checked first: never past its end. */
typedef struct {
  const uint8_t *p;
} reader;

static uint32_t get_u32(reader *r)
{
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)*r->p++ << (8 * i);
  return v;
}

static uint64_t get_u64(reader *r)
{
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)*r->p++ << (8 * i);
  return v;
}

static double get_f64(reader *r)
{
  uint64_t bits = get_u64(r);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

static void get_fields(reader *r, sl_msg *m, const field *f, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    uint8_t *at = (uint8_t *)m + f[i].off;
    if (f[i].width == 4) {
      uint32_t v = get_u32(r);
      memcpy(at, &v, 4);
    } else {
      uint64_t v = get_u64(r);
      memcpy(at, &v, 8);
    }
  }
}

/* Copies a string frame into @p dst (max + 1 bytes). */
static int get_string(const sl_msg_part *f, char *dst, size_t max, const char *what, char *err, size_t errlen)
{
  if (f->len > max)
    return sl__msg_fail(SL_EPROTO, err, errlen, "%s: %zu bytes, at most %zu", what, f->len, max);
  if (f->len && memchr(f->data, '\0', f->len))
    return sl__msg_fail(SL_EPROTO, err, errlen, "%s holds a NUL byte", what);
  memcpy(dst, f->data, f->len);
  dst[f->len] = '\0';
  return 0;
}

/* A LAUNCH's fields: the decision's that are not sent are those of no
 * order (kind LAUNCH, no partition, no pointers). */
static int get_launch(reader *r, sl_msg *m, char *err, size_t errlen)
{
  sl_decision *d = &m->u.launch;
  memset(d, 0, sizeof *d);
  d->kind = SL_DEC_LAUNCH;
  d->part = SL_NONE;
  get_fields(r, m, FIELDS(launch_f));
  uint32_t flags = get_u32(r), n = get_u32(r);
  if (flags & ~(uint32_t)LAUNCH_FLAGS)
    return sl__msg_fail(SL_EPROTO, err, errlen, "launch: unknown flag bits 0x%x", flags & ~(uint32_t)LAUNCH_FLAGS);
  if (n > SL_MSG_MAX_INPUTS)
    return sl__msg_fail(SL_EPROTO, err, errlen, "launch: %u inputs, at most %d", n, SL_MSG_MAX_INPUTS);
  d->outputs_at_end = flags & LAUNCH_AT_END;
  d->fresh = flags & LAUNCH_FRESH;
  d->doomed = flags & LAUNCH_DOOMED;
  d->ninputs = (int)n;
  return 0;
}

/* The input table of the LAUNCH in @p m, from frame @p f. */
static int get_inputs(const sl_msg_part *f, sl_msg *m, char *err, size_t errlen)
{
  sl_decision *d = &m->u.launch;
  size_t n = (size_t)d->ninputs;
  if (f->len != n * SL_MSG_INPUT_BYTES)
    return sl__msg_fail(SL_EPROTO, err, errlen, "launch: an input table of %zu bytes for %zu inputs, expected %zu",
                        f->len, n, n * SL_MSG_INPUT_BYTES);
  if (n == 0)
    return 0;
  if (n > m->in_cap) {
    sl_input *in = realloc(m->in_store, n * sizeof *in);
    if (in)
      m->in_store = in;
    sl_part_id *parts = in ? realloc(m->parts_store, n * sizeof *parts) : NULL;
    if (!parts)
      return sl__msg_fail(SL_ENOMEM, err, errlen, "launch: no memory for %zu inputs", n);
    m->parts_store = parts;
    m->in_cap = n;
  }
  reader r = {f->data};
  for (size_t i = 0; i < n; i++) {
    sl_input *in = &m->in_store[i];
    in->part = get_u32(&r);
    in->node = (int32_t)get_u32(&r);
    uint32_t flags = get_u32(&r);
    in->bytes = get_f64(&r);
    in->read_bytes = get_f64(&r);
    if (flags & ~(uint32_t)INPUT_SPILLED)
      return sl__msg_fail(SL_EPROTO, err, errlen, "launch: input %zu has unknown flag bits 0x%x", i,
                          flags & ~(uint32_t)INPUT_SPILLED);
    in->spilled = flags & INPUT_SPILLED;
    m->parts_store[i] = in->part;
  }
  d->in = m->in_store;
  d->inputs = m->parts_store;
  return 0;
}

/* The envelope of frame @p f, and its size for that kind. */
static int get_envelope(const sl_msg_part *f, sl_msg *m, char *err, size_t errlen)
{
  const uint8_t *p = f->data;
  if (f->len < SL_MSG_ENVELOPE)
    return sl__msg_fail(SL_EPROTO, err, errlen, "a header of %zu bytes, shorter than the envelope's %d", f->len,
                        SL_MSG_ENVELOPE);
  if (p[0] != 'S' || p[1] != 'L')
    return sl__msg_fail(SL_EPROTO, err, errlen, "not a sluice message (magic 0x%02x%02x)", p[0], p[1]);
  if (p[2] != SL_MSG_VERSION)
    return sl__msg_fail(SL_EPROTO, err, errlen, "message version %u, this end speaks %d: the two ends are different builds",
                        p[2], SL_MSG_VERSION);
  m->kind = (sl_msg_kind)p[3];
  if (!known(m->kind))
    return sl__msg_fail(SL_EPROTO, err, errlen, "unknown message kind %u", p[3]);
  if (f->len != head_size(m->kind))
    return sl__msg_fail(SL_EPROTO, err, errlen, "a %s header of %zu bytes, expected %zu", kinds[m->kind].name,
                        f->len, head_size(m->kind));
  reader r = {p + 4};
  get_fields(&r, m, FIELDS(envelope_f));
  return 0;
}

/* The frames after the header. */
static int get_frames(const sl_msg_part *parts, int nparts, sl_msg *m, char *err, size_t errlen)
{
  const char *name = kinds[m->kind].name;
  int want = kinds[m->kind].frames;
  if (want > 0 && nparts != want)
    return sl__msg_fail(SL_EPROTO, err, errlen, "a %s of %d frames, expected %d", name, nparts, want);
  switch (m->kind) {
  case SL_MSG_HELLO: {
    int rc = get_string(&parts[1], m->u.hello.name, SL_MSG_NAME_MAX, "hello: the name", err, errlen);
    return rc ? rc
              : get_string(&parts[2], m->u.hello.endpoint, SL_MSG_ENDPOINT_MAX, "hello: the endpoint", err,
                           errlen);
  }
  case SL_MSG_PEER:
    return get_string(&parts[1], m->u.peer.endpoint, SL_MSG_ENDPOINT_MAX, "peer: the endpoint", err, errlen);
  case SL_MSG_FAILED:
    return get_string(&parts[1], m->u.failed.why, SL_MSG_WHY_MAX, "failed: the reason", err, errlen);
  case SL_MSG_PLAN: {
    int rc = get_string(&parts[1], m->u.plan.cwd, SL_MSG_PATH_MAX, "plan: the working directory", err, errlen);
    if (rc)
      return rc;
    m->u.plan.args = parts[2].data;
    m->u.plan.args_len = parts[2].len;
    return 0;
  }
  case SL_MSG_LAUNCH:
    return get_inputs(&parts[1], m, err, errlen);
  case SL_MSG_EMIT:
    if (nparts - 1 > SL_MSG_EMIT_MAX_PAYLOAD)
      return sl__msg_fail(SL_EPROTO, err, errlen, "emit: %d payload frames, at most %d", nparts - 1,
                          SL_MSG_EMIT_MAX_PAYLOAD);
    m->u.emit.npayload = nparts - 1;
    for (int i = 1; i < nparts; i++)
      m->u.emit.payload[i - 1] = parts[i];
    return 0;
  case SL_MSG_CHUNK:
    if (nparts - 1 > SL_MSG_MAX_PAYLOAD)
      return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: %d payload frames, at most %d", nparts - 1,
                          SL_MSG_MAX_PAYLOAD);
    m->u.chunk.npayload = nparts - 1;
    for (int i = 1; i < nparts; i++) {
      if (parts[i].len == 0)
        return sl__msg_fail(SL_EPROTO, err, errlen, "chunk: payload frame %d is empty", i);
      m->u.chunk.payload[i - 1] = parts[i];
    }
    return 0;
  default:
    return 0;
  }
}

int sl_msg_decode(const sl_msg_part *parts, int nparts, sl_msg *m, char *err, size_t errlen)
{
  if (nparts < 1)
    return sl__msg_fail(SL_EPROTO, err, errlen, "a message without frames");
  int rc = get_envelope(&parts[0], m, err, errlen);
  if (rc)
    return rc;
  reader r = {(const uint8_t *)parts[0].data + SL_MSG_ENVELOPE};
  if (m->kind == SL_MSG_LAUNCH)
    rc = get_launch(&r, m, err, errlen);
  else
    get_fields(&r, m, kinds[m->kind].f, kinds[m->kind].nf);
  if (!rc)
    rc = get_frames(parts, nparts, m, err, errlen);
  return rc ? rc : check(m, err, errlen);
}
