/* resolve-walk.c — apt's MarkInstall walk: which package meets each
 * dependency, the way apt chooses (first alternative that can be
 * installed; among providers, the package of that name, Essential, then
 * Priority), a later conflicting choice displacing an earlier one, the
 * dependents of a displaced package mended and what only it needed dropped.
 * Its choices become libsolv's jobs (resolve.c). */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/bitmap.h>
#include <solv/pool.h>
#include <solv/queue.h>

int
priority_rank (const char *priority)
{
  static const char *const order[] = { "required", "important", "standard", "optional", "extra" };
  for (guint i = 0; priority != NULL && i < G_N_ELEMENTS (order); i++)
    if (g_ascii_strcasecmp (priority, order[i]) == 0)
      return i + 1;
  return G_N_ELEMENTS (order);   /* absent: as "optional" */
}

typedef struct {
  Resolver *r;
  Id target;       /* the name the dependency is about */
} ProviderOrder;

/* apt's CompareProviders, for what matters on one architecture: the package
 * of the dependency's own name, then Essential, then Important/Protected,
 * then the more important Priority; otherwise the package apt created last
 * (the higher package id: apt numbers names in the order it first meets
 * them in the indices). */
static int
compare_providers (const void *pa, const void *pb, void *data)
{
  ProviderOrder *order = data;
  Resolver *r = order->r;
  Id a = *(const Id *) pa, b = *(const Id *) pb;
  Solvable *sa = r->pool->solvables + a, *sb = r->pool->solvables + b;

  gboolean own_a = sa->name == order->target, own_b = sb->name == order->target;
  if (own_a != own_b)
    return own_a ? -1 : 1;
  const PackagesFields *fa = packages_store_lookup (r->store, a);
  const PackagesFields *fb = packages_store_lookup (r->store, b);
  gboolean ess_a = fa && fa->essential, ess_b = fb && fb->essential;
  if (ess_a != ess_b)
    return ess_a ? -1 : 1;
  gboolean imp_a = fa && fa->important, imp_b = fb && fb->important;
  if (imp_a != imp_b)
    return imp_a ? -1 : 1;
  int rank_a = priority_rank (fa ? fa->priority : NULL);
  int rank_b = priority_rank (fb ? fb->priority : NULL);
  if (rank_a != rank_b)
    return rank_a - rank_b;
  guint met_a = packages_store_mention_rank (r->store, sa->name);
  guint met_b = packages_store_mention_rank (r->store, sb->name);
  if (met_a != met_b)
    return met_a > met_b ? -1 : 1;
  return b - a;
}

/* The solutions of a dependency in the order apt tries them: alternative by
 * alternative, providers of each sorted as above. */
static void
dep_solutions (Resolver *r, Id dep, Queue *out)
{
  Pool *pool = r->pool;
  Queue alt;
  queue_init (&alt);
  for (;;)
    {
      Id one = dep;
      Id rest = 0;
      if (ISRELDEP (dep) && GETRELDEP (pool, dep)->flags == REL_OR)
        {
          one = GETRELDEP (pool, dep)->name;
          rest = GETRELDEP (pool, dep)->evr;
        }
      queue_empty (&alt);
      Id p, pp;
      FOR_PROVIDES (p, pp, one)
        queue_push (&alt, p);
      ProviderOrder order = { r, dep_name (pool, one) };
      g_qsort_with_data (alt.elements, alt.count, sizeof (Id), compare_providers, &order);
      for (int i = 0; i < alt.count; i++)
        queue_pushunique (out, alt.elements[i]);
      if (rest == 0)
        break;
      dep = rest;
    }
  queue_free (&alt);
}

static gboolean
satisfied_by_marked (Resolver *r, Id dep)
{
  Pool *pool = r->pool;
  Id p, pp;
  FOR_PROVIDES (p, pp, dep)
    if (MAPTST (&r->marked, p))
      return TRUE;
  return FALSE;
}

static gboolean
conflicts_with_marked (Resolver *r, Id p)
{
  Pool *pool = r->pool;
  Solvable *s = pool->solvables + p;
  if (r->forbidden[p] > 0)
    return TRUE;
  if (!s->conflicts)
    return FALSE;
  for (Id *cp = s->repo->idarraydata + s->conflicts; *cp; cp++)
    {
      Id q, qq;
      FOR_PROVIDES (q, qq, *cp)
        if (q != p && MAPTST (&r->marked, q))
          return TRUE;
    }
  return FALSE;
}

static void
adjust_forbidden (Resolver *r, Id p, int delta)
{
  Pool *pool = r->pool;
  Solvable *s = pool->solvables + p;
  if (!s->conflicts)
    return;
  for (Id *cp = s->repo->idarraydata + s->conflicts; *cp; cp++)
    {
      Id q, qq;
      FOR_PROVIDES (q, qq, *cp)
        if (q != p)
          r->forbidden[q] += delta;
    }
}

