/* sim-layout.c — see sim-layout.h for the grammar and its rules.
 *
 * One left-to-right pass.  The order rules (E t|... m... L) are checked by
 * a four-state automaton run over the text as if every repeat were 1, and
 * each repeat N >= 2 is then checked on its own: repeating a piece keeps
 * the expansion in the language exactly when the piece holds no E, no L,
 * and not an m beside a t or a '|' (otherwise the copies put a second E
 * or L, or a t or '|' after an m); pieces of only t and '|', or only m,
 * repeat freely.  So the automaton never sees the expansion and the error
 * names the first offending symbol or group of the text.
 *
 * The counts are built bottom-up: each open group is a frame holding the
 * stages it spans (its first and last open, to be joined with what
 * surrounds it) and its totals; closing a group splices N copies into the
 * frame below.  A copy of a group without '|' is a multiplication, so the
 * work is linear in the text and the stages, never in the layers, and
 * every size is checked against the limits before anything is built:
 * repeats are at least 1, so no frame ever holds more than the whole
 * layout will. */
#include "sim-layout.h"

#include <string.h>

#include "sim-error.h"

#define PREFIX "--pipeline-model-parallel-layout: expected "

/* what each refusal expected; the symbol names as Megatron-Core's
 * documentation gives them */
#define WANT_SYMBOL "E, t, m, L, |, ( or )"
#define WANT_LAYOUT "a layout such as Et*4|t*4|L"
#define WANT_OPERAND "a symbol or a group ( )*N before *"
#define WANT_COUNT "a repeat count from 1 to 1000000 after *"
#define WANT_OPEN "( before )"
#define WANT_CLOSE ") to close the group"
#define WANT_GROUP_STAR "*N after a group ( )"
#define WANT_GROUP_BODY "a symbol inside ( )"
#define WANT_DEPTH "groups nested at most 16 deep"
#define WANT_STAGES "at most 65536 virtual stages"
#define WANT_LAYERS "at most 4294967296 layers (t and m) in all"
#define WANT_E "E (the embedding) once, at the start of the first stage"
#define WANT_L "L (the loss) once, at the end of the last stage"
#define WANT_END "nothing after L (the loss)"
#define WANT_M_STAGE "m (the MTP layers) only in the last virtual stage"
#define WANT_M_ORDER "every t (decoder layer) before the first m (MTP layer)"

G_STATIC_ASSERT (SIM_LAYOUT_MAX_REPEAT == 1000000u);
G_STATIC_ASSERT (SIM_LAYOUT_MAX_DEPTH == 16u);
G_STATIC_ASSERT (SIM_LAYOUT_MAX_STAGES == 65536u);

/* where the expanded string has got to in E [t|]* m* L */
typedef enum {
  STATE_START, /* nothing yet */
  STATE_BODY,  /* after E: t and | */
  STATE_MTP,   /* after the first m: m */
  STATE_END,   /* after L: nothing */
} State;

/* the symbols a group holds, for the repeat rule */
enum { SEEN_E = 1 << 0, SEEN_T = 1 << 1, SEEN_M = 1 << 2, SEEN_L = 1 << 3, SEEN_BAR = 1 << 4 };

typedef struct {
  GArray *stages; /* guint64 t per stage; the first and last are open */
  guint64 layers; /* t and m in the frame, all its stages */
  guint64 mtp;
  gsize open; /* offset of the frame's '(' */
  guint seen; /* SEEN_* */
} Frame;

typedef struct {
  const char *text;
  gsize len;
  gsize pos;
  State state;
  guint depth; /* open groups: frames[0 .. depth] are live */
  Frame frames[SIM_LAYOUT_MAX_DEPTH + 1];
} Parser;

static void
parser_clear (Parser *p)
{
  for (guint i = 0; i < G_N_ELEMENTS (p->frames); i++)
    if (p->frames[i].stages != NULL)
      g_array_unref (g_steal_pointer (&p->frames[i].stages));
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Parser, parser_clear)

static void
frame_init (Frame *f, gsize open)
{
  guint64 zero = 0;
  if (f->stages == NULL)
    f->stages = g_array_new (FALSE, TRUE, sizeof (guint64));
  g_array_set_size (f->stages, 0);
  g_array_append_val (f->stages, zero);
  f->layers = 0;
  f->mtp = 0;
  f->open = open;
  f->seen = 0;
}

/* text from offset on, quoted for a message: SIM_LAYOUT_QUOTE_BYTES bytes
 * at most, "..." for what is cut on either side, and every byte outside
 * printable ASCII (a newline too) escaped so that the message stays one
 * short line */
static char *
quote (const char *text, gsize len, gsize from)
{
  GString *s = g_string_new ("\"");
  gsize to = MIN (len, from + SIM_LAYOUT_QUOTE_BYTES);
  if (from > 0)
    g_string_append (s, "...");
  for (gsize i = from; i < to; i++) {
    guchar c = (guchar) text[i];
    if (c == '"' || c == '\\')
      g_string_append_printf (s, "\\%c", c);
    else if (c < 0x20 || c > 0x7e)
      g_string_append_printf (s, "\\x%02x", c);
    else
      g_string_append_c (s, (char) c);
  }
  if (to < len)
    g_string_append (s, "...");
  g_string_append_c (s, '"');
  return g_string_free (s, FALSE);
}

