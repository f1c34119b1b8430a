/*
 * Fuzz target: the decoder of the messages between a head and its workers
 * and between workers (sl_msg_decode in transport/msg.c), which reads
 * whatever a peer, or anything else that reaches a port, sends. The input
 * is a message's frames, each a 16-bit little-endian length and that many
 * bytes (the last frame takes what is left when its length runs past the
 * end). Each frame gets a buffer of exactly its size, so that a sanitized
 * build sees a read past one.
 *
 * Checks, besides crashes, leaks and undefined behaviour: a refusal is
 * SL_EPROTO with a message; what decodes encodes back to the same frames,
 * byte for byte (the decoder accepts one spelling of each message, so two
 * peers can never read one message two ways).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_io.h"
#include "transport/msg.h"

/* A few frames past the most a message has: the decoder must refuse those. */
enum { MAX_FRAMES = SL_MSG_MAX_FRAMES + 2 };

static void check_encodes_back(const sl_msg *m, const sl_msg_part *parts, int n)
{
  sl_msg_frames w = {0};
  char err[256];
  if (sl_msg_encode(m, &w, err, sizeof err) != 0)
    sl_fuzz_fail("a decoded message does not encode", err);
  if (w.nparts != n)
    sl_fuzz_fail("a decoded message encodes to another number of frames", sl_msg_kind_name(m->kind));
  for (int i = 0; i < n; i++)
    if (w.part[i].len != parts[i].len ||
        (parts[i].len && memcmp(w.part[i].data, parts[i].data, parts[i].len) != 0))
      sl_fuzz_fail("a decoded message encodes to other bytes", sl_msg_kind_name(m->kind));
  sl_msg_frames_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  sl_msg_part parts[MAX_FRAMES];
  uint8_t *own[MAX_FRAMES];
  int n = 0;
  while (size >= 2 && n < MAX_FRAMES) {
    size_t len = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2;
    size -= 2;
    if (len > size)
      len = size;
    own[n] = malloc(len ? len : 1);
    if (!own[n])
      abort();
    memcpy(own[n], data, len);
    parts[n] = (sl_msg_part){own[n], len};
    n++;
    data += len;
    size -= len;
  }
  sl_msg m;
  sl_msg_init(&m);
  char err[256] = "";
  int rc = sl_msg_decode(parts, n, &m, err, sizeof err);
  if (getenv("SL_FUZZ_VERBOSE"))
    fprintf(stderr, "%d frames: %s\n", n, rc ? err : sl_msg_kind_name(m.kind));
  if (rc == 0)
    check_encodes_back(&m, parts, n);
  else if (rc != SL_EPROTO && rc != SL_ENOMEM)
    sl_fuzz_fail("a refusal that is not SL_EPROTO", err);
  else if (err[0] == '\0')
    sl_fuzz_fail("a refusal without a message", "(empty)");
  sl_msg_free(&m);
  for (int i = 0; i < n; i++)
    free(own[i]);
  return 0;
}
