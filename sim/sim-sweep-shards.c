/* sim-sweep-shards.c — a sweep's rows as a sim-sweep/3 JSON file, and
 * shard files read back, checked and merged (sim-sweep.h) */
#include "sim-sweep.h"
#include "sim-sweep-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim-error.h"
#include "sim-input.h"
#include "sim-json.h"
#include "sim-json-read.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "sim-run.h"

typedef SimSweepRow Row;

/* the options text "k=v,k=v" as an object, each value a whole number
 * where it is one (digits, no leading zero), else a string; a piece
 * without "=" belongs to the value before it (a file name with a comma).
 * read_options joins it back into the same text. */
static void
json_options (SimJson *j, const char *options)
{
  g_auto (GStrv) parts = g_strsplit (options, ",", -1);
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) values = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; options[0] != '\0' && parts[i] != NULL; i++) {
    const char *eq = strchr (parts[i], '=');
    if (eq == NULL && values->len > 0) {
      char *v = g_ptr_array_index (values, values->len - 1);
      values->pdata[values->len - 1] = g_strconcat (v, ",", parts[i], NULL);
      g_free (v);
      continue;
    }
    g_ptr_array_add (keys, eq != NULL ? g_strndup (parts[i], (gsize) (eq - parts[i])) : g_strdup (parts[i]));
    g_ptr_array_add (values, g_strdup (eq != NULL ? eq + 1 : ""));
  }
  sim_json_begin_object (j, "options");
  for (guint i = 0; i < keys->len; i++) {
    const char *k = g_ptr_array_index (keys, i), *v = g_ptr_array_index (values, i);
    gboolean whole = v[0] != '\0' && strspn (v, "0123456789") == strlen (v) && (v[0] != '0' || v[1] == '\0') &&
                     strlen (v) <= 15;
    if (whole)
      sim_json_uint (j, k, g_ascii_strtoull (v, NULL, 10));
    else
      sim_json_string (j, k, v);
  }
  sim_json_end_object (j);
}

char *
sim_sweep_write_json (GPtrArray *rows, const char *topo, const char *model, const char *options,
                      guint layouts, int shard, int shards)
{
  SimJson j;
  /* borrowed rows (a copy would take over their free function) */
  g_autoptr (GPtrArray) order = g_ptr_array_sized_new (rows->len);
  int rank = 0;
  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add (order, g_ptr_array_index (rows, i));
  /* a whole sweep in the table's order, ranked as it ranks (the rows with a
   * time by tokens/s, those that fit first, then the rest by index); a
   * shard's rows by index, unranked: only the merge can rank them */
  if (shards == 1)
    sim_run_summaries_rank (order);
  sim_json_init (&j, TRUE);
  sim_json_begin_object (&j, NULL);
  sim_json_string (&j, "schema", "sim-sweep/3");
  sim_json_string (&j, "topology", topo);
  sim_json_string (&j, "model", model);
  json_options (&j, options);
  sim_json_uint (&j, "layouts", layouts);
  sim_json_int (&j, "shard", shard);
  sim_json_int (&j, "shards", shards);
  sim_json_begin_array (&j, "rows");
  for (guint i = 0; i < order->len; i++) {
    const Row *r = g_ptr_array_index (order, i);
    sim_json_begin_object (&j, NULL);
    if (shards == 1 && r->has_time)
      sim_json_int (&j, "rank", ++rank);
    else
      sim_json_null (&j, "rank");
    sim_json_int (&j, "index", r->index);
    sim_json_string (&j, "plan", r->label);
    sim_json_int (&j, "nodes", r->nodes);
    sim_json_int (&j, "gpus", r->gpus);
    sim_json_string (&j, "pruned", r->pruned);
    sim_report_summary_json (&j, r);
    sim_json_end_object (&j);
  }
  sim_json_end_array (&j);
  sim_json_end_object (&j);
  return sim_json_finish (&j);
}

