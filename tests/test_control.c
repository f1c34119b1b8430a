/* The control channel (transport/control.h) between real processes over
 * TCP on 127.0.0.1: the test is the head (or forks one) and forks worker
 * processes that join and step until their head is lost or dismisses
 * them. Three workers get the nodes of their names and stay alive on
 * heartbeats; a fourth name is refused; a stopped worker is declared lost
 * after the timeout of silence, and when it wakes its messages are stale
 * and it is sent away; a killed worker started again rejoins with a new
 * incarnation, and its old incarnation's messages are stale; workers whose
 * head closed, or stopped answering, exit after the timeout, and those
 * that reach a new head at the old one's endpoint are sent away. Timings
 * are checked with room for a loaded machine; the times measured are
 * printed. No test leaves a process behind: the teardown kills and reaps
 * every child, and each child dies with the test process
 * (PR_SET_PDEATHSIG). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "transport/control.h"
#include "transport/wire.h"

/* A heartbeat every 50 ms, lost after 250 ms of silence; a declaration
 * may come this much later than the timeout on a busy machine. */
static const sl_members_timing timing = {.heartbeat_ms = 50, .timeout_ms = 250};
#define TIMEOUT_S 0.25
#define HEARTBEAT_S 0.05
#define MARGIN_S 0.4

/* How a worker process ends. */
enum { EXIT_HEAD_LOST = 10, EXIT_DISMISSED = 11, EXIT_REFUSED = 12, EXIT_FAILED = 13 };

#define MAX_CHILDREN 16

static const char *const names3[] = {"w0", "w1", "w2"};

typedef struct {
  void *zctx;
  sl_control_head *h; /* the head, when the test is the head */
  pid_t pid[MAX_CHILDREN];
  bool reaped[MAX_CHILDREN];
  int n;
  int seen[SL_CONTROL_DISMISSED + 1]; /* the head's events, by kind */
  void *sock[4];                      /* sockets the test opened itself */
  int nsock;
} fixture;

static fixture fx;

static int setup(void **state)
{
  memset(&fx, 0, sizeof fx);
  fx.zctx = zmq_ctx_new();
  *state = &fx;
  return fx.zctx ? 0 : -1;
}

/* Kills and reaps every child still there, then closes the head. */
static int teardown(void **state)
{
  fixture *f = *state;
  for (int i = 0; i < f->n; i++)
    if (!f->reaped[i]) {
      kill(f->pid[i], SIGKILL);
      waitpid(f->pid[i], NULL, 0);
      f->reaped[i] = true;
    }
  for (int i = 0; i < f->nsock; i++)
    zmq_close(f->sock[i]);
  sl_control_head_free(f->h);
  zmq_ctx_term(f->zctx);
  return 0;
}

/* A DEALER of the test's own connected to @p endpoint, closed by the
 * teardown. */
static void *dealer(fixture *f, const char *endpoint)
{
  assert_true(f->nsock < 4);
  void *d = zmq_socket(f->zctx, ZMQ_DEALER);
  assert_non_null(d);
  int zero = 0;
  zmq_setsockopt(d, ZMQ_LINGER, &zero, sizeof zero);
  f->sock[f->nsock++] = d;
  assert_int_equal(zmq_connect(d, endpoint), 0);
  return d;
}

/* ---------------------------------------------------------- children */

/* Starts this very program in a child as `test_control ROLE ARGS...`: a
 * fresh process (the test's own has ZeroMQ's threads, and a fork of it
 * that went on running could find their locks held for ever). The child
 * dies with the test process (PR_SET_PDEATHSIG outlives the exec). */
static pid_t spawn(fixture *f, const char *role, const char *a, const char *b)
{
  assert_true(f->n < MAX_CHILDREN);
  pid_t parent = getpid(), pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == parent)
      execl("/proc/self/exe", "test_control", role, a, b, (char *)NULL);
    _exit(EXIT_FAILED);
  }
  f->pid[f->n] = pid;
  f->reaped[f->n++] = false;
  return pid;
}

/* A worker process: joins the head at @p endpoint as @p name, says
 * FINISHED once, then steps until its head is lost or dismisses it. */
