/* sim-model.c — see sim-model.h */
#include "sim-model.h"

#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "sim-input.h"
#include "sim-json-read.h"
#include "sim-xml.h"

void
sim_model_free (SimModel *model)
{
  if (model == NULL)
    return;
  g_free (model->name);
  g_free (model->description);
  g_free (model->path);
  g_free (model);
}

/* one transformer block may not exceed this: a hidden size of 2^20 is ~50x
 * the widest published model; anything larger is a typo */
#define MAX_DIM (G_GUINT64_CONSTANT (1) << 20)
#define MAX_VOCAB (G_GUINT64_CONSTANT (1) << 24)
#define MAX_SEQ (G_GUINT64_CONSTANT (1) << 24)
/* latent attention widths: DeepSeek-V3's largest is 1536 */
#define MAX_MLA (G_GUINT64_CONSTANT (1) << 16)

static gboolean counts_fit (const SimModel *m);

static gboolean
get_enum (const char *file, xmlNode *node, const char *name, const char *a, const char *b,
          int *out, GError **error)
{
  g_autofree char *v = NULL;
  if (!sim_xml_get_string (file, node, name, &v, error))
    return FALSE;
  if (g_str_equal (v, a))
    *out = 0;
  else if (g_str_equal (v, b))
    *out = 1;
  else {
    g_autofree char *shown = sim_xml_shorten (v);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute %s of <%s>: expected %s or %s, got '%s'", file,
                 sim_xml_attr_line (node, name), name, (const char *) node->name, a, b, shown);
    return FALSE;
  }
  return TRUE;
}

/* an optional whole-number attribute: absent leaves *out as it is */
static gboolean
get_uint_opt (const char *file, xmlNode *node, const char *name, guint64 lo, guint64 hi,
              guint64 *out, GError **error)
{
  if (xmlHasProp (node, (const xmlChar *) name) == NULL)
    return TRUE;
  return sim_xml_get_uint (file, node, name, lo, hi, out, error);
}

/* <moe experts top-k ffn-hidden [shared-experts] [first-dense] [every]
 * [capacity-factor]/>: at least one layer must be an MoE layer */
static gboolean
load_moe (const char *path, xmlNode *e, SimModel *m, GError **error)
{
  SimMoe *moe = &m->moe;
  moe->every = 1;
  if (!sim_xml_get_uint (path, e, "experts", 1, 1 << 16, &moe->experts, error) ||
      !sim_xml_get_uint (path, e, "top-k", 1, 1 << 16, &moe->top_k, error) ||
      !sim_xml_get_uint (path, e, "ffn-hidden", 1, 16 * MAX_DIM, &moe->ffn_hidden, error) ||
      !get_uint_opt (path, e, "shared-experts", 0, 1 << 16, &moe->shared_experts, error) ||
      !get_uint_opt (path, e, "first-dense", 0, m->layers - 1, &moe->first_dense, error) ||
      !get_uint_opt (path, e, "every", 1, m->layers, &moe->every, error))
    return FALSE;
  if (xmlHasProp (e, (const xmlChar *) "capacity-factor") != NULL &&
      !sim_xml_get_double (path, e, "capacity-factor", 0.01, 1000, &moe->capacity_factor, error))
    return FALSE;
  if (moe->top_k > moe->experts) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_MODEL,
                 "%s:%ld: expected top-k (%" G_GUINT64_FORMAT ") to be at most experts (%"
                 G_GUINT64_FORMAT ")", path, sim_xml_attr_line (e, "top-k"), moe->top_k, moe->experts);
    return FALSE;
  }
  return TRUE;
}

/* <mla [q-lora-rank] kv-lora-rank qk-nope-head-dim qk-rope-head-dim v-head-dim/> */
static gboolean
load_mla (const char *path, xmlNode *e, SimMla *mla, GError **error)
{
  return get_uint_opt (path, e, "q-lora-rank", 1, MAX_MLA, &mla->q_lora_rank, error) &&
         sim_xml_get_uint (path, e, "kv-lora-rank", 1, MAX_MLA, &mla->kv_lora_rank, error) &&
         sim_xml_get_uint (path, e, "qk-nope-head-dim", 1, MAX_MLA, &mla->qk_nope_head_dim, error) &&
         sim_xml_get_uint (path, e, "qk-rope-head-dim", 0, MAX_MLA, &mla->qk_rope_head_dim, error) &&
         sim_xml_get_uint (path, e, "v-head-dim", 1, MAX_MLA, &mla->v_head_dim, error);
}

