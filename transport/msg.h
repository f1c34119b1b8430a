/**
 * @file msg.h
 * @brief The messages between a head and its workers, and between workers
 *        fetching partitions from each other, as ZeroMQ multipart frames.
 *
 * A message is one header frame and, for a few kinds, more frames: strings,
 * the table of a LAUNCH's inputs, a CHUNK's payload. The header starts with
 * an envelope of 16 bytes:
 *
 *     offset  size  field
 *          0     2  magic "SL"
 *          2     1  version (SL_MSG_VERSION)
 *          3     1  kind (sl_msg_kind)
 *          4     4  node: the sender's node (a worker) or the addressee's (the head); -1 for none yet
 *          8     8  incarnation of that node: a message of another incarnation is stale
 *
 * then the kind's fields, back to back with no padding. Every integer is
 * little-endian; a double is its IEEE 754 binary64 bits as a little-endian
 * 64-bit integer; a boolean is a bit of a flags word. The layout of each
 * kind is given where its struct is declared below, and the header's size
 * must be exactly that of its kind.
 *
 * The decoder is strict: a frame of the wrong size, a missing or extra
 * frame, an unknown kind or version, a flag bit or enum value no sender
 * writes, a string too long or with a NUL byte, all fail with SL_EPROTO
 * and a message that says what is wrong. What it accepts encodes back to
 * the same frames, byte for byte.
 *
 * Pure: no socket, no allocation except a LAUNCH's input table (see
 * sl_msg_free()). transport/wire.h sends and receives these over ZeroMQ.
 */
#ifndef SL_TRANSPORT_MSG_H
#define SL_TRANSPORT_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/core.h"
#include "models/error.h"

/** @brief The version every header carries; a header of another is refused.
 *  2: LOSE added (a head and its workers must be one build). 3: an EMIT
 *  may end its attempt and go unanswered. */
#define SL_MSG_VERSION 3

/** @brief Bytes of the envelope that starts every header. */
#define SL_MSG_ENVELOPE 16

/** @brief Longest worker name, NUL excluded. */
#define SL_MSG_NAME_MAX 64

/** @brief Longest endpoint ("tcp://host:port"), NUL excluded. */
#define SL_MSG_ENDPOINT_MAX 255

/** @brief Most inputs a LAUNCH may carry. */
#define SL_MSG_MAX_INPUTS (1 << 24)

/** @brief Most payload frames of a CHUNK (one per buffer it spans). */
#define SL_MSG_MAX_PAYLOAD 8

/** @brief Most payload frames of an EMIT (an output for the sink). */
#define SL_MSG_EMIT_MAX_PAYLOAD 3

/** @brief Most frames of any message. */
#define SL_MSG_MAX_FRAMES (1 + SL_MSG_MAX_PAYLOAD)

/** @brief Largest header of any kind (a LAUNCH's). */
#define SL_MSG_HEAD_MAX (SL_MSG_ENVELOPE + 160)

/** @brief Bytes of one input in a LAUNCH's input table. */
#define SL_MSG_INPUT_BYTES 28

typedef enum {
  SL_MSG_HELLO = 1, /**< worker -> head: I am here (name, slots, store budget, data endpoint) */
  SL_MSG_WELCOME,   /**< head -> worker: your node index and incarnation, and the liveness timings */
  SL_MSG_PEER,      /**< head -> worker: where another node serves its partitions */
  SL_MSG_LAUNCH,    /**< head -> worker: a work order (a LAUNCH decision, whole) */
  SL_MSG_EMIT,      /**< worker -> head: an output partition is ready; head -> worker: its fate */
  SL_MSG_FINISHED,  /**< worker -> head: the task emitted everything and ended */
  SL_MSG_FAILED,    /**< worker -> head: the task failed */
  SL_MSG_HEARTBEAT, /**< either way: still alive */
  SL_MSG_CANCEL,    /**< head -> worker: stop the task (the core's CANCEL contract) */
  SL_MSG_RESUME,    /**< head -> worker: retry the emission the head held */
  SL_MSG_DROP,      /**< head -> worker: free a partition's bytes */
  SL_MSG_BYE,       /**< either way: leaving, with a reason */
  SL_MSG_FETCH,     /**< worker -> worker: send chunks of a partition */
  SL_MSG_CHUNK,     /**< worker -> worker: a chunk of a partition, or why there is none */
  SL_MSG_PLAN,      /**< head -> worker: the run's command line, to build the same plan from */
  SL_MSG_LOSE,      /**< head -> worker: end your process with this signal, as a machine lost would */
  SL_MSG_NKINDS
} sl_msg_kind;

