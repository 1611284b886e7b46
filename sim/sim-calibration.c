#include "sim-calibration.h"
#include "sim-paths.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim-validate.h"
#include "sim-error.h"
#include "sim-gemm.h"
#include "sim-xml.h"

void
sim_calibration_free (SimCalibration *c)
{
  if (c == NULL)
    return;
  g_free (c->path);
  g_free (c->gpu);
  g_clear_pointer (&c->gemm, g_array_unref);
  g_free (c);
}

SimCalibration *
sim_calibration_load (const char *path, GError **error)
{
  g_autoptr (xmlDoc) doc = sim_xml_load (path, error);
  g_autoptr (SimCalibration) c = g_new0 (SimCalibration, 1);
  xmlNode *root, *n;
  if (doc == NULL)
    return NULL;
  c->path = g_strdup (path);
  c->gemm = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  root = xmlDocGetRootElement (doc);
  if (!sim_xml_is (root, "calibration")) {
    g_autofree char *shown = sim_xml_shorten ((const char *) root->name);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: expected a <calibration> document, got <%s>", path,
                 sim_xml_attr_line (root, NULL), shown);
    return NULL;
  }
  if (!sim_xml_get_string (path, root, "gpu", &c->gpu, error))
    return NULL;
  n = sim_xml_first_element (root, "memory");
  if (n != NULL && !sim_xml_get_bandwidth (path, n, "bandwidth", &c->hbm_bw_bytes_per_s, error))
    return NULL;
  for (xmlNode *p = sim_xml_first_element (sim_xml_first_element (root, "gemm"), "point"); p != NULL;
       p = sim_xml_next_element (p, "point")) {
    SimGemmPoint pt = { 0 };
    guint64 m = 0, nn = 0, k = 0;
    if (!sim_xml_get_uint (path, p, "m", 1, 1u << 24, &m, error) ||
        !sim_xml_get_uint (path, p, "n", 1, 1u << 24, &nn, error) ||
        !sim_xml_get_uint (path, p, "k", 1, 1u << 24, &k, error) ||
        !sim_xml_get_flop_rate (path, p, "rate", &pt.flop_per_s, error))
      return NULL;
    pt.m = (double) m, pt.n = (double) nn, pt.k = (double) k;
    g_array_append_val (c->gemm, pt);
  }
  for (xmlNode *l = sim_xml_first_element (root, "link"); l != NULL; l = sim_xml_next_element (l, "link")) {
    g_autofree char *kind = NULL;
    double bw = 0, scale = 0;
    int k = -1;
    gboolean has_bw = xmlHasProp (l, (const xmlChar *) "achieved-bandwidth") != NULL;
    gboolean has_scale = xmlHasProp (l, (const xmlChar *) "latency-scale") != NULL;
    if (!sim_xml_get_string (path, l, "kind", &kind, error) ||
        (has_bw && !sim_xml_get_bandwidth (path, l, "achieved-bandwidth", &bw, error)) ||
        (has_scale && !sim_xml_get_double (path, l, "latency-scale", 0.01, 100.0, &scale, error)))
      return NULL;
    if (!has_bw && !has_scale) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                   "%s:%ld: <link>: expected achieved-bandwidth, latency-scale or both", path,
                   sim_xml_attr_line (l, NULL));
      return NULL;
    }
    for (int i = 0; i < 4; i++)
      if (g_str_equal (kind, sim_link_kind_name ((SimLinkKind) i)))
        k = i;
    if (k < 0) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: attribute kind of <link>: expected nvlink, pcie, infiniband or ethernet",
                   path, sim_xml_attr_line (l, "kind"));
      return NULL;
    }
    c->link_bw[k] = bw;
    c->link_latency_scale[k] = scale;
  }
  if (!sim_xml_validate (doc, path, "calibration.rng", error))
    return NULL;
  return g_steal_pointer (&c);
}

void
sim_calibration_apply (const SimCalibration *c, SimTopology *topo)
{
  for (guint i = 0; i < topo->gpu_types->len; i++) {
    SimGpuType *g = g_ptr_array_index (topo->gpu_types, i);
    if (c->hbm_bw_bytes_per_s > 0) {
      /* a measured sustained rate is already the achievable one: the
       * efficiency's data-sheet fraction no longer applies */
      g->hbm_bw_bytes_per_s = c->hbm_bw_bytes_per_s;
      g->eff.hbm = 1.0;
    }
    if (c->gemm->len > 0) {
      g_array_set_size (g->gemm, 0);
      g_array_append_vals (g->gemm, c->gemm->data, c->gemm->len);
      sim_gemm_prepare (g);
    }
  }
  for (guint i = 0; i < topo->links->len; i++) {
    SimLink *l = &g_array_index (topo->links, SimLink, i);
    if (c->link_bw[l->kind] > 0)
      l->bw_bytes_per_s = MIN (l->bw_bytes_per_s, c->link_bw[l->kind]);
  }
  for (int k = 0; k < 4; k++)
    if (c->link_latency_scale[k] > 0)
      topo->coll_latency_scale[k] = c->link_latency_scale[k];
}

