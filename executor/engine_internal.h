/*
 * What the executor's driver (engine.c: the core, its decisions, faults,
 * the run) and its task execution (task.c: kernels, pacing, emission,
 * spills) share: the engine and its slots' workers. Internal to executor/.
 * Both sides run under the engine's one lock except where a function says
 * otherwise.
 */
#ifndef SL_EXEC_ENGINE_INTERNAL_H
#define SL_EXEC_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "executor/engine.h"
#include "executor/net.h"
#include "executor/rejected.h"
#include "executor/store.h"
#include "results/events.h"
#include "workloads/group_check.h"
#include "workloads/kernels.h"
#include "workloads/sink.h"
#include "workloads/sort_check.h"

#define MAX_MEMBERS 8

typedef struct engine engine;

/* An input partition a task holds: in memory, or the file it was spilled to,
 * or (in a worker process) the rows fetched from the node that holds it. */
typedef struct {
  sl_blob *blob;
  const sl_rows *mem;
  char path[600];
  int node;     /* where the order says it lives: a node other than the task's sends it */
  double bytes;
  sl_part_id part;
  bool remote;  /* a worker process fetches it from its node (fetched), blob NULL */
  sl_rows fetched;
} input_ref;

typedef struct worker_s worker;

/*
 * A worker process (worker/) runs its node's slots with this engine and
 * no core: the head decides, and a slot asks and tells it through these
 * where the executor's slots call the core. NULL in the executor.
 */
typedef struct {
  /* Where output @p out goes, as
   * sl_core_emit() answers (0 with *pid and *fate; SL_EAGAIN: wait for a
   * RESUME; SL_ESTATE: the attempt is written off). @p ends: the attempt's
   * record when this output ends it (its last, at the end of its charge),
   * told with it; ended() is then not called for an attempt whose ending
   * output returned 0. An output that needs no answer (one for the sink)
   * may take @p out's rows, leaving it empty. Called with the lock held;
   * may wait on the slot's cv. */
  int (*emit)(worker *w, sl_task_id task, sl_rows *out, const sl_task_record *ends, sl_part_id *pid,
              sl_emit_fate *fate);
  /* Fetches the inputs of @p d that other nodes hold into their fetched
   * rows, without the lock; the seconds it took in *took. 0 or a code,
   * after sl__exec_fail(). */
  int (*fetch)(worker *w, const sl_decision *d, input_ref *in, double *took);
  /* The attempt ended with @p rc (0: done), recorded as @p r; with the lock. */
  void (*ended)(worker *w, const sl_decision *d, const sl_task_record *r, int rc);
  /* An output of @p w's attempt is now in this node's store (or its spill
   * file is written): a peer's fetch may be waiting for it. With the lock. */
  void (*stored)(worker *w);
} sl_exec_remote;

struct worker_s {
  engine *e;
  int node, slot;
  pthread_t thread;
  pthread_cond_t cv;
  bool has_next;       /* a LAUNCH waits for this worker */
  sl_decision next;
  double next_launched_s; /* when the core handed it out: the slot is taken from then */
  input_ref *next_inputs; /* pinned when the LAUNCH came: the task has fetched them */
  bool busy;           /* running a task now */
  sl_task_id current;
  int current_op;
  bool resume;         /* RESUME for the current task */
  atomic_bool cancel;  /* the current task must stop (CANCEL, kill, node loss) */
  bool killed;         /* the core already knows the current task failed */
  int64_t done_row;    /* tasks.csv row of the attempt just done (-1: none), and its end: */
  double done_at;      /* its handoff is known once its finish has been decided on */
  sl_kernel *kernels[SL_MAX_OPS][MAX_MEMBERS];
  /* a worker process's slot: the head's answer to its EMIT */
  bool has_answer;
  int answer_rc;
  sl_part_id answer_part;
  sl_emit_fate answer_fate;
  void *remote; /* the worker process's own per-slot state */
};

