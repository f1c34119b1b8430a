/**
 * @file zoo.c
 * @brief The workload zoo: seeded pipelines and clusters, written as specs.
 *
 * A case is drawn in memory (an sl_workload and the groups of an
 * sl_cluster), sized with the plan (tasks, bytes), costed so that every
 * operator loads its resource class by a random share, scaled with the
 * bound to a random target, then written as INI text and read back through
 * the spec loaders, which have the last word: index.csv describes the
 * files as they load, never the draft.
 *
 * Draws come from one SplitMix64 stream per case, seeded from (zoo seed,
 * case number): the order of the draws below is part of the format, and
 * changing it changes every zoo.
 */
#include "zoo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/bound.h"
#include "models/cluster.h"
#include "models/error.h"
#include "models/plan.h"
#include "results/atomic_file.h"
#include "spec.h"

#define SL__KIB 1024.0
#define SL__MIB (1024.0 * 1024.0)
/* Every zoo node's spill disk: a local SSD (bench/zoo.sh's spill disk
 * before the cases carried one). */
#define ZOO_DISK_BPS 500e6

/* ------------------------------------------------------------------------ */
/* Draws                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  uint64_t s;
} zrng;

static uint64_t zr_next(zrng *r)
{
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double zr_unif(zrng *r)
{
  return (double)(zr_next(r) >> 11) * 0x1p-53;
}

/* Uniform in [lo, hi], both whole. */
static int zr_int(zrng *r, int lo, int hi)
{
  return lo + (int)(zr_next(r) % (uint64_t)(hi - lo + 1));
}

static bool zr_chance(zrng *r, double p)
{
  return zr_unif(r) < p;
}

/* Log-uniform in [lo, hi): as many draws in 1..10 as in 10..100. */
static double zr_logu(zrng *r, double lo, double hi)
{
  return lo * exp(zr_unif(r) * log(hi / lo));
}

#define ZR_PICK(r, arr) ((arr)[zr_int((r), 0, (int)(sizeof(arr) / sizeof((arr)[0])) - 1)])

uint64_t sl_zoo_case_seed(uint64_t seed, int index)
{
  zrng r = {seed ^ 0x5a6f6f5a6f6f5a6fULL}; /* "ZooZooZo": its own stream */
  uint64_t a = zr_next(&r);
  zrng q = {a ^ (uint64_t)index * 0xd1b54a32d192ed03ULL};
  /* below 2^62, so the workload spec's seed key (an int64) reads it back */
  return zr_next(&q) >> 2;
}

/* ------------------------------------------------------------------------ */
/* Numbers as specs write them                                               */
/* ------------------------------------------------------------------------ */

/* @p v with @p sig significant digits, no exponent, no trailing zeros. */
static void fmt_sig(char *buf, size_t n, double v, int sig)
{
  if (v == 0 || !isfinite(v)) {
    snprintf(buf, n, "0");
    return;
  }
  int mag = (int)floor(log10(fabs(v)));
  int dec = sig - 1 - mag;
  snprintf(buf, n, "%.*f", dec < 0 ? 0 : dec, v);
  if (strchr(buf, '.')) {
    char *end = buf + strlen(buf) - 1;
    while (*end == '0')
      *end-- = '\0';
    if (*end == '.')
      *end = '\0';
  }
}

/* @p v rounded as fmt_sig() writes it. */
static double round_sig(double v, int sig)
{
  char buf[64];
  fmt_sig(buf, sizeof buf, v, sig);
  return strtod(buf, NULL);
}

/* "1.5s", "12.34ms", "250us": four significant digits. */
static void fmt_time(char *buf, size_t n, double s)
{
  char num[48];
  const char *unit = "s";
  if (s < 1e-3) {
    s *= 1e6;
    unit = "us";
  } else if (s < 1) {
    s *= 1e3;
    unit = "ms";
  }
  fmt_sig(num, sizeof num, s, 4);
  snprintf(buf, n, "%s%s", num, unit);
}

/* Decimal sizes ("1.5MB", three digits) or, for @p binary, exact powers
 * of 1024 ("4MiB", "512KiB", "64B"). */
static void fmt_size(char *buf, size_t n, double b, bool binary)
{
  char num[48];
  if (binary) {
    if (b >= SL__MIB && fmod(b, SL__MIB) == 0)
      snprintf(buf, n, "%.0fMiB", b / SL__MIB);
    else if (b >= SL__KIB && fmod(b, SL__KIB) == 0)
      snprintf(buf, n, "%.0fKiB", b / SL__KIB);
    else
      snprintf(buf, n, "%.0fB", b);
    return;
  }
  double unit = b >= 1e9 ? 1e9 : b >= 1e6 ? 1e6 : b >= 1e3 ? 1e3 : 1;
  const char *name = b >= 1e9 ? "GB" : b >= 1e6 ? "MB" : b >= 1e3 ? "KB" : "B";
  fmt_sig(num, sizeof num, b / unit, 6); /* drawn sizes have 3 digits; stores more */
  snprintf(buf, n, "%s%s", num, name);
}

/* A decimal size rounded as fmt_size() writes it. */
static double round_size(double b)
{
  if (b < 1e3)
    return round(b); /* whole bytes */
  double unit = b >= 1e9 ? 1e9 : b >= 1e6 ? 1e6 : b >= 1e3 ? 1e3 : 1;
  return round_sig(b / unit, 3) * unit;
}

/* Bytes per second as "3.2Gbps" or "450Mbps" (three digits). */
static void fmt_bw(char *buf, size_t n, double bps)
{
  char num[48];
  double bits = bps * 8;
  if (bits >= 1e9) {
    fmt_sig(num, sizeof num, bits / 1e9, 3);
    snprintf(buf, n, "%sGbps", num);
  } else {
    fmt_sig(num, sizeof num, bits / 1e6, 3);
    snprintf(buf, n, "%sMbps", num);
  }
}

static double round_bw(double bps)
{
  double bits = bps * 8, unit = bits >= 1e9 ? 1e9 : 1e6;
  return round_sig(bits / unit, 3) * unit / 8;
}

