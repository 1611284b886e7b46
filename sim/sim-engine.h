/* sim-engine.h — the discrete-event kernel.
 *
 * The engine knows activities, resources and events, nothing about
 * transformers or NCCL.  Three kinds of activity:
 *   compute  occupies one stream for a fixed duration; a stream runs one
 *            activity at a time, in the order they became ready (ties by
 *            creation order);
 *   delay    takes a fixed time and no resource (latencies, joins);
 *   flow     moves bytes over a path of directed links, then waits the
 *            path latency.  Every link's bandwidth is shared max-min fairly
 *            (progressive filling) among the flows crossing it; a flow may
 *            also carry its own rate cap.  Shares are recomputed when a flow
 *            starts or ends, for the connected set of flows that share links
 *            with it, and only there.
 * An activity starts when all its predecessors have finished (and, for
 * compute, its stream is free).  Events are ordered by (time, insertion
 * sequence), so a run is deterministic; stale flow completions are dropped
 * by a version check when popped (as ns-3 cancels events).
 *
 * Build a graph with the add functions, then sim_engine_run() once; the
 * run owns its arrays and allocates nothing per event beyond amortised
 * growth of the event heap.
 *
 * Threads: an engine, and the SimNetwork and collectives built on it,
 * belong to one thread at a time; separate engines may run in parallel
 * (sim sweep does).  Misuse (a bad stream or link index, a second run) is
 * a programmer error caught by g_return_val_if_fail, not a GError.
 */
#pragma once

#include <glib.h>

#include "sim-time.h"

G_BEGIN_DECLS

typedef struct _SimEngine SimEngine;
typedef guint32 SimActivityId;

/* a new, empty engine (free with sim_engine_free); never fails */
SimEngine *sim_engine_new (void);
void sim_engine_free (SimEngine *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimEngine, sim_engine_free)

/* resources: each returns the new resource's index; never fails (add_link
 * returns -1 for a bandwidth <= 0) */
int sim_engine_add_stream (SimEngine *e);
int sim_engine_add_link (SimEngine *e, double bw_bytes_per_s); /* one direction */
int sim_engine_n_links (const SimEngine *e);
/* how many flows added since the last reset cross `link` (0 for a link no
 * flow uses yet); never fails */
guint32 sim_engine_link_flows (const SimEngine *e, int link);
/* forgets every stream, activity and dependency and the run, keeping the
 * links (idle again): the engine can be built on and run anew; never fails */
void sim_engine_reset (SimEngine *e);

/* activities, each returning its id; tag is free for the caller (results,
 * charts); never fail */
SimActivityId sim_engine_add_compute (SimEngine *e, int stream, SimTime duration, guint32 tag);
SimActivityId sim_engine_add_delay (SimEngine *e, SimTime duration, guint32 tag);
/* links[] is copied; max_rate_bytes_per_s <= 0 means no cap of its own */
SimActivityId sim_engine_add_flow (SimEngine *e, const int *links, int n_links, double bytes,
                                   double max_rate_bytes_per_s, SimTime latency, guint32 tag);
/* `after` starts only once `before` has finished */
void sim_engine_add_dep (SimEngine *e, SimActivityId after, SimActivityId before);

/* Run to completion, once.  FALSE with SIM_ERROR_PLAN when some activities
 * never start (their dependencies form a cycle: a bug in the caller). */
gboolean sim_engine_run (SimEngine *e, GError **error);

/* results, after sim_engine_run; start and end are -1 for an activity that
 * never started; never fail */
guint32 sim_engine_n_activities (const SimEngine *e);
SimTime sim_engine_start (const SimEngine *e, SimActivityId a);
SimTime sim_engine_end (const SimEngine *e, SimActivityId a);
guint32 sim_engine_tag (const SimEngine *e, SimActivityId a);
/* the links a flow crosses, in path order: how many (0 for a compute or a
 * delay) and the i-th; never fail */
int sim_engine_flow_n_links (const SimEngine *e, SimActivityId a);
int sim_engine_flow_link (const SimEngine *e, SimActivityId a, int i);
/* Append to links (a GArray of int) every link that some flow crosses,
 * each once, in the order the flows first cross them; never fails */
void sim_engine_flow_links (SimEngine *e, GArray *links);
/* the flows alone, in the order they were added (their activities
 * ascending): how many, and the i-th's activity; never fail */
guint32 sim_engine_n_flows (const SimEngine *e);
SimActivityId sim_engine_flow_activity (const SimEngine *e, guint32 i);
SimTime sim_engine_now (const SimEngine *e);
guint64 sim_engine_events (const SimEngine *e);       /* events processed */
guint64 sim_engine_reshares (const SimEngine *e);     /* flows whose rate was recomputed */

G_END_DECLS
