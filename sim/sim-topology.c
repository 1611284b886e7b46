/* sim-topology.c — load topologies/NAME.xml into a graph (see sim-topology.h) */
#include "sim-topology.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim-error.h"
#include "sim-gemm.h"
#include "sim-paths.h"
#include "sim-units.h"
#include "sim-xml.h"

/* 65,536 nodes is 4x the largest cluster anyone has described to us
 * (16,384 GPUs); above it the file is a typo, not a cluster */
#define MAX_NODES 65536
#define MAX_GPUS_PER_NODE 1024

static void
gpu_type_free (gpointer p)
{
  SimGpuType *t = p;
  g_clear_pointer (&t->gemm, g_array_unref);
  g_free (t->gemm_grid);
  g_free (t->id);
  g_free (t->calibration_path);
  g_free (t->name);
  g_free (t);
}

static void
vertex_clear (gpointer p)
{
  SimVertex *v = p;
  g_free (v->id);
}

void
sim_topology_free (SimTopology *topo)
{
  if (topo == NULL)
    return;
  g_free (topo->name);
  g_free (topo->description);
  g_free (topo->path);
  g_clear_pointer (&topo->gpu_types, g_ptr_array_unref);
  g_clear_pointer (&topo->vertices, g_array_unref);
  g_clear_pointer (&topo->links, g_array_unref);
  g_clear_pointer (&topo->gpus, g_array_unref);
  g_free (topo->cluster.node_name);
  g_free (topo->cluster.nic_name);
  g_free (topo->cluster.fabric_name);
  g_clear_pointer (&topo->warnings, g_ptr_array_unref);
  g_free (topo);
}

static const char *dtype_names[SIM_DTYPE_COUNT] = {
  "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp6", "fp4",
};

const char *
sim_dtype_name (SimDtype dtype)
{
  return dtype < SIM_DTYPE_COUNT ? dtype_names[dtype] : "?";
}

const char *
sim_link_kind_name (SimLinkKind kind)
{
  switch (kind) {
  case SIM_LINK_NVLINK: return "nvlink";
  case SIM_LINK_PCIE: return "pcie";
  case SIM_LINK_INFINIBAND: return "infiniband";
  case SIM_LINK_ETHERNET: return "ethernet";
  }
  return "?";
}

static int
find_gpu_type (SimTopology *topo, const char *id)
{
  for (guint i = 0; i < topo->gpu_types->len; i++) {
    SimGpuType *t = g_ptr_array_index (topo->gpu_types, i);
    if (g_str_equal (t->id, id))
      return (int) i;
  }
  return -1;
}

/* the index of the <gpu-type> that attribute attr of node names, or -1
 * with the file:line error */
static int
gpu_type_of (SimTopology *topo, const char *path, xmlNode *node, const char *attr, const char *id,
             GError **error)
{
  int gt = find_gpu_type (topo, id);
  if (gt < 0) {
    g_autofree char *shown = sim_xml_shorten (id);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute %s of <%s>: expected the id of a <gpu-type>, got '%s'", path,
                 sim_xml_attr_line (node, attr), attr, (const char *) node->name, shown);
  }
  return gt;
}

/* <efficiency>'s band of published runs named `name` (NAME-error,
 * NAME-bias, NAME-rows, NAME-within, all four or none): left zero when the
 * file states none */
static gboolean
published_band (const char *path, xmlNode *eff, const char *name, SimBand *band, GError **error)
{
  g_autofree char *e = g_strconcat (name, "-error", NULL), *b = g_strconcat (name, "-bias", NULL);
  g_autofree char *r = g_strconcat (name, "-rows", NULL), *w = g_strconcat (name, "-within", NULL);
  if (!xmlHasProp (eff, (const xmlChar *) e))
    return TRUE;
  band->has_bias = TRUE;
  return sim_xml_get_double (path, eff, e, 0.0, 10.0, &band->error, error) &&
         sim_xml_get_double (path, eff, b, -10.0, 10.0, &band->bias, error) &&
         sim_xml_get_uint (path, eff, r, 1, 1000000, &band->rows, error) &&
         sim_xml_get_uint (path, eff, w, 0, band->rows, &band->within, error);
}

/* <efficiency>: the constants, and the bands of the set its bands= names
 * (the topology's name where it names none) from the band file beside the
 * file or the shipped one (sim_bands_lookup); where no band file holds that
 * set, the band attributes <efficiency> itself may carry, the form before
 * the band file */
static gboolean
read_efficiency (const char *path, xmlNode *eff, SimEfficiency *e, GError **error)
{
  g_autofree char *set = NULL;
  SimBands bands = { { 0 } };
  gboolean found = FALSE;

  e->given = TRUE;
  if (!sim_xml_get_double (path, eff, "sustained-clock", 0.3, 1.0, &e->clock, error) ||
      !sim_xml_get_double (path, eff, "hbm", 0.3, 1.0, &e->hbm, error) ||
      !sim_xml_get_time (path, eff, "kernel-fixed", &e->kernel_fixed_s, error) ||
      !sim_xml_get_time (path, eff, "host-launch", &e->host_launch_s, error) ||
      !sim_xml_get_double (path, eff, "comm-slowdown", 0.0, 1.0, &e->comm_slowdown, error))
    return FALSE;
  if (xmlHasProp (eff, (const xmlChar *) "error") &&
      (!sim_xml_get_double (path, eff, "error", 0.0, 10.0, &e->bands.fitted.error, error) ||
       !sim_xml_get_uint (path, eff, "error-rows", 1, 1000000, &e->bands.fitted.rows, error)))
    return FALSE;
  if (xmlHasProp (eff, (const xmlChar *) "heldout-error") &&
      (!sim_xml_get_double (path, eff, "heldout-error", 0.0, 10.0, &e->bands.heldout.error, error) ||
       !sim_xml_get_uint (path, eff, "heldout-rows", 1, 1000000, &e->bands.heldout.rows, error)))
    return FALSE;
  if (!published_band (path, eff, "moe", &e->bands.moe, error) ||
      !published_band (path, eff, "fsdp", &e->bands.fsdp, error) ||
      !published_band (path, eff, "torchtitan", &e->bands.torchtitan, error))
    return FALSE;
  if (e->kernel_fixed_s > 1e-3 || e->host_launch_s > 1e-3) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: <efficiency>: expected kernel-fixed and host-launch of at most 1ms",
                 path, sim_xml_attr_line (eff, NULL));
    return FALSE;
  }
  if (xmlHasProp (eff, (const xmlChar *) "bands")) {
    if (!sim_xml_get_string (path, eff, "bands", &set, error))
      return FALSE;
  } else {
    /* the file's own <topology name>: the file the element is in, which for
     * a <gpu-type ref> is the shipped one */
    xmlNode *root = xmlDocGetRootElement (eff->doc);
    xmlChar *name = root != NULL ? xmlGetProp (root, (const xmlChar *) "name") : NULL;
    set = g_strdup (name != NULL ? (const char *) name : "");
    xmlFree (name);
  }
  if (!sim_bands_lookup (path, set, &bands, &found, error))
    return FALSE;
  if (found)
    e->bands = bands;
  return TRUE;
}

