/* bench-estimate.c — the time of one estimate in-process, each layout
 * resolved, ledgered and simulated (symmetry-reduced) `REPEAT` times;
 * prints the median and the slowest of the per-layout medians, the figure
 * the target is 2 ms per estimate.
 *
 * Without --layouts: a stress set, the published layouts of
 * tests/validation/data/training_calibration.csv's NeMo rows that a shipped
 * model file describes (GPT-3 175B on dgx-h100, as NVIDIA's DGX Cloud
 * recipes ran it, the slowest of them) and the headline layouts of the
 * README.  With --layouts FILE: the lines of FILE (row, topology path,
 * nodes, model path, plan; tab-separated), as bench/validation-layouts.py
 * writes them for every published run of tests/validation's calibration
 * file; only the slowest ten are listed (--all: every one).
 *
 * By default a long 1F1B or interleaved step comes from its steady state,
 * as sim's report does (sim_iteration_run_steady); with --whole every
 * micro-batch is simulated, as for sim's charts (sim_iteration_run, its
 * collectives alone where nothing meets them); with --exact every
 * micro-batch and every collective's flows (sim --exact:
 * sim_iteration_run_reference).
 *
 *   bench-estimate SOURCE_ROOT [--whole|--exact] [--layouts FILE [--all]] */
#include <stdio.h>
#include <stdlib.h>

#include "sim-run.h"

#define REPEAT 5

typedef struct {
  const char *topology; /* under SOURCE_ROOT/topologies, or a path (--layouts) */
  int nodes;
  const char *model;    /* under SOURCE_ROOT/models, or a path (--layouts) */
  const char *plan;
} Layout;

typedef struct {
  double ms;
  const char *name;
} Timed;

/* the dgxc GPT-3 175B rows (TP 4, PP 8, VP 12, MBS 1, GBS = 2 x GPUs, on
 * 128 ... 2048 H100s) and the README's examples */
static const Layout layouts[] = {
  { "dgx-h100.xml", 16, "gpt3-175b.xml", "tp=4,pp=8,dp=4,gb=256,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 32, "gpt3-175b.xml", "tp=4,pp=8,dp=8,gb=512,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 64, "gpt3-175b.xml", "tp=4,pp=8,dp=16,gb=1024,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 128, "gpt3-175b.xml", "tp=4,pp=8,dp=32,gb=2048,schedule=interleaved,v=12" },
  { "dgx-h100.xml", 256, "gpt3-175b.xml", "tp=4,pp=8,dp=64,gb=4096,schedule=interleaved,v=12" },
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=4,dp=2" },
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=8,dp=1" },
  { "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,pp=1,dp=8,gb=64" },
  { "dgx-h100.xml", 0, "llama3-405b.xml", "tp=8,pp=8,dp=4" },
  { "dgx-a100.xml", 128, "gpt3-175b.xml", "tp=8,pp=8,dp=16,gb=1536" },
};

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static int
cmp_timed (const void *a, const void *b)
{
  return cmp_double (&((const Timed *) a)->ms, &((const Timed *) b)->ms);
}

/* the median of REPEAT estimates of l, in ms */
static double
time_layout (const char *tpath, const char *mpath, const Layout *l, SimRunFlags flags)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = sim_topology_load (tpath, l->nodes, &error);
  g_autoptr (SimModel) m = NULL;
  double ms[REPEAT];
  if (t == NULL || (m = sim_model_load (mpath, &error)) == NULL)
    g_error ("%s", error->message);
  for (int k = 0; k < REPEAT; k++) {
    g_autoptr (SimPlanRequest) p = sim_plan_request_new ();
    gint64 t0;
    g_autoptr (SimRun) r = NULL;
    if (!sim_plan_request_parse_string (p, l->plan, &error))
      g_error ("%s", error->message);
    t0 = g_get_monotonic_time ();
    r = sim_run_evaluate (t, m, p, l->plan, flags, &error);
    ms[k] = (double) (g_get_monotonic_time () - t0) / 1e3;
    if (r == NULL)
      g_error ("%s: %s", l->plan, error->message);
  }
  qsort (ms, REPEAT, sizeof ms[0], cmp_double);
  return ms[REPEAT / 2];
}

