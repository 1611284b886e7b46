/* fuzz-merge.c — sim sweep --merge: the input as one shard file, through
 * the one library function the command line calls (sim_sweep_merge), which
 * reads it from disk and checks it.  What it accepts must be whole (every
 * layout once, in order) and must survive the ranking; written back as a
 * sweep of its rows, it must be accepted again. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "sim-sweep.h"

/* the bytes in one scratch file per process; a plain write, not
 * fuzz_file's g_file_set_contents, whose rename and fsync would take most
 * of each run */
static const char *
scratch (const void *data, size_t size)
{
  static char *path = NULL;
  FILE *f;
  if (path == NULL)
    path = g_strdup_printf ("%s/sim-fuzz-merge-%d.json", g_get_tmp_dir (), (int) getpid ());
  f = fopen (path, "wb");
  if (f == NULL || (size > 0 && fwrite (data, 1, size, f) != size) || fclose (f) != 0)
    g_error ("cannot write %s", path);
  return path;
}

static void
merge_back (GPtrArray *rows, const char *topology, const char *model)
{
  g_autofree char *back = sim_sweep_rows_json (rows, topology, model, 1, 1);
  const char *path = scratch (back, strlen (back));
  g_autoptr (GError) error = NULL;
  g_autoptr (SimSweepMerged) again = sim_sweep_merge (&path, 1, &error);
  if (again == NULL)
    g_error ("the JSON of accepted rows is refused: %s", error->message);
  g_assert_cmpuint (again->rows->len, ==, rows->len);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *path = scratch (data, size);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimSweepMerged) m = sim_sweep_merge (&path, 1, &error);
  g_autoptr (GPtrArray) ranked = NULL;
  if (m == NULL) {
    /* one line, bounded, saying what was expected */
    g_assert (error != NULL && strstr (error->message, "expected") != NULL);
    g_assert (strchr (error->message, '\n') == NULL && strlen (error->message) < 1024);
    return 0;
  }
  g_assert (m->rows->len == m->layouts && m->shards == 1);
  ranked = g_ptr_array_new ();
  for (guint i = 0; i < m->rows->len; i++) {
    const SimSweepRow *r = g_ptr_array_index (m->rows, i);
    g_assert (r->index == (int) i && r->label != NULL);
    g_ptr_array_add (ranked, (gpointer) r);
  }
  sim_sweep_rank_rows (ranked);
  merge_back (m->rows, m->topology, m->model);
  return 0;
}
