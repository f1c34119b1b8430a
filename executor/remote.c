/*
 * A worker process (remote.h). Its main thread owns the ZeroMQ sockets:
 * the control channel to the head, the partition server its peers fetch
 * from, and an eventfd its slot threads ring when they have queued a
 * message for the head. Slot threads run task.c's attempts and reach the
 * head only through that queue; each owns the fetch clients it opens to
 * its peers. One lock (the engine's) guards the store, the slots and the
 * queue, as in the executor.
 */
#include "remote.h"

#include <errno.h>
#include <math.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "executor/engine_internal.h"
#include "executor/part_wire.h"
#include "models/error.h"
#include "transport/control.h"
#include "transport/xfer.h"
#include "workloads/kernels/gemm_cuda.h"

void sl_remote_opts_default(sl_remote_opts *o)
{
  *o = (sl_remote_opts){.join_timeout_s = 10};
}

/* A slot's own: the order it runs (its copies of the LAUNCH's tables) and
 * its fetch clients, one per peer node. */
typedef struct {
  sl_xfer_client **client;
  char (*client_endpoint)[SL_MSG_ENDPOINT_MAX + 1];
  uint32_t emits; /* outputs of the current attempt so far */
  char why[SL_MSG_WHY_MAX + 1]; /* why its inputs could not be had */
} slot_state;

/* An output for the sink on its way to the head: its EMIT waits for no
 * answer, so the rows leave the slot with it and go once it is sent. */
typedef struct {
  sl_rows rows;
  sl_part_wire wire; /* the EMIT's payload frames point into it */
} sink_output;

/* A message for the head, and what it owns until it is sent. */
typedef struct {
  sl_msg m;
  sink_output *own;
} queued;

typedef struct {
  engine e;
  int node, nnodes, nslots;
  void *zctx;
  sl_control_worker *cw;
  sl_xfer_server *xs;
  int wake_fd;
  atomic_size_t parked; /* FETCHes the partition server holds (its own count is the main thread's) */
  queued *outq; /* messages for the head, under the lock */
  size_t nout, capout;
  char (*peer)[SL_MSG_ENDPOINT_MAX + 1]; /* where each node serves its partitions; "" unknown */
  worker *slots;
  slot_state *state;
  bool built, failed_told;
  int fetch_timeout_ms;
  char *args; /* the PLAN's arguments, kept: argv points into them */
  char **argv;
} proc;

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------- to the head */

static void free_sink_output(sink_output *o)
{
  if (o)
    sl_rows_free(&o->rows);
  free(o);
}

/* Queues @p m for the main thread to send, with what it owns (@p own, freed
 * once sent; NULL for none); under the lock. */
static void queue_owning(proc *p, const sl_msg *m, sink_output *own)
{
  if (p->nout == p->capout) {
    size_t cap = p->capout ? 2 * p->capout : 16;
    queued *q = realloc(p->outq, cap * sizeof *q);
    if (!q) {
      free_sink_output(own);
      sl__exec_fail(&p->e, SL_ENOMEM, "node %d: out of memory queuing a message for the head", p->node);
      return;
    }
    p->outq = q;
    p->capout = cap;
  }
  p->outq[p->nout++] = (queued){*m, own};
  uint64_t one = 1;
  if (write(p->wake_fd, &one, sizeof one) < 0) { /* a full counter is already a wake-up */
  }
}

static void queue(proc *p, const sl_msg *m)
{
  queue_owning(p, m, NULL);
}

static void queue_failed(proc *p, sl_task_id task, int op, int code, const char *why)
{
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_FAILED;
  m.u.failed = (sl_msg_failed){.task = task, .op = op, .node = p->node, .code = code};
  snprintf(m.u.failed.why, sizeof m.u.failed.why, "%s", why && why[0] ? why : sl_strerror(code));
  queue(p, &m);
}

/* ------------------------------------------------- the engine's hooks */

/* What a FINISHED says of attempt record @p r. */
static sl_msg_finished finished_of(const engine *e, const sl_task_record *r)
{
  return (sl_msg_finished){.task = r->task, .parts_out = (uint32_t)r->parts_out,
                           .flags = atomic_load(&e->real_kernels) ? SL_MSG_FINISHED_REAL : 0,
                           .rows_out = r->rows_out, .bytes_out = r->bytes_out, .run_s = r->end_s - r->start_s,
                           .waited_s = r->waited_s, .transfer_s = r->transfer_s,
                           .transfer_bytes = r->transfer_bytes, .spill_write_s = r->spill_write_s,
                           .spill_write_bytes = r->spill_write_bytes, .spill_read_s = r->spill_read_s,
                           .spill_read_bytes = r->spill_read_bytes, .spread = r->spread};
}

