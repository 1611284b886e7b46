/* tests for sim-iteration: schedules against their closed forms */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim-collective.h"
#include "sim-engine.h"
#include "sim-error.h"
#include "sim-iteration.h"
#include "sim-memory.h"
#include "sim-network.h"
#include "sim-schedule.h"
#include "sim-variability.h"
#include "test-util.h"
#include "test-ideal.h"

static void
check_bubble (const SimIteration *it, double want_step, double want_fraction)
{
  g_assert_cmpfloat_with_epsilon (it->step_s, want_step, 1e-9);
  g_assert_cmpfloat_with_epsilon (it->bubble_fraction, want_fraction, 1e-9);
  for (guint s = 0; s < it->stages->len; s++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, s);
    g_assert_cmpfloat_with_epsilon (st->bubble_s / it->step_s, want_fraction, 1e-9);
  }
}

/* 1F1B, p = 8, m = 16, 4 layers per stage: a pass is 4 ms forward, 8 ms
 * backward; the step is (m + p - 1)(tf + tb) = 23 x 12 ms = 276 ms and every
 * stage idles (p - 1)/(m + p - 1) = 7/23 of it */
static void
test_1f1b (void)
{
  g_auto (Run) r = { 0 };
  run_ideal (&r, "tp=1,pp=8,dp=1,gb=16,schedule=1f1b,gpu-variation=0");
  check_bubble (r.it, 23 * 12e-3, 7.0 / 23.0);
  /* in flight at the peak: p - stage micro-batches */
  g_assert_cmpuint (g_array_index (r.it->stages, SimStageTime, 0).peak_activation_bytes, ==,
                    8 * 4 * g_array_index (r.mem->stages, SimStageMemory, 0).activation_bytes_per_layer);
}

/* GPipe takes the same time but holds all m micro-batches */
static void
test_gpipe (void)
{
  g_auto (Run) r = { 0 };
  run_ideal (&r, "tp=1,pp=8,dp=1,gb=16,schedule=gpipe,gpu-variation=0");
  check_bubble (r.it, 23 * 12e-3, 7.0 / 23.0);
  g_assert_cmpuint (g_array_index (r.it->stages, SimStageTime, 0).peak_activation_bytes, ==,
                    16 * 4 * g_array_index (r.mem->stages, SimStageMemory, 0).activation_bytes_per_layer);
}

/* ZB-H1 (Qi et al. 2024, section 3.1), p = 8, m = 16, 4 layers per stage:
 * forward tF = 4 ms, the backward's input gradient tB = 4 ms and its
 * weight gradient tW = 4 ms a pass.  The paper's step for equal stages is
 * m (tF + tB + tW) + (p - 1)(tF + tB - tW) = 16 x 12 + 7 x 4 = 220 ms,
 * against 1F1B's (m + p - 1)(tF + tB + tW) = 23 x 12 = 276 ms (above,
 * the same work unsplit); every stage computes 192 ms and idles 28, 7/55
 * of the step.  The weight gradients free the activations, and every
 * stage reaches p = 8 micro-batches in flight before its first one does
 * (the paper: ZB-H1's peak is 1F1B's first stage's, p of them), where 1F1B
 * holds p - s: 5 on stage 3. */
static void
test_zb_h1 (void)
{
  g_auto (Run) r = { 0 };
  g_auto (Run) f = { 0 };
  guint64 layer;
  run_ideal_w (&r, "tp=1,pp=8,dp=1,gb=16,schedule=zb-h1,gpu-variation=0", 1e-3);
  check_bubble (r.it, 220e-3, 7.0 / 55.0);
  layer = g_array_index (r.mem->stages, SimStageMemory, 3).activation_bytes_per_layer;
  for (int s = 0; s < 7; s++) {
    g_assert_cmpuint (g_array_index (r.it->stages, SimStageTime, s).peak_activation_bytes, ==,
                      8 * 4 * layer);
    g_assert_cmpuint (g_array_index (r.mem->stages, SimStageMemory, s).activations_peak_bytes, ==,
                      8 * 4 * layer);
  }
  g_assert_cmpfloat (g_array_index (r.mem->stages, SimStageMemory, 3).in_flight_micro_batches, ==, 8);
  /* the same costs under 1F1B: the split changes nothing there */
  run_ideal_w (&f, "tp=1,pp=8,dp=1,gb=16,schedule=1f1b,gpu-variation=0", 1e-3);
  check_bubble (f.it, 276e-3, 7.0 / 23.0);
  g_assert_cmpfloat (g_array_index (f.mem->stages, SimStageMemory, 3).in_flight_micro_batches, ==, 5);
}

/* a stage's program as text: F, B or W, then the micro-batch, or with
 * two chunks the chunk and the micro-batch ("F1.0"), a * after a pass
 * run together with the one beside it (DualPipeV's F&B) */
static char *
program_text (SimSchedule schedule, int p, int s, int m)
{
  int v = sim_schedule_chunks (schedule) == 2 ? 2 : 1;
  g_autoptr (GArray) order = sim_schedule_stage (schedule, p, s, m, v);
  GString *t = g_string_new (NULL);
  g_assert_cmpuint (order->len, ==, sim_schedule_passes (schedule, m, v));
  for (guint i = 0; i < order->len; i++) {
    const SimPipeOp *op = &g_array_index (order, SimPipeOp, i);
    g_string_append_printf (t, "%s%c", i ? " " : "", "FBW"[op->kind]);
    if (v > 1)
      g_string_append_printf (t, "%u.", op->chunk);
    g_string_append_printf (t, "%u%s", op->micro_batch, op->paired ? "*" : "");
  }
  return g_string_free (t, FALSE);
}

/* ZB-V and DualPipeV on p = 2, m = 4, written out by hand from
 * torch.distributed.pipelining's loops (sim-schedule.h).  ZB-V, rank 0:
 * 2(p - s) - 1 = 3 forwards of chunk 0; p - s = 2 of F1 B1 W1; the steady
 * loop F0 B0 W0 F1 B1 W1 while forwards are left (twice, the second
 * without F0); then p - s = 2 of B0 W0.  Rank 1: 1 F0; s = 1 pair F1 F0;
 * 1 of F1 B1 W1; the steady loop twice; s = 1 pair B0 B1; 1 of B0 W0;
 * then the W1 and W0 left.  DualPipeV, rank 0: 2(p - s - 1) = 2 F0; one
 * F0 F1; one B1 (its W held) W F1; m - 2p + s + 1 = 1 of F0&B1 F1&B0
 * (paired, each backward whole); one B1 then F1&B0; the cool-down's
 * s + 1 = 1 round, B1 whole and B0 split from its middle on; one W then
 * B0; one W.  Rank 1, the last: F0 F1 twice; two main rounds, the first's
 * F0 and B1 not paired; two cool-down rounds, split from the second on;
 * the two W held back. */
