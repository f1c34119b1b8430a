/**
 * @file core_internal.h
 * @brief The core's state, shared by the mechanics (core.c: tasks, partitions
 *        and events; shuffle.c: the all-to-all's tasks; lineage.c: lineage
 *        and recovery; memory.c: the stores; placement.c: node fitting;
 *        idle.c: the capacity account) and the policies (policy_*.c:
 *        decisions).
 *
 * Not for engines: they see core.h only.
 */
#ifndef SL_CORE_INTERNAL_H
#define SL_CORE_INTERNAL_H

#include "core.h"
#include "idqueue.h"

typedef enum {
  SL__P_ALIVE,   /**< bytes in a node's store */
  SL__P_SPILLED, /**< bytes on a node's local disk */
  SL__P_LOST,    /**< its node died; regenerate through lineage if needed */
  SL__P_FREED,   /**< consumed; only lineage metadata remains */
} sl__pstate;

typedef struct {
  sl_task_id producer; /**< origin task (lineage) */
  uint32_t index;      /**< position among the producer's outputs */
  int32_t node;
  int32_t refs;        /**< consumer tasks that still need it */
  int16_t op;          /**< producing operator */
  uint8_t state;       /**< sl__pstate */
  uint8_t in_queue;    /**< waiting in the next operator's input queue */
  uint8_t spilled;     /**< emitted to its node's disk (kept when it is lost or freed) */
  uint8_t fresh;       /**< the last output of an attempt whose finish is pending or has just come */
  int64_t rows;
  double bytes;
  int64_t split;       /**< source split it descends from (first input's) */
  uint64_t key;        /**< the data it holds: its producer's key and its index (core.c data_key()) */
  sl_task_id consumer; /**< origin task that took it, SL_NONE while queued */
  int32_t range_lo, range_hi; /**< a merge stage's output: the reducers' shares [lo, hi) it holds
                                   (0, 0: every share) */
  int64_t share_off;   /**< where its rows begin in the row stream of its operator's outputs: an
                            all-to-all after it deals that stream to its shares in turn */
  double queued_at;    /**< when it last entered an input queue */
} sl__part;

typedef enum {
  SL__T_QUEUED,   /**< ready to launch (a retry or a lineage re-run) */
  SL__T_BLOCKED,  /**< waits for lost inputs to be regenerated */
  SL__T_RUNNING,
  SL__T_DONE,
  SL__T_DEAD,     /**< failed or cancelled attempt, replaced by another */
} sl__tstate;

/**
 * @brief A task attempt. The first attempt of a piece of work is its
 *        origin and owns what lineage needs (inputs, outputs by index);
 *        later attempts point at it.
 */
typedef struct {
  sl_task_id origin;
  sl_task_id current;  /**< origin only: the live attempt, or SL_NONE */
  int16_t op;
  uint8_t state;       /**< sl__tstate */
  uint8_t waiting;     /**< an emission was refused; RESUME pending */
  uint8_t pinned;      /**< origin: its inputs' refs are held */
  uint8_t finished_once; /**< origin: output count is known */
  uint8_t spill_next;  /**< the liveness rule lets the next emission spill */
  uint8_t out_rows_set;/**< origin: out_rows is fixed (at its first launch) */
  uint8_t finishing;   /**< made its work order's last output: its slot frees at once */
  int32_t node, slot;
  int32_t attempt;
  int32_t instance;    /**< static placement: instance index, else -1 */
  int32_t share;       /**< origin of an all-to-all task: the first reducer share it reads, else -1 */
  int32_t share_end;   /**< origin of an all-to-all task: past the last share it reads */
  int32_t home;        /**< origin: the node it should run on when it fits (a push merge's), else -1 */
  uint32_t nemitted;   /**< outputs emitted by this attempt */
  uint32_t out_parts;  /**< outputs its work order makes (its LAUNCH's out_parts) */
  sl_part_id last_out; /**< while finishing: the last output it made, else SL_NONE */
  uint32_t nouts, outs_cap; /**< origin: outputs recorded so far */
  sl_part_id *outs;    /**< origin: output partitions by index (owned) */
  sl_part_id *inputs;  /**< origin: input partitions (owned) */
  int32_t ninputs;
  int64_t split;
  int64_t rows;
  int64_t out_rows;    /**< origin: rows its attempts make (see out_rows_of()) */
  uint64_t key;        /**< origin: the data it works on, fixed at its first launch (data_key()) */
  double bytes;
  double start;
  double paused_s;     /**< seconds this attempt was paused for memory (idle.c) */
  double pending_bytes;/**< size of the refused emission */
  double out_bytes;    /**< bytes emitted by this attempt */
  double cpu, gpu;     /**< resources held while running */
  double charge_end;   /**< while running: when its work order's charge ends, at its speed */
  uint32_t run_pos;    /**< while running: its index in its operator's running list */
  int pull_from;       /**< while running: the node its largest remote input came from, -1 none */
} sl__task;

