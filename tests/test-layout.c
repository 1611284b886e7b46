/* test-layout.c — Megatron-Core's pipeline layout string
 * (--pipeline-model-parallel-layout, sim-layout.h): the examples with
 * their stages counted by hand, the limits at and one past their value,
 * the text form and its round trip, every refusal with its message, and
 * hostile inputs (deep, huge, random) refused quickly and safely */
#include <glib.h>
#include <string.h>

#include "sim-error.h"
#include "sim-layout.h"

#define PREFIX "--pipeline-model-parallel-layout: expected "

/* text parsed, asserting it parses and parses back from its text form */
static void
parse_ok (const char *text, SimLayout *out)
{
  g_autoptr (GError) error = NULL;
  g_auto (SimLayout) again = { 0 };
  g_autofree char *canon = NULL;
  g_assert_true (sim_layout_parse (text, out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (out->n, >=, 1);
  g_assert_nonnull (out->layers);
  canon = sim_layout_to_string (out);
  g_assert_true (sim_layout_parse (canon, &again, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (again.n, ==, out->n);
  g_assert_cmpmem (again.layers, again.n * sizeof (guint64), out->layers,
                   out->n * sizeof (guint64));
  g_assert_cmpuint (again.mtp, ==, out->mtp);
}

static guint64
sum (const SimLayout *l)
{
  guint64 s = 0;
  for (guint k = 0; k < l->n; k++)
    s += l->layers[k];
  return s;
}

/* the message of text's refusal, asserting its domain, code and form */
static char *
refused (const char *text)
{
  g_autoptr (GError) error = NULL;
  SimLayout l;
  memset (&l, 0xa5, sizeof l);
  g_assert_false (sim_layout_parse (text, &l, &error));
  g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
  g_assert_true (g_str_has_prefix (error->message, PREFIX));
  g_assert_nonnull (strstr (error->message, ", got \""));
  g_assert_null (strchr (error->message, '\n'));
  g_assert_true (g_str_has_suffix (error->message, "\""));
  g_assert_false (g_str_has_suffix (error->message, "."));
  /* "expected" and the longest want (~80), the quote 40 bytes at most,
   * each at most 4 when escaped, and the two ellipses */
  g_assert_cmpuint (strlen (error->message), <, 300);
  /* a refusal leaves the layout zeroed */
  g_assert_cmpuint (l.n, ==, 0);
  g_assert_null (l.layers);
  g_assert_cmpuint (l.mtp, ==, 0);
  return g_strdup (error->message);
}

/* the four layouts of the brief, counted by hand */
static void
test_examples (void)
{
  g_auto (SimLayout) a = { 0 };
  g_auto (SimLayout) b = { 0 };
  g_auto (SimLayout) c = { 0 };
  g_auto (SimLayout) d = { 0 };

  /* DeepSeek-V3 on pp 16 (or pp 8 x 2 virtual stages): "Et*4|" is stage
   * 0 with 4; "(t*4|)*14" opens and fills stages 1 .. 14 with 4 each;
   * "tmL" is stage 15: 1 t and the MTP layer.  16 stages, 15 x 4 + 1 =
   * 61 layers, DeepSeek-V3's */
  parse_ok ("Et*4|(t*4|)*14tmL", &a);
  g_assert_cmpuint (a.n, ==, 16);
  for (guint k = 0; k < 15; k++)
    g_assert_cmpuint (a.layers[k], ==, 4);
  g_assert_cmpuint (a.layers[15], ==, 1);
  g_assert_cmpuint (a.mtp, ==, 1);
  g_assert_cmpuint (sum (&a), ==, 61);

  /* "Et|" stage 0 with 1; "(tt|)*30" stages 1 .. 30 with 2 each; "mL"
   * stage 31 with no decoder layer, the MTP layer alone: 32 stages,
   * 1 + 30 x 2 = 61 layers */
  parse_ok ("Et|(tt|)*30mL", &b);
  g_assert_cmpuint (b.n, ==, 32);
  g_assert_cmpuint (b.layers[0], ==, 1);
  for (guint k = 1; k <= 30; k++)
    g_assert_cmpuint (b.layers[k], ==, 2);
  g_assert_cmpuint (b.layers[31], ==, 0);
  g_assert_cmpuint (b.mtp, ==, 1);
  g_assert_cmpuint (sum (&b), ==, 61);

  /* the embedding and the loss each on a stage of their own: 0, 4, 4, 0 */
  parse_ok ("E|t*4|t*4|L", &c);
  g_assert_cmpuint (c.n, ==, 4);
  g_assert_cmpuint (c.layers[0], ==, 0);
  g_assert_cmpuint (c.layers[1], ==, 4);
  g_assert_cmpuint (c.layers[2], ==, 4);
  g_assert_cmpuint (c.layers[3], ==, 0);
  g_assert_cmpuint (c.mtp, ==, 0);
  g_assert_cmpuint (sum (&c), ==, 8);

  /* no repeat at all: 3 and 3 */
  parse_ok ("Ettt|tttL", &d);
  g_assert_cmpuint (d.n, ==, 2);
  g_assert_cmpuint (d.layers[0], ==, 3);
  g_assert_cmpuint (d.layers[1], ==, 3);
  g_assert_cmpuint (d.mtp, ==, 0);
  g_assert_cmpuint (sum (&d), ==, 6);
}

/* the rest of the syntax Megatron-Core takes */
static void
test_syntax (void)
{
  /* commas are dropped wherever they stand (parse_str_to_list), in a
   * number too: "t*1,000" is 1000 layers; Primus writes "t*1,L" */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("Et*3,|(tt|)*2,t,|t*1,000,L", &l);
    /* 3 | 2 | 2 | 1 | 1000 */
    g_assert_cmpuint (l.n, ==, 5);
    g_assert_cmpuint (l.layers[0], ==, 3);
    g_assert_cmpuint (l.layers[1], ==, 2);
    g_assert_cmpuint (l.layers[2], ==, 2);
    g_assert_cmpuint (l.layers[3], ==, 1);
    g_assert_cmpuint (l.layers[4], ==, 1000);
  }
  /* Megatron-Core's documented empty stage, "E||t|L": 0, 0, 1, 0 */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E||t|L", &l);
    g_assert_cmpuint (l.n, ==, 4);
    g_assert_cmpuint (l.layers[0], ==, 0);
    g_assert_cmpuint (l.layers[1], ==, 0);
    g_assert_cmpuint (l.layers[2], ==, 1);
    g_assert_cmpuint (l.layers[3], ==, 0);
  }
  /* X*N repeats any symbol, '|' too (its pattern is "(.)\*(\d+)"):
   * "E|*3tL" is "E|||tL", 0, 0, 0, 1 */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E|*3tL", &l);
    g_assert_cmpuint (l.n, ==, 4);
    g_assert_cmpuint (l.layers[2], ==, 0);
    g_assert_cmpuint (l.layers[3], ==, 1);
  }
  /* a once-repeated E and L, and several MTP layers in a group: "E*1" is
   * "E", "(m*2)*3" six m; 2 t then 6 m: one stage */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E*1tt(m*2)*3L*1", &l);
    g_assert_cmpuint (l.n, ==, 1);
    g_assert_cmpuint (l.layers[0], ==, 2);
    g_assert_cmpuint (l.mtp, ==, 6);
  }
  /* nested groups: "(t|)*2" is "t|t|", the group "t|t|t|" and three of
   * it nine "t|": E t|t|...|t| L, ten stages, 1 x 9 then the loss's 0 */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E((t|)*2t|)*3L", &l);
    g_assert_cmpuint (l.n, ==, 10);
    for (guint k = 0; k < 9; k++)
      g_assert_cmpuint (l.layers[k], ==, 1);
    g_assert_cmpuint (l.layers[9], ==, 0);
  }
  /* a group's last stage joins the next copy's first: "(tt|t)*3" is
   * "tt|ttt|ttt|t" and the E before and "tL" after join the ends:
   * 2, 3, 3, 2 */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E(tt|t)*3tL", &l);
    g_assert_cmpuint (l.n, ==, 4);
    g_assert_cmpuint (l.layers[0], ==, 2);
    g_assert_cmpuint (l.layers[1], ==, 3);
    g_assert_cmpuint (l.layers[2], ==, 3);
    g_assert_cmpuint (l.layers[3], ==, 2);
  }
  /* a group without '|' multiplies: "(t*3t)*5" is 20 layers */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E(t*3t)*5L", &l);
    g_assert_cmpuint (l.n, ==, 1);
    g_assert_cmpuint (l.layers[0], ==, 20);
  }
  /* leading zeros are a number as Python's int reads them: 4 */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("Et*0004L", &l);
    g_assert_cmpuint (l.layers[0], ==, 4);
  }
}

