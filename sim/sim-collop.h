/* sim-collop.h — the collective operations, as the simulator runs them and
 * as nccl-tests measures them: one enum for both (sim-collective.h,
 * sim-nccl.h).  The simulator runs the first five and all_to_all; reduce
 * is read from measurements and not simulated; unknown is a measurement
 * whose operation its text does not name. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  SIM_OP_ALL_REDUCE,
  SIM_OP_ALL_GATHER,
  SIM_OP_REDUCE_SCATTER,
  SIM_OP_BROADCAST,
  SIM_OP_SENDRECV,
  SIM_OP_REDUCE,
  SIM_OP_ALLTOALL,
  SIM_OP_UNKNOWN,
} SimCollOp;

/* TRUE for the operations the simulator runs (all_reduce .. sendrecv,
 * all_to_all) */
gboolean sim_coll_op_simulated (SimCollOp op);

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast", "sendrecv",
 * "reduce", "all_to_all", "unknown" (static strings); the parser takes these
 * names exactly (not "unknown"), FALSE and *out untouched otherwise; any
 * thread */
const char *sim_coll_op_name (SimCollOp op);
gboolean sim_coll_op_parse (const char *name, SimCollOp *out);

/* nccl-tests' bus-bandwidth factor (busbw = algbw x factor):
 *   all_reduce                           2(n-1)/n
 *   all_gather, reduce_scatter, all_to_all (n-1)/n
 *   broadcast, reduce, sendrecv          1
 * NAN for unknown or n < 1; pure; any thread */
double sim_coll_op_busbw_factor (SimCollOp op, int n);

G_END_DECLS
