/* viz-gantt.c — the Gantt chart of one iteration */
#include <math.h>
#include <stdio.h>

#include "sim-format.h"
#include "viz-private.h"

#include "sim-schedule.h"

#define LEFT 132.0
#define RIGHT 28.0
#define TOP 104.0
#define BOTTOM 52.0
#define ROW_H 64.0
#define COMPUTE_H 30.0
#define LANE_H 8.0


void
viz_gantt_layout (double width, double height, const VizInput *in, int rows, VizGanttLayout *o)
{
  o->left = LEFT;
  o->right = width - RIGHT;
  /* the whole-step window sits under its caption when zoomed windows follow */
  o->top = TOP + (in->run->time != NULL && viz_zoom_wanted (in, width - LEFT - RIGHT) ? 18 : 0);
  o->row_h = ROW_H;
  o->lane_compute_h = COMPUTE_H;
  o->lane_h = LANE_H;
  o->t_end_s = in->run->time != NULL ? in->run->time->step_s : 1.0;
}

/* comm lanes: 0 TP, CP and the experts' all-to-alls (one layer's
 * collectives, never at the same time), 1 PP, 2 DP */
static int
lane_of (SimSpanKind k)
{
  switch (k) {
  case SIM_SPAN_TP:
  case SIM_SPAN_CP:
  case SIM_SPAN_EP: return 0;
  case SIM_SPAN_PP: return 1;
  case SIM_SPAN_DP: return 2;
  default: return -1;
  }
}

static int
interval_cmp (gconstpointer pa, gconstpointer pb)
{
  const SimTime *a = pa, *b = pb;
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/* the merged intervals in which a stage computes, sorted: communication
 * inside them is hidden behind compute, outside them exposed */
static GArray *
compute_intervals (const SimIteration *it, int stage)
{
  GArray *iv = g_array_new (FALSE, FALSE, sizeof (SimTime) * 2);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (SimTime) * 2);
  for (guint i = 0; i < it->spans->len; i++) {
    const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
    SimTime v[2] = { sp->start, sp->end };
    if (sp->stage == stage && sp->replica == 0 && lane_of (sp->kind) < 0 &&
        sp->kind != SIM_SPAN_GATE && sp->end > sp->start)
      g_array_append_vals (iv, v, 1);
  }
  g_array_sort (iv, interval_cmp);
  for (guint i = 0; i < iv->len; i++) {
    SimTime *v = &g_array_index (iv, SimTime, 2 * i);
    SimTime *last = out->len > 0 ? &g_array_index (out, SimTime, 2 * (out->len - 1)) : NULL;
    if (last != NULL && v[0] <= last[1])
      last[1] = MAX (last[1], v[1]);
    else
      g_array_append_vals (out, v, 1);
  }
  g_array_unref (iv);
  return out;
}

/* does compute start when a transfer ending at t ends, so that it was what
 * the stage waited for?  (not when the stage went on waiting for a
 * pipeline receive after it: that wait is the bubble) */
static gboolean
gates_compute (const GArray *iv, SimTime t)
{
  /* within 20 us: a kernel launch after the gather's completion */
  const SimTime slack = sim_time_from_s (20e-6);
  for (guint i = 0; i < iv->len; i++) {
    SimTime s0 = g_array_index (iv, SimTime, 2 * i);
    if (s0 >= t)
      return s0 - t <= slack;
  }
  return FALSE;
}

/* draw [a, b) of a communication lane: pale where the stage computes
 * (hidden), in full colour where it does not (exposed) */