char *
sim_sweep_rows_json (GPtrArray *rows, const char *topo, const char *model, int shard, int shards)
{
  return sim_sweep_write_json (rows, topo, model, "", rows->len, shard, shards);
}

/* One shard file, checked on its own. */
typedef struct {
  char *topology, *model, *options;
  int exact_top; /* the options' exact-top when a count, else 0 */
  guint layouts;
  int shard, shards;
  GPtrArray *rows; /* Row*, owned */
} Shard;

static void
shard_free (Shard *sh)
{
  g_free (sh->topology);
  g_free (sh->model);
  g_free (sh->options);
  g_clear_pointer (&sh->rows, g_ptr_array_unref);
  g_free (sh);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Shard, shard_free)

/* the largest layout count and shard count a file may claim: far above any
 * sweep, low enough that no count overflows an int */
#define MAX_COUNT ((double) (1 << 30))

/* one line of bounded length: the message may quote anything a file held */
static char *
one_line (const char *msg)
{
  g_autofree char *valid = g_utf8_make_valid (msg, -1);
  GString *out = g_string_new (NULL);
  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p)) {
    gunichar c = g_utf8_get_char (p);
    if (out->len >= 300) {
      g_string_append (out, "...");
      break;
    }
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029)
      g_string_append_c (out, '?');
    else
      g_string_append_unichar (out, c);
  }
  return g_string_free (out, FALSE);
}

/* a string from a file, short enough to quote in a message */
static char *
quoted (const char *s)
{
  if (s == NULL)
    return g_strdup ("null");
  if (g_utf8_validate (s, -1, NULL) && g_utf8_strlen (s, -1) > 60) {
    g_autofree char *head = g_utf8_substring (s, 0, 57);
    return g_strdup_printf ("'%s...'", head);
  }
  return g_strdup_printf ("'%.60s'", s);
}

static gboolean refuse (GError **error, const char *path, int line, const char *fmt, ...)
    G_GNUC_PRINTF (4, 5);

/* "PATH:LINE: expected ..." (line 0: "PATH: expected ...") */
static gboolean
refuse (GError **error, const char *path, int line, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *what = NULL, *msg = NULL, *shown = NULL;
  va_start (ap, fmt);
  what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  msg = line > 0 ? g_strdup_printf ("%s:%d: expected %s", path, line, what)
                 : g_strdup_printf ("%s: expected %s", path, what);
  shown = one_line (msg);
  g_set_error_literal (error, SIM_ERROR, SIM_ERROR_USAGE, shown);
  return FALSE;
}

static const char *
type_name (SimJsonType t)
{
  static const char *names[] = { "null",     "true or false", "a number",
                                 "a string", "an array",      "an object" };
  return names[t];
}

/* member key of o, of type t (or null where null_ok), else an error on o's
 * line (a missing member) or the member's (a wrong type) */
static const SimJsonValue *
member (const SimJsonValue *o, const char *key, SimJsonType t, gboolean null_ok, const char *path,
        GError **error)
{
  const SimJsonValue *v = sim_json_get (o, key);
  if (v == NULL)
    refuse (error, path, o->line, "a member \"%s\" (%s%s)", key, type_name (t),
            null_ok ? " or null" : "");
  else if (v->type != t && !(null_ok && v->type == SIM_JNULL))
    refuse (error, path, v->line, "\"%s\" to be %s%s, not %s", key, type_name (t),
            null_ok ? " or null" : "", type_name (v->type));
  else
    return v;
  return NULL;
}

/* a number member, finite (the reader sees to that) and at least 0 */
static gboolean
amount (const SimJsonValue *o, const char *key, const char *path, double *out, GError **error)
{
  const SimJsonValue *v = member (o, key, SIM_JNUMBER, FALSE, path, error);
  if (v == NULL)
    return FALSE;
  if (v->number < 0)
    return refuse (error, path, v->line, "\"%s\" to be at least 0", key);
  *out = v->number;
  return TRUE;
}

