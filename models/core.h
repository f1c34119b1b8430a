/**
 * @file core.h
 * @brief The scheduling core: events in, decisions out.
 *
 * The core knows nothing of threads, clocks or SimGrid. An engine (the real
 * executor or the simulator) feeds it events stamped with the engine's own
 * time and drains the decisions after every event. The same events give the
 * same decisions: ties break by id, and the core reads no clock.
 *
 * Ownership: the engine owns the bytes of every partition (buffers in the
 * executor, sizes in the simulator); the core owns the bookkeeping (which
 * partition lives where, who consumes it, who produced it, how much memory
 * each node holds).
 *
 * A task's life, as the engine sees it:
 *   LAUNCH decision -> run -> sl_core_emit() for every output partition
 *   (retrying after a RESUME decision when the core answered SL_EAGAIN)
 *   -> sl_core_finished(). A task lost with its worker is reported with
 *   sl_core_failed().
 *
 * The CANCEL contract. A CANCEL names a running attempt the core has
 * already written off (a rollback of the whole job): when the engine sees
 * it, the attempt's slot is free in the core's books, and a LAUNCH on the
 * same slot may follow in the same drain. The engine must
 *   - stop the attempt (a worker in a kernel stops at the next point it can)
 *     before the slot's next attempt runs, and record it as cancelled;
 *   - keep nothing the attempt makes from then on: the partitions it emitted
 *     before belong to the core, which DROPs those nobody needs.
 * It need not report the attempt. What it may still send for it, from a
 * worker that was already on its way: sl_core_emit() answers SL_ESTATE
 * (nothing is stored: the engine frees the bytes), sl_core_finished()
 * answers SL_ESTATE, sl_core_failed() answers 0 and changes nothing. Each
 * is recorded as an event all the same, so a replay sees it. A CANCEL for
 * a task whose LAUNCH the engine has not acted on yet needs nothing more:
 * sl_core_task_live() is false for it, and the engine skips it.
 */
#ifndef SL_CORE_H
#define SL_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "models/error.h"

#include "cluster.h"
#include "plan.h"

typedef uint32_t sl_task_id;
typedef uint32_t sl_part_id;
#define SL_NONE UINT32_MAX

typedef struct sl_core_s sl_core;

/** @brief The three execution models and the paper's ablations. */
typedef enum {
  SL_MODEL_STREAMING, /**< streaming batch (the paper's Ray Data) */
  SL_MODEL_BATCH,     /**< stage at a time (Spark-like) */
  SL_MODEL_STREAM,    /**< static placement, checkpoints (Flink-like) */
} sl_model;

/** @brief Switches of the streaming-batch policy (the paper's ablations). */
typedef struct {
  bool no_adaptive;     /**< -Adapt.: pessimistic, fixed concurrency, no admission budget */
  bool no_dynamic_part; /**< -Part.: one output partition per task */
  bool static_alloc;    /**< static: fixed per-operator slots, round-robin */
  bool bound_shares;    /**< streaming-plus: no operator runs more tasks than its share of the
                             bound's allocation needs, while its inputs still flow */
} sl_streaming_opts;

/**
 * @brief Who runs the CPU-only operators (preprocessing) when the cluster
 *        has elastic node groups (a pool of CPU workers rented by the
 *        second), as Pecan's AutoPlacement frames it.
 */
typedef enum {
  SL_AUTOPLACE_BOUND,      /**< sluice's own: the fewest pool nodes the bound's LP says feed the
                                accelerators, the accelerator hosts' CPUs first; more while the
                                measured rate falls short of the bound's and the accelerators wait */
  SL_AUTOPLACE_COLLOCATED, /**< the accelerator hosts only (tf.data): the pool is never used */
  SL_AUTOPLACE_REMOTE,     /**< pool nodes only (Cachew): the hosts' CPUs run no preprocessing, and
                                nodes are added one at a time while each raises the rate */
  SL_AUTOPLACE_PECAN,      /**< Pecan's state machine: pool nodes up while they help, then the hosts'
                                CPUs up in fifths, then pool nodes down within a tolerance */
} sl_autoplace;

/** @brief What happens when a node's store is full and nothing can wait. */
typedef enum { SL_FULL_SPILL, SL_FULL_OOM } sl_on_full;

