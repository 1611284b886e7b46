/* sim-import.c — a cluster file from NCCL's topology dump, nvidia-smi
 * topo -m and ibstat (sim-import.h).
 *
 * The dump's elements and attributes are NCCL's (src/graph/xml.cc:
 * <system>, <cpu>, <pci busid class vendor device link_speed link_width>,
 * <gpu dev sm>, <nvlink target count tclass>, <nic>, <net name speed gdr>);
 * PCI class 0x030200 is a 3D controller (a GPU), 0x068000 a bridge (an
 * NVSwitch), 0x020700 an InfiniBand controller.  Device ids are the PCI
 * ID database's (pci-ids.ucw.cz, vendor 10de): 20b0 GA100 [A100 SXM4
 * 40GB], 20b2 GA100 [A100 SXM4 80GB], 2330 GH100 [H100 SXM5 80GB], 2335
 * GH100 [H200 SXM 141GB], 2901 GB100 [B200].  ibstat's "CA type: MT<n>" is
 * the Mellanox PCI device id in decimal (15b3:1017 ConnectX-5, 101b
 * ConnectX-6, 101d ConnectX-6 Dx, 1021 ConnectX-7, 1023 ConnectX-8). */
#include "sim-import.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

#include "sim-error.h"
#include "sim-paths.h"

/* a GPU's PCI device id and the shipped cluster file of that GPU */
static const struct {
  guint device;
  const char *file;
} gpu_files[] = {
  { 0x20b0, "dgx-a100-40gb" }, { 0x20b2, "dgx-a100" }, { 0x2330, "dgx-h100" },
  { 0x2335, "dgx-h200" },      { 0x2901, "dgx-b200" },
};

static const struct {
  int type;
  const char *name;
} nic_names[] = {
  { 4119, "ConnectX-5" }, { 4123, "ConnectX-6" }, { 4125, "ConnectX-6 Dx" },
  { 4129, "ConnectX-7" }, { 4131, "ConnectX-8" },
};

typedef struct {
  int gpus;
  int sm;
  guint device;        /* the GPUs' PCI device id, 0 unknown */
  int links;           /* NVLink links per GPU, 0 unknown */
  int chips;           /* NVSwitch chips, 0 unknown */
  double pcie_gts;     /* the GPUs' PCIe link, GT/s per lane */
  int pcie_width;
  int nics;            /* compute NICs, 0 unknown */
  double nic_bps;      /* bits/s each */
  char *nic_name;
} Found;

static gboolean
fail (GError **error, const char *path, int line, const char *what)
{
  if (line > 0)
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s:%d: expected %s", path, line, what);
  else
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "%s: expected %s", path, what);
  return FALSE;
}

static char *
prop (xmlNode *n, const char *name)
{
  xmlChar *v = xmlGetProp (n, (const xmlChar *) name);
  char *out = v != NULL ? g_strdup ((const char *) v) : NULL;
  xmlFree (v);
  return out;
}

/* ---- NCCL's topology dump ---- */

typedef struct {
  Found *f;
  GHashTable *switches; /* NVSwitch bus ids */
  int gpu_links_min, gpu_links_max;
  const char *path;
  GError **error;
  gboolean ok;
} Walk;