static gboolean
read_gpu_type (SimTopology *topo, const char *path, xmlNode *node, GError **error)
{
  SimGpuType *t = g_new0 (SimGpuType, 1);
  xmlNode *mem = NULL;
  xmlNode *gemm = NULL, *attn = NULL, *eff = NULL;
  double gemm_scale = 1.0;

  t->eff = (SimEfficiency) { FALSE, 1.0, 1.0, 0.0, 0.0, 0.0, { { 0 } } };
  t->gemm = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  g_ptr_array_add (topo->gpu_types, t);
  if (!sim_xml_get_string (path, node, "id", &t->id, error) ||
      !sim_xml_get_string (path, node, "name", &t->name, error))
    return FALSE;
  mem = sim_xml_require (path, node, "memory", error);
  if (mem == NULL)
    return FALSE;
  if (!sim_xml_get_bytes (path, mem, "capacity", &t->hbm_capacity_bytes, error) ||
      !sim_xml_get_bytes (path, mem, "visible", &t->hbm_visible_bytes, error) ||
      !sim_xml_get_bandwidth (path, mem, "bandwidth", &t->hbm_bw_bytes_per_s, error))
    return FALSE;
  {
    xmlNode *host = sim_xml_first_element (node, "host-link");
    if (host != NULL &&
        !sim_xml_get_bandwidth (path, host, "bandwidth", &t->host_bw_bytes_per_s, error))
      return FALSE;
  }
  if (t->hbm_visible_bytes > t->hbm_capacity_bytes) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute visible of <memory>: expected at most the capacity (the driver cannot expose more than the HBM holds)",
                 path, sim_xml_attr_line (mem, "visible"));
    return FALSE;
  }
  for (xmlNode *p = sim_xml_first_element (node, "peak"); p != NULL;
       p = sim_xml_next_element (p, "peak")) {
    g_autofree char *dtype = NULL;
    double rate = 0;
    int d = -1;
    if (!sim_xml_get_string (path, p, "dtype", &dtype, error) ||
        !sim_xml_get_flop_rate (path, p, "rate", &rate, error))
      return FALSE;
    for (int i = 0; i < SIM_DTYPE_COUNT; i++)
      if (g_str_equal (dtype, dtype_names[i]))
        d = i;
    if (d < 0 || t->peak_flop_per_s[d] > 0) {
      g_autofree char *shown = sim_xml_shorten (dtype);
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                   "%s:%ld: attribute dtype of <peak>: expected a dtype not given before, got '%s'",
                   path, sim_xml_attr_line (p, "dtype"), shown);
      return FALSE;
    }
    t->peak_flop_per_s[d] = rate;
    if (d == SIM_DTYPE_FP8 && xmlHasProp (p, (const xmlChar *) "block-scaled") &&
        !sim_xml_get_bool (path, p, "block-scaled", &t->fp8_block_scaled, error))
      return FALSE;
  }
  gemm = sim_xml_first_element (node, "gemm");
  if (gemm != NULL && xmlHasProp (gemm, (const xmlChar *) "scale") &&
      !sim_xml_get_double (path, gemm, "scale", 0.1, 10.0, &gemm_scale, error))
    return FALSE;
  if (gemm != NULL && xmlHasProp (gemm, (const xmlChar *) "fp8-ratio") &&
      !sim_xml_get_double (path, gemm, "fp8-ratio", 1.0, 4.0, &t->gemm_fp8_ratio, error))
    return FALSE;
  for (xmlNode *p = sim_xml_first_element (gemm, "point"); p != NULL;
       p = sim_xml_next_element (p, "point")) {
    SimGemmPoint pt = { 0 };
    guint64 m = 0, n = 0, k = 0;
    if (!sim_xml_get_uint (path, p, "m", 1, 1u << 24, &m, error) ||
        !sim_xml_get_uint (path, p, "n", 1, 1u << 24, &n, error) ||
        !sim_xml_get_uint (path, p, "k", 1, 1u << 24, &k, error) ||
        !sim_xml_get_flop_rate (path, p, "rate", &pt.flop_per_s, error))
      return FALSE;
    pt.m = (double) m, pt.n = (double) n, pt.k = (double) k;
    pt.flop_per_s *= gemm_scale;
    g_array_append_val (t->gemm, pt);
  }
  sim_gemm_prepare (t);
  attn = sim_xml_first_element (node, "attention");
  if (attn != NULL &&
      (!sim_xml_get_double (path, attn, "forward-efficiency", 0.01, 1.0, &t->attn_fwd_efficiency, error) ||
       !sim_xml_get_double (path, attn, "backward-efficiency", 0.01, 1.0, &t->attn_bwd_efficiency, error)))
    return FALSE;
  /* the other kernels' rates, each a forward and backward pair or neither */
  if (attn != NULL && xmlHasProp (attn, (const xmlChar *) "cudnn-forward-efficiency") &&
      (!sim_xml_get_double (path, attn, "cudnn-forward-efficiency", 0.01, 1.0, &t->attn_cudnn_fwd_efficiency,
                            error) ||
       !sim_xml_get_double (path, attn, "cudnn-backward-efficiency", 0.01, 1.0, &t->attn_cudnn_bwd_efficiency,
                            error)))
    return FALSE;
  if (attn != NULL && xmlHasProp (attn, (const xmlChar *) "flash2-forward-efficiency") &&
      (!sim_xml_get_double (path, attn, "flash2-forward-efficiency", 0.01, 1.0, &t->attn_flash2_fwd_efficiency,
                            error) ||
       !sim_xml_get_double (path, attn, "flash2-backward-efficiency", 0.01, 1.0,
                            &t->attn_flash2_bwd_efficiency, error)))
    return FALSE;
  eff = sim_xml_first_element (node, "efficiency");
  if (eff != NULL && !read_efficiency (path, eff, &t->eff, error))
    return FALSE;
  if (t->peak_flop_per_s[SIM_DTYPE_BF16] <= 0 && t->peak_flop_per_s[SIM_DTYPE_FP16] <= 0) {
    g_autofree char *shown = sim_xml_shorten (t->id);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: <gpu-type id=\"%s\">: expected a <peak dtype=\"bf16\"> or fp16 rate",
                 path, sim_xml_attr_line (node, NULL), shown);
    return FALSE;
  }
  return TRUE;
}

static int
add_vertex (SimTopology *topo, SimVertexKind kind, char *id, int node, double latency_s)
{
  SimVertex v = { kind, id, node, -1, -1, FALSE, 0.0, latency_s, 0 };
  g_array_append_val (topo->vertices, v);
  return (int) topo->vertices->len - 1;
}

static void
add_link (SimTopology *topo, int a, int b, SimLinkKind kind, double bw, double lat)
{
  SimLink l = { a, b, kind, bw, lat };
  g_array_append_val (topo->links, l);
}