typedef struct {
  bool alive;
  double cpu_total, gpu_total;
  double cpu_free, gpu_free;
  double store_budget, store_used, store_peak;
  double disk_used, disk_capacity; /**< bytes spilled here and alive; what its disks hold (INFINITY: any) */
  int nslots, nfree;
  int nfinishing;      /**< running attempts past their last output (sl__task.finishing) */
  double cpu_finishing, gpu_finishing; /**< what they hold */
  int *free_slots;     /**< stack of free slot ids (LIFO keeps workers warm) */
  uint32_t *set_up;    /**< per slot: bit op set once the slot has set operator op up
                            (time_setup paid); cleared when the node (re)joins */
  sl__idq waiting;     /**< running tasks whose emission waits for memory */
  int op_running[SL_MAX_OPS];        /**< per operator: attempts running here */
  double op_running_out[SL_MAX_OPS]; /**< per operator: what they emitted so far */
  int pulls;           /**< running attempts elsewhere whose largest input lives here: the
                            transfers its NIC serves at once, as the core counts them */
  int held_for;        /**< the operator a policy keeps the capacity this node frees for
                            (sl__fits() refuses the others), -1: none */
  /* the elastic pool (autoplace.c) */
  bool elastic;        /**< of an elastic group: in service only while acquired */
  bool acquired;       /**< elastic: billed (from acquired_at), in service or on its way */
  bool draining;       /**< elastic: to be released once empty: sl__fits() refuses it */
  double acquired_at, billed_s; /**< elastic: since when, and the seconds of earlier tenures */
  double pre_cpu;      /**< CPUs held here by CPU-only operators (preprocessing) */
} sl__node;

typedef struct {
  sl__idq inq;         /**< input partitions not yet given to a task */
  sl__idq retryq;      /**< attempts ready to launch (retries, re-runs) */
  int64_t next_split;  /**< sources: next split to launch */
  int running, waiting;
  int active;          /**< attempts queued, blocked or running */
  int64_t tasks_done;
  int64_t rows_launched; /**< input rows of the tasks launched so far (origins) */
  double buffered;     /**< output bytes alive and not yet consumed */
  double in_queue_bytes;
  int64_t rows_out;    /**< rows of every partition it made so far: the next one's share_off */
  double cpu_used, gpu_used;
  double used_s[2];    /**< CPU and GPU slot-seconds held so far (to used_at): what a
                            policy averages holdings over a period with */
  double used_at;
  double running_out_bytes; /**< emitted so far by the running attempts */
  uint32_t *run_ids;       /**< the running attempts, in no order (sl__task.run_pos) */
  uint32_t run_cap;        /**< room in run_ids */
  /* estimates, refreshed from observations */
  int64_t nobs;
  double est_time, est_out_bytes, est_in_bytes, est_out_parts, est_in_rows;
  double sum_time, sum_out_bytes, sum_in_bytes, sum_out_parts, sum_in_rows;
  int rr_next;         /**< static placement: next downstream instance */
  double task_rows;    /**< rows a task should gather when it has a fixed time per task, as
                            streaming-plus chose them (0: rows whose work is ten times the fixed
                            time, sl__amortising_rows) */
} sl__op;

