/* viz-compare.h — the comparison chart of sim compare and sim sweep: one
 * bar per layout split into compute, exposed communication by kind and the
 * pipeline bubble, and a gauge of peak memory against the usable capacity. */
#pragma once

#include <cairo.h>

#include "sim-run.h"

G_BEGIN_DECLS

/* draws runs[0..n) (finished SimRuns, only read) on cr; never fails (a
 * Cairo error stays in cr's status); any thread, one cairo_t each */
void viz_compare_draw (cairo_t *cr, double width, double height, const SimRun *const *runs, int n,
                       const char *title);
/* the height the chart wants for n layouts; pure */
double viz_compare_height (int n);

G_END_DECLS
