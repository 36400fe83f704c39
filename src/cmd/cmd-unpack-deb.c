/* apt2ostree unpack-deb — one .deb (a file or a URL) into one ref, or with
 * --batch many, each into its own ref, in one transaction: unpack.c's run
 * over a libostree repository.  (The lean front, main.c, runs it without
 * libostree when it can.) */
#include "config.h"

#include "cmd/cmd.h"
#include "store/content.h"
#include "apt/fetch.h"
#include "store/repo.h"
#include "store/staging.h"
#include "deb/unpack.h"
#include "base/util.h"

/* ------------------------------------------------------------------------ */
/* A GInputStream over an ObjectWriterRead, for archive repositories, where
 * libostree compresses what it reads. */

#define A2O_TYPE_READ_STREAM (a2o_read_stream_get_type ())
G_DECLARE_FINAL_TYPE (A2oReadStream, a2o_read_stream, A2O, READ_STREAM, GInputStream)

struct _A2oReadStream {
  GInputStream parent;
  ObjectWriterRead read;
  gpointer user_data;
};

G_DEFINE_TYPE (A2oReadStream, a2o_read_stream, G_TYPE_INPUT_STREAM)

static gssize
a2o_read_stream_read (GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable,
                       GError **error)
{
  A2oReadStream *self = A2O_READ_STREAM (stream);
  return self->read (self->user_data, buffer, count, error);
}

static gboolean
a2o_read_stream_close (GInputStream *stream, GCancellable *cancellable, GError **error)
{
  return TRUE;
}

static void
a2o_read_stream_class_init (A2oReadStreamClass *klass)
{
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);
  stream_class->read_fn = a2o_read_stream_read;
  stream_class->close_fn = a2o_read_stream_close;
}

static void
a2o_read_stream_init (A2oReadStream *self)
{
}

/* ------------------------------------------------------------------------ */
/* The DebSink over libostree, for the repositories the writer does not
 * serve (archive mode, per-object fsync, fs-verity). */

typedef struct {
  DebSink sink;
  OstreeRepo *repo;
} OstreeSink;

static char *
ostree_regular (DebSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                GVariant *xattrs, const guint8 *data, gsize size, GError **error)
{
  return content_write_regular (((OstreeSink *) sink)->repo, headers, uid, gid, mode, xattrs, data,
                                size, NULL, error);
}

static char *
ostree_regular_stream (DebSink *sink, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                       guint64 size, ObjectWriterRead read, gpointer user_data, GError **error)
{
  OstreeRepo *repo = ((OstreeSink *) sink)->repo;
  if (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE)
    {
      g_autoptr(GFileInfo) info = content_regular_info (uid, gid, mode, size);
      A2oReadStream *stream = g_object_new (A2O_TYPE_READ_STREAM, NULL);
      stream->read = read;
      stream->user_data = user_data;
      g_autoptr(GInputStream) input = G_INPUT_STREAM (stream);
      return repo_write_content (repo, info, xattrs, input, NULL, error);
    }

  g_autoptr(OstreeContentWriter) writer = ostree_repo_write_regfile (repo, NULL, uid, gid,
                                                                     S_IFREG | (mode & 07777),
                                                                     size, xattrs, error);
  if (writer == NULL)
    return NULL;
  g_autofree guint8 *buf = g_malloc (128 * 1024);
  guint64 done = 0;
  for (;;)
    {
      gssize n = read (user_data, buf, 128 * 1024, error);
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      if (!g_output_stream_write_all (G_OUTPUT_STREAM (writer), buf, n, NULL, NULL, error))
        return NULL;
      done += n;
    }
  if (done != size)
    return util_fail (error, "truncated (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes)",
                      done, size), NULL;
  return ostree_content_writer_finish (writer, NULL, error);
}

static char *
ostree_symlink (DebSink *sink, guint32 uid, guint32 gid, const char *target, GVariant *xattrs,
                GError **error)
{
  return content_write_symlink (((OstreeSink *) sink)->repo, uid, gid, target, xattrs, NULL,
                                error);
}

static char *
ostree_metadata (DebSink *sink, ObjectsType type, GVariant *object, GError **error)
{
  return repo_write_metadata (((OstreeSink *) sink)->repo, (OstreeObjectType) type, object, NULL,
                              error);
}

/* ------------------------------------------------------------------------ */
/* The UnpackRepo over libostree. */

typedef struct {
  UnpackRepo base;
  OstreeRepo *repo;
  RepoTxn *txn;
  DebSink *sink;
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

static DebSink *
ostree_begin (UnpackRepo *base, GError **error)
{
  OstreeUnpackRepo *r = (OstreeUnpackRepo *) base;
  r->txn = repo_txn_begin (r->repo, NULL, error);
  if (r->txn == NULL)
    return NULL;
  ObjectWriter *writer = staging_writer_get (r->repo);
  if (writer != NULL)
    r->sink = deb_sink_for_writer (writer);
  else
    {
      OstreeSink *sink = g_new0 (OstreeSink, 1);
      sink->sink = (DebSink) { ostree_regular, ostree_regular_stream, ostree_symlink,
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
cmd_unpack_deb (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
                GError **error)
{
  g_auto(UnpackArgs) args = { NULL };
  if (!unpack_args_parse (inv, argc, argv, &args, error))
    return FALSE;

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  OstreeUnpackRepo r = {
    { ostree_read_ref, ostree_load_commit, ostree_begin, ostree_set_ref, ostree_finish },
    repo, NULL, NULL,
  };
  gboolean ok = unpack_run (&r.base, &args, fetch, error);
  g_free (r.sink);
  g_clear_pointer (&r.txn, repo_txn_free);
  return ok;
}
