/**
 * @file costs.h
 * @brief Cost models for the simulator: an INI file of per-operator costs
 *        that replace the plan's, written by `sluice calibrate` from a run's
 *        tasks.csv or by hand.
 *
 *     # comments start a line with '#' or ';', or follow a value after " ;"
 *     [transform]                 ; a physical operator, as `sluice plan` names it
 *     time_per_task = 0s          ; seconds per task at speed 1
 *     time_per_row = 50ms         ; seconds per input row at speed 1
 *     time_per_batch = 0s         ; seconds per batch (optional)
 *     time_setup = 0s             ; once per slot, before its first task of the operator
 *     time_spread = 0.05          ; coefficient of variation of task time
 *     time_noise = 0.01           ; and of a second factor, drawn apart from it
 *     rows_out_per_row = 1        ; output rows per input row
 *     out_row_bytes = 1MB         ; bytes of one output row
 *     tasks_observed = 800        ; informational (written by calibrate)
 *     rows_out_spread = 0         ; informational
 *     out_row_bytes_spread = 0    ; informational
 *     inflation = 0.25            ; informational: bytes out per byte in
 *
 * Every key is optional; the plan keeps what a section does not give. A
 * section that gives time_per_task or time_per_row without time_per_batch
 * sets time_per_batch to 0: the linear model replaces the spec's. The file
 * is read by the typed INI reader of the specs (workloads/typed_ini.h):
 * the same syntax and units (a time needs one), and its keys are in the
 * reference `sluice spec` prints (sl_sim_costs_schema()).
 */
#ifndef SL_SIM_COSTS_H
#define SL_SIM_COSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/cluster.h"
#include "models/plan.h"
#include "workloads/typed_ini.h"

enum {
  SL_COST_TIME_PER_TASK = 1 << 0,
  SL_COST_TIME_PER_ROW = 1 << 1,
  SL_COST_TIME_PER_BATCH = 1 << 2,
  SL_COST_TIME_SPREAD = 1 << 3,
  SL_COST_ROWS_OUT = 1 << 4,
  SL_COST_OUT_ROW_BYTES = 1 << 5,
  SL_COST_TIME_SETUP = 1 << 6,
  SL_COST_ROWS_FITTED = 1 << 7,
  SL_COST_TIME_HANDOFF = 1 << 8,
  SL_COST_TIME_NOISE = 1 << 9,
};

/** @brief The costs of one operator; @p set says which fields were given. */
typedef struct {
  char op[2 * SL_NAME_MAX];
  int line;
  unsigned set;
  double time_per_task, time_per_row, time_per_batch, time_spread;
  double time_noise; /**< coefficient of variation of a factor drawn apart from time_spread's: what
                          the run varied beyond the factors it drew */
  double time_setup; /**< once per slot before its first task of the operator */
  double time_handoff; /**< after a task of it ends, before the tasks its finish launches may start:
                            the engine's, not the operator's work, so at no node speed */
  int64_t handoffs_observed; /**< calibrate: finishes whose handoff the run measured */
  double rows_out_per_row, out_row_bytes;
  double rows_fitted; /**< the one rows_in every attempt the fit saw had (0: they varied): the
                           simulation then keeps the spec's split between task, batch and row
                           costs, scaled to the time measured */
  /* what calibration saw; informational */
  int64_t tasks_observed;
  double rows_out_spread, out_row_bytes_spread;
  double inflation; /**< measured bytes out per byte in (informational; 0: not measured) */
  int op_index;     /**< calibrate: the operator's index in the run, for order */
  int rows_varied;  /**< calibrate: whether rows_in varied, so the fit could split task and row costs */
  int64_t fresh_observed; /**< calibrate: attempts that were their slot's first of the operator */
  int setup_told;   /**< calibrate: whether enough later attempts let the fit tell set-up apart */
} sl_sim_op_cost;

/** @brief A node group's link as a run's transfers saw it ([link GROUP]). */
typedef struct {
  char group[SL_NAME_MAX];
  int line;
  double nic_bps;   /**< the bandwidth one node of the group received at, shared by its transfers at once */
  double latency_s; /**< what a transfer took beyond its bytes: the request and the route */
  /* what calibration saw; informational */
  int64_t transfers;
  double bytes;
} sl_sim_link;

/** @brief A cost model: plain data, owned by the caller. */
/** @brief The sections of a cost file that are not an operator's: [spill disk], [dispatch], [run]. */
#define SL_SIM_COSTS_WHOLE_SECTIONS 3