static SimModel *
load_xml (const char *path, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (SimModel) m = g_new0 (SimModel, 1);
  xmlNode *root = NULL;
  xmlNode *t = NULL;
  xmlNode *training = NULL;
  xmlNode *e = NULL;
  int mlp = 0, norm = 0, pos = 0;

  doc = sim_xml_load (path, error);
  if (doc == NULL)
    return NULL;
  root = xmlDocGetRootElement (doc);
  if (!sim_xml_is (root, "model")) {
    g_autofree char *shown = sim_xml_shorten (root != NULL ? (const char *) root->name : "");
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: expected a <model> document, got <%s>",
                 path, sim_xml_attr_line (root, NULL), shown);
    return NULL;
  }
  m->path = g_strdup (path);
  if (!sim_xml_get_string (path, root, "name", &m->name, error) ||
      !sim_xml_get_string (path, root, "description", &m->description, error))
    return NULL;

  t = sim_xml_require (path, root, "transformer", error);
  if (t == NULL)
    return NULL;
  if (!sim_xml_get_uint (path, t, "layers", 1, 100000, &m->layers, error) ||
      !sim_xml_get_uint (path, t, "hidden", 1, MAX_DIM, &m->hidden, error) ||
      !sim_xml_get_uint (path, t, "heads", 1, MAX_DIM, &m->heads, error) ||
      !sim_xml_get_uint (path, t, "kv-heads", 1, MAX_DIM, &m->kv_heads, error) ||
      !sim_xml_get_uint (path, t, "ffn-hidden", 1, 16 * MAX_DIM, &m->ffn_hidden, error) ||
      !sim_xml_get_uint (path, t, "vocab", 1, MAX_VOCAB, &m->vocab, error) ||
      !sim_xml_get_uint (path, t, "seq-len", 1, MAX_SEQ, &m->seq_len, error) ||
      !get_enum (path, t, "mlp", "gelu", "swiglu", &mlp, error) ||
      !get_enum (path, t, "norm", "layernorm", "rmsnorm", &norm, error) ||
      !get_enum (path, t, "position", "learned", "rope", &pos, error) ||
      !sim_xml_get_bool (path, t, "tied-embeddings", &m->tied_embeddings, error) ||
      !sim_xml_get_bool (path, t, "bias", &m->bias, error) ||
      !sim_xml_get_bool (path, t, "dropout", &m->dropout, error) ||
      !get_uint_opt (path, t, "head-dim", 1, MAX_DIM, &m->head_dim, error))
    return NULL;
  m->mlp = mlp;
  m->norm = norm;
  m->position = pos;

  /* an explicit head-dim frees hidden from being a multiple of heads */
  if (m->head_dim == 0 && m->hidden % m->heads != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_MODEL,
                 "%s:%ld: expected hidden (%" G_GUINT64_FORMAT ") to be a multiple of heads (%"
                 G_GUINT64_FORMAT ")", path, sim_xml_attr_line (t, "hidden"), m->hidden, m->heads);
    return NULL;
  }
  if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_MODEL,
                 "%s:%ld: expected heads (%" G_GUINT64_FORMAT ") to be a multiple of kv-heads (%"
                 G_GUINT64_FORMAT ")", path, sim_xml_attr_line (t, "kv-heads"), m->heads, m->kv_heads);
    return NULL;
  }

  if ((e = sim_xml_first_element (root, "moe")) != NULL && !load_moe (path, e, m, error))
    return NULL;
  if ((e = sim_xml_first_element (root, "mla")) != NULL) {
    if (!load_mla (path, e, &m->mla, error))
      return NULL;
    /* DeepSeek's latent attention has no biases; sim counts none for it */
    if (m->bias) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_MODEL,
                   "%s:%ld: expected bias=\"false\" in <transformer> with <mla> (latent attention "
                   "without biases)", path, sim_xml_attr_line (t, "bias"));
      return NULL;
    }
  }
  /* <mtp layers/>: Megatron-Core's mtp_num_layers, at most 64 */
  if ((e = sim_xml_first_element (root, "mtp")) != NULL &&
      !sim_xml_get_uint (path, e, "layers", 1, 64, &m->mtp_layers, error))
    return NULL;
  training = sim_xml_first_element (root, "training");
  if (training != NULL &&
      !sim_xml_get_uint (path, training, "global-batch", 1, G_GUINT64_CONSTANT (1) << 32,
                         &m->default_global_batch, error))
    return NULL;
  if (!sim_xml_validate (doc, path, "model.rng", error))
    return NULL;
  if (!counts_fit (m)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_MODEL,
                 "%s:%ld: expected a model of fewer than 2^63 parameters", path,
                 sim_xml_attr_line (t, NULL));
    return NULL;
  }
  return g_steal_pointer (&m);
}

/* ---- Hugging Face config.json ----
 *
 * One row per family: the model_type and architectures names transformers
 * writes, and what the family's modelling code fixes that the config does
 * not say (transformers/models/<family>/modeling_<family>.py). */
typedef enum { HF_DENSE, HF_MIXTRAL, HF_QWEN3_MOE, HF_DEEPSEEK_V3 } HfMoe;

/* the fields a mixture-of-experts family maps or reads as informational,
 * beyond those every family has (hf_known) */
static const char *const hf_mixtral_fields[] = {
  "num_local_experts", "num_experts_per_tok",
  /* training-time router settings: no parameter, no FLOP of note */
  "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", NULL,
};
static const char *const hf_qwen3_moe_fields[] = {
  "num_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step",
  "mlp_only_layers", "norm_topk_prob", "output_router_logits", "router_aux_loss_coef", NULL,
};
static const char *const hf_deepseek_v3_fields[] = {
  "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size",
  "first_k_dense_replace", "moe_layer_freq", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
  "qk_rope_head_dim", "v_head_dim", "n_group", "topk_group", "routed_scaling_factor",
  /* routing details and training settings that change no shape */
  "norm_topk_prob", "scoring_func", "topk_method", "seq_aux", "aux_loss_alpha", "ep_size",
  "rope_interleave",
  /* the multi-token-prediction modules (SimModel.mtp_layers) */
  "num_nextn_predict_layers",
  /* the repository's own modelling code, which transformers' deepseek_v3 replaces
   * with the same weights, and the FP8 block scaling of the released weights
   * (the same shapes) */
  "auto_map", "quantization_config", NULL,
};

typedef struct {
  const char *model_type;
  const char *architecture;
  gboolean gated;        /* gate, up and down projections (sim's swiglu shape) */
  SimNorm norm;
  gboolean tied_default; /* tie_word_embeddings when the config omits it */
  gboolean bias_default; /* attention_bias when the config omits it */
  HfMoe moe;
  const char *const *fields; /* NULL for dense families */
} HfFamily;

