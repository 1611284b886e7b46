#include "sim-validate.h"

#include <math.h>

#include "sim-error.h"

GArray *
sim_validate_nccl (const SimTopology *topo, const SimNcclResult *measured, SimCollOp op,
                  int ranks, SimAlgo algo, GError **error)
{
  return sim_validate_nccl_scaled (topo, measured, op, ranks, algo, SIM_LINK_NVLINK,
                                  topo->coll_latency_scale[SIM_LINK_NVLINK], error);
}

GArray *
sim_validate_nccl_scaled (const SimTopology *topo, const SimNcclResult *measured, SimCollOp op,
                         int ranks, SimAlgo algo, SimLinkKind kind, double scale, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (SimValidationRow));
  g_autofree int *gpus = NULL;
  double factor = sim_coll_op_busbw_factor (op, ranks);

  if (ranks < 1 || ranks > sim_topology_n_gpus (topo)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: the measurement used %d GPU%s, but %s has %d", measured->path,
                 ranks, ranks == 1 ? "" : "s", topo->name, sim_topology_n_gpus (topo));
    return NULL;
  }
  gpus = g_new (int, ranks);
  for (int i = 0; i < ranks; i++)
    gpus[i] = i;
  for (guint i = 0; i < measured->rows->len; i++) {
    const SimNcclRow *row = &g_array_index (measured->rows, SimNcclRow, i);
    g_autoptr (SimEngine) e = sim_engine_new ();
    g_autoptr (SimNetwork) net = sim_network_new (topo, e);
    SimValidationRow c = { 0 };
    if (row->time_us <= 0)
      continue;
    sim_network_set_latency_scale (net, kind, scale);
    if (!sim_collective_choose (net, op, gpus, ranks, (double) row->size_bytes, algo,
                                SIM_PROTO_AUTO, &c.choice, error))
      return NULL;
    c.size_bytes = row->size_bytes;
    c.measured_us = row->time_us;
    c.simulated_us = c.choice.predicted_s * 1e6;
    c.measured_busbw_GBps = (double) row->size_bytes / (row->time_us * 1e-6) * factor / 1e9;
    c.simulated_busbw_GBps = (double) row->size_bytes / c.choice.predicted_s * factor / 1e9;
    c.error_pct = (c.simulated_busbw_GBps - c.measured_busbw_GBps) / c.measured_busbw_GBps * 100.0;
    g_array_append_val (out, c);
  }
  return g_steal_pointer (&out);
}

double
sim_validate_mean_abs_error (const GArray *rows, guint64 min_bytes)
{
  double sum = 0;
  int n = 0;
  for (guint i = 0; i < rows->len; i++) {
    const SimValidationRow *c = &g_array_index (rows, SimValidationRow, i);
    if (c->size_bytes < min_bytes)
      continue;
    sum += fabs (c->error_pct);
    n++;
  }
  return n > 0 ? sum / n : NAN;
}
