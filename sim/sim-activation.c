/* sim-activation.c — see sim-activation.h for the derivation */
#include "sim-activation.h"

#include <math.h>

/* bf16 activations: 2 bytes per element; dropout masks: 1 byte; the
 * cross-entropy logits are upcast to fp32 (4 bytes), as Megatron does */
#define ACT 2
#define MASK 1
#define FP32 4

void
sim_activation_config_from_plan (SimActivationConfig *cfg, const SimPlan *plan)
{
  cfg->seq = plan->seq_len;
  cfg->micro_batch = (guint64) plan->micro_batch;
  cfg->tp = (guint64) plan->tp;
  cfg->cp = (guint64) plan->cp;
  cfg->sequence_parallel = plan->sequence_parallel > 0;
  cfg->flash = plan->flash_attention > 0;
  cfg->recompute = plan->recompute;
  cfg->recompute_modules = plan->recompute == SIM_RECOMPUTE_SELECTIVE ? plan->recompute_modules : 0;
  cfg->fp8 = plan->fp8 != SIM_FP8_OFF;
  cfg->fp4 = plan->fp4 != SIM_FP4_OFF;
  cfg->fp8_attention = cfg->fp8 && plan->fp8_attention;
  cfg->fp8_expert_act = cfg->fp8 && plan->fp8_expert_act;
  cfg->moe_capacity_factor = plan->moe_capacity_factor;
  cfg->moe_pad = plan->moe_pad_to_capacity;
  cfg->etp = (guint64) MAX (plan->etp, 1);
  cfg->graphs_dense = sim_plan_layer_graphs (plan, FALSE);
  cfg->graphs_moe = sim_plan_layer_graphs (plan, TRUE);
  cfg->op_sac = sim_plan_op_sac (plan);
  cfg->titan_loss = plan->framework == SIM_FRAMEWORK_TORCHTITAN;
}

/* the bytes of `elements` of a linear layer's input as the layer saves it
 * for its weight gradient: bf16; with FP8 the FP8 copy (1 byte); with
 * NVFP4 the copy the weight-gradient GEMM reads, 4 bits and an E4M3 scale
 * per 16 values, 9/16 byte (Transformer Engine's linear.py keeps the
 * column-wise quantized input only) */
static guint64
lin_bytes (const SimActivationConfig *c, guint64 elements)
{
  if (c->fp4)
    return elements / 16 * 9 + (elements % 16 * 9 + 15) / 16;
  return c->fp8 ? elements : ACT * elements;
}

/* the same per element, for the routed tokens' fractional counts */
static double
lin_per_element (const SimActivationConfig *c)
{
  return c->fp4 ? 9.0 / 16 : c->fp8 ? 1.0 : ACT;
}

/* whether selective recomputation recomputes module m */
static gboolean
drops (const SimActivationConfig *c, guint m)
{
  return (c->recompute_modules & m) != 0;
}

static SimActivations *
activations_new (void)
{
  SimActivations *a = g_new0 (SimActivations, 1);
  a->tensors = g_array_new (FALSE, FALSE, sizeof (SimSavedTensor));
  return a;
}

void
sim_activations_free (SimActivations *a)
{
  if (a == NULL)
    return;
  g_array_unref (a->tensors);
  g_free (a);
}

static void
save (SimActivations *a, const char *op, const char *tensor, guint64 bytes)
{
  SimSavedTensor t = { op, tensor, bytes };
  if (bytes == 0)
    return;
  g_array_append_val (a->tensors, t);
  a->saved_bytes += bytes;
}

/* tensors outside the TP regions (norms, dropout, the inputs of the
 * column-parallel GEMMs) are whole on every TP rank unless sequence
 * parallelism splits them along the sequence */
static guint64
rep (const SimActivationConfig *c, guint64 bytes)
{
  return c->sequence_parallel ? bytes / c->tp : bytes;
}

static guint64
shard (const SimActivationConfig *c, guint64 bytes)
{
  return bytes / c->tp;
}

