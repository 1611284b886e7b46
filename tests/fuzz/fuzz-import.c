/* fuzz-import.c — sim topology import's readers: the first byte picks the
 * input the rest is (0: NCCL's topology dump, 1: nvidia-smi topo -m,
 * 2: ibstat), with dgx-h100 as the GPU where the dump names none. */
#include "fuzz.h"
#include "sim-import.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = NULL;
  SimImportInput in = { 0 };
  GError *error = NULL;
  SimImport *im;
  if (size == 0)
    return 0;
  text = fuzz_text (data + 1, size - 1);
  switch (data[0] % 3)
    {
    case 0: in.nccl_xml = text, in.nccl_path = "fuzz.xml"; break;
    case 1: in.topo_m = text, in.topo_m_path = "fuzz.txt", in.gpu_type = "dgx-h100"; break;
    default: in.ibstat = text, in.ibstat_path = "fuzz.txt", in.gpu_type = "dgx-h100"; break;
    }
  im = sim_import_cluster (&in, &error);
  if (im == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  sim_import_free (im);
  return 0;
}
