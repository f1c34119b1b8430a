/**
 * @file events.h
 * @brief The events an engine fed its core, written to a file and replayed
 *        through a core alone: the proof that the engines decide nothing
 *        themselves. Replaying a run's events must give the decision hash
 *        the run ended with.
 *
 * The file is text, one event a line ("KIND NOW TASK ROWS BYTES NODE",
 * times and bytes as C99 hexadecimal floats, so they read back exactly),
 * then "decisions HASH". Written under a temporary name and renamed.
 */
#ifndef SL_EVENTS_H
#define SL_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "models/error.h"

#include "models/core.h"

typedef struct sl_event_log_s sl_event_log;

/** @brief An empty log; NULL when out of memory. Free with sl_event_log_free(). */
sl_event_log *sl_event_log_new(void);
void sl_event_log_free(sl_event_log *log);

/** @brief An sl_event_fn that appends to the log given as @p ctx (for
 *  sl_core_observe()). A log that ran out of memory says so when written. */
void sl_event_log_observe(void *ctx, const sl_event *ev);

/** @brief Events recorded so far. */
int64_t sl_event_log_count(const sl_event_log *log);

/** @brief Writes the log and @p decision_hash to @p path. 0, SL_ENOMEM (the
 *  log is incomplete) or SL_EIO, with a message in @p err. */
SL_MUST_CHECK int sl_event_log_write(const sl_event_log *log, const char *path, uint64_t decision_hash, char *err, size_t errlen);

/**
 * @brief Feeds the events of @p path to @p core (new, not started) in order.
 * @param recorded  out: the hash the file ends with
 * @param replayed  out: the core's hash after the last event
 * @param nevents   out: events replayed
 * @return 0; SL_EIO (cannot read) or SL_EPARSE ("FILE:LINE: what") in @p err.
 */
int sl_event_log_replay(const char *path, sl_core *core, uint64_t *recorded, uint64_t *replayed, int64_t *nevents,
                        char *err, size_t errlen);

#endif
