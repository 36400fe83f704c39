/* cachepull.c — commits pulled from a build cache; see cachepull.h. */
#include "config.h"

#include "base/util.h"
#include "store/cachefetch.h"
#include "store/cachepull.h"
#include "store/repo.h"
#include "store/staging.h"

/* The remote the repository knows CACHE by: one per URL and key file, so
 * two caches (or one cache checked against two keys) never share one. */
static char *
remote_name (const CachePullSource *cache)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sum, (const guchar *) cache->url, -1);
  g_checksum_update (sum, (const guchar *) "\n", 1);
  if (cache->key_path != NULL)
    g_checksum_update (sum, (const guchar *) cache->key_path, -1);
  return g_strdup_printf ("apt2ostree-cache-%.16s", g_checksum_get_string (sum));
}

/* NAME as a remote of REPO, added the first time: several builds at once
 * add the same remote with the same options, so a lost race changes
 * nothing. */
static gboolean
ensure_remote (OstreeRepo *repo, const char *name, const CachePullSource *cache,
               GCancellable *cancellable, GError **error)
{
  GVariantBuilder options;
  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&options, "{sv}", "gpg-verify",
                         g_variant_new_boolean (cache->key_path != NULL));
  /* A static server's summary may lag behind its refs (publish writes
   * refs, then the summary); the commits carry the signatures. */
  g_variant_builder_add (&options, "{sv}", "gpg-verify-summary", g_variant_new_boolean (FALSE));
  if (cache->key_path != NULL)
    g_variant_builder_add (&options, "{sv}", "gpgkeypath",
                           g_variant_new_string (cache->key_path));
  g_autoptr(GVariant) opts = g_variant_ref_sink (g_variant_builder_end (&options));
  return ostree_repo_remote_change (repo, NULL, OSTREE_REPO_REMOTE_CHANGE_ADD_IF_NOT_EXISTS, name,
                                    cache->url, opts, cancellable, error);
}

/* REF pulled with libostree's pull (archive-mode repositories, signed
 * caches); its commit. */
static char *
pull_with_libostree (OstreeRepo *repo, const CachePullSource *cache, const char *ref,
                     GCancellable *cancellable, GError **error)
{
  g_autofree char *name = remote_name (cache);
  if (!ensure_remote (repo, name, cache, cancellable, error))
    return NULL;

  GVariantBuilder options;
  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  const char *refs[] = { ref, NULL };
  g_variant_builder_add (&options, "{sv}", "refs", g_variant_new_strv (refs, -1));
  /* libostree checks what comes over HTTP, but copies from a file:// URL
   * unchecked unless told not to trust it. */
  g_variant_builder_add (&options, "{sv}", "flags",
                         g_variant_new_int32 (OSTREE_REPO_PULL_FLAGS_UNTRUSTED));
  /* A cache that does not answer is a miss now, not after retries. */
  g_variant_builder_add (&options, "{sv}", "n-network-retries", g_variant_new_uint32 (0));
  g_autoptr(GVariant) opts = g_variant_ref_sink (g_variant_builder_end (&options));
  if (!ostree_repo_pull_with_options (repo, name, opts, NULL, cancellable, error))
    return NULL;

  /* The pull wrote the remote's ref; the caller writes its own, so the
   * remote's goes again (it would show among the repository's refs). */
  g_autofree char *remote_ref = g_strconcat (name, ":", ref, NULL);
  g_autofree char *commit = NULL;
  if (!ostree_repo_resolve_rev (repo, remote_ref, FALSE, &commit, error))
    return NULL;
  if (!ostree_repo_set_ref_immediate (repo, name, ref, NULL, cancellable, error))
    return NULL;
  return g_steal_pointer (&commit);
}

/* Point each of SET_REFS at COMMIT in TXN and finish it. */
static gboolean
finish_with_refs (RepoTxn *txn, const char *const *set_refs, const char *commit,
                  GCancellable *cancellable, GError **error)
{
  for (const char *const *r = set_refs; r != NULL && *r != NULL; r++)
    repo_txn_set_ref (txn, *r, commit);
  return repo_txn_finish (txn, cancellable, error);
}

/* REF fetched by this program (cachefetch.h) in TXN, whose writer is W,
 * and SET_REFS pointed at it in the same transaction; its commit. */
static char *
pull_own (OstreeRepo *repo, RepoTxn *txn, ObjectWriter *w, const CachePullSource *cache,
          const char *ref, const char *const *set_refs, GCancellable *cancellable,
          GError **error)
{
  g_autoptr(GVariant) commitmeta = NULL;
  g_autofree char *commit = cachefetch_commit (w, ostree_repo_get_dfd (repo), cache->url, ref,
                                               cachefetch_connections (), &commitmeta, error);
  if (commit == NULL)
    return NULL;
  /* Kept as libostree's pull keeps it (before the commit is visible). */
  if (commitmeta != NULL
      && !ostree_repo_write_commit_detached_metadata (repo, commit, commitmeta, cancellable, error))
    return NULL;
  if (!finish_with_refs (txn, set_refs, commit, cancellable, error))
    return NULL;
  return g_steal_pointer (&commit);
}

char *
cachepull_pull (OstreeRepo *repo, const CachePullSource *cache, const char *ref,
                const char *const *set_refs, GCancellable *cancellable, GError **error)
{
  OstreeRepoMode mode = ostree_repo_get_mode (repo);
  gboolean own = cache->key_path == NULL
                 && (mode == OSTREE_REPO_MODE_BARE || mode == OSTREE_REPO_MODE_BARE_USER);
  g_autoptr(RepoTxn) txn = NULL;
  if (own)
    {
      txn = repo_txn_begin (repo, cancellable, error);
      if (txn == NULL)
        return NULL;
      ObjectWriter *w = staging_writer_get (repo);
      if (w != NULL)
        return pull_own (repo, txn, w, cache, ref, set_refs, cancellable, error);
      g_clear_pointer (&txn, repo_txn_free);
    }
  g_autofree char *commit = pull_with_libostree (repo, cache, ref, cancellable, error);
  if (commit == NULL)
    return NULL;
  txn = repo_txn_begin (repo, cancellable, error);
  if (txn == NULL || !finish_with_refs (txn, set_refs, commit, cancellable, error))
    return NULL;
  return g_steal_pointer (&commit);
}
