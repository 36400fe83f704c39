/* resolve-pool.c — the libsolv pool of one resolution: the sources'
 * indices loaded into it, each package name's candidate (the version apt
 * would install: pin priority, then version, or the version the request
 * names) and a pool in which only the candidates exist, so libsolv never
 * sees another version. */
#define _GNU_SOURCE
#include "config.h"

#include "apt/resolver.h"
#include "base/util.h"

#include <string.h>

#include <solv/bitmap.h>
#include <solv/evr.h>
#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/repo.h>

void
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
      else if (!g_ptr_array_find_with_equal_func (available, pool_id2str (pool, s->evr),
                                                  g_str_equal, NULL))
        g_ptr_array_add (available, (gpointer) pool_id2str (pool, s->evr));
    }
  if (best == 0)
    {
      if (available->len == 0)
        return fail_unknown_name (r, item->name, error);
      g_ptr_array_add (available, NULL);
      g_autofree char *list = g_strjoinv (", ", (char **) available->pdata);
      return util_fail (error, "package \"%s\" has no version \"%s\" in any source (available: %s)",
                        item->name, item->version, list);
    }
  r->candidate[name] = best;
  return TRUE;
}

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

Resolver *
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
