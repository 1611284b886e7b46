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
 *                as megatron/core/pipeline_parallel/schedules.py;
 *   ZB-H1        the zero-bubble schedule of Qi et al., "Zero Bubble
 *                Pipeline Parallelism" (ICLR 2024, arXiv:2401.10241,
 *                section 3.1): the backward split into B, the input
 *                gradient the previous stage waits for, and W, the weight
 *                gradient nothing waits for.  As the authors' handcrafted
 *                schedule (sail-sg/zero-bubble-pipeline-parallelism,
 *                ZeroBubbleH1Pipeline.steps with exact semantics): p - s - 1
 *                warm-up forwards; s pairs F B with their W held back; then
 *                F B W while forwards remain, then B W, then the s W held
 *                back.  A W computes the oldest weight gradient pending
 *                (first in, first out).  Each stage has 3m passes, and the
 *                step is m (tF + tB + tW) + (p - 1)(tF + tB - tW) for
 *                equal stages (the paper's ZB-H1 bubble), against
 *                (m + p - 1)(tF + tB + tW) for 1F1B;
 *   ZB-V         two chunks per rank in a V (rank s holds model chunks s
 *                and 2p - 1 - s, so a micro-batch goes down the ranks and
 *                back up; the first rank computes the loss), the backward
 *                split (Qi et al., section 6), as torch.distributed.
 *                pipelining's ScheduleZBVZeroBubble builds each rank's
 *                actions (pytorch/pytorch torch/distributed/pipelining/
 *                schedules.py, _calculate_single_rank_operations):
 *                2(p - s) - 1 forwards of chunk 0; s pairs F1 F0; p - s
 *                of F1 B1 W1; then F0 (while any are left) B0 W0 F1 B1 W1
 *                until the forwards are done; s of B0 B1; p - s of B0 W0;
 *                the W1 and W0 left.  Its step for tF = tB = tW is
 *                m (tF + tB + tW) plus the fill of the first forward's
 *                trip, with p micro-batches' activations held;
 *   DualPipeV    the V of ZB-V with DeepSeek's DualPipe (DeepSeek-V3
 *                technical report, arXiv:2412.19437, section 3.2.1;
 *                deepseek-ai/DualPipe dualpipe/dualpipe.py @bb214e82) cut
 *                in half, as ScheduleDualPipeV of the same file builds it:
 *                its steady phase runs a forward of one chunk together
 *                with the whole backward of the other (F&B), whose
 *                expert all-to-alls and sends hide behind each other's
 *                compute (`paired`); its warm-up and cool-down split some
 *                backwards to fill the bubble.
 *   DualPipe     DeepSeek's bidirectional schedule (the same sources):
 *                two copies of the model, the first split over ranks 0 ..
 *                p - 1 (chunk 0), the second over p - 1 .. 0 (chunk 1),
 *                half of the micro-batches entering at each end; its
 *                program is DualPipeV's on p/2 ranks and m/2 micro-
 *                batches a direction, rank s playing min(s, p - 1 - s)
 *                (dualpipe.py's half_rank), its phases the directions
 *                swapped on the second half of the ranks.
 * A whole backward in these programs is its B and its W back to back.
 */
#pragma once

#include <glib.h>

#include "sim-plan.h"

G_BEGIN_DECLS

/* a pass: a forward, a backward (the whole of it, or under a schedule
 * that splits it its input gradient), or a weight gradient */
typedef enum { SIM_PASS_FORWARD, SIM_PASS_BACKWARD, SIM_PASS_WEIGHT } SimPassKind;

typedef struct {
  guint8 kind;   /* SimPassKind */
  guint8 paired; /* DualPipeV's F&B: run together with the pass beside it */
  guint16 chunk;
  guint32 micro_batch;
} SimPipeOp;

/* whether the schedule runs each backward as B and W passes */
gboolean sim_schedule_splits_backward (SimSchedule schedule);

/* whether the schedule places two chunks per rank in a V */
gboolean sim_schedule_is_v (SimSchedule schedule);

/* the chunks per rank the schedule fixes (2: the V-shaped ones and
 * DualPipe), else 0 (interleaved: --virtual-stages; the others 1) */
int sim_schedule_chunks (SimSchedule schedule);

/* the passes of one stage: 2 m v, or 3 m v with the backward split */
guint sim_schedule_passes (SimSchedule schedule, int micro_batches, int virtual_stages);

/* the stage's passes in program order (sim_schedule_passes of them).
 * Returns a new array of SimPipeOp (caller g_array_unref()s); never
 * fails; any thread. */
GArray *sim_schedule_stage (SimSchedule schedule, int pp, int stage, int micro_batches,
                            int virtual_stages);

G_END_DECLS
