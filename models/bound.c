/**
 * @file bound.c
 * @brief The throughput bound as a linear program, after Plumber and
 *        StarPU's starpu_bound_compute (performance-anchors §B4).
 *
 * Variables: X, source rows per second, and x[i][g] >= 0, the source rows per
 * second whose operator-i work runs on node group g. Identical nodes of a
 * group share one variable: the program is convex and symmetric in them, so
 * any optimum splits evenly and the per-node constraints read the same with
 * the group's capacity multiplied by its node count.
 *
 *   maximise X subject to
 *   (flow)        for each operator i:  sum_g x[i][g] = X
 *   (slots)       for each group g and class k in {CPU, GPU}:
 *                   sum_i x[i][g] * d[i][g] * e_k[i][g] <= count_g * slots_k,g
 *   (concurrency) for each operator i with a cap:  sum_g x[i][g] * d[i][g] <= cap_i
 *   (storage)     X * read_bytes_per_row <= storage_bps, and, the other way
 *                 (split duplex), X * upload_bytes <= storage_bps for a sink
 *                 that writes to storage
 *
 * d[i][g] = w_i / speed_g: task-seconds per source row on a node of g, where
 * w_i is the least time at speed 1 per source row that any model's tasks
 * reach (sl_plan_least_work_per_source_row: per-task costs amortised over
 * the largest task an engine forms, per-batch costs over full batches).
 * Amortised over a typical task instead, the area charged a map 16-row
 * tasks' fixed costs where streaming gathered 256 rows a task, and the run
 * beat its bound by 1.8% (zoo seed 3 case 135). The policies size their
 * shares by typical tasks (model_build's @p typical), the work their own
 * tasks do. An operator's speed is that of its class, GPU when it requests
 * a GPU. e_k is the share of class-k slots one task
 * occupies: slots / floor(slots / req) for req > 0, else 0. Slots are whole
 * on a real node, so a 0.99-CPU task on 8 CPUs still leaves only 8 running
 * at once: it occupies one slot (the paper's Fig. 9 bound of 150 s). Read
 * per group, the constraint says the node is time-shared between operators,
 * each running floor(slots/req) tasks while it holds the node. That is exact
 * when one shape fills a node; when operators of different fractional
 * shapes share one, it charges gaps an integer packing could fill, so the
 * throughput bound can there be a little below the true limit.
 *
 * An operator pinned to accelerators (sl_pop.accel) has x[i][g] fixed at 0
 * on every group whose label is not among them, as for a group it does not
 * fit: its work can only move to the groups it may run on.
 *
 * A GPU operator that also requests CPUs charges both classes for the same
 * task time.
 *
 *   (network)     for each group g with a NIC limit, each way:
 *                   in:  X_g read_bytes + sum_i y_in[i][g] in_bytes_i <= count_g * nic_g
 *                   out: x[last][g] upload_bytes + sum_i y_out[i][g] out_bytes_i <= count_g * nic_g
 *                 y_in[i][g] >= x[i][g] - x[i-1][g], y_out[i][g] >= x[i][g] - x[i+1][g]
 *   (backbone)    where it binds: X read_bytes + sum_i,g y_in[i][g] in_bytes_i <= backbone
 *
 * Only transfers no placement avoids are charged: work of operator i on g
 * beyond what operator i-1 makes on g must have received its input, and
 * all of it when i-1 cannot run on g (a GPU-only node under a CPU stage).
 * The program picks the placement that moves least, so the bound stays
 * below any schedule's; a real run on one machine moves no bytes over
 * NICs, so only a simulation is held to this part.
 *
 * A task holds its slot while it receives, so with the network modelled
 * the slots and caps rows also charge, per source row, the least time the
 * unavoidable transfers take: y_in[i][g] in_bytes_i / nic_g (one transfer
 * at most at the node's NIC speed) and, for a source, its reads at the
 * slower of the storage link and the NIC.
 *
 * The bottleneck is the class (CPU, GPU, storage, concurrency caps) whose
 * constraints alone allow the least throughput, and within it the operator
 * using the most of it at the optimum.
 */
#include "bound.h"

#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

enum { CLS_CPU, CLS_GPU, CLS_STORAGE, CLS_NET, CLS_CONC, CLS_N };

static const char *const class_name[CLS_N] = {"CPU", "GPU", "storage", "network", "concurrency"};

/* Everything the program needs, derived from the plan and the cluster. */
typedef struct {
  int nops, ngroups;
  double count[SL_MAX_GROUPS];             /* nodes per group */
  double slots[SL_MAX_GROUPS][2];          /* per node, CPU and GPU */
  double d[SL_MAX_OPS][SL_MAX_GROUPS];     /* task-seconds per source row */
  double e[SL_MAX_OPS][SL_MAX_GROUPS][2];  /* slots one task occupies */
  double speed[SL_MAX_OPS][SL_MAX_GROUPS]; /* of the operator's class */
  bool fits[SL_MAX_OPS][SL_MAX_GROUPS];
  double in_bytes[SL_MAX_OPS];             /* input bytes per source row (0 for the source) */
  double out_bytes[SL_MAX_OPS];            /* output bytes per source row */
  double read_bytes;                       /* storage bytes per source row */
  double upload_bytes;                     /* bytes per source row the sink uploads to storage */
  double nic[SL_MAX_GROUPS];               /* bytes per second each way, per node; 0: no limit */
  double storage_bps;                      /* the storage link; 0: no limit */
} bound_model;

static const double SLOT_EPS = 1e-9;

/* Tasks of request @p req that fit at once in @p slots (0 when none do). */
static double tasks_fit(double slots, double req)
{
  return floor(slots / req + SLOT_EPS);
}

/* A speed left at 0 by a spec means "not given": the cost model's speed 1. */
static double group_speed(const sl_node_group *g, bool gpu)
{
  double s = gpu ? g->gpu_speed : g->cpu_speed;
  return s > 0 ? s : 1.0;
}

/* An expanded node list is the truth (a lost node may be gone from it);
 * before expansion the groups' counts are. */
static void count_nodes(const sl_cluster *c, double count[SL_MAX_GROUPS])
{
  bool expanded = c->nodes && c->nnodes > 0;

  for (int g = 0; g < c->ngroups; g++)
    count[g] = expanded || c->groups[g].count < 0 ? 0.0 : c->groups[g].count;
  for (int n = 0; expanded && n < c->nnodes; n++)
    if (c->nodes[n].group >= 0 && c->nodes[n].group < c->ngroups)
      count[c->nodes[n].group] += 1.0;
}

/* Share of one class's slots a task takes on a node; false if it cannot fit. */
static bool slot_share(double slots, double req, double *share)
{
  *share = 0.0;
  if (req <= 0)
    return true;
  double k = tasks_fit(slots, req);
  if (k < 1)
    return false;
  *share = slots / k;
  return true;
}

/* With @p typical, each task's work is a typical task's (what a policy's
 * tasks take, which it sizes its shares by); else the least any model's
 * tasks reach (what a lower bound may charge). */
