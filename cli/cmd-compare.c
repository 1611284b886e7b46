/* cmd-compare.c — `sim compare`: several layouts of one job, side by side.
 * Exit status: 0 when at least one plan fits, 1 when none does (a choice
 * among plans is possible as long as one fits), 2 on an error. */
#include <stdio.h>

#include "cli.h"
#include "sim-compare.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-paths.h"
#include "sim-report.h"
#include "sim-run.h"
#include "sim-sweep.h"
#include "sim-table.h"
#include "viz-file.h"
#include "viz-html.h"

static const char *usage =
    "usage: sim compare --topology FILE|NAME [--nodes N | --gpus N] [--model FILE|NAME]\n"
    "                   --plan PLAN --plan PLAN ... [--chart FILE.png|.svg|.pdf] [--json FILE|-]\n"
    "                   [--html FILE.html] [--full-fidelity] [--calibration FILE] [--wide]\n"
    "                   [--train-tokens COUNT [--gpu-hour-price PRICE]]\n"
    "\n"
    "Each PLAN is plan flags as key=value pairs, for example\n"
    "  --plan tp=8,pp=4,dp=2 --plan tp=4,pp=8,dp=2,mb=2,schedule=interleaved,v=2\n"
    "(every plan flag of sim --help; short names mb, gb, v, sp, seq).  A plan without gb runs\n"
    "the model's published global batch, or where it has none 8 sequences per GPU, the same\n"
    "for every such plan.  Prints one row per plan, the plans that fit ranked by\n"
    "throughput, and the diagnosis of each.  The table fits 100 columns; --wide shows\n"
    "every exposed-communication column on one line.\n"
    "--train-tokens 15T adds each plan's days and GPU-hours to train on 15 T tokens\n"
    "(--gpu-hour-price: and the cost).  --html writes the table, the chart and the\n"
    "diagnosis as one self-contained page (no network, no scripts).\n"
    "\n"
    "exit status: 0 at least one plan fits in GPU memory, 1 none fits (the table and\n"
    "the files asked for are still written), 2 bad input or an error\n";

/* the comparison chart's title */
static char *
chart_title (const SimTopology *topo, const SimModel *model, GPtrArray *runs)
{
  int n = sim_topology_n_gpus (topo);
  return g_strdup_printf ("%s on %s (%d GPU%s): %u layout%s", model->name, topo->name, n, n == 1 ? "" : "s",
                          runs->len, runs->len == 1 ? "" : "s");
}

/* what the command prints: its title line, the ranked table, the notes on
 * each plan */
typedef struct {
  char *title;
  GString *table;
  GString *notes;
} Printed;

static void
printed_clear (Printed *p)
{
  g_free (p->title);
  if (p->table != NULL)
    g_string_free (p->table, TRUE);
  if (p->notes != NULL)
    g_string_free (p->notes, TRUE);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Printed, printed_clear)

/* --chart, --json FILE and --html: all or none (sim-io.h) */
static gboolean
write_outputs (const char *chart, const char *json, const char *html, const Printed *printed,
               const SimTopology *topo, const SimModel *model, GPtrArray *runs, GError **error)
{
  g_autoptr (SimOutputSet) set = sim_output_set_new ();
  if (html != NULL) {
    g_autofree char *title = chart_title (topo, model, runs);
    VizHtmlTable page = { printed->title, printed->table->str, NULL, (const SimRun *const *) runs->pdata,
                          (int) runs->len, title, "Diagnosis of each layout", printed->notes->str };
    if (!viz_stage_html_table (set, html, &page, error)) {
      g_prefix_error (error, "--html: ");
      return FALSE;
    }
  }
  if (chart != NULL) {
    g_autofree char *title = chart_title (topo, model, runs);
    if (!viz_stage_compare (set, chart, (const SimRun *const *) runs->pdata, (int) runs->len, title, error)) {
      g_prefix_error (error, "--chart: ");
      return FALSE;
    }
  }
  if (json != NULL && !g_str_equal (json, "-")) {
    g_autofree char *text = sim_report_runs_json ("compare", topo->name, model->name, runs, NULL, NULL);
    if (!sim_output_set_add (set, json, text, -1, error)) {
      g_prefix_error (error, "--json: ");
      return FALSE;
    }
  }
  return sim_output_set_commit (set, error);
}

