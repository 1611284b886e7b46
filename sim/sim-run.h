/* sim-run.h — one layout evaluated: plan, memory ledger, remedies, time.
 * What the single run, `sim compare` and `sim sweep` share. */
#pragma once

#include <glib.h>

#include "sim-iteration.h"
#include "sim-memory.h"

G_BEGIN_DECLS

typedef struct {
  char *label;          /* the plan as the user wrote it, or as the sweep made it */
  SimPlan *plan;        /* resolved */
  SimMemory *memory;
  GPtrArray *remedies;  /* char* */
  SimIteration *time;   /* NULL when not simulated */
  gboolean extrapolated;/* time from shorter simulations (sweep screening) */
} SimRun;

typedef enum {
  SIM_RUN_TIME = 1 << 0,        /* simulate the iteration */
  SIM_RUN_FULL = 1 << 1,        /* every replica */
  SIM_RUN_REMEDIES = 1 << 2,    /* try remedies when it does not fit */
} SimRunFlags;

/* plan: unresolved, taken over by the run; NULL with error when the plan is
 * impossible */
SimRun *sim_run_evaluate (const SimTopology *topo, const SimModel *model, SimPlan *plan,
                          const char *label, guint flags, GError **error);
void sim_run_free (SimRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimRun, sim_run_free)

/* Diagnosis lines a person can act on, from the three walls of DESIGN.md
 * section 4: which wall binds (memory, compute, communication), the
 * out-of-memory case with the remedies that apply, and the pipeline bubble.
 * `reference` (may be NULL) is the smallest layout that fits, for the
 * scaling efficiency E = t1 k1 / (k tk). */
GPtrArray *sim_run_diagnose (const SimRun *run, const SimRun *reference);

/* E = (tokens/s per GPU) / (the reference's tokens/s per GPU) */
double sim_run_scaling_efficiency (const SimRun *run, const SimRun *reference);

/* the wall that binds: "memory", "compute" or "communication" */
const char *sim_run_wall (const SimRun *run);

G_END_DECLS
