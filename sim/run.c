/*
 * One simulation from start to end: in a child process of its own
 * (child.c) with a fresh SimGrid, the core, the sink and the recorder
 * made, the cluster set up (setup.c), the driver started and SimGrid run;
 * then the summary filled, the outputs written and everything freed.
 * Also the simulator's options: their defaults and the core's options
 * they imply. Apart from the engine (engine.c), which is what runs in
 * between.
 */
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "models/bound.h"
#include "models/error.h"
#include "results/events.h"
#include "sim/child.h"
#include "sim/engine_internal.h"
#include "sim/platform.h"
#include "sim/sink.h"

static double now_wall(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int64_t splits_wrong(const sim *s)
{
  const sl_plan *p = s->plan;
  return sl_sim_sink_splits_wrong(s->sink, (double)p->ops[0].rows_per_task * p->ops[p->nops - 1].alpha_rows);
}

static void fill_summary(sim *s)
{
  sl_summary *m = &s->res->summary;
  const sl_plan *p = s->plan;
  sl_core_stats st;
  sl_core_get_stats(s->core, &st);
  bool complete = s->done && !s->failed && fabs(st.rows_delivered - p->sink_rows) < 0.5;
  /* the bound of the times charged, as a real run's is of its measured costs */
  const sl_plan *charged = s->o->charges ? s->o->charges : p;
  sl_summary_fill(m, s->core, charged, s->cluster, &s->o->core, "sim", s->end_time, st.rows_delivered, complete);
  snprintf(m->accelerator, sizeof m->accelerator, "simulated");
  sl_fault_log_finish(&s->fault_log, s->o->faults, s->core);
  m->faults_applied = s->res->faults_applied;
  if (s->o->faults)
    sl_fault_log_describe(&s->fault_log, s->o->faults, m->faults_not_applied, sizeof m->faults_not_applied);
  m->peak_rss_bytes = 0; /* the simulator's memory is not the job's; 0 keeps outputs replayable */
  m->sink_checksum = sl_sim_sink_checksum(s->sink);
  /* spills cost time only on a simulated disk (the group's, or --spill-bandwidth) */
  if (m->spilled_bytes > 0)
    m->spill_time = s->spilled_without_disk ? SL_SPILL_NOT_MODELLED : SL_SPILL_MODELLED;
  if (s->failed)
    snprintf(m->note, sizeof m->note, "%s", s->fail_note);
  else if (s->res->timed_out)
    snprintf(m->note, sizeof m->note, "stopped at the simulated time limit (%.6g s)", s->time_limit);
  else if (!s->done)
    snprintf(m->note, sizeof m->note, "the simulation ended before the job");
}

static void free_sim(sim *s)
{
  sl_core_free(s->core);
  sl_recorder_free(s->rec);
  sl_event_log_free(s->events);
  for (int n = 0; s->nodes && n < s->cluster->nnodes; n++)
    free(s->nodes[n].unreported);
  free(s->nodes);
  /* the simulation is over (or never ran): no actor waits on these now */
  for (int i = 0; s->slots && i < s->nslots; i++)
    if (s->slots[i].wake)
      sg_sem_destroy(s->slots[i].wake);
  if (s->driver_sem)
    sg_sem_destroy(s->driver_sem);
  for (int i = 0; s->slots && i < s->nslots; i++) {
    sl_sim_rows_free(&s->slots[i].in);
    free(s->slots[i].inputs);
  }
  free(s->slots);
  sl_sim_sink_free(s->sink);
}

static void simulate(const sl_sim_opts *o, sl_sim_result *r)
{
  sim s = {.o = o, .plan = o->plan, .cluster = o->cluster, .res = r, .last_sample = -1};
  sl_fault_log_init(&s.fault_log, o->faults);
  sl_sim_layout layout = {0};
  sl_bound b;
  const sl_plan *charged = o->charges ? o->charges : o->plan;
  bool have_bound = sl_bound_compute(charged, o->cluster, &b) == 0 && b.jct_s > 0;
  s.interval = o->sample_interval_s > 0 ? o->sample_interval_s : have_bound ? b.jct_s / 100 : 1;
  s.time_limit = o->time_limit_s > 0 ? o->time_limit_s : (have_bound ? 50 * b.jct_s : 0) + 3600;
  r->sample_interval_s = s.interval;
  sl_core_opts core = sl_sim_core_opts(o);
  core.no_decision_hash = !o->record_events; /* only the event log reads it */
  s.core = sl_core_new(o->plan, o->cluster, &core, r->err, sizeof r->err);
  if (!s.core) {
    r->code = SL_EINVAL;
    goto out;
  }
  s.sink = sl_sim_sink_new(o->plan->ops[0].tasks);
  s.rec = sl_recorder_new(charged, o->cluster, o->keep_tasks); /* its bound and spreads: the charged */
  if (o->record_events && (s.events = sl_event_log_new()) != NULL)
    sl_core_observe(s.core, sl_event_log_observe, s.events);
  if (!s.sink || !s.rec || (o->record_events && !s.events)) {
    r->code = SL_ENOMEM;
    snprintf(r->err, sizeof r->err, "out of memory");
    goto out;
  }
  if ((r->code = sl__sim_load_platform(&s, &layout, r->err, sizeof r->err)) < 0 ||
      (r->code = sl__sim_setup_nodes(&s, &layout, r->err, sizeof r->err)) < 0)
    goto out;
  s.driver_sem = sg_sem_init(0);
  sg_actor_t d = sg_actor_init("driver", s.driver_host);
  s.driver = d;
  sg_actor_set_data(d, &s);
  sg_actor_start(d, sl__sim_driver_main, 0, NULL);
  double t0 = now_wall();
  simgrid_run();
  r->wall_s = now_wall() - t0;
  fill_summary(&s);
  r->splits_wrong = splits_wrong(&s);
  if (r->code == 0 && o->out_dir &&
      sl_recorder_write(s.rec, &r->summary, o->out_dir, r->err, sizeof r->err) < 0)
    r->code = SL_EIO;
  if (r->code == 0 && s.events)
    r->code = sl_event_log_write(s.events, o->record_events, sl_core_decision_hash(s.core), r->err, sizeof r->err);
out:
  sl_sim_layout_free(&layout);
  free_sim(&s);
}

/* The child's work (sim/child.h): one simulation in a fresh SimGrid. */
static void child(void *ctx, void *result)
{
  const sl_sim_opts *o = ctx;
  sl_sim_result *r = result;
  int argc = 3;
  char *argv[] = {"sluice", "--log=root.thres:error", "--log=xbt_cfg.thres:critical", NULL};
  simgrid_init(&argc, argv);
  sl_sim_platform_configure(o->lazy_solver);
  simulate(o, r);
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    r->peak_rss_bytes = (double)ru.ru_maxrss * 1024;
}

sl_core_opts sl_sim_core_opts(const sl_sim_opts *o)
{
  sl_core_opts core = o->core;
  core.seed = o->seed;                       /* the spreads of task times, drawn by the core */
  core.stall_timeout_s = o->stall_timeout_s; /* the core watches for stalls */
  core.charges = o->charges;
  return core;
}

void sl_sim_opts_default(sl_sim_opts *o)
{
  memset(o, 0, sizeof *o);
  sl_core_opts_default(&o->core);
  o->seed = 1;
  o->keep_tasks = true;
}

int sl_sim_run(const sl_sim_opts *o, sl_sim_result *r)
{
  char err[sizeof r->err];
  if (sl_sim_child_run(child, (void *)o, r, sizeof *r, err, sizeof err) < 0) {
    snprintf(r->err, sizeof r->err, "%s", err);
    r->code = SL_EIO;
  }
  return r->code;
}
