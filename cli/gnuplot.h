/**
 * @file gnuplot.h
 * @brief Drawing a figure with one of the gnuplot scripts in plots/.
 *
 * A script takes its parameters as gnuplot variables set with -e before it
 * runs (term, out, data...). gnuplot writes a hidden temporary beside the
 * final file, which is renamed only when gnuplot succeeded and left a
 * non-empty file: a failed drawing never leaves a figure that looks whole.
 */
#ifndef SL_CLI_GNUPLOT_H
#define SL_CLI_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>

/** @brief Appends `name='value'; ` to the -e expression @p e (quotes doubled). */
void sl_gnuplot_string(char *e, size_t n, const char *name, const char *value);

/**
 * @brief Finds plots/NAME under the source tree sluice was built from, else
 *        under the current directory; false when neither has it.
 */
bool sl_gnuplot_find_script(const char *name, char *out, size_t n);

/**
 * @brief Draws @p final (`png` or `svg` in @p term) with @p script and the
 *        variables in @p expr. Messages name @p cmd ("sluice CMD: ...").
 * @return 0; 1 when gnuplot is missing, fails or draws nothing.
 */
int sl_gnuplot_draw(const char *cmd, const char *expr, const char *term, const char *script,
                    const char *final);

#endif