static int worker_main(const char *endpoint, const char *name)
{
  char err[256] = "";
  int code = EXIT_FAILED;
  void *zctx = zmq_ctx_new();
  sl_msg_hello hello = {.cpu_slots = 2, .gpu_slots = 1, .store_budget = 1u << 20};
  snprintf(hello.name, sizeof hello.name, "%s", name);
  snprintf(hello.endpoint, sizeof hello.endpoint, "tcp://127.0.0.1:7000");
  sl_control_worker *w = sl_control_worker_new(zctx, endpoint, &hello, err, sizeof err);
  if (!w)
    goto out;
  int rc = sl_control_worker_join(w, 3000, err, sizeof err);
  if (rc) {
    code = rc == SL_ENOENT ? EXIT_REFUSED : EXIT_FAILED;
    goto out;
  }
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_FINISHED;
  m.u.task.task = 1000 + (uint32_t)sl_control_worker_node(w);
  if (sl_control_worker_send(w, &m, err, sizeof err) != 0)
    goto out;
  for (;;) {
    sl_control_event ev;
    rc = sl_control_worker_step(w, -1, &ev, err, sizeof err);
    if (rc == SL_EINTR)
      continue;
    if (rc < 0)
      goto out;
    if (ev.kind == SL_CONTROL_HEAD_LOST || ev.kind == SL_CONTROL_DISMISSED) {
      code = ev.kind == SL_CONTROL_HEAD_LOST ? EXIT_HEAD_LOST : EXIT_DISMISSED;
      break;
    }
  }
out:
  if (code == EXIT_FAILED)
    fprintf(stderr, "worker %s: %s\n", name, err);
  sl_control_worker_free(w);
  zmq_ctx_term(zctx);
  return code;
}

static pid_t start_worker(fixture *f, const char *endpoint, const char *name)
{
  return spawn(f, "worker", endpoint, name);
}

/* A head process for w0..w2: writes its endpoint to @p fd, then a byte
 * for each worker's first message (it comes after WELCOME, so the worker
 * then knows it joined), and steps until it is killed. */
static int head_main(int fd)
{
  char err[256] = "";
  void *zctx = zmq_ctx_new();
  sl_control_head *h = sl_control_head_new(zctx, "tcp://127.0.0.1:*", 3, names3, &timing, err, sizeof err);
  char endpoint[SL_MSG_ENDPOINT_MAX + 1] = "";
  if (h)
    snprintf(endpoint, sizeof endpoint, "%s", sl_control_head_endpoint(h));
  if (write(fd, endpoint, sizeof endpoint) != (ssize_t)sizeof endpoint || !h)
    return EXIT_FAILED;
  for (;;) {
    sl_control_event ev;
    int rc = sl_control_head_step(h, -1, &ev, err, sizeof err);
    if (rc < 0 && rc != SL_EINTR)
      return EXIT_FAILED;
    if (rc == 1 && ev.kind == SL_CONTROL_MESSAGE && write(fd, "m", 1) != 1)
      return EXIT_FAILED;
  }
}

/* ------------------------------------------------------------ helpers */

static int index_of(const fixture *f, pid_t pid)
{
  for (int i = 0; i < f->n; i++)
    if (f->pid[i] == pid)
      return i;
  fail_msg("pid %d is no child of the test", (int)pid);
  return -1;
}

/* One step of the head, if the test is the head, else a short sleep. */
static void tick(fixture *f, sl_control_event *ev)
{
  ev->kind = SL_CONTROL_NONE;
  if (!f->h) {
    nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
    return;
  }
  char err[256];
  int rc = sl_control_head_step(f->h, 5, ev, err, sizeof err);
  if (rc < 0 && rc != SL_EINTR)
    fail_msg("head step: %s", err);
  if (rc == 1)
    f->seen[ev->kind]++;
  if (rc == 1 && ev->kind == SL_CONTROL_LOST)
    print_message("  node %d lost (incarnation %llu)\n", ev->node, (unsigned long long)ev->incarnation);
}

/* Steps the head until an event of @p kind about @p node (-1: any) comes,
 * for @p within_s at most; other events pass. */
static sl_control_event await(fixture *f, sl_control_event_kind kind, int node, double within_s)
{
  double end = sl_control_clock() + within_s;
  while (sl_control_clock() < end) {
    sl_control_event ev;
    tick(f, &ev);
    if (ev.kind == kind && (node < 0 || ev.node == node))
      return ev;
  }
  fail_msg("no %s event for node %d in %.1f s", sl_control_event_name(kind), node, within_s);
  return (sl_control_event){0};
}

/* Waits up to @p within_s for child @p pid to end, the head stepping
 * meanwhile; its exit code (128 + signal when killed), the time in @p at. */
static int reap(fixture *f, pid_t pid, double within_s, double *at)
{
  int i = index_of(f, pid);
  double end = sl_control_clock() + within_s;
  while (sl_control_clock() < end) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      f->reaped[i] = true;
      if (at)
        *at = sl_control_clock();
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    assert_int_equal(r, 0);
    sl_control_event ev;
    tick(f, &ev);
  }
  fail_msg("process %d still there after %.1f s", (int)pid, within_s);
  return -1;
}

