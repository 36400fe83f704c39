/* resolve.c — which packages apt would install, solved by libsolv.
 *
 * libsolv finds *a* solution; apt's is a particular one.  Three things make
 * them the same:
 *
 * - Candidates.  apt installs only a package's candidate version: the one
 *   from the source with the highest pin priority, the highest version among
 *   equals (or the version the request names).  Every other version is left
 *   out of the pool's "considered" map, so libsolv never sees it.
 *
 * - Choices.  Where a dependency has several solutions ("a | b", a virtual
 *   package), apt takes the first alternative that can be installed, and
 *   among the providers of one alternative the package of that name, then an
 *   Essential one, then the higher Priority.  A dependency that an already
 *   chosen package satisfies needs nothing new, and a package once chosen
 *   stays, unless a later choice conflicts with it: then the later one
 *   takes its place, what depended on it is mended, and what only it needed
 *   is dropped (apt's problem resolver and MarkAndSweep).  We walk the
 *   dependencies the way apt's MarkInstall does (depth first, in the order
 *   written, Pre-Depends before Depends) and have libsolv install exactly
 *   what the walk chose; when the walk gets stuck, its choices become
 *   SOLVER_FAVOR jobs and libsolv finds the way (or the problems to report).
 *
 * - Phases.  mmdebstrap installs the Essential set first and everything else
 *   (Priority sets, build-essential, the user's packages) in a second apt run
 *   on top of it, so the second run's choices see the first run's packages
 *   as installed.  The walk runs the phases in that order.
 *
 * libsolv checks the result (conflicts, versions) and reports problems in
 * the unsolvable case; the install order is computed here (see
 * install_order()). */

#define _GNU_SOURCE
#include "config.h"

#include "apt/resolve.h"
#include "base/util.h"

#include <string.h>

#include <solv/bitmap.h>
#include <solv/evr.h>
#include <solv/policy.h>
#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/solver.h>
#include <solv/transaction.h>

/* apt's MarkInstall walk gives up (leaving the rest to libsolv) after this
 * many tries, so a pathological index cannot make it run away. */
#define WALK_BUDGET 2000000
#define WALK_MAX_DEPTH 256

static const char *const variants[] = {
  "essential", "apt", "minbase", "required", "buildd", "important", "standard", "custom", NULL
};

const char *const *
resolve_variants (void)
{
  return variants;
}

ResolveSource *
resolve_source_new (const char *name, int pin_priority)
{
  ResolveSource *source = g_new0 (ResolveSource, 1);
  source->name = g_strdup (name);
  source->pin_priority = pin_priority;
  source->index_paths = g_ptr_array_new_with_free_func (g_free);
  return source;
}

void
resolve_source_free (ResolveSource *source)
{
  if (source == NULL)
    return;
  g_free (source->name);
  g_ptr_array_unref (source->index_paths);
  g_free (source);
}

/* One entry of the request: "name", "name:arch", "name=version". */
typedef struct {
  char *spec;
  char *name;
  char *arch;       /* NULL when not given */
  char *version;    /* NULL when not given */
} RequestItem;

static void
request_item_free (RequestItem *item)
{
  g_free (item->spec);
  g_free (item->name);
  g_free (item->arch);
  g_free (item->version);
  g_free (item);
}

static RequestItem *
request_item_parse (const char *spec, GError **error)
{
  g_autofree char *name = NULL;
  RequestItem *item = g_new0 (RequestItem, 1);
  item->spec = g_strdup (spec);

  const char *eq = strchr (spec, '=');
  name = eq ? g_strndup (spec, eq - spec) : g_strdup (spec);
  if (eq != NULL)
    item->version = g_strdup (eq + 1);
  char *colon = strchr (name, ':');
  if (colon != NULL)
    {
      item->arch = g_strdup (colon + 1);
      *colon = '\0';
    }
  item->name = g_steal_pointer (&name);
  if (*item->name == '\0' || (item->version != NULL && *item->version == '\0')
      || (item->arch != NULL && *item->arch == '\0') || strpbrk (item->name, " \t,|()") != NULL)
    {
      util_fail (error, "\"%s\" is not a package: write name, name=version or name:arch", spec);
      request_item_free (item);
      return NULL;
    }
  return item;
}

typedef struct {
  Pool *pool;
  PackagesStore *store;
  Id arch;                  /* the image's architecture */
  gboolean recommends;

  Id *candidate;            /* name id -> the candidate solvable */
  int ncandidate;
  Map considered;

  /* The apt walk. */
  Map marked;
  Queue log;                /* +p: p marked, -p: p unmarked (to undo a failed try) */
  Map requested;            /* the runs' targets: never unmarked */
  Map in_progress;          /* packages whose dependencies are being walked */
  int *forbidden;           /* solvable -> how many marked packages conflict with it */
  guint budget;
  GHashTable *dep_lists;    /* solvable -> DepLists, filled as the walk goes */
  gboolean walk_failed;     /* some target's dependencies could not be met */
  gboolean trace;           /* $A2O_RESOLVE_TRACE: print the walk as apt's Debug::pkgDepCache::AutoInstall does */
} Resolver;

