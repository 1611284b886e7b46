/* sim-model.h — a decoder-only transformer, read from models/NAME.xml: dense,
 * or with mixture-of-experts layers and multi-head latent attention.
 *
 * Parameter count (exact, see models/README.md), with d = head_dim
 * (hidden/heads unless the file gives head-dim), qd = heads*d and
 * kvd = kv_heads*d:
 *   attn  = 2*h*qd + 2*h*kvd           (+ qd + 2*kvd + h with bias)
 *   mlp   = gelu 2*h*f (+ f + h), swiglu 3*h*f (+ 2*f + h)
 *   norms = 2 per layer, 2h (layernorm) or h (rmsnorm) each
 *   total = L*(attn + mlp + norms) + V*h + [learned] s*h + [untied] V*h + final norm
 * GPT-3 175B: 174,615,846,912; Llama-3-8B: 8,030,261,248; Llama-3-70B:
 * 70,553,706,496; Llama-2-7B: 6,738,415,616 (tests/test-model.c).
 *
 * Multi-head latent attention (DeepSeek-V2/V3, <mla>) replaces attn, with
 * n = qk_nope_head_dim, r = qk_rope_head_dim, v = v_head_dim, H = heads and
 * rmsnorm widths w counted as w (2w for layernorm):
 *   q     = h*q_lora + q_lora (q_a norm) + q_lora*H*(n + r)   [q_lora_rank > 0]
 *           h*H*(n + r)                                       [q_lora_rank 0]
 *   kv    = h*(kv_lora + r) (kv_a) + kv_lora (kv_a norm) + kv_lora*H*(n + v) (kv_b)
 *   o     = H*v*h
 *   attn  = q + kv + o
 * DeepSeek-V3: 11,010,048 + 1,536 + 37,748,736 + 4,128,768 + 512 + 16,777,216
 *   + 117,440,512 = 187,107,328 per layer.
 *
 * Mixture of experts (<moe>): E routed experts of FFN width fe, k of them
 * per token, S shared experts (always on) of the same width; layer i (from
 * 0) is an MoE layer when i >= first_dense and (i - first_dense) % every
 * == 0, the others are dense layers of width f.  One expert is the model's
 * MLP at width fe (expert = 3*h*fe for swiglu, 2*h*fe for gelu, plus its
 * biases with bias); the router is a bias-free h x E linear layer:
 *   moe layer        = attn + norms + h*E + (E + S)*expert
 *   moe layer active = attn + norms + h*E + (k + S)*expert
 *   total  = Ld*dense layer + Lm*moe layer + V*h + [untied] V*h + final norm
 *   active = Ld*dense layer + Lm*moe layer active + V*h + [untied] V*h + final norm
 * "active" counts every weight one token's forward pass reads, its embedding
 * row included (Mistral's and Qwen's convention; DeepSeek leaves the
 * embedding out, tests/test-model-moe.c).  Left out: DeepSeek-V3's
 * per-expert routing bias (256 per MoE layer, set by a rule, not trained),
 * Qwen3's per-head q/k norms (2*d per layer) and the multi-token-prediction
 * module.  Mixtral 8x7B: 46,702,792,704 total, 12,879,925,248 active;
 * DeepSeek-V3: 671,026,404,352 total, 37,552,282,624 active
 * (tests/test-model-moe.c has all five shipped MoE models).
 *
 * The plan, the memory ledger, the time simulation, sim sweep and sim
 * shapes take every model (sim-cost.h: mixture-of-experts layers and
 * latent attention).
 *
 * A SimModel is built by sim_model_load() and read-only afterwards.  It
 * comes from sim's own model XML (models/model.rng) or from a Hugging Face
 * config.json (sim_model_load_hf, README "Bring your own config").
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum { SIM_MLP_GELU, SIM_MLP_SWIGLU } SimMlp;
typedef enum { SIM_NORM_LAYERNORM, SIM_NORM_RMSNORM } SimNorm;
typedef enum { SIM_POSITION_LEARNED, SIM_POSITION_ROPE } SimPosition;

/* mixture-of-experts layers (<moe>); experts == 0 for a dense model */
typedef struct {
  guint64 experts;        /* routed experts per MoE layer (E) */
  guint64 top_k;          /* routed experts per token (k) */
  guint64 shared_experts; /* experts every token passes through (S) */
  guint64 ffn_hidden;     /* FFN width of one expert (fe) */
  guint64 first_dense;    /* layers 0 .. first_dense-1 are dense */
  guint64 every;          /* then every this-many-th layer is MoE (>= 1) */
  /* tokens an expert takes per step, as a multiple of the even share
   * (tokens*k/E); 0: dropless (no token is dropped) */
  double capacity_factor;
  /* informational, from a Hugging Face config: the multiplier on the
   * routed experts' output (DeepSeek-V3 2.5) and group-limited routing
   * (n_group, topk_group); they change no parameter or FLOP; 0 when absent */
  double routed_scaling;
  guint64 groups;
  guint64 topk_groups;
} SimMoe;

/* multi-head latent attention (<mla>, DeepSeek-V2/V3); kv_lora_rank == 0
 * for standard attention */
