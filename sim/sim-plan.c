/* sim-plan.c — plan options, defaults, validation and rank placement */
#include "sim-plan.h"
#include "sim-plan-private.h"
#include "sim-schedule.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-memory.h"
#include "sim-units.h"
#include "sim-variability.h"


typedef enum { ARG_INT, ARG_UINT, ARG_BOOL, ARG_CHOICE, ARG_STRING, ARG_BYTES, ARG_FRACTION } ArgKind;

typedef struct {
  const char *name;
  const char *alias;   /* short form for plan strings, or NULL */
  Key key;
  ArgKind arg;
  const char *choices; /* "|"-separated for ARG_CHOICE */
  const char *help;
} Option;

static const Option options[] = {
  { "tp", NULL, KEY_TP, ARG_INT, NULL, "tensor-parallel degree" },
  { "cp", NULL, KEY_CP, ARG_INT, NULL, "context-parallel degree (default 1)" },
  { "pp", NULL, KEY_PP, ARG_INT, NULL, "pipeline-parallel degree" },
  { "dp", NULL, KEY_DP, ARG_INT, NULL, "data-parallel degree (default: GPUs / (tp*cp*pp))" },
  { "ep", NULL, KEY_EP, ARG_INT, NULL, "expert-parallel degree of MoE layers (default 1)" },
  { "etp", NULL, KEY_ETP, ARG_INT, NULL,
    "expert tensor-parallel degree (MoE; default tp, as Megatron-Core)" },
  { "moe-imbalance", NULL, KEY_MOE_IMBALANCE, ARG_FRACTION, NULL,
    "mixture of experts: the busiest GPU's routed tokens over the mean, from 1 to 64 "
    "(default 1: balanced routing)" },
  { "moe-expert-capacity-factor", NULL, KEY_MOE_CAPACITY, ARG_STRING, NULL,
    "mixture of experts: token dropping, each expert taking at most this many times its even "
    "share of the routed tokens (default: dropless)" },
  { "moe-pad-expert-input-to-capacity", NULL, KEY_MOE_PAD, ARG_BOOL, NULL,
    "mixture of experts: every expert computes exactly its capacity, padded (needs "
    "--moe-expert-capacity-factor; default off)" },
  { "overlap-moe-expert-parallel-comm", NULL, KEY_MOE_A2A_OVERLAP, ARG_BOOL, NULL,
    "mixture of experts: hide each all-to-all behind the adjacent micro-batch's compute, as "
    "Megatron-Core's combined 1F1B (default off)" },
  { "moe-fused-grouped-mlp", NULL, KEY_MOE_FUSED_GROUPED_MLP, ARG_BOOL, NULL,
    "mixture of experts: each GPU's experts as Transformer Engine's fused grouped MLP (one "
    "grouped GEMM per linear, the activation and the FP8 cast in FC1's epilogue; MXFP8 or "
    "NVFP4, gated experts; Megatron-Core's op fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1; "
    "default off)" },
  { "moe-dispatcher", NULL, KEY_MOE_DISPATCHER, ARG_CHOICE, "alltoall|deepep",
    "mixture of experts: NCCL's all-to-all (default), or DeepEP's: each token sent once to "
    "each node holding one of its experts, then over NVLink" },
  { "micro-batch", "mb", KEY_MICRO_BATCH, ARG_INT, NULL, "sequences per micro-batch (default 1)" },
  { "global-batch", "gb", KEY_GLOBAL_BATCH, ARG_UINT, NULL,
    "sequences per optimizer step (default: the model's published batch)" },
  { "seq-len", "seq", KEY_SEQ_LEN, ARG_UINT, NULL, "tokens per sequence (default: the model's)" },
  { "schedule", NULL, KEY_SCHEDULE, ARG_CHOICE, "gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe-v|dualpipe",
    "pipeline schedule (default 1f1b)" },
  { "virtual-stages", "v", KEY_VIRTUAL_STAGES, ARG_INT, NULL,
    "model chunks per pipeline rank for the interleaved schedule" },
  { "recompute", NULL, KEY_RECOMPUTE, ARG_CHOICE, "none|selective|full",
    "activation recomputation (default none)" },
  { "recompute-modules", NULL, KEY_RECOMPUTE_MODULES, ARG_STRING, NULL,
    "what selective recomputation recomputes, joined by , or +: core_attn, moe_act, layernorm, "
    "mla_up_proj, mlp, moe, shared_experts (Megatron-Core's names; default core_attn; sets "
    "--recompute selective)" },
  { "recompute-method", NULL, KEY_RECOMPUTE_METHOD, ARG_CHOICE, "uniform|block|every",
    "which layers --recompute full recomputes: uniform (all, in groups of "
    "--recompute-num-layers, each group's input kept), block (the first N of each model chunk), "
    "every (every N-th layer of a pipeline rank, torchtitan's selective_ac_option N); "
    "default uniform; sets --recompute full" },
  { "recompute-num-layers", NULL, KEY_RECOMPUTE_NUM_LAYERS, ARG_INT, NULL,
    "N for --recompute-method (default 1; sets --recompute full)" },
  { "sequence-parallel", "sp", KEY_SEQUENCE_PARALLEL, ARG_BOOL, NULL,
    "Megatron sequence parallelism (default: on when tp > 1)" },
  { "flash-attention", "flash", KEY_FLASH_ATTENTION, ARG_BOOL, NULL,
    "fused attention that never stores the s*s scores (default on)" },
  { "zero", NULL, KEY_ZERO, ARG_CHOICE, "0|1|2|3",
    "ZeRO stage over the data-parallel group (default 1 when dp*cp > 1)" },
  { "recipe", NULL, KEY_RECIPE, ARG_CHOICE,
    "bf16-adam|bf16-adam-fp32-accum|fp32-adam|bf16-adam8bit|bf16-sgd|bf16-adam-bf16-states",
    "precision and optimizer (default bf16-adam)" },
  { "order", NULL, KEY_ORDER, ARG_STRING, NULL,
    "rank placement, fastest first (default tp-cp-dp-pp, as Megatron)" },
  { "lora-rank", NULL, KEY_LORA_RANK, ARG_UINT, NULL, "fine-tune with LoRA adapters of this rank" },
  { "lora-targets", NULL, KEY_LORA_TARGETS, ARG_STRING, NULL,
    "projections with adapters: q,k,v,o,gate,up,down,attention,mlp,all (default all)" },
  { "qlora", NULL, KEY_QLORA, ARG_BOOL, NULL, "4-bit (NF4) frozen base weights, with --lora-rank" },
  { "context-reserve", NULL, KEY_CONTEXT_RESERVE, ARG_BYTES, NULL,
    "memory taken by the CUDA context and library workspaces (default 1.5GB)" },
  { "fragmentation", NULL, KEY_FRAGMENTATION, ARG_FRACTION, NULL,
    "allocator fragmentation allowance, fraction or percent (default 10%)" },
  { "overlap-grad-reduce", "overlap", KEY_OVERLAP, ARG_BOOL, NULL,
    "overlap the data-parallel gradient reduction with the backward pass (default on)" },
  { "grad-reduce-in-fp32", NULL, KEY_GRAD_REDUCE_FP32, ARG_BOOL, NULL,
    "accumulate the gradients and reduce them over data parallelism in fp32, 4 bytes each: "
    "Megatron-LM's own default with --bf16 (default off: bf16, as NeMo's and Megatron-Bridge's "
    "performance recipes)" },
  { "framework", NULL, KEY_FRAMEWORK, ARG_CHOICE, "megatron|fsdp|torchtitan",
    "whose overlaps and kernels: Megatron-Core/NeMo, llm-foundry's PyTorch FSDP, or torchtitan "
    "(FSDP2, DTensor TP, SDPA; default megatron)" },
  { "tp-comm-overlap", NULL, KEY_TP_COMM_OVERLAP, ARG_BOOL, NULL,
    "hide TP collectives behind the GEMMs, as Transformer Engine's userbuffers, or with "
    "torchtitan its async TP, the forward's only (default: on with megatron and sequence "
    "parallelism)" },
  { "torch-compile", NULL, KEY_TORCH_COMPILE, ARG_BOOL, NULL,
    "torchtitan: each transformer block compiled by torch.compile, whose Inductor kernels fuse "
    "the norms and the activation that eager PyTorch runs op by op (default off, as torchtitan)" },
  { "attention-kernel", NULL, KEY_ATTENTION_KERNEL, ARG_CHOICE, "flash|triton|cudnn|flash2",
    "fused attention: the GPU's FlashAttention-class kernel, FlashAttention's Triton kernel, "
    "or, where the cluster file measures them, cuDNN's (Transformer Engine's NVTE_FUSED_ATTN=1) "
    "or FlashAttention-2 (default: with megatron cudnn where the cluster file gives its rates, "
    "as Transformer Engine prefers it on Hopper, else flash; triton with fsdp)" },
  { "overlap-param-gather", NULL, KEY_OVERLAP_PARAM_GATHER, ARG_BOOL, NULL,
    "gather ZeRO-1/2 parameters behind the next forward (default: on with megatron)" },
  { "fp8", NULL, KEY_FP8, ARG_CHOICE, "off|hybrid|e4m3",
    "FP8 linear layers, as Transformer Engine (default off; needs FP8 tensor cores)" },
  { "fp8-params", NULL, KEY_FP8_PARAMS, ARG_BOOL, NULL,
    "keep the weights in FP8 and gather them in FP8 (default: on with --fp8 and megatron)" },
  { "fp8-recipe", NULL, KEY_FP8_RECIPE, ARG_CHOICE, "delayed|current|mxfp8|blockwise|tensorwise",
    "FP8 scaling: per tensor from an amax history or from the tensor itself (tensorwise, "
    "Megatron's name), per 32 elements (Blackwell), or per 128-element tile (default: mxfp8 "
    "where the tensor cores take block scales, else delayed)" },
  { "fp8-expert-act", NULL, KEY_FP8_EXPERT_ACT, ARG_BOOL, NULL,
    "mixture of experts under FP8: keep each routed expert's SwiGLU input in FP8 and recompute "
    "its output in the backward, as DeepSeek-V3 (default off)" },
  { "fp8-attention", NULL, KEY_FP8_ATTENTION, ARG_BOOL, NULL,
    "the fused attention's forward in FP8 as well (needs --fp8; default off)" },
  { "tp-only-amax-red", NULL, KEY_TP_ONLY_AMAX_RED, ARG_BOOL, NULL,
    "delayed scaling: reduce each pass's amaxes over the TP x CP group only, not TP x DP x CP "
    "(needs --fp8; default off, as Megatron-Core)" },
  { "fp4", NULL, KEY_FP4, ARG_CHOICE, "off|e2m1",
    "FP4 linear layers, as Transformer Engine's NVFP4 recipe (default off; needs FP4 tensor "
    "cores; not with --fp8)" },
  { "fp4-recipe", NULL, KEY_FP4_RECIPE, ARG_CHOICE, "nvfp4",
    "FP4 scaling: an E4M3 scale per 16 values and an FP32 scale per tensor (the one recipe; "
    "needs --fp4)" },
  { "layers-per-virtual-stage", NULL, KEY_LAYERS_PER_VIRTUAL_STAGE, ARG_INT, NULL,
    "layers per interleaved model chunk: --virtual-stages = layers / (pp x this)" },
  { "first-stage-layers", NULL, KEY_FIRST_STAGE_LAYERS, ARG_INT, NULL,
    "transformer layers on the first pipeline stage, the rest split evenly over the others "
    "(Megatron's --decoder-first-pipeline-num-layers)" },
  { "last-stage-layers", NULL, KEY_LAST_STAGE_LAYERS, ARG_INT, NULL,
    "transformer layers on the last pipeline stage (Megatron's --decoder-last-pipeline-num-layers)" },
  { "pipeline-model-parallel-layout", "layout", KEY_PIPELINE_LAYOUT, ARG_STRING, NULL,
    "the layers of each virtual pipeline stage, as Megatron-Core writes them: E embedding, t "
    "layer, m MTP layer, L loss, | between stages, X*N and (...)*N repeat (e.g. "
    "Et*4|(t*4|)*14tmL); sets --virtual-stages and --mtp-num-layers" },
  { "mtp-num-layers", NULL, KEY_MTP_LAYERS, ARG_STRING, NULL,
    "multi-token-prediction layers to train, 0 to 64, on the last pipeline stage (Megatron-Core's "
    "MTP; default: the model's, as DeepSeek-V3 trained; 0 with LoRA)" },
  { "cpu-offloading-num-layers", NULL, KEY_CPU_OFFLOAD_LAYERS, ARG_STRING, NULL,
    "layers whose saved activations go to host memory in the forward pass and come back for "
    "the backward, beside the compute (Megatron-Core's CPU offloading; 0 to layers - 1; pp 1, "
    "no recomputation; default 0)" },
  { "cuda-graph-impl", NULL, KEY_CUDA_GRAPH_IMPL, ARG_CHOICE, "none|transformer_engine|local",
    "capture each layer's kernels in CUDA graphs, as Megatron-Core does with Transformer Engine's "
    "make_graphed_callables or its own graph manager: the host launches a graph instead of each "
    "kernel (default none)" },
  { "cuda-graph-scope", NULL, KEY_CUDA_GRAPH_SCOPE, ARG_STRING, NULL,
    "what the graphs capture, joined by , or +: attn, mlp, moe_router, moe_preprocess, or full "
    "(every layer whole, Megatron-Core's default; dense models) (sets --cuda-graph-impl "
    "transformer_engine)" },
  { "gpu-variation", NULL, KEY_GPU_VARIATION, ARG_FRACTION, NULL,
    "the spread of GPU compute speed, one standard deviation, fraction or percent: each step "
    "waits for the slowest of the job's GPUs (default 1.5%, Sinha et al. SC22; 0: a uniform "
    "cluster)" },
  { "slow-gpu", NULL, KEY_SLOW_GPU, ARG_STRING, NULL,
    "what-if: GPU RANK computes FACTOR times slower (RANK:FACTOR, e.g. 17:1.3; repeat for "
    "more): which stage and which collectives wait, and the step" },
  { "slow-node", NULL, KEY_SLOW_NODE, ARG_STRING, NULL,
    "what-if: every GPU of node NODE (0-based) computes FACTOR times slower (NODE:FACTOR)" },
  { "slow-link", NULL, KEY_SLOW_LINK, ARG_STRING, NULL,
    "what-if: GPU RANK's NIC port (nic:RANK:FACTOR) or its NVLinks (nvlink:RANK:FACTOR) carry "
    "1/FACTOR of their bandwidth, e.g. nic:17:2: which collectives wait, and the step" },
  { "account-for-embedding-in-pipeline-split", NULL, KEY_EMBEDDING_IN_SPLIT, ARG_BOOL, NULL,
    "count the embedding as a layer when splitting the layers over the stages: the first "
    "chunk holds one layer fewer (default off; both on when the layers are two fewer than "
    "the model chunks)" },
  { "account-for-loss-in-pipeline-split", NULL, KEY_LOSS_IN_SPLIT, ARG_BOOL, NULL,
    "count the output layer and loss as a layer: the last chunk holds one layer fewer "
    "(default off; both on when the layers are two fewer than the model chunks)" },
};

