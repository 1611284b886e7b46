/* cmd-sweep.c — `sim sweep`: every layout of a job, pruned, simulated and
 * ranked by the library (sim-sweep.h); this file parses, prints the table
 * and the counts the library makes of the rows (sim-table.h) and the best
 * layout's diagnosis, and writes or merges the shard files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sim-report.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-paths.h"
#include "sim-plan.h"
#include "sim-run.h"
#include "sim-sweep.h"
#include "sim-table.h"
#include "viz-file.h"
#include "viz-html.h"

typedef SimSweepRow Row;

static const char *usage =
    "usage: sim sweep --topology FILE|NAME [--model FILE|NAME] [--nodes N | --gpus N]\n"
    "                 [--global-batch B] [--seq-len N] [--gpu-variation S] [--scale] [--top K]\n"
    "                 [--moe-imbalance R] [--moe-expert-capacity-factor C]\n"
    "                 [--moe-pad-expert-input-to-capacity]\n"
    "                 [--fp8 off|hybrid|e4m3|both] [--fp4 off|e2m1|both]\n"
    "                 [--tp LIST] [--pp LIST] [--cp LIST] [--ep LIST] [--etp LIST]\n"
    "                 [--schedule LIST]\n"
    "                 [--max-nodes N] [--min-headroom P%]\n"
    "                 [--threads N | --jobs N] [--shard I/N] [--json FILE|-] [--html FILE.html]\n"
    "                 [--csv FILE.csv] [--chart FILE.png|.svg|.pdf] [--all] [--quiet] [--wide]\n"
    "       sim sweep --merge FILE FILE ... [--top K] [--csv FILE.csv] [--chart FILE.png]\n"
    "\n"
    "Enumerates every layout of the job on the cluster, prunes what is invalid,\n"
    "dominated or out of memory, simulates the rest on every core and prints the\n"
    "top K (default 10).  Layouts are simulated lowest compute-alone bound first, in\n"
    "waves of 16; one whose compute alone is already slower than the K-th best at its\n"
    "GPU count cannot be among them and is not simulated (the top K are those of\n"
    "simulating all).  --all simulates every layout that fits; without it --csv,\n"
    "--chart and --html show the layouts simulated (the CSV lists the rest with why\n"
    "they were not).  A sweep that runs past a few seconds says how far it is on\n"
    "stderr (--quiet: not).\n"
    "--scale also tries 1, 2, 4 ... nodes, and the scaling efficiency\n"
    "E = t1 k1 / (k tk) is against the smallest layout that fits.  --shard I/N\n"
    "does the I-th of N slices (for a job array); --merge joins their --json files.\n"
    "--seq-len N trains on sequences of N tokens (default: the model's).  --global-batch B\n"
    "sequences per step (default: the model's, else 8 per GPU), the same for every layout.\n"
    "--gpu-variation S simulates every layout with that spread of GPU speeds (default 1.5%:\n"
    "each step waits for the slowest GPU; 0 a uniform cluster).\n"
    "--moe-imbalance, --moe-expert-capacity-factor and --moe-pad-expert-input-to-capacity\n"
    "route every layout's tokens to the experts as sim's flags of those names do.\n"
    "--fp8 trains the linear layers in FP8; both ranks BF16 and FP8 layouts together.\n"
    "--fp4 e2m1 trains them in NVFP4 (Blackwell); both ranks NVFP4 layouts beside the others.\n"
    "--tp, --pp and --cp LIST (such as 1,2,4,8) try only those sizes.  For a mixture-of-experts\n"
    "model the sweep also tries every expert split: ep dividing the experts, etp 1 and tp, with\n"
    "etp x ep dividing tp x cp x dp; --ep and --etp LIST try only those.  A mixture-of-experts\n"
    "or latent-attention model also tries recomputing only the modules its recipes recompute\n"
    "(recompute-modules moe_act, layernorm, mla_up_proj) beside none and full.  The schedules\n"
    "tried are 1F1B, interleaved (v 2-4) and with a pipeline zb-h1, zb-v, dualpipe-v and\n"
    "dualpipe where their plans resolve; --schedule LIST (such as 1f1b,dualpipe) tries only\n"
    "those.  --max-nodes N caps\n"
    "the cluster at N nodes (with --scale, the largest count tried).  --min-headroom 10%\n"
    "prunes the layouts whose peak leaves less than 10% of usable memory free.\n"
    "--jobs N is --threads N: the layouts simulated at once (default: every core).\n"
    "--csv writes every layout, ranked then pruned, one line each (SI units: peak_bytes, step_s).\n"
    "--chart draws step time against peak memory with the Pareto front (no layout both faster\n"
    "and smaller) labelled; with --scale, tokens/s against nodes with each count's best.\n"
    "--train-tokens 15T [--gpu-hour-price P] adds the best layout's time (and cost) to train.\n"
    "The table fits 100 columns: its plans leave out the global batch, --seq-len and the defaults\n"
    "cp=1, schedule=1f1b and recompute=none (--json and --wide give them in full).\n"
    "--html writes the table, the chart of --chart, the comparison chart of the layouts\n"
    "shown and the best layout's diagnosis as one self-contained page (no network, no\n"
    "scripts).\n"
    "\n"
    "exit status: 0 at least one layout fits in GPU memory, 1 none fits, 2 bad input\n"
    "or an error.  A shard (--shard I/N, N > 1) exits 0 once its file is written: the\n"
    "verdict is the merge's.\n";

/* a plan string (k=v,k=v,...), which has no spaces to wrap at, broken
 * after its commas so that no line passes width; continuation lines
 * indented to col, where the first line's text starts */
