/* viz-compare.h — the comparison chart of sim compare and sim sweep: one
 * bar per layout split into compute, exposed communication by kind and the
 * pipeline bubble, and a gauge of peak memory against the usable capacity. */
#pragma once

#include <cairo.h>

#include "sim-run.h"

G_BEGIN_DECLS

void viz_compare_draw (cairo_t *cr, double width, double height, const SimRun *const *runs, int n,
                       const char *title);
double viz_compare_height (int n);

G_END_DECLS
