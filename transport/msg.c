/* The codec of transport/msg.h. Decoding is in two steps: the frames are
 * read into an sl_msg (sizes, counts, magic, version, flag bits: what the
 * struct cannot hold), then check() judges the struct's values. Encoding
 * runs the same check() first, so both ends refuse the same messages and
 * what decodes encodes back to the same bytes. */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  LAUNCH_AT_END = 1u << 0,
  LAUNCH_FRESH = 1u << 1,
  LAUNCH_DOOMED = 1u << 2,
  LAUNCH_FLAGS = LAUNCH_AT_END | LAUNCH_FRESH | LAUNCH_DOOMED,
  INPUT_SPILLED = 1u << 0,
};

/* Bytes of each kind's fields after the envelope, and its frames (-1: a
 * CHUNK's, 1 plus its payload). */
static const struct {
  const char *name;
  size_t body;
  int frames;
} kinds[SL_MSG_NKINDS] = {
    [SL_MSG_HELLO] = {"hello", 16, 3},     [SL_MSG_WELCOME] = {"welcome", 8, 1},
    [SL_MSG_PEER] = {"peer", 12, 2},       [SL_MSG_LAUNCH] = {"launch", 160, 2},
    [SL_MSG_EMIT] = {"emit", 32, 1},       [SL_MSG_FINISHED] = {"finished", 4, 1},
    [SL_MSG_FAILED] = {"failed", 16, 1},   [SL_MSG_HEARTBEAT] = {"heartbeat", 8, 1},
    [SL_MSG_CANCEL] = {"cancel", 4, 1},    [SL_MSG_RESUME] = {"resume", 4, 1},
    [SL_MSG_DROP] = {"drop", 16, 1},       [SL_MSG_DELIVER] = {"deliver", 16, 1},
    [SL_MSG_BYE] = {"bye", 4, 1},          [SL_MSG_FETCH] = {"fetch", 24, 1},
    [SL_MSG_CHUNK] = {"chunk", 40, -1},
};

const char *sl_msg_kind_name(sl_msg_kind k)
{
  return k > 0 && k < SL_MSG_NKINDS ? kinds[k].name : NULL;
}

static bool known(sl_msg_kind k)
{
  return sl_msg_kind_name(k) != NULL;
}

/* Writes the message; always returns @p code, so that a caller writes
 * `return fail(...)`. */
__attribute__((format(printf, 4, 5))) static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
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
    return fail(SL_EPARSE, err, errlen, "%s is empty", what);
  if (n > max)
    return fail(SL_EPARSE, err, errlen, "%s is longer than %zu bytes", what, max);
  return 0;
}

static int check_chunk(const sl_msg_chunk *c, char *err, size_t errlen)
{
  if (c->npayload < 0 || c->npayload > SL_MSG_MAX_PAYLOAD)
    return fail(SL_EPARSE, err, errlen, "chunk: %d payload frames, at most %d", c->npayload,
                SL_MSG_MAX_PAYLOAD);
  uint64_t sum = 0;
  for (int i = 0; i < c->npayload; i++)
    sum += c->payload[i].len;
  if (sum != c->len)
    return fail(SL_EPARSE, err, errlen, "chunk: its payload frames hold %llu bytes, its header says %llu",
                (unsigned long long)sum, (unsigned long long)c->len);
  if (c->flags & ~SL_MSG_CHUNK_LAST)
    return fail(SL_EPARSE, err, errlen, "chunk: unknown flag bits 0x%x", c->flags & ~SL_MSG_CHUNK_LAST);
  if (c->status > 0)
    return fail(SL_EPARSE, err, errlen, "chunk: status %d, must be 0 or negative", c->status);
  if (c->status < 0) {
    if (c->len || c->offset || c->total || c->flags)
      return fail(SL_EPARSE, err, errlen, "chunk: status %d with a payload, offset, total or flags",
                  c->status);
    return 0;
  }
  if (c->offset > c->total || c->len > c->total - c->offset)
    return fail(SL_EPARSE, err, errlen, "chunk: bytes %llu + %llu past the partition's %llu",
                (unsigned long long)c->offset, (unsigned long long)c->len, (unsigned long long)c->total);
  bool ends = c->offset + c->len == c->total;
  if (ends != !!(c->flags & SL_MSG_CHUNK_LAST))
    return fail(SL_EPARSE, err, errlen, "chunk: %s", ends ? "ends its partition without the last flag"
                                                           : "last flag before the partition's end");
  if (c->len == 0 && c->total != 0)
    return fail(SL_EPARSE, err, errlen, "chunk: empty, of a partition that is not");
  return 0;
}