/* a whole number member in [lo, hi] */
static gboolean
count (const SimJsonValue *o, const char *key, double lo, double hi, const char *path, guint64 *out,
       GError **error)
{
  const SimJsonValue *v = member (o, key, SIM_JNUMBER, FALSE, path, error);
  if (v == NULL)
    return FALSE;
  if (v->number != floor (v->number) || v->number < lo || v->number > hi)
    return refuse (error, path, v->line, "\"%s\" to be a whole number from %.0f to %.0f", key, lo,
                   hi);
  *out = (guint64) v->number;
  return TRUE;
}

static gboolean
flag (const SimJsonValue *o, const char *key, const char *path, gboolean *out, GError **error)
{
  const SimJsonValue *v = member (o, key, SIM_JBOOL, FALSE, path, error);
  if (v == NULL)
    return FALSE;
  *out = v->boolean;
  return TRUE;
}

/* a string member (NULL for null where null_ok), duplicated into *out */
static gboolean
text (const SimJsonValue *o, const char *key, gboolean null_ok, const char *path, char **out,
      GError **error)
{
  const SimJsonValue *v = member (o, key, SIM_JSTRING, null_ok, path, error);
  if (v == NULL)
    return FALSE;
  g_free (*out);
  *out = g_strdup (v->string);
  return TRUE;
}

/* the members a row has when it was simulated, and only then */
static const char *const time_keys[] = {
  "screened",        "step_s",       "tokens_per_s", "mfu", "mfu_gemm_peak", "gemm_precision", "error_band", "tie",
  "bubble_fraction", "compute_s",    "exposed_tp_s", "exposed_cp_s",
  "exposed_pp_s",    "exposed_dp_s", "exposed_ep_s", "wall",
  "scaling_efficiency"
};

/* the time of a simulated row */
static gboolean
read_time (const SimJsonValue *o, const char *path, Row *r, GError **error)
{
  struct {
    const char *key;
    double *to;
  } nums[] = { { "step_s", &r->step_s },
               { "tokens_per_s", &r->tokens_per_s },
               { "mfu", &r->mfu },
               { "mfu_gemm_peak", &r->mfu_gemm },
               { "error_band", &r->band },
               { "bubble_fraction", &r->bubble },
               { "compute_s", &r->compute_s },
               { "exposed_tp_s", &r->tp_s },
               { "exposed_cp_s", &r->cp_s },
               { "exposed_pp_s", &r->pp_s },
               { "exposed_dp_s", &r->dp_s },
               { "exposed_ep_s", &r->ep_s } };
  const SimJsonValue *e;
  for (guint i = 0; i < G_N_ELEMENTS (nums); i++)
    if (!amount (o, nums[i].key, path, nums[i].to, error))
      return FALSE;
  /* the ranking divides by these */
  if (r->step_s <= 0 || r->tokens_per_s <= 0 || r->gpus < 1)
    return refuse (error, path, o->line,
                   "a simulated row to have a positive \"step_s\", \"tokens_per_s\" and \"gpus\"");
  {
    g_autofree char *precision = NULL;
    if (!text (o, "gemm_precision", FALSE, path, &precision, error))
      return FALSE;
    r->gemm_precision = g_str_equal (precision, "fp8")    ? "fp8"
                        : g_str_equal (precision, "fp4")  ? "fp4"
                        : g_str_equal (precision, "bf16") ? "bf16"
                                                          : NULL;
    if (r->gemm_precision == NULL)
      return refuse (error, path, sim_json_get (o, "gemm_precision")->line,
                     "\"gemm_precision\" to be \"bf16\", \"fp8\" or \"fp4\"");
  }
  /* recomputed by the merge's ranking; only its type is checked */
  if (!flag (o, "tie", path, &r->tie, error))
    return FALSE;
  if (!flag (o, "screened", path, &r->screened, error) ||
      !text (o, "wall", FALSE, path, &r->wall, error))
    return FALSE;
  /* recomputed over all the shards; only its type is checked */
  e = member (o, "scaling_efficiency", SIM_JNUMBER, TRUE, path, error);
  if (e == NULL)
    return FALSE;
  if (e->type == SIM_JNUMBER && e->number < 0)
    return refuse (error, path, e->line, "\"scaling_efficiency\" to be at least 0");
  r->has_time = r->simulated = TRUE;
  return TRUE;
}

