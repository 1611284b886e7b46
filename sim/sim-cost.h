/* sim-cost.h — how long each piece of one training step takes on one GPU.
 *
 * Pure functions of model, plan and GPU: no engine, no network.  Every op is
 * a list of kernels, each charged on the side of the roofline it sits on
 * (attention: FLOP / rate; GEMMs: FLOP / the measured rate of their shape,
 * or their operands' and output's bytes / HBM bandwidth when that is
 * longer, as for a LoRA adapter's rank or unfused attention's batched
 * heads; everything else: bytes / HBM bandwidth) plus the GPU's fixed
 * cost per kernel, the rates scaled by its efficiency constants (SimEfficiency,
 * sim-topology.h); a piece of work never takes less than its kernels' host
 * launch time.  In detail:
 *   - GEMMs at the measured rate for their shape (sim-gemm.h); a backward
 *     GEMM is its data-gradient and weight-gradient GEMMs, each with the
 *     forward's FLOPs and transposed shapes;
 *   - fused (flash) attention at the GPU's measured attention efficiency,
 *     executing half the s x s work (causal mask) forward and 2.5x that
 *     backward (five matmuls instead of two, Dao 2023);
 *   - materialised attention as two batched GEMMs (QK^T, scores x V) plus a
 *     fused scale-mask-softmax and dropout that read and write the scores;
 *   - norms, activations, dropout and residual adds as HBM traffic only.
 * Per tensor-parallel rank, per micro-batch; s is the local sequence s/cp.
 *
 * FLOP accounting (Narayanan et al. 2021): model FLOPs are 3x the forward
 * matmul FLOPs with the full s x s attention (72 B s L h^2 (1 + s/6h +
 * V/12Lh) for GPT); hardware FLOPs add the recomputed forward work.
 */
#pragma once

#include <glib.h>

#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* the passes SimLayerCost times kernel by kernel: a dense layer's forward
 * and backward, and a mixture-of-experts layer's */
typedef enum {
  SIM_LAYER_FWD,
  SIM_LAYER_BWD,
  SIM_MOE_LAYER_FWD,
  SIM_MOE_LAYER_BWD,
  SIM_LAYER_PASSES
} SimLayerPass;