/* What the struct can hold and a sender never sends. */
static int check(const sl_msg *m, char *err, size_t errlen)
{
  if (!known(m->kind))
    return fail(SL_EPARSE, err, errlen, "unknown message kind %d", (int)m->kind);
  switch (m->kind) {
  case SL_MSG_HELLO: {
    int rc = check_string(m->u.hello.name, SL_MSG_NAME_MAX, "hello: the name", err, errlen);
    return rc ? rc : check_string(m->u.hello.endpoint, SL_MSG_ENDPOINT_MAX, "hello: the endpoint", err, errlen);
  }
  case SL_MSG_PEER:
    return check_string(m->u.peer.endpoint, SL_MSG_ENDPOINT_MAX, "peer: the endpoint", err, errlen);
  case SL_MSG_LAUNCH:
    if (m->u.launch.ninputs < 0 || m->u.launch.ninputs > SL_MSG_MAX_INPUTS)
      return fail(SL_EPARSE, err, errlen, "launch: %d inputs, at most %d", m->u.launch.ninputs,
                  SL_MSG_MAX_INPUTS);
    if (m->u.launch.ninputs > 0 && !m->u.launch.in)
      return fail(SL_EPARSE, err, errlen, "launch: %d inputs and no table", m->u.launch.ninputs);
    return 0;
  case SL_MSG_EMIT:
    if ((unsigned)m->u.emit.fate >= SL_MSG_FATE_NKINDS)
      return fail(SL_EPARSE, err, errlen, "emit: unknown fate %d", (int)m->u.emit.fate);
    return 0;
  case SL_MSG_FETCH:
    if (m->u.fetch.credit == 0 || m->u.fetch.chunk_bytes == 0)
      return fail(SL_EPARSE, err, errlen, "fetch: credit %u and chunk of %u bytes, both must be at least 1",
                  m->u.fetch.credit, m->u.fetch.chunk_bytes);
    return 0;
  case SL_MSG_CHUNK:
    return check_chunk(&m->u.chunk, err, errlen);
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

static void put_i32(writer *w, int32_t v)
{
  put_u32(w, (uint32_t)v);
}

static void put_i64(writer *w, int64_t v)
{
  put_u64(w, (uint64_t)v);
}

static void put_f64(writer *w, double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put_u64(w, bits);
}

static void put_launch(writer *w, const sl_decision *d)
{
  put_u32(w, d->task);
  put_u32(w, d->origin);
  put_i32(w, d->op);
  put_i32(w, d->node);
  put_i32(w, d->slot);
  put_i32(w, d->attempt);
  put_i64(w, d->split);
  put_i64(w, d->rows);
  put_f64(w, d->bytes);
  put_f64(w, d->target_bytes);
  put_i64(w, d->rows_per_part);
  put_i64(w, d->out_rows);
  put_i64(w, d->out_parts);
  put_f64(w, d->work_s);
  put_f64(w, d->setup_s);
  put_f64(w, d->spread);
  put_f64(w, d->charge_s);
  put_f64(w, d->speed);
  put_i64(w, d->share);
  put_i64(w, d->shares);
  put_i64(w, d->share_end);
  put_i64(w, d->out_blocks);
  put_u32(w, (d->outputs_at_end ? LAUNCH_AT_END : 0) | (d->fresh ? LAUNCH_FRESH : 0) |
                 (d->doomed ? LAUNCH_DOOMED : 0));
  put_u32(w, (uint32_t)d->ninputs);
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
    put_i32(&w, d->in[i].node);
    put_u32(&w, d->in[i].spilled ? INPUT_SPILLED : 0);
    put_f64(&w, d->in[i].bytes);
    put_f64(&w, d->in[i].read_bytes);
  }
  out->part[1] = (sl_msg_part){need ? out->table : out->head, need}; /* never NULL, even empty */
  return 0;
}

static void put_body(writer *w, const sl_msg *m)
{
  switch (m->kind) {
  case SL_MSG_HELLO:
    put_u32(w, m->u.hello.cpu_slots);
    put_u32(w, m->u.hello.gpu_slots);
    put_u64(w, m->u.hello.store_budget);
    break;
  case SL_MSG_WELCOME:
    put_u32(w, m->u.welcome.heartbeat_ms);
    put_u32(w, m->u.welcome.timeout_ms);
    break;
  case SL_MSG_PEER:
    put_i32(w, m->u.peer.node);
    put_u64(w, m->u.peer.incarnation);
    break;
  case SL_MSG_LAUNCH:
    put_launch(w, &m->u.launch);
    break;
  case SL_MSG_EMIT:
    put_u32(w, m->u.emit.task);
    put_u32(w, m->u.emit.index);
    put_i64(w, m->u.emit.rows);
    put_f64(w, m->u.emit.bytes);
    put_u32(w, m->u.emit.part);
    put_i32(w, (int32_t)m->u.emit.fate);
    break;
  case SL_MSG_FINISHED:
  case SL_MSG_CANCEL:
  case SL_MSG_RESUME:
    put_u32(w, m->u.task.task);
    break;
  case SL_MSG_FAILED:
    put_u32(w, m->u.failed.task);
    put_i32(w, m->u.failed.op);
    put_i32(w, m->u.failed.node);
    put_i32(w, m->u.failed.code);
    break;
  case SL_MSG_HEARTBEAT:
    put_u64(w, m->u.heartbeat.seq);
    break;
  case SL_MSG_BYE:
    put_i32(w, m->u.bye.code);
    break;
  case SL_MSG_DROP:
  case SL_MSG_DELIVER:
    put_u32(w, m->u.part.part);
    put_i32(w, m->u.part.op);
    put_f64(w, m->u.part.bytes);
    break;
  case SL_MSG_FETCH:
    put_u32(w, m->u.fetch.part);
    put_u32(w, m->u.fetch.tag);
    put_u64(w, m->u.fetch.offset);
    put_u32(w, m->u.fetch.credit);
    put_u32(w, m->u.fetch.chunk_bytes);
    break;
  case SL_MSG_CHUNK:
    put_u32(w, m->u.chunk.part);
    put_u32(w, m->u.chunk.tag);
    put_i32(w, m->u.chunk.status);
    put_u32(w, m->u.chunk.flags);
    put_u64(w, m->u.chunk.offset);
    put_u64(w, m->u.chunk.total);
    put_u64(w, m->u.chunk.len);
    break;
  default:
    break;
  }
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
  put_i32(&w, m->node);
  put_u64(&w, m->incarnation);
  put_body(&w, m);
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
  case SL_MSG_LAUNCH:
    if (put_inputs(&m->u.launch, out) != 0)
      return fail(SL_ENOMEM, err, errlen, "launch: no memory for %d inputs", m->u.launch.ninputs);
    out->nparts = 2;
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

static int32_t get_i32(reader *r)
{
  return (int32_t)get_u32(r);
}

static int64_t get_i64(reader *r)
{
  return (int64_t)get_u64(r);
}

static double get_f64(reader *r)
{
  uint64_t bits = get_u64(r);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* Copies a string frame into @p dst (max + 1 bytes). */
static int get_string(const sl_msg_part *f, char *dst, size_t max, const char *what, char *err, size_t errlen)
{
  if (f->len > max)
    return fail(SL_EPARSE, err, errlen, "%s: %zu bytes, at most %zu", what, f->len, max);
  if (f->len && memchr(f->data, '\0', f->len))
    return fail(SL_EPARSE, err, errlen, "%s holds a NUL byte", what);
  memcpy(dst, f->data, f->len);
  dst[f->len] = '\0';
  return 0;
}

static int get_launch(reader *r, sl_msg *m, char *err, size_t errlen)
{
  sl_decision *d = &m->u.launch;
  memset(d, 0, sizeof *d);
  d->kind = SL_DEC_LAUNCH;
  d->part = SL_NONE;
  d->task = get_u32(r);
  d->origin = get_u32(r);
  d->op = get_i32(r);
  d->node = get_i32(r);
  d->slot = get_i32(r);
  d->attempt = get_i32(r);
  d->split = get_i64(r);
  d->rows = get_i64(r);
  d->bytes = get_f64(r);
  d->target_bytes = get_f64(r);
  d->rows_per_part = get_i64(r);
  d->out_rows = get_i64(r);
  d->out_parts = get_i64(r);
  d->work_s = get_f64(r);
  d->setup_s = get_f64(r);
  d->spread = get_f64(r);
  d->charge_s = get_f64(r);
  d->speed = get_f64(r);
  d->share = get_i64(r);
  d->shares = get_i64(r);
  d->share_end = get_i64(r);
  d->out_blocks = get_i64(r);
  uint32_t flags = get_u32(r), n = get_u32(r);
  if (flags & ~(uint32_t)LAUNCH_FLAGS)
    return fail(SL_EPARSE, err, errlen, "launch: unknown flag bits 0x%x", flags & ~(uint32_t)LAUNCH_FLAGS);
  if (n > SL_MSG_MAX_INPUTS)
    return fail(SL_EPARSE, err, errlen, "launch: %u inputs, at most %d", n, SL_MSG_MAX_INPUTS);
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
    return fail(SL_EPARSE, err, errlen, "launch: an input table of %zu bytes for %zu inputs, expected %zu",
                f->len, n, n * SL_MSG_INPUT_BYTES);
  if (n == 0)
    return 0;
  if (n > m->in_cap) {
    sl_input *in = realloc(m->in_store, n * sizeof *in);
    if (in)
      m->in_store = in;
    sl_part_id *parts = in ? realloc(m->parts_store, n * sizeof *parts) : NULL;
    if (!parts)
      return fail(SL_ENOMEM, err, errlen, "launch: no memory for %zu inputs", n);
    m->parts_store = parts;
    m->in_cap = n;
  }
  reader r = {f->data};
  for (size_t i = 0; i < n; i++) {
    sl_input *in = &m->in_store[i];
    in->part = get_u32(&r);
    in->node = get_i32(&r);
    uint32_t flags = get_u32(&r);
    in->bytes = get_f64(&r);
    in->read_bytes = get_f64(&r);
    if (flags & ~(uint32_t)INPUT_SPILLED)
      return fail(SL_EPARSE, err, errlen, "launch: input %zu has unknown flag bits 0x%x", i,
                  flags & ~(uint32_t)INPUT_SPILLED);
    in->spilled = flags & INPUT_SPILLED;
    m->parts_store[i] = in->part;
  }
  d->in = m->in_store;
  d->inputs = m->parts_store;
  return 0;
}

static void get_body(reader *r, sl_msg *m)
{
  switch (m->kind) {
  case SL_MSG_HELLO:
    m->u.hello.cpu_slots = get_u32(r);
    m->u.hello.gpu_slots = get_u32(r);
    m->u.hello.store_budget = get_u64(r);
    break;
  case SL_MSG_WELCOME:
    m->u.welcome.heartbeat_ms = get_u32(r);
    m->u.welcome.timeout_ms = get_u32(r);
    break;
  case SL_MSG_PEER:
    m->u.peer.node = get_i32(r);
    m->u.peer.incarnation = get_u64(r);
    break;
  case SL_MSG_EMIT:
    m->u.emit.task = get_u32(r);
    m->u.emit.index = get_u32(r);
    m->u.emit.rows = get_i64(r);
    m->u.emit.bytes = get_f64(r);
    m->u.emit.part = get_u32(r);
    m->u.emit.fate = (sl_msg_fate)get_i32(r);
    break;
  case SL_MSG_FINISHED:
  case SL_MSG_CANCEL:
  case SL_MSG_RESUME:
    m->u.task.task = get_u32(r);
    break;
  case SL_MSG_FAILED:
    m->u.failed.task = get_u32(r);
    m->u.failed.op = get_i32(r);
    m->u.failed.node = get_i32(r);
    m->u.failed.code = get_i32(r);
    break;
  case SL_MSG_HEARTBEAT:
    m->u.heartbeat.seq = get_u64(r);
    break;
  case SL_MSG_BYE:
    m->u.bye.code = get_i32(r);
    break;
  case SL_MSG_DROP:
  case SL_MSG_DELIVER:
    m->u.part.part = get_u32(r);
    m->u.part.op = get_i32(r);
    m->u.part.bytes = get_f64(r);
    break;
  case SL_MSG_FETCH:
    m->u.fetch.part = get_u32(r);
    m->u.fetch.tag = get_u32(r);
    m->u.fetch.offset = get_u64(r);
    m->u.fetch.credit = get_u32(r);
    m->u.fetch.chunk_bytes = get_u32(r);
    break;
  case SL_MSG_CHUNK:
    m->u.chunk.part = get_u32(r);
    m->u.chunk.tag = get_u32(r);
    m->u.chunk.status = get_i32(r);
    m->u.chunk.flags = get_u32(r);
    m->u.chunk.offset = get_u64(r);
    m->u.chunk.total = get_u64(r);
    m->u.chunk.len = get_u64(r);
    break;
  default:
    break;
  }
}

/* The envelope of frame @p f, and its size for that kind. */
static int get_envelope(const sl_msg_part *f, sl_msg *m, char *err, size_t errlen)
{
  const uint8_t *p = f->data;
  if (f->len < SL_MSG_ENVELOPE)
    return fail(SL_EPARSE, err, errlen, "a header of %zu bytes, shorter than the envelope's %d", f->len,
                SL_MSG_ENVELOPE);
  if (p[0] != 'S' || p[1] != 'L')
    return fail(SL_EPARSE, err, errlen, "not a sluice message (magic 0x%02x%02x)", p[0], p[1]);
  if (p[2] != SL_MSG_VERSION)
    return fail(SL_EPARSE, err, errlen, "message version %u, this end speaks %d", p[2], SL_MSG_VERSION);
  m->kind = (sl_msg_kind)p[3];
  if (!known(m->kind))
    return fail(SL_EPARSE, err, errlen, "unknown message kind %u", p[3]);
  if (f->len != SL_MSG_ENVELOPE + kinds[m->kind].body)
    return fail(SL_EPARSE, err, errlen, "a %s header of %zu bytes, expected %zu", kinds[m->kind].name, f->len,
                SL_MSG_ENVELOPE + kinds[m->kind].body);
  reader r = {p + 4};
  m->node = get_i32(&r);
  m->incarnation = get_u64(&r);
  return 0;
}

/* The frames after the header. */
static int get_frames(const sl_msg_part *parts, int nparts, sl_msg *m, char *err, size_t errlen)
{
  const char *name = kinds[m->kind].name;
  int want = kinds[m->kind].frames;
  if (want > 0 && nparts != want)
    return fail(SL_EPARSE, err, errlen, "a %s of %d frames, expected %d", name, nparts, want);
  switch (m->kind) {
  case SL_MSG_HELLO: {
    int rc = get_string(&parts[1], m->u.hello.name, SL_MSG_NAME_MAX, "hello: the name", err, errlen);
    return rc ? rc
              : get_string(&parts[2], m->u.hello.endpoint, SL_MSG_ENDPOINT_MAX, "hello: the endpoint", err,
                           errlen);
  }
  case SL_MSG_PEER:
    return get_string(&parts[1], m->u.peer.endpoint, SL_MSG_ENDPOINT_MAX, "peer: the endpoint", err, errlen);
  case SL_MSG_LAUNCH:
    return get_inputs(&parts[1], m, err, errlen);
  case SL_MSG_CHUNK:
    if (nparts - 1 > SL_MSG_MAX_PAYLOAD)
      return fail(SL_EPARSE, err, errlen, "chunk: %d payload frames, at most %d", nparts - 1,
                  SL_MSG_MAX_PAYLOAD);
    m->u.chunk.npayload = nparts - 1;
    for (int i = 1; i < nparts; i++) {
      if (parts[i].len == 0)
        return fail(SL_EPARSE, err, errlen, "chunk: payload frame %d is empty", i);
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
    return fail(SL_EPARSE, err, errlen, "a message without frames");
  int rc = get_envelope(&parts[0], m, err, errlen);
  if (rc)
    return rc;
  reader r = {(const uint8_t *)parts[0].data + SL_MSG_ENVELOPE};
  if (m->kind == SL_MSG_LAUNCH)
    rc = get_launch(&r, m, err, errlen);
  else
    get_body(&r, m);
  if (!rc)
    rc = get_frames(parts, nparts, m, err, errlen);
  return rc ? rc : check(m, err, errlen);
}
