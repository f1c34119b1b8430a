/**
 * @file progress.h
 * @brief The progress line long commands print on a terminal: what runs,
 *        how many of how many, and about how long is left.
 *
 * Plain formatting: the caller decides whether stderr is a terminal (a
 * progress line has no place in a CI log) and writes the line after "\r"
 * and an erase-line sequence.
 */
#ifndef SL_PROGRESS_H
#define SL_PROGRESS_H

#include <stddef.h>

/**
 * @brief Seconds left after @p done of @p total steps in @p elapsed_s, at
 *        the pace so far; -1 before the first step ends (nothing to go by)
 *        or when the total is unknown (0).
 */
double sl_progress_left(double elapsed_s, int done, int total);

/**
 * @brief "CMD: step N of TOTAL: WHAT; E s elapsed, about L s left" into
 *        @p buf, N being @p done + 1 (the step about to run); no estimate
 *        while sl_progress_left() has none. Times past two minutes read in
 *        minutes ("3 min"). @p what is cut to fit @p n.
 */
void sl_progress_format(char *buf, size_t n, const char *cmd, int done, int total, const char *what,
                        double elapsed_s);

#endif
