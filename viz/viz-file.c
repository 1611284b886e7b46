#include "viz-file.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <stdlib.h>

#include "sim-error.h"
#include "viz-private.h"

#define GANTT_WIDTH 1600.0
#define MEMORY_WIDTH 1400.0
#define SWEEP_WIDTH 1400.0
#define SWEEP_HEIGHT 820.0

static int
n_rows (VizChart chart, const VizInput *in)
{
  g_autoptr (GArray) rows = viz_default_stages (in, chart == VIZ_CHART_GANTT ? 32 : 4);
  return (int) rows->len;
}

static void
draw (cairo_t *cr, VizChart chart, double w, double h, const VizInput *in)
{
  if (chart == VIZ_CHART_GANTT)
    viz_gantt_draw (cr, w, h, in);
  else
    viz_memory_draw (cr, w, h, in);
}

typedef void (*DrawFunc) (cairo_t *cr, double w, double h, gconstpointer data);

static gboolean stage_surface (SimOutputSet *set, const char *path, double w, double h,
                               DrawFunc draw_fn, gconstpointer data, GError **error);
static void chart_size (VizChart chart, const VizInput *in, double *w, double *h);

typedef struct {
  VizChart chart;
  const VizInput *in;
} ChartData;

static void
draw_chart (cairo_t *cr, double w, double h, gconstpointer data)
{
  const ChartData *d = data;
  draw (cr, d->chart, w, h, d->in);
}

typedef struct {
  const SimRun *const *runs;
  int n;
  const char *title;
} CompareData;

static void
draw_compare (cairo_t *cr, double w, double h, gconstpointer data)
{
  const CompareData *d = data;
  viz_compare_draw (cr, w, h, d->runs, d->n, d->title);
}

gboolean
viz_check_chart_path (const char *path, GError **error)
{
  if (!g_str_has_suffix (path, ".png") && !g_str_has_suffix (path, ".svg") &&
      !g_str_has_suffix (path, ".pdf")) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected a file name ending in .png, .svg or .pdf", path);
    return FALSE;
  }
  return TRUE;
}

gboolean
viz_stage_compare (SimOutputSet *set, const char *path, const SimRun *const *runs, int n,
                   const char *title, GError **error)
{
  CompareData d = { runs, n, title };
  return stage_surface (set, path, GANTT_WIDTH, viz_compare_height (n), draw_compare, &d, error);
}

static void
draw_sweep (cairo_t *cr, double w, double h, gconstpointer data)
{
  viz_sweep_draw (cr, w, h, data);
}

gboolean
viz_stage_sweep (SimOutputSet *set, const char *path, const VizSweepInput *in, GError **error)
{
  return stage_surface (set, path, SWEEP_WIDTH, SWEEP_HEIGHT, draw_sweep, in, error);
}

gboolean
viz_stage_chart (SimOutputSet *set, const char *path, VizChart chart, const VizInput *in,
                 GError **error)
{
  ChartData d = { chart, in };
  double w, h;
  chart_size (chart, in, &w, &h);
  return stage_surface (set, path, w, h, draw_chart, &d, error);
}

/* the stream every surface writes through: the first failed write is kept
 * so that the error names its cause, not only CAIRO_STATUS_WRITE_ERROR */
typedef struct {
  int fd;
  GString *memory;     /* instead of fd, for a chart kept in memory */
  int err;
} Sink;

