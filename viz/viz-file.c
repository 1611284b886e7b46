#include "viz-file.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "sim-error.h"

#define GANTT_WIDTH 1600.0
#define MEMORY_WIDTH 1400.0

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

static gboolean write_surface (const char *path, double w, double h, DrawFunc draw_fn,
                               gconstpointer data, GError **error);

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
viz_write_compare (const char *path, const SimRun *const *runs, int n, const char *title,
                   GError **error)
{
  CompareData d = { runs, n, title };
  return write_surface (path, GANTT_WIDTH, viz_compare_height (n), draw_compare, &d, error);
}

gboolean
viz_write_chart (const char *path, VizChart chart, const VizInput *in, GError **error)
{
  double w = chart == VIZ_CHART_GANTT ? GANTT_WIDTH : MEMORY_WIDTH;
  double h = chart == VIZ_CHART_GANTT ? viz_gantt_height_for (in, n_rows (chart, in), w)
                                      : viz_memory_height (n_rows (chart, in));
  ChartData d = { chart, in };
  return write_surface (path, w, h, draw_chart, &d, error);
}

static gboolean
write_surface (const char *path, double w, double h, DrawFunc draw_fn, gconstpointer data,
               GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *tmp = NULL;
  cairo_surface_t *surface = NULL;
  cairo_t *cr = NULL;
  cairo_status_t st;
  int fd;

  if (!g_str_has_suffix (path, ".png") && !g_str_has_suffix (path, ".svg") &&
      !g_str_has_suffix (path, ".pdf")) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected a file name ending in .png, .svg or .pdf", path);
    return FALSE;
  }
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path, g_strerror (ENOENT));
    return FALSE;
  }
  tmp = g_build_filename (dir, ".sim-chart-XXXXXX", NULL);
  fd = g_mkstemp (tmp);
  if (fd < 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path, g_strerror (errno));
    return FALSE;
  }
  close (fd);

  if (g_str_has_suffix (path, ".png"))
    surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, (int) w, (int) h);
  else if (g_str_has_suffix (path, ".svg"))
    surface = cairo_svg_surface_create (tmp, w, h);
  else
    surface = cairo_pdf_surface_create (tmp, w, h);
  cr = cairo_create (surface);
  draw_fn (cr, w, h, data);
  cairo_destroy (cr);
  if (g_str_has_suffix (path, ".png"))
    st = cairo_surface_write_to_png (surface, tmp);
  else {
    cairo_surface_finish (surface);
    st = cairo_surface_status (surface);
  }
  cairo_surface_destroy (surface);
  if (st != CAIRO_STATUS_SUCCESS) {
    g_unlink (tmp);
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path,
                 cairo_status_to_string (st));
    return FALSE;
  }
  g_chmod (tmp, 0644);
  if (g_rename (tmp, path) != 0) {
    int err = errno;
    g_unlink (tmp);
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: cannot write: %s", path, g_strerror (err));
    return FALSE;
  }
  return TRUE;
}
