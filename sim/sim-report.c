/* sim-report.c — text and JSON views of a run */
#include "sim-report.h"

#include "sim-schedule.h"

#include <math.h>
#include <string.h>

#include "sim-activation.h"
#include "sim-format.h"
#include "sim-json.h"

#ifndef SIM_VERSION
#define SIM_VERSION "0"
#endif

static const char *
case_explanation (SimOomCase c)
{
  /* the course notes' table of the three kinds of "does not fit"
   * (docs/course-notes/000, 9.1.5) */
  switch (c) {
  case SIM_OOM_A:
    return "case A, model states alone exceed the usable memory: shard them (ZeRO/FSDP, more "
           "TP or PP) or shrink them (8-bit optimizer); smaller micro-batches and recomputation "
           "cannot help";
  case SIM_OOM_B:
    return "case B, the model states fit but the activations do not: keep fewer tokens in flight "
           "(smaller micro-batch with gradient accumulation, recomputation, sequence or context "
           "parallelism); sharding states only helps by freeing room";
  case SIM_OOM_C:
    return "case C, a single layer with one micro-batch does not fit: only splitting inside the "
           "layer helps (tensor or context parallelism); ZeRO and pipelining work a whole layer "
           "at a time";
  case SIM_OOM_NONE:
    break;
  }
  return "";
}

/* the narrow report fits a 100-column terminal; the wide one (--wide) keeps
 * each table row and each sentence of the time section on one line */
#define REPORT_COLUMNS 100

/* text after a 10-column label, continuation lines indented 10 */
static void
append_wrapped (GString *s, const char *text)
{
  sim_format_append_wrapped (s, text, 10, 10, REPORT_COLUMNS);
}

/* a line that starts in column 0 with a 10-column label ("Time      "),
 * wrapped unless wide; ends with a newline */
static void
append_line (GString *s, gboolean wide, const char *label, const char *text)
{
  g_string_append (s, label);
  if (wide)
    g_string_append (s, text);
  else
    append_wrapped (s, text);
  g_string_append_c (s, '\n');
}

static char *
gb (guint64 b)
{
  return g_strdup_printf ("%.2f", (double) b / 1e9);
}

char *
sim_report_remedy_text (const SimRemedy *r)
{
  g_autofree char *gb = sim_format_gb (r->peak_bytes);
  g_autofree char *gib = sim_format_gib (r->peak_bytes);
  g_autofree char *tok = r->has_time ? sim_format_count ((guint64) llround (r->tokens_per_s)) : NULL;
  /* what it costs: the step and how much longer a token takes to train
   * (so the days to train) than the plan would if memory allowed */
  g_autofree char *cost = r->has_time ? g_strdup_printf ("; step %.3f s, %s tokens/s, %+.1f%% days to train",
                                                         r->step_s, tok, 100 * r->time_change)
                                      : g_strdup ("");
  g_autofree char *outcome = g_strdup_printf ("peak %s (%s) on stage %d, %s%s", gb, gib, r->peak_stage,
                                              !r->fits   ? "still out of memory"
                                              : r->tight ? "fits only without the fragmentation allowance"
                                                         : "fits",
                                              cost);
  if (r->together)
    return g_strdup_printf ("together: %s: %s", r->flags, outcome);
  return g_strdup_printf ("%-24s %s: %s", r->flags, r->why, outcome);
}

char *
sim_report_fastest_fit_text (const SimRun *run)
{
  const SimFastestFit *f = run->fastest_fit;
  int gpus = sim_topology_n_gpus (run->topo);
  g_autofree char *layouts = NULL;
  g_autofree char *gb = NULL, *gib = NULL, *tok = NULL, *change = NULL;
  if (f == NULL && run->search_skipped)
    return g_strdup_printf ("not searched: finding the fastest layout of this job that fits on these %d "
                            "GPUs takes a minute or more beyond %d GPUs; --search finds it (as sim sweep "
                            "--top 1)", gpus, SIM_RUN_SEARCH_MAX_GPUS);
  if (f == NULL)
    return NULL;
  layouts = sim_format_count ((guint64) f->layouts);
  if (f->row == NULL)
    return g_strdup_printf ("no layout of this job fits on these %d GPUs (%s layouts tried, as sim sweep "
                            "--top 1): more GPUs, a smaller global batch or a smaller model",
                            gpus, layouts);
  gb = sim_format_gb (f->row->peak_bytes);
  gib = sim_format_gib (f->row->peak_bytes);
  tok = sim_format_count ((guint64) llround (f->row->tokens_per_s));
  change = isnan (f->time_change) ? g_strdup ("")
                                  : g_strdup_printf (", %+.1f%% days to train", 100 * f->time_change);
  return g_strdup_printf ("the fastest layout of this job that fits on these %d GPUs (sim sweep --top 1; "
                          "%d of %s layouts simulated): %s: step %.3f s, %s tokens/s%s, peak %s (%s)",
                          gpus, f->simulated, layouts, f->flags, f->row->step_s, tok, change, gb, gib);
}

/* what the report reads of a run, the diagnosis made once */
typedef struct {
  const SimTopology *topo;
  const SimModel *model;
  const SimPlan *plan;
  const SimMemory *memory;
  GPtrArray *remedies;
  const SimIteration *time;
  GPtrArray *diagnosis;
  const char *wall;
} Input;

static void
input_init (Input *in, const SimRun *run)
{
  in->topo = run->topo;
  in->model = run->model;
  in->plan = run->plan;
  in->memory = run->memory;
  in->remedies = run->remedies;
  in->time = run->time;
  in->diagnosis = sim_run_diagnose (run, NULL);
  in->wall = sim_run_wall (run);
}