static void
resolver_free (Resolver *r)
{
  if (r->store != NULL)
    packages_store_free (r->store);
  g_free (r->candidate);
  g_free (r->forbidden);
  map_free (&r->considered);
  if (r->dep_lists != NULL)
    g_hash_table_unref (r->dep_lists);
  map_free (&r->marked);
  map_free (&r->requested);
  map_free (&r->in_progress);
  queue_free (&r->log);
  if (r->pool != NULL)
    {
      r->pool->considered = NULL;
      pool_free (r->pool);
    }
  g_free (r);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Resolver, resolver_free)

static const char *
solvable_name (Resolver *r, Id p)
{
  return pool_id2str (r->pool, r->pool->solvables[p].name);
}

static const char *
solvable_version (Resolver *r, Id p)
{
  return pool_id2str (r->pool, r->pool->solvables[p].evr);
}

static int
source_pin (Resolver *r, Id p)
{
  ResolveSource *source = r->pool->solvables[p].repo->appdata;
  return source->pin_priority;
}

/* Packages of the image's architecture or "all" from a usable source. */
static gboolean
solvable_usable (Resolver *r, Id p)
{
  Solvable *s = r->pool->solvables + p;
  if (s->repo == NULL || s->name == 0)
    return FALSE;
  if (s->arch != r->arch && s->arch != ARCH_ALL)
    return FALSE;
  return source_pin (r, p) >= 0;
}

/* apt's candidate rule: higher pin priority, then higher version; the first
 * source listed wins a tie. */
static gboolean
better_candidate (Resolver *r, Id a, Id b)
{
  int pa = source_pin (r, a), pb = source_pin (r, b);
  if (pa != pb)
    return pa > pb;
  return pool_evrcmp (r->pool, r->pool->solvables[a].evr, r->pool->solvables[b].evr,
                      EVRCMP_COMPARE) > 0;
}

static Id
candidate_of (Resolver *r, Id name)
{
  if (name <= 0 || name >= r->ncandidate)
    return 0;
  return r->candidate[name];
}

static void
compute_candidates (Resolver *r)
{
  Pool *pool = r->pool;
  r->ncandidate = pool->ss.nstrings;
  r->candidate = g_new0 (Id, r->ncandidate);
  for (Id p = 2; p < pool->nsolvables; p++)
    {
      if (!solvable_usable (r, p))
        continue;
      Id name = pool->solvables[p].name;
      Id cur = r->candidate[name];
      if (cur == 0 || better_candidate (r, p, cur))
        r->candidate[name] = p;
    }
}

/* "name=version": that version becomes the candidate, as with apt-get
 * install name=version. */
static gboolean
pin_requested_version (Resolver *r, RequestItem *item, GError **error)
{
  Pool *pool = r->pool;
  Id name = pool_str2id (pool, item->name, 0);
  Id evr = pool_str2id (pool, item->version, 0);
  Id best = 0;
  g_autoptr(GPtrArray) available = g_ptr_array_new ();

  for (Id p = 2; name != 0 && p < pool->nsolvables; p++)
    {
      Solvable *s = pool->solvables + p;
      if (s->name != name || !solvable_usable (r, p))
        continue;
      if (item->arch != NULL && !g_str_equal (pool_id2str (pool, s->arch), item->arch))
        continue;
      if (evr != 0 && s->evr == evr)
        {
          if (best == 0 || source_pin (r, p) > source_pin (r, best))
            best = p;
        }
      else
        g_ptr_array_add (available, (gpointer) pool_id2str (pool, s->evr));
    }
  if (best == 0)
    {
      if (available->len == 0)
        return util_fail (error, "package \"%s\" is not in any source", item->name);
      g_ptr_array_add (available, NULL);
      g_autofree char *list = g_strjoinv (", ", (char **) available->pdata);
      return util_fail (error, "package \"%s\" has no version \"%s\" in any source (available: %s)",
                        item->name, item->version, list);
    }
  r->candidate[name] = best;
  return TRUE;
}

static int
priority_rank (const char *priority)
{
  static const char *const order[] = { "required", "important", "standard", "optional", "extra" };
  for (guint i = 0; priority != NULL && i < G_N_ELEMENTS (order); i++)
    if (g_ascii_strcasecmp (priority, order[i]) == 0)
      return i + 1;
  return G_N_ELEMENTS (order);   /* absent: as "optional" */
}

/* The name a dependency is about, without version or ":any". */
static Id
dep_name (Pool *pool, Id dep)
{
  while (ISRELDEP (dep))
    {
      Reldep *rd = GETRELDEP (pool, dep);
      if (rd->flags == REL_OR)
        return 0;
      dep = rd->name;
    }
  return dep;
}

