/* sim-config.c — torchtitan TOML, NeMo and Megatron-Bridge YAML read into
 * plan options (sim-config.h).
 *
 * The readers take the subset of TOML and YAML that those configs use and
 * flatten it into "section.key" = value entries; the tables below map the
 * entries that shape a step to sim's plan keys.  Sources of the names:
 * torchtitan's config manager (torchtitan/config/job_config.py, and the
 * shipped torchtitan/models/llama3/train_configs/ TOML files), NeMo's
 * megatron_gpt_config.yaml (examples/nlp/language_modeling/conf), and
 * Megatron-Bridge's ConfigContainer (src/megatron/bridge/training/config.py:
 * model, train, dataset, ddp, comm_overlap, mixed_precision). */
#include "sim-config.h"

#include <string.h>

#include "sim-error.h"
#include "sim-input.h"

#define CONFIG_MAX_BYTES (1u << 20)

typedef struct {
  char *key;     /* "parallelism.tensor_parallel_degree" */
  char *value;   /* the scalar, unquoted; a list's items joined by "," */
  int line;
  gboolean used; /* mapped, ignored or listed */
} Entry;

static void
entry_free (gpointer p)
{
  Entry *e = p;
  g_free (e->key);
  g_free (e->value);
  g_free (e);
}

static void
add_entry (GPtrArray *entries, const char *key, const char *value, int line)
{
  Entry *e = g_new0 (Entry, 1);
  e->key = g_strdup (key);
  e->value = g_strdup (value);
  e->line = line;
  g_ptr_array_add (entries, e);
}

static gboolean
fail (GError **error, const char *path, int line, const char *what)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected %s", path, line, what);
  return FALSE;
}

/* text up to an unquoted '#' (a comment), trailing blanks removed */
static char *
strip_comment (const char *line, gboolean yaml)
{
  char quote = 0;
  gsize i = 0;
  for (; line[i] != '\0'; i++) {
    char c = line[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"' && line[i + 1] != '\0')
        i++;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (!yaml || i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      break;
    }
  }
  return g_strchomp (g_strndup (line, i));
}

/* a scalar: a quoted string unquoted (TOML basic strings' \" and \\), or
 * the bare word; NULL for an unterminated quote */
static char *
scalar (const char *text)
{
  gsize n = strlen (text);
  if (n >= 1 && (text[0] == '"' || text[0] == '\'')) {
    GString *s = g_string_new (NULL);
    gsize i = 1;
    for (; i < n && text[i] != text[0]; i++) {
      if (text[0] == '"' && text[i] == '\\' && i + 1 < n)
        i++;
      g_string_append_c (s, text[i]);
    }
    if (i >= n || i + 1 != n) {
      g_string_free (s, TRUE);
      return NULL;
    }
    return g_string_free (s, FALSE);
  }
  return g_strdup (text);
}

/* "[a, 'b', 3]" into "a,b,3"; NULL when an item is not a scalar */
static char *
inline_list (const char *text)
{
  g_autofree char *inner = g_strndup (text + 1, strlen (text) - 2);
  g_auto (GStrv) items = g_strsplit (inner, ",", -1);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; items[i] != NULL; i++) {
    char *item = g_strstrip (items[i]), *v;
    if (*item == '\0')
      continue;
    if (*item == '[' || *item == '{' || (v = scalar (item)) == NULL)
      return NULL;
    g_ptr_array_add (out, v);
  }
  g_ptr_array_add (out, NULL);
  return g_strjoinv (",", (char **) out->pdata);
}

/* ---- TOML: [section] and key = value, the subset train configs use ---- */

static gboolean
read_toml (const char *path, const char *text, GPtrArray *entries, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *section = g_strdup ("");
  for (int i = 0; lines[i] != NULL; i++) {
    g_autofree char *line = strip_comment (lines[i], FALSE);
    char *eq, *key, *value;
    g_autofree char *v = NULL, *full = NULL;
    g_strstrip (line);
    if (*line == '\0')
      continue;
    if (line[0] == '[') {
      gsize n = strlen (line);
      if (line[1] == '[' || line[n - 1] != ']' || n < 3)
        return fail (error, path, i + 1, "a [section] (arrays of tables are not read)");
      g_free (section);
      section = g_strstrip (g_strndup (line + 1, n - 2));
      continue;
    }
    if ((eq = strchr (line, '=')) == NULL)
      return fail (error, path, i + 1, "key = value or [section]");
    *eq = '\0';
    key = g_strstrip (line);
    value = g_strstrip (eq + 1);
    if (*key == '\0' || *value == '\0')
      return fail (error, path, i + 1, "key = value");
    if (value[0] == '[') {
      /* an array, over several lines until its ']' */
      g_autoptr (GString) whole = g_string_new (value);
      while (whole->str[whole->len - 1] != ']' && lines[i + 1] != NULL) {
        g_autofree char *more = strip_comment (lines[++i], FALSE);
        g_string_append (whole, g_strstrip (more));
      }
      if (whole->str[whole->len - 1] != ']' || (v = inline_list (whole->str)) == NULL)
        return fail (error, path, i + 1, "an array of strings, numbers or booleans closed by ]");
    } else if (value[0] == '{' || g_str_has_prefix (value, "\"\"\"") || g_str_has_prefix (value, "'''")) {
      return fail (error, path, i + 1, "a string, number, boolean or array (inline tables and multi-line "
                                       "strings are not read)");
    } else if ((v = scalar (value)) == NULL) {
      return fail (error, path, i + 1, "a closing quote");
    }
    full = *section != '\0' ? g_strdup_printf ("%s.%s", section, key) : g_strdup (key);
    add_entry (entries, full, v, i + 1);
  }
  return TRUE;
}

