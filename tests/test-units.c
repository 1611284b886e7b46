/* tests for sim-units: the one parser of quantities */
#include <glib.h>

#include "sim-error.h"
#include "sim-units.h"

static void
test_bytes (void)
{
  struct { const char *text; guint64 bytes; } ok[] = {
    { "80GiB", G_GUINT64_CONSTANT (80) * 1073741824 },
    { "81559MiB", G_GUINT64_CONSTANT (81559) * 1048576 },
    { "1.5GB", 1500000000 },
    { "4096B", 4096 },
    { "2kB", 2000 },
    { "2KiB", 2048 },
    { "141 GiB", G_GUINT64_CONSTANT (141) * 1073741824 },
    { "1TB", G_GUINT64_CONSTANT (1000000000000) },
    { "1e9B", 1000000000 },
    { "1EB", G_GUINT64_CONSTANT (1000000000000000000) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ok); i++) {
    g_autoptr (GError) error = NULL;
    guint64 b = 0;
    g_assert_true (sim_units_parse_bytes (ok[i].text, &b, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (b, ==, ok[i].bytes);
  }
}

static void
test_bad (void)
{
  /* each is refused: no unit, unknown unit, bits for a size, plain K,
   * negative, NaN, infinity, absurd, empty */
  const char *bad[] = { "80", "80GX", "80Gb", "80KB", "-1GB", "nanGB", "infGB", "NaN",
                        "1000000EiB", "", "GB", "1.5.2GB", "80 G B" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autoptr (GError) error = NULL;
    guint64 b = 0;
    g_assert_false (sim_units_parse_bytes (bad[i], &b, &error));
    g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
  }
}

static void
test_bandwidth (void)
{
  g_autoptr (GError) error = NULL;
  double v = 0;
  /* 400 Gb/s NDR = 50 GB/s: b is a bit */
  g_assert_true (sim_units_parse_bandwidth ("400Gb/s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 50e9, 1e-3);
  g_assert_true (sim_units_parse_bandwidth ("450GB/s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 450e9, 1e-3);
  g_assert_true (sim_units_parse_bandwidth ("3.35TB/s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 3.35e12, 1e-1);
  g_assert_true (sim_units_parse_bandwidth ("1GiB/s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 1073741824.0, 1e-6);
  g_assert_no_error (error);
  g_assert_false (sim_units_parse_bandwidth ("450GB", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
  g_clear_error (&error);
  g_assert_false (sim_units_parse_bandwidth ("450", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
  g_clear_error (&error);
  /* found by fuzz-units: 95e300 is a finite double, 95e300 GB/s is not */
  g_assert_false (sim_units_parse_bandwidth ("95e300GB/s", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
  g_clear_error (&error);
  g_assert_false (sim_units_parse_flop_rate ("1e300EFLOP/s", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
}

static void
test_flops_time (void)
{
  g_autoptr (GError) error = NULL;
  double v = 0;
  g_assert_true (sim_units_parse_flop_rate ("989.4TFLOP/s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 989.4e12, 1.0);
  g_assert_true (sim_units_parse_flop_rate ("312TFLOP/s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 312e12, 1.0);
  g_assert_true (sim_units_parse_time ("500ns", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 500e-9, 1e-18);
  g_assert_true (sim_units_parse_time ("1.5us", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 1.5e-6, 1e-18);
  g_assert_true (sim_units_parse_time ("2ms", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 2e-3, 1e-15);
  g_assert_true (sim_units_parse_time ("1s", &v, &error));
  g_assert_cmpfloat_with_epsilon (v, 1.0, 1e-15);
  g_assert_no_error (error);
  g_assert_false (sim_units_parse_time ("5", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
  g_clear_error (&error);
  g_assert_false (sim_units_parse_time ("5min", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
  g_clear_error (&error);
  g_assert_false (sim_units_parse_flop_rate ("989TFLOPS", &v, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_UNIT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/units/bytes", test_bytes);
  g_test_add_func ("/units/bad", test_bad);
  g_test_add_func ("/units/bandwidth", test_bandwidth);
  g_test_add_func ("/units/flops-time", test_flops_time);
  return g_test_run ();
}
