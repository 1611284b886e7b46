/* test-util.h — loading the shipped inputs in tests (header only) */
#pragma once

#include <glib.h>

#include "sim-error.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

/* models/NAME (with .xml), asserting it loads */
static inline SimModel *
test_load_model (const char *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (SIM_SOURCE_DIR, "models", file, NULL);
  SimModel *m = sim_model_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (m);
  return m;
}

/* topologies/NAME, or a path under the source root when it starts with
 * "tests/"; nodes > 0 overrides the node count */
static inline SimTopology *
test_load_topology (const char *file, int nodes)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_str_has_prefix (file, "tests/")
                              ? g_build_filename (SIM_SOURCE_DIR, file, NULL)
                              : g_build_filename (SIM_SOURCE_DIR, "topologies", file, NULL);
  SimTopology *t = sim_topology_load (path, nodes, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

/* a request from its string form (sim_plan_request_parse_string),
 * asserting it parses */
static inline SimPlanRequest *
test_request (const char *plan)
{
  g_autoptr (GError) error = NULL;
  SimPlanRequest *q = sim_plan_request_new ();
  sim_plan_request_parse_string (q, plan, &error);
  g_assert_no_error (error);
  return q;
}

/* a plan from its string form, resolved on t and m, asserting both
 * succeed */
static inline SimPlan *
test_resolve_plan (const SimTopology *t, const SimModel *m, const char *plan)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) q = test_request (plan);
  SimPlan *p = sim_plan_resolve (q, t, m, &error);
  g_assert_no_error (error);
  return p;
}

/* a plan string that parses but that sim_plan_resolve refuses on t and m
 * with SIM_ERROR_PLAN and a message starting with start */
static inline void
test_refused_plan (const SimTopology *t, const SimModel *m, const char *text, const char *start)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) q = test_request (text);
  g_autoptr (SimPlan) p = sim_plan_resolve (q, t, m, &error);
  g_assert_null (p);
  g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
  if (!g_str_has_prefix (error->message, start))
    g_error ("%s: expected '%s...', got '%s'", text, start, error->message);
}