static void
input_clear (Input *in)
{
  g_clear_pointer (&in->diagnosis, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Input, input_clear)

/* a GPU type without measured rates gives an optimistic bound: say so first */
static void
text_warnings (GString *s, const SimTopology *t)
{
  const SimGpuType *g = sim_topology_gpu_type (t, 0);
  if (g->gemm == NULL || g->gemm->len == 0)
    g_string_append_printf (s, "WARNING   %s has no measured GEMM table: every GEMM is timed at the data-sheet\n"
                               "          peak, so the step time is a lower bound (add a <gemm> table or --calibration)\n",
                            g->id);
  if (!g->eff.given)
    g_string_append_printf (s, "WARNING   %s has no <efficiency> constants: kernels run at the benchmark clock and\n"
                               "          the data-sheet HBM bandwidth with no per-kernel cost, an optimistic bound\n",
                            g->id);
  if (g->gemm == NULL || g->gemm->len == 0 || !g->eff.given)
    g_string_append_c (s, '\n');
}

static void
text_cluster (GString *s, const SimTopology *t)
{
  const SimGpuType *gpu = sim_topology_gpu_type (t, 0);

  g_string_append_printf (s, "Cluster   %d GPU%s: ", sim_topology_n_gpus (t),
                          sim_topology_n_gpus (t) == 1 ? "" : "s");
  if (t->gpus_per_node > 0)
    g_string_append_printf (s, "%d node%s x %d %s\n", t->n_nodes, t->n_nodes == 1 ? "" : "s",
                            t->gpus_per_node, gpu->name);
  else
    g_string_append_printf (s, "%d nodes of %s\n", t->n_nodes, gpu->name);
  if (t->cluster.present) {
    g_autoptr (GString) line = g_string_new (t->cluster.node_name);
    if (t->cluster.nvlink_bw_bytes_per_s > 0)
      g_string_append_printf (line, ", NVLink %.0f GB/s per GPU per direction", t->cluster.nvlink_bw_bytes_per_s / 1e9);
    g_string_append_printf (line, ", %d x %.0f Gb/s %s per node, %s", t->cluster.nics_per_node,
                            t->cluster.nic_bw_bytes_per_s * 8 / 1e9, t->cluster.nic_name,
                            t->cluster.fabric_name);
    g_string_append (s, "          ");
    append_wrapped (s, line->str);
    g_string_append_c (s, '\n');
  }
}

static void
text_model (GString *s, const SimModel *m, const SimPlan *p, const SimMemory *mem, gboolean wide)
{
  g_autofree char *params = sim_format_billions (sim_model_param_count (m));
  g_autofree char *params_exact = sim_format_count (sim_model_param_count (m));
  g_autoptr (GString) line = g_string_new (NULL);

  g_autofree char *active = sim_model_is_moe (m) ? sim_format_billions (sim_model_param_count_active (m))
                                                 : NULL;
  g_string_append_printf (line, "%s: %s parameters (%s%s%s), %" G_GUINT64_FORMAT
                          " layers, hidden %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " heads",
                          m->name, params, params_exact, active != NULL ? "; active " : "",
                          active != NULL ? active : "", m->layers, m->hidden, m->heads);
  if (m->kv_heads != m->heads)
    g_string_append_printf (line, " (%" G_GUINT64_FORMAT " KV)", m->kv_heads);
  if (sim_model_is_moe (m)) {
    /* a mixture of experts: its experts, their width and routing, and the
     * dense layers' FFN where it has any */
    guint64 dense = m->layers - sim_model_moe_layers (m);
    if (dense > 0)
      g_string_append_printf (line, ", ffn %" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " dense layer%s",
                              m->ffn_hidden, dense, dense > 1 ? "s" : "");
    g_string_append_printf (line, ", %" G_GUINT64_FORMAT " experts of ffn %" G_GUINT64_FORMAT
                            " %s, top-%" G_GUINT64_FORMAT,
                            m->moe.experts, m->moe.ffn_hidden, sim_mlp_name (m->mlp), m->moe.top_k);
    if (m->moe.shared_experts > 0)
      g_string_append_printf (line, " + %" G_GUINT64_FORMAT " shared", m->moe.shared_experts);
    g_string_append_printf (line, ", vocab %" G_GUINT64_FORMAT, m->vocab);
  } else
    g_string_append_printf (line, ", ffn %" G_GUINT64_FORMAT " %s, vocab %" G_GUINT64_FORMAT,
                            m->ffn_hidden, sim_mlp_name (m->mlp), m->vocab);
  append_line (s, wide, "Model     ", line->str);
  if (p->lora_rank > 0) {
    g_autofree char *tr = sim_format_count (mem->trainable_params);
    g_string_append_printf (s, "          %s rank %" G_GUINT64_FORMAT ": %s trainable adapter parameters, frozen %s base\n",
                            p->qlora ? "QLoRA" : "LoRA", p->lora_rank, tr,
                            p->qlora ? "4-bit NF4" : "bf16");
  }
}

static void
text_plan (GString *s, const SimPlan *p, gboolean wide)
{
  g_autofree char *order = sim_plan_order_string (p);

  g_string_append_printf (s, "Plan      tp %d x cp %d x pp %d x dp %d = %d GPU%s, ranks placed %s (fastest first)\n",
                          p->tp, p->cp, p->pp, p->dp, sim_plan_world_size (p),
                          sim_plan_world_size (p) == 1 ? "" : "s", order);
  if (p->ep > 1 || p->etp > 1)
    /* experts split over the same GPUs of each stage, folded for them */
    g_string_append_printf (s, "          experts: etp %d x ep %d x edp %d over each stage's tp x cp x dp\n",
                            p->etp, p->ep, p->edp);
  {
    g_autofree char *line = g_strdup_printf ("seq %" G_GUINT64_FORMAT ", micro-batch %d, global batch %"
                                             G_GUINT64_FORMAT " = %" G_GUINT64_FORMAT " micro-batches per replica (%.2f M tokens per step)",
                                             p->seq_len, p->micro_batch, p->global_batch, p->micro_batches,
                                             (double) (p->global_batch * p->seq_len) / 1e6);
    append_line (s, wide, "          ", line);
  }
  {
    g_autoptr (GString) line = g_string_new (NULL);
    g_string_append_printf (line, "schedule %s", sim_schedule_name (p->schedule));
    if (p->schedule == SIM_SCHEDULE_INTERLEAVED)
      g_string_append_printf (line, " (%d virtual stages)", p->virtual_stages);
    else if (sim_schedule_is_v (p->schedule))
      g_string_append (line, " (two chunks per rank in a V: rank s holds chunks s and 2pp-1-s)");
    else if (p->schedule == SIM_SCHEDULE_DUALPIPE)
      g_string_append (line, " (two copies of the model: rank s holds block s of one and pp-1-s of "
                             "the other)");
    if (p->first_stage_layers > 0)
      g_string_append_printf (line, ", first stage %d layers", p->first_stage_layers);
    if (p->last_stage_layers > 0)
      g_string_append_printf (line, ", last stage %d layers", p->last_stage_layers);
    if (p->layout != NULL)
      g_string_append_printf (line, ", pipeline layout %s", p->layout->text);
    if (p->mtp_layers > 0)
      g_string_append_printf (line, ", multi-token prediction %d layer%s (+m) on the last stage",
                              p->mtp_layers, p->mtp_layers > 1 ? "s" : "");
    if (p->embedding_in_split || p->loss_in_split)
      g_string_append_printf (line, ", %s counted as a layer in the pipeline split",
                              p->embedding_in_split && p->loss_in_split ? "embedding and loss each"
                              : p->embedding_in_split                  ? "embedding"
                                                                       : "loss");
    {
      g_autofree char *mods = sim_recompute_modules_string (p->recompute_modules, ", ");
      g_autofree char *method = sim_plan_recompute_method_string (p);
      g_string_append_printf (line, ", recompute %s%s%s%s%s", sim_recompute_name (p->recompute),
                              *mods ? " (" : "", mods, *mods ? ")" : "", method);
    }
    g_string_append_printf (line, ", flash attention %s, sequence parallel %s, ZeRO %d, recipe %s",
                            !p->flash_attention                                ? "off"
                            : p->attention_kernel == SIM_ATTENTION_CUDNN  ? "on (cuDNN's kernel)"
                            : p->attention_kernel == SIM_ATTENTION_FLASH2 ? "on (FlashAttention-2)"
                                                                          : "on",
                            p->sequence_parallel ? "on" : "off", p->zero, sim_recipe_name (p->recipe));
    append_line (s, wide, "          ", line->str);
  }
  if (p->fp8 != SIM_FP8_OFF)
    g_string_append_printf (s, "          FP8 %s linear layers%s\n", sim_fp8_name (p->fp8),
                            p->fp8_params > 0 ? ", weights in FP8" : "");
  if (p->fp4 != SIM_FP4_OFF)
    g_string_append (s, "          NVFP4 linear layers (FP4 E2M1, an E4M3 scale per 16 values), "
                        "weights in BF16\n");
  if (p->cpu_offload_layers > 0) {
    g_autofree char *line = g_strdup_printf (
        "CPU offloading: the saved activations of the first %d layer%s go to host memory in the "
        "forward and come back for the backward, beside the compute",
        p->cpu_offload_layers, p->cpu_offload_layers == 1 ? "" : "s");
    append_line (s, wide, "          ", line);
  }
  if (p->cuda_graph_impl != SIM_CUDA_GRAPH_NONE) {
    g_autofree char *scope = sim_cuda_graph_scope_string (p->cuda_graph_scope, ", ");
    g_autofree char *line = g_strdup_printf ("CUDA graphs (%s) capture %s: one host launch per "
                                             "graph and pass; recomputation runs eager",
                                             sim_cuda_graph_impl_name (p->cuda_graph_impl), scope);
    append_line (s, wide, "          ", line);
  }
  if (p->defaults->len > 0) {
    /* one paragraph, wrapped at about 100 columns */
    gsize line_start = s->len;
    g_string_append (s, "Defaults  ");
    for (guint i = 0; i < p->defaults->len; i++) {
      const char *d = g_ptr_array_index (p->defaults, i);
      /* "; " before it and the ";" that may follow it */
      if (i > 0 && s->len - line_start + strlen (d) + 3 > REPORT_COLUMNS) {
        g_string_append (s, ";\n          ");
        line_start = s->len - 10;
      } else if (i > 0) {
        g_string_append (s, "; ");
      }
      if (!wide && s->len - line_start + strlen (d) > REPORT_COLUMNS) {
        /* one default longer than a line */
        const char *nl = NULL;
        sim_format_append_wrapped (s, d, (int) (s->len - line_start), 10, REPORT_COLUMNS);
        nl = strrchr (s->str + line_start, '\n');
        if (nl != NULL)
          line_start = (gsize) (nl - s->str) + 1;
        continue;
      }
      g_string_append (s, d);
    }
    g_string_append_c (s, '\n');
  }
}

/* fits FALSE: the plan is out of memory, so the time is what the step
 * would take if memory allowed; the efficiency figures (TFLOP/s, MFU, HFU)
 * are left out there, since they describe a run that cannot happen and are
 * the numbers most often quoted out of context */
static void
text_time (GString *s, const SimIteration *it, const SimTopology *t, const SimPlan *p, const SimErrorBand *band,
           gboolean fits, gboolean wide)
{
  g_autofree char *tok = sim_format_count ((guint64) llround (it->tokens_per_s));
  /* the step's range in its error band (sim_run_error_band), on a line of
   * its own under the step's */
  const char *basis = g_str_equal (band->basis, "moe")    ? "published mixture-of-experts runs"
                      : g_str_equal (band->basis, "fsdp") ? "published PyTorch FSDP runs"
                      : g_str_equal (band->basis, "torchtitan") ? "published torchtitan runs"
                      : g_str_equal (band->basis, "heldout") ? "published runs no fit saw"
                                                             : "the fitted runs";
  g_autofree char *range = band->error > 0 ? g_strdup_printf ("range %.3f-%.3f s: the step +/-%.1f%%, its mean error on %s",
                                                              it->step_s * (1 - band->error),
                                                              it->step_s * (1 + band->error), 100 * band->error,
                                                              basis)
                                           : NULL;

  /* MFU and HFU of the peak of the precision the linear layers run at
   * (sim_run_mfu_gemm_peak), and of the BF16 peak beside it for a
   * quantized plan, where BF16 plans are compared with it */
  const char *precision = NULL;
  double m = sim_run_mfu_gemm_peak (t, p, it->mfu, &precision);
  double h = it->mfu > 0 ? m * it->hfu / it->mfu : 0;
  if (fits && !g_str_equal (precision, "bf16")) {
    g_autofree char *line = g_strdup_printf ("step %.3f s: %s tokens/s, %.0f TFLOP/s per GPU (hardware %.0f)",
                                             it->step_s, tok, it->model_tflops_per_gpu, it->hardware_tflops_per_gpu);
    g_autofree char *bf16 = g_strdup_printf ("MFU %.1f%%, HFU %.1f%% of the %s peak; of the BF16 peak MFU %.1f%%, HFU %.1f%%",
                                             100 * m, 100 * h, g_str_equal (precision, "fp4") ? "dense FP4" : "FP8",
                                             100 * it->mfu, 100 * it->hfu);
    append_line (s, wide, "\nTime      ", line);
    append_line (s, wide, "          ", bf16);
  } else if (fits) {
    g_autofree char *line = g_strdup_printf ("step %.3f s: %s tokens/s, %.0f TFLOP/s per GPU (hardware %.0f), MFU %.1f%%, HFU %.1f%%",
                                             it->step_s, tok, it->model_tflops_per_gpu, it->hardware_tflops_per_gpu,
                                             100 * it->mfu, 100 * it->hfu);
    append_line (s, wide, "\nTime      ", line);
  }
  if (fits && range != NULL)
    append_line (s, wide, "          ", range);
  if (!fits)
    g_string_append_printf (s, "\nTime      IF MEMORY ALLOWED (it does not: see the verdict above): step %.3f s, %s tokens/s;\n"
                               "          no MFU is given for a plan that cannot run\n",
                            it->step_s, tok);
}

/* The side sim errs on over a set of published runs: "mostly" when the
 * mean signed error is more than half the mean |error|, i.e. the rows on
 * that side outweigh the others three to one or more; then what to expect
 * of the step ("" on both sides). */
static const char *
band_side (const SimBand *band, const char **expect)
{
  if (band->bias < -band->error / 2) {
    *expect = ": expect a longer step";
    return "mostly optimistic";
  }
  if (band->bias > band->error / 2) {
    *expect = ": expect a shorter step";
    return "mostly pessimistic";
  }
  *expect = "";
  return "on both sides";
}

/* a dense band's side where its band states its bias and sim errs mostly
 * one way (", mostly pessimistic (mean +4.2%): expect a shorter step"),
 * else "" */
static char *
dense_band_side (const SimBand *band)
{
  const char *expect, *side = band_side (band, &expect);
  if (!band->has_bias || *expect == '\0')
    return g_strdup ("");
  return g_strdup_printf (", %s (mean %+.1f%%)%s", side, 100 * band->bias, expect);
}

/* how far the step time is validated: the mean error of the cluster's
 * efficiency constants on published runs, and which way it errs where
 * the band file says, or that there is none */
char *
sim_report_error_band_sentence (const SimTopology *t)
{
  const SimEfficiency *eff = &sim_topology_gpu_type (t, 0)->eff;

  if (eff->bands.heldout.error > 0 && eff->bands.fitted.error > 0) {
    g_autofree char *side = dense_band_side (&eff->bands.heldout);
    return g_strdup_printf (
        "error band +/-%.1f%%: mean step-time error on %" G_GUINT64_FORMAT
        " published runs of this GPU generation that no fit saw%s (+/-%.1f%% on %" G_GUINT64_FORMAT
        " fitted runs, each predicted with its model family left out)",
        100 * eff->bands.heldout.error, eff->bands.heldout.rows, side, 100 * eff->bands.fitted.error,
        eff->bands.fitted.rows);
  }
  if (eff->bands.fitted.error > 0) {
    g_autofree char *side = dense_band_side (&eff->bands.fitted);
    return g_strdup_printf (
        "error band +/-%.1f%%: mean step-time error on %" G_GUINT64_FORMAT
        " published runs of this GPU generation, each predicted with constants that were not "
        "fitted to it%s",
        100 * eff->bands.fitted.error, eff->bands.fitted.rows, side);
  }
  return g_strdup (
      "error band: NOT VALIDATED for this GPU generation (its cluster file states no error from "
      "published runs): read the step time as an estimate");
}

GPtrArray *
sim_report_band_sentences (const SimTopology *t, const SimModel *m, const SimPlan *p)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  char *framework = sim_report_framework_band_sentence (t, p);
  gboolean moe = sim_model_is_moe (m);
  if (!moe || sim_topology_gpu_type (t, 0)->eff.bands.moe.rows == 0)
    g_ptr_array_add (out, sim_report_error_band_sentence (t));
  if (moe)
    g_ptr_array_add (out, sim_report_moe_band_sentence (t));
  if (framework != NULL)
    g_ptr_array_add (out, framework);
  return out;
}