static void
append_label_wrapped (GString *out, const char *label, int col, int width)
{
  g_auto (GStrv) items = g_strsplit (label, ",", -1);
  int x = col;
  for (int i = 0; items[i] != NULL; i++) {
    int n = (int) strlen (items[i]) + (items[i + 1] != NULL ? 1 : 0);
    if (i > 0 && x + n > width) {
      g_string_append_printf (out, "\n%*s", col, "");
      x = col;
    }
    g_string_append_printf (out, "%s%s", items[i], items[i + 1] != NULL ? "," : "");
    x += n;
  }
}

/* the exit status of a sweep: 0 when a layout fits, 1 when none does */
static int
status_of (GPtrArray *rows)
{
  for (guint i = 0; i < rows->len; i++)
    if (((const Row *) g_ptr_array_index (rows, i))->fits)
      return 0;
  return 1;
}

/* --csv FILE: before hours of simulation, that it can be written */
static gboolean
check_csv (const char *csv, GError **error)
{
  if (csv == NULL || sim_output_check (csv, FALSE, error))
    return TRUE;
  g_prefix_error (error, "--csv: ");
  return FALSE;
}

/* every row, in ranked order, as CSV into the output set */
static gboolean
stage_csv (SimOutputSet *set, const char *csv, GPtrArray *ranked, GError **error)
{
  g_autofree char *text = NULL;
  if (csv == NULL)
    return TRUE;
  text = sim_sweep_rows_csv (ranked);
  if (!sim_output_set_add (set, csv, text, -1, error)) {
    g_prefix_error (error, "--csv: ");
    return FALSE;
  }
  return TRUE;
}

/* --chart FILE: before hours of simulation, its format and that it can be
 * written */
static gboolean
check_chart (const char *chart, GError **error)
{
  if (chart == NULL || (viz_check_chart_path (chart, error) && sim_output_check (chart, FALSE, error)))
    return TRUE;
  g_prefix_error (error, "--chart: ");
  return FALSE;
}

/* the sweep chart's input: rows, labelled with the plans as the table
 * prints them (new strings, kept in labels) */
static VizSweepInput
sweep_input (GPtrArray *rows, gboolean scale, const char *title, GPtrArray *labels)
{
  gboolean keep_gb = sim_table_rows_differ_in_gb (rows);
  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add (labels,
                     sim_sweep_compact_label (((const Row *) g_ptr_array_index (rows, i))->label, keep_gb));
  return (VizSweepInput) { (const SimRunSummary *const *) rows->pdata, (int) rows->len,
                           (const char *const *) labels->pdata, scale, title };
}

/* the sweep chart of rows into the output set */
static gboolean
stage_chart (SimOutputSet *set, const char *chart, GPtrArray *rows, gboolean scale, const char *title,
             GError **error)
{
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  VizSweepInput in;
  if (chart == NULL)
    return TRUE;
  in = sweep_input (rows, scale, title, labels);
  if (!viz_stage_sweep (set, chart, &in, error)) {
    g_prefix_error (error, "--chart: ");
    return FALSE;
  }
  return TRUE;
}