/* "status": fits, tight or oom */
static gboolean
read_status (const SimJsonValue *o, const char *path, Row *r, GError **error)
{
  g_autofree char *s = NULL;
  if (!text (o, "status", FALSE, path, &s, error))
    return FALSE;
  if (!g_str_equal (s, "fits") && !g_str_equal (s, "tight") && !g_str_equal (s, "oom"))
    return refuse (error, path, sim_json_get (o, "status")->line,
                   "\"status\" to be \"fits\", \"tight\" or \"oom\"");
  r->fits = !g_str_equal (s, "oom");
  r->tight = g_str_equal (s, "tight");
  return TRUE;
}

/* the rank: a whole number from 1 or null in a whole sweep's file, null
 * in a shard of several (the merge ranks; it recomputes every rank, so
 * only the type is checked) */
static gboolean
read_rank (const SimJsonValue *o, const Shard *sh, const char *path, GError **error)
{
  const SimJsonValue *v = member (o, "rank", SIM_JNUMBER, TRUE, path, error);
  if (v == NULL)
    return FALSE;
  if (v->type == SIM_JNUMBER && sh->shards > 1)
    return refuse (error, path, v->line, "\"rank\" to be null in one shard of several");
  if (v->type == SIM_JNUMBER && (v->number < 1 || v->number != floor (v->number)))
    return refuse (error, path, v->line, "\"rank\" to be a whole number from 1, or null");
  return TRUE;
}

/* one row of sh, checked member by member */
static Row *
read_row (const SimJsonValue *o, const Shard *sh, const char *path, GError **error)
{
  g_autoptr (SimRunSummary) r = NULL;
  g_autoptr (SimPlanRequest) plan = sim_plan_request_new ();
  g_autoptr (GError) why = NULL;
  g_autofree char *label = NULL;
  guint64 index = 0, nodes = 0, gpus = 0;
  gboolean timed;

  if (o->type != SIM_JOBJECT) {
    refuse (error, path, o->line, "each row to be an object, not %s", type_name (o->type));
    return NULL;
  }
  if (!read_rank (o, sh, path, error) || !count (o, "index", 0, MAX_COUNT, path, &index, error) ||
      !text (o, "plan", FALSE, path, &label, error) ||
      !count (o, "nodes", 1, 65536, path, &nodes, error) ||
      !count (o, "gpus", 0, MAX_COUNT, path, &gpus, error))
    return NULL;
  if (index >= sh->layouts || index % (guint64) sh->shards != (guint64) (sh->shard - 1)) {
    refuse (
        error, path, sim_json_get (o, "index")->line,
        "\"index\" to be a layout of shard %d of %d (below %u, %d more than a multiple of %d), not %" G_GUINT64_FORMAT,
        sh->shard, sh->shards, sh->layouts, sh->shard - 1, sh->shards, index);
    return NULL;
  }
  /* the label is shown as the layout and run again by whoever reads the
   * table: it must be a plan sim itself would accept */
  if (label[0] == '\0' || !sim_plan_request_parse_string (plan, label, &why)) {
    g_autofree char *q = quoted (label);
    refuse (error, path, sim_json_get (o, "plan")->line, "\"plan\" to be a plan string, not %s%s%s",
            q, why != NULL ? ": " : "", why != NULL ? why->message : "");
    return NULL;
  }
  r = sim_run_summary_new ((int) index, label, (int) nodes);
  r->gpus = (int) gpus;
  if (!text (o, "pruned", TRUE, path, &r->pruned, error) ||
      !read_status (o, path, r, error) ||
      !text (o, "oom_case", TRUE, path, &r->oom_case, error) ||
      !count (o, "peak_bytes", 0, 18446744073709549568.0, path, &r->peak_bytes, error) ||
      !count (o, "usable_bytes", 0, 18446744073709549568.0, path, &r->usable_bytes, error))
    return NULL;
  if (r->oom_case != NULL && !(g_str_equal (r->oom_case, "A") || g_str_equal (r->oom_case, "B") ||
                               g_str_equal (r->oom_case, "C"))) {
    refuse (error, path, sim_json_get (o, "oom_case")->line,
            "\"oom_case\" to be \"A\", \"B\", \"C\" or null");
    return NULL;
  }
  /* a row is pruned, or simulated with a time, never both nor neither */
  timed = sim_json_get (o, "step_s") != NULL;
  if (timed == (r->pruned != NULL) || (timed && !r->fits)) {
    refuse (
        error, path, o->line,
        "a row either pruned (\"pruned\" a string) or simulated (fits, \"step_s\" and the rest), not %s",
        timed ? "both" : "neither");
    return NULL;
  }
  if (timed && !read_time (o, path, r, error))
    return NULL;
  if (!timed)
    for (guint i = 0; i < G_N_ELEMENTS (time_keys); i++)
      if (sim_json_get (o, time_keys[i]) != NULL) {
        refuse (error, path, sim_json_get (o, time_keys[i])->line,
                "no \"%s\" in a row without \"step_s\"", time_keys[i]);
        return NULL;
      }
  /* the request parsed above, carried as a value; a pruned row, as a
   * sweep's, keeps only its global batch (it is never run again) */
  sim_run_summary_set_request (r, g_steal_pointer (&plan));
  if (r->pruned != NULL)
    g_clear_pointer (&r->request, sim_plan_request_free);
  return g_steal_pointer (&r);
}

