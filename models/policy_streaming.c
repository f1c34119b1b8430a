/*
 * Streaming batch: the paper's policy, after Ray Data's streaming executor.
 *
 * - Least-buffered operator first: among operators that have input, fit on
 *   some node and have room for their output, the one with the fewest
 *   output bytes waiting wins (ties: upstream first).
 * - Ray Data's reservation allocator: each live operator reserves a share
 *   of CPU, GPU and store (half of its store share for its outputs); the
 *   rest is a shared pool handed out downstream first. Ratio 0 turns it off.
 * - Output backpressure: an emission that does not fit waits (RESUME later);
 *   when every running task waits, the liveness rule lets one through.
 * - Adaptive admission (Algorithms 1 and 2): a budget of source bytes,
 *   started at the store capacity and refilled every period at the rate
 *   the downstream operators can drain it.
 * Ablations: no adaptive admission (pessimistic, fixed concurrency), no
 * dynamic partitioning (one partition per task), static allocation
 * (policy_stream.c's placement with lineage recovery).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "core_internal.h"
#include "error.h"

#define EPS 1e-9

typedef struct {
  double admit_budget; /* Algorithm 1: source bytes that may still enter */
  double admit_rate;   /* Algorithm 2: bytes per second the pipeline drains */
  double last_accrual;
  double next_refill;
  /* reservation allocator, recomputed before every dispatch */
  bool reserve;
  double task_cpu[SL_MAX_OPS], task_gpu[SL_MAX_OPS], task_mem[SL_MAX_OPS];
  double out_res[SL_MAX_OPS];
  double bud_cpu[SL_MAX_OPS], bud_gpu[SL_MAX_OPS], bud_mem[SL_MAX_OPS];
  int cap[SL_MAX_OPS]; /* concurrency cap, 0 = none */
  int share_cap[SL_MAX_OPS]; /* streaming-plus: tasks the bound's allocation needs, 0 = none */
  double need[SL_MAX_OPS];   /* streaming-plus: the same without the slack (launch_key()) */
  bool storage_binds;        /* streaming-plus: the bound's rate fills the storage link */
  double source_rate;        /* streaming-plus: source tasks per second at the bound's pace, 0 = none */
  double next_source_at;     /* streaming-plus: when the next source task may start */
  double link_free_at;       /* streaming-plus: when the storage link ends the reads started so far, one at a time */
  double part_target[SL_MAX_OPS]; /* streaming-plus: output partition bytes, 0 = the plan's */
  double last_target[SL_MAX_OPS]; /* streaming-plus: the same in the operator's last wave */
  double area_s;                  /* streaming-plus: the bound's area, the JCT it aims at */
  int wave_op;                    /* streaming-plus: wave_operator(), -1 = none */
  double wave_rows;               /* streaming-plus: its input rows over its slots, one wave's task */
  double source_deadline;         /* streaming-plus: when the last source task must start, 0 = none */
  double bound_source_rate;       /* streaming-plus: source tasks per second at the bound, 0 = none */
  double fill_pace;               /* streaming-plus: fill_pace() of the bound */
  double start_pace;              /* streaming-plus: start_pace() of the bound */
  double *spill_disk_s;           /* streaming-plus: disk seconds its spills took, by node */
  double *slot_ends;              /* streaming-plus: scratch of own_slot_wait(), HOME_RANKS a node */
  int slot_ends_op;               /* the operator slot_ends holds, -1 = none */
  double slot_ends_now;           /* ... at this instant, */
  uint32_t slot_ends_tasks;       /* ... with this many tasks made */
  int64_t slot_ends_done;         /* ... and this many of the operator's done */
  double *ending;                 /* streaming-plus: scratch of hold_fast_nodes(), by node */
  int *held;                      /* streaming-plus: the nodes hold_fast_nodes() held */
  int nheld;
  int holds[SL_MAX_OPS];          /* streaming-plus: nodes held for each operator */
  bool holding;                   /* streaming-plus: an operator has long tasks to hold nodes for */
  bool any_disk;                  /* some node's group has a disk: spills_there() may hold */
  double backbone_share;          /* streaming-plus: a binding backbone's bytes per second per node, 0 = none */
  double source_expansion;        /* the most a source byte grows downstream (>= 1); budget_cap() */
  bool feeds_barrier[SL_MAX_OPS]; /* a shuffle's reducers come after it: see feeds_barrier() */
  /* Algorithm 2's period: each operator's slot-seconds at its start */
  double period_start;
  double used_mark[SL_MAX_OPS][2];
  struct fill_slot *fill;         /* streaming-plus: scratch of fill_horizon() */
  uint32_t fill_cap;
  /* streaming-plus: the operators that operator i yields group g to
   * (yield_caps()) */
  uint32_t yield_to[SL_MAX_OPS][SL_MAX_GROUPS];
  double kept[SL_MAX_OPS][SL_MAX_GROUPS][2]; /* streaming-plus: CPU and GPU slots the allocation gives
                                                operator i on group g, where it is favoured */
  uint32_t takes[SL_MAX_OPS];     /* streaming-plus: the groups with slots of each operator's shape */
  bool any_yield;                 /* streaming-plus: some operator yields some group */
  bool class_binds[2];            /* streaming-plus: the bound's allocation leaves (almost) no CPU [0] / GPU [1] slot idle */
  bool reads_home[SL_MAX_OPS];    /* streaming-plus: reads_where_made() */
  double bound_rows_s;            /* streaming-plus: the bound's throughput, source rows a second, 0 = none */
} streaming_state;

/* A slot as fill_horizon() sees it: doing rows from @c from (when it is
 * free and has paid a task's fixed charge) at @c speed. */
struct fill_slot {
  double from;
  double speed;
};

/* Static allocation lives with the stream model's placement. */
int sl__static_init(sl_core *c, char *err, size_t errlen);
void sl__static_fini(sl_core *c);
void sl__static_schedule(sl_core *c, double now);
int sl__static_admit(sl_core *c, double now, sl__task *t, double bytes, sl_emit_fate *fate);
void sl__static_emitted(sl_core *c, double now, sl__task *t, sl_part_id p);
bool sl__static_cluster_change(sl_core *c, double now, int node, bool joined);

static streaming_state *state(const sl_core *c)
{
  return c->pstate;
}

/* --------------------------------------------------------------- totals */

/*
 * Whether a shuffle's reducers come after operator @p op: every byte it
 * makes, or that its outputs become, stays until the shuffle's last input
 * is in. Holding it back for memory frees none, and the job then crept
 * through the liveness rule one spilled partition at a time: a 300 GB
 * sort on ten nodes of 19 GB stores ran its maps over 318 s where batch
 * took 17 s. Its emissions spill when the store is full, and memory does
 * not gate its start.
 */
static bool feeds_barrier(const sl_core *c, int op)
{
  return state(c)->feeds_barrier[op];
}

/*
 * Store room on @p node that a merge stage's emissions (@p op) leave to the
 * outputs its producers make: all of it when the shuffle's input is more
 * than the stores hold. A merged partition waits on disk for the
 * reducers, who would read most of them from there anyway, and a
 * producer's output stays in memory for the next merge. Merged partitions
 * kept while they fit left the maps after them none: a 1 TB push-star
 * sort on ten nodes of 19 GB stores spilled 332 GB of map outputs, which
 * the merges read back.
 */
static double merge_room(const sl_core *c, int op, int node)
{
  if (op + 1 >= c->nops || !c->plan->ops[op].merge_stage)
    return 0;
  double shuffled = sl_plan_rows_in(c->plan, op + 1) * c->plan->ops[op + 1].in_row_bytes;
  return shuffled > c->alive_store ? c->nodes[node].store_budget : 0;
}

static void class_totals(const sl_core *c, double *cpu, double *gpu, double *mem)
{
  *cpu = c->alive_cpu;
  *gpu = c->alive_gpu;
  *mem = c->alive_store;
}

/* Bytes a running task of @p op holds in its output buffer, as Ray Data
 * estimates it: one partition on average, at most two. */
static double pending_output(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  double per_part = s->est_out_bytes / fmax(1, s->est_out_parts);
  return per_part * fmin(2, s->est_out_parts);
}

static bool is_last(const sl_core *c, int op)
{
  return op == c->nops - 1;
}

/* Whether operators @p i and @p j ask for slots of a common class. */
static bool share_a_class(const sl_core *c, int i, int j)
{
  const sl_pop *a = &c->plan->ops[i], *b = &c->plan->ops[j];
  return (a->cpu > 0 && b->cpu > 0) || (a->gpu > 0 && b->gpu > 0);
}

/* streaming-plus: whether a task of @p op that pauses on a full store
 * holds nothing its consumer needs (the consumer asks for none of the
 * resources @p op asks for), and @p op is not a source paced on a shared
 * storage link (more reads at once only share the link: zoo case 135 lost
 * 22 points). Such a task may count one partition ahead, not two: a store
 * that fills only pauses it. Sources on 128 CPUs feeding a filter on GPUs
 * ran 32 at a time on stores of 64 partitions: zoo case 24, 58.2% of the
 * bound where the static model reached 99.4%; now 99.3%. */
static bool pauses_alone(const sl_core *c, int op)
{
  if (!c->opts.streaming.bound_shares || op + 1 >= c->nops)
    return false;
  return !share_a_class(c, op, op + 1) && !(op == 0 && state(c)->source_rate > 0);
}

/* What one running task of @p op may add to the store at a time: its whole
 * output, or, when that is more than two partitions, two partitions (one
 * where it pauses_alone()): a task whose emission is refused pauses, as a
 * generator past its buffer does, and the rest waits for the consumers.
 * Charging an expanding task its whole output let one such task run at a
 * time while the stores sat empty. */
static double task_footprint(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  if (pauses_alone(c, op))
    return s->est_out_bytes / fmax(1, s->est_out_parts);
  return fmin(s->est_out_bytes, pending_output(c, op));
}

/* ---------------------------------------------------------- reservation */

static void reserve_into(sl_core *c, double *shared_cpu, double *shared_mem);

static void reserve(sl_core *c)
{
  double cpu, mem;
  reserve_into(c, &cpu, &mem);
}

static void reserve_into(sl_core *c, double *shared_cpu, double *shared_mem)
{
  streaming_state *st = state(c);
  double L_cpu, L_gpu, L_mem;
  class_totals(c, &L_cpu, &L_gpu, &L_mem);
  int live[SL_MAX_OPS], n = 0;
  for (int i = 0; i < c->nops; i++)
    if (!sl__op_drained(c, i))
      live[n++] = i;
  *shared_cpu = *shared_mem = 0;
  if (n == 0)
    return;
  double r = c->opts.reservation_ratio;
  double sh_cpu = L_cpu * r / n, sh_gpu = L_gpu * r / n, sh_mem = L_mem * r / n;
  double rem_cpu = L_cpu, rem_gpu = L_gpu, rem_mem = L_mem;
  for (int k = 0; k < n; k++) {
    int i = live[k];
    const sl_pop *o = &c->plan->ops[i];
    double min_mem = is_last(c, i) ? 0 : pending_output(c, i);
    st->out_res[i] = fmax(sh_mem / 2, 1);
    /* an operator that asks for none of a resource reserves none of it */
    double cpu = o->cpu > 0 ? fmax(sh_cpu, o->cpu) : 0;
    double gpu = o->gpu > 0 ? fmax(sh_gpu, o->gpu) : 0;
    double mem = fmax(sh_mem - st->out_res[i], min_mem);
    if (cpu <= rem_cpu + EPS && gpu <= rem_gpu + EPS) {
      st->task_cpu[i] = cpu;
      st->task_gpu[i] = gpu;
      st->task_mem[i] = mem;
    } else { /* cluster too small: keep only the memory minimum */
      st->task_cpu[i] = st->task_gpu[i] = 0;
      st->task_mem[i] = min_mem;
    }
    rem_cpu = fmax(0, rem_cpu - st->task_cpu[i]);
    rem_gpu = fmax(0, rem_gpu - st->task_gpu[i]);
    rem_mem = fmax(0, rem_mem - st->task_mem[i] - st->out_res[i]);
  }
  /* budgets: what is left of the reservation plus a share of the pool */
  for (int k = 0; k < n; k++) {
    int i = live[k];
    const sl__op *s = &c->ops[i];
    double internal = s->running * (is_last(c, i) ? 0 : pending_output(c, i));
    double mem_used = internal + fmax(0, s->buffered - st->out_res[i]);
    st->bud_cpu[i] = fmax(0, st->task_cpu[i] - s->cpu_used);
    st->bud_gpu[i] = fmax(0, st->task_gpu[i] - s->gpu_used);
    st->bud_mem[i] = fmax(0, st->task_mem[i] - mem_used);
    rem_cpu -= fmax(0, s->cpu_used - st->task_cpu[i]);
    rem_gpu -= fmax(0, s->gpu_used - st->task_gpu[i]);
    rem_mem -= fmax(0, mem_used - st->task_mem[i]);
  }
  *shared_cpu = rem_cpu;
  *shared_mem = rem_mem;
  rem_cpu = fmax(0, rem_cpu);
  rem_gpu = fmax(0, rem_gpu);
  rem_mem = fmax(0, rem_mem);
  for (int k = n - 1, j = 0; k >= 0; k--, j++) { /* downstream first */
    int i = live[k];
    const sl_pop *o = &c->plan->ops[i];
    double left = n - j;
    double g_cpu = rem_cpu / left, g_gpu = rem_gpu / left, g_mem = rem_mem / left;
    /* borrow so that one task can always be scheduled when the pool allows */
    double need_cpu = fmax(0, o->cpu - (st->bud_cpu[i] + g_cpu));
    if (need_cpu > 0 && g_cpu + need_cpu <= rem_cpu + EPS)
      g_cpu += need_cpu;
    /* no share of a resource the operator never asks for (Ray's max_req clamp) */
    if (o->cpu <= 0)
      g_cpu = 0;
    if (o->gpu <= 0)
      g_gpu = 0;
    double need_mem = fmax(0, (is_last(c, i) ? 0 : pending_output(c, i)) - (st->bud_mem[i] + g_mem));
    if (need_mem > 0 && g_mem + need_mem <= rem_mem + EPS)
      g_mem += need_mem;
    rem_cpu -= g_cpu;
    rem_gpu -= g_gpu;
    rem_mem -= g_mem;
    st->bud_cpu[i] += g_cpu;
    st->bud_mem[i] += g_mem;
    /* GPUs are not partitioned: a GPU operator may use every GPU it does
     * not hold, of the node groups its accelerator pin allows */
    st->bud_gpu[i] = o->gpu > 0 ? fmax(0, sl__op_capacity(c, i, true) - c->ops[i].gpu_used) : 0;
  }
}

static double source_need_by_deadline(const sl_core *c, bool *late);

static bool within_budget(const sl_core *c, int op)
{
  const streaming_state *st = state(c);
  if (!st->reserve)
    return true;
  const sl_pop *o = &c->plan->ops[op];
  double mem = is_last(c, op) ? 0 : pending_output(c, op);
  return o->cpu <= st->bud_cpu[op] + EPS && o->gpu <= st->bud_gpu[op] + EPS &&
         mem <= st->bud_mem[op] + EPS;
}

/* ----------------------------------------------------------- eligibility */

static double available_slots(const sl_core *c, int i);
static void accrue(sl_core *c, double now);

/* Bytes the running tasks of @p op will still put in the store. */
static double still_to_emit(const sl_core *c, int op)
{
  if (is_last(c, op))
    return 0;
  const sl__op *s = &c->ops[op];
  if (s->running == 0)
    return 0;
  /* what they emitted so far already sits in the store */
  return fmin(fmax(0, s->running * s->est_out_bytes - s->running_out_bytes), s->running * task_footprint(c, op));
}

/* What the running tasks of @p op will still add to the store, net of
 * the inputs they free as they end. A consumer that makes no more than it
 * reads adds nothing once its tasks end; the moment its output and input
 * are both stored is the headroom of has_output_space(). Counted whole,
 * the outputs of 24 running one-row consumers held the sources back with
 * the stores half empty (zoo case 31: 52% of the bound). The paper's
 * policy counts them whole. */
static double net_to_emit(const sl_core *c, int op)
{
  double out = still_to_emit(c, op);
  if (op == 0 || !c->opts.streaming.bound_shares)
    return out;
  return fmax(0, out - c->ops[op].running * c->ops[op].est_in_bytes);
}

/* Tasks of @p i that could start soon: those its queued partitions and
 * the partitions its producer's running tasks (and the task of @p op about
 * to launch) will make can fill, a task gathering as many partitions as
 * it reads on average. Room kept for the outputs of an operator with
 * nothing to run only blocks the operators that would feed it: an
 * expanding map waited with 190 partitions queued, the store half full of
 * its inputs and every slot idle (zoo case 145, 2% of the bound). Counted
 * a task a partition, a map of 32-row batches over 4-row source outputs
 * was kept room for eight times the tasks it could run, and the sources
 * ran on a fifth of the CPUs (zoo case 6, 35% of the bound). */
static double tasks_coming(const sl_core *c, int i, int op)
{
  const sl__op *up = &c->ops[i - 1];
  double parts = (double)sl__idq_len(&c->ops[i].inq) + (double)sl__idq_len(&c->ops[i].retryq);
  parts += (up->running + (i - 1 == op)) * fmax(1, up->est_out_parts);
  if (c->plan->ops[i].kind == SL_OP_ALL_TO_ALL || !c->opts.streaming.bound_shares)
    return INFINITY; /* the paper's policy keeps room for every slot */
  double part_bytes = up->est_out_bytes / fmax(1, up->est_out_parts);
  double parts_per_task = part_bytes > 0 ? fmax(1, c->ops[i].est_in_bytes / part_bytes) : 1;
  return ceil(parts / parts_per_task - 1e-9);
}

/* Room in the stores for what one more task of @p op will emit, on top
 * of what is stored and what running tasks will still emit. A task whose
 * output is no bigger than its input frees what it adds when it ends, so
 * it always has room: refusing it could only deadlock the pipeline. */
static bool grows_data(const sl_core *c, int op);