/* How a set of published runs of this generation was predicted: on how
 * many, the mean |error|, how many within 15 %, and the side sim errs on
 * (band_side). */
static char *
published_band (const char *what, const char *runs, const char *which, const SimBand *band,
                const char *test)
{
  const char *expect, *side = band_side (band, &expect);
  return g_strdup_printf ("%s: on %" G_GUINT64_FORMAT " %s of this GPU generation%s "
                          "the step time was off by %.1f%% on average, %" G_GUINT64_FORMAT
                          " of them within 15%%, %s "
                          "(mean %+.1f%%)%s (meson test %s prints the table)",
                          what, band->rows, runs, which, 100 * band->error, band->within, side,
                          100 * band->bias, expect, test);
}

/* The band above comes from dense runs; a mixture-of-experts plan also
 * gets how this generation's published MoE runs were predicted
 * (tests/validation/data/moe_training.csv, tools/moe-check.py). */
char *
sim_report_moe_band_sentence (const SimTopology *t)
{
  const SimEfficiency *eff = &sim_topology_gpu_type (t, 0)->eff;

  if (eff->bands.moe.rows == 0)
    return g_strdup (
        "mixture-of-experts layers: the band is of dense runs, and no published MoE run of this "
        "GPU generation has been predicted: read this step time as an estimate");
  return published_band ("mixture-of-experts layers", "published MoE runs", "", &eff->bands.moe,
                         "validation-moe");
}

/* The band above comes from the runs the constants were fitted on; where
 * those are Megatron's and the cluster file also states how this
 * generation's published PyTorch FSDP runs were predicted
 * (tests/validation/data/mosaic_h100_heldout.csv, tools/fsdp-check.py), a
 * --framework fsdp plan gets that too; NULL for any other plan or file. */
char *
sim_report_framework_band_sentence (const SimTopology *t, const SimPlan *p)
{
  const SimEfficiency *eff = &sim_topology_gpu_type (t, 0)->eff;

  if (p->framework == SIM_FRAMEWORK_TORCHTITAN && eff->bands.torchtitan.rows > 0)
    return published_band ("PyTorch-native torchtitan (--framework torchtitan)", "published torchtitan runs",
                           " that no fit saw,", &eff->bands.torchtitan, "validation-pytorch-native");
  if (p->framework != SIM_FRAMEWORK_FSDP || eff->bands.fsdp.rows == 0)
    return NULL;
  return published_band ("PyTorch FSDP (--framework fsdp)", "published FSDP runs",
                         " that no fit saw,", &eff->bands.fsdp, "validation-fsdp");
}

/* What the spread of GPU speeds adds to the step (SimVariability); NULL
 * when the run was not simulated.  The sentence says the spread and its
 * source, and how to see a uniform cluster. */
char *
sim_report_variability_sentence (const SimRun *run)
{
  SimVariability v;
  g_autofree char *gpus = NULL;
  double base;
  if (!sim_run_variability (run, &v))
    return NULL;
  gpus = sim_format_count ((guint64) v.gpus);
  if (!(v.slowdown > 0))
    return g_strdup_printf ("variability: none modelled at %s GPU%s (--gpu-variation %g%%: a "
                            "uniform cluster%s)", gpus, v.gpus == 1 ? "" : "s", 100 * v.sigma,
                            v.gpus == 1 ? "" : ", where no GPU waits for a slower one");
  base = run->time->step_s - v.added_s;
  return g_strdup_printf ("variability: +%.3f s (+%.1f%%) at %s GPUs: every step waits for the "
                          "slowest of them, whose compute takes %.1f%% longer than nominal (GPU "
                          "speeds spread %.1f%%, Sinha et al. SC22; --gpu-variation 0 for a "
                          "uniform cluster)",
                          v.added_s, 100 * v.added_s / base, gpus, 100 * v.slowdown, 100 * v.sigma);
}

/* The straggler what-if (--slow-gpu, --slow-node, --slow-link): each slow
 * GPU's or link's stage and replica, the step against the same plan with
 * none slow, and who waits: the slow GPU's TP group at each of its TP
 * collectives, the other stages on its pipeline sends (the stage that
 * idles longest named), the other replicas at the gradient reduction;
 * with slow links, the communication each kind exposes beyond the plan's
 * with none slow.  NULL without slow GPUs or links, or a time. */
char *
sim_report_straggler_sentence (const SimRun *run)
{
  const SimPlan *p = run->plan;
  const SimIteration *it = run->time;
  int g = run->topo->gpus_per_node, worst = -1;
  double worst_bubble = 0, base = run->straggler_base_step_s;
  GString *s;
  gboolean *slow_stage;
  if ((p->n_slow == 0 && p->n_slow_links == 0) || it == NULL || !(base > 0))
    return NULL;
  slow_stage = g_new0 (gboolean, p->pp);
  s = g_string_new ("straggler what-if: ");
  for (int i = 0; i < p->n_slow; i++) {
    const SimSlow *x = &p->slow[i];
    g_autofree char *name = sim_plan_slow_name (p, g, i);
    int first, last, lo = G_MAXINT, hi = -1, c[SIM_DIM_COUNT];
    sim_plan_slow_ranks (p, g, i, &first, &last);
    for (int r = first; r <= last; r++) {
      sim_plan_rank_coords (p, r, c);
      lo = MIN (lo, c[SIM_DIM_PP]), hi = MAX (hi, c[SIM_DIM_PP]);
      slow_stage[c[SIM_DIM_PP]] = TRUE;
    }
    sim_plan_rank_coords (p, first, c);
    if (lo == hi)
      g_string_append_printf (s, "%s%s (stage %d, replica %d) computes %.2fx", i ? "; " : "",
                              name, lo, c[SIM_DIM_DP], x->factor);
    else
      g_string_append_printf (s, "%s%s (stages %d-%d) computes %.2fx", i ? "; " : "", name, lo,
                              hi, x->factor);
  }
  if (p->n_slow > 0)
    g_string_append (s, " the nominal time");
  for (int i = 0; i < p->n_slow_links; i++) {
    g_autofree char *name = sim_plan_slow_link_name (p, i);
    int c[SIM_DIM_COUNT];
    sim_plan_rank_coords (p, p->slow_links[i].rank, c);
    slow_stage[c[SIM_DIM_PP]] = TRUE;
    g_string_append_printf (s, "%s%s (stage %d, replica %d) carries 1/%.2f of its bandwidth",
                            p->n_slow > 0 || i > 0 ? "; " : "", name, c[SIM_DIM_PP], c[SIM_DIM_DP],
                            p->slow_links[i].factor);
  }
  for (guint i = 0; i < it->stages->len; i++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, i);
    if (!slow_stage[st->stage] && st->bubble_s > worst_bubble)
      worst_bubble = st->bubble_s, worst = st->stage;
  }
  g_string_append_printf (s, ": step %.3f s with none slow -> %.3f s (%+.1f%%)", base, it->step_s,
                          100 * (it->step_s / base - 1));
  if (p->n_slow_links > 0 && run->straggler_base != NULL) {
    g_autofree char *added = sim_run_exposed_added_text (run);
    g_string_append_printf (s, "; exposed communication beyond none slow: %s", added);
  }
  /* a slow GPU: who waits for its compute (a slow link's waits are the
   * exposed times above) */
  if (p->n_slow > 0 && p->tp * p->cp > 1)
    g_string_append (s, "; its TP group waits for it at every TP collective");
  if (p->n_slow > 0 && worst >= 0)
    g_string_append_printf (s, "; the other stages wait on its pipeline sends (stage %d idles "
                               "%.3f s a step)", worst, worst_bubble);
  if (p->n_slow > 0 && p->dp > 2)
    g_string_append_printf (s, "; the other %d data-parallel replicas wait for it at the gradient "
                               "reduction", p->dp - 1);
  else if (p->n_slow > 0 && p->dp == 2)
    g_string_append (s, "; the other data-parallel replica waits for it at the gradient reduction");
  g_free (slow_stage);
  return g_string_free (s, FALSE);
}