typedef struct {
  double nvlink_bw, nvlink_lat, nvswitch_lat, sharp_bw;
  gboolean has_nvlink, sharp;
  double pcie_bw, pcie_lat;
  double nic_bw, nic_lat;
  guint64 nics, gpus;
  double switch_lat, cable_lat, oversub;
  guint64 nodes_per_leaf;
  gboolean rail;
} ClusterSpec;

/* "<p><x><q><y>" (y < 0: "<p><x><q>"), as g_strdup_printf ("%s%d%s%d")
 * writes it but without its format parsing, which took a sixth of the
 * time of sim on 131,072 GPUs (two names per GPU) */
static char *
vertex_name (const char *p, gint64 x, const char *q, gint64 y)
{
  char buf[96], *w = buf;
  gint64 v[2] = { x, y };
  const char *lit[2] = { p, q };
  for (int i = 0; i < 2; i++) {
    char digits[24];
    int n = 0;
    guint64 u;
    gsize len = strlen (lit[i]);
    g_assert (len < 24);
    memcpy (w, lit[i], len);
    w += len;
    if (i == 1 && y < 0)
      break;
    if (v[i] < 0)
      *w++ = '-';
    u = v[i] < 0 ? (guint64) 0 - (guint64) v[i] : (guint64) v[i];
    do
      digits[n++] = (char) ('0' + u % 10);
    while ((u /= 10) > 0);
    while (n > 0)
      *w++ = digits[--n];
  }
  *w = '\0';
  return g_strdup (buf);
}

static void
expand_cluster (SimTopology *topo, const ClusterSpec *c, int gpu_type, int n_nodes)
{
  int n_groups = (int) ((n_nodes + c->nodes_per_leaf - 1) / c->nodes_per_leaf);
  int rails = c->rail ? (int) c->nics : 1;
  int n_leaves = n_groups * rails;
  g_autofree int *leaf = g_new0 (int, n_leaves);
  int spine = -1;

  for (int g = 0; g < n_groups; g++)
    for (int r = 0; r < rails; r++)
      leaf[g * rails + r] =
          add_vertex (topo, SIM_VERTEX_LEAF,
                      vertex_name ("leaf-g", g, c->rail ? "-rail" : "", c->rail ? r : -1),
                      -1, c->switch_lat);
  if (n_leaves > 1)
    spine = add_vertex (topo, SIM_VERTEX_SPINE, g_strdup ("spine"), -1, c->switch_lat);

  for (int n = 0; n < n_nodes; n++) {
    int hub = -1;
    g_autofree int *nic = g_new0 (int, c->nics);
    int g = n / (int) c->nodes_per_leaf;

    if (c->has_nvlink) {
      hub = add_vertex (topo, SIM_VERTEX_NVSWITCH, vertex_name ("n", n, "-nvswitch", -1), n,
                        c->nvswitch_lat);
      g_array_index (topo->vertices, SimVertex, hub).sharp = c->sharp;
      g_array_index (topo->vertices, SimVertex, hub).sharp_bw_bytes_per_s = c->sharp ? c->sharp_bw : 0.0;
    } else {
      hub = add_vertex (topo, SIM_VERTEX_PCIE_SWITCH, vertex_name ("n", n, "-pcie", -1), n, 0.0);
    }
    for (guint64 k = 0; k < c->nics; k++) {
      nic[k] = add_vertex (topo, SIM_VERTEX_NIC, vertex_name ("n", n, "-nic", (gint64) k),
                           n, c->nic_lat);
      add_link (topo, nic[k], leaf[g * rails + (c->rail ? (int) k : 0)], SIM_LINK_INFINIBAND,
                c->nic_bw, c->cable_lat);
      if (!c->has_nvlink)
        add_link (topo, nic[k], hub, SIM_LINK_PCIE, c->pcie_bw, c->pcie_lat);
    }
    for (guint64 i = 0; i < c->gpus; i++) {
      int v = add_vertex (topo, SIM_VERTEX_GPU, vertex_name ("n", n, "-gpu", (gint64) i),
                          n, 0.0);
      SimVertex *vx = &g_array_index (topo->vertices, SimVertex, v);
      vx->gpu_type = gpu_type;
      vx->gpu_index = (int) topo->gpus->len;
      g_array_append_val (topo->gpus, v);
      if (c->has_nvlink) {
        add_link (topo, v, hub, SIM_LINK_NVLINK, c->nvlink_bw, c->nvlink_lat);
        /* each GPU reaches the NIC that shares its PCIe switch */
        add_link (topo, v, nic[i * c->nics / c->gpus], SIM_LINK_PCIE, c->pcie_bw, c->pcie_lat);
      } else {
        add_link (topo, v, hub, SIM_LINK_PCIE, c->pcie_bw, c->pcie_lat);
      }
    }
  }

  /* leaf uplinks carry what the leaf's downlinks can, divided by the
   * oversubscription ratio */
  if (spine >= 0)
    for (int g = 0; g < n_groups; g++) {
      int nodes_here = MIN ((int) c->nodes_per_leaf, n_nodes - g * (int) c->nodes_per_leaf);
      double down = nodes_here * (c->rail ? 1.0 : (double) c->nics) * c->nic_bw;
      for (int r = 0; r < rails; r++)
        add_link (topo, leaf[g * rails + r], spine, SIM_LINK_INFINIBAND, down / c->oversub,
                  c->cable_lat);
    }
}

/* A NIC bandwidth written in bytes (400GB/s) where bits were meant
 * (400Gb/s): the fastest NICs shipped carry 800 Gb/s = 100 GB/s, so a
 * value in GB/s above that is almost surely a B for a b.  Only a warning:
 * the file is valid, and a future NIC may be that fast. */
#define NIC_PLAUSIBLE_MAX_BYTES_PER_S 100e9

static void
check_nic_unit (SimTopology *topo, const char *path, xmlNode *nic, double bw_bytes_per_s)
{
  g_autofree char *text = (char *) xmlGetProp (nic, (const xmlChar *) "bandwidth");
  const char *unit = NULL;
  if (text == NULL || bw_bytes_per_s <= NIC_PLAUSIBLE_MAX_BYTES_PER_S)
    return;
  unit = text;
  while (*unit != '\0' && (g_ascii_isdigit (*unit) || *unit == '.' || *unit == ' '))
    unit++;
  /* only a byte unit can have been meant as bits */
  if (strchr (unit, 'B') == NULL)
    return;
  {
    g_autofree char *bits = g_strdup (text);
    char *b = strchr (bits + (unit - text), 'B');
    *b = 'b';
    if (topo->warnings == NULL)
      topo->warnings = g_ptr_array_new_with_free_func (g_free);
    g_ptr_array_add (topo->warnings,
                     g_strdup_printf ("%s:%ld: attribute bandwidth of <nic>: %s is %.0f Gb/s, faster than any NIC "
                                      "(800 Gb/s = 100 GB/s); did you mean %s (bits)?",
                                      path, sim_xml_attr_line (nic, "bandwidth"), text,
                                      bw_bytes_per_s * 8 / 1e9, bits));
  }
}