/* A dependency the way a Packages file writes it. */
static void
append_dep (Pool *pool, GString *out, Id dep)
{
  if (!ISRELDEP (dep))
    {
      g_string_append (out, pool_id2str (pool, dep));
      return;
    }
  Reldep *rd = GETRELDEP (pool, dep);
  if (rd->flags == REL_OR)
    {
      append_dep (pool, out, rd->name);
      g_string_append (out, " | ");
      append_dep (pool, out, rd->evr);
      return;
    }
  if (rd->flags == REL_MULTIARCH)
    {
      append_dep (pool, out, rd->name);
      g_string_append_printf (out, ":%s", pool_id2str (pool, rd->evr));
      return;
    }
  const char *op = NULL;
  switch (rd->flags)
    {
    case REL_EQ: op = "="; break;
    case REL_GT | REL_EQ: op = ">="; break;
    case REL_LT | REL_EQ: op = "<="; break;
    case REL_GT: op = ">>"; break;
    case REL_LT: op = "<<"; break;
    default: break;
    }
  append_dep (pool, out, rd->name);
  if (op != NULL)
    g_string_append_printf (out, " (%s %s)", op, pool_id2str (pool, rd->evr));
}

static char *
dep_to_string (Pool *pool, Id dep)
{
  GString *out = g_string_new (NULL);
  append_dep (pool, out, dep);
  return g_string_free (out, FALSE);
}

/* --- dependencies in the order the Packages file writes them ---
 *
 * apt walks a package's dependencies in the order they are written; libsolv
 * keeps them in that order when it parses an index but not in its .solv
 * cache (which sorts them).  So the walk reads the fields we keep and turns
 * them into the very same ids libsolv made of them (ids are unique per name,
 * version and relation, so parsing "b (>= 2) | c" again finds libsolv's). */

typedef struct {
  Queue pre_depends, depends, recommends;
} DepLists;

static void
dep_lists_free (DepLists *l)
{
  queue_free (&l->pre_depends);
  queue_free (&l->depends);
  queue_free (&l->recommends);
  g_free (l);
}

/* One alternative, or an OR of the rest: as libsolv's repo_deb.c reads it. */
static Id
parse_dep (Pool *pool, const char **pp, const char *end)
{
  const char *p = *pp;
  while (p < end && g_ascii_isspace (*p))
    p++;
  const char *name = p;
  while (p < end && !g_ascii_isspace (*p) && *p != '(' && *p != '|')
    p++;
  const char *name_end = p;
  if (name_end == name)
    return 0;
  while (p < end && g_ascii_isspace (*p))
    p++;

  Id id;
  if (name_end - name > 4 && strncmp (name_end - 4, ":any", 4) == 0)
    id = pool_rel2id (pool, pool_strn2id (pool, name, name_end - name - 4, 1), ARCH_ANY,
                      REL_MULTIARCH, 1);
  else
    id = pool_strn2id (pool, name, name_end - name, 1);

  if (p < end && *p == '(')
    {
      p++;
      while (p < end && g_ascii_isspace (*p))
        p++;
      int flags = 0;
      for (int i = 0; i < 2 && p < end; i++)
        {
          int f = *p == '>' ? REL_GT : *p == '=' ? REL_EQ : *p == '<' ? REL_LT : 0;
          if (f == 0)
            break;
          flags |= f;
          p++;
        }
      while (p < end && g_ascii_isspace (*p))
        p++;
      const char *evr = p;
      while (p < end && !g_ascii_isspace (*p) && *p != ')')
        p++;
      Id evr_id = pool_strn2id (pool, evr, p - evr, 1);
      while (p < end && *p != ')')
        p++;
      if (p < end)
        p++;
      while (p < end && g_ascii_isspace (*p))
        p++;
      id = pool_rel2id (pool, id, evr_id, flags, 1);
    }
  if (p < end && *p == '|')
    {
      p++;
      Id rest = parse_dep (pool, &p, end);
      if (rest != 0)
        id = pool_rel2id (pool, id, rest, REL_OR, 1);
    }
  *pp = p;
  return id;
}

static void
parse_dep_field (Pool *pool, const char *field, Queue *out)
{
  for (const char *p = field; p != NULL && *p;)
    {
      const char *end = strchr (p, ',');
      if (end == NULL)
        end = p + strlen (p);
      const char *q = p;
      Id id = parse_dep (pool, &q, end);
      if (id != 0)
        queue_push (out, id);
      p = *end ? end + 1 : end;
    }
}

static DepLists *
dep_lists (Resolver *r, Id p)
{
  DepLists *l = g_hash_table_lookup (r->dep_lists, GINT_TO_POINTER (p));
  if (l != NULL)
    return l;
  l = g_new0 (DepLists, 1);
  queue_init (&l->pre_depends);
  queue_init (&l->depends);
  queue_init (&l->recommends);
  const PackagesFields *f = packages_store_lookup (r->store, p);
  if (f != NULL)
    {
      parse_dep_field (r->pool, f->pre_depends, &l->pre_depends);
      parse_dep_field (r->pool, f->depends, &l->depends);
      parse_dep_field (r->pool, f->recommends, &l->recommends);
    }
  g_hash_table_insert (r->dep_lists, GINT_TO_POINTER (p), l);
  return l;
}