typedef struct {
  guint64 q_lora_rank;  /* 0: q projected directly from the hidden state */
  guint64 kv_lora_rank;
  guint64 qk_nope_head_dim;
  guint64 qk_rope_head_dim;
  guint64 v_head_dim;
} SimMla;

typedef struct {
  char *name;
  char *description;
  char *path;
  guint64 layers;
  guint64 hidden;
  guint64 heads;
  guint64 kv_heads;
  guint64 ffn_hidden;
  guint64 vocab;
  guint64 seq_len;
  /* where a Hugging Face config's seq_len came from (a static string: the
   * field read, or the sliding window), NULL for a model file's own */
  const char *seq_len_from;
  SimMlp mlp;
  SimNorm norm;
  SimPosition position;
  gboolean tied_embeddings;
  gboolean bias;
  gboolean dropout;
  guint64 default_global_batch; /* 0 when the file gives none */
  /* 0: every layer attends to the whole causal prefix; else a sliding
   * attention window in tokens (a Hugging Face config's sliding_window):
   * sim charges full causal attention, exact only for sequences up to the
   * window, so sim_plan_resolve refuses a longer --seq-len */
  guint64 attention_window;
  /* the attention head size when it is not hidden/heads (a config's
   * head_dim, Qwen3-MoE's 128 at hidden 2048 with 32 heads); 0: hidden/heads */
  guint64 head_dim;
  SimMoe moe;
  SimMla mla;
  /* multi-token prediction (<mtp layers>, DeepSeek-V3's
   * num_nextn_predict_layers): how many MTP modules the model was trained
   * with, each one transformer layer of the last layer's kind; 0 when none.
   * The plan chooses how many to train (--mtp-num-layers, sim-plan.h) */
  guint64 mtp_layers;
} SimModel;

/* LoRA adapter targets, as a bit set */
typedef enum {
  SIM_LORA_Q = 1 << 0,
  SIM_LORA_K = 1 << 1,
  SIM_LORA_V = 1 << 2,
  SIM_LORA_O = 1 << 3,
  SIM_LORA_GATE = 1 << 4, /* swiglu only; ignored for gelu */
  SIM_LORA_UP = 1 << 5,
  SIM_LORA_DOWN = 1 << 6,
  SIM_LORA_ALL = 0x7f,
  /* one adapter on the fused QKV projection (in h, out q + 2 kv), as
   * Megatron-Core's linear_qkv is one GEMM: Megatron-Bridge's LoRA target
   * "linear_qkv" (src/megatron/bridge/peft/lora.py), NeMo's
   * "attention_qkv"; replaces q, k and v where given with them */
  SIM_LORA_QKV = 1 << 7,
} SimLoraTargets;

/* a new SimModel (free with sim_model_free), or NULL with SIM_ERROR_IO,
 * SIM_ERROR_XML or SIM_ERROR_MODEL ("file:line: ..."); any thread (see
 * sim-xml.h).  Everything below is a pure function: any thread. */
SimModel *sim_model_load (const char *path, GError **error);
/* a new SimModel from a Hugging Face config.json (free with sim_model_free),
 * for the dense families Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2,
 * GPT-NeoX and Nemotron and the mixture-of-experts families Mixtral,
 * Qwen3-MoE and DeepSeek-V3 (experts, their layer pattern, latent
 * attention, a separate head_dim; routing details such as n_group and
 * routed_scaling_factor read as informational); sim_model_load calls it
 * for a file named *.json or whose text starts with '{'.  Every field is
 * either mapped, ignored as informational (token ids, dtype, RoPE base,
 * norm epsilon, ...) or refused: a field that would change the arithmetic
 * sim cannot model (experts in a dense family, a dense family's head_dim
 * other than hidden/heads, a layer pattern <moe> cannot write, an unknown
 * field) gives SIM_ERROR_MODEL "PATH:LINE:
 * expected ..., got field \"X\""; bad JSON gives SIM_ERROR_MODEL
 * "PATH:LINE: expected ..."; an unreadable file SIM_ERROR_IO.  seq_len is
 * max_position_embeddings (capped at an active sliding_window); any thread */
SimModel *sim_model_load_hf (const char *path, GError **error);
void sim_model_free (SimModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimModel, sim_model_free)

guint64 sim_model_head_dim (const SimModel *m);
guint64 sim_model_kv_dim (const SimModel *m); /* kv_heads * head_dim */

/* parameters of one dense transformer block (for a model with MoE layers:
 * one of its dense layers), and the split of that count into what tensor
 * parallelism shards (the linear weights and the column-parallel biases)
 * and what every TP rank replicates (norms, row-parallel biases, and
 * latent attention's down projections, which Megatron-Core duplicates) */
guint64 sim_model_layer_params (const SimModel *m);
guint64 sim_model_layer_params_sharded (const SimModel *m);
guint64 sim_model_layer_params_replicated (const SimModel *m);
/* weights of the linear layers only (what QLoRA quantises) */
guint64 sim_model_layer_linear_weights (const SimModel *m);

