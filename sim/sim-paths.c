#include "sim-paths.h"

#include <string.h>

#include "sim-error.h"

#ifndef SIM_SOURCE_DIR
#define SIM_SOURCE_DIR "."
#endif
#ifndef SIM_DATA_DIR
#define SIM_DATA_DIR "/usr/local/share/sim"
#endif

char *
sim_paths_resolve (const char *name, const char *folder, GError **error)
{
  g_autoptr (GPtrArray) tried = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *with_ext = g_str_has_suffix (name, ".xml") ? g_strdup (name)
                                                               : g_strconcat (name, ".xml", NULL);
  const char *bases[] = { SIM_SOURCE_DIR, SIM_DATA_DIR };
  g_autofree char *joined = NULL;
  const char *kind = g_str_equal (folder, "models") ? "model" : "topology";

  if (*name == '\0') {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "empty %s name: expected a file name or a name such as %s",
                 kind, g_str_equal (folder, "models") ? "llama3-70b" : "dgx8x4");
    return NULL;
  }
  if (g_file_test (name, G_FILE_TEST_IS_DIR)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: is a directory, expected a %s XML file",
                 name, kind);
    return NULL;
  }
  g_ptr_array_add (tried, g_strdup (name));
  if (!g_str_equal (name, with_ext))
    g_ptr_array_add (tried, g_strdup (with_ext));
  /* a bare name (no directory part) is also looked up in the project folders */
  if (strchr (name, G_DIR_SEPARATOR) == NULL)
    for (guint i = 0; i < G_N_ELEMENTS (bases); i++)
      g_ptr_array_add (tried, g_build_filename (bases[i], folder, with_ext, NULL));

  for (guint i = 0; i < tried->len; i++) {
    const char *p = g_ptr_array_index (tried, i);
    if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
      return g_strdup (p);
  }
  g_ptr_array_add (tried, NULL);
  joined = g_strjoinv (", ", (char **) tried->pdata);
  g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: no such %s file (tried %s)", name, kind,
               joined);
  return NULL;
}
