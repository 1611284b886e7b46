/* sim-plan.h — a parallel layout of one training job and its validation.
 *
 * Two types.  A SimPlanRequest is what the user asked: filled from
 * command-line flags or "key=value" plan strings through one table of
 * options (sim_plan_request_set), every option not given left unset.
 * sim_plan_resolve() turns a request into a SimPlan: it applies defaults
 * (recording each one it applied), checks the layout against the topology
 * and the model, and places ranks.  A SimPlan is resolved through and
 * through: nothing in it is unset, and every function below that takes one
 * reads it as resolved.  A variant of a plan (another layout, another
 * recomputation) is a request made from it (sim_plan_request_of), changed
 * by the setters and resolved again; labels are for output, never parsed
 * back into plans.
 *
 * Rank placement follows Megatron: TP varies fastest, then CP, then DP, then
 * PP ("tp-cp-dp-pp"), unless --order names another permutation.  Global rank
 * r runs on GPU number r of the topology.
 *
 * Errors name plan options as flags ("--tp 3: ..."): each is also the key of
 * a plan string, so a message reads right after either.  A request is
 * written by one thread; a resolved plan is read-only, and the functions
 * that take a const SimPlan may run on any thread.
 */
#pragma once

#include <glib.h>

#include "sim-layout.h"
#include "sim-model.h"
#include "sim-topology.h"

G_BEGIN_DECLS

/* zb-h1: the zero-bubble schedule ZB-H1 (sim-schedule.h), one chunk per
 * rank, the backward split into its input and weight gradients; zb-v and
 * dualpipe-v: two chunks per rank placed in a V (rank r holds model chunks
 * r and 2p - 1 - r, sim_plan_virtual_stage); dualpipe: two copies of the
 * model, rank r holding block r of the first (chunk 0) and block p - 1 - r
 * of the second (chunk 1) */
typedef enum {
  SIM_SCHEDULE_GPIPE,
  SIM_SCHEDULE_1F1B,
  SIM_SCHEDULE_INTERLEAVED,
  SIM_SCHEDULE_ZB_H1,
  SIM_SCHEDULE_ZB_V,
  SIM_SCHEDULE_DUALPIPE_V,
  SIM_SCHEDULE_DUALPIPE
} SimSchedule;
typedef enum { SIM_RECOMPUTE_NONE, SIM_RECOMPUTE_SELECTIVE, SIM_RECOMPUTE_FULL } SimRecompute;
/* how an MoE layer's tokens reach their experts across nodes (sim-iteration-
 * build.c, moe_init): NCCL's all-to-all over the expert-parallel group
 * (Megatron-Core's alltoall dispatcher), or DeepEP's two hops, each token
 * sent once to each node that holds one of its experts and forwarded
 * there over NVLink, FP8 out under FP8 training (Megatron-Core's flex
 * dispatcher with the DeepEP backend; DeepSeek-V3's own) */
typedef enum { SIM_DISPATCHER_ALLTOALL, SIM_DISPATCHER_DEEPEP } SimMoeDispatcher;
/* Which layers full recomputation recomputes, with N layers
 * (recompute_num_layers): Megatron-Core's recompute_method
 * (megatron/core/transformer/transformer_block.py, _checkpointed_forward):
 * uniform checkpoints the input of each group of N consecutive layers of a
 * model chunk and runs the whole group again before its backward; block
 * checkpoints the first N layers of each chunk, one apiece, and runs the
 * rest without recomputation.  every checkpoints every N-th layer a
 * pipeline rank holds, one apiece, and runs the others without
 * (torchtitan's selective_ac_option = "N": _apply_layer_sac counts the
 * blocks it wraps and checkpoints those whose count is a multiple of N).
 * uniform with 1 is every layer on its own, sim's --recompute full. */
typedef enum { SIM_RECOMPUTE_UNIFORM, SIM_RECOMPUTE_BLOCK, SIM_RECOMPUTE_EVERY } SimRecomputeMethod;
/* a layer under the plan's recomputation: it keeps what it would keep
 * without full recomputation (none or selective), or it is recomputed and
 * keeps its input (the first of a uniform group), or is recomputed inside
 * a uniform group and keeps nothing */
typedef enum { SIM_LAYER_KEPT, SIM_LAYER_CHECKPOINT, SIM_LAYER_IN_GROUP } SimLayerRecompute;
/* What selective recomputation recomputes: Megatron-Core's
 * recompute_modules (megatron/core/transformer/transformer_config.py
 * @0014f137, default ["core_attn"]), a bit each */
typedef enum {
  SIM_RECOMPUTE_CORE_ATTN = 1 << 0,      /* the attention core */
  SIM_RECOMPUTE_MOE_ACT = 1 << 1,        /* the routed experts' activation */
  SIM_RECOMPUTE_LAYERNORM = 1 << 2,      /* the norms not fused into a linear */
  SIM_RECOMPUTE_MLA_UP_PROJ = 1 << 3,    /* latent attention's up projections and RoPE */
  SIM_RECOMPUTE_MLP = 1 << 4,            /* the dense MLP */
  SIM_RECOMPUTE_MOE = 1 << 5,            /* the whole MoE layer, all-to-alls included */
  SIM_RECOMPUTE_SHARED_EXPERTS = 1 << 6, /* an MoE layer's shared experts */
} SimRecomputeModules;
#define SIM_RECOMPUTE_MODULE_COUNT 7
/* CUDA graphs as Megatron-Core captures them for training
 * (megatron/core/transformer/transformer_config.py, cuda_graph_impl and
 * cuda_graph_scope): Transformer Engine's make_graphed_callables per layer,
 * or Megatron-Core's own graph manager */