/* ---- YAML: block mappings and lists, the subset the configs use ---- */

typedef struct {
  int indent;
  char *key;
} Level;

static void
level_clear (gpointer p)
{
  g_free (((Level *) p)->key);
}

static gboolean
read_yaml (const char *path, const char *text, GPtrArray *entries, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  /* the open mappings, outermost first */
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (Level));
  int skip_indent = -1; /* inside a block scalar (| or >) deeper than this */
  g_array_set_clear_func (stack, level_clear);
  for (int i = 0; lines[i] != NULL; i++) {
    g_autofree char *line = strip_comment (lines[i], TRUE);
    int indent = 0;
    char *body, *colon;
    g_autoptr (GString) path_key = g_string_new (NULL);
    while (line[indent] == ' ')
      indent++;
    body = line + indent;
    if (*body == '\0')
      continue;
    if (skip_indent >= 0) {
      if (indent > skip_indent)
        continue;
      skip_indent = -1;
    }
    if (line[indent] == '\t')
      return fail (error, path, i + 1, "spaces for indentation (YAML takes no tabs)");
    if (indent == 0 && (g_str_equal (body, "---") || g_str_equal (body, "...")))
      continue;
    if (strchr ("&*!%", body[0]) != NULL || strstr (body, ": &") != NULL || strstr (body, ": *") != NULL ||
        g_str_has_prefix (body, "<<"))
      return fail (error, path, i + 1, "plain mappings and lists (anchors, aliases, tags and directives are not read)");
    while (stack->len > 0 && g_array_index (stack, Level, stack->len - 1).indent >= indent)
      g_array_remove_index (stack, stack->len - 1);
    for (guint k = 0; k < stack->len; k++)
      g_string_append_printf (path_key, "%s%s", k > 0 ? "." : "", g_array_index (stack, Level, k).key);
    if (body[0] == '-' && (body[1] == ' ' || body[1] == '\0')) {
      /* a list item: a scalar joins its key's list; an item that is a
       * mapping is kept whole, as text, under key[] */
      char *item = g_strstrip (body + 1);
      Entry *last = entries->len > 0 ? g_ptr_array_index (entries, entries->len - 1) : NULL;
      g_autofree char *v = NULL;
      if (stack->len == 0)
        return fail (error, path, i + 1, "a mapping at the top level");
      if (strchr (item, ':') != NULL && item[0] != '"' && item[0] != '\'') {
        g_autofree char *k = g_strdup_printf ("%s[]", path_key->str);
        add_entry (entries, k, item, i + 1);
        continue;
      }
      if ((v = scalar (item)) == NULL)
        return fail (error, path, i + 1, "a closing quote");
      if (last != NULL && g_str_equal (last->key, path_key->str) && last->line != i + 1) {
        char *joined = *last->value != '\0' ? g_strdup_printf ("%s,%s", last->value, v) : g_strdup (v);
        g_free (last->value);
        last->value = joined;
      } else {
        add_entry (entries, path_key->str, v, i + 1);
      }
      continue;
    }
    if ((colon = strstr (body, ": ")) == NULL && !g_str_has_suffix (body, ":"))
      return fail (error, path, i + 1, "key: value");
    if (colon == NULL)
      colon = body + strlen (body) - 1;
    *colon = '\0';
    {
      g_autofree char *key = scalar (g_strstrip (body));
      char *value = g_strstrip (colon + 1);
      g_autofree char *full = NULL;
      g_autofree char *v = NULL;
      if (key == NULL || *key == '\0')
        return fail (error, path, i + 1, "a key before ':'");
      full = path_key->len > 0 ? g_strdup_printf ("%s.%s", path_key->str, key) : g_strdup (key);
      if (*value == '\0') {
        /* a mapping or a list follows, deeper */
        Level l = { indent, g_strdup (key) };
        g_array_append_val (stack, l);
        add_entry (entries, full, "", i + 1);
        continue;
      }
      if (value[0] == '|' || value[0] == '>') {
        skip_indent = indent;
        add_entry (entries, full, "(block text)", i + 1);
        continue;
      }
      if (value[0] == '{')
        return fail (error, path, i + 1, "a block mapping (flow mappings {...} are not read)");
      if (value[0] == '[') {
        if (value[strlen (value) - 1] != ']' || (v = inline_list (value)) == NULL)
          return fail (error, path, i + 1, "a list of scalars [a, b] on one line");
      } else if ((v = scalar (value)) == NULL) {
        return fail (error, path, i + 1, "a closing quote");
      }
      if (g_str_equal (v, "null") || g_str_equal (v, "~") || g_str_equal (v, "None")) {
        g_free (v);
        v = g_strdup ("");
      }
      add_entry (entries, full, v, i + 1);
    }
  }
  return TRUE;
}

