/* cmd-validate.c — `sim validate`: measured nccl-tests output vs simulated */
#include "sim-commands.h"
#include "sim-error.h"

int
sim_cmd_validate (int argc, char **argv, GError **error)
{
  g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "validate: not built yet");
  return 2;
}
