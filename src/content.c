/* content.c — content objects (regular files from memory, symlinks).
 *
 * libostree checksums what it writes with GLib's portable SHA-256 (a few
 * hundred MB/s); unpacking a .deb spent more time there than in writing.
 * Here the object checksum (SHA-256 over OSTree's file header, then the
 * data) comes from OpenSSL, which uses the CPU's SHA instructions, and the
 * object is handed to libostree with that checksum as trusted, so it is not
 * hashed twice and not written at all when the repository already has it.
 * (Without a checksum libostree writes the object first and deletes it again
 * when the repository has it: on ext4 without a journal every later inode
 * allocation then steps over the deleted inode for a minute.)
 * The header bytes are OSTree's format, built here (the unit tests compare
 * the checksums with libostree's).  Within a transaction that has a StagingWriter (staging.c),
 * regular files and symlinks are written by it instead of by libostree. */
#include "config.h"

#include <string.h>
#include <sys/stat.h>

#include "content.h"
#include "repo.h"
#include "sha256.h"
#include "util.h"

static GFileInfo *
regular_info (guint32 uid, guint32 gid, guint32 mode, gsize size)
{
  GFileInfo *info = g_file_info_new ();
  g_file_info_set_file_type (info, G_FILE_TYPE_REGULAR);
  g_file_info_set_size (info, size);
  g_file_info_set_attribute_uint32 (info, "unix::uid", uid);
  g_file_info_set_attribute_uint32 (info, "unix::gid", gid);
  g_file_info_set_attribute_uint32 (info, "unix::mode", S_IFREG | (mode & 07777));
  return info;
}

/* The file header OSTree puts before a content object's data (and hashes
 * with it): the variant (uuuusa(ayay)) of owner, group and mode (each
 * big-endian), a zero rdev, the symlink target ("" for a regular file) and
 * the xattrs, after its size (a big-endian guint32) and four zero bytes.
 * The unit tests check it against libostree's own checksums. */
static GBytes *
file_header (GFileInfo *info, GVariant *xattrs, GError **error)
{
  const char *target = g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK
                           ? g_file_info_get_symlink_target (info)
                           : "";
  g_autoptr(GVariant) header = g_variant_ref_sink (g_variant_new (
      "(uuuus@a(ayay))", GUINT32_TO_BE (g_file_info_get_attribute_uint32 (info, "unix::uid")),
      GUINT32_TO_BE (g_file_info_get_attribute_uint32 (info, "unix::gid")),
      GUINT32_TO_BE (g_file_info_get_attribute_uint32 (info, "unix::mode")), 0, target,
      xattrs != NULL ? xattrs : g_variant_new_array (G_VARIANT_TYPE ("(ayay)"), NULL, 0)));
  gsize size = g_variant_get_size (header);
  if (size > G_MAXUINT32)
    return util_fail (error, "an OSTree file header of %zu bytes", size), NULL;
  guint8 *buf = g_malloc0 (8 + size);
  guint32 be = GUINT32_TO_BE ((guint32) size);
  memcpy (buf, &be, sizeof be);
  g_variant_store (header, buf + 8);
  return g_bytes_new_take (buf, 8 + size);
}

static char *
checksum_of (GBytes *header, const guint8 *data, gsize size)
{
  g_autoptr(Sha256) sha = sha256_new ();
  gsize header_len;
  const guint8 *header_data = g_bytes_get_data (header, &header_len);
  sha256_update (sha, header_data, header_len);
  sha256_update (sha, data, size);
  return sha256_finish_hex (sha);
}

char *
content_checksum (guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs, const guint8 *data,
                  gsize size, GError **error)
{
  g_autoptr(GFileInfo) info = regular_info (uid, gid, mode, size);
  g_autoptr(GBytes) header = file_header (info, xattrs, error);
  if (header == NULL)
    return NULL;
  return checksum_of (header, data, size);
}