/* the "options" object back into the text json_options wrote, and its
 * exact-top (sim_sweep_options_text) when a count, else 0 */
static gboolean
read_options (const SimJsonValue *doc, const char *path, char **out, int *exact_top, GError **error)
{
  const SimJsonValue *o = member (doc, "options", SIM_JOBJECT, FALSE, path, error);
  GString *s = g_string_new (NULL);
  if (o == NULL) {
    g_string_free (s, TRUE);
    return FALSE;
  }
  for (guint i = 0; i < o->keys->len; i++) {
    const SimJsonValue *v = g_ptr_array_index (o->items, i);
    const char *k = g_ptr_array_index (o->keys, i);
    g_string_append_printf (s, "%s%s=", i > 0 ? "," : "", k);
    if (g_str_equal (k, "exact-top") && v->type == SIM_JNUMBER && v->number >= 1 &&
        v->number == floor (v->number) && v->number <= G_MAXINT)
      *exact_top = (int) v->number;
    if (v->type == SIM_JSTRING)
      g_string_append (s, v->string);
    else if (v->type == SIM_JNUMBER && v->number >= 0 && v->number == floor (v->number) && v->number < 1e15)
      g_string_append_printf (s, "%" G_GUINT64_FORMAT, (guint64) v->number);
    else {
      g_string_free (s, TRUE);
      return refuse (error, path, v->line, "\"options\" values to be strings or whole numbers");
    }
  }
  g_free (*out);
  *out = g_string_free (s, FALSE);
  return TRUE;
}

/* the header of a shard file: what its sweep was and which shard */
static gboolean
read_header (const SimJsonValue *doc, const char *path, Shard *sh, GError **error)
{
  const SimJsonValue *schema = sim_json_get (doc, "schema");
  guint64 layouts = 0, shard = 0, shards = 0;
  if (doc->type != SIM_JOBJECT || schema == NULL || schema->type != SIM_JSTRING ||
      !g_str_equal (schema->string, "sim-sweep/3"))
    return refuse (error, path,
                   doc->type == SIM_JOBJECT && schema != NULL ? schema->line : doc->line,
                   "the JSON of sim sweep --json (schema sim-sweep/3)");
  if (!text (doc, "topology", FALSE, path, &sh->topology, error) ||
      !text (doc, "model", FALSE, path, &sh->model, error) ||
      !read_options (doc, path, &sh->options, &sh->exact_top, error) ||
      !count (doc, "layouts", 0, MAX_COUNT, path, &layouts, error) ||
      !count (doc, "shards", 1, MAX_COUNT, path, &shards, error) ||
      !count (doc, "shard", 1, (double) shards, path, &shard, error))
    return FALSE;
  sh->layouts = (guint) layouts;
  sh->shard = (int) shard;
  sh->shards = (int) shards;
  return TRUE;
}

