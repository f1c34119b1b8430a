/*
 * This machine as a one-node cluster (local_cluster.h). Memory comes from
 * sysconf rather than hwloc's NUMA nodes, which undercount on VMs with
 * hot-plugged memory; speeds are 1, as the specs' times are this machine's.
 */
#include "local_cluster.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workloads/kernels/gemm_cuda.h"

int sl_exec_local_cluster(sl_cluster *out, double store_bytes)
{
  memset(out, 0, sizeof *out);
  hwloc_topology_t topo;
  int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (hwloc_topology_init(&topo) == 0) {
    if (hwloc_topology_load(topo) == 0) {
      int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      if (n > 0)
        cores = n;
    }
    hwloc_topology_destroy(topo);
  }
  /* hwloc's NUMA memory can undercount on VMs with hot-plugged memory */
  double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  snprintf(out->name, sizeof out->name, "local");
  snprintf(out->path, sizeof out->path, "(this machine)");
  out->backbone_bps = 1.25e10;
  out->latency_s = 0;
  out->ngroups = 1;
  sl_node_group *g = &out->groups[0];
  snprintf(g->name, sizeof g->name, "local");
  g->count = 1;
  g->cpu = cores > 0 ? cores : 1;
  g->gpu = sl_cuda_device_count();
  g->memory_bytes = memory;
  g->store_bytes = store_bytes > 0 ? store_bytes : 0.3 * memory;
  g->cpu_speed = g->gpu_speed = 1;
  g->nic_bps = 1.25e9;
  return sl_cluster_expand(out);
}
