/* sim-memory.h — the per-GPU memory ledger and the out-of-memory verdict.
 *
 * Model states per parameter, in bytes (Megatron-style mixed precision: the
 * 2 + 2 + 12 = 16 bytes of Rajbhandari et al. 2020, "ZeRO", arXiv:1910.02054,
 * section 3.1; the ledger's place in the whole: docs/ARCHITECTURE.md):
 *
 *   recipe                 params grads master  m    v   fp32 accum   total
 *   bf16-adam                2      2     4     4    4       -          16
 *   bf16-adam-fp32-accum     2      2     4     4    4       4          20
 *   fp32-adam                4      4     -     4    4       -          16
 *   bf16-adam8bit            2      2     4     1    1       -          10
 *   bf16-sgd                 2      2     4     -    -       -           8
 *   bf16-adam-bf16-states    2      2     2     2    2       -          10
 *
 * bf16-adam-bf16-states is NeMo's distributed_fused_adam with `dtype: bf16`
 * (Apex DistributedFusedAdam: "dtype: datatype for optimizer state", and its
 * stored parameter shard in that dtype), the optimizer of NVIDIA's
 * Nemotron-4 340B performance recipe (NVIDIA/dgxc-benchmarking
 * nemotron/nemotron4-340b-synth.yaml @8f5cbb3, run by configure.sh @35a9aec).
 * Worked checks (tests/test-memory.c): 7e9 params x 16 B = 112 GB = 104.3 GiB;
 * Llama-3-8B full fine-tune 128.5 GB; LoRA r=16 on all seven projections
 * 41.9 M trainable, 8.03e9 x 2 + 41.9e6 x 16 = 16.7 GB.
 *
 * Sharding: TP and PP divide the layers' parameters (norms and row-parallel
 * biases are replicated over TP); the first stage holds the embedding, the
 * last the final norm and output layer (a tied embedding is duplicated on the
 * last stage when pp > 1, as Megatron does).  ZeRO-1 shards master weights
 * and optimizer state over the dp*cp ranks that hold the same parameters,
 * ZeRO-2 also the gradients (and the fp32 accumulation buffer), ZeRO-3 also
 * the parameters, and then keeps two layers' gathered parameters as buffers.
 *
 * Mixture-of-experts layers (Megatron-Core's MoE parallel folding, sim-plan.h):
 * a stage sums its dense and MoE layers.  An MoE layer's attention (latent
 * attention's down projections replicated), norms and the h x E router
 * (replicated over TP) and its shared experts (one MLP of width S*fe split
 * over TP) are held as a dense layer's and their ZeRO states shard over
 * dp*cp; its routed experts, E/ep per GPU each split over etp, shard their
 * ZeRO states over the expert data-parallel group edp = tp*cp*dp/(etp*ep).
 * Worked checks (tests/test-memory-moe.c): Mixtral 8x7B at tp 2, ep 8 on
 * 64 GPUs holds 3,622,047,744 parameters per GPU, 2,818,572,288 of them
 * routed experts'; DeepSeek-V3 at pp 16, ep 64 holds 2,677,129,216 on its
 * dense first stage and 1,636,630,528 on a stage of four MoE layers.
 *
 * LoRA: the frozen base keeps only its weights (2 B/param, or 4-bit NF4 for
 * QLoRA: 0.5 B plus 0.127 bit/param of double-quantised constants,
 * Dettmers et al. 2023 section 3, on the linear layers; embeddings and norms
 * stay bf16); the adapters carry full recipe states.
 *
 * Activations at the peak: per-layer saved bytes (sim-activation.h) times
 * the layers of a stage times the micro-batches the schedule keeps in
 * flight on it (sim_memory_in_flight), plus the embedding / output-layer
 * activations on the first / last stage and one layer's transient
 * recomputation working set.
 *
 * Usable capacity: the driver-visible memory, minus the CUDA context and
 * library workspaces (SIM_CONTEXT_RESERVE_BYTES), minus a fragmentation
 * allowance (SIM_FRAGMENTATION_FRACTION of what is left).
 */
