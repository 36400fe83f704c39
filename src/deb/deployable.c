/* deployable.c — an image rearranged as an OSTree deployment; see
 * deployable.h. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "base/deb822.h"
#include "base/debpolicy.h"
#include "base/util.h"
#include "deb/deployable.h"
#include "store/repo.h"
#include "store/tree.h"

#define FACTORY "usr/share/factory/var"
#define TMPFILES "usr/lib/tmpfiles.d/apt2ostree-factory.conf"

/* The packages dpkg has installed, by name. */
static GHashTable *
installed_packages (OstreeRepo *repo, OstreeMutableTree *root, GCancellable *cancellable,
                    GError **error)
{
  g_autofree char *checksum = NULL;
  if (!tree_lookup (root, "var/lib/dpkg/status", &checksum, NULL, error))
    return NULL;
  if (checksum == NULL)
    return util_fail (error, "no var/lib/dpkg/status: not a configured Debian image"), NULL;
  g_autoptr(GBytes) bytes = repo_read_file (repo, checksum, cancellable, error);
  if (bytes == NULL)
    return NULL;
  g_autofree char *text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_autoptr(GPtrArray) stanzas = deb822_parse (text);
  GHashTable *installed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < stanzas->len; i++)
    {
      g_autofree char *status = deb822_first_line (stanzas->pdata[i], "status");
      char *name = deb822_first_line (stanzas->pdata[i], "package");
      if (name != NULL && status != NULL && g_str_has_suffix (status, " installed"))
        g_hash_table_add (installed, name);
      else
        g_free (name);
    }
  return installed;
}

static gboolean
require_boot_packages (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                       GCancellable *cancellable, GError **error)
{
  g_autoptr(GHashTable) installed = installed_packages (repo, root, cancellable, error);
  if (installed == NULL)
    return g_prefix_error (error, "\"%s\": ", name), FALSE;
  static const char *const needed[] = { "ostree-boot", "dracut" };
  for (guint i = 0; i < G_N_ELEMENTS (needed); i++)
    if (!g_hash_table_contains (installed, needed[i]))
      return util_fail (error, "\"%s\" has no %s installed: a deployable image needs ostree-boot "
                        "and dracut in its package list (their initramfs runs "
                        "ostree-prepare-root)", name, needed[i]);
  return TRUE;
}

/* The names in directory PATH of ROOT (files and subdirectories), sorted;
 * empty when PATH is missing. */
static GPtrArray *
dir_names (OstreeMutableTree *root, const char *path, gboolean dirs, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, path, NULL, &dir, error))
    return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  if (dir == NULL)
    return names;
  GHashTable *table = dirs ? ostree_mutable_tree_get_subdirs (dir) : ostree_mutable_tree_get_files (dir);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, table);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (names, g_strdup (key));
  g_ptr_array_sort (names, util_compare_strings);
  return names;
}

static gboolean
exists (OstreeMutableTree *root, const char *path)
{
  g_autofree char *file = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  return tree_lookup (root, path, &file, &dir, NULL) && (file != NULL || dir != NULL);
}

/* The one kernel version with both /boot/vmlinuz-KVER and
 * /usr/lib/modules/KVER. */
static char *
find_kernel (OstreeMutableTree *root, const char *name, GError **error)
{
  g_autoptr(GPtrArray) boot = dir_names (root, "boot", FALSE, error);
  if (boot == NULL)
    return NULL;
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < boot->len; i++)
    {
      const char *file = boot->pdata[i];
      if (!g_str_has_prefix (file, "vmlinuz-"))
        continue;
      g_autofree char *modules = g_strconcat ("usr/lib/modules/", file + strlen ("vmlinuz-"), NULL);
      if (exists (root, modules))
        g_ptr_array_add (found, g_strdup (file + strlen ("vmlinuz-")));
    }
  if (found->len == 0)
    return util_fail (error, "\"%s\" has no kernel (/boot/vmlinuz-KVER with /usr/lib/modules/KVER): "
                      "add a linux-image package to its package list", name), NULL;
  if (found->len > 1)
    return util_fail (error, "\"%s\" has %u kernels (%s and %s …): a deployment boots one; keep one "
                      "linux-image package", name, found->len, (char *) found->pdata[0],
                      (char *) found->pdata[1]), NULL;
  return g_strdup (found->pdata[0]);
}

