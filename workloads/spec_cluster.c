/*
 * The cluster spec reader: the keys of [cluster] and of a [group NAME]
 * section, and the reader that turns a file into an expanded sl_cluster,
 * filling each group's defaults that depend on other keys (the store, the
 * disks, the search bounds) and checking them once its section is
 * complete. Apart from the workload reader (spec_workload.c), which shares
 * only helpers with it; a node-types file is read here too.
 */
#include "spec.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/error.h"
#include "spec_internal.h"
#include "typed_ini.h"
#include "units.h"

#define SL__MAX_NODES (1 << 20)

#define SL__CL(field) offsetof(sl_cluster, field)
#define SL__GR(field) offsetof(sl_node_group, field)

const sl_ini_key sl__cluster_keys[] = {
  {.name = "name", .type = SL_INI_NAME, .offset = SL__CL(name), .size = SL_NAME_MAX,
   .dflt_doc = "the file's name, without folder and extension", .doc = "the cluster's name in outputs"},
  {.name = "description", .type = SL_INI_TEXT, .doc = "free text for readers; ignored"},
  {.name = "backbone", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__CL(backbone_bps), .dflt = "100Gbps", .doc = "the network all nodes share"},
  /* 0.05ms rather than 50us: it parses to exactly the 50e-6 specs have always had */
  {.name = "latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG, .offset = SL__CL(latency_s),
   .dflt = "0.05ms", .doc = "per hop between nodes (within a cloud availability zone by default)"},
  {.name = "storage_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__CL(storage_bps), .dflt_doc = "none: no storage link is modelled",
   .doc = "the link to remote storage (S3-like) that sources' read_bytes_per_row share"},
  {.name = "storage_latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_latency_s), .dflt = "10ms", .doc = "to the first byte of a read from remote storage"},
  {.name = "storage_get_size", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_get_bytes), .dflt = "0",
   .doc = "what one GET from remote storage moves at most: a source task's read is ceil(bytes / size) ranged "
          "GETs (boto3's downloads: 8MiB); 0: one GET per task"},
  {.name = "storage_put_size", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_put_bytes), .dflt = "0",
   .doc = "what one PUT to remote storage moves at most: a partition a sink uploads is ceil(bytes / size) "
          "parts of a multipart upload; 0: one PUT per partition"},
  {.name = "storage_get_price", .type = SL_INI_PRICE, .unit = "$ per 1,000 requests", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_get_price), .dflt = "0",
   .doc = "what remote storage bills for 1,000 GETs (S3 Standard: $0.0004), in summary.csv's request_cost_usd"},
  {.name = "storage_put_price", .type = SL_INI_PRICE, .unit = "$ per 1,000 requests", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_put_price), .dflt = "0",
   .doc = "what remote storage bills for 1,000 PUTs (S3 Standard: $0.005)"},
  {.name = "storage_gb_month_price", .type = SL_INI_PRICE, .unit = "$ per GB-month", .range = SL_INI_NONNEG,
   .offset = SL__CL(storage_gb_month_price), .dflt = "0",
   .doc = "what remote storage bills to hold a GB for a month of 730 hours (S3 Standard: $0.023): a run pays "
          "for the bytes its sources read and its sink wrote there over its whole length"},
  {.name = NULL},
};