static void
test_v_programs (void)
{
  g_autofree char *z0 = program_text (SIM_SCHEDULE_ZB_V, 2, 0, 4);
  g_autofree char *z1 = program_text (SIM_SCHEDULE_ZB_V, 2, 1, 4);
  g_autofree char *d0 = program_text (SIM_SCHEDULE_DUALPIPE_V, 2, 0, 4);
  g_autofree char *d1 = program_text (SIM_SCHEDULE_DUALPIPE_V, 2, 1, 4);
  g_assert_cmpstr (z0, ==, "F0.0 F0.1 F0.2 F1.0 B1.0 W1.0 F1.1 B1.1 W1.1 F0.3 B0.0 W0.0 F1.2 B1.2 W1.2 "
                           "B0.1 W0.1 F1.3 B1.3 W1.3 B0.2 W0.2 B0.3 W0.3");
  g_assert_cmpstr (z1, ==, "F0.0 F1.0 F0.1 F1.1 B1.0 W1.0 F0.2 B0.0 W0.0 F1.2 B1.1 W1.1 F0.3 B0.1 W0.1 "
                           "F1.3 B1.2 W1.2 B0.2 B1.3 B0.3 W0.2 W1.3 W0.3");
  g_assert_cmpstr (d0, ==, "F0.0 F0.1 F0.2 F1.0 B1.0 W1.0 F1.1 F0.3* B1.1* W1.1* F1.2* B0.0* W0.0* "
                           "B1.2 W1.2 F1.3* B0.1* W0.1* B1.3 W1.3 B0.2 W0.2 B0.3 W0.3");
  g_assert_cmpstr (d1, ==, "F0.0 F1.0 F0.1 F1.1 F0.2 B1.0 W1.0 F1.2* B0.0* W0.0* F0.3* B1.1* W1.1* "
                           "F1.3* B0.1* W0.1* B1.2 W1.2 B0.2 W0.2 B1.3 B0.3 W1.3 W0.3");
}

/* DualPipe's program (sim-schedule.h) on p = 2, m = 4, two micro-batches
 * entering at each end: DualPipeV's on one rank and two micro-batches a
 * phase (dualpipe.py's half_rank 0 on both ranks, its middle rank):
 * F0 F1 twice (its step 2), then its step 4 once, the middle rank's first
 * pair not overlapped (F0 B1) and the second paired (F1&B0), then step 6:
 * B1 whole, B0 split, its W last.  Rank 0's phases are the directions,
 * rank 1's swapped. */
static void
test_dualpipe_program (void)
{
  g_autofree char *r0 = program_text (SIM_SCHEDULE_DUALPIPE, 2, 0, 4);
  g_autofree char *r1 = program_text (SIM_SCHEDULE_DUALPIPE, 2, 1, 4);
  g_assert_cmpstr (r0, ==, "F0.0 F1.0 F0.1 B1.0 W1.0 F1.1* B0.0* W0.0* B1.1 W1.1 B0.1 W0.1");
  g_assert_cmpstr (r1, ==, "F1.0 F0.0 F1.1 B0.0 W0.0 F0.1* B1.0* W1.0* B0.1 W0.1 B1.1 W1.1");
}

/* That program timed with every pass 16 ms (Llama 3 8B's 32 layers in two
 * blocks of 16, forward, input and weight gradient 1 ms a layer), sends
 * free.  By hand, in units of 16 ms: the first copy (chunk 0) runs down
 * from rank 0, its loss on rank 1; the second up from rank 1.
 *   0-1  both ranks F of their own end's first micro-batch
 *   1-2  each F of the other end's, just arrived      2-3  F0.1 / F1.1
 *   3-5  each the backward of the loss it holds, B and W
 *   5-6  the other end's second forward, arrived at 3
 *   6-8  the backward arrived at 4, B and W           8-10 the second loss's
 *   10-12 the backward arrived at 9
 * 12 units, 192 ms, every unit computing: no bubble.  In flight on rank
 * 0 at most 3 chunks of 16 layers, DualPipe's PP + 1 (deepseek-ai/DualPipe
 * README.md, its table), against 1F1B's p = 2 stages of its one copy; and
 * twice the parameters of a 1F1B stage. */
static void
test_dualpipe (void)
{
  g_auto (Run) r = { 0 };
  g_auto (Run) f = { 0 };
  const SimStageMemory *s0, *f0;
  run_ideal_w (&r, "tp=4,pp=2,dp=1,gb=4,schedule=dualpipe,gpu-variation=0", 1e-3);
  check_bubble (r.it, 192e-3, 0.0);
  s0 = &g_array_index (r.mem->stages, SimStageMemory, 0);
  g_assert_cmpuint (s0->in_flight_chunks, ==, 3);
  g_assert_cmpfloat (s0->in_flight_micro_batches, ==, 3);
  g_assert_cmpuint (g_array_index (r.it->stages, SimStageTime, 0).peak_activation_bytes, ==,
                    s0->activations_peak_bytes);
  run_ideal_w (&f, "tp=4,pp=2,dp=1,gb=4,schedule=1f1b,gpu-variation=0", 1e-3);
  f0 = &g_array_index (f.mem->stages, SimStageMemory, 0);
  g_assert_cmpuint (s0->layers, ==, 2 * f0->layers);
}

