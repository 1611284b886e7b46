/* sim-nccl.h — reading the text that nccl-tests (all_reduce_perf, ...) prints.
 *
 * A data row is the nccl-tests table line
 *
 *   size count type [redop] [root] time algbw busbw #wrong [time algbw busbw #wrong]
 *
 * size in bytes, count in elements, time in microseconds, algbw and busbw in
 * GB/s with GB = 10^9 bytes, as nccl-tests prints them:
 *   algbw = size / time
 *   busbw = algbw * factor, factor from sim_coll_op_busbw_factor()
 * redop is absent in some old formats, root in others; #wrong is an integer,
 * "N/A" (validation off) or a float such as "0e+00" (old "error" column).
 * The second group of four (in place) is optional.
 *
 * What the parser accepts around the rows, all seen in real outputs
 * (tests/validation/data/nccl-tests/SOURCES.md):
 *   - a launcher prefix on every line: "0: " (srun), "[1,0]<stdout>:"
 *     (Open MPI), "(head, rank=0, pid=3808) [1,0]<stdout>:" (SkyPilot); a
 *     row is found by its type token (float, half, bfloat16, ...) with two
 *     whole numbers before it, and whatever precedes those is ignored;
 *   - any other line: "#" headers, launcher commands, NCCL and Open MPI
 *     messages between rows.  Those are ignored.
 * A line that starts like a data row (size, count, type) but whose remaining
 * columns are not numbers, or whose algbw disagrees with size/time by more
 * than print rounding (2 % or 0.02 GB/s, whichever is larger), is an error.
 *
 * Besides the rows the parser picks up, when present:
 *   op        the first "<name>_perf" in the text (command line, binary path or
 *             "# Collective test starting: all_reduce_perf"), or the name after
 *             "Collective test ...:"; SIM_OP_UNKNOWN when the text names
 *             none (then the caller must know it: a bare table of all_gather
 *             looks like one of alltoall).  Two different names are an error.
 *   ranks     the number of "#  Rank N Group G Pid P on HOST device D [BUS] GPU"
 *             lines before the first data row; 0 when the block is missing
 *   gpu_name  the GPU on the first of those lines, e.g. "NVIDIA H100 80GB HBM3"
 *   avg_busbw the "# Avg bus bandwidth : X" footer, in GB/s
 *
 * Errors, all in SIM_ERROR:
 *   SIM_ERROR_IO     the file cannot be read: "PATH: cannot read: REASON"
 *   SIM_ERROR_USAGE  malformed content: "PATH:LINE: expected ...", or
 *                    "PATH: expected nccl-tests output (size, count, type, ...
 *                    rows), found none"
 * (sim-error.h has no code for non-XML input; USAGE is the nearest: the user
 * gave the tool a file it cannot use.)
 *
 * A SimNcclResult is owned by the caller and freed with
 * sim_nccl_result_free(); it holds no pointer into the text parsed.
 */
#pragma once

#include <glib.h>

#include "sim-collop.h"

G_BEGIN_DECLS


typedef struct {
  guint64 size_bytes;        /* the "size (B)" column */
  guint64 count;             /* the "count (elements)" column */
  double time_us;            /* out of place */
  double algbw_GBps;         /* out of place, GB = 1e9 bytes as nccl-tests */
  double busbw_GBps;         /* out of place */
  double time_us_inplace;    /* NAN when the in-place columns are absent */
  double busbw_GBps_inplace; /* NAN when absent */
  int line;                  /* 1-based line in the file */
} SimNcclRow;

typedef struct {
  char *path;
  SimCollOp op;              /* SIM_OP_UNKNOWN when the text does not name it */
  int ranks;             /* device lines; 0 when the block is missing */
  char *gpu_name;        /* NULL when there are no device lines */
  GArray *rows;          /* SimNcclRow, in file order; never empty */
  double avg_busbw_GBps; /* "# Avg bus bandwidth", NAN if absent */
} SimNcclResult;

/* reads and parses path; NULL with error set on failure (codes above); any
 * thread */
SimNcclResult *sim_nccl_parse_file (const char *path, GError **error);

/* parses text (NUL-terminated); path_for_messages starts every error message
 * and is copied into the result; SIM_ERROR_USAGE only; any thread */
SimNcclResult *sim_nccl_parse_text (const char *path_for_messages, const char *text,
                                    GError **error);

/* NULL is ignored */
void sim_nccl_result_free (SimNcclResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimNcclResult, sim_nccl_result_free)


/* accepts the name above, the nccl-tests binary (all_reduce_perf, also with a
 * directory) and spellings without underscores or in CamelCase (allreduce,
 * AllReduce); FALSE for anything else, *out untouched */
gboolean sim_nccl_op_parse (const char *name, SimCollOp *out);


G_END_DECLS