/* the lines of a --layouts file, into rows (owning the strings in lines) */
static GArray *
read_layouts (const char *path, char ***lines, GPtrArray *names)
{
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (Layout));
  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("%s", error->message);
  *lines = g_strsplit (text, "\n", -1);
  for (char **line = *lines; *line != NULL; line++) {
    char **f;
    Layout l;
    if (**line == '\0')
      continue;
    f = g_strsplit (*line, "\t", -1);
    if (g_strv_length (f) != 5)
      g_error ("%s: expected row, topology, nodes, model and plan, tab-separated: %s", path, *line);
    l.topology = f[1], l.nodes = atoi (f[2]), l.model = f[3], l.plan = f[4];
    g_ptr_array_add (names, f); /* keeps the fields */
    g_array_append_val (rows, l);
  }
  return rows;
}

int
main (int argc, char **argv)
{
  const char *root = argc > 1 ? argv[1] : ".", *file = NULL;
  gboolean exact = FALSE, whole = FALSE, all = FALSE;
  SimRunFlags flags;
  g_autoptr (GArray) rows = NULL;
  g_autoptr (GPtrArray) fields = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  g_auto (GStrv) lines = NULL;
  g_autofree Timed *timed = NULL;
  guint n;

  for (int i = 2; i < argc; i++) {
    if (g_str_equal (argv[i], "--exact"))
      exact = whole = TRUE;
    else if (g_str_equal (argv[i], "--whole"))
      whole = TRUE;
    else if (g_str_equal (argv[i], "--all"))
      all = TRUE;
    else if (g_str_equal (argv[i], "--layouts") && i + 1 < argc)
      file = argv[++i];
    else
      g_error ("usage: bench-estimate SOURCE_ROOT [--whole|--exact] [--layouts FILE [--all]]");
  }
  flags = SIM_RUN_TIME | (exact ? SIM_RUN_REFERENCE : whole ? 0 : SIM_RUN_STEADY);
  if (file != NULL)
    rows = read_layouts (file, &lines, fields);
  else
  {
    rows = g_array_new (FALSE, FALSE, sizeof (Layout));
    g_array_append_vals (rows, layouts, G_N_ELEMENTS (layouts));
  }
  n = rows->len;
  timed = g_new (Timed, MAX (n, 1));
  if (file == NULL)
    printf ("%-14s %-16s %-48s %10s\n", "cluster", "model", "plan", "median ms");
  else
    printf ("%-80s %10s\n", all ? "every run" : "the slowest ten runs", "median ms");
  for (guint i = 0; i < n; i++) {
    const Layout *l = &g_array_index (rows, Layout, i);
    g_autofree char *tp = file ? g_strdup (l->topology) : g_build_filename (root, "topologies", l->topology, NULL);
    g_autofree char *mp = file ? g_strdup (l->model) : g_build_filename (root, "models", l->model, NULL);
    timed[i].ms = time_layout (tp, mp, l, flags);
    timed[i].name = file ? ((char **) g_ptr_array_index (fields, i))[0] : NULL;
    if (file == NULL)
      printf ("%-14s %-16s %-48s %10.2f\n", l->topology, l->model, l->plan, timed[i].ms);
  }
  qsort (timed, n, sizeof timed[0], cmp_timed);
  /* a file's rows: the slowest ten, or all */
  for (guint i = n > 10 && !all ? n - 10 : 0; file != NULL && i < n; i++)
    printf ("%-80s %10.2f\n", timed[i].name, timed[i].ms);
  printf ("median of %u layouts%s%s: %.2f ms per estimate (slowest %.2f ms; target 2 ms)\n",
          n, file ? " of the published runs" : "", exact ? " (--exact)" : whole ? " (--whole)" : "",
          n > 0 ? (n % 2 ? timed[n / 2].ms : (timed[n / 2 - 1].ms + timed[n / 2].ms) / 2) : 0,
          n > 0 ? timed[n - 1].ms : 0);
  return 0;
}