static gboolean
move (OstreeRepo *repo, OstreeMutableTree *root, const char *src, const char *dst,
      GCancellable *cancellable, GError **error)
{
  return tree_move (repo, root, src, dst, cancellable, error);
}

static gboolean
mkdirs (OstreeRepo *repo, OstreeMutableTree *root, const char *path, guint32 mode,
        GCancellable *cancellable, GError **error)
{
  TreeMkdirOptions opts = { .uid = 0, .gid = 0, .mode = mode, .parents = TRUE };
  return tree_mkdir (repo, root, path, &opts, cancellable, error);
}

/* The owner and mode of directory PATH. */
static gboolean
dir_meta (OstreeRepo *repo, OstreeMutableTree *root, const char *path, guint32 *uid, guint32 *gid,
          guint32 *mode, GError **error)
{
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, path, NULL, &dir, error))
    return FALSE;
  const char *checksum = dir != NULL ? ostree_mutable_tree_get_metadata_checksum (dir) : NULL;
  g_autoptr(GVariant) meta = NULL;
  if (checksum == NULL)
    return util_fail (error, "/%s: no directory metadata", path);
  if (!ostree_repo_load_variant (repo, OSTREE_OBJECT_TYPE_DIR_META, checksum, &meta, error))
    return FALSE;
  g_variant_get (meta, "(uuu@a(ayay))", uid, gid, mode, NULL);
  *uid = GUINT32_FROM_BE (*uid);
  *gid = GUINT32_FROM_BE (*gid);
  *mode = GUINT32_FROM_BE (*mode) & 07777;
  return TRUE;
}

/* The target of the symbolic link PATH, or NULL (no error) when PATH is not
 * one. */
static char *
link_target (OstreeRepo *repo, OstreeMutableTree *root, const char *path,
             GCancellable *cancellable, GError **error)
{
  g_autofree char *checksum = NULL;
  if (!tree_lookup (root, path, &checksum, NULL, error) || checksum == NULL)
    return NULL;
  g_autoptr(GFileInfo) info = NULL;
  if (!ostree_repo_load_file (repo, checksum, NULL, &info, NULL, cancellable, error))
    return NULL;
  if (g_file_info_get_file_type (info) != G_FILE_TYPE_SYMBOLIC_LINK)
    return NULL;
  return g_strdup (g_file_info_get_symlink_target (info));
}

/* One tmpfiles.d line for /var/PATH, once (systemd-tmpfiles warns of a
 * second line for a path). */
static void G_GNUC_PRINTF (3, 4)
tmpfiles_line (GString *tmpfiles, const char *path, const char *format, ...)
{
  g_autofree char *key = g_strdup_printf (" /var/%s ", path);  /* "d /var/opt 0755 …" */
  if (strstr (tmpfiles->str, key) != NULL)
    return;
  va_list args;
  va_start (args, format);
  g_string_append_vprintf (tmpfiles, format, args);
  va_end (args);
}

/* Without merged /usr (bionic) the modules are in /lib/modules, a
 * directory: OSTree looks in /usr/lib/modules, so they move there and
 * /lib/modules becomes a link to them (for modprobe). */
static gboolean
modules_into_usr (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                  GCancellable *cancellable, GError **error)
{
  g_autoptr(OstreeMutableTree) lib = NULL;
  g_autoptr(OstreeMutableTree) dir = NULL;
  if (!tree_lookup (root, "lib", NULL, &lib, error))
    return FALSE;
  if (lib == NULL)
    return TRUE;  /* /lib is a link (merged /usr) */
  if (!tree_lookup (root, "lib/modules", NULL, &dir, error))
    return FALSE;
  if (dir == NULL)
    return TRUE;
  if (exists (root, "usr/lib/modules"))
    return util_fail (error, "\"%s\" has both /lib/modules and /usr/lib/modules as directories; "
                      "a deployment keeps one", name);
  return mkdirs (repo, root, "usr/lib", 0755, cancellable, error)
         && move (repo, root, "lib/modules", "usr/lib/modules", cancellable, error)
         && tree_symlink (repo, root, "../usr/lib/modules", "lib/modules", cancellable, error);
}

/* Kernel, initramfs, config, System.map and device trees into
 * usr/lib/modules/KVER/. */
