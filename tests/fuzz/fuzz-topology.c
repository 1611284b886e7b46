/* fuzz-topology.c — the cluster XML loader: parse, schema, units, graph
 * checks (unknown devices, no route, zero bandwidth). */
#include "fuzz.h"
#include "sim-topology.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *path = fuzz_file (data, size, ".xml");
  GError *error = NULL;
  SimTopology *topo = sim_topology_load (path, 0, &error);
  if (topo == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  g_assert (error == NULL);
  sim_topology_free (topo);
  return 0;
}
