/* sim-cost.c — see sim-cost.h */
#include "sim-cost.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-memory.h"

#include "sim-gemm.h"

/* The kernels of one piece of work (a layer's forward, its backward, ...)
 * as they run on the GPU: their summed time and how many there are.  Each
 * kernel takes the GPU's fixed per-kernel cost (launch gap and tail) plus
 * its work at the rate training sustains (SimEfficiency). */
typedef struct {
  const SimGpuType *g;
  double s;       /* GPU seconds */
  double flop;    /* executed FLOPs */
  int kernels;
  int graphed;    /* of the kernels, those a CUDA graph replays (graph_layer) */
  int graphs;     /* the graph replays the host launches instead */
  /* of s and kernels, the weight-gradient GEMMs' (a schedule that splits
   * the backward runs them as a pass of their own, sim-schedule.h) */
  double w_s;
  int w_kernels;
  /* sim_cost_layer_kernels: each kernel appended here (SimKernel), named
   * by pass and tag; NULL when no one asks */
  GArray *log;
  const char *pass, *tag;
} Acc;

/* names what the kernels charged next to these accumulators are */
static void
tag (const char *name, Acc *a, Acc *b, Acc *c, Acc *d, Acc *e)
{
  Acc *all[] = { a, b, c, d, e };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    if (all[i] != NULL)
      all[i]->tag = name;
}

/* one row of a->log: `kernels` kernels (1; the groups of a grouped GEMM;
 * 0 for a wait, or bytes a kernel above also writes) of s seconds, their
 * fixed cost included */
static void
log_kernel (const Acc *a, SimKernelKind kind, const char *role, double m, double n, double k,
            double batch, int kernels, double bytes, double flop, double s)
{
  SimKernel x = { .pass = a->pass,
                  .name = a->tag != NULL ? a->tag : "other",
                  .role = role,
                  .kind = kind,
                  .m = m,
                  .n = n,
                  .k = k,
                  .batch = batch,
                  .kernels = kernels,
                  .bytes = bytes,
                  .flop = flop,
                  .seconds = s };
  if (a->log != NULL)
    g_array_append_val (a->log, x);
}

/* seconds charged to a without a kernel of their own: bytes a cast above
 * also writes (kind SIM_KERNEL_MEMORY), or the GPU waiting for the host
 * (SIM_KERNEL_WAIT) */
static void
k_extra (Acc *a, SimKernelKind kind, double bytes, double s)
{
  a->s += s;
  log_kernel (a, kind, "", 0, 0, 0, 1, 0, bytes, 0, s);
}

static double
bf16_peak (const SimGpuType *g)
{
  return g->peak_flop_per_s[SIM_DTYPE_BF16] > 0 ? g->peak_flop_per_s[SIM_DTYPE_BF16]
                                                 : g->peak_flop_per_s[SIM_DTYPE_FP16];
}

/* FP8 GEMMs: cuBLAS on H100 SXM reaches 1,402.6 TFLOP/s at its best FP8
 * (E4M3) shape against 794.5 at its best BF16 shape (stas00/ml-engineering
 * compute/accelerator/README.md @744d01e, MAMF table: rows
 * mamf_h100_sxm_fp8 of tests/validation/data/gemm_efficiency.csv and the
 * H100 bf16 row of gemm_h100_shapes.csv).  An FP8 GEMM runs at the measured
 * BF16 rate of its shape times their ratio, 1.765, below the 2x of the
 * peaks; a GPU whose cluster file gives its own measured ratio
 * (<gemm fp8-ratio>: Blackwell's is 1.90-1.98 in the same table) runs at
 * that one. */
#define FP8_GEMM_SPEEDUP (1402.6 / 794.5)

/* NVFP4 GEMMs: CUTLASS's NVFP4 GEMM on Blackwell (SM100) runs Llama-3.1-8B's
 * QKV shape (N 6144, K 4096) at 3,778.8 TFLOP/s against 1,421.0 for BF16
 * (torch) at 8,192 rows, and 3,904.3 against 1,360.1 at 16,384, the
 * operands already quantized ("nvfp4-noquant"; vllm-project/vllm#20646,
 * benchmarks/kernels/bench_nvfp4_gemm.py, the table before its tuning).
 * An NVFP4 GEMM runs at the BF16 rate of its shape times the first ratio,
 * 2.66, below the 4x of the peaks; the quantization is charged as its own
 * kernels (nvfp4_kernels).  That 4x is B200's dense FP4 / BF16 peak, 9,000
 * / 2,250 TFLOP/s (dgx-b200.xml; GB200's 10,000 / 2,500 is the same ratio):
 * on a GPU whose FP4 tensor cores are faster against its BF16 ones
 * (Blackwell Ultra: 15,000 / 2,500, gb300-nvl72.xml) the measured ratio is
 * scaled by the ratio of the two peak ratios, the FP4 GEMM reaching the
 * same fraction of its peak as on B200 (an assumption: no Blackwell Ultra
 * measurement of the same shapes was found). */
#define FP4_GEMM_SPEEDUP (3778.8 / 1421.0)
#define FP4_BF16_PEAK_RATIO_B200 (9000.0 / 2250.0)

/* the GEMM speed-up of the plan's linear layers over BF16 on GPU g */
static double
linear_speedup (const SimPlan *p, const SimGpuType *g)
{
  if (p == NULL)
    return 1.0;
  if (p->fp4 != SIM_FP4_OFF) {
    double bf16 = bf16_peak (g), fp4 = g->peak_flop_per_s[SIM_DTYPE_FP4];
    double ratio = bf16 > 0 && fp4 > 0 ? fp4 / bf16 : FP4_BF16_PEAK_RATIO_B200;
    return FP4_GEMM_SPEEDUP * ratio / FP4_BF16_PEAK_RATIO_B200;
  }
  if (p->fp8 == SIM_FP8_OFF)
    return 1.0;
  return g != NULL && g->gemm_fp8_ratio > 0 ? g->gemm_fp8_ratio : FP8_GEMM_SPEEDUP;
}

/* FP8 attention: FlashAttention-3 reaches "up to 740 TFLOPs/s (75%
 * utilization) with BF16 and close to 1.2 PFLOPs/s with FP8" on H100 (Shah
 * et al. 2024, arXiv:2407.08608, abstract), both forward; with
 * --fp8-attention the forward runs at the BF16 rate of its shape times
 * their ratio.  The paper gives no FP8 backward, so the backward stays at
 * the BF16 rate (an upper bound on its time). */
#define FP8_ATTENTION_SPEEDUP (1200.0 / 740.0)

/* the bytes of one element of a linear layer's GEMM operands under the
 * plan: BF16, FP8 or NVFP4 (the scales left out); the output is BF16 */
static double
linear_elem_bytes (const SimPlan *p)
{
  if (p == NULL)
    return 2.0;
  return p->fp4 != SIM_FP4_OFF ? 0.5 : p->fp8 != SIM_FP8_OFF ? 1.0 : 2.0;
}

/* a GEMM at the measured rate of its shape, `speedup` times faster (FP8),
 * or its bytes at the achievable HBM bandwidth when that takes longer: the
 * roofline of sim-cost.h.  The measured tables start at 256 a side, and a
 * thinner GEMM (a LoRA adapter's rank of 16, a router over 8 experts) is
 * read at the 256-wide rate there; its operands, `elem` bytes an element,
 * and its BF16 output then bound it instead.  With `batch` > 1, one kernel
 * of that many GEMMs of the shape (k_batched): its FLOPs at the rate of the
 * folded shape (batch x m rows), its bytes `batch` times one GEMM's. */
static double
gemm_kernel_s (const SimGpuType *g, double batch, double m, double n, double k, double speedup,
               double elem)
{
  double flop_s = sim_gemm_time (g, batch * m, n, k) / (g->eff.clock * speedup);
  double bytes = batch * (elem * (m * k + k * n) + 2.0 * m * n);
  double mem_s = bytes / (g->hbm_bw_bytes_per_s * g->eff.hbm);
  return g->eff.kernel_fixed_s + MAX (flop_s, mem_s);
}

static void
k_gemm_role (Acc *a, const char *role, double m, double n, double k, double speedup, double elem)
{
  double s;
  if (m <= 0 || n <= 0 || k <= 0)
    return;
  s = gemm_kernel_s (a->g, 1, m, n, k, speedup, elem);
  a->s += s;
  a->flop += 2.0 * m * n * k;
  a->kernels++;
  if (strcmp (role, "wgrad") == 0)
    a->w_s += s, a->w_kernels++;
  log_kernel (a, SIM_KERNEL_GEMM, role, m, n, k, 1, 1, 0, 2.0 * m * n * k, s);
}

static void
k_gemm_x (Acc *a, double m, double n, double k, double speedup, double elem)
{
  k_gemm_role (a, "", m, n, k, speedup, elem);
}

/* a forward GEMM (m x k).(k x n), or its backward: the data gradient
 * (m x n).(n x k) and the weight gradient (k x m).(m x n); in FP8 when
 * the plan trains the linear layers in FP8 */
static void
k_linear (const SimPlan *p, Acc *fwd, Acc *bwd, double m, double n, double k)
{
  double x = linear_speedup (p, fwd != NULL ? fwd->g : bwd->g), e = linear_elem_bytes (p);
  if (fwd != NULL)
    k_gemm_x (fwd, m, n, k, x, e);
  if (bwd != NULL) {
    k_gemm_role (bwd, "dgrad", m, k, n, x, e);
    k_gemm_role (bwd, "wgrad", k, n, m, x, e);
  }
}

/* a batched GEMM: one kernel of `batch` GEMMs of one shape (the heads of
 * unfused attention, cuBLAS's strided-batched GEMM under torch.baddbmm
 * and torch.bmm).  One grid covers every GEMM's output tiles, each tile
 * reducing over k, so the kernel fills the GPU as the GEMM of batch x m
 * rows does: its FLOPs at the measured rate of that folded shape.  Unlike
 * the folded GEMM each of the batch has its own operands, read once, and
 * writes its own m x n output (2-byte elements): with a short reduction
 * (k = a head's 64-128) the bytes can take longer than the FLOPs, and the
 * kernel takes the longer of the two (the roofline of sim-cost.h). */
static void
k_batched (Acc *a, double batch, double m, double n, double k)
{
  double s = gemm_kernel_s (a->g, batch, m, n, k, 1.0, 2.0);
  a->s += s;
  a->flop += batch * 2.0 * m * n * k;
  a->kernels++;
  log_kernel (a, SIM_KERNEL_BATCHED_GEMM, "", m, n, k, batch, 1, 0, batch * 2.0 * m * n * k, s);
}

/* a grouped GEMM: `groups` GEMMs of one shape.  Transformer Engine's
 * GroupedLinear launches one cuBLAS GEMM per expert, round-robin over its
 * compute streams (NVIDIA/TransformerEngine transformer_engine/common/gemm/
 * cublaslt_gemm.cu @5c62f72, multi_stream_cublas_gemm: "Launch GEMM" per
 * i < num_gemms; its CUTLASS grouped GEMM only on Hopper, BF16, behind
 * NVTE_USE_CUTLASS_GROUPED_GEMM, default off), so each is a kernel with
 * its fixed cost and its host launch, timed as any GEMM (k_gemm_role) */
double
sim_cost_grouped_gemm_s (const SimGpuType *g, double groups, double m, double n, double k,
                         double speedup, double elem_bytes)
{
  if (groups <= 0 || m <= 0 || n <= 0 || k <= 0)
    return 0;
  return groups * gemm_kernel_s (g, 1, m, n, k, speedup, elem_bytes);
}

/* `groups` GEMMs of the shape in `kernels` kernels: one per group (a
 * GroupedLinear's cuBLAS GEMM per expert), or 1 (Transformer Engine's
 * fused grouped MLP, moe_kernels); the groups' work at the shape's rate,
 * each kernel's fixed cost once */
static void
k_grouped_role (Acc *a, const char *role, double groups, int kernels, double m, double n, double k,
                double speedup, double elem)
{
  double s;
  if (groups <= 0 || m <= 0 || n <= 0 || k <= 0)
    return;
  s = sim_cost_grouped_gemm_s (a->g, groups, m, n, k, speedup, elem) -
      (groups - kernels) * a->g->eff.kernel_fixed_s;
  a->s += s;
  a->flop += groups * 2.0 * m * n * k;
  a->kernels += kernels;
  if (strcmp (role, "wgrad") == 0)
    a->w_s += s, a->w_kernels += kernels;
  log_kernel (a, kernels == (int) groups ? SIM_KERNEL_GROUPED_GEMM : SIM_KERNEL_GEMM, role, m, n, k,
              groups, kernels, 0, groups * 2.0 * m * n * k, s);
}

static void
k_grouped_x (Acc *a, double groups, double m, double n, double k, double speedup, double elem)
{
  k_grouped_role (a, "", groups, (int) groups, m, n, k, speedup, elem);
}