static void
walk (xmlNode *n, Walk *w)
{
  for (; n != NULL && w->ok; n = n->next) {
    if (n->type != XML_ELEMENT_NODE)
      continue;
    if (xmlStrEqual (n->name, (const xmlChar *) "pci")) {
      g_autofree char *cls = prop (n, "class"), *busid = prop (n, "busid");
      if (cls != NULL && busid != NULL && g_ascii_strcasecmp (cls, "0x068000") == 0)
        g_hash_table_add (w->switches, g_steal_pointer (&busid));
    } else if (xmlStrEqual (n->name, (const xmlChar *) "gpu")) {
      g_autofree char *sm = prop (n, "sm");
      int links = 0;
      w->f->gpus++;
      if (sm != NULL)
        w->f->sm = (int) g_ascii_strtoll (sm, NULL, 10);
      if (n->parent != NULL && xmlStrEqual (n->parent->name, (const xmlChar *) "pci")) {
        g_autofree char *dev = prop (n->parent, "device"), *speed = prop (n->parent, "link_speed");
        g_autofree char *width = prop (n->parent, "link_width");
        if (dev != NULL)
          w->f->device = (guint) g_ascii_strtoull (dev, NULL, 16);
        if (speed != NULL && g_ascii_strtod (speed, NULL) > 0)
          w->f->pcie_gts = g_ascii_strtod (speed, NULL);
        if (width != NULL && g_ascii_strtoll (width, NULL, 10) > 0)
          w->f->pcie_width = (int) g_ascii_strtoll (width, NULL, 10);
      }
      for (xmlNode *c = n->children; c != NULL; c = c->next) {
        g_autofree char *count = NULL, *target = NULL, *tclass = NULL;
        if (c->type != XML_ELEMENT_NODE || !xmlStrEqual (c->name, (const xmlChar *) "nvlink"))
          continue;
        count = prop (c, "count");
        target = prop (c, "target");
        tclass = prop (c, "tclass");
        if (count == NULL || g_ascii_strtoll (count, NULL, 10) <= 0) {
          w->ok = fail (w->error, w->path, (int) xmlGetLineNo (c), "<nvlink count=\"N\"> with N > 0");
          return;
        }
        links += (int) g_ascii_strtoll (count, NULL, 10);
        /* a switch NCCL could not name (fffffff:ff:ff.0) is not counted */
        if (tclass != NULL && target != NULL && g_ascii_strcasecmp (tclass, "0x068000") == 0 &&
            !g_str_has_prefix (target, "fffffff"))
          g_hash_table_add (w->switches, g_steal_pointer (&target));
      }
      w->gpu_links_min = MIN (w->gpu_links_min, links);
      w->gpu_links_max = MAX (w->gpu_links_max, links);
    } else if (xmlStrEqual (n->name, (const xmlChar *) "net")) {
      g_autofree char *speed = prop (n, "speed"), *gdr = prop (n, "gdr");
      double mbps = speed != NULL ? g_ascii_strtod (speed, NULL) : 0;
      /* the GPUDirect RDMA NICs are the compute fabric's */
      if (gdr != NULL && g_str_equal (gdr, "1") && mbps > 0) {
        w->f->nics++;
        w->f->nic_bps = mbps * 1e6;
      }
    }
    walk (n->children, w);
  }
}

static gboolean
read_nccl (const char *path, const char *text, Found *f, GError **error)
{
  xmlDoc *doc = xmlReadMemory (text, (int) strlen (text), path, NULL,
                               XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  xmlNode *root;
  Walk w = { f, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL), G_MAXINT, 0, path, error, TRUE };
  if (doc == NULL) {
    const xmlError *e = xmlGetLastError ();
    g_hash_table_unref (w.switches);
    return fail (error, path, e != NULL ? e->line : 0, "well-formed XML (NCCL_TOPO_DUMP_FILE's <system>)");
  }
  root = xmlDocGetRootElement (doc);
  if (root == NULL || !xmlStrEqual (root->name, (const xmlChar *) "system")) {
    int line = root != NULL ? (int) xmlGetLineNo (root) : 1;
    xmlFreeDoc (doc);
    g_hash_table_unref (w.switches);
    return fail (error, path, line, "<system>, the root of NCCL's topology dump");
  }
  walk (root->children, &w);
  xmlFreeDoc (doc);
  if (w.ok && f->gpus == 0)
    w.ok = fail (error, path, 0, "at least one <gpu> (a dump from a job that ran on GPUs)");
  if (w.ok && w.gpu_links_min != w.gpu_links_max)
    w.ok = fail (error, path, 0, "the same NVLink links on every GPU (a node with a failed link is not one to plan on)");
  if (w.ok) {
    f->links = w.gpu_links_max;
    f->chips = (int) g_hash_table_size (w.switches);
  }
  g_hash_table_unref (w.switches);
  return w.ok;
}

/* ---- nvidia-smi topo -m ---- */

