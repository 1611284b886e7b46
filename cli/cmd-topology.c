/* cmd-topology.c — `sim topology import`: a cluster file from what a
 * cluster already says about itself (sim/sim-import.h). */
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "sim-error.h"
#include "sim-import.h"
#include "sim-input.h"
#include "sim-io.h"
#include "sim-topology.h"

static const char *usage =
    "usage: sim topology import [--nccl-topo FILE] [--topo-m FILE] [--ibstat FILE]\n"
    "                           [--gpu-type NAME] [--name NAME] [--nodes N] [-o FILE]\n"
    "\n"
    "Writes a cluster file (stdout, or -o FILE) from what a node of the cluster says\n"
    "about itself: NCCL's topology dump (run any NCCL job with\n"
    "NCCL_TOPO_DUMP_FILE=FILE), the text of `nvidia-smi topo -m` and of `ibstat`.\n"
    "Give at least one; where two give the same quantity they must agree.  They give\n"
    "the GPUs and their model, the NVLink links per GPU, the NVSwitch chips, the GPUs'\n"
    "PCIe link and the compute NICs with their rate.  The GPU's measured rates, the\n"
    "links' achieved bandwidths and latencies and the fabric between the nodes come\n"
    "from the shipped cluster file of the same GPU (--gpu-type NAME names it where no\n"
    "NCCL dump does); the file lists every value so taken.  --nodes N: the nodes of\n"
    "the cluster (default 1).  The file written is checked by loading it.\n";

static char *
read_input (const char *flag, const char *path, GError **error)
{
  char *text = NULL;
  if (path == NULL)
    return NULL;
  if (!sim_input_read (path, SIM_INPUT_MAX_BYTES, &text, NULL, error))
    g_prefix_error (error, "--%s: ", flag);
  return text;
}

int
sim_cmd_topology (int argc, char **argv, GError **error)
{
  g_autofree char *nccl = NULL, *topo_m = NULL, *ibstat = NULL, *gpu_type = NULL, *name = NULL;
  g_autofree char *nodes_s = NULL, *out = NULL;
  g_autofree char *nccl_text = NULL, *topo_m_text = NULL, *ibstat_text = NULL;
  g_autoptr (SimImport) im = NULL;
  gboolean help = FALSE;
  int nodes = 0;
  const SimCliOption options[] = {
    { "nccl-topo", TRUE, &nccl, NULL, NULL }, { "topo-m", TRUE, &topo_m, NULL, NULL },
    { "ibstat", TRUE, &ibstat, NULL, NULL }, { "gpu-type", TRUE, &gpu_type, NULL, NULL },
    { "name", TRUE, &name, NULL, NULL }, { "nodes", TRUE, &nodes_s, NULL, NULL },
    { "output", TRUE, &out, NULL, NULL }, { "help", FALSE, NULL, &help, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  if (argc < 3) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "topology: expected import; see sim topology --help");
    return 2;
  }
  if (g_str_equal (argv[2], "--help") || g_str_equal (argv[2], "-h")) {
    fputs (usage, stdout);
    return 0;
  }
  if (!g_str_equal (argv[2], "import")) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "topology: expected import, got '%.40s'", argv[2]);
    return 2;
  }
  for (int i = 3; i < argc; i++)
    if (g_str_equal (argv[i], "-o"))
      argv[i] = (char *) "--output";
  if (!sim_cli_parse (argc, argv, 3, options, "topology import", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error))
    return 2;
  if (out != NULL && !sim_output_check (out, FALSE, error)) {
    g_prefix_error (error, "-o: ");
    return 2;
  }
  if ((nccl != NULL && (nccl_text = read_input ("nccl-topo", nccl, error)) == NULL) ||
      (topo_m != NULL && (topo_m_text = read_input ("topo-m", topo_m, error)) == NULL) ||
      (ibstat != NULL && (ibstat_text = read_input ("ibstat", ibstat, error)) == NULL))
    return 2;
  {
    SimImportInput in = { nccl_text, nccl, topo_m_text, topo_m, ibstat_text, ibstat, gpu_type, name, nodes };
    if ((im = sim_import_cluster (&in, error)) == NULL)
      return 2;
  }
  {
    /* the file written must load as any cluster file does */
    g_autofree char *tmp = NULL;
    int fd = g_file_open_tmp ("sim-import-XXXXXX.xml", &tmp, error);
    g_autoptr (SimTopology) check = NULL;
    if (fd < 0)
      return 2;
    close (fd);
    if (!g_file_set_contents (tmp, im->xml, -1, error)) {
      g_unlink (tmp);
      return 2;
    }
    check = sim_topology_load (tmp, 0, error);
    g_unlink (tmp);
    if (check == NULL) {
      g_prefix_error (error, "topology import wrote a file that does not load: ");
      return 2;
    }
  }
  if (out != NULL) {
    g_autoptr (SimOutputSet) set = sim_output_set_new ();
    if (!sim_output_set_add (set, out, im->xml, -1, error) || !sim_output_set_commit (set, error))
      return 2;
  } else {
    fputs (im->xml, stdout);
  }
  return 0;
}
