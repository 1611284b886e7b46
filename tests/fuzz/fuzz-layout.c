/* fuzz-layout.c — Megatron-Core's pipeline layout string
 * (--pipeline-model-parallel-layout, sim-layout.h).  Any text is either a
 * layout or one bounded line of refusal.  A layout has at least one
 * virtual stage, holds at most SIM_LAYOUT_MAX_LAYERS layers, and its
 * canonical text parses back to the same layout. */
#include <string.h>

#include "fuzz.h"
#include "sim-error.h"
#include "sim-layout.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text (data, size);
  g_auto (SimLayout) layout = { 0 };
  GError *error = NULL;

  if (!sim_layout_parse (text, &layout, &error)) {
    g_assert (error != NULL && error->domain == SIM_ERROR && error->code == SIM_ERROR_USAGE);
    g_assert (g_str_has_prefix (error->message, "--pipeline-model-parallel-layout: expected "));
    g_assert (strchr (error->message, '\n') == NULL && strlen (error->message) < 400);
    g_clear_error (&error);
    return 0;
  }
  {
    g_autofree char *canon = sim_layout_to_string (&layout);
    g_auto (SimLayout) again = { 0 };
    guint64 layers = layout.mtp;
    g_assert (layout.n >= 1 && layout.n <= SIM_LAYOUT_MAX_STAGES);
    for (guint k = 0; k < layout.n; k++)
      layers += layout.layers[k];
    g_assert (layers <= SIM_LAYOUT_MAX_LAYERS);
    g_assert (sim_layout_parse (canon, &again, NULL));
    g_assert (again.n == layout.n && again.mtp == layout.mtp);
    g_assert (memcmp (again.layers, layout.layers, layout.n * sizeof layout.layers[0]) == 0);
  }
  return 0;
}
