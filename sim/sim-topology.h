/* sim-topology.h — the cluster: GPU types and a graph of devices and links.
 *
 * Read from topologies/NAME.xml (format and expansion in
 * topologies/README.md).  Both forms of the file end up as the same graph:
 * vertices (GPUs, NICs, switches) and full-duplex links, each with a
 * bandwidth per direction in bytes/s and a latency in seconds.  GPUs are
 * numbered 0..n_gpus-1 in node order; that number is the global rank a plan
 * places on it.
 *
 * A SimTopology is built by sim_topology_load() and read-only afterwards;
 * the two writers, sim_topology_set_efficiency() and
 * sim_calibration_apply(), belong to loading, before anything reads it.
 * The one-GPU-type rule: the cost model, the ledger and the MFU all read
 * GPU 0's type, so sim_plan_resolve() refuses a mixed cluster.
 */
#pragma once

#include <glib.h>

#include "sim-bands.h"

G_BEGIN_DECLS

typedef enum {
  SIM_DTYPE_FP64,
  SIM_DTYPE_FP32,
  SIM_DTYPE_TF32,
  SIM_DTYPE_FP16,
  SIM_DTYPE_BF16,
  SIM_DTYPE_FP8,
  SIM_DTYPE_INT8,
  SIM_DTYPE_FP6,
  SIM_DTYPE_FP4,
  SIM_DTYPE_COUNT
} SimDtype;

/* How far real training kernels fall short of the data sheet and the
 * isolated benchmarks: a few global constants per GPU generation, each with
 * a physical meaning and a published prior range (topology XML
 * <efficiency>; fitted on tests/validation/data/training_calibration.csv by
 * tools/fit-efficiency.py, whose PRIORS cite each range).  A GPU type
 * without the element gets the neutral values (1, 1, 0, 0, 0): the
 * optimistic bound the report flags. */
typedef struct {
  gboolean given;
  double clock;              /* sustained tensor-core clock in training / the benchmark's */
  double hbm;                /* achievable fraction of the data-sheet HBM bandwidth */
  double kernel_fixed_s;     /* GPU time per kernel beyond its work: launch gap and tail */
  double host_launch_s;      /* host CPU time to issue one kernel (the host-bound floor) */
  double comm_slowdown;      /* compute slows by this fraction while NCCL kernels share the SMs */
  /* validation: how these constants predicted published runs, the set of the band
   * file that <efficiency bands> names, or the bands the element carries itself in
   * the form before the band file (sim-bands.h) */
  SimBands bands;
} SimEfficiency;

typedef struct {
  char *id;
  char *name;
  guint64 hbm_capacity_bytes;   /* physical HBM: the label (80 GiB) */
  guint64 hbm_visible_bytes;    /* what the driver exposes (nvidia-smi Total) */
  double hbm_bw_bytes_per_s;
  /* what one GPU moves to or from host memory per direction while every GPU
   * of its node does the same (<host-link bandwidth>; 0 when the file gives
   * none): the rate of activation offloading's copies */
  double host_bw_bytes_per_s;
  double peak_flop_per_s[SIM_DTYPE_COUNT]; /* dense; 0 where not given */
  gboolean fp8_block_scaled;      /* FP8 tensor cores apply MX block scales (Blackwell) */
  GArray *gemm;                  /* SimGemmPoint, measured bf16 GEMM rates; may be empty */
  double gemm_fp8_ratio;         /* <gemm fp8-ratio>: the FP8 GEMM rate over the BF16 one,
                                  * each at its measured best shape; 0 if not given */
  gpointer gemm_grid;            /* sim_gemm_prepare's index of gemm (sim-gemm.c): one block,
                                  * g_free; NULL until prepared */
  double attn_fwd_efficiency;    /* fused attention, fraction of bf16 peak; 0 if not given */
  double attn_bwd_efficiency;
  /* the same for cuDNN's fused attention and for FlashAttention-2 where the
   * cluster file gives them (--attention-kernel cudnn|flash2); 0 if not */
  double attn_cudnn_fwd_efficiency, attn_cudnn_bwd_efficiency;
  double attn_flash2_fwd_efficiency, attn_flash2_bwd_efficiency;
  SimEfficiency eff;
  char *calibration_path;         /* the gpu-type's calibration= file, resolved next to the
                                   * topology; applied by sim_calibration_load_topology, NULL: none */
} SimGpuType;