char *
sim_calibration_to_xml (const SimCalibration *c, const char *date, const char *source)
{
  GString *s = g_string_new ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  g_autofree char *gpu = g_markup_escape_text (c->gpu != NULL ? c->gpu : "unknown", -1);
  g_autofree char *src = g_markup_escape_text (source != NULL ? source : "", -1);
  g_string_append (s, "<!-- written by sim calibrate from microbenchmark measurements; see microbench/README.md -->\n");
  g_string_append_printf (s, "<calibration gpu=\"%s\" date=\"%s\" source=\"%s\">\n", gpu, date != NULL ? date : "", src);
  if (c->hbm_bw_bytes_per_s > 0)
    g_string_append_printf (s, "  <memory bandwidth=\"%.6gGB/s\"/>\n", c->hbm_bw_bytes_per_s / 1e9);
  if (c->gemm->len > 0) {
    g_string_append (s, "  <gemm dtype=\"bf16\">\n");
    for (guint i = 0; i < c->gemm->len; i++) {
      const SimGemmPoint *p = &g_array_index (c->gemm, SimGemmPoint, i);
      g_string_append_printf (s, "    <point m=\"%.0f\" n=\"%.0f\" k=\"%.0f\" rate=\"%.6gTFLOP/s\"/>\n", p->m, p->n,
                              p->k, p->flop_per_s / 1e12);
    }
    g_string_append (s, "  </gemm>\n");
  }
  for (int k = 0; k < 4; k++) {
    if (c->link_bw[k] <= 0 && c->link_latency_scale[k] <= 0)
      continue;
    g_string_append_printf (s, "  <link kind=\"%s\"", sim_link_kind_name ((SimLinkKind) k));
    if (c->link_bw[k] > 0)
      g_string_append_printf (s, " achieved-bandwidth=\"%.6gGB/s\"", c->link_bw[k] / 1e9);
    if (c->link_latency_scale[k] > 0)
      g_string_append_printf (s, " latency-scale=\"%.4f\"", c->link_latency_scale[k]);
    g_string_append (s, "/>\n");
  }
  g_string_append (s, "</calibration>\n");
  return g_string_free (s, FALSE);
}

SimTopology *
sim_calibration_load_topology (const char *path, int nodes, const char *calibration, GError **error)
{
  return sim_calibration_load_topology_part (path, nodes, 0, calibration, error);
}

SimTopology *
sim_calibration_load_topology_part (const char *path, int nodes, int gpus_per_node,
                                    const char *calibration, GError **error)
{
  g_autoptr (SimTopology) t = gpus_per_node > 0 ? sim_topology_load_part (path, nodes, gpus_per_node, error)
                                                : sim_topology_load (path, nodes, error);
  if (t == NULL)
    return NULL;
  for (guint i = 0; i < t->gpu_types->len; i++) {
    const SimGpuType *g = g_ptr_array_index (t->gpu_types, i);
    g_autoptr (SimCalibration) c = NULL;
    if (g->calibration_path == NULL)
      continue;
    if ((c = sim_calibration_load (g->calibration_path, error)) == NULL)
      return NULL;
    sim_calibration_apply (c, t);
  }
  if (calibration != NULL) {
    g_autoptr (SimCalibration) c = sim_calibration_load (calibration, error);
    if (c == NULL)
      return NULL;
    sim_calibration_apply (c, t);
  }
  return g_steal_pointer (&t);
}

guint
sim_calibration_fit_gemm (SimCalibration *c, const SimMicrobench *b)
{
  guint n = 0;
  if (c->gemm == NULL)
    c->gemm = g_array_new (FALSE, FALSE, sizeof (SimGemmPoint));
  for (guint i = 0; i < b->rows->len; i++) {
    const SimMicrobenchRow *r = &g_array_index (b->rows, SimMicrobenchRow, i);
    SimGemmPoint p = { r->m, r->n, r->k, r->rate_per_s };
    if (g_str_equal (r->kind, "gemm") && g_str_equal (r->dtype, "bf16")) {
      g_array_append_val (c->gemm, p);
      n++;
    }
  }
  return n;
}

