/* tests for viz: structural checks on rendered charts (no text compared,
 * so no dependence on the system's fonts) */
#include <glib.h>
#include <math.h>

#include "sim-schedule.h"
#include "test-ideal.h"
#include "viz-compare.h"
#include "viz-private.h"
#include "viz.h"

static void
pixel (cairo_surface_t *s, double x, double y, double rgb[3])
{
  int stride = cairo_image_surface_get_stride (s);
  guint32 v = *(guint32 *) (gpointer) (cairo_image_surface_get_data (s) + (int) y * stride + (int) x * 4);
  rgb[0] = ((v >> 16) & 0xff) / 255.0;
  rgb[1] = ((v >> 8) & 0xff) / 255.0;
  rgb[2] = (v & 0xff) / 255.0;
}

static gboolean
is_color (const double rgb[3], VizColor c)
{
  return fabs (rgb[0] - c.r) < 0.02 && fabs (rgb[1] - c.g) < 0.02 && fabs (rgb[2] - c.b) < 0.02;
}

static cairo_surface_t *
render_gantt (const Run *r, VizGanttLayout *l)
{
  SimRun run = { .topo = r->t, .model = r->m, .plan = r->p, .memory = r->mem, .time = r->it };
  VizInput in = { &run, NULL, 0 };
  double w = 1200, h = viz_gantt_height_for (&in, r->p->pp, w);
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  cairo_t *cr = cairo_create (s);
  viz_gantt_draw (cr, w, h, &in);
  cairo_destroy (cr);
  cairo_surface_flush (s);
  viz_gantt_layout (w, h, &in, r->p->pp, l);
  return s;
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
x_of (const VizGanttLayout *l, double t)
{
  return l->left + (l->right - l->left) * t / l->t_end_s;
}

/* the pipeline fill and drain are idle: the last stage waits for the
 * forwards of the 3 stages before it (3 x 4 ms) at the start, and at the
 * end for their backwards (3 x 8 ms) to drain back to stage 0
 * (p = 4, 4 layers per stage, 1 ms forward and 2 ms backward each) */
static void
test_gantt_bubble_idle (void)
{
  g_auto (Run) r = { 0 };
  VizGanttLayout l;
  cairo_surface_t *s;
  double rgb[3];
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=8,schedule=1f1b");
  s = render_gantt (&r, &l);
  /* last stage row, compute lane centre, at 6 ms (inside the 12 ms fill) */
  pixel (s, x_of (&l, 6e-3), l.top + 3 * l.row_h + 4 + l.lane_compute_h / 2, rgb);
  g_assert_true (is_color (rgb, viz_idle_color ()));
  /* and at 6 ms before the end */
  pixel (s, x_of (&l, l.t_end_s - 6e-3), l.top + 3 * l.row_h + 4 + l.lane_compute_h / 2, rgb);
  g_assert_true (is_color (rgb, viz_idle_color ()));
  cairo_surface_destroy (s);
}

/* blocks appear in schedule order: at the middle of each of stage 0's
 * compute spans, in time order, the colour is forward or backward as the
 * 1F1B program order says */
static void
test_gantt_order (void)
{
  g_auto (Run) r = { 0 };
  VizGanttLayout l;
  cairo_surface_t *s;
  g_autoptr (GArray) order = NULL;
  g_autoptr (GArray) mids = g_array_new (FALSE, FALSE, sizeof (double));
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=8,schedule=1f1b");
  s = render_gantt (&r, &l);
  order = sim_schedule_stage (SIM_SCHEDULE_1F1B, 4, 0, 8, 1);
  for (guint i = 0; i < r.it->spans->len; i++) {
    const SimSpan *sp = &g_array_index (r.it->spans, SimSpan, i);
    double mid;
    if (sp->stage != 0 || (sp->kind != SIM_SPAN_FORWARD && sp->kind != SIM_SPAN_BACKWARD))
      continue;
    mid = sim_time_to_s (sp->start + sp->end) / 2;
    g_array_append_val (mids, mid);
  }
  g_array_sort (mids, cmp_double);
  g_assert_cmpuint (mids->len, ==, order->len);
  for (guint i = 0; i < order->len; i++) {
    double rgb[3];
    const SimPipeOp *op = &g_array_index (order, SimPipeOp, i);
    pixel (s, x_of (&l, g_array_index (mids, double, i)), l.top + 4 + l.lane_compute_h / 2 + 8, rgb);
    g_assert_true (is_color (rgb, viz_kind_color (op->kind == SIM_PASS_BACKWARD ? SIM_SPAN_BACKWARD : SIM_SPAN_FORWARD)));
  }
  cairo_surface_destroy (s);
}

/* the peak marker (a filled dark disc) sits on the top of the tallest
 * activation column of the peak panel */
static void
test_memory_peak_marker (void)
{
  g_auto (Run) r = { 0 };
  VizInput in = { NULL };
  SimRun run = { 0 };
  double w = 1000, h;
  cairo_surface_t *s;
  cairo_t *cr;
  int best_y = -1, marker_x = -1, marker_y = -1;
  VizColor act = viz_memory_color (VIZ_MEM_ACTIVATIONS);
  int panel_top = 0, panel_bottom = 0;
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=8,schedule=1f1b");
  run = (SimRun) { .topo = r.t, .model = r.m, .plan = r.p, .memory = r.mem, .time = r.it };
  in = (VizInput) { &run, (int[]) { 0 }, 1 };
  h = viz_memory_height (1);
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  cr = cairo_create (s);
  viz_memory_draw (cr, w, h, &in);
  cairo_destroy (cr);
  cairo_surface_flush (s);
  panel_top = 116, panel_bottom = 116 + 190;
  /* the highest row holding the activation colour */
  for (int y = panel_top; y < panel_bottom && best_y < 0; y++)
    for (int x = 90; x < (int) w - 220 && best_y < 0; x++) {
      double rgb[3];
      pixel (s, x, y, rgb);
      if (is_color (rgb, act))
        best_y = y;
    }
  /* a 5 x 5 dark square: the marker disc, not text */
  for (int y = panel_top; y < panel_bottom && marker_x < 0; y++)
    for (int x = 90; x < (int) w - 220 && marker_x < 0; x++) {
      gboolean dark = TRUE;
      for (int dy = -2; dy <= 2 && dark; dy++)
        for (int dx = -2; dx <= 2 && dark; dx++) {
          double rgb[3];
          pixel (s, x + dx, y + dy, rgb);
          dark = rgb[0] < 0.2 && rgb[1] < 0.2 && rgb[2] < 0.2;
        }
      if (dark)
        marker_x = x, marker_y = y;
    }
  g_assert_cmpint (best_y, >, 0);
  g_assert_cmpint (marker_x, >, 0);
  /* the disc (radius 4) is centred on the top edge of the tallest column */
  g_assert_cmpint (abs (marker_y + 2 - best_y), <=, 3);
  cairo_surface_destroy (s);
}

/* compare: a layout that does not fit, given first, is drawn after the one
 * that fits, as a grey bar with no compute colour in it; the one that fits
 * keeps its compute segment */
static void
test_compare_oom (void)
{
  g_auto (Run) r = { 0 };
  SimMemory oom_mem;
  SimRun fit = { 0 }, oom = { 0 };
  const SimRun *runs[2];
  double w = 1200, h = viz_compare_height (2), rgb[3];
  cairo_surface_t *s;
  cairo_t *cr;
  int compute = 0, grey = 0;
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=8,schedule=1f1b");
  oom_mem = *r.mem;
  oom_mem.fits = FALSE;
  fit = (SimRun) { .topo = r.t, .model = r.m, .plan = r.p, .memory = r.mem, .time = r.it, .label = (char *) "fits" };
  oom = fit;
  oom.memory = &oom_mem;
  oom.label = (char *) "oom";
  runs[0] = &oom;
  runs[1] = &fit;
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  cr = cairo_create (s);
  viz_compare_draw (cr, w, h, runs, 2, "t");
  cairo_destroy (cr);
  cairo_surface_flush (s);
  /* rows: TOP 104, 40 px each, bars 6 px below the row top, 26 px high,
   * from x 300; probe a quarter of the way along the longest bar */
  pixel (s, 320, 104 + 6 + 13, rgb);
  g_assert_true (is_color (rgb, viz_kind_color (SIM_SPAN_FORWARD)));
  for (int x = 300; x < 500; x++) {
    pixel (s, x, 104 + 40 + 6 + 13, rgb);
    compute += is_color (rgb, viz_kind_color (SIM_SPAN_FORWARD));
    grey += is_color (rgb, (VizColor) { 0.80, 0.80, 0.80 });
  }
  g_assert_cmpint (compute, ==, 0);
  g_assert_cmpint (grey, >, 50);
  cairo_surface_destroy (s);
}

/* a chart that leaves stages out says which it shows, and says nothing
 * when it shows them all (the text the Gantt and memory charts print) */
static void
test_stages_shown (void)
{
  g_auto (Run) r = { 0 };
  SimRun run = { 0 };
  VizInput in = { &run, (int[]) { 0, 3, 7 }, 3 };
  g_autoptr (GArray) some = NULL;
  g_autoptr (GArray) all = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  run_ideal (&r, "tp=1,pp=8,dp=1,gb=8,schedule=1f1b");
  run = (SimRun) { .topo = r.t, .model = r.m, .plan = r.p, .memory = r.mem, .time = r.it };
  some = viz_default_stages (&in, 32);
  a = viz_stages_shown (&in, some);
  g_assert_cmpstr (a, ==, "stages shown: 0, 3, 7 of 8");
  in.stages = NULL;
  all = viz_default_stages (&in, 32);
  b = viz_stages_shown (&in, all);
  g_assert_null (b);
}

/* each communication sub-lane carries its name at the left: ink left of
 * the plot beside the TP, PP and DP lanes of a stage without the peak-memory
 * note (the last stage), one band each */
static void
test_gantt_lane_labels (void)
{
  g_auto (Run) r = { 0 };
  VizGanttLayout l;
  cairo_surface_t *s;
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=8,schedule=1f1b");
  g_assert_cmpint (r.mem->peak_stage, !=, 3);
  s = render_gantt (&r, &l);
  for (int k = 0; k < 3; k++) {
    double yl = l.top + 3 * l.row_h + 4 + l.lane_compute_h + 3 + k * (l.lane_h + 1);
    int ink = 0;
    for (int y = (int) yl; y < (int) (yl + l.lane_h); y++)
      for (int x = (int) l.left - 24; x < (int) l.left - 2; x++) {
        double rgb[3];
        pixel (s, x, y, rgb);
        ink += rgb[0] < 0.7;
      }
    g_assert_cmpint (ink, >, 3);
  }
  cairo_surface_destroy (s);
}

/* the Gantt chart, 1200 px wide, of plan (Llama 3 8B on one DGX H100 node,
 * t and m) as sim_run_evaluate gives it; *run is the caller's */
static cairo_surface_t *
render_plan (const SimTopology *t, const SimModel *m, const char *plan, SimRun **run, VizGanttLayout *l)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimPlanRequest) p_req = sim_plan_request_new ();
  const SimPlan *p;
  VizInput in = { NULL };
  cairo_surface_t *s;
  cairo_t *cr;
  double w = 1200, h;
  g_assert_true (sim_plan_request_parse_string (p_req, plan, &error));
  g_assert_no_error (error);
  *run = sim_run_evaluate (t, m, p_req, plan, SIM_RUN_TIME, &error);
  g_assert_no_error (error);
  p = (*run)->plan;
  in = (VizInput) { *run, NULL, 0 };
  h = viz_gantt_height_for (&in, p->pp, w);
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  cr = cairo_create (s);
  viz_gantt_draw (cr, w, h, &in);
  cairo_destroy (cr);
  cairo_surface_flush (s);
  viz_gantt_layout (w, h, &in, p->pp, l);
  return s;
}