/** @brief What the head made of an EMIT: the worker's own EMIT says ASK. */
typedef enum {
  SL_MSG_FATE_ASK,       /**< worker -> head: where does it go? */
  SL_MSG_FATE_STORED,    /**< keep it in the store (sl_emit_fate's STORED) */
  SL_MSG_FATE_SPILLED,   /**< write it to local disk */
  SL_MSG_FATE_DISCARDED, /**< a re-run made it again: free it */
  SL_MSG_FATE_HOLD,      /**< keep the bytes and send the EMIT again after a RESUME */
  SL_MSG_FATE_GONE,      /**< the attempt is written off (or the run is failing): free the bytes, stop */
  SL_MSG_FATE_NKINDS
} sl_msg_fate;

/** @brief A CHUNK that ends its partition. */
#define SL_MSG_CHUNK_LAST 1u

/** @brief A borrowed frame: @c len bytes at @c data. */
typedef struct {
  const void *data;
  size_t len;
} sl_msg_part;

/**
 * @brief HELLO. Fields: cpu_slots u32, gpu_slots u32, store_budget u64;
 *        frames: name, then endpoint. The envelope's node is the node the
 *        worker was started for (-1: any) and its incarnation the worker's
 *        own (the head may give it another in WELCOME).
 */
typedef struct {
  uint32_t cpu_slots, gpu_slots;
  uint64_t store_budget;                  /**< bytes its store may hold */
  char name[SL_MSG_NAME_MAX + 1];         /**< 1 to SL_MSG_NAME_MAX bytes, no NUL */
  char endpoint[SL_MSG_ENDPOINT_MAX + 1]; /**< where it serves partitions; 1 byte at least */
} sl_msg_hello;

/** @brief WELCOME. Fields: heartbeat_ms u32, timeout_ms u32. The envelope
 *  holds the node index and incarnation the head gave the worker. */
typedef struct {
  uint32_t heartbeat_ms; /**< send something at least this often */
  uint32_t timeout_ms;   /**< silence after which the other side is taken for lost */
} sl_msg_welcome;

/** @brief PEER. Fields: node i32, incarnation u64; frame: endpoint. */
typedef struct {
  int32_t node;
  uint64_t incarnation;
  char endpoint[SL_MSG_ENDPOINT_MAX + 1];
} sl_msg_peer;

/** @brief An EMIT that ends its attempt: @c end is the attempt's FINISHED.
 *  The head finishes the attempt once its core takes the output to store
 *  or discard, and no FINISHED follows; one held (fate HOLD) is sent again,
 *  still ending; one to spill is written first, and a FINISHED follows, as
 *  without the flag. */
#define SL_MSG_EMIT_ENDS 1u

/** @brief An EMIT whose worker waits for no answer, and the head sends
 *  none: an output for the sink, whose bytes come with it and which the
 *  core takes as it comes (it never holds one). */
#define SL_MSG_EMIT_UNANSWERED 2u

/** @brief Whether an ENDS output that the core took with fate @p f ended
 *  its attempt: a spilled one is written first, and its FINISHED follows.
 *  The one rule the head and its workers both apply. */
static inline bool sl_msg_emit_ended(sl_emit_fate f)
{
  return f != SL_EMIT_SPILLED;
}

/**
 * @brief FINISHED. Fields: task u32, parts_out u32, flags u32 (bit
 *        SL_MSG_FINISHED_REAL: a kernel of the worker took its own time,
 *        not the order's charge), rows_out i64, then f64s: bytes_out,
 *        run_s (from the worker taking the order to its end), waited_s
 *        (held by backpressure), transfer_s and transfer_bytes (its inputs
 *        from storage and other nodes), spill_write_s, spill_write_bytes,
 *        spill_read_s, spill_read_bytes, spread (the order's, or 1 for a
 *        kernel that takes its own time). What the head writes to
 *        tasks.csv.
 */
typedef struct {
  sl_task_id task;
  uint32_t parts_out;
  uint32_t flags;
  int64_t rows_out;
  double bytes_out, run_s, waited_s, transfer_s, transfer_bytes;
  double spill_write_s, spill_write_bytes, spill_read_s, spill_read_bytes, spread;
} sl_msg_finished;

/** @brief A FINISHED whose worker ran a kernel that takes its own time. */
#define SL_MSG_FINISHED_REAL 1u

