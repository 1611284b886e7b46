/* viz-file.h — the harness: surfaces and files for the charts.
 * The format follows the file name: .png, .svg or .pdf.  A chart is drawn
 * to a temporary file in the same directory and renamed over the target,
 * so an interrupted run never leaves half a chart. */
#pragma once

#include "viz.h"
#include "viz-compare.h"

G_BEGIN_DECLS

typedef enum { VIZ_CHART_GANTT, VIZ_CHART_MEMORY } VizChart;

/* FALSE with SIM_ERROR_USAGE (a name not ending in .png, .svg or .pdf) or
 * SIM_ERROR_IO ("PATH: cannot write: ..."); any thread, one writer per
 * path */
gboolean viz_write_chart (const char *path, VizChart chart, const VizInput *in, GError **error);

/* the comparison chart of several layouts; the same errors and threads */
gboolean viz_write_compare (const char *path, const SimRun *const *runs, int n, const char *title,
                            GError **error);

G_END_DECLS