/* An output for the sink goes to the head with its bytes and waits for no
 * answer: the core takes such an output as it comes, and the head keeps
 * it, so the rows leave the slot with the message and nothing here keeps
 * a copy. */
static int emit_to_sink(proc *p, sl_msg *m, sl_rows *out, sl_part_id *pid, sl_emit_fate *fate)
{
  sink_output *o = malloc(sizeof *o);
  if (!o) {
    sl__exec_fail(&p->e, SL_ENOMEM, "node %d: out of memory sending an output for the sink", p->node);
    return SL_ENOMEM;
  }
  sl_rows_init(&o->rows);
  sl_rows_move(&o->rows, out);
  sl_part_wire_segs(&o->rows, &o->wire);
  m->u.emit.flags |= SL_MSG_EMIT_UNANSWERED;
  m->u.emit.npayload = o->wire.nsegs;
  for (int i = 0; i < o->wire.nsegs; i++)
    m->u.emit.payload[i] = (sl_msg_part){o->wire.seg[i].data, o->wire.seg[i].len};
  queue_owning(p, m, o);
  *pid = SL_NONE;
  *fate = SL_EMIT_DISCARDED;
  return 0;
}

static int remote_emit(worker *w, sl_task_id task, sl_rows *out, const sl_task_record *ends, sl_part_id *pid,
                       sl_emit_fate *fate)
{
  engine *e = w->e;
  proc *p = e->remote_ctx;
  slot_state *st = w->remote;
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_EMIT;
  m.u.emit = (sl_msg_emit){.task = task, .index = ++st->emits, .rows = (int64_t)sl_rows_count(out),
                           .bytes = (double)sl_rows_bytes(out), .part = SL_NONE, .fate = SL_MSG_FATE_ASK};
  if (ends) { /* the attempt ends with it: no FINISHED follows */
    m.u.emit.flags = SL_MSG_EMIT_ENDS;
    m.u.emit.end = finished_of(e, ends);
  }
  if (w->current_op == e->plan->nops - 1)
    return emit_to_sink(p, &m, out, pid, fate);
  w->has_answer = false;
  queue(p, &m);
  while (!w->has_answer && !atomic_load(&w->cancel) && !e->stop)
    pthread_cond_wait(&w->cv, &e->lock);
  if (!w->has_answer)
    return SL_ESTATE;
  w->has_answer = false;
  *pid = w->answer_part;
  *fate = w->answer_fate;
  return w->answer_rc;
}

/* A fetch's destination: the partition's rows, through a reader. */
static int put_rows(void *ctx, uint64_t total, uint64_t offset, const void *data, size_t len, char *err,
                    size_t errlen)
{
  return sl_part_wire_reader_put(ctx, total, offset, data, len, err, errlen);
}

/* The bytes of partition @p part from node @p from's worker into @p out.
 * A partition its producer has not stored yet waits on its server for
 * half the timeout (sl_xfer_server_set_park()); past that it is asked for
 * again until the timeout. */
static int fetch_one(proc *p, worker *w, int from, sl_part_id part, sl_rows *out, char *err, size_t errlen)
{
  slot_state *st = w->remote;
  char endpoint[SL_MSG_ENDPOINT_MAX + 1];
  pthread_mutex_lock(&p->e.lock);
  snprintf(endpoint, sizeof endpoint, "%s", p->peer[from]);
  pthread_mutex_unlock(&p->e.lock);
  if (!endpoint[0]) {
    snprintf(err, errlen, "node %d holds input partition %u, but the head never said where it serves", from, part);
    return SL_ENOENT;
  }
  if (st->client[from] && strcmp(st->client_endpoint[from], endpoint) != 0) { /* the node came back */
    sl_xfer_client_free(st->client[from]);
    st->client[from] = NULL;
  }
  if (!st->client[from]) {
    sl_xfer_opts xo;
    sl_xfer_opts_default(&xo);
    xo.timeout_ms = p->fetch_timeout_ms;
    if (!(st->client[from] = sl_xfer_client_new(p->zctx, endpoint, &xo, err, errlen)))
      return SL_EIO;
    snprintf(st->client_endpoint[from], sizeof st->client_endpoint[from], "%s", endpoint);
  }
  double give_up = now_s() + p->fetch_timeout_ms / 1000.0;
  int rc = SL_EAGAIN;
  size_t len = 0;
  while (rc != 0 && !atomic_load(&w->cancel) && !p->e.stop) {
    /* straight into the rows, one copy out of ZeroMQ's buffers */
    sl_part_wire_reader reader;
    sl_part_wire_reader_init(&reader, out);
    sl_xfer_dest into_rows = {put_rows, &reader};
    rc = sl_xfer_fetch_to(st->client[from], part, &into_rows, &len, err, errlen);
    if (rc == 0)
      rc = sl_part_wire_reader_end(&reader, err, errlen);
    if (rc != SL_ENOENT || now_s() > give_up)
      break;
    struct timespec nap = {0, 1000000}; /* stored on its node a moment after the head knew of it */
    nanosleep(&nap, NULL);
  }
  if (rc == SL_ENOMEM)
    snprintf(err, errlen, "out of memory for input partition %u", part);
  return rc;
}

