/* bench-engine.c — events per second of the engine (a benchmark, not a test).
 *
 *   (a) 10^6 independent compute activities on 1,000 streams
 *   (b) an all_reduce storm on 1,024 GPUs (128 DGX H100 nodes): in each
 *       round one all_reduce over all 1,024 GPUs, every TP group (8 GPUs in
 *       a node) and every DP group (the same local rank on all 128 nodes)
 *       all-reduce at once, ring/Simple, so NVLink, PCIe, NICs, leaves and
 *       the spine are all contended; rounds follow one another.
 * Prints events, wall time, events/s, and how many flow rates each event
 * recomputed on average (re-sharing touches only the connected flows). */
#include <stdio.h>

#include "sim-collective.h"

static double
now_s (void)
{
  return (double) g_get_monotonic_time () / 1e6;
}

static void
report (const char *name, SimEngine *e, double wall)
{
  guint64 ev = sim_engine_events (e);
  printf ("%-34s %10" G_GUINT64_FORMAT " events %8.3f s %12.0f events/s %8.1f flow rates per event\n",
          name, ev, wall, (double) ev / wall, (double) sim_engine_reshares (e) / (double) ev);
}

static void
bench_compute (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int streams[1000];
  double t0 = 0;
  for (int i = 0; i < 1000; i++)
    streams[i] = sim_engine_add_stream (e);
  for (int i = 0; i < 1000000; i++)
    sim_engine_add_compute (e, streams[i % 1000], 1000 + ((gint64) i * 7919) % 5000, 0);
  t0 = now_s ();
  if (!sim_engine_run (e, NULL))
    g_error ("run failed");
  report ("(a) 1e6 compute activities", e, now_s () - t0);
}

static void
bench_storm (const char *topo_path, int rounds)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) topo = sim_topology_load (topo_path, 128, &error);
  g_autoptr (SimEngine) e = NULL;
  g_autoptr (SimNetwork) net = NULL;
  SimCollChoice tp_choice, dp_choice, all_choice;
  int tp[8], dp[128], all[1024];
  GArray *prev = NULL;
  double t0 = 0, build = 0;

  if (topo == NULL)
    g_error ("%s", error->message);
  e = sim_engine_new ();
  net = sim_network_new (topo, e);
  for (int i = 0; i < 8; i++)
    tp[i] = i;
  for (int i = 0; i < 128; i++)
    dp[i] = 8 * i;
  for (int i = 0; i < 1024; i++)
    all[i] = i;
  if (!sim_collective_choose (net, SIM_OP_ALL_REDUCE, tp, 8, 64e6, SIM_ALGO_RING, SIM_PROTO_SIMPLE, &tp_choice, &error) ||
      !sim_collective_choose (net, SIM_OP_ALL_REDUCE, dp, 128, 256e6, SIM_ALGO_RING, SIM_PROTO_SIMPLE, &dp_choice, &error) ||
      !sim_collective_choose (net, SIM_OP_ALL_REDUCE, all, 1024, 1e9, SIM_ALGO_RING, SIM_PROTO_SIMPLE, &all_choice, &error))
    g_error ("%s", error->message);
  t0 = now_s ();
  prev = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
  for (int r = 0; r < rounds; r++) {
    GArray *ends = g_array_new (FALSE, FALSE, sizeof (SimActivityId));
    {
      SimActivityId start, end;
      end = sim_collective_add (net, SIM_OP_ALL_REDUCE, all, 1024, 1e9, &all_choice, 0, &start);
      for (guint k = 0; k < prev->len; k++)
        sim_engine_add_dep (e, start, g_array_index (prev, SimActivityId, k));
      g_array_append_val (ends, end);
    }
    for (int node = 0; node < 128; node++) {
      int g[8];
      SimActivityId start, end;
      for (int i = 0; i < 8; i++)
        g[i] = node * 8 + i;
      end = sim_collective_add (net, SIM_OP_ALL_REDUCE, g, 8, 64e6, &tp_choice, 0, &start);
      for (guint k = 0; k < prev->len; k++)
        sim_engine_add_dep (e, start, g_array_index (prev, SimActivityId, k));
      g_array_append_val (ends, end);
    }
    for (int local = 0; local < 8; local++) {
      int g[128];
      SimActivityId start, end;
      for (int i = 0; i < 128; i++)
        g[i] = i * 8 + local;
      end = sim_collective_add (net, SIM_OP_ALL_REDUCE, g, 128, 256e6, &dp_choice, 0, &start);
      for (guint k = 0; k < prev->len; k++)
        sim_engine_add_dep (e, start, g_array_index (prev, SimActivityId, k));
      g_array_append_val (ends, end);
    }
    g_array_unref (prev);
    prev = ends;
  }
  g_array_unref (prev);
  build = now_s () - t0;
  t0 = now_s ();
  if (!sim_engine_run (e, &error))
    g_error ("%s", error->message);
  report ("(b) 1024-GPU all_reduce storm", e, now_s () - t0);
  printf ("    %d rounds of 1 global + 128 TP + 8 DP all_reduces, %u activities, built in %.3f s, simulated %.3f ms\n",
          rounds, sim_engine_n_activities (e), build, sim_time_to_s (sim_engine_now (e)) * 1e3);
}

int
main (int argc, char **argv)
{
  const char *topo = argc > 1 ? argv[1] : "topologies/dgx8x4.xml";
  bench_compute ();
  bench_storm (topo, 10);
  return 0;
}