const sl_ini_key sl__group_keys[] = {
  {.name = "count", .type = SL_INI_INT, .unit = "nodes", .range = SL_INI_ONE, .offset = SL__GR(count),
   .dflt = "1", .doc = "identical nodes in the group"},
  {.name = "cpu", .type = SL_INI_REAL, .unit = "slots", .range = SL_INI_NONNEG, .offset = SL__GR(cpu),
   .required = 1, .doc = "CPU slots per node (logical, as in Ray: 8 slots of a sleep-bound operator fit 2 cores)"},
  {.name = "gpu", .type = SL_INI_REAL, .unit = "slots", .range = SL_INI_NONNEG, .offset = SL__GR(gpu),
   .dflt = "0", .doc = "GPU slots per node"},
  {.name = "memory", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS, .offset = SL__GR(memory_bytes),
   .required = 1, .doc = "host memory per node"},
  {.name = "store", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS, .offset = SL__GR(store_bytes),
   .dflt_doc = "30% of memory (Ray's object store)", .doc = "the partition store's budget per node; at most memory"},
  {.name = "cpu_speed", .type = SL_INI_REAL, .range = SL_INI_POS, .offset = SL__GR(cpu_speed), .dflt = "1",
   .doc = "speed of a CPU slot relative to the cost model's speed 1 (2: tasks take half the time)"},
  {.name = "gpu_speed", .type = SL_INI_REAL, .range = SL_INI_POS, .offset = SL__GR(gpu_speed), .dflt = "1",
   .doc = "speed of a GPU slot relative to the cost model's speed 1"},
  {.name = "nic", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS, .offset = SL__GR(nic_bps),
   .dflt = "10Gbps", .doc = "each node's network interface"},
  {.name = "price_per_hour", .type = SL_INI_PRICE, .unit = "$ per node-hour", .range = SL_INI_NONNEG,
   .offset = SL__GR(price_per_hour), .dflt = "0", .doc = "what a node costs, for `sluice capacity`"},
  {.name = "accelerator", .type = SL_INI_NAME, .offset = SL__GR(accelerator), .size = SL_NAME_MAX,
   .dflt_doc = "none", .doc = "a label for the group's GPUs (`a100`) that operators' `accelerator` may name"},
  {.name = "disk_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__GR(disk_read_bps), .dflt_doc = "no disk",
   .doc = "read bandwidth of one local disk (and write, unless disk_write_bandwidth says otherwise): a "
          "simulation charges spilled partitions to it, written and read back, and the executor waits as long on "
          "top of its real disk"},
  {.name = "disk_write_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_POS,
   .offset = SL__GR(disk_write_bps), .dflt_doc = "disk_bandwidth", .doc = "write bandwidth of one local disk"},
  {.name = "disks", .type = SL_INI_INT, .unit = "disks", .range = SL_INI_ONE, .offset = SL__GR(disks),
   .dflt_doc = "1 with disk_bandwidth", .doc = "local disks per node, spills striped over them (bandwidths add)"},
  {.name = "disk_capacity", .type = SL_INI_SIZE, .unit = "B", .range = SL_INI_POS,
   .offset = SL__GR(disk_capacity_bytes), .dflt_doc = "unbounded",
   .doc = "size of one local disk: a node whose spills would overflow its disks fails the job (out of memory "
          "and disk)"},
  {.name = "disk_latency", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = SL__GR(disk_latency_s), .dflt = "0",
   .doc = "how long one access keeps a local disk busy before its bytes flow (an HDD's seek and rotation, "
          "some 8 ms; an NVMe's 0.1 ms): a simulation charges it per spilled partition written and per "
          "block read back, so reducers reading many small blocks pay for each"},
  {.name = "elastic", .type = SL_INI_CHOICE, .offset = SL__GR(elastic), .choices = sl__bool_names, .dflt = "false",
   .doc = "`true`: a pool of nodes rented by the second (remote CPU workers): they start out of service, and "
          "the run acquires and releases them as `--autoplace` decides, billing each from its acquisition to "
          "its release; `count` is the most it may hold"},
  {.name = "provision_delay", .type = SL_INI_TIME, .unit = "s", .range = SL_INI_NONNEG,
   .offset = SL__GR(provision_delay_s), .dflt = "0",
   .doc = "elastic groups: how long a node takes from its acquisition (when billing starts) to service"},
  {.name = "hosts", .type = SL_INI_LABELS, .dflt_doc = "none",
   .doc = "the machines the group's nodes run on, one per node in order (`10.0.0.2, 10.0.0.3` or host names), "
          "where `sluice run --launch ssh` starts their workers"},
  {.name = "min", .type = SL_INI_INT, .unit = "nodes", .range = SL_INI_NONNEG, .offset = SL__GR(min_count),
   .dflt = "0", .doc = "fewest nodes of the group a capacity search tries"},
  {.name = "max", .type = SL_INI_INT, .unit = "nodes", .range = SL_INI_ONE, .offset = SL__GR(max_count),
   .dflt_doc = "count", .doc = "most nodes of the group a capacity search tries"},
  {.name = NULL},
};

typedef struct {
  sl_cluster *c;
  int cluster_line;     /* the [cluster] header, 0 when there is none */
  sl_node_group *group; /* the group being read, NULL in [cluster] */
} sl__cl_parser;

