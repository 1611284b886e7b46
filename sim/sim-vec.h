/* sim-vec.h — a growable array whose append is inline.
 *
 * For the hot paths of the engine and the iteration builder, which append
 * one activity, one dependency or one span at a time, about two million
 * times per estimate of a long interleaved pipeline: GArray's append is a
 * call, a capacity check in another call and a memcpy call per element
 * (a quarter of such an estimate's instructions under callgrind), this one
 * a compare and a store.
 *
 *   SIM_VEC (guint32) v = { 0 };
 *   sim_vec_push (&v, 7);
 *   ... v.data[i], v.len ...
 *   sim_vec_clear (&v);
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* arrays from this size on are placed for huge pages (sim-vec.c) */
#define SIM_VEC_HUGE_BYTES ((gsize) 2 << 20)

#define SIM_VEC(T)                                                                                 \
  struct {                                                                                         \
    T *data;                                                                                       \
    guint len;                                                                                     \
    guint cap;                                                                                     \
  }

/* room for at least `want` elements of `elt` bytes: the capacity doubles
 * (from 64), so n pushes cost O(n) copies in all; aborts rather than
 * overflow.  Arrays of SIM_VEC_HUGE_BYTES and more go on huge pages where
 * the kernel offers them (sim-vec.c).  Returns the new data, which replaces
 * `data` (freed or moved) */
gpointer sim_vec_grow (gpointer data, guint *cap, gsize elt, guint want);

/* append x (an expression of the element type) */
#define sim_vec_push(v, x)                                                                         \
  G_STMT_START {                                                                                   \
    if (G_UNLIKELY ((v)->len == (v)->cap))                                                         \
      (v)->data = sim_vec_grow ((v)->data, &(v)->cap, sizeof *(v)->data, (v)->len + 1);            \
    (v)->data[(v)->len++] = (x);                                                                   \
  }                                                                                                \
  G_STMT_END

/* room for at least n elements (and one), the contents not kept: for
 * scratch that is filled anew */
#define sim_vec_room(v, n)                                                                         \
  G_STMT_START {                                                                                   \
    if ((v)->cap < MAX ((guint) (n), 1u)) {                                                        \
      g_free ((v)->data);                                                                          \
      (v)->data = NULL;                                                                            \
      (v)->cap = 0;                                                                                \
      (v)->data = sim_vec_grow ((v)->data, &(v)->cap, sizeof *(v)->data, MAX ((guint) (n), 1u));   \
    }                                                                                              \
  }                                                                                                \
  G_STMT_END

/* the length to 0, the room kept */
#define sim_vec_truncate(v) ((v)->len = 0)

/* the memory freed, the vector empty */
#define sim_vec_clear(v)                                                                           \
  G_STMT_START {                                                                                   \
    g_free ((v)->data);                                                                            \
    (v)->data = NULL;                                                                              \
    (v)->len = (v)->cap = 0;                                                                       \
  }                                                                                                \
  G_STMT_END

G_END_DECLS
