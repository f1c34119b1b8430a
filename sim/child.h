/**
 * @file child.h
 * @brief Running a piece of work in a child process and getting its result
 *        back.
 *
 * SimGrid keeps global state: one process runs one simulation, and its
 * teardown of thousands of actors is slow. So every simulation runs in a
 * forked child that sends its result, a plain struct, back through a pipe
 * and exits at once; the parent (the CLI, the bench, capacity searches)
 * can run as many simulations as it likes, one after the other, and
 * survives a child that crashes.
 */
#ifndef SL_SIM_CHILD_H
#define SL_SIM_CHILD_H

#include <stddef.h>

#include "models/error.h"

/** @brief The work: fills @p result (@c size bytes, zeroed) in the child. */
typedef void (*sl_sim_child_fn)(void *ctx, void *result);

/**
 * @brief Runs @p fn(@p ctx, result) in a forked child and copies its @p size
 *        bytes of result into @p result. The result must hold no pointers.
 *        Returns 0; or SL_EIO, with @p result zeroed and @p err saying why
 *        (no pipe, no fork, or a child that died or exited before its
 *        result was whole).
 */
SL_MUST_CHECK int sl_sim_child_run(sl_sim_child_fn fn, void *ctx, void *result, size_t size, char *err,
                                   size_t errlen);

#endif
