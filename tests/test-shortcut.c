/* tests for sim_iteration_run's shortcut (TP collectives and pipeline
 * sends as one delay each of their time alone on the network wherever
 * nothing meets them, checked after the run) against
 * sim_iteration_run_reference (every collective's flows): the same step,
 * critical path, per-stage sums, spans and memory timelines, bit for bit,
 * on layouts that take the shortcut whole, in part (sends met by sends,
 * taken as flows in a second run), for the gradient buckets (no
 * pipeline), not for sends worth too little (context parallelism inside a
 * node), for
 * the TP collectives beside context parallelism across nodes, for the
 * context-parallel blocks without a pipeline, and not at all (a pipeline
 * inside a node); prints the table. */
#include <glib.h>

#include "sim-iteration.h"
#include "sim-memory.h"
#include "test-util.h"

typedef struct {
  const char *topology;
  int nodes;
  const char *model;
  const char *plan;
  gboolean full;
  /* FEWER: the shortcut makes fewer activities (all runs) than the
   * reference; SAME: as many (none taken); ANY: tried and given up */
  enum { FEWER, SAME, ANY } work;
} Layout;

static const Layout layouts[] = {
  /* 1F1B across nodes: every TP collective and send but the tail's alone */
  { "dgx8x4.xml", 0, "llama3-70b.xml", "tp=8,pp=4,dp=2,gb=32", FALSE, FEWER },
  /* NVIDIA's GPT-3 recipe: sends reaching a stage from both sides meet */
  { "dgx-h100.xml", 16, "gpt3-175b.xml", "tp=4,pp=8,dp=4,gb=128,schedule=interleaved,v=12", FALSE,
    FEWER },
  /* every replica, the gradient reduction sharing the TP groups' NVLink */
  { "dgx-h100.xml", 4, "llama3-8b.xml", "tp=4,pp=2,dp=4,gb=64", TRUE, FEWER },
  /* no pipeline: the gradient buckets (over data-parallel groups across
   * nodes, and of the routed experts over their expert data-parallel
   * groups) alone too */
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=1,pp=1,dp=64,gb=512", FALSE, FEWER },
  /* the routed experts' buckets and the rest's would leave together on
   * the same NICs: no shortcut */
  { "dgx8x4.xml", 0, "mixtral-8x7b.xml", "tp=1,pp=1,dp=64,ep=8,gb=512", FALSE, SAME },
  /* the pipeline inside one node: sends on the TP groups' links, no shortcut */
  { "dgx8x4.xml", 1, "llama3-8b.xml", "tp=2,pp=4,dp=1,gb=16", FALSE, SAME },
  /* ZeRO-3 with experts: every pass gathers the dense weights over dp and
   * the routed experts' over their expert data-parallel group beside the
   * TP collectives: no shortcut */
  { "dgx8x4.xml", 2, "mixtral-8x7b.xml", "tp=2,pp=2,dp=4,ep=4,gb=32,zero=3", FALSE, SAME },
  /* context parallelism: K/V blocks beside every pass on the TP groups'
   * NVLink (a CP group inside a node) keep the TP collectives' flows; the
   * sends between nodes could be alone, but stand for too few of the
   * run's activities to be worth the risk of a second run
   * (shortcut_worth): no shortcut */
  { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,cp=2,pp=2,dp=8,gb=64", FALSE, SAME },
  /* a CP group across nodes (TP 8 fills a node): the blocks cross the
   * NICs, the TP collectives stay on NVLink and are alone beside them
   * (cp_apart); without a pipeline or data parallelism beyond CP, only
   * they (and the CP ranks' gradient buckets) can be */
  { "dgx8x4.xml", 2, "llama3-8b.xml", "tp=8,cp=2,pp=1,dp=1,gb=8", FALSE, FEWER },
  /* context parallelism without a pipeline or TP: the blocks alone
   * (ALONE_CP), the gradient buckets, which the last backward's blocks
   * would meet, as flows */
  { "dgx8x4.xml", 1, "llama3-8b.xml", "tp=1,cp=8,pp=1,dp=1,gb=64", FALSE, FEWER },
};

static void
assert_same_stage (const SimStageTime *a, const SimStageTime *b)
{
  g_assert_cmpfloat (a->forward_s, ==, b->forward_s);
  g_assert_cmpfloat (a->backward_s, ==, b->backward_s);
  g_assert_cmpfloat (a->recompute_s, ==, b->recompute_s);
  g_assert_cmpfloat (a->optimizer_s, ==, b->optimizer_s);
  g_assert_cmpfloat (a->exposed_tp_s, ==, b->exposed_tp_s);
  g_assert_cmpfloat (a->exposed_cp_s, ==, b->exposed_cp_s);
  g_assert_cmpfloat (a->exposed_pp_s, ==, b->exposed_pp_s);
  g_assert_cmpfloat (a->exposed_dp_s, ==, b->exposed_dp_s);
  g_assert_cmpfloat (a->exposed_ep_s, ==, b->exposed_ep_s);
  g_assert_cmpfloat (a->bubble_s, ==, b->bubble_s);
  g_assert_cmpuint (a->peak_activation_bytes, ==, b->peak_activation_bytes);
  g_assert_cmpuint (a->memory->len, ==, b->memory->len);
  for (guint k = 0; k < a->memory->len; k++) {
    g_assert_cmpint (g_array_index (a->memory, SimMemPoint, k).time, ==,
                     g_array_index (b->memory, SimMemPoint, k).time);
    g_assert_cmpuint (g_array_index (a->memory, SimMemPoint, k).activation_bytes, ==,
                      g_array_index (b->memory, SimMemPoint, k).activation_bytes);
  }
}

static void
test_shortcut_is_exact (void)
{
  g_print ("# %-12s %-15s %-48s %5s %12s %10s %10s\n", "cluster", "model", "plan", "full",
           "step s", "act. fast", "act. ref.");
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++) {
    const Layout *l = &layouts[i];
    g_autoptr (GError) error = NULL;
    g_autoptr (SimTopology) t = test_load_topology (l->topology, l->nodes);
    g_autoptr (SimModel) m = test_load_model (l->model);
    g_autoptr (SimPlan) p = test_resolve_plan (t, m, l->plan);
    g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
    g_autoptr (SimIteration) fast = sim_iteration_run (t, m, p, mem, l->full, &error);
    g_autoptr (SimIteration) ref = NULL;

    g_assert_no_error (error);
    ref = sim_iteration_run_reference (t, m, p, mem, l->full, &error);
    g_assert_no_error (error);
    g_print ("# %-12s %-15s %-48s %5s %12.6f %10u %10u\n", l->topology, l->model, l->plan,
             l->full ? "yes" : "no", fast->step_s, fast->activities, ref->activities);

    /* the shortcut was taken where it should be, and only there */
    if (l->work == FEWER)
      g_assert_cmpuint (fast->activities, <, ref->activities);
    else if (l->work == SAME)
      g_assert_cmpuint (fast->activities, ==, ref->activities);
    /* and changed nothing */
    g_assert_cmpfloat (fast->step_s, ==, ref->step_s);
    g_assert_cmpfloat (fast->bubble_fraction, ==, ref->bubble_fraction);
    for (int k = 0; k < SIM_SPAN_KINDS; k++)
      g_assert_cmpfloat (fast->critical_s[k], ==, ref->critical_s[k]);
    g_assert_cmpuint (fast->stages->len, ==, ref->stages->len);
    for (guint s = 0; s < ref->stages->len; s++)
      assert_same_stage (&g_array_index (fast->stages, SimStageTime, s),
                         &g_array_index (ref->stages, SimStageTime, s));
    g_assert_cmpuint (fast->spans->len, ==, ref->spans->len);
    for (guint k = 0; k < ref->spans->len; k++) {
      const SimSpan *a = &g_array_index (fast->spans, SimSpan, k);
      const SimSpan *b = &g_array_index (ref->spans, SimSpan, k);
      g_assert_cmpint (a->kind, ==, b->kind);
      g_assert_cmpint (a->stage, ==, b->stage);
      g_assert_cmpint (a->replica, ==, b->replica);
      g_assert_cmpint (a->micro_batch, ==, b->micro_batch);
      g_assert_cmpint (a->chunk, ==, b->chunk);
      g_assert_cmpint (a->start, ==, b->start);
      g_assert_cmpint (a->end, ==, b->end);
    }
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/shortcut/is-exact", test_shortcut_is_exact);
  return g_test_run ();
}
