/* sim-cost.c — see sim-cost.h */
#include "sim-cost.h"

#include <math.h>
#include <string.h>

#include "sim-memory.h"

#include "sim-gemm.h"

/* a forward GEMM (m x k).(k x n) and its backward: data gradient
 * (m x n).(n x k) and weight gradient (k x m).(m x n) */
static void
gemm (const SimGpuType *g, double m, double n, double k, double *fwd_s, double *bwd_s,
      double *fwd_flop)
{
  *fwd_s += sim_gemm_time (g, m, n, k);
  *bwd_s += sim_gemm_time (g, m, k, n) + sim_gemm_time (g, k, n, m);
  *fwd_flop += 2.0 * m * n * k;
}

static double
hbm (const SimGpuType *g, double bytes)
{
  return bytes / g->hbm_bw_bytes_per_s;
}

void
sim_cost_layer (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c)
{
  double t = p->tp, cp = p->cp;
  double s = (double) p->seq_len / cp, S = (double) p->seq_len, b = p->micro_batch;
  double h = m->hidden, f = m->ffn_hidden, kvd = (double) sim_model_kv_dim (m);
  double d = (double) sim_model_head_dim (m), heads = (double) m->heads, V = m->vocab;
  double T = s * b;                       /* tokens of the micro-batch here */
  double Tn = p->sequence_parallel ? T / t : T; /* tokens the norms see */
  double peak = g->peak_flop_per_s[SIM_DTYPE_BF16] > 0 ? g->peak_flop_per_s[SIM_DTYPE_BF16]
                                                        : g->peak_flop_per_s[SIM_DTYPE_FP16];
  double fwd = 0, bwd = 0, flop = 0;
  double core_fwd = 0, core_bwd = 0, core_flop = 0;
  double mask = m->dropout ? 1.0 : 0.0;
  double up_n = (m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0) * f / t;

  memset (c, 0, sizeof *c);

  /* norms: read x, write y (2 bytes each); backward reads x, dy, writes dx */
  fwd += 2 * hbm (g, 4 * Tn * h);
  bwd += 2 * hbm (g, 6 * Tn * h);
  /* dropout + residual add, twice: read two, write one, the mask */
  fwd += 2 * hbm (g, (6 + mask) * Tn * h);
  bwd += 2 * hbm (g, (4 + mask) * Tn * h);

  /* QKV, attention output projection, MLP */
  gemm (g, T, (h + 2 * kvd) / t, h, &fwd, &bwd, &flop);
  gemm (g, T, h, h / t, &fwd, &bwd, &flop);
  gemm (g, T, up_n, h, &fwd, &bwd, &flop);
  gemm (g, T, h, f / t, &fwd, &bwd, &flop);
  /* activation: gelu reads f and writes f; swiglu reads 2f, writes f */
  if (m->mlp == SIM_MLP_SWIGLU) {
    fwd += hbm (g, 6 * T * f / t);
    bwd += hbm (g, 10 * T * f / t);
  } else {
    fwd += hbm (g, 4 * T * f / t);
    bwd += hbm (g, 6 * T * f / t);
  }

  /* attention core, per TP rank: heads/t heads of local queries x all keys */
  {
    double full_flop = 4.0 * T * S * h / t; /* QK^T and scores x V */
    if (p->flash_attention) {
      double eff_f = g->attn_fwd_efficiency > 0 ? g->attn_fwd_efficiency : 1.0;
      double eff_b = g->attn_bwd_efficiency > 0 ? g->attn_bwd_efficiency : 1.0;
      core_fwd = 0.5 * full_flop / (peak * eff_f);
      core_bwd = 2.5 * 0.5 * full_flop / (peak * eff_b);
      core_flop = 0.5 * full_flop;
    } else {
      double bh = b * heads / t;          /* batched heads */
      double scores = bh * s * S;         /* elements */
      double qk = sim_gemm_time (g, s, S, d), pv = sim_gemm_time (g, s, d, S);
      core_fwd = bh * (qk + pv);
      core_bwd = bh * (sim_gemm_time (g, s, d, S) + sim_gemm_time (g, d, S, s) +
                       sim_gemm_time (g, s, S, d) + sim_gemm_time (g, S, d, s));
      /* fused scale-mask-softmax: read and write the scores; dropout: the
       * same plus its mask; backward reads y and dy, writes dx */
      core_fwd += hbm (g, 4 * scores) + (m->dropout ? hbm (g, 5 * scores) : 0);
      core_bwd += hbm (g, 6 * scores) + (m->dropout ? hbm (g, 5 * scores) : 0);
      core_flop = full_flop;
    }
  }
  c->attn_core_fwd_s = core_fwd;
  c->layer_fwd_s = fwd + core_fwd;
  c->layer_bwd_s = bwd + core_bwd;
  c->layer_fwd_flop = flop + core_flop;
  c->layer_bwd_flop = 2 * flop + (p->flash_attention ? 2.5 : 2.0) * core_flop;
  switch (p->recompute) {
  case SIM_RECOMPUTE_FULL:
    c->layer_recompute_s = c->layer_fwd_s;
    c->layer_recompute_flop = c->layer_fwd_flop;
    break;
  case SIM_RECOMPUTE_SELECTIVE:
    /* flash attention already recomputes the core inside its backward */
    c->layer_recompute_s = p->flash_attention ? 0 : core_fwd;
    c->layer_recompute_flop = p->flash_attention ? 0 : core_flop;
    break;
  case SIM_RECOMPUTE_NONE:
    break;
  }

  /* embedding: gather rows, add positions; backward scatters into the grad */
  c->embed_fwd_s = hbm (g, (m->position == SIM_POSITION_LEARNED ? 8.0 : 4.0) * T * h);
  c->embed_bwd_s = hbm (g, 8.0 * T * h);
  /* output layer (vocabulary-parallel) and fp32 cross-entropy over V/t */
  {
    double hf = 0, hb = 0, hflop = 0;
    gemm (g, T, V / t, h, &hf, &hb, &hflop);
    hf += 2 * hbm (g, 4 * Tn * h) / 2;        /* final norm */
    hf += hbm (g, 12.0 * T * V / t);          /* logits fp32: max, exp-sum, loss */
    hb += hbm (g, 8.0 * T * V / t);           /* softmax - onehot */
    c->head_fwd_s = hf;
    c->head_bwd_s = hb;
    c->head_fwd_flop = hflop;
    c->head_bwd_flop = 2 * hflop;
  }

  /* Adam step, memory-bound: read the gradient (2 or 4 B), read and write
   * master, m and v (12 + 12 B), write the bf16 parameter (2 B) */
  {
    int pb, gb, mb, ob, ab;
    sim_recipe_bytes (p->recipe, &pb, &gb, &mb, &ob, &ab);
    c->optimizer_s_per_param = (double) (gb + ab + 2 * (mb + ob) + pb) / g->hbm_bw_bytes_per_s;
  }

  c->tp_colls_fwd = p->tp > 1 ? (p->sequence_parallel ? 4 : 2) : 0;
  c->tp_bytes = 2.0 * T * h;
  /* Megatron sends 1/t of the activation from each TP rank (scatter-gather) */
  c->pp_bytes = 2.0 * T * h / t;
  c->cp_kv_bytes = 2.0 * 2.0 * T * kvd / t;
}

