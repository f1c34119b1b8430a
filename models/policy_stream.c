/*
 * Static placement, shared by two models:
 *
 * - stream (Flink-like): every operator gets a fixed number of long-lived
 *   instances placed on slots at start; an instance's outputs go
 *   round-robin to the next operator's instances through bounded channels
 *   (row by row, as a rebalance does: a partition goes to the instance that
 *   has been sent the fewest rows, the round-robin order breaking ties, so
 *   partitions of unequal size still share the rows out evenly),
 *   and a full channel holds its producer (backpressure). Every interval a
 *   global checkpoint commits the source splits that reached the sink; any
 *   failure or change of the cluster rolls the whole job back to the last
 *   checkpoint and places the instances again.
 * - static (Ray Data-static, an ablation of streaming batch): the same
 *   placement and round-robin routing, but failures recover through
 *   lineage like streaming batch, with no global rollback.
 *
 * The slots of a resource class are split evenly between the operators of
 * that class, in pipeline order (8 CPUs, 2 CPU operators: 4 and 4).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "error.h"

#define EPS 1e-9

typedef struct {
  int op, node;
  sl__idq chan;     /* partitions routed to this instance */
  sl_task_id busy;  /* running attempt, SL_NONE when idle */
  double rows_routed; /* rows sent to it since it was placed */
  bool sealed;        /* its router moved on: it runs the partial batch it holds */
} instance;

typedef struct {
  bool rollback;    /* stream model: recover by global rollback */
  instance *inst;
  int ninst;
  int first[SL_MAX_OPS], count[SL_MAX_OPS];
  uint32_t rr[SL_MAX_OPS]; /* next instance of op+1 for op's outputs */
  bool batch_at_a_time[SL_MAX_OPS]; /* partial_batches_overflow(), as placed */
  sl__idq pending;  /* source splits still to run */
  bool *committed;  /* per split, as of the last checkpoint */
  int32_t *mixed_with; /* per split: union-find of splits whose rows share a partition */
  double next_checkpoint, paused_until;
} placement;

static placement *pl(const sl_core *c)
{
  return c->placement;
}

/* ------------------------------------------------------------ placement */

static void free_instances(placement *p)
{
  for (int i = 0; i < p->ninst; i++)
    sl__idq_free(&p->inst[i].chan);
  free(p->inst);
  p->inst = NULL;
  p->ninst = 0;
}

/* Whether a whole node could ever run operator @p op: its pins allow it
 * and it has the CPU and GPU one task asks for. */
static bool node_suits(const sl_core *c, int op, int node)
{
  const sl_pop *o = &c->plan->ops[op];
  return sl__op_allowed(c, node, op) && o->cpu <= c->nodes[node].cpu_total + EPS &&
         o->gpu <= c->nodes[node].gpu_total + EPS;
}

/* Slots each alive node offers to operators of one class: as many as the
 * largest request of the class's operators that suit the node fits. The
 * largest request of all left a node with one GPU no position when some
 * operator asked for two, and an operator that only fits there (it also
 * asks for CPU) could not be placed. */
static int class_positions(const sl_core *c, bool gpu, const double *cpu_left, int *node_of, int max)
{
  int n = 0;
  for (int node = 0; node < c->nnodes; node++) {
    if (!c->nodes[node].alive)
      continue;
    double req = 0;
    for (int i = 0; i < c->nops; i++) {
      const sl_pop *o = &c->plan->ops[i];
      if ((o->gpu > 0) == gpu && node_suits(c, i, node))
        req = fmax(req, gpu ? o->gpu : o->cpu);
    }
    if (req <= 0)
      continue;
    double cap = gpu ? c->nodes[node].gpu_total : cpu_left[node];
    for (int k = 0; k < (int)floor(cap / req + EPS) && n < max; k++)
      node_of[n++] = node;
  }
  return n;
}

/* Running attempts survive a new placement (static model): each takes an
 * instance of its operator on its node, so no slot is promised twice. */
