/* cachepull.c — commits pulled from a build cache; see cachepull.h. */
#include "config.h"

#include "base/util.h"
#include "store/cachefetch.h"
#include "store/cachepull.h"
#include "store/repo.h"

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
 * caches); its commit.  The pull wrote the remote's ref too, named in
 * *OUT_REMOTE_REF ("REMOTE:REF") for the caller to delete (it would show
 * among the repository's refs). */
static char *
pull_with_libostree (OstreeRepo *repo, const CachePullSource *cache, const char *ref,
                     char **out_remote_ref, GCancellable *cancellable, GError **error)
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

  g_autofree char *remote_ref = g_strconcat (name, ":", ref, NULL);
  g_autofree char *commit = NULL;
  if (!ostree_repo_resolve_rev (repo, remote_ref, FALSE, &commit, error))
    return NULL;
  *out_remote_ref = g_steal_pointer (&remote_ref);
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

/* A signed cache: the remote that holds its key, for the check. */
typedef struct {
  OstreeRepo *repo;
  const char *remote;
} SignatureCheck;

/* The fingerprint of the key that made RESULT's first signature, or NULL. */
static char *
signer_fingerprint (OstreeGpgVerifyResult *result)
{
  if (ostree_gpg_verify_result_count_all (result) == 0)
    return NULL;
  OstreeGpgSignatureAttr attrs[] = { OSTREE_GPG_SIGNATURE_ATTR_FINGERPRINT };
  g_autoptr(GVariant) v = ostree_gpg_verify_result_get (result, 0, attrs, G_N_ELEMENTS (attrs));
  const char *fpr = NULL;
  g_variant_get_child (v, 0, "&s", &fpr);
  return fpr != NULL && *fpr != '\0' ? g_strdup (fpr) : NULL;
}

/* The commit COMMIT (from URL) signed by the cache's key: the GPG
 * signatures of its detached metadata ("ostree.gpgsigs") checked by
 * libostree's public verifier against the keys of the cache's remote, as
 * libostree's pull checks them. */
static gboolean
check_signature (GVariant *commit, GVariant *commitmeta, const char *url, gpointer user_data,
                 GError **error)
{
  SignatureCheck *check = user_data;
  g_autoptr(GVariant) sigs = commitmeta == NULL ? NULL
    : g_variant_lookup_value (commitmeta, "ostree.gpgsigs", G_VARIANT_TYPE ("aay"));
  if (sigs == NULL || g_variant_n_children (sigs) == 0)
    return util_fail_code (error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_SIGNATURE,
                           "%s: the commit has no GPG signature", url);
  g_autoptr(GByteArray) all = g_byte_array_new ();
  for (gsize i = 0; i < g_variant_n_children (sigs); i++)
    {
      g_autoptr(GVariant) sig = g_variant_get_child_value (sigs, i);
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (sig, &len, 1);
      g_byte_array_append (all, data, len);
    }
  g_autoptr(GBytes) signed_data = g_variant_get_data_as_bytes (commit);
  g_autoptr(GBytes) signatures = g_byte_array_free_to_bytes (g_steal_pointer (&all));
  g_autoptr(GError) local_error = NULL;
  g_autoptr(OstreeGpgVerifyResult) result = ostree_repo_gpg_verify_data (
      check->repo, check->remote, signed_data, signatures, NULL, NULL, NULL, &local_error);
  if (result == NULL || !ostree_gpg_verify_result_require_valid_signature (result, &local_error))
    {
      g_autofree char *signer = result != NULL ? signer_fingerprint (result) : NULL;
      return util_fail_code (error, CACHEFETCH_ERROR, CACHEFETCH_ERROR_SIGNATURE,
                             "%s: GPG signature%s%s: %s", url, signer != NULL ? " by key " : "",
                             signer != NULL ? signer : "", local_error->message);
    }
  return TRUE;
}

/* REF fetched by this program (cachefetch.h) in TXN, whose writer is W,
 * the commit's signature checked first with a key file (REMOTE is the
 * cache's remote then, else NULL), and SET_REFS pointed at it in the same
 * transaction; its commit. */
static char *
pull_own (OstreeRepo *repo, RepoTxn *txn, ObjectWriter *w, const CachePullSource *cache,
          const char *remote, const char *ref, const char *const *set_refs,
          GCancellable *cancellable, GError **error)
{
  SignatureCheck check = { repo, remote };
  g_autofree char *commit = cachefetch_commit (w, ostree_repo_get_dfd (repo), cache->url, ref,
                                               cachefetch_connections (),
                                               remote != NULL ? check_signature : NULL, &check,
                                               error);
  if (commit == NULL || !finish_with_refs (txn, set_refs, commit, cancellable, error))
    return NULL;
  return g_steal_pointer (&commit);
}

char *
cachepull_pull (OstreeRepo *repo, const CachePullSource *cache, const char *ref,
                const char *const *set_refs, GCancellable *cancellable, GError **error)
{
  OstreeRepoMode mode = ostree_repo_get_mode (repo);
  g_autoptr(RepoTxn) txn = NULL;
  if (mode == OSTREE_REPO_MODE_BARE || mode == OSTREE_REPO_MODE_BARE_USER)
    {
      /* (A key file is known to libostree's verifier through a remote.) */
      g_autofree char *remote = cache->key_path != NULL ? remote_name (cache) : NULL;
      if (remote != NULL && !ensure_remote (repo, remote, cache, cancellable, error))
        return NULL;
      txn = repo_txn_begin (repo, cancellable, error);
      if (txn == NULL)
        return NULL;
      ObjectWriter *w = repo_txn_writer (txn);
      if (w != NULL)
        return pull_own (repo, txn, w, cache, remote, ref, set_refs, cancellable, error);
      g_clear_pointer (&txn, repo_txn_free);
    }
  g_autofree char *remote_ref = NULL;
  g_autofree char *commit = pull_with_libostree (repo, cache, ref, &remote_ref, cancellable,
                                                 error);
  if (commit == NULL)
    return NULL;
  txn = repo_txn_begin (repo, cancellable, error);
  if (txn == NULL)
    return NULL;
  repo_txn_set_ref (txn, remote_ref, NULL);
  if (!finish_with_refs (txn, set_refs, commit, cancellable, error))
    return NULL;
  return g_steal_pointer (&commit);
}

char *
cachepull_key_fingerprint (OstreeRepo *repo, const CachePullSource *cache,
                           GCancellable *cancellable)
{
  if (cache->key_path == NULL)
    return NULL;
  g_autofree char *name = remote_name (cache);
  g_autoptr(GPtrArray) keys = NULL;
  if (!ensure_remote (repo, name, cache, cancellable, NULL)
      || !ostree_repo_remote_get_gpg_keys (repo, name, NULL, &keys, cancellable, NULL)
      || keys->len == 0)
    return NULL;
  g_autoptr(GVariant) subkeys = g_variant_get_child_value (keys->pdata[0], 0);
  if (g_variant_n_children (subkeys) == 0)
    return NULL;
  g_autoptr(GVariant) primary = g_variant_get_child_value (subkeys, 0);
  const char *fpr = NULL;
  if (!g_variant_lookup (primary, "fingerprint", "&s", &fpr))
    return NULL;
  return g_strdup (fpr);
}