static cairo_status_t
sink_write (void *closure, const unsigned char *data, unsigned int len)
{
  Sink *s = closure;
  if (s->memory != NULL)
    g_string_append_len (s->memory, (const char *) data, len);
  else if (s->err == 0)
    s->err = sim_output_write_all (s->fd, data, len);
  return s->err == 0 ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* the creation date a PDF records: reproducible builds' SOURCE_DATE_EPOCH,
 * or the epoch, never the clock */
static char *
pdf_create_date (void)
{
  const char *env = g_getenv ("SOURCE_DATE_EPOCH");
  guint64 t = 0;
  g_autoptr (GDateTime) dt = NULL;
  if (env == NULL || !g_ascii_string_to_unsigned (env, 10, 0, 253402300799ULL, &t, NULL))
    t = 0;
  dt = g_date_time_new_from_unix_utc ((gint64) t);
  return g_date_time_format (dt, "%Y-%m-%dT%H:%M:%SZ");
}

/* draw into a surface of the format of path's extension that writes
 * through sink; Cairo's status */
static cairo_status_t
render (Sink *sink, const char *path, double w, double h, DrawFunc draw_fn, gconstpointer data)
{
  cairo_surface_t *surface = NULL;
  cairo_t *cr = NULL;
  cairo_status_t st;

  if (g_str_has_suffix (path, ".png"))
    surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  else if (g_str_has_suffix (path, ".svg"))
    surface = cairo_svg_surface_create_for_stream (sink_write, sink, w, h);
  else {
    g_autofree char *date = pdf_create_date ();
    surface = cairo_pdf_surface_create_for_stream (sink_write, sink, w, h);
    cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_CREATE_DATE, date);
  }
  cr = cairo_create (surface);
  draw_fn (cr, w, h, data);
  st = cairo_status (cr);
  cairo_destroy (cr);
  if (st == CAIRO_STATUS_SUCCESS) {
    if (g_str_has_suffix (path, ".png"))
      st = cairo_surface_write_to_png_stream (surface, sink_write, sink);
    else {
      cairo_surface_finish (surface);
      st = cairo_surface_status (surface);
    }
  }
  cairo_surface_destroy (surface);
  return st;
}

static gboolean
stage_surface (SimOutputSet *set, const char *path, double w, double h, DrawFunc draw_fn,
               gconstpointer data, GError **error)
{
  Sink sink = { -1, NULL, 0 };
  cairo_status_t st;

  if (!viz_check_chart_path (path, error))
    return FALSE;
  sink.fd = sim_output_set_open (set, path, error);
  if (sink.fd < 0)
    return FALSE;
  st = render (&sink, path, w, h, draw_fn, data);
  if (sink.err != 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path,
                 g_strerror (sink.err));
    return FALSE;
  }
  if (st != CAIRO_STATUS_SUCCESS) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path,
                 cairo_status_to_string (st));
    return FALSE;
  }
  return TRUE;
}

/* an SVG document in memory; what makes the drawing fail (no memory) is
 * named by what */
static char *
svg_of (const char *what, double w, double h, DrawFunc draw_fn, gconstpointer data, GError **error)
{
  Sink sink = { -1, g_string_new (NULL), 0 };
  cairo_status_t st = render (&sink, ".svg", w, h, draw_fn, data);
  if (st != CAIRO_STATUS_SUCCESS) {
    g_string_free (sink.memory, TRUE);
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot draw: %s", what,
                 cairo_status_to_string (st));
    return NULL;
  }
  return g_string_free (sink.memory, FALSE);
}

static void
chart_size (VizChart chart, const VizInput *in, double *w, double *h)
{
  *w = chart == VIZ_CHART_GANTT ? GANTT_WIDTH : MEMORY_WIDTH;
  *h = chart == VIZ_CHART_GANTT ? viz_gantt_height_for (in, n_rows (chart, in), *w)
                                : viz_memory_height_for (in, n_rows (chart, in), *w);
}

char *
viz_chart_svg (VizChart chart, const VizInput *in, GError **error)
{
  ChartData d = { chart, in };
  double w, h;
  chart_size (chart, in, &w, &h);
  return svg_of (chart == VIZ_CHART_GANTT ? "Gantt chart" : "memory chart", w, h, draw_chart, &d, error);
}

char *
viz_compare_svg (const SimRun *const *runs, int n, const char *title, GError **error)
{
  CompareData d = { runs, n, title };
  return svg_of ("comparison chart", GANTT_WIDTH, viz_compare_height (n), draw_compare, &d, error);
}