/* --- the apt walk --- */

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
static void
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

/* One apt run: mark every target (as apt-get install does first), then
 * walk their dependencies in order. */
static void
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

  /* Whatever failed on the way, what counts is the end: every target in,
   * every dependency of what is in met. */
  r->walk_failed = FALSE;
  for (int i = 0; i < targets->count; i++)
    if (!MAPTST (&r->marked, targets->elements[i]))
      r->walk_failed = TRUE;
  Queue marked;
  queue_init (&marked);
  marked_packages (r, &marked);
  for (int i = 0; i < marked.count && !r->walk_failed; i++)
    {
      DepLists *l = dep_lists (r, marked.elements[i]);
      for (int j = 0; j < l->pre_depends.count && !r->walk_failed; j++)
        r->walk_failed = !satisfied_by_marked (r, l->pre_depends.elements[j]);
      for (int j = 0; j < l->depends.count && !r->walk_failed; j++)
        r->walk_failed = !satisfied_by_marked (r, l->depends.elements[j]);
    }
  queue_free (&marked);
}

/* --- the request --- */

static int
compare_names (const void *pa, const void *pb, void *data)
{
  Resolver *r = data;
  return strcmp (solvable_name (r, *(const Id *) pa), solvable_name (r, *(const Id *) pb));
}

/* The candidates with Essential: yes, or (essential FALSE) a Priority of at
 * most MAX_RANK that are not Essential; in name order. */
static void
select_candidates (Resolver *r, gboolean essential, int max_rank, Queue *out)
{
  Queue found;
  queue_init (&found);
  for (Id name = 1; name < r->ncandidate; name++)
    {
      Id p = r->candidate[name];
      if (p == 0)
        continue;
      const PackagesFields *f = packages_store_lookup (r->store, p);
      if (f == NULL)
        continue;
      if (essential ? f->essential : (!f->essential && priority_rank (f->priority) <= max_rank))
        queue_push (&found, p);
    }
  g_qsort_with_data (found.elements, found.count, sizeof (Id), compare_names, r);
  for (int i = 0; i < found.count; i++)
    queue_pushunique (out, found.elements[i]);
  queue_free (&found);
}

/* A requested name to a solvable; 0 (no error) when it is a virtual package
 * that an already chosen package provides. */
static gboolean
resolve_item (Resolver *r, RequestItem *item, Id *out, GError **error)
{
  Pool *pool = r->pool;
  *out = 0;

  Id name = pool_str2id (pool, item->name, 0);
  Id p = candidate_of (r, name);
  if (p != 0)
    {
      const char *arch = pool_id2str (pool, pool->solvables[p].arch);
      if (item->arch != NULL && !g_str_equal (item->arch, arch))
        return util_fail (error, "package \"%s\" is \"%s:%s\", not \"%s\"", item->spec,
                          item->name, arch, item->spec);
      *out = p;
      return TRUE;
    }

  /* Not a real package: a virtual one, or nothing we can use. */
  Queue providers;
  queue_init (&providers);
  if (name != 0)
    {
      Id q, qq;
      FOR_PROVIDES (q, qq, name)
        queue_push (&providers, q);
    }
  gboolean ok = TRUE;
  if (providers.count == 1)
    *out = providers.elements[0];
  else if (providers.count > 1)
    {
      for (int i = 0; i < providers.count; i++)
        if (MAPTST (&r->marked, providers.elements[i]))
          {
            queue_free (&providers);
            return TRUE;
          }
      g_qsort_with_data (providers.elements, providers.count, sizeof (Id), compare_names, r);
      g_autoptr(GString) list = g_string_new (NULL);
      for (int i = 0; i < providers.count; i++)
        g_string_append_printf (list, "%s%s", i ? ", " : "", solvable_name (r, providers.elements[i]));
      ok = util_fail (error, "package \"%s\" is virtual and several packages provide it: %s; name one",
                      item->name, list->str);
    }
  else
    {
      gboolean exists = FALSE;
      for (Id q = 2; name != 0 && q < pool->nsolvables && !exists; q++)
        exists = pool->solvables[q].name == name;
      if (exists)
        ok = util_fail (error, "package \"%s\" is not available for architecture %s",
                        item->name, pool_id2str (pool, r->arch));
      else
        ok = util_fail (error, "package \"%s\" is not in any source", item->name);
    }
  queue_free (&providers);
  return ok;
}

static gboolean
resolve_items (Resolver *r, GPtrArray *items, Queue *out, GError **error)
{
  for (guint i = 0; i < items->len; i++)
    {
      Id p;
      if (!resolve_item (r, items->pdata[i], &p, error))
        return FALSE;
      if (p != 0)
        queue_pushunique (out, p);
    }
  return TRUE;
}

