#include "cluster.h"

#include <math.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

_Static_assert(SL_MAX_GROUPS <= 32, "group masks are 32-bit");

/* Node count of @p c, or -1 when a group count is negative or the sum overflows. */
static int sl__cluster_count_nodes(const sl_cluster *c)
{
  long long n = 0;
  for (int g = 0; g < c->ngroups; g++) {
    if (c->groups[g].count < 0)
      return -1;
    n += c->groups[g].count;
    if (n > INT_MAX / (long long)sizeof(sl_node))
      return -1;
  }
  return (int)n;
}

/*
 * c->nodes is overwritten, not freed: a struct built in code may hold garbage
 * there, and freeing garbage is worse than a leak. Re-expanding a cluster
 * therefore takes sl_cluster_free() first.
 */
double sl_group_disk_capacity(const sl_node_group *g)
{
  if (!sl_group_has_disk(g) || !(g->disk_capacity_bytes > 0))
    return INFINITY;
  return g->disks * g->disk_capacity_bytes;
}

/* A NIC of no limit is as fast as any backbone: the sum is then infinite.
 * Nodes are counted by group, so the answer holds before expansion too. */
void sl_cluster_scale_time(sl_cluster *c, double factor)
{
  c->backbone_bps /= factor;
  c->storage_bps /= factor;
  c->latency_s *= factor;
  c->storage_latency_s *= factor;
  for (int g = 0; g < c->ngroups; g++) {
    sl_node_group *grp = &c->groups[g];
    grp->nic_bps /= factor;
    grp->disk_read_bps /= factor;
    grp->disk_write_bps /= factor;
    grp->disk_latency_s *= factor;
    grp->provision_delay_s *= factor;
  }
}

bool sl_cluster_backbone_binds(const sl_cluster *c)
{
  if (!(c->backbone_bps > 0) || !isfinite(c->backbone_bps))
    return false;
  double nics = c->storage_bps > 0 ? c->storage_bps : 0;
  for (int g = 0; g < c->ngroups; g++) {
    double b = c->groups[g].nic_bps;
    if (c->groups[g].count > 0)
      nics += b > 0 && isfinite(b) ? c->groups[g].count * b : INFINITY;
  }
  return c->backbone_bps < nics;
}

int sl_cluster_expand(sl_cluster *c)
{
  int n = sl__cluster_count_nodes(c);
  if (n < 0)
    return SL_EINVAL;
  sl_node *nodes = NULL;
  if (n > 0) {
    nodes = malloc((size_t)n * sizeof *nodes);
    if (!nodes)
      return SL_ENOMEM;
  }
  int k = 0;
  for (int g = 0; g < c->ngroups; g++)
    for (int i = 0; i < c->groups[g].count; i++)
      nodes[k++] = (sl_node){.group = g, .index_in_group = i};
  c->nodes = nodes;
  c->nnodes = n;
  return 0;
}

void sl_cluster_free(sl_cluster *c)
{
  if (!c)
    return;
  free(c->nodes);
  c->nodes = NULL;
  c->nnodes = 0;
}

int sl_cluster_copy(sl_cluster *dst, const sl_cluster *src)
{
  *dst = *src;
  dst->nodes = NULL;
  if (src->nnodes <= 0 || !src->nodes) {
    dst->nnodes = 0;
    return 0;
  }
  dst->nodes = malloc((size_t)src->nnodes * sizeof *dst->nodes);
  if (!dst->nodes) {
    dst->nnodes = 0;
    return SL_ENOMEM;
  }
  memcpy(dst->nodes, src->nodes, (size_t)src->nnodes * sizeof *dst->nodes);
  return 0;
}

bool sl_group_allows(const sl_node_group *g, const sl_accel_set *want)
{
  return want->n == 0 || (g->accelerator[0] && sl_accel_set_has(want, g->accelerator));
}

uint32_t sl_cluster_allowed_groups(const sl_cluster *c, const sl_accel_set *want)
{
  uint32_t mask = 0;
  for (int g = 0; g < c->ngroups && g < SL_MAX_GROUPS; g++)
    if (sl_group_allows(&c->groups[g], want))
      mask |= 1u << g;
  return mask;
}

void sl_cluster_node_name(const sl_cluster *c, int n, char *buf, size_t len)
{
  if (!c->nodes || n < 0 || n >= c->nnodes) {
    snprintf(buf, len, "?");
    return;
  }
  snprintf(buf, len, "%s.%d", sl_cluster_node_group(c, n)->name, c->nodes[n].index_in_group);
}

bool sl_cluster_node_host(const sl_cluster *c, int n, char *buf, size_t len)
{
  if (len)
    buf[0] = '\0';
  if (!c->nodes || n < 0 || n >= c->nnodes)
    return false;
  const char *s = sl_cluster_node_group(c, n)->hosts;
  for (int i = 0; *s; i++) {
    while (*s == ' ' || *s == '\t')
      s++;
    size_t k = strcspn(s, ", \t");
    if (i == c->nodes[n].index_in_group) {
      snprintf(buf, len, "%.*s", (int)k, s);
      return k > 0;
    }
    s += k;
    s += strspn(s, " \t");
    if (*s == ',')
      s++;
  }
  return false;
}

/* Summed over groups rather than nodes, so it also works before expansion. */
double sl_cluster_total(const sl_cluster *c, bool gpu)
{
  double total = 0;
  for (int g = 0; g < c->ngroups; g++)
    total += c->groups[g].count * (gpu ? c->groups[g].gpu : c->groups[g].cpu);
  return total;
}

void sl_cluster_set_store(sl_cluster *c, double bytes)
{
  for (int g = 0; g < c->ngroups; g++)
    c->groups[g].store_bytes = bytes;
}

double sl_cluster_price_per_hour(const sl_cluster *c)
{
  double price = 0;
  for (int g = 0; g < c->ngroups; g++)
    price += c->groups[g].count * c->groups[g].price_per_hour;
  return price;
}

double sl_storage_requests(const sl_cluster *c, double bytes, bool put)
{
  double size = put ? c->storage_put_bytes : c->storage_get_bytes;
  if (!(bytes > 0))
    return 0;
  return size > 0 ? ceil(bytes / size) : 1;
}

/* S3 bills storage per GB-month, prorated over a 730-hour month. */
#define SL_HOURS_PER_MONTH 730.0

sl_run_cost sl_cluster_run_cost(const sl_cluster *c, double jct_s, double gets, double puts, double held_byte_s)
{
  sl_run_cost r = {0};
  double hours = jct_s > 0 ? jct_s / 3600 : 0;
  r.instances = sl_cluster_price_per_hour(c) * hours;
  r.requests = (gets * c->storage_get_price + puts * c->storage_put_price) / 1000;
  r.held = held_byte_s / 1e9 / 3600 * c->storage_gb_month_price / SL_HOURS_PER_MONTH;
  r.total = r.instances + r.requests + r.held;
  return r;
}
