/*
 * Fuzz target: the cluster spec parser (workloads/spec_cluster.c over inih, with
 * the unit parsers of workloads/units.c). The input is the spec file.
 *
 * Checks, besides crashes and leaks: an error is SL_EPARSE located as
 * FILE:LINE inside the input; a success has its nodes expanded to the sum
 * of the group counts, and budgets the engines can divide by.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_io.h"
#include "models/cluster.h"
#include "models/error.h"
#include "workloads/spec.h"

static void check_group(const sl_node_group *g)
{
  if (strnlen(g->name, sizeof g->name) == sizeof g->name || !g->name[0])
    sl_fuzz_fail("a node group has an empty or unterminated name", "");
  const double v[] = {g->cpu, g->gpu, g->memory_bytes, g->store_bytes, g->cpu_speed,
                      g->gpu_speed, g->nic_bps, g->price_per_hour};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (!isfinite(v[i]) || v[i] < 0)
      sl_fuzz_fail("a node group has a negative or non-finite number", g->name);
  if (g->count < 1 || !(g->memory_bytes > 0) || g->store_bytes > g->memory_bytes ||
      g->cpu + g->gpu <= 0)
    sl_fuzz_fail("a node group breaks a rule the parser enforces", g->name);
}

static void check_cluster(const sl_cluster *c)
{
  if (c->ngroups < 1 || c->ngroups > SL_MAX_GROUPS)
    sl_fuzz_fail("a loaded cluster has no node group", c->name);
  long long nodes = 0;
  for (int g = 0; g < c->ngroups; g++) {
    check_group(&c->groups[g]);
    nodes += c->groups[g].count;
  }
  if (nodes != c->nnodes || !c->nodes)
    sl_fuzz_fail("the nodes are not the groups expanded", c->name);
  if (!(c->backbone_bps > 0) || !(c->latency_s >= 0) || !(c->storage_latency_s >= 0))
    sl_fuzz_fail("a loaded cluster has a bad network", c->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[SL_FUZZ_PATH_MAX], err[1024];
  sl_fuzz_path("cluster.ini", path, NULL);
  sl_fuzz_write(path, data, size);
  sl_cluster c;
  int rc = sl_cluster_load(path, &c, err, sizeof err);
  if (rc == 0) {
    check_cluster(&c);
    sl_cluster_free(&c);
  } else if (rc == SL_EPARSE) {
    sl_fuzz_check_located(err, path, data, size);
  } else if (rc != SL_ENOMEM) {
    sl_fuzz_fail("unexpected return code", err);
  }
  return 0;
}