/* ---- mapping ---- */

typedef struct {
  const char *path;
  GPtrArray *entries;
  SimConfig *c;
  GError **error;
} Map;

static Entry *
find (Map *m, const char *key)
{
  for (guint i = 0; i < m->entries->len; i++) {
    Entry *e = g_ptr_array_index (m->entries, i);
    if (g_str_equal (e->key, key))
      return e;
  }
  return NULL;
}

/* the value of key, marked used; NULL when absent or empty (YAML null) */
static const char *
take (Map *m, const char *key)
{
  Entry *e = find (m, key);
  if (e == NULL)
    return NULL;
  e->used = TRUE;
  return *e->value != '\0' ? e->value : NULL;
}

static void
item (Map *m, const char *key, const char *value)
{
  g_ptr_array_add (m->c->items, g_strdup_printf ("%s=%s", key, value));
}

/* key's value as plan option `option`, where the config sets it */
static void
same (Map *m, const char *key, const char *option)
{
  const char *v = take (m, key);
  if (v != NULL)
    item (m, option, v);
}

static gboolean
is_true (const char *v)
{
  return v != NULL && (g_ascii_strcasecmp (v, "true") == 0 || g_str_equal (v, "1"));
}

static void
unmapped (Map *m, const char *key, const char *why)
{
  Entry *e = find (m, key);
  if (e == NULL)
    return;
  e->used = TRUE;
  g_ptr_array_add (m->c->unmapped, g_strdup_printf ("%s = %s: %s", key, *e->value ? e->value : "null", why));
}

/* every entry under one of the prefixes not used yet: ignored */
static void
ignore (Map *m, const char *const *prefixes)
{
  for (guint i = 0; i < m->entries->len; i++) {
    Entry *e = g_ptr_array_index (m->entries, i);
    for (guint k = 0; prefixes[k] != NULL && !e->used; k++)
      if (g_str_has_prefix (e->key, prefixes[k]) || g_str_equal (e->key, prefixes[k])) {
        e->used = TRUE;
        if (*e->value != '\0')
          g_ptr_array_add (m->c->ignored, g_strdup (e->key));
      }
  }
}

/* what is left: set in the config, not a key sim knows */
static void
leftover (Map *m)
{
  for (guint i = 0; i < m->entries->len; i++) {
    Entry *e = g_ptr_array_index (m->entries, i);
    if (!e->used && *e->value != '\0')
      g_ptr_array_add (m->c->unmapped, g_strdup_printf ("%s = %s: not a key sim maps", e->key, e->value));
  }
}

/* torchtitan: [model] flavor names the shipped model, [parallelism] the
 * layout (data_parallel_shard_degree: FSDP2, -1 the rest of the GPUs),
 * [training] the batch and sequence, [activation_checkpoint] the
 * recomputation, [compile] or training.compile torch.compile, float8 the
 * linear layers (model.converters, as torchtitan's float8 converter) */
