/* tests for sim-engine: streams, dependencies, max-min fair flows */
#include <glib.h>

#include "sim-engine.h"
#include "sim-error.h"
#include "sim-vec.h"

#define MS(x) ((SimTime) ((x) * 1e9)) /* milliseconds in picoseconds */

static void
run (SimEngine *e)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_engine_run (e, &error));
  g_assert_no_error (error);
}

/* a stream runs one activity at a time, in ready order; a dependency across
 * streams waits: a(1 ms) b(1 ms) on s0, c(2 ms) on s1 after a, d after b,c */
static void
test_streams (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int s0 = sim_engine_add_stream (e), s1 = sim_engine_add_stream (e);
  SimActivityId a = sim_engine_add_compute (e, s0, MS (1), 0);
  SimActivityId b = sim_engine_add_compute (e, s0, MS (1), 0);
  SimActivityId c = sim_engine_add_compute (e, s1, MS (2), 0);
  SimActivityId d = sim_engine_add_delay (e, MS (0.5), 0);
  sim_engine_add_dep (e, c, a);
  sim_engine_add_dep (e, d, b);
  sim_engine_add_dep (e, d, c);
  run (e);
  g_assert_cmpint (sim_engine_end (e, a), ==, MS (1));
  g_assert_cmpint (sim_engine_start (e, b), ==, MS (1));
  g_assert_cmpint (sim_engine_end (e, b), ==, MS (2));
  g_assert_cmpint (sim_engine_start (e, c), ==, MS (1));
  g_assert_cmpint (sim_engine_end (e, c), ==, MS (3));
  g_assert_cmpint (sim_engine_end (e, d), ==, MS (3.5));
}

/* two flows on one 100 GB/s link each get 50 GB/s: 1 GB takes 20 ms */
static void
test_two_flows_halve (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int l = sim_engine_add_link (e, 100e9);
  SimActivityId a = sim_engine_add_flow (e, &l, 1, 1e9, 0, 0, 0);
  SimActivityId b = sim_engine_add_flow (e, &l, 1, 1e9, 0, 0, 0);
  run (e);
  g_assert_cmpint (sim_engine_end (e, a), ==, MS (20));
  g_assert_cmpint (sim_engine_end (e, b), ==, MS (20));
}

/* the links the flows cross, each once, in the order first crossed: A over
 * L2 then L0, B over L0, L1, L2 give L2 L0 L1 (L3 is crossed by none);
 * the marks this leaves do not change the run that follows: A (2 GB) and B
 * (1 GB) share L0 and L2 (100 GB/s each) at 50 GB/s until B ends at 20 ms,
 * then A has 1 GB left alone at 100 GB/s: 30 ms */
static void
test_flow_links (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (GArray) links = g_array_new (FALSE, FALSE, sizeof (int));
  int l[4];
  for (int i = 0; i < 4; i++)
    l[i] = sim_engine_add_link (e, 100e9);
  int pa[2] = { l[2], l[0] }, pb[3] = { l[0], l[1], l[2] };
  SimActivityId a = sim_engine_add_flow (e, pa, 2, 2e9, 0, 0, 0);
  SimActivityId b = sim_engine_add_flow (e, pb, 3, 1e9, 0, 0, 0);
  sim_engine_flow_links (e, links);
  g_assert_cmpuint (links->len, ==, 3);
  g_assert_cmpint (g_array_index (links, int, 0), ==, l[2]);
  g_assert_cmpint (g_array_index (links, int, 1), ==, l[0]);
  g_assert_cmpint (g_array_index (links, int, 2), ==, l[1]);
  run (e);
  g_assert_cmpint (sim_engine_end (e, b), ==, MS (20));
  g_assert_cmpint (sim_engine_end (e, a), ==, MS (30));
}

/* A crosses L1 (100 GB/s) and L2 (20 GB/s), B only L1: A is held to 20 by
 * L2 and leaves 80 to B (max-min fairness, not an even split):
 * A 2 GB / 20 GB/s = 100 ms, B 8 GB / 80 GB/s = 100 ms */
static void
test_unused_share (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int l1 = sim_engine_add_link (e, 100e9), l2 = sim_engine_add_link (e, 20e9);
  int pa[2] = { l1, l2 };
  SimActivityId a = sim_engine_add_flow (e, pa, 2, 2e9, 0, 0, 0);
  SimActivityId b = sim_engine_add_flow (e, &l1, 1, 8e9, 0, 0, 0);
  run (e);
  g_assert_cmpint (sim_engine_end (e, a), ==, MS (100));
  g_assert_cmpint (sim_engine_end (e, b), ==, MS (100));
}

/* shares are recomputed when a flow ends: A 1 GB and B 3 GB share 100 GB/s;
 * A ends at 20 ms, B then has 2 GB left at 100 GB/s: ends at 40 ms.
 * A flow's own cap works the same way: C capped at 10 GB/s alone on a
 * link moves 1 GB in 100 ms, plus its 1 us latency */