/* No child of the test is left, reaped or not. */
static void assert_no_child_left(void)
{
  errno = 0;
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

static void head_new(fixture *f, int nodes, const char *const *names)
{
  char err[256];
  f->h = sl_control_head_new(f->zctx, "tcp://127.0.0.1:*", nodes, names, &timing, err, sizeof err);
  if (!f->h)
    fail_msg("%s", err);
}

/* A head for w0..w2 and their three processes, joined, each known to
 * have its WELCOME (its first message came); pids in @p pid. */
static void start_three(fixture *f, pid_t pid[3])
{
  head_new(f, 3, names3);
  for (int i = 0; i < 3; i++)
    pid[i] = start_worker(f, sl_control_head_endpoint(f->h), names3[i]);
  for (int welcomed = 0; welcomed < 3; welcomed++)
    await(f, SL_CONTROL_MESSAGE, -1, 5);
  assert_int_equal(sl_members_live(sl_control_head_members(f->h)), 3);
}

/* Dismisses every live node and reaps every child not reaped yet. */
static void dismiss_and_reap(fixture *f)
{
  assert_int_equal(sl_control_head_dismiss(f->h, -1, 0), 0);
  for (int i = 0; i < f->n; i++)
    if (!f->reaped[i])
      assert_int_equal(reap(f, f->pid[i], 3, NULL), EXIT_DISMISSED);
  assert_no_child_left();
}

/* -------------------------------------------------------------- tests */

static void test_workers_join_the_nodes_of_their_names(void **state)
{
  fixture *f = *state;
  head_new(f, 3, names3);
  const char *endpoint = sl_control_head_endpoint(f->h);
  /* started in another order than their nodes' */
  start_worker(f, endpoint, "w2");
  start_worker(f, endpoint, "w0");
  start_worker(f, endpoint, "w1");
  uint64_t incarnation[3] = {0};
  int messages = 0;
  double end = sl_control_clock() + 5;
  while ((messages < 3 || sl_members_live(sl_control_head_members(f->h)) < 3) && sl_control_clock() < end) {
    sl_control_event ev;
    tick(f, &ev);
    if (ev.kind == SL_CONTROL_JOINED) {
      assert_true(ev.node >= 0 && ev.node < 3);
      assert_true(incarnation[ev.node] == 0);
      incarnation[ev.node] = ev.incarnation;
    } else if (ev.kind == SL_CONTROL_MESSAGE) {
      /* each worker's FINISHED, stamped with its node and incarnation */
      assert_int_equal(ev.msg->kind, SL_MSG_FINISHED);
      assert_int_equal(ev.msg->u.task.task, 1000 + ev.node);
      assert_true(ev.incarnation == incarnation[ev.node]);
      messages++;
    } else
      assert_int_equal(ev.kind, SL_CONTROL_NONE);
  }
  assert_int_equal(messages, 3);
  const sl_members *m = sl_control_head_members(f->h);
  for (int i = 0; i < 3; i++) {
    const sl_member *s = sl_members_get(m, i);
    assert_string_equal(s->hello.name, names3[i]);
    assert_int_equal(s->hello.cpu_slots, 2);
    assert_string_equal(s->hello.endpoint, "tcp://127.0.0.1:7000");
    assert_true(s->hello.store_budget == 1u << 20);
    assert_true(s->incarnation == incarnation[i]);
    for (int j = 0; j < i; j++)
      assert_true(incarnation[i] != incarnation[j]);
  }

  /* a fourth name: no node for it */
  pid_t extra = start_worker(f, endpoint, "w9");
  sl_control_event ev = await(f, SL_CONTROL_REFUSED, -1, 5);
  assert_string_equal(ev.msg->u.hello.name, "w9");
  assert_int_equal(ev.code, SL_ENOENT);
  assert_int_equal(reap(f, extra, 3, NULL), EXIT_REFUSED);

  /* four timeouts on heartbeats alone: every worker stays, both ways */
  end = sl_control_clock() + 4 * TIMEOUT_S;
  while (sl_control_clock() < end) {
    tick(f, &ev);
    assert_true(ev.kind == SL_CONTROL_NONE);
  }
  assert_int_equal(sl_members_live(m), 3);
  for (int i = 0; i < f->n; i++)
    assert_int_equal(waitpid(f->pid[i], NULL, WNOHANG), f->reaped[i] ? -1 : 0);
  dismiss_and_reap(f);
  assert_int_equal(sl_members_live(m), 0);
  assert_int_equal(sl_members_get(m, 1)->state, SL_MEMBER_LEFT);
}

static void test_a_stopped_worker_is_lost_after_the_timeout(void **state)
{
  fixture *f = *state;
  pid_t pid[3];
  start_three(f, pid);
  const sl_members *m = sl_control_head_members(f->h);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(kill(pid[i], SIGSTOP), 0);
    double stopped = sl_control_clock();
    sl_control_event ev = await(f, SL_CONTROL_LOST, i, TIMEOUT_S + MARGIN_S + 1);
    const sl_member *s = sl_members_get(m, i);
    double after_stop = ev.at - stopped, silent = ev.at - s->watch.heard;
    print_message("  node %d: stopped -> lost in %.0f ms, %.0f ms after it was last heard from\n", i,
                  after_stop * 1e3, silent * 1e3);
    assert_true(silent > TIMEOUT_S);                 /* never before the timeout */
    assert_true(after_stop <= TIMEOUT_S + MARGIN_S); /* nor long after */
    assert_int_equal(s->state, SL_MEMBER_LOST);
    assert_true(ev.incarnation == s->incarnation);

    /* woken, its heartbeats are stale and it is told BYE; or it finds its
     * head silent first. Either way it goes. */
    assert_int_equal(kill(pid[i], SIGCONT), 0);
    int code = reap(f, pid[i], 3, NULL);
    assert_true(code == EXIT_DISMISSED || code == EXIT_HEAD_LOST);
  }
  assert_int_equal(sl_members_live(m), 0);
  assert_no_child_left();
}

