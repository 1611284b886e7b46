/* sim-report.h — the text report and the JSON document of one run.
 * Both read finished inputs and results; neither writes files. */
#pragma once

#include <glib.h>

#include "sim-iteration.h"
#include "sim-json.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

G_BEGIN_DECLS

typedef struct {
  const SimTopology *topo;
  const SimModel *model;
  const SimPlan *plan;      /* resolved */
  const SimMemory *memory;
  GPtrArray *remedies;      /* char*, may be empty */
  const SimIteration *time; /* NULL when not simulated */
  GPtrArray *diagnosis;     /* char*, may be NULL */
  const char *wall;         /* "memory", "compute", "communication" or NULL */
} SimReportInput;

/* Each returns new text (caller g_free()s); never fails; any thread. */
char *sim_report_text (const SimReportInput *in);
/* schema "sim-result/1", pretty-printed, ends with a newline */
char *sim_report_json (const SimReportInput *in);
/* the resolved plan as the object "plan" of j: degrees, batch, schedule,
 * options, rank order and the defaults applied (sim-result/1, sim compare);
 * appends to j, never fails */
void sim_report_json_plan (SimJson *j, const SimPlan *p);

G_END_DECLS
