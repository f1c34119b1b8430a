/* The member table and the liveness watch (transport/members.h) on a fake
 * clock: a worker gets the node of its name or the first open one and an
 * incarnation never given before; messages of any other incarnation are
 * stale and leave the silence as it was; a node is lost strictly after
 * the timeout, once; a lost, left or restarted node rejoins with a new
 * incarnation; BYE removes it; heartbeats fall due an interval after the
 * last thing sent. Timings are powers of two, so the clock's sums are
 * exact and "exactly at the timeout" means what it says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "transport/members.h"

/* A heartbeat every 1/8 s, lost after 1/2 s. */
static const sl_members_timing timing = {.heartbeat_ms = 125, .timeout_ms = 500};

static sl_msg_hello hello_of(const char *name)
{
  sl_msg_hello h = {.cpu_slots = 4, .gpu_slots = 1, .store_budget = 1u << 30};
  snprintf(h.name, sizeof h.name, "%s", name);
  snprintf(h.endpoint, sizeof h.endpoint, "tcp://10.0.0.1:7%s", name);
  return h;
}

/* Worker @p name says HELLO at @p now; its join, which must succeed. */
static sl_members_join join(sl_members *m, const char *name, double now)
{
  sl_msg_hello h = hello_of(name);
  sl_members_join j;
  char err[200];
  int rc = sl_members_hello(m, &h, now, &j, err, sizeof err);
  if (rc)
    fail_msg("hello from %s: %s", name, err);
  return j;
}

static sl_members *table(int nodes, const char *const *names)
{
  char err[200];
  sl_members *m = sl_members_new(nodes, names, &timing, err, sizeof err);
  if (!m)
    fail_msg("%s", err);
  return m;
}

static void test_nodes_by_name_or_first_open(void **state)
{
  (void)state;
  const char *names[] = {"a", NULL, "c", NULL};
  sl_members *m = table(4, names);
  assert_int_equal(sl_members_nodes(m), 4);
  assert_int_equal(sl_members_live(m), 0);
  assert_int_equal(sl_members_get(m, 0)->state, SL_MEMBER_VACANT);
  assert_string_equal(sl_members_get(m, 1)->name, "");
  assert_null(sl_members_get(m, 4));
  assert_null(sl_members_get(m, -1));

  /* kept names go to their node whatever the order; others take the
   * first open node, and keep it */
  sl_members_join c = join(m, "c", 1), x = join(m, "x", 2), a = join(m, "a", 3), y = join(m, "y", 4);
  assert_int_equal(c.node, 2);
  assert_int_equal(x.node, 1);
  assert_int_equal(a.node, 0);
  assert_int_equal(y.node, 3);
  assert_string_equal(sl_members_get(m, 1)->name, "x");
  assert_true(c.incarnation == 1 && x.incarnation == 2 && a.incarnation == 3 && y.incarnation == 4);
  assert_true(!c.replaced && !x.replaced && !a.replaced && !y.replaced);
  assert_int_equal(sl_members_live(m), 4);

  const sl_member *s = sl_members_get(m, 1);
  assert_int_equal(s->state, SL_MEMBER_LIVE);
  assert_int_equal(s->joins, 1);
  assert_true(s->joined == 2 && s->watch.heard == 2);
  assert_string_equal(s->hello.endpoint, "tcp://10.0.0.1:7x");
  assert_int_equal(s->hello.cpu_slots, 4);

  /* a fifth name: no node left */
  sl_msg_hello h = hello_of("z");
  sl_members_join j;
  char err[200];
  assert_int_equal(sl_members_hello(m, &h, 5, &j, err, sizeof err), SL_ENOENT);
  assert_string_equal(err, "worker 'z': no node has that name and all 4 are taken");
  h.name[0] = '\0';
  assert_int_equal(sl_members_hello(m, &h, 5, &j, err, sizeof err), SL_EINVAL);
  assert_int_equal(sl_members_live(m), 4);
  /* any node: none is free while all four are live */
  h = hello_of(SL_MEMBERS_ANY);
  assert_int_equal(sl_members_hello(m, &h, 5, &j, err, sizeof err), SL_ENOENT);
  sl_members_free(m);

  /* a worker for any node takes the nodes no worker had, in order, named or
   * not; then one that is not live */
  const char *named[3] = {"a", "b", NULL};
  m = table(3, named);
  sl_members_join any0 = join(m, SL_MEMBERS_ANY, 1), b = join(m, "b", 2), any2 = join(m, SL_MEMBERS_ANY, 3);
  assert_int_equal(any0.node, 0);
  assert_int_equal(b.node, 1);
  assert_int_equal(any2.node, 2);
  assert_int_equal(sl_members_hello(m, &h, 4, &j, err, sizeof err), SL_ENOENT);
  assert_int_equal(sl_members_lose(m, 1, 5), 0);
  assert_int_equal(sl_members_hello(m, &h, 6, &j, err, sizeof err), 0);
  assert_int_equal(j.node, 1);
  sl_members_free(m);

  /* a node taken only by name (an elastic node before it is acquired):
   * workers of any name pass it by, even when it is the only one open */
  m = table(3, named);
  sl_members_named_only(m, 0);
  h = hello_of(SL_MEMBERS_ANY);
  assert_int_equal(join(m, SL_MEMBERS_ANY, 1).node, 1);
  assert_int_equal(join(m, SL_MEMBERS_ANY, 2).node, 2);
  assert_int_equal(sl_members_hello(m, &h, 3, &j, err, sizeof err), SL_ENOENT);
  assert_int_equal(sl_members_get(m, 0)->state, SL_MEMBER_VACANT);
  assert_int_equal(join(m, "a", 4).node, 0);
  assert_int_equal(sl_members_lose(m, 0, 5), 0);
  assert_int_equal(sl_members_hello(m, &h, 6, &j, err, sizeof err), SL_ENOENT);
  sl_members_free(m);

  /* no names at all: first come, first served */
  m = table(2, NULL);
  assert_int_equal(join(m, "q", 0).node, 0);
  assert_int_equal(join(m, "p", 0).node, 1);
  assert_int_equal(join(m, "q", 1).node, 0);
  sl_members_free(m);
}