static void
test_reshare_and_cap (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int l = sim_engine_add_link (e, 100e9), m = sim_engine_add_link (e, 100e9);
  SimActivityId a = sim_engine_add_flow (e, &l, 1, 1e9, 0, 0, 0);
  SimActivityId b = sim_engine_add_flow (e, &l, 1, 3e9, 0, 0, 0);
  SimActivityId c = sim_engine_add_flow (e, &m, 1, 1e9, 10e9, sim_time_from_s (1e-6), 0);
  run (e);
  g_assert_cmpint (sim_engine_end (e, a), ==, MS (20));
  g_assert_cmpint (sim_engine_end (e, b), ==, MS (40));
  g_assert_cmpint (sim_engine_end (e, c), ==, MS (100) + 1000000);
}

/* a flow that starts later takes its share from then on: A alone for 10 ms
 * (1 GB at 100 GB/s), then shares with B: A's last 1 GB at 50 GB/s ends at
 * 30 ms; B (2 GB) has 1 GB left then, alone: ends at 40 ms */
static void
test_late_start (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int l = sim_engine_add_link (e, 100e9);
  SimActivityId a = sim_engine_add_flow (e, &l, 1, 2e9, 0, 0, 0);
  SimActivityId wait = sim_engine_add_delay (e, MS (10), 0);
  SimActivityId b = sim_engine_add_flow (e, &l, 1, 2e9, 0, 0, 0);
  sim_engine_add_dep (e, b, wait);
  run (e);
  g_assert_cmpint (sim_engine_end (e, a), ==, MS (30));
  g_assert_cmpint (sim_engine_end (e, b), ==, MS (40));
}

/* flows on disjoint links do not disturb each other's shares */
static void
test_locality (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  int l[4];
  SimActivityId f[4];
  for (int i = 0; i < 4; i++)
    l[i] = sim_engine_add_link (e, 10e9);
  for (int i = 0; i < 4; i++)
    f[i] = sim_engine_add_flow (e, &l[i], 1, (i + 1) * 1e9, 0, 0, 0);
  run (e);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (sim_engine_end (e, f[i]), ==, MS (100 * (i + 1)));
  /* each start and end touched only its own flow: 4 starts + 4 ends,
   * the ends finding nobody left */
  g_assert_cmpuint (sim_engine_reshares (e), ==, 4);
}

static void
test_cycle (void)
{
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (GError) error = NULL;
  SimActivityId a = sim_engine_add_delay (e, 1, 0);
  SimActivityId b = sim_engine_add_delay (e, 1, 0);
  sim_engine_add_dep (e, a, b);
  sim_engine_add_dep (e, b, a);
  g_assert_false (sim_engine_run (e, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
}

static void
test_time (void)
{
  /* one rounding helper, rounding up */
  g_assert_cmpint (sim_time_from_s (1e-12), ==, 1);
  g_assert_cmpint (sim_time_from_s (1.5e-12), ==, 2);
  g_assert_cmpint (sim_time_from_s (1.0), ==, SIM_TIME_PS_PER_S);
  g_assert_cmpint (sim_time_from_s (-1.0), ==, 0);
}

/* sim-vec's growth keeps every element, on either side of the huge-page
 * placement: 3 MiB of guint64 (393,216) pushed one at a time; the
 * capacity doubles from 64, and the doubling from 131,072 elements (1 MiB,
 * an ordinary allocation) to 262,144 (2 MiB = SIM_VEC_HUGE_BYTES) is the
 * first placed on a 2 MiB boundary, as is the next, 524,288 (4 MiB);
 * sim_vec_room then replaces it with an empty one of the room asked, and
 * sim_vec_clear frees it */
static void
test_vec_growth (void)
{
  SIM_VEC (guint64) v = { 0 };
  const guint n = 3u << 17; /* 393,216 x 8 bytes = 3 MiB */
  const guintptr huge = (guintptr) 2 << 20;
  for (guint i = 0; i < n; i++) {
    sim_vec_push (&v, (guint64) i * 2654435761u);
    if (i == 131072 || i == 262144) {
      g_assert_cmpuint (v.cap, ==, 2 * i);
      g_assert_cmpuint ((guintptr) v.data % huge, ==, 0);
    }
  }
  g_assert_cmpuint (v.len, ==, n);
  g_assert_cmpuint (v.cap, ==, 524288);
  for (guint i = 0; i < n; i++)
    if (v.data[i] != (guint64) i * 2654435761u)
      g_assert_cmpuint (v.data[i], ==, (guint64) i * 2654435761u);
  sim_vec_truncate (&v);
  sim_vec_room (&v, 1u << 20);
  g_assert_cmpuint (v.len, ==, 0);
  g_assert_cmpuint (v.cap, ==, 1u << 20);
  v.data[(1u << 20) - 1] = 7; /* the room is there */
  sim_vec_clear (&v);
  g_assert_null (v.data);
  g_assert_cmpuint (v.cap, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/time", test_time);
  g_test_add_func ("/engine/streams", test_streams);
  g_test_add_func ("/engine/two-flows-halve", test_two_flows_halve);
  g_test_add_func ("/engine/unused-share", test_unused_share);
  g_test_add_func ("/engine/flow-links", test_flow_links);
  g_test_add_func ("/engine/reshare-and-cap", test_reshare_and_cap);
  g_test_add_func ("/engine/late-start", test_late_start);
  g_test_add_func ("/engine/locality", test_locality);
  g_test_add_func ("/engine/cycle", test_cycle);
  g_test_add_func ("/engine/vec-growth", test_vec_growth);
  return g_test_run ();
}
