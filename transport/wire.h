/**
 * @file wire.h
 * @brief transport/msg.h's messages over ZeroMQ sockets: one message is
 *        one multipart ZeroMQ message, preceded on a ROUTER by the peer's
 *        routing id.
 *
 * A socket belongs to one thread (ZeroMQ's rule); so do the sl_wire_in
 * and sl_msg_frames used with it. Nothing here blocks past what the
 * socket's own options allow, with SL_WIRE_DONTWAIT nothing blocks at all.
 */
#ifndef SL_TRANSPORT_WIRE_H
#define SL_TRANSPORT_WIRE_H

#include <stdint.h>

#include "transport/msg.h"

/** @brief Return SL_EAGAIN instead of waiting. */
#define SL_WIRE_DONTWAIT 1

/** @brief The routing id of a ROUTER's peer (ZeroMQ's: 1 to 255 bytes). */
typedef struct {
  uint8_t len;
  uint8_t id[255];
} sl_wire_peer;

/** @brief The frames of the last message received, which a decoded CHUNK's
 *  payload points into. Free with sl_wire_in_free(). */
typedef struct sl_wire_in sl_wire_in;

/** @brief An empty receiver; NULL when out of memory. */
sl_wire_in *sl_wire_in_new(void);

/** @brief Releases the frames held and @p in itself; NULL is a no-op. */
void sl_wire_in_free(sl_wire_in *in);

/**
 * @brief Receives one message from @p sock and decodes it into @p m. On a
 *        ROUTER, pass @p from: the routing id goes there (NULL: a DEALER,
 *        a PAIR, ...). The frames stay in @p in until its next receive,
 *        and with them a CHUNK's payload.
 * @return 0; SL_EAGAIN when nothing is there (SL_WIRE_DONTWAIT, or the
 *        socket's receive timeout passed); SL_EPROTO when the message is
 *        malformed (what is wrong in @p err; the message is consumed whole,
 *        so the next receive starts at the next one); SL_EINTR; SL_ENOMEM;
 *        SL_EIO on any other socket error (ZeroMQ's message in @p err).
 */
SL_MUST_CHECK int sl_wire_recv(void *sock, sl_wire_in *in, sl_wire_peer *from, sl_msg *m, int flags, char *err,
                               size_t errlen);

/**
 * @brief Waits up to @p wait_ms (0: not at all; -1: for ever) for a
 *        message on @p sock.
 * @return 1 when one is there; 0 when the wait passed; SL_EINTR; SL_EIO
 *        (ZeroMQ's message in @p err).
 */
int sl_wire_wait(void *sock, int wait_ms, char *err, size_t errlen);

/** @brief Sets integer option @p opt of a socket the caller made to @p v;
 *  only an option ZeroMQ does not know fails, so the result is not kept. */
void sl_wire_set_int(void *sock, int opt, int v);

/** @brief An integer option to set on a socket before it binds or connects. */
typedef struct {
  int opt, value;
} sl_wire_opt;

/**
 * @brief A socket of @p type in context @p zctx that lingers for nothing
 *        at close, with the @p nopts options @p opts set: a ROUTER binds
 *        @p endpoint (the endpoint with its real port in @p bound, of
 *        @p boundlen bytes) and fails a send to a peer that is gone
 *        instead of dropping it; any other type connects to @p endpoint.
 * @return the socket; NULL with SL_EIO's message, starting with @p who,
 *        in @p err.
 */
void *sl_wire_open(void *zctx, int type, const char *endpoint, const sl_wire_opt *opts, int nopts, char *bound,
                   size_t boundlen, const char *who, char *err, size_t errlen);

/** @brief Called once ZeroMQ is done with a payload frame sent without a
 *  copy, with its data and the hint given; possibly from ZeroMQ's own
 *  thread, possibly before the send returns. */
typedef void (*sl_wire_free_fn)(void *data, void *hint);

/**
 * @brief Encodes @p m (into @p scratch, which the caller keeps for reuse)
 *        and sends it on @p sock, to peer @p to on a ROUTER (NULL
 *        otherwise). With @p ffn, the non-empty payload frames of a CHUNK
 *        go without a copy, and @p ffn(data, @p hint) is called once for
 *        each of them whatever the send's outcome; without, every frame is
 *        copied.
 * @return 0; SL_EINVAL when @p m does not encode (@p err); SL_EAGAIN when
 *        the socket cannot take it now (its high-water mark, or a DEALER
 *        with no peer, under SL_WIRE_DONTWAIT); SL_EINTR; SL_ENOMEM; SL_EIO
 *        on any other error, such as a ROUTER_MANDATORY peer that is gone
 *        (ZeroMQ's message in @p err). Nothing is sent unless 0.
 */
SL_MUST_CHECK int sl_wire_send(void *sock, const sl_wire_peer *to, const sl_msg *m, sl_msg_frames *scratch,
                               sl_wire_free_fn ffn, void *hint, int flags, char *err, size_t errlen);

#endif
