/* deployable.c — an image rearranged as an OSTree deployment; see
 * deployable.h. */
#include "config.h"

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

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
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
  g_ptr_array_sort (names, compare_strings);
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

/* Kernel, initramfs, config, System.map and device trees into
 * usr/lib/modules/KVER/. */
static gboolean
move_kernel (OstreeRepo *repo, OstreeMutableTree *root, const char *name,
             GCancellable *cancellable, GError **error)
{
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
            const char *mode, GString *tmpfiles, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) files = dir_names (root, src, FALSE, error);
  g_autoptr(GPtrArray) dirs = files != NULL ? dir_names (root, src, TRUE, error) : NULL;
  if (dirs == NULL)
    return FALSE;
  if (files->len + dirs->len == 0)
    {
      g_string_append_printf (tmpfiles, "d /var/%s %s root root -\n", dst, mode);
      return tree_remove (root, src, TRUE, TRUE, error);
    }
  g_autofree char *to = g_strconcat (FACTORY, "/", dst, NULL);
  if (!mkdirs (repo, root, FACTORY, 0755, cancellable, error)
      || !move (repo, root, src, to, cancellable, error))
    return FALSE;
  g_string_append_printf (tmpfiles, "C /var/%s - - - - /%s\n", dst, to);
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
      if (!to_factory (repo, root, src, dirs->pdata[i], "0755", tmpfiles, cancellable, error))
        return FALSE;
    }
  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *src = g_strconcat ("var/", (char *) files->pdata[i], NULL);
      g_autofree char *to = g_strconcat (FACTORY, "/", (char *) files->pdata[i], NULL);
      if (!mkdirs (repo, root, FACTORY, 0755, cancellable, error)
          || !move (repo, root, src, to, cancellable, error))
        return FALSE;
      g_string_append_printf (tmpfiles, "C /var/%s - - - - /%s\n", (char *) files->pdata[i], to);
    }
  return mkdirs (repo, root, "var", 0755, cancellable, error);
}

/* The state directories as links into /var, OSTree's layout. */
static gboolean
state_links (OstreeRepo *repo, OstreeMutableTree *root, GString *tmpfiles,
             GCancellable *cancellable, GError **error)
{
  static const char *const links[][4] = {
    /* path, link target, its place under /var, mode */
    { "home", "var/home", "home", "0755" }, { "root", "var/roothome", "roothome", "0700" },
    { "opt", "var/opt", "opt", "0755" }, { "srv", "var/srv", "srv", "0755" },
    { "mnt", "var/mnt", "mnt", "0755" }, { "usr/local", "../var/usrlocal", "usrlocal", "0755" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *file = NULL;
      g_autoptr(OstreeMutableTree) dir = NULL;
      if (!tree_lookup (root, links[i][0], &file, &dir, error))
        return FALSE;
      if (file != NULL)
        continue;  /* already a link (or a file): left as the image has it */
      if (!to_factory (repo, root, links[i][0], links[i][2], links[i][3], tmpfiles, cancellable,
                       error)
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
