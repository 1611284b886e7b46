/* sim-report-kernels.c — the text and CSV of sim_cost_layer_kernels, as
 * `sim kernels` prints them and the HTML report shows them: see
 * sim-report.h */
#include <stdio.h>
#include <string.h>

#include "sim-cost.h"
#include "sim-format.h"
#include "sim-report.h"

/* as wide as the report (REPORT_COLUMNS of sim-report.c) */
#define KERNELS_COLUMNS 100

/* a byte count as MB (10^6) with one decimal, or GB (10^9) from 1 GB */
static char *
bytes_text (double b)
{
  return b >= 1e9 ? g_strdup_printf ("%.2f GB", b / 1e9) : g_strdup_printf ("%.1f MB", b / 1e6);
}

static gboolean
same_kernel (const SimKernel *a, const SimKernel *b)
{
  return strcmp (a->pass, b->pass) == 0 && strcmp (a->name, b->name) == 0 &&
         strcmp (a->role, b->role) == 0 && a->kind == b->kind && a->m == b->m && a->n == b->n &&
         a->k == b->k && a->batch == b->batch && a->bytes == b->bytes && a->seconds == b->seconds &&
         a->kernels == b->kernels;
}

/* the list as CSV, one row per kernel, in sim_cost_layer_kernels' order:
 * for a profile to be set beside (the seconds include the fixed cost per
 * kernel) */