static gboolean
read_cluster (SimTopology *topo, const char *path, xmlNode *cl, int nodes_override,
              int gpus_override, GError **error)
{
  g_autofree char *gpu_type_id = NULL;
  g_autofree char *kind = NULL;
  ClusterSpec c = { 0 };
  guint64 nodes = 0;
  xmlNode *node = NULL, *nvl = NULL, *nvs = NULL, *pcie = NULL, *nic = NULL, *fab = NULL;
  guint64 chips = 0, nvl_gen = 0, nvl_links = 0, pcie_gen = 0;
  int gt = -1;

  if ((node = sim_xml_require (path, cl, "node", error)) == NULL ||
      (pcie = sim_xml_require (path, node, "pcie", error)) == NULL ||
      (nic = sim_xml_require (path, node, "nic", error)) == NULL ||
      (fab = sim_xml_require (path, cl, "fabric", error)) == NULL)
    return FALSE;
  nvl = sim_xml_first_element (node, "nvlink");
  if (nvl != NULL && (nvs = sim_xml_require (path, node, "nvswitch", error)) == NULL)
    return FALSE;

  if (!sim_xml_get_uint (path, cl, "nodes", 1, MAX_NODES, &nodes, error) ||
      !sim_xml_get_string (path, node, "name", &topo->cluster.node_name, error) ||
      !sim_xml_get_string (path, node, "gpu-type", &gpu_type_id, error) ||
      !sim_xml_get_uint (path, node, "gpus", 1, MAX_GPUS_PER_NODE, &c.gpus, error))
    return FALSE;
  if ((gt = gpu_type_of (topo, path, node, "gpu-type", gpu_type_id, error)) < 0)
    return FALSE;
  if (nvl != NULL) {
    c.has_nvlink = TRUE;
    double achieved = 0;
    if (xmlHasProp (nvl, (const xmlChar *) "achieved-bandwidth") &&
        !sim_xml_get_bandwidth (path, nvl, "achieved-bandwidth", &achieved, error))
      return FALSE;
    if (!sim_xml_get_uint (path, nvl, "generation", 1, 64, &nvl_gen, error) ||
        !sim_xml_get_uint (path, nvl, "links", 1, 1024, &nvl_links, error) ||
        !sim_xml_get_bandwidth (path, nvl, "bandwidth", &c.nvlink_bw, error) ||
        !sim_xml_get_time (path, nvl, "latency", &c.nvlink_lat, error) ||
        !sim_xml_get_uint (path, nvs, "chips", 1, 1024, &chips, error) ||
        !sim_xml_get_bool (path, nvs, "sharp", &c.sharp, error) ||
        !sim_xml_get_time (path, nvs, "latency", &c.nvswitch_lat, error))
      return FALSE;
    if (achieved > 0)
      c.nvlink_bw = MIN (achieved, c.nvlink_bw);
    if (xmlHasProp (nvs, (const xmlChar *) "sharp-bandwidth") &&
        !sim_xml_get_bandwidth (path, nvs, "sharp-bandwidth", &c.sharp_bw, error))
      return FALSE;
  }
  topo->cluster.nvswitch_chips = (int) chips;
  if (!sim_xml_get_uint (path, pcie, "generation", 1, 64, &pcie_gen, error) ||
      !sim_xml_get_bandwidth (path, pcie, "bandwidth", &c.pcie_bw, error) ||
      !sim_xml_get_time (path, pcie, "latency", &c.pcie_lat, error) ||
      !sim_xml_get_string (path, nic, "name", &topo->cluster.nic_name, error) ||
      !sim_xml_get_uint (path, nic, "count", 1, MAX_GPUS_PER_NODE, &c.nics, error) ||
      !sim_xml_get_bandwidth (path, nic, "bandwidth", &c.nic_bw, error) ||
      !sim_xml_get_time (path, nic, "latency", &c.nic_lat, error) ||
      !sim_xml_get_string (path, fab, "kind", &kind, error) ||
      !sim_xml_get_string (path, fab, "name", &topo->cluster.fabric_name, error) ||
      !sim_xml_get_uint (path, fab, "nodes-per-leaf", 1, MAX_NODES, &c.nodes_per_leaf, error) ||
      !sim_xml_get_double (path, fab, "oversubscription", 1.0, 1024.0, &c.oversub, error) ||
      !sim_xml_get_time (path, fab, "switch-latency", &c.switch_lat, error) ||
      !sim_xml_get_time (path, fab, "cable-latency", &c.cable_lat, error))
    return FALSE;
  c.rail = g_str_equal (kind, "rail-optimized");
  if (xmlHasProp (nic, (const xmlChar *) "in-order-delivery")) {
    gboolean in_order = TRUE;
    if (!sim_xml_get_bool (path, nic, "in-order-delivery", &in_order, error))
      return FALSE;
    topo->cluster.nic_out_of_order = !in_order;
  }
  check_nic_unit (topo, path, nic, c.nic_bw);
  topo->file_gpus_per_node = (int) c.gpus;
  if (gpus_override > 0) {
    if ((guint64) gpus_override > c.gpus) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s: a part of a node: expected at most the %" G_GUINT64_FORMAT " GPUs of its node, got %d",
                   path, c.gpus, gpus_override);
      return FALSE;
    }
    c.gpus = (guint64) gpus_override;
  }

  /* the file's own count, then a resize: checked before expanding */
  if (nodes_override <= 0 && (nodes * c.gpus > SIM_TOPOLOGY_MAX_GPUS || nodes * c.nics > SIM_TOPOLOGY_MAX_GPUS)) {
    gboolean gpus = nodes * c.gpus > SIM_TOPOLOGY_MAX_GPUS;
    g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                 "%s:%ld: attribute nodes of <cluster>: expected at most %d %s in all, got %" G_GUINT64_FORMAT
                 " nodes x %" G_GUINT64_FORMAT " = %" G_GUINT64_FORMAT,
                 path, sim_xml_attr_line (cl, "nodes"), SIM_TOPOLOGY_MAX_GPUS, gpus ? "GPUs" : "NICs", nodes,
                 gpus ? c.gpus : c.nics, nodes * (gpus ? c.gpus : c.nics));
    return FALSE;
  }
  if (nodes_override > 0)
    nodes = (guint64) nodes_override;
  if (nodes > MAX_NODES) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: resizing to %" G_GUINT64_FORMAT " nodes: expected at most %d nodes", path, nodes,
                 MAX_NODES);
    return FALSE;
  }
  if (nodes * c.gpus > SIM_TOPOLOGY_MAX_GPUS || nodes * c.nics > SIM_TOPOLOGY_MAX_GPUS) {
    gboolean gpus = nodes * c.gpus > SIM_TOPOLOGY_MAX_GPUS;
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: resizing to %" G_GUINT64_FORMAT " nodes: expected at most %d %s in all, got %"
                 G_GUINT64_FORMAT " nodes x %" G_GUINT64_FORMAT " = %" G_GUINT64_FORMAT
                 " (at most %" G_GUINT64_FORMAT " nodes of this kind)",
                 path, nodes, SIM_TOPOLOGY_MAX_GPUS, gpus ? "GPUs" : "NICs", nodes, gpus ? c.gpus : c.nics,
                 nodes * (gpus ? c.gpus : c.nics), SIM_TOPOLOGY_MAX_GPUS / MAX (c.gpus, c.nics));
    return FALSE;
  }
  topo->n_nodes = (int) nodes;
  topo->gpus_per_node = (int) c.gpus;
  topo->cluster.present = TRUE;
  topo->cluster.nics_per_node = (int) c.nics;
  topo->cluster.nic_bw_bytes_per_s = c.nic_bw;
  topo->cluster.nvlink_bw_bytes_per_s = c.has_nvlink ? c.nvlink_bw : 0.0;
  topo->cluster.nvlink_generation = (int) nvl_gen;
  topo->cluster.nvlink_links = (int) nvl_links;
  topo->cluster.pcie_generation = (int) pcie_gen;
  topo->cluster.rail_optimized = c.rail;
  expand_cluster (topo, &c, gt, (int) nodes);
  return TRUE;
}

