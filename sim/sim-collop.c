/* sim-collop.c — see sim-collop.h */
#include "sim-collop.h"

#include <math.h>

static const char *const names[] = { "all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                     "sendrecv",   "reduce",     "all_to_all",     "unknown" };

gboolean
sim_coll_op_simulated (SimCollOp op)
{
  return op <= SIM_OP_SENDRECV || op == SIM_OP_ALLTOALL;
}

const char *
sim_coll_op_name (SimCollOp op)
{
  return (guint) op < G_N_ELEMENTS (names) ? names[op] : "unknown";
}

gboolean
sim_coll_op_parse (const char *name, SimCollOp *out)
{
  for (guint i = 0; i < SIM_OP_UNKNOWN; i++)
    if (g_str_equal (name, names[i])) {
      *out = (SimCollOp) i;
      return TRUE;
    }
  return FALSE;
}

double
sim_coll_op_busbw_factor (SimCollOp op, int ranks)
{
  double n = ranks;
  if (ranks < 1)
    return NAN;
  switch (op) {
  case SIM_OP_ALL_REDUCE: return 2.0 * (n - 1.0) / n;
  case SIM_OP_ALL_GATHER:
  case SIM_OP_REDUCE_SCATTER:
  case SIM_OP_ALLTOALL: return (n - 1.0) / n;
  case SIM_OP_BROADCAST:
  case SIM_OP_REDUCE:
  case SIM_OP_SENDRECV: return 1.0;
  case SIM_OP_UNKNOWN: break;
  }
  return NAN;
}
