/* tests for sim_iteration_run_steady: the steady state of long 1F1B, ZB-H1
 * and interleaved runs, extrapolated from three short runs, against the whole
 * run simulated event by event (step time, exposed communication,
 * bubble and activation peak within 0.1 %).  Prints the comparison table. */
#include <glib.h>
#include <math.h>

#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

typedef struct {
  const char *topology;
  int nodes;
  const char *model;
  const char *plan;
  gboolean full;
} Layout;

/* long runs of the shipped models: 1F1B, ZB-H1, ZB-V, DualPipeV, DualPipe and interleaved, with and without
 * recomputation, context parallelism, ZeRO and every replica simulated */
static const Layout layouts[] = {
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=8,dp=1", FALSE },
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=4,dp=2", FALSE },
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=4,dp=2,gb=256,schedule=interleaved,v=2", TRUE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,pp=4,dp=8,gb=512,recompute=full,zero=2", FALSE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,pp=4,dp=8,gb=512,schedule=zb-h1", FALSE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,pp=4,dp=8,gb=512,schedule=zb-v", FALSE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,pp=4,dp=8,gb=512,schedule=dualpipe-v", FALSE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,pp=4,dp=8,gb=512,schedule=dualpipe", FALSE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,cp=2,pp=4,dp=4,gb=256,recompute=selective", FALSE },
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=1,pp=1,dp=64,gb=2048,zero=3", FALSE },
  { "dgx-h100.xml", 16, "gpt3-175b.xml", "tp=4,pp=8,dp=4,gb=1024,schedule=interleaved,v=12", FALSE },
  { "dgx-a100.xml", 128, "gpt3-175b.xml", "tp=8,pp=8,dp=16,gb=12288", FALSE },
};

static double
rel (double got, double want)
{
  return want == 0 ? fabs (got) : fabs (got - want) / fabs (want);
}

/* a layout run whole and from its steady state: *whole and *fast */
static void
run_both (const Layout *l, SimIteration **whole, SimIteration **fast)
{
  g_autofree char *tp = g_build_filename (SIM_SOURCE_DIR, "topologies", l->topology, NULL);
  g_autofree char *mp = g_build_filename (SIM_SOURCE_DIR, "models", l->model, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = sim_topology_load (tp, l->nodes, &error);
  g_autoptr (SimModel) m = sim_model_load (mp, &error);
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) mem = NULL;

  g_assert_no_error (error);
  sim_plan_request_parse_string (p_req, l->plan, &error);
  g_assert_no_error (error);
  p = sim_plan_resolve (p_req, t, m, &error);
  g_assert_no_error (error);
  mem = sim_memory_compute (t, m, p);
  *whole = sim_iteration_run (t, m, p, mem, l->full, &error);
  g_assert_no_error (error);
  *fast = sim_iteration_run_steady (t, m, p, mem, l->full, &error);
  g_assert_no_error (error);
}

static void
test_steady_matches_whole (void)
{
  g_print ("# %-12s %-15s %-48s %8s %10s %9s %9s %9s\n", "cluster", "model", "plan", "runs",
           "step s", "step err", "comm err", "bub. err");
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++) {
    const Layout *l = &layouts[i];
    g_autoptr (SimIteration) whole = NULL;
    g_autoptr (SimIteration) fast = NULL;
    double comm_w, comm_f, worst_comm = 0;

    run_both (l, &whole, &fast);

    /* every layout here is long enough to be extrapolated, and was */
    g_assert_cmpuint (fast->steady_micro_batches[0], >, 0);
    g_assert_cmpuint (whole->steady_micro_batches[0], ==, 0);
    g_assert_cmpfloat (rel (fast->step_s, whole->step_s), <=, 1e-3);
    g_assert_cmpfloat (rel (fast->mfu, whole->mfu), <=, 1e-3);
    g_assert_cmpfloat (fabs (fast->bubble_fraction - whole->bubble_fraction), <=, 1e-3);
    for (guint s = 0; s < whole->stages->len; s++) {
      const SimStageTime *a = &g_array_index (whole->stages, SimStageTime, s);
      const SimStageTime *b = &g_array_index (fast->stages, SimStageTime, s);
      /* exposed communication, by kind, as a fraction of the step */
      double ew[4] = { a->exposed_tp_s, a->exposed_cp_s, a->exposed_pp_s, a->exposed_dp_s };
      double ef[4] = { b->exposed_tp_s, b->exposed_cp_s, b->exposed_pp_s, b->exposed_dp_s };
      for (int k = 0; k < 4; k++) {
        worst_comm = MAX (worst_comm, fabs (ef[k] - ew[k]) / whole->step_s);
        g_assert_cmpfloat (fabs (ef[k] - ew[k]), <=, 1e-3 * whole->step_s);
      }
      g_assert_cmpfloat (fabs (b->bubble_s - a->bubble_s), <=, 1e-3 * whole->step_s);
      g_assert_cmpuint (b->peak_activation_bytes, ==, a->peak_activation_bytes);
      g_assert_cmpuint (b->peak_bytes, ==, a->peak_bytes);
      g_assert_cmpuint (b->memory->len, ==, 0);
    }
    comm_w = whole->exposed_tp_s + whole->exposed_cp_s + whole->exposed_pp_s + whole->exposed_dp_s;
    comm_f = fast->exposed_tp_s + fast->exposed_cp_s + fast->exposed_pp_s + fast->exposed_dp_s;
    g_assert_cmpfloat (fabs (comm_f - comm_w), <=, 1e-3 * whole->step_s);
    g_print ("# %-12s %-15s %-48s %2" G_GUINT64_FORMAT ",%2" G_GUINT64_FORMAT ",%2" G_GUINT64_FORMAT
             " %10.6f %8.1e %9.1e %9.1e\n",
             l->topology, l->model, l->plan, fast->steady_micro_batches[0],
             fast->steady_micro_batches[1], fast->steady_micro_batches[2], whole->step_s,
             rel (fast->step_s, whole->step_s), worst_comm,
             fabs (fast->bubble_fraction - whole->bubble_fraction));
  }
}