typedef struct {
  /* one transformer layer, one micro-batch, one TP rank, seconds */
  double layer_fwd_s;
  double layer_bwd_s;          /* without recomputation */
  double layer_recompute_s;    /* extra forward work before the backward */
  /* of layer_bwd_s, the weight-gradient GEMMs' (a schedule that splits the
   * backward runs them as a pass of their own, sim-schedule.h); the same
   * of moe_bwd_s and head_bwd_s */
  double layer_bwd_w_s, moe_bwd_w_s, head_bwd_w_s;
  double attn_core_fwd_s;      /* the part that selective recomputation repeats */
  /* executed FLOPs of the same, for HFU */
  double layer_fwd_flop;
  double layer_bwd_flop;
  double layer_recompute_flop;
  /* first and last stage extras, per micro-batch */
  double embed_fwd_s, embed_bwd_s;
  /* CPU offloading (SimPlan.cpu_offload_layers, pp 1): the seconds the
   * forward and the backward of a micro-batch wait for host copies longer
   * than their window of compute (sim_memory_offload), charged with the
   * first chunk */
  double offload_fwd_s, offload_bwd_s;
  double head_fwd_s, head_bwd_s;  /* output layer and cross-entropy */
  double head_fwd_flop, head_bwd_flop;
  /* one multi-token-prediction module beyond its transformer layer (the
   * last stage, --mtp-num-layers): the next token's embedding, the two
   * norms, the concatenation, eh_proj, and its own final norm, output layer
   * and loss; with the executed FLOPs, and the TP collectives eh_proj adds
   * (sim-cost.c) in units of a layer's */
  double mtp_fwd_s, mtp_bwd_s;
  double mtp_fwd_flop, mtp_bwd_flop;
  int mtp_tp_colls;
  /* optimizer step of one stage's local parameters */
  double optimizer_s_per_param;
  /* tensor-parallel collectives per layer and their buffer (bytes) */
  int tp_colls_fwd;            /* all_reduce x2, or all_gather + reduce_scatter x2 */
  double tp_bytes;             /* the s*b*h bf16 activation */
  /* pipeline send of one micro-batch from one TP rank */
  double pp_bytes;
  /* context parallel: K and V of one block, per TP rank, per layer */
  double cp_kv_bytes;
  /* a mixture-of-experts layer (all 0 for a dense model): its compute as
   * the layer_* fields above, its TP collectives (the attention's, and
   * the shared experts'), and per GPU what one dispatch (and one combine)
   * sends over its expert-parallel group, and with etp > 1 the gathered
   * routed tokens of the expert tensor-parallel all-gather (and of the
   * reduce-scatter after the experts), bytes */
  double moe_fwd_s, moe_bwd_s, moe_recompute_s;
  /* of moe_fwd_s and moe_bwd_s, the attention side's (Megatron-Core's "attn"
   * node of the combined 1F1B schedule); the rest is the experts' ("mlp") */
  double moe_attn_fwd_s, moe_attn_bwd_s;
  double moe_fwd_flop, moe_bwd_flop, moe_recompute_flop;
  int moe_tp_colls_fwd;
  double a2a_bytes;
  double etp_bytes;
  /* selective recomputation (--recompute-modules): the recomputed
   * modules' FLOPs beyond the attention core's, and the TP collectives
   * they run again (a dense MLP's; an MoE layer's shared experts'), per
   * dense and per MoE layer */
  double layer_recompute_module_flop, moe_recompute_module_flop;
  int recompute_tp_colls, moe_recompute_tp_colls;
  /* the GPU's time and the host's time to launch the kernels of each
   * SimLayerPass (the pass takes the longer, sim-cost.c wall()); the MoE
   * passes 0 for a dense model */
  double gpu_s[SIM_LAYER_PASSES], host_s[SIM_LAYER_PASSES];
} SimLayerCost;

/* fills *out for a resolved plan; never fails; any thread (pure) */
void sim_cost_layer (const SimModel *m, const SimPlan *plan, const SimGpuType *gpu,
                     SimLayerCost *out);
/* the last chunk's work beyond its layers, per micro-batch, forward or
 * backward: the output layer and loss, and each multi-token-prediction
 * module's own kernels (plan->mtp_layers of them; their layers are the
 * chunk's) */
double sim_cost_tail_s (const SimLayerCost *c, const SimPlan *plan, gboolean backward);
/* the expected number of nodes a token's experts sit on: `pick` of `pool`
 * (experts, or the groups of group-limited routing) chosen at random, each
 * of `nodes` nodes holding pool / nodes of them: nodes x (1 - C(pool -
 * per, pick) / C(pool, pick)), per = pool / nodes; pure */
double sim_cost_nodes_reached (double pool, double pick, int nodes);

/* of the tail's backward, the output layer's weight gradient (the
 * multi-token-prediction modules' stay with the input gradient) */
double sim_cost_tail_w_s (const SimLayerCost *c);

/* One kernel of a layer as sim_cost_layer charges it: what it computes or
 * moves and its GPU seconds, the fixed per-kernel cost included.  Strings
 * are static. */
