/* sim-plan-request.c — the plan options, one table, and the request
 * they fill (sim-plan.h: SimPlanRequest): parsing each option's value,
 * the setters, the copies, what was given, the help text */
#include "sim-plan.h"
#include "sim-plan-private.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"
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
    "projections with adapters: q,k,v,o,gate,up,down,attention,mlp,all, or qkv: one adapter on the fused QKV projection (Megatron's linear_qkv; default all)" },
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
    "whose overlaps and kernels: Megatron-Core/NeMo, llm-foundry's PyTorch FSDP (with tp, pp or cp "
    "over 1 torchtitan's), or torchtitan (FSDP2, DTensor TP, SDPA; default megatron)" },
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


SimPlanRequest *
sim_plan_request_new (void)
{
  SimPlanRequest *r = g_new0 (SimPlanRequest, 1);
  SimPlan *p = &r->asked;
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
  return r;
}

void
sim_plan_record_copy (SimPlan *to, const SimPlan *from, gboolean with_defaults)
{
  *to = *from;
  to->defaults = with_defaults ? g_ptr_array_new_with_free_func (g_free) : NULL;
  to->request = with_defaults && from->request != NULL ? sim_plan_request_copy (from->request) : NULL;
  if (to->layout != NULL)
    g_rc_box_acquire (to->layout);
}

void
sim_plan_record_clear (SimPlan *p)
{
  g_clear_pointer (&p->defaults, g_ptr_array_unref);
  g_clear_pointer (&p->request, sim_plan_request_free);
  if (p->layout != NULL)
    g_rc_box_release_full (g_steal_pointer (&p->layout), plan_layout_free);
}

SimPlanRequest *
sim_plan_request_copy (const SimPlanRequest *req)
{
  SimPlanRequest *r = g_new0 (SimPlanRequest, 1);
  sim_plan_record_copy (&r->asked, &req->asked, FALSE);
  return r;
}

SimPlanRequest *
sim_plan_request_of (const SimPlan *plan)
{
  return sim_plan_request_copy (plan->request);
}

void
sim_plan_request_free (SimPlanRequest *req)
{
  if (req == NULL)
    return;
  sim_plan_record_clear (&req->asked);
  g_free (req);
}

SimPlan *
sim_plan_copy (const SimPlan *plan)
{
  SimPlan *p = g_new0 (SimPlan, 1);
  sim_plan_record_copy (p, plan, TRUE);
  for (guint i = 0; plan->defaults != NULL && i < plan->defaults->len; i++)
    g_ptr_array_add (p->defaults, g_strdup (g_ptr_array_index (plan->defaults, i)));
  return p;
}