/* one shard file's text, checked on its own */
static Shard *
read_shard (const char *path, const char *text, GError **error)
{
  g_autoptr (SimJsonValue) doc = sim_json_parse (path, text, error);
  g_autoptr (Shard) sh = g_new0 (Shard, 1);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  const SimJsonValue *rows;
  if (doc == NULL || !read_header (doc, path, sh, error) ||
      (rows = member (doc, "rows", SIM_JARRAY, FALSE, path, error)) == NULL)
    return NULL;
  sh->rows = g_ptr_array_new_full (rows->items->len, sim_run_summary_free);
  for (guint i = 0; i < rows->items->len; i++) {
    const SimJsonValue *o = g_ptr_array_index (rows->items, i);
    Row *r = read_row (o, sh, path, error);
    if (r == NULL)
      return NULL;
    g_ptr_array_add (sh->rows, r);
    if (!g_hash_table_add (seen, GINT_TO_POINTER (r->index + 1))) {
      refuse (error, path, o->line, "each layout once: row %d is there twice", r->index);
      return NULL;
    }
  }
  return g_steal_pointer (&sh);
}

void
sim_sweep_merged_free (SimSweepMerged *m)
{
  if (m == NULL)
    return;
  g_free (m->topology);
  g_free (m->model);
  g_free (m->options);
  g_clear_pointer (&m->rows, g_ptr_array_unref);
  g_free (m);
}

/* sh is the same sweep as the first shard m holds */
static gboolean
same_sweep (const SimSweepMerged *m, const char *first, const Shard *sh, const char *path,
            GError **error)
{
  struct {
    const char *what, *a, *b;
  } strs[] = { { "topology", m->topology, sh->topology },
               { "model", m->model, sh->model },
               { "options", m->options, sh->options } };
  for (guint i = 0; i < G_N_ELEMENTS (strs); i++)
    if (!g_str_equal (strs[i].a, strs[i].b)) {
      g_autofree char *qa = quoted (strs[i].a), *qb = quoted (strs[i].b);
      return refuse (error, path, 0, "a shard of the same sweep as %s: its %s is %s, not %s", first,
                     strs[i].what, qb, qa);
    }
  if (m->layouts != sh->layouts || m->shards != sh->shards)
    return refuse (error, path, 0,
                   "a shard of the same sweep as %s: %u layouts in %d shards, not %u in %d", first,
                   m->layouts, m->shards, sh->layouts, sh->shards);
  return TRUE;
}

static int
by_index (gconstpointer a, gconstpointer b)
{
  const Row *x = *(const Row *const *) a, *y = *(const Row *const *) b;
  return (x->index > y->index) - (x->index < y->index);
}