/* "12,345" for a reader. */
static void fmt_count(char *buf, size_t n, double v)
{
  char raw[32];
  snprintf(raw, sizeof raw, "%.0f", v);
  size_t len = strlen(raw), o = 0;
  for (size_t i = 0; i < len && o + 2 < n; i++) {
    if (i > 0 && (len - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = raw[i];
  }
  buf[o] = '\0';
}

/* ------------------------------------------------------------------------ */
/* One case in memory                                                        */
/* ------------------------------------------------------------------------ */

enum { ZG_CPU, ZG_MIXED, ZG_GPU_ONLY };
static const char *const zg_kind_name[] = {"cpu", "cpu-gpu", "gpu-only"};

typedef struct {
  int index;
  uint64_t seed;
  bool small;
  sl_workload w;
  sl_cluster c;              /* groups only: never expanded here */
  int gkind[SL_MAX_GROUPS];
  bool binary;               /* sizes are powers of two: cuts are exact */
  int granule;               /* every row count a partition holds is a multiple */
  double parts_per_slot;     /* store budget per slot, in target partitions */
  int budget[SL_MAX_GROUPS]; /* store budget per node of each group, in them */
  int budget_min, budget_max;
  double target_s;           /* the bound the costs are scaled to */
  double storage_factor;     /* storage bandwidth / the read rate at target_s */
  double nic_factor;         /* smallest NIC / the estimated per-node traffic */
  bool spread;
  bool setups;               /* actor-like operators pay a set-up per slot */
  double bound_s;            /* of the draft, for the comments */
  double measured_s;         /* the measure's last word, 0: none */
  double run_scale;          /* costs scaled by the measure */
  char bottleneck[64];
} zcase;

static double max_cpu(const sl_cluster *c)
{
  double m = 0;
  for (int g = 0; g < c->ngroups; g++)
    m = fmax(m, c->groups[g].cpu);
  return m;
}

/* Groups (count, kind, slots, speeds, labels). Memory, store and NICs come
 * once the partitions and the traffic are known. */
static void draw_cluster(zcase *z, zrng *r)
{
  static const int cpu_big[] = {4, 8, 16, 32, 48, 64}, cpu_mixed[] = {4, 8, 16, 32};
  static const int cpu_small[] = {1, 2, 4}, cpu_small_mixed[] = {1, 2};
  static const int gpu_big[] = {1, 2, 4, 8}, gpu_small[] = {1, 2};
  static const char *const labels[] = {"a100", "h100", "a10g", "l4", "t4"};
  sl_cluster *c = &z->c;
  int n = z->small ? zr_int(r, 1, 3) : zr_chance(r, 0.15) ? 1 : (int)lround(zr_logu(r, 2, 64.5));
  n = n < 1 ? 1 : n > 64 ? 64 : n;
  int maxg = z->small ? 2 : 4;
  c->ngroups = zr_int(r, 1, n < maxg ? n : maxg);
  for (int g = 0; g < c->ngroups; g++)
    c->groups[g].count = 1;
  for (int k = c->ngroups; k < n; k++)
    c->groups[zr_int(r, 0, c->ngroups - 1)].count++;
  bool any_cpu = false;
  for (int g = 0; g < c->ngroups; g++) {
    double x = zr_unif(r);
    if (c->ngroups == 1)
      z->gkind[g] = x < 0.45 ? ZG_CPU : ZG_MIXED;
    else
      z->gkind[g] = x < 0.35 ? ZG_CPU : x < 0.75 ? ZG_MIXED : ZG_GPU_ONLY;
    any_cpu = any_cpu || z->gkind[g] != ZG_GPU_ONLY;
  }
  if (!any_cpu)
    z->gkind[0] = ZG_MIXED; /* the source needs a CPU somewhere */
  unsigned used = 0;
  for (int g = 0; g < c->ngroups; g++) {
    sl_node_group *gr = &c->groups[g];
    int kind = z->gkind[g];
    snprintf(gr->name, sizeof gr->name, "g%d-%s", g + 1, zg_kind_name[kind]);
    gr->cpu_speed = gr->gpu_speed = 1;
    gr->nic_bps = 10e9 / 8;
    if (kind == ZG_CPU)
      gr->cpu = z->small ? ZR_PICK(r, cpu_small) : ZR_PICK(r, cpu_big);
    else if (kind == ZG_MIXED)
      gr->cpu = z->small ? ZR_PICK(r, cpu_small_mixed) : ZR_PICK(r, cpu_mixed);
    if (kind != ZG_CPU)
      gr->gpu = z->small ? ZR_PICK(r, gpu_small) : ZR_PICK(r, gpu_big);
    if (gr->cpu > 0 && !zr_chance(r, 0.45))
      gr->cpu_speed = round_sig(zr_logu(r, 0.5, 2), 2);
    if (gr->gpu > 0 && !zr_chance(r, 0.45))
      gr->gpu_speed = round_sig(zr_logu(r, 0.3, 2), 2);
    if (gr->gpu > 0 && zr_chance(r, 0.6)) {
      int l = zr_int(r, 0, 4);
      while (used & (1u << l))
        l = (l + 1) % 5;
      used |= 1u << l;
      snprintf(gr->accelerator, sizeof gr->accelerator, "%s", labels[l]);
    }
    gr->price_per_hour = round_sig(0.04 * gr->cpu + (gr->gpu > 0 ? gr->gpu * (gr->accelerator[0] ? 2.5 : 1.2) : 0), 3);
    /* a local SSD a node, where spilled partitions cost time: a spill
     * that takes none flatters the models that spill. Not in the small
     * cases that run for real: their spills go to this machine's disk,
     * which sluice calibrate measures and the simulation then charges */
    if (!z->small) {
      gr->disks = 1;
      gr->disk_read_bps = gr->disk_write_bps = ZOO_DISK_BPS;
    }
  }
}

/* Slots of the class of @p op (GPU when it asks for one) on the groups it
 * may run on, each weighted by its speed: how much work per second the
 * cluster gives it if it had the class alone. */
static double class_capacity(const sl_cluster *c, const sl_op_spec *op)
{
  double cap = 0;
  for (int g = 0; g < c->ngroups; g++) {
    const sl_node_group *gr = &c->groups[g];
    if (gr->cpu < op->cpu || gr->gpu < op->gpu || !sl_group_allows(gr, &op->accel))
      continue;
    cap += op->gpu > 0 ? gr->count * gr->gpu * gr->gpu_speed : gr->count * gr->cpu * gr->cpu_speed;
  }
  return cap;
}

/* Tasks of @p op that fit at once on the whole cluster. */
static int tasks_at_once(const sl_cluster *c, const sl_op_spec *op)
{
  double n = 0;
  for (int g = 0; g < c->ngroups; g++) {
    const sl_node_group *gr = &c->groups[g];
    if (gr->cpu < op->cpu || gr->gpu < op->gpu || !sl_group_allows(gr, &op->accel))
      continue;
    double k = 1e9;
    if (op->cpu > 0)
      k = fmin(k, floor(gr->cpu / op->cpu + 1e-9));
    if (op->gpu > 0)
      k = fmin(k, floor(gr->gpu / op->gpu + 1e-9));
    n += gr->count * k;
  }
  return n < 1 ? 1 : n > 1e6 ? 1000000 : (int)n;
}

/* A CPU request that fits a node with @p most CPU slots. */
static double draw_cpu(zrng *r, double most)
{
  static const double req[] = {1, 1, 1, 0.5, 0.25, 2, 0.99, 4};
  double v = ZR_PICK(r, req);
  while (v > most)
    v /= 2;
  return v;
}

/* A row size @p ratio times @p from: a power of two between @p lo and @p hi
 * for binary cases (exact cuts), else three decimal digits. */
static double draw_row_size(const zcase *z, double from, double ratio, double lo, double hi)
{
  double v = fmin(fmax(from * ratio, lo), hi);
  if (z->binary)
    return fmin(fmax(exp2(round(log2(v))), lo), hi);
  return round_size(v);
}

/* The expansions and shrinks of the transforms (1-based), and the granule. */
static void draw_ratios(zcase *z, zrng *r, int ntrans, double ratio[SL_MAX_OPS])
{
  static const int expand_big[] = {2, 3, 4, 8, 16, 32}, expand_small[] = {2, 4, 8};
  static const int shrink[] = {2, 4, 8};
  double cum = 1, cap = z->small ? 16 : 64;
  z->granule = 1;
  ratio[0] = 1;
  for (int i = 1; i <= ntrans; i++) {
    double x = zr_unif(r);
    ratio[i] = 1;
    if (x < 0.22) {
      int e = z->small ? ZR_PICK(r, expand_small) : ZR_PICK(r, expand_big);
      if (cum * e <= cap)
        ratio[i] = e;
    } else if (x < 0.37) {
      int d = ZR_PICK(r, shrink);
      if (z->granule * d <= 16) {
        ratio[i] = 1.0 / d;
        z->granule *= d;
      }
    }
    cum *= ratio[i];
  }
}

static void name_op(sl_op_spec *op, int i, double ratio)
{
  const char *verb;
  if (op->kind == SL_OP_SOURCE)
    verb = op->read_bytes_per_row > 0 ? "read" : "gen";
  else if (ratio < 1)
    verb = "filter";
  else if (ratio > 1)
    verb = "explode";
  else if (op->gpu > 0)
    verb = op->kind == SL_OP_MAP_BATCHES ? "infer" : "gpumap";
  else
    verb = op->kind == SL_OP_MAP_BATCHES ? "batch" : "transform";
  if (op->kind == SL_OP_SOURCE)
    snprintf(op->name, sizeof op->name, "%s", verb);
  else
    snprintf(op->name, sizeof op->name, "%s%d", verb, i);
}

static void add_label(sl_accel_set *a, const char *label)
{
  size_t len = strnlen(label, SL_NAME_MAX - 1);
  memcpy(a->names[a->n], label, len);
  a->names[a->n][len] = '\0';
  a->n++;
}

/* Resources, kind, pin and concurrency of transform @p op. */
static void draw_transform_shape(const zcase *z, zrng *r, sl_op_spec *op)
{
  static const double gpu_req[] = {1, 1, 1, 0.5, 0.25, 2};
  static const double share[] = {0.25, 0.5, 1};
  const sl_cluster *c = &z->c;
  int gpus[SL_MAX_GROUPS], ngpus = 0;
  for (int g = 0; g < c->ngroups; g++)
    if (c->groups[g].gpu > 0)
      gpus[ngpus++] = g;
  if (ngpus > 0 && zr_chance(r, 0.45)) {
    const sl_node_group *host = &c->groups[gpus[zr_int(r, 0, ngpus - 1)]];
    op->gpu = ZR_PICK(r, gpu_req);
    while (op->gpu > host->gpu)
      op->gpu /= 2;
    op->cpu = host->cpu > 0 && zr_chance(r, 0.3) ? draw_cpu(r, host->cpu) : 0;
    op->kind = zr_chance(r, 0.8) ? SL_OP_MAP_BATCHES : SL_OP_MAP;
    if (host->accelerator[0] && zr_chance(r, 0.4)) {
      add_label(&op->accel, host->accelerator);
      /* sometimes "any of two": another labelled group may take it too */
      for (int k = 0; k < ngpus && zr_chance(r, 0.3); k++) {
        const sl_node_group *o = &c->groups[gpus[k]];
        if (o != host && o->accelerator[0] && op->accel.n < SL_MAX_ACCELS &&
            !sl_accel_set_has(&op->accel, o->accelerator))
          add_label(&op->accel, o->accelerator);
      }
    }
  } else {
    op->cpu = draw_cpu(r, max_cpu(c));
    op->kind = zr_chance(r, 0.3) ? SL_OP_MAP_BATCHES : SL_OP_MAP;
  }
  if (op->kind == SL_OP_MAP_BATCHES && zr_chance(r, 0.25)) {
    int n = (int)floor(tasks_at_once(c, op) * ZR_PICK(r, share));
    op->concurrency = n < 1 ? 1 : n;
  }
}

/* The pipeline's shape: operators, requests, sizes. Costs come later. */
static void draw_pipeline(zcase *z, zrng *r)
{
  static const double part_big[] = {1, 2, 4, 8, 16, 32, 64, 128};       /* MB or MiB */
  static const double part_small[] = {64, 128, 256, 512, 1024};         /* KB or KiB */
  static const double src_cpu[] = {1, 1, 1, 0.5, 0.25, 2};
  static const double read_share[] = {1, 0.5, 0.25};
  sl_workload *w = &z->w;
  int nops = zr_int(r, 2, 6), ntrans = nops - 1;
  double ratio[SL_MAX_OPS];
  draw_ratios(z, r, ntrans, ratio);
  z->binary = z->granule > 1 || zr_chance(r, 0.3);
  double unit = z->small ? (z->binary ? SL__KIB : 1e3) : (z->binary ? SL__MIB : 1e6);
  double part = (z->small ? ZR_PICK(r, part_small) : ZR_PICK(r, part_big)) * unit;
  w->target_partition_bytes = part;
  snprintf(w->name, sizeof w->name, "case-%03d", z->index);
  w->seed = z->seed;
  z->spread = zr_chance(r, 0.15);
  /* Rows never exceed 2 partitions, nor, where shrinks need whole
   * multiples, part / granule; never below 64 bytes nor part / 2^14. */
  double hi = z->granule > 1 ? part / z->granule : 2 * part;
  double lo = fmax(64, part / 16384);
  double most_cpu = 0;
  for (int g = 0; g < z->c.ngroups; g++)
    most_cpu = fmax(most_cpu, z->c.groups[g].cpu);

  sl_op_spec *src = &w->ops[0];
  src->kind = SL_OP_SOURCE;
  snprintf(src->kernel, sizeof src->kernel, "generate");
  src->rows_out_per_row = 1;
  src->cpu = ZR_PICK(r, src_cpu);
  while (src->cpu > most_cpu)
    src->cpu /= 2;
  src->out_row_bytes = draw_row_size(z, part, exp2(-zr_unif(r) * (z->small ? 8 : 12)) * 2, lo, hi);
  if (zr_chance(r, 0.5))
    src->read_bytes_per_row = z->binary ? src->out_row_bytes * ZR_PICK(r, read_share)
                                        : round_size(src->out_row_bytes * ZR_PICK(r, read_share));
  int rows = (int)lround(zr_logu(r, 1, z->small ? 16 : 64));
  src->rows_per_task = (int64_t)rows * z->granule;
  src->tasks = (int64_t)lround(z->small ? zr_logu(r, 8, 60) : zr_logu(r, 50, 2000));
  name_op(src, 0, 1);

  double in = src->out_row_bytes;
  for (int i = 1; i <= ntrans; i++) {
    sl_op_spec *op = &w->ops[i];
    snprintf(op->kernel, sizeof op->kernel, "sleep");
    draw_transform_shape(z, r, op);
    op->rows_out_per_row = ratio[i];
    int lg = ratio[i] > 1 ? zr_int(r, -4, 1) : zr_int(r, -3, 3);
    if (i == ntrans && zr_chance(r, 0.4))
      lg = -zr_int(r, 6, 14); /* a prediction: small next to its input */
    op->out_row_bytes = draw_row_size(z, in, exp2(lg), lo, hi);
    if (op->kind == SL_OP_MAP_BATCHES) {
      /* batches of up to 4 partitions' worth of input, and whole granules */
      double most = floor(4 * part / in);
      int b = z->granule, top = z->small ? 64 : 1024;
      int steps = zr_int(r, 0, 10);
      for (int k = 0; k < steps && 2.0 * b <= most && 2 * b <= top; k++)
        b *= 2;
      op->batch_size = b;
    }
    name_op(op, i, ratio[i]);
    in = op->out_row_bytes;
  }
  sl_op_spec *sink = &w->ops[nops];
  sink->kind = SL_OP_SINK;
  snprintf(sink->name, sizeof sink->name, "sink");
  sink->rows_out_per_row = 1;
  w->nops = nops + 1;
  z->parts_per_slot = round_sig(z->small ? zr_logu(r, 1.5, 6) : zr_logu(r, 0.5, 4), 2);
}

/* Store budgets: parts_per_slot target partitions per slot of a node,
 * within 4 to 64 partitions. */
static void set_budgets(zcase *z)
{
  z->budget_min = 64;
  z->budget_max = 4;
  for (int g = 0; g < z->c.ngroups; g++) {
    const sl_node_group *gr = &z->c.groups[g];
    long b = lround((gr->cpu + gr->gpu) * z->parts_per_slot);
    z->budget[g] = b < 4 ? 4 : b > 64 ? 64 : (int)b;
    z->budget_min = z->budget[g] < z->budget_min ? z->budget[g] : z->budget_min;
    z->budget_max = z->budget[g] > z->budget_max ? z->budget[g] : z->budget_max;
  }
}

static int build_plan(const zcase *z, sl_plan *p)
{
  sl_plan_opts o = {0};
  return sl_plan_build(p, &z->w, &o, NULL, 0);
}

static double plan_tasks(const sl_plan *p)
{
  double n = 0;
  for (int i = 0; i < p->nops; i++)
    n += sl_plan_expected_tasks(p, i);
  return n;
}

/* Bytes every operator writes over the job. */
static double plan_bytes(const sl_plan *p)
{
  double b = 0;
  for (int i = 0; i < p->nops; i++)
    b += sl_plan_rows_in(p, i) * p->ops[i].rows_out_per_row * p->ops[i].out_row_bytes;
  return b;
}

/* Halves the rows @p op writes (powers of two stay exact); false at the floor. */
static bool halve_rows(const zcase *z, sl_op_spec *op)
{
  double lo = fmax(64, z->w.target_partition_bytes / 16384);
  if (op->out_row_bytes / 2 < lo)
    return false;
  op->out_row_bytes = z->binary ? op->out_row_bytes / 2 : round_size(op->out_row_bytes / 2);
  if (op->kind == SL_OP_SOURCE && op->read_bytes_per_row > op->out_row_bytes)
    op->read_bytes_per_row = op->out_row_bytes;
  return true;
}

/* One step towards a task output of at most half the smallest store, the
 * partition of a run without dynamic partitioning (streaming-nopart,
 * batch), where a task takes its producer's whole output, so expansions
 * compound: fewer rows per read task, smaller rows, smaller batches. False
 * when every task output fits, or nothing is left to shrink. */
static bool shrink_task_outputs(zcase *z, const sl_plan *p)
{
  double limit = z->budget_min * z->w.target_partition_bytes / 2;
  double whole = 0; /* rows of a whole upstream task output (no dynamic partitioning) */
  for (int k = 0; k < p->nops; k++) {
    const sl_pop *o = &p->ops[k];
    double in = k == 0 ? (double)o->rows_per_task : whole;
    if (o->kind == SL_OP_MAP_BATCHES && o->batch_size > in)
      in = o->batch_size; /* it gathers whole partitions up to a batch */
    whole = in * o->rows_out_per_row;
    double typical = sl_plan_typical_rows(p, k) * o->rows_out_per_row * o->out_row_bytes;
    if (fmax(typical, whole * o->out_row_bytes) <= limit)
      continue;
    sl_op_spec *src = &z->w.ops[0], *last = &z->w.ops[o->first + o->nfused - 1];
    if (k == 0 && src->rows_per_task > z->granule) {
      src->rows_per_task = src->rows_per_task / 2 / z->granule * z->granule;
      if (src->rows_per_task < z->granule)
        src->rows_per_task = z->granule;
      return true;
    }
    if (halve_rows(z, last))
      return true;
    if (last->kind == SL_OP_MAP_BATCHES && last->batch_size >= 2 * z->granule) {
      last->batch_size /= 2;
      return true;
    }
  }
  return false;
}

/* Fewer read tasks (then fewer rows per task, then no expansion) until the
 * plan expects at most the cap of tasks and, for a small case, 256 MB; then
 * task outputs within half a node's store where they can be. */
static int fit_size(zcase *z)
{
  double cap = z->small ? SL_ZOO_MAX_TASKS_SMALL : SL_ZOO_MAX_TASKS;
  double bytes_cap = z->small ? 256e6 : INFINITY;
  int64_t least = z->small ? 2 : 8;
  sl_op_spec *src = &z->w.ops[0];
  sl_plan p;
  int rc;
  for (int iter = 0; iter < 200; iter++) {
    if ((rc = build_plan(z, &p)))
      return rc;
    if (!shrink_task_outputs(z, &p))
      break;
  }
  for (int iter = 0; iter < 64; iter++) {
    if ((rc = build_plan(z, &p)))
      return rc;
    double tasks = plan_tasks(&p), bytes = plan_bytes(&p);
    if (tasks <= cap && bytes <= bytes_cap)
      return 0;
    double f = fmin(cap / tasks, bytes_cap / bytes) * 0.9;
    if (src->tasks > least) {
      int64_t t = (int64_t)floor((double)src->tasks * f);
      src->tasks = t < least ? least : t < src->tasks ? t : src->tasks - 1;
    } else if (src->rows_per_task > z->granule) {
      src->rows_per_task = src->rows_per_task / 2 / z->granule * z->granule;
      if (src->rows_per_task < z->granule)
        src->rows_per_task = z->granule;
    } else {
      bool cut = false;
      for (int i = 1; i < z->w.nops && !cut; i++)
        if (z->w.ops[i].rows_out_per_row > 1) {
          z->w.ops[i].rows_out_per_row = 1;
          cut = true;
        }
      if (!cut)
        return SL_EINVAL;
    }
  }
  return SL_EINVAL;
}

/* Places a static placement (static, stream) deals out: on every node,
 * floor(slots / the class's largest request) (models/policy_stream.c). */
static int static_positions(const zcase *z, const sl_plan *p, bool gpu, int *nops)
{
  double req = 0;
  *nops = 0;
  for (int k = 0; k < p->nops; k++)
    if ((p->ops[k].gpu > 0) == gpu) {
      req = fmax(req, gpu ? p->ops[k].gpu : p->ops[k].cpu);
      (*nops)++;
    }
  int n = 0;
  for (int g = 0; g < z->c.ngroups && req > 0; g++) {
    const sl_node_group *gr = &z->c.groups[g];
    n += gr->count * (int)floor((gpu ? gr->gpu : gr->cpu) / req + 1e-9);
  }
  return n;
}

/* More slots per node until a static placement can give every physical
 * operator an instance (one more for the CPU class, where GPU operators
 * may take CPUs too): a pipeline longer than the cluster is wide runs only
 * under the dynamic models, and would say nothing about the others. */
static int widen_nodes(zcase *z)
{
  for (int iter = 0; iter < 8; iter++) {
    sl_plan p;
    int rc = build_plan(z, &p), ncpu, ngpu;
    if (rc)
      return rc;
    bool cpu_short = static_positions(z, &p, false, &ncpu) < ncpu + (ncpu > 0);
    bool gpu_short = static_positions(z, &p, true, &ngpu) < ngpu;
    if (!cpu_short && !gpu_short)
      return 0;
    for (int g = 0; g < z->c.ngroups; g++) {
      sl_node_group *gr = &z->c.groups[g];
      if (cpu_short && gr->cpu > 0 && gr->cpu < 128)
        gr->cpu *= 2;
      if (gpu_short && gr->gpu > 0 && gr->gpu < 16)
        gr->gpu *= 2;
    }
  }
  return 0; /* as wide as the zoo goes: static and stream will say so */
}

/* The physical operator that runs logical operator @p i. */
static int phys_of(const sl_plan *p, int i)
{
  for (int k = 0; k < p->nops; k++)
    if (i >= p->ops[k].first && i < p->ops[k].first + p->ops[k].nfused)
      return k;
  return p->nops - 1;
}

/* Costs at an arbitrary scale: operator i's work is a random share (5% to
 * 100%) of what its resource class can do, split between per-row,
 * per-task, per-batch and per-byte charges. */
static void draw_costs(zcase *z, zrng *r)
{
  sl_plan p;
  if (build_plan(z, &p))
    return;
  sl_workload *w = &z->w;
  double reach = 1; /* rows reaching operator i per source row */
  double in_bytes = 0;
  for (int i = 0; i < w->nops && w->ops[i].kind != SL_OP_SINK; i++) {
    sl_op_spec *op = &w->ops[i];
    int k = phys_of(&p, i);
    double rows = (double)p.source_rows * reach;
    double tasks = fmax(1, sl_plan_expected_tasks(&p, k));
    double bytes = op->kind == SL_OP_SOURCE ? op->read_bytes_per_row : in_bytes;
    double work = zr_logu(r, 0.05, 1) * class_capacity(&z->c, op) * 100;
    double f_task = zr_chance(r, op->kind == SL_OP_SOURCE ? 0.5 : 0.3) ? 0.02 + 0.18 * zr_unif(r) : 0;
    double f_batch = op->kind == SL_OP_MAP_BATCHES && zr_chance(r, 0.5) ? 0.05 + 0.25 * zr_unif(r) : 0;
    double f_mb = bytes > 0 && zr_chance(r, 0.35) ? 0.1 + 0.4 * zr_unif(r) : 0;
    double sum = f_task + f_batch + f_mb;
    if (sum > 0.9) {
      f_task *= 0.9 / sum;
      f_batch *= 0.9 / sum;
      f_mb *= 0.9 / sum;
      sum = 0.9;
    }
    op->time_per_row = work * (1 - sum) / rows;
    op->time_per_task = work * f_task / tasks;
    if (f_batch > 0) {
      double per_task = ceil(sl_plan_typical_rows(&p, k) / op->batch_size);
      op->time_per_batch = work * f_batch / (tasks * per_task);
    }
    if (f_mb > 0)
      op->time_per_byte = work * f_mb / (rows * bytes);
    if (z->spread && zr_chance(r, 0.6))
      op->time_spread = round_sig(0.1 + 0.3 * zr_unif(r), 2);
    reach *= op->rows_out_per_row;
    in_bytes = op->out_row_bytes;
  }
}

static int draft_bound(const zcase *z, sl_bound *b);

/* More read tasks until the job is throughput-bound (area at least 3x the
 * critical path), as far as the task cap allows: a cluster far wider than
 * the job measures the latency of one task, not a schedule. */
static int lengthen(zcase *z)
{
  double cap = z->small ? SL_ZOO_MAX_TASKS_SMALL : SL_ZOO_MAX_TASKS;
  double bytes_cap = z->small ? 256e6 : INFINITY;
  for (int iter = 0; iter < 4; iter++) {
    sl_bound b;
    sl_plan p;
    int rc = draft_bound(z, &b);
    if (rc || (rc = build_plan(z, &p)))
      return rc;
    if (b.area_s >= 3 * b.whole_expansion_path_s)
      return 0;
    double f = fmin(3.3 * b.whole_expansion_path_s / b.area_s, 0.9 * fmin(cap / plan_tasks(&p), bytes_cap / plan_bytes(&p)));
    int64_t t = (int64_t)floor((double)z->w.ops[0].tasks * f);
    if (t <= z->w.ops[0].tasks)
      return 0;
    z->w.ops[0].tasks = t;
  }
  return 0;
}

static void scale_costs(sl_workload *w, double f)
{
  for (int i = 0; i < w->nops; i++) {
    sl_op_spec *op = &w->ops[i];
    op->time_per_task *= f;
    op->time_per_row *= f;
    op->time_per_batch *= f;
    op->time_per_byte *= f;
    op->time_setup *= f;
  }
}

/* The bound a draft is sized by: slots, caps and storage, not the NICs,
 * which are sized afterwards from the traffic at this bound; with a source
 * row's whole expansion in one task on its path, as the critical path was
 * when the generator was made (sl_bound.whole_expansion_path_s), so that
 * every seed keeps its cases. */
static int draft_bound(const zcase *z, sl_bound *b)
{
  sl_plan p;
  int rc = build_plan(z, &p);
  if (!rc && !(rc = sl_bound_compute_rate(&p, &z->c, b)))
    b->jct_s = fmax(b->jct_s, b->whole_expansion_path_s);
  return rc;
}

/* Bytes that cross between physical operators (and from storage) per second
 * at the target, per node: what the NICs must carry where placement is
 * oblivious (a share (n-1)/n of it leaves the node that made it). */
static double traffic_per_node(const zcase *z)
{
  sl_plan p;
  if (build_plan(z, &p))
    return 0;
  int n = 0;
  for (int g = 0; g < z->c.ngroups; g++)
    n += z->c.groups[g].count;
  double bytes = (double)p.source_rows * p.ops[0].read_bytes_per_row;
  for (int k = 1; k < p.nops; k++)
    bytes += sl_plan_rows_in(&p, k) * p.ops[k].in_row_bytes;
  return n > 1 ? bytes * (n - 1) / n / n / z->target_s : 0;
}

/* Costs scaled to the target bound; storage, NICs, stores and memory. */
static int size_cluster(zcase *z, zrng *r)
{
  static const double nic_mult[] = {0.5, 1, 1, 2};
  sl_bound b;
  z->target_s = z->small ? zr_logu(r, 2.5, 4.5) : zr_logu(r, 20, 300);
  int rc = draft_bound(z, &b);
  if (rc)
    return rc;
  scale_costs(&z->w, z->target_s / b.jct_s);

  const sl_op_spec *src = &z->w.ops[0];
  double read_rate = (double)(src->tasks * src->rows_per_task) * src->read_bytes_per_row / z->target_s;
  double f = zr_chance(r, 0.3) ? 0.6 + 0.4 * zr_unif(r) : zr_logu(r, 1.5, 10);
  if (read_rate > 0) {
    z->c.storage_bps = round_bw(fmax(read_rate * f, 1e6 / 8));
    z->storage_factor = z->c.storage_bps / read_rate;
  }
  z->c.storage_latency_s = 10e-3;
  z->c.backbone_bps = 100e9 / 8;
  z->c.latency_s = 50e-6;

  double need = traffic_per_node(z);
  double nf = zr_chance(r, 0.25) ? zr_logu(r, 0.5, 1.5) : zr_logu(r, 3, 50);
  z->nic_factor = 0;
  for (int g = 0; g < z->c.ngroups; g++) {
    sl_node_group *gr = &z->c.groups[g];
    double nic = need > 0 ? need * nf * ZR_PICK(r, nic_mult) : 10e9 / 8;
    gr->nic_bps = round_bw(fmin(fmax(nic, 100e6 / 8), 400e9 / 8));
    if (need > 0 && (z->nic_factor == 0 || gr->nic_bps / need < z->nic_factor))
      z->nic_factor = gr->nic_bps / need;
  }

  for (int g = 0; g < z->c.ngroups; g++) {
    sl_node_group *gr = &z->c.groups[g];
    gr->store_bytes = z->budget[g] * z->w.target_partition_bytes;
    gr->memory_bytes = 4 * gr->store_bytes;
    if (!z->binary)
      gr->memory_bytes = round_size(gr->memory_bytes);
    gr->max_count = gr->count;
  }
  sl_plan p;
  if ((rc = build_plan(z, &p)) || (rc = sl_bound_compute(&p, &z->c, &b)))
    return rc;
  z->bound_s = b.jct_s;
  snprintf(z->bottleneck, sizeof z->bottleneck, "%s", b.bottleneck);
  return 0;
}

/* Set-ups of the operators that stand for actors: those on a GPU and
 * those that take batches, each with chance 0.7, half to five times its
 * typical task. A stream of draws of its own: a zoo with set-ups is the
 * zoo without them, plus the set-ups. */
static void draw_setups(zcase *z)
{
  sl_plan p;
  if (!z->setups || build_plan(z, &p))
    return;
  zrng r = {z->seed ^ 0x5e7095e7095e7095ULL};
  for (int i = 0; i < z->w.nops && z->w.ops[i].kind != SL_OP_SINK; i++) {
    sl_op_spec *op = &z->w.ops[i];
    bool actor = op->gpu > 0 || op->kind == SL_OP_MAP_BATCHES;
    double u = zr_unif(&r);
    if (!actor || !zr_chance(&r, 0.7))
      continue;
    int k = phys_of(&p, i);
    double task = sl_plan_task_time(&p.ops[k], sl_plan_typical_rows(&p, k));
    op->time_setup = round_sig(task * (0.5 + 4.5 * u), 3);
  }
}

static int draw_case(zcase *z, int index, uint64_t zoo_seed, bool small, bool setups)
{
  memset(z, 0, sizeof *z);
  z->index = index;
  z->seed = sl_zoo_case_seed(zoo_seed, index);
  z->small = small;
  z->setups = setups;
  zrng r = {z->seed};
  draw_cluster(z, &r);
  draw_pipeline(z, &r);
  snprintf(z->c.name, sizeof z->c.name, "case-%03d", index);
  int rc = widen_nodes(z);
  if (rc)
    return rc;
  set_budgets(z);
  if ((rc = fit_size(z)))
    return rc;
  draw_costs(z, &r);
  if ((rc = lengthen(z)))
    return rc;
  rc = size_cluster(z, &r);
  draw_setups(z);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

static void put_time(FILE *f, const char *key, double s)
{
  char buf[64];
  if (s > 0) {
    fmt_time(buf, sizeof buf, s);
    fprintf(f, "%s = %s\n", key, buf);
  }
}

static void put_size(FILE *f, const zcase *z, const char *key, double b)
{
  char buf[64];
  fmt_size(buf, sizeof buf, b, z->binary);
  fprintf(f, "%s = %s\n", key, buf);
}

/* One comment line per operator: what it is, in words. */
static void comment_op(FILE *f, const zcase *z, const sl_op_spec *op)
{
  char res[256], sz[64], rd[64], tasks[32];
  sl_resources_format(op->cpu, op->gpu, &op->accel, res, sizeof res);
  fmt_size(sz, sizeof sz, op->out_row_bytes, z->binary);
  if (op->kind == SL_OP_SOURCE) {
    fmt_count(tasks, sizeof tasks, (double)op->tasks);
    fprintf(f, "#   %-12s source, %s: %s tasks x %lld rows of %s", op->name, res, tasks,
            (long long)op->rows_per_task, sz);
    if (op->read_bytes_per_row > 0) {
      fmt_size(rd, sizeof rd, op->read_bytes_per_row, z->binary);
      fprintf(f, ", each read from storage (%s)", rd);
    } else {
      fprintf(f, ", generated");
    }
    fprintf(f, "\n");
    return;
  }
  fprintf(f, "#   %-12s %s, %s", op->name, sl_op_kind_name(op->kind), res);
  if (op->rows_out_per_row > 1)
    fprintf(f, ", 1 -> %g rows", op->rows_out_per_row);
  else if (op->rows_out_per_row < 1)
    fprintf(f, ", keeps 1 row in %g", 1 / op->rows_out_per_row);
  if (op->batch_size > 0)
    fprintf(f, ", batches of %d", op->batch_size);
  if (op->concurrency > 0)
    fprintf(f, ", at most %d at once", op->concurrency);
  fprintf(f, "; rows out of %s\n", sz);
}

static void write_op(FILE *f, const zcase *z, const sl_op_spec *op)
{
  char buf[SL_MAX_ACCELS * SL_NAME_MAX + 8];
  fprintf(f, "\n[%s]\nkind = %s\n", op->name, sl_op_kind_name(op->kind));
  if (op->kind == SL_OP_SINK)
    return;
  fprintf(f, "kernel = %s\n", op->kernel);
  fprintf(f, "cpu = %g\n", op->cpu);
  if (op->gpu > 0)
    fprintf(f, "gpu = %g\n", op->gpu);
  if (op->accel.n > 0) {
    sl_accel_set_format(&op->accel, buf, sizeof buf);
    fprintf(f, "accelerator = %s\n", buf);
  }
  if (op->kind == SL_OP_SOURCE) {
    fprintf(f, "tasks = %lld\nrows_per_task = %lld\n", (long long)op->tasks, (long long)op->rows_per_task);
    put_size(f, z, "row_bytes", op->out_row_bytes);
    if (op->read_bytes_per_row > 0)
      put_size(f, z, "read_bytes_per_row", op->read_bytes_per_row);
  } else {
    if (op->rows_out_per_row != 1)
      fprintf(f, "rows_out_per_row = %g\n", op->rows_out_per_row);
    put_size(f, z, "out_row_bytes", op->out_row_bytes);
    if (op->batch_size > 0)
      fprintf(f, "batch_size = %d\n", op->batch_size);
  }
  put_time(f, "time_per_task", op->time_per_task);
  put_time(f, "time_per_row", op->time_per_row);
  put_time(f, "time_per_batch", op->time_per_batch);
  put_time(f, "time_per_mb", op->time_per_byte * 1e6);
  put_time(f, "time_setup", op->time_setup);
  if (op->time_spread > 0)
    fprintf(f, "time_spread = %g\n", op->time_spread);
  if (op->concurrency > 0)
    fprintf(f, "concurrency = %d\n", op->concurrency);
}

static void write_workload(FILE *f, const zcase *z, uint64_t zoo_seed)
{
  const sl_workload *w = &z->w;
  char part[64], src_rows[32], sink_rows[32];
  sl_plan p;
  double tasks = 0, sink = 0;
  if (build_plan(z, &p) == 0) {
    tasks = plan_tasks(&p);
    sink = p.sink_rows;
  }
  const sl_op_spec *src = &w->ops[0];
  fmt_count(src_rows, sizeof src_rows, (double)(src->tasks * src->rows_per_task));
  fmt_count(sink_rows, sizeof sink_rows, sink);
  fmt_size(part, sizeof part, w->target_partition_bytes, z->binary);
  fprintf(f, "# sluice zoo, seed %llu, case %d%s, case seed %llu. Generated by\n"
             "# `sluice zoo`: regenerate it rather than edit it. Run it on its cluster:\n"
             "#   sluice sim %s.ini --cluster %s.cluster.ini --model streaming\n#\n",
          (unsigned long long)zoo_seed, z->index, z->small ? " (small)" : "",
          (unsigned long long)z->seed, w->name, w->name);
  fprintf(f, "# %d operators and a sink, %s source rows -> %s sink rows:\n", w->nops - 1, src_rows,
          sink_rows);
  for (int i = 0; i < w->nops - 1; i++)
    comment_op(f, z, &w->ops[i]);
  if (z->measured_s > 0)
    fprintf(f, "# Costs are scaled so that a run takes about %.0f s (measured: a simulated\n"
               "# streaming run; x%.3g of the costs that would put the bound at %.3g s).\n",
            z->measured_s, z->run_scale, z->target_s);
  fprintf(f, "# Target partition %s; about %.0f tasks. The bound on its cluster is\n"
             "# about %.3g s (bottleneck %s; `sluice bound` says exactly)%s.\n",
          part, tasks, z->bound_s, z->bottleneck,
          z->spread ? "; task times vary (time_spread), so a run may end a little\n"
                      "# before the bound, which holds for mean task times"
                    : "");
  fprintf(f, "\n[workload]\nname = %s\ndescription = zoo seed %llu case %d\n", w->name,
          (unsigned long long)zoo_seed, z->index);
  fprintf(f, "target_partition = %s\nseed = %llu\n", part, (unsigned long long)w->seed);
  for (int i = 0; i < w->nops; i++)
    write_op(f, z, &w->ops[i]);
}

static void comment_group(FILE *f, const zcase *z, const sl_node_group *g)
{
  fprintf(f, "#   %-12s %d node%s x ", g->name, g->count, g->count == 1 ? "" : "s");
  if (g->cpu > 0)
    fprintf(f, "%g CPU%s", g->cpu, g->gpu > 0 ? " + " : "");
  if (g->gpu > 0)
    fprintf(f, "%g GPU%s%s%s", g->gpu, g->accelerator[0] ? " (" : "", g->accelerator,
            g->accelerator[0] ? ")" : "");
  if (g->cpu > 0 && g->cpu_speed != 1)
    fprintf(f, ", CPU speed %g", g->cpu_speed);
  if (g->gpu > 0 && g->gpu_speed != 1)
    fprintf(f, ", GPU speed %g", g->gpu_speed);
  if (z->gkind[g - z->c.groups] == ZG_GPU_ONLY)
    fprintf(f, ", no CPU slot");
  fprintf(f, "; store %d partitions\n", z->budget[g - z->c.groups]);
}

static void write_cluster(FILE *f, const zcase *z, uint64_t zoo_seed)
{
  const sl_cluster *c = &z->c;
  char part[64], bw[64];
  int nodes = 0;
  for (int g = 0; g < c->ngroups; g++)
    nodes += c->groups[g].count;
  fmt_size(part, sizeof part, z->w.target_partition_bytes, z->binary);
  fprintf(f, "# sluice zoo, seed %llu, case %d%s: the cluster of %s.ini.\n", (unsigned long long)zoo_seed,
          z->index, z->small ? " (small)" : "", z->w.name);
  fprintf(f, "# %d node%s in %d group%s. Store budgets of %g target partitions (%s) per\n"
             "# slot, 4 to 64 per node:\n",
          nodes, nodes == 1 ? "" : "s", c->ngroups, c->ngroups == 1 ? "" : "s", z->parts_per_slot, part);
  for (int g = 0; g < c->ngroups; g++)
    comment_group(f, z, &c->groups[g]);
  if (c->storage_bps > 0) {
    fmt_bw(bw, sizeof bw, c->storage_bps);
    fprintf(f, "# Storage %s, %.3gx the rate the source reads at the compute bound%s.\n", bw,
            z->storage_factor, z->storage_factor < 1 ? ": it binds, and the bound says so" : "");
  }
  if (nodes > 1)
    fprintf(f, "# NICs %.3gx the traffic an oblivious placement moves per node at the bound%s.\n",
            z->nic_factor, z->nic_factor < 1.5 ? ": transfers may bind, which the bound ignores" : "");
  fprintf(f, "\n[cluster]\nname = %s\ndescription = zoo seed %llu case %d: %d nodes in %d groups\n",
          c->name, (unsigned long long)zoo_seed, z->index, nodes, c->ngroups);
  if (c->storage_bps > 0) {
    fmt_bw(bw, sizeof bw, c->storage_bps);
    fprintf(f, "storage_bandwidth = %s\n", bw);
  }
  for (int g = 0; g < c->ngroups; g++) {
    const sl_node_group *gr = &c->groups[g];
    fprintf(f, "\n[group %s]\ncount = %d\ncpu = %g\n", gr->name, gr->count, gr->cpu);
    if (gr->gpu > 0)
      fprintf(f, "gpu = %g\n", gr->gpu);
    if (gr->accelerator[0])
      fprintf(f, "accelerator = %s\n", gr->accelerator);
    if (gr->cpu > 0 && gr->cpu_speed != 1)
      fprintf(f, "cpu_speed = %g\n", gr->cpu_speed);
    if (gr->gpu > 0 && gr->gpu_speed != 1)
      fprintf(f, "gpu_speed = %g\n", gr->gpu_speed);
    put_size(f, z, "memory", gr->memory_bytes);
    put_size(f, z, "store", gr->store_bytes);
    fmt_bw(bw, sizeof bw, gr->nic_bps);
    fprintf(f, "nic = %s\n", bw);
    if (sl_group_has_disk(gr)) {
      fmt_bw(bw, sizeof bw, gr->disk_read_bps);
      fprintf(f, "disk_bandwidth = %s\n", bw);
    }
    fprintf(f, "price_per_hour = %g\n", gr->price_per_hour);
  }
}

/* mkdir -p */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
  char path[1024];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    snprintf(err, errlen, "%s: path too long", dir);
    return SL_EINVAL;
  }
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char keep = *p;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      snprintf(err, errlen, "%s: cannot create directory: %s", path, strerror(errno));
      return SL_EIO;
    }
    *p = keep;
    if (!keep)
      break;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: not a directory", dir);
    return SL_EIO;
  }
  return 0;
}

