/* fuzz-nccl.c — the nccl-tests output reader (sim validate --nccl). */
#include "fuzz.h"
#include "sim-nccl.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text (data, size);
  GError *error = NULL;
  SimNcclResult *r = sim_nccl_parse_text ("fuzz.txt", text, &error);
  if (r == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  sim_nccl_result_free (r);
  return 0;
}