static void adopt_running(sl_core *c)
{
  placement *p = pl(c);
  for (uint32_t i = 0; i < c->ntasks; i++) {
    sl__task *t = &c->tasks[i];
    if (t->state != SL__T_RUNNING)
      continue;
    t->instance = -1;
    for (int k = 0; k < p->count[t->op]; k++) {
      instance *in = &p->inst[p->first[t->op] + k];
      if (in->node == t->node && in->busy == SL_NONE) {
        in->busy = i;
        t->instance = p->first[t->op] + k;
        break;
      }
    }
  }
}

/* CPU of @p node that a GPU operator leaves to the CPU operators: half,
 * where one of them may run there. GPU operators are placed first, and
 * one that asks for 2 CPUs with each GPU took every CPU of nodes of 8 GPUs
 * and 4 to 8 CPUs: no CPU operator could be placed (zoo case 23). */
static double cpu_kept(const sl_core *c, int op, int node)
{
  if (!(c->plan->ops[op].gpu > 0) || !(c->plan->ops[op].cpu > 0))
    return 0;
  for (int i = 0; i < c->nops; i++)
    if (!(c->plan->ops[i].gpu > 0) && node_suits(c, i, node))
      return 0.5 * c->nodes[node].cpu_total;
  return 0;
}

/* Whether operator @p op may take a position on @p node: the node suits
 * it and still has the CPU it asks for, beyond what is kept for the CPU
 * operators unless @p all. */
static bool position_fits(const sl_core *c, int op, int node, const double *cpu_left, bool all)
{
  double kept = all ? 0 : cpu_kept(c, op, node);
  return node_suits(c, op, node) && c->plan->ops[op].cpu <= cpu_left[node] - kept + EPS;
}

/* The next operator of @p ops, in rotation from @p *rot, that may run on
 * @p node (accelerator pins), whose CPU request the node still has
 * (@p cpu_left: a GPU operator that also asks for CPU on a GPU-only node
 * never fits, and the partitions routed to it wait there forever) and has
 * fewer than its concurrency cap of instances (@p placed); -1 when none
 * may. Without pins, caps or such nodes this deals the positions out
 * round-robin, as before. */
static int next_allowed(const sl_core *c, const int *ops, int nops, int *rot, int node, const double *cpu_left,
                        const int *placed)
{
  for (int k = 0; k < nops; k++) {
    int op = ops[(*rot + k) % nops];
    int cap = c->plan->ops[op].concurrency;
    if (position_fits(c, op, node, cpu_left, false) && (cap <= 0 || placed[op] < cap)) {
      *rot = (*rot + k + 1) % nops;
      return op;
    }
  }
  return -1;
}

static int index_of(const int *ops, int nops, int op)
{
  for (int k = 0; k < nops; k++)
    if (ops[k] == op)
      return k;
  return 0;
}

/* Reserves each operator of @p ops its first instance before the others
 * are dealt out (@p seed_op[j]: the operator reserved position j, or -1),
 * the operators with the fewest positions that fit them first. Dealt out
 * in rotation alone, the positions of the nodes that suit a GPU operator
 * that also needs CPU (the only ones with both) went to other operators,
 * and the job could not be placed. With no pins and equal requests this
 * reserves positions 0, 1, ... in order: the rotation's own choice. */
static void seed_first_instances(const sl_core *c, const int *ops, int nops, const int *node_of, int npos,
                                 double *cpu_left, int *seed_op)
{
  int fitting[SL_MAX_OPS], order[SL_MAX_OPS];
  for (int j = 0; j < npos; j++)
    seed_op[j] = -1;
  for (int k = 0; k < nops; k++) {
    fitting[k] = 0;
    for (int j = 0; j < npos; j++)
      fitting[k] += position_fits(c, ops[k], node_of[j], cpu_left, false);
    order[k] = k;
  }
  for (int a = 1; a < nops; a++) /* stable: ties keep the operators' order */
    for (int b = a; b > 0 && fitting[order[b]] < fitting[order[b - 1]]; b--) {
      int t = order[b];
      order[b] = order[b - 1];
      order[b - 1] = t;
    }
  for (int k = 0; k < nops; k++) {
    int op = ops[order[k]];
    /* within what is kept for the CPU operators if it can, else not */
    for (int all = 0, j = npos; all < 2 && j == npos; all++)
      for (j = 0; j < npos; j++)
        if (seed_op[j] < 0 && position_fits(c, op, node_of[j], cpu_left, all)) {
          seed_op[j] = op;
          if (c->plan->ops[op].gpu > 0)
            cpu_left[node_of[j]] -= c->plan->ops[op].cpu;
          break;
        }
  }
}