void
sim_calibration_fit_hbm (SimCalibration *c, const SimMicrobench *b)
{
  for (guint i = 0; i < b->rows->len; i++) {
    const SimMicrobenchRow *r = &g_array_index (b->rows, SimMicrobenchRow, i);
    if (g_str_equal (r->kind, "hbm"))
      c->hbm_bw_bytes_per_s = MAX (c->hbm_bw_bytes_per_s, r->rate_per_s);
  }
}

SimNcclResult *
sim_calibration_nccl_from_bench (const SimMicrobench *b, const char *path)
{
  SimNcclResult *r = g_new0 (SimNcclResult, 1);
  r->path = g_strdup (path);
  r->op = SIM_OP_ALL_REDUCE;
  r->rows = g_array_new (FALSE, TRUE, sizeof (SimNcclRow));
  r->avg_busbw_GBps = NAN;
  for (guint i = 0; i < b->rows->len; i++) {
    const SimMicrobenchRow *br = &g_array_index (b->rows, SimMicrobenchRow, i);
    SimNcclRow row = { 0 };
    if (!g_str_equal (br->kind, "nccl") || !g_str_equal (br->op, "all_reduce"))
      continue;
    row.size_bytes = br->bytes;
    row.count = br->bytes / 4;
    row.time_us = br->time_us;
    row.busbw_GBps = br->rate_per_s / 1e9;
    row.algbw_GBps = br->time_us > 0 ? br->bytes / (br->time_us * 1e3) : 0;
    row.time_us_inplace = NAN;
    row.busbw_GBps_inplace = NAN;
    r->ranks = br->gpus;
    g_array_append_val (r->rows, row);
  }
  return r;
}

gboolean
sim_calibration_fit_link (SimCalibration *c, SimLinkKind kind, const SimNcclResult *r, GError **error)
{
  double sum = 0, largest = 0;
  guint64 largest_size = 0;
  int n = 0;
  for (guint i = 0; i < r->rows->len; i++) {
    const SimNcclRow *row = &g_array_index (r->rows, SimNcclRow, i);
    if (row->size_bytes >= (256u << 20)) {
      sum += row->busbw_GBps * 1e9;
      n++;
    }
    if (row->size_bytes > largest_size) {
      largest_size = row->size_bytes;
      largest = row->busbw_GBps * 1e9;
    }
  }
  if (n == 0 && largest <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected all_reduce rows of 256 MiB or more",
                 r->path);
    return FALSE;
  }
  c->link_bw[kind] = n > 0 ? sum / n : largest;
  return TRUE;
}

/* Latency-bound sizes: up to 64 KiB a ring all_reduce on 8 GPUs moves
 * 2 (n-1)/n x 64 KiB = 115 kB per GPU, 0.25 us at 450 GB/s, against a
 * latency of 13-20 us (the dgxc H100 measurement): the time is latency. */
#define LATENCY_BOUND_BYTES (64u << 10)

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* the median over the rows of m of simulated / measured time, with the
 * latency of link kind `kind` scaled by s; -1 on error */
static double
median_ratio (const SimTopology *topo, const SimNcclResult *m, SimLinkKind kind, double s,
              GError **error)
{
  g_autoptr (GArray) cmp = NULL;
  g_autofree double *r = NULL;
  cmp = sim_validate_nccl_scaled (topo, m, SIM_OP_ALL_REDUCE, m->ranks, SIM_ALGO_AUTO, kind, s, error);
  if (cmp == NULL || cmp->len == 0)
    return -1;
  r = g_new (double, cmp->len);
  for (guint i = 0; i < cmp->len; i++) {
    const SimValidationRow *c = &g_array_index (cmp, SimValidationRow, i);
    r[i] = c->simulated_us / c->measured_us;
  }
  qsort (r, cmp->len, sizeof (double), cmp_double);
  return cmp->len % 2 ? r[cmp->len / 2] : 0.5 * (r[cmp->len / 2 - 1] + r[cmp->len / 2]);
}

gboolean
sim_calibration_fit_latency (const SimTopology *topo, const SimNcclResult *all, SimLinkKind kind,
                             SimLatencyFit *fit, GError **error)
{
  SimNcclResult bound = *all;
  double lo = 0.01, hi = 100.0, f_lo, f_hi;
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (SimNcclRow));

  memset (fit, 0, sizeof *fit);
  for (guint i = 0; i < all->rows->len; i++) {
    const SimNcclRow *r = &g_array_index (all->rows, SimNcclRow, i);
    if (r->size_bytes > 0 && r->size_bytes <= LATENCY_BOUND_BYTES && r->time_us > 0)
      g_array_append_val (rows, *r);
  }
  fit->rows = (int) rows->len;
  if (rows->len == 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected all_reduce rows of 64 KiB or less to fit the latency", all->path);
    return FALSE;
  }
  bound.rows = rows;
  /* a median, so one noisy size does not move it */
  if ((fit->before = median_ratio (topo, &bound, kind, 1.0, error)) < 0 ||
      (f_lo = median_ratio (topo, &bound, kind, lo, error)) < 0 ||
      (f_hi = median_ratio (topo, &bound, kind, hi, error)) < 0)
    return FALSE;
  if (f_lo > 1.0 || f_hi < 1.0)
    return TRUE;
  /* geometric bisection: the scale spans four decades */
  for (int it = 0; it < 60; it++) {
    double mid = sqrt (lo * hi), f = median_ratio (topo, &bound, kind, mid, error);
    if (f < 0)
      return FALSE;
    if (f < 1.0)
      lo = mid;
    else
      hi = mid;
  }
  fit->scale = sqrt (lo * hi);
  fit->after = median_ratio (topo, &bound, kind, fit->scale, error);
  return fit->after >= 0;
}