static gboolean
map_torchtitan (Map *m)
{
  SimConfig *c = m->c;
  const char *name = take (m, "model.name"), *flavor = take (m, "model.flavor");
  const char *shard = take (m, "parallelism.data_parallel_shard_degree");
  const char *replicate = take (m, "parallelism.data_parallel_replicate_degree");
  const char *pp = take (m, "parallelism.pipeline_parallel_degree");
  const char *local = take (m, "training.local_batch_size");
  const char *converters = take (m, "model.converters");
  const char *mode = take (m, "activation_checkpoint.mode");
  const char *option = take (m, "activation_checkpoint.selective_ac_option");
  const char *compile = take (m, "compile.enable");
  const char *schedule = take (m, "parallelism.pipeline_parallel_schedule");
  const char *gb = take (m, "training.global_batch_size");
  gint64 shard_n = shard != NULL ? g_ascii_strtoll (shard, NULL, 10) : -1;
  gint64 rep_n = replicate != NULL ? g_ascii_strtoll (replicate, NULL, 10) : 1;
  if (local == NULL)
    local = take (m, "training.batch_size");
  if (compile == NULL)
    compile = take (m, "training.compile");
  item (m, "framework", "torchtitan");
  if (name != NULL && flavor != NULL) {
    if (!g_str_equal (name, "llama3") ||
        !(g_str_equal (flavor, "8B") || g_str_equal (flavor, "70B") || g_str_equal (flavor, "405B"))) {
      g_set_error (m->error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s: model %s %s: expected llama3 8B, 70B or 405B (sim ships those; give --model for another)",
                   m->path, name, flavor);
      return FALSE;
    }
    {
      g_autofree char *name_flavor = g_strdup_printf ("llama3-%s", flavor);
      c->model = g_ascii_strdown (name_flavor, -1);
    }
  }
  same (m, "parallelism.tensor_parallel_degree", "tp");
  same (m, "parallelism.context_parallel_degree", "cp");
  if (pp != NULL)
    item (m, "pp", pp);
  same (m, "training.seq_len", "seq-len");
  /* FSDP2 shards over data_parallel_shard_degree; replicas (HSDP) beside */
  if (rep_n > 1)
    unmapped (m, "parallelism.data_parallel_replicate_degree",
              "HSDP (replicas of a sharded group): sim shards over every data-parallel GPU");
  if (shard_n == -1 || shard_n > 1 || rep_n > 1)
    item (m, "zero", shard_n == 1 ? "0" : "3");
  if (shard_n > 0 && rep_n >= 1) {
    g_autofree char *dp = g_strdup_printf ("%" G_GINT64_FORMAT, shard_n * MAX (rep_n, 1));
    item (m, "dp", dp);
  } else {
    c->dp_rest = (int) MAX (rep_n, 1);
  }
  /* the local batch is one micro-batch (torchtitan accumulates only when
   * training.global_batch_size asks); with PP, split into micro-batches of
   * pipeline_parallel_microbatch_size */
  if (pp != NULL && g_ascii_strtoll (pp, NULL, 10) > 1) {
    const char *mb = take (m, "parallelism.pipeline_parallel_microbatch_size");
    item (m, "micro-batch", mb != NULL ? mb : "1");
  } else if (local != NULL) {
    item (m, "micro-batch", local);
  }
  if (gb != NULL && g_ascii_strtoll (gb, NULL, 10) > 0)
    item (m, "global-batch", gb);
  else if (local != NULL)
    c->local_batch = g_ascii_strtoull (local, NULL, 10);
  if (schedule != NULL) {
    if (g_str_equal (schedule, "1F1B"))
      item (m, "schedule", "1f1b");
    else if (g_str_equal (schedule, "Interleaved1F1B"))
      item (m, "schedule", "interleaved");
    else if (g_str_equal (schedule, "GPipe"))
      item (m, "schedule", "gpipe");
    else if (g_str_equal (schedule, "ZBVZeroBubble"))
      item (m, "schedule", "zb-v");
    else if (g_str_equal (schedule, "DualPipeV"))
      item (m, "schedule", "dualpipe-v");
    else
      unmapped (m, "parallelism.pipeline_parallel_schedule", "a schedule sim does not model (it has GPipe, 1F1B, "
                                                             "Interleaved1F1B, ZBVZeroBubble, DualPipeV)");
  }
  if (is_true (take (m, "parallelism.enable_async_tensor_parallel")))
    item (m, "tp-comm-overlap", "true");
  if (compile != NULL)
    item (m, "torch-compile", is_true (compile) ? "true" : "false");
  if (mode != NULL) {
    if (g_str_equal (mode, "none") || g_str_equal (mode, "full"))
      item (m, "recompute", mode);
    else if (g_str_equal (mode, "selective") && (option == NULL || g_str_equal (option, "op")))
      item (m, "recompute", "selective");
    else if (g_str_equal (mode, "selective")) {
      /* every k-th block recomputed whole (_apply_layer_sac) */
      item (m, "recompute", "full");
      item (m, "recompute-method", "every");
      item (m, "recompute-num-layers", option);
    } else
      unmapped (m, "activation_checkpoint.mode", "expected none, selective or full");
  }
  if (converters != NULL && strstr (converters, "float8") != NULL) {
    const char *recipe = take (m, "float8.recipe_name");
    item (m, "fp8", "hybrid");
    item (m, "fp8-recipe", recipe != NULL && g_str_has_prefix (recipe, "rowwise") ? "blockwise" : "tensorwise");
    item (m, "fp8-params", is_true (take (m, "float8.enable_fsdp_float8_all_gather")) ? "true" : "false");
  }
  {
    static const char *const ignored[] = { "job.", "profiling.", "metrics.", "optimizer.", "lr_scheduler.",
                                           "checkpoint.", "validation.", "comm.", "memory_estimation.",
                                           "fault_tolerance.", "experimental.", "model.tokenizer_path",
                                           "model.hf_assets_path", "model.converters", "training.max_norm",
                                           "training.steps", "training.dataset", "training.dataset_path",
                                           "training.seed", "training.deterministic", "training.dtype",
                                           "training.mixed_precision_param", "training.mixed_precision_reduce",
                                           "compile.components", "float8.", "activation_checkpoint.", NULL };
    ignore (m, ignored);
  }
  return TRUE;
}

