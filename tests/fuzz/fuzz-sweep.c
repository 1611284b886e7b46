/* fuzz-sweep.c — sim sweep --merge: a shard file read into rows, which are
 * then ranked and written back (sim-sweep.h). */
#include "fuzz.h"
#include "sim-sweep.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text (data, size);
  g_autofree char *topo = NULL, *model = NULL, *back = NULL;
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (sim_run_summary_free);
  GError *error = NULL;
  if (!sim_sweep_rows_read ("fuzz.json", text, &topo, &model, rows, &error)) {
    g_assert (error != NULL && error->message[0] != '\0');
    g_error_free (error);
    return 0;
  }
  {
    /* rank a borrowed view, as sim sweep --merge does */
    g_autoptr (GPtrArray) ranked = g_ptr_array_new ();
    for (guint i = 0; i < rows->len; i++)
      g_ptr_array_add (ranked, g_ptr_array_index (rows, i));
    sim_sweep_rank_rows (ranked);
  }
  back = sim_sweep_rows_json (rows, topo != NULL ? topo : "", model != NULL ? model : "", 1, 1);
  g_assert (back != NULL);
  return 0;
}