/* Megatron-LM's spellings (megatron/training/arguments.py), so that the flag
 * part of a launch script can be pasted.  A flag either sets a sim option
 * (with the value given, or with a fixed value for a bare flag) or is
 * refused with the reason: a flag that describes the model, or a feature
 * sim does not simulate, is never ignored in silence. */
typedef struct {
  const char *megatron; /* without "--" */
  const char *option;   /* the sim option it sets; NULL: refused */
  const char *fixed;    /* the value a bare flag sets; NULL: the value given */
  const char *refusal;  /* why it is refused */
  const char *only;     /* a refused flag's one value that sim already does (a no-op) */
} Alias;

#define DESCRIBES_MODEL "describes the model: give the model with --model (a models/*.xml or a Hugging Face config.json)"

static const Alias aliases[] = {
  { "tensor-model-parallel-size", "tp", NULL, NULL },
  { "pipeline-model-parallel-size", "pp", NULL, NULL },
  { "context-parallel-size", "cp", NULL, NULL },
  { "micro-batch-size", "micro-batch", NULL, NULL },
  { "global-batch-size", "global-batch", NULL, NULL },
  { "seq-length", "seq-len", NULL, NULL },
  { "recompute-granularity", "recompute", NULL, NULL },
  { "recompute-activations", "recompute", "selective", NULL },
  { "use-distributed-optimizer", "zero", "1", NULL },
  { "accumulate-allreduce-grads-in-fp32", "grad-reduce-in-fp32", "true", NULL },
  { "grad-reduce-in-bf16", "grad-reduce-in-fp32", "false", NULL },
  { "num-layers-per-virtual-pipeline-stage", "layers-per-virtual-stage", NULL, NULL },
  { "virtual-pipeline-model-parallel-size", "virtual-stages", NULL, NULL },
  { "decoder-first-pipeline-num-layers", "first-stage-layers", NULL, NULL },
  { "decoder-last-pipeline-num-layers", "last-stage-layers", NULL, NULL },
  { "fp8-format", "fp8", NULL, NULL },
  { "fp8-param-gather", "fp8-params", "true", NULL },
  { "fp8-dot-product-attention", "fp8-attention", "true", NULL },
  { "fp4-format", "fp4", NULL, NULL },
  { "use-flash-attn", "flash-attention", "true", NULL },
  { "bf16", "recipe", "bf16-adam", NULL },
  { "fp16", NULL, NULL, "trains in fp16 with loss scaling; sim models bf16 (and FP8 with --fp8)" },
  /* Megatron-LM's older spellings of --cuda-graph-impl (arguments.py:
   * --enable-cuda-graph is the local implementation, --external-cuda-graph
   * Transformer Engine's) */
  { "enable-cuda-graph", "cuda-graph-impl", "local", NULL },
  { "external-cuda-graph", "cuda-graph-impl", "transformer_engine", NULL },
  { "expert-model-parallel-size", "ep", NULL, NULL },
  { "expert-tensor-parallel-size", "etp", NULL, NULL },
  { "num-experts", NULL, NULL, "is for mixture-of-experts layers and " DESCRIBES_MODEL },
  { "moe-router-topk", NULL, NULL, "is for mixture-of-experts layers and " DESCRIBES_MODEL },
  { "num-layers", NULL, NULL, DESCRIBES_MODEL },
  { "hidden-size", NULL, NULL, DESCRIBES_MODEL },
  { "ffn-hidden-size", NULL, NULL, DESCRIBES_MODEL },
  { "num-attention-heads", NULL, NULL, DESCRIBES_MODEL },
  { "num-query-groups", NULL, NULL, DESCRIBES_MODEL },
  { "group-query-attention", NULL, NULL, DESCRIBES_MODEL },
  { "kv-channels", NULL, NULL, DESCRIBES_MODEL },
  { "max-position-embeddings", NULL, NULL, DESCRIBES_MODEL },
  { "position-embedding-type", NULL, NULL, DESCRIBES_MODEL },
  { "use-rotary-position-embeddings", NULL, NULL, DESCRIBES_MODEL },
  { "rotary-percent", NULL, NULL, DESCRIBES_MODEL },
  { "normalization", NULL, NULL, DESCRIBES_MODEL },
  { "swiglu", NULL, NULL, DESCRIBES_MODEL },
  { "squared-relu", NULL, NULL, DESCRIBES_MODEL },
  { "disable-bias-linear", NULL, NULL, DESCRIBES_MODEL },
  { "untie-embeddings-and-output-weights", NULL, NULL, DESCRIBES_MODEL },
  { "vocab-size", NULL, NULL, DESCRIBES_MODEL },
  { "padded-vocab-size", NULL, NULL, DESCRIBES_MODEL },
  { "make-vocab-size-divisible-by", NULL, NULL, DESCRIBES_MODEL },
  { "attention-dropout", NULL, NULL, DESCRIBES_MODEL },
  { "hidden-dropout", NULL, NULL, DESCRIBES_MODEL },
};

static const Alias *
find_alias (const char *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_str_equal (key, aliases[i].megatron))
      return &aliases[i];
  return NULL;
}

static void
plan_layout_free (gpointer data)
{
  SimPlanLayout *l = data;
  sim_layout_clear (&l->layout);
  g_free (l->text);
}

SimPlan *
sim_plan_new (void)
{
  SimPlan *p = g_new0 (SimPlan, 1);
  p->schedule = SIM_SCHEDULE_1F1B;
  p->recompute = SIM_RECOMPUTE_NONE;
  p->recompute_method = SIM_RECOMPUTE_UNIFORM;
  p->recompute_num_layers = 1;
  p->sequence_parallel = -1;
  p->flash_attention = -1;
  p->zero = -1;
  p->recipe = SIM_RECIPE_BF16_ADAM;
  p->order[0] = SIM_DIM_TP;
  p->order[1] = SIM_DIM_CP;
  p->order[2] = SIM_DIM_DP;
  p->order[3] = SIM_DIM_PP;
  p->lora_targets = SIM_LORA_ALL;
  p->context_reserve_bytes = -1;
  p->fragmentation = -1;
  p->overlap = TRUE;
  p->framework = SIM_FRAMEWORK_MEGATRON;
  p->tp_comm_overlap = -1;
  p->torch_compile = -1;
  p->moe_a2a_overlap = -1;
  p->overlap_param_gather = -1;
  p->attention_kernel = -1;
  p->fp8 = SIM_FP8_OFF;
  p->fp8_params = -1;
  p->fp8_recipe = -1;
  p->mtp_layers = -1;
  p->gpu_variation = -1;
  p->defaults = g_ptr_array_new_with_free_func (g_free);
  return p;
}

SimPlan *
sim_plan_copy (const SimPlan *plan)
{
  SimPlan *p = g_new0 (SimPlan, 1);
  *p = *plan;
  p->defaults = g_ptr_array_new_with_free_func (g_free);
  if (p->layout != NULL)
    g_rc_box_acquire (p->layout);
  return p;
}

void
sim_plan_free (SimPlan *plan)
{
  if (plan == NULL)
    return;
  g_clear_pointer (&plan->defaults, g_ptr_array_unref);
  if (plan->layout != NULL)
    g_rc_box_release_full (plan->layout, plan_layout_free);
  g_free (plan);
}

static const Option *
find_option (const char *key, gboolean *negated)
{
  *negated = FALSE;
  if (g_str_has_prefix (key, "no-")) {
    for (guint i = 0; i < G_N_ELEMENTS (options); i++)
      if (options[i].arg == ARG_BOOL &&
          (g_str_equal (key + 3, options[i].name) ||
           (options[i].alias != NULL && g_str_equal (key + 3, options[i].alias)))) {
        *negated = TRUE;
        return &options[i];
      }
  }
  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    if (g_str_equal (key, options[i].name) ||
        (options[i].alias != NULL && g_str_equal (key, options[i].alias)))
      return &options[i];
  return NULL;
}

gboolean
sim_plan_key_takes_value (const char *key)
{
  gboolean neg = FALSE;
  const Option *o = find_option (key, &neg);
  const Alias *a = o == NULL ? find_alias (key) : NULL;
  /* a refused flag takes nothing, so its refusal comes before any value check */
  if (a != NULL && a->option != NULL && a->fixed == NULL)
    o = find_option (a->option, &neg);
  if (a != NULL && a->only != NULL)
    return TRUE;
  return o != NULL && o->arg != ARG_BOOL;
}

static int
choice_index (const char *choices, const char *value)
{
  g_auto (GStrv) parts = g_strsplit (choices, "|", -1);
  for (int i = 0; parts[i] != NULL; i++)
    if (g_str_equal (parts[i], value))
      return i;
  return -1;
}