static int
merge (GPtrArray *files, int top, const char *csv, const char *chart, GError **error)
{
  g_autoptr (SimOutputSet) set = sim_output_set_new ();
  g_autoptr (SimSweepMerged) m = NULL;
  g_autofree char *chart_title = NULL;
  gboolean scale = FALSE;
  g_autoptr (GPtrArray) ranked = g_ptr_array_new ();
  g_autoptr (GString) out = g_string_new (NULL);
  /* the library reads and checks every file: they come from other machines */
  if (!check_csv (csv, error) || !check_chart (chart, error))
    return 2;
  m = sim_sweep_merge ((const char *const *) files->pdata, files->len, error);
  if (m == NULL)
    return 2;
  for (guint i = 0; i < m->rows->len; i++)
    g_ptr_array_add (ranked, g_ptr_array_index (m->rows, i));
  sim_sweep_rank_rows (ranked);
  /* a sweep with --scale is the one whose layouts span node counts */
  for (guint i = 1; i < m->rows->len; i++)
    scale |= ((const Row *) g_ptr_array_index (m->rows, i))->nodes != ((const Row *) g_ptr_array_index (m->rows, 0))->nodes;
  chart_title = g_strdup_printf ("%s on %s: every layout that fits", m->model, m->topology);
  if (!stage_csv (set, csv, ranked, error) || !stage_chart (set, chart, ranked, scale, chart_title, error) ||
      !sim_output_set_commit (set, error))
    return 2;
  g_string_append_printf (out, "sim sweep --merge: %s on %s, %u shard files\n\n", m->model,
                          m->topology, files->len);
  {
    g_autofree char *table = sim_table_sweep (ranked, top, FALSE, TRUE);
    g_string_append (out, table);
  }
  g_string_append_c (out, '\n');
  {
    /* shards that pruned by their compute-alone bound ranked exactly only
     * their own top K of each GPU count */
    int k = m->exact_top;
    if (k > 0 && top > k)
      g_string_append_printf (out, "note: the shards simulated each GPU count's best %d for certain (--top %d):\n"
                                   "  past rank %d a faster layout may have been pruned unsimulated; run them with\n"
                                   "  --top %d or --all\n\n", k, k, k, top);
  }
  {
    g_autofree char *counts = sim_table_sweep_counts (m->rows);
    g_string_append (out, counts);
  }
  fputs (out->str, stdout);
  return status_of (m->rows);
}

/* the progress line, from the worker threads: the layouts done, how many
 * of them were simulated, and the time so far.  No time left is printed:
 * the layouts are taken lowest bound first, and which of those left will
 * be simulated and which pruned depends on the best found by then (a
 * DeepSeek-V3 sweep on 256 H100s did 235,159 of 266,766 in 65 s, at which
 * rate 9 s were left, and took 1,011 s).  On a terminal (data non-zero)
 * one line redrawn at most every PROGRESS_US (a sweep finishes thousands
 * of rows a second, and a write per row would hold the other threads at
 * the lock) and at the end; elsewhere (a log) a line once the sweep has
 * run PROGRESS_LOG_FIRST_US, then one every PROGRESS_LOG_US, so that a
 * short sweep leaves stderr empty */
#define PROGRESS_US 100000
#define PROGRESS_LOG_FIRST_US 5000000
#define PROGRESS_LOG_US 60000000
static GMutex progress_lock;
static gint64 progress_start_us, progress_drawn_us;

static void
progress_log (int done, int simulated, int total)
{
  gint64 now = g_get_monotonic_time ();
  double elapsed_s = (double) (now - progress_start_us) / 1e6;
  if (done >= total || now - progress_start_us < PROGRESS_LOG_FIRST_US ||
      (progress_drawn_us > 0 && now - progress_drawn_us < PROGRESS_LOG_US))
    return;
  progress_drawn_us = now;
  fprintf (stderr, "sim sweep: %d of %d layouts done in %.0f s, %d of them simulated, the others pruned\n",
           done, total, elapsed_s, simulated);
  fflush (stderr);
}

static void
progress (int done, int simulated, int total, gpointer data)
{
  g_mutex_lock (&progress_lock);
  if (data == NULL) {
    progress_log (done, simulated, total);
    g_mutex_unlock (&progress_lock);
    return;
  }
  if (done < total && g_get_monotonic_time () - progress_drawn_us < PROGRESS_US) {
    g_mutex_unlock (&progress_lock);
    return;
  }
  progress_drawn_us = g_get_monotonic_time ();
  {
    int width = 30, fill = total > 0 ? width * done / total : width;
    gint64 now = g_get_monotonic_time ();
    double elapsed_s;
    if (progress_start_us == 0)
      progress_start_us = now;
    elapsed_s = (double) (now - progress_start_us) / 1e6;
    fprintf (stderr, "\r  [%.*s%*s] %d/%d layouts, %d simulated, %.1f s   ", fill,
             "==============================", width - fill, "", done, total, simulated, elapsed_s);
    if (done == total)
      fputc ('\n', stderr);
    fflush (stderr);
  }
  g_mutex_unlock (&progress_lock);
}

/* --merge takes several files: gather the words after it, and take them
 * out of argv */
static gboolean
gather_merge_files (int *argc, char **argv, GPtrArray *merge_files, GError **error)
{
  for (int i = 2; i < *argc; i++)
    if (g_str_equal (argv[i], "--merge")) {
      int k = i + 1;
      while (k < *argc && !g_str_has_prefix (argv[k], "--"))
        g_ptr_array_add (merge_files, g_strdup (argv[k++]));
      if (k == i + 1) {
        g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                     "--merge: expected one or more shard files (sim sweep --json)");
        return FALSE;
      }
      for (int x = i; x + (k - i) < *argc; x++)
        argv[x] = argv[x + (k - i)];
      *argc -= k - i;
      i--;
    }
  return TRUE;
}