typedef struct {
  sl_model model;
  sl_streaming_opts streaming;
  sl_on_full on_full;
  double reservation_ratio;   /**< Ray Data's op_resource_reservation_ratio; 0 (default) leaves admission to Algorithms 1-2 */
  double replenish_period_s;  /**< Algorithm 2 period (1 s) */
  bool drain_sum;             /**< Algorithm 2 as printed: P sums the operators' times
                                   (default: P is the slowest operator's time) */
  double checkpoint_interval_s; /**< stream model: time between checkpoints */
  double checkpoint_cost_s;   /**< stream model: pause per checkpoint */
  double restart_cost_s;      /**< stream model: time to restart after a rollback */
  int channel_capacity;       /**< stream model: partitions per input channel */
  int max_retries;            /**< attempts per task before the job fails, 0 = unlimited */
  uint64_t seed;              /**< draws of task time spreads; 0 = the workload's seed */
  double stall_timeout_s;     /**< fail the job (FAIL, SL_ESTALL, naming the stuck operator) after
                                   this long without a row delivered or a task finished; 0 = never */
  bool no_decision_hash;      /**< keep no sl_core_decision_hash(): for an engine that records no
                                   events, as hashing is a third of the executor's dispatch cost */
  sl_autoplace autoplace;     /**< who preprocesses, with elastic node groups (default: bound) */
  double autoplace_interval_s;/**< how long each measure of the delivery rate lasts (default 10 s) */
  const sl_plan *charges;     /**< borrowed: the times a task's work is charged at, operator by
                                   operator (time_per_*, time_setup, time_spread, time_noise), where
                                   they are not the plan's: a calibrated simulation charges the times
                                   its run measured while the policy plans with the times that run
                                   planned with. NULL: the plan's. Its operators are the plan's. */
} sl_core_opts;

/** @brief Parses "bound", "collocated", "remote" or "pecan" into @p o. */
int sl_core_opts_set_autoplace(sl_core_opts *o, const char *name);

/** @brief The name of @p a ("bound", ...); NULL for a bad value. */
const char *sl_autoplace_name(sl_autoplace a);

/** @brief Defaults: streaming batch, spill on full, ratio 0.5, 1 s, 2 slots per channel. */
void sl_core_opts_default(sl_core_opts *o);

/** @brief Parses "streaming", "batch", "stream", and the ablations
 *  "streaming-noadapt", "streaming-nopart", "static" into @p o. */
int sl_core_opts_set_model(sl_core_opts *o, const char *name);

/** @brief The name sl_core_opts_set_model() would parse back. */
const char *sl_core_opts_model_name(const sl_core_opts *o);

/**
 * @brief How the model of @p o cuts and gathers partitions, for a plan
 *        whose target partition is @p target_partition_bytes: streaming
 *        batch cuts at the target and gathers (without dynamic
 *        partitioning, one partition per task and no gathering); batch
 *        makes one partition per task and gathers only into batches;
 *        stream cuts at the target and gathers only into batches. The
 *        policies size their tasks by it, and `sluice plan` prints it.
 */
void sl_core_opts_sizing(const sl_core_opts *o, double target_partition_bytes, sl_sizing_rule *out);

typedef enum {
  SL_DEC_LAUNCH,     /**< run task on (node, slot) with inputs, flushing at target_bytes */
  SL_DEC_RESUME,     /**< the task may retry its refused emission */
  SL_DEC_DELIVER,    /**< hand partition to the sink, then free its bytes */
  SL_DEC_DROP,       /**< free a partition's bytes: nobody needs it any more */
  SL_DEC_CANCEL,     /**< stop the task, already written off (the contract: above) */
  SL_DEC_CHECKPOINT, /**< snapshot the sink (stream model) */
  SL_DEC_ROLLBACK,   /**< restore the sink to the last checkpoint (keep_split) */
  SL_DEC_DONE,       /**< the job is complete */
  SL_DEC_FAIL,       /**< the job cannot complete (error in code) */
  SL_DEC_ACQUIRE,    /**< start elastic node @c node: it is billed from now, and the engine reports it
                          with sl_core_node_joined() once @c delay_s (its provisioning) has passed */
  SL_DEC_RELEASE,    /**< give elastic node @c node back: nothing runs or is stored there any more,
                          and it is billed no longer; the engine stops its workers */
} sl_dec_kind;

