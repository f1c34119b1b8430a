#include "spec.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_registry.h"
#include "models/reorder.h"
#include "kernels.h"
#include "models/error.h"
#include "typed_ini.h"
#include "units.h"

#define SL__PARAM_VALUE_MAX 64
#define SL__MAX_NODES (1 << 20)
#define SL__LINE_MAX 200 /* inih's longest line, which no name exceeds */

static void sl__msg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void sl__msg(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  if (!err || errlen == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* The file name without folders and extension: the default spec name. */
static void sl__stem(char *dst, size_t n, const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  sl_ini_trim_copy(dst, n, base, len);
}

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
static const char *const sl__kind_names[] = {"source", "map", "map_batches", "all_to_all", "sink", NULL};
static const char *const sl__bool_names[] = {"false", "true", NULL};
static const char *const sl__check_names[] = {"none", "sorted", "grouped", NULL};
static const char *const sl__read_from_names[] = {"storage", "disk", NULL};
static const char *const sl__write_to_names[] = {"none", "disk", "storage", NULL};
static const char *const sl__outputs_names[] = {"as_made", "at_end", NULL};
/* In the order of sl_shuffle_strategy */
static const char *const sl__strategy_names[] = {"simple", "merge", "push", "push-star", NULL};

static const sl_ini_key sl__workload_keys[] = {
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

static const sl_ini_key sl__op_keys[] = {
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

/* ------------------------------------------------------------------------ */
/* Cluster specs                                                             */
/* ------------------------------------------------------------------------ */

#define SL__CL(field) offsetof(sl_cluster, field)
#define SL__GR(field) offsetof(sl_node_group, field)

static const sl_ini_key sl__cluster_keys[] = {
  {.name = "name", .type = SL_INI_NAME, .offset = SL__CL(name), .size = SL_NAME_MAX,
   .dflt_doc = "the file's name, without folder and extension", .doc = "the cluster's name in outputs"},
  {.name = "description", .type = SL_INI_TEXT, .doc = "free text for readers; ignored"},
  {.name = "backbone", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__CL(backbone_bps), .dflt = "100Gbps", .doc = "the network all nodes share"},
  /* 0.05ms rather than 50us: it parses to exactly the 50e-6 specs have always had */
  {.name = "latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG, .offset = SL__CL(latency_s),
   .dflt = "0.05ms", .doc = "per hop between nodes (within a cloud availability zone by default)"},
  {.name = "storage_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__CL(storage_bps), .dflt_doc = "none: no storage link is modelled",
   .doc = "the link to remote storage (S3-like) that sources' read_bytes_per_row share"},
  {.name = "storage_latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_latency_s), .dflt = "10ms", .doc = "to the first byte of a read from remote storage"},
  {.name = "storage_get_size", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_get_bytes), .dflt = "0",
   .doc = "what one GET from remote storage moves at most: a source task's read is ceil(bytes / size) ranged "
          "GETs (boto3's downloads: 8MiB); 0: one GET per task"},
  {.name = "storage_put_size", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_put_bytes), .dflt = "0",
   .doc = "what one PUT to remote storage moves at most: a partition a sink uploads is ceil(bytes / size) "
          "parts of a multipart upload; 0: one PUT per partition"},
  {.name = "storage_get_price", .type = SL_INI_PRICE, .unit = "$ per 1,000 requests", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_get_price), .dflt = "0",
   .doc = "what remote storage bills for 1,000 GETs (S3 Standard: $0.0004), in summary.csv's request_cost_usd"},
  {.name = "storage_put_price", .type = SL_INI_PRICE, .unit = "$ per 1,000 requests", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_put_price), .dflt = "0",
   .doc = "what remote storage bills for 1,000 PUTs (S3 Standard: $0.005)"},
  {.name = "storage_gb_month_price", .type = SL_INI_PRICE, .unit = "$ per GB-month", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_gb_month_price), .dflt = "0",
   .doc = "what remote storage bills to hold a GB for a month of 730 hours (S3 Standard: $0.023): a run pays "
          "for the bytes its sources read and its sink wrote there over its whole length"},
  {.name = NULL},
};