static gboolean
read_topo_m (const char *path, const char *text, Found *f, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  int gpus = 0, nics = 0, nv = -1, header = -1;
  for (int i = 0; lines[i] != NULL; i++) {
    g_auto (GStrv) t = g_strsplit_set (g_strstrip (lines[i]), " \t", -1);
    g_autoptr (GPtrArray) w = g_ptr_array_new ();
    for (int k = 0; t[k] != NULL; k++)
      if (*t[k] != '\0')
        g_ptr_array_add (w, t[k]);
    if (w->len == 0)
      continue;
    if (header < 0 && g_str_equal (g_ptr_array_index (w, 0), "GPU0")) {
      /* the header: GPU0 ... NIC0 ... CPU Affinity ... */
      header = i;
      for (guint k = 0; k < w->len; k++) {
        const char *h = g_ptr_array_index (w, k);
        if (g_str_has_prefix (h, "GPU") && g_ascii_isdigit (h[3]))
          gpus++;
        else if (g_str_has_prefix (h, "NIC") && g_ascii_isdigit (h[3]))
          nics++;
      }
      continue;
    }
    if (header >= 0 && g_str_has_prefix (g_ptr_array_index (w, 0), "GPU") &&
        g_ascii_isdigit (((const char *) g_ptr_array_index (w, 0))[3])) {
      int row = (int) g_ascii_strtoll ((const char *) g_ptr_array_index (w, 0) + 3, NULL, 10);
      if ((int) w->len < gpus + 1)
        return fail (error, path, i + 1, "a row of the GPU matrix, one entry per column");
      for (int c = 0; c < gpus; c++) {
        const char *e = g_ptr_array_index (w, (guint) c + 1);
        int k;
        if (c == row)
          continue;
        if (!g_str_has_prefix (e, "NV"))
          return fail (error, path, i + 1, "NV# between every two GPUs (sim models GPUs joined by NVLink)");
        k = (int) g_ascii_strtoll (e + 2, NULL, 10);
        if (nv >= 0 && k != nv)
          return fail (error, path, i + 1, "the same NV# between every two GPUs (an NVSwitch node)");
        nv = k;
      }
    }
  }
  if (header < 0 || gpus == 0)
    return fail (error, path, 0, "nvidia-smi topo -m's matrix, with a header row starting GPU0");
  if (f->gpus > 0 && f->gpus != gpus)
    return fail (error, path, 0, "the GPUs the NCCL dump lists");
  if (f->links > 0 && nv > 0 && f->links != nv)
    return fail (error, path, 0, "NV# equal to the NVLink links per GPU of the NCCL dump");
  f->gpus = gpus;
  if (nv > 0)
    f->links = nv;
  (void) nics;
  return TRUE;
}

/* ---- ibstat ---- */

/* the port being read, and the active InfiniBand ports counted */
typedef struct {
  int type;          /* its CA's "MT<n>" */
  gboolean active, ib;
  double rate;       /* Gb/s */
  int nics;
  double nic_rate;
  const char *name;
} Ports;

/* the port read so far ends (a new port, a new CA, the end of the text):
 * counted when it is an active InfiniBand port; FALSE when its rate is not
 * the others' */
static gboolean
port_end (Ports *p)
{
  gboolean ok = TRUE;
  if (p->active && p->ib && p->rate > 0) {
    ok = p->nic_rate == 0 || p->rate == p->nic_rate;
    p->nics++;
    p->nic_rate = p->rate;
    for (guint k = 0; k < G_N_ELEMENTS (nic_names); k++)
      if (nic_names[k].type == p->type)
        p->name = nic_names[k].name;
  }
  p->active = FALSE, p->ib = FALSE, p->rate = 0;
  return ok;
}

static gboolean
read_ibstat (const char *path, const char *text, Found *f, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  Ports p = { 0 };
  int cas = 0, i = 0;
  for (; lines[i] != NULL; i++) {
    char *l = g_strstrip (lines[i]);
    gboolean ca = g_str_has_prefix (l, "CA '");
    if (ca || (g_str_has_prefix (l, "Port ") && g_str_has_suffix (l, ":"))) {
      if (!port_end (&p))
        return fail (error, path, i + 1, "one rate on every active InfiniBand port");
      cas += ca;
    } else if (g_str_has_prefix (l, "CA type:")) {
      const char *mt = strstr (l, "MT");
      p.type = mt != NULL ? (int) g_ascii_strtoll (mt + 2, NULL, 10) : 0;
    } else if (g_str_has_prefix (l, "State:")) {
      p.active = strstr (l, "Active") != NULL;
    } else if (g_str_has_prefix (l, "Rate:")) {
      p.rate = g_ascii_strtod (l + 5, NULL);
    } else if (g_str_has_prefix (l, "Link layer:")) {
      p.ib = strstr (l, "InfiniBand") != NULL;
    }
  }
  if (!port_end (&p))
    return fail (error, path, i, "one rate on every active InfiniBand port");
  if (cas == 0)
    return fail (error, path, 0, "ibstat's output: CA 'name' blocks");
  if (p.nics == 0)
    return fail (error, path, 0, "an active InfiniBand port (the compute fabric)");
  if (f->nics > 0 && (f->nics != p.nics || f->nic_bps != p.nic_rate * 1e9))
    return fail (error, path, 0, "the active InfiniBand ports and rate the NCCL dump's GPUDirect NICs give");
  f->nics = p.nics;
  f->nic_bps = p.nic_rate * 1e9;
  if (p.name != NULL) {
    g_free (f->nic_name);
    f->nic_name = g_strdup (p.name);
  }
  return TRUE;
}