/**
 * @brief EMIT. Fields: task u32, index u32, rows i64, bytes f64, part u32,
 *        fate i32, flags u32, then a FINISHED's fields (@c end). From a
 *        worker: output @c index (from 1) of @c task, part SL_NONE, fate
 *        ASK. The head answers with the same message, the partition's id
 *        and its fate, flags 0 and @c end zero. An output of the last
 *        operator goes to the head's sink as it is emitted, so its ASK
 *        carries its bytes (executor/part_wire.h) in up to
 *        SL_MSG_EMIT_MAX_PAYLOAD frames, which may be empty, and is
 *        UNANSWERED. The last output of an attempt that ends with it ENDS
 *        the attempt, @c end then saying what its FINISHED would (its task
 *        that of the EMIT); without ENDS @c end is zero. With both, a task
 *        whose one output goes to the sink costs two messages, its LAUNCH
 *        and this EMIT, where it cost four (an answer and a FINISHED).
 */
typedef struct {
  sl_task_id task;
  uint32_t index;
  int64_t rows;
  double bytes;
  sl_part_id part;
  sl_msg_fate fate;
  uint32_t flags;                               /**< SL_MSG_EMIT_ENDS, SL_MSG_EMIT_UNANSWERED */
  sl_msg_finished end;                          /**< with SL_MSG_EMIT_ENDS, the attempt's end */
  int npayload;                                 /**< frames after the header: 0, or with fate ASK up to
                                                     SL_MSG_EMIT_MAX_PAYLOAD */
  sl_msg_part payload[SL_MSG_EMIT_MAX_PAYLOAD]; /**< borrowed: from the frames decoded, or the sender's */
} sl_msg_emit;

/** @brief CANCEL, RESUME. Field: task u32. */
typedef struct {
  sl_task_id task;
} sl_msg_task;

/** @brief Longest reason a FAILED carries, NUL excluded. */
#define SL_MSG_WHY_MAX 512

/** @brief FAILED. Fields: task u32, op i32, node i32, code i32 (a negative
 *  code of models/error.h; SL_EINTR: the attempt stopped as told, any
 *  other: the run cannot go on); frame: why, 1 to SL_MSG_WHY_MAX bytes.
 *  A failure of the worker itself, in no task, names task SL_NONE. */
typedef struct {
  sl_task_id task;
  int32_t op, node, code;
  char why[SL_MSG_WHY_MAX + 1];
} sl_msg_failed;

/** @brief Longest working directory a PLAN carries, NUL excluded. */
#define SL_MSG_PATH_MAX 1024

/** @brief Most bytes of a PLAN's arguments, their NULs included. */
#define SL_MSG_ARGS_MAX 65536

/** @brief Most arguments of a PLAN. */
#define SL_MSG_ARGC_MAX 256

/**
 * @brief PLAN. Fields: slots u32 (slots the worker's node runs), argc u32;
 *        frames: the head's working directory, then its @c argc arguments
 *        after `sluice run`, each ended by a NUL, back to back. The worker
 *        builds the run's plan from them, as the head did.
 */
typedef struct {
  uint32_t slots;
  uint32_t argc;
  char cwd[SL_MSG_PATH_MAX + 1];
  const char *args; /**< borrowed: from the frame decoded, or the sender's */
  size_t args_len;
} sl_msg_plan;

/** @brief HEARTBEAT. Field: seq u64, counting the sender's heartbeats. */
typedef struct {
  uint64_t seq;
} sl_msg_heartbeat;

/** @brief BYE. Field: code i32, 0 for a normal end, else why. */
typedef struct {
  int32_t code;
} sl_msg_bye;

/** @brief LOSE. Field: signal i32, SIGKILL (the process dies) or SIGSTOP
 *  (it stops answering until someone continues it). A lose fault of a head
 *  that did not start the process itself (--launch none, slurm): the
 *  worker takes the signal from its own hand, and the head learns of the
 *  loss as of any other, from the silence past the node timeout. */
typedef struct {
  int32_t signal;
} sl_msg_lose;

/** @brief DROP. Fields: part u32, op i32, bytes f64. (An output for the
 *  sink needs none: it travels with its EMIT, and its worker keeps no copy.) */
typedef struct {
  sl_part_id part;
  int32_t op;
  double bytes;
} sl_msg_part_order;

/**
 * @brief FETCH. Fields: part u32, tag u32, offset u64, credit u32,
 *        chunk_bytes u32. Asks for up to @c credit chunks of @c chunk_bytes
 *        of partition @c part from byte @c offset on (the last may be
 *        shorter); the CHUNKs carry @c tag back. credit and chunk_bytes are
 *        at least 1.
 */
typedef struct {
  sl_part_id part;
  uint32_t tag;
  uint64_t offset;
  uint32_t credit;
  uint32_t chunk_bytes;
} sl_msg_fetch;