/* each limit at its value, accepted; the refusals one past are below */
static void
test_limits (void)
{
  /* 65,535 '|': 65,536 stages, all without a layer */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E(|)*65535L", &l);
    g_assert_cmpuint (l.n, ==, SIM_LAYOUT_MAX_STAGES);
    g_assert_cmpuint (sum (&l), ==, 0);
  }
  /* 2^32 = 4,294,967,296 = 4,294 x 1,000,000 + 967,296 layers */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E(t*1000000)*4294t*967296L", &l);
    g_assert_cmpuint (l.n, ==, 1);
    g_assert_cmpuint (l.layers[0], ==, SIM_LAYOUT_MAX_LAYERS);
  }
  /* the same with one of them an m: 2^32 - 1 t and 1 m */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("E(t*1000000)*4294t*967295mL", &l);
    g_assert_cmpuint (l.layers[0], ==, SIM_LAYOUT_MAX_LAYERS - 1);
    g_assert_cmpuint (l.mtp, ==, 1);
  }
  /* the largest repeat */
  {
    g_auto (SimLayout) l = { 0 };
    parse_ok ("Et*1000000L", &l);
    g_assert_cmpuint (l.layers[0], ==, 1000000);
  }
  /* 16 groups deep, each twice: 2^16 = 65,536 layers */
  {
    g_auto (SimLayout) l = { 0 };
    GString *s = g_string_new ("E");
    g_autofree char *text = NULL;
    for (guint i = 0; i < SIM_LAYOUT_MAX_DEPTH; i++)
      g_string_append_c (s, '(');
    g_string_append_c (s, 't');
    for (guint i = 0; i < SIM_LAYOUT_MAX_DEPTH; i++)
      g_string_append (s, ")*2");
    g_string_append_c (s, 'L');
    text = g_string_free (s, FALSE);
    parse_ok (text, &l);
    g_assert_cmpuint (l.layers[0], ==, 65536);
  }
}

