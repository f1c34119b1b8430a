/**
 * @file platform.h
 * @brief A cluster spec as a SimGrid platform, and a SimGrid platform as a
 *        cluster.
 *
 * The generated platform is one zone with routing="Cluster":
 *
 *   node N      host "nN": the CPUs, one core per CPU slot the core hands
 *               out (a 0.5-CPU operator gets two slots per CPU, each at full
 *               speed: slots are logical, as in Ray), speed cpu_speed Gf;
 *               host "nN-gpu" when the node has GPUs: one core per GPU slot,
 *               speed gpu_speed Gf. Both hosts sit behind the node's NIC,
 *               link "nic-N" (SPLITDUPLEX, nic bandwidth, latency/2).
 *               With a spill bandwidth, "nN" has a disk "spill" that reads and
 *               writes at it: spilled partitions are written there and read
 *               back by their consumer.
 *   "storage"   remote storage (S3-like), only when storage_bandwidth > 0,
 *               behind link "storage" (SPLITDUPLEX, storage bandwidth,
 *               storage latency): every read shares its bandwidth.
 *   "driver"    the scheduler's own host (the core runs there); never fails.
 *   backbone    backbone bandwidth, no latency.
 *
 * Speeds: 1 Gf is the cost model's speed 1, so a task of 1 s at speed 1
 * takes 1 simulated second on a node of cpu_speed 1 (SL_SIM_FLOPS flops per
 * cost-model second). Network: CM02 with TCP-gamma 0 and no cross traffic
 * (sl_sim_platform_configure), so a transfer takes the route's latency plus
 * bytes over its narrowest share of bandwidth: node to node, latency +
 * bytes/nic; storage to node, storage latency + latency/2 + bytes/share.
 * Bandwidths and latencies of 0 mean unlimited and none.
 *
 * A platform XML written by hand can replace the generated one. Convention:
 *   <host ...> with <prop id="kind" value="cpu"/> is a node: its cores are its
 *     CPU slots, its speed / 1 Gf its cpu_speed; optional props group (node
 *     group name, default "xml"), memory, store (sizes with units, default
 *     memory 16GB and store 30% of it), price_per_hour;
 *   kind=gpu with <prop id="node" value="CPU_HOST_ID"/>: that node's GPUs
 *     (cores = GPU slots, speed / 1 Gf = gpu_speed);
 *     a <disk> of a node's CPU host is where its spilled partitions go;
 *   kind=storage: remote storage (its route bandwidth and latency to the
 *     first node become storage_bandwidth and storage_latency);
 *   kind=driver: the scheduler's host (required unless there is a storage
 *     host, which then doubles as the driver's; neither may fail).
 * Nodes are numbered by group, in order of first appearance in the host
 * list (sorted by name), then by host name within a group. Nodes of one
 * group must agree on cores, speeds, memory and store.
 */
#ifndef SL_SIM_PLATFORM_H
#define SL_SIM_PLATFORM_H

#include <stdio.h>

#include "models/cluster.h"
#include "models/plan.h"

/** @brief Flops per cost-model second at speed 1 (1 Gf). */
#define SL_SIM_FLOPS 1e9

#define SL_SIM_HOST_MAX 64

/** @brief Which SimGrid hosts play which part. Owned by the caller;
 *  sl_sim_layout_free() releases the arrays. */
typedef struct {
  int nnodes;
  char (*cpu)[SL_SIM_HOST_MAX]; /**< per node: its CPU host */
  char (*gpu)[SL_SIM_HOST_MAX]; /**< per node: its GPU host, "" when none */
  char storage[SL_SIM_HOST_MAX]; /**< "" when there is no remote storage */
  char driver[SL_SIM_HOST_MAX];
} sl_sim_layout;

/** @brief CPU cores and GPU cores of node group @p g's hosts for @p plan. */
void sl_sim_platform_cores(const sl_plan *plan, const sl_node_group *g, int *cpu_cores, int *gpu_cores);

/**
 * @brief Writes the platform of @p c (expanded) for @p plan to @p f; each
 *        node gets a spill disk of @p spill_bps bytes per second (0: none).
 * @return 0 or SL_EIO.
 */
int sl_sim_platform_write(const sl_cluster *c, const sl_plan *plan, double spill_bps, FILE *f);

/** @brief The host names of the generated platform. 0 or SL_ENOMEM. */
int sl_sim_layout_generated(const sl_cluster *c, sl_sim_layout *out);

void sl_sim_layout_free(sl_sim_layout *l);

/**
 * @brief Sets the network model (CM02, TCP-gamma 0, no cross traffic), the
 *        actor stack size and quiet logs. Call after simgrid_init() and
 *        before loading a platform. SimGrid re-solves every flow's share
 *        at each event (network/optim:Full) unless @p lazy_solver, which
 *        re-solves only the flows an event touched (Lazy). Lazy is not
 *        safe here: in SimGrid 3.32 it lets flows whose links have latency
 *        through faster than their links allow where the links' bandwidths
 *        differ (reads from storage into nodes of 80 and 40 Mbps NICs:
 *        a job done in 192 s, 125% of its bound, where the NICs allow no
 *        less than 240 s; Full: 340 s). Full is also no slower on the zoo,
 *        and 1.8x faster on a shuffle on 100 nodes.
 */
void sl_sim_platform_configure(bool lazy_solver);

/**
 * @brief Reads the loaded SimGrid platform (hand-written, see above) as a
 *        cluster named @p name, with its layout. Call after the platform is
 *        loaded. The caller frees both (sl_cluster_free, sl_sim_layout_free).
 * @return 0, or SL_EPARSE with a message in @p err.
 */
int sl_sim_platform_cluster(const char *name, sl_cluster *c, sl_sim_layout *l, char *err, size_t errlen);

/**
 * @brief Loads the platform XML at @p path in a child process (SimGrid
 *        cannot be reset once loaded) and returns its cluster in @p c
 *        (expanded; free with sl_cluster_free()).
 * @return 0, SL_EPARSE or SL_EIO with a message in @p err.
 */
int sl_sim_platform_read(const char *path, sl_cluster *c, char *err, size_t errlen);

#endif