/* A partition of this node that its producer (another slot here) has
 * not stored yet: the head knew of it first. Under the lock. */
static sl_blob *wait_local(proc *p, sl_part_id part, const sl_rows **mem, char *path, size_t n)
{
  engine *e = &p->e;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += p->fetch_timeout_ms / 1000 + 1;
  sl_blob *b;
  while (!(b = sl_store_acquire(e->store, part, mem, path, n)) && !e->stop)
    if (pthread_cond_timedwait(&e->spill_cv, &e->lock, &until) == ETIMEDOUT)
      break;
  return b;
}

static int remote_fetch(worker *w, const sl_decision *d, input_ref *in, double *took)
{
  engine *e = w->e;
  proc *p = e->remote_ctx;
  double t0 = now_s();
  int rc = 0;
  char err[600] = "";
  for (int i = 0; i < d->ninputs && rc == 0; i++) {
    if (in[i].blob)
      continue; /* pinned when the order came */
    if (in[i].node == p->node) {
      pthread_mutex_lock(&e->lock);
      in[i].blob = wait_local(p, in[i].part, &in[i].mem, in[i].path, sizeof in[i].path);
      pthread_mutex_unlock(&e->lock);
      if (!in[i].blob) {
        snprintf(err, sizeof err, "input partition %u never reached this node's store", in[i].part);
        rc = SL_ENOENT;
      }
      continue;
    }
    in[i].remote = true;
    rc = fetch_one(p, w, in[i].node, in[i].part, &in[i].fetched, err, sizeof err);
    in[i].mem = &in[i].fetched;
  }
  *took = now_s() - t0;
  if (rc == 0 || atomic_load(&w->cancel))
    return rc == 0 ? 0 : SL_EINTR;
  /* a peer lost, or its link: the head's core retries the attempt once
   * it knows; anything else is this node's failure */
  slot_state *st = w->remote;
  snprintf(st->why, sizeof st->why, "node %d, task %u: %s", p->node, d->task, err);
  if (rc != SL_ENOMEM && rc != SL_EPROTO)
    return SL_ENOENT;
  pthread_mutex_lock(&e->lock);
  sl__exec_fail(e, rc, "%s", st->why);
  pthread_mutex_unlock(&e->lock);
  return rc;
}

static void remote_ended(worker *w, const sl_decision *d, const sl_task_record *r, int rc)
{
  engine *e = w->e;
  proc *p = e->remote_ctx;
  if (rc == 0) {
    sl_msg m;
    sl_msg_init(&m);
    m.kind = SL_MSG_FINISHED;
    m.u.finished = finished_of(e, r);
    queue(p, &m);
    return;
  }
  /* stopped as told, or an input that could not be had: the head's core
   * takes the attempt back; anything else fails the run */
  slot_state *st = w->remote;
  bool retry = rc == SL_EINTR || rc == SL_ENOENT;
  const char *why = rc == SL_EINTR ? "stopped" : st->why[0] ? st->why : e->fail_msg;
  queue_failed(p, d->task, d->op, retry ? rc : (e->fail_code ? e->fail_code : rc), why);
  st->why[0] = '\0';
  if (!retry)
    p->failed_told = true; /* the run's failure, told with its attempt */
}

/* A slot stored an output: if a peer's FETCH waits on this node's
 * partition server, the main thread looks again (its eventfd). */
static void remote_stored(worker *w)
{
  proc *p = w->e->remote_ctx;
  if (atomic_load(&p->parked) == 0)
    return;
  uint64_t one = 1;
  if (write(p->wake_fd, &one, sizeof one) < 0) { /* a full counter is already a wake-up */
  }
}

static const sl_exec_remote hooks = {
    .emit = remote_emit, .fetch = remote_fetch, .ended = remote_ended, .stored = remote_stored};

/* ------------------------------------------------------------- slots */

static void *slot_main(void *arg)
{
  worker *w = arg;
  engine *e = w->e;
  pthread_mutex_lock(&e->lock);
  sl_decision d;
  double launched;
  input_ref *in;
  while (sl__exec_await_order(w, &d, &launched, &in)) {
    sl__exec_begin_attempt(w, &d);
    ((slot_state *)w->remote)->emits = 0;
    /* a kill that found nothing running took this attempt: it dies as it
     * starts (the head's core fails it when the worker says so) */
    w->killed = d.doomed;
    atomic_store(&w->cancel, d.doomed);
    pthread_mutex_unlock(&e->lock);
    sl__exec_run_task(w, &d, launched, in); /* returns with the lock held */
    w->busy = false;
    free((void *)d.in);
    free((void *)d.inputs);
  }
  pthread_mutex_unlock(&e->lock);
  return NULL;
}

