/*
 * The all-to-all's machinery: how the rows and bytes of a partition are
 * dealt to a shuffle's reducer shares (share_rows(), sl__share_fraction()),
 * when an all-to-all operator may make tasks, and the tasks it makes: the
 * reducers at the barrier, each reading its share of every input (swept
 * over the queue, placed where a push merged their blocks), and a merge
 * stage's tasks over a group of inputs (Riffle's merge, Magnet's push).
 * Apart from the mechanics of core.c because it is one operator kind's
 * own arithmetic: the rest of the core sees tasks with inputs and shares.
 */
#include "core_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "error.h"

/* Where shares [lo, hi) of @p shares fall in partition @p p: the shares it
 * holds, [*plo, *phi) (every one unless a merge stage made it), and the
 * part of them asked for, [*a, *b) (empty when *b <= *a). */
typedef struct {
  int64_t plo, phi, a, b;
} share_overlap;

static share_overlap overlap_of(const sl__part *p, int64_t lo, int64_t hi, int64_t shares)
{
  bool ranged = p->range_hi > p->range_lo;
  share_overlap o = {.plo = ranged ? p->range_lo : 0, .phi = ranged ? p->range_hi : shares};
  o.a = lo > o.plo ? lo : o.plo;
  o.b = hi < o.phi ? hi : o.phi;
  return o;
}

/* What part of partition @p p the shares [lo, hi) of @p shares hold: all of
 * it outside a shuffle; a reducer's block of an input that holds every
 * share; all of a merged partition holding only that reducer's shares. */
double sl__share_fraction(const sl__part *p, int64_t lo, int64_t hi, int64_t shares)
{
  if (shares <= 1)
    return 1;
  share_overlap o = overlap_of(p, lo, hi, shares);
  return o.b > o.a ? (double)(o.b - o.a) / (double)(o.phi - o.plo) : 0;
}

/* Positions in [0, @p n) whose turn, dealing to @p w shares in order, is
 * one of [@p u, @p v). */
static int64_t dealt(int64_t n, int64_t w, int64_t u, int64_t v)
{
  int64_t rest = n % w - u;
  return n / w * (v - u) + (rest < 0 ? 0 : rest < v - u ? rest : v - u);
}

/*
 * Rows of @p p in shares [lo, hi) of @p shares. The rows its operator made
 * are dealt to the shares it holds in turn, as a stream (share_off is
 * where @p p's begin): every share then gets its part of the whole to a
 * row, as a kernel that shares rows by id (the default) does, whatever
 * the partitions' sizes. Drawing each partition's cut apart gave shares of
 * 17 and 32 rows of 96 where each has 24, and the largest set the JCT.
 * Cumulative, so the tasks that split a partition's shares between them
 * count every row of it once.
 */
static int64_t share_rows(const sl__part *p, int64_t lo, int64_t hi, int64_t shares)
{
  if (shares <= 1)
    return p->rows;
  share_overlap o = overlap_of(p, lo, hi, shares);
  if (o.b <= o.a)
    return 0;
  int64_t w = o.phi - o.plo, u = o.a - o.plo, v = o.b - o.plo;
  return dealt(p->share_off + p->rows, w, u, v) - dealt(p->share_off, w, u, v);
}

/* Whether partition @p p holds reducer share @p r. */
static bool holds_share(const sl__part *p, int64_t r)
{
  return p->range_hi <= p->range_lo || (r >= p->range_lo && r < p->range_hi);
}

/* A task of all-to-all @p op reading shares [lo, hi) of @p shares of the
 * @p n inputs @p in that hold any of them; its rows and bytes are its
 * part of theirs. Joins the retry queue unless it is the first made
 * (*first). False out of memory. */
static bool share_task(sl_core *c, int op, const sl_part_id *in, int n, int64_t lo, int64_t hi, int64_t shares,
                       int home, sl_task_id *first)
{
  sl_task_id id = sl__task_new(c, op, in, n, -1);
  if (id == SL_NONE)
    return false;
  sl__task *t = &c->tasks[id];
  int64_t rows = 0;
  double bytes = 0;
  for (int k = 0; k < n; k++) {
    rows += share_rows(&c->parts[in[k]], lo, hi, shares);
    bytes += c->parts[in[k]].bytes * sl__share_fraction(&c->parts[in[k]], lo, hi, shares);
  }
  t->rows = rows;
  t->bytes = bytes;
  t->share = (int32_t)lo;
  t->share_end = (int32_t)hi;
  t->home = home;
  for (int k = 0; k < n; k++) {
    sl__part *p = &c->parts[in[k]];
    if (p->consumer == SL_NONE)
      p->consumer = id;
    p->refs++;
  }
  if (*first == SL_NONE)
    *first = id;
  else
    sl__enqueue_id(c, &c->ops[op].retryq, id);
  return true;
}

