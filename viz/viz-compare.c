/* viz-compare.c — layouts side by side: where each one's step goes, and
 * how full its memory is */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "viz-compare.h"
#include "viz-private.h"

#define LEFT 300.0
#define GAUGE_W 260.0
#define TOP 104.0
#define ROW 40.0
#define BOTTOM 60.0

double
viz_compare_height (int n)
{
  return TOP + n * ROW + BOTTOM;
}

/* the segments of a step bar, in drawing order */
static const struct {
  SimSpanKind kind;
  const char *name;
} parts[] = {
  { SIM_SPAN_FORWARD, "compute" }, { SIM_SPAN_TP, "exposed TP" }, { SIM_SPAN_CP, "exposed CP" },
  { SIM_SPAN_PP, "exposed PP" }, { SIM_SPAN_DP, "exposed DP" }, { SIM_SPAN_EP, "exposed EP" },
  { SIM_SPAN_GATE, "bubble" },
};

static VizColor
part_color (guint k)
{
  return parts[k].kind == SIM_SPAN_GATE ? (VizColor) { 0.80, 0.80, 0.80 } : viz_kind_color (parts[k].kind);
}

/* the title, what the chart shows, and the legend of the bar segments */
static void
draw_header (cairo_t *cr, const char *title)
{
  double x = 16;

  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  viz_font (cr, 17, TRUE);
  viz_text (cr, 16, 28, 0, title);
  viz_font (cr, 13, FALSE);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  viz_text (cr, 16, 50, 0, "step time of each layout, split into compute, exposed communication by kind and the pipeline bubble (mean over stages); right: peak memory against the usable capacity");
  viz_font (cr, 12, FALSE);
  for (guint k = 0; k < G_N_ELEMENTS (parts); k++) {
    viz_set_color (cr, part_color (k));
    cairo_rectangle (cr, x, 70, 14, 12);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
    viz_text (cr, x + 19, 80, 0, parts[k].name);
    x += 19 + viz_text_width (cr, parts[k].name) + 18;
  }
}

/* vertical grid lines and the step-time axis under n rows */
static void
draw_time_axis (cairo_t *cr, double right, double tmax, int n, double scale, const char *unit)
{
  double step = viz_tick_step (tmax * scale, 8);
  g_autofree char *axis = g_strdup_printf ("step time (%s)", unit);

  for (double v = 0; v <= tmax * scale + 1e-9; v += step) {
    double x = floor (LEFT + (right - LEFT) * (v / scale) / tmax) + 0.5;
    g_autofree char *t = viz_format_tick (v);
    cairo_set_source_rgb (cr, 0.88, 0.88, 0.88);
    cairo_set_line_width (cr, 1);
    cairo_move_to (cr, x, TOP - 4);
    cairo_line_to (cr, x, TOP + n * ROW);
    cairo_stroke (cr);
    cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
    viz_font (cr, 11.5, FALSE);
    viz_text (cr, x, TOP + n * ROW + 18, 0.5, t);
  }
  viz_font (cr, 12, FALSE);
  viz_text (cr, (LEFT + right) / 2, TOP + n * ROW + 38, 0.5, axis);
}

/* one layout's step, segment by segment, and its time and MFU if they fit before gx */
static void
draw_step_bar (cairo_t *cr, const SimRun *run, double y, double h, double right, double tmax,
               double gx, double scale, const char *unit)
{
  const SimIteration *it = run->time;
  double x = LEFT;
  double comp = it->compute_s;
  /* the mean of the stages, as the report's stage table's mean row */
  double exposed = it->exposed_tp_s + it->exposed_cp_s + it->exposed_pp_s + it->exposed_dp_s + it->exposed_ep_s;
  double seg[] = { comp, it->exposed_tp_s, it->exposed_cp_s, it->exposed_pp_s, it->exposed_dp_s, it->exposed_ep_s,
                   MAX (0.0, it->step_s - comp - exposed) };
  const char *precision = NULL;
  double m = sim_run_mfu_gemm_peak (run->topo, run->plan, it->mfu, &precision);
  g_autofree char *t = g_strdup_printf ("%.2f %s, MFU %.0f%%%s", it->step_s * scale, unit, 100 * m,
                                        sim_run_gemm_peak_words (precision));

  for (guint k = 0; k < G_N_ELEMENTS (parts); k++) {
    double w = (right - LEFT) * seg[k] / tmax;
    viz_set_color (cr, part_color (k));
    cairo_rectangle (cr, x, y, w, h);
    cairo_fill (cr);
    x += w;
  }
  viz_font (cr, 11, FALSE);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  if (x + 6 + viz_text_width (cr, t) < gx - 8)
    viz_text (cr, x + 6, y + h / 2 + 4, 0, t);
}

/* a layout that does not fit: its step is what it would take, not a
 * choice, so no segments in the kinds' colours but a grey bar hatched
 * across with "OOM" written on it */