/* under the bands, wrapped at 100 columns even with --wide, as they are */
static void
text_variability (GString *s, const SimRun *run)
{
  g_autofree char *v = sim_report_variability_sentence (run);
  g_autofree char *x = sim_report_straggler_sentence (run);
  if (v != NULL)
    append_line (s, FALSE, "          ", v);
  if (x != NULL)
    append_line (s, FALSE, "          ", x);
}


/* the seconds per step of each stage; the exposed CP column only with
 * context parallelism or for a dense model (whose table keeps its shape),
 * the exposed EP column only for a mixture-of-experts model */
static void
text_stage_table (GString *s, const SimIteration *it, gboolean moe, int cp, gboolean wide)
{
  gboolean show_cp = cp > 1 || !moe;
  /* both CP and EP columns: one column narrower each, to stay in 100 */
  const int w = wide ? 8 : show_cp && moe ? 6 : 7;
  const char *tag = w == 6 ? " exp" : " exp.";
  g_autofree char *tp_h = g_strconcat ("TP", tag, NULL), *cp_h = g_strconcat ("CP", tag, NULL);
  g_autofree char *pp_h = g_strconcat ("PP", tag, NULL), *dp_h = g_strconcat ("DP", tag, NULL);
  g_autofree char *ep_h = g_strconcat ("EP", tag, NULL);
  if (!wide)
    g_string_append (s, "  seconds per step, by pipeline stage; exp.: communication not hidden behind compute\n");
  g_string_append_printf (s, "  stage   forward  backward  recompute  optimizer  %*s", w, tp_h);
  if (show_cp)
    g_string_append_printf (s, "  %*s", w, cp_h);
  g_string_append_printf (s, "  %*s  %*s", w, pp_h, w, dp_h);
  if (moe)
    g_string_append_printf (s, "  %*s", w, ep_h);
  g_string_append (s, wide ? "    bubble   (seconds per step)\n" : "    bubble\n");
  for (guint i = 0; i < it->stages->len; i++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, i);
    g_string_append_printf (s, "  %5d  %8.3f  %8.3f  %9.3f  %9.3f  %*.3f", st->stage, st->forward_s,
                            st->backward_s, st->recompute_s, st->optimizer_s, w, st->exposed_tp_s);
    if (show_cp)
      g_string_append_printf (s, "  %*.3f", w, st->exposed_cp_s);
    g_string_append_printf (s, "  %*.3f  %*.3f", w, st->exposed_pp_s, w, st->exposed_dp_s);
    if (moe)
      g_string_append_printf (s, "  %*.3f", w, st->exposed_ep_s);
    g_string_append_printf (s, "  %8.3f\n", st->bubble_s);
  }
  /* the mean of the stages: the exposed communication the JSON's
   * time.exposed_comm_s, the Gantt chart's subtitle and sim compare give */
  if (it->stages->len > 1) {
    double f = 0, b = 0, r = 0, o = 0, idle = 0;
    for (guint i = 0; i < it->stages->len; i++) {
      const SimStageTime *st = &g_array_index (it->stages, SimStageTime, i);
      f += st->forward_s, b += st->backward_s, r += st->recompute_s, o += st->optimizer_s;
      idle += st->bubble_s;
    }
    f /= it->stages->len, b /= it->stages->len, r /= it->stages->len, o /= it->stages->len;
    idle /= it->stages->len;
    g_string_append_printf (s, "   mean  %8.3f  %8.3f  %9.3f  %9.3f  %*.3f", f, b, r, o, w, it->exposed_tp_s);
    if (show_cp)
      g_string_append_printf (s, "  %*.3f", w, it->exposed_cp_s);
    g_string_append_printf (s, "  %*.3f  %*.3f", w, it->exposed_pp_s, w, it->exposed_dp_s);
    if (moe)
      g_string_append_printf (s, "  %*.3f", w, it->exposed_ep_s);
    g_string_append_printf (s, "  %8.3f\n", idle);
  }
}

/* what was simulated, and the seconds per step of each stage */
static void
text_time_detail (GString *s, const SimIteration *it, gboolean moe, int cp, gboolean wide)
{
  const guint64 *sm = it->steady_micro_batches;
  g_autofree char *steady =
      sm[0] > 0 ? g_strdup_printf (", the steady state from runs of %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                                   " and %" G_GUINT64_FORMAT " micro-batches (--exact: all of them)",
                                   sm[0], sm[1], sm[2])
                : g_strdup ("");
  g_autofree char *line = g_strdup_printf ("pipeline bubble %.1f%% of the step; simulated %s%s, %u activities, %" G_GUINT64_FORMAT " events%s",
                                           100 * it->bubble_fraction,
                                           it->dp_mirrored ? "one data-parallel replica and one TP rank's gradient traffic (the others are identical)"
                                           : it->symmetric ? "one data-parallel replica (the others are identical)" : "every replica",
                                           steady, it->activities, it->events,
                                           it->gemm_table ? "" : "; no measured GEMM table: GEMMs at peak (optimistic)");

  append_line (s, wide, "          ", line);
  text_stage_table (s, it, moe, cp, wide);
}

static void
text_critical_path (GString *s, const SimIteration *it)
{
  g_autoptr (GString) cp = g_string_new (NULL);

  for (int k = 0; k < SIM_SPAN_GATE; k++)
    if (it->critical_s[k] > 0)
      g_string_append_printf (cp, "%s%s %.3fs", cp->len ? ", " : "", sim_span_kind_name (k), it->critical_s[k]);
  g_string_append (s, "  critical path: ");
  sim_format_append_wrapped (s, cp->str, 17, 4, REPORT_COLUMNS);
  g_string_append_c (s, '\n');
}

static void
text_memory_table (GString *s, const SimModel *m, const SimPlan *p, const SimMemory *mem,
                   gboolean timed, gboolean wide)
{
  g_string_append (s, "\nMemory per GPU by pipeline stage, in GB (10^9 bytes)");
  if (wide) {
    g_string_append (s, "; GiB = 2^30 bytes");
    g_string_append (s, timed ? "; activations read off the simulated timeline\n" : "\n");
    g_string_append (s, "  stage  layers    params   grads  master   optim   accum  buffers  act/layer  in flight  activations  peak GB  peak GiB\n");
  } else {
    /* the peak in GiB is in the verdict below; --wide adds its column */
    g_string_append (s, timed ? "; activations read off the simulated timeline;\n" : ";\n");
    g_string_append (s, "  act/lyr: activations per layer and micro-batch; flight: micro-batches held at the peak;\n"
                        "  acts: activations at the peak\n");
    g_string_append (s, "  stage  layers   params  grads master  optim  accum buffers act/lyr   flight    acts peak GB\n");
  }
  for (guint i = 0; i < mem->stages->len; i++) {
    const SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, i);
    g_autofree char *c1 = gb (st->params_bytes), *c2 = gb (st->grads_bytes);
    g_autofree char *c3 = gb (st->master_bytes), *c4 = gb (st->optimizer_bytes);
    g_autofree char *c5 = gb (st->grad_accum_bytes), *c6 = gb (st->buffer_bytes);
    g_autofree char *c7 = g_strdup_printf ("%.3f", (double) st->activation_bytes_per_layer / 1e9);
    g_autofree char *c8 = gb (st->activations_peak_bytes), *c9 = gb (st->peak_bytes);
    g_autofree char *range = NULL;
    g_autofree char *flight = NULL;
    guint64 first = sim_plan_stage_first_layer (p, m, st->stage);
    if (p->virtual_stages > 1)
      range = g_strdup_printf ("%" G_GUINT64_FORMAT " in %d", st->layers, p->virtual_stages);
    else {
      /* the last stage's multi-token-prediction layers: "+m" (Megatron's
       * letter for them), each a layer of st->layers */
      guint64 mtp = sim_plan_chunk_mtp_layers (p, st->stage, p->virtual_stages - 1);
      guint64 n = st->layers - mtp;
      if (n == 0)
        range = g_strdup (mtp > 0 ? "m" : "-");
      else if (n == 1)
        range = g_strdup_printf ("%" G_GUINT64_FORMAT "%s", first, mtp > 0 ? "+m" : "");
      else
        range = g_strdup_printf ("%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT "%s", first, first + n - 1,
                                 mtp > 0 ? "+m" : "");
    }
    if (p->virtual_stages > 1)
      flight = g_strdup_printf ("%.2f mb", st->in_flight_micro_batches);
    else
      flight = g_strdup_printf ("%" G_GUINT64_FORMAT " mb", st->in_flight_chunks);
    if (wide)
      g_string_append_printf (s, "  %5d  %-7s %8s %7s %7s %7s %7s %8s %10s %10s %12s %8s %9.2f%s\n",
                              st->stage, range, c1, c2, c3, c4, c5, c6, c7, flight, c8, c9,
                              (double) st->peak_bytes / 1073741824.0,
                              st->stage == mem->peak_stage ? " <- peak" : "");
    else
      g_string_append_printf (s, "  %5d  %-7s %6s %6s %6s %6s %6s %7s %7s %8s %7s %7s%s\n",
                              st->stage, range, c1, c2, c3, c4, c5, c6, c7, flight, c8, c9,
                              st->stage == mem->peak_stage ? " <- peak" : "");
  }
}