/* a <gpu> of the graph; returns its vertex, or -1 with error set */
static int
read_graph_gpu (SimTopology *topo, const char *path, xmlNode *n, const char *id, guint64 node,
                GError **error)
{
  g_autofree char *type = NULL;
  int gt = -1, v = -1;

  if (!sim_xml_get_string (path, n, "type", &type, error))
    return -1;
  if ((gt = gpu_type_of (topo, path, n, "type", type, error)) < 0)
    return -1;
  v = add_vertex (topo, SIM_VERTEX_GPU, g_strdup (id), (int) node, 0.0);
  g_array_index (topo->vertices, SimVertex, v).gpu_type = gt;
  g_array_index (topo->vertices, SimVertex, v).line = (int) sim_xml_attr_line (n, NULL);
  return v;
}

/* a <switch> of the graph; returns its vertex, or -1 with error set */
static int
read_graph_switch (SimTopology *topo, const char *path, xmlNode *n, const char *id, guint64 node,
                   double lat, GError **error)
{
  g_autofree char *kind = NULL;
  SimVertexKind k = SIM_VERTEX_LEAF;
  gboolean sharp = FALSE;
  double sharp_bw = 0.0;
  int v = -1;

  if (!sim_xml_get_string (path, n, "kind", &kind, error))
    return -1;
  if (g_str_equal (kind, "nvswitch"))
    k = SIM_VERTEX_NVSWITCH;
  else if (g_str_equal (kind, "pcie"))
    k = SIM_VERTEX_PCIE_SWITCH;
  else if (g_str_equal (kind, "spine"))
    k = SIM_VERTEX_SPINE;
  if (xmlHasProp (n, (const xmlChar *) "sharp") &&
      !sim_xml_get_bool (path, n, "sharp", &sharp, error))
    return -1;
  if (xmlHasProp (n, (const xmlChar *) "sharp-bandwidth") &&
      !sim_xml_get_bandwidth (path, n, "sharp-bandwidth", &sharp_bw, error))
    return -1;
  v = add_vertex (topo, k, g_strdup (id),
                  xmlHasProp (n, (const xmlChar *) "node") ? (int) node : -1, lat);
  g_array_index (topo->vertices, SimVertex, v).sharp = sharp;
  g_array_index (topo->vertices, SimVertex, v).sharp_bw_bytes_per_s = sharp ? sharp_bw : 0.0;
  return v;
}

/* one device of the graph (<gpu>, <nic> or <switch>), its id recorded in ids */
static gboolean
read_graph_vertex (SimTopology *topo, const char *path, xmlNode *n, GHashTable *ids,
                   GArray *gpu_nodes, int *max_node, GError **error)
{
  g_autofree char *id = NULL;
  guint64 node = 0;
  double lat = 0.0;
  int v = -1;

  if (!sim_xml_get_string (path, n, "id", &id, error))
    return FALSE;
  if (g_hash_table_contains (ids, id)) {
    g_autofree char *shown = sim_xml_shorten (id);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute id of <%s>: expected a unique id, '%s' is used twice", path,
                 sim_xml_attr_line (n, "id"), (const char *) n->name, shown);
    return FALSE;
  }
  if (xmlHasProp (n, (const xmlChar *) "node") &&
      !sim_xml_get_uint (path, n, "node", 0, MAX_NODES - 1, &node, error))
    return FALSE;
  if (xmlHasProp (n, (const xmlChar *) "latency") &&
      !sim_xml_get_time (path, n, "latency", &lat, error))
    return FALSE;

  if (sim_xml_is (n, "gpu")) {
    if (gpu_nodes->len >= SIM_TOPOLOGY_MAX_GPUS) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY, "%s:%ld: <gpu>: expected at most %d GPUs in all",
                   path, sim_xml_attr_line (n, NULL), SIM_TOPOLOGY_MAX_GPUS);
      return FALSE;
    }
    v = read_graph_gpu (topo, path, n, id, node, error);
    if (v < 0)
      return FALSE;
    g_array_append_val (gpu_nodes, v);
    *max_node = MAX (*max_node, (int) node);
  } else if (sim_xml_is (n, "nic")) {
    v = add_vertex (topo, SIM_VERTEX_NIC, g_strdup (id), (int) node, lat);
  } else {
    v = read_graph_switch (topo, path, n, id, node, lat, error);
    if (v < 0)
      return FALSE;
  }
  g_hash_table_insert (ids, g_array_index (topo->vertices, SimVertex, v).id,
                       GINT_TO_POINTER (v + 1));
  return TRUE;
}

static gboolean
read_graph_link (SimTopology *topo, const char *path, xmlNode *n, GHashTable *ids,
                 GError **error)
{
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  g_autofree char *kind = NULL;
  double bw = 0, lat = 0;
  int va = 0, vb = 0;
  SimLinkKind k = SIM_LINK_NVLINK;

  if (!sim_xml_get_string (path, n, "a", &a, error) ||
      !sim_xml_get_string (path, n, "b", &b, error) ||
      !sim_xml_get_string (path, n, "kind", &kind, error) ||
      !sim_xml_get_bandwidth (path, n, "bandwidth", &bw, error) ||
      !sim_xml_get_time (path, n, "latency", &lat, error))
    return FALSE;
  va = GPOINTER_TO_INT (g_hash_table_lookup (ids, a)) - 1;
  vb = GPOINTER_TO_INT (g_hash_table_lookup (ids, b)) - 1;
  if (va < 0 || vb < 0) {
    g_autofree char *shown = sim_xml_shorten (va < 0 ? a : b);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute %s of <link>: expected the id of a device, got unknown '%s'",
                 path, sim_xml_attr_line (n, va < 0 ? "a" : "b"), va < 0 ? "a" : "b", shown);
    return FALSE;
  }
  if (va == vb) {
    g_autofree char *shown = sim_xml_shorten (a);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: <link>: expected two different devices, got '%s' twice", path,
                 sim_xml_attr_line (n, "b"), shown);
    return FALSE;
  }
  if (g_str_equal (kind, "pcie"))
    k = SIM_LINK_PCIE;
  else if (g_str_equal (kind, "infiniband"))
    k = SIM_LINK_INFINIBAND;
  else if (g_str_equal (kind, "ethernet"))
    k = SIM_LINK_ETHERNET;
  add_link (topo, va, vb, k, bw, lat);
  return TRUE;
}

