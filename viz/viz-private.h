/* viz-private.h — helpers shared by the chart files.  None fails; the text
 * functions return new strings (caller g_free()s); the drawing ones write
 * to cr only, so any thread with its own cairo_t. */
#pragma once

#include "viz.h"

void viz_set_color (cairo_t *cr, VizColor c);
void viz_font (cairo_t *cr, double size, gboolean bold);
double viz_text_width (cairo_t *cr, const char *text);
void viz_text (cairo_t *cr, double x, double y, double align, const char *text);
double viz_tick_step (double hi, int want);
void viz_time_unit (double span_s, double *scale, const char **unit);
char *viz_format_tick (double v);
char *viz_title (const VizInput *in);
/* "stages shown: 0, 3, 7 of 8" when rows (int stage numbers) leaves some of
 * the plan's pipeline stages out, else NULL */
char *viz_stages_shown (const VizInput *in, const GArray *rows);
/* the Gantt and memory charts' zoom: whether a plot plot_w wide needs the
 * warm-up and cool-down windows under the whole step, and where they end
 * (warm-up: [0, warm_end]) and start (cool-down: [cool_start, step]) */
gboolean viz_zoom_wanted (const VizInput *in, double plot_w);
void viz_zoom_windows (const VizInput *in, SimTime *warm_end, SimTime *cool_start);
/* the memory chart's height for these panels at this width, with the
 * zoomed windows when viz_zoom_wanted() */
double viz_memory_height_for (const VizInput *in, int panels, double width);