/* streaming-plus spills where waiting for store room would idle slots,
 * as Ray's object store does when it fills: only on a node whose group
 * has a disk, so a spill costs the time it takes in either engine. */
static bool spills_there(const sl_core *c, int n, double bytes)
{
  if (!c->opts.streaming.bound_shares || n < 0 || n >= c->nnodes)
    return false;
  return sl_group_has_disk(sl_cluster_node_group(c->cluster, n)) && sl__may_spill(c, n, bytes);
}

/* Disk seconds a spill of @p bytes on node @p n takes, written and read
 * back. */
static double spill_disk_seconds(const sl_core *c, int n, double bytes)
{
  const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
  return bytes / (g->disks * g->disk_write_bps) + bytes / (g->disks * g->disk_read_bps);
}

/* The share of the time so far that node's disk may spend on the spills
 * streaming-plus chooses. Unbounded, a GPU node with a store of four
 * partitions spilled 67 GB of outputs its consumer would have drained,
 * and the disk became the bottleneck (zoo seed 1 case 169: 85.6 -> 50.9%
 * of the bound; 83.5% at a quarter). At half, seeds 1, 7 and 3 gained
 * 0.03 to 0.09 points less on average. */
#define SPILL_DISK_SHARE 0.25
#define SPILL_WRITE_SHARE 0.25

/* Whether node @p n's disk has time for one more spill at @p now: its
 * spills so far took no more than SPILL_DISK_SHARE of the time, or it
 * has none yet. */
static bool disk_has_time(const sl_core *c, int n, double now)
{
  const streaming_state *st = state(c);
  return st->spill_disk_s[n] == 0 || st->spill_disk_s[n] <= SPILL_DISK_SHARE * now;
}

static double useful_instances(const sl_core *c, int i);

/* Whether starting a task of @p op on node @p n, whose output may not fit
 * the store there, leaves its consumer better off. Where the store has
 * room for @p bytes now, nothing spills yet: yes (the room the policy
 * keeps for what running tasks will emit is an estimate, and this start
 * is what keeps some pipelines moving: refused, seed 1 case 80 fell from
 * 93.4 to 53.1% though it spills nothing). Where it has none and the two
 * share a slot class, the producer holds a slot the consumer could use
 * while it writes, so the write must be small next to its task (a
 * quarter of it at most). Producers that wrote their outputs to disk for
 * a consumer on the same CPUs spilled 4.1 GB on seed 1 case 40 (83.7%;
 * 0.7 GB and 87.8% with this) and 4.0 GB on seed 3 case 154 (81.3%; 1.5
 * GB and 88.0%). */
static bool spill_pays(const sl_core *c, int op, int n, double bytes)
{
  const sl__node *nd = &c->nodes[n];
  if (nd->store_used + bytes <= nd->store_budget || !share_a_class(c, op, op + 1))
    return true;
  const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
  double write_s = c->ops[op].est_out_bytes / (g->disks * g->disk_write_bps);
  return write_s <= SPILL_WRITE_SHARE * c->ops[op].est_time;
}

static bool held_to_share(const sl_core *c, int j);

/* Whether operators @p i and @p j ask for slots of a class the bound's
 * allocation keeps busy (class_binds). */
static bool share_a_binding_class(const sl_core *c, int i, int j)
{
  const streaming_state *st = state(c);
  const sl_pop *a = &c->plan->ops[i], *b = &c->plan->ops[j];
  return (a->cpu > 0 && b->cpu > 0 && st->class_binds[0]) || (a->gpu > 0 && b->gpu > 0 && st->class_binds[1]);
}

static bool has_output_space(const sl_core *c, int op);

/* Whether @p op's tasks wait for store room for their output. */
static bool waits_for_room(const sl_core *c, int op)
{
  return grows_data(c, op) && !has_output_space(c, op);
}

/* The consumer's queue, in tasks for each slot it may use, under which a
 * task that grows data may start though the stores have no room. */
#define SPILL_FEED_QUEUE 0.5

/* Whether a task of @p op that grows data may start on node @p n (-1:
 * any node) although the store has no room for its output: its consumer
 * has little queued, so the slots it would leave idle are worth more
 * than the disk time of what spills. Held to the store, the sources of a
 * memory-bound job ran on a third of the CPUs while the batch model,
 * spilling 1 GB, reached 72.6% of the bound (zoo seed 1 case 44: 54.1%;
 * 83.3% spilling 0.3 GB). */
static bool spill_feeds_consumer(const sl_core *c, int op, int n)
{
  if (!c->opts.streaming.bound_shares || is_last(c, op) || !state(c)->any_disk)
    return false;
  /* less than half a task queued for each slot the consumer may use; with
   * an empty queue as the test: seeds 1, 7 and 3 mean -0.6, -0.6, -0.2
   * points (seed 1 case 40: 83.9 -> 53.5%, its consumer fed a partition
   * at a time). Nor while an operator further on that shares a class of
   * slots the bound keeps busy, and could start now, has that much
   * queued: the task takes a slot that operator would use, and what it
   * makes fills the store while that operator's queue drains. On one
   * node, 1.75 GiB source tasks started whenever the GPU map after them
   * had nothing queued, with a 4-CPU map further on 57 tasks deep: the
   * store filled, 3.6 GB spilled, the GPU map read its input back from a
   * disk the spills shared, and the CPUs idled 10 s (zoo seed 2 case
   * 155: 85.2% of the bound; 97.3% with this, nothing spilled). Counting
   * every operator further on, capped or not, at any class: seed 1 case
   * 137 lost 7 points to a GPU map capped at 12 tasks, set-up seed 1 case
   * 8 lost 14 to CPU work queued where the storage link binds. */
  for (int j = op + 1; j < c->nops; j++) {
    const sl__op *next = &c->ops[j];
    if (next->in_queue_bytes < SPILL_FEED_QUEUE * useful_instances(c, j) * fmax(next->est_in_bytes, 1))
      continue;
    /* has_output_space() last: it asks this of the operators after j */
    if (j == op + 1 || (share_a_binding_class(c, op, j) && !held_to_share(c, j) && !waits_for_room(c, j)))
      return false;
  }
  double bytes = task_footprint(c, op);
  if (n >= 0)
    return spills_there(c, n, bytes) && spill_pays(c, op, n, bytes);
  for (int k = 0; k < c->nnodes; k++)
    if (c->nodes[k].alive && spills_there(c, k, bytes) && spill_pays(c, op, k, bytes))
      return true;
  return false;
}

static bool sources_due_early(const sl_core *c);

/* streaming-plus: below this fill of a store, and with the operators
 * upstream counted for more than half of it, the room an operator checks
 * for its output leaves their coming output out (upstream_yields()). */
#define ROOM_FIRST_FILL 0.25

/* Whether the output the running tasks of the operators before one will
 * still emit, @p upstream, is left out of the room its task checks, with
 * @p used of @p budget stored. A producer that finds no room pauses, and a
 * consumer that makes more than it reads must not wait for outputs its
 * producers have yet to make: 231 long sources, each counted two
 * partitions ahead, left no room for their consumer, which doubles its
 * bytes, with the stores 6% full; it stopped, its 2,700 inputs filled the
 * stores, and the job crawled (0.8% of the bound;
 * test_plus_consumer_room_before_sources). Only while those counts are
 * most of the store and the store is mostly empty: at any fill, zoo seed
 * 1 case 100's expanding map filled its 56 MB stores (48.4 -> 41.1%);
 * without the second test, small stores with disks (set-up zoo case 145:
 * 76.9 -> 71.0%). */
static bool upstream_yields(const sl_core *c, double upstream, double used, double budget)
{
  return c->opts.streaming.bound_shares && used < ROOM_FIRST_FILL * budget && upstream > 0.5 * budget;
}

static bool has_output_space(const sl_core *c, int op)
{
  if (spill_feeds_consumer(c, op, -1))
    return true;
  if (is_last(c, op))
    return true;
  if (op > 0 && !grows_data(c, op)) /* within the rounding of sizes, as below */
    return true;
  double L_cpu, L_gpu, L_mem;
  class_totals(c, &L_cpu, &L_gpu, &L_mem);
  double coming = 0, upstream = 0;
  for (int i = 0; i + 1 < c->nops; i++)
    *(i < op ? &upstream : &coming) += net_to_emit(c, i);
  if (!upstream_yields(c, upstream, c->stats.store_bytes, L_mem))
    coming += upstream;
  /* keep room for the transient outputs of downstream operators: a task
   * holds its input until it ends, so its output briefly adds to the store */
  double headroom = 0;
  for (int i = op + 1; i + 1 < c->nops; i++)
    headroom += fmin(available_slots(c, i), tasks_coming(c, i, op)) * pending_output(c, i);
  /* Downstream operators with many slots (64 CPUs of a node) asked for
   * more headroom than the stores hold: nothing but the liveness rule
   * launched, one task at a time. Half the stores is room enough for
   * their transient outputs; the per-node check keeps each store safe. */
  headroom = fmin(headroom, 0.5 * L_mem);
  if (op == 0 && sources_due_early(c))
    headroom = 0; /* their consumers go first by upstream_yields() */
  return c->stats.store_bytes + coming + headroom + task_footprint(c, op) <= L_mem + EPS;
}

/* Growth within this share of the input counts as none: sizes in specs
 * are rounded, and 16 rows of 1.07 MB made of one of 17.1 MB "grew" by
 * 0.12%. Such a map then needed store room for its output like a source,
 * and with the stores full of its own input it never ran while sources
 * and its consumer sat paused (zoo seed 7 case 18: 406 to 847 partitions
 * queued for 460 s, 14.8% of the bound). */
#define GROWTH_TOLERANCE 0.01

/* Does @p op grow the data it reads (a source always does)? Only such an
 * operator can fill a store; one that shrinks its input frees room. */
static bool grows_data(const sl_core *c, int op)
{
  if (is_last(c, op))
    return false;
  const sl__op *s = &c->ops[op];
  return op == 0 || s->est_out_bytes > s->est_in_bytes * (1 + GROWTH_TOLERANCE) + EPS;
}

/* Per-node backpressure, as Ray Data's per-node object stores: the store
 * of node @p n must take what one more task of @p op emits, on top of what
 * it holds, what the tasks running there will still emit, and the outputs
 * of the downstream operators that may run there. The budgets above are
 * cluster-wide, but a task stores its outputs on its own node: without
 * this, sources fill the stores of the nodes a pinned downstream operator
 * runs on, and its emissions wait for the liveness rule. An empty node
 * always takes one task, so a large output cannot starve forever. */
static bool node_has_room(const sl_core *c, int n, int op)
{
  if (!grows_data(c, op) || spill_feeds_consumer(c, op, n))
    return true;
  const sl__node *nd = &c->nodes[n];
  double coming = 0, upstream = 0;
  for (int j = 0; j + 1 < c->nops; j++)
    if (nd->op_running[j] > 0)
      *(j < op ? &upstream : &coming) +=
          fmin(fmax(0, nd->op_running[j] * c->ops[j].est_out_bytes - nd->op_running_out[j]),
               nd->op_running[j] * task_footprint(c, j));
  if (!upstream_yields(c, upstream, nd->store_used, nd->store_budget))
    coming += upstream;
  if (nd->store_used + coming <= EPS)
    return true;
  /* room for one task of each downstream operator that may run here and
   * runs none yet (what running ones will emit is in what is coming) */
  double headroom = 0;
  for (int k = op + 1; k + 1 < c->nops; k++)
    if (nd->op_running[k] == 0 && sl__op_allowed(c, n, k))
      headroom += pending_output(c, k);
  return nd->store_used + coming + headroom + task_footprint(c, op) <= nd->store_budget + EPS;
}

/* The next node, from @p op's rotating cursor, that fits a task of @p op
 * and has room for its output; -1 when none. */
static int next_node_with_room(sl_core *c, int op)
{
  if (!sl__fits_anywhere(c, op))
    return -1;
  for (int k = 0; k < c->nnodes; k++) {
    int n = (c->ops[op].rr_next + k) % c->nnodes;
    if (sl__fits(c, n, op) && node_has_room(c, n, op))
      return n;
  }
  return -1;
}

/* Seconds that moving partition @p p off its node takes over the NIC of
 * the node that holds it, @p sharing times slower than the NIC alone
 * carries it; 0 where nothing limits the move. */
static double move_seconds(const sl_core *c, const sl__part *p, double sharing)
{
  double nic = sl_cluster_node_group(c->cluster, p->node)->nic_bps;
  if (!(nic > 0) || !isfinite(nic))
    nic = INFINITY;
  /* a backbone that binds is shared by every node's transfers: each gets
   * its share of it, however fast its NIC (seed 7 case 161: NICs of 59
   * Gbps behind a 100 Gbps backbone for 62 nodes) */
  if (c->opts.streaming.bound_shares && state(c)->backbone_share > 0)
    nic = fmin(nic, state(c)->backbone_share);
  return isfinite(nic) ? p->bytes * sharing / nic : 0;
}

/* The work the plan gives a task of @p op (not the observed time, which
 * counts the transfers). */
static double task_work(const sl_core *c, int op)
{
  return sl_plan_task_time(&c->plan->ops[op], c->ops[op].est_in_rows);
}

/* Whether moving partition @p p off its node takes longer than @p share of
 * the work of a task of @p op: its bytes over the NIC of the node that
 * holds it against the work the plan gives the task (not the observed
 * time, which counts the transfers). With the whole work
 * (transfer_dominates()), where it is read matters more than spreading the
 * work over the nodes. Its bytes cross @p sharing times slower than the
 * NIC alone would carry them (read_locally()). */
static bool transfer_exceeds(const sl_core *c, int op, const sl__part *p, double share, double sharing)
{
  double move = move_seconds(c, p, sharing);
  return move > 0 && move > share * task_work(c, op);
}

static bool transfer_dominates(const sl_core *c, int op, const sl__part *p)
{
  return transfer_exceeds(c, op, p, 1, 1);
}

/* streaming-plus reads a queued partition where it lives whenever a task
 * fits there now and moving it would cost more than this share of the
 * task's work: an idle slot on the partition's own node is as good as one
 * elsewhere, and the transfer holds the slot it runs on. Without it, a
 * 1-CPU filter over 64 MiB partitions on 177 Mbps NICs spent 4 of its 5 s
 * a task receiving (zoo seed 1 case 15; seed 7 case 181: 22.4 -> 65.1% of
 * the bound). Below the share, spreading the
 * work matters more: at any transfer, consumers crowded onto the nodes
 * that made their inputs, filled their stores and spilled (case 135:
 * 64.7% of the bound to 2.9%). And only on a node whose store is less than
 * LOCAL_READ_FILL full: GPU maps read where a source on 32 CPUs made their
 * inputs, their outputs filled that node's store for a consumer capped at
 * 3 tasks, and the GPUs of the other node idled (seed 3 case 198: 84.2%
 * of the bound to 50.9%; 90.9% with the fill). The fill matters only for
 * a task that grows data: one that does not leaves its node's store no
 * fuller than it found it, and held to the fill, such consumers read
 * across the network exactly while their queues, and so the stores, were
 * full (seed 3 case 54: 35.0% of the bound, 64.7% without the fill for
 * them; seed 1 case 58: 34.0 -> 52.0%). The transfer is priced at the
 * share of the NIC it would get: the node's NIC already serves its pulls
 * (sl__node.pulls), each for a share of its task. Priced alone, 32 MiB
 * over a 100 Mbps NIC looked cheap beside a 41 s task, and a thousand
 * such tasks read across the network at once, their slots idle for input
 * 22% of the run (zoo seed 2 case 44: 47.7 -> 57.5% of the bound; case
 * 111: 10.8 -> 58.0%; on seeds 1, 2, 7 and 3, 41 cases up by more than 2
 * points and 17 down). */
#define LOCAL_READ_SHARE 0.25
#define LOCAL_READ_FILL 0.25

/* Whether a task of @p op can start on node @p n now, with room for its
 * output there when @p by_room. */
static bool starts_on(const sl_core *c, int n, int op, bool by_room)
{
  return sl__fits(c, n, op) && (!by_room || node_has_room(c, n, op));
}

/* streaming-plus: whether @p p, which no rule sends home, is still best
 * read where it lives (see LOCAL_READ_SHARE). */
static bool read_locally(const sl_core *c, int op, const sl__part *p, bool by_room)
{
  const sl__node *nd = &c->nodes[p->node];
  return c->opts.streaming.bound_shares && transfer_exceeds(c, op, p, LOCAL_READ_SHARE, 1 + nd->pulls) &&
         (nd->store_used < LOCAL_READ_FILL * nd->store_budget || !grows_data(c, op)) &&
         starts_on(c, p->node, op, by_room);
}

/* Whether an operator upstream of @p op has a task to launch: a source
 * split, a queued input or a retry. */
static bool upstream_pending(const sl_core *c, int op)
{
  for (int j = 0; j < op; j++) {
    const sl__op *s = &c->ops[j];
    if (!sl__idq_empty(&s->retryq) || (j > 0 && !sl__idq_empty(&s->inq)))
      return true;
    if (j == 0 && s->next_split < c->plan->ops[0].tasks)
      return true;
  }
  return false;
}

/* Where a task of @p op should read a partition that its producer's
 * finish frees a slot for (sl__part.fresh), when moving it costs more than
 * the task's work (transfer_dominates()): its node, when a task of @p op
 * fits there now (and, with @p by_room, has room for its output); -2, wait,
 * when it will fit there as soon as the producer's finish comes (its engine
 * reports it at once) and no other work could use an idle slot elsewhere:
 * no other queued input of @p op, nothing upstream to launch; -1
 * otherwise, for the cursor to choose. Without it the consumer of each
 * output went, at the instant of its emission, to whichever node had a slot
 * free, though the producer's slot would free in the same instant: a job's
 * last wave, made on a few nodes while the others idled, crossed the
 * network (fig10b: 16 partitions of 128 MiB through the head's 15 Gbps
 * NIC, 1.15 s, in a job whose work takes 0.07 s). While other work waits,
 * an idle slot is worth its transfer: the producer's slot goes to that
 * work. Scans the window sl__take_inputs() takes from. */
