/**
 * @file xfer.h
 * @brief Partition transfer between workers: a server that serves the
 *        partitions of its node's store from their own buffers, and a
 *        client that fetches one into a buffer of the caller's, in chunks,
 *        with a window of chunks in flight.
 *
 * The protocol (transport/msg.h's FETCH and CHUNK) keeps no state in the
 * server: a FETCH asks for up to `credit` chunks of `chunk_bytes` from an
 * offset, and the server sends them, each a CHUNK that says the
 * partition's total size and ends with the last flag at its end. The
 * client asks for `window` chunks at first, then for one more each time
 * one arrives, so that never more than `window` chunks are asked for and
 * not received; a client that dies leaves nothing behind at the server.
 * Each fetch has a tag the CHUNKs carry back, so that the chunks of a
 * fetch given up on are ignored by the next.
 *
 * The server sends without copying: each payload frame points into the
 * published buffers, and the partition's release callback runs once the
 * server has withdrawn it and ZeroMQ holds none of its frames any more.
 *
 * Both sides are ZeroMQ sockets (the server a ROUTER it binds, the client
 * a DEALER connected to one server) and belong to one thread each, which
 * may poll them with others (sl_xfer_server_socket(),
 * sl_xfer_client_socket()).
 */
#ifndef SL_TRANSPORT_XFER_H
#define SL_TRANSPORT_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/core.h"
#include "models/error.h"
#include "transport/msg.h"

/** @brief Most buffers one published partition may span. */
#define SL_XFER_MAX_SEGS SL_MSG_MAX_PAYLOAD

/** @brief The client's side of a transfer. */
typedef struct {
  uint32_t chunk_bytes; /**< bytes asked for per chunk (default 1 MiB) */
  uint32_t window;      /**< chunks in flight (default 8) */
  int timeout_ms;       /**< sl_xfer_fetch() gives up after this long without a chunk (default 2000) */
} sl_xfer_opts;

/** @brief The defaults above. */
void sl_xfer_opts_default(sl_xfer_opts *o);

/** @brief One buffer of a published partition. */
typedef struct {
  const void *data;
  size_t len;
} sl_xfer_seg;

/** @brief Called once ZeroMQ and the server are both done with a published
 *  partition's buffers; possibly from ZeroMQ's own thread. */
typedef void (*sl_xfer_release_fn)(void *ctx);

/**
 * @brief Makes glibc's allocator keep freed chunk buffers for the next
 *        ones. ZeroMQ allocates a buffer for every chunk it receives, and
 *        the client frees it once copied out; by default glibc hands
 *        buffers of a MiB back to the kernel (mapped apart, or trimmed off
 *        the heap), so that the next chunk faults its pages in again, which
 *        costs a fifth more CPU per byte fetched (bench/bench_transfer.c).
 *        With this, buffers up to 32 MiB come from the heap and up to
 *        64 MiB of free heap is kept. Process-wide (mallopt()): a main()
 *        that fetches partitions calls it once, before its threads start.
 * @return 0; SL_EINVAL when the allocator refuses.
 */
int sl_xfer_tune_allocator(void);

/* ------------------------------------------------------------- server */

typedef struct sl_xfer_server sl_xfer_server;

/**
 * @brief A server bound at @p endpoint in ZeroMQ context @p zctx
 *        ("tcp://127.0.0.1:*" picks a free port; sl_xfer_server_endpoint()
 *        says which). NULL when the bind fails (why in @p err) or out of
 *        memory. Free with sl_xfer_server_free().
 */
sl_xfer_server *sl_xfer_server_new(void *zctx, const char *endpoint, char *err, size_t errlen);

/** @brief Withdraws every partition and closes the socket. Frames still
 *  queued are dropped; their partitions are released as ZeroMQ lets them
 *  go (by zmq_ctx_term() at the latest). NULL is a no-op. */
void sl_xfer_server_free(sl_xfer_server *s);

/** @brief The endpoint bound, with its real port; owned by @p s. */
const char *sl_xfer_server_endpoint(const sl_xfer_server *s);

/** @brief The ROUTER socket, to poll for ZMQ_POLLIN beside others. */
void *sl_xfer_server_socket(sl_xfer_server *s);

/**
 * @brief Serves partition @p part: the @p nsegs buffers at @p segs, in
 *        order, are its bytes (borrowed: they must stay unchanged until
 *        @p release(@p ctx) is called; @p release may be NULL). Empty
 *        buffers are skipped.
 * @return 0; SL_EINVAL when @p part is already served or @p nsegs is past
 *        SL_XFER_MAX_SEGS (@p release is then not called); SL_ENOMEM.
 */
SL_MUST_CHECK int sl_xfer_server_publish(sl_xfer_server *s, sl_part_id part, const sl_xfer_seg *segs, int nsegs,
                                         sl_xfer_release_fn release, void *ctx);

/** @brief Called for a FETCH of a partition @p s does not serve: it may
 *  publish it (sl_xfer_server_publish()) before the FETCH is answered,
 *  so that a store serves its partitions on demand. */
typedef void (*sl_xfer_lookup_fn)(void *ctx, sl_xfer_server *s, sl_part_id part);

/** @brief Sets the lookup of partitions not served (NULL: none; the FETCH
 *  is answered SL_ENOENT). */
void sl_xfer_server_set_lookup(sl_xfer_server *s, sl_xfer_lookup_fn fn, void *ctx);

/** @brief Stops serving @p part: later FETCHes are answered SL_ENOENT, and
 *  its release callback runs once ZeroMQ holds none of its frames (maybe
 *  before this returns). SL_ENOENT when it is not served. */
