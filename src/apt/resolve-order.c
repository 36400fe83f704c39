/* resolve-order.c — the result: the packages libsolv installs, in install
 * order.
 *
 * Dependencies before the packages that need them, as dpkg would unpack
 * them.  libsolv's transaction_order() does this too, but where it must
 * choose (cycles, independent packages) its choice follows internal ids,
 * which differ between a parsed index and a cached one; the order must be a
 * function of the packages alone.  So: strongly connected components of the
 * dependency graph, dependencies first, smallest name first where nothing
 * else decides; inside a cycle Pre-Depends are kept and Depends give way. */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/pool.h>
#include <solv/queue.h>
#include <solv/solver.h>
#include <solv/transaction.h>

typedef struct {
  int n;
  Id *ids;                /* the packages, by name */
  Queue *deps;            /* node -> nodes it (pre-)depends on */
  Queue *predeps;         /* node -> nodes it pre-depends on */
  int *comp;              /* node -> component */
  int ncomp;
  /* Tarjan's algorithm */
  int *low, *num, counter;
  Queue stack;
  char *on_stack;
} OrderGraph;

static void
strongconnect (OrderGraph *g, int v)
{
  g->num[v] = g->low[v] = ++g->counter;
  queue_push (&g->stack, v);
  g->on_stack[v] = 1;
  for (int i = 0; i < g->deps[v].count; i++)
    {
      int w = g->deps[v].elements[i];
      if (g->num[w] == 0)
        {
          strongconnect (g, w);
          g->low[v] = MIN (g->low[v], g->low[w]);
        }
      else if (g->on_stack[w])
        g->low[v] = MIN (g->low[v], g->num[w]);
    }
  if (g->low[v] == g->num[v])
    {
      int w;
      do
        {
          w = queue_pop (&g->stack);
          g->on_stack[w] = 0;
          g->comp[w] = g->ncomp;
        }
      while (w != v);
      g->ncomp++;
    }
}

/* Kahn's algorithm over NODES (a subset, by index): repeatedly emit the
 * smallest node whose EDGES all point at emitted nodes (or outside the
 * subset); when none is free (a cycle), the smallest remaining one. */
static void
emit_in_order (OrderGraph *g, Queue *nodes, Queue *edges, char *done, Queue *out)
{
  int left = nodes->count;
  while (left > 0)
    {
      int pick = -1, fallback = -1;
      for (int i = 0; i < nodes->count && pick < 0; i++)
        {
          int v = nodes->elements[i];
          if (done[v])
            continue;
          if (fallback < 0)
            fallback = v;
          gboolean ready = TRUE;
          for (int j = 0; j < edges[v].count && ready; j++)
            {
              int w = edges[v].elements[j];
              ready = done[w] || g->comp[w] != g->comp[v];
            }
          if (ready)
            pick = v;
        }
      if (pick < 0)
        pick = fallback;
      done[pick] = 1;
      queue_push (out, g->ids[pick]);
      left--;
    }
}

/* The edges of node V: to each package of the set that meets one of its
 * Pre-Depends or Depends (NODE: solvable -> node + 1). */
static void
add_dependency_edges (OrderGraph *g, Resolver *r, GHashTable *node, int v)
{
  Pool *pool = r->pool;
  DepLists *l = dep_lists (r, g->ids[v]);
  for (int pass = 0; pass < 2; pass++)
    {
      Queue *list = pass == 0 ? &l->pre_depends : &l->depends;
      for (int i = 0; i < list->count; i++)
        {
          Id q, qq;
          FOR_PROVIDES (q, qq, list->elements[i])
            {
              int w = GPOINTER_TO_INT (g_hash_table_lookup (node, GINT_TO_POINTER (q))) - 1;
              if (w < 0 || w == v)
                continue;
              queue_pushunique (&g->deps[v], w);
              if (pass == 0)
                queue_pushunique (&g->predeps[v], w);
            }
        }
    }
}

/* The dependency graph of SET, its nodes in name order, its strongly
 * connected components found. */
static void
order_graph_init (OrderGraph *g, Resolver *r, Queue *set)
{
  g->n = set->count;
  g->ids = g_memdup2 (set->elements, sizeof (Id) * MAX (g->n, 1));
  g_qsort_with_data (g->ids, g->n, sizeof (Id), compare_names, r);
  GHashTable *node = g_hash_table_new (NULL, NULL);
  for (int i = 0; i < g->n; i++)
    g_hash_table_insert (node, GINT_TO_POINTER (g->ids[i]), GINT_TO_POINTER (i + 1));

  g->deps = g_new0 (Queue, MAX (g->n, 1));
  g->predeps = g_new0 (Queue, MAX (g->n, 1));
  for (int v = 0; v < g->n; v++)
    {
      queue_init (&g->deps[v]);
      queue_init (&g->predeps[v]);
      add_dependency_edges (g, r, node, v);
    }
  g_hash_table_unref (node);

  g->comp = g_new0 (int, MAX (g->n, 1));
  g->low = g_new0 (int, MAX (g->n, 1));
  g->num = g_new0 (int, MAX (g->n, 1));
  g->on_stack = g_new0 (char, MAX (g->n, 1));
  queue_init (&g->stack);
  for (int v = 0; v < g->n; v++)
    if (g->num[v] == 0)
      strongconnect (g, v);
}