/* the forward, or the data- and weight-gradient backward, of a grouped
 * linear layer: `groups` experts of (m x k).(k x n) each */
static void
k_grouped_linear (const SimPlan *p, Acc *fwd, Acc *bwd, double groups, double m, double n, double k)
{
  double x = linear_speedup (p, fwd != NULL ? fwd->g : bwd->g), e = linear_elem_bytes (p);
  if (fwd != NULL)
    k_grouped_x (fwd, groups, m, n, k, x, e);
  if (bwd != NULL) {
    k_grouped_role (bwd, "dgrad", groups, (int) groups, m, k, n, x, e);
    k_grouped_role (bwd, "wgrad", groups, (int) groups, k, n, m, x, e);
  }
}

/* an element-wise or reduction kernel moving `bytes` through HBM */
static void
k_mem (Acc *a, double bytes)
{
  double s = a->g->eff.kernel_fixed_s + bytes / (a->g->hbm_bw_bytes_per_s * a->g->eff.hbm);
  a->s += s;
  a->kernels++;
  log_kernel (a, SIM_KERNEL_MEMORY, "", 0, 0, 0, 1, 1, bytes, 0, s);
}

/* LoRA (--lora-rank): the base weights are frozen, so autograd computes
 * no weight gradient for them (PEFT's LoRA layers and Megatron's adapters
 * set requires_grad False on the base linear's weight); the data gradient
 * still flows to the layers below and to the adapters */
static gboolean
frozen (const SimPlan *p)
{
  return p != NULL && p->lora_rank > 0;
}

/* QLoRA (--qlora) keeps the base weight in NF4, 4 bits an element with a
 * block-wise scale, and dequantizes it to BF16 before each GEMM that reads
 * it (bitsandbytes' matmul_4bit: dequantize_4bit, then the BF16 matmul;
 * Dettmers et al. 2023, arXiv:2305.14314, section 3): read half a byte,
 * write two, per element, before the forward and before the data
 * gradient.  The scales' bytes (0.127 bits an element with double
 * quantization, the paper's section 3) are left out. */
#define NF4_DEQUANT_BYTES (0.5 + 2.0)

/* a base linear of the layer, (m x k).(k x n): k_linear, or under LoRA the
 * frozen weight's forward and data gradient only (with QLoRA each after
 * its dequantization) */
static void
k_base_linear (const SimPlan *p, Acc *fwd, Acc *bwd, double m, double n, double k)
{
  double x, e;
  if (!frozen (p)) {
    k_linear (p, fwd, bwd, m, n, k);
    return;
  }
  x = linear_speedup (p, fwd->g);
  e = linear_elem_bytes (p);
  if (p->qlora)
    k_mem (fwd, NF4_DEQUANT_BYTES * n * k);
  k_gemm_x (fwd, m, n, k, x, e);
  if (p->qlora)
    k_mem (bwd, NF4_DEQUANT_BYTES * n * k);
  k_gemm_role (bwd, "dgrad", m, k, n, x, e);
}

/* one LoRA adapter beside a frozen (m x k).(k x n) linear, rank r, in
 * BF16: forward x A (k x r), then (x A) B (r x n), added to the base
 * output (read both, write the sum); backward the data gradients through B
 * and A, the weight gradients of both, and the input gradient added to the
 * base's.  Column-parallel linears split B's columns over TP, row-parallel
 * ones A's rows (the caller's n and k are per TP rank); the row-parallel
 * adapter's all-reduce of its m x r intermediate is left out (r of the
 * hidden size's bytes). */
static void
k_adapter (Acc *fwd, Acc *bwd, double m, double n, double k, double r)
{
  k_gemm_x (fwd, m, r, k, 1.0, 2.0);
  k_gemm_x (fwd, m, n, r, 1.0, 2.0);
  k_mem (fwd, 6 * m * n);
  k_gemm_role (bwd, "dgrad", m, r, n, 1.0, 2.0);
  k_gemm_role (bwd, "wgrad", r, n, m, 1.0, 2.0);
  k_gemm_role (bwd, "dgrad", m, k, r, 1.0, 2.0);
  k_gemm_role (bwd, "wgrad", k, r, m, 1.0, 2.0);
  k_mem (bwd, 6 * m * k);
}

/* the plan's adapters among `which` (SimLoraTargets bits) on T tokens, per
 * TP rank (sim_model_lora_adapters), named by the linear each sits beside */
static void
lora_adapters (const SimModel *m, const SimPlan *p, Acc *fwd, Acc *bwd, double T, guint which)
{
  SimLoraAdapter a[SIM_LORA_MAX_ADAPTERS];
  int n = sim_model_lora_adapters (m, p->lora_targets & which, a);
  double t = p->tp;
  for (int i = 0; i < n; i++) {
    double in = (double) a[i].in, out = (double) a[i].out;
    const char *name = a[i].target & (SIM_LORA_Q | SIM_LORA_K | SIM_LORA_V | SIM_LORA_QKV) ? "lora_qkv"
                       : a[i].target == SIM_LORA_O                                         ? "lora_proj"
                       : a[i].target == SIM_LORA_DOWN                                      ? "lora_fc2"
                                                                                           : "lora_fc1";
    tag (name, fwd, bwd, NULL, NULL, NULL);
    if (a[i].column_parallel)
      k_adapter (fwd, bwd, T, out / t, in, (double) p->lora_rank);
    else
      k_adapter (fwd, bwd, T, out, in / t, (double) p->lora_rank);
  }
}

/* How a fused attention kernel's rate depends on its shape, relative to
 * the GPU's <attention> efficiencies (causal, 16 k tokens, head dimension
 * 128: the Hopper files give the causal forward figures of the paper below,
 * Fig. 5(d), which sit 5-10 % under the figures without the mask).
 *
 * Sequence length: FlashAttention-2 on H100, causal, head dimension 128,
 * 16 k tokens per batch (Shah et al. 2024, arXiv:2407.08608, Fig. 5(d)):
 * 191 / 260 / 298 / 319 / 333 / 335 TFLOP/s at 512 / 1 k / 2 k / 4 k / 8 k
 * / 16 k tokens; FlashAttention-3 and cuDNN ramp alike (292 ... 616 and
 * 315 ... 539 in the same figure).  Interpolated in log2 of the sequence,
 * held at the ends.
 * Head dimension 64: FlashAttention-2 on H100 at 2 k-16 k tokens reaches
 * 262-299 causal forward against 298-335 at 128 (Fig. 5(b), 5(d)), 0.88,
 * and 264-291 backward against 291-322 (Fig. 6(a), 6(b)), 0.91. */
static const double attn_ramp[] = { 191, 260, 298, 319, 333, 335 };

static double
attn_shape_factor (double seq, double head_dim, gboolean backward)
{
  double x = log2 (MAX (seq, 1.0)) - 9.0, r;       /* 0 at 512 */
  int i;
  if (x <= 0)
    r = attn_ramp[0];
  else if (x >= 5)
    r = attn_ramp[5];
  else {
    i = (int) x;
    r = attn_ramp[i] + (attn_ramp[i + 1] - attn_ramp[i]) * (x - i);
  }
  r /= attn_ramp[5];
  if (head_dim <= 64)
    r *= backward ? 0.91 : 0.88;
  return r;
}

/* The head size a fused attention kernel computes with: its tiles are
 * compiled for a few head sizes, and a head between them runs in the next
 * one up, its extra columns zero.  FlashAttention's Triton kernel (the one
 * llm-foundry ships) pads to the next power of two, at least 16
 * (llmfoundry/models/layers/flash_attn_triton.py @0227d9f,
 * _flash_attn_forward and _flash_attn_backward: BLOCK_HEADDIM =
 * max(triton.next_power_of_2(d), 16)); FlashAttention-2 instantiates
 * kHeadDim 32, 64, 96, ... 256 and runs a head in the first that holds it
 * (Dao-AILab/flash-attention csrc/flash_attn/src/static_switch.h,
 * HEADDIM_SWITCH), a multiple of 32.  cuDNN's fused attention is taken at
 * the head size itself (no source in the tree says how it tiles).  So a
 * head of 112 (hidden 7168 in 64 heads) runs as 128 in both, 14 % more
 * work than its FLOPs; the report's FLOPs stay the model's. */
static double
kernel_head_dim (SimAttentionKernel kernel, double d)
{
  double k = 16;
  if (kernel == SIM_ATTENTION_TRITON) {
    while (k < d)
      k *= 2;
    return k;
  }
  if ((kernel == SIM_ATTENTION_FLASH || kernel == SIM_ATTENTION_FLASH2) && d <= 256)
    return 32 * ceil (d / 32);
  return d;
}

/* a fused attention kernel of `flop` at `efficiency` of the bf16 peak */
static void
k_attn (Acc *a, double flop, double efficiency)
{
  double s = a->g->eff.kernel_fixed_s + flop / (bf16_peak (a->g) * efficiency * a->g->eff.clock);
  a->s += s;
  a->flop += flop;
  a->kernels++;
  log_kernel (a, SIM_KERNEL_ATTENTION, "", 0, 0, 0, 1, 1, 0, flop, s);
}

/* what the host launches: each kernel a graph does not replay, and each
 * graph replay, at one host launch apiece */
static int
launches (const Acc *a)
{
  return a->kernels - a->graphed + a->graphs;
}

/* GPU time, or the host's time to issue the kernels when that is longer
 * (the CPU runs ahead of the GPU only while it is faster) */
static double
wall (const Acc *a)
{
  return MAX (a->s, launches (a) * a->g->eff.host_launch_s);
}

/* whether selective recomputation recomputes module m (SimRecomputeModules) */
static gboolean
recomputes (const SimPlan *p, guint m)
{
  return p != NULL && p->recompute == SIM_RECOMPUTE_SELECTIVE && (p->recompute_modules & m) != 0;
}

/* the forward kernels charged to fwd since mark, charged to rec as well:
 * a recomputed module runs its forward again before its backward */
static void
again (Acc *rec, const Acc *fwd, const Acc *mark)
{
  rec->s += fwd->s - mark->s;
  rec->flop += fwd->flop - mark->flop;
  rec->kernels += fwd->kernels - mark->kernels;
}

/* Transformer Engine's per-tensor current scaling quantizes a tensor in
 * four launches (Float8CurrentScalingQuantizer::quantize_impl,
 * transformer_engine/pytorch/csrc/quantizer.cpp @d0067d0): the amax is
 * zeroed (zero_amax_kernel, one thread; a cudaMemsetAsync when the recipe
 * came in, 77fa1e59), the amax pass, compute_scale_from_amax_kernel (one
 * thread), then the cast (transformer_engine/common/recipe/
 * current_scaling.cu).  A fused norm's output keeps two of them: its amax
 * buffer is zeroed (at::zeros in create_unquantized_tensor_with_amax) and
 * its scale computed before the cast (quantize_with_amax).  The amax pass
 * and the cast are charged with their bytes where the tensors are; these
 * are the two single-thread launches of `quantizations` tensors, a
 * kernel's fixed cost and a host launch each, listed as `name`.
 * torchtitan's float8 is torchao's, not Transformer Engine's: none. */
static void
current_scaling_scalars (const SimPlan *p, Acc *a, int quantizations, const char *name)
{
  const char *was = a->tag;
  if (p->fp8_recipe != SIM_FP8_CURRENT || p->framework == SIM_FRAMEWORK_TORCHTITAN)
    return;
  a->tag = name;
  for (int i = 0; i < 2 * quantizations; i++)
    k_mem (a, 4);
  a->tag = was;
}

/* What an FP8 recipe adds to the delayed-scaling kernels above, per layer,
 * for the GEMM inputs x (QKV and FC1 inputs, Tn x h each, cast by the norms
 * under delayed scaling; the projection input T x qd/t and the FC2 input
 * T x f/t) and the output gradients (T x (qd + 2 kvd)/t, T x h, T x up_n,
 * T x h):
 *   current   (Transformer Engine's Float8CurrentScaling, Megatron's
 *             "tensorwise"): the scale comes from the tensor's own amax, so
 *             every input and gradient is read once more for it before its
 *             cast (the amax pass that delayed scaling exists to avoid:
 *             Transformer Engine's FP8 primer, "delayed scaling"), but for
 *             a fused norm's output, whose amax the norm computes; the
 *             norms write BF16 that a cast kernel then reads; and each
 *             quantization adds two single-thread launches
 *             (current_scaling_scalars);
 *   blockwise (DeepSeek-V3, arXiv:2412.19437 section 3.3: 1 x 128 tiles for
 *             activations and gradients, 128 x 128 for weights): each tile's
 *             amax is local, so one pass quantises it, but not inside the
 *             norms (two cast kernels of 4 bytes per element), and every
 *             cast also writes a 4-byte scale per 128 elements;
 *   mxfp8     (a 1-byte E8M0 scale per 32 elements, applied by Blackwell's
 *             tensor cores): the same kernels as delayed, each cast writing
 *             its two copies' scales, 2/32 bytes per element.
 * The FP8 GEMMs run at the same rate under every recipe: DeepGEMM's
 * block-scaled GEMMs reach "up to 1550 TFLOPS" on H800 (deepseek-ai/DeepGEMM
 * README @0274ad7, news of 2025.04.18), above the 1402.6 of cuBLAS's best
 * per-tensor FP8 shape on H100 that FP8_GEMM_SPEEDUP rests on, so no penalty
 * is charged; MXFP8 runs at the dense FP8 peak of Blackwell's datasheets. */
