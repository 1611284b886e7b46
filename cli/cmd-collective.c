/* cmd-collective.c — `sim collective`: a simulated nccl-tests sweep */
#include <stdio.h>

#include "sim-collective.h"
#include "cli.h"
#include "sim-error.h"
#include "sim-io.h"
#include "sim-json.h"
#include "sim-paths.h"
#include "sim-units.h"

static const char *usage =
    "usage: sim collective --topology FILE|NAME [--nodes N] --gpus N\n"
    "                      --op all_reduce|all_gather|reduce_scatter|broadcast|sendrecv|all_to_all\n"
    "                      [--min-bytes SIZE] [--max-bytes SIZE]\n"
    "                      [--algo ring|tree|hier|nvls|nvlstree|auto] [--proto LL|LL128|Simple|auto]\n"
    "                      [--calibration FILE] [--json FILE|-] [--nccl-log]\n"
    "\n"
    "Simulates the collective on the first N GPUs of the topology at every size from\n"
    "min to max, doubling, and prints a table in the layout of nccl-tests (time in us,\n"
    "algbw and busbw in GB/s with GB = 10^9 bytes, busbw with nccl-tests' factors).\n"
    "A SIZE has its unit: 8B, 1MiB, 16GiB (the defaults are 8B and 16GiB).\n"
    "all_to_all is NCCL's grouped send/recv: SIZE is what each rank sends in all, SIZE/N\n"
    "to each rank, as nccl-tests' alltoall_perf (algorithm ring, protocol Simple).\n"
    "--nccl-log adds, after the table, the line NCCL logs on rank 0 for each size under\n"
    "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING (without its channel range), to hold\n"
    "against your own log.\n";

typedef struct {
  guint64 size;
  double time_s;
  SimCollChoice choice;
} Row;

/* what to simulate: the collective, how, and the sizes from min to max, doubling */
typedef struct {
  SimCollOp op;
  SimAlgo algo;
  SimProto proto;
  guint64 min_bytes, max_bytes;
} Sweep;

static gboolean
parse_op_algo_proto (const char *op_s, const char *algo_s, const char *proto_s, Sweep *sw,
                     GError **error)
{
  if (!sim_coll_op_parse (op_s, &sw->op)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--op: expected all_reduce, all_gather, reduce_scatter, broadcast, sendrecv or all_to_all, got '%s'", op_s);
    return FALSE;
  }
  if (algo_s != NULL && !sim_algo_parse (algo_s, &sw->algo)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--algo: expected ring, tree, hier, nvls, nvlstree or auto, got '%s'", algo_s);
    return FALSE;
  }
  if (proto_s != NULL) {
    if (g_ascii_strcasecmp (proto_s, "LL") == 0) sw->proto = SIM_PROTO_LL;
    else if (g_ascii_strcasecmp (proto_s, "LL128") == 0) sw->proto = SIM_PROTO_LL128;
    else if (g_ascii_strcasecmp (proto_s, "Simple") == 0) sw->proto = SIM_PROTO_SIMPLE;
    else if (g_ascii_strcasecmp (proto_s, "auto") == 0) sw->proto = SIM_PROTO_AUTO;
    else {
      g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--proto: expected LL, LL128, Simple or auto, got '%s'", proto_s);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
parse_sizes (const char *min_s, const char *max_s, Sweep *sw, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (min_s != NULL && !sim_units_parse_bytes (min_s, &sw->min_bytes, &local)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--min-bytes: %s", local->message);
    return FALSE;
  }
  if (max_s != NULL && !sim_units_parse_bytes (max_s, &sw->max_bytes, &local)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, "--max-bytes: %s", local->message);
    return FALSE;
  }
  if (sw->min_bytes == 0 || sw->min_bytes > sw->max_bytes ||
      sw->max_bytes > (G_GUINT64_CONSTANT (1) << 40)) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "--min-bytes/--max-bytes: expected 0 < min <= max <= 1TiB");
    return FALSE;
  }
  return TRUE;
}