static const sl_ini_key sl__group_keys[] = {
  {.name = "count", .type = SL_INI_INT, .unit = "nodes", .range = SL_INI_ONE, .offset = SL__GR(count),
   .dflt = "1", .doc = "identical nodes in the group"},
  {.name = "cpu", .type = SL_INI_REAL, .unit = "slots", .range = SL_INI_NONNEG, .offset = SL__GR(cpu),
   .required = 1, .doc = "CPU slots per node (logical, as in Ray: 8 slots of a sleep-bound operator fit 2 cores)"},
  {.name = "gpu", .type = SL_INI_REAL, .unit = "slots", .range = SL_INI_NONNEG, .offset = SL__GR(gpu),
   .dflt = "0", .doc = "GPU slots per node"},
  {.name = "memory", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS, .offset = SL__GR(memory_bytes),
   .required = 1, .doc = "host memory per node"},
  {.name = "store", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS, .offset = SL__GR(store_bytes),
   .dflt_doc = "30% of memory (Ray's object store)", .doc = "the partition store's budget per node; at most memory"},
  {.name = "cpu_speed", .type = SL_INI_REAL, .range = SL_INI_POS, .offset = SL__GR(cpu_speed), .dflt = "1",
   .doc = "speed of a CPU slot relative to the cost model's speed 1 (2: tasks take half the time)"},
  {.name = "gpu_speed", .type = SL_INI_REAL, .range = SL_INI_POS, .offset = SL__GR(gpu_speed), .dflt = "1",
   .doc = "speed of a GPU slot relative to the cost model's speed 1"},
  {.name = "nic", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS, .offset = SL__GR(nic_bps),
   .dflt = "10Gbps", .doc = "each node's network interface"},
  {.name = "price_per_hour", .type = SL_INI_PRICE, .unit = "$ per node-hour", .range = SL_INI_NONNEG,
   .offset = SL__GR(price_per_hour), .dflt = "0", .doc = "what a node costs, for `sluice capacity`"},
  {.name = "accelerator", .type = SL_INI_NAME, .offset = SL__GR(accelerator), .size = SL_NAME_MAX,
   .dflt_doc = "none", .doc = "a label for the group's GPUs (`a100`) that operators' `accelerator` may name"},
  {.name = "disk_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__GR(disk_read_bps), .dflt_doc = "no disk",
   .doc = "read bandwidth of one local disk (and write, unless disk_write_bandwidth says otherwise): a "
          "simulation charges spilled partitions to it, written and read back, and the executor waits as long on "
          "top of its real disk"},
  {.name = "disk_write_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__GR(disk_write_bps), .dflt_doc = "disk_bandwidth", .doc = "write bandwidth of one local disk"},
  {.name = "disks", .type = SL_INI_INT, .unit = "disks", .range = SL_INI_ONE, .offset = SL__GR(disks),
   .dflt_doc = "1 with disk_bandwidth", .doc = "local disks per node, spills striped over them (bandwidths add)"},
  {.name = "disk_capacity", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS,
   .offset = SL__GR(disk_capacity_bytes), .dflt_doc = "unbounded",
   .doc = "size of one local disk: a node whose spills would overflow its disks fails the job (out of memory "
          "and disk)"},
  {.name = "disk_latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = SL__GR(disk_latency_s), .dflt = "0",
   .doc = "how long one access keeps a local disk busy before its bytes flow (an HDD's seek and rotation, "
          "some 8 ms; an NVMe's 0.1 ms): a simulation charges it per spilled partition written and per "
          "block read back, so reducers reading many small blocks pay for each"},
  {.name = "elastic", .type = SL_INI_CHOICE, .offset = SL__GR(elastic), .choices = sl__bool_names, .dflt = "false",
   .doc = "`true`: a pool of nodes rented by the second (remote CPU workers): they start out of service, and "
          "the run acquires and releases them as `--autoplace` decides, billing each from its acquisition to "
          "its release; `count` is the most it may hold"},
  {.name = "provision_delay", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = SL__GR(provision_delay_s), .dflt = "0",
   .doc = "elastic groups: how long a node takes from its acquisition (when billing starts) to service"},
  {.name = "min", .type = SL_INI_INT, .unit = "nodes", .range = SL_INI_NONNEG, .offset = SL__GR(min_count),
   .dflt = "0", .doc = "fewest nodes of the group a capacity search tries"},
  {.name = "max", .type = SL_INI_INT, .unit = "nodes", .range = SL_INI_ONE, .offset = SL__GR(max_count),
   .dflt_doc = "count", .doc = "most nodes of the group a capacity search tries"},
  {.name = NULL},
};

typedef struct {
  sl_cluster *c;
  int cluster_line;     /* the [cluster] header, 0 when there is none */
  sl_node_group *group; /* the group being read, NULL in [cluster] */
} sl__cl_parser;

static int sl__cl_group(sl_ini *ini, sl__cl_parser *p, const char *name, int line)
{
  sl_cluster *c = p->c;
  char err[256];
  if (!*name)
    return sl_ini_fail(ini, line, "a node group needs a name: [group NAME]");
  if (sl_ini_check_name(ini, "node group name", name, SL_NAME_MAX, line) != 0)
    return sl_ini_error(ini);
  for (int g = 0; g < c->ngroups; g++)
    if (strcmp(c->groups[g].name, name) == 0)
      return sl_ini_fail(ini, line, "duplicate node group '%s' (first defined at line %d)", name, c->groups[g].line);
  if (c->ngroups == SL_MAX_GROUPS)
    return sl_ini_fail(ini, line, "more than %d node groups", SL_MAX_GROUPS);
  sl_node_group *g = &c->groups[c->ngroups++];
  memset(g, 0, sizeof *g);
  g->line = line;
  if (sl_ini_set_defaults(sl__group_keys, g, err, sizeof err) != 0)
    return sl_ini_fail(ini, line, "%s", err);
  /* sl_ini_check_name() has bounded the length; the precision tells the compiler. */
  snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, name);
  p->group = g;
  return 0;
}