static void
fp8_recipe_kernels (const SimPlan *p, Acc *fwd, Acc *bwd, double T, double Tn, double h,
                    double qd, double kvd, double ft, double up_n)
{
  /* elements of the four GEMM inputs and of the four output gradients;
   * an MoE layer (ft 0) has no dense FC1 and FC2, its experts' casts are
   * moe_kernels' (expert_casts) */
  gboolean mlp = ft > 0;
  int n = mlp ? 4 : 2;
  const double x[4] = { Tn * h, T * qd / p->tp, mlp ? Tn * h : 0, T * ft };
  const double dy[4] = { T * (qd + 2 * kvd) / p->tp, T * h, T * up_n, mlp ? T * h : 0 };
  double in_x = x[0] + x[1] + x[2] + x[3], in_dy = dy[0] + dy[1] + dy[2] + dy[3];
  double bw = fwd->g->hbm_bw_bytes_per_s * fwd->g->eff.hbm;
  switch (p->fp8_recipe) {
  case SIM_FP8_CURRENT:
    k_mem (fwd, 4 * Tn * h);    /* the QKV input's cast, out of the norm */
    if (mlp)
      k_mem (fwd, 4 * Tn * h);  /* the FC1 input's */
    /* the amax passes, 2 bytes per element read; under Megatron-Core the
     * QKV and FC1 inputs (x[0], x[2]) come out of Transformer Engine's
     * fused norm linears, whose norm kernel computes its output's amax
     * (Impl::FUSED_NORM_AMAX_FP8, transformer_engine/pytorch/csrc/
     * extensions/normalization.cpp @d0067d0, since 3f5b4754), so they
     * have none; llm-foundry's and torchtitan's norms are their own */
    for (int i = 0; i < n; i++) {
      if (p->framework != SIM_FRAMEWORK_MEGATRON || (i != 0 && i != 2))
        k_mem (fwd, 2 * x[i]);
      k_mem (bwd, 2 * dy[i]);
    }
    current_scaling_scalars (p, fwd, n, "fp8_amax_scale");
    current_scaling_scalars (p, bwd, n, "fp8_amax_scale");
    break;
  case SIM_FP8_BLOCKWISE:
    k_mem (fwd, 4 * Tn * h + 2 * (4.0 / 128) * Tn * h);
    if (mlp)
      k_mem (fwd, 4 * Tn * h + 2 * (4.0 / 128) * Tn * h);
    /* every cast also writes its copies' scales */
    k_extra (fwd, SIM_KERNEL_MEMORY, 2 * (4.0 / 128) * in_x, 2 * (4.0 / 128) * in_x / bw);
    k_extra (bwd, SIM_KERNEL_MEMORY, 2 * (4.0 / 128) * in_dy, 2 * (4.0 / 128) * in_dy / bw);
    break;
  case SIM_FP8_MXFP8:
    k_extra (fwd, SIM_KERNEL_MEMORY, (2.0 / 32) * in_x, (2.0 / 32) * in_x / bw);
    k_extra (bwd, SIM_KERNEL_MEMORY, (2.0 / 32) * in_dy, (2.0 / 32) * in_dy / bw);
    break;
  default:
    break;
  }
}

/* What Transformer Engine's NVFP4 recipe (NVFP4BlockScaling, transformer_
 * engine/common/recipe/__init__.py, after "Pretraining Large Language Models
 * with NVFP4", arXiv:2509.25149) launches for a GEMM input or an output
 * gradient of `n` elements: the tensor's FP32 scale comes from its global
 * amax, and the copy the weight-gradient GEMM reads is quantized after a
 * 16 x 16 random Hadamard transform, whose own amax sets its scale.  Charged
 * as one pass reading the BF16 tensor for both amaxes (2 bytes per element;
 * were they two passes, 2 more), then one kernel reading it again and
 * writing both copies, each 4 bits per value and an E4M3 scale per 16
 * values (2 + 2 x 9/16 bytes per element); gradients are rounded
 * stochastically in the same kernel.  The weights (16 x 16 blocks) are
 * quantized once per step, on the first micro-batch, which is not charged. */
static void
nvfp4_kernels (Acc *a, double n)
{
  k_mem (a, 2 * n);
  k_mem (a, (2 + 2 * 9.0 / 16) * n);
}

/* latent attention's linears (Megatron-Core multi_latent_attention.py,
 * MLASelfAttention): the down projections h -> q_lora and h -> kv_lora + r
 * are duplicated on every TP rank and run on its Tn tokens, each followed
 * by an RMSNorm of the latent; the up projections q_lora -> H(n + r) and
 * kv_lora -> H(n + v) and the output H*v -> h are split by heads over TP;
 * q and k are assembled from their nope and rope parts (one copy each) */
static void
mla_linears (const SimModel *m, const SimPlan *p, Acc *fwd, Acc *bwd, Acc *rec, double T, double Tn)
{
  const SimMla *a = &m->mla;
  double t = p->tp, h = m->hidden, H = (double) m->heads;
  double ql = (double) a->q_lora_rank, kl = (double) a->kv_lora_rank;
  double n = (double) a->qk_nope_head_dim, r = (double) a->qk_rope_head_dim;
  double v = (double) a->v_head_dim;
  /* mla_up_proj recomputes each up projection with the latent's norm
   * fused into it (TELayerNormColumnParallelLinear) and the assembly of q
   * and k; the RoPE kernels are layer_kernels' */
  gboolean up = recomputes (p, SIM_RECOMPUTE_MLA_UP_PROJ);
  Acc mark;
  if (ql > 0) {
    k_linear (p, fwd, bwd, Tn, ql, h);
    mark = *fwd;
    k_mem (fwd, 4 * Tn * ql);
    k_mem (bwd, 6 * Tn * ql);
    k_linear (p, fwd, bwd, T, H * (n + r) / t, ql);
    if (up)
      again (rec, fwd, &mark);
  } else {
    k_linear (p, fwd, bwd, T, H * (n + r) / t, h);
  }
  k_linear (p, fwd, bwd, Tn, kl + r, h);
  mark = *fwd;
  k_mem (fwd, 4 * Tn * kl);
  k_mem (bwd, 6 * Tn * kl);
  k_linear (p, fwd, bwd, T, H * (n + v) / t, kl);
  if (up)
    again (rec, fwd, &mark);
  k_linear (p, fwd, bwd, T, h, H * v / t);
  mark = *fwd;
  k_mem (fwd, 4 * T * H * (n + r) / t);
  k_mem (fwd, 4 * T * H * (n + r) / t);
  if (up)
    again (rec, fwd, &mark);
  k_mem (bwd, 4 * T * H * (n + r) / t);
  k_mem (bwd, 4 * T * H * (n + r) / t);
}

/* torchtitan's RMSNorm as eager PyTorch runs it, op by op, on n elements
 * (torchtitan/models/norms.py @9dec370, RMSNorm.forward:
 * (x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x) * w),
 * each op one kernel reading its inputs and writing its output through HBM:
 * forward  float (2 -> 4 bytes), pow (4 -> 4), mean (4 read), + eps and
 *          rsqrt (one value a row), x * r (4 -> 4), type_as (4 -> 2),
 *          * w (2 -> 2): 36 bytes an element in 8 kernels;
 * backward autograd's formulas: * w's two gradients (g * w; g * y then a
 *          sum over the rows), type_as's (2 -> 4), x * r's two (g * r; g *
 *          x then a sum over the row), rsqrt's and + eps's (one value a
 *          row), mean's (expand and divide, 4 written), pow's (x.pow(1), *
 *          2, * g: torch's pow_backward), the two gradients of x added, and
 *          float's (4 -> 2): 92 bytes an element in 14 kernels.
 * Fused (norm_kernels), it is 4 bytes forward and 8 backward. */
static void
eager_rmsnorm_fwd (Acc *a, double n)
{
  k_mem (a, 6 * n);   /* float */
  k_mem (a, 8 * n);   /* pow */
  k_mem (a, 4 * n);   /* mean */
  k_mem (a, 0);       /* + eps */
  k_mem (a, 0);       /* rsqrt */
  k_mem (a, 8 * n);   /* x * r */
  k_mem (a, 6 * n);   /* type_as */
  k_mem (a, 4 * n);   /* * w */
}

static void
eager_rmsnorm_bwd (Acc *a, double n)
{
  k_mem (a, 4 * n);   /* g * w */
  k_mem (a, 6 * n);   /* g * y */
  k_mem (a, 2 * n);   /* its sum over the rows: w's gradient */
  k_mem (a, 6 * n);   /* type_as */
  k_mem (a, 8 * n);   /* g * r */
  k_mem (a, 12 * n);  /* g * x */
  k_mem (a, 4 * n);   /* its sum over the row */
  k_mem (a, 0);       /* rsqrt */
  k_mem (a, 4 * n);   /* mean: expand and divide */
  k_mem (a, 8 * n);   /* pow: x.pow(1) */
  k_mem (a, 8 * n);   /* * 2 */
  k_mem (a, 12 * n);  /* * g */
  k_mem (a, 12 * n);  /* the two gradients of x added */
  k_mem (a, 6 * n);   /* float */
}

/* torchtitan's rotary embedding of one tensor of n elements, compiled or
 * not (torchtitan/models/llama/model.py @9dec370, apply_rotary_emb): cast to
 * fp32 (2 -> 4 bytes), multiply as complex64 by freqs_cis (4 -> 4), cast
 * back (4 -> 2); backward the same three in reverse.  Inductor does not
 * generate code for complex operators and runs the product as an eager
 * kernel between the casts (the warning of pytorch/torchtitan issue 15,
 * "Torchinductor does not support code generation for complex
 * operators"), so compiling changes little; the fused kernel of
 * Transformer Engine moves 4 bytes an element. */
static void
titan_rope (Acc *fwd, Acc *bwd, double n)
{
  k_mem (fwd, 6 * n);
  k_mem (fwd, 8 * n);
  k_mem (fwd, 6 * n);
  k_mem (bwd, 6 * n);
  k_mem (bwd, 8 * n);
  k_mem (bwd, 6 * n);
}

/* torchtitan's op-level selective checkpointing of one block
 * (sim_plan_op_sac): the policy counts the block's matmuls (aten.mm) in
 * program order and keeps the output of each odd one, and what it keeps
 * the backward does not run again.  Under torchao's float8 the policy
 * sees the same aten.mm: Float8Linear calls torch.mm on its float8 tensor
 * subclass (torchao/float8/float8_linear.py, matmul_with_hp_or_float8_args),
 * which lowers it to _scaled_mm below the policy's dispatch mode.  Of the rest, eager
 * PyTorch reruns every op of the block in order, while a compiled block's
 * recomputation is what AOTAutograd's partitioner needs for the backward
 * (PREFER_RECOMPUTE is a must-recompute there: torch/_functorch/
 * partitioners.py, must_recompute), which leaves out a matmul whose output
 * no backward reads: the output projection's under tensor parallelism (its
 * reduce-scatter's output is kept) and the down projection's. */
typedef struct {
  gboolean on;       /* sim_plan_op_sac */
  gboolean eager;    /* the block is not compiled */
  int count;         /* matmuls of the block so far */
  Acc gemm;          /* the forward work of the block's linears */
} OpSac;

/* one of torchtitan's linears, (m x k).(k x n); needed: whether the
 * backward reads its output (OpSac) */
static void
titan_linear (const SimPlan *p, Acc *fwd, Acc *bwd, Acc *rec, OpSac *sac, double m, double n,
              double k, gboolean needed)
{
  Acc mark = *fwd;
  k_base_linear (p, fwd, bwd, m, n, k);
  again (&sac->gemm, fwd, &mark);
  sac->count++;
  if (sac->on && sac->count % 2 == 0 && (sac->eager || needed))
    again (rec, fwd, &mark);
}

/* what layer_kernels' parts share: the layer's sizes per TP rank and
 * micro-batch, and where their kernels go */
typedef struct {
  const SimModel *m;
  const SimPlan *p;
  const SimGpuType *g;
  Acc *fwd, *bwd, *core_fwd, *core_bwd, *rec;
  double t, s, S, b, h, f, kvd, heads, qd, T, Tn, mask, up_n, dqk, dv;
  gboolean mla, mlp_again, titan, eager;
  OpSac sac;
} LayerCtx;

