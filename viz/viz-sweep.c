/* viz-sweep.c — the chart of a sweep (sim sweep --chart).
 *
 * On one cluster: step time against peak memory per GPU, one dot per
 * layout that fits, the usable memory as a line, and the Pareto front —
 * the layouts no other layout beats on both step time and memory — joined
 * as a staircase and labelled with their plans; the best (most tokens/s)
 * ringed.  Only the front is labelled: hundreds of plans cannot be read.
 *
 * With --scale: tokens/s against nodes, every layout that fits as a dot,
 * the best layout per node count joined and labelled, and the linear
 * scaling of the smallest count's best as a dashed line to judge it by. */
#include <cairo-svg.h>
#include <math.h>
#include <string.h>

#include "sim-error.h"
#include "viz-private.h"
#include "viz-sweep.h"

#define MARGIN_L 96.0
#define MARGIN_R 40.0
#define MARGIN_T 112.0
#define MARGIN_B 72.0
/* the least distance between two labelled points of the front */
#define MIN_LABEL_GAP 36.0

typedef struct {
  double left, right, top, bottom; /* plot area, device units */
  double x0, x1, y0, y1;           /* data range */
} Plot;

static double
px (const Plot *p, double x)
{
  return p->left + (p->right - p->left) * (x - p->x0) / (p->x1 - p->x0);
}

static double
py (const Plot *p, double y)
{
  return p->bottom - (p->bottom - p->top) * (y - p->y0) / (p->y1 - p->y0);
}

/* a placed label's box, to keep the next ones off it */
typedef struct {
  double x0, y0, x1, y1;
} Box;

static gboolean
overlaps (const GArray *boxes, const Box *b)
{
  for (guint i = 0; i < boxes->len; i++) {
    const Box *o = &g_array_index (boxes, Box, i);
    if (b->x0 < o->x1 && o->x0 < b->x1 && b->y0 < o->y1 && o->y0 < b->y1)
      return TRUE;
  }
  return FALSE;
}

/* text beside the point (x, y): the first of a few places, then further
 * and further above and below, that overlaps no earlier label and stays
 * in the plot; a leader line when it lands away from the point */