static worker *slot_of(proc *p, int slot)
{
  return p->built && slot >= 0 && slot < p->nslots ? &p->slots[slot] : NULL;
}

/* Forgets an order its slot has not started. */
static void drop_next(proc *p, worker *w)
{
  sl__exec_unpin_inputs(&p->e, w->next_inputs, w->next.ninputs);
  free((void *)w->next.in);
  free((void *)w->next.inputs);
  w->next_inputs = NULL;
  w->has_next = false;
}

/* ------------------------------------------------- from the head */

static int on_launch(proc *p, const sl_decision *src, char *err, size_t errlen)
{
  engine *e = &p->e;
  worker *w = slot_of(p, src->slot);
  if (!w || src->node != p->node) {
    snprintf(err, errlen, "a launch on node %d slot %d, which this worker (node %d, %d slots) is not", src->node,
             src->slot, p->node, p->nslots);
    return SL_EPROTO;
  }
  sl_decision d = *src;
  int n = d.ninputs;
  sl_input *tin = n ? malloc(sizeof *tin * (size_t)n) : NULL;
  sl_part_id *tparts = n ? malloc(sizeof *tparts * (size_t)n) : NULL;
  input_ref *in = n ? calloc((size_t)n, sizeof *in) : NULL;
  if (n && (!tin || !tparts || !in)) {
    free(tin);
    free(tparts);
    free(in);
    snprintf(err, errlen, "out of memory for a launch of %d inputs", n);
    return SL_ENOMEM;
  }
  if (n) {
    memcpy(tin, src->in, sizeof *tin * (size_t)n);
    memcpy(tparts, src->inputs, sizeof *tparts * (size_t)n);
  }
  d.in = tin;
  d.inputs = tparts;
  pthread_mutex_lock(&e->lock);
  for (int i = 0; i < n; i++) {
    in[i].node = tin[i].node;
    in[i].part = tparts[i];
    in[i].bytes = tin[i].read_bytes;
    if (tin[i].node == p->node) /* else fetched by the slot; one not stored yet too */
      in[i].blob = sl_store_acquire(e->store, tparts[i], &in[i].mem, in[i].path, sizeof in[i].path);
  }
  if (w->has_next) /* an order cancelled before it ran */
    drop_next(p, w);
  w->next = d;
  w->next_inputs = in;
  w->next_launched_s = sl__exec_now(e);
  w->has_next = true;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&e->lock);
  return 0;
}

/* The slot running @p task, or NULL. Under the lock. */
static worker *running(proc *p, sl_task_id task)
{
  for (int s = 0; s < p->nslots; s++)
    if (p->slots[s].busy && p->slots[s].current == task)
      return &p->slots[s];
  return NULL;
}

static void on_answer(proc *p, const sl_msg_emit *a)
{
  static const int rc_of[SL_MSG_FATE_NKINDS] = {[SL_MSG_FATE_HOLD] = SL_EAGAIN, [SL_MSG_FATE_GONE] = SL_ESTATE};
  static const sl_emit_fate fate_of[SL_MSG_FATE_NKINDS] = {
      [SL_MSG_FATE_STORED] = SL_EMIT_STORED, [SL_MSG_FATE_SPILLED] = SL_EMIT_SPILLED,
      [SL_MSG_FATE_DISCARDED] = SL_EMIT_DISCARDED};
  pthread_mutex_lock(&p->e.lock);
  worker *w = running(p, a->task);
  if (w && a->fate != SL_MSG_FATE_ASK) {
    w->has_answer = true;
    w->answer_rc = rc_of[a->fate];
    w->answer_fate = fate_of[a->fate];
    w->answer_part = a->part;
    pthread_cond_signal(&w->cv);
  }
  pthread_mutex_unlock(&p->e.lock);
}

static void on_task_order(proc *p, sl_msg_kind kind, sl_task_id task)
{
  engine *e = &p->e;
  pthread_mutex_lock(&e->lock);
  worker *w = running(p, task);
  if (w && kind == SL_MSG_RESUME)
    w->resume = true;
  if (w && kind == SL_MSG_CANCEL) {
    atomic_store(&w->cancel, true);
    w->killed = true; /* the head's core has written it off */
  }
  if (w)
    pthread_cond_signal(&w->cv);
  for (int s = 0; kind == SL_MSG_CANCEL && s < p->nslots; s++)
    if (p->slots[s].has_next && p->slots[s].next.task == task)
      drop_next(p, &p->slots[s]);
  pthread_mutex_unlock(&e->lock);
}

