#include "sim-calibration.h"

#include "sim-error.h"
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
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: expected a <calibration> document, got <%s>", path,
                 sim_xml_attr_line (root, NULL), (const char *) root->name);
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
  if (!sim_xml_validate (doc, path, "/sim/calibration.rng", error))
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