static const HfFamily hf_families[] = {
  { "llama", "LlamaForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE },
  { "mistral", "MistralForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE },
  /* Qwen2 has biases on q, k and v only: sim's bias is all or nothing, so
   * they are left out (Qwen2.5-7B: 129,024 parameters, 0.002 %) */
  { "qwen2", "Qwen2ForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE },
  /* Qwen3's per-head q/k RMSNorms (2 x head_dim per layer) are left out */
  { "qwen3", "Qwen3ForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE },
  /* Gemma's MLP is GeGLU: gated like SwiGLU, the same shape and FLOPs */
  { "gemma", "GemmaForCausalLM", TRUE, SIM_NORM_RMSNORM, TRUE, FALSE },
  /* Gemma 2 also normalises after attention and MLP (2 more h per layer) */
  { "gemma2", "Gemma2ForCausalLM", TRUE, SIM_NORM_RMSNORM, TRUE, FALSE },
  /* GPT-NeoX: LayerNorm, biases everywhere, fused QKV with kv = heads */
  { "gpt_neox", "GPTNeoXForCausalLM", FALSE, SIM_NORM_LAYERNORM, FALSE, TRUE },
  /* Nemotron: squared-ReLU MLP (two matrices, sim's gelu shape), LayerNorm1P */
  { "nemotron", "NemotronForCausalLM", FALSE, SIM_NORM_LAYERNORM, FALSE, FALSE },
  /* Mixtral: every layer is MoE; intermediate_size is each expert's width */
  { "mixtral", "MixtralForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE, HF_MIXTRAL,
    hf_mixtral_fields },
  /* Qwen3-MoE: Qwen3's per-head q/k RMSNorms are left out, as for Qwen3 */
  { "qwen3_moe", "Qwen3MoeForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE, HF_QWEN3_MOE,
    hf_qwen3_moe_fields },
  /* DeepSeek-V3: latent attention, shared and routed experts after dense layers */
  { "deepseek_v3", "DeepseekV3ForCausalLM", TRUE, SIM_NORM_RMSNORM, FALSE, FALSE, HF_DEEPSEEK_V3,
    hf_deepseek_v3_fields },
};

/* fields that change nothing sim computes: token ids, dtypes, RoPE base and
 * scaling (RoPE is elementwise), norm epsilons, softcapping constants,
 * parallel residual (same kernels), inference-only settings */
static const char *const hf_ignored[] = {
  "_name_or_path", "transformers_version", "torch_dtype", "dtype", "bos_token_id",
  "eos_token_id", "pad_token_id", "unk_token_id", "sep_token_id", "initializer_range",
  "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "rope_theta",
  "rope_scaling", "rotary_emb_base", "rotary_pct", "rope_percent", "rope_percentage",
  "partial_rotary_factor", "use_cache", "pretraining_tp", "use_parallel_residual",
  "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar",
  "cache_implementation", "max_window_layers", "sliding_window_size", "classifier_dropout",
  "_attn_implementation_autoset", "tokenizer_class", "use_mrope", "attention_softmax_in_fp32",
  "hidden_activation", "architectures", "model_type", "use_sliding_window", "layer_types",
};

/* fields that change the arithmetic in ways sim does not model, with why */
static const struct { const char *field; const char *why; } hf_refused[] = {
  { "num_local_experts", "mixture-of-experts layers; sim models dense transformers" },
  { "num_experts", "mixture-of-experts layers; sim models dense transformers" },
  { "n_routed_experts", "mixture-of-experts layers; sim models dense transformers" },
  { "num_experts_per_tok", "mixture-of-experts layers; sim models dense transformers" },
  { "moe_intermediate_size", "mixture-of-experts layers; sim models dense transformers" },
  { "n_shared_experts", "mixture-of-experts layers; sim models dense transformers" },
  { "router_aux_loss_coef", "mixture-of-experts layers; sim models dense transformers" },
  { "kv_lora_rank", "multi-head latent attention; sim models standard attention" },
  { "q_lora_rank", "multi-head latent attention; sim models standard attention" },
  { "quantization_config", "a quantised checkpoint; sim trains bf16 weights (see --qlora)" },
  { "auto_map", "custom modelling code that sim cannot read" },
};

G_GNUC_PRINTF (4, 5) static gboolean
hf_fail (GError **error, const char *path, int line, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;
  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SIM_ERROR, SIM_ERROR_MODEL, "%s:%d: %s", path, line, msg);
  return FALSE;
}

/* a whole number from lo to hi; absent fields take *out unchanged unless required */
static gboolean
hf_uint (const SimJsonValue *doc, const char *path, const char *key, gboolean required,
         guint64 lo, guint64 hi, guint64 *out, GError **error)
{
  const SimJsonValue *v = sim_json_get (doc, key);
  if (v == NULL || (v->type == SIM_JNULL && !required)) {
    if (required)
      return hf_fail (error, path, doc->line, "expected field \"%s\" (a whole number)", key);
    return TRUE;
  }
  if (v->type != SIM_JNUMBER || v->number != floor (v->number) || v->number < (double) lo ||
      v->number > (double) hi)
    return hf_fail (error, path, v->line,
                    "expected \"%s\" to be a whole number from %" G_GUINT64_FORMAT " to %"
                    G_GUINT64_FORMAT ", got %s", key, lo, hi,
                    v->type == SIM_JNUMBER ? "another number" : v->type == SIM_JSTRING ? "a string"
                    : v->type == SIM_JBOOL ? "a boolean" : v->type == SIM_JNULL ? "null"
                    : "an array or object");
  *out = (guint64) v->number;
  return TRUE;
}

static gboolean
hf_bool (const SimJsonValue *doc, const char *path, const char *key, gboolean *out, GError **error)
{
  const SimJsonValue *v = sim_json_get (doc, key);
  if (v == NULL || v->type == SIM_JNULL)
    return TRUE;
  if (v->type != SIM_JBOOL)
    return hf_fail (error, path, v->line, "expected \"%s\" to be true or false", key);
  *out = v->boolean;
  return TRUE;
}

/* whether any dropout probability is above zero */
static gboolean
hf_dropout (const SimJsonValue *doc, const char *path, gboolean *out, GError **error)
{
  static const char *const keys[] = { "attention_dropout", "hidden_dropout",
                                      "attention_probs_dropout_prob", "hidden_dropout_prob" };
  *out = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++) {
    const SimJsonValue *v = sim_json_get (doc, keys[i]);
    if (v == NULL || v->type == SIM_JNULL)
      continue;
    if (v->type != SIM_JNUMBER || v->number < 0 || v->number >= 1)
      return hf_fail (error, path, v->line, "expected \"%s\" to be a probability from 0 to 1",
                      keys[i]);
    *out = *out || v->number > 0;
  }
  return TRUE;
}

static gboolean
hf_known (const char *key)
{
  static const char *const mapped[] = {
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
    "intermediate_size", "vocab_size", "max_position_embeddings", "hidden_act",
    "tie_word_embeddings", "attention_bias", "mlp_bias", "head_dim", "sliding_window",
    "attention_dropout", "hidden_dropout", "attention_probs_dropout_prob", "hidden_dropout_prob",
  };
  for (guint i = 0; i < G_N_ELEMENTS (mapped); i++)
    if (g_str_equal (key, mapped[i]))
      return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (hf_ignored); i++)
    if (g_str_equal (key, hf_ignored[i]))
      return TRUE;
  return FALSE;
}

static gboolean
hf_family_field (const HfFamily *f, const char *key)
{
  for (guint i = 0; f->fields != NULL && f->fields[i] != NULL; i++)
    if (g_str_equal (key, f->fields[i]))
      return TRUE;
  return FALSE;
}

/* every member is mapped, ignored, or refused with a reason */
static gboolean
hf_check_fields (const SimJsonValue *doc, const char *path, const HfFamily *f, GError **error)
{
  for (guint i = 0; i < doc->keys->len; i++) {
    const char *key = g_ptr_array_index (doc->keys, i);
    const SimJsonValue *v = g_ptr_array_index (doc->items, i);
    /* a key that is null or zero is absent in transformers' eyes */
    gboolean unset = v->type == SIM_JNULL || (v->type == SIM_JNUMBER && v->number == 0);
    g_autofree char *shown = g_utf8_make_valid (key, MIN (strlen (key), 60));
    if (hf_family_field (f, key))
      continue;
    for (guint j = 0; j < G_N_ELEMENTS (hf_refused); j++)
      if (g_str_equal (key, hf_refused[j].field) && !unset)
        return hf_fail (error, path, v->line, "expected a dense transformer, got field \"%s\" (%s)",
                        shown, hf_refused[j].why);
    if (!hf_known (key) && !unset)
      return hf_fail (error, path, v->line,
                      "expected a config.json field that sim maps or ignores (README, \"Bring "
                      "your own config\"), got field \"%s\"", shown);
  }
  return TRUE;
}

static const HfFamily *
hf_family (const SimJsonValue *doc, const char *path, GError **error)
{
  const SimJsonValue *mt = sim_json_get (doc, "model_type");
  const SimJsonValue *arch = sim_json_get (doc, "architectures");
  const HfFamily *f = NULL;
  g_autoptr (GString) names = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (hf_families); i++)
    g_string_append_printf (names, "%s%s", i ? ", " : "", hf_families[i].model_type);
  if (mt == NULL || mt->type != SIM_JSTRING)
    return hf_fail (error, path, mt != NULL ? mt->line : doc->line,
                    "expected field \"model_type\" naming one of %s", names->str), NULL;
  for (guint i = 0; i < G_N_ELEMENTS (hf_families); i++)
    if (g_str_equal (mt->string, hf_families[i].model_type))
      f = &hf_families[i];
  if (f == NULL) {
    g_autofree char *shown = g_utf8_make_valid (mt->string, MIN (strlen (mt->string), 60));
    return hf_fail (error, path, mt->line, "expected \"model_type\" to be one of %s, got \"%s\"",
                    names->str, shown), NULL;
  }
  if (arch != NULL && arch->type != SIM_JNULL) {
    const SimJsonValue *a0 = arch->type == SIM_JARRAY && arch->items->len == 1
                               ? g_ptr_array_index (arch->items, 0) : NULL;
    if (a0 == NULL || a0->type != SIM_JSTRING || !g_str_equal (a0->string, f->architecture)) {
      g_autofree char *shown = a0 != NULL && a0->type == SIM_JSTRING
                                 ? g_utf8_make_valid (a0->string, MIN (strlen (a0->string), 60))
                                 : g_strdup ("something else");
      return hf_fail (error, path, arch->line,
                      "expected \"architectures\" to be [\"%s\"] for model_type %s, got \"%s\"",
                      f->architecture, f->model_type, shown), NULL;
    }
  }
  return f;
}