/* GPUs are numbered in node order, then in document order: a counting
 * sort, linear in GPUs + nodes (a GPU on node 65535 must not cost a pass
 * over every GPU per node) */
static gboolean
number_graph_gpus (SimTopology *topo, const char *path, xmlNode *graph, GArray *gpu_nodes,
                   int max_node, GError **error)
{
  g_autofree guint *first = g_new0 (guint, (gsize) max_node + 2);
  g_autofree int *order = g_new (int, MAX (gpu_nodes->len, 1));

  for (guint i = 0; i < gpu_nodes->len; i++)
    first[g_array_index (topo->vertices, SimVertex, g_array_index (gpu_nodes, int, i)).node + 1]++;
  for (int node = 0; node <= max_node; node++)
    first[node + 1] += first[node];
  for (guint i = 0; i < gpu_nodes->len; i++) {
    int v = g_array_index (gpu_nodes, int, i);
    order[first[g_array_index (topo->vertices, SimVertex, v).node]++] = v;
  }
  for (guint i = 0; i < gpu_nodes->len; i++) {
    int v = order[i];
    g_array_index (topo->vertices, SimVertex, v).gpu_index = (int) topo->gpus->len;
    g_array_append_val (topo->gpus, v);
  }
  if (topo->gpus->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY, "%s:%ld: <graph>: expected at least one <gpu>",
                 path, sim_xml_attr_line (graph, NULL));
    return FALSE;
  }
  topo->n_nodes = max_node + 1;
  {
    g_autofree int *count = g_new0 (int, topo->n_nodes);
    for (guint i = 0; i < topo->gpus->len; i++)
      count[g_array_index (topo->vertices, SimVertex, g_array_index (topo->gpus, int, i)).node]++;
    topo->gpus_per_node = count[0];
    for (int n = 0; n < topo->n_nodes; n++)
      if (count[n] != count[0])
        topo->gpus_per_node = 0;
  }
  return TRUE;
}

static gboolean
read_graph (SimTopology *topo, const char *path, xmlNode *graph, int nodes_override,
            GError **error)
{
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) gpu_nodes = g_array_new (FALSE, FALSE, sizeof (int));
  int max_node = -1;

  if (nodes_override > 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: is an explicit graph and cannot be resized to another node count; expected a <cluster> topology",
                 path);
    return FALSE;
  }
  /* vertices first, so links may name devices declared after them */
  for (xmlNode *n = sim_xml_first_element (graph, NULL); n != NULL;
       n = sim_xml_next_element (n, NULL))
    if (!sim_xml_is (n, "link") &&
        !read_graph_vertex (topo, path, n, ids, gpu_nodes, &max_node, error))
      return FALSE;
  for (xmlNode *n = sim_xml_first_element (graph, "link"); n != NULL;
       n = sim_xml_next_element (n, "link"))
    if (!read_graph_link (topo, path, n, ids, error))
      return FALSE;
  return number_graph_gpus (topo, path, graph, gpu_nodes, max_node, error);
}

/* every GPU must reach GPU 0; a GPU that cannot is a topology error */
static gboolean
check_connected (SimTopology *topo, GError **error)
{
  guint nv = topo->vertices->len;
  g_autofree int *head = g_new (int, nv);
  g_autofree int *next = g_new (int, 2 * topo->links->len);
  g_autofree int *to = g_new (int, 2 * topo->links->len);
  g_autofree gboolean *seen = g_new0 (gboolean, nv);
  g_autofree int *queue = g_new (int, nv);
  int qh = 0, qt = 0;

  for (guint i = 0; i < nv; i++)
    head[i] = -1;
  for (guint i = 0; i < topo->links->len; i++) {
    SimLink *l = &g_array_index (topo->links, SimLink, i);
    to[2 * i] = l->b;
    next[2 * i] = head[l->a];
    head[l->a] = (int) (2 * i);
    to[2 * i + 1] = l->a;
    next[2 * i + 1] = head[l->b];
    head[l->b] = (int) (2 * i + 1);
  }
  queue[qt++] = g_array_index (topo->gpus, int, 0);
  seen[queue[0]] = TRUE;
  while (qh < qt) {
    int v = queue[qh++];
    for (int e = head[v]; e >= 0; e = next[e])
      if (!seen[to[e]]) {
        seen[to[e]] = TRUE;
        queue[qt++] = to[e];
      }
  }
  for (guint i = 0; i < topo->gpus->len; i++) {
    int v = g_array_index (topo->gpus, int, i);
    if (!seen[v]) {
      const SimVertex *lost = &g_array_index (topo->vertices, SimVertex, v);
      g_autofree char *from = sim_xml_shorten (g_array_index (topo->vertices, SimVertex, queue[0]).id);
      g_autofree char *to_id = sim_xml_shorten (lost->id);
      g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                   "%s:%d: expected every GPU to reach every other, but there is no route from %s to %s",
                   topo->path, lost->line > 0 ? lost->line : 1,
                   from, to_id);
      return FALSE;
    }
  }
  return TRUE;
}

/* The file a <gpu-type calibration="FILE"> names: FILE is relative to the
 * topology's folder and must stay inside it once symbolic links and ".."
 * are resolved, so a topology from elsewhere cannot make sim read
 * /dev/zero, a FIFO or ../../etc/passwd.  Returns the path to read (caller
 * g_free()s; sim_input_read then insists on a regular file), or NULL with
 * SIM_ERROR_TOPOLOGY naming the attribute. */
static char *
calibration_path (const char *path, xmlNode *g, GError **error)
{
  g_autofree char *rel = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *joined = NULL;
  g_autofree char *real_dir = NULL;
  g_autofree char *real = NULL;
  long line = sim_xml_attr_line (g, "calibration");
  gsize n = 0;

  if (!sim_xml_get_string (path, g, "calibration", &rel, error))
    return NULL;
  shown = sim_xml_shorten (rel);
  if (*rel == '\0' || g_path_is_absolute (rel)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                 "%s:%ld: attribute calibration of <gpu-type>: expected a file name relative to the "
                 "topology's folder, got '%s'", path, line, shown);
    return NULL;
  }
  /* ".." that climbs above the folder, whatever the folder holds */
  {
    g_auto (GStrv) parts = g_strsplit (rel, G_DIR_SEPARATOR_S, -1);
    int depth = 0;
    for (guint i = 0; parts[i] != NULL && depth >= 0; i++)
      if (g_str_equal (parts[i], ".."))
        depth--;
      else if (parts[i][0] != '\0' && !g_str_equal (parts[i], "."))
        depth++;
    if (depth < 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                   "%s:%ld: attribute calibration of <gpu-type>: expected a file in the topology's folder, "
                   "'%s' leads outside it", path, line, shown);
      return NULL;
    }
  }
  dir = g_path_get_dirname (path);
  joined = g_build_filename (dir, rel, NULL);
  real_dir = realpath (dir, NULL);
  real = realpath (joined, NULL);
  if (real_dir == NULL || real == NULL) {
    int err = errno;
    g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                 "%s:%ld: attribute calibration of <gpu-type>: expected a file in the topology's folder, "
                 "cannot read '%s': %s", path, line, shown, g_strerror (err));
    return NULL;
  }
  n = strlen (real_dir);
  if (strncmp (real, real_dir, n) != 0 || (real[n] != G_DIR_SEPARATOR && !g_str_equal (real_dir, "/"))) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                 "%s:%ld: attribute calibration of <gpu-type>: expected a file in the topology's folder, "
                 "'%s' leads outside it", path, line, shown);
    return NULL;
  }
  return g_steal_pointer (&joined);
}

