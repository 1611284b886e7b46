/* sim-balance.h — how evenly a plan's pipeline stages compute, and a
 * layout that evens them.
 *
 * A pipeline runs at the pace of its slowest stage: in 1F1B's steady state
 * every stage waits for the slowest one's forward and backward of each
 * micro-batch.  The first stage also holds the embedding and the last the
 * output layer, the loss and any multi-token-prediction modules (each one
 * more layer and one more output layer), so an even split of the layers
 * leaves the last stage the slowest.  Megatron-Core's cure is a layout
 * that gives the end stages fewer layers (--pipeline-model-parallel-
 * layout, sim-layout.h; Megatron-Bridge's DeepSeek-V3 recipe,
 * Et*4|(t*4|)*14tmL, gives the last stage one layer beside the MTP layer
 * and the loss).
 *
 * The work counted is each layer's compute per micro-batch from the cost
 * model (sim-cost.h: forward, backward and recomputation, dense or MoE),
 * the embedding's on the first virtual stage, the output layer's and the
 * MTP modules' on the last; communication is left out.  Every function is
 * pure: any thread. */
#pragma once

#include <glib.h>

#include "sim-cost.h"
#include "sim-model.h"
#include "sim-plan.h"

G_BEGIN_DECLS

/* the compute of each pipeline stage per micro-batch, seconds: out[s] for
 * s < plan->pp, the sum over its model chunks */
void sim_balance_stage_s (const SimModel *model, const SimPlan *plan, const SimLayerCost *cost,
                          double *out);

/* A layout of the plan's pp x virtual-stages virtual stages that minimises
 * the largest virtual stage's compute (the layers in model order, each
 * stage a contiguous run; the embedding first, the output layer and the
 * MTP layers last), as Megatron-Core's layout string with repeats folded
 * ("Et*3|(t*4|)*14t*2mL"), or NULL when no layout beats the plan's own by
 * at least `gain` (a fraction: 0.05 is 5 %) in its slowest stage's
 * compute.  *now_s and *max_s receive the plan's and the suggested
 * layout's slowest virtual stage (per micro-batch), each when not NULL.
 * Free with g_free. */
char *sim_balance_layout (const SimModel *model, const SimPlan *plan, const SimLayerCost *cost,
                          double gain, double *now_s, double *max_s);

/* the smallest possible largest part when layers 0..L-1 of costs w[] are cut
 * into n contiguous parts, part 0 also costing head and part n-1 tail;
 * counts[] (n entries) receives each part's layers.  Exposed for the tests */
double sim_balance_partition (const double *w, guint64 L, guint n, double head, double tail,
                              guint64 *counts);

G_END_DECLS