/* the attention half of a layer (scores only when keep_scores) */
static void
attention_tensors (SimActivations *a, const SimModel *m, const SimActivationConfig *c,
                   gboolean keep_scores)
{
  guint64 s = c->seq / c->cp, b = c->micro_batch, h = m->hidden, heads = m->heads;
  guint64 sbh = s * b * h;
  guint64 scores = heads * s * c->seq * b; /* local queries x all keys */
  /* FP8 (Transformer Engine): a linear saves its input as the FP8 copy
   * its weight-gradient GEMM reads, one byte per element
   * (transformer_engine/pytorch/module/linear.py, layernorm_linear.py,
   * layernorm_mlp.py save the cast input, not the bf16 one): lin_bytes */
  /* the widths of Q and K (per token, all heads), V and the output */
  guint64 qw, kw, vw, qkv;

  save (a, "attention.norm", "input", rep (c, ACT * sbh));
  if (m->mla.kv_lora_rank > 0) {
    const SimMla *l = &m->mla;
    qw = kw = heads * (l->qk_nope_head_dim + l->qk_rope_head_dim);
    vw = heads * l->v_head_dim;
    if (!drops (c, SIM_RECOMPUTE_LAYERNORM))
      save (a, "attention.down", "input (norm output)", rep (c, lin_bytes (c, sbh)));
    if (l->q_lora_rank > 0) {
      save (a, "attention.q_norm", "input", rep (c, ACT * s * b * l->q_lora_rank));
      save (a, "attention.q_up", "input (q_norm output)", rep (c, lin_bytes (c, s * b * l->q_lora_rank)));
    }
    save (a, "attention.kv_norm", "input", rep (c, ACT * s * b * l->kv_lora_rank));
    save (a, "attention.kv_up", "input (kv_norm output)", rep (c, lin_bytes (c, s * b * l->kv_lora_rank)));
  } else {
    qw = heads * sim_model_head_dim (m);
    kw = vw = sim_model_kv_dim (m);
    save (a, "attention.qkv", "input (norm output)", rep (c, lin_bytes (c, sbh)));
  }
  /* FP8 attention (Transformer Engine's FP8 fused attention) takes Q, K
   * and V in FP8 and keeps those copies, and its FP8 output, for the
   * backward; the output projection reads that same FP8 output */
  qkv = c->fp8_attention ? 1 : ACT;
  if (!(m->mla.kv_lora_rank > 0 && drops (c, SIM_RECOMPUTE_MLA_UP_PROJ))) {
    save (a, "attention.core", "Q", shard (c, qkv * s * b * qw));
    save (a, "attention.core", "K", shard (c, qkv * s * b * kw));
    save (a, "attention.core", "V", shard (c, qkv * s * b * vw));
  }
  if (keep_scores) {
    save (a, "attention.core", "softmax output", shard (c, ACT * scores));
    if (m->dropout) {
      save (a, "attention.core", "softmax dropout mask", shard (c, MASK * scores));
      save (a, "attention.core", "dropout output (input of scores x V)", shard (c, ACT * scores));
    }
  }
  /* V and the output have the same width in standard attention (q = h) */
  if (m->mla.kv_lora_rank == 0)
    vw = heads * sim_model_head_dim (m);
  save (a, "attention.proj", "input (attention output)",
        shard (c, (c->fp8 || c->fp4) && !c->flash ? lin_bytes (c, s * b * vw)
                  : (c->fp8_attention ? 1 : ACT) * s * b * vw));
  /* with FP8 (NVFP4) the projection keeps its own FP8 (NVFP4) copy beside
   * the bf16 output that the fused attention's backward reads; without
   * flash attention nothing else reads it, and the copy replaces it */
  if (c->fp8 && c->flash && !c->fp8_attention)
    save (a, "attention.proj", "FP8 input", shard (c, 1 * s * b * vw));
  if (c->fp4 && c->flash)
    save (a, "attention.proj", "NVFP4 input", shard (c, lin_bytes (c, s * b * vw)));
  if (m->dropout)
    save (a, "attention.dropout", "mask", rep (c, MASK * sbh));
}