static void
comm_segments (cairo_t *cr, const GArray *iv, SimTime a, SimTime b, VizColor c, double x0,
               double x1, SimTime t0, double span_s, double y, double h, double minw,
               gboolean pale)
{
  guint lo = 0, hi = iv->len;
  SimTime cur = a;
#define XOF(t) (x0 + (x1 - x0) * sim_time_to_s ((t) - t0) / span_s)
  /* the first interval that ends after a */
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (g_array_index (iv, SimTime, 2 * mid + 1) <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (pale) {
    cairo_set_source_rgb (cr, c.r + (1 - c.r) * 0.65, c.g + (1 - c.g) * 0.65, c.b + (1 - c.b) * 0.65);
    cairo_rectangle (cr, XOF (a), y, MAX (XOF (b) - XOF (a), minw), h);
    cairo_fill (cr);
  }
  viz_set_color (cr, c);
  for (guint i = lo; i < iv->len && cur < b; i++) {
    SimTime s0 = g_array_index (iv, SimTime, 2 * i), s1 = g_array_index (iv, SimTime, 2 * i + 1);
    if (s0 > cur) {
      SimTime e = MIN (s0, b);
      cairo_rectangle (cr, XOF (cur), y, MAX (XOF (e) - XOF (cur), minw), h);
      cairo_fill (cr);
    }
    cur = MAX (cur, s1);
  }
  if (cur < b) {
    cairo_rectangle (cr, XOF (cur), y, MAX (XOF (b) - XOF (cur), minw), h);
    cairo_fill (cr);
  }
#undef XOF
}

static void
legend (cairo_t *cr, const VizInput *in, double x, double y, double right)
{
  SimSpanKind kinds[] = { SIM_SPAN_FORWARD, SIM_SPAN_BACKWARD, SIM_SPAN_WEIGHT, SIM_SPAN_RECOMPUTE,
                          SIM_SPAN_OPTIMIZER, SIM_SPAN_TP, SIM_SPAN_CP, SIM_SPAN_EP, SIM_SPAN_PP,
                          SIM_SPAN_DP, SIM_SPAN_GATE };
  const char *names[] = { "forward", "backward", "weight gradient", "recompute", "optimizer", "TP comm",
                          "CP comm", "EP all-to-all", "PP send/recv", "DP / ZeRO comm", "idle (bubble)" };
  const SimPlan *p = in->run->plan;
  viz_font (cr, 12, FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++) {
    if (kinds[i] == SIM_SPAN_WEIGHT && !sim_schedule_splits_backward (p->schedule))
      continue;
    if (kinds[i] == SIM_SPAN_GATE &&
        (p->schedule == SIM_SCHEDULE_DUALPIPE_V || p->schedule == SIM_SCHEDULE_DUALPIPE)) {
      /* the outline of an F&B pair, before the idle swatch */
      cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      cairo_set_line_width (cr, 1.2);
      cairo_rectangle (cr, x + 0.6, y - 9.4, 12.8, 10.8);
      cairo_stroke (cr);
      cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
      viz_text (cr, x + 19, y, 0, "F&B overlapped");
      x += 19 + viz_text_width (cr, "F&B overlapped") + 18;
    }
    if (kinds[i] == SIM_SPAN_RECOMPUTE && in->run->plan->recompute == SIM_RECOMPUTE_NONE)
      continue;
    if (kinds[i] == SIM_SPAN_CP && in->run->plan->cp < 2)
      continue;
    if (kinds[i] == SIM_SPAN_EP && p->ep < 2 && p->etp < 2)
      continue;
    if (kinds[i] == SIM_SPAN_TP && in->run->plan->tp < 2)
      continue;
    if (kinds[i] == SIM_SPAN_PP && in->run->plan->pp < 2)
      continue;
    viz_set_color (cr, viz_kind_color (kinds[i]));
    cairo_rectangle (cr, x, y - 10, 14, 12);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.6, 0.6, 0.6);
    cairo_set_line_width (cr, 0.5);
    cairo_rectangle (cr, x + 0.25, y - 9.75, 13.5, 11.5);
    cairo_stroke (cr);
    cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
    viz_text (cr, x + 19, y, 0, names[i]);
    x += 19 + viz_text_width (cr, names[i]) + 18;
  }
  /* the note on how communication is drawn, shorter where the swatches
   * leave less room on the line, never past its right edge */
  {
    const char *notes[] = { "(communication: pale = hidden behind compute, full = exposed, and in the "
                            "compute lane where the stage waits for it)",
                            "(communication: pale = hidden, full = exposed)" };
    cairo_set_source_rgb (cr, 0.35, 0.35, 0.35);
    for (guint i = 0; i < G_N_ELEMENTS (notes); i++)
      if (x + viz_text_width (cr, notes[i]) <= right) {
        viz_text (cr, x, y, 0, notes[i]);
        break;
      }
  }
}

/* the name of each communication sub-lane, right-aligned at x beside it */
static void
lane_labels (cairo_t *cr, const SimPlan *p, double x, double yl)
{
  gboolean ep = p->ep > 1 || p->etp > 1;
  const char *names[3] = { p->cp > 1 ? (ep ? "TP/CP/EP" : "TP/CP") : ep ? "TP/EP" : "TP", "PP", "DP" };
  viz_font (cr, 8, FALSE);
  cairo_set_source_rgb (cr, 0.35, 0.35, 0.35);
  for (int k = 0; k < 3; k++)
    viz_text (cr, x, yl + k * (LANE_H + 1) + LANE_H - 1, 1, names[k]);
}