/* Sends a @p kind message stamped @p node, @p incarnation on DEALER @p d. */
static void send_as(void *d, sl_msg_kind kind, int node, uint64_t incarnation)
{
  sl_msg m;
  sl_msg_init(&m);
  m.kind = kind;
  m.node = node;
  m.incarnation = incarnation;
  sl_msg_frames frames = {0};
  char err[256];
  assert_int_equal(sl_wire_send(d, NULL, &m, &frames, NULL, NULL, 0, err, sizeof err), 0);
  sl_msg_frames_free(&frames);
}

static void test_a_killed_worker_rejoins_with_a_new_incarnation(void **state)
{
  fixture *f = *state;
  pid_t pid[3];
  start_three(f, pid);
  const sl_members *m = sl_control_head_members(f->h);
  uint64_t old = sl_members_get(m, 1)->incarnation;

  /* killed, lost after the timeout, started again: the same node, a new
   * incarnation, newer than any */
  assert_int_equal(kill(pid[1], SIGKILL), 0);
  double killed = sl_control_clock();
  assert_int_equal(reap(f, pid[1], 3, NULL), 128 + SIGKILL);
  sl_control_event ev = await(f, SL_CONTROL_LOST, 1, TIMEOUT_S + MARGIN_S + 1);
  print_message("  node 1: killed -> lost in %.0f ms\n", (ev.at - killed) * 1e3);
  assert_true(ev.at - killed <= TIMEOUT_S + MARGIN_S);
  assert_true(ev.incarnation == old);
  start_worker(f, sl_control_head_endpoint(f->h), "w1");
  ev = await(f, SL_CONTROL_JOINED, 1, 5);
  for (int i = 0; i < 3; i++)
    assert_true(ev.incarnation > sl_members_get(m, i)->incarnation || i == 1);
  assert_true(ev.incarnation == sl_members_get(m, 1)->incarnation && ev.incarnation > old);
  assert_int_equal(sl_members_get(m, 1)->joins, 2);

  /* a message of the old incarnation is stale, and its sender told BYE */
  void *d = dealer(f, sl_control_head_endpoint(f->h));
  send_as(d, SL_MSG_FINISHED, 1, old);
  ev = await(f, SL_CONTROL_STALE, 1, 5);
  assert_true(ev.incarnation == old);
  assert_int_equal(ev.msg->kind, SL_MSG_FINISHED);
  sl_wire_in *in = sl_wire_in_new();
  sl_msg bye;
  sl_msg_init(&bye);
  char err[256];
  int rc = SL_EAGAIN;
  for (double end = sl_control_clock() + 3; rc == SL_EAGAIN && sl_control_clock() < end; tick(f, &ev))
    rc = sl_wire_recv(d, in, NULL, &bye, SL_WIRE_DONTWAIT, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(bye.kind, SL_MSG_BYE);
  assert_true(bye.node == 1 && bye.incarnation == old && bye.u.bye.code == SL_ESTATE);
  sl_wire_in_free(in);
  assert_int_equal(sl_members_get(m, 1)->state, SL_MEMBER_LIVE);

  /* killed and started again at once, before the timeout: its old
   * incarnation is lost, then the new one joins */
  uint64_t second = sl_members_get(m, 2)->incarnation;
  assert_int_equal(kill(pid[2], SIGKILL), 0);
  assert_int_equal(reap(f, pid[2], 3, NULL), 128 + SIGKILL);
  start_worker(f, sl_control_head_endpoint(f->h), "w2");
  ev = await(f, SL_CONTROL_LOST, 2, 5);
  assert_true(ev.incarnation == second);
  ev = await(f, SL_CONTROL_JOINED, 2, 5);
  assert_true(ev.incarnation > second);
  dismiss_and_reap(f);
}

/* Reaps workers @p pid, which must each find their head lost (@p what
 * at @p since) after the timeout and within the margin; prints when. */
static void expect_head_lost(fixture *f, const pid_t pid[3], double since, const char *what)
{
  for (int i = 0; i < 3; i++) {
    double at;
    assert_int_equal(reap(f, pid[i], TIMEOUT_S + MARGIN_S + 1, &at), EXIT_HEAD_LOST);
    print_message("  worker %d: head %s -> exited in %.0f ms\n", i, what, (at - since) * 1e3);
    assert_true(at - since >= TIMEOUT_S - HEARTBEAT_S - 0.05); /* it heard the head up to then */
    assert_true(at - since <= TIMEOUT_S + MARGIN_S);
  }
}

static void test_workers_exit_when_the_head_closes(void **state)
{
  fixture *f = *state;
  pid_t pid[3];
  start_three(f, pid);
  sl_control_head_free(f->h);
  f->h = NULL;
  expect_head_lost(f, pid, sl_control_clock(), "closed");
  assert_no_child_left();
}

/* A head started again at the endpoint of one gone: the old workers
 * reconnect by themselves, and their incarnations mean nothing here. */
static void test_workers_of_an_earlier_head_are_stale(void **state)
{
  fixture *f = *state;
  pid_t pid[3];
  start_three(f, pid);
  char endpoint[SL_MSG_ENDPOINT_MAX + 1], err[256];
  snprintf(endpoint, sizeof endpoint, "%s", sl_control_head_endpoint(f->h));
  uint64_t newest = sl_members_get(sl_control_head_members(f->h), 2)->incarnation;
  sl_control_head_free(f->h);
  f->h = NULL;
  memset(f->seen, 0, sizeof f->seen);
  /* bound again as soon as the port is free */
  for (double end = sl_control_clock() + 2; !f->h && sl_control_clock() < end;)
    if (!(f->h = sl_control_head_new(f->zctx, endpoint, 3, names3, &timing, err, sizeof err)))
      nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
  if (!f->h)
    fail_msg("%s", err);
  const sl_members *m = sl_control_head_members(f->h);
  start_worker(f, endpoint, "w0");
  sl_control_event ev = await(f, SL_CONTROL_JOINED, 0, 5);
  assert_true(ev.incarnation > newest);

  /* every old worker is sent away (or finds its head silent first), none
   * is taken for a node of this head */
  for (int i = 0; i < 3; i++) {
    int code = reap(f, pid[i], 3, NULL);
    assert_true(code == EXIT_DISMISSED || code == EXIT_HEAD_LOST);
  }
  print_message("  %d stale messages from the old workers\n", f->seen[SL_CONTROL_STALE]);
  assert_true(f->seen[SL_CONTROL_STALE] > 0);
  assert_int_equal(f->seen[SL_CONTROL_JOINED], 1);
  assert_int_equal(f->seen[SL_CONTROL_LOST], 0);
  assert_int_equal(sl_members_live(m), 1);
  dismiss_and_reap(f);
}

static void test_workers_exit_when_the_head_stops_answering(void **state)
{
  fixture *f = *state;
  int fds[2];
  assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
  char fd[16];
  snprintf(fd, sizeof fd, "%d", fds[1]);
  assert_int_equal(fcntl(fds[1], F_SETFD, 0), 0); /* the head's end, kept over its exec */
  pid_t head = spawn(f, "head", fd, NULL);
  close(fds[1]);
  char endpoint[SL_MSG_ENDPOINT_MAX + 1];
  assert_int_equal(read(fds[0], endpoint, sizeof endpoint), (ssize_t)sizeof endpoint);
  assert_true(endpoint[0] != '\0');
  pid_t pid[3];
  for (int i = 0; i < 3; i++)
    pid[i] = start_worker(f, endpoint, names3[i]);
  for (int welcomed = 0; welcomed < 3; welcomed++) {
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1);
  }
  close(fds[0]);

  /* stopped: its connections stay open, nothing comes through them */
  assert_int_equal(kill(head, SIGSTOP), 0);
  expect_head_lost(f, pid, sl_control_clock(), "stopped");
  assert_int_equal(kill(head, SIGKILL), 0);
  assert_int_equal(reap(f, head, 3, NULL), 128 + SIGKILL);
  assert_no_child_left();
}

