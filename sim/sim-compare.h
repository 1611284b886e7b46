/* sim-compare.h — layouts of one job side by side (sim compare).
 * The plans' runs, ranked, with the global-batch policy that makes their
 * step times compare; the command line prints them, the C API writes
 * their JSON. */
#pragma once

#include <glib.h>

#include "sim-model.h"
#include "sim-run.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* Evaluate the n plan strings ("tp=8,pp=4,dp=2", each parsed by
 * sim_plan_request_parse_string) on topo and model, each timed with its remedies (SIM_RUN_TIME |
 * SIM_RUN_REMEDIES, with full SIM_RUN_FULL), and rank them (sim_run_rank:
 * the plans that fit first, by tokens/s).  A model that publishes no
 * global batch runs every plan that gives none at one shared batch,
 * sim_sweep_default_global_batch for the cluster's GPUs, so that their
 * step times compare, where its micro-batch divides the
 * SIM_PLAN_SEQUENCES_PER_GPU per GPU; *shared_gb (may be NULL) is that
 * batch when a plan took it, else 0.  tokens and price > 0 set each run's
 * training estimate (SimRun.train_tokens, gpu_hour_price).  Returns a new
 * array of SimRun* (g_ptr_array_unref frees them), or NULL with the error
 * of the first plan that does not parse or evaluate, prefixed "--plan
 * PLAN: "; any thread. */
GPtrArray *sim_compare_runs (const SimTopology *topo, const SimModel *model, const char *const *plans,
                             guint n, gboolean full, double tokens, double price, guint64 *shared_gb,
                             GError **error);

G_END_DECLS