typedef enum { SIM_CUDA_GRAPH_NONE, SIM_CUDA_GRAPH_TE, SIM_CUDA_GRAPH_LOCAL } SimCudaGraphImpl;
/* what a layer's graph captures, a bit each (Megatron-Core's scope names;
 * "full", its default, is attn | mlp | moe) */
typedef enum {
  SIM_GRAPH_ATTN = 1 << 0,           /* the attention sublayer */
  SIM_GRAPH_MLP = 1 << 1,            /* a dense layer's MLP sublayer */
  SIM_GRAPH_MOE = 1 << 2,            /* an MoE layer whole */
  SIM_GRAPH_MOE_ROUTER = 1 << 3,     /* the router, its top-k and auxiliary loss */
  SIM_GRAPH_MOE_PREPROCESS = 1 << 4, /* the dispatcher's token counts */
} SimGraphScope;
#define SIM_GRAPH_SCOPE_COUNT 5
typedef enum {
  SIM_RECIPE_BF16_ADAM,
  SIM_RECIPE_BF16_ADAM_FP32_ACCUM,
  SIM_RECIPE_FP32_ADAM,
  SIM_RECIPE_BF16_ADAM8BIT,
  SIM_RECIPE_BF16_SGD,
  SIM_RECIPE_BF16_ADAM_BF16_STATES,
} SimRecipe;

/* The ranges every plan value is held to, so that the arithmetic provably
 * holds (sim --help prints them):
 * - a parallel degree (tp, cp, pp, dp, virtual stages) is at most 2^17 =
 *   131,072, the largest cluster sim loads: three degrees multiply within
 *   2^51, and the four are compared as doubles, exact below 2^53;
 * - a sequence at most 2^24 = 16.8 M tokens, a micro-batch at most 2^17
 *   sequences, and their tokens per GPU (micro-batch x seq / cp) at most
 *   2^27: a layer's activation bytes (~34 per token and unit of hidden,
 *   hidden at most 2^20 by sim-model.c) stay near 2^52, exact in a double;
 * - a global batch at most 2^40 sequences; with the micro-batch limit
 *   below it is never more than 2^16 x 2^17 x 2^17 = 2^50, and tokens per
 *   step (x seq 2^24) stay within 2^64 as unsigned and exact as doubles to
 *   2^53 for every realistic batch;
 * - at most SIM_PLAN_MAX_MICRO_BATCHES micro-batches per data-parallel
 *   replica: the event graph grows with them (Llama-3-8B, tp 8 x pp 4 on
 *   dgx8x4: 8,192 micro-batches take 3.3 s and 166 MB, 32,768 take 14 s
 *   and 633 MB), and 16,384 is 256 times the most of any published run in
 *   tests/validation (64, GPT-3 175B on 128 GPUs);
 * - step times past 2^63 ps (106 days) are an error of the engine
 *   (sim-time.h), never a wrapped time. */
#define SIM_PLAN_MAX_DEGREE (1u << 17)
#define SIM_PLAN_MAX_SEQ_LEN (G_GUINT64_CONSTANT (1) << 24)
#define SIM_PLAN_MAX_MICRO_BATCH (1u << 17)
#define SIM_PLAN_MAX_MB_TOKENS (G_GUINT64_CONSTANT (1) << 27)
#define SIM_PLAN_MAX_GLOBAL_BATCH (G_GUINT64_CONSTANT (1) << 40)
#define SIM_PLAN_MAX_LORA_RANK (1u << 20)
#define SIM_PLAN_MAX_MICRO_BATCHES 16384
/* the global batch of a model that publishes none: this many sequences
 * per GPU of the job, the one policy of sim, sim compare and sim sweep
 * (so that a plan's step is the same number in all three); with mb 1 a
 * replica then runs 8 x tp x cp x pp micro-batches, at least 8 per
 * pipeline stage, which keeps the 1F1B bubble (p-1)/(m+p-1) under 1/8 */
#define SIM_PLAN_SEQUENCES_PER_GPU 8

/* the four parallel dimensions, in the names --order uses */
/* FP8 training of the linear layers, as Megatron's --fp8-format: hybrid is
 * E4M3 forward and E5M2 gradients, e4m3 both; the cost is the same */
typedef enum { SIM_FP8_OFF, SIM_FP8_HYBRID, SIM_FP8_E4M3 } SimFp8;
/* how FP8 tensors are scaled (Transformer Engine's recipes, Megatron's
 * --fp8-recipe): delayed (per tensor, from an amax history), current (per
 * tensor, from the tensor itself: Megatron's "tensorwise"), mxfp8 (a scale
 * per 32 elements, on Blackwell's block-scaled tensor cores), blockwise
 * (DeepSeek-V3's 1 x 128 activation and 128 x 128 weight tiles) */