static int model_build(bound_model *m, const sl_plan *p, const sl_cluster *c, bool typical)
{
  memset(m, 0, sizeof(*m));
  m->nops = p->nops;
  m->ngroups = c->ngroups;
  count_nodes(c, m->count);
  for (int g = 0; g < m->ngroups; g++) {
    m->slots[g][CLS_CPU] = c->groups[g].cpu;
    m->slots[g][CLS_GPU] = c->groups[g].gpu;
  }
  for (int g = 0; g < m->ngroups; g++)
    m->nic[g] = c->groups[g].nic_bps > 0 ? c->groups[g].nic_bps : 0;
  m->read_bytes = c->storage_bps > 0 && !p->source_from_disk ? p->ops[0].read_bytes_per_row : 0;
  m->storage_bps = c->storage_bps > 0 ? c->storage_bps : 0;
  m->upload_bytes = c->storage_bps > 0 && p->sink_to_storage ? p->ops[p->nops - 1].alpha_rows * p->ops[p->nops - 1].out_row_bytes : 0;
  for (int i = 0; i < m->nops; i++) {
    const sl_pop *o = &p->ops[i];
    m->out_bytes[i] = o->alpha_rows * o->out_row_bytes;
    m->in_bytes[i] = i > 0 ? m->out_bytes[i - 1] : 0;
    double w = typical ? sl_plan_work_per_source_row(p, i) : sl_plan_least_work_per_source_row(p, i);
    bool anywhere = false;
    for (int g = 0; g < m->ngroups; g++) {
      bool ok = m->count[g] > 0 && sl_group_allows(&c->groups[g], &o->accel) &&
                slot_share(m->slots[g][CLS_CPU], o->cpu, &m->e[i][g][CLS_CPU]) &&
                slot_share(m->slots[g][CLS_GPU], o->gpu, &m->e[i][g][CLS_GPU]);
      m->fits[i][g] = ok;
      m->speed[i][g] = group_speed(&c->groups[g], o->gpu > 0);
      m->d[i][g] = w / m->speed[i][g];
      anywhere = anywhere || ok;
    }
    if (!anywhere)
      return SL_EUNSAT;
  }
  return 0;
}

static int col_x(const bound_model *m, int i, int g)
{
  return 2 + i * m->ngroups + g;
}

/* y_in[i][g]: the part of x[i][g] whose input was made on another node
 * (at least x[i][g] - x[i-1][g]); y_out[i][g]: the part of x[i][g] whose
 * output is used on another node (at least x[i][g] - x[i+1][g]). */
static int col_y_in(const bound_model *m, int i, int g)
{
  return 2 + (m->nops + i) * m->ngroups + g;
}

static int col_y_out(const bound_model *m, int i, int g)
{
  return 2 + (2 * m->nops + i) * m->ngroups + g;
}

static int ncols(const bound_model *m)
{
  return 1 + 3 * m->nops * m->ngroups;
}

/* Adds row "sum val[k] * col[k] (<= 1 | = 0)"; idx and val are 1-based. */
static void add_row(glp_prob *lp, int n, const int *idx, const double *val, bool equality)
{
  int r = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, r, equality ? GLP_FX : GLP_UP, 0.0, equality ? 0.0 : 1.0);
  glp_set_mat_row(lp, r, n, idx, val);
}

static void add_flow_rows(glp_prob *lp, const bound_model *m, int *idx, double *val)
{
  for (int i = 0; i < m->nops; i++) {
    int n = 0;
    idx[++n] = 1;
    val[n] = -1.0;
    for (int g = 0; g < m->ngroups; g++) {
      idx[++n] = col_x(m, i, g);
      val[n] = 1.0;
    }
    add_row(lp, n, idx, val, true);
  }
}

/* Seconds per source row that a task of operator @p i on a node of group
 * @p g at least spends receiving: a source its reads, which cross the
 * node's NIC from the storage link, no faster than the slower of the two;
 * another operator the input that was made on another node (the y_in part
 * of its work), no faster than the node's NIC. A task holds its slot while
 * it receives (both engines charge transfers inside the attempt), so with
 * the network modelled these seconds count against slots and caps too: an
 * operator capped at 8 tasks whose 11 MB inputs crossed 100 Mbps NICs ran
 * at a third of the bound that left them out (zoo case 49). */
static double read_s(const bound_model *m, int i, int g)
{
  if (i != 0 || !(m->read_bytes > 0) || !(m->storage_bps > 0))
    return 0;
  double link = m->nic[g] > 0 ? fmin(m->storage_bps, m->nic[g]) : m->storage_bps;
  return m->read_bytes / link;
}

static double receive_s(const bound_model *m, int i, int g)
{
  return i > 0 && m->in_bytes[i] > 0 && m->nic[g] > 0 ? m->in_bytes[i] / m->nic[g] : 0;
}

/* Capacity rows are scaled to a right-hand side of 1 so GLPK sees
 * coefficients of like magnitude whether the resource is bytes or slots
 * (and glp_scale_prob, which prints, is not needed). With @p transfers,
 * the time spent receiving holds the slot too. */
static void add_slot_rows(glp_prob *lp, const bound_model *m, int k, bool transfers, int *idx, double *val)
{
  for (int g = 0; g < m->ngroups; g++) {
    double cap = m->count[g] * m->slots[g][k];
    int n = 0;
    for (int i = 0; i < m->nops && cap > 0; i++) {
      if (!m->fits[i][g] || !(m->e[i][g][k] > 0))
        continue;
      double coef = (m->d[i][g] + (transfers ? read_s(m, i, g) : 0)) * m->e[i][g][k];
      if (coef > 0) {
        idx[++n] = col_x(m, i, g);
        val[n] = coef / cap;
      }
      double recv = transfers ? receive_s(m, i, g) * m->e[i][g][k] : 0;
      if (recv > 0) {
        idx[++n] = col_y_in(m, i, g);
        val[n] = recv / cap;
      }
    }
    if (n > 0)
      add_row(lp, n, idx, val, false);
  }
}

/* Tasks in flight = task-seconds started per second; a cap bounds them. */
static void add_concurrency_rows(glp_prob *lp, const bound_model *m, const sl_plan *p, bool transfers,
                                 int *idx, double *val)
{
  for (int i = 0; i < m->nops; i++) {
    int n = 0;
    double cap = p->ops[i].concurrency;
    for (int g = 0; g < m->ngroups && cap > 0; g++) {
      if (!m->fits[i][g])
        continue;
      double busy = m->d[i][g] + (transfers ? read_s(m, i, g) : 0);
      if (busy > 0) {
        idx[++n] = col_x(m, i, g);
        val[n] = busy / cap;
      }
      double recv = transfers ? receive_s(m, i, g) : 0;
      if (recv > 0) {
        idx[++n] = col_y_in(m, i, g);
        val[n] = recv / cap;
      }
    }
    if (n > 0)
      add_row(lp, n, idx, val, false);
  }
}

static void add_storage_row(glp_prob *lp, const bound_model *m, const sl_plan *p, const sl_cluster *c, int *idx,
                            double *val)
{
  double rb = p->source_from_disk ? 0 : p->ops[0].read_bytes_per_row;
  if (rb > 0 && c->storage_bps > 0) {
    idx[1] = 1;
    val[1] = rb / c->storage_bps;
    add_row(lp, 1, idx, val, false);
  }
  if (m->upload_bytes > 0) { /* uploads take the link's other direction */
    idx[1] = 1;
    val[1] = m->upload_bytes / c->storage_bps;
    add_row(lp, 1, idx, val, false);
  }
}

static void add_cols(glp_prob *lp, const bound_model *m)
{
  glp_add_cols(lp, ncols(m));
  glp_set_col_bnds(lp, 1, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp, 1, 1.0);
  for (int i = 0; i < m->nops; i++)
    for (int g = 0; g < m->ngroups; g++) {
      glp_set_col_bnds(lp, col_x(m, i, g), m->fits[i][g] ? GLP_LO : GLP_FX, 0.0, 0.0);
      glp_set_col_bnds(lp, col_y_in(m, i, g), i > 0 && m->fits[i][g] ? GLP_LO : GLP_FX, 0.0, 0.0);
      glp_set_col_bnds(lp, col_y_out(m, i, g), i + 1 < m->nops && m->fits[i][g] ? GLP_LO : GLP_FX, 0.0, 0.0);
    }
}

/* "y - x[i][g] + x[j][g] >= 0": y is at least the work on g whose partner
 * work (the producer j = i - 1, or the consumer j = i + 1) is not on g. */
static void add_imbalance_row(glp_prob *lp, const bound_model *m, int y, int i, int j, int g)
{
  int idx[4] = {0, y, col_x(m, i, g), col_x(m, j, g)};
  double val[4] = {0, 1.0, -1.0, 1.0};
  int r = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, r, GLP_LO, 0.0, 0.0);
  glp_set_mat_row(lp, r, 3, idx, val);
}

