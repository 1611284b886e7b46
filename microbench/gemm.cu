/* gemm.cu — the time of one cuBLASLt matmul per shape, as sim's GEMM cost
 * model (sim/sim-gemm.c) needs it: D[m,n] = A[m,k] B[k,n], FP32 accumulate.
 *
 *   dtype  A, B          C, D   needs
 *   bf16   bf16          bf16   any GPU cuBLASLt supports
 *   fp16   fp16          fp16
 *   fp8    fp8 E4M3      bf16   compute capability >= 8.9 (Ada, Hopper, ...)
 *
 * Layout: column-major "TN" (A stored k x m and transposed, B stored k x n),
 * the one layout cuBLASLt runs FP8 in, used for every dtype so that rows of
 * different dtypes compare.  The first algorithm of cuBLASLt's heuristic, with
 * a 32 MiB workspace, is timed: what a framework calling cuBLASLt gets.
 *
 * Each shape: --warmup launches, then --iters launches each timed alone with a
 * pair of CUDA events (synchronising between them); the CSV holds the median
 * and 2mnk / median.  Inputs are small pseudo-random values, not zeros: GPUs
 * draw less power (and clock higher) on zeros.  Identical (m, n, k) are
 * measured once.
 *
 * Output: the sim-microbench/1 CSV (sim/sim-bench.h), kind gemm, op matmul;
 * progress on stderr.  Exit status as in mb-cuda.h; 1 also when a shape had
 * no cuBLASLt algorithm (its row is missing, the others are written).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cublasLt.h>
#include <sys/wait.h>

#include "mb-cuda.h"

#define PROGRAM "gemm"

static const char *usage =
    "usage: gemm (--grid | --model NAME --tp N [--cp C] [--seq-len S] [--micro-batch B] |\n"
    "             --shapes FILE) [--dtype bf16|fp16|fp8[,...]] [--warmup N] [--iters N]\n"
    "            [--grid-min 256] [--grid-max 16384] [--device D] [-o FILE]\n"
    "\n"
    "Times one cuBLASLt matmul D[m,n] = A[m,k] B[k,n] (FP32 accumulation) per shape and\n"
    "writes the sim-microbench/1 CSV (kind gemm) to stdout or FILE.\n"
    "  --grid          every m, n, k in {256, 512, ..., 16384} (343 shapes)\n"
    "  --model NAME    the GEMMs of one tensor-parallel rank, from `sim shapes`\n"
    "                  (sim on the PATH, or the program named by $SIM)\n"
    "  --shapes FILE   lines name,m,n,k as `sim shapes` prints them\n"
    "  --dtype         bf16 (default), fp16, fp8 (E4M3 in, BF16 out; compute\n"
    "                  capability 8.9 or newer); a comma list runs each in turn\n"
    "  --warmup N      untimed launches per shape (default 10)\n"
    "  --iters N       timed launches per shape, median reported (default 50)\n"
    "  --dry-run       print the distinct shapes (name,m,n,k) and exit; needs no GPU\n";

#define WORKSPACE_BYTES (32u << 20)

typedef enum { DT_BF16, DT_FP16, DT_FP8 } Dtype;

static const char *const dtype_names[] = { "bf16", "fp16", "fp8" };

#define MB_LT(call)                                                                               \
  do {                                                                                            \
    cublasStatus_t mb_s_ = (call);                                                                \
    if (mb_s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      fprintf (stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                      \
               cublasLtGetStatusString (mb_s_));                                                  \
      exit (1);                                                                                   \
    }                                                                                             \
  } while (0)

/* uniform in [-1, 1) from a hash of the index: cheap, deterministic */
__device__ static float
pseudo_random (uint64_t i, uint32_t seed)
{
  uint32_t x = (uint32_t) i * 2654435761u ^ (uint32_t) (i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return (float) (x >> 8) / (float) (1u << 23) - 1.0f;
}

template <typename T>
__global__ static void
fill (T *p, uint64_t n, uint32_t seed)
{
  for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
       i += (uint64_t) gridDim.x * blockDim.x)
    p[i] = T (pseudo_random (i, seed));
}