void
sim_plan_free (SimPlan *plan)
{
  if (plan == NULL)
    return;
  sim_plan_record_clear (plan);
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
  case KEY_SCHEDULE: plan->schedule = (SimSchedule) u; break;
  case KEY_VIRTUAL_STAGES: plan->virtual_stages = (int) u; break;
  case KEY_RECOMPUTE: plan->recompute = (SimRecompute) u; break;
  case KEY_RECOMPUTE_METHOD: plan->recompute_method = (SimRecomputeMethod) u; break;
  case KEY_RECOMPUTE_NUM_LAYERS: plan->recompute_num_layers = (int) u; break;
  case KEY_SEQUENCE_PARALLEL: plan->sequence_parallel = b; break;
  case KEY_FLASH_ATTENTION: plan->flash_attention = b; break;
  case KEY_ZERO: plan->zero = (int) u; break;
  case KEY_RECIPE: plan->recipe = (SimRecipe) u; break;
  case KEY_ORDER: return parse_order (plan, value, error);
  case KEY_LORA_RANK: plan->lora_rank = u; break;
  case KEY_LORA_TARGETS: return sim_lora_targets_parse (value, &plan->lora_targets, error);
  case KEY_QLORA: plan->qlora = b; break;
  case KEY_OVERLAP: plan->overlap = b; break;
  case KEY_FRAMEWORK: plan->framework = (SimFramework) u; break;
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
  case KEY_FP4_RECIPE: break;
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
sim_plan_request_set (SimPlanRequest *req, const char *key, const char *value,
                      gboolean *is_plan_key, GError **error)
{
  SimPlan *plan = &req->asked;
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
sim_plan_request_set_number (SimPlanRequest *req, const char *key, guint64 value, GError **error)
{
  SimPlan *plan = &req->asked;
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
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--%s: expected its value as text", key);
    return FALSE;
  }
  if (!store_value (plan, o->key, u, b, NULL, error))
    return FALSE;
  plan->given |= G_GUINT64_CONSTANT (1) << o->key;
  return TRUE;
}

void
sim_plan_request_set_recompute (SimPlanRequest *req, SimRecompute r, guint modules,
                                SimRecomputeMethod method, int num_layers)
{
  SimPlan *p = &req->asked;
  guint64 bit_modules = G_GUINT64_CONSTANT (1) << KEY_RECOMPUTE_MODULES;
  guint64 bit_method = G_GUINT64_CONSTANT (1) << KEY_RECOMPUTE_METHOD;
  guint64 bit_layers = G_GUINT64_CONSTANT (1) << KEY_RECOMPUTE_NUM_LAYERS;
  p->recompute = r;
  p->given |= G_GUINT64_CONSTANT (1) << KEY_RECOMPUTE;
  p->recompute_modules = r == SIM_RECOMPUTE_SELECTIVE ? modules : 0;
  p->given = p->recompute_modules != 0 ? p->given | bit_modules : p->given & ~bit_modules;
  if (r == SIM_RECOMPUTE_FULL) {
    p->recompute_method = method;
    p->recompute_num_layers = num_layers;
    p->given |= bit_method | bit_layers;
  } else {
    p->recompute_method = SIM_RECOMPUTE_UNIFORM;
    p->recompute_num_layers = 1;
    p->given &= ~(bit_method | bit_layers);
  }
}

void
sim_plan_request_clear_slow (SimPlanRequest *req)
{
  req->asked.n_slow = 0;
  req->asked.n_slow_links = 0;
  req->asked.given &= ~((G_GUINT64_CONSTANT (1) << KEY_SLOW_GPU) | (G_GUINT64_CONSTANT (1) << KEY_SLOW_NODE) |
                        (G_GUINT64_CONSTANT (1) << KEY_SLOW_LINK));
}

double
sim_plan_request_value (const SimPlanRequest *req, const char *key)
{
  gboolean negated = FALSE;
  const Option *o = find_option (key, &negated);
  const SimPlan *p = &req->asked;
  if (o == NULL)
    return NAN;
  switch (o->key) {
  case KEY_TP: return p->tp;
  case KEY_CP: return p->cp;
  case KEY_PP: return p->pp;
  case KEY_DP: return p->dp;
  case KEY_EP: return p->ep;
  case KEY_ETP: return p->etp;
  case KEY_MICRO_BATCH: return p->micro_batch;
  case KEY_GLOBAL_BATCH: return (double) p->global_batch;
  case KEY_SEQ_LEN: return (double) p->seq_len;
  case KEY_SCHEDULE: return p->schedule;
  case KEY_VIRTUAL_STAGES: return p->virtual_stages;
  case KEY_LAYERS_PER_VIRTUAL_STAGE: return p->layers_per_virtual_stage;
  case KEY_RECOMPUTE: return p->recompute;
  case KEY_RECOMPUTE_METHOD: return p->recompute_method;
  case KEY_RECOMPUTE_NUM_LAYERS: return p->recompute_num_layers;
  case KEY_SEQUENCE_PARALLEL: return p->sequence_parallel;
  case KEY_FLASH_ATTENTION: return p->flash_attention;
  case KEY_ZERO: return p->zero;
  case KEY_RECIPE: return p->recipe;
  case KEY_LORA_RANK: return (double) p->lora_rank;
  case KEY_QLORA: return p->qlora;
  case KEY_OVERLAP: return p->overlap;
  case KEY_FRAMEWORK: return p->framework;
  case KEY_TP_COMM_OVERLAP: return p->tp_comm_overlap;
  case KEY_TORCH_COMPILE: return p->torch_compile;
  case KEY_OVERLAP_PARAM_GATHER: return p->overlap_param_gather;
  case KEY_ATTENTION_KERNEL: return p->attention_kernel;
  case KEY_FP8: return p->fp8;
  case KEY_FP8_PARAMS: return p->fp8_params;
  case KEY_FP8_RECIPE: return p->fp8_recipe;
  case KEY_FP8_ATTENTION: return p->fp8_attention;
  case KEY_FP8_EXPERT_ACT: return p->fp8_expert_act;
  case KEY_TP_ONLY_AMAX_RED: return p->tp_only_amax_red;
  case KEY_GRAD_REDUCE_FP32: return p->grad_reduce_fp32;
  case KEY_FP4: return p->fp4;
  case KEY_CONTEXT_RESERVE: return p->context_reserve_bytes;
  case KEY_FRAGMENTATION: return p->fragmentation;
  case KEY_GPU_VARIATION: return p->gpu_variation;
  case KEY_MOE_IMBALANCE: return p->moe_imbalance;
  case KEY_MOE_CAPACITY: return p->moe_capacity_factor;
  case KEY_MOE_PAD: return p->moe_pad_to_capacity;
  case KEY_MOE_A2A_OVERLAP: return p->moe_a2a_overlap;
  case KEY_MOE_DISPATCHER: return p->moe_dispatcher;
  case KEY_MOE_FUSED_GROUPED_MLP: return p->moe_fused_grouped_mlp;
  case KEY_MTP_LAYERS: return p->mtp_layers;
  case KEY_CPU_OFFLOAD_LAYERS: return p->cpu_offload_layers;
  case KEY_CUDA_GRAPH_IMPL: return p->cuda_graph_impl;
  case KEY_FIRST_STAGE_LAYERS: return p->first_stage_layers;
  case KEY_LAST_STAGE_LAYERS: return p->last_stage_layers;
  case KEY_EMBEDDING_IN_SPLIT: return p->embedding_in_split;
  case KEY_LOSS_IN_SPLIT: return p->loss_in_split;
  default: return NAN;
  }
}

static gboolean
plan_item (const char *key, const char *value, gpointer req, GError **error)
{
  return sim_plan_request_set (req, key, value, NULL, error);
}

gboolean
sim_plan_request_parse_string (SimPlanRequest *req, const char *text, GError **error)
{
  return sim_units_foreach_key_value (text, plan_item, req, error);
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
sim_plan_request_given (const SimPlanRequest *req, const char *key)
{
  return sim_plan_given (&req->asked, key);
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
