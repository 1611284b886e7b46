/* viz-common.c — colours and shared choices */
#include "viz.h"

#include "viz-private.h"

#include <math.h>
#include <stdio.h>

/* a colour-blind-friendly palette (seaborn "deep"), one hue per kind */
static const VizColor kind_colors[SIM_SPAN_KINDS] = {
  { 0.298, 0.447, 0.690 }, /* forward: blue */
  { 0.333, 0.659, 0.408 }, /* backward: green */
  { 0.506, 0.447, 0.702 }, /* recompute: purple */
  { 0.800, 0.725, 0.455 }, /* optimizer: sand */
  { 0.867, 0.518, 0.322 }, /* TP: orange */
  { 0.855, 0.545, 0.765 }, /* CP: pink */
  { 0.769, 0.306, 0.322 }, /* PP: red */
  { 0.576, 0.471, 0.376 }, /* DP: brown */
  { 0.392, 0.710, 0.804 }, /* EP: cyan */
  { 0.925, 0.925, 0.925 }, /* idle */
  { 0.659, 0.831, 0.573 }, /* weight gradient: light green, beside the backward's */
};

VizColor
viz_kind_color (SimSpanKind kind)
{
  return kind_colors[kind < SIM_SPAN_KINDS ? kind : SIM_SPAN_GATE];
}

VizColor
viz_idle_color (void)
{
  return kind_colors[SIM_SPAN_GATE];
}

static const VizColor mem_colors[VIZ_MEM_COUNT] = {
  { 0.690, 0.690, 0.690 }, /* workspace: grey */
  { 0.298, 0.447, 0.690 }, /* params: blue */
  { 0.333, 0.659, 0.408 }, /* grads: green */
  { 0.506, 0.447, 0.702 }, /* master: purple */
  { 0.800, 0.725, 0.455 }, /* optimizer: sand */
  { 0.392, 0.710, 0.804 }, /* fp32 accumulation: light blue */
  { 0.576, 0.471, 0.376 }, /* buffers: brown */
  { 0.867, 0.518, 0.322 }, /* activations: orange */
};

static const char *mem_names[VIZ_MEM_COUNT] = {
  "CUDA context + workspace", "parameters", "gradients", "fp32 master weights",
  "optimizer state", "fp32 grad accumulation", "buffers", "activations",
};

VizColor
viz_memory_color (VizMemCategory c)
{
  return mem_colors[c];
}

const char *
viz_memory_name (VizMemCategory c)
{
  return mem_names[c];
}

void
viz_set_color (cairo_t *cr, VizColor c)
{
  cairo_set_source_rgb (cr, c.r, c.g, c.b);
}

void
viz_font (cairo_t *cr, double size, gboolean bold)
{
  cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                          bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, size);
}

double
viz_text_width (cairo_t *cr, const char *text)
{
  cairo_text_extents_t ext;
  cairo_text_extents (cr, text, &ext);
  return ext.x_advance;
}

/* draw text with its left (align 0), centre (0.5) or right (1) at x and
 * its baseline at y */
void
viz_text (cairo_t *cr, double x, double y, double align, const char *text)
{
  cairo_move_to (cr, x - align * viz_text_width (cr, text), y);
  cairo_show_text (cr, text);
}

/* ticks at 1, 2 or 5 x 10^k, about `want` of them over [0, hi] */
double
viz_tick_step (double hi, int want)
{
  double raw = hi / MAX (want, 1), mag, f;
  if (!(hi > 0))
    return 1;
  mag = pow (10, floor (log10 (raw)));
  f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* a time in the unit that suits the whole axis */
void
viz_time_unit (double span_s, double *scale, const char **unit)
{
  if (span_s >= 10) {
    *scale = 1;
    *unit = "s";
  } else if (span_s >= 0.01) {
    *scale = 1e3;
    *unit = "ms";
  } else {
    *scale = 1e6;
    *unit = "us";
  }
}

char *
viz_format_tick (double v)
{
  char buf[64];
  if (fabs (v - round (v)) < 1e-9)
    g_snprintf (buf, sizeof buf, "%.0f", v);
  else if (fabs (v * 10 - round (v * 10)) < 1e-9)
    g_snprintf (buf, sizeof buf, "%.1f", v);
  else
    g_snprintf (buf, sizeof buf, "%.2f", v);
  return g_strdup (buf);
}

GArray *
viz_default_stages (const VizInput *in, int max_rows)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (int));
  int p = in->run->plan->pp;
  int peak = in->run->memory != NULL ? in->run->memory->peak_stage : 0;
  if (in->stages != NULL) {
    g_array_append_vals (a, in->stages, (guint) in->n_stages);
    return a;
  }
  if (p <= max_rows) {
    for (int s = 0; s < p; s++)
      g_array_append_val (a, s);
    return a;
  }
  /* evenly spaced, always the first, the last and the peak */
  for (int i = 0; i < max_rows - 1; i++) {
    int s = (int) lround ((double) i * (p - 1) / (max_rows - 1));
    if (a->len == 0 || g_array_index (a, int, a->len - 1) != s)
      g_array_append_val (a, s);
  }
  {
    int last = p - 1;
    if (g_array_index (a, int, a->len - 1) != last)
      g_array_append_val (a, last);
  }
  {
    gboolean has = FALSE;
    for (guint i = 0; i < a->len; i++)
      has |= g_array_index (a, int, i) == peak;
    if (!has) {
      guint i = 0;
      while (i < a->len && g_array_index (a, int, i) < peak)
        i++;
      g_array_insert_val (a, i, peak);
    }
  }
  return a;
}

