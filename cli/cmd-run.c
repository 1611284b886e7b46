/* cmd-run.c — the plain sim command: one layout on one cluster.
 *
 *   sim --topology dgx8x4.xml --tp 8 --pp 4 --dp 2 [plan flags] [--json FILE|-]
 *
 * Exit status as grep and diff: 0 the plan fits, 1 it does not (out of
 * memory; the report and every output file are still written, since the
 * answer is valid, only negative), 2 bad input or an error, which is one
 * line on stderr.  stdout carries results only.  Output files are checked
 * before the simulation and written as a set, all of them or none
 * (sim-io.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim-config.h"
#include "sim-error.h"
#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-io.h"
#include "sim-paths.h"
#include "sim-plan.h"
#include "sim-report.h"
#include "sim-run.h"
#include "sim-sweep.h"
#include "sim-trace.h"
#include "viz-file.h"
#include "viz-html.h"
#include "sim-topology.h"
#include "sim-units.h"

#define DEFAULT_MODEL "llama3-70b"

typedef struct {
  char *topology;
  char *model;
  int nodes;
  int gpus;
  gboolean wide;
  char *json;
  gboolean help;
  gboolean version;
  gboolean full_fidelity;
  gboolean exact;
  gboolean memory_only;
  gboolean search, no_search;
  char *gantt;
  char *memory_chart;
  char *html;
  char *trace;
  char *csv;
  char *output_dir;
  char *ranks;
  char *calibration;
  char *efficiency;
  char *config;
} Cli;

static void
cli_clear (Cli *cli)
{
  g_free (cli->topology);
  g_free (cli->model);
  g_free (cli->json);
  g_free (cli->gantt);
  g_free (cli->memory_chart);
  g_free (cli->html);
  g_free (cli->trace);
  g_free (cli->csv);
  g_free (cli->output_dir);
  g_free (cli->ranks);
  g_free (cli->calibration);
  g_free (cli->efficiency);
  g_free (cli->config);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Cli, cli_clear)

static void
print_help (gboolean wide)
{
  g_autofree char *plan_help = sim_plan_help ();
  g_autofree char *plan_text = sim_cli_format_options (plan_help, wide);
  g_autofree char *own = NULL;
  static const char *options =
      "  --topology FILE|NAME               cluster XML: a path, or a name in topologies/ (sim list\n"
      "                                     topologies)\n"
      "  --model FILE|NAME                  model XML: a path, or a name in models/ (default " DEFAULT_MODEL
      "; sim list models)\n"
      "  --nodes N                          use N nodes of the cluster instead of the file's count\n"
      "  --racks N                          the same, for a cluster file whose node is a rack\n"
      "                                     (gb200-nvl72, gb300-nvl72: 72 GPUs in one NVLink domain)\n"
      "  --gpus N                           use N GPUs of the cluster: 1, 2, 4 or 8 of one node (of a\n"
      "                                     rack, whole compute trays of 4), or a multiple of a node's\n"
      "                                     GPUs\n"
      "  --json FILE|-                      write the result as JSON (- for stdout alone)\n"
      "  --config FILE                      the plan (and model) of a framework's own config:\n"
      "                                     torchtitan's TOML, NeMo's or Megatron-Bridge's YAML;\n"
      "                                     flags given win; what it cannot map is listed\n"
      "  --calibration FILE                 measured rates (from sim calibrate) applied over the\n"
      "                                     topology's own\n"
      "  --efficiency KEY=VALUE,...         override the GPU's training efficiency constants:\n"
      "                                     sustained-clock, hbm, kernel-fixed, host-launch,\n"
      "                                     comm-slowdown (see topologies/README.md)\n"
      "  --full-fidelity                    simulate every data-parallel replica, not one\n"
      "  --exact                            simulate every micro-batch (default: a long 1F1B or\n"
      "                                     interleaved step from its steady state, proven\n"
      "                                     periodic; charts, traces and CSV imply that) and\n"
      "                                     every TP collective as its flows (default: one delay\n"
      "                                     of its time alone where no other flow meets it) and\n"
      "                                     every TP rank's gradient traffic (default: rank 0's\n"
      "                                     where the others mirror it)\n"
      "  --memory-only                      the memory ledger alone, no time simulation\n"
      "  --[no-]search                      for a plan that does not fit, look for the fastest\n"
      "                                     layout of the job that does, as sim sweep --top 1 (default:\n"
      "                                     on up to 256 GPUs; a second on tens of GPUs, a minute or\n"
      "                                     more on hundreds)\n"
      "  --train-tokens COUNT               add the time to train on COUNT tokens (15T, 300B):\n"
      "                                     days and GPU-hours at the simulated rate\n"
      "  --gpu-hour-price PRICE             with --train-tokens, the cost at PRICE per GPU-hour\n"
      "  --gantt FILE                       Gantt chart (.png, .svg or .pdf)\n"
      "  --memory-chart FILE                memory over time (.png, .svg or .pdf)\n"
      "  --html FILE.html                   the report and both charts as one self-contained page\n"
      "                                     (no network, no scripts) to send to a colleague\n"
      "  --ranks LIST                       GPUs whose stages the charts show (e.g. 0,24,56)\n"
      "  --trace FILE                       Chrome/Perfetto trace (JSON)\n"
      "  --csv DIR                          spans.csv and memory.csv\n"
      "  --output-dir DIR                   report.txt, report.html (as --html), result.json,\n"
      "                                     gantt.png, memory.png, trace.json and the CSV files,\n"
      "                                     all in DIR\n"
      "  --wide                             tables and help as wide as they come (default: at most\n"
      "                                     100 columns)\n"
      "  -h, --help, --version\n";
  own = sim_cli_format_options (options, wide);
  printf ("usage: sim --topology FILE|NAME [--model FILE|NAME] [--nodes N | --gpus N] [plan flags]\n"
          "           [--json FILE|-] [--wide] [--gantt FILE] ...\n"
          "       sim compare --topology FILE|NAME --plan PLAN --plan PLAN ...   (sim compare --help)\n"
          "       sim sweep --topology FILE|NAME [--model FILE|NAME] ...         (sim sweep --help)\n"
          "       sim collective --topology FILE|NAME --op OP --gpus N ...       (sim collective --help)\n"
          "       sim validate --topology FILE|NAME --nccl FILE ...              (sim validate --help)\n"
          "       sim calibrate --gpu NAME -o FILE --gemm|--hbm|--nccl FILE ...  (sim calibrate --help)\n"
          "       sim kernels --topology FILE|NAME --model FILE|NAME ...         (sim kernels --help)\n"
          "       sim shapes --model FILE|NAME [--tp N] ...                      (sim shapes --help)\n"
          "       sim list models|topologies|gpus                                (sim list --help)\n"
          "       sim topology import --nccl-topo FILE --topo-m FILE --ibstat FILE (sim topology --help)\n"
          "\n"
          "Does a transformer training layout fit in GPU memory, and how long does a step take?\n"
          "\n"
          "%s"
          "\n"
          "exit status: 0 the plan fits in GPU memory, 1 it does not (OUT OF MEMORY; the\n"
          "report and the files asked for are still written), 2 bad input or an error\n"
          "\n"
          "plan flags (also usable as key=value in plan strings):\n%s",
          own, plan_text);
}

/* the stages of the GPUs listed in --ranks */
static gboolean
parse_ranks (const char *list, const SimPlan *plan, GArray *stages, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (list, ",", -1);
  for (guint i = 0; parts[i] != NULL; i++) {
    guint64 r = 0;
    int c[SIM_DIM_COUNT];
    gboolean seen = FALSE;
    if (!g_ascii_string_to_unsigned (g_strstrip (parts[i]), 10, 0,
                                     (guint64) sim_plan_world_size (plan) - 1, &r, NULL)) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "--ranks: expected GPU numbers from 0 to %d separated by commas, got '%s'",
                   sim_plan_world_size (plan) - 1, parts[i]);
      return FALSE;
    }
    sim_plan_rank_coords (plan, (int) r, c);
    for (guint k = 0; k < stages->len; k++)
      seen |= g_array_index (stages, int, k) == c[SIM_DIM_PP];
    if (!seen)
      g_array_append_val (stages, c[SIM_DIM_PP]);
  }
  return TRUE;
}

