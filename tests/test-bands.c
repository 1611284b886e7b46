/* tests for sim-bands: the band file, its set lookup beside a cluster file,
 * and the band attributes a cluster file may still carry */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sim-bands.h"
#include "sim-error.h"
#include "sim-paths.h"
#include "sim-topology.h"

/* a one-node cluster whose <efficiency> carries extra (attributes) */
static char *
cluster (const char *name, const char *extra)
{
  return g_strdup_printf (
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<topology name=\"%s\" description=\"test-bands\">\n"
      "  <gpu-type id=\"h100\" name=\"H100\">\n"
      "    <memory capacity=\"80GiB\" visible=\"81559MiB\" bandwidth=\"3.35TB/s\"/>\n"
      "    <peak dtype=\"bf16\" rate=\"989.4TFLOP/s\"/>\n"
      "    <efficiency sustained-clock=\"0.8\" hbm=\"0.9\" kernel-fixed=\"5us\" host-launch=\"6us\" "
      "comm-slowdown=\"0.1\"%s/>\n"
      "  </gpu-type>\n"
      "  <cluster nodes=\"1\">\n"
      "    <node name=\"n\" gpu-type=\"h100\" gpus=\"8\">\n"
      "      <nvlink generation=\"4\" links=\"18\" bandwidth=\"450GB/s\" latency=\"200ns\"/>\n"
      "      <nvswitch chips=\"4\" sharp=\"true\" latency=\"200ns\"/>\n"
      "      <pcie generation=\"5\" bandwidth=\"63GB/s\" latency=\"500ns\"/>\n"
      "      <nic name=\"CX7\" count=\"8\" bandwidth=\"400Gb/s\" latency=\"730ns\"/>\n"
      "    </node>\n"
      "    <fabric kind=\"rail-optimized\" name=\"f\" nodes-per-leaf=\"32\" oversubscription=\"1\"\n"
      "            switch-latency=\"130ns\" cable-latency=\"50ns\"/>\n"
      "  </cluster>\n"
      "</topology>\n",
      name, extra);
}

/* two sets: "a" with a fitted and an MoE band, "b" with a held-out one
 * that states its bias */
static const char *const band_file =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<bands>\n"
    "  <set name=\"a\">\n"
    "    <band kind=\"fitted\" error=\"0.013\" rows=\"18\"/>\n"
    "    <band kind=\"moe\" error=\"0.160\" bias=\"-0.130\" rows=\"8\" within=\"4\"/>\n"
    "  </set>\n"
    "  <set name=\"b\">\n"
    "    <band kind=\"heldout\" error=\"0.046\" bias=\"0.031\" rows=\"148\"/>\n"
    "  </set>\n"
    "</bands>\n";

static char *
write_file (const char *dir, const char *name, const char *text)
{
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  return path;
}

static SimBands
bands_of (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = sim_topology_load (path, 0, &error);
  g_assert_no_error (error);
  return sim_topology_gpu_type (t, 0)->eff.bands;
}

/* a scratch folder, removed with the files in it */
typedef char TestDir;

static void
remove_dir (TestDir *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *f = NULL;
  while (d != NULL && (f = g_dir_read_name (d)) != NULL) {
    g_autofree char *p = g_build_filename (dir, f, NULL);
    g_unlink (p);
  }
  g_rmdir (dir);
  g_free (dir);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestDir, remove_dir)

/* the values of a set, each band of the kind its <band> names; a kind the
 * set does not give is zero, a set not in the file is not found */