static void test_bad_arguments(void **state)
{
  fixture *f = *state;
  char err[256];
  assert_null(sl_control_head_new(f->zctx, "bogus://x", 1, NULL, &timing, err, sizeof err));
  assert_non_null(strstr(err, "cannot bind bogus://x"));
  sl_members_timing t = {.heartbeat_ms = 10, .timeout_ms = 5};
  assert_null(sl_control_head_new(f->zctx, "tcp://127.0.0.1:*", 1, NULL, &t, err, sizeof err));
  sl_msg_hello hello = {.cpu_slots = 1};
  assert_null(sl_control_worker_new(f->zctx, "tcp://127.0.0.1:1", &hello, err, sizeof err));
  assert_non_null(strstr(err, "the name is empty"));
  snprintf(hello.name, sizeof hello.name, "w");
  snprintf(hello.endpoint, sizeof hello.endpoint, "tcp://127.0.0.1:2");
  assert_null(sl_control_worker_new(f->zctx, "bogus://x", &hello, err, sizeof err));

  /* no head there: join gives up after its timeout; nothing before */
  head_new(f, 1, NULL);
  sl_control_worker *w = sl_control_worker_new(f->zctx, "tcp://127.0.0.1:1", &hello, err, sizeof err);
  assert_non_null(w);
  sl_control_event ev;
  assert_int_equal(sl_control_worker_step(w, 0, &ev, err, sizeof err), SL_ESTATE);
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_FINISHED;
  assert_int_equal(sl_control_worker_send(w, &m, err, sizeof err), SL_ESTATE);
  assert_int_equal(sl_control_worker_node(w), -1);
  double start = sl_control_clock();
  assert_int_equal(sl_control_worker_join(w, 100, err, sizeof err), SL_EIO);
  assert_true(sl_control_clock() - start >= 0.1);
  assert_non_null(strstr(err, "no answer from the head at tcp://127.0.0.1:1 in 100 ms"));
  assert_int_equal(sl_control_worker_join(w, 100, err, sizeof err), SL_ESTATE);
  assert_non_null(strstr(err, "a worker joins once"));
  sl_control_worker_free(w);

  /* a head sends only to live nodes, dismisses only live ones */
  assert_int_equal(sl_control_head_send(f->h, 0, &m, err, sizeof err), SL_ESTATE);
  assert_int_equal(sl_control_head_send(f->h, 5, &m, err, sizeof err), SL_ESTATE);
  assert_int_equal(sl_control_head_dismiss(f->h, 0, 0), SL_ESTATE);
  assert_int_equal(sl_control_head_dismiss(f->h, -1, 0), 0);
  assert_true(sl_control_head_wakeup(f->h) == INFINITY);
  assert_int_equal(sl_control_head_step(f->h, 0, &ev, err, sizeof err), 0);
}