/* ZeRO-3 (llama3-8b, dp 8 on one node): where a stage's compute starts the
 * moment a DP all-gather ends, the exposed wait before it is drawn in the
 * DP colour in the compute lane, not as idle */
static void
test_gantt_zero3_wait (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimRun) run = NULL;
  VizGanttLayout l;
  cairo_surface_t *s = render_plan (t, m, "tp=1,pp=1,dp=8,zero=3,gb=32", &run, &l);
  int probed = 0;
  /* the first compute span: before it, the stage waits for the first
   * layers' parameters (nothing else to wait for with one stage) */
  for (guint i = 0; i < run->time->spans->len && probed == 0; i++) {
    const SimSpan *sp = &g_array_index (run->time->spans, SimSpan, i);
    double x0 = 0, x1 = 0;
    if (sp->kind != SIM_SPAN_FORWARD || sp->replica != 0)
      continue;
    x1 = x_of (&l, sim_time_to_s (sp->start));
    x0 = l.left;
    /* at least 3 px of wait to look at */
    g_assert_cmpfloat (x1 - x0, >, 3);
    for (int x = (int) x0 + 1; x < (int) x1 - 1; x++) {
      double rgb[3];
      pixel (s, x, l.top + 4 + l.lane_compute_h / 2, rgb);
      g_assert_true (is_color (rgb, viz_kind_color (SIM_SPAN_DP)));
      probed++;
    }
  }
  g_assert_cmpint (probed, >, 0);
  cairo_surface_destroy (s);
}