template <typename T>
static void
fill_buffer (void *p, uint64_t n, uint32_t seed, cudaStream_t s)
{
  fill<T><<<1024, 256, 0, s>>> ((T *) p, n, seed);
  MB_CUDA (cudaGetLastError ());
}

static void
fill_inputs (Dtype dt, void *a, uint64_t na, void *b, uint64_t nb, cudaStream_t s)
{
  switch (dt) {
  case DT_BF16:
    fill_buffer<__nv_bfloat16> (a, na, 1, s);
    fill_buffer<__nv_bfloat16> (b, nb, 2, s);
    break;
  case DT_FP16:
    fill_buffer<__half> (a, na, 1, s);
    fill_buffer<__half> (b, nb, 2, s);
    break;
  case DT_FP8:
    fill_buffer<__nv_fp8_e4m3> (a, na, 1, s);
    fill_buffer<__nv_fp8_e4m3> (b, nb, 2, s);
    break;
  }
  MB_CUDA (cudaStreamSynchronize (s));
}

static void
dtype_types (Dtype dt, cudaDataType_t *in, cudaDataType_t *out, size_t *in_bytes)
{
  *in = dt == DT_BF16 ? CUDA_R_16BF : dt == DT_FP16 ? CUDA_R_16F : CUDA_R_8F_E4M3;
  *out = dt == DT_FP16 ? CUDA_R_16F : CUDA_R_16BF;
  *in_bytes = dt == DT_FP8 ? 1 : 2;
}

/* the shapes named on the command line; exits 2 on bad input */
static MbShape *
load_shapes (const char *how, const char *arg, const char *const *sim_args, uint64_t grid_min,
             uint64_t grid_max, size_t *n)
{
  char err[512];
  MbShape *s = NULL;

  if (strcmp (how, "grid") == 0) {
    if ((s = mb_gemm_grid (grid_min, grid_max, n)) == NULL) {
      fprintf (stderr, PROGRAM ": --grid-min and --grid-max hold no power of two\n");
      exit (2);
    }
    return s;
  }
  if (strcmp (how, "shapes") == 0) {
    char *text = mb_read_file (arg, err, sizeof err);
    if (text == NULL || (s = mb_shapes_parse (arg, text, n, err, sizeof err)) == NULL) {
      fprintf (stderr, PROGRAM ": %s\n", err);
      exit (2);
    }
    free (text);
    return s;
  }
  /* --model: ask sim, which owns the model files and the shape arithmetic */
  {
    char cmd[4096] = "";
    const char *sim = getenv ("SIM");
    FILE *p;
    char *text;
    int status;

    if (sim != NULL && *sim != '\0') {
      if (mb_shell_quote (cmd, sizeof cmd, sim) != 0) {
        fprintf (stderr, PROGRAM ": $SIM is too long\n");
        exit (2);
      }
    } else {
      strcpy (cmd, "sim");
    }
    strcat (cmd, " shapes");
    for (int i = 0; sim_args[i] != NULL; i++) {
      strcat (cmd, " ");
      if (mb_shell_quote (cmd, sizeof cmd, sim_args[i]) != 0) {
        fprintf (stderr, PROGRAM ": arguments for sim shapes are too long\n");
        exit (2);
      }
    }
    fflush (NULL);
    if ((p = popen (cmd, "r")) == NULL) {
      fprintf (stderr, PROGRAM ": cannot run %s: %s\n", cmd, strerror (errno));
      exit (2);
    }
    text = mb_read_stream (p);
    status = pclose (p);
    if (text == NULL || status == -1 || !WIFEXITED (status) || WEXITSTATUS (status) != 0) {
      int code = status != -1 && WIFEXITED (status) ? WEXITSTATUS (status) : -1;
      /* 127: the shell found no such program */
      fprintf (stderr, PROGRAM ": `%s` failed (exit status %d)%s\n", cmd, code,
               code == 127 ? "; put sim on the PATH or name it in $SIM" : "");
      exit (2);
    }
    if ((s = mb_shapes_parse ("sim shapes output", text, n, err, sizeof err)) == NULL) {
      fprintf (stderr, PROGRAM ": %s\n", err);
      exit (2);
    }
    free (text);
    return s;
  }
}

