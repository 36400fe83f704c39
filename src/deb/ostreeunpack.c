/* ostreeunpack.c — the unpack-deb job over a libostree repository; see
 * ostreeunpack.h. */
#include "config.h"

#include "apt/fetch.h"
#include "base/util.h"
#include "deb/leanrepo.h"
#include "deb/ostreeunpack.h"
#include "store/repo.h"

/* --- the UnpackRepo over libostree --- */

typedef struct {
  UnpackRepo base;
  OstreeRepo *repo;
  RepoTxn *txn;
} OstreeUnpackRepo;

static gboolean
ostree_read_ref (UnpackRepo *base, const char *ref, char **out_commit, GError **error)
{
  *out_commit = repo_read_ref (((OstreeUnpackRepo *) base)->repo, ref);
  return TRUE;
}

static GVariant *
ostree_load_commit (UnpackRepo *base, const char *checksum)
{
  GVariant *commit = NULL;
  if (!ostree_repo_load_variant (((OstreeUnpackRepo *) base)->repo, OSTREE_OBJECT_TYPE_COMMIT,
                                 checksum, &commit, NULL))
    return NULL;
  return commit;
}

static StoreSink *
ostree_begin (UnpackRepo *base, GError **error)
{
  OstreeUnpackRepo *r = (OstreeUnpackRepo *) base;
  r->txn = repo_txn_begin (r->repo, NULL, error);
  if (r->txn == NULL)
    return NULL;
  return repo_txn_sink (r->txn);
}

static gboolean
ostree_set_ref (UnpackRepo *base, const char *ref, const char *commit, GError **error)
{
  repo_txn_set_ref (((OstreeUnpackRepo *) base)->txn, ref, commit);
  return TRUE;
}

static gboolean
ostree_finish (UnpackRepo *base, GError **error)
{
  return repo_txn_finish (((OstreeUnpackRepo *) base)->txn, NULL, error);
}

static char *
fetch (const char *url, const char *cache_dir, const char *sha256, gint64 size, GError **error)
{
  return fetch_cached (url, cache_dir, sha256, size, NULL, error);
}

gboolean
ostreeunpack_run (OstreeRepo *repo, const UnpackArgs *args, GError **error)
{
  /* A bare or bare-user repository the store's own transaction serves:
   * the lean front's path (leanrepo.c), whichever process runs it. */
  g_autoptr(GError) local_error = NULL;
  if (lean_repo_run (args, fetch, &local_error))
    return TRUE;
  if (!g_error_matches (local_error, UNPACK_ERROR, UNPACK_ERROR_DEFER))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  OstreeUnpackRepo r = {
    { ostree_read_ref, ostree_load_commit, ostree_begin, ostree_set_ref, ostree_finish },
    repo, NULL,
  };
  gboolean ok = unpack_run (&r.base, args, fetch, error);
  g_clear_pointer (&r.txn, repo_txn_free);
  return ok;
}