static gboolean
parse_items (char **specs, GPtrArray *out, GError **error)
{
  for (char **s = specs; s != NULL && *s != NULL; s++)
    {
      RequestItem *item = request_item_parse (*s, error);
      if (item == NULL)
        return FALSE;
      g_ptr_array_add (out, item);
    }
  return TRUE;
}

/* --- problems in apt's words --- */

static gboolean
dep_is_prereq (Resolver *r, Id p, Id dep)
{
  DepLists *l = dep_lists (r, p);
  for (int i = 0; i < l->pre_depends.count; i++)
    if (l->pre_depends.elements[i] == dep)
      return TRUE;
  return FALSE;
}

/* Whether NAME is one of the packages a Breaks: field names. */
static gboolean
field_names (const char *field, const char *name)
{
  if (field == NULL)
    return FALSE;
  gsize len = strlen (name);
  const char *p = field;
  while (*p)
    {
      p += strspn (p, " \t\n,|");
      gsize n = strcspn (p, " \t\n,|(:");
      if (n == len && strncmp (p, name, len) == 0)
        return TRUE;
      p += n;
      p += strcspn (p, ",|");
    }
  return FALSE;
}

/* "but 1.0 is to be installed" and friends. */
static const char *
why_not (Resolver *r, Id dep, gboolean nothing_provides, char **out_buf)
{
  Id name = dep_name (r->pool, dep);
  Id cand = candidate_of (r, name);
  *out_buf = NULL;
  if (cand != 0 && !pool_match_nevr (r->pool, r->pool->solvables + cand, dep))
    return *out_buf = g_strdup_printf ("but %s is to be installed", solvable_version (r, cand));
  return nothing_provides ? "but it is not installable" : "but it is not going to be installed";
}

/* One rule of a problem in apt's words; NULL for rules that are not about
 * packages (the request's own jobs). */
static char *
describe_rule (Resolver *r, Solver *solv, Id rid, SolverRuleinfo *out_type)
{
  Pool *pool = r->pool;
  Id source = 0, target = 0, dep = 0;
  SolverRuleinfo type = solver_ruleinfo (solv, rid, &source, &target, &dep);
  *out_type = type;
  g_autofree char *dep_str = dep ? dep_to_string (pool, dep) : NULL;
  g_autofree char *buf = NULL;

  switch (type)
    {
    case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
    case SOLVER_RULE_PKG_REQUIRES:
      {
        const char *why = why_not (r, dep, type == SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP, &buf);
        return g_strdup_printf ("%s %s %s %s", solvable_name (r, source),
                                dep_is_prereq (r, source, dep) ? "pre-depends on" : "depends on",
                                dep_str, why);
      }
    case SOLVER_RULE_PKG_CONFLICTS:
      {
        const PackagesFields *f = packages_store_lookup (r->store, source);
        const char *dname = pool_id2str (pool, dep_name (pool, dep));
        gboolean breaks = f != NULL && field_names (f->breaks, dname);
        return g_strdup_printf ("%s %s %s but %s %s is to be installed", solvable_name (r, source),
                                breaks ? "breaks" : "conflicts with", dep_str,
                                solvable_name (r, target), solvable_version (r, target));
      }
    case SOLVER_RULE_PKG_SELF_CONFLICT:
      return g_strdup_printf ("%s conflicts with itself (%s)", solvable_name (r, source), dep_str);
    case SOLVER_RULE_PKG_SAME_NAME:
      return g_strdup_printf ("%s %s and %s %s cannot both be installed",
                              solvable_name (r, source), solvable_version (r, source),
                              solvable_name (r, target), solvable_version (r, target));
    case SOLVER_RULE_PKG_NOT_INSTALLABLE:
      return g_strdup_printf ("%s %s is not installable", solvable_name (r, source),
                              solvable_version (r, source));
    default:
      return NULL;
    }
}

/* A problem: the rule libsolv thinks is at its heart, and the conflicts or
 * missing packages behind it ("a depends on b but it is not going to be
 * installed, because b conflicts with c but c 1 is to be installed"). */
static char *
describe_problem (Resolver *r, Solver *solv, Id problem)
{
  SolverRuleinfo type;
  Id main_rule = solver_findproblemrule (solv, problem);
  g_autofree char *main_text = describe_rule (r, solv, main_rule, &type);
  if (main_text == NULL)
    return g_strdup (solver_problem2str (solv, problem));

  g_autoptr(GPtrArray) causes = g_ptr_array_new_with_free_func (g_free);
  Queue rules;
  queue_init (&rules);
  solver_findallproblemrules (solv, problem, &rules);
  for (int i = 0; i < rules.count && causes->len < 3; i++)
    {
      char *text = describe_rule (r, solv, rules.elements[i], &type);
      gboolean cause = text != NULL && type != SOLVER_RULE_PKG_REQUIRES
                       && !g_str_equal (text, main_text);
      for (guint j = 0; cause && j < causes->len; j++)
        cause = !g_str_equal (causes->pdata[j], text);
      if (cause)
        g_ptr_array_add (causes, text);
      else
        g_free (text);
    }
  queue_free (&rules);
  if (causes->len == 0)
    return g_steal_pointer (&main_text);
  g_ptr_array_add (causes, NULL);
  g_autofree char *joined = g_strjoinv (", and ", (char **) causes->pdata);
  return g_strdup_printf ("%s, because %s", main_text, joined);
}

