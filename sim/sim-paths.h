/* sim-paths.h — where --topology NAME and --model NAME are found.
 * A path first (as given, then with ".xml"), then the source tree's folder
 * (SIM_SOURCE_DIR/topologies or /models), then the installed data dir
 * (SIM_DATA_DIR/topologies or /models). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* folder is "topologies" or "models"; returns a newly allocated path
 * (caller g_free()s), or NULL with SIM_ERROR_IO (no such file, or a
 * directory) or SIM_ERROR_USAGE (an empty name); any thread */
char *sim_paths_resolve (const char *name, const char *folder, GError **error);

G_END_DECLS