#define TAG(name) tag (name, c->fwd, c->bwd, c->core_fwd, c->core_bwd, c->rec)

/* the two norms and residual adds of layer_kernels */
static void
layer_norms (LayerCtx *c)
{
  const SimPlan *p = c->p;
  Acc *fwd = c->fwd, *bwd = c->bwd, *rec = c->rec;
  double h = c->h, f = c->f, Tn = c->Tn, mask = c->mask;
  gboolean mla = c->mla, mlp_again = c->mlp_again, eager = c->eager;
  Acc mark;

  for (int i = 0; i < 2; i++) {
    /* norm: read x, write y (bf16); backward reads x and dy, writes dx,
     * and reduces the weight gradient in a second kernel.  layernorm
     * recomputes the norms that are modules of their own: latent
     * attention's input norm (i 0) and an MoE layer's pre-MLP norm (i 1);
     * mlp the dense MLP's fused one */
    TAG (i == 0 ? "input_norm" : "pre_mlp_norm");
    mark = *fwd;
    if (eager)
      eager_rmsnorm_fwd (fwd, Tn * h);
    else
      k_mem (fwd, 4 * Tn * h);
    if ((recomputes (p, SIM_RECOMPUTE_LAYERNORM) && (i == 0 ? mla : f <= 0)) ||
        (i == 1 && mlp_again))
      again (rec, fwd, &mark);
    if (eager) {
      eager_rmsnorm_bwd (bwd, Tn * h);
    } else {
      k_mem (bwd, 6 * Tn * h);
      k_mem (bwd, 2 * Tn * h);
    }
    /* bias-dropout-add: read branch and residual, write the sum (and the
     * dropout mask); backward: the residual gradient adds the branch's */
    TAG ("residual_add");
    k_mem (fwd, (6 + mask) * Tn * h);
    k_mem (bwd, (6 + mask) * Tn * h);
  }
}

/* layer_kernels' linears: attention's (or latent attention's, which sets
 * the widths the casts below read) and the dense MLP's, with LoRA's adapters */
static void
layer_linears (LayerCtx *c)
{
  const SimModel *m = c->m;
  const SimPlan *p = c->p;
  Acc *fwd = c->fwd, *bwd = c->bwd, *rec = c->rec;
  double t = c->t, h = c->h, f = c->f, kvd = c->kvd;
  double qd = c->qd, T = c->T, Tn = c->Tn, up_n = c->up_n;
  gboolean mla = c->mla, mlp_again = c->mlp_again, titan = c->titan;
  Acc mark;

  /* QKV and the attention output projection (or latent attention's), MLP
   * up and down */
  if (mla) {
    TAG ("mla");
    mla_linears (m, p, fwd, bwd, rec, T, Tn);
    /* what the FP8 casts and bias reductions below read: the output
     * projection's input H*v (qd), and the up projections' outputs
     * H(n + r) + H(n + v) (qd + 2 kvd) */
    c->qd = c->heads * c->dv;
    c->kvd = c->heads *
             (2.0 * (double) m->mla.qk_nope_head_dim + (double) m->mla.qk_rope_head_dim) / 2;
  } else {
    if (titan) {
      /* torchtitan's attention: wq, wk, wv and wo, a linear each
       * (models/llama/model.py @9dec370, Attention) */
      TAG ("wq");
      titan_linear (p, fwd, bwd, rec, &c->sac, T, qd / t, h, TRUE);
      TAG ("wk");
      titan_linear (p, fwd, bwd, rec, &c->sac, T, kvd / t, h, TRUE);
      TAG ("wv");
      titan_linear (p, fwd, bwd, rec, &c->sac, T, kvd / t, h, TRUE);
      TAG ("wo");
      titan_linear (p, fwd, bwd, rec, &c->sac, T, h, qd / t, t == 1);
    } else {
      TAG ("qkv");
      k_base_linear (p, fwd, bwd, T, (qd + 2 * kvd) / t, h);
      TAG ("proj");
      k_base_linear (p, fwd, bwd, T, h, qd / t);
    }
    if (frozen (p))
      lora_adapters (m, p, fwd, bwd, T, SIM_LORA_Q | SIM_LORA_K | SIM_LORA_V | SIM_LORA_QKV | SIM_LORA_O);
  }
  mark = *fwd;
  if (titan && f > 0) {
    /* its feed-forward: w1 and w3 (the gate and up of SwiGLU), then w2
     * (FeedForward); a GELU MLP's one up projection in w1's place */
    TAG ("w1");
    titan_linear (p, fwd, bwd, rec, &c->sac, T, f / t, h, TRUE);
    if (m->mlp == SIM_MLP_SWIGLU) {
      TAG ("w3");
      titan_linear (p, fwd, bwd, rec, &c->sac, T, f / t, h, TRUE);
    }
    TAG ("w2");
    titan_linear (p, fwd, bwd, rec, &c->sac, T, h, f / t, FALSE);
  } else {
    TAG ("fc1");
    k_base_linear (p, fwd, bwd, T, up_n, h);
    TAG ("fc2");
    k_base_linear (p, fwd, bwd, T, h, f / t);
  }
  if (frozen (p) && f > 0)
    lora_adapters (m, p, fwd, bwd, T, SIM_LORA_GATE | SIM_LORA_UP | SIM_LORA_DOWN);
  if (mlp_again)
    again (rec, fwd, &mark);
}

/* layer_kernels' FP8 and NVFP4 casts and the bias gradients */
static void
layer_casts (LayerCtx *c)
{
  const SimModel *m = c->m;
  const SimPlan *p = c->p;
  Acc *fwd = c->fwd, *bwd = c->bwd, *rec = c->rec;
  double t = c->t, h = c->h, f = c->f, kvd = c->kvd;
  double qd = c->qd, T = c->T, Tn = c->Tn, up_n = c->up_n;
  gboolean mlp_again = c->mlp_again;
  Acc mark;

  if (p->fp8 != SIM_FP8_OFF) {
    /* Transformer Engine's FP8 casts (transformer_engine/pytorch/module/
     * linear.py, layernorm_linear.py, layernorm_mlp.py): the norms write
     * the QKV and FC1 inputs in FP8 themselves; the projection and FC2
     * inputs are cast and transposed (read 2 bytes, write 1 + 1); in the
     * backward each linear's output gradient is cast and transposed the
     * same way; one amax-and-scale update per pass */
    TAG ("fp8_cast");
    k_mem (fwd, 4 * T * qd / t);
    if (f > 0) {
      mark = *fwd;
      k_mem (fwd, 4 * T * f / t);
      if (mlp_again)
        again (rec, fwd, &mark);
    }
    k_mem (fwd, 0);
    k_mem (bwd, 4 * T * (qd + 2 * kvd) / t);
    k_mem (bwd, 4 * T * h);
    if (f > 0) {
      k_mem (bwd, 4 * T * up_n);
      k_mem (bwd, 4 * T * h);
    }
    k_mem (bwd, 0);
    TAG ("fp8_scaling");
    fp8_recipe_kernels (p, fwd, bwd, T, Tn, h, qd, kvd, f / t, up_n);
  }
  if (p->fp4 != SIM_FP4_OFF) {
    /* NVFP4: the four GEMM inputs (the QKV and FC1 inputs out of the
     * norms, the projection's and FC2's) and the four output gradients */
    TAG ("nvfp4_quantize");
    nvfp4_kernels (fwd, Tn * h);
    nvfp4_kernels (fwd, T * qd / t);
    nvfp4_kernels (bwd, T * (qd + 2 * kvd) / t);
    nvfp4_kernels (bwd, T * h);
    if (f > 0) {
      mark = *fwd;
      nvfp4_kernels (fwd, Tn * h);
      nvfp4_kernels (fwd, T * f / t);
      if (mlp_again)
        again (rec, fwd, &mark);
      nvfp4_kernels (bwd, T * up_n);
      nvfp4_kernels (bwd, T * h);
    }
  }
  if (m->bias) {
    /* bias gradients: a column reduction of each linear's output gradient */
    TAG ("bias_grad");
    k_mem (bwd, 2 * T * (qd + 2 * kvd) / t);
    k_mem (bwd, 2 * T * h);
    if (f > 0) {
      k_mem (bwd, 2 * T * up_n);
      k_mem (bwd, 2 * T * h);
    }
  }
}

/* layer_kernels' MLP activation, rotary embedding and torchtitan's
 * repeated keys and values */
static void
layer_activation_rope (LayerCtx *c)
{
  const SimModel *m = c->m;
  const SimPlan *p = c->p;
  Acc *fwd = c->fwd, *bwd = c->bwd, *rec = c->rec;
  double t = c->t, f = c->f, kvd = c->kvd, heads = c->heads, qd = c->qd, T = c->T, Tn = c->Tn;
  gboolean mla = c->mla, mlp_again = c->mlp_again, titan = c->titan, eager = c->eager;
  Acc mark;

  /* activation: gelu reads f and writes f; swiglu reads 2f, writes f;
   * backward reads the input(s) and dy, writes dx */
  TAG (m->mlp == SIM_MLP_SWIGLU ? "swiglu" : "activation");
  mark = *fwd;
  if (f <= 0) {
    /* a mixture-of-experts layer: moe_kernels */
  } else if (m->mlp == SIM_MLP_SWIGLU && eager) {
    /* torchtitan's F.silu(w1(x)) * w3(x) op by op (models/llama/model.py
     * @9dec370, FeedForward.forward): silu (2 -> 2 bytes), the product
     * (2 + 2 -> 2); backward the product's two gradients (g * b, g *
     * silu(a)) and silu's (a and g -> 2) */
    k_mem (fwd, 4 * T * f / t);
    k_mem (fwd, 6 * T * f / t);
    k_mem (bwd, 6 * T * f / t);
    k_mem (bwd, 6 * T * f / t);
    k_mem (bwd, 6 * T * f / t);
  } else if (m->mlp == SIM_MLP_SWIGLU) {
    k_mem (fwd, 6 * T * f / t);
    k_mem (bwd, 10 * T * f / t);
  } else {
    k_mem (fwd, 4 * T * f / t);
    k_mem (bwd, 6 * T * f / t);
  }
  if (mlp_again)
    again (rec, fwd, &mark);
  /* rotary embedding of q and k, one kernel each (Transformer Engine's
   * fused RoPE), forward and backward; latent attention rotates only its
   * rope parts (H*r of q, r of the shared key) */
  TAG ("rope");
  if (mla) {
    double r = (double) m->mla.qk_rope_head_dim;
    mark = *fwd;
    k_mem (fwd, 4 * T * heads * r / t);
    k_mem (fwd, 4 * Tn * r);
    if (recomputes (p, SIM_RECOMPUTE_MLA_UP_PROJ))
      again (rec, fwd, &mark);
    k_mem (bwd, 4 * T * heads * r / t);
    k_mem (bwd, 4 * Tn * r);
  } else if (m->position == SIM_POSITION_ROPE && titan) {
    titan_rope (fwd, bwd, T * qd / t);
    titan_rope (fwd, bwd, T * kvd / t);
  } else if (m->position == SIM_POSITION_ROPE) {
    k_mem (fwd, 4 * T * qd / t);
    k_mem (fwd, 4 * T * kvd / t);
    k_mem (bwd, 4 * T * qd / t);
    k_mem (bwd, 4 * T * kvd / t);
  }

  /* torchtitan repeats grouped keys and values to every query head before
   * SDPA (models/llama/model.py @9dec370, repeat_kv: expand, then reshape,
   * which copies): read the kv heads, write the query heads' width, for
   * each; backward the sum back over the copies.  Inductor cannot leave
   * the copy out, SDPA being a kernel of its own. */
  if (titan && !mla && kvd < qd) {
    TAG ("repeat_kv");
    for (int i = 0; i < 2; i++) {
      k_mem (fwd, 2 * T * (kvd + qd) / t);
      k_mem (bwd, 2 * T * (kvd + qd) / t);
    }
  }
}

