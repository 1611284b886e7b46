#include "sim-trace.h"

#include "sim-json.h"

static int
rank_of_stage (const SimPlan *p, int stage)
{
  int c[SIM_DIM_COUNT] = { 0 };
  c[SIM_DIM_PP] = stage;
  return sim_plan_rank_of (p, c);
}

static int
lane_of (SimSpanKind k)
{
  switch (k) {
  case SIM_SPAN_TP:
  case SIM_SPAN_CP:
  case SIM_SPAN_EP: return 1;
  case SIM_SPAN_PP: return 2;
  case SIM_SPAN_DP: return 3;
  default: return 0;
  }
}

static const char *lane_names[] = { "compute", "TP+CP+EP comm", "PP send/recv", "DP comm" };

char *
sim_trace_json (const SimRun *run)
{
  const SimTopology *topo = run->topo;
  const SimPlan *plan = run->plan;
  const SimMemory *mem = run->memory;
  const SimIteration *it = run->time;
  SimJson j;
  sim_json_init (&j, FALSE);
  sim_json_begin_object (&j, NULL);
  sim_json_string (&j, "displayTimeUnit", "ms");
  sim_json_begin_array (&j, "traceEvents");
  for (int s = 0; s < plan->pp; s++) {
    int rank = rank_of_stage (plan, s);
    int node = sim_topology_gpu (topo, rank)->node;
    g_autofree char *pname = g_strdup_printf ("node %d", node);
    sim_json_begin_object (&j, NULL);
    sim_json_string (&j, "name", "process_name");
    sim_json_string (&j, "ph", "M");
    sim_json_int (&j, "pid", node);
    sim_json_begin_object (&j, "args");
    sim_json_string (&j, "name", pname);
    sim_json_end_object (&j);
    sim_json_end_object (&j);
    for (int lane = 0; lane < 4; lane++) {
      g_autofree char *tname = g_strdup_printf ("GPU %d (stage %d) %s", rank, s, lane_names[lane]);
      sim_json_begin_object (&j, NULL);
      sim_json_string (&j, "name", "thread_name");
      sim_json_string (&j, "ph", "M");
      sim_json_int (&j, "pid", node);
      sim_json_int (&j, "tid", rank * 4 + lane);
      sim_json_begin_object (&j, "args");
      sim_json_string (&j, "name", tname);
      sim_json_end_object (&j);
      sim_json_end_object (&j);
    }
  }
  for (guint i = 0; i < it->spans->len; i++) {
    const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
    int rank = rank_of_stage (plan, sp->stage);
    g_autofree char *name = NULL;
    if (sp->micro_batch < 0)
      name = g_strdup (sim_span_kind_name (sp->kind));
    else if (plan->virtual_stages > 1)
      name = g_strdup_printf ("%s mb %d chunk %d", sim_span_kind_name (sp->kind), sp->micro_batch, sp->chunk);
    else
      name = g_strdup_printf ("%s mb %d", sim_span_kind_name (sp->kind), sp->micro_batch);
    sim_json_begin_object (&j, NULL);
    sim_json_string (&j, "name", name);
    sim_json_string (&j, "cat", sim_span_kind_name (sp->kind));
    sim_json_string (&j, "ph", "X");
    sim_json_double (&j, "ts", (double) sp->start / 1e6);
    sim_json_double (&j, "dur", (double) (sp->end - sp->start) / 1e6);
    sim_json_int (&j, "pid", sim_topology_gpu (topo, rank)->node);
    sim_json_int (&j, "tid", rank * 4 + lane_of (sp->kind));
    sim_json_end_object (&j);
  }
  for (int s = 0; s < plan->pp; s++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, s);
    int rank = rank_of_stage (plan, s);
    g_autofree char *cname = g_strdup_printf ("memory GPU %d", rank);
    double states = (double) g_array_index (mem->stages, SimStageMemory, s).states_bytes;
    for (guint i = 0; i < st->memory->len; i++) {
      const SimMemPoint *mp = &g_array_index (st->memory, SimMemPoint, i);
      sim_json_begin_object (&j, NULL);
      sim_json_string (&j, "name", cname);
      sim_json_string (&j, "ph", "C");
      sim_json_double (&j, "ts", (double) mp->time / 1e6);
      sim_json_int (&j, "pid", sim_topology_gpu (topo, rank)->node);
      sim_json_begin_object (&j, "args");
      sim_json_double (&j, "activations_GB", (double) mp->activation_bytes / 1e9);
      sim_json_double (&j, "states_GB", states / 1e9);
      sim_json_end_object (&j);
      sim_json_end_object (&j);
    }
  }
  sim_json_end_array (&j);
  sim_json_end_object (&j);
  return sim_json_finish (&j);
}

char *
sim_trace_spans_csv (const SimRun *run)
{
  const SimPlan *plan = run->plan;
  const SimIteration *it = run->time;
  GString *s = g_string_new ("stage,rank,kind,micro_batch,chunk,start_s,end_s\n");
  for (guint i = 0; i < it->spans->len; i++) {
    const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
    g_string_append_printf (s, "%d,%d,%s,%d,%d,%.12f,%.12f\n", sp->stage, rank_of_stage (plan, sp->stage),
                            sim_span_kind_name (sp->kind), sp->micro_batch, sp->chunk,
                            sim_time_to_s (sp->start), sim_time_to_s (sp->end));
  }
  return g_string_free (s, FALSE);
}

char *
sim_trace_memory_csv (const SimRun *run)
{
  const SimMemory *mem = run->memory;
  const SimIteration *it = run->time;
  GString *s = g_string_new ("stage,time_s,activation_bytes,total_bytes\n");
  for (guint k = 0; k < it->stages->len; k++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, k);
    guint64 states = g_array_index (mem->stages, SimStageMemory, k).states_bytes;
    for (guint i = 0; i < st->memory->len; i++) {
      const SimMemPoint *mp = &g_array_index (st->memory, SimMemPoint, i);
      g_string_append_printf (s, "%d,%.12f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n", st->stage,
                              sim_time_to_s (mp->time), mp->activation_bytes, states + mp->activation_bytes);
    }
  }
  return g_string_free (s, FALSE);
}