/**
 * @brief What a LAUNCH says about one of its inputs: where the partition
 *        lives, how big it is, and whether it sits on the node's local disk
 *        rather than in its store.
 */
typedef struct {
  sl_part_id part;
  int node;     /**< the node whose store (or disk) holds it */
  double bytes; /**< its bytes, as emitted */
  double read_bytes; /**< what this task reads of it: its share's block of an all-to-all's
                          input (bytes / shares), else all its bytes. What crosses the link
                          and, spilled, comes off the disk */
  bool spilled; /**< on the node's disk: read back before use */
} sl_input;

/**
 * @brief A decision. A LAUNCH is a complete work order: an engine computes
 *        none of its facts for itself. It reads its inputs, charges @c work_s (spread
 *        included) at the speed of the node's resource the operator uses
 *        (@c charge_s is that time), cuts its output into partitions of
 *        @c rows_per_part rows (the last may hold fewer), emitting them
 *        as sl_emit_share() paces them: the set-up first, then evenly over
 *        the rest (all at its end with @c outputs_at_end),
 *        and an all-to-all task reads shares [@c share, @c share_end) of
 *        every input (rows whose share of @c shares, by the kernel's key
 *        ranges or id modulo shares, is in that range).
 */
typedef struct {
  sl_dec_kind kind;
  sl_task_id task;
  sl_task_id origin;    /**< LAUNCH: the first attempt of this work (== task on a first attempt) */
  int op;               /**< physical operator of the task or partition */
  int node, slot;
  int attempt;
  const sl_part_id *inputs; /**< LAUNCH: valid until the task ends */
  const sl_input *in;   /**< LAUNCH: the ninputs inputs' facts, in the order of inputs; owned by the
                             core, valid until the next sl_core_next() or event (copy what the
                             attempt needs later); NULL when ninputs is 0 */
  int ninputs;
  int64_t split;        /**< LAUNCH of a source task: split index */
  int64_t rows;         /**< LAUNCH: input rows (sources: rows to generate) */
  double bytes;         /**< LAUNCH: input bytes; DELIVER/DROP: partition bytes */
  double target_bytes;  /**< LAUNCH: the partition target the cut comes from */
  int64_t rows_per_part;/**< LAUNCH: output rows per partition, INT64_MAX: all in one */
  int64_t out_rows;     /**< LAUNCH: output rows the attempt makes, as the cost model has it */
  int64_t out_parts;    /**< LAUNCH: partitions they make (out_rows cut at rows_per_part) */
  double work_s;        /**< LAUNCH: modelled seconds at speed 1, spread and setup_s included */
  bool outputs_at_end;  /**< LAUNCH: its partitions are emitted when its work is done, not over it */
  bool fresh;           /**< LAUNCH: the slot's first task of this operator since its node joined:
                             it sets the operator up (a real engine starts a new kernel instance) */
  double setup_s;       /**< LAUNCH: the operator's time_setup when fresh, else 0 (no spread) */
  double spread;        /**< LAUNCH: the spread factor in work_s (1: none), drawn from the data: a
                             calibration divides it out to see the operator's base time */
  double charge_s;      /**< LAUNCH: work_s at this node's speed: how long the slot is held */
  double speed;         /**< LAUNCH: that speed (of the CPU or GPU the operator uses) */
  int64_t share, shares;/**< LAUNCH of an all-to-all task: the first of the reducers' shares it reads
                             of each input (rows whose share of @c shares, by the all-to-all's kernel,
                             is in [share, share_end)); 0 of 1 otherwise */
  int64_t share_end;    /**< LAUNCH: past the last share it reads (a reducer: share + 1; a push
                             merge: the shares of the reducers one node runs) */
  int64_t out_blocks;   /**< LAUNCH: the blocks a spilled output partition is written in, each
                             read apart: the reducers' shares of the shuffle the task feeds (by
                             that shuffle's kernel), 1 when it feeds none */
  bool doomed;          /**< LAUNCH: a kill found nothing running and takes this attempt: the engine
                             starts it, then reports it with sl_core_failed() at once */
  sl_part_id part;      /**< DELIVER, DROP */
  const bool *keep_split; /**< ROLLBACK: splits whose rows the sink keeps */
  int code;             /**< FAIL: error code; op and node where it happened (-1: nowhere in
                             particular; with SL_ESTALL, op is the stuck operator and stalled_s
                             how long nothing moved, 0 when work is stranded) */
  double stalled_s;     /**< FAIL of a stall */
  double delay_s;       /**< ACQUIRE: seconds until the node is in service (its group's
                             provision_delay) */
} sl_decision;