/* ---- the template and the file ---- */

static xmlNode *
child (xmlNode *n, const char *name)
{
  for (xmlNode *c = n != NULL ? n->children : NULL; c != NULL; c = c->next)
    if (c->type == XML_ELEMENT_NODE && xmlStrEqual (c->name, (const xmlChar *) name))
      return c;
  return NULL;
}

static char *
dump (xmlDoc *doc, xmlNode *n)
{
  xmlBuffer *b = xmlBufferCreate ();
  char *out;
  xmlNodeDump (b, doc, n, 1, 0);
  out = g_strdup ((const char *) xmlBufferContent (b));
  xmlBufferFree (b);
  return out;
}

static double
bytes_per_s (const char *text)
{
  /* "450GB/s" */
  double v = g_ascii_strtod (text, NULL);
  return strstr (text, "TB/s") != NULL ? v * 1e12 : strstr (text, "GB/s") != NULL ? v * 1e9 : v * 1e6;
}

/* what the shipped cluster file of the GPU says of a node: the values
 * the import did not find in its inputs are taken from it */
typedef struct {
  char *links, *bw, *ach, *gen, *lat, *gpus, *chips, *sharp, *sharp_bw, *nvs_lat;
  char *pgen, *pbw, *plat, *nname, *ncount, *nbw, *nlat, *gpu_name;
  gboolean nvswitch, fabric;
  double per_link, per_link_ach; /* bytes/s per NVLink link, line rate and achieved */
} Template;

static void
template_read (Template *t, xmlNode *gpu_type, xmlNode *node, xmlNode *nvl, xmlNode *nvs,
               xmlNode *pcie, xmlNode *nic)
{
  int links = 0;
  t->links = prop (nvl, "links");
  t->bw = prop (nvl, "bandwidth");
  t->ach = prop (nvl, "achieved-bandwidth");
  t->gen = prop (nvl, "generation");
  t->lat = prop (nvl, "latency");
  t->gpus = prop (node, "gpus");
  t->nvswitch = nvs != NULL;
  t->chips = nvs != NULL ? prop (nvs, "chips") : NULL;
  t->sharp = nvs != NULL ? prop (nvs, "sharp") : NULL;
  t->sharp_bw = nvs != NULL ? prop (nvs, "sharp-bandwidth") : NULL;
  t->nvs_lat = nvs != NULL ? prop (nvs, "latency") : NULL;
  t->pgen = prop (pcie, "generation");
  t->pbw = prop (pcie, "bandwidth");
  t->plat = prop (pcie, "latency");
  t->nname = prop (nic, "name");
  t->ncount = prop (nic, "count");
  t->nbw = prop (nic, "bandwidth");
  t->nlat = prop (nic, "latency");
  t->gpu_name = prop (gpu_type, "name");
  links = t->links != NULL ? (int) g_ascii_strtoll (t->links, NULL, 10) : 0;
  t->per_link = links > 0 && t->bw != NULL ? bytes_per_s (t->bw) / links : 0;
  t->per_link_ach = links > 0 && t->ach != NULL ? bytes_per_s (t->ach) / links : 0;
}

static void
template_clear (Template *t)
{
  char **all[] = { &t->links, &t->bw, &t->ach, &t->gen, &t->lat, &t->gpus, &t->chips, &t->sharp,
                   &t->sharp_bw, &t->nvs_lat, &t->pgen, &t->pbw, &t->plat, &t->nname, &t->ncount,
                   &t->nbw, &t->nlat, &t->gpu_name };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_clear_pointer (all[i], g_free);
}