/* text and a newline, wrapped at the table's width unless wide */
static void
append_line (GString *out, const char *text, gboolean wide)
{
  if (wide)
    g_string_append (out, text);
  else
    sim_cli_append_wrapped (out, text, 0, 2, SIM_CLI_COLUMNS);
  g_string_append_c (out, '\n');
}

/* how far every step time of the table is validated, as the report says
 * it under its step time: the bands of the first plan, and the
 * framework's band where another plan of the table has one */
static void
print_bands (GString *table, const SimTopology *topo, const SimModel *model, GPtrArray *runs,
             gboolean wide)
{
  g_autoptr (GPtrArray) lines = sim_report_band_sentences (
      topo, model, ((const SimRun *) g_ptr_array_index (runs, 0))->plan);
  for (guint i = 1; i < runs->len && lines->len < 3; i++) {
    char *framework = sim_report_framework_band_sentence (topo, ((const SimRun *) g_ptr_array_index (runs, i))->plan);
    gboolean seen = FALSE;
    for (guint k = 0; k < lines->len && framework != NULL; k++)
      seen |= g_str_equal (g_ptr_array_index (lines, k), framework);
    if (framework != NULL && !seen)
      g_ptr_array_add (lines, framework);
    else
      g_free (framework);
  }
  for (guint k = 0; k < lines->len; k++) {
    g_autofree char *text = g_strconcat (k == 0 ? "step times: " : "", (const char *) g_ptr_array_index (lines, k), NULL);
    append_line (table, text, wide);
  }
}

/* a plan whose global batch its own layout rounded up (sim_plan_resolve:
 * a multiple of micro-batch x dp; SimPlan.global_batch_wanted) trains
 * more tokens per step than the others: said under the table, where the
 * steps are compared, in the words of its default's note */
static void
print_rounded_batches (GString *table, GPtrArray *runs, gboolean wide)
{
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    for (guint k = 0; r->plan->global_batch_wanted > 0 && k < r->plan->defaults->len; k++) {
      const char *d = g_ptr_array_index (r->plan->defaults, k);
      if (g_str_has_prefix (d, "--global-batch")) {
        g_autofree char *text = g_strdup_printf ("%s: %s; compare its tokens/s, not its step", r->label, d);
        append_line (table, text, wide);
      }
    }
  }
}

/* each plan's diagnosis, training cost and remedies */
static void
print_notes (GString *out, GPtrArray *runs, gboolean wide)
{
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    g_autoptr (GPtrArray) d = sim_run_diagnose (r, NULL);
    g_autofree char *train = sim_report_train_text (r);
    g_string_append_printf (out, "%s\n", r->label);
    if (train != NULL)
      g_ptr_array_insert (d, 0, g_strconcat ("training: ", train, NULL));
    for (guint k = 0; k < d->len; k++) {
      g_string_append (out, "  ");
      if (wide)
        g_string_append (out, g_ptr_array_index (d, k));
      else
        sim_cli_append_wrapped (out, g_ptr_array_index (d, k), 2, 4, SIM_CLI_COLUMNS);
      g_string_append_c (out, '\n');
    }
    for (guint k = 0; k < r->remedies->len; k++) {
      g_autofree char *text = sim_report_remedy_text (g_ptr_array_index (r->remedies, k));
      g_string_append (out, "  remedy: ");
      if (wide)
        g_string_append (out, text);
      else
        sim_cli_append_wrapped (out, text, 10, 12, SIM_CLI_COLUMNS);
      g_string_append_c (out, '\n');
    }
  }
}