/* the whole-step window draws as much of a lane exposed as the stage
 * spends exposed: Llama 3 8B at tp 2 x pp 4 with 256 micro-batches sends
 * 2 x 256 activations and gradients from stage 0, each a fraction of a
 * millisecond, most behind compute.  Stage 0's PP lane may show the full
 * (exposed) colour on no more pixels than its exposed PP time covers, plus
 * 4 px of rounding, where each send widened to 2 px painted it solid */
static void
test_gantt_dense_lane (void)
{
  g_autoptr (SimTopology) t = test_load_topology ("dgx8x4.xml", 1);
  g_autoptr (SimModel) m = test_load_model ("llama3-8b.xml");
  g_autoptr (SimRun) run = NULL;
  VizGanttLayout l;
  cairo_surface_t *s = render_plan (t, m, "tp=2,pp=4,dp=1,gb=256", &run, &l);
  double y, allowed;
  const SimStageTime *st0;
  int full = 0;
  st0 = &g_array_index (run->time->stages, SimStageTime, 0);
  /* the PP lane (lane 1) under stage 0's compute lane, at its middle */
  y = l.top + 4 + l.lane_compute_h + 3 + (l.lane_h + 1) + l.lane_h / 2;
  for (int x = (int) l.left; x < (int) l.right; x++) {
    double rgb[3];
    pixel (s, x, y, rgb);
    full += is_color (rgb, viz_kind_color (SIM_SPAN_PP));
  }
  allowed = (l.right - l.left) * st0->exposed_pp_s / run->time->step_s + 4;
  g_test_message ("stage 0: %d px of %.0f exposed PP, %.1f allowed (%.3f s of %.3f s)", full,
                  l.right - l.left, allowed, st0->exposed_pp_s, run->time->step_s);
  g_assert_cmpfloat (full, <=, allowed);
  cairo_surface_destroy (s);
}