/* the activation must fit the family's MLP shape */
static gboolean
hf_activation (const SimJsonValue *doc, const char *path, const HfFamily *f, SimMlp *mlp,
               GError **error)
{
  static const char *const gated[] = { "silu", "swish", "swiglu", "gelu", "gelu_pytorch_tanh",
                                       "gelu_new", "gelu_fast" };
  static const char *const plain[] = { "gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh",
                                       "relu", "relu2" };
  const SimJsonValue *v = sim_json_get (doc, "hidden_act");
  const char *const *ok = f->gated ? gated : plain;
  guint n = f->gated ? G_N_ELEMENTS (gated) : G_N_ELEMENTS (plain);
  g_autofree char *list = NULL;
  *mlp = f->gated ? SIM_MLP_SWIGLU : SIM_MLP_GELU;
  if (v == NULL || v->type == SIM_JNULL)
    return TRUE; /* the family's default, which its shape already fixes */
  if (v->type == SIM_JSTRING)
    for (guint i = 0; i < n; i++)
      if (g_str_equal (v->string, ok[i]))
        return TRUE;
  list = g_strjoinv (", ", (char **) ok);
  return hf_fail (error, path, v->line, "expected \"hidden_act\" for %s to be one of %s",
                  f->model_type, list);
}

/* a name for the model: the file's, or its folder's for a plain config.json */
static char *
hf_name (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *dir = NULL;
  g_autofree char *dirbase = NULL;
  if (g_str_has_suffix (base, ".json"))
    base[strlen (base) - 5] = '\0';
  if (!g_str_equal (base, "config") || *base == '\0')
    return g_steal_pointer (&base);
  dir = g_path_get_dirname (path);
  dirbase = g_path_get_basename (dir);
  if (g_str_equal (dirbase, ".") || g_str_equal (dirbase, G_DIR_SEPARATOR_S))
    return g_steal_pointer (&base);
  return g_steal_pointer (&dirbase);
}

/* a number (informational fields): absent or null leaves *out as it is */
static gboolean
hf_number (const SimJsonValue *doc, const char *path, const char *key, double *out, GError **error)
{
  const SimJsonValue *v = sim_json_get (doc, key);
  if (v == NULL || v->type == SIM_JNULL)
    return TRUE;
  if (v->type != SIM_JNUMBER || !isfinite (v->number) || v->number < 0)
    return hf_fail (error, path, v->line, "expected \"%s\" to be a number of at least 0", key);
  *out = v->number;
  return TRUE;
}

/* Qwen3-MoE: layer i is dense when it is in mlp_only_layers or when
 * (i + 1) % decoder_sparse_step != 0 (transformers' Qwen3MoeDecoderLayer);
 * sim's pattern takes a list of the first layers only */
static gboolean
hf_qwen3_moe_layers (const SimJsonValue *doc, const char *path, SimModel *m, GError **error)
{
  const SimJsonValue *v = sim_json_get (doc, "mlp_only_layers");
  guint64 step = 1, dense = 0;
  if (!hf_uint (doc, path, "decoder_sparse_step", FALSE, 1, m->layers, &step, error))
    return FALSE;
  if (v != NULL && v->type != SIM_JNULL) {
    if (v->type != SIM_JARRAY)
      return hf_fail (error, path, v->line, "expected \"mlp_only_layers\" to be a list of layer numbers");
    for (guint i = 0; i < v->items->len; i++) {
      const SimJsonValue *x = g_ptr_array_index (v->items, i);
      if (x->type != SIM_JNUMBER || x->number != (double) i)
        return hf_fail (error, path, x->line,
                        "expected \"mlp_only_layers\" to list the first layers, 0, 1, 2, ... (sim's "
                        "<moe first-dense>), got field \"mlp_only_layers\" with another pattern");
    }
    dense = v->items->len;
  }
  if (dense > 0 && step != 1)
    return hf_fail (error, path, v->line,
                    "expected \"mlp_only_layers\" to be empty when decoder_sparse_step is above 1, got "
                    "field \"mlp_only_layers\" with %u layers", v->items->len);
  /* step k: layers k-1, 2k-1, ... are MoE */
  m->moe.first_dense = dense > 0 ? dense : step - 1;
  m->moe.every = step;
  return TRUE;
}