static int input_home(const sl_core *c, int op, bool by_room)
{
  const sl__op *s = &c->ops[op];
  uint32_t window = sl__input_window(&s->inq);
  bool wait = false, other = false;
  for (uint32_t k = 0; k < window; k++) {
    const sl__part *p = &c->parts[sl__idq_at(&s->inq, k)];
    int n = p->node;
    if (!p->in_queue)
      continue;
    if (n < 0 || n >= c->nnodes) {
      other = true;
      continue;
    }
    if (!p->fresh || !transfer_dominates(c, op, p)) {
      if (read_locally(c, op, p, by_room))
        return n;
      other = true;
      continue;
    }
    if (starts_on(c, n, op, by_room))
      return n;
    if (sl__fits_once_finished(c, n, op))
      wait = true;
    else
      other = true;
  }
  return wait && !other && !upstream_pending(c, op) ? -2 : -1;
}

/* streaming-plus cuts the batches of an operator whose batches cost
 * nothing (no per-batch time): waiting for a full batch then only leaves
 * slots idle, and a task of fewer rows lets more slots share the work. */
static bool splits_batches(const sl_core *c, int op)
{
  return c->opts.streaming.bound_shares && sl__batch_free(c, op);
}

static bool upstream_running(const sl_core *c, int op)
{
  for (int i = 0; i < op; i++)
    if (c->ops[i].running > 0)
      return true;
  return false;
}

/* streaming-plus: an operator with a fixed cost per task waits until its
 * queue holds rows enough to keep that cost under a tenth of the task's
 * work (up to a target partition of them), while its producer is still
 * making more. Launching each partition as it arrives pays the fixed cost
 * per sliver: on many slots and a small store (zoo case 173: 157 ms a task
 * over 9 rows) that overhead becomes the bottleneck. It never waits while
 * any attempt is paused for memory: consuming is what frees the store
 * (zoo case 135 held paused producers for minutes), nor when nothing
 * upstream runs: then nothing more comes soon. Its producer alone is not
 * the test: a fast map between long source tasks is idle most of the time
 * while its input keeps coming (zoo case 128: 51-row tasks of a map that
 * pays 16 s a task, 1,435 of them, 47.6% of the bound). */
static bool waits_to_amortise(const sl_core *c, int op)
{
  if (!c->opts.streaming.bound_shares)
    return false;
  double want = sl__amortising_rows(c, op);
  if (!(want > 1))
    return false;
  const sl_pop *o = &c->plan->ops[op];
  if (o->in_row_bytes > 0)
    want = fmin(want, floor(c->plan->target_partition_bytes / o->in_row_bytes));
  if (want <= 1 || !upstream_running(c, op))
    return false;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].waiting > 0)
      return false; /* a paused producer needs consumers now, not later */
  const sl__op *s = &c->ops[op];
  int64_t rows = 0;
  for (uint32_t k = 0; k < sl__idq_len(&s->inq) && rows < want; k++)
    rows += c->parts[sl__idq_at(&s->inq, k)].rows;
  return rows < want;
}

static double useful_instances(const sl_core *c, int i);
static double slowest_speed(const sl_core *c, int i);
static double group_speed(const sl_core *c, int op, const sl_node_group *g);
static double speed_on(const sl_core *c, int op, int n);

/* The summed speeds of the slots @p op may use, within its share of the
 * bound's allocation (useful_instances()). */
static double useful_speed(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  bool gpu = o->gpu > 0;
  double request = gpu ? o->gpu : o->cpu;
  double sum = 0, n = 0;
  for (int g = 0; g < c->cluster->ngroups; g++) {
    if (!((c->op_groups[op] >> g) & 1u))
      continue;
    double slots = request > 0 ? (gpu ? c->group_alive_gpu[g] : c->group_alive_cpu[g]) / request : 0;
    sum += slots * group_speed(c, op, &c->cluster->groups[g]);
    n += slots;
  }
  return n > 0 ? sum * fmin(1, useful_instances(c, op) / n) : useful_instances(c, op);
}

static int by_from(const void *a, const void *b)
{
  double x = ((const struct fill_slot *)a)->from, y = ((const struct fill_slot *)b)->from;
  return (x > y) - (x < y);
}

/* The time H at which @p op's slots, each starting one more task of
 * fixed charge @p fixed when its running task ends (a free one now),
 * together do @p left more rows: the sum over slots of max(0, (H - free)
 * * speed - fixed) / time_per_row is left. The slots are those running it
 * (free when their work orders' charges end) and the free ones it may
 * take: its share of the allocation's slots not running it, or the free
 * slots of its class where there are more (under_cap() lets it past its
 * share into slots nobody else waits for), within its cap; the one asking
 * is of @p speed_here, the other free ones of @p mean_speed. Summed slot
 * by slot, not as a fluid average over them: the work running on a slow
 * slot past H cannot move to a fast one. -1 when the scratch cannot grow. */
static double fill_horizon(const sl_core *c, int op, double left, double fixed, double speed_here,
                           double mean_speed)
{
  const sl__op *s = &c->ops[op];
  const sl_pop *o = &c->plan->ops[op];
  streaming_state *st = state(c);
  double request = o->gpu > 0 ? o->gpu : o->cpu;
  double free_slots = request > 0 ? floor((o->gpu > 0 ? c->free_gpu : c->free_cpu) / request + EPS) : 1;
  double idle = fmax(useful_instances(c, op) - s->running, free_slots);
  idle = fmax(1, fmin(idle, sl__op_instances(c, op) - s->running));
  uint32_t n = (uint32_t)s->running + 2;
  if (n > st->fill_cap) {
    struct fill_slot *f = realloc(st->fill, sizeof *f * n);
    if (!f)
      return -1;
    st->fill = f;
    st->fill_cap = n;
  }
  for (int i = 0; i < s->running; i++) {
    const sl__task *t = &c->tasks[s->run_ids[i]];
    double sp = sl__slot_speed(c, op, t->node);
    st->fill[i] = (struct fill_slot){fmax(c->now, t->charge_end) + fixed / sp, sp};
  }
  /* the one asking, and the other free ones as one slot of their summed
   * speed (slots that join at the same time add up) */
  st->fill[s->running] = (struct fill_slot){c->now + fixed / speed_here, speed_here};
  st->fill[s->running + 1] = (struct fill_slot){c->now + fixed / mean_speed, (idle - 1) * mean_speed};
  qsort(st->fill, n, sizeof *st->fill, by_from);
  /* sweep the slots in the order they join: with k of them working,
   * rows(H) = (H * speeds - sum(from * speed)) / per_row */
  double speeds = 0, weighted = 0;
  for (uint32_t k = 0; k < n; k++) {
    speeds += st->fill[k].speed;
    weighted += st->fill[k].from * st->fill[k].speed;
    if (!(speeds > 0))
      continue;
    double h = (left * o->time_per_row + weighted) / speeds;
    if (k + 1 == n || h <= st->fill[k + 1].from)
      return h;
  }
  return c->now;
}

/* The rows a task of batch operator @p op starting now on node @p n
 * should take, with @p left rows of its input still to launch: on a node
 * (@p n >= 0), the rows its slot does by fill_horizon(), the time at which
 * every slot the operator may use, each after the task it runs, would end
 * those rows together; for no node in particular (@p n < 0: whether a
 * task may start, and the partitions cut for it), an even split over the
 * slots. By slot count alone, the slow GPUs of zoo seed 1 case 2 (speed
 * 0.47 against 1.2) got as many rows as the fast ones, and the tail was
 * cut into small tasks while the slow ones still ran: 36.8% of the bound,
 * 61.8% with this. */
static double mean_speed(const sl_core *c, int op);

static double balanced_share_rows(const sl_core *c, int op, double left, int n)
{
  const sl_pop *o = &c->plan->ops[op];
  double slots = useful_instances(c, op);
  /* the wave operator, once every source split has started, waits for
   * the rows fill_horizon() gives a task, as make_task() takes them: its
   * rows come soon, and by the even split over all its slots (which falls
   * as its tasks start) it started with two 17-row partitions where it
   * wanted 45, and the later tasks took up to 68 (zoo seed 1 case 45:
   * 250 s; 193 s with this). While the sources still run, its rows come
   * at their pace: waiting for a full share idled the GPUs of seed 1 case
   * 21 (77.7 -> 74.6% of the bound). */
  bool wave = op == state(c)->wave_op && c->plan->ops[0].kind == SL_OP_SOURCE &&
              c->ops[0].next_split >= c->plan->ops[0].tasks;
  if ((n < 0 && !wave) || !(o->time_per_row > 0))
    return ceil(left / slots);
  double fixed = o->time_per_task + o->time_per_batch;
  double mean = mean_speed(c, op);
  double speed = n >= 0 ? speed_on(c, op, n) : mean;
  double end = fill_horizon(c, op, left, fixed, speed, mean);
  if (end < 0)
    return ceil(left / slots); /* no scratch: the even split */
  return ceil(fmax(0, (end - c->now) * speed - fixed) / o->time_per_row);
}

/* The rows of a task of batch operator @p op that feeds the wave operator
 * (wave_operator()), near @p rows, such that the wave operator's one-wave
 * task takes its outputs whole: a divisor of that task's rows where @p
 * rows are fewer, a multiple where more. A partition is the least a task
 * takes, so partitions that do not divide the task leave it short or long:
 * 17-row partitions for 45-row tasks made tasks of 34 and 51 rows, the
 * 51-row ones 13 s longer (zoo seed 1 case 45: 193 s; 15-row ones, 178 s). */
static double wave_aligned_rows(const sl_core *c, int op, double rows)
{
  const streaming_state *st = state(c);
  if (st->wave_op != op + 1 || !(st->wave_rows > 0))
    return rows;
  const sl_pop *o = &c->plan->ops[op];
  double per = o->rows_out_per_row > 0 ? o->rows_out_per_row : 1;
  double out = rows * per, q = st->wave_rows;
  double aligned;
  if (out < q)
    aligned = ceil(q / ceil(q / out - 1e-9) - 1e-9);
  else
    aligned = fmax(1, fmin(round(out / q), floor(o->batch_size * per / q))) * q;
  return fmax(1, fmin(o->batch_size, ceil(aligned / per - 1e-9)));
}

/* streaming-plus: the rows a task of batch operator @p op whose batches
 * cost time should take on node @p n (-1: not chosen yet), with @p left
 * rows of its input still to launch (batch_share_rows), and now
 * (batch_rows_wanted). Whole batches while there are enough left to keep
 * every slot busy (balanced_share_rows); fewer rows once there are not,
 * so every slot gets a share (the bound's critical path assumes as much:
 * zoo case 197's last 55 batches of 256 rows ran 47 s each on 30 of 122
 * GPUs). Never below the rows that make the batch's fixed time half the
 * work. batch_rows_wanted() is 0 for an operator that is not such, or
 * outside streaming-plus. */
static double local_batch_rows(const sl_core *c, int op, int n, double want);

static double batch_share_rows(const sl_core *c, int op, double left, int n)
{
  const sl_pop *o = &c->plan->ops[op];
  double floor_rows = o->time_per_row > 0 ? ceil(o->time_per_batch / o->time_per_row) : o->batch_size;
  /* the bound's cut, where it found one, may be finer: a batch that costs
   * 64 s fixed and 1.1 s a row, cut at half its work fixed, made 57-row
   * tasks of 128 s that started as the last rows came, on nodes of speed
   * 0.68 (zoo seed 1 case 104: 40.1% of the bound; 47.5% at the cut) */
  if (c->ops[op].task_rows > 0)
    floor_rows = fmin(floor_rows, c->ops[op].task_rows);
  double share = fmin(o->batch_size, balanced_share_rows(c, op, left, n));
  double rows = fmax(fmin(share, local_batch_rows(c, op, n, share)), fmin(o->batch_size, floor_rows));
  return wave_aligned_rows(c, op, rows);
}

/* streaming-plus: the rows a batch of @p op started on node @p n takes
 * where gathering the rest of a batch of @p want rows over the network
 * would take longer than the batch's work: those queued on @p n (never
 * fewer than batch_share_rows()' floor, which the oldest partitions
 * elsewhere top up); INFINITY otherwise. Each partition moves at the
 * share of its holder's NIC its pulls leave (as read_locally()), and the
 * task holds its slot while it receives. A whole batch gathers the
 * outputs of many producer tasks, made on as many nodes: a filter taking
 * batches of 512 rows of 512 KiB, made 64 at a time across 9 nodes on
 * 879 Mbps NICs, pulled 224 of each batch's 256 MiB, 8.8 s of a 17 s task
 * spent receiving; 6.8 GB crossed the network, its last batches ended at
 * 31 s, and the first output came at 17.9 s in a job whose bound is 21.4
 * s (zoo seed 1 case 77: 55.0% of the bound; 68% with this, 1.2 GB
 * moved). Cut wherever the move took longer than a batch's fixed time
 * (or a quarter of the rows' work), batches of a few milliseconds were
 * cut on fast NICs, and finer batches made finer partitions for a map
 * after them that pays 0.2 s a task (zoo seed 7 case 143: 75.9 -> 63.3%). */
static double local_batch_rows(const sl_core *c, int op, int n, double want)
{
  const sl_pop *o = &c->plan->ops[op];
  if (n < 0 || n >= c->nnodes || c->nnodes < 2)
    return INFINITY;
  const sl__op *s = &c->ops[op];
  uint32_t window = sl__input_window(&s->inq);
  double local = 0;
  for (uint32_t k = 0; k < window; k++) {
    const sl__part *p = &c->parts[sl__idq_at(&s->inq, k)];
    if (p->in_queue && p->node == n)
      local += (double)p->rows;
  }
  if (local >= want)
    return INFINITY;
  /* the oldest partitions elsewhere top the batch up (sl__take_rows()) */
  double rows = local, move = 0;
  for (uint32_t k = 0; k < window && rows < want; k++) {
    const sl__part *p = &c->parts[sl__idq_at(&s->inq, k)];
    if (!p->in_queue || p->node == n)
      continue;
    rows += (double)p->rows;
    if (!p->spilled && p->node >= 0 && p->node < c->nnodes)
      move += move_seconds(c, p, 1 + c->nodes[p->node].pulls);
  }
  return move > sl_plan_task_time(o, want) / speed_on(c, op, n) ? local : INFINITY;
}

static int64_t batch_rows_wanted(const sl_core *c, int op, int n)
{
  const sl_pop *o = &c->plan->ops[op];
  if (!c->opts.streaming.bound_shares || op == 0 || o->batch_size <= 0 || !(o->time_per_batch > 0) ||
      o->kind == SL_OP_ALL_TO_ALL)
    return 0;
  double expected = (double)c->plan->source_rows * c->plan->ops[op - 1].alpha_rows;
  double rows = batch_share_rows(c, op, expected - (double)c->ops[op].rows_launched, n);
  return rows >= 1 ? (int64_t)rows : 1;
}

/*
 * Whether producer @p op must wait for its push-star merge stage: its tasks
 * running and their outputs not yet merged fill concurrent_rounds rounds
 * of map_parallelism tasks a node (half its CPUs when not given). Only
 * a push-star plan pays for the scan of the nodes.
 */
static bool rounds_full(const sl_core *c, int op)
{
  if (op + 1 >= c->nops || !c->plan->ops[op + 1].merge_stage || c->plan->ops[op + 1].strategy != SL_SHUFFLE_PUSH_STAR)
    return false;
  const sl_pop *m = &c->plan->ops[op + 1];
  double round = 0;
  for (int n = 0; n < c->nnodes; n++) {
    if (!c->nodes[n].alive)
      continue;
    double per = m->map_parallelism > 0 ? m->map_parallelism
                                        : floor(0.5 * c->nodes[n].cpu_total / fmax(c->plan->ops[op].cpu, 1e-9));
    round += fmax(1, per);
  }
  double limit = fmax(m->concurrent_rounds * round, m->merge_inputs);
  const sl__op *s = &c->ops[op], *merge = &c->ops[op + 1];
  /* outputs not yet merged (queued, or read by merges still running), in
   * producer tasks' worth: counting the queued ones alone let a 10 TB sort
   * keep 5 TB of map outputs that the merges had taken, and spill them */
  double per_task = s->est_out_bytes > 0 ? s->est_out_bytes : 0;
  double queued = per_task > 0 ? s->buffered / per_task : (double)sl__idq_len(&merge->inq);
  return (double)s->running + queued >= limit;
}

/* How many of its own slot frees on a node streaming-plus looks ahead
 * for a queued partition (own_slot_wait()), and how many queued
 * partitions it weighs (input_worth_a_task()). */
#define HOME_RANKS 16
#define HOME_WINDOW 16

/* Fills slot_ends with, for each node, the HOME_RANKS soonest ends of
 * @p op's running tasks there (INFINITY past the last), unless it holds
 * them already for this instant and these tasks. */
static void own_slot_ends(const sl_core *c, int op)
{
  streaming_state *st = state(c);
  const sl__op *s = &c->ops[op];
  if (st->slot_ends_op == op && st->slot_ends_now == c->now && st->slot_ends_tasks == c->ntasks &&
      st->slot_ends_done == s->tasks_done)
    return;
  st->slot_ends_op = op;
  st->slot_ends_now = c->now;
  st->slot_ends_tasks = c->ntasks;
  st->slot_ends_done = s->tasks_done;
  for (int k = 0; k < c->nnodes * HOME_RANKS; k++)
    st->slot_ends[k] = INFINITY;
  for (int r = 0; r < s->running; r++) {
    const sl__task *t = &c->tasks[s->run_ids[r]];
    if (t->waiting || t->node < 0 || !(t->charge_end > c->now + EPS))
      continue; /* a paused task frees nothing; an ending one frees its slot now */
    double *ends = &st->slot_ends[t->node * HOME_RANKS], in = t->charge_end - c->now;
    int k = HOME_RANKS - 1; /* insertion into the sorted few */
    if (!(in < ends[k]))
      continue;
    for (; k > 0 && ends[k - 1] > in; k--)
      ends[k] = ends[k - 1];
    ends[k] = in;
  }
}