typedef enum { SIM_FP8_DELAYED, SIM_FP8_CURRENT, SIM_FP8_MXFP8, SIM_FP8_BLOCKWISE } SimFp8Recipe;
/* FP4 training of the linear layers, as Megatron-Core's --fp4-format e2m1
 * with --fp4-recipe nvfp4: Transformer Engine's NVFP4BlockScaling (E2M1
 * values, an E4M3 scale per 16, an FP32 scale per tensor), on Blackwell's
 * FP4 tensor cores; exclusive with --fp8, as in Megatron-Core */
typedef enum { SIM_FP4_OFF, SIM_FP4_E2M1 } SimFp4;

/* the training framework whose overlaps and kernels the step follows:
 * Megatron-Core (NeMo recipes), llm-foundry's PyTorch FSDP, or torchtitan
 * (PyTorch-native: FSDP2, DTensor TP and async TP, SDPA) */
typedef enum { SIM_FRAMEWORK_MEGATRON, SIM_FRAMEWORK_FSDP, SIM_FRAMEWORK_TORCHTITAN } SimFramework;
/* the fused attention kernel: the GPU's measured FlashAttention-class
 * kernel (topology <attention>), or FlashAttention's Triton kernel */
/* flash: the cluster file's FlashAttention-class kernel (<attention>);
 * triton: FlashAttention's Triton kernel; cudnn, flash2: cuDNN's fused
 * attention and FlashAttention-2 at the rates the cluster file gives them
 * (Transformer Engine's FusedAttention and FlashAttention backends) */
typedef enum { SIM_ATTENTION_FLASH, SIM_ATTENTION_TRITON, SIM_ATTENTION_CUDNN, SIM_ATTENTION_FLASH2 } SimAttentionKernel;

typedef enum { SIM_DIM_TP, SIM_DIM_CP, SIM_DIM_DP, SIM_DIM_PP, SIM_DIM_COUNT } SimDim;

/* a parsed --pipeline-model-parallel-layout and its text as given
 * (sim-layout.h); reference-counted (g_rc_box), read-only once made */
typedef struct {
  SimLayout layout;
  char *text;
} SimPlanLayout;

/* one GPU, or every GPU of one node, computing `factor` times slower */
#define SIM_PLAN_MAX_SLOW 16
typedef struct {
  gboolean node;   /* index is a node of the cluster (its GPUs), else a global rank */
  int index;
  double factor;   /* >= 1 */
} SimSlow;

/* one GPU's links moving data `factor` times slower (a degraded port, a
 * link trained down): its NIC's port to the fabric, or its NVLinks */
typedef enum { SIM_SLOW_NIC, SIM_SLOW_NVLINK } SimSlowLinkKind;
typedef struct {
  SimSlowLinkKind kind;
  int rank;        /* a global rank (GPU rank) */
  double factor;   /* >= 1: the links carry 1/factor of their bandwidth */
} SimSlowLink;

/* what the user asked, before sim_plan_resolve: opaque (sim-plan-private.h) */
typedef struct _SimPlanRequest SimPlanRequest;

/* A resolved plan (sim_plan_resolve).  Where a comment below names the
 * value a field holds when its option is "unset", that is the request's
 * state before resolution, which sim_plan_resolve replaces: a resolved
 * plan holds none of them (test-plan /plan/resolved-sets-all), except
 * fp8_recipe, -1 exactly without FP8, and moe_imbalance, 0 exactly for a
 * dense model (no routing). */