typedef void (*writer_fn)(FILE *f, const zcase *z, uint64_t zoo_seed);

/* Writes DIR/NAME through a temporary (results/atomic_file.h). */
static int write_file(const char *dir, const char *name, writer_fn fn, const zcase *z,
                      uint64_t zoo_seed, char *err, size_t errlen)
{
  char path[1100];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  sl_atomic_file a;
  FILE *f = sl_atomic_open(&a, path, err, errlen);
  if (!f)
    return SL_EIO;
  fn(f, z, zoo_seed);
  return sl_atomic_commit(&a, true, err, errlen);
}

/* ------------------------------------------------------------------------ */
/* Checking what was written                                                 */
/* ------------------------------------------------------------------------ */

int sl_zoo_check(const char *workload, const char *cluster, sl_zoo_case *info, char *err,
                 size_t errlen)
{
  if (!workload || !cluster || !info)
    return SL_EINVAL;
  sl_workload *w = malloc(sizeof *w);
  sl_cluster c;
  sl_plan p;
  sl_bound b;
  char msg[512];
  int rc = SL_ENOMEM;
  if (!w) {
    snprintf(err, errlen, "%s: %s", workload, sl_strerror(rc));
    return rc;
  }
  if ((rc = sl_workload_load(workload, w, err, errlen)) < 0)
    goto free_workload;
  if ((rc = sl_cluster_load(cluster, &c, err, errlen)) < 0)
    goto free_workload;
  if ((rc = sl_check_feasible(w, &c, err, errlen)) < 0)
    goto free_cluster;
  sl_plan_opts o = {0};
  if ((rc = sl_plan_build(&p, w, &o, msg, sizeof msg)) < 0) {
    snprintf(err, errlen, "%s: %s", workload, msg);
    goto free_cluster;
  }
  if ((rc = sl_bound_compute(&p, &c, &b)) < 0) {
    snprintf(err, errlen, "%s on %s: bound: %s", workload, cluster, sl_strerror(rc));
    goto free_cluster;
  }
  info->ops = w->ops[w->nops - 1].kind == SL_OP_SINK ? w->nops - 1 : w->nops;
  info->physical_ops = p.nops;
  info->max_expansion = info->min_expansion = 1;
  info->pinned = false;
  for (int i = 1; i < info->ops; i++) {
    info->max_expansion = fmax(info->max_expansion, w->ops[i].rows_out_per_row);
    info->min_expansion = fmin(info->min_expansion, w->ops[i].rows_out_per_row);
    info->pinned = info->pinned || w->ops[i].accel.n > 0;
  }
  info->nodes = c.nnodes;
  info->groups = c.ngroups;
  info->gpu_only_groups = 0;
  info->budget_parts = INFINITY;
  info->budget_parts_max = 0;
  for (int g = 0; g < c.ngroups; g++) {
    const sl_node_group *gr = &c.groups[g];
    info->gpu_only_groups += gr->gpu > 0 && gr->cpu <= 0;
    info->budget_parts = fmin(info->budget_parts, gr->store_bytes / w->target_partition_bytes);
    info->budget_parts_max = fmax(info->budget_parts_max, gr->store_bytes / w->target_partition_bytes);
  }
  info->target_partition_bytes = w->target_partition_bytes;
  info->bound_s = b.jct_s;
  info->area_s = b.area_s;
  info->critical_path_s = b.critical_path_s;
  snprintf(info->bottleneck, sizeof info->bottleneck, "%s", b.bottleneck);
  info->tasks = plan_tasks(&p);
  info->source_rows = (double)p.source_rows;
  info->sink_rows = p.sink_rows;
  info->reads_storage = p.ops[0].read_bytes_per_row > 0;
  rc = 0;
free_cluster:
  sl_cluster_free(&c);
free_workload:
  free(w);
  return rc;
}

