/* sim-model.h — a dense decoder-only transformer, read from models/NAME.xml.
 *
 * Parameter count (exact, see models/README.md), with d = hidden/heads and
 * kvd = kv_heads*d:
 *   attn  = 2*h*h + 2*h*kvd            (+ 2*h + 2*kvd with bias)
 *   mlp   = gelu 2*h*f (+ f + h), swiglu 3*h*f (+ 2*f + h)
 *   norms = 2 per layer, 2h (layernorm) or h (rmsnorm) each
 *   total = L*(attn + mlp + norms) + V*h + [learned] s*h + [untied] V*h + final norm
 * GPT-3 175B: 174,615,846,912; Llama-3-8B: 8,030,261,248; Llama-3-70B:
 * 70,553,706,496; Llama-2-7B: 6,738,415,616 (tests/test-model.c).
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
} SimLoraTargets;

/* a new SimModel (free with sim_model_free), or NULL with SIM_ERROR_IO,
 * SIM_ERROR_XML or SIM_ERROR_MODEL ("file:line: ..."); any thread (see
 * sim-xml.h).  Everything below is a pure function: any thread. */
SimModel *sim_model_load (const char *path, GError **error);
/* a new SimModel from a Hugging Face config.json (free with sim_model_free),
 * for the families Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2, GPT-NeoX and
 * Nemotron; sim_model_load calls it for a file named *.json or whose text
 * starts with '{'.  Every field is either mapped, ignored as informational
 * (token ids, dtype, RoPE base, norm epsilon, ...) or refused: a field that
 * would change the arithmetic sim cannot model (experts, a head_dim other
 * than hidden/heads, an unknown field) gives SIM_ERROR_MODEL "PATH:LINE:
 * expected ..., got field \"X\""; bad JSON gives SIM_ERROR_MODEL
 * "PATH:LINE: expected ..."; an unreadable file SIM_ERROR_IO.  seq_len is
 * max_position_embeddings (capped at an active sliding_window); any thread */
SimModel *sim_model_load_hf (const char *path, GError **error);
void sim_model_free (SimModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimModel, sim_model_free)

guint64 sim_model_head_dim (const SimModel *m);
guint64 sim_model_kv_dim (const SimModel *m); /* kv_heads * head_dim */

/* parameters of one transformer block, and the split of that count into what
 * tensor parallelism shards (the linear weights and the column-parallel
 * biases) and what every TP rank replicates (norms, row-parallel biases) */
guint64 sim_model_layer_params (const SimModel *m);
guint64 sim_model_layer_params_sharded (const SimModel *m);
guint64 sim_model_layer_params_replicated (const SimModel *m);
/* weights of the linear layers only (what QLoRA quantises) */
guint64 sim_model_layer_linear_weights (const SimModel *m);

guint64 sim_model_embedding_params (const SimModel *m);     /* V*h */
guint64 sim_model_position_params (const SimModel *m);      /* s*h or 0 */
guint64 sim_model_final_norm_params (const SimModel *m);
guint64 sim_model_output_params (const SimModel *m);        /* 0 when tied */
guint64 sim_model_param_count (const SimModel *m);

/* trainable LoRA parameters of rank r on the given projections of one
 * layer (times layers for the model) */
guint64 sim_model_lora_params_per_layer (const SimModel *m, guint64 rank, guint targets);
/* "q,k,v,o,gate,up,down,attention,mlp,all" into SimLoraTargets bits; FALSE
 * with SIM_ERROR_USAGE naming the plan option lora-targets */
gboolean sim_lora_targets_parse (const char *text, guint *out, GError **error);

/* a static string */
const char *sim_mlp_name (SimMlp mlp);

G_END_DECLS
