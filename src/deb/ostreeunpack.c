/* ostreeunpack.c — the unpack-deb job over a libostree repository; see
 * ostreeunpack.h. */
#include "config.h"

#include "apt/fetch.h"
#include "base/util.h"
#include "deb/ostreeunpack.h"
#include "store/content.h"
#include "store/repo.h"
#include "store/staging.h"

/* --- the StoreSink over libostree, for the repositories the writer does not
 * serve (archive mode, per-object fsync, fs-verity) --- */

typedef struct {
  StoreSink sink;
  OstreeRepo *repo;
} OstreeSink;

static char *
ostree_regular (StoreSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                GVariant *xattrs, const guint8 *data, gsize size, GError **error)
{
  return content_write_regular (((OstreeSink *) sink)->repo, headers, uid, gid, mode, xattrs, data,
                                size, NULL, error);
}

static char *
ostree_regular_stream (StoreSink *sink, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                       guint64 size, ObjectWriterRead read, gpointer user_data, GError **error)
{
  return content_write_regular_read (((OstreeSink *) sink)->repo, uid, gid, mode, xattrs, size,
                                     read, user_data, error);
}

static char *
ostree_symlink (StoreSink *sink, guint32 uid, guint32 gid, const char *target, GVariant *xattrs,
                GError **error)
{
  return content_write_symlink (((OstreeSink *) sink)->repo, uid, gid, target, xattrs, NULL,
                                error);
}

static char *
ostree_metadata (StoreSink *sink, ObjectsType type, GVariant *object, GError **error)
{
  return repo_write_metadata (((OstreeSink *) sink)->repo, (OstreeObjectType) type, object, NULL,
                              error);
}

/* --- the UnpackRepo over libostree --- */

typedef struct {
  UnpackRepo base;
  OstreeRepo *repo;
  RepoTxn *txn;
  StoreSink *sink;
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
  ObjectWriter *writer = staging_writer_get (r->repo);
  if (writer != NULL)
    r->sink = store_sink_for_writer (writer);
  else
    {
      OstreeSink *sink = g_new0 (OstreeSink, 1);
      sink->sink = (StoreSink) { ostree_regular, ostree_regular_stream, ostree_symlink,
                               ostree_metadata };
      sink->repo = r->repo;
      r->sink = &sink->sink;
    }
  return r->sink;
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
  OstreeUnpackRepo r = {
    { ostree_read_ref, ostree_load_commit, ostree_begin, ostree_set_ref, ostree_finish },
    repo, NULL, NULL,
  };
  gboolean ok = unpack_run (&r.base, args, fetch, error);
  g_free (r.sink);
  g_clear_pointer (&r.txn, repo_txn_free);
  return ok;
}