struct engine {
  const sl_plan *plan;
  const sl_cluster *cluster;
  const sl_exec_opts *opts;
  sl_core *core;
  sl_store *store;
  sl_sink *sink;
  sl_sort_check *sort_check; /* the sink checks a sort (check = sorted); NULL: no */
  bool sort_check_failed;    /* a delivered partition failed it: the run's verdict */
  sl_group_check *group_check; /* the sink checks a groupby (check = grouped); NULL: no */
  bool group_check_failed;
  sl_recorder *rec;
  sl_event_log *events; /* what the core was fed, with --record-events */
  pthread_mutex_t lock;
  pthread_cond_t main_cv;
  pthread_cond_t spill_cv; /* a spilled partition's file is complete */
  /* partitions no one holds any more, freed by their own thread: freeing
   * megabytes under the lock held every worker up (below, reclaim()) */
  pthread_t reclaimer;
  pthread_cond_t reclaim_cv;
  sl_blob *reclaim;
  bool reclaimer_running, reclaim_stop;
  worker **workers;     /* [node][slot] */
  int *nslots;
  /* kill: events that found no running task of their operator, by op + 1
   * (0: any operator): the next attempt of it to start dies, as in the
   * simulator (sim/engine.h), so a scheduled kill always strikes. */
  struct timespec t0;
  bool done, stop;
  int fail_code;
  char fail_msg[512];
  sl_fault_log fault_log;   /* what became of each scheduled fault */
  sl_rejected_tally rejected; /* rows kernels rejected, skipped under --max-errored-rows */
  bool gpu_present;
  atomic_bool real_kernels; /* some attempt ran a kernel that takes its own time */
  double last_progress_rows, last_progress_t;
  sl_net *net;              /* the cluster's links, emulated: storage reads, remote inputs */
  double *join_at;          /* per node: when an acquired pool node is in service, INFINITY: none */
  const sl_exec_remote *remote; /* a worker process's engine: no core (above); NULL in the executor */
  void *remote_ctx;
};

/* ------------------------------------------------ engine.c, for task.c */

/** @brief Seconds since the run's clock started. */
double sl__exec_now(const engine *e);
/** @brief Fails the run with @p code (the first failure's message stays); under the lock. */
void sl__exec_fail(engine *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** @brief Acts on every pending decision of the core (under the lock); true when a LAUNCH
 *  landed on @p self, which then runs it next. */
bool sl__exec_drain(engine *e, worker *self);
/** @brief Releases the inputs a LAUNCH pinned (@p n of them; @p in is freed). */
void sl__exec_unpin_inputs(engine *e, input_ref *in, int n);

/* -------------------------------- engine.c, for its head (head.c) too */

/** @brief Hands @p rows to the sink and its checks; under the lock. */
void sl__exec_sink_rows(engine *e, const sl_rows *rows);
/** @brief A decision about the job as a whole, the same wherever the slots run: ROLLBACK
 *  (the sink, its checks and the timeline go back), CHECKPOINT, DONE and FAIL. */
void sl__exec_job_decision(engine *e, const sl_decision *d);
/** @brief A timeline row for a fault as it strikes (see engine.c). */
void sl__exec_mark_fault(engine *e, double now, const char *kind, int node, const char *op);
/** @brief Opens the sink, its checks, the recorder and the output folder (summary: started). */
int sl__exec_outputs_open(engine *e, sl_summary *summary, char *err, size_t errlen);
/** @brief The summary, the output's checks and the files of a run that ended after @p jct s. */
int sl__exec_outputs_finish(engine *e, sl_summary *summary, double jct, double startup, char *err, size_t errlen);
/** @brief The progress line on stderr at @p now, with @p extra (NULL: none) at its end. */
void sl__exec_progress_line(engine *e, double now, const char *extra);
/** @brief Frees what sl__exec_outputs_open() made. */
void sl__exec_outputs_close(engine *e);

/** @brief Waits (under the lock) for an order for @p w and takes it: its decision, when it
 *  came, its pinned inputs. False once the engine stops. */
bool sl__exec_await_order(worker *w, sl_decision *d, double *launched, input_ref **in);
/** @brief @p w starts attempt @p d: busy with it, no RESUME, answer or cancel yet. */
void sl__exec_begin_attempt(worker *w, const sl_decision *d);

/* ------------------------------------------------ task.c, for engine.c */

/** @brief Every kernel's parameters checked before anything runs; SL_EINVAL with FILE:LINE. */
int sl__exec_check_kernels(const engine *e, char *err, size_t errlen);
/** @brief Runs LAUNCH @p d on @p w's slot with its pinned inputs @p in: called without the
 *  lock, returns with it held, the core told how the attempt ended. */
void sl__exec_run_task(worker *w, const sl_decision *d, double launched, input_ref *in);

#endif
