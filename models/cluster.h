/**
 * @file cluster.h
 * @brief The cluster model: node groups expanded into nodes.
 *
 * Plain data filled by the spec parser (workloads/spec.h) or built in code
 * (tests, capacity search). Nodes are numbered 0..nnodes-1 in group order.
 */
#ifndef SL_CLUSTER_H
#define SL_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

#define SL_MAX_GROUPS 16

/** @brief Longest `hosts` list of a node group, NUL included. */
#define SL_HOSTS_MAX 1024

/** @brief A group of identical nodes. */
typedef struct {
  char name[SL_NAME_MAX];
  int line;
  int count;
  double cpu, gpu;          /**< slots per node */
  double memory_bytes;      /**< host memory per node */
  double store_bytes;       /**< partition store budget per node */
  double cpu_speed, gpu_speed; /**< relative to the cost model's speed 1 */
  double nic_bps;           /**< NIC bandwidth, bytes per second */
  double price_per_hour;    /**< dollars per node-hour */
  int min_count, max_count; /**< range a capacity search may use (spec keys min, max;
                                 max 0 = count) */
  char accelerator[SL_NAME_MAX]; /**< label of its GPUs ("a100"); "" = none */
  /* local disks, where spilled partitions go (all 0: none given) */
  int disks;                /**< how many, striped: their bandwidths add */
  double disk_read_bps, disk_write_bps; /**< of one disk, bytes per second */
  double disk_capacity_bytes; /**< of one disk; 0 = as much as is spilled */
  double disk_latency_s;    /**< what one access (a partition written, a block of one read back)
                                 keeps a disk busy before bytes flow: an HDD's seek, 0 = none */
  int elastic;              /**< a pool: its nodes start out of service, and the core acquires
                                 (and bills) them as its autoplacement decides; count is the most */
  double provision_delay_s; /**< elastic: from acquisition to service */
  char hosts[SL_HOSTS_MAX]; /**< the machines its nodes run on, one per node, comma separated, for
                                 `sluice run --launch ssh` ("": none given) */
  int hosts_count;          /**< how many it names: count, when given */
} sl_node_group;

/** @brief Whether nodes of @p g have a disk: spills on them take time. */
static inline bool sl_group_has_disk(const sl_node_group *g)
{
  return g->disks > 0 && g->disk_read_bps > 0 && g->disk_write_bps > 0;
}

/** @brief Bytes a node of @p g can hold spilled; INFINITY when not bounded. */
double sl_group_disk_capacity(const sl_node_group *g);

/** @brief One node, pointing back at its group. */
typedef struct {
  int group;
  int index_in_group;
} sl_node;

typedef struct {
  char name[SL_NAME_MAX];
  char path[256];
  double backbone_bps;       /**< bandwidth of the shared backbone */
  double latency_s;          /**< per-hop latency */
  double storage_bps;        /**< remote storage (S3-like) bandwidth, 0 = none */
  double storage_latency_s;
  double storage_get_bytes;     /**< what one GET moves at most (ranged GETs); 0: one per object */
  double storage_put_bytes;     /**< what one PUT moves at most (multipart upload parts); 0: one per object */
  double storage_get_price;     /**< dollars per 1,000 GET requests */
  double storage_put_price;     /**< dollars per 1,000 PUT requests */
  double storage_gb_month_price;/**< dollars per GB held for a month (730 hours) */
  int ngroups;
  sl_node_group groups[SL_MAX_GROUPS];
  int nnodes;
  sl_node *nodes;            /**< owned; sl_cluster_free() releases it */
} sl_cluster;

/**
 * @brief Stretches every transfer on @p c by @p factor > 0: bandwidths
 *        (NICs, backbone, storage, disks) divided by it, latencies
 *        multiplied. With sl_plan_scale_time(), a run at a time scale.
 */
void sl_cluster_scale_time(sl_cluster *c, double factor);

/**
 * @brief Whether the shared backbone can limit a transfer: it is slower
 *        than every node's NIC and the storage link together. Both engines
 *        model it only then, and the bound charges it only then.
 */
bool sl_cluster_backbone_binds(const sl_cluster *c);

/** @brief Expands groups into nodes. Returns 0 or SL_ENOMEM. */
int sl_cluster_expand(sl_cluster *c);

/** @brief Releases the node array; the struct itself is the caller's. */
void sl_cluster_free(sl_cluster *c);

/** @brief Deep copy of @p src into @p dst (dst's old content is not freed). */
int sl_cluster_copy(sl_cluster *dst, const sl_cluster *src);

/** @brief The group of node @p n. */
static inline const sl_node_group *sl_cluster_node_group(const sl_cluster *c, int n)
{
  return &c->groups[c->nodes[n].group];
}

/**
 * @brief Whether nodes of group @p g may run an operator pinned to @p want:
 *        an empty set allows every group, else the group's accelerator
 *        label must be one of the set's.
 */
bool sl_group_allows(const sl_node_group *g, const sl_accel_set *want);

/**
 * @brief The groups of @p c whose nodes may run an operator pinned to
 *        @p want, as a bit mask (bit g for group g; SL_MAX_GROUPS fits).
 */
uint32_t sl_cluster_allowed_groups(const sl_cluster *c, const sl_accel_set *want);

/** @brief The name of node @p n as schedules write it, "GROUP.INDEX"
 *  ("gpu.2"), into @p buf; "?" for an index out of range. */
void sl_cluster_node_name(const sl_cluster *c, int n, char *buf, size_t len);

/** @brief The machine node @p n runs on (its group's `hosts`, in order)
 *  into @p buf; false when its group names none. */
bool sl_cluster_node_host(const sl_cluster *c, int n, char *buf, size_t len);

/** @brief Total slots of a class (cpu when @p gpu is false) over all nodes. */
double sl_cluster_total(const sl_cluster *c, bool gpu);

/** @brief Sets every node group's store budget to @p bytes (--memory). */
void sl_cluster_set_store(sl_cluster *c, double bytes);

/** @brief Price of the whole cluster per hour. */
double sl_cluster_price_per_hour(const sl_cluster *c);

/** @brief The requests remote storage bills for reading (@p put false) or
 *  writing one object of @p bytes: ceil(bytes / the request size), one
 *  when no size is set, 0 for no bytes. */
double sl_storage_requests(const sl_cluster *c, double bytes, bool put);

/** @brief What a run costs, in dollars. */
typedef struct {
  double instances; /**< every node of the spec, billed by the second for the whole run */
  double requests;  /**< storage GETs and PUTs at the cluster's request prices */
  double held;      /**< storage holding the input for the whole run, the output from its upload on */
  double total;
} sl_run_cost;

/** @brief The cost of a run of @p jct_s seconds on @p c that made @p gets
 *  and @p puts storage requests and kept @p held_byte_s byte-seconds there
 *  (its input for the whole run, each output byte from its upload on). */
sl_run_cost sl_cluster_run_cost(const sl_cluster *c, double jct_s, double gets, double puts, double held_byte_s);

#endif
