#include "sim-error.h"

G_DEFINE_QUARK (sim-error-quark, sim_error)
