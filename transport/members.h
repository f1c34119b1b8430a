/**
 * @file members.h
 * @brief Who is in a run and who is still alive: the head's table of its
 *        workers (nodes, incarnations, silence), and the clock one side
 *        keeps on the other. Pure: no socket, no clock of its own; every
 *        function that needs the time is given it (seconds of a monotonic
 *        clock), so a test can drive it with a fake one.
 *
 * The rules, which transport/control.h applies to every message:
 *
 * - A worker says HELLO with its name. It gets the node of that name in
 *   the list the head was given, or else the first node that no name
 *   holds (the node keeps the name for later). It also gets a fresh
 *   incarnation: a number the table has never given before, to any node.
 * - A worker named SL_MEMBERS_ANY ("*") takes the first node no worker has
 *   had yet, else the first that is not live, whatever its name: a worker
 *   started by hand need not know the cluster's names.
 * - A message of the node's live incarnation restarts its silence; any
 *   other (an older incarnation, a node lost or gone, a node that does not
 *   exist) is stale and is dropped.
 * - A live node silent for longer than the timeout is lost, once. It may
 *   say HELLO again and rejoins with a new incarnation. A HELLO under the
 *   name of a live node (its process restarted before anyone noticed)
 *   loses the old incarnation and joins the new one.
 * - BYE from the live incarnation: the node left cleanly.
 * - Either side sends something at least every heartbeat interval, a
 *   HEARTBEAT when it had nothing else to say.
 *
 * Lost means: now > last heard + timeout, strictly; at exactly the
 * timeout a node is still alive.
 */
#ifndef SL_TRANSPORT_MEMBERS_H
#define SL_TRANSPORT_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "transport/msg.h"

/** @brief The name of a worker that takes any node (above). */
#define SL_MEMBERS_ANY "*"

/** @brief The liveness timings a head gives its workers in WELCOME. */
typedef struct {
  uint32_t heartbeat_ms; /**< send something at least this often; at least 1 */
  uint32_t timeout_ms;   /**< silence after which the other side is lost; more than heartbeat_ms */
} sl_members_timing;

/** @brief 250 ms heartbeats, a 2 s timeout. */
void sl_members_timing_default(sl_members_timing *t);

/** @brief 0, or SL_EINVAL with what is wrong in @p err. */
int sl_members_timing_check(const sl_members_timing *t, char *err, size_t errlen);

/* -------------------------------------------------------------- watch */

/**
 * @brief One side's clock on the other: when it last heard from it and
 *        last sent to it. Caller-allocated; a worker keeps one on its
 *        head, the head one on each node.
 */
typedef struct {
  double heartbeat_s, timeout_s;
  double heard; /**< when something last came */
  double sent;  /**< when something last went */
} sl_members_watch;

/** @brief Starts @p w at @p now, as if something had just come and gone. */
void sl_members_watch_start(sl_members_watch *w, const sl_members_timing *t, double now);

/** @brief Something came at @p now. */
void sl_members_watch_heard(sl_members_watch *w, double now);

/** @brief Something went at @p now. */
void sl_members_watch_sent(sl_members_watch *w, double now);

/** @brief Whether a heartbeat is due: nothing went for the interval. */
bool sl_members_watch_beat_due(const sl_members_watch *w, double now);

/** @brief Whether the other side is lost: nothing came for longer than the timeout. */
bool sl_members_watch_silent(const sl_members_watch *w, double now);

/** @brief When @p w next has something to say: a heartbeat due, or the
 *  timeout's end (after which, strictly, the other side is lost). */
double sl_members_watch_wakeup(const sl_members_watch *w);

/* -------------------------------------------------------------- table */

typedef enum {
  SL_MEMBER_VACANT, /**< no worker joined it yet */
  SL_MEMBER_LIVE,   /**< its incarnation is alive */
  SL_MEMBER_LOST,   /**< silent past the timeout, or replaced by a new process */
  SL_MEMBER_LEFT,   /**< said BYE */
} sl_member_state;

/** @brief A node as the table sees it. */
typedef struct {
  sl_member_state state;
  char name[SL_MSG_NAME_MAX + 1]; /**< the name it was given or took; "" while open to any */
  uint64_t incarnation;           /**< the live one, else the last one given; 0 before the first */
  int joins;                      /**< incarnations it had */
  double joined;                  /**< when the last incarnation joined */
  double gone;                    /**< when it was last lost or left */
  sl_members_watch watch;         /**< heard: when its incarnation was last heard from */
  sl_msg_hello hello;             /**< what its last HELLO said */
  bool named_only;                /**< a worker of any name never takes it (sl_members_named_only()) */
} sl_member;

