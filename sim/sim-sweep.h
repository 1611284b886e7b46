/* sim-sweep.h — every layout of a job, pruned, simulated and ranked.
 *
 * Enumeration: every TP x CP x PP x DP factorisation of the GPUs (TP within a
 * node, dividing the heads and KV heads; PP dividing the layers), micro-batch
 * sizes 1, 2, 4, 8, the 1F1B and interleaved schedules (v = 2, 3, 4, as the
 * layers allow), no or full recomputation, ZeRO 0-3.  Before anything is
 * simulated, layouts are pruned when they are invalid, dominated (GPipe:
 * 1F1B's time with more memory; selective recomputation under fused
 * attention: the same as none; TP > 1 without sequence parallelism: the same
 * traffic with more memory) or out of memory by the ledger.
 *
 * The rest are simulated on a GLib thread pool; each layout's result has its
 * own slot, so the ranking is the same for any thread count.  A layout with
 * more than 4p micro-batches (p at least 4) is screened from two shorter
 * simulations (2p and 4p micro-batches; the step grows linearly with m once
 * the pipeline is full), and the top K are then simulated in full.
 */
#pragma once

#include <glib.h>

#include "sim-model.h"
#include "sim-run.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* a sweep's row is a run's summary (sim-run.h), pruned or simulated */
typedef SimRunSummary SimSweepRow;

typedef struct _SimSweep SimSweep;

/* a sweep of model's layouts; global_batch 0: the model's published batch
 * (8 micro-batches per stage where it has none).  Free with sim_sweep_free. */
SimSweep *sim_sweep_new (const SimModel *model, guint64 global_batch);
void sim_sweep_free (SimSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimSweep, sim_sweep_free)

/* a cluster of `nodes` nodes to enumerate on (the sweep owns topo) */
void sim_sweep_add_cluster (SimSweep *sw, SimTopology *topo, int nodes);
const SimTopology *sim_sweep_cluster (const SimSweep *sw, int nodes);

/* enumerate every layout on every cluster added; the rows, in order
 * (SimSweepRow*, owned by the sweep) */
void sim_sweep_enumerate (SimSweep *sw);
GPtrArray *sim_sweep_rows (const SimSweep *sw);
/* keep only rows i with i % shards == shard - 1 */
void sim_sweep_keep_shard (SimSweep *sw, int shard, int shards);

/* evaluate every row on `threads` threads; progress (may be NULL) is called
 * from the worker threads after each row with the count done and the total */
typedef void (*SimSweepProgress) (int done, int total, gpointer data);
void sim_sweep_run (SimSweep *sw, int threads, SimSweepProgress progress, gpointer data);

/* the rows with a time first, by tokens/s, then the rest in enumeration
 * order; the top `exact` screened leaders are simulated in full first (0:
 * none); scaling efficiencies are filled in.  A new array of borrowed
 * rows. */
GPtrArray *sim_sweep_rank (SimSweep *sw, int exact);

/* rank rows read back from shard files the same way (no simulation) */
void sim_sweep_rank_rows (GPtrArray *rows);

/* the JSON of rows (schema sim-sweep/1) */
char *sim_sweep_rows_json (GPtrArray *rows, const char *topology, const char *model, int shard,
                           int shards);
/* append the rows of one shard file's text to rows (SimSweepRow*, free with
 * sim_run_summary_free); *topology and *model are set from the first file and
 * checked against later ones.  SIM_ERROR_USAGE on another schema or sweep. */
gboolean sim_sweep_rows_read (const char *path, const char *text, char **topology, char **model,
                              GPtrArray *rows, GError **error);

G_END_DECLS
