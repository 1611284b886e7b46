/* viz-memory.c — memory over the iteration, stacked by category */
#include <math.h>
#include <stdio.h>

#include "viz-private.h"

#define LEFT 84.0
#define RIGHT 210.0
#define TOP 116.0
#define PANEL_H 190.0
#define GAP 44.0
#define BOTTOM 56.0
#define ZOOM_H 130.0
#define ZOOM_CAPTION 52.0

double
viz_memory_height (int panels)
{
  return TOP + panels * PANEL_H + (panels - 1) * GAP + BOTTOM;
}

double
viz_memory_height_for (const VizInput *in, int panels, double width)
{
  double h = viz_memory_height (panels);
  if (viz_zoom_wanted (in, width - LEFT - RIGHT))
    h += ZOOM_CAPTION + panels * ZOOM_H + (panels - 1) * GAP + BOTTOM;
  return h;
}

static void
static_bytes (const SimMemory *mem, int stage, double out[VIZ_MEM_COUNT])
{
  const SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, stage);
  /* the CUDA context is below the usable line, not in the stack */
  out[VIZ_MEM_WORKSPACE] = 0;
  out[VIZ_MEM_PARAMS] = (double) st->params_bytes;
  out[VIZ_MEM_GRADS] = (double) st->grads_bytes;
  out[VIZ_MEM_MASTER] = (double) st->master_bytes;
  out[VIZ_MEM_OPTIMIZER] = (double) st->optimizer_bytes;
  out[VIZ_MEM_ACCUM] = (double) st->grad_accum_bytes;
  out[VIZ_MEM_BUFFERS] = (double) st->buffer_bytes;
  out[VIZ_MEM_ACTIVATIONS] = 0;
}

/* one panel's frame: where bytes and seconds land on the page */
typedef struct {
  double left, right, top, bottom;
  double ymax;    /* bytes at the top of the panel */
  double t_start; /* seconds at the left edge */
  double t_end;   /* seconds at the right edge */
} Panel;

static double
panel_y (const Panel *p, double v)
{
  return p->bottom - (p->bottom - p->top) * v / p->ymax;
}

static double
panel_x (const Panel *p, double t)
{
  return p->left + (p->right - p->left) * (t - p->t_start) / (p->t_end - p->t_start);
}

/* the title, the verdict line and the legend of the categories present;
 * what: what the chart shows ("memory per GPU over one step") */
static void
draw_header (cairo_t *cr, const char *title, const SimMemory *mem, const char *what, const char *shown)
{
  double x = 16;
  g_autofree char *line = g_strdup_printf (
      "%s; peak %.2f GB (%.2f GiB) on stage %d, usable %.2f GB (%.2f GiB): %s", what,
      mem->peak_bytes / 1e9, mem->peak_bytes / 1073741824.0, mem->peak_stage, mem->usable_bytes / 1e9,
      mem->usable_bytes / 1073741824.0,
      mem->tight ? "fits only without the fragmentation allowance" : mem->fits ? "fits" : "OUT OF MEMORY");

  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  viz_font (cr, 17, TRUE);
  viz_text (cr, 16, 28, 0, title);
  viz_font (cr, 14, FALSE);
  cairo_set_source_rgb (cr, mem->fits ? 0.25 : 0.7, 0.25, 0.25);
  viz_text (cr, 16, 52, 0, line);
  if (shown != NULL) {
    double sx = 16 + viz_text_width (cr, line) + 24;
    viz_font (cr, 14, TRUE);
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    viz_text (cr, sx, 52, 0, shown);
  }
  /* legend */
  viz_font (cr, 12, FALSE);
  for (int c = 0; c < VIZ_MEM_COUNT; c++) {
    if (c == VIZ_MEM_WORKSPACE ||
        (c == VIZ_MEM_ACCUM && mem->stages->len > 0 &&
         g_array_index (mem->stages, SimStageMemory, 0).grad_accum_bytes == 0) ||
        (c == VIZ_MEM_BUFFERS && g_array_index (mem->stages, SimStageMemory, 0).buffer_bytes == 0) ||
        (c == VIZ_MEM_MASTER && g_array_index (mem->stages, SimStageMemory, 0).master_bytes == 0))
      continue;
    viz_set_color (cr, viz_memory_color (c));
    cairo_rectangle (cr, x, 72, 14, 12);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
    viz_text (cr, x + 19, 82, 0, viz_memory_name (c));
    x += 19 + viz_text_width (cr, viz_memory_name (c)) + 16;
  }
}