/* Seconds until node @p n frees the (@p rank + 1)-th slot of @p op's own
 * running tasks there: INFINITY where fewer run. */
static double own_slot_wait(const sl_core *c, int n, int op, int rank)
{
  if (rank >= HOME_RANKS || c->nodes[n].op_running[op] <= rank)
    return INFINITY;
  own_slot_ends(c, op);
  return state(c)->slot_ends[n * HOME_RANKS + rank];
}

static void speed_range(const sl_core *c, int op, double *slow, double *fast);

/* streaming-plus: whether some queued input of @p op, among its first
 * HOME_WINDOW, is worth a task now, here or elsewhere. A partition is, if
 * its own node can start it, if moving it costs less than LOCAL_READ_SHARE
 * of the task's work, or if a task elsewhere ends sooner: the move, at the
 * share of its node's NIC it would get (its pulls), then the work at the
 * fastest speed @p op has, against the wait for that node to free a slot
 * of @p op's own tasks (those ahead of it with the same home take the
 * first ones), then the work at that node's speed. Otherwise it waits for
 * its node, as delay scheduling does, but no longer than its move would
 * take: a slot that frees there may go to another operator. While none is
 * worth a task, @p op starts nothing, and its slots elsewhere go to other
 * work or idle. A 0.25-CPU map reading 32 MiB inputs over 100 Mbps NICs
 * took any slot free anywhere: 62% of its inputs crossed the network, 85
 * GB where the bound moves none, and its slots idled for input while the
 * NICs carried them (zoo seed 2 case 44: 56.6 -> 76.0% of the bound; case
 * 145: 57.1 -> 99.4%). Waiting with no limit starved a 1-CPU map whose
 * node gave each slot it freed to 2-CPU sources (set-up zoo seed 7 case
 * 167: 81.5 -> 62.5%). */
static bool input_worth_a_task(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  uint32_t window = sl__idq_len(&s->inq) < HOME_WINDOW ? sl__idq_len(&s->inq) : HOME_WINDOW;
  bool by_room = grows_data(c, op);
  int homes[HOME_WINDOW], nhomes = 0;
  double work = task_work(c, op), slow, top;
  speed_range(c, op, &slow, &top);
  for (uint32_t k = 0; k < window; k++) {
    const sl__part *p = &c->parts[sl__idq_at(&s->inq, k)];
    if (!p->in_queue)
      continue;
    if (p->spilled || p->node < 0 || p->node >= c->nnodes || !c->nodes[p->node].alive)
      return true;
    if (starts_on(c, p->node, op, by_room))
      return true;
    double move = move_seconds(c, p, 1 + c->nodes[p->node].pulls);
    int rank = 0;
    for (int j = 0; j < nhomes; j++)
      rank += homes[j] == p->node;
    homes[nhomes++] = p->node;
    if (move <= LOCAL_READ_SHARE * work || c->now - p->queued_at >= move)
      return true;
    double home = own_slot_wait(c, p->node, op, rank) + work / speed_on(c, op, p->node);
    if (move + work / top < home)
      return true;
  }
  return nhomes == 0;
}

/* streaming-plus: the share of its node's NIC that an operator's input
 * may take, read from wherever it lies, before the operator reads it on
 * the node that made it (reads_where_made()). */
#define NIC_LOAD_SHARE 0.25

/* streaming-plus: whether operator @p op reads its input on the node that
 * made it (waits_for_home(), local_rows()); set once, from the plan, the
 * groups and the bound. Zoo seed 1 case 15: a source makes 96 MiB a task
 * (3 partitions of 32 MiB) on nodes of 4 and 8 CPUs whose stores hold 8
 * and 10 partitions, behind NICs of 177 and 707 Mbps; its consumer, a
 * 1-CPU filter that keeps 1 row in 8, in batches of 32 rows, ran wherever
 * a CPU freed: 356 of its 1,033 tasks pulled a partition or two from
 * another node, 18 GB in all, 7.5 s each against 1.1 s of work, the slot
 * held meanwhile, and the filter held 10 CPUs to do the work of 3: 38.7%
 * of the bound, the CPUs idle for transfers 28% of the run. Read where
 * the source made it (and its consumer's input too), 159 of 1,443 tasks
 * pull 5.3 GB, 1.8 s each, and the case runs at 57.6%. Only
 * - an operator that shares a class of slots with its producer and runs
 *   on no group the producer does not: the producer's slots on a node
 *   free for it as the producer's tasks there end, and no node only it
 *   could use idles while it waits. A model that may run on any GPU
 *   waited for the T4s its producer is pinned to, and took them from it
 *   (seed 2 case 21: 51.7 -> 32.0%); GPU filters after CPU maps waited
 *   for GPUs their own consumers held (seed 7 cases 103 and 90: 81.7 ->
 *   56.6%, 86.5 -> 61.7%);
 * - whose input, read at the bound's throughput from anywhere (the share
 *   (n - 1) / n of it that lies on other nodes, spread over the n nodes
 *   it may run on), would take NIC_LOAD_SHARE of the slowest of their
 *   NICs: case 15's filter, 2.6 times its 177 Mbps. Where the NICs have
 *   room, a move costs its time and no more, and a wait for a slot on the
 *   input's node costs more: a GPU filter of 3 ms tasks, whose input
 *   crosses 154 Gbps NICs in 7 ms (0.7% of them), waited for slots
 *   there, and its input filled the stores (seed 1 case 43: 85.4 ->
 *   71.5%); maps of 0.5 CPU waited for the nodes of 24 s tasks of 4 CPUs
 *   before them, and took the CPUs these needed (seed 7 case 190: 84.6 ->
 *   78.5%, 6% of its NICs). Consumers that shrink their input to half or
 *   less, at any load, instead (seeds 1, 2 and 7 and the set-up zoo):
 *   +40 points, 8 cases up by more than 2 points, 4 down; either: +125,
 *   16 up, 5 down (the two above among them); by the load alone: +120,
 *   11 up, 1 down (seed 2 case 124, 41.6 -> 37.1%). */
static bool group_takes(const sl_core *c, int op, int g);

static bool reads_where_made(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  if (!c->opts.streaming.bound_shares || op == 0 || o->kind == SL_OP_ALL_TO_ALL || c->nnodes <= 1 ||
      !share_a_class(c, op - 1, op))
    return false;
  double nodes = 0, nic = INFINITY;
  for (int g = 0; g < c->cluster->ngroups; g++) {
    if (!group_takes(c, op, g))
      continue;
    if (!group_takes(c, op - 1, g))
      return false;
    nodes += c->cluster->groups[g].count;
    if (c->cluster->groups[g].nic_bps > 0)
      nic = fmin(nic, c->cluster->groups[g].nic_bps);
  }
  const sl_pop *up = &c->plan->ops[op - 1];
  double in = state(c)->bound_rows_s * up->alpha_rows * up->out_row_bytes;
  double per_node = nodes > 0 ? in * (nodes - 1) / (nodes * nodes) : 0;
  return isfinite(nic) && per_node >= NIC_LOAD_SHARE * nic;
}

/* The slots of the class (@p gpu or CPU) that node @p n has free or will
 * free as its running tasks end, less what the tasks waiting there for
 * store room hold: a task paused on a full store frees nothing, and a
 * node full of them would keep an input waiting for ever. */
static double slots_freed(const sl_core *c, int n, bool gpu)
{
  const sl__node *nd = &c->nodes[n];
  double frees = gpu ? nd->gpu_free : nd->cpu_free;
  for (int j = 0; j < c->nops; j++)
    frees += nd->op_running[j] * (gpu ? c->plan->ops[j].gpu : c->plan->ops[j].cpu);
  for (uint32_t w = 0; w < sl__idq_len(&nd->waiting); w++) {
    const sl__task *t = &c->tasks[sl__idq_at(&nd->waiting, w)];
    frees -= gpu ? t->gpu : t->cpu;
  }
  return frees;
}

/* Whether a task of @p op (reads_where_made()) waits for a slot on a node
 * that holds its input: every queued input, among the window
 * input_home() scans, takes longer to move over its node's NIC than
 * LOCAL_READ_SHARE of the task's work (the NIC alone: its pulls say how
 * busy it is now, not what a move costs; priced by them, NICs of 141 to
 * 400 Gbps looked dear: seed 7 case 167, 80.4 -> 61.8%), its node runs
 * none now, and what runs there, not paused on a full store, will free a
 * slot of its class. Delay scheduling without the limits
 * input_worth_a_task() puts on the wait (a spilled partition goes
 * anywhere; none waits longer than its move takes, from its arrival):
 * with those, the case 15 filter ran at 38.5% (46.6% when a spilled one
 * waits too): in the backlog every partition is older than its move.
 * Waiting only while the node frees a slot sooner than the move would
 * take: 52.5%, for a move also takes NIC time the outputs bound for the
 * GPU-only nodes need. */
static bool waits_for_home(const sl_core *c, int op)
{
  if (!state(c)->reads_home[op])
    return false;
  const sl__op *s = &c->ops[op];
  const sl_pop *o = &c->plan->ops[op];
  bool gpu = o->gpu > 0;
  double req = gpu ? o->gpu : o->cpu;
  uint32_t window = sl__input_window(&s->inq);
  int passed = -1; /* the last node whose own tests passed: queued partitions come in runs of one node */
  for (uint32_t k = 0; k < window; k++) {
    const sl__part *p = &c->parts[sl__idq_at(&s->inq, k)];
    if (!p->in_queue)
      continue;
    if (p->node < 0 || p->node >= c->nnodes || !c->nodes[p->node].alive || !sl__op_allowed(c, p->node, op))
      return false;
    if (!transfer_exceeds(c, op, p, LOCAL_READ_SHARE, 1))
      return false;
    if (p->node == passed)
      continue; /* its node's answer is the same for every partition there */
    if (starts_on(c, p->node, op, false) || slots_freed(c, p->node, gpu) + EPS < req)
      return false;
    passed = p->node;
  }
  return true;
}

static bool has_input(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  if (rounds_full(c, op))
    return false; /* push-star: a new round waits for the merges of the ones before it */
  if (c->plan->ops[op].kind == SL_OP_SOURCE)
    return s->next_split < c->plan->ops[op].tasks;
  if (c->plan->ops[op].kind == SL_OP_ALL_TO_ALL)
    return sl__all_to_all_ready(c, op);
  if (sl__idq_empty(&s->inq))
    return false;
  if (waits_for_home(c, op))
    return false;
  const sl_pop *o = &c->plan->ops[op];
  if (o->batch_size > 0 && !splits_batches(c, op)) {
    /* wait for a full batch unless nothing more is coming (a batch that
     * streaming-plus cuts does not wait: rows held back for a batch hold
     * store room that the operators upstream need, zoo case 154) */
    int64_t split = batch_rows_wanted(c, op, -1);
    double want = split > 0 ? split : o->batch_size;
    int64_t rows = 0;
    for (uint32_t k = 0; k < sl__idq_len(&s->inq) && rows < want; k++)
      rows += c->parts[sl__idq_at(&s->inq, k)].rows;
    return rows >= want || sl__op_drained(c, op - 1);
  }
  if (c->opts.streaming.bound_shares && c->nnodes > 1 && !input_worth_a_task(c, op))
    return false;
  return !waits_to_amortise(c, op);
}

static bool fits_somewhere(const sl_core *c, int op)
{
  if (!sl__fits_anywhere(c, op))
    return false; /* O(1): the common answer when the cluster is busy */
  for (int k = 0; k < c->nnodes; k++)
    if (sl__fits(c, (c->ops[op].rr_next + k) % c->nnodes, op))
      return true;
  return false;
}


/* streaming-plus: whether operator @p j can take no slot now whatever is
 * free: it runs as many tasks as its concurrency cap allows, or as its
 * share of the bound's allocation while it grows data and its producer
 * still runs (under_cap() then refuses it more). */
static bool held_to_share(const sl_core *c, int j)
{
  const streaming_state *st = state(c);
  const sl__op *s = &c->ops[j];
  if (st->cap[j] > 0 && s->running >= st->cap[j])
    return true;
  return st->share_cap[j] > 0 && s->running >= st->share_cap[j] && grows_data(c, j) && !sl__op_drained(c, j - 1);
}

/* Whether an operator other than @p op that asks for slots of a class
 * @p op asks for has input waiting for a slot. A consumer on CPUs with
 * input queued held a GPU filter to its share while its own input, queued
 * behind that filter, ran out: the CPUs idled for input at the end (zoo
 * seed 1 case 13: 72.1% of the bound, 78.2% with fixed concurrency).
 * streaming-plus does not count an operator held to its share
 * (held_to_share()): the slot would idle. A map that doubles its bytes,
 * at its share of 82 tasks with a thousand partitions queued, held the
 * map after it to its share of 146 with up to 1,330 queued, and 180 of
 * 432 CPUs idled for admission from 16 to 31 s with the stores a sixth
 * full (zoo seed 1 case 77). */
static bool others_waiting(const sl_core *c, int op)
{
  for (int j = 1; j < c->nops; j++)
    if (j != op && share_a_class(c, op, j) && (!sl__idq_empty(&c->ops[j].inq) || !sl__idq_empty(&c->ops[j].retryq)) &&
        !(c->opts.streaming.bound_shares && held_to_share(c, j)))
      return true;
  return false;
}

/* streaming-plus: once the stores are this full, an operator whose
 * consumer has input queued for this many tasks on each of its slots
 * waits: more of it only fills the stores, and a full store pauses the
 * emissions downstream, whose slots then idle holding their inputs (zoo
 * case 35: sources made 128 MB a second for GPU operators that drained a
 * tenth of it; the GPUs sat paused 46% of the run). Below that fill,
 * queues may grow: a slow producer needs a deep queue ahead of a fast
 * consumer, and throttling by queue depth alone starved such consumers
 * (zoo median 74.2% to 55.5% at two tasks a slot). */
#define FED_STORE_FILL 0.7
#define FED_TASKS_PER_SLOT 4

/* Whether the consumer of @p op already has input queued, or coming from
 * @p op's running tasks, for FED_TASKS_PER_SLOT tasks on every slot of its
 * share of the allocation, while the stores are past FED_STORE_FILL. */
static bool consumer_fed(const sl_core *c, int op)
{
  if (!c->opts.streaming.bound_shares || is_last(c, op) || c->plan->ops[op + 1].kind == SL_OP_ALL_TO_ALL)
    return false;
  if (c->stats.store_bytes < FED_STORE_FILL * c->alive_store)
    return false;
  const sl__op *next = &c->ops[op + 1];
  double queued_for = FED_TASKS_PER_SLOT * useful_instances(c, op + 1) * fmax(next->est_in_bytes, 1);
  return next->in_queue_bytes + still_to_emit(c, op) >= queued_for;
}

/* Bytes operator @p i has yet to make from the input it has not started
 * (a source: from its splits not started). */
static double output_left(const sl_core *c, int i)
{
  const sl_pop *o = &c->plan->ops[i];
  double rows_left;
  if (i == 0)
    rows_left = (double)(o->tasks - c->ops[0].next_split) * (double)o->rows_per_task;
  else
    rows_left = fmax(0, (double)c->plan->source_rows * c->plan->ops[i - 1].alpha_rows - (double)c->ops[i].rows_launched);
  return rows_left * o->rows_out_per_row * o->out_row_bytes;
}

/* streaming-plus: the storage link's seconds for one source task's read,
 * alone on the link. */
static double source_read_seconds(const sl_core *c)
{
  const sl_pop *src = &c->plan->ops[0];
  if (!(c->cluster->storage_bps > 0))
    return 0;
  return src->read_bytes_per_row * (double)src->rows_per_task / c->cluster->storage_bps;
}

/* streaming-plus: when the next source task that reads from a shared
 * storage link may start. At its pace (source_rate), a late start
 * catching up by two tasks; and not before the reads started so far, one
 * at a time on the link, have ended: reads that start together share the
 * link, end together and compute together while the link idles.
 * Two-CPU sources of 3 s, each reading 22.5 MiB over a 344 Mbps link
 * (0.55 s alone), lagged their pace as their consumer took CPUs, caught
 * up in bursts of three, and the reads ran in lockstep, 5 at a time then
 * none, the link idle a third of the time (zoo seed 7 case 67: 74.2% of
 * the bound; 93.6% with this). Catching up by none instead lost seed 7
 * cases 143 and 184 ten points each; a read's time of slack on the link,
 * 82.6% on case 67. */
static double source_due_at(const sl_core *c)
{
  const streaming_state *st = state(c);
  return fmax(st->next_source_at, st->link_free_at);
}

static bool source_may_run_ahead(const sl_core *c);

static bool under_cap(const sl_core *c, int op)
{
  const streaming_state *st = state(c);
  if (st->cap[op] > 0 && c->ops[op].running >= st->cap[op])
    return false;
  if (st->share_cap[op] == 0 || c->ops[op].running < st->share_cap[op])
    return true;
  bool late = false;
  if (op == 0 && c->ops[op].running < source_need_by_deadline(c, &late))
    return true; /* behind its deadline: the share is the steady state's */
  /* A source may also take a slot nobody else waits for where the job's
   * data cannot fill the stores (source_may_run_ahead()) and no storage
   * link binds it: held to its share, it made its consumers' input a
   * trickle while slots idled and the stores sat empty, and what it held
   * back came at the end (zoo seed 1 case 16: 83 sources of 3.8 s paced
   * over 19 s on 64 CPUs, 78.6% of the bound; all at once, 82.2%). Where
   * its link binds, more sources at once only share the link. */
  if (op == 0 && source_may_run_ahead(c) && !state(c)->storage_binds && !others_waiting(c, op))
    return true;
  /* Past its share of the bound's allocation: at the tail, when nothing
   * more comes from upstream, every slot may help; and an operator that
   * does not grow data may take a slot nobody else waits for (it cannot
   * pause on a full store and hold the slot its consumers need). */
  if (op > 0 && sl__op_drained(c, op - 1))
    return true;
  /* and one whose queue holds its producer back (consumer_fed()) may
   * too, else each waits for the other: with the stores kept full by
   * spilling, a cheap filter held to its share kept the bottleneck map
   * before it on a third of the CPUs (zoo seed 3 case 24: 36.6 -> 49.2%) */
  return !grows_data(c, op) && (!others_waiting(c, op) || (op > 0 && consumer_fed(c, op - 1)));
}

