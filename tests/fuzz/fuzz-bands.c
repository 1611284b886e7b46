/* fuzz-bands.c — the band file loader (topologies/bands.xml): parse,
 * schema, ranges, sets and kinds given twice. */
#include "fuzz.h"
#include "sim-bands.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *path = fuzz_file (data, size, ".xml");
  GError *error = NULL;
  SimBands bands;
  gboolean found = FALSE;
  if (!sim_bands_read (path, "dgx-h100", &bands, &found, &error))
    {
      g_assert (error != NULL && error->message[0] != '\0' && !found);
      g_error_free (error);
      return 0;
    }
  g_assert (error == NULL);
  g_assert (bands.moe.within <= bands.moe.rows && bands.fsdp.within <= bands.fsdp.rows &&
            bands.torchtitan.within <= bands.torchtitan.rows);
  return 0;
}