/* the OOM shading and the model states, bottom up; returns their total */
static double
draw_static_stack (cairo_t *cr, const Panel *p, const SimMemory *mem, int stage)
{
  double stat[VIZ_MEM_COUNT];
  double base = 0;

  static_bytes (mem, stage, stat);
  /* OOM region: above usable, shaded when the peak crosses it */
  if (!mem->fits) {
    cairo_set_source_rgba (cr, 0.85, 0.1, 0.1, 0.10);
    cairo_rectangle (cr, p->left, p->top, p->right - p->left,
                     panel_y (p, (double) mem->usable_bytes) - p->top);
    cairo_fill (cr);
  }
  /* static categories, bottom up */
  for (int c = 0; c < VIZ_MEM_ACTIVATIONS; c++) {
    if (stat[c] <= 0)
      continue;
    viz_set_color (cr, viz_memory_color (c));
    cairo_rectangle (cr, p->left, panel_y (p, base + stat[c]), p->right - p->left,
                     panel_y (p, base) - panel_y (p, base + stat[c]));
    cairo_fill (cr);
    base += stat[c];
  }
  return base;
}

/* the activations above base, and where the stage's total peaks */
static void
draw_activations (cairo_t *cr, const Panel *p, const SimStageTime *st, const SimStageMemory *sm,
                  double base, double *peak_t, double *peak_v)
{
  viz_set_color (cr, viz_memory_color (VIZ_MEM_ACTIVATIONS));
  if (st != NULL && st->memory->len > 0) {
    /* per pixel column, the highest level reached in it (a dense
     * saw-tooth would otherwise alias into stripes) */
    int cols = (int) ceil (p->right - p->left);
    g_autofree double *colmax = g_new0 (double, cols + 1);
    double level = 0;
    guint i = 0;
    /* the level the window opens at */
    while (i < st->memory->len &&
           sim_time_to_s (g_array_index (st->memory, SimMemPoint, i).time) < p->t_start) {
      level = (double) g_array_index (st->memory, SimMemPoint, i).activation_bytes;
      i++;
    }
    for (int c = 0; c <= cols; c++) {
      double tc1 = p->t_start + (p->t_end - p->t_start) * (c + 1) / cols;
      double m = level;
      while (i < st->memory->len && sim_time_to_s (g_array_index (st->memory, SimMemPoint, i).time) < tc1) {
        const SimMemPoint *mp = &g_array_index (st->memory, SimMemPoint, i);
        level = (double) mp->activation_bytes;
        m = MAX (m, level);
        if (base + level > *peak_v) {
          *peak_v = base + level;
          *peak_t = sim_time_to_s (mp->time);
        }
        i++;
      }
      colmax[c] = m;
    }
    cairo_move_to (cr, p->left, panel_y (p, base));
    for (int c = 0; c < cols; c++) {
      cairo_line_to (cr, p->left + c, panel_y (p, base + colmax[c]));
      cairo_line_to (cr, p->left + c + 1, panel_y (p, base + colmax[c]));
    }
    cairo_line_to (cr, p->right, panel_y (p, base));
    cairo_close_path (cr);
    cairo_fill (cr);
  } else {
    /* no timeline: the ledger's peak as a flat band */
    cairo_rectangle (cr, p->left, panel_y (p, base + sm->activations_peak_bytes), p->right - p->left,
                     panel_y (p, base) - panel_y (p, base + sm->activations_peak_bytes));
    cairo_fill (cr);
    *peak_v = base + sm->activations_peak_bytes;
    *peak_t = (p->t_start + p->t_end) / 2;
  }
}