static int sl__cl_section(sl_ini *ini, const char *name, int line)
{
  sl__cl_parser *p = sl_ini_user(ini);
  p->group = NULL;
  if (strcmp(name, "cluster") == 0) {
    if (p->cluster_line)
      return sl_ini_fail(ini, line, "duplicate section [cluster] (first at line %d)", p->cluster_line);
    p->cluster_line = line;
    return 0;
  }
  if (strncmp(name, "group", 5) == 0 && (name[5] == '\0' || isspace((unsigned char)name[5]))) {
    char group[SL__LINE_MAX];
    sl_ini_trim_copy(group, sizeof group, name + 5, strlen(name + 5));
    return sl__cl_group(ini, p, group, line);
  }
  return sl_ini_fail(ini, line, "unknown section [%s] (expected [cluster] or [group NAME])", name);
}

static int sl__cl_key(sl_ini *ini, const char *key, const char *value, int line)
{
  sl__cl_parser *p = sl_ini_user(ini);
  char names[320];
  if (p->group) {
    const sl_ini_key *k = sl_ini_find_key(sl__group_keys, key);
    if (!k)
      return sl_ini_fail(ini, line, "unknown key '%s' in node group '%s' (expected %s)", key, p->group->name,
                         sl_ini_key_names(sl__group_keys, -1, names, sizeof names));
    return sl_ini_set(ini, k, p->group, value, line);
  }
  const sl_ini_key *k = sl_ini_find_key(sl__cluster_keys, key);
  if (!k)
    return sl_ini_fail(ini, line, "unknown key '%s' in [cluster] (expected %s)", key,
                       sl_ini_key_names(sl__cluster_keys, -1, names, sizeof names));
  return sl_ini_set(ini, k, p->c, value, line);
}

