/* objects.c — OSTree's object formats, with GLib alone. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "barestore/objects.h"
#include "base/sha256.h"
#include "base/util.h"

const char *
objects_type_name (ObjectsType type)
{
  switch (type)
    {
    case OBJECTS_FILE: return "file";
    case OBJECTS_DIR_TREE: return "dirtree";
    case OBJECTS_DIR_META: return "dirmeta";
    case OBJECTS_COMMIT: return "commit";
    }
  g_assert_not_reached ();
}

void
objects_path (char path[OBJECTS_PATH_MAX], const char *checksum, const char *suffix)
{
  g_snprintf (path, OBJECTS_PATH_MAX, "%.2s/%s.%s", checksum, checksum + 2, suffix);
}

void
objects_type_path (char path[OBJECTS_PATH_MAX], const char *checksum, ObjectsType type)
{
  objects_path (path, checksum, objects_type_name (type));
}

void
objects_repo_path (char path[OBJECTS_REPO_PATH_MAX], const char *checksum, const char *suffix)
{
  char rel[OBJECTS_PATH_MAX];
  objects_path (rel, checksum, suffix);
  g_snprintf (path, OBJECTS_REPO_PATH_MAX, "objects/%s", rel);
}

gboolean
objects_make_dir (int objects_dfd, const char *path)
{
  char dir[3] = { path[0], path[1], '\0' };
  return mkdirat (objects_dfd, dir, 0777) == 0 || errno == EEXIST;
}

static GVariant *
no_xattrs (void)
{
  return g_variant_new_array (G_VARIANT_TYPE ("(ayay)"), NULL, 0);
}

/* The variant (uuuusa(ayay)) of owner, group and mode (each big-endian),
 * a zero rdev, the symlink target and the xattrs, after its size (a
 * big-endian guint32) and four zero bytes. */
GBytes *
objects_file_header (guint32 uid, guint32 gid, guint32 mode, const char *target,
                     GVariant *xattrs, GError **error)
{
  g_autoptr(GVariant) header = g_variant_ref_sink (g_variant_new (
      "(uuuus@a(ayay))", GUINT32_TO_BE (uid), GUINT32_TO_BE (gid), GUINT32_TO_BE (mode), 0,
      target != NULL ? target : "", xattrs != NULL ? xattrs : no_xattrs ()));
  gsize size = g_variant_get_size (header);
  if (size > G_MAXUINT32)
    return util_fail (error, "an OSTree file header of %zu bytes", size), NULL;
  guint8 *buf = g_malloc0 (8 + size);
  guint32 be = GUINT32_TO_BE ((guint32) size);
  memcpy (buf, &be, sizeof be);
  g_variant_store (header, buf + 8);
  return g_bytes_new_take (buf, 8 + size);
}

GHashTable *
objects_headers_new (void)
{
  return g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                (GDestroyNotify) g_bytes_unref);
}

GBytes *
objects_regular_header (GHashTable *headers, guint32 uid, guint32 gid, guint32 mode,
                        GVariant *xattrs, GError **error)
{
  gboolean cacheable = headers != NULL && xattrs == NULL && uid <= 0xffff && gid <= 0xffff;
  gint64 key = (gint64) (mode & 07777) << 32 | (gint64) uid << 16 | gid;
  GBytes *cached = cacheable ? g_hash_table_lookup (headers, &key) : NULL;
  if (cached != NULL)
    return g_bytes_ref (cached);
  GBytes *header = objects_file_header (uid, gid, S_IFREG | (mode & 07777), NULL, xattrs, error);
  if (header != NULL && cacheable)
    g_hash_table_insert (headers, g_memdup2 (&key, sizeof key), g_bytes_ref (header));
  return header;
}

char *
objects_content_checksum (GBytes *header, const guint8 *data, gsize size)
{
  g_autoptr(Sha256) sha = sha256_new ();
  gsize header_len;
  const guint8 *header_data = g_bytes_get_data (header, &header_len);
  sha256_update (sha, header_data, header_len);
  sha256_update (sha, data, size);
  return sha256_finish_hex (sha);
}

GVariant *
objects_checksum_to_bytes_v (const char *checksum)
{
  guint8 bytes[32];
  for (int i = 0; i < 32; i++)
    bytes[i] = g_ascii_xdigit_value (checksum[2 * i]) << 4 | g_ascii_xdigit_value (checksum[2 * i + 1]);
  return g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, bytes, sizeof bytes, 1);
}

char *
objects_checksum_from_bytes_v (GVariant *bytes)
{
  gsize n = 0;
  const guint8 *data = g_variant_get_fixed_array (bytes, &n, 1);
  return n == 32 ? sha256_to_hex (data) : NULL;
}

GVariant *
objects_dirmeta_new (guint32 uid, guint32 gid, guint32 mode, GVariant *xattrs)
{
  return g_variant_new ("(uuu@a(ayay))", GUINT32_TO_BE (uid), GUINT32_TO_BE (gid),
                        GUINT32_TO_BE (S_IFDIR | (mode & 07777)),
                        xattrs != NULL ? xattrs : no_xattrs ());
}

GVariant *
objects_dirtree_new (GHashTable *files, GHashTable *dir_contents, GHashTable *dir_meta)
{
  g_autoptr(GPtrArray) file_names = util_sorted_keys (files);
  GVariantBuilder filesb;
  g_variant_builder_init (&filesb, G_VARIANT_TYPE ("a(say)"));
  for (guint i = 0; i < file_names->len; i++)
    g_variant_builder_add (&filesb, "(s@ay)", (const char *) file_names->pdata[i],
                           objects_checksum_to_bytes_v (g_hash_table_lookup (files,
                                                                             file_names->pdata[i])));
  g_autoptr(GPtrArray) dir_names = util_sorted_keys (dir_contents);
  GVariantBuilder dirs;
  g_variant_builder_init (&dirs, G_VARIANT_TYPE ("a(sayay)"));
  for (guint i = 0; i < dir_names->len; i++)
    {
      const char *name = dir_names->pdata[i];
      g_variant_builder_add (&dirs, "(s@ay@ay)", name,
                             objects_checksum_to_bytes_v (g_hash_table_lookup (dir_contents, name)),
                             objects_checksum_to_bytes_v (g_hash_table_lookup (dir_meta, name)));
    }
  return g_variant_new ("(@a(say)@a(sayay))", g_variant_builder_end (&filesb),
                        g_variant_builder_end (&dirs));
}

GVariant *
objects_commit_new (GVariant *metadata, const char *subject, guint64 timestamp,
                    const char *root_contents, const char *root_meta)
{
  return g_variant_new ("(@a{sv}@ay@a(say)sst@ay@ay)",
                        metadata != NULL ? metadata
                                         : g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0),
                        g_variant_new_array (G_VARIANT_TYPE_BYTE, NULL, 0),
                        g_variant_new_array (G_VARIANT_TYPE ("(say)"), NULL, 0),
                        subject != NULL ? subject : "", "", GUINT64_TO_BE (timestamp),
                        objects_checksum_to_bytes_v (root_contents),
                        objects_checksum_to_bytes_v (root_meta));
}