/* The ranges the zoo promises, on what the loaders read back. */
static int check_ranges(const sl_zoo_case *k, bool small, const char *path, char *err, size_t errlen)
{
  const char *what = NULL;
  double cap = small ? SL_ZOO_MAX_TASKS_SMALL : SL_ZOO_MAX_TASKS;
  if (k->ops < 2 || k->ops > 6)
    what = "operators out of 2..6";
  else if (k->nodes < 1 || k->nodes > 64)
    what = "nodes out of 1..64";
  else if (k->groups < 1 || k->groups > 4)
    what = "groups out of 1..4";
  else if (k->budget_parts < 4 - 1e-9 || k->budget_parts_max > 64 + 1e-9)
    what = "store budget out of 4..64 partitions per node";
  else if (k->tasks > cap)
    what = "more tasks than the cap";
  else if (!(k->bound_s > 0) || !isfinite(k->bound_s))
    what = "no finite bound";
  else if (fabs(k->sink_rows - round(k->sink_rows)) > 1e-6)
    what = "a fractional number of sink rows";
  else if (k->max_expansion > 32 || k->min_expansion < 0.125)
    what = "an expansion out of 1/8..32";
  if (!what)
    return 0;
  snprintf(err, errlen, "%s: generated case breaks the zoo's ranges: %s (a bug of workloads/zoo.c)",
           path, what);
  return SL_EINVAL;
}

