/* Validation: whole training iterations against published runs.
 *
 * tests/validation/data/published_runs.csv lists each run (Narayanan et al.
 * 2021 Table 1, HFU; Korthikanti et al. 2022 Table 5, iteration time;
 * Megatron-Core's H100 weak scaling, MFU) with the layout it used.  Each is
 * simulated on the matching topology, with the shipped <efficiency>
 * constants (fitted on other runs: tools/fit-efficiency.py, on
 * training_calibration.csv; none of these rows is in that fit), and
 * compared.  No row is excused: each must be within 15 %, the mean |error|
 * within 6 % and the mean signed error of the step time within 3 % (issue
 * 12's goals). */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim-iteration.h"
#include "test-util.h"

static void
apply_flags (SimPlanRequest *p_req, const char *flags)
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
    g_assert_true (sim_plan_request_set (p_req, key, value, NULL, &error));
    g_assert_no_error (error);
  }
}

/* one published run: its CSV line, and what the simulation gave */
typedef struct {
  char *line;
  char *id;
  char *metric;
  double published, simulated, err;
  gboolean done;
} Row;

static GPtrArray *rows;  /* Row* */

static void
row_free (gpointer p)
{
  Row *r = p;
  g_free (r->line);
  g_free (r->id);
  g_free (r->metric);
  g_free (r);
}

/* simulate one row and check it is within 15 % of the published figure */
static void
test_row (gconstpointer data)
{
  Row *r = (Row *) data;
  g_auto (GStrv) f = g_strsplit (r->line, ",", 8);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = NULL;
  g_autoptr (SimModel) m = NULL;
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) mem = NULL;
  g_autoptr (SimIteration) it = NULL;
  g_autofree char *mfile = NULL, *tfile = NULL;

  g_assert_cmpuint (g_strv_length (f), >=, 7);
  tfile = g_strconcat (f[1], ".xml", NULL);
  t = test_load_topology (tfile, atoi (f[2]));
  mfile = g_strconcat (f[3], ".xml", NULL);
  m = test_load_model (mfile);
  apply_flags (p_req, f[4]);
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  mem = sim_memory_compute (t, m, p);
  it = sim_iteration_run (t, m, p, mem, FALSE, &error);
  g_assert_no_error (error);
  r->published = g_ascii_strtod (f[6], NULL);
  if (g_str_equal (f[5], "hfu_pct"))
    r->simulated = 100 * it->hfu;
  else if (g_str_equal (f[5], "mfu_pct"))
    r->simulated = 100 * it->mfu;
  else
    r->simulated = it->step_s;
  r->err = (r->simulated - r->published) / r->published * 100;
  r->done = TRUE;
  g_test_message ("%s %s: published %.2f, simulated %.2f, error %+.1f %%", r->id, r->metric,
                  r->published, r->simulated, r->err);
  g_assert_cmpfloat (fabs (r->err), <=, 15.0);
}

/* the step time's error of a row: its own for iter_time_s; for a
 * utilisation (HFU, MFU), which is the same FLOPs over the step time,
 * published / simulated - 1, in percent (a utilisation 10 % low is a
 * step 11.1 % long) */
static double
step_error (const Row *r)
{
  if (g_str_equal (r->metric, "iter_time_s"))
    return r->err;
  return (r->published / r->simulated - 1) * 100;
}

/* the table of every row, the mean |error| within 6 % and the signed
 * mean of the step time's errors (positive: sim slower), the bias, within
 * 3 % */
static void
test_summary (void)
{
  int n = 0, bad = 0;
  double sum = 0, signed_step = 0;
  printf ("# %-30s %-8s %10s %10s %8s %10s  %s\n", "row", "metric", "published", "simulated", "error",
          "step time", "status");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index (rows, i);
    gboolean ok = r->done && fabs (r->err) <= 15.0;
    if (!r->done) {
      printf ("#   %-30s %-8s (not simulated)\n", r->id, r->metric);
      bad++;
      continue;
    }
    printf ("#   %-30s %-8s %10.2f %10.2f %+7.1f%% %+9.1f%%  %s\n", r->id, r->metric, r->published,
            r->simulated, r->err, step_error (r), ok ? "ok" : "FAIL");
    n++;
    sum += fabs (r->err);
    signed_step += step_error (r);
    bad += !ok;
  }
  printf ("# %d rows: mean |error| %.1f %%, step-time bias %+.1f %%; %d beyond 15 %% or not simulated\n", n,
          n ? sum / n : 0.0, n ? signed_step / n : 0.0, bad);
  g_assert_cmpint (n, ==, 27);
  g_assert_cmpint (bad, ==, 0);
  g_assert_cmpfloat (sum / n, <=, 6.0);
  g_assert_cmpfloat (fabs (signed_step / n), <=, 3.0);
}

int
main (int argc, char **argv)
{
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "tests", "validation", "data",
                                            "published_runs.csv", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  /* every row reports, even after one fails; the summary runs last */
  g_test_set_nonfatal_assertions ();
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  rows = g_ptr_array_new_with_free_func (row_free);
  for (guint i = 0; lines[i] != NULL; i++) {
    g_auto (GStrv) f = NULL;
    Row *r;
    g_autofree char *name = NULL;
    if (lines[i][0] == '#' || lines[i][0] == '\0')
      continue;
    f = g_strsplit (lines[i], ",", 8);
    r = g_new0 (Row, 1);
    r->line = g_strdup (lines[i]);
    r->id = g_strdup (f[0]);
    r->metric = g_strdup (f[5] != NULL ? f[5] : "");
    g_ptr_array_add (rows, r);
    name = g_strdup_printf ("/validation/training/%s", r->id);
    g_test_add_data_func (name, r, test_row);
  }
  g_test_add_func ("/validation/training/summary", test_summary);
  status = g_test_run ();
  g_ptr_array_unref (rows);
  return status;
}