/* <gpu-type ref="ID" [id="MINE"]/>: the <gpu-type> of that id in the first
 * shipped cluster file (sim_paths_list order) that has one, read from
 * there, under this file's id when one is given */
static gboolean
read_gpu_type_ref (SimTopology *topo, const char *path, xmlNode *node, GError **error)
{
  g_autofree char *ref = NULL, *id = NULL;
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) names = sim_paths_list ("topologies", files);
  g_autoptr (GPtrArray) known = g_ptr_array_new_with_free_func (g_free);
  SimGpuType *t = NULL;

  if (!sim_xml_get_string (path, node, "ref", &ref, error))
    return FALSE;
  if (xmlHasProp (node, (const xmlChar *) "id") && !sim_xml_get_string (path, node, "id", &id, error))
    return FALSE;
  for (guint i = 0; i < files->len && t == NULL; i++) {
    const char *file = g_ptr_array_index (files, i);
    g_autoptr (GError) ignored = NULL;
    g_autoptr (xmlDoc) doc = g_str_equal (file, path) ? NULL : sim_xml_load (file, &ignored);
    xmlNode *root = doc != NULL ? xmlDocGetRootElement (doc) : NULL;
    if (root == NULL || !sim_xml_is (root, "topology"))
      continue;
    for (xmlNode *g = sim_xml_first_element (root, "gpu-type"); g != NULL;
         g = sim_xml_next_element (g, "gpu-type")) {
      g_autofree char *gid = NULL;
      if (xmlHasProp (g, (const xmlChar *) "ref") || !sim_xml_get_string (file, g, "id", &gid, NULL))
        continue;
      if (!g_str_equal (gid, ref)) {
        if (!g_ptr_array_find_with_equal_func (known, gid, g_str_equal, NULL))
          g_ptr_array_add (known, g_steal_pointer (&gid));
        continue;
      }
      if (!read_gpu_type (topo, file, g, error))
        return FALSE;
      t = g_ptr_array_index (topo->gpu_types, topo->gpu_types->len - 1);
      break;
    }
  }
  if (t == NULL) {
    g_autofree char *shown = sim_xml_shorten (ref);
    const char *near = sim_paths_closest (ref, (const char *const *) known->pdata, known->len);
    g_autofree char *list = NULL;
    g_ptr_array_add (known, NULL);
    list = g_strjoinv (", ", (char **) known->pdata);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute ref of <gpu-type>: expected the id of a shipped GPU type (%s), got '%s'%s%s%s",
                 path, sim_xml_attr_line (node, "ref"), list, shown, near != NULL ? "; did you mean '" : "",
                 near != NULL ? near : "", near != NULL ? "'?" : "");
    return FALSE;
  }
  if (id != NULL) {
    g_free (t->id);
    t->id = g_steal_pointer (&id);
  }
  if (find_gpu_type (topo, t->id) != (int) topo->gpu_types->len - 1) {
    g_autofree char *shown = sim_xml_shorten (t->id);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute id of <gpu-type>: expected a unique id, '%s' is used twice", path,
                 sim_xml_attr_line (node, xmlHasProp (node, (const xmlChar *) "id") ? "id" : "ref"), shown);
    return FALSE;
  }
  return TRUE;
}

SimTopology *
sim_topology_load (const char *path, int nodes_override, GError **error)
{
  return sim_topology_load_part (path, nodes_override, 0, error);
}

SimTopology *
sim_topology_load_part (const char *path, int nodes_override, int gpus_override, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (SimTopology) topo = g_new0 (SimTopology, 1);
  xmlNode *root = NULL;
  xmlNode *form = NULL;

  topo->path = g_strdup (path);
  topo->gpu_types = g_ptr_array_new_with_free_func (gpu_type_free);
  topo->vertices = g_array_new (FALSE, TRUE, sizeof (SimVertex));
  g_array_set_clear_func (topo->vertices, vertex_clear);
  topo->links = g_array_new (FALSE, TRUE, sizeof (SimLink));
  topo->gpus = g_array_new (FALSE, FALSE, sizeof (int));

  doc = sim_xml_load (path, error);
  if (doc == NULL)
    return NULL;
  root = xmlDocGetRootElement (doc);
  if (!sim_xml_is (root, "topology")) {
    g_autofree char *shown = sim_xml_shorten ((const char *) root->name);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: expected a <topology> document, got <%s>",
                 path, sim_xml_attr_line (root, NULL), shown);
    return NULL;
  }
  if (!sim_xml_get_string (path, root, "name", &topo->name, error) ||
      !sim_xml_get_string (path, root, "description", &topo->description, error))
    return NULL;
  for (xmlNode *g = sim_xml_first_element (root, "gpu-type"); g != NULL;
       g = sim_xml_next_element (g, "gpu-type")) {
    g_autofree char *id = NULL;
    if (xmlHasProp (g, (const xmlChar *) "ref")) {
      if (!read_gpu_type_ref (topo, path, g, error))
        return NULL;
      continue;
    }
    if (!sim_xml_get_string (path, g, "id", &id, error))
      return NULL;
    if (find_gpu_type (topo, id) >= 0) {
      g_autofree char *shown = sim_xml_shorten (id);
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                   "%s:%ld: attribute id of <gpu-type>: expected a unique id, '%s' is used twice",
                   path, sim_xml_attr_line (g, "id"), shown);
      return NULL;
    }
    if (!read_gpu_type (topo, path, g, error))
      return NULL;
  }
  if (topo->gpu_types->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: <topology>: expected a <gpu-type> element inside",
                 path, sim_xml_attr_line (root, NULL));
    return NULL;
  }
  form = sim_xml_first_element (root, "cluster");
  if (form != NULL) {
    if (!read_cluster (topo, path, form, nodes_override, gpus_override, error))
      return NULL;
  } else {
    form = sim_xml_require (path, root, "graph", error);
    if (form != NULL && gpus_override > 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                   "%s: a part of a node needs the <cluster> form; this file is a <graph>", path);
      return NULL;
    }
    if (form == NULL || !read_graph (topo, path, form, nodes_override, error))
      return NULL;
  }
  if (!check_connected (topo, error))
    return NULL;
  if (!sim_xml_validate (doc, path, "topology.rng", error))
    return NULL;
  /* a gpu-type may name the calibration of its measured rates: recorded
   * here, loaded and applied by sim_calibration_load_topology */
  {
    guint i = 0;
    for (xmlNode *g = sim_xml_first_element (root, "gpu-type"); g != NULL;
         g = sim_xml_next_element (g, "gpu-type"), i++) {
      SimGpuType *t = g_ptr_array_index (topo->gpu_types, i);
      if (!xmlHasProp (g, (const xmlChar *) "calibration"))
        continue;
      if ((t->calibration_path = calibration_path (path, g, error)) == NULL)
        return NULL;
    }
  }
  return g_steal_pointer (&topo);
}

