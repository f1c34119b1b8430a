/*
 * The head of a run across machines (head.h). One thread: it polls the
 * control socket, feeds the core what the workers say and what the clock
 * and the fault schedule bring, and sends every decision on. The sink, the
 * recorder and the run's files are the executor's (engine.c), on an engine
 * whose slots are the workers' and which holds no partition itself.
 */
#include "head.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "executor/engine_internal.h"
#include "executor/part_wire.h"
#include "models/error.h"
#include "transport/control.h"

void sl_head_opts_default(sl_head_opts *o)
{
  *o = (sl_head_opts){.launch = "local", .listen = "tcp://127.0.0.1:*", .node_timeout_s = 2,
                      .join_timeout_s = 30};
}

/* An order in flight: the LAUNCH as sent (no tables), for its record. */
typedef struct {
  bool live;
  sl_decision d;
  double launched;
} order;

typedef struct {
  engine e;
  const sl_head_opts *ho;
  void *zctx;
  sl_control_head *ch;
  int nnodes;
  pid_t *pid;              /* the worker process of each node started here, 0: none */
  sl_rows sink_rows;       /* the output for the sink that came with the last EMIT */
  sl_part_id sink_part;    /* its partition, once the core took it */
  order *orders;           /* by task id */
  size_t norders;
  bool started;
  int next_fault;
  double killed_at;        /* when a lose fault's SIGKILL went, for the detection time */
  pid_t helper_pid;        /* srun, or a kill over ssh, still running */
  double none_since;       /* since when no worker is live (-1: some is) */
  double *received, *received_then; /* bytes each node's attempts fetched, for the progress line */
  double progress_at;
  bool unreadable_said;    /* the head said it dropped an unreadable message */
  double *serve_at;        /* per node: an acquired pool node serves from then, once its worker is in */
  int provisioning;        /* pool nodes with a serve_at still ahead */
  char exe[1024];
} head;

static double now_of(head *h)
{
  return sl__exec_now(&h->e);
}

/* ------------------------------------------------------------ workers */

/* Whether this launch starts the worker processes itself, so that the
 * head can signal them (local) or reach their hosts (ssh). */
static bool controls_workers(const char *launch)
{
  return strcmp(launch, "local") == 0 || strcmp(launch, "ssh") == 0;
}

static void node_name(const head *h, int node, char *out, size_t n)
{
  sl_cluster_node_name(h->e.cluster, node, out, n);
}

/* Quotes @p s for sh into @p out: 'it''s'. */
static void sh_quote(const char *s, char *out, size_t n)
{
  size_t k = 0;
  if (k + 1 < n)
    out[k++] = '\'';
  for (; *s && k + 5 < n; s++) {
    if (*s == '\'') {
      memcpy(out + k, "'\\''", 4);
      k += 4;
    } else {
      out[k++] = *s;
    }
  }
  if (k + 1 < n)
    out[k++] = '\'';
  out[k] = '\0';
}

/* The command line that starts node @p node's worker, for a shell. */
static void worker_command(const head *h, int node, char *out, size_t n)
{
  char name[SL_MSG_NAME_MAX + 1], qexe[2100], qep[600], qname[200];
  node_name(h, node, name, sizeof name);
  sh_quote(h->exe, qexe, sizeof qexe);
  sh_quote(sl_control_head_endpoint(h->ch), qep, sizeof qep);
  sh_quote(name, qname, sizeof qname);
  snprintf(out, n, "exec %s worker --head %s --name %s", qexe, qep, qname);
}

/* Runs @p cmd on node @p node's host through ssh (or $SLUICE_SSH, called
 * as `SLUICE_SSH HOST COMMAND`); the child's pid, or -1. */
