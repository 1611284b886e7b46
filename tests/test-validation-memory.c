/* Validation: activation memory against Korthikanti et al. 2022.
 *
 * For each published point (tests/validation/data/korthikanti2022_memory.csv)
 * the plan is simulated through the same path as the CLI (topology, model,
 * plan resolution, ledger) and compared:
 *   fig1  first-stage activation memory, GiB: the layers' saved activations,
 *         in-flight chunks x layers per chunk x bytes per layer; tolerance 1 %
 *   fig7  per-layer activation memory relative to the same layer without
 *         sequence parallelism or recomputation, percent; tolerance 0.5
 *         percentage points
 * Each point is its own test case, /validation/korthikanti-memory/ROW_ID, so a
 * failure names the row; the last case, .../summary, prints the error table
 * and asserts that all 24 points were compared and none is out of tolerance.
 * Assertions are non-fatal, so every row reports and the table still prints
 * after a failure. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-memory.h"

typedef struct {
  char *row_id, *model, *quantity;
  int nodes, tp, pp, v, mb;
  guint64 gb;
  gboolean sp;
  char *recompute;
  double value;
  /* filled in once by point_evaluate(), by whichever case comes first */
  gboolean evaluated;
  gboolean loaded; /* FALSE when an input did not load: the row fails */
  double simulated;
  double error;     /* fig1: relative, percent; fig7: percentage points */
  double error_rel; /* relative, percent: for the mean of the summary */
  gboolean ok;
} Row;

static void
row_free (Row *r)
{
  g_free (r->row_id);
  g_free (r->model);
  g_free (r->quantity);
  g_free (r->recompute);
  g_free (r);
}

/* the published points, in file order */
static GPtrArray *rows;

static SimMemory *
simulate (const Row *r, gboolean sp, const char *recompute, guint64 *layers_per_chunk,
          GError **error)
{
  g_autofree char *tpath = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx-a100.xml", NULL);
  g_autofree char *mfile = g_strconcat (r->model, ".xml", NULL);
  g_autofree char *mpath = g_build_filename (SIM_SOURCE_DIR, "models", mfile, NULL);
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (SimModel) model = NULL;
  g_autoptr (SimPlanRequest) plan_req = sim_plan_request_new ();
  g_autoptr (SimPlan) plan = NULL;
  g_autofree char *spec = NULL;

  topo = sim_topology_load (tpath, r->nodes, error);
  if (topo == NULL)
    return NULL;
  model = sim_model_load (mpath, error);
  if (model == NULL)
    return NULL;
  /* Megatron 2022: no fused attention; fp16 mixed precision, no distributed optimizer */
  spec = g_strdup_printf ("tp=%d,pp=%d,dp=1,mb=%d,gb=%" G_GUINT64_FORMAT
                          ",no-flash-attention,zero=0,sp=%s,recompute=%s%s%d",
                          r->tp, r->pp, r->mb, r->gb, sp ? "true" : "false", recompute,
                          r->v > 1 ? ",schedule=interleaved,v=" : ",schedule=1f1b,v=", r->v);
  if (!sim_plan_request_parse_string (plan_req, spec, error) || (plan = sim_plan_resolve (plan_req, topo, model, error)) == NULL)
    return NULL;
  *layers_per_chunk = model->layers / (guint64) (r->pp * r->v);
  return sim_memory_compute (topo, model, plan);
}

/* simulates the point and compares it, once; FALSE with error set when an
 * input does not load */
static gboolean
point_evaluate (Row *r, GError **error)
{
  guint64 lpc = 0;

  if (r->evaluated)
    return r->loaded;
  r->evaluated = TRUE;
  if (g_str_equal (r->quantity, "fig1")) {
    g_autoptr (SimMemory) m = simulate (r, r->sp, r->recompute, &lpc, error);
    const SimStageMemory *s0 = NULL;
    if (m == NULL)
      return FALSE;
    s0 = &g_array_index (m->stages, SimStageMemory, 0);
    r->simulated = (double) (s0->in_flight_chunks * lpc * s0->activation_bytes_per_layer) / 1073741824.0;
    r->error = r->error_rel = (r->simulated - r->value) / r->value * 100.0;
    r->ok = fabs (r->error) <= 1.0;
  } else {
    g_autoptr (SimMemory) m = simulate (r, r->sp, r->recompute, &lpc, error);
    g_autoptr (SimMemory) base = NULL;
    if (m == NULL)
      return FALSE;
    base = simulate (r, FALSE, "none", &lpc, error);
    if (base == NULL)
      return FALSE;
    r->simulated = 100.0 * (double) g_array_index (m->stages, SimStageMemory, 0).activation_bytes_per_layer /
                   (double) g_array_index (base->stages, SimStageMemory, 0).activation_bytes_per_layer;
    r->error = r->simulated - r->value;
    r->ok = fabs (r->error) <= 0.5;
    r->error_rel = r->error / r->value * 100.0;
  }
  r->loaded = TRUE;
  return TRUE;
}

