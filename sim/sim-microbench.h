/* sim-microbench.h — the one CSV format of the microbenchmarks (microbench/).
 *
 *   # sim-microbench/1
 *   # program: gemm | hbm | collectives
 *   # gpu: NVIDIA H100 80GB HBM3
 *   # driver: 550.54.15
 *   # cuda: 12040            (runtime version)
 *   # cublas: 120400         (or "-" when the program does not use it)
 *   # nccl: 22105            (or "-")
 *   # clocks: sm 1980 MHz, memory 2619 MHz
 *   # date: 2026-11-29T12:00:00Z
 *   kind,op,dtype,m,n,k,bytes,gpus,time_us,rate_per_s
 *   gemm,matmul,bf16,4096,4096,4096,,1,176.3,7.79e14
 *   hbm,triad,bf16,,,,4294967296,1,4400.1,2.93e12
 *   nccl,all_reduce,float,,,,1048576,8,27.4,6.70e10
 *
 * time_us is the median of the timed repetitions.  rate_per_s is FLOP/s for
 * gemm (2mnk / time), bytes/s moved for hbm (copy 2x, triad 3x the array),
 * and the bus bandwidth for nccl (nccl-tests' definition, GB = 1e9 on
 * print only).  Empty fields are allowed where they do not apply.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char *kind;       /* gemm, hbm, nccl */
  char *op;         /* matmul, copy, triad, all_reduce, ... */
  char *dtype;
  double m, n, k;   /* 0 when empty */
  double bytes;
  int gpus;
  double time_us;
  double rate_per_s;
  int line;
} SimMicrobenchRow;

typedef struct {
  char *path;
  GHashTable *header;  /* "gpu" -> "NVIDIA H100 ...", ... */
  GArray *rows;        /* SimMicrobenchRow */
} SimMicrobench;

/* Each returns a new SimMicrobench (free with sim_microbench_free; it copies the path
 * and holds no pointer into the text), or NULL with SIM_ERROR_USAGE
 * ("PATH:LINE: expected ..."; no code fits non-XML input better) or, for a
 * file that cannot be read, SIM_ERROR_IO; any thread. */
SimMicrobench *sim_microbench_parse_file (const char *path, GError **error);
SimMicrobench *sim_microbench_parse_text (const char *path_for_messages, const char *text, GError **error);
/* NULL is ignored */
void sim_microbench_free (SimMicrobench *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimMicrobench, sim_microbench_free)

/* the "# key: value" header line's value (owned by b), or NULL; any thread */
const char *sim_microbench_header (const SimMicrobench *b, const char *key);

G_END_DECLS