/* The rows of @p op's queued input on node @p near (among the window
 * sl__take_inputs() takes from), or 0 where no other queued partition
 * would take longer to move over its node's NIC than the fixed time
 * (per task and per batch) of one more task on @p near. A task that
 * reads where its input was made (reads_where_made()) and pays for its
 * batches takes only these rows: it would otherwise fill its batch with
 * a partition from another node, and hold its slot while it crosses the
 * network. The case 15 filter, 32 rows a batch over partitions of 16,
 * waiting for its input's node (waits_for_home()) but filling its batches
 * from anywhere, pulled 13.4 GB: 39.8% of the bound; cut to what is
 * local, 57.6%, for 410 more tasks of 0.41 s fixed time. Cut but not
 * waiting, it kept starting where none of its input was: 47.1%. */
static int64_t local_rows(const sl_core *c, int op, int near)
{
  const sl_pop *o = &c->plan->ops[op];
  const sl__op *s = &c->ops[op];
  double fixed = (o->time_per_task + o->time_per_batch) / speed_on(c, op, near);
  int64_t local = 0;
  bool dear = false;
  uint32_t window = sl__input_window(&s->inq);
  for (uint32_t k = 0; k < window; k++) {
    const sl__part *p = &c->parts[sl__idq_at(&s->inq, k)];
    if (!p->in_queue)
      continue;
    if (p->node == near)
      local += p->rows;
    else if (p->node >= 0 && p->node < c->nnodes && move_seconds(c, p, 1) > fixed)
      dear = true;
  }
  return dear ? local : 0;
}

/* A task of @p op over its next inputs, those on @p near first; SL_NONE
 * when it has none. */
static sl_task_id make_task(sl_core *c, int op, int near)
{
  if (c->plan->ops[op].kind == SL_OP_SOURCE) {
    sl_task_id id = sl__task_new(c, op, NULL, 0, c->ops[op].next_split);
    if (id != SL_NONE)
      c->ops[op].next_split++;
    return id;
  }
  if (c->plan->ops[op].kind == SL_OP_ALL_TO_ALL)
    return sl__make_all_to_all(c, op);
  int64_t rows = batch_rows_wanted(c, op, near);
  int64_t local = rows > 0 && near >= 0 && state(c)->reads_home[op] ? local_rows(c, op, near) : 0;
  if (local > 0 && local < rows)
    return sl__take_rows(c, op, local, near);
  if (rows > 0 && rows < c->plan->ops[op].batch_size)
    return sl__take_rows(c, op, rows, near);
  return sl__take_inputs(c, op, sl__gathers(c, op), splits_batches(c, op), near);
}

/* The speed of a group's slots of operator @p op's class. */
static double group_speed(const sl_core *c, int op, const sl_node_group *g)
{
  double sp = c->plan->ops[op].gpu > 0 ? g->gpu_speed : g->cpu_speed;
  return sp > 0 ? sp : 1;
}

static double speed_on(const sl_core *c, int op, int n)
{
  return sl__slot_speed(c, op, n); /* the work order's own rule */
}

/* The slowest and fastest speeds of the nodes operator @p op may run on,
 * of its class (1 and 1 when none). */
static void speed_range(const sl_core *c, int op, double *slow, double *fast)
{
  bool gpu = c->plan->ops[op].gpu > 0;
  *slow = INFINITY;
  *fast = 0;
  for (int g = 0; g < c->cluster->ngroups; g++) {
    const sl_node_group *grp = &c->cluster->groups[g];
    if (!((c->op_groups[op] >> g) & 1u) || grp->count <= 0 || (gpu ? grp->gpu : grp->cpu) <= 0)
      continue;
    *slow = fmin(*slow, group_speed(c, op, grp));
    *fast = fmax(*fast, group_speed(c, op, grp));
  }
  if (!isfinite(*slow))
    *slow = *fast = 1;
}

/* streaming-plus: whether the source is in its last wave, its splits left
 * no more than the tasks it could run at once, after a first wave of as
 * many. Its tasks are whole, and the last ones end the job: each goes to
 * the fastest node with room, not the next node in turn. Zoo seed 1: 5
 * cases up by more than 2 points, 1 down by 3.9 (case 189: 56.6 ->
 * 60.3%); seed 7: 2 up, none down. Placing the first wave so too (a
 * source that fits in one wave ran on its fast nodes only) took case 4
 * from 46.6 to 76.7%, but put the data where the fast nodes are: with
 * twice the memory, cases 12, 58 and 139 ran 16 to 27% slower than with
 * the memory they had. */
static bool source_tail(const sl_core *c, int op)
{
  if (op != 0 || !c->opts.streaming.bound_shares || c->plan->ops[0].kind != SL_OP_SOURCE)
    return false;
  double left = (double)(c->plan->ops[0].tasks - c->ops[0].next_split);
  double slots = sl__op_instances(c, 0);
  return left > 0 && left <= slots && (double)c->ops[0].next_split >= slots;
}

/* streaming-plus, on a cluster of unequal speeds: whether @p op is in its
 * last wave, every source split started and what it has yet to launch no
 * more than a task for each slot it may use. Those tasks end the job, so
 * each goes to the fastest node with a free slot, not where its input
 * lives or the next node in turn. */
static bool input_tail(const sl_core *c, int op)
{
  if (op == 0 || !c->opts.streaming.bound_shares || c->plan->ops[op].kind == SL_OP_ALL_TO_ALL ||
      c->plan->ops[0].kind != SL_OP_SOURCE || c->ops[0].next_split < c->plan->ops[0].tasks)
    return false;
  double slow, top;
  speed_range(c, op, &slow, &top);
  if (!(top > slow * (1 + 1e-6)))
    return false;
  double expected = (double)c->plan->source_rows * c->plan->ops[op - 1].alpha_rows;
  double left = fmax(0, expected - (double)c->ops[op].rows_launched) * c->plan->ops[op].in_row_bytes;
  return left <= useful_instances(c, op) * fmax(c->ops[op].est_in_bytes, 1);
}

/* Tasks of @p op a node of @p g runs at once. */
static double tasks_per_node(const sl_pop *o, const sl_node_group *g)
{
  double per = INFINITY;
  if (o->cpu > 0)
    per = fmin(per, floor(g->cpu / o->cpu + EPS));
  if (o->gpu > 0)
    per = fmin(per, floor(g->gpu / o->gpu + EPS));
  return isfinite(per) ? per : 0;
}

/* streaming-plus, on a cluster of unequal speeds: the tasks of @p op that
 * the nodes of its fastest group run at once. */
static double top_group_instances(const sl_core *c, int op, double top)
{
  const sl_pop *o = &c->plan->ops[op];
  double n = 0;
  for (int g = 0; g < c->cluster->ngroups; g++) {
    const sl_node_group *grp = &c->cluster->groups[g];
    if (!((c->op_groups[op] >> g) & 1u) || grp->count <= 0 || group_speed(c, op, grp) < top * (1 - 1e-6))
      continue;
    n += tasks_per_node(o, grp) * grp->count;
  }
  return n;
}

/* A task whose time on a slow node exceeds its time on the fastest by
 * this share of the bound's area is long. */
#define LONG_TASK_LOSS 0.05
/* A long task waits for a fast slot that frees within this share of what
 * a slow one loses: the wait must win more than the estimates err by. */
#define WAIT_SHARE 0.5

/* The input rows the next task of @p op takes: those it gathers, no more
 * than are queued. */
static double next_task_rows(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  const sl__op *s = &c->ops[op];
  if (op == 0)
    return (double)o->rows_per_task;
  double rows = s->task_rows > 0 ? s->task_rows : s->nobs > 0 ? s->est_in_rows : 1;
  if (s->nobs > 0) /* what they took, when that was less */
    rows = fmin(rows, s->est_in_rows);
  if (o->in_row_bytes > 0)
    rows = fmin(rows, s->in_queue_bytes / o->in_row_bytes);
  return fmax(1, rows);
}

/* streaming-plus, on a cluster of unequal speeds: the seconds a task of
 * @p op would lose on a slow slot against a fast one, when every task it
 * has yet to run fits the slots of its fastest group at once and that
 * loss is long (LONG_TASK_LOSS); else 0. Such a task on a slow slot only
 * ends late, and the job with it. */
static double slow_slot_loss(const sl_core *c, int op, double *top)
{
  const streaming_state *st = state(c);
  if (!c->opts.streaming.bound_shares || !(st->area_s > 0) || c->plan->ops[op].kind == SL_OP_ALL_TO_ALL ||
      c->plan->ops[0].kind != SL_OP_SOURCE)
    return 0;
  double slow;
  speed_range(c, op, &slow, top);
  if (!(*top > slow * (1 + 1e-6)))
    return 0;
  const sl_pop *o = &c->plan->ops[op];
  double rows = next_task_rows(c, op);
  double loss = sl_plan_task_time(o, rows) * (1 / slow - 1 / *top);
  if (!(loss > LONG_TASK_LOSS * st->area_s))
    return 0;
  double tasks;
  if (op == 0)
    tasks = (double)(o->tasks - c->ops[0].next_split);
  else {
    double expected = (double)c->plan->source_rows * c->plan->ops[op - 1].alpha_rows;
    tasks = fmax(0, expected - (double)c->ops[op].rows_launched) / rows;
  }
  return tasks <= top_group_instances(c, op, *top) ? loss : 0;
}

/* Tasks of @p op that node @p n's free capacity, plus @p more of its
 * class, fits at once. */
static double tasks_fitting(const sl_core *c, int n, int op, double more)
{
  const sl__node *nd = &c->nodes[n];
  const sl_pop *o = &c->plan->ops[op];
  double k = nd->nfree;
  if (o->cpu > 0)
    k = fmin(k, floor((nd->cpu_free + (o->gpu > 0 ? 0 : more)) / o->cpu + 1e-9));
  if (o->gpu > 0)
    k = fmin(k, floor((nd->gpu_free + more) / o->gpu + 1e-9));
  return k;
}

/* Whether node @p n is of the fastest group @p op may use (speed @p top). */
static bool fast_node(const sl_core *c, int n, int op, double top)
{
  const sl__node *nd = &c->nodes[n];
  return nd->alive && !nd->draining && sl__op_allowed(c, n, op) && speed_on(c, op, n) >= top * (1 - 1e-6) &&
         (!c->has_pool || sl__host_cpu_allows(c, nd, n, op));
}

/* streaming-plus: the fastest nodes whose running tasks free, within the
 * time a slow slot would lose (slow_slot_loss()), the capacity a long
 * task of @p op needs are held for it, as many as it has tasks ready
 * and no free fast slot takes: short tasks of other operators would
 * otherwise take what each ending task frees, and a 4-CPU task waited
 * 58 s behind quarter-CPU ones (zoo seed 1 case 130). */
static void hold_fast_nodes_for(sl_core *c, int op)
{
  streaming_state *st = state(c);
  double top;
  double loss = slow_slot_loss(c, op, &top);
  if (!(loss > 0) || !has_input(c, op))
    return;
  st->holding = true;
  double rows = next_task_rows(c, op);
  double ready = op == 0 ? 1 : fmax(1, ceil(c->ops[op].in_queue_bytes / fmax(c->plan->ops[op].in_row_bytes, 1) / rows - 1e-9));
  for (int n = 0; n < c->nnodes && ready > 0; n++)
    if (fast_node(c, n, op, top) && c->nodes[n].held_for < 0)
      ready -= tasks_fitting(c, n, op, 0);
  if (ready <= 0)
    return;
  bool gpu = c->plan->ops[op].gpu > 0;
  memset(st->ending, 0, (size_t)c->nnodes * sizeof *st->ending);
  for (int k = 0; k < c->nops; k++) {
    const sl__op *s = &c->ops[k];
    double request = gpu ? c->plan->ops[k].gpu : c->plan->ops[k].cpu;
    for (int r = 0; request > 0 && r < s->running; r++) {
      const sl__task *t = &c->tasks[s->run_ids[r]];
      if (!t->waiting && t->charge_end <= c->now + WAIT_SHARE * loss) /* a paused task frees nothing */
        st->ending[t->node] += request;
    }
  }
  int first = st->nheld;
  for (int n = 0; n < c->nnodes && ready > 0; n++) {
    if (!fast_node(c, n, op, top) || c->nodes[n].held_for >= 0 || !(st->ending[n] > 0))
      continue;
    double k = tasks_fitting(c, n, op, st->ending[n]);
    if (k > 0) {
      c->nodes[n].held_for = op;
      st->held[st->nheld++] = n;
      st->holds[op]++;
      ready -= k;
    }
  }
  if (ready > 0) { /* too few fast slots free soon: the slow ones take the tasks now */
    for (int k = first; k < st->nheld; k++)
      c->nodes[st->held[k]].held_for = -1;
    st->nheld = first;
    st->holds[op] = 0;
  }
}

/* Holds fast nodes for the long tasks of every operator, anew. */
static void hold_fast_nodes(sl_core *c)
{
  streaming_state *st = state(c);
  for (int k = 0; k < st->nheld; k++)
    c->nodes[st->held[k]].held_for = -1;
  st->nheld = 0;
  st->holding = false;
  memset(st->holds, 0, sizeof st->holds);
  if (!c->opts.streaming.bound_shares)
    return;
  for (int i = c->nops - 1; i >= 0; i--)
    hold_fast_nodes_for(c, i);
}

/* Whether a node of the fastest group of @p op (speed @p top) fits a task
 * of it now (with @p room, with store room for its output). */
static bool fast_slot_free(const sl_core *c, int op, double top, bool room)
{
  for (int n = 0; n < c->nnodes; n++)
    if (fast_node(c, n, op, top) && sl__fits(c, n, op) && (!room || node_has_room(c, n, op)))
      return true;
  return false;
}

/* The fastest node that fits a task of @p op (and, with @p room, has room
 * for its output), from the rotating cursor on ties; -1 when none. The scan ends at the
 * first node of the fastest group, so a large cluster pays little. */
static int fastest_node_with_room(sl_core *c, int op, bool room)
{
  double slow, top;
  speed_range(c, op, &slow, &top);
  int best = -1;
  double best_speed = 0;
  for (int k = 0; k < c->nnodes && best_speed < top * (1 - 1e-6); k++) {
    int n = (c->ops[op].rr_next + k) % c->nnodes;
    if (!sl__fits(c, n, op) || (room && !node_has_room(c, n, op)))
      continue;
    double sp = speed_on(c, op, n);
    if (sp > best_speed * (1 + 1e-6)) {
      best = n;
      best_speed = sp;
    }
  }
  return best;
}

/* Launches one task of @p op; false when no node takes it. Within the
 * limits, only on a node whose store has room for its output: @p room,
 * when select_op() has just found it (a node scan per launch is what a
 * 1,000-node cluster cannot afford twice), else -1. */
static bool launch_one(sl_core *c, double now, int op, bool limits, int room)
{
  bool by_room = limits && !feeds_barrier(c, op) && grows_data(c, op);
  if (!by_room && !fits_somewhere(c, op))
    return false;
  /* choose the node first, then the inputs that already live there */
  int near = -1;
  if ((by_room && source_tail(c, op)) || input_tail(c, op) || slow_slot_loss(c, op, &(double){0}) > 0) {
    near = fastest_node_with_room(c, op, by_room); /* the last tasks */
    if (near < 0)
      return false;
    c->ops[op].rr_next = (near + 1) % c->nnodes;
  } else if (by_room) {
    near = room >= 0 ? room : next_node_with_room(c, op);
    if (near < 0)
      return false;
    int home = c->nnodes > 1 ? input_home(c, op, true) : -1;
    if (home == -2)
      return false;
    if (home >= 0)
      near = home;
    else
      c->ops[op].rr_next = (near + 1) % c->nnodes;
  } else if (c->nnodes > 1) {
    near = input_home(c, op, false);
    if (near == -2)
      return false;
    if (near < 0)
      near = sl__next_fitting_node(c, op);
  }
  sl_task_id id = make_task(c, op, near);
  if (id == SL_NONE)
    return false;
  int home = c->tasks[id].home; /* a push merge runs where its reducers will */
  if (home >= 0 && c->nodes[home].alive && !sl__fits(c, home, op)) {
    sl__enqueue_id(c, &c->ops[op].retryq, id); /* and waits for a slot there */
    return true;
  }
  int node = home >= 0 && c->nodes[home].alive ? home : near >= 0 ? near : sl__pick_node(c, op, &c->tasks[id]);
  sl__launch(c, now, id, node);
  if (c->nodes[node].held_for == op) { /* what it has left is anyone's */
    c->nodes[node].held_for = -1;
    state(c)->holds[op]--;
  }
  if (op == 0 && !c->opts.streaming.no_adaptive)
    state(c)->admit_budget -= c->ops[0].est_out_bytes;
  streaming_state *st = state(c);
  if (op == 0 && st->source_rate > 0) { /* a late start may catch up by two tasks, no more */
    st->next_source_at = fmax(st->next_source_at, now - 2 / st->source_rate) + 1 / st->source_rate;
    st->link_free_at = fmax(st->link_free_at, now) + source_read_seconds(c);
  }
  return true;
}

/* Budgets within this share of a source task's bytes count as enough:
 * the budget accrues in steps that depend on when events fall, and a
 * rounding-sized shortfall would wait a microsecond where another
 * sequence of events waited none (a timeline sample changed the JCT). */
#define BUDGET_TOLERANCE 1e-9

static double budget_missing(const sl_core *c)
{
  double need = c->ops[0].est_out_bytes;
  double missing = need - state(c)->admit_budget;
  return missing > BUDGET_TOLERANCE * need + EPS ? missing : 0;
}

static bool source_admitted(const sl_core *c)
{
  if (c->opts.streaming.no_adaptive)
    return true;
  return budget_missing(c) == 0;
}

