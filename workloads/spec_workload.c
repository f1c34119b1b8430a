/*
 * The workload spec reader: the keys of [workload] and of an operator's
 * section (their types, units, defaults and the kinds of operator that
 * take them), and the reader that turns a file into an sl_workload,
 * checking each operator's keys, kernel and costs once its section is
 * complete, then the pipeline as a whole. Apart from the cluster reader
 * (spec_cluster.c), which shares only helpers with it; the reference
 * (spec_reference.c) is written from the tables here.
 */
#include "spec.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_registry.h"
#include "models/reorder.h"
#include "models/error.h"
#include "spec_internal.h"
#include "typed_ini.h"
#include "units.h"

#define SL__PARAM_VALUE_MAX 64

static void sl__warn(sl_spec_warnings *warn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sl__warn(sl_spec_warnings *warn, const char *fmt, ...)
{
  va_list ap;
  if (!warn || warn->n == SL_SPEC_MAX_WARNINGS)
    return;
  va_start(ap, fmt);
  vsnprintf(warn->text[warn->n++], sizeof warn->text[0], fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* The keys of a workload spec                                               */
/* ------------------------------------------------------------------------ */

#define SL__K(kind) (1u << (kind))
#define SL__SOURCE SL__K(SL_OP_SOURCE)
#define SL__TRANSFORMS (SL__K(SL_OP_MAP) | SL__K(SL_OP_MAP_BATCHES) | SL__K(SL_OP_ALL_TO_ALL))
#define SL__TASKS (SL__SOURCE | SL__TRANSFORMS)
#define SL__MAPS (SL__K(SL_OP_MAP) | SL__K(SL_OP_MAP_BATCHES))
#define SL__ANY_KIND (SL__TASKS | SL__K(SL_OP_SINK))
#define SL__WL(field) offsetof(sl_workload, field)
#define SL__OP(field) offsetof(sl_op_spec, field)

_Static_assert(sizeof(sl_op_kind) == sizeof(int), "a CHOICE key stores an int");

/* In the order of sl_op_kind: the index is the kind. */
const char *const sl__kind_names[] = {"source", "map", "map_batches", "all_to_all", "sink", NULL};
static const char *const sl__check_names[] = {"none", "sorted", "grouped", NULL};
static const char *const sl__read_from_names[] = {"storage", "disk", NULL};
static const char *const sl__write_to_names[] = {"none", "disk", "storage", NULL};
static const char *const sl__outputs_names[] = {"as_made", "at_end", NULL};
/* In the order of sl_shuffle_strategy */
static const char *const sl__strategy_names[] = {"simple", "merge", "push", "push-star", NULL};

const sl_ini_key sl__workload_keys[] = {
  {.name = "name", .type = SL_INI_NAME, .offset = SL__WL(name), .size = SL_NAME_MAX,
   .dflt_doc = "the file's name, without folder and extension",
   .doc = "the workload's name in outputs and run folders"},
  {.name = "description", .type = SL_INI_TEXT, .doc = "free text for readers; ignored"},
  {.name = "target_partition", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS,
   .offset = SL__WL(target_partition_bytes), .dflt = "128MB",
   .doc = "a task flushes an output partition each time its buffer passes this size "
          "(dynamic partitioning; Ray Data's default block size)"},
  {.name = "seed", .type = SL_INI_INT64, .range = SL_INI_NONNEG, .offset = SL__WL(seed), .dflt = "1",
   .doc = "seeds row contents and the draws of task times (`sluice sim --seed` overrides it)"},
  {.name = NULL},
};

const sl_ini_key sl__op_keys[] = {
  {.name = "kind", .type = SL_INI_CHOICE, .choices = sl__kind_names, .offset = SL__OP(kind),
   .required = SL__ANY_KIND,
   .doc = "what the operator does: a source makes rows, a map transforms each row, map_batches "
          "transforms batches on an actor pool, all_to_all needs every input before any output "
          "(a shuffle), a sink consumes rows"},
  {.name = "kernel", .type = SL_INI_NAME, .kinds = SL__TASKS, .offset = SL__OP(kernel),
   .size = SL_NAME_MAX, .dflt_doc = "generate for a source, sleep for the others",
   .doc = "the code a task runs (see Kernels); the cost keys below time it"},
  {.name = "accelerator", .type = SL_INI_LABELS, .kinds = SL__TASKS, .dflt_doc = "any node",
   .doc = "runs only on nodes of groups whose `accelerator` is one of these labels (`a10g, a100`)"},
  {.name = "cpu", .type = SL_INI_REAL, .unit = "slots", .range = SL_INI_NONNEG, .kinds = SL__TASKS,
   .offset = SL__OP(cpu), .dflt_doc = "1, or 0 when gpu is set",
   .doc = "CPU slots a task holds (fractions allowed)"},
  {.name = "gpu", .type = SL_INI_REAL, .unit = "slots", .range = SL_INI_NONNEG, .kinds = SL__TASKS,
   .offset = SL__OP(gpu), .dflt = "0",
   .doc = "GPU slots a task holds (fractions allowed); a task with a GPU is timed at the node's gpu_speed"},
  {.name = "time_per_task", .type = SL_INI_TIME, .unit = "s per task", .range = SL_INI_NONNEG,
   .kinds = SL__TASKS, .offset = SL__OP(time_per_task), .dflt = "0s",
   .doc = "fixed cost of a task at speed 1 (start-up, a request)"},
  {.name = "time_per_row", .type = SL_INI_TIME, .unit = "s per row", .range = SL_INI_NONNEG,
   .kinds = SL__TASKS, .offset = SL__OP(time_per_row), .dflt = "0s",
   .doc = "cost of each input row at speed 1 (for a source, each row it reads)"},
  {.name = "time_per_batch", .type = SL_INI_TIME, .unit = "s per batch", .range = SL_INI_NONNEG,
   .kinds = SL__TRANSFORMS, .offset = SL__OP(time_per_batch), .dflt = "0s",
   .doc = "cost of each batch of batch_size rows at speed 1; needs batch_size"},
  {.name = "time_setup", .type = SL_INI_TIME, .unit = "s per slot", .range = SL_INI_NONNEG,
   .kinds = SL__TASKS, .offset = SL__OP(time_setup), .dflt = "0s",
   .doc = "set-up a slot pays before its first task of this operator, at speed 1 (loading a model, "
          "a CUDA context): charged once per slot, and again on a node that rejoins"},
  /* per MB of input in the spec, per byte in the model */
  {.name = "time_per_mb", .type = SL_INI_TIME, .unit = "s per MB", .range = SL_INI_NONNEG,
   .kinds = SL__TASKS, .offset = SL__OP(time_per_byte), .scale = 1e-6, .dflt = "0s",
   .doc = "cost of each MB of input at speed 1 (for a source, of read_bytes_per_row)"},
  {.name = "time_spread", .type = SL_INI_REAL, .range = SL_INI_NONNEG, .kinds = SL__TASKS,
   .offset = SL__OP(time_spread), .dflt = "0",
   .doc = "coefficient of variation of a task's time; each task's factor is drawn from its data, the same in every engine and retry"},
  {.name = "rows_out_per_row", .type = SL_INI_REAL, .unit = "rows", .range = SL_INI_POS,
   .kinds = SL__TRANSFORMS, .offset = SL__OP(rows_out_per_row), .dflt = "1",
   .doc = "output rows per input row: K > 1 expands, 1/K keeps one row in K"},
  {.name = "out_row_bytes", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS,
   .kinds = SL__TRANSFORMS, .offset = SL__OP(out_row_bytes), .dflt_doc = "the input row's size",
   .doc = "size of one output row"},
  {.name = "inflation", .type = SL_INI_REAL, .range = SL_INI_POS, .kinds = SL__MAPS,
   .offset = SL__OP(inflation), .dflt_doc = "none: out_row_bytes decides",
   .doc = "bytes of an output row per byte of its input row (a crop to half the width and height: "
          "0.25; uint8 pixels to float32: 4); the output follows the input's size wherever the "
          "operator runs, which a reorder group needs; not with out_row_bytes"},
  {.name = "reorder_group", .type = SL_INI_NAME, .kinds = SL__MAPS, .offset = SL__OP(reorder_group),
   .size = SL_NAME_MAX, .dflt_doc = "none",
   .doc = "operators next to each other with the same group name may run in any order; "
          "`--auto-order` picks the order with the best bound (`sluice plan --auto-order` shows why)"},
  {.name = "outputs", .type = SL_INI_CHOICE, .choices = sl__outputs_names, .kinds = SL__TRANSFORMS,
   .offset = SL__OP(outputs_at_end), .dflt_doc = "at_end for a kernel that needs its whole task (sort_records), "
   "else as_made", .doc = "when a task's output partitions appear: as it makes them, or all when it ends (a "
   "sort's, which has every row only once it has read them all); the simulator emits them so"},
  {.name = "read_from", .type = SL_INI_CHOICE, .choices = sl__read_from_names, .kinds = SL__SOURCE,
   .offset = SL__OP(read_from_disk), .dflt = "storage",
   .doc = "where read_bytes_per_row come from: `storage`, over the cluster's storage link and the node's NIC; "
          "`disk`, off the disks of the node that runs the task (input laid out on the nodes, as a sort's is)"},
  {.name = "write_to", .type = SL_INI_CHOICE, .choices = sl__write_to_names, .kinds = SL__K(SL_OP_SINK),
   .offset = SL__OP(write_to), .dflt = "none",
   .doc = "`disk`: each partition the sink takes is first written to the disks of the node that made it (a sort's "
          "output); `storage`: uploaded over the node's NIC and the cluster's storage link, in PUTs of "
          "storage_put_size; either way the task that made it goes on once it is written"},
  {.name = "check", .type = SL_INI_CHOICE, .choices = sl__check_names, .kinds = SL__K(SL_OP_SINK),
   .offset = SL__OP(check), .dflt = "none",
   .doc = "what a real run proves of its output: `sorted` checks like valsort that every partition is sorted "
          "by its 10-byte key, that partitions do not overlap, and that the records are the source's "
          "(gensort's), each once; `grouped` checks a groupby's output: one row per group, whose count, sum, "
          "min and max of record numbers are those the source's records (gensort's) give it"},
  {.name = "keep_position", .type = SL_INI_CHOICE, .choices = sl__bool_names, .kinds = SL__MAPS,
   .offset = SL__OP(keep_position), .dflt = "false",
   .doc = "true: the operator keeps its place in its reorder group while the others move around it"},
  {.name = "batch_size", .type = SL_INI_INT, .unit = "rows", .range = SL_INI_ONE,
   .kinds = SL__TRANSFORMS, .offset = SL__OP(batch_size), .dflt_doc = "none",
   .doc = "rows per batch, for time_per_batch"},
  {.name = "concurrency", .type = SL_INI_INT, .unit = "tasks", .range = SL_INI_ONE, .kinds = SL__TASKS,
   .offset = SL__OP(concurrency), .dflt_doc = "unlimited", .doc = "most tasks of the operator at once"},
  {.name = "tasks", .type = SL_INI_INT64, .unit = "tasks", .range = SL_INI_ONE,
   .kinds = SL__SOURCE | SL__K(SL_OP_ALL_TO_ALL), .required = SL__SOURCE, .offset = SL__OP(tasks),
   .dflt_doc = "1 (all_to_all)",
   .doc = "a source's read tasks (splits); an all_to_all's reducers, each reading its share of every input"},
  {.name = "strategy", .type = SL_INI_CHOICE, .choices = sl__strategy_names, .kinds = SL__K(SL_OP_ALL_TO_ALL),
   .offset = SL__OP(strategy), .dflt = "simple",
   .doc = "how the shuffle moves its blocks: `simple`, each reducer reads its block of every input; `merge` "
          "(Riffle), merge tasks combine merge_factor inputs on their node into one partition first; `push` "
          "(Magnet), merge tasks combine merge_factor inputs into one partition per node, holding the blocks "
          "of the reducers that node runs; `push-star` (Exoshuffle), push with the inputs made in rounds at most "
          "concurrent_rounds ahead of their merges. The merge stage shows as operator NAME.merge"},
  {.name = "merge_factor", .type = SL_INI_INT, .unit = "partitions", .range = SL_INI_ONE,
   .kinds = SL__K(SL_OP_ALL_TO_ALL), .offset = SL__OP(merge_factor), .dflt = "2",
   .doc = "inputs one merge task combines (strategies merge, push, push-star)"},
  {.name = "concurrent_rounds", .type = SL_INI_INT, .unit = "rounds", .range = SL_INI_ONE,
   .kinds = SL__K(SL_OP_ALL_TO_ALL), .offset = SL__OP(concurrent_rounds), .dflt = "2",
   .doc = "push-star: rounds of input tasks that may run ahead of their merges"},
  {.name = "map_parallelism", .type = SL_INI_REAL, .unit = "tasks per node", .range = SL_INI_POS,
   .kinds = SL__K(SL_OP_ALL_TO_ALL), .offset = SL__OP(map_parallelism), .dflt_doc = "half a node's CPUs",
   .doc = "push-star: input tasks per node in a round"},
  {.name = "merge_time_per_mb", .type = SL_INI_TIME, .unit = "s per MB", .range = SL_INI_NONNEG,
   .kinds = SL__K(SL_OP_ALL_TO_ALL), .offset = SL__OP(merge_time_per_byte), .scale = 1e-6, .dflt = "0s",
   .doc = "a merge task's cost per MB it combines, at speed 1 (`sluice calibrate` measures NAME.merge)"},
  {.name = "rows_per_task", .type = SL_INI_INT64, .unit = "rows", .range = SL_INI_ONE, .kinds = SL__SOURCE,
   .required = SL__SOURCE, .offset = SL__OP(rows_per_task), .doc = "rows each read task yields"},
  /* a source's rows are its output rows */
  {.name = "row_bytes", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS, .kinds = SL__SOURCE,
   .required = SL__SOURCE, .offset = SL__OP(out_row_bytes), .doc = "size of one row the source makes"},
  {.name = "read_bytes_per_row", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS,
   .kinds = SL__SOURCE, .offset = SL__OP(read_bytes_per_row), .dflt_doc = "none",
   .doc = "bytes fetched from remote storage per row, over the cluster's storage link"},
  {.name = NULL},
};

/* ------------------------------------------------------------------------ */
/* Workload specs                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
  sl_workload *w;
  int workload_line; /* the [workload] header, 0 when there is none */
  sl_op_spec *op;    /* the operator being read, NULL in [workload] */
  /* keys that are not operator keys: kernel parameters, checked once the
   * section is complete, because `kernel =` may come after them */
  struct {
    char name[SL_NAME_MAX];
    char value[SL__PARAM_VALUE_MAX];
    int line;
  } params[SL_MAX_PARAMS];
  int nparams;
} sl__wl_parser;

static int sl__wl_operator(sl_ini *ini, sl__wl_parser *p, const char *name, int line)
{
  sl_workload *w = p->w;
  char err[256];
  if (sl_ini_check_name(ini, "operator name", name, SL_NAME_MAX, line) != 0)
    return sl_ini_error(ini);
  for (int i = 0; i < w->nops; i++)
    if (strcmp(w->ops[i].name, name) == 0)
      return sl_ini_fail(ini, line, "duplicate operator '%s' (first defined at line %d)", name, w->ops[i].line);
  if (w->nops == SL_MAX_OPS)
    return sl_ini_fail(ini, line, "more than %d operators", SL_MAX_OPS);
  sl_op_spec *op = &w->ops[w->nops++];
  memset(op, 0, sizeof *op);
  snprintf(op->name, sizeof op->name, "%s", name);
  op->line = line;
  if (sl_ini_set_defaults(sl__op_keys, op, err, sizeof err) != 0)
    return sl_ini_fail(ini, line, "%s", err);
  p->op = op;
  return 0;
}

static int sl__wl_section(sl_ini *ini, const char *name, int line)
{
  sl__wl_parser *p = sl_ini_user(ini);
  p->op = NULL;
  p->nparams = 0;
  if (strcmp(name, "workload") == 0) {
    if (p->workload_line)
      return sl_ini_fail(ini, line, "duplicate section [workload] (first at line %d)", p->workload_line);
    p->workload_line = line;
    return 0;
  }
  if (strcmp(name, "cluster") == 0 || strncmp(name, "group ", 6) == 0)
    return sl_ini_fail(ini, line, "section [%s] belongs in a cluster spec, not a workload", name);
  return sl__wl_operator(ini, p, name, line);
}

static int sl__wl_header_key(sl_ini *ini, sl__wl_parser *p, const char *key, const char *value, int line)
{
  char names[256];
  const sl_ini_key *k = sl_ini_find_key(sl__workload_keys, key);
  if (!k)
    return sl_ini_fail(ini, line, "unknown key '%s' in [workload] (expected %s)", key,
                       sl_ini_key_names(sl__workload_keys, -1, names, sizeof names));
  return sl_ini_set(ini, k, p->w, value, line);
}

/* `accelerator = a10g, a100`: the labels of the node groups an operator may
 * run on. Which labels exist is only known with the cluster
 * (sl_check_feasible). */
static int sl__parse_accels(sl_ini *ini, const char *value, sl_accel_set *out, int line)
{
  memset(out, 0, sizeof *out);
  for (const char *s = value;; s++) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    char name[SL__LINE_MAX];
    sl_ini_trim_copy(name, sizeof name, s, len);
    if (!*name)
      return sl_ini_fail(ini, line, "empty accelerator name in '%s' (expected labels such as "
                         "'a100' or 'a10g, a100')", value);
    if (sl_ini_check_name(ini, "accelerator name", name, SL_NAME_MAX, line) != 0)
      return sl_ini_error(ini);
    if (sl_accel_set_has(out, name))
      return sl_ini_fail(ini, line, "accelerator '%s' is listed twice", name);
    if (out->n == SL_MAX_ACCELS)
      return sl_ini_fail(ini, line, "more than %d accelerators in '%s'", SL_MAX_ACCELS, value);
    snprintf(out->names[out->n++], SL_NAME_MAX, "%.*s", SL_NAME_MAX - 1, name);
    if (!comma)
      return 0;
    s = comma;
  }
}

/* A key that is no operator key: a kernel parameter, or a typo; judged at the section's end. */
static int sl__wl_remember_param(sl_ini *ini, sl__wl_parser *p, const char *key, const char *value, int line)
{
  if (p->nparams == SL_MAX_PARAMS)
    return sl_ini_fail(ini, line, "unknown key '%s' (and more than %d kernel parameters)", key, SL_MAX_PARAMS);
  snprintf(p->params[p->nparams].name, sizeof p->params[0].name, "%s", key);
  snprintf(p->params[p->nparams].value, sizeof p->params[0].value, "%s", value);
  p->params[p->nparams].line = line;
  p->nparams++;
  return 0;
}

static int sl__wl_key(sl_ini *ini, const char *key, const char *value, int line)
{
  sl__wl_parser *p = sl_ini_user(ini);
  sl_op_spec *op = p->op;
  if (!op)
    return sl__wl_header_key(ini, p, key, value, line);
  const sl_ini_key *k = sl_ini_find_key(sl__op_keys, key);
  if (k && k->type == SL_INI_LABELS)
    return sl__parse_accels(ini, value, &op->accel, line);
  if (k)
    return sl_ini_set(ini, k, op, value, line);
  return sl__wl_remember_param(ini, p, key, value, line);
}

/* Kernel names, for the message about an unknown one. */
static void sl__kernel_names(char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < sl_kernel_info_count() && used < n; i++) {
    int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", sl_kernel_info_at(i)->name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

/* Resolves the operator's kernel (or its default) and checks it fits the kind. */
static int sl__op_kernel(sl_ini *ini, sl_op_spec *op, const sl_kernel_info **out)
{
  int line = sl_ini_key_line(ini, "kernel");
  if (!line)
    snprintf(op->kernel, sizeof op->kernel, "%s", op->kind == SL_OP_SOURCE ? "generate" : "sleep");
  int at = line ? line : op->line;
  const sl_kernel_info *k = sl_kernel_info_find(op->kernel);
  if (!k) {
    char names[256];
    sl__kernel_names(names, sizeof names);
    return sl_ini_fail(ini, at, "unknown kernel '%s' (known: %s)", op->kernel, names);
  }
  if (k->source && op->kind != SL_OP_SOURCE)
    return sl_ini_fail(ini, at, "kernel '%s' makes rows from nothing: only a source can run it", op->kernel);
  if (!k->source && op->kind == SL_OP_SOURCE)
    return sl_ini_fail(ini, at, "kernel '%s' transforms rows: a source needs a source kernel "
                       "such as generate or jpeg_generate", op->kernel);
  *out = k;
  return 0;
}

static int sl__op_misplaced(sl_ini *ini, const sl_op_spec *op, const sl_ini_key *k, int line)
{
  if (op->kind == SL_OP_SINK)
    return sl_ini_fail(ini, line, "key '%s' does not apply to a sink: a sink takes 'kind' only", k->name);
  if (k->kinds == SL__SOURCE)
    return sl_ini_fail(ini, line, "key '%s' applies to a source only; '%s' is a %s", k->name, op->name,
                       sl_op_kind_name(op->kind));
  return sl_ini_fail(ini, line, "key '%s' does not apply to a %s operator", k->name, sl_op_kind_name(op->kind));
}

/* A key that is not an operator key: a parameter of the kernel, or a typo. */
static int sl__op_param(sl_ini *ini, sl__wl_parser *p, const sl_kernel_info *k, const char *name, int line)
{
  sl_op_spec *op = p->op;
  if (op->kind == SL_OP_SINK)
    return sl_ini_fail(ini, line, "unknown key '%s': a sink takes 'kind' only", name);
  if (!sl_kernel_info_has_param(k, name))
    return sl_ini_fail(ini, line, "unknown key '%s': not an operator key, nor a parameter of kernel '%s'", name,
                       k->name);
  for (int i = 0; i < p->nparams; i++) {
    if (strcmp(p->params[i].name, name) != 0)
      continue;
    sl_param *param = &op->params[op->nparams++];
    snprintf(param->name, sizeof param->name, "%s", name);
    if (sl_parse_number(p->params[i].value, &param->value) != 0)
      return sl_ini_fail(ini, line, "malformed value '%s' for kernel parameter '%s': expected a number",
                         p->params[i].value, name);
  }
  return 0;
}

/* Every key fits the operator's kind, in file order so the first wrong one is named. */
static int sl__op_check_keys(sl_ini *ini, sl__wl_parser *p, const sl_kernel_info *kernel)
{
  for (int i = 0; i < sl_ini_nkeys(ini); i++) {
    int line = 0;
    const char *name = sl_ini_key_at(ini, i, &line);
    const sl_ini_key *k = sl_ini_find_key(sl__op_keys, name);
    if (k && !sl_ini_key_applies(k, (int)p->op->kind))
      return sl__op_misplaced(ini, p->op, k, line);
    if (!k && sl__op_param(ini, p, kernel, name, line) != 0)
      return sl_ini_error(ini);
  }
  return 0;
}

/* What a task-running operator's keys imply together. */
static int sl__op_check_costs(sl_ini *ini, sl_op_spec *op)
{
  char what[SL_NAME_MAX + 16];
  snprintf(what, sizeof what, "%s '%s'", op->kind == SL_OP_SOURCE ? "source" : "operator", op->name);
  if (sl_ini_check_required(ini, sl__op_keys, (int)op->kind, what, op->line) != 0)
    return sl_ini_error(ini);
  /* The model counts rows in int64_t; more would overflow, not run for ages. */
  if (op->kind == SL_OP_SOURCE && op->tasks > INT64_MAX / op->rows_per_task)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "rows_per_task"),
                       "source '%s' makes tasks x rows_per_task rows, more than 2^63", op->name);
  /* An accelerator operator holds no CPU slot unless it asks for one, as in Ray. */
  if (!sl_ini_key_line(ini, "cpu"))
    op->cpu = op->gpu > 0 ? 0 : 1;
  if (op->cpu + op->gpu <= 0) {
    int line = sl_ini_key_line(ini, "cpu");
    return sl_ini_fail(ini, line ? line : op->line, "operator '%s' asks for no CPU and no GPU", op->name);
  }
  int infl = sl_ini_key_line(ini, "inflation");
  if (infl && sl_ini_key_line(ini, "out_row_bytes"))
    return sl_ini_fail(ini, infl, "operator '%s' gives both 'inflation' and 'out_row_bytes': its output rows "
                       "either follow its input's size or have one size, not both", op->name);
  int kp = sl_ini_key_line(ini, "keep_position");
  if (kp && !op->reorder_group[0])
    return sl_ini_fail(ini, kp, "'keep_position' needs 'reorder_group' in operator '%s'", op->name);
  int tpb = sl_ini_key_line(ini, "time_per_batch");
  if (tpb && op->batch_size == 0)
    return sl_ini_fail(ini, tpb, "'time_per_batch' needs 'batch_size' in operator '%s'", op->name);
  return 0;
}