/** @brief What the core did with an emitted partition. */
typedef enum {
  SL_EMIT_STORED,    /**< in the node's store, counted against its budget */
  SL_EMIT_SPILLED,   /**< the engine writes it to local disk */
  SL_EMIT_DISCARDED, /**< a re-run produced a partition that still exists: free it */
} sl_emit_fate;

/**
 * @brief Creates a core for @p plan on @p cluster. Both are borrowed and
 *        must outlive the core. Returns NULL on bad options (message in
 *        @p err) or out of memory. Free with sl_core_free().
 */
sl_core *sl_core_new(const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts,
                     char *err, size_t errlen);
void sl_core_free(sl_core *c);

/** @brief sl_core_new(), saying in @p code (when not NULL) why it returned
 *  NULL: SL_EINVAL, SL_EUNSAT (an operator fits no node), SL_EOOM (a store
 *  cannot hold one partition) or SL_ENOMEM; 0 on success. */
sl_core *sl_core_create(const sl_plan *plan, const sl_cluster *cluster, const sl_core_opts *opts, int *code,
                        char *err, size_t errlen);

/** @brief Starts the job at time @p now: the first decisions become available. */
SL_MUST_CHECK int sl_core_start(sl_core *c, double now);

/**
 * @brief A running task has a full output buffer of @p rows rows and @p bytes
 *        bytes to flush. On 0, *part is the new partition's id and *fate says
 *        where it lives. SL_EAGAIN: hold it and retry after a RESUME decision.
 *        SL_EOOM: the store is full and nothing can free it (on_full = oom).
 */
SL_MUST_CHECK int sl_core_emit(sl_core *c, double now, sl_task_id t, int64_t rows, double bytes,
                 sl_part_id *part, sl_emit_fate *fate);

/** @brief The task has emitted all its output and ended. */
int sl_core_finished(sl_core *c, double now, sl_task_id t);

/** @brief The task was lost (its worker died or the core cancelled it). */
int sl_core_failed(sl_core *c, double now, sl_task_id t);

/** @brief The node is gone: its partitions and running tasks are lost. */
int sl_core_node_lost(sl_core *c, double now, int node);

/** @brief The node (back) in service with its slots and an empty store. */
int sl_core_node_joined(sl_core *c, double now, int node);

/** @brief Time advanced to @p now (periodic policy work, checkpoints). */
int sl_core_tick(sl_core *c, double now);

/**
 * @brief A kill of a running attempt of operator @p op (-1: any). The core
 *        picks the victim, the live running attempt with the lowest id, and
 *        names it in @p victim; the engine stops its worker and reports it
 *        with sl_core_failed(). With nothing running, *victim is SL_NONE and
 *        the next attempt of @p op to launch is doomed (sl_decision.doomed).
 */
int sl_core_kill(sl_core *c, double now, int op, sl_task_id *victim);

/** @brief Takes the next decision. False when there is none for now. */
bool sl_core_next(sl_core *c, sl_decision *out);

/**
 * @brief The share of a LAUNCH's charge that has passed when the @p k-th of
 *        its @p n output partitions (k from 1) goes out: its set-up first
 *        (@p setup_s of @p work_s: a model loads before any row comes out),
 *        then the rest evenly; all of it with @p at_end. The one pace both
 *        engines emit by (a LAUNCH gives the three facts: setup_s, work_s,
 *        outputs_at_end). 1 when @p n is 0.
 */
double sl_emit_share(double setup_s, double work_s, bool at_end, int64_t k, int64_t n);

