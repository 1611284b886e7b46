/* sim-model.c — see sim-model.h */
#include "sim-model.h"

#include "sim-error.h"
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

SimModel *
sim_model_load (const char *path, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (SimModel) m = g_new0 (SimModel, 1);
  xmlNode *root = NULL;
  xmlNode *t = NULL;
  xmlNode *training = NULL;
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
      !sim_xml_get_bool (path, t, "dropout", &m->dropout, error))
    return NULL;
  m->mlp = mlp;
  m->norm = norm;
  m->position = pos;

  if (m->hidden % m->heads != 0) {
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

  training = sim_xml_first_element (root, "training");
  if (training != NULL &&
      !sim_xml_get_uint (path, training, "global-batch", 1, G_GUINT64_CONSTANT (1) << 32,
                         &m->default_global_batch, error))
    return NULL;
  if (!sim_xml_validate (doc, path, "/sim/model.rng", error))
    return NULL;
  return g_steal_pointer (&m);
}

guint64
sim_model_head_dim (const SimModel *m)
{
  return m->hidden / m->heads;
}

guint64
sim_model_kv_dim (const SimModel *m)
{
  return m->kv_heads * sim_model_head_dim (m);
}

static guint64
norm_params (const SimModel *m)
{
  return m->norm == SIM_NORM_LAYERNORM ? 2 * m->hidden : m->hidden;
}

guint64
sim_model_layer_linear_weights (const SimModel *m)
{
  guint64 h = m->hidden, kvd = sim_model_kv_dim (m), f = m->ffn_hidden;
  guint64 attn = 2 * h * h + 2 * h * kvd;
  guint64 mlp = (m->mlp == SIM_MLP_GELU ? 2 : 3) * h * f;
  return attn + mlp;
}

/* column-parallel biases (QKV, FC1 / gate+up) are split by TP like their weights */
static guint64
column_bias (const SimModel *m)
{
  if (!m->bias)
    return 0;
  return m->hidden + 2 * sim_model_kv_dim (m) + (m->mlp == SIM_MLP_GELU ? 1 : 2) * m->ffn_hidden;
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
  return sim_model_layer_linear_weights (m) + column_bias (m);
}

guint64
sim_model_layer_params_replicated (const SimModel *m)
{
  return row_bias (m) + 2 * norm_params (m);
}

guint64
sim_model_layer_params (const SimModel *m)
{
  return sim_model_layer_params_sharded (m) + sim_model_layer_params_replicated (m);
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

guint64
sim_model_param_count (const SimModel *m)
{
  return m->layers * sim_model_layer_params (m) + sim_model_embedding_params (m) +
         sim_model_position_params (m) + sim_model_output_params (m) +
         sim_model_final_norm_params (m);
}

guint64
sim_model_lora_params_per_layer (const SimModel *m, guint64 r, guint targets)
{
  guint64 h = m->hidden, kvd = sim_model_kv_dim (m), f = m->ffn_hidden;
  guint64 n = 0;
  /* an adapter on a (in x out) projection is A (in x r) plus B (r x out) */
  if (targets & SIM_LORA_Q)
    n += r * (h + h);
  if (targets & SIM_LORA_K)
    n += r * (h + kvd);
  if (targets & SIM_LORA_V)
    n += r * (h + kvd);
  if (targets & SIM_LORA_O)
    n += r * (h + h);
  if ((targets & SIM_LORA_GATE) && m->mlp == SIM_MLP_SWIGLU)
    n += r * (h + f);
  if (targets & SIM_LORA_UP)
    n += r * (h + f);
  if (targets & SIM_LORA_DOWN)
    n += r * (f + h);
  return n;
}

gboolean
sim_lora_targets_parse (const char *text, guint *out, GError **error)
{
  static const struct { const char *name; guint bits; } names[] = {
    { "q", SIM_LORA_Q }, { "k", SIM_LORA_K }, { "v", SIM_LORA_V }, { "o", SIM_LORA_O },
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
                   "--lora-targets: expected a comma list of q,k,v,o,gate,up,down,attention,mlp,all; got '%s'",
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
