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

/* the shipped file called file in folder ("topologies"): the source
 * tree's where it is a regular file, else the installed one's, else NULL;
 * returns a newly allocated path (caller g_free()s); any thread */
char *sim_paths_shipped (const char *folder, const char *file);

/* the shipped files of folder ("topologies" or "models"): names without
 * ".xml", sorted, each once, from the source tree's folder and the
 * installed one (not the band file, topologies/bands.xml: sim-bands.h); full paths in the same order in paths when it is not
 * NULL.  Returns a new array (g_ptr_array_unref); never fails (a missing
 * folder adds nothing); any thread */
GPtrArray *sim_paths_list (const char *folder, GPtrArray *paths);

/* the candidate that word is most likely a misspelling of: at most 2
 * edits (1 for a word of 3 characters or fewer), or word is a prefix of
 * it (2 characters or more); ties go to the longer common prefix, then to
 * the earlier candidate.  NULL when none is close or word is one of them.
 * Returns a pointer into candidates; pure, any thread */
const char *sim_paths_closest (const char *word, const char *const *candidates, guint n);

G_END_DECLS