static gboolean
report_problems (Resolver *r, Solver *solv, GError **error)
{
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  int count = solver_problem_count (solv);
  for (Id problem = 1; problem <= count; problem++)
    {
      char *line = describe_problem (r, solv, problem);
      gboolean seen = FALSE;
      for (guint i = 0; i < lines->len && !seen; i++)
        seen = g_str_equal (lines->pdata[i], line);
      if (seen)
        g_free (line);
      else
        g_ptr_array_add (lines, line);
    }
  g_ptr_array_add (lines, NULL);
  g_autofree char *joined = g_strjoinv ("; ", (char **) lines->pdata);
  return util_fail (error, "the request cannot be satisfied: %s", joined);
}

/* --- putting it together --- */

static gboolean
load_sources (Resolver *r, GPtrArray *sources, const char *cache_dir, GError **error)
{
  for (guint i = 0; i < sources->len; i++)
    {
      ResolveSource *source = sources->pdata[i];
      Repo *repo = repo_create (r->pool, source->name);
      repo->appdata = source;
      for (guint j = 0; j < source->index_paths->len; j++)
        if (!packages_store_load (r->store, repo, source->index_paths->pdata[j], cache_dir, error))
          return FALSE;
    }
  return TRUE;
}

static gboolean
check_variant (const char *variant, GError **error)
{
  if (variant == NULL || g_strv_contains ((const char *const *) variants, variant))
    return TRUE;
  g_autofree char *known = g_strjoinv (", ", (char **) variants);
  return util_fail (error, "unknown variant \"%s\" (known: %s)", variant, known);
}

/* What the request installs, as mmdebstrap's two apt runs: FIRST the
 * Essential set (plus apt for the apt variant), SECOND everything else. */
static void
request_targets (Resolver *r, const ResolveRequest *request, Queue *first,
                 GPtrArray *second_items, int *out_max_rank)
{
  const char *variant = request->variant ? request->variant : "essential";
  *out_max_rank = 0;
  if (g_str_equal (variant, "custom"))
    return;
  select_candidates (r, TRUE, 0, first);
  if (g_str_equal (variant, "apt"))
    {
      Id p = candidate_of (r, pool_str2id (r->pool, "apt", 0));
      if (p != 0)
        queue_pushunique (first, p);
      else
        g_ptr_array_add (second_items, request_item_parse ("apt", NULL));
    }
  if (g_str_equal (variant, "buildd"))
    g_ptr_array_add (second_items, request_item_parse ("build-essential", NULL));
  if (g_str_equal (variant, "minbase") || g_str_equal (variant, "required")
      || g_str_equal (variant, "buildd"))
    *out_max_rank = priority_rank ("required");
  else if (g_str_equal (variant, "important"))
    *out_max_rank = priority_rank ("important");
  else if (g_str_equal (variant, "standard"))
    *out_max_rank = priority_rank ("standard");
}

/* --- install order ---
 *
 * Dependencies before the packages that need them, as dpkg would unpack
 * them.  libsolv's transaction_order() does this too, but where it must
 * choose (cycles, independent packages) its choice follows internal ids,
 * which differ between a parsed index and a cached one; the order must be a
 * function of the packages alone.  So: strongly connected components of the
 * dependency graph, dependencies first, smallest name first where nothing
 * else decides; inside a cycle Pre-Depends are kept and Depends give way. */

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

static int
compare_ids_by_name (const void *pa, const void *pb, void *data)
{
  return compare_names (pa, pb, data);
}