static pid_t over_ssh(const head *h, int node, const char *cmd)
{
  char host[SL_NAME_MAX];
  sl_cluster_node_host(h->e.cluster, node, host, sizeof host);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "exec ${SLUICE_SSH:-ssh} \"$0\" \"$1\"", host, cmd, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* Starts node @p node's worker: here, or on its host over ssh. */
static int spawn(head *h, int node, char *err, size_t errlen)
{
  char name[SL_MSG_NAME_MAX + 1], cmd[3000];
  node_name(h, node, name, sizeof name);
  worker_command(h, node, cmd, sizeof cmd);
  fflush(NULL);
  pid_t pid;
  if (strcmp(h->ho->launch, "ssh") == 0) {
    pid = over_ssh(h, node, cmd);
  } else if ((pid = fork()) == 0) {
    /* dies with the head: a head killed outright leaves no worker behind */
    setenv("SLUICE_WORKER_PARENT_DEATH", "1", 1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  if (pid < 0) {
    snprintf(err, errlen, "cannot start the worker of node %s: %s", name, strerror(errno));
    return SL_EIO;
  }
  h->pid[node] = pid;
  return 0;
}

static void send_lose(head *h, int node);

/* Kills node @p node's worker outright: here, or on its host; a worker
 * the head cannot reach by a signal (srun's, or one started by hand) is
 * told to kill itself. */
static void kill_worker(head *h, int node)
{
  if (!controls_workers(h->ho->launch)) {
    send_lose(h, node);
    return;
  }
  if (h->pid[node] > 0)
    kill(h->pid[node], SIGKILL);
  if (strcmp(h->ho->launch, "ssh") == 0) { /* the ssh client's end is not the worker's */
    char name[SL_MSG_NAME_MAX + 1], pattern[700], q[1400], cmd[1500];
    node_name(h, node, name, sizeof name);
    /* the worker's arguments, as its command line shows them */
    snprintf(pattern, sizeof pattern, "worker --head %s --name %s", sl_control_head_endpoint(h->ch), name);
    sh_quote(pattern, q, sizeof q);
    snprintf(cmd, sizeof cmd, "pkill -KILL -f -- %s", q);
    pid_t pid = over_ssh(h, node, cmd);
    if (pid > 0)
      h->helper_pid = pid;
  }
}

/* Whether node @p node is of an elastic group: its worker starts only when
 * the core acquires it. */
static bool pooled(const head *h, int node)
{
  return sl_core_node_elastic(h->e.core, node);
}

/* The nodes in service from the start: all but the elastic ones. */
static int fixed_nodes(const head *h)
{
  int n = 0;
  for (int i = 0; i < h->nnodes; i++)
    n += !pooled(h, i);
  return n;
}

/* Runs @p cmd in a shell, in a child; its pid, or -1 with errno. */
static pid_t shell(const char *cmd)
{
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* Starts the workers of every node with srun, inside a Slurm allocation:
 * one task per allocated node, each taking any node of the cluster. */
static int spawn_srun(head *h, char *err, size_t errlen)
{
  if (!getenv("SLURM_JOB_ID")) {
    snprintf(err, errlen, "--launch slurm starts the workers inside an allocation: run it under salloc or sbatch");
    return SL_EINVAL;
  }
  char n[32], qexe[2100], qep[600], cmd[3000];
  snprintf(n, sizeof n, "%d", fixed_nodes(h));
  sh_quote(h->exe, qexe, sizeof qexe);
  sh_quote(sl_control_head_endpoint(h->ch), qep, sizeof qep);
  /* Slurm keeps the step running when a task or a node dies: the head decides */
  snprintf(cmd, sizeof cmd, "exec srun --no-kill --kill-on-bad-exit=0 --nodes=%s --ntasks=%s --ntasks-per-node=1 "
                            "%s worker --head %s",
           n, n, qexe, qep);
  pid_t pid = shell(cmd);
  if (pid < 0) {
    snprintf(err, errlen, "cannot start srun: %s", strerror(errno));
    return SL_EIO;
  }
  h->helper_pid = pid;
  return 0;
}

/* Node @p node's worker under Slurm, after the first step (a join, or an
 * elastic node acquired): a step of one task, on any node of the
 * allocation. --overlap: the first step holds every allocated CPU, and a
 * lost worker's share of it is not given back while that step runs. */
static int spawn_srun_one(head *h, int node, char *err, size_t errlen)
{
  char cmd[3000], base[2900];
  worker_command(h, node, base, sizeof base);
  snprintf(cmd, sizeof cmd, "exec srun --overlap --no-kill --kill-on-bad-exit=0 --nodes=1 --ntasks=1 %s",
           base + strlen("exec "));
  pid_t pid = shell(cmd);
  if (pid < 0) {
    char name[SL_MSG_NAME_MAX + 1];
    node_name(h, node, name, sizeof name);
    snprintf(err, errlen, "cannot start srun for the worker of node %s: %s", name, strerror(errno));
    return SL_EIO;
  }
  h->pid[node] = pid; /* srun's own: the head ends it at the run's end like a worker */
  return 0;
}

/* Starts node @p node's worker once the run is under way (a join, or an
 * elastic node acquired): as the launch starts workers. */
static int start_worker(head *h, int node, char *err, size_t errlen)
{
  return strcmp(h->ho->launch, "slurm") == 0 ? spawn_srun_one(h, node, err, errlen) : spawn(h, node, err, errlen);
}

/* Reaps the worker processes that have ended. */
static void reap(head *h)
{
  pid_t pid;
  while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
    for (int n = 0; n < h->nnodes; n++)
      if (h->pid[n] == pid)
        h->pid[n] = 0;
    if (pid == h->helper_pid)
      h->helper_pid = 0;
  }
}

/* Waits up to @p seconds for the workers started here to exit, then kills
 * the rest: no test, and no run, leaves a worker behind. */
static void wait_workers(head *h, double seconds)
{
  double until = sl_control_clock() + seconds;
  for (;;) {
    reap(h);
    bool any = h->helper_pid > 0;
    for (int n = 0; n < h->nnodes; n++)
      any = any || h->pid[n] > 0;
    if (!any)
      return;
    if (sl_control_clock() > until)
      break;
    struct timespec nap = {0, 5000000};
    nanosleep(&nap, NULL);
  }
  for (int n = 0; n < h->nnodes; n++)
    if (h->pid[n] > 0) {
      kill(h->pid[n], SIGKILL);
      waitpid(h->pid[n], NULL, 0);
      h->pid[n] = 0;
    }
  if (h->helper_pid > 0) {
    kill(h->helper_pid, SIGKILL);
    waitpid(h->helper_pid, NULL, 0);
    h->helper_pid = 0;
  }
}

/* ---------------------------------------------------------- messages */

static int send_to(head *h, int node, sl_msg *m)
{
  char err[300];
  int rc = sl_control_head_send(h->ch, node, m, err, sizeof err);
  if (rc == SL_ESTATE || rc == SL_EIO)
    return 0; /* a node lost, not yet known as lost: the core hears of it at its timeout */
  if (rc < 0)
    sl__exec_fail(&h->e, rc, "head: sending %s to node %d: %s", sl_msg_kind_name(m->kind), node, err);
  return rc;
}

static void send_task(head *h, sl_msg_kind kind, int node, sl_task_id task)
{
  sl_msg m;
  sl_msg_init(&m);
  m.kind = kind;
  m.u.task.task = task;
  send_to(h, node, &m);
}

static void send_lose(head *h, int node)
{
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_LOSE;
  m.u.lose.signal = SIGKILL;
  send_to(h, node, &m);
}

static void send_part(head *h, sl_msg_kind kind, int node, sl_part_id part, int op, double bytes)
{
  sl_msg m;
  sl_msg_init(&m);
  m.kind = kind;
  m.u.part = (sl_msg_part_order){.part = part, .op = op, .bytes = bytes};
  send_to(h, node, &m);
}

/* A newly joined worker gets the plan and where its peers serve, and its
 * peers where it does. */
static void welcome(head *h, int node)
{
  const sl_members *mem = sl_control_head_members(h->ch);
  size_t len = 0;
  for (int i = 0; i < h->ho->argc; i++)
    len += strlen(h->ho->argv[i]) + 1;
  char *args = malloc(len ? len : 1);
  if (!args) {
    sl__exec_fail(&h->e, SL_ENOMEM, "head: out of memory");
    return;
  }
  for (int i = 0, at = 0; i < h->ho->argc; i++) {
    size_t n = strlen(h->ho->argv[i]) + 1;
    memcpy(args + at, h->ho->argv[i], n);
    at += (int)n;
  }
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_PLAN;
  m.u.plan = (sl_msg_plan){.slots = (uint32_t)sl_core_node_slots(h->e.core, node), .argc = (uint32_t)h->ho->argc,
                           .args = args, .args_len = len};
  if (!getcwd(m.u.plan.cwd, sizeof m.u.plan.cwd))
    snprintf(m.u.plan.cwd, sizeof m.u.plan.cwd, "/");
  send_to(h, node, &m);
  free(args);
  for (int n = 0; n < h->nnodes; n++) {
    const sl_member *o = sl_members_get(mem, n);
    if (!o || o->state != SL_MEMBER_LIVE)
      continue;
    sl_msg p;
    sl_msg_init(&p);
    p.kind = SL_MSG_PEER;
    p.u.peer.node = n;
    p.u.peer.incarnation = o->incarnation;
    snprintf(p.u.peer.endpoint, sizeof p.u.peer.endpoint, "%s", o->hello.endpoint);
    send_to(h, node, &p); /* it learns of every live node, itself included */
    if (n != node) {
      const sl_member *me = sl_members_get(mem, node);
      p.u.peer.node = node;
      p.u.peer.incarnation = me->incarnation;
      snprintf(p.u.peer.endpoint, sizeof p.u.peer.endpoint, "%s", me->hello.endpoint);
      send_to(h, n, &p);
    }
  }
}

/* ----------------------------------------------------------- the sink */

/* The bytes of an output for the sink, which came with its EMIT: the core
 * delivers it as it takes it, and the head keeps it until then, so that no
 * delivered partition can be lost with its node. */
static int stash_sink_rows(head *h, const sl_msg_emit *q, char *err, size_t errlen)
{
  uint64_t total = 0, at = 0;
  for (int i = 0; i < q->npayload; i++)
    total += q->payload[i].len;
  sl_part_wire_reader r; /* from the frames straight into the rows: one copy */
  sl_part_wire_reader_init(&r, &h->sink_rows);
  int rc = 0;
  for (int i = 0; i < q->npayload && rc == 0; i++) {
    if (q->payload[i].len)
      rc = sl_part_wire_reader_put(&r, total, at, q->payload[i].data, q->payload[i].len, err, errlen);
    at += q->payload[i].len;
  }
  if (rc == SL_ENOMEM)
    snprintf(err, errlen, "out of memory");
  return rc ? rc : sl_part_wire_reader_end(&r, err, errlen);
}

static void deliver(head *h, const sl_decision *d)
{
  if (h->sink_part != d->part) {
    sl__exec_fail(&h->e, SL_ESTATE, "partition %u reached the sink without its bytes", d->part);
    return;
  }
  sl__exec_sink_rows(&h->e, &h->sink_rows);
  sl_rows_reset(&h->sink_rows);
  h->sink_part = SL_NONE; /* its worker kept no copy */
}

static void drain(head *h);

/* An elastic node the core acquired: its worker process starts now, as a
 * rented machine's would, and the node serves once both its provisioning
 * (@p delay_s, the spec's) has passed and its worker has joined
 * (serve_pool()). */
static void acquire(head *h, int node, double delay_s)
{
  engine *e = &h->e;
  double now = now_of(h);
  char err[300];
  h->provisioning += !(h->serve_at[node] < INFINITY);
  h->serve_at[node] = now + delay_s;
  sl__exec_mark_fault(e, now, "acquire", node, NULL);
  reap(h);
  if (start_worker(h, node, err, sizeof err) < 0)
    sl__exec_fail(e, SL_EIO, "%s", err);
}

/* An elastic node given back: the core left nothing there; its worker is
 * dismissed and exits, and its leaving is not a loss. */
static void release(head *h, int node)
{
  h->provisioning -= h->serve_at[node] < INFINITY;
  h->serve_at[node] = INFINITY;
  (void)sl_control_head_dismiss(h->ch, node, 0);
  sl__exec_mark_fault(&h->e, now_of(h), "release", node, NULL);
}

/* Acquired pool nodes whose provisioning is over and whose worker is in
 * join the run. */
static void serve_pool(head *h, double now)
{
  const sl_members *mem = sl_control_head_members(h->ch);
  for (int n = 0; h->provisioning > 0 && n < h->nnodes; n++)
    if (h->serve_at[n] <= now && sl_members_get(mem, n)->state == SL_MEMBER_LIVE) {
      h->serve_at[n] = INFINITY;
      h->provisioning--;
      sl_core_node_joined(h->e.core, now, n);
      sl__exec_mark_fault(&h->e, now, "join", n, NULL);
      drain(h);
    }
}

/* ---------------------------------------------------------- decisions */

static order *order_of(head *h, sl_task_id task)
{
  if (task >= h->norders) {
    size_t n = h->norders ? h->norders : 1024;
    while (n <= task)
      n *= 2;
    order *o = realloc(h->orders, n * sizeof *o);
    if (!o)
      return NULL;
    memset(o + h->norders, 0, (n - h->norders) * sizeof *o);
    h->orders = o;
    h->norders = n;
  }
  return &h->orders[task];
}

static void launch(head *h, const sl_decision *d)
{
  order *o = order_of(h, d->task);
  if (!o) {
    sl__exec_fail(&h->e, SL_ENOMEM, "head: out of memory");
    return;
  }
  o->live = true;
  o->d = *d;
  o->d.in = NULL;
  o->d.inputs = NULL;
  o->launched = now_of(h);
  const sl_member *m = sl_members_get(sl_control_head_members(h->ch), d->node);
  sl_msg msg;
  sl_msg_init(&msg);
  sl_msg_set_launch(&msg, d, m ? m->incarnation : 0);
  send_to(h, d->node, &msg);
}

static void drain(head *h)
{
  engine *e = &h->e;
  sl_decision d;
  while (sl_core_next(e->core, &d)) {
    switch (d.kind) {
    case SL_DEC_LAUNCH:
      launch(h, &d);
      break;
    case SL_DEC_RESUME:
      send_task(h, SL_MSG_RESUME, d.node, d.task);
      break;
    case SL_DEC_CANCEL:
      send_task(h, SL_MSG_CANCEL, d.node, d.task);
      break;
    case SL_DEC_DELIVER:
      deliver(h, &d);
      break;
    case SL_DEC_DROP:
      send_part(h, SL_MSG_DROP, d.node, d.part, d.op, d.bytes);
      break;
    case SL_DEC_ROLLBACK:
    case SL_DEC_CHECKPOINT:
    case SL_DEC_DONE:
    case SL_DEC_FAIL:
      sl__exec_job_decision(e, &d);
      break;
    case SL_DEC_ACQUIRE:
      acquire(h, d.node, d.delay_s);
      break;
    case SL_DEC_RELEASE:
      release(h, d.node);
      break;
    }
  }
}

/* ------------------------------------------------- what workers say */

static void on_finished(head *h, const sl_msg_finished *f);
static void on_failed(head *h, int node, const sl_msg_failed *f);

/* An output that goes unanswered (one for the sink) and that the core did
 * not take: its worker waits for nothing, so the head acts for it. */
static void unanswered_refused(head *h, int node, const sl_msg_emit *q, int rc)
{
  if (rc == SL_EAGAIN) { /* the core holds no output for the sink: a broken promise, not a wait */
    sl__exec_fail(&h->e, SL_ESTATE, "node %d, task %u: the core held an output for the sink", node, q->task);
    return;
  }
  if (q->flags & SL_MSG_EMIT_ENDS) { /* written off: the attempt is over, as a FAILED would say */
    sl_msg_failed f = {.task = q->task, .op = -1, .node = node, .code = SL_EINTR};
    on_failed(h, node, &f);
  } /* else the core's CANCEL is on its way to the attempt, whose FAILED follows */
}

static void on_emit(head *h, int node, const sl_msg_emit *q)
{
  sl_part_id pid = SL_NONE;
  sl_emit_fate fate = SL_EMIT_STORED;
  char err[300];
  if (q->npayload > 0 && stash_sink_rows(h, q, err, sizeof err) < 0) {
    sl__exec_fail(&h->e, SL_EPROTO, "node %d, task %u: its output for the sink: %s", node, q->task, err);
    return;
  }
  int rc = sl_core_emit(h->e.core, now_of(h), q->task, q->rows, q->bytes, &pid, &fate);
  h->sink_part = rc == 0 && q->npayload > 0 ? pid : SL_NONE;
  if (q->flags & SL_MSG_EMIT_UNANSWERED) {
    if (rc != 0)
      unanswered_refused(h, node, q, rc);
  } else {
    static const sl_msg_fate wire[] = {[SL_EMIT_STORED] = SL_MSG_FATE_STORED,
                                       [SL_EMIT_SPILLED] = SL_MSG_FATE_SPILLED,
                                       [SL_EMIT_DISCARDED] = SL_MSG_FATE_DISCARDED};
    sl_msg m;
    sl_msg_init(&m);
    m.kind = SL_MSG_EMIT;
    m.u.emit = (sl_msg_emit){.task = q->task, .index = q->index, .rows = q->rows, .bytes = q->bytes};
    m.u.emit.part = rc == 0 ? pid : SL_NONE;
    m.u.emit.fate = rc == 0 ? wire[fate] : rc == SL_EAGAIN ? SL_MSG_FATE_HOLD : SL_MSG_FATE_GONE;
    send_to(h, node, &m);
  }
  /* the attempt ended with it, unless it spills first (its FINISHED follows) */
  if (rc == 0 && (q->flags & SL_MSG_EMIT_ENDS) && sl_msg_emit_ended(fate))
    on_finished(h, &q->end);
}

static void record(head *h, const order *o, const sl_msg_finished *f, sl_task_status st)
{
  double end = now_of(h), run = f ? f->run_s : 0, start = fmax(o->launched, end - run);
  sl_task_record r = {.task = o->d.task, .origin = o->d.origin, .attempt = o->d.attempt, .op = o->d.op,
                      .node = o->d.node, .slot = o->d.slot, .start_s = start, .end_s = end, .rows_in = o->d.rows,
                      .bytes_in = o->d.bytes, .status = st, .speed = o->d.speed, .fresh = o->d.fresh,
                      .dispatch_s = fmax(0, start - o->launched), .handoff_s = -1, .spread = 1};
  if (f) {
    r.rows_out = f->rows_out;
    r.bytes_out = f->bytes_out;
    r.parts_out = (int)f->parts_out;
    r.waited_s = f->waited_s;
    r.transfer_s = f->transfer_s;
    r.transfer_bytes = f->transfer_bytes;
    r.spill_write_s = f->spill_write_s;
    r.spill_write_bytes = f->spill_write_bytes;
    r.spill_read_s = f->spill_read_s;
    r.spill_read_bytes = f->spill_read_bytes;
    r.spread = f->spread;
  }
  if (sl_recorder_task(h->e.rec, &r) < 0)
    sl__exec_fail(&h->e, SL_ENOMEM, "out of memory recording task %u", o->d.task);
}

static void on_finished(head *h, const sl_msg_finished *f)
{
  order *o = f->task < h->norders ? &h->orders[f->task] : NULL;
  if (!o || !o->live)
    return;
  o->live = false;
  double now = now_of(h);
  if (f->transfer_s > 0 && sl_core_task_live(h->e.core, f->task))
    sl_core_note_transfer(h->e.core, f->task, f->transfer_s);
  sl_core_finished(h->e.core, now, f->task);
  record(h, o, f, SL_TASK_DONE);
  if (f->flags & SL_MSG_FINISHED_REAL) /* the run's bound is then refitted from its tasks (sluice run) */
    atomic_store(&h->e.real_kernels, true);
  h->received[o->d.node] += f->transfer_bytes;
}

static void on_failed(head *h, int node, const sl_msg_failed *f)
{
  engine *e = &h->e;
  if (f->code != SL_EINTR && f->code != SL_ENOENT) { /* the node itself failed: so does the run */
    char name[SL_MSG_NAME_MAX + 1];
    node_name(h, node, name, sizeof name);
    sl__exec_fail(e, f->code, "node %s: %s", name, f->why);
  }
  order *o = f->task < h->norders ? &h->orders[f->task] : NULL;
  if (!o || !o->live)
    return;
  o->live = false;
  bool written_off = !sl_core_task_live(e->core, f->task);
  sl_core_failed(e->core, now_of(h), f->task); /* changes nothing for one the core wrote off */
  record(h, o, NULL, written_off ? SL_TASK_CANCELLED : SL_TASK_FAILED);
}

/* The node's attempts in flight are the core's to write off. */
static void forget_orders(head *h, int node)
{
  for (size_t t = 0; t < h->norders; t++)
    if (h->orders[t].live && h->orders[t].d.node == node) {
      h->orders[t].live = false;
      record(h, &h->orders[t], NULL, SL_TASK_FAILED);
    }
}

static void on_event(head *h, const sl_control_event *ev)
{
  engine *e = &h->e;
  char name[SL_MSG_NAME_MAX + 1] = "";
  if (ev->node >= 0 && ev->node < h->nnodes)
    node_name(h, ev->node, name, sizeof name);
  switch (ev->kind) {
  case SL_CONTROL_JOINED:
    welcome(h, ev->node);
    if (pooled(h, ev->node)) /* it serves once provisioned too */
      serve_pool(h, now_of(h));
    else if (h->started) { /* a worker back after its node's loss: in service again */
      sl_core_node_joined(e->core, now_of(h), ev->node);
      sl__exec_mark_fault(e, now_of(h), "joined", ev->node, NULL);
    }
    break;
  case SL_CONTROL_LOST:
  case SL_CONTROL_LEFT:
    if (!h->started) {
      sl__exec_fail(e, SL_EIO, "the worker of node %s %s before the run started", name,
                    ev->kind == SL_CONTROL_LOST ? "fell silent" : "left");
      break;
    }
    if (e->done || e->stop)
      break;
    if (pooled(h, ev->node) && !sl_core_node_alive(e->core, ev->node))
      break; /* given back, or not in service yet: the core has nothing there */
    forget_orders(h, ev->node);
    sl_core_node_lost(e->core, now_of(h), ev->node);
    sl__exec_mark_fault(e, now_of(h), "lost", ev->node, NULL);
    if (h->killed_at >= 0 && e->opts->progress)
      fprintf(stderr, "\nsluice run: node %s lost %.0f ms after its process was killed\n", name,
              1000 * (now_of(h) - h->killed_at));
    break;
  case SL_CONTROL_REFUSED:
    fprintf(stderr, "sluice run: a worker said HELLO, but every node has one (refused)\n");
    break;
  case SL_CONTROL_MESSAGE:
    switch (ev->msg->kind) {
    case SL_MSG_EMIT:
      on_emit(h, ev->node, &ev->msg->u.emit);
      break;
    case SL_MSG_FINISHED:
      on_finished(h, &ev->msg->u.finished);
      break;
    case SL_MSG_FAILED:
      on_failed(h, ev->node, &ev->msg->u.failed);
      break;
    default:
      break; /* nothing else comes from a worker */
    }
    break;
  default:
    break; /* stale messages: dropped */
  }
}

/* Says, once, that messages came that this build cannot read: a worker
 * of another build says HELLO and is never answered, and without this its
 * head would only time out waiting for it. */
static void say_unreadable(head *h)
{
  const char *why;
  if (h->unreadable_said || sl_control_head_unreadable(h->ch, &why) == 0)
    return;
  h->unreadable_said = true;
  fprintf(stderr, "sluice run: dropped a message this head cannot read (%s); "
                  "is a worker of another sluice build connecting?\n", why);
}

/* Takes in what came, waiting up to @p wait_ms for the first; returns
 * after a batch, so that a busy run's faults, ticks and samples are not
 * held up by a stream of messages (a loss struck 72 ms late). */
static int pump(head *h, int wait_ms, char *err, size_t errlen)
{
  for (int batch = 0; batch < 64; batch++) {
    sl_control_event ev;
    int rc = sl_control_head_step(h->ch, wait_ms, &ev, err, errlen);
    say_unreadable(h);
    if (rc <= 0)
      return rc == SL_EINTR ? 0 : rc;
    wait_ms = 0;
    on_event(h, &ev);
    if (h->started)
      drain(h);
  }
  return 0;
}

/* ------------------------------------------------------------- faults */

static void inject(head *h, int i, double now)
{
  engine *e = &h->e;
  const sl_fault *f = &e->opts->faults.ev[i];
  sl_fault_log_check(&e->fault_log, &e->opts->faults, i, e->core);
  switch (f->kind) {
  case SL_FAULT_KILL: {
    sl_task_id victim;
    if (sl_core_kill(e->core, now, f->op, &victim) < 0 || victim == SL_NONE) {
      sl_fault_log_defer(&e->fault_log, i); /* the next attempt to start is doomed */
      sl__exec_mark_fault(e, now, "kill", -1, f->op >= 0 ? e->plan->ops[f->op].name : NULL);
      break;
    }
    order *o = victim < h->norders ? &h->orders[victim] : NULL;
    if (o && o->live)
      send_task(h, SL_MSG_CANCEL, o->d.node, victim);
    sl_core_failed(e->core, now, victim);
    sl__exec_mark_fault(e, now, "kill", -1, e->plan->ops[o ? o->d.op : 0].name);
    break;
  }
  case SL_FAULT_LOSE: /* the process dies; the core hears of it at the node timeout */
    kill_worker(h, f->node);
    h->killed_at = now;
    sl__exec_mark_fault(e, now, "lose", f->node, NULL);
    break;
  case SL_FAULT_JOIN: { /* a new process: the core takes the node back when it says HELLO */
    char err[300];
    reap(h);
    if (h->pid[f->node] > 0) {
      kill(h->pid[f->node], SIGKILL);
      waitpid(h->pid[f->node], NULL, 0);
      h->pid[f->node] = 0;
    }
    if (start_worker(h, f->node, err, sizeof err) < 0)
      sl__exec_fail(e, SL_EIO, "%s", err);
    sl__exec_mark_fault(e, now, "join", f->node, NULL);
    break;
  }
  }
  drain(h);
}

/* ---------------------------------------------------------------- run */

static int await_workers(head *h, char *err, size_t errlen)
{
  double until = sl_control_clock() + h->ho->join_timeout_s;
  const sl_members *mem = sl_control_head_members(h->ch);
  while (sl_members_live(mem) < fixed_nodes(h) && !h->e.stop) {
    double left = until - sl_control_clock();
    if (left <= 0) {
      snprintf(err, errlen, "%d of %d workers joined within %.0f s (head at %s)", sl_members_live(mem),
               fixed_nodes(h), h->ho->join_timeout_s, sl_control_head_endpoint(h->ch));
      return SL_EIO;
    }
    if (h->e.opts->interrupted && *h->e.opts->interrupted) {
      snprintf(err, errlen, "interrupted by a signal");
      return SL_EINTR;
    }
    int rc = pump(h, (int)fmin(100, left * 1000), err, errlen);
    if (rc < 0)
      return rc;
    reap(h);
    for (int n = 0; strcmp(h->ho->launch, "local") == 0 && n < h->nnodes; n++) { /* ssh may retry: wait */
      const sl_member *m = sl_members_get(mem, n);
      if (h->pid[n] == 0 && m->state != SL_MEMBER_LIVE && !pooled(h, n)) {
        snprintf(err, errlen, "the worker of node %d exited before it joined (its message is above)", n);
        return SL_EIO;
      }
    }
  }
  if (h->e.stop) {
    snprintf(err, errlen, "%s", h->e.fail_msg);
    return h->e.fail_code;
  }
  return 0;
}

/* With no worker left the run cannot go on: it fails at once when no join
 * is scheduled that would start one, else once the join timeout has passed
 * (a worker started by hand may still come). */
static void no_workers_left(head *h, double now)
{
  engine *e = &h->e;
  if (sl_members_live(sl_control_head_members(h->ch)) > 0) {
    h->none_since = -1;
    return;
  }
  if (h->none_since < 0)
    h->none_since = now;
  bool join_coming = false;
  for (int i = h->next_fault; i < e->opts->faults.n; i++)
    join_coming = join_coming || e->opts->faults.ev[i].kind == SL_FAULT_JOIN;
  bool may_come = strcmp(h->ho->launch, "none") == 0 || strcmp(h->ho->launch, "slurm") == 0;
  if ((!join_coming && !may_come) || now - h->none_since > h->ho->join_timeout_s)
    sl__exec_fail(e, SL_EIO, "every node's worker is lost (their messages are above), and none joined again%s",
                  may_come ? " within the join timeout" : "");
}

/* The executor's progress line, with the workers live and what each node
 * has received from the others since the last line (MB/s per node). */
static void progress(head *h, double now)
{
  char extra[256];
  int n = snprintf(extra, sizeof extra, " workers %d/%d in MB/s:", sl_members_live(sl_control_head_members(h->ch)),
                   h->nnodes);
  double dt = now - h->progress_at;
  for (int i = 0; i < h->nnodes && n > 0 && (size_t)n < sizeof extra; i++) {
    n += snprintf(extra + n, sizeof extra - (size_t)n, " %.0f", dt > 0 ? (h->received[i] - h->received_then[i]) / dt / 1e6 : 0);
    h->received_then[i] = h->received[i];
  }
  h->progress_at = now;
  sl__exec_progress_line(&h->e, now, extra);
}

static void supervise(head *h)
{
  engine *e = &h->e;
  const sl_exec_opts *o = e->opts;
  double next_sample = 0, next_progress = 0.5;
  char err[600];
  int rc = sl_core_start(e->core, 0);
  if (rc < 0)
    sl__exec_fail(e, rc, "the core could not start the job: %s", sl_strerror(rc));
  drain(h);
  while (!e->done && !e->stop) {
    double now = now_of(h);
    double wake = fmin(sl_core_wakeup(e->core), next_sample);
    if (h->next_fault < o->faults.n)
      wake = fmin(wake, o->faults.ev[h->next_fault].at_s);
    for (int n = 0; h->provisioning > 0 && n < h->nnodes; n++)
      wake = fmin(wake, h->serve_at[n]);
    double beat = sl_control_head_wakeup(h->ch) - sl_control_clock();
    double wait = fmin(fmin(wake - now, beat), 0.05);
    if ((rc = pump(h, (int)fmax(0, ceil(wait * 1000)), err, sizeof err)) < 0) {
      sl__exec_fail(e, rc, "head: %s", err);
      break;
    }
    now = now_of(h);
    if (o->interrupted && *o->interrupted) {
      sl__exec_fail(e, SL_EINTR, "interrupted by a signal");
      break;
    }
    if (e->done)
      break;
    while (h->next_fault < o->faults.n && o->faults.ev[h->next_fault].at_s <= now)
      inject(h, h->next_fault++, now);
    serve_pool(h, now);
    if (sl_core_wakeup(e->core) <= now) {
      sl_core_tick(e->core, now);
      drain(h);
    }
    if (now >= next_sample) {
      if (sl_recorder_sample(e->rec, now, e->core) < 0)
        sl__exec_fail(e, SL_ENOMEM, "out of memory recording the timeline");
      next_sample = now + o->sample_period_s;
    }
    if (o->progress && now >= next_progress) {
      progress(h, now);
      next_progress = now + 0.5;
    }
    reap(h);
    no_workers_left(h, now);
  }
  if (sl_recorder_sample(e->rec, now_of(h), e->core) < 0)
    sl__exec_fail(e, SL_ENOMEM, "out of memory recording the timeline");
}

static int start(head *h, const sl_cluster *cluster, char *err, size_t errlen)
{
  h->nnodes = cluster->nnodes;
  h->pid = calloc((size_t)h->nnodes, sizeof *h->pid);
  h->received = calloc((size_t)h->nnodes, sizeof *h->received);
  h->received_then = calloc((size_t)h->nnodes, sizeof *h->received_then);
  h->serve_at = calloc((size_t)h->nnodes, sizeof *h->serve_at);
  const char **names = calloc((size_t)h->nnodes, sizeof *names);
  char (*name)[SL_MSG_NAME_MAX + 1] = calloc((size_t)h->nnodes, sizeof *name);
  int rc = 0;
  if (!h->pid || !h->received || !h->received_then || !h->serve_at || !names || !name) {
    snprintf(err, errlen, "out of memory");
    rc = SL_ENOMEM;
    goto out;
  }
  for (int n = 0; n < h->nnodes; n++) {
    node_name(h, n, name[n], sizeof name[n]);
    names[n] = name[n];
    h->serve_at[n] = INFINITY;
  }
  sl_members_timing t = {.timeout_ms = (uint32_t)fmax(2, h->ho->node_timeout_s * 1000)};
  t.heartbeat_ms = (uint32_t)fmax(1, fmin(250, t.timeout_ms / 5));
  if (!(h->zctx = zmq_ctx_new()) ||
      !(h->ch = sl_control_head_new(h->zctx, h->ho->listen, h->nnodes, names, &t, err, errlen))) {
    rc = SL_EIO;
    goto out;
  }
  if (strcmp(h->ho->launch, "none") == 0)
    fprintf(stderr, "sluice run: head at %s; start one worker per node with\n"
                    "  sluice worker --head %s [--name NODE]\n",
            sl_control_head_endpoint(h->ch), sl_control_head_endpoint(h->ch));
  for (int n = 0; n < h->nnodes; n++)
    if (pooled(h, n)) /* its worker comes when the core acquires it, and names it */
      sl_control_head_named_only(h->ch, n);
  if (strcmp(h->ho->launch, "slurm") == 0)
    rc = spawn_srun(h, err, errlen);
  for (int n = 0; controls_workers(h->ho->launch) && n < h->nnodes && rc == 0; n++)
    if (!pooled(h, n))
      rc = spawn(h, n, err, errlen);
out:
  free(names);
  free(name);
  return rc;
}

/* Dismisses the workers and lets their BYEs go, then waits for the
 * processes started here. */
static void finish(head *h)
{
  if (h->ch) {
    sl_control_head_dismiss(h->ch, -1, 0);
    char err[300];
    double until = sl_control_clock() + 0.05;
    while (sl_control_clock() < until)
      if (sl_control_head_step(h->ch, 10, &(sl_control_event){0}, err, sizeof err) < 0)
        break;
  }
  sl_control_head_free(h->ch);
  h->ch = NULL;
  if (h->pid)
    wait_workers(h, fmax(2, h->ho->node_timeout_s));
  if (h->zctx)
    zmq_ctx_term(h->zctx);
  h->zctx = NULL;
}

static int check_launch(const head *h, char *err, size_t errlen)
{
  const sl_fault_schedule *f = &h->e.opts->faults;
  for (int i = 0; i < f->n; i++)
    if (f->ev[i].kind == SL_FAULT_JOIN && strcmp(h->ho->launch, "none") == 0) {
      snprintf(err, errlen, "--fail %s: with --launch none the head starts no process; start the new one "
                            "by hand (sluice worker --head ENDPOINT --name NODE): it joins whenever it comes",
               f->ev[i].text);
      return SL_EINVAL;
    }
  for (int g = 0; strcmp(h->ho->launch, "none") == 0 && g < h->e.cluster->ngroups; g++)
    if (h->e.cluster->groups[g].elastic) {
      snprintf(err, errlen, "node group '%s' is elastic: its workers start when the core acquires them, "
                            "which --launch none cannot do (use local, ssh or slurm)",
               h->e.cluster->groups[g].name);
      return SL_EINVAL;
    }
  char host[SL_NAME_MAX], name[SL_NAME_MAX * 2];
  for (int n = 0; strcmp(h->ho->launch, "ssh") == 0 && n < h->e.cluster->nnodes; n++)
    if (!sl_cluster_node_host(h->e.cluster, n, host, sizeof host)) {
      sl_cluster_node_name(h->e.cluster, n, name, sizeof name);
      snprintf(err, errlen, "--launch ssh: node %s has no host: give its group `hosts = ...`, one per node", name);
      return SL_EINVAL;
    }
  return 0;
}

int sl_head_run(const sl_plan *plan, const sl_cluster *cluster, const sl_exec_opts *opts, const sl_head_opts *ho,
                sl_summary *summary, char *err, size_t errlen)
{
  head *h = calloc(1, sizeof *h);
  if (!h) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  engine *e = &h->e;
  *e = (engine){.plan = plan, .cluster = cluster, .opts = opts};
  h->ho = ho;
  h->killed_at = -1;
  h->none_since = -1;
  h->sink_part = SL_NONE;
  sl_fault_log_init(&e->fault_log, &opts->faults);
  pthread_mutex_init(&e->lock, NULL);
  pthread_cond_init(&e->main_cv, NULL);
  pthread_cond_init(&e->spill_cv, NULL);
  sl_rejected_tally_init(&e->rejected);
  clock_gettime(CLOCK_MONOTONIC, &e->t0);
  /* workers start from this binary: the head and its workers are one build */
  ssize_t n = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
  h->exe[n > 0 ? n : 0] = '\0';
  int rc = check_launch(h, err, errlen);
  int why = 0;
  char cerr[512];
  sl_core_opts core = sl_exec_core_opts(opts);
  core.no_decision_hash = true;
  if (rc == 0 && !(e->core = sl_core_create(plan, cluster, &core, &why, cerr, sizeof cerr))) {
    snprintf(err, errlen, "%s", cerr);
    rc = why == SL_EOOM || why == SL_ENOMEM ? why : SL_EINVAL;
  }
  if (rc == 0 && (rc = sl__exec_outputs_open(e, summary, err, errlen)) == 0 &&
      (rc = start(h, cluster, err, errlen)) == 0 && (rc = await_workers(h, err, errlen)) == 0) {
    /* the job's clock starts once every worker is in: their start is not the job's */
    double startup = sl__exec_now(e);
    clock_gettime(CLOCK_MONOTONIC, &e->t0);
    h->started = true;
    supervise(h);
    double jct = sl__exec_now(e);
    finish(h);
    if ((rc = sl__exec_outputs_finish(e, summary, jct, startup, err, errlen)) == 0) {
      rc = e->fail_code;
      if (rc)
        snprintf(err, errlen, "%s", e->fail_msg[0] ? e->fail_msg : summary->note);
    }
  } else if (rc == 0) {
    rc = SL_EIO;
  }
  finish(h);
  sl__exec_outputs_close(e);
  sl_rejected_tally_free(&e->rejected);
  sl_core_free(e->core);
  pthread_cond_destroy(&e->main_cv);
  pthread_cond_destroy(&e->spill_cv);
  pthread_mutex_destroy(&e->lock);
  free(h->pid);
  free(h->serve_at);
  sl_rows_free(&h->sink_rows);
  free(h->received);
  free(h->received_then);
  free(h->orders);
  free(h);
  return rc;
}