static void on_drop(proc *p, sl_part_id part)
{
  pthread_mutex_lock(&p->e.lock);
  sl_store_drop(p->e.store, part);
  pthread_mutex_unlock(&p->e.lock);
  sl_xfer_server_withdraw(p->xs, part); /* its buffers go once no frame holds them */
}

static void on_peer(proc *p, const sl_msg_peer *peer)
{
  if (peer->node < 0 || peer->node >= p->nnodes)
    return;
  pthread_mutex_lock(&p->e.lock);
  snprintf(p->peer[peer->node], sizeof p->peer[peer->node], "%s", peer->endpoint);
  pthread_mutex_unlock(&p->e.lock);
}

/* ------------------------------------------------ serving partitions */

typedef struct {
  proc *p;
  sl_blob *blob;  /* pinned while served */
  sl_rows owned;  /* a spilled partition, read back to be served */
  sl_part_wire wire;
} publication;

/* Once neither the server nor ZeroMQ holds a partition's frames; maybe on
 * ZeroMQ's thread. */
static void unpublished(void *ctx)
{
  publication *pub = ctx;
  pthread_mutex_lock(&pub->p->e.lock);
  sl_store_release(pub->p->e.store, pub->blob);
  pthread_mutex_unlock(&pub->p->e.lock);
  sl_rows_free(&pub->owned);
  free(pub);
}

/* A peer asks for a partition: served from the store's buffers, or read
 * back from its spill file. One not stored yet is not served: the peer
 * asks again. */
static void serve_from_store(void *ctx, sl_xfer_server *s, sl_part_id part)
{
  proc *p = ctx;
  publication *pub = calloc(1, sizeof *pub);
  if (!pub)
    return;
  pub->p = p;
  const sl_rows *mem;
  char path[600], err[700];
  pthread_mutex_lock(&p->e.lock);
  pub->blob = p->built ? sl_store_acquire(p->e.store, part, &mem, path, sizeof path) : NULL;
  bool ready = pub->blob && (mem || sl_store_blob_ready(pub->blob));
  pthread_mutex_unlock(&p->e.lock);
  if (ready && !mem) {
    ready = sl_store_read_spill(path, &pub->owned, err, sizeof err) == 0;
    mem = &pub->owned;
  }
  if (ready) {
    sl_part_wire_segs(mem, &pub->wire);
    if (sl_xfer_server_publish(s, part, pub->wire.seg, pub->wire.nsegs, unpublished, pub) == 0)
      return;
  }
  if (pub->blob) {
    pthread_mutex_lock(&p->e.lock);
    sl_store_release(p->e.store, pub->blob);
    pthread_mutex_unlock(&p->e.lock);
  }
  sl_rows_free(&pub->owned);
  free(pub);
}

/* ------------------------------------------------------------ the plan */

static int build(proc *p, const sl_msg_plan *plan, sl_remote_build_fn fn, void *ctx, char *err, size_t errlen)
{
  if (p->built)
    return 0;
  p->args = malloc(plan->args_len + 1);
  p->argv = calloc(plan->argc + 2, sizeof *p->argv);
  if (!p->args || !p->argv) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  memcpy(p->args, plan->args, plan->args_len);
  p->argv[0] = "run";
  for (size_t i = 0, k = 1; i < plan->args_len; k++) {
    p->argv[k] = p->args + i;
    i += strlen(p->args + i) + 1;
  }
  if (chdir(plan->cwd) < 0) {
    snprintf(err, errlen, "cannot work in the head's folder %s: %s", plan->cwd, strerror(errno));
    return SL_EIO;
  }
  sl_remote_run run;
  int rc = fn(ctx, plan->cwd, (int)plan->argc + 1, p->argv, &run, err, errlen);
  if (rc)
    return rc;
  engine *e = &p->e;
  e->plan = run.plan;
  e->cluster = run.cluster;
  e->opts = run.opts;
  p->nnodes = run.cluster->nnodes;
  if (p->node >= p->nnodes) {
    snprintf(err, errlen, "the head made this worker node %d of a cluster of %d", p->node, p->nnodes);
    return SL_EPROTO;
  }
  /* each node its own folder: the workers of one machine share the run's */
  char spill[700];
  snprintf(spill, sizeof spill, "%s%s", run.opts->spill_dir ? run.opts->spill_dir : run.opts->out_dir,
           run.opts->spill_dir ? "" : "/spill");
  if (mkdir(spill, 0777) < 0 && errno != EEXIST) {
    snprintf(err, errlen, "cannot create the spill folder %s: %s", spill, strerror(errno));
    return SL_EIO;
  }
  snprintf(spill + strlen(spill), sizeof spill - strlen(spill), "/node-%d", p->node);
  e->store = sl_store_new(p->nnodes, spill);
  e->net = sl_net_new(run.cluster);
  p->peer = calloc((size_t)p->nnodes, sizeof *p->peer);
  p->nslots = (int)plan->slots;
  p->slots = calloc(p->nslots ? (size_t)p->nslots : 1, sizeof *p->slots);
  p->state = calloc(p->nslots ? (size_t)p->nslots : 1, sizeof *p->state);
  if (!e->store || !e->net || !p->peer || !p->slots || !p->state) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  if ((rc = sl__exec_check_kernels(e, err, errlen)) < 0)
    return rc;
  e->gpu_present = sl_cuda_device_count() > 0;
  clock_gettime(CLOCK_MONOTONIC, &e->t0);
  p->built = true;
  for (int s = 0; s < p->nslots; s++) {
    worker *w = &p->slots[s];
    slot_state *st = &p->state[s];
    st->client = calloc((size_t)p->nnodes, sizeof *st->client);
    st->client_endpoint = calloc((size_t)p->nnodes, sizeof *st->client_endpoint);
    if (!st->client || !st->client_endpoint) {
      p->nslots = s;
      snprintf(err, errlen, "out of memory");
      return SL_ENOMEM;
    }
    w->e = e;
    w->node = p->node;
    w->slot = s;
    w->remote = st;
    pthread_cond_init(&w->cv, NULL);
    atomic_init(&w->cancel, false);
    if (pthread_create(&w->thread, NULL, slot_main, w) != 0) {
      pthread_cond_destroy(&w->cv);
      p->nslots = s;
      snprintf(err, errlen, "cannot start a slot thread: %s", strerror(errno));
      return SL_ENOMEM;
    }
  }
  return 0;
}

