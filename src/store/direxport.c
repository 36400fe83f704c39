/* direxport.c — a tree out of the repository as a directory; see
 * direxport.h. */
#define _GNU_SOURCE  /* nftw */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"
#include "store/direxport.h"
#include "store/repo.h"

/* 1 when DIR is an empty directory, 0 when it does not exist; an error
 * otherwise, since an export never mixes with files already there. */
static int
export_dir_state (const char *dir, GError **error)
{
  struct stat st;
  if (lstat (dir, &st) < 0)
    {
      if (errno == ENOENT)
        return 0;
      util_fail (error, "%s: %s", dir, g_strerror (errno));
      return -1;
    }
  if (!S_ISDIR (st.st_mode))
    {
      util_fail (error, "%s exists and is not a directory; export needs a new or empty directory", dir);
      return -1;
    }
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    {
      util_fail (error, "%s: cannot read the directory: %s", dir, g_strerror (errno));
      return -1;
    }
  if (g_dir_read_name (d) != NULL)
    {
      util_fail (error, "%s exists and is not empty; export needs a new or empty directory", dir);
      return -1;
    }
  return 1;
}

/* Undo a failed export.  Directories are made writable first (top down), so
 * their contents can then be removed (bottom up) even without root. */
static int
make_writable (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  if (flag == FTW_D)
    (void) chmod (path, (st->st_mode & 07777) | S_IRWXU);
  return 0;
}

static int
remove_below (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  if (ftw->level > 0)
    (void) remove (path);
  return 0;
}

static void
undo_export (const char *dir, gboolean keep_dir)
{
  (void) nftw (dir, make_writable, 32, FTW_PHYS);
  (void) nftw (dir, remove_below, 32, FTW_PHYS | FTW_DEPTH);
  if (!keep_dir)
    (void) rmdir (dir);
}

/* Setting a user.* attribute needs write permission, which a read-only
 * file or directory of the caller lacks until it is lent for the moment. */
static gboolean
set_xattr (const char *path, const char *name, const void *data, gsize size, GError **error)
{
  if (lsetxattr (path, name, data, size, 0) == 0)
    return TRUE;
  int saved = errno;
  struct stat st;
  if (saved == EACCES && lstat (path, &st) == 0 && !S_ISLNK (st.st_mode)
      && st.st_uid == geteuid () && chmod (path, (st.st_mode & 07777) | S_IWUSR) == 0)
    {
      int res = lsetxattr (path, name, data, size, 0);
      saved = errno;
      if (chmod (path, st.st_mode & 07777) < 0 && res == 0)
        return util_fail (error, "%s: cannot restore the mode: %s", path, g_strerror (errno));
      if (res == 0)
        return TRUE;
    }
  return util_fail (error, "%s: cannot set extended attribute %s: %s", path, name,
                    g_strerror (saved));
}

static gboolean
set_xattrs (const char *path, GVariant *xattrs, gboolean only_user, guint *out_dropped,
            GError **error)
{
  for (gsize i = 0; i < g_variant_n_children (xattrs); i++)
    {
      const char *name;
      g_autoptr(GVariant) value = NULL;
      g_variant_get_child (xattrs, i, "(^&ay@ay)", &name, &value);
      if (only_user && !g_str_has_prefix (name, "user."))
        {
          (*out_dropped)++;
          continue;
        }
      gsize size;
      const void *data = g_variant_get_fixed_array (value, &size, 1);
      if (!set_xattr (path, name, data, size, error))
        return FALSE;
    }
  return TRUE;
}

/* A checkout as a non-root user writes no extended attributes at all; put
 * back those an unprivileged user may set (user.*, not on symlinks), and
 * count the others. */