/* the memory chart zooms into the warm-up like the Gantt: with 128
 * micro-batches a 1000 px chart is too dense, so under the whole step
 * (panel 116..306) comes a warm-up window (left, x 84..417, y 414..544)
 * where stage 0's activations climb as the pipeline fills: lower at the
 * window's left edge than at its right */
static void
test_memory_zoom (void)
{
  g_auto (Run) r = { 0 };
  SimRun run = { 0 };
  VizInput in = { NULL };
  double w = 1000, h;
  cairo_surface_t *s;
  cairo_t *cr;
  VizColor act = viz_memory_color (VIZ_MEM_ACTIVATIONS);
  int top_left = -1, top_right = -1;
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=128,schedule=1f1b");
  run = (SimRun) { .topo = r.t, .model = r.m, .plan = r.p, .memory = r.mem, .time = r.it };
  in = (VizInput) { &run, (int[]) { 0 }, 1 };
  h = viz_memory_height_for (&in, 1, w);
  g_assert_cmpfloat (h, >, viz_memory_height (1));
  s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  cr = cairo_create (s);
  viz_memory_draw (cr, w, h, &in);
  cairo_destroy (cr);
  cairo_surface_flush (s);
  for (int y = 414; y < 544; y++) {
    double a[3], b[3];
    pixel (s, 87, y, a);
    pixel (s, 413, y, b);
    if (top_left < 0 && is_color (a, act))
      top_left = y;
    if (top_right < 0 && is_color (b, act))
      top_right = y;
  }
  g_assert_cmpint (top_right, >, 0);
  g_assert_cmpint (top_left, >, top_right + 5);
  cairo_surface_destroy (s);
}

/* the rows of the memory chart's right margin (where the capacity lines'
 * labels go, past the panels' right edge) that hold any ink, counted as
 * runs of consecutive rows */
static int
right_margin_runs (const Run *r, const int *stages, int n)
{
  SimRun run = { .topo = r->t, .model = r->m, .plan = r->p, .memory = r->mem, .time = r->it };
  VizInput in = { &run, (int *) stages, n };
  double w = 1000, h = viz_memory_height_for (&in, n, w);
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  cairo_t *cr = cairo_create (s);
  int runs = 0;
  gboolean inked = FALSE;
  viz_memory_draw (cr, w, h, &in);
  cairo_destroy (cr);
  cairo_surface_flush (s);
  for (int y = 0; y < (int) h; y++) {
    gboolean any = FALSE;
    for (int x = (int) (w - 210 + 4); x < (int) w && !any; x++) {
      double c[3];
      pixel (s, x, y, c);
      any = c[0] + c[1] + c[2] < 2.9;
    }
    runs += any && !inked;
    inked = any;
  }
  cairo_surface_destroy (s);
  return runs;
}

