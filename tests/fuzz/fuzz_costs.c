/*
 * Fuzz target: the cost-model reader (sim/costs.c, `sluice sim --costs
 * FILE`). The input is the cost file.
 *
 * Checks, besides crashes and leaks: an error is SL_EPARSE located as
 * FILE:LINE inside the input; a loaded model, written back as `sluice
 * calibrate` writes it, reads again into the same operators and values.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_io.h"
#include "models/error.h"
#include "sim/costs.h"

/* Two readings of one value agree: the writer prints nine significant digits. */
static bool same(double a, double b)
{
  return fabs(a - b) <= 1e-8 * fmax(fabs(a), fabs(b)) || fabs(a - b) < 1e-300;
}

/* The values a cost file written from @p a gives must be @p a's. */
static void check_same(const sl_sim_op_cost *a, const sl_sim_op_cost *b)
{
  if (strcmp(a->op, b->op) != 0)
    sl_fuzz_fail("an operator changed name on the way back", a->op);
  if (!same(a->time_per_task, b->time_per_task) || !same(a->time_per_row, b->time_per_row) ||
      !same(a->rows_out_per_row, b->rows_out_per_row) || !same(a->out_row_bytes, b->out_row_bytes) ||
      a->tasks_observed != b->tasks_observed)
    sl_fuzz_fail("a cost changed on the way back", a->op);
}

/* Writes @p c as calibrate does and reads it back. */
static void check_round_trip(const sl_sim_costs *c)
{
  static sl_sim_costs back; /* large: not on the stack */
  char path[SL_FUZZ_PATH_MAX], err[1024];
  sl_fuzz_path("written.ini", path, NULL);
  FILE *f = fopen(path, "w");
  if (!f)
    sl_fuzz_fail("cannot write a scratch file", path);
  if (sl_sim_costs_write(c, "fuzz", "fuzz", f) != 0)
    sl_fuzz_fail("sl_sim_costs_write failed", path);
  fclose(f);
  if (sl_sim_costs_load(path, &back, err, sizeof err) != 0)
    sl_fuzz_fail("a written cost model does not read back", err);
  if (back.n != c->n)
    sl_fuzz_fail("a written cost model reads back with another number of operators", err);
  for (int i = 0; i < c->n; i++)
    check_same(&c->ops[i], &back.ops[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static sl_sim_costs costs;
  char path[SL_FUZZ_PATH_MAX], err[1024];
  sl_fuzz_path("costs.ini", path, NULL);
  sl_fuzz_write(path, data, size);
  int rc = sl_sim_costs_load(path, &costs, err, sizeof err);
  if (rc == 0)
    check_round_trip(&costs);
  else if (rc == SL_EPARSE)
    sl_fuzz_check_located(err, path, data, size);
  else
    sl_fuzz_fail("unexpected return code", err);
  return 0;
}
