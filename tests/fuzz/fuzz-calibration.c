/* fuzz-calibration.c — the calibration XML loader (sim calibrate's output,
 * included by a topology). */
#include "fuzz.h"
#include "sim-calibration.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *path = fuzz_file (data, size, ".xml");
  GError *error = NULL;
  SimCalibration *c = sim_calibration_load (path, &error);
  if (c == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  sim_calibration_free (c);
  return 0;
}