/* A worker played by the test on a raw DEALER: says HELLO as @p name and
 * takes its WELCOME; its node and incarnation in @p node, @p incarnation. */
static void *raw_join(fixture *f, const char *endpoint, const char *name, int *node, uint64_t *incarnation)
{
  void *d = dealer(f, endpoint);
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_HELLO;
  m.node = -1;
  snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
  snprintf(m.u.hello.endpoint, sizeof m.u.hello.endpoint, "inproc://data-%s", name);
  sl_msg_frames frames = {0};
  char err[256];
  assert_int_equal(sl_wire_send(d, NULL, &m, &frames, NULL, NULL, 0, err, sizeof err), 0);
  sl_msg_frames_free(&frames);
  sl_control_event ev = await(f, SL_CONTROL_JOINED, -1, 5);
  sl_wire_in *in = sl_wire_in_new();
  assert_int_equal(sl_wire_recv(d, in, NULL, &m, 0, err, sizeof err), 0);
  sl_wire_in_free(in);
  assert_int_equal(m.kind, SL_MSG_WELCOME);
  assert_true(m.node == ev.node && m.incarnation == ev.incarnation);
  assert_true(m.u.welcome.heartbeat_ms == timing.heartbeat_ms && m.u.welcome.timeout_ms == timing.timeout_ms);
  *node = ev.node;
  *incarnation = ev.incarnation;
  return d;
}

/* One node has sent a backlog of messages that the head, busy with each,
 * takes a while to work through (its socket never runs empty meanwhile);
 * another has fallen silent: it is lost an interval into the backlog, not
 * after it, and the busy one, late as its messages are taken in, is not. */