/* the shipped cluster file to take the GPU from: --gpu-type's, else the
 * one of the dump's PCI device id; NULL with the error where none is */
static const char *
template_file (const SimImportInput *in, const Found *f, GError **error)
{
  const char *file = in->gpu_type;
  for (guint i = 0; file == NULL && i < G_N_ELEMENTS (gpu_files); i++)
    if (gpu_files[i].device == f->device)
      file = gpu_files[i].file;
  if (file == NULL && f->device != 0)
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "topology import: expected a GPU a shipped cluster file describes (PCI device 10de:%04x is "
                 "none of A100 SXM4 40/80GB, H100 SXM5, H200 SXM, B200); give --gpu-type FILE, the shipped "
                 "file of the nearest GPU", f->device);
  else if (file == NULL)
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "topology import: expected the GPU: an NCCL dump names it (its PCI device id), or give "
                 "--gpu-type FILE (a shipped cluster file, such as dgx-h100)");
  return file;
}

/* fills in what the inputs did not give from the template, saying so in
 * im->assumed, and im's counts and rates */
static void
import_assume (SimImport *im, const SimImportInput *in, const char *file, const char *id,
               const Template *t, Found *f)
{
  int pgen = 0;
  double pbw = 0;
#define ASSUME(...) g_ptr_array_add (im->assumed, g_strdup_printf (__VA_ARGS__))
  ASSUME ("the GPU type, its measured rates and efficiency constants: %s's <gpu-type id=\"%s\"> (%s)%s", file, id,
          t->gpu_name != NULL ? t->gpu_name : "", in->gpu_type != NULL ? ", as --gpu-type gave it" : ", the GPU of the dump's PCI device id");
  if (f->gpus == 0) {
    f->gpus = t->gpus != NULL ? (int) g_ascii_strtoll (t->gpus, NULL, 10) : 8;
    ASSUME ("%d GPUs per node, as %s", f->gpus, file);
  }
  if (f->links == 0) {
    f->links = t->links != NULL ? (int) g_ascii_strtoll (t->links, NULL, 10) : 0;
    ASSUME ("NVLink links per GPU: %d, as %s", f->links, file);
  }
  ASSUME ("NVLink generation %s, %.1f GB/s per link per direction (line rate; %.2f GB/s achieved by NCCL's Simple "
          "protocol) and %s per hop, as %s", t->gen, t->per_link / 1e9, t->per_link_ach / 1e9, t->lat, file);
  if (f->chips == 0 && t->chips != NULL) {
    f->chips = (int) g_ascii_strtoll (t->chips, NULL, 10);
    ASSUME ("NVSwitch chips: %d, as %s (the inputs name none)", f->chips, file);
  }
  if (t->nvswitch)
    ASSUME ("NVSwitch in-network reduction (NVLink SHARP) %s%s%s and %s per traversal, as %s", t->sharp,
            t->sharp_bw != NULL ? " at " : "", t->sharp_bw != NULL ? t->sharp_bw : "", t->nvs_lat, file);
  if (f->pcie_gts > 0 && f->pcie_width > 0) {
    /* PCIe generations by signalling rate; 128b/130b encoding from gen 3 */
    static const double gts[] = { 2.5, 5, 8, 16, 32, 64 };
    for (int g = 0; g < 6; g++)
      if (f->pcie_gts >= gts[g] - 0.01)
        pgen = g + 1;
    pbw = f->pcie_gts * 1e9 * f->pcie_width * (pgen >= 3 ? 128.0 / 130.0 : 0.8) / 8;
  } else {
    pgen = t->pgen != NULL ? (int) g_ascii_strtoll (t->pgen, NULL, 10) : 5;
    pbw = t->pbw != NULL ? bytes_per_s (t->pbw) : 0;
    ASSUME ("the GPUs' PCIe link: generation %d, %s, as %s (no NCCL dump gives it)", pgen, t->pbw, file);
  }
  ASSUME ("PCIe latency %s, as %s", t->plat, file);
  if (f->nics == 0) {
    f->nics = t->ncount != NULL ? (int) g_ascii_strtoll (t->ncount, NULL, 10) : f->gpus;
    f->nic_bps = t->nbw != NULL ? g_ascii_strtod (t->nbw, NULL) * 1e9 : 0;
    ASSUME ("%d compute NICs of %s, as %s (neither an NCCL dump nor ibstat gives them)", f->nics, t->nbw, file);
  }
  if (f->nic_name == NULL) {
    f->nic_name = g_strdup (t->nname);
    ASSUME ("the NICs' name: %s, as %s", t->nname, file);
  }
  ASSUME ("NIC latency %s, as %s", t->nlat, file);
  if (t->fabric)
    ASSUME ("the fabric between the nodes (kind, nodes per leaf, oversubscription, latencies): %s's", file);
#undef ASSUME
  im->gpus = f->gpus;
  im->nvlink_links = f->links;
  im->nvswitch_chips = f->chips;
  im->pcie_generation = pgen;
  im->pcie_bytes_per_s = pbw;
  im->nics = f->nics;
  im->nic_bits_per_s = f->nic_bps;
}