static void
text_capacity (GString *s, const SimGpuType *gpu, const SimMemory *mem, gboolean wide)
{
  g_autofree char *lab_gib = sim_format_gib (mem->hbm_capacity_bytes);
  g_autofree char *lab_gb = sim_format_gb (mem->hbm_capacity_bytes);
  g_autofree char *vis_gb = sim_format_gb (mem->capacity_bytes);
  g_autofree char *vis_gib = sim_format_gib (mem->capacity_bytes);
  g_autofree char *ctx = sim_format_gb (mem->context_reserve_bytes);
  g_autofree char *frag = sim_format_gb (mem->fragmentation_bytes);
  g_autofree char *use_gb = sim_format_gb (mem->usable_bytes);
  g_autofree char *use_gib = sim_format_gib (mem->usable_bytes);

  {
    g_autofree char *line = g_strdup_printf ("%s: %s (%s) of HBM; the driver exposes %s (%s)",
                                             gpu->name, lab_gib, lab_gb, vis_gb, vis_gib);
    append_line (s, wide, "\nCapacity  ", line);
  }
  {
    g_autofree char *line = g_strdup_printf ("- %s CUDA context and workspaces - %s fragmentation allowance (%.0f%%) = usable %s (%s)",
                                             ctx, frag, mem->fragmentation * 100, use_gb, use_gib);
    append_line (s, wide, "          ", line);
  }
}

/* why the plan does not fit: the case, and for case C the layer that alone is too big */
static void
text_oom_why (GString *s, const SimMemory *mem)
{
  g_autoptr (GString) why = g_string_new (case_explanation (mem->oom_case));

  if (mem->oom_case == SIM_OOM_C) {
    const SimStageMemory *worst = NULL;
    for (guint i = 0; i < mem->stages->len; i++) {
      const SimStageMemory *x = &g_array_index (mem->stages, SimStageMemory, i);
      if (worst == NULL || x->largest_layer_states_bytes + x->largest_layer_activation_bytes >
                               worst->largest_layer_states_bytes + worst->largest_layer_activation_bytes)
        worst = x;
    }
    {
      g_autofree char *ls = sim_format_gb (worst->largest_layer_states_bytes);
      g_autofree char *la = sim_format_gb (worst->largest_layer_activation_bytes);
      g_string_append_printf (why, "; %s on stage %d alone needs %s of states + %s of activations per sequence",
                              worst->largest_layer_name, worst->stage, ls, la);
    }
  }
  g_string_append (s, "          ");
  append_wrapped (s, why->str);
  g_string_append (s, "\n");
}

/* a line of the verdict after its 10-column heading: whole with --wide,
 * else wrapped at REPORT_COLUMNS with its continuation lines indented */
static void
append_entry (GString *s, const char *heading, const char *text, int indent, gboolean wide)
{
  g_string_append (s, heading);
  if (wide)
    g_string_append (s, text);
  else
    sim_format_append_wrapped (s, text, 10, indent, REPORT_COLUMNS);
  g_string_append_c (s, '\n');
}

static void
text_verdict (GString *s, const SimRun *run, const SimMemory *mem, const GPtrArray *remedies,
              gboolean wide)
{
  g_autofree char *pk_gb = sim_format_gb (mem->peak_bytes);
  g_autofree char *pk_gib = sim_format_gib (mem->peak_bytes);

  if (mem->tight) {
    g_autofree char *over = sim_format_gb (mem->peak_bytes - mem->usable_bytes);
    g_autofree char *left = sim_format_gb (mem->capacity_bytes - mem->context_reserve_bytes - mem->peak_bytes);
    double room = (double) (mem->capacity_bytes - mem->context_reserve_bytes);
    g_string_append_printf (s, "Verdict   fits only without the fragmentation allowance: peak %s (%s) on stage %d is\n"
                               "          %s over usable, %s under what the CUDA context leaves: it runs if the\n"
                               "          allocator wastes less than %.1f%% of that (the allowance assumes %.0f%%;\n"
                               "          PyTorch's expandable segments waste less)\n",
                            pk_gb, pk_gib, mem->peak_stage, over, left,
                            100 * (room - (double) mem->peak_bytes) / room, 100 * mem->fragmentation);
  } else if (mem->fits) {
    g_autofree char *room = sim_format_gb (mem->usable_bytes - mem->peak_bytes);
    g_string_append_printf (s, "Verdict   fits: peak %s (%s) on stage %d is %.0f%% of usable; %s headroom\n",
                            pk_gb, pk_gib, mem->peak_stage,
                            100.0 * (double) mem->peak_bytes / (double) mem->usable_bytes, room);
  } else {
    const SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, mem->peak_stage);
    g_autofree char *over = sim_format_gb (mem->peak_bytes - mem->usable_bytes);
    g_autofree char *states = sim_format_gb (st->states_bytes);
    g_autofree char *acts = sim_format_gb (st->activations_peak_bytes);
    g_string_append_printf (s, "Verdict   OUT OF MEMORY: peak %s (%s) on stage %d is %s over usable\n",
                            pk_gb, pk_gib, mem->peak_stage, over);
    g_string_append_printf (s, "          (model states %s + activations %s)\n", states, acts);
    text_oom_why (s, mem);
    if (remedies != NULL && remedies->len > 0) {
      g_string_append (s, "Remedies  (each tried on this plan)\n");
      for (guint i = 0; i < remedies->len; i++) {
        g_autofree char *text = sim_report_remedy_text (g_ptr_array_index (remedies, i));
        append_entry (s, "          ", text, 12, wide);
      }
    } else {
      g_string_append (s, "Remedies  none of the usual plan changes helps on this cluster: more GPUs or a smaller model\n");
    }
    {
      g_autofree char *fit = sim_report_fastest_fit_text (run);
      if (fit != NULL)
        append_entry (s, "Instead   ", fit, 10, wide);
    }
  }
}

char *
sim_report_train_text (const SimRun *run)
{
  SimTrainEstimate t;
  g_autofree char *hours = NULL;
  char *text = NULL;
  if (!(run->train_tokens > 0))
    return NULL;
  if (!sim_run_train_estimate (run, run->train_tokens, run->gpu_hour_price, &t))
    return g_strdup ("no time to train: the plan was not simulated or does not fit");
  hours = sim_format_count ((guint64) llround (t.gpu_hours));
  if (t.band > 0) {
    /* each figure with its range from the step's error band */
    g_autofree char *hlo = sim_format_count ((guint64) llround (t.gpu_hours_lo));
    g_autofree char *hhi = sim_format_count ((guint64) llround (t.gpu_hours_hi));
    text = g_strdup_printf ("%.4g T tokens in %.1f days (%.1f-%.1f, the +/-%.1f%% band) on %d GPU%s = %s "
                            "GPU-hours (%s-%s)%s",
                            t.tokens / 1e12, t.days, t.days_lo, t.days_hi, 100 * t.band,
                            sim_plan_world_size (run->plan), sim_plan_world_size (run->plan) == 1 ? "" : "s", hours,
                            hlo, hhi, run->gpu_hour_price > 0 ? "" : " (--gpu-hour-price for the cost)");
  } else
    text = g_strdup_printf ("%.4g T tokens in %.1f days on %d GPU%s = %s GPU-hours%s", t.tokens / 1e12, t.days,
                            sim_plan_world_size (run->plan), sim_plan_world_size (run->plan) == 1 ? "" : "s",
                            hours, run->gpu_hour_price > 0 ? "" : " (--gpu-hour-price for the cost)");
  if (run->gpu_hour_price > 0) {
    g_autofree char *cost = sim_format_count ((guint64) llround (t.cost));
    g_autofree char *clo = sim_format_count ((guint64) llround (t.cost_lo));
    g_autofree char *chi = sim_format_count ((guint64) llround (t.cost_hi));
    g_autofree char *range = t.band > 0 ? g_strdup_printf (" (%s-%s)", clo, chi) : g_strdup ("");
    char *more = g_strdup_printf ("%s, cost %s%s at %.2f per GPU-hour", text, cost, range, run->gpu_hour_price);
    g_free (text);
    text = more;
  }
  return text;
}

/* --train-tokens: how long, how many GPU-hours and (with a price) what it
 * costs to train on them at the simulated rate */
static void
text_train (GString *s, const SimRun *run, gboolean wide)
{
  g_autofree char *text = sim_report_train_text (run);
  if (text != NULL)
    append_line (s, wide, "\nTraining  ", text);
}

