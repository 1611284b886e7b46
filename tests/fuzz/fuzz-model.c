/* fuzz-model.c — the model XML loader. */
#include "fuzz.h"
#include "sim-model.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *path = fuzz_file (data, size, ".xml");
  GError *error = NULL;
  SimModel *model = sim_model_load (path, &error);
  if (model == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  sim_model_free (model);
  return 0;
}