/** @brief When the core next wants a tick; INFINITY when it does not. */
double sl_core_wakeup(const sl_core *c);

/** @brief Whether the job is complete (every row delivered to the sink). */
bool sl_core_done(const sl_core *c);

/** @brief Worker slots the engine must provide on @p node. */
int sl_core_node_slots(const sl_core *c, int node);

/** @brief Whether the task's emissions are still welcome (false once cancelled). */
bool sl_core_task_live(const sl_core *c, sl_task_id t);

/* ------------------------------------------------------ recording events */

/** @brief The events an engine feeds a core, one per call of sl_core_start(),
 *  sl_core_emit(), sl_core_finished(), sl_core_failed(), sl_core_node_lost(),
 *  sl_core_node_joined() and sl_core_tick(). */
typedef enum {
  SL_EV_START,
  SL_EV_EMIT,
  SL_EV_FINISHED,
  SL_EV_FAILED,
  SL_EV_NODE_LOST,
  SL_EV_NODE_JOINED,
  SL_EV_TICK,
  SL_EV_KILL,
  SL_EV_NKINDS
} sl_event_kind;

typedef struct {
  sl_event_kind kind;
  double now;
  sl_task_id task;  /**< EMIT, FINISHED, FAILED */
  int64_t rows;     /**< EMIT */
  double bytes;     /**< EMIT */
  int node;         /**< NODE_LOST, NODE_JOINED; KILL: the operator (-1: any) */
} sl_event;

/** @brief Called with every event, before the core acts on it. */
typedef void (*sl_event_fn)(void *ctx, const sl_event *ev);

/** @brief Calls @p fn with every event from now on (NULL: none). The seam's
 *  proof: the events recorded from an engine, replayed through a core alone
 *  with sl_core_apply(), give the same decisions (sl_core_decision_hash()). */
void sl_core_observe(sl_core *c, sl_event_fn fn, void *ctx);

/** @brief Feeds @p ev to the core, as the engine's call did; what that call returned. */
int sl_core_apply(sl_core *c, const sl_event *ev);

/** @brief A hash (FNV-1a) of every decision the core has made so far, fields
 *  and inputs included: equal for two cores that decided the same. A
 *  LAUNCH's input facts (sl_decision.in) are left out: they are the books
 *  of partitions earlier decisions and events made, which are in already.
 *  Under sl_core_opts.no_decision_hash, FNV-1a's offset basis whatever was
 *  decided. */
uint64_t sl_core_decision_hash(const sl_core *c);

/** @brief The name of an event kind ("emit", ...); NULL past the last. */
const char *sl_event_kind_name(sl_event_kind k);

/** @brief Counters for summaries and progress lines. */
typedef struct {
  int64_t tasks_launched, tasks_finished, tasks_failed, retried_tasks;
  int64_t partitions, lost_partitions, spilled_partitions, discarded_partitions;
  double spilled_bytes;
  double rows_delivered;
  double store_bytes;       /**< now, over all nodes */
  double peak_store_bytes;  /**< max over time of any node's store use */
  int peak_store_node;      /**< the node that reached it first (-1 before any byte is stored) */
  double store_budget_bytes;/**< the smallest node budget */
  double rows_rolled_back;  /**< rows the sink had and gave back in rollbacks, over the run */
  int64_t checkpoints, rollbacks;
  double first_output_s;    /**< time of the first delivery, -1 before */
  double storage_gets;      /**< requests of every source attempt that read from remote storage */
  double storage_puts;      /**< requests of the sink's uploads to remote storage */
  double storage_put_bytes; /**< bytes the sink uploaded */
  double storage_put_byte_s;/**< those bytes times the time each was uploaded: what a bill for
                                 holding them until the end leaves out */
  double shuffle_bytes;     /**< bytes the all-to-all operators' finished attempts read (merges and
                                 reducers; a re-run reads again): what the shuffles moved */
  bool oom;
} sl_core_stats;

void sl_core_get_stats(const sl_core *c, sl_core_stats *out);

/** @brief Why capacity sat idle. Held capacity that did no work counts too:
 *  a paused attempt is backpressure, an attempt receiving its inputs is
 *  transfer, a failed, cancelled or repeated attempt is failure. */