/* Those programs timed, p = 2, m = 4 (tp 4 fills the node; the ideal
 * layers have no TP collectives), Llama 3 8B's 32 layers in 4 chunks
 * of 8, every pass of a chunk 8 ms (forward 1 ms, input gradient 1 ms and
 * weight gradient 1 ms a layer), sends free.  Walked by hand in units of
 * 8 ms, each pass starting when its rank is free and its input is there
 * (chunk 0 of rank 1 after chunk 0 of rank 0, chunk 1 of rank 1 after its
 * chunk 0, chunk 1 of rank 0, the loss, after chunk 1 of rank 1; the
 * backwards the other way; a W after its B):
 *   ZB-V       rank 0 runs its 24 passes back to back from 0; rank 1
 *              waits 1 for the first forward and then never: 25 units;
 *   DualPipeV  rank 1 from 1 without a gap; rank 0 waits once, 1 unit,
 *              for rank 1's B0.3: 25 units.
 * Both 200 ms, each rank idle 8 ms, 1/25 of the step; the activations of
 * at most 4 chunks (ZB-V, p micro-batches as 1F1B's first stage, the
 * paper's section 6) or 5 (DualPipeV) on rank 0 (F count less W count,
 * walking the programs above), the simulated timeline's peak the ledger's. */
static void
test_v_schedules (void)
{
  const char *plans[] = { "tp=4,pp=2,dp=1,gb=4,schedule=zb-v,gpu-variation=0",
                          "tp=4,pp=2,dp=1,gb=4,schedule=dualpipe-v,gpu-variation=0" };
  for (guint i = 0; i < G_N_ELEMENTS (plans); i++) {
    g_auto (Run) r = { 0 };
    const SimStageMemory *s0;
    run_ideal_w (&r, plans[i], 1e-3);
    check_bubble (r.it, 200e-3, 1.0 / 25.0);
    s0 = &g_array_index (r.mem->stages, SimStageMemory, 0);
    g_assert_cmpuint (s0->in_flight_chunks, ==, i == 0 ? 4 : 5);
    /* (rank 0 holds the loss as well, chunk 1 being the model's last) */
    g_assert_cmpuint (s0->activations_peak_bytes, >, s0->in_flight_chunks * 8 * s0->activation_bytes_per_layer);
    g_assert_cmpuint (g_array_index (r.it->stages, SimStageTime, 0).peak_activation_bytes, ==,
                      s0->activations_peak_bytes);
  }
}

/* ZB-H1's programs, written out by hand from the authors' loops
 * (ZeroBubbleH1Pipeline.steps, sim-schedule.h): p = 4, stage 1, m = 6:
 * 2 warm-up forwards; 1 pair F B; F B W while forwards remain (W taking
 * the oldest, micro-batch 0 first); B W; the one W held back.  With
 * fewer micro-batches than stages (m = 2, stage 0) the warm-up stops at
 * the forwards there are. */
static void
test_zb_h1_program (void)
{
  g_autofree char *a = program_text (SIM_SCHEDULE_ZB_H1, 4, 1, 6);
  g_autofree char *b = program_text (SIM_SCHEDULE_ZB_H1, 4, 0, 2);
  g_autofree char *c = program_text (SIM_SCHEDULE_ZB_H1, 4, 3, 4);
  g_assert_cmpstr (a, ==, "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 B4 W3 B5 W4 W5");
  g_assert_cmpstr (b, ==, "F0 F1 B0 W0 B1 W1");
  /* the last stage: no warm-up, 3 pairs, one F B W, then the 3 W */
  g_assert_cmpstr (c, ==, "F0 B0 F1 B1 F2 B2 F3 B3 W0 W1 W2 W3");
}

/* E[max of n standard normals] against its closed forms (n = 2: 1/sqrt(pi);
 * 3: 3/(2 sqrt(pi)); 4: (6/pi^1.5) atan(sqrt(2))) and Tippett's 1925 table
 * (n = 1000: 3.24144); twice, the second from the cache; growing with n */
static void
test_expected_max (void)
{
  for (int k = 0; k < 2; k++) {
    g_assert_cmpfloat (sim_normal_expected_max (1), ==, 0.0);
    g_assert_cmpfloat_with_epsilon (sim_normal_expected_max (2), 1 / sqrt (G_PI), 1e-9);
    g_assert_cmpfloat_with_epsilon (sim_normal_expected_max (3), 3 / (2 * sqrt (G_PI)), 1e-9);
    g_assert_cmpfloat_with_epsilon (sim_normal_expected_max (4), 6 / pow (G_PI, 1.5) * atan (sqrt (2)), 1e-9);
    g_assert_cmpfloat_with_epsilon (sim_normal_expected_max (1000), 3.24144, 1e-5);
  }
  for (int n = 2; n < 100000; n *= 3)
    g_assert_cmpfloat (sim_normal_expected_max (3 * n), >, sim_normal_expected_max (n));
  g_assert_cmpfloat (sim_variability_slowdown (0.015, 1), ==, 0.0);
  g_assert_cmpfloat (sim_variability_slowdown (0, 1000), ==, 0.0);
  g_assert_cmpfloat_with_epsilon (sim_variability_slowdown (0.015, 1000), 0.015 * 3.24144, 1e-7);
}

/* The same 1F1B on a real cluster's spread of GPU speeds: 8 GPUs at 1 +
 * 0.015 z each, the step waits for the slowest, E[max of 8 standard
 * normals] = 1.42360 (Teichroew 1956; sim_normal_expected_max): every
 * pass takes 1 + 0.015 x 1.42360 = 1.021354 of its nominal time, so the
 * step is 276 ms x 1.021354 = 281.894 ms with the same bubble, 7/23 */
static void
test_variability (void)
{
  g_auto (Run) r = { 0 };
  run_ideal (&r, "tp=1,pp=8,dp=1,gb=16,schedule=1f1b");
  g_assert_cmpfloat_with_epsilon (r.p->gpu_variation, 0.015, 1e-12);
  g_assert_cmpfloat_with_epsilon (r.it->step_s, 23 * 12e-3 * (1 + 0.015 * 1.4236003), 1e-8);
  g_assert_cmpfloat_with_epsilon (r.it->bubble_fraction, 7.0 / 23.0, 1e-9);
}

/* A straggler: GPU 3 (stage s = 3 of the 1F1B above, p = 8, m = 16,
 * uniform otherwise) computes 1.5x: 6 ms forward, 12 ms backward a
 * micro-batch, the others 4 and 8.  Stage 3's timeline:
 *   idle until micro-batch 0 has crossed stages 0-2:      s x 4    =  12 ms
 *   its 16 forwards and 16 backwards, never waiting on its faster
 *   neighbours once the first backward is back:      16 x (6 + 12) = 288 ms
 *   that first backward returns (p-1-s)(4 + 8) = 48 ms after its forward
 *   ended, while it forwarded its (p-1-s) = 4 further warm-up
 *   micro-batches (24 ms): idle                          48 - 24    =  24 ms
 *   after its last backward, stages 2, 1, 0 run theirs:    s x 8    =  24 ms
 * step 12 + 288 + 24 + 24 = 348 ms (276 ms with none slow); stage 3's
 * forward 16 x 6 = 96 ms, the others' 16 x 4 = 64 ms */