typedef struct {
  /* layout; 0 means "not given" until resolved */
  int tp, cp, pp, dp;
  /* the experts of mixture-of-experts layers (Megatron-Core's MoE parallel
   * folding): each pipeline stage's tp x cp x dp GPUs are also etp x ep x
   * edp for the routed experts, with edp = tp*cp*dp / (etp*ep) derived by
   * sim_plan_resolve; ep and etp are 1 for a dense model (and edp then
   * tp*cp*dp, by the same formula) */
  int ep, etp, edp;
  int micro_batch;
  guint64 global_batch;
  /* what sim_plan_resolve's default batch asked before it was rounded up
   * to a multiple of micro_batch x dp (global_batch then trains more
   * tokens a step); 0 when the batch was given or needed no rounding */
  guint64 global_batch_wanted;
  guint64 seq_len;
  SimSchedule schedule;
  int virtual_stages;
  SimRecompute recompute;
  /* under full recomputation, which layers (SimRecomputeMethod) and N;
   * uniform and 1 otherwise */
  SimRecomputeMethod recompute_method;
  int recompute_num_layers;
  /* SimRecomputeModules under selective recomputation (0 otherwise;
   * sim_plan_resolve sets core_attn when none are given) */
  guint recompute_modules;
  int sequence_parallel;   /* -1 unset, 0 off, 1 on */
  int flash_attention;     /* -1 unset, 0 off, 1 on */
  int zero;                /* -1 unset, else 0..3 */
  SimRecipe recipe;
  SimDim order[SIM_DIM_COUNT]; /* fastest first */
  guint64 lora_rank;       /* 0: full training */
  guint lora_targets;      /* SimLoraTargets */
  gboolean qlora;
  double context_reserve_bytes; /* < 0 unset */
  double fragmentation;         /* < 0 unset; fraction of what is left */
  gboolean overlap;             /* DP gradient reduction overlaps the backward */
  SimFramework framework;
  int tp_comm_overlap;          /* -1 unset; TP collectives hidden behind the GEMMs */
  /* -1 unset; with torchtitan, each transformer block compiled by
   * torch.compile (Inductor fuses its norms and activation), else eager;
   * 0 under the other frameworks (their own kernels) */
  int torch_compile;
  int overlap_param_gather;     /* -1 unset; ZeRO parameter all-gather behind the forward */
  int attention_kernel;         /* -1 unset, else SimAttentionKernel */
  SimFp8 fp8;                   /* FP8 linear layers (Transformer Engine), or off */
  int fp8_params;               /* -1 unset; weights kept (and gathered) in FP8 */
  int fp8_recipe;               /* -1 unset (and with --fp8 off), else SimFp8Recipe */
  gboolean fp8_attention;       /* the fused attention's forward in FP8 too */
  /* the routed experts keep their SwiGLU input (FC1's output) in FP8 and
   * recompute the activation from it (DeepSeek-V3, sim-activation.h) */
  gboolean fp8_expert_act;
  /* delayed scaling: each pass's amaxes reduced over the TP x CP group only,
   * not Megatron-Core's default TP x DP x CP (its --tp-only-amax-red) */
  gboolean tp_only_amax_red;
  /* gradients accumulated and reduced over data parallelism in fp32 (4 bytes
   * each) instead of bf16: Megatron-LM's own default with --bf16
   * (megatron/training/arguments.py: "bfloat16 requires gradient
   * accumulation and all-reduce to be done in fp32", unless
   * --grad-reduce-in-bf16), Megatron-Core's DDP grad_reduce_in_fp32 */
  gboolean grad_reduce_fp32;
  SimFp4 fp4;                   /* NVFP4 linear layers (Transformer Engine), or off */
  /* 0 unset; Megatron's --num-layers-per-virtual-pipeline-stage, turned into
   * virtual_stages = layers / (pp x this) by sim_plan_resolve, then 0 */
  int layers_per_virtual_stage;
  /* Megatron-Core's uneven pipeline split (transformer_block.py
   * get_num_layers_to_build): 0 unset, else the layers of the first (last)
   * pipeline stage, the others split evenly over the rest; or the
   * embedding (the output layer and loss) counted as one layer, so that the
   * first (last) model chunk holds one layer fewer.  The two ways exclude
   * each other, as in Megatron-Core. */
  int first_stage_layers, last_stage_layers;
  gboolean embedding_in_split, loss_in_split;
  /* mixture of experts: the busiest GPU's routed tokens over the mean (>= 1;
   * 0 unset, resolved to 1 for a MoE model: balanced routing) */
  double moe_imbalance;
  /* token dropping (Megatron-Core's --moe-expert-capacity-factor): an
   * expert takes at most this many times its even share of the routed
   * tokens and drops the rest; 0 dropless (resolved from the model's
   * capacity-factor where it gives one).  With moe_pad_to_capacity
   * (--moe-pad-expert-input-to-capacity) every expert computes exactly its
   * capacity, padded, and the dispatcher never waits for the host */
  double moe_capacity_factor;
  gboolean moe_pad_to_capacity;
  /* -1 unset; Megatron-Core's combined 1F1B: a pass's all-to-alls beside
   * the compute of the adjacent pass of the other direction */
  int moe_a2a_overlap;
  SimMoeDispatcher moe_dispatcher; /* --moe-dispatcher (default alltoall) */
  /* Transformer Engine's fused grouped MLP for the routed experts
   * (transformer_engine/pytorch/ops/fused/grouped_mlp.py @d0067d0,
   * _GroupedMLP_CuTeGEMMBase, which Megatron-Core's op fuser builds when
   * NVTE_CUTEDSL_FUSED_GROUPED_MLP is set): one grouped quantize of FC1's
   * input, FC1 as one grouped GEMM whose epilogue applies the gated
   * activation and the probabilities and writes FC2's block-scaled input,
   * FC2 as one grouped GEMM; backward likewise (sim-cost.c, moe_kernels).
   * Needs MXFP8 or NVFP4 and gated (SwiGLU) experts (sim_plan_resolve) */
  gboolean moe_fused_grouped_mlp;
  /* -1 unset; multi-token-prediction layers trained (Megatron-Core's
   * mtp_num_layers), on the last virtual stage after its decoder layers:
   * resolved to the model's (SimModel.mtp_layers), 0 under LoRA, or to
   * the layout's */
  int mtp_layers;
  /* Megatron-Core's CPU offloading (cpu_offloading_num_layers, with
   * cpu_offloading_weights off as Megatron-Bridge sets it): the saved
   * activations of this many transformer layers are copied to host memory
   * during the forward and back before the backward, beside the compute
   * (Transformer Engine's AsyncDoubleBufferGroupOffloadHandler); 0 off.
   * sim_plan_resolve asks, as Megatron-Core's TransformerConfig does, for
   * fewer than the model's layers, pp 1 and no recomputation, and a cluster
   * file that gives the GPU's host link (SimGpuType.host_bw_bytes_per_s) */
  int cpu_offload_layers;
  /* CUDA graphs: SimCudaGraphImpl and its SimGraphScope bits (0 with
   * SIM_CUDA_GRAPH_NONE; sim_plan_resolve sets full's bits when none are
   * given) */
  SimCudaGraphImpl cuda_graph_impl;
  guint cuda_graph_scope;
  /* NULL, or Megatron-Core's pipeline layout (--pipeline-model-parallel-
   * layout): each virtual stage's decoder layers in model order, shared by
   * reference between copies (sim_plan_copy); sim_plan_resolve takes the
   * virtual stages and the MTP layers from it */
  SimPlanLayout *layout;
  /* the per-GPU spread of compute speed, one standard deviation as a
   * fraction of the nominal time (sim-variability.h); < 0 unset, resolved
   * to SIM_GPU_VARIATION_DEFAULT; 0 a uniform cluster */
  double gpu_variation;
  /* the straggler what-if (--slow-gpu RANK:FACTOR, --slow-node
   * NODE:FACTOR): named GPUs, or every GPU of a node, whose compute takes
   * FACTOR times the nominal time; in the order given */
  SimSlow slow[SIM_PLAN_MAX_SLOW];
  int n_slow;
  /* the slow-link what-if (--slow-link nic:RANK:FACTOR or
   * nvlink:RANK:FACTOR), in the order given */
  SimSlowLink slow_links[SIM_PLAN_MAX_SLOW];
  int n_slow_links;

  /* which options the request gave (a bit per option, sim-plan-private.h;
   * sim_plan_given) */
  guint64 given;
  /* the request the plan was resolved from (owned; NULL in a request's own
   * record, sim-plan-private.h): a variant is this request changed */
  SimPlanRequest *request;
  /* derived by sim_plan_resolve */
  guint64 micro_batches;   /* per DP replica: global / (micro_batch * dp) */
  GPtrArray *defaults;     /* char*: one line per default applied; NULL in a request */
} SimPlan;