/* Bytes a node must receive and send over its NIC (each way, as the
 * simulator's split-duplex links carry them). Work whose input was made
 * on another node received it; a group an operator's producer cannot run
 * on (a GPU-only node under a CPU map) receives all of it; the source's
 * storage reads come in over the NIC too. Per group, the nodes of a group
 * summed: a relaxation of the per-node limits, so still a lower bound. */
static void add_nic_rows(glp_prob *lp, const bound_model *m, int *idx, double *val)
{
  for (int g = 0; g < m->ngroups; g++) {
    double cap = m->count[g] * m->nic[g];
    if (!(cap > 0))
      continue;
    int n = 0;
    if (m->read_bytes > 0 && m->fits[0][g]) {
      idx[++n] = col_x(m, 0, g);
      val[n] = m->read_bytes / cap;
    }
    for (int i = 1; i < m->nops; i++)
      if (m->fits[i][g] && m->in_bytes[i] > 0) {
        add_imbalance_row(lp, m, col_y_in(m, i, g), i, i - 1, g);
        idx[++n] = col_y_in(m, i, g);
        val[n] = m->in_bytes[i] / cap;
      }
    if (n > 0)
      add_row(lp, n, idx, val, false);
    n = 0;
    if (m->upload_bytes > 0 && m->fits[m->nops - 1][g]) { /* what the sink uploads leaves where it was made */
      idx[++n] = col_x(m, m->nops - 1, g);
      val[n] = m->upload_bytes / cap;
    }
    for (int i = 0; i + 1 < m->nops; i++)
      if (m->fits[i][g] && m->out_bytes[i] > 0) {
        add_imbalance_row(lp, m, col_y_out(m, i, g), i, i + 1, g);
        idx[++n] = col_y_out(m, i, g);
        val[n] = m->out_bytes[i] / cap;
      }
    if (n > 0)
      add_row(lp, n, idx, val, false);
  }
}

/* Where a backbone binds (sl_cluster_backbone_binds()), every byte between
 * two hosts crosses it: the storage reads, and the transfers no placement
 * avoids. (add_nic_rows() has already tied y_in to the work where a group
 * has a NIC limit; elsewhere the tie is added here.) */
static void add_backbone_row(glp_prob *lp, const bound_model *m, const sl_cluster *c, int *idx, double *val)
{
  if (!sl_cluster_backbone_binds(c))
    return;
  double cap = c->backbone_bps;
  int n = 0;
  if (m->read_bytes + m->upload_bytes > 0) { /* one backbone both ways */
    idx[++n] = 1;
    val[n] = (m->read_bytes + m->upload_bytes) / cap;
  }
  for (int i = 1; i < m->nops; i++)
    for (int g = 0; g < m->ngroups; g++)
      if (m->fits[i][g] && m->in_bytes[i] > 0) {
        if (!(m->count[g] * m->nic[g] > 0))
          add_imbalance_row(lp, m, col_y_in(m, i, g), i, i - 1, g);
        idx[++n] = col_y_in(m, i, g);
        val[n] = m->in_bytes[i] / cap;
      }
  if (n > 0)
    add_row(lp, n, idx, val, false);
}

/* The problem with the limits of the classes in @p mask (bits 1 << CLS_*). */
static glp_prob *lp_build(const bound_model *m, const sl_plan *p, const sl_cluster *c,
                          unsigned mask, int *idx, double *val)
{
  glp_prob *lp = glp_create_prob();

  glp_set_obj_dir(lp, GLP_MAX);
  add_cols(lp, m);
  add_flow_rows(lp, m, idx, val);
  /* the transfers that hold slots are those the network rows force */
  bool transfers = (mask & (1u << CLS_NET)) != 0;
  for (int k = CLS_CPU; k <= CLS_GPU; k++)
    if (mask & (1u << k))
      add_slot_rows(lp, m, k, transfers, idx, val);
  if (mask & (1u << CLS_CONC))
    add_concurrency_rows(lp, m, p, transfers, idx, val);
  if (mask & (1u << CLS_STORAGE))
    add_storage_row(lp, m, p, c, idx, val);
  if (mask & (1u << CLS_NET)) {
    add_nic_rows(lp, m, idx, val);
    add_backbone_row(lp, m, c, idx, val);
  }
  return lp;
}

/* Solves @p lp; an unbounded X (nothing limits it) reads as infinity.
 * Where the simplex finds no optimum, it tries again on the program scaled
 * and presolved: costs of a tenth of a microsecond a row over a million
 * rows (a groupby's calibrated source, 1.5e-7 s a row) leave coefficients
 * the unscaled simplex cannot pivot on, and it calls the program unbounded.
 * Programs that solve as they are keep their exact solution. */
static int lp_solve(glp_prob *lp, double *x)
{
  glp_smcp parm;

  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  int st = glp_simplex(lp, &parm) == 0 ? glp_get_status(lp) : GLP_UNDEF;
  if (st != GLP_OPT) {
    int out = glp_term_out(GLP_OFF); /* the scaler reports on stdout otherwise */
    glp_scale_prob(lp, GLP_SF_AUTO);
    glp_term_out(out);
    parm.presolve = GLP_ON;
    int rc = glp_simplex(lp, &parm);
    if (rc == GLP_ENODFS) { /* the presolver's word for unbounded */
      *x = INFINITY;
      return 0;
    }
    if (rc != 0)
      return SL_ELP;
  }
  switch (glp_get_status(lp)) {
  case GLP_OPT:
    *x = glp_get_col_prim(lp, 1);
    return 0;
  case GLP_UNBND:
    *x = INFINITY;
    return 0;
  default:
    return SL_ELP;
  }
}

/* Slot-seconds per second operator @p i uses in class @p k at the optimum
 * (for the concurrency class: the share of its cap in use; for the
 * network: the bytes per second its work moves over NICs). */
static double op_load(glp_prob *lp, const bound_model *m, const sl_plan *p, int i, int k)
{
  double load = 0.0;
  for (int g = 0; g < m->ngroups && k == CLS_NET; g++)
    load += glp_get_col_prim(lp, col_y_in(m, i, g)) * m->in_bytes[i] +
            glp_get_col_prim(lp, col_y_out(m, i, g)) * m->out_bytes[i];
  if (k == CLS_NET)
    return load;
  for (int g = 0; g < m->ngroups; g++) {
    double x = glp_get_col_prim(lp, col_x(m, i, g));
    load += x * m->d[i][g] * (k == CLS_CONC ? 1.0 : m->e[i][g][k]);
  }
  if (k == CLS_CONC)
    return p->ops[i].concurrency > 0 ? load / p->ops[i].concurrency : 0.0;
  return load;
}

/* Duals are not unique when two limits coincide (a GPU actor pool capped at
 * the GPU count), so the class is named by relaxation instead: the class
 * whose limits alone allow the least throughput. Ties go to the earlier
 * class, so a physical resource wins over a cap that merely matches it. */
static int bottleneck_class(const bound_model *m, const sl_plan *p, const sl_cluster *c,
                            int *idx, double *val, int *cls)
{
  double least = INFINITY;

  *cls = CLS_CPU;
  for (int k = 0; k < CLS_N; k++) {
    glp_prob *lp = lp_build(m, p, c, 1u << k, idx, val);
    double x = INFINITY;
    int rc = lp_solve(lp, &x);
    glp_delete_prob(lp);
    if (rc)
      return rc;
    if (x < least * (1 - 1e-9)) {
      least = x;
      *cls = k;
    }
  }
  return 0;
}

static void name_bottleneck(glp_prob *lp, const bound_model *m, const sl_plan *p, int cls,
                            sl_bound *out)
{
  double most = -1.0;

  snprintf(out->bottleneck, sizeof(out->bottleneck), "%s", class_name[cls]);
  out->bottleneck_op = 0; /* storage: the source reads */
  for (int i = 0; i < m->nops && cls != CLS_STORAGE; i++) {
    double load = op_load(lp, m, p, i, cls);
    if (load > most) {
      most = load;
      out->bottleneck_op = i;
    }
  }
}

