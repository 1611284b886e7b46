/* viz-html.c — the self-contained HTML page: escaped text in boxes and
 * the Cairo charts as inline SVG */
#include "viz-html.h"

#include <string.h>

#include "sim-error.h"
#include "sim-report.h"

struct _VizHtml {
  GString *body;
  char *title;
  int charts;      /* numbers the ids of each chart's SVG */
};

/* readable without a browser's defaults: text in 100-column boxes;
 * charts at their drawn width (1600) where the window allows, never
 * shrunk so far that their labels cannot be read (they scroll instead) */
static const char *const style =
    "body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;color:#1b1b1b;background:#fff;"
    "margin:24px auto;max-width:1640px;padding:0 16px;line-height:1.4}\n"
    "h1{font-size:22px;margin:0 0 16px}\n"
    "h2{font-size:17px;margin:28px 0 8px;padding-bottom:3px;border-bottom:1px solid #ccc}\n"
    "pre{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:13px;line-height:1.35;"
    "margin:8px 0;padding:8px 10px;overflow-x:auto;background:#f7f7f7;border-left:4px solid #ddd}\n"
    "pre.verdict-fits{background:#eef8ee;border-left-color:#2e7d32}\n"
    "pre.verdict-tight{background:#fff6e5;border-left-color:#e08a00}\n"
    "pre.verdict-oom{background:#fdecec;border-left-color:#c62828;border-left-width:8px}\n"
    "pre.band{background:#eef3fb;border-left-color:#3060b0}\n"
    "pre.warning{background:#fff6e5;border-left-color:#e08a00}\n"
    "figure{margin:12px 0;overflow-x:auto}\n"
    "figure svg{display:block;box-sizing:border-box;width:100%;min-width:1100px;height:auto;border:1px solid #ddd}\n"
    "figcaption{font-size:13px;color:#555;margin-top:4px}\n";

/* text escaped for an element or a quoted attribute */
static void
append_escaped (GString *out, const char *text)
{
  for (const char *c = text; *c != '\0'; c++) {
    switch (*c) {
    case '&':
      g_string_append (out, "&amp;");
      break;
    case '<':
      g_string_append (out, "&lt;");
      break;
    case '>':
      g_string_append (out, "&gt;");
      break;
    case '"':
      g_string_append (out, "&quot;");
      break;
    case '\'':
      g_string_append (out, "&#39;");
      break;
    default:
      g_string_append_c (out, *c);
    }
  }
}

gboolean
viz_check_html_path (const char *path, GError **error)
{
  if (!g_str_has_suffix (path, ".html")) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected a file name ending in .html", path);
    return FALSE;
  }
  return TRUE;
}

VizHtml *
viz_html_new (const char *title)
{
  VizHtml *page = g_new0 (VizHtml, 1);
  page->body = g_string_new (NULL);
  page->title = g_strdup (title);
  g_string_append (page->body, "<h1>");
  append_escaped (page->body, title);
  g_string_append (page->body, "</h1>\n");
  return page;
}

void
viz_html_free (VizHtml *page)
{
  if (page == NULL)
    return;
  g_string_free (page->body, TRUE);
  g_free (page->title);
  g_free (page);
}

void
viz_html_heading (VizHtml *page, const char *text)
{
  g_string_append (page->body, "<h2>");
  append_escaped (page->body, text);
  g_string_append (page->body, "</h2>\n");
}

void
viz_html_text (VizHtml *page, const char *klass, const char *text)
{
  gsize start = 0, end = strlen (text);

  /* the report's sections open with a blank line that separates them on
   * a terminal; a box separates them here */
  while (start < end && text[start] == '\n')
    start++;
  while (end > start && text[end - 1] == '\n')
    end--;
  if (start == end)
    return;
  {
    g_autofree char *kept = g_strndup (text + start, end - start);
    g_auto (GStrv) lines = g_strsplit (kept, "\n", -1);
    gsize indent = G_MAXSIZE;
    /* a box needs no margin of its own: the indent every line shares
     * goes (the error band's lines continue the time's label column) */
    for (guint i = 0; lines[i] != NULL; i++)
      if (lines[i][0] != '\0')
        indent = MIN (indent, strspn (lines[i], " "));
    g_string_append (page->body, "<pre");
    if (klass != NULL)
      g_string_append_printf (page->body, " class=\"%s\"", klass);
    g_string_append_c (page->body, '>');
    for (guint i = 0; lines[i] != NULL; i++) {
      if (i > 0)
        g_string_append_c (page->body, '\n');
      append_escaped (page->body, lines[i][0] != '\0' ? lines[i] + indent : lines[i]);
    }
    g_string_append (page->body, "</pre>\n");
  }
}