/* the largest factor of plan->slow over the GPUs of pipeline stage
 * `stage` in data-parallel replica `dp` (any tp and cp rank); 1 where none
 * of them is slow.  gpus_per_node maps --slow-node to ranks (rank r on GPU
 * r, node r / gpus_per_node).  A resolved plan; pure; any thread. */
double sim_plan_slow_factor (const SimPlan *plan, int gpus_per_node, int stage, int dp);
/* the global ranks of plan->slow[i]: *first .. *last (a node's GPUs, or
 * the one rank), clipped to the job */
void sim_plan_slow_ranks (const SimPlan *plan, int gpus_per_node, int i, int *first, int *last);
/* the named GPU (or node) of plan->slow[i] as text: "GPU 17" or "node 2:
 * GPUs 16-23"; new string */
char *sim_plan_slow_name (const SimPlan *plan, int gpus_per_node, int i);
/* The GPU whose links stand for plan->slow_links[i] among the GPUs the
 * iteration simulates: the same pipeline stage, CP rank and (for NVLinks)
 * TP rank in data-parallel replica 0, which stands for the slowest
 * replica as it does for a slow GPU (every replica's own with full, each
 * replica simulated); for a NIC, TP rank 0, whose gradient traffic the
 * shortcuts simulate for every TP rank's.  A rail-optimised cluster's
 * GPUs are alike, so the link's place changes nothing else.  A resolved
 * plan; pure. */
int sim_plan_slow_link_gpu (const SimPlan *plan, int i, gboolean full);
/* "GPU 17's NIC" or "GPU 17's NVLinks"; new string */
char *sim_plan_slow_link_name (const SimPlan *plan, int i);

/* a request with nothing given (free with sim_plan_request_free); never
 * fails */
SimPlanRequest *sim_plan_request_new (void);
SimPlanRequest *sim_plan_request_copy (const SimPlanRequest *req);
/* A copy of the request plan was resolved from: a setter then changes one
 * thing and sim_plan_resolve gives the variant (the remedies, the what-if's
 * plan without stragglers), which is the plan the user's options and the
 * changed one give together (each default resolved again: sequence
 * parallelism follows a new tp, as --tp would) */
SimPlanRequest *sim_plan_request_of (const SimPlan *plan);
/* NULL is ignored */
void sim_plan_request_free (SimPlanRequest *req);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimPlanRequest, sim_plan_request_free)

