/*
 * The reference of both specs (`sluice spec`, docs/spec.md): the units
 * values take, every section's keys from the readers' own tables, and the
 * kernels with their parameters; and those tables by section, for callers
 * that check keys. Apart from the readers because it only describes what
 * they read: a key added to a reader's table shows here by itself.
 */
#include "spec.h"

#include <stdio.h>

#include "kernel_registry.h"
#include "kernels.h"
#include "spec_internal.h"
#include "typed_ini.h"
#include "units.h"

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