static void test_bad_tables_are_refused(void **state)
{
  (void)state;
  char err[200];
  const char *twice[] = {"a", "b", "a"};
  assert_null(sl_members_new(3, twice, &timing, err, sizeof err));
  assert_string_equal(err, "nodes 0 and 2 are both named 'a'");
  const char *empty[] = {"a", ""};
  assert_null(sl_members_new(2, empty, &timing, err, sizeof err));
  assert_non_null(strstr(err, "node 1: its name must have 1 to 64 bytes"));
  char longer[SL_MSG_NAME_MAX + 2];
  memset(longer, 'n', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  const char *too_long[] = {longer};
  assert_null(sl_members_new(1, too_long, &timing, err, sizeof err));
  assert_null(sl_members_new(0, NULL, &timing, err, sizeof err));
  assert_string_equal(err, "0 nodes: a run has 1 at least");
  sl_members_timing t = {.heartbeat_ms = 0, .timeout_ms = 100};
  assert_null(sl_members_new(1, NULL, &t, err, sizeof err));
  assert_non_null(strstr(err, "heartbeats every 0 ms and a timeout of 100 ms"));
  t = (sl_members_timing){.heartbeat_ms = 100, .timeout_ms = 100};
  assert_int_equal(sl_members_timing_check(&t, err, sizeof err), SL_EINVAL);
  sl_members_timing_default(&t);
  assert_int_equal(sl_members_timing_check(&t, err, sizeof err), 0);
  assert_true(t.heartbeat_ms == 250 && t.timeout_ms == 2000);
}

static void test_stale_messages_are_told_apart(void **state)
{
  (void)state;
  sl_members *m = table(2, (const char *const[]){"a", "b"});
  sl_members_join a = join(m, "a", 1), b = join(m, "b", 1);
  assert_int_equal(sl_members_heard(m, a.node, a.incarnation, 1.25), SL_MEMBERS_CURRENT);
  assert_true(sl_members_get(m, a.node)->watch.heard == 1.25);
  /* another node's incarnation, one never given, no such node: stale,
   * and the silence goes on */
  assert_int_equal(sl_members_heard(m, a.node, b.incarnation, 1.5), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_heard(m, a.node, 0, 1.5), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_heard(m, a.node, 99, 1.5), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_heard(m, 2, a.incarnation, 1.5), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_heard(m, -1, a.incarnation, 1.5), SL_MEMBERS_STALE);
  assert_true(sl_members_get(m, a.node)->watch.heard == 1.25);

  /* its process restarted under the same name before anyone noticed: the
   * old incarnation is lost, and stale from then on */
  sl_members_join again = join(m, "a", 1.5);
  assert_int_equal(again.node, a.node);
  assert_true(again.replaced == a.incarnation);
  assert_true(again.incarnation > b.incarnation);
  assert_int_equal(sl_members_heard(m, a.node, a.incarnation, 1.75), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_heard(m, a.node, again.incarnation, 1.75), SL_MEMBERS_CURRENT);
  assert_int_equal(sl_members_get(m, a.node)->joins, 2);
  assert_int_equal(sl_members_live(m), 2);
  /* a time that goes back (a message taken in late) does not move it back */
  assert_int_equal(sl_members_heard(m, a.node, again.incarnation, 1.5), SL_MEMBERS_CURRENT);
  assert_true(sl_members_get(m, a.node)->watch.heard == 1.75);
  sl_members_free(m);
}

static void test_lost_strictly_after_the_timeout_once(void **state)
{
  (void)state;
  sl_members *m = table(3, NULL);
  sl_members_join a = join(m, "a", 1), b = join(m, "b", 1), c = join(m, "c", 1);
  assert_int_equal(sl_members_heard(m, b.node, b.incarnation, 1.25), SL_MEMBERS_CURRENT);
  /* a and c last heard at 1, b at 1.25; the timeout is 0.5 */
  assert_int_equal(sl_members_expire(m, 1.5), -1);
  assert_int_equal(sl_members_expire(m, 1.5), -1); /* exactly at the timeout: alive */
  double past = nextafter(1.5, 2);
  assert_int_equal(sl_members_expire(m, past), a.node); /* the lowest index first */
  assert_int_equal(sl_members_expire(m, past), c.node);
  assert_int_equal(sl_members_expire(m, past), -1); /* each once */
  assert_int_equal(sl_members_expire(m, 10), b.node);
  assert_int_equal(sl_members_expire(m, 20), -1);
  const sl_member *s = sl_members_get(m, a.node);
  assert_int_equal(s->state, SL_MEMBER_LOST);
  assert_true(s->gone == past);
  assert_true(s->watch.heard == 1);
  assert_int_equal(sl_members_live(m), 0);
  assert_int_equal(sl_members_heard(m, a.node, a.incarnation, 11), SL_MEMBERS_STALE);
  assert_true(isinf(sl_members_wakeup(m)));
  sl_members_free(m);
}

static void test_a_lost_node_rejoins_with_a_new_incarnation(void **state)
{
  (void)state;
  sl_members *m = table(2, (const char *const[]){"a", "b"});
  uint64_t seen[16];
  int n = 0;
  sl_members_join a = join(m, "a", 0);
  seen[n++] = a.incarnation;
  seen[n++] = join(m, "b", 0).incarnation;
  assert_int_equal(sl_members_expire(m, 1), 0);
  assert_int_equal(sl_members_expire(m, 1), 1);

  sl_members_join back = join(m, "a", 2);
  assert_int_equal(back.node, a.node);
  assert_true(back.replaced == 0); /* it was lost already */
  seen[n++] = back.incarnation;
  const sl_member *s = sl_members_get(m, a.node);
  assert_int_equal(s->state, SL_MEMBER_LIVE);
  assert_int_equal(s->joins, 2);
  assert_true(s->joined == 2 && s->watch.heard == 2);
  assert_int_equal(sl_members_live(m), 1);
  assert_int_equal(sl_members_heard(m, a.node, a.incarnation, 2.25), SL_MEMBERS_STALE);
  /* its silence started again at the HELLO */
  assert_int_equal(sl_members_expire(m, 2.5), -1);
  assert_int_equal(sl_members_expire(m, 2.75), a.node);

  /* incarnations are never given twice, over nodes and rejoins */
  seen[n++] = join(m, "b", 3).incarnation;
  seen[n++] = join(m, "a", 3).incarnation;
  seen[n++] = join(m, "a", 3).incarnation;
  /* numbered from a head's start: on from there, never back */
  sl_members_number_from(m, 1000);
  seen[n++] = join(m, "b", 4).incarnation;
  assert_true(seen[n - 1] == 1001);
  sl_members_number_from(m, 10);
  seen[n++] = join(m, "b", 4).incarnation;
  for (int i = 1; i < n; i++)
    assert_true(seen[i] > seen[i - 1]);
  sl_members_free(m);
}

static void test_bye_removes_a_node(void **state)
{
  (void)state;
  sl_members *m = table(2, NULL);
  sl_members_join a = join(m, "a", 0), b = join(m, "b", 0);
  assert_int_equal(sl_members_bye(m, a.node, b.incarnation, 0.25), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_get(m, a.node)->state, SL_MEMBER_LIVE);
  assert_int_equal(sl_members_bye(m, a.node, a.incarnation, 0.25), SL_MEMBERS_CURRENT);
  const sl_member *s = sl_members_get(m, a.node);
  assert_int_equal(s->state, SL_MEMBER_LEFT);
  assert_true(s->gone == 0.25);
  assert_int_equal(sl_members_live(m), 1);
  /* gone: not lost later, nothing of it current, no heartbeat owed */
  assert_int_equal(sl_members_bye(m, a.node, a.incarnation, 0.5), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_heard(m, a.node, a.incarnation, 0.5), SL_MEMBERS_STALE);
  assert_int_equal(sl_members_beat_due(m, 5), b.node);
  assert_int_equal(sl_members_expire(m, 5), b.node);
  assert_int_equal(sl_members_expire(m, 5), -1);
  /* it may come back */
  sl_members_join back = join(m, "a", 6);
  assert_int_equal(back.node, a.node);
  assert_true(back.incarnation > b.incarnation && !back.replaced);
  /* declared lost by the caller */
  assert_int_equal(sl_members_lose(m, a.node, 6.5), 0);
  assert_int_equal(sl_members_lose(m, a.node, 6.5), SL_ESTATE);
  assert_int_equal(sl_members_lose(m, 7, 6.5), SL_EINVAL);
  assert_int_equal(sl_members_get(m, a.node)->state, SL_MEMBER_LOST);
  assert_int_equal(sl_members_live(m), 0);
  sl_members_free(m);
}

static void test_heartbeats_fall_due_after_the_last_send(void **state)
{
  (void)state;
  sl_members *m = table(2, NULL);
  sl_members_join a = join(m, "a", 0), b = join(m, "b", 0.0625);
  assert_int_equal(sl_members_beat_due(m, 0.0625), -1);
  assert_true(sl_members_wakeup(m) == 0.125);
  assert_int_equal(sl_members_beat_due(m, 0.125), a.node); /* at the interval */
  sl_members_sent(m, a.node, 0.125);
  assert_int_equal(sl_members_beat_due(m, 0.125), -1);
  assert_true(sl_members_wakeup(m) == 0.1875);
  /* hearing from it does not put off what it is owed; sending does */
  assert_int_equal(sl_members_heard(m, b.node, b.incarnation, 0.1875), SL_MEMBERS_CURRENT);
  assert_int_equal(sl_members_beat_due(m, 0.1875), b.node);
  sl_members_sent(m, b.node, 0.1875);
  assert_int_equal(sl_members_beat_due(m, 0.1875), -1);
  assert_int_equal(sl_members_beat_due(m, 0.25), a.node);
  sl_members_sent(m, a.node, 0.25);
  sl_members_sent(m, 7, 0.25); /* no such node: ignored */
  /* nothing is owed to a node lost */
  assert_int_equal(sl_members_expire(m, 0.75), a.node);
  sl_members_sent(m, a.node, 0.75);
  assert_int_equal(sl_members_beat_due(m, 0.75), b.node);
  sl_members_sent(m, b.node, 0.75);
  /* b: heartbeat due at 0.875, silent past 0.6875 */
  assert_true(sl_members_wakeup(m) == 0.6875);
  sl_members_free(m);
}

/* A worker's watch on its head. */
static void test_watch(void **state)
{
  (void)state;
  sl_members_watch w;
  sl_members_watch_start(&w, &timing, 4);
  assert_false(sl_members_watch_beat_due(&w, 4.0625));
  assert_true(sl_members_watch_beat_due(&w, 4.125));
  sl_members_watch_sent(&w, 4.125);
  assert_false(sl_members_watch_beat_due(&w, 4.1875));
  assert_true(sl_members_watch_wakeup(&w) == 4.25);
  assert_false(sl_members_watch_silent(&w, 4.5));
  assert_true(sl_members_watch_silent(&w, nextafter(4.5, 5)));
  sl_members_watch_heard(&w, 4.25);
  sl_members_watch_heard(&w, 4); /* late: ignored */
  assert_false(sl_members_watch_silent(&w, 4.75));
  assert_true(sl_members_watch_silent(&w, 4.8125));
  sl_members_watch_sent(&w, 4.75);
  assert_true(sl_members_watch_wakeup(&w) == 4.75); /* the timeout's end comes first */
  assert_string_equal(sl_member_state_name(SL_MEMBER_LEFT), "left");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nodes_by_name_or_first_open),
      cmocka_unit_test(test_bad_tables_are_refused),
      cmocka_unit_test(test_stale_messages_are_told_apart),
      cmocka_unit_test(test_lost_strictly_after_the_timeout_once),
      cmocka_unit_test(test_a_lost_node_rejoins_with_a_new_incarnation),
      cmocka_unit_test(test_bye_removes_a_node),
      cmocka_unit_test(test_heartbeats_fall_due_after_the_last_send),
      cmocka_unit_test(test_watch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