static int sl__cl_group(sl_ini *ini, sl__cl_parser *p, const char *name, int line)
{
  sl_cluster *c = p->c;
  char err[256];
  if (!*name)
    return sl_ini_fail(ini, line, "a node group needs a name: [group NAME]");
  if (sl_ini_check_name(ini, "node group name", name, SL_NAME_MAX, line) != 0)
    return sl_ini_error(ini);
  for (int g = 0; g < c->ngroups; g++)
    if (strcmp(c->groups[g].name, name) == 0)
      return sl_ini_fail(ini, line, "duplicate node group '%s' (first defined at line %d)", name, c->groups[g].line);
  if (c->ngroups == SL_MAX_GROUPS)
    return sl_ini_fail(ini, line, "more than %d node groups", SL_MAX_GROUPS);
  sl_node_group *g = &c->groups[c->ngroups++];
  memset(g, 0, sizeof *g);
  g->line = line;
  if (sl_ini_set_defaults(sl__group_keys, g, err, sizeof err) != 0)
    return sl_ini_fail(ini, line, "%s", err);
  /* sl_ini_check_name() has bounded the length; the precision tells the compiler. */
  snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, name);
  p->group = g;
  return 0;
}

static int sl__cl_section(sl_ini *ini, const char *name, int line)
{
  sl__cl_parser *p = sl_ini_user(ini);
  p->group = NULL;
  if (strcmp(name, "cluster") == 0) {
    if (p->cluster_line)
      return sl_ini_fail(ini, line, "duplicate section [cluster] (first at line %d)", p->cluster_line);
    p->cluster_line = line;
    return 0;
  }
  if (strncmp(name, "group", 5) == 0 && (name[5] == '\0' || isspace((unsigned char)name[5]))) {
    char group[SL__LINE_MAX];
    sl_ini_trim_copy(group, sizeof group, name + 5, strlen(name + 5));
    return sl__cl_group(ini, p, group, line);
  }
  return sl_ini_fail(ini, line, "unknown section [%s] (expected [cluster] or [group NAME])", name);
}

/* `hosts = a, b`: a machine per node, each a host name or an address. */
static int sl__cl_hosts(sl_ini *ini, sl_node_group *g, const char *value, int line)
{
  if (strlen(value) >= sizeof g->hosts)
    return sl_ini_fail(ini, line, "hosts: longer than %zu characters", sizeof g->hosts - 1);
  int n = 0;
  for (const char *s = value;; s++) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    char host[SL__LINE_MAX];
    sl_ini_trim_copy(host, sizeof host, s, len);
    if (!*host)
      return sl_ini_fail(ini, line, "hosts: an empty host in '%s' (expected 'host-a, host-b' or addresses)", value);
    if (sl_ini_check_name(ini, "host", host, SL_NAME_MAX, line) != 0)
      return sl_ini_error(ini);
    n++;
    if (!comma)
      break;
    s = comma;
  }
  snprintf(g->hosts, sizeof g->hosts, "%s", value);
  g->hosts_count = n;
  return 0;
}

static int sl__cl_key(sl_ini *ini, const char *key, const char *value, int line)
{
  sl__cl_parser *p = sl_ini_user(ini);
  char names[320];
  if (p->group) {
    const sl_ini_key *k = sl_ini_find_key(sl__group_keys, key);
    if (!k)
      return sl_ini_fail(ini, line, "unknown key '%s' in node group '%s' (expected %s)", key, p->group->name,
                         sl_ini_key_names(sl__group_keys, -1, names, sizeof names));
    if (k->type == SL_INI_LABELS)
      return sl__cl_hosts(ini, p->group, value, line);
    return sl_ini_set(ini, k, p->group, value, line);
  }
  const sl_ini_key *k = sl_ini_find_key(sl__cluster_keys, key);
  if (!k)
    return sl_ini_fail(ini, line, "unknown key '%s' in [cluster] (expected %s)", key,
                       sl_ini_key_names(sl__cluster_keys, -1, names, sizeof names));
  return sl_ini_set(ini, k, p->c, value, line);
}

