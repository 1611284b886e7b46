/* test-ideal.h — a simulated iteration with made-up, uniform costs, for
 * tests whose expected values are closed forms (header only) */
#pragma once

#include "sim-iteration.h"
#include "test-util.h"

typedef struct {
  SimTopology *t;
  SimModel *m;
  SimPlan *p;
  SimMemory *mem;
  SimIteration *it;
} Run;

static inline void
run_clear (Run *r)
{
  sim_iteration_free (r->it);
  sim_memory_free (r->mem);
  sim_plan_free (r->p);
  sim_model_free (r->m);
  sim_topology_free (r->t);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

/* Llama 3 8B on one DGX node with uniform layers and nothing else: forward
 * 1 ms, backward 2 ms per layer (w_s of it the weight gradient's, which a
 * schedule that splits the backward runs as a pass of its own), no
 * embedding or output cost, no TP (tp 1), free pipeline sends */
static inline void
run_ideal_w (Run *r, const char *plan, double w_s)
{
  g_autoptr (GError) error = NULL;
  SimLayerCost c = { 0 };
  r->t = test_load_topology ("dgx8x4.xml", 1);
  r->m = test_load_model ("llama3-8b.xml");
  r->p = test_resolve_plan (r->t, r->m, plan);
  g_assert_no_error (error);
  r->mem = sim_memory_compute (r->t, r->m, r->p);
  c.layer_fwd_s = 1e-3;
  c.layer_bwd_s = 2e-3;
  c.layer_bwd_w_s = w_s;
  r->it = sim_iteration_run_with_cost (r->t, r->m, r->p, r->mem, FALSE, &c, &error);
  g_assert_no_error (error);
}

static inline void
run_ideal (Run *r, const char *plan)
{
  run_ideal_w (r, plan, 0);
}
