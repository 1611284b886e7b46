/* sim-bands.c — the band file (sim-bands.h, topologies/bands.rng). */
#include "sim-bands.h"

#include <stdlib.h>
#include <string.h>

#include "sim-error.h"
#include "sim-paths.h"
#include "sim-xml.h"

static const char *const kind_names[SIM_BAND_KINDS] = { "fitted", "heldout", "moe", "fsdp", "torchtitan" };

const char *
sim_band_kind_name (SimBandKind kind)
{
  g_return_val_if_fail (kind < SIM_BAND_KINDS, NULL);
  return kind_names[kind];
}

gboolean
sim_band_kind_has_bias (SimBandKind kind)
{
  return kind == SIM_BAND_MOE || kind == SIM_BAND_FSDP || kind == SIM_BAND_TORCHTITAN;
}

SimBand *
sim_bands_get (SimBands *bands, SimBandKind kind)
{
  switch (kind) {
  case SIM_BAND_FITTED: return &bands->fitted;
  case SIM_BAND_HELDOUT: return &bands->heldout;
  case SIM_BAND_MOE: return &bands->moe;
  case SIM_BAND_FSDP: return &bands->fsdp;
  case SIM_BAND_TORCHTITAN: return &bands->torchtitan;
  default: break;
  }
  g_return_val_if_reached (NULL);
}

/* one <band kind error [bias] rows [within]>: its values into set, whose
 * kinds seen so far are in seen; the ranges are those of the attributes
 * of <efficiency> that the band file replaces */
static gboolean
read_band (const char *path, xmlNode *b, SimBands *set, gboolean seen[SIM_BAND_KINDS], GError **error)
{
  g_autofree char *kind = NULL;
  int k = -1;
  SimBand band = { 0 };

  if (!sim_xml_get_string (path, b, "kind", &kind, error))
    return FALSE;
  for (int i = 0; i < SIM_BAND_KINDS; i++)
    if (g_str_equal (kind, kind_names[i]))
      k = i;
  if (k < 0) {
    g_autofree char *shown = sim_xml_shorten (kind);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute kind of <band>: expected fitted, heldout, moe, fsdp or torchtitan, got '%s'",
                 path, sim_xml_attr_line (b, "kind"), shown);
    return FALSE;
  }
  /* a set names each kind once: a second would be a band the report never prints */
  if (seen[k]) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                 "%s:%ld: attribute kind of <band>: expected each kind once in a <set>, '%s' is given twice",
                 path, sim_xml_attr_line (b, "kind"), kind);
    return FALSE;
  }
  seen[k] = TRUE;
  if (!sim_xml_get_double (path, b, "error", 0.0, 10.0, &band.error, error) ||
      !sim_xml_get_uint (path, b, "rows", 1, 1000000, &band.rows, error))
    return FALSE;
  /* moe, fsdp and torchtitan state their bias and runs within 15 %;
   * fitted and heldout may state their bias too, to say which way the
   * step time errs */
  band.has_bias = sim_band_kind_has_bias ((SimBandKind) k) || xmlHasProp (b, (const xmlChar *) "bias");
  if ((band.has_bias && !sim_xml_get_double (path, b, "bias", -10.0, 10.0, &band.bias, error)) ||
      (sim_band_kind_has_bias ((SimBandKind) k) &&
       !sim_xml_get_uint (path, b, "within", 0, band.rows, &band.within, error)))
    return FALSE;
  *sim_bands_get (set, (SimBandKind) k) = band;
  return TRUE;
}

gboolean
sim_bands_read (const char *path, const char *name, SimBands *out, gboolean *found, GError **error)
{
  g_autoptr (xmlDoc) doc = NULL;
  g_autoptr (GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  xmlNode *root = NULL;
  SimBands got = { { 0 } };
  gboolean hit = FALSE;

  /* set only once the whole file has read */
  *out = (SimBands) { { 0 } };
  *found = FALSE;
  if ((doc = sim_xml_load (path, error)) == NULL)
    return FALSE;
  root = xmlDocGetRootElement (doc);
  if (!sim_xml_is (root, "bands")) {
    g_autofree char *shown = sim_xml_shorten ((const char *) root->name);
    g_set_error (error, SIM_ERROR, SIM_ERROR_XML, "%s:%ld: expected a <bands> document, got <%s>", path,
                 sim_xml_attr_line (root, NULL), shown);
    return FALSE;
  }
  for (xmlNode *s = sim_xml_first_element (root, "set"); s != NULL; s = sim_xml_next_element (s, "set")) {
    g_autofree char *set_name = NULL;
    gboolean seen[SIM_BAND_KINDS] = { FALSE };
    SimBands set = { { 0 } };
    if (!sim_xml_get_string (path, s, "name", &set_name, error))
      return FALSE;
    /* a name given twice would make the set a cluster file gets depend on the order */
    if (g_hash_table_contains (names, set_name)) {
      g_autofree char *shown = sim_xml_shorten (set_name);
      g_set_error (error, SIM_ERROR, SIM_ERROR_XML,
                   "%s:%ld: attribute name of <set>: expected a unique name, '%s' is used twice", path,
                   sim_xml_attr_line (s, "name"), shown);
      return FALSE;
    }
    for (xmlNode *b = sim_xml_first_element (s, "band"); b != NULL; b = sim_xml_next_element (b, "band"))
      if (!read_band (path, b, &set, seen, error))
        return FALSE;
    if (name != NULL && g_str_equal (set_name, name)) {
      got = set;
      hit = TRUE;
    }
    g_hash_table_add (names, g_steal_pointer (&set_name));
  }
  if (!sim_xml_validate (doc, path, "bands.rng", error))
    return FALSE;
  *out = got;
  *found = hit;
  return TRUE;
}

gboolean
sim_bands_lookup (const char *cluster_path, const char *name, SimBands *out, gboolean *found, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (cluster_path);
  g_autofree char *beside = g_build_filename (dir, SIM_BANDS_FILE, NULL);
  g_autofree char *shipped = sim_paths_shipped ("topologies", SIM_BANDS_FILE);
  g_autofree char *real_beside = NULL, *real_shipped = NULL;

  *out = (SimBands) { { 0 } };
  *found = FALSE;
  /* a bands.xml beside the file that is not a regular file is refused
   * (sim_xml_load), as a FIFO there must not block the load */
  if (g_file_test (beside, G_FILE_TEST_EXISTS)) {
    if (!sim_bands_read (beside, name, out, found, error))
      return FALSE;
    if (*found)
      return TRUE;
    real_beside = realpath (beside, NULL);
  }
  if (shipped == NULL)
    return TRUE;
  /* the cluster file is a shipped one: its folder's band file was read above */
  real_shipped = realpath (shipped, NULL);
  if (real_beside != NULL && real_shipped != NULL && g_str_equal (real_beside, real_shipped))
    return TRUE;
  return sim_bands_read (shipped, name, out, found, error);
}