static void
set_marked (Resolver *r, Id p, gboolean on)
{
  if (on)
    MAPSET (&r->marked, p);
  else
    MAPCLR (&r->marked, p);
  adjust_forbidden (r, p, on ? +1 : -1);
}

static void
mark (Resolver *r, Id p)
{
  set_marked (r, p, TRUE);
  queue_push (&r->log, p);
}

static void
unmark (Resolver *r, Id p)
{
  set_marked (r, p, FALSE);
  queue_push (&r->log, -p);
}

static void
undo_to (Resolver *r, int count)
{
  while (r->log.count > count)
    {
      Id e = queue_pop (&r->log);
      set_marked (r, e > 0 ? e : -e, e < 0);
    }
}

/* The marked packages, in the order they were first marked. */
void
marked_packages (Resolver *r, Queue *out)
{
  Map seen;
  map_init (&seen, r->pool->nsolvables);
  for (int i = 0; i < r->log.count; i++)
    {
      Id p = r->log.elements[i];
      if (p > 0 && MAPTST (&r->marked, p) && !MAPTST (&seen, p))
        {
          MAPSET (&seen, p);
          queue_push (out, p);
        }
    }
  map_free (&seen);
}

static gboolean mark_dependencies (Resolver *r, Id p, int depth);

/* apt's MarkInstall: a package that conflicts with packages apt chose
 * earlier on its own (not asked for, not waiting for their dependencies)
 * takes their place; their dependents are mended afterwards (repair()). */
static gboolean
try_mark (Resolver *r, Id p, int depth)
{
  Pool *pool = r->pool;
  if (MAPTST (&r->marked, p))
    return TRUE;
  if (r->budget == 0 || depth > WALK_MAX_DEPTH || r->forbidden[p] > 0)
    return FALSE;

  Queue displaced;
  queue_init (&displaced);
  Solvable *s = pool->solvables + p;
  for (Id *cp = s->conflicts ? s->repo->idarraydata + s->conflicts : NULL; cp && *cp; cp++)
    {
      Id q, qq;
      FOR_PROVIDES (q, qq, *cp)
        if (q != p && MAPTST (&r->marked, q))
          queue_pushunique (&displaced, q);
    }
  for (int i = 0; i < displaced.count; i++)
    if (MAPTST (&r->requested, displaced.elements[i])
        || MAPTST (&r->in_progress, displaced.elements[i]))
      {
        queue_free (&displaced);
        return FALSE;
      }

  r->budget--;
  int undo = r->log.count;
  for (int i = 0; i < displaced.count; i++)
    unmark (r, displaced.elements[i]);
  queue_free (&displaced);
  mark (r, p);
  if (r->trace)
    g_printerr ("%*sInstalling %s\n", 2 * depth, "", solvable_name (r, p));
  MAPSET (&r->in_progress, p);
  gboolean ok = mark_dependencies (r, p, depth);
  MAPCLR (&r->in_progress, p);
  if (!ok)
    undo_to (r, undo);
  return ok;
}

static gboolean
satisfy (Resolver *r, Id dep, int depth)
{
  if (satisfied_by_marked (r, dep))
    return TRUE;
  Queue solutions;
  queue_init (&solutions);
  dep_solutions (r, dep, &solutions);
  gboolean ok = FALSE;
  for (int i = 0; i < solutions.count && !ok; i++)
    ok = try_mark (r, solutions.elements[i], depth + 1);
  if (!ok && r->trace)
    {
      g_autofree char *str = dep_to_string (r->pool, dep);
      g_printerr ("%*s(none of %d solutions of %s can be installed)\n", 2 * depth, "",
                  solutions.count, str);
    }
  queue_free (&solutions);
  return ok;
}

/* Pre-Depends, then Depends, each in the order written; then Recommends
 * when asked (a Recommends that cannot be met is not a failure). */
static gboolean
mark_dependencies (Resolver *r, Id p, int depth)
{
  DepLists *l = dep_lists (r, p);
  for (int i = 0; i < l->pre_depends.count; i++)
    if (!satisfy (r, l->pre_depends.elements[i], depth))
      return FALSE;
  for (int i = 0; i < l->depends.count; i++)
    if (!satisfy (r, l->depends.elements[i], depth))
      return FALSE;
  for (int i = 0; r->recommends && i < l->recommends.count; i++)
    satisfy (r, l->recommends.elements[i], depth);
  return TRUE;
}

/* The dependencies of marked packages that a displaced package left
 * unmet, met again the same way (apt's problem resolver does this at the
 * end of a run). */
