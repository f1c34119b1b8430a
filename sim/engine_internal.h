/*
 * What the simulator's files share: the simulation, its nodes and its
 * worker slots. engine.c runs the actors (the decisions, the workers, the
 * driver), faults.c applies faults, setup.c lays the cluster out on the
 * platform's hosts, run.c runs one simulation from start to end. Internal
 * to sim/; actors run one at a time, so none of it needs a lock.
 */
#ifndef SL_SIM_ENGINE_INTERNAL_H
#define SL_SIM_ENGINE_INTERNAL_H

#include <simgrid/forward.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results/events.h"
#include "sim/engine.h"
#include "sim/platform.h"
#include "sim/sink.h"

#define EPS 1e-9

/* rng streams */
enum { STREAM_MTBF = 2 }; /* models/core.c draws spreads on stream 1; node n's losses on 2 + n */
#define STREAM_LAUNCH (UINT64_C(1) << 40) /* the order a burst's workers start in */

typedef struct sim_s sim;

/* One worker slot. The attempt fields are valid while busy. */
typedef struct {
  sim *s;
  int node, slot;
  sg_actor_t actor; /* NULL while the node is down */
  sg_sem_t wake;    /* a LAUNCH or a RESUME for this slot */
  bool busy;        /* the core holds the slot for task */
  bool waiting;     /* an emission was refused: RESUME pending */
  bool doomed;      /* a kill found nothing running: this attempt dies at start */
  int draining;     /* the worker is handling decisions (drain()): it must not be killed */
  bool settled;     /* the worker actor has started (daemonized) */
  bool parked;      /* the worker waits on wake */
  int tokens;       /* wake releases it has not consumed yet */
  int pulling_from; /* node whose bytes the worker receives now, -1 */
  sl_task_id task;
  uint32_t origin;
  int op, attempt;
  int64_t split, rows_in;
  double bytes_in, start;
  double launch_delay; /* from the LAUNCH to the worker starting it (--costs [dispatch]) */
  double handoff_delay; /* before that: the finish that launched it reaching the core and back
                           (--costs' time_handoff of the finishing operator) */
  double speed; /* of the node's resource the attempt runs on */
  double spread; /* the order's spread factor, in its charged time */
  bool fresh;    /* the order sets its operator up on this slot */
  bool first_chunk_only; /* outputs at the end: all the work before the first emission */
  double waited; /* held by backpressure so far */
  double transfer; /* receiving its inputs: storage reads and remote partitions */
  double transfer_bytes; /* the bytes received so */
  bool input_lost;  /* an input's node is lost, and the core does not know yet */
  /* the spill disk: outputs written, spilled inputs read back (seconds, bytes) */
  double spill_write_s, spill_write_bytes, spill_read_s, spill_read_bytes;
  sl_input *inputs;   /* the order's inputs, copied: where to pull them from */
  int ninputs, inputs_cap;
  double work_flops;  /* the attempt's whole charge */
  double setup_s, work_s; /* the order's: sl_emit_share() paces the emissions by them */
  int64_t rows_out, emitted_rows, rows_per_flush;
  uint32_t nflush, next;
  double row_bytes, bytes_out;
  int parts_out;
  sl_sim_rows in;     /* the attempt's input rows by split (sim/sink.h) */
} slot_t;

typedef struct {
  sg_host_t cpu, gpu;
  sg_disk_t disk; /* where spilled partitions go, NULL: spills take no time */
  /* one access (its group's disk_latency) as the bytes one disk would have
   * moved meanwhile: striped disks serve accesses side by side, so each
   * costs the aggregate one disk's worth of its time */
  double access_read_bytes, access_write_bytes;
  bool alive;
  bool dying; /* lose_node() is taking it down: no transfer from it may start */
  int nslots;
  slot_t *slots;
  double budget;
  /* random losses */
  double mtbf_next;
  uint64_t mtbf_draws;
  double join_at; /* an acquired pool node: when it is in service, INFINITY: none */
  /* a loss the core has not heard of yet (sl_sim_opts.node_timeout_s) */
  double report_at;        /* when it hears, INFINITY: nothing pending */
  sl_task_id *unreported;  /* attempts elsewhere that read from it, failed when it hears */
  int nunreported, capunreported;
} node_t;

struct sim_s {
  const sl_sim_opts *o;
  const sl_plan *plan;
  const sl_cluster *cluster;
  sl_core *core;
  sl_recorder *rec;
  sl_event_log *events; /* what the core was fed, with --record-events */
  sl_sim_result *res;
  node_t *nodes;
  slot_t *slots;
  int nslots;
  uint64_t launch_draws; /* the burst orders drawn so far (--costs [dispatch]) */
  sg_host_t storage, driver_host;
  sg_actor_t driver;
  /* the driver's sleep: workers wake it when the core wants a tick sooner */
  sg_sem_t driver_sem;
  bool driver_signalled, in_driver;
  double driver_wake_at;
  sl_sim_sink *sink; /* rows delivered by split, and which splits each partition holds */
  /* run state */
  bool done, failed;
  bool spilled_without_disk; /* a node with no disk spilled: that took no time */
  int fail_code;
  double end_time;
  int next_fault;
  sl_fault_log fault_log; /* what became of each scheduled fault */
  double interval, next_sample, last_sample, time_limit;
  char fail_note[320]; /* why the job failed, in results/failure.h's words */
};

/* ------------------------------------------------ engine.c, for the others */

/** @brief Records the attempt on @p w as ended at @p end with @p status (with keep_tasks). */
void sl__sim_record(sim *s, const slot_t *w, sl_task_status status, double end);
/** @brief Whether the worker of @p w may be killed with its host now (engine.c says when not). */
bool sl__sim_settled(const slot_t *w);
/** @brief Replaces the worker of @p w by a fresh one, unless it is running or handling decisions. */
void sl__sim_restart_worker(sim *s, slot_t *w);
/** @brief Records the attempt on @p w with @p status and stops it: its worker is replaced. */
void sl__sim_kill_attempt(sim *s, slot_t *w, sl_task_status status, double now);
/** @brief Takes the core's decisions after an event other than a finish. */
void sl__sim_drain(sim *s, double now);
/** @brief Starts a worker actor for slot @p w on its node's CPU host. */
void sl__sim_spawn_worker(sim *s, slot_t *w);
/** @brief The driver actor: starts and ticks the core, samples, applies faults, ends the run. */
void sl__sim_driver_main(int argc, char **argv);

/* ------------------------------------------------ faults.c, for engine.c */

/** @brief A timeline row marking a fault of @p kind on @p node (-1: none) or @p op (-1: any). */
void sl__sim_mark_fault(sim *s, double now, const char *kind, int node, int op);
/** @brief When the next fault is due: scheduled, random, or an acquired node in service. */
double sl__sim_next_fault_time(const sim *s);
/** @brief Attempt @p task read from lost node @p n: it fails when the core hears of the loss. */
void sl__sim_unreported(sim *s, int n, sl_task_id task);
/** @brief Applies every fault due at @p now, while the job runs. */
void sl__sim_apply_faults(sim *s, double now);

/* ------------------------------------------------ setup.c, for run.c */

/** @brief Loads the platform (given or generated) and fills @p layout; SL_E* with @p err. */
int sl__sim_load_platform(sim *s, sl_sim_layout *layout, char *err, size_t errlen);
/** @brief Binds the nodes to the hosts of @p l and starts a worker per slot; SL_E* with @p err. */
int sl__sim_setup_nodes(sim *s, const sl_sim_layout *l, char *err, size_t errlen);

#endif
