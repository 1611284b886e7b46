/* sim-activation.c — see sim-activation.h for the derivation */
#include "sim-activation.h"

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
  cfg->fp8 = plan->fp8 != SIM_FP8_OFF;
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

/* the layer as if nothing were recomputed (scores only without flash) */
static void
layer_tensors (SimActivations *a, const SimModel *m, const SimActivationConfig *c,
               gboolean keep_scores)
{
  guint64 s = c->seq / c->cp, b = c->micro_batch, h = m->hidden;
  guint64 kvd = sim_model_kv_dim (m), f = m->ffn_hidden, heads = m->heads;
  guint64 sbh = s * b * h;
  guint64 scores = heads * s * c->seq * b; /* local queries x all keys */
  /* FP8 (Transformer Engine): a linear saves its input as the FP8 copy
   * its weight-gradient GEMM reads, one byte per element
   * (transformer_engine/pytorch/module/linear.py, layernorm_linear.py,
   * layernorm_mlp.py save the cast input, not the bf16 one) */
  guint64 lin = c->fp8 ? 1 : ACT;

  save (a, "attention.norm", "input", rep (c, ACT * sbh));
  save (a, "attention.qkv", "input (norm output)", rep (c, lin * sbh));
  save (a, "attention.core", "Q", shard (c, ACT * sbh));
  save (a, "attention.core", "K", shard (c, ACT * s * b * kvd));
  save (a, "attention.core", "V", shard (c, ACT * s * b * kvd));
  if (keep_scores) {
    save (a, "attention.core", "softmax output", shard (c, ACT * scores));
    if (m->dropout) {
      save (a, "attention.core", "softmax dropout mask", shard (c, MASK * scores));
      save (a, "attention.core", "dropout output (input of scores x V)", shard (c, ACT * scores));
    }
  }
  save (a, "attention.proj", "input (attention output)",
        shard (c, (c->fp8 && !c->flash ? 1 : ACT) * sbh));
  /* with FP8 the projection keeps its own FP8 copy beside the bf16 output
   * that the fused attention's backward reads; without flash attention
   * nothing else reads it, and the FP8 copy replaces it */
  if (c->fp8 && c->flash)
    save (a, "attention.proj", "FP8 input", shard (c, 1 * sbh));
  if (m->dropout)
    save (a, "attention.dropout", "mask", rep (c, MASK * sbh));

  save (a, "mlp.norm", "input", rep (c, ACT * sbh));
  if (m->mlp == SIM_MLP_GELU) {
    save (a, "mlp.fc1", "input (norm output)", rep (c, lin * sbh));
    save (a, "mlp.gelu", "input (fc1 output)", shard (c, ACT * s * b * f));
    save (a, "mlp.fc2", "input (gelu output)", shard (c, lin * s * b * f));
  } else {
    save (a, "mlp.gate_up", "input (norm output)", rep (c, lin * sbh));
    save (a, "mlp.swiglu", "gate and up outputs", shard (c, 2 * ACT * s * b * f));
    save (a, "mlp.down", "input (swiglu output)", shard (c, lin * s * b * f));
  }
  if (m->dropout)
    save (a, "mlp.dropout", "mask", rep (c, MASK * sbh));
}

SimActivations *
sim_activations_layer (const SimModel *m, const SimActivationConfig *c)
{
  SimActivations *a = activations_new ();
  gboolean scores = !c->flash && c->recompute == SIM_RECOMPUTE_NONE;

  if (c->recompute == SIM_RECOMPUTE_FULL) {
    g_autoptr (SimActivations) whole = activations_new ();
    guint64 s = c->seq / c->cp;
    save (a, "layer (checkpoint)", "input", rep (c, ACT * s * c->micro_batch * m->hidden));
    /* the recomputed forward keeps everything again, briefly, one layer at a time */
    layer_tensors (whole, m, c, !c->flash);
    a->transient_bytes = whole->saved_bytes;
    return a;
  }
  layer_tensors (a, m, c, scores);
  if (c->recompute == SIM_RECOMPUTE_SELECTIVE && !c->flash) {
    /* the recomputed attention core of one layer lives through its backward */
    g_autoptr (SimActivations) with = activations_new ();
    layer_tensors (with, m, c, TRUE);
    a->transient_bytes = with->saved_bytes - a->saved_bytes;
  }
  return a;
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
sim_activations_output (const SimModel *m, const SimActivationConfig *c)
{
  SimActivations *a = activations_new ();
  guint64 sb = (c->seq / c->cp) * c->micro_batch;
  save (a, "final.norm", "input", rep (c, ACT * sb * m->hidden));
  save (a, "output.gemm", "input (norm output)", rep (c, ACT * sb * m->hidden));
  /* vocabulary-parallel cross-entropy keeps the fp32 logits of its shard */
  save (a, "loss", "logits (fp32)", shard (c, FP32 * sb * m->vocab));
  return a;
}