/* which layers full recomputation takes: Megatron-Core's recompute_method
 * and recompute_num_layers (NeMo 1's activations_checkpoint_method and
 * _num_layers), which it reads only under recompute_granularity full
 * (full FALSE: read and left, as Megatron-Core leaves them) */
static void
map_recompute_method (Map *m, const char *model, gboolean full)
{
  static const char *const methods[] = { "recompute_method", "activations_checkpoint_method" };
  static const char *const counts[] = { "recompute_num_layers", "activations_checkpoint_num_layers" };
  for (guint i = 0; i < G_N_ELEMENTS (methods); i++) {
    g_autofree char *key = g_strdup_printf ("%s.%s", model, methods[i]);
    g_autofree char *nkey = g_strdup_printf ("%s.%s", model, counts[i]);
    const char *v = take (m, key), *n = take (m, nkey);
    if (!full)
      continue;
    if (v != NULL && (g_str_equal (v, "uniform") || g_str_equal (v, "block")))
      item (m, "recompute-method", v);
    else if (v != NULL && !g_str_equal (v, "null"))
      unmapped (m, key, "expected uniform or block");
    if (n != NULL && !g_str_equal (n, "null"))
      item (m, "recompute-num-layers", n);
  }
}

/* NeMo's megatron_gpt config and Megatron-Bridge's ConfigContainer share
 * the Megatron-Core names under model: */
static void
map_megatron_model (Map *m, const char *model)
{
  static const struct {
    const char *key, *option;
  } names[] = {
    { "tensor_model_parallel_size", "tp" }, { "pipeline_model_parallel_size", "pp" },
    { "context_parallel_size", "cp" }, { "expert_model_parallel_size", "ep" },
    { "expert_tensor_parallel_size", "etp" }, { "virtual_pipeline_model_parallel_size", "virtual-stages" },
    { "micro_batch_size", "micro-batch" }, { "global_batch_size", "global-batch" },
    { "sequence_parallel", "sequence-parallel" }, { "seq_length", "seq-len" }, { "encoder_seq_length", "seq-len" },
    { "recompute_granularity", "recompute" }, { "activations_checkpoint_granularity", "recompute" },
    { "fp8_recipe", "fp8-recipe" }, { "fp8_param", "fp8-params" }, { "fp8_params", "fp8-params" },
    { "tp_comm_overlap", "tp-comm-overlap" }, { "ub_tp_comm_overlap", "tp-comm-overlap" },
    { "num_layers_in_first_pipeline_stage", "first-stage-layers" },
    { "num_layers_in_last_pipeline_stage", "last-stage-layers" },
    { "account_for_embedding_in_pipeline_split", "account-for-embedding-in-pipeline-split" },
    { "account_for_loss_in_pipeline_split", "account-for-loss-in-pipeline-split" },
  };
  static const char *const describes[] = { "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads",
                                           "num_query_groups", "kv_channels", "max_position_embeddings",
                                           "position_embedding_type", "activation", "normalization", "bias",
                                           "share_embeddings_and_output_weights", "vocab_size",
                                           "make_vocab_size_divisible_by", "num_moe_experts", "moe_router_topk",
                                           "gated_linear_unit", "add_bias_linear", "untie_embeddings_and_output_weights",
                                           NULL };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    g_autofree char *key = g_strdup_printf ("%s.%s", model, names[i].key);
    const char *v = take (m, key);
    if (v == NULL)
      continue;
    if (g_str_equal (names[i].option, "virtual-stages")) {
      item (m, "schedule", "interleaved");
      item (m, "virtual-stages", v);
    } else if (g_str_equal (names[i].option, "recompute")) {
      item (m, "recompute", g_str_equal (v, "full") || g_str_equal (v, "selective") ? v : "none");
      map_recompute_method (m, model, g_str_equal (v, "full"));
    } else if (g_str_equal (names[i].option, "sequence-parallel") || g_str_equal (names[i].option, "fp8-params") ||
               g_str_equal (names[i].option, "tp-comm-overlap") ||
               g_str_has_prefix (names[i].option, "account-for")) {
      item (m, names[i].option, is_true (v) ? "true" : "false");
    } else {
      item (m, names[i].option, v);
    }
  }
  {
    g_autofree char *key = g_strdup_printf ("%s.fp8", model);
    const char *v = take (m, key);
    /* NeMo: fp8: true with fp8_e4m3 / fp8_hybrid; Megatron-Core: fp8:
     * hybrid | e4m3 */
    if (v != NULL && (g_str_equal (v, "hybrid") || g_str_equal (v, "e4m3")))
      item (m, "fp8", v);
    else if (is_true (v)) {
      g_autofree char *e4m3 = g_strdup_printf ("%s.fp8_e4m3", model);
      item (m, "fp8", is_true (take (m, e4m3)) ? "e4m3" : "hybrid");
    }
  }
  for (guint i = 0; describes[i] != NULL; i++) {
    g_autofree char *key = g_strdup_printf ("%s.%s", model, describes[i]);
    unmapped (m, key, "describes the model, which --model gives");
  }
  {
    g_autofree char *key = g_strdup_printf ("%s.recompute_modules", model);
    const char *v = take (m, key);
    if (v != NULL) {
      g_autofree char *joined = g_strdelimit (g_strdup (v), ",", '+');
      item (m, "recompute-modules", joined);
    }
  }
}