static void test_a_backlog_does_not_hide_a_silent_node(void **state)
{
  fixture *f = *state;
  char err[256];
  f->h = sl_control_head_new(f->zctx, "inproc://backlog", 2, NULL, &timing, err, sizeof err);
  assert_non_null(f->h);
  int busy, quiet;
  uint64_t busy_inc, quiet_inc;
  void *b = raw_join(f, "inproc://backlog", "busy", &busy, &busy_inc);
  raw_join(f, "inproc://backlog", "quiet", &quiet, &quiet_inc);
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_FINISHED;
  m.node = busy;
  m.incarnation = busy_inc;
  sl_msg_frames frames = {0};
  const int backlog = 400;
  for (int i = 0; i < backlog; i++)
    assert_int_equal(sl_wire_send(b, NULL, &m, &frames, NULL, NULL, 0, err, sizeof err), 0);
  sl_msg_frames_free(&frames);
  /* both past their timeout by the time the head looks */
  double heard = sl_members_get(sl_control_head_members(f->h), quiet)->watch.heard;
  while (sl_control_clock() <= heard + TIMEOUT_S)
    nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
  int messages = 0;
  sl_control_event ev = {0};
  while (messages < backlog) {
    assert_int_equal(sl_control_head_step(f->h, 1000, &ev, err, sizeof err), 1);
    if (ev.kind != SL_CONTROL_MESSAGE)
      break;
    messages++;
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL); /* the engine's work on it */
  }
  print_message("  the silent node lost after %d of a backlog of %d messages\n", messages, backlog);
  assert_int_equal(ev.kind, SL_CONTROL_LOST);
  assert_int_equal(ev.node, quiet);
  assert_true(messages < backlog / 2); /* an interval's worth: about 50 at 1 ms each */
  assert_int_equal(sl_members_get(sl_control_head_members(f->h), busy)->state, SL_MEMBER_LIVE);
}

/* A worker in a thread of the test's, over inproc: it answers each
 * CANCEL with a FINISHED of the same task, and leaves with BYE 7 when told
 * to cancel task 99; it records how it ended. */
typedef struct {
  void *zctx;
  const char *name;
  sl_control_event_kind ended; /* LEFT when it left, else the event that ended it */
  int32_t code;
  int late_send; /* what a send returned once it was over */
} thread_worker;

static void *worker_thread(void *arg)
{
  thread_worker *t = arg;
  char err[256];
  sl_msg_hello hello = {.cpu_slots = 1};
  snprintf(hello.name, sizeof hello.name, "%s", t->name);
  snprintf(hello.endpoint, sizeof hello.endpoint, "inproc://data-%s", t->name);
  sl_control_worker *w = sl_control_worker_new(t->zctx, "inproc://control", &hello, err, sizeof err);
  sl_msg m;
  sl_msg_init(&m);
  t->ended = SL_CONTROL_NONE;
  if (!w || sl_control_worker_join(w, 3000, err, sizeof err) != 0)
    goto out;
  for (;;) {
    sl_control_event ev;
    int rc = sl_control_worker_step(w, 3000, &ev, err, sizeof err);
    if (rc <= 0 || ev.kind != SL_CONTROL_MESSAGE) {
      t->ended = rc == 1 ? ev.kind : SL_CONTROL_NONE;
      t->code = rc == 1 ? ev.code : rc;
      break;
    }
    if (ev.msg->kind != SL_MSG_CANCEL)
      continue;
    if (ev.msg->u.task.task == 99) {
      t->ended = SL_CONTROL_LEFT;
      t->code = sl_control_worker_leave(w, 7);
      break;
    }
    m.kind = SL_MSG_FINISHED;
    m.u.task.task = ev.msg->u.task.task;
    if (sl_control_worker_send(w, &m, err, sizeof err) != 0)
      break;
  }
  t->late_send = sl_control_worker_send(w, &m, err, sizeof err);
out:
  sl_control_worker_free(w);
  return NULL;
}

/* A worker of another build (another message version) is never taken
 * for a node: its HELLO is dropped, and the head can say why. */