/* the refusal of the text at offset at; at the end of the text, its last
 * bytes, where the missing symbol should have been */
static gboolean
fail (const Parser *p, gsize at, const char *want, GError **error)
{
  g_autofree char *got = NULL;
  if (at >= p->len)
    at = p->len - MIN (p->len, SIM_LAYOUT_QUOTE_BYTES);
  got = quote (p->text, p->len, at);
  g_set_error (error, SIM_ERROR, SIM_ERROR_USAGE, PREFIX "%s, got %s", want, got);
  return FALSE;
}

/* the byte at *i or after it that is not a comma, '\0' at the end:
 * Megatron-Core drops every comma before it parses (parse_str_to_list) */
static char
peek (const Parser *p, gsize *i)
{
  while (*i < p->len && p->text[*i] == ',')
    (*i)++;
  return *i < p->len ? p->text[*i] : '\0';
}

/* "*N" at p->pos: *count N; without a '*', 1 unless required */
static gboolean
parse_count (Parser *p, gboolean required, const char *want_star, guint64 *count, GError **error)
{
  gsize i = p->pos, star;
  guint64 n = 0;
  gboolean digits = FALSE;
  if (peek (p, &i) != '*') {
    if (required)
      return fail (p, i, want_star, error);
    *count = 1;
    return TRUE;
  }
  star = i++;
  /* saturate, so that no count of digits overflows */
  while (g_ascii_isdigit (peek (p, &i))) {
    n = MIN (n * 10 + (guint64) (p->text[i] - '0'), (guint64) SIM_LAYOUT_MAX_REPEAT + 1);
    digits = TRUE;
    i++;
  }
  if (!digits || n == 0 || n > SIM_LAYOUT_MAX_REPEAT)
    return fail (p, star, WANT_COUNT, error);
  p->pos = i;
  *count = n;
  return TRUE;
}

/* one symbol through the automaton; the refusal, or NULL */
static const char *
step (State *state, char c)
{
  switch (*state) {
  case STATE_START:
    if (c != 'E')
      return WANT_E;
    *state = STATE_BODY;
    return NULL;
  case STATE_BODY:
    switch (c) {
    case 't':
    case '|': return NULL;
    case 'm': *state = STATE_MTP; return NULL;
    case 'L': *state = STATE_END; return NULL;
    default: return WANT_E;
    }
  case STATE_MTP:
    switch (c) {
    case 'm': return NULL;
    case 'L': *state = STATE_END; return NULL;
    case 't': return WANT_M_ORDER;
    case '|': return WANT_M_STAGE;
    default: return WANT_E;
    }
  case STATE_END: return WANT_END;
  }
  return WANT_SYMBOL;
}

/* why a piece holding seen may not be repeated twice or more, or NULL */
static const char *
repeat_refusal (guint seen)
{
  if (seen & SEEN_E)
    return WANT_E;
  if (seen & SEEN_L)
    return WANT_L;
  if ((seen & SEEN_M) && (seen & SEEN_BAR))
    return WANT_M_STAGE;
  if ((seen & SEEN_M) && (seen & SEEN_T))
    return WANT_M_ORDER;
  return NULL;
}

/* symbol c, at offset at, count times into the innermost frame */
static gboolean
add_symbol (Parser *p, char c, gsize at, guint64 count, GError **error)
{
  Frame *f = &p->frames[p->depth];
  guint64 *last;
  switch (c) {
  case 'E': f->seen |= SEEN_E; break;
  case 'L': f->seen |= SEEN_L; break;
  case 't':
  case 'm':
    if (count > SIM_LAYOUT_MAX_LAYERS - f->layers)
      return fail (p, at, WANT_LAYERS, error);
    f->layers += count;
    if (c == 'm') {
      f->mtp += count;
      f->seen |= SEEN_M;
    } else {
      last = &g_array_index (f->stages, guint64, f->stages->len - 1);
      *last += count;
      f->seen |= SEEN_T;
    }
    break;
  case '|':
    if (count > SIM_LAYOUT_MAX_STAGES - f->stages->len)
      return fail (p, at, WANT_STAGES, error);
    g_array_set_size (f->stages, f->stages->len + (guint) count);
    f->seen |= SEEN_BAR;
    break;
  default: g_assert_not_reached ();
  }
  return TRUE;
}