/* The group's section is complete: fill what depends on other keys, then check. */
static int sl__cl_end(sl_ini *ini)
{
  sl__cl_parser *p = sl_ini_user(ini);
  sl_node_group *g = p->group;
  char what[SL_NAME_MAX + 16];
  if (!g)
    return 0;
  snprintf(what, sizeof what, "node group '%s'", g->name);
  if (sl_ini_check_required(ini, sl__group_keys, -1, what, g->line) != 0)
    return sl_ini_error(ini);
  /* Ray gives the object store 30% of a node's memory by default. */
  int store = sl_ini_key_line(ini, "store");
  if (!store)
    g->store_bytes = 0.3 * g->memory_bytes;
  int hosts = sl_ini_key_line(ini, "hosts");
  if (hosts && g->hosts_count != g->count)
    return sl_ini_fail(ini, hosts, "hosts names %d machine%s for the %d node%s of group '%s' (one per node)",
                       g->hosts_count, g->hosts_count == 1 ? "" : "s", g->count, g->count == 1 ? "" : "s", g->name);
  if (g->store_bytes > g->memory_bytes) {
    char s[SL_FORMAT_MAX], m[SL_FORMAT_MAX];
    return sl_ini_fail(ini, store, "store (%s) is larger than memory (%s)", sl_format_size(g->store_bytes, s, sizeof s),
                       sl_format_size(g->memory_bytes, m, sizeof m));
  }
  if (g->cpu + g->gpu <= 0)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "cpu"), "node group '%s' has no CPU and no GPU slots", g->name);
  int disk = sl_ini_key_line(ini, "disk_bandwidth");
  static const char *const disk_keys[] = {"disk_write_bandwidth", "disks", "disk_capacity", "disk_latency"};
  for (size_t k = 0; !disk && k < sizeof disk_keys / sizeof *disk_keys; k++)
    if (sl_ini_key_line(ini, disk_keys[k]))
      return sl_ini_fail(ini, sl_ini_key_line(ini, disk_keys[k]), "'%s' needs 'disk_bandwidth' in node group '%s'",
                         disk_keys[k], g->name);
  if (disk) {
    if (!sl_ini_key_line(ini, "disk_write_bandwidth"))
      g->disk_write_bps = g->disk_read_bps;
    if (!sl_ini_key_line(ini, "disks"))
      g->disks = 1;
  }
  if (g->accelerator[0] && g->gpu <= 0)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "accelerator"), "node group '%s' names accelerator '%s' but has "
                       "no GPU slots (set gpu)", g->name, g->accelerator);
  if (!g->max_count)
    g->max_count = g->count;
  if (g->min_count > g->max_count)
    return sl_ini_fail(ini, sl_ini_key_line(ini, "min"), "min (%d) is larger than max (%d)", g->min_count,
                       g->max_count);
  return 0;
}

static int sl__cl_check(const sl__cl_parser *p, const char *path, char *err, size_t errlen)
{
  const sl_cluster *c = p->c;
  if (c->ngroups == 0) {
    sl__msg(err, errlen, "%s:%d: no node groups: a cluster needs at least one [group NAME] section", path,
            p->cluster_line ? p->cluster_line : 1);
    return SL_EPARSE;
  }
  long long nodes = 0;
  for (int g = 0; g < c->ngroups; g++)
    nodes += c->groups[g].count;
  if (nodes > SL__MAX_NODES) {
    sl__msg(err, errlen, "%s:%d: %lld nodes in all; at most %d", path, c->groups[c->ngroups - 1].line, nodes,
            SL__MAX_NODES);
    return SL_EPARSE;
  }
  return 0;
}

int sl_cluster_load(const char *path, sl_cluster *out, char *err, size_t errlen)
{
  static const sl_ini_ops ops = {sl__cl_section, sl__cl_key, sl__cl_end};
  if (!path || !out)
    return SL_EINVAL;
  if (err && errlen)
    err[0] = '\0';
  sl__cl_parser *p = calloc(1, sizeof *p + sizeof *p->c);
  if (!p) {
    sl__msg(err, errlen, "%s: %s", path, sl_strerror(SL_ENOMEM));
    memset(out, 0, sizeof *out);
    return SL_ENOMEM;
  }
  sl_cluster *c = (sl_cluster *)(p + 1);
  p->c = c;
  int rc = sl_ini_set_defaults(sl__cluster_keys, c, err, errlen);
  if (!rc)
    rc = sl_ini_parse(path, &ops, p, err, errlen);
  if (!rc)
    rc = sl__cl_check(p, path, err, errlen);
  if (!rc) {
    if (!c->name[0])
      sl__stem(c->name, sizeof c->name, path);
    snprintf(c->path, sizeof c->path, "%s", path);
    rc = sl_cluster_expand(c);
    if (rc)
      sl__msg(err, errlen, "%s: %s", path, sl_strerror(rc));
  }
  if (!rc)
    *out = *c;
  else
    memset(out, 0, sizeof *out);
  free(p);
  return rc;
}
