/* cmd-shapes.c — `sim shapes`: the GEMMs a model runs on one TP rank, for
 * microbench/gemm --model (which calls this to read the model XML); for a
 * mixture-of-experts model also its router's, one routed expert's at the
 * plan's ep and etp, and its shared experts' */
#include <stdio.h>

#include "cli.h"
#include "sim-cost.h"
#include "sim-error.h"
#include "sim-paths.h"
#include "sim-sweep.h"

int
sim_cmd_shapes (int argc, char **argv, GError **error)
{
  g_autofree char *model_s = NULL, *tp_s = NULL, *cp_s = NULL, *seq_s = NULL, *mb_s = NULL;
  g_autofree char *ep_s = NULL, *etp_s = NULL, *imb_s = NULL;
  g_autofree char *path = NULL;
  g_autoptr (SimModel) m = NULL;
  g_autoptr (SimPlanRequest) q = sim_plan_request_new ();
  g_autoptr (SimPlan) p = NULL;
  g_autoptr (GArray) shapes = NULL;
  gboolean help = FALSE;
  const SimCliOption options[] = {
    { "model", TRUE, &model_s, NULL, NULL }, { "tp", TRUE, &tp_s, NULL, NULL },
    { "cp", TRUE, &cp_s, NULL, NULL }, { "seq-len", TRUE, &seq_s, NULL, NULL },
    { "micro-batch", TRUE, &mb_s, NULL, NULL }, { "ep", TRUE, &ep_s, NULL, NULL },
    { "etp", TRUE, &etp_s, NULL, NULL }, { "moe-imbalance", TRUE, &imb_s, NULL, NULL },
    { "help", FALSE, NULL, &help, NULL },
    { NULL, FALSE, NULL, NULL, NULL },
  };
  int tp = 1, cp = 1, seq = 0, mb = 1, ep = 0, etp = 0;
  /* --ep and --etp checked as sim sweep checks its lists */
  SimSweepConstraints experts = { .n_ep = 0 };
  if (!sim_cli_parse (argc, argv, 2, options, "shapes", error))
    return 2;
  if (help || model_s == NULL) {
    if (!help) {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "shapes: expected --model M; see sim shapes --help");
      return 2;
    }
    puts ("usage: sim shapes --model FILE|NAME [--tp N] [--cp N] [--seq-len N] [--micro-batch N]\n"
          "                  [--ep N] [--etp N] [--moe-imbalance R]\n"
          "prints name,m,n,k of the GEMMs one tensor-parallel rank runs per layer and micro-batch;\n"
          "for a mixture-of-experts model also the router's, one routed expert's (expert_up,\n"
          "expert_down: a grouped GEMM runs one per local expert, experts/ep of them) at --ep\n"
          "(default 1) and --etp (default tp), its rows for the busiest GPU at --moe-imbalance\n"
          "(default 1), and the shared experts' (shared_up, shared_down); with multi-token\n"
          "prediction (DeepSeek-V3) its projection (mtp_eh_proj)");
    return 0;
  }
  if ((tp_s != NULL && !sim_cli_int ("tp", tp_s, 1, 1 << 20, &tp, error)) ||
      (cp_s != NULL && !sim_cli_int ("cp", cp_s, 1, 1 << 20, &cp, error)) ||
      (seq_s != NULL && !sim_cli_int ("seq-len", seq_s, 1, 1 << 24, &seq, error)) ||
      (mb_s != NULL && !sim_cli_int ("micro-batch", mb_s, 1, 1 << 20, &mb, error)) ||
      (ep_s != NULL && !sim_cli_int ("ep", ep_s, 1, 1 << 20, &ep, error)) ||
      (etp_s != NULL && !sim_cli_int ("etp", etp_s, 1, 1 << 20, &etp, error)))
    return 2;
  if ((path = sim_paths_resolve (model_s, "models", error)) == NULL || (m = sim_model_load (path, error)) == NULL)
    return 2;
  /* the plan's own check of the ratio (1 to 64), and only with experts */
  if (imb_s != NULL && !sim_plan_request_set (q, "moe-imbalance", imb_s, NULL, error))
    return 2;
  if (imb_s != NULL && !sim_model_is_moe (m)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--moe-imbalance: %s has no mixture-of-experts layers",
                 m->name);
    return 2;
  }
  if (!sim_plan_request_set_number (q, "tp", (guint64) tp, error) ||
      !sim_plan_request_set_number (q, "cp", (guint64) cp, error) ||
      !sim_plan_request_set_number (q, "micro-batch", (guint64) mb, error) ||
      (seq > 0 && !sim_plan_request_set_number (q, "seq-len", (guint64) seq, error)) ||
      (ep > 0 && !sim_plan_request_set_number (q, "ep", (guint64) ep, error)) ||
      (etp > 0 && !sim_plan_request_set_number (q, "etp", (guint64) etp, error)) ||
      (p = sim_plan_resolve_model (q, m, error)) == NULL)
    return 2;
  experts.ep[0] = p->ep, experts.n_ep = p->ep > 1;
  experts.etp[0] = p->etp, experts.n_etp = p->etp > 1;
  if (!sim_sweep_check_experts (m, &experts, error))
    return 2;
  shapes = sim_cost_gemm_shapes (m, p);
  puts ("name,m,n,k");
  for (guint i = 0; i < shapes->len; i++) {
    const SimGemmShape *s = &g_array_index (shapes, SimGemmShape, i);
    printf ("%s,%.0f,%.0f,%.0f\n", s->name, s->m, s->n, s->k);
  }
  return 0;
}
