/**
 * @file report.h
 * @brief Console lines shared by `sluice run` and `sluice sim`.
 */
#ifndef SL_CLI_REPORT_H
#define SL_CLI_REPORT_H

#include <stdio.h>

#include "results/record.h"

/**
 * @brief Prints the store of the node that peaked beside that node's own
 *        budget, then, on a cluster of several groups, each group's peak
 *        and budget per node and which node peaked; and, when spilled
 *        bytes cost no time (a simulation without a spill disk), says so.
 */
void sl_cli_print_stores(FILE *f, const sl_summary *s);

/**
 * @brief Prints where the CPU (and GPU) capacity went: the share busy and
 *        the shares idle by reason, largest first, leaving out those under
 *        0.1%. Prints nothing for a class the cluster does not have.
 */
void sl_cli_print_idle(FILE *f, const sl_summary *s);

/** @brief "  cost  $X: ..." with what the nodes, the storage requests and
 *  the bytes held in storage cost apart; nothing when the run cost nothing
 *  (no prices in the cluster spec). */
void sl_cli_print_cost(FILE *f, const sl_summary *s);

#endif
