/* buildcache.c — a build's trees from a shared cache; see buildcache.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "build/buildcache.h"
#include "store/cachepull.h"
#include "store/repo.h"

void
buildcache_clear (BuildCache *cache)
{
  g_clear_pointer (&cache->url, g_free);
  g_clear_pointer (&cache->key_path, g_free);
}

gboolean
buildcache_check (BuildCache *cache, GError **error)
{
  if (cache->url != NULL && !g_str_has_prefix (cache->url, "http://")
      && !g_str_has_prefix (cache->url, "https://") && !g_str_has_prefix (cache->url, "file:///"))
    return util_fail (error, "--cache-url \"%s\" is not an http://, https:// or file:/// URL",
                      cache->url);
  if (cache->key_path == NULL)
    return TRUE;
  if (cache->url == NULL)
    return util_fail (error, "--cache-key goes with --cache-url");
  if (access (cache->key_path, R_OK) != 0)
    return util_fail (error, "--cache-key %s: cannot read it", cache->key_path);
  char *absolute = g_canonicalize_filename (cache->key_path, NULL);
  g_free (cache->key_path);
  cache->key_path = absolute;
  return TRUE;
}

char *
buildcache_ref (const char *kind, const char *const *inputs)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  /* Each part ends in a NUL, so no two lists of parts hash alike. */
  const char *head[] = { "apt2ostree", PACKAGE_VERSION, kind };
  for (guint i = 0; i < G_N_ELEMENTS (head); i++)
    g_checksum_update (sum, (const guchar *) head[i], strlen (head[i]) + 1);
  for (const char *const *in = inputs; *in != NULL; in++)
    g_checksum_update (sum, (const guchar *) *in, strlen (*in) + 1);
  return g_strconcat ("cache/", kind, "/", g_checksum_get_string (sum), NULL);
}

char *
buildcache_fetch_result (OstreeRepo *repo, const BuildCache *cache, const char *cache_ref,
                         const char *out_ref, const char *what, GCancellable *cancellable)
{
  /* (cache-pull asks for a cache ref by its own name.)  The refs are
   * written with the objects, in one transaction. */
  const char *set_refs[] = { out_ref, strcmp (out_ref, cache_ref) != 0 ? cache_ref : NULL, NULL };
  CachePullSource source = { cache->url, cache->key_path };
  g_autoptr(GError) local_error = NULL;
  g_autofree char *commit = cachepull_pull (repo, &source, cache_ref, set_refs, cancellable,
                                            &local_error);
  if (commit != NULL)
    return g_steal_pointer (&commit);
  /* (An error of libostree's pull may run over several lines.) */
  g_strdelimit (local_error->message, "\n", ' ');
  fprintf (stderr, "apt2ostree: %s: not from the cache %s (%s); building it\n", what, cache->url,
           local_error->message);
  return NULL;
}

gboolean
buildcache_set_refs (OstreeRepo *repo, const char *const *refs, const char *commit,
                     GCancellable *cancellable, GError **error)
{
  g_autoptr(RepoTxn) txn = repo_txn_begin (repo, cancellable, error);
  if (txn == NULL)
    return FALSE;
  for (const char *const *r = refs; *r != NULL; r++)
    repo_txn_set_ref (txn, *r, commit);
  return repo_txn_finish (txn, cancellable, error);
}

gboolean
buildcache_record_result (OstreeRepo *repo, const char *out_ref, const char *cache_ref,
                          GCancellable *cancellable, GError **error)
{
  g_autofree char *commit = repo_read_ref (repo, out_ref);
  if (commit == NULL)
    return util_fail (error, "ref \"%s\" vanished", out_ref);
  const char *refs[] = { cache_ref, NULL };
  return buildcache_set_refs (repo, refs, commit, cancellable, error);
}
