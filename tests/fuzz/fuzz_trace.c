/*
 * Fuzz target: the trace reader behind `sluice calibrate RUN_DIR`
 * (sl_sim_calibrate in sim/costs.c), which reads RUN_DIR/tasks.csv. The
 * input is that tasks.csv, in a scratch run folder.
 *
 * Checks, besides crashes and leaks: an error is SL_EPARSE located as
 * FILE:LINE inside the input; a fitted model has finite, non-negative costs
 * and, written as calibrate writes it, reads back with sl_sim_costs_load():
 * what calibrate writes, `sluice sim --costs` must accept.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_io.h"
#include "models/error.h"
#include "sim/costs.h"

static void check_costs(const sl_sim_costs *c)
{
  if (c->n < 1 || c->n > SL_MAX_OPS)
    sl_fuzz_fail("a calibration without operators succeeded", c->path);
  for (int i = 0; i < c->n; i++) {
    const sl_sim_op_cost *o = &c->ops[i];
    const double v[] = {o->time_per_task, o->time_per_row, o->time_spread, o->rows_out_per_row,
                        o->out_row_bytes, o->rows_out_spread, o->out_row_bytes_spread};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
      if (!isfinite(v[k]) || v[k] < 0)
        sl_fuzz_fail("a fitted cost is negative or not finite", o->op);
  }
}

/* Writes @p c as `sluice calibrate` does and reads it as `sluice sim --costs` does. */
static void check_readable(const sl_sim_costs *c)
{
  static sl_sim_costs back; /* large: not on the stack */
  char path[SL_FUZZ_PATH_MAX], err[1024];
  sl_fuzz_path("costs.ini", path, NULL);
  FILE *f = fopen(path, "w");
  if (!f)
    sl_fuzz_fail("cannot write a scratch file", path);
  if (sl_sim_costs_write(c, c->path, "fuzz", f) != 0)
    sl_fuzz_fail("sl_sim_costs_write failed", path);
  fclose(f);
  if (sl_sim_costs_load(path, &back, err, sizeof err) != 0)
    sl_fuzz_fail("what calibrate writes, sim --costs cannot read", err);
  if (back.n != c->n)
    sl_fuzz_fail("a calibrated model reads back with another number of operators", err);
  for (int i = 0; i < c->n; i++)
    if (strcmp(back.ops[i].op, c->ops[i].op) != 0)
      sl_fuzz_fail("an operator changed name on the way back", c->ops[i].op);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static sl_sim_costs costs;
  char dir[SL_FUZZ_PATH_MAX], path[SL_FUZZ_PATH_MAX], err[1024], workload[64];
  sl_fuzz_path("tasks.csv", path, dir);
  sl_fuzz_write(path, data, size);
  int rc = sl_sim_calibrate(dir, &costs, workload, sizeof workload, err, sizeof err);
  if (rc == 0) {
    check_costs(&costs);
    check_readable(&costs);
  } else if (rc == SL_EPARSE) {
    sl_fuzz_check_located(err, path, data, size);
  } else if (rc != SL_ENOMEM) {
    sl_fuzz_fail("unexpected return code", err);
  }
  return 0;
}