static gboolean
restore_user_xattrs (OstreeRepo *repo, GString *path, const char *contents, const char *meta,
                     guint *out_dropped, GCancellable *cancellable, GError **error)
{
  g_autoptr(GVariant) dirtree = NULL;
  g_autoptr(GVariant) dirmeta = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_TREE, contents, &dirtree, error)
      || !ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_META, meta, &dirmeta, error))
    return FALSE;
  g_autoptr(GVariant) dir_xattrs = g_variant_get_child_value (dirmeta, 3);
  if (!set_xattrs (path->str, dir_xattrs, TRUE, out_dropped, error))
    return FALSE;

  gsize len = path->len;
  g_autoptr(GVariant) files = g_variant_get_child_value (dirtree, 0);
  for (gsize i = 0; i < g_variant_n_children (files); i++)
    {
      const char *name;
      g_autoptr(GVariant) csum_v = NULL;
      g_variant_get_child (files, i, "(&s@ay)", &name, &csum_v);
      g_autofree char *checksum = ostree_checksum_from_bytes_v (csum_v);
      g_autoptr(GFileInfo) info = NULL;
      g_autoptr(GVariant) xattrs = NULL;
      if (!ostree_repo_load_file (repo, checksum, NULL, &info, &xattrs, cancellable, error))
        return FALSE;
      if (xattrs == NULL || g_variant_n_children (xattrs) == 0)
        continue;
      g_string_append_printf (path, "/%s", name);
      gboolean ok = TRUE;
      if (g_file_info_get_file_type (info) == G_FILE_TYPE_SYMBOLIC_LINK)
        *out_dropped += g_variant_n_children (xattrs);
      else
        ok = set_xattrs (path->str, xattrs, TRUE, out_dropped, error);
      g_string_truncate (path, len);
      if (!ok)
        return FALSE;
    }

  g_autoptr(GVariant) dirs = g_variant_get_child_value (dirtree, 1);
  for (gsize i = 0; i < g_variant_n_children (dirs); i++)
    {
      const char *name;
      g_autoptr(GVariant) tree_v = NULL;
      g_autoptr(GVariant) meta_v = NULL;
      g_variant_get_child (dirs, i, "(&s@ay@ay)", &name, &tree_v, &meta_v);
      g_autofree char *tree = ostree_checksum_from_bytes_v (tree_v);
      g_autofree char *submeta = ostree_checksum_from_bytes_v (meta_v);
      g_string_append_printf (path, "/%s", name);
      gboolean ok = restore_user_xattrs (repo, path, tree, submeta, out_dropped, cancellable, error);
      g_string_truncate (path, len);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* The root's metadata on a directory that was there before the checkout
 * (ostree leaves an existing directory as it finds it). */
static gboolean
apply_root_meta (OstreeRepo *repo, const char *dir, const char *meta, gboolean as_root,
                 guint *out_dropped, GError **error)
{
  g_autoptr(GVariant) dirmeta = NULL;
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_META, meta, &dirmeta, error))
    return FALSE;
  guint32 uid, gid, mode;
  g_autoptr(GVariant) xattrs = NULL;
  g_variant_get (dirmeta, "(uuu@a(ayay))", &uid, &gid, &mode, &xattrs);
  if (as_root && lchown (dir, GUINT32_FROM_BE (uid), GUINT32_FROM_BE (gid)) < 0)
    return util_fail (error, "%s: cannot change the owner: %s", dir, g_strerror (errno));
  if (chmod (dir, GUINT32_FROM_BE (mode) & 07777) < 0)
    return util_fail (error, "%s: cannot change the mode: %s", dir, g_strerror (errno));
  /* As non-root, restore_user_xattrs() sets the root's attributes. */
  return !as_root || set_xattrs (dir, xattrs, FALSE, out_dropped, error);
}

gboolean
direxport_write (OstreeRepo *repo, RepoRev *rev, const char *dir, guint *out_dropped,
                 GCancellable *cancellable, GError **error)
{
  int existing = export_dir_state (dir, error);
  if (existing < 0)
    return FALSE;

  gboolean as_root = getuid () == 0;
  OstreeRepoCheckoutAtOptions options = { 0, };
  options.mode = as_root ? OSTREE_REPO_CHECKOUT_MODE_NONE : OSTREE_REPO_CHECKOUT_MODE_USER;
  options.overwrite_mode = existing ? OSTREE_REPO_CHECKOUT_OVERWRITE_UNION_FILES
                                    : OSTREE_REPO_CHECKOUT_OVERWRITE_NONE;
  options.force_copy = TRUE;

  g_autoptr(GError) local_error = NULL;
  guint dropped = 0;
  gboolean ok = ostree_repo_checkout_at (repo, &options, AT_FDCWD, dir, rev->commit,
                                         cancellable, &local_error);
  if (ok && existing)
    ok = apply_root_meta (repo, dir, rev->root_meta, as_root, &dropped, &local_error);
  if (ok && !as_root)
    {
      g_autoptr(GString) path = g_string_new (dir);
      ok = restore_user_xattrs (repo, path, rev->root_contents, rev->root_meta, &dropped,
                                cancellable, &local_error);
    }
  if (!ok)
    {
      undo_export (dir, existing);
      return util_fail (error, "%s: cannot export \"%s\": %s", dir, rev->name, local_error->message);
    }
  *out_dropped = dropped;
  return TRUE;
}