static void
place_label (cairo_t *cr, const Plot *p, GArray *boxes, double x, double y, const char *text)
{
  double w = viz_text_width (cr, text), h = 13;
  Box b = { 0 };
  gboolean found = FALSE;
  /* right of the point, left of it, or (a label wider than either side
   * leaves) across it inside the image; then a line further up or down
   * each time */
  double limit = p->right + MARGIN_R + 180;
  for (int j = 0; j < 24 && !found; j++)
    for (int dir = 1; dir >= -1 && !found; dir -= 2)
      for (int side = 0; side < 3 && !found; side++) {
        double lx = side == 0   ? x + 9
                    : side == 1 ? x - 9 - w
                                : MAX (p->left + 4, MIN (x - w / 2, limit - 2 - w));
        double ly = y + 4 + dir * j * (h + 3);
        if (side == 2 && (j == 0 || x + 9 + w + 2 <= limit || x - 11 - w >= p->left + 2))
          continue; /* across the point only when neither side holds it, and off its line */
        b = (Box) { lx - 2, ly - h, lx + w + 2, ly + 3 };
        if (b.x0 < p->left + 2 || b.x1 > limit || b.y0 < p->top + 2 || b.y1 > p->bottom - 2)
          continue;
        found = !overlaps (boxes, &b);
      }
  if (!found) {
    /* beside the point, over what is there, but inside the image: on the
     * side the text fits, else from the plot's left edge */
    double lx = x + 9 + w + 2 <= limit ? x + 9 : MAX (p->left + 4, x - 9 - w);
    b = (Box) { lx - 2, y + 4 - h, lx + w + 2, y + 7 };
  }
  g_array_append_val (boxes, b);
  if (fabs ((b.y0 + b.y1) / 2 - y) > h) {
    cairo_set_source_rgb (cr, 0.6, 0.6, 0.6);
    cairo_set_line_width (cr, 0.8);
    cairo_move_to (cr, x, y);
    cairo_line_to (cr, b.x0 < x ? b.x1 : b.x0, (b.y0 + b.y1) / 2);
    cairo_stroke (cr);
  }
  /* a light backing: labels sit over the cloud of dots */
  cairo_set_source_rgba (cr, 1, 1, 1, 0.85);
  cairo_rectangle (cr, b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  viz_text (cr, b.x0 + 2, b.y1 - 3, 0, text);
}

/* the title, the line under it and the legend, one entry after another */
static void
draw_header (cairo_t *cr, const char *title, const char *what)
{
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  viz_font (cr, 17, TRUE);
  viz_text (cr, 16, 28, 0, title);
  viz_font (cr, 13, FALSE);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  viz_text (cr, 16, 50, 0, what);
}

static void
dot (cairo_t *cr, double x, double y, double r)
{
  cairo_new_sub_path (cr);
  cairo_arc (cr, x, y, r, 0, 2 * G_PI);
}

/* legend entries: a marker kind and its text, left to right at y */
enum { MARK_DOT, MARK_FRONT, MARK_BEST, MARK_LINE_RED, MARK_LINE_DASH };

static void
legend (cairo_t *cr, double y, const int *marks, const char *const *texts, int n)
{
  double x = 16;
  VizColor blue = viz_kind_color (SIM_SPAN_FORWARD), orange = viz_kind_color (SIM_SPAN_TP);
  viz_font (cr, 12, FALSE);
  for (int i = 0; i < n; i++) {
    double cx = x + 7, cy = y - 4;
    cairo_save (cr);
    switch (marks[i]) {
    case MARK_DOT:
      cairo_set_source_rgba (cr, 0.45, 0.45, 0.45, 0.55);
      dot (cr, cx, cy, 3.5);
      cairo_fill (cr);
      break;
    case MARK_FRONT:
      viz_set_color (cr, blue);
      dot (cr, cx, cy, 5);
      cairo_fill (cr);
      break;
    case MARK_BEST:
      viz_set_color (cr, orange);
      cairo_set_line_width (cr, 2.5);
      dot (cr, cx, cy, 7);
      cairo_stroke (cr);
      break;
    case MARK_LINE_RED:
      cairo_set_source_rgb (cr, 0.80, 0.15, 0.15);
      cairo_set_line_width (cr, 2);
      cairo_move_to (cr, x, cy);
      cairo_line_to (cr, x + 16, cy);
      cairo_stroke (cr);
      break;
    default:
      cairo_set_source_rgb (cr, 0.5, 0.5, 0.5);
      cairo_set_line_width (cr, 1.5);
      cairo_set_dash (cr, (double[]) { 5, 4 }, 2, 0);
      cairo_move_to (cr, x, cy);
      cairo_line_to (cr, x + 16, cy);
      cairo_stroke (cr);
      break;
    }
    cairo_restore (cr);
    cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
    viz_text (cr, x + 22, y, 0, texts[i]);
    x += 22 + viz_text_width (cr, texts[i]) + 22;
  }
}

/* grid lines and tick labels of both axes, and their names */
/* a vertical grid line at x with its tick label under the plot */
static void
x_gridline (cairo_t *cr, const Plot *p, double x, const char *label)
{
  cairo_set_source_rgb (cr, 0.88, 0.88, 0.88);
  cairo_move_to (cr, x, p->top);
  cairo_line_to (cr, x, p->bottom);
  cairo_stroke (cr);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  viz_text (cr, x, p->bottom + 18, 0.5, label);
}

static void
draw_axes (cairo_t *cr, const Plot *p, double xstep, double ystep, double yscale, const char *xname,
           const char *yname, gboolean x_nodes, const int *nodes, int n_nodes)
{
  cairo_set_line_width (cr, 1);
  viz_font (cr, 11.5, FALSE);
  for (double k = ceil (p->y0 / ystep - 1e-9); k * ystep <= p->y1 + 1e-9 * ystep; k++) {
    double v = k * ystep + 0.0, y = floor (py (p, v)) + 0.5;
    g_autofree char *t = viz_format_tick (v * yscale);
    cairo_set_source_rgb (cr, 0.88, 0.88, 0.88);
    cairo_move_to (cr, p->left, y);
    cairo_line_to (cr, p->right, y);
    cairo_stroke (cr);
    cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
    viz_text (cr, p->left - 8, y + 4, 1, t);
  }
  if (x_nodes) {
    for (int i = 0; i < n_nodes; i++) {
      g_autofree char *t = g_strdup_printf ("%d", nodes[i]);
      x_gridline (cr, p, floor (px (p, i)) + 0.5, t);
    }
  } else {
    for (double k = ceil (p->x0 / xstep - 1e-9); k * xstep <= p->x1 + 1e-9 * xstep; k++) {
      double v = k * xstep + 0.0;
      g_autofree char *t = viz_format_tick (v);
      x_gridline (cr, p, floor (px (p, v)) + 0.5, t);
    }
  }
  cairo_set_source_rgb (cr, 0.4, 0.4, 0.4);
  cairo_rectangle (cr, p->left + 0.5, p->top + 0.5, p->right - p->left, p->bottom - p->top);
  cairo_stroke (cr);
  viz_font (cr, 12.5, FALSE);
  cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
  viz_text (cr, (p->left + p->right) / 2, p->bottom + 44, 0.5, xname);
  cairo_save (cr);
  cairo_translate (cr, p->left - 62, (p->top + p->bottom) / 2);
  cairo_rotate (cr, -G_PI / 2);
  viz_text (cr, 0, 0, 0.5, yname);
  cairo_restore (cr);
}

/* the rows that a point stands for: simulated and fitting */
static gboolean
shown (const SimRunSummary *r)
{
  return r->has_time && r->fits && r->step_s > 0;
}

static const char *
label_of (const VizSweepInput *in, int i)
{
  return in->labels != NULL && in->labels[i] != NULL ? in->labels[i] : in->rows[i]->label;
}

static int
by_peak_then_time (gconstpointer a, gconstpointer b, gpointer data)
{
  const VizSweepInput *in = data;
  const SimRunSummary *x = in->rows[*(const int *) a], *y = in->rows[*(const int *) b];
  if (x->peak_bytes != y->peak_bytes)
    return x->peak_bytes < y->peak_bytes ? -1 : 1;
  return (x->step_s > y->step_s) - (x->step_s < y->step_s);
}

GArray *
viz_sweep_pareto (const VizSweepInput *in)
{
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (int));
  GArray *front = g_array_new (FALSE, FALSE, sizeof (int));
  double best_s = INFINITY;
  for (int i = 0; i < in->n; i++)
    if (shown (in->rows[i]))
      g_array_append_val (order, i);
  g_array_sort_with_data (order, by_peak_then_time, (gpointer) in);
  /* by memory, smallest first: a layout is on the front when it is faster
   * than every smaller one */
  for (guint k = 0; k < order->len; k++) {
    int i = g_array_index (order, int, k);
    if (in->rows[i]->step_s < best_s) {
      g_array_append_val (front, i);
      best_s = in->rows[i]->step_s;
    }
  }
  return front;
}

