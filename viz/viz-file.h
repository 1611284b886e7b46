/* viz-file.h — the harness: surfaces and files for the charts.
 * The format follows the file name: .png, .svg or .pdf.  A chart is drawn
 * through a stream into a file staged in a SimOutputSet (sim-io.h), so it
 * appears whole, with the set's other outputs, or not at all; every write
 * of the surface is checked.  A PDF's creation date is SOURCE_DATE_EPOCH
 * when that is set, else 1970-01-01T00:00:00Z, so two runs give the same
 * bytes. */
#pragma once

#include "sim-io.h"
#include "viz.h"
#include "viz-compare.h"

G_BEGIN_DECLS

typedef enum { VIZ_CHART_GANTT, VIZ_CHART_MEMORY } VizChart;

/* whether path names a chart format: FALSE with SIM_ERROR_USAGE ("PATH:
 * expected a file name ending in .png, .svg or .pdf"); any thread */
gboolean viz_check_chart_path (const char *path, GError **error);

/* draw a chart into a file staged in set for path: FALSE with
 * SIM_ERROR_USAGE (the name, as above) or SIM_ERROR_IO ("PATH: cannot
 * write: ..."); the set may then hold part of the chart and is to be
 * aborted; one thread per set */
gboolean viz_stage_chart (SimOutputSet *set, const char *path, VizChart chart, const VizInput *in,
                          GError **error);
/* the comparison chart of several layouts; the same errors and threads */
gboolean viz_stage_compare (SimOutputSet *set, const char *path, const SimRun *const *runs, int n,
                            const char *title, GError **error);
/* the sweep chart (viz.h: viz_sweep_draw); the same errors and threads */
gboolean viz_stage_sweep (SimOutputSet *set, const char *path, const VizSweepInput *in, GError **error);

/* the same charts as SVG documents in memory, for a page that holds them
 * (viz-html.h): new text (caller g_free()s), or NULL with SIM_ERROR_IO
 * when Cairo fails (out of memory); any thread */
char *viz_chart_svg (VizChart chart, const VizInput *in, GError **error);
char *viz_compare_svg (const SimRun *const *runs, int n, const char *title, GError **error);

G_END_DECLS