/* the text form: each stage written out */
static void
test_to_string (void)
{
  static const struct {
    const char *text, *canon;
  } cases[] = {
    { "E|t*4|t*4|L", "E|t*4|t*4|L" },
    { "Ettt|tttL", "Et*3|t*3L" },
    { "Et|(tt|)*3mL", "Et|t*2|t*2|t*2|mL" },
    { "E,t*4,|,(t*4|)*2,tmL", "Et*4|t*4|t*4|tmL" },
    { "E||t|L", "E||t|L" },
    { "Etm*3L", "Etm*3L" },
    /* counts above the largest repeat: 1,000,001 as 1,000,000 and one,
     * 2^32 as 4,294 of 1,000,000 and 967,296, and 2,000,000 m */
    { "E(t*1000)*1000tL", "Et*1000000tL" },
    { "E(t*1000000)*4294t*967296L", "E(t*1000000)*4294t*967296L" },
    { "Et(m*1000000)*2L", "Et(m*1000000)*2L" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_auto (SimLayout) l = { 0 };
    g_autofree char *canon = NULL;
    parse_ok (cases[i].text, &l);
    canon = sim_layout_to_string (&l);
    g_assert_cmpstr (canon, ==, cases[i].canon);
  }
  /* the two long examples: stage 0, then "|t*4" or "|t*2" per stage */
  {
    g_auto (SimLayout) l = { 0 };
    g_autofree char *canon = NULL;
    GString *want = g_string_new ("Et*4");
    g_autofree char *w = NULL;
    for (guint k = 1; k < 15; k++)
      g_string_append (want, "|t*4");
    g_string_append (want, "|tmL");
    w = g_string_free (want, FALSE);
    parse_ok ("Et*4|(t*4|)*14tmL", &l);
    canon = sim_layout_to_string (&l);
    g_assert_cmpstr (canon, ==, w);
  }
  {
    g_auto (SimLayout) l = { 0 };
    g_autofree char *canon = NULL;
    GString *want = g_string_new ("Et");
    g_autofree char *w = NULL;
    for (guint k = 1; k <= 30; k++)
      g_string_append (want, "|t*2");
    g_string_append (want, "|mL");
    w = g_string_free (want, FALSE);
    parse_ok ("Et|(tt|)*30mL", &l);
    canon = sim_layout_to_string (&l);
    g_assert_cmpstr (canon, ==, w);
  }
  /* clearing twice is safe */
  {
    SimLayout l = { 0 };
    parse_ok ("EtL", &l);
    sim_layout_clear (&l);
    sim_layout_clear (&l);
    g_assert_null (l.layers);
    g_assert_cmpuint (l.n, ==, 0);
  }
}

/* every refusal, with its whole message: what was expected, and the text
 * from the first offending symbol or group on */
static void
test_refusals (void)
{
  static const struct {
    const char *text, *want, *got;
  } cases[] = {
    /* nothing */
    { "", "a layout such as Et*4|t*4|L", "\"\"" },
    { ",,,", "a layout such as Et*4|t*4|L", "\",,,\"" },
    /* unknown symbols, whitespace, bytes outside ASCII escaped */
    { "Ex|L", "E, t, m, L, |, ( or )", "\"...x|L\"" },
    { "ET|L", "E, t, m, L, |, ( or )", "\"...T|L\"" },
    { "Et |L", "E, t, m, L, |, ( or )", "\"... |L\"" },
    { " Et|L", "E, t, m, L, |, ( or )", "\" Et|L\"" },
    { "Et|L\n", "E, t, m, L, |, ( or )", "\"...\\x0a\"" },
    { "E\tL", "E, t, m, L, |, ( or )", "\"...\\x09L\"" },
    { "\xff", "E, t, m, L, |, ( or )", "\"\\xff\"" },
    { "E\"L", "E, t, m, L, |, ( or )", "\"...\\\"L\"" },
    { "E4L", "E, t, m, L, |, ( or )", "\"...4L\"" },
    /* '*' without a symbol, a count or with one out of range */
    { "*tL", "a symbol or a group ( )*N before *", "\"*tL\"" },
    { "E(*2t)*2L", "a symbol or a group ( )*N before *", "\"...*2t)*2L\"" },
    { "Et*2*3L", "a symbol or a group ( )*N before *", "\"...*3L\"" },
    { "Et*|L", "a repeat count from 1 to 1000000 after *", "\"...*|L\"" },
    { "Et**2L", "a repeat count from 1 to 1000000 after *", "\"...**2L\"" },
    { "Et*", "a repeat count from 1 to 1000000 after *", "\"...*\"" },
    { "Et*0|L", "a repeat count from 1 to 1000000 after *", "\"...*0|L\"" },
    { "Et*00L", "a repeat count from 1 to 1000000 after *", "\"...*00L\"" },
    { "Et*1000001|L", "a repeat count from 1 to 1000000 after *", "\"...*1000001|L\"" },
    { "Et*99999999999999999999999999L", "a repeat count from 1 to 1000000 after *",
      "\"...*99999999999999999999999999L\"" },
    { "E(t|)*0L", "a repeat count from 1 to 1000000 after *", "\"...*0L\"" },
    /* groups: bare, empty, unbalanced */
    { "E(t|)L", "*N after a group ( )", "\"...L\"" },
    { "E(t|)2L", "*N after a group ( )", "\"...2L\"" },
    { "E(t|)", "*N after a group ( )", "\"E(t|)\"" },
    { "E()*2L", "a symbol inside ( )", "\"...()*2L\"" },
    { "E(,)*2L", "a symbol inside ( )", "\"...(,)*2L\"" },
    { "E(t|*2L", ") to close the group", "\"...(t|*2L\"" },
    { "E((t|)*2L", ") to close the group", "\"...((t|)*2L\"" },
    { "Et|)*2L", "( before )", "\"...)*2L\"" },
    /* E: missing, late, twice; Megatron-Core takes empty stages before
     * it ("|Et|L"), sim does not */
    { "t*4|L", "E (the embedding) once, at the start of the first stage", "\"t*4|L\"" },
    { "tE|L", "E (the embedding) once, at the start of the first stage", "\"tE|L\"" },
    { "|Et|L", "E (the embedding) once, at the start of the first stage", "\"|Et|L\"" },
    { "Et|EL", "E (the embedding) once, at the start of the first stage", "\"...EL\"" },
    { "E*2t|L", "E (the embedding) once, at the start of the first stage", "\"E*2t|L\"" },
    { "(Et|)*2L", "E (the embedding) once, at the start of the first stage", "\"(Et|)*2L\"" },
    /* L: missing, early, twice */
    { "Et*4|t*4", "L (the loss) once, at the end of the last stage", "\"Et*4|t*4\"" },
    { "Et|m", "L (the loss) once, at the end of the last stage", "\"Et|m\"" },
    { "EtL*2", "L (the loss) once, at the end of the last stage", "\"...L*2\"" },
    { "E(tL)*2", "L (the loss) once, at the end of the last stage", "\"...(tL)*2\"" },
    { "Et|L|", "nothing after L (the loss)", "\"...|\"" },
    { "EtLt", "nothing after L (the loss)", "\"...t\"" },
    { "EtLE", "nothing after L (the loss)", "\"...E\"" },
    /* m after L, outside the last stage, before a t */
    { "Et|Lm", "nothing after L (the loss)", "\"...m\"" },
    { "Etm|L", "m (the MTP layers) only in the last virtual stage", "\"...|L\"" },
    { "Et|(m|)*1L", "m (the MTP layers) only in the last virtual stage", "\"...|)*1L\"" },
    { "E(|m)*2L", "m (the MTP layers) only in the last virtual stage", "\"...(|m)*2L\"" },
    /* Megatron-Core's documented DeepSeek-V3 layout for pp 16 x 2: its
     * m on a stage of its own (pp rank 14), "mtp_standalone", which sim
     * does not model */
    { "Et*3|(tt|)*29,m|L", "m (the MTP layers) only in the last virtual stage", "\"...|L\"" },
    { "EtmtL", "every t (decoder layer) before the first m (MTP layer)", "\"...tL\"" },
    { "EmtL", "every t (decoder layer) before the first m (MTP layer)", "\"...tL\"" },
    { "E(tm)*2L", "every t (decoder layer) before the first m (MTP layer)", "\"...(tm)*2L\"" },
    /* one past each limit */
    { "E(|)*65536L", "at most 65536 virtual stages", "\"...(|)*65536L\"" },
    { "E|*65536L", "at most 65536 virtual stages", "\"...|*65536L\"" },
    { "E((|)*1000)*1000L", "at most 65536 virtual stages", "\"...((|)*1000)*1000L\"" },
    { "E(t*1000000)*4294t*967297L", "at most 4294967296 layers (t and m) in all",
      "\"...t*967297L\"" },
    { "E(t*1000000)*4294t*967296mL", "at most 4294967296 layers (t and m) in all", "\"...mL\"" },
    /* 10^24 layers: refused at the second group, built never */
    { "E(((t*1000000)*1000000)*1000000)*1000000L", "at most 4294967296 layers (t and m) in all",
      "\"...(t*1000000)*1000000)*1000000)*1000000L\"" },
    /* a long text is quoted 40 bytes from the offending symbol */
    { "Et*4|t*4|x*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|L", "E, t, m, L, |, ( or )",
      "\"...x*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|...\"" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *message = refused (cases[i].text);
    g_autofree char *want = g_strdup_printf (PREFIX "%s, got %s", cases[i].want, cases[i].got);
    g_assert_cmpstr (message, ==, want);
  }
}

static char *
repeat (const char *piece, guint n)
{
  GString *s = g_string_sized_new (strlen (piece) * n);
  for (guint i = 0; i < n; i++)
    g_string_append (s, piece);
  return g_string_free (s, FALSE);
}

/* refused, its message asserting want; and quickly: the parser works in
 * the text and the stages, so any of these takes microseconds; a second
 * is room for the slowest sanitizer build */
static void
refused_quickly (const char *text, const char *want)
{
  g_autoptr (GTimer) timer = g_timer_new ();
  g_autofree char *message = refused (text);
  g_autofree char *prefix = g_strconcat (PREFIX, want, ", got \"", NULL);
  g_assert_cmpfloat (g_timer_elapsed (timer, NULL), <, 1.0);
  g_assert_true (g_str_has_prefix (message, prefix));
}

static void
accepted_quickly (const char *text, guint n, guint64 layers)
{
  g_autoptr (GTimer) timer = g_timer_new ();
  g_autoptr (GError) error = NULL;
  g_auto (SimLayout) l = { 0 };
  g_assert_true (sim_layout_parse (text, &l, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (g_timer_elapsed (timer, NULL), <, 1.0);
  g_assert_cmpuint (l.n, ==, n);
  g_assert_cmpuint (sum (&l), ==, layers);
}

static void
test_hostile (void)
{
  g_autofree char *open = repeat ("(", 1000000);
  g_autofree char *close = repeat (")*1000000", 1000000);
  g_autofree char *deep = g_strconcat ("E", open, "t", close, "L", NULL);
  g_autofree char *deep17 = NULL;
  g_autofree char *t17 = repeat ("(", SIM_LAYOUT_MAX_DEPTH + 1);
  g_autofree char *c17 = repeat (")*1", SIM_LAYOUT_MAX_DEPTH + 1);
  g_autofree char *huge = NULL;
  g_autofree char *groups = repeat ("(t|)*2", 32767);
  g_autofree char *many = NULL;
  g_autofree char *commas = repeat (",", 1000000);
  g_autofree char *ts = repeat ("t", 1000000);
  g_autofree char *bars = repeat ("t|", 65536);

  /* a million '(' alone, and a million deep with a million-fold repeat
   * at every level: refused at the 17th '(', never built */
  refused_quickly (open, "groups nested at most 16 deep");
  refused_quickly (deep, "groups nested at most 16 deep");
  deep17 = g_strconcat ("E", t17, "t", c17, "L", NULL);
  refused_quickly (deep17, "groups nested at most 16 deep");
  /* 16 deep, each a million-fold: 10^96 layers, refused at the second
   * group closed */
  {
    g_autofree char *o16 = repeat ("(", SIM_LAYOUT_MAX_DEPTH);
    g_autofree char *c16 = repeat (")*1000000", SIM_LAYOUT_MAX_DEPTH);
    huge = g_strconcat ("E", o16, "t", c16, "L", NULL);
    refused_quickly (huge, "at most 4294967296 layers (t and m) in all");
  }
  {
    g_autofree char *o16 = repeat ("(", SIM_LAYOUT_MAX_DEPTH);
    g_autofree char *c16 = repeat (")*1000000", SIM_LAYOUT_MAX_DEPTH);
    g_autofree char *stages = g_strconcat ("E", o16, "|", c16, "L", NULL);
    refused_quickly (stages, "at most 65536 virtual stages");
  }
  /* a million layers one by one, a million commas, 65,536 '|' one too
   * many, and 32,767 small groups: 1 + 2 x 32,767 = 65,535 stages */
  {
    g_autofree char *t = g_strconcat ("E", ts, "L", NULL);
    g_autofree char *c = g_strconcat ("E", commas, "tL", NULL);
    g_autofree char *b = g_strconcat ("E", bars, "L", NULL);
    many = g_strconcat ("E", groups, "L", NULL);
    accepted_quickly (t, 1, 1000000);
    accepted_quickly (c, 1, 1);
    accepted_quickly (many, 65535, 65534);
    refused_quickly (b, "at most 65536 virtual stages");
    /* and the million commas as the whole text */
    refused_quickly (commas, "a layout such as Et*4|t*4|L");
  }
  /* three levels of 40 copies of a stage-making group: 64,000 stages
   * built by splices, each copied three times at most */
  accepted_quickly ("E(((t|)*40)*40)*40L", 64001, 64000);
}

/* never a crash, never a malformed message, on any short byte string:
 * every one and two bytes, then random strings over the layout's symbols
 * and a few others; whatever parses, parses back */
static void
test_bytes (void)
{
  static const char alphabet[] = "Etm L|()*0123456789,x\xff";
  char buf[65];
  guint accepted = 0;
  for (guint a = 1; a < 256; a++)
    for (guint b = 0; b < 256; b++) {
      g_autoptr (GError) error = NULL;
      g_auto (SimLayout) l = { 0 };
      buf[0] = (char) a;
      buf[1] = (char) b;
      buf[2] = '\0';
      if (!sim_layout_parse (buf, &l, &error)) {
        g_autofree char *message = refused (buf);
        g_assert_cmpstr (message, ==, error->message);
      } else {
        /* "EL" is the one two-byte layout */
        g_assert_cmpstr (buf, ==, "EL");
      }
    }
  for (guint i = 0; i < 20000; i++) {
    guint len = (guint) g_test_rand_int_range (0, 65);
    g_autoptr (GError) error = NULL;
    g_auto (SimLayout) l = { 0 };
    for (guint j = 0; j < len; j++)
      buf[j] = alphabet[g_test_rand_int_range (0, (int) sizeof alphabet - 1)];
    buf[len] = '\0';
    /* start most with E and end them with L, so that some parse */
    if (len >= 2 && g_test_rand_bit ()) {
      buf[0] = 'E';
      buf[len - 1] = 'L';
    }
    if (sim_layout_parse (buf, &l, &error)) {
      g_auto (SimLayout) again = { 0 };
      parse_ok (buf, &again);
      accepted++;
    } else {
      g_autofree char *message = refused (buf);
      g_assert_cmpstr (message, ==, error->message);
    }
  }
  g_test_message ("%u of 20000 random strings parsed", accepted);
  g_assert_cmpuint (accepted, >, 0);
}

/* The rules against a second, naive reading: random layouts that are
 * well formed (groups non-empty, counts 1 to 3, 3 deep at most), expanded
 * in full as Megatron-Core expands them, then checked against the
 * expansion's form E [t|]* m* L and counted stage by stage */
typedef struct {
  GString *text;
  GString *expanded;
} Gen;

static void
gen_items (Gen *g, guint depth)
{
  guint items = (guint) g_test_rand_int_range (1, 5);
  for (guint i = 0; i < items; i++) {
    guint count = g_test_rand_int_range (0, 3) == 0 ? (guint) g_test_rand_int_range (1, 4) : 1;
    if (depth < 3 && g_test_rand_int_range (0, 4) == 0) {
      Gen inner = { g_string_new (NULL), g_string_new (NULL) };
      gen_items (&inner, depth + 1);
      g_string_append_printf (g->text, "(%s)*%u", inner.text->str, count);
      for (guint c = 0; c < count; c++)
        g_string_append (g->expanded, inner.expanded->str);
      g_string_free (inner.text, TRUE);
      g_string_free (inner.expanded, TRUE);
    } else {
      /* mostly t and |, sometimes m, rarely a stray E or L */
      static const char weighted[] = "tttttt||||mmEL";
      char c = weighted[g_test_rand_int_range (0, (int) sizeof weighted - 1)];
      if (count > 1)
        g_string_append_printf (g->text, "%c*%u", c, count);
      else
        g_string_append_c (g->text, c);
      for (guint k = 0; k < count; k++)
        g_string_append_c (g->expanded, c);
    }
    if (g_test_rand_int_range (0, 8) == 0)
      g_string_append_c (g->text, ',');
  }
}

/* whether s is E [t|]* m* L */
static gboolean
naive_valid (const char *s)
{
  gsize n = strlen (s), i = 1;
  if (n < 2 || s[0] != 'E' || s[n - 1] != 'L')
    return FALSE;
  while (i < n - 1 && (s[i] == 't' || s[i] == '|'))
    i++;
  while (i < n - 1 && s[i] == 'm')
    i++;
  return i == n - 1;
}

static void
test_against_naive (void)
{
  guint accepted = 0, total = 20000;
  for (guint i = 0; i < total; i++) {
    Gen g = { g_string_new (NULL), g_string_new (NULL) };
    g_autoptr (GError) error = NULL;
    g_auto (SimLayout) l = { 0 };
    gboolean ok;
    /* most start with E and end with L, as a layout does */
    if (g_test_rand_int_range (0, 5) != 0) {
      g_string_append_c (g.text, 'E');
      g_string_append_c (g.expanded, 'E');
    }
    gen_items (&g, 0);
    if (g_test_rand_int_range (0, 5) != 0) {
      g_string_append_c (g.text, 'L');
      g_string_append_c (g.expanded, 'L');
    }
    ok = sim_layout_parse (g.text->str, &l, &error);
    if (ok != naive_valid (g.expanded->str))
      g_error ("%s (expanded %s): parsed %d, naively %d", g.text->str, g.expanded->str, ok, !ok);
    if (ok) {
      /* count t per '|'-separated stage, and m */
      guint k = 0;
      guint64 t = 0, m = 0;
      accepted++;
      for (const char *c = g.expanded->str; *c != '\0'; c++) {
        if (*c == '|') {
          g_assert_cmpuint (k, <, l.n);
          g_assert_cmpuint (l.layers[k], ==, t);
          k++;
          t = 0;
        } else if (*c == 't') {
          t++;
        } else if (*c == 'm') {
          m++;
        }
      }
      g_assert_cmpuint (k + 1, ==, l.n);
      g_assert_cmpuint (l.layers[k], ==, t);
      g_assert_cmpuint (l.mtp, ==, m);
    } else {
      g_assert_error (error, SIM_ERROR, SIM_ERROR_USAGE);
      g_assert_true (g_str_has_prefix (error->message, PREFIX));
    }
    g_string_free (g.text, TRUE);
    g_string_free (g.expanded, TRUE);
  }
  g_test_message ("%u of %u well-formed random layouts valid", accepted, total);
  g_assert_cmpuint (accepted, >, total / 20);
  g_assert_cmpuint (accepted, <, total);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/layout/examples", test_examples);
  g_test_add_func ("/layout/syntax", test_syntax);
  g_test_add_func ("/layout/limits", test_limits);
  g_test_add_func ("/layout/to-string", test_to_string);
  g_test_add_func ("/layout/refusals", test_refusals);
  g_test_add_func ("/layout/hostile", test_hostile);
  g_test_add_func ("/layout/bytes", test_bytes);
  g_test_add_func ("/layout/against-naive", test_against_naive);
  return g_test_run ();
}