static void
test_slow_stage (void)
{
  g_auto (Run) r = { 0 };
  run_ideal (&r, "tp=1,pp=8,dp=1,gb=16,schedule=1f1b,gpu-variation=0,slow-gpu=3:1.5");
  g_assert_cmpfloat_with_epsilon (r.it->step_s, 348e-3, 1e-9);
  for (guint s = 0; s < r.it->stages->len; s++)
    g_assert_cmpfloat_with_epsilon (g_array_index (r.it->stages, SimStageTime, s).forward_s,
                                    s == 3 ? 96e-3 : 64e-3, 1e-9);
}

/* interleaved, v = 2: chunks of 2 layers (2 ms + 4 ms); the step is
 * (v m + p - 1)(tf + tb)/v = 39 x 6 ms = 234 ms, bubble (p-1)/(v m + p - 1)
 * = 7/39 */
static void
test_interleaved (void)
{
  g_auto (Run) r = { 0 };
  run_ideal (&r, "tp=1,pp=8,dp=1,gb=16,schedule=interleaved,v=2,gpu-variation=0");
  check_bubble (r.it, 39 * 6e-3, 7.0 / 39.0);
}

/* Megatron-Core's split with the embedding and the loss counted as layers
 * (sim-plan.h): Llama 3 8B's 32 layers + 2 on pp 2 x v 17 = 34 chunks of
 * one counted layer, so chunk 0 of stage 0 holds the embedding alone and
 * chunk 16 of stage 1 the output layer and loss alone.  With layers of
 * 1 ms forward and 2 ms backward, the embedding 0.5 ms and 0.25 ms, the
 * output layer 3 ms and 6 ms, each stage computes, over 16 micro-batches:
 *   stage 0: forward 16 x (16 x 1 + 0.5) = 264 ms, backward 16 x (16 x 2 + 0.25) = 516 ms
 *   stage 1: forward 16 x (16 x 1 + 3) = 304 ms, backward 16 x (16 x 2 + 6) = 608 ms
 * (a chunk without a layer that dropped its embedding or output layer
 * would lose 8 or 48 ms of them) */
static void
test_empty_edge_chunks (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) mem = NULL;
  SimIteration *it;
  SimLayerCost c = { 0 };
  const SimStageTime *s0, *s1;
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=4,pp=2,dp=1,gb=16,schedule=interleaved,v=17,"
                                           "account-for-embedding-in-pipeline-split,"
                                           "account-for-loss-in-pipeline-split,gpu-variation=0", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_plan_chunk_layers (p, m, 0, 0), ==, 0);
  g_assert_cmpuint (sim_plan_chunk_layers (p, m, 1, 16), ==, 0);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 0), ==, 16);
  g_assert_cmpuint (sim_plan_stage_layers (p, m, 1), ==, 16);
  mem = sim_memory_compute (t, m, p);
  c.layer_fwd_s = 1e-3;
  c.layer_bwd_s = 2e-3;
  c.embed_fwd_s = 0.5e-3;
  c.embed_bwd_s = 0.25e-3;
  c.head_fwd_s = 3e-3;
  c.head_bwd_s = 6e-3;
  it = sim_iteration_run_with_cost (t, m, p, mem, FALSE, &c, &error);
  g_assert_no_error (error);
  s0 = &g_array_index (it->stages, SimStageTime, 0);
  s1 = &g_array_index (it->stages, SimStageTime, 1);
  g_assert_cmpfloat_with_epsilon (s0->forward_s, 0.264, 1e-9);
  g_assert_cmpfloat_with_epsilon (s0->backward_s, 0.516, 1e-9);
  g_assert_cmpfloat_with_epsilon (s1->forward_s, 0.304, 1e-9);
  g_assert_cmpfloat_with_epsilon (s1->backward_s, 0.608, 1e-9);
  sim_iteration_free (it);
}

/* the timeline's activation peak is the ledger's count on the textbook
 * cases (the headline layout, with real costs and traffic) */
static void
test_timeline_matches_ledger (void)
{
  /* the torchtitan plans add the loss's moment on the last stage
   * (sim_activations_output) and op-level checkpointing's working set */
  const char *plans[] = { "tp=8,pp=4,dp=2,gb=64", "tp=8,pp=4,dp=2,gb=64,schedule=interleaved,v=2",
                          "tp=8,pp=4,dp=2,gb=32,schedule=gpipe,mb=1",
                          "tp=8,pp=4,dp=2,gb=64,framework=torchtitan",
                          "tp=8,pp=4,dp=2,gb=64,framework=torchtitan,recompute=selective",
                          "tp=8,pp=4,dp=2,gb=64,recompute-method=block,recompute-num-layers=3",
                          "tp=8,pp=4,dp=2,gb=64,recompute-method=uniform,recompute-num-layers=4",
                          "tp=8,pp=4,dp=2,gb=64,schedule=interleaved,v=2,recompute-method=every,"
                          "recompute-num-layers=3",
                          "tp=8,pp=4,dp=2,gb=64,schedule=zb-h1",
                          "tp=8,pp=4,dp=2,gb=64,schedule=zb-h1,recompute=selective,framework=torchtitan",
                          "tp=8,pp=4,dp=2,gb=64,schedule=zb-v", "tp=8,pp=4,dp=2,gb=64,schedule=dualpipe-v",
                          "tp=8,pp=4,dp=2,gb=64,schedule=dualpipe" };
  for (guint i = 0; i < G_N_ELEMENTS (plans); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 0);
    g_autoptr (SimModel) m = test_load_model ("llama3-70b.xml");
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (SimMemory) mem = NULL;
    g_autoptr (SimIteration) it = NULL;
    g_assert_true (sim_plan_request_parse_string (p_req, plans[i], &error));
    g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
    mem = sim_memory_compute (t, m, p);
    it = sim_iteration_run (t, m, p, mem, FALSE, &error);
    g_assert_no_error (error);
    for (int s = 0; s < p->pp; s++)
      g_assert_cmpuint (g_array_index (it->stages, SimStageTime, s).peak_activation_bytes, ==,
                        g_array_index (mem->stages, SimStageMemory, s).activations_peak_bytes);
  }
}