static bool partial_batches_overflow(const sl_core *c, const placement *p, const int *on_node, int op);

/* Places instances on the alive nodes: GPU operators first (they may take
 * CPU too), then the CPU operators on what CPU is left. */
static int place(sl_core *c)
{
  placement *p = pl(c);
  free_instances(p);
  int placed[SL_MAX_OPS] = {0}; /* instances per operator, against its concurrency cap */
  int max = 0;
  for (int n = 0; n < c->nnodes; n++)
    max += c->nodes[n].nslots;
  instance *inst = calloc(max > 0 ? max : 1, sizeof *inst);
  int *node_of = malloc(sizeof(int) * (max > 0 ? max : 1));
  int *seed_op = malloc(sizeof(int) * (max > 0 ? max : 1));
  double *cpu_left = malloc(sizeof(double) * c->nnodes);
  if (!inst || !node_of || !seed_op || !cpu_left) {
    free(inst);
    free(node_of);
    free(seed_op);
    free(cpu_left);
    return SL_ENOMEM;
  }
  for (int n = 0; n < c->nnodes; n++)
    cpu_left[n] = c->nodes[n].cpu_total;
  int ninst = 0;
  for (int pass = 0; pass < 2; pass++) {
    bool gpu = pass == 0;
    int ops[SL_MAX_OPS], nops = 0;
    for (int i = 0; i < c->nops; i++)
      if ((c->plan->ops[i].gpu > 0) == gpu)
        ops[nops++] = i;
    if (nops == 0)
      continue;
    int npos = class_positions(c, gpu, cpu_left, node_of, max - ninst);
    seed_first_instances(c, ops, nops, node_of, npos, cpu_left, seed_op);
    for (int j = 0, rot = 0; j < npos; j++) {
      int op = seed_op[j];
      if (op >= 0) /* reserved: its CPU is already off cpu_left */
        rot = (index_of(ops, nops, op) + 1) % nops;
      else if ((op = next_allowed(c, ops, nops, &rot, node_of[j], cpu_left, placed)) < 0)
        continue; /* no operator of the class may run on this node */
      else if (gpu)
        cpu_left[node_of[j]] -= c->plan->ops[op].cpu;
      placed[op]++;
      inst[ninst].op = op;
      inst[ninst].node = node_of[j];
      inst[ninst].busy = SL_NONE;
      ninst++;
    }
  }
  /* group by operator so an operator's instances are a contiguous range */
  instance *sorted = calloc(ninst > 0 ? ninst : 1, sizeof *sorted);
  /* instances of op on node: on_node[op * nnodes + node] */
  int *on_node = calloc((size_t)c->nops * (size_t)(c->nnodes > 0 ? c->nnodes : 1), sizeof *on_node);
  free(seed_op);
  if (!sorted || !on_node) {
    free(sorted);
    free(on_node);
    free(inst);
    free(node_of);
    free(cpu_left);
    return SL_ENOMEM;
  }
  int k = 0;
  for (int op = 0; op < c->nops; op++) {
    p->first[op] = k;
    for (int j = 0; j < ninst; j++)
      if (inst[j].op == op) {
        sorted[k++] = inst[j];
        on_node[op * c->nnodes + inst[j].node]++;
      }
    p->count[op] = k - p->first[op];
    p->rr[op] = 0;
  }
  free(inst);
  free(node_of);
  free(cpu_left);
  p->inst = sorted;
  p->ninst = ninst;
  for (int op = 0; op < c->nops; op++)
    p->batch_at_a_time[op] = partial_batches_overflow(c, p, on_node, op);
  free(on_node);
  adopt_running(c);
  return 0;
}