static int
rank_of_stage (const SimPlan *p, int stage)
{
  int c[SIM_DIM_COUNT] = { 0 };
  c[SIM_DIM_PP] = stage;
  return sim_plan_rank_of (p, c);
}

/* DualPipeV's F&B pairs on stage s: each run of paired compute spans,
 * which starts with its forward, outlined in near-black, as DeepSeek's
 * figure of the schedule draws "two cells enclosed by a shared black
 * border" (deepseek-ai/DualPipe README.md) */
static void
paired_outlines (cairo_t *cr, const SimIteration *it, int s, double x0, double x1, SimTime t0,
                 SimTime t1, double span_s, double yc, double h)
{
  SimTime a = -1, b = -1;
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  cairo_set_line_width (cr, 1.2);
  for (guint i = 0; i <= it->spans->len; i++) {
    const SimSpan *sp = i < it->spans->len ? &g_array_index (it->spans, SimSpan, i) : NULL;
    gboolean mine = sp != NULL && sp->stage == s && sp->replica == 0 && lane_of (sp->kind) < 0 &&
                    sp->kind != SIM_SPAN_GATE && sp->end > sp->start;
    if (sp != NULL && !mine)
      continue;
    /* a group ends at an unpaired pass, at the next pair's forward, or at the end */
    if (a >= 0 && (sp == NULL || !sp->paired || sp->kind == SIM_SPAN_FORWARD)) {
      if (b >= t0 && a <= t1) {
        double xa = x0 + (x1 - x0) * sim_time_to_s (a - t0) / span_s;
        double xb = x0 + (x1 - x0) * sim_time_to_s (b - t0) / span_s;
        cairo_rectangle (cr, xa + 0.6, yc + 0.6, MAX (xb - xa - 1.2, 0.6), h - 1.2);
        cairo_stroke (cr);
      }
      a = -1;
    }
    if (sp != NULL && sp->paired) {
      if (a < 0)
        a = sp->start;
      b = MAX (b, sp->end);
      if (a == sp->start)
        b = sp->end;
    }
  }
}

/* one time window [t0, t1] of every row, between x0 and x1, from y0 down;
 * returns the y under its axis */