/* The operator's section is complete: check what depends on several keys. */
static int sl__wl_end(sl_ini *ini)
{
  sl__wl_parser *p = sl_ini_user(ini);
  sl_op_spec *op = p->op;
  const sl_kernel_info *kernel = NULL;
  if (!op)
    return 0;
  if (!sl_ini_key_line(ini, "kind"))
    return sl_ini_fail(ini, op->line, "operator '%s' is missing required key 'kind'", op->name);
  if (op->kind != SL_OP_SINK && sl__op_kernel(ini, op, &kernel) != 0)
    return sl_ini_error(ini);
  if (sl__op_check_keys(ini, p, kernel) != 0)
    return sl_ini_error(ini);
  if (op->kind == SL_OP_SINK)
    return 0;
  if (!sl_ini_key_line(ini, "outputs") && kernel && kernel->whole_task)
    op->outputs_at_end = 1;
  return sl__op_check_costs(ini, op);
}

/* Checks that the operators form a pipeline: one source, first; a sink, if any, last. */
static int sl__wl_check_pipeline(const sl__wl_parser *p, const char *path, char *err, size_t errlen)
{
  const sl_workload *w = p->w;
  if (w->nops == 0) {
    sl__msg(err, errlen, "%s:%d: no operators: a workload needs at least a source section", path,
            p->workload_line ? p->workload_line : 1);
    return SL_EPARSE;
  }
  if (w->ops[0].kind != SL_OP_SOURCE) {
    sl__msg(err, errlen, "%s:%d: the first operator '%s' is a %s; a pipeline starts with a source", path,
            w->ops[0].line, w->ops[0].name, sl_op_kind_name(w->ops[0].kind));
    return SL_EPARSE;
  }
  for (int i = 1; i < w->nops; i++) {
    const sl_op_spec *op = &w->ops[i];
    if (op->kind == SL_OP_SOURCE) {
      sl__msg(err, errlen, "%s:%d: operator '%s' is a second source; a pipeline has one source, first", path,
              op->line, op->name);
      return SL_EPARSE;
    }
    if (op->kind == SL_OP_SINK && i != w->nops - 1) {
      sl__msg(err, errlen, "%s:%d: sink '%s' must be the last operator", path, op->line, op->name);
      return SL_EPARSE;
    }
  }
  const sl_op_spec *last = &w->ops[w->nops - 1];
  if (last->kind == SL_OP_SINK && last->check == SL_CHECK_SORTED && strcmp(w->ops[0].kernel, "gensort") != 0) {
    sl__msg(err, errlen, "%s:%d: sink '%s' checks a sort (check = sorted), which needs records made by a "
            "gensort source; '%s' uses kernel '%s'", path, last->line, last->name, w->ops[0].name,
            w->ops[0].kernel[0] ? w->ops[0].kernel : "(none)");
    return SL_EPARSE;
  }
  if (last->kind == SL_OP_SINK && last->check == SL_CHECK_GROUPED) {
    const sl_op_spec *agg = w->nops >= 2 ? &w->ops[w->nops - 2] : NULL;
    if (strcmp(w->ops[0].kernel, "gensort") != 0 || !agg || strcmp(agg->kernel, "groupby") != 0) {
      sl__msg(err, errlen, "%s:%d: sink '%s' checks a groupby (check = grouped), which needs records made by a "
              "gensort source and a groupby operator just before the sink", path, last->line, last->name);
      return SL_EPARSE;
    }
  }
  int bad = sl_reorder_check(w, err, errlen);
  if (bad >= 0) {
    char why[400];
    snprintf(why, sizeof why, "%s", err ? err : "");
    sl__msg(err, errlen, "%s:%d: %s", path, w->ops[bad].line, why);
    return SL_EPARSE;
  }
  return 0;
}