static bool every_op_placed(const sl_core *c)
{
  for (int op = 0; op < c->nops; op++)
    if (pl(c)->count[op] == 0)
      return false;
  return true;
}

/* --------------------------------------------------------------- routing */

/* Partitions a channel into @p op holds: the configured capacity, and for a
 * batch operator enough partitions to fill two batches, or it could never
 * see one. */
static int channel_capacity(const sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  int cap = c->opts.channel_capacity;
  if (o->batch_size > 0) {
    double part_rows = fmax(1, sl__typical_rows(c, op - 1) * c->plan->ops[op - 1].rows_out_per_row);
    double per_part = fmin(part_rows, fmax(1, floor(c->plan->target_partition_bytes /
                                                    fmax(o->in_row_bytes, 1))));
    cap = (int)fmax(cap, 2 * ceil(o->batch_size / per_part));
  }
  return cap;
}

/* Rows waiting in the channel of @p in. */
static int64_t channel_rows(const sl_core *c, const instance *in)
{
  int64_t rows = 0;
  for (uint32_t k = 0; k < sl__idq_len(&in->chan); k++)
    rows += c->parts[sl__idq_at(&in->chan, k)].rows;
  return rows;
}

/* Whether a batch each for every instance of batch operator @p op takes
 * more than half the stores of the nodes its producer runs on, where its
 * input waits: rows spread over every instance then fill those stores with
 * partial batches before any instance has a whole one (528 instances of a
 * 64-row batch operator, zoo case 90, and 40 of a 32-row one fed from
 * five small stores, case 107: the producers waited on full stores and
 * nothing ran). */
static bool partial_batches_overflow(const sl_core *c, const placement *p, const int *on_node, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  if (o->batch_size <= 0 || op < 1)
    return false;
  double stores = 0;
  for (int n = 0; n < c->nnodes; n++)
    if (c->nodes[n].alive && on_node[(op - 1) * c->nnodes + n] > 0)
      stores += c->nodes[n].store_budget;
  double every_instance_a_batch = (double)p->count[op] * (double)o->batch_size;
  /* with fewer rows than that, spread rows run in parallel as partial
   * batches once the producer is done: filled one at a time, the 552 rows
   * of zoo case 123 made three tasks of up to 256 rows for 128 slots */
  return every_instance_a_batch * o->in_row_bytes > 0.5 * stores &&
         sl_plan_rows_in(c->plan, op) >= every_instance_a_batch;
}

/* The instance of op + 1 that @p op's last partition went to; NULL before
 * the first. */
static instance *last_routed(const placement *p, int op)
{
  uint32_t n = (uint32_t)p->count[op + 1];
  return p->rr[op] > 0 && n > 0 ? &p->inst[p->first[op + 1] + (p->rr[op] - 1) % n] : NULL;
}

/* The instance of op + 1 that @p op's next partition, of @p rows rows,
 * goes to: where partial batches would overflow the stores, the last one
 * while its channel holds part of a batch that the partition does not
 * overfill; else the one sent the fewest rows, the first from the
 * round-robin pointer on a tie (with partitions of equal size, plain
 * round-robin, which keeps every instance's channel deep: filling one
 * batch at a time left video's GPUs idle 6% of the time). */
static instance *route_target(const sl_core *c, int op, int64_t rows)
{
  placement *p = pl(c);
  int next = op + 1;
  uint32_t n = (uint32_t)p->count[next];
  if (n == 0)
    return NULL;
  instance *base = &p->inst[p->first[next]], *last = last_routed(p, op);
  if (last && p->batch_at_a_time[next]) {
    int64_t queued = channel_rows(c, last);
    if (queued > 0 && queued + rows <= c->plan->ops[next].batch_size &&
        (int)sl__idq_len(&last->chan) < channel_capacity(c, next))
      return last;
  }
  instance *best = &base[p->rr[op] % n];
  for (uint32_t k = 1; k < n; k++) {
    instance *in = &base[(p->rr[op] + k) % n];
    if (in->rows_routed < best->rows_routed)
      best = in;
  }
  return best;
}