/** @brief The capacity account (idle.c): capacity-seconds by class. */
enum { SL__IDLE_CPU, SL__IDLE_GPU };
typedef struct {
  double last;                          /**< time charged up to */
  double capacity[2];                   /**< of every node, alive or not */
  double held[2];                       /**< held by running attempts */
  double paused[2];                     /**< of that, by paused attempts */
  double wasted[2];                     /**< worked by attempts whose work was thrown away */
  double transfer[2];                   /**< engine-reported input transfer */
  double s[2][SL_IDLE_NREASONS];        /**< free capacity (and lost nodes) by reason */
} sl__idle;

struct sl_core_s;

/** @brief What a policy decides. Mechanics live in core.c. */
typedef struct {
  const char *name;
  int (*init)(struct sl_core_s *c, char *err, size_t errlen);
  void (*fini)(struct sl_core_s *c);
  /** Launch whatever should run now. */
  void (*schedule)(struct sl_core_s *c, double now);
  /** Where an emission of @p bytes by @p t goes: 0 (fate set), SL_EAGAIN, SL_EOOM. */
  int (*admit)(struct sl_core_s *c, double now, sl__task *t, double bytes, sl_emit_fate *fate);
  /** Bytes after which a task of @p op flushes a partition. */
  double (*target_bytes)(const struct sl_core_s *c, int op);
  /** A node failed or joined. Return true when the policy handled recovery itself. */
  bool (*on_cluster_change)(struct sl_core_s *c, double now, int node, bool joined);
  /** An attempt failed; true when the policy handled it (no lineage retry). */
  bool (*on_task_failed)(struct sl_core_s *c, double now, sl__task *t);
  void (*on_emitted)(struct sl_core_s *c, double now, sl__task *t, sl_part_id p);
  void (*tick)(struct sl_core_s *c, double now);
  double (*wakeup)(const struct sl_core_s *c);
} sl__policy;

/** @brief Most inputs one merge task combines (a spec's merge_factor). */
#define SL_MAX_MERGE 256

struct sl_core_s {
  int *merge_count;      /**< per node: scratch of a merge stage's group search */
  uint32_t *home_full_pass; /**< per node: the retry scan (sl__launch_retries()) that found it without room */
  uint32_t retry_pass;   /**< that scan's number */
  int homes_full;        /**< nodes the current scan found without room */
  const sl_plan *plan;
  const sl_plan *charges; /**< what tasks' work is charged at: opts.charges, or the plan */
  const sl_cluster *cluster;
  sl_core_opts opts;
  uint64_t seed;         /**< of task time spreads: opts.seed, or the workload's */
  const sl__policy *policy;
  void *pstate;          /**< the policy's own state */
  void *placement;       /**< static placement (stream model, static ablation) */

  int nops, nnodes;
  sl__op ops[SL_MAX_OPS];
  sl__node *nodes;

  sl__task *tasks;
  uint32_t ntasks, tasks_cap;
  sl__part *parts;
  uint32_t nparts, parts_cap;

  sl_decision *decs;     /**< ring of pending decisions */
  uint32_t dec_head, dec_len, dec_cap;
  uint64_t dec_hash;     /**< FNV-1a over every decision pushed */
  sl_input *launch_in;   /**< the inputs' facts of the LAUNCH sl_core_next() handed out last */
  uint32_t launch_in_cap;/**< room in launch_in: at least the ninputs of every queued LAUNCH */
  int pending_kills[SL_MAX_OPS + 1]; /**< kills that found nothing running, per op + 1 ([0]: any) */
  double progress_mark, progress_at; /**< rows delivered + tasks finished, and when it last moved */
  sl_event_fn observer;  /**< sl_core_observe() */
  void *observer_ctx;