int
sim_cmd_compare (int argc, char **argv, GError **error)
{
  g_autofree char *topology = NULL, *nodes_s = NULL, *model_s = NULL, *chart = NULL, *json = NULL;
  g_autofree char *calibration = NULL, *gpus_s = NULL, *train_s = NULL, *price_s = NULL, *html = NULL;
  double tokens = 0, price = 0;
  g_autoptr (GPtrArray) plans = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) runs = NULL;
  g_autofree char *model_path = NULL;
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (SimModel) model = NULL;
  g_auto (Printed) printed = { NULL, g_string_new (NULL), g_string_new (NULL) };
  gboolean help = FALSE, full = FALSE, wide = FALSE, shared_used = FALSE;
  guint64 shared_gb = 0;
  int nodes = 0, gpus = 0, status = 1;
  const SimCliOption options[] = {
    { "topology", TRUE, &topology, NULL, NULL }, { "nodes", TRUE, &nodes_s, NULL, NULL },
    { "model", TRUE, &model_s, NULL, NULL }, { "plan", TRUE, NULL, NULL, plans },
    { "chart", TRUE, &chart, NULL, NULL }, { "json", TRUE, &json, NULL, NULL },
    { "html", TRUE, &html, NULL, NULL },
    { "full-fidelity", FALSE, NULL, &full, NULL }, { "gpus", TRUE, &gpus_s, NULL, NULL },
    { "wide", FALSE, NULL, &wide, NULL }, { "calibration", TRUE, &calibration, NULL, NULL }, { "help", FALSE, NULL, &help, NULL },
    { "train-tokens", TRUE, &train_s, NULL, NULL }, { "gpu-hour-price", TRUE, &price_s, NULL, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };

  if (!sim_cli_parse (argc, argv, 2, options, "compare", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (topology == NULL || plans->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "compare: expected --topology FILE|NAME and at least one --plan PLAN; see sim compare --help");
    return 2;
  }
  if (nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error))
    return 2;
  if (gpus_s != NULL && !sim_cli_int ("gpus", gpus_s, 1, SIM_TOPOLOGY_MAX_GPUS, &gpus, error))
    return 2;
  if (!sim_cli_parse_training (train_s, price_s, &tokens, &price, error))
    return 2;
  if ((model_path = sim_paths_resolve (model_s != NULL ? model_s : "llama3-70b", "models", error)) == NULL ||
      (topo = sim_cli_load_topology (topology, nodes, gpus, calibration, error)) == NULL ||
      (model = sim_model_load (model_path, error)) == NULL)
    return 2;
  /* the outputs, before any layout is simulated */
  if (chart != NULL && (!viz_check_chart_path (chart, error) || !sim_output_check (chart, FALSE, error))) {
    g_prefix_error (error, "--chart: ");
    return 2;
  }
  if (json != NULL && !sim_cli_check_json (json, error))
    return 2;
  if (html != NULL && !sim_cli_check_html (html, error))
    return 2;

  runs = sim_compare_runs (topo, model, (const char *const *) plans->pdata, plans->len, full, tokens, price,
                           &shared_gb, error);
  if (runs == NULL)
    return 2;
  shared_used = shared_gb > 0;
  /* ranked: the plans that fit come first */
  status = runs->len > 0 && ((const SimRun *) g_ptr_array_index (runs, 0))->memory->fits ? 0 : 1;

  {
    int n = sim_topology_n_gpus (topo);
    g_autofree char *gb = shared_used
                              ? g_strdup_printf ("; global batch %" G_GUINT64_FORMAT
                                                 ", %d sequences per GPU, where a plan gives "
                                                 "none (the model publishes none)",
                                                 shared_gb, SIM_SWEEP_SEQUENCES_PER_GPU)
                              : g_strdup ("");
    printed.title = g_strdup_printf (
        "sim compare: %s on %s, %d GPU%s (%d node%s)%s; ranked by tokens/s among the layouts that fit",
        model->name, topo->name, n, n == 1 ? "" : "s", topo->n_nodes, topo->n_nodes == 1 ? "" : "s",
        gb);
  }
  {
    g_autofree char *table = sim_table_compare (runs, wide);
    g_string_append (printed.table, table);
  }
  print_bands (printed.table, topo, model, runs, wide);
  print_rounded_batches (printed.table, runs, wide);
  print_notes (printed.notes, runs, wide);

  if (!write_outputs (chart, json, html, &printed, topo, model, runs, error))
    return 2;
  if (json != NULL && g_str_equal (json, "-")) {
    g_autofree char *text = sim_report_runs_json ("compare", topo->name, model->name, runs, NULL, NULL);
    fputs (text, stdout);
    return status;
  }
  {
    /* the title wrapped as the table, at most 100 columns unless wide */
    g_autoptr (GString) t = g_string_new (NULL);
    sim_cli_append_wrapped (t, printed.title, 0, 2, wide ? G_MAXINT / 2 : SIM_CLI_COLUMNS);
    printf ("%s\n\n%s\n%s", t->str, printed.table->str, printed.notes->str);
  }
  return status;
}