static gboolean
map_nemo (Map *m)
{
  const char *precision = take (m, "trainer.precision");
  const char *optim = take (m, "model.optim.name");
  map_megatron_model (m, "model");
  if (optim != NULL)
    item (m, "zero", g_str_has_prefix (optim, "distributed_fused_adam") ? "1" : "0");
  if (take (m, "model.optim.overlap_grad_sync") != NULL)
    item (m, "overlap-grad-reduce", is_true (take (m, "model.optim.overlap_grad_sync")) ? "true" : "false");
  if (take (m, "model.optim.overlap_param_sync") != NULL)
    item (m, "overlap-param-gather", is_true (take (m, "model.optim.overlap_param_sync")) ? "true" : "false");
  /* the distributed optimizer's gradient synchronisation dtype (Apex
   * DistributedFusedAdam's grad_sync_dtype, which NeMo's
   * distributed_fused_adam passes through) */
  if (take (m, "model.optim.grad_sync_dtype") != NULL) {
    const char *v = take (m, "model.optim.grad_sync_dtype");
    item (m, "grad-reduce-in-fp32", strstr (v, "32") != NULL ? "true" : "false");
  }
  if (precision != NULL && strstr (precision, "bf16") == NULL)
    unmapped (m, "trainer.precision", "sim trains in bf16 (or FP8): fp16 and fp32 are not modelled");
  {
    static const char *const ignored[] = { "name", "trainer.", "exp_manager.", "model.optim.", "model.data.",
                                           "model.tokenizer.", "model.nsys_profile.", "model.", "restore_from_path",
                                           NULL };
    ignore (m, ignored);
  }
  return TRUE;
}