/* DeepSeek-V3: layer i is MoE when i >= first_k_dense_replace and
 * i % moe_layer_freq == 0 (modeling_deepseek.py), which is sim's pattern
 * when first_k_dense_replace is a multiple of moe_layer_freq */
static gboolean
hf_deepseek_v3 (const SimJsonValue *doc, const char *path, SimModel *m, GError **error)
{
  guint64 freq = 1;
  if (!hf_uint (doc, path, "n_routed_experts", TRUE, 1, 1 << 16, &m->moe.experts, error) ||
      !hf_uint (doc, path, "n_shared_experts", FALSE, 0, 1 << 16, &m->moe.shared_experts, error) ||
      !hf_uint (doc, path, "num_experts_per_tok", TRUE, 1, m->moe.experts, &m->moe.top_k, error) ||
      !hf_uint (doc, path, "moe_intermediate_size", TRUE, 1, 16 * MAX_DIM, &m->moe.ffn_hidden, error) ||
      !hf_uint (doc, path, "first_k_dense_replace", FALSE, 0, m->layers - 1, &m->moe.first_dense, error) ||
      !hf_uint (doc, path, "moe_layer_freq", FALSE, 1, m->layers, &freq, error) ||
      !hf_uint (doc, path, "n_group", FALSE, 0, 1 << 16, &m->moe.groups, error) ||
      !hf_uint (doc, path, "topk_group", FALSE, 0, 1 << 16, &m->moe.topk_groups, error) ||
      !hf_number (doc, path, "routed_scaling_factor", &m->moe.routed_scaling, error) ||
      !hf_uint (doc, path, "q_lora_rank", FALSE, 0, MAX_MLA, &m->mla.q_lora_rank, error) ||
      !hf_uint (doc, path, "kv_lora_rank", TRUE, 1, MAX_MLA, &m->mla.kv_lora_rank, error) ||
      !hf_uint (doc, path, "qk_nope_head_dim", TRUE, 1, MAX_MLA, &m->mla.qk_nope_head_dim, error) ||
      !hf_uint (doc, path, "qk_rope_head_dim", TRUE, 0, MAX_MLA, &m->mla.qk_rope_head_dim, error) ||
      !hf_uint (doc, path, "v_head_dim", TRUE, 1, MAX_MLA, &m->mla.v_head_dim, error) ||
      !hf_uint (doc, path, "num_nextn_predict_layers", FALSE, 0, 64, &m->mtp_layers, error))
    return FALSE;
  if (m->moe.first_dense % freq != 0)
    return hf_fail (error, path, sim_json_get (doc, "moe_layer_freq")->line,
                    "expected first_k_dense_replace (%" G_GUINT64_FORMAT ") to be a multiple of "
                    "moe_layer_freq (%" G_GUINT64_FORMAT "), got field \"moe_layer_freq\" with a "
                    "pattern sim's <moe first-dense every> cannot write", m->moe.first_dense, freq);
  m->moe.every = freq;
  return TRUE;
}

/* the experts (and DeepSeek's latent attention) of the MoE families */
static gboolean
hf_moe (const SimJsonValue *doc, const char *path, const HfFamily *f, SimModel *m, GError **error)
{
  switch (f->moe) {
  case HF_DENSE:
    return TRUE;
  case HF_MIXTRAL:
    m->moe.every = 1;
    m->moe.ffn_hidden = m->ffn_hidden;
    return hf_uint (doc, path, "num_local_experts", TRUE, 1, 1 << 16, &m->moe.experts, error) &&
           hf_uint (doc, path, "num_experts_per_tok", TRUE, 1, m->moe.experts, &m->moe.top_k, error);
  case HF_QWEN3_MOE:
    return hf_uint (doc, path, "num_experts", TRUE, 1, 1 << 16, &m->moe.experts, error) &&
           hf_uint (doc, path, "num_experts_per_tok", TRUE, 1, m->moe.experts, &m->moe.top_k, error) &&
           hf_uint (doc, path, "moe_intermediate_size", TRUE, 1, 16 * MAX_DIM, &m->moe.ffn_hidden, error) &&
           hf_qwen3_moe_layers (doc, path, m, error);
  case HF_DEEPSEEK_V3:
    return hf_deepseek_v3 (doc, path, m, error);
  }
  return TRUE;
}