/* one Row per size, each on a fresh engine */
static gboolean
simulate_sizes (const SimTopology *topo, const Sweep *sw, const int *gpus, int n, GArray *rows,
                GError **error)
{
  for (guint64 size = sw->min_bytes; size <= sw->max_bytes; size *= 2) {
    g_autoptr (SimEngine) e = sim_engine_new ();
    g_autoptr (SimNetwork) net = sim_network_new (topo, e);
    Row r = { size, 0, { 0 } };
    if (!sim_collective_choose (net, sw->op, gpus, n, (double) size, sw->algo, sw->proto,
                                &r.choice, error)) {
      g_prefix_error (error, "--algo: ");
      return FALSE;
    }
    r.time_s = r.choice.predicted_s;
    g_array_append_val (rows, r);
    if (size > G_MAXUINT64 / 2)
      break;
  }
  return TRUE;
}

static char *
rows_json (const SimTopology *topo, SimCollOp op, int n, GArray *rows)
{
  SimJson j;

  sim_json_init (&j, TRUE);
  sim_json_begin_object (&j, NULL);
  sim_json_string (&j, "schema", "sim-collective/1");
  sim_json_string (&j, "op", sim_coll_op_name (op));
  sim_json_int (&j, "gpus", n);
  sim_json_string (&j, "topology", topo->name);
  sim_json_begin_array (&j, "rows");
  for (guint i = 0; i < rows->len; i++) {
    Row *r = &g_array_index (rows, Row, i);
    double algbw = (double) r->size / r->time_s / 1e9;
    g_autofree char *algo_name = g_strdup_printf ("%s/%s", sim_algo_name (r->choice.algo),
                                                  sim_proto_name (r->choice.proto));
    sim_json_begin_object (&j, NULL);
    sim_json_uint (&j, "size_bytes", r->size);
    sim_json_double (&j, "time_us", r->time_s * 1e6);
    sim_json_double (&j, "algbw_GBps", algbw);
    sim_json_double (&j, "busbw_GBps", algbw * sim_coll_op_busbw_factor (op, n));
    sim_json_string (&j, "algo", algo_name);
    sim_json_end_object (&j);
  }
  sim_json_end_array (&j);
  sim_json_end_object (&j);
  return sim_json_finish (&j);
}

/* the table in the layout of nccl-tests */
static void
print_rows (const SimTopology *topo, const Sweep *sw, int n, GArray *rows)
{
  SimCollOp op = sw->op;

  printf ("# sim collective: %s on %d GPU%s of %s (%d node%s), algo %s, proto %s\n", sim_coll_op_name (op), n,
          n == 1 ? "" : "s", topo->name, topo->n_nodes, topo->n_nodes == 1 ? "" : "s",
          sim_algo_name (sw->algo), sim_proto_name (sw->proto));
  printf ("#\n");
  printf ("#%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %s\n", "size", "count", "type", "redop",
          "root", "time", "algbw", "busbw", "algo/proto");
  printf ("#%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s\n", "(B)", "(elements)", "", "", "", "(us)",
          "(GB/s)", "(GB/s)");
  for (guint i = 0; i < rows->len; i++) {
    Row *r = &g_array_index (rows, Row, i);
    double algbw = (double) r->size / r->time_s / 1e9;
    guint64 count = r->size / 4;
    /* nccl-tests prints the per-rank piece (alltoall_perf: count/nranks) */
    if (op == SIM_OP_ALL_GATHER || op == SIM_OP_REDUCE_SCATTER || op == SIM_OP_ALLTOALL)
      count /= (guint64) n;
    printf (" %12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %s/%s\n",
            r->size, count, "float", op == SIM_OP_ALL_GATHER || op == SIM_OP_BROADCAST || op == SIM_OP_SENDRECV || op == SIM_OP_ALLTOALL ? "none" : "sum",
            op == SIM_OP_BROADCAST ? 0 : -1, r->time_s * 1e6, algbw,
            algbw * sim_coll_op_busbw_factor (op, n), sim_algo_name (r->choice.algo),
            sim_proto_name (r->choice.proto));
  }
}