static void describe(sl_zoo_case *k, const zcase *z)
{
  char ops[160] = "", budget[32];
  if (k->budget_parts_max > k->budget_parts)
    snprintf(budget, sizeof budget, "%g-%g", k->budget_parts, k->budget_parts_max);
  else
    snprintf(budget, sizeof budget, "%g", k->budget_parts);
  size_t used = 0;
  for (int i = 0; i < z->w.nops - 1 && used < sizeof ops; i++) {
    const sl_op_spec *op = &z->w.ops[i];
    char tag[64] = "";
    if (op->gpu > 0)
      snprintf(tag, sizeof tag, op->cpu > 0 ? " gpu+cpu" : " gpu");
    if (op->accel.n > 0)
      snprintf(tag + strlen(tag), sizeof tag - strlen(tag), "@%s", op->accel.names[0]);
    if (op->rows_out_per_row > 1)
      snprintf(tag + strlen(tag), sizeof tag - strlen(tag), " x%g", op->rows_out_per_row);
    else if (op->rows_out_per_row < 1)
      snprintf(tag + strlen(tag), sizeof tag - strlen(tag), " 1/%g", 1 / op->rows_out_per_row);
    if (op->batch_size > 0)
      snprintf(tag + strlen(tag), sizeof tag - strlen(tag), " b%d", op->batch_size);
    int n = snprintf(ops + used, sizeof ops - used, "%s%s%s", i ? " > " : "", op->name, tag);
    if (n < 0)
      break;
    used += (size_t)n;
  }
  snprintf(k->description, sizeof k->description,
           "%s; %d nodes/%d groups%s; budget %s parts/node; %s-bound%s%s%s%s", ops, k->nodes,
           k->groups, k->gpu_only_groups ? " (gpu-only group)" : "", budget,
           k->critical_path_s > k->area_s ? "latency" : k->bottleneck,
           k->critical_path_s > k->area_s / 3 ? "; short job (critical path > area/3)" : "",
           k->storage_binds ? "; storage binds" : "", k->nic_tight ? "; nic tight" : "",
           k->spread ? "; spread" : "");
  if (k->measured_s > 0)
    snprintf(k->description + strlen(k->description), sizeof k->description - strlen(k->description),
             "; measured run %.3g s", k->measured_s);
}