/* frame, capacity and usable lines */
static void
draw_capacity_lines (cairo_t *cr, const Panel *p, const SimMemory *mem, gboolean labels)
{
  struct { double v; const char *name; double r, g, b; double dash; } lines[] = {
    { (double) mem->capacity_bytes, "driver-visible", 0.1, 0.1, 0.1, 0 },
    { (double) mem->usable_bytes, "usable", 0.75, 0.1, 0.1, 6 },
  };

  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, p->left + 0.5, p->top + 0.5, p->right - p->left - 1, p->bottom - p->top - 1);
  cairo_stroke (cr);
  for (guint k = 0; k < G_N_ELEMENTS (lines); k++) {
    double y = floor (panel_y (p, lines[k].v)) + 0.5;
    g_autofree char *lab = g_strdup_printf ("%s %.1f GB = %.1f GiB", lines[k].name, lines[k].v / 1e9,
                                            lines[k].v / 1073741824.0);
    cairo_set_source_rgb (cr, lines[k].r, lines[k].g, lines[k].b);
    cairo_set_line_width (cr, 1.5);
    if (lines[k].dash > 0)
      cairo_set_dash (cr, &lines[k].dash, 1, 0);
    cairo_move_to (cr, p->left, y);
    cairo_line_to (cr, p->right, y);
    cairo_stroke (cr);
    cairo_set_dash (cr, NULL, 0, 0);
    if (!labels)
      continue;
    viz_font (cr, 11, FALSE);
    viz_text (cr, p->right + 6, y + (k == 0 ? -3 : 11), 0, lab);
  }
}

/* the peak, marked where it happens */
static void
draw_peak_marker (cairo_t *cr, const Panel *p, double peak_t, double peak_v)
{
  double x = panel_x (p, peak_t), y = panel_y (p, peak_v);
  g_autofree char *a = g_strdup_printf ("peak %.2f GB", peak_v / 1e9);
  g_autofree char *b = g_strdup_printf ("= %.2f GiB", peak_v / 1073741824.0);
  double tx = x + 8, w = 0;

  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  cairo_arc (cr, x, y, 4, 0, 2 * G_PI);
  cairo_fill (cr);
  viz_font (cr, 11.5, TRUE);
  w = MAX (viz_text_width (cr, a), viz_text_width (cr, b));
  if (tx + w > p->right - 4)
    tx = x - 8 - w;
  if (y - 44 > p->top) {
    /* above the stack, where nothing is drawn */
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    cairo_set_line_width (cr, 1);
    cairo_move_to (cr, x, y - 4);
    cairo_line_to (cr, x, y - 12);
    cairo_stroke (cr);
    viz_text (cr, tx, y - 30, 0, a);
    viz_font (cr, 11.5, FALSE);
    viz_text (cr, tx, y - 16, 0, b);
  } else {
    /* no room above: beside the point, on a white card */
    cairo_set_source_rgba (cr, 1, 1, 1, 0.9);
    cairo_rectangle (cr, tx - 4, y + 4, w + 8, 32);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    viz_text (cr, tx, y + 18, 0, a);
    viz_font (cr, 11.5, FALSE);
    viz_text (cr, tx, y + 32, 0, b);
  }
}

/* y axis in GB */
static void
draw_y_axis (cairo_t *cr, const Panel *p)
{
  double stepv = viz_tick_step (p->ymax / 1e9, 5);

  viz_font (cr, 11, FALSE);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  for (double v = 0; v * 1e9 <= p->ymax; v += stepv) {
    g_autofree char *t = viz_format_tick (v);
    double y = floor (panel_y (p, v * 1e9)) + 0.5;
    cairo_move_to (cr, p->left - 5, y);
    cairo_line_to (cr, p->left, y);
    cairo_stroke (cr);
    viz_text (cr, p->left - 8, y + 4, 1, t);
  }
  cairo_save (cr);
  cairo_translate (cr, 18, (p->top + p->bottom) / 2);
  cairo_rotate (cr, -G_PI / 2);
  viz_font (cr, 12, FALSE);
  viz_text (cr, 0, 0, 0.5, "GB (10^9 bytes)");
  cairo_restore (cr);
}

/* one stage's memory over the step; the capacity lines' labels on the
 * first panel only (every stage has the same GPU) */