typedef enum {
  SL_IDLE_ADMISSION,    /**< work was ready and fitted, the model chose not to start it */
  SL_IDLE_BACKPRESSURE, /**< attempts paused for memory; free while the node's store was full */
  SL_IDLE_INPUT,        /**< no work ready that this node could run */
  SL_IDLE_TRANSFER,     /**< attempts receiving their inputs (sl_core_note_transfer()) */
  SL_IDLE_FAILURE,      /**< lost nodes, failed or cancelled attempts, lineage re-runs of finished work */
  SL_IDLE_PACKING,      /**< work was ready, but no task of it fitted what was left of the node */
  SL_IDLE_NREASONS
} sl_idle_reason;

/** @brief Capacity-seconds (CPU-seconds or GPU-seconds) of a run so far:
 *  capacity_s = busy_s + the sum of idle_s. */
typedef struct {
  double capacity_s;
  double busy_s;
  double idle_s[SL_IDLE_NREASONS];
} sl_idle_breakdown;

/** @brief Where the CPU (or GPU) capacity of the whole cluster went, from
 *  the start to the last event. */
void sl_core_idle(const sl_core *c, bool gpu, sl_idle_breakdown *out);

/** @brief The word for @p r in summaries ("admission", ...); NULL past the last. */
const char *sl_idle_reason_name(sl_idle_reason r);

/** @brief An engine's measure: attempt @p task spent @p seconds receiving
 *  its inputs while holding its slot. Only accounts; decides nothing. */
int sl_core_note_transfer(sl_core *c, sl_task_id task, double seconds);

/** @brief Per-operator view for progress lines and timelines. */
typedef struct {
  int running;
  int waiting;          /**< running tasks held by backpressure */
  int64_t queued_parts; /**< input partitions waiting */
  double buffered_bytes;/**< output bytes not yet consumed */
  int64_t tasks_done;
} sl_core_op_stats;

void sl_core_get_op_stats(const sl_core *c, int op, sl_core_op_stats *out);

/** @brief What the elastic pool did, for summaries. */
typedef struct {
  int acquired, released;   /**< ACQUIRE and RELEASE decisions */
  int lost;                 /**< pool nodes lost while held (billed until then) */
  int peak;                 /**< most pool nodes held (billed) at once */
  double node_s;            /**< pool node-seconds billed up to the last event (or @p now) */
  double cost_usd;          /**< those seconds at their groups' prices */
  double host_cost_usd;     /**< the other nodes, billed for the whole run */
} sl_core_pool_stats;

/** @brief The pool's bill up to @p now (the end of the run): elastic nodes
 *  from their ACQUIRE to their RELEASE, the others for all of it. */
void sl_core_pool_stats_at(const sl_core *c, double now, sl_core_pool_stats *out);

/** @brief Whether @p node belongs to an elastic group. */
bool sl_core_node_elastic(const sl_core *c, int node);

/** @brief Whether @p node is in service: never lost, or joined since. */
bool sl_core_node_alive(const sl_core *c, int node);

/** @brief Kills of @p op (-1: of any operator) that found nothing running
 *  and wait for the next attempt to launch (sl_core_kill()). */
int sl_core_pending_kills(const sl_core *c, int op);

/** @brief Bytes in the store of @p node now. */
double sl_core_node_store(const sl_core *c, int node);

/** @brief The most bytes the store of @p node held at once so far (0 for a bad index). */
double sl_core_node_store_peak(const sl_core *c, int node);

/** @brief Bytes spilled on @p node and still alive (0 for a bad node). */
double sl_core_node_disk(const sl_core *c, int node);

/** @brief Whether a full store spills (else an emission that finds no room fails). */
bool sl_core_spills_on(const sl_core *c);

/**
 * @brief The operator that holds a job up, for an engine's stall message:
 *        the most downstream one whose running tasks are not held by
 *        backpressure (they do not finish); failing that, the most
 *        downstream one with work it cannot start (input partitions not
 *        yet taken, wherever they wait, or attempts queued or blocked).
 *        -1 when nothing is pending. Scans every partition: not for the
 *        hot path.
 */
int sl_core_stuck_op(const sl_core *c);

#endif