static SimIteration *
run_plan (const SimTopology *t, const SimModel *m, const char *plan)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlan) p = test_resolve_plan (t, m, plan);
  g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
  SimIteration *it = sim_iteration_run (t, m, p, mem, FALSE, &error);
  g_assert_no_error (error);
  return it;
}

/* torchtitan's async TP pairs the forward's all-gathers and reduce-
 * scatters with their matmuls but not the backward's (tp_beside).  With
 * sequence parallelism a dense layer's forward sends two all-gathers and
 * two reduce-scatters of the layer input's size and its backward the same
 * four, so on Llama-3-70B at tp 8 (no recomputation), where each layer's
 * forward compute outlasts its four collectives, async TP leaves exactly
 * the backward's half of the TP time exposed; Transformer Engine's
 * overlap (megatron) hides both halves. */
static void
test_async_tp (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx-h100.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-70b.xml");
  const char *base = "tp=8,pp=1,dp=1,gb=4,mb=1,gpu-variation=0";
  g_autofree char *vanilla =
      g_strdup_printf ("%s,framework=torchtitan,torch-compile=true,tp-comm-overlap=false", base);
  g_autofree char *async =
      g_strdup_printf ("%s,framework=torchtitan,torch-compile=true,tp-comm-overlap=true", base);
  g_autofree char *te = g_strdup_printf ("%s,tp-comm-overlap=true", base);
  g_autoptr (SimIteration) v = run_plan (t, m, vanilla);
  g_autoptr (SimIteration) a = run_plan (t, m, async);
  g_autoptr (SimIteration) x = run_plan (t, m, te);
  g_assert_cmpfloat (v->exposed_tp_s, >, 0.1);
  g_assert_cmpfloat_with_epsilon (a->exposed_tp_s, v->exposed_tp_s / 2, 1e-6 * v->exposed_tp_s);
  g_assert_cmpfloat (x->exposed_tp_s, ==, 0);
}

/* the symmetry-reduced mode (one replica computes, every replica's gradient
 * traffic is simulated) agrees with full fidelity within 1 %: on a regular
 * cluster the replicas are identical */
static void
test_symmetric (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 0);
  g_autoptr (SimModel) m = test_load_model ("llama3-70b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (SimMemory) mem = NULL;
  g_autoptr (SimIteration) a = NULL;
  g_autoptr (SimIteration) b = NULL;
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=4,pp=4,dp=4,gb=64", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  mem = sim_memory_compute (t, m, p);
  a = sim_iteration_run (t, m, p, mem, FALSE, &error);
  b = sim_iteration_run (t, m, p, mem, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (a->symmetric && !b->symmetric);
  g_assert_cmpfloat (fabs (a->step_s - b->step_s) / b->step_s, <, 0.01);
}

/* On a rail-optimised cluster (dgx8x4: GPU i on NIC i on rail i), the
 * symmetry-reduced run builds the gradient buckets and parameter gathers
 * of TP rank 0 only (dp_mirrored) where each TP group is an aligned block
 * of a node: tp 8, or tp 4 and 2 with sequence parallelism and ZeRO-1 or
 * more.  The full-fidelity run builds every replica and every TP rank's
 * collectives; the two agree to the picosecond (the step, each exposed
 * communication and the bubble) on 1F1B, ZeRO-0/1/2/3 and interleaved
 * layouts.  tp 4 without sequence parallelism (its TP all-reduce may take
 * a tree the shift between ranks does not preserve) and ZeRO-0 with tp 4
 * are not mirrored. */
static void
test_dp_mirror (void)
{
  static const struct {
    const char *plan;
    gboolean mirrored;
  } cases[] = {
    { "tp=8,pp=2,dp=4", TRUE },
    { "tp=8,pp=1,dp=8,zero=0", TRUE },
    { "tp=8,pp=2,dp=4,zero=3", TRUE },
    { "tp=8,pp=4,dp=2,schedule=interleaved,v=4", TRUE },
    { "tp=4,pp=4,dp=4,gb=64", TRUE },
    { "tp=2,pp=4,dp=8,gb=64,zero=2", TRUE },
    { "tp=4,pp=2,dp=8,gb=64,sp=false", FALSE },
    { "tp=4,pp=2,dp=8,gb=64,zero=0", FALSE },
  };
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 0);
  g_autoptr (SimModel) m = test_load_model ("llama3-70b.xml");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
    g_autoptr (SimPlan) p = NULL;
    g_autoptr (SimMemory) mem = NULL;
    g_autoptr (SimIteration) a = NULL;
    g_autoptr (SimIteration) b = NULL;
    g_assert_true (sim_plan_request_parse_string (p_req, cases[i].plan, &error));
    g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
    mem = sim_memory_compute (t, m, p);
    a = sim_iteration_run (t, m, p, mem, FALSE, &error);
    b = sim_iteration_run (t, m, p, mem, TRUE, &error);
    g_assert_no_error (error);
    g_assert_cmpint (a->dp_mirrored, ==, cases[i].mirrored);
    g_assert_false (b->dp_mirrored);
    if (!cases[i].mirrored)
      continue;
    g_assert_cmpfloat_with_epsilon (a->step_s, b->step_s, 1e-12);
    g_assert_cmpfloat_with_epsilon (a->exposed_dp_s, b->exposed_dp_s, 1e-12);
    g_assert_cmpfloat_with_epsilon (a->exposed_pp_s, b->exposed_pp_s, 1e-12);
    g_assert_cmpfloat_with_epsilon (a->exposed_tp_s, b->exposed_tp_s, 1e-12);
    g_assert_cmpfloat_with_epsilon (a->bubble_fraction, b->bubble_fraction, 1e-12);
    g_test_message ("%s: step %.9f s both ways, exposed DP %.9f s", cases[i].plan, a->step_s,
                    a->exposed_dp_s);
  }
}

/* model FLOPs: Narayanan et al.'s closed form for the GPT layer,
 * 72 B s L h^2 (1 + s/6h + V/12Lh), and 96 ... V/16Lh with full
 * recomputation (GPT-3 175B, B = 1536, s = 2048) */