static SimModel *
hf_from_text (const char *path, const char *text, GError **error)
{
  g_autoptr (SimModel) m = g_new0 (SimModel, 1);
  g_autoptr (SimJsonValue) doc = NULL;
  g_autoptr (GError) local = NULL;
  const HfFamily *f = NULL;
  const SimJsonValue *v = NULL;
  guint64 head_dim = 0, max_pos = 0, window = 0;
  gboolean bias = FALSE, mlp_bias = FALSE, window_on = TRUE;

  doc = sim_json_parse (path, text, &local);
  if (doc == NULL) {
    /* the reader's "PATH:LINE: expected ..." text, in the model's error code */
    g_set_error_literal (error, SIM_ERROR, SIM_ERROR_MODEL, local->message);
    return NULL;
  }
  if (doc->type != SIM_JOBJECT)
    return hf_fail (error, path, doc->line, "expected a Hugging Face config.json object"), NULL;
  if ((f = hf_family (doc, path, error)) == NULL || !hf_check_fields (doc, path, f, error))
    return NULL;

  m->path = g_strdup (path);
  m->name = hf_name (path);
  m->norm = f->norm;
  m->position = SIM_POSITION_ROPE; /* every family here rotates (NeoX and Nemotron partly) */
  m->tied_embeddings = f->tied_default;
  bias = f->bias_default;
  if (!hf_uint (doc, path, "num_hidden_layers", TRUE, 1, 100000, &m->layers, error) ||
      !hf_uint (doc, path, "hidden_size", TRUE, 1, MAX_DIM, &m->hidden, error) ||
      !hf_uint (doc, path, "num_attention_heads", TRUE, 1, MAX_DIM, &m->heads, error) ||
      !hf_uint (doc, path, "intermediate_size", TRUE, 1, 16 * MAX_DIM, &m->ffn_hidden, error) ||
      !hf_uint (doc, path, "vocab_size", TRUE, 1, MAX_VOCAB, &m->vocab, error) ||
      !hf_uint (doc, path, "max_position_embeddings", TRUE, 1, MAX_SEQ, &max_pos, error))
    return NULL;
  m->kv_heads = m->heads;
  if (!hf_uint (doc, path, "num_key_value_heads", FALSE, 1, MAX_DIM, &m->kv_heads, error) ||
      !hf_uint (doc, path, "head_dim", FALSE, 1, MAX_DIM, &head_dim, error) ||
      !hf_uint (doc, path, "sliding_window", FALSE, 1, MAX_SEQ, &window, error) ||
      !hf_bool (doc, path, "tie_word_embeddings", &m->tied_embeddings, error) ||
      !hf_bool (doc, path, "attention_bias", &bias, error) ||
      !hf_bool (doc, path, "mlp_bias", &mlp_bias, error) ||
      !hf_bool (doc, path, "use_sliding_window", &window_on, error) ||
      !hf_dropout (doc, path, &m->dropout, error) || !hf_activation (doc, path, f, &m->mlp, error))
    return NULL;
  /* a head size of its own (Gemma 7B: 256 x 16 heads at hidden 3072;
   * Qwen3-MoE: 128 x 32 at 2048) changes the q and o shapes and every
   * attention FLOP, which the cost model follows (heads x head_dim) */
  if (head_dim != 0 && head_dim * m->heads != m->hidden)
    m->head_dim = head_dim;
  if (m->head_dim == 0 && m->hidden % m->heads != 0)
    return hf_fail (error, path, sim_json_get (doc, "hidden_size")->line,
                    "expected hidden_size (%" G_GUINT64_FORMAT ") to be a multiple of "
                    "num_attention_heads (%" G_GUINT64_FORMAT ")", m->hidden, m->heads), NULL;
  if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
    return hf_fail (error, path, sim_json_get (doc, "num_key_value_heads")->line,
                    "expected num_attention_heads (%" G_GUINT64_FORMAT ") to be a multiple of "
                    "num_key_value_heads (%" G_GUINT64_FORMAT ")", m->heads, m->kv_heads), NULL;
  /* sim's bias covers attention and MLP together; half of it would be wrong */
  if (bias != mlp_bias && sim_json_get (doc, "mlp_bias") != NULL &&
      sim_json_get (doc, "mlp_bias")->type == SIM_JBOOL)
    return hf_fail (error, path, sim_json_get (doc, "mlp_bias")->line,
                    "expected attention_bias and mlp_bias to agree (sim's bias covers both), got "
                    "field \"mlp_bias\" %s", mlp_bias ? "true" : "false"), NULL;
  m->bias = bias;
  /* layer_types is accepted when every layer is full attention */
  v = sim_json_get (doc, "layer_types");
  if (v != NULL && v->type == SIM_JARRAY)
    for (guint i = 0; i < v->items->len; i++) {
      const SimJsonValue *t = g_ptr_array_index (v->items, i);
      if (t->type != SIM_JSTRING || !g_str_equal (t->string, "full_attention"))
        return hf_fail (error, path, t->line,
                        "expected every entry of \"layer_types\" to be \"full_attention\", got "
                        "field \"layer_types\" with another kind of layer"), NULL;
    }
  if (!hf_moe (doc, path, f, m, error))
    return NULL;
  /* The training length.  A config whose RoPE scaling extends the
   * context gives the length the model was pre-trained at as
   * rope_scaling.original_max_position_embeddings (Llama 3.1: 8192 under
   * its 131072; DeepSeek-V3: 4096 under 163840, the 4K of its report's
   * pre-training, arXiv:2412.19437 section 4.2), which sim takes; else
   * max_position_embeddings.  sliding_window counts only when on (Qwen
   * writes use_sliding_window false). */
  {
    const SimJsonValue *rs = sim_json_get (doc, "rope_scaling");
    guint64 orig = 0;
    m->seq_len = max_pos;
    m->seq_len_from = "max_position_embeddings";
    if (rs != NULL && rs->type == SIM_JOBJECT) {
      if (!hf_uint (rs, path, "original_max_position_embeddings", FALSE, 1, MAX_SEQ, &orig, error))
        return NULL;
      if (orig != 0 && orig < max_pos) {
        m->seq_len = orig;
        m->seq_len_from = "rope_scaling.original_max_position_embeddings";
      }
    }
  }
  if (window != 0 && window_on && window < m->seq_len)
    m->attention_window = window;
  if (m->attention_window != 0) {
    m->seq_len = m->attention_window;
    m->seq_len_from = "sliding_window";
  }
  if (!counts_fit (m))
    return hf_fail (error, path, doc->line, "expected a model of fewer than 2^63 parameters"), NULL;
  m->description = g_strdup_printf (
    "%s from a Hugging Face config.json; seq-len %" G_GUINT64_FORMAT " from %s", f->architecture,
    m->seq_len, m->seq_len_from);
  return g_steal_pointer (&m);
}

SimModel *
sim_model_load_hf (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  if (!sim_input_read (path, SIM_INPUT_MAX_BYTES, &text, NULL, error))
    return NULL;
  return hf_from_text (path, text, error);
}

SimModel *
sim_model_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  const char *p = NULL;
  if (g_str_has_suffix (path, ".json"))
    return sim_model_load_hf (path, error);
  /* a config.json under another name: JSON starts with '{', XML never does;
   * a file that cannot be read is left to the XML reader's message */
  if (sim_input_read (path, SIM_INPUT_MAX_BYTES, &text, NULL, NULL)) {
    for (p = text; g_ascii_isspace (*p); p++)
      ;
    if (*p == '{')
      return hf_from_text (path, text, error);
  }
  return load_xml (path, error);
}

guint64
sim_model_head_dim (const SimModel *m)
{
  return m->head_dim != 0 ? m->head_dim : m->hidden / m->heads;
}

guint64
sim_model_kv_dim (const SimModel *m)
{
  return m->kv_heads * sim_model_head_dim (m);
}