static void
json_train (SimJson *j, const SimRun *run)
{
  SimTrainEstimate t;
  if (!(run->train_tokens > 0) || !sim_run_train_estimate (run, run->train_tokens, run->gpu_hour_price, &t))
    return;
  sim_json_begin_object (j, "train");
  sim_json_double (j, "tokens", t.tokens);
  sim_json_double (j, "days", t.days);
  sim_json_double (j, "gpu_hours", t.gpu_hours);
  /* the ranges from the step's error band (time.error_band.applied) */
  sim_json_double (j, "days_lo", t.days_lo);
  sim_json_double (j, "days_hi", t.days_hi);
  sim_json_double (j, "gpu_hours_lo", t.gpu_hours_lo);
  sim_json_double (j, "gpu_hours_hi", t.gpu_hours_hi);
  if (run->gpu_hour_price > 0) {
    sim_json_double (j, "gpu_hour_price", run->gpu_hour_price);
    sim_json_double (j, "cost", t.cost);
    sim_json_double (j, "cost_lo", t.cost_lo);
    sim_json_double (j, "cost_hi", t.cost_hi);
  }
  sim_json_end_object (j);
}

char *
sim_report_text (const SimRun *run)
{
  return sim_report_text_wide (run, FALSE);
}

/* one section of the report, appended to s */
static void
text_section (GString *s, const Input *in, const SimRun *run, SimReportSection section, gboolean wide)
{
  const SimTopology *t = run->topo;
  const SimPlan *p = run->plan;
  const SimMemory *mem = run->memory;

  switch (section) {
  case SIM_REPORT_TITLE:
    g_string_append_printf (s, "sim %s: %s on %s\n\n", SIM_VERSION, run->model->name, t->name);
    break;
  case SIM_REPORT_WARNINGS:
    text_warnings (s, t);
    break;
  case SIM_REPORT_SETUP:
    text_cluster (s, t);
    text_model (s, run->model, p, mem, wide);
    text_plan (s, p, wide);
    break;
  case SIM_REPORT_MEMORY:
    text_memory_table (s, run->model, p, mem, in->time != NULL, wide);
    break;
  case SIM_REPORT_CAPACITY:
    text_capacity (s, sim_topology_gpu_type (t, 0), mem, wide);
    break;
  case SIM_REPORT_VERDICT:
    text_verdict (s, run, mem, in->remedies, wide);
    break;
  case SIM_REPORT_TIME:
    if (in->time != NULL)
      {
        SimErrorBand band;
        sim_run_error_band (run, &band);
        text_time (s, in->time, t, p, &band, mem->fits, wide);
      }
    break;
  case SIM_REPORT_ERROR_BAND:
    if (in->time != NULL) {
      /* the dense band wrapped at 100 columns even with --wide (two lines) */
      g_autoptr (GPtrArray) bands = sim_report_band_sentences (t, in->model, p);
      for (guint i = 0; i < bands->len; i++)
        append_line (s, i == 0 && !sim_model_is_moe (in->model) ? FALSE : wide, "          ",
                     g_ptr_array_index (bands, i));
    }
    if (in->time != NULL)
      text_variability (s, run);
    break;
  case SIM_REPORT_TIME_TABLE:
    if (in->time != NULL)
      text_time_detail (s, in->time, sim_model_is_moe (in->model), in->plan->cp, wide);
    break;
  case SIM_REPORT_CRITICAL_PATH:
    if (in->time != NULL)
      text_critical_path (s, in->time);
    break;
  case SIM_REPORT_TRAIN:
    text_train (s, run, wide);
    break;
  case SIM_REPORT_DIAGNOSIS:
    if (in->diagnosis != NULL && in->diagnosis->len > 0 && in->memory->fits) {
      g_string_append (s, in->time != NULL ? "\nDiagnosis " : "Diagnosis ");
      for (guint i = 0; i < in->diagnosis->len; i++) {
        if (i > 0)
          g_string_append (s, "          ");
        append_wrapped (s, g_ptr_array_index (in->diagnosis, i));
        g_string_append_c (s, '\n');
      }
      /* where to look next: the layer's kernels behind the compute time */
      if (in->time != NULL)
        append_line (
            s, wide, "          ",
            "sim kernels with the same cluster, model and plan flags lists each kernel of a layer, its time and rate");
    }
    break;
  case SIM_REPORT_N_SECTIONS:
    break;
  }
}

char *
sim_report_section (const SimRun *run, SimReportSection section, gboolean wide)
{
  g_auto (Input) input = { 0 };
  GString *s = g_string_new (NULL);

  g_return_val_if_fail (section >= 0 && section < SIM_REPORT_N_SECTIONS, g_string_free (s, FALSE));
  input_init (&input, run);
  text_section (s, &input, run, section, wide);
  return g_string_free (s, FALSE);
}

char *
sim_report_text_wide (const SimRun *run, gboolean wide)
{
  g_auto (Input) input = { 0 };
  GString *s = g_string_new (NULL);

  input_init (&input, run);
  /* the sections in their order: the verdict before the time, since a plan
   * that does not fit has no step time worth reading first */
  for (int k = 0; k < SIM_REPORT_N_SECTIONS; k++)
    text_section (s, &input, run, (SimReportSection) k, wide);
  return g_string_free (s, FALSE);
}

void
sim_report_json_plan (SimJson *j, const SimPlan *p)
{
  g_autofree char *order = sim_plan_order_string (p);
  sim_json_begin_object (j, "plan");
  sim_json_int (j, "gpus", sim_plan_world_size (p));
  sim_json_int (j, "tp", p->tp);
  sim_json_int (j, "cp", p->cp);
  sim_json_int (j, "pp", p->pp);
  sim_json_int (j, "dp", p->dp);
  /* expert parallelism as resolved (a dense model: 1, 1 and tp*cp*dp) */
  sim_json_int (j, "ep", p->ep);
  sim_json_int (j, "etp", p->etp);
  sim_json_int (j, "edp", p->edp);
  sim_json_int (j, "micro_batch", p->micro_batch);
  sim_json_uint (j, "global_batch", p->global_batch);
  sim_json_uint (j, "micro_batches", p->micro_batches);
  sim_json_string (j, "schedule", sim_schedule_name (p->schedule));
  sim_json_int (j, "virtual_stages", p->virtual_stages);
  sim_json_int (j, "first_stage_layers", p->first_stage_layers);
  sim_json_int (j, "last_stage_layers", p->last_stage_layers);
  sim_json_int (j, "mtp_num_layers", p->mtp_layers);
  sim_json_int (j, "cpu_offloading_num_layers", p->cpu_offload_layers);
  sim_json_string (j, "pipeline_layout", p->layout != NULL ? p->layout->text : NULL);
  sim_json_bool (j, "embedding_in_pipeline_split", p->embedding_in_split);
  sim_json_bool (j, "loss_in_pipeline_split", p->loss_in_split);
  sim_json_string (j, "recompute", sim_recompute_name (p->recompute));
  sim_json_string (j, "recompute_method", sim_recompute_method_name (p->recompute_method));
  sim_json_int (j, "recompute_num_layers", p->recompute_num_layers);
  sim_json_begin_array (j, "recompute_modules");
  for (int i = 0; i < SIM_RECOMPUTE_MODULE_COUNT; i++)
    if (p->recompute_modules & (1u << i))
      sim_json_string (j, NULL, sim_recompute_module_name (i));
  sim_json_end_array (j);
  sim_json_string (j, "cuda_graph_impl", sim_cuda_graph_impl_name (p->cuda_graph_impl));
  {
    g_auto (GStrv) scope = NULL;
    g_autofree char *text = sim_cuda_graph_scope_string (p->cuda_graph_scope, ",");
    scope = g_strsplit (text, ",", -1);
    sim_json_begin_array (j, "cuda_graph_scope");
    for (int i = 0; *text && scope[i] != NULL; i++)
      sim_json_string (j, NULL, scope[i]);
    sim_json_end_array (j);
  }
  sim_json_bool (j, "sequence_parallel", p->sequence_parallel > 0);
  sim_json_bool (j, "flash_attention", p->flash_attention > 0);
  sim_json_string (j, "attention_kernel", p->attention_kernel == SIM_ATTENTION_TRITON   ? "triton"
                                          : p->attention_kernel == SIM_ATTENTION_CUDNN  ? "cudnn"
                                          : p->attention_kernel == SIM_ATTENTION_FLASH2 ? "flash2"
                                                                                        : "flash");
  sim_json_int (j, "zero", p->zero);
  sim_json_string (j, "recipe", sim_recipe_name (p->recipe));
  sim_json_bool (j, "grad_reduce_in_fp32", p->grad_reduce_fp32);
  sim_json_string (j, "fp8", sim_fp8_name (p->fp8));
  sim_json_string (j, "fp8_recipe", p->fp8 != SIM_FP8_OFF ? sim_fp8_recipe_name ((SimFp8Recipe) p->fp8_recipe) : NULL);
  sim_json_bool (j, "fp8_attention", p->fp8_attention);
  sim_json_bool (j, "tp_only_amax_red", p->tp_only_amax_red);
  sim_json_bool (j, "fp8_params", p->fp8_params > 0);
  sim_json_string (j, "fp4", sim_fp4_name (p->fp4));
  sim_json_string (j, "order", order);
  sim_json_double (j, "gpu_variation", p->gpu_variation);
  sim_json_uint (j, "lora_rank", p->lora_rank);
  sim_json_bool (j, "qlora", p->qlora);
  sim_json_begin_array (j, "defaults_applied");
  for (guint i = 0; i < p->defaults->len; i++)
    sim_json_string (j, NULL, g_ptr_array_index (p->defaults, i));
  sim_json_end_array (j);
  sim_json_end_object (j);
}