static gboolean
parse_order (SimPlan *plan, const char *value, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (value, "-", -1);
  guint seen = 0;
  if (g_strv_length (parts) != SIM_DIM_COUNT)
    goto bad;
  for (int i = 0; i < SIM_DIM_COUNT; i++) {
    int d = -1;
    for (int k = 0; k < SIM_DIM_COUNT; k++)
      if (g_str_equal (parts[i], sim_dim_name (k)))
        d = k;
    if (d < 0 || (seen & (1u << d)))
      goto bad;
    seen |= 1u << d;
    plan->order[i] = d;
  }
  return TRUE;
bad:
  g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
               "--order: expected a permutation of tp, cp, dp and pp such as tp-cp-dp-pp, got '%s'",
               value);
  return FALSE;
}

/* the largest value an option takes (see sim-plan.h for why each holds) */
static guint64
option_max (const Option *o)
{
  switch (o->key) {
  case KEY_SEQ_LEN: return SIM_PLAN_MAX_SEQ_LEN;
  case KEY_GLOBAL_BATCH: return SIM_PLAN_MAX_GLOBAL_BATCH;
  case KEY_MICRO_BATCH: return SIM_PLAN_MAX_MICRO_BATCH;
  case KEY_LORA_RANK: return SIM_PLAN_MAX_LORA_RANK;
  default: return SIM_PLAN_MAX_DEGREE;
  }
}

/* the option's value as a number (u) or a boolean (b), checked against its kind */
static gboolean
parse_value (const Option *o, const char *flag, const char *value, gboolean negated, guint64 *u,
             int *b, GError **error)
{
  switch (o->arg) {
  case ARG_INT:
  case ARG_UINT:
    if (value == NULL || !g_ascii_string_to_unsigned (value, 10, 1, option_max (o), u, NULL)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--%s: expected a whole number from 1 to %" G_GUINT64_FORMAT ", got '%.40s%s'",
                   flag, option_max (o), value != NULL ? value : "nothing",
                   value != NULL && strlen (value) > 40 ? "..." : "");
      return FALSE;
    }
    break;
  case ARG_BOOL:
    if (value != NULL) {
      if (g_str_equal (value, "true") || g_str_equal (value, "on") || g_str_equal (value, "1"))
        *b = 1;
      else if (g_str_equal (value, "false") || g_str_equal (value, "off") ||
               g_str_equal (value, "0"))
        *b = 0;
      else {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected true or false, got '%s'",
                     flag, value);
        return FALSE;
      }
    }
    if (negated)
      *b = !*b;
    break;
  case ARG_CHOICE:
    if (value == NULL || choice_index (o->choices, value) < 0) {
      g_autofree char *list = g_strdelimit (g_strdup (o->choices), "|", ',');
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected one of %s, got '%s'",
                   flag, list, value != NULL ? value : "nothing");
      return FALSE;
    }
    *u = (guint64) choice_index (o->choices, value);
    break;
  case ARG_STRING:
  case ARG_BYTES:
  case ARG_FRACTION:
    if (value == NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a value", flag);
      return FALSE;
    }
    break;
  }
  return TRUE;
}

static gboolean
parse_context_reserve (SimPlan *plan, const char *value, GError **error)
{
  guint64 bytes = 0;
  g_autoptr (GError) local = NULL;
  if (!sim_units_parse_bytes (value, &bytes, &local)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--context-reserve: %s", local->message);
    return FALSE;
  }
  plan->context_reserve_bytes = (double) bytes;
  return TRUE;
}

/* a fraction, or a percentage such as "10%", from 0 to max; NAN otherwise */
static double
fraction_or_percent (const char *value, double max)
{
  char *end = NULL;
  double f = g_ascii_strtod (value, &end);
  if (end != value && g_str_equal (end, "%"))
    f /= 100.0;
  else if (end == value || *end != '\0')
    f = NAN;
  return isfinite (f) && f >= 0.0 && f <= max ? f : NAN;
}

static gboolean
parse_fragmentation (SimPlan *plan, const char *value, GError **error)
{
  double f = fraction_or_percent (value, 0.9);
  if (isnan (f)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--fragmentation: expected a fraction from 0 to 0.9 or a percentage such as 10%%, got '%s'",
                 value);
    return FALSE;
  }
  plan->fragmentation = f;
  return TRUE;
}

static gboolean
parse_gpu_variation (SimPlan *plan, const char *value, GError **error)
{
  double f = fraction_or_percent (value, 0.2);
  if (isnan (f)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--gpu-variation: expected a fraction from 0 to 0.2 or a percentage such as 1.5%%, "
                 "got '%s'",
                 value);
    return FALSE;
  }
  plan->gpu_variation = f;
  return TRUE;
}

/* --slow-gpu RANK:FACTOR, --slow-node NODE:FACTOR: appended in order */
static gboolean
parse_slow (SimPlan *plan, const char *value, gboolean node, GError **error)
{
  const char *flag = node ? "--slow-node" : "--slow-gpu";
  const char *colon = strchr (value, ':');
  char *end = NULL;
  guint64 index = 0;
  double factor = NAN;
  if (colon != NULL && colon > value && g_ascii_isdigit (value[0])) {
    g_autofree char *head = g_strndup (value, (gsize) (colon - value));
    if (g_ascii_string_to_unsigned (head, 10, 0, G_MAXINT - 1, &index, NULL)) {
      factor = g_ascii_strtod (colon + 1, &end);
      if (end == colon + 1 || *end != '\0')
        factor = NAN;
    }
  }
  if (!isfinite (factor) || factor < 1.0 || factor > 100.0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected %s:FACTOR, a 0-based %s and how many times longer its compute "
                 "takes, from 1 to 100 (e.g. 3:1.25), got '%s'",
                 flag, node ? "NODE" : "RANK", node ? "node" : "global rank", value);
    return FALSE;
  }
  if (plan->n_slow >= SIM_PLAN_MAX_SLOW) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s %s: expected at most %d slow GPUs and nodes in all", flag, value,
                 SIM_PLAN_MAX_SLOW);
    return FALSE;
  }
  plan->slow[plan->n_slow++] = (SimSlow){ .node = node, .index = (int) index, .factor = factor };
  return TRUE;
}

/* --slow-link nic:RANK:FACTOR or nvlink:RANK:FACTOR: appended in order */
static gboolean
parse_slow_link (SimPlan *plan, const char *value, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (value, ":", -1);
  guint64 rank = 0;
  double factor = NAN;
  char *end = NULL;
  SimSlowLinkKind kind = SIM_SLOW_NIC;
  gboolean ok = g_strv_length (parts) == 3 &&
                (g_str_equal (parts[0], "nic") || g_str_equal (parts[0], "nvlink")) &&
                g_ascii_isdigit (parts[1][0]) &&
                g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXINT - 1, &rank, NULL);
  if (ok) {
    kind = g_str_equal (parts[0], "nic") ? SIM_SLOW_NIC : SIM_SLOW_NVLINK;
    factor = g_ascii_strtod (parts[2], &end);
    if (end == parts[2] || *end != '\0')
      factor = NAN;
  }
  if (!isfinite (factor) || factor < 1.0 || factor > 100.0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--slow-link: expected nic:RANK:FACTOR or nvlink:RANK:FACTOR, a 0-based global "
                 "rank and how many times less bandwidth its links carry, from 1 to 100 (e.g. "
                 "nic:3:2), got '%s'", value);
    return FALSE;
  }
  if (plan->n_slow_links >= SIM_PLAN_MAX_SLOW) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--slow-link %s: expected at most %d slow links", value, SIM_PLAN_MAX_SLOW);
    return FALSE;
  }
  plan->slow_links[plan->n_slow_links++] = (SimSlowLink){ .kind = kind, .rank = (int) rank, .factor = factor };
  return TRUE;
}

/* The bits of a list of Megatron-Core names (recompute_modules,
 * cuda_graph_scope) joined by ',' (a command-line flag) or '+' (inside a
 * plan string, whose items ',' separates): names[k] is bit k, and `alias`,
 * when not NULL, stands for alias_bits; a name it does not know is refused
 * with the flag and the expected names */
static gboolean
parse_names (const char *flag, const char *value, const char *const *names, int count,
             const char *alias, guint alias_bits, const char *expected, guint *bits, GError **error)
{
  g_auto (GStrv) parts = g_strsplit_set (value, ",+", -1);
  guint out = 0;
  for (guint i = 0; parts[i] != NULL; i++) {
    const char *name = g_strstrip (parts[i]);
    int k = 0;
    if (alias != NULL && g_str_equal (name, alias)) {
      out |= alias_bits;
      continue;
    }
    while (k < count && !g_str_equal (name, names[k]))
      k++;
    if (k == count) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected %s joined by , or +, got '%.40s'",
                   flag, expected, name);
      return FALSE;
    }
    out |= 1u << k;
  }
  *bits = out;
  return TRUE;
}

static gboolean
parse_pipeline_layout (SimPlan *plan, const char *value, GError **error)
{
  SimPlanLayout *l = g_rc_box_new0 (SimPlanLayout);
  if (!sim_layout_parse (value, &l->layout, error)) {
    g_rc_box_release_full (l, plan_layout_free);
    return FALSE;
  }
  l->text = g_strdup (value);
  if (plan->layout != NULL)
    g_rc_box_release_full (plan->layout, plan_layout_free);
  plan->layout = l;
  return TRUE;
}

static gboolean
parse_cpu_offload_layers (SimPlan *plan, const char *value, GError **error)
{
  guint64 n = 0;
  if (!g_ascii_string_to_unsigned (value, 10, 0, SIM_PLAN_MAX_DEGREE, &n, NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--cpu-offloading-num-layers: expected a whole number from 0 to %u, got '%.40s'",
                 SIM_PLAN_MAX_DEGREE, value);
    return FALSE;
  }
  plan->cpu_offload_layers = (int) n;
  return TRUE;
}

static gboolean
parse_mtp_layers (SimPlan *plan, const char *value, GError **error)
{
  guint64 n = 0;
  if (!g_ascii_string_to_unsigned (value, 10, 0, 64, &n, NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--mtp-num-layers: expected a whole number from 0 to 64, got '%.40s'", value);
    return FALSE;
  }
  plan->mtp_layers = (int) n;
  return TRUE;
}

/* a ratio from lo to hi for --flag into *out; `meaning` says what it is
 * a ratio of */
static gboolean
parse_ratio (const char *flag, const char *value, double lo, double hi, const char *meaning,
             double *out, GError **error)
{
  char *end = NULL;
  double f = g_ascii_strtod (value, &end);
  if (end == value || *end != '\0' || !isfinite (f) || f < lo || f > hi) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected a ratio from %g to %g (%s), got '%.40s'",
                 flag, lo, hi, meaning, value);
    return FALSE;
  }
  *out = f;
  return TRUE;
}

static gboolean
parse_moe_imbalance (SimPlan *plan, const char *value, GError **error)
{
  return parse_ratio ("moe-imbalance", value, 1.0, 64.0,
                      "the busiest GPU's routed tokens over the mean", &plan->moe_imbalance, error);
}

static gboolean
parse_moe_capacity (SimPlan *plan, const char *value, GError **error)
{
  return parse_ratio ("moe-expert-capacity-factor", value, 0.01, 64.0,
                      "an expert's capacity over its even share of the routed tokens",
                      &plan->moe_capacity_factor, error);
}

