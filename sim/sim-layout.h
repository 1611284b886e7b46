/* sim-layout.h — Megatron-Core's pipeline layout string
 * (--pipeline-model-parallel-layout, PipelineParallelLayerLayout in
 * megatron/core/transformer/pipeline_parallel_layer_layout.py @00caa53a).
 *
 * The string lists the virtual stages in model order, k = chunk x pp +
 * stage, separated by '|':
 *
 *   E  the embedding          t  one decoder layer
 *   m  one MTP layer          L  the loss (output layer)
 *   X*N     the symbol X (any of the five, '|' too) N times
 *   (...)*N the group N times; groups may nest, 16 deep at most
 *   ,       ignored wherever it stands ("Et*3|(tt|)*29,t|L")
 *
 * so "Et*4|(t*4|)*14tmL" is 16 virtual stages holding 4, ..., 4, 1
 * decoder layers, the last one also the MTP layer.  A stage may hold no
 * layer ("E|t*4|t*4|L").  With pp pipeline ranks, the caller checks that
 * n is a multiple of pp (Megatron-Core's __init__) and that the counts
 * match the model (its validate_layer_layout).
 *
 * The expanded string must read E, then t and '|' in any order, then m,
 * then L: one E at the very start of the first stage, one L at the very
 * end of the last, and every m after every t in the last stage.  Each
 * rule, with where Megatron-Core enforces it (all in the file above), and
 * where sim is stricter:
 * - only E t m L | ( ) * digits and commas; commas are dropped before
 *   parsing, in numbers too (parse_str_to_list: replace(",", ""), then
 *   "Invalid layer character"); whitespace is refused, as there;
 * - X*N and (...)*N as parse_str_to_list's two regular expressions, a
 *   group non-empty and always followed by *N (its pattern needs both:
 *   a bare or empty group leaves '(' behind, an invalid character);
 *   N from 1 to SIM_LAYOUT_MAX_REPEAT (stricter: Megatron-Core takes 0,
 *   which deletes the symbol or group); nested groups are an extension:
 *   its pattern matches no nested group, leaving '(' behind;
 * - E first and exactly once, L last and exactly once
 *   (validate_layer_layout: "The first layer must be embedding", "The
 *   last layer must be loss", "must be specified exactly once"); stricter:
 *   its check is on the flattened layers, so it takes empty stages before
 *   E or after L ("|Et|L"), which sim refuses;
 * - no t after an m (validate_layer_layout: "decoder layers must be
 *   placed before MTP layers");
 * - every m in the last virtual stage.  Megatron-Core requires only the
 *   last virtual stage of some pipeline rank, all m in one stage
 *   (validate_layer_layout: "MTP should be always in the last virtual
 *   pipeline stage of that rank", "All of the MTP layers must be in the
 *   same one virtual pipeline stage"), and calls an MTP stage off the
 *   last rank "mtp_standalone": its documentation's DeepSeek-V3 example
 *   "Et*3|(tt|)*29,m|L" is one.  sim does not model a stage of its own
 *   for MTP, so such a layout is refused here;
 * - sim's own bounds, so that the arithmetic holds and the plan stays
 *   small: at most SIM_LAYOUT_MAX_STAGES virtual stages and
 *   SIM_LAYOUT_MAX_LAYERS layers (t and m) in all.
 *
 * Parsing takes time linear in the text and the number of stages, never
 * in the layers ("t*1000000" is one step) and never expands a repeat
 * before its size is checked; any byte string is either a layout or a
 * refusal, never a crash.  Errors are SIM_ERROR_USAGE, one line,
 *   --pipeline-model-parallel-layout: expected ..., got "..."
 * quoting at most SIM_LAYOUT_QUOTE_BYTES bytes of the text from the
 * first offending symbol on ("..." where the quote is cut, \xNN for a
 * byte outside printable ASCII).  Every function is pure: any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SIM_LAYOUT_MAX_REPEAT 1000000u
#define SIM_LAYOUT_MAX_DEPTH 16u
#define SIM_LAYOUT_MAX_STAGES 65536u
#define SIM_LAYOUT_MAX_LAYERS (G_GUINT64_CONSTANT (1) << 32)
#define SIM_LAYOUT_QUOTE_BYTES 40u

/* One pipeline layout: for each virtual stage k in model order (k = chunk
 * x pp + stage, as Megatron-Core numbers them), the decoder layers it
 * holds; mtp the multi-token prediction layers ('m'), which all sit in
 * the last virtual stage.  The embedding is at the start of stage 0, the
 * loss at the end of stage n - 1. */
typedef struct {
  guint n;         /* virtual stages (pp x virtual stages per rank), 1 .. SIM_LAYOUT_MAX_STAGES */
  guint64 *layers; /* n counts of 't', owned */
  guint64 mtp;     /* count of 'm' */
} SimLayout;

/* Fills *out from text (NUL-terminated).  *out need not be initialised
 * and its old contents are not freed; on failure it is zeroed and error
 * is set (SIM_ERROR_USAGE). */
gboolean sim_layout_parse (const char *text, SimLayout *out, GError **error);

/* frees layers and zeroes the layout; a zeroed layout is cleared again
 * safely */
void sim_layout_clear (SimLayout *layout);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SimLayout, sim_layout_clear)

/* The layout of sim_layout_parse as text, stable and parsing back to the
 * same layout: every stage written out, its layers as "t*N" ("t" for one,
 * nothing for none; a count above SIM_LAYOUT_MAX_REPEAT as
 * "(t*1000000)*Q" and the rest), e.g. "Et*4|(t*4|)*14tmL" gives
 * "Et*4|t*4|...|t*4|tmL".  Free with g_free. */
char *sim_layout_to_string (const SimLayout *layout);

G_END_DECLS