static double
draw_window (cairo_t *cr, const VizInput *in, GArray *rows, double x0, double x1, double y0,
             SimTime t0, SimTime t1, gboolean labels, const char *caption)
{
  const SimIteration *it = in->run->time;
  VizGanttLayout l = { x0, x1, y0, ROW_H, COMPUTE_H, LANE_H, sim_time_to_s (t1 - t0) };
  double span_s = sim_time_to_s (t1 - t0), scale = 1, step = 0, origin = sim_time_to_s (t0);
  const char *unit = "s";
  double yb = y0 + rows->len * l.row_h + 4;

  viz_time_unit (span_s, &scale, &unit);
  step = viz_tick_step (span_s * scale, (int) MAX (3, (x1 - x0) / 130));
  if (caption != NULL) {
    viz_font (cr, 12.5, TRUE);
    cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
    viz_text (cr, x0, y0 - 10, 0, caption);
  }
  cairo_save (cr);
  cairo_rectangle (cr, x0, y0 - 6, x1 - x0, yb - y0 + 6);
  cairo_clip (cr);
  /* grid at whole ticks of absolute time */
  cairo_set_line_width (cr, 1);
  for (double v = ceil (origin * scale / step) * step; v <= (origin + span_s) * scale + 1e-9; v += step) {
    double x = floor (x0 + (x1 - x0) * (v / scale - origin) / span_s) + 0.5;
    cairo_set_source_rgb (cr, 0.88, 0.88, 0.88);
    cairo_move_to (cr, x, y0 - 4);
    cairo_line_to (cr, x, y0 + rows->len * l.row_h);
    cairo_stroke (cr);
  }
  for (guint r = 0; r < rows->len; r++) {
    int s = g_array_index (rows, int, r);
    double yc = y0 + r * l.row_h + 4, yl = yc + l.lane_compute_h + 3;
    g_autoptr (GArray) busy = compute_intervals (it, s);
    /* a lane whose transfers, each widened to be seen, would cover more
     * than a quarter of the window (a thousand pipeline sends across the
     * whole step) is drawn at their true widths: widened, they would paint
     * the lane solid, exposed, where they take a fraction of a percent */
    int in_lane[3] = { 0, 0, 0 };
    gboolean dense[3];
    for (guint i = 0; i < it->spans->len; i++) {
      const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
      if (sp->stage == s && sp->end > sp->start && sp->end >= t0 && sp->start <= t1 && lane_of (sp->kind) >= 0)
        in_lane[lane_of (sp->kind)]++;
    }
    for (int k = 0; k < 3; k++)
      dense[k] = in_lane[k] * 2.0 > 0.25 * (x1 - x0);
    viz_set_color (cr, viz_idle_color ());
    cairo_rectangle (cr, x0, yc, x1 - x0, l.lane_compute_h);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.97, 0.97, 0.97);
    cairo_rectangle (cr, x0, yl, x1 - x0, 3 * (l.lane_h + 1));
    cairo_fill (cr);
    for (guint i = 0; i < it->spans->len; i++) {
      const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
      double a, b, w;
      int lane;
      if (sp->stage != s || sp->end <= sp->start || sp->end < t0 || sp->start > t1)
        continue;
      a = x0 + (x1 - x0) * sim_time_to_s (sp->start - t0) / span_s;
      b = x0 + (x1 - x0) * sim_time_to_s (sp->end - t0) / span_s;
      w = b - a;
      lane = lane_of (sp->kind);
      viz_set_color (cr, viz_kind_color (sp->kind));
      if (lane < 0) {
        /* a hairline gap separates neighbouring blocks when there is room */
        cairo_rectangle (cr, a, yc, w > 4 ? w - 1 : MAX (w, 0.6), l.lane_compute_h);
        cairo_fill (cr);
        if (sp->micro_batch >= 0 && w > 14) {
          g_autofree char *mb = in->run->plan->virtual_stages > 1
                                    ? g_strdup_printf ("%d.%d", sp->micro_batch, sp->chunk)
                                    : g_strdup_printf ("%d", sp->micro_batch);
          viz_font (cr, 10, FALSE);
          if (viz_text_width (cr, mb) + 4 < w - 1) {
            cairo_set_source_rgb (cr, 1, 1, 1);
            viz_text (cr, a + (w - 1) / 2, yc + l.lane_compute_h / 2 + 3.5, 0.5, mb);
          }
        }
      } else {
        /* a pipeline send takes microseconds beside milliseconds of
         * compute: at least 2 px, or it vanishes between the blocks */
        comm_segments (cr, busy, sp->start, sp->end, viz_kind_color (sp->kind), x0, x1, t0, span_s,
                       yl + lane * (l.lane_h + 1), l.lane_h,
                       dense[lane] ? 0.0 : sp->kind == SIM_SPAN_PP ? 2.0 : 0.6, TRUE);
        /* a stage whose compute waits for a collective (the ZeRO-3
         * gather, the gradient reduction before the optimizer, the
         * experts' all-to-all, TP not hidden) is communicating, not idle
         * in a pipeline bubble: the exposed part goes into the compute
         * lane too (a pipeline receive's wait stays the bubble) */
        if (sp->kind != SIM_SPAN_PP && sp->replica == 0 && gates_compute (busy, sp->end))
          comm_segments (cr, busy, sp->start, sp->end, viz_kind_color (sp->kind), x0, x1, t0,
                         span_s, yc, l.lane_compute_h, 0.6, FALSE);
      }
    }
    paired_outlines (cr, it, s, x0, x1, t0, t1, span_s, yc, l.lane_compute_h);
  }
  cairo_restore (cr);

  if (labels)
    for (guint r = 0; r < rows->len; r++) {
      int s = g_array_index (rows, int, r);
      double yc = y0 + r * l.row_h + 4, yl = yc + l.lane_compute_h + 3;
      int rank = rank_of_stage (in->run->plan, s);
      /* a stage the straggler what-if slows (--slow-gpu, --slow-node, in
       * any replica: the one drawn stands for it) says by how much */
      double slow = 1.0;
      for (int d = 0; d < in->run->plan->dp && in->run->plan->n_slow > 0; d++)
        slow = MAX (slow, sim_plan_slow_factor (in->run->plan, in->run->topo->gpus_per_node, s, d));
      g_autofree char *label = slow > 1.0 ? g_strdup_printf ("stage %d, %.2fx", s, slow)
                                          : g_strdup_printf ("stage %d", s);
      g_autofree char *sub = g_strdup_printf ("GPU %d, node %d", rank, sim_topology_gpu (in->run->topo, rank)->node);
      if (slow > 1.0)
        cairo_set_source_rgb (cr, 0.75, 0.1, 0.1);
      else
        cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      viz_font (cr, 13, TRUE);
      viz_text (cr, x0 - 10, yc + 13, 1, label);
      viz_font (cr, 10.5, FALSE);
      cairo_set_source_rgb (cr, 0.35, 0.35, 0.35);
      viz_text (cr, x0 - 10, yc + 27, 1, sub);
      if (in->run->memory != NULL && s == in->run->memory->peak_stage && in->run->plan->pp > 1)
        viz_text (cr, x0 - 30, yl + 17, 1, "peak memory");
      lane_labels (cr, in->run->plan, x0 - 4, yl);
    }

  /* the time axis of this window */
  {
    g_autofree char *axis = g_strdup_printf ("time (%s)", unit);
    cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
    cairo_set_line_width (cr, 1);
    cairo_move_to (cr, x0, yb + 0.5);
    cairo_line_to (cr, x1, yb + 0.5);
    cairo_stroke (cr);
    viz_font (cr, 11.5, FALSE);
    for (double v = ceil (origin * scale / step) * step; v <= (origin + span_s) * scale + 1e-9; v += step) {
      double x = floor (x0 + (x1 - x0) * (v / scale - origin) / span_s) + 0.5;
      g_autofree char *t = viz_format_tick (v);
      cairo_move_to (cr, x, yb);
      cairo_line_to (cr, x, yb + 5);
      cairo_stroke (cr);
      viz_text (cr, x, yb + 18, 0.5, t);
    }
    viz_font (cr, 12, FALSE);
    viz_text (cr, (x0 + x1) / 2, yb + 36, 0.5, axis);
  }
  return yb + BOTTOM;
}