/* a dense MLP of width f after its norm; norm_output: whether it saves
 * the norm output (a MoE layer's router already holds it) */
static void
mlp_tensors (SimActivations *a, const SimModel *m, const SimActivationConfig *c, guint64 f,
             gboolean norm_output)
{
  guint64 s = c->seq / c->cp, b = c->micro_batch, sbh = s * b * m->hidden;

  if (m->mlp == SIM_MLP_GELU) {
    if (norm_output)
      save (a, "mlp.fc1", "input (norm output)", rep (c, lin_bytes (c, sbh)));
    save (a, "mlp.gelu", "input (fc1 output)", shard (c, ACT * s * b * f));
    save (a, "mlp.fc2", "input (gelu output)", shard (c, lin_bytes (c, s * b * f)));
  } else {
    if (norm_output)
      save (a, "mlp.gate_up", "input (norm output)", rep (c, lin_bytes (c, sbh)));
    save (a, "mlp.swiglu", "gate and up outputs", shard (c, 2 * ACT * s * b * f));
    save (a, "mlp.down", "input (swiglu output)", shard (c, lin_bytes (c, s * b * f)));
  }
}

/* the router, dispatch, routed and shared experts of a MoE layer (header) */
static void
moe_tensors (SimActivations *a, const SimModel *m, const SimActivationConfig *c)
{
  const SimMoe *e = &m->moe;
  guint64 s = c->seq / c->cp, b = c->micro_batch, h = m->hidden, sbh = s * b * h;
  guint64 tokens = rep (c, s * b), etp = MAX (c->etp, 1), fe = e->ffn_hidden / etp;
  double lin = lin_per_element (c);
  /* per routed token: input, fc1 output, activation output, probability */
  guint64 fc1 = (m->mlp == SIM_MLP_GELU ? 1 : 2) * fe;
  /* the routed rows an expert keeps on average (balanced): every token's
   * k, or, padded to capacity, the capacity; a capacity below the even
   * share drops the rest */
  double cf = c->moe_capacity_factor > 0 ? c->moe_capacity_factor : e->capacity_factor;
  double routed = (double) (tokens * e->top_k * etp) * (cf <= 0 ? 1.0 : c->moe_pad ? cf : MIN (cf, 1.0));

  /* the router's input is also the whole layer's checkpoint input */
  if (!drops (c, SIM_RECOMPUTE_LAYERNORM) || drops (c, SIM_RECOMPUTE_MOE))
    save (a, "moe.router", "input (norm output)", rep (c, ACT * sbh));
  if (drops (c, SIM_RECOMPUTE_MOE))
    return;
  save (a, "moe.router", "probabilities (fp32)", FP32 * tokens * e->experts);
  save (a, "moe.dispatch", "routing indices (int64)", 8 * tokens * e->top_k);
  save (a, "moe.experts", "fc1 input (routed tokens)", (guint64) ceil (routed * (double) (lin * h)));
  save (a, "moe.experts", c->fp8_expert_act ? "fc1 output (FP8)" : "fc1 output",
        (guint64) ceil (routed * (double) fc1 * (c->fp8_expert_act ? 1 + 4.0 / 128 : ACT)));
  if (!drops (c, SIM_RECOMPUTE_MOE_ACT))
    save (a, "moe.experts", "fc2 input (activation output)", (guint64) ceil (routed * (double) (lin * fe)));
  save (a, "moe.experts", "routing probabilities (fp32)", (guint64) ceil (routed * FP32));
  if (e->shared_experts > 0 && !drops (c, SIM_RECOMPUTE_SHARED_EXPERTS)) {
    /* with FP8 the shared experts' fc1 keeps its own FP8 copy of the input
     * (the original, discarded, when the norm is recomputed) */
    if (c->fp8 && !drops (c, SIM_RECOMPUTE_LAYERNORM))
      save (a, "moe.shared", "FP8 input", rep (c, 1 * sbh));
    if (c->fp4 && !drops (c, SIM_RECOMPUTE_LAYERNORM))
      save (a, "moe.shared", "NVFP4 input", rep (c, lin_bytes (c, sbh)));
    mlp_tensors (a, m, c, e->shared_experts * e->ffn_hidden, FALSE);
  }
}