char *
sim_report_kernels_csv (const GArray *k)
{
  static const char *kinds[] = { "gemm",      "batched_gemm", "grouped_gemm",
                                 "attention", "memory",       "wait" };
  GString *out = g_string_new ("pass,name,role,kind,m,n,k,batch,kernels,bytes,flop,seconds\n");
  for (guint i = 0; i < k->len; i++) {
    const SimKernel *x = &g_array_index (k, SimKernel, i);
    char sec[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf (out, "%s,%s,%s,%s,%.0f,%.0f,%.0f,%.0f,%d,%.0f,%.0f,%s\n", x->pass,
                            x->name, x->role, kinds[x->kind], x->m, x->n, x->k, x->batch,
                            x->kernels, x->bytes, x->flop,
                            g_ascii_formatd (sec, sizeof sec, "%.9e", x->seconds));
  }
  return g_string_free (out, FALSE);
}

/* one pass's rows and its summary; the kernels from index *i while their
 * pass is the same */
static void
print_pass (GString *out, const GArray *k, guint *i, const SimGpuType *g,
            SimAttentionKernel attention)
{
  const char *pass = g_array_index (k, SimKernel, *i).pass;
  double sum[SIM_KERNEL_WAIT + 1] = { 0 }, total = 0, flop = 0;
  int n = 0;
  g_string_append_printf (out, "\n%-30s %-27s %8s %8s %8s %7s\n", pass, "m x n x k, or bytes",
                          "GFLOP", "ms", "TFLOP/s", "GB/s");
  while (*i < k->len && strcmp (g_array_index (k, SimKernel, *i).pass, pass) == 0) {
    const SimKernel *x = &g_array_index (k, SimKernel, *i);
    /* a run of the same kernel (the same module, role, shape and bytes)
     * prints as one row, its count in front of the name */
    guint same = 1;
    while (*i + same < k->len && same_kernel (x, &g_array_index (k, SimKernel, *i + same)))
      same++;
    *i += same;
    g_autofree char *count = same > 1 ? g_strdup_printf ("%u x ", same) : g_strdup ("");
    g_autofree char *name = g_strdup_printf ("%s%s%s%s", count, x->name, *x->role ? " " : "",
                                             x->role);
    g_autofree char *what = NULL;
    /* the work's rate, without the fixed per-kernel cost */
    double work_s = x->seconds - g->eff.kernel_fixed_s * x->kernels;
    if (x->kind == SIM_KERNEL_WAIT)
      what = g_strdup ("GPU waits for the host");
    else if (x->kind == SIM_KERNEL_MEMORY)
      what = bytes_text (x->bytes);
    else if (x->kind == SIM_KERNEL_ATTENTION)
      what = g_strdup (attention == SIM_ATTENTION_CUDNN    ? "fused (cuDNN)"
                       : attention == SIM_ATTENTION_FLASH2 ? "fused (FlashAttention-2)"
                       : attention == SIM_ATTENTION_TRITON ? "fused (Triton FlashAttn)"
                                                           : "fused (FlashAttention)");
    else if (x->batch > 1)
      what = g_strdup_printf ("%.0f x %.0f x %.0f x %.0f", x->batch, x->m, x->n, x->k);
    else
      what = g_strdup_printf ("%.0f x %.0f x %.0f", x->m, x->n, x->k);
    g_string_append_printf (out, "  %-28s %-27s ", name, what);
    if (x->flop > 0)
      g_string_append_printf (out, "%8.2f %8.3f %8.1f\n", same * x->flop / 1e9,
                              same * x->seconds * 1e3, work_s > 0 ? x->flop / work_s / 1e12 : 0.0);
    else if (x->kind == SIM_KERNEL_MEMORY && x->bytes > 0)
      g_string_append_printf (out, "%8s %8.3f %8s %7.0f\n", "", same * x->seconds * 1e3, "",
                              work_s > 0 ? x->bytes / work_s / 1e9 : 0.0);
    else
      g_string_append_printf (out, "%8s %8.3f\n", "", same * x->seconds * 1e3);
    sum[x->kind] += same * x->seconds;
    total += same * x->seconds;
    flop += same * x->flop;
    n += same * x->kernels;
  }
  if (flop > 0)
    g_string_append_printf (out, "  %-28s %-27s %8.2f %8.3f %8.1f\n", "total", "", flop / 1e9,
                            total * 1e3, flop / total / 1e12);
  else
    g_string_append_printf (out, "  %-28s %-27s %8s %8.3f\n", "total", "", "", total * 1e3);
  {
    double gemm = sum[SIM_KERNEL_GEMM] + sum[SIM_KERNEL_BATCHED_GEMM] +
                  sum[SIM_KERNEL_GROUPED_GEMM];
    double host = n * g->eff.host_launch_s;
    g_autofree char *line = g_strdup_printf (
        "GEMMs %.0f%%, attention %.0f%%, memory-bound %.0f%% of %.3f ms on the GPU, of which "
        "%d kernels' fixed cost %.3f ms; the host launches them in %.3f ms%s",
        total > 0 ? 100 * gemm / total : 0.0,
        total > 0 ? 100 * sum[SIM_KERNEL_ATTENTION] / total : 0.0,
        total > 0 ? 100 * sum[SIM_KERNEL_MEMORY] / total : 0.0, total * 1e3, n,
        n * g->eff.kernel_fixed_s * 1e3, host * 1e3,
        host > total ? " (the host is the bottleneck: the pass takes that long)" : "");
    g_string_append (out, "  ");
    sim_format_append_wrapped (out, line, 2, 2, KERNELS_COLUMNS);
    g_string_append_c (out, '\n');
  }
}

char *
sim_report_kernels (const SimModel *m, const SimPlan *p, const SimGpuType *g)
{
  g_autoptr (GArray) k = sim_cost_layer_kernels (m, p, g);
  GString *out = g_string_new (NULL);
  guint i = 0;
  {
    double tokens = (double) p->seq_len / p->cp * p->micro_batch;
    g_autofree char *head = g_strdup_printf (
        "%s on one %s: one %slayer and the output layer, one micro-batch of %.0f tokens on this GPU "
        "(micro-batch %d x sequence %" G_GUINT64_FORMAT " / cp %d), tp %d%s%s",
        m->name, g->name, sim_model_is_moe (m) ? "mixture-of-experts " : "", tokens, p->micro_batch,
        p->seq_len, p->cp, p->tp, p->fp8 != SIM_FP8_OFF ? ", FP8 linear layers" : "",
        p->sequence_parallel ? ", sequence parallel" : "");
    g_autofree char *eff = g_strdup_printf (
        "each kernel: %.1f us fixed, then its work at the cluster file's GEMM table x sustained clock "
        "%.3f, at its attention rates, or its bytes at %.2f TB/s x %.3f; the host issues a kernel in "
        "%.1f us",
        g->eff.kernel_fixed_s * 1e6, g->eff.clock, g->hbm_bw_bytes_per_s / 1e12, g->eff.hbm,
        g->eff.host_launch_s * 1e6);
    sim_format_append_wrapped (out, head, 0, 2, KERNELS_COLUMNS);
    g_string_append_c (out, '\n');
    g_string_append (out, "  ");
    sim_format_append_wrapped (out, eff, 2, 2, KERNELS_COLUMNS);
    g_string_append_c (out, '\n');
  }
  while (i < k->len)
    print_pass (out, k, &i, g, p->attention_kernel);
  if (p->recompute != SIM_RECOMPUTE_NONE) {
    /* what the backward runs again first, as sim_cost_layer charges it */
    SimLayerCost c;
    g_autofree char *line = NULL;
    sim_cost_layer (m, p, g, &c);
    line = g_strdup_printf (
        "recomputation: %.3f ms of the forward's kernels again before each %slayer's "
        "backward (%s), not listed above",
        (sim_model_is_moe (m) ? c.moe_recompute_s : c.layer_recompute_s) * 1e3,
        sim_plan_recomputes_all (p) || p->recompute != SIM_RECOMPUTE_FULL ? "" : "recomputed ",
        p->recompute == SIM_RECOMPUTE_FULL ? "full: the whole forward"
                                           : "selective: the modules --recompute-modules names");
    g_string_append_c (out, '\n');
    sim_format_append_wrapped (out, line, 0, 2, KERNELS_COLUMNS);
    g_string_append_c (out, '\n');
  }
  return g_string_free (out, FALSE);
}