static void
test_read (void)
{
  g_autoptr (TestDir) dir = g_dir_make_tmp ("test-bands-XXXXXX", NULL);
  g_autofree char *path = write_file (dir, "bands.xml", band_file);
  g_autoptr (GError) error = NULL;
  SimBands b;
  gboolean found = FALSE;

  g_assert_true (sim_bands_read (path, "a", &b, &found, &error));
  g_assert_no_error (error);
  g_assert_true (found);
  g_assert_cmpfloat_with_epsilon (b.fitted.error, 0.013, 1e-12);
  g_assert_cmpuint (b.fitted.rows, ==, 18);
  g_assert_cmpfloat_with_epsilon (b.moe.error, 0.160, 1e-12);
  g_assert_cmpfloat_with_epsilon (b.moe.bias, -0.130, 1e-12);
  g_assert_cmpuint (b.moe.rows, ==, 8);
  g_assert_cmpuint (b.moe.within, ==, 4);
  g_assert_true (b.moe.has_bias);
  /* a fitted band without bias= states none: the report names no side */
  g_assert_false (b.fitted.has_bias);
  g_assert_cmpuint (b.heldout.rows, ==, 0);
  g_assert_cmpuint (b.fsdp.rows, ==, 0);
  /* a heldout band may state its bias (tools/heldout-check.py writes it) */
  g_assert_true (sim_bands_read (path, "b", &b, &found, &error));
  g_assert_true (found);
  g_assert_cmpuint (b.heldout.rows, ==, 148);
  g_assert_true (b.heldout.has_bias);
  g_assert_cmpfloat_with_epsilon (b.heldout.bias, 0.031, 1e-12);
  g_assert_true (sim_bands_read (path, "c", &b, &found, &error));
  g_assert_false (found);
  g_assert_cmpuint (b.fitted.rows, ==, 0);
  g_assert_cmpstr (sim_band_kind_name (SIM_BAND_TORCHTITAN), ==, "torchtitan");
  g_assert_true (sim_bands_get (&b, SIM_BAND_HELDOUT) == &b.heldout);
}

/* a cluster file gets the set of its <topology name> from the band file
 * beside it, or the set its bands= names; the set replaces the band
 * attributes of the form before the band file, which stay where no band
 * file holds the set */
static void
test_lookup (void)
{
  g_autoptr (TestDir) dir = g_dir_make_tmp ("test-bands-XXXXXX", NULL);
  g_autofree char *bands = write_file (dir, "bands.xml", band_file);
  g_autofree char *named = cluster ("a", "");
  g_autofree char *other = cluster ("x", " bands=\"b\"");
  g_autofree char *old = cluster ("x", " error=\"0.5\" error-rows=\"3\" moe-error=\"0.2\" moe-bias=\"0.1\" "
                                       "moe-rows=\"5\" moe-within=\"2\"");
  g_autofree char *both = cluster ("a", " error=\"0.5\" error-rows=\"3\"");
  g_autofree char *p1 = write_file (dir, "named.xml", named);
  g_autofree char *p2 = write_file (dir, "other.xml", other);
  g_autofree char *p3 = write_file (dir, "old.xml", old);
  g_autofree char *p4 = write_file (dir, "both.xml", both);
  SimBands b = bands_of (p1);

  g_assert_cmpuint (b.fitted.rows, ==, 18);
  g_assert_cmpuint (b.moe.within, ==, 4);
  b = bands_of (p2);
  g_assert_cmpuint (b.heldout.rows, ==, 148);
  g_assert_cmpuint (b.fitted.rows, ==, 0);
  b = bands_of (p3);
  g_assert_cmpfloat_with_epsilon (b.fitted.error, 0.5, 1e-12);
  g_assert_cmpuint (b.fitted.rows, ==, 3);
  g_assert_cmpfloat_with_epsilon (b.moe.bias, 0.1, 1e-12);
  g_assert_cmpuint (b.moe.within, ==, 2);
  b = bands_of (p4);
  g_assert_cmpuint (b.fitted.rows, ==, 18);
}

/* every malformed band file is refused in one line naming the band file
 * and the line, whether read alone or beside a cluster file */