  sl__idq blocked;       /**< attempts waiting for regenerated inputs */
  int64_t active;        /**< attempts queued, blocked or running */
  /* sums over alive nodes, kept up to date so policies need not scan nodes */
  double alive_cpu, alive_gpu, alive_store;
  /* accelerator pins (sl_pop.accel): the node groups each operator may use,
   * as a mask, and what the alive nodes of each group offer */
  uint32_t op_groups[SL_MAX_OPS];
  /* the groups a policy keeps each operator off for now (sl__fits()
   * refuses them): capacity another operator needs more */
  uint32_t op_yields[SL_MAX_OPS];
  double group_alive_cpu[SL_MAX_GROUPS], group_alive_gpu[SL_MAX_GROUPS];
  double free_cpu, free_gpu;
  int64_t free_slots;
  int64_t live_parts;    /**< partitions with refs > 0 */
  bool started, done, failed;
  double now;
  sl_core_stats stats;
  sl__idle idle;
  double *split_rows;    /**< rows delivered per split (rolled back with the sink) */
  int64_t nsplits;
  /* the elastic pool (autoplace.c) */
  bool has_pool;         /**< some node group is elastic */
  double host_cpu_share; /**< the share of an accelerator host's CPUs that CPU-only operators may
                              hold (autoplacement: 0 for remote preprocessing, 1 for collocated) */
  void *autoplace;       /**< the autoplacement's own state */
  int pool_acquired, pool_released, pool_lost, pool_peak; /**< ACQUIREs, RELEASEs, losses while held,
                                                      most held at once */
};

/** @brief The origin (first attempt) of attempt @p t: it owns the lineage. */
static inline sl__task *sl__origin_of(struct sl_core_s *c, const sl__task *t)
{
  return &c->tasks[t->origin];
}

/* Node fitting (placement.c). */

/** @brief Slots a node of @p cpu CPUs and @p gpu GPUs offers the plan's smallest requests. */
int sl__slots_for(const sl_plan *p, double cpu, double gpu);
/** @brief Adds (@p sign 1) or removes (-1) what node @p n offers to the cluster sums. */
void sl__count_node(struct sl_core_s *c, int n, int sign);
/** @brief Node @p n in service and empty, as its group specifies it. */
void sl__node_reset(struct sl_core_s *c, int n);
/** @brief The node groups each operator's accelerator pin allows; SL_EUNSAT when none. */
int sl__init_pins(struct sl_core_s *c, char *err, size_t errlen);
/** @brief SL_EOOM when a partition could never fit the smallest store. */
int sl__check_budgets(struct sl_core_s *c, char *err, size_t errlen);

/* Memory accounting (memory.c). */

/** @brief @p bytes more (fewer) in the store of @p node, peaks kept. */
void sl__store_add(struct sl_core_s *c, int node, double bytes);
void sl__store_sub(struct sl_core_s *c, int node, double bytes);
/** @brief Attempt @p t waits for room for @p bytes (a RESUME will come). */
void sl__mark_waiting(struct sl_core_s *c, sl__task *t, double bytes);
/** @brief Liveness: when every running task waits for memory, the oldest goes through. */
void sl__unjam(struct sl_core_s *c);

/* Mechanics offered to the policies (core.c). */

/** @brief Appends a decision; a full ring grows. */
/** @brief Appends @p id to @p q; out of memory, the job fails (a FAIL
 *  decision) rather than lose the id and hang. */
void sl__enqueue_id(struct sl_core_s *c, sl__idq *q, uint32_t id);

void sl__push(struct sl_core_s *c, const sl_decision *d);

/** @brief A new origin task of @p op over @p inputs (copied), QUEUED nowhere yet. */
sl_task_id sl__task_new(struct sl_core_s *c, int op, const sl_part_id *inputs, int n, int64_t split);

/** @brief Whether @p bytes may go to @p node's disk: spilling is on (not
 *  --on-full oom) and its disks have room (disk_capacity). */
bool sl__may_spill(const sl_core *c, int node, double bytes);