/* Whether operator @p op's outputs feed a shuffle: they wait in its queue
 * for the barrier, not in an instance's channel. */
static bool feeds_shuffle(const sl_core *c, int op)
{
  return op + 1 < c->nops && c->plan->ops[op + 1].kind == SL_OP_ALL_TO_ALL;
}

void sl__static_emitted(sl_core *c, double now, sl__task *t, sl_part_id pid)
{
  (void)now;
  (void)t;
  sl__part *part = &c->parts[pid];
  if (feeds_shuffle(c, part->op)) {
    sl__enqueue_part(c, pid);
    return;
  }
  instance *in = route_target(c, part->op, part->rows);
  if (!in)
    return; /* no instance now: placed again on the next cluster change */
  placement *p = pl(c);
  int next = part->op + 1;
  instance *last = last_routed(p, part->op);
  if (last && last != in && p->batch_at_a_time[next])
    last->sealed |= !sl__idq_empty(&last->chan); /* it gets no more for now: it runs what it holds */
  sl__enqueue_id(c, &in->chan, pid);
  part->in_queue = 1;
  in->rows_routed += (double)part->rows;
  p->rr[part->op] = (uint32_t)(in - &p->inst[p->first[next]]) + 1;
}

int sl__static_admit(sl_core *c, double now, sl__task *t, double bytes, sl_emit_fate *fate)
{
  (void)now;
  int64_t rows = llround(bytes / fmax(c->plan->ops[t->op].out_row_bytes, 1));
  instance *in = feeds_shuffle(c, t->op) ? NULL : route_target(c, t->op, rows > 0 ? rows : 1);
  if (in && (int)sl__idq_len(&in->chan) >= channel_capacity(c, t->op + 1) && !t->spill_next)
    return SL_EAGAIN; /* the channel is full: backpressure */
  return sl__admit_memory_keeping(c, t, bytes, sl__downstream_room(c, t->op, t->node), fate);
}

/* Partitions still waiting in channels, to be routed again after placing. */
static void reroute_channels(sl_core *c, instance *old, int nold)
{
  for (int i = 0; i < nold; i++) {
    while (!sl__idq_empty(&old[i].chan)) {
      sl_part_id pid = sl__idq_pop(&old[i].chan);
      sl__part *part = &c->parts[pid];
      part->in_queue = 0;
      if (part->state == SL__P_ALIVE || part->state == SL__P_SPILLED)
        sl__static_emitted(c, c->now, NULL, pid);
      /* lost ones come back through lineage and are routed on arrival */
    }
    sl__idq_free(&old[i].chan);
  }
  free(old);
}

/* ------------------------------------------------------------- dispatch */

static bool idle(const sl_core *c, const instance *in)
{
  return in->busy == SL_NONE || c->tasks[in->busy].state != SL__T_RUNNING;
}

static void run_on(sl_core *c, double now, instance *in, sl_task_id id)
{
  c->tasks[id].instance = (int32_t)(in - pl(c)->inst);
  sl__launch(c, now, id, in->node);
  in->busy = id;
}

static sl_task_id next_source_task(sl_core *c)
{
  placement *p = pl(c);
  if (sl__idq_empty(&p->pending))
    return SL_NONE;
  int64_t split = sl__idq_pop(&p->pending);
  c->ops[0].next_split = c->plan->ops[0].tasks - sl__idq_len(&p->pending);
  return sl__task_new(c, 0, NULL, 0, split);
}

