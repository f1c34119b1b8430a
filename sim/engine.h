/**
 * @file engine.h
 * @brief The simulator: the scheduling core driven by SimGrid actors on a
 *        simulated cluster.
 *
 * The engine supplies time, executions and transfers; every decision comes
 * from the core (sl_core_next). It drives the core exactly as
 * tests/harness.h does:
 *
 * - one worker actor per slot of every node, on the node's CPU host, made at
 *   start (and again when a node joins or a worker is killed). A LAUNCH wakes
 *   the slot's worker; a worker that ends a task and is handed the next one
 *   on its own slot goes on without blocking.
 * - a task first pulls its inputs: rows x read_bytes_per_row from the
 *   storage host for a source task, and every input partition that lives on
 *   another node, one transfer per source node (sg_host_sendto, pulled by
 *   the worker). Then it computes its modelled time (sl_plan_task_time at
 *   speed 1, times a log-normal factor of mean 1 and coefficient of
 *   variation time_spread drawn from (seed, task id)) as one execution per
 *   output partition on the CPU host or on the node's GPU host, emitting a
 *   partition at the target size after each: rows come out evenly over the
 *   task. An emission the core refuses (SL_EAGAIN) waits for its RESUME and
 *   is retried; then the task reports sl_core_finished().
 * - one driver actor on the driver host, which never fails: it starts the
 *   core, ticks it at sl_core_wakeup(), samples the timeline, and applies
 *   the failure schedule. Any actor may call the core (actors run one at a
 *   time) and drains its decisions at once.
 *
 * A partition the core spills is written to the node's disk (SimGrid disk
 * "spill" at spill_bps) by the task that emitted it, before it goes on, and
 * read back by its consumer before the transfer.
 *
 * Failures. A node loss turns its hosts off (SimGrid kills their actors)
 * and tells the core with sl_core_node_lost(), which fails the node's tasks
 * itself: they are not reported again. A task elsewhere that was pulling
 * bytes from the lost node is killed first (a transfer whose source dies
 * would abort SimGrid) and reported with sl_core_failed(). A killed task
 * (`kill:` events) and a CANCEL decision kill the worker actor, report the
 * attempt with sl_core_failed() and start a fresh worker on the slot. A
 * `kill:` event that finds no running task of its operator takes the next
 * attempt of it that starts (it fails at once). Random losses (mtbf_s) hit
 * each node after an exponential time drawn from (seed, node), and the
 * node joins again repair_s later.
 *
 * SimGrid keeps its engine in process-wide state that cannot be reset, so
 * every run happens in a child process: a program may run many simulations
 * (tests, sweeps), and the child's memory and time are measured alone.
 */
#ifndef SL_SIM_ENGINE_H
#define SL_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "models/cluster.h"
#include "models/core.h"
#include "models/plan.h"
#include "results/record.h"
#include "models/faults.h"

typedef struct {
  const sl_plan *plan;       /**< borrowed */
  const sl_plan *charges;    /**< borrowed, may be NULL: the times tasks are charged at where they are
                                  not the plan's (sl_core_opts.charges): a cost file's, while the
                                  policy plans with the spec's as the real run did. Its bound is the
                                  run's (the summary's, as a real run's is from its measured costs) */
  const sl_cluster *cluster; /**< borrowed, expanded */
  const char *platform_xml;  /**< a hand-written platform whose cluster is @p cluster
                                  (sl_sim_platform_read), or NULL to generate one */
  sl_core_opts core;
  const sl_fault_schedule *faults; /**< borrowed, may be NULL (models/faults.h) */
  double mtbf_s;             /**< mean time between losses of each node, 0 = none */
  double repair_s;           /**< a lost node joins again after this, 0 = never */
  double node_timeout_s;     /**< a lost node's loss reaches the core this long after its host went
                                  down, as a head hears of a worker's loss when it has been silent
                                  that long (executor/head.h); meanwhile its slots run nothing and
                                  attempts that read from it wait to fail; 0 = at once */
  uint64_t seed;             /**< task time spreads and random losses */
  double spill_bps;          /**< disk bandwidth of a node's spills (write, then read back); 0: spills take no time */
  double launch_spacing_s;   /**< each task of a burst handed out at once starts this long after the one before,
                                  in a random order (the executor's, from calibrate's [dispatch]); 0: all at once */
  const double *handoff_s;   /**< per operator of the plan: how long after one of its tasks ends the
                                  tasks its finish launches may start (the executor's worker handing
                                  the finish to the core and back, from calibrate's time_handoff);
                                  NULL: at once */
  double sample_interval_s;  /**< timeline period; 0 = 1% of the bound */
  double time_limit_s;       /**< simulated time after which the run stops; 0 = 50 x bound + 1 h */
  double stall_timeout_s;    /**< fail a run that delivers no row and finishes no task for this long
                                  (simulated seconds), naming the stuck operator; 0 = never */
  bool keep_tasks;           /**< one tasks.csv row per attempt (off for huge runs) */
  bool lazy_solver;          /**< SimGrid re-solves only the flows an event touched (sl_sim_platform_configure()) */
  const char *out_dir;       /**< where the CSVs go; NULL writes nothing */
  const char *record_events; /**< write the events fed to the core here (results/events.h), or NULL */
} sl_sim_opts;

/** @brief The core options a simulation with @p o builds its core with (for a replay of its events). */
sl_core_opts sl_sim_core_opts(const sl_sim_opts *o);

/** @brief Defaults: streaming batch, no faults, seed 1, tasks kept. */
void sl_sim_opts_default(sl_sim_opts *o);

/** @brief What a run gives back (plain data). */
typedef struct {
  int code;                  /**< 0, or why the run could not start or finish writing */
  char err[512];
  sl_summary summary;        /**< as written to summary.csv */
  double wall_s;             /**< wall time of the simulation loop */
  double peak_rss_bytes;     /**< of the simulating process */
  int64_t attempts;          /**< task attempts started */
  int64_t faults_applied;    /**< schedule and random events that changed something */
  int64_t nodes_lost, nodes_joined, tasks_killed;
  int64_t transfers_cut;     /**< attempts killed because the node they pulled from was lost */
  double max_store_over_budget; /**< worst node store minus its budget seen after an emission */
  int64_t splits_wrong;      /**< source splits whose rows reached the sink more or fewer times than once */
  double sample_interval_s;
  bool timed_out;            /**< stopped at the time limit */
} sl_sim_result;

/**
 * @brief Simulates @p o->plan on @p o->cluster in a child process and fills
 *        @p r (also when the job fails: see r->summary.complete and note).
 * @return r->code: 0; SL_EINVAL when the core refuses the options; SL_EIO
 *         when the platform or the outputs cannot be written, or the child
 *         died (r->err says which).
 */
int sl_sim_run(const sl_sim_opts *o, sl_sim_result *r);

#endif