/** @brief The table of a head's nodes. */
typedef struct sl_members sl_members;

/**
 * @brief A table of @p nodes nodes (1 or more). @p names, when not NULL,
 *        holds @p nodes entries: node i is kept for a worker of name
 *        names[i], or open to any when names[i] is NULL. NULL when a name
 *        is empty, too long or given twice, @p nodes is not positive, or
 *        @p t is wrong (why in @p err), or out of memory. Nothing of
 *        @p names is kept. Free with sl_members_free().
 */
sl_members *sl_members_new(int nodes, const char *const *names, const sl_members_timing *t, char *err,
                           size_t errlen);

/** @brief NULL is a no-op. */
void sl_members_free(sl_members *m);

/** @brief Incarnations given from now on are above @p last (they start
 *  above 0): a head numbers from its start time, so that a worker of an
 *  earlier head on the same endpoint is never taken for one of its own. */
void sl_members_number_from(sl_members *m, uint64_t last);

/** @brief Node @p node is taken only by a worker that names it: a node
 *  that is not in service from the start (an elastic one, started when
 *  it is acquired) must not go to the first worker of any name. */
void sl_members_named_only(sl_members *m, int node);

/** @brief How many nodes the table has. */
int sl_members_nodes(const sl_members *m);

/** @brief How many nodes are live. */
int sl_members_live(const sl_members *m);

/** @brief The timings the table was made with. */
const sl_members_timing *sl_members_get_timing(const sl_members *m);

/** @brief Node @p node; NULL when there is none. Owned by @p m, valid
 *  until it is freed. */
const sl_member *sl_members_get(const sl_members *m, int node);

/** @brief What a HELLO got: its node and incarnation, and the incarnation
 *  of that node it lost (0: none was live). */
typedef struct {
  int node;
  uint64_t incarnation;
  uint64_t replaced;
} sl_members_join;

/**
 * @brief A worker said @p h at @p now: finds its node, gives it a new
 *        incarnation and makes it live. When that node was live, its old
 *        incarnation is lost first (@p out->replaced), as if it had been
 *        silent too long: a restarted process.
 * @return 0; SL_ENOENT when no node is kept for the name and none is open
 *        (@p err says so); SL_EINVAL when @p h has no name.
 */
SL_MUST_CHECK int sl_members_hello(sl_members *m, const sl_msg_hello *h, double now, sl_members_join *out,
                                   char *err, size_t errlen);

/** @brief Whether a message is from a node's live incarnation. */
typedef enum {
  SL_MEMBERS_CURRENT, /**< yes: the node's silence starts again */
  SL_MEMBERS_STALE,   /**< no: an older incarnation, a node lost or left, or no such node; drop it */
} sl_members_verdict;

/** @brief A message with envelope @p node, @p incarnation came at @p now. */
sl_members_verdict sl_members_heard(sl_members *m, int node, uint64_t incarnation, double now);

/** @brief BYE with that envelope came at @p now: a CURRENT one makes the
 *  node LEFT; a STALE one changes nothing. */
sl_members_verdict sl_members_bye(sl_members *m, int node, uint64_t incarnation, double now);

/**
 * @brief The next live node silent for longer than the timeout at @p now
 *        (the lowest index first), which it marks LOST; -1 when there is
 *        none. Call until -1: each node is returned once per incarnation.
 */
int sl_members_expire(sl_members *m, double now);

/** @brief Marks live node @p node LOST at @p now, for a reason of the
 *  caller's. 0; SL_ESTATE when it is not live; SL_EINVAL when there is no
 *  such node. */
int sl_members_lose(sl_members *m, int node, double now);

/** @brief The next live node that is owed a heartbeat at @p now (nothing
 *  was sent to it for the interval); -1 when none. The caller sends it
 *  one and says so with sl_members_sent(), even if the send failed. */
int sl_members_beat_due(const sl_members *m, double now);

/** @brief Something was sent to node @p node at @p now; ignored unless it is live. */
void sl_members_sent(sl_members *m, int node, double now);

/** @brief When the table next has something to do: a heartbeat due or a
 *  timeout's end, over the live nodes; INFINITY when none is live. */
double sl_members_wakeup(const sl_members *m);

/** @brief The name of @p s ("vacant", ...). */
const char *sl_member_state_name(sl_member_state s);

#endif