static void
test_flops (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = test_load_topology ("dgx-a100.xml", 0);
  g_autoptr (SimModel) m = test_load_model ("gpt3-175b.xml");
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  double want = 0;
  g_assert_true (sim_plan_request_parse_string (p_req, "tp=8,pp=8,dp=8,gb=1536", &error));
  g_assert_nonnull (p = sim_plan_resolve (p_req, t, m, &error));
  want = 72.0 * 1536 * 2048 * 96 * 12288.0 * 12288 * (1 + 2048 / (6 * 12288.0) + 51200 / (12 * 96 * 12288.0));
  g_assert_cmpfloat (fabs (sim_cost_model_flop (m, p) / want - 1), <, 1e-12);
  g_assert_cmpfloat (fabs (sim_cost_narayanan_flop (m, 1536, 2048, FALSE) / want - 1), <, 1e-12);
}

/* sim_iteration_bound_s: with nothing to communicate (one GPU) the step is
 * its passes and its optimizer step one after another, so the bound is the
 * step but for the picosecond each of its activities may round up (2m
 * passes, the last backward layer by layer for the gradient buckets: at
 * most 2m + L + 1 of them);
 * on layouts with every kind of traffic, schedule and recomputation it is
 * at most the step, and with p stages of 1F1B at least the classic
 * (m + p - 1)/m of one stage's work (the bubble it accounts for). */
static void
test_bound (void)
{
  static const struct {
    const char *topology;
    int nodes;
    const char *model, *plan;
  } cases[] = {
    { "tests/data/h100x1.xml", 0, "llama3-8b.xml", "tp=1,pp=1,dp=1,gb=4" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=8,pp=4,dp=1,gb=32" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=8,pp=4,dp=1,gb=32,recompute=full" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=4,pp=4,dp=2,gb=32,schedule=interleaved,v=2" },
    { "dgx8x4.xml", 0, "llama3-8b.xml", "tp=2,cp=2,pp=2,dp=8,gb=64,zero=3" },
    { "dgx8x4.xml", 4, "mixtral-8x7b.xml", "tp=2,pp=2,dp=8,ep=8,gb=64" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=8,pp=4,dp=1,gb=32,schedule=zb-h1" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=8,pp=4,dp=1,gb=32,schedule=zb-v" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=8,pp=4,dp=1,gb=32,schedule=dualpipe-v" },
    { "dgx8x4.xml", 4, "llama3-70b.xml", "tp=8,pp=4,dp=1,gb=32,schedule=dualpipe" },
    { "dgx8x4.xml", 4, "mixtral-8x7b.xml", "tp=2,pp=2,dp=8,ep=8,gb=64,schedule=dualpipe" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GError) error = NULL;
    g_autoptr (SimTopology) t = test_load_topology (cases[i].topology, cases[i].nodes);
    g_autoptr (SimModel) m = test_load_model (cases[i].model);
    g_autoptr (SimPlan) p = test_resolve_plan (t, m, cases[i].plan);
    g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
    g_autoptr (SimIteration) it = sim_iteration_run (t, m, p, mem, FALSE, &error);
    double bound = sim_iteration_bound_s (t, m, p, mem), mb = (double) p->micro_batches;
    g_assert_no_error (error);
    g_print ("# %-16s %-44s step %10.6f s  bound %10.6f s  %5.1f%%\n", cases[i].model, cases[i].plan,
             it->step_s, bound, 100 * bound / it->step_s);
    g_assert_cmpfloat (bound, <=, it->step_s);
    if (i == 0)
      g_assert_cmpfloat (it->step_s - bound, <=, (2 * mb + (double) m->layers + 1) * 1e-12 + 1e-12 * it->step_s);
    if (p->pp > 1 && p->virtual_stages == 1 && !sim_schedule_splits_backward (p->schedule)) {
      /* stage 0's work alone, from its compute sums */
      const SimStageTime *st = &g_array_index (it->stages, SimStageTime, 0);
      double work = st->forward_s + st->backward_s + st->recompute_s;
      g_assert_cmpfloat (bound, >=, work * (mb + p->pp - 1) / mb * (1 - 0.05));
    }
  }
}

/* an all-reduce of `bytes` over gpus[0..n), alone on the network, as the
 * builder's choice predicts it */
static double
all_reduce_s (SimNetwork *net, const int *gpus, int n, double bytes)
{
  SimCollChoice c;
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_collective_choose (net, SIM_OP_ALL_REDUCE, gpus, n, bytes, SIM_ALGO_AUTO,
                                        SIM_PROTO_AUTO, &c, &error));
  return c.predicted_s;
}

/* FP8 delayed scaling: after each pass's compute, Transformer Engine
 * all-reduces the chunk's amaxes over Megatron-Core's amax group, TP x DP x
 * CP of the stage (sim-iteration.c, amax_reduce).  Llama-3-8B on dgx8x4,
 * tp 8, pp 1, dp 8, 8 micro-batches, the gradients reduced after the whole
 * backward (overlap off, so nothing overlaps the passes): every pass waits
 * for its all-reduce, so the step grows by 8 x (fwd + bwd) all-reduces.
 * With --tp-only-amax-red the group is one node's 8 GPUs instead of all 64;
 * the difference of the two steps is 8 x [(F64 - F8) + (B64 - B8)], F and
 * B the all-reduce of the 32 layers' amaxes alone on the network: 4 GEMMs x
 * 3 tensors x 4 bytes x 32 = 1536 bytes forward, x 2 tensors = 1024 bytes
 * backward.  The same plan under current scaling (whose scales need no
 * reduction over data-parallel ranks) and with PyTorch FSDP take the same
 * step either way, and --tp-only-amax-red needs --fp8. */
static void
test_fp8_amax (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 0);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  const char *base = "tp=8,pp=1,dp=8,gb=64,fp8=hybrid,overlap=false";
  const char *same[] = { "fp8-recipe=current", "framework=fsdp,zero=1" };
  int all[64], node[8];
  double f64, f8, b64, b8, d;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) bad_req = sim_plan_request_new ();
  g_autoptr (SimPlan) bad = NULL;

  for (int i = 0; i < 64; i++)
    all[i] = i;
  for (int i = 0; i < 8; i++)
    node[i] = i;
  f64 = all_reduce_s (net, all, 64, 1536);
  f8 = all_reduce_s (net, node, 8, 1536);
  b64 = all_reduce_s (net, all, 64, 1024);
  b8 = all_reduce_s (net, node, 8, 1024);
  g_assert_cmpfloat (f64, >, f8);
  for (int k = 0; k < 3; k++) {
    g_autofree char *wide = g_strdup_printf ("%s%s%s", base, k ? "," : "", k ? same[k - 1] : "");
    g_autofree char *narrow = g_strdup_printf ("%s,tp-only-amax-red", wide);
    g_autoptr (SimPlan) pw = test_resolve_plan (t, m, wide);
    g_autoptr (SimPlan) pn = test_resolve_plan (t, m, narrow);
    g_autoptr (SimMemory) mw = sim_memory_compute (t, m, pw);
    g_autoptr (SimMemory) mn = sim_memory_compute (t, m, pn);
    g_autoptr (SimIteration) w = sim_iteration_run (t, m, pw, mw, FALSE, &error);
    g_autoptr (SimIteration) n = sim_iteration_run (t, m, pn, mn, FALSE, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (pw->micro_batches, ==, 8);
    d = k == 0 ? 8 * ((f64 - f8) + (b64 - b8)) : 0;
    g_test_message ("%s: step %.9f s, with tp-only-amax-red %.9f s (want a difference of %.9f s)",
                    wide, w->step_s, n->step_s, d);
    /* each delay is rounded up to the picosecond (sim_time_from_s) */
    g_assert_cmpfloat_with_epsilon (w->step_s - n->step_s, d, 32 * 1e-12);
    /* what the pass waits for is data-parallel communication, exposed */
    g_assert_cmpfloat_with_epsilon (w->exposed_dp_s - n->exposed_dp_s, d, 32 * 1e-12);
  }
  g_assert_true (sim_plan_request_parse_string (bad_req, "tp=8,pp=1,dp=8,tp-only-amax-red", &error));
  g_assert_null (bad = sim_plan_resolve (bad_req, t, m, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_PLAN);
  g_assert_nonnull (strstr (error->message, "--tp-only-amax-red: expected --fp8"));
}

/* Current scaling under sequence parallelism: Transformer Engine
 * all-reduces, over the TP group and on the compute stream, the amax of
 * each column-parallel linear's input and of each row-parallel linear's
 * output gradient (sim-iteration-build.c, tp_amax_reduce).  Llama-3-8B on
 * dgx8x4, tp 8 (sequence parallel), pp 1, dp 8, 8 micro-batches: per
 * micro-batch 32 layers x (2 forward + 2 backward) = 128 all-reduces of 4
 * bytes over one node's 8 GPUs, each R alone on the network, so the step
 * exposes 8 x 128 x R of TP communication (each delay rounded up to the
 * picosecond), with TP's own collectives hidden behind the GEMMs; delayed
 * scaling exposes none, and neither does tp 1 (no TP group). */
static void
test_fp8_tp_amax (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 0);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimEngine) e = sim_engine_new ();
  g_autoptr (SimNetwork) net = sim_network_new (t, e);
  const char *plans[] = { "tp=8,pp=1,dp=8,gb=64,fp8=hybrid,fp8-recipe=current",
                          "tp=8,pp=1,dp=8,gb=64,fp8=hybrid,fp8-recipe=delayed",
                          "tp=1,pp=1,dp=64,gb=64,fp8=hybrid,fp8-recipe=current" };
  int node[8];
  double r;
  g_autoptr (GError) error = NULL;

  for (int i = 0; i < 8; i++)
    node[i] = i;
  r = all_reduce_s (net, node, 8, 4);
  for (guint k = 0; k < G_N_ELEMENTS (plans); k++) {
    g_autoptr (SimPlan) p = test_resolve_plan (t, m, plans[k]);
    g_autoptr (SimMemory) mem = sim_memory_compute (t, m, p);
    g_autoptr (SimIteration) it = sim_iteration_run (t, m, p, mem, FALSE, &error);
    double want = k == 0 ? 8 * 128 * r : 0;
    g_assert_no_error (error);
    g_assert_cmpuint (p->micro_batches, ==, k == 2 ? 1 : 8);
    g_test_message ("%s: exposed TP %.9f s (want %.9f s)", plans[k], it->exposed_tp_s, want);
    g_assert_cmpfloat_with_epsilon (it->exposed_tp_s, want, 1024 * 1e-12);
  }
}

