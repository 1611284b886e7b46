/* sim-schedule.h — the order in which a pipeline stage runs its passes.
 *
 * For stage s of p, m micro-batches and v model chunks per stage:
 *   GPipe        all forwards, then all backwards;
 *   1F1B         min(p - s - 1, m) warm-up forwards, then one forward and
 *                one backward alternately, then the remaining backwards
 *                (PipeDream-flush, Narayanan et al. 2021);
 *   interleaved  Megatron's interleaved 1F1B: forward step k runs chunk
 *                (k / p) mod v of micro-batch (k / pv) p + k mod p, backward
 *                step k chunk v - 1 - (k / p) mod v; warm-up is
 *                (p - s - 1) * 2 + (v - 1) * p steps (all of them when m = p),
 *                as megatron/core/pipeline_parallel/schedules.py.
 */
#pragma once

#include <glib.h>

#include "sim-plan.h"

G_BEGIN_DECLS

typedef struct {
  guint8 backward;
  guint16 chunk;
  guint32 micro_batch;
} SimPipeOp;

/* the stage's passes in program order: m * v forwards and m * v backwards.
 * Returns a new array of SimPipeOp (caller g_array_unref()s); never fails;
 * any thread. */
GArray *sim_schedule_stage (SimSchedule schedule, int pp, int stage, int micro_batches,
                            int virtual_stages);

G_END_DECLS