static void stop_slots(proc *p)
{
  engine *e = &p->e;
  pthread_mutex_lock(&e->lock);
  e->stop = true;
  for (int s = 0; s < p->nslots; s++) {
    atomic_store(&p->slots[s].cancel, true);
    pthread_cond_signal(&p->slots[s].cv);
  }
  pthread_cond_broadcast(&e->spill_cv);
  pthread_mutex_unlock(&e->lock);
  for (int s = 0; s < p->nslots; s++)
    pthread_join(p->slots[s].thread, NULL);
  for (int s = 0; s < p->nslots; s++) {
    worker *w = &p->slots[s];
    if (w->has_next)
      drop_next(p, w);
    pthread_cond_destroy(&w->cv);
    for (int op = 0; op < SL_MAX_OPS; op++)
      for (int m = 0; m < MAX_MEMBERS; m++)
        sl_kernel_free(w->kernels[op][m]);
    for (int n = 0; n < p->nnodes; n++)
      sl_xfer_client_free(p->state[s].client[n]);
  }
}

/* ------------------------------------------------------------- the loop */

/* Sends what the slots queued; what the head's queue cannot take yet stays. */
static int send_queued(proc *p, char *err, size_t errlen)
{
  uint64_t n;
  if (read(p->wake_fd, &n, sizeof n) < 0 && errno != EAGAIN) {
    snprintf(err, errlen, "eventfd: %s", strerror(errno));
    return SL_EIO;
  }
  pthread_mutex_lock(&p->e.lock);
  size_t sent = 0;
  int rc = 0;
  for (; sent < p->nout; sent++) {
    rc = sl_control_worker_send(p->cw, &p->outq[sent].m, err, errlen);
    if (rc == SL_EAGAIN) {
      rc = 0;
      break;
    }
    free_sink_output(p->outq[sent].own); /* ZeroMQ copied its bytes */
    if (rc)
      break;
  }
  if (sent > 0) {
    memmove(p->outq, p->outq + sent, (p->nout - sent) * sizeof *p->outq);
    p->nout -= sent;
  }
  if (p->nout) { /* try again on the next turn */
    uint64_t one = 1;
    if (write(p->wake_fd, &one, sizeof one) < 0) {
    }
  }
  /* what the slots' attempts and the head's drops let go of */
  sl_blob *g = p->built ? sl_store_take_garbage(p->e.store, NULL) : NULL;
  pthread_mutex_unlock(&p->e.lock);
  sl_store_free_garbage(g);
  return rc;
}