/* GPipe has no steady phase, and a short run (12 micro-batches, where three
 * runs of 4, 5 and 6 would cost more) gains nothing: simulated whole.  Nor
 * does context parallelism without a pipeline over 32 micro-batches: each
 * short run would carry the gradient buckets as flows (their shortcut is
 * given up before running, alone_drop: the last backward's blocks cross
 * their links), which outweigh the 32 micro-batches' passes; the probe
 * counts them as the runs would build them (it once counted the buckets
 * as delays, and ran 2, 3 and 4 micro-batches at nearly 3 times the
 * whole step's activities) */
static void
test_whole_when_not_periodic (void)
{
  /* GPipe, a 1F1B too short to settle, a plan without a pipeline (on two
   * nodes, the 8B model), and a split backward under ZeRO-3 */
  const char *plans[] = { "tp=8,pp=4,dp=2,gb=64,schedule=gpipe", "tp=8,pp=4,dp=2,gb=24",
                          "tp=1,cp=2,pp=1,dp=8,gb=256", "tp=8,pp=4,dp=2,gb=128,schedule=zb-v,zero=3" };
  g_autofree char *tp = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx8x4.xml", NULL);
  g_autofree char *mp = g_build_filename (SIM_SOURCE_DIR, "models", "llama3-70b.xml", NULL);
  g_autofree char *mp8 = g_build_filename (SIM_SOURCE_DIR, "models", "llama3-8b.xml", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = sim_topology_load (tp, 0, &error);
  g_autoptr (SimTopology) t2 = sim_topology_load (tp, 2, &error);
  g_autoptr (SimModel) m = sim_model_load (mp, &error);
  g_autoptr (SimModel) m8 = sim_model_load (mp8, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (plans); i++) {
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (SimMemory) mem = NULL;
    g_autoptr (SimIteration) whole = NULL;
    g_autoptr (SimIteration) fast = NULL;
    /* the context-parallel plan on two nodes, with the 8B model */
    const SimTopology *tt = i == 2 ? t2 : t;
    const SimModel *mm = i == 2 ? m8 : m;
    g_assert_true (sim_plan_request_parse_string (p_req, plans[i], &error));
    g_assert_nonnull (p = sim_plan_resolve (p_req, tt, mm, &error));
    mem = sim_memory_compute (tt, mm, p);
    whole = sim_iteration_run (tt, mm, p, mem, FALSE, &error);
    fast = sim_iteration_run_steady (tt, mm, p, mem, FALSE, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (fast->steady_micro_batches[0], ==, 0);
    g_assert_cmpfloat (fast->step_s, ==, whole->step_s);
    g_assert_cmpuint (fast->spans->len, ==, whole->spans->len);
    /* and no more work than the whole step */
    g_assert_cmpuint (fast->activities, <=, whole->activities);
  }
}

/* A stage whose busy time grows faster than the step is still using up
 * the warm-up's slack: three short runs can grow evenly before the
 * steady state.  Carried forward, that stage's bubble turns negative (it
 * is busier than the step is long) and the step comes out short:
 * - Llama 3 8B over pp 2 x v 2 with the uneven layout Et*8|(t*9|)*2t*6L
 *   (8 and 9 layers in the first stage's chunks, 9 and 6 in the
 *   second's), micro-batch 2 x dp 4, 128 micro-batches: runs of 4, 6 and
 *   8 carried to 128 gave 137.715 s and stage 0 a bubble of -1.538 s; the
 *   whole run is 139.550 s;
 * - Llama 3 70B under ZB-V at tp 4 x pp 4 on 16 GPUs, 1024 micro-batches
 *   of 1: 583.376 s carried forward, 609.113 s whole.
 * No stage's bubble may shrink from run to run, so the extrapolation
 * waits for the steady state or simulates the step whole: the whole
 * run's step, and no negative bubble. */
static void
test_no_shrinking_bubble (void)
{
  static const Layout cases[] = {
    { "dgx-h100.xml", 1, "llama3-8b.xml",
      "tp=1,pp=2,dp=4,mb=2,gb=1024,schedule=interleaved,v=2,recompute=full,zero=1,layout=Et*8|(t*9|)*2t*6L", FALSE },
    { "dgx8x4.xml", 2, "llama3-70b.xml", "tp=4,pp=4,dp=1,mb=1,gb=1024,schedule=zb-v,recompute=full,zero=0", FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const Layout *l = &cases[i];
    g_autoptr (SimIteration) whole = NULL;
    g_autoptr (SimIteration) fast = NULL;
    run_both (l, &whole, &fast);
    g_assert_cmpfloat (rel (fast->step_s, whole->step_s), <=, 1e-3);
    g_assert_cmpfloat (fast->bubble_fraction, >=, 0);
    for (guint s = 0; s < fast->stages->len; s++)
      g_assert_cmpfloat (g_array_index (fast->stages, SimStageTime, s).bubble_s, >=, 0);
    g_print ("# %s, %s: whole %.6f s, steady %.6f s (runs of %" G_GUINT64_FORMAT
             " micro-batches first; 0: simulated whole)\n", l->model, l->plan, whole->step_s, fast->step_s,
             fast->steady_micro_batches[0]);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/steady/matches-whole", test_steady_matches_whole);
  g_test_add_func ("/steady/whole-when-not-periodic", test_whole_when_not_periodic);
  g_test_add_func ("/steady/no-shrinking-bubble", test_no_shrinking_bubble);
  return g_test_run ();
}