typedef struct {
  char path[256];
  int n;
  sl_sim_op_cost ops[SL_MAX_OPS];
  /* [spill disk]: the disk a run spilled to, as calibrate measured it (0: not given) */
  double disk_read_bps, disk_write_bps;
  double disk_read_bytes, disk_write_bytes; /**< calibrate: what the measure rests on */
  /* [dispatch]: how the engine started a burst of tasks handed out at once
   * (0: not given). The executor wakes their workers one after another, in
   * an order the host's scheduler picks: the k-th to start waits about k
   * launch spacings, whatever the node's speed. */
  double launch_spacing_s;
  int bursts_observed, burst_launches_observed; /**< calibrate: what the fit rests on */
  /* [run]: the --time-scale of the calibrated run (0: not given, as 1). Its
   * times are in the fit already; its links ran scaled too, and a
   * simulation with these costs scales the cluster's the same way
   * (sl_sim_costs_apply_links()). */
  double time_scale;
  /* [run]: the system cost profile the calibrated run charged ("": none,
   * the ideal): its costs are in the fit, and a simulation that adds a
   * profile to these costs charges it twice. */
  char profile[48];
  /* [link GROUP]: the NIC of each node group whose nodes received
   * transfers, as calibrate fitted it from them */
  sl_sim_link links[SL_MAX_GROUPS];
  int nlinks;
  int in_link; /* parsing: the [link] section being read (-1: none) */
  /* parsing: where [spill disk], [dispatch] and [run] began (0: not seen), and
   * which of them is being read (-1: an operator's section) */
  int whole_line[SL_SIM_COSTS_WHOLE_SECTIONS];
  int in_whole;
} sl_sim_costs;

/** @brief The section of a cost file that gives the spill disk. */
#define SL_SIM_COSTS_DISK_SECTION "spill disk"
/** @brief The section of a cost file that gives the engine's launch spacing. */
#define SL_SIM_COSTS_DISPATCH_SECTION "dispatch"
/** @brief How the section of a cost file that gives a node group's link begins: [link GROUP]. */
#define SL_SIM_COSTS_LINK_PREFIX "link "
/** @brief The section of a cost file that gives the calibrated run's time scale. */
#define SL_SIM_COSTS_RUN_SECTION "run"

/**
 * @brief Scales the links of @p cl (sl_cluster_scale_time()) by the
 *        calibrated run's time scale, where @p c gives one: the run's NICs,
 *        storage and disks ran that much faster or slower than its cluster
 *        spec says. Then gives each group that has a [link GROUP] its
 *        measured NIC, and the cluster the mean measured latency (weighted
 *        by transfers): measured values are the run's own, at its scale.
 *        Before sl_sim_costs_apply_disk(), whose disk is measured.
 * @return 0, or SL_EPARSE ("FILE:LINE: no node group 'x' ...") in @p err.
 */
int sl_sim_costs_apply_links(const sl_sim_costs *c, sl_cluster *cl, char *err, size_t errlen);

/**
 * @brief Gives every node group of @p cl that has no disk of its own the
 *        spill disk of @p c (one disk, its read and write bandwidths). A
 *        group's own disk stays. No-op when @p c gives none.
 */
void sl_sim_costs_apply_disk(const sl_sim_costs *c, sl_cluster *cl);

/** @brief The keys of a cost file, for the reference (static storage). */
const sl_ini_schema *sl_sim_costs_schema(void);

/**
 * @brief Reads the cost file at @p path.
 * @return 0; SL_EIO when it cannot be read; SL_EPARSE with
 *         "FILE:LINE: what is wrong" in @p err.
 */
int sl_sim_costs_load(const char *path, sl_sim_costs *out, char *err, size_t errlen);

/**
 * @brief Replaces the costs of @p plan's operators with those of @p c and
 *        updates what depends on them (row sizes downstream, rows reaching
 *        each operator, the sink's rows).
 * @return 0, or SL_EPARSE ("FILE:LINE: no operator 'x' ...") in @p err.
 */
int sl_sim_costs_apply(const sl_sim_costs *c, sl_plan *plan, char *err, size_t errlen);

/**
 * @brief sl_sim_costs_apply() of what @p c says of the data alone (rows
 *        out per row, output row sizes): the plan a policy of a calibrated
 *        simulation plans with, as the run it replays planned with the
 *        spec's times but made the data it measured.
 */
int sl_sim_costs_apply_data(const sl_sim_costs *c, sl_plan *plan, char *err, size_t errlen);

/**
 * @brief The time_handoff of each operator of @p plan into @p out (0 where
 *        @p c gives none), for sl_sim_opts.handoff_s. True when any is above 0.
 *        Call after sl_sim_costs_apply(), which has checked the names.
 */
bool sl_sim_costs_handoffs(const sl_sim_costs *c, const sl_plan *plan, double out[SL_MAX_OPS]);

/**
 * @brief Fits a cost model to RUN_DIR/tasks.csv: per operator (op_name),
 *        over attempts with status done, the least squares of duration
 *        (end_s - start_s) on rows_in, output rows per input row and output
 *        bytes per row, with their spreads (coefficients of variation of the
 *        relative residuals). Durations include input transfers and any
 *        wait for memory: calibrate from a run that did not backpressure.
 *        When rows_in does not vary the fit cannot split per-task from
 *        per-row cost; it puts it all in time_per_row.
 * @param workload  out: the workload named in RUN_DIR/summary.csv ("" if none)
 * @return 0; SL_EIO (no tasks.csv); SL_EPARSE ("FILE:LINE: ...") in @p err.
 */
int sl_sim_calibrate(const char *run_dir, sl_sim_costs *out, char *workload, size_t wlen, char *err, size_t errlen);

/** @brief Writes @p c as a cost file with a header naming @p source. 0 or SL_EIO. */
int sl_sim_costs_write(const sl_sim_costs *c, const char *source, const char *workload, FILE *f);

#endif