static void
install_order (Resolver *r, Queue *set, Queue *out)
{
  Pool *pool = r->pool;
  OrderGraph g = { 0 };
  g.n = set->count;
  g.ids = g_memdup2 (set->elements, sizeof (Id) * MAX (g.n, 1));
  g_qsort_with_data (g.ids, g.n, sizeof (Id), compare_ids_by_name, r);
  GHashTable *node = g_hash_table_new (NULL, NULL);
  for (int i = 0; i < g.n; i++)
    g_hash_table_insert (node, GINT_TO_POINTER (g.ids[i]), GINT_TO_POINTER (i + 1));

  g.deps = g_new0 (Queue, MAX (g.n, 1));
  g.predeps = g_new0 (Queue, MAX (g.n, 1));
  for (int v = 0; v < g.n; v++)
    {
      queue_init (&g.deps[v]);
      queue_init (&g.predeps[v]);
      DepLists *l = dep_lists (r, g.ids[v]);
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
                  queue_pushunique (&g.deps[v], w);
                  if (pass == 0)
                    queue_pushunique (&g.predeps[v], w);
                }
            }
        }
    }

  g.comp = g_new0 (int, MAX (g.n, 1));
  g.low = g_new0 (int, MAX (g.n, 1));
  g.num = g_new0 (int, MAX (g.n, 1));
  g.on_stack = g_new0 (char, MAX (g.n, 1));
  queue_init (&g.stack);
  for (int v = 0; v < g.n; v++)
    if (g.num[v] == 0)
      strongconnect (&g, v);

  /* Components in dependency order: Kahn over the components, the one with
   * the smallest name first; each component's packages by Pre-Depends. */
  Queue *members = g_new0 (Queue, MAX (g.ncomp, 1));
  for (int c = 0; c < g.ncomp; c++)
    queue_init (&members[c]);
  for (int v = 0; v < g.n; v++)
    queue_push (&members[g.comp[v]], v);
  char *comp_done = g_new0 (char, MAX (g.ncomp, 1));
  char *done = g_new0 (char, MAX (g.n, 1));
  for (int emitted = 0; emitted < g.ncomp; emitted++)
    {
      int pick = -1, pick_first = G_MAXINT;
      for (int c = 0; c < g.ncomp; c++)
        {
          if (comp_done[c] || members[c].elements[0] >= pick_first)
            continue;
          gboolean ready = TRUE;
          for (int i = 0; i < members[c].count && ready; i++)
            {
              int v = members[c].elements[i];
              for (int j = 0; j < g.deps[v].count && ready; j++)
                {
                  int w = g.deps[v].elements[j];
                  ready = g.comp[w] == c || comp_done[g.comp[w]];
                }
            }
          if (ready)
            {
              pick = c;
              pick_first = members[c].elements[0];
            }
        }
      g_assert (pick >= 0);   /* the components form a DAG */
      comp_done[pick] = 1;
      emit_in_order (&g, &members[pick], g.predeps, done, out);
    }

  for (int c = 0; c < g.ncomp; c++)
    queue_free (&members[c]);
  for (int v = 0; v < g.n; v++)
    {
      queue_free (&g.deps[v]);
      queue_free (&g.predeps[v]);
    }
  g_free (members);
  g_free (comp_done);
  g_free (done);
  g_free (g.deps);
  g_free (g.predeps);
  g_free (g.comp);
  g_free (g.low);
  g_free (g.num);
  g_free (g.on_stack);
  g_free (g.ids);
  queue_free (&g.stack);
  g_hash_table_unref (node);
}

static GPtrArray *
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

/* libsolv on INSTALL and TARGETS (TARGETS may be NULL) plus the apt walk's
 * choices: as packages to install when EXACT, else as favors. */
static Solver *
run_solver (Resolver *r, Queue *install, Queue *targets, gboolean exact)
{
  Queue job;
  queue_init (&job);
  for (int i = 0; i < install->count; i++)
    queue_push2 (&job, SOLVER_INSTALL | SOLVER_SOLVABLE, install->elements[i]);
  for (int i = 0; targets != NULL && i < targets->count; i++)
    queue_push2 (&job, SOLVER_INSTALL | SOLVER_SOLVABLE, targets->elements[i]);
  Queue marked;
  queue_init (&marked);
  marked_packages (r, &marked);
  for (int i = 0; i < marked.count; i++)
    queue_push2 (&job, (exact ? SOLVER_INSTALL : SOLVER_FAVOR) | SOLVER_SOLVABLE,
                 marked.elements[i]);
  queue_free (&marked);

  Solver *solv = solver_create (r->pool);
  /* In the exact run the walk has already followed Recommends. */
  solver_set_flag (solv, SOLVER_FLAG_IGNORE_RECOMMENDED, exact || !r->recommends);
  solver_solve (solv, &job);
  queue_free (&job);
  return solv;
}

/* One apt run's packages.  What apt's walk chose is installed as it is:
 * apt never takes back a package it marked, even when a package marked
 * later would have met the same dependency (lsb-base stays next to the
 * sysvinit-utils that provides it).  Only when the walk got stuck, or its
 * choices do not hold together, does libsolv choose, with the walk's
 * choices as favors, and report the problems if there is no solution.
 * On success either the installed packages go to OUT_INSTALLED or the
 * ordered packages to OUT_RESULT. */
static gboolean
solve (Resolver *r, Queue *install, Queue *targets, GPtrArray **out_result, Queue *out_installed,
       GError **error)
{
  Solver *solv = NULL;
  if (!r->walk_failed)
    {
      solv = run_solver (r, install, targets, TRUE);
      if (solver_problem_count (solv) != 0)
        {
          g_debug ("resolve: the apt walk's choices do not hold together; libsolv chooses");
          solver_free (solv);
          solv = NULL;
        }
    }
  if (solv == NULL)
    solv = run_solver (r, install, targets, FALSE);

  gboolean ok = solver_problem_count (solv) == 0;
  if (!ok)
    report_problems (r, solv, error);
  else if (out_result != NULL)
    *out_result = collect_result (r, solv);
  else
    {
      Transaction *trans = solver_create_transaction (solv);
      for (int i = 0; i < trans->steps.count; i++)
        queue_push (out_installed, trans->steps.elements[i]);
      transaction_free (trans);
    }
  solver_free (solv);
  return ok;
}

