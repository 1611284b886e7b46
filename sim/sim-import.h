/* sim-import.h — a cluster file from what a cluster already says about
 * itself (sim topology import): NCCL's topology dump (NCCL_TOPO_DUMP_FILE,
 * an XML <system>), `nvidia-smi topo -m` and `ibstat` text.
 *
 * The node's links come from those: GPUs and their model (the PCI device
 * id), NVLink links per GPU and the NVSwitch chips, the PCIe link of each
 * GPU, the compute NICs and their rate.  What they cannot say (the GPU's
 * measured rates, the links' achieved bandwidths and latencies, the
 * fabric between the nodes) is taken from the shipped cluster file of the
 * same GPU, and every value so taken or assumed is listed, in the file
 * written and in SimImport.assumed. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const char *nccl_xml, *nccl_path;     /* NCCL's topology dump, its name for messages; NULL: none */
  const char *topo_m, *topo_m_path;     /* nvidia-smi topo -m output; NULL: none */
  const char *ibstat, *ibstat_path;     /* ibstat output; NULL: none */
  const char *gpu_type;  /* the shipped cluster file (a name in topologies/) whose GPU it is, where no
                          * NCCL dump names the GPU; NULL: from the dump */
  const char *name;      /* the topology's name; NULL: "imported" */
  int nodes;             /* nodes of the cluster written; 0: 1 */
} SimImportInput;

typedef struct {
  char *xml;             /* the cluster file */
  GPtrArray *assumed;    /* char*: each value taken from the template or assumed, and why */
  int gpus, nvlink_links, nvswitch_chips, pcie_generation, nics;
  double pcie_bytes_per_s, nic_bits_per_s;
  char *template_file;   /* the shipped file the GPU type came from */
} SimImport;

/* Build the cluster file.  At least one of the three inputs; where two
 * give the same quantity they must agree.  Returns a new SimImport
 * (sim_import_free), or NULL with SIM_ERROR_USAGE "PATH:LINE: expected
 * ..." (or "PATH: expected ...") for input it cannot read, inputs that
 * disagree, or a GPU no shipped file describes (give gpu_type); any
 * thread. */
SimImport *sim_import_cluster (const SimImportInput *in, GError **error);
void sim_import_free (SimImport *im);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimImport, sim_import_free)

G_END_DECLS
