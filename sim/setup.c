/*
 * The simulated cluster laid out on SimGrid before the run starts: the
 * platform loaded (a hand-written one, or one generated from the cluster
 * spec through a temporary file), each node bound to its CPU and GPU
 * hosts and its spill disk, given its store budget and its first random
 * loss, and one worker actor started per slot. Apart from the engine,
 * which runs what is set up here and never looks at the platform again.
 */
#include <errno.h>
#include <math.h>
#include <simgrid/disk.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/error.h"
#include "models/rng.h"
#include "sim/engine_internal.h"
#include "sim/platform.h"

/* Writes the generated platform to a temporary file and loads it. */
static int load_generated(sim *s, sl_sim_layout *layout, char *err, size_t errlen)
{
  const char *dir = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/sluice-platform-XXXXXX.xml", dir && *dir ? dir : "/tmp");
  int fd = mkstemps(path, 4);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    snprintf(err, errlen, "%.300s: cannot create the platform file: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return SL_EIO;
  }
  int rc = sl_sim_platform_write(s->cluster, s->plan, s->o->spill_bps, f);
  if (fclose(f) != 0 || rc < 0) {
    snprintf(err, errlen, "%.300s: cannot write the platform file", path);
    unlink(path);
    return SL_EIO;
  }
  simgrid_load_platform(path);
  unlink(path);
  if (sl_sim_layout_generated(s->cluster, layout) < 0) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  return 0;
}

int sl__sim_load_platform(sim *s, sl_sim_layout *layout, char *err, size_t errlen)
{
  if (!s->o->platform_xml)
    return load_generated(s, layout, err, errlen);
  simgrid_load_platform(s->o->platform_xml);
  sl_cluster mine;
  int rc = sl_sim_platform_cluster(s->cluster->name, &mine, layout, err, errlen);
  if (rc == 0 && mine.nnodes != s->cluster->nnodes) {
    snprintf(err, errlen, "%s: the platform has %d nodes, the cluster %d", s->o->platform_xml, mine.nnodes,
             s->cluster->nnodes);
    rc = SL_EINVAL;
  }
  sl_cluster_free(&mine);
  return rc;
}

static sg_disk_t first_disk(sg_host_t h)
{
  unsigned n = 0;
  sg_disk_t *disks = NULL;
  sg_host_get_disks(h, &n, &disks);
  sg_disk_t d = n > 0 ? disks[0] : NULL;
  free(disks);
  return d;
}

int sl__sim_setup_nodes(sim *s, const sl_sim_layout *l, char *err, size_t errlen)
{
  const sl_cluster *c = s->cluster;
  s->nodes = calloc(c->nnodes, sizeof *s->nodes);
  int total = 0;
  for (int n = 0; n < c->nnodes; n++)
    total += sl_core_node_slots(s->core, n);
  s->slots = calloc(total > 0 ? total : 1, sizeof *s->slots);
  if (!s->nodes || !s->slots) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  s->nslots = total;
  int k = 0;
  for (int n = 0; n < c->nnodes; n++) {
    node_t *nd = &s->nodes[n];
    nd->cpu = sg_host_by_name(l->cpu[n]);
    nd->gpu = l->gpu[n][0] ? sg_host_by_name(l->gpu[n]) : NULL;
    if (!nd->cpu) {
      snprintf(err, errlen, "no host '%s' for node %d", l->cpu[n], n);
      return SL_EINVAL;
    }
    nd->alive = true;
    nd->disk = first_disk(nd->cpu);
    const sl_node_group *g = sl_cluster_node_group(c, n);
    if (nd->disk && sl_group_has_disk(g)) {
      nd->access_read_bytes = g->disk_latency_s * g->disk_read_bps;
      nd->access_write_bytes = g->disk_latency_s * g->disk_write_bps;
    }
    nd->budget = sl_cluster_node_group(c, n)->store_bytes;
    nd->nslots = sl_core_node_slots(s->core, n);
    nd->slots = &s->slots[k];
    nd->mtbf_next = s->o->mtbf_s > 0 ? sl__draw_exponential(s->o->mtbf_s, s->o->seed, STREAM_MTBF + (uint64_t)n, 0)
                                     : INFINITY;
    nd->mtbf_draws = 1;
    nd->join_at = INFINITY;
    nd->report_at = INFINITY;
    for (int j = 0; j < nd->nslots; j++, k++) {
      slot_t *w = &s->slots[k];
      w->s = s;
      w->node = n;
      w->slot = j;
      w->pulling_from = -1;
      w->wake = sg_sem_init(0);
      sl__sim_spawn_worker(s, w);
    }
  }
  s->storage = l->storage[0] ? sg_host_by_name(l->storage) : NULL;
  s->driver_host = sg_host_by_name(l->driver);
  if (!s->driver_host) {
    snprintf(err, errlen, "no host '%s' for the driver", l->driver);
    return SL_EINVAL;
  }
  return 0;
}