/** @brief Launches attempt @p t on @p node: takes a slot and resources, pushes LAUNCH. */
void sl__launch(struct sl_core_s *c, double now, sl_task_id t, int node);

/** @brief Whether the free capacity of all nodes together could take a task of @p op
 *  (false means no node can; true means one may). O(1). */
bool sl__fits_anywhere(const struct sl_core_s *c, int op);

/** @brief Whether operator @p op may run on @p node at all (its accelerator pin). */
static inline bool sl__op_allowed(const struct sl_core_s *c, int node, int op)
{
  return (c->op_groups[op] >> c->cluster->nodes[node].group) & 1u;
}

/** @brief CPU (or GPU) slots of the alive nodes operator @p op may run on. */
double sl__op_capacity(const struct sl_core_s *c, int op, bool gpu);
/** @brief CPU (@p gpu false) or GPU slot-seconds operator @p op has held
 *         from the start of the run to @p now. */
double sl__op_used_seconds(const struct sl_core_s *c, int op, bool gpu, double now);

/** @brief Whether operators @p a and @p b may run on a common node group. */
static inline bool sl__ops_overlap(const struct sl_core_s *c, int a, int b)
{
  return (c->op_groups[a] & c->op_groups[b]) != 0;
}

/** @brief Whether @p node has a free slot and the request of @p op (on a node the op may use). */
bool sl__fits(const struct sl_core_s *c, int node, int op);
/** @brief Whether a task of @p op fits @p node once the attempts there
 *  that made their last output finish (which their engine reports at once),
 *  though it does not fit now. */
bool sl__fits_once_finished(const struct sl_core_s *c, int node, int op);

/** @brief The next node, in rotation, with room for a task of @p op; -1: none. */
int sl__next_fitting_node(struct sl_core_s *c, int op);

/** @brief A node for a task of @p op: locality first, then the first that fits. -1: none. */
int sl__pick_node(struct sl_core_s *c, int op, const sl__task *t);

/** @brief Whether every input of the attempt's origin is available. */
bool sl__inputs_ready(const struct sl_core_s *c, const sl__task *t);

/** @brief Whether op @p i and everything upstream of it have ended. */
bool sl__op_drained(const struct sl_core_s *c, int i);

/** @brief Input rows a task of @p op is expected to get, for estimates. */
double sl__typical_rows(const struct sl_core_s *c, int op);

/** @brief Resumes waiting tasks on @p node whose emission now fits. */
void sl__resume_fitting(struct sl_core_s *c, int node);

/** @brief Whether a running task other than @p except is not waiting (and may free memory). */
bool sl__someone_progresses(const struct sl_core_s *c, const sl__task *except);

/** @brief Default admission: store if it fits, else wait while others progress, else spill/OOM. */
int sl__admit_memory(struct sl_core_s *c, sl__task *t, double bytes, sl_emit_fate *fate);

/** @brief sl__admit_memory() that stores only while @p keep bytes of the node's budget stay free. */
int sl__admit_memory_keeping(struct sl_core_s *c, sl__task *t, double bytes, double keep, sl_emit_fate *fate);

/** @brief Store room on @p node kept for the outputs of the operators after @p op running there. */
double sl__downstream_room(const struct sl_core_s *c, int op, int node);

/** @brief The job cannot complete: a FAIL decision with @p code. */
void sl__push_fail(struct sl_core_s *c, int code);
/** @brief A zeroed task record; SL_NONE out of memory (the tasks array may move). */
sl_task_id sl__task_alloc(struct sl_core_s *c);
/** @brief Partition @p pid joins the input queue of the operator after its own. */
void sl__enqueue_part(struct sl_core_s *c, sl_part_id pid);
/** @brief Whether partition @p id was taken off its queue (@p ctx: the core), for sl__idq_filter_head(). */
bool sl__taken(uint32_t id, void *ctx);

/** @brief What part of partition @p p the shares [@p lo, @p hi) of @p shares hold: 1
 *  outside a shuffle (@p shares <= 1), else their block of it (shuffle.c). */