/* the numbers of a sweep that the library does not parse */
typedef struct {
  int nodes, threads, shard, shards;
  guint64 gb;
} Job;

static gboolean
parse_job (const char *nodes_s, const char *threads_s, const char *jobs_s, const char *gb_s,
           const char *shard_s, Job *job, GError **error)
{
  if (nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &job->nodes, error))
    return FALSE;
  /* --jobs is make's and xargs' word for the same thing */
  if (threads_s != NULL && jobs_s != NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--jobs is another name for --threads: give one of them");
    return FALSE;
  }
  if (threads_s != NULL && !sim_cli_int ("threads", threads_s, 1, 1024, &job->threads, error))
    return FALSE;
  if (jobs_s != NULL && !sim_cli_int ("jobs", jobs_s, 1, 1024, &job->threads, error))
    return FALSE;
  if (gb_s != NULL) {
    int v = 0;
    if (!sim_cli_int ("global-batch", gb_s, 1, 1 << 30, &v, error))
      return FALSE;
    job->gb = (guint64) v;
  }
  if (shard_s != NULL && (sscanf (shard_s, "%d/%d", &job->shard, &job->shards) != 2 || job->shards < 1 ||
                          job->shard < 1 || job->shard > job->shards)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--shard: expected I/N with 1 <= I <= N, for example 3/8, got '%s'", shard_s);
    return FALSE;
  }
  return TRUE;
}

/* the constraints for the title, "; tp 1, 2; min headroom 10%" ("" when
 * none), so that a table is never read as the whole sweep */
static char *
constraints_title (const SimSweepConstraints *c)
{
  const int *lists[] = { c->tp, c->cp, c->pp, c->ep, c->etp };
  const int ns[] = { c->n_tp, c->n_cp, c->n_pp, c->n_ep, c->n_etp };
  const char *names[] = { "tp", "cp", "pp", "ep", "etp" };
  GString *s = g_string_new (NULL);
  for (int k = 0; k < 5; k++) {
    if (ns[k] > 0)
      g_string_append_printf (s, "; %s ", names[k]);
    for (int i = 0; i < ns[k]; i++)
      g_string_append_printf (s, "%s%d", i > 0 ? ", " : "", lists[k][i]);
  }
  if (c->min_headroom > 0)
    g_string_append_printf (s, "; min headroom %g%%", 100 * c->min_headroom);
  return g_string_free (s, FALSE);
}

/* the layouts of the table, simulated again for the comparison chart of
 * the --html page (SimRun*, labelled as in the table); NULL with the error
 * of a layout that no longer evaluates */
static GPtrArray *
shown_runs (SimSweep *sw, const SimModel *model, GPtrArray *ranked, int top, GError **error)
{
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_run_free);
  gboolean keep_gb = sim_table_rows_differ_in_gb (ranked);
  for (guint i = 0; i < ranked->len && (int) i < top; i++) {
    const Row *r = g_ptr_array_index (ranked, i);
    g_autofree char *label = NULL;
    SimRun *run = NULL;
    if (!r->has_time)
      break;
    label = sim_sweep_compact_label (r->label, keep_gb);
    run = sim_run_evaluate (sim_sweep_cluster (sw, r->nodes), model, r->request, label,
                            SIM_RUN_TIME, error);
    if (run == NULL) {
      g_prefix_error (error, "%s: ", r->label);
      return NULL;
    }
    g_ptr_array_add (runs, run);
  }
  return g_steal_pointer (&runs);
}

/* --json FILE, --csv and --html: all or none (sim-io.h); the JSON on
 * stdout (--json -) is the caller's */