/* The capacity lines are the same GPU's on every stage: their labels
 * ("driver-visible ...", "usable ...") are written once, on the first
 * panel of the whole step and on the first of the zoomed windows, so a
 * chart of two stages has as much text in its right margin as a chart of
 * one (it had twice as much when every panel repeated them). */
static void
test_memory_labels_once (void)
{
  g_auto (Run) r = { 0 };
  run_ideal (&r, "tp=2,pp=4,dp=1,gb=128,schedule=1f1b");
  g_assert_cmpint (right_margin_runs (&r, (int[]) { 0 }, 1), >, 0);
  g_assert_cmpint (right_margin_runs (&r, (int[]) { 0, 3 }, 2), ==,
                   right_margin_runs (&r, (int[]) { 0 }, 1));
}

/* the Pareto front of a sweep, by hand.  In memory order, the rows that
 * fit and have a time are
 *   3 (30 GB, 12 s): the smallest, on the front;
 *   1 (40 GB, 13 s): 3 is smaller and faster, dominated;
 *   2 (50 GB,  9 s): faster than every smaller one, on the front;
 *   6 (50 GB, 11 s): as big as 2 and slower, dominated;
 *   4 (60 GB, 10 s): 2 is smaller and faster, dominated;
 *   0 (70 GB,  6 s): faster than every smaller one, on the front;
 *   7 (80 GB,  6 s): no faster than 0 and bigger, dominated.
 * Row 5 (20 GB, 2 s) does not fit and row 8 (25 GB) has no time: neither
 * is a point of the chart, so neither can dominate.  The front, smallest
 * memory first: 3, 2, 0. */
static void
test_sweep_pareto (void)
{
  static const struct {
    double peak_gb, step_s;
    gboolean fits, has_time;
  } given[] = {
    { 70, 6, TRUE, TRUE },  { 40, 13, TRUE, TRUE }, { 50, 9, TRUE, TRUE },
    { 30, 12, TRUE, TRUE }, { 60, 10, TRUE, TRUE }, { 20, 2, FALSE, TRUE },
    { 50, 11, TRUE, TRUE }, { 80, 6, TRUE, TRUE },  { 25, 0, TRUE, FALSE },
  };
  static const int want[] = { 3, 2, 0 };
  SimRunSummary rows[G_N_ELEMENTS (given)] = { 0 };
  const SimRunSummary *ptrs[G_N_ELEMENTS (given)];
  VizSweepInput in = { ptrs, G_N_ELEMENTS (given), NULL, FALSE, NULL };
  g_autoptr (GArray) front = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (given); i++) {
    rows[i].peak_bytes = (guint64) (given[i].peak_gb * 1e9);
    rows[i].usable_bytes = 75000000000ULL;
    rows[i].step_s = given[i].step_s;
    rows[i].fits = given[i].fits;
    rows[i].has_time = given[i].has_time;
    rows[i].simulated = TRUE;
    ptrs[i] = &rows[i];
  }
  front = viz_sweep_pareto (&in);
  g_assert_cmpuint (front->len, ==, G_N_ELEMENTS (want));
  for (guint k = 0; k < G_N_ELEMENTS (want); k++)
    g_assert_cmpint (g_array_index (front, int, k), ==, want[k]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/viz/gantt-bubble-idle", test_gantt_bubble_idle);
  g_test_add_func ("/viz/gantt-order", test_gantt_order);
  g_test_add_func ("/viz/memory-peak-marker", test_memory_peak_marker);
  g_test_add_func ("/viz/compare-oom", test_compare_oom);
  g_test_add_func ("/viz/stages-shown", test_stages_shown);
  g_test_add_func ("/viz/gantt-lane-labels", test_gantt_lane_labels);
  g_test_add_func ("/viz/gantt-zero3-wait", test_gantt_zero3_wait);
  g_test_add_func ("/viz/gantt-dense-lane", test_gantt_dense_lane);
  g_test_add_func ("/viz/memory-zoom", test_memory_zoom);
  g_test_add_func ("/viz/memory-labels-once", test_memory_labels_once);
  g_test_add_func ("/viz/sweep-pareto", test_sweep_pareto);
  return g_test_run ();
}
