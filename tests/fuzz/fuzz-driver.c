/* fuzz-driver.c — replay inputs through a fuzz target without libFuzzer.
 *
 *   fuzz-topology-replay DIR|FILE...
 *
 * Each file (directories are read in sorted order) is passed once to
 * LLVMFuzzerTestOneInput.  A crash, a sanitizer report or an abort fails
 * the run; so does an empty corpus, so a test that replays nothing cannot
 * pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
collect (const char *path, GPtrArray *files)
{
  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_ptr_array_add (files, g_strdup (path));
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) dir = g_dir_open (path, 0, &error);
  if (dir == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      exit (2);
    }
  const char *name;
  g_autoptr (GPtrArray) here = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (name[0] != '.')
      g_ptr_array_add (here, g_build_filename (path, name, NULL));
  g_ptr_array_sort (here, cmp_str);
  for (guint i = 0; i < here->len; i++)
    collect (g_ptr_array_index (here, i), files);
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  for (int i = 1; i < argc; i++)
    collect (argv[i], files);
  if (files->len == 0)
    {
      fprintf (stderr, "%s: no inputs to replay\n", argv[0]);
      return 2;
    }
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autofree char *data = NULL;
      gsize size = 0;
      g_autoptr (GError) error = NULL;
      if (!g_file_get_contents (path, &data, &size, &error))
        {
          fprintf (stderr, "%s\n", error->message);
          return 2;
        }
      LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
    }
  printf ("%s: %u inputs replayed, none crashed\n", argv[0], files->len);
  return 0;
}
