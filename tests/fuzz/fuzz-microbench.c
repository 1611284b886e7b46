/* fuzz-microbench.c — the microbenchmark CSV reader (sim calibrate, sim
 * validate --gemm/--hbm). */
#include "fuzz.h"
#include "sim-microbench.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text (data, size);
  GError *error = NULL;
  SimMicrobench *b = sim_microbench_parse_text ("fuzz.csv", text, &error);
  if (b == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  sim_microbench_free (b);
  return 0;
}
