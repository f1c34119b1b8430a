/*
 * Profile files: one [profile] section of typed keys (workloads/typed_ini.h),
 * documented by `sluice spec` from the table below.
 */
#include "profile_spec.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "models/error.h"

#define SECTION "profile"
#define FIELD(f) offsetof(sl_profile, f)

static const sl_ini_key profile_keys[] = {
  {.name = "name", .type = SL_INI_NAME, .size = SL_NAME_MAX, .offset = FIELD(name), .dflt_doc = "the file's name",
   .doc = "what summaries and reports call the profile"},
  {.name = "description", .type = SL_INI_TEXT, .doc = "the system it stands for, for people"},
  {.name = "task", .type = SL_INI_TIME, .unit = "s per task", .range = SL_INI_NONNEG, .dflt = "0",
   .offset = FIELD(task_s), .doc = "each task's submission, scheduling and completion, on its slot"},
  {.name = "put", .type = SL_INI_TIME, .unit = "s per partition", .range = SL_INI_NONNEG, .dflt = "0",
   .offset = FIELD(put_s), .doc = "each output partition put into the store"},
  {.name = "get", .type = SL_INI_TIME, .unit = "s per partition", .range = SL_INI_NONNEG, .dflt = "0",
   .offset = FIELD(get_s), .doc = "each input partition fetched from the store"},
  {.name = "put_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_NONNEG, .dflt = "0",
   .offset = FIELD(put_bps), .dflt_doc = "0: output is not copied",
   .doc = "copying a task's output bytes into the store"},
  {.name = "get_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_NONNEG, .dflt = "0",
   .offset = FIELD(get_bps), .dflt_doc = "0: input is read in place",
   .doc = "copying a task's input bytes out of the store"},
  {.name = "serialize_bandwidth", .type = SL_INI_BANDWIDTH, .unit = "B/s", .range = SL_INI_NONNEG, .dflt = "0",
   .offset = FIELD(serialize_bps), .dflt_doc = "0: no language boundary",
   .doc = "serializing a task's input and output bytes across a language boundary (a Python operator "
          "in a JVM system)"},
  {.name = NULL},
};

static const sl_ini_schema profile_schema = {
  .title = "Profile file: [profile]",
  .intro = "What `--profile FILE` of `sluice run` and `sluice sim` reads (`--profile NAME` reads "
           "`profiles/NAME.ini`): the costs a real system adds to the operators' own work, folded into "
           "every operator's costs so that both engines and the bound charge them. Per-partition costs are "
           "spread over the rows of a typical partition. Write beside each number where it comes from.",
  .keys = profile_keys,
};

const sl_ini_schema *sl_profile_schema(void)
{
  return &profile_schema;
}

typedef struct {
  sl_profile *out;
  int section_line; /* 0 until [profile] is seen */
  bool in_profile;
} reading;

static int on_section(sl_ini *ini, const char *name, int line)
{
  reading *r = sl_ini_user(ini);
  if (strcmp(name, SECTION) != 0)
    return sl_ini_fail(ini, line, "unknown section [%s] (a profile file has one section, [%s])", name, SECTION);
  if (r->section_line)
    return sl_ini_fail(ini, line, "duplicate section [%s] (first at line %d)", SECTION, r->section_line);
  r->section_line = line;
  r->in_profile = true;
  return 0;
}

static int on_key(sl_ini *ini, const char *key, const char *value, int line)
{
  reading *r = sl_ini_user(ini);
  char names[320];
  const sl_ini_key *k = sl_ini_find_key(profile_keys, key);
  if (!k)
    return sl_ini_fail(ini, line, "unknown key '%s' in [%s] (expected %s)", key, SECTION,
                       sl_ini_key_names(profile_keys, -1, names, sizeof names));
  return sl_ini_set(ini, k, r->out, value, line) != 0 ? sl_ini_error(ini) : 0;
}

static int on_end(sl_ini *ini)
{
  (void)ini;
  return 0;
}

/* "profiles/raydata.ini" -> "raydata" */
static void name_from_path(const char *path, char *name, size_t n)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strcspn(base, ".");
  snprintf(name, n, "%.*s", (int)(len < n ? len : n - 1), base);
}

int sl_profile_load(const char *path, sl_profile *out, char *err, size_t errlen)
{
  static const sl_ini_ops ops = {on_section, on_key, on_end};
  sl_profile p;
  sl_profile_ideal(&p);
  p.name[0] = '\0';
  int rc = sl_ini_set_defaults(profile_keys, &p, err, errlen);
  reading r = {.out = &p};
  if (rc == 0)
    rc = sl_ini_parse(path, &ops, &r, err, errlen);
  if (rc == 0 && !r.section_line) {
    snprintf(err, errlen, "%s:1: no [%s] section", path, SECTION);
    rc = SL_EPARSE;
  }
  if (rc < 0) {
    sl_profile_ideal(out);
    return rc;
  }
  if (!p.name[0])
    name_from_path(path, p.name, sizeof p.name);
  *out = p;
  return 0;
}

char *sl_profile_path(const char *arg, const char *data_dir, char *buf, size_t n)
{
  size_t len = strlen(arg);
  bool file = strchr(arg, '/') || (len > 4 && strcmp(arg + len - 4, ".ini") == 0);
  if (file)
    snprintf(buf, n, "%s", arg);
  else
    snprintf(buf, n, "%s/profiles/%s.ini", data_dir, arg);
  return buf;
}