#pragma once

#include <glib.h>

#include "sim-activation.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* "CUDA kernels typically require 1-2 GB of GPU memory" (The Ultra-Scale
 * Playbook, Hugging Face 2025, "Memory usage in Transformers"): the
 * midpoint */
#define SIM_CONTEXT_RESERVE_BYTES 1.5e9
/* Allocator fragmentation allowance, a fraction of what the context
 * leaves.  The published runs that trained bound it from above: at 10 % the
 * tightest runs of tests/validation/data/training_calibration.csv (each as
 * tools/fit-efficiency.py runs it, the 40 GB rows on dgx-a100-40gb.xml) are
 * at the edge of usable memory, MPT-1B on 32 A100-40GB (37.36 GB peak of
 * the 41.45 GB the context leaves: it fits below a 9.9 % allowance), on 64
 * (37.04 GB: 10.6 %) and MPT-3B at 8192 tokens on A100-80GB (75.23 of
 * 84.40 GB: 10.9 %): a larger allowance would put more runs that trained
 * above usable memory.  What PyTorch's caching allocator loses varies by run:
 * GMLake reduced its fragmentation by 15 % on average, 33 % at most, over
 * eight LLMs on A100-80GB with recomputation, ZeRO and LoRA (Guo et al.,
 * ASPLOS 2024, arXiv:2401.08156, abstract).  A peak above usable but within
 * what the context leaves is its own verdict, "tight" (sim-memory.c). */
#define SIM_FRAGMENTATION_FRACTION 0.10

typedef enum { SIM_OOM_NONE, SIM_OOM_A, SIM_OOM_B, SIM_OOM_C } SimOomCase;

typedef struct {
  int stage;
  guint64 layers;                 /* transformer layers on this stage */
  guint64 moe_layers;             /* of which mixture-of-experts layers */
  guint64 params;                 /* parameters held per GPU (after TP/EP/ZeRO-3) */
  guint64 expert_params;          /* of which routed experts' */
  guint64 expert_states_bytes;    /* the routed experts' share of the five states below */
  guint64 params_bytes;
  guint64 grads_bytes;
  guint64 master_bytes;
  guint64 optimizer_bytes;
  guint64 grad_accum_bytes;
  guint64 buffer_bytes;           /* ZeRO-3 gathered parameters */
  guint64 states_bytes;           /* sum of the six above */
  guint64 activation_bytes_per_layer; /* the largest layer's, when they differ */
  guint64 in_flight_chunks;       /* model-chunk forward passes held at the peak */
  double in_flight_micro_batches; /* the same in micro-batches of the whole stage */
  guint64 activations_peak_bytes;
  guint64 peak_bytes;
  /* the largest single layer with one sequence, for case C */
  guint64 largest_layer_states_bytes;
  guint64 largest_layer_activation_bytes;
  const char *largest_layer_name;
} SimStageMemory;

typedef struct {
  guint64 hbm_capacity_bytes;     /* the label */
  guint64 capacity_bytes;         /* driver-visible */
  guint64 context_reserve_bytes;
  guint64 fragmentation_bytes;
  guint64 usable_bytes;
  double fragmentation;
  guint64 trainable_params;       /* whole model */
  guint64 frozen_params;          /* whole model (LoRA base) */
  GArray *stages;                 /* SimStageMemory */
  int peak_stage;
  guint64 peak_bytes;
  gboolean fits;                  /* the peak is within capacity - context reserve */
  gboolean tight;                 /* it fits only without the fragmentation allowance:
                                   * usable < peak <= capacity - context reserve */
  SimOomCase oom_case;
} SimMemory;

/* plan must be resolved.  Returns a new SimMemory (free with
 * sim_memory_free); never fails; any thread (pure) */
SimMemory *sim_memory_compute (const SimTopology *topo, const SimModel *model,
                               const SimPlan *plan);
/* NULL is ignored */
void sim_memory_free (SimMemory *mem);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimMemory, sim_memory_free)

