/* sim-cost-shapes.c — see sim-cost.h: sim shapes' list of a layer's
 * GEMMs (sim_cost_gemm_shapes), the shapes sim-cost.c charges */
#include "sim-cost.h"

/* one row of sim shapes' list: a forward GEMM (m x k).(k x n) and the
 * names of its data- and weight-gradient GEMMs */
typedef struct {
  const char *name, *dgrad, *wgrad;
  double m, n, k;
} ShapeRow;

/* the forward GEMM and its backward's two, as k_linear charges them */
static void
shapes_append (GArray *a, const ShapeRow *r)
{
  SimGemmShape s[3] = {
    { r->name, r->m, r->n, r->k },
    { r->dgrad, r->m, r->k, r->n },
    { r->wgrad, r->k, r->n, r->m },
  };
  g_array_append_vals (a, s, 3);
}

/* latent attention's projections, as mla_linears charges them: the down
 * projections on the Tn tokens a TP rank holds (duplicated on every
 * rank), the up and output projections split by heads on all T */
static void
shapes_mla (GArray *a, const SimModel *m, double t, double T, double Tn)
{
  const SimMla *l = &m->mla;
  double h = m->hidden, H = (double) m->heads;
  double ql = (double) l->q_lora_rank, kl = (double) l->kv_lora_rank;
  double n = (double) l->qk_nope_head_dim, r = (double) l->qk_rope_head_dim;
  double v = (double) l->v_head_dim;
  const ShapeRow q_latent[] = {
    { "q_down", "q_down_dgrad", "q_down_wgrad", Tn, ql, h },
    { "q_up", "q_up_dgrad", "q_up_wgrad", T, H * (n + r) / t, ql },
  };
  const ShapeRow q_direct = { "q_proj", "q_proj_dgrad", "q_proj_wgrad", T, H * (n + r) / t, h };
  const ShapeRow kv_out[] = {
    { "kv_down", "kv_down_dgrad", "kv_down_wgrad", Tn, kl + r, h },
    { "kv_up", "kv_up_dgrad", "kv_up_wgrad", T, H * (n + v) / t, kl },
    { "attn_out", "attn_out_dgrad", "attn_out_wgrad", T, h, H * v / t },
  };
  /* q straight from the hidden state where there is no q latent */
  if (ql > 0) {
    shapes_append (a, &q_latent[0]);
    shapes_append (a, &q_latent[1]);
  } else {
    shapes_append (a, &q_direct);
  }
  for (guint i = 0; i < G_N_ELEMENTS (kv_out); i++)
    shapes_append (a, &kv_out[i]);
}

/* a mixture-of-experts layer's GEMMs, as moe_kernels charges them: the
 * router (BF16) on the Tn tokens a GPU holds; one routed expert's up and
 * down projections, R/(E/ep) rows each for the R = Tn*k*etp rows (times
 * moe_load) its expert tensor-parallel group gathered, at width fe/etp:
 * a grouped GEMM runs E/ep of them, one per local expert; the shared
 * experts as one MLP of width S*fe split over TP, on all T tokens */
static void
shapes_moe (GArray *a, const SimModel *m, const SimPlan *p, double T, double Tn)
{
  const SimMoe *e = &m->moe;
  double t = p->tp, h = m->hidden, E = (double) e->experts, k = (double) e->top_k;
  double etp = MAX (p->etp, 1), ep = MAX (p->ep, 1);
  double glu = m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0;
  double fe = (double) e->ffn_hidden / etp, fs = (double) (e->shared_experts * e->ffn_hidden);
  double per_expert = Tn * k * etp * sim_cost_moe_load (m, p) / (E / ep);
  const ShapeRow rows[] = {
    { "router", "router_dgrad", "router_wgrad", Tn, E, h },
    { "expert_up", "expert_up_dgrad", "expert_up_wgrad", per_expert, glu * fe, h },
    { "expert_down", "expert_down_dgrad", "expert_down_wgrad", per_expert, h, fe },
    { "shared_up", "shared_up_dgrad", "shared_up_wgrad", T, glu * fs / t, h },
    { "shared_down", "shared_down_dgrad", "shared_down_wgrad", T, h, fs / t },
  };
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    if (rows[i].n > 0 && rows[i].k > 0)
      shapes_append (a, &rows[i]);
}

GArray *
sim_cost_gemm_shapes (const SimModel *m, const SimPlan *p)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (SimGemmShape));
  double t = p->tp, T = (double) p->seq_len / p->cp * p->micro_batch;
  /* the tokens the norms (and a MoE layer's router) see: T/t under
   * sequence parallelism, which an unset plan takes (the default with tp > 1) */
  double Tn = p->sequence_parallel != 0 ? T / t : T;
  double h = m->hidden, f = m->ffn_hidden, kvd = (double) sim_model_kv_dim (m), V = m->vocab;
  double qd = (double) m->heads * (double) sim_model_head_dim (m);
  double up = (m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0) * f / t;
  /* the dense MLP only where a dense layer has it */
  gboolean dense_mlp = sim_model_moe_layers (m) < m->layers;
  const ShapeRow attn[] = {
    { "qkv", "qkv_dgrad", "qkv_wgrad", T, (qd + 2 * kvd) / t, h },
    { "attn_out", "attn_out_dgrad", "attn_out_wgrad", T, h, qd / t },
  };
  const ShapeRow mlp[] = {
    { "mlp_up", "mlp_up_dgrad", "mlp_up_wgrad", T, up, h },
    { "mlp_down", "mlp_down_dgrad", "mlp_down_wgrad", T, h, f / t },
  };
  const ShapeRow output = { "output", "output_dgrad", "output_wgrad", T, V / t, h };
  if (m->mla.kv_lora_rank > 0)
    shapes_mla (a, m, t, T, Tn);
  else
    for (guint i = 0; i < G_N_ELEMENTS (attn); i++)
      shapes_append (a, &attn[i]);
  for (guint i = 0; i < G_N_ELEMENTS (mlp) && dense_mlp; i++)
    shapes_append (a, &mlp[i]);
  if (sim_model_is_moe (m))
    shapes_moe (a, m, p, T, Tn);
  /* a multi-token-prediction module's projection of the hidden state and
   * the next token's embedding, 2h -> h/t (its layer and output layer are
   * the rows above) */
  if (p->mtp_layers > 0) {
    const ShapeRow eh = { "mtp_eh_proj", "mtp_eh_proj_dgrad", "mtp_eh_proj_wgrad", T, h / t, 2 * h };
    shapes_append (a, &eh);
  }
  shapes_append (a, &output);
  return a;
}