/* Acts on one message from the head; a code ends the worker. */
static int on_message(proc *p, const sl_msg *m, sl_remote_build_fn fn, void *ctx, char *err, size_t errlen)
{
  if (m->kind == SL_MSG_LOSE) {
    /* a lose fault from a head that cannot reach this process itself: it
     * ends (or stops) here as a machine lost does, with nothing said */
    fflush(NULL);
    kill(getpid(), m->u.lose.signal);
    return 0; /* SIGSTOP: on from here when continued, to be fenced by the head */
  }
  if (!p->built && m->kind != SL_MSG_PLAN && m->kind != SL_MSG_PEER) {
    snprintf(err, errlen, "a %s before the plan", sl_msg_kind_name(m->kind));
    return SL_EPROTO;
  }
  switch (m->kind) {
  case SL_MSG_PLAN: {
    int rc = build(p, &m->u.plan, fn, ctx, err, errlen);
    if (rc) {
      pthread_mutex_lock(&p->e.lock);
      queue_failed(p, SL_NONE, -1, rc, err);
      pthread_mutex_unlock(&p->e.lock);
    }
    return 0; /* told: the head ends the run, and dismisses this worker */
  }
  case SL_MSG_PEER:
    if (!p->built) { /* PLAN comes first; a PEER before it is kept for after */
      snprintf(err, errlen, "a peer before the plan");
      return SL_EPROTO;
    }
    on_peer(p, &m->u.peer);
    return 0;
  case SL_MSG_LAUNCH: {
    int rc = on_launch(p, &m->u.launch, err, errlen);
    if (rc == SL_ENOMEM) {
      pthread_mutex_lock(&p->e.lock);
      queue_failed(p, m->u.launch.task, m->u.launch.op, rc, err);
      pthread_mutex_unlock(&p->e.lock);
      return 0;
    }
    return rc;
  }
  case SL_MSG_EMIT:
    on_answer(p, &m->u.emit);
    return 0;
  case SL_MSG_RESUME:
  case SL_MSG_CANCEL:
    on_task_order(p, m->kind, m->u.task.task);
    return 0;
  case SL_MSG_DROP:
    on_drop(p, m->u.part.part);
    return 0;
  default:
    snprintf(err, errlen, "a %s from the head, which a worker does not take", sl_msg_kind_name(m->kind));
    return SL_EPROTO;
  }
}

/* Tells the head of a failure of this node outside any attempt, once. */
static void tell_failure(proc *p)
{
  engine *e = &p->e;
  pthread_mutex_lock(&e->lock);
  if (e->fail_code && !p->failed_told) {
    queue_failed(p, SL_NONE, -1, e->fail_code, e->fail_msg);
    p->failed_told = true;
  }
  pthread_mutex_unlock(&e->lock);
}

/* Answers the FETCHes parked on partitions stored since, and tells the
 * slots whether any still wait (remote_stored()). The count is set before
 * the look: a slot that stores a partition after the look reads it set
 * and rings; one that stored before is found by the look. */
static void recheck_parked(proc *p)
{
  if (atomic_load(&p->parked) == 0 && sl_xfer_server_parked(p->xs) == 0)
    return;
  atomic_store(&p->parked, sl_xfer_server_parked(p->xs));
  sl_xfer_server_recheck(p->xs);
  atomic_store(&p->parked, sl_xfer_server_parked(p->xs));
}

static int work(proc *p, sl_remote_build_fn fn, void *ctx, char *err, size_t errlen)
{
  for (;;) {
    tell_failure(p);
    zmq_pollitem_t items[3] = {{sl_control_worker_socket(p->cw), 0, ZMQ_POLLIN, 0},
                               {sl_xfer_server_socket(p->xs), 0, ZMQ_POLLIN, 0},
                               {NULL, p->wake_fd, ZMQ_POLLIN, 0}};
    double wait = sl_control_worker_wakeup(p->cw) - sl_control_clock();
    /* parked FETCHes are answered ENOENT at the end of their wait */
    double most = atomic_load(&p->parked) ? fmax(1, p->fetch_timeout_ms / 8) : 50;
    long ms = (long)fmin(most, fmax(0, ceil(wait * 1000)));
    if (zmq_poll(items, 3, ms) < 0 && zmq_errno() != EINTR) {
      snprintf(err, errlen, "poll: %s", zmq_strerror(zmq_errno()));
      return SL_EIO;
    }
    /* the head first: a FETCH for a partition stored a moment ago is
     * answered after the news that stored it */
    for (;;) {
      sl_control_event ev;
      int rc = sl_control_worker_step(p->cw, 0, &ev, err, errlen);
      if (rc < 0)
        return rc;
      if (rc == 0)
        break;
      if (ev.kind == SL_CONTROL_HEAD_LOST) {
        snprintf(err, errlen, "node %d: the head fell silent for longer than its timeout", p->node);
        return SL_EIO;
      }
      if (ev.kind == SL_CONTROL_DISMISSED)
        return ev.code;
      if (ev.kind == SL_CONTROL_MESSAGE && (rc = on_message(p, ev.msg, fn, ctx, err, errlen)) != 0)
        return rc;
    }
    /* what the poll saw ready: a message that came since waits for the next turn */
    int rc = items[1].revents & ZMQ_POLLIN ? sl_xfer_server_serve(p->xs, 0, err, errlen) : 0;
    if (rc < 0 && rc != SL_EINTR)
      return rc;
    if ((items[2].revents & ZMQ_POLLIN) && (rc = send_queued(p, err, errlen)) < 0)
      return rc;
    recheck_parked(p);
  }
}