/* Takes the whole input queue of @p op (@p n partitions) into @p all. */
static void take_queue(sl_core *c, int op, sl_part_id *all, uint32_t n)
{
  sl__op *s = &c->ops[op];
  for (uint32_t k = 0; k < n; k++) {
    all[k] = sl__idq_pop(&s->inq);
    c->parts[all[k]].in_queue = 0;
    c->parts[all[k]].refs = 0; /* counted again by the tasks that read it */
    c->parts[all[k]].consumer = SL_NONE;
  }
  s->in_queue_bytes = 0;
}

/* How many merged partitions a push merge stage @p op makes of each group
 * (one per node, no more than the reducers), 1 for merge. */
static int64_t merge_parts(const sl_core *c, int op, int64_t reducers)
{
  const sl_pop *o = &c->plan->ops[op];
  int64_t parts = o->tasks > 0 ? o->tasks : c->nnodes;
  return parts < reducers ? parts : reducers;
}

/* The node a push's merged part @p w of @p parts goes to. */
static int part_home(const sl_core *c, int64_t w, int64_t parts)
{
  return (int)(w * c->nnodes / parts);
}

/* A sweep of an all-to-all's reducers, r upwards, over its queued inputs:
 * each reducer's are those that hold every share and the merged ones whose
 * range covers r. Linear in what the reducers read, where testing every
 * input for every reducer was R x n: 25,000 reducers by 50,000 merged
 * parts at 100 TB. */
typedef struct {
  uint32_t *first_at; /* [reducers]: queue position of the first range to begin there, UINT32_MAX none */
  uint32_t *next;     /* [n]: the next position whose range begins at the same reducer */
  uint32_t *active, *merged;
  uint32_t nactive;
} reducer_sweep;

/* Reducer @p r's inputs among the queued ones @p all, in queue order, into
 * @p mine; called for r = 0, 1, ... in turn (the sweep keeps the ranges
 * that have begun). Returns how many. */
static int reducer_inputs(const sl_core *c, const sl_part_id *all, reducer_sweep *sw, int64_t r, sl_part_id *mine)
{
  uint32_t kept = 0;
  for (uint32_t i = 0; i < sw->nactive; i++) { /* drop the ranges that ended */
    const sl__part *p = &c->parts[all[sw->active[i]]];
    if (holds_share(p, r))
      sw->active[kept++] = sw->active[i];
  }
  uint32_t a = 0, m = 0, b = sw->first_at[r];
  while (a < kept || b != UINT32_MAX) { /* the ranges that begin here, merged in queue order */
    if (b == UINT32_MAX || (a < kept && sw->active[a] < b))
      sw->merged[m++] = sw->active[a++];
    else {
      sw->merged[m++] = b;
      b = sw->next[b];
    }
  }
  uint32_t *t = sw->active;
  sw->active = sw->merged;
  sw->merged = t;
  sw->nactive = m;
  for (uint32_t i = 0; i < m; i++)
    mine[i] = all[sw->active[i]];
  return (int)m;
}

/* Room for a sweep over @p reducers of @p n inputs; false out of memory. */
static bool reducer_sweep_alloc(reducer_sweep *sw, uint32_t n, int64_t reducers)
{
  sw->first_at = malloc(sizeof *sw->first_at * (size_t)reducers);
  sw->next = malloc(sizeof *sw->next * (n ? n : 1));
  sw->active = malloc(sizeof *sw->active * (n ? n : 1));
  sw->merged = malloc(sizeof *sw->merged * (n ? n : 1));
  sw->nactive = 0;
  return sw->first_at && sw->next && sw->active && sw->merged;
}

/* Chains every queued input by the first reducer whose share it holds
 * (0 for those that hold all). */
static void reducer_sweep_chain(const sl_core *c, const sl_part_id *all, uint32_t n, int64_t reducers,
                                reducer_sweep *sw)
{
  for (int64_t r = 0; r < reducers; r++)
    sw->first_at[r] = UINT32_MAX;
  for (uint32_t k = n; k-- > 0;) { /* backwards, so each chain runs in queue order */
    const sl__part *p = &c->parts[all[k]];
    int64_t lo = p->range_hi > p->range_lo ? p->range_lo : 0;
    if (lo < 0)
      lo = 0;
    if (lo >= reducers || (p->range_hi > p->range_lo && p->range_hi <= lo))
      continue; /* holds no reducer's share */
    sw->next[k] = sw->first_at[lo];
    sw->first_at[lo] = k;
  }
}

static void reducer_sweep_free(reducer_sweep *sw)
{
  free(sw->first_at);
  free(sw->next);
  free(sw->active);
  free(sw->merged);
}

/* The node reducer @p r of @p reducers runs on after a push merge stage:
 * where its share's part was merged (the last part whose first share is
 * at or before r); -1 after any other stage. */
static int push_home(const sl_core *c, int op, int64_t r, int64_t reducers)
{
  if (op == 0 || !c->plan->ops[op - 1].merge_stage || c->plan->ops[op - 1].tasks > 0)
    return -1;
  int64_t parts = merge_parts(c, op - 1, reducers);
  if (parts <= 0)
    return -1;
  /* part w begins at floor(w * reducers / parts): the last w with that at
   * or before r is the largest w with w * reducers < (r + 1) * parts */
  int64_t w = ((r + 1) * parts - 1) / reducers;
  return part_home(c, w < parts - 1 ? w : parts - 1, parts);
}

