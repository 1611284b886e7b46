/* sim-validate.h — nccl-tests measurements against the simulator.
 *
 * For every row of a parsed nccl-tests output, the same collective on the
 * first `ranks` GPUs of the topology is simulated alone (algorithm as asked,
 * auto by default) and both bus bandwidths are derived from the times, so
 * the 0.00 GB/s that nccl-tests prints for tiny sizes still compares.
 */
#pragma once

#include <glib.h>

#include "sim-collective.h"
#include "sim-nccl.h"

G_BEGIN_DECLS

typedef struct {
  guint64 size_bytes;
  double measured_us;
  double simulated_us;
  double measured_busbw_GBps;
  double simulated_busbw_GBps;
  double error_pct;        /* (simulated - measured) / measured busbw, percent */
  SimCollChoice choice;
} SimValidationRow;

/* Returns an array of SimValidationRow (caller g_array_unref()s), or NULL with
 * SIM_ERROR_USAGE (ranks outside the topology, or an algorithm the group
 * cannot run).  Each row runs on a private engine; any thread. */
GArray *sim_validate_nccl (const SimTopology *topo, const SimNcclResult *measured, SimCollOp op,
                          int ranks, SimAlgo algo, GError **error);
/* the same with link kind `kind`'s per-hop latency scaled by `scale` on the
 * simulated side (sim_network_set_latency_scale); topo is not written */
GArray *sim_validate_nccl_scaled (const SimTopology *topo, const SimNcclResult *measured, SimCollOp op,
                                 int ranks, SimAlgo algo, SimLinkKind kind, double scale,
                                 GError **error);

/* the mean of |error_pct| over rows with size_bytes >= min_bytes, NAN when
 * none; any thread */
double sim_validate_mean_abs_error (const GArray *rows, guint64 min_bytes);


G_END_DECLS