/* The group's section is complete: fill what depends on other keys, then check. */
static int sl__cl_end(sl_ini *ini)
{
  sl__cl_parser *p = sl_ini_user(ini);
  sl_node_group *g = p->group;
  char what[SL_NAME_MAX + 16];
  if (!g)
    return 0;
  snprintf(what, sizeof what, "node group '%s'", g->name);
  if (sl_ini_check_required(ini, sl__group_keys, -1, what, g->line) != 0)
    return sl_ini_error(ini);
  /* Ray gives the object store 30% of a node's memory by default. */
  int store = sl_ini_key_line(ini, "store");
  if (!store)
    g->store_bytes = 0.3 * g->memory_bytes;
  if (g->store_bytes > g->memory_bytes) {
    char s[SL_FORMAT_MAX], m[SL_FORMAT_MAX];
    return sl_ini_fail(ini, store, "store (%s) is larger than memory (%s)", sl_format_size(g->store_bytes, s, sizeof s),
                       sl_format_size(g->memory_bytes, m, sizeof m));
  }
  if (g->cpu + g->gpu <= 0)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "cpu"), "node group '%s' has no CPU and no GPU slots", g->name);
  int disk = sl_ini_key_line(ini, "disk_bandwidth");
  static const char *const disk_keys[] = {"disk_write_bandwidth", "disks", "disk_capacity", "disk_latency"};
  for (size_t k = 0; !disk && k < sizeof disk_keys / sizeof *disk_keys; k++)
    if (sl_ini_key_line(ini, disk_keys[k]))
      return sl_ini_fail(ini, sl_ini_key_line(ini, disk_keys[k]), "'%s' needs 'disk_bandwidth' in node group '%s'",
                         disk_keys[k], g->name);
  if (disk) {
    if (!sl_ini_key_line(ini, "disk_write_bandwidth"))
      g->disk_write_bps = g->disk_read_bps;
    if (!sl_ini_key_line(ini, "disks"))
      g->disks = 1;
  }
  if (g->accelerator[0] && g->gpu <= 0)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "accelerator"), "node group '%s' names accelerator '%s' but has "
                       "no GPU slots (set gpu)", g->name, g->accelerator);
  if (!g->max_count)
    g->max_count = g->count;
  if (g->min_count > g->max_count)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "min"), "min (%d) is larger than max (%d)", g->min_count,
                       g->max_count);
  return 0;
}

static int sl__cl_check(const sl__cl_parser *p, const char *path, char *err, size_t errlen)
{
  const sl_cluster *c = p->c;
  if (c->ngroups == 0) {
    sl__msg(err, errlen, "%s:%d: no node groups: a cluster needs at least one [group NAME] section", path,
            p->cluster_line ? p->cluster_line : 1);
    return SL_EPARSE;
  }
  long long nodes = 0;
  for (int g = 0; g < c->ngroups; g++)
    nodes += c->groups[g].count;
  if (nodes > SL__MAX_NODES) {
    sl__msg(err, errlen, "%s:%d: %lld nodes in all; at most %d", path, c->groups[c->ngroups - 1].line, nodes,
            SL__MAX_NODES);
    return SL_EPARSE;
  }
  return 0;
}

int sl_cluster_load(const char *path, sl_cluster *out, char *err, size_t errlen)
{
  static const sl_ini_ops ops = {sl__cl_section, sl__cl_key, sl__cl_end};
  if (!path || !out)
    return SL_EINVAL;
  if (err && errlen)
    err[0] = '\0';
  sl__cl_parser *p = calloc(1, sizeof *p + sizeof *p->c);
  if (!p) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    memset(out, 0, sizeof *out);
    return SL_ENOMEM;
  }
  sl_cluster *c = (sl_cluster *)(p + 1);
  p->c = c;
  int rc = sl_ini_set_defaults(sl__cluster_keys, c, err, errlen);
  if (!rc)
    rc = sl_ini_parse(path, &ops, p, err, errlen);
  if (!rc)
    rc = sl__cl_check(p, path, err, errlen);
  if (!rc) {
    if (!c->name[0])
      sl__stem(c->name, sizeof c->name, path);
    snprintf(c->path, sizeof c->path, "%s", path);
    rc = sl_cluster_expand(c);
    if (rc)
      sl__msg(err, errlen, "%s: %s", path, sl_strerror(rc));
  }
  if (!rc)
    *out = *c;
  else
    memset(out, 0, sizeof *out);
  free(p);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* The reference                                                             */
/* ------------------------------------------------------------------------ */