/* the best row shown: the first in the table's ranking (sim_run_summary_cmp) */
static int
best_row (const VizSweepInput *in)
{
  int best = -1;
  for (int i = 0; i < in->n; i++)
    if (shown (in->rows[i]) && (best < 0 || sim_run_summary_cmp (in->rows[i], in->rows[best]) < 0))
      best = i;
  return best;
}

static void
draw_empty (cairo_t *cr, double width, double height)
{
  viz_font (cr, 14, FALSE);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  viz_text (cr, width / 2, height / 2, 0.5, "no layout fits in GPU memory: nothing to draw");
}

static void
draw_memory_time (cairo_t *cr, double width, double height, const VizSweepInput *in)
{
  Plot p = { MARGIN_L, width - MARGIN_R - 190, MARGIN_T, height - MARGIN_B, 0, 1, 0, 1 };
  g_autoptr (GArray) front = viz_sweep_pareto (in);
  g_autoptr (GArray) boxes = g_array_new (FALSE, FALSE, sizeof (Box));
  g_autoptr (GArray) labelled = g_array_new (FALSE, FALSE, sizeof (double)); /* x, y of each */
  double tmin = INFINITY, tmax = 0, gmax = 0, usable = 0, ystep, xstep, yscale = 1;
  const char *unit = "s";
  g_autofree char *yname = NULL, *usable_t = NULL;
  int best = best_row (in);
  VizColor blue = viz_kind_color (SIM_SPAN_FORWARD), orange = viz_kind_color (SIM_SPAN_TP);
  static const int marks[] = { MARK_DOT, MARK_FRONT, MARK_BEST, MARK_LINE_RED };
  static const char *const texts[] = { "a layout that fits", "Pareto front: no layout both faster and smaller",
                                       "best: most tokens/s (tight ones last)",
                                       "usable memory per GPU (past it: tight, fits only without the fragmentation allowance)" };

  for (int i = 0; i < in->n; i++) {
    const SimRunSummary *r = in->rows[i];
    if (!shown (r))
      continue;
    tmin = MIN (tmin, r->step_s);
    tmax = MAX (tmax, r->step_s);
    gmax = MAX (gmax, r->peak_bytes / 1e9);
    usable = MAX (usable, r->usable_bytes / 1e9);
  }
  legend (cr, 78, marks, texts, G_N_ELEMENTS (marks));
  if (best < 0) {
    draw_empty (cr, width, height);
    return;
  }
  /* time from just under the fastest: the differences are what matter;
   * memory from zero, to the usable line */
  if (tmax < 1)
    viz_time_unit (tmax, &yscale, &unit);
  ystep = viz_tick_step (MAX (tmax - tmin, tmax * 0.02), 6);
  p.y0 = MAX (0, floor (tmin / ystep) * ystep - ystep / 2);
  p.y1 = ceil (tmax / ystep) * ystep + ystep / 2;
  p.x0 = 0;
  p.x1 = MAX (gmax, usable) * 1.06;
  xstep = viz_tick_step (p.x1, 10);
  yname = g_strdup_printf ("step time (%s)", unit);
  draw_axes (cr, &p, xstep, ystep, yscale, "peak memory per GPU (GB = 10^9 bytes)", yname,
             FALSE, NULL, 0);

  /* the usable memory */
  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.80, 0.15, 0.15);
  cairo_set_line_width (cr, 2);
  cairo_move_to (cr, floor (px (&p, usable)) + 0.5, p.top);
  cairo_line_to (cr, floor (px (&p, usable)) + 0.5, p.bottom);
  cairo_stroke (cr);
  viz_font (cr, 11.5, FALSE);
  usable_t = g_strdup_printf ("usable %.1f GB", usable);
  viz_text (cr, px (&p, usable) - 5, p.top + 14, 1, usable_t);
  g_array_append_val (boxes, ((Box) { px (&p, usable) - 9 - viz_text_width (cr, usable_t), p.top, px (&p, usable) + 2,
                                      p.top + 19 }));
  cairo_restore (cr);

  /* every layout, faint: where the front stands out from */
  cairo_set_source_rgba (cr, 0.45, 0.45, 0.45, 0.45);
  for (int i = 0; i < in->n; i++)
    if (shown (in->rows[i])) {
      dot (cr, px (&p, in->rows[i]->peak_bytes / 1e9), py (&p, in->rows[i]->step_s), 3.2);
      cairo_fill (cr);
    }

  /* the front: a staircase (a layout is best until a bigger one is faster) */
  viz_set_color (cr, blue);
  cairo_set_line_width (cr, 1.6);
  for (guint k = 0; k < front->len; k++) {
    const SimRunSummary *r = in->rows[g_array_index (front, int, k)];
    double x = px (&p, r->peak_bytes / 1e9), y = py (&p, r->step_s);
    if (k == 0)
      cairo_move_to (cr, x, y);
    else
      cairo_line_to (cr, x, y);
    if (k + 1 < front->len)
      cairo_line_to (cr, px (&p, in->rows[g_array_index (front, int, k + 1)]->peak_bytes / 1e9), y);
  }
  cairo_stroke (cr);
  for (guint k = 0; k < front->len; k++) {
    const SimRunSummary *r = in->rows[g_array_index (front, int, k)];
    dot (cr, px (&p, r->peak_bytes / 1e9), py (&p, r->step_s), 5);
    cairo_fill (cr);
  }
  /* the points themselves are kept clear of labels */
  for (guint k = 0; k < front->len; k++) {
    const SimRunSummary *r = in->rows[g_array_index (front, int, k)];
    double x = px (&p, r->peak_bytes / 1e9), y = py (&p, r->step_s);
    g_array_append_val (boxes, ((Box) { x - 6, y - 6, x + 6, y + 6 }));
  }
  viz_set_color (cr, orange);
  cairo_set_line_width (cr, 2.5);
  dot (cr, px (&p, in->rows[best]->peak_bytes / 1e9), py (&p, in->rows[best]->step_s), 9);
  cairo_stroke (cr);

  /* the front's plans, fastest first so that the best gets the best place;
   * a point close to one labelled already is left unlabelled: a long front
   * packs its points tight, and a thicket of leader lines reads as nothing */
  viz_font (cr, 11.5, FALSE);
  for (int k = (int) front->len - 1; k >= 0; k--) {
    int i = g_array_index (front, int, k);
    const SimRunSummary *r = in->rows[i];
    double x = px (&p, r->peak_bytes / 1e9), y = py (&p, r->step_s);
    gboolean near = FALSE;
    g_autofree char *t = NULL;
    for (guint q = 0; q < labelled->len; q += 2)
      near |= hypot (g_array_index (labelled, double, q) - x, g_array_index (labelled, double, q + 1) - y) < MIN_LABEL_GAP;
    /* the smallest layout is always named: it is the one a tight booking asks for */
    if (near && k > 0)
      continue;
    g_array_append_val (labelled, x);
    g_array_append_val (labelled, y);
    t = g_strdup_printf ("%s%s  (%.1f GB%s, %.3g %s)", i == best ? "best: " : "", label_of (in, i), r->peak_bytes / 1e9,
                         r->tight ? " tight" : "", r->step_s * yscale, unit);
    place_label (cr, &p, boxes, x, y, t);
  }
}