/* Drops channel entries lost with their node: lineage brings them back. */
static void skip_lost(sl_core *c, instance *in)
{
  while (!sl__idq_empty(&in->chan)) {
    sl__part *part = &c->parts[sl__idq_at(&in->chan, 0)];
    if (part->state == SL__P_ALIVE || part->state == SL__P_SPILLED)
      return;
    sl__idq_pop(&in->chan);
    part->in_queue = 0;
  }
}

/* Rows waiting in the channel, and whether they make a batch to run: a
 * batch operator waits for a full batch unless nothing more will come
 * (its upstream is done, or its router has moved on to the next one). */
static bool channel_ready(const sl_core *c, const instance *in)
{
  const sl_pop *o = &c->plan->ops[in->op];
  if (sl__idq_empty(&in->chan))
    return false;
  if (o->batch_size <= 0)
    return true;
  int64_t rows = channel_rows(c, in);
  return rows >= o->batch_size || in->sealed || sl__op_drained(c, in->op - 1) ||
         (int)sl__idq_len(&in->chan) >= channel_capacity(c, in->op);
}

/* The representative of the splits mixed with @p s (path halving). */
static int64_t split_root(const placement *p, int64_t s)
{
  while (p->mixed_with[s] != s) {
    p->mixed_with[s] = p->mixed_with[p->mixed_with[s]];
    s = p->mixed_with[s];
  }
  return s;
}

/* A task over partitions of several splits writes their rows into one
 * partition labelled with the first split only: from now on the splits are
 * committed and rolled back together, or a rollback that keeps one and
 * replays the other would lose or repeat the rows they share. */
static void mix_splits(sl_core *c, const sl_part_id *take, int n)
{
  placement *p = pl(c);
  int64_t a = c->parts[take[0]].split;
  for (int i = 1; i < n && a >= 0 && a < c->nsplits; i++) {
    int64_t b = c->parts[take[i]].split;
    if (b < 0 || b >= c->nsplits)
      continue;
    int64_t ra = split_root(p, a), rb = split_root(p, b);
    if (ra != rb)
      p->mixed_with[ra > rb ? ra : rb] = (int32_t)(ra < rb ? ra : rb);
  }
}

static sl_task_id next_channel_task(sl_core *c, instance *in)
{
  skip_lost(c, in);
  if (!channel_ready(c, in))
    return SL_NONE;
  const sl_pop *o = &c->plan->ops[in->op];
  sl_part_id take[256];
  int n = 0;
  int64_t rows = 0;
  while (!sl__idq_empty(&in->chan) && n < 256) {
    sl__part *part = &c->parts[sl__idq_at(&in->chan, 0)];
    if (part->state != SL__P_ALIVE && part->state != SL__P_SPILLED)
      break;
    if (n > 0 && (!sl__gathers(c, in->op) || !sl__batch_gains(rows, part->rows, o->batch_size)))
      break;
    take[n++] = sl__idq_pop(&in->chan);
    part->in_queue = 0;
    rows += part->rows;
  }
  mix_splits(c, take, n);
  in->sealed = false;
  sl_task_id id = sl__task_new(c, in->op, take, n, -1);
  for (int i = 0; id != SL_NONE && i < n; i++)
    c->parts[take[i]].consumer = id;
  sl__resume_op(c, in->op - 1); /* channel slots freed up */
  return id;
}

static void launch_retries_on_instances(sl_core *c, double now, int op)
{
  placement *p = pl(c);
  sl__idq *q = &c->ops[op].retryq;
  for (int k = 0; k < p->count[op] && !sl__idq_empty(q); k++) {
    instance *in = &p->inst[p->first[op] + k];
    if (!idle(c, in) || !sl__fits(c, in->node, op))
      continue;
    while (!sl__idq_empty(q)) {
      sl_task_id id = sl__idq_pop(q);
      if (c->tasks[id].state == SL__T_QUEUED) {
        run_on(c, now, in, id);
        break;
      }
    }
  }
}