static void sl__write_values(FILE *f)
{
  char time[128], size[128], bw[256];
  sl_value_units(SL_VALUE_TIME, time, sizeof time);
  sl_value_units(SL_VALUE_SIZE, size, sizeof size);
  sl_value_units(SL_VALUE_BANDWIDTH, bw, sizeof bw);
  fprintf(f, "### Values\n\n"
             "| type | written as | units |\n"
             "|---|---|---|\n"
             "| time | a number and its unit, such as `0.5s` or `20ms`; a bare number is refused, "
             "since it could be seconds or milliseconds (0 excepted) | %s |\n"
             "| size | a number and its unit, such as `100MB` or `1.5GiB`; a bare number is bytes | %s |\n"
             "| bandwidth | a number and its unit, such as `10Gbps` or `1.25GB/s`: bits (b) or bytes (B) "
             "per second; a bare number is refused (0 excepted) | %s |\n"
             "| number | a plain number: `0.5`, `2`, `1e-3` | |\n"
             "| integer | a whole number: `160` | |\n"
             "| price | dollars, with an optional `$`: `1.212`, `$0.384` | |\n"
             "| name | letters, digits, `_`, `-` and `.` | |\n"
             "| names | names separated by commas: `a10g, a100` | |\n"
             "| text | anything to the end of the line | |\n\n"
             "Size and time units match in any case (`150kb` is 150 KB, `5MS` is 5 ms). Bandwidth units "
             "are case-sensitive: `Mbps` (megabits) and `MBps` (megabytes per second) differ eightfold.\n\n",
          time, size, bw);
}

/* "width (256, 1 to 65535), height (...)": the parameters of a kernel. */
static void sl__kernel_params(const sl_kernel_info *k, char *buf, size_t n)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; k->params[i] && used < n; i++) {
    int dflt = 0, lo = 0, hi = 0;
    int w = sl_kernel_param_range(k->name, k->params[i], &dflt, &lo, &hi)
              ? snprintf(buf + used, n - used, "%s`%s` (default %d, %d to %d)", i ? ", " : "", k->params[i],
                         dflt, lo, hi)
              : snprintf(buf + used, n - used, "%s`%s`", i ? ", " : "", k->params[i]);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static void sl__write_kernels(FILE *f)
{
  char params[512];
  fprintf(f, "### Kernels\n\n"
             "The `kernel` of an operator: the code its tasks run in `sluice run` (the simulator "
             "only times them). A kernel's parameters are keys of the operator's section, whole numbers.\n\n"
             "| kernel | kinds | parameters | what it does |\n"
             "|---|---|---|---|\n");
  for (int i = 0; i < sl_kernel_info_count(); i++) {
    const sl_kernel_info *k = sl_kernel_info_at(i);
    sl__kernel_params(k, params, sizeof params);
    fprintf(f, "| `%s` | %s | %s | %s |\n", k->name, k->source ? "source" : "map, map_batches, all_to_all",
            params[0] ? params : "none", k->summary);
  }
  fprintf(f, "\n");
}

static const sl_ini_schema sl__workload_schema = {
  .title = "Workload spec: [workload]",
  .intro = "Optional, first. A workload spec without it runs on the defaults below, and says so on "
           "standard error.",
  .keys = sl__workload_keys,
};

static const sl_ini_schema sl__op_schema = {
  .title = "Workload spec: one section per operator, [NAME]",
  .intro = "In pipeline order; the section's name is the operator's. A pipeline starts with one source "
           "and may end with a sink, which takes `kind` only. A task's time at speed 1 is "
           "time_per_task + rows in x time_per_row + batches x time_per_batch + MB in x time_per_mb, "
           "divided by its node's cpu_speed (gpu_speed when it holds a GPU). Every other key of the "
           "section must be a parameter of its kernel (Kernels, below). The kinds column says which "
           "kinds of operator take a key.",
  .keys = sl__op_keys,
  .kinds = sl__kind_names,
};

static const sl_ini_schema sl__cluster_schema = {
  .title = "Cluster spec: [cluster]",
  .intro = "Optional. A node-types file (`sluice capacity --node-types`) is a cluster spec too.",
  .keys = sl__cluster_keys,
};

static const sl_ini_schema sl__group_schema = {
  .title = "Cluster spec: one section per node group, [group NAME]",
  .intro = "At least one. Nodes are numbered from 0 in the order of the groups, and `--fail` names a "
           "node by that number or as GROUP.INDEX (`gpu.0`).",
  .keys = sl__group_keys,
};

void sl_spec_write_reference(FILE *f)
{
  sl__write_values(f);
  sl_ini_write_reference(&sl__workload_schema, f);
  sl_ini_write_reference(&sl__op_schema, f);
  sl__write_kernels(f);
  sl_ini_write_reference(&sl__cluster_schema, f);
  sl_ini_write_reference(&sl__group_schema, f);
}

const sl_ini_key *sl_spec_keys(sl_spec_section section)
{
  switch (section) {
  case SL_SPEC_WORKLOAD:
    return sl__workload_keys;
  case SL_SPEC_OPERATOR:
    return sl__op_keys;
  case SL_SPEC_CLUSTER:
    return sl__cluster_keys;
  default:
    return sl__group_keys;
  }
}

/* ------------------------------------------------------------------------ */
/* Feasibility                                                               */
/* ------------------------------------------------------------------------ */

static bool sl__group_fits(const sl_node_group *g, const sl_op_spec *op)
{
  return g->count > 0 && g->cpu >= op->cpu && g->gpu >= op->gpu && sl_group_allows(g, &op->accel);
}

/* The operator's pin names no label of the cluster's groups (with nodes). */
static int sl__unknown_accel(const char *file, const sl_cluster *c, const sl_op_spec *op,
                             char *err, size_t errlen)
{
  char want[SL_MAX_ACCELS * SL_NAME_MAX], have[SL_MAX_GROUPS * SL_NAME_MAX] = "";
  sl_accel_set labels = {0};
  size_t used = 0;
  sl_accel_set_format(&op->accel, want, sizeof want);
  for (int g = 0; g < c->ngroups; g++) {
    const char *a = c->groups[g].accelerator;
    if (!a[0] || c->groups[g].count <= 0 || sl_accel_set_has(&labels, a))
      continue;
    if (labels.n < SL_MAX_ACCELS)
      snprintf(labels.names[labels.n++], SL_NAME_MAX, "%s", a);
    int n = snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "", a);
    if (n > 0 && (size_t)n < sizeof have - used)
      used += (size_t)n;
  }
  sl__msg(err, errlen, "%s:%d: operator '%s' asks for accelerator %s but no node group of "
          "cluster '%s' has it (%s%s)", file, op->line, op->name, want, c->name,
          used ? "accelerators there: " : "no group there sets 'accelerator'", have);
  return SL_EUNSAT;
}