double
sim_cost_model_flop (const SimModel *m, const SimPlan *p)
{
  double B = (double) p->global_batch, S = (double) p->seq_len, h = m->hidden;
  double f = m->ffn_hidden, kvd = (double) sim_model_kv_dim (m), L = m->layers, V = m->vocab;
  double up = (m->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0) * h * f;
  /* forward matmul FLOPs per token: projections, MLP, full attention, output */
  double per_token = 2.0 * (h * (h + 2 * kvd) + h * h + up) * L + 4.0 * S * h * L + 2.0 * h * V;
  return 3.0 * per_token * B * S;
}

double
sim_cost_narayanan_flop (const SimModel *m, guint64 B, guint64 s, gboolean full)
{
  double h = m->hidden, L = m->layers, V = m->vocab, S = (double) s;
  if (full)
    return 96.0 * B * S * L * h * h * (1 + S / (6 * h) + V / (16 * L * h));
  return 72.0 * B * S * L * h * h * (1 + S / (6 * h) + V / (12 * L * h));
}

GArray *
sim_cost_gemm_shapes (const SimModel *m, const SimPlan *p)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (SimGemmShape));
  double t = p->tp, T = (double) p->seq_len / p->cp * p->micro_batch;
  double h = m->hidden, f = m->ffn_hidden, kvd = (double) sim_model_kv_dim (m), V = m->vocab;
  double up = (m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0) * f / t;
  struct { const char *name, *dgrad, *wgrad; double m, n, k; } fwd[] = {
    { "qkv", "qkv_dgrad", "qkv_wgrad", T, (h + 2 * kvd) / t, h },
    { "attn_out", "attn_out_dgrad", "attn_out_wgrad", T, h, h / t },
    { "mlp_up", "mlp_up_dgrad", "mlp_up_wgrad", T, up, h },
    { "mlp_down", "mlp_down_dgrad", "mlp_down_wgrad", T, h, f / t },
    { "output", "output_dgrad", "output_wgrad", T, V / t, h },
  };
  for (guint i = 0; i < G_N_ELEMENTS (fwd); i++) {
    SimGemmShape s[3] = {
      { fwd[i].name, fwd[i].m, fwd[i].n, fwd[i].k },
      { fwd[i].dgrad, fwd[i].m, fwd[i].k, fwd[i].n },
      { fwd[i].wgrad, fwd[i].k, fwd[i].n, fwd[i].m },
    };
    g_array_append_vals (a, s, 3);
  }
  return a;
}