char *
viz_title (const VizInput *in)
{
  const SimPlan *p = in->run->plan;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%s on %s: tp %d x cp %d x pp %d x dp %d, %s", in->run->model->name,
                          in->run->topo->name, p->tp, p->cp, p->pp, p->dp, sim_schedule_name (p->schedule));
  if (p->schedule == SIM_SCHEDULE_INTERLEAVED)
    g_string_append_printf (s, " (v %d)", p->virtual_stages);
  g_string_append_printf (s, ", micro-batch %d, %" G_GUINT64_FORMAT " micro-batches", p->micro_batch,
                          p->micro_batches);
  return g_string_free (s, FALSE);
}

char *
viz_stages_shown (const VizInput *in, const GArray *rows)
{
  int p = in->run->plan->pp;
  GString *s = NULL;
  if ((int) rows->len >= p)
    return NULL;
  s = g_string_new ("stages shown: ");
  /* a long list keeps its ends: which stages a reader looks for first */
  for (guint i = 0; i < rows->len; i++) {
    if (rows->len > 12 && i == 5) {
      g_string_append_printf (s, "... (%u in all), ", rows->len);
      i = rows->len - 5;
    }
    g_string_append_printf (s, "%d%s", g_array_index (rows, int, i), i + 1 < rows->len ? ", " : "");
  }
  g_string_append_printf (s, " of %d", p);
  return g_string_free (s, FALSE);
}

/* the blocks of the whole step are too thin to read when a micro-batch's
 * forward or backward gets under 6 px */
gboolean
viz_zoom_wanted (const VizInput *in, double plot_w)
{
  const SimIteration *it = in->run->time;
  return it != NULL && plot_w / (2.0 * in->run->plan->micro_batches * in->run->plan->virtual_stages + in->run->plan->pp) < 6;
}

/* the end of stage 0's n-th compute span, and the start of the last
 * stage's n-th from the end, n = 2 p v + 2: the pipeline fills (drains)
 * within them */
void
viz_zoom_windows (const VizInput *in, SimTime *warm_end, SimTime *cool_start)
{
  const SimIteration *it = in->run->time;
  int n = 2 * in->run->plan->pp * in->run->plan->virtual_stages + 2;
  g_autoptr (GArray) ends = g_array_new (FALSE, FALSE, sizeof (SimTime));
  g_autoptr (GArray) starts = g_array_new (FALSE, FALSE, sizeof (SimTime));
  for (guint i = 0; i < it->spans->len; i++) {
    const SimSpan *sp = &g_array_index (it->spans, SimSpan, i);
    if (sp->kind != SIM_SPAN_FORWARD && sp->kind != SIM_SPAN_BACKWARD)
      continue;
    if (sp->stage == 0)
      g_array_append_val (ends, sp->end);
    if (sp->stage == in->run->plan->pp - 1)
      g_array_append_val (starts, sp->start);
  }
  *warm_end = sim_time_from_s (it->step_s / 10);
  *cool_start = sim_time_from_s (it->step_s * 0.9);
  /* spans are in creation order per stage, which is program order */
  if (ends->len > (guint) n)
    *warm_end = g_array_index (ends, SimTime, n);
  if (starts->len > (guint) n)
    *cool_start = g_array_index (starts, SimTime, starts->len - 1 - n);
}