/**
 * @brief CHUNK. Fields: part u32, tag u32, status i32, flags u32, offset
 *        u64, total u64, len u64; then one payload frame per buffer the
 *        chunk spans, none empty, whose sizes sum to @c len. status 0:
 *        bytes [offset, offset + len) of a partition of @c total bytes,
 *        SL_MSG_CHUNK_LAST exactly when they reach its end. status < 0:
 *        the partition cannot be served (SL_ENOENT: not here), with no
 *        payload, offset, total or flags.
 */
typedef struct {
  sl_part_id part;
  uint32_t tag;
  int32_t status;
  uint32_t flags;
  uint64_t offset, total, len;
  int npayload;                              /**< payload frames */
  sl_msg_part payload[SL_MSG_MAX_PAYLOAD];   /**< borrowed: from the frames decoded, or the sender's */
} sl_msg_chunk;

/**
 * @brief A message. Set @c kind, the envelope and the member of @c u the
 *        kind names. Caller-allocated: sl_msg_init() before the first
 *        decode, sl_msg_free() after the last.
 */
typedef struct {
  sl_msg_kind kind;
  int32_t node;
  uint64_t incarnation;
  union {
    sl_msg_hello hello;
    sl_msg_welcome welcome;
    sl_msg_peer peer;
    sl_decision launch; /**< a LAUNCH decision's fields (kind, part, keep_split, code, stalled_s
                             and delay_s are not sent); in and inputs: see sl_msg_decode() */
    sl_msg_emit emit;
    sl_msg_task task;   /**< CANCEL, RESUME */
    sl_msg_finished finished;
    sl_msg_failed failed;
    sl_msg_heartbeat heartbeat;
    sl_msg_bye bye;
    sl_msg_lose lose;
    sl_msg_part_order part; /**< DROP */
    sl_msg_fetch fetch;
    sl_msg_chunk chunk;
    sl_msg_plan plan;
  } u;
  /* A decoded LAUNCH's inputs live here; private. */
  sl_input *in_store;
  sl_part_id *parts_store;
  size_t in_cap;
} sl_msg;

/** @brief Makes @p m empty; allocates nothing. */
void sl_msg_init(sl_msg *m);

/** @brief Frees what decoding LAUNCHes into @p m allocated; @p m is then
 *  as after sl_msg_init(). */
void sl_msg_free(sl_msg *m);

/**
 * @brief Makes @p m a LAUNCH of decision @p d (kind SL_DEC_LAUNCH), to
 *        @p d's node with incarnation @p incarnation. Borrows @p d->in:
 *        encode before the core's next decision or event.
 */
void sl_msg_set_launch(sl_msg *m, const sl_decision *d, uint64_t incarnation);

/** @brief The frames of an encoded message: its header, and frames that
 *  point into @c table or into the message encoded (never at NULL, even
 *  when empty). Caller-allocated:
 *  zero it (or = {0}) before the first use, sl_msg_frames_free() after. */
typedef struct {
  uint8_t head[SL_MSG_HEAD_MAX];
  uint8_t *table; /**< a LAUNCH's input table, grown as needed */
  size_t table_cap;
  sl_msg_part part[SL_MSG_MAX_FRAMES];
  int nparts;
} sl_msg_frames;

void sl_msg_frames_free(sl_msg_frames *f);

/**
 * @brief Encodes @p m into @p out. The frames borrow from @p m (strings, a
 *        CHUNK's payload) and from @p out: send them before either changes.
 *        Empty payload parts of a CHUNK are left out. SL_EINVAL (message in
 *        @p err) when @p m cannot be decoded back (a string too long, a
 *        CHUNK whose len is not its payload's, ...); SL_ENOMEM.
 */
SL_MUST_CHECK int sl_msg_encode(const sl_msg *m, sl_msg_frames *out, char *err, size_t errlen);

/**
 * @brief Decodes the @p nparts frames at @p parts into @p m. A LAUNCH's
 *        u.launch.in and u.launch.inputs point into @p m (valid until its
 *        next decode or sl_msg_free()); a CHUNK's payload points into
 *        @p parts (valid as long as they are). 0; SL_EPROTO with what is
 *        wrong in @p err (@p m then holds nothing of use); SL_ENOMEM.
 */
SL_MUST_CHECK int sl_msg_decode(const sl_msg_part *parts, int nparts, sl_msg *m, char *err, size_t errlen);

/** @brief The name of @p k ("hello", ...); NULL for no kind. */
const char *sl_msg_kind_name(sl_msg_kind k);

/* Internal to transport/: formats a message into @p err (when not NULL)
 * and returns @p code, so that a failure reads `return sl__msg_fail(...)`. */
int sl__msg_fail(int code, char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