static void
json_topology_and_model (SimJson *j, const SimTopology *t, const SimModel *m, const SimPlan *p)
{
  sim_json_begin_object (j, "topology");
  sim_json_string (j, "name", t->name);
  sim_json_int (j, "gpus", sim_topology_n_gpus (t));
  sim_json_int (j, "nodes", t->n_nodes);
  sim_json_string (j, "gpu", sim_topology_gpu_type (t, 0)->name);
  sim_json_end_object (j);

  sim_json_begin_object (j, "model");
  sim_json_string (j, "name", m->name);
  sim_json_uint (j, "params", sim_model_param_count (m));
  sim_json_uint (j, "layers", m->layers);
  sim_json_uint (j, "hidden", m->hidden);
  sim_json_uint (j, "heads", m->heads);
  sim_json_uint (j, "kv_heads", m->kv_heads);
  sim_json_uint (j, "ffn_hidden", m->ffn_hidden);
  sim_json_uint (j, "vocab", m->vocab);
  sim_json_uint (j, "seq_len", p->seq_len);
  sim_json_end_object (j);
}

/* one band of "error_band": its mean |error|, its mean signed error where
 * the band file states it, and runs; null where the cluster file states
 * none (error 0) */
static void
json_band (SimJson *j, const char *key, const SimBand *band)
{
  if (band->error <= 0) {
    sim_json_null (j, key);
    return;
  }
  sim_json_begin_object (j, key);
  sim_json_double (j, "mean_abs_error", band->error);
  if (band->has_bias)
    sim_json_double (j, "mean_error", band->bias);
  sim_json_uint (j, "runs", band->rows);
  sim_json_end_object (j);
}

/* a band of published runs as numbers, null where the file states none */
static void
json_published_band (SimJson *j, const char *name, const SimBand *band)
{
  if (band->rows == 0) {
    sim_json_null (j, name);
    return;
  }
  sim_json_begin_object (j, name);
  sim_json_double (j, "mean_abs_error", band->error);
  sim_json_double (j, "mean_error", band->bias);
  sim_json_uint (j, "runs", band->rows);
  sim_json_uint (j, "runs_within_15_percent", band->within);
  sim_json_end_object (j);
}

/* the error bands the text prints under the step time (text_error_band,
 * text_moe_band, the framework's): each null where the cluster file states
 * none; "moe" only for a mixture-of-experts model and "fsdp" only for a
 * --framework fsdp plan, each with its mean signed error and the runs within
 * 15 % beside */
static void
json_error_band (SimJson *j, const SimRun *run, const SimIteration *it, gboolean moe, gboolean fsdp)
{
  const SimEfficiency *eff = &sim_topology_gpu_type (run->topo, 0)->eff;
  SimErrorBand b;

  sim_run_error_band (run, &b);
  sim_json_begin_object (j, "error_band");
  /* the band this plan's figures carry (sim_run_error_band), and the step's range in it */
  sim_json_begin_object (j, "applied");
  sim_json_string (j, "basis", b.basis);
  sim_json_double (j, "error", b.error);
  sim_json_double (j, "step_lo_s", it->step_s * (1 - b.error));
  sim_json_double (j, "step_hi_s", it->step_s * (1 + b.error));
  sim_json_end_object (j);
  json_band (j, "fitted", &eff->bands.fitted);
  json_band (j, "heldout", &eff->bands.heldout);
  if (moe)
    json_published_band (j, "moe", &eff->bands.moe);
  if (fsdp)
    json_published_band (j, "fsdp", &eff->bands.fsdp);
  if (run->plan->framework == SIM_FRAMEWORK_TORCHTITAN)
    json_published_band (j, "torchtitan", &eff->bands.torchtitan);
  sim_json_end_object (j);
}

/* time.variability (SimVariability) and, with slow GPUs or links,
 * time.straggler: each slow GPU, node or link (kind nic or nvlink, index
 * its GPU's rank) with its factor, and the step and the exposed
 * communication with none slow */
static void
json_variability (SimJson *j, const SimRun *run)
{
  SimVariability v;
  const SimPlan *p = run->plan;
  if (!sim_run_variability (run, &v))
    return;
  sim_json_begin_object (j, "variability");
  sim_json_double (j, "gpu_variation", v.sigma);
  sim_json_int (j, "gpus", v.gpus);
  sim_json_double (j, "compute_slowdown", v.slowdown);
  sim_json_double (j, "added_s", v.added_s);
  sim_json_end_object (j);
  if ((p->n_slow == 0 && p->n_slow_links == 0) || run->straggler_base == NULL)
    return;
  sim_json_begin_object (j, "straggler");
  sim_json_double (j, "step_s_none_slow", run->straggler_base_step_s);
  sim_json_begin_object (j, "exposed_comm_s_none_slow");
  sim_json_double (j, "tp", run->straggler_base->exposed_tp_s);
  sim_json_double (j, "cp", run->straggler_base->exposed_cp_s);
  sim_json_double (j, "pp", run->straggler_base->exposed_pp_s);
  sim_json_double (j, "dp", run->straggler_base->exposed_dp_s);
  sim_json_double (j, "ep", run->straggler_base->exposed_ep_s);
  sim_json_end_object (j);
  sim_json_begin_array (j, "slow");
  for (int i = 0; i < p->n_slow; i++) {
    sim_json_begin_object (j, NULL);
    sim_json_string (j, "kind", p->slow[i].node ? "node" : "gpu");
    sim_json_int (j, "index", p->slow[i].index);
    sim_json_double (j, "factor", p->slow[i].factor);
    sim_json_end_object (j);
  }
  for (int i = 0; i < p->n_slow_links; i++) {
    sim_json_begin_object (j, NULL);
    sim_json_string (j, "kind", p->slow_links[i].kind == SIM_SLOW_NIC ? "nic" : "nvlink");
    sim_json_int (j, "index", p->slow_links[i].rank);
    sim_json_double (j, "factor", p->slow_links[i].factor);
    sim_json_end_object (j);
  }
  sim_json_end_array (j);
  sim_json_end_object (j);
}

static void
json_time (SimJson *j, const SimRun *run, const SimIteration *it, const SimTopology *t, gboolean moe,
           gboolean fsdp)
{
  sim_json_begin_object (j, "time");
  sim_json_double (j, "step_s", it->step_s);
  sim_json_double (j, "tokens_per_s", it->tokens_per_s);
  sim_json_double (j, "model_tflops_per_gpu", it->model_tflops_per_gpu);
  sim_json_double (j, "hardware_tflops_per_gpu", it->hardware_tflops_per_gpu);
  /* a plan that cannot run has no MFU (the text report says so) */
  const char *precision = NULL;
  double m = sim_run_mfu_gemm_peak (t, run->plan, it->mfu, &precision);
  if (run->memory->fits) {
    sim_json_double (j, "mfu", it->mfu);
    sim_json_double (j, "hfu", it->hfu);
    /* of the peak of the precision the linear layers run at */
    sim_json_double (j, "mfu_gemm_peak", m);
    sim_json_double (j, "hfu_gemm_peak", it->mfu > 0 ? m * it->hfu / it->mfu : 0);
    sim_json_string (j, "gemm_precision", precision);
  } else {
    sim_json_null (j, "mfu");
    sim_json_null (j, "hfu");
    sim_json_null (j, "mfu_gemm_peak");
    sim_json_null (j, "hfu_gemm_peak");
    sim_json_string (j, "gemm_precision", precision);
  }
  sim_json_double (j, "bubble_fraction", it->bubble_fraction);
  sim_json_begin_object (j, "exposed_comm_s");
  sim_json_double (j, "tp", it->exposed_tp_s);
  sim_json_double (j, "cp", it->exposed_cp_s);
  sim_json_double (j, "pp", it->exposed_pp_s);
  sim_json_double (j, "dp", it->exposed_dp_s);
  sim_json_double (j, "ep", it->exposed_ep_s);
  sim_json_end_object (j);
  sim_json_double (j, "compute_s", it->compute_s);
  sim_json_begin_object (j, "critical_path_s");
  for (int k = 0; k < SIM_SPAN_GATE; k++)
    sim_json_double (j, sim_span_kind_name (k), it->critical_s[k]);
  sim_json_end_object (j);
  sim_json_bool (j, "symmetric", it->symmetric);
  json_error_band (j, run, it, moe, fsdp);
  if (it == run->time)
    json_variability (j, run);
  /* the runs a steady state was extrapolated from; empty when simulated whole */
  sim_json_begin_array (j, "steady_micro_batches");
  for (int k = 0; k < 3 && it->steady_micro_batches[0] > 0; k++)
    sim_json_uint (j, NULL, it->steady_micro_batches[k]);
  sim_json_end_array (j);
  sim_json_begin_array (j, "stages");
  for (guint i = 0; i < it->stages->len; i++) {
    const SimStageTime *st = &g_array_index (it->stages, SimStageTime, i);
    sim_json_begin_object (j, NULL);
    sim_json_int (j, "stage", st->stage);
    sim_json_double (j, "forward_s", st->forward_s);
    sim_json_double (j, "backward_s", st->backward_s);
    sim_json_double (j, "recompute_s", st->recompute_s);
    sim_json_double (j, "optimizer_s", st->optimizer_s);
    sim_json_double (j, "exposed_tp_s", st->exposed_tp_s);
    sim_json_double (j, "exposed_cp_s", st->exposed_cp_s);
    sim_json_double (j, "exposed_pp_s", st->exposed_pp_s);
    sim_json_double (j, "exposed_dp_s", st->exposed_dp_s);
    sim_json_double (j, "exposed_ep_s", st->exposed_ep_s);
    sim_json_double (j, "bubble_s", st->bubble_s);
    sim_json_end_object (j);
  }
  sim_json_end_array (j);
  sim_json_end_object (j);
}

