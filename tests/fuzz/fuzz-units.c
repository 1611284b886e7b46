/* fuzz-units.c — the unit parsers ("80 GiB", "900 GB/s", "989 TFLOP/s",
 * "5 us").  A value either parses to a finite, non-negative quantity or is
 * refused with a message; nothing else is acceptable. */
#include <math.h>

#include "fuzz.h"
#include "sim-units.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text (data, size);
  GError *error = NULL;
  guint64 bytes;
  double v;

  if (!sim_units_parse_bytes (text, &bytes, &error))
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_clear_error (&error);
    }
  if (sim_units_parse_bandwidth (text, &v, &error))
    g_assert (isfinite (v) && v >= 0);
  else
    g_clear_error (&error);
  if (sim_units_parse_flop_rate (text, &v, &error))
    g_assert (isfinite (v) && v >= 0);
  else
    g_clear_error (&error);
  if (sim_units_parse_time (text, &v, &error))
    g_assert (isfinite (v) && v >= 0);
  else
    g_clear_error (&error);
  return 0;
}