/* every shard and every layout there, each once, the layouts in order */
static gboolean
complete (SimSweepMerged *m, const char *first, GHashTable *shards, GError **error)
{
  g_autoptr (GHashTable) layouts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  int missing = 1;
  if ((int) g_hash_table_size (shards) < m->shards) {
    while (g_hash_table_contains (shards, GINT_TO_POINTER (missing)))
      missing++;
    return refuse (error, first, 0, "all %d shards of the sweep: shard %d is missing", m->shards,
                   missing);
  }
  /* each shard holds only its own indices, each once: the count tells */
  if (m->rows->len != m->layouts)
    return refuse (error, first, 0, "the %u layouts of the sweep in its shards, not %u", m->layouts,
                   m->rows->len);
  g_ptr_array_sort (m->rows, by_index);
  for (guint i = 0; i < m->rows->len; i++) {
    const Row *r = g_ptr_array_index (m->rows, i);
    g_autofree char *key = g_strdup_printf ("%d %s", r->nodes, r->label);
    gpointer other = g_hash_table_lookup (layouts, key);
    if (other != NULL) {
      g_autofree char *q = quoted (r->label);
      return refuse (error, first, 0, "each layout once: %s on %d nodes is rows %d and %d", q,
                     r->nodes, GPOINTER_TO_INT (other) - 1, r->index);
    }
    g_hash_table_insert (layouts, g_steal_pointer (&key), GINT_TO_POINTER (r->index + 1));
  }
  return TRUE;
}

/* add sh's rows to m, the first shard setting what the sweep is */
static gboolean
add_shard (SimSweepMerged *m, const char *first, Shard *sh, const char *path, GHashTable *shards,
           GError **error)
{
  const char *other;
  if (m->topology == NULL) {
    m->topology = g_strdup (sh->topology);
    m->model = g_strdup (sh->model);
    m->options = g_strdup (sh->options);
    m->exact_top = sh->exact_top;
    m->layouts = sh->layouts;
    m->shards = sh->shards;
  } else if (!same_sweep (m, first, sh, path, error))
    return FALSE;
  if ((other = g_hash_table_lookup (shards, GINT_TO_POINTER (sh->shard))) != NULL)
    return refuse (error, path, 0, "each shard once: shard %d of %d is also %s", sh->shard,
                   sh->shards, other);
  g_hash_table_insert (shards, GINT_TO_POINTER (sh->shard), (gpointer) path);
  g_ptr_array_set_free_func (sh->rows, NULL);
  g_ptr_array_extend_and_steal (m->rows, g_steal_pointer (&sh->rows));
  return TRUE;
}

SimSweepMerged *
sim_sweep_merge (const char *const *paths, guint n, GError **error)
{
  g_autoptr (SimSweepMerged) m = g_new0 (SimSweepMerged, 1);
  g_autoptr (GHashTable) shards = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_return_val_if_fail (n > 0, NULL);
  m->rows = g_ptr_array_new_with_free_func (sim_run_summary_free);
  for (guint f = 0; f < n; f++) {
    g_autofree char *contents = NULL;
    g_autoptr (Shard) sh = NULL;
    gsize len = 0;
    if (!sim_input_read (paths[f], SIM_SWEEP_MERGE_MAX_BYTES, &contents, &len, error))
      return NULL;
    /* the reader stops at a NUL: a file with one is not JSON sim wrote */
    if (strlen (contents) != len) {
      refuse (error, paths[f], 0, "a JSON text, not a file with a NUL byte");
      return NULL;
    }
    if ((sh = read_shard (paths[f], contents, error)) == NULL ||
        !add_shard (m, paths[0], sh, paths[f], shards, error))
      return NULL;
  }
  if (!complete (m, paths[0], shards, error))
    return NULL;
  return g_steal_pointer (&m);
}

gboolean
sim_sweep_rows_read (const char *path, const char *text, char **topo, char **model, GPtrArray *rows,
                     GError **error)
{
  g_autoptr (Shard) sh = read_shard (path, text, error);
  if (sh == NULL)
    return FALSE;
  if (*topo == NULL) {
    *topo = g_strdup (sh->topology);
    *model = g_strdup (sh->model);
  } else if (!g_str_equal (*topo, sh->topology) || !g_str_equal (*model, sh->model)) {
    g_autofree char *qt = quoted (*topo), *qm = quoted (*model);
    return refuse (error, path, 0, "a shard of the same sweep (%s on %s)", qm, qt);
  }
  g_ptr_array_set_free_func (sh->rows, NULL);
  g_ptr_array_extend_and_steal (rows, g_steal_pointer (&sh->rows));
  return TRUE;
}