/* stores the parsed value (u, b, or the text for strings, bytes and fractions) */
static gboolean
store_value (SimPlan *plan, Key key, guint64 u, int b, const char *value, GError **error)
{
  switch (key) {
  case KEY_TP: plan->tp = (int) u; break;
  case KEY_CP: plan->cp = (int) u; break;
  case KEY_PP: plan->pp = (int) u; break;
  case KEY_DP: plan->dp = (int) u; break;
  case KEY_MICRO_BATCH: plan->micro_batch = (int) u; break;
  case KEY_GLOBAL_BATCH: plan->global_batch = u; break;
  case KEY_SEQ_LEN: plan->seq_len = u; break;
  case KEY_SCHEDULE: plan->schedule = (SimSchedule) u; plan->schedule_given = TRUE; break;
  case KEY_VIRTUAL_STAGES: plan->virtual_stages = (int) u; break;
  case KEY_RECOMPUTE: plan->recompute = (SimRecompute) u; break;
  case KEY_RECOMPUTE_METHOD: plan->recompute_method = (SimRecomputeMethod) u; break;
  case KEY_RECOMPUTE_NUM_LAYERS: plan->recompute_num_layers = (int) u; break;
  case KEY_SEQUENCE_PARALLEL: plan->sequence_parallel = b; break;
  case KEY_FLASH_ATTENTION: plan->flash_attention = b; break;
  case KEY_ZERO: plan->zero = (int) u; break;
  case KEY_RECIPE: plan->recipe = (SimRecipe) u; plan->recipe_given = TRUE; break;
  case KEY_ORDER: return parse_order (plan, value, error);
  case KEY_LORA_RANK: plan->lora_rank = u; break;
  case KEY_LORA_TARGETS: return sim_lora_targets_parse (value, &plan->lora_targets, error);
  case KEY_QLORA: plan->qlora = b; break;
  case KEY_OVERLAP: plan->overlap = b; break;
  case KEY_FRAMEWORK: plan->framework = (SimFramework) u; plan->framework_given = TRUE; break;
  case KEY_TP_COMM_OVERLAP: plan->tp_comm_overlap = b; break;
  case KEY_TORCH_COMPILE: plan->torch_compile = b; break;
  case KEY_OVERLAP_PARAM_GATHER: plan->overlap_param_gather = b; break;
  case KEY_ATTENTION_KERNEL: plan->attention_kernel = (int) u; break;
  case KEY_FP8: plan->fp8 = (SimFp8) u; break;
  case KEY_FP8_PARAMS: plan->fp8_params = b; break;
  case KEY_FP8_RECIPE: plan->fp8_recipe = u == 4 ? SIM_FP8_CURRENT : (int) u; break;
  case KEY_FP8_ATTENTION: plan->fp8_attention = b; break;
  case KEY_FP8_EXPERT_ACT: plan->fp8_expert_act = b; break;
  case KEY_MOE_PAD: plan->moe_pad_to_capacity = b; break;
  case KEY_MOE_FUSED_GROUPED_MLP: plan->moe_fused_grouped_mlp = b; break;
  case KEY_TP_ONLY_AMAX_RED: plan->tp_only_amax_red = b; break;
  case KEY_GRAD_REDUCE_FP32: plan->grad_reduce_fp32 = b; break;
  case KEY_FP4: plan->fp4 = (SimFp4) u; break;
  case KEY_FP4_RECIPE: plan->fp4_recipe_given = TRUE; break;
  case KEY_LAYERS_PER_VIRTUAL_STAGE: plan->layers_per_virtual_stage = (int) u; break;
  case KEY_EP: plan->ep = (int) u; break;
  case KEY_ETP: plan->etp = (int) u; break;
  case KEY_CONTEXT_RESERVE: return parse_context_reserve (plan, value, error);
  case KEY_FRAGMENTATION: return parse_fragmentation (plan, value, error);
  case KEY_MOE_IMBALANCE: return parse_moe_imbalance (plan, value, error);
  case KEY_MOE_CAPACITY: return parse_moe_capacity (plan, value, error);
  case KEY_GPU_VARIATION: return parse_gpu_variation (plan, value, error);
  case KEY_SLOW_GPU: return parse_slow (plan, value, FALSE, error);
  case KEY_SLOW_NODE: return parse_slow (plan, value, TRUE, error);
  case KEY_SLOW_LINK: return parse_slow_link (plan, value, error);
  case KEY_RECOMPUTE_MODULES:
    return parse_names ("recompute-modules", value, sim_plan_recompute_module_names, SIM_RECOMPUTE_MODULE_COUNT,
                        NULL, 0, "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or shared_experts",
                        &plan->recompute_modules, error);
  case KEY_MTP_LAYERS: return parse_mtp_layers (plan, value, error);
  case KEY_CPU_OFFLOAD_LAYERS: return parse_cpu_offload_layers (plan, value, error);
  case KEY_PIPELINE_LAYOUT: return parse_pipeline_layout (plan, value, error);
  case KEY_MOE_A2A_OVERLAP: plan->moe_a2a_overlap = b; break;
  case KEY_MOE_DISPATCHER: plan->moe_dispatcher = (SimMoeDispatcher) u; break;
  case KEY_CUDA_GRAPH_IMPL: plan->cuda_graph_impl = (SimCudaGraphImpl) u; break;
  case KEY_CUDA_GRAPH_SCOPE:
    /* "full", Megatron-Core's default, is every layer whole */
    return parse_names ("cuda-graph-scope", value, sim_plan_graph_scope_names, SIM_GRAPH_SCOPE_COUNT, "full",
                        SIM_GRAPH_ATTN | SIM_GRAPH_MLP | SIM_GRAPH_MOE,
                        "attn, mlp, moe, moe_router, moe_preprocess or full", &plan->cuda_graph_scope,
                        error);
  case KEY_FIRST_STAGE_LAYERS: plan->first_stage_layers = (int) u; break;
  case KEY_LAST_STAGE_LAYERS: plan->last_stage_layers = (int) u; break;
  case KEY_EMBEDDING_IN_SPLIT: plan->embedding_in_split = b; break;
  case KEY_LOSS_IN_SPLIT: plan->loss_in_split = b; break;
  }
  return TRUE;
}

gboolean
sim_plan_set (SimPlan *plan, const char *key, const char *value, gboolean *is_plan_key,
              GError **error)
{
  gboolean negated = FALSE;
  const Option *o = find_option (key, &negated);
  const Alias *a = o == NULL ? find_alias (key) : NULL;
  guint64 u = 0;
  int b = 1;

  if (is_plan_key != NULL)
    *is_plan_key = (o != NULL || a != NULL);
  if (a != NULL && a->option == NULL && a->only != NULL && value != NULL &&
      g_str_equal (value, a->only))
    return TRUE;
  if (a != NULL && a->option == NULL && a->only != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected %s, got '%.40s': %s", key,
                 a->only, value != NULL ? value : "nothing", a->refusal);
    return FALSE;
  }
  if (a != NULL && a->option == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s %s", key, a->refusal);
    return FALSE;
  }
  if (a != NULL) {
    if (a->fixed != NULL && value != NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected no value (it sets --%s %s)",
                   key, a->option, a->fixed);
      return FALSE;
    }
    o = find_option (a->option, &negated);
    if (a->fixed != NULL)
      value = a->fixed;
  }
  if (o == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "unknown option '%s'", key);
    return FALSE;
  }
  if (!parse_value (o, key, value, negated, &u, &b, error))
    return FALSE;
  if (!store_value (plan, o->key, u, b, value, error))
    return FALSE;
  plan->given |= G_GUINT64_CONSTANT (1) << o->key;
  return TRUE;
}

gboolean
sim_plan_set_number (SimPlan *plan, const char *key, guint64 value, GError **error)
{
  gboolean negated = FALSE;
  const Option *o = find_option (key, &negated);
  guint64 u = 0, choices = 1;
  int b = 1;
  if (o == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "unknown option '%s'", key);
    return FALSE;
  }
  /* the checks parse_value makes of the value as text */
  switch (o->arg) {
  case ARG_INT:
  case ARG_UINT:
    if (value < 1 || value > option_max (o)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--%s: expected a whole number from 1 to %" G_GUINT64_FORMAT ", got %" G_GUINT64_FORMAT,
                   key, option_max (o), value);
      return FALSE;
    }
    u = value;
    break;
  case ARG_BOOL:
    if (value > 1) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected 0 or 1, got %" G_GUINT64_FORMAT,
                   key, value);
      return FALSE;
    }
    b = negated ? !value : (int) value;
    break;
  case ARG_CHOICE:
    for (const char *c = o->choices; *c != '\0'; c++)
      choices += *c == '|';
    if (value >= choices) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--%s: expected a choice from 0 to %" G_GUINT64_FORMAT ", got %" G_GUINT64_FORMAT,
                   key, choices - 1, value);
      return FALSE;
    }
    u = value;
    break;
  case ARG_STRING:
  case ARG_BYTES:
  case ARG_FRACTION:
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected its value as text (sim_plan_set)", key);
    return FALSE;
  }
  if (!store_value (plan, o->key, u, b, NULL, error))
    return FALSE;
  plan->given |= G_GUINT64_CONSTANT (1) << o->key;
  return TRUE;
}

static gboolean
plan_item (const char *key, const char *value, gpointer plan, GError **error)
{
  return sim_plan_set (plan, key, value, NULL, error);
}

gboolean
sim_plan_parse_string (SimPlan *plan, const char *text, GError **error)
{
  return sim_units_foreach_key_value (text, plan_item, plan, error);
}


typedef struct {
  GString *out;
} FlagsCtx;

static gboolean
flag_item (const char *key, const char *value, gpointer data, GError **error)
{
  FlagsCtx *c = data;
  gboolean negated = FALSE;
  const Option *o = find_option (key, &negated);
  int b = 1;
  guint64 u = 0;
  if (o == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "unknown option '%s'", key);
    return FALSE;
  }
  if (c->out->len > 0)
    g_string_append_c (c->out, ' ');
  if (o->arg == ARG_BOOL) {
    if (!parse_value (o, key, value, negated, &u, &b, error))
      return FALSE;
    g_string_append_printf (c->out, "--%s%s", b ? "" : "no-", o->name);
  } else
    g_string_append_printf (c->out, "--%s %s", o->name, value != NULL ? value : "");
  return TRUE;
}

char *
sim_plan_string_flags (const char *text, GError **error)
{
  FlagsCtx c = { g_string_new (NULL) };
  if (!sim_units_foreach_key_value (text, flag_item, &c, error)) {
    g_string_free (c.out, TRUE);
    return NULL;
  }
  return g_string_free (c.out, FALSE);
}

gboolean
sim_plan_given (const SimPlan *plan, const char *key)
{
  gboolean negated = FALSE;
  const Option *o = find_option (key, &negated);
  return o != NULL && given (plan, o->key);
}

gboolean
sim_plan_given_within (const SimPlan *plan, const char *const *keys)
{
  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    if (given (plan, options[i].key) && !g_strv_contains (keys, options[i].name))
      return FALSE;
  return TRUE;
}

char *
sim_plan_help (void)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (options); i++) {
    const Option *o = &options[i];
    g_autofree char *flag = NULL;
    if (o->arg == ARG_BOOL)
      flag = g_strdup_printf ("--[no-]%s", o->name);
    else if (o->arg == ARG_CHOICE)
      flag = g_strdup_printf ("--%s %s", o->name, o->choices);
    else if (o->arg == ARG_INT || o->arg == ARG_UINT) {
      /* the range it takes: 2^k for the large powers of two */
      guint64 max = option_max (o);
      int k = g_bit_nth_lsf (max, -1);
      if (max >= (1u << 20) && max == G_GUINT64_CONSTANT (1) << k)
        flag = g_strdup_printf ("--%s 1..2^%d", o->name, k);
      else
        flag = g_strdup_printf ("--%s 1..%" G_GUINT64_FORMAT, o->name, max);
    } else
      flag = g_strdup_printf ("--%s N", o->name);
    g_string_append_printf (s, "  %-34s %s\n", flag, o->help);
  }
  g_string_append (s, "  Megatron-LM's flags are accepted too (README, \"Bring your own config\"):\n   ");
  for (guint i = 0, col = 3; i < G_N_ELEMENTS (aliases); i++) {
    gsize w = strlen (aliases[i].megatron) + 3;
    if (aliases[i].option == NULL)
      continue;
    if (col + w > 98) {
      g_string_append (s, "\n   ");
      col = 3;
    }
    g_string_append_printf (s, " --%s", aliases[i].megatron);
    col += w;
  }
  g_string_append_c (s, '\n');
  return g_string_free (s, FALSE);
}