static gboolean
map_bridge (Map *m)
{
  const char *mp = take (m, "mixed_precision");
  const char *dist = take (m, "ddp.use_distributed_optimizer");
  map_megatron_model (m, "model");
  same (m, "train.micro_batch_size", "micro-batch");
  same (m, "train.global_batch_size", "global-batch");
  same (m, "dataset.sequence_length", "seq-len");
  if (dist != NULL)
    item (m, "zero", is_true (dist) ? "1" : "0");
  if (take (m, "ddp.overlap_grad_reduce") != NULL)
    item (m, "overlap-grad-reduce", is_true (take (m, "ddp.overlap_grad_reduce")) ? "true" : "false");
  if (take (m, "ddp.overlap_param_gather") != NULL)
    item (m, "overlap-param-gather", is_true (take (m, "ddp.overlap_param_gather")) ? "true" : "false");
  if (take (m, "ddp.grad_reduce_in_fp32") != NULL)
    item (m, "grad-reduce-in-fp32", is_true (take (m, "ddp.grad_reduce_in_fp32")) ? "true" : "false");
  if (take (m, "comm_overlap.tp_comm_overlap") != NULL)
    item (m, "tp-comm-overlap", is_true (take (m, "comm_overlap.tp_comm_overlap")) ? "true" : "false");
  /* the recipes' precision configs by name (megatron/bridge/training/
   * mixed_precision.py): bf16_mixed, bf16_with_fp8_*_mixed */
  if (mp != NULL) {
    if (strstr (mp, "fp8") != NULL) {
      item (m, "fp8", "hybrid");
      item (m, "fp8-recipe", strstr (mp, "current") != NULL ? "current" : strstr (mp, "mxfp8") != NULL ? "mxfp8"
                             : strstr (mp, "subchannel") != NULL || strstr (mp, "block") != NULL ? "blockwise"
                                                                                                 : "delayed");
    } else if (strstr (mp, "bf16") == NULL)
      unmapped (m, "mixed_precision", "sim trains in bf16 (or FP8): fp16 and fp32 are not modelled");
  } else {
    const char *fp8 = take (m, "mixed_precision.fp8");
    if (fp8 != NULL && (g_str_equal (fp8, "hybrid") || g_str_equal (fp8, "e4m3")))
      item (m, "fp8", fp8);
    same (m, "mixed_precision.fp8_recipe", "fp8-recipe");
  }
  {
    static const char *const ignored[] = { "optimizer.", "scheduler.", "logger.", "checkpoint.", "tokenizer.",
                                           "rng.", "profiling.", "dist.", "rerun_state_machine.", "straggler.",
                                           "ft.", "nvrx_straggler.", "dataset.", "train.", "ddp.", "comm_overlap.",
                                           "mixed_precision.", "model.", "peft", "inprocess_restart.", NULL };
    ignore (m, ignored);
  }
  return TRUE;
}

SimConfig *
sim_config_load (const char *path, GError **error)
{
  g_autoptr (SimConfig) c = g_new0 (SimConfig, 1);
  g_autoptr (GPtrArray) entries = g_ptr_array_new_with_free_func (entry_free);
  g_autofree char *text = NULL;
  gsize len = 0;
  Map m = { path, entries, c, error };
  c->path = g_strdup (path);
  c->items = g_ptr_array_new_with_free_func (g_free);
  c->ignored = g_ptr_array_new_with_free_func (g_free);
  c->unmapped = g_ptr_array_new_with_free_func (g_free);
  if (!sim_input_read (path, CONFIG_MAX_BYTES, &text, &len, error))
    return NULL;
  if (memchr (text, '\0', len) != NULL || !g_utf8_validate (text, (gssize) len, NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected a TOML or YAML text file (UTF-8)", path);
    return NULL;
  }
  if (g_str_has_suffix (path, ".toml")) {
    c->format = g_strdup ("torchtitan TOML");
    if (!read_toml (path, text, entries, error) || !map_torchtitan (&m))
      return NULL;
  } else {
    if (!read_yaml (path, text, entries, error))
      return NULL;
    if (find (&m, "trainer") != NULL && find (&m, "model") != NULL) {
      c->format = g_strdup ("NeMo YAML");
      if (!map_nemo (&m))
        return NULL;
    } else if (find (&m, "model") != NULL &&
               (find (&m, "train") != NULL || find (&m, "ddp") != NULL || find (&m, "dataset") != NULL)) {
      c->format = g_strdup ("Megatron-Bridge YAML");
      if (!map_bridge (&m))
        return NULL;
    } else {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s: expected a torchtitan TOML (.toml), a NeMo YAML (trainer: and model:) or a Megatron-Bridge "
                   "YAML (model: with train:, ddp: or dataset:)", path);
      return NULL;
    }
  }
  leftover (&m);
  return g_steal_pointer (&c);
}

void
sim_config_free (SimConfig *c)
{
  if (c == NULL)
    return;
  g_free (c->path);
  g_free (c->format);
  g_free (c->model);
  g_clear_pointer (&c->items, g_ptr_array_unref);
  g_clear_pointer (&c->ignored, g_ptr_array_unref);
  g_clear_pointer (&c->unmapped, g_ptr_array_unref);
  g_free (c);
}