/* layer_kernels' attention core */
static void
layer_attention (LayerCtx *c)
{
  const SimModel *m = c->m;
  const SimPlan *p = c->p;
  const SimGpuType *g = c->g;
  Acc *core_fwd = c->core_fwd, *core_bwd = c->core_bwd;
  double t = c->t, s = c->s, S = c->S, b = c->b;
  double heads = c->heads, T = c->T, dqk = c->dqk, dv = c->dv;

  /* attention core, per TP rank: heads/t heads of local queries x all keys */
  TAG ("attention");
  {
    double full_flop = 2.0 * T * S * heads * (dqk + dv) / t; /* QK^T and scores x V */
    if (p->flash_attention) {
      double eff_f = g->attn_fwd_efficiency > 0 ? g->attn_fwd_efficiency : 1.0;
      double eff_b = g->attn_bwd_efficiency > 0 ? g->attn_bwd_efficiency : 1.0;
      /* cuDNN's fused attention or FlashAttention-2, at the rates the
       * cluster file measures for them (sim_plan_resolve refuses the
       * kernel where it gives none) */
      if (p->attention_kernel == SIM_ATTENTION_CUDNN && g->attn_cudnn_fwd_efficiency > 0) {
        eff_f = g->attn_cudnn_fwd_efficiency;
        eff_b = g->attn_cudnn_bwd_efficiency;
      } else if (p->attention_kernel == SIM_ATTENTION_FLASH2 && g->attn_flash2_fwd_efficiency > 0) {
        eff_f = g->attn_flash2_fwd_efficiency;
        eff_b = g->attn_flash2_bwd_efficiency;
      }
      /* causal: half the s x s work; the backward's five matmuls are 2.5x
       * the forward's two (Dao 2023), plus its preprocessing kernel
       * (rowsum of dO * O) */
      /* FlashAttention's Triton kernel: FlashAttention-2 is 1.3-1.5x faster
       * in the forward pass and ~2x in the backward (Dao 2023,
       * arXiv:2307.08691, section 4.1, A100), so its rate is taken from
       * FlashAttention-2's: the cluster file's flash2 pair where it gives
       * one (Hopper, whose first pair is FlashAttention-3's), else its
       * first pair (Ampere's is FlashAttention-2's).  On Hopper neither
       * kernel uses its new matrix instructions: FlashAttention-2 runs its
       * Ampere code (Shah et al. 2024, arXiv:2407.08608, section 1), and
       * llm-foundry's kernel (llmfoundry/models/layers/flash_attn_triton.py
       * @061f2c7c) is compiled by the pre-MLIR Triton (its setup.py:
       * triton-pre-mlir, branch triton_pre_mlir_sm90), older than the
       * MLIR-based Triton that later generated Hopper's wgmma. */
      if (p->attention_kernel == SIM_ATTENTION_TRITON) {
        if (g->attn_flash2_fwd_efficiency > 0) {
          eff_f = g->attn_flash2_fwd_efficiency;
          eff_b = g->attn_flash2_bwd_efficiency;
        }
        eff_f /= 1.4;
        eff_b /= 2.0;
      }
      if (p->fp8_attention)
        eff_f *= FP8_ATTENTION_SPEEDUP;
      {
        /* the padded head's extra work (kernel_head_dim) */
        double pad = (kernel_head_dim (p->attention_kernel, dqk) +
                      kernel_head_dim (p->attention_kernel, dv)) /
                     (dqk + dv);
        eff_f /= pad;
        eff_b /= pad;
      }
      k_attn (core_fwd, 0.5 * full_flop, eff_f * attn_shape_factor (s, dqk, FALSE));
      k_attn (core_bwd, 2.5 * 0.5 * full_flop, eff_b * attn_shape_factor (s, dqk, TRUE));
      TAG ("attention_dO_O");
      k_mem (core_bwd, 4 * T * heads * dv / t);
    } else {
      double bh = b * heads / t;          /* batched heads */
      double scores = bh * s * S;         /* elements */
      /* batched GEMMs: one kernel for all heads, bh times the work */
      TAG ("attention_qk");
      k_batched (core_fwd, bh, s, S, dqk);
      k_batched (core_bwd, bh, s, dqk, S);
      k_batched (core_bwd, bh, S, dqk, s);
      TAG ("attention_pv");
      k_batched (core_fwd, bh, s, dv, S);
      k_batched (core_bwd, bh, s, S, dv);
      k_batched (core_bwd, bh, dv, S, s);
      TAG ("softmax");
      /* fused scale-mask-softmax: read and write the scores; dropout: the
       * same plus its mask; backward reads y and dy, writes dx */
      k_mem (core_fwd, 4 * scores);
      k_mem (core_bwd, 6 * scores);
      if (m->dropout) {
        TAG ("attention_dropout");
        k_mem (core_fwd, 5 * scores);
        k_mem (core_bwd, 5 * scores);
      }
    }
  }
}

/* The kernels Megatron-Core with Transformer Engine launches for one layer
 * (megatron/core/transformer/transformer_layer.py: input norm, attention,
 * bias-dropout-add, pre-MLP norm, MLP, bias-dropout-add), per TP rank and
 * micro-batch.  Norms and residual adds see Tn tokens (T/t under sequence
 * parallelism); the linears and the attention see T.  dense_mlp: FALSE for
 * a mixture-of-experts layer, whose MLP moe_kernels adds. */
static void
layer_kernels (const SimModel *m, const SimPlan *p, gboolean dense_mlp, Acc *fwd, Acc *bwd,
               Acc *core_fwd, Acc *core_bwd, Acc *rec)
{
  LayerCtx ctx = { .m = m, .p = p, .g = fwd->g, .fwd = fwd, .bwd = bwd, .core_fwd = core_fwd,
                   .core_bwd = core_bwd, .rec = rec };
  LayerCtx *c = &ctx;
  double d = (double) sim_model_head_dim (m);
  Acc begin = *fwd;

  c->t = p->tp;
  c->s = (double) p->seq_len / p->cp;
  c->S = (double) p->seq_len;
  c->b = p->micro_batch;
  c->h = m->hidden;
  c->f = dense_mlp ? m->ffn_hidden : 0;
  c->kvd = (double) sim_model_kv_dim (m);
  c->heads = (double) m->heads;
  c->qd = c->heads * d; /* the query width: hidden unless head-dim says otherwise */
  c->T = c->s * c->b;
  c->Tn = p->sequence_parallel ? c->T / c->t : c->T;
  c->mask = m->dropout ? 1.0 : 0.0;
  c->up_n = (m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0) * c->f / c->t;
  c->mla = m->mla.kv_lora_rank > 0;
  /* the attention core's head sizes: q.k and v (latent attention's
   * nope + rope and v_head_dim) */
  c->dqk = c->mla ? (double) (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim) : d;
  c->dv = c->mla ? (double) m->mla.v_head_dim : d;
  /* the dense MLP's forward, for --recompute-modules mlp: its fused norm,
   * linears, FP8 casts and activation (the bias-dropout-add after it is
   * not part of the module) */
  c->mlp_again = c->f > 0 && recomputes (p, SIM_RECOMPUTE_MLP);
  /* torchtitan runs its own model code: eagerly op by op unless each block
   * is compiled (--torch-compile), when Inductor's fused kernels move what
   * Transformer Engine's do, but for the rotary embedding and the grouped
   * keys' copies (titan_rope, repeat_kv) */
  c->titan = p->framework == SIM_FRAMEWORK_TORCHTITAN;
  c->eager = c->titan && p->torch_compile <= 0;
  c->sac = (OpSac){ .on = sim_plan_op_sac (p), .eager = c->eager, .gemm = { .g = fwd->g } };

  layer_norms (c);
  layer_linears (c);
  layer_casts (c);
  layer_activation_rope (c);
  layer_attention (c);
  if (c->sac.on) {
    /* op-level checkpointing runs every forward kernel of the block but
     * its linears again (titan_linear charged those it reruns), and not
     * SDPA, whose output it keeps */
    rec->s += fwd->s - begin.s - c->sac.gemm.s;
    rec->flop += fwd->flop - begin.flop - c->sac.gemm.flop;
    rec->kernels += fwd->kernels - begin.kernels - c->sac.gemm.kernels;
  }
}

#undef TAG

/* the kernels of an MoE layer's router (forward, backward) and of its
 * dispatcher's preprocess (forward only), which CUDA graphs may capture */
typedef struct {
  int router_fwd, router_bwd, preprocess_fwd;
} MoeKernels;

/* The capacity factor of a plan (SimPlan.moe_capacity_factor), or of its
 * model where the plan is not resolved (sim shapes); 0 dropless */
static double
moe_capacity (const SimModel *m, const SimPlan *p)
{
  return p->moe_capacity_factor > 0 ? p->moe_capacity_factor : m->moe.capacity_factor;
}

/* The busiest GPU's routed tokens over the mean: the plan's
 * --moe-imbalance, but never above a capacity factor, beyond which
 * Megatron-Core drops the tokens (moe_utils.py, topk_softmax_with_capacity);
 * padded to capacity, every GPU's experts compute exactly the capacity
 * (token_dispatcher.py, MoEAlltoAllTokenDispatcher.preprocess: each local
 * expert's tokens a torch.full of the capacity) */
double
sim_cost_moe_load (const SimModel *m, const SimPlan *p)
{
  double x = p->moe_imbalance > 0 ? p->moe_imbalance : 1.0, cf = moe_capacity (m, p);
  if (cf > 0 && p->moe_pad_to_capacity)
    return cf;
  return cf > 0 ? MIN (x, cf) : x;
}

/* n small kernels that together move `bytes` through HBM */
static void
k_mem_n (Acc *a, int n, double bytes)
{
  for (int i = 0; i < n; i++)
    k_mem (a, bytes / n);
}

/* The FP8 or NVFP4 casts of a grouped linear's `elements` input (or
 * output gradient) rows, split over its `groups` local experts: Transformer
 * Engine's GroupedLinear quantizes them with split_quantize, whose
 * multi_tensor_quantize_impl has one fused kernel for delayed scaling only
 * and otherwise launches each expert's quantization on its own
 * (transformer_engine/pytorch/csrc/extensions/cast.cpp: "Currently only
 * have fused kernel for FP8 delayed scaling", "Quantize kernels
 * individually"); under current scaling each expert's rows are first read
 * for their amax (the pass fp8_recipe_kernels charges a dense linear) */
static void
expert_casts (const SimPlan *p, Acc *a, double groups, double elements)
{
  int n = (int) MAX (groups, 1.0);
  if (p->fp4 != SIM_FP4_OFF) {
    for (int i = 0; i < n; i++)
      nvfp4_kernels (a, elements / n);
    return;
  }
  if (p->fp8 == SIM_FP8_OFF)
    return;
  if (p->fp8_recipe == SIM_FP8_DELAYED) {
    k_mem (a, 4 * elements);
    return;
  }
  if (p->fp8_recipe == SIM_FP8_CURRENT)
    k_mem_n (a, n, 2 * elements);
  k_mem_n (a, n, 4 * elements);
  current_scaling_scalars (p, a, n, "expert_fp8_amax_scale");
}

/* The routed experts as Transformer Engine's fused grouped MLP
 * (transformer_engine/pytorch/ops/fused/grouped_mlp.py @d0067d0,
 * _GroupedMLP_CuTeGEMMBase.fuser_forward and fuser_backward), on `rows`
 * routed rows over `local` experts of FC1 width `up` (gated: 2 fe) and FC2
 * width `fe`, kernel by kernel:
 *   forward   one grouped quantize of FC1's input for every expert
 *             (tex.group_quantize), FC1 as one grouped GEMM whose epilogue
 *             applies the gated activation and the routing probabilities
 *             and writes FC2's input block-scaled (its d_tensor, rowwise
 *             and columnwise), FC2 as one grouped GEMM;
 *   backward  one grouped quantize of FC2's output gradient, FC2's data
 *             gradient as one grouped GEMM whose epilogue reads the saved
 *             FC1 output for the activation's backward and writes FC1's
 *             output gradient block-scaled, FC1's data gradient and each
 *             linear's weight gradient as one grouped GEMM each.
 * Against the unfused path: no per-expert casts, no activation kernels,
 * and one kernel's fixed cost per grouped GEMM instead of one per expert.
 * The epilogues' writes are charged as memory traffic without a kernel of
 * their own; the GEMMs at the per-expert shape's rate, as unfused. */
static void
fused_grouped_mlp (const SimPlan *p, Acc *fwd, Acc *bwd, double local, double per_expert,
                   double rows, double h, double fe, double up)
{
  const SimGpuType *g = fwd->g;
  double x = linear_speedup (p, g), e = linear_elem_bytes (p);
  double bw = g->hbm_bw_bytes_per_s * g->eff.hbm;
  tag ("expert_fc1", fwd, bwd, NULL, NULL, NULL);
  k_grouped_role (fwd, "", local, 1, per_expert, up, h, x, e);
  k_grouped_role (bwd, "dgrad", local, 1, per_expert, h, up, x, e);
  k_grouped_role (bwd, "wgrad", local, 1, h, up, per_expert, x, e);
  tag ("expert_fc2", fwd, bwd, NULL, NULL, NULL);
  k_grouped_role (fwd, "", local, 1, per_expert, h, fe, x, e);
  k_grouped_role (bwd, "dgrad", local, 1, per_expert, fe, h, x, e);
  k_grouped_role (bwd, "wgrad", local, 1, fe, h, per_expert, x, e);
  tag ("expert_fp8_cast", fwd, bwd, NULL, NULL, NULL);
  /* FC1's input and FC2's output gradient, one grouped quantize each (the
   * bytes of expert_casts' MXFP8 cast, or one NVFP4 quantization) */
  if (p->fp4 != SIM_FP4_OFF) {
    nvfp4_kernels (fwd, rows * h);
    nvfp4_kernels (bwd, rows * h);
  } else {
    k_mem (fwd, 4 * rows * h);
    k_mem (bwd, 4 * rows * h);
  }
  /* the epilogues: FC2's input written rowwise and columnwise; the saved
   * FC1 output (BF16) read and FC1's output gradient written both ways */
  k_extra (fwd, SIM_KERNEL_MEMORY, 2 * e * rows * fe, 2 * e * rows * fe / bw);
  k_extra (bwd, SIM_KERNEL_MEMORY, (2 + 2 * e) * rows * up, (2 + 2 * e) * rows * up / bw);
}

