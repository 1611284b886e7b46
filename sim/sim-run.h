/* sim-run.h — one layout evaluated: plan, memory ledger, remedies, time.
 * What the single run, `sim compare` and `sim sweep` share. */
#pragma once

#include <glib.h>

#include "sim-iteration.h"
#include "sim-memory.h"

G_BEGIN_DECLS

typedef struct {
  const SimTopology *topo; /* the cluster and model it ran on (not owned) */
  const SimModel *model;
  char *label;          /* the plan as the user wrote it, or as the sweep made it */
  SimPlan *plan;        /* resolved */
  SimMemory *memory;
  GPtrArray *remedies;  /* SimRemedy* */
  SimIteration *time;   /* NULL when not simulated */
  gboolean extrapolated;/* time from shorter simulations (sweep screening) */
} SimRun;

typedef enum {
  SIM_RUN_TIME = 1 << 0,        /* simulate the iteration */
  SIM_RUN_FULL = 1 << 1,        /* every replica */
  SIM_RUN_REMEDIES = 1 << 2,    /* try remedies when it does not fit */
} SimRunFlags;

/* plan: unresolved, taken over by the run (freed with it, and freed on
 * failure too).  Returns a new SimRun (free with sim_run_free), or NULL with
 * the error of sim_plan_resolve (SIM_ERROR_PLAN, SIM_ERROR_TOPOLOGY) or of
 * sim_iteration_run.  Any thread with shared const topo and model (sim
 * sweep evaluates several at once). */
SimRun *sim_run_evaluate (const SimTopology *topo, const SimModel *model, SimPlan *plan,
                          const char *label, guint flags, GError **error);
/* NULL is ignored */
void sim_run_free (SimRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimRun, sim_run_free)

/* Diagnosis lines a person can act on, from the three walls (memory,
 * compute, communication; docs/ARCHITECTURE.md): which wall binds, the
 * out-of-memory case with the remedies that apply, and the pipeline bubble.
 * `reference` (may be NULL) is the smallest layout that fits, for the
 * scaling efficiency E = t1 k1 / (k tk).  Returns a new array of char*
 * (caller g_ptr_array_unref()s); never fails; any thread. */
GPtrArray *sim_run_diagnose (const SimRun *run, const SimRun *reference);

/* E = (tokens/s per GPU) / (the reference's tokens/s per GPU); NAN when
 * either was not simulated or reference is NULL; any thread */
double sim_run_scaling_efficiency (const SimRun *run, const SimRun *reference);

/* the wall that binds: "memory", "compute" or "communication", or "none"
 * when the run fits but was not simulated (static strings); any thread */
const char *sim_run_wall (const SimRun *run);

/* sort runs (SimRun*): those that fit first, by tokens/s (a run without a
 * time counts 0), then those that do not, by peak memory; ties by label, so
 * the order is total; never fails; any thread on a private array */
void sim_run_rank (GPtrArray *runs);

G_END_DECLS