static int write_index(const char *dir, const sl_zoo_case *cases, int n, uint64_t zoo_seed,
                       char *err, size_t errlen)
{
  char path[1100];
  snprintf(path, sizeof path, "%s/index.csv", dir);
  sl_atomic_file a;
  FILE *f = sl_atomic_open(&a, path, err, errlen);
  if (!f)
    return SL_EIO;
  fprintf(f, "case,seed,zoo_seed,ops,physical_ops,max_expansion,min_expansion,nodes,groups,"
             "gpu_only_groups,budget_parts_per_node,budget_parts_max,target_partition_bytes,bound_s,area_s,"
             "critical_path_s,bottleneck,"
             "tasks,reads_storage,storage_binds,nic_tight,pinned,spread,measured_run_s,description\n");
  for (int i = 0; i < n; i++) {
    const sl_zoo_case *k = &cases[i];
    fprintf(f, "%s,%llu,%llu,%d,%d,%g,%g,%d,%d,%d,%g,%g,%.0f,%.3f,%.3f,%.3f,%s,%.0f,%d,%d,%d,%d,%d,%.3g,\"%s\"\n",
            k->name, (unsigned long long)k->seed, (unsigned long long)zoo_seed, k->ops,
            k->physical_ops, k->max_expansion, k->min_expansion, k->nodes, k->groups,
            k->gpu_only_groups, k->budget_parts, k->budget_parts_max, k->target_partition_bytes, k->bound_s,
            k->area_s, k->critical_path_s,
            k->bottleneck, k->tasks, k->reads_storage, k->storage_binds, k->nic_tight, k->pinned,
            k->spread, k->measured_s, k->description);
  }
  return sl_atomic_commit(&a, true, err, errlen);
}

