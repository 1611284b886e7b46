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
 *
 * Attention with a head size other than hidden/heads saves Q and the
 * projection input at heads*d, not h.  Latent attention (DeepSeek-V3,
 * <mla>, Megatron-Core's multi_latent_attention.py) saves per token the
 * norm output read by both down projections (h), the q_a and kv_a norms'
 * inputs and outputs (q_lora, kv_lora; outside the TP region, so /t with
 * SP), and in the core Q and K at H*(nope + rope) and V and the output at
 * H*v (split by TP); the decoupled rope key is part of K.
 *
 * A mixture-of-experts layer (sim_activations_moe_layer) keeps the same
 * attention, the MLP norm's input, and, with T the tokens a GPU holds
 * after the norm (s*b, /t under SP, which Megatron-Core requires with TP)
 * and k experts per token:
 *   router     its input (the norm output, T*h bf16, shared with the
 *              shared experts) and its fp32 probabilities, T*E*4
 *   dispatch   the routing indices, T*k int64
 *   experts    each GPU receives R = T*k*etp routed tokens on average
 *              (its etp group gathers the tokens of etp GPUs, every token
 *              goes to k experts, EP only exchanges them); per routed
 *              token the grouped MLP saves its input (h), the fc1 output
 *              (2*fe/etp for SwiGLU, fe/etp for GELU), the activation
 *              output (fe/etp) and the routing probability (fp32), as
 *              Megatron-Core's experts.py applies the probabilities in
 *              the activation (activation_func_with_probs);
 *              bytes = R*(2h + 6fe/etp + 4) for SwiGLU; with
 *              --fp8-expert-act the fc1 output in FP8 with a 4-byte
 *              scale per 128 values, as DeepSeek-V3 caches the SwiGLU
 *              input (arXiv:2412.19437 section 3.3.2, "Low-Precision
 *              Storage"; its output, FC2's input, recomputed: moe_act)
 *   shared     S always-on experts as one MLP of width S*fe, split by TP
 *              like a dense MLP, reading the router's input
 * Routing is assumed balanced (every expert gets the mean share); with a
 * capacity factor c the expert buffers are c times the mean (Megatron's
 * --moe-pad-expert-input-to-capacity pads them to it), dropless 1.
 *
 * Selective recomputation's modules (--recompute-modules, Megatron-Core's
 * recompute_modules, transformer_config.py @0014f137) each drop what the
 * module would have kept:
 *   core_attn       without flash attention the s*s score tensors;
 *   layernorm       the outputs of the norms that are modules of their own
 *                   (latent attention's input norm: the down projections'
 *                   input; an MoE layer's pre-MLP norm: the router's input
 *                   and, with FP8 or FP4, the shared experts' quantized
 *                   copy): output-discarding checkpoints, and under FP8
 *                   its readers save the original input
 *                   (set_save_original_input), which is discarded;
 *   mla_up_proj     latent attention's Q, K and V (the up projections'
 *                   and RoPE's outputs), recomputed from the saved latents;
 *   moe_act         the routed experts' activation output (FC2's input;
 *                   under FP8 FC2 saves the original, discarded);
 *   mlp             a dense layer's MLP but its input (the residual, which
 *                   the MLP norm keeps anyway);
 *   moe             the whole MoE layer but its input (the router's);
 *   shared_experts  the shared experts' tensors (their input is the
 *                   router's).
 * The layer whose backward runs holds what it dropped again, briefly: the
 * transient working set.
 *
 * Under CUDA graphs each graph a layer replays keeps a static input buffer
 * per micro-batch in flight: Transformer Engine copies the layer's input
 * (the s*b*h hidden states, split by sequence parallelism) into it, and
 * with Megatron-Core's buffer reuse there are as many as forwards wait for
 * their backward (make_graphed_callables' _reuse_graph_input_output_buffers;
 * an account of it: "Static Input Buffers: PP x layer x input_size",
 * magic3007/blog, 2025-12-30-training-cuda-graph.md).  The graphs' other
 * static outputs are the tensors the layer keeps anyway.
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
  gboolean fp4;         /* ... or in NVFP4 (4 bits and an E4M3 scale per 16 values) */
  gboolean fp8_attention; /* the fused attention saves Q, K, V and its output in FP8 */
  gboolean fp8_expert_act; /* the routed experts save FC1's output in FP8 (--fp8-expert-act) */
  /* token dropping (SimPlan.moe_capacity_factor, 0: the model's, else
   * dropless) and padding to capacity: padded, each expert keeps its
   * whole capacity of rows */
  double moe_capacity_factor;
  gboolean moe_pad;
  guint64 etp;          /* expert tensor parallel (MoE layers) */
  guint recompute_modules; /* SimRecomputeModules under selective (0: core_attn) */
  int graphs_dense, graphs_moe; /* CUDA graphs a dense (MoE) layer replays (sim_plan_layer_graphs) */
  gboolean op_sac;      /* torchtitan's op-level checkpointing (sim_plan_op_sac) */
  gboolean titan_loss;  /* torchtitan's eager cross-entropy (sim_activations_output) */
} SimActivationConfig;

/* fills cfg from a resolved plan; never fails; any thread */
void sim_activation_config_from_plan (SimActivationConfig *cfg, const SimPlan *plan);

/* Each returns a new SimActivations (free with sim_activations_free); never
 * fails; any thread (pure function of its const inputs). */

/* one transformer layer */
SimActivations *sim_activations_layer (const SimModel *m, const SimActivationConfig *cfg);
/* one mixture-of-experts layer (the header comment); for a dense model
 * the same as sim_activations_layer */
SimActivations *sim_activations_moe_layer (const SimModel *m, const SimActivationConfig *cfg);
/* what the first stage keeps for the embedding (dropout mask) */
SimActivations *sim_activations_embedding (const SimModel *m, const SimActivationConfig *cfg);
/* what the last stage keeps for the final norm, output layer and loss;
 * transient_bytes: what the loss's forward holds beside it for a moment */
SimActivations *sim_activations_output (const SimModel *m, const SimActivationConfig *cfg);
/* one multi-token-prediction module beyond its transformer layer
 * (Megatron-Core's MultiTokenPredictionLayer): the inputs of its two norms
 * (the next token's embedding and the hidden state, h each), eh_proj's
 * input (the two normed, concatenated: 2h; sequence-parallel like a
 * layer's), the embedding's dropout mask, and its own output layer and
 * loss (the tensors of sim_activations_output) */
SimActivations *sim_activations_mtp (const SimModel *m, const SimActivationConfig *cfg);

/* NULL is ignored */
void sim_activations_free (SimActivations *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimActivations, sim_activations_free)

G_END_DECLS
