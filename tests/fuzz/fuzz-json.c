/* fuzz-json.c — the JSON reader (sim sweep --merge reads shard results). */
#include "fuzz.h"
#include "sim-json-read.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text (data, size);
  GError *error = NULL;
  SimJsonValue *v = sim_json_parse ("fuzz.json", text, &error);
  if (v == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  sim_json_value_free (v);
  return 0;
}
