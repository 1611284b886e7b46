/* viz-html.h — one self-contained HTML page of a result (sim --html,
 * sim compare --html, sim sweep --html).
 *
 * The page needs no network and no JavaScript: its style is embedded, its
 * charts are inline SVG drawn by the same viz_*_draw functions as the
 * chart files (viz-file.h), and a Content-Security-Policy forbids every
 * resource that is not in the page.  Its text is the report's own
 * (sim_report_section), or what the caller hands in, escaped (&, <, >, ",
 * ').  The same result gives the same bytes: no date, and the SVG ids are
 * numbered per chart in page order.
 *
 * A page is built in order with viz_html_* and staged like any other
 * output (sim-io.h).  One thread per page. */
#pragma once

#include <glib.h>

#include "sim-io.h"
#include "viz-file.h"
#include "viz-sweep.h"
#include "viz.h"

G_BEGIN_DECLS

typedef struct _VizHtml VizHtml;

/* whether path names an HTML file: FALSE with SIM_ERROR_USAGE ("PATH:
 * expected a file name ending in .html"); any thread */
gboolean viz_check_html_path (const char *path, GError **error);

/* an empty page whose title and first heading are title (free with
 * viz_html_free); never fails */
VizHtml *viz_html_new (const char *title);
void viz_html_free (VizHtml *page);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VizHtml, viz_html_free)

/* a section heading */
void viz_html_heading (VizHtml *page, const char *text);
/* text as it is printed on a terminal (column-aligned tables, wrapped
 * lines), in a box of the given class: "verdict-fits", "verdict-oom",
 * "verdict-tight", "band", "warning" or NULL for none; blank lines at
 * either end are dropped and empty text adds nothing */
void viz_html_text (VizHtml *page, const char *klass, const char *text);
/* a chart of a run, or the comparison chart of several, as inline SVG
 * with a caption: FALSE with the errors of viz_chart_svg, the page
 * unchanged */
gboolean viz_html_chart (VizHtml *page, VizChart chart, const VizInput *in, const char *caption,
                         GError **error);
gboolean viz_html_compare (VizHtml *page, const SimRun *const *runs, int n, const char *title,
                           const char *caption, GError **error);
/* the sweep chart (viz-sweep.h) with a caption: FALSE with the errors of
 * viz_sweep_svg, the page unchanged */
gboolean viz_html_sweep (VizHtml *page, const VizSweepInput *in, const char *caption, GError **error);
/* the page, finished, staged in set for path: FALSE with the errors of
 * viz_check_html_path and sim_output_set_add; the page may take nothing
 * more */
gboolean viz_html_stage (VizHtml *page, SimOutputSet *set, const char *path, GError **error);

/* the report page of one run: the title, the verdict, the cluster, model,
 * plan and defaults, the step time with its error band, the time table,
 * the time to train, the diagnosis, the Gantt chart (when there is a
 * time), the memory table and capacity and the memory chart; the
 * sections of sim_report_section, at most 100 columns.  FALSE with the
 * errors of viz_html_chart and viz_html_stage. */
gboolean viz_stage_html_report (SimOutputSet *set, const char *path, const VizInput *in,
                                GError **error);

/* the page of sim compare and sim sweep; every string is only read */
typedef struct {
  const char *title;             /* the first line the command prints */
  const char *table;             /* the ranked table, as printed */
  const VizSweepInput *sweep;    /* the sweep chart (sim sweep), or NULL */
  const SimRun *const *runs;     /* the comparison chart of n_runs layouts; none: no chart */
  int n_runs;
  const char *runs_title;        /* the comparison chart's title */
  const char *notes_heading;
  const char *notes;             /* as printed, under notes_heading; NULL or empty: none */
} VizHtmlTable;

/* the table page: the title, the ranked table, the sweep chart, the
 * comparison chart and the notes, in that order.  FALSE with the errors
 * of viz_html_sweep, viz_html_compare and viz_html_stage. */
gboolean viz_stage_html_table (SimOutputSet *set, const char *path, const VizHtmlTable *t, GError **error);

G_END_DECLS
