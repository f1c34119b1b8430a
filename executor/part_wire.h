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
 * @brief Reads the @p len bytes at @p buf back into @p out (emptied
 *        first). Every record is checked: the payloads must follow each
 *        other as the header counts them.
 * @return 0; SL_EPROTO when the bytes are not a partition (why in
 *         @p err); SL_ENOMEM.
 */
SL_MUST_CHECK int sl_part_wire_decode(const void *buf, size_t len, sl_rows *out, char *err, size_t errlen);

#endif