static void
draw_scaling (cairo_t *cr, double width, double height, const VizSweepInput *in)
{
  Plot p = { MARGIN_L, width - MARGIN_R - 190, MARGIN_T, height - MARGIN_B, -0.5, 0.5, 0, 1 };
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GArray) bests = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GArray) boxes = g_array_new (FALSE, FALSE, sizeof (Box));
  double tmax = 0, ystep, yscale = 1e-3;
  VizColor blue = viz_kind_color (SIM_SPAN_FORWARD);
  static const int marks[] = { MARK_DOT, MARK_FRONT, MARK_LINE_DASH };
  static const char *const texts[] = { "a layout that fits", "the best layout on each node count",
                                       "linear scaling of the fewest nodes' best" };

  for (int i = 0; i < in->n; i++) {
    const SimRunSummary *r = in->rows[i];
    guint k = 0;
    if (!shown (r))
      continue;
    while (k < nodes->len && g_array_index (nodes, int, k) < r->nodes)
      k++;
    if (k == nodes->len || g_array_index (nodes, int, k) != r->nodes) {
      g_array_insert_val (nodes, k, r->nodes);
      g_array_insert_val (bests, k, i);
    } else if (r->tokens_per_s > in->rows[g_array_index (bests, int, k)]->tokens_per_s) {
      g_array_index (bests, int, k) = i;
    }
    tmax = MAX (tmax, r->tokens_per_s);
  }
  legend (cr, 78, marks, texts, G_N_ELEMENTS (marks));
  if (nodes->len == 0) {
    draw_empty (cr, width, height);
    return;
  }
  p.x1 = nodes->len - 0.5;
  ystep = viz_tick_step (tmax * 1.1, 7);
  p.y1 = ceil (tmax * 1.1 / ystep) * ystep;
  draw_axes (cr, &p, 1, ystep, yscale, "nodes", "throughput (thousand tokens/s)", TRUE, (int *) nodes->data,
             (int) nodes->len);

  /* linear scaling from the fewest nodes' best, up to the top of the plot */
  {
    const SimRunSummary *r0 = in->rows[g_array_index (bests, int, 0)];
    int n0 = g_array_index (nodes, int, 0);
    cairo_save (cr);
    cairo_rectangle (cr, p.left, p.top, p.right - p.left, p.bottom - p.top);
    cairo_clip (cr);
    cairo_set_source_rgb (cr, 0.5, 0.5, 0.5);
    cairo_set_line_width (cr, 1.5);
    cairo_set_dash (cr, (double[]) { 5, 4 }, 2, 0);
    for (guint k = 0; k < nodes->len; k++) {
      double y = py (&p, r0->tokens_per_s * g_array_index (nodes, int, k) / n0);
      if (k == 0)
        cairo_move_to (cr, px (&p, 0), y);
      else
        cairo_line_to (cr, px (&p, k), y);
    }
    cairo_stroke (cr);
    cairo_restore (cr);
  }
  cairo_set_source_rgba (cr, 0.45, 0.45, 0.45, 0.45);
  for (int i = 0; i < in->n; i++) {
    const SimRunSummary *r = in->rows[i];
    guint k = 0;
    if (!shown (r))
      continue;
    while (g_array_index (nodes, int, k) != r->nodes)
      k++;
    /* a fixed jitter by row, so that a column of layouts shows its density */
    dot (cr, px (&p, k) + (double) ((i * 37) % 17 - 8), py (&p, r->tokens_per_s), 3.2);
    cairo_fill (cr);
  }
  viz_set_color (cr, blue);
  cairo_set_line_width (cr, 1.8);
  for (guint k = 0; k < nodes->len; k++) {
    const SimRunSummary *r = in->rows[g_array_index (bests, int, k)];
    if (k == 0)
      cairo_move_to (cr, px (&p, k), py (&p, r->tokens_per_s));
    else
      cairo_line_to (cr, px (&p, k), py (&p, r->tokens_per_s));
  }
  cairo_stroke (cr);
  for (guint k = 0; k < nodes->len; k++) {
    const SimRunSummary *r = in->rows[g_array_index (bests, int, k)];
    double x = px (&p, k), y = py (&p, r->tokens_per_s);
    dot (cr, x, y, 5);
    cairo_fill (cr);
    g_array_append_val (boxes, ((Box) { x - 6, y - 6, x + 6, y + 6 }));
  }
  viz_font (cr, 11.5, FALSE);
  for (guint k = 0; k < nodes->len; k++) {
    int i = g_array_index (bests, int, k);
    const SimRunSummary *r = in->rows[i];
    g_autofree char *t = NULL;
    t = isnan (r->e) ? g_strdup_printf ("%s  (%.3g k tokens/s)", label_of (in, i), r->tokens_per_s / 1e3)
                     : g_strdup_printf ("%s  (%.3g k tokens/s, E %.2f)", label_of (in, i), r->tokens_per_s / 1e3,
                                        r->e);
    place_label (cr, &p, boxes, px (&p, k), py (&p, r->tokens_per_s), t);
  }
}

