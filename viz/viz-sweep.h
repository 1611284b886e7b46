/* viz-sweep.h — the sweep chart (viz.h: viz_sweep_draw) as an SVG
 * document in memory, for the page of sim sweep --html (viz-html.h).
 * Drawn at the size of the --chart files, so the page and the file show
 * the same chart. */
#pragma once

#include <glib.h>

#include "viz.h"

G_BEGIN_DECLS

/* the size of the sweep chart, device units (SVG points) */
#define VIZ_SWEEP_WIDTH 1400.0
#define VIZ_SWEEP_HEIGHT 820.0

/* new text (caller g_free()s), or NULL with SIM_ERROR_IO ("sweep chart:
 * cannot draw: ...") when Cairo fails (out of memory); any thread */
char *viz_sweep_svg (const VizSweepInput *in, GError **error);

G_END_DECLS