/* --gpus N as nodes, or as one node of part of its GPUs (*per_node > 0):
 * 1, 2, 4 or 8 GPUs of one node, or a multiple of a node; of a rack-scale
 * node (an NVLink domain of 36 or 72 GPUs, GB200/GB300 NVL36/NVL72) also
 * any whole number of its compute trays, 4 GPUs each (18 trays of 2 Grace
 * CPUs and 4 Blackwell GPUs in topologies/gb200-nvl72.xml), so that 64
 * GPUs of an NVL72 stand beside 64 H100s */
#define RACK_MIN_GPUS 36
#define TRAY_GPUS 4
static gboolean
gpus_as_nodes (const char *path, const char *name, int gpus, int *nodes, int *per_node, GError **error)
{
  g_autoptr (SimTopology) t = sim_topology_load (path, 0, error);
  int gpn = 0;
  if (t == NULL)
    return FALSE;
  gpn = t->file_gpus_per_node;
  if (gpn <= 0) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--gpus: %s is a <graph>, whose GPUs cannot be taken in part; use the whole file", name);
    return FALSE;
  }
  if (gpus % gpn == 0) {
    *nodes = gpus / gpn;
    *per_node = 0;
  } else if (gpus < gpn && (gpus == 1 || gpus == 2 || gpus == 4 || gpus == 8 ||
                             (gpn >= RACK_MIN_GPUS && gpus % TRAY_GPUS == 0))) {
    *nodes = 1;
    *per_node = gpus;
  } else if (gpn >= RACK_MIN_GPUS && gpus < gpn) {
    /* the whole trays below and above (2 and 4 below one tray) */
    int below = gpus > TRAY_GPUS ? gpus / TRAY_GPUS * TRAY_GPUS : 2;
    int above = (gpus / TRAY_GPUS + 1) * TRAY_GPUS;
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--gpus %d: expected 1 or 2 GPUs, whole compute trays of %d, or a multiple of the %d GPUs "
                 "of a %s rack (for example --gpus %d or --gpus %d)",
                 gpus, TRAY_GPUS, gpn, t->name, below, above);
    return FALSE;
  } else {
    /* the nearest that works, below and above */
    int below = gpus > gpn ? gpus / gpn * gpn : gpus > 4 ? 4 : gpus > 2 ? 2 : 1;
    int above = gpus > gpn ? below + gpn : gpus < 4 && gpn > 4 ? 4 : gpus < 8 && gpn > 8 ? 8 : gpn;
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--gpus %d: expected 1, 2, 4 or 8 GPUs of one node, or a multiple of the %d GPUs of a %s node "
                 "(for example --gpus %d or --gpus %d)",
                 gpus, gpn, t->name, below, above);
    return FALSE;
  }
  return TRUE;
}

SimTopology *
sim_calibration_load_cluster (const char *name, int nodes, int gpus, const char *calibration,
                              GError **error)
{
  g_autofree char *path = sim_paths_resolve (name, "topologies", error);
  g_autoptr (SimTopology) t = NULL;
  int per_node = 0;
  if (path == NULL)
    return NULL;
  if (gpus > 0) {
    int want = 0;
    if (!gpus_as_nodes (path, name, gpus, &want, &per_node, error))
      return NULL;
    if (nodes > 0 && nodes != want) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--gpus %d is %d node%s, but --nodes says %d; give one of them",
                   gpus, want, want == 1 ? "" : "s", nodes);
      return NULL;
    }
    nodes = want;
  }
  if ((t = sim_calibration_load_topology_part (path, nodes, per_node, calibration, error)) == NULL)
    return NULL;
  /* every command models one GPU type per cluster (sim_plan_resolve
   * checks it too) */
  if (!sim_topology_check_one_gpu_type (t, error))
    return NULL;
  return g_steal_pointer (&t);
}