/* the cluster file: a comment naming the inputs and what was assumed, the
 * template's <gpu-type> (gt) and fabric (fab, or NULL), and the node */
static char *
import_xml (const SimImport *im, const SimImportInput *in, const char *id, const Template *t,
            const Found *f, const char *gt, const char *fab)
{
  GString *x = g_string_new (NULL);
  g_autofree char *nic_bw = g_strdup_printf ("%gGb/s", f->nic_bps / 1e9);
  g_string_append (x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- written by sim topology import from");
  if (in->nccl_xml != NULL)
    g_string_append_printf (x, " NCCL's topology dump %s", in->nccl_path);
  if (in->topo_m != NULL)
    g_string_append_printf (x, "%s nvidia-smi topo -m %s", in->nccl_xml != NULL ? "," : "", in->topo_m_path);
  if (in->ibstat != NULL)
    g_string_append_printf (x, "%s ibstat %s", in->nccl_xml != NULL || in->topo_m != NULL ? "," : "",
                            in->ibstat_path);
  g_string_append (x, ".\n     Taken from the shipped file of the GPU or assumed, not measured on this cluster:\n");
  for (guint i = 0; i < im->assumed->len; i++) {
    g_autofree char *line = g_strdup (g_ptr_array_index (im->assumed, i));
    /* "--" may not appear inside an XML comment */
    for (char *p = strstr (line, "--"); p != NULL; p = strstr (p, "--"))
      p[1] = '=';
    g_string_append_printf (x, "       - %s\n", line);
  }
  g_string_append (x, "-->\n");
  g_string_append_printf (x, "<topology name=\"%s\"\n          description=\"imported: %d x %s per node, "
                             "NVLink %s x %d, %d NVSwitch, %d x %s %s\">\n  ",
                          in->name != NULL ? in->name : "imported", f->gpus, t->gpu_name != NULL ? t->gpu_name : id,
                          t->gen, f->links, f->chips, f->nics, nic_bw, f->nic_name);
  g_string_append (x, gt);
  g_string_append_printf (x, "\n  <cluster nodes=\"%d\">\n", in->nodes > 0 ? in->nodes : 1);
  g_string_append_printf (x, "    <node name=\"%s\" gpu-type=\"%s\" gpus=\"%d\">\n",
                          in->name != NULL ? in->name : "imported", id, f->gpus);
  g_string_append_printf (x, "      <nvlink generation=\"%s\" links=\"%d\" bandwidth=\"%gGB/s\"", t->gen, f->links,
                          t->per_link * f->links / 1e9);
  if (t->per_link_ach > 0)
    g_string_append_printf (x, " achieved-bandwidth=\"%gGB/s\"", t->per_link_ach * f->links / 1e9);
  g_string_append_printf (x, " latency=\"%s\"/>\n", t->lat);
  if (t->nvswitch) {
    g_string_append_printf (x, "      <nvswitch chips=\"%d\" sharp=\"%s\"", f->chips, t->sharp);
    if (t->sharp_bw != NULL)
      g_string_append_printf (x, " sharp-bandwidth=\"%s\"", t->sharp_bw);
    g_string_append_printf (x, " latency=\"%s\"/>\n", t->nvs_lat);
  }
  g_string_append_printf (x, "      <pcie generation=\"%d\" bandwidth=\"%.1fGB/s\" latency=\"%s\"/>\n",
                          im->pcie_generation, im->pcie_bytes_per_s / 1e9, t->plat);
  g_string_append_printf (x, "      <nic name=\"%s\" count=\"%d\" bandwidth=\"%s\" latency=\"%s\"/>\n", f->nic_name,
                          f->nics, nic_bw, t->nlat);
  g_string_append (x, "    </node>\n");
  if (fab != NULL)
    g_string_append_printf (x, "    %s\n", fab);
  g_string_append (x, "  </cluster>\n</topology>\n");
  return g_string_free (x, FALSE);
}

/* The written file is named for the cluster, not the template: its
 * <efficiency> names the template's set of the band file (sim-bands.h),
 * which the template's own name gives where it names none, so that the
 * report prints the template's error bands */
static void
keep_bands (xmlNode *root, xmlNode *gpu_type)
{
  xmlNode *eff = child (gpu_type, "efficiency");
  g_autofree char *name = prop (root, "name");
  if (eff != NULL && name != NULL && !xmlHasProp (eff, (const xmlChar *) "bands"))
    xmlSetProp (eff, (const xmlChar *) "bands", (const xmlChar *) name);
}

SimImport *
sim_import_cluster (const SimImportInput *in, GError **error)
{
  g_autoptr (SimImport) im = g_new0 (SimImport, 1);
  Found f = { 0 };
  Template t = { 0 };
  const char *file = NULL;
  g_autofree char *path = NULL;
  xmlDoc *doc = NULL;
  xmlNode *root, *gpu_type, *cluster, *node, *fabric, *nvl, *nvs, *pcie, *nic;
  g_autofree char *gt = NULL, *fab = NULL, *id = NULL;
  im->assumed = g_ptr_array_new_with_free_func (g_free);
  if (in->nccl_xml == NULL && in->topo_m == NULL && in->ibstat == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "topology import: expected at least one of an NCCL topology dump, nvidia-smi topo -m or ibstat");
    return NULL;
  }
  if ((in->nccl_xml != NULL && !read_nccl (in->nccl_path, in->nccl_xml, &f, error)) ||
      (in->topo_m != NULL && !read_topo_m (in->topo_m_path, in->topo_m, &f, error)) ||
      (in->ibstat != NULL && !read_ibstat (in->ibstat_path, in->ibstat, &f, error)) ||
      (file = template_file (in, &f, error)) == NULL ||
      (path = sim_paths_resolve (file, "topologies", error)) == NULL) {
    g_free (f.nic_name);
    return NULL;
  }
  doc = xmlReadFile (path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  root = doc != NULL ? xmlDocGetRootElement (doc) : NULL;
  gpu_type = child (root, "gpu-type");
  cluster = child (root, "cluster");
  node = child (cluster, "node");
  fabric = child (cluster, "fabric");
  nvl = child (node, "nvlink");
  nvs = child (node, "nvswitch");
  pcie = child (node, "pcie");
  nic = child (node, "nic");
  if (gpu_type == NULL || node == NULL || nvl == NULL || pcie == NULL || nic == NULL) {
    if (doc != NULL)
      xmlFreeDoc (doc);
    g_free (f.nic_name);
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "%s: expected a cluster file with a <gpu-type> and a <node> of <nvlink>, <pcie> and <nic>", path);
    return NULL;
  }
  im->template_file = g_strdup (file);
  id = prop (gpu_type, "id");
  keep_bands (root, gpu_type);
  gt = dump (doc, gpu_type);
  fab = fabric != NULL ? dump (doc, fabric) : NULL;
  template_read (&t, gpu_type, node, nvl, nvs, pcie, nic);
  t.fabric = fab != NULL;
  import_assume (im, in, file, id, &t, &f);
  im->xml = import_xml (im, in, id, &t, &f, gt, fab);
  template_clear (&t);
  xmlFreeDoc (doc);
  g_free (f.nic_name);
  return g_steal_pointer (&im);
}

void
sim_import_free (SimImport *im)
{
  if (im == NULL)
    return;
  g_free (im->xml);
  g_free (im->template_file);
  g_clear_pointer (&im->assumed, g_ptr_array_unref);
  g_free (im);
}
