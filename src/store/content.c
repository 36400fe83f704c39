/* content.c — content objects (regular files from memory, symlinks).
 *
 * libostree checksums what it writes with GLib's portable SHA-256 (a few
 * hundred MB/s); unpacking a .deb spent more time there than in writing.
 * Here the object checksum (SHA-256 over OSTree's file header, then the
 * data: objects.c) is computed with the CPU's SHA instructions, and the
 * object is handed to libostree with that checksum as trusted, so it is not
 * hashed twice and not written at all when the repository already has it.
 * (Without a checksum libostree writes the object first and deletes it again
 * when the repository has it: on ext4 without a journal every later inode
 * allocation then steps over the deleted inode for a minute.)  That is
 * the libostree sink (content_ostree_sink_new()), which a RepoTxn hands
 * out where the store's own transaction (txn.c) does not serve the
 * repository; content_write_file() writes a file through either sink. */
#include "config.h"

#include <string.h>
#include <sys/stat.h>

#include "store/content.h"
#include "barestore/objects.h"
#include "base/util.h"

GFileInfo *
content_regular_info (guint32 uid, guint32 gid, guint32 mode, gsize size)
{
  GFileInfo *info = g_file_info_new ();
  g_file_info_set_file_type (info, G_FILE_TYPE_REGULAR);
  g_file_info_set_size (info, size);
  g_file_info_set_attribute_uint32 (info, "unix::uid", uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", gid);
  g_file_info_set_attribute_uint32 (info, "unix::mode", S_IFREG | (mode & 07777));
  return info;
}

char *
content_checksum (guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs, const guint8 *data,
                  gsize size, GError **error)
{
  g_autoptr(GBytes) header = objects_regular_header (NULL, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  return objects_content_checksum (header, data, size);
}

/* Store the object with HEADER and DATA (SIZE bytes; none for a symlink)
 * under a checksum computed here.  The content stream handed to libostree
 * is the header and the data as they are, so libostree neither builds the
 * header again nor hashes anything. */
static char *
write_trusted (OstreeRepo *repo, GBytes *header, const guint8 *data, gsize size,
               GCancellable *cancellable, GError **error)
{
  g_autofree char *checksum = objects_content_checksum (header, data, size);
  guint64 length = g_bytes_get_size (header) + size;
  g_autoptr(GInputStream) stream = g_memory_input_stream_new_from_bytes (header);
  if (size > 0)
    g_memory_input_stream_add_data (G_MEMORY_INPUT_STREAM (stream), data, size, NULL);
  /* With a checksum and no out_csum, libostree trusts the checksum: it skips
   * the write when the object exists and does not hash the data. */
  if (!ostree_repo_write_content (repo, checksum, stream, length, NULL, cancellable, error))
    return NULL;
  return g_steal_pointer (&checksum);
}

/* Store the content object INFO, XATTRS and DATA make through libostree,
 * which computes the checksum (what unpack-deb always did in an archive
 * repository). */
static char *
write_untrusted_stream (OstreeRepo *repo, GFileInfo *info, GVariant *xattrs, GInputStream *data,
                        GCancellable *cancellable, GError **error)
{
  g_autoptr(GInputStream) stream = NULL;
  guint64 length = 0;
  if (!ostree_raw_file_to_content_stream (data, info, xattrs, &stream, &length, cancellable, error))
    return NULL;
  g_autofree guchar *csum = NULL;
  if (!ostree_repo_write_content (repo, NULL, stream, length, &csum, cancellable, error))
    return NULL;
  return ostree_checksum_from_bytes (csum);
}

static char *
write_untrusted (OstreeRepo *repo, GFileInfo *info, GVariant *xattrs, const guint8 *data,
                 gsize size, GCancellable *cancellable, GError **error)
{
  g_autoptr(GInputStream) input =
      data != NULL ? g_memory_input_stream_new_from_data (data, size, NULL) : NULL;
  return write_untrusted_stream (repo, info, xattrs, input, cancellable, error);
}

/* What a regular file's data the writer takes from memory: up to this
 * size read whole, streamed beyond (as deb.c holds a .deb's files). */
#define IN_MEMORY_MAX (64 * 1024 * 1024)

typedef struct {
  GInputStream *in;
  GCancellable *cancellable;
} StreamReader;

static gssize
read_stream (gpointer user_data, guint8 *buf, gsize len, GError **error)
{
  StreamReader *r = user_data;
  return g_input_stream_read (r->in, buf, len, r->cancellable, error);
}

/* The content object INFO, XATTRS and DATA make (what
 * ostree_raw_file_to_content_stream() takes), through SINK.  (A symlink's
 * mode is S_IFLNK | 0777: Linux has no other.) */
static char *
write_through (StoreSink *sink, GFileInfo *info, GVariant *xattrs, GInputStream *data,
               GCancellable *cancellable, GError **error)
{
  guint32 uid = g_file_info_get_attribute_uint32 (info, "unix::uid");
  guint32 gid = g_file_info_get_attribute_uint32 (info, "unix::gid");
  guint32 mode = g_file_info_get_attribute_uint32 (info, "unix::mode");
  GFileType type = g_file_info_get_file_type (info);
  if (type == G_FILE_TYPE_SYMBOLIC_LINK)
    return sink->symlink (sink, uid, gid, g_file_info_get_symlink_target (info), xattrs, error);
  if (type != G_FILE_TYPE_REGULAR)
    return util_fail (error, "a content object is a regular file or a symlink"), NULL;
  guint64 size = g_file_info_get_size (info);
  if (size > 0 && data == NULL)
    return util_fail (error, "a regular file of %" G_GUINT64_FORMAT " bytes without its data",
                      size), NULL;
  if (size > IN_MEMORY_MAX)
    {
      StreamReader reader = { data, cancellable };
      return sink->regular_stream (sink, uid, gid, mode, xattrs, size, read_stream, &reader,
                                   error);
    }
  g_autofree guint8 *buf = g_malloc (size + 1);
  gsize got = 0;
  if (size > 0 && !g_input_stream_read_all (data, buf, size, &got, cancellable, error))
    return NULL;
  if (got != size)
    return util_fail (error, "truncated (%" G_GSIZE_FORMAT " of %" G_GUINT64_FORMAT " bytes)",
                      got, size), NULL;
  return sink->regular (sink, NULL, uid, gid, mode, xattrs, buf, size, error);
}

char *
content_write_file (StoreSink *sink, GFileInfo *info, GVariant *xattrs, GInputStream *data,
                    GCancellable *cancellable, GError **error)
{
  /* The object's header holds the target as a GVariant string: a target
   * that is not UTF-8 would be a GLib-CRITICAL and a damaged object.  (The
   * callers refuse it first, naming the path; this is the last guard.) */
  if (g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK
      && !g_utf8_validate (g_file_info_get_symlink_target (info), -1, NULL))
    {
      g_autofree char *shown = util_shown_path (g_file_info_get_symlink_target (info));
      return util_fail (error, "a symlink target that is not valid UTF-8 (%s), which OSTree "
                        "cannot store", shown), NULL;
    }
  return write_through (sink, info, xattrs, data, cancellable, error);
}

/* --- the sink over libostree --- */

typedef struct {
  StoreSink sink;
  OstreeRepo *repo;
  PartialMarks *marks;
} OstreeSink;

static char *
ostree_regular (StoreSink *sink, GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                GVariant *xattrs, const guint8 *data, gsize size, GError **error)
{
  OstreeRepo *repo = ((OstreeSink *) sink)->repo;
  if (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE)
    {
      g_autoptr(GFileInfo) info = content_regular_info (uid, gid, mode, size);
      return write_untrusted (repo, info, xattrs, data, size, NULL, error);
    }
  g_autoptr(GBytes) header = objects_regular_header (headers, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  return write_trusted (repo, header, data, size, NULL, error);
}
GFileInfo *
content_symlink_info (guint32 uid, guint32 gid, const char *target)
{
  GFileInfo *info = g_file_info_new ();
  g_file_info_set_file_type (info, G_FILE_TYPE_SYMBOLIC_LINK);
  g_file_info_set_size (info, 0);
  g_file_info_set_symlink_target (info, target);
  g_file_info_set_attribute_uint32 (info, "unix::uid", uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", gid);
  g_file_info_set_attribute_uint32 (info, "unix::mode", S_IFLNK | 0777);
  return info;
}

static char *
ostree_symlink (StoreSink *sink, guint32 uid, guint32 gid, const char *target, GVariant *xattrs,
                GError **error)
{
  OstreeRepo *repo = ((OstreeSink *) sink)->repo;
  if (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE)
    {
      g_autoptr(GFileInfo) info = content_symlink_info (uid, gid, target);
      return write_untrusted (repo, info, xattrs, NULL, 0, NULL, error);
    }
  g_autoptr(GBytes) header = objects_file_header (uid, gid, S_IFLNK | 0777, target, xattrs, error);
  if (header == NULL)
    return NULL;
  return write_trusted (repo, header, NULL, 0, NULL, error);
}

/* A dirmeta, dirtree or commit; a commit is marked partial until the
 * transaction is on disk (as the store's writer marks its own). */
static char *
ostree_metadata (StoreSink *sink, ObjectsType type, GVariant *object, GError **error)
{
  OstreeSink *os = (OstreeSink *) sink;
  g_autoptr(GVariant) owned = g_variant_ref_sink (object);
  g_autofree guchar *csum = NULL;
  if (!ostree_repo_write_metadata (os->repo, (OstreeObjectType) type, NULL, owned, &csum, NULL,
                                   error))
    return NULL;
  g_autofree char *checksum = ostree_checksum_from_bytes (csum);
  if (type == OBJECTS_COMMIT && os->marks != NULL && !partial_marks_add (os->marks, checksum,
                                                                         error))
    return NULL;
  return g_steal_pointer (&checksum);
}

/* --- a GInputStream over an ObjectWriterRead --- */

#define CONTENT_TYPE_READ_STREAM (content_read_stream_get_type ())
G_DECLARE_FINAL_TYPE (ContentReadStream, content_read_stream, CONTENT, READ_STREAM, GInputStream)

struct _ContentReadStream {
  GInputStream parent;
  ObjectWriterRead read;
  gpointer user_data;
};

G_DEFINE_TYPE (ContentReadStream, content_read_stream, G_TYPE_INPUT_STREAM)

static gssize
content_read_stream_read (GInputStream *stream, void *buffer, gsize count,
                          GCancellable *cancellable, GError **error)
{
  ContentReadStream *self = CONTENT_READ_STREAM (stream);
  return self->read (self->user_data, buffer, count, error);
}

static gboolean
content_read_stream_close (GInputStream *stream, GCancellable *cancellable, GError **error)
{
  return TRUE;
}

static void
content_read_stream_class_init (ContentReadStreamClass *klass)
{
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);
  stream_class->read_fn = content_read_stream_read;
  stream_class->close_fn = content_read_stream_close;
}

static void
content_read_stream_init (ContentReadStream *self)
{
}

GInputStream *
content_read_stream_new (ObjectWriterRead read, gpointer user_data)
{
  ContentReadStream *self = g_object_new (CONTENT_TYPE_READ_STREAM, NULL);
  self->read = read;
  self->user_data = user_data;
  return G_INPUT_STREAM (self);
}

/* A regular file of SIZE bytes read with READ; fewer bytes than SIZE is
 * an error. */
static char *
ostree_regular_stream (StoreSink *sink, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                       guint64 size, ObjectWriterRead read, gpointer user_data, GError **error)
{
  OstreeRepo *repo = ((OstreeSink *) sink)->repo;
  if (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE)
    {
      g_autoptr(GFileInfo) info = content_regular_info (uid, gid, mode, size);
      g_autoptr(GInputStream) input = content_read_stream_new (read, user_data);
      return write_untrusted_stream (repo, info, xattrs, input, NULL, error);
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

StoreSink *
content_ostree_sink_new (OstreeRepo *repo, PartialMarks *marks)
{
  OstreeSink *os = g_new0 (OstreeSink, 1);
  os->sink = (StoreSink) { ostree_regular, ostree_regular_stream, ostree_symlink,
                           ostree_metadata };
  os->repo = repo;
  os->marks = marks;
  return &os->sink;
}