/* Cairo's SVG document as an element of the page: without its XML
 * declaration, and with every id (glyphs, clips, surfaces: numbered from 1
 * in each document) and every reference to one prefixed by the chart's
 * number, since ids are shared by the whole page */
static void
append_svg (VizHtml *page, const char *svg)
{
  static const char *const refs[] = { " id=\"", "href=\"#", "url(#" };
  g_autofree char *prefix = g_strdup_printf ("chart%d-", ++page->charts);
  const char *c = strstr (svg, "<svg");

  if (c == NULL)
    return;
  while (*c != '\0') {
    gboolean matched = FALSE;
    for (guint k = 0; k < G_N_ELEMENTS (refs) && !matched; k++) {
      gsize len = strlen (refs[k]);
      if (strncmp (c, refs[k], len) == 0) {
        g_string_append_len (page->body, c, (gssize) len);
        g_string_append (page->body, prefix);
        c += len;
        matched = TRUE;
      }
    }
    if (!matched)
      g_string_append_c (page->body, *c++);
  }
  if (page->body->str[page->body->len - 1] != '\n')
    g_string_append_c (page->body, '\n');
}

static void
append_figure (VizHtml *page, const char *svg, const char *caption)
{
  g_string_append (page->body, "<figure>\n");
  append_svg (page, svg);
  if (caption != NULL) {
    g_string_append (page->body, "<figcaption>");
    append_escaped (page->body, caption);
    g_string_append (page->body, "</figcaption>\n");
  }
  g_string_append (page->body, "</figure>\n");
}

/* a chart drawn by one of the viz_*_svg functions (NULL: it failed, the
 * error set), taken */
static gboolean
take_figure (VizHtml *page, char *svg, const char *caption)
{
  g_autofree char *owned = svg;
  if (owned == NULL)
    return FALSE;
  append_figure (page, owned, caption);
  return TRUE;
}

gboolean
viz_html_chart (VizHtml *page, VizChart chart, const VizInput *in, const char *caption,
                GError **error)
{
  return take_figure (page, viz_chart_svg (chart, in, error), caption);
}

gboolean
viz_html_compare (VizHtml *page, const SimRun *const *runs, int n, const char *title,
                  const char *caption, GError **error)
{
  return take_figure (page, viz_compare_svg (runs, n, title, error), caption);
}

gboolean
viz_html_sweep (VizHtml *page, const VizSweepInput *in, const char *caption, GError **error)
{
  return take_figure (page, viz_sweep_svg (in, error), caption);
}