/* --grad-reduce-in-fp32 (Megatron-LM's own bf16 default) puts 4 bytes per
 * gradient on the wire instead of 2.  Llama-3-8B on two DGX nodes, tp 8,
 * dp 2, ZeRO 0, the reduction after the whole backward: each GPU
 * all-reduces its 1.0e9 gradients over its 2-node rail in about 25 buckets
 * of 40 M (Megatron-Core's bucket).  An all-reduce of B bytes in n buckets
 * takes about n a + B / b: at bf16 B = 2.0 GB, and a 2-rank ring moves
 * B (n-1)/n x 2 = B over each 400 Gb/s NIC: B / b ~ 40 ms at 50 GB/s,
 * against n a ~ 1 ms of latency, so doubling B multiplies the
 * exposed reduction by (n a + 2B/b) / (n a + B/b), between 1.95 and 2. */
static void
test_grad_reduce_fp32 (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 2);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  const char *base = "tp=8,pp=1,dp=2,gb=16,zero=0,overlap=false,gpu-variation=0";
  g_autofree char *wide = g_strdup_printf ("%s,grad-reduce-in-fp32", base);
  g_autoptr (SimPlan) pn = test_resolve_plan (t, m, base);
  g_autoptr (SimPlan) pw = test_resolve_plan (t, m, wide);
  g_autoptr (SimMemory) mn = sim_memory_compute (t, m, pn);
  g_autoptr (SimMemory) mw = sim_memory_compute (t, m, pw);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimIteration) n = sim_iteration_run (t, m, pn, mn, FALSE, &error);
  g_autoptr (SimIteration) w = sim_iteration_run (t, m, pw, mw, FALSE, &error);
  g_assert_no_error (error);
  g_test_message ("exposed DP: bf16 %.6f s, fp32 %.6f s (x%.4f); step %.6f s -> %.6f s", n->exposed_dp_s,
                  w->exposed_dp_s, w->exposed_dp_s / n->exposed_dp_s, n->step_s, w->step_s);
  g_assert_cmpfloat (n->exposed_dp_s, >, 0.035);
  g_assert_cmpfloat (w->exposed_dp_s / n->exposed_dp_s, >=, 1.95);
  g_assert_cmpfloat (w->exposed_dp_s / n->exposed_dp_s, <=, 2.0);
  g_assert_cmpfloat (w->step_s - n->step_s, >=, w->exposed_dp_s - n->exposed_dp_s);
}

