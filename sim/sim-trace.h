/* sim-trace.h — a finished iteration as a Chrome/Perfetto trace and as CSV.
 *
 * Trace: the JSON object format of the Trace Event Format ("traceEvents"),
 * which Perfetto and chrome://tracing open: a process per node, a thread
 * per GPU lane (compute, TP+CP, PP, DP), complete events ("ph": "X") in
 * microseconds, and a counter track of activation memory per GPU.
 * CSV: spans.csv (one span a line) and memory.csv (activation bytes over
 * time per stage).  Text only; the caller writes the files. */
#pragma once

#include <glib.h>

#include "sim-run.h"

#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-plan.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* Each returns new text (caller g_free()s) of a run with its time
 * simulated (run->time not NULL); never fails; any thread. */
char *sim_trace_json (const SimRun *run);
char *sim_trace_spans_csv (const SimRun *run);
char *sim_trace_memory_csv (const SimRun *run);

G_END_DECLS
