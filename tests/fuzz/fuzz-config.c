/* fuzz-config.c — the framework config readers (sim --config): the first
 * byte picks torchtitan's TOML (even) or NeMo / Megatron-Bridge YAML (odd),
 * the rest is the file; a config that loads is applied to a request and
 * its notes written, as the command line does. */
#include "fuzz.h"
#include "sim-config.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char *paths[2];
  GError *error = NULL;
  SimConfig *c;
  int yaml;
  if (size == 0)
    return 0;
  yaml = data[0] & 1;
  if (paths[yaml] == NULL)
    paths[yaml] = g_strdup_printf ("%s/sim-fuzz-config-%d%s", g_get_tmp_dir (), (int) getpid (),
                                   yaml ? ".yaml" : ".toml");
  if (!g_file_set_contents (paths[yaml], (const char *) data + 1, (gssize) size - 1, NULL))
    g_error ("cannot write %s", paths[yaml]);
  c = sim_config_load (paths[yaml], &error);
  if (c == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  {
    SimPlanRequest *req = sim_plan_request_new ();
    if (sim_config_apply (c, req, 64, &error))
      {
        /* no cluster here to resolve the request on: the notes of the
         * config alone */
        GPtrArray *notes = sim_config_notes (c, NULL);
        g_ptr_array_unref (notes);
      }
    else
      {
        g_assert (error != NULL && error->message[0] != '\0');
        g_clear_error (&error);
      }
    sim_plan_request_free (req);
  }
  sim_config_free (c);
  return 0;
}