static void
json_memory_stages (SimJson *j, const SimMemory *mem)
{
  sim_json_begin_array (j, "stages");
  for (guint i = 0; i < mem->stages->len; i++) {
    const SimStageMemory *st = &g_array_index (mem->stages, SimStageMemory, i);
    sim_json_begin_object (j, NULL);
    sim_json_int (j, "stage", st->stage);
    sim_json_uint (j, "layers", st->layers);
    sim_json_uint (j, "params", st->params);
    sim_json_uint (j, "params_bytes", st->params_bytes);
    sim_json_uint (j, "grads_bytes", st->grads_bytes);
    sim_json_uint (j, "master_bytes", st->master_bytes);
    sim_json_uint (j, "optimizer_bytes", st->optimizer_bytes);
    sim_json_uint (j, "grad_accum_bytes", st->grad_accum_bytes);
    sim_json_uint (j, "buffer_bytes", st->buffer_bytes);
    sim_json_uint (j, "states_bytes", st->states_bytes);
    sim_json_uint (j, "activation_bytes_per_layer", st->activation_bytes_per_layer);
    sim_json_double (j, "in_flight_micro_batches", st->in_flight_micro_batches);
    sim_json_uint (j, "in_flight_chunks", st->in_flight_chunks);
    sim_json_uint (j, "activations_peak_bytes", st->activations_peak_bytes);
    sim_json_uint (j, "peak_bytes", st->peak_bytes);
    sim_json_end_object (j);
  }
  sim_json_end_array (j);
}

static void
json_remedies (SimJson *j, const GPtrArray *remedies)
{
  sim_json_begin_array (j, "remedies");
  if (remedies != NULL)
    for (guint i = 0; i < remedies->len; i++) {
      const SimRemedy *r = g_ptr_array_index (remedies, i);
      g_autofree char *text = sim_report_remedy_text (r);
      sim_json_begin_object (j, NULL);
      sim_json_string (j, "flags", r->flags);
      sim_json_string (j, "why", r->why);
      sim_json_bool (j, "together", r->together);
      sim_json_uint (j, "peak_bytes", r->peak_bytes);
      sim_json_int (j, "peak_stage", r->peak_stage);
      sim_json_bool (j, "fits", r->fits);
      sim_json_bool (j, "tight", r->tight);
      /* simulated when it fits and the plan was timed */
      if (r->has_time) {
        sim_json_double (j, "step_s", r->step_s);
        sim_json_double (j, "tokens_per_s", r->tokens_per_s);
        sim_json_double (j, "time_change", r->time_change);
      } else {
        sim_json_null (j, "step_s");
        sim_json_null (j, "tokens_per_s");
        sim_json_null (j, "time_change");
      }
      sim_json_string (j, "text", text);
      sim_json_end_object (j);
    }
  sim_json_end_array (j);
}

/* the fastest layout of the job that fits, where it was searched */
static void
json_fastest_fit (SimJson *j, const SimRun *run)
{
  const SimFastestFit *f = run->fastest_fit;
  g_autofree char *text = NULL;
  if (f == NULL)
    return;
  text = sim_report_fastest_fit_text (run);
  sim_json_begin_object (j, "fastest_fit");
  sim_json_bool (j, "found", f->row != NULL);
  sim_json_int (j, "layouts", f->layouts);
  sim_json_int (j, "simulated", f->simulated);
  if (f->row != NULL) {
    sim_json_string (j, "plan", f->row->label);
    sim_json_string (j, "flags", f->flags);
    sim_json_double (j, "step_s", f->row->step_s);
    sim_json_double (j, "tokens_per_s", f->row->tokens_per_s);
    sim_json_uint (j, "peak_bytes", f->row->peak_bytes);
    if (isnan (f->time_change))
      sim_json_null (j, "time_change");
    else
      sim_json_double (j, "time_change", f->time_change);
  }
  sim_json_string (j, "text", text);
  sim_json_end_object (j);
}

static void
json_memory (SimJson *j, const SimRun *run, const SimMemory *mem, const GPtrArray *remedies)
{
  sim_json_begin_object (j, "memory");
  sim_json_uint (j, "hbm_capacity_bytes", mem->hbm_capacity_bytes);
  sim_json_uint (j, "capacity_bytes", mem->capacity_bytes);
  sim_json_uint (j, "context_reserve_bytes", mem->context_reserve_bytes);
  sim_json_uint (j, "fragmentation_bytes", mem->fragmentation_bytes);
  sim_json_uint (j, "usable_bytes", mem->usable_bytes);
  sim_json_uint (j, "peak_bytes", mem->peak_bytes);
  sim_json_int (j, "peak_stage", mem->peak_stage);
  sim_json_bool (j, "fits", mem->fits);
  sim_json_bool (j, "tight", mem->tight);
  sim_json_string (j, "oom_case", sim_oom_case_name (mem->oom_case));
  sim_json_uint (j, "trainable_params", mem->trainable_params);
  sim_json_uint (j, "frozen_params", mem->frozen_params);
  json_memory_stages (j, mem);
  json_remedies (j, remedies);
  json_fastest_fit (j, run);
  sim_json_end_object (j);
}

char *
sim_report_json (const SimRun *run)
{
  g_auto (Input) input = { 0 };
  const Input *in = &input;
  SimJson j;

  input_init (&input, run);
  sim_json_init (&j, TRUE);
  sim_json_begin_object (&j, NULL);
  sim_json_string (&j, "schema", "sim-result/1");
  sim_json_string (&j, "version", SIM_VERSION);
  json_topology_and_model (&j, run->topo, run->model, run->plan);
  sim_report_json_plan (&j, run->plan);
  if (in->time != NULL)
    json_time (&j, run, in->time, run->topo, sim_model_is_moe (run->model),
               run->plan->framework == SIM_FRAMEWORK_FSDP);
  json_train (&j, run);
  json_memory (&j, run, run->memory, in->remedies);

  sim_json_string (&j, "wall", in->wall);
  sim_json_begin_array (&j, "diagnosis");
  if (in->diagnosis != NULL)
    for (guint i = 0; i < in->diagnosis->len; i++)
      sim_json_string (&j, NULL, g_ptr_array_index (in->diagnosis, i));
  sim_json_end_array (&j);

  sim_json_end_object (&j);
  return sim_json_finish (&j);
}

void
sim_report_summary_json (SimJson *j, const SimRunSummary *r)
{
  /* one verdict: fits, tight (fits only without the fragmentation
   * allowance: not one to book a cluster on while another fits) or oom */
  sim_json_string (j, "status", sim_run_summary_status (r));
  sim_json_string (j, "oom_case", r->oom_case);
  sim_json_uint (j, "peak_bytes", r->peak_bytes);
  sim_json_uint (j, "usable_bytes", r->usable_bytes);
  if (!r->has_time)
    return;
  sim_json_bool (j, "screened", r->screened);
  sim_json_double (j, "step_s", r->step_s);
  sim_json_double (j, "tokens_per_s", r->tokens_per_s);
  if (r->fits) {
    sim_json_double (j, "mfu", r->mfu);
    sim_json_double (j, "mfu_gemm_peak", r->mfu_gemm);
  } else {
    sim_json_null (j, "mfu");
    sim_json_null (j, "mfu_gemm_peak");
  }
  sim_json_string (j, "gemm_precision", r->gemm_precision);
  /* the step's error band, and whether it is within the best's of it */
  sim_json_double (j, "error_band", r->band);
  sim_json_bool (j, "tie", r->tie);
  sim_json_double (j, "bubble_fraction", r->bubble);
  sim_json_double (j, "compute_s", r->compute_s);
  sim_json_double (j, "exposed_tp_s", r->tp_s);
  sim_json_double (j, "exposed_cp_s", r->cp_s);
  sim_json_double (j, "exposed_pp_s", r->pp_s);
  sim_json_double (j, "exposed_dp_s", r->dp_s);
  sim_json_double (j, "exposed_ep_s", r->ep_s);
  sim_json_string (j, "wall", r->wall);
  sim_json_double (j, "scaling_efficiency", r->e);
}

char *
sim_report_runs_json (const char *command, const char *topology, const char *model, GPtrArray *runs,
                      const SimRun *ref, GPtrArray *extra)
{
  SimJson j;
  sim_json_init (&j, TRUE);
  sim_json_begin_object (&j, NULL);
  sim_json_string (&j, "schema", "sim-runs/2");
  sim_json_string (&j, "command", command);
  sim_json_string (&j, "topology", topology);
  sim_json_string (&j, "model", model);
  g_autofree gboolean *tie = g_new0 (gboolean, runs->len + 1);
  sim_run_ties (runs, tie);
  sim_json_begin_array (&j, "runs");
  for (guint i = 0; i < runs->len; i++) {
    const SimRun *r = g_ptr_array_index (runs, i);
    g_autoptr (SimRunSummary) s = sim_run_summary_new ((int) i, r->label, 0);
    sim_run_summary_fill (s, r);
    s->tie = tie[i];
    s->e = sim_run_scaling_efficiency (r, ref);
    sim_json_begin_object (&j, NULL);
    /* the table's rank: the runs come ranked, those that fit first */
    if (r->memory->fits)
      sim_json_int (&j, "rank", (int) i + 1);
    else
      sim_json_null (&j, "rank");
    sim_json_string (&j, "label", r->label);
    sim_report_json_plan (&j, r->plan);
    sim_report_summary_json (&j, s);
    if (!s->has_time)
      sim_json_string (&j, "wall", s->wall);
    json_train (&j, r);
    sim_json_end_object (&j);
  }
  sim_json_end_array (&j);
  if (extra != NULL) {
    sim_json_begin_array (&j, "notes");
    for (guint i = 0; i < extra->len; i++)
      sim_json_string (&j, NULL, g_ptr_array_index (extra, i));
    sim_json_end_array (&j);
  }
  sim_json_end_object (&j);
  return sim_json_finish (&j);
}