typedef struct {
  double m, n, k;
  double flop_per_s;
} SimGemmPoint;

typedef enum {
  SIM_VERTEX_GPU,
  SIM_VERTEX_NIC,
  SIM_VERTEX_NVSWITCH,
  SIM_VERTEX_PCIE_SWITCH,
  SIM_VERTEX_LEAF,
  SIM_VERTEX_SPINE,
} SimVertexKind;

typedef struct {
  SimVertexKind kind;
  char *id;
  int node;          /* -1 for fabric switches */
  int gpu_type;      /* index into gpu_types, GPUs only, else -1 */
  int gpu_index;     /* 0..n_gpus-1 for GPUs, else -1 */
  gboolean sharp;    /* NVSwitch with in-network reduction (NVLink SHARP) */
  double sharp_bw_bytes_per_s; /* NVLS all-reduce algbw per GPU, 0 when unknown */
  double latency_s;  /* traversal latency of a switch / NIC; 0 for GPUs */
  int line;          /* line in the file (graph form), 0 when generated */
} SimVertex;

typedef enum {
  SIM_LINK_NVLINK,
  SIM_LINK_PCIE,
  SIM_LINK_INFINIBAND,
  SIM_LINK_ETHERNET,
} SimLinkKind;

typedef struct {
  int a, b;                 /* vertex indices */
  SimLinkKind kind;
  double bw_bytes_per_s;    /* per direction */
  double latency_s;
} SimLink;

/* what the cluster form said, for reports; zeroed for the graph form */
typedef struct {
  gboolean present;
  char *node_name;
  char *nic_name;
  char *fabric_name;
  int nics_per_node;
  double nic_bw_bytes_per_s;
  double nvlink_bw_bytes_per_s;
  int nvlink_generation; /* <nvlink generation>, 0 without NVLink */
  int nvlink_links;      /* <nvlink links> per GPU, 0 without NVLink */
  int pcie_generation;   /* <pcie generation> of the GPU-NIC links */
  int nvswitch_chips;
  gboolean rail_optimized;
  /* TRUE where <nic in-order-delivery="false">: the network may deliver a
   * message's bytes out of order, so that NCCL's LL and LL128 protocols,
   * whose receivers poll flags stored beside the data, cannot cross it */
  gboolean nic_out_of_order;
} SimClusterInfo;

typedef struct {
  char *name;
  char *description;
  char *path;
  GPtrArray *gpu_types;   /* SimGpuType* */
  GArray *vertices;       /* SimVertex */
  GArray *links;          /* SimLink */
  GArray *gpus;           /* int vertex index, by GPU number */
  int n_nodes;
  int gpus_per_node;      /* 0 when nodes differ in GPU count */
  int file_gpus_per_node; /* the cluster form's <node gpus>, before --gpus; 0 for a graph */
  SimClusterInfo cluster;
  /* measured / NCCL-tuned per-hop collective latency, by SimLinkKind; set
   * by a calibration (sim calibrate --topology), 0 when not calibrated */
  double coll_latency_scale[4];
  /* char*: doubts about the input that are not errors, "file:line: ..."
   * (a NIC bandwidth that reads like bytes written for bits); the caller
   * prints them */
  GPtrArray *warnings;
} SimTopology;

