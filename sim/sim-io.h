/* sim-io.h — writing output files whole or not at all.
 * The contents go to a temporary file in the same directory, which is then
 * renamed over path: an interrupted run never leaves a half-written file.
 * Errors are SIM_ERROR_IO: "PATH: cannot write: REASON". */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* FALSE with SIM_ERROR_IO; any thread, one writer per path */
gboolean sim_write_file (const char *path, const char *contents, GError **error);

G_END_DECLS