void
sim_plan_note_default (SimPlan *plan, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_ptr_array_add (plan->defaults, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

static gboolean check_split (const SimPlan *plan, const SimModel *model, GError **error);

/* layouts of world GPUs that keep tp and cp, for the mismatch message */
static char *
suggest_layouts (const SimPlan *plan, int world, const SimModel *model)
{
  GString *s = g_string_new (NULL);
  gint64 tc64 = (gint64) plan->tp * plan->cp; /* degrees are at most 2^17 */
  int tc, shown = 0;
  if (tc64 > world || world % tc64 != 0)
    return g_string_free (s, FALSE);
  tc = (int) tc64;
  for (int pp = 1; pp <= world / tc && shown < 8; pp++) {
    if ((world / tc) % pp != 0 || model->layers % (guint64) pp != 0)
      continue;
    g_string_append_printf (s, "%s--tp %d", shown ? "; " : "", plan->tp);
    if (plan->cp > 1)
      g_string_append_printf (s, " --cp %d", plan->cp);
    g_string_append_printf (s, " --pp %d --dp %d", pp, world / tc / pp);
    shown++;
  }
  return g_string_free (s, FALSE);
}

/* tp, cp, pp and dp: defaults, then the checks against the cluster and the model */
static gboolean
resolve_layout (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  int world = sim_topology_n_gpus (topo);

  if (plan->tp == 0) {
    plan->tp = 1;
    sim_plan_note_default (plan, "--tp 1");
  }
  if (plan->cp == 0)
    plan->cp = 1;
  if (plan->pp == 0) {
    plan->pp = 1;
    sim_plan_note_default (plan, "--pp 1");
  }
  if (plan->dp == 0) {
    /* each degree is at most SIM_PLAN_MAX_DEGREE = 2^17: three fit in 2^51 */
    gint64 mp = (gint64) plan->tp * plan->cp * plan->pp;
    if (mp <= world && world % mp == 0) {
      plan->dp = (int) (world / mp);
      sim_plan_note_default (plan, "--dp %d (the %d GPU%s of %s / (tp %d x cp %d x pp %d))", plan->dp,
                    world, world == 1 ? "" : "s", topo->name, plan->tp, plan->cp, plan->pp);
    } else {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "tp %d x cp %d x pp %d = %" G_GINT64_FORMAT " does not divide the %d GPUs of %s, so no data-parallel degree fits",
                   plan->tp, plan->cp, plan->pp, mp, world, topo->name);
      return FALSE;
    }
  }
  /* four degrees of up to 2^17 overflow 64 bits: compare as doubles, exact below 2^53 */
  if ((double) plan->tp * plan->cp * plan->pp * plan->dp != (double) world) {
    g_autofree char *alts = suggest_layouts (plan, world, model);
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d x cp %d x pp %d x dp %d = %.0f GPU%s, but %s has %d (%d node%s)%s%s",
                 plan->tp, plan->cp, plan->pp, plan->dp,
                 (double) plan->tp * plan->cp * plan->pp * plan->dp,
                 (double) plan->tp * plan->cp * plan->pp * plan->dp == 1 ? "" : "s", topo->name, world,
                 topo->n_nodes, topo->n_nodes == 1 ? "" : "s", *alts ? "; layouts that fit: " : "", alts);
    return FALSE;
  }
  return check_split (plan, model, error);
}

gboolean
sim_plan_check_model_split (const SimPlan *plan, const SimModel *model, GError **error)
{
  return check_split (plan, model, error);
}

static gboolean
check_split (const SimPlan *plan, const SimModel *model, GError **error)
{
  guint64 tp = (guint64) MAX (plan->tp, 1), cp = (guint64) MAX (plan->cp, 1);
  if (model->heads % tp != 0 || model->kv_heads % tp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d must divide the %" G_GUINT64_FORMAT " attention heads and %" G_GUINT64_FORMAT
                 " KV heads of %s, so each tensor-parallel rank holds whole heads",
                 plan->tp, model->heads, model->kv_heads, model->name);
    return FALSE;
  }
  /* the dense FFN width matters only where a dense layer has it */
  if (model->ffn_hidden % tp != 0 && sim_model_moe_layers (model) < model->layers) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d must divide the feed-forward width %" G_GUINT64_FORMAT " of %s",
                 plan->tp, model->ffn_hidden, model->name);
    return FALSE;
  }
  if ((guint64) plan->pp > model->layers) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "pp %d exceeds the %" G_GUINT64_FORMAT " layers of %s: every stage needs at least one layer",
                 plan->pp, model->layers, model->name);
    return FALSE;
  }
  if (plan->seq_len > 0 && plan->seq_len % cp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "cp %d must divide the sequence length %" G_GUINT64_FORMAT, plan->cp,
                 plan->seq_len);
    return FALSE;
  }
  return TRUE;
}

/* sequence length, micro-batch and global batch, and the micro-batches they give */
/* the model's sequence length where the plan gives none */
static void
resolve_seq_len (SimPlan *plan, const SimModel *model)
{
  if (plan->seq_len == 0) {
    /* a model file's own length is not a guess: not listed; a Hugging
     * Face config's is read from a field that may not be the run's */
    plan->seq_len = model->seq_len;
    if (model->seq_len_from != NULL)
      sim_plan_note_default (plan, "--seq-len %" G_GUINT64_FORMAT " (the config's %s; give the training run's)",
                    plan->seq_len, model->seq_len_from);
  }
}

static gboolean
resolve_batch (SimPlan *plan, const SimModel *model, GError **error)
{
  guint64 mbdp = 0;

  resolve_seq_len (plan, model);
  if (model->attention_window > 0 && plan->seq_len > model->attention_window) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--seq-len %" G_GUINT64_FORMAT " is longer than the %" G_GUINT64_FORMAT
                 "-token sliding attention window of %s; sim charges full causal attention, "
                 "exact only up to the window (remove sliding_window from the config to model "
                 "full attention)", plan->seq_len, model->attention_window, model->name);
    return FALSE;
  }
  if (plan->seq_len % (guint64) plan->cp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "cp %d must divide the sequence length %" G_GUINT64_FORMAT, plan->cp,
                 plan->seq_len);
    return FALSE;
  }

  if (plan->micro_batch == 0) {
    plan->micro_batch = 1;
    sim_plan_note_default (plan, "--micro-batch 1");
  }
  mbdp = (guint64) plan->micro_batch * (guint64) plan->dp;
  if (plan->global_batch == 0) {
    if (model->default_global_batch > 0) {
      plan->global_batch = (model->default_global_batch + mbdp - 1) / mbdp * mbdp;
      if (plan->global_batch != model->default_global_batch)
        plan->global_batch_wanted = model->default_global_batch;
      sim_plan_note_default (plan, "--global-batch %" G_GUINT64_FORMAT " (%s's published batch%s)",
                    plan->global_batch, model->name,
                    plan->global_batch != model->default_global_batch ? ", rounded up to a multiple of micro-batch x dp" : "");
    } else {
      /* SIM_PLAN_SEQUENCES_PER_GPU per GPU, rounded up to whole
       * micro-batches of every replica */
      guint64 want = SIM_PLAN_SEQUENCES_PER_GPU * (guint64) sim_plan_world_size (plan);
      plan->global_batch = (want + mbdp - 1) / mbdp * mbdp;
      if (plan->global_batch != want)
        plan->global_batch_wanted = want;
      sim_plan_note_default (plan, "--global-batch %" G_GUINT64_FORMAT " (%d sequences per GPU%s: %s publishes none)",
                    plan->global_batch, SIM_PLAN_SEQUENCES_PER_GPU,
                    plan->global_batch != want ? ", rounded up to a multiple of micro-batch x dp" : "",
                    model->name);
    }
  }
  if (plan->global_batch % mbdp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "global batch %" G_GUINT64_FORMAT " must be a multiple of micro-batch %d x dp %d = %"
                 G_GUINT64_FORMAT, plan->global_batch, plan->micro_batch, plan->dp, mbdp);
    return FALSE;
  }
  plan->micro_batches = plan->global_batch / mbdp;
  if (plan->micro_batches > SIM_PLAN_MAX_MICRO_BATCHES) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "global batch %" G_GUINT64_FORMAT " is %" G_GUINT64_FORMAT
                 " micro-batches per data-parallel replica; sim simulates at most %d "
                 "(raise --micro-batch or --dp)",
                 plan->global_batch, plan->micro_batches, SIM_PLAN_MAX_MICRO_BATCHES);
    return FALSE;
  }
  if ((guint64) plan->micro_batch * plan->seq_len / (guint64) plan->cp > SIM_PLAN_MAX_MB_TOKENS) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "micro-batch %d x sequence %" G_GUINT64_FORMAT " / cp %d is more than %" G_GUINT64_FORMAT
                 " tokens per GPU per micro-batch, beyond what sim's arithmetic holds",
                 plan->micro_batch, plan->seq_len, plan->cp, SIM_PLAN_MAX_MB_TOKENS);
    return FALSE;
  }
  return TRUE;
}


/* Selective recomputation's modules, each where the model has it, as
 * Megatron-Core applies them (transformer_layer.py @0014f137: "layernorm"
 * only to a norm that is its own module, not fused into the next linear:
 * latent attention's input norm and an MoE layer's pre-MLP norm, as
 * Transformer Engine's layer specs build them; "mlp" only to dense
 * layers).  A module the model lacks is refused, never ignored. */
static gboolean
resolve_recompute_modules (SimPlan *plan, const SimModel *model, GError **error)
{
  gboolean mla = model->mla.kv_lora_rank > 0, moe = sim_model_is_moe (model);
  guint64 moe_layers = sim_model_moe_layers (model);
  struct { guint bit; gboolean has; const char *lacks; } need[] = {
    { SIM_RECOMPUTE_MOE_ACT, moe, "mixture-of-experts layers" },
    { SIM_RECOMPUTE_MOE, moe, "mixture-of-experts layers" },
    { SIM_RECOMPUTE_SHARED_EXPERTS, moe && model->moe.shared_experts > 0, "shared experts" },
    { SIM_RECOMPUTE_MLA_UP_PROJ, mla, "latent attention (MLA)" },
    { SIM_RECOMPUTE_MLP, moe_layers < model->layers, "dense MLP layers" },
    { SIM_RECOMPUTE_LAYERNORM, mla || moe,
      "norm outside a linear layer (only latent attention's input norm and an MoE layer's "
      "pre-MLP norm are; the others are fused into their linear, as Transformer Engine runs them)" },
  };
  if (plan->recompute_modules != 0 && !given (plan, KEY_RECOMPUTE)) {
    plan->recompute = SIM_RECOMPUTE_SELECTIVE;
    sim_plan_note_default (plan, "--recompute selective (--recompute-modules given)");
  }
  if (sim_plan_op_sac (plan)) {
    /* torchtitan's selective recomputation is its op-level policy
     * (sim_plan_op_sac), modelled on a dense layer of standard attention */
    const char *why = plan->recompute_modules != 0
                          ? "--recompute-modules: Megatron-Core's modules, not torchtitan's; its "
                            "selective recomputation is an op-level policy"
                      : moe || mla ? "--recompute selective: torchtitan's op-level policy is modelled "
                                     "on dense layers of standard attention"
                                   : NULL;
    if (why != NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "%s (--framework torchtitan)", why);
      return FALSE;
    }
    sim_plan_note_default (plan, "--recompute selective: torchtitan's op-level policy (matmul outputs but "
                        "every second, SDPA's and the reduce-scatters' kept)");
    return TRUE;
  }
  if (plan->recompute != SIM_RECOMPUTE_SELECTIVE) {
    if (plan->recompute_modules != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--recompute-modules: expected --recompute selective, got --recompute %s",
                   sim_recompute_name (plan->recompute));
      return FALSE;
    }
    return TRUE;
  }
  if (plan->recompute_modules == 0) {
    plan->recompute_modules = SIM_RECOMPUTE_CORE_ATTN;
    sim_plan_note_default (plan, "--recompute-modules core_attn (Megatron-Core's default)");
  }
  for (guint i = 0; i < G_N_ELEMENTS (need); i++)
    if ((plan->recompute_modules & need[i].bit) && !need[i].has) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--recompute-modules %s: expected a model with %s, and %s has none",
                   sim_recompute_module_name (g_bit_nth_lsf (need[i].bit, -1)), need[i].lacks,
                   model->name);
      return FALSE;
    }
  /* one checkpoint around the whole MoE layer holds its parts' too */
  if ((plan->recompute_modules & SIM_RECOMPUTE_MOE) &&
      (plan->recompute_modules & (SIM_RECOMPUTE_MOE_ACT | SIM_RECOMPUTE_SHARED_EXPERTS))) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--recompute-modules: moe recomputes the whole MoE layer; expected it without "
                 "moe_act and shared_experts");
    return FALSE;
  }
  return TRUE;
}