guint64 sim_model_embedding_params (const SimModel *m);     /* V*h */
guint64 sim_model_position_params (const SimModel *m);      /* s*h or 0 */
guint64 sim_model_final_norm_params (const SimModel *m);
guint64 sim_model_output_params (const SimModel *m);        /* 0 when tied */
/* every parameter (for MoE models: all experts); see the header comment */
guint64 sim_model_param_count (const SimModel *m);
/* the parameters one token's forward pass reads (= the total when dense) */
guint64 sim_model_param_count_active (const SimModel *m);

/* TRUE when the model has mixture-of-experts layers */
gboolean sim_model_is_moe (const SimModel *m);
/* TRUE when layer i (from 0) is an MoE layer; layers from m->layers on are
 * multi-token-prediction layers, of the last layer's kind (Megatron-Core
 * builds the MTP block from the decoder's last layer spec:
 * megatron/core/models/gpt/gpt_layer_specs.py, get_gpt_mtp_block_spec) */
gboolean sim_model_layer_is_moe (const SimModel *m, guint64 layer);
/* one multi-token-prediction module beyond its transformer layer, as
 * Megatron-Core builds it (megatron/core/transformer/
 * multi_token_prediction.py, MultiTokenPredictionLayer): the norms of the
 * hidden state and of the next token's embedding (enorm, hnorm), the
 * projection of the two concatenated, 2h -> h (eh_proj, column-parallel,
 * no bias), and the module's final norm; the embedding and output layer
 * are the main model's, shared.  DeepSeek-V3: 2 x 7,168 x 7,168 + 3 x 7,168
 * = 102,781,952 (tests/test-model-moe.c) */
guint64 sim_model_mtp_extra_params (const SimModel *m);
/* eh_proj's weights, what tensor parallelism shards of the above */
guint64 sim_model_mtp_extra_sharded (const SimModel *m);
/* one whole MTP module: its layer and the above.  DeepSeek-V3 (an MoE
 * layer of 11,507,286,016): 11,610,067,968; README_WEIGHTS.md of
 * deepseek-ai/DeepSeek-V3 gives "11.5B unique parameters" (with the
 * shared embedding and head, 14B of the published 685B) */
guint64 sim_model_mtp_params (const SimModel *m);
/* how many layers are MoE layers (0 when dense) */
guint64 sim_model_moe_layers (const SimModel *m);
/* attention weights of one layer (standard or latent), biases included */
guint64 sim_model_attention_params (const SimModel *m);
/* one expert's FFN at the expert width, biases included */
guint64 sim_model_expert_params (const SimModel *m);
/* the router of one MoE layer: h*E */
guint64 sim_model_router_params (const SimModel *m);
/* one MoE layer: attention, norms, router and all experts / the experts a
 * token uses (top-k and shared); 0 for a dense model */
guint64 sim_model_moe_layer_params (const SimModel *m);
guint64 sim_model_moe_layer_params_active (const SimModel *m);
/* One MoE layer split as Megatron-Core splits it (sim-memory.h): what TP
 * shards (attention as in a dense layer, the shared experts as one MLP of
 * width S*fe), what every TP rank replicates (norms, latent attention's
 * down projections, row-parallel biases, the h x E router), and one routed
 * expert split over the expert tensor-parallel group (its weights and
 * column-parallel biases) and replicated there (its output bias).
 *   dense_sharded + dense_replicated + E*(expert_sharded + expert_replicated)
 *     = sim_model_moe_layer_params
 * The moe_layer_dense ones are 0 for a dense model. */
guint64 sim_model_moe_layer_dense_sharded (const SimModel *m);
guint64 sim_model_moe_layer_dense_replicated (const SimModel *m);
guint64 sim_model_expert_params_sharded (const SimModel *m);
guint64 sim_model_expert_params_replicated (const SimModel *m);

/* one LoRA adapter of a layer: A (in x r) then B (r x out) beside the
 * projection `target` (one SimLoraTargets bit); column_parallel: the
 * projection's output is split over TP (B's columns with it), else its
 * input (A's rows) */
typedef struct {
  guint target;
  guint64 in, out;
  gboolean column_parallel;
} SimLoraAdapter;
#define SIM_LORA_MAX_ADAPTERS 7
/* the adapters `targets` puts on one dense layer, in the order of its
 * projections (q, k, v, o, gate, up, down; gate only on a SwiGLU MLP; the
 * fused qkv in place of q, k and v), into out; returns how many */
int sim_model_lora_adapters (const SimModel *m, guint targets,
                             SimLoraAdapter out[SIM_LORA_MAX_ADAPTERS]);
/* trainable LoRA parameters of rank r on the given projections of one
 * layer (times layers for the model): r (in + out) per adapter */
guint64 sim_model_lora_params_per_layer (const SimModel *m, guint64 rank, guint targets);
/* "q,k,v,qkv,o,gate,up,down,attention,mlp,all" into SimLoraTargets bits; FALSE
 * with SIM_ERROR_USAGE naming the plan option lora-targets */
gboolean sim_lora_targets_parse (const char *text, guint *out, GError **error);

/* a static string */
const char *sim_mlp_name (SimMlp mlp);

G_END_DECLS