/* the layer as if nothing were recomputed (scores only without flash) */
static void
layer_tensors (SimActivations *a, const SimModel *m, const SimActivationConfig *c,
               gboolean keep_scores, gboolean moe)
{
  guint64 sbh = (c->seq / c->cp) * c->micro_batch * m->hidden;

  attention_tensors (a, m, c, keep_scores);
  save (a, "mlp.norm", "input", rep (c, ACT * sbh));
  if (moe)
    moe_tensors (a, m, c);
  else if (!drops (c, SIM_RECOMPUTE_MLP))
    mlp_tensors (a, m, c, m->ffn_hidden, TRUE);
  if (m->dropout)
    save (a, "mlp.dropout", "mask", rep (c, MASK * sbh));
  for (int i = 0; i < (moe ? c->graphs_moe : c->graphs_dense); i++)
    save (a, "cuda graph", "static input", rep (c, ACT * sbh));
}

/* What torchtitan's op-level checkpointing (sim_plan_op_sac) keeps of a
 * dense block of standard attention: the block's input (the checkpoint's),
 * the outputs of the odd matmuls in program order (wq, wv, w1, w2; BF16,
 * under torchao's float8 too), SDPA's output and its
 * log-sum-exp (fp32, one per query and head), and with tensor parallelism
 * the two reduce-scatters' outputs.  w2's output under TP is the partial
 * sum each rank reduce-scatters, the whole s x b x h. */
static void
op_sac_tensors (SimActivations *a, const SimModel *m, const SimActivationConfig *c)
{
  guint64 s = c->seq / c->cp, b = c->micro_batch, h = m->hidden, sbh = s * b * h;
  guint64 qw = m->heads * sim_model_head_dim (m), kw = sim_model_kv_dim (m);
  save (a, "layer (checkpoint)", "input", rep (c, ACT * sbh));
  save (a, "attention.wq", "output", shard (c, ACT * s * b * qw));
  save (a, "attention.wv", "output", shard (c, ACT * s * b * kw));
  save (a, "attention.core", "output", shard (c, ACT * s * b * qw));
  save (a, "attention.core", "log-sum-exp (fp32)", shard (c, FP32 * s * b * m->heads));
  if (c->tp > 1)
    save (a, "attention.wo", "reduce-scatter output", rep (c, ACT * sbh));
  save (a, "mlp.w1", "output", shard (c, ACT * s * b * m->ffn_hidden));
  save (a, "mlp.w2", "output", ACT * sbh);
  if (c->tp > 1)
    save (a, "mlp.w2", "reduce-scatter output", rep (c, ACT * sbh));
}