/* each size's line as NCCL's tuner logs it, or why there is none */
static void
print_nccl_log (const Sweep *sw, int n, GArray *rows)
{
  printf ("#\n# as NCCL logs it on rank 0 (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING; channel range not modelled):\n");
  for (guint i = 0; i < rows->len; i++) {
    Row *r = &g_array_index (rows, Row, i);
    g_autofree char *line = sim_collective_nccl_log_line (sw->op, n, (double) r->size, &r->choice);
    if (line != NULL)
      printf ("NCCL INFO %s\n", line);
    else
      printf ("# %" G_GUINT64_FORMAT " B: no tuning line (%s)\n", r->size,
              r->choice.algo == SIM_ALGO_HIER ? "hier is sim's three phases, not an NCCL algorithm"
                                              : "point-to-point operations");
  }
}

int
sim_cmd_collective (int argc, char **argv, GError **error)
{
  g_autofree char *topology = NULL, *nodes_s = NULL, *op_s = NULL, *gpus_s = NULL;
  g_autofree char *min_s = NULL, *max_s = NULL, *algo_s = NULL, *proto_s = NULL, *json = NULL;
  g_autofree char *calibration = NULL;
  g_autoptr (SimTopology) topo = NULL;
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (Row));
  g_autofree int *gpus = NULL;
  gboolean help = FALSE, nccl_log = FALSE;
  const SimCliOption options[] = {
    { "topology", TRUE, &topology, NULL, NULL }, { "nodes", TRUE, &nodes_s, NULL, NULL },
    { "op", TRUE, &op_s, NULL, NULL }, { "gpus", TRUE, &gpus_s, NULL, NULL },
    { "min-bytes", TRUE, &min_s, NULL, NULL }, { "max-bytes", TRUE, &max_s, NULL, NULL },
    { "algo", TRUE, &algo_s, NULL, NULL }, { "proto", TRUE, &proto_s, NULL, NULL },
    { "json", TRUE, &json, NULL, NULL }, { "calibration", TRUE, &calibration, NULL, NULL }, { "help", FALSE, NULL, &help, NULL },
    { "nccl-log", FALSE, NULL, &nccl_log, NULL }, { NULL, FALSE, NULL, NULL, NULL },
  };
  int nodes = 0, n = 0;
  Sweep sw = { SIM_OP_ALL_REDUCE, SIM_ALGO_AUTO, SIM_PROTO_AUTO, 8, G_GUINT64_CONSTANT (16) << 30 };

  if (!sim_cli_parse (argc, argv, 2, options, "collective", error))
    return 2;
  if (help) {
    fputs (usage, stdout);
    return 0;
  }
  if (topology == NULL || op_s == NULL || gpus_s == NULL) {
    g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE,
                 "collective: expected --topology, --op and --gpus; see sim collective --help");
    return 2;
  }
  if (nodes_s != NULL && !sim_cli_int ("nodes", nodes_s, 1, 65536, &nodes, error))
    return 2;
  if (!parse_op_algo_proto (op_s, algo_s, proto_s, &sw, error) ||
      !parse_sizes (min_s, max_s, &sw, error))
    return 2;
  topo = sim_cli_load_topology (topology, nodes, 0, calibration, error);
  if (topo == NULL)
    return 2;
  if (!sim_cli_int ("gpus", gpus_s, sw.op == SIM_OP_SENDRECV ? 2 : 1,
                    sw.op == SIM_OP_SENDRECV ? 2 : sim_topology_n_gpus (topo), &n, error))
    return 2;
  gpus = g_new (int, n);
  for (int i = 0; i < n; i++)
    gpus[i] = sw.op == SIM_OP_SENDRECV && i == 1 ? sim_topology_n_gpus (topo) > 1 ? 1 : 0 : i;
  if (!simulate_sizes (topo, &sw, gpus, n, rows, error))
    return 2;

  if (json != NULL) {
    g_autofree char *text = rows_json (topo, sw.op, n, rows);
    gboolean done = FALSE;
    if (!sim_cli_write_json (json, text, &done, error))
      return 2;
    if (done)
      return 0;
  }
  print_rows (topo, &sw, n, rows);
  if (nccl_log)
    print_nccl_log (&sw, n, rows);
  return 0;
}