/* The fastest speed operator @p i runs at, 0 when it fits nowhere. */
static double fastest_speed(const bound_model *m, int i)
{
  double fastest = 0;
  for (int g = 0; g < m->ngroups; g++)
    if (m->fits[i][g])
      fastest = fmax(fastest, m->speed[i][g]);
  return fastest;
}

/* The least time the job can take whatever the schedule: one whole source
 * task (a source reads its split in one task, and its last rows leave at
 * its end), then, for every operator after it, the least work a task of it
 * can be given, one row (a partition may be cut that small, and a batch
 * operator may get a partial batch), each on the fastest node that may run
 * it, up to a filter, whose output of the last rows may be empty; an
 * operator whose task times spread counts its set-up alone. A
 * typical task instead is no lower bound: a map_batches operator charged a
 * full batch it never receives made runs beat the bound. Nor is a source
 * row's whole expansion: the 16 rows a map makes of one may go to 16
 * tasks at once, and a run ended in 245.7 s where the path said 267.0 s
 * (zoo seed 7 case 124: 16 rows of a 1 -> 16 map through three GPU
 * operators). An operator's set-up (time_setup) delays the row only as far as
 * the set-up itself reaches: a slot may set the operator up from the
 * job's start, while the operators before it work, so the row goes on at
 * the later of its arrival and the set-up's end (as the fill and drain
 * windows open). Charged after the arrival, the set-ups added up: a
 * 1,240 s set-up of a chain of GPU operators put the bound at 3,208 s, and
 * a run ended in 3,152 s (zoo seed 7 with --setups, case 124). */
static double critical_path(const sl_plan *p, const bound_model *m)
{
  double t = 0.0;
  for (int i = 0; i < p->nops; i++) {
    double fastest = fastest_speed(m, i);
    double rows = i == 0 ? (double)p->ops[0].rows_per_task : fmin(1, p->ops[i - 1].alpha_rows);
    t = fmax(t, p->ops[i].time_setup / fastest);
    if (p->ops[i].time_spread <= 0) /* a spread makes some tasks shorter than the plan's */
      t += sl_plan_task_time(&p->ops[i], rows) / fastest;
    if (i > 0 && p->ops[i].rows_out_per_row < 1 && p->ops[i].kind != SL_OP_ALL_TO_ALL)
      break; /* a filter's output of the last source rows may be empty */
  }
  return t;
}

/* Not a bound: a source task, then each operator's share of one source
 * row's whole expansion in one task. The critical path was this until an
 * engine was seen to split that expansion; `sluice zoo` still sizes its
 * drafts by it, so that a seed keeps the cases it always made. */
static double whole_expansion_path(const sl_plan *p, const bound_model *m)
{
  double t = 0.0;
  for (int i = 0; i < p->nops; i++) {
    double fastest = fastest_speed(m, i);
    double rows = i == 0 ? (double)p->ops[0].rows_per_task : p->ops[i - 1].alpha_rows;
    t = fmax(t, p->ops[i].time_setup / fastest) + sl_plan_task_time(&p->ops[i], rows) / fastest;
  }
  return t;
}

/* Work of operator @p i cut into @p k tasks, at least (task-seconds at
 * speed 1): each task pays its fixed time and at least one batch, the
 * rows their own time, and batches are at least the rows over the batch
 * size. */
static double cut_work(const sl_pop *o, double rows, double k)
{
  double batches = o->batch_size > 0 ? fmax(k, rows / o->batch_size) : k;
  return k * o->time_per_task + batches * o->time_per_batch + rows * o->time_per_row;
}

/* The longest of @p k tasks over @p rows takes at least the time of the
 * average task (a task's time never falls as its rows grow), at the
 * fastest speed the operator runs at. */
static double cut_longest(const sl_pop *o, double rows, double k, double fastest)
{
  return sl_plan_task_time(o, rows / k) / fastest;
}

/* The area (source rows over the program's throughput) with operator
 * @p i's work that of @p k tasks; infinity when the program fails. */
static double cut_area(bound_model *m, const sl_plan *p, const sl_cluster *c, int i, double k, unsigned mask,
                       int *idx, double *val)
{
  double rows = sl_plan_rows_in(p, i);
  double w = cut_work(&p->ops[i], rows, k) / (double)p->source_rows;
  double saved[SL_MAX_GROUPS];
  for (int g = 0; g < m->ngroups; g++) {
    saved[g] = m->d[i][g];
    m->d[i][g] = w / m->speed[i][g];
  }
  glp_prob *lp = lp_build(m, p, c, mask, idx, val);
  double x = 0;
  int rc = lp_solve(lp, &x);
  glp_delete_prob(lp);
  for (int g = 0; g < m->ngroups; g++)
    m->d[i][g] = saved[g];
  return rc == 0 && x > 0 ? (double)p->source_rows / x : INFINITY;
}

/*
 * The least JCT that the cut of operator @p i's rows into tasks allows.
 * With a fixed time per task (or per batch), more tasks mean more work:
 * the area grows with their number k; fewer tasks mean a longer longest
 * one, which the job cannot end before. Whatever k a schedule uses, its
 * JCT is at least max(area(k), longest(k)) for that k, so at least the
 * least of these over k, found by bisection (area rises with k, the
 * longest task falls). k runs from tasks of the largest size an engine
 * forms (the area assumes tasks no larger) to one row each. The area and
 * critical path alone missed it: zoo case 45's last operator, 57 s a task plus 2.2 s a
 * row on 256-row batches, makes 70 tasks of 625 s for 396 slots, or, cut
 * finer, more work than the area charged; the bound said 119 s where no
 * cut allows less than 163 s.
 */
static double task_cut_bound(bound_model *m, const sl_plan *p, const sl_cluster *c, int i, unsigned mask,
                             int *idx, double *val)
{
  const sl_pop *o = &p->ops[i];
  if (o->kind == SL_OP_SOURCE || o->kind == SL_OP_ALL_TO_ALL || !(o->time_per_task + o->time_per_batch > 0))
    return 0;
  double rows = sl_plan_rows_in(p, i);
  double lo = fmax(1, ceil(rows / sl_plan_largest_task_rows(p, i) - 1e-9)), hi = fmax(lo, ceil(rows - 1e-9));
  double fastest = fastest_speed(m, i);
  if (!(fastest > 0) || !(rows >= 1))
    return 0;
  /* the least k whose area reaches its longest task */
  double area_hi = cut_area(m, p, c, i, hi, mask, idx, val);
  if (area_hi < cut_longest(o, rows, hi, fastest))
    return cut_longest(o, rows, hi, fastest); /* even one row a task is longer */
  while (hi - lo > 1) {
    double mid = floor((lo + hi) / 2);
    double area = cut_area(m, p, c, i, mid, mask, idx, val);
    if (area >= cut_longest(o, rows, mid, fastest)) {
      hi = mid;
      area_hi = area;
    } else {
      lo = mid;
    }
  }
  double at_hi = fmax(area_hi, cut_longest(o, rows, hi, fastest));
  double at_lo = fmax(cut_area(m, p, c, i, lo, mask, idx, val), cut_longest(o, rows, lo, fastest));
  return fmin(at_hi, at_lo);
}


/* Source tasks that fit on one node of group @p g at once. */
static double source_tasks_per_node(const bound_model *m, const sl_pop *o, int g)
{
  double k = INFINITY;
  if (o->cpu > 0)
    k = fmin(k, tasks_fit(m->slots[g][0], o->cpu));
  if (o->gpu > 0)
    k = fmin(k, tasks_fit(m->slots[g][1], o->gpu));
  return isfinite(k) ? k : 0;
}

/* Source tasks finished by time @p t when every slot that may run one
 * runs nothing else, back to back. */
static double splits_done_by(const bound_model *m, const sl_pop *o, double w, double t)
{
  double done = 0;
  for (int g = 0; g < m->ngroups; g++)
    if (m->fits[0][g])
      done += m->count[g] * source_tasks_per_node(m, o, g) * floor(t * m->speed[0][g] / w + 1e-9);
  return done;
}