/* the width of the query projection: heads x head_dim (= hidden when dense) */
static guint64
q_dim (const SimModel *m)
{
  return m->heads * sim_model_head_dim (m);
}

static guint64
norm_width_params (const SimModel *m, guint64 width)
{
  return m->norm == SIM_NORM_LAYERNORM ? 2 * width : width;
}

static guint64
norm_params (const SimModel *m)
{
  return norm_width_params (m, m->hidden);
}

/* the linear weights of multi-head latent attention (header comment) */
static guint64
mla_weights (const SimModel *m)
{
  const SimMla *a = &m->mla;
  guint64 h = m->hidden, H = m->heads, qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
  guint64 q = a->q_lora_rank > 0 ? h * a->q_lora_rank + a->q_lora_rank * H * qk : h * H * qk;
  guint64 kv = h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank * H * (a->qk_nope_head_dim + a->v_head_dim);
  return q + kv + H * a->v_head_dim * h;
}

/* the q_a and kv_a norms of latent attention */
static guint64
mla_norms (const SimModel *m)
{
  if (m->mla.kv_lora_rank == 0)
    return 0;
  return norm_width_params (m, m->mla.kv_lora_rank) +
         (m->mla.q_lora_rank > 0 ? norm_width_params (m, m->mla.q_lora_rank) : 0);
}

/* the down projections of latent attention (q_a, kv_a): Megatron-Core
 * duplicates them on every TP rank (multi_latent_attention.py builds
 * linear_q_down_proj and linear_kv_down_proj with parallel_mode
 * 'duplicated'; NVIDIA/Megatron-LM); the up and output projections are
 * split like standard attention */
static guint64
mla_down_weights (const SimModel *m)
{
  const SimMla *a = &m->mla;
  if (a->kv_lora_rank == 0)
    return 0;
  return m->hidden * (a->q_lora_rank + a->kv_lora_rank + a->qk_rope_head_dim);
}

static guint64
attention_weights (const SimModel *m)
{
  if (m->mla.kv_lora_rank > 0)
    return mla_weights (m);
  return 2 * m->hidden * q_dim (m) + 2 * m->hidden * sim_model_kv_dim (m);
}

/* the MLP at width f: its weights, and its biases split as tensor parallelism
 * splits them (column-parallel FC1 / gate+up, row-parallel FC2 / down) */
static guint64
mlp_weights (const SimModel *m, guint64 f)
{
  return (m->mlp == SIM_MLP_GELU ? 2 : 3) * m->hidden * f;
}

static guint64
mlp_column_bias (const SimModel *m, guint64 f)
{
  return m->bias ? (m->mlp == SIM_MLP_GELU ? 1 : 2) * f : 0;
}

guint64
sim_model_layer_linear_weights (const SimModel *m)
{
  return attention_weights (m) + mlp_weights (m, m->ffn_hidden);
}

/* column-parallel biases (QKV, FC1 / gate+up) are split by TP like their weights */
static guint64
column_bias (const SimModel *m)
{
  if (!m->bias)
    return 0;
  return q_dim (m) + 2 * sim_model_kv_dim (m) + mlp_column_bias (m, m->ffn_hidden);
}

/* row-parallel biases (attention output, FC2 / down) are added after the
 * all-reduce, so every TP rank holds them whole */
static guint64
row_bias (const SimModel *m)
{
  return m->bias ? 2 * m->hidden : 0;
}

guint64
sim_model_layer_params_sharded (const SimModel *m)
{
  return sim_model_layer_linear_weights (m) - mla_down_weights (m) + column_bias (m);
}

guint64
sim_model_layer_params_replicated (const SimModel *m)
{
  return row_bias (m) + 2 * norm_params (m) + mla_norms (m) + mla_down_weights (m);
}

/* the attention's share of column_bias and row_bias */
static guint64
attention_column_bias (const SimModel *m)
{
  return m->bias ? q_dim (m) + 2 * sim_model_kv_dim (m) : 0;
}

guint64
sim_model_moe_layer_dense_sharded (const SimModel *m)
{
  guint64 fs = m->moe.shared_experts * m->moe.ffn_hidden;
  if (!sim_model_is_moe (m))
    return 0;
  return attention_weights (m) - mla_down_weights (m) + attention_column_bias (m) +
         mlp_weights (m, fs) + m->moe.shared_experts * mlp_column_bias (m, m->moe.ffn_hidden);
}

guint64
sim_model_moe_layer_dense_replicated (const SimModel *m)
{
  if (!sim_model_is_moe (m))
    return 0;
  return (m->bias ? m->hidden : 0) + 2 * norm_params (m) + mla_norms (m) + mla_down_weights (m) +
         sim_model_router_params (m) + m->moe.shared_experts * (m->bias ? m->hidden : 0);
}

guint64
sim_model_expert_params_sharded (const SimModel *m)
{
  return mlp_weights (m, m->moe.ffn_hidden) + mlp_column_bias (m, m->moe.ffn_hidden);
}

guint64
sim_model_expert_params_replicated (const SimModel *m)
{
  return m->bias ? m->hidden : 0;
}

guint64
sim_model_layer_params (const SimModel *m)
{
  return sim_model_layer_params_sharded (m) + sim_model_layer_params_replicated (m);
}

guint64
sim_model_attention_params (const SimModel *m)
{
  guint64 bias = m->bias ? q_dim (m) + 2 * sim_model_kv_dim (m) + m->hidden : 0;
  return attention_weights (m) + mla_norms (m) + bias;
}

gboolean
sim_model_is_moe (const SimModel *m)
{
  return m->moe.experts > 0;
}

gboolean
sim_model_layer_is_moe (const SimModel *m, guint64 layer)
{
  if (layer >= m->layers) /* a multi-token-prediction layer */
    layer = m->layers - 1;
  return sim_model_is_moe (m) && layer >= m->moe.first_dense &&
         (layer - m->moe.first_dense) % m->moe.every == 0;
}

guint64
sim_model_mtp_extra_sharded (const SimModel *m)
{
  return 2 * m->hidden * m->hidden;
}

guint64
sim_model_mtp_extra_params (const SimModel *m)
{
  return sim_model_mtp_extra_sharded (m) + 3 * norm_params (m);
}

guint64
sim_model_mtp_params (const SimModel *m)
{
  return sim_model_mtp_extra_params (m) + (sim_model_layer_is_moe (m, m->layers)
                                               ? sim_model_moe_layer_params (m)
                                               : sim_model_layer_params (m));
}

