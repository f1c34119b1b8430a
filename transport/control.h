/**
 * @file control.h
 * @brief The control channel between a head and its workers: the head's
 *        ROUTER and each worker's DEALER, with membership and liveness
 *        (transport/members.h) applied to every message that passes.
 *
 * A worker connects and says HELLO; the head answers WELCOME with the
 * worker's node, its incarnation and the timings both sides then keep.
 * From then on each side sends a HEARTBEAT whenever it has sent nothing
 * else for an interval, and takes the other for lost after a timeout of
 * silence: the head declares the node lost (once; the scheduling core is
 * told by the caller), the worker reports its head lost and its process
 * exits, so that no worker outlives its head. A message of an incarnation
 * that is not live is reported stale and dropped, and its sender is told
 * BYE: a worker the head gave up on cannot come back in its old skin, it
 * must say HELLO again (a new process) and gets a new incarnation.
 *
 * Losses are declared on silence only, never because a send failed or a
 * connection closed, so a lost process is seen after the timeout whatever
 * killed it: what the simulator models.
 *
 * Each side is driven by a step function that takes a wait in ms, reads
 * the monotonic clock (sl_control_clock()) and returns one event at a
 * time; heartbeats are sent and received inside it. Its socket may be
 * polled beside others, and sl_control_*_wakeup() says when a step is due
 * even if nothing comes. One thread per side, ZeroMQ's rule.
 */
#ifndef SL_TRANSPORT_CONTROL_H
#define SL_TRANSPORT_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "transport/members.h"
#include "transport/msg.h"

/** @brief What a step saw. */
typedef enum {
  SL_CONTROL_NONE,      /**< nothing: the wait passed */
  SL_CONTROL_JOINED,    /**< head: node joined with incarnation (its HELLO: sl_members_get()) */
  SL_CONTROL_LOST,      /**< head: node's incarnation is lost: silent too long, or its name came back */
  SL_CONTROL_LEFT,      /**< head: node's incarnation said BYE (code) */
  SL_CONTROL_REFUSED,   /**< head: a HELLO no node was left for (msg), told BYE with code */
  SL_CONTROL_STALE,     /**< a message of an incarnation not live (msg), dropped */
  SL_CONTROL_MESSAGE,   /**< a message for the engine (msg) from the live incarnation or the head */
  SL_CONTROL_HEAD_LOST, /**< worker: nothing came from the head for longer than the timeout */
  SL_CONTROL_DISMISSED, /**< worker: the head said BYE (code): the run is over for it */
} sl_control_event_kind;

/** @brief One event. @c msg is the step's own: valid until the next step. */
typedef struct {
  sl_control_event_kind kind;
  int node;             /**< the node it is about (the worker's own on a worker); -1 for none */
  uint64_t incarnation; /**< that node's incarnation, or the stale message's */
  int32_t code;         /**< LEFT, REFUSED, DISMISSED: the BYE's code */
  double at;            /**< when the step saw it, on sl_control_clock() */
  const sl_msg *msg;    /**< MESSAGE, STALE, REFUSED: the message */
} sl_control_event;

/** @brief Seconds of CLOCK_MONOTONIC: the clock every step reads. */
double sl_control_clock(void);

/** @brief The name of @p k ("joined", ...). */
const char *sl_control_event_name(sl_control_event_kind k);

/* --------------------------------------------------------------- head */

typedef struct sl_control_head sl_control_head;

/**
 * @brief A head bound at @p endpoint in ZeroMQ context @p zctx
 *        ("tcp://127.0.0.1:*" picks a free port), for @p nodes nodes
 *        named by @p names (see sl_members_new()) with timings @p t.
 *        Its incarnations are numbered from its start (microseconds of
 *        the real-time clock), so that a worker of an earlier head at the
 *        same endpoint is stale here. NULL on a bad argument, a failed
 *        bind (why in @p err) or out of memory. Free with
 *        sl_control_head_free().
 */
sl_control_head *sl_control_head_new(void *zctx, const char *endpoint, int nodes, const char *const *names,
                                     const sl_members_timing *t, char *err, size_t errlen);

/** @brief Closes the socket, without a word to the workers: they take the
 *  head for lost after their timeout. Dismiss them first for a clean end.
 *  NULL is a no-op. */
void sl_control_head_free(sl_control_head *h);

/** @brief The endpoint bound, with its real port; owned by @p h. */
const char *sl_control_head_endpoint(const sl_control_head *h);

/** @brief The ROUTER socket, to poll for ZMQ_POLLIN beside others. */
void *sl_control_head_socket(sl_control_head *h);

/** @brief The member table, to read; owned by @p h. */
const sl_members *sl_control_head_members(const sl_control_head *h);

/** @brief Node @p node goes only to a worker that names it (sl_members_named_only()). */
void sl_control_head_named_only(sl_control_head *h, int node);

/** @brief Messages dropped because they could not be read (another build's
 *  worker, or anything else that reached the port), and in @p first, when
 *  not NULL, why the first of them was (owned by @p h). */
uint64_t sl_control_head_unreadable(const sl_control_head *h, const char **first);