static void
repair (Resolver *r)
{
  for (int round = 0; round < 8; round++)
    {
      gboolean changed = FALSE;
      Queue marked;
      queue_init (&marked);
      marked_packages (r, &marked);
      for (int i = 0; i < marked.count; i++)
        {
          Id p = marked.elements[i];
          if (!MAPTST (&r->marked, p))
            continue;
          DepLists *l = dep_lists (r, p);
          for (int pass = 0; pass < 2; pass++)
            {
              Queue *list = pass == 0 ? &l->pre_depends : &l->depends;
              for (int j = 0; j < list->count; j++)
                {
                  if (satisfied_by_marked (r, list->elements[j]))
                    continue;
                  changed = TRUE;
                  MAPSET (&r->in_progress, p);
                  satisfy (r, list->elements[j], 0);
                  MAPCLR (&r->in_progress, p);
                }
            }
        }
      queue_free (&marked);
      if (!changed)
        return;
    }
}

/* apt does not install a package it marked along the way that nothing
 * needs any more (the dependencies of a displaced package): what is not
 * reachable from the requested and already installed packages through
 * Depends, Pre-Depends, Recommends or Suggests (apt's MarkAndSweep) is
 * dropped. */
static void
sweep (Resolver *r, Queue *installed)
{
  Pool *pool = r->pool;
  Map kept;
  map_init (&kept, pool->nsolvables);
  Queue todo;
  queue_init (&todo);
  Queue marked;
  queue_init (&marked);
  marked_packages (r, &marked);
  Map roots;
  map_init_clone (&roots, &r->requested);
  for (int i = 0; installed != NULL && i < installed->count; i++)
    MAPSET (&roots, installed->elements[i]);
  for (int i = 0; i < marked.count; i++)
    {
      Id p = marked.elements[i];
      if (MAPTST (&roots, p))
        {
          MAPSET (&kept, p);
          queue_push (&todo, p);
        }
    }
  while (todo.count > 0)
    {
      Solvable *s = pool->solvables + queue_pop (&todo);
      Offset lists[] = { s->requires, s->recommends, s->suggests };
      for (guint l = 0; l < G_N_ELEMENTS (lists); l++)
        for (Id *dp = lists[l] ? s->repo->idarraydata + lists[l] : NULL; dp && *dp; dp++)
          {
            Id q, qq;
            if (*dp == SOLVABLE_PREREQMARKER)
              continue;
            FOR_PROVIDES (q, qq, *dp)
              if (MAPTST (&r->marked, q) && !MAPTST (&kept, q))
                {
                  MAPSET (&kept, q);
                  queue_push (&todo, q);
                }
          }
    }
  for (int i = 0; i < marked.count; i++)
    if (!MAPTST (&kept, marked.elements[i]))
      unmark (r, marked.elements[i]);
  queue_free (&marked);
  queue_free (&todo);
  map_free (&kept);
  map_free (&roots);
}

/* Whatever failed on the way, what counts is the end: every target in,
 * every dependency of what is in met. */
static gboolean
walk_holds (Resolver *r, Queue *targets)
{
  for (int i = 0; i < targets->count; i++)
    if (!MAPTST (&r->marked, targets->elements[i]))
      return FALSE;
  gboolean holds = TRUE;
  Queue marked;
  queue_init (&marked);
  marked_packages (r, &marked);
  for (int i = 0; i < marked.count && holds; i++)
    {
      DepLists *l = dep_lists (r, marked.elements[i]);
      for (int j = 0; j < l->pre_depends.count && holds; j++)
        holds = satisfied_by_marked (r, l->pre_depends.elements[j]);
      for (int j = 0; j < l->depends.count && holds; j++)
        holds = satisfied_by_marked (r, l->depends.elements[j]);
    }
  queue_free (&marked);
  return holds;
}

/* One apt run: mark every target (as apt-get install does first), then
 * walk their dependencies in order. */
void
walk_phase (Resolver *r, Queue *targets, Queue *installed)
{
  for (int i = 0; i < targets->count; i++)
    {
      Id p = targets->elements[i];
      MAPSET (&r->requested, p);
      if (MAPTST (&r->marked, p))
        continue;
      if (!conflicts_with_marked (r, p))
        mark (r, p);
    }
  for (int i = 0; i < targets->count; i++)
    {
      Id p = targets->elements[i];
      if (!MAPTST (&r->marked, p))
        continue;
      MAPSET (&r->in_progress, p);
      mark_dependencies (r, p, 0);
      MAPCLR (&r->in_progress, p);
    }
  repair (r);
  sweep (r, installed);
  r->walk_failed = !walk_holds (r, targets);
}