/* streaming-plus: below this fill of the stores, the operator furthest
 * below the tasks the bound's allocation needs of it starts first. */
#define DEFICIT_STORE_FILL 0.5

/* streaming-plus: a consumer with input queued for this many times the
 * tasks the bound's allocation runs of it at once is behind. */
#define BEHIND_NEEDS 2

/* Whether select_op() orders operators by deficit (launch_key()). */
static bool by_deficit(const sl_core *c)
{
  return c->opts.streaming.bound_shares && state(c)->area_s > 0 &&
         c->stats.store_bytes < DEFICIT_STORE_FILL * c->alive_store;
}

/* Whether the consumer of @p i is behind (BEHIND_NEEDS). */
static bool consumer_behind(const sl_core *c, int i)
{
  if (is_last(c, i) || c->plan->ops[i + 1].kind == SL_OP_ALL_TO_ALL)
    return false;
  const sl__op *next = &c->ops[i + 1];
  double need = state(c)->need[i + 1];
  return need > 0 && next->in_queue_bytes >= BEHIND_NEEDS * need * fmax(next->est_in_bytes, 1);
}

/* streaming-plus: the source tasks that must run at once from now on for
 * the last to start by the source's deadline (the bound's area less its
 * critical path: the last source task, then its rows through every
 * operator after it), and in @p late whether that is more than the bound's
 * allocation gives the source. The allocation is the steady state's; a
 * job is also a fill and a drain, and a source held to its share starts
 * its last tasks too late for the slots they free to find work: 6,000
 * 4-second sources on 2,496 CPUs held 1,242 of them, the last started at
 * 17 s, and 1,250 CPUs idled through the final 5 s of a 20.5 s bound (zoo
 * seed 1 case 53). Ahead of its share, the source leaves its consumers a
 * backlog that fills the slots it frees at the end. */
static double source_need_by_deadline(const sl_core *c, bool *late)
{
  const streaming_state *st = state(c);
  const sl__op *src = &c->ops[0];
  *late = false;
  /* a source that the storage link holds back gains nothing from slots */
  if (!(st->source_deadline > 0) || st->storage_binds || c->plan->ops[0].kind != SL_OP_SOURCE)
    return 0;
  double left = (double)(c->plan->ops[0].tasks - src->next_split);
  if (!(left > 0))
    return 0;
  double window = st->source_deadline - c->now;
  /* within a task of the deadline, or past it: every task left, now */
  double tasks = window > src->est_time ? left * src->est_time / window : src->running + left;
  *late = tasks > st->need[0];
  return tasks;
}

/* Whether operator @p i needs a class of slot the source does not use: a
 * source that runs ahead must not starve it of the slots they share, or
 * the other class idles (zoo seed 1 case 49: a map on a GPU and a CPU
 * waited for CPUs behind the sources, 701.8 -> 775.4 s). */
static bool holds_other_class(const sl_core *c, int i)
{
  const sl_pop *o = &c->plan->ops[i], *src = &c->plan->ops[0];
  return (o->gpu > 0 && !(src->gpu > 0)) || (o->cpu > 0 && !(src->cpu > 0));
}

/* How select_op() ranks operator @p i, least first: @p key, on ties
 * upstream first. The paper's rule, the key alone, is the bytes of its
 * output not yet consumed: what drains the stores goes first. With
 * @p deficit, @p yields comes before the key: a producer whose consumer
 * is behind yields to others, unless it is the source and the storage
 * link it reads binds (the link idles the moment it yields: a source
 * that yielded to a 4-CPU consumer took zoo seed 1 case 98 from 92.2 to
 * 64.8% of the bound); the key is the operator's running tasks over those
 * the bound's throughput needs of it (need[]). While the stores are half
 * empty nothing needs draining first, and the allocation the bound found
 * is the one that keeps up. Least buffered first gave every freed CPU to
 * a 2-CPU filter of 64 MB batches, 16 tasks on 32 CPUs; the source ran in
 * bursts between them, and its outputs crossed 100 Mbps NICs to wherever
 * a filter slot freed: 3,100 CPU-seconds idle on transfers, 1.6 GB
 * spilled, 183 s (seed 1 case 34, 43.7%). By deficit: 476 CPU-seconds,
 * 0.4 GB, 102 s (78.3%). Without yielding, a source held to its need
 * left its consumer a backlog of 400 partitions and its own last tasks
 * for the end (case 13: 83.9 -> 69.9%; 77.5% yielding). */
static void launch_key(const sl_core *c, int i, bool deficit, bool *yields, double *key)
{
  *yields = false;
  *key = c->ops[i].buffered;
  if (!deficit)
    return;
  double need = state(c)->need[i];
  bool late;
  double by_deadline = source_need_by_deadline(c, &late);
  *key = need > 0 ? c->ops[i].running / need : 0;
  if (i == 0 && late && c->ops[i].running < by_deadline)
    *key = -1; /* a source behind its deadline first */
  else if (i > 0 && late && c->ops[i].running < need && holds_other_class(c, i))
    *key = -2; /* ... but not before what keeps the other class busy */
  *yields = !(i == 0 && (state(c)->storage_binds || late)) && consumer_behind(c, i);
}

/* The operator to run next: least buffered output first (streaming-plus:
 * furthest below its need, launch_key()), upstream on ties. @p room gets the node
 * with store room for it when the limits placed it by room (see
 * launch_one()), else -1. */
static int select_op(sl_core *c, bool ignore_limits, int *room)
{
  int best = -1;
  double best_key = INFINITY;
  bool best_yields = false;
  bool adaptive = !c->opts.streaming.no_adaptive;
  bool deficit = by_deficit(c);
  *room = -1;
  for (int i = 0; i < c->nops; i++) {
    if (!has_input(c, i))
      continue;
    /* a node with room fits the task too: one scan, not two */
    bool barrier = feeds_barrier(c, i);
    bool by_room = !ignore_limits && !barrier && grows_data(c, i);
    if (!by_room && !fits_somewhere(c, i))
      continue;
    int node = -1;
    if (!ignore_limits && barrier && !under_cap(c, i))
      continue;
    /* Algorithm 1 admits source tasks through its budget; among what is
     * admitted, the least buffered operator wins, the source included, so
     * a source never takes a slot a starved consumer could use */
    if (!ignore_limits && !barrier) {
      if (!under_cap(c, i) || !within_budget(c, i) || !has_output_space(c, i) || consumer_fed(c, i))
        continue;
      if (i == 0 && adaptive && !source_admitted(c))
        continue;
      if (i == 0 && state(c)->source_rate > 0 && c->now + EPS < source_due_at(c))
        continue; /* streaming-plus: not yet time for the next source task */
      if (by_room && (node = next_node_with_room(c, i)) < 0)
        continue;
    }
    double top;
    bool fast_free = false;
    if (slow_slot_loss(c, i, &top) > 0) {
      fast_free = fast_slot_free(c, i, top, by_room);
      if (!fast_free && state(c)->holds[i] > 0)
        continue; /* it waits for the fast nodes held for it */
    }
    bool yields;
    double key;
    launch_key(c, i, deficit, &yields, &key);
    if (fast_free) { /* its long tasks take the fast slots before short ones do */
      key = -3;
      yields = false;
    }
    if (best < 0 || (!yields && best_yields) || (yields == best_yields && key < best_key - EPS)) {
      best = i;
      best_key = key;
      best_yields = yields;
      *room = node;
    }
  }
  return best;
}

static void set_yields(sl_core *c);
static void yield_caps(sl_core *c, streaming_state *st, const sl_bound_allocation *a);

static void streaming_schedule(sl_core *c, double now)
{
  streaming_state *st = state(c);
  if (c->opts.streaming.static_alloc) {
    sl__static_schedule(c, now);
    return;
  }
  hold_fast_nodes(c);
  set_yields(c);
  for (int i = c->nops - 1; i >= 0; i--)
    sl__launch_retries(c, now, i);
  if (!c->opts.streaming.no_adaptive)
    accrue(c, now);
  for (;;) {
    bool launched = false;
    if (st->reserve)
      reserve(c);
    if (st->holding) /* each launch changes what is free and what is ready */
      hold_fast_nodes(c);
    int room;
    int op = select_op(c, false, &room);
    if (op >= 0)
      launched |= launch_one(c, now, op, true, room);
    if (!launched)
      break;
    set_yields(c);
  }
  /* Liveness: nothing runs at all, so limits only stand in the way. */
  if (c->active == 0) {
    memset(c->op_yields, 0, sizeof c->op_yields);
    int room;
    int op = select_op(c, true, &room);
    if (op >= 0)
      launch_one(c, now, op, false, room);
  }
}

/* --------------------------------------------------------------- memory */

static int streaming_admit(sl_core *c, double now, sl__task *t, double bytes, sl_emit_fate *fate)
{
  (void)now;
  if (c->opts.streaming.static_alloc)
    return sl__static_admit(c, now, t, bytes, fate);
  if (feeds_barrier(c, t->op)) {
    int r = sl__admit_memory_keeping(c, t, bytes, merge_room(c, t->op, t->node), fate);
    if (r != SL_EAGAIN || !sl__may_spill(c, t->node, bytes))
      return r;
    *fate = SL_EMIT_SPILLED; /* waiting frees nothing before the shuffle */
    return 0;
  }
  if (!c->opts.streaming.bound_shares)
    return sl__admit_memory(c, t, bytes, fate);
  /* streaming-plus: an emission leaves room for the outputs of the
   * operators after it that run on its node, as the static model's do.
   * Sources that filled every store paused the consumers that would have
   * emptied them, and the job crept through the liveness rule (zoo case
   * 173: 8 to 27 s with nothing delivered). */
  int r = sl__admit_memory_keeping(c, t, bytes, sl__downstream_room(c, t->op, t->node), fate);
  /* A task that waits for room holds its slot, and its consumers may
   * need that slot to make the room: with a disk that has time, spill
   * instead. Spilling only where the consumer had nothing queued left
   * the sources of seed 1 case 107 paused on full stores, and the map
   * after them too: 80.6 -> 25.8% of the bound; spilling what finds no
   * room, 91.4%. */
  if (r == SL_EAGAIN && spills_there(c, t->node, bytes) && disk_has_time(c, t->node, now)) {
    state(c)->spill_disk_s[t->node] += spill_disk_seconds(c, t->node, bytes);
    *fate = SL_EMIT_SPILLED;
    return 0;
  }
  return r;
}

/* The job's last partitions are worked after everything before them, so
 * the time a consumer takes over one, on the slowest node, adds to the
 * JCT whole. In its last wave (what an operator has yet to make fills no
 * more than two partitions for each slot of its consumer) streaming-plus
 * cuts its outputs so that a consumer task takes at most this share of
 * the bound's area (never below the rows that amortise the consumer's
 * fixed costs). Cut at four a slot and the target only, the expanding map
 * of bench/validate/expand ended a 9.3 s job with 4-row partitions of
 * 0.6 s on its slowest node: 92.6% of the bound with 160 MB a store and
 * 96.4% with 80 MB, where the store cut them finer (more memory made it
 * slower). Cut that fine for the whole job, every task paid for it: zoo
 * case 100's 8,832 one-row tasks ran at 18.7% of the bound (33.4% before). */
#define LAST_PARTITION_SHARE 0.02
/* The last wave: two partitions a consumer slot. Zoo, cases of 8
 * partitions a node or more, seeds 1 and 7: medians 78.4 -> 80.3% and
 * 73.0 -> 76.3%, no case more than 2.1 points slower; at four a slot
 * 81.9% on seed 1 but cases 34 (seed 1) and 87 (seed 7) lost 13 and 16
 * points, as with the fine cut for the whole job. */
#define LAST_WAVE_PARTS 2

/* Whether what operator @p op has yet to make, started or not, fills no
 * more than LAST_WAVE_PARTS partitions for each slot of its consumer. */
static bool in_last_wave(const sl_core *c, int op)
{
  const streaming_state *st = state(c);
  if (is_last(c, op) || !(st->part_target[op] > 0))
    return false;
  const sl__op *s = &c->ops[op];
  double left = output_left(c, op) + fmax(0, s->running * s->est_out_bytes - s->running_out_bytes);
  return left <= LAST_WAVE_PARTS * useful_instances(c, op + 1) * st->part_target[op];
}

static double streaming_target(const sl_core *c, int op)
{
  double base = sl__target_bytes(c); /* without dynamic partitioning: one partition per task */
  double own = in_last_wave(c, op) ? state(c)->last_target[op] : state(c)->part_target[op];
  return isfinite(base) && own > 0 && own < base ? own : base;
}

/* ----------------------------------------------------------- Algorithm 2 */

/* Slots op @p i could use: its class's capacity less what other
 * operators of the class hold now, or held on average since Algorithm 2's
 * period began (@p over_period). Fewer slots downstream mean a slower drain
 * and so a slower admission: the negative feedback of the paper. An
 * operator pinned to some node groups counts only their capacity, and only
 * the operators that may run there as holders. */
static double slots_left(const sl_core *c, int i, bool over_period)
{
  const streaming_state *st = state(c);
  const sl_pop *o = &c->plan->ops[i];
  bool gpu = o->gpu > 0;
  double period = c->now - st->period_start;
  over_period = over_period && period > EPS;
  double total = sl__op_capacity(c, i, gpu), held = 0;
  for (int j = 0; j < c->nops; j++) {
    if (j == i || (c->plan->ops[j].gpu > 0) != gpu || !sl__ops_overlap(c, i, j))
      continue;
    if (over_period)
      held += (sl__op_used_seconds(c, j, gpu, c->now) - st->used_mark[j][gpu]) / period;
    else
      held += gpu ? c->ops[j].gpu_used : c->ops[j].cpu_used;
  }
  double req = gpu ? o->gpu : o->cpu;
  /* An average over the period is not a count of slots: floored, a source
   * that held 4.01 of 8 CPUs on average left its consumer 3, one that held
   * 3.99 left it 4, and a third more admitted. */
  if (over_period)
    return fmax(1, (total - held) / req);
  return fmax(1, floor((total - held) / req + EPS));
}

static double available_slots(const sl_core *c, int i)
{
  return slots_left(c, i, false);
}

/* Seconds of downstream work one source task brings (the paper's P), with
 * the slots each operator has as the others held them on average over
 * the period just ended (@p over_period), or at this instant. An instant
 * is a sample of a pattern that repeats within the period: sources that
 * start in bursts hold every CPU for part of it, and a tick that fell
 * inside a burst saw one slot left for the consumer and admitted a
 * source an eighth as fast as one that fell between bursts. Which of the
 * two a tick saw depended on microseconds of engine timing, so the
 * executor and the simulator of fig9-small at 120 MB parted at 3.3 s
 * (the simulation 5% slower on every seed). */
static double drain_seconds_over(const sl_core *c, bool over_period)
{
  double P = 0, worst = 0;
  double rows_per_source_task = c->ops[0].est_in_rows * c->plan->ops[0].rows_out_per_row;
  for (int i = 1; i < c->nops; i++) {
    const sl__op *s = &c->ops[i];
    double rows_reaching = rows_per_source_task * (c->plan->ops[i - 1].alpha_rows /
                                                   fmax(c->plan->ops[0].alpha_rows, EPS));
    double tasks = rows_reaching / fmax(s->est_in_rows, EPS);
    double Pi = s->est_time / slots_left(c, i, over_period) * tasks;
    P += Pi;
    worst = fmax(worst, Pi);
  }
  /* The paper adds the operators' times up. Operators hold disjoint slots
   * and run side by side, so the pipeline drains at the pace of its slowest
   * one: the bottleneck form admits exactly what that one can take. */
  return c->opts.drain_sum ? P : worst;
}

static double drain_seconds(const sl_core *c)
{
  return drain_seconds_over(c, false);
}

/* Starts Algorithm 2's next period at @p now. */
static void mark_period(sl_core *c, double now)
{
  streaming_state *st = state(c);
  st->period_start = now;
  for (int j = 0; j < c->nops; j++)
    for (int k = 0; k < 2; k++)
      st->used_mark[j][k] = sl__op_used_seconds(c, j, k, now);
}

/* Algorithm 1's budget counts source bytes, and starts at, and never
 * exceeds, the stores' capacity. A source byte that becomes several
 * downstream fills the stores several times over: with the capacity as
 * the cap, a source whose map doubles its bytes was admitted whole into
 * stores twice the size of its output, and the map then found no room
 * for its own (zoo seed 1 case 52: 357 s, and 2,596 s with twice the
 * memory). The cap is the capacity over the most the pipeline expands a
 * source byte (1 where nothing expands). streaming-plus keeps the
 * capacity: its pacing and the room it keeps for consumers count the
 * expansion already, and the cap there moved as many zoo cases down as up.
 * The plan fixes the expansion (source_expansion(), once); the capacity
 * follows the nodes alive. */
static double source_expansion(const sl_core *c)
{
  const sl_plan *p = c->plan;
  if (c->opts.streaming.bound_shares)
    return 1;
  double src = p->ops[0].alpha_rows * p->ops[0].out_row_bytes, most = 1;
  for (int i = 1; i < p->nops && src > 0; i++)
    most = fmax(most, p->ops[i].alpha_rows * p->ops[i].out_row_bytes / src);
  return most;
}

static double budget_cap(const sl_core *c)
{
  return c->alive_store / state(c)->source_expansion;
}

/* The budget grows continuously at the last computed drain rate, so source
 * tasks enter as the pipeline makes room rather than in bursts at each
 * period; Algorithm 2 refreshes the rate every period. */
static void accrue(sl_core *c, double now)
{
  streaming_state *st = state(c);
  if (now > st->last_accrual)
    st->admit_budget = fmin(budget_cap(c), st->admit_budget + st->admit_rate * (now - st->last_accrual));
  st->last_accrual = fmax(st->last_accrual, now);
}