/* The address this machine reaches @p host by: the source address of a
 * route to it, which its peers reach it by too on a flat network. False
 * when @p host does not resolve or has no route. */
static bool local_address_to(const char *host, char *out, size_t n)
{
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
  if (getaddrinfo(host, "9", &hints, &ai) != 0 || !ai)
    return false;
  bool ok = false;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in me;
  socklen_t len = sizeof me;
  /* connecting a datagram socket sends nothing: it only picks the route */
  if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
      getsockname(fd, (struct sockaddr *)&me, &len) == 0)
    ok = inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)n) != NULL;
  if (fd >= 0)
    close(fd);
  freeaddrinfo(ai);
  return ok;
}

/* Where peers reach this worker: --listen, else the address it reaches
 * its head by (127.0.0.1 for a head on loopback), else this host's name. */
static void listen_endpoint(const sl_remote_opts *o, char *out, size_t n)
{
  if (o->listen) {
    snprintf(out, n, "tcp://%s:*", o->listen);
    return;
  }
  char host[256] = "", addr[INET_ADDRSTRLEN];
  const char *h = strstr(o->head, "://");
  if (h) { /* tcp://HOST:PORT */
    snprintf(host, sizeof host, "%s", h + 3);
    char *colon = strrchr(host, ':');
    if (colon)
      *colon = '\0';
  }
  if (host[0] && local_address_to(host, addr, sizeof addr)) {
    snprintf(out, n, "tcp://%s:*", addr);
    return;
  }
  gethostname(host, sizeof host - 1);
  snprintf(out, n, "tcp://%s:*", host);
}

int sl_remote_worker_run(const sl_remote_opts *o, sl_remote_build_fn fn, void *ctx, char *err, size_t errlen)
{
  proc *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  engine *e = &p->e;
  e->remote = &hooks;
  e->remote_ctx = p;
  pthread_mutex_init(&e->lock, NULL);
  pthread_cond_init(&e->main_cv, NULL);
  pthread_cond_init(&e->spill_cv, NULL);
  sl_rejected_tally_init(&e->rejected);
  p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  p->zctx = zmq_ctx_new();
  int rc = SL_EIO;
  char endpoint[300];
  listen_endpoint(o, endpoint, sizeof endpoint);
  if (p->wake_fd < 0 || !p->zctx) {
    snprintf(err, errlen, "cannot start: %s", strerror(errno));
    goto out;
  }
  if (!(p->xs = sl_xfer_server_new(p->zctx, endpoint, err, errlen)))
    goto out;
  sl_xfer_server_set_lookup(p->xs, serve_from_store, p);
  sl_msg_hello hello = {0};
  snprintf(hello.name, sizeof hello.name, "%s", o->name ? o->name : SL_MEMBERS_ANY);
  snprintf(hello.endpoint, sizeof hello.endpoint, "%s", sl_xfer_server_endpoint(p->xs));
  if (!(p->cw = sl_control_worker_new(p->zctx, o->head, &hello, err, errlen)))
    goto out;
  if ((rc = sl_control_worker_join(p->cw, (int)(o->join_timeout_s * 1000), err, errlen)) != 0)
    goto out;
  p->node = sl_control_worker_node(p->cw);
  p->fetch_timeout_ms = (int)sl_control_worker_timing(p->cw)->timeout_ms;
  sl_xfer_server_set_park(p->xs, p->fetch_timeout_ms / 2);
  rc = work(p, fn, ctx, err, errlen);
  if (rc == 0 && p->e.fail_code) /* dismissed after this node failed */
    snprintf(err, errlen, "%s", p->e.fail_msg);
out:
  if (p->built)
    stop_slots(p);
  sl_control_worker_free(p->cw);
  sl_xfer_server_free(p->xs);
  if (p->zctx)
    zmq_ctx_term(p->zctx); /* the frames still out release their partitions */
  if (p->wake_fd >= 0)
    close(p->wake_fd);
  sl_store_free(e->store);
  sl_net_free(e->net);
  sl_rejected_tally_free(&e->rejected);
  pthread_cond_destroy(&e->main_cv);
  pthread_cond_destroy(&e->spill_cv);
  pthread_mutex_destroy(&e->lock);
  for (size_t i = 0; i < p->nout; i++)
    free_sink_output(p->outq[i].own);
  free(p->outq);
  free(p->peer);
  for (int s = 0; p->state && s < p->nslots; s++) {
    free(p->state[s].client);
    free(p->state[s].client_endpoint);
  }
  free(p->state);
  free(p->slots);
  free(p->args);
  free(p->argv);
  free(p);
  return rc;
}