SimTopology *
sim_topology_copy_links (const SimTopology *topo)
{
  SimTopology *t = g_new (SimTopology, 1);
  *t = *topo;
  t->name = g_strdup (topo->name);
  t->description = g_strdup (topo->description);
  t->path = g_strdup (topo->path);
  t->gpu_types = g_ptr_array_ref (topo->gpu_types);
  t->vertices = g_array_ref (topo->vertices);
  t->links = g_array_copy (topo->links);
  t->gpus = g_array_ref (topo->gpus);
  t->cluster.node_name = g_strdup (topo->cluster.node_name);
  t->cluster.nic_name = g_strdup (topo->cluster.nic_name);
  t->cluster.fabric_name = g_strdup (topo->cluster.fabric_name);
  t->warnings = topo->warnings != NULL ? g_ptr_array_ref (topo->warnings) : NULL;
  return t;
}

/* whether vertex v is a fabric switch */
static gboolean
fabric (const SimTopology *topo, int v)
{
  SimVertexKind k = g_array_index (topo->vertices, SimVertex, v).kind;
  return k == SIM_VERTEX_LEAF || k == SIM_VERTEX_SPINE;
}

GArray *
sim_topology_gpu_links (const SimTopology *topo, int gpu, gboolean nic)
{
  int v = g_array_index (topo->gpus, int, gpu);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) nics = g_array_new (FALSE, FALSE, sizeof (int));
  /* the GPU's NVLinks, or the NICs attached to it */
  for (guint i = 0; i < topo->links->len; i++) {
    const SimLink *l = &g_array_index (topo->links, SimLink, i);
    int other = l->a == v ? l->b : l->b == v ? l->a : -1;
    if (other < 0)
      continue;
    if (!nic && l->kind == SIM_LINK_NVLINK)
      g_array_append_val (out, i);
    else if (nic && g_array_index (topo->vertices, SimVertex, other).kind == SIM_VERTEX_NIC)
      g_array_append_val (nics, other);
  }
  /* those NICs' links to the fabric: their ports */
  for (guint i = 0; i < topo->links->len && nics->len > 0; i++) {
    const SimLink *l = &g_array_index (topo->links, SimLink, i);
    for (guint k = 0; k < nics->len; k++) {
      int x = g_array_index (nics, int, k);
      if ((l->a == x && fabric (topo, l->b)) || (l->b == x && fabric (topo, l->a))) {
        g_array_append_val (out, i);
        break;
      }
    }
  }
  return out;
}

int
sim_topology_slow_gpu_links (SimTopology *topo, int gpu, gboolean nic, double factor)
{
  g_autoptr (GArray) links = sim_topology_gpu_links (topo, gpu, nic);
  for (guint k = 0; k < links->len; k++)
    g_array_index (topo->links, SimLink, g_array_index (links, guint, k)).bw_bytes_per_s /= factor;
  return (int) links->len;
}

int
sim_topology_n_gpus (const SimTopology *topo)
{
  return (int) topo->gpus->len;
}

const SimVertex *
sim_topology_gpu (const SimTopology *topo, int gpu)
{
  g_return_val_if_fail (gpu >= 0 && (guint) gpu < topo->gpus->len, NULL);
  return &g_array_index (topo->vertices, SimVertex, g_array_index (topo->gpus, int, gpu));
}

const SimGpuType *
sim_topology_gpu_type (const SimTopology *topo, int gpu)
{
  const SimVertex *v = sim_topology_gpu (topo, gpu);
  return v != NULL ? g_ptr_array_index (topo->gpu_types, v->gpu_type) : NULL;
}

gboolean
sim_topology_check_one_gpu_type (const SimTopology *topo, GError **error)
{
  for (int g = 1; g < sim_topology_n_gpus (topo); g++)
    if (sim_topology_gpu (topo, g)->gpu_type != sim_topology_gpu (topo, 0)->gpu_type) {
      const SimVertex *odd = sim_topology_gpu (topo, g);
      g_autofree char *odd_id = sim_xml_shorten (odd->id);
      g_autofree char *first_id = sim_xml_shorten (sim_topology_gpu (topo, 0)->id);
      g_set_error (error, SIM_ERROR, SIM_ERROR_TOPOLOGY,
                   "%s:%d: expected one GPU type for the whole cluster, but %s differs from %s "
                   "(mixed GPUs are not modelled yet)",
                   topo->path != NULL ? topo->path : topo->name, odd->line > 0 ? odd->line : 1, odd_id,
                   first_id);
      return FALSE;
    }
  return TRUE;
}

static gboolean
efficiency_item (const char *key, const char *value, gpointer data, GError **error)
{
  static const char *const keys[] = { "sustained-clock", "hbm", "kernel-fixed", "host-launch",
                                      "comm-slowdown" };
  SimTopology *topo = data;
  double v = NAN;
  int which = -1;
  for (int k = 0; value != NULL && k < (int) G_N_ELEMENTS (keys); k++)
    if (g_str_equal (key, keys[k]))
      which = k;
  if (which == 2 || which == 3) {
    if (!sim_units_parse_time (value, &v, NULL) || v > 1e-3)
      v = NAN;
  } else if (which >= 0) {
    char *end = NULL;
    v = g_ascii_strtod (value, &end);
    if (end == value || *end != '\0' || v < (which == 4 ? 0.0 : 0.3) || v > 1.0)
      v = NAN;
  }
  if (which < 0 || !isfinite (v)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "efficiency constants: expected KEY=VALUE items with KEY one of sustained-clock, hbm "
                 "(fractions 0.3-1), kernel-fixed, host-launch (times up to 1ms), comm-slowdown "
                 "(fraction 0-1), got '%s%s%s'", key, value != NULL ? "=" : "", value != NULL ? value : "");
    return FALSE;
  }
  for (guint g = 0; g < topo->gpu_types->len; g++) {
    SimEfficiency *e = &((SimGpuType *) g_ptr_array_index (topo->gpu_types, g))->eff;
    e->given = TRUE;
    switch (which) {
    case 0: e->clock = v; break;
    case 1: e->hbm = v; break;
    case 2: e->kernel_fixed_s = v; break;
    case 3: e->host_launch_s = v; break;
    default: e->comm_slowdown = v; break;
    }
  }
  return TRUE;
}

gboolean
sim_topology_set_efficiency (SimTopology *topo, const char *text, GError **error)
{
  return sim_units_foreach_key_value (text, efficiency_item, topo, error);
}