/* Which layers full recomputation recomputes: the method or its count
 * given alone means --recompute full, as Megatron-Core reads
 * recompute_method only with recompute_granularity full
 * (transformer_block.py, _checkpointed_forward under
 * recompute_granularity == 'full') */
static gboolean
resolve_recompute_method (SimPlan *plan, GError **error)
{
  gboolean method = given (plan, KEY_RECOMPUTE_METHOD) || given (plan, KEY_RECOMPUTE_NUM_LAYERS);
  if (!method)
    return TRUE;
  if (!given (plan, KEY_RECOMPUTE)) {
    plan->recompute = SIM_RECOMPUTE_FULL;
    sim_plan_note_default (plan, "--recompute full (--recompute-%s given)",
                  given (plan, KEY_RECOMPUTE_METHOD) ? "method" : "num-layers");
  } else if (plan->recompute != SIM_RECOMPUTE_FULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--recompute-%s: expected --recompute full, got --recompute %s",
                 given (plan, KEY_RECOMPUTE_METHOD) ? "method" : "num-layers",
                 sim_recompute_name (plan->recompute));
    return FALSE;
  }
  return TRUE;
}

/* recomputation, flash attention, sequence parallelism and the ZeRO stage */
static gboolean
resolve_memory_savers (SimPlan *plan, GError **error)
{
  if (!given (plan, KEY_RECOMPUTE) && plan->recompute_modules == 0 &&
      !given (plan, KEY_RECOMPUTE_METHOD) && !given (plan, KEY_RECOMPUTE_NUM_LAYERS))
    sim_plan_note_default (plan, "--recompute none");
  if (plan->flash_attention < 0) {
    plan->flash_attention = 1;
    sim_plan_note_default (plan, "--flash-attention");
  }
  if (plan->sequence_parallel < 0) {
    plan->sequence_parallel = plan->tp > 1;
    sim_plan_note_default (plan, "--%ssequence-parallel%s", plan->tp > 1 ? "" : "no-",
                  plan->tp > 1 ? " (tp > 1)" : " (tp 1)");
  } else if (plan->sequence_parallel && plan->tp == 1) {
    plan->sequence_parallel = 0;
    sim_plan_note_default (plan, "--no-sequence-parallel (sequence parallelism needs tp > 1)");
  }
  if (plan->sequence_parallel && (plan->seq_len / (guint64) plan->cp) % (guint64) plan->tp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "sequence parallelism needs tp %d to divide the %" G_GUINT64_FORMAT
                 " tokens each context-parallel rank holds", plan->tp,
                 plan->seq_len / (guint64) plan->cp);
    return FALSE;
  }
  if (plan->zero < 0) {
    plan->zero = plan->dp * plan->cp > 1 ? 1 : 0;
    sim_plan_note_default (plan, "--zero %d%s", plan->zero,
                  plan->zero ? " (distributed optimizer over dp x cp, as Megatron-Core and NeMo recipes use)" : " (no data-parallel group to shard over)");
  }
  return TRUE;
}

/* The most nodes one expert group (the etp x ep GPUs that share a
 * layer's routed experts) spans.  Megatron-Core numbers a stage's GPUs
 * for the experts etp fastest, then ep, then edp, in the order it numbers
 * them for attention (parallel_state.py, initialize_model_parallel: the
 * expert RankGenerator takes the same order with cp folded away;
 * NVIDIA/Megatron-LM @00caa53), so group g of a stage is its GPUs g*n ..
 * (g+1)*n - 1 counted in that order, n = etp x ep. */
int
sim_plan_expert_group_nodes (const SimPlan *plan, const SimTopology *topo)
{
  int n = plan->etp * plan->ep, per_stage = plan->tp * plan->cp * plan->dp, most = 1;
  g_autoptr (GHashTable) nodes = g_hash_table_new (g_direct_hash, g_direct_equal);

  for (int stage = 0; stage < plan->pp; stage++)
    for (int first = 0; first < per_stage; first += n) {
      g_hash_table_remove_all (nodes);
      for (int j = first; j < first + n; j++) {
        int coords[SIM_DIM_COUNT], rest = j;
        /* j counted over the attention dimensions in --order, pp left out */
        for (int i = 0; i < SIM_DIM_COUNT; i++) {
          SimDim d = plan->order[i];
          int size = d == SIM_DIM_TP ? plan->tp : d == SIM_DIM_CP ? plan->cp : plan->dp;
          if (d == SIM_DIM_PP)
            continue;
          coords[d] = rest % size;
          rest /= size;
        }
        coords[SIM_DIM_PP] = stage;
        g_hash_table_add (nodes, GINT_TO_POINTER (sim_topology_gpu (topo, sim_plan_rank_of (plan, coords))->node));
      }
      most = MAX (most, (int) g_hash_table_size (nodes));
    }
  return most;
}

/* the expert-parallel degrees: ep 1 and etp = tp where the plan gives
 * none (Megatron-Core's, as resolve_experts cites them); a dense model has no experts to
 * split, so 1 and 1, and larger is refused */
static gboolean
resolve_expert_degrees (SimPlan *plan, const SimModel *model, GError **error)
{
  if (!sim_model_is_moe (model)) {
    if (plan->ep > 1 || plan->etp > 1) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%s %d: %s has no mixture-of-experts layers, so --ep and --etp must be 1",
                   plan->ep > 1 ? "ep" : "etp", plan->ep > 1 ? plan->ep : plan->etp, model->name);
      return FALSE;
    }
    /* no note: a dense model's report does not mention experts */
    plan->ep = plan->etp = 1;
    return TRUE;
  }
  if (plan->ep == 0) {
    plan->ep = 1;
    sim_plan_note_default (plan, "--ep 1");
  }
  if (plan->etp == 0) {
    plan->etp = plan->tp;
    sim_plan_note_default (plan, "--etp %d (= tp, as Megatron-Core)", plan->etp);
  }
  return TRUE;
}

/* Expert parallelism, as Megatron-Core's MoE parallel folding: the
 * attention of a stage runs on tp x cp x dp GPUs, its routed experts on the
 * same GPUs as etp x ep x edp, so edp = tp*cp*dp / (etp*ep) must be whole
 * (parallel_state.py: "world_size ... is not divisible by
 * expert_tensor_model_pipeline_parallel size"); ep divides the routed
 * experts (moe_layer.py: num_moe_experts % expert_parallel_size == 0); etp
 * defaults to tp (arguments.py: "if args.expert_tensor_parallel_size is
 * None: args.expert_tensor_parallel_size = args.tensor_model_parallel_size";
 * all NVIDIA/Megatron-LM) */
static gboolean
resolve_experts (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  guint64 stage_gpus = (guint64) plan->tp * (guint64) plan->cp * (guint64) plan->dp, group = 0;
  const SimMoe *moe = &model->moe;
  int nodes = 0;

  if (!resolve_expert_degrees (plan, model, error))
    return FALSE;
  if (!sim_model_is_moe (model)) {
    if (plan->moe_imbalance > 0 || plan->moe_a2a_overlap > 0 || given (plan, KEY_MOE_DISPATCHER) ||
        plan->fp8_expert_act || plan->moe_capacity_factor > 0 || plan->moe_pad_to_capacity ||
        plan->moe_fused_grouped_mlp) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--%s: %s has no mixture-of-experts layers",
                   plan->moe_imbalance > 0         ? "moe-imbalance"
                   : plan->moe_fused_grouped_mlp   ? "moe-fused-grouped-mlp"
                   : plan->moe_capacity_factor > 0 ? "moe-expert-capacity-factor"
                   : plan->moe_pad_to_capacity     ? "moe-pad-expert-input-to-capacity"
                   : plan->moe_a2a_overlap > 0 ? "overlap-moe-expert-parallel-comm"
                   : plan->fp8_expert_act      ? "fp8-expert-act"
                                               : "moe-dispatcher",
                   model->name);
      return FALSE;
    }
    plan->moe_a2a_overlap = 0;
    plan->edp = (int) stage_gpus;
    return TRUE;
  }
  /* Megatron-Core: "Avoid EP overlap when full activation recompute is
   * enabled" (Megatron-Bridge's expert-parallel overlap guide); its
   * combined 1F1B pairs a forward with a backward, so it needs them */
  if (plan->moe_a2a_overlap > 0 && plan->recompute == SIM_RECOMPUTE_FULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--overlap-moe-expert-parallel-comm: not with --recompute full (Megatron-Core's "
                 "combined 1F1B does not support it)");
    return FALSE;
  }
  if (plan->moe_a2a_overlap < 0) {
    plan->moe_a2a_overlap = 0;
    if (plan->ep > 1 || plan->etp > 1)
      sim_plan_note_default (plan, "--no-overlap-moe-expert-parallel-comm (the all-to-alls after the compute, "
                          "as Megatron-Core's default)");
  }
  /* the model's capacity factor where the plan gives none; padding needs
   * one (Megatron-Core's MoEAlltoAllTokenDispatcher asserts it) */
  if (plan->moe_capacity_factor == 0 && moe->capacity_factor > 0) {
    plan->moe_capacity_factor = moe->capacity_factor;
    sim_plan_note_default (plan, "--moe-expert-capacity-factor %g (%s's capacity-factor)",
                           moe->capacity_factor, model->name);
  }
  if (plan->moe_pad_to_capacity && plan->moe_capacity_factor == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--moe-pad-expert-input-to-capacity: expected a capacity, --moe-expert-capacity-factor "
                 "(dropless experts have none to pad to)");
    return FALSE;
  }
  if (plan->moe_imbalance == 0) {
    plan->moe_imbalance = 1.0;
    sim_plan_note_default (plan, "--moe-imbalance 1 (balanced routing: every GPU gets the mean share of "
                        "routed tokens)");
  }
  if (moe->experts % (guint64) plan->ep != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--ep %d must divide the %" G_GUINT64_FORMAT " routed experts of %s, so each "
                 "expert-parallel rank holds whole experts", plan->ep, moe->experts, model->name);
    return FALSE;
  }
  if (moe->ffn_hidden % (guint64) plan->etp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--etp %d must divide the expert width %" G_GUINT64_FORMAT " of %s",
                 plan->etp, moe->ffn_hidden, model->name);
    return FALSE;
  }
  if ((moe->shared_experts * moe->ffn_hidden) % (guint64) plan->tp != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "tp %d must divide the shared experts' width %" G_GUINT64_FORMAT " of %s",
                 plan->tp, moe->shared_experts * moe->ffn_hidden, model->name);
    return FALSE;
  }
  group = (guint64) plan->etp * (guint64) plan->ep;
  if (stage_gpus % group != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "etp %d x ep %d = %" G_GUINT64_FORMAT " must divide the tp %d x cp %d x dp %d = %"
                 G_GUINT64_FORMAT " GPUs of a pipeline stage (expert data parallel = their "
                 "quotient, as Megatron-Core)", plan->etp, plan->ep, group, plan->tp, plan->cp,
                 plan->dp, stage_gpus);
    return FALSE;
  }
  plan->edp = (int) (stage_gpus / group);
  sim_plan_note_default (plan, "expert data parallel %d (tp x cp x dp / (etp x ep))", plan->edp);
  /* arguments.py: "When not using pp-last rank ordering, the data parallel
   * size of the attention and moe layers must be the same" */
  if (plan->order[SIM_DIM_COUNT - 1] != SIM_DIM_PP && plan->pp > 1 && plan->edp != plan->dp) {
    g_autofree char *order = sim_plan_order_string (plan);
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--order %s does not place pp last, so expert data parallel %d must equal dp %d "
                 "(as Megatron-Core requires): give etp x ep = tp x cp", order, plan->edp, plan->dp);
    return FALSE;
  }
  /* arguments.py: "When using MoE and tensor parallelism, sequence
   * parallelism must be used." */
  if (plan->tp > 1 && !plan->sequence_parallel) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--no-sequence-parallel: mixture-of-experts layers with tp %d need sequence "
                 "parallelism (as Megatron-Core requires)", plan->tp);
    return FALSE;
  }
  if (plan->lora_rank > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--lora-rank: sim does not model LoRA adapters on mixture-of-experts layers");
    return FALSE;
  }
  if (group > 1) {
    nodes = sim_plan_expert_group_nodes (plan, topo);
    if (nodes == 1)
      sim_plan_note_default (plan, "expert groups (etp x ep = %" G_GUINT64_FORMAT " GPUs) each inside one "
                          "node's NVLink domain", group);
    else
      sim_plan_note_default (plan, "expert groups (etp x ep = %" G_GUINT64_FORMAT " GPUs) span up to %d "
                          "nodes: the token all-to-all crosses the network", group, nodes);
  }
  return TRUE;
}