/* The most GPUs (and, separately, NICs) a topology may hold, checked
 * before anything is allocated.  The project wants 131,072 GPUs to work.
 * A DGX-like cluster costs 330 bytes of topology per GPU (its vertex, its
 * NIC, three links, ids, array slack; malloc statistics: 43.2 MB for
 * 131,072 GPUs, 86.3 MB for 262,144), so the cap, twice the goal, bounds a
 * topology under 100 MB, where 65,536 nodes of 1,024 GPUs (which the
 * schema allows) would ask for 22 GB and abort on allocation. */
#define SIM_TOPOLOGY_MAX_GPUS 262144

/* nodes_override > 0 replaces the cluster form's node count.  Returns a new
 * SimTopology (free with sim_topology_free), or NULL with SIM_ERROR_IO,
 * SIM_ERROR_XML, SIM_ERROR_UNIT, SIM_ERROR_TOPOLOGY (no route, no GPU, a
 * calibration= file outside the topology's folder) or SIM_ERROR_USAGE
 * (nodes_override too large, or given for a <graph>); "file:line: ...".
 * A <gpu-type calibration="FILE"> is resolved (a regular file in the
 * topology's folder or below, never an absolute path or one leading out)
 * and recorded in calibration_path; sim_calibration_load_topology applies
 * it.  Any thread (see sim-xml.h). */
SimTopology *sim_topology_load (const char *path, int nodes_override, GError **error);
/* the same, and gpus_override > 0 builds nodes of that many GPUs instead
 * of the file's <node gpus> (a part of a node: one node of 1, 2 or 4 of
 * its 8 GPUs, each GPU keeping its NVLink, PCIe switch and NIC); it must
 * not exceed the file's count (SIM_ERROR_USAGE) */
SimTopology *sim_topology_load_part (const char *path, int nodes_override, int gpus_override,
                                     GError **error);
/* NULL is ignored */
void sim_topology_free (SimTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimTopology, sim_topology_free)
/* A copy of topo for a what-if on its links: the links its own, the rest
 * (GPU types, vertices, GPUs, warnings) shared with topo, which must
 * outlive it; free with sim_topology_free.  Never fails. */
SimTopology *sim_topology_copy_links (const SimTopology *topo);
/* GPU gpu's links, indices into topo->links (guint; free with
 * g_array_unref): with nic, the links from each NIC attached to it to the
 * fabric (leaf or spine switches; the NIC's port), else its NVLinks */
GArray *sim_topology_gpu_links (const SimTopology *topo, int gpu, gboolean nic);
/* Divides by factor the bandwidth of those links (sim_topology_gpu_links).
 * Returns how many links changed (0: the GPU has none of that kind). */
int sim_topology_slow_gpu_links (SimTopology *topo, int gpu, gboolean nic, double factor);

/* These read a loaded topology: pure, any thread; returned pointers are
 * owned by topo.  A GPU number out of range is a programmer error (NULL). */
int sim_topology_n_gpus (const SimTopology *topo);
const SimVertex *sim_topology_gpu (const SimTopology *topo, int gpu);
/* the GPU type of GPU number gpu */
const SimGpuType *sim_topology_gpu_type (const SimTopology *topo, int gpu);
/* TRUE when every GPU has the same type; else FALSE with SIM_ERROR_TOPOLOGY
 * naming the file and line of the first GPU that differs (error may be NULL) */
gboolean sim_topology_check_one_gpu_type (const SimTopology *topo, GError **error);

/* static strings; any thread */
const char *sim_dtype_name (SimDtype dtype);
const char *sim_link_kind_name (SimLinkKind kind);

/* Override the efficiency constants of every GPU type from
 * "sustained-clock=0.8,hbm=0.9,kernel-fixed=4us,host-launch=6us,comm-slowdown=0.1"
 * (any subset): what a user who measured their own cluster, or the fit of
 * tools/fit-efficiency.py, passes.  SIM_ERROR_USAGE on a bad key or value
 * (the items before it are already applied).  Writes into topo: call it
 * while loading, on one thread, before anything reads the topology. */
gboolean sim_topology_set_efficiency (SimTopology *topo, const char *text, GError **error);

G_END_DECLS