double sl__share_fraction(const sl__part *p, int64_t lo, int64_t hi, int64_t shares);

/**
 * @brief The shuffle's barrier: once every input of all-to-all operator
 *        @p op has arrived, makes its reducers, each reading its share of
 *        every input. Returns the first (to launch now); the others wait in
 *        the operator's retry queue. SL_NONE when out of memory.
 */
sl_task_id sl__make_reducers(struct sl_core_s *c, int op);

/**
 * @brief Whether all-to-all operator @p op can make tasks now: a shuffle's
 *        reducers once every input is in; a merge stage once it has a
 *        group of merge_inputs inputs (on one node, for merge), or the
 *        last ones.
 */
bool sl__all_to_all_ready(const struct sl_core_s *c, int op);

/**
 * @brief The next tasks of all-to-all operator @p op, ready by
 *        sl__all_to_all_ready(): its reducers, or a merge stage's tasks for
 *        its next group of inputs (one, or one per node for push, each
 *        reading the reducers' shares that node runs). Returns the first (to
 *        launch now); the others wait in the operator's retry queue.
 *        SL_NONE when there are none or out of memory.
 */
sl_task_id sl__make_all_to_all(struct sl_core_s *c, int op);

/** @brief Attempt @p t gives back its slot and what it held of the node. */
void sl__release(struct sl_core_s *c, sl__task *t);
/** @brief The last output @p pid of attempt @p t is an output like any other now. */
void sl__forget_fresh(struct sl_core_s *c, sl__task *t, sl_part_id pid);

/* The elastic pool and autoplacement (autoplace.c). */

/** @brief Takes elastic nodes out of service and sets the autoplacement up. */
int sl__autoplace_init(struct sl_core_s *c, char *err, size_t errlen);
void sl__autoplace_fini(struct sl_core_s *c);
/** @brief Acquisitions at the start of the job. */
void sl__autoplace_start(struct sl_core_s *c, double now);
/** @brief After every event: a measure that ended moves the autoplacement on,
 *  and drained nodes are released. */
void sl__autoplace_after_event(struct sl_core_s *c, double now);
/** @brief The job is over: every pool node still held is released. */
void sl__autoplace_end(struct sl_core_s *c, double now);
/** @brief Elastic node @p node is in service (its provisioning is over). */
void sl__autoplace_joined(struct sl_core_s *c, int node);
/** @brief Elastic node @p node was lost: it is billed no longer. */
void sl__autoplace_lost(struct sl_core_s *c, double now, int node);
/** @brief When the autoplacement next wants a tick; INFINITY when it does not. */
double sl__autoplace_wakeup(const struct sl_core_s *c);
/** @brief Whether operator @p op may take @p cpu more CPUs of node @p n
 *  (sl_core_s.host_cpu_share on accelerator hosts). */
bool sl__host_cpu_allows(const struct sl_core_s *c, const sl__node *nd, int node, int op);

/* Lineage and recovery (lineage.c). */

/** @brief Partition @p pid is freed: its bytes leave the store (a DROP decision). */
void sl__part_free(struct sl_core_s *c, sl_part_id pid);
/** @brief One reader of @p pid fewer; the last frees it. */
void sl__part_unpin(struct sl_core_s *c, sl_part_id pid);
/** @brief A new attempt of origin task @p oid, queued, or blocked on inputs being made again. */
void sl__retry(struct sl_core_s *c, sl_task_id oid);
/** @brief Origin task @p oid runs again when an output of it is lost and still needed. */
void sl__rerun_if_needed(struct sl_core_s *c, sl_task_id oid);
/** @brief Partition @p pid is back after a re-run: to whoever waits for it. */
void sl__part_restored(struct sl_core_s *c, sl_part_id pid);
/** @brief Every partition node @p node held is lost, and its store empty. */
void sl__lose_node_parts(struct sl_core_s *c, int node);
/** @brief The default recovery from the loss of @p node: queued lost inputs
 *  leave their queues, the producers of those still needed run again, and
 *  queued attempts that read them wait until they are back. */