static void
test_bad (void)
{
  static const struct {
    const char *text;
    const char *message;
  } bad[] = {
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"fitted\" error=\"0.1\" rows=\"1\">\n</bands>\n",
      "bands.xml:4: expected" },
    { "<topology name=\"a\"/>\n", "bands.xml:1: expected a <bands> document, got <topology>" },
    { "<bands>\n  <set>\n  </set>\n</bands>\n", "bands.xml:2: attribute name of <set>: expected a value" },
    { "<bands>\n  <set name=\"a\"/>\n  <set name=\"a\"/>\n</bands>\n",
      "bands.xml:3: attribute name of <set>: expected a unique name, 'a' is used twice" },
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"dense\" error=\"0.1\" rows=\"1\"/>\n  </set>\n</bands>\n",
      "bands.xml:3: attribute kind of <band>: expected fitted, heldout, moe, fsdp or torchtitan, got 'dense'" },
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"fitted\" error=\"0.1\" rows=\"1\"/>\n"
      "    <band kind=\"fitted\" error=\"0.2\" rows=\"2\"/>\n  </set>\n</bands>\n",
      "bands.xml:4: attribute kind of <band>: expected each kind once in a <set>, 'fitted' is given twice" },
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"fitted\" error=\"0.1\" rows=\"0\"/>\n  </set>\n</bands>\n",
      "bands.xml:3: attribute rows of <band>: expected a whole number from 1 to 1000000" },
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"moe\" error=\"0.1\" bias=\"0\" rows=\"4\" within=\"5\"/>\n"
      "  </set>\n</bands>\n",
      "bands.xml:3: attribute within of <band>: expected a whole number from 0 to 4" },
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"moe\" error=\"0.1\" rows=\"4\" within=\"2\"/>\n  </set>\n</bands>\n",
      "bands.xml:3: attribute bias of <band>: expected" },
    { "<bands>\n  <set name=\"a\">\n    <band kind=\"fitted\" error=\"0.1\" rows=\"4\" within=\"2\"/>\n  </set>\n</bands>\n",
      "bands.xml:3: " },
    { "<bands>\n  <band kind=\"fitted\" error=\"0.1\" rows=\"4\"/>\n</bands>\n", "bands.xml:2: " },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autoptr (TestDir) dir = g_dir_make_tmp ("test-bands-XXXXXX", NULL);
    g_autofree char *path = write_file (dir, "bands.xml", bad[i].text);
    g_autofree char *text = cluster ("a", "");
    g_autofree char *topo = write_file (dir, "t.xml", text);
    g_autoptr (GError) error = NULL;
    g_autoptr (GError) error2 = NULL;
    g_autoptr (SimTopology) t = NULL;
    SimBands b;
    gboolean found = TRUE;
    g_test_message ("case %u: %s", i, bad[i].message);
    g_assert_false (sim_bands_read (path, "a", &b, &found, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_XML);
    g_assert_false (found);
    g_assert_nonnull (strstr (error->message, bad[i].message));
    g_assert_true (g_str_has_prefix (error->message, path));
    g_assert_null (strchr (error->message, '\n'));
    t = sim_topology_load (topo, 0, &error2);
    g_assert_null (t);
    g_assert_error (error2, SIM_ERROR, SIM_ERROR_XML);
    g_assert_cmpstr (error2->message, ==, error->message);
  }
}

/* a copy of a shipped cluster file elsewhere, with no band file beside it,
 * gets the shipped set: dgx-h200.xml names dgx-h100's, whose held-out band
 * is 153 runs (tests/validation/data/h100_dense_heldout.csv) */
static void
test_shipped (void)
{
  g_autoptr (TestDir) dir = g_dir_make_tmp ("test-bands-XXXXXX", NULL);
  g_autofree char *src = g_build_filename (SIM_SOURCE_DIR, "topologies", "dgx-h200.xml", NULL);
  g_autofree char *text = NULL;
  g_autofree char *copy = NULL;
  g_autoptr (GError) error = NULL;
  SimBands b;

  g_assert_true (g_file_get_contents (src, &text, NULL, &error));
  copy = write_file (dir, "mine.xml", text);
  b = bands_of (copy);
  g_assert_cmpuint (b.heldout.rows, ==, 153);
  g_assert_cmpuint (b.fsdp.rows, >, 0);
}

/* the band file is no cluster: sim list topologies and --topology NAME's
 * suggestions leave it out; and every shipped cluster file keeps its bands
 * there, none as attributes of <efficiency> */
static void
test_shipped_files (void)
{
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) names = sim_paths_list ("topologies", paths);
  g_assert_cmpuint (names->len, >, 10);
  for (guint i = 0; i < names->len; i++) {
    g_autofree char *text = NULL;
    const char *eff = NULL;
    g_assert_cmpstr (g_ptr_array_index (names, i), !=, "bands");
    g_assert_true (g_file_get_contents (g_ptr_array_index (paths, i), &text, NULL, NULL));
    for (eff = strstr (text, "<efficiency "); eff != NULL; eff = strstr (eff + 1, "<efficiency ")) {
      g_autofree char *tag = g_strndup (eff, strcspn (eff, ">"));
      g_test_message ("%s: %s", (const char *) g_ptr_array_index (names, i), tag);
      g_assert_null (strstr (tag, "error="));
      g_assert_null (strstr (tag, "-rows="));
    }
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bands/read", test_read);
  g_test_add_func ("/bands/lookup", test_lookup);
  g_test_add_func ("/bands/bad", test_bad);
  g_test_add_func ("/bands/shipped", test_shipped);
  g_test_add_func ("/bands/shipped-files", test_shipped_files);
  return g_test_run ();
}