guint64
sim_model_moe_layers (const SimModel *m)
{
  if (!sim_model_is_moe (m) || m->moe.first_dense >= m->layers)
    return 0;
  return (m->layers - m->moe.first_dense + m->moe.every - 1) / m->moe.every;
}

guint64
sim_model_expert_params (const SimModel *m)
{
  guint64 fe = m->moe.ffn_hidden;
  return mlp_weights (m, fe) + mlp_column_bias (m, fe) + (m->bias ? m->hidden : 0);
}

guint64
sim_model_router_params (const SimModel *m)
{
  return m->hidden * m->moe.experts;
}

/* an MoE layer with n experts in it: attention, norms, router and experts */
static guint64
moe_layer_with (const SimModel *m, guint64 n)
{
  return sim_model_attention_params (m) + 2 * norm_params (m) + sim_model_router_params (m) +
         n * sim_model_expert_params (m);
}

guint64
sim_model_moe_layer_params (const SimModel *m)
{
  if (!sim_model_is_moe (m))
    return 0;
  return moe_layer_with (m, m->moe.experts + m->moe.shared_experts);
}

guint64
sim_model_moe_layer_params_active (const SimModel *m)
{
  if (!sim_model_is_moe (m))
    return 0;
  return moe_layer_with (m, m->moe.top_k + m->moe.shared_experts);
}

guint64
sim_model_embedding_params (const SimModel *m)
{
  return m->vocab * m->hidden;
}

guint64
sim_model_position_params (const SimModel *m)
{
  return m->position == SIM_POSITION_LEARNED ? m->seq_len * m->hidden : 0;
}

guint64
sim_model_final_norm_params (const SimModel *m)
{
  return norm_params (m);
}

guint64
sim_model_output_params (const SimModel *m)
{
  return m->tied_embeddings ? 0 : m->vocab * m->hidden;
}

/* the model with each MoE layer counted as moe_layer */
static guint64
count_with (const SimModel *m, guint64 moe_layer)
{
  guint64 lm = sim_model_moe_layers (m);
  return (m->layers - lm) * sim_model_layer_params (m) + lm * moe_layer +
         sim_model_embedding_params (m) + sim_model_position_params (m) +
         sim_model_output_params (m) + sim_model_final_norm_params (m);
}

guint64
sim_model_param_count (const SimModel *m)
{
  return count_with (m, sim_model_moe_layer_params (m));
}

guint64
sim_model_param_count_active (const SimModel *m)
{
  return count_with (m, sim_model_moe_layer_params_active (m));
}

/* each count is a sum of products that fit 64 bits within the readers'
 * limits; the whole model, a multiple of them, need not: checked in double */
static gboolean
counts_fit (const SimModel *m)
{
  double lm = (double) sim_model_moe_layers (m);
  double total = ((double) m->layers - lm) * (double) sim_model_layer_params (m) +
                 lm * (double) sim_model_moe_layer_params (m) + 2.0 * (double) m->vocab * (double) m->hidden +
                 (double) m->seq_len * (double) m->hidden;
  return total < 0x1p63;
}

int
sim_model_lora_adapters (const SimModel *m, guint targets,
                         SimLoraAdapter out[SIM_LORA_MAX_ADAPTERS])
{
  guint64 h = m->hidden, kvd = sim_model_kv_dim (m), f = m->ffn_hidden;
  const SimLoraAdapter all[SIM_LORA_MAX_ADAPTERS] = {
    { SIM_LORA_Q, h, q_dim (m), TRUE }, { SIM_LORA_K, h, kvd, TRUE },
    { SIM_LORA_V, h, kvd, TRUE },       { SIM_LORA_O, q_dim (m), h, FALSE },
    { SIM_LORA_GATE, h, f, TRUE },      { SIM_LORA_UP, h, f, TRUE },
    { SIM_LORA_DOWN, f, h, FALSE },
  };
  int n = 0;
  if (targets & SIM_LORA_QKV) {
    out[n++] = (SimLoraAdapter) { SIM_LORA_QKV, h, q_dim (m) + 2 * kvd, TRUE };
    targets &= ~(guint) (SIM_LORA_Q | SIM_LORA_K | SIM_LORA_V);
  }
  for (int i = 0; i < SIM_LORA_MAX_ADAPTERS; i++)
    if ((targets & all[i].target) && (all[i].target != SIM_LORA_GATE || m->mlp == SIM_MLP_SWIGLU))
      out[n++] = all[i];
  return n;
}

guint64
sim_model_lora_params_per_layer (const SimModel *m, guint64 r, guint targets)
{
  SimLoraAdapter a[SIM_LORA_MAX_ADAPTERS];
  int n = sim_model_lora_adapters (m, targets, a);
  guint64 params = 0;
  for (int i = 0; i < n; i++)
    params += r * (a[i].in + a[i].out);
  return params;
}

gboolean
sim_lora_targets_parse (const char *text, guint *out, GError **error)
{
  static const struct { const char *name; guint bits; } names[] = {
    { "q", SIM_LORA_Q }, { "k", SIM_LORA_K }, { "v", SIM_LORA_V }, { "qkv", SIM_LORA_QKV }, { "o", SIM_LORA_O },
    { "gate", SIM_LORA_GATE }, { "up", SIM_LORA_UP }, { "down", SIM_LORA_DOWN },
    { "attention", SIM_LORA_Q | SIM_LORA_K | SIM_LORA_V | SIM_LORA_O },
    { "mlp", SIM_LORA_GATE | SIM_LORA_UP | SIM_LORA_DOWN }, { "all", SIM_LORA_ALL },
  };
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  guint bits = 0;
  for (guint i = 0; parts[i] != NULL; i++) {
    gboolean found = FALSE;
    for (guint j = 0; j < G_N_ELEMENTS (names); j++)
      if (g_str_equal (g_strstrip (parts[i]), names[j].name)) {
        bits |= names[j].bits;
        found = TRUE;
      }
    if (!found) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--lora-targets: expected a comma list of q,k,v,qkv,o,gate,up,down,attention,mlp,all; got '%s'",
                   parts[i]);
      return FALSE;
    }
  }
  if (bits == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--lora-targets: expected at least one target");
    return FALSE;
  }
  *out = bits;
  return TRUE;
}

const char *
sim_mlp_name (SimMlp mlp)
{
  return mlp == SIM_MLP_GELU ? "gelu" : "swiglu";
}
