/* sim-activation.h — activation memory from a per-op list of saved tensors.
 *
 * Each forward op of a transformer layer keeps some tensors alive until its
 * backward op has used them.  This module lists them, op by op, for one layer
 * and one micro-batch on one GPU; the sum is the layer's activation memory.
 * Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
 * Transformer Models", arXiv:2205.05198, section 4) derive the GPT layer
 * (bf16 activations, 1-byte dropout masks, s = sequence, b = micro-batch,
 * h = hidden, a = heads, t = TP degree):
 *
 *   no parallelism          s*b*h*(34 + 5*a*s/h)
 *   tensor parallel         s*b*h*(10 + 24/t + 5*a*s/(h*t))
 *   TP + sequence parallel  s*b*h*(34/t + 5*a*s/(h*t))
 *
 * and the per-op list below sums to exactly those (tests/test-activation.c).
 * The same list gives SwiGLU (gate and up outputs saved), GQA (K and V are
 * s*b*kv_heads*d), RMSNorm and no-dropout layers.  Conventions:
 *   - the s*s score tensors (softmax output, its dropout mask and dropout
 *     output) are only stored without a fused (flash) attention kernel and
 *     without selective recomputation; flash attention keeps Q, K, V and its
 *     output, as selective recomputation does;
 *   - per-row fp32 statistics (LayerNorm/RMSNorm mean and rstd, the flash
 *     log-sum-exp) are O(s*b*a) and omitted, as in Korthikanti et al.;
 *   - context parallelism splits the sequence: every s is the local s/c, the
 *     score tensors are (s/c) x s;
 *   - full recomputation keeps only the layer input (2*s*b*h, /t with SP);
 *     the layer being recomputed briefly holds its whole activation set
 *     again: that is reported as the transient working set.
 */
#pragma once

#include <glib.h>

#include "sim-model.h"
#include "sim-plan.h"

G_BEGIN_DECLS

typedef struct {
  const char *op;      /* e.g. "attention.qkv" (static string) */
  const char *tensor;  /* e.g. "input (norm output)" (static string) */
  guint64 bytes;       /* on one GPU, one micro-batch */
} SimSavedTensor;

typedef struct {
  GArray *tensors;            /* SimSavedTensor, in forward order */
  guint64 saved_bytes;        /* sum of tensors */
  guint64 transient_bytes;    /* extra held while one layer's backward recomputes */
} SimActivations;

typedef struct {
  guint64 seq;          /* full sequence length s */
  guint64 micro_batch;  /* b */
  guint64 tp;           /* t */
  guint64 cp;           /* c */
  gboolean sequence_parallel;
  gboolean flash;
  SimRecompute recompute;
  gboolean fp8;         /* the linear layers save their inputs in FP8 */
} SimActivationConfig;

/* fills cfg from a resolved plan; never fails; any thread */
void sim_activation_config_from_plan (SimActivationConfig *cfg, const SimPlan *plan);

/* Each returns a new SimActivations (free with sim_activations_free); never
 * fails; any thread (pure function of its const inputs). */

/* one transformer layer */
SimActivations *sim_activations_layer (const SimModel *m, const SimActivationConfig *cfg);
/* what the first stage keeps for the embedding (dropout mask) */
SimActivations *sim_activations_embedding (const SimModel *m, const SimActivationConfig *cfg);
/* what the last stage keeps for the final norm, output layer and loss */
SimActivations *sim_activations_output (const SimModel *m, const SimActivationConfig *cfg);

/* NULL is ignored */
void sim_activations_free (SimActivations *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimActivations, sim_activations_free)

G_END_DECLS
