/**
 * @file part_wire.h
 * @brief A partition's rows as they cross the network between worker
 *        processes (transport/xfer.h): a header of 16 bytes (the row count
 *        and the payload bytes, little-endian u64s), the row records, and
 *        the payloads, each sent from the buffers the store holds, with no
 *        copy. The records are laid out as this build's sl_row: the head
 *        and the workers of a run are one build.
 */
#ifndef SL_EXEC_PART_WIRE_H
#define SL_EXEC_PART_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "transport/xfer.h"
#include "workloads/kernels.h"

#define SL_PART_WIRE_HEADER 16

/** @brief The buffers of a partition on the wire: @c hdr is its own. */
typedef struct {
  uint8_t hdr[SL_PART_WIRE_HEADER];
  sl_xfer_seg seg[3];
  int nsegs;
} sl_part_wire;

/** @brief Fills @p out with the buffers of @p rows (borrowed: they must
 *  stay as they are while @p out is served). */
void sl_part_wire_segs(const sl_rows *rows, sl_part_wire *out);

/** @brief Bytes @p rows take on the wire. */
size_t sl_part_wire_size(const sl_rows *rows);

/**
 * @brief A partition read back as its bytes arrive, in order and in
 *        pieces of any size (a fetch's chunks, an EMIT's frames), straight
 *        into the buffers of its rows: the one copy out of the network's.
 *        sl_part_wire_reader_init(), then sl_part_wire_reader_put() for
 *        each piece, then sl_part_wire_reader_end().
 */
typedef struct {
  sl_rows *out;
  uint8_t hdr[SL_PART_WIRE_HEADER];
  uint64_t total;            /**< bytes of the partition, said by the first piece */
  uint64_t got;              /**< bytes taken in */
  uint64_t count, bytes;     /**< rows and payload bytes, once the header is in */
  uint8_t *records, *payload; /**< where they go, in @c out */
} sl_part_wire_reader;

/** @brief A reader of the next partition into @p out, emptied now. */
void sl_part_wire_reader_init(sl_part_wire_reader *r, sl_rows *out);

/**
 * @brief Bytes [@p offset, @p offset + @p len) of a partition of @p total
 *        bytes; @p offset is the bytes taken in so far.
 * @return 0; SL_EPROTO when they cannot be a partition (why in @p err);
 *         SL_ENOMEM.
 */
SL_MUST_CHECK int sl_part_wire_reader_put(sl_part_wire_reader *r, uint64_t total, uint64_t offset,
                                          const void *data, size_t len, char *err, size_t errlen);

/**
 * @brief After the last piece: checks every record (the payloads must
 *        follow each other as the header counts them) and makes them the
 *        rows of the reader's @c out.
 * @return 0; SL_EPROTO (why in @p err), @c out then empty.
 */
SL_MUST_CHECK int sl_part_wire_reader_end(sl_part_wire_reader *r, char *err, size_t errlen);

#endif