/* Replace each stage's activation peak by the one read off a simulated
 * timeline (peak_activation_bytes[stage], pp entries) and recompute the
 * verdict.  Writes into mem: one thread, before mem is shared. */
void sim_memory_apply_timeline (SimMemory *mem, const guint64 *peak_activation_bytes);

/* Model-chunk forward passes whose activations a pipeline stage holds at its
 * peak: GPipe all m; 1F1B min(p - stage, m); interleaved (Megatron)
 * min((p - stage - 1) * 2 + (v - 1) * p + 1, m * v).  The one function a
 * later, timeline-based count replaces.  Pure; any thread. */
guint64 sim_memory_in_flight (SimSchedule schedule, int pp, int stage, guint64 micro_batches,
                              int virtual_stages);

/* bytes of model state per parameter for a recipe, split by kind (the table
 * above; optimizer is m + v together); pure; any thread */
void sim_recipe_bytes (SimRecipe recipe, int *params, int *grads, int *master, int *optimizer,
                       int *accum);

/* the same for a plan: its recipe's, with the gradients in fp32 (4 bytes)
 * where the plan accumulates and reduces them in fp32 (--grad-reduce-in-fp32:
 * Megatron-Core's DDP gradient buffer is then fp32, bf16 params 2 + fp32
 * grads 4 + master 4 + m 4 + v 4 = 18 bytes; the course notes,
 * docs/course-notes/000_98543d7f24e12d1f.txt line 250, name fp32 gradients
 * as the first thing to check when a measured ledger is above 16N), and
 * under torchtitan, whose FSDP2 reduce-scatters the gradients in fp32
 * (training.mixed_precision_reduce, torchtitan/config_manager.py @9dec370)
 * into a shard of the fp32 parameter's dtype; a recipe that already keeps an
 * fp32 accumulation buffer or fp32 gradients is unchanged.  Pure; any
 * thread. */
void sim_plan_state_bytes (const SimPlan *plan, int *params, int *grads, int *master, int *optimizer,
                           int *accum);

/* NULL for NONE, else "A", "B", "C" (static); any thread */
const char *sim_oom_case_name (SimOomCase c);

/* Activation offloading as Transformer Engine does it for Megatron-Core
 * (transformer_engine/pytorch/cpu_offload.py,
 * AsyncDoubleBufferGroupOffloadHandler, built by get_cpu_offload_context
 * with Megatron-Core's cpu_offloading_num_layers): of a chunk's `layers`
 * layers the first n are offloaded, one at a time, each in a window of the
 * forward that ends at layer w(g) = (layers / n)(g + 1) - 1, plus the
 * spread of layers mod n over the first groups (its layer_window_map).
 * Group g's copy to the host starts when the forward of layer w(g - 1) ends
 * (of layer 0 for g 0) and the compute waits for it when the forward of
 * layer w(g) ends, then frees the GPU copy; in the backward its copy back
 * starts when the backward of layer w(g) ends and the compute waits for it
 * when the backward of layer w(g - 1) ends (before layer 0's for g 0).
 * bytes: each layer's saved activations; fwd_s, bwd_s: each layer's
 * compute, NULL for the memory alone; host_bw_bytes_per_s: the GPU's host
 * link per direction (the copies of either direction run one at a time). */
typedef struct {
  guint64 total_bytes; /* the chunk's saved activations, all of them (no offloading) */
  guint64 peak_bytes;  /* the most of them on the GPU at once */
  double fwd_wait_s;   /* the forward's waits for copies longer than their window */
  double bwd_wait_s;   /* the backward's */
} SimOffload;
void sim_memory_offload (int layers, int n, const guint64 *bytes, const double *fwd_s,
                         const double *bwd_s, double host_bw_bytes_per_s, SimOffload *out);
/* the same for a plan's one chunk (pp 1): the model's layers, dense and MoE
 * (moe NULL for a dense model), a dense layer's forward and backward taking
 * dense_s[0] and dense_s[1] seconds, an MoE layer's moe_s[0] and moe_s[1]
 * (both NULL for the memory alone; the multi-token-prediction layers after
 * the decoder's stay, uncounted) */