static void
order_graph_clear (OrderGraph *g)
{
  for (int v = 0; v < g->n; v++)
    {
      queue_free (&g->deps[v]);
      queue_free (&g->predeps[v]);
    }
  g_free (g->deps);
  g_free (g->predeps);
  g_free (g->comp);
  g_free (g->low);
  g_free (g->num);
  g_free (g->on_stack);
  g_free (g->ids);
  queue_free (&g->stack);
}

/* The component to emit next: one whose dependencies are all emitted (or
 * inside it), the one with the smallest name first.  MEMBERS: component ->
 * its nodes, in name order. */
static int
next_component (OrderGraph *g, Queue *members, const char *comp_done)
{
  int pick = -1, pick_first = G_MAXINT;
  for (int c = 0; c < g->ncomp; c++)
    {
      if (comp_done[c] || members[c].elements[0] >= pick_first)
        continue;
      gboolean ready = TRUE;
      for (int i = 0; i < members[c].count && ready; i++)
        {
          int v = members[c].elements[i];
          for (int j = 0; j < g->deps[v].count && ready; j++)
            {
              int w = g->deps[v].elements[j];
              ready = g->comp[w] == c || comp_done[g->comp[w]];
            }
        }
      if (ready)
        {
          pick = c;
          pick_first = members[c].elements[0];
        }
    }
  g_assert (pick >= 0);   /* the components form a DAG */
  return pick;
}

/* Components in dependency order: Kahn over the components, the one with
 * the smallest name first; each component's packages by Pre-Depends. */
static void
install_order (Resolver *r, Queue *set, Queue *out)
{
  OrderGraph g = { 0 };
  order_graph_init (&g, r, set);

  Queue *members = g_new0 (Queue, MAX (g.ncomp, 1));
  for (int c = 0; c < g.ncomp; c++)
    queue_init (&members[c]);
  for (int v = 0; v < g.n; v++)
    queue_push (&members[g.comp[v]], v);
  char *comp_done = g_new0 (char, MAX (g.ncomp, 1));
  char *done = g_new0 (char, MAX (g.n, 1));
  for (int emitted = 0; emitted < g.ncomp; emitted++)
    {
      int pick = next_component (&g, members, comp_done);
      comp_done[pick] = 1;
      emit_in_order (&g, &members[pick], g.predeps, done, out);
    }

  for (int c = 0; c < g.ncomp; c++)
    queue_free (&members[c]);
  g_free (members);
  g_free (comp_done);
  g_free (done);
  order_graph_clear (&g);
}

GPtrArray *
collect_result (Resolver *r, Solver *solv)
{
  Pool *pool = r->pool;
  Queue installed, order;
  queue_init (&installed);
  queue_init (&order);
  Transaction *trans = solver_create_transaction (solv);
  for (int i = 0; i < trans->steps.count; i++)
    {
      Id p = trans->steps.elements[i];
      if (transaction_type (trans, p, SOLVER_TRANSACTION_SHOW_ACTIVE) == SOLVER_TRANSACTION_INSTALL)
        queue_push (&installed, p);
    }
  transaction_free (trans);
  install_order (r, &installed, &order);

  GPtrArray *result = g_ptr_array_new_with_free_func ((GDestroyNotify) deb_package_free);
  int unmatched = 0;
  for (int i = 0; i < order.count; i++)
    {
      Id p = order.elements[i];
      ResolveSource *source = pool->solvables[p].repo->appdata;
      g_ptr_array_add (result, packages_store_describe (r->store, p, source->name));
      if (!MAPTST (&r->marked, p))
        {
          unmatched++;
          g_debug ("resolve: libsolv chose %s %s, which the apt walk did not",
                   solvable_name (r, p), solvable_version (r, p));
        }
    }
  Queue marked;
  queue_init (&marked);
  marked_packages (r, &marked);
  if (unmatched != 0 || (guint) marked.count != result->len)
    g_debug ("resolve: apt walk chose %d packages, libsolv installs %u (%d not from the walk)",
             marked.count, result->len, unmatched);
  queue_free (&marked);
  queue_free (&installed);
  queue_free (&order);
  return result;
}