static void
draw_oom_bar (cairo_t *cr, const SimIteration *it, double y, double h, double right, double tmax,
              double gx, double scale, const char *unit)
{
  double w = (right - LEFT) * it->step_s / tmax;
  g_autofree char *t = g_strdup_printf ("%.2f %s if it fitted", it->step_s * scale, unit);

  cairo_set_source_rgb (cr, 0.80, 0.80, 0.80);
  cairo_rectangle (cr, LEFT, y, w, h);
  cairo_fill (cr);
  cairo_save (cr);
  cairo_rectangle (cr, LEFT, y, w, h);
  cairo_clip (cr);
  cairo_set_source_rgb (cr, 0.55, 0.55, 0.55);
  cairo_set_line_width (cr, 2);
  for (double x = LEFT - h; x < LEFT + w; x += 10) {
    cairo_move_to (cr, x, y + h);
    cairo_line_to (cr, x + h, y);
  }
  cairo_stroke (cr);
  cairo_restore (cr);
  cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, LEFT + 0.5, y + 0.5, MAX (w - 1, 0), h - 1);
  cairo_stroke (cr);
  /* the word on a white patch in the middle of the bar */
  viz_font (cr, 12, TRUE);
  {
    double tw = viz_text_width (cr, "OOM"), cx = LEFT + w / 2;
    cairo_set_source_rgb (cr, 1, 1, 1);
    cairo_rectangle (cr, cx - tw / 2 - 6, y + 4, tw + 12, h - 8);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.80, 0.15, 0.15);
    viz_text (cr, cx, y + h / 2 + 4.5, 0.5, "OOM");
  }
  viz_font (cr, 11, FALSE);
  cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
  if (LEFT + w + 6 + viz_text_width (cr, t) < gx - 8)
    viz_text (cr, LEFT + w + 6, y + h / 2 + 4, 0, t);
}

/* the memory gauge: peak over usable, red past it */
static void
draw_memory_gauge (cairo_t *cr, const SimMemory *mem, double gx, double y, double h)
{
  double frac = (double) mem->peak_bytes / (double) mem->usable_bytes;
  double gw = GAUGE_W - 110;
  g_autofree char *t = g_strdup_printf ("%.0f GiB%s", mem->peak_bytes / 1073741824.0,
                                        mem->fits ? "" : " OOM");

  cairo_set_source_rgb (cr, 0.93, 0.93, 0.93);
  cairo_rectangle (cr, gx, y + 4, gw, h - 8);
  cairo_fill (cr);
  if (mem->fits)
    cairo_set_source_rgb (cr, 0.333, 0.659, 0.408);
  else
    cairo_set_source_rgb (cr, 0.80, 0.15, 0.15);
  cairo_rectangle (cr, gx, y + 4, gw * MIN (frac, 1.0), h - 8);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  viz_font (cr, 11, !mem->fits);
  viz_text (cr, gx + gw + 6, y + h / 2 + 4, 0, t);
}

void
viz_compare_draw (cairo_t *cr, double width, double height, const SimRun *const *runs, int n,
                  const char *title)
{
  double tmax = 0, right = width - GAUGE_W - 170, gx = width - GAUGE_W - 10;
  double scale = 1;
  const char *unit = "s";
  g_autofree const SimRun **order = g_new0 (const SimRun *, MAX (n, 1));

  for (int i = 0; i < n; i++)
    if (runs[i]->time != NULL)
      tmax = MAX (tmax, runs[i]->time->step_s);
  if (tmax <= 0)
    tmax = 1;
  cairo_save (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  draw_header (cr, title);
  viz_time_unit (tmax, &scale, &unit);
  draw_time_axis (cr, right, tmax, n, scale, unit);

  /* the layouts that fit first, in the order given (the caller's ranking),
   * then those that do not: an OOM layout is never ranked above one that fits */
  for (int k = 0, i = 0; k < 2; k++)
    for (int j = 0; j < n; j++)
      if (runs[j]->memory->fits == (k == 0))
        order[i++] = runs[j];
  for (int i = 0; i < n; i++) {
    const SimRun *r = order[i];
    double y = TOP + i * ROW + 6, h = ROW - 14;
    g_autofree char *label = r->memory->fits ? g_strdup_printf ("%d. %s", i + 1, r->label)
                                             : g_strdup_printf ("OOM: %s", r->label);
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    viz_font (cr, 12, r->memory->fits);
    /* long plans are cut to the margin */
    while (viz_text_width (cr, label) > LEFT - 24 && strlen (label) > 4) {
      label[strlen (label) - 4] = '\0';
      strcat (label, "...");
    }
    viz_text (cr, LEFT - 12, y + h / 2 + 4, 1, label);
    if (r->time != NULL && r->memory->fits)
      draw_step_bar (cr, r, y, h, right, tmax, gx, scale, unit);
    else if (r->time != NULL)
      draw_oom_bar (cr, r->time, y, h, right, tmax, gx, scale, unit);
    draw_memory_gauge (cr, r->memory, gx, y, h);
  }
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  viz_font (cr, 11.5, FALSE);
  viz_text (cr, gx, TOP + n * ROW + 18, 0, "peak / usable memory");
  cairo_restore (cr);
}