/* Store the object INFO and XATTRS describe, with DATA (SIZE bytes) for a
 * regular file, under a checksum computed here.  The content stream handed
 * to libostree is the header and the data as they are, so libostree neither
 * builds the header again nor hashes anything. */
static char *
write_trusted (OstreeRepo *repo, GFileInfo *info, GVariant *xattrs, const guint8 *data, gsize size,
               GCancellable *cancellable, GError **error)
{
  g_autoptr(GBytes) header = file_header (info, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autofree char *checksum = checksum_of (header, data, size);

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

/* The same, for an archive repository: libostree computes the checksum
 * (what unpack-deb always did there). */
static char *
write_untrusted (OstreeRepo *repo, GFileInfo *info, GVariant *xattrs, const guint8 *data,
                 gsize size, GCancellable *cancellable, GError **error)
{
  g_autoptr(GInputStream) input =
      data != NULL ? g_memory_input_stream_new_from_data (data, size, NULL) : NULL;
  return repo_write_content (repo, info, xattrs, input, cancellable, error);
}

GHashTable *
content_headers_new (void)
{
  return g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                (GDestroyNotify) g_bytes_unref);
}

/* The header of a regular file.  HEADERS, when not NULL, keeps those of
 * files without xattrs by owner and mode. */
static GBytes *
regular_header (GHashTable *headers, guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs,
                GError **error)
{
  gboolean cacheable = headers != NULL && xattrs == NULL && uid <= 0xffff && gid <= 0xffff;
  gint64 key = (gint64) (mode & 07777) << 32 | (gint64) uid << 16 | gid;
  GBytes *cached = cacheable ? g_hash_table_lookup (headers, &key) : NULL;
  if (cached != NULL)
    return g_bytes_ref (cached);
  g_autoptr(GFileInfo) info = regular_info (uid, gid, mode, 0);
  GBytes *header = file_header (info, xattrs, error);
  if (header != NULL && cacheable)
    g_hash_table_insert (headers, g_memdup2 (&key, sizeof key), g_bytes_ref (header));
  return header;
}

char *
content_write_regular (OstreeRepo *repo, GHashTable *headers, guint32 uid, guint32 gid,
                       guint32 mode, GVariant *xattrs, const guint8 *data, gsize size,
                       GCancellable *cancellable, GError **error)
{
  StagingWriter *writer = repo_staging_writer (repo);
  if (writer == NULL)
    {
      g_autoptr(GFileInfo) info = regular_info (uid, gid, mode, size);
      if (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE)
        return write_untrusted (repo, info, xattrs, data, size, cancellable, error);
      return write_trusted (repo, info, xattrs, data, size, cancellable, error);
    }

  g_autoptr(GBytes) header = regular_header (headers, uid, gid, mode, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autofree char *checksum = checksum_of (header, data, size);
  if (!staging_write_regular (writer, checksum, uid, gid, mode, xattrs, data, size, error))
    return NULL;
  return g_steal_pointer (&checksum);
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

char *
content_write_symlink (OstreeRepo *repo, guint32 uid, guint32 gid, const char *target,
                       GVariant *xattrs, GCancellable *cancellable, GError **error)
{
  g_autoptr(GFileInfo) info = content_symlink_info (uid, gid, target);
  if (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_ARCHIVE)
    return write_untrusted (repo, info, xattrs, NULL, 0, cancellable, error);
  StagingWriter *writer = repo_staging_writer (repo);
  if (writer == NULL)
    return write_trusted (repo, info, xattrs, NULL, 0, cancellable, error);
  g_autoptr(GBytes) header = file_header (info, xattrs, error);
  if (header == NULL)
    return NULL;
  g_autofree char *checksum = checksum_of (header, NULL, 0);
  if (!staging_write_symlink (writer, checksum, uid, gid, target, xattrs, error))
    return NULL;
  return g_steal_pointer (&checksum);
}