/* Whether operator @p i's output of the last rows may be empty (a filter)
 * or waits for every row (an all-to-all): no row goes on from it alone. */
static bool ends_rows(const sl_plan *p, int i)
{
  return p->ops[i].rows_out_per_row < 1 || p->ops[i].kind == SL_OP_ALL_TO_ALL;
}

/* The least time a row takes through the operators after @p from, a task
 * of one row each on its fastest node, up to the first that ends_rows().
 * An operator whose task times spread adds nothing: some of its tasks are
 * shorter than the plan's. */
static double one_row_after(const bound_model *m, const sl_plan *p, int from)
{
  double t = 0;
  for (int j = from + 1; j < p->nops; j++) {
    double fastest = fastest_speed(m, j);
    if (!(fastest > 0))
      break;
    if (p->ops[j].time_spread <= 0)
      t += sl_plan_task_time(&p->ops[j], 1) / fastest;
    if (ends_rows(p, j))
      break;
  }
  return t;
}

/*
 * The source's splits are whole tasks of one size: however the slots are
 * shared, they take at least the least time T in which the slots that may
 * run them, running nothing else, finish them all back to back (whole
 * waves: 1,000 splits of 12 s on 32 slots at speed 1 and 32 at 0.7 need
 * 228 s, where the area says 220). The last of them then emits its last
 * partition, which each operator after it must still process, one row at
 * least, at its fastest; up to a filter, whose output may be empty. Only
 * when every split takes the same time (no time spread): a spread makes
 * some faster. 0 when it does not apply.
 */
static double source_waves(const bound_model *m, const sl_plan *p)
{
  const sl_pop *o = &p->ops[0];
  if (o->kind != SL_OP_SOURCE || o->time_spread > 0 || o->tasks < 1 || o->rows_per_task < 1)
    return 0;
  double w = sl_plan_task_time(o, (double)o->rows_per_task), tasks = (double)o->tasks;
  double fastest = fastest_speed(m, 0);
  if (!(w > 0) || !(fastest > 0) || splits_done_by(m, o, w, tasks * w / fastest) < tasks)
    return 0;
  double lo = 0, hi = tasks * w / fastest;
  for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
    double mid = 0.5 * (lo + hi);
    if (splits_done_by(m, o, w, mid) >= tasks)
      hi = mid;
    else
      lo = mid;
  }
  /* the count only changes where a group ends a wave: back to that instant */
  double t = 0;
  for (int g = 0; g < m->ngroups; g++)
    if (m->fits[0][g] && source_tasks_per_node(m, o, g) > 0)
      t = fmax(t, floor(hi * m->speed[0][g] / w + 1e-9) * w / m->speed[0][g]);
  return t + one_row_after(m, p, 0);
}

/*
 * Fill and drain. An operator's work can start only once its first input
 * exists, and its last task must end early enough for what it made to go
 * through every operator after it: each operator i works inside a window
 * [head_i, T - tail_i]. The area bound lets every operator work over the
 * whole job; a pipeline whose tasks are long next to the job cannot (zoo
 * case 53: 2.5 s reads, then 1.5 s and 3.7 s tasks a row, in a job of
 * 20 s). For a given T the windows cut [0, T] into intervals; a program
 * asks whether every operator's work fits in its window's intervals with
 * no group's slots, no cap and no storage link over-used in any interval.
 * The least T that fits, found by bisection, is a lower bound: any
 * schedule's JCT fits (its own work, interval by interval, is a solution).
 *
 * head_i sums, over the operators before i, the least time until one makes
 * its first output: one row's time (a fixed cost per task may be spread
 * over a task's outputs), or a whole least task where outputs come at its
 * end. tail_i sums, over the operators after i, one task of one row, on
 * the fastest node, up to a filter (its output may be empty); 0 when i
 * itself filters. An operator with a spread of times counts nothing (some
 * of its tasks are faster). The network is left out: the bound is then
 * looser, never wrong.
 */
#define WINDOW_POINTS (2 * SL_MAX_OPS + 3)

typedef struct {
  double head[SL_MAX_OPS], tail[SL_MAX_OPS];
  double read_tail; /* reads from storage end this long before T at least (0: no such edge) */
} windows;

static double first_output_s(const bound_model *m, const sl_plan *p, int j)
{
  const sl_pop *o = &p->ops[j];
  double fastest = fastest_speed(m, j);
  if (o->time_spread > 0 || !(fastest > 0))
    return 0;
  if (o->outputs_at_end)
    return sl_plan_task_time(o, j == 0 ? (double)o->rows_per_task : 1) / fastest;
  return o->time_per_row / fastest;
}

/* How long before the end the source's last read from storage ends at
 * least: a source task computes after its whole split has arrived, so
 * the split read last is still followed by a source task, at its fastest,
 * and by that task's output through the operators after it (tail[0]).
 * Storage that binds then ends the job no sooner than its reads plus
 * that (zoo seed 1 case 125: reads of 243 s, 42 s sources, 37 s
 * batches; the area said 282 s). 0 where the source reads nothing from
 * a limited link, or its tasks vary in time. */
static double read_tail_s(const bound_model *m, const sl_plan *p, const windows *w)
{
  const sl_pop *o = &p->ops[0];
  double fastest = fastest_speed(m, 0);
  if (!(m->read_bytes > 0) || !(m->storage_bps > 0) || o->kind != SL_OP_SOURCE || o->time_spread > 0 ||
      o->rows_per_task < 1 || !(fastest > 0))
    return 0;
  return sl_plan_task_time(o, (double)o->rows_per_task) / fastest + w->tail[0];
}

/* The window of operator i opens when its first input can have arrived
 * and a slot can have set it up: a slot pays time_setup before its first
 * task of the operator, from the job's start at the soonest, so no task
 * of it runs before time_setup at the fastest speed it runs at (a GPU
 * model loaded for 0.38 s on the only GPU: the area left that out and a
 * real run of 2.12 s read 78% of a 1.64 s bound). Its first output, and so
 * the next operator's first input, come no sooner. */
