/* checkout.c — hardlink checkout of a bare repository's tree. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <gio/gunixoutputstream.h>

#include "checkout.h"
#include "util.h"

typedef struct {
  OstreeRepo *repo;
  int repo_dfd;
  GHashTable *dirmetas;    /* checksum → GVariant */
  GCancellable *cancellable;
} Checkout;

static gboolean
set_xattrs (int fd, GVariant *xattrs, const char *path, GError **error)
{
  gsize n = g_variant_n_children (xattrs);
  for (gsize i = 0; i < n; i++)
    {
      const char *name;
      g_autoptr(GVariant) value = NULL;
      g_variant_get_child (xattrs, i, "(^&ay@ay)", &name, &value);
      gsize len;
      const guint8 *data = g_variant_get_fixed_array (value, &len, 1);
      if (fsetxattr (fd, name, data, len, 0) < 0)
        return util_fail (error, "%s: cannot set %s: %s", path, name, g_strerror (errno));
    }
  return TRUE;
}

/* The object has reached the filesystem's link limit: a copy instead. */
static gboolean
copy_object (Checkout *co, const char *checksum, int dfd, const char *name, const char *path,
             GError **error)
{
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GVariant) xattrs = NULL;
  if (!ostree_repo_load_file (co->repo, checksum, &input, &info, &xattrs, co->cancellable, error))
    return FALSE;
  guint32 uid = g_file_info_get_attribute_uint32 (info, "unix::uid");
  guint32 gid = g_file_info_get_attribute_uint32 (info, "unix::gid");
  guint32 mode = g_file_info_get_attribute_uint32 (info, "unix::mode");
  if (g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK)
    {
      if (symlinkat (g_file_info_get_symlink_target (info), dfd, name) < 0
          || fchownat (dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        return util_fail (error, "%s: %s", path, g_strerror (errno));
      return TRUE;
    }
  int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  g_autoptr(GOutputStream) out = g_unix_output_stream_new (fd, TRUE);
  if (g_output_stream_splice (out, input, 0, co->cancellable, error) < 0)
    return FALSE;
  if (fchown (fd, uid, gid) < 0 || fchmod (fd, mode & 07777) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return xattrs == NULL || set_xattrs (fd, xattrs, path, error);
}

static GVariant *
load_dirmeta (Checkout *co, const char *checksum, GError **error)
{
  GVariant *meta = g_hash_table_lookup (co->dirmetas, checksum);
  if (meta != NULL)
    return meta;
  if (!ostree_repo_load_variant (co->repo, OSTREE_OBJECT_TYPE_DIR_META, checksum, &meta, error))
    return NULL;
  g_hash_table_insert (co->dirmetas, g_strdup (checksum), meta);
  return meta;
}

/* Fill the directory DFD (at PATH) from the dirtree CONTENTS and give it
 * the metadata META last, so a read-only directory is filled first. */
static gboolean
checkout_dir (Checkout *co, int dfd, const char *path, const char *contents, const char *meta,
              GError **error)
{
  if (g_cancellable_set_error_if_cancelled (co->cancellable, error))
    return FALSE;
  g_autoptr(GVariant) dirtree = NULL;
  if (!ostree_repo_load_variant (co->repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error))
    return FALSE;
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);

  GVariantIter iter;
  const char *name;
  GVariant *csum_v;
  char object[2 + 1 + 62 + 5 + 1 + 8];  /* objects/ is added below */
  g_variant_iter_init (&iter, files);
  while (g_variant_iter_loop (&iter, "(&s@ay)", &name, &csum_v))
    {
      char checksum[OSTREE_SHA256_STRING_LEN + 1];
      ostree_checksum_inplace_from_bytes (ostree_checksum_bytes_peek (csum_v), checksum);
      g_snprintf (object, sizeof object, "%.2s/%s.file", checksum, checksum + 2);
      g_autofree char *object_path = g_strconcat ("objects/", object, NULL);
      if (linkat (co->repo_dfd, object_path, dfd, name, 0) == 0)
        continue;
      g_autofree char *file_path = g_build_filename (path, name, NULL);
      if (errno != EMLINK)
        return util_fail (error, "%s: cannot hardlink the object %s: %s", file_path, checksum,
                          g_strerror (errno));
      if (!copy_object (co, checksum, dfd, name, file_path, error))
        return FALSE;
    }

  GVariant *tree_v, *meta_v;
  g_variant_iter_init (&iter, dirs);
  while (g_variant_iter_loop (&iter, "(&s@ay@ay)", &name, &tree_v, &meta_v))
    {
      g_autofree char *sub_path = g_build_filename (path, name, NULL);
      g_autofree char *sub_contents = ostree_checksum_from_bytes_v (tree_v);
      g_autofree char *sub_meta = ostree_checksum_from_bytes_v (meta_v);
      if (mkdirat (dfd, name, 0700) < 0)
        return util_fail (error, "%s: %s", sub_path, g_strerror (errno));
      int sub_fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub_fd < 0)
        return util_fail (error, "%s: %s", sub_path, g_strerror (errno));
      gboolean ok = checkout_dir (co, sub_fd, sub_path, sub_contents, sub_meta, error);
      close (sub_fd);
      if (!ok)
        return FALSE;
    }

  GVariant *dirmeta = load_dirmeta (co, meta, error);
  if (dirmeta == NULL)
    return FALSE;
  guint32 uid, gid, mode;
  g_autoptr(GVariant) xattrs = NULL;
  g_variant_get (dirmeta, "(uuu@a(ayay))", &uid, &gid, &mode, &xattrs);
  if (!set_xattrs (dfd, xattrs, path, error))
    return FALSE;
  if (fchown (dfd, GUINT32_FROM_BE (uid), GUINT32_FROM_BE (gid)) < 0
      || fchmod (dfd, GUINT32_FROM_BE (mode) & 07777) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  return TRUE;
}

gboolean
checkout_bare_hardlinks (OstreeRepo *repo, const char *contents, const char *meta,
                         const char *path, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (ostree_repo_get_mode (repo) == OSTREE_REPO_MODE_BARE, FALSE);
  if (mkdir (path, 0700) < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return util_fail (error, "%s: %s", path, g_strerror (errno));
  g_autoptr(GHashTable) dirmetas = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                          (GDestroyNotify) g_variant_unref);
  Checkout co = {
    .repo = repo,
    .repo_dfd = ostree_repo_get_dfd (repo),
    .dirmetas = dirmetas,
    .cancellable = cancellable,
  };
  gboolean ok = checkout_dir (&co, fd, path, contents, meta, error);
  close (fd);
  return ok;
}