static void
draw_panel (cairo_t *cr, const Panel *p, const SimMemory *mem, const SimIteration *it, int s,
            gboolean labels)
{
  const SimStageTime *st = it != NULL ? &g_array_index (it->stages, SimStageTime, s) : NULL;
  const SimStageMemory *sm = &g_array_index (mem->stages, SimStageMemory, s);
  double peak_t = 0, peak_v = 0;
  double base = draw_static_stack (cr, p, mem, s);
  g_autofree char *lab = g_strdup_printf ("stage %d%s", s, s == mem->peak_stage ? " (peak)" : "");

  /* activations over time */
  draw_activations (cr, p, st, sm, base, &peak_t, &peak_v);
  draw_capacity_lines (cr, p, mem, labels);
  draw_peak_marker (cr, p, peak_t, peak_v);
  draw_y_axis (cr, p);
  viz_font (cr, 13, TRUE);
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  viz_text (cr, p->left, p->top - 8, 0, lab);
}

/* one stage's memory in a zoomed window: the left one carries the y axis
 * and the stage's name, the right one of the first stage the capacity
 * labels; no peak marker (the whole step above has it) */
static void
draw_zoom_panel (cairo_t *cr, const Panel *p, const SimMemory *mem, const SimIteration *it, int s,
                 gboolean left, gboolean first)
{
  const SimStageTime *st = &g_array_index (it->stages, SimStageTime, s);
  const SimStageMemory *sm = &g_array_index (mem->stages, SimStageMemory, s);
  double peak_t = 0, peak_v = 0, base = 0;

  cairo_save (cr);
  cairo_rectangle (cr, p->left, p->top, p->right - p->left, p->bottom - p->top);
  cairo_clip (cr);
  base = draw_static_stack (cr, p, mem, s);
  draw_activations (cr, p, st, sm, base, &peak_t, &peak_v);
  cairo_restore (cr);
  draw_capacity_lines (cr, p, mem, !left && first);
  if (left) {
    g_autofree char *lab = g_strdup_printf ("stage %d%s", s, s == mem->peak_stage ? " (peak)" : "");
    draw_y_axis (cr, p);
    viz_font (cr, 13, TRUE);
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    viz_text (cr, p->left, p->top - 8, 0, lab);
  }
}

/* time axis under the last panel, at yb, from t_start to t_end seconds */
static void
draw_time_axis (cairo_t *cr, double left, double right, double yb, double t_start, double t_end,
                int want)
{
  double scale = 1;
  const char *unit = "s";
  double stepx = 0;
  g_autofree char *axis = NULL;

  viz_time_unit (t_end - t_start, &scale, &unit);
  stepx = viz_tick_step ((t_end - t_start) * scale, want);
  axis = g_strdup_printf ("time (%s)", unit);
  viz_font (cr, 11.5, FALSE);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  /* ticks at whole steps of absolute time */
  /* (+ 0.0: ceil of a hair below zero is -0, which prints "-0") */
  for (double v = ceil (t_start * scale / stepx - 1e-9) * stepx + 0.0; v <= t_end * scale + 1e-9; v += stepx) {
    double x = floor (left + (right - left) * (v / scale - t_start) / (t_end - t_start)) + 0.5;
    g_autofree char *t = viz_format_tick (v);
    cairo_move_to (cr, x, yb);
    cairo_line_to (cr, x, yb + 5);
    cairo_stroke (cr);
    viz_text (cr, x, yb + 18, 0.5, t);
  }
  viz_font (cr, 12, FALSE);
  viz_text (cr, (left + right) / 2, yb + 38, 0.5, axis);
}

/* ---- without a simulated step (--memory-only): one stacked bar per
 * pipeline stage, the ledger's components at the stage's peak, against the
 * usable and driver-visible lines ---- */

/* the stages the bar chart shows: every stage, or those asked for, in order */
static GArray *
bar_stages (const VizInput *in)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (int));
  const SimMemory *mem = in->run->memory;
  for (int s = 0; s < (int) mem->stages->len; s++) {
    gboolean keep = in->stages == NULL;
    for (int k = 0; !keep && k < in->n_stages; k++)
      keep = in->stages[k] == s;
    if (keep)
      g_array_append_val (out, s);
  }
  return out;
}

/* stage numbers under the bars, thinned to one label per `every` */
static void
draw_stage_axis (cairo_t *cr, const Panel *p, GArray *stages, double slot)
{
  int every = 1;
  viz_font (cr, 11, FALSE);
  while (every < (int) stages->len && slot * every < 28)
    every *= 2;
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  for (guint i = 0; i < stages->len; i += (guint) every) {
    g_autofree char *t = g_strdup_printf ("%d", g_array_index (stages, int, i));
    viz_text (cr, p->left + slot * (i + 0.5), p->bottom + 16, 0.5, t);
  }
  viz_font (cr, 12, FALSE);
  viz_text (cr, (p->left + p->right) / 2, p->bottom + 36, 0.5, "pipeline stage");
}