static void
print_row (const Row *r)
{
  if (!r->loaded)
    printf ("#   %-42s did not load: FAIL\n", r->row_id);
  else if (g_str_equal (r->quantity, "fig1"))
    printf ("#   %-42s %8.2f GiB %6.2f GiB %+8.2f%% %s\n", r->row_id, r->value, r->simulated, r->error,
            r->ok ? "1 % ok" : "1 % FAIL");
  else
    printf ("#   %-42s %9.2f %% %8.2f %% %+7.2f pt %s\n", r->row_id, r->value, r->simulated, r->error,
            r->ok ? "0.5 pt ok" : "0.5 pt FAIL");
}

/* one published point within its tolerance */
static void
test_point (gconstpointer data)
{
  Row *r = (Row *) data;
  g_autoptr (GError) error = NULL;

  if (!point_evaluate (r, &error)) {
    g_assert_no_error (error);
    return;
  }
  if (!r->ok)
    print_row (r);
  if (g_str_equal (r->quantity, "fig1"))
    g_assert_cmpfloat (fabs (r->error), <=, 1.0);
  else
    g_assert_cmpfloat (fabs (r->error), <=, 0.5);
}

/* the error table, and every point compared and within tolerance */
static void
test_summary (void)
{
  int n = 0, failed = 0;
  double sum_abs_err = 0;

  printf ("# %-42s %10s %10s %9s %s\n", "row", "published", "simulated", "error", "tolerance");
  for (guint i = 0; i < rows->len; i++) {
    Row *r = g_ptr_array_index (rows, i);
    g_autoptr (GError) error = NULL;
    if (!point_evaluate (r, &error))
      printf ("#   %s: %s\n", r->row_id, error != NULL ? error->message : "did not load");
    print_row (r);
    if (r->loaded)
      sum_abs_err += fabs (r->error_rel);
    n++;
    failed += !r->ok;
  }
  printf ("# %d points, mean absolute relative error %.2f %%, %d out of tolerance\n", n,
          n > 0 ? sum_abs_err / n : 0.0, failed);
  g_assert_cmpint (n, ==, 24);
  g_assert_cmpint (failed, ==, 0);
}

/* the points of the CSV; asserts it reads and every line has 12 fields */
static GPtrArray *
load_rows (void)
{
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "korthikanti2022_memory.csv", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) row_free);

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++) {
    g_auto (GStrv) f = NULL;
    Row *r = NULL;
    if (lines[i][0] == '#' || lines[i][0] == '\0')
      continue;
    f = g_strsplit (lines[i], ",", -1);
    g_assert_cmpuint (g_strv_length (f), ==, 12);
    r = g_new0 (Row, 1);
    r->row_id = g_strdup (f[0]), r->model = g_strdup (f[1]), r->nodes = atoi (f[2]);
    r->tp = atoi (f[3]), r->pp = atoi (f[4]), r->v = atoi (f[5]), r->mb = atoi (f[6]);
    r->gb = g_ascii_strtoull (f[7], NULL, 10), r->sp = g_str_equal (f[8], "yes");
    r->recompute = g_strdup (f[9]), r->quantity = g_strdup (f[10]);
    r->value = g_ascii_strtod (f[11], NULL);
    g_ptr_array_add (out, r);
  }
  return out;
}

int
main (int argc, char **argv)
{
  int status = 0;

  g_test_init (&argc, &argv, NULL);
  rows = load_rows ();
  /* a row out of tolerance fails its case and the others still run */
  g_test_set_nonfatal_assertions ();
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index (rows, i);
    g_autofree char *name = g_strconcat ("/validation/korthikanti-memory/", r->row_id, NULL);
    g_test_add_data_func (name, r, test_point);
  }
  g_test_add_func ("/validation/korthikanti-memory/summary", test_summary);
  status = g_test_run ();
  g_ptr_array_unref (rows);
  return status;
}