void
viz_sweep_draw (cairo_t *cr, double width, double height, const VizSweepInput *in)
{
  cairo_save (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  draw_header (cr, in->title != NULL ? in->title : "sim sweep",
               in->scale ? "throughput of each simulated layout that fits against the nodes it takes; the best "
                           "on each node count joined and labelled with its plan"
                         : "step time of each simulated layout that fits against its peak memory per GPU; the "
                           "Pareto front of those joined and labelled with its plans");
  if (in->scale)
    draw_scaling (cr, width, height, in);
  else
    draw_memory_time (cr, width, height, in);
  cairo_restore (cr);
}

static cairo_status_t
append_to_string (void *closure, const unsigned char *data, unsigned int len)
{
  g_string_append_len (closure, (const char *) data, (gssize) len);
  return CAIRO_STATUS_SUCCESS;
}

char *
viz_sweep_svg (const VizSweepInput *in, GError **error)
{
  g_autoptr (GString) svg = g_string_new (NULL);
  cairo_surface_t *surface =
      cairo_svg_surface_create_for_stream (append_to_string, svg, VIZ_SWEEP_WIDTH, VIZ_SWEEP_HEIGHT);
  cairo_t *cr = cairo_create (surface);
  cairo_status_t st;

  viz_sweep_draw (cr, VIZ_SWEEP_WIDTH, VIZ_SWEEP_HEIGHT, in);
  st = cairo_status (cr);
  cairo_destroy (cr);
  /* the document is only whole once the surface is finished */
  cairo_surface_finish (surface);
  if (st == CAIRO_STATUS_SUCCESS)
    st = cairo_surface_status (surface);
  cairo_surface_destroy (surface);
  if (st != CAIRO_STATUS_SUCCESS) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "sweep chart: cannot draw: %s", cairo_status_to_string (st));
    return NULL;
  }
  return g_string_free (g_steal_pointer (&svg), FALSE);
}