typedef enum {
  SIM_KERNEL_GEMM,         /* one cuBLAS GEMM (m x k).(k x n) */
  SIM_KERNEL_BATCHED_GEMM, /* one kernel of `batch` GEMMs of the shape (unfused attention) */
  SIM_KERNEL_GROUPED_GEMM, /* `batch` GEMMs of the shape, one kernel each (MoE experts) */
  SIM_KERNEL_ATTENTION,    /* a fused attention kernel of `flop` */
  SIM_KERNEL_MEMORY,       /* an element-wise or reduction kernel moving `bytes` */
  SIM_KERNEL_WAIT          /* no kernel: the GPU waits for the host (MoE's token counts) */
} SimKernelKind;
typedef struct {
  const char *pass; /* "forward", "backward", "output forward", "output backward" */
  const char *name; /* the module: qkv, proj, fc1, fc2, attention, norm, rope, ... */
  const char *role; /* of a backward GEMM: "dgrad" or "wgrad"; else "" */
  SimKernelKind kind;
  double m, n, k; /* GEMMs */
  double batch;   /* GEMMs in the row (batched and grouped GEMMs), else 1 */
  int kernels;    /* kernels the row launches: 1, the groups of a grouped GEMM, 0 for a
                        wait or for the scales a cast above it also writes */
  double bytes;   /* memory-bound kernels: bytes read and written */
  double flop;    /* executed FLOPs */
  double seconds; /* GPU time, the fixed per-kernel cost included */
} SimKernel;

/* The kernels of one transformer layer (an MoE layer where the model has
 * them, else a dense one), one micro-batch, on one GPU of the plan, and
 * of the output layer and loss: the list whose sums are
 * SimLayerCost.gpu_s (forward and backward of a dense layer, [2] and [3]
 * of an MoE layer) and the head's GPU time.  Recomputation repeats the
 * forward's kernels (or selective recomputation's modules) and is not
 * listed; CUDA graphs change who launches, not what runs.  A new array of
 * SimKernel (g_array_unref()); never fails; any thread. */
GArray *sim_cost_layer_kernels (const SimModel *m, const SimPlan *plan, const SimGpuType *gpu);

/* the GEMM shapes one TP rank runs per layer and micro-batch (forward, and
 * the data- and weight-gradient GEMMs of the backward), and the output
 * layer's: what microbench/gemm measures for a model.  Returns a new array
 * of SimGemmShape (caller g_array_unref()s; names are static strings);
 * never fails; any thread. */
typedef struct {
  const char *name;
  double m, n, k;
} SimGemmShape;
GArray *sim_cost_gemm_shapes (const SimModel *m, const SimPlan *plan);

/* a mixture-of-experts layer's busiest GPU's routed tokens over the mean:
 * --moe-imbalance, capped at the capacity factor (sim-cost.c) */
double sim_cost_moe_load (const SimModel *m, const SimPlan *p);

/* seconds of a grouped GEMM as Transformer Engine's GroupedLinear runs it:
 * `groups` GEMMs (m x k).(k x n), one kernel each, at the measured rate
 * of their shape times `speedup` (1 for BF16), or their operands'
 * (`elem_bytes` an element: 2 for BF16) and BF16 output's bytes at the
 * achievable HBM bandwidth when that is longer */
double sim_cost_grouped_gemm_s (const SimGpuType *gpu, double groups, double m, double n, double k,
                                double speedup, double elem_bytes);

/* Model FLOPs of one iteration (whole job, all GPUs); pure; any thread */
double sim_cost_model_flop (const SimModel *m, const SimPlan *plan);
/* the full s x s attention core's forward FLOPs of one iteration (what
 * selective recomputation repeats, as Narayanan counts it); pure */
double sim_cost_attention_core_flop (const SimModel *m, const SimPlan *plan);
/* model FLOPs utilisation of a step of step_s seconds: model FLOPs over the
 * whole job's dense bf16 peak (fp16 where no bf16 peak is given) for step_s;
 * the one MFU every report, table and chart prints; pure; any thread */
double sim_cost_mfu (const SimModel *m, const SimPlan *plan, const SimGpuType *gpu, double step_s);
/* Narayanan's closed form for the GPT layer, for comparison (96 instead of
 * 72 and V/16Lh instead of V/12Lh with full recomputation); pure; any
 * thread */
double sim_cost_narayanan_flop (const SimModel *m, guint64 global_batch, guint64 seq,
                                gboolean full_recompute);

G_END_DECLS