double
viz_gantt_height_for (const VizInput *in, int rows, double width)
{
  double h = TOP + rows * ROW_H + BOTTOM;
  if (viz_zoom_wanted (in, width - LEFT - RIGHT))
    h += 34 + rows * ROW_H + BOTTOM;
  return h;
}

void
viz_gantt_draw (cairo_t *cr, double width, double height, const VizInput *in)
{
  g_autoptr (GArray) rows = viz_default_stages (in, 32);
  g_autofree char *title = viz_title (in);
  const SimIteration *it = in->run->time;
  double y = TOP;

  cairo_save (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  viz_font (cr, 17, TRUE);
  viz_text (cr, 16, 28, 0, title);
  if (it != NULL) {
    g_autofree char *tok = sim_format_count ((guint64) llround (it->tokens_per_s));
    g_autofree char *ep = in->run->plan->ep > 1 || in->run->plan->etp > 1
                              ? g_strdup_printf (", EP %.3f s", it->exposed_ep_s)
                              : g_strdup ("");
    const char *precision = NULL;
    double m = sim_run_mfu_gemm_peak (in->run->topo, in->run->plan, it->mfu, &precision);
    g_autofree char *line = g_strdup_printf (
        "step %.3f s   %s tokens/s   MFU %.1f%%%s   bubble %.1f%%   exposed comm, mean of stages: TP %.3f s, PP %.3f s, DP %.3f s%s",
        it->step_s, tok, 100 * m,
        sim_run_gemm_peak_words (precision),
        100 * it->bubble_fraction, it->exposed_tp_s, it->exposed_pp_s, it->exposed_dp_s, ep);
    g_autofree char *shown = viz_stages_shown (in, rows);
    viz_font (cr, 14, FALSE);
    cairo_set_source_rgb (cr, 0.25, 0.25, 0.25);
    viz_text (cr, 16, 52, 0, line);
    if (shown != NULL) {
      double x = 16 + viz_text_width (cr, line) + 24;
      viz_font (cr, 14, TRUE);
      cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      viz_text (cr, x, 52, 0, shown);
    }
  }
  legend (cr, in, 16, 82, width - 16);
  if (it == NULL) {
    cairo_restore (cr);
    return;
  }
  {
    gboolean zoom = viz_zoom_wanted (in, width - LEFT - RIGHT);
    y = draw_window (cr, in, rows, LEFT, width - RIGHT, y + (zoom ? 18 : 0), 0,
                     sim_time_from_s (it->step_s), TRUE, zoom ? "the whole step" : NULL);
    if (zoom) {
      SimTime warm = 0, cool = 0;
      double mid = (LEFT + width - RIGHT) / 2;
      viz_zoom_windows (in, &warm, &cool);
      draw_window (cr, in, rows, LEFT, mid - 20, y + 18, 0, warm, TRUE,
                   "start: pipeline warm-up");
      draw_window (cr, in, rows, mid + 20, width - RIGHT, y + 18, cool,
                   sim_time_from_s (it->step_s), FALSE,
                   "end: cool-down, gradient reduction, optimizer");
    }
  }
  cairo_restore (cr);
}