/* Draws, writes and checks case @p index into @p out. */
static int one_case(const sl_zoo_opts *o, const char *dir, int index, zcase *z, sl_zoo_case *out,
                    char *err, size_t errlen)
{
  char wname[64], cname[64], wpath[1100], cpath[1100];
  int rc = draw_case(z, index, o->seed, o->small, o->setups);
  if (rc) {
    snprintf(err, errlen, "case %d of seed %llu: cannot size the draft: %s (a bug of "
             "workloads/zoo.c)", index, (unsigned long long)o->seed, sl_strerror(rc));
    return rc;
  }
  snprintf(wname, sizeof wname, "%s.ini", z->w.name);
  snprintf(cname, sizeof cname, "%s.cluster.ini", z->w.name);
  snprintf(wpath, sizeof wpath, "%s/%s", dir, wname);
  snprintf(cpath, sizeof cpath, "%s/%s", dir, cname);
  z->run_scale = 1;
  z->measured_s = 0;
  for (int round = 0;; round++) {
    if ((rc = write_file(dir, wname, write_workload, z, o->seed, err, errlen)) ||
        (rc = write_file(dir, cname, write_cluster, z, o->seed, err, errlen)))
      return rc;
    /* measured_s set: the files were just written again to say it */
    if (!o->measure || !(o->run_target_s > 0) || z->measured_s > 0)
      break;
    double m = o->measure(wpath, cpath, o->measure_ctx);
    if (!(m > 0))
      break;
    double want = o->run_target_s / m;
    double f = fmin(fmax(want, 1.0 / 16 / z->run_scale), 16 / z->run_scale);
    if (round == 3 || fabs(log(want)) <= log(1.25) || fabs(log(f)) < 1e-3) {
      z->measured_s = m;
      continue;
    }
    z->run_scale *= f;
    scale_costs(&z->w, f);
    sl_bound b;
    if ((rc = draft_bound(z, &b)) < 0)
      return rc;
    z->bound_s = b.jct_s;
  }
  memset(out, 0, sizeof *out);
  out->index = index;
  out->seed = z->seed;
  snprintf(out->name, sizeof out->name, "%s", z->w.name);
  if ((rc = sl_zoo_check(wpath, cpath, out, err, errlen)) < 0)
    return rc;
  out->storage_binds = out->reads_storage && z->storage_factor < 1;
  out->nic_tight = out->nodes > 1 && z->nic_factor > 0 && z->nic_factor < 1.5;
  out->spread = z->spread;
  out->measured_s = z->measured_s;
  out->run_scale = z->run_scale;
  describe(out, z);
  return check_ranges(out, o->small, wpath, err, errlen);
}