/* closes the innermost group, repeated count times, into the frame below */
static gboolean
close_group (Parser *p, guint64 count, GError **error)
{
  Frame *g = &p->frames[p->depth];
  Frame *f = &p->frames[p->depth - 1];
  const guint64 *gv = (const guint64 *) (gpointer) g->stages->data;
  guint64 s = g->stages->len - 1; /* the group's '|' */
  guint64 *fv;
  gsize old, k;
  /* both limits before anything is built: the quotients never overflow */
  if (s > 0 && count > (SIM_LAYOUT_MAX_STAGES - f->stages->len) / s)
    return fail (p, g->open, WANT_STAGES, error);
  if (g->layers > 0 && count > (SIM_LAYOUT_MAX_LAYERS - f->layers) / g->layers)
    return fail (p, g->open, WANT_LAYERS, error);
  old = f->stages->len;
  g_array_set_size (f->stages, (guint) (old + count * s));
  fv = (guint64 *) (gpointer) f->stages->data;
  if (s == 0) {
    fv[old - 1] += count * gv[0];
  } else {
    /* copy r's last stage is joined with copy r + 1's first */
    fv[old - 1] += gv[0];
    k = old;
    for (guint64 r = 0; r < count; r++) {
      for (guint64 j = 1; j < s; j++)
        fv[k++] = gv[j];
      fv[k++] = gv[s] + (r + 1 < count ? gv[0] : 0);
    }
  }
  f->layers += count * g->layers;
  f->mtp += count * g->mtp;
  f->seen |= g->seen;
  p->depth--;
  return TRUE;
}

gboolean
sim_layout_parse (const char *text, SimLayout *out, GError **error)
{
  g_auto (Parser) p = { 0 };
  Frame *top;
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  memset (out, 0, sizeof *out);
  p.text = text;
  p.len = strlen (text);
  p.state = STATE_START;
  frame_init (&p.frames[0], 0);

  for (;;) {
    gsize at = p.pos;
    char c = peek (&p, &at);
    guint64 count;
    const char *refusal;
    if (c == '\0')
      break;
    p.pos = at + 1;
    switch (c) {
    case 'E':
    case 't':
    case 'm':
    case 'L':
    case '|':
      if ((refusal = step (&p.state, c)) != NULL)
        return fail (&p, at, refusal, error);
      if (!parse_count (&p, FALSE, NULL, &count, error))
        return FALSE;
      if (count > 1 && (c == 'E' || c == 'L'))
        return fail (&p, at, c == 'E' ? WANT_E : WANT_L, error);
      if (!add_symbol (&p, c, at, count, error))
        return FALSE;
      break;
    case '(':
      if (p.depth == SIM_LAYOUT_MAX_DEPTH)
        return fail (&p, at, WANT_DEPTH, error);
      frame_init (&p.frames[++p.depth], at);
      break;
    case ')':
      if (p.depth == 0)
        return fail (&p, at, WANT_OPEN, error);
      /* Megatron-Core's group pattern needs a symbol inside and a count */
      if (p.frames[p.depth].seen == 0)
        return fail (&p, p.frames[p.depth].open, WANT_GROUP_BODY, error);
      if (!parse_count (&p, TRUE, WANT_GROUP_STAR, &count, error))
        return FALSE;
      if (count > 1 && (refusal = repeat_refusal (p.frames[p.depth].seen)) != NULL)
        return fail (&p, p.frames[p.depth].open, refusal, error);
      if (!close_group (&p, count, error))
        return FALSE;
      break;
    case '*': return fail (&p, at, WANT_OPERAND, error);
    default: return fail (&p, at, WANT_SYMBOL, error);
    }
  }

  if (p.depth > 0)
    return fail (&p, p.frames[p.depth].open, WANT_CLOSE, error);
  switch (p.state) {
  case STATE_START: return fail (&p, 0, WANT_LAYOUT, error);
  case STATE_BODY:
  case STATE_MTP: return fail (&p, p.len, WANT_L, error);
  case STATE_END: break;
  }

  top = &p.frames[0];
  out->n = top->stages->len;
  out->layers = (guint64 *) (gpointer) g_array_free (g_steal_pointer (&top->stages), FALSE);
  out->mtp = top->mtp;
  return TRUE;
}

void
sim_layout_clear (SimLayout *layout)
{
  g_return_if_fail (layout != NULL);
  g_clear_pointer (&layout->layers, g_free);
  layout->n = 0;
  layout->mtp = 0;
}

/* count copies of symbol c in a form that parses: no repeat above
 * SIM_LAYOUT_MAX_REPEAT */
static void
append_run (GString *s, char c, guint64 count)
{
  guint64 whole = count / SIM_LAYOUT_MAX_REPEAT, rest = count % SIM_LAYOUT_MAX_REPEAT;
  if (whole == 1)
    g_string_append_printf (s, "%c*%u", c, SIM_LAYOUT_MAX_REPEAT);
  else if (whole > 1)
    g_string_append_printf (s, "(%c*%u)*%" G_GUINT64_FORMAT, c, SIM_LAYOUT_MAX_REPEAT, whole);
  if (rest == 1)
    g_string_append_c (s, c);
  else if (rest > 1)
    g_string_append_printf (s, "%c*%" G_GUINT64_FORMAT, c, rest);
}

char *
sim_layout_to_string (const SimLayout *layout)
{
  GString *s;
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (layout->n > 0 && layout->layers != NULL, NULL);
  s = g_string_new ("E");
  for (guint k = 0; k < layout->n; k++) {
    if (k > 0)
      g_string_append_c (s, '|');
    append_run (s, 't', layout->layers[k]);
  }
  append_run (s, 'm', layout->mtp);
  g_string_append_c (s, 'L');
  return g_string_free (s, FALSE);
}