/* Where the schedule splits the backward (sim-schedule.h), what the last
 * chunk's input-gradient pass frees of the output layer's activations
 * (out_act, sim_activations_output) before its weight gradient: the loss's
 * fp32 logits give way to the BF16 gradient of the logits that the output
 * layer's weight gradient multiplies, half their bytes; never fails */
guint64 sim_memory_split_output_freed (const SimActivations *out_act);

/* What a model chunk keeps of its layers for one micro-batch until its
 * backward (its lc layers from model layer `first`, MTP layers included,
 * the rank_offset-th layer of its pipeline rank first: sim-plan.h's
 * sim_plan_chunk_first_layer, _chunk_layers + _chunk_mtp_layers and
 * _chunk_rank_offset): each layer by its part in the plan's
 * recomputation (sim_plan_layer_recompute): dense or moe (the sets the
 * plan's recomputation leaves, moe NULL for a dense model) for a layer it
 * checkpoints or any layer without full recomputation, dense_kept or
 * moe_kept (the sets without recomputation; NULL: dense and moe) for a
 * layer full recomputation leaves alone, nothing for one inside a uniform
 * group.  *transient (may be NULL): what the chunk's recomputation holds
 * besides while a backward runs, the largest recomputed layer's
 * transient_bytes times the layers recomputed together
 * (sim_plan_recompute_group); without full recomputation the largest
 * layer's.  Pure; any thread. */
guint64 sim_memory_chunk_saved_bytes (const SimModel *model, const SimPlan *plan, guint64 first,
                                      int lc, int rank_offset, const SimActivations *dense,
                                      const SimActivations *moe, const SimActivations *dense_kept,
                                      const SimActivations *moe_kept, guint64 *transient);
/* the activation sets of a dense and an MoE layer without recomputation,
 * for the layers full recomputation leaves alone; *dense and *moe NULL
 * when the plan recomputes every layer or recomputes none in full (moe
 * NULL for a dense model); free with sim_activations_free */
void sim_memory_kept_activations (const SimModel *model, const SimPlan *plan, SimActivations **dense,
                                  SimActivations **moe);
void sim_memory_offload_model (const SimModel *model, const SimPlan *plan,
                               const SimActivations *dense, const SimActivations *moe,
                               const double *dense_s, const double *moe_s,
                               double host_bw_bytes_per_s, SimOffload *out);

/* A remedy for a plan that does not fit: a tried plan change and the peak
 * it gives (the ledger's estimate).  The changes are written as the plan
 * options they set ("--zero 1"), which are also plan-string keys; the
 * report renders them (sim-report.h).  sim_run_evaluate, when it times the
 * plan, simulates each remedy that fits and fills its time. */
typedef struct {
  char *flags;         /* "--recompute full", or every flag of the combination */
  char *why;           /* what it does; NULL for the combination */
  gboolean together;   /* the helpful single changes stacked, cheapest first */
  guint64 peak_bytes;
  int peak_stage;
  gboolean fits;
  gboolean tight;      /* it fits only without the fragmentation allowance (SimMemory) */
  SimPlan *plan;       /* the plan tried, resolved (owned) */
  gboolean has_time;   /* simulated (sim_run_evaluate): step_s and the rest are set */
  double step_s, tokens_per_s;
  double time_change;  /* time per token against the plan's if memory allowed: 0.14 is 14 % longer */
} SimRemedy;
void sim_remedy_free (gpointer remedy);

/* The remedies of a plan that does not fit.  Returns a new array of
 * SimRemedy* (caller g_ptr_array_unref()s; empty if it fits); never fails;
 * any thread (each try resolves a private copy of plan). */
GPtrArray *sim_memory_remedies (const SimTopology *topo, const SimModel *model,
                                const SimPlan *plan, const SimMemory *mem);

G_END_DECLS