void sl__static_schedule(sl_core *c, double now)
{
  placement *p = pl(c);
  if (now + EPS < p->paused_until)
    return;
  for (int op = 1; op < c->nops; op++)
    /* the barrier: every input is in (a merge stage waits for them all
     * too: static placement has no streaming shuffle) */
    while (c->plan->ops[op].kind == SL_OP_ALL_TO_ALL && !sl__idq_empty(&c->ops[op].inq) && sl__op_drained(c, op - 1)) {
      sl_task_id first = sl__make_all_to_all(c, op);
      if (first == SL_NONE)
        break;
      sl__enqueue_id(c, &c->ops[op].retryq, first); /* placed on the instances like the others */
    }
  for (int op = 0; op < c->nops; op++)
    launch_retries_on_instances(c, now, op);
  for (int i = 0; i < p->ninst; i++) {
    instance *in = &p->inst[i];
    if (!idle(c, in) || !sl__fits(c, in->node, in->op))
      continue;
    sl_task_id id = in->op == 0 ? next_source_task(c) : next_channel_task(c, in);
    if (id != SL_NONE)
      run_on(c, now, in, id);
  }
}

/* ------------------------------------------------------------ lifecycle */

int sl__static_init(sl_core *c, char *err, size_t errlen)
{
  placement *p = calloc(1, sizeof *p);
  if (!p)
    goto out_nomem;
  c->placement = p;
  p->committed = calloc(c->nsplits > 0 ? c->nsplits : 1, sizeof *p->committed);
  p->mixed_with = malloc(sizeof *p->mixed_with * (c->nsplits > 0 ? c->nsplits : 1));
  if (!p->committed || !p->mixed_with)
    goto out_nomem;
  for (int64_t s = 0; s < c->nsplits; s++)
    p->mixed_with[s] = (int32_t)s;
  for (int64_t s = 0; s < c->nsplits; s++)
    if (sl__idq_push(&p->pending, (uint32_t)s) < 0)
      goto out_nomem;
  p->next_checkpoint = c->opts.checkpoint_interval_s;
  if (place(c) < 0)
    goto out_nomem;
  if (!every_op_placed(c)) {
    snprintf(err, errlen, "static placement needs at least one slot per operator; the cluster has too few");
    return SL_EUNSAT;
  }
  return 0;
out_nomem:
  snprintf(err, errlen, "out of memory");
  return SL_ENOMEM;
}

void sl__static_fini(sl_core *c)
{
  placement *p = pl(c);
  if (!p)
    return;
  free_instances(p);
  sl__idq_free(&p->pending);
  free(p->committed);
  free(p->mixed_with);
  free(p);
  c->placement = NULL;
}

static int replace_instances(sl_core *c)
{
  placement *p = pl(c);
  instance *old = p->inst;
  int nold = p->ninst;
  p->inst = NULL;
  p->ninst = 0;
  int rc = place(c);
  reroute_channels(c, old, nold);
  return rc;
}

bool sl__static_cluster_change(sl_core *c, double now, int node, bool joined)
{
  (void)now;
  (void)node;
  (void)joined;
  if (replace_instances(c) < 0)
    return false;
  return false; /* lineage recovery continues in the core */
}

/* ---------------------------------------------------------- stream model */

/* Splits whose every row reached the sink: nothing of theirs lives. */
static void commit_finished_splits(sl_core *c)
{
  placement *p = pl(c);
  bool *live = calloc(c->nsplits > 0 ? c->nsplits : 1, sizeof *live);
  if (!live)
    return; /* keep the previous checkpoint */
  for (uint32_t i = 0; i < sl__idq_len(&p->pending); i++)
    live[sl__idq_at(&p->pending, i)] = true;
  for (uint32_t i = 0; i < c->ntasks; i++) {
    const sl__task *t = &c->tasks[i];
    if ((t->state == SL__T_RUNNING || t->state == SL__T_QUEUED || t->state == SL__T_BLOCKED) &&
        t->split >= 0 && t->split < c->nsplits)
      live[t->split] = true;
  }
  for (uint32_t i = 0; i < c->nparts; i++) {
    const sl__part *part = &c->parts[i];
    if (part->refs > 0 && part->split >= 0 && part->split < c->nsplits)
      live[part->split] = true;
  }
  /* splits whose rows were mixed commit together: when none of them lives */
  for (int64_t s = 0; s < c->nsplits; s++)
    if (live[s])
      live[split_root(p, s)] = true;
  for (int64_t s = 0; s < c->nsplits; s++)
    p->committed[s] = !live[split_root(p, s)];
  free(live);
}