/* whether the nodes' NVSwitch multicasts (NVLink SHARP: Hopper's
 * third-generation NVSwitch and later; the cluster file's sharp="true") */
static gboolean
nvswitch_multicast (const SimTopology *topo)
{
  for (guint i = 0; i < topo->vertices->len; i++) {
    const SimVertex *v = &g_array_index (topo->vertices, SimVertex, i);
    if (v->kind == SIM_VERTEX_NVSWITCH && v->sharp)
      return TRUE;
  }
  return FALSE;
}

/* the recipe, and the framework's overlaps and attention kernel */
static void
resolve_framework (SimPlan *plan, const SimTopology *topo)
{
  if (!plan->recipe_given)
    sim_plan_note_default (plan, "--recipe %s", sim_recipe_name (plan->recipe));
  if (!plan->framework_given)
    sim_plan_note_default (plan, "--framework megatron (Megatron-Core overlaps and kernels, as NeMo recipes)");
  if (plan->tp_comm_overlap < 0) {
    /* Transformer Engine's userbuffers overlap splits the sequence-parallel
     * all-gathers and reduce-scatters; NeMo recipes turn it on with TP on
     * Hopper and later.  Its buffers are CUDA multicast objects, which
     * need an NVSwitch with NVLink SHARP (TransformerEngine
     * pytorch/module/base.py initialize_ub asserts
     * tex.device_supports_multicast() unless UB_SKIPMC=1), and NeMo's tuned
     * overlap configurations are for H100 and B200 alone
     * (nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py).
     * The published Megatron runs on A100 ran without it: Narayanan et al.
     * 2021 and Korthikanti et al. 2022 predate it, and MegaScale's Table 3
     * (arXiv 2402.15627) adds "TP overlap" to its Megatron-LM baseline
     * (tests/validation/data/megascale_scaling.md). */
    gboolean multicast = nvswitch_multicast (topo);
    plan->tp_comm_overlap = plan->framework == SIM_FRAMEWORK_MEGATRON && plan->tp > 1 &&
                            plan->sequence_parallel && multicast;
    if (plan->tp > 1)
      sim_plan_note_default (plan, "--%stp-comm-overlap%s", plan->tp_comm_overlap ? "" : "no-",
                    plan->framework == SIM_FRAMEWORK_MEGATRON && plan->sequence_parallel && !multicast
                        ? " (no NVLink SHARP multicast on this NVSwitch, which Transformer Engine's "
                          "overlap needs)"
                        : "");
  }
  if (plan->overlap_param_gather < 0) {
    plan->overlap_param_gather = plan->framework == SIM_FRAMEWORK_MEGATRON;
    if (plan->zero >= 1 && plan->zero < 3 && plan->dp * plan->cp > 1)
      sim_plan_note_default (plan, "--%soverlap-param-gather", plan->overlap_param_gather ? "" : "no-");
  }
  /* bf16 gradients on the wire, as NeMo's performance recipes set
   * (grad_reduce_in_fp32 = False); said where a pasted Megatron-LM script
   * would differ: its --bf16 reduces in fp32 */
  if (plan->framework == SIM_FRAMEWORK_MEGATRON && plan->dp * plan->cp > 1 && !given (plan, KEY_GRAD_REDUCE_FP32) &&
      (plan->recipe == SIM_RECIPE_BF16_ADAM || plan->recipe == SIM_RECIPE_BF16_ADAM8BIT ||
       plan->recipe == SIM_RECIPE_BF16_ADAM_BF16_STATES || plan->recipe == SIM_RECIPE_BF16_SGD))
    sim_plan_note_default (plan, "--no-grad-reduce-in-fp32 (bf16 gradients, as NeMo's performance recipes; "
                        "Megatron-LM's --bf16 reduces in fp32)");
}

/* CUDA graphs.  A scope without an implementation is Transformer Engine's
 * (Megatron-Bridge's recipes pair the two), an implementation without a
 * scope captures every layer whole (Megatron-Core's default, "full").
 * Capturing an MoE layer whole needs its token counts static, padded to
 * the experts' capacity (Megatron-Core's moe_pad_expert_input_to_capacity),
 * which sim does not model: it routes every token (dropless), so moe and
 * full are refused on MoE models, as the partial scopes the recipes use
 * (attn, moe_router, moe_preprocess) are not.  Graphs are Megatron-Core's,
 * not PyTorch FSDP's; sim does not model them beside full recomputation. */
static gboolean
resolve_cuda_graphs (SimPlan *plan, const SimModel *model, GError **error)
{
  guint s = plan->cuda_graph_scope;
  g_autofree char *names = NULL;
  const char *why = NULL;

  if (s != 0 && !given (plan, KEY_CUDA_GRAPH_IMPL)) {
    plan->cuda_graph_impl = SIM_CUDA_GRAPH_TE;
    sim_plan_note_default (plan, "--cuda-graph-impl transformer_engine (--cuda-graph-scope given)");
  }
  if (plan->cuda_graph_impl == SIM_CUDA_GRAPH_NONE) {
    if (s != 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--cuda-graph-scope: expected a --cuda-graph-impl other than none");
      return FALSE;
    }
    return TRUE;
  }
  if (s == 0) {
    if (sim_model_is_moe (model)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--cuda-graph-impl %s: expected --cuda-graph-scope for %s, whose MoE layers "
                   "cannot be captured whole (the default, full) without padding each expert's "
                   "tokens to its capacity, which sim does not model: attn, moe_router, "
                   "moe_preprocess, as NVIDIA's recipes", sim_cuda_graph_impl_name (plan->cuda_graph_impl),
                   model->name);
      return FALSE;
    }
    s = plan->cuda_graph_scope = SIM_GRAPH_ATTN | SIM_GRAPH_MLP;
    sim_plan_note_default (plan, "--cuda-graph-scope full (every layer whole, Megatron-Core's default)");
  }
  names = sim_cuda_graph_scope_string (s, ",");
  if ((s & SIM_GRAPH_MOE) && sim_model_is_moe (model))
    why = "capturing MoE layers whole needs each expert's tokens padded to its capacity, which "
          "sim does not model (it routes every token): expected attn, moe_router, moe_preprocess";
  else if ((s & (SIM_GRAPH_MOE_ROUTER | SIM_GRAPH_MOE_PREPROCESS)) && !sim_model_is_moe (model))
    why = "moe_router and moe_preprocess are for mixture-of-experts layers, and the model has none";
  else if ((s & SIM_GRAPH_MOE_PREPROCESS) && !(s & SIM_GRAPH_MOE_ROUTER))
    why = "expected moe_router with moe_preprocess (the preprocess continues the router's graph)";
  else if (plan->framework != SIM_FRAMEWORK_MEGATRON)
    why = "Megatron-Core's graphs, not with PyTorch FSDP or torchtitan";
  else if (plan->recompute == SIM_RECOMPUTE_FULL)
    why = "sim does not model CUDA graphs with --recompute full";
  if (why != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--cuda-graph-scope %s: %s", names, why);
    return FALSE;
  }
  /* a dense model's scope without the MoE bits full set */
  if (!sim_model_is_moe (model))
    plan->cuda_graph_scope &= ~(guint) SIM_GRAPH_MOE;
  return TRUE;
}

/* The fused attention's kernel, when not given: llm-foundry's MPT
 * benchmarks, the FSDP runs we validate on, ran FlashAttention's Triton
 * kernel (scripts/train/benchmarking/submit_benchmarks.py @12a63191:
 * --attn_impl default 'triton').  Megatron-Core runs Transformer Engine's
 * DotProductAttention, whose backend choice prefers cuDNN's fused attention
 * to FlashAttention on compute capability 9.0 and later when both can run a
 * BF16 layer ("Disabling FlashAttention to give FusedAttention preference
 * on Hopper+ for performance reasons", transformer_engine/pytorch/
 * attention, get_attention_backend; NVIDIA/NeMo pull request 9188): cudnn
 * where the cluster file gives cuDNN's rates (the Hopper files), else the
 * GPU's FlashAttention-class kernel.  torchtitan calls PyTorch's
 * scaled_dot_product_attention, which on Hopper dispatches its
 * FlashAttention-2 backend: PyTorch 2.5 made the cuDNN backend opt-in
 * (pytorch/pytorch pull request 138522, "Make CuDNN Attention Opt in"), and
 * H100 runs of torchtitan on 2.7 nightlies still got FLASH_ATTENTION
 * (pytorch/torchtitan issue 1042); flash2 where the cluster file gives its
 * rates, else flash.  Then --attention-kernel cudnn or flash2 needs the
 * cluster file's rates for it. */
static gboolean
resolve_attention_kernel (SimPlan *plan, const SimTopology *topo, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  gboolean cudnn;
  if (plan->attention_kernel < 0) {
    if (plan->framework == SIM_FRAMEWORK_FSDP)
      plan->attention_kernel = SIM_ATTENTION_TRITON;
    else if (plan->framework == SIM_FRAMEWORK_TORCHTITAN)
      plan->attention_kernel = g != NULL && g->attn_flash2_fwd_efficiency > 0 ? SIM_ATTENTION_FLASH2
                                                                              : SIM_ATTENTION_FLASH;
    else
      plan->attention_kernel = g != NULL && g->attn_cudnn_fwd_efficiency > 0 ? SIM_ATTENTION_CUDNN
                                                                             : SIM_ATTENTION_FLASH;
    if (plan->flash_attention)
      sim_plan_note_default (plan, "--attention-kernel %s",
                    plan->attention_kernel == SIM_ATTENTION_TRITON   ? "triton (llm-foundry's)"
                    : plan->attention_kernel == SIM_ATTENTION_CUDNN ? "cudnn (Transformer Engine's choice on Hopper)"
                    : plan->attention_kernel == SIM_ATTENTION_FLASH2 ? "flash2 (PyTorch SDPA's FlashAttention-2 backend)"
                                                                      : "flash");
  }
  cudnn = plan->attention_kernel == SIM_ATTENTION_CUDNN;
  if ((cudnn && (g == NULL || g->attn_cudnn_fwd_efficiency <= 0)) ||
      (plan->attention_kernel == SIM_ATTENTION_FLASH2 && (g == NULL || g->attn_flash2_fwd_efficiency <= 0))) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--attention-kernel %s: the cluster file of %s gives no %s rate (attributes %s-forward-"
                 "efficiency and %s-backward-efficiency of <attention>); expected flash or triton here",
                 cudnn ? "cudnn" : "flash2", g != NULL ? g->name : topo->name,
                 cudnn ? "cuDNN fused-attention" : "FlashAttention-2", cudnn ? "cudnn" : "flash2",
                 cudnn ? "cudnn" : "flash2");
    return FALSE;
  }
  return TRUE;
}

/* FP8: the GPU must have FP8 tensor cores; weights in FP8 by default with
 * megatron, as NVIDIA's FP8 performance recipes run (NVIDIA/dgxc-benchmarking
 * nemotron/configure.sh and nemo_megatron/gpt3_175b_hydra.yaml @35a9aec:
 * fp8_params true) */