/* the peak, at the top of its bar: beside the bar when the gap to the next
 * one holds the label, else above it */
static void
draw_bar_peak (cairo_t *cr, const Panel *p, double x, double bar_w, double slot, double v)
{
  g_autofree char *a = g_strdup_printf ("peak %.2f GB", v / 1e9);
  g_autofree char *b = g_strdup_printf ("= %.2f GiB", v / 1073741824.0);
  double y = panel_y (p, v), w;

  viz_font (cr, 11.5, TRUE);
  w = MAX (viz_text_width (cr, a), viz_text_width (cr, b));
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  cairo_arc (cr, x, y, 4, 0, 2 * G_PI);
  cairo_fill (cr);
  if ((slot - bar_w) / 2 >= w + 12 || y - 40 < p->top) {
    double tx = x + bar_w / 2 + 6;
    double ty = MAX (y, p->top + 4);
    if (tx + w > p->right - 4)
      tx = x - bar_w / 2 - 6 - w;
    cairo_set_source_rgba (cr, 1, 1, 1, 0.9);
    cairo_rectangle (cr, tx - 4, ty, w + 8, 32);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    viz_text (cr, tx, ty + 13, 0, a);
    viz_font (cr, 11.5, FALSE);
    viz_text (cr, tx, ty + 27, 0, b);
    return;
  }
  /* centred above the bar, kept inside the plot */
  x = CLAMP (x - w / 2, p->left + 4, p->right - 4 - w);
  viz_text (cr, x, y - 24, 0, a);
  viz_font (cr, 11.5, FALSE);
  viz_text (cr, x, y - 9, 0, b);
}