sl_task_id sl__make_reducers(sl_core *c, int op)
{
  uint32_t n = sl__idq_len(&c->ops[op].inq);
  int64_t reducers = c->plan->ops[op].tasks > 0 ? c->plan->ops[op].tasks : 1;
  sl_part_id *all = malloc(sizeof *all * (n ? n : 1)), *mine = malloc(sizeof *mine * (n ? n : 1));
  reducer_sweep sw = {0};
  if (!all || !mine || !reducer_sweep_alloc(&sw, n, reducers)) {
    free(all);
    free(mine);
    reducer_sweep_free(&sw);
    sl__push_fail(c, SL_ENOMEM);
    return SL_NONE;
  }
  take_queue(c, op, all, n);
  reducer_sweep_chain(c, all, n, reducers, &sw);
  sl_task_id first = SL_NONE;
  for (int64_t r = 0; r < reducers; r++) {
    /* after a push, a reducer runs where its blocks were merged: run
     * anywhere, the first eighty of 2,000 all read one node's disk */
    int home = push_home(c, op, r, reducers);
    int m = reducer_inputs(c, all, &sw, r, mine); /* a merged partition holds some reducers' shares only */
    if (m == 0 && n > 0)
      mine[m++] = all[0]; /* a reducer with no rows still runs: its share of the output is empty */
    if (!share_task(c, op, mine, m, r, r + 1, reducers, home, &first))
      break;
  }
  reducer_sweep_free(&sw);
  free(all);
  free(mine);
  return first;
}

/* The node whose queued inputs of @p op make a merge group first: the
 * oldest input's when it has merge_inputs of them, else any node that
 * has; -1 when none has. */
static int merge_group_node(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  int need = c->plan->ops[op].merge_inputs;
  uint32_t n = sl__idq_len(&s->inq), window = n < 4096 ? n : 4096;
  int *count = c->merge_count;
  for (int k = 0; k < c->nnodes; k++)
    count[k] = 0;
  for (uint32_t k = 0; k < window; k++) {
    int node = c->parts[sl__idq_at(&s->inq, k)].node;
    if (node >= 0 && node < c->nnodes && ++count[node] >= need)
      return node;
  }
  return -1;
}

bool sl__all_to_all_ready(const sl_core *c, int op)
{
  const sl__op *s = &c->ops[op];
  const sl_pop *o = &c->plan->ops[op];
  if (sl__idq_empty(&s->inq))
    return false;
  if (!o->merge_stage || sl__op_drained(c, op - 1))
    return sl__op_drained(c, op - 1);
  if (o->strategy == SL_SHUFFLE_MERGE) /* Riffle merges a node's own outputs */
    return merge_group_node(c, op) >= 0;
  return sl__idq_len(&s->inq) >= (uint32_t)o->merge_inputs;
}

/* The merge stage's next group: merge_inputs queued inputs (those of one
 * node for merge), or the last ones. */
static int take_merge_group(sl_core *c, int op, sl_part_id *group)
{
  sl__op *s = &c->ops[op];
  const sl_pop *o = &c->plan->ops[op];
  int node = o->strategy == SL_SHUFFLE_MERGE ? merge_group_node(c, op) : -1;
  uint32_t len = sl__idq_len(&s->inq), window = len < 4096 ? len : 4096;
  int n = 0;
  for (uint32_t k = 0; k < window && n < o->merge_inputs; k++) {
    sl_part_id pid = sl__idq_at(&s->inq, k);
    sl__part *p = &c->parts[pid];
    if (node >= 0 && p->node != node)
      continue;
    group[n++] = pid;
    p->in_queue = 0;
    p->refs = 0;
    p->consumer = SL_NONE;
    s->in_queue_bytes -= p->bytes;
  }
  sl__idq_filter_head(&s->inq, window, sl__taken, c);
  return n;
}

static sl_task_id make_mergers(sl_core *c, int op)
{
  const sl_pop *o = &c->plan->ops[op];
  sl_part_id group[SL_MAX_MERGE];
  int n = take_merge_group(c, op, group);
  if (n == 0)
    return SL_NONE;
  int64_t reducers = op + 1 < c->nops && c->plan->ops[op + 1].tasks > 1 ? c->plan->ops[op + 1].tasks : 1;
  /* push: one merged partition per node, holding the shares of the
   * reducers it will run (push_home()) */
  int64_t parts = merge_parts(c, op, reducers);
  sl_task_id first = SL_NONE;
  for (int64_t w = 0; w < parts; w++) {
    int64_t lo = w * reducers / parts, hi = (w + 1) * reducers / parts;
    int home = o->tasks > 0 ? -1 : part_home(c, w, parts);
    if (hi > lo && !share_task(c, op, group, n, parts > 1 ? lo : 0, parts > 1 ? hi : reducers, reducers, home, &first))
      break;
  }
  return first;
}

sl_task_id sl__make_all_to_all(sl_core *c, int op)
{
  return c->plan->ops[op].merge_stage ? make_mergers(c, op) : sl__make_reducers(c, op);
}