/* streaming-plus admits sources at no less than a little over the
 * bound's pace while the stores are less than this full. Algorithm 2
 * drains at the pace of the slots the other operators leave free, and a
 * source that is itself the bottleneck holds most of them: CPUs sat idle
 * for admission with the stores mostly empty (zoo seed 1 case 185: 67.7
 * -> 88.8% of the bound; case 76: 85.9 -> 97.6%). Past the fill, Algorithm 2
 * alone: sources admitted at the bound's pace into stores of 44 MB
 * spilled, and the backpressure idled 30% of the CPUs (seed 7 case 160:
 * 94.3% to 66.0%). */
#define RATE_FLOOR_FILL 0.5

/* How much faster than the bound's pace streaming-plus lets sources start:
 * a little, so that the pace never holds the bottleneck back. */
#define BOUND_PACE_SLACK 1.1
/* streaming-plus admits no faster than this times the bound's pace.
 * Algorithm 2's rate follows the slots the consumers could use, and a
 * 0.25-CPU map on 1,584 CPUs could use thousands: zoo seed 1 case 90
 * started 856 sources of 528 MB within 30 s, the stores filled, and the
 * map after them, which doubles its bytes, never ran again. Sources
 * admitted past what the pipeline takes only fill the stores. */
#define BOUND_PACE_CEILING 2.0
/* ... unless the sources must start faster to end within the bound
 * (start_pace()), and then only while the stores are less than this
 * full. Sources of 45 s, each the whole critical path of a job whose area
 * is shorter, must all start at once: zoo seed 1 case 90, held to twice
 * the bound's pace, started its 920 over 13 s (76.8% of the bound; 85.8%
 * at the start pace). Such sources also take the room has_output_space()
 * keeps for their consumers' transient outputs (upstream_yields() lets the
 * consumers go first). Past the fill the ceiling holds again: the case's
 * consumer doubles its bytes, and stores filled with source output would
 * leave it no room. */
#define START_PACE_FILL 0.25

/* Whether streaming-plus admits sources at their start pace, past the
 * ceiling (START_PACE_FILL). */
static bool sources_due_early(const sl_core *c)
{
  const streaming_state *st = state(c);
  double L_cpu, L_gpu, L_mem;
  class_totals(c, &L_cpu, &L_gpu, &L_mem);
  return c->opts.streaming.bound_shares && st->start_pace > BOUND_PACE_CEILING &&
         c->stats.store_bytes < START_PACE_FILL * L_mem;
}

static void streaming_tick(sl_core *c, double now)
{
  streaming_state *st = state(c);
  if (c->opts.streaming.no_adaptive || now + EPS < st->next_refill)
    return;
  accrue(c, now);
  double P = drain_seconds_over(c, true);
  mark_period(c, now);
  double L_cpu, L_gpu, L_mem;
  class_totals(c, &L_cpu, &L_gpu, &L_mem);
  st->admit_rate = P > EPS ? c->ops[0].est_out_bytes / P : L_mem;
  if (st->bound_source_rate > 0 && c->stats.store_bytes < RATE_FLOOR_FILL * L_mem)
    st->admit_rate = fmax(st->admit_rate, BOUND_PACE_SLACK * st->bound_source_rate * c->ops[0].est_out_bytes);
  if (st->bound_source_rate > 0) {
    double ceiling = BOUND_PACE_CEILING;
    if (sources_due_early(c))
      ceiling = BOUND_PACE_SLACK * st->start_pace;
    st->admit_rate = fmin(st->admit_rate, ceiling * st->bound_source_rate * c->ops[0].est_out_bytes);
  }
  st->next_refill = now + c->opts.replenish_period_s;
}

static double streaming_wakeup(const sl_core *c)
{
  const streaming_state *st = state(c);
  if (c->opts.streaming.no_adaptive || c->opts.streaming.static_alloc)
    return INFINITY;
  if (c->ops[0].next_split >= c->plan->ops[0].tasks)
    return INFINITY; /* every source task admitted: nothing to refill */
  double wake = st->next_refill;
  if (st->source_rate > 0 && source_due_at(c) > c->now)
    wake = fmin(wake, source_due_at(c));
  double missing = budget_missing(c);
  if (missing > 0 && st->admit_rate > 0)
    /* at least a microsecond ahead: a rounding-sized wait would never end */
    wake = fmin(wake, st->last_accrual + fmax(missing / st->admit_rate, 1e-6));
  return wake;
}

double sl__streaming_drain_seconds(const sl_core *c)
{
  return drain_seconds(c);
}

double sl__streaming_period_drain_seconds(const sl_core *c)
{
  return drain_seconds_over(c, true);
}

void sl__streaming_reservation(sl_core *c, int op, double *task_cpu, double *task_mem,
                               double *out_mem, double *shared_cpu, double *shared_mem)
{
  reserve_into(c, shared_cpu, shared_mem);
  *task_cpu = state(c)->task_cpu[op];
  *task_mem = state(c)->task_mem[op];
  *out_mem = state(c)->out_res[op];
}

/* ------------------------------------------------------------ lifecycle */

static void fixed_concurrency(sl_core *c)
{
  /* -Adapt.: CPU operators split the CPU slots evenly, as the paper's
   * fixed concurrency of 4 and 4 on 8 CPUs. */
  streaming_state *st = state(c);
  double cpu = 0;
  int ncpu_ops = 0;
  for (int n = 0; n < c->nnodes; n++)
    cpu += c->nodes[n].cpu_total;
  for (int i = 0; i < c->nops; i++)
    ncpu_ops += c->plan->ops[i].gpu <= 0;
  for (int i = 0; i < c->nops; i++)
    if (c->plan->ops[i].gpu <= 0 && ncpu_ops > 0) {
      int even = (int)fmax(1, floor(cpu / ncpu_ops + EPS));
      /* an operator's own concurrency cap still holds (it was overwritten) */
      st->cap[i] = st->cap[i] > 0 && st->cap[i] < even ? st->cap[i] : even;
    }
}

/* How much faster than the bound's throughput sources that read from a
 * shared storage link start, so that the last of them ends, and its rows
 * pass every operator after it, within the bound: their starts spread
 * over the area less the critical path (a source task, then a row through
 * each operator), not over the whole area. At the bound's pace the last
 * 20 s source tasks of zoo seed 1 case 155 started with a fifth of the
 * job left and ended after everything else (82.0% of the bound; 93.2%
 * at this pace). Zoo, all 200 cases: 17, 22 and 18 cases up by over 2
 * points on seeds 1, 7 and 3, 6, 7 and 4 down (the largest 5.8), mean
 * +0.35, +0.50, +0.42.
 * - Short jobs (a critical path of half the area or more) keep the
 *   bound's pace: at the ceiling's pace, sources filled the stores of
 *   cases whose consumers could not keep up (case 90: 49.9 -> 1.1%).
 * - Under FILL_PACE_LEAST the pace is the bound's: 2 to 4% faster gained
 *   nothing and tipped cases whose stores were nearly full into spilling
 *   (case 98: 88.3 -> 46.8%; seed 7 case 167: 84.8 -> 43.0%).
 * Generated sources (no storage link) were tried too, through the floor
 * of Algorithm 2's rate: no case gained, four lost 2 to 9 points. */
#define FILL_PACE_LEAST 1.1

/* How much faster than the bound's throughput every source task must
 * start for the last to end, a row of it through every operator after,
 * within the bound: their starts spread over the area less the critical
 * path. Unbounded (1e6) where the critical path is the bound: all at once. */
static double start_pace(const sl_bound *b)
{
  return b->area_s > b->critical_path_s * (1 + 1e-9) ? b->area_s / (b->area_s - b->critical_path_s) : 1e6;
}

static double fill_pace(const sl_bound *b)
{
  if (!(b->area_s > 2 * b->critical_path_s))
    return 1;
  double pace = start_pace(b);
  return pace < FILL_PACE_LEAST ? 1 : fmin(pace, BOUND_PACE_CEILING / BOUND_PACE_SLACK);
}

/* The most bytes the job's data ever amounts to between two operators: its
 * source rows at the largest of the sizes they take on the way. The last
 * operator's output goes to the sink as it is made and never takes store
 * room: counted, a map that makes 24 GB for the sink out of 1.5 GB kept a
 * job whose stores never held more than 1.6 GB of 39 from running its
 * sources ahead (zoo seed 1 case 77: 55.0 -> 61.6% of the bound). */
static double most_bytes_in_flight(const sl_core *c)
{
  const sl_plan *p = c->plan;
  double rows = (double)p->ops[0].tasks * (double)p->ops[0].rows_per_task, most = 0;
  for (int i = 0; i < p->nops - (p->nops > 1); i++)
    most = fmax(most, rows * p->ops[i].alpha_rows / fmax(p->ops[0].alpha_rows, EPS) * p->ops[i].out_row_bytes);
  return most;
}

/* Whether a source task's reads take more than a quarter of its work
 * through the NIC of some node that may run it: more sources at once then
 * share the NICs rather than add throughput (zoo seed 3 case 17, a fused
 * source reading 67 MB a task through NICs that bind: 92.9 -> 82.5% of
 * the bound when its sources ran ahead). */
static bool reads_crowd_nics(const sl_core *c)
{
  const sl_pop *src = &c->plan->ops[0];
  double bytes = src->read_bytes_per_row * (double)src->rows_per_task;
  double work = sl_plan_task_time(src, (double)src->rows_per_task);
  for (int g = 0; g < c->cluster->ngroups && bytes > 0; g++) {
    const sl_node_group *grp = &c->cluster->groups[g];
    bool runs = src->gpu > 0 ? grp->gpu >= src->gpu : grp->cpu >= src->cpu;
    if (runs && grp->nic_bps > 0 && isfinite(grp->nic_bps) && bytes / grp->nic_bps > 0.25 * work)
      return true;
  }
  return false;
}

/* Link pacing only where the whole job's data fits this share of the
 * stores: then a faster start cannot fill them. A 30 GB job paced at the
 * link of a 2 GB store filled it with source output and stalled its
 * consumers (zoo seed 1 case 6: 69.4 -> 56.9% of the bound). */
#define LINK_PACE_FILL 0.5

/* Source tasks per second that the storage link serves one after another,
 * each read at the link's whole bandwidth: paced no slower, reads never
 * share the link, so they cannot end together, and where the reads are a
 * sliver of the source's work the bound's pace alone only delays the
 * fill (zoo seed 1 case 53: 808-byte reads on an 8.8 Mbps link behind
 * 4.2 s of CPU work, 1,242 sources ramped up over 4 s at the bound's
 * pace). */
static double link_pace(const sl_core *c)
{
  const sl_pop *src = &c->plan->ops[0];
  double bytes = src->read_bytes_per_row * (double)src->rows_per_task;
  return bytes > 0 ? c->cluster->storage_bps / bytes : 0;
}

/* Whether a source may start ahead of the bound's pace and share (the
 * deadline, link pacing): only where neither the stores nor the NICs its
 * reads cross can bind. */
static bool source_may_run_ahead(const sl_core *c)
{
  return most_bytes_in_flight(c) <= LINK_PACE_FILL * c->alive_store && !reads_crowd_nics(c);
}

/* streaming-plus: the job is a wave or two of one operator's tasks, not a
 * steady state, where an operator with a fixed time per task or batch
 * cuts its rows, at the bound's cut, into no more than WAVE_LIMIT tasks a
 * slot, and a task of its rows spread over all its slots (one wave) takes
 * WAVE_SHARE of the bound's area or more. Its last task then ends the job,
 * and it starts when its rows have come: the operators before it should
 * make every row at once, not at the bound's steady pace, and their tasks
 * should fit its tasks (wave_aligned_rows()). Only where what runs before
 * it, each operator alone on every slot of its class and the source's
 * reads over the storage link, takes no more than WAVE_BEFORE of that
 * task: a source of 68 s of work ahead of a 55 s wave, run at once, left
 * the wave all to the end (zoo seed 1 case 9: 69.5 -> 57.2% of the bound;
 * case 125, 243 s of sources ahead of a 142 s wave: 71.7 -> 67.3%). */
#define WAVE_LIMIT 2
#define WAVE_SHARE 0.5
#define WAVE_BEFORE 0.5

/* The mean speed of the slots of @p op's class. */
static double mean_speed(const sl_core *c, int op)
{
  return useful_speed(c, op) / fmax(useful_instances(c, op), 1e-9);
}

/* The wave operator, as above, -1 when none; @p area_s is the bound's. */
static int wave_operator(const sl_core *c, double area_s)
{
  int best = -1;
  double longest = 0;
  for (int i = 1; i < c->nops; i++) {
    const sl_pop *o = &c->plan->ops[i];
    double fixed = o->time_per_task + (o->batch_size > 0 ? o->time_per_batch : 0);
    if (o->kind == SL_OP_ALL_TO_ALL || !(fixed > 0) || !(o->time_per_row > 0))
      continue;
    double rows = sl_plan_rows_in(c->plan, i), slots = sl__op_instances(c, i);
    double cut = c->ops[i].task_rows > 0 ? c->ops[i].task_rows : sl_plan_amortising_rows(fixed, o->time_per_row);
    if (o->batch_size > 0)
      cut = fmin(cut, o->batch_size);
    if (!(cut >= 1) || rows / cut > WAVE_LIMIT * slots)
      continue; /* many short tasks: a steady state */
    double t = sl_plan_task_time(o, ceil(rows / slots)) / slowest_speed(c, i);
    if (t > longest) {
      longest = t;
      best = i;
    }
  }
  if (best < 0 || longest < WAVE_SHARE * area_s)
    return -1;
  /* what runs before it, each operator on every slot of its class in
   * turn, and the source's reads over the storage link */
  double before = 0;
  for (int i = 0; i < best; i++) {
    double work = sl_plan_work_per_source_row(c->plan, i) * (double)c->plan->source_rows;
    before += work / (sl__op_instances(c, i) * mean_speed(c, i));
  }
  const sl_pop *src = &c->plan->ops[0];
  if (c->cluster->storage_bps > 0 && src->read_bytes_per_row > 0)
    before = fmax(before, (double)c->plan->source_rows * src->read_bytes_per_row / c->cluster->storage_bps);
  return before > WAVE_BEFORE * longest ? -1 : best;
}

/* streaming-plus: a kind of slot (CPU, GPU) binds when the bound's
 * allocation leaves no more than this share of them idle. */
#define CLASS_IDLE_SHARE 0.1

/* Sets @p st's class_binds from the bound's allocation @p alloc. */
static void classes_that_bind(const sl_core *c, streaming_state *st, const sl_bound_allocation *alloc)
{
  double total[2] = {0, 0}, idle[2] = {0, 0};
  for (int g = 0; g < c->cluster->ngroups; g++) {
    const sl_node_group *grp = &c->cluster->groups[g];
    total[0] += grp->cpu * grp->count;
    total[1] += grp->gpu * grp->count;
    idle[0] += alloc->idle_slots[g][0];
    idle[1] += alloc->idle_slots[g][1];
  }
  for (int k = 0; k < 2; k++)
    st->class_binds[k] = total[k] > 0 && idle[k] <= CLASS_IDLE_SHARE * total[k];
}

/* streaming-plus: the tasks of each operator that the bound's throughput
 * needs at once, with the speed of an average slot of its class, and half
 * again as slack. An operator that grows data can then never take the
 * slots its consumers need to drain it (paused tasks hold their slots).
 * Slack of a tenth held back operators whose tasks come in waves on the
 * zoo (median 71.6% of the bound, behind another model by more than 2% in
 * 47 of 200 cases; half: 72.7% and 41). */
static void bound_share_caps(sl_core *c, streaming_state *st)
{
  /* an all-to-all splits the job into stages that run one after the
   * other, each with every slot: the steady-state shares do not apply */
  for (int i = 0; i < c->nops; i++)
    if (c->plan->ops[i].kind == SL_OP_ALL_TO_ALL)
      return;
  sl_bound b;
  sl_bound_allocation alloc;
  if (sl_bound_rate_allocation(c->plan, c->cluster, &b, &alloc) < 0 || !(b.throughput_rows_s > 0))
    return;
  yield_caps(c, st, &alloc);
  st->area_s = b.area_s;
  classes_that_bind(c, st, &alloc);
  st->bound_rows_s = b.throughput_rows_s;
  bool ahead = source_may_run_ahead(c);
  if (ahead && b.area_s > b.critical_path_s)
    st->source_deadline = c->now + b.area_s - b.critical_path_s;
  /* the rate the bound found reads within a percent of the link's bytes */
  st->storage_binds = c->cluster->storage_bps > 0 && c->plan->ops[0].read_bytes_per_row > 0 &&
                      b.throughput_rows_s * c->plan->ops[0].read_bytes_per_row >= 0.99 * c->cluster->storage_bps;
  /* A job that is a wave of one operator's tasks (wave_operator()): the
   * operators before it run on every slot, the source with no deadline
   * left, where its data cannot fill the stores and its link does not
   * bind. Held to the steady state's shares (82 sources, 105 tasks of the
   * map after them) and to a deadline of the area less the critical path
   * (51.6 s), 17,790 one-row sources of 0.36 s on 1,584 CPUs ended at
   * 51.8 s, their map at 73 s, and the wave of 157 s tasks that followed
   * them started in two (zoo seed 1 case 45: 54.8% of the bound; with
   * these rules, 4.3 s, 19.1 s and 91.4%). */
  st->wave_op = ahead && !st->storage_binds ? wave_operator(c, b.area_s) : -1;
  if (st->wave_op > 0) {
    st->wave_rows = ceil(sl_plan_rows_in(c->plan, st->wave_op) / sl__op_instances(c, st->wave_op) - 1e-9);
    st->source_deadline = fmax(c->now, EPS);
  }
  if (c->plan->ops[0].kind == SL_OP_SOURCE && c->plan->ops[0].rows_per_task > 0) {
    st->bound_source_rate = b.throughput_rows_s / (double)c->plan->ops[0].rows_per_task;
    st->fill_pace = fill_pace(&b);
    st->start_pace = start_pace(&b);
  }
  double slots[2] = {0, 0}, speed[2] = {0, 0};
  for (int n = 0; n < c->cluster->nnodes; n++) {
    const sl_node_group *g = sl_cluster_node_group(c->cluster, n);
    slots[0] += g->cpu;
    speed[0] += g->cpu * g->cpu_speed;
    slots[1] += g->gpu;
    speed[1] += g->gpu * g->gpu_speed;
  }
  for (int i = 0; i < c->nops; i++) {
    int k = c->plan->ops[i].gpu > 0;
    double mean = slots[k] > 0 ? speed[k] / slots[k] : 1;
    double tasks = b.throughput_rows_s * sl_plan_work_per_source_row(c->plan, i) / fmax(mean, 1e-9);
    st->need[i] = tasks;
    st->share_cap[i] = (int)fmin(1e6, ceil(1.5 * tasks + EPS) + 1);
    if (st->share_cap[i] < 1)
      st->share_cap[i] = 1;
    if (i < st->wave_op)
      st->share_cap[i] = 0; /* none: before a wave, every slot */
  }
  /* Sources that read from a shared storage link start at the bound's
   * pace, a little faster, not all at once: a burst of identical reads
   * shares the link, ends together and keeps the whole pipeline in
   * lockstep, the GPUs idle between waves (video on 32 nodes: 40% of the
   * bound, 96% paced). Sources that make their rows start freely. */
  if (c->plan->ops[0].rows_per_task > 0 && c->plan->ops[0].read_bytes_per_row > 0 && c->cluster->storage_bps > 0)
    st->source_rate = fmax(BOUND_PACE_SLACK * st->fill_pace * st->bound_source_rate, ahead ? link_pace(c) : 0);
}