/* the median time of one matmul in microseconds; NAN when cuBLASLt has no
 * algorithm for the shape */
static double
time_matmul (cublasLtHandle_t lt, cudaStream_t stream, Dtype dt, const MbShape *s, void *a, void *b,
             void *d, void *workspace, int warmup, int iters, double *times)
{
  cublasLtMatmulDesc_t op = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t heur;
  cudaDataType_t in_t, out_t;
  size_t in_bytes, ws = WORKSPACE_BYTES;
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  int returned = 0;
  float alpha = 1.0f, beta = 0.0f;
  cudaEvent_t start, stop;
  double median = NAN;

  dtype_types (dt, &in_t, &out_t, &in_bytes);
  MB_LT (cublasLtMatmulDescCreate (&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  MB_LT (cublasLtMatmulDescSetAttribute (op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  MB_LT (cublasLtMatmulDescSetAttribute (op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  MB_LT (cublasLtMatrixLayoutCreate (&la, in_t, s->k, s->m, s->k));
  MB_LT (cublasLtMatrixLayoutCreate (&lb, in_t, s->k, s->n, s->k));
  MB_LT (cublasLtMatrixLayoutCreate (&ld, out_t, s->m, s->n, s->m));
  MB_LT (cublasLtMatmulPreferenceCreate (&pref));
  MB_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof ws));
  if (cublasLtMatmulAlgoGetHeuristic (lt, op, la, lb, ld, ld, pref, 1, &heur, &returned) !=
          CUBLAS_STATUS_SUCCESS ||
      returned == 0)
    goto out;

  MB_CUDA (cudaEventCreate (&start));
  MB_CUDA (cudaEventCreate (&stop));
  for (int i = 0; i < warmup; i++)
    MB_LT (cublasLtMatmul (lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heur.algo, workspace,
                           ws, stream));
  MB_CUDA (cudaStreamSynchronize (stream));
  for (int i = 0; i < iters; i++) {
    float ms = 0;
    MB_CUDA (cudaEventRecord (start, stream));
    MB_LT (cublasLtMatmul (lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heur.algo, workspace,
                           ws, stream));
    MB_CUDA (cudaEventRecord (stop, stream));
    MB_CUDA (cudaEventSynchronize (stop));
    MB_CUDA (cudaEventElapsedTime (&ms, start, stop));
    times[i] = ms * 1e3;
  }
  median = mb_median (times, (size_t) iters);
  MB_CUDA (cudaEventDestroy (start));
  MB_CUDA (cudaEventDestroy (stop));
out:
  cublasLtMatmulPreferenceDestroy (pref);
  cublasLtMatrixLayoutDestroy (la);
  cublasLtMatrixLayoutDestroy (lb);
  cublasLtMatrixLayoutDestroy (ld);
  cublasLtMatmulDescDestroy (op);
  return median;
}

int
main (int argc, char **argv)
{
  const char *how = NULL, *shapes_file = NULL, *out_path = NULL, *dtypes_s = "bf16";
  const char *sim_args[16] = { NULL };
  int n_sim_args = 0, warmup = 10, iters = 50, device = 0, n_dtypes = 0, skipped = 0, dry_run = 0;
  uint64_t grid_min = 256, grid_max = 16384, max_a = 0, max_b = 0, max_d = 0;
  Dtype dtypes[8];
  MbShape *shapes;
  size_t n_shapes = 0;
  MbCudaHeader hdr;
  char cublas_ver[32];
  cudaDeviceProp prop;
  cublasLtHandle_t lt;
  cudaStream_t stream;
  void *a, *b, *d, *workspace;
  double *times;
  FILE *out;

  for (int i = 1; i < argc; i++) {
    const char *f = argv[i];
    if (strcmp (f, "--help") == 0 || strcmp (f, "-h") == 0) {
      fputs (usage, stdout);
      return 0;
    } else if (strcmp (f, "--grid") == 0 || strcmp (f, "--model") == 0 ||
               strcmp (f, "--shapes") == 0) {
      if (how != NULL) {
        fprintf (stderr, PROGRAM ": expected one of --grid, --model and --shapes\n");
        return 2;
      }
      how = f + 2;
      if (strcmp (how, "shapes") == 0)
        shapes_file = mb_arg_value (PROGRAM, argc, argv, &i);
      else if (strcmp (how, "model") == 0) {
        sim_args[n_sim_args++] = "--model";
        sim_args[n_sim_args++] = mb_arg_value (PROGRAM, argc, argv, &i);
      }
    } else if (strcmp (f, "--tp") == 0 || strcmp (f, "--cp") == 0 || strcmp (f, "--seq-len") == 0 ||
               strcmp (f, "--micro-batch") == 0) {
      const char *v = mb_arg_value (PROGRAM, argc, argv, &i);
      mb_arg_long (PROGRAM, f, v, 1, 1L << 24);
      if (n_sim_args + 2 >= (int) (sizeof sim_args / sizeof sim_args[0])) {
        fprintf (stderr, PROGRAM ": %s given too often\n", f);
        return 2;
      }
      sim_args[n_sim_args++] = f;
      sim_args[n_sim_args++] = v;
    } else if (strcmp (f, "--dry-run") == 0) {
      dry_run = 1;
    } else if (strcmp (f, "--dtype") == 0) {
      dtypes_s = mb_arg_value (PROGRAM, argc, argv, &i);
    } else if (strcmp (f, "--warmup") == 0) {
      warmup = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 0, 100000);
    } else if (strcmp (f, "--iters") == 0) {
      iters = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 1, 100000);
    } else if (strcmp (f, "--device") == 0) {
      device = (int) mb_arg_long (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i), 0, 1023);
    } else if (strcmp (f, "--grid-min") == 0) {
      grid_min = mb_arg_bytes (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i));
    } else if (strcmp (f, "--grid-max") == 0) {
      grid_max = mb_arg_bytes (PROGRAM, f, mb_arg_value (PROGRAM, argc, argv, &i));
    } else if (strcmp (f, "-o") == 0 || strcmp (f, "--output") == 0) {
      out_path = mb_arg_value (PROGRAM, argc, argv, &i);
    } else {
      fprintf (stderr, PROGRAM ": unknown argument '%s'; see gemm --help\n", f);
      return 2;
    }
  }
  if (how == NULL) {
    fprintf (stderr, PROGRAM ": expected --grid, --model NAME or --shapes FILE; see gemm --help\n");
    return 2;
  }
  if ((n_sim_args > 0) != (strcmp (how, "model") == 0)) {
    fprintf (stderr, PROGRAM ": --tp, --cp, --seq-len and --micro-batch go with --model\n");
    return 2;
  }
  {
    char list[256];
    snprintf (list, sizeof list, "%s", dtypes_s);
    for (char *t = strtok (list, ","); t != NULL; t = strtok (NULL, ",")) {
      int found = -1;
      for (int j = 0; j < 3; j++)
        if (strcmp (t, dtype_names[j]) == 0)
          found = j;
      if (found < 0 || n_dtypes == 8) {
        fprintf (stderr, PROGRAM ": --dtype: expected bf16, fp16 or fp8 (comma-separated), got '%s'\n",
                 t);
        return 2;
      }
      dtypes[n_dtypes++] = (Dtype) found;
    }
    if (n_dtypes == 0) {
      fprintf (stderr, PROGRAM ": --dtype: expected bf16, fp16 or fp8\n");
      return 2;
    }
  }

  if (dry_run) {
    shapes = load_shapes (how, shapes_file, sim_args, grid_min, grid_max, &n_shapes);
    n_shapes = mb_shapes_unique (shapes, n_shapes);
    puts ("name,m,n,k");
    for (size_t i = 0; i < n_shapes; i++)
      printf ("%s,%llu,%llu,%llu\n", shapes[i].name, (unsigned long long) shapes[i].m,
              (unsigned long long) shapes[i].n, (unsigned long long) shapes[i].k);
    free (shapes);
    return 0;
  }

  if (device >= mb_cuda_require_device (PROGRAM)) {
    fprintf (stderr, PROGRAM ": --device %d: no such device\n", device);
    return 2;
  }
  MB_CUDA (cudaSetDevice (device));
  MB_CUDA (cudaGetDeviceProperties (&prop, device));
  for (int j = 0; j < n_dtypes; j++)
    if (dtypes[j] == DT_FP8 && prop.major * 10 + prop.minor < 89) {
      fprintf (stderr,
               PROGRAM ": --dtype fp8 needs compute capability 8.9 or newer; %s has %d.%d\n",
               prop.name, prop.major, prop.minor);
      return 2;
    }

  shapes = load_shapes (how, shapes_file, sim_args, grid_min, grid_max, &n_shapes);
  n_shapes = mb_shapes_unique (shapes, n_shapes);
  for (size_t i = 0; i < n_shapes; i++) {
    max_a = shapes[i].m * shapes[i].k > max_a ? shapes[i].m * shapes[i].k : max_a;
    max_b = shapes[i].k * shapes[i].n > max_b ? shapes[i].k * shapes[i].n : max_b;
    max_d = shapes[i].m * shapes[i].n > max_d ? shapes[i].m * shapes[i].n : max_d;
  }

  snprintf (cublas_ver, sizeof cublas_ver, "%zu", cublasLtGetVersion ());
  mb_cuda_header (&hdr, PROGRAM, device, cublas_ver, "-");
  MB_LT (cublasLtCreate (&lt));
  MB_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  /* sized for 2-byte elements, the widest input and output here */
  MB_CUDA (cudaMalloc (&a, max_a * 2));
  MB_CUDA (cudaMalloc (&b, max_b * 2));
  MB_CUDA (cudaMalloc (&d, max_d * 2));
  MB_CUDA (cudaMalloc (&workspace, WORKSPACE_BYTES));
  times = (double *) calloc ((size_t) iters, sizeof *times);
  if (times == NULL) {
    fprintf (stderr, PROGRAM ": out of memory\n");
    return 1;
  }

  out = mb_open_output (PROGRAM, out_path);
  mb_emit_header (PROGRAM, out_path, out, &hdr.h);
  fprintf (stderr, PROGRAM ": %s, %zu shapes x %d dtypes, %d warm-up + %d timed launches each\n",
           hdr.gpu, n_shapes, n_dtypes, warmup, iters);
  for (int j = 0; j < n_dtypes; j++) {
    fill_inputs (dtypes[j], a, max_a, b, max_b, stream);
    for (size_t i = 0; i < n_shapes; i++) {
      const MbShape *s = &shapes[i];
      double t = time_matmul (lt, stream, dtypes[j], s, a, b, d, workspace, warmup, iters, times);
      MbRow row = { "gemm", "matmul", dtype_names[dtypes[j]], s->m, s->n, s->k, 0, 1, t, 0 };
      if (isnan (t)) {
        fprintf (stderr, PROGRAM ": %s m=%llu n=%llu k=%llu (%s): no cuBLASLt algorithm; skipped\n",
                 dtype_names[dtypes[j]], (unsigned long long) s->m, (unsigned long long) s->n,
                 (unsigned long long) s->k, s->name);
        skipped++;
        continue;
      }
      row.rate_per_s = mb_gemm_flop_per_s (s->m, s->n, s->k, t);
      fprintf (stderr, PROGRAM ": %-4s %6llu x %6llu x %6llu  %-16s %10.2f us  %7.1f TFLOP/s\n",
               row.dtype, (unsigned long long) s->m, (unsigned long long) s->n,
               (unsigned long long) s->k, s->name, t, row.rate_per_s / 1e12);
      mb_emit_row (PROGRAM, out_path, out, &row);
    }
  }
  mb_close_output (PROGRAM, out_path, out);
  free (times);
  free (shapes);
  MB_CUDA (cudaFree (a));
  MB_CUDA (cudaFree (b));
  MB_CUDA (cudaFree (d));
  MB_CUDA (cudaFree (workspace));
  MB_LT (cublasLtDestroy (lt));
  if (skipped > 0) {
    fprintf (stderr, PROGRAM ": %d shapes had no cuBLASLt algorithm and are missing\n", skipped);
    return 1;
  }
  return 0;
}