void sl__recover_node_parts(struct sl_core_s *c, int node);
/** @brief Launches queued retries and re-runs that fit. */
void sl__launch_retries(struct sl_core_s *c, double now, int op);

/** @brief Whether one more partition of @p more rows fills batches of @p batch better. */
bool sl__batch_gains(int64_t rows, int64_t more, int batch);

/** Whether a task of @p op gathers queued partitions, by its model's sizing rule. */
bool sl__gathers(const struct sl_core_s *c, int op);

/** Where tasks cut their output under the model's sizing rule (INFINITY: one partition per task). */
double sl__target_bytes(const struct sl_core_s *c);

/** How many partitions at the head of an input queue a task is assembled
 *  from (sl__take_inputs, sl__take_rows); policies that look where a task's
 *  inputs lie scan the same window (sl__input_window). */
#define SL_INPUT_WINDOW 256
/** @brief The partitions of @p q a task may take from: its first
 *  SL_INPUT_WINDOW. */
static inline uint32_t sl__input_window(const sl__idq *q)
{
  return sl__idq_len(q) < SL_INPUT_WINDOW ? sl__idq_len(q) : SL_INPUT_WINDOW;
}

/** @brief Takes input partitions of @p op from its queue into a new task,
 *  coalescing when asked, those already on node @p near first (-1: none).
 *  @p split_batch: a batch operator whose batches are free (sl__batch_free)
 *  coalesces like a map, up to its batch size, instead of filling batches. */
sl_task_id sl__take_inputs(struct sl_core_s *c, int op, bool coalesce, bool split_batch, int near);
/** @brief Takes whole input partitions of @p op, oldest first (those on
 *  @p near first), up to @p max_rows rows (at least one partition). */
sl_task_id sl__take_rows(struct sl_core_s *c, int op, int64_t max_rows, int near);
/** @brief How many tasks of @p op the live cluster could run at once (at
 *  least 1): its class's capacity over its request, within its cap. */
double sl__op_instances(const struct sl_core_s *c, int op);
/** @brief The speed of node @p node's slots of @p op's class (1 when unset). */
double sl__slot_speed(const struct sl_core_s *c, int op, int node);
/** @brief Input rows a task of @p op needs for its fixed per-task time to
 *  be at most a tenth of its per-row work (0: no per-task time). */
double sl__amortising_rows(const struct sl_core_s *c, int op);
/** @brief Whether @p op batches rows at no cost: a batch size and no per-batch
 *  time, so a partial batch does the same work per row as a full one. */
bool sl__batch_free(const struct sl_core_s *c, int op);

/** @brief Resumes every waiting task of @p op: they retry their emission. */
void sl__resume_op(struct sl_core_s *c, int op);

/** @brief Charges the time since the last event to the condition the
 *  cluster was in (idle.c); call before an event changes anything. */
void sl__idle_advance(struct sl_core_s *c, double now);

/** @brief Attempt @p t ended at @p now; @p wasted: its work was thrown away. */
void sl__idle_attempt_end(struct sl_core_s *c, const sl__task *t, double now, bool wasted);

/** @brief Drops every partition and attempt: the stream model's rollback. */
void sl__reset_all(struct sl_core_s *c, double now);

/* Views of the streaming policy's arithmetic, for tests. */
double sl__streaming_drain_seconds(const struct sl_core_s *c);
/** @brief The same with the slots each operator held on average since
 *         Algorithm 2's period began, as its tick computes it. */
double sl__streaming_period_drain_seconds(const struct sl_core_s *c);
void sl__streaming_reservation(struct sl_core_s *c, int op, double *task_cpu, double *task_mem,
                               double *out_mem, double *shared_cpu, double *shared_mem);

extern const sl__policy sl__policy_streaming;
extern const sl__policy sl__policy_batch;
extern const sl__policy sl__policy_stream;

#endif