/* ------------------------------------------------------------ yielding */

/* An operator yields a group to another whose speed there, against its
 * best elsewhere, beats its own by this factor (an operator pinned to the
 * group's accelerator has no elsewhere: its advantage is infinite). */
#define YIELD_ADVANTAGE 1.25

/* Whether a node of group @p g fits a task of @p op (its pin, its shape). */
static bool group_takes(const sl_core *c, int op, int g)
{
  const sl_node_group *grp = &c->cluster->groups[g];
  const sl_pop *o = &c->plan->ops[op];
  return ((c->op_groups[op] >> g) & 1u) && grp->count > 0 && grp->cpu + EPS >= o->cpu && grp->gpu + EPS >= o->gpu &&
         (o->cpu > 0 || o->gpu > 0);
}

/* How much faster @p op runs on group @p g than on the fastest other
 * group that takes it (INFINITY: none does). */
static double advantage(const sl_core *c, int op, int g)
{
  double elsewhere = 0;
  for (int h = 0; h < c->cluster->ngroups; h++)
    if (h != g && group_takes(c, op, h))
      elsewhere = fmax(elsewhere, group_speed(c, op, &c->cluster->groups[h]));
  return elsewhere > 0 ? group_speed(c, op, &c->cluster->groups[g]) / elsewhere : INFINITY;
}

/* streaming-plus: where operators differ in what a group is worth to them
 * (an operator pinned to the group's accelerator, another that runs three
 * times faster on other GPUs), the one for whom the group is worth more
 * keeps there the slots the bound's allocation gives it: the others take
 * a node of the group only while what stays free still covers what it has
 * ready and not taken up (set_yields()). Without it, a model on any GPU
 * took the slow T4s that a filter pinned to T4s needed, the filter fell
 * behind and the model's tasks ran 3x slower than on the other GPUs (zoo
 * seed 1 case 197: 21.7% of the bound, now 46.8%). Speeds alike (as on
 * one class of slots without pins) favour no one, so where a vertex of the
 * program puts an operator matters only for the operators a group
 * favours. */
static void yield_caps(sl_core *c, streaming_state *st, const sl_bound_allocation *a)
{
  st->any_yield = false;
  memset(st->yield_to, 0, sizeof st->yield_to);
  memset(st->kept, 0, sizeof st->kept);
  for (int i = 0; i < c->nops; i++) {
    st->takes[i] = 0;
    for (int g = 0; g < c->cluster->ngroups; g++)
      if (group_takes(c, i, g))
        st->takes[i] |= 1u << g;
  }
  for (int i = 0; i < c->nops; i++)
    for (int g = 0; g < c->cluster->ngroups; g++) {
      if (!((st->takes[i] >> g) & 1u))
        continue;
      double mine = advantage(c, i, g);
      for (int j = 0; j < c->nops; j++)
        if (j != i && ((st->takes[j] >> g) & 1u) && share_a_class(c, i, j) && a->tasks[j][g] > EPS &&
            advantage(c, j, g) > YIELD_ADVANTAGE * mine) {
          st->yield_to[i][g] |= 1u << j;
          st->any_yield = true;
        }
    }
  for (int j = 0; j < c->nops; j++) /* the slots each favoured operator keeps */
    for (int g = 0; g < c->cluster->ngroups; g++) {
      const sl_node_group *grp = &c->cluster->groups[g];
      const sl_pop *o = &c->plan->ops[j];
      double per = tasks_per_node(o, grp);
      if (!(per > 0) || !(a->tasks[j][g] > EPS))
        continue;
      st->kept[j][g][0] = o->cpu > 0 ? a->tasks[j][g] * grp->cpu / per : 0;
      st->kept[j][g][1] = o->gpu > 0 ? a->tasks[j][g] * grp->gpu / per : 0;
    }
}

/* The tasks of @p j its queued input (and retries) would start now, no
 * more than its concurrency cap lets start. */
static double ready_tasks(const sl_core *c, int j)
{
  const sl__op *s = &c->ops[j];
  double n = sl__idq_len(&s->retryq);
  if (j == 0)
    return n + (double)(c->plan->ops[0].tasks - s->next_split);
  double row = c->plan->ops[j].in_row_bytes;
  if (row > 0 && has_input(c, j)) /* a batch still gathering starts nothing */
    n += fmax(1, floor(s->in_queue_bytes / row / next_task_rows(c, j) + 1e-9));
  int cap = state(c)->cap[j];
  return cap > 0 ? fmin(n, fmax(0, cap - s->running)) : n;
}

/* Marks, in c->op_yields, the groups each operator keeps off for now:
 * those where a task of it would leave free less than the operators it
 * yields to have yet to take up of what they keep, counting only the
 * tasks their queued input starts now (a slot kept for input that has not
 * come only idles). An operator that would yield every group it fits
 * yields none. */
static void set_yields(sl_core *c)
{
  streaming_state *st = state(c);
  if (!st->any_yield)
    return;
  int ng = c->cluster->ngroups;
  double used[SL_MAX_OPS][SL_MAX_GROUPS][2], free_slots[SL_MAX_GROUPS][2];
  memset(used, 0, sizeof used);
  memset(free_slots, 0, sizeof free_slots);
  for (int n = 0; n < c->nnodes; n++) {
    const sl__node *nd = &c->nodes[n];
    int g = c->cluster->nodes[n].group;
    if (!nd->alive)
      continue;
    free_slots[g][0] += nd->cpu_free;
    free_slots[g][1] += nd->gpu_free;
    for (int i = 0; i < c->nops; i++) {
      used[i][g][0] += nd->op_running[i] * c->plan->ops[i].cpu;
      used[i][g][1] += nd->op_running[i] * c->plan->ops[i].gpu;
    }
  }
  for (int i = 0; i < c->nops; i++) {
    const sl_pop *o = &c->plan->ops[i];
    c->op_yields[i] = 0;
    for (int g = 0; g < ng; g++) {
      uint32_t to = st->yield_to[i][g];
      if (!to)
        continue;
      double short_of[2] = {0, 0};
      for (int j = 0; j < c->nops; j++)
        if ((to >> j) & 1u) {
          double ready = ready_tasks(c, j);
          for (int k = 0; k < 2; k++) {
            double req = k ? c->plan->ops[j].gpu : c->plan->ops[j].cpu;
            short_of[k] += fmin(fmax(0, st->kept[j][g][k] - used[j][g][k]), ready * req);
          }
        }
      if ((o->cpu > 0 && free_slots[g][0] - o->cpu < short_of[0] - EPS) ||
          (o->gpu > 0 && free_slots[g][1] - o->gpu < short_of[1] - EPS))
        c->op_yields[i] |= 1u << g;
    }
    if ((st->takes[i] & ~c->op_yields[i]) == 0)
      c->op_yields[i] = 0;
  }
}

/* Partitions fine enough for the consumer's slots: a partition is the
 * least a task takes, so a consumer whose input comes in fewer partitions
 * than it has slots leaves slots idle, and a few large ones leave a long
 * tail (68 partitions of 86 s each on 64 GPUs take two waves, 172 s, for
 * 91 s of work). streaming-plus cuts the outputs of operator @p i so that
 * its consumer gets about PARTS_PER_SLOT partitions a slot, no smaller than keeps
 * the consumer's fixed costs per task (and per batch, unless batches are
 * free) under a tenth of its work; and, before that, small enough that the
 * stores hold an input for every consumer slot and two outputs for every
 * producer slot, twice over: memory that cannot hold a partition per slot
 * idles more slots than per-task costs waste (zoo case 40: partitions of
 * 3 rows of 11.6 MB let 10 of 64 sources run, 27% of the bound). */
/* Tasks of @p i that run at once at the bound's allocation, within what
 * fits: the store need not hold partitions for slots the allocation leaves
 * idle, and cutting partitions for them only adds tasks (6,336 slots of a
 * map made 1-row partitions and 243,800 tasks; zoo case 90). */
static double useful_instances(const sl_core *c, int i)
{
  double n = sl__op_instances(c, i);
  int share = state(c)->share_cap[i];
  return share > 0 && share < n ? share : n;
}


/* The slowest speed of the nodes operator @p i may run on, of its class. */
static double slowest_speed(const sl_core *c, int i)
{
  double slow, fast;
  speed_range(c, i, &slow, &fast);
  return slow;
}

/* Rows that amortise a consumer's fixed time @p fixed per task: the cut
 * the bound found (its task times count the fixed times per task and per
 * batch alike), else ten times the fixed time's worth of rows. */
static double amortising_rows(const sl_core *c, int i, double fixed)
{
  const sl_pop *o = &c->plan->ops[i];
  if (c->ops[i].task_rows > 0) /* the cut's task time counts every fixed cost */
    return c->ops[i].task_rows;
  return sl_plan_amortising_rows(fixed, o->time_per_row);
}

/* Partitions a consumer slot gets over the job. At four, more memory made
 * 18 zoo cases (seed 1) slower by over 2%: larger stores lifted the memory
 * cap that had cut partitions finer than four a slot, and the coarser cut
 * balanced worse (case 161: 18,258 tasks at 1x, 9,278 and 11% slower at
 * 2x). At eight: 14 such cases; cases of 8 partitions a node or more,
 * seeds 1, 7 and 3: mean +0.5 points each, 12, 10 and 14 cases up by over
 * 2 points, 3, 2 and 5 down (the largest, seed 1 case 77, 61.4 -> 54.9%:
 * more of its partitions cross tight NICs). At sixteen the mean rose by a
 * point but seven cases lost 7 to 14 points. */
#define PARTS_PER_SLOT 8
/* ... and where the consumer pays no fixed time per task or batch and may
 * run on the producer's nodes, 32: a finer cut then costs the consumer no
 * work, and rows leave the producer sooner (zoo seed 7 case 107: 83.1 ->
 * 93.1% of the bound, where batch reached 98.7%). Six zoos (seeds 1, 2, 7
 * and 3, set-up zoos of seeds 1 and 7): 115 cases up by more than 2
 * points, 37 down, points summed +490. Consumers on other nodes keep 8:
 * their partitions all cross the network, and with 32 for every consumer
 * seed 1 case 34 (GPU-only nodes behind 100 Mbps NICs) lost 16 points
 * (11 as it is). At 64 for all: +408, 43 down. */
#define PARTS_PER_SLOT_FREE 32

static bool group_takes(const sl_core *c, int op, int g);

static double fine_partition_bytes(const sl_core *c, int i, bool last_wave)
{
  if (i + 1 >= c->nops || c->plan->ops[i + 1].kind == SL_OP_ALL_TO_ALL)
    return 0;
  const sl_pop *o = &c->plan->ops[i], *next = &c->plan->ops[i + 1];
  double row_bytes = fmax(o->out_row_bytes, 1);
  double rows_in = (double)c->plan->source_rows * o->alpha_rows;
  double fixed = next->time_per_task + (sl__batch_free(c, i + 1) ? 0 : next->time_per_batch);
  bool same_nodes = false; /* a group where both may run: the partition need not move */
  for (int g = 0; g < c->cluster->ngroups && !same_nodes; g++)
    same_nodes = group_takes(c, i, g) && group_takes(c, i + 1, g);
  double per_slot = fixed > 0 || !same_nodes ? PARTS_PER_SLOT : PARTS_PER_SLOT_FREE;
  double rows = ceil(rows_in / (per_slot * sl__op_instances(c, i + 1)));
  double floor_rows = 1;
  if (fixed > 0)
    rows = next->time_per_row > 0 ? fmax(rows, floor_rows = amortising_rows(c, i + 1, fixed)) : INFINITY;
  if (last_wave && next->time_per_row > 0 && state(c)->area_s > 0) {
    double tail = LAST_PARTITION_SHARE * state(c)->area_s * slowest_speed(c, i + 1);
    rows = fmin(rows, fmax(floor_rows, floor((tail - fixed) / next->time_per_row)));
  }
  double slots = useful_instances(c, i) + useful_instances(c, i + 1);
  rows = fmin(rows, floor(c->alive_store / (4 * slots * row_bytes)));
  /* its tasks take a batch, or a share of one where batches cost time
   * and there are fewer than slots (zoo case 45: partitions of 260 rows
   * for tasks that wanted 45, 38.8% of the bound; 54.2% with 45) */
  if (next->batch_size > 0 && !sl__batch_free(c, i + 1))
    rows = fmax(rows, batch_share_rows(c, i + 1, rows_in, -1));
  return fmax(rows, 1) * row_bytes;
}

static int streaming_init(sl_core *c, char *err, size_t errlen)
{
  streaming_state *st = calloc(1, sizeof *st);
  size_t nn = c->nnodes > 0 ? (size_t)c->nnodes : 1;
  if (st && (!(st->spill_disk_s = calloc(nn, sizeof *st->spill_disk_s)) ||
             !(st->ending = calloc(nn, sizeof *st->ending)) || !(st->held = calloc(nn, sizeof *st->held)) ||
             !(st->slot_ends = calloc(nn * HOME_RANKS, sizeof *st->slot_ends)))) {
    free(st->spill_disk_s);
    free(st->ending);
    free(st->held);
    free(st);
    st = NULL;
  }
  /* checked once: has_output_space() asks on every pass of the scheduler */
  for (int g = 0; st && g < c->cluster->ngroups; g++)
    st->any_disk = st->any_disk || sl_group_has_disk(&c->cluster->groups[g]);
  if (!st) {
    snprintf(err, errlen, "out of memory");
    return SL_ENOMEM;
  }
  c->pstate = st;
  st->slot_ends_op = -1;
  st->wave_op = -1;
  st->source_expansion = source_expansion(c);
  st->admit_budget = budget_cap(c);
  if (sl_cluster_backbone_binds(c->cluster) && c->nnodes > 0)
    st->backbone_share = c->cluster->backbone_bps / c->nnodes;
  st->reserve = c->opts.reservation_ratio > 0;
  for (int i = 0; i < c->nops; i++)
    st->cap[i] = c->plan->ops[i].concurrency;
  for (int b = c->nops - 1, seen = 0; b >= 0; b--) {
    st->feeds_barrier[b] = seen;
    seen = seen || sl_pop_is_barrier(&c->plan->ops[b]);
  }
  if (c->opts.streaming.no_adaptive)
    fixed_concurrency(c);
  if (c->opts.streaming.bound_shares) {
    /* tasks of the size the bound finds best where a tenth of the work
     * fixed is not (zoo case 128: a 16 s fixed cost asked for 3,040-row
     * tasks that took 160 s each, for a job whose bound is 74 s); before
     * the shares, which look for a wave operator at that cut */
    double rows[SL_MAX_OPS];
    if (sl_bound_task_rows(c->plan, c->cluster, rows) == 0)
      for (int i = 0; i < c->nops; i++)
        c->ops[i].task_rows = rows[i];
    bound_share_caps(c, st);
    for (int i = 0; i < c->nops; i++) {
      st->part_target[i] = fine_partition_bytes(c, i, false);
      st->last_target[i] = fine_partition_bytes(c, i, true);
      st->reads_home[i] = reads_where_made(c, i);
    }
  }
  st->next_refill = 0; /* the first tick computes the drain rate */
  if (c->opts.streaming.static_alloc)
    return sl__static_init(c, err, errlen);
  return 0;
}

static void streaming_fini(sl_core *c)
{
  if (c->opts.streaming.static_alloc)
    sl__static_fini(c);
  if (c->pstate) {
    free(state(c)->spill_disk_s);
    free(state(c)->ending);
    free(state(c)->held);
    free(state(c)->slot_ends);
    free(state(c)->fill);
  }
  free(c->pstate);
  c->pstate = NULL;
}

static void streaming_emitted(sl_core *c, double now, sl__task *t, sl_part_id p)
{
  if (c->opts.streaming.static_alloc) {
    sl__static_emitted(c, now, t, p);
    return;
  }
  /* default routing: the next operator's input queue */
  sl__part *part = &c->parts[p];
  sl__op *next = &c->ops[part->op + 1];
  sl__enqueue_id(c, &next->inq, p);
  part->in_queue = 1;
  part->queued_at = c->now;
  next->in_queue_bytes += part->bytes;
}

static bool streaming_cluster_change(sl_core *c, double now, int node, bool joined)
{
  if (c->opts.streaming.static_alloc)
    return sl__static_cluster_change(c, now, node, joined);
  return false;
}

const sl__policy sl__policy_streaming = {
  .name = "streaming",
  .init = streaming_init,
  .fini = streaming_fini,
  .schedule = streaming_schedule,
  .admit = streaming_admit,
  .target_bytes = streaming_target,
  .on_cluster_change = streaming_cluster_change,
  .on_task_failed = NULL,
  .on_emitted = streaming_emitted,
  .tick = streaming_tick,
  .wakeup = streaming_wakeup,
};
