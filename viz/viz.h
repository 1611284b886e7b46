/* viz.h — charts of a finished run, drawn with Cairo.
 *
 * Every draw function takes a cairo_t (any surface: PNG image, SVG, PDF)
 * and reads a finished result; none touches files or the engine.  The
 * harness (viz-file.h) owns surfaces and files.  Nothing here fails (a
 * Cairo error stays in the cairo_t's status), and every function may run
 * on any thread, each with its own cairo_t.
 *
 * Colours are the same in every chart, one per kind of work:
 *   forward, backward, recomputation, TP, CP, PP, DP communication,
 *   optimizer step, and idle (the pipeline bubble).
 */
#pragma once

#include <cairo.h>
#include <glib.h>

#include "sim-iteration.h"
#include "sim-run.h"
#include "sim-memory.h"
#include "sim-model.h"
#include "sim-plan.h"
#include "sim-topology.h"

G_BEGIN_DECLS

typedef struct {
  double r, g, b;
} VizColor;

typedef struct {
  const SimRun *run;          /* its time may be NULL for the memory chart */
  const int *stages;          /* rows / panels to show, NULL for the default */
  int n_stages;
} VizInput;

/* the colour of a span kind (SIM_SPAN_GATE is idle); pure */
VizColor viz_kind_color (SimSpanKind kind);
VizColor viz_idle_color (void);

/* memory categories, bottom to top of the stack */
typedef enum {
  VIZ_MEM_WORKSPACE, VIZ_MEM_PARAMS, VIZ_MEM_GRADS, VIZ_MEM_MASTER, VIZ_MEM_OPTIMIZER,
  VIZ_MEM_ACCUM, VIZ_MEM_BUFFERS, VIZ_MEM_ACTIVATIONS, VIZ_MEM_COUNT
} VizMemCategory;
/* its colour, and its legend name (a static string) */
VizColor viz_memory_color (VizMemCategory c);
const char *viz_memory_name (VizMemCategory c);

/* the stages shown by default: all when few, else the first, the last,
 * the peak-memory stage and evenly spaced others: max_rows, plus the peak
 * stage when the spacing misses it (in->stages when given).  Returns a new
 * array of int (caller g_array_unref()s). */
GArray *viz_default_stages (const VizInput *in, int max_rows);

/* Gantt chart: one row per stage shown, a compute lane and three
 * communication lanes (TP/CP, PP, DP), a time axis, a legend and a title
 * with the plan and the headline figures.  Size in device units. */
void viz_gantt_draw (cairo_t *cr, double width, double height, const VizInput *in);
/* the height the Gantt chart wants for this many rows (and, when the
 * blocks of the whole step are too thin to read, for the zoomed windows of
 * the warm-up and the cool-down drawn under it) */
double viz_gantt_height_for (const VizInput *in, int rows, double width);

/* memory over the iteration: one panel per stage shown, stacked by
 * category, with capacity and usable lines and the peak marked */
void viz_memory_draw (cairo_t *cr, double width, double height, const VizInput *in);
double viz_memory_height (int panels);

/* layout geometry the tests need: the x of time t and the y band of a row */
typedef struct {
  double left, right, top;     /* plot area */
  double row_h, lane_compute_h, lane_h;
  double t_end_s;
} VizGanttLayout;
void viz_gantt_layout (double width, double height, const VizInput *in, int rows,
                       VizGanttLayout *out);

/* the chart of a sweep (sim sweep --chart): the rows that fit and have a
 * time, as step time against peak memory per GPU with the usable memory and
 * the Pareto front labelled (scale FALSE), or as tokens/s against nodes with
 * the best layout per node count labelled (scale TRUE) */
typedef struct {
  const SimRunSummary *const *rows; /* n rows, any order, only read */
  int n;
  const char *const *labels;        /* the plans as labelled, per row; NULL: the rows' plans */
  gboolean scale;
  const char *title;
} VizSweepInput;
void viz_sweep_draw (cairo_t *cr, double width, double height, const VizSweepInput *in);
/* the Pareto front of in: the indices of the rows that fit, have a time
 * and are faster than every row that uses less memory (smallest memory
 * first); a new array of int (caller g_array_unref()s); pure */
GArray *viz_sweep_pareto (const VizSweepInput *in);

G_END_DECLS