static gboolean
write_outputs (const char *json, const char *json_text, const char *csv, const char *chart, gboolean scale,
               const char *html, const char *title, const char *table, const char *notes, SimSweep *sw,
               const SimModel *model, GPtrArray *ranked, int top, GError **error)
{
  g_autoptr (SimOutputSet) set = sim_output_set_new ();
  const SimTopology *t = ranked->len > 0 ? sim_sweep_cluster (sw, ((const Row *) g_ptr_array_index (ranked, 0))->nodes)
                                         : NULL;
  /* the sweep chart's, in its file and on the page */
  g_autofree char *chart_title = g_strdup_printf ("%s on %s: %s%s", model->name, t != NULL ? t->name : "the cluster",
                                                  sim_sweep_keep (sw) > 0 ? "the layouts simulated (--all: every one that fits)"
                                                                          : "every layout that fits",
                                                  scale ? ", on 1, 2, 4 ... nodes" : "");
  if (json != NULL && !g_str_equal (json, "-") && !sim_output_set_add (set, json, json_text, -1, error)) {
    g_prefix_error (error, "--json: ");
    return FALSE;
  }
  if (!stage_csv (set, csv, ranked, error) || !stage_chart (set, chart, ranked, scale, chart_title, error))
    return FALSE;
  if (html != NULL) {
    g_autoptr (GPtrArray) runs = shown_runs (sw, model, ranked, top, error);
    g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
    g_autofree char *runs_title = NULL;
    VizSweepInput in = sweep_input (ranked, scale, chart_title, labels);
    VizHtmlTable page = { title, table, &in, NULL, 0, NULL, "Layouts counted, and the best one's diagnosis", notes };
    if (runs == NULL)
      return FALSE;
    runs_title = g_strdup_printf ("%s: the %u fastest layouts that fit", model->name, runs->len);
    page.runs = (const SimRun *const *) runs->pdata;
    page.n_runs = (int) runs->len;
    page.runs_title = runs_title;
    if (!viz_stage_html_table (set, html, &page, error)) {
      g_prefix_error (error, "--html: ");
      return FALSE;
    }
  }
  return sim_output_set_commit (set, error);
}

/* the diagnosis of the best, from its full run */
static void
print_best (GString *out, SimSweep *sw, const SimModel *model, GPtrArray *ranked, gboolean scale,
            gboolean wide, double tokens, double price)
{
  const Row *best = ranked->len > 0 ? g_ptr_array_index (ranked, 0) : NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (SimRun) run = NULL;
  g_autoptr (GPtrArray) d = NULL;

  if (best == NULL || !best->has_time)
    return;
  /* the full run the ranking made, where it made one */
  run = sim_sweep_take_run (sw, best);
  if (run == NULL)
    run = sim_run_evaluate (sim_sweep_cluster (sw, best->nodes), model, best->request,
                            best->label, SIM_RUN_TIME, &local);
  if (run == NULL)
    return;
  d = sim_run_diagnose (run, NULL);
  run->train_tokens = tokens;
  run->gpu_hour_price = price;
  if (tokens > 0) {
    g_autofree char *train = sim_report_train_text (run);
    g_ptr_array_insert (d, 0, g_strconcat ("training: ", train, NULL));
  }
  /* how far its step time is validated, as the report says it */
  {
    g_autoptr (GPtrArray) bands = sim_report_band_sentences (run->topo, model, run->plan);
    for (guint i = 0; i < bands->len; i++)
      g_ptr_array_add (d, g_strdup (g_ptr_array_index (bands, i)));
  }
  g_string_append (out, "\nbest: ");
  append_label_wrapped (out, best->label, 6, wide ? G_MAXINT / 2 : SIM_CLI_COLUMNS);
  g_string_append_c (out, '\n');
  for (guint i = 0; i < d->len; i++) {
    g_string_append (out, "  ");
    sim_cli_append_wrapped (out, g_ptr_array_index (d, i), 2, 4, wide ? G_MAXINT / 2 : SIM_CLI_COLUMNS);
    g_string_append_c (out, '\n');
  }
  if (scale)
    g_string_append_printf (out, "  scaling efficiency E = %.2f against the smallest layout that fits\n", best->e);
}

/* sim sweep's flags that limit the layouts it tries, as given */
typedef struct {
  char *tp, *pp, *cp, *ep, *etp, *schedule, *headroom, *max_nodes, *seq, *variation, *gpus;
  char *imbalance, *capacity; /* the experts' routing of every layout */
  gboolean pad;
} LimitFlags;

