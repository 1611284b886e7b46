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
  /* a bare name that is close to a shipped one: say which */
  if (strchr (name, G_DIR_SEPARATOR) == NULL) {
    g_autoptr (GPtrArray) names = sim_paths_list (folder, NULL);
    g_autofree char *bare = g_str_has_suffix (name, ".xml") ? g_strndup (name, strlen (name) - 4) : g_strdup (name);
    const char *near = sim_paths_closest (bare, (const char *const *) names->pdata, names->len);
    if (near != NULL) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: no such %s file; did you mean %s? see sim list %s", name,
                   kind, near, folder);
      return NULL;
    }
  }
  g_set_error (error, SIM_ERROR, SIM_ERROR_IO, "%s: no such %s file (tried %s)", name, kind,
               joined);
  return NULL;
}

char *
sim_paths_shipped (const char *folder, const char *file)
{
  const char *bases[] = { SIM_SOURCE_DIR, SIM_DATA_DIR };
  for (guint i = 0; i < G_N_ELEMENTS (bases); i++) {
    g_autofree char *p = g_build_filename (bases[i], folder, file, NULL);
    if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
      return g_steal_pointer (&p);
  }
  return NULL;
}

GPtrArray *
sim_paths_list (const char *folder, GPtrArray *paths)
{
  const char *bases[] = { SIM_SOURCE_DIR, SIM_DATA_DIR };
  g_autoptr (GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < G_N_ELEMENTS (bases); i++) {
    g_autofree char *dir_path = g_build_filename (bases[i], folder, NULL);
    g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
    const char *f = NULL;
    while (dir != NULL && (f = g_dir_read_name (dir)) != NULL)
      /* the band file of topologies/ holds no cluster (sim-bands.h) */
      if (g_str_has_suffix (f, ".xml") && !(g_str_equal (folder, "topologies") && g_str_equal (f, "bands.xml")))
        g_ptr_array_add (found, g_build_filename (dir_path, f, NULL));
  }
  /* sorted by name; the source tree's copy first, since it is listed first */
  for (guint i = 0; i < found->len; i++) {
    g_autofree char *base = g_path_get_basename (g_ptr_array_index (found, i));
    gboolean seen = FALSE;
    base[strlen (base) - 4] = '\0';
    for (guint k = 0; k < names->len && !seen; k++)
      seen = g_str_equal (g_ptr_array_index (names, k), base);
    if (seen)
      continue;
    {
      guint at = 0;
      while (at < names->len && strcmp (g_ptr_array_index (names, at), base) < 0)
        at++;
      g_ptr_array_insert (names, (gint) at, g_strdup (base));
      if (paths != NULL)
        g_ptr_array_insert (paths, (gint) at, g_strdup (g_ptr_array_index (found, i)));
    }
  }
  return names;
}

/* Levenshtein distance, given up past limit */
static guint
edits (const char *a, const char *b, guint limit)
{
  gsize la = strlen (a), lb = strlen (b);
  g_autofree guint *row = NULL;
  if ((la > lb ? la - lb : lb - la) > limit || la > 256 || lb > 256)
    return limit + 1;
  row = g_new (guint, lb + 1);
  for (gsize j = 0; j <= lb; j++)
    row[j] = (guint) j;
  for (gsize i = 1; i <= la; i++) {
    guint diag = row[0];
    row[0] = (guint) i;
    for (gsize j = 1; j <= lb; j++) {
      guint up = row[j];
      guint best = MIN (row[j] + 1, row[j - 1] + 1);
      row[j] = MIN (best, diag + (a[i - 1] != b[j - 1]));
      diag = up;
    }
  }
  return row[lb];
}

const char *
sim_paths_closest (const char *word, const char *const *candidates, guint n)
{
  gsize len = strlen (word);
  guint limit = len <= 3 ? 1 : 2;
  const char *best = NULL;
  guint best_d = G_MAXUINT;
  gsize best_prefix = 0;

  for (guint i = 0; i < n; i++) {
    const char *c = candidates[i];
    guint d = 0;
    gsize prefix = 0;
    if (g_str_equal (word, c))
      return NULL;
    d = edits (word, c, limit);
    /* a prefix counts as one edit short of the limit: "--topo" for --topology */
    if (d > limit && len >= 2 && g_str_has_prefix (c, word))
      d = limit;
    if (d > limit)
      continue;
    while (word[prefix] != '\0' && word[prefix] == c[prefix])
      prefix++;
    if (d < best_d || (d == best_d && prefix > best_prefix)) {
      best = c;
      best_d = d;
      best_prefix = prefix;
    }
  }
  return best;
}
