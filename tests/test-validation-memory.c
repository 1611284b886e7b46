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
 * The error table is printed; a point out of tolerance fails the test. */
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
} Row;

static SimMemory *
simulate (const Row *r, gboolean sp, const char *recompute, guint64 *layers_per_chunk)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tpath = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx-a100.xml", NULL);
  g_autofree char *mfile = g_strconcat (r->model, ".xml", NULL);
  g_autofree char *mpath = g_build_filename (SIM_SOURCE_DIR, "models", mfile, NULL);
  g_autoptr (SimTopology) topo = sim_topology_load (tpath, r->nodes, &error);
  g_autoptr (SimModel) model = NULL;
  g_autoptr (SimPlan) plan = sim_plan_new ();
  g_autofree char *spec = NULL;
  g_assert_no_error (error);
  model = sim_model_load (mpath, &error);
  g_assert_no_error (error);
  /* Megatron 2022: no fused attention; fp16 mixed precision, no distributed optimizer */
  spec = g_strdup_printf ("tp=%d,pp=%d,dp=1,mb=%d,gb=%" G_GUINT64_FORMAT
                          ",no-flash-attention,zero=0,sp=%s,recompute=%s%s%d",
                          r->tp, r->pp, r->mb, r->gb, sp ? "true" : "false", recompute,
                          r->v > 1 ? ",schedule=interleaved,v=" : ",schedule=1f1b,v=", r->v);
  g_assert_true (sim_plan_parse_string (plan, spec, &error));
  g_assert_no_error (error);
  g_assert_true (sim_plan_resolve (plan, topo, model, &error));
  g_assert_no_error (error);
  *layers_per_chunk = model->layers / (guint64) (r->pp * r->v);
  return sim_memory_compute (topo, model, plan);
}

static void
test_korthikanti (void)
{
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "korthikanti2022_memory.csv", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  int n = 0, failed = 0;
  double sum_abs_err = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  lines = g_strsplit (text, "\n", -1);
  printf ("# %-42s %10s %10s %9s %s\n", "row", "published", "simulated", "error", "tolerance");
  for (guint i = 0; lines[i] != NULL; i++) {
    g_auto (GStrv) f = NULL;
    Row r = { 0 };
    guint64 lpc = 0;
    double sim = 0, err = 0;
    gboolean ok = FALSE;
    if (lines[i][0] == '#' || lines[i][0] == '\0')
      continue;
    f = g_strsplit (lines[i], ",", -1);
    g_assert_cmpuint (g_strv_length (f), ==, 12);
    r.row_id = f[0], r.model = f[1], r.nodes = atoi (f[2]), r.tp = atoi (f[3]);
    r.pp = atoi (f[4]), r.v = atoi (f[5]), r.mb = atoi (f[6]);
    r.gb = g_ascii_strtoull (f[7], NULL, 10), r.sp = g_str_equal (f[8], "yes");
    r.recompute = f[9], r.quantity = f[10], r.value = g_ascii_strtod (f[11], NULL);

    if (g_str_equal (r.quantity, "fig1")) {
      g_autoptr (SimMemory) m = simulate (&r, r.sp, r.recompute, &lpc);
      const SimStageMemory *s0 = &g_array_index (m->stages, SimStageMemory, 0);
      sim = (double) (s0->in_flight_chunks * lpc * s0->activation_bytes_per_layer) / 1073741824.0;
      err = (sim - r.value) / r.value * 100.0;
      ok = fabs (err) <= 1.0;
      printf ("#   %-42s %8.2f GiB %6.2f GiB %+8.2f%% %s\n", r.row_id, r.value, sim, err,
              ok ? "1 % ok" : "1 % FAIL");
    } else {
      g_autoptr (SimMemory) m = simulate (&r, r.sp, r.recompute, &lpc);
      g_autoptr (SimMemory) base = simulate (&r, FALSE, "none", &lpc);
      sim = 100.0 * (double) g_array_index (m->stages, SimStageMemory, 0).activation_bytes_per_layer /
            (double) g_array_index (base->stages, SimStageMemory, 0).activation_bytes_per_layer;
      err = sim - r.value;
      ok = fabs (err) <= 0.5;
      printf ("#   %-42s %9.2f %% %8.2f %% %+7.2f pt %s\n", r.row_id, r.value, sim, err,
              ok ? "0.5 pt ok" : "0.5 pt FAIL");
      err = err / r.value * 100.0;
    }
    sum_abs_err += fabs (err);
    n++;
    failed += !ok;
  }
  printf ("# %d points, mean absolute relative error %.2f %%, %d out of tolerance\n", n,
          sum_abs_err / n, failed);
  g_assert_cmpint (n, ==, 24);
  g_assert_cmpint (failed, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/validation/korthikanti-memory", test_korthikanti);
  return g_test_run ();
}
