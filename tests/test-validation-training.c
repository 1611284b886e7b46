/* Validation: whole training iterations against published runs.
 *
 * tests/validation/data/published_runs.csv lists each run (Narayanan et al.
 * 2021 Table 1, HFU; Korthikanti et al. 2022 Table 5, iteration time;
 * Megatron-Core's H100 weak scaling, MFU) with the layout it used.  Each is
 * simulated on the matching topology, with the shipped <efficiency>
 * constants (fitted on other runs: tools/fit-efficiency.py, on
 * training_calibration.csv; none of these rows is in that fit), and
 * compared.  No row is excused: each must be within 15 %, the mean |error|
 * within 6 %. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim-iteration.h"
#include "test-util.h"

static void
apply_flags (SimPlan *p, const char *flags)
{
  g_auto (GStrv) w = g_strsplit (flags, " ", -1);
  for (guint i = 0; w[i] != NULL; i++) {
    g_autoptr (GError) error = NULL;
    const char *key = w[i] + 2;
    const char *value = NULL;
    if (!g_str_has_prefix (w[i], "--"))
      continue;
    if (sim_plan_key_takes_value (key))
      value = w[++i];
    g_assert_true (sim_plan_set (p, key, value, NULL, &error));
    g_assert_no_error (error);
  }
}

static void
test_published (void)
{
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "published_runs.csv", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  int n = 0, bad = 0;
  double sum = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  printf ("# %-30s %-8s %10s %10s %8s  %s\n", "row", "metric", "published", "simulated", "error", "status");
  for (guint i = 0; lines[i] != NULL; i++) {
    g_auto (GStrv) f = NULL;
    g_autoptr (GError) error = NULL;
    g_autoptr (SimTopology) t = NULL;
    g_autoptr (SimModel) m = NULL;
    g_autoptr (SimPlan) p = sim_plan_new ();
    g_autoptr (SimMemory) mem = NULL;
    g_autoptr (SimIteration) it = NULL;
    g_autofree char *mfile = NULL, *tfile = NULL;
    double published, simulated = 0, err;
    gboolean ok;

    if (lines[i][0] == '#' || lines[i][0] == '\0')
      continue;
    f = g_strsplit (lines[i], ",", 8);
    g_assert_cmpuint (g_strv_length (f), >=, 7);
    tfile = g_strconcat (f[1], ".xml", NULL);
    t = test_load_topology (tfile, atoi (f[2]));
    mfile = g_strconcat (f[3], ".xml", NULL);
    m = test_load_model (mfile);
    apply_flags (p, f[4]);
    g_assert_true (sim_plan_resolve (p, t, m, &error));
    g_assert_no_error (error);
    mem = sim_memory_compute (t, m, p);
    it = sim_iteration_run (t, m, p, mem, FALSE, &error);
    g_assert_no_error (error);
    published = g_ascii_strtod (f[6], NULL);
    if (g_str_equal (f[5], "hfu_pct"))
      simulated = 100 * it->hfu;
    else if (g_str_equal (f[5], "mfu_pct"))
      simulated = 100 * it->mfu;
    else
      simulated = it->step_s;
    err = (simulated - published) / published * 100;
    ok = fabs (err) <= 15.0;
    printf ("#   %-30s %-8s %10.2f %10.2f %+7.1f%%  %s\n", f[0], f[5], published, simulated, err,
            ok ? "ok" : "FAIL");
    n++;
    sum += fabs (err);
    bad += !ok;
  }
  printf ("# %d rows: mean |error| %.1f %%; %d beyond 15 %%\n", n, sum / n, bad);
  g_assert_cmpint (n, ==, 27);
  g_assert_cmpint (bad, ==, 0);
  g_assert_cmpfloat (sum / n, <=, 6.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/validation/training/published", test_published);
  return g_test_run ();
}
