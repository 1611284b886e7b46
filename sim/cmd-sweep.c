#include "sim-commands.h"
#include "sim-error.h"
int
sim_cmd_sweep (int argc, char **argv, GError **error)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "sweep: not built yet");
  return 2;
}