/* A spec without [workload] runs on defaults its author may not know of. */
static void sl__wl_warn_defaults(const sl__wl_parser *p, const char *path, sl_spec_warnings *warn)
{
  char size[SL_FORMAT_MAX];
  if (p->workload_line)
    return;
  sl__warn(warn, "%s:1: warning: no [workload] section: the workload is named '%s' after its file, and "
           "target_partition is %s; a [workload] section sets them", path, p->w->name,
           sl_format_size(p->w->target_partition_bytes, size, sizeof size));
}

int sl_workload_load_warn(const char *path, sl_workload *out, sl_spec_warnings *warn, char *err, size_t errlen)
{
  static const sl_ini_ops ops = {sl__wl_section, sl__wl_key, sl__wl_end};
  if (!path || !out)
    return SL_EINVAL;
  if (err && errlen)
    err[0] = '\0';
  if (warn)
    warn->n = 0;
  sl__wl_parser *p = calloc(1, sizeof *p + sizeof *p->w);
  if (!p) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    memset(out, 0, sizeof *out);
    return SL_ENOMEM;
  }
  sl_workload *w = (sl_workload *)(p + 1);
  p->w = w;
  int rc = sl_ini_set_defaults(sl__workload_keys, w, err, errlen);
  if (!rc)
    rc = sl_ini_parse(path, &ops, p, err, errlen);
  if (!rc)
    rc = sl__wl_check_pipeline(p, path, err, errlen);
  if (!rc) {
    if (!w->name[0])
      sl__stem(w->name, sizeof w->name, path);
    snprintf(w->path, sizeof w->path, "%s", path);
    sl__wl_warn_defaults(p, path, warn);
    *out = *w;
  } else {
    memset(out, 0, sizeof *out);
  }
  free(p);
  return rc;
}

int sl_workload_load(const char *path, sl_workload *out, char *err, size_t errlen)
{
  return sl_workload_load_warn(path, out, NULL, err, errlen);
}