gboolean
sim_config_apply (const SimConfig *c, SimPlanRequest *req, int gpus, GError **error)
{
  for (guint i = 0; i < c->items->len; i++) {
    const char *it = g_ptr_array_index (c->items, i);
    const char *eq = strchr (it, '=');
    g_autofree char *key = g_strndup (it, (gsize) (eq - it));
    if (sim_plan_request_given (req, key))
      continue;
    if (!sim_plan_request_set (req, key, eq + 1, NULL, error)) {
      g_prefix_error (error, "%s: ", c->path);
      return FALSE;
    }
  }
  /* torchtitan's data_parallel_shard_degree -1: the rest of the GPUs, and
   * the global batch that follows (the local batch on each of them) */
  if (c->dp_rest > 0 && !sim_plan_request_given (req, "dp")) {
    int model_gpus = (int) (MAX (sim_plan_request_value (req, "tp"), 1) *
                            MAX (sim_plan_request_value (req, "cp"), 1) *
                            MAX (sim_plan_request_value (req, "pp"), 1));
    if (gpus % model_gpus == 0) {
      g_autofree char *dp = g_strdup_printf ("%d", gpus / model_gpus);
      if (!sim_plan_request_set (req, "dp", dp, NULL, error))
        return FALSE;
    }
  }
  if (c->local_batch > 0 && !sim_plan_request_given (req, "global-batch") &&
      sim_plan_request_value (req, "dp") > 0) {
    guint64 gb = c->local_batch * (guint64) sim_plan_request_value (req, "dp");
    g_autofree char *text = g_strdup_printf ("%" G_GUINT64_FORMAT, gb);
    if (!sim_plan_request_set (req, "global-batch", text, NULL, error))
      return FALSE;
  }
  return TRUE;
}

/* names, at most `max` of them, then how many more */
static char *
some (GPtrArray *names, guint max)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < names->len && i < max; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", (const char *) g_ptr_array_index (names, i));
  if (names->len > max)
    g_string_append_printf (s, " and %u more", names->len - max);
  return g_string_free (s, FALSE);
}

GPtrArray *
sim_config_notes (const SimConfig *c, const SimPlan *plan)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) set = g_string_new (NULL);
  if (c->model != NULL)
    g_string_append_printf (set, "--model %s", c->model);
  {
    /* each key once, as the flags that set it */
    g_autoptr (GPtrArray) once = g_ptr_array_new ();
    g_autofree char *text = NULL, *flags = NULL;
    for (guint i = 0; i < c->items->len; i++) {
      const char *it = g_ptr_array_index (c->items, i);
      gsize n = (gsize) (strchr (it, '=') - it);
      gboolean later = FALSE;
      for (guint k = i + 1; k < c->items->len && !later; k++)
        later = strncmp (g_ptr_array_index (c->items, k), it, n + 1) == 0;
      if (!later)
        g_ptr_array_add (once, (gpointer) it);
    }
    g_ptr_array_add (once, NULL);
    text = g_strjoinv (",", (char **) once->pdata);
    flags = sim_plan_string_flags (text, NULL);
    if (flags != NULL && *flags != '\0')
      g_string_append_printf (set, "%s%s", set->len > 0 ? " " : "", flags);
  }
  if (c->dp_rest > 0 && plan != NULL)
    g_string_append_printf (set, "%s--dp %d (the rest of the GPUs)", set->len > 0 ? " " : "", plan->dp);
  if (c->local_batch > 0 && plan != NULL)
    g_string_append_printf (set, "%s--global-batch %" G_GUINT64_FORMAT " (local batch %" G_GUINT64_FORMAT
                                 " x dp %d)", set->len > 0 ? " " : "", plan->global_batch, c->local_batch, plan->dp);
  g_ptr_array_add (out, g_strdup_printf ("--config %s (%s) sets, where no flag does: %s", c->path, c->format,
                                         set->len > 0 ? set->str : "nothing"));
  {
    /* grouped by why: "key = value: why" */
    g_autoptr (GPtrArray) whys = g_ptr_array_new ();
    for (guint i = 0; i < c->unmapped->len; i++) {
      const char *u = g_ptr_array_index (c->unmapped, i);
      const char *why = strstr (u, ": ");
      gboolean seen = FALSE;
      for (guint k = 0; k < whys->len && why != NULL; k++)
        seen |= g_str_equal (g_ptr_array_index (whys, k), why + 2);
      if (why != NULL && !seen)
        g_ptr_array_add (whys, (gpointer) (why + 2));
    }
    for (guint k = 0; k < whys->len; k++) {
      g_autoptr (GString) keys = g_string_new (NULL);
      for (guint i = 0; i < c->unmapped->len; i++) {
        const char *u = g_ptr_array_index (c->unmapped, i);
        const char *why = strstr (u, ": ");
        if (why != NULL && g_str_equal (why + 2, g_ptr_array_index (whys, k)))
          g_string_append_printf (keys, "%s%.*s", keys->len > 0 ? ", " : "", (int) (why - u), u);
      }
      g_ptr_array_add (out, g_strdup_printf ("not modelled from the config (%s): %s",
                                             (const char *) g_ptr_array_index (whys, k), keys->str));
    }
  }
  if (c->ignored->len > 0) {
    g_autofree char *names = some (c->ignored, 6);
    g_ptr_array_add (out, g_strdup_printf ("read from the config, no effect on the step: %s", names));
  }
  return out;
}