/* ---- outputs: every one checked before the simulation, then all
 * staged in one set and committed together (sim-io.h) ---- */

static gboolean
check_file (const char *flag, const char *path, gboolean parents, GError **error)
{
  if (sim_output_check (path, parents, error))
    return TRUE;
  g_prefix_error (error, "%s: ", flag);
  return FALSE;
}

static gboolean
check_chart (const char *flag, const char *path, gboolean parents, GError **error)
{
  if (viz_check_chart_path (path, error) && sim_output_check (path, parents, error))
    return TRUE;
  g_prefix_error (error, "%s: ", flag);
  return FALSE;
}

/* the files of DIR/NAME outputs (--output-dir, --csv) */
static gboolean
check_in_dir (const char *flag, const char *dir, const char *const *names, GError **error)
{
  for (guint i = 0; names[i] != NULL; i++) {
    g_autofree char *p = g_build_filename (dir, names[i], NULL);
    gboolean ok = g_str_has_suffix (names[i], ".png") ? check_chart (flag, p, TRUE, error)
                                                       : check_file (flag, p, TRUE, error);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

static const char *const dir_files_memory[] = { "report.txt", "report.html", "result.json", "memory.png", NULL };
static const char *const dir_files_time[] = { "gantt.png", "trace.json", "spans.csv", "memory.csv", NULL };
static const char *const csv_files[] = { "spans.csv", "memory.csv", NULL };

/* everything about the outputs that can be known before simulating */
/* the outputs that draw the step's timeline need every micro-batch
 * simulated: an extrapolated steady state has no spans */
static gboolean
needs_timeline (const Cli *cli)
{
  return cli->exact || cli->gantt != NULL || cli->memory_chart != NULL || cli->html != NULL ||
         cli->trace != NULL || cli->csv != NULL || cli->output_dir != NULL;
}

static gboolean
check_outputs (const Cli *cli, GError **error)
{
  if (cli->memory_only && (cli->gantt != NULL || cli->trace != NULL || cli->csv != NULL)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--gantt, --trace and --csv need the time simulation; drop --memory-only");
    return FALSE;
  }
  if (cli->output_dir != NULL &&
      (!check_in_dir ("--output-dir", cli->output_dir, dir_files_memory, error) ||
       (!cli->memory_only && !check_in_dir ("--output-dir", cli->output_dir, dir_files_time, error))))
    return FALSE;
  if (cli->json != NULL && !g_str_equal (cli->json, "-") && !check_file ("--json", cli->json, FALSE, error))
    return FALSE;
  if (cli->gantt != NULL && !check_chart ("--gantt", cli->gantt, FALSE, error))
    return FALSE;
  if (cli->memory_chart != NULL && !check_chart ("--memory-chart", cli->memory_chart, FALSE, error))
    return FALSE;
  if (cli->trace != NULL && !check_file ("--trace", cli->trace, FALSE, error))
    return FALSE;
  if (cli->html != NULL && !sim_cli_check_html (cli->html, error))
    return FALSE;
  if (cli->csv != NULL && !check_in_dir ("--csv", cli->csv, csv_files, error))
    return FALSE;
  return TRUE;
}

static gboolean
stage_text (SimOutputSet *set, const char *flag, const char *path, const char *text, GError **error)
{
  if (sim_output_set_add (set, path, text, -1, error))
    return TRUE;
  g_prefix_error (error, "%s: ", flag);
  return FALSE;
}

static gboolean
stage_chart (SimOutputSet *set, const char *flag, const char *path, VizChart chart,
             const VizInput *vi, GError **error)
{
  if (viz_stage_chart (set, path, chart, vi, error))
    return TRUE;
  g_prefix_error (error, "%s: ", flag);
  return FALSE;
}

/* the --html page (viz_stage_html_report) */
static gboolean
stage_html (SimOutputSet *set, const char *flag, const char *path, const VizInput *vi, GError **error)
{
  if (viz_stage_html_report (set, path, vi, error))
    return TRUE;
  g_prefix_error (error, "%s: ", flag);
  return FALSE;
}

static gboolean
stage_mkdir (SimOutputSet *set, const char *flag, const char *dir, GError **error)
{
  if (sim_output_set_mkdir (set, dir, error))
    return TRUE;
  g_prefix_error (error, "%s: ", flag);
  return FALSE;
}

/* every file asked for, staged in set */
static gboolean
stage_outputs (SimOutputSet *set, const Cli *cli, const SimRun *in, GError **error)
{
  g_autoptr (GArray) stages = g_array_new (FALSE, FALSE, sizeof (int));
  VizInput vi = { in, NULL, 0 };
  gboolean need_time = cli->gantt != NULL || cli->trace != NULL || cli->csv != NULL;

  if (cli->ranks != NULL) {
    if (!parse_ranks (cli->ranks, in->plan, stages, error))
      return FALSE;
    vi.stages = (const int *) (gpointer) stages->data;
    vi.n_stages = (int) stages->len;
  }
  if (need_time && in->time == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--gantt, --trace and --csv need the time simulation; drop --memory-only");
    return FALSE;
  }
  if (cli->output_dir != NULL) {
    const char *d = cli->output_dir;
    g_autofree char *report = sim_report_text (in);
    g_autofree char *json = sim_report_json (in);
    g_autofree char *p_report = g_build_filename (d, "report.txt", NULL);
    g_autofree char *p_html = g_build_filename (d, "report.html", NULL);
    g_autofree char *p_json = g_build_filename (d, "result.json", NULL);
    g_autofree char *p_mem = g_build_filename (d, "memory.png", NULL);
    if (!stage_mkdir (set, "--output-dir", d, error) ||
        !stage_text (set, "--output-dir", p_report, report, error) ||
        !stage_html (set, "--output-dir", p_html, &vi, error) ||
        !stage_text (set, "--output-dir", p_json, json, error) ||
        !stage_chart (set, "--output-dir", p_mem, VIZ_CHART_MEMORY, &vi, error))
      return FALSE;
    if (in->time != NULL) {
      g_autofree char *p_gantt = g_build_filename (d, "gantt.png", NULL);
      g_autofree char *p_trace = g_build_filename (d, "trace.json", NULL);
      g_autofree char *p_spans = g_build_filename (d, "spans.csv", NULL);
      g_autofree char *p_memcsv = g_build_filename (d, "memory.csv", NULL);
      g_autofree char *trace = sim_trace_json (in);
      g_autofree char *spans = sim_trace_spans_csv (in);
      g_autofree char *memcsv = sim_trace_memory_csv (in);
      if (!stage_chart (set, "--output-dir", p_gantt, VIZ_CHART_GANTT, &vi, error) ||
          !stage_text (set, "--output-dir", p_trace, trace, error) ||
          !stage_text (set, "--output-dir", p_spans, spans, error) ||
          !stage_text (set, "--output-dir", p_memcsv, memcsv, error))
        return FALSE;
    }
  }
  if (cli->json != NULL && !g_str_equal (cli->json, "-")) {
    g_autofree char *json = sim_report_json (in);
    if (!stage_text (set, "--json", cli->json, json, error))
      return FALSE;
  }
  if (cli->gantt != NULL && !stage_chart (set, "--gantt", cli->gantt, VIZ_CHART_GANTT, &vi, error))
    return FALSE;
  if (cli->memory_chart != NULL &&
      !stage_chart (set, "--memory-chart", cli->memory_chart, VIZ_CHART_MEMORY, &vi, error))
    return FALSE;
  if (cli->html != NULL && !stage_html (set, "--html", cli->html, &vi, error))
    return FALSE;
  if (cli->trace != NULL) {
    g_autofree char *trace = sim_trace_json (in);
    if (!stage_text (set, "--trace", cli->trace, trace, error))
      return FALSE;
  }
  if (cli->csv != NULL) {
    g_autofree char *p_spans = g_build_filename (cli->csv, "spans.csv", NULL);
    g_autofree char *p_memcsv = g_build_filename (cli->csv, "memory.csv", NULL);
    g_autofree char *spans = sim_trace_spans_csv (in);
    g_autofree char *memcsv = sim_trace_memory_csv (in);
    if (!stage_mkdir (set, "--csv", cli->csv, error) ||
        !stage_text (set, "--csv", p_spans, spans, error) ||
        !stage_text (set, "--csv", p_memcsv, memcsv, error))
      return FALSE;
  }
  return TRUE;
}

/* the search for the fastest layout that fits says how far it is on
 * stderr once it has run 5 s, then each minute */
static gint64 search_start_us, search_logged_us;
static GMutex search_lock;

static void
search_progress (int done, int simulated, int total, gpointer unused)
{
  gint64 now = g_get_monotonic_time ();
  g_mutex_lock (&search_lock);
  if (done < total && now - search_start_us >= 5000000 &&
      (search_logged_us == 0 || now - search_logged_us >= 60000000)) {
    search_logged_us = now;
    fprintf (stderr, "sim: the plan does not fit; looking for the fastest layout that does: "
                     "%d of %d layouts in %.0f s, %d of them simulated (--no-search skips this)\n",
             done, total, (double) (now - search_start_us) / 1e6, simulated);
    fflush (stderr);
  }
  g_mutex_unlock (&search_lock);
}

/* all the files or none: a failure aborts the set, which leaves every
 * target as it was */
static gboolean
write_outputs (const Cli *cli, const SimRun *in, GError **error)
{
  g_autoptr (SimOutputSet) set = sim_output_set_new ();
  return stage_outputs (set, cli, in, error) && sim_output_set_commit (set, error);
}

/* --ranks against the layout, before simulating it: a request that does
 * not resolve is left for sim_run_evaluate to report */
static gboolean
check_ranks (const Cli *cli, const SimPlanRequest *req, const SimTopology *topo, const SimModel *model,
             GError **error)
{
  g_autoptr (SimPlan) plan = NULL;
  g_autoptr (GArray) stages = NULL;
  if (cli->ranks == NULL)
    return TRUE;
  if ((plan = sim_plan_resolve (req, topo, model, NULL)) == NULL)
    return TRUE;
  stages = g_array_new (FALSE, FALSE, sizeof (int));
  return parse_ranks (cli->ranks, plan, stages, error);
}

int
sim_cmd_run (int argc, char **argv, GError **error)
{
  g_auto (Cli) cli = { 0 };
  g_autoptr (SimPlanRequest) plan = sim_plan_request_new ();
  g_autofree char *topo_path = NULL;
  g_autofree char *model_path = NULL;
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (SimModel) model = NULL;
  g_autoptr (SimRun) r = NULL;
  g_autoptr (SimConfig) config = NULL;

  g_autofree char *nodes = NULL;
  g_autofree char *gpus = NULL;
  g_autofree char *train_tokens = NULL;
  g_autofree char *price = NULL;
  double tokens = 0, per_hour = 0;
  const SimCliOption options[] = {
    { "gpus", TRUE, &gpus, NULL, NULL }, { "wide", FALSE, NULL, &cli.wide, NULL },
    { "train-tokens", TRUE, &train_tokens, NULL, NULL }, { "gpu-hour-price", TRUE, &price, NULL, NULL },
    { "topology", TRUE, &cli.topology, NULL, NULL }, { "model", TRUE, &cli.model, NULL, NULL },
    { "nodes", TRUE, &nodes, NULL, NULL }, { "json", TRUE, &cli.json, NULL, NULL },
    { "gantt", TRUE, &cli.gantt, NULL, NULL }, { "memory-chart", TRUE, &cli.memory_chart, NULL, NULL },
    { "trace", TRUE, &cli.trace, NULL, NULL }, { "csv", TRUE, &cli.csv, NULL, NULL },
    { "html", TRUE, &cli.html, NULL, NULL },
    { "output-dir", TRUE, &cli.output_dir, NULL, NULL }, { "ranks", TRUE, &cli.ranks, NULL, NULL },
    { "calibration", TRUE, &cli.calibration, NULL, NULL },
    { "config", TRUE, &cli.config, NULL, NULL },
    { "efficiency", TRUE, &cli.efficiency, NULL, NULL },
    { "full-fidelity", FALSE, NULL, &cli.full_fidelity, NULL },
    { "exact", FALSE, NULL, &cli.exact, NULL },
    { "memory-only", FALSE, NULL, &cli.memory_only, NULL },
    { "search", FALSE, NULL, &cli.search, NULL },
    { "no-search", FALSE, NULL, &cli.no_search, NULL },
    { "help", FALSE, NULL, &cli.help, NULL }, { "version", FALSE, NULL, &cli.version, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };

  if (!sim_cli_parse_plan (argc, argv, 1, options, NULL, plan, error))
    return 2;
  if (nodes != NULL && !sim_cli_int ("nodes", nodes, 1, 65536, &cli.nodes, error))
    return 2;
  if (gpus != NULL && !sim_cli_int ("gpus", gpus, 1, SIM_TOPOLOGY_MAX_GPUS, &cli.gpus, error))
    return 2;
  if (!sim_cli_parse_training (train_tokens, price, &tokens, &per_hour, error))
    return 2;
  if (cli.help) {
    print_help (cli.wide);
    return 0;
  }
  if (cli.version) {
    printf ("sim %s\n", SIM_VERSION);
    return 0;
  }
  if (cli.topology == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "expected --topology FILE|NAME (for example --topology dgx8x4; sim list topologies); see sim --help");
    return 2;
  }
  topo_path = sim_paths_resolve (cli.topology, "topologies", error);
  if (topo_path == NULL)
    return 2;
  topo = sim_cli_load_topology (topo_path, cli.nodes, cli.gpus, cli.calibration, error);
  if (topo == NULL)
    return 2;
  /* a framework's config: its plan where no flag sets the same, its model
   * where --model gives none */
  if (cli.config != NULL) {
    if ((config = sim_config_load (cli.config, error)) == NULL ||
        !sim_config_apply (config, plan, sim_topology_n_gpus (topo), error)) {
      g_prefix_error (error, "--config: ");
      return 2;
    }
    if (cli.model == NULL && config->model != NULL)
      cli.model = g_strdup (config->model);
  }
  model_path = sim_paths_resolve (cli.model != NULL ? cli.model : DEFAULT_MODEL, "models", error);
  if (model_path == NULL)
    return 2;
  if (cli.efficiency != NULL && !sim_topology_set_efficiency (topo, cli.efficiency, error)) {
    g_prefix_error (error, "--efficiency: ");
    return 2;
  }
  model = sim_model_load (model_path, error);
  if (model == NULL)
    return 2;
  if (!check_outputs (&cli, error) || !check_ranks (&cli, plan, topo, model, error))
    return 2;
  {
    gboolean model_default = cli.model == NULL;
    /* the layout's own size, to suggest --nodes/--gpus when it does not match */
    int tp = (int) sim_plan_request_value (plan, "tp"), cp = (int) sim_plan_request_value (plan, "cp");
    int pp = (int) sim_plan_request_value (plan, "pp"), dp = (int) sim_plan_request_value (plan, "dp");
    int want = tp > 0 && pp > 0 && dp > 0 ? tp * MAX (cp, 1) * pp * dp : 0;
    r = sim_run_evaluate (topo, model, plan, NULL,
                          SIM_RUN_REMEDIES | (cli.memory_only ? 0 : SIM_RUN_TIME) |
                              (cli.full_fidelity ? SIM_RUN_FULL : 0) |
                              (cli.exact ? SIM_RUN_REFERENCE : 0) |
                              (needs_timeline (&cli) ? 0 : SIM_RUN_STEADY),
                          error);
    if (r == NULL) {
      g_autofree char *hint = sim_cli_fit_hint (topo, want);
      if (hint != NULL && g_error_matches (*error, SIM_ERROR, SIM_ERROR_PLAN))
      {
        char *old = (*error)->message;
        (*error)->message = g_strdup_printf ("%s; or %s", old, hint);
        g_free (old);
      }
      return 2;
    }
    /* resolve() resets the list; keep the model default in front */
    if (model_default)
      g_ptr_array_insert (r->plan->defaults, 0, g_strdup ("--model " DEFAULT_MODEL));
    if (config != NULL) {
      g_autoptr (GPtrArray) notes = sim_config_notes (config, r->plan);
      for (guint i = 0; i < notes->len; i++)
        g_ptr_array_insert (r->plan->defaults, (int) i, g_strdup (g_ptr_array_index (notes, i)));
    }
    r->train_tokens = tokens;
    r->gpu_hour_price = per_hour;
  }
  if (cli.search && cli.no_search) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--search and --no-search: expected one of them");
    return 2;
  }
  search_start_us = g_get_monotonic_time ();
  if (!cli.no_search &&
      !sim_sweep_offer_fastest_fit (r, topo_path, cli.nodes, cli.gpus, cli.calibration, cli.efficiency,
                                    cli.search, (int) g_get_num_processors (), search_progress, NULL,
                                    error))
    return 2;
  if (!write_outputs (&cli, r, error))
    return 2;
  if (cli.json != NULL && g_str_equal (cli.json, "-")) {
    g_autofree char *json = sim_report_json (r);
    fputs (json, stdout);
  } else {
    g_autofree char *text = sim_report_text_wide (r, cli.wide);
    fputs (text, stdout);
  }
  /* a plan that fits only without the fragmentation allowance (tight)
   * fits: the report says how tight */
  return r->memory->fits ? 0 : 1;
}