int sl_xfer_server_withdraw(sl_xfer_server *s, sl_part_id part);

/**
 * @brief Lets a FETCH of a partition not served yet (nor published by the
 *        lookup) wait up to @p park_ms for it, instead of being answered
 *        SL_ENOENT at once (0, the default). A consumer told of a
 *        partition before its producer's node has stored it then gets it
 *        as soon as it is, without asking again and again. Keep @p park_ms
 *        below the clients' timeout_ms: a client hears nothing meanwhile.
 */
void sl_xfer_server_set_park(sl_xfer_server *s, int park_ms);

/** @brief FETCHes waiting for their partition (sl_xfer_server_set_park()). */
size_t sl_xfer_server_parked(const sl_xfer_server *s);

/**
 * @brief Answers the waiting FETCHes whose partition is served now (the
 *        lookup asked again), and those that waited their time with
 *        SL_ENOENT. Call it when partitions may have become available;
 *        sl_xfer_server_serve() calls it too.
 * @return how many it answered.
 */
int sl_xfer_server_recheck(sl_xfer_server *s);

/**
 * @brief Answers the FETCHes waiting, after waiting up to @p wait_ms for
 *        the first (0: not at all; -1: for ever), and the parked ones
 *        that can be (sl_xfer_server_recheck()). Malformed messages are
 *        dropped.
 * @return how many FETCHes it answered; SL_EINTR; SL_EIO on a socket error
 *        (@p err).
 */
int sl_xfer_server_serve(sl_xfer_server *s, int wait_ms, char *err, size_t errlen);

/* ------------------------------------------------------------- client */

typedef struct sl_xfer_client sl_xfer_client;

/** @brief A client of the server at @p endpoint, in ZeroMQ context
 *  @p zctx, with @p o (NULL: defaults). The connection is made in the
 *  background. NULL on a bad endpoint or options (@p err) or out of
 *  memory. Free with sl_xfer_client_free(). */
sl_xfer_client *sl_xfer_client_new(void *zctx, const char *endpoint, const sl_xfer_opts *o, char *err,
                                   size_t errlen);

/** @brief Closes the socket; a fetch under way is given up. NULL is a no-op. */
void sl_xfer_client_free(sl_xfer_client *c);

/** @brief The DEALER socket, to poll for ZMQ_POLLIN beside others. */
void *sl_xfer_client_socket(sl_xfer_client *c);

/**
 * @brief Where a fetch puts what it receives: @c put takes bytes
 *        [@p offset, @p offset + @p len) of a partition of @p total bytes,
 *        in order from 0 (none for an empty partition), and copies them
 *        where they belong; 0, or a code that ends the fetch with it
 *        (SL_EINVAL: larger than the destination takes, SL_EPROTO: not
 *        what it takes, SL_ENOMEM), why in @p err.
 */
typedef struct {
  int (*put)(void *ctx, uint64_t total, uint64_t offset, const void *data, size_t len, char *err, size_t errlen);
  void *ctx;
} sl_xfer_dest;

/**
 * @brief Starts fetching partition @p part into @p dest (borrowed until
 *        the fetch ends). One fetch at a time per client.
 * @return 0; SL_ESTATE when a fetch is under way; SL_EIO (@p err) when the
 *        request cannot be sent.
 */
SL_MUST_CHECK int sl_xfer_fetch_start_to(sl_xfer_client *c, sl_part_id part, const sl_xfer_dest *dest, char *err,
                                         size_t errlen);

/** @brief sl_xfer_fetch_start_to() a destination of @p cap bytes at
 *  @p buf: a larger partition ends the fetch with SL_EINVAL. */
SL_MUST_CHECK int sl_xfer_fetch_start(sl_xfer_client *c, sl_part_id part, void *buf, size_t cap, char *err,
                                      size_t errlen);

/**
 * @brief Takes in the chunks that have come, after waiting up to
 *        @p wait_ms for the first (0: not at all), and asks for more.
 * @return 0 once the partition is whole (its size in *len); SL_EAGAIN
 *        while chunks are still to come; else the fetch is over and failed:
 *        SL_ENOENT (the server does not have it), SL_EINVAL (it is larger
 *        than the buffer; its size in *len), SL_EPROTO (the server broke
 *        the protocol, or the destination refused the bytes), SL_EIO, SL_EINTR; what in @p err. SL_ESTATE
 *        when no fetch is under way.
 */
int sl_xfer_fetch_step(sl_xfer_client *c, int wait_ms, size_t *len, char *err, size_t errlen);

/** @brief Whether a fetch is under way. */
bool sl_xfer_fetching(const sl_xfer_client *c);

/**
 * @brief sl_xfer_fetch_start() and sl_xfer_fetch_step() until the fetch
 *        ends; SL_EIO also when no chunk came for the options' timeout_ms
 *        (the server or its node is gone, or the link is cut).
 */
SL_MUST_CHECK int sl_xfer_fetch(sl_xfer_client *c, sl_part_id part, void *buf, size_t cap, size_t *len,
                                char *err, size_t errlen);

/** @brief sl_xfer_fetch() into @p dest: sl_xfer_fetch_start_to() and
 *  sl_xfer_fetch_step() until the fetch ends, or the timeout. */
SL_MUST_CHECK int sl_xfer_fetch_to(sl_xfer_client *c, sl_part_id part, const sl_xfer_dest *dest, size_t *len,
                                   char *err, size_t errlen);

#endif