static void
limit_flags_clear (LimitFlags *lf)
{
  char **all[] = { &lf->tp, &lf->pp, &lf->cp, &lf->ep, &lf->etp, &lf->schedule, &lf->headroom,
                   &lf->max_nodes, &lf->seq, &lf->variation, &lf->gpus, &lf->imbalance, &lf->capacity };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_clear_pointer (all[i], g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LimitFlags, limit_flags_clear)

/* --moe-imbalance or --moe-expert-capacity-factor (key) as the plans'
 * own parser reads it, every layout's value: into *out, 0 when not given */
static gboolean
parse_routing (const char *key, const char *value, double *out, GError **error)
{
  g_autoptr (SimPlanRequest) check = sim_plan_request_new ();
  if (value == NULL)
    return TRUE;
  if (!sim_plan_request_set (check, key, value, NULL, error))
    return FALSE;
  *out = sim_plan_request_value (check, key);
  return TRUE;
}

/* the limits, parsed: the choices of each degree and schedule, the
 * headroom, the node cap, the sequence length, the speeds' spread (-1:
 * not given), the GPUs (0: not given) and the experts' routing (0: not
 * given) */
static gboolean
parse_limits (const LimitFlags *lf, SimSweepConstraints *constraints, int *cap, int *seq,
              double *variation, int *gpus, SimSweepAsk *ask, GError **error)
{
  if (!sim_sweep_parse_choices ("tp", lf->tp, ",", constraints->tp, &constraints->n_tp, error) ||
      !sim_sweep_parse_choices ("pp", lf->pp, ",", constraints->pp, &constraints->n_pp, error) ||
      !sim_sweep_parse_choices ("cp", lf->cp, ",", constraints->cp, &constraints->n_cp, error) ||
      !sim_sweep_parse_choices ("ep", lf->ep, ",", constraints->ep, &constraints->n_ep, error) ||
      !sim_sweep_parse_choices ("etp", lf->etp, ",", constraints->etp, &constraints->n_etp, error) ||
      !sim_sweep_parse_schedules (lf->schedule, ",", &constraints->schedules, error) ||
      !sim_sweep_parse_headroom (lf->headroom, &constraints->min_headroom, error))
    return FALSE;
  if (lf->max_nodes != NULL && !sim_cli_int ("max-nodes", lf->max_nodes, 1, 65536, cap, error))
    return FALSE;
  if (lf->seq != NULL && !sim_cli_int ("seq-len", lf->seq, 1, 1 << 24, seq, error))
    return FALSE;
  if (lf->variation != NULL) {
    /* the plan's own parser checks it, as every layout's plan will */
    g_autoptr (SimPlanRequest) check = sim_plan_request_new ();
    if (!sim_plan_request_set (check, "gpu-variation", lf->variation, NULL, error))
      return FALSE;
    *variation = sim_plan_request_value (check, "gpu-variation");
  }
  if (lf->gpus != NULL && !sim_cli_int ("gpus", lf->gpus, 1, SIM_TOPOLOGY_MAX_GPUS, gpus, error))
    return FALSE;
  ask->moe_pad = lf->pad;
  return parse_routing ("moe-imbalance", lf->imbalance, &ask->moe_imbalance, error) &&
         parse_routing ("moe-expert-capacity-factor", lf->capacity, &ask->moe_capacity_factor, error);
}

/* the experts' routing every layout was given, for the title; "" none */
static char *
routing_title (const SimSweepAsk *ask)
{
  g_autoptr (GString) t = g_string_new (NULL);
  if (ask->moe_imbalance > 0)
    g_string_append_printf (t, "%sthe busiest GPU's experts %gx the mean", t->len > 0 ? ", " : "",
                            ask->moe_imbalance);
  if (ask->moe_capacity_factor > 0)
    g_string_append_printf (t, "%scapacity factor %g (tokens beyond it dropped)", t->len > 0 ? ", " : "",
                            ask->moe_capacity_factor);
  if (ask->moe_pad)
    g_string_append_printf (t, "%spadded to capacity", t->len > 0 ? ", " : "");
  if (t->len == 0)
    return g_strdup ("");
  return g_strdup_printf ("; experts routed with %s", t->str);
}

/* the sweep's title: what was searched, on what, with which batch */
static char *
sweep_title (const SimModel *model, const char *topology, SimSweep *sw, int max_nodes, int n,
             const char *gb_s, gboolean scale, int seq, double variation, const SimSweepAsk *ask, int top)
{
  g_autofree char *routing = routing_title (ask);
  g_autofree char *limits = constraints_title (sim_sweep_constraints (sw));
  g_autofree char *seq_only = seq > 0 ? g_strdup_printf ("; sequence %d tokens", seq) : g_strdup ("");
  g_autofree char *seq_title = variation >= 0 ? g_strdup_printf ("%s; GPU speeds spread %g%%", seq_only, 100 * variation)
                                              : g_strdup (seq_only);
  /* a model that publishes no global batch: SIM_SWEEP_SEQUENCES_PER_GPU
   * per GPU (sim_sweep_enumerate) */
  g_autofree char *gb_title =
      gb_s != NULL ? g_strdup (gb_s)
      : model->default_global_batch > 0
          ? g_strdup_printf ("the model's, %" G_GUINT64_FORMAT, model->default_global_batch)
      : scale
          ? g_strdup_printf (
                "%d sequences per GPU (the model publishes none; --global-batch sets one)",
                SIM_SWEEP_SEQUENCES_PER_GPU)
          : g_strdup_printf ("%d, %d sequences per GPU (the model publishes none; --global-batch "
                             "sets one)",
                             SIM_SWEEP_SEQUENCES_PER_GPU * n, SIM_SWEEP_SEQUENCES_PER_GPU);
  return g_strdup_printf (
      "sim sweep: %s on %s, up to %d node%s (%d GPU%s)%s; global batch %s%s%s%s; top %d by tokens/s",
      model->name, topology, max_nodes, max_nodes == 1 ? "" : "s", n, n == 1 ? "" : "s",
      scale ? ", scaling 1, 2, 4 ... nodes" : "", gb_title, seq_title, routing, limits, top);
}

int
sim_cmd_sweep (int argc, char **argv, GError **error)
{
  g_autofree char *topology = NULL, *model_s = NULL, *nodes_s = NULL, *gb_s = NULL, *top_s = NULL, *fp8_s = NULL, *fp4_s = NULL;
  g_autofree char *train_s = NULL, *price_s = NULL, *html = NULL, *csv = NULL, *chart = NULL;
  double tokens = 0, price = 0;
  g_autofree char *jobs_s = NULL;
  g_auto (LimitFlags) lf = { NULL };
  int seq = 0;
  double variation = -1;
  SimSweepConstraints constraints = { .n_tp = 0 };
  SimSweepAsk ask = { .gpu_variation = -1 };
  int cap = 0;
  g_autofree char *threads_s = NULL, *shard_s = NULL, *json = NULL, *calibration = NULL;
  g_autoptr (GPtrArray) merge_files = g_ptr_array_new_with_free_func (g_free);
  gboolean help = FALSE, scale = FALSE, quiet = FALSE, wide = FALSE, all = FALSE;
  int gpus = 0;
  const SimCliOption options[] = {
    { "topology", TRUE, &topology, NULL, NULL }, { "model", TRUE, &model_s, NULL, NULL },
    { "nodes", TRUE, &nodes_s, NULL, NULL }, { "global-batch", TRUE, &gb_s, NULL, NULL },
    { "top", TRUE, &top_s, NULL, NULL }, { "threads", TRUE, &threads_s, NULL, NULL },
    { "shard", TRUE, &shard_s, NULL, NULL }, { "json", TRUE, &json, NULL, NULL },
    { "html", TRUE, &html, NULL, NULL }, { "jobs", TRUE, &jobs_s, NULL, NULL },
    { "csv", TRUE, &csv, NULL, NULL }, { "chart", TRUE, &chart, NULL, NULL },
    { "tp", TRUE, &lf.tp, NULL, NULL }, { "pp", TRUE, &lf.pp, NULL, NULL }, { "cp", TRUE, &lf.cp, NULL, NULL },
    { "ep", TRUE, &lf.ep, NULL, NULL }, { "etp", TRUE, &lf.etp, NULL, NULL },
    { "schedule", TRUE, &lf.schedule, NULL, NULL },
    { "seq-len", TRUE, &lf.seq, NULL, NULL }, { "gpu-variation", TRUE, &lf.variation, NULL, NULL },
    { "moe-imbalance", TRUE, &lf.imbalance, NULL, NULL },
    { "moe-expert-capacity-factor", TRUE, &lf.capacity, NULL, NULL },
    { "moe-pad-expert-input-to-capacity", FALSE, NULL, &lf.pad, NULL },
    { "max-nodes", TRUE, &lf.max_nodes, NULL, NULL }, { "min-headroom", TRUE, &lf.headroom, NULL, NULL },
    { "merge", TRUE, NULL, NULL, merge_files }, { "scale", FALSE, NULL, &scale, NULL },
    { "fp8", TRUE, &fp8_s, NULL, NULL },
    { "fp4", TRUE, &fp4_s, NULL, NULL },
    { "train-tokens", TRUE, &train_s, NULL, NULL }, { "gpu-hour-price", TRUE, &price_s, NULL, NULL }, { "gpus", TRUE, &lf.gpus, NULL, NULL },
    { "wide", FALSE, NULL, &wide, NULL }, { "all", FALSE, NULL, &all, NULL },
    { "quiet", FALSE, NULL, &quiet, NULL }, { "calibration", TRUE, &calibration, NULL, NULL }, { "help", FALSE, NULL, &help, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  g_autofree char *topo_path = NULL, *model_path = NULL;
  g_autoptr (SimModel) model = NULL;
  g_autoptr (GPtrArray) ranked = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GString) table = g_string_new (NULL);
  g_autoptr (GString) notes = g_string_new (NULL);
  g_autofree char *json_text = NULL, *title = NULL;
  g_autoptr (SimSweep) sw = NULL;
  Job job = { .nodes = 0, .threads = (int) g_get_num_processors (), .shard = 1, .shards = 1, .gb = 0 };
  int top = 10, max_nodes = 0, keep = 0;
  gint64 t0 = g_get_monotonic_time ();

  if (!gather_merge_files (&argc, argv, merge_files, error))
    return 2;
  if (!sim_cli_parse (argc, argv, 2, options, "sweep", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (top_s != NULL && !sim_cli_int ("top", top_s, 1, 100000, &top, error))
    return 2;
  if (merge_files->len > 0)
    return merge (merge_files, top, csv, chart, error);
  if (topology == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "sweep: expected --topology FILE|NAME (or --merge FILE...); see sim sweep --help");
    return 2;
  }
  if (!sim_cli_parse_training (train_s, price_s, &tokens, &price, error))
    return 2;
  if (!parse_job (nodes_s, threads_s, jobs_s, gb_s, shard_s, &job, error))
    return 2;
  if (!parse_limits (&lf, &constraints, &cap, &seq, &variation, &gpus, &ask, error))
    return 2;
  /* the output, before hours of simulation */
  if (json != NULL && !sim_cli_check_json (json, error))
    return 2;
  if (html != NULL && !sim_cli_check_html (html, error))
    return 2;
  if (!check_csv (csv, error) || !check_chart (chart, error))
    return 2;
  if ((topo_path = sim_paths_resolve (topology, "topologies", error)) == NULL ||
      (model_path = sim_paths_resolve (model_s != NULL ? model_s : "llama3-70b", "models", error)) == NULL ||
      (model = sim_model_load (model_path, error)) == NULL ||
      !sim_sweep_check_experts (model, &constraints, error))
    return 2;

  {
    /* the cluster as every command loads it: its warnings said once, a
     * rack-scale --racks checked */
    g_autoptr (SimTopology) check = sim_cli_load_topology (topo_path, job.nodes, gpus, calibration, error);
    ask.topology = topo_path, ask.nodes = job.nodes, ask.gpus = gpus, ask.calibration = calibration;
    ask.global_batch = job.gb, ask.seq_len = seq, ask.gpu_variation = variation, ask.scale = scale;
    ask.max_nodes = cap, ask.constraints = constraints, ask.fp8 = fp8_s, ask.fp4 = fp4_s;
    if (check == NULL || (sw = sim_sweep_prepare (model, &ask, job.threads, &max_nodes, error)) == NULL)
      return 2;
  }
  /* this shard's rows, evaluated on the pool; the leaders simulated in full */
  sim_sweep_keep_shard (sw, job.shard, job.shards);
  progress_start_us = g_get_monotonic_time ();
  /* the charts and the CSV show what was simulated: every layout that
   * fits only with --all, which a user asks for knowing its cost */
  keep = all ? 0 : top;
  sim_sweep_set_keep (sw, keep);
  sim_sweep_run (sw, job.threads, !quiet ? progress : NULL, GINT_TO_POINTER (isatty (STDERR_FILENO)));
  ranked = sim_sweep_rank (sw, top);

  if (json != NULL) {
    /* what shapes the sweep, so that --merge joins only shards of one */
    g_autofree char *shaping = sim_sweep_options_text (sw, &ask, keep);
    json_text = sim_sweep_json (sw, topology, shaping, job.shard, job.shards);
  }
  /* the text, unless the JSON on stdout is all that is asked for */
  if (json_text == NULL || !g_str_equal (json, "-") || html != NULL) {
    const SimTopology *big = sim_sweep_cluster (sw, max_nodes);
    int n = big != NULL ? sim_topology_n_gpus (big) : 0;
    title = sweep_title (model, topology, sw, max_nodes, n, gb_s, scale, seq, variation, &ask, top);
    if (job.shards > 1)
      g_string_append_printf (table, "shard %d of %d\n\n", job.shard, job.shards);
    {
      g_autofree char *text = sim_table_sweep (ranked, top, scale, wide);
      g_string_append (table, text);
    }
    {
      g_autofree char *counts = sim_table_sweep_counts (sim_sweep_rows (sw));
      g_string_append (notes, counts);
    }
    print_best (notes, sw, model, ranked, scale, wide, tokens, price);
  }
  if (!write_outputs (json, json_text, csv, chart, scale, html, title, table->str, notes->str, sw, model, ranked, top, error))
    return 2;
  if (json_text != NULL && g_str_equal (json, "-")) {
    fputs (json_text, stdout);
    return job.shards > 1 ? 0 : status_of (sim_sweep_rows (sw));
  }
  sim_cli_append_wrapped (out, title, 0, 2, wide ? G_MAXINT / 2 : SIM_CLI_COLUMNS);
  g_string_append_printf (out, "\n\n%s\n%s", table->str, notes->str);
  fputs (out->str, stdout);
  /* wall time is not a result: stderr, so that stdout is the same for the same inputs */
  if (!quiet)
    fprintf (stderr, "%d threads, %.1f s\n", job.threads, (double) (g_get_monotonic_time () - t0) / 1e6);
  /* a shard's verdict is partial: the merge gives the sweep's */
  return job.shards > 1 ? 0 : status_of (sim_sweep_rows (sw));
}