/* Set option key (without "--") to value (NULL for a bare boolean flag such
 * as "sequence-parallel" or "no-flash-attention").  key may also be one of
 * Megatron-LM's flag names ("tensor-model-parallel-size",
 * "use-distributed-optimizer", ...): it sets the sim option it maps to, or is
 * refused with SIM_ERROR_USAGE naming why ("--num-layers describes the
 * model: give the model with --model ...").  Returns FALSE with
 * SIM_ERROR_USAGE on an unknown key or a bad value.  *is_plan_key is set to
 * FALSE (and nothing is changed) when key is not a plan option at all, so a
 * CLI can try other tables. */
gboolean sim_plan_request_set (SimPlanRequest *req, const char *key, const char *value,
                               gboolean *is_plan_key, GError **error);
/* Set option key (its full name or short form, without "--"; not one of
 * Megatron-LM's names) to a number: a whole number for an option that
 * takes one ("tp", "global-batch"), the index of a choice in the order
 * sim --help lists them for an option that names choices (which is the
 * SimSchedule, SimRecompute, SimFp8 or SimFp4 value, or the ZeRO stage),
 * 0 or 1 for a boolean ("no-" before its name negates it).  The request
 * then holds what sim_plan_request_set with the value as text sets, the
 * option's given bit included, so that it resolves the same.  FALSE with
 * SIM_ERROR_USAGE on an unknown key, a value out of the option's range, or
 * an option whose value is text (a list, bytes, a fraction:
 * sim_plan_request_set). */
gboolean sim_plan_request_set_number (SimPlanRequest *req, const char *key, guint64 value,
                                      GError **error);
/* Recomputation as a whole: kind r, with modules under
 * SIM_RECOMPUTE_SELECTIVE (0: Megatron-Core's default core_attn), method
 * and num_layers under SIM_RECOMPUTE_FULL; what the other kinds do not
 * read is left unset, so that a request asking selective recomputation of
 * some modules can ask full recomputation instead.  Each value set is
 * marked given, as its option would. */
void sim_plan_request_set_recompute (SimPlanRequest *req, SimRecompute r, guint modules,
                                     SimRecomputeMethod method, int num_layers);
/* the straggler and slow-link what-ifs taken out (--slow-gpu, --slow-node,
 * --slow-link): the same cluster at its nominal speed */
void sim_plan_request_clear_slow (SimPlanRequest *req);
/* parse "tp=8,pp=4,dp=2,schedule=interleaved" into req:
 * sim_plan_request_set for each item, stopping at the first error
 * (SIM_ERROR_USAGE) */
gboolean sim_plan_request_parse_string (SimPlanRequest *req, const char *text, GError **error);
/* whether the request was given the option key (its full name) */
gboolean sim_plan_request_given (const SimPlanRequest *req, const char *key);
/* The number the request holds for an option (its full name or short
 * form) whose value is a number, a choice (its SimSchedule, SimRecompute,
 * ... value, or the ZeRO stage) or a boolean (0 or 1; its "no-" form reads
 * the same field): as given, before resolution, and where not given the
 * value that means unset to sim_plan_resolve (0 for the parallel degrees,
 * the batch and the sequence; -1 for a switch that defaults by cluster,
 * framework or model: sequence-parallel, flash-attention, zero, fp8-params
 * ...; < 0 for the reserve, the fragmentation and the GPU variation): what
 * a configuration file's rules, a shared global batch and the sweep's
 * options read before any plan is resolved.  NAN for an unknown key and
 * for an option whose value is text (a list, a layout, ranks). */
double sim_plan_request_value (const SimPlanRequest *req, const char *key);

/* a copy of a resolved plan, its defaults list included (free with
 * sim_plan_free) */
SimPlan *sim_plan_copy (const SimPlan *plan);
/* NULL is ignored */
void sim_plan_free (SimPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimPlan, sim_plan_free)

/* The same resolved plan over m micro-batches per replica, its global
 * batch m x micro_batch x dp: a shallow copy into *to, which shares
 * from's request, defaults and layout (so it is never freed and does not
 * outlive from), for the steady state's shorter runs
 * (sim-iteration-steady.c) */
void sim_plan_with_micro_batches (SimPlan *to, const SimPlan *from, guint64 m);

/* whether the option key takes a value ("tp" does, "sequence-parallel" does
 * not; FALSE for an unknown key); any thread */
gboolean sim_plan_key_takes_value (const char *key);
/* the plan string text ("tp=8,mb=1,sp=on") as the command-line flags that
 * set the same plan ("--tp 8 --micro-batch 1 --sequence-parallel"), each
 * key by its option's full name, in text's order; NULL with
 * SIM_ERROR_USAGE when an item is not a plan option; any thread */
char *sim_plan_string_flags (const char *text, GError **error);
/* whether every option the plan's request gave (by flag or plan string,
 * rather than left to its default) is one of keys (options' full names,
 * NULL-terminated); any thread */
gboolean sim_plan_given_within (const SimPlan *plan, const char *const *keys);
/* whether the plan's request gave the option key (its full name); any
 * thread */
gboolean sim_plan_given (const SimPlan *plan, const char *key);
/* a help text listing every plan option, for --help (caller g_free()s);
 * never fails; any thread */
char *sim_plan_help (void);