static gboolean
move_kernel (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
             GCancellable *cancellable, GError **error)
{
  if (!modules_into_usr (repo, root, name, cancellable, error))
    return FALSE;
  g_autofree char *kver = find_kernel (root, name, error);
  if (kver == NULL)
    return FALSE;
  g_autofree char *dir = g_strconcat ("usr/lib/modules/", kver, NULL);
  g_autofree char *initrd = g_strconcat ("boot/initrd.img-", kver, NULL);
  if (!exists (root, initrd))
    return util_fail (error, "\"%s\" has no initramfs /%s: dracut (or initramfs-tools) did not make "
                      "one for kernel %s", name, initrd, kver);
  const char *moves[][2] = { { "vmlinuz-", "vmlinuz" }, { "initrd.img-", "initramfs.img" },
                             { "config-", "config" }, { "System.map-", "System.map" } };
  for (guint i = 0; i < G_N_ELEMENTS (moves); i++)
    {
      g_autofree char *src = g_strconcat ("boot/", moves[i][0], kver, NULL);
      g_autofree char *dst = g_strconcat (dir, "/", moves[i][1], NULL);
      if (exists (root, src) && !exists (root, dst) && !move (repo, root, src, dst, cancellable, error))
        return FALSE;
    }

  /* Debian's /vmlinuz, /initrd.img (and .old) links point into /boot,
   * which a deployment leaves to the boot loader. */
  static const char *const top_links[] = { "vmlinuz", "vmlinuz.old", "initrd.img", "initrd.img.old" };
  for (guint i = 0; i < G_N_ELEMENTS (top_links); i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree char *target = link_target (repo, root, top_links[i], cancellable, &local_error);
      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      if (target != NULL && (g_str_has_prefix (target, "boot/") || g_str_has_prefix (target, "/boot/"))
          && !tree_remove (root, top_links[i], FALSE, FALSE, error))
        return FALSE;
    }

  g_autofree char *dtb = g_strconcat (dir, "/dtb", NULL);
  g_autofree char *debian_dtbs = g_strconcat ("usr/lib/linux-image-", kver, NULL);
  g_autofree char *boot_dtbs = g_strconcat ("boot/dtbs/", kver, NULL);
  if (exists (root, debian_dtbs))
    return move (repo, root, debian_dtbs, dtb, cancellable, error);
  if (exists (root, boot_dtbs))
    return move (repo, root, boot_dtbs, dtb, cancellable, error);
  g_autoptr(GPtrArray) boot = dir_names (root, "boot", FALSE, error);
  if (boot == NULL)
    return FALSE;
  for (guint i = 0; i < boot->len; i++)
    {
      const char *file = boot->pdata[i];
      if (!g_str_has_suffix (file, ".dtb"))
        continue;
      g_autofree char *src = g_strconcat ("boot/", file, NULL);
      g_autofree char *dst = g_strconcat (dtb, "/", file, NULL);
      if (!mkdirs (repo, root, dtb, 0755, cancellable, error)
          || !move (repo, root, src, dst, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/* Move what SRC holds to FACTORY/DST and add the tmpfiles.d line that
 * copies it back at boot; an empty or missing SRC gets a "d" line only.
 * SRC itself is removed. */
static gboolean
to_factory (OstreeRepo *repo, OstreeMutableTree *root, const char *src, const char *dst,
            GString *tmpfiles, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) files = dir_names (root, src, FALSE, error);
  g_autoptr(GPtrArray) dirs = files != NULL ? dir_names (root, src, TRUE, error) : NULL;
  if (dirs == NULL)
    return FALSE;
  if (files->len + dirs->len == 0)
    {
      guint32 uid, gid, mode;
      if (!dir_meta (repo, root, src, &uid, &gid, &mode, error))
        return FALSE;
      tmpfiles_line (tmpfiles, dst, "d /var/%s %04o %u %u -\n", dst, mode, uid, gid);
      return tree_remove (root, src, TRUE, TRUE, error);
    }
  g_autofree char *to = g_strconcat (FACTORY, "/", dst, NULL);
  if (!mkdirs (repo, root, FACTORY, 0755, cancellable, error)
      || !move (repo, root, src, to, cancellable, error))
    return FALSE;
  tmpfiles_line (tmpfiles, dst, "C /var/%s - - - - /%s\n", dst, to);
  return TRUE;
}

/* /var's contents to the factory copy; /var stays, empty. */
static gboolean
factory_var (OstreeRepo *repo, OstreeMutableTree *root, GString *tmpfiles,
             GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) dirs = dir_names (root, "var", TRUE, error);
  g_autoptr(GPtrArray) files = dirs != NULL ? dir_names (root, "var", FALSE, error) : NULL;
  if (files == NULL)
    return FALSE;
  for (guint i = 0; i < dirs->len; i++)
    {
      g_autofree char *src = g_strconcat ("var/", (char *) dirs->pdata[i], NULL);
      if (!to_factory (repo, root, src, dirs->pdata[i], tmpfiles, cancellable, error))
        return FALSE;
    }
  for (guint i = 0; i < files->len; i++)
    {
      const char *file = files->pdata[i];
      g_autofree char *src = g_strconcat ("var/", file, NULL);
      g_autoptr(GError) local_error = NULL;
      g_autofree char *target = link_target (repo, root, src, cancellable, &local_error);
      if (local_error != NULL)
        return g_propagate_error (error, g_steal_pointer (&local_error)), FALSE;
      if (target != NULL)
        {
          /* /var/run -> /run, /var/lock -> /run/lock: made again as links. */
          tmpfiles_line (tmpfiles, file, "L /var/%s - - - - %s\n", file, target);
          if (!tree_remove (root, src, FALSE, FALSE, error))
            return FALSE;
          continue;
        }
      g_autofree char *to = g_strconcat (FACTORY, "/", file, NULL);
      if (!mkdirs (repo, root, FACTORY, 0755, cancellable, error)
          || !move (repo, root, src, to, cancellable, error))
        return FALSE;
      tmpfiles_line (tmpfiles, file, "C /var/%s - - - - /%s\n", file, to);
    }
  return mkdirs (repo, root, "var", 0755, cancellable, error);
}

/* The state directories as links into /var, OSTree's layout. */
static gboolean
state_links (OstreeRepo *repo, OstreeMutableTree *root, GString *tmpfiles,
             GCancellable *cancellable, GError **error)
{
  static const char *const links[][3] = {
    /* path, link target, its place under /var */
    { "home", "var/home", "home" }, { "root", "var/roothome", "roothome" },
    { "opt", "var/opt", "opt" }, { "srv", "var/srv", "srv" },
    { "mnt", "var/mnt", "mnt" }, { "usr/local", "../var/usrlocal", "usrlocal" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *file = NULL;
      g_autoptr(OstreeMutableTree) dir = NULL;
      if (!tree_lookup (root, links[i][0], &file, &dir, error))
        return FALSE;
      if (file != NULL)
        continue;  /* already a link (or a file): left as the image has it */
      if (!to_factory (repo, root, links[i][0], links[i][2], tmpfiles, cancellable, error)
          || !tree_symlink (repo, root, links[i][1], links[i][0], cancellable, error))
        return FALSE;
    }
  if (exists (root, "media") && !tree_remove (root, "media", TRUE, FALSE, error))
    return FALSE;
  return tree_symlink (repo, root, "run/media", "media", cancellable, error)
         && (exists (root, "ostree") || tree_symlink (repo, root, "sysroot/ostree", "ostree",
                                                      cancellable, error))
         && mkdirs (repo, root, "sysroot", 0755, cancellable, error);
}

static gboolean
write_tmpfiles (OstreeRepo *repo, OstreeMutableTree *root, GString *text,
                GCancellable *cancellable, GError **error)
{
  g_string_prepend (text, "# Made by \"apt2ostree deployable\": /var is made at boot; what the\n"
                          "# packages put there is copied from /" FACTORY " when missing.\n");
  g_autoptr(GBytes) bytes = g_bytes_new (text->str, text->len);
  g_autofree char *checksum = NULL;
  return mkdirs (repo, root, "usr/lib/tmpfiles.d", 0755, cancellable, error)
         && repo_write_regular_file (repo, bytes, 0, 0, 0644, &checksum, cancellable, error)
         && tree_replace_file (root, TMPFILES, checksum, error);
}

gboolean
deployable_apply (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
                  GCancellable *cancellable, GError **error)
{
  if (exists (root, "usr/etc"))
    return util_fail (error, "\"%s\" already has /usr/etc: it is deployable already", name);
  if (!require_boot_packages (repo, root, name, cancellable, error)
      || !move_kernel (repo, root, name, cancellable, error)
      || !move (repo, root, "etc", "usr/etc", cancellable, error))
    return FALSE;
  g_autoptr(GString) tmpfiles = g_string_new ("");
  return factory_var (repo, root, tmpfiles, cancellable, error)
         && state_links (repo, root, tmpfiles, cancellable, error)
         && write_tmpfiles (repo, root, tmpfiles, cancellable, error);
}