static void rollback(sl_core *c, double now)
{
  placement *p = pl(c);
  sl_decision d = {.kind = SL_DEC_ROLLBACK, .task = SL_NONE, .part = SL_NONE,
                   .keep_split = p->committed};
  sl__push(c, &d);
  sl__reset_all(c, now);
  sl__idq_clear(&p->pending);
  for (int64_t s = 0; s < c->nsplits; s++)
    if (!p->committed[s]) {
      c->stats.rows_rolled_back += c->split_rows[s]; /* the sink gives them back */
      c->split_rows[s] = 0;
      sl__enqueue_id(c, &p->pending, (uint32_t)s);
    }
  c->ops[0].next_split = c->plan->ops[0].tasks - sl__idq_len(&p->pending);
  free_instances(p);
  place(c);
  p->paused_until = now + c->opts.restart_cost_s;
  c->stats.rollbacks++;
}

static int stream_init(sl_core *c, char *err, size_t errlen)
{
  c->pstate = NULL;
  int rc = sl__static_init(c, err, errlen);
  if (rc == 0)
    pl(c)->rollback = true;
  return rc;
}

static void stream_fini(sl_core *c)
{
  sl__static_fini(c);
}

static double stream_target(const sl_core *c, int op)
{
  (void)op;
  return sl__target_bytes(c);
}

/* Every failure rolls back, even one at the instant of the last rollback:
 * the attempts launched since then die with it and must be replayed too.
 * A task that dies with its node waits for the one rollback of the node's
 * loss (sl_core_node_lost() marks the node dead before failing its tasks). */
static bool stream_task_failed(sl_core *c, double now, sl__task *t)
{
  if (c->nodes[t->node].alive)
    rollback(c, now);
  return true;
}

static bool stream_cluster_change(sl_core *c, double now, int node, bool joined)
{
  (void)node;
  (void)joined;
  rollback(c, now);
  return true;
}

static void stream_tick(sl_core *c, double now)
{
  placement *p = pl(c);
  if (now + EPS < p->next_checkpoint)
    return;
  commit_finished_splits(c);
  sl_decision d = {.kind = SL_DEC_CHECKPOINT, .task = SL_NONE, .part = SL_NONE,
                   .keep_split = p->committed};
  sl__push(c, &d);
  c->stats.checkpoints++;
  p->paused_until = fmax(p->paused_until, now + c->opts.checkpoint_cost_s);
  while (p->next_checkpoint <= now + EPS)
    p->next_checkpoint += c->opts.checkpoint_interval_s;
}

static double stream_wakeup(const sl_core *c)
{
  const placement *p = pl(c);
  double w = p->next_checkpoint;
  if (p->paused_until > c->now + EPS)
    w = fmin(w, p->paused_until);
  return w;
}

static void stream_schedule(sl_core *c, double now)
{
  sl__static_schedule(c, now);
}

static int stream_admit(sl_core *c, double now, sl__task *t, double bytes, sl_emit_fate *fate)
{
  return sl__static_admit(c, now, t, bytes, fate);
}

const sl__policy sl__policy_stream = {
  .name = "stream",
  .init = stream_init,
  .fini = stream_fini,
  .schedule = stream_schedule,
  .admit = stream_admit,
  .target_bytes = stream_target,
  .on_cluster_change = stream_cluster_change,
  .on_task_failed = stream_task_failed,
  .on_emitted = sl__static_emitted,
  .tick = stream_tick,
  .wakeup = stream_wakeup,
};