static void window_edges(const bound_model *m, const sl_plan *p, windows *w)
{
  double t = 0;
  for (int i = 0; i < p->nops; i++) {
    double fastest = fastest_speed(m, i);
    if (p->ops[i].time_setup > 0 && fastest > 0)
      t = fmax(t, p->ops[i].time_setup / fastest);
    w->head[i] = t;
    t += first_output_s(m, p, i);
  }
  for (int i = 0; i < p->nops; i++)
    w->tail[i] = ends_rows(p, i) ? 0 : one_row_after(m, p, i);
  w->read_tail = read_tail_s(m, p, w);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The share of every operator's rows the windows of a job of @p T seconds
 * let through at most (>= 1: the job fits). Columns z[i][g][t]: the share
 * of the source rows whose operator-i work runs on group g in interval t. */
static double window_fit(const bound_model *m, const sl_plan *p, const windows *w, double T)
{
  double pts[WINDOW_POINTS];
  int np = 0;
  pts[np++] = 0;
  pts[np++] = T;
  for (int i = 0; i < p->nops; i++) {
    pts[np++] = fmin(T, w->head[i]);
    pts[np++] = fmax(0, T - w->tail[i]);
  }
  pts[np++] = fmax(0, T - w->read_tail);
  qsort(pts, np, sizeof *pts, cmp_double);
  int nt = np - 1, nz = p->nops * m->ngroups * nt;
  bool reads = m->read_bytes > 0 && m->storage_bps > 0;
  double R = (double)p->source_rows;
  int *idx = malloc(sizeof(*idx) * (2 * nz + 2 * nt + 2));
  double *val = malloc(sizeof(*val) * (2 * nz + 2 * nt + 2));
  if (!idx || !val) {
    free(idx);
    free(val);
    return -1;
  }
  glp_prob *lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, 1 + nz + nt);
  glp_set_col_bnds(lp, 1, GLP_DB, 0.0, 2.0); /* lambda: past 1 says nothing more */
  glp_set_obj_coef(lp, 1, 1.0);
#define ZCOL(i, g, t) (2 + ((i) * m->ngroups + (g)) * nt + (t))
  /* r[t]: the share of the source rows read from storage in interval t,
   * none after the read tail's edge; a split's rows are read before its
   * source task computes them */
#define RCOL(t) (2 + nz + (t))
  for (int t = 0; t < nt; t++)
    glp_set_col_bnds(lp, RCOL(t),
                     reads && pts[t + 1] - pts[t] > 0 && pts[t + 1] <= T - w->read_tail + 1e-12 ? GLP_LO
                                                                                                : GLP_FX,
                     0.0, 0.0);
  for (int i = 0; i < p->nops; i++)
    for (int g = 0; g < m->ngroups; g++)
      for (int t = 0; t < nt; t++) {
        bool inside = pts[t + 1] - pts[t] > 0 && pts[t] >= w->head[i] - 1e-12 &&
                      pts[t + 1] <= T - w->tail[i] + 1e-12;
        glp_set_col_bnds(lp, ZCOL(i, g, t), m->fits[i][g] && inside ? GLP_LO : GLP_FX, 0.0, 0.0);
      }
  for (int i = 0; i < p->nops; i++) { /* every operator's rows, all of them: sum z = lambda */
    int n = 0;
    idx[++n] = 1;
    val[n] = -1.0;
    for (int g = 0; g < m->ngroups; g++)
      for (int t = 0; t < nt; t++) {
        idx[++n] = ZCOL(i, g, t);
        val[n] = 1.0;
      }
    add_row(lp, n, idx, val, true);
  }
  for (int t = 0; t < nt; t++) {
    double L = pts[t + 1] - pts[t];
    if (!(L > 0))
      continue;
    for (int g = 0; g < m->ngroups; g++)
      for (int k = CLS_CPU; k <= CLS_GPU; k++) {
        double cap = m->count[g] * m->slots[g][k] * L;
        int n = 0;
        for (int i = 0; i < p->nops && cap > 0; i++)
          if (m->fits[i][g] && m->e[i][g][k] > 0 && m->d[i][g] > 0) {
            idx[++n] = ZCOL(i, g, t);
            val[n] = R * m->d[i][g] * m->e[i][g][k] / cap;
          }
        if (n > 0)
          add_row(lp, n, idx, val, false);
      }
    for (int i = 0; i < p->nops; i++) {
      double cap = p->ops[i].concurrency * L;
      int n = 0;
      for (int g = 0; g < m->ngroups && cap > 0; g++)
        if (m->fits[i][g] && m->d[i][g] > 0) {
          idx[++n] = ZCOL(i, g, t);
          val[n] = R * m->d[i][g] / cap;
        }
      if (n > 0)
        add_row(lp, n, idx, val, false);
    }
    if (reads) {
      idx[1] = RCOL(t);
      val[1] = R * m->read_bytes / (m->storage_bps * L);
      add_row(lp, 1, idx, val, false);
    }
  }
  if (reads) {
    int n = 0;
    idx[++n] = 1;
    val[n] = -1.0;
    for (int t = 0; t < nt; t++) {
      idx[++n] = RCOL(t);
      val[n] = 1.0;
    }
    add_row(lp, n, idx, val, true);
    for (int t = 0; t < nt; t++) { /* computed by the end of t no more than read by then */
      n = 0;
      for (int u = 0; u <= t; u++) {
        for (int g = 0; g < m->ngroups; g++) {
          idx[++n] = ZCOL(0, g, u);
          val[n] = 1.0;
        }
        idx[++n] = RCOL(u);
        val[n] = -1.0;
      }
      int r = glp_add_rows(lp, 1);
      glp_set_row_bnds(lp, r, GLP_UP, 0.0, 0.0);
      glp_set_mat_row(lp, r, n, idx, val);
    }
  }
  /* a row's worth reaches operator i no sooner than operator i-1 made it */
  for (int i = 1; i < p->nops; i++)
    for (int t = 0; t + 1 < nt; t++) {
      int n = 0;
      for (int u = 0; u <= t; u++)
        for (int g = 0; g < m->ngroups; g++) {
          idx[++n] = ZCOL(i, g, u);
          val[n] = 1.0;
          idx[++n] = ZCOL(i - 1, g, u);
          val[n] = -1.0;
        }
      int r = glp_add_rows(lp, 1);
      glp_set_row_bnds(lp, r, GLP_UP, 0.0, 0.0);
      glp_set_mat_row(lp, r, n, idx, val);
    }
#undef RCOL
#undef ZCOL
  double lambda = 0;
  if (lp_solve(lp, &lambda) != 0)
    lambda = -1;
  glp_delete_prob(lp);
  free(idx);
  free(val);
  return lambda;
}

/* The least T at least @p from whose windows fit the job (0: they fit at
 * @p from, or the program failed: no more than the other bounds say). */