/* Full recomputation of some layers (--recompute-method), Llama 3 8B on
 * one node, tp 4 x pp 2: 16 layers a stage, 1F1B, so stage 0 holds two
 * micro-batches at its peak, while a backward recomputes one layer.
 * - block 4 and every 4 recompute 4 of the 16 layers: a quarter of full
 *   recomputation's time on each stage, and the same as each other;
 * - a recomputed layer keeps its input, 2 s b h / tp bytes with sequence
 *   parallelism: 2 x 8192 x 1 x 4096 / 4 = 16,777,216 B; a layer left
 *   alone keeps what it keeps without recomputation; so stage 0's peak
 *   under block 4 exceeds full recomputation's by 2 micro-batches x 12
 *   layers x (kept - 16,777,216) (the recomputed layer's working set is
 *   the same one layer in both);
 * - the hardware FLOPs above the model's are a quarter of full
 *   recomputation's (a dense model: every layer's forward the same). */
static void
test_partial_recompute (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  const char *base = "tp=4,pp=2,dp=1,gb=8,gpu-variation=0";
  g_autofree char *full = g_strdup_printf ("%s,recompute=full", base);
  g_autofree char *block = g_strdup_printf ("%s,recompute-method=block,recompute-num-layers=4", base);
  g_autofree char *every = g_strdup_printf ("%s,recompute-method=every,recompute-num-layers=4", base);
  g_autofree char *none = g_strdup_printf ("%s,recompute=none", base);
  g_autoptr (SimPlan) pf = test_resolve_plan (t, m, full);
  g_autoptr (SimPlan) pb = test_resolve_plan (t, m, block);
  g_autoptr (SimPlan) pn = test_resolve_plan (t, m, none);
  g_autoptr (SimMemory) mf = sim_memory_compute (t, m, pf);
  g_autoptr (SimMemory) mb = sim_memory_compute (t, m, pb);
  g_autoptr (SimIteration) f = run_plan (t, m, full);
  g_autoptr (SimIteration) b = run_plan (t, m, block);
  g_autoptr (SimIteration) e = run_plan (t, m, every);
  SimActivationConfig cfg;
  g_autoptr (SimActivations) ckpt = NULL;
  g_autoptr (SimActivations) kept = NULL;
  guint64 gap;

  g_assert_cmpint (pb->recompute, ==, SIM_RECOMPUTE_FULL);
  for (int s = 0; s < 2; s++) {
    double rf = g_array_index (f->stages, SimStageTime, s).recompute_s;
    double rb = g_array_index (b->stages, SimStageTime, s).recompute_s;
    double re = g_array_index (e->stages, SimStageTime, s).recompute_s;
    g_test_message ("stage %d recompute: full %.6f s, block 4 %.6f s, every 4 %.6f s", s, rf, rb, re);
    g_assert_cmpfloat (fabs (rb / rf - 0.25), <, 0.01);
    g_assert_cmpfloat (fabs (re / rb - 1.0), <, 1e-6);
  }
  sim_activation_config_from_plan (&cfg, pf);
  ckpt = sim_activations_layer (m, &cfg);
  sim_activation_config_from_plan (&cfg, pn);
  kept = sim_activations_layer (m, &cfg);
  g_assert_cmpuint (ckpt->saved_bytes, ==, 16777216);
  gap = g_array_index (mb->stages, SimStageMemory, 0).activations_peak_bytes -
        g_array_index (mf->stages, SimStageMemory, 0).activations_peak_bytes;
  g_test_message ("stage 0 peak: block 4 above full by %" G_GUINT64_FORMAT " B; kept %" G_GUINT64_FORMAT
                  " B a layer", gap, kept->saved_bytes);
  g_assert_cmpuint (gap, ==, 2 * 12 * (kept->saved_bytes - 16777216));
  g_assert_cmpfloat (fabs ((b->hardware_flop - b->model_flop) / (f->hardware_flop - f->model_flop) - 0.25),
                     <, 1e-9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/iteration/1f1b", test_1f1b);
  g_test_add_func ("/iteration/gpipe", test_gpipe);
  g_test_add_func ("/iteration/interleaved", test_interleaved);
  g_test_add_func ("/iteration/zb-h1", test_zb_h1);
  g_test_add_func ("/iteration/zb-h1-program", test_zb_h1_program);
  g_test_add_func ("/iteration/v-programs", test_v_programs);
  g_test_add_func ("/iteration/v-schedules", test_v_schedules);
  g_test_add_func ("/iteration/dualpipe-program", test_dualpipe_program);
  g_test_add_func ("/iteration/dualpipe", test_dualpipe);
  g_test_add_func ("/iteration/expected-max", test_expected_max);
  g_test_add_func ("/iteration/variability", test_variability);
  g_test_add_func ("/iteration/slow-stage", test_slow_stage);
  g_test_add_func ("/iteration/timeline-matches-ledger", test_timeline_matches_ledger);
  g_test_add_func ("/iteration/symmetric", test_symmetric);
  g_test_add_func ("/iteration/dp-mirror", test_dp_mirror);
  g_test_add_func ("/iteration/flops", test_flops);
  g_test_add_func ("/iteration/bound", test_bound);
  g_test_add_func ("/iteration/empty-edge-chunks", test_empty_edge_chunks);
  g_test_add_func ("/iteration/fp8-amax", test_fp8_amax);
  g_test_add_func ("/iteration/fp8-tp-amax", test_fp8_tp_amax);
  g_test_add_func ("/iteration/async-tp", test_async_tp);
  g_test_add_func ("/iteration/grad-reduce-fp32", test_grad_reduce_fp32);
  g_test_add_func ("/iteration/partial-recompute", test_partial_recompute);
  return g_test_run ();
}