/* The MLP of a mixture-of-experts layer as Megatron-Core runs it with the
 * all-to-all token dispatcher, per GPU and micro-batch, on the Tn tokens
 * it holds after the norm (s*b, /t under sequence parallelism), kernel by
 * kernel as Megatron-Core and Transformer Engine launch them (router.py
 * @005742ff, moe_utils.py @00611e6e, token_dispatcher.py @0014f137
 * MoEAlltoAllTokenDispatcher, experts.py TEGroupedMLP, TE permutation.py
 * @0a67aa3b with --moe-permute-fusion, grouped_linear.py @0069563f; the
 * counts are read off their op lists, ~30 % uncertain where a PyTorch op
 * launches several kernels):
 *   router    the h x E GEMM (BF16 under FP8 too: TE's FP8 covers the
 *             experts' linears, not the router), then top-k, softmax,
 *             the dense routing map and probabilities, the auxiliary
 *             load-balancing loss: 22 small kernels over the fp32 [Tn, E]
 *             scores, ~42 Tn E bytes (36 with DeepSeek's group-limited
 *             sigmoid routing); backward the two GEMMs and 14 (20);
 *   preprocess  tokens per expert, the count all-gather, the splits:
 *             7 kernels, 1 collective and 4 device-to-host copies; then
 *             the host waits for them (d2h_event.synchronize() at
 *             "before_ep_alltoall"), so the GPU drains once per MoE layer
 *             forward: charged as one host launch of idle GPU;
 *   permute   TE's fused permute: 3 row-map kernels over [Tn, E] and one
 *             that copies each token k times (read Tn h, write Tn k h);
 *             after the all-to-all, with more than one local expert, 2
 *             kernels sort the received rows by expert (and 2 unsort them
 *             before the combine); one kernel un-permutes, summing the k
 *             copies; each has one kernel backward;
 *   experts   the E/ep local experts' FC1 and FC2 as TE grouped GEMMs
 *             (k_grouped_x: one cuBLAS GEMM per expert); the GPU computes
 *             the R = Tn*k*etp rows its expert tensor-parallel group
 *             gathered, times the busiest GPU's load (moe_load), R/(E/ep)
 *             rows per expert at width fe/etp; the probability-weighted
 *             activation fused into one kernel (four backward);
 *   shared    S always-on experts as one dense MLP of width S*fe split
 *             over TP (SharedExpertMLP), on all T tokens.
 * Charged beside the GEMMs under FP8 or NVFP4: each expert's casts of its
 * inputs and output gradients (expert_casts). */
static void
moe_kernels (const SimModel *m, const SimPlan *p, Acc *fwd, Acc *bwd, Acc *rec, MoeKernels *n)
{
  const SimMoe *e = &m->moe;
  double t = p->tp, T = (double) p->seq_len / p->cp * p->micro_batch;
  double Tn = p->sequence_parallel ? T / t : T;
  double h = m->hidden, E = (double) e->experts, k = (double) e->top_k;
  double etp = MAX (p->etp, 1), ep = MAX (p->ep, 1);
  double fe = (double) e->ffn_hidden / etp;
  double up = (m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0) * fe;
  double rows = Tn * k * etp * sim_cost_moe_load (m, p);
  double local = E / ep, per_expert = rows / local;
  gboolean grouped_topk = e->groups > 0, fused;
  /* --recompute-modules moe: the whole layer's forward again (its
   * all-to-alls are the iteration's); moe_act: the activation; and
   * shared_experts: the shared experts' MLP */
  Acc start = *fwd, mark;
#define TAG(name) tag (name, fwd, bwd, rec, NULL, NULL)

  /* router */
  TAG ("router");
  n->router_fwd = fwd->kernels, n->router_bwd = bwd->kernels;
  k_linear (NULL, fwd, bwd, Tn, E, h);
  k_mem_n (fwd, grouped_topk ? 36 : 22, 42 * Tn * E);
  k_mem_n (bwd, grouped_topk ? 20 : 14, 12 * Tn * E);
  n->router_fwd = fwd->kernels - n->router_fwd, n->router_bwd = bwd->kernels - n->router_bwd;
  /* preprocess, its copies to the host, and the wait for them; padded
   * to capacity, the splits are known on the host and the one kernel
   * fills the per-expert counts: no copy, no wait (Megatron-LM
   * megatron/core/transformer/moe/token_dispatcher.py @0014f137:
   * preprocess returns early under drop_and_pad, and
   * _maybe_dtoh_and_synchronize does nothing then) */
  TAG ("dispatch_preprocess");
  n->preprocess_fwd = fwd->kernels;
  if (moe_capacity (m, p) > 0 && p->moe_pad_to_capacity) {
    k_mem (fwd, 8.0 * E);
    n->preprocess_fwd = fwd->kernels - n->preprocess_fwd;
  } else {
    k_mem_n (fwd, 12, 4 * Tn * E);
    n->preprocess_fwd = fwd->kernels - n->preprocess_fwd;
    k_extra (fwd, SIM_KERNEL_WAIT, 0, fwd->g->eff.host_launch_s);
  }
  /* permute and un-permute, and with several local experts the sort by
   * expert and its inverse */
  TAG ("permute");
  k_mem_n (fwd, 3, 8 * Tn * (2 * E + 1));
  k_mem (fwd, 2 * Tn * h * (1 + k) + 8 * Tn * k);
  k_mem (bwd, 2 * Tn * h * (1 + k) + 8 * Tn * k);
  if (local > 1) {
    k_mem_n (fwd, 2, 4 * rows * h);
    k_mem (bwd, 4 * rows * h);
    k_mem_n (fwd, 2, 4 * rows * h);
    k_mem (bwd, 4 * rows * h);
  }
  k_mem (fwd, 2 * Tn * h * (1 + k));
  k_mem (bwd, 2 * Tn * h * (1 + k));
  /* experts */
  fused = p != NULL && p->moe_fused_grouped_mlp;
  if (fused) {
    fused_grouped_mlp (p, fwd, bwd, local, per_expert, rows, h, fe, up);
  } else {
    TAG ("expert_fc1");
    k_grouped_linear (p, fwd, bwd, local, per_expert, up, h);
    TAG ("expert_fc2");
    k_grouped_linear (p, fwd, bwd, local, per_expert, h, fe);
    TAG ("expert_fp8_cast");
    /* the casts of a dense MLP's linears (layer_kernels), on the routed
     * rows: FC1's input (the dispatched tokens arrive in BF16) and FC2's,
     * and the two output gradients, each split by local expert */
    expert_casts (p, fwd, local, rows * h);
    expert_casts (p, fwd, local, rows * fe);
    expert_casts (p, bwd, local, rows * up);
    expert_casts (p, bwd, local, rows * h);
  }
  TAG ("expert_activation");
  /* --fp8-expert-act: FC1's output cast to FP8 for keeping (read BF16,
   * write FP8), and read back to BF16 before the backward uses it */
  if (p != NULL && p->fp8_expert_act && p->fp8 != SIM_FP8_OFF) {
    k_mem (fwd, 3 * rows * up);
    k_mem (bwd, 3 * rows * up);
  }
  /* the activation, unless FC1's epilogue applied it (fused) */
  mark = *fwd;
  if (!fused && m->mlp == SIM_MLP_SWIGLU) {
    k_mem (fwd, 6 * rows * fe);
    k_mem_n (bwd, 4, 10 * rows * fe);
  } else if (!fused) {
    k_mem (fwd, 4 * rows * fe);
    k_mem_n (bwd, 4, 6 * rows * fe);
  }
  if (recomputes (p, SIM_RECOMPUTE_MOE_ACT)) {
    again (rec, fwd, &mark);
    /* FC2 saved the original input (set_save_original_input), so its
     * weight gradient quantizes the recomputed one again */
    expert_casts (p, rec, local, rows * fe);
  }
  if (e->shared_experts > 0) {
    double fs = (double) (e->shared_experts * e->ffn_hidden);
    double up_s = (m->mlp == SIM_MLP_SWIGLU ? 2.0 : 1.0) * fs / t;
    TAG ("shared_experts");
    mark = *fwd;
    k_linear (p, fwd, bwd, T, up_s, h);
    k_linear (p, fwd, bwd, T, h, fs / t);
    k_mem (fwd, (m->mlp == SIM_MLP_SWIGLU ? 6 : 4) * T * fs / t);
    k_mem (bwd, (m->mlp == SIM_MLP_SWIGLU ? 10 : 6) * T * fs / t);
    if (recomputes (p, SIM_RECOMPUTE_SHARED_EXPERTS))
      again (rec, fwd, &mark);
  }
  if (recomputes (p, SIM_RECOMPUTE_MOE))
    again (rec, fwd, &start);
#undef TAG
}

/* of a backward of wall time bwd_s and GPU time gpu_s, the weight-gradient
 * GEMMs' share (w_gpu_s of the GPU time): their GPU time, in the same
 * proportion where the host's launches set the backward's pace, so that
 * the input and weight gradients of a split backward add up to it */
static double
w_share (double bwd_s, double w_gpu_s, double gpu_s)
{
  return gpu_s > 0 ? bwd_s * w_gpu_s / gpu_s : 0;
}

/* one layer's forward, backward and recomputation from its kernels */
static void
layer_times (const SimPlan *p, const Acc *fwd, const Acc *bwd, const Acc *core_fwd,
             const Acc *core_bwd, const Acc *rec, double *fwd_s, double *bwd_s, double *rec_s,
             double *fwd_flop, double *bwd_flop, double *rec_flop, SimLayerCost *c, SimLayerPass f,
             SimLayerPass b)
{
  Acc lf = *fwd, lb = *bwd;
  lf.s += core_fwd->s, lf.kernels += core_fwd->kernels, lf.flop += core_fwd->flop;
  lb.s += core_bwd->s, lb.kernels += core_bwd->kernels, lb.flop += core_bwd->flop;
  c->gpu_s[f] = lf.s, c->host_s[f] = launches (&lf) * lf.g->eff.host_launch_s;
  c->gpu_s[b] = lb.s, c->host_s[b] = launches (&lb) * lb.g->eff.host_launch_s;
  *fwd_s = wall (&lf);
  *bwd_s = wall (&lb);
  *fwd_flop = lf.flop;
  *bwd_flop = lb.flop;
  *rec_s = *rec_flop = 0;
  switch (p->recompute) {
  case SIM_RECOMPUTE_FULL:
    *rec_s = *fwd_s;
    *rec_flop = *fwd_flop;
    break;
  case SIM_RECOMPUTE_SELECTIVE:
    /* Megatron-Core checkpoints the attention core whatever its kernel
     * (attention.py: checkpoint_core_attention = recompute_granularity ==
     * 'selective' and "core_attn" in recompute_modules, then
     * _checkpointed_attention_forward), so the backward runs the core's
     * forward again before its own backward: under flash attention one
     * more flash forward, which saves no memory worth counting (the
     * checkpoint keeps q, k, v, the output projection its input, the
     * same tensors flash keeps; sim-activation.c); the other modules'
     * kernels layer_kernels and moe_kernels charged to rec */
    {
      Acc r = *rec;
      if (!sim_plan_op_sac (p) &&
          ((p->recompute_modules & SIM_RECOMPUTE_CORE_ATTN) || p->recompute_modules == 0))
        r.s += core_fwd->s, r.kernels += core_fwd->kernels, r.flop += core_fwd->flop;
      *rec_s = wall (&r);
      *rec_flop = r.flop;
    }
    break;
  case SIM_RECOMPUTE_NONE:
    break;
  }
}

/* the embedding of T tokens: gather rows (and add positions); backward:
 * PyTorch's embedding_dense_backward sorts the token ids and scatter-adds
 * rows (sort, count, segment-sum, copy: four kernels), the gradient rows
 * read and the weight gradient's touched rows written in fp32 */
static void
embedding_kernels (const SimModel *m, Acc *fwd, Acc *bwd, double T)
{
  double h = m->hidden;
  k_mem (fwd, 4.0 * T * h);
  if (m->position == SIM_POSITION_LEARNED)
    k_mem (fwd, 6.0 * T * h);
  k_mem (bwd, 16.0 * T);
  k_mem (bwd, 16.0 * T);
  k_mem (bwd, 6.0 * T * h);
  k_mem (bwd, 4.0 * T * h);
}

