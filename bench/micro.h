/**
 * @file micro.h
 * @brief Micro-benchmarks shared by the bench programs and `sluice bench`:
 *        the executor's dispatch overhead, the simulator's speed, and a
 *        reference loop that wall-clock figures are divided by.
 *
 * A wall-clock figure alone says as much about the machine as about the
 * code. Divided by the time of a fixed reference loop run in the same
 * process a moment before, it becomes a ratio that moves when the code
 * moves and much less when the machine does.
 */
#ifndef SL_BENCH_MICRO_H
#define SL_BENCH_MICRO_H

#include <stdbool.h>
#include <stdint.h>

/** @brief Median of @p n values (sorts @p v). */
double sl_bench_median(double *v, int n);

/** @brief Seconds since an arbitrary origin (monotonic). */
double sl_bench_now(void);

/**
 * @brief Fastest wall seconds of the reference loop over @p runs runs: a
 *        fixed mix of integer arithmetic, small allocations and scattered
 *        memory writes on one thread, the kinds of work a scheduler does.
 */
double sl_bench_reference_s(int runs);

/**
 * @brief Executor dispatch: @p tasks no-op source tasks of one 16-byte row,
 *        each followed by a no-op map, on this machine's slots; median
 *        tasks per second of @p runs runs into @p tasks_per_s.
 * @return 0, or -1 with a message on stderr.
 */
int sl_bench_dispatch(int64_t tasks, int runs, bool verbose, double *tasks_per_s);

/**
 * @brief Simulator speed: a source of @p tasks 1-row tasks feeding a 1-row
 *        map on one simulated node of 16 CPU slots (2 tasks per row);
 *        median simulated tasks per wall second of @p runs runs.
 * @return 0, or -1 with a message on stderr.
 */
int sl_bench_sim_rate(int64_t tasks, int runs, bool verbose, double *tasks_per_s);

#endif