static void
draw_bars (cairo_t *cr, double width, double height, const VizInput *in, const char *title)
{
  const SimMemory *mem = in->run->memory;
  g_autoptr (GArray) stages = bar_stages (in);
  Panel p = { .left = LEFT, .right = width - RIGHT, .top = TOP + 24, .bottom = height - BOTTOM };
  double slot = 0, bar_w = 0, peak_x = -1, peak_v = 0;
  g_autofree char *shown = viz_stages_shown (in, stages);

  cairo_save (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  draw_header (cr, title, mem, "memory per GPU by pipeline stage, from the ledger (no time simulated)", shown);
  if (stages->len == 0) {
    cairo_restore (cr);
    return;
  }
  p.ymax = MAX ((double) mem->capacity_bytes, (double) mem->peak_bytes) * 1.12;
  slot = (p.right - p.left) / stages->len;
  bar_w = MIN (slot * 0.7, 140);
  if (!mem->fits) {
    cairo_set_source_rgba (cr, 0.85, 0.1, 0.1, 0.10);
    cairo_rectangle (cr, p.left, p.top, p.right - p.left, panel_y (&p, (double) mem->usable_bytes) - p.top);
    cairo_fill (cr);
  }
  for (guint i = 0; i < stages->len; i++) {
    int s = g_array_index (stages, int, i);
    const SimStageMemory *sm = &g_array_index (mem->stages, SimStageMemory, s);
    double stat[VIZ_MEM_COUNT];
    double x = p.left + slot * (i + 0.5) - bar_w / 2, base = 0;

    static_bytes (mem, s, stat);
    stat[VIZ_MEM_ACTIVATIONS] = (double) sm->activations_peak_bytes;
    for (int c = 0; c < VIZ_MEM_COUNT; c++) {
      if (stat[c] <= 0)
        continue;
      viz_set_color (cr, viz_memory_color (c));
      cairo_rectangle (cr, x, panel_y (&p, base + stat[c]), bar_w, panel_y (&p, base) - panel_y (&p, base + stat[c]));
      cairo_fill (cr);
      base += stat[c];
    }
    /* each bar's total above it when there is room for the number */
    if (slot >= 44 && s != mem->peak_stage) {
      g_autofree char *t = g_strdup_printf (slot >= 70 ? "%.1f GB" : "%.1f", base / 1e9);
      viz_font (cr, 11, FALSE);
      cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
      viz_text (cr, x + bar_w / 2, panel_y (&p, base) - 5, 0.5, t);
    }
    if (s == mem->peak_stage)
      peak_x = x + bar_w / 2, peak_v = base;
  }
  draw_capacity_lines (cr, &p, mem, TRUE);
  if (peak_x >= 0)
    draw_bar_peak (cr, &p, peak_x, bar_w, slot, peak_v);
  draw_y_axis (cr, &p);
  draw_stage_axis (cr, &p, stages, slot);
  cairo_restore (cr);
}

void
viz_memory_draw (cairo_t *cr, double width, double height, const VizInput *in)
{
  g_autoptr (GArray) panels = NULL;
  g_autofree char *title = viz_title (in);
  const SimMemory *mem = in->run->memory;
  const SimIteration *it = in->run->time;
  Panel p = { .left = LEFT, .right = width - RIGHT };
  g_autofree char *shown = NULL;

  p.t_end = it != NULL ? it->step_s : 1.0;
  /* default panels: the peak stage first, then at most 3 others */
  if (in->stages != NULL) {
    panels = g_array_new (FALSE, FALSE, sizeof (int));
    g_array_append_vals (panels, in->stages, (guint) in->n_stages);
  } else {
    panels = viz_default_stages (in, 4);
  }

  if (it == NULL) {
    /* no timeline to draw over (--memory-only): the ledger per stage */
    draw_bars (cr, width, height, in, title);
    return;
  }
  shown = viz_stages_shown (in, panels);
  cairo_save (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  draw_header (cr, title, mem, "memory per GPU over one step", shown);

  /* one y scale for all panels: up to the larger of capacity and peak */
  p.ymax = MAX ((double) mem->capacity_bytes, (double) mem->peak_bytes) * 1.08;
  for (guint pi = 0; pi < panels->len; pi++) {
    p.top = TOP + pi * (PANEL_H + GAP);
    p.bottom = p.top + PANEL_H;
    draw_panel (cr, &p, mem, it, g_array_index (panels, int, pi), pi == 0);
  }
  draw_time_axis (cr, p.left, p.right, TOP + panels->len * PANEL_H + (panels->len - 1) * GAP, 0,
                  p.t_end, 10);
  if (viz_zoom_wanted (in, width - LEFT - RIGHT)) {
    /* the warm-up and the cool-down, as the Gantt chart zooms into them:
     * one row of two windows per stage under the whole step */
    SimTime warm = 0, cool = 0;
    double mid = (LEFT + width - RIGHT) / 2;
    double top = TOP + panels->len * PANEL_H + (panels->len - 1) * GAP + BOTTOM + ZOOM_CAPTION;
    double yb = top + panels->len * ZOOM_H + (panels->len - 1) * GAP;
    Panel zl = p, zr = p;
    viz_zoom_windows (in, &warm, &cool);
    zl.right = mid - 20;
    zl.t_start = 0;
    zl.t_end = sim_time_to_s (warm);
    zr.left = mid + 20;
    zr.t_start = sim_time_to_s (cool);
    zr.t_end = it->step_s;
    viz_font (cr, 12.5, TRUE);
    cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
    viz_text (cr, zl.left, top - 32, 0, "start: pipeline warm-up");
    viz_text (cr, zr.left, top - 32, 0, "end: cool-down, gradient reduction, optimizer");
    for (guint pi = 0; pi < panels->len; pi++) {
      zl.top = zr.top = top + pi * (ZOOM_H + GAP);
      zl.bottom = zr.bottom = zl.top + ZOOM_H;
      draw_zoom_panel (cr, &zl, mem, it, g_array_index (panels, int, pi), TRUE, pi == 0);
      draw_zoom_panel (cr, &zr, mem, it, g_array_index (panels, int, pi), FALSE, pi == 0);
    }
    draw_time_axis (cr, zl.left, zl.right, yb, zl.t_start, zl.t_end, (int) MAX (3, (zl.right - zl.left) / 130));
    draw_time_axis (cr, zr.left, zr.right, yb, zr.t_start, zr.t_end, (int) MAX (3, (zr.right - zr.left) / 130));
  }
  cairo_restore (cr);
}