/* a norm outside a linear layer over n bf16 values: read and write
 * forward; backward read the input and the gradient, write the input's
 * gradient, then reduce the weight's */
static void
norm_kernels (Acc *fwd, Acc *bwd, double n)
{
  k_mem (fwd, 4 * n);
  k_mem (bwd, 6 * n);
  k_mem (bwd, 2 * n);
}

/* the kernels of a layer's attention sublayer, forward and backward:
 * layer_kernels without the MLP, less the MLP side's norm (one kernel
 * forward, two backward) and bias-dropout-add (one each way) that its loop
 * over the two sublayers also charges */
static void
attention_kernels (const SimModel *m, const SimPlan *p, const SimGpuType *g, int *f, int *b)
{
  Acc af = { g, 0, 0, 0 }, ab = { g, 0, 0, 0 };
  Acc cf = { g, 0, 0, 0 }, cb = { g, 0, 0, 0 }, r = { g, 0, 0, 0 };
  layer_kernels (m, p, FALSE, &af, &ab, &cf, &cb, &r);
  *f = af.kernels + cf.kernels - 2;
  *b = ab.kernels + cb.kernels - 3;
}

/* A layer under CUDA graphs (--cuda-graph-scope): the captured kernels run
 * as before on the GPU (sim keeps each one's fixed cost: the graph removes
 * the host's launch, not the kernel's tail), but the host launches one
 * graph per pass instead of each of them (sim_plan_layer_graphs), charged
 * as one host launch: the graphed callable's autograd function and its
 * cudaGraphLaunch, an assumption no measurement in the tree checks.
 * Transformer Engine's graphed callable copies its input into the graph's
 * static input buffer before the forward replay, and the output gradient
 * into its static buffer before the backward replay, whenever the tensor
 * handed in is not already that buffer (transformer_engine/pytorch/
 * graph.py, make_graphed_callables: Graphed.forward and backward, the
 * copy_ of each input whose data_ptr differs), as it is not when eager
 * code made it: one copy of the Tn x h BF16 hidden states (read and
 * write) each way, charged as eager kernels.  Recomputation (rec) stays
 * eager.  captured_fwd and captured_bwd count what the scope captures. */
static void
graph_layer (Acc *fwd, Acc *bwd, int graphs, int captured_fwd, int captured_bwd, double Tn, double h)
{
  if (graphs <= 0)
    return;
  fwd->graphed += captured_fwd;
  bwd->graphed += captured_bwd;
  fwd->graphs += graphs;
  bwd->graphs += graphs;
  tag ("graph_input_copy", fwd, bwd, NULL, NULL, NULL);
  for (int i = 0; i < graphs; i++) {
    k_mem (fwd, 4 * Tn * h);
    k_mem (bwd, 4 * Tn * h);
  }
}

/* cost_layer's mixture-of-experts layer: its attention side (layer_kernels
 * without the dense MLP) and experts (moe_kernels), CUDA graphs, and the
 * all-to-all and expert-TP bytes; scope, attn_f and attn_b as cost_layer
 * works them out */
static void
cost_moe_layer (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c,
                GArray *log, guint scope, int attn_f, int attn_b, int mlp_colls)
{
  double t = p->tp, h = m->hidden;
  double T = (double) p->seq_len / p->cp * p->micro_batch;
  double Tn = p->sequence_parallel ? T / t : T;
  Acc mf = { .g = g, .log = log, .pass = "forward" },
      mb = { .g = g, .log = log, .pass = "backward" };
  Acc mcf = mf, mcb = mb, mr = { .g = g };
  double load = sim_cost_moe_load (m, p);
  double attn_fwd_gpu_s, attn_bwd_gpu_s;
  MoeKernels n;
  layer_kernels (m, p, FALSE, &mf, &mb, &mcf, &mcb, &mr);
  attn_fwd_gpu_s = mf.s + mcf.s;
  attn_bwd_gpu_s = mb.s + mcb.s;
  moe_kernels (m, p, &mf, &mb, &mr, &n);
  if (sim_plan_layer_graphs (p, TRUE) > 0) {
    /* attn and moe_router captured together run through the pre-MLP
     * norm between them (one kernel forward, two backward) */
    gboolean a = (scope & SIM_GRAPH_ATTN) != 0, r = (scope & SIM_GRAPH_MOE_ROUTER) != 0;
    graph_layer (&mf, &mb, sim_plan_layer_graphs (p, TRUE),
                 (a ? attn_f : 0) + (r ? n.router_fwd : 0) + (a && r ? 1 : 0) +
                     ((scope & SIM_GRAPH_MOE_PREPROCESS) ? n.preprocess_fwd : 0),
                 (a ? attn_b : 0) + (r ? n.router_bwd : 0) + (a && r ? 2 : 0), Tn, h);
  }
  layer_times (p, &mf, &mb, &mcf, &mcb, &mr, &c->moe_fwd_s, &c->moe_bwd_s, &c->moe_recompute_s,
               &c->moe_fwd_flop, &c->moe_bwd_flop, &c->moe_recompute_flop, c, SIM_MOE_LAYER_FWD,
               SIM_MOE_LAYER_BWD);
  c->moe_bwd_w_s = w_share (c->moe_bwd_s, mb.w_s + mcb.w_s, c->gpu_s[SIM_MOE_LAYER_BWD]);
  /* the attention side's share of the layer's time, by GPU time (the
   * router, its top-k and the permutation are counted with the experts) */
  c->moe_attn_fwd_s = c->gpu_s[SIM_MOE_LAYER_FWD] > 0
                           ? c->moe_fwd_s * attn_fwd_gpu_s / c->gpu_s[SIM_MOE_LAYER_FWD]
                           : 0;
  c->moe_attn_bwd_s = c->gpu_s[SIM_MOE_LAYER_BWD] > 0
                           ? c->moe_bwd_s * attn_bwd_gpu_s / c->gpu_s[SIM_MOE_LAYER_BWD]
                           : 0;
  c->moe_recompute_module_flop = mr.flop;
  c->moe_recompute_tp_colls =
      m->moe.shared_experts > 0 &&
              (recomputes (p, SIM_RECOMPUTE_SHARED_EXPERTS) || recomputes (p, SIM_RECOMPUTE_MOE))
          ? mlp_colls
          : 0;
  /* the attention's all-gather and reduce-scatter (all-reduce without
   * sequence parallelism), and the shared experts' */
  c->moe_tp_colls_fwd = p->tp > 1 ? (p->sequence_parallel ? 2 : 1) *
                                        (m->moe.shared_experts > 0 ? 2 : 1)
                                  : 0;
  /* each GPU sends its Tn tokens k times, BF16, of which (ep-1)/ep leave
   * it; the busiest GPU receives load times the mean */
  c->a2a_bytes = p->ep > 1 ? 2.0 * Tn * h * (double) m->moe.top_k * load : 0;
  c->etp_bytes = p->etp > 1 ? 2.0 * Tn * h * (double) m->moe.top_k * p->etp * load : 0;
}

/* cost_layer's embedding, multi-token-prediction module and output layer
 * with its loss */
static void
cost_head (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c, GArray *log)
{
  double t = p->tp, h = m->hidden, V = m->vocab;
  double T = (double) p->seq_len / p->cp * p->micro_batch;
  double Tn = p->sequence_parallel ? T / t : T;

  {
    Acc ef = { g, 0, 0, 0 }, eb = { g, 0, 0, 0 };
    embedding_kernels (m, &ef, &eb, T);
    c->embed_fwd_s = wall (&ef);
    /* a frozen embedding (LoRA) takes no gradient, and nothing is below it */
    c->embed_bwd_s = frozen (p) ? 0 : wall (&eb);
  }
  /* a multi-token-prediction module beyond its layer (Megatron-Core's
   * MultiTokenPredictionLayer, megatron/core/transformer/
   * multi_token_prediction.py): the next token's embedding (as above), enorm
   * and hnorm (as the final norm below), torch.cat of the two (read and
   * write 2h), eh_proj (column-parallel, 2h -> h/t, in the FP8 context),
   * then its final norm, output layer and loss (the head, below).  Its TP
   * collectives, in units of a layer's (s b h): with sequence parallelism
   * eh_proj all-gathers its 2h input and the output is gathered over the
   * hidden dimension (gather_from_tensor_model_parallel_region), 3 forward;
   * backward the input's reduce-scatter (2) and the sequence scatter's
   * all-gather (1); without, the gather (1) forward and the input
   * gradient's all-reduce (2) backward, counted as 2 each way */
  if (p->mtp_layers > 0) {
    Acc f = { g, 0, 0, 0 }, bw = { g, 0, 0, 0 };
    embedding_kernels (m, &f, &bw, T);
    norm_kernels (&f, &bw, Tn * h);
    norm_kernels (&f, &bw, Tn * h);
    k_mem (&f, 8 * Tn * h);
    k_linear (p, &f, &bw, T, h / t, 2 * h);
    c->mtp_fwd_s = wall (&f);
    c->mtp_bwd_s = wall (&bw);
    c->mtp_fwd_flop = f.flop;
    c->mtp_bwd_flop = bw.flop;
    c->mtp_tp_colls = p->tp > 1 ? (p->sequence_parallel ? 3 : 2) : 0;
  }
  /* output layer (vocabulary-parallel) and Megatron's vocab-parallel
   * cross-entropy in fp32 over V/t (core/tensor_parallel/cross_entropy.py:
   * cast the logits to fp32, max, subtract and exp in place with the sum,
   * the loss; backward: softmax - one-hot scaled, cast to bf16) */
  {
    Acc hf = { .g = g, .log = log, .pass = "output forward" };
    Acc hb = { .g = g, .log = log, .pass = "output backward" };
    double TV = T * V / t;
    /* the output layer stays BF16 under FP8 (Megatron-Core keeps it out of
     * Transformer Engine's FP8 autocast) */
    tag ("output", &hf, &hb, NULL, NULL, NULL);
    if (frozen (p)) {
      /* LoRA: the output layer is frozen, its data gradient only */
      k_gemm_x (&hf, T, V / t, h, 1.0, 2.0);
      k_gemm_role (&hb, "dgrad", T, h, V / t, 1.0, 2.0);
    } else
      k_linear (NULL, &hf, &hb, T, V / t, h);
    tag ("final_norm", &hf, &hb, NULL, NULL, NULL);
    if (p->framework == SIM_FRAMEWORK_TORCHTITAN) {
      /* torchtitan compiles the transformer blocks only
       * (parallelisms/parallelize_llama.py @9dec370, apply_compile), so its
       * final norm runs eagerly either way */
      eager_rmsnorm_fwd (&hf, Tn * h);
      eager_rmsnorm_bwd (&hb, Tn * h);
    } else
      norm_kernels (&hf, &hb, Tn * h);        /* final norm */
    tag ("cross_entropy", &hf, &hb, NULL, NULL, NULL);
    k_mem (&hf, 6.0 * TV);                    /* bf16 -> fp32 */
    k_mem (&hf, 4.0 * TV);                    /* max */
    k_mem (&hf, 8.0 * TV);                    /* exp in place, sum */
    k_mem (&hf, 4.0 * TV);                    /* softmax = exp / sum, for the backward */
    k_mem (&hb, 8.0 * TV);                    /* (softmax - one-hot) * dloss */
    k_mem (&hb, 6.0 * TV);                    /* fp32 -> bf16 for the dgrad GEMM */
    c->head_fwd_s = wall (&hf);
    c->head_bwd_s = wall (&hb);
    c->head_bwd_w_s = w_share (c->head_bwd_s, hb.w_s, hb.s);
    c->head_fwd_flop = hf.flop;
    c->head_bwd_flop = hb.flop;
    if (p->mtp_layers > 0) {
      c->mtp_fwd_s += c->head_fwd_s;
      c->mtp_bwd_s += c->head_bwd_s;
      c->mtp_fwd_flop += hf.flop;
      c->mtp_bwd_flop += hb.flop;
    }
  }
}

/* cost_layer's per-parameter optimizer time and the bytes of the
 * layer's TP, PP and CP traffic */