/* The part of sim_plan_resolve that needs the model but no cluster, for
 * what reads a plan's shapes alone (sim shapes): the model's sequence
 * length, ep 1 and etp = tp for a model with experts (1 and 1 for a dense
 * one, which refuses more), and the model's multi-token-prediction layers
 * (none under LoRA), each where the request gives none and noted as
 * sim_plan_resolve notes it; then the checks of the layout against the
 * model alone (tp divides the heads and the FFN width, pp at most the
 * layers, cp divides the sequence), which sim_plan_resolve also makes.
 * The request must give tp and cp; the plan's batch and cluster-dependent
 * fields are left as asked, so it is for the shapes only.  NULL with
 * SIM_ERROR_PLAN. */
SimPlan *sim_plan_resolve_model (const SimPlanRequest *req, const SimModel *model, GError **error);

/* The plan req asks for: its defaults applied (each one noted in
 * plan->defaults) and validated against topology and model.  NULL with
 * SIM_ERROR_PLAN, or SIM_ERROR_TOPOLOGY for a cluster of more than one GPU
 * type (sim_topology_check_one_gpu_type).
 * For a model with mixture-of-experts layers it also resolves ep, etp and
 * edp (the ep/etp defaults, the checks of Megatron-Core's MoE parallel
 * folding) and notes whether an etp x ep group stays inside one node's
 * NVLink domain; for a dense model ep and etp must be 1 and nothing is
 * noted.  It takes every model sim_model_load gives.  A new plan (free with
 * sim_plan_free); req, topology and model are only read. */
SimPlan *sim_plan_resolve (const SimPlanRequest *req, const SimTopology *topo,
                           const SimModel *model, GError **error);

/* Transformer layers on pipeline stage `stage`.  When pp does not divide
 * the layers, the stages that hold one layer fewer are the first and the
 * last, then the second and the second-to-last, and so on, as Llama 3 405B
 * trained 126 layers on 16 stages ("we reduce one Transformer layer each
 * from the first and the last stages", The Llama 3 Herd of Models 3.3.2).
 * This and the functions below need a resolved plan; pure; any thread. */
guint64 sim_plan_stage_layers (const SimPlan *plan, const SimModel *model, int stage);
/* The same rule over the pp x v model chunks of the interleaved schedule,
 * in model order (chunk c of stage s is the (c*pp + s)-th; Megatron's
 * interleaved layout): when pp x v does not divide the layers, the first
 * and the last chunks give up a layer first, then the second and the
 * second-to-last, ... (with v = 1 a chunk is a stage, as above; Megatron-
 * Core's pipeline_model_parallel_layout places DeepSeek-V3's 61 layers
 * with the embedding and the loss in lighter chunks the same way).  With
 * Megatron-Core's uneven options (first_stage_layers, last_stage_layers,
 * embedding_in_split, loss_in_split) the split is theirs instead, and a
 * first or last chunk may hold no layer (the embedding or the loss alone).
 * A stage holds the sum of its chunks; chunk_first_layer is the chunk's
 * first layer in the model. */
/* the model chunk (in model order, 0 .. pp x v - 1) that chunk `chunk` of
 * pipeline rank `stage` holds: chunk x pp + stage, or under the V-shaped
 * schedules (zb-v, dualpipe-v) stage for chunk 0 and 2 pp - 1 - stage for
 * chunk 1, or under dualpipe the block of its copy (0 .. pp - 1): stage
 * for chunk 0, pp - 1 - stage for chunk 1; and back (not for dualpipe,
 * whose blocks each appear twice) */
int sim_plan_virtual_stage (const SimPlan *plan, int stage, int chunk);
void sim_plan_chunk_at (const SimPlan *plan, int virtual_stage, int *stage, int *chunk);
/* whether the chunk holds the model's first layers (and the embedding) or
 * its last (and the output layer and loss); whether the rank holds the
 * output layer (the last rank, or the first under a V) */
gboolean sim_plan_chunk_is_first (const SimPlan *plan, int stage, int chunk);
gboolean sim_plan_chunk_is_last (const SimPlan *plan, int stage, int chunk);
gboolean sim_plan_stage_has_output (const SimPlan *plan, int stage);
gboolean sim_plan_stage_has_embedding (const SimPlan *plan, int stage);
/* whether the embedding and the output layer of one copy of the model sit
 * on one rank (pp 1, or the V's first rank): tied, they are one tensor */
gboolean sim_plan_ends_share_rank (const SimPlan *plan);
guint64 sim_plan_chunk_layers (const SimPlan *plan, const SimModel *model, int stage, int chunk);
/* the multi-token-prediction layers of model chunk `chunk` of pipeline
 * stage `stage`: all of plan->mtp_layers on the last virtual stage (where
 * Megatron-Core places the MTP block, after the decoder's layers), none
 * elsewhere; they are model layers model->layers, model->layers + 1, ...
 * (sim_model_layer_is_moe) */
guint64 sim_plan_chunk_mtp_layers (const SimPlan *plan, int stage, int chunk);
/* the most nodes one expert group (etp x ep GPUs of a stage, as
 * Megatron-Core's expert rank generator orders them) spans on topo; 1 when
 * every group stays inside one node's NVLink domain */