static double fill_drain_bound(const bound_model *m, const sl_plan *p, double from)
{
  windows w;
  window_edges(m, p, &w);
  double head = 0, tail = 0;
  for (int i = 0; i < p->nops; i++) {
    head = fmax(head, w.head[i]);
    tail = fmax(tail, w.tail[i]);
  }
  tail = fmax(tail, w.read_tail);
  double lo = from, hi = from + head + tail;
  double fit = window_fit(m, p, &w, lo);
  if (fit < 0 || fit >= 1 - 1e-9 || !(hi > lo))
    return 0;
  /* every operator at the area's rates in [max head, max head + area]
   * fits once T reaches the area plus the longest head and tail; the
   * program's rounding may still want a little more: grow until it fits */
  for (int it = 0; window_fit(m, p, &w, hi) < 1 - 1e-9; it++) {
    if (it > 8)
      return 0;
    hi = lo + 2 * (hi - lo);
  }
  while (hi - lo > 1e-4 * hi) {
    double mid = 0.5 * (lo + hi);
    double f = window_fit(m, p, &w, mid);
    if (f < 0)
      return 0;
    if (f >= 1 - 1e-9)
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

/* The optimum's allocation: the tasks each operator runs at once over
 * each group's nodes, and the slots each group leaves idle. */
static void read_allocation(glp_prob *lp, const bound_model *m, sl_bound_allocation *alloc)
{
  memset(alloc, 0, sizeof(*alloc));
  for (int g = 0; g < m->ngroups; g++) {
    double used[2] = {0, 0};
    for (int i = 0; i < m->nops; i++) {
      if (!m->fits[i][g])
        continue;
      double tasks = fmax(0, glp_get_col_prim(lp, col_x(m, i, g)) * m->d[i][g]);
      alloc->tasks[i][g] = tasks;
      used[CLS_CPU] += tasks * m->e[i][g][CLS_CPU];
      used[CLS_GPU] += tasks * m->e[i][g][CLS_GPU];
    }
    for (int k = CLS_CPU; k <= CLS_GPU; k++)
      alloc->idle_slots[g][k] = fmax(0, m->count[g] * m->slots[g][k] - used[k]);
  }
}

static int solve_model(const bound_model *m, const sl_plan *p, const sl_cluster *c, bool bottleneck,
                       unsigned mask, sl_bound *out, sl_bound_allocation *alloc)
{
  int n = ncols(m), rc = SL_ENOMEM, cls = CLS_CPU;
  int *idx = malloc(sizeof(*idx) * (n + 1));
  double *val = malloc(sizeof(*val) * (n + 1));
  glp_prob *lp = NULL;

  if (!idx || !val)
    goto free_arrays;
  lp = lp_build(m, p, c, mask, idx, val);
  rc = lp_solve(lp, &out->throughput_rows_s);
  if (rc == 0 && !(out->throughput_rows_s > 0 && isfinite(out->throughput_rows_s)))
    rc = SL_ELP;
  if (rc == 0 && alloc)
    read_allocation(lp, m, alloc);
  if (rc == 0 && bottleneck)
    rc = bottleneck_class(m, p, c, idx, val, &cls);
  if (rc == 0 && bottleneck)
    name_bottleneck(lp, m, p, cls, out);
  else if (rc == 0)
    out->bottleneck_op = -1;
  glp_delete_prob(lp);
free_arrays:
  free(val);
  free(idx);
  return rc;
}

/* out->task_cut_s: the largest of the operators' task-cut bounds. */
static int add_task_cuts(bound_model *m, const sl_plan *p, const sl_cluster *c, unsigned mask, sl_bound *out)
{
  int n = ncols(m);
  int *idx = malloc(sizeof(*idx) * (n + 1));
  double *val = malloc(sizeof(*val) * (n + 1));
  if (!idx || !val) {
    free(idx);
    free(val);
    return SL_ENOMEM;
  }
  out->task_cut_s = 0;
  out->task_cut_op = -1;
  for (int i = 0; i < p->nops; i++) {
    double t = task_cut_bound(m, p, c, i, mask, idx, val);
    if (isfinite(t) && t > out->task_cut_s) {
      out->task_cut_s = t;
      out->task_cut_op = i;
    }
  }
  out->jct_s = fmax(out->jct_s, out->task_cut_s);
  free(idx);
  free(val);
  return 0;
}

/* Seconds the disks take to read @p r and write @p w bytes side by side:
 * each at its own bandwidth, and both together at no more than the faster
 * of the two (SimGrid's disks share a read-write limit, max(read, write)). */
static double disk_phase(double r, double w, double read, double write)
{
  return fmax(fmax(r / read, w / write), (r + w) / fmax(read, write));
}

/*
 * What must touch disk: at an all-to-all's barrier every byte of its input
 * exists at once, so what the stores of all nodes cannot hold is on disk,
 * written before the barrier and read back after it. A source that reads
 * off the nodes' disks reads while those writes go on, and a sink that
 * writes to them writes while the reads go on (disk_phase()), spread over
 * every node's disks at once; each barrier starts a phase. A node with no
 * disk spills for free in the model, so then nothing is owed (0).
 */
/* What barrier @p i leaves on the disks: its input beyond @p store bytes
 * of stores (every byte of it exists at once). */
static double barrier_spill(const sl_plan *p, int i, double store)
{
  return fmax(0, sl_plan_rows_in(p, i) * p->ops[i].in_row_bytes - store);
}

/* The most bytes an all-to-all's barrier leaves on the disks (what the
 * stores of all nodes cannot hold of its input), and what the disks hold
 * together: 0 where a node has no disk or a disk gives no capacity. */
static void disk_room(const sl_plan *p, const sl_cluster *c, double *held, double *capacity)
{
  double count[SL_MAX_GROUPS], store = 0, room = 0;
  bool bounded = true;
  count_nodes(c, count);
  for (int g = 0; g < c->ngroups; g++) {
    if (count[g] <= 0)
      continue;
    double cap = sl_group_disk_capacity(&c->groups[g]);
    bounded = bounded && cap > 0;
    store += count[g] * c->groups[g].store_bytes;
    room += count[g] * cap;
  }
  *held = 0;
  for (int i = 1; i < p->nops; i++)
    if (sl_pop_is_barrier(&p->ops[i]))
      *held = fmax(*held, barrier_spill(p, i, store));
  *capacity = bounded ? room : 0;
}

bool sl_bound_disks_overflow(const sl_bound *b)
{
  return b->disk_capacity_bytes > 0 && b->disk_held_bytes > b->disk_capacity_bytes;
}

void sl_bound_disks_overflow_text(const sl_bound *b, char *buf, size_t n)
{
  double unit = b->disk_held_bytes >= 1e12 ? 1e12 : b->disk_held_bytes >= 1e9 ? 1e9 : 1e6;
  const char *u = unit == 1e12 ? "TB" : unit == 1e9 ? "GB" : "MB";
  snprintf(buf, n, "its disks hold %.4g %s, less than the %.4g %s a shuffle must spill at once",
           b->disk_capacity_bytes / unit, u, b->disk_held_bytes / unit, u);
}

static double disk_time(const sl_plan *p, const sl_cluster *c)
{
  double count[SL_MAX_GROUPS], store = 0, write = 0, read = 0;
  count_nodes(c, count);
  for (int g = 0; g < c->ngroups; g++) {
    if (count[g] <= 0)
      continue;
    if (!sl_group_has_disk(&c->groups[g]))
      return 0;
    store += count[g] * c->groups[g].store_bytes;
    write += count[g] * c->groups[g].disks * c->groups[g].disk_write_bps;
    read += count[g] * c->groups[g].disks * c->groups[g].disk_read_bps;
  }
  if (!(write > 0 && read > 0))
    return 0;
  double input = p->source_from_disk ? (double)p->source_rows * p->ops[0].read_bytes_per_row : 0;
  double output = p->sink_to_disk && p->nops > 0 ? p->sink_rows * p->ops[p->nops - 1].out_row_bytes : 0;
  /* the barriers cut the job into phases that cannot overlap: each reads
   * what spilled at the barrier before it (the input, for the first) and
   * writes what will not fit at the barrier after it (the output, for the
   * last). Two shuffles in a row spill twice: their times add. */
  double t = 0, reads = input;
  for (int i = 1; i < p->nops; i++) {
    if (!sl_pop_is_barrier(&p->ops[i]))
      continue;
    double over = barrier_spill(p, i, store);
    t += disk_phase(reads, over, read, write);
    reads = over;
  }
  return t + disk_phase(reads, output, read, write);
}

static int compute(const sl_plan *p, const sl_cluster *c, bool bottleneck, unsigned mask, bool typical,
                   sl_bound *out, sl_bound_allocation *alloc)
{
  if (!p || !c || !out || p->nops < 1 || p->nops > SL_MAX_OPS || c->ngroups < 1 ||
      c->ngroups > SL_MAX_GROUPS)
    return SL_EINVAL;
  memset(out, 0, sizeof(*out));

  bound_model *m = malloc(sizeof(*m));
  if (!m)
    return SL_ENOMEM;
  int rc = model_build(m, p, c, typical);
  if (rc == 0)
    rc = solve_model(m, p, c, bottleneck, mask, out, alloc);
  if (rc == 0) {
    out->area_s = (double)p->source_rows / out->throughput_rows_s;
    out->critical_path_s = critical_path(p, m);
    out->whole_expansion_path_s = whole_expansion_path(p, m);
    out->jct_s = fmax(out->area_s, out->critical_path_s);
  }
  if (rc == 0 && mask == ~0u) /* the JCT of a rate-only program is not used */
    rc = add_task_cuts(m, p, c, mask, out);
  if (rc == 0) {
    out->source_waves_s = source_waves(m, p);
    out->disk_s = disk_time(p, c);
    disk_room(p, c, &out->disk_held_bytes, &out->disk_capacity_bytes);
    out->jct_s = fmax(fmax(out->jct_s, out->source_waves_s), out->disk_s);
    if (mask == ~0u) {
      out->fill_drain_s = fill_drain_bound(m, p, out->area_s);
      out->jct_s = fmax(out->jct_s, out->fill_drain_s);
    }
  }
  free(m);
  return rc;
}

int sl_bound_compute(const sl_plan *p, const sl_cluster *c, sl_bound *out)
{
  return compute(p, c, true, ~0u, false, out, NULL);
}

int sl_bound_limits(const sl_plan *p, const sl_cluster *c, sl_bound *out)
{
  return compute(p, c, false, ~0u, false, out, NULL);
}

int sl_bound_compute_rate(const sl_plan *p, const sl_cluster *c, sl_bound *out)
{
  return sl_bound_rate_allocation(p, c, out, NULL);
}

int sl_bound_rate_allocation(const sl_plan *p, const sl_cluster *c, sl_bound *out, sl_bound_allocation *alloc)
{
  return compute(p, c, false, ~(1u << CLS_NET), true, out, alloc);
}

/* The slowest speed operator @p i runs at, 0 when it fits nowhere. */
static double slowest_speed(const bound_model *m, int i)
{
  double slowest = INFINITY;
  for (int g = 0; g < m->ngroups; g++)
    if (m->fits[i][g])
      slowest = fmin(slowest, m->speed[i][g]);
  return isfinite(slowest) ? slowest : 0;
}

/* What a cut of operator @p i into @p k tasks costs a schedule: the area
 * the work of k tasks leaves, plus one task on the slowest node that may
 * run it, the tail a last task can add. */
static double cut_cost(bound_model *m, const sl_plan *p, const sl_cluster *c, int i, double k, unsigned mask,
                       int *idx, double *val)
{
  double rows = sl_plan_rows_in(p, i);
  return cut_area(m, p, c, i, k, mask, idx, val) + sl_plan_task_time(&p->ops[i], rows / k) / slowest_speed(m, i);
}

/* Tasks from the typical size down to one row, in steps of a quarter:
 * the cost is flat near its least, so a geometric scan finds it within a
 * step with a few dozen programs where every k would take millions. Of
 * the cuts within CUT_SLACK of the least cost, the fewest tasks win: a
 * cost the program does not see (a dispatch, a partition) comes with
 * every task, and where the fixed times fall on slots that would idle
 * anyway, the cost is flat from the typical size to one row a task (zoo
 * case 137: 2-row tasks of a filter, 34,857 of them, 28% of the bound
 * where 23-row ones reached 47%). */
#define CUT_STEP 1.25
#define CUT_SLACK 0.01
#define CUT_POINTS 128

/* A fixed time per batch counts as one per task: a task pays at least one
 * batch (cut_work()). */
static double best_cut_rows(bound_model *m, const sl_plan *p, const sl_cluster *c, int i, unsigned mask,
                            int *idx, double *val)
{
  const sl_pop *o = &p->ops[i];
  double rows = sl_plan_rows_in(p, i);
  double fixed = o->time_per_task + (o->batch_size > 0 ? o->time_per_batch : 0);
  if (o->kind == SL_OP_SOURCE || o->kind == SL_OP_ALL_TO_ALL || !(fixed > 0) || !(rows >= 1) ||
      !(slowest_speed(m, i) > 0))
    return 0;
  double lo = fmax(1, ceil(rows / sl_plan_typical_rows(p, i) - 1e-9)), hi = fmax(lo, ceil(rows - 1e-9));
  double ks[CUT_POINTS], costs[CUT_POINTS], best = INFINITY;
  int n = 0;
  for (double k = lo; k <= hi && n < CUT_POINTS; k = fmax(k + 1, ceil(k * CUT_STEP))) {
    ks[n] = k;
    costs[n] = cut_cost(m, p, c, i, k, mask, idx, val);
    best = fmin(best, costs[n++]);
  }
  if (!isfinite(best))
    return 0;
  /* the usual cut, a tenth of the work fixed, unless it costs more */
  if (o->time_per_row > 0) {
    double usual = fmin(hi, fmax(lo, ceil(rows / sl_plan_amortising_rows(fixed, o->time_per_row) - 1e-9)));
    if (cut_cost(m, p, c, i, usual, mask, idx, val) <= best * (1 + CUT_SLACK))
      return 0;
  }
  for (int j = 0; j < n; j++)
    if (costs[j] <= best * (1 + CUT_SLACK))
      return ceil(rows / ks[j] - 1e-9);
  return 0;
}

int sl_bound_task_rows(const sl_plan *p, const sl_cluster *c, double rows[SL_MAX_OPS])
{
  if (!p || !c || !rows || p->nops < 1 || p->nops > SL_MAX_OPS || c->ngroups < 1 || c->ngroups > SL_MAX_GROUPS)
    return SL_EINVAL;
  for (int i = 0; i < SL_MAX_OPS; i++)
    rows[i] = 0;
  bound_model *m = malloc(sizeof(*m));
  int n = 0, rc = SL_ENOMEM;
  int *idx = NULL;
  double *val = NULL;
  if (!m)
    return SL_ENOMEM;
  rc = model_build(m, p, c, true);
  if (rc == 0) {
    n = ncols(m);
    idx = malloc(sizeof(*idx) * (n + 1));
    val = malloc(sizeof(*val) * (n + 1));
    rc = idx && val ? 0 : SL_ENOMEM;
  }
  for (int i = 0; rc == 0 && i < p->nops; i++)
    rows[i] = best_cut_rows(m, p, c, i, ~(1u << CLS_NET), idx, val);
  free(idx);
  free(val);
  free(m);
  return rc;
}

/* CSV field: quoted only when it holds a separator or a quote. */
static void csv_field(FILE *f, const char *s)
{
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int sl_bound_write_csv(const sl_bound *b, const sl_plan *p, const sl_cluster *c, FILE *f)
{
  if (!b || !f)
    return SL_EINVAL;
  fputs("workload,cluster,throughput_bound_rows_s,jct_bound_s,area_s,critical_path_s,bottleneck,task_cut_s,"
        "source_waves_s,disk_s,fill_drain_s\n",
        f);
  csv_field(f, p && p->workload ? p->workload->name : "");
  fputc(',', f);
  csv_field(f, c ? c->name : "");
  fprintf(f, ",%.6g,%.3f,%.3f,%.3f,", b->throughput_rows_s, b->jct_s, b->area_s,
          b->critical_path_s);
  csv_field(f, b->bottleneck);
  fprintf(f, ",%.3f,%.3f,%.3f,%.3f\n", b->task_cut_s, b->source_waves_s, b->disk_s, b->fill_drain_s);
  return ferror(f) ? SL_EIO : 0;
}

void sl_bound_print(const sl_bound *b, const sl_plan *p, const sl_cluster *c, FILE *f)
{
  if (!b || !f)
    return;
  const char *op = p && b->bottleneck_op >= 0 && b->bottleneck_op < p->nops
                       ? p->ops[b->bottleneck_op].name
                       : "?";
  fprintf(f, "bound of %s on %s\n", p && p->workload ? p->workload->name : "?", c ? c->name : "?");
  fprintf(f, "  throughput     %.6g source rows/s\n", b->throughput_rows_s);
  fprintf(f, "  area           %.3f s (%lld rows at that rate)\n", b->area_s,
          p ? (long long)p->source_rows : 0LL);
  fprintf(f, "  critical path  %.3f s (a source task, then one row through each operator up to a filter)\n",
          b->critical_path_s);
  if (b->task_cut_s > fmax(b->area_s, b->critical_path_s) * (1 + 1e-9) && p && b->task_cut_op >= 0 &&
      b->task_cut_op < p->nops)
    fprintf(f, "  task cut       %.3f s ('%s': more tasks are more work, fewer a longer last one)\n",
            b->task_cut_s, p->ops[b->task_cut_op].name);
  if (b->source_waves_s > fmax(fmax(b->area_s, b->critical_path_s), b->task_cut_s) * (1 + 1e-9))
    fprintf(f, "  source waves   %.3f s (its splits whole on every slot that may run them, then its last output)\n",
            b->source_waves_s);
  if (b->disk_s > 0)
    fprintf(f, "  disk           %.3f s (input read off the disks, a shuffle's input the stores cannot hold "
               "written and read back, output written)\n",
            b->disk_s);
  if (sl_bound_disks_overflow(b)) {
    char why[160];
    sl_bound_disks_overflow_text(b, why, sizeof why);
    fprintf(f, "  disks full     %s:\n                 no run completes on this cluster\n", why);
  }
  if (b->fill_drain_s > 0)
    fprintf(f, "  fill, drain    %.3f s (each operator between its first input, or its set-up, and the time\n"
               "                 its last output needs to go through the operators after it)\n",
            b->fill_drain_s);
  fprintf(f, "  JCT bound      %.3f s\n", b->jct_s);
  fprintf(f, "  bottleneck     %s, operator %d '%s'\n", b->bottleneck, b->bottleneck_op, op);
}