static void
cost_bytes (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c)
{
  double t = p->tp, h = m->hidden, kvd = (double) sim_model_kv_dim (m);
  double T = (double) p->seq_len / p->cp * p->micro_batch;

  /* the optimizer step, memory-bound: zero the gradient buffer, read it
   * for the global gradient norm, then Adam reads the gradient, reads and
   * writes master, m and v, and writes the bf16 parameter */
  {
    int pb, gb, mb, ob, ab;
    sim_plan_state_bytes (p, &pb, &gb, &mb, &ob, &ab);
    c->optimizer_s_per_param = (double) (3 * (gb + ab) + 2 * (mb + ob) + pb) /
                               (g->hbm_bw_bytes_per_s * g->eff.hbm);
  }

  c->tp_colls_fwd = p->tp > 1 ? (p->sequence_parallel ? 4 : 2) : 0;
  /* with FP8, Transformer Engine all-gathers the FP8 input (1 byte) and
   * reduce-scatters in BF16: half of the collectives at half the bytes;
   * with NVFP4 it all-gathers both quantized copies, each 9/16 byte per
   * element with its scales (transformer_engine/pytorch/distributed.py,
   * gather_along_first_dim: _all_gather_nvfp4) */
  c->tp_bytes = (p->fp8 != SIM_FP8_OFF   ? 1.5
                 : p->fp4 != SIM_FP4_OFF ? (2 * 9.0 / 16 + 2) / 2
                                         : 2.0) *
                T * h;
  /* Megatron sends 1/t of the activation from each TP rank (scatter-gather) */
  c->pp_bytes = 2.0 * T * h / t;
  /* K and V around the CP ring; torchtitan repeats grouped keys and values
   * to every query head before SDPA (repeat_kv, layer_kernels), so its ring
   * carries the query heads' width */
  c->cp_kv_bytes = 2.0 * 2.0 * T *
                   (p->framework == SIM_FRAMEWORK_TORCHTITAN && m->mla.kv_lora_rank == 0
                        ? (double) m->heads * (double) sim_model_head_dim (m)
                        : kvd) /
                   t;
}

/* cost_layer's waits for CPU offloading */
static void
cost_offload (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c)
{
  /* CPU offloading (pp 1, so the one chunk holds every layer): the waits
   * for copies longer than their window of compute (sim_memory_offload);
   * the copy engines move the data, no kernel, so nothing else is slowed */
  if (p->cpu_offload_layers > 0 && g->host_bw_bytes_per_s > 0) {
    SimActivationConfig cfg;
    SimOffload off;
    g_autoptr (SimActivations) dense = NULL;
    g_autoptr (SimActivations) moe = NULL;
    double dense_s[2] = { c->layer_fwd_s, c->layer_bwd_s },
           moe_s[2] = { c->moe_fwd_s, c->moe_bwd_s };
    sim_activation_config_from_plan (&cfg, p);
    dense = sim_activations_layer (m, &cfg);
    if (sim_model_is_moe (m))
      moe = sim_activations_moe_layer (m, &cfg);
    sim_memory_offload_model (m, p, dense, moe, dense_s, moe_s, g->host_bw_bytes_per_s, &off);
    c->offload_fwd_s = off.fwd_wait_s;
    c->offload_bwd_s = off.bwd_wait_s;
  }
}

/* sim_cost_layer, each kernel of the listed layer (an MoE layer where the
 * model has them) and of the head appended to log when not NULL */
static void
cost_layer (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c, GArray *log)
{
  double t = p->tp, cp = p->cp;
  double s = (double) p->seq_len / cp, b = p->micro_batch;
  double h = m->hidden;
  double T = s * b;                       /* tokens of the micro-batch here */
  double Tn = p->sequence_parallel ? T / t : T; /* tokens the norms see */
  GArray *dense_log = sim_model_is_moe (m) ? NULL : log;
  Acc fwd = { .g = g, .log = dense_log, .pass = "forward" },
      bwd = { .g = g, .log = dense_log, .pass = "backward" };
  Acc core_fwd = fwd, core_bwd = bwd, rec = { .g = g };
  /* a TP-split MLP recomputed runs its collectives again: an all-gather
   * and a reduce-scatter with sequence parallelism, else an all-reduce */
  int mlp_colls = p->tp > 1 ? (p->sequence_parallel ? 2 : 1) : 0;

  guint scope = p->cuda_graph_impl != SIM_CUDA_GRAPH_NONE ? p->cuda_graph_scope : 0;
  int attn_f = 0, attn_b = 0;

  memset (c, 0, sizeof *c);
  if (scope != 0)
    attention_kernels (m, p, g, &attn_f, &attn_b);
  layer_kernels (m, p, TRUE, &fwd, &bwd, &core_fwd, &core_bwd, &rec);
  if (sim_plan_layer_graphs (p, FALSE) > 0) {
    /* the MLP sublayer: the rest of the dense layer */
    int mlp_f = fwd.kernels + core_fwd.kernels - attn_f, mlp_b = bwd.kernels + core_bwd.kernels - attn_b;
    graph_layer (&fwd, &bwd, sim_plan_layer_graphs (p, FALSE),
                 ((scope & SIM_GRAPH_ATTN) ? attn_f : 0) + ((scope & SIM_GRAPH_MLP) ? mlp_f : 0),
                 ((scope & SIM_GRAPH_ATTN) ? attn_b : 0) + ((scope & SIM_GRAPH_MLP) ? mlp_b : 0), Tn, h);
  }
  c->attn_core_fwd_s = core_fwd.s;
  layer_times (p, &fwd, &bwd, &core_fwd, &core_bwd, &rec, &c->layer_fwd_s, &c->layer_bwd_s,
               &c->layer_recompute_s, &c->layer_fwd_flop, &c->layer_bwd_flop,
               &c->layer_recompute_flop, c, SIM_LAYER_FWD, SIM_LAYER_BWD);
  c->layer_bwd_w_s = w_share (c->layer_bwd_s, bwd.w_s + core_bwd.w_s, c->gpu_s[SIM_LAYER_BWD]);
  c->layer_recompute_module_flop = rec.flop;
  c->recompute_tp_colls = recomputes (p, SIM_RECOMPUTE_MLP) ? mlp_colls : 0;
  /* torchtitan's op-level checkpointing gathers the attention's and the
   * MLP's inputs again (an all-gather's output is not kept; the
   * reduce-scatters' are) */
  if (sim_plan_op_sac (p))
    c->recompute_tp_colls = p->tp > 1 ? 2 : 0;
  if (sim_model_is_moe (m))
    cost_moe_layer (m, p, g, c, log, scope, attn_f, attn_b, mlp_colls);
  cost_head (m, p, g, c, log);
  cost_bytes (m, p, g, c);
  cost_offload (m, p, g, c);
}

void
sim_cost_layer (const SimModel *m, const SimPlan *p, const SimGpuType *g, SimLayerCost *c)
{
  cost_layer (m, p, g, c, NULL);
}

GArray *
sim_cost_layer_kernels (const SimModel *m, const SimPlan *p, const SimGpuType *g)
{
  static const char *passes[] = { "forward", "backward", "output forward", "output backward" };
  g_autoptr (GArray) log = g_array_new (FALSE, FALSE, sizeof (SimKernel));
  GArray *out = g_array_new (FALSE, FALSE, sizeof (SimKernel));
  SimLayerCost c;
  cost_layer (m, p, g, &c, log);
  /* pass by pass, each pass's kernels in the order sim charges them */
  for (guint i = 0; i < G_N_ELEMENTS (passes); i++)
    for (guint j = 0; j < log->len; j++)
      if (strcmp (g_array_index (log, SimKernel, j).pass, passes[i]) == 0)
        g_array_append_val (out, g_array_index (log, SimKernel, j));
  return out;
}

double
sim_cost_nodes_reached (double pool, double pick, int nodes)
{
  double per = pool / nodes, none = 1;
  for (int i = 0; i < (int) pick; i++)
    none *= MAX (pool - per - i, 0.0) / (pool - i);
  return nodes * (1 - none);
}

double
sim_cost_tail_w_s (const SimLayerCost *c)
{
  return c->head_bwd_w_s;
}

double
sim_cost_tail_s (const SimLayerCost *c, const SimPlan *plan, gboolean backward)
{
  double mtp = MAX (plan->mtp_layers, 0);
  return backward ? c->head_bwd_s + mtp * c->mtp_bwd_s : c->head_fwd_s + mtp * c->mtp_fwd_s;
}

/* weights one token's forward multiplies by in a layer's attention
 * projections (biases and norms aside) */
static double
attention_matmul_weights (const SimModel *m)
{
  double h = m->hidden, H = (double) m->heads;
  if (m->mla.kv_lora_rank > 0) {
    const SimMla *a = &m->mla;
    double ql = (double) a->q_lora_rank, kl = (double) a->kv_lora_rank;
    double n = (double) a->qk_nope_head_dim, r = (double) a->qk_rope_head_dim;
    double v = (double) a->v_head_dim;
    return (ql > 0 ? h * ql + ql * H * (n + r) : h * H * (n + r)) + h * (kl + r) +
           kl * H * (n + v) + H * v * h;
  } else {
    double qd = H * (double) sim_model_head_dim (m), kvd = (double) sim_model_kv_dim (m);
    return h * (qd + 2 * kvd) + qd * h;
  }
}

static void
core_head_dims (const SimModel *m, double *dqk, double *dv)
{
  gboolean mla = m->mla.kv_lora_rank > 0;
  *dqk = mla ? (double) (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim)
             : (double) sim_model_head_dim (m);
  *dv = mla ? (double) m->mla.v_head_dim : *dqk;
}

double
sim_cost_attention_core_flop (const SimModel *m, const SimPlan *p)
{
  double S = (double) p->seq_len, dqk, dv;
  core_head_dims (m, &dqk, &dv);
  return 2.0 * S * (double) m->heads * (dqk + dv) * ((double) m->layers + MAX (p->mtp_layers, 0)) *
         (double) p->global_batch * S;
}

double
sim_cost_model_flop (const SimModel *m, const SimPlan *p)
{
  double B = (double) p->global_batch, S = (double) p->seq_len, h = m->hidden;
  double L = m->layers, V = m->vocab, H = (double) m->heads;
  double per_mlp = m->mlp == SIM_MLP_SWIGLU ? 3.0 : 2.0;
  double Lm = (double) sim_model_moe_layers (m);
  double dqk, dv;
  /* a MoE layer's token meets the router and its k routed and S shared
   * experts (the model's active parameters, sim-model.h) */
  double moe_mlp = (double) m->moe.experts * h +
                   (double) (m->moe.top_k + m->moe.shared_experts) * per_mlp * h *
                       (double) m->moe.ffn_hidden;
  /* forward matmul FLOPs per token: projections, MLPs (dense or the experts
   * a token uses), the full s x s attention (Narayanan et al. 2021), output */
  double per_token;
  core_head_dims (m, &dqk, &dv);
  per_token = 2.0 * attention_matmul_weights (m) * L +
                     2.0 * (per_mlp * h * (double) m->ffn_hidden * (L - Lm) + moe_mlp * Lm) +
                     2.0 * S * H * (dqk + dv) * L + 2.0 * h * V;
  if (p->lora_rank > 0) {
    /* LoRA: what its step must compute — the frozen weights' forward and
     * data gradient (twice the forward, not three times: no weight
     * gradient), the attention core's forward and backward (three times),
     * and the adapters' full training (six FLOPs a parameter and token);
     * the MFU of a LoRA plan is of these (mixture-of-experts and
     * multi-token prediction are refused with LoRA) */
    double core = 2.0 * S * H * (dqk + dv) * L;
    double adapters = L *
                      (double) sim_model_lora_params_per_layer (m, p->lora_rank, p->lora_targets);
    return (2.0 * (per_token - core) + 3.0 * core + 6.0 * adapters) * B * S;
  }
  /* each multi-token-prediction module: one more layer of the last
   * layer's kind, eh_proj (2h x h) and its output layer.  Megatron-Bridge
   * counts the same: its DeepSeek-V3 runs "w/ MTP" publish 0.2600 TFLOP
   * per token, those "w/o MTP" 0.2491-0.2497 (tests/validation/data/
   * moe_training.md), a difference of 10.3-10.9 GFLOP, and this adds 10.2
   * with the causal half of the attention Megatron-Bridge counts */
  if (p->mtp_layers > 0)
    per_token += (double) p->mtp_layers *
                 (2.0 * attention_matmul_weights (m) +
                  2.0 * (sim_model_layer_is_moe (m, m->layers) ? moe_mlp
                                                               : per_mlp * h * (double) m->ffn_hidden) +
                  2.0 * S * H * (dqk + dv) + 2.0 * 2.0 * h * h + 2.0 * h * V);
  return 3.0 * per_token * B * S;
}

double
sim_cost_mfu (const SimModel *m, const SimPlan *p, const SimGpuType *g, double step_s)
{
  return sim_cost_model_flop (m, p) / (step_s * sim_plan_world_size (p) * bf16_peak (g));
}

double
sim_cost_narayanan_flop (const SimModel *m, guint64 B, guint64 s, gboolean full)
{
  double h = m->hidden, L = m->layers, V = m->vocab, S = (double) s;
  if (full)
    return 96.0 * B * S * L * h * h * (1 + S / (6 * h) + V / (16 * L * h));
  return 72.0 * B * S * L * h * h * (1 + S / (6 * h) + V / (12 * L * h));
}