gboolean
viz_html_stage (VizHtml *page, SimOutputSet *set, const char *path, GError **error)
{
  g_autoptr (GString) doc = g_string_new (NULL);

  if (!viz_check_html_path (path, error))
    return FALSE;
  /* default-src 'none': the page can load nothing, so it shows the same
   * offline as online */
  g_string_append (doc, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                        "style-src 'unsafe-inline'\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                        "<title>");
  append_escaped (doc, page->title);
  g_string_append_printf (doc, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
  g_string_append_len (doc, page->body->str, (gssize) page->body->len);
  g_string_append (doc, "</body>\n</html>\n");
  return sim_output_set_add (set, path, doc->str, (gssize) doc->len, error);
}

/* the text of one section of the run's report, at most 100 columns */
static void
section (VizHtml *page, const SimRun *run, SimReportSection s, const char *klass)
{
  g_autofree char *text = sim_report_section (run, s, FALSE);
  viz_html_text (page, klass, text);
}

gboolean
viz_stage_html_report (SimOutputSet *set, const char *path, const VizInput *in, GError **error)
{
  const SimRun *run = in->run;
  const SimMemory *mem = run->memory;
  g_autofree char *title = sim_report_section (run, SIM_REPORT_TITLE, FALSE);
  g_autoptr (VizHtml) page = viz_html_new (g_strstrip (title));
  const char *verdict = mem->tight ? "verdict-tight" : mem->fits ? "verdict-fits" : "verdict-oom";

  if (!viz_check_html_path (path, error))
    return FALSE;
  /* the answer first, as on the terminal the verdict precedes the time */
  section (page, run, SIM_REPORT_WARNINGS, "warning");
  section (page, run, SIM_REPORT_VERDICT, verdict);
  viz_html_heading (page, "Cluster, model and plan");
  section (page, run, SIM_REPORT_SETUP, NULL);
  if (run->time != NULL) {
    viz_html_heading (page, "Step time");
    section (page, run, SIM_REPORT_TIME, NULL);
    section (page, run, SIM_REPORT_ERROR_BAND, "band");
    section (page, run, SIM_REPORT_TIME_TABLE, NULL);
    section (page, run, SIM_REPORT_CRITICAL_PATH, NULL);
  }
  section (page, run, SIM_REPORT_TRAIN, NULL);
  {
    g_autofree char *diagnosis = sim_report_section (run, SIM_REPORT_DIAGNOSIS, FALSE);
    if (*diagnosis != '\0') {
      viz_html_heading (page, "Diagnosis");
      viz_html_text (page, NULL, diagnosis);
    }
  }
  if (run->time != NULL) {
    viz_html_heading (page, "Gantt chart");
    if (!viz_html_chart (page, VIZ_CHART_GANTT, in, "one row per pipeline stage shown: compute and "
                         "the TP/CP, PP and DP communication lanes over the step", error))
      return FALSE;
  }
  viz_html_heading (page, "Memory per GPU");
  section (page, run, SIM_REPORT_MEMORY, NULL);
  section (page, run, SIM_REPORT_CAPACITY, NULL);
  if (!viz_html_chart (page, VIZ_CHART_MEMORY, in,
                       run->time != NULL ? "memory over the step, by category, against the usable capacity"
                                         : "memory by pipeline stage, by category, against the usable capacity",
                       error))
    return FALSE;
  if (run->time != NULL) {
    /* what the step time is built from, last: sim kernels for this plan */
    g_autofree char *kernels = sim_report_kernels (run->model, run->plan,
                                                   sim_topology_gpu_type (run->topo, 0));
    viz_html_heading (page, "Kernels of one layer");
    viz_html_text (page, NULL, kernels);
  }
  return viz_html_stage (page, set, path, error);
}

gboolean
viz_stage_html_table (SimOutputSet *set, const char *path, const VizHtmlTable *t, GError **error)
{
  g_autoptr (VizHtml) page = viz_html_new (t->title);

  viz_html_heading (page, "Ranked layouts");
  viz_html_text (page, NULL, t->table);
  /* every layout at a glance before the few the table ranks first */
  if (t->sweep != NULL) {
    viz_html_heading (page, t->sweep->scale ? "Throughput against nodes, every layout that fits"
                                            : "Step time against memory, every layout that fits");
    if (!viz_html_sweep (page, t->sweep,
                         t->sweep->scale ? "one dot per layout that fits; the best layout on each node count "
                                           "joined and labelled with its plan, and dashed, the linear scaling "
                                           "of the fewest nodes' best"
                                         : "one dot per layout that fits; the Pareto front (no layout both "
                                           "faster and smaller) joined and labelled with its plans, the best "
                                           "ringed, and the usable memory per GPU as a red line",
                         error))
      return FALSE;
  }
  if (t->n_runs > 0) {
    viz_html_heading (page, "Where each step's time goes");
    if (!viz_html_compare (page, t->runs, t->n_runs, t->runs_title,
                           "one bar per layout: compute, exposed communication by kind and the "
                           "pipeline bubble, with peak memory against the usable capacity",
                           error))
      return FALSE;
  }
  if (t->notes != NULL && *t->notes != '\0') {
    viz_html_heading (page, t->notes_heading);
    viz_html_text (page, NULL, t->notes);
  }
  return viz_html_stage (page, set, path, error);
}