static int sl__unsat(const sl_workload *w, const sl_cluster *c, const sl_op_spec *op, char *err,
                     size_t errlen)
{
  double max_cpu = 0, max_gpu = 0;
  bool pinned_somewhere = false;
  const char *file = w->path[0] ? w->path : w->name;
  for (int g = 0; g < c->ngroups; g++) {
    /* a pinned operator is judged on the groups it may use */
    if (c->groups[g].count <= 0 || !sl_group_allows(&c->groups[g], &op->accel))
      continue;
    pinned_somewhere = true;
    if (c->groups[g].cpu > max_cpu)
      max_cpu = c->groups[g].cpu;
    if (c->groups[g].gpu > max_gpu)
      max_gpu = c->groups[g].gpu;
  }
  if (!pinned_somewhere)
    return sl__unknown_accel(file, c, op, err, errlen);
  char want[SL_MAX_ACCELS * SL_NAME_MAX] = "", where[SL_MAX_ACCELS * SL_NAME_MAX + 32] = "";
  sl_accel_set_format(&op->accel, want, sizeof want);
  if (op->accel.n > 0)
    snprintf(where, sizeof where, " with accelerator %s", want);
  if (op->gpu > max_gpu)
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g GPU but no node%s of cluster '%s' has "
            "more than %g", file, op->line, op->name, op->gpu, where, c->name, max_gpu);
  else if (op->cpu > max_cpu)
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g CPU but no node%s of cluster '%s' has "
            "more than %g", file, op->line, op->name, op->cpu, where, c->name, max_cpu);
  else
    sl__msg(err, errlen, "%s:%d: operator '%s' asks for %g CPU and %g GPU but no node%s of "
            "cluster '%s' has both", file, op->line, op->name, op->cpu, op->gpu, where, c->name);
  return SL_EUNSAT;
}

int sl_check_feasible(const sl_workload *w, const sl_cluster *c, char *err, size_t errlen)
{
  if (!w || !c)
    return SL_EINVAL;
  for (int i = 0; i < w->nops; i++) {
    const sl_op_spec *op = &w->ops[i];
    if (op->kind == SL_OP_SINK || (op->cpu <= 0 && op->gpu <= 0))
      continue;
    bool fits = false;
    for (int g = 0; g < c->ngroups && !fits; g++)
      fits = sl__group_fits(&c->groups[g], op);
    if (!fits)
      return sl__unsat(w, c, op, err, errlen);
  }
  return 0;
}