int sim_plan_expert_group_nodes (const SimPlan *plan, const SimTopology *topo);
guint64 sim_plan_chunk_first_layer (const SimPlan *plan, const SimModel *model, int stage,
                                    int chunk);
/* the layers of chunk `chunk` of stage `stage` that full recomputation
 * runs again (sim_plan_layer_recompute not SIM_LAYER_KEPT), dense and
 * mixture-of-experts, MTP layers included; 0 and 0 without it */
void sim_plan_chunk_recomputed (const SimPlan *plan, const SimModel *model, int stage, int chunk,
                                int *dense, int *moe);
/* the layers the chunks before `chunk` of the same stage hold: the first
 * layer's count on its pipeline rank (sim_plan_layer_recompute) */
int sim_plan_chunk_rank_offset (const SimPlan *plan, const SimModel *model, int stage, int chunk);
/* the first layer of a stage */
guint64 sim_plan_stage_first_layer (const SimPlan *plan, const SimModel *model, int stage);

/* coordinates of a global rank, and back */
void sim_plan_rank_coords (const SimPlan *plan, int rank, int coords[SIM_DIM_COUNT]);
int sim_plan_rank_of (const SimPlan *plan, const int coords[SIM_DIM_COUNT]);
int sim_plan_world_size (const SimPlan *plan);

const char *sim_schedule_name (SimSchedule s);
const char *sim_recompute_name (SimRecompute r);
/* "uniform", "block" or "every"; static; any thread */
const char *sim_recompute_method_name (SimRecomputeMethod m);
/* Layer i of a chunk under the plan's recomputation, the chunk's layers
 * starting at the rank_offset-th layer its pipeline rank holds (its
 * chunks in order): SIM_LAYER_KEPT unless --recompute full.  Pure; any
 * thread. */
SimLayerRecompute sim_plan_layer_recompute (const SimPlan *plan, int rank_offset, int i);
/* how many layers of a chunk run their forward again together (a uniform
 * group: their activations live at once), at most lc; 1 for the other
 * methods, 0 without full recomputation */
int sim_plan_recompute_group (const SimPlan *plan, int lc);
/* " (block: the first 4 layers of each chunk)" and the like after
 * "recompute full" where the method is not uniform with 1; "" otherwise;
 * new string */
char *sim_plan_recompute_method_string (const SimPlan *plan);
/* whether the plan recomputes every layer (full, uniform with any N) */
gboolean sim_plan_recomputes_all (const SimPlan *plan);
/* Megatron-Core's name of module bit i (0 .. SIM_RECOMPUTE_MODULE_COUNT-1):
 * "core_attn", "moe_act", ...; static; any thread */
const char *sim_recompute_module_name (int i);
/* the modules a model's recipes recompute when memory is short, cheap to
 * recompute for what they free (Megatron-Bridge's DeepSeek-V3 and Qwen3
 * presets): latent attention's up projections, the experts' activation,
 * and the norms that are modules of their own; 0 for a dense model
 * without latent attention.  Pure; any thread. */
guint sim_plan_cheap_recompute_modules (const SimModel *model);
/* the modules joined by sep ("core_attn,mla_up_proj"); new string */
char *sim_recompute_modules_string (guint modules, const char *sep);
/* "none", "transformer_engine" or "local"; static; any thread */
const char *sim_cuda_graph_impl_name (SimCudaGraphImpl i);
/* the scope bits joined by sep ("attn,moe_router"); new string */
char *sim_cuda_graph_scope_string (guint scope, const char *sep);
/* The graphs a layer's forward (and again its backward) replays under the
 * plan's CUDA graphs: 1 when its scope captures any of the layer, else 0.
 * A dense layer's attn and mlp captured together are one run of kernels;
 * in an MoE layer attn and moe_router are one run when both are captured
 * (the pre-MLP norm between them with them), and moe_preprocess continues
 * the router's graph.  Pure; any thread. */
int sim_plan_layer_graphs (const SimPlan *p, gboolean moe_layer);

/* torchtitan's op-level selective activation checkpointing
 * (--framework torchtitan --recompute selective; parallelisms/
 * parallelize_llama.py @9dec370, _apply_ac_to_transformer_block with
 * selective_ac_option 'op'): each block's forward keeps the outputs of its
 * matmuls (aten.mm) but every second one in program order, of SDPA and of
 * the reduce-scatters, and runs the rest again before its backward */
gboolean sim_plan_op_sac (const SimPlan *p);
const char *sim_recipe_name (SimRecipe r);
/* "off", "hybrid" or "e4m3"; static; any thread */
const char *sim_fp8_name (SimFp8 f);
const char *sim_fp8_recipe_name (SimFp8Recipe r);
const char *sim_fp4_name (SimFp4 f);
/* whether the linear layers' GEMMs run quantized: FP8 or FP4 */
gboolean sim_plan_quantized (const SimPlan *p);
const char *sim_dim_name (SimDim d);
/* the names above are static strings; the order string ("tp-cp-dp-pp") is
 * new (caller g_free()s) */
char *sim_plan_order_string (const SimPlan *plan);

G_END_DECLS
