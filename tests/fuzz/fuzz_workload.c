/*
 * Fuzz target: the workload spec parser (workloads/spec_workload.c over inih, with
 * the unit parsers of workloads/units.c). The input is the spec file.
 *
 * Beyond "no crash, no leak, no undefined behaviour", it checks the
 * parser's promises: an error is SL_EPARSE located as FILE:LINE inside the
 * input; a success is a pipeline the plan can take (a source first, sane
 * numbers, terminated names, a row count that fits). Every command builds
 * the plan right after loading a spec, so the harness does too: what the
 * parser lets through must not break the plan.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_io.h"
#include "models/error.h"
#include "models/plan.h"
#include "models/workload.h"
#include "workloads/spec.h"

static void check_name(const char *name, size_t cap, const char *what)
{
  size_t len = strnlen(name, cap);
  if (len == 0 || len == cap)
    sl_fuzz_fail("an empty or unterminated name", what);
}

static void check_op(const sl_op_spec *op)
{
  check_name(op->name, sizeof op->name, "operator name");
  if (op->kind == SL_OP_SINK)
    return;
  check_name(op->kernel, sizeof op->kernel, "kernel name");
  const double v[] = {op->cpu, op->gpu, op->time_per_task, op->time_per_row, op->time_per_batch,
                      op->time_per_byte, op->time_spread, op->rows_out_per_row, op->out_row_bytes,
                      op->read_bytes_per_row};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (!isfinite(v[i]) || v[i] < 0)
      sl_fuzz_fail("a loaded operator has a negative or non-finite number", op->name);
  if (op->cpu + op->gpu <= 0 || op->nparams < 0 || op->nparams > SL_MAX_PARAMS)
    sl_fuzz_fail("a loaded operator has no resources or too many parameters", op->name);
  if (op->kind == SL_OP_SOURCE && (op->tasks < 1 || op->rows_per_task < 1))
    sl_fuzz_fail("a loaded source has no tasks or no rows", op->name);
}

static void check_workload(const sl_workload *w)
{
  if (w->nops < 1 || w->nops > SL_MAX_OPS || w->ops[0].kind != SL_OP_SOURCE)
    sl_fuzz_fail("a loaded workload is not a pipeline from a source", w->name);
  if (!(w->target_partition_bytes > 0) || !isfinite(w->target_partition_bytes))
    sl_fuzz_fail("a loaded workload has a bad target_partition", w->name);
  check_name(w->name, sizeof w->name, "workload name");
  for (int i = 0; i < w->nops; i++)
    check_op(&w->ops[i]);
  if (sl_workload_source_rows(w) < 1)
    sl_fuzz_fail("a loaded workload has no rows", w->name);
}

static void check_plan(const sl_workload *w)
{
  static sl_plan plan; /* large: not on the stack */
  char err[512];
  sl_plan_opts opts = {0};
  if (sl_plan_build(&plan, w, &opts, err, sizeof err) != 0)
    sl_fuzz_fail("a loaded workload has no plan", err);
  if (plan.nops < 1 || plan.source_rows < 1 || !isfinite(plan.sink_rows) || plan.sink_rows < 0)
    sl_fuzz_fail("a plan without operators or rows", w->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[SL_FUZZ_PATH_MAX], err[1024];
  sl_fuzz_path("workload.ini", path, NULL);
  sl_fuzz_write(path, data, size);
  sl_workload w;
  int rc = sl_workload_load(path, &w, err, sizeof err);
  if (rc == 0) {
    check_workload(&w);
    check_plan(&w);
  }
  else if (rc == SL_EPARSE)
    sl_fuzz_check_located(err, path, data, size);
  else if (rc != SL_ENOMEM)
    sl_fuzz_fail("unexpected return code", err);
  return 0;
}