/* The request's own checks, before any index is read. */
static gboolean
check_request (const ResolveRequest *request, GPtrArray *items, GError **error)
{
  if (!check_variant (request->variant, error))
    return FALSE;
  if (request->arch == NULL || *request->arch == '\0')
    return util_fail (error, "no architecture given for the resolution");
  if (g_str_equal (request->arch, "all") || g_str_equal (request->arch, "any"))
    return util_fail (error, "\"%s\" is not an image architecture", request->arch);
  if (!parse_items (request->packages, items, error))
    return FALSE;
  for (guint i = 0; i < items->len; i++)
    {
      RequestItem *item = items->pdata[i];
      if (item->arch != NULL && !g_str_equal (item->arch, request->arch)
          && !g_str_equal (item->arch, "all"))
        return util_fail (error, "package \"%s\": architecture %s is not the image's (%s); "
                          "multiarch images are not supported", item->spec, item->arch,
                          request->arch);
    }
  return TRUE;
}

/* A pool holding the sources' indices, in which only the candidates exist
 * (pool->considered), ready for the walk. */
static Resolver *
resolver_new (GPtrArray *sources, const ResolveRequest *request, GPtrArray *items,
              GError **error)
{
  gint64 start = g_get_monotonic_time ();
  g_autoptr(Resolver) r = g_new0 (Resolver, 1);
  r->pool = pool_create ();
  pool_setdisttype (r->pool, DISTTYPE_DEB);
  pool_setarch (r->pool, request->arch);
  r->store = packages_store_new (r->pool);
  r->recommends = request->recommends;
  r->budget = WALK_BUDGET;
  r->dep_lists = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) dep_lists_free);
  r->trace = g_getenv ("A2O_RESOLVE_TRACE") != NULL;
  if (!load_sources (r, sources, request->cache_dir, error))
    return NULL;
  r->arch = pool_str2id (r->pool, request->arch, 1);

  compute_candidates (r);
  for (guint i = 0; i < items->len; i++)
    {
      RequestItem *item = items->pdata[i];
      if (item->version != NULL && !pin_requested_version (r, item, error))
        return NULL;
    }
  map_init (&r->considered, r->pool->nsolvables);
  for (Id name = 1; name < r->ncandidate; name++)
    if (r->candidate[name] != 0)
      MAPSET (&r->considered, r->candidate[name]);
  r->pool->considered = &r->considered;
  pool_createwhatprovides (r->pool);

  map_init (&r->marked, r->pool->nsolvables);
  map_init (&r->requested, r->pool->nsolvables);
  map_init (&r->in_progress, r->pool->nsolvables);
  queue_init (&r->log);
  r->forbidden = g_new0 (int, r->pool->nsolvables);
  g_debug ("resolve: %u packages loaded and indexed in %.3f s", r->pool->nsolvables - 2,
           (g_get_monotonic_time () - start) / 1e6);
  return g_steal_pointer (&r);
}

GPtrArray *
resolve_request (GPtrArray *sources, const ResolveRequest *request, GError **error)
{
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) request_item_free);
  if (!check_request (request, items, error))
    return NULL;
  g_autoptr(Resolver) r = resolver_new (sources, request, items, error);
  if (r == NULL)
    return NULL;

  /* mmdebstrap's first apt run (the Essential set)... */
  Queue first, installed, second;
  queue_init (&first);
  queue_init (&installed);
  queue_init (&second);
  g_autoptr(GPtrArray) extra_items = g_ptr_array_new_with_free_func ((GDestroyNotify) request_item_free);
  int max_rank;
  request_targets (r, request, &first, extra_items, &max_rank);
  walk_phase (r, &first, NULL);

  /* ...ends with its packages installed: the second run cannot take them
   * back (a first-run choice such as usrmerge stays even when a second-run
   * package would have met the same dependency). */
  gboolean ok = first.count == 0 || solve (r, &first, NULL, NULL, &installed, error);

  /* The second run: the listed packages, build-essential, the Priority set. */
  ok = ok && resolve_items (r, items, &second, error)
       && resolve_items (r, extra_items, &second, error);
  if (ok && max_rank > 0)
    select_candidates (r, FALSE, max_rank, &second);
  GPtrArray *result = NULL;
  if (ok)
    {
      walk_phase (r, &second, &installed);
      solve (r, &installed, &second, &result, NULL, error);
    }
  queue_free (&first);
  queue_free (&installed);
  queue_free (&second);
  return result;
}