/** @brief When a step is next due even if no message comes: a heartbeat
 *  to send or a node's timeout to end; INFINITY when no node is live. */
double sl_control_head_wakeup(const sl_control_head *h);

/**
 * @brief Sends the heartbeats due, takes in messages and declares lost the
 *        nodes silent too long, until there is an event for the caller,
 *        waiting up to @p wait_ms (0: not at all; -1: until an event).
 *        HELLOs are answered (WELCOME, or BYE when refused), HEARTBEATs
 *        taken in, stale messages answered BYE; malformed ones dropped.
 * @return 1 and the event in @p ev; 0 when the wait passed without one;
 *        SL_EINTR; SL_EIO on a socket error (@p err).
 */
int sl_control_head_step(sl_control_head *h, int wait_ms, sl_control_event *ev, char *err, size_t errlen);

/**
 * @brief Sends @p m to live node @p node, stamped with its node and
 *        incarnation (set in @p m), without waiting.
 * @return 0; SL_ESTATE when the node is not live; SL_EAGAIN when its queue
 *        is full; SL_EIO when its connection is gone (the node is still
 *        live until its timeout); SL_EINVAL when @p m does not encode.
 */
SL_MUST_CHECK int sl_control_head_send(sl_control_head *h, int node, sl_msg *m, char *err, size_t errlen);

/**
 * @brief Tells live node @p node (-1: every live node) BYE with @p code
 *        and counts it as left, with no event. Its worker reports
 *        DISMISSED and exits; its messages are stale from now on. BYEs not
 *        yet sent when the head is freed are given a heartbeat interval.
 * @return 0; SL_ESTATE when @p node is not live.
 */
int sl_control_head_dismiss(sl_control_head *h, int node, int32_t code);

/* ------------------------------------------------------------- worker */

typedef struct sl_control_worker sl_control_worker;

/**
 * @brief A worker of the head at @p head, in ZeroMQ context @p zctx, that
 *        will introduce itself with @p hello (copied: name, slots, store
 *        budget, the endpoint it serves partitions at). The connection is
 *        made in the background. NULL on a bad endpoint or HELLO (@p err)
 *        or out of memory. Free with sl_control_worker_free().
 */
sl_control_worker *sl_control_worker_new(void *zctx, const char *head, const sl_msg_hello *hello, char *err,
                                         size_t errlen);

/** @brief Closes the socket. NULL is a no-op. */
void sl_control_worker_free(sl_control_worker *w);

/** @brief The DEALER socket, to poll for ZMQ_POLLIN beside others. */
void *sl_control_worker_socket(sl_control_worker *w);

/**
 * @brief Says HELLO and waits up to @p timeout_ms for WELCOME; then the
 *        worker has a node, an incarnation and the head's timings. Once
 *        per worker: after a failure, free it and make another.
 * @return 0; SL_EIO when no answer came in time (no head there) or on a
 *        socket error; the head's code (SL_ENOENT: no node for the name)
 *        when it refused; SL_EPROTO when its timings are wrong; SL_ESTATE
 *        when it said HELLO before. Why in @p err.
 */
SL_MUST_CHECK int sl_control_worker_join(sl_control_worker *w, int timeout_ms, char *err, size_t errlen);

/** @brief The node the head gave; -1 before WELCOME. */
int sl_control_worker_node(const sl_control_worker *w);

/** @brief The incarnation the head gave; 0 before WELCOME. */
uint64_t sl_control_worker_incarnation(const sl_control_worker *w);

/** @brief The head's timings, from WELCOME. */
const sl_members_timing *sl_control_worker_timing(const sl_control_worker *w);

/** @brief When a step is next due even if no message comes: a heartbeat
 *  to send or the head's timeout to end. */
double sl_control_worker_wakeup(const sl_control_worker *w);

/**
 * @brief Sends a heartbeat when due, takes in what the head sent, and
 *        watches its silence, until there is an event, waiting up to
 *        @p wait_ms (0: not at all; -1: until an event). After HEAD_LOST
 *        or DISMISSED the worker is over: its process should exit.
 * @return 1 and the event in @p ev; 0 when the wait passed without one;
 *        SL_ESTATE before joining or once over; SL_EINTR; SL_EIO (@p err).
 */
int sl_control_worker_step(sl_control_worker *w, int wait_ms, sl_control_event *ev, char *err, size_t errlen);

/**
 * @brief Sends @p m to the head, stamped with the worker's node and
 *        incarnation (set in @p m), without waiting.
 * @return 0; SL_ESTATE before joining or once over; SL_EAGAIN when the
 *        queue to the head is full; SL_EIO; SL_EINVAL when @p m does not
 *        encode.
 */
SL_MUST_CHECK int sl_control_worker_send(sl_control_worker *w, sl_msg *m, char *err, size_t errlen);

/** @brief Tells the head BYE with @p code; the worker is then over. The
 *  BYE is given a heartbeat interval to leave when the worker is freed.
 *  0; SL_ESTATE before joining or once over; SL_EAGAIN, SL_EIO. */
int sl_control_worker_leave(sl_control_worker *w, int32_t code);

#endif