static gboolean
resolve_fp8 (SimPlan *plan, const SimTopology *topo, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  if (plan->fp8 == SIM_FP8_OFF) {
    if (plan->fp8_attention || plan->tp_only_amax_red || plan->fp8_expert_act) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%s: expected --fp8 hybrid or e4m3 with it (the plan trains in BF16)",
                   plan->fp8_attention ? "fp8-attention"
                   : plan->fp8_expert_act ? "fp8-expert-act"
                                          : "tp-only-amax-red");
      return FALSE;
    }
    if (plan->fp8_recipe >= 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--fp8-recipe %s: expected --fp8 hybrid or e4m3 with it (the plan trains in BF16)",
                   sim_fp8_recipe_name ((SimFp8Recipe) plan->fp8_recipe));
      return FALSE;
    }
    plan->fp8_params = 0;
    return TRUE;
  }
  if (g == NULL || g->peak_flop_per_s[SIM_DTYPE_FP8] <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp8: %s has no FP8 tensor cores (its cluster file gives no fp8 peak)",
                 g != NULL ? g->name : topo->name);
    return FALSE;
  }
  /* MXFP8 needs tensor cores that apply a scale per 32-element block
   * (Blackwell's, <peak dtype="fp8" block-scaled="true">); Transformer
   * Engine makes it the default there and delayed scaling on Hopper */
  if (plan->fp8_attention && !plan->flash_attention) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp8-attention: expected fused (flash) attention, whose FP8 kernels it uses; "
                 "drop --no-flash-attention");
    return FALSE;
  }
  if (plan->fp8_recipe == SIM_FP8_MXFP8 && !g->fp8_block_scaled) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp8-recipe mxfp8: %s has no block-scaled FP8 tensor cores (Blackwell's; its "
                 "cluster file's fp8 peak is not block-scaled): use delayed, current or blockwise",
                 g->name);
    return FALSE;
  }
  if (plan->fp8_recipe < 0) {
    plan->fp8_recipe = g->fp8_block_scaled ? SIM_FP8_MXFP8 : SIM_FP8_DELAYED;
    sim_plan_note_default (plan, "--fp8-recipe %s", sim_fp8_recipe_name ((SimFp8Recipe) plan->fp8_recipe));
  }
  if (plan->fp8_params < 0) {
    plan->fp8_params = plan->framework == SIM_FRAMEWORK_MEGATRON;
    sim_plan_note_default (plan, "--%sfp8-params%s", plan->fp8_params ? "" : "no-",
                  plan->fp8_params ? " (as NVIDIA's FP8 recipes)" : "");
  }
  return TRUE;
}

/* FP4: the GPU must have FP4 tensor cores; not with FP8 (Megatron-Core
 * asserts one of the two); the weights stay BF16 parameters, quantized
 * for the GEMMs, as Megatron-Bridge's bf16_with_nvfp4_mixed
 * (fp8_param_gather False; src/megatron/bridge/training/mixed_precision.py) */
static gboolean
resolve_fp4 (SimPlan *plan, const SimTopology *topo, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  if (plan->fp4 == SIM_FP4_OFF) {
    if (plan->fp4_recipe_given) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--fp4-recipe nvfp4: expected --fp4 e2m1 with it (the plan does not train in FP4)");
      return FALSE;
    }
    return TRUE;
  }
  if (plan->fp8 != SIM_FP8_OFF) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp4 e2m1: expected --fp8 off with it (the linear layers train in FP8 or in FP4, "
                 "as Megatron-Core allows one of the two)");
    return FALSE;
  }
  if (g == NULL || g->peak_flop_per_s[SIM_DTYPE_FP4] <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--fp4: %s has no FP4 tensor cores (its cluster file gives no fp4 peak)",
                 g != NULL ? g->name : topo->name);
    return FALSE;
  }
  if (!plan->fp4_recipe_given)
    sim_plan_note_default (plan, "--fp4-recipe nvfp4 (the one FP4 recipe)");
  return TRUE;
}

/* the model's multi-token-prediction layers where the plan gives none;
 * multi-token prediction is a pre-training objective: a LoRA fine-tune
 * trains adapters on the main model only */
static gboolean
resolve_mtp (SimPlan *plan, const SimModel *model, GError **error)
{
  if (plan->mtp_layers > 0 && plan->lora_rank > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--mtp-num-layers %d: expected 0 with --lora-rank (LoRA adapts the main model; "
                 "multi-token prediction is a pre-training objective)", plan->mtp_layers);
    return FALSE;
  }
  if (plan->mtp_layers < 0) {
    plan->mtp_layers = plan->lora_rank > 0 ? 0 : (int) model->mtp_layers;
    if (model->mtp_layers > 0 && plan->lora_rank > 0)
      sim_plan_note_default (plan, "--mtp-num-layers 0 (LoRA fine-tunes the main model only)");
    else if (model->mtp_layers > 0)
      sim_plan_note_default (plan, "--mtp-num-layers %d (the model's multi-token prediction, as it was "
                          "trained)", plan->mtp_layers);
  }
  return TRUE;
}

/* LoRA adapters, and the memory the context and the allocator take */
static gboolean
resolve_adapters_and_reserves (SimPlan *plan, const SimModel *model, GError **error)
{
  if (plan->qlora && plan->lora_rank == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--qlora needs --lora-rank R (for example 16)");
    return FALSE;
  }
  if (plan->lora_rank > model->hidden) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                 "--lora-rank %" G_GUINT64_FORMAT " exceeds the hidden size %" G_GUINT64_FORMAT
                 " of %s", plan->lora_rank, model->hidden, model->name);
    return FALSE;
  }
  if (!resolve_mtp (plan, model, error))
    return FALSE;
  if (plan->context_reserve_bytes < 0) {
    plan->context_reserve_bytes = SIM_CONTEXT_RESERVE_BYTES;
    sim_plan_note_default (plan, "--context-reserve 1.5GB (CUDA context and library workspaces)");
  }
  if (plan->fragmentation < 0) {
    plan->fragmentation = SIM_FRAGMENTATION_FRACTION;
    sim_plan_note_default (plan, "--fragmentation 10%% (allocator fragmentation allowance)");
  }
  return TRUE;
}

/* the slowest GPUs: the spread's default, and each slow GPU or node
 * inside the job */
static gboolean
resolve_variability (SimPlan *plan, const SimTopology *topo, GError **error)
{
  int world = sim_plan_world_size (plan), g = MAX (topo->gpus_per_node, 1);
  if (plan->gpu_variation < 0) {
    plan->gpu_variation = SIM_GPU_VARIATION_DEFAULT;
    sim_plan_note_default (plan, "--gpu-variation 1.5%% (each step waits for the slowest GPU)");
  }
  for (int i = 0; i < plan->n_slow; i++) {
    const SimSlow *x = &plan->slow[i];
    int n = x->node ? (world + g - 1) / g : world;
    if (x->node && topo->gpus_per_node <= 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--slow-node %d:%g: expected a cluster whose nodes hold the same number of "
                   "GPUs (name the GPUs with --slow-gpu instead)", x->index, x->factor);
      return FALSE;
    }
    if (x->index >= n) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--%s %d:%g: expected a %s below %d (the job's %s are 0 to %d)",
                   x->node ? "slow-node" : "slow-gpu", x->index, x->factor,
                   x->node ? "node" : "rank", n, x->node ? "nodes" : "ranks", n - 1);
      return FALSE;
    }
  }
  for (int i = 0; i < plan->n_slow_links; i++) {
    const SimSlowLink *x = &plan->slow_links[i];
    const char *kind = x->kind == SIM_SLOW_NIC ? "nic" : "nvlink";
    g_autoptr (GArray) links = NULL;
    if (x->rank >= world) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--slow-link %s:%d:%g: expected a rank below %d (the job's ranks are 0 to %d)",
                   kind, x->rank, x->factor, world, world - 1);
      return FALSE;
    }
    /* the GPU must have links of that kind (a NIC to the fabric, NVLinks) */
    links = sim_topology_gpu_links (topo, x->rank, x->kind == SIM_SLOW_NIC);
    if (links->len == 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN,
                   "--slow-link %s:%d:%g: expected a GPU with %s; GPU %d of %s has none", kind,
                   x->rank, x->factor,
                   x->kind == SIM_SLOW_NIC ? "a NIC to a fabric switch" : "NVLinks", x->rank,
                   topo->name);
      return FALSE;
    }
  }
  return TRUE;
}

/* --cpu-offloading-num-layers: Megatron-Core's TransformerConfig refuses
 * it at num_layers or more, with pipeline parallelism and with
 * recomputation (megatron/core/transformer/transformer_config.py,
 * __post_init__: "CPU offloading can be done only for layers less than",
 * "Currently there is no support for Pipeline parallelism with CPU
 * offloading", "CPU offloading does not work when activation recomputation
 * is enabled"); sim needs the GPU's host link to time the copies.  Runs
 * after the framework is resolved (it is Megatron-Core's). */
static gboolean
resolve_cpu_offload (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  const SimGpuType *g = sim_topology_gpu_type (topo, 0);
  const char *why = NULL;
  int n = plan->cpu_offload_layers;
  if (n == 0)
    return TRUE;
  if ((guint64) n >= model->layers)
    why = "expected fewer than the model's layers (Megatron-Core keeps at least one on the GPU)";
  else if (plan->pp > 1)
    why = "expected --pp 1 (Megatron-Core offloads only without pipeline parallelism)";
  else if (plan->recompute != SIM_RECOMPUTE_NONE)
    why = "expected --recompute none (Megatron-Core offloads only without recomputation)";
  else if (plan->framework != SIM_FRAMEWORK_MEGATRON)
    why = "expected --framework megatron (it is Megatron-Core's offloading)";
  else if (g == NULL || g->host_bw_bytes_per_s <= 0)
    why =
        "the cluster file gives no host link for its GPU (<host-link bandwidth=...> in <gpu-type>), "
        "so the copies cannot be timed";
  if (why != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_PLAN, "--cpu-offloading-num-layers %d: %s", n, why);
    return FALSE;
  }
  return TRUE;
}

gboolean
sim_plan_op_sac (const SimPlan *plan)
{
  return plan->framework == SIM_FRAMEWORK_TORCHTITAN && plan->recompute == SIM_RECOMPUTE_SELECTIVE;
}

gboolean
sim_plan_resolve_model (SimPlan *plan, const SimModel *model, GError **error)
{
  g_ptr_array_set_size (plan->defaults, 0);
  resolve_seq_len (plan, model);
  return resolve_expert_degrees (plan, model, error) && resolve_mtp (plan, model, error) &&
         sim_plan_check_model_split (plan, model, error);
}

gboolean
sim_plan_resolve (SimPlan *plan, const SimTopology *topo, const SimModel *model, GError **error)
{
  g_ptr_array_set_size (plan->defaults, 0);
  /* one GPU type: the cost model, the ledger and the MFU all read GPU 0's */
  if (!sim_topology_check_one_gpu_type (topo, error))
    return FALSE;
  if (!resolve_layout (plan, topo, model, error) || !resolve_batch (plan, model, error) ||
      !sim_plan_resolve_pipeline_layout (plan, model, error) || !sim_plan_resolve_schedule (plan, model, error) || !sim_plan_resolve_split (plan, model, error) ||
      !resolve_recompute_method (plan, error) || !resolve_memory_savers (plan, error) ||
      !resolve_recompute_modules (plan, model, error) ||
      !resolve_experts (plan, topo, model, error))
    return FALSE;
  resolve_framework (plan, topo);
  return sim_plan_resolve_torchtitan (plan, error) && resolve_cpu_offload (plan, topo, model, error) &&
         resolve_cuda_graphs (plan, model, error) && resolve_attention_kernel (plan, topo, error) &&
         resolve_fp8 (plan, topo, error) && resolve_fp4 (plan, topo, error) &&
         sim_plan_resolve_fused_grouped_mlp (plan, model, error) &&
         resolve_adapters_and_reserves (plan, model, error) &&
         resolve_variability (plan, topo, error);
}