static SimActivations *
activations_layer (const SimModel *m, const SimActivationConfig *c, gboolean moe)
{
  SimActivations *a = activations_new ();
  /* selective recomputation drops the scores with core_attn (its default,
   * also when no module is named) */
  gboolean scores = !c->flash &&
                    (c->recompute == SIM_RECOMPUTE_NONE ||
                     (c->recompute == SIM_RECOMPUTE_SELECTIVE && c->recompute_modules != 0 &&
                      !drops (c, SIM_RECOMPUTE_CORE_ATTN)));

  if (c->recompute == SIM_RECOMPUTE_FULL) {
    g_autoptr (SimActivations) whole = activations_new ();
    guint64 s = c->seq / c->cp;
    save (a, "layer (checkpoint)", "input", rep (c, ACT * s * c->micro_batch * m->hidden));
    /* the recomputed forward keeps everything again, briefly, one layer at a time */
    layer_tensors (whole, m, c, !c->flash, moe);
    a->transient_bytes = whole->saved_bytes;
    return a;
  }
  if (c->op_sac && !moe) {
    /* the recomputed block holds the rest again, one block at a time */
    g_autoptr (SimActivations) whole = activations_new ();
    op_sac_tensors (a, m, c);
    layer_tensors (whole, m, c, FALSE, moe);
    a->transient_bytes = whole->saved_bytes > a->saved_bytes ? whole->saved_bytes - a->saved_bytes : 0;
    return a;
  }
  layer_tensors (a, m, c, scores, moe);
  if (c->recompute == SIM_RECOMPUTE_SELECTIVE) {
    /* what one layer recomputes lives through its backward: the layer as
     * if nothing were recomputed, less what it keeps */
    SimActivationConfig all = *c;
    g_autoptr (SimActivations) with = activations_new ();
    all.recompute_modules = 0;
    layer_tensors (with, m, &all, !c->flash, moe);
    a->transient_bytes = with->saved_bytes - a->saved_bytes;
  }
  return a;
}

SimActivations *
sim_activations_layer (const SimModel *m, const SimActivationConfig *c)
{
  return activations_layer (m, c, FALSE);
}

SimActivations *
sim_activations_moe_layer (const SimModel *m, const SimActivationConfig *c)
{
  return activations_layer (m, c, sim_model_is_moe (m));
}

SimActivations *
sim_activations_embedding (const SimModel *m, const SimActivationConfig *c)
{
  SimActivations *a = activations_new ();
  guint64 sbh = (c->seq / c->cp) * c->micro_batch * m->hidden;
  if (m->dropout)
    save (a, "embedding.dropout", "mask", rep (c, MASK * sbh));
  return a;
}

SimActivations *
sim_activations_mtp (const SimModel *m, const SimActivationConfig *c)
{
  SimActivations *a = activations_new ();
  guint64 sb = (c->seq / c->cp) * c->micro_batch;
  if (m->dropout)
    save (a, "mtp.embedding.dropout", "mask", rep (c, MASK * sb * m->hidden));
  save (a, "mtp.enorm", "input (the next token's embedding)", rep (c, ACT * sb * m->hidden));
  save (a, "mtp.hnorm", "input (the hidden state)", rep (c, ACT * sb * m->hidden));
  save (a, "mtp.eh_proj", "input (both normed, concatenated)", rep (c, ACT * sb * 2 * m->hidden));
  save (a, "mtp.final.norm", "input", rep (c, ACT * sb * m->hidden));
  save (a, "mtp.output.gemm", "input (norm output)", rep (c, ACT * sb * m->hidden));
  save (a, "mtp.loss", "logits (fp32)", shard (c, FP32 * sb * m->vocab));
  return a;
}

SimActivations *
sim_activations_output (const SimModel *m, const SimActivationConfig *c)
{
  SimActivations *a = activations_new ();
  guint64 sb = (c->seq / c->cp) * c->micro_batch;
  save (a, "final.norm", "input", rep (c, ACT * sb * m->hidden));
  save (a, "output.gemm", "input (norm output)", rep (c, ACT * sb * m->hidden));
  /* vocabulary-parallel cross-entropy keeps the fp32 logits of its shard */
  save (a, "loss", "logits (fp32)", shard (c, FP32 * sb * m->vocab));
  /* torchtitan's loss, cross_entropy (pred.flatten (0, 1).float (), ...)
   * (train.py @9dec370, loss_fn, left uncompiled there), runs eagerly: while its
   * log_softmax runs, the BF16 logits (pred, deleted after the loss) and
   * their fp32 copy are live beside the fp32 output the backward keeps (the
   * saved logits above); vocabulary-sharded under TP (loss_parallel) */
  if (c->titan_loss)
    a->transient_bytes = shard (c, (ACT + FP32) * sb * m->vocab);
  return a;
}