static void test_a_worker_of_another_build_is_dropped_and_said(void **state)
{
  fixture *f = *state;
  char err[256];
  f->h = sl_control_head_new(f->zctx, "inproc://other", 1, NULL, &timing, err, sizeof err);
  assert_non_null(f->h);
  void *d = dealer(f, "inproc://other");
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_HELLO;
  m.node = -1;
  snprintf(m.u.hello.name, sizeof m.u.hello.name, "old");
  snprintf(m.u.hello.endpoint, sizeof m.u.hello.endpoint, "tcp://127.0.0.1:7000");
  sl_msg_frames frames = {0};
  assert_int_equal(sl_msg_encode(&m, &frames, err, sizeof err), 0);
  uint8_t old[SL_MSG_HEAD_MAX];
  memcpy(old, frames.part[0].data, frames.part[0].len);
  old[2] = SL_MSG_VERSION - 1; /* the version byte of the build before */
  assert_int_equal(zmq_send(d, old, frames.part[0].len, ZMQ_SNDMORE), (int)frames.part[0].len);
  assert_int_equal(zmq_send(d, frames.part[1].data, frames.part[1].len, ZMQ_SNDMORE), (int)frames.part[1].len);
  assert_int_equal(zmq_send(d, frames.part[2].data, frames.part[2].len, 0), (int)frames.part[2].len);
  sl_msg_frames_free(&frames);
  sl_control_event ev = {0};
  const char *why = NULL;
  for (double end = sl_control_clock() + 2; sl_control_head_unreadable(f->h, NULL) == 0 && sl_control_clock() < end;)
    assert_true(sl_control_head_step(f->h, 50, &ev, err, sizeof err) >= 0);
  assert_int_equal(sl_control_head_unreadable(f->h, &why), 1);
  char said[64];
  snprintf(said, sizeof said, "message version %d, this end speaks %d", SL_MSG_VERSION - 1, SL_MSG_VERSION);
  if (!strstr(why, said))
    fail_msg("the reason given: %s", why);
  assert_int_equal(sl_members_live(sl_control_head_members(f->h)), 0);
  assert_int_equal(ev.kind, SL_CONTROL_NONE);
}

static void test_messages_both_ways_and_goodbyes(void **state)
{
  fixture *f = *state;
  char err[256];
  f->h = sl_control_head_new(f->zctx, "inproc://control", 2, NULL, &timing, err, sizeof err);
  assert_non_null(f->h);
  const sl_members *members = sl_control_head_members(f->h);
  thread_worker t[2] = {{.zctx = f->zctx, .name = "a"}, {.zctx = f->zctx, .name = "b"}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    assert_int_equal(pthread_create(&th[i], NULL, worker_thread, &t[i]), 0);
    await(f, SL_CONTROL_JOINED, i, 5);
  }

  /* the head's message arrives stamped, the answer comes back stamped */
  sl_msg m;
  sl_msg_init(&m);
  m.kind = SL_MSG_CANCEL;
  m.u.task.task = 5;
  assert_int_equal(sl_control_head_send(f->h, 0, &m, err, sizeof err), 0);
  assert_int_equal(m.node, 0);
  assert_true(m.incarnation == sl_members_get(members, 0)->incarnation);
  sl_control_event ev = await(f, SL_CONTROL_MESSAGE, 0, 5);
  assert_int_equal(ev.msg->kind, SL_MSG_FINISHED);
  assert_int_equal(ev.msg->u.task.task, 5);
  assert_true(ev.msg->incarnation == m.incarnation);

  /* a worker that leaves */
  m.u.task.task = 99;
  assert_int_equal(sl_control_head_send(f->h, 0, &m, err, sizeof err), 0);
  ev = await(f, SL_CONTROL_LEFT, 0, 5);
  assert_int_equal(ev.code, 7);
  assert_int_equal(sl_members_get(members, 0)->state, SL_MEMBER_LEFT);
  assert_int_equal(sl_control_head_send(f->h, 0, &m, err, sizeof err), SL_ESTATE);
  pthread_join(th[0], NULL);
  assert_int_equal(t[0].ended, SL_CONTROL_LEFT);
  assert_int_equal(t[0].code, 0);
  assert_int_equal(t[0].late_send, SL_ESTATE);

  /* a worker dismissed */
  assert_int_equal(sl_control_head_dismiss(f->h, 1, 3), 0);
  assert_int_equal(sl_members_get(members, 1)->state, SL_MEMBER_LEFT);
  pthread_join(th[1], NULL);
  assert_int_equal(t[1].ended, SL_CONTROL_DISMISSED);
  assert_int_equal(t[1].code, 3);
  assert_int_equal(t[1].late_send, SL_ESTATE);
  assert_int_equal(sl_members_live(members), 0);
}

int main(int argc, char **argv)
{
  if (argc == 4 && strcmp(argv[1], "worker") == 0)
    return worker_main(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "head") == 0)
    return head_main(atoi(argv[2]));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_workers_join_the_nodes_of_their_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_stopped_worker_is_lost_after_the_timeout, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_killed_worker_rejoins_with_a_new_incarnation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_workers_exit_when_the_head_closes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_workers_of_an_earlier_head_are_stale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_workers_exit_when_the_head_stops_answering, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_backlog_does_not_hide_a_silent_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_messages_both_ways_and_goodbyes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_worker_of_another_build_is_dropped_and_said, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