int sl_zoo_write(const sl_zoo_opts *o, const char *dir, sl_zoo_case *cases, char *err, size_t errlen)
{
  char scratch[8];
  if (!err || errlen == 0) {
    err = scratch;
    errlen = sizeof scratch;
  }
  err[0] = '\0';
  if (!o || !dir || !*dir) {
    snprintf(err, errlen, "sl_zoo_write: no options or no directory");
    return SL_EINVAL;
  }
  if (o->count < 1 || o->count > SL_ZOO_MAX_COUNT) {
    snprintf(err, errlen, "count %d is out of 1..%d", o->count, SL_ZOO_MAX_COUNT);
    return SL_EINVAL;
  }
  if (o->seed > (uint64_t)INT64_MAX) {
    snprintf(err, errlen, "seed %llu is above 2^63 - 1", (unsigned long long)o->seed);
    return SL_EINVAL;
  }
  int rc = make_dirs(dir, err, errlen);
  if (rc)
    return rc;
  sl_zoo_case *all = malloc(sizeof *all * (size_t)o->count);
  zcase *z = malloc(sizeof *z);
  if (!all || !z) {
    snprintf(err, errlen, "%s: %s", dir, sl_strerror(SL_ENOMEM));
    rc = SL_ENOMEM;
    goto free_all;
  }
  for (int i = 0; i < o->count && rc == 0; i++)
    rc = one_case(o, dir, i + 1, z, &all[i], err, errlen);
  if (rc == 0)
    rc = write_index(dir, all, o->count, o->seed, err, errlen);
  if (rc == 0 && cases)
    memcpy(cases, all, sizeof *all * (size_t)o->count);
free_all:
  free(z);
  free(all);
  return rc;
}
