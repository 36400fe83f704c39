/* apt2ostree export — a tree out of the repository, as a directory or a tar
 * archive. */
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

#include "store/fsimage.h"
#include "store/oci.h"
#include "store/tarball.h"
#include "store/treeread.h"
#include "cmd/cmd.h"
#include "store/repo.h"
#include "base/util.h"

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

/* A copy, never hardlinks into the repository: the user may change the
 * files.  As root the files keep their real owners; otherwise they belong to
 * the caller and setuid/setgid bits are dropped (libostree's user mode). */
static gboolean
export_to_directory (OstreeRepo *repo, RepoRev *rev, const char *dir,
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
  if (dropped > 0)
    fprintf (stderr, "apt2ostree export: warning: %s: %u extended attributes outside user.* "
             "(or on symlinks) left out: only root can set them\n", dir, dropped);
  return TRUE;
}

/* The OCI platform of the image: its dpkg architecture (ARCH, else the
 * first line of var/lib/dpkg/arch in the tree). */
static gboolean
oci_platform (OstreeRepo *repo, RepoRev *rev, const char *arch, OciOptions *opts,
              GCancellable *cancellable, GError **error)
{
  g_autofree char *from_tree = NULL;
  if (arch == NULL)
    {
      g_autoptr(GFile) root = NULL;
      if (!ostree_repo_read_commit (repo, rev->commit, &root, NULL, cancellable, error))
        return FALSE;
      from_tree = treeread_text (root, "var/lib/dpkg/arch", cancellable, error);
      if (from_tree == NULL && error != NULL && *error != NULL)
        return FALSE;
      if (from_tree == NULL)
        return util_fail (error, "\"%s\" has no var/lib/dpkg/arch to take the image's architecture "
                          "from; give --arch", rev->name);
      from_tree[strcspn (from_tree, "\n")] = '\0';
      arch = from_tree;
    }
  if (!oci_platform_of_dpkg_arch (arch, &opts->architecture, &opts->variant))
    return util_fail (error, "architecture \"%s\" has no OCI name known to apt2ostree", arch);
  return TRUE;
}

gboolean
cmd_export (int argc, char **argv, CmdInvocation *inv, GCancellable *cancellable,
            GError **error)
{
  g_autofree char *dir = NULL;
  g_autofree char *tar = NULL;
  g_autofree char *oci = NULL;
  g_autofree char *tag = NULL;
  g_autofree char *arch = NULL;
  g_autofree char *squashfs = NULL;
  g_autofree char *ext4 = NULL;
  g_autofree char *size_text = NULL;
  const GOptionEntry entries[] = {
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir,
      "Copy the tree to this new or empty directory", "DIR" },
    { "tar", 0, 0, G_OPTION_ARG_FILENAME, &tar,
      "Write the tree as a tar archive (.tar, .tar.gz, .tar.xz, .tar.zst, .tar.bz2; "
      "\"-\" for standard output)", "FILE" },
    { "oci", 0, 0, G_OPTION_ARG_FILENAME, &oci,
      "Write an OCI image: a layout in this new or empty directory, or an archive if it ends "
      "in .tar", "DIR|FILE.tar" },
    { "tag", 0, 0, G_OPTION_ARG_STRING, &tag, "With --oci: the image's tag (ref.name)", "NAME" },
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch,
      "With --oci: the dpkg architecture (default: the image's var/lib/dpkg/arch)", "ARCH" },
    { "squashfs", 0, 0, G_OPTION_ARG_FILENAME, &squashfs,
      "Write a squashfs image with mksquashfs (as root)", "FILE" },
    { "ext4", 0, 0, G_OPTION_ARG_FILENAME, &ext4,
      "Write an ext4 image with mkfs.ext4 -d (as root)", "FILE" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size_text,
      "With --ext4: the image's size (512M, 2G; default: the tree's with room to spare)", "SIZE" },
    { NULL }
  };
  if (!cmd_parse (inv, "REV (--dir DIR | --tar FILE | --oci DIR|FILE.tar [--tag NAME] |\n"
                  "                  --squashfs FILE | --ext4 FILE [--size SIZE])",
                  "Get the tree of REV (a ref or commit) out of the repository, keeping\n"
                  "owners, modes and extended attributes.",
                  entries, &argc, &argv, error))
    return FALSE;
  if (argc != 2)
    return cmd_usage_error (inv, error, argc < 2 ? "expected REV" : "expected one REV");
  if ((dir != NULL) + (tar != NULL) + (oci != NULL) + (squashfs != NULL) + (ext4 != NULL) != 1)
    return cmd_usage_error (inv, error, "give exactly one of --dir, --tar, --oci, --squashfs and --ext4");
  guint64 size = 0;
  if (size_text != NULL && ext4 == NULL)
    return cmd_usage_error (inv, error, "--size goes with --ext4");
  if (size_text != NULL && !fsimage_parse_size (size_text, &size, error))
    return FALSE;
  if ((tag != NULL || arch != NULL) && oci == NULL)
    return cmd_usage_error (inv, error, "--tag and --arch go with --oci");

  g_autoptr(OstreeRepo) repo = cmd_open_repo (inv, cancellable, error);
  if (repo == NULL)
    return FALSE;
  g_autoptr(RepoRev) rev = repo_resolve (repo, argv[1], error);
  if (rev == NULL)
    return FALSE;

  if (tar != NULL)
    return tarball_write_commit (repo, rev->commit, tar, cancellable, error);
  if (squashfs != NULL || ext4 != NULL)
    return fsimage_write_commit (repo, rev->commit, squashfs != NULL ? FSIMAGE_SQUASHFS : FSIMAGE_EXT4,
                                 squashfs != NULL ? squashfs : ext4, size, cancellable, error);
  if (oci != NULL)
    {
      OciOptions opts = { .tag = tag };
      if (!oci_platform (repo, rev, arch, &opts, cancellable, error))
        return FALSE;
      return oci_write_commit (repo, rev->commit, oci, g_str_has_suffix (oci, ".tar"), &opts,
                               cancellable, error);
    }
  return export_to_directory (repo, rev, dir, cancellable, error);
}
